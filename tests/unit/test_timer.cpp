// The monitor's clock (libmonitor/clock): its calibration against CLOCK_MONOTONIC.
#include <gtest/gtest.h>
#include <time.h>

#include "clock.h"

namespace {

TEST(Timer, CalibratedTicksMeasureAnInterval) {
  const auto cal = mri::clock::calibrate();  // the default interval, as libmonitor calibrates
  ASSERT_GT(cal.ns_per_tick, 0.0);
  // Measure a 50 ms interval both ways; they must agree within 2%.
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  const uint64_t t0 = mri::clock::now();
  timespec req{0, 50'000'000};
  nanosleep(&req, nullptr);
  const uint64_t t1 = mri::clock::now();
  clock_gettime(CLOCK_MONOTONIC, &b);
  const double ref_ns = double(b.tv_sec - a.tv_sec) * 1e9 + double(b.tv_nsec - a.tv_nsec);
  const double ticks_ns = double(t1 - t0) * cal.ns_per_tick;
  EXPECT_NEAR(ticks_ns / ref_ns, 1.0, 0.02);
}

TEST(Timer, IsMonotonic) {
  mri::clock::calibrate(5);
  uint64_t prev = mri::clock::now();
  for (int i = 0; i < 100000; ++i) {
    const uint64_t t = mri::clock::now();
    ASSERT_GE(t, prev);
    prev = t;
  }
}

}  // namespace

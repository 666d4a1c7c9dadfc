#include "mri_timer.h"

#include <time.h>

#include <cstdio>
#include <cstring>

namespace mri::timer {

Kind g_kind = Kind::kMonotonic;

uint64_t monotonic_ticks() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

namespace {

// The TSC is usable as a clock only when it is invariant: constant rate and
// not stopped in idle states. Linux reports both as cpuinfo flags.
bool tsc_is_invariant() {
#if defined(__x86_64__) || defined(__i386__)
  FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (!f) return false;
  char line[4096];
  bool constant = false, nonstop = false;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "flags", 5) != 0) continue;
    constant = std::strstr(line, " constant_tsc") != nullptr;
    nonstop = std::strstr(line, " nonstop_tsc") != nullptr;
    break;
  }
  std::fclose(f);
  return constant && nonstop;
#else
  return false;
#endif
}

}  // namespace

Calibration calibrate(unsigned calibration_ms) {
  if (!tsc_is_invariant()) {
    g_kind = Kind::kMonotonic;
    return {Kind::kMonotonic, 1.0};
  }
#if defined(__x86_64__) || defined(__i386__)
  // Bracket the interval with both clocks; the error is about one
  // clock_gettime (~20 ns) over calibration_ms, i.e. ~1e-6 relative.
  uint64_t t0 = monotonic_ticks();
  uint64_t c0 = __rdtsc();
  uint64_t target = t0 + uint64_t(calibration_ms) * 1000000ull;
  uint64_t t1;
  do {
    t1 = monotonic_ticks();
  } while (t1 < target);
  uint64_t c1 = __rdtsc();
  if (c1 <= c0) {
    g_kind = Kind::kMonotonic;
    return {Kind::kMonotonic, 1.0};
  }
  g_kind = Kind::kTsc;
  return {Kind::kTsc, double(t1 - t0) / double(c1 - c0)};
#else
  g_kind = Kind::kMonotonic;
  return {Kind::kMonotonic, 1.0};
#endif
}

}  // namespace mri::timer

// The result slot writes (sdk/results.h) as the tool reads them back.
#include <gtest/gtest.h>

#include <cstdint>

#include "results.h"

namespace mri::monitor {
namespace {

TEST(Results, AggregateKeepsMinimaComplementedSoZeroMeansNone) {
  proto::AggregateSlot s{};
  add_to_aggregate(&s, 30, 24, 24);
  EXPECT_EQ(s.count, 1u);
  EXPECT_EQ(~s.not_min, 30u);
  EXPECT_EQ(s.max, 30u);
  add_to_aggregate(&s, 10, 0, uint64_t(-3));  // compensation took more than the instance: csum negative
  add_to_aggregate(&s, 50, 41, 41);
  EXPECT_EQ(s.count, 3u);
  EXPECT_EQ(s.sum, 90u);
  EXPECT_EQ(~s.not_min, 10u);
  EXPECT_EQ(s.max, 50u);
  EXPECT_EQ(~s.not_comp_min, 0u);
  EXPECT_EQ(s.comp_max, 41u);
  EXPECT_EQ(int64_t(s.comp_sum), 24 - 3 + 41);  // signed sum: compensated times add up
}

TEST(Results, ProfileInclusiveCountsTheOutermostInstanceOnly) {
  proto::ProfileSlot s{};
  add_instance(&s, 100, 40, 90, 35, /*outermost=*/false);  // recursion: inside another instance of the region
  add_instance(&s, 300, 60, 280, 50, /*outermost=*/true);
  EXPECT_EQ(s.calls, 2u);
  EXPECT_EQ(s.inclusive, 300u);
  EXPECT_EQ(s.comp_inclusive, 280u);
  EXPECT_EQ(s.exclusive, 100u);
  EXPECT_EQ(s.comp_exclusive, 85u);
  proto::EdgeSlot e{};
  add_instance(&e, 7, 7, 7, 7, true);
  EXPECT_EQ(e.calls, 1u);
  EXPECT_EQ(e.inclusive, 7u);
}

TEST(Results, TheSequenceWordIsOddInsideASection) {
  uint32_t seq = 4;
  {
    SeqSection section(&seq);
    EXPECT_EQ(seq % 2, 1u);  // a reader retries
  }
  EXPECT_EQ(seq, 6u);
  seq_begin(&seq);
  EXPECT_EQ(seq, 7u);
  seq_end(&seq);
  EXPECT_EQ(seq, 8u);
}

}  // namespace
}  // namespace mri::monitor

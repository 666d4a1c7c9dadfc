// Reduction of per-thread aggregate slots into request results.
#include <gtest/gtest.h>

#include "control.h"
#include "request_aggregate.h"

using namespace mri;
using namespace mri::tool;

namespace {

std::vector<ThreadSlot> three_threads() {
  // thread: count, sum, ~min, max, and the same compensated (ticks)
  return {{0, {2, 30, ~10ull, 20, 24, ~7ull, 17, 0}}, {1, {4, 400, ~50ull, 200, 380, ~45ull, 195, 0}},
          {2, {0, 0, 0, 0, 0, 0, 0, 0}}};
}

TEST(Reduce, CompensatedValuesReduceLikeTheRawOnes) {
  auto sum = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_SUM, MRI_PER_THREAD}, three_threads(), 42, 0.5);
  EXPECT_DOUBLE_EQ(sum[0].compensated_value, 12.0);
  EXPECT_DOUBLE_EQ(sum[1].compensated_value, 190.0);
  auto mn = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_MIN, MRI_PER_PROCESS}, three_threads(), 42, 1.0);
  EXPECT_DOUBLE_EQ(mn[0].value, 10.0);
  EXPECT_DOUBLE_EQ(mn[0].compensated_value, 7.0);
  auto mx = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_MAX, MRI_PER_PROCESS}, three_threads(), 42, 1.0);
  EXPECT_DOUBLE_EQ(mx[0].compensated_value, 195.0);
  EXPECT_EQ(mx[0].focus_active_object.id, 1);
  auto avg = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_AVG, MRI_PER_PROCESS}, three_threads(), 42, 1.0);
  EXPECT_DOUBLE_EQ(avg[0].compensated_value, 404.0 / 6.0);
  // Counts are counts: nothing to compensate.
  auto n = reduce_aggregate(MRI_NUMBER_OF_INSTANCES, {MRI_SUM, MRI_PER_PROCESS}, three_threads(), 42, 1.0);
  EXPECT_DOUBLE_EQ(n[0].compensated_value, n[0].value);
}

TEST(Reduce, PerThreadSumConvertsTicks) {
  auto v = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_SUM, MRI_PER_THREAD}, three_threads(), 42, 0.5);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_DOUBLE_EQ(v[0].value, 15.0);
  EXPECT_DOUBLE_EQ(v[1].value, 200.0);
  EXPECT_EQ(v[1].count, 4u);
  EXPECT_EQ(v[1].active_object.type, MRI_THREAD);
  EXPECT_EQ(v[1].active_object.id, 1);
  EXPECT_FALSE(v[0].has_focus);
}

TEST(Reduce, PerThreadMinMaxAvgCount) {
  auto mn = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_MIN, MRI_PER_THREAD}, three_threads(), 42, 1.0);
  EXPECT_DOUBLE_EQ(mn[1].value, 50.0);
  EXPECT_TRUE(mn[1].has_focus);
  EXPECT_EQ(mn[1].focus_active_object.id, 1);
  EXPECT_FALSE(mn[2].has_focus);  // no instance, no focus
  auto avg = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_AVG, MRI_PER_THREAD}, three_threads(), 42, 1.0);
  EXPECT_DOUBLE_EQ(avg[0].value, 15.0);
  EXPECT_DOUBLE_EQ(avg[2].value, 0.0);
  auto cnt = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_COUNT, MRI_PER_THREAD}, three_threads(), 42, 1.0);
  EXPECT_DOUBLE_EQ(cnt[1].value, 4.0);
}

TEST(Reduce, PerProcessFocusNamesTheThread) {
  auto mx = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_MAX, MRI_PER_PROCESS}, three_threads(), 42, 2.0);
  ASSERT_EQ(mx.size(), 1u);
  EXPECT_EQ(mx[0].active_object.type, MRI_PROCESS);
  EXPECT_EQ(mx[0].active_object.id, 42);
  EXPECT_DOUBLE_EQ(mx[0].value, 400.0);
  EXPECT_TRUE(mx[0].has_focus);
  EXPECT_EQ(mx[0].focus_active_object.id, 1);
  auto mn = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_MIN, MRI_PER_PROCESS}, three_threads(), 42, 2.0);
  EXPECT_DOUBLE_EQ(mn[0].value, 20.0);  // thread 2 has no instance and is not the minimum
  EXPECT_EQ(mn[0].focus_active_object.id, 0);
  auto sum = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_SUM, MRI_PER_PROCESS}, three_threads(), 42, 2.0);
  EXPECT_DOUBLE_EQ(sum[0].value, 860.0);
  EXPECT_EQ(sum[0].count, 6u);
  auto avg = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_AVG, MRI_PER_PROCESS}, three_threads(), 42, 1.0);
  EXPECT_DOUBLE_EQ(avg[0].value, 430.0 / 6.0);
}

TEST(Reduce, InstancesCompareThreads) {
  auto mx = reduce_aggregate(MRI_NUMBER_OF_INSTANCES, {MRI_MAX, MRI_PER_PROCESS}, three_threads(), 42, 123.0);
  EXPECT_DOUBLE_EQ(mx[0].value, 4.0);  // the thread with most instances, unscaled
  EXPECT_EQ(mx[0].focus_active_object.id, 1);
  auto avg = reduce_aggregate(MRI_NUMBER_OF_INSTANCES, {MRI_AVG, MRI_PER_PROCESS}, three_threads(), 42, 123.0);
  EXPECT_DOUBLE_EQ(avg[0].value, 3.0);  // over the threads that ran the region
  auto sum = reduce_aggregate(MRI_NUMBER_OF_INSTANCES, {MRI_SUM, MRI_PER_THREAD}, three_threads(), 42, 123.0);
  EXPECT_DOUBLE_EQ(sum[1].value, 4.0);
}

TEST(Reduce, NoThreadsYieldsEmptyOrZero) {
  EXPECT_TRUE(reduce_aggregate(MRI_EXECUTION_TIME, {MRI_SUM, MRI_PER_THREAD}, {}, 1, 1.0).empty());
  auto p = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_MAX, MRI_PER_PROCESS}, {}, 1, 1.0);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_FALSE(p[0].has_focus);
  EXPECT_EQ(p[0].count, 0u);
}

TEST(Publication, AggregationsPerRuntimeInformation) {
  EXPECT_TRUE(aggregations_for(MRI_REGION_EVENT).empty());
  EXPECT_EQ(aggregations_for(MRI_EXECUTION_TIME).size(), 10u);
  for (auto a : aggregations_for(MRI_NUMBER_OF_INSTANCES))
    EXPECT_FALSE(a.target == MRI_PER_THREAD && a.operation != MRI_SUM);
  EXPECT_TRUE(is_serial_region_type(MRI_REGION_LOOP));
  EXPECT_FALSE(is_serial_region_type(MRI_REGION_MASTER));
  EXPECT_FALSE(is_serial_region_type(MRI_REGION_PARALLEL_LOOP));
}

}  // namespace

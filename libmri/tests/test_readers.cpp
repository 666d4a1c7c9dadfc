// MRI_Get_Data's readers and reductions on a segment in memory: the
// aggregate slots, profile rows, callpath edge rows and histogram bins as
// the application thread leaves them, reduced over threads into the API's
// results; and the same readers on segments of random bytes, which they
// must read within the geometry they are given.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <random>
#include <vector>

#include "mri_histogram.h"
#include "request_aggregate.h"
#include "request_histogram.h"
#include "request_profile.h"
#include "row_reader.h"
#include "saturate.h"
#include "segment_in_memory.h"

using namespace mri;
using namespace mri::tool;
using namespace mri::tool::testing;

namespace {

const auto kGone = [] { return true; };  // no process: a thread stuck mid-update is not waited for

uint64_t twos(int64_t v) { return uint64_t(v); }  // a signed sum as the application stores it

std::deque<RegionEntry> three_regions() {
  std::deque<RegionEntry> regions;
  for (int k = 0; k < 3; ++k) regions.push_back({{MRI_REGION_LOOP, {0, 10 + k}}, "loop" + std::to_string(k)});
  return regions;
}

bool same(const MRI_Region_Spec& a, const MRI_Region_Spec& b) {
  return a.type == b.type && a.id.file_ID == b.id.file_ID && a.id.line_NR == b.id.line_NR;
}

// ---- the sequence-locked copy ---------------------------------------------

TEST(RowReader, CopiesOnceWhenTheRowIsStill) {
  SegmentInMemory segment;
  int copies = 0;
  EXPECT_TRUE(read_thread_consistent(segment.view(), 1, [&] { ++copies; }, kGone));
  EXPECT_EQ(copies, 1);
}

TEST(RowReader, CopiesAgainWhenTheThreadWroteMeanwhile) {
  SegmentInMemory segment;
  uint32_t& seq = segment.view().row_head(2)->seq;
  int copies = 0;
  EXPECT_TRUE(read_thread_consistent(segment.view(), 2, [&] {
    if (++copies == 1) seq += 2;  // the thread updated its rows during the first copy
  }, kGone));
  EXPECT_EQ(copies, 2);
}

TEST(RowReader, TakesTheRowOfAThreadThatDiedMidUpdate) {
  SegmentInMemory segment;
  segment.view().row_head(0)->seq = 7;  // odd: the thread was writing when it died
  int copies = 0, asked = 0;
  EXPECT_FALSE(read_thread_consistent(segment.view(), 0, [&] { ++copies; }, [&] {
    ++asked;
    return true;
  }));
  EXPECT_EQ(copies, 1);  // what is there, once
  EXPECT_EQ(asked, 1);   // after the short spin, not at once
}

TEST(RowReader, ReadsNoThreadBeyondTheGeometry) {
  SegmentInMemory segment;
  int copies = 0;
  EXPECT_FALSE(read_thread_consistent(segment.view(), small_geometry().max_threads, [&] { ++copies; }, kGone));
  EXPECT_EQ(copies, 0);
  segment.app().thread_count = 1000;  // the segment's count is bounded by the geometry
  EXPECT_EQ(thread_rows(segment.view()), small_geometry().max_threads);
}

// ---- aggregate ------------------------------------------------------------

TEST(AggregateReader, ReadsTheNamedThreadsSlotsOfItsRecord) {
  SegmentInMemory segment;
  const proto::View& v = segment.view();
  *v.aggregate(0, 2) = proto::AggregateSlot{2, 30, ~10ull, 20, 30, ~10ull, 20, 0};
  *v.aggregate(1, 2) = proto::AggregateSlot{4, 400, ~50ull, 200, 400, ~50ull, 200, 0};
  *v.aggregate(1, 3) = proto::AggregateSlot{9, 9, ~1ull, 1, 9, ~1ull, 1, 0};  // another request's
  std::vector<ThreadSlot> slots = {{1, {}}, {0, {}}, {-1, {}}, {3, {}}};
  read_aggregate_slots(v, 2, 2, true, kGone, slots);
  EXPECT_EQ(slots[0].slot.count, 4u);
  EXPECT_EQ(slots[1].slot.sum, 30u);
  EXPECT_EQ(slots[2].slot.count, 0u);  // no such thread
  EXPECT_EQ(slots[3].slot.count, 0u);  // not among the rows in use
  const auto values = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_SUM, MRI_PER_THREAD}, slots, 42, 0.5);
  ASSERT_EQ(values.size(), 4u);
  EXPECT_EQ(values[0].active_object.id, 1);
  EXPECT_DOUBLE_EQ(values[0].value, 200.0);
  EXPECT_DOUBLE_EQ(values[1].value, 15.0);
  const auto process = reduce_aggregate(MRI_EXECUTION_TIME, {MRI_MAX, MRI_PER_PROCESS}, slots, 42, 1.0);
  EXPECT_DOUBLE_EQ(process[0].value, 200.0);
  EXPECT_EQ(process[0].focus_active_object.id, 1);
}

TEST(AggregateReader, ReadsNothingWhenInactiveOrBeyondTheGeometry) {
  SegmentInMemory segment;
  *segment.view().aggregate(0, 0) = proto::AggregateSlot{5, 5, ~1ull, 1, 5, ~1ull, 1, 0};
  std::vector<ThreadSlot> slots = {{0, {}}};
  read_aggregate_slots(segment.view(), 0, 1, false, kGone, slots);
  EXPECT_EQ(slots[0].slot.count, 0u);  // results of an older generation are not this request's
  read_aggregate_slots(segment.view(), small_geometry().max_requests, 1, true, kGone, slots);
  EXPECT_EQ(slots[0].slot.count, 0u);
  read_aggregate_slots(segment.view(), 0, 1, true, kGone, slots);
  EXPECT_EQ(slots[0].slot.count, 5u);
}

// ---- profile --------------------------------------------------------------

class ProfileReader : public ::testing::Test {
 protected:
  void SetUp() override {
    const proto::View& v = segment.view();
    // Slice 1. Thread 0: region 0, and region 2 whose compensated times
    // went below 0 (the estimated overhead exceeded the time). Thread 1:
    // region 2.
    v.profile_row(1, 0)[0] = proto::ProfileSlot{2, 100, 60, 90, 50, {}};
    v.profile_row(1, 0)[2] = proto::ProfileSlot{1, 40, 40, twos(-10), twos(-4), {}};
    v.profile_row(1, 1)[2] = proto::ProfileSlot{3, 300, 200, 280, 190, {}};
    v.profile_row(0, 1)[2] = proto::ProfileSlot{7, 7, 7, 7, 7, {}};  // another profile's
  }
  void read(uint32_t slice, const std::vector<int>& region_ids, bool active = true) {
    read_profile(segment.view(), slice, regions, region_ids, {1, 0, 3}, 2, active, 0.5, kGone, elements, values);
  }

  SegmentInMemory segment;
  std::deque<RegionEntry> regions = three_regions();
  std::vector<MRI_Profile_Element> elements;
  std::vector<MRI_Profile_Value> values;
};

TEST_F(ProfileReader, ValuesPerRegionAndThreadAndTheirSums) {
  read(1, {2, 0});
  ASSERT_EQ(elements.size(), 2u);
  ASSERT_EQ(values.size(), 6u);
  const MRI_Profile_Element& e = elements[0];
  EXPECT_TRUE(same(e.region, regions[2].spec));
  EXPECT_EQ(e.nr_Active_Objects, 3);
  EXPECT_EQ(e.per_active_object, &values[0]);
  EXPECT_EQ(e.per_active_object[0].active_object.id, 1);  // the threads in the order asked
  EXPECT_EQ(e.per_active_object[0].instances, 3u);
  EXPECT_DOUBLE_EQ(e.per_active_object[0].inclusive, 150.0);  // ticks * 0.5 ns
  EXPECT_DOUBLE_EQ(e.per_active_object[0].exclusive, 100.0);
  EXPECT_DOUBLE_EQ(e.per_active_object[0].compensated_exclusive, 95.0);
  EXPECT_DOUBLE_EQ(e.per_active_object[1].compensated_inclusive, 0.0);  // -5 ns, reported as 0
  EXPECT_EQ(e.per_active_object[2].active_object.id, 3);  // not among the rows in use: zero
  EXPECT_EQ(e.per_active_object[2].instances, 0u);
  EXPECT_EQ(e.instances, 4u);
  EXPECT_DOUBLE_EQ(e.inclusive, 170.0);
  EXPECT_DOUBLE_EQ(e.exclusive, 120.0);
  EXPECT_DOUBLE_EQ(e.compensated_inclusive, 140.0);
  EXPECT_TRUE(same(elements[1].region, regions[0].spec));
  EXPECT_EQ(elements[1].instances, 2u);
  EXPECT_DOUBLE_EQ(elements[1].compensated_exclusive, 25.0);
}

TEST_F(ProfileReader, AnInactiveProfileReadsAsZero) {
  read(1, {2}, false);
  ASSERT_EQ(elements.size(), 1u);
  EXPECT_TRUE(same(elements[0].region, regions[2].spec));
  EXPECT_EQ(elements[0].instances, 0u);
  EXPECT_EQ(values[0].active_object.id, 1);
}

TEST_F(ProfileReader, BeyondTheGeometryReadsAsZero) {
  read(small_geometry().max_profile_slices, {2});
  EXPECT_EQ(elements[0].instances, 0u);
  read(1, {7, -1});  // not published
  ASSERT_EQ(elements.size(), 2u);
  EXPECT_EQ(elements[0].instances + elements[1].instances, 0u);
}

// ---- callpath -------------------------------------------------------------

TEST(CallpathReader, SumsEachCallerCalleePairOverThreads) {
  SegmentInMemory segment;
  const proto::View& v = segment.view();
  proto::EdgeSlot* t0 = v.edge_row(0, 0);
  t0[0] = proto::EdgeSlot{proto::kNoCaller, 0, 1, 1000, 400, 900, 350, {}};
  t0[1] = proto::EdgeSlot{0, 1, 3, 600, 600, twos(-30), twos(-30), {}};
  t0[2] = proto::EdgeSlot{0, 9, 5, 50, 50, 50, 50, {}};  // callee not published: left out
  t0[3] = proto::EdgeSlot{1, 2, 0, 0, 0, 0, 0, {}};      // no instance
  v.edge_row(0, 1)[5] = proto::EdgeSlot{0, 1, 2, 400, 400, 100, 100, {}};
  v.edge_row(1, 1)[0] = proto::EdgeSlot{0, 2, 8, 8, 8, 8, 8, {}};  // another profile's
  const std::deque<RegionEntry> regions = three_regions();
  const auto elements = read_callpath(v, 0, regions, {0, 1, 4}, true, 2.0, kGone);
  ASSERT_EQ(elements.size(), 2u);
  const MRI_Callpath_Element& call = elements[0];  // (0, 1) before the root (kNoCaller, 0)
  EXPECT_TRUE(call.has_caller);
  EXPECT_TRUE(same(call.caller, regions[0].spec));
  EXPECT_TRUE(same(call.callee, regions[1].spec));
  EXPECT_EQ(call.instances, 5u);
  EXPECT_DOUBLE_EQ(call.inclusive, 2000.0);
  // Signed sums add up over threads before the clamp: -30 + 100 ticks.
  EXPECT_DOUBLE_EQ(call.compensated_inclusive, 140.0);
  const MRI_Callpath_Element& root = elements[1];
  EXPECT_FALSE(root.has_caller);
  EXPECT_TRUE(same(root.callee, regions[0].spec));
  EXPECT_DOUBLE_EQ(root.exclusive, 800.0);
  EXPECT_TRUE(read_callpath(v, 0, regions, {0, 1}, false, 2.0, kGone).empty());
  EXPECT_TRUE(read_callpath(v, small_geometry().max_profile_slices, regions, {0, 1}, true, 2.0, kGone).empty());
}

TEST(CallpathReader, CountsThatWouldWrapSaturate) {
  SegmentInMemory segment;
  const proto::View& v = segment.view();
  // Two threads' counts of one edge that wrap to 0 when added (a corrupt
  // segment): the edge ran, so its count must not read 0.
  v.edge_row(0, 0)[0] = proto::EdgeSlot{0, 1, uint64_t{1} << 63, 1, 1, 1, 1, {}};
  v.edge_row(0, 1)[0] = proto::EdgeSlot{0, 1, uint64_t{1} << 63, 1, 1, 1, 1, {}};
  const auto elements = read_callpath(v, 0, three_regions(), {0, 1}, true, 1.0, kGone);
  ASSERT_EQ(elements.size(), 1u);
  EXPECT_EQ(elements[0].instances, ~0ull);
}

TEST(Saturate, TickCountsAsNanosecondsAndSums) {
  EXPECT_EQ(saturated_ns(1e30), ~0ull);
  EXPECT_EQ(saturated_ns(18446744073709551616.0), ~0ull);
  EXPECT_EQ(saturated_ns(std::nan("")), 0ull);
  EXPECT_EQ(saturated_ns(-5.0), 0ull);
  EXPECT_EQ(saturated_ns(1234.9), 1234ull);
  EXPECT_EQ(add_counts(~uint64_t{0} - 1, 5), ~uint64_t{0});
  EXPECT_EQ(add_counts(40, 2), 42u);
}

// ---- histogram ------------------------------------------------------------

class HistogramReader : public ::testing::Test {
 protected:
  void SetUp() override {
    add("a", 0x1000, 64);
    add("b", 0x2000, 32);
    std::vector<proto::DataRecord> records = {data[0].record, data[1].record};
    proto::HistogramLayout layout;
    ASSERT_EQ(proto::histogram_layout(records.data(), 2, 0, 4, layout), nullptr);
    ASSERT_EQ(layout.bins, 4u);
    ASSERT_EQ(layout.bin_bytes, 24u);  // 96 bytes in 4 bins
    *segment.view().histogram_head(3) = proto::HistogramHead{7, 0, 2, layout.bins, layout.bin_bytes, 96, {}};
    const uint64_t t0[4] = {1, 2, 3, 4}, t1[4] = {10, 20, 30, 40};
    std::memcpy(segment.view().histogram_row(3, 0), t0, sizeof t0);
    std::memcpy(segment.view().histogram_row(3, 1), t1, sizeof t1);
    query.histogram = 3;
    query.generation = 7;
    query.data_index = 0;
    query.bins = 4;
    query.active = true;
  }
  void add(const char* name, uint64_t address, uint64_t bytes) {
    DataEntry& e = data.emplace_back();
    e.record = proto::DataRecord{address, bytes, 0, 1, 0, 5};
    e.name = name;
    e.spec = {{0, 5}, e.name.c_str()};
  }
  const char* read() { return read_histogram(segment.view(), query, data, {0, 1, 9}, kGone, applied, layout, values); }

  SegmentInMemory segment;
  std::deque<DataEntry> data;
  HistogramQuery query;
  bool applied = false;
  proto::HistogramLayout layout;
  std::vector<uint64_t> values;
};

TEST_F(HistogramReader, SumsTheThreadsBinsAndLabelsThem) {
  ASSERT_EQ(read(), nullptr);
  EXPECT_TRUE(applied);
  EXPECT_EQ(values, (std::vector<uint64_t>{11, 22, 33, 44}));
  std::vector<MRI_Histogram_Bin> bins;
  std::vector<MRI_Data_Structure_Spec> specs;
  label_histogram_bins(layout, values, data, bins, specs);
  ASSERT_EQ(bins.size(), 4u);
  EXPECT_EQ(bins[0].value, 11u);
  EXPECT_EQ(bins[0].address_begin, 0x1000u);
  EXPECT_EQ(bins[0].address_end, 0x1018u);
  ASSERT_EQ(bins[0].data_structures.nr_Elements, 1);
  EXPECT_STREQ(bins[0].data_structures.data_structure[0].name, "a");
  // Bin 2 holds the end of a and the start of b.
  EXPECT_EQ(bins[2].address_begin, 0x1030u);
  EXPECT_EQ(bins[2].address_end, 0x2008u);
  ASSERT_EQ(bins[2].data_structures.nr_Elements, 2);
  EXPECT_STREQ(bins[2].data_structures.data_structure[1].name, "b");
  EXPECT_EQ(bins[3].address_end, 0x2020u);
}

TEST_F(HistogramReader, ALayoutThatDisagreesWithTheTableIsAnError) {
  segment.view().histogram_head(3)->bins = 5;
  EXPECT_STREQ(read(), "its bins disagree with the table");
  EXPECT_TRUE(values.empty());
  segment.view().histogram_head(3)->bins = 4;
  segment.view().histogram_head(3)->data_structures = 3;
  EXPECT_STREQ(read(), "it names data structures the table does not have");
}

TEST_F(HistogramReader, AnotherGenerationsBinsAreNotRead) {
  query.generation = 8;
  EXPECT_EQ(read(), nullptr);
  EXPECT_FALSE(applied);
  EXPECT_TRUE(values.empty());
  query.generation = 7;
  query.histogram = proto::kMaxHistograms;  // none
  EXPECT_EQ(read(), nullptr);
  EXPECT_FALSE(applied);
}

// ---- every reader on random bytes -----------------------------------------

// The readers take the geometry from their view (the tool's own), not from
// the segment: whatever the application wrote, they read inside the areas
// of that geometry (ASan builds check every access) and what they return
// is bounded by what they were asked.
TEST(ReadersOnRandomBytes, StayInsideTheGeometry) {
  SegmentInMemory segment;
  const proto::View& v = segment.view();
  const proto::Geometry& g = v.g;
  const std::deque<RegionEntry> regions = three_regions();
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 random(seed);
    for (uint64_t at = 0; at + 8 <= segment.bytes(); at += 8) {
      const uint64_t word = random();
      std::memcpy(v.base + at, &word, 8);
    }
    std::deque<DataEntry> data(2);
    for (DataEntry& d : data) {
      d.record = proto::DataRecord{random(), 1 + random() % 4096, 0, 1, 0, 0};
      d.name = "x";
      d.spec = {{0, 0}, d.name.c_str()};
    }
    // One histogram head agrees with the table, so that its random rows
    // are read too.
    {
      const proto::DataRecord records[2] = {data[0].record, data[1].record};
      proto::HistogramLayout layout;
      const uint32_t bins = 1 + uint32_t(random() % proto::kMaxHistogramBins);
      if (proto::histogram_layout(records, 2, 0, bins, layout) == nullptr)
        *v.histogram_head(seed % proto::kMaxHistograms) =
            proto::HistogramHead{seed, 0, 2, layout.bins, layout.bin_bytes, layout.total_bytes, {}};
    }
    const std::vector<int> threads = {0, 1, 2, 3, 4, -1};
    for (uint32_t record = 0; record <= g.max_requests; ++record) {
      std::vector<ThreadSlot> slots = {{0, {}}, {3, {}}, {4, {}}, {-2, {}}};
      read_aggregate_slots(v, record, thread_rows(v), true, kGone, slots);
      EXPECT_EQ(reduce_aggregate(MRI_EXECUTION_TIME, {MRI_MAX, MRI_PER_PROCESS}, slots, 1, 1.0).size(), 1u);
    }
    for (uint32_t slice = 0; slice <= g.max_profile_slices; ++slice) {
      std::vector<MRI_Profile_Element> elements;
      std::vector<MRI_Profile_Value> values;
      read_profile(v, slice, regions, {0, 1, 2, -1, 100}, threads, thread_rows(v), true, 1.0, kGone, elements,
                   values);
      EXPECT_EQ(elements.size(), 5u);
      EXPECT_EQ(values.size(), 5u * threads.size());
      for (const auto& e : read_callpath(v, slice, regions, threads, true, 1.0, kGone)) {
        EXPECT_GT(e.instances, 0u);
        EXPECT_TRUE(std::any_of(regions.begin(), regions.end(), [&](const auto& r) { return same(r.spec, e.callee); }));
      }
    }
    for (uint32_t histogram = 0; histogram <= proto::kMaxHistograms; ++histogram) {
      HistogramQuery q;
      q.histogram = histogram;
      const proto::HistogramHead head = histogram < proto::kMaxHistograms ? *v.histogram_head(histogram)
                                                                          : proto::HistogramHead{};
      q.generation = head.applied_generation;
      q.data_index = head.data_index;
      q.bins = histogram == seed % proto::kMaxHistograms ? head.bins : uint32_t(random() % 2000);
      q.active = true;
      bool applied = false;
      proto::HistogramLayout layout;
      std::vector<uint64_t> values;
      if (read_histogram(v, q, data, threads, kGone, applied, layout, values) == nullptr && applied) {
        EXPECT_EQ(values.size(), layout.bins);
        EXPECT_LE(layout.bins, std::min(q.bins, proto::kMaxHistogramBins));
        std::vector<MRI_Histogram_Bin> bins;
        std::vector<MRI_Data_Structure_Spec> specs;
        label_histogram_bins(layout, values, data, bins, specs);
        EXPECT_EQ(bins.size(), layout.bins);
      } else {
        EXPECT_TRUE(values.empty());
      }
    }
  }
}

}  // namespace

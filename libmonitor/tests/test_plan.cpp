// The plan compiler (plan.h) on an in-memory segment: which requests are
// accepted, refused or counted as corrupt, and the targets each request
// kind gets at each region. No process, no thread: the segment is a buffer
// written as libmri writes it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "plan.h"
#include "test_sources.h"

namespace mri::monitor {
namespace {

using proto::Metric;
using proto::RequestKind;
using testing::fake_readings;
using testing::kFakeReadingMetric;
using testing::kSecondReadingMetric;
using testing::second_readings;

constexpr uint32_t kRegions = 10;  // published regions of the tests

struct Segment {
  proto::View v;
  std::unique_ptr<unsigned char, decltype(&std::free)> memory{nullptr, &std::free};

  explicit Segment(uint32_t trace_records = 16, uint32_t max_edges = 8) {
    v.g = proto::Geometry{/*max_regions=*/64, /*max_threads=*/4, /*max_requests=*/16, /*max_profile_slices=*/4,
                          /*max_files=*/8, /*string_pool_bytes=*/4096, trace_records, max_edges};
    v.l = proto::compute_layout(v.g);
    memory.reset(static_cast<unsigned char*>(std::aligned_alloc(4096, v.l.total)));
    std::memset(memory.get(), 0, v.l.total);
    v.base = memory.get();
  }

  // An active request as libmri writes it.
  void request(uint32_t slot, RequestKind kind, uint32_t metric, const std::vector<uint32_t>& regions,
               uint32_t flags = 0, const char* event = "", uint32_t slice = 0, uint32_t generation = 1) {
    proto::RequestRecord& r = *v.request(slot);
    r = proto::RequestRecord{};
    r.state = uint32_t(proto::RequestState::kActive);
    r.generation = generation;
    r.kind = uint32_t(kind);
    r.metric = metric;
    r.profile_slice = slice;
    r.flags = flags;
    std::snprintf(r.event, sizeof r.event, "%s", event);
    uint64_t* bits = v.request_bitmap(slot);
    std::memset(bits, 0, proto::bitmap_words(v.g) * sizeof(uint64_t));
    for (uint32_t region : regions) bits[region / 64] |= uint64_t{1} << (region % 64);
  }
  void acked(uint32_t slot, uint32_t generation, uint32_t status) {
    v.request_ack(slot)->applied_generation = generation;
    v.request_ack(slot)->status = status;
  }

  CompiledPlan compile(bool unwind_available = true) {
    requests = gather_requests(v, kRegions);
    return compile_requests(requests, PlanLimits{v.g, kRegions, 2, unwind_available}, &v);
  }
  std::vector<GatheredRequest> requests;
};

const Ack* ack_of(const CompiledPlan& p, uint32_t slot) {
  for (const Ack& a : p.acks)
    if (a.slot == slot) return &a;
  return nullptr;
}

bool has_reset(const CompiledPlan& p, Reset::What what, uint32_t index) {
  for (const Reset& r : p.resets)
    if (r.what == what && r.index == index) return true;
  return false;
}

class Plan : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_readings() = {};
    second_readings() = {};
  }
  Segment s;
};

TEST_F(Plan, GatherCopiesActiveRecordsAndPublishedRegionsOnly) {
  s.request(2, RequestKind::kAggregate, uint32_t(Metric::kExecutionTime), {1, 3, 40});  // 40: not published
  s.request(5, RequestKind::kAggregate, uint32_t(Metric::kExecutionTime), {0});
  s.v.request(5)->state = uint32_t(proto::RequestState::kFree);
  s.request(7, RequestKind::kAggregate, uint32_t(Metric::kInstances), {}, proto::kRequestAllRegions);
  const std::vector<GatheredRequest> got = gather_requests(s.v, kRegions);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].input.slot, 2u);
  EXPECT_EQ(got[0].input.regions, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(got[1].input.slot, 7u);
  EXPECT_EQ(got[1].input.regions.size(), kRegions);
}

TEST_F(Plan, FreshUnlessTheSameGenerationWasAccepted) {
  s.request(0, RequestKind::kAggregate, uint32_t(Metric::kExecutionTime), {1}, 0, "", 0, 3);
  s.request(1, RequestKind::kAggregate, uint32_t(Metric::kExecutionTime), {1}, 0, "", 0, 3);
  s.request(2, RequestKind::kAggregate, uint32_t(Metric::kExecutionTime), {1}, 0, "", 0, 3);
  s.acked(0, 3, 0);  // accepted before: keeps its results
  s.acked(1, 2, 0);  // an older generation
  s.acked(2, 3, 1);  // rejected before
  const CompiledPlan p = s.compile();
  EXPECT_FALSE(has_reset(p, Reset::What::kAggregate, 0));
  EXPECT_TRUE(has_reset(p, Reset::What::kAggregate, 1));
  EXPECT_TRUE(has_reset(p, Reset::What::kAggregate, 2));
}

TEST_F(Plan, AggregateTargetsCarryTheValueKind) {
  s.request(0, RequestKind::kAggregate, uint32_t(Metric::kExecutionTime), {1, 3});
  s.request(1, RequestKind::kAggregate, uint32_t(Metric::kExecutionTime), {3}, proto::kRequestNoCompensation);
  s.request(2, RequestKind::kAggregate, uint32_t(Metric::kInstances), {3});
  const CompiledPlan p = s.compile();
  ASSERT_EQ(p.aggs[1].size(), 1u);
  EXPECT_EQ(p.aggs[1][0].request, 0u);
  EXPECT_EQ(p.aggs[1][0].kind, uint8_t(ValueKind::kTime));
  EXPECT_EQ(p.aggs[1][0].compensate, 1);
  ASSERT_EQ(p.aggs[3].size(), 3u);
  EXPECT_EQ(p.aggs[3][1].compensate, 0);  // switched off by the request
  EXPECT_EQ(p.aggs[3][2].kind, uint8_t(ValueKind::kCount));
  EXPECT_EQ(p.aggs[3][2].compensate, 0);  // a count has no overhead in it
  EXPECT_TRUE(p.aggs[0].empty());
  for (uint32_t slot : {0u, 1u, 2u}) {
    ASSERT_NE(ack_of(p, slot), nullptr);
    EXPECT_TRUE(ack_of(p, slot)->ok);
  }
}

TEST_F(Plan, RecordsNoToolWritesAreCorrupt) {
  s.request(0, RequestKind::kAggregate, 77, {1});                                      // unknown metric
  s.request(1, RequestKind(9), uint32_t(Metric::kExecutionTime), {1});                 // unknown kind
  s.request(2, RequestKind::kHistogram, uint32_t(Metric::kExecutionTime), {1});        // the core keeps no histograms
  s.request(3, RequestKind::kAggregate, uint32_t(Metric::kRegionEvent), {1});          // events are for traces
  s.request(4, RequestKind::kProfile, uint32_t(Metric::kExecutionTime), {1}, 0, "", 4);  // slice beyond max_profile_slices
  const CompiledPlan p = s.compile();
  for (uint32_t slot = 0; slot < 5; ++slot) {
    const Ack* a = ack_of(p, slot);
    ASSERT_NE(a, nullptr) << slot;
    EXPECT_FALSE(a->ok) << slot;
    EXPECT_TRUE(a->corrupt) << slot;
  }
  for (uint32_t r = 0; r < kRegions; ++r) {
    EXPECT_TRUE(p.aggs[r].empty());
    EXPECT_TRUE(p.slices[r].empty());
  }
}

TEST_F(Plan, ASliceServesOneProfileRequest) {
  s.request(0, RequestKind::kProfile, uint32_t(Metric::kExecutionTime), {1}, 0, "", 2);
  s.request(1, RequestKind::kProfile, uint32_t(Metric::kInstances), {2}, 0, "", 2);
  const CompiledPlan p = s.compile();
  EXPECT_TRUE(ack_of(p, 0)->ok);
  EXPECT_FALSE(ack_of(p, 1)->ok);
  EXPECT_TRUE(ack_of(p, 1)->corrupt);
  EXPECT_EQ(p.slices[1], (std::vector<uint32_t>{2}));
  EXPECT_TRUE(p.slices[2].empty());
  EXPECT_TRUE(p.slice_set[2]);
  EXPECT_EQ(p.slice_value[2].kind, uint8_t(ValueKind::kTime));
  EXPECT_TRUE(p.slice_compensate[2]);
}

TEST_F(Plan, CallpathProfilesResetTheirEdgesAndUnwindOnlyWhereTheyCan) {
  s.request(0, RequestKind::kProfile, uint32_t(Metric::kExecutionTime), {}, proto::kRequestAllRegions |
            proto::kRequestCallpath | proto::kRequestUnwind, "", 1);
  CompiledPlan p = s.compile(/*unwind_available=*/false);
  EXPECT_TRUE(p.slice_callpath[1]);
  EXPECT_FALSE(p.slice_unwind[1]);
  EXPECT_TRUE(p.unwind_wanted_but_absent);
  EXPECT_TRUE(has_reset(p, Reset::What::kProfile, 1));
  EXPECT_TRUE(has_reset(p, Reset::What::kEdges, 1));
  EXPECT_EQ(p.all_slices, (std::vector<uint32_t>{1}));
  p = s.compile(/*unwind_available=*/true);
  EXPECT_TRUE(p.slice_unwind[1]);
  EXPECT_FALSE(p.unwind_wanted_but_absent);

  Segment no_edges(16, /*max_edges=*/0);
  no_edges.request(0, RequestKind::kProfile, uint32_t(Metric::kExecutionTime), {1}, proto::kRequestCallpath, "", 0);
  p = no_edges.compile();
  EXPECT_TRUE(ack_of(p, 0)->ok);
  EXPECT_FALSE(p.slice_callpath[0]);  // a flat profile: the segment has no room for edges
  EXPECT_FALSE(has_reset(p, Reset::What::kEdges, 0));
}

TEST_F(Plan, PausedRequestsKeepTheirResultsAndMeasureNothing) {
  s.request(0, RequestKind::kAggregate, uint32_t(Metric::kExecutionTime), {1}, proto::kRequestPaused);
  s.request(1, RequestKind::kProfile, uint32_t(Metric::kExecutionTime), {1}, proto::kRequestPaused, "", 0);
  // A trace too (libmri pauses every counter request under rotation, a
  // trace of counter values among them): its reading is not in the
  // frame's list, so a target would have read past the readings.
  s.request(2, RequestKind::kTrace, uint32_t(Metric::kExecutionTime), {1}, proto::kRequestPaused);
  const CompiledPlan p = s.compile();
  EXPECT_TRUE(ack_of(p, 0)->ok);
  EXPECT_TRUE(ack_of(p, 1)->ok);
  EXPECT_TRUE(ack_of(p, 2)->ok);
  EXPECT_TRUE(has_reset(p, Reset::What::kAggregate, 0));  // fresh: it starts from nothing
  EXPECT_TRUE(p.aggs[1].empty());
  EXPECT_TRUE(p.slices[1].empty());
  for (uint32_t r = 0; r < kRegions; ++r) EXPECT_TRUE(p.traces[r].empty()) << r;
  EXPECT_TRUE(p.all_traces.empty());
  EXPECT_EQ(p.trace_slots, 0u);
}

TEST_F(Plan, TracesReachSubregionsUnlessAskedNotTo) {
  s.request(0, RequestKind::kTrace, uint32_t(Metric::kRegionEvent), {2});
  s.request(1, RequestKind::kTrace, uint32_t(Metric::kExecutionTime), {4}, proto::kRequestNoSubregions);
  const CompiledPlan p = s.compile();
  ASSERT_TRUE(ack_of(p, 0)->ok);
  ASSERT_TRUE(ack_of(p, 1)->ok);
  for (uint32_t r = 0; r < kRegions; ++r) {
    ASSERT_GE(p.traces[r].size(), 1u) << r;
    EXPECT_EQ(p.traces[r][0].request, 0);
    EXPECT_EQ(p.traces[r][0].root, r == 2 ? 1 : 0) << r;
    EXPECT_EQ(p.traces[r][0].kind, uint16_t(ValueKind::kEvent));
  }
  EXPECT_EQ(p.traces[4].size(), 2u);
  EXPECT_EQ(p.traces[4][1].root, 1);
  EXPECT_EQ(p.traces[4][1].slot, 1);  // the second trace request of the release
  EXPECT_EQ(p.traces[3].size(), 1u);
  ASSERT_EQ(p.all_traces.size(), 1u);  // regions published later: inside request 0's only
  EXPECT_EQ(p.all_traces[0].root, 0);
}

TEST_F(Plan, TraceSlotsAndRingsAreBounded) {
  for (uint32_t slot = 0; slot <= proto::kMaxTraceRequests; ++slot)
    s.request(slot, RequestKind::kTrace, uint32_t(Metric::kRegionEvent), {1});
  CompiledPlan p = s.compile();
  for (uint32_t slot = 0; slot < proto::kMaxTraceRequests; ++slot) EXPECT_TRUE(ack_of(p, slot)->ok);
  EXPECT_TRUE(ack_of(p, proto::kMaxTraceRequests)->corrupt);

  Segment no_rings(/*trace_records=*/0);
  no_rings.request(0, RequestKind::kTrace, uint32_t(Metric::kRegionEvent), {1});
  p = no_rings.compile();
  EXPECT_TRUE(ack_of(p, 0)->corrupt);
}

TEST_F(Plan, TraceThreadMasksAreCopied) {
  s.request(3, RequestKind::kTrace, uint32_t(Metric::kRegionEvent), {1}, proto::kRequestThreadFilter);
  s.v.request_threads(3)[0] = 0b101;
  const CompiledPlan p = s.compile();
  ASSERT_EQ(p.trace_slots, 1u);
  EXPECT_TRUE(p.trace_filtered[0]);
  EXPECT_EQ(p.trace_threads[0][0], 0b101u);
  ASSERT_FALSE(p.traces[1].empty());
  EXPECT_EQ(p.traces[1][0].threads, p.trace_threads[0]);
  EXPECT_TRUE(in_thread_mask(p.traces[1][0].threads, 2));
  EXPECT_FALSE(in_thread_mask(p.traces[1][0].threads, 1));
}

TEST_F(Plan, OpenTraceInstancesStayOnlyForTheSameEventRequest) {
  s.request(0, RequestKind::kTrace, uint32_t(Metric::kRegionEvent), {1});
  s.request(1, RequestKind::kTrace, uint32_t(Metric::kRegionEvent), {1});
  s.request(2, RequestKind::kTrace, uint32_t(Metric::kExecutionTime), {1});
  s.acked(0, 1, 0);  // the same request as at the last release
  s.acked(2, 1, 0);
  const CompiledPlan p = s.compile();
  EXPECT_EQ(p.keep_trace_open[0], 1);
  EXPECT_EQ(p.keep_trace_open[1], 0);  // new
  EXPECT_EQ(p.keep_trace_open[2], 0);  // value records: no open enter records
}

TEST_F(Plan, ReadingsOfSeveralSourcesFollowOneAnother) {
  s.request(0, RequestKind::kAggregate, kFakeReadingMetric, {1}, 0, "a");
  s.request(1, RequestKind::kAggregate, kSecondReadingMetric, {1}, 0, "x");
  s.request(2, RequestKind::kProfile, kFakeReadingMetric, {2}, 0, "b", 0);
  s.request(3, RequestKind::kTrace, kFakeReadingMetric, {3}, proto::kRequestNoSubregions, "a");
  const CompiledPlan p = s.compile();
  EXPECT_EQ(p.reading_list, (std::vector<std::string>{"a", "b", "x"}));
  ASSERT_EQ(p.n_readers, 2u);
  EXPECT_EQ(p.readers[0].base, 0);
  EXPECT_EQ(p.readers[0].count, 2);
  EXPECT_EQ(p.readers[1].base, 2);
  EXPECT_EQ(p.readers[1].count, 1);
  ASSERT_EQ(p.aggs[1].size(), 2u);
  EXPECT_EQ(p.aggs[1][0].reading, 0);
  EXPECT_EQ(p.aggs[1][1].reading, 2);  // behind the first source's two
  EXPECT_EQ(p.aggs[1][0].kind, uint8_t(ValueKind::kReading));
  EXPECT_EQ(p.aggs[1][0].compensate, 0);
  EXPECT_EQ(p.slice_value[0].reading, 1);
  ASSERT_EQ(p.traces[3].size(), 1u);
  EXPECT_EQ(p.traces[3][0].reading, 0);
}

TEST_F(Plan, ReadingsBeyondWhatAFrameHoldsAreRefused) {
  const char* names[] = {"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"};
  for (uint32_t i = 0; i < 8; ++i) s.request(i, RequestKind::kAggregate, kFakeReadingMetric, {1}, 0, names[i]);
  s.request(8, RequestKind::kAggregate, kSecondReadingMetric, {1}, 0, "one more");
  const CompiledPlan p = s.compile();
  EXPECT_EQ(p.reading_list.size(), kMaxReadings);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_TRUE(ack_of(p, i)->ok);
  const Ack* refused = ack_of(p, 8);
  EXPECT_FALSE(refused->ok);
  EXPECT_FALSE(refused->corrupt);  // a valid request that cannot be measured now
  EXPECT_NE(refused->note.find("readings"), std::string::npos);
  EXPECT_EQ(p.aggs[1].size(), 8u);
}

TEST_F(Plan, ASourceRefusalIsNotCorruption) {
  fake_readings().refuse = "no counters here";
  s.request(0, RequestKind::kAggregate, kFakeReadingMetric, {1}, 0, "a");
  s.request(1, RequestKind::kHistogram, kFakeReadingMetric, {1}, 0, "a");  // the structure is checked first
  const CompiledPlan p = s.compile();
  EXPECT_FALSE(ack_of(p, 0)->ok);
  EXPECT_FALSE(ack_of(p, 0)->corrupt);
  EXPECT_EQ(ack_of(p, 0)->note, "no counters here");
  EXPECT_TRUE(ack_of(p, 1)->corrupt);
  EXPECT_TRUE(p.aggs[1].empty());
}

TEST_F(Plan, RequestsASourceMeasuresItselfGoToItUnchecked) {
  s.request(0, RequestKind::kHistogram, uint32_t(Metric::kCacheEvent), {1, 2});
  s.request(1, RequestKind::kProfile, uint32_t(Metric::kCacheEvent), {1}, 0, "", 3);
  const CompiledPlan p = s.compile();
  EXPECT_EQ(ack_of(p, 0), nullptr);  // the source acknowledges them
  EXPECT_EQ(ack_of(p, 1), nullptr);
  const uint32_t owned = uint32_t(source_for_metric(uint32_t(Metric::kCacheEvent)));
  ASSERT_EQ(p.owned[owned].size(), 2u);
  EXPECT_EQ(p.owned[owned][0].regions, (std::vector<uint32_t>{1, 2}));
  EXPECT_FALSE(p.slice_set[3]);  // the core's slices are not its business
}

TEST_F(Plan, CounterEventNamesAreCheckedBeforePapiIsAsked) {
  s.request(0, RequestKind::kAggregate, uint32_t(Metric::kCounter), {1}, 0, "PAPI_TOT\x01CYC");
  s.request(1, RequestKind::kAggregate, uint32_t(Metric::kCounter), {1}, 0, "");
  const CompiledPlan p = s.compile();
  EXPECT_TRUE(ack_of(p, 0)->corrupt);
  EXPECT_TRUE(ack_of(p, 1)->corrupt);
}

TEST_F(Plan, DerivedTracePlan) {
  const TraceTarget simple[] = {{0, 0, 1, uint16_t(ValueKind::kEvent), 0, nullptr}};
  RegionPlan p;
  derive_trace_plan(p, simple, 1);
  EXPECT_EQ(p.trace_simple, 1);
  EXPECT_EQ(p.trace_values, 0);
  const uint64_t mask[proto::kThreadMaskWords] = {1};
  const TraceTarget filtered[] = {{0, 0, 1, uint16_t(ValueKind::kEvent), 0, mask},
                                  {1, 1, 1, uint16_t(ValueKind::kReading), 0, nullptr}};
  RegionPlan q;
  derive_trace_plan(q, filtered, 2);
  EXPECT_EQ(q.trace_simple, 0);
  EXPECT_EQ(q.trace_values, 1);
  EXPECT_EQ(q.readings, 1);
}

}  // namespace
}  // namespace mri::monitor

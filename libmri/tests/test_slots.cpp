// Placing requests into the segment's request records (slots.cpp and each
// kind's encoding through request_kind.h), on a segment in memory: what
// the application reads from a record is what the tool asked for.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "counters.h"
#include "error.h"
#include "request_aggregate.h"
#include "request_histogram.h"
#include "request_kind.h"
#include "request_trace.h"
#include "requests.h"
#include "segment_in_memory.h"
#include "slots.h"
#include "trace.h"

using namespace mri;
using namespace mri::tool;
using namespace mri::tool::testing;

namespace {

class Slots : public ::testing::Test {
 protected:
  void SetUp() override {
    const uint32_t file = segment.publish_file("kernel.c");
    for (int k = 0; k < 5; ++k)
      segment.publish_region(MRI_REGION_LOOP, file, 10 + k, "loop" + std::to_string(k));
    segment.set_threads(2);
    load_in_memory(s, segment);
    ASSERT_EQ(s.regions.size(), 5u);
  }
  // The collector a trace request starts reads this segment: it stops
  // before the segment goes.
  void TearDown() override {
    trace_stop_collector();
    trace_forget_callback();
  }

  MRI_Region_Spec region(int k) const { return s.regions[size_t(k)].spec; }
  Request request(MRI_Request_Kind kind, std::initializer_list<int> regions,
                  MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME) {
    Request r;
    r.id = next_id++;
    r.kind = kind;
    r.ri = ri;
    for (int k : regions) {
      r.regions.push_back(region(k));
      r.region_files.push_back("kernel.c");
    }
    return r;
  }
  const proto::RequestRecord& record(const Request& r) const { return *segment.view().request(uint32_t(r.slot)); }
  uint64_t bitmap(const Request& r) const { return segment.view().request_bitmap(uint32_t(r.slot))[0]; }

  SegmentInMemory segment;
  Session s;
  MRI_Request_ID next_id = 1;
};

TEST_F(Slots, AnAggregateRecordSaysWhatWasAsked) {
  Request r = request(MRI_AGGREGATE_REQUEST, {1, 3}, MRI_NUMBER_OF_INSTANCES);
  ASSERT_EQ(place_request(s, r), MRI_OK) << error_message();
  EXPECT_EQ(r.slot, 0);
  EXPECT_EQ(r.generation, 1u);
  const proto::RequestRecord& rec = record(r);
  EXPECT_EQ(rec.state, uint32_t(proto::RequestState::kActive));
  EXPECT_EQ(rec.generation, 1u);
  EXPECT_EQ(rec.kind, uint32_t(proto::RequestKind::kAggregate));
  EXPECT_EQ(rec.metric, uint32_t(proto::Metric::kInstances));
  EXPECT_EQ(rec.flags, 0u);
  EXPECT_EQ(rec.event[0], '\0');
  EXPECT_EQ(bitmap(r), (1ull << 1) | (1ull << 3));
  EXPECT_EQ(s.slot_busy[0], 1);
}

TEST_F(Slots, EachKindWritesItsOwnKindWord) {
  EXPECT_EQ(request_kind_ops(MRI_AGGREGATE_REQUEST).wire, proto::RequestKind::kAggregate);
  EXPECT_EQ(request_kind_ops(MRI_HISTOGRAM_REQUEST).wire, proto::RequestKind::kHistogram);
  EXPECT_EQ(request_kind_ops(MRI_TRACE_REQUEST).wire, proto::RequestKind::kTrace);
  EXPECT_EQ(request_kind_ops(MRI_PROFILE_REQUEST).wire, proto::RequestKind::kProfile);
  // Only traces refuse MRI_Get_Data, with the way their records come.
  EXPECT_EQ(request_kind_ops(MRI_TRACE_REQUEST).get_data, nullptr);
  EXPECT_NE(std::string(request_kind_ops(MRI_TRACE_REQUEST).no_get_data).find("call-back"), std::string::npos);
  EXPECT_NE(request_kind_ops(MRI_PROFILE_REQUEST).get_data, nullptr);
}

TEST_F(Slots, ACounterRequestNamesItsEvent) {
  Request r = request(MRI_AGGREGATE_REQUEST, {0});
  r.event = "PAPI_TOT_CYC";
  r.compensate = false;
  ASSERT_EQ(place_request(s, r), MRI_OK) << error_message();
  EXPECT_EQ(record(r).metric, uint32_t(proto::Metric::kCounter));
  EXPECT_STREQ(record(r).event, "PAPI_TOT_CYC");
  EXPECT_EQ(record(r).flags, proto::kRequestNoCompensation);
}

TEST_F(Slots, AProfileOfEveryRegionTakesASlice) {
  Request flat = request(MRI_PROFILE_REQUEST, {});
  ASSERT_EQ(place_request(s, flat), MRI_OK) << error_message();
  Request callpath = request(MRI_PROFILE_REQUEST, {2});
  callpath.callpath = true;
  callpath.unwind = true;
  ASSERT_EQ(place_request(s, callpath), MRI_OK) << error_message();
  EXPECT_EQ(record(flat).kind, uint32_t(proto::RequestKind::kProfile));
  EXPECT_EQ(record(flat).flags, proto::kRequestAllRegions);
  EXPECT_EQ(bitmap(flat), 0x1full);  // the five published regions
  EXPECT_EQ(flat.slice, 0);
  EXPECT_EQ(callpath.slice, 1);
  EXPECT_EQ(record(callpath).profile_slice, 1u);
  EXPECT_EQ(record(callpath).flags, proto::kRequestCallpath | proto::kRequestUnwind);
}

TEST_F(Slots, ProfileSlicesRunOutAndComeBack) {
  Request a = request(MRI_PROFILE_REQUEST, {0}), b = request(MRI_PROFILE_REQUEST, {1}),
          c = request(MRI_PROFILE_REQUEST, {2});
  ASSERT_EQ(place_request(s, a), MRI_OK);
  ASSERT_EQ(place_request(s, b), MRI_OK);
  EXPECT_EQ(place_request(s, c), MRI_Error);
  EXPECT_NE(std::string(error_message()).find("too many profile requests: at most 2"), std::string::npos)
      << error_message();
  EXPECT_EQ(c.slot, -1);
  unplace_request(s, a);
  EXPECT_EQ(a.slot, -1);
  EXPECT_EQ(a.slice, -1);
  ASSERT_EQ(place_request(s, c), MRI_OK) << error_message();
  EXPECT_EQ(c.slice, 0);  // a's slice, given back
}

TEST_F(Slots, RecordsAreTakenRoundRobin) {
  Request a = request(MRI_AGGREGATE_REQUEST, {0}), b = request(MRI_AGGREGATE_REQUEST, {0}),
          c = request(MRI_AGGREGATE_REQUEST, {0});
  ASSERT_EQ(place_request(s, a), MRI_OK);
  ASSERT_EQ(place_request(s, b), MRI_OK);
  unplace_request(s, a);
  EXPECT_EQ(segment.view().request(0)->state, uint32_t(proto::RequestState::kFree));
  ASSERT_EQ(place_request(s, c), MRI_OK);
  EXPECT_EQ(c.slot, 2);  // not a's record 0: its records may still be on their way
}

TEST_F(Slots, ARecordTakenAgainHasANewGeneration) {
  Request a = request(MRI_AGGREGATE_REQUEST, {0});
  for (int k = 0; k < 4; ++k) {
    Request other = request(MRI_AGGREGATE_REQUEST, {0});
    ASSERT_EQ(place_request(s, other), MRI_OK);
    unplace_request(s, other);
  }
  ASSERT_EQ(place_request(s, a), MRI_OK);
  EXPECT_EQ(a.slot, 0);
  EXPECT_EQ(a.generation, 2u);  // record 0's second request: its old results are not a's
}

TEST_F(Slots, RecordsRunOut) {
  Request r[5] = {request(MRI_AGGREGATE_REQUEST, {0}), request(MRI_AGGREGATE_REQUEST, {0}),
                  request(MRI_AGGREGATE_REQUEST, {0}), request(MRI_AGGREGATE_REQUEST, {0}),
                  request(MRI_AGGREGATE_REQUEST, {0})};
  for (int k = 0; k < 4; ++k) ASSERT_EQ(place_request(s, r[k]), MRI_OK);
  EXPECT_EQ(place_request(s, r[4]), MRI_Error);
  EXPECT_STREQ(error_message(), "too many requests: at most 4 at a time; delete some first");
}

TEST_F(Slots, ARegionThisRunLacksIsNotPlaced) {
  Request r = request(MRI_AGGREGATE_REQUEST, {0});
  r.region_files[0] = "other.c";  // made in a run of another program
  EXPECT_EQ(place_request(s, r), MRI_Error);
  EXPECT_NE(std::string(error_message()).find("no such source file"), std::string::npos) << error_message();
  Request moved = request(MRI_AGGREGATE_REQUEST, {0});
  moved.regions[0].id.line_NR = 99;
  EXPECT_EQ(place_request(s, moved), MRI_Error);
  EXPECT_EQ(s.slot_busy[0], 0);
}

TEST_F(Slots, ATraceRecordNamesItsThreads) {
  Request some = request(MRI_TRACE_REQUEST, {1}, MRI_REGION_EVENT);
  some.active_objects = {{MRI_THREAD, 1}, {MRI_THREAD, 3}};
  some.subregions = false;
  ASSERT_EQ(place_request(s, some), MRI_OK) << error_message();
  EXPECT_EQ(record(some).kind, uint32_t(proto::RequestKind::kTrace));
  EXPECT_EQ(record(some).metric, uint32_t(proto::Metric::kRegionEvent));
  EXPECT_EQ(record(some).flags, proto::kRequestThreadFilter | proto::kRequestNoSubregions);
  EXPECT_EQ(segment.view().request_threads(uint32_t(some.slot))[0], (1ull << 1) | (1ull << 3));
  Request all = request(MRI_TRACE_REQUEST, {1}, MRI_REGION_EVENT);
  all.active_objects = {{MRI_PROCESS, 42}};  // the process: every thread
  ASSERT_EQ(place_request(s, all), MRI_OK) << error_message();
  EXPECT_EQ(record(all).flags, 0u);
  EXPECT_EQ(segment.view().request_threads(uint32_t(all.slot))[0], 0u);
}

// A deleted trace request's record is not given to another trace request
// while records naming it wait: they would be delivered with the new
// request's runtime information.
TEST_F(Slots, ATraceRecordWaitsUntilItsRecordsAreTaken) {
  // Thread 0 wrote one record of request record 0 (the trace request's),
  // before the program ended: this application is gone from the start,
  // and a head that moved after the collector's first look would be
  // corrupt.
  proto::TraceRecord* ring = segment.view().trace_ring(0);
  ring[0] = proto::TraceRecord{100, 0, 0, uint16_t(proto::TraceKind::kEnter), 0};
  __atomic_store_n(&segment.view().trace_head(0)->head, 1, __ATOMIC_RELEASE);
  Request trace = request(MRI_TRACE_REQUEST, {0}, MRI_REGION_EVENT);
  ASSERT_EQ(place_request(s, trace), MRI_OK) << error_message();
  ASSERT_EQ(trace.slot, 0);
  Request others[3] = {request(MRI_AGGREGATE_REQUEST, {0}), request(MRI_AGGREGATE_REQUEST, {0}),
                       request(MRI_AGGREGATE_REQUEST, {0})};
  for (auto& r : others) ASSERT_EQ(place_request(s, r), MRI_OK);
  unplace_request(s, trace);
  Request next = request(MRI_TRACE_REQUEST, {0}, MRI_EXECUTION_TIME);
  EXPECT_EQ(place_request(s, next), MRI_Error);
  EXPECT_NE(std::string(error_message()).find("still holds trace records of deleted trace requests"),
            std::string::npos)
      << error_message();
  // An aggregate's values do not carry the trace's meaning: it may take it.
  // Once the record is taken, so may a trace request.
  MRI_Trace_Element_Spec taken[4];
  ASSERT_EQ(trace_take_records(taken, 4), 1);
  EXPECT_EQ(taken[0].event_type, MRI_REGION_EVENT);
  EXPECT_EQ(taken[0].data, MRI_TRACE_ENTER);
  ASSERT_EQ(place_request(s, next), MRI_OK) << error_message();
  EXPECT_EQ(next.slot, 0);
}

// Simulated cache events: the record's cache words name the event, the
// data structure and, for a histogram, its bins and histogram slot.
TEST_F(Slots, AHistogramTakesAHistogramSlot) {
  sync::store(segment.app().cache_backend, 1u);
  Request h = request(MRI_HISTOGRAM_REQUEST, {0}, MRI_LC1_DATA_READ_MISS);
  h.simulated = true;
  h.cache_event = 1;
  h.bins = 16;
  ASSERT_EQ(place_request(s, h), MRI_OK) << error_message();
  const proto::CacheRequestRecord& c = *segment.view().cache_request(uint32_t(h.slot));
  EXPECT_EQ(record(h).kind, uint32_t(proto::RequestKind::kHistogram));
  EXPECT_EQ(record(h).metric, uint32_t(proto::Metric::kCacheEvent));
  EXPECT_EQ(c.event, 1u);
  EXPECT_EQ(c.data_index, 0u);  // every data structure
  EXPECT_EQ(c.bins, 16u);
  EXPECT_EQ(c.histogram, 0u);
  EXPECT_EQ(h.histogram, 0);
  // Without the simulator in this run, a simulated request is not placed.
  sync::store(segment.app().cache_backend, 0u);
  Request again = request(MRI_HISTOGRAM_REQUEST, {0}, MRI_LC1_DATA_READ_MISS);
  again.simulated = true;
  EXPECT_EQ(place_request(s, again), MRI_Error);
  EXPECT_STREQ(error_message(), "this run of the application is not built with the cache-simulator backend");
}

// Eight histograms at once (proto::kMaxHistograms), however many request
// records there are.
TEST_F(Slots, HistogramSlotsRunOut) {
  proto::Geometry g = small_geometry();
  g.max_requests = 16;
  SegmentInMemory big(g);
  big.publish_region(MRI_REGION_LOOP, big.publish_file("kernel.c"), 10, "loop");
  sync::store(big.app().cache_backend, 1u);
  Session t;
  load_in_memory(t, big);
  for (uint32_t k = 0; k <= proto::kMaxHistograms; ++k) {
    Request r;
    r.kind = MRI_HISTOGRAM_REQUEST;
    r.ri = MRI_LC1_DATA_READ_MISS;
    r.simulated = true;
    r.bins = 4;
    const int rc = place_request(t, r);
    if (k < proto::kMaxHistograms) {
      ASSERT_EQ(rc, MRI_OK) << error_message();
      EXPECT_EQ(r.histogram, int(k));
      EXPECT_EQ(big.view().cache_request(uint32_t(r.slot))->histogram, k);
    } else {
      EXPECT_EQ(rc, MRI_Error);
      EXPECT_NE(std::string(error_message()).find("too many histogram requests: at most 8"), std::string::npos);
    }
  }
}

// Counter rotation: with a budget of one counter, each release measures
// the next event's requests only, and the records of the others are
// paused.
TEST_F(Slots, CounterRotationPausesTheOtherEvents) {
  setenv("MRI_COUNTER_BUDGET", "1", 1);
  Request a = request(MRI_AGGREGATE_REQUEST, {0}), b = request(MRI_AGGREGATE_REQUEST, {0}),
          a2 = request(MRI_PROFILE_REQUEST, {1});
  a.event = a2.event = "PAPI_TOT_CYC";
  b.event = "PAPI_TOT_INS";
  for (Request* r : {&a, &b, &a2}) {
    ASSERT_EQ(place_request(s, *r), MRI_OK);
    s.requests.emplace(r->id, *r);
  }
  s.rotation = true;
  auto paused = [&](const Request& r) { return (s.view.request(uint32_t(r.slot))->flags & proto::kRequestPaused) != 0; };
  for (unsigned release = 1; release <= 3; ++release) {
    s.iteration = release;
    rotate_counters(s);
    const bool first_event = release % 2 == 1;
    EXPECT_EQ(paused(a), !first_event) << "release " << release;
    EXPECT_EQ(paused(a2), !first_event) << "release " << release;
    EXPECT_EQ(paused(b), first_event) << "release " << release;
  }
  EXPECT_EQ(s.requests.at(a.id).measured, (std::vector<unsigned>{1, 3}));
  EXPECT_EQ(s.requests.at(b.id).measured, (std::vector<unsigned>{2}));
  unsetenv("MRI_COUNTER_BUDGET");
}

// The kinds' own argument checks run on the session alone.
TEST_F(Slots, TheKindsCheckTheirArguments) {
  MRI_Runtime_Information_Spec time = MRI_EXECUTION_TIME;
  MRI_Region_Spec r0 = region(0);
  MRI_Region_Table regions{&r0, 1};
  MRI_Active_Object_Spec thread{MRI_THREAD, 1};
  MRI_Active_Object_Table threads{&thread, 1};
  MRI_Aggregation_Spec per_process{MRI_SUM, MRI_PER_PROCESS};
  EXPECT_EQ(aggregate_request(s, &time, &regions, &threads, nullptr, &per_process), MRI_Error);
  EXPECT_NE(std::string(error_message()).find("PER_PROCESS needs process active objects"), std::string::npos)
      << error_message();
  MRI_Aggregation_Spec per_thread{MRI_MAX, MRI_PER_THREAD};
  const MRI_Request_ID id = aggregate_request(s, &time, &regions, &threads, nullptr, &per_thread);
  ASSERT_GT(id, 0) << error_message();
  EXPECT_EQ(s.requests.at(id).slot, 0);
  int bins = 0;
  EXPECT_EQ(histogram_request(s, &time, &regions, nullptr, nullptr, &bins), MRI_Error);
  EXPECT_STREQ(error_message(), "a histogram has 1 to 1024 bins (got 0)");
  EXPECT_EQ(delete_request(s, id), MRI_OK);
  EXPECT_EQ(delete_request(s, id), MRI_Error);
}

}  // namespace

// Reading the application's trace rings (trace_ring.h): which heads are
// believed, copying records across the ring's end, finding a request's
// records, and a record in the API's form.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "segment_in_memory.h"
#include "trace_ring.h"

using namespace mri;
using namespace mri::tool;
using namespace mri::tool::testing;

namespace {

constexpr uint64_t kRing = 16;  // small_geometry().trace_records

proto::TraceRecord value_record(uint64_t timestamp, uint64_t data, uint32_t region, uint16_t request) {
  return proto::TraceRecord{timestamp, data, region, uint16_t(proto::TraceKind::kValue), request};
}

TEST(TraceRing, AHeadIsBelievedWithinARingOfTheTail) {
  uint64_t end_head = kUnknownHead;
  EXPECT_EQ(look_at_ring(100, 90, kRing, false, end_head), RingLook::kReadable);
  EXPECT_EQ(look_at_ring(106, 90, kRing, false, end_head), RingLook::kReadable);  // exactly a full ring
  EXPECT_EQ(look_at_ring(107, 90, kRing, false, end_head), RingLook::kHeadBeyondRing);
  EXPECT_EQ(look_at_ring(89, 90, kRing, false, end_head), RingLook::kHeadBehindTail);
  EXPECT_EQ(look_at_ring(uint64_t(1) << 62, 0, kRing, false, end_head), RingLook::kHeadBeyondRing);
  EXPECT_EQ(end_head, kUnknownHead);  // the program runs: no end head yet
  EXPECT_STREQ(ring_look_problem(RingLook::kHeadBehindTail), "its head is behind the tail");
  EXPECT_EQ(ring_look_problem(RingLook::kReadable), nullptr);
}

TEST(TraceRing, AHeadThatMovesAfterTheEndIsNotBelieved) {
  uint64_t end_head = kUnknownHead;
  EXPECT_EQ(look_at_ring(50, 45, kRing, true, end_head), RingLook::kReadable);
  EXPECT_EQ(end_head, 50u);  // the first look after the end fixes it
  EXPECT_EQ(look_at_ring(50, 50, kRing, true, end_head), RingLook::kReadable);
  EXPECT_EQ(look_at_ring(51, 50, kRing, true, end_head), RingLook::kMovedAfterEnd);
}

TEST(TraceRing, CopiesAcrossTheRingsEnd) {
  SegmentInMemory segment;
  const proto::View& v = segment.view();
  proto::TraceRecord* ring = v.trace_ring(2);
  for (uint64_t n = 30; n < 34; ++n) ring[n % kRing] = value_record(n, n * 10, 1, 3);
  std::vector<CollectedRecord> out;
  EXPECT_EQ(copy_ring_records(v, 2, 30, 4, out), 4u);  // indices 14, 15, 0, 1
  ASSERT_EQ(out.size(), 4u);
  for (uint64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(out[k].timestamp, 30 + k);
    EXPECT_EQ(out[k].data, (30 + k) * 10);
    EXPECT_EQ(out[k].thread, 2u);
    EXPECT_EQ(out[k].request, 3u);
  }
}

TEST(TraceRing, CopiesNothingBeyondTheGeometry) {
  SegmentInMemory segment;
  std::vector<CollectedRecord> out;
  EXPECT_EQ(copy_ring_records(segment.view(), small_geometry().max_threads, 0, 1, out), 0u);
  EXPECT_EQ(copy_ring_records(segment.view(), 0, 0, kRing + 1, out), 0u);
  proto::Geometry odd = small_geometry();
  odd.trace_records = 12;  // not a power of two: no index mask
  SegmentInMemory bad(odd);
  EXPECT_EQ(copy_ring_records(bad.view(), 0, 0, 4, out), 0u);
  EXPECT_TRUE(out.empty());
}

TEST(TraceRing, FindsARequestsRecordsBetweenTailAndHead) {
  SegmentInMemory segment;
  const proto::View& v = segment.view();
  proto::TraceRecord* ring = v.trace_ring(1);
  ring[5] = value_record(1, 1, 0, 2);
  ring[6] = value_record(2, 2, 0, 4);
  EXPECT_TRUE(ring_holds_request(v, 1, 5, 7, 4));
  EXPECT_TRUE(ring_holds_request(v, 1, 5, 7, 2));
  EXPECT_FALSE(ring_holds_request(v, 1, 6, 7, 2));  // taken already
  EXPECT_FALSE(ring_holds_request(v, 1, 5, 7, 3));
  EXPECT_FALSE(ring_holds_request(v, 1, 5, 5 + kRing + 1, 2));  // an implausible head
  EXPECT_FALSE(ring_holds_request(v, small_geometry().max_threads, 5, 7, 2));
}

TEST(TraceRing, ARecordInTheApisForm) {
  SegmentInMemory segment;
  const uint32_t file = segment.publish_file("kernel.c");
  segment.publish_region(MRI_REGION_ROUTINE, file, 42, "solve");
  const proto::View& v = segment.view();
  RecordMeaning time;
  time.ri = MRI_EXECUTION_TIME;
  MRI_Trace_Element_Spec out;
  // 2.5 ns per tick: timestamps count from the epoch, times round to ns.
  decode_trace_record(v, CollectedRecord{1400, 3, 0, uint16_t(proto::TraceKind::kValue), 1, 3}, time, 1000, 2.5,
                      out);
  EXPECT_EQ(out.event_type, MRI_EXECUTION_TIME);
  EXPECT_EQ(out.region.type, MRI_REGION_ROUTINE);
  EXPECT_EQ(out.region.id.file_ID, 0);
  EXPECT_EQ(out.region.id.line_NR, 42);
  EXPECT_EQ(out.active_object.type, MRI_THREAD);
  EXPECT_EQ(out.active_object.id, 3);
  EXPECT_EQ(out.timestamp, 1000u);
  EXPECT_EQ(out.data, 8u);  // 7.5 ns, rounded
  EXPECT_EQ(out.data_structure.name, nullptr);
  RecordMeaning events;
  events.ri = MRI_REGION_EVENT;
  events.data_name = "grid";
  events.data_id = {0, 7};
  decode_trace_record(v, CollectedRecord{900, proto::kTraceExitSynthetic, 5, uint16_t(proto::TraceKind::kExit), 1, 0},
                      events, 1000, 2.5, out);
  EXPECT_EQ(out.timestamp, 0u);  // before the epoch
  EXPECT_EQ(out.data, (unsigned long long)(MRI_TRACE_EXIT | MRI_TRACE_SYNTHETIC));
  EXPECT_EQ(out.region.type, MRI_REGION_BLOCK);  // region 5 is not published
  EXPECT_EQ(out.region.id.file_ID, -1);
  EXPECT_STREQ(out.data_structure.name, "grid");
  EXPECT_EQ(out.data_structure.id.line_NR, 7);
  RecordMeaning counts;
  counts.ri = MRI_NUMBER_OF_INSTANCES;
  decode_trace_record(v, CollectedRecord{1000, 3, 0, uint16_t(proto::TraceKind::kValue), 1, 0}, counts, 1000, 2.5,
                      out);
  EXPECT_EQ(out.data, 3u);  // counts stay counts
}

// On random rings, what is read stays within the ring and the regions.
TEST(TraceRing, RandomHeadsAndRecordsStayInBounds) {
  SegmentInMemory segment;
  const proto::View& v = segment.view();
  std::mt19937_64 random(7);
  for (uint64_t at = 0; at + 8 <= segment.bytes(); at += 8) {
    const uint64_t word = random();
    std::memcpy(v.base + at, &word, 8);
  }
  for (uint32_t th = 0; th <= v.g.max_threads; ++th) {
    const uint64_t head = th < v.g.max_threads ? v.trace_head(th)->head : random();
    for (uint64_t tail : {uint64_t(0), head - 3, head - kRing, head + 1, uint64_t(random())}) {
      uint64_t end_head = kUnknownHead;
      std::vector<CollectedRecord> out;
      if (look_at_ring(head, tail, kRing, false, end_head) == RingLook::kReadable) {
        EXPECT_EQ(copy_ring_records(v, th, tail, head - tail, out), th < v.g.max_threads ? head - tail : 0);
      }
      ring_holds_request(v, th, tail, head, int(random() % 8));
      for (const auto& r : out) {
        MRI_Trace_Element_Spec e;
        decode_trace_record(v, r, RecordMeaning{}, random(), 1.0, e);
        EXPECT_EQ(e.active_object.id, int(th));
      }
    }
  }
}

}  // namespace

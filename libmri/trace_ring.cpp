// trace_ring.cpp - reading the application's trace rings, bounded by the
// view's geometry.
#include "trace_ring.h"

#include <algorithm>
#include <cstring>

#include "mri_sync.h"
#include "saturate.h"

namespace mri::tool {
namespace {

bool ring_readable(const proto::View& v, uint32_t thread, uint64_t count) {
  const uint64_t capacity = v.g.trace_records;
  return thread < v.g.max_threads && capacity != 0 && (capacity & (capacity - 1)) == 0 && count <= capacity;
}

}  // namespace

RingLook look_at_ring(uint64_t head, uint64_t tail, uint64_t capacity, bool ended, uint64_t& end_head) {
  if (ended && end_head == kUnknownHead) end_head = head;
  if (ended && head != end_head) return RingLook::kMovedAfterEnd;
  if (!plausible_head(head, tail, capacity))
    return head < tail ? RingLook::kHeadBehindTail : RingLook::kHeadBeyondRing;
  return RingLook::kReadable;
}

const char* ring_look_problem(RingLook look) {
  switch (look) {
    case RingLook::kReadable: return nullptr;
    case RingLook::kMovedAfterEnd: return "its head moved after the program ended";
    case RingLook::kHeadBehindTail: return "its head is behind the tail";
    case RingLook::kHeadBeyondRing: return "its head is beyond the ring";
  }
  return nullptr;
}

uint64_t copy_ring_records(const proto::View& v, uint32_t thread, uint64_t tail, uint64_t count,
                           std::vector<CollectedRecord>& out) {
  if (!ring_readable(v, thread, count)) return 0;
  const uint64_t mask = uint64_t(v.g.trace_records) - 1;
  const proto::TraceRecord* ring = v.trace_ring(thread);
  for (uint64_t i = 0; i < count; ++i) {
    const proto::TraceRecord& r = ring[(tail + i) & mask];
    out.push_back(CollectedRecord{r.timestamp, r.data, r.region, r.kind, r.request, thread});
  }
  return count;
}

bool ring_holds_request(const proto::View& v, uint32_t thread, uint64_t tail, uint64_t head, int request) {
  if (!plausible_head(head, tail, v.g.trace_records) || !ring_readable(v, thread, head - tail)) return false;
  const uint64_t mask = uint64_t(v.g.trace_records) - 1;
  const proto::TraceRecord* ring = v.trace_ring(thread);
  for (uint64_t n = tail; n < head; ++n)
    if (ring[n & mask].request == request) return true;
  return false;
}

void decode_trace_record(const proto::View& v, const CollectedRecord& r, const RecordMeaning& meaning,
                         uint64_t epoch, double ns_per_tick, MRI_Trace_Element_Spec& out) {
  std::memset(&out, 0, sizeof out);
  out.event_type = MRI_Runtime_Information_Spec(meaning.ri);
  // The region record is read from the segment again, not from the table
  // the tool checked at publication: a type outside the enumeration (a
  // record overwritten since) reads as an unknown region, as an index
  // beyond the published ones does (fuzz/fuzz_libmri_readers.cpp).
  const proto::RegionRecord* rr =
      r.region < std::min(sync::load(v.header()->app.region_count), v.g.max_regions) ? v.region(r.region) : nullptr;
  const uint32_t type = rr ? sync::load(rr->type) : 0;
  if (rr && type < MRI_REGION_TYPE_COUNT) {
    out.region.type = MRI_Region_Type(type);
    out.region.id.file_ID = int(rr->file_id);
    out.region.id.line_NR = rr->line;
  } else {
    out.region.type = MRI_REGION_BLOCK;
    out.region.id = {-1, -1};
  }
  out.active_object = {MRI_THREAD, int(r.thread)};
  if (meaning.data_name) {
    out.data_structure.id = meaning.data_id;
    out.data_structure.name = meaning.data_name;
  }
  const double ns = double(r.timestamp >= epoch ? r.timestamp - epoch : 0) * ns_per_tick;
  out.timestamp = saturated_ns(ns);
  switch (proto::TraceKind(r.kind)) {
    case proto::TraceKind::kEnter: out.data = MRI_TRACE_ENTER; break;
    case proto::TraceKind::kExit:
      out.data = MRI_TRACE_EXIT | (r.data & proto::kTraceExitSynthetic ? MRI_TRACE_SYNTHETIC : 0);
      break;
    default:
      out.data = meaning.ri == MRI_EXECUTION_TIME ? saturated_ns(double(r.data) * ns_per_tick + 0.5) : r.data;
      break;
  }
}

}  // namespace mri::tool

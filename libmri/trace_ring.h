// trace_ring.h - reading the application's trace rings (paper 4.4,
// docs/protocol.md "Trace rings"): whether a ring's head can be believed,
// copying records out, and turning a record into the API's form. Pure
// functions of a proto::View and the tool's own counts (no session, no
// collector state): the unit tests and fuzz targets run them on a segment
// in memory. Every index is bounded by the geometry of the view: a head,
// region or request index from the segment never reaches memory outside
// it.
#pragma once

#include <cstdint>
#include <vector>

#include "mri.h"
#include "mri_protocol.h"

namespace mri::tool {

// A ring record plus the thread it came from.
struct CollectedRecord {
  uint64_t timestamp;
  uint64_t data;
  uint32_t region;
  uint16_t kind;
  uint16_t request;
  uint32_t thread;
};

// A ring's head before the first look after the program ended.
inline constexpr uint64_t kUnknownHead = ~uint64_t(0);

// Whether a ring's head, as read, can be the thread's: the thread never
// writes more than the ring holds beyond the tool's tail, and the tool
// never takes more than the head.
inline bool plausible_head(uint64_t head, uint64_t tail, uint64_t capacity) {
  return head >= tail && head - tail <= capacity;
}

// What a look at a ring found.
enum class RingLook {
  kReadable,         // head - tail records wait (at most the capacity)
  kMovedAfterEnd,    // the head moved after the program ended: nothing writes it then
  kHeadBehindTail,   // the head is below what the tool has taken
  kHeadBeyondRing,   // the head is more than a ring ahead of the tail
};
// Judges head `head` (read from the segment) against the tool's own tail
// and the ring's capacity (records). `ended`: the program had ended before
// the head was read; `end_head` is the head at the first such look
// (kUnknownHead before; set here at that look).
RingLook look_at_ring(uint64_t head, uint64_t tail, uint64_t capacity, bool ended, uint64_t& end_head);
// Why a ring is corrupt, for the message (nullptr for kReadable).
const char* ring_look_problem(RingLook look);

// Appends records [tail, tail + count) of thread `thread`'s ring to `out`
// (a record lives at index (n & (capacity - 1))). Copies nothing for a
// thread beyond the geometry, a ring size that is not a power of two, or
// count above the ring size. Returns the records copied.
uint64_t copy_ring_records(const proto::View& v, uint32_t thread, uint64_t tail, uint64_t count,
                           std::vector<CollectedRecord>& out);
// Whether records [tail, head) of thread `thread`'s ring hold one of
// request record `request` (false for the bounds copy_ring_records keeps,
// and for an implausible head).
bool ring_holds_request(const proto::View& v, uint32_t thread, uint64_t tail, uint64_t head, int request);

// What a record's request record means for its records: its runtime
// information (-1: unknown) and data structure (name nullptr: none).
struct RecordMeaning {
  int ri = -1;
  MRI_Region_ID data_id{};
  const char* data_name = nullptr;
};
// Record `r` in the API's form: its region from the segment's region
// table (a region index outside the published ones gives a BLOCK region
// at {-1, -1}), its time in ns since `epoch` (ticks), its value (time
// values in ns, counts as they are; enter and exit flags).
void decode_trace_record(const proto::View& v, const CollectedRecord& r, const RecordMeaning& meaning,
                         uint64_t epoch, double ns_per_tick, MRI_Trace_Element_Spec& out);

}  // namespace mri::tool

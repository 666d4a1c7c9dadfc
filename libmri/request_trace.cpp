// request_trace.cpp - trace requests (paper 4.4): the check of
// MRI_Trace_Request's arguments, and what a trace request's record holds
// (the threads it traces, whether it follows subregions). Its record is
// never given to another trace request while records of a deleted one
// may still be delivered; placing it starts the collector (trace.cpp),
// which delivers its records.
#include "request_trace.h"

#include <algorithm>

#include "control.h"
#include "counters.h"
#include "error.h"
#include "requests.h"
#include "trace.h"

namespace mri::tool {
namespace {

// Whether a trace request may take request record `slot`: no deleted
// trace request's records can be delivered with its runtime information
// any more. They cannot come once the application has stopped or ended
// after the deletion took effect (the release after it, or at once when
// it was stopped then), and have all been taken. Needs mu.
bool trace_slot_drained(Session& s, int slot) {
  auto it = s.trace_draining.find(slot);
  if (it == s.trace_draining.end()) return true;
  const MRI_Application_Status st = current_status(s);
  const bool over = st == MRI_APPLICATION_TERMINATED ||
                    (st == MRI_APPLICATION_STOPPED && (it->second.stopped || s.iteration > it->second.iteration));
  if (!over || trace_slot_has_records(slot)) return false;
  s.trace_draining.erase(it);
  return true;
}

void encode_trace(Session& s, const Request& r, uint32_t slot, proto::RequestRecord& rec) {
  if (!r.subregions) rec.flags |= proto::kRequestNoSubregions;
  // Threads named in the active-object table (the process means all).
  bool all = r.active_objects.empty();
  for (const auto& a : r.active_objects) all |= a.type == MRI_PROCESS;
  uint64_t* mask = s.view.request_threads(slot);
  std::fill(mask, mask + proto::kThreadMaskWords, 0);
  if (!all) {
    for (const auto& a : r.active_objects) mask[uint32_t(a.id) / 64] |= 1ull << (uint32_t(a.id) % 64);
    rec.flags |= proto::kRequestThreadFilter;
  }
  trace_note_slot(int(slot), int(r.ri), r.data_index >= 0 ? &s.data[size_t(r.data_index)].spec : nullptr);
}

void start_collector(Session& s, Request&) { trace_start_collector(s); }

// A deleted trace request's records may still come: its record waits
// (trace_slot_drained) until they cannot.
void note_draining(Session& s, Request& r) {
  s.trace_draining[r.slot] = {s.iteration, current_status(s) != MRI_APPLICATION_RUNNING};
}

}  // namespace

const RequestKindOps kTraceRequests = {
    .wire = proto::RequestKind::kTrace,
    .record_usable = trace_slot_drained,
    .reserve = nullptr,
    .encode = encode_trace,
    .placed = start_collector,
    .unplacing = note_draining,
    .release = nullptr,
    .get_data = nullptr,
    .no_get_data = "is a trace request: its records come through the call-back and "
                   "MRI_Get_First_Trace_Record()/MRI_Get_Next_Trace_Record() (section 4.4), not MRI_Get_Data()",
};

MRI_Request_ID trace_request(Session& s, MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                             MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables) {
  Request r;
  r.kind = MRI_TRACE_REQUEST;
  if (check_common(s, ri, regions, ao, variables, true, r) != MRI_OK) return MRI_Error;
  int traces = 0;
  for (const auto& [id, q] : s.requests) traces += q.kind == MRI_TRACE_REQUEST;
  if (traces >= int(proto::kMaxTraceRequests))
    return fail("too many trace requests: at most %u at a time; delete one first", proto::kMaxTraceRequests);
  if (check_budget(s, r) != MRI_OK) return MRI_Error;
  return add_request(s, std::move(r));
}

}  // namespace mri::tool

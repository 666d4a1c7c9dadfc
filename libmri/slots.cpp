// slots.cpp - request records: placement common to every request kind.
#include "slots.h"

#include <algorithm>
#include <cstring>

#include "cache_simulator.h"
#include "data_structures.h"
#include "error.h"
#include "mri_sync.h"
#include "request_kind.h"
#include "requests.h"

namespace mri::tool {

int place_request(Session& s, Request& r) {
  if (!s.loaded || !s.view.base) return fail("no application loaded");
  if (r.simulated || !r.data_name.empty()) {  // a rerun: the table and the backend are the new run's
    if (!application_has_cache_simulator(s))
      return fail("this run of the application is not built with the cache-simulator backend");
    if (!r.data_name.empty()) {
      // Its unit's file by name, as the regions' below.
      if (!r.data_file.empty()) {
        const int file = file_id_named(s, r.data_file);
        if (file < 0)
          return fail("the application has no data structure \"%s\" (this program has no source file %s, where it "
                      "was registered)", r.data_name.c_str(), r.data_file.c_str());
        r.data_unit.file_ID = file;
      }
      const MRI_Data_Structure_Spec spec{r.data_unit, r.data_name.c_str()};
      r.data_index = data_structure_index(s, spec);
      if (r.data_index < 0) return MRI_Error;
    }
  }
  // Each region's file by its name in this run's file table (the same id
  // when it is the run the request was made in).
  for (size_t k = 0; k < r.regions.size() && k < r.region_files.size(); ++k) {
    const int file = file_id_named(s, r.region_files[k]);
    if (file < 0)
      return fail("the application has no %s region at %s line %d (this program has no such source file)",
                  MRI_Region_Type_Name(r.regions[k].type), r.region_files[k].c_str(), r.regions[k].id.line_NR);
    r.regions[k].id.file_ID = file;
  }
  for (const auto& spec : r.regions)
    if (region_index(s, spec) < 0)
      return fail("the application has no %s", describe_region(s, spec).c_str());
  // Round robin, not the lowest free slot: a request's records name its
  // slot, and a trace request's records may still be in the rings or the
  // buffer when it is deleted. A kind may refuse a free record
  // (record_usable): a trace request never takes the slot of a deleted one
  // while any of its records may come (request_trace.cpp): they would be
  // delivered with the new request's runtime information. (Round robin
  // alone let that happen once the other slots were taken: REGION_EVENT
  // records delivered as EXECUTION_TIME values of 1 and 2.)
  const RequestKindOps& kind = request_kind_ops(r.kind);
  int slot = -1, draining = 0;
  for (size_t k = 0; k < s.slot_busy.size(); ++k) {
    const size_t i = (s.next_slot + k) % s.slot_busy.size();
    if (s.slot_busy[i]) continue;
    if (kind.record_usable && !kind.record_usable(s, int(i))) {
      ++draining;
      continue;
    }
    slot = int(i);
    s.next_slot = i + 1;
    break;
  }
  if (slot < 0 && draining > 0)
    return fail("too many requests: at most %u at a time, and the %d free request record%s still hold%s trace records "
                "of deleted trace requests: take them (MRI_Get_Trace_Records) while the application is stopped, or "
                "delete another request first", s.view.g.max_requests, draining, draining == 1 ? "" : "s",
                draining == 1 ? "s" : "");
  if (slot < 0) return fail("too many requests: at most %u at a time; delete some first", s.view.g.max_requests);
  if (kind.reserve && kind.reserve(s, r) != MRI_OK) return MRI_Error;
  proto::RequestRecord* rec = s.view.request(uint32_t(slot));
  uint64_t* bits = s.view.request_bitmap(uint32_t(slot));
  const uint32_t words = proto::bitmap_words(s.view.g);
  std::fill(bits, bits + words, 0);
  if (r.regions.empty()) {
    for (size_t i = 0; i < s.regions.size(); ++i) bits[i / 64] |= 1ull << (i % 64);
  } else {
    for (const auto& spec : r.regions) {
      const int i = region_index(s, spec);
      bits[i / 64] |= 1ull << (i % 64);
    }
  }
  rec->kind = uint32_t(kind.wire);
  if (r.simulated) {
    proto::CacheRequestRecord* c = s.view.cache_request(uint32_t(slot));
    c->event = r.cache_event;
    c->data_index = r.data_index < 0 ? 0 : uint32_t(r.data_index) + 1;
    c->bins = 0;       // a histogram's encode sets its bins and slot
    c->histogram = 0;
  }
  rec->metric = r.simulated                     ? uint32_t(proto::Metric::kCacheEvent)
                : !r.event.empty()              ? uint32_t(proto::Metric::kCounter)
                : r.ri == MRI_NUMBER_OF_INSTANCES ? uint32_t(proto::Metric::kInstances)
                : r.ri == MRI_REGION_EVENT        ? uint32_t(proto::Metric::kRegionEvent)
                                                  : uint32_t(proto::Metric::kExecutionTime);
  std::memset(rec->event, 0, sizeof rec->event);
  std::memcpy(rec->event, r.event.data(), std::min(r.event.size(), sizeof rec->event - 1));
  rec->profile_slice = 0;  // a profile's encode sets its slice
  rec->flags = r.regions.empty() ? proto::kRequestAllRegions : 0;
  if (!r.compensate) rec->flags |= proto::kRequestNoCompensation;
  if (kind.encode) kind.encode(s, r, uint32_t(slot), *rec);
  r.generation = rec->generation + 1;
  sync::store(rec->generation, r.generation);
  sync::store(rec->state, uint32_t(proto::RequestState::kActive));
  s.slot_busy[slot] = 1;
  r.slot = slot;
  if (kind.placed) kind.placed(s, r);
  return MRI_OK;
}

void unplace_request(Session& s, Request& r) {
  const RequestKindOps& kind = request_kind_ops(r.kind);
  if (r.slot >= 0 && s.view.base) {
    if (kind.unplacing) kind.unplacing(s, r);
    sync::store(s.view.request(uint32_t(r.slot))->state, uint32_t(proto::RequestState::kFree));
    s.slot_busy[r.slot] = 0;
    if (kind.release) kind.release(s, r);
  }
  r.slot = -1;
  r.slice = -1;
  r.histogram = -1;
}

void place_kept_requests(Session& s) {
  for (auto& [id, r] : s.requests) {
    r.slot = -1;
    r.slice = -1;
    r.placement_error.clear();
    if (place_request(s, r) != MRI_OK) r.placement_error = error_message();
  }
}

}  // namespace mri::tool

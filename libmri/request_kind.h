// request_kind.h - the seam where a request kind plugs in (paper section
// 4: aggregate, histogram, trace, profile). Each kind is one file
// (request_<kind>.cpp) that holds the check of its MRI_*_Request
// arguments, what it writes into the segment when it is placed, and how
// MRI_Get_Data reads and reduces its results; it exports one
// RequestKindOps, and request_kinds.cpp maps MRI_Request_Kind to it.
// What all kinds share (the common checks, the request records) is in
// requests.cpp and slots.cpp, which call the kind's operations.
//
// Every operation runs with Session::mu held. nullptr: the kind has
// nothing to do there.
#pragma once

#include <cstdint>

#include "mri.h"
#include "mri_protocol.h"
#include "session.h"

namespace mri::tool {

struct RequestKindOps {
  proto::RequestKind wire;  // RequestRecord::kind

  // Placement (slots.cpp), in this order. record_usable: whether free
  // request record `slot` may hold a request of this kind (nullptr: any).
  bool (*record_usable)(Session& s, int slot);
  // Takes what the kind needs besides the request record (a profile
  // slice, a histogram slot) and notes it in `r`: MRI_OK, or MRI_Error
  // with the reason and nothing taken.
  int (*reserve)(Session& s, Request& r);
  // Writes the kind's own words of request record `slot` and of the areas
  // that go with it, after the words common to all kinds and before the
  // record is published (generation, state).
  void (*encode)(Session& s, const Request& r, uint32_t slot, proto::RequestRecord& rec);
  // After the record is published.
  void (*placed)(Session& s, Request& r);

  // Removal (slots.cpp): unplacing runs before the record is freed (r.slot
  // still names it), release after, to give back what reserve took.
  void (*unplacing)(Session& s, Request& r);
  void (*release)(Session& s, Request& r);

  // MRI_Get_Data for a placed request whose record the application has
  // not rejected; `active`: the results are of its current generation.
  // nullptr: its results come another way, and MRI_Get_Data fails with
  // "request N " + no_get_data.
  int (*get_data)(Session& s, Request& r, bool active, void** results);
  const char* no_get_data;
};

// The operations of `kind` (one of the four MRI_Request_Kind values a
// request is made with).
const RequestKindOps& request_kind_ops(MRI_Request_Kind kind);

}  // namespace mri::tool

// slots.h - placing requests into the segment's request records, what is
// common to every kind (docs/protocol.md, "Requests"): the record chosen
// round robin, the region bitmap, the metric, the flags, the generation.
// Each kind adds its own words through its RequestKindOps (request_kind.h).
// All need Session::mu.
#pragma once

#include "session.h"

namespace mri::tool {

// Puts request `r` into a free request record of the current segment:
// MRI_OK (r.slot, r.generation set), or MRI_Error with the reason (no
// application, a region or data structure this run lacks, no free record,
// slice or histogram slot).
int place_request(Session& s, Request& r);
// Frees r's record (and what its kind reserved); r is then unplaced.
void unplace_request(Session& s, Request& r);
// A rerun keeps the tool's requests (section 5): each is placed again in
// the new segment, or keeps why it could not be (Request::placement_error).
void place_kept_requests(Session& s);

}  // namespace mri::tool

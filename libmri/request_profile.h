// request_profile.h - profile requests (paper 4.3), flat and with the
// calling context (MRI_Callpath_Profile_Request): per region and thread,
// instances and inclusive, exclusive and compensated values, read from the
// request's profile slice.
#pragma once

#include <deque>
#include <functional>
#include <vector>

#include "mri.h"
#include "mri_protocol.h"
#include "request_kind.h"
#include "session.h"

namespace mri::tool {

extern const RequestKindOps kProfileRequests;

// MRI_Profile_Request (callpath false) and MRI_Callpath_Profile_Request
// after the session checks: its id, or MRI_Error with the reason.
MRI_Request_ID profile_request(Session& s, MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                               MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables, bool callpath);
// MRI_Get_Callpath_Data after the session checks.
int callpath_data(Session& s, MRI_Request_ID request, MRI_Callpath_Profile_Results** results);

// Pure readers (unit tests, fuzz targets): no session, no process.
//
// One profile from profile slice `slice`: elements[i] is region
// regions[region_ids[i]], and values[i * threads.size() + j] its value on
// thread threads[j] (elements[i].per_active_object points there, and
// elements[i] sums them). Each thread's row is read under its sequence
// word; a thread outside [0, rows), an inactive profile, a slice beyond
// the geometry or a region id outside the published regions reads as
// zero. Values are scaled by `scale` (ns per tick, or 1 for counts);
// compensated values are signed sums, reported clamped at 0.
void read_profile(const proto::View& v, uint32_t slice, const std::deque<RegionEntry>& regions,
                  const std::vector<int>& region_ids, const std::vector<int>& threads, uint32_t rows, bool active,
                  double scale, const std::function<bool()>& application_gone,
                  std::vector<MRI_Profile_Element>& elements, std::vector<MRI_Profile_Value>& values);
// A callpath profile from profile slice `slice`: the edge rows of
// `threads` summed per (caller, callee), in (caller, callee) order. Edges
// that name a region outside `regions` (not published) are left out; a
// thread beyond the geometry, an inactive profile or a slice beyond the
// geometry reads nothing.
std::vector<MRI_Callpath_Element> read_callpath(const proto::View& v, uint32_t slice,
                                                const std::deque<RegionEntry>& regions,
                                                const std::vector<int>& threads, bool active, double scale,
                                                const std::function<bool()>& application_gone);

}  // namespace mri::tool

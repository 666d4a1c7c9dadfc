// request_profile.cpp - profile requests (paper 4.3), flat and callpath:
// the check of MRI_Profile_Request's and MRI_Callpath_Profile_Request's
// arguments, the profile slice each takes (and the callpath flags) in its
// record, and MRI_Get_Data's and MRI_Get_Callpath_Data's reading of the
// threads' profile and edge rows.
#include "request_profile.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "counters.h"
#include "error.h"
#include "launch.h"
#include "requests.h"
#include "row_reader.h"
#include "saturate.h"

namespace mri::tool {
namespace {

// A profile's compensated sum: the application adds each instance's
// compensated time unclamped, modulo 2^64 (libmonitor's accumulate), so
// that compensated times add up; the sum is signed, negative where the
// estimated overhead exceeded the measured time. Reported clamped at 0.
double signed_sum(uint64_t sum) { return double(int64_t(sum)); }

int reserve_slice(Session& s, Request& r) {
  int slice = -1;
  for (size_t i = 0; i < s.slice_busy.size(); ++i)
    if (!s.slice_busy[i]) {
      slice = int(i);
      break;
    }
  if (slice < 0)
    return fail("too many profile requests: at most %u at a time; delete one first", s.view.g.max_profile_slices);
  s.slice_busy[size_t(slice)] = 1;
  r.slice = slice;
  return MRI_OK;
}

void release_slice(Session& s, Request& r) {
  if (r.slice >= 0) s.slice_busy[size_t(r.slice)] = 0;
}

void encode_profile(Session&, const Request& r, uint32_t, proto::RequestRecord& rec) {
  rec.profile_slice = uint32_t(r.slice);
  if (r.callpath) rec.flags |= proto::kRequestCallpath;
  if (r.unwind) rec.flags |= proto::kRequestUnwind;
}

int profile_results(Session& s, Request& r, bool active, void** results) {
  const uint32_t nthreads = thread_rows(s.view);
  refresh_static_information(s);
  std::vector<int> region_ids;
  if (r.regions.empty()) {
    for (size_t i = 0; i < s.regions.size(); ++i) region_ids.push_back(int(i));
  } else {
    for (const auto& spec : r.regions) region_ids.push_back(region_index(s, spec));
  }
  // The threads the request named, in its order, whether or not they have
  // run yet (as an aggregate request's elements); every thread seen so far
  // when it named none or the process.
  std::vector<int> threads;
  if (names_threads(r)) {
    for (const auto& a : r.active_objects) threads.push_back(a.id);
  } else {
    for (uint32_t t = 0; t < nthreads; ++t) threads.push_back(int(t));
  }
  read_profile(s.view, uint32_t(r.slice), s.regions, region_ids, threads, nthreads, active, value_scale(s, r),
               [&s] { return child_exited(s); }, r.prof_elements, r.prof_values);
  fill_results(r, r.prof_result, MRI_PROFILE_REQUEST, active, r.prof_elements);
  *results = &r.prof_result;
  clear_error();
  return MRI_OK;
}

}  // namespace

const RequestKindOps kProfileRequests = {
    .wire = proto::RequestKind::kProfile,
    .record_usable = nullptr,
    .reserve = reserve_slice,
    .encode = encode_profile,
    .placed = nullptr,
    .unplacing = nullptr,
    .release = release_slice,
    .get_data = profile_results,
    .no_get_data = nullptr,
};

MRI_Request_ID profile_request(Session& s, MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                               MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables, bool callpath) {
  Request r;
  r.kind = MRI_PROFILE_REQUEST;
  r.callpath = callpath;
  if (ri && raw(*ri) == MRI_REGION_EVENT)
    return fail("MRI_REGION_EVENT is only for trace requests; a profile needs a measured value");
  if (check_common(s, ri, regions, ao, variables, true, r) != MRI_OK) return MRI_Error;
  if (callpath && s.view.g.max_edges == 0) return fail("this run keeps no calling context (MRI_MAX_EDGES is 0)");
  if (check_budget(s, r) != MRI_OK) return MRI_Error;
  for (const auto& a : r.active_objects)
    if (a.type != MRI_THREAD && a.type != MRI_PROCESS)
      return fail("profile active objects must be threads or the process");
  return add_request(s, std::move(r));
}

int callpath_data(Session& s, MRI_Request_ID request, MRI_Callpath_Profile_Results** results) {
  auto it = s.requests.find(request);
  if (it == s.requests.end()) return fail("request %d does not exist (never created, or deleted)", request);
  Request& r = it->second;
  if (!r.callpath)
    return fail("request %d keeps no calling context: make it with MRI_Callpath_Profile_Request()", request);
  if (!s.loaded || !s.view.base) return fail("no application loaded");
  if (r.slot < 0) return fail("request %d is not in place in this run: %s", request, r.placement_error.c_str());
  const proto::RequestAck ack = *s.view.request_ack(uint32_t(r.slot));
  const bool active = ack.applied_generation == r.generation && ack.status == 0;
  refresh_static_information(s);
  const uint32_t nthreads = thread_rows(s.view);
  std::vector<int> threads;
  for (uint32_t t = 0; t < nthreads; ++t)
    if (wants_thread(r, int(t))) threads.push_back(int(t));
  r.callpath_elements = read_callpath(s.view, uint32_t(r.slice), s.regions, threads, active, value_scale(s, r),
                                      [&s] { return child_exited(s); });
  r.callpath_result.kind = MRI_PROFILE_REQUEST;
  r.callpath_result.ri = r.ri;
  r.callpath_result.active = active;
  r.callpath_result.nr_Elements = int(r.callpath_elements.size());
  r.callpath_result.element = r.callpath_elements.empty() ? nullptr : r.callpath_elements.data();
  *results = &r.callpath_result;
  clear_error();
  return MRI_OK;
}

void read_profile(const proto::View& v, uint32_t slice, const std::deque<RegionEntry>& regions,
                  const std::vector<int>& region_ids, const std::vector<int>& threads, uint32_t rows, bool active,
                  double scale, const std::function<bool()>& application_gone,
                  std::vector<MRI_Profile_Element>& elements, std::vector<MRI_Profile_Value>& values) {
  const size_t nr = region_ids.size(), nt = threads.size();
  elements.assign(nr, MRI_Profile_Element{});
  values.assign(nr * nt, MRI_Profile_Value{});
  // A row holds a slot per region of the geometry; the published regions
  // are its beginning.
  const size_t row_regions = std::min<size_t>(regions.size(), v.g.max_regions);
  const bool readable = active && slice < v.g.max_profile_slices;
  rows = std::min(rows, v.g.max_threads);
  // Copied with copy_n, not memcpy: with no region published the row is
  // empty and its data() may be null (fuzz/fuzz_libmri_readers.cpp).
  std::vector<proto::ProfileSlot> row(row_regions);
  for (size_t ti = 0; ti < nt; ++ti) {
    const int t = threads[ti];
    if (readable && t >= 0 && uint32_t(t) < rows)
      read_thread_consistent(
          v, uint32_t(t),
          [&] { std::copy_n(v.profile_row(slice, uint32_t(t)), row.size(), row.data()); },
          application_gone);
    else
      std::fill(row.begin(), row.end(), proto::ProfileSlot{});
    for (size_t ri = 0; ri < nr; ++ri) {
      const int region = region_ids[ri];
      const proto::ProfileSlot sl =
          region >= 0 && size_t(region) < row_regions ? row[size_t(region)] : proto::ProfileSlot{};
      MRI_Profile_Value& pv = values[ri * nt + ti];
      pv.active_object = {MRI_THREAD, t};
      pv.instances = sl.calls;
      pv.inclusive = double(sl.inclusive) * scale;
      pv.exclusive = double(sl.exclusive) * scale;
      pv.compensated_inclusive = std::max(signed_sum(sl.comp_inclusive) * scale, 0.0);
      pv.compensated_exclusive = std::max(signed_sum(sl.comp_exclusive) * scale, 0.0);
    }
  }
  for (size_t ri = 0; ri < nr; ++ri) {
    MRI_Profile_Element& e = elements[ri];
    const int region = region_ids[ri];
    if (region >= 0 && size_t(region) < regions.size()) e.region = regions[size_t(region)].spec;
    e.nr_Active_Objects = int(nt);
    e.per_active_object = nt ? &values[ri * nt] : nullptr;
    for (size_t ti = 0; ti < nt; ++ti) {
      e.instances = add_counts(e.instances, e.per_active_object[ti].instances);
      e.inclusive += e.per_active_object[ti].inclusive;
      e.exclusive += e.per_active_object[ti].exclusive;
      e.compensated_inclusive += e.per_active_object[ti].compensated_inclusive;
      e.compensated_exclusive += e.per_active_object[ti].compensated_exclusive;
    }
  }
}

std::vector<MRI_Callpath_Element> read_callpath(const proto::View& v, uint32_t slice,
                                                const std::deque<RegionEntry>& regions,
                                                const std::vector<int>& threads, bool active, double scale,
                                                const std::function<bool()>& application_gone) {
  std::vector<MRI_Callpath_Element> out;
  if (!active || slice >= v.g.max_profile_slices) return out;
  const uint32_t nreg = uint32_t(std::min<size_t>(regions.size(), UINT32_MAX));
  std::map<std::pair<uint32_t, uint32_t>, MRI_Callpath_Element> sums;
  std::vector<proto::EdgeSlot> row(v.g.max_edges);
  for (const int t : threads) {
    if (t < 0 || uint32_t(t) >= v.g.max_threads) continue;
    read_thread_consistent(
        v, uint32_t(t),
        [&] { std::copy_n(v.edge_row(slice, uint32_t(t)), row.size(), row.data()); },
        application_gone);
    for (const auto& e : row) {
      if (e.calls == 0) continue;
      if (e.callee >= nreg || (e.caller != proto::kNoCaller && e.caller >= nreg)) continue;  // not a published region
      MRI_Callpath_Element& el = sums[{e.caller, e.callee}];
      if (el.instances == 0) {
        el.has_caller = e.caller != proto::kNoCaller;
        if (el.has_caller) el.caller = regions[e.caller].spec;
        el.callee = regions[e.callee].spec;
      }
      el.instances = add_counts(el.instances, e.calls);
      el.inclusive += double(e.inclusive) * scale;
      el.exclusive += double(e.exclusive) * scale;
      el.compensated_inclusive += signed_sum(e.comp_inclusive) * scale;
      el.compensated_exclusive += signed_sum(e.comp_exclusive) * scale;
    }
  }
  out.reserve(sums.size());
  for (auto& [key, el] : sums) {
    el.compensated_inclusive = std::max(el.compensated_inclusive, 0.0);
    el.compensated_exclusive = std::max(el.compensated_exclusive, 0.0);
    out.push_back(el);
  }
  return out;
}

}  // namespace mri::tool

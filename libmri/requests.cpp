// requests.cpp - what the request kinds share: the common argument
// checks, region and file lookups, adding and deleting requests, the
// common part of MRI_Get_Data and the per-request switches.
#include "requests.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cache_simulator.h"
#include "counters.h"
#include "data_structures.h"
#include "error.h"
#include "launch.h"
#include "mri_papi.h"
#include "mri_sync.h"
#include "request_kind.h"
#include "slots.h"

namespace mri::tool {
namespace {

bool same_region(const MRI_Region_Spec& a, const MRI_Region_Spec& b) {
  return raw(a.type) == raw(b.type) && a.id.file_ID == b.id.file_ID && a.id.line_NR == b.id.line_NR;
}

// The index of the first element of `table` (s.regions or s.files) that
// `match` accepts, or -1. Not found, the static information is read again
// first: it may have been published since we last looked (a region that
// registers at its first execution, and its file).
template <class Table, class Match>
int published_index(Session& s, const Table& table, Match match) {
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < table.size(); ++i)
      if (match(table[i])) return int(i);
    if (pass == 0 && refresh_static_information(s) != MRI_OK) return -1;
  }
  return -1;
}

// The per-request switches below: finds the request, checks that the switch
// applies to it (`why_not`: the reason when not), and sets `bit` in its
// placed record when `set_bit`, else clears it. The application reads the
// record's flags at the next release; results stay.
int set_request_switch(Session& s, MRI_Request_ID request, bool (*applies)(const Request&), const char* why_not,
                       bool Request::*field, bool value, uint32_t bit, bool set_bit) {
  auto it = s.requests.find(request);
  if (it == s.requests.end()) return fail("request %d does not exist (never created, or deleted)", request);
  Request& r = it->second;
  if (!applies(r)) return fail("request %d %s", request, why_not);
  r.*field = value;
  if (r.slot >= 0 && s.view.base) {
    proto::RequestRecord* rec = s.view.request(uint32_t(r.slot));
    const uint32_t flags = sync::load(rec->flags);
    sync::store(rec->flags, set_bit ? flags | bit : flags & ~bit);
  }
  clear_error();
  return MRI_OK;
}

}  // namespace

bool region_type_valid(const MRI_Region_Spec& r) { return raw(r.type) >= 0 && raw(r.type) < MRI_REGION_TYPE_COUNT; }

int region_index(Session& s, const MRI_Region_Spec& spec) {
  return published_index(s, s.regions, [&](const auto& r) { return same_region(r.spec, spec); });
}

// The id of the source file called `name` in this run, or -1.
int file_id_named(Session& s, const std::string& name) {
  return published_index(s, s.files, [&](const std::string& f) { return f == name; });
}

// The name of file `id` in this run ("" when there is none): what a
// request keeps of the files it names, since ids are the program's own.
std::string file_name_of(const Session& s, int id) { return id >= 0 && size_t(id) < s.files.size() ? s.files[size_t(id)] : ""; }

std::string describe_region(const Session& s, const MRI_Region_Spec& r) {
  char text[160];
  if (!region_type_valid(r)) {
    std::snprintf(text, sizeof text, "region of unknown type %d", raw(r.type));
    return text;
  }
  const char* file = (r.id.file_ID >= 0 && size_t(r.id.file_ID) < s.files.size())
                         ? s.files[r.id.file_ID].c_str()
                         : "?";
  std::snprintf(text, sizeof text, "%s region at file %d (%s) line %d", MRI_Region_Type_Name(r.type),
                r.id.file_ID, file, r.id.line_NR);
  return text;
}

bool ri_known(int ri) {
  switch (ri) {
    case MRI_EXECUTION_TIME: case MRI_NUMBER_OF_INSTANCES: case MRI_REGION_EVENT:
      return true;
    default:
      return is_counter(ri) || is_cache_event(ri);
  }
}

int check_common(Session& s, MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions, MRI_Active_Object_Table* ao,
                 MRI_Data_Structure_Table* variables, bool regions_may_be_empty, Request& out) {
  if (!ri) return fail("runtime information pointer is NULL");
  if (!ri_known(raw(*ri)))
    return fail("unknown runtime information %d (see Get_Available_Runtime_Information())", raw(*ri));
  if (!s.loaded)
    return fail("no application loaded: call MRI_Application_Load() first, its regions are not known yet");
  out.ri = *ri;
  if (regions) {
    if (regions->nr_Elements < 0) return fail("region table has a negative nr_Elements (%d)", regions->nr_Elements);
    if (regions->nr_Elements > 0 && !regions->region)
      return fail("region table has %d elements but a NULL region pointer", regions->nr_Elements);
    for (int i = 0; i < regions->nr_Elements; ++i) {
      const MRI_Region_Spec& r = regions->region[i];
      if (!region_type_valid(r)) return fail("region table element %d: unknown region type %d", i, raw(r.type));
      if (region_index(s, r) < 0)
        return fail("region table element %d: the application has no %s (see MRI_Get_Regions())", i,
                    describe_region(s, r).c_str());
      out.regions.push_back(r);
      out.region_files.push_back(file_name_of(s, r.id.file_ID));
    }
  }
  if (out.regions.empty() && !regions_may_be_empty)
    return fail("the region table is empty: name at least one region");
  if (ao) {
    // One check for every request kind: each thread at most once, and
    // either the process (every thread) or threads, so that a request's
    // results list exactly the active objects it named.
    const uint32_t max_threads = s.view.g.max_threads;
    if (ao->nr_Elements < 0) return fail("active object table has a negative nr_Elements (%d)", ao->nr_Elements);
    if (ao->nr_Elements > 0 && !ao->active_object)
      return fail("active object table has %d elements but a NULL pointer", ao->nr_Elements);
    if (uint32_t(ao->nr_Elements) > max_threads)
      return fail("active object table has %d elements: at most %u, one per thread the application monitors "
                  "(MRI_MAX_THREADS), or the process alone", ao->nr_Elements, max_threads);
    std::vector<int> element_of_thread(max_threads, -1);
    int process_element = -1, first_thread_element = -1;
    for (int i = 0; i < ao->nr_Elements; ++i) {
      const MRI_Active_Object_Spec& a = ao->active_object[i];
      const int type = raw(a.type);
      if (type == MRI_THREAD) {
        if (a.id < 0 || uint32_t(a.id) >= max_threads)
          return fail("active object %d: thread id %d out of range (0..%u)", i, a.id, max_threads - 1);
        if (element_of_thread[size_t(a.id)] >= 0)
          return fail("active object %d: thread %d is named twice (also element %d); name each thread once", i, a.id,
                      element_of_thread[size_t(a.id)]);
        element_of_thread[size_t(a.id)] = i;
        if (first_thread_element < 0) first_thread_element = i;
      } else if (type == MRI_PROCESS) {
        if (a.id != s.pid)
          return fail("active object %d: process %d is not the application (pid %d)", i, a.id, int(s.pid));
        if (process_element >= 0)
          return fail("active object %d: the process is named twice (also element %d); name it once", i,
                      process_element);
        process_element = i;
      } else if (type == MRI_NODE) {
        return fail("active object %d: node-level monitoring is not available (single-node monitor)", i);
      } else {
        return fail("active object %d: unknown type %d", i, type);
      }
      if (process_element >= 0 && first_thread_element >= 0)
        return fail("active objects %d and %d: the table names the process, which stands for every thread, and a "
                    "thread; name either the process or threads", std::min(process_element, first_thread_element),
                    std::max(process_element, first_thread_element));
      out.active_objects.push_back(a);
    }
  }
  if (variables) {
    if (variables->nr_Elements < 0) return fail("data structure table has a negative nr_Elements");
    if (variables->nr_Elements > 1) return fail("at most one data structure per request (section 3.1)");
    if (variables->nr_Elements == 1) {
      if (raw(*ri) == MRI_EXECUTION_TIME || raw(*ri) == MRI_NUMBER_OF_INSTANCES)
        return fail("a data structure cannot restrict %s: only cache events have addresses",
                    MRI_Runtime_Information_Name(*ri));
      if (!variables->data_structure) return fail("data structure table has 1 element but a NULL pointer");
      out.data_index = data_structure_index(s, variables->data_structure[0]);
      if (out.data_index < 0) return MRI_Error;
      out.data_name = s.data[size_t(out.data_index)].name;
      out.data_unit = s.data[size_t(out.data_index)].spec.id;
      out.data_file = file_name_of(s, out.data_unit.file_ID);
    }
  }
  // Cache events of an application with the cache simulator are simulated
  // (cache_simulator.cpp); data structures and hits need it.
  if ((is_cache_event(raw(*ri)) || out.data_index >= 0) && check_cache_request(s, out, out.data_index >= 0) != MRI_OK)
    return MRI_Error;
  if (!out.simulated && is_counter(raw(*ri))) {
    out.event = event_of(raw(*ri));
    if (out.event.size() >= proto::kEventNameBytes)
      return fail("event name \"%s\" is longer than the monitor takes (%u characters)", out.event.c_str(),
                  proto::kEventNameBytes - 1);
    std::string why;
    switch (papi::check_event(out.event, why)) {
      case papi::EventCheck::kOk:
        break;
      case papi::EventCheck::kUnknown:
        return fail("runtime information %s: %s", MRI_Runtime_Information_Name(*ri), why.c_str());
      case papi::EventCheck::kUnavailable:
        return fail("runtime information %s is not available on this machine: %s", MRI_Runtime_Information_Name(*ri),
                    why.c_str());
    }
  }
  return MRI_OK;
}

MRI_Request_ID add_request(Session& s, Request&& r) {
  r.id = s.next_id++;
  if (place_request(s, r) != MRI_OK) {
    --s.next_id;
    return MRI_Error;
  }
  MRI_Request_ID id = r.id;
  s.requests.emplace(id, std::move(r));
  clear_error();
  return id;
}

int delete_request(Session& s, MRI_Request_ID request) {
  auto it = s.requests.find(request);
  if (it == s.requests.end())
    return fail("request %d does not exist (never created, or already deleted)", request);
  unplace_request(s, it->second);
  s.requests.erase(it);
  clear_error();
  return MRI_OK;
}

// Whether a request names threads (not none, not the process: check_common
// lets a table hold either the process or threads).
bool names_threads(const Request& r) { return !r.active_objects.empty() && r.active_objects[0].type == MRI_THREAD; }

// Whether a request's results cover thread t (all when it named none, or
// the process).
bool wants_thread(const Request& r, int t) {
  if (r.active_objects.empty()) return true;
  for (const auto& a : r.active_objects)
    if (a.type == MRI_PROCESS || (a.type == MRI_THREAD && a.id == t)) return true;
  return false;
}

double value_scale(const Session& s, const Request& r) {
  return r.ri == MRI_NUMBER_OF_INSTANCES || !r.event.empty() || r.simulated ? 1.0 : s.ns_per_tick;
}

// The iterations a request measured, as MRI_Get_Data hands them out
// (measured_copy: stable until the next call, while `measured` grows at
// the next release). Within a run `measured` only grows, so the copy of
// the last call is its beginning and only the new iterations are
// appended: a whole copy at every call made the reads of a long run
// quadratic (10 requests read at every stop: 17 us a stop at the start,
// 193 us after 40 000 stops).
void hand_out_measured(Request& r) {
  if (!r.measured_restarted && r.measured_copy.size() <= r.measured.size())
    r.measured_copy.insert(r.measured_copy.end(), r.measured.begin() + ptrdiff_t(r.measured_copy.size()),
                           r.measured.end());
  else
    r.measured_copy = r.measured;
  r.measured_restarted = false;
}

int get_data(Session& s, MRI_Request_ID request, void** results) {
  auto it = s.requests.find(request);
  if (it == s.requests.end()) return fail("request %d does not exist (never created, or deleted)", request);
  Request& r = it->second;
  const RequestKindOps& kind = request_kind_ops(r.kind);
  if (!kind.get_data) return fail("request %d %s", request, kind.no_get_data);
  if (!s.loaded || !s.view.base) return fail("no application loaded");
  if (r.slot < 0) return fail("request %d is not in place in this run: %s", request, r.placement_error.c_str());
  const proto::RequestAck ack = *s.view.request_ack(uint32_t(r.slot));
  if (ack.applied_generation == r.generation && ack.status != 0) {
    const proto::AppControl& a = s.view.header()->app;
    return fail("the application rejected request %d: %.*s", request, int(strnlen(a.last_error, sizeof a.last_error)),
                a.last_error);
  }
  const bool active = ack.applied_generation == r.generation && ack.status == 0;
  return kind.get_data(s, r, active, results);
}

int set_compensation(Session& s, MRI_Request_ID request, bool enabled) {
  return set_request_switch(
      s, request, [](const Request& r) { return r.kind != MRI_TRACE_REQUEST; },
      "is a trace request: trace records carry raw values, there is nothing to compensate", &Request::compensate,
      enabled, proto::kRequestNoCompensation, !enabled);
}

int set_trace_subregions(Session& s, MRI_Request_ID request, bool enabled) {
  return set_request_switch(
      s, request, [](const Request& r) { return r.kind == MRI_TRACE_REQUEST; },
      "is not a trace request: only traces follow their regions into subregions", &Request::subregions, enabled,
      proto::kRequestNoSubregions, !enabled);
}

int set_callpath_unwinding(Session& s, MRI_Request_ID request, bool enabled) {
  return set_request_switch(
      s, request, [](const Request& r) { return r.kind == MRI_PROFILE_REQUEST && r.callpath; },
      "is not a callpath profile request (MRI_Callpath_Profile_Request)", &Request::unwind, enabled,
      proto::kRequestUnwind, enabled);
}

}  // namespace mri::tool

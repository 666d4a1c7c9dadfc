// requests.h - what the request kinds share: the checks of the arguments
// every MRI_*_Request takes, the lookup of regions and files, adding and
// deleting requests, the common part of MRI_Get_Data and the per-request
// switches. All need Session::mu.
#pragma once

#include <string>

#include "mri.h"
#include "session.h"

namespace mri::tool {

bool region_type_valid(const MRI_Region_Spec& r);
// The index of region `spec` in s.regions, or -1 (read the static
// information again first when it is not there yet).
int region_index(Session& s, const MRI_Region_Spec& spec);
// The id of the source file called `name` in this run, or -1.
int file_id_named(Session& s, const std::string& name);
// The name of file `id` in this run ("" when there is none).
std::string file_name_of(const Session& s, int id);
std::string describe_region(const Session& s, const MRI_Region_Spec& r);
// Whether `ri` is runtime information some request kind can measure.
bool ri_known(int ri);

// Checks the arguments all request kinds share (runtime information,
// regions, active objects, data structure) into `out`: MRI_OK, or
// MRI_Error with the reason. regions_may_be_empty: an empty table means
// every region (profiles, traces).
int check_common(Session& s, MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                 MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables, bool regions_may_be_empty,
                 Request& out);
// Gives checked request `r` an id and places it: its id, or MRI_Error.
MRI_Request_ID add_request(Session& s, Request&& r);
// MRI_Request_Delete.
int delete_request(Session& s, MRI_Request_ID request);

// Whether a request names threads (not none, not the process: check_common
// lets a table hold either the process or threads).
bool names_threads(const Request& r);
// Whether a request's results cover thread t (all when it named none, or
// the process).
bool wants_thread(const Request& r, int t);
// What turns a request's values into the API's units: ns per tick for
// times, 1 for counts (instances, counters, simulated events).
double value_scale(const Session& s, const Request& r);
// The iterations r measured, into r.measured_copy (what MRI_Get_Data
// hands out: stable until its next call).
void hand_out_measured(Request& r);
// The fields the results of aggregate and profile requests share (mri.h):
// kind, runtime information, whether active, the elements and the
// measured iterations (hand_out_measured).
template <typename Results, typename Element>
void fill_results(Request& r, Results& out, MRI_Request_Kind kind, int active, std::vector<Element>& elements) {
  out.kind = kind;
  out.ri = r.ri;
  out.active = active;
  out.nr_Elements = int(elements.size());
  out.element = elements.data();
  hand_out_measured(r);
  out.nr_Measured_Iterations = int(r.measured_copy.size());
  out.measured_iteration = r.measured_copy.empty() ? nullptr : r.measured_copy.data();
}

// MRI_Get_Data after the session checks: finds the request, checks that
// it is in place and not rejected, and has its kind read the results.
int get_data(Session& s, MRI_Request_ID request, void** results);

// MRI_Set_Compensation, MRI_Set_Trace_Subregions and
// MRI_Set_Callpath_Unwinding after the session checks.
int set_compensation(Session& s, MRI_Request_ID request, bool enabled);
int set_trace_subregions(Session& s, MRI_Request_ID request, bool enabled);
int set_callpath_unwinding(Session& s, MRI_Request_ID request, bool enabled);

}  // namespace mri::tool

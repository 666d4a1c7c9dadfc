// The requests of `mri profile` (profile_requests.h).
#include "profile_requests.h"

#include <algorithm>
#include <cstring>

#include "program_run.h"

namespace mri::cli {

ProfileRequests place_requests(MRI_Region_Table regions, const ProfileOptions& o) {
  ProfileRequests r;
  MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
  // With -o the requests keep the calling context for the call tree.
  auto request = o.callpath ? MRI_Callpath_Profile_Request : MRI_Profile_Request;
  r.time = request(&ri, &regions, nullptr, nullptr);
  if (r.time < 0) die("profile request");
  if (!o.compensate && MRI_Set_Compensation(r.time, 0) != MRI_OK) die("--no-compensation");
  if (o.unwind && MRI_Set_Callpath_Unwinding(r.time, 1) != MRI_OK) die("--unwind");
  for (size_t m = 0; m < o.metric_ri.size(); ++m) {
    MRI_Runtime_Information_Spec metric = o.metric_ri[m];
    r.metrics.push_back(request(&metric, &regions, nullptr, nullptr));
    if (r.metrics.back() < 0) die("--metric " + o.metric_names[m]);
    if (o.unwind && MRI_Set_Callpath_Unwinding(r.metrics.back(), 1) != MRI_OK) die("--unwind");
  }
  // The Instances event of the callgrind file: the inclusive instances of
  // a call (the callee's instances and those nested in them, under that
  // caller) are measured, not derivable from the pairs of the other
  // requests.
  if (o.instances) {
    MRI_Runtime_Information_Spec n = MRI_NUMBER_OF_INSTANCES;
    r.instances = MRI_Callpath_Profile_Request(&n, &regions, nullptr, nullptr);
    if (r.instances < 0) die("instance profile request");
    if (o.unwind && MRI_Set_Callpath_Unwinding(r.instances, 1) != MRI_OK) die("--unwind");
  }
  return r;
}

void delete_requests(const ProfileRequests& r) {
  std::vector<MRI_Request_ID> ids = r.metrics;
  ids.push_back(r.time);
  if (r.instances >= 0) ids.push_back(r.instances);
  for (MRI_Request_ID id : ids)
    if (MRI_Request_Delete(id) != MRI_OK) die("delete a request");
}

bool any_runtime_information(const std::vector<MRI_Runtime_Information_Spec>& ris, bool counter, const char* backend) {
  MRI_Runtime_Information_Table t;
  if (ris.empty() || Get_Available_Runtime_Information(&t) != MRI_OK) return false;
  for (int k = 0; k < t.nr_Elements; ++k)
    if (std::find(ris.begin(), ris.end(), t.info[k].ri) != ris.end() &&
        (counter ? t.info[k].needs_counter != 0 : std::strcmp(t.info[k].backend, backend) == 0))
      return true;
  return false;
}

MRI_Overhead_Kind carried_kind(bool callpath, const std::vector<MRI_Runtime_Information_Spec>& metrics) {
  if (any_runtime_information(metrics, true, nullptr)) return MRI_OVERHEAD_COUNTER;
  return callpath ? MRI_OVERHEAD_CALLPATH : MRI_OVERHEAD_TIMER;
}

}  // namespace mri::cli

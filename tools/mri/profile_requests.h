// The requests of one run of `mri profile`: placed for the profile's run
// and for each run of the overhead fit (overhead_fit.h), and the kind of
// measurement the regions then carry.
//
// Errors: the functions that place or delete requests die() (status 1)
// when an MRI call fails, with the option it served in the message.
// Thread safety: main thread only, as libmri's calls.
#pragma once

#include "mri.h"

#include <cstddef>
#include <string>
#include <vector>

namespace mri::cli {

// At most this many --metric: the monitor holds 4 profile requests at a
// time (the default geometry of protocol/mri_protocol.h, max_profile_slices,
// which the environment cannot change) and the time profile is one of them.
constexpr size_t kMaxMetrics = 3;

// The requests of one run: the time profile, one per --metric, and with
// -o the instance profile of the callgrind file (`instances`, when a
// profile request is left for it; -1 otherwise).
struct ProfileRequests {
  MRI_Request_ID time = -1, instances = -1;
  std::vector<MRI_Request_ID> metrics;
};

// What the requests are: callpath profiles (with -o), unwinding callers
// (--unwind), compensated (not --no-compensation), with the instance
// profile, and the --metric events (`metric_names` as given, for messages).
struct ProfileOptions {
  bool callpath = false, unwind = false, compensate = true, instances = false;
  std::vector<MRI_Runtime_Information_Spec> metric_ri;
  std::vector<std::string> metric_names;
};

// Places the requests over `regions`: every region ({nullptr, 0}), or the
// PROGRAM regions in the fit's runs without the others.
ProfileRequests place_requests(MRI_Region_Table regions, const ProfileOptions& o);

void delete_requests(const ProfileRequests& r);

// Whether one of `ris` has this property in the publication table: needs a
// counter (`counter`), or comes from `backend` ("simulator").
bool any_runtime_information(const std::vector<MRI_Runtime_Information_Spec>& ris, bool counter, const char* backend);

// The kind of measurement the regions carry (docs/api.md, "Overhead
// compensation": a region's kind is the most expensive one it carries):
// counters read at enter and exit when a --metric needs a counter, else
// the callpath profile with -o, else the flat profile.
MRI_Overhead_Kind carried_kind(bool callpath, const std::vector<MRI_Runtime_Information_Spec>& metrics);

}  // namespace mri::cli

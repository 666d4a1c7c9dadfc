// The callgrind file of `mri profile -o`: regions as functions, exclusive
// values as self costs, and the call tree from the callpath requests
// (tools/exporters writes the format; docs/formats.md).
//
// Thread safety: main thread only.
#pragma once

#include "mri.h"
#include "profile_requests.h"

#include <string>
#include <vector>

namespace mri::cli {

// A callgrind event name: letters, digits and '_', starting with a letter
// ("perf::PAGE-FAULTS" -> "perf__PAGE_FAULTS").
std::string event_name(const std::string& s);

// Writes the callgrind file `path` (a stream too: output_files.h) of the
// program `prog` (its argv) from the profile's `requests`. Events: Time_ns,
// TimeComp_ns (with `compensate`), Instances (when requests.instances is a
// request), then one per --metric (`metric_names`). Every region that ran
// is a function (every region with `all`, as in the table).
//
// Self costs come from the flat profiles (MRI_Get_Data() of the same
// requests), which count every instance: a pair that did not fit the
// monitor's edge table (MRI_MAX_EDGES) is missing from the callpath
// results, and its callee's cost with it. Then the call tree is incomplete,
// which a warning says; the functions and totals are not.
//
// Errors: a write error ends mri with status 1 ("mri: cannot write PATH:
// REASON"); a failing MRI call dies. Says on stderr what it wrote.
void write_callgrind_file(const std::string& path, char** prog, const ProfileRequests& requests,
                          const std::vector<std::string>& metric_names, bool compensate, bool all);

}  // namespace mri::cli

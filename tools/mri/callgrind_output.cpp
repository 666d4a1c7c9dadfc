// The callgrind file of `mri profile -o` (callgrind_output.h).
#include "callgrind_output.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "mri_export.h"
#include "output_files.h"
#include "program_run.h"
#include "region_lookup.h"

namespace mri::cli {

namespace {

// The format has one record a line and no escapes: a line break in an
// argument, a region name or a file name (all legal) becomes a space, so
// that the file is written rather than refused after the whole run.
std::string one_line(std::string s) {
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return s;
}

}  // namespace

std::string event_name(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || !std::isalpha(static_cast<unsigned char>(out[0]))) out = "E" + out;
  return out;
}

void write_callgrind_file(const std::string& path, char** prog, const ProfileRequests& requests,
                          const std::vector<std::string>& metric_names, bool compensate, bool all) {
  namespace ex = mri::exporters;
  const MRI_Request_ID time_req = requests.time, instances_req = requests.instances;
  const std::vector<MRI_Request_ID>& metric_req = requests.metrics;
  ex::Profile profile;
  profile.program = one_line(prog[0]);
  for (char** a = prog; *a; ++a) profile.command += std::string(a == prog ? "" : " ") + one_line(*a);
  profile.events.push_back("Time_ns");
  profile.event_descriptions.push_back("Execution time (ns)");
  if (compensate) {
    profile.events.push_back("TimeComp_ns");
    profile.event_descriptions.push_back("Execution time with the monitor's overhead removed (ns)");
  }
  const bool with_instances = instances_req >= 0;
  if (with_instances) {
    profile.events.push_back("Instances");
    profile.event_descriptions.push_back("Region instances (inclusive: with the instances nested in them)");
  }
  for (const auto& m : metric_names) {
    profile.events.push_back(event_name(m));
    profile.event_descriptions.push_back(m);
  }
  const auto index = region_indices(&profile.regions);
  for (auto& r : profile.regions) {
    r.name = one_line(r.name);
    r.file = one_line(r.file);
  }
  const size_t nev = profile.events.size();
  const size_t comp_column = compensate ? 1 : 0;    // TimeComp_ns follows Time_ns
  const size_t instances_column = 1 + comp_column;  // when with_instances
  const size_t first_metric = instances_column + (with_instances ? 1 : 0);
  // The time request, then the metrics; the instances request apart (its
  // self cost is the flat instance count of the time request).
  std::vector<MRI_Request_ID> reqs{time_req};
  std::vector<size_t> columns{0};
  for (size_t m = 0; m < metric_req.size(); ++m) {
    reqs.push_back(metric_req[m]);
    columns.push_back(first_metric + m);
  }

  // Self costs from the flat profiles.
  std::map<uint32_t, std::vector<uint64_t>> self;
  std::map<uint32_t, unsigned long long> flat_instances;
  for (size_t r = 0; r < reqs.size(); ++r) {
    void* data = nullptr;
    if (MRI_Get_Data(reqs[r], &data) != MRI_OK) die("profile results");
    const auto* flat = static_cast<const MRI_Histogram_Profile_Results*>(data);
    for (int e = 0; e < flat->nr_Elements; ++e) {
      const MRI_Profile_Element& el = flat->element[e];
      auto region = index.find(key_of(el.region));
      if (region == index.end()) continue;
      if (r == 0) {
        if (el.instances == 0 && !all) continue;
        flat_instances[region->second] = el.instances;
        auto& costs = self[region->second];
        costs.assign(nev, 0);
        costs[0] = uint64_t(el.exclusive + 0.5);
        if (comp_column) costs[1] = uint64_t(el.compensated_exclusive + 0.5);
        if (with_instances) costs[instances_column] = el.instances;
      } else if (auto it = self.find(region->second); it != self.end()) {
        it->second[columns[r]] = uint64_t(el.exclusive + 0.5);
      }
    }
  }

  // Calls from the callpath results: count and inclusive costs.
  std::map<std::pair<uint32_t, uint32_t>, ex::ProfileCall> calls;
  std::map<uint32_t, unsigned long long> paired;  // per callee: instances in some pair (time request)
  if (with_instances) {
    reqs.push_back(instances_req);
    columns.push_back(instances_column);
  }
  for (size_t r = 0; r < reqs.size(); ++r) {
    const size_t ev = columns[r];
    MRI_Callpath_Profile_Results* res = nullptr;
    if (MRI_Get_Callpath_Data(reqs[r], &res) != MRI_OK) die("callpath results");
    for (int i = 0; i < res->nr_Elements; ++i) {
      const MRI_Callpath_Element& e = res->element[i];
      auto callee = index.find(key_of(e.callee));
      if (callee == index.end()) continue;
      if (r == 0) paired[callee->second] += e.instances;
      // A thread's outermost region is called from outside the profile
      // (kNoCaller): callgrind_annotate takes a function's inclusive cost
      // from its incoming calls, so a region that is a root on one thread
      // and a callee on another (a worker's share of a parallel loop)
      // needs both (docs/formats.md).
      if (e.has_caller && !index.count(key_of(e.caller))) continue;
      const uint32_t caller = e.has_caller ? index.at(key_of(e.caller)) : ex::kNoCaller;
      ex::ProfileCall& c = calls[{caller, callee->second}];
      c.caller = caller;
      c.callee = callee->second;
      c.inclusive.resize(nev, 0);
      c.calls = std::max<uint64_t>(c.calls, e.instances);  // callgrind rejects calls=0
      c.inclusive[ev] += uint64_t(e.inclusive + 0.5);
      if (r == 0 && comp_column) c.inclusive[1] += uint64_t(e.compensated_inclusive + 0.5);
    }
  }
  // Every instance has one nearest caller (or none: a root), so the pairs
  // into a region account for all its instances unless some were dropped.
  unsigned long long unpaired = 0;
  for (const auto& [region, n] : flat_instances) {
    const auto p = paired.find(region);
    const unsigned long long in_pairs = p == paired.end() ? 0 : p->second;
    if (n > in_pairs) unpaired += n - in_pairs;
  }

  for (auto& [region, costs] : self) profile.functions.push_back({region, costs});
  for (auto& [k, c] : calls) profile.calls.push_back(c);
  std::string error;
  if (!ex::write_callgrind(writer_path(path), profile, error)) {
    std::fprintf(stderr, "mri: cannot write %s: %s\n", path.c_str(), reason_only(error, writer_path(path)).c_str());
    MRI_Finalize();
    std::exit(1);
  }
  // Every function in the file: those with costs of their own, those only
  // called or calling (unwound frames), and the one outside any region.
  std::set<uint32_t> functions;
  for (const auto& f : profile.functions) functions.insert(f.region);
  for (const auto& c : profile.calls) {
    functions.insert(c.caller);  // kNoCaller: the function outside any region
    functions.insert(c.callee);
  }
  std::fprintf(stderr, "mri: wrote %s (%zu functions, %zu call edges; open it with kcachegrind or callgrind_annotate)\n",
               path.c_str(), functions.size(), profile.calls.size());
  if (!with_instances)
    std::fprintf(stderr, "mri: note: %s has no Instances event: with %zu --metric every profile request the monitor "
                 "holds is in use\n", path.c_str(), kMaxMetrics);
  if (unpaired)
    std::fprintf(stderr, "mri: warning: the call tree in %s is incomplete: %llu region instances have no caller/callee "
                 "pair (the monitor's table of pairs per thread was full; MRI_MAX_EDGES raises it, up to 65536); "
                 "self costs and totals are complete\n", path.c_str(), unpaired);
}

}  // namespace mri::cli

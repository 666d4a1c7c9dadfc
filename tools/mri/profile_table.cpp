// The tables of `mri profile` (profile_table.h).
#include "profile_table.h"

#include <algorithm>
#include <cstdio>

#include "profile_requests.h"
#include "region_lookup.h"

namespace mri::cli {

void print_table(const char* title, std::vector<Row> rows, const std::string& sort, double total_ns,
                 const TableColumns& columns) {
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (sort == "excl") return a.excl > b.excl;
    if (sort == "calls") return a.calls > b.calls;
    if (sort == "name") return a.name < b.name;
    return a.incl > b.incl;
  });
  size_t wn = 6, ww = 8;
  for (const auto& r : rows) {
    wn = std::max(wn, r.name.size());
    ww = std::max(ww, r.where.size());
  }
  std::printf("\n%s\n", title);
  std::printf("  %-*s  %-13s  %-*s  %12s  %14s  %14s", int(wn), "region", "type", int(ww), "location", "calls",
              "incl [ms]", "excl [ms]");
  if (columns.compensate) std::printf("  %14s  %14s", "comp incl [ms]", "comp excl [ms]");
  std::printf("  %7s", "incl %");
  for (const auto& m : columns.metrics)
    std::printf("  %*s  %*s", 22, (m + " incl").c_str(), 22, (m + " excl").c_str());
  std::printf("\n");
  for (const auto& r : rows) {
    std::printf("  %-*s  %-13s  %-*s  %12llu  %14.3f  %14.3f", int(wn), r.name.c_str(), r.type.c_str(), int(ww),
                r.where.c_str(), r.calls, r.incl / 1e6, r.excl / 1e6);
    if (columns.compensate) std::printf("  %14.3f  %14.3f", r.comp_incl / 1e6, r.comp_excl / 1e6);
    std::printf("  %6.1f%%", total_ns > 0 ? 100.0 * r.incl / total_ns : 0.0);
    for (size_t m = 0; m < r.metric_incl.size(); ++m) std::printf("  %22.0f  %22.0f", r.metric_incl[m], r.metric_excl[m]);
    std::printf("\n");
  }
}

const MRI_Profile_Element* element_for(const MRI_Histogram_Profile_Results* p, const MRI_Region_Spec& region) {
  for (int e = 0; e < p->nr_Elements; ++e)
    if (same_region(p->element[e].region, region)) return &p->element[e];
  return nullptr;
}

const MRI_Profile_Value* value_for(const MRI_Profile_Element* el, int id) {
  for (int t = 0; el && t < el->nr_Active_Objects; ++t)
    if (el->per_active_object[t].active_object.id == id) return &el->per_active_object[t];
  return nullptr;
}

void print_calibration(bool callpath, const std::vector<MRI_Runtime_Information_Spec>& metrics,
                       const std::vector<std::string>& metric_names, const std::string& overhead_source) {
  MRI_Overhead_Calibration cal;
  if (MRI_Get_Overhead_Calibration(&cal) != MRI_OK) return;
  MRI_Overhead_Kind kind = carried_kind(callpath, metrics);
  std::string what = callpath ? "; callpath profile" : "";
  if (kind == MRI_OVERHEAD_COUNTER && cal.kind[kind].calibrated) {
    // The events: the calibration's note names them, unless the tool set
    // the kind (--fit, --overhead): then the --metric names.
    std::string events = cal.kind[MRI_OVERHEAD_COUNTER].note;
    if (!overhead_source.empty()) {
      events.clear();
      for (size_t m = 0; m < metrics.size() && m < metric_names.size(); ++m)
        if (metrics[m] != MRI_EXECUTION_TIME && metrics[m] != MRI_NUMBER_OF_INSTANCES)
          events += (events.empty() ? "" : ",") + metric_names[m];
    }
    what = "; with the counters " + events + " read at enter and exit";
  }
  else if (kind == MRI_OVERHEAD_COUNTER)
    kind = callpath ? MRI_OVERHEAD_CALLPATH : MRI_OVERHEAD_TIMER;
  const MRI_Overhead_Value& v = cal.kind[kind];
  if (!v.calibrated) return;
  const std::string source = overhead_source.empty() ? "measured in the program" : overhead_source;
  std::printf("comp: the monitor's overhead removed (%s: %.1f ns per measured region\n"
              "      instance added to every enclosing one, %.1f ns of it inside its own time%s)\n",
              source.c_str(), v.delta_inclusive, v.delta_own, what.c_str());
  const MRI_Overhead_Value& sim = cal.kind[MRI_OVERHEAD_CACHE_SIMULATOR];
  if (sim.calibrated && any_runtime_information(metrics, false, "simulator"))
    std::printf("      and %.2f ns per memory reference recorded for the cache simulator\n", sim.delta_inclusive);
}

void warn_overcompensated(const std::vector<Row>& rows, const std::vector<std::vector<Row>>& thread_rows) {
  std::vector<std::string> names;
  auto check = [&names](const std::vector<Row>& table) {
    for (const Row& r : table)
      if (((r.incl > 0 && r.comp_incl <= 0) || (r.excl > 0 && r.comp_excl <= 0)) &&
          std::find(names.begin(), names.end(), r.name) == names.end())
        names.push_back(r.name);
  };
  check(rows);
  for (const auto& table : thread_rows) check(table);
  if (names.empty()) return;
  std::string list;
  for (size_t k = 0; k < names.size() && k < 5; ++k) list += (k ? ", " : "") + names[k];
  if (names.size() > 5) list += ", ... (" + std::to_string(names.size()) + " in all)";
  std::fprintf(stderr, "mri: warning: compensation removed more than was measured from %s: their comp columns show "
               "0 there, and the rows around them no longer add up (the overhead removed exceeds what the instances "
               "cost in this run; --fit measures it in the program itself)\n", list.c_str());
}

}  // namespace mri::cli

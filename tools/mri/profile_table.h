// The tables of `mri profile` on standard output: one row per region, the
// calibration line above them, and the warning about rows whose
// compensated times are shown as 0.
//
// Thread safety: main thread only.
#pragma once

#include "mri.h"

#include <string>
#include <vector>

namespace mri::cli {

struct Row {
  std::string name, type, where;
  unsigned long long calls;
  double incl, excl;                             // ns
  double comp_incl, comp_excl;                   // ns, the monitor's overhead removed
  std::vector<double> metric_incl, metric_excl;  // per --metric, in events
};

// The columns beyond calls and the raw times: the compensated ones
// (`compensate`), and a pair per --metric, headed by its name.
struct TableColumns {
  bool compensate = true;
  std::vector<std::string> metrics;
};

// Prints `title` and the rows sorted by `sort` (incl, excl, calls, name),
// with inclusive time as a share of `total_ns`.
void print_table(const char* title, std::vector<Row> rows, const std::string& sort, double total_ns,
                 const TableColumns& columns);

// The element of a profile result for `region`, or nullptr.
const MRI_Profile_Element* element_for(const MRI_Histogram_Profile_Results* p, const MRI_Region_Spec& region);

// The value of thread `id` in an element, or nullptr.
const MRI_Profile_Value* value_for(const MRI_Profile_Element* el, int id);

// The header line of the compensated columns: the overhead of the kind the
// regions carried (carried_kind(); the flat or callpath profile when the
// counter kind was not calibrated), from `overhead_source` ("" for the
// application's calibration, else --fit's or --overhead's words). Nothing
// when that kind was not calibrated.
void print_calibration(bool callpath, const std::vector<MRI_Runtime_Information_Spec>& metrics,
                       const std::vector<std::string>& metric_names, const std::string& overhead_source);

// Warns on stderr about rows whose compensated total the library reported
// as 0 because more was removed than measured (docs/api.md, "Totals shown
// as 0"), in the table of all threads or of one: their comp columns no
// longer add up.
void warn_overcompensated(const std::vector<Row>& rows, const std::vector<std::vector<Row>>& thread_rows);

}  // namespace mri::cli

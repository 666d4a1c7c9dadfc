// The bins of a histogram result (MRI_Histogram_Request_Results) as text:
// addresses, the data structures a bin holds, and the SVG bar chart of
// `mri hist --plot`.
//
// Thread safety: pure functions of their arguments.
#pragma once

#include "mri.h"

#include <string>

namespace mri::cli {

// "0x1f00".
std::string hex(unsigned long long v);

// The names of the data structures bin `b` holds, joined by `separator`.
std::string bin_names(const MRI_Histogram_Bin& b, const char* separator);

// An SVG bar chart of the bins of `h`, written by hand: `title` above,
// value axis (labelled `metric`) with ticks and grid lines, bin numbers,
// and under the bins a bracket per data structure with its name; `xlabel`
// under it all. Text is XML-escaped.
std::string svg_chart(const MRI_Histogram_Request_Results& h, const std::string& title, const std::string& metric,
                      const std::string& xlabel);

}  // namespace mri::cli

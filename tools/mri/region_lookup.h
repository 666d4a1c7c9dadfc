// The program's regions as mri names and shows them: --region values
// (NAME or NAME@FILE[:LINE]) looked up among the published regions, names
// and locations for the tables, and the region list the exporters take.
//
// Regions are those MRI_Get_Regions() returns at the time of the call (a
// C++ scope publishes its region when it first runs).
//
// Thread safety: main thread only (shown_file() keeps a cache).
#pragma once

#include "mri.h"
#include "mri_export.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace mri::cli {

// A --region value taken apart: NAME, and FILE and LINE when given
// (LINE -1: any line; `at`: whether the value had an '@').
struct RegionValue {
  std::string value, name, file;
  int line = -1;
  bool at = false;
};

RegionValue parse_region_value(const std::string& value);

// Whether a region called `name`, in `file` at `line`, is one `v` names.
// The whole value is also taken as a name, as MRI_Find_Region() takes it
// (a region name may hold an '@').
bool region_value_matches(const RegionValue& v, const std::string& name, const std::string& file, int line);

// Whether the program has published a region `value` could name: one
// called `value`, or NAME of NAME@FILE[:LINE] (whatever its file: a FILE
// that fits none of them is find_region()'s error, with the list).
bool region_name_published(const std::string& value);

// The region a --region value names: NAME, or NAME@FILE or NAME@FILE:LINE
// when several regions share NAME (FILE: the file's path, or a trailing
// part of it at a '/', as the location column shows it). Ends mri with
// status 1 and the candidates when the value names none or several.
MRI_Region_Spec find_region(const std::string& value);

// Adds a --region value of mri trace or hist to `names`, once (a repeat
// adds nothing). An empty one is a usage error.
void add_region_name(std::vector<std::string>& names, const std::string& name);

// A name as the tables show it: control characters written out (\n, \t,
// \xNN), so that a name with a newline does not break its row in two; the
// escaping of libmri's messages (protocol/mri_text.h).
std::string printable(const std::string& name);

// A region's name as shown and exported: "(unnamed)" for an empty one (a
// name the monitor's name pool had no room for: monitor_message says so).
std::string shown_name(const char* name);

// A region's name for the tables (printable()); "?" when MRI does not know it.
std::string region_name(const MRI_Region_Spec& r);

// A region's location for the tables: FILE:LINE, FILE the shortest
// trailing part of its path that tells it from the other published files.
std::string location(const MRI_Region_Spec& r);

bool same_region(const MRI_Region_Spec& a, const MRI_Region_Spec& b);

// A region spec as a map key.
using RegionKey = std::tuple<int, int, int>;
RegionKey key_of(const MRI_Region_Spec& r);

// Region index (MRI_Get_Regions() order) by spec; with `out`, the regions
// as the exporters take them (appended). Dies when MRI_Get_Regions() fails.
std::map<RegionKey, uint32_t> region_indices(std::vector<mri::exporters::Region>* out);

}  // namespace mri::cli

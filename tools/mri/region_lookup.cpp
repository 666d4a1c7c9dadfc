// The program's regions as mri names and shows them (region_lookup.h).
#include "region_lookup.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "mri_text.h"
#include "program_run.h"
#include "usage.h"

namespace mri::cli {

namespace {

// Whether `file` is `path` or a trailing part of it at a '/'.
bool file_matches(const std::string& path, const std::string& file) {
  if (path == file) return true;
  return path.size() > file.size() && path.compare(path.size() - file.size(), file.size(), file) == 0 &&
         path[path.size() - file.size() - 1] == '/';
}

// A file as the location column shows it: the shortest trailing part of
// its path, at a '/', that no other published file ends with. That is the
// base name, unless two files share it (a/util.c and b/util.c): then
// their rows would look the same.
std::string shown_file(int file_ID) {
  static std::map<int, std::string> shown;
  static int regions_seen = -1;  // built again when regions were published since
  MRI_Region_Table t;
  if (MRI_Get_Regions(&t) != MRI_OK) return "?";
  if (t.nr_Elements != regions_seen) {
    regions_seen = t.nr_Elements;
    std::map<int, std::string> paths;
    for (int k = 0; k < t.nr_Elements; ++k) {
      const char* f = MRI_Get_File_Name(t.region[k].id.file_ID);
      paths[t.region[k].id.file_ID] = f ? f : "?";
    }
    shown.clear();
    for (const auto& [id, path] : paths) {
      size_t slash = path.rfind('/');
      for (;;) {
        const std::string tail = slash == std::string::npos ? path : path.substr(slash + 1);
        bool shared = false;
        for (const auto& [other_id, other] : paths) shared = shared || (other_id != id && file_matches(other, tail));
        if (!shared || slash == std::string::npos || slash == 0) {
          shown[id] = tail;
          break;
        }
        slash = path.rfind('/', slash - 1);
      }
    }
  }
  const auto it = shown.find(file_ID);
  return it == shown.end() ? "?" : it->second;
}

}  // namespace

std::string location(const MRI_Region_Spec& r) {
  return shown_file(r.id.file_ID) + ":" + std::to_string(r.id.line_NR);
}

RegionValue parse_region_value(const std::string& value) {
  RegionValue v{value, value, "", -1, false};
  const size_t at = value.rfind('@');
  if (at == std::string::npos) return v;
  v.at = true;
  v.name = value.substr(0, at);
  v.file = value.substr(at + 1);
  const size_t colon = v.file.rfind(':');
  if (colon != std::string::npos && colon + 1 < v.file.size() &&
      v.file.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    v.line = std::atoi(v.file.c_str() + colon + 1);
    v.file.resize(colon);
  }
  return v;
}

bool region_value_matches(const RegionValue& v, const std::string& name, const std::string& file, int line) {
  if (name == v.value) return true;
  return name == v.name && (!v.at || (file_matches(file, v.file) && (v.line < 0 || v.line == line)));
}

bool region_name_published(const std::string& value) {
  MRI_Region_Spec found{};
  if (MRI_Find_Region(value.c_str(), &found) == MRI_OK) return true;
  const RegionValue v = parse_region_value(value);
  MRI_Region_Table t;
  if (MRI_Get_Regions(&t) != MRI_OK) return false;
  for (int k = 0; k < t.nr_Elements; ++k) {
    MRI_Region_Info info;
    if (MRI_Get_Region_Info(&t.region[k], &info) == MRI_OK && (v.name == info.name || v.value == info.name))
      return true;
  }
  return false;
}

MRI_Region_Spec find_region(const std::string& value) {
  MRI_Region_Spec found{};
  if (MRI_Find_Region(value.c_str(), &found) == MRI_OK) return found;
  const RegionValue v = parse_region_value(value);
  const std::string& name = v.name;
  MRI_Region_Table t;
  if (MRI_Get_Regions(&t) != MRI_OK) die("--region " + value);
  std::vector<MRI_Region_Spec> named, matching;
  for (int k = 0; k < t.nr_Elements; ++k) {
    MRI_Region_Info info;
    if (MRI_Get_Region_Info(&t.region[k], &info) != MRI_OK || name != info.name) continue;
    named.push_back(t.region[k]);
    if (v.at && region_value_matches(v, info.name, info.file, t.region[k].id.line_NR)) matching.push_back(t.region[k]);
  }
  if (matching.size() == 1) return matching[0];
  if (named.empty()) {
    MRI_Find_Region(name.c_str(), &found);  // for its reason
    die("--region " + value);
  }
  std::string which;
  for (const auto& r : named) which += (which.empty() ? "" : ", ") + name + "@" + location(r);
  if (!v.at)
    std::fprintf(stderr, "mri: --region %s: %zu regions have this name; name one of %s\n", value.c_str(),
                 named.size(), which.c_str());
  else if (matching.empty())
    std::fprintf(stderr, "mri: --region %s: no region named \"%s\" is at %s; the regions of this name: %s\n",
                 value.c_str(), name.c_str(), value.c_str() + name.size() + 1, which.c_str());
  else
    std::fprintf(stderr, "mri: --region %s: %zu regions named \"%s\" are at %s; name one of %s\n", value.c_str(),
                 matching.size(), name.c_str(), value.c_str() + name.size() + 1, which.c_str());
  MRI_Finalize();
  std::exit(1);
}

void add_region_name(std::vector<std::string>& names, const std::string& name) {
  if (name.empty()) usage_error("--region '' names no region (without --region: every region)");
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

std::string printable(const std::string& name) { return mri::text::printable(name); }

std::string shown_name(const char* name) { return name[0] ? name : "(unnamed)"; }

std::string region_name(const MRI_Region_Spec& r) {
  MRI_Region_Info info;
  return MRI_Get_Region_Info(&r, &info) == MRI_OK ? printable(shown_name(info.name)) : "?";
}

bool same_region(const MRI_Region_Spec& a, const MRI_Region_Spec& b) {
  return a.type == b.type && a.id.file_ID == b.id.file_ID && a.id.line_NR == b.id.line_NR;
}

RegionKey key_of(const MRI_Region_Spec& r) { return {int(r.type), r.id.file_ID, r.id.line_NR}; }

std::map<RegionKey, uint32_t> region_indices(std::vector<mri::exporters::Region>* out) {
  std::map<RegionKey, uint32_t> index;
  MRI_Region_Table t;
  if (MRI_Get_Regions(&t) != MRI_OK) die("regions");
  for (int r = 0; r < t.nr_Elements; ++r) {
    index[key_of(t.region[r])] = uint32_t(r);
    if (out) {
      MRI_Region_Info info;
      mri::exporters::Region reg;
      reg.id = uint32_t(r);
      if (MRI_Get_Region_Info(&t.region[r], &info) == MRI_OK) {
        reg.name = shown_name(info.name);
        reg.file = info.file;
      } else {
        reg.name = "?";
        reg.file = "?";
      }
      reg.line = t.region[r].id.line_NR;
      if (t.region[r].type == MRI_REGION_FUNCTION) {
        // Found by unwinding: its "file" is the object file and its line the
        // offset in it, no source to show ("???" is callgrind's own name for
        // an unknown source file; annotators skip it).
        reg.line = 0;
        reg.file = "???";
      }
      reg.kind = MRI_Region_Type_Name(t.region[r].type);
      out->push_back(reg);
    }
  }
  return index;
}

}  // namespace mri::cli

// data_structures.cpp - the application's data-structure table (paper 3.2),
// read from the segment, checked, and looked up by name and unit.
#include "data_structures.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "error.h"
#include "launch.h"
#include "mri_sync.h"

namespace mri::tool {
namespace {

std::string describe_unit(const Session& s, const MRI_Region_ID& id) {
  const char* file = id.file_ID >= 0 && size_t(id.file_ID) < s.files.size() ? s.files[size_t(id.file_ID)].c_str() : "?";
  char text[256];
  if (id.line_NR == 0)
    std::snprintf(text, sizeof text, "file scope of %s", file);
  else
    std::snprintf(text, sizeof text, "the unit at %s:%d", file, id.line_NR);
  return text;
}

std::string registered_names(const Session& s) {
  std::string names;
  for (const DataEntry& d : s.data) names += (names.empty() ? "" : ", ") + d.name;
  return names.empty() ? std::string("none") : names;
}

}  // namespace

// Validates every record: the tool does not trust the segment either.
int refresh_data_structures(Session& s) {
  if (!s.loaded || !s.view.base) return MRI_OK;
  if (refresh_static_information(s) != MRI_OK) return MRI_Error;  // the files the records name
  const proto::View& v = s.view;
  const uint32_t n = sync::load(v.header()->app.data_count);
  const uint32_t pool = sync::load(v.header()->app.string_pool_used);
  if (n > proto::kMaxDataStructures || n < s.data.size() || pool > v.g.string_pool_bytes)
    return fail("the application published an inconsistent data-structure table");
  for (uint32_t i = uint32_t(s.data.size()); i < n; ++i) {
    const proto::DataRecord rec = *v.data_record(i);
    if (uint64_t(rec.name_offset) + rec.name_len >= pool || rec.name_len == 0 || rec.file_id >= s.files.size() ||
        rec.bytes == 0 || rec.address + rec.bytes < rec.address)
      return fail("the application published a bad data-structure record (%u)", i);
    if (rec.bytes > proto::kMaxDataStructureBytes)
      return fail("the application published a data-structure record (%u) of %llu bytes, above 2^56 (no address "
                  "space is that large)", i, (unsigned long long)rec.bytes);
    DataEntry& e = s.data.emplace_back();  // a deque: earlier entries (and their names) stay put
    e.record = rec;
    e.name.assign(v.strings() + rec.name_offset, rec.name_len);
    e.spec.id = {int(rec.file_id), rec.line};
    e.spec.name = e.name.c_str();
  }
  return MRI_OK;
}

int data_structure_index(Session& s, const MRI_Data_Structure_Spec& spec) {
  if (!spec.name) return fail("data structure name is NULL");
  if (refresh_data_structures(s) != MRI_OK) return MRI_Error;
  // The newest registration: one that ended (Monitor_Unregister_Data) may
  // have been followed by another of the same name in the same unit.
  bool other_unit = false;
  for (size_t i = s.data.size(); i-- > 0;) {
    if (s.data[i].name != spec.name) continue;
    if (s.data[i].spec.id.file_ID == spec.id.file_ID && s.data[i].spec.id.line_NR == spec.id.line_NR) return int(i);
    other_unit = true;
  }
  if (other_unit)
    return fail("the application registered \"%s\", but not in %s (see MRI_Find_Data_Structure())", spec.name,
                describe_unit(s, spec.id).c_str());
  return fail("the application has not registered a data structure \"%s\" (registered: %s; see MONITOR_DATA in "
              "mri_monitor.h)", spec.name, registered_names(s).c_str());
}

int data_structure_table(Session& s, MRI_Data_Structure_Table* table) {
  if (refresh_data_structures(s) != MRI_OK) return MRI_Error;
  s.data_table.clear();
  for (const DataEntry& d : s.data) s.data_table.push_back(d.spec);
  table->data_structure = s.data_table.empty() ? nullptr : s.data_table.data();
  table->nr_Elements = int(s.data_table.size());
  clear_error();
  return MRI_OK;
}

int find_data_structure(Session& s, const char* name, MRI_Data_Structure_Spec* data_structure) {
  if (refresh_data_structures(s) != MRI_OK) return MRI_Error;
  // Units, not records: a data structure ended and registered again in
  // its unit (Monitor_Unregister_Data) has a record per registration, and
  // the spec names the newest (data_structure_index).
  int found = -1;
  std::vector<std::pair<int, int>> units;
  for (size_t i = 0; i < s.data.size(); ++i)
    if (s.data[i].name == name) {
      const std::pair<int, int> unit{s.data[i].spec.id.file_ID, s.data[i].spec.id.line_NR};
      if (std::find(units.begin(), units.end(), unit) == units.end()) units.push_back(unit);
      found = int(i);
    }
  const int count = int(units.size());
  if (count == 0)
    return fail("the application has not registered a data structure \"%s\" (registered: %s)", name,
                registered_names(s).c_str());
  if (count > 1)
    return fail("%d data structures are called \"%s\" (in different program units): name the unit in the "
                "MRI_Data_Structure_Spec (see MRI_Get_Data_Structures())", count, name);
  *data_structure = s.data[size_t(found)].spec;
  clear_error();
  return MRI_OK;
}

int data_structure_info(Session& s, const MRI_Data_Structure_Spec& data_structure, MRI_Data_Structure_Info* info) {
  const int i = data_structure_index(s, data_structure);
  if (i < 0) return MRI_Error;
  const DataEntry& d = s.data[size_t(i)];
  info->data_structure = d.spec;
  info->address = d.record.address;
  info->size_bytes = d.record.bytes;
  info->file = s.files[d.record.file_id].c_str();
  clear_error();
  return MRI_OK;
}

}  // namespace mri::tool

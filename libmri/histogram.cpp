// histogram.cpp - the tool side of data structures and simulated cache
// events: the application's data-structure table, which cache requests the
// simulator measures, the simulator configuration, and histogram results
// (paper 3.2, 4.2).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cachesim.h"
#include "config_file.h"
#include "mri.h"
#include "mri_histogram.h"
#include "mri_sync.h"
#include "tool_internal.h"

namespace mri::tool {
namespace {

struct CacheEvent {
  int ri;
  uint32_t level;  // 0 = L1
  sim::EventKind kind;
  bool hit;
};

constexpr CacheEvent kCacheEvents[] = {
    {MRI_LC1_DATA_READ_MISS, 0, sim::EventKind::kReadMiss, false},
    {MRI_LC1_DATA_WRITE_MISS, 0, sim::EventKind::kWriteMiss, false},
    {MRI_LC2_DATA_READ_MISS, 1, sim::EventKind::kReadMiss, false},
    {MRI_LC2_DATA_WRITE_MISS, 1, sim::EventKind::kWriteMiss, false},
    {MRI_LC3_DATA_READ_MISS, 2, sim::EventKind::kReadMiss, false},
    {MRI_LC3_DATA_WRITE_MISS, 2, sim::EventKind::kWriteMiss, false},
    {MRI_LC1_DATA_READ_HIT, 0, sim::EventKind::kReadHit, true},
    {MRI_LC1_DATA_WRITE_HIT, 0, sim::EventKind::kWriteHit, true},
    {MRI_LC2_DATA_READ_HIT, 1, sim::EventKind::kReadHit, true},
    {MRI_LC2_DATA_WRITE_HIT, 1, sim::EventKind::kWriteHit, true},
    {MRI_LC3_DATA_READ_HIT, 2, sim::EventKind::kReadHit, true},
    {MRI_LC3_DATA_WRITE_HIT, 2, sim::EventKind::kWriteHit, true},
};

const CacheEvent* find_cache_event(int ri) {
  for (const auto& e : kCacheEvents)
    if (e.ri == ri) return &e;
  return nullptr;
}

std::string describe_unit(const MRI_Region_ID& id) {
  const char* file = id.file_ID >= 0 && size_t(id.file_ID) < s.files.size() ? s.files[size_t(id.file_ID)].c_str() : "?";
  char text[256];
  if (id.line_NR == 0)
    std::snprintf(text, sizeof text, "file scope of %s", file);
  else
    std::snprintf(text, sizeof text, "the unit at %s:%d", file, id.line_NR);
  return text;
}

std::string registered_names() {
  std::string names;
  for (const DataEntry& d : s.data) names += (names.empty() ? "" : ", ") + d.name;
  return names.empty() ? std::string("none") : names;
}

}  // namespace

bool is_cache_event(int ri) { return find_cache_event(ri) != nullptr; }

uint32_t cache_event_code(int ri) {
  const CacheEvent* e = find_cache_event(ri);
  return e ? e->level * 8 + uint32_t(e->kind) : 0;
}

bool application_has_cache_simulator() {
  return s.loaded && s.view.base && sync::load(s.view.header()->app.cache_backend) == 1;
}

// Reads the data structures published since the last call. Validates every
// record: the tool does not trust the segment either.
int refresh_data_structures() {
  if (!s.loaded || !s.view.base) return MRI_OK;
  if (refresh_static_information() != MRI_OK) return MRI_Error;  // the files the records name
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

int data_structure_index(const MRI_Data_Structure_Spec& spec) {
  if (!spec.name) return fail("data structure name is NULL");
  if (refresh_data_structures() != MRI_OK) return MRI_Error;
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
                describe_unit(spec.id).c_str());
  return fail("the application has not registered a data structure \"%s\" (registered: %s; see MONITOR_DATA in "
              "mri_monitor.h)", spec.name, registered_names().c_str());
}

int check_cache_request(Request& r, bool has_data_structure) {
  const CacheEvent* e = find_cache_event(raw(r.ri));
  const char* name = MRI_Runtime_Information_Name(r.ri);
  if (!e) return fail("a data structure restricts only cache events (LCn_DATA_..._MISS or _HIT); %s has no address", name);
  if (!application_has_cache_simulator()) {
    const char* what = has_data_structure              ? "restricting it to a data structure"
                       : e->hit                        ? "counting hits"
                       : r.kind == MRI_HISTOGRAM_REQUEST ? "a histogram over addresses"
                                                       : nullptr;
    if (!what) return MRI_OK;  // misses from PAPI, as before
    return fail("%s: %s needs the cache-simulator backend, and this application is not built with it "
                "(build it with mri_add_instrumented_executable, docs/user-guide.md)", name, what);
  }
  r.simulated = true;
  r.cache_event = e->level * 8 + uint32_t(e->kind);
  return MRI_OK;
}

// The text the application gets for a configuration as the user gave it
// (`given`): itself, or for "@FILE" the canonical text of the file's
// configuration (sim::format_config: comments and all left out, so that
// it fits the segment), read here, bounded. The application never gets a
// file name: it reads no file named in the segment (protocol version 12).
// MRI_OK, or MRI_Error with `origin` and the reason.
static int segment_text_of(const std::string& given, const char* origin, std::string& text) {
  if (given.empty()) {
    text.clear();
    return MRI_OK;
  }
  if (given[0] != '@' && given.size() >= proto::kCacheConfigBytes)
    return fail("%s is longer than %u characters", origin, proto::kCacheConfigBytes - 1);
  sim::HierarchyConfig parsed;
  const std::string error = sim::parse_config_argument(given, parsed);
  if (!error.empty()) return fail("%s \"%s\": %s", origin, given.c_str(), error.c_str());
  std::string out = given[0] == '@' ? sim::format_config(parsed) : given;
  if (out.size() >= proto::kCacheConfigBytes)  // 9 canonical levels take about 450
    return fail("%s \"%s\": the configuration is longer than %u characters", origin, given.c_str(),
                proto::kCacheConfigBytes - 1);
  text = std::move(out);
  return MRI_OK;
}

int cache_configuration_for_load(std::string& text) {
  const char* env = std::getenv("MRI_CACHESIM_CONFIG");
  if (s.cache_config_set) {
    text = s.cache_config;  // resolved and checked by MRI_Set_Cache_Configuration
  } else if (segment_text_of(env ? env : "", "MRI_CACHESIM_CONFIG", text) != MRI_OK) {
    return MRI_Error;
  }
  // Read by the application (backends/cachesim/monitor/cache_worker.cpp),
  // which inherits this environment; a value it would not understand is
  // refused here.
  const char* async = std::getenv("MRI_CACHESIM_ASYNC");
  if (async && *async && std::strcmp(async, "0") != 0 && std::strcmp(async, "1") != 0)
    return fail("MRI_CACHESIM_ASYNC=\"%s\": 0 (simulate in the program's threads) or 1 (on a thread of its own)", async);
  if (const char* split = std::getenv("MRI_CACHESIM_SPLIT"); split && *split && std::strcmp(split, "auto") != 0) {
    char* end = nullptr;
    const unsigned long m = std::strtoul(split, &end, 10);
    if (*end != '\0' || !std::isdigit(static_cast<unsigned char>(*split)) || m > 64 || (m > 1 && (m & (m - 1)) != 0))
      return fail("MRI_CACHESIM_SPLIT=\"%s\": 0 or 1 (do not split the simulation), a power of two up to 64 "
                  "(the program's threads simulate 1/N of the lines), or auto (1/4 while that pays, as measured)",
                  split);
  }
  if (const char* after = std::getenv("MRI_CACHESIM_SPLIT_AFTER"); after && *after) {
    char* end = nullptr;
    const unsigned long k = std::strtoul(after, &end, 10);
    if (*end != '\0' || !std::isdigit(static_cast<unsigned char>(*after)) || k > 1000000)
      return fail("MRI_CACHESIM_SPLIT_AFTER=\"%s\": a number of hand-overs from 0 to 1000000", after);
  }
  if (const char* c = std::getenv("MRI_CACHESIM_CONDENSE");
      c && *c && std::strcmp(c, "0") != 0 && std::strcmp(c, "1") != 0 && std::strcmp(c, "auto") != 0)
    return fail("MRI_CACHESIM_CONDENSE=\"%s\": 0 (never), 1 (every batch handed to the simulation thread) or auto "
                "(while that thread is behind: the default)",
                c);
  if (const std::string e = sim::Hierarchy::vector_setting_error(); !e.empty()) return fail("%s", e.c_str());
  const char* log = std::getenv("MRI_CACHESIM_SPLIT_LOG");
  if (log && *log && std::strcmp(log, "0") != 0 && std::strcmp(log, "1") != 0)
    return fail("MRI_CACHESIM_SPLIT_LOG=\"%s\": 0 (quiet) or 1 (a line on the program's stderr for each window of "
                "the automatic split)", log);
  return MRI_OK;
}

int histogram_results(Request& r, bool active, void** results) {
  if (refresh_data_structures() != MRI_OK) return MRI_Error;
  r.hist_bins.clear();
  r.hist_specs.clear();
  const proto::View& v = s.view;
  proto::HistogramHead head{};
  if (r.histogram >= 0 && uint32_t(r.histogram) < proto::kMaxHistograms) head = *v.histogram_head(uint32_t(r.histogram));
  const bool applied = active && head.applied_generation == r.generation;
  proto::HistogramLayout layout;
  std::vector<uint64_t> values;
  if (applied) {
    // The layout the application applied, recomputed from the table: it
    // must agree with what the application published.
    const uint32_t want_index = r.data_index < 0 ? 0 : uint32_t(r.data_index) + 1;
    std::vector<proto::DataRecord> records;
    for (uint32_t i = 0; i < head.data_structures && i < s.data.size(); ++i) records.push_back(s.data[i].record);
    const char* why = head.data_structures > s.data.size() || head.data_index != want_index
                          ? "it names data structures the table does not have"
                          : proto::histogram_layout(records.data(), uint32_t(records.size()), head.data_index,
                                                    uint32_t(r.bins), layout);
    if (!why && (layout.bins != head.bins || layout.bin_bytes != head.bin_bytes)) why = "its bins disagree with the table";
    if (why) return fail("the application published a bad histogram layout for request %d: %s", r.id, why);
    values.assign(layout.bins, 0);
    std::vector<uint64_t> row(layout.bins);
    const uint32_t nthreads = thread_rows(v);
    for (uint32_t t = 0; t < nthreads; ++t) {
      bool wanted = r.active_objects.empty();
      for (const auto& a : r.active_objects) wanted |= a.type == MRI_PROCESS || (a.type == MRI_THREAD && a.id == int(t));
      if (!wanted) continue;
      read_thread_consistent(t, [&] {
        std::memcpy(row.data(), v.histogram_row(uint32_t(r.histogram), t), row.size() * sizeof(uint64_t));
      });
      for (uint32_t b = 0; b < layout.bins; ++b) values[b] += row[b];
    }
  }
  // Bin b covers packed bytes [b * W, min(T, (b + 1) * W)); its address
  // range runs from the lowest to one past the highest of those bytes'
  // addresses (data structures that overlap are packed one after the
  // other, so a later piece may lie below an earlier one).
  std::vector<std::pair<size_t, size_t>> lists;  // per bin: [first, last) into hist_specs
  for (uint32_t b = 0; b < layout.bins; ++b) {
    const uint64_t begin = uint64_t(b) * layout.bin_bytes;
    const uint64_t end = std::min(layout.total_bytes, begin + layout.bin_bytes);
    MRI_Histogram_Bin bin{};
    bin.value = values[b];
    const size_t first = r.hist_specs.size();
    bool have_begin = false;
    for (const proto::HistogramPiece& p : layout.pieces) {
      if (p.packed >= end || p.packed + p.bytes <= begin) continue;
      const unsigned long long from = p.address + (begin > p.packed ? begin - p.packed : 0);
      const unsigned long long to = p.address + std::min(p.bytes, end - p.packed);
      bin.address_begin = have_begin ? std::min(bin.address_begin, from) : from;
      bin.address_end = have_begin ? std::max(bin.address_end, to) : to;
      have_begin = true;
      r.hist_specs.push_back(s.data[p.data_index].spec);
    }
    lists.push_back({first, r.hist_specs.size()});
    r.hist_bins.push_back(bin);
  }
  for (size_t b = 0; b < r.hist_bins.size(); ++b) {  // pointers only now: hist_specs no longer grows
    r.hist_bins[b].data_structures.nr_Elements = int(lists[b].second - lists[b].first);
    r.hist_bins[b].data_structures.data_structure = r.hist_specs.data() + lists[b].first;
  }
  r.hist_result.kind = MRI_HISTOGRAM_REQUEST;
  r.hist_result.ri = r.ri;
  r.hist_result.active = applied;
  r.hist_result.nr_Elements = int(r.hist_bins.size());
  r.hist_result.element = r.hist_bins.empty() ? nullptr : r.hist_bins.data();
  *results = &r.hist_result;
  clear_error();
  return MRI_OK;
}

}  // namespace mri::tool

using namespace mri;
using namespace mri::tool;

extern "C" {

int MRI_Get_Data_Structures(MRI_Data_Structure_Table* table) {
  if (!table) return fail("table pointer is NULL");
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!s.loaded) return fail("no application loaded");
  if (refresh_data_structures() != MRI_OK) return MRI_Error;
  s.data_table.clear();
  for (const DataEntry& d : s.data) s.data_table.push_back(d.spec);
  table->data_structure = s.data_table.empty() ? nullptr : s.data_table.data();
  table->nr_Elements = int(s.data_table.size());
  clear_error();
  return MRI_OK;
}

int MRI_Find_Data_Structure(const char* name, MRI_Data_Structure_Spec* data_structure) {
  if (!name || !data_structure) return fail("name or result pointer is NULL");
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!s.loaded) return fail("no application loaded");
  if (refresh_data_structures() != MRI_OK) return MRI_Error;
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
                registered_names().c_str());
  if (count > 1)
    return fail("%d data structures are called \"%s\" (in different program units): name the unit in the "
                "MRI_Data_Structure_Spec (see MRI_Get_Data_Structures())", count, name);
  *data_structure = s.data[size_t(found)].spec;
  clear_error();
  return MRI_OK;
}

int MRI_Get_Data_Structure_Info(const MRI_Data_Structure_Spec* data_structure, MRI_Data_Structure_Info* info) {
  if (!data_structure || !info) return fail("data structure or info pointer is NULL");
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!s.loaded) return fail("no application loaded");
  const int i = data_structure_index(*data_structure);
  if (i < 0) return MRI_Error;
  const DataEntry& d = s.data[size_t(i)];
  info->data_structure = d.spec;
  info->address = d.record.address;
  info->size_bytes = d.record.bytes;
  info->file = s.files[d.record.file_id].c_str();
  clear_error();
  return MRI_OK;
}

int MRI_Set_Cache_Configuration(const char* config) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  const std::string given = config ? config : "";
  std::string text;
  if (segment_text_of(given, "cache configuration", text) != MRI_OK) return MRI_Error;
  s.cache_config = text;
  s.cache_config_set = true;
  clear_error();
  return MRI_OK;
}

int MRI_Get_Cache_Configuration(char* text, int bytes) {
  if (!text || bytes <= 0) return fail("text buffer is NULL or empty");
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!s.loaded || !s.view.base) return fail("no application loaded");
  const char* info = s.view.cache_info();
  const size_t len = strnlen(info, proto::kCacheConfigBytes - 1);  // the application may not terminate it
  const size_t n = std::min(len, size_t(bytes - 1));
  std::memcpy(text, info, n);
  text[n] = '\0';
  clear_error();
  return MRI_OK;
}

}  // extern "C"

// publication.cpp - the publication interface (paper section 6) and the
// application's static information. MRI_Get_System_Information's machine
// facts are in topology.cpp.
#include "publication.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "cache_simulator.h"
#include "counters.h"
#include "error.h"
#include "launch.h"
#include "mri_papi.h"
#include "mri_sync.h"
#include "request_aggregate.h"
#include "row_reader.h"

namespace mri::tool {
namespace {

struct RiDescription {
  MRI_Runtime_Information_Spec ri;
  const char* name;
  const char* description;
  const char* backend;
  int needs_counter;
};

constexpr RiDescription kRuntimeInformation[] = {
    {MRI_EXECUTION_TIME, "EXECUTION_TIME", "wall-clock time of a region instance, inclusive of subregions", "timer", 0},
    {MRI_NUMBER_OF_INSTANCES, "NUMBER_OF_INSTANCES", "number of executed region instances", "timer", 0},
    {MRI_REGION_EVENT, "REGION_EVENT", "a trace record at every region enter and exit", "timer", 0},
    {MRI_LC1_DATA_READ_MISS, "LC1_DATA_READ_MISS", "level 1 data cache read misses", "papi", 1},
    {MRI_LC1_DATA_WRITE_MISS, "LC1_DATA_WRITE_MISS", "level 1 data cache write misses", "papi", 1},
    {MRI_LC2_DATA_READ_MISS, "LC2_DATA_READ_MISS", "level 2 data cache read misses", "papi", 1},
    {MRI_LC2_DATA_WRITE_MISS, "LC2_DATA_WRITE_MISS", "level 2 data cache write misses", "papi", 1},
    {MRI_LC3_DATA_READ_MISS, "LC3_DATA_READ_MISS", "level 3 data cache read misses", "papi", 1},
    {MRI_LC3_DATA_WRITE_MISS, "LC3_DATA_WRITE_MISS", "level 3 data cache write misses", "papi", 1},
    {MRI_TOTAL_CYCLES, "TOTAL_CYCLES", "processor cycles", "papi", 1},
    {MRI_TOTAL_INSTRUCTIONS, "TOTAL_INSTRUCTIONS", "instructions completed", "papi", 1},
    {MRI_LC1_DATA_READ_HIT, "LC1_DATA_READ_HIT", "level 1 data cache read hits", "simulator", 0},
    {MRI_LC1_DATA_WRITE_HIT, "LC1_DATA_WRITE_HIT", "level 1 data cache write hits", "simulator", 0},
    {MRI_LC2_DATA_READ_HIT, "LC2_DATA_READ_HIT", "level 2 data cache read hits", "simulator", 0},
    {MRI_LC2_DATA_WRITE_HIT, "LC2_DATA_WRITE_HIT", "level 2 data cache write hits", "simulator", 0},
    {MRI_LC3_DATA_READ_HIT, "LC3_DATA_READ_HIT", "level 3 data cache read hits", "simulator", 0},
    {MRI_LC3_DATA_WRITE_HIT, "LC3_DATA_WRITE_HIT", "level 3 data cache write hits", "simulator", 0},
};

// Simulated cache events: every kind of request (mri.h, "Simulated cache
// events"); histograms need addresses, which only the simulator has.
constexpr int kSimulatedRequestKinds = (1 << MRI_AGGREGATE_REQUEST) | (1 << MRI_HISTOGRAM_REQUEST) |
                                       (1 << MRI_PROFILE_REQUEST) | (1 << MRI_TRACE_REQUEST);

constexpr int kCounterRequestKinds =
    (1 << MRI_AGGREGATE_REQUEST) | (1 << MRI_PROFILE_REQUEST) | (1 << MRI_TRACE_REQUEST);

// Events PAPI can count here, found once per process (each is added to a
// scratch event set and started, which takes a while).
const std::vector<std::string>& countable_events_cached() {
  static const std::vector<std::string> events = papi::countable_events();
  return events;
}

}  // namespace

const char* runtime_information_name(MRI_Runtime_Information_Spec ri) {
  for (const auto& d : kRuntimeInformation)
    if (d.ri == ri) return d.name;
  const char* name = registered_event_name(int(ri));
  return name ? name : "?";
}

const char* aggregation_operation_name(MRI_Aggregation_Operation op) {
  switch (op) {
    case MRI_SUM: return "SUM";
    case MRI_MIN: return "MIN";
    case MRI_MAX: return "MAX";
    case MRI_AVG: return "AVG";
    case MRI_COUNT: return "COUNT";
  }
  return "?";
}

const char* region_type_name(MRI_Region_Type type) {
  switch (type) {
    case MRI_REGION_PROGRAM: return "PROGRAM";
    case MRI_REGION_ROUTINE: return "ROUTINE";
    case MRI_REGION_LOOP: return "LOOP";
    case MRI_REGION_BLOCK: return "BLOCK";
    case MRI_REGION_PARALLEL: return "PARALLEL";
    case MRI_REGION_PARALLEL_LOOP: return "PARALLEL_LOOP";
    case MRI_REGION_PARALLEL_SECTIONS: return "PARALLEL_SECTIONS";
    case MRI_REGION_MASTER: return "MASTER";
    case MRI_REGION_FUNCTION: return "FUNCTION";
    case MRI_REGION_MPI: return "MPI";
    case MRI_REGION_TYPE_COUNT: break;
  }
  return "?";
}

int runtime_information_by_name(const char* name, MRI_Runtime_Information_Spec* ri) {
  const char* bare = std::strncmp(name, "MRI_", 4) == 0 ? name + 4 : name;
  for (const auto& d : kRuntimeInformation)
    if (std::strcmp(d.name, bare) == 0) {
      *ri = d.ri;
      clear_error();
      return MRI_OK;
    }
  // Any other name is a PAPI event: a preset (PAPI_TOT_INS) or a native
  // event (perf::TASK-CLOCK). Known events get an id even when this machine
  // cannot count them; requests for them then fail with the reason.
  std::string why;
  // The name as messages show it: a name of kilobytes would crowd out the reason.
  const std::string shown = std::strlen(name) > 80 ? std::string(name, 77) + "..." : std::string(name);
  if (!papi::built_with_papi())
    return fail("unknown runtime information \"%s\" (PAPI event names need PAPI, and this build has none)",
                shown.c_str());
  if (papi::check_event(name, why) == papi::EventCheck::kUnknown)
    return fail("unknown runtime information \"%s\": %s", shown.c_str(), why.c_str());
  *ri = MRI_Runtime_Information_Spec(register_event(name));
  clear_error();
  return MRI_OK;
}

int runtime_information_table(Session& s, MRI_Runtime_Information_Table* table) {
  s.ri_table.clear();
  s.ri_strings.clear();
  for (const auto& d : kRuntimeInformation) {
    MRI_Runtime_Information_Info i{};
    i.ri = d.ri;
    i.name = d.name;
    i.description = d.description;
    i.backend = d.backend;
    i.needs_counter = d.needs_counter;
    if (d.ri == MRI_EXECUTION_TIME || d.ri == MRI_NUMBER_OF_INSTANCES) {
      i.available = 1;
      i.reason = "";
      i.request_kinds = (1 << MRI_AGGREGATE_REQUEST) | (1 << MRI_PROFILE_REQUEST) | (1 << MRI_TRACE_REQUEST);
    } else if (d.ri == MRI_REGION_EVENT) {
      i.available = 1;
      i.reason = "";
      i.request_kinds = 1 << MRI_TRACE_REQUEST;
    } else if (is_cache_event(d.ri) && application_has_cache_simulator(s)) {
      // The loaded application simulates its caches: every cache event
      // comes from the simulator (backends/cachesim).
      i.available = 1;
      i.reason = "";
      i.backend = "simulator";
      i.needs_counter = 0;
      i.description = s.ri_strings.emplace_back(std::string(d.description) + " (simulated)").c_str();
      i.request_kinds = kSimulatedRequestKinds;
    } else if (is_cache_event(d.ri) && event_of(d.ri).empty()) {
      i.available = 0;
      i.reason = s.loaded ? "only the cache simulator counts it, and the loaded application is not built with the "
                            "cache-simulator backend"
                          : "only the cache simulator counts it: load an application built with the "
                            "cache-simulator backend";
      i.request_kinds = kSimulatedRequestKinds;
    } else {
      const std::string event = event_of(d.ri);
      std::string why;
      i.available = papi::check_event(event, why) == papi::EventCheck::kOk;
      i.reason = i.available ? "" : s.ri_strings.emplace_back("PAPI preset " + why).c_str();
      i.description = s.ri_strings.emplace_back(std::string(d.description) + " (" + event + ")").c_str();
      i.request_kinds = kCounterRequestKinds;
    }
    s.ri_table.push_back(i);
  }
  // Every other event PAPI can count here, and the ones named so far.
  for (const auto& event : countable_events_cached()) register_event(event);
  for (size_t k = 0;; ++k) {
    std::string event;
    if (!registered_event(k, event)) break;
    MRI_Runtime_Information_Info i{};
    i.ri = MRI_Runtime_Information_Spec(MRI_RUNTIME_INFORMATION_DYNAMIC_BASE + int(k));
    i.name = runtime_information_name(i.ri);
    i.description = s.ri_strings.emplace_back(papi::describe_event(event)).c_str();
    i.backend = "papi";
    i.needs_counter = 1;
    std::string why;
    i.available = papi::check_event(event, why) == papi::EventCheck::kOk;
    i.reason = i.available ? "" : s.ri_strings.emplace_back(why).c_str();
    i.request_kinds = kCounterRequestKinds;
    s.ri_table.push_back(i);
  }
  table->info = s.ri_table.data();
  table->nr_Elements = int(s.ri_table.size());
  clear_error();
  return MRI_OK;
}

int aggregation_table(Session& s, MRI_Runtime_Information_Spec ri, MRI_Aggregation_Table* table) {
  if (std::strcmp(runtime_information_name(ri), "?") == 0) return fail("unknown runtime information %d", int(ri));
  s.agg_table = aggregations_for(ri);
  table->aggregation = s.agg_table.empty() ? nullptr : s.agg_table.data();
  table->nr_Elements = int(s.agg_table.size());
  clear_error();
  return MRI_OK;
}

int active_object_table(Session& s, MRI_Active_Object_Table* table) {
  s.ao_table.clear();
  s.ao_table.push_back({MRI_PROCESS, int(s.pid)});
  const uint32_t n = thread_rows(s.view);
  for (uint32_t t = 0; t < n; ++t)
    if (sync::load(s.view.thread(t)->status) != uint32_t(proto::ThreadStatus::kUnused))
      s.ao_table.push_back({MRI_THREAD, int(t)});
  table->active_object = s.ao_table.data();
  table->nr_Elements = int(s.ao_table.size());
  clear_error();
  return MRI_OK;
}

int active_object_info(Session& s, const MRI_Active_Object_Spec* ao, MRI_Active_Object_Info* info) {
  std::memset(info, 0, sizeof *info);
  info->active_object = *ao;
  if (raw(ao->type) == MRI_PROCESS) {
    if (ao->id != s.pid) return fail("process %d is not the application (pid %d)", ao->id, int(s.pid));
    info->os_id = s.pid;
    info->alive = !child_exited(s);
    // The name it has now (prctl may change it); once it is gone, the one
    // it had last: /proc no longer has it, and a reaped pid may be reused.
    read_program_name(s);
    std::snprintf(info->name, sizeof info->name, "%s", s.program_name.c_str());
    clear_error();
    return MRI_OK;
  }
  if (raw(ao->type) == MRI_NODE) return fail("node-level monitoring is not available (single-node monitor)");
  if (raw(ao->type) != MRI_THREAD) return fail("unknown active object type %d", raw(ao->type));
  const uint32_t n = thread_rows(s.view);
  if (ao->id < 0 || uint32_t(ao->id) >= n) return fail("thread %d has not been seen (%u threads so far)", ao->id, n);
  const proto::ThreadRecord* rec = s.view.thread(uint32_t(ao->id));
  info->os_id = rec->os_tid;
  std::memcpy(info->name, rec->name, proto::kThreadNameBytes);
  info->name[proto::kThreadNameBytes - 1] = '\0';
  info->alive = sync::load(rec->status) == uint32_t(proto::ThreadStatus::kAlive) && !child_exited(s);
  clear_error();
  return MRI_OK;
}

int region_table(Session& s, MRI_Region_Table* table) {
  if (refresh_static_information(s) != MRI_OK) return MRI_Error;
  s.region_table.clear();
  for (const auto& r : s.regions) s.region_table.push_back(r.spec);
  table->region = s.region_table.empty() ? nullptr : s.region_table.data();
  table->nr_Elements = int(s.region_table.size());
  clear_error();
  return MRI_OK;
}

int region_info(Session& s, const MRI_Region_Spec* region, MRI_Region_Info* info) {
  if (refresh_static_information(s) != MRI_OK) return MRI_Error;
  for (const auto& r : s.regions)
    if (raw(r.spec.type) == raw(region->type) && r.spec.id.file_ID == region->id.file_ID &&
        r.spec.id.line_NR == region->id.line_NR) {
      info->region = r.spec;
      info->name = r.name.c_str();
      info->file = s.files[size_t(r.spec.id.file_ID)].c_str();
      clear_error();
      return MRI_OK;
    }
  return fail("the application has no region of type %d at file %d line %d", raw(region->type),
              region->id.file_ID, region->id.line_NR);
}

int find_region(Session& s, const char* name, MRI_Region_Spec* region) {
  if (refresh_static_information(s) != MRI_OK) return MRI_Error;
  int found = 0;
  for (const auto& r : s.regions)
    if (r.name == name) {
      if (found++ == 0) *region = r.spec;
    }
  if (found == 0) return fail("the application has no region named \"%s\"", name);
  if (found > 1) return fail("%d regions are named \"%s\": pick one from MRI_Get_Regions()", found, name);
  clear_error();
  return MRI_OK;
}

int overhead_calibration(Session& s, MRI_Overhead_Calibration* calibration) {
  const proto::Header* h = s.view.header();
  if (sync::load(h->app.state) == uint32_t(proto::AppState::kLoading))
    return fail("the application has not published its information yet");
  *calibration = MRI_Overhead_Calibration{};
  calibration->repetitions = int(h->overhead.repetitions);
  calibration->experiments = int(h->overhead.experiments);
  for (uint32_t k = 0; k < proto::kOverheadKinds; ++k) {
    const proto::OverheadValue& in = h->overhead.kind[k];
    MRI_Overhead_Value& out = calibration->kind[k];
    out.calibrated = sync::load(in.calibrated) == 1;
    std::snprintf(out.note, sizeof out.note, "%.*s", int(strnlen(in.reason, sizeof in.reason)), in.reason);
    if (!out.calibrated) continue;
    out.delta_inclusive = in.pair_ticks * s.ns_per_tick;
    out.delta_own = in.own_ticks * s.ns_per_tick;
    out.delta_exclusive = out.delta_inclusive - out.delta_own;
  }
  clear_error();
  return MRI_OK;
}

const char* file_name(Session& s, int file_ID) {
  if (!s.loaded || file_ID < 0 || size_t(file_ID) >= s.files.size()) {
    fail("no source file with id %d", file_ID);
    return nullptr;
  }
  clear_error();
  return s.files[size_t(file_ID)].c_str();
}

}  // namespace mri::tool

// counters.cpp - runtime information measured by PAPI counters: the
// paper's cache and cycle events mapped to PAPI presets, any other PAPI
// event registered by name, and the counter budget of section 3.1.
#include "counters.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "error.h"
#include "mri_papi.h"

namespace mri::tool {

namespace {

struct Preset {
  int ri;
  const char* event;
};

// The runtime information of paper section 7 and the PAPI preset that
// measures it.
constexpr Preset kPresets[] = {
    {MRI_LC1_DATA_READ_MISS, "PAPI_L1_LDM"}, {MRI_LC1_DATA_WRITE_MISS, "PAPI_L1_STM"},
    {MRI_LC2_DATA_READ_MISS, "PAPI_L2_LDM"}, {MRI_LC2_DATA_WRITE_MISS, "PAPI_L2_STM"},
    {MRI_LC3_DATA_READ_MISS, "PAPI_L3_LDM"}, {MRI_LC3_DATA_WRITE_MISS, "PAPI_L3_STM"},
    {MRI_TOTAL_CYCLES, "PAPI_TOT_CYC"},      {MRI_TOTAL_INSTRUCTIONS, "PAPI_TOT_INS"},
};

// PAPI events named by MRI_Runtime_Information_By_Name(): runtime
// information MRI_RUNTIME_INFORMATION_DYNAMIC_BASE + index. A deque, so
// names handed out stay put. Process-wide, as the ids it hands out: read
// by MRI_Runtime_Information_Name() from any thread, without Session::mu.
struct EventRegistry {
  std::mutex mu;
  std::deque<std::string> names;
};
EventRegistry g_events;

}  // namespace

std::string event_of(int ri) {
  for (const auto& p : kPresets)
    if (p.ri == ri) return p.event;
  const int k = ri - MRI_RUNTIME_INFORMATION_DYNAMIC_BASE;
  std::lock_guard<std::mutex> lock(g_events.mu);
  if (k >= 0 && size_t(k) < g_events.names.size()) return g_events.names[size_t(k)];
  return "";
}

bool is_counter(int ri) { return !event_of(ri).empty(); }

int register_event(const std::string& name) {
  for (const auto& p : kPresets)
    if (name == p.event) return p.ri;
  std::lock_guard<std::mutex> lock(g_events.mu);
  for (size_t k = 0; k < g_events.names.size(); ++k)
    if (g_events.names[k] == name) return MRI_RUNTIME_INFORMATION_DYNAMIC_BASE + int(k);
  g_events.names.push_back(name);
  return MRI_RUNTIME_INFORMATION_DYNAMIC_BASE + int(g_events.names.size() - 1);
}

const char* registered_event_name(int ri) {
  std::lock_guard<std::mutex> lock(g_events.mu);
  const int k = ri - MRI_RUNTIME_INFORMATION_DYNAMIC_BASE;
  if (k >= 0 && size_t(k) < g_events.names.size()) return g_events.names[size_t(k)].c_str();  // a deque: stays put
  return nullptr;
}

bool registered_event(size_t index, std::string& name) {
  std::lock_guard<std::mutex> lock(g_events.mu);
  if (index >= g_events.names.size()) return false;
  name = g_events.names[index];
  return true;
}

void forget_registered_events() {
  std::lock_guard<std::mutex> lock(g_events.mu);
  g_events.names.clear();
}

// Section 3.1: requests needing counters are limited by the counters
// there are. One event set per application thread serves every region, so
// the budget counts the distinct events of all requests in place at once.
int counter_budget(std::string& detail) {
  const int hardware = papi::hardware_counters();
  int budget = std::min<int>(hardware, int(papi::kMaxEvents));
  detail = std::to_string(hardware) + " counters of the CPU, at most " + std::to_string(papi::kMaxEvents) +
           " events per monitor";
  const char* env = std::getenv("MRI_COUNTER_BUDGET");
  if (env && *env) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(env, &end, 10);  // digits only: not " 2", "+2", nor beyond a long
    if (errno || !end || *end != '\0' || !std::isdigit(static_cast<unsigned char>(*env)) || v < 0) {
      detail = std::string("MRI_COUNTER_BUDGET=\"") + env + "\" is not a number of counters (0 or more)";
      return -1;
    }
    if (v < budget) {
      budget = int(v);
      detail += ", MRI_COUNTER_BUDGET=" + std::to_string(v);
    }
  }
  return budget;
}

// Counter rotation: the distinct events in the order their first request
// came, split into groups that fit the budget; iteration i measures group
// (i - 1) mod groups. Without rotation every request measures.
void rotate_counters(Session& s) {
  std::vector<std::string> events;
  for (const auto& [id, r] : s.requests)
    if (!r.event.empty() && std::find(events.begin(), events.end(), r.event) == events.end())
      events.push_back(r.event);
  std::string detail;
  const int budget = std::max(1, counter_budget(detail));  // an invalid budget failed the requests already
  const bool rotate = s.rotation && int(events.size()) > budget;
  const size_t groups = rotate ? (events.size() + size_t(budget) - 1) / size_t(budget) : 1;
  const size_t group = rotate ? size_t(s.iteration - 1) % groups : 0;
  for (auto& [id, r] : s.requests) {
    bool paused = false;
    if (rotate && !r.event.empty()) {
      const size_t index = size_t(std::find(events.begin(), events.end(), r.event) - events.begin());
      paused = index / size_t(budget) != group;
    }
    r.paused = paused;
    if (r.slot >= 0 && s.view.base) {
      proto::RequestRecord* rec = s.view.request(uint32_t(r.slot));
      rec->flags = (rec->flags & ~proto::kRequestPaused) | (paused ? proto::kRequestPaused : 0);
    }
    if (!paused && r.slot >= 0) r.measured.push_back(s.iteration);
  }
}

// Section 3.1: a request that needs a counter beyond the budget fails.
int check_budget(const Session& s, const Request& r) {
  if (!r.event.empty()) {
    std::vector<std::string> in_use;
    for (const auto& [id, q] : s.requests)
      if (!q.event.empty() && std::find(in_use.begin(), in_use.end(), q.event) == in_use.end())
        in_use.push_back(q.event);
    if (std::find(in_use.begin(), in_use.end(), r.event) == in_use.end() && !s.rotation) {
      std::string detail;
      const int budget = counter_budget(detail);
      if (budget < 0) return fail("%s", detail.c_str());
      if (int(in_use.size()) + 1 > budget) {
        std::string used;
        for (const auto& e : in_use) used += (used.empty() ? "" : ", ") + e;
        return fail("no counter left for %s: the counter budget is %d (%s) and %s; delete a request, or "
                    "measure it in another run (MRI_Application_Finish, MRI_Application_Load), or turn "
                    "on counter rotation (MRI_Set_Counter_Rotation)",
                    r.event.c_str(), budget, detail.c_str(),
                    used.empty() ? "there are none" : ("in use: " + used).c_str());
      }
    }
  }
  return MRI_OK;
}

int set_counter_rotation(Session& s, bool enabled) {
  if (!enabled && s.rotation) {
    std::vector<std::string> events;
    for (const auto& [id, r] : s.requests)
      if (!r.event.empty() && std::find(events.begin(), events.end(), r.event) == events.end()) events.push_back(r.event);
    std::string detail;
    const int budget = counter_budget(detail);
    if (int(events.size()) > budget)
      return fail("cannot turn counter rotation off: %zu counter events are requested and the budget is %d (%s); "
                  "delete requests first", events.size(), budget, detail.c_str());
  }
  s.rotation = enabled;
  clear_error();
  return MRI_OK;
}

void fill_counter_information(MRI_HW_Info* info) {
  std::string why;
  if (papi::init(why)) {
    info->nr_Hardware_Counters = papi::hardware_counters();
    const std::string tables = papi::forced_cpu_tables();
    // On a machine whose kernel has no CPU PMU, PAPI's counters are its
    // tables' (6 for amd64_fam19h_zen4): say so.
    std::snprintf(info->counter_source, sizeof info->counter_source, "PAPI %s%s%s%s", papi::version().c_str(),
                  tables.empty() ? "" : ", CPU events of ", tables.c_str(),
                  papi::cpu_pmu_absent() ? "; no CPU PMU" : "");
  } else {
    info->nr_Hardware_Counters = 0;
    std::snprintf(info->counter_source, sizeof info->counter_source, "absent: %s",
                  papi::built_with_papi() ? "PAPI failed to initialise" : "built without PAPI");
  }
}

}  // namespace mri::tool

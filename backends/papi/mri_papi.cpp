#include "mri_papi.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <strings.h>
#include <vector>

#ifdef MRI_HAVE_PAPI
#include <papi.h>
#endif
#ifdef MRI_HAVE_LIBPFM
#include <cpuid.h>
#include <perfmon/pfmlib.h>
#endif

namespace mri::papi {

#ifdef MRI_HAVE_PAPI

namespace {

unsigned long thread_id() { return static_cast<unsigned long>(pthread_self()); }

std::once_flag g_once;
bool g_ok = false;
std::string g_why;

// Why PAPI's perf_event component is off ("" when it is on): then neither
// the CPU's events nor the kernel's own (perf::TASK-CLOCK ...) exist.
std::string g_component_off;
// The CPU event tables chosen for libpfm4 when it does not know this CPU
// ("" when it does, or when the user chose with LIBPFM_FORCE_PMU).
std::string g_forced_pmu;
std::string g_cpu;

std::string papi_error(int code) { return std::string(PAPI_strerror(code)) + " (PAPI error " + std::to_string(code) + ")"; }

// No PAPI event name has PAPI_HUGE_STR_LEN (1024) characters or more
// (PAPI_event_info_t::symbol holds fewer). Such names must not reach
// PAPI_event_name_to_code: its parser copies them into a fixed buffer, and
// from about 8 KiB on glibc's fortify check aborts the process.
bool too_long_for_papi(const std::string& name) { return name.size() >= PAPI_HUGE_STR_LEN; }

// The kernel's software events that happen in the kernel itself, not in
// the program's code: context switches (also between cgroups) and
// migrations between CPUs. PAPI
// counts in user mode unless told otherwise, and there such an event never
// happens: it reads 0 (20 sleeps, 0 context switches). They are counted
// in both modes instead (`:u=1:k=1`), where the kernel allows this user
// to count kernel events (root or CAP_PERFMON, or kernel.perf_event_paranoid
// at 1 or less); elsewhere they are unavailable, with that reason. A name
// with modifiers of its own (perf::CS:u=1) is counted as written.
bool happens_in_the_kernel(const std::string& name) {
  static const char* const kKernelSide[] = {"CONTEXT-SWITCHES", "CS",         "PERF_COUNT_SW_CONTEXT_SWITCHES",
                                            "CPU-MIGRATIONS",   "MIGRATIONS", "PERF_COUNT_SW_CPU_MIGRATIONS",
                                            "CGROUP-SWITCHES",  "PERF_COUNT_SW_CGROUP_SWITCHES"};
  constexpr std::string_view kPrefix = "perf::";
  if (name.size() <= kPrefix.size() || strncasecmp(name.c_str(), kPrefix.data(), kPrefix.size()) != 0) return false;
  const char* event = name.c_str() + kPrefix.size();
  for (const char* k : kKernelSide)
    if (strcasecmp(event, k) == 0) return true;
  return false;
}

// The name given to PAPI for `name` (see happens_in_the_kernel).
std::string counted_name(const std::string& name) {
  return happens_in_the_kernel(name) ? name + ":u=1:k=1" : name;
}

// kernel.perf_event_paranoid, or -1 when it cannot be read.
int perf_event_paranoid() {
  int level = -1;
  if (FILE* f = std::fopen("/proc/sys/kernel/perf_event_paranoid", "r")) {
    if (std::fscanf(f, "%d", &level) != 1) level = -1;
    std::fclose(f);
  }
  return level;
}

#ifdef MRI_HAVE_LIBPFM
// PAPI's perf_event component starts only when libpfm4 has event tables for
// the CPU's model. A libpfm4 older than the CPU (Debian 12's 4.13 and AMD
// Zen 5, family 0x1a) leaves the component off, and with it the kernel's
// software events, which need no tables at all. So, before PAPI starts and
// unless the user chose with LIBPFM_FORCE_PMU, ask libpfm4 whether it knows
// the CPU; if not, have it use the newest tables it has for the CPU's
// vendor (CPU events then go by that model's names and encodings; where
// they do not exist here, counting them fails and is reported so).
void choose_cpu_tables() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  char vendor[13] = {};
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    std::memcpy(vendor, &b, 4);
    std::memcpy(vendor + 4, &d, 4);
    std::memcpy(vendor + 8, &c, 4);
  }
  unsigned family = 0, model = 0;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    family = (a >> 8) & 0xf;
    model = (a >> 4) & 0xf;
    if (family == 0xf) family += (a >> 20) & 0xff;
    if (family >= 6) model |= ((a >> 16) & 0xf) << 4;
  }
  g_cpu = std::string(vendor) + " family " + std::to_string(family) + " model " + std::to_string(model);
  if (std::getenv("LIBPFM_FORCE_PMU")) return;
  if (pfm_initialize() != PFM_SUCCESS) return;
  bool known = false;
  std::vector<std::string> names;
  for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; ++p) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (pfm_get_pmu_info(pfm_pmu_t(p), &info) != PFM_SUCCESS || info.type != PFM_PMU_TYPE_CORE) continue;
    if (info.is_present) known = true;
    if (info.name) names.emplace_back(info.name);
  }
  pfm_terminate();  // PAPI initialises libpfm4 again, reading the choice
  if (known) return;
  // Newest first. Not Intel's architectural tables (ix86arch) before a
  // model's: they take their counter count from the CPU, which a virtual
  // machine without a PMU gives as 0, and PAPI then keeps the component
  // off (seen on an Intel family 6 model 207 guest); a model's tables have
  // their counts built in.
  static const char* const kAmd[] = {"amd64_fam1ah_zen5", "amd64_fam19h_zen4", "amd64_fam19h_zen3",
                                     "amd64_fam17h_zen2", nullptr};
  static const char* const kIntel[] = {"spr", "icx", "skx", "ix86arch", nullptr};
  const char* const* wanted = std::strcmp(vendor, "AuthenticAMD") == 0   ? kAmd
                              : std::strcmp(vendor, "GenuineIntel") == 0 ? kIntel
                                                                         : nullptr;
  for (; wanted && *wanted; ++wanted)
    for (const auto& have : names)
      if (have == *wanted) {
        g_forced_pmu = *wanted;
        setenv("LIBPFM_FORCE_PMU", *wanted, 1);
        return;
      }
}
#else
void choose_cpu_tables() {}
#endif

// Why the perf_event component is off, from PAPI ("" when it is on).
std::string component_off() {
  const int cid = PAPI_get_component_index("perf_event");
  if (cid < 0) return "PAPI has no perf_event component";
  const PAPI_component_info_t* info = PAPI_get_component_info(cid);
  if (!info || !info->disabled) return "";
  std::string why = std::string("PAPI's perf_event component is off: ") + info->disabled_reason;
  if (std::strstr(info->disabled_reason, "no default PMU"))
    why += " (libpfm4 does not know this CPU, " + g_cpu + "; LIBPFM_FORCE_PMU names tables it has)";
  return why;
}

}  // namespace

bool built_with_papi() { return true; }

bool init(std::string& why) {
  std::call_once(g_once, [] {
    choose_cpu_tables();
    const int v = PAPI_library_init(PAPI_VER_CURRENT);
    // libpfm4 read the choice; the program's environment is its own again.
    if (!g_forced_pmu.empty()) unsetenv("LIBPFM_FORCE_PMU");
    if (v != PAPI_VER_CURRENT) {
      g_why = v > 0 ? "PAPI library version mismatch" : "PAPI_library_init failed: " + papi_error(v);
      return;
    }
    const int t = PAPI_thread_init(thread_id);
    if (t != PAPI_OK) {
      g_why = "PAPI_thread_init failed: " + papi_error(t);
      return;
    }
    g_component_off = component_off();
    g_ok = true;
  });
  if (!g_ok) why = g_why;
  return g_ok;
}

std::string version() {
  std::string why;
  if (!init(why)) return "unavailable: " + why;
  const int v = PAPI_get_opt(PAPI_LIB_VERSION, nullptr);
  char text[32];
  std::snprintf(text, sizeof text, "%d.%d.%d.%d", PAPI_VERSION_MAJOR(v), PAPI_VERSION_MINOR(v),
                PAPI_VERSION_REVISION(v), PAPI_VERSION_INCREMENT(v));
  return text;
}

std::string forced_cpu_tables() {
  std::string why;
  init(why);
  return g_forced_pmu;
}

int hardware_counters() {
  std::string why;
  if (!init(why)) return 0;
  const int cid = PAPI_get_component_index("perf_event");
  const int n = PAPI_num_cmp_hwctrs(cid >= 0 ? cid : 0);
  return n > 0 ? n : 0;
}

bool cpu_pmu_absent() {
#if defined(__x86_64__) || defined(__i386__)
  const std::string devices = "/sys/bus/event_source/devices/";
  if (access(devices.c_str(), F_OK) != 0) return false;
  for (const char* pmu : {"cpu", "cpu_core", "cpu_atom"})
    if (access((devices + pmu).c_str(), F_OK) == 0) return false;
  return true;
#else
  return false;
#endif
}

EventCheck check_event(const std::string& name, std::string& why) {
  if (!init(why)) return EventCheck::kUnavailable;
  if (too_long_for_papi(name)) {
    why = "PAPI knows no event of " + std::to_string(name.size()) + " characters (its names are shorter than " +
          std::to_string(PAPI_HUGE_STR_LEN) + ")";
    return EventCheck::kUnknown;
  }
  int code = 0;
  if (PAPI_event_name_to_code(name.c_str(), &code) != PAPI_OK) {
    why = "PAPI knows no event \"" + name + "\" (see mri info or papi_avail / papi_native_avail)";
    if (!g_component_off.empty()) why += "; " + g_component_off;
    return EventCheck::kUnknown;
  }
  if (happens_in_the_kernel(name) && PAPI_event_name_to_code(counted_name(name).c_str(), &code) != PAPI_OK) {
    why = name + " cannot be counted on this machine (PAPI takes no kernel-mode modifier for it)";
    return EventCheck::kUnavailable;
  }
  if (PAPI_query_event(code) != PAPI_OK) {
    why = name + " cannot be counted on this machine (PAPI: the event does not exist here)";
    return EventCheck::kUnavailable;
  }
  int es = PAPI_NULL;
  int rc = PAPI_create_eventset(&es);
  if (rc == PAPI_OK) rc = PAPI_add_event(es, code);
  if (rc == PAPI_OK) {
    rc = PAPI_start(es);
    long long v = 0;
    if (rc == PAPI_OK) PAPI_stop(es, &v);
  }
  if (es != PAPI_NULL) {
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
  }
  if (rc != PAPI_OK && happens_in_the_kernel(name) && rc == PAPI_EPERM) {
    const int paranoid = perf_event_paranoid();
    why = name + " happens inside the kernel, and this user may not count kernel events" +
          (paranoid >= 0 ? " (kernel.perf_event_paranoid is " + std::to_string(paranoid) + ")" : std::string()) +
          ": root, CAP_PERFMON or kernel.perf_event_paranoid at 1 or less allows it; counted in user mode (" + name +
          ":u=1) it reads 0";
    return EventCheck::kUnavailable;
  }
  if (rc != PAPI_OK) {
    why = name + " cannot be counted on this machine (PAPI: " + papi_error(rc) + ")";
    return EventCheck::kUnavailable;
  }
  return EventCheck::kOk;
}

std::string describe_event(const std::string& name) {
  std::string why;
  int code = 0;
  if (!init(why) || too_long_for_papi(name) || PAPI_event_name_to_code(name.c_str(), &code) != PAPI_OK) return "";
  PAPI_event_info_t info;
  if (PAPI_get_event_info(code, &info) != PAPI_OK) return "";
  return info.long_descr[0] ? info.long_descr : info.short_descr;
}

std::vector<std::string> countable_events() {
  std::vector<std::string> out;
  std::string why;
  if (!init(why)) return out;
  int code = PAPI_PRESET_MASK;
  if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK) {
    do {
      char name[PAPI_MAX_STR_LEN];
      if (PAPI_event_code_to_name(code, name) == PAPI_OK && check_event(name, why) == EventCheck::kOk)
        out.emplace_back(name);
    } while (PAPI_enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
  }
  const int cid = PAPI_get_component_index("perf_event");
  if (cid >= 0) {
    code = PAPI_NATIVE_MASK;
    if (PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cid) == PAPI_OK) {
      do {
        char name[PAPI_MAX_STR_LEN];
        if (PAPI_event_code_to_name(code, name) == PAPI_OK && check_event(name, why) == EventCheck::kOk)
          out.emplace_back(name);
      } while (PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cid) == PAPI_OK);
    }
  }
  return out;
}

bool build(EventSet& set, const std::vector<std::string>& names, std::string& why) {
  destroy(set);
  if (names.empty()) return true;
  if (!init(why)) return false;
  int es = PAPI_NULL;
  int rc = PAPI_create_eventset(&es);
  if (rc != PAPI_OK) {
    why = "PAPI_create_eventset: " + papi_error(rc);
    return false;
  }
  for (const auto& name : names) {
    rc = PAPI_add_named_event(es, counted_name(name).c_str());
    if (rc != PAPI_OK) {
      why = "cannot count " + name + ": " + papi_error(rc);
      PAPI_cleanup_eventset(es);
      PAPI_destroy_eventset(&es);
      return false;
    }
  }
  rc = PAPI_start(es);
  if (rc != PAPI_OK) {
    why = "PAPI_start: " + papi_error(rc);
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
    return false;
  }
  set.handle = es;
  set.n = uint32_t(names.size());
  return true;
}

bool read(const EventSet& set, long long* values) { return PAPI_read(set.handle, values) == PAPI_OK; }

void destroy(EventSet& set) {
  if (set.n == 0 && set.handle == -1) return;
  int es = set.handle;
  if (es != PAPI_NULL) {
    long long scratch[kMaxEvents];
    PAPI_stop(es, scratch);
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
  }
  set.handle = -1;
  set.n = 0;
}

void unregister_thread() {
  if (g_ok) PAPI_unregister_thread();
}

#else  // no PAPI at build time

namespace {
const char* kAbsent = "this build has no PAPI support (built with MRI_USE_PAPI=OFF or without libpapi-dev)";
}

bool built_with_papi() { return false; }
bool init(std::string& why) {
  why = kAbsent;
  return false;
}
std::string version() { return std::string("absent: ") + kAbsent; }
std::string forced_cpu_tables() { return ""; }
int hardware_counters() { return 0; }
bool cpu_pmu_absent() { return false; }
EventCheck check_event(const std::string& name, std::string& why) {
  why = name + " needs PAPI, and " + kAbsent;
  return EventCheck::kUnavailable;
}
std::string describe_event(const std::string&) { return ""; }
std::vector<std::string> countable_events() { return {}; }
bool build(EventSet& set, const std::vector<std::string>& names, std::string& why) {
  set = EventSet{};
  if (names.empty()) return true;
  why = kAbsent;
  return false;
}
bool read(const EventSet&, long long*) { return false; }
void destroy(EventSet& set) { set = EventSet{}; }
void unregister_thread() {}

#endif

}  // namespace mri::papi

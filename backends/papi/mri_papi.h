// mri_papi.h - the PAPI backend: hardware and software counters by name.
//
// A thin layer over PAPI used by both sides: the tool checks at request
// time that an event exists and can be counted on this machine; the
// application keeps one event set per thread with every event the current
// requests need and reads it at the enter and exit of regions that carry
// counter requests. Built without PAPI (MRI_HAVE_PAPI undefined) every
// function reports that PAPI is absent.
//
// Thread safety: init() once per process (any thread); EventSet functions
// only from the thread that owns the set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mri::papi {

inline constexpr uint32_t kMaxEvents = 8;  // distinct counter events the monitor uses at once

// True when the library was built with PAPI.
bool built_with_papi();

// Initialises PAPI for a threaded process. Returns false and why on failure.
bool init(std::string& why);

// PAPI's version, e.g. "7.0.0.0", or why there is none.
std::string version();

// The libpfm4 event tables chosen for PAPI's start-up because libpfm4 does
// not know this CPU ("amd64_fam19h_zen4": the newest it has for the CPU's
// vendor; mri_papi.cpp, choose_cpu_tables), "" when none were chosen.
std::string forced_cpu_tables();

// Counters of the CPU component (perf_event), 0 when unknown. PAPI takes
// them from its event tables, whether or not the kernel can count them.
int hardware_counters();

// Whether the kernel says it has no performance monitoring unit for the
// CPU (an x86 machine whose /sys/bus/event_source/devices holds no cpu,
// cpu_core or cpu_atom: a virtual machine without a virtual PMU, whose
// kernel counts software events only). False where it cannot tell.
bool cpu_pmu_absent();

enum class EventCheck { kOk, kUnknown, kUnavailable };

// Does `name` name an event PAPI knows, and can this process count it now?
// (Adds it to a scratch event set and starts it.) `why` explains a failure.
EventCheck check_event(const std::string& name, std::string& why);

// A short description of the event ("" if none).
std::string describe_event(const std::string& name);

// Every event PAPI can count here: available presets, then the CPU
// component's native events that can be added and started.
std::vector<std::string> countable_events();

struct EventSet {
  int handle = -1;  // PAPI_NULL
  uint32_t n = 0;   // events counting, 0 when none
};

// (Re)builds `set` with `names` and starts it. On failure the set is empty
// and `why` says which event failed and why.
bool build(EventSet& set, const std::vector<std::string>& names, std::string& why);

// Reads the running counters into values[0..set.n).
bool read(const EventSet& set, long long* values);

// Stops and destroys the set (before the thread ends).
void destroy(EventSet& set);

// Forgets the calling thread in PAPI (at thread exit).
void unregister_thread();

}  // namespace mri::papi

// source.h - the seam where a measurement source plugs into the MCC.
//
// A measurement source is what gives a request its values: the monitor's
// clock (EXECUTION_TIME), the instances themselves (INSTANCES), counters
// read through PAPI, the cache simulator. Each one is an ops table,
// MeasurementSource below, listed once in source_list.cpp. The core (plans,
// hot path, end of monitoring) calls sources only through these tables and
// knows none of them by name.
//
// Three ways to measure (MeasurementSource::kind):
//  - kTime, kCount: values the core's frames give themselves (the clock at
//    enter and exit, the instance); the source only validates the request.
//  - kReading: the source keeps per-thread readings (counters) that the
//    core reads at the enter and exit of regions whose plan needs them
//    (read()); the increase is the instance's value, accumulated by the
//    core into aggregates, profiles and trace value records like time.
//  - kOwned: the source measures the request itself. It compiles all its
//    requests at once (compile_owned), acknowledges them, and names the
//    regions whose enters and exits must call its enter() and exit().
// (kEvent: trace records at every enter and exit, written by the core.)
//
// Every member but `name`, `measures` and `kind` is optional (nullptr:
// not needed). Threads: the plan members run on the control thread while every
// application thread is quiescent; the hot-path members on the
// application thread inside its in_slow protection.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "mri_protocol.h"

namespace mri::monitor {

struct ThreadState;

// What the core does with a request's values.
enum class ValueKind : uint8_t {
  kTime = 0,     // the instance's duration on the monitor's clock (ticks): compensable
  kCount = 1,    // 1 per instance (a profile's inclusive value: the profiled instances of its subtree)
  kReading = 2,  // the increase of a source's reading over the instance
  kEvent = 3,    // trace requests: a record at every enter and exit, no value
  kOwned = 4,    // the source measures the request itself
};

// Readings a frame can hold (all reading sources together).
inline constexpr uint32_t kMaxReadings = 8;
// Sources that can be registered (bit masks of uint8_t).
inline constexpr uint32_t kMaxSources = 8;

// One active request record as the plan compiler sees it: copied once from
// the segment (the tool may rewrite it any time), not yet validated.
struct RequestInput {
  uint32_t slot = 0;
  proto::RequestRecord record{};
  // Its results start anew: a new generation, or the last one was rejected.
  bool fresh = false;
  // The published regions it names (every one with kRequestAllRegions).
  std::vector<uint32_t> regions;
};

// A source's answer to a request.
struct Claim {
  ValueKind kind = ValueKind::kTime;
  uint16_t reading = 0;       // kReading: index among the source's own readings (reading_names)
  bool compensable = false;   // the monitor's overhead is removed from the value (time)
  // Why the request is refused, nullptr when it is accepted. `corrupt`: no
  // tool writes such a record (counted in AppControl::bad_requests); else
  // the request is valid but cannot be measured here (last_error says why).
  const char* refused = nullptr;
  bool corrupt = false;
};

// What sources may look at while plans are compiled.
struct ReleaseContext {
  const proto::View* view = nullptr;
  uint32_t regions = 0;  // published regions
  uint32_t threads = 0;  // thread rows in use
};

struct MeasurementSource {
  const char* name = nullptr;
  // Whether this source measures requests of proto::Metric `metric`.
  bool (*measures)(uint32_t metric) = nullptr;
  // How its values are measured.
  ValueKind kind = ValueKind::kTime;

  // --- plans (control thread, the application's threads quiescent) ---
  // Before any request of a release is claimed.
  void (*begin_release)(const ReleaseContext& ctx) = nullptr;
  // Validates one request of a metric it measures (not kOwned) and says
  // how. Without it every such request is accepted with `kind`.
  Claim (*claim)(const RequestInput& request, const ReleaseContext& ctx) = nullptr;
  // kOwned: every request it claimed so, after the others were claimed.
  // Acknowledges each in the segment (applied generation and status) and
  // sets hooked[region] for the regions whose enter() and exit() it needs.
  void (*compile_owned)(std::vector<RequestInput>& requests, const ReleaseContext& ctx, std::vector<uint8_t>& hooked) = nullptr;

  // --- readings (kReading) ---
  // The readings the claims of this release asked for, in index order
  // (stable until the next release). The core hands the list to each
  // thread's prepare_thread() when it changed.
  const std::vector<std::string>& (*reading_names)() = nullptr;
  // The owning thread (at its first event after the list changed, or the
  // overhead calibration on its private state) sets up `state` for the
  // current list; false and why when it cannot (the thread then reads
  // nothing: its instances count for no reading request).
  bool (*prepare_thread)(void*& state, std::string& why) = nullptr;
  // The current readings into out[0 .. the list's size). False when they
  // cannot be read now (the instance then counts for no reading request).
  bool (*read)(void* state, int64_t* out) = nullptr;
  // The thread ends (its own thread) or the calibration is done with it.
  void (*release_thread)(void*& state) = nullptr;

  // --- hot path (application thread, inside the monitor) ---
  // Before the timestamp of every monitored enter and exit, while the
  // source asked for it (set_before_event). Outside the thread's in_slow
  // protection: it may reach the segment only through its own state.
  void (*before_event)() = nullptr;
  // Enter and exit of a region the source hooked (compile_owned).
  void (*enter)(ThreadState* ts, uint32_t region) = nullptr;
  void (*exit)(ThreadState* ts, uint32_t region) = nullptr;

  // --- the end of instances and of monitoring ---
  // The thread's instances the source keeps open end at `now`, innermost
  // first (the thread's end, the end of monitoring). own_thread: `ts` is
  // the calling thread.
  void (*end_open)(ThreadState* ts, uint64_t now, bool own_thread) = nullptr;
  // The end of monitoring, before the instances end: whatever the source
  // counts stops changing, so that the values the end gives are of one moment.
  void (*stop_recording)() = nullptr;
  // The end of monitoring or a detach: no more work for the tool.
  void (*finish)() = nullptr;
  // In a fork()ed child, which is not the monitored process.
  void (*after_fork)() = nullptr;
  // At the publication of the static information: what the program offers
  // (AppControl fields the source owns).
  void (*publish)() = nullptr;
  // Work of the source in flight in some thread (the end's wait for the
  // threads to park counts it as the program running).
  uint32_t (*busy)() = nullptr;
  // A thread of the source's own (kernel thread id), not the program's; 0: none.
  pid_t (*own_thread_tid)() = nullptr;
  // The end's wait gave up after `gave_up_after_ms` on `late` threads
  // still running program code, or passed `passed` threads that ran during
  // it and then not for `quiet_ms`: what that costs the source's results,
  // said in last_error.
  void (*threads_not_waited_for)(uint32_t late, uint32_t passed, uint32_t gave_up_after_ms, uint32_t quiet_ms) = nullptr;
  // Data structure `record` (published table index) ended.
  void (*data_ended)(uint32_t record) = nullptr;
  // What the calling thread recorded so far counts now (before a data
  // structure ends).
  void (*sync_thread)() = nullptr;
};

// Every source, in registry order, and how many: defined by
// MRI_SOURCE_LIST in source_list.cpp (the unit tests and the fuzz target
// link lists of their own). Plain constant arrays, not a function with a
// guarded static: the hot path looks sources up by index (hot_path.cpp).
extern const MeasurementSource* const registered_sources[];
extern const uint32_t registered_source_count;
// At most kMaxSources: a source's index is its bit in 8-bit masks
// (RegionPlan::hooks, Global::before_event_sources).
#define MRI_SOURCE_LIST(...)                                                                          \
  extern const MeasurementSource* const registered_sources[] = {__VA_ARGS__};                       \
  extern const uint32_t registered_source_count = uint32_t(std::size(registered_sources));          \
  static_assert(std::size(registered_sources) <= kMaxSources, "a source's index is a bit of a uint8_t")
// sources.cpp: the registered sources, in registry order (index = the bit
// of a source in RegionPlan::hooks and Global::before_event_sources).
uint32_t source_count();
const MeasurementSource& source(uint32_t index);
// The source that measures `metric`, or -1.
int32_t source_for_metric(uint32_t metric);

// Calls fn(index, source) for each registered source with member `m` set.
template <typename Member, typename Fn>
inline void for_each_source_with(Member MeasurementSource::*m, Fn&& fn) {
  const uint32_t n = source_count();
  for (uint32_t i = 0; i < n; ++i)
    if (source(i).*m) fn(i, source(i));
}

// A source asks for (or no longer needs) its before_event() at every
// monitored event (source_services.cpp).
void set_before_event(const MeasurementSource& s, bool on);

}  // namespace mri::monitor

// targets.h - the cache requests in place, as targets, and each thread's
// part of them: what targets.cpp builds at a release and instances.cpp
// updates at region enters and exits.
//
// Concurrency: targets are rebuilt by the control thread while every
// application thread is quiescent (cache_apply); each thread's CacheThread
// is touched by that thread inside its in_slow protection, and by the
// control thread only during cache_apply.
#pragma once

#include <cstdint>
#include <vector>

#include "cache_internal.h"
#include "cachesim.h"
#include "mri_histogram.h"
#include "mri_protocol.h"
#include "services.h"

namespace mri::monitor::cachesim {

// One cache request in place.
struct Target {
  uint64_t key;  // (request slot << 32) | generation: survives releases unchanged
  uint32_t slot;
  bool histogram;
  uint32_t hist_slot;
  uint32_t bins;  // histogram: bins in use
  sim::Event event;
  bool whole;  // aggregate over every address (no data structure)
  bool profile;   // a profile request: rows of `slice`
  bool callpath;  // and its edges
  uint32_t slice;
  bool trace;     // a trace request: a value record per traced instance
  std::vector<uint8_t> root;  // trace: the requested regions (the others are traced inside them)
  std::vector<uint64_t> threads;  // trace: thread mask; empty: every thread
  proto::HistogramLayout layout;  // the data structures' pieces (aggregate: one piece, one bin)
};

// An open instance of a profile target's region.
struct OpenInstance {
  uint32_t region;
  uint64_t start;  // the monitors' total at the enter
  uint64_t child;  // counts of the target's instances directly inside
};

// One target on one thread.
struct TargetThread {
  uint64_t key = 0;
  std::vector<int> monitors;     // one per piece (or one for every address)
  std::vector<uint64_t> starts;  // aggregate: totals at the enter of each open instance
  std::vector<OpenInstance> open;  // profile: the open instances, innermost last
  std::vector<uint32_t> regions;   // trace: the region of each entry of `starts`
  uint32_t depth = 0;            // open instances of the target's regions (trace: of its requested regions)
};

struct CacheThread {
  std::vector<TargetThread> targets;  // parallel to g_targets
  std::vector<uint64_t> piece_bins, sums;  // histogram scratch, kMaxHistogramBins each
};

// targets.cpp. Allocated at the first apply and never destroyed, like the
// core's state: threads may still run monitored code while the process
// runs its static destructors (and the per-thread states stay reachable
// for the leak checker).
extern std::vector<Target>* g_targets;
extern std::vector<std::vector<uint32_t>>* g_region_targets;  // [region] -> indices into *g_targets
extern std::vector<CacheThread*>* g_threads;                  // [thread index]

// Trace targets: whether thread `index` is traced; and the start of an
// instance outside the requested regions' instances.
inline bool traced(const Target& t, uint32_t index) {
  return in_thread_mask(t.threads.empty() ? nullptr : t.threads.data(), index);
}
inline constexpr uint64_t kNotTraced = ~uint64_t{0};

// The thread's monitors for one target, disabled. False (noted) when the
// simulator refuses one.
bool create_monitors(sim::Hierarchy* h, const Target& t, uint32_t thread, TargetThread& tt);

}  // namespace mri::monitor::cachesim

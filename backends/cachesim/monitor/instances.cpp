// instances.cpp - the instances of regions with cache targets: at the
// enter a target's monitors count and its start is noted, at the exit the
// difference is the instance's value (aggregate slot, profile and edge
// rows, trace value record; a histogram's bins when its last instance
// ends), and at the end of monitoring or of a thread the instances still
// open end as if their exits ran.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cache_internal.h"
#include "cachesim.h"
#include "results.h"
#include "services.h"
#include "targets.h"

namespace mri::monitor::cachesim {
namespace {

// The cache state of the thread of row `index`, made at its first use.
CacheThread* thread_of(uint32_t index) {
  CacheThread*& ct = (*g_threads)[index];
  if (!ct) {
    ct = new CacheThread;
    ct->targets.resize(g_targets->size());
    ct->piece_bins.resize(proto::kMaxHistogramBins);
    ct->sums.resize(proto::kMaxHistogramBins);
  }
  return ct;
}

uint64_t total(const sim::Hierarchy* h, const TargetThread& tt) {
  uint64_t sum = 0;
  for (int id : tt.monitors) {
    uint64_t v = 0;
    h->monitor_totals(id, &v, 1);
    sum += v;
  }
  return sum;
}

void write_histogram(const sim::Hierarchy* h, ThreadState* ts, CacheThread* ct, const Target& t,
                     const TargetThread& tt) {
  uint64_t* sums = ct->sums.data();
  std::fill(sums, sums + t.bins, 0);
  for (size_t i = 0; i < tt.monitors.size() && i < t.layout.pieces.size(); ++i) {
    const proto::HistogramPiece& p = t.layout.pieces[i];
    if (!h->monitor_bin_counts(tt.monitors[i], 0, ct->piece_bins.data(), p.bins)) continue;
    for (uint32_t k = 0; k < p.bins && p.first_bin + k < t.bins; ++k) sums[p.first_bin + k] += ct->piece_bins[k];
  }
  uint64_t* row = segment().histogram_row(t.hist_slot, thread_index(ts));
  const SeqSection section(thread_seq(ts));
  std::memcpy(row, sums, t.bins * sizeof(uint64_t));
}

// A trace target's instance ends at `now`: its value record (outside the
// thread's sequence lock: the append may wait for the tool, as the core's
// trace value records do).
void trace_instance_exit(sim::Hierarchy* h, ThreadState* ts, const Target& t, TargetThread& tt, uint32_t region,
                         uint64_t now) {
  if (tt.starts.empty()) return;  // entered before the request was in place
  const uint64_t start = tt.starts.back();
  tt.starts.pop_back();
  if (!tt.regions.empty()) tt.regions.pop_back();
  if (start != kNotTraced)
    append_trace_value(ts, now, total(h, tt) - start, region, uint16_t(t.slot));
  const bool root = region < t.root.size() && t.root[region];
  if (root && tt.depth > 0 && --tt.depth == 0)
    for (int id : tt.monitors) h->set_monitor_enabled(id, false);
}

// A profile target's instance ends: its rows in the target's slice.
void profile_exit(const sim::Hierarchy* h, ThreadState* ts, const Target& t, TargetThread& tt, uint32_t region) {
  if (tt.open.empty() || tt.open.back().region != region) return;  // entered before the request was in place
  const OpenInstance inst = tt.open.back();
  tt.open.pop_back();
  const uint64_t inclusive = total(h, tt) - inst.start;
  const uint64_t exclusive = inclusive > inst.child ? inclusive - inst.child : 0;
  bool outermost = true;  // recursion: inclusive counts once
  for (const OpenInstance& o : tt.open) outermost &= o.region != region;
  if (!tt.open.empty()) tt.open.back().child += inclusive;
  // Counts: nothing to compensate, the comp_ fields equal the raw ones.
  const SeqSection section(thread_seq(ts));
  add_instance(thread_profile_row(ts, t.slice) + region, inclusive, exclusive, inclusive, exclusive, outermost);
  if (t.callpath) {
    const uint32_t caller = tt.open.empty() ? proto::kNoCaller : tt.open.back().region;
    add_edge(ts, t.slice, caller, region, inclusive, exclusive, inclusive, exclusive, outermost);
  }
}

// An aggregate target's innermost instance ends: its value in the row.
void aggregate_exit(const sim::Hierarchy* h, ThreadState* ts, const Target& t, TargetThread& tt) {
  if (tt.starts.empty()) return;
  const uint64_t value = total(h, tt) - tt.starts.back();
  tt.starts.pop_back();
  // Event counts: nothing to compensate, the comp_ fields equal the raw ones.
  const SeqSection section(thread_seq(ts));
  add_to_aggregate(thread_aggregate_row(ts) + t.slot, value, value, value);
}

// The last open instance of a (non-trace) target ends: its monitors stop
// counting, and a histogram's counts go to the thread's row.
void last_instance_ended(sim::Hierarchy* h, ThreadState* ts, CacheThread* ct, const Target& t, TargetThread& tt) {
  for (int id : tt.monitors) h->set_monitor_enabled(id, false);
  if (t.histogram) write_histogram(h, ts, ct, t, tt);
}

}  // namespace

void cache_enter(ThreadState* ts, uint32_t region) {
  sim::Hierarchy* h = g_sim.load(std::memory_order_relaxed);
  if (!h || !g_region_targets || region >= g_region_targets->size() || (*g_region_targets)[region].empty()) return;
  // What came before the enter is not the instance's: the enter flushed it
  // (cache_flush_references) before its timestamp. This work, after it, is
  // monitor overhead inside the instance: timed, and compensated. So is
  // the wait for the simulation thread to catch up.
  const uint64_t t0 = now_ticks();
  cache_drain();
  const uint32_t index = thread_index(ts);
  CacheThread* ct = thread_of(index);
  for (uint32_t i : (*g_region_targets)[region]) {
    const Target& t = (*g_targets)[i];
    TargetThread& tt = ct->targets[i];
    if (t.trace && !traced(t, index)) continue;
    if (tt.monitors.empty() && !create_monitors(h, t, index, tt)) continue;
    if (t.trace) {
      // Every instance gets a start (kNotTraced outside the requested
      // regions' instances), so the exit always pops its own.
      const bool root = region < t.root.size() && t.root[region];
      if (root && tt.depth++ == 0)
        for (int id : tt.monitors) h->set_monitor_enabled(id, true);
      tt.starts.push_back(tt.depth ? total(h, tt) : kNotTraced);
      tt.regions.push_back(region);
      continue;
    }
    if (tt.depth++ == 0)
      for (int id : tt.monitors) h->set_monitor_enabled(id, true);
    if (t.profile)
      tt.open.push_back(OpenInstance{region, total(h, tt), 0});
    else if (!t.histogram)
      tt.starts.push_back(total(h, tt));
  }
  charge_overhead(ts, t0);
}

void cache_exit(ThreadState* ts, uint32_t region) {
  sim::Hierarchy* h = g_sim.load(std::memory_order_relaxed);
  if (!h || !g_region_targets || region >= g_region_targets->size() || (*g_region_targets)[region].empty()) return;
  // The instance's last references were flushed before the exit's
  // timestamp; this work, after it, is overhead in the enclosing instances.
  // So is the wait for the simulation thread to simulate them.
  const uint64_t t0 = now_ticks();
  cache_drain();
  const uint32_t index = thread_index(ts);
  CacheThread* ct = thread_of(index);
  for (uint32_t i : (*g_region_targets)[region]) {
    const Target& t = (*g_targets)[i];
    TargetThread& tt = ct->targets[i];
    if (t.trace) {
      if (traced(t, index)) trace_instance_exit(h, ts, t, tt, region, now_ticks());
      continue;
    }
    if (tt.depth == 0) continue;  // entered before the request was in place
    if (t.profile)
      profile_exit(h, ts, t, tt, region);
    else if (!t.histogram)
      aggregate_exit(h, ts, t, tt);
    if (--tt.depth == 0) last_instance_ended(h, ts, ct, t, tt);
  }
  charge_overhead(ts, t0);
}

void cache_end_open(ThreadState* ts, uint64_t now, bool own_thread) {
  sim::Hierarchy* h = g_sim.load(std::memory_order_relaxed);
  const uint32_t index = thread_index(ts);
  if (!h || !g_threads || !g_targets || index >= g_threads->size()) return;
  CacheThread* ct = (*g_threads)[index];
  if (!ct) return;
  bool open = false;
  for (const TargetThread& tt : ct->targets) open |= tt.depth > 0 || !tt.starts.empty();
  if (!open) return;
  // The references the calling thread made inside them, not yet handed
  // over, are theirs; another thread's buffer cannot be reached from here.
  if (own_thread) cache_flush_references();
  cache_drain();
  for (size_t i = 0; i < ct->targets.size() && i < g_targets->size(); ++i) {
    const Target& t = (*g_targets)[i];
    TargetThread& tt = ct->targets[i];
    if (t.trace) {
      // Innermost first, as their exits would have come.
      while (!tt.starts.empty())
        trace_instance_exit(h, ts, t, tt, tt.regions.empty() ? 0 : tt.regions.back(), now);
      continue;
    }
    if (tt.depth == 0) continue;
    if (t.profile) {
      while (!tt.open.empty()) profile_exit(h, ts, t, tt, tt.open.back().region);
    } else if (!t.histogram) {
      while (!tt.starts.empty()) aggregate_exit(h, ts, t, tt);
    }
    tt.depth = 0;
    last_instance_ended(h, ts, ct, t, tt);
  }
}

}  // namespace mri::monitor::cachesim

// hot_path.cpp - what happens at a monitored region enter or exit once the
// inline check in mri_monitor.h found the region armed.
//
// No locks, no allocation (except once per thread, at its first event), no
// syscalls for time; regions with counter requests read PAPI, which may make
// one. Results go straight into this thread's rows of the segment under the
// thread's sequence word.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "monitor_internal.h"
#include "mri_sync.h"
#include "clock.h"

#define MRI_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define MRI_LIKELY(x) __builtin_expect(!!(x), 1)

namespace mri::monitor {
namespace {

constexpr long kParkPollNs = 100'000'000;  // parked threads re-check the mode every 100 ms

// Threads beyond the geometry's max_threads get this state: never monitored.
// Its in_slow flag stays set, so the recursion guard turns them away without
// a comparison of its own on the hot path.
ThreadState g_unmonitored;
const bool g_unmonitored_init = (g_unmonitored.in_slow.store(1), true);

__attribute__((tls_model("initial-exec"))) thread_local ThreadState* t_state = nullptr;

inline void after_flag_store() {
  if (__builtin_expect(g.use_membarrier, 1))
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the quiescer's membarrier does the rest
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

ThreadState* register_thread() {
  const uint32_t index = g.next_thread.fetch_add(1, std::memory_order_relaxed);
  if (index >= g.view.g.max_threads) {
    t_state = &g_unmonitored;
    g.threads_dropped.fetch_add(1, std::memory_order_relaxed);  // published with the next status
    return nullptr;
  }
  auto* ts = new ThreadState;
  ts->index = index;
  ts->overhead_clock.store(initial_overhead_clock(), std::memory_order_relaxed);  // threads.cpp: the creator's
  ts->open.assign(g.view.g.max_regions, 0);  // regions can be published later
  // Visible to the quiescer before this thread can set in_slow.
  g.threads[index].store(ts, std::memory_order_release);
  t_state = ts;
  pthread_setspecific(g.thread_key, ts);
  return ts;
}

// Fills this thread's row. Runs inside the in_slow protection, so the
// segment is still mapped.
void publish_thread(ThreadState* ts) {
  proto::ThreadRecord* rec = g.view.thread(ts->index);
  rec->os_tid = int32_t(syscall(SYS_gettid));
  char name[proto::kThreadNameBytes] = {0};
  pthread_getname_np(pthread_self(), name, sizeof name);
  std::memcpy(rec->name, name, sizeof name);
  sync::store(rec->status, uint32_t(proto::ThreadStatus::kAlive));
  ts->agg_row = g.view.aggregate(ts->index, 0);
  ts->seq = &g.view.row_head(ts->index)->seq;
  for (uint32_t slice = 0; slice < g.view.g.max_profile_slices; ++slice) {
    ts->profile_rows[slice] = g.view.profile_row(slice, ts->index);
    ts->edge_rows[slice] = g.view.edge_row(slice, ts->index);
  }
  trace_attach_thread(ts);
  ts->record = rec;
  std::atomic_ref<uint32_t> count(g.view.header()->app.thread_count);
  uint32_t seen = count.load();
  while (seen < ts->index + 1 && !count.compare_exchange_weak(seen, ts->index + 1)) {
  }
}

// Sets up this thread's reading sources for the current reading list (the
// owning thread must do it: counters count per thread). Inside the in_slow
// protection.
void prepare_readings(ThreadState* ts) {
  ts->readings_ready = prepare_thread_readings(ts);
  ts->readings_generation = g.readings_generation;
}

void park(ThreadState* ts) {
  const uint64_t t0 = clock::now();
  if (ts->parked_since.load(std::memory_order_relaxed) == 0) ts->parked_since.store(t0, std::memory_order_relaxed);
  ts->in_slow.store(0, std::memory_order_release);
  for (;;) {
    const uint32_t gen = sync::load(g.run_generation);
    const uint32_t m = g.mode.load(std::memory_order_acquire);
    if (m != kStopped) break;
    sync::futex_wait_private(&g.run_generation, gen, kParkPollNs);
  }
  ts->parked_ticks += clock::now() - t0;
  ts->fixup.store(1, std::memory_order_relaxed);
  ts->in_slow.store(1, std::memory_order_relaxed);
  after_flag_store();
}

// The rare cases of entering the monitor: first event of a thread, a stop,
// detached or finished. Returns the state when the event is to be
// processed, nullptr when it must be ignored (then in_slow is clear).
__attribute__((noinline)) ThreadState* enter_monitor_slow(ThreadState* ts) {
  if (ts && ts->calibrating) return ts;  // the calibration at a release runs while the world is stopped
  if (!ts) {
    const uint32_t m = g.mode.load(std::memory_order_acquire);
    if (m != kRunning && m != kStopped) return nullptr;
    ts = register_thread();
    if (!ts) return nullptr;
    ts->in_slow.store(1, std::memory_order_relaxed);
    after_flag_store();
    // The first event of the program: its thread's row goes out before
    // the load stop does, so the tool finds the thread parked there
    // (MRI_STOP_LOADED) among the active objects at once.
    if (!g.published) {
      publish_thread(ts);
      publish_once();
    }
  }
  for (;;) {
    const uint32_t m = g.mode.load(std::memory_order_acquire);
    // Records a stop kept aside go before this event's; a new stop while
    // the thread waits for room for them parks it first.
    if (m == kRunning && (!ts->stashed || trace_drain_stash(ts))) break;
    if (m == kRunning) continue;
    if (m != kStopped) {
      ts->in_slow.store(0, std::memory_order_release);
      return nullptr;
    }
    if (!g.published) publish_once();
    if (!ts->record) publish_thread(ts);
    park(ts);
  }
  if (!ts->record) publish_thread(ts);
  if (ts->readings_generation != g.readings_generation) prepare_readings(ts);
  if (ts->parked_ticks) {
    // Time spent stopped at a breakpoint is not the program's time.
    for (uint32_t i = 0; i < ts->depth; ++i) ts->frames[i].start += ts->parked_ticks;
    ts->shifted = ts->parked_ticks;  // an exit in progress shifts its timestamp alike
    ts->parked_ticks = 0;
  }
  ts->parked_since.store(0, std::memory_order_relaxed);
  ts->fixup.store(0, std::memory_order_relaxed);
  return ts;
}

// Enters the monitor; on success the caller must call leave(). Inlined into
// both slow paths: with the call it cost about 1 ns more per pair
// (docs/PERFORMANCE.md).
__attribute__((always_inline)) inline ThreadState* enter_monitor() {
  ThreadState* ts = t_state;
  if (MRI_UNLIKELY(!ts)) return enter_monitor_slow(nullptr);
  // Recursion guard: a signal handler running annotated code inside the
  // monitor is not monitored (nor is an unmonitored thread).
  if (ts->in_slow.load(std::memory_order_relaxed)) return nullptr;
  ts->in_slow.store(1, std::memory_order_relaxed);
  after_flag_store();
  if (MRI_UNLIKELY(g.mode.load(std::memory_order_acquire) != kRunning ||
                   ts->fixup.load(std::memory_order_relaxed)))
    return enter_monitor_slow(ts);
  return ts;
}

inline void leave(ThreadState* ts) { ts->in_slow.store(0, std::memory_order_release); }

// Readings at a region enter (regions whose plan has reading requests).
__attribute__((noinline)) void enter_readings(ThreadState* ts, Frame& f) {
  f.readings_generation = 0;
  if (!ts->readings_ready || !g.reading_count) return;
  FrameReadings& fr = ts->frame_readings[ts->depth - 1];
  if (take_readings(ts, fr.at_enter)) {
    f.readings_generation = ts->readings_generation;
    for (uint32_t e = 0; e < g.reading_count; ++e) fr.child[e] = 0;
  }
}

// The before_event() of the sources in `sources` (Global::before_event_sources).
__attribute__((noinline)) void run_before_event() {
  uint8_t sources = g.before_event_sources.load(std::memory_order_relaxed);
  while (sources) {
    source(uint32_t(__builtin_ctz(sources))).before_event();
    sources &= uint8_t(sources - 1);
  }
}

// The enter() and exit() of the sources that measure requests at a region
// themselves (RegionPlan::hooks).
__attribute__((noinline)) void hooks_enter(ThreadState* ts, uint32_t region) {
  uint8_t hooks = g.plan[region].hooks;
  while (hooks) {
    source(uint32_t(__builtin_ctz(hooks))).enter(ts, region);
    hooks &= uint8_t(hooks - 1);
  }
}
__attribute__((noinline)) void hooks_exit(ThreadState* ts, uint32_t region) {
  uint8_t hooks = g.plan[region].hooks;
  while (hooks) {
    source(uint32_t(__builtin_ctz(hooks))).exit(ts, region);
    hooks &= uint8_t(hooks - 1);
  }
}

inline bool traced_thread(const TraceTarget& t, uint32_t index) { return in_thread_mask(t.threads, index); }

constexpr uint16_t kRegionEventKind = uint16_t(ValueKind::kEvent);

inline uint64_t trace_open_key(uint32_t id, uint16_t request) { return (uint64_t(request) << 32) | id; }

// An enter record written: its instance is open until its exit record.
__attribute__((always_inline)) inline void trace_open_push(ThreadState* ts, uint32_t id, uint16_t request) {
  if (MRI_LIKELY(ts->trace_open_depth < kMaxDepth)) ts->trace_open[ts->trace_open_depth] = trace_open_key(id, request);
  ts->trace_open_depth += 1;
}

// An exit record that does not close the innermost open instance: the
// innermost instances are beyond the array (this exit is theirs); or
// instances of the same request entered inside this one never ran their
// exits (longjmp, an exception through C code): their exits are written
// now, marked, before this one's; or this instance's enter was not traced
// (the request came while it was open, as a request made at a breakpoint
// inside main does): then its exit is not written either, so that every
// exit the tool gets has its enter. False in that last case.
__attribute__((noinline)) bool trace_open_unusual(ThreadState* ts, uint64_t key, uint64_t now) {
  const uint32_t d = ts->trace_open_depth;
  if (d > kMaxDepth) {
    ts->trace_open_depth = d - 1;
    return true;
  }
  int32_t k = int32_t(d) - 1;
  while (k >= 0 && ts->trace_open[k] != key) --k;
  if (k < 0) return false;
  const uint32_t request = uint32_t(key >> 32);
  for (uint32_t j = d - 1; j > uint32_t(k); --j)
    if (uint32_t(ts->trace_open[j] >> 32) == request)
      trace_append(ts, now, proto::kTraceExitSynthetic, uint32_t(ts->trace_open[j]), proto::TraceKind::kExit,
                   uint16_t(request));
  uint32_t kept = uint32_t(k);  // other requests' instances stay open
  for (uint32_t j = uint32_t(k) + 1; j < d; ++j)
    if (uint32_t(ts->trace_open[j] >> 32) != request) ts->trace_open[kept++] = ts->trace_open[j];
  ts->trace_open_depth = kept;
  return true;
}

// An exit record is about to be written: its instance is no longer open.
// False when its enter was never written (the exit is left out).
__attribute__((always_inline)) inline bool trace_open_pop(ThreadState* ts, uint32_t id, uint16_t request,
                                                          uint64_t now) {
  const uint32_t d = ts->trace_open_depth;
  const uint64_t key = trace_open_key(id, request);
  if (MRI_LIKELY(d - 1 < kMaxDepth && ts->trace_open[d - 1] == key)) {  // d - 1 wraps for d == 0
    ts->trace_open_depth = d - 1;
    return true;
  }
  return trace_open_unusual(ts, key, now);
}

// Trace requests at a region enter: REGION_EVENT records, and the count of
// open instances of each request's regions (their subregions are traced
// inside them). always_inline: the traced event's cost is mostly rdtsc and
// the record store; a call would add to it.
__attribute__((always_inline)) inline void trace_enter(ThreadState* ts, const RegionPlan& p, uint32_t id) {
  const TraceTarget* t = g.traces + p.trace_begin;
  if (MRI_LIKELY(p.trace_simple)) {  // about 1 ns less per event than the loop (docs/PERFORMANCE.md)
    ts->trace_inside[t->slot] += 1;
    trace_open_push(ts, id, t->request);
    return trace_append(ts, ticks(), 0, id, proto::TraceKind::kEnter, t->request);
  }
  uint64_t now = 0;
  for (uint32_t i = 0; i < p.n_trace; ++i) {
    if (!traced_thread(t[i], ts->index)) continue;
    if (t[i].root)
      ts->trace_inside[t[i].slot] += 1;
    else if (!ts->trace_inside[t[i].slot])
      continue;
    if (t[i].kind != kRegionEventKind) continue;
    if (!now) now = ticks();
    trace_open_push(ts, id, t[i].request);
    trace_append(ts, now, 0, id, proto::TraceKind::kEnter, t[i].request);
  }
}

__attribute__((always_inline)) inline void trace_exit(ThreadState* ts, const RegionPlan& p, uint32_t id, uint64_t now) {
  const TraceTarget* t = g.traces + p.trace_begin;
  if (MRI_LIKELY(p.trace_simple)) {
    uint32_t& inside = ts->trace_inside[t->slot];
    inside -= inside != 0;
    if (MRI_LIKELY(trace_open_pop(ts, id, t->request, now)))
      trace_append(ts, now, 0, id, proto::TraceKind::kExit, t->request);
    return;
  }
  for (uint32_t i = 0; i < p.n_trace; ++i) {
    if (!traced_thread(t[i], ts->index)) continue;
    uint32_t& inside = ts->trace_inside[t[i].slot];
    if ((t[i].root || inside) && t[i].kind == kRegionEventKind && trace_open_pop(ts, id, t[i].request, now))
      trace_append(ts, now, 0, id, proto::TraceKind::kExit, t[i].request);
    if (t[i].root && inside) inside -= 1;
  }
}

// One record per traced region instance carrying its measured value.
// Outside the sequence-locked section: an append may wait for the tool.
__attribute__((noinline)) void trace_values(ThreadState* ts, const RegionPlan& p, uint32_t id, uint64_t now,
                                            uint64_t dt, const int64_t* delta) {
  const TraceTarget* t = g.traces + p.trace_begin;
  for (uint32_t i = 0; i < p.n_trace; ++i) {
    if (t[i].kind == kRegionEventKind || !traced_thread(t[i], ts->index)) continue;
    if (!t[i].root && !ts->trace_inside[t[i].slot]) continue;
    uint64_t v = t[i].kind == uint16_t(ValueKind::kCount) ? 1 : dt;
    if (t[i].kind == uint16_t(ValueKind::kReading)) {
      if (!delta) continue;  // not read for this instance
      v = delta[t[i].reading] > 0 ? uint64_t(delta[t[i].reading]) : 0;
    }
    trace_append(ts, now, v, id, proto::TraceKind::kValue, t[i].request);
  }
}

inline uint64_t edge_key(uint32_t caller, uint32_t callee) {
  return (uint64_t(caller + 2u) << 32) | callee;  // caller kNoCaller -> 1: never 0
}
inline uint32_t edge_hash(const ThreadState* ts, uint64_t key) {
  return uint32_t((key * 0x9E3779B97F4A7C15ull) >> 40) & ts->edge_mask;
}

// edge_index() beyond its first probe: the table's allocation, collisions
// and new pairs.
__attribute__((noinline)) uint32_t edge_index_slow(ThreadState* ts, uint32_t caller, uint32_t callee) {
  if (MRI_UNLIKELY(!ts->edge_keys)) {
    const uint32_t slots = 2 * std::max<uint32_t>(g.view.g.max_edges, 1);  // a power of two: max_edges is one
    uint32_t cap = 1;
    while (cap < slots) cap <<= 1;
    ts->edge_keys = new uint64_t[cap]();
    ts->edge_values = new uint32_t[cap];
    ts->edge_mask = cap - 1;
  }
  const uint64_t key = edge_key(caller, callee);
  uint32_t h = edge_hash(ts, key);
  for (;;) {
    if (ts->edge_keys[h] == key) return ts->edge_values[h];
    if (ts->edge_keys[h] == 0) {
      if (ts->edges_used >= g.view.g.max_edges) {
        if (!ts->edges_full_noted) {
          ts->edges_full_noted = true;
          note_error("thread %u: more than %u caller/callee pairs; callpath profiles miss the rest", ts->index,
                     g.view.g.max_edges);
        }
        return UINT32_MAX;
      }
      ts->edge_keys[h] = key;
      ts->edge_values[h] = ts->edges_used;
      return ts->edges_used++;
    }
    h = (h + 1) & ts->edge_mask;
  }
}

// The edge index of (caller, callee) in this thread's callpath rows, or
// UINT32_MAX when the table is full (the instance then counts in the flat
// profile only; noted once per thread). Inline up to the first probe,
// which finds a pair seen before unless another pair took its slot first.
// The lookup and the edge's update as calls of their own cost the
// callpath rung of the ladder 55 instructions a pair more (439 against
// 384; docs/PERFORMANCE.md, "Callpath rung").
__attribute__((always_inline)) inline uint32_t edge_index(ThreadState* ts, uint32_t caller, uint32_t callee) {
  if (MRI_LIKELY(ts->edge_keys != nullptr)) {
    const uint64_t key = edge_key(caller, callee);
    const uint32_t h = edge_hash(ts, key);
    if (MRI_LIKELY(ts->edge_keys[h] == key)) return ts->edge_values[h];
  }
  return edge_index_slow(ts, caller, callee);
}

// One caller/callee pair of a profile slice.
__attribute__((always_inline)) inline void add_edge_inline(ThreadState* ts, uint32_t slice, uint32_t caller,
                                                           uint32_t callee, uint64_t inclusive, uint64_t exclusive,
                                                           uint64_t comp_inclusive, uint64_t comp_exclusive,
                                                           bool outermost) {
  const uint32_t e = edge_index(ts, caller, callee);
  if (MRI_UNLIKELY(e == UINT32_MAX)) return;
  proto::EdgeSlot* s = ts->edge_rows[slice] + e;
  if (MRI_UNLIKELY(s->calls == 0)) {
    s->caller = caller;
    s->callee = callee;
  }
  add_instance(s, inclusive, exclusive, comp_inclusive, comp_exclusive, outermost);
}

}  // namespace

void add_edge(ThreadState* ts, uint32_t slice, uint32_t caller, uint32_t callee, uint64_t inclusive,
              uint64_t exclusive, uint64_t comp_inclusive, uint64_t comp_exclusive, bool outermost) {
  add_edge_inline(ts, slice, caller, callee, inclusive, exclusive, comp_inclusive, comp_exclusive, outermost);
}

namespace {

// The calling-context part of a profile slice (inside the sequence lock).
// With unwinding, the unannotated functions between the caller region and
// this instance (ts->unwound at the popped frame's index, ts->depth) are
// edges of their own: each carries the instance and its inclusive value,
// no exclusive value. One call from the exit, with the lookup and the
// update inline in it; inlined into the exit too, it made every flat
// profile pair 8 instructions longer (register allocation).
__attribute__((noinline)) void accumulate_edge(ThreadState* ts, uint32_t slice, uint32_t caller, uint32_t callee,
                                               uint64_t inclusive, uint64_t exclusive, uint64_t comp_inclusive,
                                               uint64_t comp_exclusive, bool outermost) {
  if (MRI_UNLIKELY(g.slice_unwind[slice] && ts->frames[ts->depth].unwound)) {
    const UnwoundFrame& u = ts->unwound[ts->depth];
    for (uint32_t k = 0; k < u.n; ++k) {
      add_edge_inline(ts, slice, caller, uint32_t(u.chain[k]), inclusive, 0, comp_inclusive, 0, outermost);
      caller = uint32_t(u.chain[k]);
    }
  }
  add_edge_inline(ts, slice, caller, callee, inclusive, exclusive, comp_inclusive, comp_exclusive, outermost);
}

inline uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// `delta`: the readings' increase over the instance, nullptr when they were
// not read (then reading requests get nothing from this instance).
// Readings=false: the region's plan has no reading request; this
// instantiation, the common one, carries no reading code at all.
// always_inline: as a call of its own (gcc's choice once it became a
// template) it cost 16 instructions per exit and ~1 ns per pair.
// `own`: the monitor's overhead inside the instance (ticks; an aggregate's
// compensated value of the instance is dt less `own`, or 0);
// `child_overhead`: the overhead inside the profiled children (ticks).
// Profiles sum compensated times unclamped, modulo 2^64 (the reader takes
// the sums as signed): dt - own, and the exclusive time less (own -
// child_overhead), so that compensated times add up exactly (a parent's
// compensated inclusive time is its compensated exclusive time plus its
// children's) and an instance shorter than its estimated overhead still
// takes the whole estimate from every enclosing one.
template <bool Readings>
__attribute__((always_inline)) inline void accumulate(ThreadState* ts, const RegionPlan& p, uint32_t region, uint64_t dt, uint64_t child,
                       uint64_t own, uint64_t child_overhead, bool outermost, const int64_t* delta,
                       const int64_t* child_readings, uint32_t caller) {
  seq_begin(ts->seq);
  const AggTarget* a = g.aggs + p.agg_begin;
  for (uint32_t i = 0; i < p.n_agg; ++i) {
    proto::AggregateSlot* s = ts->agg_row + a[i].request;
    // cv: the instance's compensated value, at least 0; csum: what it adds
    // to the compensated sum, unclamped (add_to_aggregate, results.h).
    uint64_t v = dt, cv = a[i].compensate ? dt - std::min(dt, own) : dt, csum = a[i].compensate ? dt - own : dt;
    if (a[i].kind == uint8_t(ValueKind::kCount)) v = cv = csum = 1;
    if (Readings && a[i].kind == uint8_t(ValueKind::kReading)) {
      if (!delta) continue;
      v = cv = csum = delta[a[i].reading] > 0 ? uint64_t(delta[a[i].reading]) : 0;
    }
    add_to_aggregate(s, v, cv, csum);
  }
  for (uint32_t i = 0; i < p.n_prof; ++i) {
    const uint32_t slice = g.slices[p.prof_begin + i];
    proto::ProfileSlot* s = ts->profile_rows[slice] + region;
    const AggTarget& m = g.slice_value[slice];
    if (Readings && m.kind == uint8_t(ValueKind::kReading)) {
      if (!delta) continue;
      const int64_t v = delta[m.reading], own = v - child_readings[m.reading];
      const uint64_t inclusive = v > 0 ? uint64_t(v) : 0, exclusive = own > 0 ? uint64_t(own) : 0;
      add_instance(s, inclusive, exclusive, inclusive, exclusive, outermost);
      if (g.slice_callpath[slice])
        accumulate_edge(ts, slice, caller, region, inclusive, exclusive, inclusive, exclusive, outermost);
      continue;
    }
    if (MRI_UNLIKELY(m.kind == uint8_t(ValueKind::kCount))) {
      // Inclusive: this instance and the profiled instances nested in it
      // (they ended since its enter); exclusive: this instance.
      const uint64_t subtree = uint32_t(ts->profiled_exits - ts->frames[ts->depth].instance_mark);
      add_instance(s, subtree, 1, subtree, 1, outermost);
      if (g.slice_callpath[slice]) accumulate_edge(ts, slice, caller, region, subtree, 1, subtree, 1, outermost);
      continue;
    }
    const uint64_t exclusive = minus(dt, child);
    uint64_t comp_inclusive = dt, comp_exclusive = exclusive;
    if (MRI_LIKELY(g.slice_compensate[slice])) {
      comp_inclusive = dt - own;
      comp_exclusive = exclusive - (own - child_overhead);
    }
    add_instance(s, dt, exclusive, comp_inclusive, comp_exclusive, outermost);
    if (MRI_UNLIKELY(g.slice_callpath[slice]))
      accumulate_edge(ts, slice, caller, region, dt, exclusive, comp_inclusive, comp_exclusive, outermost);
  }
  seq_end(ts->seq);
}

}  // namespace

uint64_t thread_overhead_clock() {
  ThreadState* ts = t_state;
  return ts && ts != &g_unmonitored ? ts->overhead_clock.load(std::memory_order_relaxed)
                                     : overhead_clock_before_state();
}

void add_thread_overhead(uint64_t fixed) {
  ThreadState* ts = t_state;
  if (ts && ts != &g_unmonitored)
    ts->overhead_clock.fetch_add(fixed, std::memory_order_relaxed);
  else
    add_overhead_before_state(fixed);
}

ThreadState* swap_thread_state(ThreadState* ts) {
  ThreadState* before = t_state;
  t_state = ts;
  return before;
}

void never_monitor_this_thread() { t_state = &g_unmonitored; }

ThreadState* current_thread_state() {
  ThreadState* ts = t_state;
  if (ts == &g_unmonitored) return nullptr;
  if (!ts) {
    const uint32_t m = g.mode.load(std::memory_order_acquire);
    if (m != kRunning && m != kStopped) return nullptr;
    ts = register_thread();
  }
  return ts;
}

}  // namespace mri::monitor

using namespace mri::monitor;

extern "C" void Monitor_Region_Enter_Slow(Monitor_Region_Descriptor* desc) {
  // Simulated before this enter's timestamps: the references, and the time
  // spent simulating them, are the enclosing instances'. Before
  // enter_monitor(), as at an exit: a thread that parks there (a stop)
  // has handed them over, and an end of monitoring meanwhile, on another
  // thread, counts them in the instances it ends.
  if (MRI_UNLIKELY(g.before_event_sources.load(std::memory_order_relaxed))) run_before_event();
  ThreadState* ts = enter_monitor();
  if (!ts) return;
  if (MRI_UNLIKELY(ts->shifted)) ts->shifted = 0;  // only an exit uses it
  const uint32_t id = uint32_t(desc->id);
  if (id >= std::atomic_ref<uint32_t>(g.plan_count).load(std::memory_order_relaxed)) return leave(ts);
  if (MRI_UNLIKELY(g.plan[id].n_trace)) trace_enter(ts, g.plan[id], id);
  if (g.plan[id].measure) {
    if (MRI_UNLIKELY(ts->depth == kMaxDepth)) {
      if (ts->overflow++ == 0) {
        Frame& top = ts->frames[kMaxDepth - 1];
        ts->hidden_region = top.region;
        top.region = kHiddenRegion;
        // Said once per thread: otherwise nothing shows that a deep
        // recursion, or instances left open by longjmp (each one a frame
        // until the thread ends), cost the results every deeper instance.
        if (!ts->depth_full_noted) {
          ts->depth_full_noted = true;
          note_error("thread %u: more than %u region instances open at once; the instances beyond are not measured",
                     ts->index, kMaxDepth);
        }
      }
    } else {
      Frame& f = ts->frames[ts->depth++];
      f.region = int32_t(id);
      f.profiled = g.plan[id].n_prof > 0;
      f.child = 0;
      f.overhead_mark = ts->overhead_clock.load(std::memory_order_relaxed);
      f.child_overhead = 0;
      f.unwound = 0;
      f.instance_mark = ts->profiled_exits;
      if (f.profiled) ts->open[id] += 1;
      if (MRI_UNLIKELY(g.plan[id].readings)) enter_readings(ts, f);
      if (MRI_UNLIKELY(g.plan[id].unwind)) unwind_enter(ts, desc->type, ts->depth - 1);
      f.start = ticks();  // last: the monitor's own work is outside the region's time
    }
  }
  if (MRI_UNLIKELY(g.plan[id].hooks)) hooks_enter(ts, id);  // sources measuring here themselves
  leave(ts);
}

namespace {

// The reading part of an exit: take the readings, pass their increase to
// the enclosing profiled frame, account the instance.
__attribute__((noinline)) void measure_with_readings(ThreadState* ts, const RegionPlan& p, uint32_t id, uint64_t dt,
                                                     uint64_t own, const Frame& f, int32_t parent,
                                                     bool outermost, uint64_t now, uint32_t caller) {
  const FrameReadings& fr = ts->frame_readings[ts->depth];  // the popped frame's index
  int64_t now_readings[kMaxReadings], delta[kMaxReadings];
  const uint32_t n = g.reading_count;
  const bool same_list = f.readings_generation != 0 && f.readings_generation == ts->readings_generation;
  if (same_list && take_readings(ts, now_readings)) {
    for (uint32_t e = 0; e < n; ++e) delta[e] = now_readings[e] - fr.at_enter[e];
    if (parent >= 0 && ts->frames[parent].readings_generation == f.readings_generation)
      for (uint32_t e = 0; e < n; ++e) ts->frame_readings[parent].child[e] += delta[e];
    accumulate<true>(ts, p, id, dt, f.child, own, f.child_overhead, outermost, delta, fr.child, caller);
    if (p.trace_values) trace_values(ts, p, id, now, dt, delta);
    return;
  }
  accumulate<true>(ts, p, id, dt, f.child, own, f.child_overhead, outermost, nullptr, nullptr, caller);
  if (p.trace_values) trace_values(ts, p, id, now, dt, nullptr);
}

// Pops the top frame (region `id`) and accounts its instance.
__attribute__((always_inline)) inline void pop_and_measure(ThreadState* ts, uint32_t id, uint64_t now) {
  const Frame& f = ts->frames[--ts->depth];  // stays valid: nothing is pushed below
  const RegionPlan& p = g.plan[id];
  const uint64_t dt = now > f.start ? now - f.start : 0;
  // Overhead compensation (seed paper 001, section 3.2, on the fly): this
  // instance's interval holds the monitor's own part of its enter and exit
  // plus what each monitored descendant added (the clock's advance since
  // the enter); every enclosing instance gets this instance's whole pair.
  const uint64_t clock = ts->overhead_clock.load(std::memory_order_relaxed);
  const uint64_t own_overhead = clock - f.overhead_mark + p.overhead_own;
  ts->overhead_clock.store(clock + p.overhead_pair, std::memory_order_relaxed);
  // In whole ticks, the fraction carried to the thread's next instance:
  // truncated, each instance would keep up to a tick (2% of a parent's
  // compensated time over 20,000 short children); rounded, each leaf would
  // lose its own part rounded the same way every time (2% of the own part
  // in every sum). tests/capi/test_compensation.c checks the sums.
  const uint64_t own_total = own_overhead + ts->own_carry;
  const uint64_t own_ticks = own_total >> kOverheadFracBits;
  ts->own_carry = own_total & ((uint64_t{1} << kOverheadFracBits) - 1);
  bool outermost = true;
  int32_t parent = -1;  // nearest profiled frame below: its exclusive values exclude this instance
  if (f.profiled) {
    ts->profiled_exits += 1;
    outermost = (ts->open[id] -= 1) == 0;
    for (int32_t j = int32_t(ts->depth) - 1; j >= 0; --j)
      if (ts->frames[j].profiled) {
        parent = j;
        ts->frames[j].child += dt;
        ts->frames[j].child_overhead += own_ticks;
        break;
      }
  }
  if (!p.measure) return;
  const uint32_t caller = parent >= 0 ? uint32_t(ts->frames[parent].region) : mri::proto::kNoCaller;
  if (MRI_UNLIKELY(p.readings))
    return measure_with_readings(ts, p, id, dt, own_ticks, f, parent, outermost, now, caller);
  accumulate<false>(ts, p, id, dt, f.child, own_ticks, f.child_overhead, outermost, nullptr, nullptr, caller);
  if (MRI_UNLIKELY(p.trace_values)) trace_values(ts, p, id, now, dt, nullptr);
}

// The end of a breakpoint region: stop the world, stay until released.
__attribute__((noinline)) void exit_at_breakpoint(ThreadState* ts, uint32_t id) {
  if (try_stop_world(mri::proto::StopReason::kBreakpoint, int32_t(id), ts)) {
    leave(ts);
    ThreadState* again = enter_monitor();  // parks until the tool releases us
    if (again) {
      again->shifted = 0;  // this exit was measured before the stop
      leave(again);
    }
    return;
  }
  leave(ts);
}

// The top frame's region back, once no instance beyond the stack is open
// (Monitor_Region_Enter_Slow hid it when the first one was entered).
inline void reveal_top_frame(ThreadState* ts) { ts->frames[kMaxDepth - 1].region = ts->hidden_region; }

// An exit of a measured region that does not match the top frame, or with
// the stack full: the exit of an instance entered beyond the stack's depth
// (while instances beyond it are open, the innermost exits are theirs: a
// recursion 300 deep must not pop the 256th frame at the 300th exit);
// frames above this region's belong to subregions whose exits were never
// seen (longjmp, an exception through C code); or the region was entered
// before its requests were in place. False when the exit matched no
// instance at all (an exit without an enter).
__attribute__((noinline)) bool exit_unusual(ThreadState* ts, uint32_t id, uint64_t now) {
  if (ts->overflow > 0 && ts->depth == kMaxDepth) {
    if (--ts->overflow == 0) reveal_top_frame(ts);
    return true;
  }
  int32_t k = int32_t(ts->depth) - 1;
  while (k >= 0 && ts->frames[k].region != int32_t(id)) --k;
  if (k >= 0) {
    while (int32_t(ts->depth) - 1 > k) {
      const Frame& dropped = ts->frames[--ts->depth];
      if (dropped.profiled) ts->open[dropped.region] -= 1;
    }
    pop_and_measure(ts, id, now);
  } else if (ts->overflow > 0) {
    ts->overflow -= 1;  // the stack is no longer full (frames were dropped): nothing hidden
  } else {
    std::atomic_ref<uint32_t>(g.view.header()->app.unmatched_exits).fetch_add(1);
    return false;
  }
  return true;
}

}  // namespace

extern "C" void Monitor_Region_Exit_Slow(Monitor_Region_Descriptor* desc) {
  // The instance's last references, simulated inside its interval (before
  // the timestamp), so that their simulation is compensated in it.
  if (MRI_UNLIKELY(g.before_event_sources.load(std::memory_order_relaxed))) run_before_event();
  const uint64_t before = ticks();  // first: the monitor's own work is outside the region's time
  ThreadState* ts = enter_monitor();
  if (!ts) return;
  const uint32_t id = uint32_t(desc->id);
  // A thread that parked in enter_monitor() (a stop reached it here) had its
  // frames shifted by the time parked; the timestamp predates the park and
  // is shifted alike, so the stop is charged to nobody.
  uint64_t now = before;
  if (MRI_UNLIKELY(ts->shifted)) {
    now += ts->shifted;
    ts->shifted = 0;
  }
  if (MRI_UNLIKELY(id >= std::atomic_ref<uint32_t>(g.plan_count).load(std::memory_order_relaxed))) return leave(ts);
  const RegionPlan& p = g.plan[id];
  bool matched = true;  // unknown (taken as true) for a region without frames
  if (MRI_LIKELY(ts->depth != 0 && ts->frames[ts->depth - 1].region == int32_t(id)))
    pop_and_measure(ts, id, now);
  else if (p.measure)
    matched = exit_unusual(ts, id, now);
  // (A region armed only to be traced, or as the breakpoint, has no frame.)
  if (MRI_UNLIKELY(p.n_trace)) trace_exit(ts, p, id, now);
  if (MRI_UNLIKELY(p.hooks)) hooks_exit(ts, id);  // sources measuring here themselves
  // An exit without an enter is ignored, also as the end of the breakpoint
  // (a program's stray exit); except the first such exit on a thread after
  // the release that gave the region its frames: the instance the tool
  // stopped inside (a breakpoint in a region it calls, requests then added
  // on this one) was entered without a frame, and its end is the one the
  // tool asked for. (Unmeasured, and counted in unmatched_exits.)
  if (MRI_UNLIKELY(int32_t(id) == g.breakpoint)) {
    if (matched) return exit_at_breakpoint(ts, id);
    if (p.measure_new && ts->breakpoint_unmatched != g.releases) {
      ts->breakpoint_unmatched = g.releases;
      return exit_at_breakpoint(ts, id);
    }
  }
  leave(ts);
}

namespace mri::monitor {

// At the end of monitoring (Monitor_Final, run by exit()): the calling
// thread's measured instances still open end now, innermost first, as if
// their exits ran: a program that calls exit() inside main keeps its
// PROGRAM row, its enclosing instances' times, simulated cache events and
// trace value records. Then every traced instance still open gets its exit
// record (trace_close_open), measured or only traced.
// The caller has quiesced the other threads.
void close_open_instances(ThreadState* ts) {
  // (Instances open only for cache requests have no frame: depth 0 does
  // not mean nothing is open.)
  if (!ts || ts == &g_unmonitored) return;
  ts->in_slow.store(1, std::memory_order_relaxed);  // a signal handler's annotated code is not monitored meanwhile
  const uint64_t now = ticks();
  measure_open_instances(ts, now, true);
  trace_close_open(ts, now);
  leave(ts);
}

void measure_open_instances(ThreadState* ts, uint64_t now, bool own_thread) {
  // The instances sources keep open themselves first, each request's
  // innermost first (its regions may have frames or not); the frames'
  // exit() hooks then find them ended.
  for_each_source_with(&MeasurementSource::end_open,
                       [&](uint32_t, const MeasurementSource& s) { s.end_open(ts, now, own_thread); });
  if (ts->overflow > 0 && ts->depth == kMaxDepth) reveal_top_frame(ts);
  ts->overflow = 0;  // the instances beyond the stack end unmeasured
  while (ts->depth > 0) {
    const uint32_t id = uint32_t(ts->frames[ts->depth - 1].region);
    const RegionPlan& p = g.plan[id];
    pop_and_measure(ts, id, now);
    if (p.hooks) hooks_exit(ts, id);
  }
}

void trace_close_open(ThreadState* ts, uint64_t now) {
  // Instances beyond the array (deeper than kMaxDepth: a thread ending
  // inside them, or instances left by longjmp) get no exit: say so, or
  // the trace's enters and exits just do not balance.
  if (ts->trace_open_depth > kMaxDepth)
    note_error("thread %u ended inside %u traced region instances: the %u innermost, beyond the %u the monitor keeps, "
               "have no exit record",
               ts->index, ts->trace_open_depth, ts->trace_open_depth - kMaxDepth, kMaxDepth);
  for (uint32_t j = std::min(ts->trace_open_depth, kMaxDepth); j-- > 0;)
    trace_append(ts, now, proto::kTraceExitSynthetic, uint32_t(ts->trace_open[j]), proto::TraceKind::kExit,
                 uint16_t(ts->trace_open[j] >> 32));
  ts->trace_open_depth = 0;  // instances beyond the array (deeper than kMaxDepth) stay without exits
}

void trace_forget_open(ThreadState* ts, const std::vector<uint8_t>& keep) {
  const uint32_t d = ts->trace_open_depth, stored = std::min(d, kMaxDepth);
  uint32_t kept = 0;
  for (uint32_t j = 0; j < stored; ++j) {
    const uint32_t request = uint32_t(ts->trace_open[j] >> 32);
    if (request < keep.size() && keep[request]) ts->trace_open[kept++] = ts->trace_open[j];
  }
  ts->trace_open_depth = kept + (d - stored);
}

}  // namespace mri::monitor

// hot_path.cpp - what happens at a monitored region enter or exit once the
// inline check in mri_monitor.h found the region armed.
//
// No locks, no allocation (except once per thread, at its first event), no
// syscalls while running; results go straight into this thread's rows of the
// segment under the thread's sequence word.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "monitor_internal.h"
#include "mri_sync.h"
#include "mri_timer.h"

#define MRI_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace mri::monitor {
namespace {

constexpr long kParkPollNs = 100'000'000;  // parked threads re-check the mode every 100 ms

// Threads beyond the geometry's max_threads get this state: never monitored.
ThreadState g_unmonitored;

__attribute__((tls_model("initial-exec"))) thread_local ThreadState* t_state = nullptr;

inline void after_flag_store() {
  if (g.use_membarrier)
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the quiescer's membarrier does the rest
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

ThreadState* register_thread() {
  const uint32_t index = g.next_thread.fetch_add(1, std::memory_order_relaxed);
  if (index >= g.view.g.max_threads) {
    t_state = &g_unmonitored;
    if (g.view.base) {
      std::atomic_ref<uint32_t>(g.view.header()->app.threads_dropped).fetch_add(1);
    }
    return nullptr;
  }
  auto* ts = new ThreadState;
  ts->index = index;
  ts->open.assign(g.region_first.size(), 0);
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
  ts->record = rec;
  std::atomic_ref<uint32_t> count(g.view.header()->app.thread_count);
  uint32_t seen = count.load();
  while (seen < ts->index + 1 && !count.compare_exchange_weak(seen, ts->index + 1)) {
  }
}

void park(ThreadState* ts) {
  const uint64_t t0 = timer::now();
  ts->in_slow.store(0, std::memory_order_release);
  for (;;) {
    const uint32_t gen = sync::load(g.run_generation);
    const uint32_t m = g.mode.load(std::memory_order_acquire);
    if (m != kStopped) break;
    sync::futex_wait_private(&g.run_generation, gen, kParkPollNs);
  }
  ts->parked_ticks += timer::now() - t0;
  ts->in_slow.store(1, std::memory_order_relaxed);
  after_flag_store();
}

// Enters the monitor. Returns the thread's state when the event is to be
// processed (mode kRunning), nullptr when it must be ignored. On success
// the caller must call leave().
ThreadState* enter_monitor() {
  ThreadState* ts = t_state;
  if (MRI_UNLIKELY(!ts)) {
    const uint32_t m = g.mode.load(std::memory_order_acquire);
    if (m != kRunning && m != kStopped) return nullptr;
    if (!g.published) publish_once();
    ts = register_thread();
    if (!ts) return nullptr;
  }
  if (ts == &g_unmonitored) return nullptr;
  // Recursion guard: a signal handler running annotated code inside the
  // monitor is not monitored.
  if (ts->in_slow.load(std::memory_order_relaxed)) return nullptr;
  ts->in_slow.store(1, std::memory_order_relaxed);
  after_flag_store();
  for (;;) {
    const uint32_t m = g.mode.load(std::memory_order_acquire);
    if (m == kRunning) break;
    if (m != kStopped) {
      ts->in_slow.store(0, std::memory_order_release);
      return nullptr;
    }
    if (!g.published) publish_once();
    if (!ts->record) publish_thread(ts);
    park(ts);
  }
  if (MRI_UNLIKELY(!ts->record)) publish_thread(ts);
  if (MRI_UNLIKELY(ts->parked_ticks)) {
    // Time spent stopped at a breakpoint is not the program's time.
    for (uint32_t i = 0; i < ts->depth; ++i) ts->frames[i].start += ts->parked_ticks;
    ts->parked_ticks = 0;
  }
  return ts;
}

inline void leave(ThreadState* ts) { ts->in_slow.store(0, std::memory_order_release); }

inline void seq_begin(proto::ThreadRecord* rec) {
  sync::store(rec->seq, rec->seq + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}
inline void seq_end(proto::ThreadRecord* rec) { sync::store(rec->seq, rec->seq + 1); }

void accumulate(ThreadState* ts, const RegionPlan& p, uint32_t region, uint64_t dt, uint64_t child,
                bool outermost) {
  proto::ThreadRecord* rec = ts->record;
  seq_begin(rec);
  for (uint32_t i = 0; i < p.n_agg; ++i) {
    const uint32_t r = g.plan_requests[p.agg_begin + i];
    proto::AggregateSlot* s = g.view.aggregate(ts->index, r);
    const uint64_t v = g.request_metric[r] == uint8_t(proto::Metric::kInstances) ? 1 : dt;
    if (s->count == 0 || v < s->min) s->min = v;
    if (v > s->max) s->max = v;
    s->sum += v;
    s->count += 1;
  }
  for (uint32_t i = 0; i < p.n_prof; ++i) {
    proto::ProfileSlot* s = g.view.profile_row(g.plan_slices[p.prof_begin + i], ts->index) + region;
    s->calls += 1;
    if (outermost) s->inclusive += dt;
    s->exclusive += dt > child ? dt - child : 0;
  }
  rec->events += 2;
  seq_end(rec);
}

}  // namespace

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
  ThreadState* ts = enter_monitor();
  if (!ts) return;
  const uint32_t id = uint32_t(desc->id);
  if (id < g.plans.size() && g.plans[id].measure) {
    if (ts->depth < kMaxDepth) {
      Frame& f = ts->frames[ts->depth++];
      f.region = int32_t(id);
      f.profiled = g.plans[id].n_prof > 0;
      f.child = 0;
      ts->open[id] += 1;
      f.start = mri::timer::now();  // last: the monitor's own work is outside the region's time
    } else {
      ts->overflow += 1;
    }
  }
  leave(ts);
}

extern "C" void Monitor_Region_Exit_Slow(Monitor_Region_Descriptor* desc) {
  const uint64_t now = mri::timer::now();  // first: the monitor's own work is outside the region's time
  ThreadState* ts = enter_monitor();
  if (!ts) return;
  const uint32_t id = uint32_t(desc->id);
  // A thread parked in enter_monitor() had its frames shifted by the parked
  // time; `now` predates the park, so it needs no correction.
  if (id < g.plans.size()) {
    // Find this region's frame; frames above it belong to subregions whose
    // exits were never seen (longjmp, an exception through C code).
    int32_t k = int32_t(ts->depth) - 1;
    while (k >= 0 && ts->frames[k].region != int32_t(id)) --k;
    if (k >= 0) {
      while (int32_t(ts->depth) - 1 > k) ts->open[ts->frames[--ts->depth].region] -= 1;
      const Frame f = ts->frames[--ts->depth];
      const uint32_t still_open = (ts->open[id] -= 1);
      const RegionPlan& p = g.plans[id];
      const uint64_t dt = now > f.start ? now - f.start : 0;
      if (p.measure) accumulate(ts, p, id, dt, f.child, still_open == 0);
      if (f.profiled) {
        for (int32_t j = int32_t(ts->depth) - 1; j >= 0; --j)
          if (ts->frames[j].profiled) {
            ts->frames[j].child += dt;
            break;
          }
      }
    } else if (ts->overflow > 0) {
      ts->overflow -= 1;
    } else if (g.plans[id].measure) {
      // Entered before its requests were in place.
      std::atomic_ref<uint32_t>(g.view.header()->app.unmatched_exits).fetch_add(1);
    }
    if (int32_t(id) == g.breakpoint &&
        try_stop_world(mri::proto::StopReason::kBreakpoint, int32_t(id), ts)) {
      // Stay here until released; enter_monitor() parks us.
      leave(ts);
      ThreadState* again = enter_monitor();
      if (again) leave(again);
      return;
    }
  }
  leave(ts);
}

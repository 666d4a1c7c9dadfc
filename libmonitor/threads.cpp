// threads.cpp - overhead compensation across pthread_create and
// pthread_join (seed paper 001, section 5: a thread that waits for another
// also waits for the other's measurement overhead).
//
// Every thread has an overhead clock (ThreadState::overhead_clock): how
// much earlier it would be at this point without the monitor. Compensation
// removes the growth of that clock from the regions open on the thread.
// Across threads the clock is carried like a Lamport clock:
//
// - pthread_create: the new thread starts with its creator's clock (it
//   would have been created that much earlier);
// - pthread_join: the joiner arrives at t0, the joined thread ended at
//   t_end. Without the monitor they would have been at t0 - O_joiner and
//   t_end - O_joined, and the join would have returned at the later of the
//   two (plus the same wake-up latency as now). The joiner's clock grows
//   by min(t_end - t0, O_joined - O_joiner) when that is positive: the part
//   of its wait that was the other thread's overhead. A negative value (the
//   joiner would have waited longer without the monitor) is left alone:
//   compensated times never exceed raw ones.
// - pthread_barrier_wait: each of the N threads of one round of the
//   barrier arrives at a_i with clock O_i. The barrier opened at A = max
//   a_i; without the monitor it would have opened at V = max (a_i - O_i),
//   and every thread leaves it together, A - V later than it would have:
//   a thread whose clock is smaller grows it to A - V (the join's rule
//   above is the same for two threads). pthread_barrier_init records N;
//   the arrivals are counted under a mutex, so that each lands in its
//   round even when no tool is there (arrivals uncounted then would shift
//   every later round's grouping).
//
// A thread whose clock is ahead of A - V (it had more overhead, and waited
// at the barrier for a thread that ran slower for other reasons) would,
// without the monitor, have waited longer: from there on it is only A - V
// earlier than now. Its clock does not go back (compensation removes the
// clock's growth from open regions, and must not add time to them); the
// difference goes to t_ahead, and what the thread hands on at a create,
// a join or a barrier is its lag, the clock less t_ahead. Without that, a
// thread kept across many barriers would hand a faster thread, at a later
// barrier, overhead that a slower one had already made up for.
//
// The functions are interposed: libmonitor is linked into the
// application, ahead of libc, so the program's calls come here first, and
// dlsym(RTLD_NEXT) finds the real ones (a sanitizer's interceptors, if
// any, come before us and reach us the same way). Neither touches the
// start routine: the new thread takes its creator's clock at its first
// event (register_thread), and a thread's end is noted by the monitor's
// thread-exit destructor (also after pthread_exit). A thread without
// events leaves no end, and its joiner is not compensated for it: its
// clock is its creator's, which is usually the joiner itself.
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "monitor_internal.h"

namespace mri::monitor {
namespace {

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using JoinFn = int (*)(pthread_t, void**);
using BarrierInitFn = int (*)(pthread_barrier_t*, const pthread_barrierattr_t*, unsigned);
using BarrierFn = int (*)(pthread_barrier_t*);

// The function an interposed one stands for (libc's, or a sanitizer's
// interceptor), looked up once by each caller's static.
template <typename Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// A thread's end as a joiner needs it: when (ticks of the clock in use
// then) and its overhead clock at that moment.
struct End {
  uint64_t at;
  uint64_t overhead;
  bool tsc;
};

// Both tables never freed: threads may end during exit.
std::mutex g_mutex;
// A new thread -> its creator's clock, until the thread's first event.
std::unordered_map<pthread_t, uint64_t>* g_inherited = nullptr;
// A joinable thread that ended -> its end, until it is joined.
std::unordered_map<pthread_t, End>* g_ends = nullptr;

// Set once either table exists: until then a join has nothing to find, and
// a program that never had a tool joins without the lock.
std::atomic<bool> g_tables{false};

// Grown at joins before the thread's first event, until register_thread().
thread_local uint64_t t_joined_before_state = 0;

// The part of this thread's overhead clock that barriers found it made up
// for by waiting (above; fixed point).
thread_local uint64_t t_ahead = 0;

// How much earlier this thread would be now without the monitor.
uint64_t lag(uint64_t clock) { return clock > t_ahead ? clock - t_ahead : 0; }

bool joinable_self() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return true;
  int state = PTHREAD_CREATE_JOINABLE;
  pthread_attr_getdetachstate(&attr, &state);
  pthread_attr_destroy(&attr);
  return state == PTHREAD_CREATE_JOINABLE;
}

uint64_t inherited(bool take) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_inherited) return 0;
  auto it = g_inherited->find(pthread_self());
  if (it == g_inherited->end()) return 0;
  const uint64_t v = it->second;
  if (take) g_inherited->erase(it);
  return v;
}

// One barrier: its thread count and, for the round in progress and the one
// before (a thread may still read that one after the barrier let it go),
// the latest arrival A and the latest arrival less its clock V (fixed
// point, kOverheadFracBits). A thread reads its round before it can arrive
// at the next, so the round after next never overwrites what it reads.
struct Barrier {
  uint64_t id = 0;  // which pthread_barrier_init made it (an address may be used again)
  unsigned count = 0;
  uint64_t arrivals = 0;
  struct Round {
    uint64_t last = 0;   // A
    uint64_t virt = 0;   // V
    bool tsc = false;    // the clock of its first arrival
    bool mixed = false;  // an arrival on the other clock, or with no tool there: left alone
  } round[2];
};
// The barriers of the process (not process-shared ones: the arrivals of
// other processes are not counted here). Under g_mutex, never freed.
std::unordered_map<const pthread_barrier_t*, Barrier>* g_barriers = nullptr;
uint64_t g_barrier_ids = 0;  // under g_mutex

// Under g_mutex: the barrier's entry, or nullptr.
Barrier* find_barrier(const pthread_barrier_t* barrier) {
  if (!g_barriers) return nullptr;
  auto it = g_barriers->find(barrier);
  return it == g_barriers->end() ? nullptr : &it->second;
}

}  // namespace

uint64_t initial_overhead_clock() {
  const uint64_t v = inherited(true) + t_joined_before_state;
  t_joined_before_state = 0;
  return v;
}

uint64_t overhead_clock_before_state() { return inherited(false) + t_joined_before_state; }

void add_overhead_before_state(uint64_t fixed) { t_joined_before_state += fixed; }

void thread_ended(const ThreadState* ts) {
  const End end{ticks(), lag(ts->overhead_clock.load(std::memory_order_relaxed)), g.tsc};
  if (!joinable_self()) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_ends) g_ends = new std::unordered_map<pthread_t, End>;
  g_tables.store(true, std::memory_order_relaxed);
  (*g_ends)[pthread_self()] = end;
}

}  // namespace mri::monitor

using namespace mri::monitor;

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                                     void* (*routine)(void*), void* arg) {
  static const CreateFn create = real<CreateFn>("pthread_create");
  if (!create) return EAGAIN;
  const uint32_t mode = g.mode.load(std::memory_order_relaxed);
  if (mode != kRunning && mode != kStopped) return create(thread, attr, routine, arg);  // no tool: nothing to carry
  const uint64_t clock = lag(thread_overhead_clock());
  // Held across the creation: the new thread's first event, which takes
  // its entry, cannot come before the entry is there.
  std::lock_guard<std::mutex> lock(g_mutex);
  const int rc = create(thread, attr, routine, arg);
  if (rc == 0) {
    if (!g_inherited) g_inherited = new std::unordered_map<pthread_t, uint64_t>;
    g_tables.store(true, std::memory_order_relaxed);
    (*g_inherited)[*thread] = clock;
  }
  return rc;
}

extern "C" __attribute__((visibility("default"))) int pthread_join(pthread_t thread, void** result) {
  static const JoinFn join = real<JoinFn>("pthread_join");
  if (!join) return EINVAL;
  // Dormant (no tool now, and none that created or saw the end of a
  // thread): the real join alone. A table that appears during the wait
  // (the tool attached meanwhile) still loses the joined thread's entries
  // below, uncompensated.
  const uint32_t mode = g.mode.load(std::memory_order_relaxed);
  const bool armed = mode == kRunning || mode == kStopped || g_tables.load(std::memory_order_relaxed);
  const uint64_t t0 = armed ? ticks() : 0;
  const bool t0_tsc = g.tsc;
  const uint64_t before = armed ? lag(thread_overhead_clock()) : 0;
  const int rc = join(thread, result);
  if (rc != 0 || !g_tables.load(std::memory_order_relaxed)) return rc;
  End end;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_inherited) g_inherited->erase(thread);  // it never had an event
    if (!g_ends) return rc;
    auto it = g_ends->find(thread);
    if (it == g_ends->end()) return rc;
    end = it->second;
    g_ends->erase(it);
  }
  if (!armed) return rc;
  // Both times on one clock (the monitor switches to the TSC when it
  // starts), the joined thread ended after the joiner arrived, and it had
  // more overhead behind it: the joiner waited for some of it.
  if (end.tsc != t0_tsc || end.at <= t0 || end.overhead <= before) return rc;
  const uint64_t waited = (end.at - t0) << kOverheadFracBits;
  const uint64_t more = end.overhead - before;
  add_thread_overhead(waited < more ? waited : more);
  return rc;
}

extern "C" __attribute__((visibility("default"))) int pthread_barrier_init(pthread_barrier_t* barrier,
                                                                           const pthread_barrierattr_t* attr,
                                                                           unsigned count) {
  static const BarrierInitFn init = real<BarrierInitFn>("pthread_barrier_init");
  if (!init) return EINVAL;
  const int rc = init(barrier, attr, count);
  if (rc != 0) return rc;
  int shared = PTHREAD_PROCESS_PRIVATE;
  if (attr) pthread_barrierattr_getpshared(attr, &shared);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_barriers) g_barriers = new std::unordered_map<const pthread_barrier_t*, Barrier>;
  if (shared == PTHREAD_PROCESS_PRIVATE) {
    Barrier& b = (*g_barriers)[barrier];
    b = Barrier{};
    b.id = ++g_barrier_ids;
    b.count = count;
  } else {
    g_barriers->erase(barrier);  // an earlier barrier at that address
  }
  return rc;
}

extern "C" __attribute__((visibility("default"))) int pthread_barrier_destroy(pthread_barrier_t* barrier) {
  static const BarrierFn destroy = real<BarrierFn>("pthread_barrier_destroy");
  if (!destroy) return EINVAL;
  const int rc = destroy(barrier);
  if (rc == 0) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_barriers) g_barriers->erase(barrier);
  }
  return rc;
}

extern "C" __attribute__((visibility("default"))) int pthread_barrier_wait(pthread_barrier_t* barrier) {
  static const BarrierFn wait = real<BarrierFn>("pthread_barrier_wait");
  if (!wait) return EINVAL;
  const uint32_t mode = g.mode.load(std::memory_order_relaxed);
  const bool armed = mode == kRunning || mode == kStopped;
  const uint64_t at = ticks();
  const bool tsc = g.tsc;
  const uint64_t clock = armed ? lag(thread_overhead_clock()) : 0;
  uint64_t round = 0, id = 0;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (Barrier* b = find_barrier(barrier)) {
      const uint64_t arrival = b->arrivals++;
      const uint64_t virt = (at << kOverheadFracBits) - clock;
      id = b->id;
      round = arrival / b->count;
      Barrier::Round& r = b->round[round & 1];
      if (arrival % b->count == 0) {  // the round's first arrival
        r = Barrier::Round{at, virt, tsc, !armed};
      } else {
        r.last = at > r.last ? at : r.last;
        r.virt = virt > r.virt ? virt : r.virt;
        r.mixed = r.mixed || !armed || tsc != r.tsc;
      }
    }
  }
  const int rc = wait(barrier);
  if (id == 0 || !armed || (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD)) return rc;
  Barrier::Round r;
  {
    // The barrier may be gone already, or made anew at the same address
    // (a thread let go may destroy it at once): then nothing is carried.
    std::lock_guard<std::mutex> lock(g_mutex);
    const Barrier* b = find_barrier(barrier);
    if (!b || b->id != id) return rc;
    r = b->round[round & 1];
  }
  if (r.mixed) return rc;
  const uint64_t leave = (r.last << kOverheadFracBits) - r.virt;  // A - V
  if (leave > clock)
    add_thread_overhead(leave - clock);
  else
    t_ahead += clock - leave;
  return rc;
}

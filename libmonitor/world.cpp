// world.cpp - stopping the world: every application thread out of the
// monitor (quiesce: the membarrier handshake with the threads' in_slow
// flags), parked at its next event (try_stop_world), and, for an end that
// does not come from a program thread, the bounded wait for the threads
// still running program code to park (stop_world_for_an_end).
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <vector>

#include "monitor_internal.h"
#include "mri_sync.h"

namespace mri::monitor {
namespace {

using proto::AppState;
using proto::StopReason;

constexpr uint64_t kQuiesceWarnNs = 2'000'000'000ull;

// Waits, at most kEndParkWaitNs, for every program thread still running
// program code (not parked) to park at its next event: the world is
// stopped and every region armed. Called before an end that does not come
// from a program thread (the tool's MRI_Application_Finish, a termination
// signal): a thread that parks has handed its buffered references over
// first (hot_path.cpp), and its instances then end where it parked, so
// what it recorded since its last event is not lost (up to a batch of 4096
// references a thread before). Looks every 100 us. A thread counts as
// running when it used CPU time since the look before, or its task state
// is 'R' (runnable: it may be kept off a CPU) or 'D' (a short wait in the
// kernel it returns from, such as a file's unlink under I/O load); every
// thread does while one hands references over to the simulator (a thread
// on its way to park hands them over first, and may sleep meanwhile,
// waiting for the simulation thread). The wait ends once kEndQuietLooks
// looks in a row, over kEndQuietNs at least, saw none. The state alone,
// looked at once, was not enough: a thread inside a system call looked
// blocked (the end came at once and said nothing, in one CI run), and on
// a loaded machine the looks come when the threads that share this
// thread's CPU sleep, so a thread that sleeps a little and runs a little
// never looked 'R' (test_thread_asleep_at_the_end_is_waited_for). A
// thread that stays blocked in the kernel is not waited for, nor one that
// reaches no event in time (a spin loop without regions, or a thread the
// machine's load keeps off a CPU): the end comes for them as before.
// The quiet time is 5 ms: a host may keep a sleeping thread's CPU from
// waking for over 1 ms, and a shorter quiet time took a thread between its
// slices of program code for blocked (1 ms missed 896 of 1024 in
// test_thread_asleep_at_the_end_is_waited_for under ThreadSanitizer). Returns how many
// threads were still running program code when the wait gave up (late;
// 0: none) and, when it did not give up, how many threads it passed that
// ran during the wait, between its looks, and are neither parked nor
// ended (passed): each may have recorded references since its last event
// before it blocked.
constexpr uint64_t kEndParkWaitNs = 100'000'000ull;
constexpr uint64_t kEndQuietNs = 5'000'000ull;
constexpr uint32_t kEndQuietLooks = 10;
struct EndWait {
  uint32_t late = 0, passed = 0;
};
EndWait wait_for_running_threads_to_park() {
  if (!g.view.base) return {};
  const uint64_t start = sync::monotonic_ns(), deadline = start + kEndParkWaitNs;
  uint64_t busy_at = start;       // the last look that saw a thread running (none yet: the quiet time counts from here)
  uint32_t quiet_looks = 0;       // looks in a row that saw none
  std::vector<uint64_t> cpu_was;  // each thread's CPU time at the look before (0: not looked at)
  std::vector<uint8_t> ran;       // whether it used CPU time between two looks
  // A thread looked at now that is neither parked nor ended: its row.
  const auto unparked = [](uint32_t i) -> const proto::ThreadRecord* {
    const ThreadState* ts = g.threads[i].load(std::memory_order_acquire);
    if (!ts || ts->parked_since.load(std::memory_order_relaxed) != 0) return nullptr;
    // Its row (its thread id is written before the status says alive),
    // not ts->record: a thread's first event may be publishing it now.
    const proto::ThreadRecord* rec = g.view.thread(i);
    return sync::load(rec->status) == uint32_t(proto::ThreadStatus::kAlive) ? rec : nullptr;
  };
  for (;;) {
    const uint64_t now = sync::monotonic_ns();
    const bool late = now > deadline;
    uint32_t running = 0;
    const uint32_t n = std::min(g.next_thread.load(), g.view.g.max_threads);
    if (cpu_was.size() < n) cpu_was.resize(n, 0), ran.resize(n, 0);
    for (uint32_t i = 0; i < n; ++i) {
      const proto::ThreadRecord* rec = unparked(i);
      if (!rec) continue;
      const pid_t tid = pid_t(rec->os_tid);
      const uint64_t cpu = thread_cpu_ns(tid), was = cpu_was[i];
      cpu_was[i] = cpu;
      if (cpu != 0 && was != 0 && cpu != was) {
        ran[i] = 1;
        ++running;
        continue;
      }
      if (running > 0 && !late) continue;  // one is enough until the deadline: no file to read
      const char state = task_state(tid);
      if (state == 'R' || (state == 'D' && !late)) ++running;
    }
    if (late) return {running, 0};
    if (running > 0 || sources_busy() > 0) {
      busy_at = now;
      quiet_looks = 0;
    } else if (++quiet_looks >= kEndQuietLooks && now - busy_at >= kEndQuietNs) {
      EndWait quiet;
      for (uint32_t i = 0; i < ran.size(); ++i) quiet.passed += ran[i] && unparked(i);
      return quiet;
    }
    usleep(100);
  }
}

}  // namespace

// The world stopped for an end that does not come from a program thread
// (the tool's terminate command, a termination signal): every region
// armed, no thread inside the monitor, the threads running program code
// parked or given up on (wait_for_running_threads_to_park). Does
// nothing when monitoring is neither running nor stopped. Needs
// control_mutex.
void stop_world_for_an_end() {
  uint32_t expected = kRunning;
  if (!g.mode.compare_exchange_strong(expected, kStopped, std::memory_order_seq_cst) && expected != kStopped)
    return;
  arm_all(1);
  quiesce(nullptr);
  const EndWait wait = wait_for_running_threads_to_park();
  // What such a thread recorded since its last event, and has not handed
  // over to a source, is lost (the ending thread cannot reach it): the
  // sources say what that costs them.
  if (wait.late > 0 || wait.passed > 0)
    sources_threads_not_waited_for(wait.late, wait.passed, uint32_t(kEndParkWaitNs / 1'000'000),
                                   uint32_t(kEndQuietNs / 1'000'000));
}

void for_each_thread(void (*fn)(ThreadState*)) {
  const uint32_t n = std::min(g.next_thread.load(), g.view.g.max_threads);
  for (uint32_t i = 0; i < n; ++i)
    if (ThreadState* ts = g.threads[i].load(std::memory_order_acquire)) fn(ts);
}

void arm_all(unsigned char value) {
  std::lock_guard<std::mutex> lock(g.registry_mutex);
  for (auto* d : g.descriptors) __atomic_store_n(&d->armed, value, __ATOMIC_RELAXED);
}

void quiesce(const ThreadState* self) {
  // Pairs with the compiler barrier (or fence) after a thread sets in_slow.
  if (g.use_membarrier)
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint32_t n = std::min(g.next_thread.load(), g.view.g.max_threads);
  const uint64_t t0 = sync::monotonic_ns();
  for (uint32_t i = 0; i < n; ++i) {
    ThreadState* ts = g.threads[i].load(std::memory_order_acquire);
    if (!ts || ts == self) continue;
    bool warned = false;
    while (ts->in_slow.load(std::memory_order_acquire)) {
      sched_yield();
      if (!warned && sync::monotonic_ns() - t0 > kQuiesceWarnNs) {
        std::fprintf(stderr, "mri-monitor: thread %u is slow to leave the monitor\n", i);
        warned = true;
      }
    }
  }
  // Every thread is outside the monitor (or is the caller): their ring heads
  // are stable, and the tool gets to see all of their records.
  if (g.view.base)
    for (uint32_t i = 0; i < n; ++i)
      if (ThreadState* ts = g.threads[i].load(std::memory_order_acquire)) trace_publish_head(ts);
}

bool try_stop_world(StopReason reason, int32_t region, const ThreadState* self, int64_t ack) {
  uint32_t expected = kRunning;
  if (!g.mode.compare_exchange_strong(expected, kStopped, std::memory_order_seq_cst)) return false;
  arm_all(1);
  quiesce(self);
  publish_state(AppState::kStopped, reason, region, true, ack);
  return true;
}

}  // namespace mri::monitor

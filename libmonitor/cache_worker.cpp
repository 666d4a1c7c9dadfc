// cache_worker.cpp - simulation on a thread of its own, overlapping the
// program (the cache-simulator backend, cache.cpp).
//
// A full buffer of references (Monitor_Cache_Simulate) is copied into one
// of kChunks chunks and the program goes on recording while the worker
// simulates; only where the monitors' counts are read or changed (the
// enter and exit of a region with cache requests, a release, an ended data
// structure, the end) does the program wait until everything it handed
// over has been simulated (cache_drain). Chunks are simulated in the order
// they were handed over, so counts are those of the synchronous path: each
// thread's references in program order, threads interleaved batch by
// batch, as before.
//
// On by default where the process may run on two CPUs or more, and used
// while fewer threads hand batches over than there are CPUs (else each
// simulates its own, as on one CPU). MRI_CACHESIM_ASYNC=0 turns it off,
// =1 uses it always. A fork()ed child simulates nothing
// (cache_after_fork): the worker is not there, and the simulator may have
// been locked by it at the fork.
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "cache_internal.h"
#include "cachesim.h"

namespace mri::monitor {
namespace {

namespace sim = mri::sim;

// 8 chunks of 4096 references (the instrumentation's batch): 512 KiB. Two
// would do for one thread; more let several threads hand over at once.
constexpr uint32_t kChunks = 8;
constexpr size_t kChunkRefs = 4096;
// Waits spin this many times (a pause each: 23 ns on the Zen 5 host, ~45
// us in all) before they sleep: a handover is a few microseconds apart
// while a program records, and waking a sleeping thread costs a system
// call on one side and, on a virtual machine, often tens of microseconds
// on the other.
constexpr int kSpins = 2000;

struct Chunk {
  sim::Hierarchy* h = nullptr;
  uint32_t core = 0;
  uint32_t part = 0;  // simulate_part(part): 1 of a split simulator, else 0 (all of it)
  size_t n = 0;
  std::atomic<bool> ready{false};  // filled: the worker may take it
  sim::Access refs[kChunkRefs];
};

// CPUs the process may run on, and threads that hand batches over now.
// The simulation thread only helps while a CPU is left for it: with as
// many recording threads as CPUs (2 of 2: is_sort with 2 threads ran 2x
// slower with it) batches are simulated in place, as without it.
int g_cpus = 1;
bool g_forced = false;  // MRI_CACHESIM_ASYNC=1: the thread whatever the CPUs
std::atomic<int> g_submitters{0};

struct Submitter {
  bool counted = false;
  ~Submitter() {
    if (counted) g_submitters.fetch_sub(1, std::memory_order_relaxed);
  }
};
thread_local Submitter t_submitter;

bool spare_cpu() { return g_submitters.load(std::memory_order_relaxed) < g_cpus; }

inline void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins on `done()`, then sleeps on `cv` until it holds. `sleepers` tells
// the other side that someone sleeps on `cv` (seq_cst on both sides: the
// waker publishes, then reads sleepers; the sleeper counts itself, then
// tests done() under the mutex, so one of them sees the other).
template <class Done>
void wait_for(std::mutex& mu, std::condition_variable& cv, std::atomic<uint32_t>& sleepers, Done done) {
  const int spins = spare_cpu() ? kSpins : 0;  // else a spinner takes the CPU the other side needs
  for (int i = 0; i < spins; ++i) {
    if (done()) return;
    pause();
  }
  std::unique_lock<std::mutex> lock(mu);
  sleepers.fetch_add(1);
  cv.wait(lock, done);
  sleepers.fetch_sub(1);
}

// Wakes whoever sleeps on `cv` (after the state it waits for was published).
void wake(std::mutex& mu, std::condition_variable& cv, const std::atomic<uint32_t>& sleepers) {
  if (sleepers.load() == 0) return;
  { std::lock_guard<std::mutex> lock(mu); }  // a sleeper is in cv.wait or will see the state
  cv.notify_all();
}

struct Worker {
  std::mutex mu;
  std::condition_variable work;  // a chunk became ready
  std::condition_variable done;  // a chunk was simulated
  std::atomic<uint32_t> work_sleepers{0}, done_sleepers{0};
  std::atomic<uint64_t> reserved{0};   // chunks handed out to callers
  std::atomic<uint64_t> completed{0};  // chunks simulated (in order)
  std::unique_ptr<Chunk[]> chunks{new Chunk[kChunks]};

  void run() {
    for (;;) {
      Chunk* c = &chunks[completed.load(std::memory_order_relaxed) % kChunks];
      wait_for(mu, work, work_sleepers, [c] { return c->ready.load(); });
      c->h->simulate_part(c->part, c->core, c->refs, c->n);
      c->ready.store(false, std::memory_order_relaxed);
      completed.fetch_add(1);
      wake(mu, done, done_sleepers);
    }
  }
};

// Created with the simulator (cache_start_worker), never destroyed: the
// worker may be waiting while the process runs its static destructors.
Worker* g_worker = nullptr;
std::once_flag g_worker_once;
// False where the worker is not used: switched off, one CPU, or the thread
// could not be created. (A fork()ed child has no simulator at all:
// cache_after_fork.)
std::atomic<bool> g_async{false};

void* worker_main(void*) {
  // The program's signals are for its own threads.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, nullptr);
  g_worker->run();
  return nullptr;
}

void start_worker() {
  cpu_set_t set;
  g_cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : int(sysconf(_SC_NPROCESSORS_ONLN));
  // The tool refuses other values at the load (libmri); started without
  // it, anything but 0 and 1 means the default.
  const char* env = std::getenv("MRI_CACHESIM_ASYNC");
  const bool off = env && std::strcmp(env, "0") == 0;
  g_forced = env && std::strcmp(env, "1") == 0;
  const bool wanted = !off && (g_forced || g_cpus >= 2);
  if (!wanted) return;
  g_worker = new Worker;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  const bool started = pthread_create(&thread, &attr, worker_main, nullptr) == 0;
  pthread_attr_destroy(&attr);
  if (!started) return;
  pthread_setname_np(thread, "mri-cachesim");
  g_async.store(true, std::memory_order_release);
}

}  // namespace

bool cache_start_worker() {
  std::call_once(g_worker_once, start_worker);
  return g_async.load(std::memory_order_acquire);
}

namespace {
void simulate_here(sim::Hierarchy* h, uint32_t core, uint32_t part, const sim::Access* refs, size_t n) {
  if (part == kAllParts) h->simulate(core, refs, n);
  else h->simulate_part(part, core, refs, n);
}
}  // namespace

void cache_submit(sim::Hierarchy* h, uint32_t core, uint32_t part, const sim::Access* refs, size_t n) {
  if (!g_async.load(std::memory_order_acquire)) return simulate_here(h, core, part, refs, n);
  if (!t_submitter.counted) {
    t_submitter.counted = true;
    g_submitters.fetch_add(1, std::memory_order_relaxed);
  }
  const bool split = h->parts() > 1;
  // Part 0 of a split simulator is always simulated by the program's
  // threads: the simulation thread has only part 1, so neither part's
  // order depends on where the other's batches go. (Handing part 0 over
  // too whenever the simulation thread ran out of work made both matrix
  // multiplies slower: docs/PERFORMANCE.md, "Split simulation".)
  if (split && part == 0) return h->simulate_part(0, core, refs, n);
  if ((!g_forced && !spare_cpu()) || (split && part == kAllParts)) {
    // In place, after what this thread handed over before (its
    // references stay in order).
    cache_drain();
    return simulate_here(h, core, part, refs, n);
  }
  Worker& w = *g_worker;
  while (n > 0) {
    const size_t take = n < kChunkRefs ? n : kChunkRefs;
    const uint64_t slot = w.reserved.fetch_add(1);
    // The slot is ours once the worker has simulated what it held before.
    wait_for(w.mu, w.done, w.done_sleepers, [&] { return slot - w.completed.load() < kChunks; });
    Chunk* c = &w.chunks[slot % kChunks];
    std::memcpy(c->refs, refs, take * sizeof(sim::Access));
    c->h = h;
    c->core = core;
    c->part = split ? 1 : 0;
    c->n = take;
    c->ready.store(true);
    wake(w.mu, w.work, w.work_sleepers);
    refs += take;
    n -= take;
  }
}

void cache_drain() {
  if (!g_async.load(std::memory_order_acquire)) return;
  Worker& w = *g_worker;
  const uint64_t target = w.reserved.load();
  wait_for(w.mu, w.done, w.done_sleepers, [&] { return w.completed.load() >= target; });
}

}  // namespace mri::monitor

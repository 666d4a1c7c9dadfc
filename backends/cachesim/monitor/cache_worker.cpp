// cache_worker.cpp - simulation on a thread of its own, overlapping the
// program (the cache simulator's source, cachesim_source.cpp; why and what
// it gains: docs/design/0008-simulation-thread.md).
//
// A full buffer of references (Monitor_Cache_Simulate) is copied into one
// of kChunks chunks and the program goes on recording while the worker
// simulates; only where the monitors' counts are read or changed (the
// enter and exit of a region with cache requests, a release, an ended data
// structure, the end) does the program wait until everything it handed
// over has been simulated (cache_drain). Chunks are simulated in the order
// they were handed over, so counts are those of the synchronous path: each
// thread's references in program order, threads interleaved batch by
// batch, as simulated in place.
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
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "cache_internal.h"
#include "cachesim.h"
#include "services.h"
#include "split_judge.h"

namespace mri::monitor::cachesim {
namespace {

// 8 chunks of 4096 references (the instrumentation's batch): 512 KiB. Two
// would do for one thread; more let several threads hand over at once.
constexpr uint32_t kChunks = 8;
constexpr size_t kChunkRefs = 4096;
// Waits spin this many times (a pause each, about 0.5 ms in all) before
// they sleep: a hand-over is a few microseconds apart while a program
// records, a chunk takes the simulation thread 50-120 us, and waking a
// sleeping thread costs a system call on one side and, on a virtual
// machine, tens of microseconds to milliseconds on the other. 20000
// pauses against 2000 (about 56 us): the matrix multiplies and the
// bench/compensation workloads under the simulator 10-13% faster
// (docs/design/0008-simulation-thread.md, "The spin's length").
constexpr int kSpins = 20000;
// A spinner yields its CPU every so many pauses (about 10 us): the
// scheduler sometimes keeps the program's thread and the simulation
// thread on one CPU for milliseconds, and a spin that never yields keeps
// the other side off it. Yielding every 512 pauses against never: the
// C-monitored multiply of bench/matmul.c in 179.2 ms against 194.9 (ijk)
// and 67.9 against 70.7 (ikj), medians of 15 alternating runs
// (docs/design/0008-simulation-thread.md, "The yield").
constexpr int kYieldEvery = 512;

struct Chunk {
  sim::Hierarchy* h = nullptr;
  uint32_t core = 0;
  uint32_t part = 0;  // simulate_part(part), or kAllParts: simulate()
  size_t n = 0;
  sim::Condensed dropped;  // references condensed out (Hierarchy::condense), not among the n
  std::atomic<bool> ready{false};  // filled: the worker may take it
  sim::Access refs[kChunkRefs];
};

// CPUs the process may run on, and threads that hand batches over now.
// The simulation thread only helps while a CPU is left for it: with as
// many recording threads as CPUs, batches are simulated in place, as
// without it (is_sort of bench/compensation with 2 threads on 2 CPUs:
// 3.42 s so, 6.75 s with the simulation thread as a third busy thread;
// docs/design/0008-simulation-thread.md, "Only while a CPU is spare").
int g_cpus = 1;
bool g_forced = false;  // MRI_CACHESIM_ASYNC=1: the thread whatever the CPUs
std::atomic<int> g_submitters{0};

// The automatic split (simulator_setup.cpp, split_of) is tried, kept or undone from
// measurements over windows of MRI_CACHESIM_SPLIT_AFTER batches handed
// over by one thread (default 32, about 128k references: a millisecond or
// two; 0: split at the first hand-over, unmeasured, for good), decide_split.
uint32_t g_split_after = 32;
// MRI_CACHESIM_SPLIT_LOG=1: a line on stderr at the end of each window
// (decide_split), to see what the automatic split does with a program.
bool g_split_log = false;
// Whole batches are condensed as they are handed over
// (Hierarchy::condense: the references that can only hit the most recent
// way of their L1 set are counted, not copied) while the simulation
// thread is behind: more than kBehind chunks wait for it, so the program's
// thread would soon wait for a free one. Condensing costs the program's
// thread about 1.3 ns a reference where the copy costs 0.2-0.6, and
// spares the simulation thread about half of its work on a unit-stride
// loop: the C-monitored ikj multiply runs 8.0x native so against 10.0x
// never condensed (bash bench/run_cachesim_slowdown.sh, docs/PERFORMANCE.md);
// condensing every batch makes the program's thread the slower side
// (docs/design/0011-condensed-batches.md, which also has the threshold's
// measurements). MRI_CACHESIM_CONDENSE=0 never condenses, =1 condenses every
// whole batch; unset or auto, as above. (Batches sorted by part for a
// split are not condensed.) A batch is condensed for the monitors enabled
// at the hand-over; its own thread drains before it changes them, and
// another thread's monitors count only that thread's references
// (MonitorSpec::thread), also where threads outnumber the configured
// cores and share one.
enum class Condense { kNever, kAlways, kBehind };
Condense g_condense = Condense::kBehind;
constexpr uint64_t kBehind = kChunks / 4;
// The simulation thread's time in whole batches, with their references.
std::atomic<uint64_t> g_sim_ticks{0}, g_sim_refs{0};

// A thread's buffers for sorting a batch by part (hand_over_sorted): part
// 0's, then part 1's; the first also for condensing one (hand_over).
// Handed back to a pool at the thread's end (submitter_gone) and never
// freed: the main thread's last batch is handed over during exit()
// (Monitor_Final), where no key destructor runs.
struct SortBuffers {
  SortBuffers* next = nullptr;
  sim::Access refs[2 * kChunkRefs];
};
std::mutex g_sort_pool_mutex;
SortBuffers* g_sort_pool = nullptr;
thread_local SortBuffers* t_sort = nullptr;

// Set when the thread's submitter_gone() ran. A batch the thread hands
// over after that gives its sort buffers back at once: the backend's last
// flush of a thread can come in a later key destructor than this one.
thread_local bool t_submitter_gone = false;
// Whether the thread counts in g_submitters (from its first hand-over).
thread_local bool t_counted = false;
pthread_key_t g_submitter_key;

void release_sort_buffers() {
  if (!t_sort) return;
  std::lock_guard<std::mutex> lock(g_sort_pool_mutex);
  t_sort->next = g_sort_pool;
  g_sort_pool = t_sort;
  t_sort = nullptr;
}

// The thread's end as a submitter: a pthread key destructor, where a C++
// thread_local destructor would be too early. glibc runs the thread_local
// destructors first, then the key destructors, in rounds for as long as
// values are set. The cache-simulator backend flushes a thread's last
// references from its own key destructor (everything the thread recorded,
// for a thread without regions or beyond max_threads): a thread whose
// first hand-over was that flush counted itself after its thread_local
// destructors had run, and stayed counted. Each such thread took a CPU
// from spare_cpu() for good (50 threads of one reference each left the
// count at 50: every later batch of the program was simulated in place),
// and kept its sort buffers. count_submitter() sets this key's value, so
// glibc runs this even when that happens inside a key destructor: later in
// the same round (a key created after the backend's), or in the next.
void submitter_gone(void*) {
  g_submitters.fetch_sub(1, std::memory_order_relaxed);
  release_sort_buffers();
  t_submitter_gone = true;  // t_counted stays set: a later batch does not count again
}

void count_submitter() {
  if (__builtin_expect(t_counted, 1)) return;
  t_counted = true;
  g_submitters.fetch_add(1, std::memory_order_relaxed);
  if (pthread_setspecific(g_submitter_key, &t_counted) != 0) g_submitters.fetch_sub(1, std::memory_order_relaxed);
}

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
    if (i % kYieldEvery == kYieldEvery - 1) sched_yield();
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
      if (c->part == kAllParts) {
        const uint64_t t0 = now_ticks();
        c->h->simulate(c->core, c->refs, c->n, c->dropped);
        g_sim_ticks.fetch_add(now_ticks() - t0, std::memory_order_relaxed);
        g_sim_refs.fetch_add(c->n + c->dropped.reads + c->dropped.writes, std::memory_order_relaxed);
      } else {
        c->h->simulate_part(c->part, c->core, c->refs, c->n);
      }
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

std::atomic<pid_t> g_worker_tid{0};

void* worker_main(void*) {
  g_worker_tid.store(gettid(), std::memory_order_relaxed);
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
  if (const char* after = std::getenv("MRI_CACHESIM_SPLIT_AFTER"); after && *after) {
    char* end = nullptr;
    const unsigned long k = std::strtoul(after, &end, 10);
    if (end != after && *end == '\0' && k <= 1000000) g_split_after = uint32_t(k);
  }
  const char* log = std::getenv("MRI_CACHESIM_SPLIT_LOG");
  g_split_log = log && std::strcmp(log, "1") == 0;
  // (libmri refuses other values than 0, 1 and auto at the load.)
  if (const char* c = std::getenv("MRI_CACHESIM_CONDENSE"); c && std::strcmp(c, "0") == 0)
    g_condense = Condense::kNever;
  else if (c && std::strcmp(c, "1") == 0)
    g_condense = Condense::kAlways;
  const bool wanted = !off && (g_forced || g_cpus >= 2);
  if (!wanted) return;
  if (pthread_key_create(&g_submitter_key, submitter_gone) != 0) return;  // simulated in place
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

pid_t cache_worker_tid() { return g_worker_tid.load(std::memory_order_relaxed); }

bool cache_start_worker() {
  std::call_once(g_worker_once, start_worker);
  return g_async.load(std::memory_order_acquire);
}

namespace {
void simulate_here(sim::Hierarchy* h, uint32_t core, uint32_t part, const sim::Access* refs, size_t n) {
  if (part == kAllParts) h->simulate(core, refs, n);
  else h->simulate_part(part, core, refs, n);
}

// This thread has handed whole batches (kAllParts) over that may not be
// simulated yet: before it simulates part 0 of a later batch itself, they
// must be (its references in order). Cleared by cache_drain().
thread_local bool t_whole_pending = false;

// This thread is condensing a batch into its sort buffer (hand_over).
thread_local bool t_condensing = false;

// This thread's window for the automatic split, and what it learnt.
struct Pace {
  uint64_t last = 0;   // ticks at the end of the previous hand-over; 0: the window restarts
  uint64_t start = 0;  // the end of the hand-over before the window's first
  uint64_t own = 0, refs = 0;  // the program's own time between hand-overs; references handed over
  uint32_t batches = 0;
  bool split = false;  // the window's state
  uint64_t number = 0;  // windows ended
  SplitJudge judge;
  uint64_t sim_ticks = 0, sim_refs = 0;  // g_sim_* at the window's start
  double sort_ticks = 0;  // a sort by part, per reference, as last timed
  uint32_t sort_age = 0;  // windows that used it since (split_predicted)
};
thread_local Pace t_pace;
constexpr uint32_t kSortProbes = 64;

void restart_window(Pace& w, bool split) {
  w.own = w.refs = 0;
  w.batches = 0;
  w.split = split;
  w.last = 0;
  w.sim_ticks = g_sim_ticks.load(std::memory_order_relaxed);
  w.sim_refs = g_sim_refs.load(std::memory_order_relaxed);
}

// The calling thread's sort buffers: [2 * kChunkRefs], part 0 then part 1.
sim::Access* sort_buffers() {
  if (!t_sort) {
    std::lock_guard<std::mutex> lock(g_sort_pool_mutex);
    if (g_sort_pool) {
      t_sort = g_sort_pool;
      g_sort_pool = g_sort_pool->next;
    } else {
      t_sort = new SortBuffers;
    }
  }
  return t_sort->refs;
}

// Whether a model predicts that splitting pays: per reference, p the
// program's own time, s the simulation thread's, q a sort of this batch by
// part (timed here, the second of two: split, the buffers are in use at
// every batch). Split by M (4), the program's thread would take p + q +
// s/M and the simulation thread s(M-1)/M at the same time; the longer of
// the two must be at most 80% of the longer of p and s now. Optimistic
// (split, both sides simulate slower than that: their CPUs' caches hold
// the program's data or a part's sets, and two virtual CPUs may share a
// core), hence the trial.
bool split_predicted(sim::Hierarchy* h, Pace& w, const sim::Access* refs, size_t n) {
  const uint64_t sim_ticks = g_sim_ticks.load(std::memory_order_relaxed) - w.sim_ticks;
  const uint64_t sim_refs = g_sim_refs.load(std::memory_order_relaxed) - w.sim_refs;
  if (sim_refs == 0) return false;
  const double p = double(w.own) / double(w.refs);
  const double parts = double(h->planned_split_mask() + 1);
  const double s = double(sim_ticks) / double(sim_refs);
  auto pays = [&](double q) { return std::max(p + q + s / parts, s * (parts - 1) / parts) <= 0.8 * std::max(p, s); };
  // The sort is timed only where the rest would pay, and once in
  // kSortProbes such windows: its buffers take 128 KiB of the CPU's caches
  // from the program and the simulation (timed at every window, it makes
  // tree_walk of bench/compensation 7% slower).
  if (!pays(0)) return false;
  if (w.sort_age == 0) {
    size_t n0 = 0, n1 = 0;
    sim::Access* buffers = sort_buffers();
    const size_t m = n < kChunkRefs ? n : kChunkRefs;
    h->sort_parts(refs, m, buffers, &n0, buffers + kChunkRefs, &n1, true);
    const uint64_t t0 = now_ticks();
    h->sort_parts(refs, m, buffers, &n0, buffers + kChunkRefs, &n1, true);
    w.sort_ticks = double(now_ticks() - t0) / double(m);
  }
  w.sort_age = (w.sort_age + 1) % kSortProbes;
  return pays(w.sort_ticks);
}

// One line of MRI_CACHESIM_SPLIT_LOG: the window that ended (this
// thread's count, and the phase it was in), in ns per reference handed
// over: all told, the program's own time between hand-overs and, where it
// simulated whole batches, the simulation thread's; then the move made.
void log_window(const Pace& w, SplitJudge::Phase phase, double per_ref, SplitJudge::Move move, bool done) {
  static const char* const kPhases[] = {"joined", "trial", "control", "split"};
  const double ns = segment().header()->app.ns_per_tick;
  const uint64_t sim_refs = g_sim_refs.load(std::memory_order_relaxed) - w.sim_refs;
  const uint64_t sim_ticks = g_sim_ticks.load(std::memory_order_relaxed) - w.sim_ticks;
  char thread[48] = "";
  if (sim_refs > 0) std::snprintf(thread, sizeof thread, ", simulation thread %.2f", ns * double(sim_ticks) / double(sim_refs));
  const char* to = move == SplitJudge::Move::kNone ? ""
                   : move == SplitJudge::Move::kSplit ? (done ? " -> split" : " -> split (by another thread)")
                                                      : (done ? " -> joined" : " -> joined (by another thread)");
  std::fprintf(stderr, "mri-cachesim: tid %ld window %llu (%s): %.2f ns a reference (program %.2f%s)%s\n",
               static_cast<long>(syscall(SYS_gettid)), static_cast<unsigned long long>(w.number),
               kPhases[int(phase)], ns * per_ref, ns * double(w.own) / double(w.refs), thread, to);
}

// At the end of a window: the judge's move (split_judge.h: a trial where
// the model predicts a gain and no earlier trial asks to wait; kept when
// its faster window is at least 5% faster than the faster of the windows
// around it, else the next trial waits, twice as long each time). A trial
// that does not pay costs more than its windows: the simulator's state
// moves between the two CPUs' caches at each change (tree_walk of
// bench/compensation, whose simulation misses the CPU's caches, runs its
// trials' windows and the next ones at half speed). The ijk matrix
// multiply splits at its second or third window and stays split (4.9x
// native against 5.6x never split, bash bench/run_cachesim_slowdown.sh,
// docs/PERFORMANCE.md); ikj seldom tries; is_sort tries in its phases of
// many misses (docs/design/0009-split-by-cache-line.md).
void decide_split(sim::Hierarchy* h, const sim::Access* refs, size_t n, uint64_t now) {
  Pace& w = t_pace;
  const double per_ref = double(now - w.start) / double(w.refs);
  const SplitJudge::Phase phase = w.judge.phase();
  const SplitJudge::Move move = w.judge.end_window(per_ref, [&] { return split_predicted(h, w, refs, n); });
  bool done = false;
  if (move != SplitJudge::Move::kNone) {
    // Before a split, the whole batches handed over so far are simulated
    // while the hierarchy is still joined. Simulated after the split, each
    // of them is sorted into both parts on the simulation thread, part 0
    // under the mutex this thread now takes for every batch: without the
    // drain, the first trial window of the ikj multiply takes 9.4-12.5 ns
    // a reference against 3.7-6 with it (docs/design/0009-split-by-cache-
    // line.md, "The queue drained first").
    if (move == SplitJudge::Move::kSplit) cache_drain();
    done = move == SplitJudge::Move::kSplit ? h->split() : h->unsplit();  // false: another thread did
    w.judge.moved(done);
  }
  ++w.number;
  if (g_split_log) log_window(w, phase, per_ref, move, done);
  restart_window(w, h->split_mask() != 0);
}

// Takes a chunk slot, waiting until the worker has simulated what the slot
// held before.
Chunk* take_slot(Worker& w) {
  const uint64_t slot = w.reserved.fetch_add(1);
  wait_for(w.mu, w.done, w.done_sleepers, [&] { return slot - w.completed.load() < kChunks; });
  return &w.chunks[slot % kChunks];
}

void publish(Worker& w, Chunk* c, sim::Hierarchy* h, uint32_t core, uint32_t part, size_t n,
             const sim::Condensed& dropped = {}) {
  c->h = h;
  c->core = core;
  c->part = part;
  c->n = n;
  c->dropped = dropped;
  c->ready.store(true);
  wake(w.mu, w.work, w.work_sleepers);
}

// A whole batch to the worker, a chunk at a time.
void hand_over(sim::Hierarchy* h, uint32_t core, uint32_t part, const sim::Access* refs, size_t n) {
  Worker& w = *g_worker;
  while (n > 0) {
    const size_t take = n < kChunkRefs ? n : kChunkRefs;
    Chunk* c = take_slot(w);
    size_t kept = take;
    sim::Condensed dropped;
    // (Chunks reserved and not yet simulated, this one included.)
    const uint64_t waiting = w.reserved.load(std::memory_order_relaxed) - w.completed.load(std::memory_order_relaxed);
    if (part == kAllParts && !t_condensing &&
        (g_condense == Condense::kAlways || (g_condense == Condense::kBehind && waiting > kBehind))) {
      // Into this thread's own buffer, then copied: condensing straight
      // into the chunk, whose lines the simulation thread's CPU read
      // last, costs 1.8 ns a reference, this 1.3
      // (docs/design/0011-condensed-batches.md). (A signal handler's batch
      // handed over meanwhile is copied: the buffer is in use.)
      t_condensing = true;
      sim::Access* const local = sort_buffers();
      kept = h->condense(refs, take, local, &dropped);
      std::memcpy(c->refs, local, kept * sizeof(sim::Access));
      t_condensing = false;
    } else {
      std::memcpy(c->refs, refs, take * sizeof(sim::Access));
    }
    publish(w, c, h, core, part, kept, dropped);
    if (part == kAllParts) t_whole_pending = true;
    refs += take;
    n -= take;
  }
}

// A batch of a split simulator that the instrumentation did not sort:
// sorted into two buffers of this thread's, part 1 copied into a chunk for
// the worker and part 0 simulated here meanwhile. (Not straight into the
// chunk: its memory was read last by the worker's CPU, so every 16-byte
// store would wait for its line; the ikj multiply of bench/matmul.c takes
// 140 ms so against 63.) The sort's time, like the simulation's, is timed
// by the caller as the monitor's.
void hand_over_sorted(sim::Hierarchy* h, uint32_t core, const sim::Access* refs, size_t n) {
  sim::Access* const part0 = sort_buffers();
  sim::Access* const part1 = part0 + kChunkRefs;
  Worker& w = *g_worker;
  while (n > 0) {
    const size_t take = n < kChunkRefs ? n : kChunkRefs;
    size_t n0 = 0, n1 = 0;
    if (h->sort_parts(refs, take, part0, &n0, part1, &n1) == 0) {
      // Joined by another thread since the caller looked: a whole batch,
      // after this thread's part-1 chunks (simulate() takes any state).
      hand_over(h, core, kAllParts, refs, take);
      refs += take;
      n -= take;
      continue;
    }
    Chunk* c = take_slot(w);
    std::memcpy(c->refs, part1, n1 * sizeof(sim::Access));
    publish(w, c, h, core, 1, n1);
    if (t_whole_pending) cache_drain();  // once, after a split: the whole batches before this one first
    if (n0 > 0) h->simulate_part(0, core, part0, n0);
    refs += take;
    n -= take;
  }
}
}  // namespace

namespace {

void submit(sim::Hierarchy* h, uint32_t core, uint32_t part, const sim::Access* refs, size_t n) {
  if (!g_async.load(std::memory_order_acquire)) return simulate_here(h, core, part, refs, n);
  count_submitter();
  const bool split = h->split_mask() != 0;
  // Part 0 of a split simulator is always simulated by the program's
  // threads: the simulation thread has only part 1, so neither part's
  // order depends on where the other's batches go. (Handing part 0 over
  // too whenever the simulation thread runs out of work makes both matrix
  // multiplies slower, ijk split in halves 198 -> 211 ms:
  // docs/design/0009-split-by-cache-line.md, "Part 0 stays with the
  // program's threads".)
  if (split && part == 0) {
    if (t_whole_pending) cache_drain();
    return h->simulate_part(0, core, refs, n);
  }
  if (!g_forced && !spare_cpu()) {
    // In place, after what this thread handed over before (its
    // references stay in order).
    cache_drain();
    return simulate_here(h, core, part, refs, n);
  }
  if (!h->deferred()) {
    // Split from the start (the instrumentation sorts; a whole batch, from
    // another caller of Monitor_Cache_Simulate, is sorted here), or never.
    if (split && part == kAllParts) return hand_over_sorted(h, core, refs, n);
    return hand_over(h, core, split ? 1 : kAllParts, refs, n);
  }
  // Deferred: whole batches, split or not as the windows decide.
  if (g_split_after == 0) {
    if (split) return hand_over_sorted(h, core, refs, n);
    hand_over(h, core, kAllParts, refs, n);
    h->split();
    return;
  }
  Pace& w = t_pace;
  if (w.split != split) {  // another thread changed it: no trial of this thread's to judge
    restart_window(w, split);
    w.judge.changed_elsewhere(split);
  }
  const uint64_t start = now_ticks();
  if (w.last != 0) {
    if (w.batches == 0) w.start = w.last;
    w.own += start - w.last;
    w.refs += n;
    ++w.batches;
  }
  if (split) hand_over_sorted(h, core, refs, n);
  else hand_over(h, core, kAllParts, refs, n);
  const uint64_t end = now_ticks();
  if (w.batches >= g_split_after) decide_split(h, refs, n, end);
  w.last = now_ticks();
}

}  // namespace

void cache_submit(sim::Hierarchy* h, uint32_t core, uint32_t part, const sim::Access* refs, size_t n) {
  submit(h, core, part, refs, n);
  // The sort buffers are free again once the batch is handed over (copied
  // into chunks, or simulated here).
  if (__builtin_expect(t_submitter_gone, 0)) release_sort_buffers();
}

void cache_drain() {
  if (!g_async.load(std::memory_order_acquire)) return;
  Worker& w = *g_worker;
  const uint64_t target = w.reserved.load();
  wait_for(w.mu, w.done, w.done_sleepers, [&] { return w.completed.load() >= target; });
  t_whole_pending = false;
}

}  // namespace mri::monitor::cachesim

// recording.cpp - the instrumentation's side of the cache-simulator
// source: its registration (Monitor_Register_Cache_Backend), its batches of
// references (Monitor_Cache_Simulate, Monitor_Cache_Simulate_Part), the
// recording switch and the calibration of its cost, and the end of
// recording (the end of monitoring, a detach, a fork()ed child).
//
// Monitor_Cache_Simulate runs outside the monitor (from instrumented code)
// and touches nothing but the simulator and the count of batches in flight
// that the end of monitoring waits on (cache_stop_recording).
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "cache_internal.h"
#include "cachesim.h"
#include "mri_monitor.h"
#include "mri_sync.h"
#include "services.h"
#include "source.h"

namespace mri::monitor::cachesim {

static_assert(sizeof(Monitor_Cache_Access) == sizeof(sim::Access));
static_assert(offsetof(Monitor_Cache_Access, size) == offsetof(sim::Access, size));
static_assert(offsetof(Monitor_Cache_Access, type) == offsetof(sim::Access, type));

std::atomic<const Monitor_Cache_Backend*> g_backend{nullptr};
std::atomic<bool> g_recording{false};
std::atomic<sim::Hierarchy*> g_sim{nullptr};
bool g_backend_sorts = false;

namespace {

// The simulated thread index of the references of a thread beyond
// max_threads: no monitor's (thread indexes are below max_threads).
constexpr uint32_t kUnmonitoredThread = ~uint32_t{0};

// The end of monitoring closes the simulator (cache_stop_recording) to
// every thread but the one that ends: batches handed over after that are
// not simulated, and the end waits for those already being simulated, so
// that nothing changes a count while the end reads one request's after
// another's. A thread counts itself in flight before it looks whether the
// simulator is closed, the closer closes it before it counts who is in
// flight (both sequentially consistent): either the batch is seen or it
// is not simulated. The counter has a line of its own: every batch of
// every thread touches it, twice.
alignas(64) std::atomic<uint32_t> g_in_flight{0};
alignas(64) std::atomic<bool> g_closed{false};
thread_local bool t_closer = false;      // this thread closed the simulator and may still simulate
thread_local uint32_t t_in_flight = 0;   // this thread's batches in flight (a signal handler may nest one)

// A batch in flight, for its scope; admitted() says whether to simulate it.
class InFlight {
 public:
  InFlight() {
    g_in_flight.fetch_add(1, std::memory_order_seq_cst);
    ++t_in_flight;
    admitted_ = t_closer || !g_closed.load(std::memory_order_seq_cst);
  }
  ~InFlight() {
    --t_in_flight;
    g_in_flight.fetch_sub(1, std::memory_order_release);
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  bool admitted() const { return admitted_; }

 private:
  bool admitted_;
};

// The recording cost per memory reference (OverheadKind::kCacheSim), at the
// first release with simulated cache events, once per process (it depends
// on the code, not the requests). Simulating the references is timed where
// it happens, batch by batch (Monitor_Cache_Simulate), as is this source's
// work at region enters and exits; both go straight into the thread's
// overhead clock. What cannot be timed in place is recording each
// reference in the instrumented code (a 16-byte store and an index update
// per access): calibrated here through the backend's own callback path,
// recording against only testing the switch (the dormant instrumentation
// stays in the program either way); each batch adds n times it.
constexpr uint32_t kRecordRefs = 2048;  // references per run (fits the backend's buffer)
constexpr uint32_t kRecordRuns = 50;
bool g_cache_calibrated = false;

void calibrate_cache_recording(const Monitor_Cache_Backend* b) {
  if (g_cache_calibrated) return;
  g_cache_calibrated = true;
  if (b->version < 2 || !b->calibrate) {
    overhead_not_calibrated(proto::OverheadKind::kCacheSim, "the instrumentation cannot be calibrated (backend version 1)");
    return;
  }
  uint64_t best[2] = {UINT64_MAX, UINT64_MAX};  // [recording]
  unsigned long made = kRecordRefs;
  for (uint32_t run = 0; run < kRecordRuns; ++run)
    for (const int recording : {1, 0}) {
      const uint64_t t0 = now_ticks();
      const unsigned long n = b->calibrate(made, recording);
      const uint64_t t1 = now_ticks();
      if (n < made) {  // the buffer had less room: start over with that many
        made = n;
        best[0] = best[1] = UINT64_MAX;
        continue;
      }
      best[recording] = std::min(best[recording], t1 > t0 ? t1 - t0 : 0);
    }
  if (made < 64 || best[0] == UINT64_MAX || best[1] == UINT64_MAX) {
    overhead_not_calibrated(proto::OverheadKind::kCacheSim, "no room in the calibrating thread's reference buffer");
    return;
  }
  const double pair = best[1] > best[0] ? double(best[1] - best[0]) / double(made) : 0.0;
  publish_measured_overhead(proto::OverheadKind::kCacheSim, 0.0, pair, "per reference recorded; simulation timed in place");
}

}  // namespace

void set_recording(bool on) {
  const Monitor_Cache_Backend* b = g_backend.load(std::memory_order_acquire);
  if (!b) return;
  // The recording cost per reference is compensated; measured before the
  // first reference is recorded (once: it depends on the code, not the requests).
  if (on) calibrate_cache_recording(b);
  __atomic_store_n(b->recording, on ? 1 : 0, __ATOMIC_RELAXED);
  g_recording.store(on, std::memory_order_relaxed);
  set_before_event(cachesim_source, on);
}

uint32_t cache_batches_in_flight() { return g_in_flight.load(std::memory_order_seq_cst); }

void cache_flush_references() {
  if (const Monitor_Cache_Backend* b = g_backend.load(std::memory_order_relaxed)) b->flush();
}

void cache_after_fork() {
  // A fork()ed child is not the monitored process (child_after_fork): it
  // records and simulates nothing. Its copy of the simulator may even be
  // locked for good, by a thread of the parent's that the child does not
  // have (the simulation thread, or another thread in the middle of a
  // batch).
  g_sim.store(nullptr, std::memory_order_relaxed);
  if (const Monitor_Cache_Backend* b = g_backend.load(std::memory_order_acquire))
    __atomic_store_n(b->recording, 0, __ATOMIC_RELAXED);
  g_recording.store(false, std::memory_order_relaxed);
  set_before_event(cachesim_source, false);
}

void cache_stop_recording() {
  set_recording(false);
  if (!g_sim.load(std::memory_order_acquire)) return;
  t_closer = true;
  g_closed.store(true, std::memory_order_seq_cst);
  // The batches admitted before: simulating one takes microseconds (a
  // batch is at most a few thousand references), waiting for the
  // simulator's mutex or the simulation thread included. Bounded all the
  // same (a thread stopped by a debugger): after 2 s the end goes on.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (uint32_t spins = 0; g_in_flight.load(std::memory_order_acquire) > t_in_flight; ++spins) {
    if (spins % 64 == 63) {
      if (std::chrono::steady_clock::now() > deadline) break;
      sched_yield();
    }
  }
  cache_drain();  // and what they handed over to the simulation thread
}

void cache_finish() {
  const Monitor_Cache_Backend* b = g_backend.load(std::memory_order_acquire);
  if (!b) return;
  if (g_sim.load(std::memory_order_relaxed)) {
    b->flush();
    cache_drain();
  }
  set_recording(false);
}

void cache_publish_backend() {
  if (g_backend.load(std::memory_order_acquire) && segment().base) sync::store(app().cache_backend, 1u);
}

}  // namespace mri::monitor::cachesim

using namespace mri::monitor;
using namespace mri::monitor::cachesim;

extern "C" void Monitor_Register_Cache_Backend(const Monitor_Cache_Backend* backend) {
  // Version 1 has no calibrate member; calibrate_cache_recording checks the
  // version before reading it.
  if (!backend || backend->version < 1 || backend->version > MONITOR_CACHE_BACKEND_VERSION || !backend->recording ||
      !backend->flush)
    return;
  const Monitor_Cache_Backend* none = nullptr;
  if (!g_backend.compare_exchange_strong(none, backend)) return;
  std::lock_guard<std::mutex> control(control_mutex());  // the segment stays mapped meanwhile
  if (monitoring_attached()) cache_publish_backend();
}

extern "C" void Monitor_Cache_Simulate(const Monitor_Cache_Access* accesses, unsigned long n) {
  sim::Hierarchy* h = g_sim.load(std::memory_order_acquire);
  if (!h || !accesses || n == 0) return;
  const InFlight batch;  // not simulated once the end of monitoring has closed the simulator
  if (!batch.admitted()) return;
  ThreadState* ts = current_thread_state();  // registers a thread whose first event this is
  // Simulating is the monitor's overhead in every instance open on this
  // thread: timed here, batch by batch (a wait for another thread's batch
  // included), and with the calibrated cost of recording the n references,
  // added to the thread's overhead clock (compensation, seed paper 001).
  const uint64_t t0 = now_ticks();
  cache_submit(h, ts ? thread_index(ts) : kUnmonitoredThread, kAllParts, reinterpret_cast<const sim::Access*>(accesses), n);
  if (ts) charge_overhead(ts, t0, uint64_t(n) * overhead_pair_fixed(mri::proto::OverheadKind::kCacheSim));
}

extern "C" void Monitor_Cache_Simulate_Part(unsigned int part, const Monitor_Cache_Access* accesses, unsigned long n) {
  sim::Hierarchy* h = g_sim.load(std::memory_order_acquire);
  if (!h || !accesses || n == 0 || part >= h->parts()) return;
  const InFlight batch;  // as Monitor_Cache_Simulate
  if (!batch.admitted()) return;
  // The instrumentation sorts only where it was given the split; else its
  // part 0 is every reference (a deferred split is sorted at the hand-over).
  if (!g_backend_sorts) part = kAllParts;
  ThreadState* ts = current_thread_state();
  // As Monitor_Cache_Simulate.
  const uint64_t t0 = now_ticks();
  cache_submit(h, ts ? thread_index(ts) : kUnmonitoredThread, part, reinterpret_cast<const sim::Access*>(accesses), n);
  if (ts) charge_overhead(ts, t0, uint64_t(n) * overhead_pair_fixed(mri::proto::OverheadKind::kCacheSim));
}

// cachesim_source.cpp - simulated cache events (paper sections 3.1, 3.2
// and 7) as a measurement source of the MCC (kOwned,
// libmonitor/sdk/source.h): the monitor's half of the cache-simulator
// backend.
//
// The instrumentation (backends/cachesim) appends every load and store of
// the application to a per-thread buffer and hands full buffers to
// Monitor_Cache_Simulate(), which runs the simulator (simulator/) over the
// batch on core = the thread's monitoring index. The cache state is
// simulated for every reference while any cache request is in place.
//
// What a request measures is done with the simulator's address-range
// monitors, one per (request, thread, data structure), counting only that
// thread's references (MonitorSpec::thread: threads beyond the simulated
// cores share a core's caches, not its monitors; threads the monitor does
// not follow, beyond max_threads, are simulated as kUnmonitoredThread,
// which no monitor counts). A monitor is enabled while its thread is inside an
// instance of one of the request's regions: at the enter the thread's
// buffer is simulated first, the monitor enabled and (aggregates) its total
// noted; at the exit the buffer is simulated, the difference is the
// instance's value, and the monitor is disabled when the outermost instance
// ends. Histograms copy the monitors' bins into the thread's row then.
// Profiles keep a stack of open instances per target, as the core's frames
// do for time and counters: an instance's exclusive count is its
// inclusive count minus those of the target's instances directly inside
// it, and its caller (callpath) is the instance below it on that stack. Traces write one value
// record per instance of the requested regions and, with subregions, of
// every region entered inside one of them; their monitors count while an
// instance of a requested region is open.
//
// Concurrency: targets.h (the targets and each thread's part of them),
// recording.cpp (the batches, from instrumented code outside the monitor).
// The simulator has its own mutex.
#include <cstdint>

#include "cache_internal.h"
#include "services.h"
#include "source.h"

namespace mri::monitor {
namespace cachesim {
namespace {

bool measures(uint32_t metric) { return metric == uint32_t(proto::Metric::kCacheEvent); }

// What a thread recorded since its last event, when the end did not wait
// for it to park, is lost: the ending thread cannot reach its buffer.
void threads_not_waited_for(uint32_t late, uint32_t passed, uint32_t gave_up_after_ms, uint32_t quiet_ms) {
  if (!g_recording.load(std::memory_order_relaxed)) return;
  if (late > 0)
    note_error("the end gave up after %u ms on %u thread%s still running program code: the references each "
               "recorded since its last event (up to 4096) are not simulated",
               gave_up_after_ms, late, late == 1 ? "" : "s");
  else if (passed > 0)
    note_error("the end passed %u thread%s that ran during its wait and then did not run for %u ms: the references "
               "each recorded since its last event (up to 4096) may not be simulated",
               passed, passed == 1 ? "" : "s", quiet_ms);
}

// Before a data structure ends: the calling thread's references so far
// count for it.
void sync_thread() {
  if (!g_recording.load(std::memory_order_relaxed)) return;
  cache_flush_references();
  cache_drain();
}

}  // namespace
}  // namespace cachesim

extern const MeasurementSource cachesim_source{
    .name = "cache simulator",
    .measures = cachesim::measures,
    .kind = ValueKind::kOwned,
    .begin_release = nullptr,
    .claim = nullptr,
    .compile_owned = cachesim::cache_apply,
    .reading_names = nullptr,
    .prepare_thread = nullptr,
    .read = nullptr,
    .release_thread = nullptr,
    .before_event = cachesim::cache_flush_references,
    .enter = cachesim::cache_enter,
    .exit = cachesim::cache_exit,
    .end_open = cachesim::cache_end_open,
    .stop_recording = cachesim::cache_stop_recording,
    .finish = cachesim::cache_finish,
    .after_fork = cachesim::cache_after_fork,
    .publish = cachesim::cache_publish_backend,
    .busy = cachesim::cache_batches_in_flight,
    .own_thread_tid = cachesim::cache_worker_tid,
    .threads_not_waited_for = cachesim::threads_not_waited_for,
    .data_ended = cachesim::cache_data_ended,
    .sync_thread = cachesim::sync_thread,
};

}  // namespace mri::monitor

// cache_internal.h - what the files of the cache simulator's measurement
// source (cachesim_source.cpp) share: the backend and the simulator, the
// recording switch, and each file's entry points.
//
// Files: cachesim_source.cpp (the ops table), recording.cpp (the
// instrumentation's registration and batches, recording on and off, the
// end), simulator_setup.cpp (the simulator made from the tool's
// configuration, and its split), targets.cpp (requests -> targets, and the
// data structures that ended), instances.cpp (region enter and exit),
// cache_worker.cpp (the simulation thread).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "mri_monitor.h"
#include "mri_protocol.h"
#include "services.h"
#include "source.h"

namespace mri::sim {
class Hierarchy;
struct Access;
}  // namespace mri::sim

namespace mri::monitor {
extern const MeasurementSource cachesim_source;
}  // namespace mri::monitor

namespace mri::monitor::cachesim {

namespace sim = mri::sim;

// recording.cpp: the shared state.
// The instrumentation's registration (Monitor_Register_Cache_Backend), once.
extern std::atomic<const Monitor_Cache_Backend*> g_backend;
// References are recorded (some cache request is in place).
extern std::atomic<bool> g_recording;
// Created once, at the first release with a cache request, never destroyed
// (instrumented code may still simulate while the process exits).
extern std::atomic<sim::Hierarchy*> g_sim;
// The instrumentation sorts references by part (a split from the start,
// split_of); written before g_sim is published, read after it is loaded.
extern bool g_backend_sorts;

inline proto::AppControl& app() { return segment().header()->app; }

// Monitor work timed in place goes onto the thread's overhead clock
// (compensation: every instance open meanwhile has it removed); `extra`
// is already fixed point.
inline void charge_overhead(ThreadState* ts, uint64_t since, uint64_t extra = 0) {
  add_to_overhead_clock(ts, ((now_ticks() - since) << kOverheadFracBits) + extra);
}

// recording.cpp.
// Switches the recording of references on (calibrating its cost first,
// once) or off, and with it the source's before_event().
void set_recording(bool on);
// The source's before_event(): while recording (set_recording), every
// monitored enter and exit first simulates the thread's buffered
// references, before its timestamp: they belong to the instances open
// before the event, and so does the time spent simulating them
// (compensation).
__attribute__((noinline)) void cache_flush_references();
// How many batches threads are handing to the simulator now (a thread on
// its way to park at an event hands its references over first, and may
// sleep meanwhile, waiting for the simulation thread).
uint32_t cache_batches_in_flight();
// The end of monitoring, before the instances end: no more references are
// recorded, and the simulator is closed to every thread but the calling
// one: a batch another thread hands over from now on is not simulated, and
// those being simulated are waited for (bounded), the simulation thread's
// included. Threads still running program code (an exit does not wait
// for them to park; the tool's end and a signal's wait 100 ms at most)
// would otherwise go on simulating what they had buffered while the end
// reads one request's counts after another's, and two requests over the
// same events could differ by a batch (main's fewer than its sweep's):
// the values the end gives are of one moment. What another thread has
// buffered is not simulated; the ending thread's own is, by
// cache_end_open.
void cache_stop_recording();
// The end (Monitor_Final on the exiting thread, or a detach): simulate
// what the calling thread has buffered, then stop recording.
void cache_finish();
// In a fork()ed child (the core's child_after_fork): no recording, no
// simulator.
void cache_after_fork();
// Tells the tool (AppControl::cache_backend) that the program has the
// instrumentation; at the publication, and at the backend's registration.
void cache_publish_backend();

// simulator_setup.cpp.
// The simulator, created from the tool's configuration text at its first
// use; nullptr when that configuration is not usable (simulator_error()
// says why). Control thread.
sim::Hierarchy* simulator();
const char* simulator_error();

// targets.cpp.
// Builds the cache targets of this release from the requests (validating
// them, acknowledging each in the segment) and marks in `region_cache` the
// regions whose enter and exit must call cache_enter/cache_exit. Control
// thread only, while every application thread is quiescent.
void cache_apply(std::vector<RequestInput>& requests, const ReleaseContext& ctx, std::vector<uint8_t>& region_cache);
// Data structure `record` has ended (Monitor_Unregister_Data, which first
// simulates what the calling thread has buffered): every monitor of it
// stops counting for good (its memory may hold another data structure next).
// The core holds its registry mutex (services.h, data_records).
void cache_data_ended(uint32_t record);

// instances.cpp.
// Region enter/exit of a region with cache targets; inside the thread's
// in_slow protection.
__attribute__((noinline)) void cache_enter(ThreadState* ts, uint32_t region);
__attribute__((noinline)) void cache_exit(ThreadState* ts, uint32_t region);
// The end of monitoring (the core's end_every_instance) or of a thread
// inside regions: every instance of `ts`'s still open for a cache request
// ends at `now`, innermost first per request, as if its exit ran (values,
// profile rows, histogram rows, trace value records), whether or not its
// region has a frame. own_thread: `ts` is the calling thread, whose
// buffered references are simulated first. Other threads quiesced.
void cache_end_open(ThreadState* ts, uint64_t now, bool own_thread);

// cache_worker.cpp. Starts the simulation thread where it is wanted (once,
// when the simulator is created); whether batches go to it.
bool cache_start_worker();
// The simulation thread's kernel thread id, 0 while there is none.
pid_t cache_worker_tid();
// Hands a batch of part `part` of the simulator (kAllParts: all of it) to
// the simulation thread, or simulates it at once: part 0 of a split
// simulator always, and every batch where there is no simulation thread
// or no CPU to spare for it. Returns when the batch is simulated or copied.
inline constexpr uint32_t kAllParts = ~uint32_t{0};
void cache_submit(mri::sim::Hierarchy* h, uint32_t core, uint32_t part, const mri::sim::Access* refs, size_t n);
// Returns once every batch handed over so far, by any thread, is simulated:
// before the monitors' counts are read or the monitors changed.
void cache_drain();

}  // namespace mri::monitor::cachesim

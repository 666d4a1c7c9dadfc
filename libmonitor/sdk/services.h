// services.h - what the MCC's core offers to measurement sources
// (source.h): the clock, a thread's result rows and overhead clock, trace
// value records, the segment, the data-structure table, error notes, and
// the control mutex for a backend that registers itself from the program.
//
// A source sees ThreadState only as an opaque pointer the core hands it
// (MeasurementSource::enter, exit, end_open) or current_thread_state()
// returns; everything it does with a thread goes through the functions
// below. Implemented in libmonitor/source_services.cpp (the declarations
// the core shares with the sources are defined in the core files named
// next to them).
//
// Cost: each is an out-of-line call into libmonitor (a direct call: the
// core and the sources are one library with hidden visibility). Sources
// call them per region enter or exit of a region they hooked and per batch
// of work, not per memory reference or per event of an unhooked region,
// so the hot path of time-only requests (hot_path.cpp) does not pay for
// them.
//
// Threads: "the owning thread" is the thread `ts` belongs to, inside the
// monitor (the source's enter(), exit(), or its own work outside the
// monitor between events); "quiescent" is another thread's state while the
// end of monitoring or a release holds every thread out of the monitor
// (end_open with own_thread false, compile_owned).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "mri_protocol.h"

namespace mri::monitor {

struct ThreadState;

// --- the clock ---

// The monitor's clock now, in ticks (rdtsc where the start-up calibration
// chose it, else CLOCK_MONOTONIC in ns; AppControl::ns_per_tick converts).
// Any thread.
uint64_t now_ticks();

// --- overhead compensation (compensation.cpp) ---

// Overheads are kept in fixed point: 1/256 tick (a pair costs some tens of
// ticks, so whole ticks would round away a few percent of it).
inline constexpr uint32_t kOverheadFracBits = 8;

// Adds `fixed` (ticks << kOverheadFracBits) to the thread's overhead clock:
// every instance open on the thread has it removed from its compensated
// values. For monitor work a source times in place (simulating a batch,
// its enter and exit work). The owning thread, inside or outside the
// monitor; relaxed atomic, so an end of monitoring reading the clock from
// another thread sees it before or after, never torn.
void add_to_overhead_clock(ThreadState* ts, uint64_t fixed);

// The published overhead of one enter/exit pair of `kind`, in fixed point
// (kOverheadFracBits; 0 while the kind is not calibrated). Any thread;
// changes only at a release (control thread, threads quiescent).
uint32_t overhead_pair_fixed(proto::OverheadKind kind);

// A source's own measurement of `kind` (ticks, per instance inside the
// measured interval and per pair), published with `note`; the tool's
// values (MRI_Set_Overhead) still take precedence. Control thread, at a
// release.
void publish_measured_overhead(proto::OverheadKind kind, double own_ticks, double pair_ticks, const char* note);
// `kind` has no measurement, and why (published). Control thread, at a
// release.
void overhead_not_calibrated(proto::OverheadKind kind, const char* why);

// --- threads (hot_path.cpp, threads.cpp) ---

// The calling thread's state: registers the thread at its first call
// while monitoring is attached (running or stopped). nullptr when
// monitoring is not attached, for the monitor's own threads, and for a
// thread beyond max_threads (its events are not monitored). Any thread,
// outside the monitor too.
ThreadState* current_thread_state();

// The thread's row index in the segment (below SegmentGeometry::
// max_threads; fixed for the thread's life). Any thread.
uint32_t thread_index(const ThreadState* ts);

// The sequence word over the thread's result slots (results.h: seq_begin,
// seq_end, SeqSection). The owning thread writes under it; the end of
// monitoring, for a quiescent thread.
uint32_t* thread_seq(ThreadState* ts);

// The thread's aggregate slots, indexed by request slot; its profile slots
// of `slice` (below SegmentGeometry::max_profile_slices), indexed by
// region. Written inside thread_seq's section by the owning thread (or
// for a quiescent one). The rows are set at the thread's first monitored
// event (nullptr before: a state current_thread_state() has just
// registered), so a source writes them from enter(), exit() and
// end_open() only. The overhead calibration's private thread state has
// private rows, never the segment's.
proto::AggregateSlot* thread_aggregate_row(ThreadState* ts);
proto::ProfileSlot* thread_profile_row(ThreadState* ts, uint32_t slice);

// One instance added to the callpath edge (caller, callee) of `slice`
// (caller proto::kNoCaller at the outermost profiled level), as
// add_instance (results.h) does for a profile slot: the thread's edge
// table finds or makes the edge; where it is full, the instance is not
// kept and the first such loss says so in last_error. Inside thread_seq's
// section, as above.
void add_edge(ThreadState* ts, uint32_t slice, uint32_t caller, uint32_t callee, uint64_t inclusive,
              uint64_t exclusive, uint64_t comp_inclusive, uint64_t comp_exclusive, bool outermost);

// A trace value record (proto::TraceKind::kValue) of request slot
// `request` into the thread's ring: an instance of `region` that ended at
// `timestamp` (ticks) measured `value`. Never fails: where the ring stays
// full longer than the tool's bound, the record is counted as discarded.
// Outside thread_seq's section (it may wait for the tool to make room).
// The owning thread, or the end of monitoring for a quiescent thread.
void append_trace_value(ThreadState* ts, uint64_t timestamp, uint64_t value, uint32_t region, uint16_t request);

// Whether thread `index` is in a request's thread mask (kThreadMaskWords
// words, as in the segment; nullptr: the request takes every thread).
inline bool in_thread_mask(const uint64_t* mask, uint32_t index) {
  return !mask || ((mask[index >> 6] >> (index & 63)) & 1);
}

// --- the segment and the program ---

// The mapped segment (base nullptr while not attached). The tool may
// rewrite every request record at any time: copy a record once, then
// validate the copy. A source writes its acknowledgements, histogram
// heads and rows at a release (control thread, threads quiescent), and a
// thread's rows as above. Attached once, before any source is asked
// anything; unmapped only by a detach, after the sources' finish().
const proto::View& segment();

// The published data structures (Monitor_Register_Data), in table order:
// the MCC's trusted copy, not the segment's. Read where the core holds
// the registry mutex (data_ended()) or control_mutex() (compile_owned()):
// after the publication, a registration holds both.
const std::vector<proto::DataRecord>& data_records();

// Says `fmt` in AppControl::last_error (truncated to kMessageBytes);
// nothing while not attached. Any thread; no lock: of two notes at the
// same moment, the message may hold parts of both.
void note_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// --- a backend that registers itself from the program ---

// Serialises the mode changes of the control thread and Monitor_Final:
// while a caller holds it, monitoring_attached() does not change and the
// segment stays mapped. Never held on the hot path; a caller must not
// hold it across a wait for the application's threads.
std::mutex& control_mutex();
// Whether monitoring is attached (released or stopped; not dormant,
// detached or ended). Any thread; stable while control_mutex() is held.
bool monitoring_attached();

}  // namespace mri::monitor

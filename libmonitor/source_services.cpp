// source_services.cpp - the services of sdk/services.h that are views of
// the core's state (ThreadState, Global) for measurement sources; see
// there for what each promises. The others are defined where their state
// lives: current_thread_state and add_edge in hot_path.cpp, note_error in
// status.cpp, data_records in data.cpp, the overhead kinds in
// compensation.cpp.
#include "monitor_internal.h"
#include "services.h"

namespace mri::monitor {

uint64_t now_ticks() { return ticks(); }

void add_to_overhead_clock(ThreadState* ts, uint64_t fixed) {
  ts->overhead_clock.fetch_add(fixed, std::memory_order_relaxed);
}

uint32_t thread_index(const ThreadState* ts) { return ts->index; }

uint32_t* thread_seq(ThreadState* ts) { return ts->seq; }

proto::AggregateSlot* thread_aggregate_row(ThreadState* ts) { return ts->agg_row; }

proto::ProfileSlot* thread_profile_row(ThreadState* ts, uint32_t slice) { return ts->profile_rows[slice]; }

void append_trace_value(ThreadState* ts, uint64_t timestamp, uint64_t value, uint32_t region, uint16_t request) {
  trace_append(ts, timestamp, value, region, proto::TraceKind::kValue, request);
}

const proto::View& segment() { return g.view; }

std::mutex& control_mutex() { return g.control_mutex; }

void set_before_event(const MeasurementSource& s, bool on) {
  for (uint32_t i = 0; i < source_count(); ++i)
    if (&source(i) == &s) {
      const uint8_t bit = uint8_t(1u << i);
      if (on)
        g.before_event_sources.fetch_or(bit, std::memory_order_relaxed);
      else
        g.before_event_sources.fetch_and(uint8_t(~bit), std::memory_order_relaxed);
    }
}

bool monitoring_attached() {
  const uint32_t m = g.mode.load();
  return m == kRunning || m == kStopped;
}

}  // namespace mri::monitor

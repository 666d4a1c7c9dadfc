// readings.cpp - the core's side of kReading sources (source.h): each
// thread's reading sources prepared for the current reading list, and all
// of a thread's readings taken at once, in reading order.
#include <string>

#include "monitor_internal.h"

namespace mri::monitor {

bool prepare_thread_readings(ThreadState* ts, std::string* why_not) {
  bool ready = true;
  // Every source that can give readings, also one with none in this
  // release: it gives up what it held for the previous list.
  for_each_source_with(&MeasurementSource::prepare_thread, [&](uint32_t i, const MeasurementSource& s) {
    std::string why;
    if (s.prepare_thread(ts->source_state[i], why)) return;
    if (why_not) {
      if (ready) *why_not = why;
      ready = false;
      return;
    }
    ready = false;
    std::atomic_ref<uint32_t>(g.view.header()->app.counter_errors).fetch_add(1);
    note_error("thread %u cannot count its events: %s", ts->index, why.c_str());
  });
  return ready;
}

bool take_readings(ThreadState* ts, int64_t* out) {
  for (uint32_t k = 0; k < g.n_readers; ++k) {
    const Global::Reader& r = g.readers[k];
    if (!source(r.source).read(ts->source_state[r.source], out + r.base)) return false;
  }
  return true;
}

void release_thread_readings(ThreadState* ts) {
  for_each_source_with(&MeasurementSource::release_thread, [&](uint32_t i, const MeasurementSource& s) {
    if (ts->source_state[i]) s.release_thread(ts->source_state[i]);
  });
}

}  // namespace mri::monitor

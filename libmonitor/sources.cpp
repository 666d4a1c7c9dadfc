// sources.cpp - the registry of measurement sources (sdk/source.h) as the
// core reads it: lookups over registered_sources (source_list.cpp), and
// the lifecycle members called on every source that has them.

#include "monitor_internal.h"
#include "source.h"

namespace mri::monitor {

uint32_t source_count() { return registered_source_count; }

const MeasurementSource& source(uint32_t index) { return *registered_sources[index]; }

int32_t source_for_metric(uint32_t metric) {
  for (uint32_t i = 0; i < source_count(); ++i)
    if (source(i).measures(metric)) return int32_t(i);
  return -1;
}

// Lifecycle calls to every source that has the member.
void sources_stop_recording() {
  for_each_source_with(&MeasurementSource::stop_recording, [](uint32_t, const MeasurementSource& s) { s.stop_recording(); });
}
void sources_finish() {
  for_each_source_with(&MeasurementSource::finish, [](uint32_t, const MeasurementSource& s) { s.finish(); });
}
void sources_after_fork() {
  for_each_source_with(&MeasurementSource::after_fork, [](uint32_t, const MeasurementSource& s) { s.after_fork(); });
}
void sources_publish() {
  for_each_source_with(&MeasurementSource::publish, [](uint32_t, const MeasurementSource& s) { s.publish(); });
}
uint32_t sources_busy() {
  uint32_t busy = 0;
  for_each_source_with(&MeasurementSource::busy, [&](uint32_t, const MeasurementSource& s) { busy += s.busy(); });
  return busy;
}
bool sources_own_thread(pid_t tid) {
  bool own = false;
  for_each_source_with(&MeasurementSource::own_thread_tid,
                       [&](uint32_t, const MeasurementSource& s) { own |= tid != 0 && s.own_thread_tid() == tid; });
  return own;
}
void sources_threads_not_waited_for(uint32_t late, uint32_t passed, uint32_t gave_up_after_ms, uint32_t quiet_ms) {
  for_each_source_with(&MeasurementSource::threads_not_waited_for, [&](uint32_t, const MeasurementSource& s) {
    s.threads_not_waited_for(late, passed, gave_up_after_ms, quiet_ms);
  });
}
void sources_data_ended(uint32_t record) {
  for_each_source_with(&MeasurementSource::data_ended, [&](uint32_t, const MeasurementSource& s) { s.data_ended(record); });
}
void sources_sync_thread() {
  for_each_source_with(&MeasurementSource::sync_thread, [](uint32_t, const MeasurementSource& s) { s.sync_thread(); });
}

}  // namespace mri::monitor

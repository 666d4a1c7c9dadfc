// status.cpp - what the application tells the tool about itself: the status
// fields of AppControl, published between an odd and an even status_seq,
// and the latest problem the monitor noticed (last_error).
#include <cstdarg>
#include <cstdio>
#include <mutex>

#include "monitor_internal.h"
#include "mri_sync.h"

namespace mri::monitor {
namespace {

using proto::AppState;
using proto::StopReason;

proto::AppControl& app() { return g.view.header()->app; }

// Changes the status fields between an odd and an even status_seq, so the
// tool never sees a half-written status (e.g. a new ack with an old state).
template <typename Write>
void update_status(Write&& write) {
  if (!g.view.base) return;
  std::lock_guard<std::mutex> lock(g.status_mutex);
  proto::AppControl& a = app();
  const uint32_t seq = sync::load(a.status_seq, std::memory_order_relaxed);
  sync::store(a.status_seq, seq | 1u, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  write(a);
  const uint32_t dropped = g.threads_dropped.load(std::memory_order_relaxed);
  sync::store(a.threads_dropped, dropped);
  // The count alone went unnoticed: a program that starts a thread per task
  // runs out of rows after max_threads threads (rows of ended threads are
  // not reused), and its later threads' work is missing from the results.
  // Said once, when the tool first sees the count.
  if (dropped > 0 && !g.threads_dropped_noted) {
    g.threads_dropped_noted = true;
    note_error("more than %u threads (MRI_MAX_THREADS): the threads after the first %u are not monitored "
               "(rows of ended threads are not reused); threads_dropped counts them",
               g.view.g.max_threads, g.view.g.max_threads);
  }
  sync::store(a.status_seq, (seq | 1u) + 1);  // release: even again
  sync::futex_wake_shared(&a.status_seq);
}
}  // namespace

void copy_message(char (&dst)[proto::kMessageBytes], const char* text) {
  std::snprintf(dst, proto::kMessageBytes, "%s", text);
}

void note_error(const char* fmt, ...) {
  if (!g.view.base) return;
  char text[proto::kMessageBytes];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  copy_message(app().last_error, text);
}

void publish_state(AppState state, StopReason reason, int32_t region, bool count_stop, int64_t ack) {
  update_status([&](proto::AppControl& a) {
    sync::store(a.stop_reason, uint32_t(reason));
    sync::store(a.stop_region, region);
    if (count_stop) sync::store(a.stops, sync::load(a.stops) + 1);
    if (ack >= 0) sync::store(a.ack_cmd_seq, uint32_t(ack));
    sync::store(a.state, uint32_t(state));
  });
}

void publish_ack(uint32_t ack) {
  update_status([&](proto::AppControl& a) { sync::store(a.ack_cmd_seq, ack); });
}

}  // namespace mri::monitor

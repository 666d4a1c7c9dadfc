// end.cpp - the end of monitoring: of a thread (its pthread key's
// destructor), of the program (exit(), exec(), a signal, the tool's
// terminate), and Monitor_Init / Monitor_Final.
#include <atomic>
#include <mutex>

#include "monitor_internal.h"
#include "mri_sync.h"

namespace mri::monitor {

using proto::AppState;
using proto::StopReason;

// Set when the tool ends the program (Command::kTerminate), before the
// world is quiesced: a thread that ends after that leaves its frames to
// the control thread, which is ending them.
std::atomic<bool> g_ending{false};

namespace {
proto::AppControl& app() { return g.view.header()->app; }
}  // namespace

void thread_exit(void* p) {
  auto* ts = static_cast<ThreadState*>(p);
  if (!ts) return;
  if (!ts->record) return thread_ended(ts);  // threads.cpp: for the thread's joiner
  // The same handshake as the slow path: a detach must not unmap the
  // segment under this store.
  ts->in_slow.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint32_t m = g.mode.load(std::memory_order_acquire);
  const bool monitoring = (m == kRunning || m == kStopped) && !g_ending.load();
  if (monitoring) {
    // A thread that ends inside regions (pthread_exit() in one) ends them
    // now, as Monitor_Final does for the exiting thread: measured, then in
    // its trace. Before the end is noted for the joiner, whose
    // compensation then includes this work. (Its references not yet
    // handed to the simulator, at most one batch, are simulated after,
    // at the backend's own thread end: flushing them here, outside the
    // monitor, would read the frames that an exit() on another thread may
    // be ending at the same time.)
    const uint64_t now = ticks();
    measure_open_instances(ts, now);
    trace_close_open(ts, now);
    trace_flush_stash(ts);
    trace_publish_head(ts);
  }
  thread_ended(ts);
  if (monitoring) sync::store(ts->record->status, uint32_t(proto::ThreadStatus::kExited));
  release_thread_readings(ts);
  ts->in_slow.store(0, std::memory_order_release);
}

// The end of every open instance, as at an exit: the calling thread's
// (`self`, may be null) and then every other thread's, which the caller
// has quiesced (none of them touches its frames or writes its ring until
// it parks or the process ends). Then the simulator's last results, the
// records kept aside (`wait_for_room`: the tool is given time to make room
// for them; else they are counted as discarded) and every ring head.
void end_every_instance(ThreadState* self, bool wait_for_room) {
  sources_stop_recording();  // the counts read below are of one moment
  close_open_instances(self);
  // The other threads' instances lived up to here. Measured (time, the
  // sources' own instances) as if their exits ran, then in their traces.
  // Their readings cannot be taken from this thread: with the generation
  // moved on, no frame's readings match and reading metrics leave these
  // instances out, as they do an instance whose reading list changed
  // while it was open.
  for_each_thread([](ThreadState* other) {
    // A thread parked at a stop (the world was stopped for the tool when a
    // thread called exit(), a signal came or the tool ended the program)
    // ends its instances where it parked: the stop is not the program's
    // time.
    const uint64_t parked = other->parked_since.load(std::memory_order_relaxed);
    const uint64_t now = parked ? parked : ticks();
    if (other->depth > 0) other->readings_generation += 1;
    measure_open_instances(other, now);  // also the sources' own instances, which have no frame
    trace_close_open(other, now);
  });
  sources_finish();
  // The end of monitoring (4.4): records kept aside wait for the tool to
  // make room (bounded), so the tool gets them with the rest.
  for_each_thread(wait_for_room ? trace_flush_stash : trace_discard_stash);
  // The records written since the quiesce (the exits above, values), and
  // any stash moved just now, become visible before the state says the
  // end: a thread publishes its head only every 16 records.
  for_each_thread(trace_publish_head);
}

bool end_monitoring(StopReason reason) {
  std::lock_guard<std::mutex> lock(g.control_mutex);
  uint32_t m = g.mode.load();
  if (m != kRunning && m != kStopped) return false;
  if (!g.published) publish_once(true);
  g.mode.store(kFinished, std::memory_order_seq_cst);
  arm_all(0);  // under the registry lock: a module may be registering its regions
  ThreadState* ts = current_thread_state();
  quiesce(ts);
  end_every_instance(ts, true);
  if (reason == StopReason::kExec && g.view.base) sync::store(app().end_ticks, ticks());
  if (reason == StopReason::kSignal && g.view.base) sync::store(app().end_signal, uint32_t(noted_termination_signal()));
  publish_state(AppState::kTerminated, reason, -1, false);
  mri::sync::bump(g.run_generation);
  mri::sync::futex_wake_private(&g.run_generation);
  return true;
}

}  // namespace mri::monitor

using namespace mri::monitor;

extern "C" {

void Monitor_Init(void) {
  if (g.mode.load() != kStopped || g.published) return;
  publish_once();
  // Park like any thread at the gate until the tool releases the program.
  ThreadState* ts = current_thread_state();
  if (!ts) return;
  Monitor_Region_Descriptor none{};  // a non-region: the slow path only parks
  none.id = -1;
  Monitor_Region_Enter_Slow(&none);
}

void Monitor_Final(void) { end_monitoring(StopReason::kExited); }

int Monitor_Is_Attached(void) {
  uint32_t m = g.mode.load(std::memory_order_acquire);
  return m == kRunning || m == kStopped;
}

}  // extern "C"

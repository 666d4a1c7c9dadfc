// control.cpp - the mri-control thread: it executes the tool's commands
// (run with a breakpoint, stop, terminate), watches the tool's liveness,
// ends a program whose threads have all ended, and ends monitoring for a
// termination signal the monitor caught.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "monitor_internal.h"
#include "mri_sync.h"
#include "plan.h"

namespace mri::monitor {
namespace {

using proto::AppState;
using proto::StopReason;

constexpr long kControlPollNs = 10'000'000;  // tool liveness check period: 10 ms

// handle_command() with the control mutex held; true when the program was
// released (its threads are to be woken).
bool handle_command_locked(uint32_t seq) {
  proto::ToolControl& tc = g.view.header()->tool;
  const uint32_t cmd = sync::load(tc.cmd);
  const int32_t breakpoint = sync::load(tc.breakpoint);
  const uint32_t m = g.mode.load();
  if (m != kRunning && m != kStopped) return false;
  switch (proto::Command(cmd)) {
    case proto::Command::kRun: {
      if (m != kStopped) {
        note_error("run command while running: ignored");
        break;
      }
      quiesce(nullptr);
      const int32_t nreg = int32_t(g.region_first.size());
      g.breakpoint = (breakpoint >= 0 && breakpoint < nreg) ? breakpoint : -1;
      if (breakpoint >= nreg) note_error("breakpoint region %d out of range: ignored", breakpoint);
      ++g.releases;
      apply_requests();
      publish_state(AppState::kRunning, StopReason::kNone, -1, false, seq);
      for (auto* d : g.descriptors) {
        const uint32_t id = uint32_t(d->id);
        __atomic_store_n(&d->armed, id < g.plan_count ? g.plan[id].armed : 0, __ATOMIC_RELAXED);
      }
      g.mode.store(kRunning, std::memory_order_seq_cst);
      return true;
    }
    case proto::Command::kStop:
      if (m == kRunning && try_stop_world(StopReason::kStopRequest, -1, nullptr, seq)) return false;
      break;
    case proto::Command::kTerminate: {
      g_ending.store(true);
      // Threads running program code park at their next event (waited
      // for, bounded: stop_world_for_an_end). Then every thread's open
      // instances end as at an exit (to where it parked, or up to now):
      // before, they counted nothing, the PROGRAM region's too, and the
      // last records of each thread were lost. Ending at once: records
      // kept aside for a full ring are counted as discarded.
      stop_world_for_an_end();
      end_every_instance(nullptr, false);
      publish_state(AppState::kTerminated, StopReason::kTerminatedByTool, -1, false, seq);
      std::fflush(nullptr);
      _exit(0);
    }
    default:
      note_error("unknown command %u ignored", cmd);
      break;
  }
  // Acknowledge commands that changed nothing so the tool's wait ends.
  publish_ack(seq);
  return false;
}

// A run command: the threads parked at the gate are woken once the control
// mutex is free again, so that the first thing they do (publishing a
// function region found by unwinding takes it) does not wait for the
// control thread.
void handle_command(uint32_t seq) {
  std::unique_lock<std::mutex> lock(g.control_mutex);
  if (!handle_command_locked(seq)) return;
  lock.unlock();
  sync::bump(g.run_generation);
  sync::futex_wake_private(&g.run_generation);
}

// Termination signals (SIGINT, SIGTERM, SIGHUP) whose action the program
// leaves at the default: Ctrl-C, `timeout`, `kill`, a closed terminal.
// The default action ends the process at once, and everything open was
// lost: the program's own instance, its time loop's, every thread's open
// trace instances and the trace records not yet published. Caught instead
// (installed once the control thread runs): the handler only notes the
// signal (async-signal-safe), and the control thread, within one poll
// (10 ms), stops the world, waits (at most 100 ms) for the threads running
// program code to park (wait_for_running_threads_to_park), ends monitoring
// as an exit does (end_monitoring(kSignal): every thread's open instances
// measured up to then, the trace balanced and published), puts the default
// action back and sends the signal again: the process dies of it as it
// would have, a few ms later. A
// program that installs its own handler replaces this one; a forked child
// (detached) or a monitor already ended or detached takes the default
// action at once. SIGKILL, and signals whose default action is a core
// dump (SIGSEGV, SIGABRT, SIGQUIT), are left alone. When monitoring ends
// another way first, with a signal noted (the tool gone in the same poll,
// as when a script kills a tool and its program together), the control
// thread closes the slot and the process dies of that signal
// (die_of_noted_signal); a signal after that takes the default action.
constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP};
// The first one caught, monitoring ends for it; -1 once the control thread
// no longer acts on one.
std::atomic<int> g_termination_signal{0};

// The default action back (sigaction: async-signal-safe, signal() is not).
void default_action(int sig) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, nullptr);
}

void on_termination_signal(int sig) {
  const uint32_t m = g.mode.load(std::memory_order_acquire);
  int none = 0;
  if ((m == kRunning || m == kStopped) && g_termination_signal.compare_exchange_strong(none, sig)) return;
  if (none > 0) return;  // one is on its way already: the process dies of that one
  const int saved = errno;
  default_action(sig);
  raise(sig);  // delivered when the handler returns (blocked meanwhile)
  errno = saved;
}

}  // namespace

void catch_termination_signals() {
  for (int sig : kTerminationSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
    struct sigaction action {};
    action.sa_handler = on_termination_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (int other : kTerminationSignals) sigaddset(&action.sa_mask, other);
    sigaction(sig, &action, nullptr);
  }
}

namespace {

// The control thread's part: end monitoring for the signal, then die of it.
void end_for_signal(int sig) {
  {
    // The program's threads park at their next event first (bounded): as
    // at the tool's end (Command::kTerminate), their last references count.
    std::lock_guard<std::mutex> lock(g.control_mutex);
    stop_world_for_an_end();
  }
  end_monitoring(StopReason::kSignal);
  default_action(sig);
  kill(getpid(), sig);  // a program thread takes it (this one blocks every signal)
}

// The control thread is about to end without acting on a termination
// signal: from now on the handler takes the default action itself, and
// one it noted before ends the process as that action would have.
void die_of_noted_signal() {
  int noted = 0;
  if (g_termination_signal.compare_exchange_strong(noted, -1) || noted <= 0) return;
  default_action(noted);
  kill(getpid(), noted);  // a program thread takes it (this one blocks every signal)
}

void* control_main(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  pthread_setname_np(pthread_self(), "mri-control");
  never_monitor_this_thread();  // exit() may run here (below): no row for this thread
  const pid_t self = gettid();
  proto::ToolControl& tc = g.view.header()->tool;
  for (uint32_t polls = 0;; ++polls) {
    const uint32_t m = g.mode.load();
    if (m == kDetached || m == kFinished) {
      die_of_noted_signal();
      return nullptr;
    }
    if (const int sig = g_termination_signal.load()) {
      end_for_signal(sig);
      return nullptr;
    }
    const uint32_t seq = sync::load(tc.cmd_seq);
    if (seq != g.last_cmd_seq) {
      g.last_cmd_seq = seq;
      handle_command(seq);
      continue;
    }
    sync::futex_wait_shared(&tc.cmd_seq, seq, kControlPollNs);
    // Every tenth poll (100 ms): a program whose threads have all ended
    // ends here, as the last of them would have ended it (atexit handlers,
    // Monitor_Final among them, then exit status 0).
    if (polls % 10 == 9 && program_threads_gone(self)) std::exit(0);
    if (!tool_is_alive()) {
      char why[96];
      std::snprintf(why, sizeof why, "tool (pid %u) is gone", g.tool_pid);
      // Before detach() wakes the parked threads: one of them could
      // otherwise reach exit() before the signal.
      die_of_noted_signal();
      detach(why);
      return nullptr;
    }
  }
}

}  // namespace

int noted_termination_signal() { return g_termination_signal.load(); }

bool start_control_thread() {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // The thread's static TLS comes out of it too; 1 MiB leaves room for
  // whatever a program links in (the cache-simulator backend maps its
  // buffers per thread, instrument.cpp, rather than keeping them in TLS).
  pthread_attr_setstacksize(&attr, 1024 * 1024);
  // Never joined: it ends by itself once the monitor is finished or
  // detached, or with the process.
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t control;
  const bool started = pthread_create(&control, &attr, control_main, nullptr) == 0;
  pthread_attr_destroy(&attr);
  return started;
}

}  // namespace mri::monitor

// control.cpp - commands to the application and its status, as libmri
// sees them through the segment's control words (docs/protocol.md,
// "Commands"): one command slot the tool writes (ToolControl), the
// application's status under a sequence word (AppControl).
#include "control.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "counters.h"
#include "error.h"
#include "launch.h"
#include "mri_sync.h"
#include "mri_text.h"
#include "requests.h"
#include "saturate.h"
#include "trace.h"

namespace mri::tool {
namespace {

// A release (MRI_Start, MRI_Start_Stop) that the application never took
// and a later command replaced: it is not an iteration. Its number goes
// back, and so does every request's record that it measured that
// iteration (counter rotation follows the number at the next release).
void withdraw_release(Session& s) {
  for (auto& [id, r] : s.requests)
    if (!r.measured.empty() && r.measured.back() == s.iteration) {
      r.measured.pop_back();
      r.measured_restarted = true;  // no longer only grown: hand_out_measured() copies it whole
    }
  --s.iteration;
}

void send_command(Session& s, proto::Command cmd, int32_t breakpoint) {
  if (!await_ack(s) && s.last_cmd == proto::Command::kRun && !child_exited(s)) withdraw_release(s);
  s.last_cmd = cmd;
  proto::ToolControl& tc = s.view.header()->tool;
  sync::store(tc.cmd, uint32_t(cmd));
  sync::store(tc.breakpoint, breakpoint);
  s.last_cmd_seq = sync::bump(tc.cmd_seq);
  sync::futex_wake_shared(&tc.cmd_seq);
}

int status_stuck_error() {
  return fail("the application's status cannot be read: its status word has stayed odd (mid-update) for more than "
              "2 s while the program lives (frozen inside an update, or a corrupt segment); "
              "MRI_Application_Finish() ends it");
}

// The overhead per kind that the application's compensation uses, set by
// the tool (protocol ToolControl::overhead_set; read at the next release).
int overhead_words(Session& s, int kind, const char* name) {
  if (kind < 0 || kind >= MRI_OVERHEAD_KINDS)
    return fail("%s: kind %d is not an overhead kind (MRI_OVERHEAD_TIMER 0 to MRI_OVERHEAD_CACHE_SIMULATOR 3)", name,
                kind);
  if (!s.loaded || !s.view.base) return fail("%s: no application loaded", name);
  if (current_status(s) == MRI_APPLICATION_TERMINATED) return fail("%s: the application has terminated", name);
  return MRI_OK;
}

uint32_t float_bits(double v) {
  const float f = float(v);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

}  // namespace

// One command slot: a command must be acted on before the next replaces
// it (e.g. MRI_Stop right after MRI_Start). Waits for the acknowledgement
// of the previous one, at most 2 s (the application may be busy outside
// monitored code; then the newer command wins).
// Returns whether the application acknowledged the last command (false:
// it did not within 2 s, or it ended).
bool await_ack(Session& s) {
  const proto::AppControl& a = s.view.header()->app;
  const uint64_t deadline = sync::monotonic_ns() + 2'000'000'000ull;
  for (;;) {
    const uint32_t seq = sync::load(a.status_seq);
    if (!(seq & 1) && sync::load(a.ack_cmd_seq) == s.last_cmd_seq) return true;
    if ((seq & 1) && s.status_stuck && seq == s.stuck_seq) return false;  // no acknowledgement can be read
    if (child_exited(s) || sync::monotonic_ns() > deadline) return false;
    sync::futex_wait_shared(const_cast<uint32_t*>(&a.status_seq), seq, 5'000'000);
  }
}

bool is_serial_region_type(MRI_Region_Type type) {
  return type == MRI_REGION_PROGRAM || type == MRI_REGION_ROUTINE || type == MRI_REGION_LOOP ||
         type == MRI_REGION_BLOCK;
}

// A consistent copy of the application's status fields (they change
// between an odd and an even status_seq). A word that stays odd beyond
// the retry (1000 yields, then 2 s) while the program lives marks the
// run's status stuck at that value (Session::status_stuck): a later read
// that finds the same value gives up at once, one that finds another odd
// value after the yields, so no call waits the 2 s again (each of them
// did: ten MRI_No_Wait() took 20 s).
AppSnapshot snapshot(Session& s) {
  const proto::AppControl& a = s.view.header()->app;
  AppSnapshot snap{};
  uint64_t give_up = 0;
  for (int attempt = 0;; ++attempt) {
    const uint32_t seq = sync::load(a.status_seq);
    if (seq & 1) {  // being written: a few instructions, unless the writer died or was frozen
      if (s.status_stuck && seq == s.stuck_seq) {
        snap.torn = true;
        break;
      }
      if (attempt < 1000) {
        sched_yield();
        continue;
      }
      if (give_up == 0) give_up = sync::monotonic_ns() + 2'000'000'000ull;
      if (s.status_stuck || child_exited(s)) {
        snap.torn = true;
        break;
      }
      if (sync::monotonic_ns() > give_up) {
        s.stuck_seq = seq;
        s.status_stuck = true;
        snap.torn = true;
        break;
      }
      usleep(1000);
      continue;
    }
    snap.state = sync::load(a.state);
    snap.ack = sync::load(a.ack_cmd_seq);
    snap.reason = sync::load(a.stop_reason);
    snap.region = sync::load(a.stop_region);
    snap.stops = sync::load(a.stops);
    snap.threads_dropped = sync::load(a.threads_dropped);
    snap.regions_dropped = sync::load(a.regions_dropped);
    snap.unmatched_exits = sync::load(a.unmatched_exits);
    snap.bad_requests = sync::load(a.bad_requests);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq == sync::load(a.status_seq)) break;
  }
  return snap;
}

MRI_Application_Status status_of(Session& s, const AppSnapshot& snap) {
  if (snap.state == uint32_t(proto::AppState::kTerminated)) return MRI_APPLICATION_TERMINATED;
  // A wrapper that started the monitored program without exec() may end
  // first: until the program ends too (or publishes its end), its results
  // are still coming.
  if (child_exited(s) && !monitored_below(s)) return MRI_APPLICATION_TERMINATED;
  if (snap.torn) return MRI_APPLICATION_RUNNING;  // alive but frozen mid-update: not stopped for us
  if (snap.state == uint32_t(proto::AppState::kStopped) && snap.ack == s.last_cmd_seq) return MRI_APPLICATION_STOPPED;
  return MRI_APPLICATION_RUNNING;
}

MRI_Application_Status current_status(Session& s) {
  if (!s.loaded) return MRI_APPLICATION_NOT_LOADED;
  return status_of(s, snapshot(s));
}

int readable_status(Session& s, MRI_Application_Status* st) {
  if (!s.loaded) {
    *st = MRI_APPLICATION_NOT_LOADED;
    return MRI_OK;
  }
  const AppSnapshot snap = snapshot(s);
  *st = status_of(s, snap);
  if (snap.torn && s.status_stuck && *st != MRI_APPLICATION_TERMINATED) return status_stuck_error();
  return MRI_OK;
}

// MRI_Wait and MRI_Wait_Timeout (`name`). Refused in the trace call-back:
// it runs on the collector thread, the one that makes room in the rings, so
// the application's threads would fill them, wait MRI_TRACE_WAIT_MS for
// room and then discard records, all the while this waited for them.
int wait_status(Session& s, const char* name, int64_t timeout_ms) {
  if (trace_in_callback())
    return fail("%s cannot be called from the trace call-back: the call-back runs on the thread that moves the trace "
                "records, so the application would wait for room (MRI_TRACE_WAIT_MS) and then discard records; ask "
                "with MRI_No_Wait(), or wait in another thread",
                name);
  const uint64_t deadline =
      timeout_ms < 0 ? UINT64_MAX : sync::monotonic_ns() + uint64_t(timeout_ms) * 1000000ull;
  for (;;) {
    proto::View v;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (!s.initialized) return fail("MRI_Init() has not been called");
      if (!s.loaded) return fail("no application loaded");
      v = s.view;
    }
    const uint32_t seq = sync::load(v.header()->app.status_seq);
    MRI_Application_Status st;
    if (readable_status(s, &st) != MRI_OK) return MRI_Error;
    if (st != MRI_APPLICATION_RUNNING) {
      if (st == MRI_APPLICATION_TERMINATED) {
        if (ended_at_exec(snapshot(s).reason)) {
          // Monitoring ended at an exec(); the process runs the new image
          // until it ends (or the caller's timeout).
          const uint64_t now = sync::monotonic_ns();
          await_exit_status(s, deadline == UINT64_MAX ? -1 : int(deadline > now ? (deadline - now) / 1000000ull : 0));
        }
        await_exit_status(s, 2000);
        trace_await_end(-1);  // every trace record delivered first (mri.h)
      }
      clear_error();
      return st;
    }
    const uint64_t now = sync::monotonic_ns();
    if (now >= deadline) {
      clear_error();
      return MRI_APPLICATION_RUNNING;
    }
    const uint64_t left = deadline - now;
    sync::futex_wait_shared(&v.header()->app.status_seq, seq, long(std::min<uint64_t>(left, 20'000'000)));
  }
}

int release(Session& s, const MRI_Region_Spec* region) {
  MRI_Application_Status st;
  if (readable_status(s, &st) != MRI_OK) return MRI_Error;
  if (st == MRI_APPLICATION_TERMINATED) return fail("the application has terminated");
  if (st == MRI_APPLICATION_RUNNING) return fail("the application is running: wait for it to stop (MRI_Wait) or stop it (MRI_Stop)");
  int32_t bp = -1;
  if (region) {
    if (!region_type_valid(*region)) return fail("breakpoint: unknown region type %d", raw(region->type));
    bp = region_index(s, *region);
    if (bp < 0) return fail("breakpoint: the application has no %s", describe_region(s, *region).c_str());
    if (!is_serial_region_type(region->type))
      return fail("breakpoint: %s \"%s\" is a %s region; only serial regions (program, routine, loop, block) can be breakpoints",
                  describe_region(s, *region).c_str(), s.regions[bp].name.c_str(), MRI_Region_Type_Name(region->type));
  }
  ++s.iteration;
  rotate_counters(s);
  send_command(s, proto::Command::kRun, bp);
  clear_error();
  return MRI_OK;
}

int stop(Session& s) {
  MRI_Application_Status st;
  if (readable_status(s, &st) != MRI_OK) return MRI_Error;
  if (st == MRI_APPLICATION_TERMINATED) return fail("the application has terminated");
  if (st == MRI_APPLICATION_STOPPED) {
    clear_error();
    return MRI_OK;  // already stopped
  }
  send_command(s, proto::Command::kStop, -1);
  clear_error();
  return MRI_OK;
}

int application_status(Session& s, MRI_Application_Status_Info* info) {
  std::memset(info, 0, sizeof *info);
  if (!s.loaded) {
    info->status = MRI_APPLICATION_NOT_LOADED;
    clear_error();
    return MRI_OK;
  }
  const proto::AppControl& a = s.view.header()->app;
  const AppSnapshot snap = snapshot(s);  // one snapshot for the status and its details
  info->status = status_of(s, snap);
  info->pid = s.pid;
  info->monitored_pid = int(sync::load(a.app_pid));
  info->stops = snap.stops;
  info->threads_dropped = snap.threads_dropped;
  info->regions_dropped = snap.regions_dropped;
  info->unmatched_exits = snap.unmatched_exits;
  info->bad_requests = snap.bad_requests;
  info->counter_errors = sync::load(a.counter_errors);
  // The monitor's message; before it, what this side found corrupt in the
  // segment, which explains results that lack records.
  std::string message(a.last_error, strnlen(a.last_error, sizeof a.last_error));
  if (const std::string problem = trace_problem(s.run); !problem.empty())
    message = message.empty() ? problem : problem + "; the monitor reported: " + message;
  text::copy_printable(message, info->monitor_message, sizeof info->monitor_message);
  const auto reason = proto::StopReason(snap.reason);
  if (info->status == MRI_APPLICATION_TERMINATED) {
    child_exited(s);  // reaps it if it has ended since: its exit status, not 0, without MRI_Wait()
    const int end_signal = reason == proto::StopReason::kSignal ? int(sync::load(a.end_signal)) : 0;
    if (s.reaped && WIFSIGNALED(s.wait_status)) {
      info->signal = WTERMSIG(s.wait_status);
      // Killed by MRI_Application_Finish() when it did not end within the
      // grace (stopped with SIGSTOP, hung): the tool's doing, not a signal
      // from outside; `signal` still says how.
      const bool by_finish = s.finish_killed && info->signal == SIGKILL;
      info->reason = by_finish ? MRI_STOP_TERMINATED_BY_TOOL : MRI_STOP_SIGNALED;
      info->signal_caught = !by_finish && end_signal != 0 && info->signal == end_signal;
    } else if (end_signal != 0 && !s.reaped) {
      // Monitoring ended for the signal; the process is dying of it.
      info->reason = MRI_STOP_SIGNALED;
      info->signal = end_signal;
      info->signal_caught = 1;
    } else if (reason == proto::StopReason::kTerminatedByTool || (s.finish_requested && !s.reaped)) {
      info->reason = MRI_STOP_TERMINATED_BY_TOOL;
    } else {
      info->reason = MRI_STOP_EXITED;
      if (s.reaped && WIFEXITED(s.wait_status)) info->exit_code = WEXITSTATUS(s.wait_status);
    }
    if (s.finish_requested && reason == proto::StopReason::kTerminatedByTool) info->reason = MRI_STOP_TERMINATED_BY_TOOL;
    if (ended_at_exec(uint32_t(reason))) {
      info->exec_replaced = reason == proto::StopReason::kExec ? 1 : 2;
      if (!s.reaped) info->reason = MRI_STOP_EXEC;
      const uint64_t end = sync::load(a.end_ticks), epoch = sync::load(a.trace_epoch);
      const double ns_per_tick = a.ns_per_tick;
      if (end > epoch && ns_per_tick > 0 && ns_per_tick < 1e6)
        info->exec_timestamp = saturated_ns(double(end - epoch) * ns_per_tick);
    }
  } else if (info->status == MRI_APPLICATION_STOPPED) {
    switch (reason) {
      case proto::StopReason::kLoaded: info->reason = MRI_STOP_LOADED; break;
      case proto::StopReason::kBreakpoint: info->reason = MRI_STOP_BREAKPOINT; break;
      case proto::StopReason::kStopRequest: info->reason = MRI_STOP_STOP_REQUEST; break;
      default: info->reason = MRI_STOP_NONE; break;
    }
    const int32_t region = snap.region;
    if (region >= 0 && size_t(region) < s.regions.size()) info->region = s.regions[region].spec;
  }
  // The rest of *info stays filled (pid, monitor_message): what can be known.
  if (snap.torn && s.status_stuck && info->status != MRI_APPLICATION_TERMINATED) return status_stuck_error();
  clear_error();
  return MRI_OK;
}

int set_overhead(Session& s, int kind, double delta_inclusive, double delta_own) {
  if (overhead_words(s, kind, "MRI_Set_Overhead") != MRI_OK) return MRI_Error;
  if (const char* problem = proto::tool_overhead_problem(uint32_t(kind), delta_inclusive, delta_own))
    return fail("MRI_Set_Overhead: %s (delta_inclusive %.10g ns, delta_own %.10g ns)", problem, delta_inclusive, delta_own);
  // Not while the application reads the words at a release it has not
  // acknowledged yet.
  await_ack(s);
  proto::ToolControl& tc = s.view.header()->tool;
  sync::store(tc.overhead_pair_ns[kind], float_bits(delta_inclusive));
  sync::store(tc.overhead_own_ns[kind], float_bits(delta_own));
  sync::store(tc.overhead_set, sync::load(tc.overhead_set) | (1u << kind));
  clear_error();
  return MRI_OK;
}

int clear_overhead(Session& s, int kind) {
  if (overhead_words(s, kind, "MRI_Clear_Overhead") != MRI_OK) return MRI_Error;
  await_ack(s);
  proto::ToolControl& tc = s.view.header()->tool;
  sync::store(tc.overhead_set, sync::load(tc.overhead_set) & ~(1u << kind));
  clear_error();
  return MRI_OK;
}

}  // namespace mri::tool

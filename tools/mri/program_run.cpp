// PROGRAM's run under mri: load, release, signals passed on, its end
// (program_run.h).
#include "program_run.h"

#include "mpi_job.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mri::cli {

namespace {

// Ctrl-C, and SIGINT, SIGTERM, SIGHUP or SIGQUIT sent to mri alone, end
// the program, not mri: mri then reports the program's end and writes what
// was measured up to then, as for any program killed by a signal. Without
// this, mri would die first: no results, a temporary file left behind, and
// a program that runs on unmonitored. A signal from the terminal (si_code
// SI_KERNEL) reached the program's process group, the program's too, so
// only one sent to mri by a process (kill) is passed on. One that arrives
// while the program is loaded is passed on when the load is done; one
// after the program's end ends mri with the default action. Caught rather
// than ignored, for the same reason as SIGXFSZ (survive_file_size_limit());
// left alone when mri was started with it ignored (a background job of a
// shell without job control: the program ignores it too, as without mri).
// PROGRAM may be a wrapper (a shell script) that started the monitored
// program without exec(): the signal goes to that process too, which
// would otherwise run on after the wrapper's end.
//
// A program that ignores or handles these signals and runs on: the third
// of them (the second says so) kills it with SIGKILL, as the only way left
// to end it and keep what was measured. SIGUSR1 and SIGUSR2 are passed on
// (and end mri by default after the program's end) without counting: a
// program may use them for its own purposes, and mri stands in for it.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int kPassedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
constexpr int kKillAfter = 3;             // stop signals, the last one ending the program with SIGKILL
std::atomic<pid_t> g_program_pid{0};     // 0: loading; -1: ended
std::atomic<pid_t> g_monitored_pid{0};   // the process that attached, when it is not g_program_pid
std::atomic<int> g_stop_signals{0};      // stop signals while the program ran
volatile sig_atomic_t g_pending_signal;  // arrived while loading

bool is_stop_signal(int sig) {
  for (int s : kStopSignals)
    if (s == sig) return true;
  return false;
}

// write(2) only: in a signal handler.
void say_from_handler(const char* text) {
  const ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
  (void)ignored;
}

void on_passed_signal(int sig, siginfo_t* info, void*) {
  const pid_t pid = g_program_pid.load();
  if (pid > 0) {
    const pid_t monitored = g_monitored_pid.load();
    const int n = is_stop_signal(sig) ? g_stop_signals.fetch_add(1) + 1 : 0;
    if (n >= kKillAfter) {
      say_from_handler("mri: killing the program (SIGKILL)\n");
      if (monitored > 0) kill(monitored, SIGKILL);
      kill(pid, SIGKILL);
      return;
    }
    if (info->si_code != SI_KERNEL) {
      if (monitored > 0) kill(monitored, sig);
      kill(pid, sig);
    }
    if (n == kKillAfter - 1)
      say_from_handler("mri: the program has not ended yet; one more interrupt kills it (SIGKILL)\n");
  } else if (pid == 0) {
    g_pending_signal = sig;
  } else {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

void pass_stop_signals_on() {
  for (int sig : kPassedSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_sigaction = on_passed_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(sig, &action, nullptr);
  }
}

}  // namespace

void die(const char* what) {
  std::fprintf(stderr, "mri: %s%s: %s\n", job_prefix().c_str(), what, MRI_Get_Error_Message());
  MRI_Finalize();
  std::exit(1);
}

void load_program(char** prog) {
  pass_stop_signals_on();
  if (MRI_Application_Load(prog[0], prog) != MRI_OK) die("cannot load the program");
  MRI_Application_Status_Info st;
  if (MRI_Get_Application_Status(&st) == MRI_OK && st.pid > 0) {
    if (st.monitored_pid > 0 && st.monitored_pid != st.pid) g_monitored_pid.store(st.monitored_pid);
    g_program_pid.store(st.pid);
    program_loaded(st.pid);
    if (const int sig = g_pending_signal) {
      if (is_stop_signal(sig)) g_stop_signals.fetch_add(1);
      if (st.monitored_pid > 0 && st.monitored_pid != st.pid) kill(st.monitored_pid, sig);
      kill(st.pid, sig);
    }
  }
}

void run_to_end() {
  for (;;) {
    const int st = MRI_Wait();
    if (st == MRI_Error) die("wait");
    if (st == MRI_APPLICATION_TERMINATED) break;
    if (MRI_Start() != MRI_OK) die("continue");
  }
  g_monitored_pid.store(0);  // ended or detached: its pid may be another process's now
  g_program_pid.store(-1);   // reaped: likewise
}

const char* const kKilledProfileNote =
    "results of the region instances that had ended by then are shown (one still open, such as the program's own, "
    "counts nothing)";
// The monitor catches SIGINT, SIGTERM and SIGHUP left at their default
// action and ends monitoring first.
const char* const kCaughtProfileNote =
    "the monitor caught it and ended monitoring first, as at an exit: the region instances then open (such as the "
    "program's own) were measured up to it";

int program_end(const MRI_Application_Status_Info& st, std::string& how) {
  if (st.reason == MRI_STOP_SIGNALED) {
    how = "was killed by signal " + std::to_string(st.signal) + " (" + strsignal(st.signal) + ")";
    return 128 + st.signal;
  }
  how = "exited with status " + std::to_string(st.exit_code);
  return st.exit_code;
}

bool killed() {
  MRI_Application_Status_Info st;
  return MRI_Get_Application_Status(&st) == MRI_OK && st.status == MRI_APPLICATION_TERMINATED &&
         st.reason == MRI_STOP_SIGNALED;
}

void warn_unmonitored(const MRI_Application_Status_Info& st) {
  if (st.threads_dropped)
    std::fprintf(stderr, "mri: warning: %u threads were not monitored (more than MRI_MAX_THREADS)\n",
                 st.threads_dropped);
  if (st.regions_dropped)
    std::fprintf(stderr, "mri: warning: %u regions were not monitored (more than MRI_MAX_REGIONS, or more source files "
                 "than the monitor's file table holds)\n", st.regions_dropped);
}

int final_status(const char* program_path, const char* killed_note, const char* caught_note) {
  // In a job the words name the rank: every rank says them alike.
  const std::string named = job_prefix() + program_path;
  const char* program = named.c_str();
  MRI_Application_Status_Info st;
  MRI_Get_Application_Status(&st);
  warn_unmonitored(st);
  if (st.counter_errors)
    std::fprintf(stderr, "mri: warning: %u times a thread could not set up its counters\n", st.counter_errors);
  if (st.monitor_message[0]) std::fprintf(stderr, "mri: the monitor reported: %s\n", st.monitor_message);
  std::string how;
  const int code = program_end(st, how);
  if (st.exec_replaced == 1)
    // The process ran on with another program; its end is that program's.
    std::fprintf(stderr, "mri: %s replaced itself with exec() (pid %d): monitoring ended there (the region instances "
                 "then open were measured up to it; the new program was not monitored); the process then %s\n",
                 program, st.pid, how.c_str());
  else if (st.exec_replaced == 2)
    std::fprintf(stderr, "mri: %s called exec() (pid %d), which failed after monitoring had ended for it: the results "
                 "end at that call, the program ran on unmonitored and then %s\n",
                 program, st.pid, how.c_str());
  else if (st.reason == MRI_STOP_SIGNALED) {
    const char* note = st.signal_caught ? caught_note : killed_note;
    std::fprintf(stderr, "mri: %s %s%s%s\n", program, how.c_str(), note[0] ? "; " : "", note);
  }
  return code;
}

void ended_before_monitoring(const char* program_path, bool applied) {
  const std::string named = job_prefix() + program_path;
  const char* program = named.c_str();
  MRI_Wait();  // returns at once; but only then is the exit status collected
  MRI_Application_Status_Info st{};
  std::string how = "ended";
  int code = 1;
  if (MRI_Get_Application_Status(&st) == MRI_OK && st.status == MRI_APPLICATION_TERMINATED) {
    code = program_end(st, how);
    if (st.exec_replaced)
      how = std::string(st.exec_replaced == 1 ? "replaced itself with exec()" : "called exec(), which failed,") +
            " (pid " + std::to_string(st.pid) + ") and the process then " + how + ",";
  }
  // Regions beyond MRI_MAX_REGIONS were never monitored: a possible reason
  // nothing ended (the PROGRAM regions are kept first, the others as
  // their modules list them).
  warn_unmonitored(st);
  MRI_Region_Table regions{};
  if (MRI_Get_Regions(&regions) == MRI_OK && regions.nr_Elements == 0)
    std::fprintf(stderr, "mri: %s %s and has no monitored region (it declares none, or they were not "
                 "published): nothing was measured\n", program, how.c_str());
  else if (applied)
    std::fprintf(stderr, "mri: %s %s before any instance of a monitored region ended: nothing was measured\n",
                 program, how.c_str());
  else
    std::fprintf(stderr, "mri: %s %s before monitoring took effect (before its first monitored region): nothing was "
                 "measured\n", program, how.c_str());
  MRI_Finalize();
  std::exit(code == 0 ? 1 : code);
}

void start(const char* program) {
  if (MRI_Start() == MRI_OK) return;
  if (MRI_No_Wait() == MRI_APPLICATION_TERMINATED) ended_before_monitoring(program);
  die("start");
}

}  // namespace mri::cli

// exec.cpp - a program that replaces itself with exec() (without fork()).
//
// exec() ends the image without exit(): no atexit handler, so without this
// file Monitor_Final never ran, the instances still open (the PROGRAM
// region's, a region around the call) were not measured, the trace records
// a thread had not yet published were lost uncounted, and the tool learnt
// nothing until the new image ended. Here the exec family the program
// calls is interposed (libmonitor is linked into the program, so these
// definitions come before libc's; dlsym(RTLD_NEXT) finds the real ones) and
// monitoring ends before the real call, as at an exit, with the stop reason
// kExec: the tool reports that the program replaced itself and keeps
// waiting for the process (same pid) to end. The new image is not
// monitored: MRI_SHMID was removed from the environment at start-up.
//
// A failed exec must not end monitoring for nothing. The common failures
// (no such file, not executable, a directory: ENOENT, EACCES, ENOTDIR) are
// found first by looking at the file as the kernel will (or, for the PATH
// searching variants, at every candidate as glibc's search does): then the
// real call runs without ending anything, fails with its own errno, and
// monitoring goes on untouched. A failure the look cannot foresee (E2BIG,
// ENOMEM, ENOEXEC of execve/execv on a file that is no program, a file
// replaced in between) comes after the end: the program goes on
// unmonitored, and the monitor says so on stderr, in its message to the
// tool and with the stop reason kExecFailed in place of kExec.
//
// Not interposed: exec calls inside libc (posix_spawn, system, popen run
// them in a child, which the monitor never follows). Passed straight on: a
// vfork()ed child's exec, which shares the parent's memory (recognised by
// its pid), and a fork()ed child's (detached). Those touch no lock and
// allocate nothing (exec is async-signal-safe, and a child of a threaded
// program may not call malloc). The monitored process's own exec ends
// monitoring with the monitor's locks and allocations, as an exit does:
// from a signal handler that interrupted the monitor or malloc it could
// block (docs/ROBUSTNESS.md, "Known gaps").
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "monitor_internal.h"
#include "mri_sync.h"

extern "C" char** environ;

namespace mri::monitor {
namespace {

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvpeFn = int (*)(const char*, char* const[], char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);

template <typename Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// The real functions, looked up when libmonitor is loaded: a lookup at
// the first call would take the loader's lock and a guard variable's in a
// vfork()ed or fork()ed child, where another thread of the parent may have
// held them at the fork. (Looked up at the call only before that: an exec
// from the constructor of a library initialised before libmonitor.)
const ExecveFn real_execve = real<ExecveFn>("execve");
const ExecvpeFn real_execvpe = real<ExecvpeFn>("execvpe");
const FexecveFn real_fexecve = real<FexecveFn>("fexecve");

// Whether this process is the monitored one with monitoring on: not a
// vfork()ed child (same memory, other pid), not dormant or detached.
bool monitoring_this_process() {
  const uint32_t m = g.mode.load(std::memory_order_acquire);
  if (m != kRunning && m != kStopped) return false;
  return g.view.base && g.own_pid == uint32_t(syscall(SYS_getpid));
}

// Whether the kernel would start `path`: a regular file this process may
// execute (effective ids, as exec checks).
bool executable_file(int dirfd, const char* path, int flags) {
  struct stat st;
  if (fstatat(dirfd, path, &st, flags) != 0 || !S_ISREG(st.st_mode)) return false;
  return faccessat(dirfd, path, X_OK, AT_EACCESS | (flags & AT_EMPTY_PATH)) == 0;
}

// execvp's search as glibc does it: a name with a slash as is; otherwise
// each directory of PATH (an empty entry is the current directory; PATH
// unset: the system's default path).
bool found_on_path(const char* file) {
  if (!file || !*file) return false;
  if (std::strchr(file, '/')) return executable_file(AT_FDCWD, file, 0);
  const char* path = std::getenv("PATH");
  std::string fallback;
  if (!path) {
    char buf[256];
    const size_t n = confstr(_CS_PATH, buf, sizeof buf);
    fallback = n > 0 && n <= sizeof buf ? buf : "/bin:/usr/bin";
    path = fallback.c_str();
  }
  for (const char* p = path;; ++p) {
    const char* colon = std::strchr(p, ':');
    const std::string dir(p, colon ? size_t(colon - p) : std::strlen(p));
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + file;
    if (executable_file(AT_FDCWD, candidate.c_str(), 0)) return true;
    if (!colon) return false;
    p = colon;
  }
}

// Ends monitoring before an exec that will most likely start (`will_start`:
// the file looked executable). True when it ended monitoring.
bool end_before_exec(bool will_start) {
  return will_start && monitoring_this_process() && end_monitoring(proto::StopReason::kExec);
}

// After the real call returned: the exec failed. When monitoring had ended
// for it, says so (errno kept for the program).
int after_failed_exec(const char* what, bool ended) {
  const int saved = errno;
  if (ended) {
    std::fprintf(stderr,
                 "mri-monitor: %s failed (%s) after monitoring had ended for it; the program continues "
                 "unmonitored\n",
                 what, std::strerror(saved));
    note_error("%s failed (%s) after monitoring had ended for it; the program continued unmonitored", what,
               std::strerror(saved));
    // The tool must not report a replaced program: the same process goes
    // on with the same program (and the tool waits for its end).
    publish_state(proto::AppState::kTerminated, proto::StopReason::kExecFailed, -1, false);
  }
  errno = saved;
  return -1;
}

// The variadic exec functions' arguments as an argv array (and envp for
// execle), on the stack: no allocation on the way of a child's exec.
#define MRI_COLLECT_ARGS(first, ap_start, argv_out, envp_out, want_envp)  \
  size_t count = 1;                                                       \
  {                                                                       \
    va_list ap;                                                           \
    va_start(ap, ap_start);                                               \
    while (va_arg(ap, const char*) != nullptr) ++count;                   \
    va_end(ap);                                                           \
  }                                                                       \
  char* argv_out[count + 1];                                              \
  char* const* envp_out = environ;                                        \
  {                                                                       \
    va_list ap;                                                           \
    va_start(ap, ap_start);                                               \
    argv_out[0] = const_cast<char*>(first);                               \
    for (size_t i = 1; i <= count; ++i) argv_out[i] = va_arg(ap, char*);  \
    if (want_envp) envp_out = va_arg(ap, char* const*);                   \
    va_end(ap);                                                           \
  }

int do_execve(const char* path, char* const argv[], char* const envp[]) {
  const ExecveFn fn = real_execve ? real_execve : real<ExecveFn>("execve");
  if (!fn) return errno = ENOSYS, -1;
  const bool ended = end_before_exec(monitoring_this_process() && executable_file(AT_FDCWD, path, 0));
  fn(path, argv, envp);
  return after_failed_exec("exec()", ended);
}

int do_execvpe(const char* file, char* const argv[], char* const envp[]) {
  const ExecvpeFn fn = real_execvpe ? real_execvpe : real<ExecvpeFn>("execvpe");
  if (!fn) return errno = ENOSYS, -1;
  const bool ended = end_before_exec(monitoring_this_process() && found_on_path(file));
  fn(file, argv, envp);
  return after_failed_exec("exec()", ended);
}

}  // namespace
}  // namespace mri::monitor

using namespace mri::monitor;

#define MRI_EXPORT extern "C" __attribute__((visibility("default")))

MRI_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) { return do_execve(path, argv, envp); }

MRI_EXPORT int execv(const char* path, char* const argv[]) { return do_execve(path, argv, environ); }

MRI_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return do_execvpe(file, argv, envp);
}

MRI_EXPORT int execvp(const char* file, char* const argv[]) { return do_execvpe(file, argv, environ); }

MRI_EXPORT int execl(const char* path, const char* arg, ...) {
  MRI_COLLECT_ARGS(arg, arg, argv, envp, false)
  return do_execve(path, argv, envp);
}

MRI_EXPORT int execlp(const char* file, const char* arg, ...) {
  MRI_COLLECT_ARGS(arg, arg, argv, envp, false)
  return do_execvpe(file, argv, envp);
}

MRI_EXPORT int execle(const char* path, const char* arg, ...) {
  MRI_COLLECT_ARGS(arg, arg, argv, envp, true)
  return do_execve(path, argv, envp);
}

MRI_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  const FexecveFn fn = real_fexecve ? real_fexecve : real<FexecveFn>("fexecve");
  if (!fn) return errno = ENOSYS, -1;
  const bool ended = end_before_exec(monitoring_this_process() && executable_file(fd, "", AT_EMPTY_PATH));
  fn(fd, argv, envp);
  return after_failed_exec("fexecve()", ended);
}

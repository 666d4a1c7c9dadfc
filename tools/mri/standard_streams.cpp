// mri's standard streams and the signals of its outputs (standard_streams.h).
#include "standard_streams.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mri::cli {

namespace {

bool g_stdout_was_closed;  // its writes fail with EBADF; errno may say otherwise by the time it is read
volatile sig_atomic_t g_broken_pipe;
bool g_sigpipe_ignored;

}  // namespace

// A standard descriptor that mri was started with closed (`mri ... >&-`)
// is held by a placeholder: otherwise mri's own descriptors (the program's
// pidfd, the -o file) would take its number, and the table would go into
// them ("cannot write standard output: Invalid argument"). The placeholder is /dev/null
// opened the other way round, so a write to standard output fails as on a
// closed descriptor ("Bad file descriptor"), and close-on-exec, so the
// program starts with the descriptor closed, as it would without mri.
void hold_closed_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    if (fd == 1) g_stdout_was_closed = true;
    // open() takes the lowest free number: fd (0..fd-1 are open by now).
    open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
  }
}

// A file-size limit (ulimit -f, RLIMIT_FSIZE) must fail the write that
// crosses it, not kill mri: with SIGXFSZ not at its default action,
// write(2) returns EFBIG, and the error path of the output runs (the
// message, status 1, no temporary file left behind). Caught by a handler
// that does nothing rather than ignored: an ignored signal stays ignored
// across the exec of PROGRAM (posix_spawn in libmri), a caught one is reset
// to the default there, so the program keeps the behaviour it has without
// mri.
void survive_file_size_limit() {
  struct sigaction action {};
  action.sa_handler = [](int) {};
  sigemptyset(&action.sa_mask);
  sigaction(SIGXFSZ, &action, nullptr);
}

// A reader of mri's standard output that goes away (`mri profile -- prog |
// head -3`) must not kill mri in the middle of its work: the table is
// printed before the -o file is written and MRI_Finalize() ends the run,
// so a SIGPIPE there would lose the file without a word. SIGPIPE is caught
// by a handler that notes it (not ignored: PROGRAM gets its default action
// back at the exec, as for SIGXFSZ), writes to the pipe fail with EPIPE,
// and mri finishes everything else; end_of_output() then dies of SIGPIPE
// as a standard tool would, quietly, with status 141. Left ignored when mri
// was started with it ignored: then EPIPE is reported.
void survive_broken_pipe() {
  struct sigaction old {};
  if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) {
    g_sigpipe_ignored = true;
    return;
  }
  struct sigaction action {};
  action.sa_handler = [](int) { g_broken_pipe = 1; };
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPIPE, &action, nullptr);
}

int end_of_output(int code) {
  const bool ok = std::fflush(stdout) == 0 && !std::ferror(stdout);
  const int err = g_stdout_was_closed ? EBADF : errno;
  if (ok) return code;
  if (g_broken_pipe && !g_sigpipe_ignored) {
    signal(SIGPIPE, SIG_DFL);
    raise(SIGPIPE);
  }
  std::fprintf(stderr, "mri: cannot write standard output: %s\n", std::strerror(g_broken_pipe ? EPIPE : err));
  return code == 0 ? 1 : code;
}

}  // namespace mri::cli

// attach.cpp - the application's side of the segment: attaching to the one
// the tool named in the environment (validated as untrusted), refusing it,
// the tool's liveness, and detaching when the tool is gone.
#include <fcntl.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "header_check.h"
#include "monitor_internal.h"
#include "mri_sync.h"

namespace mri::monitor {

constinit GlobalStorage g_storage;

namespace {

using proto::AppState;
using proto::StopReason;

proto::AppControl& app() { return g.view.header()->app; }

void child_after_fork() {
  // A forked child inherits the mapping but is not the monitored process.
  g.mode.store(kDetached, std::memory_order_relaxed);
  for (auto* d : g.descriptors) __atomic_store_n(&d->armed, 0, __ATOMIC_RELAXED);
  sources_after_fork();
  if (g.view.base) shmdt(g.view.base);
  g.view.base = nullptr;
}

}  // namespace

// Attaches to the segment named by the environment. Runs from a constructor
// before main(); on any problem the program runs unmonitored.
void attach_from_environment() {
  const char* id_text = std::getenv(proto::kEnvShmId);
  if (!id_text) return;  // dormant
  std::string id_copy = id_text;
  const char* tool_text = std::getenv(proto::kEnvToolPid);
  long tool_pid = tool_text ? std::strtol(tool_text, nullptr, 10) : 0;
  // Children of the application must not attach to our segment.
  unsetenv(proto::kEnvShmId);
  unsetenv(proto::kEnvToolPid);

  char* end = nullptr;
  long shmid = std::strtol(id_copy.c_str(), &end, 10);
  if (!end || *end != '\0' || shmid < 0) return refuse("MRI_SHMID is not a segment id", false);
  struct shmid_ds ds;
  if (shmctl(int(shmid), IPC_STAT, &ds) != 0) return refuse("MRI_SHMID names no accessible segment", false);
  if (ds.shm_perm.uid != geteuid()) return refuse("segment belongs to another user", false);
  if (ds.shm_segsz < sizeof(proto::Header)) return refuse("segment too small", false);
  void* base = shmat(int(shmid), nullptr, 0);
  if (base == reinterpret_cast<void*>(-1)) return refuse("cannot attach the segment", false);
  g.view.base = static_cast<unsigned char*>(base);
  g.shmid = int(shmid);

  // Copy the header fields once (the tool could change them under us) and
  // validate the copies.
  proto::Header* h = g.view.header();
  if (!has_mri_magic(*h)) return refuse("segment has no MRI header (bad magic)", false);
  // One process per segment: the first to attach claims it. Another one
  // (a second program started by a wrapper, such as a shell, that passed
  // the environment on, or one started after the first ended) would mix
  // its numbers into the first's: it runs unmonitored, leaving the header
  // alone.
  uint32_t holder = 0;
  if (!__atomic_compare_exchange_n(&h->app.app_pid, &holder, uint32_t(getpid()), false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    char why[160];
    std::snprintf(why, sizeof why,
                  "another process (pid %u) is already monitored through this segment; only the first program "
                  "the tool's command starts is monitored",
                  holder);
    return refuse(why, false);
  }
  g.own_pid = uint32_t(getpid());
  AcceptedHeader accepted;
  const std::string bad = check_header(*h, ds.shm_segsz, tool_pid, accepted);
  if (!bad.empty()) return refuse(bad.c_str(), true);
  const proto::Geometry& geo = accepted.geometry;
  const uint32_t header_tool = accepted.tool_pid;
  g.view.g = geo;
  g.view.l = accepted.layout;
  g.tool_pid = header_tool;
  if (const uint32_t wait_ms = sync::load(h->tool.trace_wait_ms)) g.trace_wait_ns = uint64_t(wait_ms) * 1'000'000ull;
  g.tool_pidfd = int(syscall(SYS_pidfd_open, pid_t(header_tool), 0));
  if (g.tool_pidfd < 0 && kill(pid_t(header_tool), 0) != 0)
    return refuse("the tool process is already gone", true);
  if (g.tool_pidfd >= 0 && g.tool_pidfd <= 2) {
    // Not one of the standard descriptors (the tool's were closed): the
    // program may open a file there and expect it to be its stdout.
    const int moved = fcntl(g.tool_pidfd, F_DUPFD_CLOEXEC, 3);
    if (moved >= 0) {
      close(g.tool_pidfd);
      g.tool_pidfd = moved;
    }
  }
  struct stat pidfd_stat;
  if (g.tool_pidfd >= 0 && fstat(g.tool_pidfd, &pidfd_stat) == 0) {
    g.tool_pidfd_dev = uint64_t(pidfd_stat.st_dev);
    g.tool_pidfd_ino = uint64_t(pidfd_stat.st_ino);
  }

  g.use_membarrier =
      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  g.threads = new std::atomic<ThreadState*>[geo.max_threads];
  for (uint32_t i = 0; i < geo.max_threads; ++i) g.threads[i].store(nullptr);
  pthread_key_create(&g.thread_key, thread_exit);
  pthread_atfork(nullptr, nullptr, child_after_fork);

  // The gate: every region is armed so the first monitored event of any
  // thread publishes the static information and parks until released.
  {
    std::lock_guard<std::mutex> lock(g.registry_mutex);
    g.mode.store(kStopped, std::memory_order_release);
    for (auto* d : g.descriptors) __atomic_store_n(&d->armed, 1, __ATOMIC_RELAXED);
  }
  std::atexit(Monitor_Final);
}

// Refuses the segment: tells the tool why when the header is ours enough to
// write into, then behaves as dormant.
void refuse(const char* why, bool header_writable) {
  std::fprintf(stderr, "mri-monitor: not monitoring: %s\n", why);
  if (header_writable) {
    copy_message(app().refuse_reason, why);
    sync::store(app().app_pid, uint32_t(getpid()));
    publish_state(AppState::kRefused, StopReason::kNone, -1, false);
  }
  if (g.view.base) shmdt(g.view.base);
  g.view.base = nullptr;
  g.mode.store(kDetached, std::memory_order_release);
}

// The pidfd counts only while it is still the descriptor opened at attach:
// a program may close every inherited descriptor at start-up (closefrom(),
// close_range(): daemons do) and open its own files there. poll() then
// reported the tool dead (POLLNVAL, or a readable file) and the program ran
// unmonitored, or never (a pipe). Without the pidfd, the segment's attach
// count tells: the tool keeps the segment attached until it ends, and the
// kernel detaches a process that dies. (getppid() did not: the tool is not
// the parent when a wrapper, such as a shell script, started the program.)
bool tool_is_alive() {
  if (g.tool_pidfd >= 0) {
    struct stat st;
    if (fstat(g.tool_pidfd, &st) == 0 && uint64_t(st.st_dev) == g.tool_pidfd_dev &&
        uint64_t(st.st_ino) == g.tool_pidfd_ino) {
      struct pollfd p{g.tool_pidfd, POLLIN, 0};
      return poll(&p, 1, 0) == 0;  // readable once the process has exited
    }
    // The number is the program's now (never close it). Before Linux 6.9
    // every pidfd, eventfd or epoll descriptor shares one inode, so one of
    // those put there by the program passes the test above.
  }
  struct shmid_ds ds;
  return shmctl(g.shmid, IPC_STAT, &ds) == 0 && ds.shm_nattch >= 2;
}

void detach(const char* why) {
  std::lock_guard<std::mutex> lock(g.control_mutex);
  uint32_t m = g.mode.load();
  if (m == kDetached || m == kFinished || m == kDormant) return;
  g.mode.store(kDetached, std::memory_order_seq_cst);
  arm_all(0);
  quiesce(nullptr);
  sources_finish();  // no more work: nobody reads the results
  sync::bump(g.run_generation);
  sync::futex_wake_private(&g.run_generation);
  std::fprintf(stderr, "mri-monitor: %s; detached, the application continues unmonitored\n", why);
  // Every thread now sees kDetached before touching the segment.
  shmdt(g.view.base);
  g.view.base = nullptr;
}

}  // namespace mri::monitor

__attribute__((constructor)) static void monitor_attach_at_start() { mri::monitor::attach_from_environment(); }

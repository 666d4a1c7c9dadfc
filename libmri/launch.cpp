// launch.cpp - creating the segment, starting the application, reading its
// static information, finishing it.
#include "launch.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cache_simulator.h"
#include "control.h"
#include "data_structures.h"
#include "error.h"
#include "mri_sync.h"
#include "slots.h"
#include "trace.h"

extern char** environ;

namespace mri::tool {
namespace {

constexpr int kDefaultLoadTimeoutMs = 10000;
constexpr int kFinishGraceMs = 5000;

// Reads a positive number from the environment; false (with the error
// set) when it is there but not one: digits only (strtoul alone would take
// leading blanks and a sign, " 5" and "+5").
bool env_u32(const char* name, uint32_t& value) {
  const char* v = std::getenv(name);
  if (!v || !*v) return true;
  char* end = nullptr;
  errno = 0;
  unsigned long x = std::strtoul(v, &end, 10);
  if (errno || !end || *end != '\0' || !std::isdigit(static_cast<unsigned char>(*v)) || x == 0 || x > UINT32_MAX) {
    fail("%s=\"%s\" is not a positive number", name, v);
    return false;
  }
  value = uint32_t(x);
  return true;
}

// Resolves `path` like execvp does, for a clear error before starting.
bool resolve_program(const char* path, std::string& resolved, std::string& why) {
  auto check = [&](const std::string& p) {
    struct stat st;
    if (stat(p.c_str(), &st) != 0) return false;
    if (!S_ISREG(st.st_mode)) {
      why = p + " is not a regular file";
      return false;
    }
    if ((st.st_mode & 0111) == 0 || access(p.c_str(), X_OK) != 0) {
      why = p + " is not executable";
      return false;
    }
    resolved = p;
    return true;
  };
  if (std::strchr(path, '/')) {
    if (check(path)) return true;
    if (why.empty()) why = std::string(path) + ": no such file";
    return false;
  }
  const char* env_path = std::getenv("PATH");
  std::string dirs = env_path ? env_path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    if (check(dir + "/" + path)) return true;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (why.empty()) why = std::string(path) + ": not found in PATH";
  return false;
}

}  // namespace

pid_t monitored_below(Session& s) {
  const uint32_t claimed = s.view.base ? sync::load(s.view.header()->app.app_pid) : 0;
  if (claimed == 0 || pid_t(claimed) == s.pid) return 0;
  // Its pid is still its own while it is attached (the tool and it: 2).
  struct shmid_ds ds;
  if (s.shmid < 0 || shmctl(s.shmid, IPC_STAT, &ds) != 0 || ds.shm_nattch < 2 || kill(pid_t(claimed), 0) != 0)
    return 0;
  return pid_t(claimed);
}

namespace {

// The processes below `root` now (children, theirs, ...), from the parent
// pids in /proc/N/stat; empty when /proc cannot be read.
std::vector<pid_t> descendants(pid_t root) {
  std::vector<std::pair<pid_t, pid_t>> procs;  // (pid, parent)
  if (DIR* d = opendir("/proc")) {
    while (const dirent* e = readdir(d)) {
      if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
      char path[300], line[512];
      std::snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
      FILE* f = std::fopen(path, "r");
      if (!f) continue;
      const bool ok = std::fgets(line, sizeof line, f) != nullptr;
      std::fclose(f);
      // "pid (comm) state ppid ...": comm may hold blanks and parentheses.
      const char* close = ok ? std::strrchr(line, ')') : nullptr;
      char state = 0;
      int ppid = 0;
      if (close && std::sscanf(close + 1, " %c %d", &state, &ppid) == 2)
        procs.emplace_back(pid_t(std::atoi(e->d_name)), pid_t(ppid));
    }
    closedir(d);
  }
  std::vector<pid_t> found{root};
  for (size_t k = 0; k < found.size(); ++k)
    for (const auto& [pid, parent] : procs)
      if (parent == found[k] && std::find(found.begin(), found.end(), pid) == found.end()) found.push_back(pid);
  found.erase(found.begin());
  return found;
}

void kill_and_reap(Session& s) {
  if (s.pid > 0 && !s.reaped) {
    // Its descendants first, held with SIGSTOP until none is new (a process
    // forking meanwhile): a wrapper's children (a shell script's `sleep`,
    // a program it started that never attached) ran on after the load
    // gave up, adopted by init.
    kill(s.pid, SIGSTOP);
    std::vector<pid_t> tree;
    for (int round = 0; round < 4; ++round) {
      const std::vector<pid_t> now = descendants(s.pid);
      bool grew = false;
      for (pid_t p : now)
        if (std::find(tree.begin(), tree.end(), p) == tree.end()) {
          kill(p, SIGSTOP);
          tree.push_back(p);
          grew = true;
        }
      if (!grew) break;
    }
    for (pid_t p : tree) kill(p, SIGKILL);
    // The process that claimed the segment, when the tool started it
    // through a wrapper (a shell script): killing only the wrapper left it
    // running, and once the tool was gone it ran on unmonitored. Among the
    // tree above, unless it left it (a daemon's double fork).
    if (const pid_t below = monitored_below(s)) kill(below, SIGKILL);
    kill(s.pid, SIGKILL);
    int st = 0;
    if (waitpid(s.pid, &st, 0) == s.pid) s.wait_status = st;
    s.reaped = true;
  }
}

}  // namespace

// Reads the regions and files the application published since the last
// call (regions can be published after start-up, at their first
// execution). Validates everything: the tool does not trust the segment
// either.
int refresh_static_information(Session& s) {
  if (!s.loaded || !s.view.base) return MRI_OK;
  const proto::View& v = s.view;
  proto::AppControl& a = v.header()->app;
  const uint32_t nreg = sync::load(a.region_count);
  const uint32_t nfiles = sync::load(a.file_count);
  const uint32_t pool = sync::load(a.string_pool_used);
  if (nreg == s.regions.size() && nfiles == s.files.size()) return MRI_OK;
  if (nreg > v.g.max_regions || nfiles > v.g.max_files || pool > v.g.string_pool_bytes ||
      nreg < s.regions.size() || nfiles < s.files.size())
    return fail("the application published an inconsistent region table");
  auto str = [&](uint32_t off, uint32_t len, std::string& out) {
    if (uint64_t(off) + len >= pool) return false;
    out.assign(v.strings() + off, len);
    return true;
  };
  for (uint32_t i = uint32_t(s.files.size()); i < nfiles; ++i) {
    proto::FileRecord fr = *v.file(i);
    std::string name;
    if (!str(fr.name_offset, fr.name_len, name)) return fail("the application published a bad file name record");
    s.files.push_back(name);
  }
  for (uint32_t i = uint32_t(s.regions.size()); i < nreg; ++i) {
    proto::RegionRecord rr = *v.region(i);
    RegionEntry e;
    if (rr.type >= MRI_REGION_TYPE_COUNT || rr.file_id >= nfiles || !str(rr.name_offset, rr.name_len, e.name))
      return fail("the application published a bad region record");
    e.spec.type = MRI_Region_Type(rr.type);
    e.spec.id.file_ID = int(rr.file_id);
    e.spec.id.line_NR = rr.line;
    s.regions.push_back(e);
  }
  return MRI_OK;
}

namespace {

int read_static_information(Session& s) {
  s.regions.clear();
  s.files.clear();
  s.data.clear();
  if (refresh_static_information(s) != MRI_OK) return MRI_Error;
  if (refresh_data_structures(s) != MRI_OK) return MRI_Error;
  s.ns_per_tick = s.view.header()->app.ns_per_tick;
  if (!(s.ns_per_tick > 0.0 && s.ns_per_tick < 1e6)) return fail("the application published a bad clock factor");
  return MRI_OK;
}

std::string describe_wait_status(int st) {
  char text[96];
  if (WIFEXITED(st))
    std::snprintf(text, sizeof text, "exited with status %d", WEXITSTATUS(st));
  else if (WIFSIGNALED(st))
    std::snprintf(text, sizeof text, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
  else
    std::snprintf(text, sizeof text, "ended (wait status %d)", st);
  return text;
}

}  // namespace

// The application announced its end (Monitor_Final); its exit status
// follows within moments. Waits up to `ms` for it so that callers see it.
void await_exit_status(Session& s, int ms) {
  const uint64_t deadline = ms < 0 ? UINT64_MAX : sync::monotonic_ns() + uint64_t(ms) * 1000000ull;
  while (!child_exited(s) && sync::monotonic_ns() < deadline) {
    if (s.pidfd >= 0) {
      struct pollfd p{s.pidfd, POLLIN, 0};
      poll(&p, 1, 10);
    } else {
      usleep(1000);
    }
  }
}

bool child_exited(Session& s) {
  std::lock_guard<std::mutex> lock(s.reap_mu);
  if (s.reaped) return true;
  if (s.pid <= 0) return true;
  int st = 0;
  pid_t r = waitpid(s.pid, &st, WNOHANG);
  if (r == s.pid) {
    s.wait_status = st;
    s.reaped = true;
    return true;
  }
  if (r < 0 && errno == ECHILD) {  // reaped elsewhere (SIGCHLD ignored): status unknown
    s.reaped = true;
    s.wait_status = 0;
    return true;
  }
  return false;
}

// The application's name as the kernel has it (/proc/PID/comm), into
// s.program_name. Only while the process is not reaped: a zombie keeps its
// pid and name, a reaped pid may name another process. Otherwise the name
// read last stays.
void read_program_name(Session& s) {
  std::lock_guard<std::mutex> lock(s.reap_mu);
  if (s.reaped || s.pid <= 0) return;
  char path[64], name[32] = {0};
  std::snprintf(path, sizeof path, "/proc/%d/comm", int(s.pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return;
  if (std::fgets(name, sizeof name, f)) {
    name[std::strcspn(name, "\n")] = '\0';
    if (name[0]) s.program_name = name;
  }
  std::fclose(f);
}

void release_segment(Session& s) {
  if (s.view.base) shmdt(s.view.base);
  s.view.base = nullptr;
  s.shmid = -1;
  if (s.pidfd >= 0) close(s.pidfd);
  s.pidfd = -1;
}

int check_load(Session& s, const char* path, LoadInputs& in) {
  in.path = path;
  std::string why;
  if (!resolve_program(path, in.program, why)) return fail("cannot load the application: %s", why.c_str());
  proto::Geometry& geo = in.geo;
  trace_settings(geo.trace_records, in.tool_records);
  if (!env_u32("MRI_TRACE_RING_RECORDS", geo.trace_records) || !env_u32("MRI_TRACE_WAIT_MS", in.trace_wait_ms))
    return MRI_Error;
  if (geo.trace_records < 1024 || geo.trace_records > proto::kHardMaxTraceRecords ||
      (geo.trace_records & (geo.trace_records - 1)))
    return fail("MRI_TRACE_RING_RECORDS must be a power of two from 1024 to %u (got %u)", proto::kHardMaxTraceRecords,
                geo.trace_records);
  in.timeout_env = kDefaultLoadTimeoutMs;
  if (!env_u32("MRI_MAX_REGIONS", geo.max_regions) || !env_u32("MRI_MAX_THREADS", geo.max_threads) ||
      !env_u32("MRI_MAX_EDGES", geo.max_edges) ||
      !env_u32("MRI_LOAD_TIMEOUT_MS", in.timeout_env))
    return MRI_Error;
  if (const char* bad = proto::validate_geometry(geo))
    return fail("bad MRI_MAX_REGIONS, MRI_MAX_THREADS or MRI_MAX_EDGES: %s (at most %u regions, %u threads, %u edges)",
                bad, proto::kHardMaxRegions, proto::kHardMaxThreads, proto::kHardMaxEdges);
  // Names: 256 bytes a region, from the default 1 MiB up to the hard limit
  // (pages are backed only where names are written).
  geo.string_pool_bytes = std::clamp(256u * geo.max_regions, proto::kDefaultGeometry.string_pool_bytes,
                                     proto::kHardMaxStringPool);
  // A bad cache configuration is the tool's error, found before anything starts.
  return cache_configuration_for_load(s, in.cache_config);
}

int load_application(Session& s, const LoadInputs& in, char* const argv[]) {
  const std::string& program = in.program;
  const proto::Geometry& geo = in.geo;
  const uint32_t trace_wait_ms = in.trace_wait_ms, timeout_env = in.timeout_env;
  const std::string& cache_config = in.cache_config;
  const proto::Layout layout = proto::compute_layout(geo);

  // The segment is marked for removal at once: Linux still lets the child
  // attach it by id, and no crash of either side can leave it behind, but
  // for a SIGKILL of this process between the three calls below (marking
  // needs an attachment, or it destroys the segment at once): then it
  // stays, blank and unmarked (the kill matrix, tests/kill, counts such
  // segments apart; docs/ROBUSTNESS.md has how often it meets one).
  int shmid = shmget(IPC_PRIVATE, layout.total, IPC_CREAT | IPC_EXCL | 0600);
  if (shmid < 0) return fail("cannot create the shared memory segment (%zu bytes): %s", size_t(layout.total), strerror(errno));
  void* base = shmat(shmid, nullptr, 0);
  if (base == reinterpret_cast<void*>(-1)) {
    int e = errno;
    shmctl(shmid, IPC_RMID, nullptr);
    return fail("cannot attach the shared memory segment: %s", strerror(e));
  }
  shmctl(shmid, IPC_RMID, nullptr);
  proto::View view;
  view.base = static_cast<unsigned char*>(base);
  view.g = geo;
  view.l = layout;
  start_run(s, view, shmid);
  proto::Header* h = s.view.header();
  h->header_size = sizeof(proto::Header);
  h->segment_size = layout.total;
  h->geometry = geo;
  h->tool.breakpoint = -1;
  h->tool.tool_pid = uint32_t(getpid());
  h->tool.trace_wait_ms = trace_wait_ms;
  h->protocol_version = proto::kProtocolVersion;
  sync::store(h->magic, proto::kMagic);
  std::memcpy(s.view.cache_config(), cache_config.c_str(), cache_config.size() + 1);

  // Environment of the child: ours plus the segment.
  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "MRI_SHMID=", 10) == 0 || std::strncmp(*e, "MRI_TOOL_PID=", 13) == 0) continue;
    env_store.emplace_back(*e);
  }
  env_store.push_back(std::string(proto::kEnvShmId) + "=" + std::to_string(shmid));
  env_store.push_back(std::string(proto::kEnvToolPid) + "=" + std::to_string(getpid()));
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  std::string argv0 = in.path;
  if (argv && argv[0]) {
    for (char* const* a = argv; *a; ++a) args.push_back(*a);
  } else {
    args.push_back(argv0.data());
  }
  args.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, program.c_str(), nullptr, nullptr, args.data(), envp.data());
  if (rc != 0) {
    release_segment(s);
    return fail("cannot start %s: %s", program.c_str(), strerror(rc));
  }
  s.pid = pid;
  s.reaped = false;
  // Until it is read from /proc: what the kernel names a program after
  // exec (the file's base name, at most 15 characters).
  s.program_name = program.substr(program.find_last_of('/') + 1, 15);
  s.wait_status = 0;
  s.loaded = true;
  s.finish_requested = false;
  s.finish_killed = false;
  s.pidfd = int(syscall(SYS_pidfd_open, pid, 0));

  // Wait until it attached and published its static information.
  const int timeout_ms = int(std::min<uint32_t>(timeout_env, 3'600'000));
  const uint64_t deadline = sync::monotonic_ns() + uint64_t(timeout_ms) * 1000000ull;
  proto::AppControl& a = h->app;
  for (;;) {
    const uint32_t seq = sync::load(a.status_seq);
    const uint32_t state = sync::load(a.state);
    if (state == uint32_t(proto::AppState::kRefused)) {
      std::string reason(a.refuse_reason, strnlen(a.refuse_reason, sizeof a.refuse_reason));
      kill_and_reap(s);
      release_segment(s);
      s.loaded = false;
      return fail("the application refused the session: %s", reason.c_str());
    }
    if (state == uint32_t(proto::AppState::kStopped) || state == uint32_t(proto::AppState::kTerminated)) break;
    if (child_exited(s)) {
      std::string st = describe_wait_status(s.wait_status);
      // libmonitor attached (its constructor) and the program ended before
      // its first annotated region without exit() (a signal, _exit):
      // "is it built with libmonitor?" would send the user the wrong way.
      const bool attached = sync::load(a.app_pid) != 0;
      release_segment(s);
      s.loaded = false;
      if (attached)
        return fail("%s attached to the tool, then %s before its first annotated region", program.c_str(),
                    st.c_str());
      return fail("%s %s before attaching to the tool: is it built with libmonitor (mri_monitor.h)?",
                  program.c_str(), st.c_str());
    }
    if (sync::monotonic_ns() > deadline) {
      // Claimed: libmonitor attached (a constructor), but the program has
      // not reached its first annotated event; "is it built with
      // libmonitor?" would send the user the wrong way.
      const bool attached = sync::load(a.app_pid) != 0;
      kill_and_reap(s);
      release_segment(s);
      s.loaded = false;
      if (attached)
        return fail("%s attached but did not reach its first annotated region or Monitor_Init() within %d ms "
                    "(MRI_LOAD_TIMEOUT_MS): call Monitor_Init() early in main(), or raise MRI_LOAD_TIMEOUT_MS",
                    program.c_str(), timeout_ms);
      return fail("%s did not attach within %d ms (MRI_LOAD_TIMEOUT_MS): is it built with libmonitor?",
                  program.c_str(), timeout_ms);
    }
    sync::futex_wait_shared(&a.status_seq, seq, 20'000'000);
  }
  // Monitoring ended before the first region (exit() there): the exit
  // status follows within moments, and the caller's first look at the
  // status shows it, as after MRI_Wait().
  if (sync::load(a.state) == uint32_t(proto::AppState::kTerminated)) {
    if (!ended_at_exec(sync::load(a.stop_reason))) await_exit_status(s, 2000);
  }
  read_program_name(s);
  if (read_static_information(s) != MRI_OK) {
    std::string msg = error_message();
    kill_and_reap(s);
    release_segment(s);
    s.loaded = false;
    return fail("%s", msg.c_str());
  }
  place_kept_requests(s);
  clear_error();
  return MRI_OK;
}

int finish_application(Session& s) {
  if (!s.loaded) return MRI_OK;
  if (!child_exited(s)) {
    proto::Header* h = s.view.header();
    if (h && current_status(s) != MRI_APPLICATION_TERMINATED) {
      s.finish_requested = true;
      sync::store(h->tool.cmd, uint32_t(proto::Command::kTerminate));
      s.last_cmd_seq = sync::bump(h->tool.cmd_seq);
      sync::futex_wake_shared(&h->tool.cmd_seq);
    }
    // After an exec() nobody answers the command: no grace.
    const bool replaced = h && sync::load(h->app.state) == uint32_t(proto::AppState::kTerminated) &&
                          ended_at_exec(sync::load(h->app.stop_reason));
    const uint64_t deadline = sync::monotonic_ns() + (replaced ? 0 : uint64_t(kFinishGraceMs) * 1000000ull);
    while (!child_exited(s)) {
      if (sync::monotonic_ns() > deadline) {
        std::lock_guard<std::mutex> lock(s.reap_mu);
        s.finish_killed = !s.reaped;
        kill_and_reap(s);
        break;
      }
      if (s.pidfd >= 0) {
        struct pollfd p{s.pidfd, POLLIN, 0};
        poll(&p, 1, 20);
      } else {
        usleep(10000);
      }
    }
  }
  return MRI_OK;
}

}  // namespace mri::tool

// kill_matrix.cpp - the kill matrix: a real tool (libmri) and a real
// program (libmonitor, mri_testapp until_detached), one of them killed at a
// random moment of a state of their session (loading, waiting, running,
// stopped, tracing, draining) with SIGKILL, SIGSEGV, or SIGSTOP and
// SIGKILL after a random pause. The other side must notice and go on: the
// program detaches and runs on (it writes when it noticed, then exits 0),
// the tool sees the program gone (its waiting call returns), finalizes and
// exits 0. Reports the release latency (from the killing signal to the
// moment the survivor noticed), and what a run left: segments the tool
// created, processes, zombies, files in the run's directory. A segment
// left blank and unmarked by a SIGKILL of the tool between its shmget()
// and its shmctl(IPC_RMID) (libmri/launch.cpp: nothing can close that
// window) is counted apart, not as a failure.
//
//   test_kill_matrix [--runs N] [--seed S] [--only VICTIM:STATE:SIGNAL] [--verbose]
//
// Runs go round the matrix (2 victims x 6 states x 3 ways) in a seeded
// random order; --only keeps one cell (e.g. tool:draining:stop). Exits 1
// when a run failed (it says which and why), 2 on a usage error.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kill_tool.h"
#include "process_census.h"

namespace {

using namespace mri::kill;
using mri::testing::GroupMember;
using mri::testing::group_members;
using mri::testing::segments_created_by;

enum class Victim { kTool, kProgram };
enum class Way { kKill, kSegv, kStopKill };
constexpr const char* kVictims[] = {"tool", "program"};
constexpr const char* kWays[] = {"kill", "segv", "stop"};

struct Cell {
  Victim victim;
  State state;
  Way way;
};

struct Options {
  uint64_t runs = 36;
  uint64_t seed = 1;
  bool only = false;
  Cell cell{};
  bool verbose = false;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "test_kill_matrix: %s\nusage: test_kill_matrix [--runs N] [--seed S] [--only VICTIM:STATE:SIGNAL] "
               "[--verbose]\n  VICTIM tool|program, STATE loading|waiting|running|stopped|tracing|draining, "
               "SIGNAL kill|segv|stop\n",
               why.c_str());
  std::exit(2);
}

template <size_t N>
int index_of(const char* const (&names)[N], const std::string& name) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) return int(i);
  return -1;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--verbose") {
      o.verbose = true;
      continue;
    }
    if (i + 1 >= argc) usage("unknown argument or missing value: " + a);
    const std::string v = argv[++i];
    if (a == "--runs" || a == "--seed") {
      char* end = nullptr;
      errno = 0;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (errno || *end || v.empty() || v[0] < '0' || v[0] > '9') usage(a + " needs a number");
      (a == "--runs" ? o.runs : o.seed) = n;
    } else if (a == "--only") {
      const size_t c1 = v.find(':'), c2 = v.find(':', c1 + 1);
      if (c1 == std::string::npos || c2 == std::string::npos) usage("--only needs VICTIM:STATE:SIGNAL");
      const char* const states[] = {"loading", "waiting", "running", "stopped", "tracing", "draining"};
      const int victim = index_of(kVictims, v.substr(0, c1)), state = index_of(states, v.substr(c1 + 1, c2 - c1 - 1)),
                way = index_of(kWays, v.substr(c2 + 1));
      if (victim < 0 || state < 0 || way < 0) usage("--only: unknown victim, state or signal in " + v);
      o.only = true;
      o.cell = {Victim(victim), State(state), Way(way)};
    } else {
      usage("unknown option " + a);
    }
  }
  return o;
}

uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void sleep_ns(uint64_t ns) {
  struct timespec ts{long(ns / 1000000000ull), long(ns % 1000000000ull)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

// Reads one message within `ms`; false on timeout or a closed pipe.
bool receive(int fd, Message& m, int ms) {
  struct pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1) return false;
  return read(fd, &m, sizeof m) == ssize_t(sizeof m);
}

// Whether segment `id` is one the tool was killed with between creating
// it and marking it for removal (shmget, shmat, shmctl(IPC_RMID): three
// calls that no process can make one, libmri/launch.cpp): not marked,
// attached by no one, nothing written yet.
bool blank_and_unmarked(int id) {
  struct shmid_ds ds;
  if (shmctl(id, IPC_STAT, &ds) != 0 || ds.shm_nattch != 0 || (ds.shm_perm.mode & SHM_DEST)) return false;
  void* p = shmat(id, nullptr, SHM_RDONLY);
  if (p == reinterpret_cast<void*>(-1)) return false;
  const size_t n = std::min<size_t>(ds.shm_segsz, 4096);
  bool blank = true;
  for (size_t i = 0; i < n && blank; ++i) blank = static_cast<const unsigned char*>(p)[i] == 0;
  shmdt(p);
  return blank;
}

// Files in `dir` other than `keep`.
std::vector<std::string> files_in(const std::string& dir, const std::string& keep) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != ".." && name != keep) out.push_back(name);
  }
  closedir(d);
  return out;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("died of ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// Waits for child `pid` (ours, or orphaned to us) at most `ms`.
bool wait_child(pid_t pid, int* status, uint64_t ms) {
  const uint64_t deadline = now_ns() + ms * 1000000ull;
  for (;;) {
    const pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid) return true;
    if (w < 0 && errno == ECHILD) return false;
    if (now_ns() >= deadline) return false;
    usleep(500);
  }
}

struct Outcome {
  State reached = State::kLoading;  // the state the tool had reported at the kill
  double latency_ms = -1;
  std::string failure;
  int segments = 0, processes = 0, zombies = 0, files = 0;
  int blank_segments = 0;  // left by a SIGKILL of the tool between creating and marking one (blank_and_unmarked)
};

// Loads take tens of ms; a kill in "loading" comes at a random moment
// within the typical duration, which is learnt from the runs so far.
struct LoadTimes {
  std::vector<double> ms;
  double typical() const {
    if (ms.empty()) return 60;
    std::vector<double> s = ms;
    std::nth_element(s.begin(), s.begin() + long(s.size() / 2), s.end());
    return s[s.size() / 2];
  }
};

Outcome run_one(const Cell& cell, std::mt19937_64& rng, const std::string& base, uint64_t n, LoadTimes& loads) {
  Outcome out;
  const std::string dir = base + "/run-" + std::to_string(n);
  const std::string log = base + "/run-" + std::to_string(n) + ".log";
  mkdir(dir.c_str(), 0700);
  const std::string marker = dir + "/detached";
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    out.failure = "harness: pipe";
    return out;
  }
  const pid_t tool = fork();
  if (tool == 0) {
    close(fds[0]);
    setpgid(0, 0);
    if (chdir(dir.c_str()) != 0) _exit(6);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    // A program waits for room in its ring far longer than a run lasts.
    setenv("MRI_TRACE_WAIT_MS", "60000", 1);
    setenv("MRI_LOAD_TIMEOUT_MS", "60000", 1);
    ToolRun run{cell.state, MRI_TESTAPP, marker, fds[1]};
    std::exit(run_tool(run));
  }
  close(fds[1]);
  setpgid(tool, tool);

  auto fail = [&](const std::string& why) {
    if (out.failure.empty()) out.failure = why;
  };
  // 1. The state.
  Message m{};
  pid_t program = 0;
  uint64_t loading_since = 0;
  bool ready = false;
  while (!ready) {
    if (!receive(fds[0], m, 60000)) {
      fail("the tool did not reach the state (60 s)");
      break;
    }
    if (m.kind == Message::kFailed) {
      fail(std::string("the tool could not reach the state: ") + m.text);
      break;
    }
    if (m.kind == Message::kReached && m.state == int(State::kLoading)) loading_since = m.ns;
    ready = m.kind == Message::kReached && m.state == int(cell.state);
  }
  out.reached = State(m.state);
  uint64_t killed_at = 0;
  pid_t victim = 0;
  if (ready) {
    program = m.pid;
    // 2. A random moment in it.
    const double window_ms = cell.state == State::kLoading ? loads.typical() : 50.0;
    const uint64_t delay = uint64_t(std::uniform_real_distribution<double>(0, window_ms)(rng) * 1e6);
    sleep_ns(delay);
    if (cell.victim == Victim::kTool) {
      victim = tool;
    } else if (cell.state != State::kLoading) {
      victim = program;
    } else {
      // The program the tool is loading: the group's other process, once
      // it exists (posix_spawn may not have run yet).
      const uint64_t deadline = now_ns() + 10'000'000'000ull;
      while (!victim && now_ns() < deadline) {
        for (const GroupMember& p : group_members(tool))
          if (p.pid != tool && p.state != 'Z') victim = p.pid;
        if (!victim) usleep(200);
      }
      if (!victim) fail("the program never started");
    }
    // What the tool has said meanwhile (the load may have ended).
    Message late;
    struct pollfd p{fds[0], POLLIN, 0};
    while (poll(&p, 1, 0) == 1 && read(fds[0], &late, sizeof late) == ssize_t(sizeof late)) {
      if (late.kind == Message::kReached) {
        out.reached = State(late.state);
        if (late.state != int(State::kLoading)) loads.ms.push_back(double(late.ns - loading_since) / 1e6);
      } else {
        m = late;
        break;
      }
    }
    if (victim) {
      if (cell.way == Way::kStopKill) {
        kill(victim, SIGSTOP);
        sleep_ns(uint64_t(std::uniform_real_distribution<double>(0, 100)(rng) * 1e6));
      }
      killed_at = now_ns();
      kill(victim, cell.way == Way::kSegv ? SIGSEGV : SIGKILL);
    }
  }

  // 3. The survivor notices and goes on.
  uint64_t noticed_at = 0;
  int status = 0;
  if (killed_at && cell.victim == Victim::kTool) {
    if (!wait_child(tool, &status, 10000)) fail("the killed tool did not end");
    // The program (orphaned to us) notices the detach, writes when, exits
    // 0. Killed while loading, the tool may not have started one.
    if (program <= 0)
      for (const GroupMember& p : group_members(tool)) program = p.pid;
    if (program > 0) {
      if (!wait_child(program, &status, 30000))
        fail("the program did not go on within 30 s of its tool's death");
      else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail("the program " + describe(status) + " after its tool's death");
      std::ifstream f(marker);
      if (!(f >> noticed_at)) fail("the program never saw the detach");
    }
  } else if (killed_at) {
    Message n{};
    while (receive(fds[0], n, 30000) && n.kind != Message::kNoticed) {
    }
    if (n.kind != Message::kNoticed) fail("the tool did not notice the program's death within 30 s");
    noticed_at = n.ns;
    Message fin{};
    if (!receive(fds[0], fin, 30000) || fin.kind != Message::kFinished)
      fail("the tool did not finalize within 30 s");
    out.zombies = fin.zombies;
    if (!wait_child(tool, &status, 30000)) fail("the tool did not exit");
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("the tool " + describe(status));
  }
  close(fds[0]);
  if (killed_at && noticed_at) out.latency_ms = (double(noticed_at) - double(killed_at)) / 1e6;

  // 4. What the run left.
  const uint64_t deadline = now_ns() + (out.failure.empty() ? 10'000'000'000ull : 0);
  std::vector<GroupMember> left;
  for (;;) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    left = group_members(tool);
    if (left.empty() || now_ns() >= deadline) break;
    usleep(1000);
  }
  for (const GroupMember& p : left) (p.state == 'Z' ? out.zombies : out.processes) += 1;
  kill(-tool, SIGKILL);
  for (const GroupMember& p : left) kill(p.pid, SIGKILL);
  for (int k = 0; k < 1000 && !group_members(tool).empty(); ++k) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    usleep(1000);
  }
  // Segments of this run only (created by its tool); removed here, so
  // that the next runs start from none.
  for (const int id : segments_created_by(tool)) {
    (blank_and_unmarked(id) ? out.blank_segments : out.segments) += 1;
    shmctl(id, IPC_RMID, nullptr);
  }
  const std::vector<std::string> files = files_in(dir, "detached");
  out.files = int(files.size());
  if (out.processes) fail(std::to_string(out.processes) + " process(es) left running");
  if (out.zombies) fail(std::to_string(out.zombies) + " zombie(s) left");
  if (out.segments) fail(std::to_string(out.segments) + " segment(s) left");
  if (out.files) fail("file(s) left: " + files[0]);
  if (!out.failure.empty()) {
    std::ifstream f(log);
    std::stringstream s;
    s << f.rdbuf();
    out.failure += "\n  the tool's and the program's output:\n" + s.str();
  }
  for (const std::string& f : files) unlink((dir + "/" + f).c_str());
  unlink(marker.c_str());
  rmdir(dir.c_str());
  unlink(log.c_str());
  return out;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[size_t(q * double(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // a SIGSEGV leaves no core file
  signal(SIGPIPE, SIG_IGN);
  char dir_template[] = "/tmp/mri_kill_XXXXXX";
  const char* base = mkdtemp(dir_template);
  if (!base) usage("cannot make a temporary directory");

  std::vector<Cell> cells;
  for (int v = 0; v < 2; ++v)
    for (int s = 0; s < kStates; ++s)
      for (int w = 0; w < 3; ++w) cells.push_back({Victim(v), State(s), Way(w)});
  if (o.only) cells = {o.cell};
  std::mt19937_64 rng(o.seed);
  std::printf("kill matrix: %llu runs, seed %llu%s\n", (unsigned long long)o.runs, (unsigned long long)o.seed,
              o.only ? " (one cell)" : "");
  std::fflush(stdout);

  std::map<std::string, std::vector<double>> by_cell, by_victim;
  std::vector<double> all;
  std::map<std::string, int> reached_other;  // the kill came after the state had moved on
  int failures = 0, segments = 0, blank_segments = 0, processes = 0, zombies = 0, files = 0;
  LoadTimes loads;
  const uint64_t t0 = now_ns();
  std::vector<Cell> order;
  for (uint64_t n = 0; n < o.runs; ++n) {
    if (order.empty()) {  // round the matrix, each round in another order
      order = cells;
      std::shuffle(order.begin(), order.end(), rng);
    }
    const Cell cell = order.back();
    order.pop_back();
    const Outcome r = run_one(cell, rng, base, n, loads);
    const std::string name = std::string(kVictims[int(cell.victim)]) + ":" + state_name(cell.state) + ":" +
                             kWays[int(cell.way)];
    segments += r.segments;
    blank_segments += r.blank_segments;
    processes += r.processes;
    zombies += r.zombies;
    files += r.files;
    if (r.reached != cell.state) ++reached_other[std::string(state_name(cell.state)) + "->" + state_name(r.reached)];
    if (r.latency_ms >= 0) {
      by_cell[name].push_back(r.latency_ms);
      by_victim[kVictims[int(cell.victim)]].push_back(r.latency_ms);
      all.push_back(r.latency_ms);
    }
    if (o.verbose || !r.failure.empty())
      std::printf("run %llu %s: latency %.2f ms%s%s\n", (unsigned long long)n, name.c_str(), r.latency_ms,
                  r.failure.empty() ? "" : ": FAILED: ", r.failure.c_str());
    if (!r.failure.empty()) ++failures;
    if (!o.verbose && (n + 1) % 500 == 0) {
      std::printf("kill matrix: %llu runs, %d failed, %.0f s\n", (unsigned long long)(n + 1), failures,
                  double(now_ns() - t0) / 1e9);
      std::fflush(stdout);
    }
  }
  rmdir(base);

  std::printf("\n%-26s %6s %12s %12s %12s\n", "victim:state:signal", "runs", "median ms", "p99 ms", "worst ms");
  for (const auto& [name, v] : by_cell)
    std::printf("%-26s %6zu %12.2f %12.2f %12.2f\n", name.c_str(), v.size(), percentile(v, 0.5), percentile(v, 0.99),
                percentile(v, 1.0));
  for (const auto& [name, v] : by_victim)
    std::printf("%-26s %6zu %12.2f %12.2f %12.2f\n", (std::string(name) + " killed, all").c_str(), v.size(),
                percentile(v, 0.5), percentile(v, 0.99), percentile(v, 1.0));
  std::printf("%-26s %6zu %12.2f %12.2f %12.2f\n", "all", all.size(), percentile(all, 0.5), percentile(all, 0.99),
              percentile(all, 1.0));
  for (const auto& [moved, count] : reached_other)
    std::printf("killed after the state moved on (%s): %d\n", moved.c_str(), count);
  std::printf("kill matrix: %llu runs in %.0f s, %d failed; left behind: %d segments, %d processes, %d zombies, "
              "%d files; %d blank segments of a tool killed between creating and marking one\n",
              (unsigned long long)o.runs, double(now_ns() - t0) / 1e9, failures, segments, processes, zombies, files,
              blank_segments);
  return failures ? 1 : 0;
}

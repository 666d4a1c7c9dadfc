// rogue_peer.cpp - the rogue-peer campaign: in every iteration a real tool
// (libmri) drives a real program (libmonitor) while a third process,
// attached to their segment, writes random and adversarial values into
// the words of one side: the tool's (ToolControl, request records,
// bitmaps, thread masks, trace ring tails, cache request records, the
// cache configuration text) or the program's (AppControl, static
// information, thread records, acknowledgements, result rows, trace ring
// heads and records, data-structure records, histogram heads and bins).
// Every iteration must end without a crash, a hang (a watchdog), a
// sanitizer report (build with -DMRI_SANITIZE=address), a process or a
// segment left behind.
//
//   test_rogue_peer [--seed S] [--first I] [--iterations N] [--operations K] [--watchdog SECONDS]
//                   [--verbose] [--keep-logs] [--no-rogue]
//
// Iteration I runs with a seed made from S and I, so `--seed S --first I
// --iterations 1` repeats one. --iterations 0 runs until interrupted.
// --no-rogue runs the same iterations without the rogue: a control, in
// which only the calls that the random plan makes in vain fail (a fifth
// profile request, a request replaced while the program has ended).
// Process tree per iteration: this harness (subreaper, watchdog) -> the
// tool (its own process group) -> the program, and the rogue (a fork of
// the tool: it inherits the tool's attachment of the segment).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "process_census.h"
#include "rogue_tool.h"

namespace {

using namespace mri::rogue;
using mri::testing::GroupMember;
using mri::testing::group_members;
using mri::testing::segments_created_by;

struct Options {
  uint64_t seed = 1;
  uint64_t first = 0;
  uint64_t iterations = 10;  // 0: unbounded
  uint32_t operations = 12;
  int watchdog_s = 120;
  bool verbose = false;
  bool keep_logs = false;
  bool no_rogue = false;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "test_rogue_peer: %s\nusage: test_rogue_peer [--seed S] [--first I] [--iterations N] "
               "[--operations K] [--watchdog SECONDS] [--verbose] [--keep-logs] [--no-rogue]\n",
               why);
  std::exit(2);
}

uint64_t number(const char* text, const char* what) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno || !end || *end || text[0] < '0' || text[0] > '9') usage((std::string(what) + " needs a number").c_str());
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--verbose" || a == "--keep-logs" || a == "--no-rogue") {
      (a == "--verbose" ? o.verbose : a == "--keep-logs" ? o.keep_logs : o.no_rogue) = true;
      continue;
    }
    if (i + 1 >= argc) usage(("unknown argument or missing value: " + a).c_str());
    const uint64_t v = number(argv[++i], a.c_str());
    if (a == "--seed") o.seed = v;
    else if (a == "--first") o.first = v;
    else if (a == "--iterations") o.iterations = v;
    else if (a == "--operations") o.operations = uint32_t(std::min<uint64_t>(v, 100000));
    else if (a == "--watchdog") o.watchdog_s = int(std::min<uint64_t>(std::max<uint64_t>(v, 1), 3600));
    else usage(("unknown option " + a).c_str());
  }
  return o;
}

uint64_t now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000 + uint64_t(ts.tv_nsec) / 1000000;
}

uint64_t mix(uint64_t seed, uint64_t i) {  // splitmix64 of (seed, iteration)
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void reap_orphans() {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

struct Result {
  std::string failure;  // "" when the iteration held
  ToolReport report;
  uint64_t ms = 0;
};

Result iteration(const Options& o, uint64_t i, const std::string& log) {
  std::mt19937_64 rng(mix(o.seed, i));
  ToolPlan plan;
  plan.side = i % 2 ? Side::kProgram : Side::kTool;
#ifdef MRI_CACHEAPP
  plan.cache_program = rng() % 3 == 0;
#endif
  if (plan.cache_program) {
#ifdef MRI_CACHEAPP
    plan.program = MRI_CACHEAPP;
    plan.args = {"sweep", "1000000", "2"};
#endif
  } else {
    plan.program = MRI_TESTAPP;
    plan.args = rng() % 2 ? std::vector<std::string>{"steps", "1000000", "1"}
                          : std::vector<std::string>{"nested", "3", "100000000"};
  }
  plan.seed = rng();
  plan.operations = o.operations;
  plan.rogue_through_end = rng() % 4 == 0;
  plan.call_back = rng() % 2;
  // All of the side's areas at once, or one (the others then work, so that
  // the damage reaches further than the first refusal); fast or slow.
  plan.area = rng() % 3 == 0 ? -1 : int(rng() % 64);
  static const uint32_t kPausesUs[] = {200, 2000, 20000};
  plan.max_pause_us = kPausesUs[rng() % 3];
  plan.no_rogue = o.no_rogue;
  plan.from_load = rng() % 4 == 0;

  Result r;
  const uint64_t t0 = now_ms();
  auto* progress = static_cast<Progress*>(
      mmap(nullptr, sizeof(Progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  int fds[2];
  if (progress == MAP_FAILED || pipe(fds) != 0) {
    r.failure = "harness: no mapping or pipe";
    return r;
  }
  std::memset(progress, 0, sizeof *progress);
  const pid_t tool = fork();
  if (tool == 0) {
    close(fds[0]);
    setpgid(0, 0);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (out >= 0) {
      dup2(out, 1);
      dup2(out, 2);
    }
    // Small areas (the rogue's writes land in rows in use), a program
    // that gives up quickly on a ring the tool does not empty, and a load
    // that waits generously on a loaded machine (a rogue that spoils the
    // magic while the program attaches makes it run unmonitored, and the
    // tool wait for it to the end of this bound).
    setenv("MRI_MAX_THREADS", "8", 1);
    setenv("MRI_MAX_REGIONS", "64", 1);
    setenv("MRI_MAX_EDGES", "64", 1);
    setenv("MRI_TRACE_WAIT_MS", "200", 1);
    setenv("MRI_LOAD_TIMEOUT_MS", "20000", 1);
    ToolReport report;
    const int rc = run_tool(plan, progress, report);
    if (write(fds[1], &report, sizeof report) != ssize_t(sizeof report)) _exit(4);
    close(fds[1]);
    std::fflush(nullptr);
    std::exit(rc);  // exit(), not _exit(): LeakSanitizer checks the tool
  }
  close(fds[1]);
  if (tool < 0) {
    r.failure = "harness: fork failed";
    return r;
  }
  setpgid(tool, tool);

  int status = 0;
  bool ended = false;
  const uint64_t deadline = t0 + uint64_t(o.watchdog_s) * 1000;
  while (now_ms() < deadline) {
    const pid_t w = waitpid(tool, &status, WNOHANG);
    if (w == tool) {
      ended = true;
      break;
    }
    usleep(5000);  // (nothing is orphaned to us while the tool lives)
  }
  if (ended) {
    ToolReport report;
    if (read(fds[0], &report, sizeof report) == ssize_t(sizeof report)) r.report = report;
  }
  close(fds[0]);
  const std::string where = std::string(" (at \"") + progress->operation + "\")";
  if (!ended) {
    r.failure = "the tool hung: the watchdog (" + std::to_string(o.watchdog_s) + " s) killed it" + where;
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    r.failure = "the tool " + describe(status) + where;
  }
  // The program and the rogue end with the tool (it finishes the one,
  // kills the other); a program the tool did not end must end by itself
  // once its tool is gone (it detaches). Generous: a loaded machine.
  const uint64_t leftover_deadline = now_ms() + (ended ? 30000 : 0);
  std::vector<GroupMember> left;
  for (;;) {
    reap_orphans();
    left = group_members(tool);
    if (left.empty() || now_ms() >= leftover_deadline) break;
    usleep(10000);
  }
  if (!left.empty() && r.failure.empty())
    r.failure = std::to_string(left.size()) + " process(es) of the iteration still there 30 s after the tool ended";
  kill(-tool, SIGKILL);
  for (const GroupMember& p : left) kill(p.pid, SIGKILL);
  const uint64_t reap_deadline = now_ms() + 10000;
  while (!group_members(tool).empty() && now_ms() < reap_deadline) {
    reap_orphans();
    usleep(10000);
  }
  const std::vector<int> segments = segments_created_by(tool);
  if (!segments.empty() && r.failure.empty()) r.failure = "segment " + std::to_string(segments[0]) + " left behind";
  const int sig = r.report.signal;
  if (r.failure.empty() && r.report.reason == 5 /* MRI_STOP_SIGNALED */ && sig != SIGKILL)
    r.failure = std::string("the program died of ") + strsignal(sig);
  if (r.failure.empty() && r.report.reason == 4 /* MRI_STOP_EXITED */ && r.report.exit_code != 0)
    r.failure = "the program exited with status " + std::to_string(r.report.exit_code);
  const std::string text = read_file(log);
  for (const char* report : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "AddressSanitizer:DEADLYSIGNAL",
                             "UndefinedBehaviorSanitizer", "runtime error:"})
    if (r.failure.empty() && text.find(report) != std::string::npos)
      r.failure = std::string("a sanitizer report (\"") + report + "\") in the log";
  munmap(progress, sizeof *progress);
  r.ms = now_ms() - t0;
  if (o.verbose || !r.failure.empty())
    std::printf("iteration %llu: %s%s rogue on the %s's words (%s, pauses up to %u us), %s%s%s: %u operations, %u MRI errors, end reason %d, %llu ms%s%s\n",
                (unsigned long long)i, plan.rogue_through_end ? "a lasting" : "a", plan.from_load ? " loading" : "",
                plan.side == Side::kTool ? "tool" : "program",
                r.report.area, plan.max_pause_us,
                plan.program.substr(plan.program.rfind('/') + 1).c_str(), plan.args.empty() ? "" : " ",
                plan.args.empty() ? "" : plan.args[0].c_str(), r.report.operations, r.report.errors, r.report.reason,
                (unsigned long long)r.ms, r.failure.empty() ? "" : ": FAILED: ", r.failure.c_str());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  // The programs whose tool dies are orphaned to us, to be reaped and
  // checked; a crash leaves no core file.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(SIGPIPE, SIG_IGN);
  char dir_template[] = "/tmp/mri_rogue_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) usage("cannot make a temporary directory");
  std::printf("rogue peer: seed %llu, iterations %llu from %llu, %u operations each, watchdog %d s\n",
              (unsigned long long)o.seed, (unsigned long long)o.iterations, (unsigned long long)o.first, o.operations,
              o.watchdog_s);
  std::fflush(stdout);
  uint64_t done = 0, ms = 0, operations = 0, errors = 0;
  uint64_t by_side[2] = {};
  for (uint64_t i = o.first; o.iterations == 0 || i < o.first + o.iterations; ++i) {
    const std::string log = std::string(dir) + "/iteration-" + std::to_string(i) + ".log";
    const Result r = iteration(o, i, log);
    ++done;
    ms += r.ms;
    operations += r.report.operations;
    errors += r.report.errors;
    ++by_side[i % 2];
    if (!r.failure.empty()) {
      std::printf("rogue peer: iteration %llu failed; repeat it with --seed %llu --first %llu --iterations 1\n"
                  "its log (the tool's and the program's output) is %s; its end:\n",
                  (unsigned long long)i, (unsigned long long)o.seed, (unsigned long long)i, log.c_str());
      std::fflush(stdout);
      const std::string text = read_file(log);
      std::fwrite(text.data() + (text.size() > 6000 ? text.size() - 6000 : 0), 1, std::min<size_t>(text.size(), 6000),
                  stdout);
      return 1;
    }
    if (!o.keep_logs) unlink(log.c_str());
    if (!o.verbose && done % 100 == 0) {
      std::printf("rogue peer: %llu iterations held (%.1f s)\n", (unsigned long long)done, double(ms) / 1000);
      std::fflush(stdout);
    }
  }
  if (o.keep_logs)
    std::printf("rogue peer: the logs are in %s\n", dir);
  else
    rmdir(dir);
  std::printf("rogue peer: %llu iterations held (%llu on the tool's words, %llu on the program's), %llu operations, "
              "%llu MRI calls refused, %.1f s\n",
              (unsigned long long)done, (unsigned long long)by_side[0], (unsigned long long)by_side[1],
              (unsigned long long)operations, (unsigned long long)errors, double(ms) / 1000);
  return 0;
}

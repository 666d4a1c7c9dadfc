// Callgrind writer, read back with the real callgrind_annotate.
#include <gtest/gtest.h>

#include <time.h>

#include "mri_export.h"
#include "test_helpers.h"

namespace mri::exporters {
namespace {

using testing::ScratchDir;

#define SKIP_WITHOUT_ANNOTATE()                                \
  do {                                                         \
    if (!testing::program_available(MRI_CALLGRIND_ANNOTATE))   \
      GTEST_SKIP() << "callgrind_annotate not found (Debian package valgrind)"; \
  } while (0)

testing::CommandResult annotate(const std::string& file, const std::vector<std::string>& options) {
  std::vector<std::string> argv = {MRI_CALLGRIND_ANNOTATE, "--threshold=100", "--auto=no"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(file);
  return testing::run_command(argv);
}

// main calls a twice and b three times; a calls b twice.
// Time_ns self: main 100, a 200, b 700 (300 of it under a, 400 under main).
// Instances self: main 1, a 2, b 5.
Profile call_tree_profile() {
  Profile p;
  p.program = "prog";
  p.command = "./prog --size 10";
  p.events = {"Time_ns", "Instances"};
  p.event_descriptions = {"Execution time (ns)", "Region instances"};
  p.regions = {Region{0, "main", "prog.c", 1, "PROGRAM"}, Region{1, "a", "prog.c", 10, "ROUTINE"},
               Region{2, "b", "lib.c", 20, "ROUTINE"}};
  p.functions = {ProfileFunction{0, {100, 1}}, ProfileFunction{1, {200, 2}}, ProfileFunction{2, {700, 5}}};
  p.calls = {ProfileCall{kNoCaller, 0, 1, {1000, 8}},  // not written: callgrind has no caller for roots
             ProfileCall{0, 1, 2, {500, 4}},           // a's 200 + the 300 of b under a; 2 a + 2 b
             ProfileCall{1, 2, 2, {300, 2}},
             ProfileCall{0, 2, 3, {400, 3}}};
  return p;
}

TEST(Callgrind, TotalsAndSelfCostsAsCallgrindAnnotateSeesThem) {
  SKIP_WITHOUT_ANNOTATE();
  ScratchDir dir;
  std::string error;
  ASSERT_TRUE(write_callgrind(dir / "callgrind.out", call_tree_profile(), error)) << error;
  const auto result = annotate(dir / "callgrind.out", {});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  EXPECT_EQ(result.output.find("WARNING"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("Profiled target:  ./prog --size 10"), std::string::npos) << result.output;
  const auto costs = testing::parse_callgrind_annotate(result.output, 2);
  EXPECT_EQ(costs.totals, (std::vector<uint64_t>{1000, 8})) << result.output;
  ASSERT_EQ(costs.functions.size(), 3u) << result.output;
  EXPECT_EQ(costs.functions.at("prog.c:main"), (std::vector<uint64_t>{100, 1}));
  EXPECT_EQ(costs.functions.at("prog.c:a"), (std::vector<uint64_t>{200, 2}));
  EXPECT_EQ(costs.functions.at("lib.c:b"), (std::vector<uint64_t>{700, 5}));
}

TEST(Callgrind, InclusiveCosts) {
  SKIP_WITHOUT_ANNOTATE();
  ScratchDir dir;
  std::string error;
  ASSERT_TRUE(write_callgrind(dir / "callgrind.out", call_tree_profile(), error)) << error;
  const auto result = annotate(dir / "callgrind.out", {"--inclusive=yes"});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  const auto costs = testing::parse_callgrind_annotate(result.output, 2);
  // main: 100 self + 500 in a + 400 in b; a: 200 + 300 in b; b: all of its 700.
  EXPECT_EQ(costs.functions.at("prog.c:main"), (std::vector<uint64_t>{1000, 8}));
  EXPECT_EQ(costs.functions.at("prog.c:a"), (std::vector<uint64_t>{500, 4}));
  EXPECT_EQ(costs.functions.at("lib.c:b"), (std::vector<uint64_t>{700, 5}));
}

TEST(Callgrind, CallersOfEachFunction) {
  SKIP_WITHOUT_ANNOTATE();
  ScratchDir dir;
  std::string error;
  ASSERT_TRUE(write_callgrind(dir / "callgrind.out", call_tree_profile(), error)) << error;
  const auto result = annotate(dir / "callgrind.out", {"--tree=caller"});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  const auto callers = testing::parse_callgrind_callers(result.output, 2);
  ASSERT_TRUE(callers.count("lib.c:b")) << result.output;
  const auto& of_b = callers.at("lib.c:b");
  ASSERT_EQ(of_b.size(), 2u) << result.output;
  EXPECT_EQ(of_b.at("prog.c:main").calls, 3u);
  EXPECT_EQ(of_b.at("prog.c:main").costs, (std::vector<uint64_t>{400, 3}));
  EXPECT_EQ(of_b.at("prog.c:a").calls, 2u);
  EXPECT_EQ(of_b.at("prog.c:a").costs, (std::vector<uint64_t>{300, 2}));
  const auto& of_a = callers.at("prog.c:a");
  ASSERT_EQ(of_a.size(), 1u);
  EXPECT_EQ(of_a.at("prog.c:main").calls, 2u);
  EXPECT_EQ(of_a.at("prog.c:main").costs, (std::vector<uint64_t>{500, 4}));
  // Calls from outside the profile come from one cost-less function.
  const auto& of_main = callers.at("prog.c:main");
  ASSERT_EQ(of_main.size(), 1u) << result.output;
  EXPECT_EQ(of_main.at("???:(outside any region)").calls, 1u);
  EXPECT_EQ(of_main.at("???:(outside any region)").costs, (std::vector<uint64_t>{1000, 8}));
}

TEST(Callgrind, ThreadRootsCountInInclusiveCosts) {
  SKIP_WITHOUT_ANNOTATE();
  // Thread 0 runs main, which runs "time step" (700 ns); thread 1 runs
  // "time step" as its outermost region (another 700 ns).
  TraceDefinitions defs;
  defs.locations = {Location{0, "main", 1}, Location{1, "worker", 2}};
  defs.regions = {Region{0, "main", "s.c", 1, "PROGRAM"}, Region{1, "time step", "s.c", 7, "LOOP"}};
  const std::vector<TraceEvent> events = {
      {1000, 0, 0, EventKind::Enter, 0, 0}, {1200, 0, 1, EventKind::Enter, 0, 0},
      {1900, 0, 1, EventKind::Leave, 0, 0}, {2500, 0, 0, EventKind::Leave, 0, 0},
      {1100, 1, 1, EventKind::Enter, 0, 0}, {1800, 1, 1, EventKind::Leave, 0, 0}};
  Profile p;
  std::string error;
  ASSERT_TRUE(build_profile(defs, events, p, error)) << error;
  ScratchDir dir;
  ASSERT_TRUE(write_callgrind(dir / "threads.out", p, error)) << error;
  const auto self = testing::parse_callgrind_annotate(annotate(dir / "threads.out", {}).output, 2);
  EXPECT_EQ(self.totals, (std::vector<uint64_t>{2200, 3}));
  EXPECT_EQ(self.functions.at("s.c:main"), (std::vector<uint64_t>{800, 1}));
  EXPECT_EQ(self.functions.at("s.c:time step"), (std::vector<uint64_t>{1400, 2}));
  const auto incl = testing::parse_callgrind_annotate(annotate(dir / "threads.out", {"--inclusive=yes"}).output, 2);
  EXPECT_EQ(incl.functions.at("s.c:main"), (std::vector<uint64_t>{1500, 2}));
  EXPECT_EQ(incl.functions.at("s.c:time step"), (std::vector<uint64_t>{1400, 2}));
  EXPECT_EQ(incl.functions.at("???:(outside any region)"), (std::vector<uint64_t>{2200, 3}));
}

// --- a real run: main -> a -> b, main -> b --------------------------------

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

volatile uint64_t sink;
void spin(int n) {
  for (int i = 0; i < n; ++i) sink = sink + static_cast<uint64_t>(i);
}

struct Recorder {
  std::vector<TraceEvent> events;
  void enter(uint32_t region) { events.push_back({now_ns(), 0, region, EventKind::Enter, 0, 0}); }
  void leave(uint32_t region) { events.push_back({now_ns(), 0, region, EventKind::Leave, 0, 0}); }
};

void b(Recorder& r) {
  r.enter(2);
  spin(20000);
  r.leave(2);
}
void a(Recorder& r) {
  r.enter(1);
  spin(10000);
  b(r);
  spin(10000);
  r.leave(1);
}
void program_main(Recorder& r) {
  r.enter(0);
  spin(5000);
  a(r);
  b(r);
  spin(5000);
  r.leave(0);
}

TEST(Callgrind, RealCallTreeHasCorrectInclusiveCosts) {
  SKIP_WITHOUT_ANNOTATE();
  Recorder rec;
  program_main(rec);
  const auto& ev = rec.events;
  ASSERT_EQ(ev.size(), 8u);
  // Event order: main> a> b> <b <a b> <b <main
  const uint64_t main_time = ev[7].timestamp - ev[0].timestamp;
  const uint64_t a_time = ev[4].timestamp - ev[1].timestamp;
  const uint64_t b_in_a = ev[3].timestamp - ev[2].timestamp;
  const uint64_t b_in_main = ev[6].timestamp - ev[5].timestamp;

  TraceDefinitions defs;
  defs.program = "real";
  defs.locations = {Location{0, "main thread", 1}};
  defs.regions = {Region{0, "main", "real.cpp", 1, "PROGRAM"}, Region{1, "a", "real.cpp", 10, "ROUTINE"},
                  Region{2, "b", "real.cpp", 20, "ROUTINE"}};
  Profile profile;
  std::string error;
  ASSERT_TRUE(build_profile(defs, ev, profile, error)) << error;
  ScratchDir dir;
  ASSERT_TRUE(write_callgrind(dir / "real.out", profile, error)) << error;

  const auto inclusive = annotate(dir / "real.out", {"--inclusive=yes"});
  ASSERT_EQ(inclusive.exit_status, 0) << inclusive.output;
  const auto incl = testing::parse_callgrind_annotate(inclusive.output, 2);
  EXPECT_EQ(incl.functions.at("real.cpp:main"), (std::vector<uint64_t>{main_time, 4}));
  EXPECT_EQ(incl.functions.at("real.cpp:a"), (std::vector<uint64_t>{a_time, 2}));
  EXPECT_EQ(incl.functions.at("real.cpp:b"), (std::vector<uint64_t>{b_in_a + b_in_main, 2}));

  const auto self = testing::parse_callgrind_annotate(annotate(dir / "real.out", {}).output, 2);
  EXPECT_EQ(self.totals, (std::vector<uint64_t>{main_time, 4}));
  EXPECT_EQ(self.functions.at("real.cpp:main"), (std::vector<uint64_t>{main_time - a_time - b_in_main, 1}));
  EXPECT_EQ(self.functions.at("real.cpp:a"), (std::vector<uint64_t>{a_time - b_in_a, 1}));

  const auto tree = annotate(dir / "real.out", {"--tree=caller"});
  const auto callers = testing::parse_callgrind_callers(tree.output, 2);
  EXPECT_EQ(callers.at("real.cpp:b").at("real.cpp:a").costs, (std::vector<uint64_t>{b_in_a, 1}));
  EXPECT_EQ(callers.at("real.cpp:b").at("real.cpp:main").costs, (std::vector<uint64_t>{b_in_main, 1}));
}

TEST(Callgrind, BuildProfileConvertsTicksAndRejectsBadNesting) {
  TraceDefinitions defs;
  defs.timer_resolution = 2'000'000'000;  // 0.5 ns per tick
  defs.locations = {Location{0, "t0", 1}, Location{1, "t1", 2}};
  defs.regions = {Region{0, "outer", "f.c", 1, "ROUTINE"}, Region{1, "inner", "f.c", 2, "LOOP"}};
  // Location 1 begins inside `outer` (its enter was before the trace).
  const std::vector<TraceEvent> events = {
      {100, 0, 0, EventKind::Enter, 0, 0}, {120, 1, 1, EventKind::Enter, 0, 0},
      {140, 0, 1, EventKind::Enter, 0, 0}, {150, 1, 1, EventKind::Leave, 0, 0},
      {160, 1, 0, EventKind::Leave, 0, 0}, {200, 0, 1, EventKind::Leave, 0, 0},
      {300, 0, 0, EventKind::Enter, 0, 0}, {400, 0, 0, EventKind::Leave, 0, 0}};
  // Closed instances: inner on t1, 120..150 (30 ticks, no caller: t1's leave of outer at 160 has no enter);
  // inner on t0, 140..200 (60 ticks, called by outer); outer on t0, 300..400 (100 ticks), called by the
  // outer entered at 100, which never closes and is left out.
  Profile p;
  std::string error;
  ASSERT_TRUE(build_profile(defs, events, p, error)) << error;
  ASSERT_EQ(p.functions.size(), 2u);
  EXPECT_EQ(p.functions[0].region, 0u);
  EXPECT_EQ(p.functions[0].self, (std::vector<uint64_t>{50, 1}));  // 100 ticks = 50 ns
  EXPECT_EQ(p.functions[1].region, 1u);
  EXPECT_EQ(p.functions[1].self, (std::vector<uint64_t>{45, 2}));  // 90 ticks
  ASSERT_EQ(p.calls.size(), 3u);  // outer->inner, outer->outer, (outside)->inner
  EXPECT_EQ(p.calls[0].caller, 0u);
  EXPECT_EQ(p.calls[0].callee, 0u);
  EXPECT_EQ(p.calls[1].caller, 0u);
  EXPECT_EQ(p.calls[1].callee, 1u);
  EXPECT_EQ(p.calls[1].inclusive, (std::vector<uint64_t>{30, 1}));
  EXPECT_EQ(p.calls[2].caller, kNoCaller);
  EXPECT_EQ(p.calls[2].callee, 1u);

  const std::vector<TraceEvent> crossed = {{1, 0, 0, EventKind::Enter, 0, 0},
                                           {2, 0, 1, EventKind::Enter, 0, 0},
                                           {3, 0, 0, EventKind::Leave, 0, 0}};
  EXPECT_FALSE(build_profile(defs, crossed, p, error));
  EXPECT_EQ(error, "event 2: leave of region 0 on location 0 while region 1 is the innermost open one");
}

TEST(Callgrind, RegionsSharingFileAndNameStayApart) {
  SKIP_WITHOUT_ANNOTATE();
  Profile p;
  p.events = {"Time_ns"};
  p.regions = {Region{0, "time step", "f.c", 5, "LOOP"}, Region{1, "time step", "f.c", 9, "LOOP"},
               Region{2, "no file", "", 0, "BLOCK"}};
  p.functions = {ProfileFunction{0, {10}}, ProfileFunction{1, {20}}, ProfileFunction{2, {30}}};
  ScratchDir dir;
  std::string error;
  ASSERT_TRUE(write_callgrind(dir / "dup.out", p, error)) << error;
  const auto result = annotate(dir / "dup.out", {});
  const auto costs = testing::parse_callgrind_annotate(result.output, 1);
  EXPECT_EQ(costs.functions.at("f.c:time step [line 5]"), std::vector<uint64_t>{10}) << result.output;
  EXPECT_EQ(costs.functions.at("f.c:time step [line 9]"), std::vector<uint64_t>{20}) << result.output;
  EXPECT_EQ(costs.functions.at("???:no file"), std::vector<uint64_t>{30}) << result.output;
}

TEST(Callgrind, InvalidProfilesAreRejected) {
  ScratchDir dir;
  std::string error;
  auto rejects = [&](Profile p, const std::string& expected) {
    error.clear();
    EXPECT_FALSE(write_callgrind(dir / "bad.out", p, error));
    EXPECT_NE(error.find(expected), std::string::npos) << "error was: " << error;
  };
  Profile p = call_tree_profile();
  p.events.clear();
  rejects(p, "at least one event");
  p = call_tree_profile();
  p.events[0] = "Time ns";
  rejects(p, "invalid callgrind event name 'Time ns'");
  p = call_tree_profile();
  p.functions[1].self = {1};
  rejects(p, "function 1 has 1 self costs for 2 events");
  p = call_tree_profile();
  p.calls[1].callee = 9;
  rejects(p, "refers to an undefined region");
  p = call_tree_profile();
  p.calls[1].calls = 0;
  rejects(p, "has 0 calls");
  p = call_tree_profile();
  p.functions.push_back(ProfileFunction{0, {1, 1}});
  rejects(p, "region 0 has two function entries");
  p = call_tree_profile();
  p.regions[2].name = "two\nlines";
  rejects(p, "line break");
  p = call_tree_profile();
  p.event_descriptions = {"only one"};
  rejects(p, "one entry per event");
  EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
}  // namespace mri::exporters

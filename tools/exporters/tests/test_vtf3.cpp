// VTF3 writer and reader: the documented text, round trips, global time
// order with spilling, late definitions, rejected input and reader errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sys/stat.h>

#include "mri_export.h"
#include "test_helpers.h"

namespace mri::exporters {
namespace {

using testing::ScratchDir;

TraceEvent enter(uint64_t t, uint32_t loc, uint32_t region) { return {t, loc, region, EventKind::Enter, 0, 0}; }
TraceEvent leave(uint64_t t, uint32_t loc, uint32_t region) { return {t, loc, region, EventKind::Leave, 0, 0}; }
TraceEvent metric(uint64_t t, uint32_t loc, uint32_t m, uint64_t v) { return {t, loc, 0, EventKind::Metric, m, v}; }

bool same_event(const TraceEvent& a, const TraceEvent& b) {
  return a.timestamp == b.timestamp && a.location == b.location && a.region == b.region && a.kind == b.kind &&
         a.metric == b.metric && a.value == b.value;
}

std::string describe(const TraceEvent& e) {
  return std::to_string(e.timestamp) + "/" + std::to_string(e.location) + "/" + std::to_string(e.region) + "/" +
         std::to_string(static_cast<int>(e.kind)) + "/" + std::to_string(e.metric) + "/" + std::to_string(e.value);
}

// The order the writer promises: by timestamp, ties by location, then as given.
std::vector<TraceEvent> in_file_order(std::vector<TraceEvent> events) {
  std::stable_sort(events.begin(), events.end(), [](const TraceEvent& a, const TraceEvent& b) {
    return a.timestamp != b.timestamp ? a.timestamp < b.timestamp : a.location < b.location;
  });
  return events;
}

void expect_same_definitions(const TraceDefinitions& expected, const TraceDefinitions& got) {
  EXPECT_EQ(got.program, expected.program);
  EXPECT_EQ(got.timer_resolution, expected.timer_resolution);
  ASSERT_EQ(got.locations.size(), expected.locations.size());
  for (size_t i = 0; i < expected.locations.size(); ++i) {
    EXPECT_EQ(got.locations[i].id, expected.locations[i].id);
    EXPECT_EQ(got.locations[i].name, expected.locations[i].name);
    EXPECT_EQ(got.locations[i].os_tid, expected.locations[i].os_tid);
  }
  ASSERT_EQ(got.regions.size(), expected.regions.size());
  for (size_t i = 0; i < expected.regions.size(); ++i) {
    EXPECT_EQ(got.regions[i].id, expected.regions[i].id);
    EXPECT_EQ(got.regions[i].name, expected.regions[i].name);
    EXPECT_EQ(got.regions[i].file, expected.regions[i].file);
    EXPECT_EQ(got.regions[i].line, expected.regions[i].line);
    EXPECT_EQ(got.regions[i].kind, expected.regions[i].kind);
  }
  ASSERT_EQ(got.metrics.size(), expected.metrics.size());
  for (size_t i = 0; i < expected.metrics.size(); ++i) {
    EXPECT_EQ(got.metrics[i].id, expected.metrics[i].id);
    EXPECT_EQ(got.metrics[i].name, expected.metrics[i].name);
    EXPECT_EQ(got.metrics[i].unit, expected.metrics[i].unit);
  }
}

void expect_same_events(const std::vector<TraceEvent>& expected, const std::vector<TraceEvent>& got) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_TRUE(same_event(expected[i], got[i])) << "event " << i << ": expected " << describe(expected[i])
                                                 << ", read " << describe(got[i]);
  }
}

// Writes in batches of `batch` events, each batch from one location, the
// locations taking turns (as the archiver drains thread by thread).
void write_trace(TraceWriter& w, const std::string& path, const TraceDefinitions& defs,
                 const std::vector<TraceEvent>& events, size_t batch) {
  std::string error;
  ASSERT_TRUE(w.begin(path, defs, error)) << error;
  std::vector<std::vector<TraceEvent>> per_location(defs.locations.size());
  for (const TraceEvent& e : events) per_location[e.location].push_back(e);
  std::vector<size_t> done(per_location.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t loc = 0; loc < per_location.size(); ++loc) {
      const size_t n = std::min(batch, per_location[loc].size() - done[loc]);
      if (n == 0) continue;
      ASSERT_TRUE(w.write(per_location[loc].data() + done[loc], n, error)) << error;
      done[loc] += n;
      progress = true;
    }
  }
  ASSERT_TRUE(w.finish(error)) << error;
  EXPECT_EQ(w.events_written(), events.size());
}

// Nested calls on `locations` threads: main { solve { step; step } } with
// a metric at each step's exit, shifted in time per thread.
std::vector<TraceEvent> nested_events(uint32_t locations, uint32_t repetitions) {
  std::vector<TraceEvent> events;
  for (uint32_t loc = 0; loc < locations; ++loc) {
    uint64_t t = 1000 + loc * 7;
    events.push_back(enter(t, loc, 0));
    for (uint32_t r = 0; r < repetitions; ++r) {
      events.push_back(enter(t += 10, loc, 1));
      for (int s = 0; s < 2; ++s) {
        events.push_back(enter(t += 3, loc, 2));
        events.push_back(leave(t += 5, loc, 2));
        events.push_back(metric(t, loc, 0, 100 + r + loc));
      }
      events.push_back(leave(t += 1, loc, 1));
    }
    events.push_back(leave(t += 10, loc, 0));
  }
  return events;
}

TraceDefinitions definitions_with_metric(uint32_t locations) {
  TraceDefinitions defs = testing::sample_definitions(locations);
  defs.metrics = {MetricDefinition{0, "PAPI_L1_DCM", "#"}};
  return defs;
}

TEST(Vtf3, FileHasTheDocumentedRecords) {
  ScratchDir dir;
  TraceDefinitions defs;
  defs.program = "demo";
  defs.locations = {Location{0, "main thread", 77}};
  defs.regions = {Region{0, "main", "a.c", 1, "ROUTINE"}, Region{1, "loop", "", 0, "LOOP"}};
  defs.metrics = {MetricDefinition{0, "PAPI_L1_DCM", "#"}};
  const std::vector<TraceEvent> events = {enter(100, 0, 0), enter(150, 0, 1), leave(160, 0, 1),
                                          metric(160, 0, 0, 42), leave(200, 0, 0)};
  auto w = make_vtf3_writer();
  write_trace(*w, dir / "t.vtf", defs, events, 10);
  EXPECT_EQ(testing::read_file(dir / "t.vtf"),
            "0 COMMENT \"MRI trace, VTF3 ASCII records, rendition 1\"\n"
            "DEFCREATOR \"MRI exporters\"\n"
            "0 COMMENT \"mri:program=demo\"\n"
            "DEFCLKPERIOD 1e-09\n"
            "DEFSYSCPUNUMS 1 1\n"
            "DEFCPUNAME 0 \"main thread\"\n"
            "0 COMMENT \"mri:os_tid 0=77\"\n"
            "DEFSCLFILE 0 \"a.c\"\n"
            "DEFSCL 0 1 0 1\n"
            "DEFACT 0 \"ROUTINE\"\n"
            "DEFACT 1 \"LOOP\"\n"
            "DEFSTATE 0 0 \"main\" 0\n"
            "DEFSTATE 1 1 \"loop\" -1\n"
            "DEFSAMPCLASS 0 \"MRI metrics\"\n"
            "DEFSAMP 0 0 \"PAPI_L1_DCM\" \"#\"\n"
            "100 DOWNTO 0 0 -1\n"
            "150 DOWNTO 1 0 -1\n"
            "160 UPFROM 1 0 -1\n"
            "160 SAMP 0 1 0 42\n"
            "200 UPFROM 0 0 -1\n");
}

TEST(Vtf3, RoundTripKeepsDefinitionsAndEvents) {
  ScratchDir dir;
  const TraceDefinitions defs = definitions_with_metric(3);
  const std::vector<TraceEvent> events = nested_events(3, 20);
  auto w = make_vtf3_writer();
  write_trace(*w, dir / "trace.vtf", defs, events, 7);

  TraceDefinitions read_defs;
  std::vector<TraceEvent> read_events;
  std::string error;
  ASSERT_TRUE(read_vtf3(dir / "trace.vtf", read_defs, read_events, error)) << error;
  expect_same_definitions(defs, read_defs);
  expect_same_events(in_file_order(events), read_events);
  // Nothing but the trace is left in the directory.
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"trace.vtf"});
}

TEST(Vtf3, NestingIsPreservedPerLocation) {
  ScratchDir dir;
  const TraceDefinitions defs = definitions_with_metric(4);
  const std::vector<TraceEvent> events = nested_events(4, 5);
  auto w = make_vtf3_writer();
  write_trace(*w, dir / "trace.vtf", defs, events, 3);
  TraceDefinitions read_defs;
  std::vector<TraceEvent> read_events;
  std::string error;
  ASSERT_TRUE(read_vtf3(dir / "trace.vtf", read_defs, read_events, error)) << error;
  std::vector<std::vector<uint32_t>> stacks(4);
  std::vector<size_t> enters(4, 0);
  for (const TraceEvent& e : read_events) {
    auto& stack = stacks[e.location];
    if (e.kind == EventKind::Enter) {
      stack.push_back(e.region);
      ++enters[e.location];
    } else if (e.kind == EventKind::Leave) {
      ASSERT_FALSE(stack.empty()) << "leave without enter on location " << e.location;
      ASSERT_EQ(stack.back(), e.region) << "leave does not match the innermost enter on location " << e.location;
      stack.pop_back();
    }
  }
  for (uint32_t loc = 0; loc < 4; ++loc) {
    EXPECT_TRUE(stacks[loc].empty());
    EXPECT_EQ(enters[loc], 1u + 5u * 3u);  // main, then per repetition solve + 2 steps
  }
}

TEST(Vtf3, NamesWithSpacesQuotesAndControlCharactersSurvive) {
  ScratchDir dir;
  TraceDefinitions defs;
  defs.program = "my \"quoted\" program";
  defs.timer_resolution = 2'400'000'000;  // a TSC at 2.4 GHz
  defs.locations = {Location{0, "worker \\ 0", -1}, Location{1, "tab\tand\nnewline", 12}};
  defs.regions = {Region{0, "say \"hi\"", "dir with space/x.c", 5, "ROUTINE"},
                  Region{1, "Schleife \xc3\xbc \x01", "", 9, "LOOP"},  // UTF-8 and a control byte; line without file
                  Region{2, "", "", 0, ""}};
  defs.metrics = {MetricDefinition{0, "time per instance", "ns"}};
  const std::vector<TraceEvent> events = {enter(5, 0, 0), enter(6, 1, 1), enter(7, 1, 2), leave(8, 1, 2),
                                          leave(9, 1, 1), metric(9, 1, 0, 3), leave(10, 0, 0)};
  auto w = make_vtf3_writer();
  write_trace(*w, dir / "names.vtf", defs, events, 100);
  TraceDefinitions read_defs;
  std::vector<TraceEvent> read_events;
  std::string error;
  ASSERT_TRUE(read_vtf3(dir / "names.vtf", read_defs, read_events, error)) << error;
  expect_same_definitions(defs, read_defs);
  expect_same_events(in_file_order(events), read_events);
}

TEST(Vtf3, ManyThreadsAreMergedInTimeOrderWithSpilling) {
  ScratchDir dir;
  const uint32_t threads = 64;
  const TraceDefinitions defs = definitions_with_metric(threads);
  const std::vector<TraceEvent> events = nested_events(threads, 300);  // 64 * 1802 events
  // 64 KiB of memory for ~2700 events: most of the trace goes through the
  // spill files and comes back in the merge.
  auto w = make_vtf3_writer(64 << 10);
  write_trace(*w, dir / "many.vtf", defs, events, 100);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"many.vtf"});  // spill files are gone
  TraceDefinitions read_defs;
  std::vector<TraceEvent> read_events;
  std::string error;
  ASSERT_TRUE(read_vtf3(dir / "many.vtf", read_defs, read_events, error)) << error;
  expect_same_definitions(defs, read_defs);
  expect_same_events(in_file_order(events), read_events);
}

TEST(Vtf3, EqualTimestampsAreOrderedByLocation) {
  ScratchDir dir;
  const TraceDefinitions defs = testing::sample_definitions(3);
  auto w = make_vtf3_writer();
  std::string error;
  ASSERT_TRUE(w->begin(dir / "ties.vtf", defs, error)) << error;
  const std::vector<TraceEvent> loc2 = {enter(10, 2, 0), leave(20, 2, 0)};
  const std::vector<TraceEvent> loc0 = {enter(10, 0, 0), leave(20, 0, 0)};
  const std::vector<TraceEvent> loc1 = {enter(10, 1, 0), enter(10, 1, 1), leave(20, 1, 1), leave(20, 1, 0)};
  ASSERT_TRUE(w->write(loc2.data(), loc2.size(), error)) << error;
  ASSERT_TRUE(w->write(loc0.data(), loc0.size(), error)) << error;
  ASSERT_TRUE(w->write(loc1.data(), loc1.size(), error)) << error;
  ASSERT_TRUE(w->finish(error)) << error;
  TraceDefinitions read_defs;
  std::vector<TraceEvent> read_events;
  ASSERT_TRUE(read_vtf3(dir / "ties.vtf", read_defs, read_events, error)) << error;
  expect_same_events({enter(10, 0, 0), enter(10, 1, 0), enter(10, 1, 1), enter(10, 2, 0), leave(20, 0, 0),
                      leave(20, 1, 1), leave(20, 1, 0), leave(20, 2, 0)},
                     read_events);
}

TEST(Vtf3, RegionsAndThreadsAddedLate) {
  ScratchDir dir;
  TraceDefinitions defs = testing::sample_definitions(1);
  defs.regions.resize(1);  // only main at the start
  auto w = make_vtf3_writer();
  std::string error;
  ASSERT_TRUE(w->begin(dir / "late.vtf", defs, error)) << error;
  const std::vector<TraceEvent> first = {enter(100, 0, 0)};
  ASSERT_TRUE(w->write(first.data(), first.size(), error)) << error;
  // A thread and a region (with a sparse id) appear while the program runs.
  const Location worker{1, "worker", 4242};
  const Region late{7, "late region", "late.c", 3, "BLOCK"};
  ASSERT_TRUE(w->add_location(worker, error)) << error;
  ASSERT_TRUE(w->add_region(late, error)) << error;
  ASSERT_TRUE(w->add_region(late, error)) << "re-adding an identical region is fine: " << error;
  const MetricDefinition m{0, "cycles", "#"};
  ASSERT_TRUE(w->add_metric(m, error)) << error;
  const std::vector<TraceEvent> second = {enter(110, 1, 7), leave(120, 1, 7), metric(120, 1, 0, 9)};
  ASSERT_TRUE(w->write(second.data(), second.size(), error)) << error;
  const std::vector<TraceEvent> third = {enter(130, 0, 7), leave(140, 0, 7), leave(150, 0, 0)};
  ASSERT_TRUE(w->write(third.data(), third.size(), error)) << error;
  ASSERT_TRUE(w->finish(error)) << error;

  TraceDefinitions read_defs;
  std::vector<TraceEvent> read_events;
  ASSERT_TRUE(read_vtf3(dir / "late.vtf", read_defs, read_events, error)) << error;
  TraceDefinitions expected = defs;
  expected.locations.push_back(worker);
  expected.regions.push_back(late);
  expected.metrics.push_back(m);
  expect_same_definitions(expected, read_defs);
  expect_same_events({enter(100, 0, 0), enter(110, 1, 7), leave(120, 1, 7), metric(120, 1, 0, 9), enter(130, 0, 7),
                      leave(140, 0, 7), leave(150, 0, 0)},
                     read_events);
}

TEST(Vtf3, EmptyTraceHasDefinitionsOnly) {
  ScratchDir dir;
  const TraceDefinitions defs = testing::sample_definitions(2);
  auto w = make_vtf3_writer();
  write_trace(*w, dir / "empty.vtf", defs, {}, 1);
  TraceDefinitions read_defs;
  std::vector<TraceEvent> read_events;
  std::string error;
  ASSERT_TRUE(read_vtf3(dir / "empty.vtf", read_defs, read_events, error)) << error;
  expect_same_definitions(defs, read_defs);
  EXPECT_TRUE(read_events.empty());
}

TEST(Vtf3, InvalidEventsAreRejectedWholeBatch) {
  ScratchDir dir;
  const TraceDefinitions defs = testing::sample_definitions(2);
  auto w = make_vtf3_writer();
  std::string error;
  ASSERT_TRUE(w->begin(dir / "bad.vtf", defs, error)) << error;
  const std::vector<TraceEvent> good = {enter(100, 0, 0)};
  ASSERT_TRUE(w->write(good.data(), good.size(), error)) << error;

  const std::vector<TraceEvent> undefined_location = {enter(110, 0, 1), enter(110, 7, 0)};
  EXPECT_FALSE(w->write(undefined_location.data(), undefined_location.size(), error));
  EXPECT_EQ(error, "event 1 of the batch (Enter, location 7, timestamp 110): location 7 is not defined "
                   "(add_location first)");
  const std::vector<TraceEvent> undefined_region = {leave(120, 1, 9)};
  EXPECT_FALSE(w->write(undefined_region.data(), undefined_region.size(), error));
  EXPECT_NE(error.find("region 9 is not defined"), std::string::npos) << error;
  const std::vector<TraceEvent> undefined_metric = {metric(120, 1, 3, 1)};
  EXPECT_FALSE(w->write(undefined_metric.data(), undefined_metric.size(), error));
  EXPECT_NE(error.find("metric 3 is not defined"), std::string::npos) << error;
  const std::vector<TraceEvent> backwards = {enter(150, 0, 1), leave(90, 0, 1)};
  EXPECT_FALSE(w->write(backwards.data(), backwards.size(), error));
  EXPECT_NE(error.find("timestamp goes back in time (previous event of location 0 at 150)"), std::string::npos)
      << error;
  const std::vector<TraceEvent> before_earlier_batch = {leave(50, 0, 0)};
  EXPECT_FALSE(w->write(before_earlier_batch.data(), before_earlier_batch.size(), error));
  EXPECT_NE(error.find("previous event of location 0 at 100"), std::string::npos) << error;
  EXPECT_FALSE(w->add_region(Region{0, "other name", "gauss.c", 10, "PROGRAM"}, error));
  EXPECT_EQ(error, "region 0 is already defined differently");
  EXPECT_EQ(w->events_written(), 1u);

  // The writer is still usable, and the rejected batches left no trace.
  const std::vector<TraceEvent> rest = {leave(200, 0, 0)};
  ASSERT_TRUE(w->write(rest.data(), rest.size(), error)) << error;
  ASSERT_TRUE(w->finish(error)) << error;
  TraceDefinitions read_defs;
  std::vector<TraceEvent> read_events;
  ASSERT_TRUE(read_vtf3(dir / "bad.vtf", read_defs, read_events, error)) << error;
  expect_same_events({enter(100, 0, 0), leave(200, 0, 0)}, read_events);
}

TEST(Vtf3, CallsOutOfSequenceAreErrors) {
  ScratchDir dir;
  auto w = make_vtf3_writer();
  std::string error;
  const std::vector<TraceEvent> one = {enter(1, 0, 0)};
  EXPECT_FALSE(w->write(one.data(), one.size(), error));
  EXPECT_EQ(error, "begin() has not been called");
  EXPECT_FALSE(w->finish(error));
  TraceDefinitions bad = testing::sample_definitions(1);
  bad.timer_resolution = 0;
  EXPECT_FALSE(w->begin(dir / "x.vtf", bad, error));
  EXPECT_EQ(error, "timer_resolution must be at least 1 tick per second");
  ASSERT_TRUE(w->begin(dir / "x.vtf", testing::sample_definitions(1), error)) << error;
  EXPECT_FALSE(w->begin(dir / "x.vtf", testing::sample_definitions(1), error));
  ASSERT_TRUE(w->finish(error)) << error;
  EXPECT_FALSE(w->finish(error));
  EXPECT_EQ(error, "the trace is already finished");
}

TEST(Vtf3, NothingAppearsBeforeFinishAndNothingRemainsWithoutIt) {
  ScratchDir dir;
  {
    auto w = make_vtf3_writer();
    std::string error;
    ASSERT_TRUE(w->begin(dir / "unfinished.vtf", testing::sample_definitions(1), error)) << error;
    const std::vector<TraceEvent> events = {enter(1, 0, 0), leave(2, 0, 0)};
    ASSERT_TRUE(w->write(events.data(), events.size(), error)) << error;
    EXPECT_FALSE(testing::file_exists(dir / "unfinished.vtf"));
  }  // destroyed without finish()
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Vtf3, ExistingFileIsReplacedOnlyAtFinish) {
  ScratchDir dir;
  { std::ofstream(dir / "old.vtf") << "previous trace\n"; }
  auto w = make_vtf3_writer();
  std::string error;
  ASSERT_TRUE(w->begin(dir / "old.vtf", testing::sample_definitions(1), error)) << error;
  EXPECT_EQ(testing::read_file(dir / "old.vtf"), "previous trace\n");
  ASSERT_TRUE(w->finish(error)) << error;
  TraceDefinitions read_defs;
  std::vector<TraceEvent> read_events;
  ASSERT_TRUE(read_vtf3(dir / "old.vtf", read_defs, read_events, error)) << error;
  EXPECT_EQ(read_defs.program, "gauss");
}

TEST(Vtf3, FileGetsTheModeOfAPlainCreate) {
  ScratchDir dir;
  const mode_t old_mask = ::umask(027);
  auto w = make_vtf3_writer();
  std::string error;
  const bool ok = w->begin(dir / "mode.vtf", testing::sample_definitions(1), error) && w->finish(error);
  ::umask(old_mask);
  ASSERT_TRUE(ok) << error;
  struct stat st;
  ASSERT_EQ(::stat((dir / "mode.vtf").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);  // 0666 & ~027, not mkstemp's 0600
}

// --- reader errors ---------------------------------------------------------

std::string read_error_of(const std::string& text) {
  ScratchDir dir;
  { std::ofstream(dir / "in.vtf") << text; }
  TraceDefinitions defs;
  std::vector<TraceEvent> events;
  std::string error;
  if (read_vtf3(dir / "in.vtf", defs, events, error)) return "(no error)";
  // Report relative to the file name so the expectations stay short.
  return error.substr(error.find("in.vtf"));
}

const char* kHeader =
    "DEFSYSCPUNUMS 1 1\n"
    "DEFCPUNAME 0 \"t\"\n"
    "DEFACT 0 \"ROUTINE\"\n"
    "DEFSTATE 0 0 \"main\" -1\n";

TEST(Vtf3Reader, ReportsMalformedInputWithLineNumbers) {
  EXPECT_EQ(read_error_of("DEFFOO 1\n"), "in.vtf:1: unknown record 'DEFFOO'");
  EXPECT_EQ(read_error_of(std::string(kHeader) + "10 DOWNTO 3 0 -1\n"), "in.vtf:5: undefined state 3");
  EXPECT_EQ(read_error_of(std::string(kHeader) + "10 DOWNTO 0 1 -1\n"), "in.vtf:5: undefined CPU 1");
  EXPECT_EQ(read_error_of(std::string(kHeader) + "10 DOWNTO 0 0 -1\n5 UPFROM 0 0 -1\n"),
            "in.vtf:6: record out of time order: time 5 after 10");
  EXPECT_EQ(read_error_of(std::string(kHeader) + "10 DOWNTO 0 0\n"), "in.vtf:5: missing SCL id");
  EXPECT_EQ(read_error_of(std::string(kHeader) + "10 DOWNTO x 0 -1\n"),
            "in.vtf:5: bad state id 'x' (expected an unsigned integer)");
  EXPECT_EQ(read_error_of(std::string(kHeader) + "10 DOWNTO 0 0 -1 extra\n"),
            "in.vtf:5: unexpected text at the end of the DOWNTO record");
  EXPECT_EQ(read_error_of("DEFCPUNAME 0 \"open\n"), "in.vtf:1: unterminated string (CPU name)");
  EXPECT_EQ(read_error_of("DEFCPUNAME 0 \"a\\qb\"\n"), "in.vtf:1: unknown escape \\q in CPU name");
  EXPECT_EQ(read_error_of("DEFSYSCPUNUMS 1 1\nDEFCPUNAME 2 \"x\"\n"),
            "in.vtf:2: CPU 2 is beyond the 1 CPUs of DEFSYSCPUNUMS");
  EXPECT_EQ(read_error_of("DEFSTATE 4 0 \"main\" -1\n"), "in.vtf:1: state 0 refers to undefined activity 4");
  EXPECT_EQ(read_error_of("DEFCLKPERIOD -1\n"), "in.vtf:1: clock period must be positive");
  EXPECT_EQ(read_error_of("\n\nDEFCPUNAME 0 \"t\"\n0 COMMENT \"mri:os_tid 0=x\"\n"),
            "in.vtf:4: malformed thread id comment 'mri:os_tid 0=x'");
}

TEST(Vtf3Reader, AcceptsExchangeRecords) {
  ScratchDir dir;
  {
    std::ofstream(dir / "ex.vtf") << kHeader << "DEFSTATE 0 1 \"other\" -1\n"
                                  << "10 DOWNTO 0 0 -1\n20 EXCHANGE 0 0 1 -1\n30 UPFROM 1 0 -1\n";
  }
  TraceDefinitions defs;
  std::vector<TraceEvent> events;
  std::string error;
  ASSERT_TRUE(read_vtf3(dir / "ex.vtf", defs, events, error)) << error;
  expect_same_events({enter(10, 0, 0), leave(20, 0, 0), enter(20, 0, 1), leave(30, 0, 1)}, events);
}

TEST(Vtf3Reader, MissingFileNamesTheReason) {
  TraceDefinitions defs;
  std::vector<TraceEvent> events;
  std::string error;
  EXPECT_FALSE(read_vtf3("/nonexistent-dir/x.vtf", defs, events, error));
  EXPECT_EQ(error, "/nonexistent-dir/x.vtf: No such file or directory");
}

}  // namespace
}  // namespace mri::exporters

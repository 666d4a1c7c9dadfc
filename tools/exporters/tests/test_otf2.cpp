// OTF2 writer, read back with the real otf2-print.
#include <gtest/gtest.h>

#include <fstream>

#include "mri_export.h"
#include "test_helpers.h"

namespace mri::exporters {
namespace {

using testing::ScratchDir;

TraceEvent enter(uint64_t t, uint32_t loc, uint32_t region) { return {t, loc, region, EventKind::Enter, 0, 0}; }
TraceEvent leave(uint64_t t, uint32_t loc, uint32_t region) { return {t, loc, region, EventKind::Leave, 0, 0}; }
TraceEvent metric(uint64_t t, uint32_t loc, uint32_t m, uint64_t v) { return {t, loc, 0, EventKind::Metric, m, v}; }

#define SKIP_WITHOUT_OTF2()                                                                            \
  do {                                                                                                 \
    if (!otf2_supported()) GTEST_SKIP() << "built without OTF2 (MRI_USE_OTF2=OFF or library missing)"; \
    if (!testing::program_available(MRI_OTF2_PRINT))                                                   \
      GTEST_SKIP() << "otf2-print not found (Debian package otf2-tools)";                              \
  } while (0)

testing::CommandResult otf2_print(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {MRI_OTF2_PRINT};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::run_command(argv);
}

// main { solve { step } x reps } per location; location L starts at 1000*L.
std::vector<TraceEvent> nested(uint32_t loc, int reps) {
  std::vector<TraceEvent> ev;
  uint64_t t = 1000 * (loc + 1);
  ev.push_back(enter(t, loc, 0));
  for (int r = 0; r < reps; ++r) {
    ev.push_back(enter(t += 10, loc, 1));
    ev.push_back(enter(t += 2, loc, 2));
    ev.push_back(leave(t += 5, loc, 2));
    ev.push_back(leave(t += 1, loc, 1));
  }
  ev.push_back(leave(t += 10, loc, 0));
  return ev;
}

TEST(Otf2, Otf2PrintReadsEventsCountsNamesAndTimestamps) {
  SKIP_WITHOUT_OTF2();
  ScratchDir dir;
  const TraceDefinitions defs = testing::sample_definitions(3);
  auto w = make_otf2_writer();
  std::string error;
  ASSERT_TRUE(w->begin(dir / "trace.otf2", defs, error)) << error;
  std::vector<std::vector<TraceEvent>> per_location = {nested(0, 4), nested(1, 2), nested(2, 7)};
  // Interleave the locations batch by batch, as the archiver drains them.
  for (size_t start = 0; start < 40; start += 5) {
    for (const auto& events : per_location) {
      if (start >= events.size()) continue;
      const size_t n = std::min<size_t>(5, events.size() - start);
      ASSERT_TRUE(w->write(events.data() + start, n, error)) << error;
    }
  }
  EXPECT_FALSE(testing::file_exists(dir / "trace.otf2")) << "the anchor must not exist before finish()";
  ASSERT_TRUE(w->finish(error)) << error;
  EXPECT_EQ(w->events_written(), 18u + 10u + 30u);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"trace", "trace.def", "trace.otf2"}));

  const testing::CommandResult printed = otf2_print({"-Werror", dir / "trace.otf2"});
  ASSERT_EQ(printed.exit_status, 0) << printed.output;
  const std::vector<testing::Otf2Event> events = testing::parse_otf2_events(printed.output);
  const char* names[] = {"main", "solve", "elimination step"};
  for (uint32_t loc = 0; loc < 3; ++loc) {
    std::vector<testing::Otf2Event> mine;
    for (const auto& e : events)
      if (e.location == loc) mine.push_back(e);
    const std::vector<TraceEvent>& expected = per_location[loc];
    ASSERT_EQ(mine.size(), expected.size()) << "location " << loc;
    std::vector<std::string> stack;
    for (size_t i = 0; i < mine.size(); ++i) {
      EXPECT_EQ(mine[i].kind, expected[i].kind == EventKind::Enter ? "ENTER" : "LEAVE");
      EXPECT_EQ(mine[i].timestamp, expected[i].timestamp);
      EXPECT_EQ(mine[i].region, names[expected[i].region]);
      if (mine[i].kind == "ENTER") {
        stack.push_back(mine[i].region);
      } else {
        ASSERT_FALSE(stack.empty());
        EXPECT_EQ(stack.back(), mine[i].region) << "enters and leaves must nest";
        stack.pop_back();
      }
    }
    EXPECT_TRUE(stack.empty());
  }

  // Definitions: per-location event counts, region source locations, clock.
  const testing::CommandResult globals = otf2_print({"-G", dir / "trace.otf2"});
  ASSERT_EQ(globals.exit_status, 0) << globals.output;
  const std::string& g = globals.output;
  EXPECT_NE(g.find("Ticks per Seconds: 1000000000, Global Offset: 1000, Length: 2136"), std::string::npos) << g;
  EXPECT_NE(g.find("Name: \"thread 0\" <"), std::string::npos) << g;
  EXPECT_NE(g.find("# Events: 18,"), std::string::npos) << g;
  EXPECT_NE(g.find("# Events: 10,"), std::string::npos) << g;
  EXPECT_NE(g.find("# Events: 30,"), std::string::npos) << g;
  EXPECT_NE(g.find("Name: \"solve\""), std::string::npos) << g;
  EXPECT_NE(g.find("Role: LOOP"), std::string::npos) << g;
  EXPECT_NE(g.find("File: \"gauss.c\""), std::string::npos) << g;
  EXPECT_NE(g.find("Begin: 42, End: 42"), std::string::npos) << g;
  EXPECT_NE(g.find("Name: \"gauss\" <"), std::string::npos) << "the process is named after the program: " << g;
  EXPECT_NE(g.find("LOCATION_PROPERTY"), std::string::npos) << g;
  EXPECT_NE(g.find("Value: 4002"), std::string::npos) << "OS thread id of location 2: " << g;
}

TEST(Otf2, MetricsAndLateDefinitions) {
  SKIP_WITHOUT_OTF2();
  ScratchDir dir;
  TraceDefinitions defs = testing::sample_definitions(1);
  auto w = make_otf2_writer();
  std::string error;
  ASSERT_TRUE(w->begin(dir / "m.otf2", defs, error)) << error;
  const std::vector<TraceEvent> first = {enter(10, 0, 0)};
  ASSERT_TRUE(w->write(first.data(), first.size(), error)) << error;
  ASSERT_TRUE(w->add_location(Location{1, "late worker", 99}, error)) << error;
  ASSERT_TRUE(w->add_region(Region{5, "late region", "late.c", 8, "BLOCK"}, error)) << error;
  ASSERT_TRUE(w->add_metric(MetricDefinition{0, "PAPI_TOT_INS", "#"}, error)) << error;
  const std::vector<TraceEvent> second = {enter(20, 1, 5), leave(30, 1, 5), metric(30, 1, 0, 123456789012ull)};
  ASSERT_TRUE(w->write(second.data(), second.size(), error)) << error;
  const std::vector<TraceEvent> third = {leave(40, 0, 0)};
  ASSERT_TRUE(w->write(third.data(), third.size(), error)) << error;
  ASSERT_TRUE(w->finish(error)) << error;

  const testing::CommandResult printed = otf2_print({"-A", dir / "m.otf2"});
  ASSERT_EQ(printed.exit_status, 0) << printed.output;
  const auto events = testing::parse_otf2_events(printed.output);
  ASSERT_EQ(events.size(), 5u) << printed.output;
  EXPECT_EQ(events[1].kind, "ENTER");
  EXPECT_EQ(events[1].location, 1u);
  EXPECT_EQ(events[1].region, "late region");
  EXPECT_EQ(events[3].kind, "METRIC");
  EXPECT_EQ(events[3].timestamp, 30u);
  EXPECT_NE(events[3].rest.find("123456789012"), std::string::npos) << events[3].rest;
  EXPECT_NE(printed.output.find("Name: \"PAPI_TOT_INS\""), std::string::npos) << printed.output;
  EXPECT_NE(printed.output.find("Name: \"late worker\""), std::string::npos) << printed.output;
}

TEST(Otf2, LargeTraceIsFlushedWhileWriting) {
  SKIP_WITHOUT_OTF2();
  // 1 M events, about 11 MB: more than the 4 MiB of chunks a location may
  // hold, so the event buffer is flushed several times during write().
  ScratchDir dir;
  const TraceDefinitions defs = testing::sample_definitions(1);
  auto w = make_otf2_writer();
  std::string error;
  ASSERT_TRUE(w->begin(dir / "large.otf2", defs, error)) << error;
  std::vector<TraceEvent> batch;
  const uint64_t total = 1'000'000;
  for (uint64_t t = 0; t < total; ++t) {
    batch.push_back(t % 2 == 0 ? enter(t, 0, 1) : leave(t, 0, 1));
    if (batch.size() == 4096 || t + 1 == total) {
      ASSERT_TRUE(w->write(batch.data(), batch.size(), error)) << error;
      batch.clear();
    }
  }
  ASSERT_TRUE(w->finish(error)) << error;
  // The first and the last events are there, with their timestamps.
  for (const uint64_t from : {uint64_t{0}, total - 10}) {
    const testing::CommandResult printed =
        otf2_print({"--time", std::to_string(from), std::to_string(from + 9), dir / "large.otf2"});
    ASSERT_EQ(printed.exit_status, 0) << printed.output;
    const auto events = testing::parse_otf2_events(printed.output);
    ASSERT_EQ(events.size(), 10u) << printed.output;
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].timestamp, from + i);
      EXPECT_EQ(events[i].kind, (from + i) % 2 == 0 ? "ENTER" : "LEAVE");
      EXPECT_EQ(events[i].region, "solve");
    }
  }
  const testing::CommandResult globals = otf2_print({"-G", dir / "large.otf2"});
  EXPECT_NE(globals.output.find("# Events: 1000000,"), std::string::npos) << globals.output;
}

TEST(Otf2, EmptyArchiveIsValid) {
  SKIP_WITHOUT_OTF2();
  ScratchDir dir;
  auto w = make_otf2_writer();
  std::string error;
  ASSERT_TRUE(w->begin(dir / "empty.otf2", testing::sample_definitions(2), error)) << error;
  ASSERT_TRUE(w->finish(error)) << error;
  const testing::CommandResult printed = otf2_print({"-Werror", dir / "empty.otf2"});
  ASSERT_EQ(printed.exit_status, 0) << printed.output;
  EXPECT_TRUE(testing::parse_otf2_events(printed.output).empty());
}

TEST(Otf2, ExistingArchiveIsNotReplaced) {
  SKIP_WITHOUT_OTF2();
  ScratchDir dir;
  { std::ofstream(dir / "t.def") << "x"; }
  auto w = make_otf2_writer();
  std::string error;
  EXPECT_FALSE(w->begin(dir / "t.otf2", testing::sample_definitions(1), error));
  EXPECT_NE(error.find("already exists"), std::string::npos) << error;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"t.def"});
}

TEST(Otf2, PathMustNameTheAnchorFile) {
  SKIP_WITHOUT_OTF2();
  ScratchDir dir;
  auto w = make_otf2_writer();
  std::string error;
  EXPECT_FALSE(w->begin(dir / "trace.vtf", testing::sample_definitions(1), error));
  EXPECT_NE(error.find("must name the anchor file"), std::string::npos) << error;
}

TEST(Otf2, UnfinishedArchiveLeavesNothing) {
  SKIP_WITHOUT_OTF2();
  ScratchDir dir;
  {
    auto w = make_otf2_writer();
    std::string error;
    ASSERT_TRUE(w->begin(dir / "gone.otf2", testing::sample_definitions(2), error)) << error;
    const auto events = nested(0, 1000);
    ASSERT_TRUE(w->write(events.data(), events.size(), error)) << error;
    EXPECT_FALSE(testing::file_exists(dir / "gone.otf2"));
    EXPECT_FALSE(testing::file_exists(dir / "gone"));
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Otf2, InvalidEventsAreRejected) {
  SKIP_WITHOUT_OTF2();
  ScratchDir dir;
  auto w = make_otf2_writer();
  std::string error;
  ASSERT_TRUE(w->begin(dir / "bad.otf2", testing::sample_definitions(1), error)) << error;
  const std::vector<TraceEvent> bad = {enter(10, 0, 0), enter(11, 0, 3)};
  EXPECT_FALSE(w->write(bad.data(), bad.size(), error));
  EXPECT_NE(error.find("region 3 is not defined"), std::string::npos) << error;
  const std::vector<TraceEvent> good = {enter(10, 0, 0), leave(20, 0, 0)};
  ASSERT_TRUE(w->write(good.data(), good.size(), error)) << error;
  ASSERT_TRUE(w->finish(error)) << error;
  const testing::CommandResult printed = otf2_print({dir / "bad.otf2"});
  ASSERT_EQ(printed.exit_status, 0) << printed.output;
  EXPECT_EQ(testing::parse_otf2_events(printed.output).size(), 2u);
}

TEST(Otf2, FormatIsChosenByPathOrName) {
  EXPECT_EQ(trace_format_for_path("/x/run.otf2"), TraceFormat::Otf2);
  EXPECT_EQ(trace_format_for_path("/x/run.vtf"), TraceFormat::Vtf3);
  EXPECT_EQ(trace_format_for_path("otf2"), TraceFormat::Vtf3);
  TraceFormat f = TraceFormat::Vtf3;
  EXPECT_TRUE(parse_trace_format("OTF2", f));
  EXPECT_EQ(f, TraceFormat::Otf2);
  EXPECT_TRUE(parse_trace_format("vtf3", f));
  EXPECT_EQ(f, TraceFormat::Vtf3);
  EXPECT_FALSE(parse_trace_format("otf", f));
}

TEST(Otf2, BuildWithoutOtf2SaysSo) {
  if (otf2_supported()) GTEST_SKIP() << "this build has OTF2; the message is for builds without it";
  auto w = make_otf2_writer();
  std::string error;
  EXPECT_FALSE(w->begin("/tmp/never.otf2", testing::sample_definitions(1), error));
  EXPECT_EQ(error.rfind("built without OTF2", 0), 0u) << error;
}

}  // namespace
}  // namespace mri::exporters

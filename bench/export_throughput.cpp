// Exporter throughput: events per second through the VTF3 and OTF2 trace
// writers, end to end (begin, write in per-thread batches as the archiver
// drains them, finish with fsync and rename), on synthetic nested events.
//
//   export_throughput [--benchmark_filter=...]
//
// Writes into $TMPDIR (default /tmp); every iteration's output is removed.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "mri_export.h"

namespace {

using namespace mri::exporters;

constexpr size_t kBatch = 4096;  // events per write() call, one location each

// Per location: main { loop { step { kernel } step { kernel } } ... }, a
// depth-4 nesting, 1 to 3 ticks between events.
std::vector<std::vector<TraceEvent>> synthetic_trace(uint32_t locations, size_t events_per_location) {
  std::vector<std::vector<TraceEvent>> per_location(locations);
  for (uint32_t loc = 0; loc < locations; ++loc) {
    auto& ev = per_location[loc];
    ev.reserve(events_per_location);
    uint64_t t = loc;
    auto push = [&](uint32_t region, EventKind kind) {
      t += 1 + (ev.size() % 3);
      ev.push_back(TraceEvent{t, loc, region, kind, 0, 0});
    };
    push(0, EventKind::Enter);
    while (ev.size() + 10 < events_per_location) {
      push(1, EventKind::Enter);
      for (int s = 0; s < 2; ++s) {
        push(2, EventKind::Enter);
        push(3, EventKind::Enter);
        push(3, EventKind::Leave);
        push(2, EventKind::Leave);
      }
      push(1, EventKind::Leave);
    }
    push(0, EventKind::Leave);
  }
  return per_location;
}

TraceDefinitions definitions(uint32_t locations) {
  TraceDefinitions defs;
  defs.program = "synthetic";
  for (uint32_t i = 0; i < locations; ++i) defs.locations.push_back(Location{i, "thread " + std::to_string(i), 0});
  defs.regions = {Region{0, "main", "synthetic.c", 1, "PROGRAM"}, Region{1, "loop", "synthetic.c", 5, "LOOP"},
                  Region{2, "step", "synthetic.c", 9, "ROUTINE"}, Region{3, "kernel", "synthetic.c", 20, "ROUTINE"}};
  return defs;
}

std::string scratch_directory() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/mri-export-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

// Arguments: total events (millions), locations.
void run(benchmark::State& state, TraceFormat format, size_t memory_budget) {
  const size_t total = static_cast<size_t>(state.range(0)) * 1'000'000;
  const auto locations = static_cast<uint32_t>(state.range(1));
  const auto trace = synthetic_trace(locations, total / locations);
  const TraceDefinitions defs = definitions(locations);
  size_t events = 0;
  for (const auto& ev : trace) events += ev.size();
  const std::string dir = scratch_directory();
  if (dir.empty()) {
    state.SkipWithError("cannot create a scratch directory");
    return;
  }
  const std::string path = dir + (format == TraceFormat::Otf2 ? "/trace.otf2" : "/trace.vtf");
  uint64_t bytes = 0;
  for (auto _ : state) {
    auto writer = format == TraceFormat::Otf2 ? make_otf2_writer() : make_vtf3_writer(memory_budget);
    std::string error;
    bool ok = writer->begin(path, defs, error);
    // Drain the locations in turns, one batch each, like the archiver.
    for (size_t start = 0; ok && start < trace[0].size(); start += kBatch) {
      for (uint32_t loc = 0; ok && loc < locations; ++loc) {
        const size_t n = std::min(kBatch, trace[loc].size() - std::min(start, trace[loc].size()));
        if (n > 0) ok = writer->write(trace[loc].data() + start, n, error);
      }
    }
    if (ok) ok = writer->finish(error);
    if (!ok) {
      state.SkipWithError(error.c_str());
      break;
    }
    state.PauseTiming();
    bytes = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (entry.is_regular_file()) bytes += entry.file_size();
    }
    std::filesystem::remove_all(dir);
    std::filesystem::create_directory(dir);
    state.ResumeTiming();
  }
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events));
  state.counters["bytes_per_event"] = static_cast<double>(bytes) / static_cast<double>(events);
}

void BM_Vtf3Writer(benchmark::State& state) { run(state, TraceFormat::Vtf3, 64u << 20); }
// A 4 MiB budget: nearly every event goes through a spill file and back.
void BM_Vtf3WriterSpilling(benchmark::State& state) { run(state, TraceFormat::Vtf3, 4u << 20); }
void BM_Otf2Writer(benchmark::State& state) {
  if (!otf2_supported()) {
    state.SkipWithError("built without OTF2");
    return;
  }
  run(state, TraceFormat::Otf2, 0);
}

// {millions of events, locations}
BENCHMARK(BM_Vtf3Writer)->Args({4, 1})->Args({4, 8})->Args({4, 64})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Vtf3WriterSpilling)->Args({4, 8})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Otf2Writer)->Args({4, 1})->Args({4, 8})->Args({4, 64})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

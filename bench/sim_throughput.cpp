// sim_throughput - how many memory references per second the cache
// simulator (simulator/) handles on one core. docs/PERFORMANCE.md, "Cache
// simulator throughput", has the figures and the command.
//
// The streams are generated, not recorded: the data references that a
// compiled 256 x 256 double matrix multiply C = A B makes, in the order it
// makes them (the accumulator in a register, so no stores in the inner
// loop), for the first 16 rows of C (2.1 million references, 33 MB as
// Access records; every row repeats the pattern of the others, so 16 rows
// are representative and the array stays out of the way of the simulated
// caches' own memory). The arrays are at fixed addresses.
//   ijk: for i, j { s = 0; for k: s += A[i][k] * B[k][j]; C[i][j] = s }
//        B is walked down a column: a stride of 2 KiB, which maps every
//        B reference of a column to 2 of the 64 L1 sets; about half of all
//        references miss L1 and hit L2.
//   ikj: for i, k { a = A[i][k]; for j: C[i][j] += a * B[k][j] }
//        the loop order a programmer would choose: unit strides, about 4%
//        of references miss L1.
// Each benchmark iteration replays the whole stream in batches of 4096 (the
// batch size of the in-application adapter), so the caches are warm after
// the first iteration.
#include <benchmark/benchmark.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "cachesim.h"

namespace {

using mri::sim::Access;

constexpr uint64_t kN = 256;
constexpr uint64_t kRows = 16;
constexpr uint64_t kA = 0x10000000, kB = kA + kN * kN * 8, kC = kB + kN * kN * 8;

uint64_t at(uint64_t base, uint64_t row, uint64_t col) { return base + (row * kN + col) * 8; }

const std::vector<Access>& stream_ijk() {
  static const std::vector<Access> s = [] {
    std::vector<Access> v;
    v.reserve(kRows * kN * (2 * kN + 1));
    for (uint64_t i = 0; i < kRows; ++i)
      for (uint64_t j = 0; j < kN; ++j) {
        for (uint64_t k = 0; k < kN; ++k) {
          v.push_back({at(kA, i, k), 8, mri::sim::kRead});
          v.push_back({at(kB, k, j), 8, mri::sim::kRead});
        }
        v.push_back({at(kC, i, j), 8, mri::sim::kWrite});
      }
    return v;
  }();
  return s;
}

const std::vector<Access>& stream_ikj() {
  static const std::vector<Access> s = [] {
    std::vector<Access> v;
    v.reserve(kRows * kN * (1 + 3 * kN));
    for (uint64_t i = 0; i < kRows; ++i)
      for (uint64_t k = 0; k < kN; ++k) {
        v.push_back({at(kA, i, k), 8, mri::sim::kRead});
        for (uint64_t j = 0; j < kN; ++j) {
          v.push_back({at(kB, k, j), 8, mri::sim::kRead});
          v.push_back({at(kC, i, j), 8, mri::sim::kRead});
          v.push_back({at(kC, i, j), 8, mri::sim::kWrite});
        }
      }
    return v;
  }();
  return s;
}

std::unique_ptr<mri::sim::Hierarchy> make(const char* text, uint32_t parts = 1) {
  mri::sim::HierarchyConfig c;
  std::string error = mri::sim::parse_config(text, c);
  std::unique_ptr<mri::sim::Hierarchy> h;
  if (error.empty()) h = mri::sim::Hierarchy::create(c, &error, parts);
  if (!h) {
    std::fprintf(stderr, "sim_throughput: %s: %s\n", text, error.c_str());
    std::exit(1);
  }
  return h;
}

constexpr const char* kTwoLevels = "L1:32K,8,64,lru;L2:1M,16,64,lru";
constexpr const char* kThreeLevels = "L1:32K,8,64,lru;L2:1M,16,64,lru;L3:32M,16,64,lru,shared";
// The shape the in-application backend simulates by default on a 2-core
// machine (hwloc): private L1 and L2 per core, a shared L3, hence
// coherence between the cores' private levels (a write to a clean line
// looks into the other core's L1 and L2), even for a one-thread stream.
constexpr const char* kTwoCores = "L1:32K,8,64,lru;L2:1M,16,64,lru;L3:32M,16,64,lru,shared;cores=2";

// One pass of `stream` through `h`, in batches of 4096 references (the
// batch size of the in-application adapter). Not inline: it is what
// bench/sim_instructions.sh counts (simulate() enters its kernel by a tail
// call, which Valgrind's --toggle-collect does not follow).
__attribute__((noinline)) void replay_pass(mri::sim::Hierarchy& h, const std::vector<Access>& stream) {
  constexpr size_t kBatch = 4096;
  for (size_t i = 0; i < stream.size(); i += kBatch)
    h.simulate(0, stream.data() + i, std::min(kBatch, stream.size() - i));
}

// Replays `stream` through `h`, reporting references/s and L1's miss ratio.
void replay(benchmark::State& state, mri::sim::Hierarchy& h, const std::vector<Access>& stream) {
  for (auto _ : state) replay_pass(h, stream);
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(stream.size()));
  const mri::sim::LevelCounters l1 = h.counters(0, 0);
  state.counters["L1_miss_%"] =
      100.0 * double(l1.read_misses + l1.write_misses) / double(l1.reads() + l1.writes());
}

// Replays `stream` through a new hierarchy of `config`.
void replay(benchmark::State& state, const char* config, const std::vector<Access>& stream) {
  auto h = make(config);
  replay(state, *h, stream);
}

void BM_L1L2_matmul_ijk(benchmark::State& state) { replay(state, kTwoLevels, stream_ijk()); }

void BM_L1L2_matmul_ikj(benchmark::State& state) { replay(state, kTwoLevels, stream_ikj()); }

// The ijk stream with a monitor over B (512 KiB, 64 bins) counting
// `events`: every B reference is inside it, half of the references.
void replay_with_b_monitored(benchmark::State& state, std::vector<mri::sim::Event> events) {
  auto h = make(kTwoLevels);
  mri::sim::MonitorSpec spec;
  spec.begin = kB;
  spec.end = kB + kN * kN * 8;
  spec.bins = 64;
  spec.events = std::move(events);
  std::string error;
  if (h->add_monitor(spec, &error) < 0) state.SkipWithError(error.c_str());
  replay(state, *h, stream_ijk());
}

// L1 and L2 read hits and misses.
void BM_L1L2_matmul_ijk_monitor(benchmark::State& state) {
  std::vector<mri::sim::Event> events;
  for (uint8_t level : {0, 1})
    for (auto kind : {mri::sim::EventKind::kReadHit, mri::sim::EventKind::kReadMiss}) events.push_back({level, kind});
  replay_with_b_monitored(state, std::move(events));
}

// Only L1 read misses (what `mri hist --metric L1_DATA_READ_MISS` asks
// for): the L1 hits stay on the inline path, and the L2 events of B's
// references are not looked at.
void BM_L1L2_matmul_ijk_monitor_l1_misses(benchmark::State& state) {
  replay_with_b_monitored(state, {{0, mri::sim::EventKind::kReadMiss}});
}

void BM_L1L2L3_matmul_ijk(benchmark::State& state) { replay(state, kThreeLevels, stream_ijk()); }

void BM_L1L2L3_matmul_ikj(benchmark::State& state) { replay(state, kThreeLevels, stream_ikj()); }

void BM_2cores_matmul_ijk(benchmark::State& state) { replay(state, kTwoCores, stream_ijk()); }

void BM_2cores_matmul_ikj(benchmark::State& state) { replay(state, kTwoCores, stream_ikj()); }

// The multiply as bench/matmul.c's instrumented ikj loop records it in
// the program (`mri hist --metric L1_DATA_READ_MISS --data C`): clang
// vectorises the inner loop by 4 in 16-byte halves, so per step
// B[k][j..j+1] and B[k][j+2..j+3], then the same two of C read, then both
// written; the arrays 16 bytes past a 64-byte boundary, as the program's
// static arrays are (`nm`), so every other pair of halves spans two lines.
// The hierarchy hwloc gives a 2-core Zen 5 guest (48 KiB 12-way L1); a
// monitor over C counting L1 read misses in 25 bins. About 8% of the
// references miss L1, one per line of B.
constexpr uint64_t kVectorPhase = 16;
const std::vector<Access>& stream_ikj_vector() {
  static const std::vector<Access> s = [] {
    std::vector<Access> v;
    v.reserve(kRows * kN * (1 + 3 * kN / 2));
    const uint64_t a = kA + kVectorPhase, b = kB + kVectorPhase, c = kC + kVectorPhase;
    for (uint64_t i = 0; i < kRows; ++i)
      for (uint64_t k = 0; k < kN; ++k) {
        v.push_back({at(a, i, k), 8, mri::sim::kRead});
        for (uint64_t j = 0; j < kN; j += 4) {
          v.push_back({at(b, k, j), 16, mri::sim::kRead});
          v.push_back({at(b, k, j + 2), 16, mri::sim::kRead});
          v.push_back({at(c, i, j), 16, mri::sim::kRead});
          v.push_back({at(c, i, j + 2), 16, mri::sim::kRead});
          v.push_back({at(c, i, j), 16, mri::sim::kWrite});
          v.push_back({at(c, i, j + 2), 16, mri::sim::kWrite});
        }
      }
    return v;
  }();
  return s;
}
constexpr const char* kProgram = "L1:48K,12,64,lru;L2:1M,16,64,lru;L3:32M,16,64,lru,shared;cores=2";
// The program rung's monitor over C; "" or why it could not be added.
std::string add_program_monitor(mri::sim::Hierarchy& h) {
  mri::sim::MonitorSpec spec;
  spec.begin = kC + kVectorPhase;
  spec.end = spec.begin + kN * kN * 8;
  spec.bins = 25;
  spec.events = {{0, mri::sim::EventKind::kReadMiss}};
  std::string error;
  if (h.add_monitor(spec, &error) < 0) return error.empty() ? "add_monitor failed" : error;
  return "";
}
void BM_program_matmul_ikj_vector(benchmark::State& state) {
  auto h = make(kProgram);
  const std::string error = add_program_monitor(*h);
  if (!error.empty()) state.SkipWithError(error.c_str());
  replay(state, *h, stream_ikj_vector());
}

// The program's thread condenses each batch as it hands it over
// (Hierarchy::condense: the reads and the writes to dirty lines that hit
// the most recent way of their L1 set are dropped and counted), and the
// simulation thread simulates the rest. The first rung times the
// condensing alone, the second the simulation of the condensed batches;
// both per reference of the whole stream. kept_% is the share left.
// The condensing rungs take the stream's first 8 batches (512 KiB, in the
// host's L2 as a batch the program just recorded is), over and over: the
// whole stream (25 MB) would time the host's memory.
void condense_only(benchmark::State& state, mri::sim::Hierarchy& h, const std::vector<Access>& stream) {
  constexpr size_t kBatch = 4096;
  const size_t refs = std::min(stream.size(), 8 * kBatch);
  std::vector<Access> out(kBatch);
  size_t kept = 0;
  for (auto _ : state) {
    kept = 0;
    for (size_t i = 0; i < refs; i += kBatch) {
      mri::sim::Condensed dropped;
      kept += h.condense(stream.data() + i, std::min(kBatch, refs - i), out.data(), &dropped);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(refs));
  state.counters["kept_%"] = 100.0 * double(kept) / double(refs);
}
void BM_program_condense_matmul_ikj_vector(benchmark::State& state) {
  auto h = make(kProgram);
  add_program_monitor(*h);
  condense_only(state, *h, stream_ikj_vector());
}
void BM_L1L2_condense_matmul_ijk(benchmark::State& state) {
  auto h = make(kTwoLevels);
  condense_only(state, *h, stream_ijk());
}
void BM_program_condensed_matmul_ikj_vector(benchmark::State& state) {
  auto h = make(kProgram);
  const std::string error = add_program_monitor(*h);
  if (!error.empty()) state.SkipWithError(error.c_str());
  const std::vector<Access>& stream = stream_ikj_vector();
  constexpr size_t kBatch = 4096;
  struct Batch {
    size_t first, n;
    mri::sim::Condensed dropped;
  };
  std::vector<Access> kept(stream.size());
  std::vector<Batch> batches;
  size_t at = 0;
  for (size_t i = 0; i < stream.size(); i += kBatch) {
    Batch b{at, 0, {}};
    b.n = h->condense(stream.data() + i, std::min(kBatch, stream.size() - i), kept.data() + at, &b.dropped);
    at += b.n;
    batches.push_back(b);
  }
  for (auto _ : state)
    for (const Batch& b : batches) h->simulate(0, kept.data() + b.first, b.n, b.dropped);
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(stream.size()));
  state.counters["kept_%"] = 100.0 * double(at) / double(stream.size());
}

// The same hierarchy split in two parts by the line number modulo 2
// (Hierarchy::create): on one thread, simulate() sorts each batch into the
// two parts (a copy each) and simulates them in turn ...
void BM_L1L2_split2_simulate_matmul_ijk(benchmark::State& state) {
  auto h = make(kTwoLevels, 2);
  replay(state, *h, stream_ijk());
}
void BM_L1L2_split2_simulate_matmul_ikj(benchmark::State& state) {
  auto h = make(kTwoLevels, 2);
  replay(state, *h, stream_ikj());
}

// ... and on two threads, one part each (simulate_part), the stream sorted
// beforehand, as the in-application backend records it: references per
// second of the pair (items_per_second: wall-clock time), the same per
// second of CPU time of both threads (items_per_cpu_second: the second
// thread's work, which Google Benchmark's cpu_time leaves out), and part
// 0's share of the references. Modulus 2 halves the lines; 4 leaves a
// quarter to part 0.
void replay_split_two_threads(benchmark::State& state, uint32_t modulus, const std::vector<Access>& stream) {
  auto h = make(kTwoLevels, modulus);
  std::vector<Access> part[2];
  for (const Access& a : stream) {
    const uint64_t first = a.addr >> h->split_shift(), last = (a.addr + a.size - 1) >> h->split_shift();
    const bool p1 = (first & h->split_mask()) != 0;
    if (first != last || !p1) part[0].push_back(a);
    if (first != last || p1) part[1].push_back(a);
  }
  constexpr size_t kBatch = 4096;
  auto run = [&](uint32_t p) {
    const std::vector<Access>& s = part[p];
    for (size_t i = 0; i < s.size(); i += kBatch) h->simulate_part(p, 0, s.data() + i, std::min(kBatch, s.size() - i));
  };
  auto process_cpu_s = [] {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  };
  const double cpu0 = process_cpu_s();
  for (auto _ : state) {
    std::thread other(run, 1);
    run(0);
    other.join();
  }
  const double cpu_s = process_cpu_s() - cpu0;
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(stream.size()));
  state.counters["items_per_cpu_second"] = double(state.iterations()) * double(stream.size()) / cpu_s;
  state.counters["part0_%"] = 100.0 * double(part[0].size()) / double(stream.size());
}
void BM_L1L2_split2_two_threads_matmul_ijk(benchmark::State& state) { replay_split_two_threads(state, 2, stream_ijk()); }
void BM_L1L2_split2_two_threads_matmul_ikj(benchmark::State& state) { replay_split_two_threads(state, 2, stream_ikj()); }
void BM_L1L2_split4_two_threads_matmul_ijk(benchmark::State& state) { replay_split_two_threads(state, 4, stream_ijk()); }
void BM_L1L2_split4_two_threads_matmul_ikj(benchmark::State& state) { replay_split_two_threads(state, 4, stream_ikj()); }

BENCHMARK(BM_L1L2_matmul_ijk)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_L1L2_matmul_ikj)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_L1L2_matmul_ijk_monitor)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_L1L2_matmul_ijk_monitor_l1_misses)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_L1L2L3_matmul_ijk)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_L1L2L3_matmul_ikj)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_2cores_matmul_ijk)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_2cores_matmul_ikj)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_program_matmul_ikj_vector)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_program_condense_matmul_ikj_vector)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_program_condensed_matmul_ikj_vector)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_L1L2_condense_matmul_ijk)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_L1L2_split2_simulate_matmul_ijk)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_L1L2_split2_simulate_matmul_ikj)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_L1L2_split2_two_threads_matmul_ijk)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_L1L2_split2_two_threads_matmul_ikj)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_L1L2_split4_two_threads_matmul_ijk)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_L1L2_split4_two_threads_matmul_ikj)->Unit(benchmark::kMillisecond)->UseRealTime();

// --replay=STREAM,CONFIG,PASSES: replays STREAM (ijk, ikj, or vector: the
// program rung's stream) through a new hierarchy of CONFIG (two, three,
// 2cores, or program: the rungs' hierarchies; program with the program
// rung's monitor) PASSES times in batches as the rungs do, prints the
// references of one pass and exits; no timing. For counting instructions
// with callgrind (bench/sim_instructions.sh): the difference between two
// pass counts is the warm passes' work, the same on every run of the same
// binary.
int replay_only(const char* spec) {
  char stream[8] = {0}, config[8] = {0};
  int passes = 0, end = 0;
  if (std::sscanf(spec, "%7[^,],%7[^,],%d%n", stream, config, &passes, &end) != 3 || spec[end] != '\0' ||
      passes < 1 ||
      (std::strcmp(stream, "ijk") != 0 && std::strcmp(stream, "ikj") != 0 && std::strcmp(stream, "vector") != 0)) {
    std::fprintf(stderr,
                 "sim_throughput: --replay=%s: expected ijk|ikj|vector,two|three|2cores|program,PASSES (PASSES >= 1)\n",
                 spec);
    return 2;
  }
  const bool program = std::strcmp(config, "program") == 0;
  const char* text = std::strcmp(config, "two") == 0     ? kTwoLevels
                     : std::strcmp(config, "three") == 0  ? kThreeLevels
                     : std::strcmp(config, "2cores") == 0 ? kTwoCores
                     : program                            ? kProgram
                                                          : nullptr;
  if (text == nullptr) {
    std::fprintf(stderr, "sim_throughput: --replay: unknown hierarchy '%s' (two, three, 2cores, program)\n", config);
    return 2;
  }
  const std::vector<Access>& s = std::strcmp(stream, "ijk") == 0   ? stream_ijk()
                                 : std::strcmp(stream, "ikj") == 0 ? stream_ikj()
                                                                   : stream_ikj_vector();
  auto h = make(text);
  if (program) {
    const std::string error = add_program_monitor(*h);
    if (!error.empty()) {
      std::fprintf(stderr, "sim_throughput: --replay: the program monitor: %s\n", error.c_str());
      return 1;
    }
  }
  for (int p = 0; p < passes; ++p) replay_pass(*h, s);
  std::printf("references per pass %zu\n", s.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--replay=", 9) == 0) return replay_only(argv[i] + 9);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

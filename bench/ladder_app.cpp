// ladder_app - the hot-path cost ladder (bench/README.md).
//
// Every benchmark runs one loop of calls to a small noinline function per
// thread; one call is one region enter+exit pair (or, for the baseline, one
// plain call). The rungs differ only in the annotation and in what the tool
// asked for:
//
//   BM_uninstrumented  pair_plain():    no annotation
//   BM_dormant         pair_dormant():  region "bench_dormant",   run without a tool
//   BM_attached        pair_attached(): region "bench_attached",  tool attached, nothing requested
//   BM_aggregate       pair_aggregate(): region "bench_aggregate", EXECUTION_TIME SUM PER_THREAD requested
//   BM_profile         pair_profile():  region "bench_profile",   EXECUTION_TIME profile requested
//   BM_callpath        pair_callpath(): region "bench_callpath",  EXECUTION_TIME callpath profile requested
//                                       over it and "bench_callpath_caller", which encloses the loop
//                                       (each pair is one caller -> callee edge instance)
//   BM_counter         pair_counter():  region "bench_counter",   perf::TASK-CLOCK SUM PER_THREAD requested
//                                       (the PAPI backend: one software event per pair)
//   BM_trace           pair_trace():    region "bench_trace",     REGION_EVENT trace requested
//                                       (two trace records per pair)
//
// and, for the counter rung's context, BM_perf_read (one plain read() of a
// perf event file descriptor counting the thread's task clock) and
// BM_papi_pair (the body between two PAPI_read() calls of a one-event set,
// no monitor: what PAPI itself costs per pair).
//
// plus, for context, BM_rdtsc and BM_clock_gettime (the raw cost of one
// timestamp) and BM_rdtsc_pair: the body between two __rdtsc() calls whose
// difference is summed and counted, done inline without any monitor, i.e.
// the floor under any EXECUTION_TIME measurement of a pair.
//
// Each rung has its own region so that a tool can target exactly one of
// them (bench/ladder_tool.c, found by name with MRI_Find_Region). Without a
// tool every region is dormant, so BM_attached, BM_aggregate and BM_profile
// only mean what their names say when the binary runs under ladder_tool with
// the matching level; bench/run_ladder.sh selects them with
// --benchmark_filter accordingly.
//
// The counter each function increments lives on the calling thread's stack,
// so the two threads of a Threads(2) run share no written cache line.
#include <benchmark/benchmark.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cstdint>

#include "mri_monitor.h"
#include "mri_papi.h"

namespace {

// The body shared by every rung: one increment the compiler must perform.
inline void body(uint64_t* counter) {
  *counter += 1;
  benchmark::DoNotOptimize(*counter);
}

// Rung 1: uninstrumented.
__attribute__((noinline)) void pair_plain(uint64_t* counter) { body(counter); }

// Rung 2: annotated, no tool.
MONITOR_REGION(region_dormant, MRI_REGION_ROUTINE, "bench_dormant");
__attribute__((noinline)) void pair_dormant(uint64_t* counter) {
  MONITOR_ENTER(region_dormant);
  body(counter);
  MONITOR_EXIT(region_dormant);
}

// Rung 3: tool attached, nothing requested for this region.
MONITOR_REGION(region_attached, MRI_REGION_ROUTINE, "bench_attached");
__attribute__((noinline)) void pair_attached(uint64_t* counter) {
  MONITOR_ENTER(region_attached);
  body(counter);
  MONITOR_EXIT(region_attached);
}

// Rung 4: EXECUTION_TIME aggregate (SUM, PER_THREAD) requested for this region.
MONITOR_REGION(region_aggregate, MRI_REGION_ROUTINE, "bench_aggregate");
__attribute__((noinline)) void pair_aggregate(uint64_t* counter) {
  MONITOR_ENTER(region_aggregate);
  body(counter);
  MONITOR_EXIT(region_aggregate);
}

// Rung 5: EXECUTION_TIME profile requested over this region.
MONITOR_REGION(region_profile, MRI_REGION_ROUTINE, "bench_profile");
__attribute__((noinline)) void pair_profile(uint64_t* counter) {
  MONITOR_ENTER(region_profile);
  body(counter);
  MONITOR_EXIT(region_profile);
}

// Rung 5b: EXECUTION_TIME callpath profile over this region and its caller,
// a region around the benchmark's loop: every pair adds to the edge
// bench_callpath_caller -> bench_callpath as well as to the flat profile.
MONITOR_REGION(region_callpath, MRI_REGION_ROUTINE, "bench_callpath");
MONITOR_REGION(region_callpath_caller, MRI_REGION_ROUTINE, "bench_callpath_caller");
__attribute__((noinline)) void pair_callpath(uint64_t* counter) {
  MONITOR_ENTER(region_callpath);
  body(counter);
  MONITOR_EXIT(region_callpath);
}

// Rung 6: a PAPI software event (perf::TASK-CLOCK) aggregated for this region.
MONITOR_REGION(region_counter, MRI_REGION_ROUTINE, "bench_counter");
__attribute__((noinline)) void pair_counter(uint64_t* counter) {
  MONITOR_ENTER(region_counter);
  body(counter);
  MONITOR_EXIT(region_counter);
}

// Rung 7: a REGION_EVENT trace of this region: a record at enter and exit.
MONITOR_REGION(region_trace, MRI_REGION_ROUTINE, "bench_trace");
__attribute__((noinline)) void pair_trace(uint64_t* counter) {
  MONITOR_ENTER(region_trace);
  body(counter);
  MONITOR_EXIT(region_trace);
}

template <void (*Pair)(uint64_t*)>
void run_pairs(benchmark::State& state) {
  uint64_t counter = 0;
  for (auto _ : state) Pair(&counter);
  // 1 when the run was monitored (the check that ladder_tool was in charge).
  state.counters["monitor_attached"] =
      benchmark::Counter(Monitor_Is_Attached(), benchmark::Counter::kAvgThreads);
}

void BM_uninstrumented(benchmark::State& state) { run_pairs<pair_plain>(state); }
void BM_dormant(benchmark::State& state) { run_pairs<pair_dormant>(state); }
void BM_attached(benchmark::State& state) { run_pairs<pair_attached>(state); }
void BM_aggregate(benchmark::State& state) { run_pairs<pair_aggregate>(state); }
void BM_profile(benchmark::State& state) { run_pairs<pair_profile>(state); }
void BM_callpath(benchmark::State& state) {
  MONITOR_ENTER(region_callpath_caller);
  run_pairs<pair_callpath>(state);
  MONITOR_EXIT(region_callpath_caller);
}
void BM_counter(benchmark::State& state) { run_pairs<pair_counter>(state); }
void BM_trace(benchmark::State& state) { run_pairs<pair_trace>(state); }

BENCHMARK(BM_uninstrumented)->Threads(1)->Threads(2);
BENCHMARK(BM_dormant)->Threads(1)->Threads(2);
BENCHMARK(BM_attached)->Threads(1)->Threads(2);
BENCHMARK(BM_aggregate)->Threads(1)->Threads(2);
BENCHMARK(BM_profile)->Threads(1)->Threads(2);
BENCHMARK(BM_callpath)->Threads(1)->Threads(2);
BENCHMARK(BM_counter)->Threads(1)->Threads(2);
BENCHMARK(BM_trace)->Threads(1)->Threads(2);

// Context of the counter rung: the kernel's cost of reading one perf event
// counter, and PAPI's cost of the two reads a pair needs.
void BM_perf_read(benchmark::State& state) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  const int fd = int(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
  if (fd < 0) {
    state.SkipWithError("perf_event_open failed");
    return;
  }
  uint64_t value = 0;
  for (auto _ : state) {
    if (read(fd, &value, sizeof value) != sizeof value) state.SkipWithError("read failed");
    benchmark::DoNotOptimize(value);
  }
  close(fd);
}
BENCHMARK(BM_perf_read)->Threads(1)->Threads(2);

void BM_papi_pair(benchmark::State& state) {
  mri::papi::EventSet set;
  std::string why;
  if (!mri::papi::build(set, {"perf::TASK-CLOCK"}, why)) {
    state.SkipWithError(why.c_str());
    return;
  }
  uint64_t counter = 0;
  long long before[1], after[1], sum = 0;
  for (auto _ : state) {
    mri::papi::read(set, before);
    body(&counter);
    mri::papi::read(set, after);
    sum += after[0] - before[0];
  }
  benchmark::DoNotOptimize(sum);
  mri::papi::destroy(set);
  mri::papi::unregister_thread();
}
BENCHMARK(BM_papi_pair)->Threads(1)->Threads(2);

// Raw timer costs, for context: one timestamp per iteration.
void BM_rdtsc(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(__rdtsc());
}
void BM_clock_gettime(benchmark::State& state) {
  struct timespec ts;
  for (auto _ : state) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    benchmark::DoNotOptimize(ts);
  }
}
BENCHMARK(BM_rdtsc)->Threads(1)->Threads(2);
BENCHMARK(BM_clock_gettime)->Threads(1)->Threads(2);

// The floor: what timing one pair costs with no monitor at all.
struct TimeSum {
  uint64_t ticks = 0;
  uint64_t count = 0;
};
__attribute__((noinline)) void pair_rdtsc(uint64_t* counter, TimeSum* sum) {
  const uint64_t t0 = __rdtsc();
  body(counter);
  const uint64_t t1 = __rdtsc();
  sum->ticks += t1 - t0;
  sum->count += 1;
}
void BM_rdtsc_pair(benchmark::State& state) {
  uint64_t counter = 0;
  TimeSum sum;
  for (auto _ : state) pair_rdtsc(&counter, &sum);
  benchmark::DoNotOptimize(sum);
}
BENCHMARK(BM_rdtsc_pair)->Threads(1)->Threads(2);

// The clock's shadow (docs/ACCURACY.md, "The clock's shadow"): N
// additions into a volatile per iteration, alone (BM_adds) and after one
// __rdtsc() whose result is not waited for (BM_rdtsc_shadow). Where the
// second costs no more than BM_rdtsc up to some N, that much of a
// program's own work runs in the clock read's time, and a monitored
// instance costs the program less than the empty-body calibration says.
// Not in run_ladder.sh's table; run with
//   ladder_app --benchmark_filter='BM_(adds|rdtsc_shadow)/'
volatile uint64_t g_shadow_sink;
__attribute__((always_inline)) inline void shadow_adds(int n) {
  for (int i = 0; i < n; ++i) g_shadow_sink = g_shadow_sink + uint64_t(i);
}
void BM_adds(benchmark::State& state) {
  const int n = int(state.range(0));
  for (auto _ : state) shadow_adds(n);
}
void BM_rdtsc_shadow(benchmark::State& state) {
  const int n = int(state.range(0));
  uint64_t sum = 0;
  for (auto _ : state) {
    sum += __rdtsc();
    shadow_adds(n);
  }
  benchmark::DoNotOptimize(sum);
}
BENCHMARK(BM_adds)->Arg(10)->Arg(20)->Arg(40)->Arg(80);
BENCHMARK(BM_rdtsc_shadow)->Arg(0)->Arg(10)->Arg(20)->Arg(40)->Arg(80);

}  // namespace

int main(int argc, char** argv) {
  // Under a tool: publish the regions and wait here until MRI_Start(), so
  // the requests are in place before the first benchmark. Without a tool
  // this does nothing.
  Monitor_Init();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("mri_monitor", Monitor_Is_Attached() ? "attached" : "dormant");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

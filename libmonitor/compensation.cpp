// compensation.cpp - the monitor measures its own overhead so that profiles
// and time aggregates can be reported with it removed (seed paper 001,
// Malony & Shende, sections 3.1 and 3.2; docs/ACCURACY.md).
//
// What is measured. A monitored instance costs the program time in two
// places. Part of the monitor's work lies inside the instance's own
// measured interval (after the enter's clock read, before the exit's):
// `own`. All of its enter and exit lies inside every enclosing instance:
// `pair`. The paper's Delta_i is our `pair`; its Delta_e (what a direct
// child leaves in its parent's exclusive time) is `pair - own`.
//
// How. The paper's two-level experiment on the real slow paths: a private
// thread state and private result rows, a calibration plan with an outer
// region and an inner one, k inner pairs back to back inside the outer, j
// times, the minimum kept; once with the inner region armed and once with
// it dormant (one load and a branch, as in an instrumented program that
// does not measure it). pair = (armed - dormant) / k; own = the inner
// region's own measured time per instance (its body is empty).
//
// When. The time-only kinds at start-up, before the static information is
// published: no other thread can be inside the monitor then, so the plan
// globals can be borrowed with the mode set to running. The counter kind
// depends on the events, so it is measured at the first release with each
// new event list, in the control thread while the application's threads are
// quiescent; the mode stays stopped and the calibration's state passes the
// gate through a flag that only the rare slow path checks. That flag adds a
// call to both slow paths; measuring the timer kind the same way and taking
// the difference removes it.
//
// Sources that time their own work in place (the cache simulator: each
// batch, and its work at region enters and exits) add it to the thread's
// overhead clock themselves, and calibrate what they cannot time in place
// (the cache simulator's recording cost per reference) with
// publish_measured_overhead().
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "monitor_internal.h"
#include "mri_sync.h"

namespace mri::monitor {
namespace {

constexpr uint32_t kTimePairs = 1000;  // k for the time-only kinds (~30 ns a pair: 30 us a run)
constexpr uint32_t kTimeRuns = 50;    // j
// The second measurement at the first release delays that release: at
// most j = 20 runs and 2 ms (1.5 ms here for 20; under ThreadSanitizer one
// run takes 2.7 ms). It only has to catch a slow spell of the first: a
// noisy second value is harmless, as the smaller one is kept.
constexpr uint32_t kConfirmRuns = 20;
constexpr double kConfirmBudgetNs = 2e6;
constexpr uint32_t kCounterPairs = 100;  // a counter read can be a system call: ~1 us a pair
constexpr uint32_t kCounterRuns = 20;

struct Measured {
  double own = 0;   // ticks
  double pair = 0;  // ticks
};

// Private result memory for the calibration's state: nothing it does can
// reach the segment's results.
struct Scratch {
  proto::AggregateRowHead head{};
  std::vector<proto::ProfileSlot> profile[2];
  std::vector<proto::EdgeSlot> edges;
};

// The globals the slow paths read, borrowed for the calibration plan.
struct Borrowed {
  const RegionPlan* plan;
  uint32_t plan_count;
  const AggTarget* aggs;
  const uint32_t* slices;
  const TraceTarget* traces;
  int32_t breakpoint;
  AggTarget slice_value[2];
  bool slice_callpath[2];
  bool slice_compensate[2];
  bool slice_unwind[2];

  Borrowed()
      : plan(g.plan), plan_count(g.plan_count), aggs(g.aggs), slices(g.slices), traces(g.traces),
        breakpoint(g.breakpoint) {
    for (int i = 0; i < 2; ++i) {
      slice_value[i] = g.slice_value[i];
      slice_callpath[i] = g.slice_callpath[i];
      slice_compensate[i] = g.slice_compensate[i];
      slice_unwind[i] = g.slice_unwind[i];
      g.slice_unwind[i] = false;  // the calibration's plans never unwind
    }
  }
  ~Borrowed() {
    g.plan = plan;
    std::atomic_ref<uint32_t>(g.plan_count).store(plan_count, std::memory_order_release);
    g.aggs = aggs;
    g.slices = slices;
    g.traces = traces;
    g.breakpoint = breakpoint;
    for (int i = 0; i < 2; ++i) {
      g.slice_value[i] = slice_value[i];
      g.slice_callpath[i] = slice_callpath[i];
      g.slice_compensate[i] = slice_compensate[i];
      g.slice_unwind[i] = slice_unwind[i];
    }
  }
};

// k inner pairs exactly as an annotated program executes them.
__attribute__((noinline)) void pairs(Monitor_Region_Descriptor& inner, uint32_t k) {
  for (uint32_t i = 0; i < k; ++i) {
    MONITOR_ENTER(inner);
    asm volatile("" ::: "memory");  // an empty body the compiler cannot merge away
    MONITOR_EXIT(inner);
  }
}

// One two-level experiment. kCounter: the regions also take the current
// readings (Global::readers). `budget`: no further run starts once this
// many ticks have passed (0: no limit). Returns false (and why) when the
// readings cannot be set up.
bool experiment(proto::OverheadKind kind, uint32_t k, uint32_t j, Measured& out, std::string& why,
                uint64_t budget = 0) {
  const bool counters = kind == proto::OverheadKind::kCounter;
  const bool callpath = kind == proto::OverheadKind::kCallpath;
  Scratch scratch;
  for (auto& p : scratch.profile) p.assign(2, proto::ProfileSlot{});
  scratch.edges.assign(std::max<uint32_t>(g.view.g.max_edges, 1), proto::EdgeSlot{});

  auto ts = std::make_unique<ThreadState>();
  ts->calibrating = true;
  ts->fixup.store(0, std::memory_order_relaxed);
  ts->seq = &scratch.head.seq;
  ts->open.assign(2, 0);
  ts->profile_rows[0] = scratch.profile[0].data();
  ts->profile_rows[1] = scratch.profile[1].data();
  ts->edge_rows[0] = scratch.edges.data();
  if (counters) {
    const bool ready = prepare_thread_readings(ts.get(), &why);
    if (!ready) {
      release_thread_readings(ts.get());
      return false;
    }
    ts->readings_ready = true;
    ts->readings_generation = 1;
  }

  RegionPlan plans[2];
  for (auto& p : plans) {
    p.measure = 1;
    p.armed = 1;
    p.n_prof = counters ? 2 : 1;
    p.prof_begin = 0;
    p.readings = counters;
    p.overhead_own = 1u << kOverheadFracBits;
    p.overhead_pair = 2u << kOverheadFracBits;
  }
  static const uint32_t kSlices[2] = {0, 1};
  bool ok = true;
  uint64_t best_armed = UINT64_MAX, best_dormant = UINT64_MAX;
  double best_own = INFINITY;
  {
    Borrowed borrowed;
    g.plan = plans;
    std::atomic_ref<uint32_t>(g.plan_count).store(2, std::memory_order_release);
    g.aggs = nullptr;
    g.slices = kSlices;
    g.traces = nullptr;
    g.breakpoint = -1;
    g.slice_value[0] = {0, uint8_t(ValueKind::kTime), 0, 0};
    g.slice_value[1] = {1, uint8_t(ValueKind::kReading), 0, 0};
    g.slice_callpath[0] = callpath;
    g.slice_callpath[1] = false;
    // Compensation on, as for the requests it will serve (it is part of
    // the cost; the calibration's own results are not used).
    g.slice_compensate[0] = g.slice_compensate[1] = true;
    ThreadState* before = swap_thread_state(ts.get());

    Monitor_Region_Descriptor outer{}, inner{};
    outer.id = 0;
    inner.id = 1;
    outer.armed = 1;
    const uint64_t began = ticks();
    for (uint32_t run = 0; run < j && ok; ++run) {
      if (budget && run > 0 && ticks() - began > budget) break;
      for (const unsigned char armed : {1, 0}) {
        inner.armed = armed;
        scratch.profile[0][1] = proto::ProfileSlot{};
        Monitor_Region_Enter_Slow(&outer);
        const uint64_t t0 = ticks();
        pairs(inner, k);
        const uint64_t t1 = ticks();
        Monitor_Region_Exit_Slow(&outer);
        const uint64_t dt = t1 > t0 ? t1 - t0 : 0;
        if (armed) {
          best_armed = std::min(best_armed, dt);
          const proto::ProfileSlot& slot = scratch.profile[0][1];
          if (slot.calls != k) {  // a pair went astray: the experiment is void
            why = "the calibration region was not measured on every instance";
            ok = false;
            break;
          }
          best_own = std::min(best_own, double(slot.inclusive) / k);
        } else {
          best_dormant = std::min(best_dormant, dt);
        }
      }
    }
    swap_thread_state(before);
  }
  if (counters) release_thread_readings(ts.get());
  delete[] ts->edge_keys;
  delete[] ts->edge_values;
  if (!ok) return false;
  out.own = best_own;
  out.pair = best_armed > best_dormant ? double(best_armed - best_dormant) / k : 0.0;
  return true;
}


// Per kind, what this process measured, kept apart from what it publishes:
// a tool may set a kind's values in place of the measurement
// (MRI_Set_Overhead, ToolControl::overhead_set), and clear them again.
struct KindState {
  bool calibrated = false;
  Measured measured;      // ticks, when calibrated
  char note[proto::kEventNameBytes]{};  // why not calibrated, or the counter events
  bool tool_set = false;  // the published values are the tool's
  float tool_pair_ns = 0, tool_own_ns = 0;
};
KindState g_kinds[proto::kOverheadKinds];

uint32_t fixed_point(double ticks) {
  const double v = std::round(ticks * double(1u << kOverheadFracBits));
  return v <= 0 ? 0 : v >= 4e9 ? 4'000'000'000u : uint32_t(v);
}

// Publishes kind i's values in effect (the tool's, or the measurement),
// both to the plans (fixed point) and in the segment.
void show(uint32_t i) {
  const KindState& k = g_kinds[i];
  proto::OverheadValue& v = g.view.header()->overhead.kind[i];
  Measured m;
  bool calibrated = k.calibrated;
  if (k.tool_set) {
    const double ns_per_tick = std::max(g.view.header()->app.ns_per_tick, 1e-9);
    m.pair = double(k.tool_pair_ns) / ns_per_tick;
    // MRI_OVERHEAD_OWN_MEASURED: the measured own part, at most the pair
    // (none while the kind is not measured).
    m.own = k.tool_own_ns < 0 ? (k.calibrated ? std::min(k.measured.own, m.pair) : 0.0)
                              : double(k.tool_own_ns) / ns_per_tick;
    if (k.calibrated)
      std::snprintf(v.reason, sizeof v.reason, "set by the tool (measured %.2f ns, own %.2f)",
                    k.measured.pair * ns_per_tick, k.measured.own * ns_per_tick);
    else
      std::snprintf(v.reason, sizeof v.reason, "set by the tool (not measured)");
    calibrated = true;
  } else {
    m = k.measured;
    std::snprintf(v.reason, sizeof v.reason, "%s", k.note);
  }
  if (!calibrated) m = Measured{};
  g.overhead_own[i] = fixed_point(m.own);
  g.overhead_pair[i] = fixed_point(std::max(m.pair, m.own));
  v.own_ticks = m.own;
  v.pair_ticks = std::max(m.pair, m.own);
  sync::store(v.calibrated, calibrated ? 1u : 0u);
}

void publish(proto::OverheadKind kind, const Measured& m, const char* note) {
  KindState& k = g_kinds[uint32_t(kind)];
  k.calibrated = true;
  k.measured = m;
  std::snprintf(k.note, sizeof k.note, "%s", note);
  show(uint32_t(kind));
}

void not_calibrated(proto::OverheadKind kind, const char* why) {
  KindState& k = g_kinds[uint32_t(kind)];
  k.calibrated = false;
  std::snprintf(k.note, sizeof k.note, "%s", why);
  show(uint32_t(kind));
}

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

void calibrate_at_start() {
  proto::OverheadCalibration& o = g.view.header()->overhead;
  o.repetitions = kTimePairs;
  o.experiments = kTimeRuns;
  // Nobody else is in the monitor (publish_once holds every other thread
  // at the gate), so the mode can say running for the experiment.
  g.mode.store(kRunning, std::memory_order_seq_cst);
  std::string why;
  for (const auto kind : {proto::OverheadKind::kTimer, proto::OverheadKind::kCallpath}) {
    Measured m;
    if (experiment(kind, kTimePairs, kTimeRuns, m, why))
      publish(kind, m, "");
    else
      not_calibrated(kind, why.c_str());
  }
  g.mode.store(kStopped, std::memory_order_seq_cst);
  not_calibrated(proto::OverheadKind::kCounter, "measured at the first release with counter requests");
  not_calibrated(proto::OverheadKind::kCacheSim, "measured at the first release with simulated cache events");
}

void confirm_time_calibration() {
  static bool confirmed = false;
  if (confirmed) return;
  confirmed = true;
  std::string why;
  const uint64_t budget = uint64_t(kConfirmBudgetNs / std::max(g.view.header()->app.ns_per_tick, 1e-3));
  for (const auto kind : {proto::OverheadKind::kTimer, proto::OverheadKind::kCallpath}) {
    const KindState& k = g_kinds[uint32_t(kind)];
    Measured m;
    if (!k.calibrated || !experiment(kind, kTimePairs, kConfirmRuns, m, why, budget)) continue;
    m.own = std::min(m.own, k.measured.own);
    m.pair = std::min(m.pair, k.measured.pair);
    publish(kind, m, "");
  }
}

void publish_measured_overhead(proto::OverheadKind kind, double own_ticks, double pair_ticks, const char* note) {
  Measured m;
  m.own = own_ticks;
  m.pair = pair_ticks;
  publish(kind, m, note);
}

void overhead_not_calibrated(proto::OverheadKind kind, const char* why) { not_calibrated(kind, why); }

uint32_t overhead_pair_fixed(proto::OverheadKind kind) { return g.overhead_pair[uint32_t(kind)]; }

void calibrate_readings(const std::vector<std::string>& readings) {
  static std::vector<std::string>* calibrated = new std::vector<std::string>;  // the list last calibrated
  if (readings == *calibrated) return;
  *calibrated = readings;
  std::string why;
  Measured timer, counter;
  if (!experiment(proto::OverheadKind::kTimer, kTimePairs, kTimeRuns, timer, why) ||
      !experiment(proto::OverheadKind::kCounter, kCounterPairs, kCounterRuns, counter, why)) {
    not_calibrated(proto::OverheadKind::kCounter, why.c_str());
    note_error("counter overhead not calibrated: %s", why.c_str());
    return;
  }
  // Both went through the gate's extra call; the difference does not.
  // Built on the timer kind as measured, not as a tool may have set it.
  const Measured& base = g_kinds[uint32_t(proto::OverheadKind::kTimer)].measured;
  Measured m;
  m.own = std::max(0.0, base.own + counter.own - timer.own);
  m.pair = std::max(0.0, base.pair + counter.pair - timer.pair);
  std::string list;
  for (const auto& e : readings) list += (list.empty() ? "" : ",") + e;
  publish(proto::OverheadKind::kCounter, m, list.c_str());
}

void apply_tool_overhead() {
  const proto::ToolControl& tc = g.view.header()->tool;
  const uint32_t set = sync::load(tc.overhead_set);
  for (uint32_t i = 0; i < proto::kOverheadKinds; ++i) {
    KindState& k = g_kinds[i];
    bool want = (set >> i) & 1u;
    const float pair = want ? from_bits(sync::load(tc.overhead_pair_ns[i])) : 0.0f;
    const float own = want ? from_bits(sync::load(tc.overhead_own_ns[i])) : 0.0f;
    // The segment is untrusted: the same checks as libmri's.
    if (const char* problem = want ? proto::tool_overhead_problem(i, pair, own) : nullptr) {
      note_error("overhead set by the tool for kind %u ignored: %s (%.10g ns, own %.10g)", i, problem, double(pair),
                 double(own));
      want = false;
    }
    if (want == k.tool_set && (!want || (pair == k.tool_pair_ns && own == k.tool_own_ns))) continue;
    k.tool_set = want;
    k.tool_pair_ns = pair;
    k.tool_own_ns = own;
    show(i);
  }
}

void set_plan_overhead(RegionPlan& p, bool callpath) {
  proto::OverheadKind kind = callpath ? proto::OverheadKind::kCallpath : proto::OverheadKind::kTimer;
  if (p.readings && g.overhead_pair[uint32_t(proto::OverheadKind::kCounter)])
    kind = proto::OverheadKind::kCounter;
  p.overhead_own = p.measure ? g.overhead_own[uint32_t(kind)] : 0;
  p.overhead_pair = p.measure ? g.overhead_pair[uint32_t(kind)] : 0;
}

}  // namespace mri::monitor

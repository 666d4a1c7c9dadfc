// plan_install.cpp - a release applies the compiled plan (plan.h): the
// acknowledgements and result resets in the segment, the calibrations the
// new requests need, the sources' own requests, and the globals the hot
// path reads.
#include <algorithm>
#include <cstring>
#include <vector>

#include "mri_sync.h"
#include "plan.h"

namespace mri::monitor {
namespace {

proto::AppControl& app() { return g.view.header()->app; }

void write_acks(const CompiledPlan& plan, const std::vector<GatheredRequest>& requests) {
  const proto::View& v = g.view;
  for (const Ack& a : plan.acks) {
    proto::RequestAck* ack = v.request_ack(a.slot);
    if (!a.ok) {
      // Said (and a corrupt record counted) once per generation: not again
      // at every release while the tool leaves the record in place.
      bool already = false;
      for (const GatheredRequest& q : requests)
        if (q.input.slot == a.slot) already = q.acked_status != 0 && q.acked_generation == a.generation;
      if (!already && a.corrupt) {
        sync::store(app().bad_requests, sync::load(app().bad_requests) + 1);
        note_error("ignoring corrupt request record %u", a.slot);
      } else if (!already && !a.note.empty()) {
        note_error("%s", a.note.c_str());
      }
    }
    ack->status = a.ok ? 0 : 1;
    sync::store(ack->applied_generation, a.generation);
  }
}

void reset_rows(const CompiledPlan& plan, uint32_t nthreads) {
  const proto::View& v = g.view;
  for (const Reset& r : plan.resets)
    for (uint32_t t = 0; t < nthreads; ++t) switch (r.what) {
        case Reset::What::kAggregate:
          std::memset(v.aggregate(t, r.index), 0, sizeof(proto::AggregateSlot));
          break;
        case Reset::What::kProfile:
          std::memset(v.profile_row(r.index, t), 0, sizeof(proto::ProfileSlot) * plan.regions);
          break;
        case Reset::What::kEdges:
          std::memset(v.edge_row(r.index, t), 0, sizeof(proto::EdgeSlot) * v.g.max_edges);
          break;
      }
}

}  // namespace

void apply_requests() {
  const proto::View& v = g.view;
  const uint32_t nreg = uint32_t(g.region_first.size());
  const uint32_t nthreads = std::min(g.next_thread.load(), v.g.max_threads);

  std::vector<GatheredRequest> requests = gather_requests(v, nreg);
  const PlanLimits limits{v.g, nreg, nthreads, unwind_available()};
  CompiledPlan plan = compile_requests(requests, limits, &v);
  write_acks(plan, requests);
  reset_rows(plan, nthreads);
  if (plan.unwind_wanted_but_absent) {
    static bool noted = false;
    if (!noted) note_error("this libmonitor was built without libunwind: callers are regions only, not unwound");
    noted = true;
  }
  for (uint32_t s = 0; s < proto::kHardMaxProfileSlices; ++s) {
    if (!plan.slice_set[s]) continue;  // no request of this release uses it: nothing reads it
    g.slice_value[s] = plan.slice_value[s];
    g.slice_callpath[s] = plan.slice_callpath[s];
    g.slice_compensate[s] = plan.slice_compensate[s];
    g.slice_unwind[s] = plan.slice_unwind[s];
  }
  // The readings of this release: in place before the counter kind is
  // calibrated with them.
  const bool readings_changed = plan.reading_list != g.reading_list;
  std::copy(std::begin(plan.readers), std::end(plan.readers), std::begin(g.readers));
  g.n_readers = plan.n_readers;
  g.reading_count = uint32_t(plan.reading_list.size());

  // The time kinds are measured a second time at the first release (the
  // smaller value is kept), before the counter kind, which builds on the
  // timer kind. The overhead of regions that take readings depends on
  // them: the counter kind is calibrated for this list (once per list).
  // Both borrow the plan globals and give them back.
  confirm_time_calibration();
  if (!plan.reading_list.empty()) calibrate_readings(plan.reading_list);

  // Regions open on some thread's stack stay armed so their exits pop frames.
  std::vector<uint8_t> open(nreg, 0);
  for (uint32_t t = 0; t < nthreads; ++t) {
    ThreadState* ts = g.threads[t].load(std::memory_order_acquire);
    if (!ts) continue;
    trace_forget_open(ts, plan.keep_trace_open);
    for (uint32_t i = 0; i < ts->depth; ++i) {
      const int32_t region = ts->frames[i].region == kHiddenRegion ? ts->hidden_region : ts->frames[i].region;
      if (uint32_t(region) < nreg) open[region] = 1;
    }
  }

  // The sources' own requests (their acknowledgements, their regions).
  std::vector<uint8_t> hooks(nreg, 0);
  const ReleaseContext ctx{&v, nreg, nthreads};
  for_each_source_with(&MeasurementSource::compile_owned, [&](uint32_t i, const MeasurementSource& s) {
    std::vector<uint8_t> hooked(nreg, 0);
    s.compile_owned(plan.owned[i], ctx, hooked);
    for (uint32_t r = 0; r < nreg; ++r)
      if (hooked[r]) hooks[r] |= uint8_t(1u << i);
  });
  apply_tool_overhead();  // after every calibration this release may have made

  std::vector<uint8_t> readings_before(nreg, 0), measure_before(nreg, 0);
  for (uint32_t i = 0; i < nreg && i < g.plans.size(); ++i) {
    readings_before[i] = g.plans[i].readings;
    measure_before[i] = g.plans[i].measure;
  }
  // The trace thread masks, where the targets point.
  std::memcpy(g.trace_threads, plan.trace_threads, sizeof g.trace_threads);
  auto repoint = [](TraceTarget& t) {
    if (t.threads) t.threads = g.trace_threads[t.slot];
  };
  g.plans.assign(nreg, RegionPlan{});
  g.plan_aggs.clear();
  g.plan_slices.clear();
  g.plan_traces.clear();
  for (uint32_t i = 0; i < nreg; ++i) {
    RegionPlan& p = g.plans[i];
    p.trace_begin = uint32_t(g.plan_traces.size());
    p.n_trace = uint16_t(plan.traces[i].size());
    for (TraceTarget t : plan.traces[i]) {
      repoint(t);
      g.plan_traces.push_back(t);
    }
    derive_trace_plan(p, g.plan_traces.data() + p.trace_begin, p.n_trace);
    p.agg_begin = uint32_t(g.plan_aggs.size());
    p.n_agg = uint16_t(plan.aggs[i].size());
    g.plan_aggs.insert(g.plan_aggs.end(), plan.aggs[i].begin(), plan.aggs[i].end());
    p.prof_begin = uint32_t(g.plan_slices.size());
    p.n_prof = uint16_t(plan.slices[i].size());
    g.plan_slices.insert(g.plan_slices.end(), plan.slices[i].begin(), plan.slices[i].end());
    p.measure = (p.n_agg + p.n_prof) > 0 || p.trace_values;
    // Before the first release every thread is parked at its first event
    // (the gate): nothing can be open without a frame yet.
    p.measure_new = p.measure && !measure_before[i] && g.releases > 1;
    for (const auto& t : plan.aggs[i])
      if (t.kind == uint8_t(ValueKind::kReading)) p.readings = 1;
    bool callpath = false;
    for (uint32_t slice : plan.slices[i]) {
      if (g.slice_value[slice].kind == uint8_t(ValueKind::kReading)) p.readings = 1;
      callpath |= g.slice_callpath[slice];
      p.unwind |= g.slice_unwind[slice];
    }
    p.hooks = hooks[i];
    p.armed = p.measure || p.n_trace || open[i] || int32_t(i) == g.breakpoint || p.hooks;
    set_plan_overhead(p, callpath);
  }
  bool readings_moved = false;  // a region starts or stops taking readings
  for (uint32_t i = 0; i < nreg; ++i) readings_moved |= readings_before[i] != g.plans[i].readings;
  if (readings_changed || readings_moved) {
    // A new list: every thread prepares its reading sources at its next
    // event, and no frame opened before can pair its values with the new ones.
    g.reading_list = plan.reading_list;
    ++g.readings_generation;
    for (uint32_t t = 0; t < nthreads; ++t)
      if (ThreadState* ts = g.threads[t].load(std::memory_order_acquire))
        ts->fixup.store(1, std::memory_order_relaxed);
  }
  g.all_prof_begin = uint32_t(g.plan_slices.size());
  g.all_prof_count = uint16_t(plan.all_slices.size());
  g.plan_slices.insert(g.plan_slices.end(), plan.all_slices.begin(), plan.all_slices.end());
  g.all_trace_begin = uint32_t(g.plan_traces.size());
  g.all_trace_count = uint16_t(plan.all_traces.size());
  for (TraceTarget t : plan.all_traces) {
    repoint(t);
    g.plan_traces.push_back(t);
  }
  reserve_plans();
  g.aggs = g.plan_aggs.data();
  g.slices = g.plan_slices.data();
  g.traces = g.plan_traces.data();
}

}  // namespace mri::monitor

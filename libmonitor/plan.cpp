// plan.cpp - the request plans: what the MCC does at each region, rebuilt
// from the request table at every release.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cache_internal.h"
#include "monitor_internal.h"
#include "mri_sync.h"

namespace mri::monitor {
namespace {

proto::AppControl& app() { return g.view.header()->app; }
}  // namespace

// Calls fn(region) for every published region set in request r's bitmap
// (bits beyond the published regions mean nothing).
template <typename Fn>
void for_each_requested_region(const proto::View& v, uint32_t r, uint32_t nreg, Fn&& fn) {
  const uint64_t* bits = v.request_bitmap(r);
  const uint32_t words = proto::bitmap_words(v.g);
  for (uint32_t w = 0; w < words; ++w) {
    uint64_t word = sync::load(bits[w], std::memory_order_relaxed);
    while (word) {
      const uint32_t region = w * 64 + uint32_t(__builtin_ctzll(word));
      word &= word - 1;
      if (region < nreg) fn(region);
    }
  }
}

// The parts of a region's plan that follow from its trace targets.
void derive_trace_plan(RegionPlan& p, const TraceTarget* t, uint32_t n) {
  p.trace_simple = n == 1 && t[0].root && !t[0].threads && t[0].metric == uint16_t(proto::Metric::kRegionEvent);
  for (uint32_t i = 0; i < n; ++i) {
    if (t[i].metric == uint16_t(proto::Metric::kRegionEvent)) continue;
    p.trace_values = 1;
    if (t[i].metric == uint16_t(proto::Metric::kCounter)) p.counters = 1;
  }
}

// Rebuilds the per-region plans from the request table. Called only by the
// control thread while every application thread is quiescent.
void apply_requests() {
  const proto::View& v = g.view;
  const uint32_t nreg = uint32_t(g.region_first.size());
  const uint32_t nthreads = std::min(g.next_thread.load(), v.g.max_threads);

  std::vector<std::vector<AggTarget>> agg(nreg);
  std::vector<std::vector<uint32_t>> prof(nreg);
  std::vector<std::vector<TraceTarget>> trace(nreg);
  std::vector<uint32_t> all_slices;
  std::vector<TraceTarget> all_trace;  // for regions published after this release
  uint32_t trace_slots = 0;
  std::vector<std::string> events;
  // Counter requests need PAPI in this process; initialised at the first
  // release that has one, so time-only sessions never pay for it.
  for (uint32_t r = 0; r < v.g.max_requests && g.counters_ok; ++r) {
    const proto::RequestRecord* rec = v.request(r);
    if (sync::load(rec->state) == uint32_t(proto::RequestState::kActive) &&
        sync::load(rec->metric) == uint32_t(proto::Metric::kCounter)) {
      std::string why;
      if (!papi::init(why)) {
        g.counters_ok = false;
        note_error("counter requests rejected: %s", why.c_str());
      }
      break;
    }
  }
  std::vector<uint8_t> slice_used(v.g.max_profile_slices, 0);
  std::vector<CacheRequest> cache_requests;  // simulated cache events: cache.cpp validates and applies them
  // Request slots whose REGION_EVENT instances still open on a thread stay
  // open (the same request as before); the others' are forgotten.
  std::vector<uint8_t> keep_trace_open(v.g.max_requests, 0);
  for (uint32_t r = 0; r < v.g.max_requests; ++r) {
    proto::RequestRecord rec;
    std::memcpy(&rec, v.request(r), sizeof rec);  // one fetch, then validate the copy
    if (rec.state != uint32_t(proto::RequestState::kActive)) continue;
    if (rec.metric == uint32_t(proto::Metric::kCacheEvent)) {
      CacheRequest& q = cache_requests.emplace_back(CacheRequest{r, rec, {}});
      if (rec.flags & proto::kRequestAllRegions) {
        for (uint32_t region = 0; region < nreg; ++region) q.regions.push_back(region);
      } else {
        for_each_requested_region(v, r, nreg, [&](uint32_t region) { q.regions.push_back(region); });
      }
      continue;
    }
    proto::RequestAck* ack = v.request_ack(r);
    uint16_t event = 0;
    const bool is_trace = rec.kind == uint32_t(proto::RequestKind::kTrace);
    bool ok = (rec.metric <= uint32_t(proto::Metric::kCounter) ||
               (is_trace && rec.metric == uint32_t(proto::Metric::kRegionEvent))) &&
              (rec.kind == uint32_t(proto::RequestKind::kAggregate) ||
               (is_trace && trace_slots < proto::kMaxTraceRequests && v.g.trace_records > 0) ||
               (rec.kind == uint32_t(proto::RequestKind::kProfile) &&
                rec.profile_slice < v.g.max_profile_slices && !slice_used[rec.profile_slice]));
    const bool paused = rec.flags & proto::kRequestPaused;
    if (ok && rec.metric == uint32_t(proto::Metric::kCounter)) {
      // The event name: terminated inside its field, printable, not empty.
      const size_t len = strnlen(rec.event, sizeof rec.event);
      ok = len > 0 && len < sizeof rec.event;
      for (size_t i = 0; ok && i < len; ++i) ok = rec.event[i] > ' ' && rec.event[i] < 127;
      if (ok) {
        const std::string name(rec.event, len);
        size_t e = 0;
        while (e < events.size() && events[e] != name) ++e;
        if (e == events.size() && !paused) {
          if (events.size() < papi::kMaxEvents)
            events.push_back(name);
          else
            ok = false;  // the tool enforces the budget; a record beyond it is not ours
        }
        event = uint16_t(e);
      }
      if (ok && !g.counters_ok) {
        ack->status = 1;  // rejected: PAPI could not be initialised (last_error says why)
        sync::store(ack->applied_generation, rec.generation);
        continue;
      }
    }
    if (!ok) {
      if (ack->status == 0 || ack->applied_generation != rec.generation) {
        sync::store(app().bad_requests, sync::load(app().bad_requests) + 1);
        note_error("ignoring corrupt request record %u", r);
      }
      ack->status = 1;
      sync::store(ack->applied_generation, rec.generation);
      continue;
    }
    const bool fresh = sync::load(ack->applied_generation) != rec.generation || ack->status != 0;
    const uint32_t compensate = (rec.flags & proto::kRequestNoCompensation) ? 0 : 1;
    if (is_trace) {
      // Trace records go to the rings; nothing to reset. The regions this
      // request names are roots; with subregions, every other region is
      // traced inside an instance of one.
      keep_trace_open[r] = !fresh && rec.metric == uint32_t(proto::Metric::kRegionEvent);
      const uint32_t slot = trace_slots++;
      const uint64_t* threads = nullptr;
      if (rec.flags & proto::kRequestThreadFilter) {
        for (uint32_t w = 0; w < proto::kThreadMaskWords; ++w)
          g.trace_threads[slot][w] = sync::load(v.request_threads(r)[w], std::memory_order_relaxed);
        threads = g.trace_threads[slot];
      }
      const TraceTarget base{uint16_t(r), uint8_t(slot), 0, uint16_t(rec.metric), event, threads};
      std::vector<uint8_t> root(nreg, 0);
      if (rec.flags & proto::kRequestAllRegions) {
        root.assign(nreg, 1);
      } else {
        for_each_requested_region(v, r, nreg, [&](uint32_t region) { root[region] = 1; });
      }
      const bool subregions = !(rec.flags & proto::kRequestNoSubregions);
      for (uint32_t region = 0; region < nreg; ++region) {
        if (!root[region] && !subregions) continue;
        TraceTarget t = base;
        t.root = root[region];
        trace[region].push_back(t);
      }
      if (rec.flags & proto::kRequestAllRegions || subregions) {
        TraceTarget t = base;
        t.root = (rec.flags & proto::kRequestAllRegions) ? 1 : 0;
        all_trace.push_back(t);
      }
      ack->status = 0;
      sync::store(ack->applied_generation, rec.generation);
      continue;
    }
    if (rec.kind == uint32_t(proto::RequestKind::kProfile)) {
      slice_used[rec.profile_slice] = 1;
      g.slice_metric[rec.profile_slice] = {r, uint8_t(rec.metric), uint8_t(compensate), event};
      g.slice_callpath[rec.profile_slice] = (rec.flags & proto::kRequestCallpath) && v.g.max_edges > 0;
      g.slice_unwind[rec.profile_slice] = g.slice_callpath[rec.profile_slice] && (rec.flags & proto::kRequestUnwind);
      if (g.slice_unwind[rec.profile_slice] && !unwind_available()) {
        g.slice_unwind[rec.profile_slice] = false;
        static bool noted = false;
        if (!noted) note_error("this libmonitor was built without libunwind: callers are regions only, not unwound");
        noted = true;
      }
      g.slice_compensate[rec.profile_slice] = compensate;
      if (fresh)
        for (uint32_t t = 0; t < nthreads; ++t) {
          std::memset(v.profile_row(rec.profile_slice, t), 0, sizeof(proto::ProfileSlot) * nreg);
          if (g.slice_callpath[rec.profile_slice])
            std::memset(v.edge_row(rec.profile_slice, t), 0, sizeof(proto::EdgeSlot) * v.g.max_edges);
        }
    } else if (fresh) {
      for (uint32_t t = 0; t < nthreads; ++t) std::memset(v.aggregate(t, r), 0, sizeof(proto::AggregateSlot));
    }
    if (paused) {  // keeps its results, measures nothing until resumed
      ack->status = 0;
      sync::store(ack->applied_generation, rec.generation);
      continue;
    }
    if (rec.flags & proto::kRequestAllRegions) {
      for (uint32_t region = 0; region < nreg; ++region) {
        if (rec.kind == uint32_t(proto::RequestKind::kProfile))
          prof[region].push_back(rec.profile_slice);
        else
          agg[region].push_back({r, uint8_t(rec.metric), uint8_t(compensate), event});
      }
      if (rec.kind == uint32_t(proto::RequestKind::kProfile)) all_slices.push_back(rec.profile_slice);
      ack->status = 0;
      sync::store(ack->applied_generation, rec.generation);
      continue;
    }
    for_each_requested_region(v, r, nreg, [&](uint32_t region) {
      if (rec.kind == uint32_t(proto::RequestKind::kProfile))
        prof[region].push_back(rec.profile_slice);
      else
        agg[region].push_back({r, uint8_t(rec.metric), uint8_t(compensate), event});
    });
    ack->status = 0;
    sync::store(ack->applied_generation, rec.generation);
  }

  // The time kinds are measured a second time at the first release (the
  // smaller value is kept), before the counter kind, which builds on the
  // timer kind. The overhead of regions that read counters depends on the
  // events: the counter kind is calibrated for this list (once per list).
  // Both borrow the plan globals and give them back.
  confirm_time_calibration();
  if (!events.empty() && g.counters_ok) calibrate_counters(events);

  // Regions open on some thread's stack stay armed so their exits pop frames.
  std::vector<uint8_t> open(nreg, 0);
  for (uint32_t t = 0; t < nthreads; ++t) {
    ThreadState* ts = g.threads[t].load(std::memory_order_acquire);
    if (!ts) continue;
    trace_forget_open(ts, keep_trace_open);
    for (uint32_t i = 0; i < ts->depth; ++i) {
      const int32_t region = ts->frames[i].region == kHiddenRegion ? ts->hidden_region : ts->frames[i].region;
      if (uint32_t(region) < nreg) open[region] = 1;
    }
  }

  std::vector<uint8_t> region_cache(nreg, 0);
  cache_apply(cache_requests, nthreads, region_cache);
  apply_tool_overhead();  // after every calibration this release may have made

  std::vector<uint8_t> counters_before(nreg, 0), measure_before(nreg, 0);
  for (uint32_t i = 0; i < nreg && i < g.plans.size(); ++i) {
    counters_before[i] = g.plans[i].counters;
    measure_before[i] = g.plans[i].measure;
  }
  g.plans.assign(nreg, RegionPlan{});
  g.plan_aggs.clear();
  g.plan_slices.clear();
  g.plan_traces.clear();
  for (uint32_t i = 0; i < nreg; ++i) {
    RegionPlan& p = g.plans[i];
    p.trace_begin = uint32_t(g.plan_traces.size());
    p.n_trace = uint16_t(trace[i].size());
    g.plan_traces.insert(g.plan_traces.end(), trace[i].begin(), trace[i].end());
    derive_trace_plan(p, trace[i].data(), p.n_trace);
    p.agg_begin = uint32_t(g.plan_aggs.size());
    p.n_agg = uint16_t(agg[i].size());
    g.plan_aggs.insert(g.plan_aggs.end(), agg[i].begin(), agg[i].end());
    p.prof_begin = uint32_t(g.plan_slices.size());
    p.n_prof = uint16_t(prof[i].size());
    g.plan_slices.insert(g.plan_slices.end(), prof[i].begin(), prof[i].end());
    p.measure = (p.n_agg + p.n_prof) > 0 || p.trace_values;
    // Before the first release every thread is parked at its first event
    // (the gate): nothing can be open without a frame yet.
    p.measure_new = p.measure && !measure_before[i] && g.releases > 1;
    for (const auto& t : agg[i])
      if (t.metric == uint16_t(proto::Metric::kCounter)) p.counters = 1;
    bool callpath = false;
    for (uint32_t slice : prof[i]) {
      if (g.slice_metric[slice].metric == uint16_t(proto::Metric::kCounter)) p.counters = 1;
      callpath |= g.slice_callpath[slice];
      p.unwind |= g.slice_unwind[slice];
    }
    p.cache = region_cache[i];
    p.armed = p.measure || p.n_trace || open[i] || int32_t(i) == g.breakpoint || p.cache;
    set_plan_overhead(p, callpath);
  }
  bool counters_moved = false;  // a region starts or stops reading counters
  for (uint32_t i = 0; i < nreg; ++i) counters_moved |= counters_before[i] != g.plans[i].counters;
  if (events != g.events || counters_moved) {
    // A new list: every thread rebuilds its event set at its next event,
    // and no frame opened before can pair its values with the new ones.
    g.events = events;
    ++g.events_generation;
    for (uint32_t t = 0; t < nthreads; ++t)
      if (ThreadState* ts = g.threads[t].load(std::memory_order_acquire))
        ts->fixup.store(1, std::memory_order_relaxed);
  }
  g.all_prof_begin = uint32_t(g.plan_slices.size());
  g.all_prof_count = uint16_t(all_slices.size());
  g.plan_slices.insert(g.plan_slices.end(), all_slices.begin(), all_slices.end());
  g.all_trace_begin = uint32_t(g.plan_traces.size());
  g.all_trace_count = uint16_t(all_trace.size());
  g.plan_traces.insert(g.plan_traces.end(), all_trace.begin(), all_trace.end());
  reserve_plans();
  g.aggs = g.plan_aggs.data();
  g.slices = g.plan_slices.data();
  g.traces = g.plan_traces.data();
}

}  // namespace mri::monitor

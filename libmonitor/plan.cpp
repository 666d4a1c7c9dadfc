// plan.cpp - the plan compiler (plan.h): requests -> region plans.
#include "plan.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mri_sync.h"

namespace mri::monitor {
namespace {

using proto::Metric;
using proto::RequestKind;

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

// One accepted request, as the kind compilers build its targets.
struct Accepted {
  const GatheredRequest& request;
  const Claim& claim;
  uint16_t reading;  // kReading: its index among all readings
  bool paused;       // keeps its results, measures nothing until resumed
};

// Whether request kind `kind` can carry values of `value`: the structure
// of a record, checked before its source looks at it (a record that fails
// is corrupt: no tool writes it).
bool kind_takes(uint32_t kind, ValueKind value) {
  if (value == ValueKind::kOwned) return true;  // the source checks its own
  switch (RequestKind(kind)) {
    case RequestKind::kAggregate:
    case RequestKind::kProfile:
      return value == ValueKind::kTime || value == ValueKind::kCount || value == ValueKind::kReading;
    case RequestKind::kTrace:
      return true;
    case RequestKind::kHistogram:  // the core keeps no histograms: only a source that owns its requests
      return false;
  }
  return false;
}

struct Compiler {
  const PlanLimits& limits;
  CompiledPlan& out;
  std::vector<uint8_t> slice_used;

  // Structural checks of one kind that do not depend on the source:
  // a profile's slice, a trace's slot.
  bool room_for(const proto::RequestRecord& rec) const {
    switch (RequestKind(rec.kind)) {
      case RequestKind::kProfile:
        return rec.profile_slice < limits.geometry.max_profile_slices && !slice_used[rec.profile_slice];
      case RequestKind::kTrace:
        return out.trace_slots < proto::kMaxTraceRequests && limits.geometry.trace_records > 0;
      default:
        return true;
    }
  }

  void aggregate(const Accepted& a) {
    const GatheredRequest& q = a.request;
    if (q.input.fresh) out.resets.push_back({Reset::What::kAggregate, q.input.slot});
    if (a.paused) return;
    const AggTarget t{q.input.slot, uint8_t(a.claim.kind), uint8_t(a.claim.compensable ? 1 : 0), a.reading};
    for (uint32_t region : q.input.regions) out.aggs[region].push_back(t);
  }

  void profile(const Accepted& a) {
    const GatheredRequest& q = a.request;
    const proto::RequestRecord& rec = q.input.record;
    const uint32_t slice = rec.profile_slice;
    slice_used[slice] = 1;
    out.slice_set[slice] = true;
    out.slice_value[slice] = {q.input.slot, uint8_t(a.claim.kind), uint8_t(a.claim.compensable ? 1 : 0), a.reading};
    out.slice_callpath[slice] = (rec.flags & proto::kRequestCallpath) && limits.geometry.max_edges > 0;
    out.slice_unwind[slice] = out.slice_callpath[slice] && (rec.flags & proto::kRequestUnwind);
    if (out.slice_unwind[slice] && !limits.unwind_available) {
      out.slice_unwind[slice] = false;
      out.unwind_wanted_but_absent = true;
    }
    out.slice_compensate[slice] = a.claim.compensable;
    if (q.input.fresh) {
      out.resets.push_back({Reset::What::kProfile, slice});
      if (out.slice_callpath[slice]) out.resets.push_back({Reset::What::kEdges, slice});
    }
    if (a.paused) return;
    for (uint32_t region : q.input.regions) out.slices[region].push_back(slice);
    if (rec.flags & proto::kRequestAllRegions) out.all_slices.push_back(slice);
  }

  // Trace records go to the rings; nothing to reset. The regions this
  // request names are roots; with subregions, every other region is
  // traced inside an instance of one.
  void trace(const Accepted& a) {
    const GatheredRequest& q = a.request;
    const proto::RequestRecord& rec = q.input.record;
    out.keep_trace_open[q.input.slot] = !q.input.fresh && a.claim.kind == ValueKind::kEvent;
    // Paused (counter rotation): no records in this phase. Its event is
    // not in the frame's readings then, so its reading index names none.
    if (a.paused) return;
    const uint32_t slot = out.trace_slots++;
    const bool filtered = rec.flags & proto::kRequestThreadFilter;
    if (filtered) std::memcpy(out.trace_threads[slot], q.threads, sizeof q.threads);
    out.trace_filtered[slot] = filtered;
    const TraceTarget base{uint16_t(q.input.slot), uint8_t(slot), 0, uint16_t(a.claim.kind), a.reading,
                           filtered ? out.trace_threads[slot] : nullptr};
    std::vector<uint8_t> root(out.regions, 0);
    for (uint32_t region : q.input.regions) root[region] = 1;
    const bool subregions = !(rec.flags & proto::kRequestNoSubregions);
    for (uint32_t region = 0; region < out.regions; ++region) {
      if (!root[region] && !subregions) continue;
      TraceTarget t = base;
      t.root = root[region];
      out.traces[region].push_back(t);
    }
    if ((rec.flags & proto::kRequestAllRegions) || subregions) {
      TraceTarget t = base;
      t.root = (rec.flags & proto::kRequestAllRegions) ? 1 : 0;
      out.all_traces.push_back(t);
    }
  }
};

// The request kinds the core compiles, one entry each.
struct KindCompiler {
  RequestKind kind;
  void (Compiler::*compile)(const Accepted&);
};
constexpr KindCompiler kKindCompilers[] = {
    {RequestKind::kAggregate, &Compiler::aggregate},
    {RequestKind::kProfile, &Compiler::profile},
    {RequestKind::kTrace, &Compiler::trace},
};

}  // namespace

std::vector<GatheredRequest> gather_requests(const proto::View& v, uint32_t nreg) {
  std::vector<GatheredRequest> out;
  for (uint32_t r = 0; r < v.g.max_requests; ++r) {
    GatheredRequest q;
    std::memcpy(&q.input.record, v.request(r), sizeof q.input.record);  // one fetch, then validate the copy
    const proto::RequestRecord& rec = q.input.record;
    if (rec.state != uint32_t(proto::RequestState::kActive)) continue;
    q.input.slot = r;
    const proto::RequestAck* ack = v.request_ack(r);
    q.acked_generation = sync::load(ack->applied_generation);
    q.acked_status = sync::load(ack->status);
    q.input.fresh = q.acked_generation != rec.generation || q.acked_status != 0;
    if (rec.flags & proto::kRequestAllRegions) {
      q.input.regions.resize(nreg);
      for (uint32_t region = 0; region < nreg; ++region) q.input.regions[region] = region;
    } else {
      for_each_requested_region(v, r, nreg, [&](uint32_t region) { q.input.regions.push_back(region); });
    }
    if (rec.flags & proto::kRequestThreadFilter)
      for (uint32_t w = 0; w < proto::kThreadMaskWords; ++w)
        q.threads[w] = sync::load(v.request_threads(r)[w], std::memory_order_relaxed);
    out.push_back(std::move(q));
  }
  return out;
}

CompiledPlan compile_requests(std::vector<GatheredRequest>& requests, const PlanLimits& limits,
                              const proto::View* view) {
  CompiledPlan out;
  out.regions = limits.regions;
  out.aggs.resize(limits.regions);
  out.slices.resize(limits.regions);
  out.traces.resize(limits.regions);
  out.keep_trace_open.assign(limits.geometry.max_requests, 0);
  Compiler c{limits, out, std::vector<uint8_t>(limits.geometry.max_profile_slices, 0)};
  const ReleaseContext ctx{view, limits.regions, limits.threads};
  for_each_source_with(&MeasurementSource::begin_release,
                       [&](uint32_t, const MeasurementSource& s) { s.begin_release(ctx); });

  // Claims first: each source's reading indices are known only once every
  // request has been claimed.
  struct Claimed {
    GatheredRequest* request;
    int32_t source;
    Claim claim;
  };
  std::vector<Claimed> claimed;
  for (GatheredRequest& q : requests) {
    const proto::RequestRecord& rec = q.input.record;
    Ack ack{q.input.slot, rec.generation, false, true, ""};
    const int32_t s = source_for_metric(rec.metric);
    if (s >= 0 && source(uint32_t(s)).kind == ValueKind::kOwned) {
      out.owned[s].push_back(q.input);  // checked and acknowledged by the source (compile_owned)
      continue;
    }
    if (s < 0 || !c.room_for(rec) || !kind_takes(rec.kind, source(uint32_t(s)).kind)) {
      out.acks.push_back(ack);  // unknown metric, kind or slot, or a metric the kind cannot carry
      continue;
    }
    const MeasurementSource& src = source(uint32_t(s));
    Claim claim = src.claim ? src.claim(q.input, ctx) : Claim{src.kind};
    if (claim.refused) {
      ack.corrupt = claim.corrupt;
      if (!claim.corrupt) ack.note = claim.refused;
      out.acks.push_back(ack);
      continue;
    }
    claimed.push_back({&q, s, claim});
    // A later request of the same kind must find its slice or slot taken.
    if (rec.kind == uint32_t(RequestKind::kProfile)) c.slice_used[rec.profile_slice] = 1;
    if (rec.kind == uint32_t(RequestKind::kTrace)) ++out.trace_slots;
  }
  std::fill(c.slice_used.begin(), c.slice_used.end(), 0);
  out.trace_slots = 0;

  // Readings: each reading source's list, one after the other. A source
  // whose list does not fit behind the others' gets none: its requests are
  // refused (one source alone is held to kMaxReadings by its claims).
  uint32_t base[kMaxSources] = {};
  bool fits[kMaxSources] = {};
  uint32_t readings = 0;
  for_each_source_with(&MeasurementSource::reading_names, [&](uint32_t i, const MeasurementSource& s) {
    const std::vector<std::string>& names = s.reading_names();
    base[i] = readings;
    fits[i] = readings + names.size() <= kMaxReadings;
    if (names.empty() || !fits[i]) return;
    out.readers[out.n_readers++] = {uint8_t(i), uint8_t(readings), uint8_t(names.size())};
    out.reading_list.insert(out.reading_list.end(), names.begin(), names.end());
    readings += uint32_t(names.size());
  });

  for (const Claimed& k : claimed) {
    const proto::RequestRecord& rec = k.request->input.record;
    if (k.claim.kind == ValueKind::kReading && !fits[k.source]) {
      out.acks.push_back({k.request->input.slot, rec.generation, false, false,
                          "more readings at once than a frame holds (8): request refused"});
      continue;
    }
    const Accepted a{*k.request, k.claim, uint16_t(base[k.source] + k.claim.reading),
                     (rec.flags & proto::kRequestPaused) != 0};
    for (const KindCompiler& kc : kKindCompilers)
      if (uint32_t(kc.kind) == rec.kind) (c.*kc.compile)(a);
    out.acks.push_back({k.request->input.slot, rec.generation, true, false, ""});
  }
  return out;
}

void derive_trace_plan(RegionPlan& p, const TraceTarget* t, uint32_t n) {
  p.trace_simple = n == 1 && t[0].root && !t[0].threads && t[0].kind == uint16_t(ValueKind::kEvent);
  for (uint32_t i = 0; i < n; ++i) {
    if (t[i].kind == uint16_t(ValueKind::kEvent)) continue;
    p.trace_values = 1;
    if (t[i].kind == uint16_t(ValueKind::kReading)) p.readings = 1;
  }
}

}  // namespace mri::monitor

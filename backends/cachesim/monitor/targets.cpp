// targets.cpp - the cache requests of a release as targets (validated,
// acknowledged in the segment, their rows reset), each thread's monitors
// of them, and the data structures that ended (Monitor_Unregister_Data),
// whose monitors stop counting.
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cache_internal.h"
#include "cachesim.h"
#include "mri_histogram.h"
#include "mri_sync.h"
#include "services.h"
#include "source.h"
#include "targets.h"

namespace mri::monitor::cachesim {

std::vector<Target>* g_targets = nullptr;
std::vector<std::vector<uint32_t>>* g_region_targets = nullptr;
std::vector<CacheThread*>* g_threads = nullptr;

namespace {

// Data structures that ended (Monitor_Unregister_Data), by table record,
// and which monitors watch which record: an ended record's monitors are
// frozen at its end, and those a thread creates for it later at once.
// Guarded by g_ended_mutex (application threads and the control thread).
std::mutex g_ended_mutex;
std::vector<uint8_t>* g_ended = nullptr;                 // [record]: 1 when ended
std::vector<std::pair<uint32_t, int>>* g_watchers = nullptr;  // (record, monitor id)

// Records that monitor `id` watches record `record`; freezes it if that
// has ended. g_ended_mutex held.
void watch(sim::Hierarchy* h, uint32_t record, int id) {
  if (!g_watchers) g_watchers = new std::vector<std::pair<uint32_t, int>>;
  g_watchers->emplace_back(record, id);
  if (g_ended && record < g_ended->size() && (*g_ended)[record]) h->freeze_monitor(id);
}

struct HistogramState {
  uint32_t generation = 0;       // request generation whose layout the slot holds
  uint32_t data_structures = 0;  // table records the layout covers (fixed when first applied)
};
HistogramState g_histograms[proto::kMaxHistograms];

}  // namespace

bool create_monitors(sim::Hierarchy* h, const Target& t, uint32_t thread, TargetThread& tt) {
  sim::MonitorSpec spec;
  spec.events = {t.event};
  spec.core = int32_t(thread % h->cores());
  spec.thread = thread;  // not the references of the threads that share its simulated core
  spec.enabled = false;
  std::string error;
  auto add = [&]() {
    const int id = h->add_monitor(spec, &error);
    if (id >= 0) tt.monitors.push_back(id);
    return id >= 0;
  };
  bool ok = true;
  if (t.whole) {
    spec.whole_address_space = true;
    ok = add();
  } else {
    for (const proto::HistogramPiece& p : t.layout.pieces) {
      spec.begin = p.address;
      spec.end = p.address + p.bytes;
      spec.bins = t.histogram ? p.bins : 1;
      spec.bin_bytes = t.histogram && p.bins > 1 ? t.layout.bin_bytes : 0;
      spec.bin_phase = t.histogram && p.bins > 1 ? p.phase : 0;
      if (!(ok = add())) break;
    }
  }
  if (!ok) {
    note_error("thread %u: cache request %u: the simulator refused a monitor: %s", thread, t.slot, error.c_str());
    for (int id : tt.monitors) h->remove_monitor(id);
    tt.monitors.clear();
    return false;
  }
  if (!t.whole) {
    std::lock_guard<std::mutex> lock(g_ended_mutex);
    for (size_t i = 0; i < tt.monitors.size(); ++i) watch(h, t.layout.pieces[i].data_index, tt.monitors[i]);
  }
  tt.key = t.key;
  return true;
}

void cache_apply(std::vector<RequestInput>& requests, const ReleaseContext& ctx, std::vector<uint8_t>& region_cache) {
  const proto::View& v = segment();
  const uint32_t nthreads = ctx.threads;
  cache_drain();  // monitors change below
  if (!g_threads) {
    g_threads = new std::vector<CacheThread*>(v.g.max_threads, nullptr);
    g_targets = new std::vector<Target>;
    g_region_targets = new std::vector<std::vector<uint32_t>>;
  }
  const std::vector<proto::DataRecord>& records = data_records();
  std::vector<Target> targets;
  std::vector<std::vector<uint32_t>> region_targets(region_cache.size());
  bool histogram_used[proto::kMaxHistograms] = {};

  for (RequestInput& q : requests) {
    proto::RequestAck* ack = v.request_ack(q.slot);
    const uint32_t generation = q.record.generation;
    const bool fresh = q.fresh;
    auto answer = [&](bool ok) {
      ack->status = ok ? 0 : 1;
      sync::store(ack->applied_generation, generation);
    };
    // A record the tool cannot have written: counted like the other corrupt ones.
    auto corrupt = [&](const char* what) {
      if (fresh) {
        sync::store(app().bad_requests, sync::load(app().bad_requests) + 1);
        note_error("ignoring corrupt cache request record %u: %s", q.slot, what);
      }
      answer(false);
    };
    proto::CacheRequestRecord c;
    std::memcpy(&c, v.cache_request(q.slot), sizeof c);  // one fetch, then validate the copy
    const bool histogram = q.record.kind == uint32_t(proto::RequestKind::kHistogram);
    const bool profile = q.record.kind == uint32_t(proto::RequestKind::kProfile);
    const bool trace = q.record.kind == uint32_t(proto::RequestKind::kTrace);
    if (!histogram && !profile && !trace && q.record.kind != uint32_t(proto::RequestKind::kAggregate)) {
      corrupt("a cache event is for aggregate, profile, trace and histogram requests");
      continue;
    }
    if (profile && q.record.profile_slice >= v.g.max_profile_slices) {
      corrupt("profile slice out of range");
      continue;
    }
    const uint32_t level = c.event / 8, kind = c.event % 8;
    if (level >= sim::kMaxLevels || kind > uint32_t(sim::EventKind::kWriteMiss)) {
      corrupt("unknown cache event");
      continue;
    }
    if (c.data_index > records.size()) {
      corrupt("names a data structure beyond the table");
      continue;
    }
    if (histogram && (c.bins < 1 || c.bins > proto::kMaxHistogramBins || c.histogram >= proto::kMaxHistograms ||
                      histogram_used[c.histogram])) {
      corrupt("bad bins or histogram slot");
      continue;
    }
    if (!g_backend.load(std::memory_order_acquire)) {
      note_error("cache request record %u rejected: this program is not built with the cache-simulator backend "
                 "(backends/cachesim: clang -fsanitize-coverage=edge,trace-loads,trace-stores)", q.slot);
      answer(false);
      continue;
    }
    sim::Hierarchy* h = simulator();
    if (!h) {
      note_error("cache request record %u rejected: cache simulator configuration: %s", q.slot, simulator_error());
      answer(false);
      continue;
    }
    if (level >= h->levels()) {
      note_error("cache request record %u rejected: it counts an L%u event, but the simulated hierarchy has %u "
                 "levels (%s)",
                 q.slot, level + 1, h->levels(), sim::format_config(h->config()).c_str());
      answer(false);
      continue;
    }
    Target t{};
    t.key = (uint64_t(q.slot) << 32) | generation;
    t.slot = q.slot;
    t.histogram = histogram;
    t.event = sim::Event{uint8_t(level), sim::EventKind(kind)};
    if (histogram) {
      HistogramState& hs = g_histograms[c.histogram];
      const bool new_layout = fresh || hs.generation != generation;
      const uint32_t nds = new_layout ? uint32_t(records.size()) : hs.data_structures;
      if (const char* why = proto::histogram_layout(records.data(), nds, c.data_index, c.bins, t.layout)) {
        note_error("histogram request record %u rejected: %s", q.slot, why);
        answer(false);
        continue;
      }
      histogram_used[c.histogram] = true;
      t.hist_slot = c.histogram;
      t.bins = t.layout.bins;
      if (new_layout) {
        hs = {generation, nds};
        for (uint32_t th = 0; th < v.g.max_threads; ++th)
          std::memset(v.histogram_row(c.histogram, th), 0, proto::kMaxHistogramBins * sizeof(uint64_t));
        proto::HistogramHead* head = v.histogram_head(c.histogram);
        head->data_index = c.data_index;
        head->data_structures = nds;
        head->bins = t.layout.bins;
        head->bin_bytes = t.layout.bin_bytes;
        head->total_bytes = t.layout.total_bytes;
        sync::store(head->applied_generation, generation);
      }
    } else {
      t.whole = c.data_index == 0;
      if (!t.whole) {
        const proto::DataRecord& r = records[c.data_index - 1];
        t.layout.pieces.push_back(proto::HistogramPiece{c.data_index - 1, r.address, r.bytes, 0, 0, 0, 1});
      }
      if (trace) {
        t.trace = true;
        if (q.record.flags & proto::kRequestThreadFilter) {
          const uint64_t* mask = v.request_threads(q.slot);
          for (uint32_t w = 0; w < proto::kThreadMaskWords; ++w)
            t.threads.push_back(sync::load(mask[w], std::memory_order_relaxed));
        }
      } else if (profile) {
        t.profile = true;
        t.slice = q.record.profile_slice;
        t.callpath = (q.record.flags & proto::kRequestCallpath) && v.g.max_edges > 0;
        if (fresh)
          for (uint32_t th = 0; th < nthreads; ++th) {
            std::memset(v.profile_row(t.slice, th), 0, sizeof(proto::ProfileSlot) * region_cache.size());
            if (t.callpath) std::memset(v.edge_row(t.slice, th), 0, sizeof(proto::EdgeSlot) * v.g.max_edges);
          }
      } else if (fresh) {
        for (uint32_t th = 0; th < nthreads; ++th) std::memset(v.aggregate(th, q.slot), 0, sizeof(proto::AggregateSlot));
      }
    }
    const uint32_t index = uint32_t(targets.size());
    if (trace) {
      t.root.assign(region_cache.size(), 0);
      for (uint32_t region : q.regions)
        if (region < region_cache.size()) t.root[region] = 1;
    }
    targets.push_back(std::move(t));
    auto attach = [&](uint32_t region) {
      region_targets[region].push_back(index);
      region_cache[region] = 1;
    };
    // A trace with subregions (the paper's default) is at every region;
    // only instances inside one of the requested regions' are traced.
    if (trace && !(q.record.flags & proto::kRequestNoSubregions)) {
      for (uint32_t region = 0; region < region_cache.size(); ++region) attach(region);
    } else {
      for (uint32_t region : q.regions)
        if (region < region_cache.size()) attach(region);
    }
    answer(true);
  }

  // Threads keep the monitors (and open instances) of requests that stay;
  // the others' monitors go.
  sim::Hierarchy* h = g_sim.load(std::memory_order_relaxed);
  for (uint32_t th = 0; th < nthreads && th < g_threads->size(); ++th) {
    CacheThread* ct = (*g_threads)[th];
    if (!ct) continue;
    std::vector<TargetThread> next(targets.size());
    for (size_t i = 0; i < targets.size(); ++i)
      for (TargetThread& old : ct->targets)
        if (old.key == targets[i].key && !old.monitors.empty()) {
          next[i] = std::move(old);
          old = TargetThread{};
          break;
        }
    for (const TargetThread& old : ct->targets)
      for (int id : old.monitors)
        if (h) h->remove_monitor(id);
    ct->targets = std::move(next);
  }
  if (h) {
    std::lock_guard<std::mutex> lock(g_ended_mutex);
    if (g_watchers)
      std::erase_if(*g_watchers, [h](const std::pair<uint32_t, int>& w) { return !h->monitor_totals(w.second, nullptr, 0); });
  }
  *g_targets = std::move(targets);
  *g_region_targets = std::move(region_targets);
  // Every reference is simulated while some cache request is in place, so
  // a region's cache is as warm as the program made it.
  set_recording(!g_targets->empty());
}

void cache_data_ended(uint32_t record) {
  std::lock_guard<std::mutex> lock(g_ended_mutex);
  if (!g_ended) g_ended = new std::vector<uint8_t>;
  if (g_ended->size() <= record) g_ended->resize(record + 1, 0);
  (*g_ended)[record] = 1;
  sim::Hierarchy* h = g_sim.load(std::memory_order_acquire);
  if (h && g_watchers)
    for (const auto& [r, id] : *g_watchers)
      if (r == record) h->freeze_monitor(id);
}

}  // namespace mri::monitor::cachesim

// cache.cpp - simulated cache events (paper sections 3.1, 3.2 and 7): the
// MCC's part of the cache-simulator backend.
//
// The instrumentation (backends/cachesim) appends every load and store of
// the application to a per-thread buffer and hands full buffers to
// Monitor_Cache_Simulate(), which runs the simulator (simulator/) over the
// batch on core = the thread's monitoring index. The cache state is
// simulated for every reference while any cache request is in place.
//
// What a request measures is done with the simulator's address-range
// monitors, one per (request, thread, data structure), counting only that
// thread's references (MonitorSpec::thread: threads beyond the simulated
// cores share a core's caches, not its monitors; threads the monitor does
// not follow, beyond max_threads, are simulated as kUnmonitoredThread,
// which no monitor counts). A monitor is enabled while its thread is inside an
// instance of one of the request's regions: at the enter the thread's
// buffer is simulated first, the monitor enabled and (aggregates) its total
// noted; at the exit the buffer is simulated, the difference is the
// instance's value, and the monitor is disabled when the outermost instance
// ends. Histograms copy the monitors' bins into the thread's row then.
// Profiles keep a stack of open instances per target, like PAPI counters
// in hot_path.cpp: an instance's exclusive count is its inclusive count
// minus those of the target's instances directly inside it, and its caller
// (callpath) is the instance below it on that stack. Traces write one value
// record per instance of the requested regions and, with subregions, of
// every region entered inside one of them; their monitors count while an
// instance of a requested region is open.
//
// Concurrency: targets are rebuilt by the control thread while every
// application thread is quiescent (cache_apply); each thread's CacheThread
// is touched by that thread inside its in_slow protection, and by the
// control thread only during cache_apply. The simulator has its own mutex;
// Monitor_Cache_Simulate runs outside the monitor (from instrumented code)
// and touches nothing but the simulator and the count of batches in flight
// that the end of monitoring waits on (cache_stop_recording).
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache_internal.h"
#include "cachesim.h"
#include "monitor_internal.h"
#include "mri_histogram.h"
#include "mri_sync.h"

namespace mri::monitor {

// The simulated thread index of the references of a thread beyond
// max_threads: no monitor's (thread indexes are below max_threads).
constexpr uint32_t kUnmonitoredThread = ~uint32_t{0};
namespace {

namespace sim = mri::sim;

static_assert(sizeof(Monitor_Cache_Access) == sizeof(sim::Access));
static_assert(offsetof(Monitor_Cache_Access, size) == offsetof(sim::Access, size));
static_assert(offsetof(Monitor_Cache_Access, type) == offsetof(sim::Access, type));

std::atomic<const Monitor_Cache_Backend*> g_backend{nullptr};
// Created once, at the first release with a cache request, never destroyed
// (instrumented code may still simulate while the process exits).
std::atomic<sim::Hierarchy*> g_sim{nullptr};
std::string* g_sim_error = nullptr;  // why it could not be created (control thread)
// The instrumentation sorts references by part (a split from the start,
// split_of); written before g_sim is published, read after it is loaded.
bool g_backend_sorts = false;

// One cache request in place.
struct Target {
  uint64_t key;  // (request slot << 32) | generation: survives releases unchanged
  uint32_t slot;
  bool histogram;
  uint32_t hist_slot;
  uint32_t bins;  // histogram: bins in use
  sim::Event event;
  bool whole;  // aggregate over every address (no data structure)
  bool profile;   // a profile request: rows of `slice`
  bool callpath;  // and its edges
  uint32_t slice;
  bool trace;     // a trace request: a value record per traced instance
  std::vector<uint8_t> root;  // trace: the requested regions (the others are traced inside them)
  std::vector<uint64_t> threads;  // trace: thread mask; empty: every thread
  proto::HistogramLayout layout;  // the data structures' pieces (aggregate: one piece, one bin)
};

// An open instance of a profile target's region.
struct OpenInstance {
  uint32_t region;
  uint64_t start;  // the monitors' total at the enter
  uint64_t child;  // counts of the target's instances directly inside
};

// One target on one thread.
struct TargetThread {
  uint64_t key = 0;
  std::vector<int> monitors;     // one per piece (or one for every address)
  std::vector<uint64_t> starts;  // aggregate: totals at the enter of each open instance
  std::vector<OpenInstance> open;  // profile: the open instances, innermost last
  std::vector<uint32_t> regions;   // trace: the region of each entry of `starts`
  uint32_t depth = 0;            // open instances of the target's regions (trace: of its requested regions)
};

struct CacheThread {
  std::vector<TargetThread> targets;  // parallel to g_targets
  std::vector<uint64_t> piece_bins, sums;  // histogram scratch, kMaxHistogramBins each
};

// Allocated at the first apply and never destroyed, like Global: threads may
// still run monitored code while the process runs its static destructors
// (and the per-thread states stay reachable for the leak checker).
std::vector<Target>* g_targets = nullptr;
std::vector<std::vector<uint32_t>>* g_region_targets = nullptr;  // [region] -> indices into *g_targets
std::vector<CacheThread*>* g_threads = nullptr;                  // [thread index]

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

proto::AppControl& app() { return g.view.header()->app; }

// The end of monitoring closes the simulator (cache_stop_recording) to
// every thread but the one that ends: batches handed over after that are
// not simulated, and the end waits for those already being simulated, so
// that nothing changes a count while the end reads one request's after
// another's. A thread counts itself in flight before it looks whether the
// simulator is closed, the closer closes it before it counts who is in
// flight (both sequentially consistent): either the batch is seen or it
// is not simulated. The counter has a line of its own: every batch of
// every thread touches it, twice.
alignas(64) std::atomic<uint32_t> g_in_flight{0};
alignas(64) std::atomic<bool> g_closed{false};
thread_local bool t_closer = false;      // this thread closed the simulator and may still simulate
thread_local uint32_t t_in_flight = 0;   // this thread's batches in flight (a signal handler may nest one)

// A batch in flight, for its scope; admitted() says whether to simulate it.
class InFlight {
 public:
  InFlight() {
    g_in_flight.fetch_add(1, std::memory_order_seq_cst);
    ++t_in_flight;
    admitted_ = t_closer || !g_closed.load(std::memory_order_seq_cst);
  }
  ~InFlight() {
    --t_in_flight;
    g_in_flight.fetch_sub(1, std::memory_order_release);
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  bool admitted() const { return admitted_; }

 private:
  bool admitted_;
};

void set_recording(bool on) {
  const Monitor_Cache_Backend* b = g_backend.load(std::memory_order_acquire);
  if (!b) return;
  // The recording cost per reference is compensated; measured before the
  // first reference is recorded (once: it depends on the code, not the requests).
  if (on) calibrate_cache_recording(b);
  __atomic_store_n(b->recording, on ? 1 : 0, __ATOMIC_RELAXED);
  g.cache_recording.store(on, std::memory_order_relaxed);
}

// With the simulation thread, the simulator can be split in two parts
// (simulator/cachesim.h, split_reason): part 0, the lines that are 0
// modulo the modulus, is then simulated by the program's threads, the rest
// by the simulation thread at the same time (cache_worker.cpp).
// MRI_CACHESIM_SPLIT:
//   - auto (the default): split by 4 while that pays, as measured over
//     windows of batches (cache_worker.cpp, decide_split); libmonitor sorts
//     each batch by part as it hands it over. A program whose simulation
//     takes longer than its own work gains (the ijk matrix multiply of
//     docs/PERFORMANCE.md, "Automatic split": 10.6x -> 8.2x); one whose own
//     work dominates stays joined, but for trials, which cost it (is_sort
//     and tree_walk of bench/compensation: 5-27% longer under the
//     simulator; split from the start, is_sort lost 20-60%).
//   - N, a power of two up to 64: split from the start, the program's
//     threads simulating 1/N of the lines; the instrumentation's callbacks
//     sort the references as they record them (backend version 3): about
//     0.2 ns more per reference recorded, against 0.6-0.7 ns for the sort
//     at the hand-over, but the latter is timed and removed like the
//     simulation where recording is only calibrated (docs/ACCURACY.md).
//     The inline recording (the plugin) does not sort (1.5 ns a
//     reference): libmonitor does, at the hand-over.
//   - 0 or 1: never split.
// libmri refuses other values. `how` receives the end of cache_info.
constexpr uint32_t kAutoModulus = 4;

// Whether the instrumentation offers to sort references by part as it
// records them (backend version 3 with `split`). Where it does not (an
// older backend, or one whose recording is inlined into the program), a
// split simulator gets every reference in part 0 and libmonitor sorts each
// batch as it hands it over (cache_worker.cpp).
bool backend_sorts() {
  const Monitor_Cache_Backend* b = g_backend.load(std::memory_order_acquire);
  return b && b->version >= 3 && b->split;
}

struct Split {
  uint32_t modulus = 0;   // 0: not split
  bool deferred = false;  // split later (auto), sorted by libmonitor
};

Split split_of(const sim::HierarchyConfig& config, bool async, std::string* how) {
  *how = async ? "; simulated by a thread of its own" : "";
  if (!async) return {};
  const char* env = std::getenv("MRI_CACHESIM_SPLIT");
  const bool automatic = !env || !*env || std::strcmp(env, "auto") == 0;
  uint32_t modulus = kAutoModulus;
  if (!automatic) {
    char* end = nullptr;
    const unsigned long m = std::strtoul(env, &end, 10);
    modulus = end != env && *end == '\0' && m <= 64 ? uint32_t(m) : 0;
  }
  if (modulus <= 1) return {};
  std::string why;
  if (!automatic && backend_sorts() && config.levels[0].line_bytes < 16)
    // The instrumentation takes an access aligned to its size (up to 16
    // bytes) to lie within one line.
    why = "lines of " + std::to_string(config.levels[0].line_bytes) + " bytes are shorter than an access can be (16)";
  else
    why = sim::split_reason(config, modulus);
  if (!why.empty()) {
    *how = "; simulated by a thread of its own, not split: " + why;
    return {};
  }
  const std::string share = "the program's threads simulate 1/" + std::to_string(modulus) + " of the lines";
  const std::string sorted = backend_sorts() ? "" : " (the references sorted by part as they are handed over)";
  *how = automatic ? "; simulated by a thread of its own, split by line while that pays: then " + share
                   : "; simulated by a thread of its own, split: " + share + sorted;
  return {modulus, automatic};
}

// The simulator, created from the tool's configuration text at its first
// use; nullptr (with g_sim_error) when that configuration is not usable.
sim::Hierarchy* simulator() {
  if (sim::Hierarchy* h = g_sim.load(std::memory_order_relaxed)) return h;
  if (g_sim_error) return nullptr;
  char text[proto::kCacheConfigBytes];
  std::memcpy(text, g.view.cache_config(), sizeof text);  // one fetch: the tool could change it
  sim::HierarchyConfig config;
  std::string source = "the tool's configuration", error;
  if (strnlen(text, sizeof text) == sizeof text) {
    error = "the configuration text in the segment is not terminated";
  } else if (text[0] == '\0') {
    config = sim::default_config(&source);
    source = "this machine's caches (" + source + ")";
  } else if (text[0] == '@') {
    // A file name: the program opens no path from the segment (a FIFO
    // would block this thread, /dev/zero exhaust its memory). The tool
    // reads the file and sends its configuration (protocol version 12).
    error = "the tool's configuration text starts with '@' (a file name); the program reads no file the tool "
            "names, the tool sends the configuration itself";
  } else {
    error = sim::parse_config(text, config);
  }
  if (!error.empty()) {
    g_sim_error = new std::string(error);
    return nullptr;
  }
  const bool async = cache_start_worker();
  std::string how;
  const Split split = split_of(config, async, &how);
  std::unique_ptr<sim::Hierarchy> h = sim::Hierarchy::create(config, &error, split.modulus, split.deferred);
  if (!h) {
    g_sim_error = new std::string(error);
    return nullptr;
  }
  if (h->parts() > 1 && !split.deferred && backend_sorts()) {
    // Before recording starts (set_recording), and never again.
    Monitor_Cache_Split* to = g_backend.load(std::memory_order_acquire)->split;
    to->shift = h->split_shift();
    to->mask = h->split_mask();
    to->address_bits = h->split_mask() << h->split_shift();
    g_backend_sorts = true;
  }
  std::snprintf(g.view.cache_info(), proto::kCacheConfigBytes, "%s (%s%s; %s)", sim::format_config(config).c_str(),
                source.c_str(), how.c_str(), sim::Hierarchy::set_search_description().c_str());
  g_sim.store(h.release(), std::memory_order_release);
  return g_sim.load(std::memory_order_relaxed);
}

// Trace targets: whether thread `index` is traced; and the start of an
// instance outside the requested regions' instances.
bool traced(const Target& t, uint32_t index) {
  return in_thread_mask(t.threads.empty() ? nullptr : t.threads.data(), index);
}
constexpr uint64_t kNotTraced = ~uint64_t{0};

CacheThread* thread_of(ThreadState* ts) {
  CacheThread*& ct = (*g_threads)[ts->index];
  if (!ct) {
    ct = new CacheThread;
    ct->targets.resize(g_targets->size());
    ct->piece_bins.resize(proto::kMaxHistogramBins);
    ct->sums.resize(proto::kMaxHistogramBins);
  }
  return ct;
}

// The thread's monitors for one target, disabled. False (noted) when the
// simulator refuses one.
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

uint64_t total(const sim::Hierarchy* h, const TargetThread& tt) {
  uint64_t sum = 0;
  for (int id : tt.monitors) {
    uint64_t v = 0;
    h->monitor_totals(id, &v, 1);
    sum += v;
  }
  return sum;
}

// The thread's sequence word over its result rows (as in hot_path.cpp).
inline void seq_begin(uint32_t* seq) {
  sync::store(*seq, *seq + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}
inline void seq_end(uint32_t* seq) { sync::store(*seq, *seq + 1); }

void write_histogram(const sim::Hierarchy* h, ThreadState* ts, CacheThread* ct, const Target& t,
                     const TargetThread& tt) {
  uint64_t* sums = ct->sums.data();
  std::fill(sums, sums + t.bins, 0);
  for (size_t i = 0; i < tt.monitors.size() && i < t.layout.pieces.size(); ++i) {
    const proto::HistogramPiece& p = t.layout.pieces[i];
    if (!h->monitor_bin_counts(tt.monitors[i], 0, ct->piece_bins.data(), p.bins)) continue;
    for (uint32_t k = 0; k < p.bins && p.first_bin + k < t.bins; ++k) sums[p.first_bin + k] += ct->piece_bins[k];
  }
  uint64_t* row = g.view.histogram_row(t.hist_slot, ts->index);
  seq_begin(ts->seq);
  std::memcpy(row, sums, t.bins * sizeof(uint64_t));
  seq_end(ts->seq);
}

}  // namespace

void cache_apply(std::vector<CacheRequest>& requests, uint32_t nthreads, std::vector<uint8_t>& region_cache) {
  const proto::View& v = g.view;
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

  for (CacheRequest& q : requests) {
    proto::RequestAck* ack = v.request_ack(q.slot);
    const uint32_t generation = q.record.generation;
    const bool fresh = sync::load(ack->applied_generation) != generation || ack->status != 0;
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
      note_error("cache request record %u rejected: cache simulator configuration: %s", q.slot, g_sim_error->c_str());
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

// Monitor work timed in place goes onto the thread's overhead clock
// (compensation: every instance open meanwhile has it removed).
static inline void charge_overhead(ThreadState* ts, uint64_t since, uint64_t extra = 0) {
  ts->overhead_clock.fetch_add(((ticks() - since) << kOverheadFracBits) + extra, std::memory_order_relaxed);
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

uint32_t cache_batches_in_flight() { return g_in_flight.load(std::memory_order_seq_cst); }

void cache_flush_references() {
  if (const Monitor_Cache_Backend* b = g_backend.load(std::memory_order_relaxed)) b->flush();
}

void cache_enter(ThreadState* ts, uint32_t region) {
  sim::Hierarchy* h = g_sim.load(std::memory_order_relaxed);
  if (!h || !g_region_targets || region >= g_region_targets->size() || (*g_region_targets)[region].empty()) return;
  // What came before the enter is not the instance's: the enter flushed it
  // (cache_flush_references) before its timestamp. This work, after it, is
  // monitor overhead inside the instance: timed, and compensated. So is
  // the wait for the simulation thread to catch up.
  const uint64_t t0 = ticks();
  cache_drain();
  CacheThread* ct = thread_of(ts);
  for (uint32_t i : (*g_region_targets)[region]) {
    const Target& t = (*g_targets)[i];
    TargetThread& tt = ct->targets[i];
    if (t.trace && !traced(t, ts->index)) continue;
    if (tt.monitors.empty() && !create_monitors(h, t, ts->index, tt)) continue;
    if (t.trace) {
      // Every instance gets a start (kNotTraced outside the requested
      // regions' instances), so the exit always pops its own.
      const bool root = region < t.root.size() && t.root[region];
      if (root && tt.depth++ == 0)
        for (int id : tt.monitors) h->set_monitor_enabled(id, true);
      tt.starts.push_back(tt.depth ? total(h, tt) : kNotTraced);
      tt.regions.push_back(region);
      continue;
    }
    if (tt.depth++ == 0)
      for (int id : tt.monitors) h->set_monitor_enabled(id, true);
    if (t.profile)
      tt.open.push_back(OpenInstance{region, total(h, tt), 0});
    else if (!t.histogram)
      tt.starts.push_back(total(h, tt));
  }
  charge_overhead(ts, t0);
}

namespace {

// A trace target's instance ends at `now`: its value record (outside the
// thread's sequence lock: the append may wait for the tool, like
// trace_values in hot_path.cpp).
void trace_instance_exit(sim::Hierarchy* h, ThreadState* ts, const Target& t, TargetThread& tt, uint32_t region,
                         uint64_t now) {
  if (tt.starts.empty()) return;  // entered before the request was in place
  const uint64_t start = tt.starts.back();
  tt.starts.pop_back();
  if (!tt.regions.empty()) tt.regions.pop_back();
  if (start != kNotTraced)
    trace_append(ts, now, total(h, tt) - start, region, proto::TraceKind::kValue, uint16_t(t.slot));
  const bool root = region < t.root.size() && t.root[region];
  if (root && tt.depth > 0 && --tt.depth == 0)
    for (int id : tt.monitors) h->set_monitor_enabled(id, false);
}

// A profile target's instance ends: its rows in the target's slice.
void profile_exit(const sim::Hierarchy* h, ThreadState* ts, const Target& t, TargetThread& tt, uint32_t region) {
  if (tt.open.empty() || tt.open.back().region != region) return;  // entered before the request was in place
  const OpenInstance inst = tt.open.back();
  tt.open.pop_back();
  const uint64_t inclusive = total(h, tt) - inst.start;
  const uint64_t exclusive = inclusive > inst.child ? inclusive - inst.child : 0;
  bool outermost = true;  // recursion: inclusive counts once
  for (const OpenInstance& o : tt.open) outermost &= o.region != region;
  if (!tt.open.empty()) tt.open.back().child += inclusive;
  // Counts: nothing to compensate, the comp_ fields equal the raw ones.
  seq_begin(ts->seq);
  add_instance(ts->profile_rows[t.slice] + region, inclusive, exclusive, inclusive, exclusive, outermost);
  if (t.callpath) {
    const uint32_t caller = tt.open.empty() ? proto::kNoCaller : tt.open.back().region;
    add_edge(ts, t.slice, caller, region, inclusive, exclusive, inclusive, exclusive, outermost);
  }
  seq_end(ts->seq);
}

// An aggregate target's innermost instance ends: its value in the row.
void aggregate_exit(const sim::Hierarchy* h, ThreadState* ts, const Target& t, TargetThread& tt) {
  if (tt.starts.empty()) return;
  const uint64_t value = total(h, tt) - tt.starts.back();
  tt.starts.pop_back();
  proto::AggregateSlot* s = ts->agg_row + t.slot;
  seq_begin(ts->seq);
  // Event counts: nothing to compensate, the comp_ fields equal the raw ones.
  if (~value > s->not_min) s->not_min = s->not_comp_min = ~value;
  if (value > s->max) s->max = s->comp_max = value;
  s->sum += value;
  s->comp_sum += value;
  s->count += 1;
  seq_end(ts->seq);
}

// The last open instance of a (non-trace) target ends: its monitors stop
// counting, and a histogram's counts go to the thread's row.
void last_instance_ended(sim::Hierarchy* h, ThreadState* ts, CacheThread* ct, const Target& t, TargetThread& tt) {
  for (int id : tt.monitors) h->set_monitor_enabled(id, false);
  if (t.histogram) write_histogram(h, ts, ct, t, tt);
}

}  // namespace

void cache_end_open(ThreadState* ts, uint64_t now, bool own_thread) {
  sim::Hierarchy* h = g_sim.load(std::memory_order_relaxed);
  if (!h || !g_threads || !g_targets || ts->index >= g_threads->size()) return;
  CacheThread* ct = (*g_threads)[ts->index];
  if (!ct) return;
  bool open = false;
  for (const TargetThread& tt : ct->targets) open |= tt.depth > 0 || !tt.starts.empty();
  if (!open) return;
  // The references the calling thread made inside them, not yet handed
  // over, are theirs; another thread's buffer cannot be reached from here.
  if (own_thread) cache_flush_references();
  cache_drain();
  for (size_t i = 0; i < ct->targets.size() && i < g_targets->size(); ++i) {
    const Target& t = (*g_targets)[i];
    TargetThread& tt = ct->targets[i];
    if (t.trace) {
      // Innermost first, as their exits would have come.
      while (!tt.starts.empty())
        trace_instance_exit(h, ts, t, tt, tt.regions.empty() ? 0 : tt.regions.back(), now);
      continue;
    }
    if (tt.depth == 0) continue;
    if (t.profile) {
      while (!tt.open.empty()) profile_exit(h, ts, t, tt, tt.open.back().region);
    } else if (!t.histogram) {
      while (!tt.starts.empty()) aggregate_exit(h, ts, t, tt);
    }
    tt.depth = 0;
    last_instance_ended(h, ts, ct, t, tt);
  }
}

void cache_exit(ThreadState* ts, uint32_t region) {
  sim::Hierarchy* h = g_sim.load(std::memory_order_relaxed);
  if (!h || !g_region_targets || region >= g_region_targets->size() || (*g_region_targets)[region].empty()) return;
  // The instance's last references were flushed before the exit's
  // timestamp; this work, after it, is overhead in the enclosing instances.
  // So is the wait for the simulation thread to simulate them.
  const uint64_t t0 = ticks();
  cache_drain();
  CacheThread* ct = thread_of(ts);
  for (uint32_t i : (*g_region_targets)[region]) {
    const Target& t = (*g_targets)[i];
    TargetThread& tt = ct->targets[i];
    if (t.trace) {
      if (traced(t, ts->index)) trace_instance_exit(h, ts, t, tt, region, ticks());
      continue;
    }
    if (tt.depth == 0) continue;  // entered before the request was in place
    if (t.profile)
      profile_exit(h, ts, t, tt, region);
    else if (!t.histogram)
      aggregate_exit(h, ts, t, tt);
    if (--tt.depth == 0) last_instance_ended(h, ts, ct, t, tt);
  }
  charge_overhead(ts, t0);
}

void cache_after_fork() {
  // A fork()ed child is not the monitored process (child_after_fork): it
  // records and simulates nothing. Its copy of the simulator may even be
  // locked for good, by a thread of the parent's that the child does not
  // have (the simulation thread, or another thread in the middle of a
  // batch).
  g_sim.store(nullptr, std::memory_order_relaxed);
  if (const Monitor_Cache_Backend* b = g_backend.load(std::memory_order_acquire))
    __atomic_store_n(b->recording, 0, __ATOMIC_RELAXED);
  g.cache_recording.store(false, std::memory_order_relaxed);
}

void cache_stop_recording() {
  set_recording(false);
  if (!g_sim.load(std::memory_order_acquire)) return;
  t_closer = true;
  g_closed.store(true, std::memory_order_seq_cst);
  // The batches admitted before: simulating one takes microseconds (a
  // batch is at most a few thousand references), waiting for the
  // simulator's mutex or the simulation thread included. Bounded all the
  // same (a thread stopped by a debugger): after 2 s the end goes on.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (uint32_t spins = 0; g_in_flight.load(std::memory_order_acquire) > t_in_flight; ++spins) {
    if (spins % 64 == 63) {
      if (std::chrono::steady_clock::now() > deadline) break;
      sched_yield();
    }
  }
  cache_drain();  // and what they handed over to the simulation thread
}

void cache_finish() {
  const Monitor_Cache_Backend* b = g_backend.load(std::memory_order_acquire);
  if (!b) return;
  if (g_sim.load(std::memory_order_relaxed)) {
    b->flush();
    cache_drain();
  }
  set_recording(false);
}

void cache_publish_backend() {
  if (g_backend.load(std::memory_order_acquire) && g.view.base) sync::store(app().cache_backend, 1u);
}

}  // namespace mri::monitor

using namespace mri::monitor;

extern "C" void Monitor_Register_Cache_Backend(const Monitor_Cache_Backend* backend) {
  // Version 1 has no calibrate member; calibrate_cache_recording checks the
  // version before reading it.
  if (!backend || backend->version < 1 || backend->version > MONITOR_CACHE_BACKEND_VERSION || !backend->recording ||
      !backend->flush)
    return;
  const Monitor_Cache_Backend* none = nullptr;
  if (!g_backend.compare_exchange_strong(none, backend)) return;
  std::lock_guard<std::mutex> control(g.control_mutex);  // the segment stays mapped meanwhile
  const uint32_t m = g.mode.load();
  if (m == kRunning || m == kStopped) cache_publish_backend();
}

extern "C" void Monitor_Cache_Simulate(const Monitor_Cache_Access* accesses, unsigned long n) {
  sim::Hierarchy* h = g_sim.load(std::memory_order_acquire);
  if (!h || !accesses || n == 0) return;
  const InFlight batch;  // not simulated once the end of monitoring has closed the simulator
  if (!batch.admitted()) return;
  ThreadState* ts = current_thread_state();  // registers a thread whose first event this is
  // Simulating is the monitor's overhead in every instance open on this
  // thread: timed here, batch by batch (a wait for another thread's batch
  // included), and with the calibrated cost of recording the n references,
  // added to the thread's overhead clock (compensation, seed paper 001).
  const uint64_t t0 = ticks();
  cache_submit(h, ts ? ts->index : kUnmonitoredThread, kAllParts, reinterpret_cast<const sim::Access*>(accesses), n);
  if (ts) charge_overhead(ts, t0, uint64_t(n) * g.overhead_pair[uint32_t(mri::proto::OverheadKind::kCacheSim)]);
}

extern "C" void Monitor_Cache_Simulate_Part(unsigned int part, const Monitor_Cache_Access* accesses, unsigned long n) {
  sim::Hierarchy* h = g_sim.load(std::memory_order_acquire);
  if (!h || !accesses || n == 0 || part >= h->parts()) return;
  const InFlight batch;  // as Monitor_Cache_Simulate
  if (!batch.admitted()) return;
  // The instrumentation sorts only where it was given the split; else its
  // part 0 is every reference (a deferred split is sorted at the hand-over).
  if (!g_backend_sorts) part = kAllParts;
  ThreadState* ts = current_thread_state();
  // As Monitor_Cache_Simulate.
  const uint64_t t0 = ticks();
  cache_submit(h, ts ? ts->index : kUnmonitoredThread, part, reinterpret_cast<const sim::Access*>(accesses), n);
  if (ts) charge_overhead(ts, t0, uint64_t(n) * g.overhead_pair[uint32_t(mri::proto::OverheadKind::kCacheSim)]);
}

// session.cpp - the MCC's connection to the tool: attaching to the segment,
// publishing static information, the control thread that executes the
// tool's commands, stopping the world, detaching.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache_internal.h"
#include "monitor_internal.h"
#include "mri_sync.h"
#include "mri_timer.h"

namespace mri::monitor {

constinit GlobalStorage g_storage;

namespace {

using proto::AppState;
using proto::StopReason;

constexpr long kControlPollNs = 10'000'000;  // tool liveness check period: 10 ms
constexpr uint64_t kQuiesceWarnNs = 2'000'000'000ull;
// Set when the tool ends the program (Command::kTerminate), before the
// world is quiesced: a thread that ends after that leaves its frames to
// the control thread, which is ending them.
std::atomic<bool> g_ending{false};
void stop_world_for_an_end();  // below, with the termination signals

proto::AppControl& app() { return g.view.header()->app; }

void copy_message(char (&dst)[proto::kMessageBytes], const char* text) {
  std::snprintf(dst, proto::kMessageBytes, "%s", text);
}

// Refuses the segment: tells the tool why when the header is ours enough to
// write into, then behaves as dormant.
void refuse(const char* why, bool header_writable) {
  std::fprintf(stderr, "mri-monitor: not monitoring: %s\n", why);
  if (header_writable) {
    copy_message(app().refuse_reason, why);
    sync::store(app().app_pid, uint32_t(getpid()));
    publish_state(AppState::kRefused, StopReason::kNone, -1, false);
  }
  if (g.view.base) shmdt(g.view.base);
  g.view.base = nullptr;
  g.mode.store(kDetached, std::memory_order_release);
}

void child_after_fork() {
  // A forked child inherits the mapping but is not the monitored process.
  g.mode.store(kDetached, std::memory_order_relaxed);
  for (auto* d : g.descriptors) __atomic_store_n(&d->armed, 0, __ATOMIC_RELAXED);
  cache_after_fork();
  if (g.view.base) shmdt(g.view.base);
  g.view.base = nullptr;
}

void thread_exit(void* p) {
  auto* ts = static_cast<ThreadState*>(p);
  if (!ts) return;
  if (!ts->record) return thread_ended(ts);  // threads.cpp: for the thread's joiner
  // The same handshake as the slow path: a detach must not unmap the
  // segment under this store.
  ts->in_slow.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint32_t m = g.mode.load(std::memory_order_acquire);
  const bool monitoring = (m == kRunning || m == kStopped) && !g_ending.load();
  if (monitoring) {
    // A thread that ends inside regions (pthread_exit() in one) ends them
    // now, as Monitor_Final does for the exiting thread: measured, then in
    // its trace. Before the end is noted for the joiner, whose
    // compensation then includes this work. (Its references not yet
    // handed to the simulator, at most one batch, are simulated after,
    // at the backend's own thread end: flushing them here, outside the
    // monitor, would read the frames that an exit() on another thread may
    // be ending at the same time.)
    const uint64_t now = ticks();
    measure_open_instances(ts, now);
    trace_close_open(ts, now);
    trace_flush_stash(ts);
    trace_publish_head(ts);
  }
  thread_ended(ts);
  if (monitoring) sync::store(ts->record->status, uint32_t(proto::ThreadStatus::kExited));
  if (ts->events.n) {
    papi::destroy(ts->events);
    papi::unregister_thread();
  }
  ts->in_slow.store(0, std::memory_order_release);
}

// Attaches to the segment named by the environment. Runs from a constructor
// before main(); on any problem the program runs unmonitored.
void attach_from_environment() {
  const char* id_text = std::getenv(proto::kEnvShmId);
  if (!id_text) return;  // dormant
  std::string id_copy = id_text;
  const char* tool_text = std::getenv(proto::kEnvToolPid);
  long tool_pid = tool_text ? std::strtol(tool_text, nullptr, 10) : 0;
  // Children of the application must not attach to our segment.
  unsetenv(proto::kEnvShmId);
  unsetenv(proto::kEnvToolPid);

  char* end = nullptr;
  long shmid = std::strtol(id_copy.c_str(), &end, 10);
  if (!end || *end != '\0' || shmid < 0) return refuse("MRI_SHMID is not a segment id", false);
  struct shmid_ds ds;
  if (shmctl(int(shmid), IPC_STAT, &ds) != 0) return refuse("MRI_SHMID names no accessible segment", false);
  if (ds.shm_perm.uid != geteuid()) return refuse("segment belongs to another user", false);
  if (ds.shm_segsz < sizeof(proto::Header)) return refuse("segment too small", false);
  void* base = shmat(int(shmid), nullptr, 0);
  if (base == reinterpret_cast<void*>(-1)) return refuse("cannot attach the segment", false);
  g.view.base = static_cast<unsigned char*>(base);
  g.shmid = int(shmid);

  // Copy the header fields once (the tool could change them under us) and
  // validate the copies.
  proto::Header* h = g.view.header();
  uint64_t magic = sync::load(h->magic);
  if (magic != proto::kMagic) return refuse("segment has no MRI header (bad magic)", false);
  // One process per segment: the first to attach claims it. Another one
  // (a second program started by a wrapper, such as a shell, that passed
  // the environment on, or one started after the first ended) would mix
  // its numbers into the first's: it runs unmonitored, leaving the header
  // alone.
  uint32_t holder = 0;
  if (!__atomic_compare_exchange_n(&h->app.app_pid, &holder, uint32_t(getpid()), false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    char why[160];
    std::snprintf(why, sizeof why,
                  "another process (pid %u) is already monitored through this segment; only the first program "
                  "the tool's command starts is monitored",
                  holder);
    return refuse(why, false);
  }
  g.own_pid = uint32_t(getpid());
  uint32_t version = sync::load(h->protocol_version);
  if (version != proto::kProtocolVersion) {
    char why[proto::kMessageBytes];
    std::snprintf(why, sizeof why,
                  "protocol version mismatch: the tool speaks version %u, this application's "
                  "libmonitor speaks version %u",
                  version, proto::kProtocolVersion);
    return refuse(why, true);
  }
  proto::Geometry geo = h->geometry;
  if (const char* bad = proto::validate_geometry(geo)) return refuse(bad, true);
  proto::Layout layout = proto::compute_layout(geo);
  if (layout.total > ds.shm_segsz) return refuse("segment smaller than its geometry needs", true);
  if (sync::load(h->header_size) != sizeof(proto::Header))
    return refuse("header size mismatch", true);
  const uint64_t claimed = sync::load(h->segment_size);
  if (claimed < layout.total || claimed > ds.shm_segsz)
    return refuse("segment size in the header disagrees with the segment", true);
  uint32_t header_tool = sync::load(h->tool.tool_pid);
  if (tool_pid <= 0 || uint32_t(tool_pid) != header_tool)
    return refuse("tool pid in the environment and the segment disagree", true);
  g.view.g = geo;
  g.view.l = layout;
  g.tool_pid = header_tool;
  if (const uint32_t wait_ms = sync::load(h->tool.trace_wait_ms)) g.trace_wait_ns = uint64_t(wait_ms) * 1'000'000ull;
  g.tool_pidfd = int(syscall(SYS_pidfd_open, pid_t(header_tool), 0));
  if (g.tool_pidfd < 0 && kill(pid_t(header_tool), 0) != 0)
    return refuse("the tool process is already gone", true);
  if (g.tool_pidfd >= 0 && g.tool_pidfd <= 2) {
    // Not one of the standard descriptors (the tool's were closed): the
    // program may open a file there and expect it to be its stdout.
    const int moved = fcntl(g.tool_pidfd, F_DUPFD_CLOEXEC, 3);
    if (moved >= 0) {
      close(g.tool_pidfd);
      g.tool_pidfd = moved;
    }
  }
  struct stat pidfd_stat;
  if (g.tool_pidfd >= 0 && fstat(g.tool_pidfd, &pidfd_stat) == 0) {
    g.tool_pidfd_dev = uint64_t(pidfd_stat.st_dev);
    g.tool_pidfd_ino = uint64_t(pidfd_stat.st_ino);
  }

  g.use_membarrier =
      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  g.threads = new std::atomic<ThreadState*>[geo.max_threads];
  for (uint32_t i = 0; i < geo.max_threads; ++i) g.threads[i].store(nullptr);
  pthread_key_create(&g.thread_key, thread_exit);
  pthread_atfork(nullptr, nullptr, child_after_fork);

  // The gate: every region is armed so the first monitored event of any
  // thread publishes the static information and parks until released.
  {
    std::lock_guard<std::mutex> lock(g.registry_mutex);
    g.mode.store(kStopped, std::memory_order_release);
    for (auto* d : g.descriptors) __atomic_store_n(&d->armed, 1, __ATOMIC_RELAXED);
  }
  std::atexit(Monitor_Final);
}

// The pidfd counts only while it is still the descriptor opened at attach:
// a program may close every inherited descriptor at start-up (closefrom(),
// close_range(): daemons do) and open its own files there. poll() then
// reported the tool dead (POLLNVAL, or a readable file) and the program ran
// unmonitored, or never (a pipe). Without the pidfd, the segment's attach
// count tells: the tool keeps the segment attached until it ends, and the
// kernel detaches a process that dies. (getppid() did not: the tool is not
// the parent when a wrapper, such as a shell script, started the program.)
bool tool_is_alive() {
  if (g.tool_pidfd >= 0) {
    struct stat st;
    if (fstat(g.tool_pidfd, &st) == 0 && uint64_t(st.st_dev) == g.tool_pidfd_dev &&
        uint64_t(st.st_ino) == g.tool_pidfd_ino) {
      struct pollfd p{g.tool_pidfd, POLLIN, 0};
      return poll(&p, 1, 0) == 0;  // readable once the process has exited
    }
    // The number is the program's now (never close it). Before Linux 6.9
    // every pidfd, eventfd or epoll descriptor shares one inode, so one of
    // those put there by the program passes the test above.
  }
  struct shmid_ds ds;
  return shmctl(g.shmid, IPC_STAT, &ds) == 0 && ds.shm_nattch >= 2;
}

void detach(const char* why) {
  std::lock_guard<std::mutex> lock(g.control_mutex);
  uint32_t m = g.mode.load();
  if (m == kDetached || m == kFinished || m == kDormant) return;
  g.mode.store(kDetached, std::memory_order_seq_cst);
  arm_all(0);
  quiesce(nullptr);
  cache_finish();  // no more simulation: nobody reads its results
  sync::bump(g.run_generation);
  sync::futex_wake_private(&g.run_generation);
  std::fprintf(stderr, "mri-monitor: %s; detached, the application continues unmonitored\n", why);
  // Every thread now sees kDetached before touching the segment.
  shmdt(g.view.base);
  g.view.base = nullptr;
}

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

// handle_command() with the control mutex held; true when the program was
// released (its threads are to be woken).
bool handle_command_locked(uint32_t seq) {
  proto::ToolControl& tc = g.view.header()->tool;
  const uint32_t cmd = sync::load(tc.cmd);
  const int32_t breakpoint = sync::load(tc.breakpoint);
  const uint32_t m = g.mode.load();
  if (m != kRunning && m != kStopped) return false;
  switch (proto::Command(cmd)) {
    case proto::Command::kRun: {
      if (m != kStopped) {
        note_error("run command while running: ignored");
        break;
      }
      quiesce(nullptr);
      const int32_t nreg = int32_t(g.region_first.size());
      g.breakpoint = (breakpoint >= 0 && breakpoint < nreg) ? breakpoint : -1;
      if (breakpoint >= nreg) note_error("breakpoint region %d out of range: ignored", breakpoint);
      ++g.releases;
      apply_requests();
      publish_state(AppState::kRunning, StopReason::kNone, -1, false, seq);
      for (auto* d : g.descriptors) {
        const uint32_t id = uint32_t(d->id);
        __atomic_store_n(&d->armed, id < g.plan_count ? g.plan[id].armed : 0, __ATOMIC_RELAXED);
      }
      g.mode.store(kRunning, std::memory_order_seq_cst);
      return true;
    }
    case proto::Command::kStop:
      if (m == kRunning && try_stop_world(StopReason::kStopRequest, -1, nullptr, seq)) return false;
      break;
    case proto::Command::kTerminate: {
      g_ending.store(true);
      // Threads running program code park at their next event (waited
      // for, bounded: stop_world_for_an_end). Then every thread's open
      // instances end as at an exit (to where it parked, or up to now):
      // before, they counted nothing, the PROGRAM region's too, and the
      // last records of each thread were lost. Ending at once: records
      // kept aside for a full ring are counted as discarded.
      stop_world_for_an_end();
      end_every_instance(nullptr, false);
      publish_state(AppState::kTerminated, StopReason::kTerminatedByTool, -1, false, seq);
      std::fflush(nullptr);
      _exit(0);
    }
    default:
      note_error("unknown command %u ignored", cmd);
      break;
  }
  // Acknowledge commands that changed nothing so the tool's wait ends.
  publish_ack(seq);
  return false;
}

// A run command: the threads parked at the gate are woken once the control
// mutex is free again, so that the first thing they do (publishing a
// function region found by unwinding takes it) does not wait for the
// control thread.
void handle_command(uint32_t seq) {
  std::unique_lock<std::mutex> lock(g.control_mutex);
  if (!handle_command_locked(seq)) return;
  lock.unlock();
  sync::bump(g.run_generation);
  sync::futex_wake_private(&g.run_generation);
}

// The state letter of a thread of this process ('R', 'S', 'Z', ...), from
// /proc/self/task/TID/stat; 0 when it cannot be read (the thread is gone).
char task_state(pid_t tid) {
  char path[64], text[512];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", int(tid));
  FILE* f = std::fopen(path, "re");
  if (!f) return 0;
  const size_t n = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  text[n] = '\0';
  const char* paren = std::strrchr(text, ')');  // the name may hold anything
  return paren && paren[1] == ' ' ? paren[2] : 0;
}

// Whether every thread of the program has ended and only the monitor's
// own (this control thread, the simulation thread) keep the process
// alive: its main thread called pthread_exit() (it stays a zombie while
// the process lives), and the others have ended too. Without the monitor
// the process would have ended then, as by exit(0).
bool program_threads_gone(pid_t control_tid) {
  if (task_state(getpid()) != 'Z') return false;  // one file read while main runs
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return false;
  bool gone = true;
  while (const dirent* e = readdir(dir)) {
    const pid_t tid = pid_t(std::atoi(e->d_name));
    if (tid <= 0 || tid == control_tid || tid == cache_worker_tid()) continue;
    const char state = task_state(tid);
    if (state != 0 && state != 'Z' && state != 'X') {
      gone = false;
      break;
    }
  }
  closedir(dir);
  return gone;
}

// The CPU time thread `tid` of this process has used, ns (its clock, as
// glibc's pthread_getcpuclockid makes it: the kernel's per-thread
// CPUCLOCK_SCHED); 0 when it cannot be read (the thread is gone).
uint64_t thread_cpu_ns(pid_t tid) {
  const clockid_t clock = clockid_t((~uint32_t(tid) << 3) | 6u);
  timespec t{};
  if (clock_gettime(clock, &t) != 0) return 0;
  return uint64_t(t.tv_sec) * 1'000'000'000ull + uint64_t(t.tv_nsec);
}

// Waits, at most kEndParkWaitNs, for every program thread still running
// program code (not parked) to park at its next event: the world is
// stopped and every region armed. Called before an end that does not come
// from a program thread (the tool's MRI_Application_Finish, a termination
// signal): a thread that parks has handed its buffered references over
// first (hot_path.cpp), and its instances then end where it parked, so
// what it recorded since its last event is not lost (up to a batch of 4096
// references a thread before). Looks every 100 us. A thread counts as
// running when it used CPU time since the look before, or its task state
// is 'R' (runnable: it may be kept off a CPU) or 'D' (a short wait in the
// kernel it returns from, such as a file's unlink under I/O load); every
// thread does while one hands references over to the simulator (a thread
// on its way to park hands them over first, and may sleep meanwhile,
// waiting for the simulation thread). The wait ends once kEndQuietLooks
// looks in a row, over kEndQuietNs at least, saw none. The state alone,
// looked at once, was not enough: a thread inside a system call looked
// blocked (the end came at once and said nothing, in one CI run), and on
// a loaded machine the looks come when the threads that share this
// thread's CPU sleep, so a thread that sleeps a little and runs a little
// never looked 'R' (test_thread_asleep_at_the_end_is_waited_for). A
// thread that stays blocked in the kernel is not waited for, nor one that
// reaches no event in time (a spin loop without regions, or a thread the
// machine's load keeps off a CPU): the end comes for them as before.
// The quiet time was 1 ms until 2026-11-29: on a virtual machine whose
// host kept a sleeping thread's CPU from waking for longer than that, the
// end took a thread between its slices of program code for blocked and
// passed it without a word (test_thread_asleep_at_the_end_is_waited_for,
// 896 misses of 1024 in one ThreadSanitizer run). Returns how many
// threads were still running program code when the wait gave up (late;
// 0: none) and, when it did not give up, how many threads it passed that
// ran during the wait, between its looks, and are neither parked nor
// ended (passed): each may have recorded references since its last event
// before it blocked.
constexpr uint64_t kEndParkWaitNs = 100'000'000ull;
constexpr uint64_t kEndQuietNs = 5'000'000ull;
constexpr uint32_t kEndQuietLooks = 10;
struct EndWait {
  uint32_t late = 0, passed = 0;
};
EndWait wait_for_running_threads_to_park() {
  if (!g.view.base) return {};
  const uint64_t start = sync::monotonic_ns(), deadline = start + kEndParkWaitNs;
  uint64_t busy_at = start;       // the last look that saw a thread running (none yet: the quiet time counts from here)
  uint32_t quiet_looks = 0;       // looks in a row that saw none
  std::vector<uint64_t> cpu_was;  // each thread's CPU time at the look before (0: not looked at)
  std::vector<uint8_t> ran;       // whether it used CPU time between two looks
  // A thread looked at now that is neither parked nor ended: its row.
  const auto unparked = [](uint32_t i) -> const proto::ThreadRecord* {
    const ThreadState* ts = g.threads[i].load(std::memory_order_acquire);
    if (!ts || ts->parked_since.load(std::memory_order_relaxed) != 0) return nullptr;
    // Its row (its thread id is written before the status says alive),
    // not ts->record: a thread's first event may be publishing it now.
    const proto::ThreadRecord* rec = g.view.thread(i);
    return sync::load(rec->status) == uint32_t(proto::ThreadStatus::kAlive) ? rec : nullptr;
  };
  for (;;) {
    const uint64_t now = sync::monotonic_ns();
    const bool late = now > deadline;
    uint32_t running = 0;
    const uint32_t n = std::min(g.next_thread.load(), g.view.g.max_threads);
    if (cpu_was.size() < n) cpu_was.resize(n, 0), ran.resize(n, 0);
    for (uint32_t i = 0; i < n; ++i) {
      const proto::ThreadRecord* rec = unparked(i);
      if (!rec) continue;
      const pid_t tid = pid_t(rec->os_tid);
      const uint64_t cpu = thread_cpu_ns(tid), was = cpu_was[i];
      cpu_was[i] = cpu;
      if (cpu != 0 && was != 0 && cpu != was) {
        ran[i] = 1;
        ++running;
        continue;
      }
      if (running > 0 && !late) continue;  // one is enough until the deadline: no file to read
      const char state = task_state(tid);
      if (state == 'R' || (state == 'D' && !late)) ++running;
    }
    if (late) return {running, 0};
    if (running > 0 || cache_batches_in_flight() > 0) {
      busy_at = now;
      quiet_looks = 0;
    } else if (++quiet_looks >= kEndQuietLooks && now - busy_at >= kEndQuietNs) {
      EndWait quiet;
      for (uint32_t i = 0; i < ran.size(); ++i) quiet.passed += ran[i] && unparked(i);
      return quiet;
    }
    usleep(100);
  }
}

// The world stopped for an end that does not come from a program thread
// (the tool's terminate command, a termination signal): every region
// armed, no thread inside the monitor, the threads running program code
// parked or given up on (wait_for_running_threads_to_park). Does
// nothing when monitoring is neither running nor stopped. Needs
// control_mutex.
void stop_world_for_an_end() {
  uint32_t expected = kRunning;
  if (!g.mode.compare_exchange_strong(expected, kStopped, std::memory_order_seq_cst) && expected != kStopped)
    return;
  arm_all(1);
  quiesce(nullptr);
  const EndWait wait = wait_for_running_threads_to_park();
  // What such a thread recorded for the cache simulator since its last
  // event is lost (the ending thread cannot reach its buffer): say so.
  if (!g.cache_recording.load(std::memory_order_relaxed)) return;
  if (wait.late > 0)
    note_error("the end gave up after %llu ms on %u thread%s still running program code: the references each "
               "recorded since its last event (up to 4096) are not simulated",
               static_cast<unsigned long long>(kEndParkWaitNs / 1'000'000), wait.late, wait.late == 1 ? "" : "s");
  else if (wait.passed > 0)
    note_error("the end passed %u thread%s that ran during its wait and then did not run for %llu ms: the references "
               "each recorded since its last event (up to 4096) may not be simulated",
               wait.passed, wait.passed == 1 ? "" : "s", static_cast<unsigned long long>(kEndQuietNs / 1'000'000));
}

// Termination signals (SIGINT, SIGTERM, SIGHUP) whose action the program
// leaves at the default: Ctrl-C, `timeout`, `kill`, a closed terminal.
// The default action ends the process at once, and everything open was
// lost: the program's own instance, its time loop's, every thread's open
// trace instances and the trace records not yet published. Caught instead
// (installed once the control thread runs): the handler only notes the
// signal (async-signal-safe), and the control thread, within one poll
// (10 ms), stops the world, waits (at most 100 ms) for the threads running
// program code to park (wait_for_running_threads_to_park), ends monitoring
// as an exit does (end_monitoring(kSignal): every thread's open instances
// measured up to then, the trace balanced and published), puts the default
// action back and sends the signal again: the process dies of it as it
// would have, a few ms later. A
// program that installs its own handler replaces this one; a forked child
// (detached) or a monitor already ended or detached takes the default
// action at once. SIGKILL, and signals whose default action is a core
// dump (SIGSEGV, SIGABRT, SIGQUIT), are left alone. When monitoring ends
// another way first, with a signal noted (the tool gone in the same poll,
// as when a script kills a tool and its program together), the control
// thread closes the slot and the process dies of that signal
// (die_of_noted_signal); a signal after that takes the default action.
constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP};
// The first one caught, monitoring ends for it; -1 once the control thread
// no longer acts on one.
std::atomic<int> g_termination_signal{0};

// The default action back (sigaction: async-signal-safe, signal() is not).
void default_action(int sig) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, nullptr);
}

void on_termination_signal(int sig) {
  const uint32_t m = g.mode.load(std::memory_order_acquire);
  int none = 0;
  if ((m == kRunning || m == kStopped) && g_termination_signal.compare_exchange_strong(none, sig)) return;
  if (none > 0) return;  // one is on its way already: the process dies of that one
  const int saved = errno;
  default_action(sig);
  raise(sig);  // delivered when the handler returns (blocked meanwhile)
  errno = saved;
}

void catch_termination_signals() {
  for (int sig : kTerminationSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
    struct sigaction action {};
    action.sa_handler = on_termination_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (int other : kTerminationSignals) sigaddset(&action.sa_mask, other);
    sigaction(sig, &action, nullptr);
  }
}

// The control thread's part: end monitoring for the signal, then die of it.
void end_for_signal(int sig) {
  {
    // The program's threads park at their next event first (bounded): as
    // at the tool's end (Command::kTerminate), their last references count.
    std::lock_guard<std::mutex> lock(g.control_mutex);
    stop_world_for_an_end();
  }
  end_monitoring(StopReason::kSignal);
  default_action(sig);
  kill(getpid(), sig);  // a program thread takes it (this one blocks every signal)
}

// The control thread is about to end without acting on a termination
// signal: from now on the handler takes the default action itself, and
// one it noted before ends the process as that action would have.
void die_of_noted_signal() {
  int noted = 0;
  if (g_termination_signal.compare_exchange_strong(noted, -1) || noted <= 0) return;
  default_action(noted);
  kill(getpid(), noted);  // a program thread takes it (this one blocks every signal)
}

void* control_main(void*) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  pthread_setname_np(pthread_self(), "mri-control");
  never_monitor_this_thread();  // exit() may run here (below): no row for this thread
  const pid_t self = gettid();
  proto::ToolControl& tc = g.view.header()->tool;
  for (uint32_t polls = 0;; ++polls) {
    const uint32_t m = g.mode.load();
    if (m == kDetached || m == kFinished) {
      die_of_noted_signal();
      return nullptr;
    }
    if (const int sig = g_termination_signal.load()) {
      end_for_signal(sig);
      return nullptr;
    }
    const uint32_t seq = sync::load(tc.cmd_seq);
    if (seq != g.last_cmd_seq) {
      g.last_cmd_seq = seq;
      handle_command(seq);
      continue;
    }
    sync::futex_wait_shared(&tc.cmd_seq, seq, kControlPollNs);
    // Every tenth poll (100 ms): a program whose threads have all ended
    // ends here, as the last of them would have ended it (atexit handlers,
    // Monitor_Final among them, then exit status 0).
    if (polls % 10 == 9 && program_threads_gone(self)) std::exit(0);
    if (!tool_is_alive()) {
      char why[96];
      std::snprintf(why, sizeof why, "tool (pid %u) is gone", g.tool_pid);
      // Before detach() wakes the parked threads: one of them could
      // otherwise reach exit() before the signal.
      die_of_noted_signal();
      detach(why);
      return nullptr;
    }
  }
}

}  // namespace

bool tool_alive() { return tool_is_alive(); }

void note_error(const char* fmt, ...) {
  if (!g.view.base) return;
  char text[proto::kMessageBytes];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  copy_message(app().last_error, text);
}

void for_each_thread(void (*fn)(ThreadState*)) {
  const uint32_t n = std::min(g.next_thread.load(), g.view.g.max_threads);
  for (uint32_t i = 0; i < n; ++i)
    if (ThreadState* ts = g.threads[i].load(std::memory_order_acquire)) fn(ts);
}

void arm_all(unsigned char value) {
  std::lock_guard<std::mutex> lock(g.registry_mutex);
  for (auto* d : g.descriptors) __atomic_store_n(&d->armed, value, __ATOMIC_RELAXED);
}

void quiesce(const ThreadState* self) {
  // Pairs with the compiler barrier (or fence) after a thread sets in_slow.
  if (g.use_membarrier)
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint32_t n = std::min(g.next_thread.load(), g.view.g.max_threads);
  const uint64_t t0 = sync::monotonic_ns();
  for (uint32_t i = 0; i < n; ++i) {
    ThreadState* ts = g.threads[i].load(std::memory_order_acquire);
    if (!ts || ts == self) continue;
    bool warned = false;
    while (ts->in_slow.load(std::memory_order_acquire)) {
      sched_yield();
      if (!warned && sync::monotonic_ns() - t0 > kQuiesceWarnNs) {
        std::fprintf(stderr, "mri-monitor: thread %u is slow to leave the monitor\n", i);
        warned = true;
      }
    }
  }
  // Every thread is outside the monitor (or is the caller): their ring heads
  // are stable, and the tool gets to see all of their records.
  if (g.view.base)
    for (uint32_t i = 0; i < n; ++i)
      if (ThreadState* ts = g.threads[i].load(std::memory_order_acquire)) trace_publish_head(ts);
}

namespace {
// Changes the status fields between an odd and an even status_seq, so the
// tool never sees a half-written status (e.g. a new ack with an old state).
template <typename Write>
void update_status(Write&& write) {
  if (!g.view.base) return;
  std::lock_guard<std::mutex> lock(g.status_mutex);
  proto::AppControl& a = app();
  const uint32_t seq = sync::load(a.status_seq, std::memory_order_relaxed);
  sync::store(a.status_seq, seq | 1u, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  write(a);
  const uint32_t dropped = g.threads_dropped.load(std::memory_order_relaxed);
  sync::store(a.threads_dropped, dropped);
  // The count alone went unnoticed: a program that starts a thread per task
  // runs out of rows after max_threads threads (rows of ended threads are
  // not reused), and its later threads' work is missing from the results.
  // Said once, when the tool first sees the count.
  if (dropped > 0 && !g.threads_dropped_noted) {
    g.threads_dropped_noted = true;
    note_error("more than %u threads (MRI_MAX_THREADS): the threads after the first %u are not monitored "
               "(rows of ended threads are not reused); threads_dropped counts them",
               g.view.g.max_threads, g.view.g.max_threads);
  }
  sync::store(a.status_seq, (seq | 1u) + 1);  // release: even again
  sync::futex_wake_shared(&a.status_seq);
}
}  // namespace

void publish_state(AppState state, StopReason reason, int32_t region, bool count_stop, int64_t ack) {
  update_status([&](proto::AppControl& a) {
    sync::store(a.stop_reason, uint32_t(reason));
    sync::store(a.stop_region, region);
    if (count_stop) sync::store(a.stops, sync::load(a.stops) + 1);
    if (ack >= 0) sync::store(a.ack_cmd_seq, uint32_t(ack));
    sync::store(a.state, uint32_t(state));
  });
}

void publish_ack(uint32_t ack) {
  update_status([&](proto::AppControl& a) { sync::store(a.ack_cmd_seq, ack); });
}

bool try_stop_world(StopReason reason, int32_t region, const ThreadState* self, int64_t ack) {
  uint32_t expected = kRunning;
  if (!g.mode.compare_exchange_strong(expected, kStopped, std::memory_order_seq_cst)) return false;
  arm_all(1);
  quiesce(self);
  publish_state(AppState::kStopped, reason, region, true, ack);
  return true;
}

// Regions may be published after the first publication (registered at
// their first execution): the plan array never moves once reserved, so
// threads reading it need no lock while one is appended.
void reserve_plans() {
  g.plans.reserve(g.view.g.max_regions);
  g.plan = g.plans.data();
  std::atomic_ref<uint32_t>(g.plan_count).store(uint32_t(g.plans.size()), std::memory_order_release);
}

bool intern(std::string_view s, uint32_t& off, uint32_t& len) {
  proto::View& v = g.view;
  if (g.string_pool_used + s.size() + 1 > v.g.string_pool_bytes) return false;
  std::memcpy(v.strings() + g.string_pool_used, s.data(), s.size());
  v.strings()[g.string_pool_used + s.size()] = '\0';
  off = g.string_pool_used;
  len = uint32_t(s.size());
  g.string_pool_used += uint32_t(s.size()) + 1;
  sync::store(app().string_pool_used, g.string_pool_used);
  return true;
}

// Publishes one descriptor: its file and region records (descriptors with
// the same type, file and line share one region). Needs registry_mutex. Returns the region
// id, or -1 when a capacity is exhausted (counted as dropped).
int32_t publish_region(Monitor_Region_Descriptor* d) {
  proto::View& v = g.view;
  // A name that does not fit is published empty, and said.
  auto intern_or_empty = [&v](const char* s, uint32_t& off, uint32_t& len) {
    const std::string_view name = s ? s : "";
    if (intern(name, off, len)) return;
    if (!name.empty())
      note_error("%u region or file name(s) published empty: the name pool (%u bytes) is full; "
                 "those regions are still measured, known by their file and line",
                 ++g.names_emptied, v.g.string_pool_bytes);
    if (name.empty() || !intern("", off, len)) off = len = 0;  // not even room for the terminator
  };
  auto drop = [d]() {
    d->id = -1;
    sync::store(app().regions_dropped, sync::load(app().regions_dropped) + 1);
    return int32_t(-1);
  };
  const std::string file = d->file ? d->file : "?";
  auto fit = g.file_ids->find(file);
  uint32_t file_id;
  if (fit == g.file_ids->end()) {
    if (g.file_ids->size() >= v.g.max_files) return drop();
    file_id = uint32_t(g.file_ids->size());
    g.file_ids->emplace(file, file_id);
    proto::FileRecord* fr = v.file(file_id);
    intern_or_empty(file.c_str(), fr->name_offset, fr->name_len);
    sync::store(app().file_count, file_id + 1);
  } else {
    file_id = fit->second;
  }
  // A region is identified by type, file and first line (MRI_Region_Spec);
  // descriptors that agree on those share one region and its first name.
  const std::string key = std::to_string(d->type) + ':' + std::to_string(file_id) + ':' + std::to_string(d->line);
  auto rit = g.region_ids->find(key);
  if (rit != g.region_ids->end()) return d->id = int(rit->second);
  if (g.region_first.size() >= v.g.max_regions) return drop();
  const uint32_t id = uint32_t(g.region_first.size());
  g.region_ids->emplace(key, id);
  g.region_first.push_back(d);
  proto::RegionRecord* r = v.region(id);
  r->type = d->type;
  r->line = d->line;
  r->file_id = file_id;
  intern_or_empty(d->name, r->name_offset, r->name_len);
  sync::store(app().region_count, id + 1);  // release: the record is complete
  return d->id = int(id);
}

void publish_once(bool at_end) {
  static std::once_flag once;
  std::call_once(once, [at_end] {
    if (g.mode.load() != kStopped || !g.view.base) return;
    std::lock_guard<std::mutex> lock(g.registry_mutex);
    timer::Calibration cal = timer::calibrate();
    g.tsc = cal.kind == timer::Kind::kTsc;
    app().ns_per_tick = cal.ns_per_tick;
    calibrate_at_start();
    sync::store(app().trace_epoch, ticks());
    sync::store(app().timer_kind, uint32_t(cal.kind));
    g.file_ids = new std::unordered_map<std::string, uint32_t>;
    g.region_ids = new std::unordered_map<std::string, uint32_t>;
    g.region_first.clear();
    // PROGRAM regions first: when the region table is too small
    // (MRI_MAX_REGIONS), the regions it cannot hold are the last ones
    // published, and a profile without its PROGRAM region has no whole
    // to give percentages of. The others in the order of their modules'
    // sections (a compiler may put a file's descriptors there in reverse
    // order of their lines: gcc does). Until 2026-11-29 a program with
    // more regions than slots lost its main, declared first.
    for (auto* d : g.descriptors)
      if (d->type == MRI_REGION_PROGRAM) publish_region(d);
    for (auto* d : g.descriptors)
      if (d->type != MRI_REGION_PROGRAM) publish_region(d);
    data_publish_pending();
    g.plans.assign(g.region_first.size(), RegionPlan{});
    reserve_plans();
    g.published = true;

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    // The thread's static TLS comes out of it too. (The cache-simulator
    // backend's buffers, 320 KiB, were in it until 2026-11-28; they are
    // mapped per thread now, instrument.cpp, and 1 MiB leaves room for
    // whatever else a program links in.)
    pthread_attr_setstacksize(&attr, 1024 * 1024);
    // Never joined: it ends by itself once the monitor is finished or
    // detached, or with the process.
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t control;
    const bool started = pthread_create(&control, &attr, control_main, nullptr) == 0;
    pthread_attr_destroy(&attr);
    if (!started) {
      refuse("cannot start the control thread", true);
      return;
    }
    catch_termination_signals();
    if (!at_end) publish_state(AppState::kStopped, StopReason::kLoaded, -1, false);
  });
}

}  // namespace mri::monitor

using namespace mri::monitor;

extern "C" {

__attribute__((constructor)) static void monitor_attach_at_start() { attach_from_environment(); }

void Monitor_Register_Regions(Monitor_Region_Descriptor* begin, Monitor_Region_Descriptor* end) {
  if (!begin || !end || begin >= end) return;
  std::unique_lock<std::mutex> lock(g.registry_mutex);
  for (const void* m : g.modules)
    if (m == begin) return;
  g.modules.push_back(begin);
  const bool gate = g.mode.load() == kStopped && !g.published;
  for (auto* d = begin; d < end; ++d) {
    if (g.published) {
      // A module loaded after the static information went out (dlopen).
      lock.unlock();
      Monitor_Register_Region(d);
      lock.lock();
      continue;
    }
    g.descriptors.push_back(d);
    if (gate) __atomic_store_n(&d->armed, 1, __ATOMIC_RELAXED);
  }
}

void Monitor_Unregister_Module(const void* address_in_module) {
  // Only an attached monitor touches descriptors after this (at a release,
  // a detach or the end). At the process's exit every module's destructors
  // come here too: after Monitor_Final they return at once; before it (the
  // program's own, here) they drop the module's descriptors (or copy them,
  // not yet published), and Monitor_Final disarms the rest (the slow paths
  // do nothing once it ran).
  const uint32_t m = g.mode.load();
  if (m != kRunning && m != kStopped) return;
  Dl_info self;
  if (!address_in_module || dladdr(address_in_module, &self) == 0) return;
  auto in_module = [&self](const void* p) {
    Dl_info info;
    return dladdr(p, &info) != 0 && info.dli_fbase == self.dli_fbase;
  };
  std::lock_guard<std::mutex> control(g.control_mutex);
  std::lock_guard<std::mutex> registry(g.registry_mutex);
  if (!g.published) {
    // Not published yet (a program that ends before its first region comes
    // here from exit()): the module's regions are published later, by the
    // first region or Monitor_Final, from copies that outlive the module.
    // Publishing here instead would stop the program in its exit path,
    // where the tool could release it and apply its requests before
    // Monitor_Final ends it: requests in place for a program that never
    // ran a region.
    for (auto*& d : g.descriptors)
      if (in_module(d)) d = lasting_descriptor(*d);
    std::erase_if(g.modules, in_module);
    return;
  }
  std::erase_if(g.descriptors, in_module);
  std::erase_if(g.modules, in_module);
  for (auto& first : g.region_first)
    if (first && in_module(first)) first = nullptr;  // only its count is used; no pointer into the module kept
}

int Monitor_Register_Region(Monitor_Region_Descriptor* d) {
  if (!d) return -1;
  // The control mutex keeps this away from a reconfiguration (which rebuilds
  // the plans) and from a detach (which unmaps the segment).
  std::lock_guard<std::mutex> control(g.control_mutex);
  return register_region_locked(d);
}

}  // extern "C"

namespace mri::monitor {

Monitor_Region_Descriptor* lasting_descriptor(const Monitor_Region_Descriptor& d) {
  auto* copy = new Monitor_Region_Descriptor(d);
  copy->name = d.name ? strdup(d.name) : nullptr;
  copy->file = d.file ? strdup(d.file) : nullptr;
  return copy;
}

// Monitor_Register_Region with g.control_mutex held by the caller.
int register_region_locked(Monitor_Region_Descriptor* d) {
  std::lock_guard<std::mutex> registry(g.registry_mutex);
  for (auto* known : g.descriptors)
    if (known == d) return d->id;
  g.descriptors.push_back(d);
  const uint32_t m = g.mode.load();
  if (!g.published) {
    // Published with the rest; armed at the gate like the others.
    if (m == kStopped) __atomic_store_n(&d->armed, 1, __ATOMIC_RELAXED);
    return -1;
  }
  if ((m != kRunning && m != kStopped) || !g.view.base) return -1;
  const int32_t id = publish_region(d);
  if (id < 0) return -1;
  if (uint32_t(id) == g.plans.size() && g.plans.size() < g.plans.capacity()) {
    // A new region: it joins the requests over every region.
    RegionPlan p;
    p.prof_begin = g.all_prof_begin;
    p.n_prof = g.all_prof_count;
    p.trace_begin = g.all_trace_begin;
    p.n_trace = g.all_trace_count;
    derive_trace_plan(p, g.traces + p.trace_begin, p.n_trace);
    p.measure = p.n_prof > 0 || p.trace_values;
    p.armed = p.measure || p.n_trace;
    bool callpath = false;
    for (uint32_t k = 0; k < p.n_prof; ++k) {
      const uint32_t slice = g.slices[p.prof_begin + k];
      if (g.slice_metric[slice].metric == uint16_t(mri::proto::Metric::kCounter)) p.counters = 1;
      callpath |= g.slice_callpath[slice];
      p.unwind |= g.slice_unwind[slice];
    }
    set_plan_overhead(p, callpath);
    g.plans.push_back(p);  // within the reserved capacity: the array does not move
    std::atomic_ref<uint32_t>(g.plan_count).store(uint32_t(g.plans.size()), std::memory_order_release);
  }
  const uint32_t count = std::atomic_ref<uint32_t>(g.plan_count).load(std::memory_order_relaxed);
  const unsigned char armed = m == kStopped ? 1 : (uint32_t(id) < count ? g.plan[id].armed : 0);
  __atomic_store_n(&d->armed, armed, __ATOMIC_RELAXED);
  return id;
}

// The end of every open instance, as at an exit: the calling thread's
// (`self`, may be null) and then every other thread's, which the caller
// has quiesced (none of them touches its frames or writes its ring until
// it parks or the process ends). Then the simulator's last results, the
// records kept aside (`wait_for_room`: the tool is given time to make room
// for them; else they are counted as discarded) and every ring head.
void end_every_instance(ThreadState* self, bool wait_for_room) {
  cache_stop_recording();  // the counts read below are of one moment
  close_open_instances(self);
  // The other threads' instances lived up to here. Measured (time,
  // simulated cache events) as if their exits ran, then in their traces.
  // Their counters cannot be read from this thread: with the generation
  // moved on, no frame's counters match and counter metrics leave these
  // instances out, as they do an instance whose events changed while it
  // was open.
  for_each_thread([](ThreadState* other) {
    // A thread parked at a stop (the world was stopped for the tool when a
    // thread called exit(), a signal came or the tool ended the program)
    // ends its instances where it parked: the stop is not the program's
    // time.
    const uint64_t parked = other->parked_since.load(std::memory_order_relaxed);
    const uint64_t now = parked ? parked : ticks();
    if (other->depth > 0) other->events_generation += 1;
    measure_open_instances(other, now);  // also instances of cache requests, which have no frame
    trace_close_open(other, now);
  });
  cache_finish();
  // The end of monitoring (4.4): records kept aside wait for the tool to
  // make room (bounded), so the tool gets them with the rest.
  for_each_thread(wait_for_room ? trace_flush_stash : trace_discard_stash);
  // The records written since the quiesce (the exits above, values), and
  // any stash moved just now, become visible before the state says the
  // end: a thread publishes its head only every 16 records.
  for_each_thread(trace_publish_head);
}

bool end_monitoring(StopReason reason) {
  std::lock_guard<std::mutex> lock(g.control_mutex);
  uint32_t m = g.mode.load();
  if (m != kRunning && m != kStopped) return false;
  if (!g.published) publish_once(true);
  g.mode.store(kFinished, std::memory_order_seq_cst);
  arm_all(0);  // under the registry lock: a module may be registering its regions
  ThreadState* ts = current_thread_state();
  quiesce(ts);
  end_every_instance(ts, true);
  if (reason == StopReason::kExec && g.view.base) sync::store(app().end_ticks, ticks());
  if (reason == StopReason::kSignal && g.view.base) sync::store(app().end_signal, uint32_t(g_termination_signal.load()));
  publish_state(AppState::kTerminated, reason, -1, false);
  mri::sync::bump(g.run_generation);
  mri::sync::futex_wake_private(&g.run_generation);
  return true;
}

}  // namespace mri::monitor

extern "C" {

void Monitor_Init(void) {
  if (g.mode.load() != kStopped || g.published) return;
  publish_once();
  // Park like any thread at the gate until the tool releases the program.
  ThreadState* ts = current_thread_state();
  if (!ts) return;
  Monitor_Region_Descriptor none{};  // a non-region: the slow path only parks
  none.id = -1;
  Monitor_Region_Enter_Slow(&none);
}

void Monitor_Final(void) { end_monitoring(StopReason::kExited); }

int Monitor_Is_Attached(void) {
  uint32_t m = g.mode.load(std::memory_order_acquire);
  return m == kRunning || m == kStopped;
}

}  // extern "C"

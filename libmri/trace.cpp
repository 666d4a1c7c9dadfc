// trace.cpp - delivery of trace records (paper section 4.4).
//
// A collector thread of this library moves records from the application's
// per-thread rings (shared memory) into the tool-side trace buffer and calls
// the tool's call-back when that buffer is half full and once at the end.
// It never takes Session::mu, so a call-back may call the MRI functions that
// do; the functions that must wait for it (MRI_Finalize, a reload,
// MRI_Application_Finish, MRI_Wait at the end) wait without holding mu.
#include "trace.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "error.h"
#include "launch.h"
#include "mri.h"
#include "mri_sync.h"
#include "row_reader.h"
#include "trace_ring.h"

namespace mri::tool {
namespace {

constexpr long kCollectorPollNs = 2'000'000;  // the collector looks at the rings at least every 2 ms

struct Trace {
  std::mutex mu;  // guards the fields below; never held while the call-back runs
  std::condition_variable changed;
  MRI_Call_Back_Function callback = nullptr;

  // The run being collected: a copy of the segment view, valid while the
  // collector runs (release_segment stops it first).
  bool running = false;
  bool finished = false;       // the application ended and the final call-back returned
  bool stop = false;           // stop now (the segment goes away)
  std::thread collector;
  proto::View view;
  std::function<bool()> application_gone;  // the session's child_exited(), its only use of the session
  double ns_per_tick = 1.0;
  uint64_t epoch = 0;

  std::vector<CollectedRecord> buffer;  // tool-side trace buffer; records from `next` on are undelivered
  size_t next = 0;
  size_t capacity = 1u << 20;
  std::vector<uint64_t> delivered, in_buffer;  // per thread
  // Per thread, for run `run` (Session::run; kept after the collector
  // stops, so that the statistics stay exact). taken: records moved out of its ring, the
  // tool's own tail (the segment's tail word is a copy for the thread; any
  // process on the segment could change it). end_head: its head at the
  // first look after the program ended, which nothing may change after
  // (kUnknownHead before). A ring found corrupt (corrupt_ring()) is not
  // read again; `lost` records were counted as discarded for it.
  std::vector<uint64_t> taken, end_head, lost;
  std::vector<uint8_t> corrupt;
  std::string problem;  // the first corrupt ring of this run, "" if none
  uint64_t run = 0;
  MRI_Trace_Element_Spec current{};
  bool in_callback = false;
  uint64_t registrations = 0;  // MRI_Register_Call_Back_Function calls, so the collector sees a new call-back

  // Settings for the next load.
  uint32_t ring_records = 1u << 16;
  uint32_t tool_records = 1u << 20;
};

Trace t;

// Runtime information of each request slot (written under Session::mu at
// placement, read by the collector's readers).
std::atomic<int> g_slot_ri[proto::kHardMaxRequests];

// The data structure of each request slot, for the records' data_structure
// (under t.mu; the name stays valid until the slot holds another request).
struct SlotData {
  bool set = false;
  MRI_Region_ID id{};
  std::string name;
};
SlotData g_slot_data[proto::kHardMaxRequests];

// With t.mu: the per-thread accounting starts anew for run `run`.
void start_accounting(uint64_t run) {
  t.run = run;
  t.delivered.clear();
  t.in_buffer.clear();
  t.taken.clear();
  t.end_head.clear();
  t.lost.clear();
  t.corrupt.clear();
  t.problem.clear();
}

// With t.mu: sizes the per-thread state for `rows` threads.
void cover_rows(uint32_t rows) {
  if (t.delivered.size() >= rows) return;
  t.delivered.resize(rows, 0);
  t.in_buffer.resize(rows, 0);
  t.taken.resize(rows, 0);
  t.end_head.resize(rows, kUnknownHead);
  t.lost.resize(rows, 0);
  t.corrupt.resize(rows, 0);
}

// With t.mu: thread th's ring holds values its thread never writes. What
// the ring can hold beyond the tail (min(head - tail, capacity); 0 for a
// head behind the tail) is counted as discarded, the ring is not read
// again in this run (its records cannot be told from garbage; a loop over
// a head of 2^62 fed the call-back without end), and the first such ring
// is reported (trace_problem()).
void corrupt_ring(uint32_t th, uint64_t head, uint64_t tail, uint64_t capacity, const char* why) {
  cover_rows(th + 1);
  if (t.corrupt[th]) return;
  t.corrupt[th] = 1;
  t.lost[th] = head > tail ? std::min(head - tail, capacity) : 0;
  if (!t.problem.empty()) return;
  char text[256];
  std::snprintf(text, sizeof text,
                "thread %u's trace ring is corrupt (%s: head %llu, tail %llu, %llu records): %llu records counted as "
                "discarded, the ring not read further",
                th, why, (unsigned long long)head, (unsigned long long)tail, (unsigned long long)capacity,
                (unsigned long long)t.lost[th]);
  t.problem = text;
}

bool ended_application() {
  if (sync::load(t.view.header()->app.state) == uint32_t(proto::AppState::kTerminated)) return true;
  return t.application_gone();
}

// Whether the application is stopped after the tool's last command (at a
// breakpoint or MRI_Stop, or still at the load): its threads are parked
// and wrote what they had before parking, so the rings only shrink. Read
// from the segment: a call-back may ask without Session::mu.
bool stopped_application() {
  const proto::Header* h = t.view.header();
  const uint32_t seq = sync::load(h->app.status_seq);
  if (seq & 1) return false;  // being written: not known to be stopped
  const bool stopped = sync::load(h->app.state) == uint32_t(proto::AppState::kStopped) &&
                       sync::load(h->app.ack_cmd_seq) == sync::load(h->tool.cmd_seq);
  return stopped && sync::load(h->app.status_seq) == seq;
}

// Moves what fits from the rings into the buffer. Returns the number of
// records moved; *rings_empty tells whether every ring is empty now (a
// corrupt one counts as empty: it is not read). `ended`: the program had
// ended before this call (its heads are final: what moves after the end
// is bounded by what the rings then held). With t.mu held (the
// collector's thread, or a tool thread taking records).
size_t collect_locked(bool ended, bool* rings_empty) {
  const proto::View& v = t.view;
  const uint32_t rows = thread_rows(v);
  const uint64_t capacity = v.g.trace_records;
  size_t moved = 0;
  bool empty = true;
  if (t.next > 0 && t.next == t.buffer.size()) {
    t.buffer.clear();
    t.next = 0;
  } else if (t.next > t.buffer.size() / 2 && t.next > 4096) {
    t.buffer.erase(t.buffer.begin(), t.buffer.begin() + ptrdiff_t(t.next));
    t.next = 0;
  }
  cover_rows(rows);
  for (uint32_t th = 0; th < rows; ++th) {
    if (t.corrupt[th]) continue;
    proto::TraceRingHead* h = v.trace_head(th);
    proto::TraceRingTail* tl = v.trace_tail(th);
    const uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
    const uint64_t tail = t.taken[th];
    const RingLook look = look_at_ring(head, tail, capacity, ended, t.end_head[th]);
    if (look != RingLook::kReadable) {
      corrupt_ring(th, head, tail, capacity, ring_look_problem(look));
      continue;
    }
    const uint64_t n = head - tail;
    const size_t room = t.capacity - (t.buffer.size() - t.next);
    const uint64_t take = copy_ring_records(v, th, tail, std::min<uint64_t>(n, room), t.buffer);
    if (take < n) empty = false;
    if (take == 0) continue;
    t.in_buffer[th] += take;
    t.taken[th] = tail + take;
    moved += size_t(take);
    __atomic_store_n(&tl->tail, tail + take, __ATOMIC_RELEASE);
    sync::bump(tl->tail_seq);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // tail before `waiting` (the thread sets them the other way)
    if (__atomic_load_n(&h->waiting, __ATOMIC_RELAXED)) sync::futex_wake_shared(&tl->tail_seq);
  }
  *rings_empty = empty;
  return moved;
}

size_t collect(bool ended, bool* rings_empty) {
  std::lock_guard<std::mutex> lock(t.mu);
  return collect_locked(ended, rings_empty);
}

void run_callback(MRI_Call_Back_Function cb) {
  {
    std::lock_guard<std::mutex> lock(t.mu);
    t.in_callback = true;
  }
  cb();
  std::lock_guard<std::mutex> lock(t.mu);
  t.in_callback = false;
  t.changed.notify_all();  // MRI_Register_Call_Back_Function may wait for this
}

// With t.mu held: whether this thread is the collector's, inside the
// call-back (the only way it calls into the API).
bool in_callback_here() { return t.in_callback && t.collector.get_id() == std::this_thread::get_id(); }

// Runs until trace_stop_collector(). The run is `finished` once the
// application ended and the rings are empty (or nothing can move any more:
// the buffer is full and the call-back takes nothing), and the call-back,
// if any, was called on what remained.
void collector_main() {
  uint32_t* signal = &t.view.header()->app.trace_signal;
  // A call-back that took nothing is not called again on the same records
  // until it is registered again, the buffer changes (new records, or a
  // tool thread took some) or the application ends: the final call-back is
  // one call, not one every poll.
  size_t declined_at = 0;
  uint64_t declined_by = ~uint64_t(0);
  bool declined_ended = false;
  for (;;) {
    const uint32_t seq = sync::load(*signal);
    const bool ended = ended_application();  // before collecting: what it wrote before ending is in the rings
    bool rings_empty = true;
    const size_t moved = collect(ended, &rings_empty);
    MRI_Call_Back_Function cb;
    size_t buffered;
    uint64_t registration;
    bool stop;
    {
      std::lock_guard<std::mutex> lock(t.mu);
      cb = t.callback;
      buffered = t.buffer.size() - t.next;
      registration = t.registrations;
      stop = t.stop;
    }
    if (stop) {
      if (cb && buffered) run_callback(cb);
      return;
    }
    const bool declined = registration == declined_by && buffered == declined_at && ended == declined_ended;
    bool took = false;
    if (cb && buffered && !declined && (buffered >= t.capacity / 2 || ended)) {
      run_callback(cb);
      std::lock_guard<std::mutex> lock(t.mu);
      const size_t left = t.buffer.size() - t.next;
      took = left < buffered;
      if (!took) {
        declined_at = left;
        declined_by = registration;
        declined_ended = ended;
      }
    }
    if (took) continue;
    if (ended && (rings_empty || moved == 0)) {
      std::lock_guard<std::mutex> lock(t.mu);
      if (!t.finished) {
        t.finished = true;
        t.changed.notify_all();
      }
    }
    if (moved == 0) sync::futex_wait_shared(signal, seq, kCollectorPollNs);
  }
}

// Record r in the API's form, with its request record's meaning.
void fill(const CollectedRecord& r, MRI_Trace_Element_Spec& out) {
  RecordMeaning meaning;
  if (r.request < proto::kHardMaxRequests) {
    meaning.ri = g_slot_ri[r.request].load(std::memory_order_relaxed);
    const SlotData& d = g_slot_data[r.request];
    if (d.set) {
      meaning.data_id = d.id;
      meaning.data_name = d.name.c_str();
    }
  }
  decode_trace_record(t.view, r, meaning, t.epoch, t.ns_per_tick, out);
}

// Delivers up to max records, with t.mu held. After the application
// ended, when the buffer runs empty, what the rings still hold is moved in
// first: when the buffer was full as the application ended, MRI_Wait()
// returns with records left in the rings (nothing more could move), and a
// tool that took until nothing came would have left them there. The same
// while it is stopped: the collector moves records only every 2 ms, so a
// tool that took records as soon as MRI_Wait() returned at a breakpoint
// would have found none of the records written before it. (Not while it
// runs: a call-back that takes until nothing comes must return.)
int take_records(MRI_Trace_Element_Spec* out, int max) {
  int n = 0;
  bool refilled = false;
  while (n < max) {
    if (t.next == t.buffer.size()) {
      if (refilled || !t.running || !t.view.base) break;
      const bool ended = ended_application();
      if (!ended && !stopped_application()) break;
      bool rings_empty = true;
      refilled = true;
      if (collect_locked(ended, &rings_empty) == 0) break;
    }
    const CollectedRecord& r = t.buffer[t.next++];
    fill(r, out[n++]);
    t.delivered[r.thread] += 1;
    t.in_buffer[r.thread] -= 1;
  }
  return n;
}

}  // namespace

void trace_note_slot(int slot, int ri, const MRI_Data_Structure_Spec* data) {
  if (slot < 0 || slot >= int(proto::kHardMaxRequests)) return;
  g_slot_ri[slot].store(ri, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(t.mu);
  SlotData& d = g_slot_data[slot];
  d.set = data != nullptr;
  d.id = data ? data->id : MRI_Region_ID{};
  d.name = data && data->name ? data->name : "";
}

// Needs Session::mu (the segment stays). Reads the rings between the
// tool's tail and the threads' heads, which the threads no longer write.
bool trace_slot_has_records(int slot) {
  std::lock_guard<std::mutex> lock(t.mu);
  if (!t.running || !t.view.base) return false;
  for (size_t i = t.next; i < t.buffer.size(); ++i)
    if (t.buffer[i].request == slot) return true;
  const proto::View& v = t.view;
  const uint32_t rows = thread_rows(v);
  cover_rows(rows);
  for (uint32_t th = 0; th < rows; ++th) {
    if (t.corrupt[th]) continue;  // never delivered (corrupt_ring())
    const uint64_t head = __atomic_load_n(&v.trace_head(th)->head, __ATOMIC_ACQUIRE);
    if (ring_holds_request(v, th, t.taken[th], head, slot)) return true;  // false for an implausible head
  }
  return false;
}

void trace_settings(uint32_t& ring_records, uint32_t& tool_records) {
  std::lock_guard<std::mutex> lock(t.mu);
  ring_records = t.ring_records;
  tool_records = t.tool_records;
}

void trace_start_collector(Session& s) {
  std::lock_guard<std::mutex> lock(t.mu);
  if (t.running || !s.view.base) return;
  t.view = s.view;
  t.application_gone = [&s] { return child_exited(s); };
  t.ns_per_tick = s.ns_per_tick;
  t.epoch = sync::load(s.view.header()->app.trace_epoch);
  t.buffer.clear();
  t.buffer.reserve(std::min<size_t>(t.tool_records, 1u << 16));
  t.next = 0;
  t.capacity = std::max<size_t>(t.tool_records, s.view.g.trace_records);
  start_accounting(s.run);
  cover_rows(s.view.g.max_threads);
  t.finished = false;
  t.stop = false;
  t.running = true;
  t.collector = std::thread(collector_main);
}

// Waits until the collector finished the run (the application ended, the
// final call-back returned), at most timeout_ms (-1: no limit). Must be
// called without Session::mu. True when finished or not running.
bool trace_await_end(int timeout_ms) {
  std::unique_lock<std::mutex> lock(t.mu);
  if (!t.running) return true;
  if (in_callback_here()) return false;  // from the call-back itself
  auto done = [] { return t.finished; };
  if (timeout_ms < 0) {
    t.changed.wait(lock, done);
    return true;
  }
  return t.changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), done);
}

// Stops the collector before the segment goes away: it collects what the
// rings hold and runs the final call-back first. Without Session::mu.
void trace_stop_collector() {
  std::thread collector;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    if (!t.running) return;
    if (t.collector.get_id() == std::this_thread::get_id()) return;  // called from the call-back: refused by the API
    t.stop = true;
    collector = std::move(t.collector);
  }
  sync::futex_wake_shared(&t.view.header()->app.trace_signal);
  collector.join();
  std::lock_guard<std::mutex> lock(t.mu);
  t.running = false;
  t.buffer.clear();  // the records left in it are still counted as buffered (in_buffer)
  t.next = 0;
}

std::string trace_problem(uint64_t run) {
  std::lock_guard<std::mutex> lock(t.mu);
  return t.run == run ? t.problem : std::string();
}

// MRI_Finalize: the session's call-back ends with it (after the final
// call-back on what was left, trace_stop_collector). Without Session::mu.
void trace_forget_callback() {
  std::lock_guard<std::mutex> lock(t.mu);
  t.callback = nullptr;
  ++t.registrations;
}

bool trace_in_callback() {
  std::lock_guard<std::mutex> lock(t.mu);
  return in_callback_here();
}

void trace_register_callback(MRI_Call_Back_Function function) {
  std::unique_lock<std::mutex> lock(t.mu);
  t.callback = function;
  ++t.registrations;
  // A call-back running now returns before this does (unless this is it):
  // the tool may then free what the old one used.
  if (!in_callback_here()) t.changed.wait(lock, [] { return !t.in_callback; });
}

MRI_Trace_Element_Spec* trace_take_record() {
  std::lock_guard<std::mutex> lock(t.mu);
  if (take_records(&t.current, 1) == 0) return nullptr;
  return &t.current;
}

int trace_take_records(MRI_Trace_Element_Spec* out, int max) {
  std::lock_guard<std::mutex> lock(t.mu);
  return take_records(out, max);
}

int trace_set_buffer_size(uint32_t ring_records, uint32_t tool_records) {
  std::lock_guard<std::mutex> lock(t.mu);
  const uint32_t ring = ring_records ? ring_records : t.ring_records;
  const uint32_t tool = tool_records ? tool_records : t.tool_records;
  if (tool < ring) return fail("the tool-side buffer (%u records) must hold at least one ring (%u records)", tool, ring);
  t.ring_records = ring;
  t.tool_records = tool;
  clear_error();
  return MRI_OK;
}

int trace_statistics(const proto::View& v, uint64_t run, uint32_t th, double ns_per_tick,
                     MRI_Trace_Statistics* stats) {
  std::lock_guard<std::mutex> lock(t.mu);
  const proto::TraceRingHead* h = v.trace_head(th);
  const uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
  const uint64_t app_discarded = __atomic_load_n(&h->discarded, __ATOMIC_ACQUIRE);
  if (t.run != run) start_accounting(run);  // no trace request in this run yet: nothing taken
  cover_rows(th + 1);
  const uint64_t tail = t.taken[th];  // = delivered + in the tool-side buffer
  if (!t.corrupt[th] && !plausible_head(head, tail, v.g.trace_records))
    corrupt_ring(th, head, tail, v.g.trace_records,
                 head < tail ? "its head is behind the tail" : "its head is beyond the ring");
  const uint64_t in_ring = t.corrupt[th] ? 0 : head - tail;
  const uint64_t lost = t.corrupt[th] ? t.lost[th] : 0;  // a corrupt ring's records: discarded
  std::memset(stats, 0, sizeof *stats);
  stats->emitted = tail + in_ring + lost + app_discarded;
  stats->discarded = app_discarded + lost;
  stats->delivered = t.delivered[th];
  stats->buffered = in_ring + t.in_buffer[th];
  stats->waits = __atomic_load_n(&h->waits, __ATOMIC_RELAXED);
  stats->wait_ns = double(__atomic_load_n(&h->wait_ticks, __ATOMIC_RELAXED)) * ns_per_tick;
  clear_error();
  return MRI_OK;
}

}  // namespace mri::tool

// monitor_internal.h - state shared by the files of libmonitor (the MCC).
// Measurement sources outside the core see none of it: they use
// sdk/services.h, which the core implements (source_services.cpp).
//
// Concurrency model (docs/architecture.md has the long form):
//  * `g.mode` says what every application thread must do at a monitored event.
//    Threads read it in the slow path only.
//  * A thread in the slow path sets its own `in_slow` flag first. Whoever
//    changes the mode away from kRunning (a thread at a breakpoint, the
//    control thread, Monitor_Final) then waits until no other thread has
//    `in_slow` set: afterwards no thread touches results until the mode is
//    kRunning again. This is an asymmetric Dekker handshake: the changer
//    issues membarrier(PRIVATE_EXPEDITED), so the threads' side needs only a
//    compiler barrier (a full fence where membarrier is unavailable).
//  * Request plans are rebuilt only by the control thread, only while every
//    thread is quiescent; the release store of kRunning publishes them.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <x86intrin.h>

#include "mri_monitor.h"
#include "mri_protocol.h"
#include "clock.h"
#include "results.h"
#include "services.h"
#include "source.h"

namespace mri::monitor {

enum Mode : uint32_t {
  kDormant = 0,   // no tool: annotations are never armed
  kStopped = 1,   // attached; threads park at their next monitored event
  kRunning = 2,   // attached and released
  kDetached = 3,  // tool gone or segment refused: behave as dormant forever
  kFinished = 4,  // Monitor_Final ran
};

inline constexpr uint32_t kMaxDepth = 256;  // monitored frames per thread
inline constexpr int32_t kHiddenRegion = -2;  // a frame's region while instances beyond the stack are open
// Trace records a thread keeps aside when its ring is full while the world
// stops (a stop, the end): at most one event's records, 2 per trace request.
inline constexpr uint32_t kStashRecords = 2 * proto::kMaxTraceRequests;

// The readings of a frame (kReading sources: counters) live in
// ThreadState::frame_readings (same index): the time-only path touches
// only these 48 bytes.
struct Frame {
  int32_t region;
  uint16_t profiled;  // the region carries a profile request: parent's exclusive excludes it
  uint16_t unwound;   // 1: ThreadState::unwound[this index] holds this instance's unannotated callers
  uint64_t start;     // ticks at enter, shifted by the time spent parked since
  uint64_t child;     // ticks spent in profiled subregions
  // Overhead compensation: the thread's overhead clock at enter (fixed
  // point, kOverheadFracBits; what monitored descendants add to this
  // instance is the clock's advance until the exit), and the overhead
  // inside the profiled children (ticks; their compensated inclusive times
  // sum to child - this, which may be negative).
  uint64_t overhead_mark;
  uint64_t child_overhead;
  // Reading list of frame_readings[this index] (0: not read). Written only
  // when the frame reads; a stale value can never match at the exit,
  // because a release that changes which regions read starts a new list.
  uint32_t readings_generation;
  // ThreadState::profiled_exits at enter: the profiled instances that end
  // before this one's exit are nested in it (instance profiles count them).
  uint32_t instance_mark;
};
static_assert(sizeof(Frame) == 48);

// Callpath profiles with unwinding (unwind.cpp): the function the region's
// enter was in, and the functions without annotations between the
// enclosing profiled region and this instance, as region ids (outermost
// first).
inline constexpr uint32_t kMaxUnwound = 8;
struct UnwoundFrame {
  uint64_t function;  // start address of the function holding the enter; 0: unknown
  uint32_t n;
  int32_t chain[kMaxUnwound];
};

struct FrameReadings {
  int64_t at_enter[kMaxReadings];  // the readings at enter
  int64_t child[kMaxReadings];     // their increase in profiled subregions
};

struct alignas(64) ThreadState {
  std::atomic<uint32_t> in_slow{0};
  uint32_t index = 0;    // row in the segment
  uint32_t depth = 0;    // frames in use
  uint32_t overflow = 0; // enters not pushed because the stack was full
  // While overflow > 0: the top frame's region, which the frame holds as
  // kHiddenRegion meanwhile so that no exit matches it on the fast path
  // (the innermost exits are those of the instances beyond the stack).
  int32_t hidden_region = 0;
  // Non-zero: row not yet published, parked time to shift out, or the
  // reading list changed. Set by the control thread too, hence atomic
  // (relaxed: a plain load on the hot path).
  std::atomic<uint32_t> fixup{1};
  uint64_t parked_ticks = 0;  // ticks parked, not yet shifted out of open frames
  // When the thread parked at a stop, until its frames were shifted after
  // it (0: not parked): an end of monitoring that finds it parked ends its
  // open instances there, not counting the stop. Atomic: read by the
  // thread that ends monitoring.
  std::atomic<uint64_t> parked_since{0};
  uint64_t shifted = 0;       // ticks the open frames were just shifted by (an exit shifts its timestamp too)
  // The release (Global::releases) in which an exit of the breakpoint
  // region without a frame ended the breakpoint on this thread: once per
  // thread and release (Monitor_Region_Exit_Slow).
  uint32_t breakpoint_unmatched = 0;
  proto::ThreadRecord* record = nullptr;
  uint32_t* seq = nullptr;  // the sequence word over this thread's result slots
  proto::AggregateSlot* agg_row = nullptr;  // this thread's aggregate slots [request]
  // The monitor's overhead this thread has spent in measured instances so
  // far (fixed point, kOverheadFracBits): advanced at every measured exit.
  // Atomic (relaxed: plain moves on x86): the thread also advances it
  // outside the monitor (simulating its references before an exit, the
  // wait at a join), while an end of monitoring may be ending its open
  // instances from another thread.
  std::atomic<uint64_t> overhead_clock{0};
  // The fraction of a tick of own overhead not yet given to an instance
  // (fixed point, below one tick): each instance gets the whole ticks of
  // its own part plus this carry, so that the sum over instances is exact.
  uint64_t own_carry = 0;
  uint32_t profiled_exits = 0;  // instances of profiled regions ended so far (mod 2^32)
  // This thread's profile and callpath rows, per slice ([region], [edge]).
  // Set when the thread is published; the start-up calibration points its
  // own state at private memory instead.
  proto::ProfileSlot* profile_rows[proto::kHardMaxProfileSlices] = {};
  proto::EdgeSlot* edge_rows[proto::kHardMaxProfileSlices] = {};
  bool calibrating = false;  // overhead calibration's own state: never parks
  std::vector<uint32_t> open;  // per region: open profiled instances (recursion)
  // Each source's state for this thread (kReading sources: prepared for
  // the list of readings_generation by prepare_thread; readings_ready when
  // every reading source prepared it).
  void* source_state[kMaxSources] = {};
  uint32_t readings_generation = 0;
  bool readings_ready = false;
  // Trace ring (trace.cpp). The thread appends at trace_head while it is
  // below trace_limit without reading the tool's tail; equality sends it to
  // the slow path (ring full, or records stashed).
  uint64_t trace_head = 0;
  uint64_t trace_limit = 0;
  proto::TraceRecord* ring = nullptr;
  uint64_t ring_mask = 0;
  proto::TraceRingHead* ring_head = nullptr;
  proto::TraceRingTail* ring_tail = nullptr;
  uint32_t trace_inside[proto::kMaxTraceRequests] = {};  // open instances of each trace request's regions
  // The REGION_EVENT enters this thread wrote whose exit record is not
  // written yet, oldest first, as (request << 32) | region. The depth
  // counts those beyond the array too (not kept). Their exit records are
  // written, marked kTraceExitSynthetic, when the thread ends, at the end
  // of monitoring, or when an enclosing instance of the same request exits
  // first (trace_close_open, hot_path.cpp), so that every enter the tool
  // gets has its exit.
  uint32_t trace_open_depth = 0;
  uint64_t trace_open[kMaxDepth];
  // Callpath profiles: (caller, callee) -> edge index, open addressing;
  // allocated at the thread's first callpath instance.
  uint64_t* edge_keys = nullptr;  // 0: empty; else ((caller + 2) << 32) | callee
  uint32_t* edge_values = nullptr;
  uint32_t edge_mask = 0;
  uint32_t edges_used = 0;
  bool edges_full_noted = false;
  bool depth_full_noted = false;  // the first instance beyond kMaxDepth is in monitor_message
  uint32_t stashed = 0;
  bool trace_gave_up = false;  // waited the whole bound once: discard until the tool makes room
  proto::TraceRecord stash[kStashRecords];
  Frame frames[kMaxDepth];
  FrameReadings frame_readings[kMaxDepth];
  // Unwinding (unwind.cpp), allocated at the thread's first unwound enter:
  // per frame index, and this thread's return address -> function cache.
  UnwoundFrame* unwound = nullptr;
  void* unwind_cache = nullptr;
};

// One aggregate request attached to a region.
struct AggTarget {
  uint32_t request;
  uint8_t kind;        // ValueKind (kTime, kCount or kReading)
  uint8_t compensate;  // 0: not compensable or switched off by the request (comp_ values = raw)
  uint16_t reading;    // kReading: index in the frame's readings
};
static_assert(sizeof(AggTarget) == 8);

// One trace request attached to a region.
struct TraceTarget {
  uint16_t request;
  uint8_t slot;    // index into ThreadState::trace_inside
  uint8_t root;    // a requested region; otherwise traced only inside an instance of one
  uint16_t kind;     // ValueKind (kEvent: records at enter and exit; else a value record per instance)
  uint16_t reading;  // kReading: index in the frame's readings
  const uint64_t* threads;  // mask of traced thread indices; nullptr: all
};

// What the MCC does at one region, rebuilt at each release.
struct RegionPlan {
  uint32_t trace_begin = 0; // into Global::plan_traces
  uint16_t n_trace = 0;
  uint8_t trace_values = 0; // some trace target records a measured value (needs a frame)
  // The common trace: one REGION_EVENT target of a requested region, all
  // threads. Its records are written without the general loop.
  uint8_t trace_simple = 0;
  uint32_t agg_begin = 0;   // into Global::plan_aggs
  uint16_t n_agg = 0;
  uint16_t n_prof = 0;
  uint32_t prof_begin = 0;  // into Global::plan_slices
  uint8_t measure = 0;      // push a frame at enter
  uint8_t armed = 0;
  uint8_t readings = 0;     // take the thread's readings at enter and exit (kReading sources)
  // The monitor's overhead per instance of this region (fixed point,
  // kOverheadFracBits; from the calibration of the region's kind): inside
  // its own measured interval, and added to every enclosing instance.
  uint32_t overhead_own = 0;
  uint32_t overhead_pair = 0;
  uint8_t hooks = 0;        // bit i: source(i) measures requests here itself (its enter and exit)
  uint8_t unwind = 0;       // a callpath slice unwinds the stack at enter (unwind.cpp)
  // Frames began at this release (not the first): an instance open now was
  // entered without one, and its exit finds none (Monitor_Region_Exit_Slow).
  uint8_t measure_new = 0;
};

struct Global {
  // Hot: read on every monitored event; kept together in the first lines.
  std::atomic<uint32_t> mode{kDormant};
  bool use_membarrier = false;
  bool tsc = false;  // the clock is rdtsc (kept here: same cache line as the mode)
  // Bit i: source(i) wants its before_event() at every monitored enter and
  // exit (the cache simulator while it records references;
  // set_before_event). Read before an exit's gate, hence atomic (relaxed).
  std::atomic<uint8_t> before_event_sources{0};
  int32_t breakpoint = -1;
  uint32_t plan_count = 0;
  const RegionPlan* plan = nullptr;
  const AggTarget* aggs = nullptr;
  const uint32_t* slices = nullptr;
  const TraceTarget* traces = nullptr;

  uint32_t run_generation = 0;  // private futex word: parked threads wait on it
  uint32_t releases = 0;        // run commands applied (1: the release after the load)

  // Segment.
  proto::View view;
  int shmid = -1;
  int tool_pidfd = -1;
  // The pidfd's inode: the program may close the descriptor and reuse its
  // number (tool_is_alive()).
  uint64_t tool_pidfd_dev = 0, tool_pidfd_ino = 0;
  uint32_t tool_pid = 0;
  uint32_t own_pid = 0;  // the pid that attached: a vfork()ed child shares this memory, not the pid (exec.cpp)
  bool published = false;

  // Regions: every registered descriptor and the published region of each.
  std::mutex registry_mutex;
  std::vector<Monitor_Region_Descriptor*> descriptors;
  std::vector<const Monitor_Region_Descriptor*> region_first;  // one per region id
  std::vector<const void*> modules;
  // Published names -> ids (allocated at publication; Global stays constinit).
  std::unordered_map<std::string, uint32_t>* file_ids = nullptr;
  std::unordered_map<std::string, uint32_t>* region_ids = nullptr;
  uint32_t string_pool_used = 0;
  uint32_t names_emptied = 0;  // region and file names that found the pool full (published empty)

  // Threads: index -> state; states live until exit (the quiescing thread
  // may look at them at any time).
  std::atomic<uint32_t> next_thread{0};
  std::atomic<uint32_t> threads_dropped{0};  // published with the status
  bool threads_dropped_noted = false;        // last_error said so (under status_mutex)
  std::atomic<ThreadState*>* threads = nullptr;  // [max_threads]
  pthread_key_t thread_key{};

  // Plans (read by application threads in the slow path while kRunning).
  // The vectors own the storage; the hot path reads the raw pointers.
  std::vector<RegionPlan> plans;
  std::vector<AggTarget> plan_aggs;
  std::vector<uint32_t> plan_slices;  // profile slice indices
  std::vector<TraceTarget> plan_traces;
  // Thread masks of trace requests with active objects (copied from the
  // segment at each release: the tool may rewrite its rows any time).
  uint64_t trace_threads[proto::kMaxTraceRequests][proto::kThreadMaskWords]{};
  uint64_t trace_wait_ns = 10'000'000'000ull;  // bound on a wait for ring room
  // What each profile slice measures (indexed by slice; `request` unused).
  AggTarget slice_value[proto::kHardMaxProfileSlices]{};
  bool slice_callpath[proto::kHardMaxProfileSlices]{};  // the slice's request keeps the calling context
  bool slice_compensate[proto::kHardMaxProfileSlices]{};  // the slice's request wants compensated values
  bool slice_unwind[proto::kHardMaxProfileSlices]{};  // the slice's request finds unannotated callers
  // Functions found by unwinding -> their MRI_REGION_FUNCTION region id
  // (under unwind_mutex; allocated at the first one).
  std::mutex unwind_mutex;
  std::unordered_map<uint64_t, int32_t>* function_regions = nullptr;
  // Calibrated overhead per kind (compensation.cpp), fixed point.
  uint32_t overhead_own[proto::kOverheadKinds]{};
  uint32_t overhead_pair[proto::kOverheadKinds]{};
  // Readings of the current plans (kReading sources): each reading source
  // with readings in this release gives `count` of them from index `base`
  // of a frame's readings. A thread takes all of them at the regions that
  // read. A new list gets a new generation, and each thread prepares its
  // reading sources again at its next monitored event.
  struct Reader {
    uint8_t source;
    uint8_t base;
    uint8_t count;
  };
  Reader readers[kMaxSources]{};
  uint32_t n_readers = 0;
  uint32_t reading_count = 0;
  std::vector<std::string> reading_list;  // every reading's name, in reading order
  uint32_t readings_generation = 1;

  // Profile slices of the requests over every region: the plan of a region
  // published after the last release (registered at its first execution).
  uint32_t all_prof_begin = 0;
  uint16_t all_prof_count = 0;
  uint32_t all_trace_begin = 0;  // trace targets of a region published late
  uint16_t all_trace_count = 0;

  // Control.
  std::mutex control_mutex;  // serialises mode transitions of the control thread and Monitor_Final
  std::mutex status_mutex;   // one writer of the AppControl status at a time (process-local)
  uint32_t last_cmd_seq = 0;
};

// Never destroyed: the control thread and exit handlers may use it while the
// process runs its static destructors.
union GlobalStorage {
  Global value;
  constexpr GlobalStorage() : value() {}
  ~GlobalStorage() {}
};
extern GlobalStorage g_storage;
inline Global& g = g_storage.value;

// attach.cpp
// Attaches to the segment the environment names (a constructor, before
// main()); the program runs unmonitored on any problem.
void attach_from_environment();
// Refuses the segment: says why (in the segment too when `header_writable`),
// then behaves as dormant.
void refuse(const char* why, bool header_writable);
// Whether the tool process still lives (its pidfd, else the segment's
// attach count).
bool tool_is_alive();
// The tool is gone: every region disarmed, the threads out of the monitor
// and woken, the segment unmapped; the program runs on unmonitored.
void detach(const char* why);

// control.cpp
// Starts the mri-control thread (detached); false when it cannot.
bool start_control_thread();
// Installs the handler of SIGINT, SIGTERM and SIGHUP where the program left
// them at their default action (the end of monitoring for a signal).
void catch_termination_signals();
// The termination signal the monitor caught and ends monitoring for, 0
// when none (-1 once the control thread no longer acts on one).
int noted_termination_signal();

// end.cpp
// Set when the tool ends the program (Command::kTerminate), before the
// world is quiesced: a thread that ends after that leaves its frames to
// the control thread, which is ending them.
extern std::atomic<bool> g_ending;
// The destructor of a thread's pthread key: the end of a monitored thread.
void thread_exit(void* state);

// world.cpp
// The world stopped for an end that does not come from a program thread
// (the tool's terminate, a termination signal): every region armed, the
// threads running program code parked or waited for (bounded). Needs
// control_mutex.
void stop_world_for_an_end();

// proc_threads.cpp
// The state letter of thread `tid` of this process ('R', 'S', 'Z', ...), 0
// when it cannot be read.
char task_state(pid_t tid);
// Whether every thread of the program has ended and only the monitor's own
// keep the process alive.
bool program_threads_gone(pid_t control_tid);
// The CPU time thread `tid` of this process has used (ns), 0 when unknown.
uint64_t thread_cpu_ns(pid_t tid);

// status.cpp
void copy_message(char (&dst)[proto::kMessageBytes], const char* text);

// registry.cpp
// The static information, the calibration and the control thread, once.
// `at_end`: monitoring ends right after (exit(), exec() or a signal before
// the first region): the program does not announce a loaded stop it will
// never hold, and the tool sees it terminated as soon as it looks.
void publish_once(bool at_end = false);
void publish_state(proto::AppState state, proto::StopReason reason, int32_t region,
                   bool count_stop, int64_t ack = -1);
void publish_ack(uint32_t ack);
void arm_all(unsigned char value);
void for_each_thread(void (*fn)(ThreadState*));  // every registered thread's state
void quiesce(const ThreadState* self);
bool try_stop_world(proto::StopReason reason, int32_t region, const ThreadState* self, int64_t ack = -1);
// The end of monitoring, as Monitor_Final at exit (`reason` kExited) or
// before an exec() (kExec, exec.cpp): the calling thread's open instances
// end now, every trace record is published, the state becomes terminated.
// False when monitoring was not on (dormant, detached, already ended).
bool end_monitoring(proto::StopReason reason);
// Its middle part, also the tool's end of the program (end.cpp).
void end_every_instance(ThreadState* self, bool wait_for_room);

// Appends `s` to the segment's string pool (needs registry_mutex); false
// when it does not fit.
bool intern(std::string_view s, uint32_t& off, uint32_t& len);
int32_t publish_region(Monitor_Region_Descriptor* d);
// A copy of `d` with its own name and file, for a descriptor the monitor
// keeps for the process's life (a region found by unwinding, a module's
// region not yet published when the module went away).
Monitor_Region_Descriptor* lasting_descriptor(const Monitor_Region_Descriptor& d);
// Monitor_Register_Region with g.control_mutex held by the caller.
int register_region_locked(Monitor_Region_Descriptor* d);
void reserve_plans();

// Unwinding for callpath profiles (unwind.cpp). unwind_enter fills
// ts->unwound[index] for the frame just pushed for a region of `type`
// (inside the slow path). unwind_available: false in a build without
// libunwind.
bool unwind_available();
__attribute__((noinline)) void unwind_enter(ThreadState* ts, uint32_t type, uint32_t index);

// The monitor's clock in ticks (rdtsc when calibration chose it),
// decided by a flag on the hot cache line.
inline uint64_t ticks() { return __builtin_expect(g.tsc, 1) ? __rdtsc() : clock::monotonic_ticks(); }

// hot_path.cpp
// Ends the thread's open instances at the end of monitoring (hot_path.cpp).
void close_open_instances(ThreadState* ts);
// Ends a thread's measured instances still open at `now`, innermost
// first, as if their exits ran (profiles, aggregates, the instances the
// sources keep open themselves, with their value records, no other trace
// records): the calling thread's at its end and at the end of monitoring,
// then every other thread's, quiescent. The caller is inside the monitor
// (in_slow set). own_thread: `ts` is the calling thread (a source may
// first count what the thread has recorded but not handed over).
void measure_open_instances(ThreadState* ts, uint64_t now, bool own_thread = false);

// sources.cpp: the lifecycle members of source.h, called on every source
// that has them (see there for what each promises).
void sources_stop_recording();
void sources_finish();
void sources_after_fork();
void sources_publish();
uint32_t sources_busy();
bool sources_own_thread(pid_t tid);
void sources_threads_not_waited_for(uint32_t late, uint32_t passed, uint32_t gave_up_after_ms, uint32_t quiet_ms);
void sources_data_ended(uint32_t record);
void sources_sync_thread();

// data.cpp (needs registry_mutex held; data_records() is in services.h)
// At the first publication: the data structures registered so far.
void data_publish_pending();

// readings.cpp
// The calling thread (the owner of `ts`) prepares its reading sources for
// the current reading list; false when one cannot (counted in
// AppControl::counter_errors and said in last_error; with `why`, only said
// there: the overhead calibration's private state).
bool prepare_thread_readings(ThreadState* ts, std::string* why = nullptr);
// All of the thread's readings, in reading order, into out[0 ..
// g.reading_count); false when one cannot be read now.
bool take_readings(ThreadState* ts, int64_t* out);
// The thread is done with its reading sources (its end).
void release_thread_readings(ThreadState* ts);
// Writes the exit records (kTraceExitSynthetic, at `now`) of the thread's
// traced instances still open, innermost first: at the thread's end, by
// the thread; at the end of monitoring, for every thread while they are
// quiescent (hot_path.cpp).
void trace_close_open(ThreadState* ts, uint64_t now);
// At a release (control thread, threads quiescent): forgets the open
// traced instances of the request slots `keep` does not mark (requests
// deleted or replaced: their exits are not theirs to write).
void trace_forget_open(ThreadState* ts, const std::vector<uint8_t>& keep);
// The calling thread's overhead clock (fixed point), also before its
// first event, and adding to it (threads.cpp).
uint64_t thread_overhead_clock();
void add_thread_overhead(uint64_t fixed);
// threads.cpp: the overhead clock of a thread the monitor has no state
// for yet (its creator's clock, grown at joins): read it, add to it, and
// take it into a new state (register_thread); a thread's end
// (thread_exit), for its joiner.
uint64_t overhead_clock_before_state();
void add_overhead_before_state(uint64_t fixed);
uint64_t initial_overhead_clock();
void thread_ended(const ThreadState* ts);
// Makes `ts` the calling thread's monitor state; returns the previous one
// (overhead calibration runs the real slow paths on a private state).
ThreadState* swap_thread_state(ThreadState* ts);
// The calling thread (one of the monitor's own) is never monitored: it
// gets no ThreadState, no row in the results.
void never_monitor_this_thread();

// compensation.cpp
// At start-up (in publish_once, before the control thread exists and while
// no other thread can be in the monitor): measures the timer and callpath
// kinds through the real slow paths and publishes them.
void calibrate_at_start();
// At the first release (control thread, world stopped): the same two
// experiments again; each value published becomes the smaller of the two
// measurements, so a slow spell of the machine during one of them (a few
// milliseconds) no longer inflates every compensated value of the run.
void confirm_time_calibration();
// At a release whose requests take readings (control thread, application
// threads quiescent, Global::readers in place): measures the counter kind
// for the current reading list, unless it was already measured for it.
void calibrate_readings(const std::vector<std::string>& readings);
// At every release, after the calibrations above (control thread): the
// values a tool set in place of a kind's measurement (MRI_Set_Overhead)
// take effect, and a kind the tool cleared goes back to its measurement.
// The values reach regions through set_plan_overhead.
void apply_tool_overhead();
// Sets the overhead fields of a region's plan from its kind.
void set_plan_overhead(RegionPlan& p, bool callpath);

// trace.cpp
void trace_attach_thread(ThreadState* ts);
// Appends when the ring is full or records are stashed. Never fails: a
// record it cannot keep is counted as discarded.
void trace_append_slow(ThreadState* ts, const proto::TraceRecord& rec);
// At the owning thread's first event after a stop interrupted its wait
// for room (enter_monitor_slow, in_slow set, the mode kRunning): moves its
// stashed records into the ring, waiting for room within the bound (then,
// or once the tool is gone, the rest are counted as discarded). False when
// the world is being stopped again: the thread parks and tries again.
bool trace_drain_stash(ThreadState* ts);
// At the end (Monitor_Final, threads quiescent; or the owning thread at
// its exit): moves stashed records into the rings, waiting for room within
// the bound; the rest are counted as discarded.
void trace_flush_stash(ThreadState* ts);
void trace_discard_stash(ThreadState* ts);

// Writes a record at the head of the thread's ring; the caller knows there
// is room (head below the limit).
inline void trace_put(ThreadState* ts, const proto::TraceRecord& rec) {
  ts->ring[ts->trace_head & ts->ring_mask] = rec;
  ++ts->trace_head;
  // Release: the tool reads the record after it sees the new head. A plain
  // store on x86; the line is this thread's own.
  __atomic_store_n(&ts->ring_head->head, ts->trace_head, __ATOMIC_RELEASE);
}

// Makes the thread's records visible to the tool (release: the records
// before the head). The fast path does it every kHeadPublishEvery records;
// the slow path, a wait for room, the thread's exit and every stop of the
// world (quiesce) do it always, so the tool sees every record at a stop
// and at the end, and at most kHeadPublishEvery - 1 of a running thread's
// latest records lag. Publishing after each record cost about 1.3 ns per
// pair with two traced threads: the collector's reads of the head line
// pulled it away from the writer at every record.
inline constexpr uint64_t kHeadPublishEvery = 16;
inline void trace_publish_head(ThreadState* ts) {
  if (ts->ring_head) __atomic_store_n(&ts->ring_head->head, ts->trace_head, __ATOMIC_RELEASE);
}

// The fields are stored straight into the ring: a record built on the
// stack and copied was read back with one 16-byte load over narrower
// stores, a failed store-to-load forward that cost about 2 ns a record.
inline void trace_append(ThreadState* ts, uint64_t timestamp, uint64_t data, uint32_t region,
                         proto::TraceKind kind, uint16_t request) {
  if (__builtin_expect(ts->trace_head == ts->trace_limit, 0))
    return trace_append_slow(ts, proto::TraceRecord{timestamp, data, region, uint16_t(kind), request});
  proto::TraceRecord* r = ts->ring + (ts->trace_head & ts->ring_mask);
  r->timestamp = timestamp;
  r->data = data;
  r->region = region;
  r->kind = uint16_t(kind);
  r->request = request;
  ++ts->trace_head;
  if ((ts->trace_head & (kHeadPublishEvery - 1)) == 0)
    __atomic_store_n(&ts->ring_head->head, ts->trace_head, __ATOMIC_RELEASE);  // as in trace_publish_head
}

}  // namespace mri::monitor

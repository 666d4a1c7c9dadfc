// monitor_internal.h - state shared by the files of libmonitor (the MCC).
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
#include <unordered_map>
#include <vector>

#include "mri_monitor.h"
#include "mri_papi.h"
#include "mri_protocol.h"

namespace mri::monitor {

enum Mode : uint32_t {
  kDormant = 0,   // no tool: annotations are never armed
  kStopped = 1,   // attached; threads park at their next monitored event
  kRunning = 2,   // attached and released
  kDetached = 3,  // tool gone or segment refused: behave as dormant forever
  kFinished = 4,  // Monitor_Final ran
};

inline constexpr uint32_t kMaxDepth = 256;  // monitored frames per thread

// Kept at 32 bytes: the time-only path touches nothing else (the counter
// values of a frame live in ThreadState::frame_counters, same index).
struct Frame {
  int32_t region;
  uint32_t profiled;  // the region carries a profile request: parent's exclusive excludes it
  uint64_t start;     // ticks at enter, shifted by the time spent parked since
  uint64_t child;     // ticks spent in profiled subregions
  // Event list of frame_counters[this index]. Written only when the frame
  // reads counters; a stale value can never match at the exit, because a
  // release that changes which regions read counters starts a new list.
  uint32_t counters_generation;
  uint32_t pad;
};
static_assert(sizeof(Frame) == 32);

struct FrameCounters {
  long long at_enter[papi::kMaxEvents];  // counter values at enter
  long long child[papi::kMaxEvents];     // counts in profiled subregions
};

struct alignas(64) ThreadState {
  std::atomic<uint32_t> in_slow{0};
  uint32_t index = 0;    // row in the segment
  uint32_t depth = 0;    // frames in use
  uint32_t overflow = 0; // enters not pushed because the stack was full
  // Non-zero: row not yet published, parked time to shift out, or the
  // counter events changed. Set by the control thread too, hence atomic
  // (relaxed: a plain load on the hot path).
  std::atomic<uint32_t> fixup{1};
  uint64_t parked_ticks = 0;  // ticks parked, not yet shifted out of open frames
  uint64_t shifted = 0;       // ticks the open frames were just shifted by (an exit shifts its timestamp too)
  proto::ThreadRecord* record = nullptr;
  uint32_t* seq = nullptr;  // the sequence word over this thread's result slots
  proto::AggregateSlot* agg_row = nullptr;  // this thread's aggregate slots [request]
  std::vector<uint32_t> open;  // per region: open profiled instances (recursion)
  papi::EventSet events;        // this thread's counters, for events_generation's list
  uint32_t events_generation = 0;
  Frame frames[kMaxDepth];
  FrameCounters frame_counters[kMaxDepth];
};

// One aggregate request attached to a region.
struct AggTarget {
  uint32_t request;
  uint16_t metric;  // proto::Metric
  uint16_t event;   // kCounter: index in Global::events
};

// What the MCC does at one region, rebuilt at each release.
struct RegionPlan {
  uint32_t agg_begin = 0;   // into Global::plan_aggs
  uint16_t n_agg = 0;
  uint16_t n_prof = 0;
  uint32_t prof_begin = 0;  // into Global::plan_slices
  uint8_t measure = 0;      // push a frame at enter
  uint8_t armed = 0;
  uint8_t counters = 0;     // read the thread's counters at enter and exit
};

struct Global {
  // Hot: read on every monitored event; kept together in the first lines.
  std::atomic<uint32_t> mode{kDormant};
  bool use_membarrier = false;
  bool tsc = false;  // the timer backend chose rdtsc (kept here: same cache line as the mode)
  int32_t breakpoint = -1;
  uint32_t plan_count = 0;
  const RegionPlan* plan = nullptr;
  const AggTarget* aggs = nullptr;
  const uint32_t* slices = nullptr;

  uint32_t run_generation = 0;  // private futex word: parked threads wait on it

  // Segment.
  proto::View view;
  int shmid = -1;
  int tool_pidfd = -1;
  uint32_t tool_pid = 0;
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

  // Threads: index -> state; states live until exit (the quiescing thread
  // may look at them at any time).
  std::atomic<uint32_t> next_thread{0};
  std::atomic<uint32_t> threads_dropped{0};  // published with the status
  std::atomic<ThreadState*>* threads = nullptr;  // [max_threads]
  pthread_key_t thread_key{};

  // Plans (read by application threads in the slow path while kRunning).
  // The vectors own the storage; the hot path reads the raw pointers.
  std::vector<RegionPlan> plans;
  std::vector<AggTarget> plan_aggs;
  std::vector<uint32_t> plan_slices;  // profile slice indices
  // What each profile slice measures (indexed by slice).
  AggTarget slice_metric[proto::kHardMaxProfileSlices]{};
  // Counter events of the current requests (every thread counts all of
  // them); a new list gets a new generation, and each thread rebuilds its
  // event set at its next monitored event.
  std::vector<std::string> events;
  uint32_t events_generation = 1;
  bool counters_ok = true;  // PAPI initialised (or not needed)

  // Profile slices of the requests over every region: the plan of a region
  // published after the last release (registered at its first execution).
  uint32_t all_prof_begin = 0;
  uint16_t all_prof_count = 0;

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

// session.cpp
void publish_once();
void publish_state(proto::AppState state, proto::StopReason reason, int32_t region,
                   bool count_stop, int64_t ack = -1);
void publish_ack(uint32_t ack);
void note_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void arm_all(unsigned char value);
void quiesce(const ThreadState* self);
bool try_stop_world(proto::StopReason reason, int32_t region, const ThreadState* self, int64_t ack = -1);

int32_t publish_region(Monitor_Region_Descriptor* d);
void reserve_plans();

// hot_path.cpp
ThreadState* current_thread_state();

}  // namespace mri::monitor

// tool_internal.h - libmri's state and the pure helpers that the unit tests
// exercise directly.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "mri.h"
#include "mri_protocol.h"

namespace mri::tool {

// Enum fields come from the tool and may hold any int: loading an
// out-of-range value as the enum type would be undefined, so they are read
// as raw ints until validated.
template <typename E>
int raw(const E& e) {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Sets the calling thread's error message and returns MRI_Error.
int fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void clear_error();

struct Request {
  MRI_Request_ID id = 0;
  MRI_Request_Kind kind = MRI_AGGREGATE_REQUEST;
  MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
  std::vector<MRI_Region_Spec> regions;  // empty: every region (profile)
  // The source file of each of `regions`, by name: file ids are the
  // program's, so a reload (another program, or scopes published in
  // another order) finds each region by its file's name (place_request).
  std::vector<std::string> region_files;
  std::vector<MRI_Active_Object_Spec> active_objects;  // empty: all
  MRI_Aggregation_Spec aggregation{MRI_SUM, MRI_PER_THREAD};
  std::string event;  // counter runtime information: the PAPI event; "" otherwise
  bool callpath = false;  // MRI_Callpath_Profile_Request
  bool compensate = true;  // MRI_Set_Compensation
  bool subregions = true;  // MRI_Set_Trace_Subregions
  bool unwind = false;     // MRI_Set_Callpath_Unwinding
  // Simulated cache events (histogram.cpp).
  bool simulated = false;   // measured by the application's cache simulator
  uint32_t cache_event = 0; // proto::CacheRequestRecord::event
  int data_index = -1;      // into Session::data, -1: none
  std::string data_name;    // the data structure as the tool named it (resolved again at a reload)
  MRI_Region_ID data_unit{};
  std::string data_file;    // data_unit's file by name (as region_files)
  int bins = 0;             // histogram: requested bins
  int histogram = -1;       // histogram slot in this run

  // Placement in the current segment.
  int slot = -1;
  int slice = -1;
  uint32_t generation = 0;
  std::string placement_error;  // why it could not be placed in this run
  bool paused = false;          // counter rotation: not measuring in the current iteration
  std::vector<unsigned> measured;  // iterations (releases of this run) it measured in
  std::vector<unsigned> measured_copy;  // handed out by MRI_Get_Data: stable until its next call
  bool measured_restarted = false;      // `measured` was cleared (a new run) since measured_copy was made

  // Result buffers handed out by MRI_Get_Data().
  std::vector<MRI_Aggregate_Value> agg_values;
  MRI_Aggregate_Request_Results agg_result{};
  std::vector<MRI_Profile_Element> prof_elements;
  std::vector<MRI_Profile_Value> prof_values;
  MRI_Histogram_Profile_Results prof_result{};
  std::vector<MRI_Callpath_Element> callpath_elements;
  MRI_Callpath_Profile_Results callpath_result{};
  std::vector<MRI_Histogram_Bin> hist_bins;
  std::vector<MRI_Data_Structure_Spec> hist_specs;  // the bins' data-structure tables point here
  MRI_Histogram_Request_Results hist_result{};
};

struct DataEntry {
  proto::DataRecord record;
  std::string name;
  MRI_Data_Structure_Spec spec;  // spec.name points into `name`
};

struct RegionEntry {
  MRI_Region_Spec spec;
  std::string name;
};

struct Session {
  std::mutex mu;  // never held while waiting for the application
  bool initialized = false;

  // The application of the current (or last) run.
  bool loaded = false;   // a segment and a process exist (or existed)
  pid_t pid = -1;
  int pidfd = -1;
  std::string program_name;  // its /proc comm, kept for when the process is gone
  bool reaped = false;
  int wait_status = 0;
  std::mutex reap_mu;
  int shmid = -1;
  uint64_t run = 0;  // segments created so far: which one `view` is (trace accounting is per run)
  proto::View view;
  double ns_per_tick = 1.0;
  // Deques: they grow when regions are published late, and the names
  // handed out by MRI_Get_Region_Info() must stay where they are.
  std::deque<RegionEntry> regions;
  std::deque<std::string> files;
  std::atomic<uint32_t> last_cmd_seq{0};  // read by MRI_Wait without mu
  // The application's status word stayed odd (mid-update) beyond the
  // bounded retry while it lived (snapshot()), at value stuck_seq: from
  // then on in this run a status read that finds that value gives up at
  // once (another odd value after a short spin only), and the calls that
  // act on the status fail with the reason (readable_status()). Read
  // without mu.
  std::atomic<bool> status_stuck{false};
  std::atomic<uint32_t> stuck_seq{0};
  proto::Command last_cmd = proto::Command::kNone;  // sent by send_command()
  unsigned iteration = 0;                 // releases in this run
  bool rotation = false;                  // MRI_Set_Counter_Rotation
  bool finish_requested = false;
  bool finish_killed = false;  // MRI_Application_Finish() killed it after the grace (SIGKILL)

  std::map<MRI_Request_ID, Request> requests;
  MRI_Request_ID next_id = 1;
  std::vector<uint8_t> slot_busy;   // request records in use
  size_t next_slot = 0;             // where the search for a free one starts (round robin)
  std::vector<uint8_t> slice_busy;  // profile slices in use
  // Request records of deleted trace requests whose records may still be
  // in the rings or the tool-side buffer: a record names its request by the
  // record's index, so another trace request there would give them its
  // runtime information when they are delivered. By index: the release
  // (iteration) at the deletion, and whether the application was stopped
  // then (no record of it can be written after that stop).
  struct TraceDrain {
    unsigned iteration;
    bool stopped;
  };
  std::map<int, TraceDrain> trace_draining;

  // PAPI events named by MRI_Runtime_Information_By_Name(): runtime
  // information MRI_RUNTIME_INFORMATION_DYNAMIC_BASE + index. A deque, so
  // names handed out stay put.
  std::deque<std::string> dyn_events;
  std::mutex events_mu;  // guards dyn_events (names are read without mu)

  // Buffers for the publication interface.
  std::vector<MRI_Runtime_Information_Info> ri_table;
  std::deque<std::string> ri_strings;  // texts the ri_table points to
  std::vector<MRI_Aggregation_Spec> agg_table;
  std::vector<MRI_Active_Object_Spec> ao_table;
  std::vector<MRI_Region_Spec> region_table;

  // Data structures the application registered (deque: specs handed out
  // point at names that must stay put), and the cache simulator.
  std::deque<DataEntry> data;
  std::vector<MRI_Data_Structure_Spec> data_table;
  std::string cache_config;     // MRI_Set_Cache_Configuration
  bool cache_config_set = false;
  std::vector<uint8_t> histogram_busy;  // histogram slots in use
};

extern Session s;

// Reduction of per-thread aggregate slots to the values of one request.
// Pure: `slots[i]` is thread `threads[i]`'s slot; times are scaled by
// ns_per_tick. Used by MRI_Get_Data and tested on its own.
struct ThreadSlot {
  int thread;
  proto::AggregateSlot slot;
};
std::vector<MRI_Aggregate_Value> reduce_aggregate(MRI_Runtime_Information_Spec ri,
                                                  const MRI_Aggregation_Spec& agg,
                                                  const std::vector<ThreadSlot>& slots,
                                                  int process_id, double ns_per_tick);

// Counters (counters.cpp).
std::string event_of(int ri);  // the PAPI event measuring `ri`, "" for the timer's
bool is_counter(int ri);
int register_event(const std::string& name);  // its runtime information id
int counter_budget(std::string& detail);
int check_budget(const Request& r);  // MRI_OK, or MRI_Error with the reason set
void rotate_counters();  // picks the counter requests that measure in the next iteration
void fill_counter_information(MRI_HW_Info* info);  // nr_Hardware_Counters, counter_source

// Which aggregations the MCC implements for a runtime information.
std::vector<MRI_Aggregation_Spec> aggregations_for(MRI_Runtime_Information_Spec ri);
bool is_serial_region_type(MRI_Region_Type type);

// Launch and segment management (launch.cpp).
// What a load needs from the tool's side.
struct LoadInputs {
  std::string path;     // as the tool gave it (argv[0] when argv is NULL)
  std::string program;  // the resolved path
  proto::Geometry geo = proto::kDefaultGeometry;
  uint32_t tool_records = 0, trace_wait_ms = 0;
  uint32_t timeout_env = 0;
  std::string cache_config;
};
// Whether a load of `path` can start (the program found, the
// environment's limits and the cache configuration sound): MRI_OK with
// `in` filled, or MRI_Error with the reason, changing nothing.
int check_load(const char* path, LoadInputs& in);
int load_application(const LoadInputs& in, char* const argv[]);
// Whether a stop reason says monitoring ended at an exec() (which then
// replaced the program, or failed after monitoring had ended for it): the
// process runs on, unmonitored, and nobody answers commands.
inline bool ended_at_exec(uint32_t reason) {
  return reason == uint32_t(proto::StopReason::kExec) || reason == uint32_t(proto::StopReason::kExecFailed);
}
// The process that attached, when it is not the one the tool started (a
// wrapper started it without exec()), while it is attached and alive; 0
// otherwise.
pid_t monitored_below();
int finish_application();
void release_segment();
int refresh_static_information();  // picks up regions published after start-up
bool child_exited();  // reaps when possible
void read_program_name();  // s.program_name from /proc while the pid is the application's
void await_exit_status(int ms);

// Consistent copy of thread t's result rows (sequence lock).
bool read_thread_consistent(uint32_t thread, const std::function<void()>& copy);

// Application status as seen by the tool.
struct AppSnapshot {
  uint32_t state, ack, reason, stops, threads_dropped, regions_dropped, unmatched_exits, bad_requests;
  int32_t region;
  bool torn;  // the application died while writing it
};
AppSnapshot snapshot();
MRI_Application_Status status_of(const AppSnapshot& snap);
MRI_Application_Status current_status();
// The status for a call that acts on it: MRI_OK and *st, or MRI_Error with
// the reason when it cannot be read (Session::status_stuck).
int readable_status(MRI_Application_Status* st);

// Thread rows the application has in use (bounded by the geometry: the
// count comes from the untrusted segment).
inline uint32_t thread_rows(const proto::View& v) {
  return std::min(std::atomic_ref<uint32_t>(v.header()->app.thread_count).load(std::memory_order_acquire),
                  v.g.max_threads);
}

// Trace delivery (trace.cpp).
// The runtime information and data structure (nullptr: none) of a trace
// request's slot, for its records.
void trace_note_slot(int slot, int ri, const MRI_Data_Structure_Spec* data);
void trace_settings(uint32_t& ring_records, uint32_t& tool_records);
void trace_start_collector();            // needs mu; no-op when running
bool trace_await_end(int timeout_ms);    // without mu
void trace_stop_collector();             // without mu; before the segment goes away
void trace_forget_callback();            // without mu; MRI_Finalize, after trace_stop_collector
bool trace_in_callback();                // the calling thread runs the trace call-back
bool trace_slot_has_records(int slot);   // records of request record `slot` wait in the rings or the buffer
std::string trace_problem();             // needs mu: the first corrupt trace ring of this run, "" if none

// Data structures and simulated cache events (histogram.cpp); need mu.
int refresh_data_structures();  // reads what the application registered since the last call
int data_structure_index(const MRI_Data_Structure_Spec& spec);  // into s.data, or -1 with the error set
bool application_has_cache_simulator();
bool is_cache_event(int ri);  // MRI_LCn_DATA_{READ,WRITE}_{MISS,HIT}
uint32_t cache_event_code(int ri);  // proto::CacheRequestRecord::event
// Decides how a request for `ri` is measured; MRI_OK or MRI_Error (reason set).
int check_cache_request(Request& r, bool has_data_structure);
int cache_configuration_for_load(std::string& text);  // the text the next load gives the application
int histogram_results(Request& r, bool active, void** results);

// Puts a request's record into the current segment (needs mu held).
int place_request(Request& r);
void unplace_request(Request& r);

}  // namespace mri::tool

// session.h - the state of a libmri session: the tool's requests, the
// application of the current (or last) run and its segment, and the
// buffers handed out to the tool.
//
// One Session object exists; the C entry points (mri_api.cpp) own it and
// hand it as `Session&` to every function that needs it. Nothing else
// reaches it.
//
// Locking (the promise of mri.h and docs/api.md "Thread safety"):
//  * Session::mu serialises the calls. Only the C entry points take it;
//    a function that takes a Session& expects it held unless its comment
//    says "without mu".
//  * The waits (MRI_Wait, MRI_Wait_Timeout: wait_status() in control.cpp)
//    do not hold mu while they wait: they take it for each short look at
//    the session and read the application's status words without it.
//  * Read without mu: last_cmd_seq, status_stuck and stuck_seq (atomics);
//    the reaping fields (pid, reaped, wait_status, program_name), guarded
//    by reap_mu; and, by the waits between looks, loaded, view, shmid and
//    pidfd, which only MRI_Application_Load and MRI_Finalize change.
//  * The trace collector thread (trace.cpp) has its own mutex and never
//    takes mu; of the session it uses only the reaping (child_exited()).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "mri.h"
#include "mri_protocol.h"

namespace mri::tool {

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
  // Simulated cache events (cache_simulator.cpp).
  bool simulated = false;   // measured by the application's cache simulator
  uint32_t cache_event = 0; // proto::CacheRequestRecord::event
  int data_index = -1;      // into Session::data, -1: none
  std::string data_name;    // the data structure as the tool named it (resolved again at a reload)
  MRI_Region_ID data_unit{};
  std::string data_file;    // data_unit's file by name (as region_files)
  int bins = 0;             // histogram: requested bins
  int histogram = -1;       // histogram slot in this run

  // Placement in the current segment (slots.cpp).
  int slot = -1;
  int slice = -1;
  uint32_t generation = 0;
  std::string placement_error;  // why it could not be placed in this run
  bool paused = false;          // counter rotation: not measuring in the current iteration
  std::vector<unsigned> measured;  // iterations (releases of this run) it measured in
  std::vector<unsigned> measured_copy;  // handed out by MRI_Get_Data: stable until its next call
  bool measured_restarted = false;      // `measured` was cleared (a new run) since measured_copy was made

  // Result buffers handed out by MRI_Get_Data() (one set per kind).
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
  std::mutex mu;  // the calls' mutex (above); never held while waiting for the application
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
  std::vector<uint8_t> histogram_busy;  // histogram slots in use
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
};

// The session's lifetime (session.cpp); all with mu held.
// MRI_Init: a session starts with no request and no application.
void open_session(Session& s);
// MRI_Finalize, after the application was finished and the trace
// collector stopped: lets the segment go and forgets the requests.
void close_session(Session& s);
// MRI_Application_Load, once the new load is known to be able to start:
// finishes the previous run and lets its segment go (its results were
// readable until now); iterations count per run.
void end_previous_run(Session& s);
// A new segment `view` (attached, not yet handed to an application): the
// per-run state starts over (commands, status, request records, profile
// slices, histogram slots).
void start_run(Session& s, const proto::View& view, int shmid);

}  // namespace mri::tool

// mri_api.cpp - the C entry points of the Monitoring Request Interface
// (include/mri.h, docs/api.md). Each checks its arguments and the
// session's state, takes the session's mutex where the call needs it, and
// hands the work to the file of its concern:
//   session.cpp        MRI_Init, MRI_Finalize (the session's lifetime)
//   launch.cpp         loading, finishing the application
//   control.cpp        commands, status, waits, overhead values
//   requests.cpp       what every request kind shares; MRI_Get_Data
//   request_<kind>.cpp each request kind (request_kind.h)
//   slots.cpp          request records in the segment
//   publication.cpp    the publication interface
//   data_structures.cpp, cache_simulator.cpp, counters.cpp, topology.cpp
//   trace.cpp          trace delivery
//
// The session is owned here and nowhere else; the locking rule is in
// session.h: Session::mu is taken here only (and by the waits, between
// their looks), never while waiting for the application.
#include <cstring>
#include <mutex>
#include <string>

#include "cache_simulator.h"
#include "control.h"
#include "counters.h"
#include "data_structures.h"
#include "error.h"
#include "launch.h"
#include "mri.h"
#include "publication.h"
#include "request_aggregate.h"
#include "request_histogram.h"
#include "request_profile.h"
#include "request_trace.h"
#include "requests.h"
#include "row_reader.h"
#include "session.h"
#include "topology.h"
#include "trace.h"

using namespace mri;
using namespace mri::tool;

namespace {

Session s;

using Lock = std::lock_guard<std::mutex>;

int not_initialized() { return fail("MRI_Init() has not been called"); }

// MRI_Start (region nullptr) and MRI_Start_Stop.
int start(const MRI_Region_Spec* region) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded: call MRI_Application_Load() first");
  return release(s, region);
}

}  // namespace

extern "C" {

// ---- Errors, version, session -------------------------------------------

const char* MRI_Get_Error_Message(void) { return error_message(); }

int MRI_Get_Protocol_Version(void) { return int(proto::kProtocolVersion); }

int MRI_Init(void) {
  Lock lock(s.mu);
  if (s.initialized) return fail("MRI_Init() called twice");
  open_session(s);
  clear_error();
  return MRI_OK;
}

int MRI_Finalize(void) {
  if (trace_in_callback()) return fail("MRI_Finalize cannot be called from the trace call-back");
  {
    Lock lock(s.mu);
    if (!s.initialized) return not_initialized();
    finish_application(s);
  }
  trace_stop_collector();  // final call-back, without mu (it may call MRI functions)
  trace_forget_callback();
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  close_session(s);
  clear_error();
  return MRI_OK;
}

// ---- Loading and ending the application ---------------------------------

int MRI_Application_Load(const char* path, char* const argv[]) {
  if (trace_in_callback()) return fail("MRI_Application_Load cannot be called from the trace call-back");
  {
    Lock lock(s.mu);
    if (!s.initialized) return not_initialized();
    if (!path || !*path) return fail("application path is NULL or empty");
    if (s.loaded && !child_exited(s) && current_status(s) != MRI_APPLICATION_TERMINATED)
      return fail("an application is already loaded (pid %d): call MRI_Application_Finish() first", int(s.pid));
  }
  trace_stop_collector();  // the previous run's final call-back, without mu
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (s.loaded && !child_exited(s) && current_status(s) != MRI_APPLICATION_TERMINATED)
    return fail("an application is already loaded (pid %d): call MRI_Application_Finish() first", int(s.pid));
  // Checked before the previous run is let go: a load that cannot start
  // keeps its results readable.
  LoadInputs in;
  if (check_load(s, path, in) != MRI_OK) return MRI_Error;
  end_previous_run(s);
  return load_application(s, in, argv);
}

int MRI_Application_Finish(void) {
  if (trace_in_callback()) return fail("MRI_Application_Finish cannot be called from the trace call-back");
  {
    Lock lock(s.mu);
    if (!s.initialized) return not_initialized();
    if (!s.loaded) return fail("no application loaded");
    finish_application(s);
  }
  trace_await_end(-1);  // the final trace call-back ran (it may call MRI functions: no mu)
  clear_error();
  return MRI_OK;
}

// ---- Control: commands, status, waits -----------------------------------

int MRI_Start(void) { return start(nullptr); }

int MRI_Start_Stop(MRI_Region_Spec* region) {
  if (!region) return fail("breakpoint region is NULL");
  return start(region);
}

int MRI_Stop(void) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded");
  return stop(s);
}

int MRI_Wait(void) { return wait_status(s, "MRI_Wait", -1); }

int MRI_Wait_Timeout(int timeout_ms) {
  if (timeout_ms < 0) return fail("negative timeout");
  return wait_status(s, "MRI_Wait_Timeout", timeout_ms);
}

int MRI_No_Wait(void) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded");
  MRI_Application_Status st;
  if (readable_status(s, &st) != MRI_OK) return MRI_Error;
  clear_error();
  return st;
}

int MRI_Get_Application_Status(MRI_Application_Status_Info* info) {
  if (!info) return fail("status info pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return application_status(s, info);
}

int MRI_Set_Overhead(MRI_Overhead_Kind overhead_kind, double delta_inclusive, double delta_own) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return set_overhead(s, int(overhead_kind), delta_inclusive, delta_own);
}

int MRI_Clear_Overhead(MRI_Overhead_Kind overhead_kind) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return clear_overhead(s, int(overhead_kind));
}

// ---- Requests -----------------------------------------------------------

MRI_Request_ID MRI_Aggregate_Request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                     MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables,
                                     MRI_Aggregation_Spec* aggregation) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return aggregate_request(s, ri, regions, ao, variables, aggregation);
}

MRI_Request_ID MRI_Histogram_Request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                     MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables,
                                     int* histogram_elements_nr) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return histogram_request(s, ri, regions, ao, variables, histogram_elements_nr);
}

MRI_Request_ID MRI_Trace_Request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                 MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return trace_request(s, ri, regions, ao, variables);
}

MRI_Request_ID MRI_Profile_Request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                   MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return profile_request(s, ri, regions, ao, variables, false);
}

MRI_Request_ID MRI_Callpath_Profile_Request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                            MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return profile_request(s, ri, regions, ao, variables, true);
}

int MRI_Request_Delete(MRI_Request_ID request) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return delete_request(s, request);
}

int MRI_Set_Compensation(MRI_Request_ID request, int enabled) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return set_compensation(s, request, enabled != 0);
}

int MRI_Set_Trace_Subregions(MRI_Request_ID request, int enabled) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return set_trace_subregions(s, request, enabled != 0);
}

int MRI_Set_Callpath_Unwinding(MRI_Request_ID request, int enabled) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return set_callpath_unwinding(s, request, enabled != 0);
}

int MRI_Set_Counter_Rotation(int enabled) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return set_counter_rotation(s, enabled != 0);
}

// ---- Results ------------------------------------------------------------

int MRI_Get_Data(MRI_Request_ID request, void** results) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!results) return fail("results pointer is NULL");
  return get_data(s, request, results);
}

int MRI_Get_Callpath_Data(MRI_Request_ID request, MRI_Callpath_Profile_Results** results) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!results) return fail("results pointer is NULL");
  return callpath_data(s, request, results);
}

// ---- Traces (section 4.4): the collector has its own mutex --------------

int MRI_Register_Call_Back_Function(MRI_Call_Back_Function function) {
  {
    Lock lock(s.mu);
    if (!s.initialized) return not_initialized();
  }
  trace_register_callback(function);
  clear_error();
  return MRI_OK;
}

MRI_Trace_Element_Spec* MRI_Get_First_Trace_Record(void) {
  clear_error();
  return trace_take_record();
}

MRI_Trace_Element_Spec* MRI_Get_Next_Trace_Record(void) { return MRI_Get_First_Trace_Record(); }

int MRI_Get_Trace_Records(MRI_Trace_Element_Spec* out, int max) {
  if (!out) return fail("output array is NULL");
  if (max < 0) return fail("negative record count %d", max);
  clear_error();
  return trace_take_records(out, max);
}

int MRI_Set_Trace_Buffer_Size(unsigned int ring_records, unsigned int tool_records) {
  if (ring_records != 0 &&
      (ring_records < 1024 || ring_records > proto::kHardMaxTraceRecords || (ring_records & (ring_records - 1))))
    return fail("ring_records must be a power of two from 1024 to %u (got %u)", proto::kHardMaxTraceRecords,
                ring_records);
  return trace_set_buffer_size(ring_records, tool_records);
}

int MRI_Get_Trace_Statistics(const MRI_Active_Object_Spec* thread, MRI_Trace_Statistics* stats) {
  if (!thread || !stats) return fail("NULL argument");
  if (raw(thread->type) != MRI_THREAD) return fail("trace statistics are per thread (MRI_THREAD)");
  proto::View v;
  uint64_t run;
  double ns_per_tick;
  {
    Lock lock(s.mu);
    if (!s.initialized) return not_initialized();
    if (!s.loaded || !s.view.base) return fail("no application loaded");
    v = s.view;
    run = s.run;
    ns_per_tick = s.ns_per_tick;
  }
  if (thread->id < 0 || uint32_t(thread->id) >= thread_rows(v))
    return fail("thread %d has produced no monitored event", thread->id);
  return trace_statistics(v, run, uint32_t(thread->id), ns_per_tick, stats);
}

// ---- Publication interface (section 6) ----------------------------------

const char* MRI_Runtime_Information_Name(MRI_Runtime_Information_Spec ri) { return runtime_information_name(ri); }

const char* MRI_Aggregation_Operation_Name(MRI_Aggregation_Operation op) { return aggregation_operation_name(op); }

const char* MRI_Region_Type_Name(MRI_Region_Type type) { return region_type_name(type); }

int MRI_Runtime_Information_By_Name(const char* name, MRI_Runtime_Information_Spec* ri) {
  if (!name || !ri) return fail("name or result pointer is NULL");
  return runtime_information_by_name(name, ri);
}

int Get_Available_Runtime_Information(MRI_Runtime_Information_Table* table) {
  if (!table) return fail("table pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return runtime_information_table(s, table);
}

int Get_Available_Aggregations(MRI_Runtime_Information_Spec ri, MRI_Aggregation_Table* table) {
  if (!table) return fail("table pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return aggregation_table(s, ri, table);
}

int Get_Available_Active_Objects(MRI_Active_Object_Table* table) {
  if (!table) return fail("table pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded");
  return active_object_table(s, table);
}

int MRI_Get_Active_Object_Info(const MRI_Active_Object_Spec* ao, MRI_Active_Object_Info* info) {
  if (!ao || !info) return fail("active object or info pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded");
  return active_object_info(s, ao, info);
}

int MRI_Get_System_Information(MRI_HW_Info* info) {
  if (!info) return fail("info pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return system_information(info);
}

int MRI_Get_Regions(MRI_Region_Table* table) {
  if (!table) return fail("table pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded");
  return region_table(s, table);
}

int MRI_Get_Region_Info(const MRI_Region_Spec* region, MRI_Region_Info* info) {
  if (!region || !info) return fail("region or info pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded");
  return region_info(s, region, info);
}

int MRI_Find_Region(const char* name, MRI_Region_Spec* region) {
  if (!name || !region) return fail("name or region pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded");
  return find_region(s, name, region);
}

const char* MRI_Get_File_Name(int file_ID) {
  Lock lock(s.mu);
  return file_name(s, file_ID);
}

int MRI_Get_Overhead_Calibration(MRI_Overhead_Calibration* calibration) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();  // first, as in every call
  if (!calibration) return fail("calibration pointer is NULL");
  if (!s.loaded || !s.view.base) return fail("no application loaded");
  return overhead_calibration(s, calibration);
}

// ---- Data structures and the cache simulator (sections 3.2, 4.2) --------

int MRI_Get_Data_Structures(MRI_Data_Structure_Table* table) {
  if (!table) return fail("table pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded");
  return data_structure_table(s, table);
}

int MRI_Find_Data_Structure(const char* name, MRI_Data_Structure_Spec* data_structure) {
  if (!name || !data_structure) return fail("name or result pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded");
  return find_data_structure(s, name, data_structure);
}

int MRI_Get_Data_Structure_Info(const MRI_Data_Structure_Spec* data_structure, MRI_Data_Structure_Info* info) {
  if (!data_structure || !info) return fail("data structure or info pointer is NULL");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded) return fail("no application loaded");
  return data_structure_info(s, *data_structure, info);
}

int MRI_Set_Cache_Configuration(const char* config) {
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  return set_cache_configuration(s, config);
}

int MRI_Get_Cache_Configuration(char* text, int bytes) {
  if (!text || bytes <= 0) return fail("text buffer is NULL or empty");
  Lock lock(s.mu);
  if (!s.initialized) return not_initialized();
  if (!s.loaded || !s.view.base) return fail("no application loaded");
  return cache_configuration_text(s, text, bytes);
}

}  // extern "C"

// trace.h - delivery of trace records (paper section 4.4): the collector
// thread that moves records from the application's rings into the
// tool-side buffer and runs the call-back, and the functions that hand the
// records out.
//
// The collector's state is trace.cpp's own, under its own mutex; it never
// takes Session::mu, so a call-back may call the functions that do. Which
// functions need Session::mu and which must be called without it is said
// for each.
#pragma once

#include <cstdint>
#include <string>

#include "mri.h"
#include "mri_protocol.h"
#include "session.h"

namespace mri::tool {

// The runtime information and data structure (nullptr: none) of a trace
// request's record `slot`, for its records.
void trace_note_slot(int slot, int ri, const MRI_Data_Structure_Spec* data);
// The ring and tool-side buffer sizes for the next load.
void trace_settings(uint32_t& ring_records, uint32_t& tool_records);
// Starts collecting for the loaded application; no-op when running. Needs mu.
void trace_start_collector(Session& s);
// Waits until the collector finished the run (the application ended, the
// final call-back returned), at most timeout_ms (-1: no limit). True when
// finished or not running. Without mu.
bool trace_await_end(int timeout_ms);
// Stops the collector before the segment goes away: it collects what the
// rings hold and runs the final call-back first. Without mu.
void trace_stop_collector();
// MRI_Finalize, after trace_stop_collector: the session's call-back ends
// with it. Without mu.
void trace_forget_callback();
// Whether the calling thread runs the trace call-back.
bool trace_in_callback();
// Whether records of request record `slot` wait in the rings or the
// buffer. Needs mu (the segment stays).
bool trace_slot_has_records(int slot);
// The first corrupt trace ring of run `run`, "" if none.
std::string trace_problem(uint64_t run);

// The C API's trace functions, after their argument checks. Without mu.
// MRI_Register_Call_Back_Function: returns once a call-back running now
// has returned (unless called from it).
void trace_register_callback(MRI_Call_Back_Function function);
// MRI_Get_First/Next_Trace_Record: the next record, or nullptr.
MRI_Trace_Element_Spec* trace_take_record();
// MRI_Get_Trace_Records: up to `max` records into out; how many.
int trace_take_records(MRI_Trace_Element_Spec* out, int max);
// MRI_Set_Trace_Buffer_Size with a checked ring size (0: keep).
int trace_set_buffer_size(uint32_t ring_records, uint32_t tool_records);
// MRI_Get_Trace_Statistics of thread `thread` (below the rows in use) of
// run `run` on segment `view`.
int trace_statistics(const proto::View& view, uint64_t run, uint32_t thread, double ns_per_tick,
                     MRI_Trace_Statistics* stats);

}  // namespace mri::tool

// control.h - commands to the application and its status: release
// (MRI_Start, MRI_Start_Stop), stop, terminate's status, the status
// snapshot, the waits, and the overhead values the tool sets. Functions
// take the session with mu held unless they say otherwise.
#pragma once

#include <cstdint>

#include "mri.h"
#include "mri_protocol.h"
#include "session.h"

namespace mri::tool {

// The application's status fields as one consistent copy.
struct AppSnapshot {
  uint32_t state, ack, reason, stops, threads_dropped, regions_dropped, unmatched_exits, bad_requests;
  int32_t region;
  bool torn;  // the application died, or froze, while writing it
};
// A consistent copy of the status fields. A status word that stays odd
// beyond the retry (1000 yields, then 2 s) while the program lives marks
// the run's status stuck (Session::status_stuck): a later read that finds
// the same value gives up at once. Also without mu (the waits).
AppSnapshot snapshot(Session& s);
MRI_Application_Status status_of(Session& s, const AppSnapshot& snap);
MRI_Application_Status current_status(Session& s);
// The status for a call that acts on it: MRI_OK and *st, or MRI_Error with
// the reason when it cannot be read (Session::status_stuck). Also without
// mu (the waits).
int readable_status(Session& s, MRI_Application_Status* st);

// Whether a region type can be a breakpoint (the serial ones).
bool is_serial_region_type(MRI_Region_Type type);
// Waits at most 2 s for the acknowledgement of the last command; whether
// it came (false: it did not, or the application ended).
bool await_ack(Session& s);
// MRI_Start (region nullptr) and MRI_Start_Stop, with an application
// loaded: checks the status and the breakpoint, starts an iteration
// (counter rotation) and sends the run command.
int release(Session& s, const MRI_Region_Spec* region);
// MRI_Stop with an application loaded.
int stop(Session& s);
// MRI_Wait and MRI_Wait_Timeout (`name`; timeout_ms -1: none). Without mu:
// takes it for each look at the session, never while it waits.
int wait_status(Session& s, const char* name, int64_t timeout_ms);
// MRI_Get_Application_Status, after the session checks.
int application_status(Session& s, MRI_Application_Status_Info* info);
// MRI_Set_Overhead and MRI_Clear_Overhead, with the calls' checks.
int set_overhead(Session& s, int kind, double delta_inclusive, double delta_own);
int clear_overhead(Session& s, int kind);

}  // namespace mri::tool

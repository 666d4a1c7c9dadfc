// counters.h - runtime information measured by PAPI counters: the paper's
// cache and cycle events, the events a tool names, the counter budget of
// section 3.1 and counter rotation.
#pragma once

#include <string>

#include "mri.h"
#include "session.h"

namespace mri::tool {

// The registry of PAPI events named by MRI_Runtime_Information_By_Name()
// (runtime information MRI_RUNTIME_INFORMATION_DYNAMIC_BASE + index). It
// has its own mutex: these functions are thread-safe without Session::mu,
// and names handed out stay put until forget_registered_events().
//
// The PAPI event measuring `ri`; "" for the timer's and unknown ones.
std::string event_of(int ri);
bool is_counter(int ri);
// The runtime information id of event `name` (a preset's paper id, or a
// registered one; registers it when new).
int register_event(const std::string& name);
// The name of registered runtime information `ri`, or nullptr.
const char* registered_event_name(int ri);
// The index-th registered event into `name`; false past the last one.
bool registered_event(size_t index, std::string& name);
// MRI_Finalize: the names registered in this session are forgotten.
void forget_registered_events();

// The counters requests may use at once: min(PAPI's counters, 8,
// MRI_COUNTER_BUDGET), with `detail` saying why; -1 with `detail` the
// reason when MRI_COUNTER_BUDGET is not a number.
int counter_budget(std::string& detail);
// Section 3.1: MRI_OK, or MRI_Error (reason set) when request `r` needs a
// counter beyond the budget. Needs mu.
int check_budget(const Session& s, const Request& r);
// At a release: picks the counter requests that measure in the next
// iteration and records the iterations each measured. Needs mu.
void rotate_counters(Session& s);
// MRI_Set_Counter_Rotation. Needs mu.
int set_counter_rotation(Session& s, bool enabled);
// nr_Hardware_Counters and counter_source of MRI_Get_System_Information.
void fill_counter_information(MRI_HW_Info* info);

}  // namespace mri::tool

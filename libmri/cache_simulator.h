// cache_simulator.h - simulated cache events (paper 3.2, 4.2): which cache
// requests the application's simulator measures, and the simulator
// configuration the tool gives the application.
#pragma once

#include <cstdint>
#include <string>

#include "session.h"

namespace mri::tool {

bool is_cache_event(int ri);  // MRI_LCn_DATA_{READ,WRITE}_{MISS,HIT}
uint32_t cache_event_code(int ri);  // proto::CacheRequestRecord::event
// Whether the loaded application is built with the cache-simulator backend.
bool application_has_cache_simulator(const Session& s);
// Decides how a request for r.ri is measured (simulated, or by PAPI);
// MRI_OK, or MRI_Error with the reason. Needs mu.
int check_cache_request(Session& s, Request& r, bool has_data_structure);
// The configuration text the next load gives the application (checked,
// with the simulator's environment); MRI_OK or MRI_Error. Needs mu.
int cache_configuration_for_load(const Session& s, std::string& text);
// MRI_Set_Cache_Configuration, after the session checks. Needs mu.
int set_cache_configuration(Session& s, const char* config);
// MRI_Get_Cache_Configuration, with an application loaded. Needs mu.
int cache_configuration_text(const Session& s, char* text, int bytes);

}  // namespace mri::tool

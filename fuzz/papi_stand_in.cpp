// papi_stand_in.cpp - the part of backends/papi/mri_papi.h that the counter
// source's claims call (init), for the plan compiler's fuzz target: a PAPI
// that initialises, so that counter requests reach the readings that
// every other source shares (the real PAPI's one-time allocations would
// read as leaks of the first input, and its start-up costs milliseconds).
// The calls made by application threads are never reached from the plan
// compiler: they abort.
#include <cstdlib>

#include "mri_papi.h"

namespace mri::papi {

bool init(std::string&) { return true; }
bool build(EventSet&, const std::vector<std::string>&, std::string&) { std::abort(); }
bool read(const EventSet&, long long*) { std::abort(); }
void destroy(EventSet&) { std::abort(); }
void unregister_thread() { std::abort(); }

}  // namespace mri::papi

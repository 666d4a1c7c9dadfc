// set_search.h - internal to the simulator: what hierarchy.cpp needs of
// the set-search choice (set_search.cpp).
#pragma once

namespace mri::sim::internal {

// Whether this CPU runs AVX-512F code (the vector set search needs it).
// Pure after the first call; thread-safe.
bool cpu_has_avx512f();

}  // namespace mri::sim::internal

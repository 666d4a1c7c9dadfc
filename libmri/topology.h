// topology.h - MRI_Get_System_Information and where its machine facts
// come from (topology.cpp). Internal: the unit tests call both sources
// directly.
#pragma once

#include "mri.h"

namespace mri::tool {

// Fills the topology fields of *info (CPUs, cores, sockets, NUMA nodes,
// caches, topology_source) from hwloc. Returns false, and leaves *info
// alone, when libmri was built without hwloc or hwloc fails at run time.
bool topology_from_hwloc(MRI_HW_Info* info);

// The same fields from sysconf: cores = CPUs, 1 socket, 1 NUMA node, the
// caches glibc reports with size > 0 and shared_by_cpus = 0 (unknown).
void topology_from_sysconf(MRI_HW_Info* info);

// MRI_Get_System_Information after the session checks: the topology (from
// hwloc, else sysconf), the time unit and the hardware counters. Thread-safe.
int system_information(MRI_HW_Info* info);

}  // namespace mri::tool

// topology.cpp - MRI_Get_System_Information (paper section 6.1): the
// machine's topology and caches from hwloc, or from sysconf when libmri was
// built without hwloc or hwloc fails at run time.
#include "topology.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#ifdef MRI_HAVE_HWLOC
#include <hwloc.h>
#endif

#include "counters.h"
#include "error.h"
#include "mri.h"

namespace mri::tool {

namespace {

constexpr int kMaxCaches = MRI_MAX_CACHE_LEVELS * 2;  // entries in MRI_HW_Info::cache

long sysconf_or(int name, long fallback) {
  long v = sysconf(name);
  return v > 0 ? v : fallback;
}

}  // namespace

void topology_from_sysconf(MRI_HW_Info* info) {
  info->nr_CPUs = int(sysconf_or(_SC_NPROCESSORS_ONLN, 1));
  info->nr_Cores = info->nr_CPUs;
  info->nr_Sockets = 1;
  info->nr_NUMA_Nodes = 1;
  info->nr_Cache_Levels = 0;
  std::snprintf(info->topology_source, sizeof info->topology_source, "sysconf");
  struct Level {
    int level, data, instr, size, line, assoc;
  };
  const Level levels[] = {
      {1, 1, 0, _SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_LINESIZE, _SC_LEVEL1_DCACHE_ASSOC},
      {1, 0, 1, _SC_LEVEL1_ICACHE_SIZE, _SC_LEVEL1_ICACHE_LINESIZE, _SC_LEVEL1_ICACHE_ASSOC},
      {2, 1, 1, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_LINESIZE, _SC_LEVEL2_CACHE_ASSOC},
      {3, 1, 1, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL3_CACHE_LINESIZE, _SC_LEVEL3_CACHE_ASSOC},
  };
  for (const auto& l : levels) {
    long size = sysconf(l.size);
    if (size <= 0) continue;
    MRI_Cache_Info& c = info->cache[info->nr_Cache_Levels++];
    std::memset(&c, 0, sizeof c);
    c.level = l.level;
    c.is_data = l.data;
    c.is_instruction = l.instr;
    c.size_bytes = (unsigned long long)size;
    c.line_size_bytes = int(sysconf_or(l.line, 0));
    c.associativity = int(sysconf_or(l.assoc, 0));
    c.shared_by_cpus = 0;  // sysconf does not say
  }
}

#ifdef MRI_HAVE_HWLOC

namespace {

// One kind of cache found in the topology: all instances with equal
// attributes and equal sharing. A hybrid processor has several per level
// (e.g. the L2 of a performance core and the L2 shared by efficiency cores).
struct CacheVariant {
  MRI_Cache_Info info;
  int instances;
  int first_seen;
};

bool same_cache(const MRI_Cache_Info& a, const MRI_Cache_Info& b) {
  return a.level == b.level && a.is_data == b.is_data && a.is_instruction == b.is_instruction &&
         a.size_bytes == b.size_bytes && a.line_size_bytes == b.line_size_bytes &&
         a.associativity == b.associativity && a.shared_by_cpus == b.shared_by_cpus;
}

// Data and unified caches before instruction caches of the same level.
int kind_rank(const MRI_Cache_Info& c) { return c.is_data ? 0 : 1; }

bool same_group(const CacheVariant& a, const CacheVariant& b) {
  return a.info.level == b.info.level && kind_rank(a.info) == kind_rank(b.info);
}

int count_of(hwloc_topology_t topo, hwloc_obj_type_t type) {
  const int n = hwloc_get_nbobjs_by_type(topo, type);
  return n > 0 ? n : 0;
}

// The caches of levels 1 to MRI_MAX_CACHE_LEVELS, ordered by level, data
// and unified before instruction, the variant with most instances first.
// When there are more variants than entries, every (level, kind) keeps its
// most common variant.
int collect_caches(hwloc_topology_t topo, MRI_Cache_Info* out) {
  static const hwloc_obj_type_t kTypes[] = {HWLOC_OBJ_L1CACHE,  HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE,
                                            HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3CACHE,  HWLOC_OBJ_L3ICACHE,
                                            HWLOC_OBJ_L4CACHE,  HWLOC_OBJ_L5CACHE};
  std::vector<CacheVariant> variants;
  for (hwloc_obj_type_t type : kTypes) {
    for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(topo, type, nullptr); obj;
         obj = hwloc_get_next_obj_by_type(topo, type, obj)) {
      const auto& a = obj->attr->cache;
      if (a.depth < 1 || a.depth > MRI_MAX_CACHE_LEVELS) continue;
      MRI_Cache_Info c;
      std::memset(&c, 0, sizeof c);
      c.level = int(a.depth);
      c.is_data = a.type != HWLOC_OBJ_CACHE_INSTRUCTION;
      c.is_instruction = a.type != HWLOC_OBJ_CACHE_DATA;
      c.size_bytes = (unsigned long long)a.size;
      c.line_size_bytes = int(a.linesize);
      c.associativity = a.associativity;  // hwloc: 0 unknown, -1 fully associative, as MRI
      const int sharing = obj->cpuset ? hwloc_bitmap_weight(obj->cpuset) : 0;
      c.shared_by_cpus = sharing > 0 ? sharing : 0;
      auto it = std::find_if(variants.begin(), variants.end(),
                             [&](const CacheVariant& v) { return same_cache(v.info, c); });
      if (it != variants.end())
        ++it->instances;
      else
        variants.push_back({c, 1, int(variants.size())});
    }
  }
  std::sort(variants.begin(), variants.end(), [](const CacheVariant& a, const CacheVariant& b) {
    if (a.info.level != b.info.level) return a.info.level < b.info.level;
    if (kind_rank(a.info) != kind_rank(b.info)) return kind_rank(a.info) < kind_rank(b.info);
    if (a.instances != b.instances) return a.instances > b.instances;
    return a.first_seen < b.first_seen;
  });
  std::vector<bool> take(variants.size(), false);
  int taken = 0;
  for (size_t i = 0; i < variants.size() && taken < kMaxCaches; ++i)
    if (i == 0 || !same_group(variants[i], variants[i - 1])) take[i] = true, ++taken;
  for (size_t i = 0; i < variants.size() && taken < kMaxCaches; ++i)
    if (!take[i]) take[i] = true, ++taken;
  int n = 0;
  for (size_t i = 0; i < variants.size(); ++i)
    if (take[i]) out[n++] = variants[i].info;
  return n;
}

}  // namespace

bool topology_from_hwloc(MRI_HW_Info* info) {
  // A library of another major API version than the headers libmri was
  // built with is not safe to call.
  if ((hwloc_get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) return false;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return false;
  // The whole machine, also the CPUs and nodes a cgroup or cpuset keeps
  // this process from: the application may run elsewhere than the tool.
  // Instruction caches are left out unless asked for.
  if (hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0 ||
      hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL) != 0 ||
      hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return false;
  }
  const int pus = count_of(topo, HWLOC_OBJ_PU);
  if (pus < 1) {
    hwloc_topology_destroy(topo);
    return false;
  }
  MRI_Cache_Info caches[kMaxCaches];
  const int nr_caches = collect_caches(topo, caches);
  info->nr_CPUs = pus;
  // Some platforms describe no cores or packages; hwloc always has a node.
  const int cores = count_of(topo, HWLOC_OBJ_CORE);
  info->nr_Cores = cores > 0 ? std::min(cores, pus) : pus;
  info->nr_Sockets = std::max(count_of(topo, HWLOC_OBJ_PACKAGE), 1);
  info->nr_NUMA_Nodes = std::max(count_of(topo, HWLOC_OBJ_NUMANODE), 1);
  info->nr_Cache_Levels = nr_caches;
  std::memcpy(info->cache, caches, sizeof(MRI_Cache_Info) * size_t(nr_caches));
#ifdef HWLOC_VERSION
  std::snprintf(info->topology_source, sizeof info->topology_source, "hwloc %s", HWLOC_VERSION);
#else
  const unsigned v = hwloc_get_api_version();
  std::snprintf(info->topology_source, sizeof info->topology_source, "hwloc %u.%u.%u", v >> 16, (v >> 8) & 0xff,
                v & 0xff);
#endif
  hwloc_topology_destroy(topo);
  return true;
}

#else  // !MRI_HAVE_HWLOC

bool topology_from_hwloc(MRI_HW_Info*) { return false; }

#endif

int system_information(MRI_HW_Info* info) {
  std::memset(info, 0, sizeof *info);
  if (!topology_from_hwloc(info)) topology_from_sysconf(info);
  info->time_entity = MRI_NANOSECONDS;
  fill_counter_information(info);
  clear_error();
  return MRI_OK;
}

}  // namespace mri::tool

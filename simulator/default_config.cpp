// default_config.cpp - the hierarchy of the machine we run on: hwloc first,
// then sysconf, then a documented fallback.
#include <unistd.h>

#include <algorithm>
#include <bit>

#include "cachesim.h"

#ifdef MRI_SIM_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace mri::sim {

namespace {

// Makes a cache description from the machine usable by the simulator: a
// power-of-two number of sets (the set index is a bit mask) and at most
// kMaxDefaultWays ways (each access scans up to `ways` tags, and a set of
// hundreds of ways makes every L3 lookup slow without changing the
// results of programs that fit). Unknown associativity becomes 8 ways, full
// associativity as many ways as allowed. The sets are the largest power of
// two at the reported associativity; the ways are then whatever fills the
// size, up to the cap. E.g. 480 MiB, 16-way, 64-byte lines (491520 sets):
// 2^18 sets x 30 ways = 480 MiB exactly; a 36 MiB 12-way L3: 2^15 sets x
// 18 ways, exact too. A size that no power-of-two x (<= 32) split matches
// is rounded down (at most by half).
bool normalise(uint64_t size, long ways, uint64_t line, LevelConfig* out) {
  if (size == 0 || line == 0 || !std::has_single_bit(line) || line < 8 || line > 4096) return false;
  if (ways < 0) ways = long(size / line);  // fully associative
  if (ways == 0) ways = 8;                 // unknown
  const uint64_t start_ways = std::min<uint64_t>(uint64_t(ways), kMaxDefaultWays);
  const uint64_t raw_sets = size / (line * start_ways);
  if (raw_sets == 0) return false;
  const uint64_t sets = std::bit_floor(raw_sets);
  const uint64_t new_ways = std::min<uint64_t>(size / (line * sets), kMaxDefaultWays);
  out->size_bytes = sets * line * new_ways;
  out->ways = uint32_t(new_ways);
  out->line_bytes = uint32_t(line);
  return true;
}

uint32_t online_cpus() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) return 1;
  return n > long(kMaxCores) ? kMaxCores : uint32_t(n);
}

#ifdef MRI_SIM_HAVE_HWLOC
bool from_hwloc(HierarchyConfig* out) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return false;
  bool ok = false;
  if (hwloc_topology_load(topo) == 0) {
    HierarchyConfig c;
    const int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    c.cores = pus < 1 ? 1 : pus > int(kMaxCores) ? kMaxCores : uint32_t(pus);
    const hwloc_obj_type_t types[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
                                      HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE};
    ok = true;
    for (hwloc_obj_type_t type : types) {
      hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, 0);
      if (!obj) break;
      LevelConfig l;
      if (!normalise(obj->attr->cache.size, obj->attr->cache.associativity, obj->attr->cache.linesize, &l)) {
        ok = false;
        break;
      }
      // Sharing: hardware threads under one instance of this cache.
      const int weight = obj->cpuset ? hwloc_bitmap_weight(obj->cpuset) : 1;
      l.shared_by = weight <= 1 ? 1 : uint32_t(weight) >= c.cores ? 0 : uint32_t(weight);
      c.levels.push_back(l);
    }
    ok = ok && !c.levels.empty() && validate_config(c).empty();
    if (ok) *out = c;
  }
  hwloc_topology_destroy(topo);
  return ok;
}
#endif

bool from_sysconf(HierarchyConfig* out) {
#if defined(_SC_LEVEL1_DCACHE_SIZE)
  HierarchyConfig c;
  c.cores = online_cpus();
  const int names[3][3] = {
      {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_ASSOC, _SC_LEVEL1_DCACHE_LINESIZE},
      {_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_ASSOC, _SC_LEVEL2_CACHE_LINESIZE},
      {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL3_CACHE_ASSOC, _SC_LEVEL3_CACHE_LINESIZE},
  };
  for (int i = 0; i < 3; ++i) {
    const long size = sysconf(names[i][0]);
    const long ways = sysconf(names[i][1]);
    const long line = sysconf(names[i][2]);
    if (size <= 0 || line <= 0) break;
    LevelConfig l;
    if (!normalise(uint64_t(size), ways < 0 ? 0 : ways, uint64_t(line), &l)) break;
    // sysconf does not tell sharing: L1 and L2 private, L3 shared by all.
    l.shared_by = i < 2 ? 1 : 0;
    c.levels.push_back(l);
  }
  if (c.levels.empty() || !validate_config(c).empty()) return false;
  *out = c;
  return true;
#else
  (void)out;
  return false;
#endif
}

}  // namespace

HierarchyConfig default_config(std::string* source) {
  HierarchyConfig c;
#ifdef MRI_SIM_HAVE_HWLOC
  if (from_hwloc(&c)) {
    if (source) *source = "hwloc";
    return c;
  }
#endif
  if (from_sysconf(&c)) {
    if (source) *source = "sysconf";
    return c;
  }
  c = HierarchyConfig{};
  c.cores = online_cpus();
  c.levels = {LevelConfig{32 << 10, 8, 64}, LevelConfig{1 << 20, 16, 64}, LevelConfig{8 << 20, 16, 64}};
  c.levels[2].shared_by = 0;
  if (source) *source = "fallback";
  return c;
}

}  // namespace mri::sim

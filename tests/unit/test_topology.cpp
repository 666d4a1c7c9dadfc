// The two sources of MRI_Get_System_Information's machine facts
// (libmri/topology.cpp): the sysconf fallback, and hwloc where it was built in.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "topology.h"

namespace {

MRI_HW_Info empty() {
  MRI_HW_Info info;
  std::memset(&info, 0, sizeof info);
  return info;
}

TEST(Topology, SysconfFallbackDescribesTheMachine) {
  MRI_HW_Info info = empty();
  mri::tool::topology_from_sysconf(&info);
  EXPECT_STREQ(info.topology_source, "sysconf");
  EXPECT_EQ(info.nr_CPUs, int(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(info.nr_Cores, info.nr_CPUs);
  EXPECT_EQ(info.nr_Sockets, 1);
  EXPECT_EQ(info.nr_NUMA_Nodes, 1);
  ASSERT_GE(info.nr_Cache_Levels, 0);
  ASSERT_LE(info.nr_Cache_Levels, MRI_MAX_CACHE_LEVELS * 2);
  for (int i = 0; i < info.nr_Cache_Levels; ++i) {
    EXPECT_GT(info.cache[i].size_bytes, 0u);
    EXPECT_EQ(info.cache[i].shared_by_cpus, 0);  // unknown
    if (i > 0) {
      EXPECT_LE(info.cache[i - 1].level, info.cache[i].level);
    }
  }
}

TEST(Topology, HwlocAgreesWithSysconf) {
  MRI_HW_Info hw = empty();
  if (!mri::tool::topology_from_hwloc(&hw)) GTEST_SKIP() << "libmri has no hwloc (or it failed)";
  MRI_HW_Info sc = empty();
  mri::tool::topology_from_sysconf(&sc);
  EXPECT_EQ(std::strncmp(hw.topology_source, "hwloc ", 6), 0) << hw.topology_source;
  EXPECT_EQ(hw.nr_CPUs, sc.nr_CPUs);
  EXPECT_GE(hw.nr_Cores, 1);
  EXPECT_LE(hw.nr_Cores, hw.nr_CPUs);
  // glibc's level 1 data cache is one of hwloc's.
  for (int i = 0; i < sc.nr_Cache_Levels; ++i) {
    const MRI_Cache_Info& s = sc.cache[i];
    if (s.level != 1 || !s.is_data) continue;
    bool found = false;
    for (int k = 0; k < hw.nr_Cache_Levels; ++k) {
      const MRI_Cache_Info& h = hw.cache[k];
      found = found || (h.level == 1 && h.is_data && !h.is_instruction && h.size_bytes == s.size_bytes &&
                        h.line_size_bytes == s.line_size_bytes);
    }
    EXPECT_TRUE(found) << "no L1 data cache of " << s.size_bytes << " bytes from hwloc";
  }
}

}  // namespace

// snapshot.h - every count of a hierarchy, and their exact comparison:
// the tests that run one stream two ways (in parts, condensed) and expect
// the same result.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cachesim.h"

namespace mri::sim::testing {

struct Snapshot {
  std::vector<LevelCounters> levels;  // [core * levels + level], then I1 per core
  std::vector<ReferenceCounts> refs;  // per core
  std::vector<MonitorResult> monitors;
};

inline Snapshot snapshot(const Hierarchy& h, const std::vector<int>& monitors) {
  Snapshot s;
  for (uint32_t core = 0; core < h.cores(); ++core) {
    for (uint32_t level = 0; level < h.levels(); ++level) s.levels.push_back(h.counters(core, level));
    s.levels.push_back(h.instruction_counters(core));
    s.refs.push_back(h.references(core));
  }
  for (int id : monitors) {
    MonitorResult r;
    EXPECT_TRUE(h.monitor_result(id, &r));
    // The allocation-free readers give the same sums.
    std::vector<uint64_t> totals(r.events.size()), bins(r.bins);
    EXPECT_TRUE(h.monitor_totals(id, totals.data(), totals.size()));
    EXPECT_EQ(totals, r.totals);
    for (size_t e = 0; e < r.events.size(); ++e) {
      EXPECT_TRUE(h.monitor_bin_counts(id, e, bins.data(), bins.size()));
      for (uint32_t b = 0; b < r.bins; ++b) EXPECT_EQ(bins[b], r.count(b, e));
    }
    s.monitors.push_back(r);
  }
  return s;
}

inline void expect_equal(const Snapshot& a, const Snapshot& b, const std::string& what) {
  ASSERT_EQ(a.levels.size(), b.levels.size());
  for (size_t i = 0; i < a.levels.size(); ++i) {
    const LevelCounters &x = a.levels[i], &y = b.levels[i];
    EXPECT_EQ(x.read_hits, y.read_hits) << what << " level entry " << i;
    EXPECT_EQ(x.read_misses, y.read_misses) << what << " level entry " << i;
    EXPECT_EQ(x.write_hits, y.write_hits) << what << " level entry " << i;
    EXPECT_EQ(x.write_misses, y.write_misses) << what << " level entry " << i;
    EXPECT_EQ(x.fetch_hits, y.fetch_hits) << what << " level entry " << i;
    EXPECT_EQ(x.fetch_misses, y.fetch_misses) << what << " level entry " << i;
    EXPECT_EQ(x.write_backs, y.write_backs) << what << " level entry " << i;
    EXPECT_EQ(x.invalidations, y.invalidations) << what << " level entry " << i;
  }
  for (size_t core = 0; core < a.refs.size(); ++core) {
    EXPECT_EQ(a.refs[core].reads, b.refs[core].reads) << what << " core " << core;
    EXPECT_EQ(a.refs[core].writes, b.refs[core].writes) << what << " core " << core;
    EXPECT_EQ(a.refs[core].modifies, b.refs[core].modifies) << what << " core " << core;
    EXPECT_EQ(a.refs[core].instructions, b.refs[core].instructions) << what << " core " << core;
  }
  ASSERT_EQ(a.monitors.size(), b.monitors.size());
  for (size_t m = 0; m < a.monitors.size(); ++m) {
    EXPECT_EQ(a.monitors[m].events, b.monitors[m].events) << what << " monitor " << m;
    EXPECT_EQ(a.monitors[m].totals, b.monitors[m].totals) << what << " monitor " << m;
    EXPECT_EQ(a.monitors[m].bin_counts, b.monitors[m].bin_counts) << what << " monitor " << m;
  }
}

}  // namespace mri::sim::testing

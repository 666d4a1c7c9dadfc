// Address-range monitors: ranges, bins, events, enabling and disabling while
// the cache state stays warm.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cachesim.h"

namespace {

using mri::sim::Event;
using mri::sim::EventKind;
using mri::sim::Hierarchy;
using mri::sim::MonitorResult;
using mri::sim::MonitorSpec;

std::unique_ptr<Hierarchy> make(const std::string& text) {
  mri::sim::HierarchyConfig c;
  EXPECT_EQ(mri::sim::parse_config(text, c), "");
  std::string error;
  return Hierarchy::create(c, &error);
}

constexpr uint64_t kBegin = 0x10000, kEnd = 0x10400;  // 1 KiB, 16 lines

// Reads one byte of every line in [0xff00, 0x10500): 24 lines, 4 below the
// range, 16 in it, 4 above.
void sweep(Hierarchy& h, uint32_t core = 0) {
  for (uint64_t a = 0xff00; a < 0x10500; a += 64) h.access(core, a, 1, mri::sim::kRead);
}

MonitorResult result(const Hierarchy& h, int id) {
  MonitorResult r;
  EXPECT_TRUE(h.monitor_result(id, &r));
  return r;
}

TEST(Monitors, RangeBinsAndWarmCacheWhileDisabled) {
  auto h = make("L1:4K,4,64;L2:64K,8,64");
  MonitorSpec spec;
  spec.begin = kBegin;
  spec.end = kEnd;
  spec.bins = 4;  // 256 bytes = 4 lines each
  spec.events = {{0, EventKind::kReadMiss}, {0, EventKind::kReadHit}, {0, EventKind::kReadMiss}};
  std::string error;
  const int id = h->add_monitor(spec, &error);
  ASSERT_GE(id, 0) << error;

  sweep(*h);  // cold: every line misses
  MonitorResult r = result(*h, id);
  ASSERT_EQ(r.events.size(), 2u);  // duplicates dropped, sorted by kind
  EXPECT_EQ(r.events[0], (Event{0, EventKind::kReadHit}));
  EXPECT_EQ(r.events[1], (Event{0, EventKind::kReadMiss}));
  EXPECT_EQ(r.bin_bytes, 256u);
  EXPECT_EQ(r.totals[0], 0u);
  EXPECT_EQ(r.totals[1], 16u);
  for (uint32_t b = 0; b < 4; ++b) EXPECT_EQ(r.count(b, 1), 4u) << "bin " << b;
  EXPECT_EQ(h->counters(0, 0).read_misses, 24u);

  // Disabled: the 24 lines (1.5 KiB) still go through L1 and hit there,
  // but the monitor does not count.
  ASSERT_TRUE(h->set_monitor_enabled(id, false));
  sweep(*h);
  EXPECT_EQ(h->counters(0, 0).read_hits, 24u);
  r = result(*h, id);
  EXPECT_EQ(r.totals[0], 0u);
  EXPECT_EQ(r.totals[1], 16u);

  // Enabled again: the cache was kept warm, so the monitor sees hits.
  ASSERT_TRUE(h->set_monitor_enabled(id, true));
  sweep(*h);
  r = result(*h, id);
  EXPECT_EQ(r.totals[0], 16u);
  EXPECT_EQ(r.totals[1], 16u);
  EXPECT_EQ(r.count(3, 0), 4u);

  ASSERT_TRUE(h->reset_monitor(id));
  EXPECT_EQ(result(*h, id).totals[1], 0u);
  ASSERT_TRUE(h->remove_monitor(id));
  EXPECT_FALSE(h->remove_monitor(id));
  MonitorResult gone;
  EXPECT_FALSE(h->monitor_result(id, &gone));
  EXPECT_FALSE(h->set_monitor_enabled(id, true));
}

// A frozen monitor (its data structure ended) keeps its counts and is
// never enabled again; the others go on counting.
TEST(Monitors, FrozenMonitorStaysDisabled) {
  auto h = make("L1:4K,4,64;L2:64K,8,64");
  MonitorSpec spec;
  spec.begin = kBegin;
  spec.end = kEnd;
  spec.events = {{0, EventKind::kReadMiss}, {0, EventKind::kReadHit}};
  std::string error;
  const int old_id = h->add_monitor(spec, &error), new_id = h->add_monitor(spec, &error);
  ASSERT_GE(old_id, 0) << error;
  ASSERT_GE(new_id, 0) << error;
  sweep(*h);
  ASSERT_TRUE(h->freeze_monitor(old_id));
  EXPECT_TRUE(h->set_monitor_enabled(old_id, true));  // accepted, and ignored
  sweep(*h);
  EXPECT_EQ(result(*h, old_id).totals[1], 16u);  // the first sweep's misses only
  EXPECT_EQ(result(*h, old_id).totals[0], 0u);
  EXPECT_EQ(result(*h, new_id).totals[0], 16u);  // the second sweep's hits
  EXPECT_FALSE(h->freeze_monitor(12345));
}

// 1000 bytes in 3 bins: ceil(1000 / 3) = 334 bytes; bins [0, 334),
// [334, 668), [668, 1000). An 8-byte write at offset 330 and the reads at
// 333, 334, 667, 668 and 999.
TEST(Monitors, UnequalBinsAndWrites) {
  auto h = make("L1:4K,4,64");
  MonitorSpec spec;
  spec.begin = 0x20000;
  spec.end = 0x20000 + 1000;
  spec.bins = 3;
  spec.events = {{0, EventKind::kWriteMiss}, {0, EventKind::kWriteHit}, {0, EventKind::kReadMiss},
                 {0, EventKind::kReadHit}};
  std::string error;
  const int id = h->add_monitor(spec, &error);
  ASSERT_GE(id, 0) << error;
  h->access(0, 0x20000 + 328, 4, mri::sim::kWrite);  // line 0x20140: miss, bin 0
  for (uint64_t off : {333, 334, 667, 668, 999}) h->access(0, 0x20000 + off, 1, mri::sim::kRead);
  // 333: line 0x20140 hit (bin 0); 334: same line, hit (bin 1); 667 = 0x29b:
  // line 0x20280 miss (bin 1); 668: same line, hit (bin 2); 999 = 0x3e7: line
  // 0x203c0 miss (bin 2).
  const MonitorResult r = result(*h, id);
  EXPECT_EQ(r.bin_bytes, 334u);
  // events sorted: read_hit, read_miss, write_hit, write_miss
  EXPECT_EQ(r.count(0, 0), 1u);
  EXPECT_EQ(r.count(0, 3), 1u);
  EXPECT_EQ(r.count(1, 0), 1u);
  EXPECT_EQ(r.count(1, 1), 1u);
  EXPECT_EQ(r.count(2, 0), 1u);
  EXPECT_EQ(r.count(2, 1), 1u);
  EXPECT_EQ(r.totals[0] + r.totals[1] + r.totals[2] + r.totals[3], 6u);
}

// A whole-address-space monitor counts what the level counters count; a
// monitor restricted to core 1 sees only core 1's references.
TEST(Monitors, WholeAddressSpaceAndPerCore) {
  auto h = make("L1:1K,2,64;L2:8K,4,64,shared;cores=2");
  MonitorSpec all;
  all.whole_address_space = true;
  all.events = {{0, EventKind::kReadMiss}, {1, EventKind::kReadMiss}, {0, EventKind::kWriteMiss}};
  MonitorSpec core1 = all;
  core1.core = 1;
  std::string error;
  const int id_all = h->add_monitor(all, &error);
  const int id_core1 = h->add_monitor(core1, &error);
  ASSERT_GE(id_all, 0);
  ASSERT_GE(id_core1, 0);
  sweep(*h, 0);
  sweep(*h, 1);
  for (uint64_t a = 0x30000; a < 0x30800; a += 8) h->access(1, a, 8, mri::sim::kWrite);
  const MonitorResult r = result(*h, id_all);
  // sorted: L1 read_miss, L1 write_miss, L2 read_miss
  EXPECT_EQ(r.totals[0], h->total_counters(0).read_misses);
  EXPECT_EQ(r.totals[1], h->total_counters(0).write_misses);
  EXPECT_EQ(r.totals[2], h->total_counters(1).read_misses);
  EXPECT_EQ(r.totals[0], 48u);  // 24 lines twice (1 KiB L1 cannot keep 1.5 KiB)
  EXPECT_EQ(r.totals[1], 32u);  // 2 KiB of writes, 32 lines
  EXPECT_EQ(r.totals[2], 24u);  // the shared L2 misses only the first sweep
  const MonitorResult r1 = result(*h, id_core1);
  EXPECT_EQ(r1.totals[0], h->counters(1, 0).read_misses);
  EXPECT_EQ(r1.totals[1], 32u);
  EXPECT_EQ(r1.totals[2], 0u);
}

// Threads 0 and 2 of a program share simulated core 0 of two: a monitor
// restricted to thread 2 sees only the batches simulated with core
// argument 2, one restricted to core 0 both threads', one restricted to
// thread 1 none of them. Split or not, the same.
TEST(Monitors, PerThreadOnASharedCore) {
  for (const uint32_t modulus : {0u, 2u}) {
    mri::sim::HierarchyConfig c;
    ASSERT_EQ(mri::sim::parse_config("L1:1K,2,64;L2:8K,4,64;cores=2", c), "");
    std::string error;
    auto h = Hierarchy::create(c, &error, modulus);
    ASSERT_TRUE(h) << error;
    MonitorSpec spec;
    spec.whole_address_space = true;
    spec.events = {{0, EventKind::kReadMiss}};
    MonitorSpec core0 = spec, thread0 = spec, thread1 = spec, thread2 = spec;
    core0.core = 0;
    thread0.thread = 0;
    thread1.thread = 1;
    thread2.thread = 2;
    thread2.core = 0;  // both restrictions: both must match
    const int id_core0 = h->add_monitor(core0, &error), id_thread0 = h->add_monitor(thread0, &error);
    const int id_thread1 = h->add_monitor(thread1, &error), id_thread2 = h->add_monitor(thread2, &error);
    ASSERT_GE(std::min({id_core0, id_thread0, id_thread1, id_thread2}), 0) << error;
    sweep(*h, 0);  // 24 lines, all missing
    std::vector<mri::sim::Access> batch;
    for (uint64_t a = 0x40000; a < 0x40400; a += 64) batch.push_back({a, 8, mri::sim::kRead});
    h->simulate(2, batch.data(), batch.size());  // 16 more lines on core 0, as thread 2
    EXPECT_EQ(result(*h, id_core0).totals[0], 40u) << "modulus " << modulus;
    EXPECT_EQ(result(*h, id_thread0).totals[0], 24u) << "modulus " << modulus;
    EXPECT_EQ(result(*h, id_thread1).totals[0], 0u) << "modulus " << modulus;
    EXPECT_EQ(result(*h, id_thread2).totals[0], 16u) << "modulus " << modulus;
  }
}

// Write-backs are attributed to the evicted line and invalidations to the
// invalidated line, both to the core that held it.
TEST(Monitors, WriteBacksAndInvalidationsLandOnTheirLines) {
  auto h = make("L1:128,1,64;L2:8K,4,64,shared;cores=2");  // L1: 2 sets, 1 way
  MonitorSpec spec;
  spec.begin = 0x40000;
  spec.end = 0x40040;  // line X only
  spec.events = {{0, EventKind::kWriteBack}, {0, EventKind::kInvalidation}, {0, EventKind::kReadMiss}};
  std::string error;
  const int id = h->add_monitor(spec, &error);
  ASSERT_GE(id, 0) << error;
  h->access(0, 0x40000, 8, mri::sim::kWrite);  // X dirty in core 0
  h->access(0, 0x40080, 8, mri::sim::kRead);   // same set: evicts X -> write-back of X
  h->access(1, 0x40000, 8, mri::sim::kRead);   // core 1 reads X (read miss, in range)
  h->access(0, 0x40000, 8, mri::sim::kWrite);  // core 0 writes X: core 1's copy invalidated
  const MonitorResult r = result(*h, id);
  // sorted: read_miss, write_back, invalidation
  EXPECT_EQ(r.totals[0], 1u);
  EXPECT_EQ(r.totals[1], 1u);
  EXPECT_EQ(r.totals[2], 1u);
}

// The two lines of a straddling access count in their own bins.
TEST(Monitors, StraddlingAccessSplitsAcrossBins) {
  auto h = make("L1:4K,4,64");
  MonitorSpec spec;
  spec.begin = kBegin;
  spec.end = kBegin + 128;
  spec.bins = 2;
  spec.events = {{0, EventKind::kReadMiss}};
  std::string error;
  const int id = h->add_monitor(spec, &error);
  ASSERT_GE(id, 0) << error;
  h->access(0, kBegin + 60, 8, mri::sim::kRead);
  const MonitorResult r = result(*h, id);
  EXPECT_EQ(r.count(0, 0), 1u);
  EXPECT_EQ(r.count(1, 0), 1u);
}

// A range that starts part-way into its first bin (histogram pieces packed
// after another data structure): byte begin + k is in bin (phase + k) / width.
TEST(Monitors, BinPhaseShiftsTheBins) {
  auto h = make("L1:4K,4,64;L2:64K,8,64");
  MonitorSpec spec;
  spec.begin = kBegin;  // 16 lines
  spec.end = kEnd;
  spec.bin_bytes = 384;  // 6 lines
  spec.bin_phase = 128;  // the range starts 2 lines into bin 0
  spec.bins = 3;         // lines 0-3 | 4-9 | 10-15
  spec.events = {{0, EventKind::kReadMiss}};
  std::string error;
  const int id = h->add_monitor(spec, &error);
  ASSERT_GE(id, 0) << error;
  sweep(*h);
  const MonitorResult r = result(*h, id);
  EXPECT_EQ(r.bin_bytes, 384u);
  EXPECT_EQ(r.count(0, 0), 4u);
  EXPECT_EQ(r.count(1, 0), 6u);
  EXPECT_EQ(r.count(2, 0), 6u);
  uint64_t bins[3] = {0, 0, 0}, total = 0;
  ASSERT_TRUE(h->monitor_bin_counts(id, 0, bins, 3));
  ASSERT_TRUE(h->monitor_totals(id, &total, 1));
  EXPECT_EQ(bins[0], 4u);
  EXPECT_EQ(bins[2], 6u);
  EXPECT_EQ(total, 16u);
  EXPECT_FALSE(h->monitor_bin_counts(id, 1, bins, 3));  // one event only
  EXPECT_FALSE(h->monitor_totals(id + 1, &total, 1));

  spec.bins = 4;  // does not match the geometry
  EXPECT_EQ(h->add_monitor(spec, &error), -1);
  EXPECT_EQ(error, "bins (4) must be 3 for this range, bin_bytes and bin_phase");
  spec.bins = 3;
  spec.bin_phase = 384;
  EXPECT_EQ(h->add_monitor(spec, &error), -1);
  EXPECT_EQ(error, "bin_phase must be below bin_bytes");
}

// A monitor that counts no L1 hits lets the inline path take its range's
// L1 hits (they produce no event it counts): its miss counts must equal
// those of the same range with hits counted too, and of no monitor at all.
TEST(Monitors, MissOnlyMonitorCountsLikeOneWithHits) {
  std::vector<mri::sim::Access> stream;
  uint64_t x = 12345;
  for (int i = 0; i < 100000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t addr = 0x20000 + (x >> 33) % 0x8000;  // 32 KiB: half of it monitored
    stream.push_back({addr & ~7ull, 8, (x >> 20) % 3 == 0 ? mri::sim::kWrite : mri::sim::kRead});
  }
  auto run = [&](bool with_hits) {
    auto h = make("L1:4K,4,64;L2:64K,8,64");
    MonitorSpec spec;
    spec.begin = 0x20000;
    spec.end = 0x24000;
    spec.bins = 4;
    spec.events = {{0, EventKind::kReadMiss}, {0, EventKind::kWriteMiss}, {1, EventKind::kReadMiss}};
    if (with_hits) spec.events.push_back({0, EventKind::kReadHit});
    std::string error;
    const int id = h->add_monitor(spec, &error);
    EXPECT_GE(id, 0) << error;
    h->simulate(0, stream.data(), stream.size());
    MonitorResult r = result(*h, id);
    std::vector<uint64_t> misses;
    for (size_t e = 0; e < r.events.size(); ++e)
      if (r.events[e].kind != EventKind::kReadHit)
        for (uint32_t b = 0; b < 4; ++b) misses.push_back(r.count(b, e));
    misses.push_back(h->counters(0, 0).read_misses);
    return misses;
  };
  const auto without = run(false), with = run(true);
  EXPECT_EQ(without, with);
  EXPECT_GT(without[0], 0u);
}

TEST(Monitors, RejectsBadSpecs) {
  auto h = make("L1:4K,4,64;L2:64K,8,64;cores=2");
  std::string error;
  MonitorSpec spec;
  spec.begin = 0x1000;
  spec.end = 0x1000;
  spec.events = {{0, EventKind::kReadMiss}};
  EXPECT_EQ(h->add_monitor(spec, &error), -1);
  EXPECT_EQ(error, "the range is empty: end must be above begin");
  spec.end = 0x2000;
  spec.bins = 0;
  EXPECT_EQ(h->add_monitor(spec, &error), -1);
  EXPECT_EQ(error, "bins must be at least 1");
  spec.bins = 1;
  spec.events = {{2, EventKind::kReadMiss}};
  EXPECT_EQ(h->add_monitor(spec, &error), -1);
  EXPECT_EQ(error, "event level 2 (L3) is beyond the 2 data levels");
  spec.events.clear();
  EXPECT_EQ(h->add_monitor(spec, &error), -1);
  EXPECT_EQ(error, "no event to count");
  spec.events = {{0, EventKind::kReadMiss}};
  spec.core = 2;
  EXPECT_EQ(h->add_monitor(spec, &error), -1);
  EXPECT_EQ(error, "core 2 is outside -1..1");
  spec.core = -1;
  spec.thread = -2;
  EXPECT_EQ(h->add_monitor(spec, &error), -1);
  EXPECT_EQ(error, "thread -2 is below -1");
  spec.thread = -1;
  spec.whole_address_space = true;
  spec.bins = 2;
  EXPECT_EQ(h->add_monitor(spec, &error), -1);
  EXPECT_EQ(error, "a whole-address-space monitor has exactly 1 bin, not 2");
  spec.bins = 1;
  EXPECT_GE(h->add_monitor(spec, &error), 0);
}

// The kernels for the common geometries (an L1 of 64 sets of 8 or 12 ways
// over an L2 of 8 or 16, 64-byte lines; with AVX-512 their sets are
// searched with vector compares, Hierarchy::vector_lookups) report every
// event of their read path to the monitors: a monitor of the whole address
// space counts exactly what the levels count, with and without L1 hits
// among its events (the inline path leaves monitored hits to the general
// path only when they are counted). CTest runs this suite with
// MRI_CACHESIM_VECTOR=0 and =1 too (test_set_search.cpp).
TEST(Monitors, CommonGeometriesReportEveryEvent) {
  for (const char* text : {"L1:32K,8,64;L2:256K,8,64", "L1:32K,8,64;L2:512K,16,64", "L1:48K,12,64;L2:1M,16,64",
                           "L1:48K,12,64;L2:256K,8,64"}) {
    for (bool hits : {true, false}) {
      const std::string what = std::string(text) + (hits ? ", hits counted" : ", misses only");
      auto h = make(text);
      MonitorSpec spec;
      spec.whole_address_space = true;
      for (uint8_t level : {uint8_t{0}, uint8_t{1}}) {
        spec.events.push_back({level, EventKind::kReadMiss});
        spec.events.push_back({level, EventKind::kWriteMiss});
        spec.events.push_back({level, EventKind::kWriteBack});
        if (hits || level == 1) {
          spec.events.push_back({level, EventKind::kReadHit});
          spec.events.push_back({level, EventKind::kWriteHit});
        }
      }
      std::string error;
      const int id = h->add_monitor(spec, &error);
      ASSERT_GE(id, 0) << error;
      // Hot regions and a cold one of 4 MiB, at least four times L2: hits
      // and misses at both levels, deep in the sets too.
      std::vector<mri::sim::Access> batch;
      uint64_t x = 88172645463325252ull;  // xorshift64
      for (int i = 0; i < 300000; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const uint64_t span = (x >> 40) % 4 == 0 ? 4u << 20 : (x >> 40) % 4 == 1 ? 64u << 10 : 16u << 10;
        const uint64_t addr = 0x1000000 + ((x >> 8) % span & ~uint64_t{7});
        batch.push_back({addr, 8, (x >> 20) % 10 < 3 ? mri::sim::kWrite : mri::sim::kRead});
      }
      for (size_t i = 0; i < batch.size(); i += 4096)
        h->simulate(0, batch.data() + i, std::min<size_t>(4096, batch.size() - i));
      const MonitorResult r = result(*h, id);
      for (size_t e = 0; e < r.events.size(); ++e) {
        const mri::sim::LevelCounters c = h->counters(0, r.events[e].level);
        const uint64_t expected[] = {c.read_hits, c.read_misses, c.write_hits, c.write_misses, c.write_backs};
        const auto kind = size_t(r.events[e].kind);
        EXPECT_EQ(r.totals[e], expected[kind]) << what << ", level " << r.events[e].level + 1 << " "
                                               << mri::sim::event_kind_name(r.events[e].kind);
        EXPECT_GT(r.totals[e], 1000u) << what << ", level " << r.events[e].level + 1 << " "
                                      << mri::sim::event_kind_name(r.events[e].kind);
      }
    }
  }
}

}  // namespace

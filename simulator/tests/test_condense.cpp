// Condensed batches (Hierarchy::condense): a batch without the references
// that can only hit the most recent way of their L1 set, simulated with
// their count, gives exactly the counts and monitor results of the whole
// batch; where that cannot be known (another L1, cachegrind's model, a
// monitor of L1 hits) nothing is dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cachesim.h"
#include "snapshot.h"

namespace {

using mri::sim::Access;
using mri::sim::AccessType;
using mri::sim::Condensed;
using mri::sim::EventKind;
using mri::sim::Hierarchy;
using mri::sim::HierarchyConfig;
using mri::sim::MonitorSpec;
using mri::sim::testing::expect_equal;
using mri::sim::testing::snapshot;

std::unique_ptr<Hierarchy> make(const std::string& text, uint32_t modulus = 0, bool deferred = false) {
  HierarchyConfig c;
  EXPECT_EQ(mri::sim::parse_config(text, c), "") << text;
  std::string error;
  auto h = Hierarchy::create(c, &error, modulus, deferred);
  EXPECT_NE(h, nullptr) << error;
  return h;
}

struct Random {
  uint64_t x = 88172645463325252ull;
  uint64_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

constexpr uint64_t kBase = 0x5555'5555'0000ull;

// The ikj multiply as the instrumented program records it (16-byte halves
// of B and C, 16 bytes past a line boundary): most references hit the
// most recent way.
std::vector<Access> unit_stride(size_t n) {
  std::vector<Access> s;
  const uint64_t a = kBase + 16, b = a + 256 * 256 * 8, c = b + 256 * 256 * 8;
  for (uint64_t i = 0; s.size() < n; ++i)
    for (uint64_t k = 0; k < 256 && s.size() < n; ++k) {
      s.push_back({a + (i * 256 + k) * 8, 8, mri::sim::kRead});
      for (uint64_t j = 0; j < 256; j += 4) {
        const uint64_t bj = b + (k * 256 + j) * 8, cj = c + (i % 64 * 256 + j) * 8;
        s.push_back({bj, 16, mri::sim::kRead});
        s.push_back({bj + 16, 16, mri::sim::kRead});
        s.push_back({cj, 16, mri::sim::kRead});
        s.push_back({cj + 16, 16, mri::sim::kRead});
        s.push_back({cj, 16, mri::sim::kWrite});
        s.push_back({cj + 16, 16, mri::sim::kWrite});
      }
    }
  s.resize(n);
  return s;
}

// Walks with small steps over four arrays, a run on one at a time, reads
// and writes, with now and
// then an instruction fetch, a modify, a reference across lines, a jump
// far away (other high address bits) and a run in one set that evicts
// from it: the cases the rule must get right, in a stream where it often
// drops.
std::vector<Access> walks(size_t n, uint64_t seed) {
  Random r;
  r.x ^= seed;
  std::vector<Access> s;
  uint64_t at[4] = {kBase, kBase + 0x10000, kBase + 0x23440, kBase + 0x40000};
  uint64_t* walking = &at[0];
  while (s.size() < n) {
    const uint64_t pick = r.below(1000);
    if (r.below(16) == 0) walking = &at[r.below(4)];  // runs of 16 references on average
    uint64_t& p = *walking;
    if (pick < 10) {
      s.push_back({0x401000 + r.below(4096), 4, mri::sim::kInstruction});
    } else if (pick < 20) {
      s.push_back({p, 8, mri::sim::kModify});
    } else if (pick < 28) {
      s.push_back({(p | 63) - 3, 8, AccessType(r.below(2))});  // across two lines
    } else if (pick < 33) {
      // Far away: a stack, or the same low 32 bits of the line number as p.
      const uint64_t far = r.below(2) ? 0x7ffc'0000'0000ull + (r.below(1 << 16) & ~uint64_t{7})
                                      : (p & ~uint64_t{7}) + (uint64_t{1} << 38);
      s.push_back({far, 8, AccessType(r.below(2))});
    } else if (pick < 40) {
      // Lines 64 sets apart (4 KiB): one set (or slot), until the ways run out.
      const uint64_t start = p & ~uint64_t{63};
      for (uint64_t w = 0, m = 1 + r.below(20); w < m; ++w)
        s.push_back({start + w * 4096, 8, AccessType(r.below(2))});
    } else {
      const uint32_t size = uint32_t(8 << r.below(2));  // aligned to its size: within one line
      s.push_back({p & ~uint64_t{size - 1}, size, AccessType(r.below(3) == 0)});  // writes a third
      p += r.below(24);
      if (r.below(50) == 0) p -= r.below(2048);
    }
  }
  s.resize(n);
  return s;
}

// Uniformly random references of every kind and size, in 40 KB: few drops.
std::vector<Access> scattered(size_t n) {
  Random r;
  std::vector<Access> s;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = r.next();
    s.push_back({kBase + (x >> 8) % 40000, uint32_t(1 + (x >> 40) % 16), AccessType((x >> 56) % 4)});
  }
  return s;
}

// Monitors that condensing leaves alone (none counts L1 hits): L1 misses
// in bins, L2 hits and misses, write-backs and invalidations, and a whole
// address space monitor of core 1's L1 misses.
std::vector<int> add_monitors(Hierarchy& h) {
  std::vector<int> ids;
  std::string error;
  MonitorSpec hist;
  hist.begin = kBase;
  hist.end = kBase + 0x50000;
  hist.bins = 17;
  hist.events = {{0, EventKind::kReadMiss}, {0, EventKind::kWriteMiss}, {0, EventKind::kWriteBack},
                 {0, EventKind::kInvalidation}};
  if (h.levels() > 1) hist.events.push_back({1, EventKind::kReadHit});
  ids.push_back(h.add_monitor(hist, &error));
  MonitorSpec whole;
  whole.whole_address_space = true;
  whole.events = {{0, EventKind::kReadMiss}, {0, EventKind::kWriteMiss}};
  whole.core = int32_t(h.cores() - 1);
  ids.push_back(h.add_monitor(whole, &error));
  for (int id : ids) EXPECT_GE(id, 0) << error;
  return ids;
}

bool same(const Access& x, const Access& y) { return x.addr == y.addr && x.size == y.size && x.type == y.type; }

// Simulates `stream` whole in one hierarchy and condensed in another, in
// batches of varying sizes (1 to 4096, most not a multiple of 8) that
// alternate between the cores; checks each condensed batch against its
// input (the kept references in order, the dropped ones counted) and the
// two hierarchies' counts at the end. `split`: the condensed one is
// created deferred and split by 4 halfway (a dropped reference is counted
// whatever the parts). Returns the share of references kept.
double compare(const std::string& text, const std::vector<Access>& stream, const std::string& what,
               bool split = false) {
  auto whole = make(text);
  auto condensed = split ? make(text, 4, true) : make(text);
  const std::vector<int> ids = add_monitors(*whole);
  EXPECT_EQ(add_monitors(*condensed), ids);
  Random r;
  std::vector<Access> out(4096);
  size_t kept_all = 0, batch = 0;
  for (size_t i = 0; i < stream.size(); ++batch) {
    const size_t n = std::min<size_t>(stream.size() - i, batch % 5 == 0 ? 4096 : 1 + r.below(700));
    const uint32_t core = uint32_t(batch % whole->cores());
    if (split && i >= stream.size() / 2 && condensed->split_mask() == 0) {
      EXPECT_TRUE(condensed->split());
    }
    whole->simulate(core, stream.data() + i, n);
    Condensed dropped;
    const size_t kept = condensed->condense(stream.data() + i, n, out.data(), &dropped);
    EXPECT_EQ(kept + dropped.reads + dropped.writes, n) << what;
    // The kept references are the batch's, in order.
    size_t at = 0;
    for (size_t j = 0; j < n && at < kept; ++j) at += same(stream[i + j], out[at]);
    EXPECT_EQ(at, kept) << what << ": the kept references are not a subsequence of the batch";
    condensed->simulate(core, out.data(), kept, dropped);
    kept_all += kept;
    i += n;
  }
  expect_equal(snapshot(*whole, ids), snapshot(*condensed, ids), what);
  return double(kept_all) / double(stream.size());
}

// Hierarchies condensing applies to: the Zen 5 guest's (48 KiB 12-way),
// a common 32 KiB 8-way one over three levels and two cores (coherence),
// a 2-way L1 of 8 sets (evictions within a few references), and one of 256
// sets (four sets to a slot of the rule).
const char* const kConfigs[] = {
    "L1:48K,12,64;L2:1M,16,64;L3:32M,16,64,shared;cores=2",
    "L1:32K,8,64;L2:1M,16,64;L3:8M,16,64,shared;cores=2",
    "L1:1K,2,64;L2:8K,4,64",
    "L1:128K,8,64;L2:1M,16,64",
};

TEST(Condense, SameCountsAsTheWholeBatches) {
  for (const char* text : kConfigs) {
    const std::string t = text;
    const double unit = compare(t, unit_stride(200000), t + ", unit stride");
    const double walked = compare(t, walks(200000, 1), t + ", walks");
    compare(t, walks(100000, 2), t + ", walks, split on the way", true);
    compare(t, scattered(50000), t + ", scattered");
    std::printf("%s: kept %.1f%% of the unit-stride stream, %.1f%% of the walks\n", text, 100 * unit, 100 * walked);
    if (Hierarchy::can_condense()) {
      // Something to compare: most of the multiply and many of the walks dropped.
      EXPECT_LT(unit, 0.7) << t;
      EXPECT_LT(walked, 0.8) << t;
    } else {
      EXPECT_EQ(unit, 1.0) << t;
    }
  }
}

// A write is dropped only while its line is known dirty: here it was
// written, then pushed out of a 2-way set by two other lines (and written
// back), read again (clean), and written again. That write must stay (it
// makes the line dirty again: one more write-back at the end); the reads
// of the line in way 0 go, and so do the writes to it while it is dirty.
TEST(Condense, WriteAfterTheLineLeftItsSetStays) {
  const std::string text = "L1:1K,2,64;L2:8K,4,64";
  const uint64_t x = kBase, y = kBase + 512, z = kBase + 1024;  // one set of the 8
  const std::vector<Access> pattern = {
      {x, 8, mri::sim::kWrite},      // 0
      {x + 8, 8, mri::sim::kWrite},  // 1: dirty, in way 0: dropped
      {y, 8, mri::sim::kRead},       // 2
      {z, 8, mri::sim::kRead},       // 3: x leaves the set, written back
      {x, 8, mri::sim::kRead},       // 4: x again, clean
      {x + 8, 8, mri::sim::kRead},   // 5: dropped
      {x, 8, mri::sim::kWrite},      // 6: must stay
      {x + 16, 8, mri::sim::kWrite}, // 7: dirty again: dropped
  };
  std::vector<Access> s;
  for (int i = 0; i < 8; ++i) s.insert(s.end(), pattern.begin(), pattern.end());
  auto h = make(text);
  std::vector<Access> out(s.size());
  Condensed dropped;
  // The last n % 8 references are kept (the rule takes groups of 8).
  EXPECT_EQ(h->condense(s.data(), 7, out.data(), &dropped), 7u);
  const size_t kept = h->condense(s.data(), s.size(), out.data(), &dropped);
  if (!Hierarchy::can_condense()) GTEST_SKIP() << "condense() copies on this CPU (no AVX-512 CD and VPOPCNTDQ)";
  // From the second time on the first write is dropped too: the line is
  // in way 0 and dirty from the time before.
  std::vector<Access> want;
  for (size_t j : {0, 2, 3, 4, 6}) want.push_back(s[j]);
  for (size_t i = 1; i < 8; ++i)
    for (size_t j : {2, 3, 4, 6}) want.push_back(s[i * 8 + j]);
  ASSERT_EQ(kept, want.size());
  for (size_t i = 0; i < kept; ++i) EXPECT_TRUE(same(out[i], want[i])) << "reference " << i;
  EXPECT_EQ(dropped.reads, 8u);
  EXPECT_EQ(dropped.writes, 23u);
  compare(text, s, "the pattern");
}

// Where a dropped reference could matter, or the rule would not hold,
// condense() copies the batch whole.
TEST(Condense, CopiesWhereTheRuleDoesNotHold) {
  const std::vector<Access> stream = unit_stride(40000);
  std::vector<Access> out(stream.size());
  auto check_copies = [&](Hierarchy& h, const std::string& what) {
    Condensed dropped{1, 1};
    EXPECT_EQ(h.condense(stream.data(), stream.size(), out.data(), &dropped), stream.size()) << what;
    EXPECT_EQ(dropped.reads, 0u) << what;
    EXPECT_EQ(dropped.writes, 0u) << what;
    EXPECT_TRUE(std::equal(stream.begin(), stream.end(), out.begin(), same)) << what;
  };
  for (const char* text : {"L1:32K,8,64,fifo;L2:1M,16,64", "L1:32K,8,64,wt;L2:1M,16,64", "L1:32K,8,64,nwa;L2:1M,16,64",
                           "L1:32K,1,64;L2:1M,16,64", "cachegrind-compat;L1:32K,8,64;L2:1M,16,64"})
    check_copies(*make(text), text);
  // A monitor that counts L1 hits, while it is enabled.
  auto h = make(kConfigs[1]);
  MonitorSpec hits;
  hits.begin = kBase;
  hits.end = kBase + 0x1000;
  hits.events = {{0, EventKind::kWriteHit}};
  std::string error;
  const int id = h->add_monitor(hits, &error);
  ASSERT_GE(id, 0) << error;
  check_copies(*h, "an L1 write hit monitor");
  EXPECT_TRUE(h->set_monitor_enabled(id, false));
  Condensed dropped;
  const size_t kept = h->condense(stream.data(), stream.size(), out.data(), &dropped);
  EXPECT_EQ(kept < stream.size(), Hierarchy::can_condense()) << "the monitor disabled";
}

}  // namespace

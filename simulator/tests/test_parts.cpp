// A hierarchy simulated in parts (Hierarchy::create with parts > 1): which
// configs can be split, and that the parts, summed, count exactly what one
// part counts, whether they run one after the other or on two threads at
// once.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "cachesim.h"
#include "snapshot.h"

namespace {

using mri::sim::Access;
using mri::sim::Event;
using mri::sim::EventKind;
using mri::sim::Hierarchy;
using mri::sim::HierarchyConfig;
using mri::sim::LevelCounters;
using mri::sim::MonitorResult;
using mri::sim::MonitorSpec;
using mri::sim::ReferenceCounts;
using mri::sim::testing::expect_equal;
using mri::sim::testing::Snapshot;
using mri::sim::testing::snapshot;

HierarchyConfig config(const std::string& text) {
  HierarchyConfig c;
  EXPECT_EQ(mri::sim::parse_config(text, c), "") << text;
  return c;
}

std::unique_ptr<Hierarchy> make(const std::string& text, uint32_t parts) {
  std::string error;
  auto h = Hierarchy::create(config(text), &error, parts);
  EXPECT_NE(h, nullptr) << error;
  return h;
}

TEST(Parts, WhichConfigsSplit) {
  using mri::sim::split_reason;
  EXPECT_EQ(split_reason(config("L1:32K,8,64;L2:1M,16,64;L3:32M,16,64,shared;cores=2"), 4), "");
  EXPECT_EQ(split_reason(config("L1:1K,2,64"), 8), "");
  EXPECT_EQ(split_reason(config("L1:1K,2,64"), 1), "");
  EXPECT_EQ(split_reason(config("L1:1K,2,64"), 0), "");
  EXPECT_EQ(split_reason(config("L1:1K,2,64"), 3), "the split modulus must be 0, 1 or a power of two up to 64, not 3");
  EXPECT_EQ(split_reason(config("L1:1K,2,64"), 128),
            "the split modulus must be 0, 1 or a power of two up to 64, not 128");
  EXPECT_EQ(split_reason(config("L1:32K,8,64;L2:1M,16,128"), 2), "L2's line size 128 differs from L1's 64");
  EXPECT_EQ(split_reason(config("L1:32K,8,64;L2:1M,16,64;I1:32K,8,32"), 2), "I1's line size 32 differs from L1's 64");
  EXPECT_EQ(split_reason(config("L1:1K,16,64;L2:1M,16,64"), 2), "L1 has 1 set, fewer than the modulus 2");
  EXPECT_EQ(split_reason(config("L1:1K,4,64;L2:1M,16,64"), 8), "L1 has 4 sets, fewer than the modulus 8");
  EXPECT_EQ(split_reason(config("cachegrind-compat;L1:32K,8,64;L2:1M,16,64"), 2),
            "cachegrind-compatible counting takes an access across two lines as one event");
  std::string error;
  EXPECT_EQ(Hierarchy::create(config("L1:32K,8,64;L2:1M,16,128"), &error, 2), nullptr);
  EXPECT_EQ(error, "L2's line size 128 differs from L1's 64");
  auto four = make("L1:1K,2,64", 4);
  EXPECT_EQ(four->parts(), 2u);
  EXPECT_EQ(four->split_shift(), 6u);
  EXPECT_EQ(four->split_mask(), 3u);
  auto one = make("L1:1K,2,32", 1);
  EXPECT_EQ(one->parts(), 1u);
  EXPECT_EQ(one->split_shift(), 5u);
  EXPECT_EQ(one->split_mask(), 0u);
}

// A stream with every kind of reference, lines that straddle (unaligned,
// up to 16 bytes, and some of 200 bytes: four lines), two cores writing
// the same lines (invalidations), and enough conflicts in small caches for
// evictions and write-backs at every level.
std::vector<Access> mixed_stream(size_t n) {
  std::vector<Access> s;
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const uint64_t addr = 0x40000 + (x >> 8) % 40000;
    uint32_t size = uint32_t(1 + (x >> 40) % 16);
    if ((x >> 50) % 97 == 0) size = 200;
    s.push_back({addr, size, mri::sim::AccessType((x >> 56) % 4)});
  }
  return s;
}

// The monitors of the comparison: a histogram that counts L1 hits (so the
// kernel's inline path leaves its range to the general one), one of
// write-backs and invalidations, a whole-address-space monitor of core 1's
// L2 misses, and one that is switched on and off between phases.
std::vector<int> add_monitors(Hierarchy& h) {
  std::vector<int> ids;
  std::string error;
  MonitorSpec hist;
  hist.begin = 0x44000;
  hist.end = 0x46000;
  hist.bins = 13;
  for (uint8_t level = 0; level < h.levels(); ++level)
    for (EventKind k : {EventKind::kReadHit, EventKind::kReadMiss, EventKind::kWriteHit, EventKind::kWriteMiss})
      hist.events.push_back(Event{level, k});
  ids.push_back(h.add_monitor(hist, &error));
  MonitorSpec wb;
  wb.begin = 0x40000;
  wb.end = 0x4a000;
  wb.bins = 7;
  wb.events = {{0, EventKind::kWriteBack}, {0, EventKind::kInvalidation}, {1, EventKind::kWriteBack}};
  ids.push_back(h.add_monitor(wb, &error));
  MonitorSpec whole;
  whole.whole_address_space = true;
  whole.events = {{1, EventKind::kReadMiss}, {1, EventKind::kWriteMiss}};
  whole.core = 1;
  ids.push_back(h.add_monitor(whole, &error));
  MonitorSpec toggled;
  toggled.begin = 0x40000;
  toggled.end = 0x42000;
  toggled.events = {{0, EventKind::kReadMiss}};
  ids.push_back(h.add_monitor(toggled, &error));
  for (int id : ids) EXPECT_GE(id, 0) << error;
  return ids;
}

// kDeferred: created unsplit (Hierarchy::create's `deferred`), split
// halfway through the first phase, then a thread per part as kTwoThreads
// with the batches sorted by sort_parts(), then one thread that joins the
// parts, splits them and joins them again, simulating batches sorted before
// a join or split after it.
enum class Drive { kSimulate, kTwoThreads, kDeferred };

// The references of `part`, sorted as simulate_part() wants them: those
// within one line of the part, and every one that straddles lines (a size
// of 0 counts as 1, as everywhere in the simulator).
std::vector<Access> sorted(const Hierarchy& h, const Access* a, size_t n, uint32_t part) {
  std::vector<Access> out;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t size = a[i].size == 0 ? 1 : a[i].size;
    const uint64_t first = a[i].addr >> h.split_shift(), last = (a[i].addr + size - 1) >> h.split_shift();
    if (first != last || uint32_t((first & h.split_mask()) != 0) == part) out.push_back(a[i]);
  }
  return out;
}

// Phases of batches (37 references, alternating between the two cores);
// the toggled monitor is off in the second phase, and an L1 hit histogram
// is added in the third. kTwoThreads: one thread per part, each sorting
// its part's references out of every batch (simulate_part).
Snapshot run(const std::string& text, uint32_t modulus, Drive drive) {
  std::unique_ptr<Hierarchy> h;
  if (drive == Drive::kDeferred) {
    std::string error;
    h = Hierarchy::create(config(text), &error, modulus, true);
    EXPECT_NE(h, nullptr) << error;
    EXPECT_EQ(h->parts(), 2u);
    EXPECT_EQ(h->split_mask(), 0u);  // not yet
  } else {
    h = make(text, modulus);
    EXPECT_FALSE(h->split());  // not deferred
    EXPECT_FALSE(h->unsplit());
  }
  std::vector<int> ids = add_monitors(*h);
  const std::vector<Access> stream = mixed_stream(60000);
  const size_t phase = stream.size() / 3;
  for (size_t p = 0; p < 3; ++p) {
    if (p == 1) h->set_monitor_enabled(ids[3], false);
    if (p == 2) {
      h->set_monitor_enabled(ids[3], true);
      MonitorSpec late;
      late.begin = 0x41000;
      late.end = 0x48000;
      late.bins = 5;
      late.events = {{0, EventKind::kReadHit}, {0, EventKind::kWriteHit}};
      std::string error;
      ids.push_back(h->add_monitor(late, &error));
    }
    auto feed = [&](auto simulate) {
      for (size_t i = p * phase; i < (p + 1) * phase; i += 37) {
        const size_t n = std::min<size_t>(37, (p + 1) * phase - i);
        simulate(uint32_t(i / 37 % 2), stream.data() + i, n);
      }
    };
    if (drive == Drive::kDeferred && p == 0) {
      size_t batch = 0;
      const size_t batches = (phase + 36) / 37;
      feed([&](uint32_t core, const Access* a, size_t n) {
        if (batch++ == batches / 2) {
          EXPECT_EQ(h->split_mask(), 0u);
          EXPECT_TRUE(h->split());
          EXPECT_EQ(h->split_mask(), modulus - 1);
          EXPECT_FALSE(h->split());  // once
        }
        h->simulate(core, a, n);
      });
    } else if (drive == Drive::kDeferred && p == 2) {
      // Joined, split again and joined again on the way, with batches
      // sorted while split and simulated after the parts changed, as
      // libmonitor's simulation thread may still hold part 1 of a batch
      // when the program's thread joins the parts: a sixth of the phase
      // each.
      EXPECT_TRUE(h->unsplit());
      EXPECT_FALSE(h->unsplit());
      EXPECT_EQ(h->split_mask(), 0u);
      size_t batch = 0;
      const size_t batches = (phase + 36) / 37;
      std::vector<Access> out[2] = {std::vector<Access>(37), std::vector<Access>(37)};
      size_t k[2];
      auto sort = [&](const Access* a, size_t n) { return h->sort_parts(a, n, out[0].data(), &k[0], out[1].data(), &k[1]); };
      auto part = [&](uint32_t p, uint32_t core) { h->simulate_part(p, core, out[p].data(), k[p]); };
      feed([&](uint32_t core, const Access* a, size_t n) {
        const size_t sixth = batch++ * 6 / batches;
        if (sixth == 0) return h->simulate(core, a, n);  // joined
        if (sixth == 5) {  // joined: a sort puts everything into part 0's batch, for simulate()
          EXPECT_EQ(sort(a, n), 0u);
          EXPECT_EQ(k[1], 0u);
          return h->simulate(core, out[0].data(), k[0]);
        }
        if (h->split_mask() == 0) {
          EXPECT_TRUE(h->split());
        }
        EXPECT_EQ(sort(a, n), modulus - 1);
        if (sixth == 1) {  // joined and split again before part 1 is simulated
          part(0, core);
          EXPECT_TRUE(h->unsplit());
          EXPECT_TRUE(h->split());
          part(1, core);
        } else if (sixth == 2) {  // part 1 simulated after the join
          part(0, core);
          EXPECT_TRUE(h->unsplit());
          part(1, core);
        } else if (sixth == 3) {  // both parts after the join, part 1 first
          EXPECT_TRUE(h->unsplit());
          part(1, core);
          part(0, core);
        } else {  // both after the join
          EXPECT_TRUE(h->unsplit());
          part(0, core);
          part(1, core);
        }
      });
    } else if (drive == Drive::kDeferred) {
      std::vector<std::thread> threads;
      for (uint32_t part = 0; part < 2; ++part)
        threads.emplace_back([&, part] {
          std::vector<Access> out[2] = {std::vector<Access>(37), std::vector<Access>(37)};
          feed([&](uint32_t core, const Access* a, size_t n) {
            size_t k[2];
            h->sort_parts(a, n, out[0].data(), &k[0], out[1].data(), &k[1]);
            const std::vector<Access> mine = sorted(*h, a, n, part);
            EXPECT_EQ(k[part], mine.size());
            EXPECT_TRUE(std::equal(mine.begin(), mine.end(), out[part].begin(), [](const Access& x, const Access& y) {
              return x.addr == y.addr && x.size == y.size && x.type == y.type;
            }));
            h->simulate_part(part, core, out[part].data(), k[part]);
          });
        });
      for (std::thread& t : threads) t.join();
    } else if (drive == Drive::kSimulate) {
      feed([&](uint32_t core, const Access* a, size_t n) { h->simulate(core, a, n); });
    } else {
      std::vector<std::thread> threads;
      for (uint32_t part = 0; part < h->parts(); ++part)
        threads.emplace_back([&, part] {
          feed([&](uint32_t core, const Access* a, size_t n) {
            const std::vector<Access> mine = sorted(*h, a, n, part);
            h->simulate_part(part, core, mine.data(), mine.size());
          });
        });
      for (std::thread& t : threads) t.join();
    }
  }
  return snapshot(*h, ids);
}

void expect_split_exact(const std::string& text) {
  const Snapshot one = run(text, 1, Drive::kSimulate);
  // The comparison means something only if the stream did all of this.
  uint64_t invalidations = 0, write_backs = 0, straddled = 0;
  for (const LevelCounters& c : one.levels) {
    invalidations += c.invalidations;
    write_backs += c.write_backs;
  }
  for (const MonitorResult& m : one.monitors) {
    uint64_t counted = 0;
    for (uint64_t t : m.totals) counted += t;
    EXPECT_GT(counted, 0u) << text;
  }
  const std::vector<Access> stream = mixed_stream(60000);
  for (const Access& a : stream) straddled += (a.addr >> 6) != ((a.addr + a.size - 1) >> 6);
  EXPECT_GT(invalidations, 500u) << text;
  EXPECT_GT(write_backs, 500u) << text;
  EXPECT_GT(straddled, 5000u);
  for (uint32_t modulus : {2u, 4u, 8u}) {
    const std::string what = text + ", modulus " + std::to_string(modulus);
    expect_equal(one, run(text, modulus, Drive::kSimulate), what + ", simulate()");
    expect_equal(one, run(text, modulus, Drive::kTwoThreads), what + ", a thread per part");
    expect_equal(one, run(text, modulus, Drive::kDeferred), what + ", split on the way");
  }
}

TEST(Parts, SumOfPartsEqualsOneHierarchy) {
  // Private LRU L1 and L2, shared L3, and an I1: coherence, the inline
  // L1-L2 read path, instruction fetches.
  expect_split_exact("L1:2K,4,64;L2:8K,8,64;L3:32K,8,64,shared;I1:1K,2,64;cores=2");
  // FIFO, write-through and no-write-allocate: the general path only.
  expect_split_exact("L1:2K,4,64,fifo,wt,nwa;L2:16K,8,64,shared;cores=2");
  // Levels with more sets than a 4 KiB page of tags holds: where the sets
  // are searched with vector compares, they lie in the array in another
  // order (hierarchy.cpp, Cache::position), which unsplit() must follow.
  expect_split_exact("L1:2K,4,64;L2:256K,8,64;L3:512K,16,64,shared;cores=2");
}

// Levels with 1 MiB of tags or more have one array that both parts use
// (hierarchy.cpp, kBorrowTagBytes): split() copies nothing of them, and
// each part works in its own sets of it. An L3 of 8 MiB (1 MiB of tags),
// shared and private, with the small levels kept per part.
TEST(Parts, LargeLevelsOneArrayForBothParts) {
  expect_split_exact("L1:2K,4,64;L2:8K,8,64;L3:8M,16,64,shared;I1:1K,2,64;cores=2");
  expect_split_exact("L1:2K,4,64;L2:8K,8,64;L3:8M,16,64;cores=2");
  expect_split_exact("L1:2K,4,64;L2:16M,16,64;cores=2");
}

// A part out of range simulates nothing; part 0 gets the lines that are 0
// modulo the split modulus.
TEST(Parts, PartsAndTheirLines) {
  auto h = make("L1:1K,2,64", 4);
  const Access line0{0x1000, 8, mri::sim::kRead};  // line 0x40: part 0
  const Access line1{0x1040, 8, mri::sim::kRead};  // line 0x41: part 1
  h->simulate_part(2, 0, &line0, 1);
  EXPECT_EQ(h->total_references().total(), 0u);
  h->simulate_part(0, 0, &line0, 1);
  h->simulate_part(1, 0, &line1, 1);
  EXPECT_EQ(h->total_references().reads, 2u);
  EXPECT_EQ(h->counters(0, 0).read_misses, 2u);
  // A straddling reference given to both parts counts once, and each part
  // simulates its line: both lines now hit.
  const Access both{0x103c, 8, mri::sim::kRead};
  h->simulate_part(0, 0, &both, 1);
  h->simulate_part(1, 0, &both, 1);
  EXPECT_EQ(h->total_references().reads, 3u);
  EXPECT_EQ(h->counters(0, 0).read_hits, 2u);
  EXPECT_EQ(h->counters(0, 0).read_misses, 2u);
  // simulate() sorts by itself.
  const Access batch[] = {{0x2000, 4, mri::sim::kWrite}, {0x2040, 4, mri::sim::kWrite}, {0x207e, 4, mri::sim::kRead}};
  h->simulate(0, batch, 3);
  EXPECT_EQ(h->total_references().writes, 2u);
  EXPECT_EQ(h->total_references().reads, 4u);
  EXPECT_EQ(h->counters(0, 0).write_misses, 2u);
  EXPECT_EQ(h->counters(0, 0).read_hits, 3u);  // 0x2040's line (written just before)
  EXPECT_EQ(h->counters(0, 0).read_misses, 3u);  // 0x2080's line
}

// sort_parts() against the rule it implements, on random references of
// every kind the sort must tell apart (sizes 0, which counts as 1, to
// past a line; addresses near line ends, so that many straddle; reads and
// writes), for short batches of several lengths and a whole batch of
// 4096; each output filled with a marker first, so that a record stored
// past its count, or one missing, shows. (A vector form that sorted eight
// records at a time was checked with it, docs/PERFORMANCE.md.)
TEST(Parts, SortByPartKeepsOrderAndTheStraddlers) {
  uint64_t seed = 0x9e3779b97f4a7c15;
  auto next = [&] {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
  };
  const uint32_t sizes[] = {0, 1, 2, 4, 8, 16, 32, 64, 65, 100};
  for (uint32_t modulus : {2u, 4u, 8u}) {
    auto h = make("L1:2K,2,64;L2:8K,4,64", modulus);
    for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 37, 64, 4096}) {
      std::vector<Access> in(n);
      for (Access& a : in) {
        const uint64_t r = next();
        const uint64_t line = 0x4000 + (r & 0xff);
        a.addr = (line << 6) + ((r >> 8) % 4 == 0 ? 64 - 1 - (r >> 10) % 16 : (r >> 10) % 64);
        a.size = sizes[(r >> 20) % 10];
        a.type = (r >> 30) & 1 ? mri::sim::kWrite : mri::sim::kRead;
      }
      const Access marker{~uint64_t{0}, 7, mri::sim::kWrite};
      std::vector<Access> out[2] = {std::vector<Access>(n + 8, marker), std::vector<Access>(n + 8, marker)};
      size_t k[2] = {99, 99};
      EXPECT_EQ(h->sort_parts(in.data(), n, out[0].data(), &k[0], out[1].data(), &k[1]), modulus - 1);
      for (uint32_t part : {0u, 1u}) {
        const std::vector<Access> want = sorted(*h, in.data(), n, part);
        const std::string what = "modulus " + std::to_string(modulus) + ", " + std::to_string(n) +
                                 " references, part " + std::to_string(part);
        ASSERT_EQ(k[part], want.size()) << what;
        for (size_t i = 0; i < want.size(); ++i) {
          EXPECT_EQ(out[part][i].addr, want[i].addr) << what << ", record " << i;
          EXPECT_EQ(out[part][i].size, want[i].size) << what << ", record " << i;
          EXPECT_EQ(out[part][i].type, want[i].type) << what << ", record " << i;
        }
        for (size_t i = n; i < n + 8; ++i) EXPECT_EQ(out[part][i].addr, marker.addr) << what << ": written past n";
      }
      if (n >= 64) {  // a straddling reference is in both outputs
        EXPECT_GT(k[0] + k[1] - n, n / 16) << "the stream straddles lines too seldom to test them";
      }
    }
  }
}

}  // namespace

// The simulation engine: replacement, write policies, straddling accesses,
// cachegrind-compatible counting, coherence between cores, and a check of the
// fast engine against a deliberately naive model.
#include <gtest/gtest.h>

#include <list>
#include <tuple>
#include <utility>
#include <vector>

#include "cachesim.h"

namespace {

using mri::sim::Access;
using mri::sim::Hierarchy;
using mri::sim::HierarchyConfig;
using mri::sim::LevelCounters;

std::unique_ptr<Hierarchy> make(const std::string& text) {
  HierarchyConfig c;
  const std::string error = mri::sim::parse_config(text, c);
  EXPECT_EQ(error, "") << text;
  std::string create_error;
  auto h = Hierarchy::create(c, &create_error);
  EXPECT_NE(h, nullptr) << create_error;
  return h;
}

void read(Hierarchy& h, uint64_t addr, uint32_t core = 0, uint32_t size = 8) {
  h.access(core, addr, size, mri::sim::kRead);
}
void write(Hierarchy& h, uint64_t addr, uint32_t core = 0, uint32_t size = 8) {
  h.access(core, addr, size, mri::sim::kWrite);
}

constexpr uint64_t A = 0x10000, B = 0x10040, C = 0x10080;  // three lines of one set below

// One set of two ways. Reads A B A C A:
//   LRU:  A miss [A]; B miss [B A]; A hit [A B]; C miss, evicts B [C A];
//         A hit                                          -> 3 misses
//   FIFO: A miss [A]; B miss [B A]; A hit, order kept [B A]; C miss, evicts
//         the oldest, A [C B]; A miss                    -> 4 misses
TEST(Hierarchy, LruAndFifoDifferOnAConstructedSequence) {
  for (const char* policy : {"lru", "fifo"}) {
    auto h = make(std::string("L1:128,2,64,") + policy);
    for (uint64_t addr : {A, B, A, C, A}) read(*h, addr);
    const LevelCounters l1 = h->counters(0, 0);
    EXPECT_EQ(l1.reads(), 5u) << policy;
    EXPECT_EQ(l1.read_misses, std::string(policy) == "lru" ? 3u : 4u) << policy;
  }
}

// L1 is one line (1 set, 1 way), write-back: write A fills A dirty; read B
// evicts A -> one write-back; read A evicts B, which is clean -> none.
// L2 sees: a write fill of A (write miss), B (read miss), A (read hit; A's
// write-back only marked it dirty).
TEST(Hierarchy, WriteBackCountsDirtyEvictionsOnly) {
  auto h = make("L1:64,1,64;L2:1K,2,64");
  write(*h, A);
  read(*h, B);
  read(*h, A);
  const LevelCounters l1 = h->counters(0, 0);
  EXPECT_EQ(l1.write_misses, 1u);
  EXPECT_EQ(l1.read_misses, 2u);
  EXPECT_EQ(l1.write_backs, 1u);
  const LevelCounters l2 = h->counters(0, 1);
  EXPECT_EQ(l2.writes(), 1u);
  EXPECT_EQ(l2.write_misses, 1u);
  EXPECT_EQ(l2.reads(), 2u);
  EXPECT_EQ(l2.read_misses, 1u);
  EXPECT_EQ(l2.write_backs, 0u);
  // A is dirty in L2 now: pushing it out of L2 (2 ways per set; C and
  // 0x10100 map to A's set 0 of 8) writes it back.
  read(*h, 0x10200);
  read(*h, 0x10400);
  EXPECT_EQ(h->counters(0, 1).write_backs, 1u);
}

// Write-through L1: every write goes on to L2 and L1 lines are never dirty.
//   write A: L1 write miss, allocates A clean; L2 write miss (allocates)
//   read B: L1 read miss, evicts A (clean: no write-back); L2 read miss
//   write A: L1 write miss again; L2 write hit
//   write A: L1 write hit; L2 write hit
TEST(Hierarchy, WriteThroughPassesEveryWriteOn) {
  auto h = make("L1:64,1,64,wt;L2:1K,2,64");
  write(*h, A);
  read(*h, B);
  write(*h, A);
  write(*h, A);
  const LevelCounters l1 = h->counters(0, 0);
  EXPECT_EQ(l1.writes(), 3u);
  EXPECT_EQ(l1.write_misses, 2u);
  EXPECT_EQ(l1.write_backs, 0u);
  const LevelCounters l2 = h->counters(0, 1);
  EXPECT_EQ(l2.writes(), 3u);
  EXPECT_EQ(l2.write_misses, 1u);
  EXPECT_EQ(l2.reads(), 1u);
}

// Write A then read A.
//   write-allocate:    L1 write miss fills A; the read hits. L2: one write
//                      (the fill), no read.
//   no-write-allocate: L1 write miss leaves L1 alone and sends the write on
//                      (L2 write miss, L2 allocates); the read misses L1 and
//                      hits L2.
TEST(Hierarchy, WriteAllocateVersusNoWriteAllocate) {
  auto wa = make("L1:1K,2,64;L2:4K,4,64");
  write(*wa, A);
  read(*wa, A);
  EXPECT_EQ(wa->counters(0, 0).write_misses, 1u);
  EXPECT_EQ(wa->counters(0, 0).read_misses, 0u);
  EXPECT_EQ(wa->counters(0, 0).read_hits, 1u);
  EXPECT_EQ(wa->counters(0, 1).writes(), 1u);
  EXPECT_EQ(wa->counters(0, 1).reads(), 0u);

  auto nwa = make("L1:1K,2,64,nwa;L2:4K,4,64");
  write(*nwa, A);
  read(*nwa, A);
  EXPECT_EQ(nwa->counters(0, 0).write_misses, 1u);
  EXPECT_EQ(nwa->counters(0, 0).read_misses, 1u);
  EXPECT_EQ(nwa->counters(0, 1).write_misses, 1u);
  EXPECT_EQ(nwa->counters(0, 1).read_hits, 1u);
  EXPECT_EQ(nwa->counters(0, 0).write_backs, 0u);
}

// An 8-byte read at 0x1003c touches lines 0x10000 and 0x10040.
//   default model: two line references, both miss; again: two hits.
//   cachegrind model: one reference, one miss; again: one hit.
// An access that would run past the end of the address space ends there:
// it touches the last line (it touched none, and counted no L1 access,
// when the last byte's address wrapped to 6).
TEST(Hierarchy, AccessAtTheTopOfTheAddressSpaceEndsThere) {
  for (const char* text : {"L1:1K,2,64;L2:4K,4,64", "L1:1K,2,64;L2:4K,4,64;cachegrind-compat"}) {
    auto h = make(text);
    read(*h, ~uint64_t{0});
    EXPECT_EQ(h->references(0).reads, 1u) << text;
    EXPECT_EQ(h->counters(0, 0).reads(), 1u) << text;
    EXPECT_EQ(h->counters(0, 0).read_misses, 1u) << text;
    read(*h, ~uint64_t{0} - 3);
    EXPECT_EQ(h->counters(0, 0).read_misses, 1u) << text;  // the same line, now a hit
  }
}

// A valid configuration too large for the machine: create() says so
// instead of throwing. (Sanitizers' allocators end the process instead.)
TEST(Hierarchy, TooLargeToAllocateIsAnError) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator exits on a failed allocation";
#else
  HierarchyConfig c;
  ASSERT_EQ(mri::sim::parse_config("L1:1024G,1,8;cores=1024", c), "");
  std::string error;
  EXPECT_EQ(Hierarchy::create(c, &error), nullptr);
  EXPECT_EQ(error, "cannot allocate the simulated caches: 1125899906842624 bytes of tags");
#endif
}

TEST(Hierarchy, StraddlingAccessTouchesBothLines) {
  auto h = make("L1:1K,2,64;L2:4K,4,64");
  read(*h, 0x1003c);
  EXPECT_EQ(h->counters(0, 0).reads(), 2u);
  EXPECT_EQ(h->counters(0, 0).read_misses, 2u);
  EXPECT_EQ(h->counters(0, 1).read_misses, 2u);
  read(*h, 0x1003c);
  EXPECT_EQ(h->counters(0, 0).reads(), 4u);
  EXPECT_EQ(h->counters(0, 0).read_misses, 2u);
  EXPECT_EQ(h->references(0).reads, 2u);

  auto cg = make("L1:1K,2,64;L2:4K,4,64;cachegrind-compat");
  read(*cg, 0x1003c);
  EXPECT_EQ(cg->counters(0, 0).reads(), 1u);
  EXPECT_EQ(cg->counters(0, 0).read_misses, 1u);
  EXPECT_EQ(cg->counters(0, 1).read_misses, 1u);
  read(*cg, 0x1003c);
  EXPECT_EQ(cg->counters(0, 0).reads(), 2u);
  EXPECT_EQ(cg->counters(0, 0).read_misses, 1u);
}

// cachegrind asks LL about every line of an access that missed D1, also the
// line that hit D1, and that changes LL's LRU order. D1: 2 sets x 1 way;
// LL: 1 set x 2 ways; lines 0, 1, 2, 4 (addresses 0x0, 0x40, 0x80, 0x100).
//   read line 0      D1 miss; LL miss      LL [0]
//   read line 1      D1 miss; LL miss      LL [1 0]
//   read line 4      D1 miss (set 0, evicts 0); LL miss, evicts 0   LL [4 1]
//   read 0x7c, 8 B   lines 1 and 2: D1 line 1 hit, line 2 miss -> D1 miss.
//     cachegrind: LL line 1 hit [1 4], line 2 miss, evicts 4 [2 1] -> LL miss
//     default:    LL only sees line 2: miss, evicts 1 [2 4]
//   read line 4      D1 miss (set 0 holds 2).
//     cachegrind: LL miss (5 LL read misses)   default: LL hit (4)
TEST(Hierarchy, CachegrindModeConsultsLastLevelWithTheWholeAccess) {
  for (bool compat : {true, false}) {
    auto h = make(std::string("L1:128,1,64;L2:128,2,64") + (compat ? ";cachegrind-compat" : ""));
    read(*h, 0x0);
    read(*h, 0x40);
    read(*h, 0x100);
    read(*h, 0x7c);
    read(*h, 0x100);
    EXPECT_EQ(h->counters(0, 1).read_misses, compat ? 5u : 4u) << (compat ? "compat" : "default");
  }
}

// A modify (load and store of the same bytes by one instruction):
// cachegrind counts one read; the default model a read and a write.
TEST(Hierarchy, ModifyCountsAsReadInCachegrindMode) {
  auto h = make("L1:1K,2,64;L2:4K,4,64");
  h->access(0, A, 8, mri::sim::kModify);
  EXPECT_EQ(h->counters(0, 0).read_misses, 1u);
  EXPECT_EQ(h->counters(0, 0).write_hits, 1u);
  EXPECT_EQ(h->references(0).modifies, 1u);
  auto cg = make("L1:1K,2,64;L2:4K,4,64;cachegrind-compat");
  cg->access(0, A, 8, mri::sim::kModify);
  EXPECT_EQ(cg->counters(0, 0).reads(), 1u);
  EXPECT_EQ(cg->counters(0, 0).read_misses, 1u);
  EXPECT_EQ(cg->counters(0, 0).writes(), 0u);
}

// Instruction fetches go through I1 and then L2; without an I1 they are
// only counted.
TEST(Hierarchy, InstructionFetchesUseI1ThenL2) {
  auto h = make("I1:1K,2,64;L1:1K,2,64;L2:4K,4,64");
  h->access(0, 0x400000, 4, mri::sim::kInstruction);
  h->access(0, 0x400004, 4, mri::sim::kInstruction);
  h->access(0, 0x40003e, 4, mri::sim::kInstruction);  // straddles into 0x400040
  const LevelCounters i1 = h->instruction_counters(0);
  EXPECT_EQ(i1.fetches(), 4u);
  EXPECT_EQ(i1.fetch_misses, 2u);
  EXPECT_EQ(h->counters(0, 1).fetch_misses, 2u);
  EXPECT_EQ(h->counters(0, 0).reads(), 0u);
  EXPECT_EQ(h->references(0).instructions, 3u);

  auto no_i1 = make("L1:1K,2,64;L2:4K,4,64");
  no_i1->access(0, 0x400000, 4, mri::sim::kInstruction);
  EXPECT_EQ(no_i1->references(0).instructions, 1u);
  EXPECT_EQ(no_i1->counters(0, 1).fetches(), 0u);
}

// Two cores, private L1, shared L2.
//   core 0 reads A, core 1 reads A          both L1s hold A (clean)
//   core 0 writes A                         L1 hit; core 1's copy is
//                                           invalidated (core 1: 1)
//   core 1 reads A                          L1 miss; core 0's dirty copy is
//                                           written back (core 0: 1) and
//                                           stays, clean
//   core 1 writes A                         L1 hit on a clean line;
//                                           core 0's copy is invalidated
//                                           (core 0: 1), no write-back
TEST(Hierarchy, WritesInvalidateOtherCoresCopies) {
  auto h = make("L1:1K,2,64;L2:4K,4,64,shared;cores=2");
  read(*h, A, 0);
  read(*h, A, 1);
  write(*h, A, 0);
  EXPECT_EQ(h->counters(1, 0).invalidations, 1u);
  EXPECT_EQ(h->counters(0, 0).invalidations, 0u);
  read(*h, A, 1);
  write(*h, A, 1);
  const LevelCounters c0 = h->counters(0, 0), c1 = h->counters(1, 0);
  EXPECT_EQ(c0.reads(), 1u);
  EXPECT_EQ(c0.read_misses, 1u);
  EXPECT_EQ(c0.write_hits, 1u);
  EXPECT_EQ(c0.write_backs, 1u);
  EXPECT_EQ(c0.invalidations, 1u);
  EXPECT_EQ(c1.reads(), 2u);
  EXPECT_EQ(c1.read_misses, 2u);
  EXPECT_EQ(c1.write_hits, 1u);
  EXPECT_EQ(c1.write_backs, 0u);
  EXPECT_EQ(c1.invalidations, 1u);
  // The shared L2 counts each core's references: core 0 missed A once,
  // core 1 hit it twice.
  EXPECT_EQ(h->counters(0, 1).read_misses, 1u);
  EXPECT_EQ(h->counters(1, 1).read_hits, 2u);
  EXPECT_EQ(h->total_counters(0).invalidations, 2u);
}

// Private L1 and L2: a write invalidates the other core's copies at both
// levels. Thread 2 maps to core 0 (2 mod 2).
//   core 0 writes A       L1 and L2 fill A (L1 dirty)
//   core 1 reads A        misses both its levels; core 0's dirty L1 copy is
//                         written back to memory (no shared level)
//   core 1 writes A       L1 hit on a clean line: core 0 loses A at L1 and L2
TEST(Hierarchy, PrivateLevelsAreAllInvalidated) {
  auto h = make("L1:1K,2,64;L2:4K,4,64;cores=2");
  write(*h, A, 2);
  read(*h, A, 1);
  write(*h, A, 1);
  EXPECT_EQ(h->counters(0, 0).write_backs, 1u);
  EXPECT_EQ(h->counters(0, 0).invalidations, 1u);
  EXPECT_EQ(h->counters(0, 1).invalidations, 1u);
  EXPECT_EQ(h->counters(1, 1).read_misses, 1u);
  // Core 0 reads A again: misses L1 and L2, and core 1's dirty copy is
  // written back.
  read(*h, A, 0);
  EXPECT_EQ(h->counters(0, 1).read_misses, 1u);
  EXPECT_EQ(h->counters(1, 0).write_backs, 1u);
}

TEST(Hierarchy, ResetAndInvalidate) {
  auto h = make("L1:1K,2,64;L2:4K,4,64");
  read(*h, A);
  h->reset_counters();
  EXPECT_EQ(h->counters(0, 0).reads(), 0u);
  read(*h, A);
  EXPECT_EQ(h->counters(0, 0).read_hits, 1u);  // contents survived the reset
  h->invalidate_all();
  read(*h, A);
  EXPECT_EQ(h->counters(0, 0).read_misses, 1u);
  EXPECT_EQ(h->counters(5, 0).reads(), 0u);  // out of range: zeros
  EXPECT_EQ(h->counters(0, 7).reads(), 0u);
}

// ------------------------------------------------------------ naive model

// A straightforward model of a write-back write-allocate hierarchy of any
// depth with lists per set, written for clarity and nothing else, with the
// same documented rules: the level below is asked before a level fills; a
// dirty victim marks the first copy below it dirty without reordering (or
// goes to memory).
struct NaiveLevel {
  struct Line {
    uint64_t line;
    bool dirty;
  };
  uint32_t line_shift, sets, ways;
  bool lru;
  NaiveLevel* below = nullptr;
  std::vector<std::list<Line>> set_lists;
  uint64_t reads = 0, read_misses = 0, writes = 0, write_misses = 0, write_backs = 0;
  NaiveLevel(uint32_t size, uint32_t ways_, uint32_t line, bool lru_)
      : line_shift(uint32_t(__builtin_ctz(line))), sets(size / line / ways_), ways(ways_), lru(lru_),
        set_lists(sets) {}
  std::list<Line>& set_of(uint64_t line) { return set_lists[line % sets]; }
  std::list<Line>::iterator find(uint64_t line) {
    auto& s = set_of(line);
    for (auto it = s.begin(); it != s.end(); ++it)
      if (it->line == line) return it;
    return s.end();
  }

  // One reference to the line holding `addr`; true on a hit.
  bool touch(uint64_t addr, bool is_write, bool dirty_on_fill) {
    const uint64_t ln = addr >> line_shift;
    (is_write ? writes : reads)++;
    auto& s = set_of(ln);
    auto it = find(ln);
    if (it != s.end()) {
      if (dirty_on_fill) it->dirty = true;
      if (lru) s.splice(s.begin(), s, it);
      return true;
    }
    (is_write ? write_misses : read_misses)++;
    if (below) below->touch(addr, is_write, false);
    s.push_front({ln, dirty_on_fill});
    if (s.size() > ways) {
      const Line victim = s.back();
      s.pop_back();
      if (victim.dirty) {
        ++write_backs;
        const uint64_t victim_addr = victim.line << line_shift;
        for (NaiveLevel* b = below; b; b = b->below) {
          auto copy = b->find(victim_addr >> b->line_shift);
          if (copy != b->set_of(victim_addr >> b->line_shift).end()) {
            copy->dirty = true;
            break;
          }
        }
      }
    }
    return false;
  }
};

// The simulator and the naive model of `config` (levels as (size, ways,
// lru)) on one pseudo-random stream; every counter of every level equal.
// `scale` multiplies the stream's address spans, for larger caches.
void expect_agreement_with_naive_model(const std::string& config,
                                       std::vector<std::tuple<uint32_t, uint32_t, bool>> levels,
                                       uint64_t scale = 1) {
  auto h = make(config);
  std::vector<NaiveLevel> n;
  for (auto [size, ways, lru] : levels) n.emplace_back(size, ways, 64, lru);
  for (size_t i = 0; i + 1 < n.size(); ++i) n[i].below = &n[i + 1];
  std::vector<Access> batch;
  uint64_t x = 88172645463325252ull;  // xorshift64
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    // Mostly a 4 KiB hot region, sometimes a 32 KiB one: hits and misses
    // at every level.
    const uint64_t span = ((x >> 40) % 8 == 0 ? 32768 : 4096) * scale;
    const uint64_t addr = 0x100000 + ((x >> 8) % span & ~uint64_t{7});
    const bool is_write = (x >> 20) % 10 < 3;
    batch.push_back({addr, 8, is_write ? mri::sim::kWrite : mri::sim::kRead});
    n[0].touch(addr, is_write, is_write);
  }
  for (size_t i = 0; i < batch.size(); i += 1000) h->simulate(0, batch.data() + i, 1000);
  for (uint32_t level = 0; level < n.size(); ++level) {
    const std::string what = config + ", level " + std::to_string(level + 1);
    const LevelCounters c = h->counters(0, level);
    EXPECT_EQ(c.reads(), n[level].reads) << what;
    EXPECT_EQ(c.read_misses, n[level].read_misses) << what;
    EXPECT_EQ(c.writes(), n[level].writes) << what;
    EXPECT_EQ(c.write_misses, n[level].write_misses) << what;
    EXPECT_EQ(c.write_backs, n[level].write_backs) << what;
    // Every level must have seen plenty of each outcome for this to mean much.
    EXPECT_GT(c.read_misses, 1000u) << what;
    EXPECT_GT(c.read_hits, 1000u) << what;
    if (level + 1 < n.size()) {
      EXPECT_GT(c.write_backs, 1000u) << what;
    }
  }
}

TEST(Hierarchy, AgreesWithNaiveModelOnAPseudoRandomStream) {
  for (const char* l1_policy : {"lru", "fifo"})
    for (const char* l2_policy : {"lru", "fifo"})
      expect_agreement_with_naive_model(std::string("L1:1K,4,64,") + l1_policy + ";L2:8K,8,64," + l2_policy,
                                        {{1024, 4, l1_policy == std::string("lru")},
                                         {8192, 8, l2_policy == std::string("lru")}});
  // Three LRU levels: reads that miss L1 take run_default's inline L1-L2
  // path and go on to L3 through the general one.
  expect_agreement_with_naive_model("L1:1K,4,64;L2:4K,8,64;L3:16K,8,64",
                                    {{1024, 4, true}, {4096, 8, true}, {16384, 8, true}});
  // 8, 12 and 16 ways: lookups unrolled for those associativities (in
  // the general kernel: these L1s have fewer than 64 sets).
  expect_agreement_with_naive_model("L1:3K,12,64;L2:16K,16,64", {{3072, 12, true}, {16384, 16, true}});
  expect_agreement_with_naive_model("L1:2K,8,64;L2:16K,16,64", {{2048, 8, true}, {16384, 16, true}});
  expect_agreement_with_naive_model("L1:2K,8,64;L2:8K,8,64", {{2048, 8, true}, {8192, 8, true}});
  expect_agreement_with_naive_model("L1:1K,8,64;L2:8K,16,64;L3:16K,16,64",
                                    {{1024, 8, true}, {8192, 16, true}, {16384, 16, true}});
  // The same kernels where L1 has 64 sets of 64-byte lines over 64-byte
  // lines in L2 (x86's 32 and 48 KiB L1d): they index and compare with
  // constant shifts and masks. The sizes above use the general kernel.
  expect_agreement_with_naive_model("L1:32K,8,64;L2:256K,8,64", {{32768, 8, true}, {262144, 8, true}}, 32);
  expect_agreement_with_naive_model("L1:32K,8,64;L2:256K,16,64", {{32768, 8, true}, {262144, 16, true}}, 32);
  expect_agreement_with_naive_model("L1:48K,12,64;L2:512K,16,64", {{49152, 12, true}, {524288, 16, true}}, 48);
  expect_agreement_with_naive_model("L1:48K,12,64;L2:256K,8,64", {{49152, 12, true}, {262144, 8, true}}, 48);
  expect_agreement_with_naive_model("L1:32K,8,64;L2:128K,16,64;L3:512K,16,64",
                                    {{32768, 8, true}, {131072, 16, true}, {524288, 16, true}}, 32);
  // Direct-mapped L1: the inline path has no second way to look at.
  expect_agreement_with_naive_model("L1:1K,1,64;L2:8K,8,64", {{1024, 1, true}, {8192, 8, true}});
  // One level: the read path counts its misses and nothing below it.
  expect_agreement_with_naive_model("L1:1K,4,64", {{1024, 4, true}});
}

// Batches of any size give the same result as one reference at a time.
TEST(Hierarchy, BatchingDoesNotChangeResults) {
  auto batched = make("L1:1K,2,64;L2:4K,4,64,shared;cores=2");
  auto single = make("L1:1K,2,64;L2:4K,4,64,shared;cores=2");
  std::vector<Access> stream;
  for (uint64_t i = 0; i < 5000; ++i)
    stream.push_back({0x20000 + (i * 72) % 6000, uint32_t(1 + i % 8), mri::sim::AccessType(i % 3)});
  for (size_t i = 0; i < stream.size(); i += 37) {
    const size_t n = std::min<size_t>(37, stream.size() - i);
    batched->simulate(uint32_t(i / 37 % 2), stream.data() + i, n);
    for (size_t k = 0; k < n; ++k) single->simulate(uint32_t(i / 37 % 2), &stream[i + k], 1);
  }
  for (uint32_t core = 0; core < 2; ++core)
    for (uint32_t level = 0; level < 2; ++level) {
      const LevelCounters a = batched->counters(core, level), b = single->counters(core, level);
      EXPECT_EQ(a.read_hits, b.read_hits);
      EXPECT_EQ(a.read_misses, b.read_misses);
      EXPECT_EQ(a.write_hits, b.write_hits);
      EXPECT_EQ(a.write_misses, b.write_misses);
      EXPECT_EQ(a.write_backs, b.write_backs);
      EXPECT_EQ(a.invalidations, b.invalidations);
    }
}

}  // namespace

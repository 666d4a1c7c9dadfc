// Lackey trace lines, and the hand-made trace traces/small.trace whose
// summaries the command-line tests (CMakeLists.txt) also expect.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cachesim.h"

namespace {

using mri::sim::Access;

int parse(const std::string& line, Access* a, std::string* error) {
  return mri::sim::parse_lackey_line(line, a, error);
}

TEST(Trace, ParsesLackeyLines) {
  Access a{};
  std::string error;
  ASSERT_EQ(parse("I  04222cac,3", &a, &error), 1);
  EXPECT_EQ(a.addr, 0x04222cacu);
  EXPECT_EQ(a.size, 3u);
  EXPECT_EQ(a.type, mri::sim::kInstruction);
  ASSERT_EQ(parse(" L 1ffefff23d,8", &a, &error), 1);
  EXPECT_EQ(a.addr, 0x1ffefff23du);
  EXPECT_EQ(a.type, mri::sim::kRead);
  ASSERT_EQ(parse(" S 0401aF00,16", &a, &error), 1);
  EXPECT_EQ(a.addr, 0x0401af00u);
  EXPECT_EQ(a.size, 16u);
  EXPECT_EQ(a.type, mri::sim::kWrite);
  ASSERT_EQ(parse(" M ffffffffffffffff,512\r", &a, &error), 1);
  EXPECT_EQ(a.addr, ~uint64_t{0});
  EXPECT_EQ(a.size, 512u);
  EXPECT_EQ(a.type, mri::sim::kModify);
  EXPECT_EQ(parse("==18951== Lackey, an example Valgrind tool", &a, &error), 0);
  EXPECT_EQ(parse("--18951-- warning: L3 cache found", &a, &error), 0);
  EXPECT_EQ(parse("### unhandled dwarf2 abbrev form code 0x25", &a, &error), 0);
  EXPECT_EQ(parse("", &a, &error), 0);
}

TEST(Trace, RejectsMalformedLines) {
  Access a{};
  std::string error;
  EXPECT_EQ(parse("gauss: n=100 repeats=1", &a, &error), -1);
  EXPECT_EQ(error,
            "expected 'I  ADDR,SIZE', ' L ADDR,SIZE', ' S ADDR,SIZE', ' M ADDR,SIZE' or a Valgrind '==PID==' "
            "line, got 'gauss: n=100 repeats=1'");
  EXPECT_EQ(parse(" X 0400,4", &a, &error), -1);
  EXPECT_EQ(parse(" L 04g0,4", &a, &error), -1);
  EXPECT_EQ(error, "address '04g0,4' is not hexadecimal");
  EXPECT_EQ(parse(" L 0400", &a, &error), -1);
  EXPECT_EQ(error, "missing ',SIZE' after the address");
  EXPECT_EQ(parse(" L ,4", &a, &error), -1);
  EXPECT_EQ(error, "missing address");
  EXPECT_EQ(parse(" L 0400,", &a, &error), -1);
  EXPECT_EQ(error, "size '' is not a decimal number");
  EXPECT_EQ(parse(" L 0400,4x", &a, &error), -1);
  EXPECT_EQ(error, "size '4x' is not a decimal number");
  EXPECT_EQ(parse(" L 0400,0", &a, &error), -1);
  EXPECT_EQ(error, "size 0 is outside 1..4096");
  EXPECT_EQ(parse(" L 12345678901234567,4", &a, &error), -1);
  EXPECT_EQ(error, "address has more than 16 hexadecimal digits");
}

std::vector<Access> small_trace() {
  std::ifstream in(std::string(MRI_SIM_TRACES) + "/small.trace");
  std::vector<Access> out;
  std::string line, error;
  while (std::getline(in, line)) {
    Access a;
    const int r = mri::sim::parse_lackey_line(line, &a, &error);
    EXPECT_GE(r, 0) << error;
    if (r == 1) out.push_back(a);
  }
  return out;
}

// traces/small.trace with L1 1K 2-way (8 sets, set = line & 7) and L2 4K
// 4-way (16 sets), 64-byte lines; lines 0x40 = addresses 0x1000.., etc.
//  #1 L 1000,8   L1 read miss (set 0); L2 read miss
//  #2 S 1008,8   L1 write hit on the clean line 0x40: now dirty
//  #3 M 1040,4   line 0x41 (set 1): read miss (L2 read miss), write hit
//  #4 L 103c,8   straddles 0x40/0x41: two read hits
//  #5 S 2000,8   line 0x80 (set 0): write miss; L2 write (fill) miss;
//                set 0 = [0x80 dirty, 0x40 dirty]
//  #6 M 1080,8   line 0x42 (set 2): read miss (L2 read miss), write hit
//  #7 L 3000,4   line 0xc0 (set 0): read miss (L2 read miss); evicts the
//                least recent, 0x40 (dirty): one L1 write-back
// L1: reads 6 (misses 4: #1 #3 #6 #7), writes 4 (#2 #3 #5 #6, miss #5),
//     write-backs 1. L2: reads 4, all misses; writes 1, a miss.
// Monitor [0x1000, 0x1100) in 4 bins of 64 bytes: bin 0 gets #1 (L1 and L2
// read miss), #2 (write hit), #4's first line (read hit) and #7's
// write-back of 0x40; bin 1 gets #3 (read miss at both, write hit) and #4's
// second line (read hit); bin 2 gets #6.
TEST(Trace, SmallTraceDefaultModel) {
  const std::vector<Access> trace = small_trace();
  ASSERT_EQ(trace.size(), 9u);
  mri::sim::HierarchyConfig c;
  ASSERT_EQ(mri::sim::parse_config("L1:1K,2,64;L2:4K,4,64", c), "");
  std::string error;
  auto h = mri::sim::Hierarchy::create(c, &error);
  mri::sim::MonitorSpec spec;
  spec.begin = 0x1000;
  spec.end = 0x1100;
  spec.bins = 4;
  spec.events = {{0, mri::sim::EventKind::kReadMiss}, {0, mri::sim::EventKind::kWriteBack}};
  const int id = h->add_monitor(spec, &error);
  h->simulate(0, trace.data(), trace.size());
  const mri::sim::LevelCounters l1 = h->counters(0, 0), l2 = h->counters(0, 1);
  EXPECT_EQ(l1.reads(), 6u);
  EXPECT_EQ(l1.read_misses, 4u);
  EXPECT_EQ(l1.writes(), 4u);
  EXPECT_EQ(l1.write_misses, 1u);
  EXPECT_EQ(l1.write_backs, 1u);
  EXPECT_EQ(l2.reads(), 4u);
  EXPECT_EQ(l2.read_misses, 4u);
  EXPECT_EQ(l2.writes(), 1u);
  EXPECT_EQ(l2.write_misses, 1u);
  mri::sim::MonitorResult r;
  ASSERT_TRUE(h->monitor_result(id, &r));
  EXPECT_EQ(r.count(0, 0), 1u);
  EXPECT_EQ(r.count(0, 1), 1u);
  EXPECT_EQ(r.count(1, 0), 1u);
  EXPECT_EQ(r.count(2, 0), 1u);
  EXPECT_EQ(r.count(3, 0), 0u);
}

// The same trace counted as cachegrind does: the modifies #3 and #6 are
// single reads, the straddling #4 one read (a hit): reads 5 (misses #1 #3
// #6 #7), writes 2 (#2 hit, #5 miss); LL sees every L1 miss and misses them
// all.
TEST(Trace, SmallTraceCachegrindModel) {
  const std::vector<Access> trace = small_trace();
  mri::sim::HierarchyConfig c;
  ASSERT_EQ(mri::sim::parse_config("L1:1K,2,64;L2:4K,4,64;cachegrind-compat", c), "");
  std::string error;
  auto h = mri::sim::Hierarchy::create(c, &error);
  h->simulate(0, trace.data(), trace.size());
  const mri::sim::LevelCounters l1 = h->counters(0, 0), l2 = h->counters(0, 1);
  EXPECT_EQ(l1.reads(), 5u);
  EXPECT_EQ(l1.read_misses, 4u);
  EXPECT_EQ(l1.writes(), 2u);
  EXPECT_EQ(l1.write_misses, 1u);
  EXPECT_EQ(l2.read_misses, 4u);
  EXPECT_EQ(l2.write_misses, 1u);
}

}  // namespace

// The config syntax, its validation messages, and the machine's default
// hierarchy.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "cachesim.h"
#include "config_file.h"

namespace {

using mri::sim::HierarchyConfig;
using mri::sim::LevelConfig;
using mri::sim::Replacement;

std::string parse_error(const std::string& text) {
  HierarchyConfig c;
  return mri::sim::parse_config(text, c);
}

TEST(Config, ParsesEveryField) {
  HierarchyConfig c;
  ASSERT_EQ(mri::sim::parse_config(
                "I1:32K,8,64; L1:48K,12,64,lru,private ;L2:2M,16,64,fifo,shared=2,wt,nwa;"
                "L3:32M,16,128,shared;cores=4",
                c),
            "");
  ASSERT_TRUE(c.instruction_l1.has_value());
  EXPECT_EQ(c.instruction_l1->size_bytes, 32768u);
  ASSERT_EQ(c.levels.size(), 3u);
  EXPECT_EQ(c.levels[0].size_bytes, 48u * 1024);
  EXPECT_EQ(c.levels[0].ways, 12u);
  EXPECT_EQ(c.levels[0].line_bytes, 64u);
  EXPECT_EQ(c.levels[0].replacement, Replacement::kLru);
  EXPECT_EQ(c.levels[0].shared_by, 1u);
  EXPECT_TRUE(c.levels[0].write_back);
  EXPECT_TRUE(c.levels[0].write_allocate);
  EXPECT_EQ(c.levels[1].size_bytes, 2u << 20);
  EXPECT_EQ(c.levels[1].replacement, Replacement::kFifo);
  EXPECT_EQ(c.levels[1].shared_by, 2u);
  EXPECT_FALSE(c.levels[1].write_back);
  EXPECT_FALSE(c.levels[1].write_allocate);
  EXPECT_EQ(c.levels[2].line_bytes, 128u);
  EXPECT_EQ(c.levels[2].shared_by, 0u);
  EXPECT_EQ(c.cores, 4u);
  EXPECT_FALSE(c.cachegrind_compatible);
}

TEST(Config, DefaultsAndCanonicalText) {
  HierarchyConfig c;
  ASSERT_EQ(mri::sim::parse_config("L1:32768,8,64;L2:1MiB,16,64", c), "");
  EXPECT_EQ(mri::sim::format_config(c),
            "L1:32K,8,64,lru,private,wb,wa;L2:1M,16,64,lru,private,wb,wa;cores=1");
  HierarchyConfig again;
  ASSERT_EQ(mri::sim::parse_config(mri::sim::format_config(c), again), "");
  EXPECT_EQ(mri::sim::format_config(again), mri::sim::format_config(c));

  ASSERT_EQ(mri::sim::parse_config("I1:16K,4,64;L1:16K,4,64;L2:256K,8,64,fifo,shared=2;cores=2;cachegrind-compat"
                                   "", c),
            "cachegrind-compat: needs cores=1 (cachegrind has one cache for all threads)");
}

TEST(Config, FileWithCommentsAndLines) {
  const std::string path = ::testing::TempDir() + "cachesim_config_test.txt";
  {
    std::ofstream out(path);
    out << "# a two-level hierarchy\nL1:32K,8,64   # private L1\nL2:1M,16,64,shared\n\ncores=2\n";
  }
  HierarchyConfig c;
  ASSERT_EQ(mri::sim::parse_config_argument("@" + path, c), "");
  EXPECT_EQ(mri::sim::format_config(c), "L1:32K,8,64,lru,private,wb,wa;L2:1M,16,64,lru,shared,wb,wa;cores=2");
  std::remove(path.c_str());
  EXPECT_EQ(mri::sim::parse_config_argument("@/nonexistent/cachesim.cfg", c),
            "config file '/nonexistent/cachesim.cfg': cannot open: No such file or directory");
}

// The parser reads text only: a text that starts with '@' (the form in
// which a user names a file) is refused without opening anything. The
// monitored program parses the text its tool wrote into shared memory, so
// it must never follow a file name from there (it read /dev/zero until the
// allocation failed, and blocked for ever on a FIFO).
TEST(Config, TextThatNamesAFileIsRefused) {
  const std::string path = ::testing::TempDir() + "cachesim_config_named.txt";
  {
    std::ofstream out(path);
    out << "L1:32K,8,64\n";
  }
  HierarchyConfig c;
  c.cores = 7;
  EXPECT_EQ(mri::sim::parse_config("@" + path, c),
            "a configuration text that starts with '@' names a file, and the text parser reads no file");
  EXPECT_EQ(c.cores, 7u) << "the configuration was changed";
  std::remove(path.c_str());
  EXPECT_EQ(parse_error("@/dev/zero"),
            "a configuration text that starts with '@' names a file, and the text parser reads no file");
}

TEST(Config, ValidationMessages) {
  // 24K / (64 x 8) = 48 sets
  EXPECT_EQ(parse_error("L1:24K,8,64"), "L1: 48 sets is not a power of two (size 24K / (64-byte lines x 8 ways))");
  EXPECT_EQ(parse_error("L1:32K,8,64;L2:96K,1,64"),
            "L2: 1536 sets is not a power of two (size 96K / (64-byte lines x 1 way))");
  EXPECT_EQ(parse_error("L1:32K,8,48"), "L1: line size 48 is not a power of two");
  EXPECT_EQ(parse_error("L1:32K,8,4"), "L1: line size 4 is outside 8..4096 bytes");
  EXPECT_EQ(parse_error("L1:32K,3,64"),
            "L1: size 32K is not a multiple of line size x associativity (64 x 3 = 192 bytes)");
  EXPECT_EQ(parse_error("L1:64,2,64"), "L1: size 64 is smaller than one set (64-byte lines x 2 ways = 128 bytes)");
  EXPECT_EQ(parse_error("L1:32K,0,64"), "L1: associativity is 0");
  EXPECT_EQ(parse_error("L1:0,8,64"), "L1: size is 0");
  EXPECT_EQ(parse_error("L1:32K,8,64;L2:1M,16,32"),
            "L2: line size 32 is smaller than L1's 64 (line sizes must not decrease towards memory)");
  EXPECT_EQ(parse_error("L1:32K,8,64,plru"),
            "L1: unknown option 'plru' (expected lru, fifo, private, shared, shared=N, wb, wt, wa or nwa)");
  EXPECT_EQ(parse_error("L1:32X,8,64"), "L1: size '32X' is not a byte count (e.g. 32768, 32K, 1M)");
  EXPECT_EQ(parse_error("L1:32K,eight,64"), "L1: associativity 'eight' is not a number");
  EXPECT_EQ(parse_error("L1:32K,8"), "L1: expected SIZE,WAYS,LINE[,OPTION...], got '32K,8'");
  EXPECT_EQ(parse_error("L1:32K,8,64;L3:1M,16,64"), "L3: given without L2 (levels must be L1, L2, ... in order)");
  EXPECT_EQ(parse_error("L1:32K,8,64;L1:64K,8,64"), "L1: given twice");
  EXPECT_EQ(parse_error("X1:32K,8,64"), "unknown cache level name 'X1' (expected L1..L8 or I1)");
  EXPECT_EQ(parse_error("L1:32K,8,64;colors=4"),
            "unknown item 'colors=4' (expected LEVEL:SIZE,WAYS,LINE[,...], cores=N or cachegrind-compat)");
  EXPECT_EQ(parse_error("cores=4"), "no data cache level (L1 is required)");
  EXPECT_EQ(parse_error("L1:32K,8,64;cores=0"), "cores: must be at least 1");
  EXPECT_EQ(parse_error("L1:32K,8,64;cores=four"), "cores: expected cores=N with N a number, got 'cores=four'");
  EXPECT_EQ(parse_error("L1:32K,8,64;L2:1M,16,64,shared=3;cores=4"),
            "L2: shared by 3 cores, which does not divide cores=4");
  EXPECT_EQ(parse_error("L1:32K,8,64,shared=2;L2:1M,16,64;cores=4"),
            "L2: shared by 1 core, not a multiple of the 2 cores sharing L1 (each instance must serve whole "
            "instances of the level above)");
  EXPECT_EQ(parse_error("L1:32K,8,64,shared=0"), "L1: 'shared=0' needs a core count of at least 1 after 'shared='");
  EXPECT_EQ(parse_error("I1:32K,8,64,shared;L1:32K,8,64;cores=2"), "I1: must be private");
  EXPECT_EQ(parse_error("L1:32K,8,64;cachegrind-compat"),
            "cachegrind-compat: needs exactly 2 data levels (D1 = L1, LL = L2), not 1");
  EXPECT_EQ(parse_error("L1:32K,8,64;L2:1M,16,64,fifo;cachegrind-compat"), "cachegrind-compat: L2 must be lru");
  EXPECT_EQ(parse_error("L1:32K,8,64,nwa;L2:1M,16,64;cachegrind-compat"),
            "cachegrind-compat: L1 must be wa (write-allocate)");
}

TEST(Config, RepeatedOrContradictoryItems) {
  // The last one used to win silently, which hid a typo or a merge of two configs.
  EXPECT_EQ(parse_error("L1:32K,8,64;cores=4;cores=2"), "cores: given twice ('cores=4' and 'cores=2')");
  EXPECT_EQ(parse_error("L1:32K,8,64;L2:1M,16,64;cachegrind-compat;cachegrind-compat"),
            "cachegrind-compat: given twice");
  EXPECT_EQ(parse_error("L1:32K,8,64,lru,fifo"),
            "L1: options 'lru' and 'fifo' contradict (both set the replacement policy)");
  EXPECT_EQ(parse_error("L1:32K,8,64,fifo,fifo"), "L1: option 'fifo' given twice");
  EXPECT_EQ(parse_error("L1:32K,8,64;L2:1M,16,64,wb,nwa,wt"),
            "L2: options 'wb' and 'wt' contradict (both set the write policy)");
  EXPECT_EQ(parse_error("L1:32K,8,64,wa,nwa"), "L1: options 'wa' and 'nwa' contradict (both set the write allocation)");
  EXPECT_EQ(parse_error("L1:32K,8,64;L2:1M,16,64,shared,shared=2;cores=4"),
            "L2: options 'shared' and 'shared=2' contradict (both set the sharing)");
  EXPECT_EQ(parse_error("I1:32K,8,64,private,private;L1:32K,8,64"), "I1: option 'private' given twice");
  // One option of each kind is still fine.
  EXPECT_EQ(parse_error("L1:32K,8,64,fifo,shared,wt,nwa;cores=2"), "");
}

// Only regular files are read, at most kMaxConfigFileBytes of them: a
// directory (which opens like a file and reads as nothing), /dev/zero
// (which never ends) and a FIFO (whose open blocks until a writer comes)
// are refused before a byte is read, with one line that names the file.
TEST(ConfigFile, OnlyRegularFilesOfBoundedSize) {
  HierarchyConfig c;
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(mri::sim::parse_config_argument("@" + dir, c), "config file '" + dir + "': not a regular file (a directory)");
  EXPECT_EQ(mri::sim::parse_config_argument("@/dev/zero", c),
            "config file '/dev/zero': not a regular file (a character device)");
  const std::string fifo = dir + "cachesim_config_fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(mri::sim::parse_config_argument("@" + fifo, c), "config file '" + fifo + "': not a regular file (a FIFO)");
  std::remove(fifo.c_str());

  const std::string big = dir + "cachesim_config_big.txt";
  std::string text;
  {
    std::ofstream out(big);
    const std::string comment = "# " + std::string(60, '-') + "\n";
    for (size_t n = 0; n + comment.size() <= mri::sim::kMaxConfigFileBytes - 12; n += comment.size()) out << comment;
    out << "L1:32K,8,64\n";
  }
  EXPECT_EQ(mri::sim::resolve_config_argument("@" + big, text), "");  // just within the bound
  EXPECT_LE(text.size(), mri::sim::kMaxConfigFileBytes);
  ASSERT_EQ(mri::sim::parse_config_argument("@" + big, c), "");
  EXPECT_EQ(mri::sim::format_config(c), "L1:32K,8,64,lru,private,wb,wa;cores=1");
  { std::ofstream(big, std::ios::app) << "# one line too many\n"; }
  text = "unchanged";
  const std::string error = mri::sim::resolve_config_argument("@" + big, text);
  EXPECT_EQ(error.rfind("config file '" + big + "': ", 0), 0u) << error;
  EXPECT_NE(error.find(" bytes, more than the 65536 a configuration file may have"), std::string::npos) << error;
  EXPECT_EQ(text, "unchanged");
  std::remove(big.c_str());

  const std::string nested = dir + "cachesim_config_nested.txt";
  { std::ofstream(nested) << "@" << big; }
  EXPECT_EQ(mri::sim::parse_config_argument("@" + nested, c), "config file '" + nested + "': a config file cannot name another");
  { std::ofstream(nested) << "L1:32K,8,64;L2:bogus"; }
  EXPECT_EQ(mri::sim::parse_config_argument("@" + nested, c),
            "config file '" + nested + "': L2: expected SIZE,WAYS,LINE[,OPTION...], got 'bogus'");
  std::remove(nested.c_str());
  // Text that does not start with '@' is the configuration itself.
  EXPECT_EQ(mri::sim::resolve_config_argument("L1:32K,8,64", text), "");
  EXPECT_EQ(text, "L1:32K,8,64");
}

TEST(Config, ValidateIsPure) {
  HierarchyConfig c;
  c.levels.push_back(LevelConfig{32768, 8, 64});
  EXPECT_EQ(mri::sim::validate_config(c), "");
  c.levels[0].line_bytes = 96;
  EXPECT_EQ(mri::sim::validate_config(c), "L1: line size 96 is not a power of two");
  EXPECT_EQ(mri::sim::validate_config(c), "L1: line size 96 is not a power of two");
  std::string error;
  EXPECT_EQ(mri::sim::Hierarchy::create(c, &error), nullptr);
  EXPECT_EQ(error, "L1: line size 96 is not a power of two");
}

TEST(Config, DefaultHierarchyIsSane) {
  std::string source;
  const HierarchyConfig c = mri::sim::default_config(&source);
#ifdef MRI_SIM_HAVE_HWLOC
  EXPECT_EQ(source, "hwloc");
#else
  EXPECT_TRUE(source == "sysconf" || source == "fallback") << source;
#endif
  EXPECT_EQ(mri::sim::validate_config(c), "") << mri::sim::format_config(c);
  ASSERT_GE(c.levels.size(), 1u);
  EXPECT_GE(c.cores, 1u);
  for (size_t i = 0; i < c.levels.size(); ++i) {
    // Power-of-two sets (validate_config checks) and a bounded associativity.
    EXPECT_LE(c.levels[i].ways, mri::sim::kMaxDefaultWays) << "level " << i + 1;
    EXPECT_GE(c.levels[i].ways, 1u) << "level " << i + 1;
  }
  for (size_t i = 1; i < c.levels.size(); ++i) {
    EXPECT_GT(c.levels[i].size_bytes, c.levels[i - 1].size_bytes) << "level " << i + 1;
    EXPECT_GE(c.levels[i].line_bytes, c.levels[i - 1].line_bytes) << "level " << i + 1;
  }
#ifdef _SC_LEVEL1_DCACHE_SIZE
  // glibc reads the same CPUID leaves; the L1 data cache must agree (the
  // size may only have been rounded down to whole sets).
  const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (l1 > 0 && source != "fallback") {
    EXPECT_LE(c.levels[0].size_bytes, uint64_t(l1));
    EXPECT_GT(c.levels[0].size_bytes, uint64_t(l1) / 2);
  }
#endif
  std::string error;
  EXPECT_NE(mri::sim::Hierarchy::create(c, &error), nullptr) << error;
}

}  // namespace

// The set search (cachesim.h, SetSearch): the process's choice follows
// MRI_CACHESIM_VECTOR where it is set and is measured where it is not,
// says which it took, and both kernels count alike. CTest runs this suite
// with MRI_CACHESIM_VECTOR unset, =0 and =1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cachesim.h"
#include "snapshot.h"

namespace {

using mri::sim::Hierarchy;
using mri::sim::SetSearch;

bool cpu_has_avx512f() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

mri::sim::HierarchyConfig config_of(const std::string& text) {
  mri::sim::HierarchyConfig c;
  EXPECT_EQ(mri::sim::parse_config(text, c), "");
  return c;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// What the process chose, against what MRI_CACHESIM_VECTOR and the CPU
// allow; and every hierarchy create() makes searches as chosen.
TEST(SetSearch, ChoiceFollowsTheSettingAndIsReported) {
  const char* v = std::getenv("MRI_CACHESIM_VECTOR");
  const std::string setting = v ? v : "";
  const SetSearch& s = Hierarchy::set_search();
  const std::string text = Hierarchy::set_search_description();
  if (!cpu_has_avx512f()) {
    EXPECT_EQ(s.reason, SetSearch::Reason::kNoAvx512);
    EXPECT_FALSE(s.vector);
    EXPECT_TRUE(contains(text, "one way at a time (no AVX-512F)")) << text;
  } else if (setting == "0") {
    EXPECT_EQ(s.reason, SetSearch::Reason::kForced);
    EXPECT_FALSE(s.vector);
    EXPECT_TRUE(contains(text, "one way at a time (MRI_CACHESIM_VECTOR=0)")) << text;
  } else if (!setting.empty()) {
    EXPECT_EQ(s.reason, SetSearch::Reason::kForced);
    EXPECT_TRUE(s.vector);
    EXPECT_TRUE(contains(text, "with AVX-512 (MRI_CACHESIM_VECTOR=1)")) << text;
  } else {
    // Measured: both kernels timed, the faster taken, the figures named.
    EXPECT_EQ(s.reason, SetSearch::Reason::kMeasured);
    EXPECT_GE(s.rounds, 3u);
    EXPECT_GT(s.scalar_ns, 0.0);
    EXPECT_GT(s.vector_ns, 0.0);
    EXPECT_EQ(s.vector, s.vector_ns < s.scalar_ns) << text;
    EXPECT_TRUE(contains(text, s.vector ? "with AVX-512 (measured: " : "one way at a time (measured: ")) << text;
    EXPECT_TRUE(contains(text, s.vector ? " scalar;" : " with AVX-512;")) << text;
  }
  EXPECT_EQ(Hierarchy::vector_lookups(), s.vector);
  std::string error;
  for (uint32_t modulus : {0u, 2u}) {
    auto h = Hierarchy::create(config_of("L1:32K,8,64;L2:1M,16,64"), &error, modulus);
    ASSERT_TRUE(h) << error;
    EXPECT_EQ(h->vector_search(), s.vector) << "split by " << modulus;
  }
}

// create_with_search() obeys its argument whatever the process chose
// (vector only where the CPU has AVX-512F), and the two kernels give the
// same counts and monitor results for every geometry that has kernels of
// its own, with hits and misses at both levels, unsplit and split.
TEST(SetSearch, ForcedKernelsCountAlike) {
  std::vector<mri::sim::Access> stream;
  uint64_t x = 88172645463325252ull;  // xorshift64
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const uint64_t span = (x >> 40) % 4 == 0 ? 4u << 20 : (x >> 40) % 4 == 1 ? 64u << 10 : 16u << 10;
    const uint64_t addr = 0x1000000 + ((x >> 8) % span & ~uint64_t{7});
    stream.push_back({addr, (x >> 30) % 8 == 0 ? 16u : 8u, (x >> 20) % 10 < 3 ? mri::sim::kWrite : mri::sim::kRead});
  }
  for (const char* text : {"L1:32K,8,64;L2:256K,8,64", "L1:32K,8,64;L2:512K,16,64", "L1:48K,12,64;L2:1M,16,64",
                           "L1:48K,12,64;L2:256K,8,64;L3:4M,16,64,shared;cores=2"}) {
    for (uint32_t modulus : {0u, 4u}) {
      const std::string what = std::string(text) + (modulus ? ", split by 4" : "");
      std::string error;
      auto scalar = Hierarchy::create_with_search(config_of(text), false, &error, modulus);
      ASSERT_TRUE(scalar) << error;
      auto vector = Hierarchy::create_with_search(config_of(text), true, &error, modulus);
      ASSERT_TRUE(vector) << error;
      EXPECT_FALSE(scalar->vector_search()) << what;
      EXPECT_EQ(vector->vector_search(), cpu_has_avx512f()) << what;
      std::vector<int> ids[2];
      Hierarchy* both[2] = {scalar.get(), vector.get()};
      for (int k = 0; k < 2; ++k) {
        mri::sim::MonitorSpec spec;
        spec.begin = 0x1000000;
        spec.end = spec.begin + (64u << 10);
        spec.bins = 16;
        spec.events = {{0, mri::sim::EventKind::kReadMiss}, {1, mri::sim::EventKind::kReadHit},
                       {1, mri::sim::EventKind::kWriteBack}};
        ids[k].push_back(both[k]->add_monitor(spec, &error));
        ASSERT_GE(ids[k].back(), 0) << error;
        for (size_t i = 0; i < stream.size(); i += 4096)
          both[k]->simulate(uint32_t(i / 4096 % 2), stream.data() + i, std::min<size_t>(4096, stream.size() - i));
      }
      mri::sim::testing::expect_equal(mri::sim::testing::snapshot(*scalar, ids[0]),
                                      mri::sim::testing::snapshot(*vector, ids[1]), what);
      EXPECT_GT(scalar->counters(0, 1).read_hits, 1000u) << what;  // the searches below L1 were exercised
    }
  }
}

}  // namespace

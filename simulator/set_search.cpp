// set_search.cpp - which set search the process's hierarchies use
// (cachesim.h, SetSearch): the CPU, MRI_CACHESIM_VECTOR, and where the
// choice is left open, a measurement of both kernels on this machine.
//
// The measurement runs the two kernels on the same synthetic stream in
// interleaved passes (scalar, vector, vector, scalar, ...: a machine whose
// speed drifts moves both alike) and keeps the one with the lower median
// time per reference. The stream is the part of a 256 x 256 matrix
// multiply in ijk order where the kernels differ: a row of A read in
// order (L1 hits, the inline path) and a column of B walked with a 2 KiB
// stride (every reference misses L1 and hits 8 deep in L2), 32 columns,
// 16416 references. Over a 32 KiB 8-way L1 and a 1 MiB 16-way L2 (the
// kernel with 8 + 16 ways; the 12-way ones share its lookups). B's
// 64 KiB fit L2, so one pass warms each hierarchy and every later pass
// is the same work. A pass takes 0.05-0.1 ms on the Zen 4 guest (64
// columns ranked the two searches the same at twice the time). The whole
// measurement runs on the thread that creates the process's first
// hierarchy (in a monitored program, the one that applies the first cache
// request), so it is kept short: about 2 ms there (up to 6).
#include "set_search.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cachesim.h"

namespace mri::sim {
namespace internal {

bool cpu_has_avx512f() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

}  // namespace internal

namespace {

// Interleaved passes per kernel, at most; and at least, however long they
// take. The budget ends the passes early on a slow host or under a
// sanitizer (ASan and TSan run the kernels 5-20 times slower).
constexpr uint32_t kMaxRounds = 9;
constexpr uint32_t kMinRounds = 3;
constexpr double kBudgetMs = 20;
constexpr size_t kBatch = 4096;  // the batch of the in-application adapter

std::vector<Access> calibration_stream() {
  constexpr uint64_t kN = 256, kColumns = 32;
  constexpr uint64_t kA = 0x10000000, kB = kA + kN * kN * 8, kC = kB + kN * kN * 8;
  std::vector<Access> v;
  v.reserve(kColumns * (2 * kN + 1));
  for (uint64_t j = 0; j < kColumns; ++j) {
    for (uint64_t k = 0; k < kN; ++k) {
      v.push_back({kA + k * 8, 8, kRead});
      v.push_back({kB + (k * kN + j) * 8, 8, kRead});
    }
    v.push_back({kC + j * 8, 8, kWrite});
  }
  return v;
}

// One pass of `stream` through `h`; ns per reference.
double timed_pass(Hierarchy& h, const std::vector<Access>& stream) {
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < stream.size(); i += kBatch)
    h.simulate(0, stream.data() + i, std::min(kBatch, stream.size() - i));
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - t0;
  return took.count() / double(stream.size());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

SetSearch measure() {
  SetSearch s;
  s.reason = SetSearch::Reason::kMeasured;
  const auto t0 = std::chrono::steady_clock::now();
  HierarchyConfig config;
  std::string error = parse_config("L1:32K,8,64,lru;L2:1M,16,64,lru", config);
  std::unique_ptr<Hierarchy> scalar, vector;
  if (error.empty()) scalar = Hierarchy::create_with_search(config, false, &error);
  if (scalar) vector = Hierarchy::create_with_search(config, true, &error);
  if (!scalar || !vector) {  // 1.1 MiB of tags could not be allocated: keep the scalar search
    s.vector = false;
    return s;
  }
  const std::vector<Access> stream = calibration_stream();
  timed_pass(*scalar, stream);  // warm-up: fills the caches
  timed_pass(*vector, stream);
  std::vector<double> ns_scalar, ns_vector;
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  for (uint32_t r = 0; r < kMaxRounds; ++r) {
    if (r >= kMinRounds && elapsed_ms() > kBudgetMs) break;
    // Alternate which goes first, so neither always follows the other.
    if (r % 2 == 0) {
      ns_scalar.push_back(timed_pass(*scalar, stream));
      ns_vector.push_back(timed_pass(*vector, stream));
    } else {
      ns_vector.push_back(timed_pass(*vector, stream));
      ns_scalar.push_back(timed_pass(*scalar, stream));
    }
  }
  s.rounds = uint32_t(ns_scalar.size());
  s.scalar_ns = median(ns_scalar);
  s.vector_ns = median(ns_vector);
  s.vector = s.vector_ns < s.scalar_ns;
  s.took_ms = elapsed_ms();
  return s;
}

SetSearch decide() {
  if (!internal::cpu_has_avx512f()) return SetSearch{};
  const char* v = std::getenv("MRI_CACHESIM_VECTOR");
  if (v && *v) {
    SetSearch s;
    s.reason = SetSearch::Reason::kForced;
    s.vector = std::strcmp(v, "0") != 0;
    return s;
  }
  return measure();
}

}  // namespace

const SetSearch& Hierarchy::set_search() {
  static const SetSearch chosen = decide();
  return chosen;
}

std::string Hierarchy::set_search_description() {
  const SetSearch& s = set_search();
  const char* how = s.vector ? "sets searched with AVX-512" : "sets searched one way at a time";
  char text[160];
  switch (s.reason) {
    case SetSearch::Reason::kNoAvx512:
      std::snprintf(text, sizeof text, "%s (no AVX-512F)", how);
      break;
    case SetSearch::Reason::kForced:
      std::snprintf(text, sizeof text, "%s (MRI_CACHESIM_VECTOR=%s)", how, s.vector ? "1" : "0");
      break;
    case SetSearch::Reason::kMeasured:
      std::snprintf(text, sizeof text, "%s (measured: %.2f ns a reference, against %.2f %s; %u rounds in %.1f ms)",
                    how, s.vector ? s.vector_ns : s.scalar_ns, s.vector ? s.scalar_ns : s.vector_ns,
                    s.vector ? "scalar" : "with AVX-512", s.rounds, s.took_ms);
      break;
  }
  return text;
}

std::string Hierarchy::vector_setting_error() {
  const char* v = std::getenv("MRI_CACHESIM_VECTOR");
  if (!v || !*v || std::strcmp(v, "0") == 0 || std::strcmp(v, "1") == 0) return "";
  return std::string("MRI_CACHESIM_VECTOR=\"") + v +
         "\": 0 (search the cache sets one way at a time), 1 (with AVX-512 where the CPU has it) or unset (the "
         "faster of the two here, measured at start-up)";
}

}  // namespace mri::sim

// rogue_writer.cpp - see rogue_writer.h.
#include "rogue_writer.h"

#include <time.h>

#include <cmath>
#include <cstddef>
#include <algorithm>
#include <cstring>
#include <limits>

namespace mri::rogue {
namespace {

using namespace proto;

// xorshift64*: no allocation, no lock (the writer runs in a forked child).
struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
};

uint32_t word32(Rng& r, const Geometry& g, uint32_t current) {
  switch (r.below(20)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return ~0u;
    case 3: return 0x7fffffffu;
    case 4: return 0x80000000u;
    case 5: return current | 1u;        // a sequence word left odd
    case 6: return current + 2;         // moved on, as a writer would
    case 7: return current - 1;
    case 8: return g.max_regions;       // one past the bounds an index is checked against
    case 9: return g.max_threads;
    case 10: return g.max_requests;
    case 11: return kMaxHistograms;
    case 12: return kMaxHistogramBins + 1;
    case 13: return kMaxDataStructures + 1;
    case 14: return g.max_regions + 1;     // counts one past the capacity
    case 15: return g.max_threads + 1;
    case 16: return g.string_pool_bytes + 1;
    case 17: return g.max_files;
    default: return uint32_t(r.next());
  }
}

uint64_t word64(Rng& r, const Geometry& g, uint64_t current) {
  switch (r.below(12)) {
    case 0: return 0;
    case 1: return ~0ull;
    case 2: return 1ull << 62;
    case 3: return 1ull << 63;
    case 4: return current + 1;
    case 5: return current - 1;
    case 6: return current + g.trace_records + 1;  // a ring head beyond its capacity
    case 7: return current + g.trace_records;       // exactly full
    case 8: return current - g.trace_records - 1;
    case 9: return kMaxDataStructureBytes + 1;
    default: return r.next();
  }
}

double real(Rng& r) {
  switch (r.below(10)) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -std::numeric_limits<double>::infinity();
    case 3: return 0.0;
    case 4: return -1.0;
    case 5: return 1e300;
    case 6: return std::numeric_limits<double>::denorm_min();
    case 7: return 1e-300;
    default: {
      double d;
      const uint64_t bits = r.next();
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
  }
}

// Texts that hurt a reader: no terminator, control characters, format
// directives, a file name, configurations at the parser's edges.
void text(Rng& r, char* p, uint64_t bytes) {
  static const char* const kTexts[] = {
      "\x1b[2J\x1b[31mred\a\b\r",
      "%s%s%s%n%n%n",
      "@/dev/zero",
      "@/proc/self/fd/0",
      "L1:32K,8,64;L2:1M,16,64;L3:8M,16,64,shared;cores=4",
      "L1:8,1,8",
      "L1:32K,8,64,lru,lru",
      "L9:1K,1,64",
      "L1:4294967296K,1,64",
      "cores=0",
  };
  const uint64_t k = r.below(4);
  if (k == 0) {  // no terminator anywhere in the field
    for (uint64_t i = 0; i < bytes; ++i) p[i] = char('A' + i % 26);
  } else if (k == 1) {
    const char* t = kTexts[r.below(sizeof kTexts / sizeof kTexts[0])];
    const uint64_t n = std::min<uint64_t>(std::strlen(t) + 1, bytes);
    std::memcpy(p, t, n);
  } else {  // random bytes, sometimes terminated
    for (uint64_t i = 0; i < bytes; ++i) p[i] = char(r.next());
    if (r.below(2)) p[r.below(bytes)] = 0;
  }
}

void write_one(Rng& r, unsigned char* base, const Geometry& g, const Area& a) {
  unsigned char* p = base + a.offset + r.below(a.count) * a.stride;
  if (a.bytes == 0) return;
  // Random bytes over a random stretch, in any area (a torn or garbage write).
  if (r.below(6) == 0) {
    const uint64_t at = r.below(a.bytes), n = 1 + r.below(std::min<uint64_t>(a.bytes - at, 256));
    for (uint64_t i = 0; i < n; ++i) p[at + i] = static_cast<unsigned char>(r.next());
    return;
  }
  Shape shape = a.shape;
  if (shape == Shape::kMixed) shape = r.below(2) ? Shape::kWords32 : Shape::kWords64;
  switch (shape) {
    case Shape::kWords32: {
      auto* w = reinterpret_cast<uint32_t*>(p) + r.below(a.bytes / 4);
      __atomic_store_n(w, word32(r, g, __atomic_load_n(w, __ATOMIC_RELAXED)), __ATOMIC_RELAXED);
      break;
    }
    case Shape::kWords64: {
      auto* w = reinterpret_cast<uint64_t*>(p) + r.below(a.bytes / 8);
      __atomic_store_n(w, word64(r, g, __atomic_load_n(w, __ATOMIC_RELAXED)), __ATOMIC_RELAXED);
      break;
    }
    case Shape::kDoubles: {
      const double d = real(r);
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      __atomic_store_n(reinterpret_cast<uint64_t*>(p) + r.below(a.bytes / 8), bits, __ATOMIC_RELAXED);
      break;
    }
    case Shape::kText: {
      // A field: the whole area up to the configuration text's size, else
      // a stretch of it.
      const uint64_t field = std::min<uint64_t>(a.bytes, kCacheConfigBytes);
      text(r, reinterpret_cast<char*>(p) + r.below(a.bytes - field + 1), field);
      break;
    }
    case Shape::kMixed:
      break;
  }
}

}  // namespace

std::vector<Area> areas_of(Side side, const Geometry& g, uint32_t threads, uint32_t regions) {
  const Layout l = compute_layout(g);
  threads = std::min(threads, g.max_threads);
  regions = std::min(regions, g.max_regions);
  std::vector<Area> a;
  if (side == Side::kTool) {
    a.push_back({"header (magic, version, sizes, geometry)", 0, offsetof(Header, tool), Shape::kMixed});
    a.push_back({"ToolControl", offsetof(Header, tool), sizeof(ToolControl), Shape::kWords32});
    a.push_back({"request records", l.requests, uint64_t{g.max_requests} * sizeof(RequestRecord), Shape::kWords32});
    a.push_back({"request records' event names", l.requests + offsetof(RequestRecord, event), kEventNameBytes,
                 Shape::kText, sizeof(RequestRecord), g.max_requests});
    a.push_back({"request bitmaps", l.request_bitmaps, uint64_t{g.max_requests} * bitmap_words(g) * 8, Shape::kWords64});
    a.push_back({"thread masks", l.request_threads, uint64_t{g.max_requests} * kThreadMaskWords * 8, Shape::kWords64});
    a.push_back({"trace ring tails", l.trace_tails, uint64_t{threads} * sizeof(TraceRingTail), Shape::kMixed});
    a.push_back({"cache request records", l.cache_requests, uint64_t{g.max_requests} * sizeof(CacheRequestRecord),
                 Shape::kWords32});
    a.push_back({"cache configuration text", l.cache_config, kCacheConfigBytes, Shape::kText});
    return a;
  }
  a.push_back({"AppControl words", offsetof(Header, app), offsetof(AppControl, refuse_reason), Shape::kMixed});
  a.push_back({"AppControl ns_per_tick", offsetof(Header, app) + offsetof(AppControl, ns_per_tick), 8, Shape::kDoubles});
  a.push_back({"AppControl messages", offsetof(Header, app) + offsetof(AppControl, refuse_reason), 2 * kMessageBytes,
               Shape::kText});
  a.push_back({"overhead calibration", offsetof(Header, overhead), sizeof(OverheadCalibration), Shape::kDoubles});
  a.push_back({"overhead calibration notes", offsetof(Header, overhead) + offsetof(OverheadCalibration, kind) +
                                                 offsetof(OverheadValue, reason),
               kEventNameBytes, Shape::kText, sizeof(OverheadValue), kOverheadKinds});
  a.push_back({"region records", l.regions, uint64_t{regions} * sizeof(RegionRecord), Shape::kWords32});
  a.push_back({"file records", l.files, 8 * sizeof(FileRecord), Shape::kWords32});
  a.push_back({"string pool", l.strings, std::min<uint64_t>(g.string_pool_bytes, 4096), Shape::kText});
  a.push_back({"thread records", l.threads, uint64_t{threads} * sizeof(ThreadRecord), Shape::kMixed});
  a.push_back({"thread names", l.threads + offsetof(ThreadRecord, name), kThreadNameBytes, Shape::kText,
               sizeof(ThreadRecord), threads});
  a.push_back({"request acknowledgements", l.request_acks, uint64_t{g.max_requests} * sizeof(RequestAck),
               Shape::kWords32});
  a.push_back({"aggregate rows", l.aggregates, uint64_t{threads} * aggregate_row_bytes(g), Shape::kMixed});
  a.push_back({"profile rows", l.profiles,
               uint64_t{g.max_profile_slices} * g.max_threads * g.max_regions * sizeof(ProfileSlot), Shape::kWords64});
  a.push_back({"callpath edges", l.edges,
               std::min<uint64_t>(uint64_t{g.max_profile_slices} * g.max_threads * g.max_edges * sizeof(EdgeSlot),
                                  1u << 20),
               Shape::kMixed});
  a.push_back({"trace ring heads", l.trace_heads, uint64_t{threads} * sizeof(TraceRingHead), Shape::kWords64});
  a.push_back({"trace records", l.trace_rings, uint64_t{threads} * g.trace_records * sizeof(TraceRecord),
               Shape::kMixed});
  a.push_back({"data-structure records", l.data_records, 8 * sizeof(DataRecord), Shape::kWords64});
  a.push_back({"cache information text", l.cache_info, kCacheConfigBytes, Shape::kText});
  a.push_back({"histogram heads", l.histogram_heads, uint64_t{kMaxHistograms} * sizeof(HistogramHead), Shape::kMixed});
  a.push_back({"histogram bins", l.histograms, uint64_t{kMaxHistograms} * g.max_threads * kMaxHistogramBins * 8,
               Shape::kWords64});
  return a;
}

void write_forever(unsigned char* base, const Geometry& g, const Area* areas, size_t n, uint64_t seed,
                   uint32_t max_pause_us) {
  Rng r{seed | 1};
  for (;;) {
    for (uint64_t k = 1 + r.below(8); k > 0; --k) write_one(r, base, g, areas[r.below(n)]);
    const uint64_t ns = r.below(uint64_t{max_pause_us} * 1000 + 1);
    struct timespec pause{long(ns / 1'000'000'000), long(ns % 1'000'000'000)};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace mri::rogue

// The shared-memory layout: areas are disjoint, aligned and inside the
// segment for every geometry; bad geometries are named.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "mri_histogram.h"
#include "mri_protocol.h"

using namespace mri::proto;

namespace {

void expect_sane(const Geometry& g) {
  ASSERT_EQ(validate_geometry(g), nullptr);
  const Layout l = compute_layout(g);
  std::vector<std::pair<uint64_t, uint64_t>> areas = {
      {0, sizeof(Header)},
      {l.regions, uint64_t{g.max_regions} * sizeof(RegionRecord)},
      {l.files, uint64_t{g.max_files} * sizeof(FileRecord)},
      {l.strings, g.string_pool_bytes},
      {l.threads, uint64_t{g.max_threads} * sizeof(ThreadRecord)},
      {l.requests, uint64_t{g.max_requests} * sizeof(RequestRecord)},
      {l.request_bitmaps, uint64_t{g.max_requests} * bitmap_words(g) * 8},
      {l.request_acks, uint64_t{g.max_requests} * sizeof(RequestAck)},
      {l.aggregates, uint64_t{g.max_threads} * aggregate_row_bytes(g)},
      {l.profiles, uint64_t{g.max_profile_slices} * g.max_threads * g.max_regions * sizeof(ProfileSlot)},
  };
  std::sort(areas.begin(), areas.end());
  for (size_t i = 0; i + 1 < areas.size(); ++i)
    EXPECT_LE(areas[i].first + areas[i].second, areas[i + 1].first) << "areas " << i << " and " << i + 1 << " overlap";
  EXPECT_LE(areas.back().first + areas.back().second, l.total);
  for (auto [start, size] : areas) EXPECT_EQ(start % kCacheLine, 0u);
  EXPECT_EQ(l.total % 4096, 0u);
  EXPECT_EQ(l.aggregates % 4096, 0u);  // thread rows of results start on their own pages
}

TEST(Protocol, DefaultGeometryIsSane) { expect_sane(kDefaultGeometry); }

TEST(Protocol, SmallAndLargeGeometriesAreSane) {
  expect_sane({1, 1, 1, 1, 1, 1, 0, 0});
  expect_sane({3, 2, 4, 2, 1, 10, 1024, kHardMaxEdges});
  expect_sane({63, 3, 5, 2, 7, 100, 1024, 0});
  expect_sane({65, 17, 33, 3, 9, 4097, 1, 0});
  expect_sane({kHardMaxRegions, 8, 16, 1, kHardMaxFiles, kHardMaxStringPool, kHardMaxTraceRecords, 0});
}

TEST(Protocol, BadGeometriesAreNamed) {
  Geometry g = kDefaultGeometry;
  g.max_regions = 0;
  EXPECT_STREQ(validate_geometry(g), "max_regions out of range");
  g = kDefaultGeometry;
  g.max_threads = kHardMaxThreads + 1;
  EXPECT_STREQ(validate_geometry(g), "max_threads out of range");
  g = kDefaultGeometry;
  g.max_requests = ~0u;
  EXPECT_STREQ(validate_geometry(g), "max_requests out of range");
  g = kDefaultGeometry;
  g.max_profile_slices = kHardMaxProfileSlices + 1;
  EXPECT_STREQ(validate_geometry(g), "max_profile_slices out of range");
  g = kDefaultGeometry;
  g.string_pool_bytes = 0;
  EXPECT_STREQ(validate_geometry(g), "string_pool_bytes out of range");
  g = kDefaultGeometry;
  g.trace_records = 3000;
  EXPECT_STREQ(validate_geometry(g), "trace_records must be a power of two of at most 16777216 (or 0)");
  g.trace_records = kHardMaxTraceRecords * 2;
  EXPECT_STREQ(validate_geometry(g), "trace_records must be a power of two of at most 16777216 (or 0)");
  g = kDefaultGeometry;
  g.max_edges = kHardMaxEdges + 1;
  EXPECT_STREQ(validate_geometry(g), "max_edges out of range");
}

TEST(Protocol, BitmapCoversEveryRegion) {
  Geometry g = kDefaultGeometry;
  for (uint32_t n : {1u, 63u, 64u, 65u, 4096u}) {
    g.max_regions = n;
    EXPECT_GE(bitmap_words(g) * 64, n);
    EXPECT_LT((bitmap_words(g) - 1) * 64, n);
  }
}

TEST(Protocol, ViewRowsStayInsideTheirAreas) {
  const Geometry g{100, 8, 16, 2, 10, 1000, 2048, 64};
  const Layout l = compute_layout(g);
  View v{nullptr, g, l};
  auto off = [&](const void* p) { return uint64_t(static_cast<const unsigned char*>(p) - v.base); };
  EXPECT_EQ(off(v.aggregate(7, 15)) + sizeof(AggregateSlot), l.aggregates + 8 * aggregate_row_bytes(g));
  EXPECT_EQ(off(v.row_head(3)), l.aggregates + 3 * aggregate_row_bytes(g));
  EXPECT_EQ(off(v.aggregate(3, 0)), off(v.row_head(3)) + sizeof(AggregateRowHead));
  EXPECT_EQ(off(v.profile_row(1, 7) + 99) + sizeof(ProfileSlot), l.profiles + 2 * 8 * 100 * sizeof(ProfileSlot));
  EXPECT_EQ(off(v.request_bitmap(15)) + bitmap_words(g) * 8, l.request_bitmaps + 16 * bitmap_words(g) * 8);
  EXPECT_EQ(off(v.trace_ring(7) + 2048), l.trace_rings + 8 * 2048 * sizeof(TraceRecord));
  // Version 7 areas follow the rings; the histogram rows end the segment.
  EXPECT_LE(off(v.trace_ring(7) + 2048), l.data_records);
  EXPECT_EQ(off(v.data_record(kMaxDataStructures)), l.cache_requests);
  EXPECT_EQ(off(v.cache_request(16)), l.cache_config);
  EXPECT_EQ(off(v.cache_info() + kCacheConfigBytes), l.histogram_heads);
  EXPECT_LE(off(v.histogram_head(kMaxHistograms)), l.histograms);
  EXPECT_EQ(l.histograms % 4096, 0u);
  EXPECT_EQ(off(v.histogram_row(kMaxHistograms - 1, 7) + kMaxHistogramBins), l.total);
  EXPECT_EQ(off(v.trace_tail(7) + 1), l.trace_tails + 8 * sizeof(TraceRingTail));
  EXPECT_EQ(l.trace_rings % 4096, 0u);
  EXPECT_EQ(off(v.edge_row(1, 7) + 64), l.edges + 2 * 8 * 64 * sizeof(EdgeSlot));
  EXPECT_EQ(off(v.request_threads(15)) + kThreadMaskWords * 8, l.request_threads + 16 * kThreadMaskWords * 8);
}

}  // namespace

// The histogram layout both sides compute (mri_histogram.h): packed data
// structures in address order, equal bins, pieces with their phase.
TEST(Protocol, HistogramLayoutPacksDataStructures) {
  // Registered out of address order: B (100 bytes at 0x1000), A (30 at
  // 0x100), C (10 at 0x9000).
  const DataRecord records[] = {{0x1000, 100, 0, 0, 0, 0}, {0x100, 30, 0, 0, 0, 0}, {0x9000, 10, 0, 0, 0, 0}};
  HistogramLayout l;
  ASSERT_EQ(histogram_layout(records, 3, 0, 7, l), nullptr);
  EXPECT_EQ(l.total_bytes, 140u);
  EXPECT_EQ(l.bin_bytes, 20u);
  EXPECT_EQ(l.bins, 7u);
  ASSERT_EQ(l.pieces.size(), 3u);
  EXPECT_EQ(l.pieces[0].data_index, 1u);  // A first: lowest address
  EXPECT_EQ(l.pieces[0].bins, 2u);        // packed 0..29: bins 0, 1
  EXPECT_EQ(l.pieces[1].data_index, 0u);  // B: packed 30..129
  EXPECT_EQ(l.pieces[1].first_bin, 1u);
  EXPECT_EQ(l.pieces[1].phase, 10u);
  EXPECT_EQ(l.pieces[1].bins, 6u);        // bins 1..6
  EXPECT_EQ(l.pieces[2].first_bin, 6u);   // C: packed 130..139, shares bin 6 with B
  EXPECT_EQ(l.pieces[2].phase, 10u);
  EXPECT_EQ(l.pieces[2].bins, 1u);
  // One data structure; fewer bins used when the rounding leaves some empty.
  ASSERT_EQ(histogram_layout(records, 3, 3, 7, l), nullptr);
  EXPECT_EQ(l.bin_bytes, 2u);
  EXPECT_EQ(l.bins, 5u);
  EXPECT_STREQ(histogram_layout(records, 3, 3, 11, l), "more bins than bytes to cover");
  EXPECT_STREQ(histogram_layout(records, 3, 4, 2, l), "data structure index out of range");
  EXPECT_STREQ(histogram_layout(records, 0, 0, 2, l), "no data structure is registered");
  EXPECT_STREQ(histogram_layout(records, 3, 0, 0, l), "the number of bins must be 1..1024");
  const DataRecord wraps[] = {{~0ull - 4, 10, 0, 0, 0, 0}};
  EXPECT_STREQ(histogram_layout(wraps, 1, 0, 2, l), "a data structure record has a bad address range");
}

// Sizes near 2^64: a size that no address space holds (a negative size
// cast to unsigned) is refused with the reason, and the arithmetic of a
// layout whose packed bytes come close to 2^64 does not wrap (it gave 0
// bins for 255 data structures of 2^56 bytes in one bin).
TEST(Protocol, HistogramLayoutNearTwoToThe64) {
  HistogramLayout l;
  const DataRecord negative[] = {{0x1000, ~0ull - 0x1000, 0, 0, 0, 0}};  // ends at 2^64 - 1: no wrap
  const char* why = histogram_layout(negative, 1, 0, 52, l);
  ASSERT_NE(why, nullptr) << "got " << l.bins << " bins";
  EXPECT_NE(std::string(why).find("larger than"), std::string::npos) << why;
  EXPECT_TRUE(l.pieces.empty());

  std::vector<DataRecord> huge(255, DataRecord{0x1000, kMaxDataStructureBytes, 0, 0, 0, 0});
  ASSERT_EQ(histogram_layout(huge.data(), 255, 0, 1, l), nullptr);
  EXPECT_EQ(l.total_bytes, 0ull - kMaxDataStructureBytes);  // 2^64 - 2^56
  EXPECT_EQ(l.bin_bytes, l.total_bytes);
  EXPECT_EQ(l.bins, 1u);
  for (const HistogramPiece& p : l.pieces) {
    EXPECT_EQ(p.first_bin, 0u);
    EXPECT_EQ(p.bins, 1u);
  }
  ASSERT_EQ(histogram_layout(huge.data(), 255, 0, 1024, l), nullptr);
  EXPECT_EQ(l.bins, 1024u);
  EXPECT_EQ(l.bin_bytes, l.total_bytes / 1024);
  EXPECT_EQ(l.pieces.back().first_bin + l.pieces.back().bins, 1024u);  // the last piece ends in the last bin
  uint32_t covered = 0;
  for (const HistogramPiece& p : l.pieces) covered += p.bins;
  EXPECT_EQ(covered, 1024u + 254u);  // 4 bins and a bit each: 254 bins shared by two neighbours

  huge.push_back(huge.back());  // 256 of them: 2^64 bytes
  EXPECT_STREQ(histogram_layout(huge.data(), 256, 0, 1, l), "the data structures cover 2^64 bytes or more");
}

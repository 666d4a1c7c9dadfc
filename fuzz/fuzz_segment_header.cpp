// The segment header as the application finds it (libmonitor/attach.cpp):
// the magic, then check_header (libmonitor/header_check.h: version,
// geometry, the layout against the kernel's segment size, the sizes, the
// tool pid) on a header made of fuzzer bytes. For every header it accepts,
// each area of the layout, up to the last element the application can
// index (the geometry's capacities), lies inside the segment, after the
// header and in order: no later index check can be made against a layout
// that does not fit.
//
// Input: the Header (sizeof(proto::Header) bytes), the kernel's segment
// size (u64) and the tool pid of the environment (i64); bytes beyond are
// ignored.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "header_check.h"
#include "fuzz_check.h"

namespace {

using namespace mri;
using u128 = unsigned __int128;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < sizeof(proto::Header) + 16) return 0;
  alignas(proto::Header) unsigned char image[sizeof(proto::Header)];
  std::memcpy(image, data, sizeof image);
  uint64_t segment_bytes;
  int64_t env_pid;
  std::memcpy(&segment_bytes, data + sizeof image, 8);
  std::memcpy(&env_pid, data + sizeof image + 8, 8);
  const proto::Header& h = *reinterpret_cast<const proto::Header*>(image);
  if (segment_bytes < sizeof(proto::Header)) return 0;  // attach refuses it before it maps the segment
  if (!monitor::has_mri_magic(h)) return 0;

  monitor::AcceptedHeader accepted;
  const std::string why = monitor::check_header(h, segment_bytes, long(env_pid), accepted);
  if (!why.empty()) {
    CHECK(why.size() < proto::kMessageBytes && why.find('\n') == std::string::npos);
    return 0;
  }
  const proto::Geometry& g = accepted.geometry;
  const proto::Layout& l = accepted.layout;
  CHECK(proto::validate_geometry(g) == nullptr);
  CHECK(std::memcmp(&g, &h.geometry, sizeof g) == 0);
  // A pid the application can hand to pidfd_open and kill: positive as a
  // pid_t (0 and negatives name process groups, or every process).
  CHECK(accepted.tool_pid == h.tool.tool_pid && accepted.tool_pid >= 1 && accepted.tool_pid <= INT32_MAX);
  CHECK(l.total <= segment_bytes && l.total <= h.segment_size);

  // Each area: [offset, offset + elements * size) in order, after the header.
  u128 end = sizeof(proto::Header);
  auto area = [&](uint64_t offset, u128 bytes) {
    CHECK(offset >= end);
    end = u128(offset) + bytes;
    CHECK(end <= l.total);
  };
  const u128 threads = g.max_threads, requests = g.max_requests, regions = g.max_regions;
  area(l.regions, regions * sizeof(proto::RegionRecord));
  area(l.files, u128(g.max_files) * sizeof(proto::FileRecord));
  area(l.strings, g.string_pool_bytes);
  area(l.threads, threads * sizeof(proto::ThreadRecord));
  area(l.requests, requests * sizeof(proto::RequestRecord));
  area(l.request_bitmaps, requests * proto::bitmap_words(g) * 8);
  CHECK(u128(proto::bitmap_words(g)) * 64 >= regions);
  area(l.request_acks, requests * sizeof(proto::RequestAck));
  area(l.aggregates, threads * (sizeof(proto::AggregateRowHead) + requests * sizeof(proto::AggregateSlot)));
  area(l.profiles, u128(g.max_profile_slices) * threads * regions * sizeof(proto::ProfileSlot));
  area(l.request_threads, requests * proto::kThreadMaskWords * 8);
  CHECK(u128(proto::kThreadMaskWords) * 64 >= threads);
  area(l.edges, u128(g.max_profile_slices) * threads * g.max_edges * sizeof(proto::EdgeSlot));
  area(l.trace_heads, threads * sizeof(proto::TraceRingHead));
  area(l.trace_tails, threads * sizeof(proto::TraceRingTail));
  area(l.trace_rings, threads * g.trace_records * sizeof(proto::TraceRecord));
  area(l.data_records, u128(proto::kMaxDataStructures) * sizeof(proto::DataRecord));
  area(l.cache_requests, requests * sizeof(proto::CacheRequestRecord));
  area(l.cache_config, proto::kCacheConfigBytes);
  area(l.cache_info, proto::kCacheConfigBytes);
  area(l.histogram_heads, u128(proto::kMaxHistograms) * sizeof(proto::HistogramHead));
  area(l.histograms, u128(proto::kMaxHistograms) * threads * proto::kMaxHistogramBins * 8);

  // The typed view's last elements land where the areas say.
  // (A base the view only computes with: nothing is read.)
  constexpr uintptr_t kBase = 1u << 20;
  proto::View v{reinterpret_cast<unsigned char*>(kBase), g, l};
  const auto at = [](const void* p) { return reinterpret_cast<uintptr_t>(p) - kBase; };
  CHECK(at(v.profile_row(g.max_profile_slices - 1, g.max_threads - 1) + g.max_regions) ==
        l.profiles + u128(g.max_profile_slices) * threads * regions * sizeof(proto::ProfileSlot));
  CHECK(at(v.histogram_row(proto::kMaxHistograms - 1, g.max_threads - 1) + proto::kMaxHistogramBins) ==
        l.histograms + u128(proto::kMaxHistograms) * threads * proto::kMaxHistogramBins * 8);
  CHECK(at(v.aggregate(g.max_threads - 1, g.max_requests - 1) + 1) ==
        l.aggregates + threads * (sizeof(proto::AggregateRowHead) + requests * sizeof(proto::AggregateSlot)));
  CHECK(at(v.edge_row(g.max_profile_slices - 1, g.max_threads - 1) + g.max_edges) ==
        l.edges + u128(g.max_profile_slices) * threads * g.max_edges * sizeof(proto::EdgeSlot));
  return 0;
}

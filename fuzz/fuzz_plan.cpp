// The plan compiler (libmonitor/plan.h) on request records, bitmaps,
// acknowledgements and thread masks made of fuzzer bytes: what the
// application's control thread runs at every release over the areas the
// tool writes (gather_requests, compile_requests, and derive_trace_plan
// as install_plan calls it). It must accept or refuse every record without
// reading outside the segment, and every target it builds must stay in the
// ranges the hot path and install_plan index with.
//
// Input: 8 bytes choose a geometry within the sizes below (validated as the
// application validates the tool's), the published regions and the threads
// in use; the rest of the bytes are laid over the request records, then the
// acknowledgements, the thread masks and the request bitmaps (the largest
// area last), zeros beyond the input.
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "plan.h"
#include "fuzz_check.h"

namespace {

using namespace mri;
using namespace mri::monitor;

// Bounds of the fuzzed geometry: every code path (bitmaps of many words,
// several slices, thread masks, rings or none) at a segment of a few MiB.
constexpr uint32_t kMaxRegions = 4096;
constexpr uint32_t kMaxThreads = 8;
constexpr uint32_t kMaxRequests = 64;
constexpr uint32_t kMaxTraceRecords = 1u << 10;
constexpr uint32_t kMaxEdges = 60;

// One mapping for the largest geometry, reused: pages never written stay
// unbacked, and an input clears only the areas it lays its bytes over.
unsigned char* segment_memory() {
  static unsigned char* base = [] {
    const proto::Geometry largest{kMaxRegions, kMaxThreads, kMaxRequests, proto::kHardMaxProfileSlices, 1, 64,
                                  kMaxTraceRecords, kMaxEdges};
    void* p = mmap(nullptr, proto::compute_layout(largest).total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) broken("mmap of the segment");
    return static_cast<unsigned char*>(p);
  }();
  return base;
}

// Lays `data` over [offset, offset + bytes) of the segment, zeros beyond it.
void lay(unsigned char* base, uint64_t offset, uint64_t bytes, const uint8_t*& data, size_t& size) {
  const size_t n = size < bytes ? size : size_t(bytes);
  std::memcpy(base + offset, data, n);
  std::memset(base + offset + n, 0, bytes - n);
  data += n;
  size -= n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  proto::Geometry g{};
  g.max_regions = 1 + (uint32_t(data[0]) | uint32_t(data[1]) << 8) % kMaxRegions;
  g.max_threads = 1 + data[2] % kMaxThreads;
  g.max_requests = 1 + data[3] % kMaxRequests;
  g.max_profile_slices = 1 + (data[4] & 15);  // up to kHardMaxProfileSlices
  g.max_edges = (data[4] >> 4) * 4;            // 0 (no callpath edges) .. kMaxEdges
  g.max_files = 1;
  g.string_pool_bytes = 64;
  const uint32_t ring = data[5] % 12;
  g.trace_records = ring == 11 ? 0 : 1u << ring;  // no trace area, or 1 .. kMaxTraceRecords records
  if (proto::validate_geometry(g)) return 0;  // the application refuses it before any request
  const uint32_t regions = uint32_t(data[6]) * g.max_regions / 255;  // published: 0..max_regions
  const uint32_t threads = data[7] % (g.max_threads + 1);
  const bool unwind = data[7] & 0x80;
  data += 8;
  size -= 8;

  proto::View v;
  v.g = g;
  v.l = proto::compute_layout(g);
  v.base = segment_memory();
  lay(v.base, v.l.requests, uint64_t{g.max_requests} * sizeof(proto::RequestRecord), data, size);
  lay(v.base, v.l.request_acks, uint64_t{g.max_requests} * sizeof(proto::RequestAck), data, size);
  lay(v.base, v.l.request_threads, uint64_t{g.max_requests} * proto::kThreadMaskWords * sizeof(uint64_t), data, size);
  lay(v.base, v.l.request_bitmaps, uint64_t{g.max_requests} * proto::bitmap_words(g) * sizeof(uint64_t), data, size);

  std::vector<GatheredRequest> requests = gather_requests(v, regions);
  CHECK(requests.size() <= g.max_requests);
  for (const GatheredRequest& q : requests) {
    CHECK(q.input.slot < g.max_requests);
    for (uint32_t r : q.input.regions) CHECK(r < regions);
  }
  const PlanLimits limits{g, regions, threads, unwind};
  const CompiledPlan plan = compile_requests(requests, limits, &v);

  // Every gathered request is answered once: acknowledged by the compiler
  // or handed to the source that measures it itself.
  std::vector<uint8_t> answered(g.max_requests, 0);
  for (const Ack& a : plan.acks) {
    CHECK(a.slot < g.max_requests);
    CHECK(!answered[a.slot]);
    answered[a.slot] = 1;
    CHECK(!(a.ok && a.corrupt));
    CHECK(!a.ok || a.note.empty());
    CHECK(a.note.size() < proto::kMessageBytes);
  }
  size_t owned = 0;
  for (const auto& list : plan.owned)
    for (const RequestInput& q : list) {
      CHECK(q.slot < g.max_requests);
      CHECK(!answered[q.slot]);
      answered[q.slot] = 1;
      ++owned;
    }
  CHECK(plan.acks.size() + owned == requests.size());

  // The targets stay in the ranges install_plan and the hot path index with.
  CHECK(plan.regions == regions);
  CHECK(plan.aggs.size() == regions && plan.slices.size() == regions && plan.traces.size() == regions);
  CHECK(plan.keep_trace_open.size() == g.max_requests);
  CHECK(plan.trace_slots <= proto::kMaxTraceRequests);
  CHECK(plan.trace_slots == 0 || g.trace_records > 0);
  CHECK(plan.n_readers <= kMaxSources);
  CHECK(plan.reading_list.size() <= kMaxReadings);
  auto check_trace = [&](const TraceTarget& t) {
    CHECK(t.request < g.max_requests);
    CHECK(t.slot < plan.trace_slots);
    CHECK(t.threads == nullptr || t.threads == plan.trace_threads[t.slot]);
    CHECK(t.kind != uint16_t(ValueKind::kReading) || t.reading < plan.reading_list.size());
  };
  for (uint32_t r = 0; r < regions; ++r) {
    CHECK(plan.aggs[r].size() <= UINT16_MAX && plan.slices[r].size() <= UINT16_MAX);
    CHECK(plan.traces[r].size() <= proto::kMaxTraceRequests);
    for (const AggTarget& a : plan.aggs[r]) {
      CHECK(a.request < g.max_requests);
      CHECK(a.kind == uint8_t(ValueKind::kTime) || a.kind == uint8_t(ValueKind::kCount) ||
            a.kind == uint8_t(ValueKind::kReading));
      CHECK(a.kind != uint8_t(ValueKind::kReading) || a.reading < plan.reading_list.size());
    }
    for (uint32_t slice : plan.slices[r]) CHECK(slice < g.max_profile_slices && plan.slice_set[slice]);
    for (const TraceTarget& t : plan.traces[r]) check_trace(t);
    RegionPlan p;
    derive_trace_plan(p, plan.traces[r].data(), uint32_t(plan.traces[r].size()));
  }
  for (uint32_t slice : plan.all_slices) CHECK(slice < g.max_profile_slices && plan.slice_set[slice]);
  for (const TraceTarget& t : plan.all_traces) check_trace(t);
  CHECK(plan.all_slices.size() <= UINT16_MAX && plan.all_traces.size() <= UINT16_MAX);
  // A slice some region measures with (a paused request's slice is set but
  // measures nothing) reads a reading of the list.
  std::vector<uint8_t> measured(proto::kHardMaxProfileSlices, 0);
  for (const auto& slices : plan.slices)
    for (uint32_t slice : slices) measured[slice] = 1;
  for (uint32_t slice : plan.all_slices) measured[slice] = 1;
  for (uint32_t s = 0; s < proto::kHardMaxProfileSlices; ++s) {
    CHECK(!plan.slice_set[s] || s < g.max_profile_slices);
    CHECK(!plan.slice_set[s] || plan.slice_value[s].request < g.max_requests);
    CHECK(!measured[s] || plan.slice_value[s].kind != uint8_t(ValueKind::kReading) ||
          plan.slice_value[s].reading < plan.reading_list.size());
    CHECK(!plan.slice_callpath[s] || g.max_edges > 0);
    CHECK(!plan.slice_unwind[s] || unwind);
  }
  for (const Reset& r : plan.resets) {
    if (r.what == Reset::What::kAggregate)
      CHECK(r.index < g.max_requests);
    else
      CHECK(r.index < g.max_profile_slices);
    CHECK(r.what != Reset::What::kEdges || g.max_edges > 0);
  }
  return 0;
}

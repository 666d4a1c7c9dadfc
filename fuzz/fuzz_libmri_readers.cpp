// libmri's readers of the segment, on a segment whose application-written
// areas hold fuzzer bytes: the static information (regions, files, data
// structures: refresh_static_information, refresh_data_structures), the
// result readers of MRI_Get_Data (aggregate slots and their reduction,
// profile rows, callpath edges, histogram bins and their labels) and the
// trace ring readers (look_at_ring, copy_ring_records,
// ring_holds_request, decode_trace_record). These are the functions the
// tool runs (not copies), on the same View type; the segment lives in
// ordinary memory (libmri/tests/segment_in_memory.h) with no process
// behind it, so a thread row left mid-update is read once, as when the
// application is gone.
//
// Each function must stay inside the geometry it is given (ASan), and
// what it returns must hold what the API promises its caller: published
// regions of a valid type naming a published file; data structures of
// 1..2^56 bytes; one profile element per asked region and one value per
// asked thread; callpath callees among the published regions; histogram
// bins no more than asked; ring records copied only for a plausible head,
// each decoded to a valid region type.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "data_structures.h"
#include "mri_histogram.h"
#include "request_aggregate.h"
#include "request_histogram.h"
#include "request_profile.h"
#include "row_reader.h"
#include "segment_in_memory.h"
#include "trace_ring.h"
#include "fuzz_check.h"

using namespace mri;
using namespace mri::tool;
using namespace mri::tool::testing;

namespace {

const auto kGone = [] { return true; };  // no process: a row left odd is read once

// The areas the application writes, which the input patches: [offset,
// offset + bytes) of the segment.
struct Area {
  uint64_t offset, bytes;
};
std::vector<Area> application_areas(const proto::View& v) {
  const proto::Layout& l = v.l;
  const uint64_t app = offsetof(proto::Header, app);
  // Each area runs to the next one's start (the layout's order below).
  const uint64_t starts[] = {l.regions,  l.files,       l.strings,      l.threads,         l.requests,
                             l.request_bitmaps, l.request_acks, l.aggregates, l.profiles,   l.request_threads,
                             l.edges,    l.trace_heads, l.trace_tails,  l.trace_rings,     l.data_records,
                             l.cache_requests,  l.cache_config, l.cache_info, l.histogram_heads, l.histograms,
                             l.total};
  auto next_after = [&](uint64_t at) {
    uint64_t next = l.total;
    for (uint64_t s : starts)
      if (s > at && s < next) next = s;
    return next;
  };
  std::vector<Area> areas = {{app, sizeof(proto::AppControl)}};
  for (uint64_t at : {l.regions, l.files, l.strings, l.aggregates, l.profiles, l.edges, l.trace_heads,
                      l.trace_tails, l.trace_rings, l.data_records, l.histogram_heads, l.histograms})
    areas.push_back({at, next_after(at) - at});
  return areas;
}

// What the application would have published before the fuzzer's bytes go
// over it: a file, three regions in it, four threads, two data structures.
void publish_baseline(SegmentInMemory& segment) {
  const uint32_t file = segment.publish_file("f.c");
  const uint32_t a_name = segment.publish_file("A");  // a name in the pool for each data structure
  const uint32_t b_name = segment.publish_file("B");
  segment.publish_region(MRI_REGION_ROUTINE, file, 1, "main");
  segment.publish_region(MRI_REGION_LOOP, file, 2, "loop");
  segment.publish_region(MRI_REGION_BLOCK, file, 3, "block");
  segment.set_threads(4);
  const proto::View& v = segment.view();
  *v.data_record(0) = proto::DataRecord{0x10000, 4096, v.file(a_name)->name_offset, 1, file, 5};
  *v.data_record(1) = proto::DataRecord{0x20040, 640, v.file(b_name)->name_offset, 1, file, 6};
  segment.app().data_count = 2;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  proto::Geometry g = small_geometry();
  g.trace_records = 1u << (data[0] % 7);  // 1 .. 64 records a ring
  const bool ended = data[1] & 1;         // the program had ended before the rings were looked at
  const int ri = data[1] >> 1 & 1 ? MRI_EXECUTION_TIME : MRI_REGION_EVENT;
  const uint32_t bins = 1 + (uint32_t(data[2]) | uint32_t(data[3]) << 8) % 2000;  // what a histogram query asks
  data += 4;
  size -= 4;

  SegmentInMemory segment(g);
  publish_baseline(segment);
  const proto::View& v = segment.view();
  // Patches: area (u8), offset (u16), length (u8), then the bytes, each
  // clipped to its area.
  const std::vector<Area> areas = application_areas(v);
  while (size >= 4) {
    const Area& a = areas[data[0] % areas.size()];
    const uint64_t at = (uint32_t(data[1]) | uint32_t(data[2]) << 8) % a.bytes;
    const size_t want = data[3];
    data += 4;
    size -= 4;
    const size_t n = std::min({want, size, size_t(a.bytes - at)});
    std::memcpy(v.base + a.offset + at, data, n);
    data += n;
    size -= n;
  }

  // The static information, as MRI_Application_Load and each call after it
  // read it (a refusal is an answer: what was read before it stays).
  Session s;
  load_in_memory(s, segment);
  refresh_data_structures(s);
  for (const RegionEntry& r : s.regions) {
    CHECK(int(r.spec.type) >= 0 && int(r.spec.type) < MRI_REGION_TYPE_COUNT);
    CHECK(r.spec.id.file_ID >= 0 && size_t(r.spec.id.file_ID) < s.files.size());
  }
  CHECK(s.regions.size() <= g.max_regions && s.files.size() <= g.max_files);
  for (const DataEntry& d : s.data) {
    CHECK(d.record.bytes >= 1 && d.record.bytes <= proto::kMaxDataStructureBytes);
    CHECK(!d.name.empty() && d.spec.name == d.name.c_str());
  }

  // The results.
  const std::vector<int> threads = {0, 1, 2, 3, 4, -1};
  const uint32_t rows = thread_rows(v);
  CHECK(rows <= g.max_threads);
  for (uint32_t record = 0; record <= g.max_requests; ++record) {
    std::vector<ThreadSlot> slots = {{0, {}}, {3, {}}, {4, {}}, {-2, {}}};
    read_aggregate_slots(v, record, rows, true, kGone, slots);
    CHECK(reduce_aggregate(MRI_EXECUTION_TIME, {MRI_MAX, MRI_PER_PROCESS}, slots, 1, 1.0).size() == 1);
    CHECK(reduce_aggregate(MRI_EXECUTION_TIME, {MRI_SUM, MRI_PER_THREAD}, slots, 1, 2.5).size() == slots.size());
  }
  const std::vector<int> region_ids = {0, 1, 2, -1, 100};
  for (uint32_t slice = 0; slice <= g.max_profile_slices; ++slice) {
    std::vector<MRI_Profile_Element> elements;
    std::vector<MRI_Profile_Value> values;
    read_profile(v, slice, s.regions, region_ids, threads, rows, true, 1.0, kGone, elements, values);
    CHECK(elements.size() == region_ids.size());
    CHECK(values.size() == region_ids.size() * threads.size());
    for (const MRI_Profile_Element& e : elements)
      for (int k = 0; k < e.nr_Active_Objects; ++k) CHECK(e.instances >= e.per_active_object[k].instances);
    for (const MRI_Callpath_Element& e : read_callpath(v, slice, s.regions, threads, true, 1.0, kGone)) {
      CHECK(e.instances > 0);
      bool published = false;
      for (const RegionEntry& r : s.regions)
        published |= r.spec.type == e.callee.type && r.spec.id.file_ID == e.callee.id.file_ID &&
                     r.spec.id.line_NR == e.callee.id.line_NR;
      CHECK(published);
    }
  }
  for (uint32_t slot = 0; slot <= proto::kMaxHistograms; ++slot) {
    const proto::HistogramHead head = slot < proto::kMaxHistograms ? *v.histogram_head(slot) : proto::HistogramHead{};
    HistogramQuery q;
    q.histogram = slot;
    q.generation = head.applied_generation;
    q.data_index = head.data_index;
    q.bins = slot % 2 ? bins : head.bins;
    q.active = true;
    bool applied = false;
    proto::HistogramLayout layout;
    std::vector<uint64_t> values;
    if (read_histogram(v, q, s.data, threads, kGone, applied, layout, values) == nullptr && applied) {
      CHECK(values.size() == layout.bins);
      CHECK(layout.bins <= std::min(q.bins, proto::kMaxHistogramBins));
      std::vector<MRI_Histogram_Bin> labelled;
      std::vector<MRI_Data_Structure_Spec> specs;
      label_histogram_bins(layout, values, s.data, labelled, specs);
      CHECK(labelled.size() == layout.bins);
    } else {
      CHECK(values.empty());
    }
  }

  // The trace rings, with the tool's tail as the segment holds it.
  for (uint32_t t = 0; t <= g.max_threads; ++t) {
    const uint64_t head = t < g.max_threads ? v.trace_head(t)->head : 0;
    const uint64_t tail = t < g.max_threads ? v.trace_tail(t)->tail : 0;
    uint64_t end_head = kUnknownHead;
    for (int look_again = 0; look_again < 2; ++look_again) {
      const RingLook look = look_at_ring(head + uint64_t(look_again), tail, g.trace_records, ended, end_head);
      CHECK((look == RingLook::kReadable) == (ring_look_problem(look) == nullptr));
      if (look != RingLook::kReadable) continue;
      CHECK(plausible_head(head + uint64_t(look_again), tail, g.trace_records));
    }
    if (!plausible_head(head, tail, g.trace_records)) {
      CHECK(!ring_holds_request(v, t, tail, head, 0));
      continue;
    }
    std::vector<CollectedRecord> records;
    const uint64_t copied = copy_ring_records(v, t, tail, head - tail, records);
    CHECK(copied == records.size());
    CHECK(copied == (t < g.max_threads ? head - tail : 0));
    bool holds_0 = false;
    for (const CollectedRecord& r : records) holds_0 |= r.request == 0;
    CHECK(ring_holds_request(v, t, tail, head, 0) == holds_0);
    RecordMeaning meaning;
    meaning.ri = ri;
    const uint32_t published = std::min(segment.app().region_count, g.max_regions);
    for (const CollectedRecord& r : records) {
      MRI_Trace_Element_Spec out;
      decode_trace_record(v, r, meaning, 0, 1.0, out);
      CHECK(int(out.region.type) >= 0 && int(out.region.type) < MRI_REGION_TYPE_COUNT);
      if (r.region >= published) CHECK(out.region.id.file_ID == -1 && out.region.id.line_NR == -1);
      CHECK(out.active_object.type == MRI_THREAD && out.active_object.id == int(t));
      if (r.kind == uint16_t(proto::TraceKind::kEnter)) CHECK(out.data == MRI_TRACE_ENTER);
    }
  }
  return 0;
}

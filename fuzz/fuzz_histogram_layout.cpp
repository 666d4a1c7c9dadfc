// The histogram layout (protocol/mri_histogram.h) over data-structure
// records made of fuzzer bytes: what the application computes from the
// table its threads published and the tool's request
// (backends/cachesim/monitor/targets.cpp) and the tool from the table it
// read, both untrusted on the other side. A refusal leaves the layout
// empty; an accepted layout covers exactly the records' bytes, in at most
// the requested bins, and each piece gives the simulator an address-range
// monitor it accepts, made as targets.cpp makes it.
//
// Input: the data-structure index (u32), the requested bins (u32), then
// 32-byte DataRecords (at most the table's 1024).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cachesim.h"
#include "mri_histogram.h"
#include "fuzz_check.h"

namespace {

using namespace mri;
using u128 = unsigned __int128;

sim::Hierarchy& hierarchy() {
  static std::unique_ptr<sim::Hierarchy> h = [] {
    sim::HierarchyConfig config;
    std::string error = sim::parse_config("L1:1K,2,64", config);
    auto made = error.empty() ? sim::Hierarchy::create(config, &error) : nullptr;
    if (!made) broken(error.c_str());
    return made;
  }();
  return *h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint32_t data_index, requested;
  std::memcpy(&data_index, data, 4);
  std::memcpy(&requested, data + 4, 4);
  const size_t count = std::min<size_t>((size - 8) / sizeof(proto::DataRecord), proto::kMaxDataStructures);
  std::vector<proto::DataRecord> records(count);
  if (count) std::memcpy(records.data(), data + 8, count * sizeof(proto::DataRecord));

  proto::HistogramLayout layout;
  layout.bins = 7;  // the call must reset it
  const char* why = proto::histogram_layout(records.data(), uint32_t(count), data_index, requested, layout);
  if (why) {
    CHECK(layout.bins == 0 && layout.pieces.empty() && layout.total_bytes == 0 && layout.bin_bytes == 0);
    CHECK(std::strchr(why, '\n') == nullptr);
    return 0;
  }
  const uint32_t first = data_index ? data_index - 1 : 0, last = data_index ? data_index : uint32_t(count);
  CHECK(data_index <= count);
  CHECK(layout.pieces.size() == last - first);
  CHECK(layout.bins >= 1 && layout.bins <= requested && requested <= proto::kMaxHistogramBins);
  CHECK(layout.bin_bytes >= 1);
  // The bins cover the packed bytes, the last one not empty.
  CHECK(u128(layout.bins) * layout.bin_bytes >= layout.total_bytes);
  CHECK(u128(layout.bins - 1) * layout.bin_bytes < layout.total_bytes);
  u128 packed = 0;
  for (size_t i = 0; i < layout.pieces.size(); ++i) {
    const proto::HistogramPiece& p = layout.pieces[i];
    CHECK(p.data_index >= first && p.data_index < last);
    CHECK(p.address == records[p.data_index].address && p.bytes == records[p.data_index].bytes);
    CHECK(p.bytes >= 1 && p.bytes <= proto::kMaxDataStructureBytes);
    CHECK(p.address + p.bytes > p.address);  // no wrap: the monitor's range ends above its start
    CHECK(i == 0 || layout.pieces[i - 1].address <= p.address);
    CHECK(p.packed == packed);
    packed += p.bytes;
    CHECK(p.first_bin == p.packed / layout.bin_bytes && p.phase == p.packed % layout.bin_bytes);
    CHECK(p.bins >= 1 && u128(p.first_bin) + p.bins <= layout.bins);
    CHECK(u128(p.first_bin + p.bins - 1) * layout.bin_bytes <= u128(p.packed) + p.bytes - 1);
  }
  CHECK(packed == layout.total_bytes);

  // The application's monitors for these pieces (backends/cachesim/monitor/targets.cpp, create_monitors).
  sim::Hierarchy& h = hierarchy();
  for (const proto::HistogramPiece& p : layout.pieces) {
    sim::MonitorSpec spec;
    spec.events = {sim::Event{0, sim::EventKind::kReadMiss}};
    spec.enabled = false;
    spec.begin = p.address;
    spec.end = p.address + p.bytes;
    spec.bins = p.bins;
    spec.bin_bytes = p.bins > 1 ? layout.bin_bytes : 0;
    spec.bin_phase = p.bins > 1 ? p.phase : 0;
    std::string error;
    const int id = h.add_monitor(spec, &error);
    if (id < 0) {
      std::fprintf(stderr, "the simulator refuses a piece's monitor: %s\n", error.c_str());
      std::abort();
    }
    h.remove_monitor(id);
  }
  return 0;
}

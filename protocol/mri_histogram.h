// mri_histogram.h - the bin layout of a histogram request (paper 3.2, 4.2),
// one pure function that both sides compute from the data-structure table
// (the MCC to configure the simulator's monitors, libmri to label the bins),
// so the shared segment carries only counts.
//
// The histogram covers one data structure, or every registered one. Its
// data structures are packed one after the other in address order (the
// gaps between them, often gigabytes between static and heap data, are left
// out) and the packed bytes are cut into bins of bin_bytes =
// ceil(total / requested) bytes; the last bin may be shorter and fewer bins
// than requested are used when the rounding leaves the last ones empty
// (e.g. 7 bins over 8 bytes: 2-byte bins, 4 of them). A large data
// structure can span several bins and a bin can hold several small ones.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mri_protocol.h"

namespace mri::proto {

// One data structure's part of the layout.
struct HistogramPiece {
  uint32_t data_index;  // into the data-structure table (0-based)
  uint64_t address;     // first byte
  uint64_t bytes;
  uint64_t packed;      // offset of its first byte in the packed space
  uint32_t first_bin;   // the bin of its first byte
  uint64_t phase;       // offset of its first byte within that bin
  uint32_t bins;        // bins it touches
};

struct HistogramLayout {
  uint64_t total_bytes = 0;
  uint64_t bin_bytes = 0;
  uint32_t bins = 0;  // in use
  std::vector<HistogramPiece> pieces;  // in address order
};

// Computes the layout of a histogram over record data_index - 1 of
// records[0, count), or over all of them when data_index is 0, with
// `requested` bins. Returns nullptr on success, else why not (no data
// structure, bad index, bins out of 1..kMaxHistogramBins or above the
// bytes covered). Pure; thread-safe; records are not trusted (sizes of 0
// and address ranges that wrap are errors).
inline const char* histogram_layout(const DataRecord* records, uint32_t count, uint32_t data_index,
                                    uint32_t requested, HistogramLayout& out) {
  out = HistogramLayout{};
  if (requested < 1 || requested > kMaxHistogramBins) return "the number of bins must be 1..1024";
  if (data_index > count) return "data structure index out of range";
  const uint32_t first = data_index ? data_index - 1 : 0, last = data_index ? data_index : count;
  for (uint32_t i = first; i < last; ++i) {
    const DataRecord& r = records[i];
    if (r.bytes == 0 || r.address + r.bytes < r.address) return "a data structure record has a bad address range";
    out.pieces.push_back(HistogramPiece{i, r.address, r.bytes, 0, 0, 0, 0});
  }
  if (out.pieces.empty()) return "no data structure is registered";
  std::sort(out.pieces.begin(), out.pieces.end(), [](const HistogramPiece& a, const HistogramPiece& b) {
    return a.address != b.address ? a.address < b.address : a.data_index < b.data_index;
  });
  for (HistogramPiece& p : out.pieces) {
    p.packed = out.total_bytes;
    out.total_bytes += p.bytes;
    if (out.total_bytes < p.bytes) return "the data structures cover more than 2^64 bytes";
  }
  if (requested > out.total_bytes) return "more bins than bytes to cover";
  out.bin_bytes = out.total_bytes / requested + (out.total_bytes % requested != 0);
  out.bins = uint32_t((out.total_bytes + out.bin_bytes - 1) / out.bin_bytes);
  for (HistogramPiece& p : out.pieces) {
    p.first_bin = uint32_t(p.packed / out.bin_bytes);
    p.phase = p.packed % out.bin_bytes;
    p.bins = uint32_t((p.phase + p.bytes - 1) / out.bin_bytes + 1);
  }
  return nullptr;
}

}  // namespace mri::proto

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
#include <utility>
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
// bytes covered; `out` is then empty). Pure; thread-safe; records are not
// trusted: sizes of 0 or above kMaxDataStructureBytes, address ranges that
// wrap and totals of 2^64 bytes or more are errors, and no sum or rounding
// here can wrap (every value stays at most the total, below 2^64).
inline const char* histogram_layout(const DataRecord* records, uint32_t count, uint32_t data_index,
                                    uint32_t requested, HistogramLayout& out) {
  out = HistogramLayout{};
  if (requested < 1 || requested > kMaxHistogramBins) return "the number of bins must be 1..1024";
  if (data_index > count) return "data structure index out of range";
  HistogramLayout l;
  const uint32_t first = data_index ? data_index - 1 : 0, last = data_index ? data_index : count;
  for (uint32_t i = first; i < last; ++i) {
    const DataRecord& r = records[i];
    if (r.bytes > kMaxDataStructureBytes)
      return "a data structure record is larger than 2^56 bytes (no address space is that large)";
    if (r.bytes == 0 || r.address + r.bytes < r.address) return "a data structure record has a bad address range";
    l.pieces.push_back(HistogramPiece{i, r.address, r.bytes, 0, 0, 0, 0});
  }
  if (l.pieces.empty()) return "no data structure is registered";
  std::sort(l.pieces.begin(), l.pieces.end(), [](const HistogramPiece& a, const HistogramPiece& b) {
    return a.address != b.address ? a.address < b.address : a.data_index < b.data_index;
  });
  for (HistogramPiece& p : l.pieces) {
    p.packed = l.total_bytes;
    l.total_bytes += p.bytes;
    if (l.total_bytes < p.bytes) return "the data structures cover 2^64 bytes or more";
  }
  if (requested > l.total_bytes) return "more bins than bytes to cover";
  // Ceilings as quotient plus remainder: (x + d - 1) / d wraps for x near 2^64.
  l.bin_bytes = l.total_bytes / requested + (l.total_bytes % requested != 0);
  l.bins = uint32_t(l.total_bytes / l.bin_bytes + (l.total_bytes % l.bin_bytes != 0));
  for (HistogramPiece& p : l.pieces) {
    p.first_bin = uint32_t(p.packed / l.bin_bytes);
    p.phase = p.packed % l.bin_bytes;
    const uint64_t last_byte = p.packed + (p.bytes - 1);  // below total_bytes
    p.bins = uint32_t(last_byte / l.bin_bytes - p.first_bin + 1);
  }
  out = std::move(l);
  return nullptr;
}

}  // namespace mri::proto

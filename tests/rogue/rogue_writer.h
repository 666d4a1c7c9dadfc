// rogue_writer.h - the rogue peer of tests/rogue: a process attached to a
// live segment that writes random and adversarial values into the areas
// one side owns, while the real processes use it.
#pragma once

#include <cstdint>
#include <vector>

#include "mri_protocol.h"

namespace mri::rogue {

// Whose words the rogue overwrites.
enum class Side { kTool, kProgram };

// How the words of an area are read, for the values that hurt them most.
enum class Shape : uint8_t {
  kWords32,  // counters, indices, states, sequence words
  kWords64,  // ring heads and tails, timestamps, sizes, addresses
  kDoubles,  // clock factors, calibrations
  kText,     // NUL-terminated text in a fixed field
  kMixed,    // records of mixed fields
};

// `count` fields of `bytes` each, `stride` bytes apart, the first at
// `offset` from the segment's start (one field: count 1).
struct Area {
  const char* name;
  uint64_t offset;
  uint64_t bytes;
  Shape shape;
  uint64_t stride = 0;
  uint64_t count = 1;
};

// The areas `side` writes in a segment of this geometry: every one, so
// that each iteration can reach all of them. Large result areas are cut to
// the rows the tests' programs use (`threads`, `regions`).
std::vector<Area> areas_of(Side side, const proto::Geometry& g, uint32_t threads, uint32_t regions);

// Writes into `areas` of the segment at `base` until killed: bursts of 1 to
// 8 writes, each a random area, place and value (random bytes, or values
// chosen for the area's shape: 0, all ones, odd sequence words, indices
// one past the geometry's bounds, 2^62, NaN, text without a terminator or
// with control characters), then a pause of up to `max_pause_us`. Runs in
// a child forked from a process with other threads: it allocates nothing
// and calls only nanosleep.
[[noreturn]] void write_forever(unsigned char* base, const proto::Geometry& g, const Area* areas, size_t n,
                                uint64_t seed, uint32_t max_pause_us);

}  // namespace mri::rogue

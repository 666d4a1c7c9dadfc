// saturate.h - numbers the segment gave (untrusted), turned into the API's
// unsigned 64-bit values without wrapping: where a conversion or a sum
// would pass 2^64 - 1, the result is 2^64 - 1. Found by
// fuzz/fuzz_libmri_readers.cpp (a wrapped sum read 0 instances for an
// edge that ran; a conversion past 2^64 is undefined).
#pragma once

#include <cstdint>

namespace mri::tool {

// `ns` (ticks times ns per tick) as the API's nanoseconds. NaN (a scale
// the segment gave) reads as 0.
inline unsigned long long saturated_ns(double ns) {
  if (!(ns > 0)) return 0;
  if (ns >= 18446744073709551616.0) return ~0ull;  // 2^64
  return (unsigned long long)ns;
}

// a + b, for counts summed over threads.
inline uint64_t add_counts(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? ~uint64_t{0} : sum;
}

}  // namespace mri::tool

// ticks.h - the segment's tick counts as the API's nanoseconds.
#pragma once

namespace mri::tool {

// `ns` (ticks times ns per tick) as the API's unsigned 64-bit
// nanoseconds. A tick count from the segment is untrusted and can scale
// past 2^64, where the conversion is undefined: it saturates. NaN (a
// scale the segment gave) reads as 0. Found by fuzz_libmri_readers.
inline unsigned long long saturated_ns(double ns) {
  if (!(ns > 0)) return 0;
  if (ns >= 18446744073709551616.0) return ~0ull;  // 2^64
  return (unsigned long long)ns;
}

}  // namespace mri::tool

// Number formatting and string quoting for the text formats (internal).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace mri::exporters::detail {

// Longest decimal uint64_t: 20 digits.
inline constexpr size_t kMaxU64Digits = 20;

// Number of decimal digits of `value` (1 for 0).
inline unsigned decimal_digits(uint64_t value) {
  unsigned n = 1;
  for (;;) {
    if (value < 10) return n;
    if (value < 100) return n + 1;
    if (value < 1000) return n + 2;
    if (value < 10000) return n + 3;
    value /= 10000;
    n += 4;
  }
}

// Writes `value` in decimal at `out` and returns the end. Two digits per
// step from a table, written in place from the last digit (no copy): the
// VTF3 writer formats three numbers per event, and this keeps formatting at
// a few nanoseconds per number.
inline char* put_u64(char* out, uint64_t value) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  char* const end = out + decimal_digits(value);
  char* p = end;
  while (value >= 100) {
    const unsigned pair = static_cast<unsigned>(value % 100) * 2;
    value /= 100;
    *--p = kPairs[pair + 1];
    *--p = kPairs[pair];
  }
  if (value >= 10) {
    const unsigned pair = static_cast<unsigned>(value) * 2;
    *--p = kPairs[pair + 1];
    *--p = kPairs[pair];
  } else {
    *--p = static_cast<char>('0' + value);
  }
  return end;
}

inline char* put_i64(char* out, int64_t value) {
  if (value < 0) {
    *out++ = '-';
    return put_u64(out, ~static_cast<uint64_t>(value) + 1);
  }
  return put_u64(out, static_cast<uint64_t>(value));
}

inline void append_u64(std::string& out, uint64_t value) {
  char digits[kMaxU64Digits];
  out.append(digits, static_cast<size_t>(put_u64(digits, value) - digits));
}

inline void append_i64(std::string& out, int64_t value) {
  char digits[kMaxU64Digits + 1];
  out.append(digits, static_cast<size_t>(put_i64(digits, value) - digits));
}

// Appends `text` in double quotes. Escapes: \" \\ \n \r \t, other bytes
// below 0x20 and 0x7f as \xHH; everything else (UTF-8 included) as it is.
void append_quoted(std::string& out, std::string_view text);

}  // namespace mri::exporters::detail

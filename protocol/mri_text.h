// mri_text.h - text that the other process wrote (names, messages in the
// segment), made safe to print: the one escaping that libmri's messages
// (MRI_Get_Error_Message, monitor_message) and the mri tool's tables use.
// A name or message with a newline would break a line or a table row in
// two; an escape character would let the other process drive the user's
// terminal.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace mri::text {

// `text` with its control characters written out: "\n", "\t", and "\xNN"
// for the other bytes below 0x20, for 0x7f, and for both bytes of the
// UTF-8 form of a C1 control (U+0080..U+009F, which terminals act on as
// they do on ESC sequences). Every other byte, valid UTF-8 or not, stays
// as it is, so printable(printable(t)) == printable(t). At most `limit`
// bytes: an escape that does not fit whole is left out with the rest.
// Pure; thread-safe.
inline std::string printable(std::string_view text, size_t limit = std::string::npos) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() < limit ? text.size() : limit);
  char piece[8];
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    size_t n = 0;
    auto hex = [&](unsigned char b) {
      piece[n++] = '\\';
      piece[n++] = 'x';
      piece[n++] = kHex[b >> 4];
      piece[n++] = kHex[b & 0xf];
    };
    if (byte == '\n' || byte == '\t') {
      piece[n++] = '\\';
      piece[n++] = byte == '\n' ? 'n' : 't';
    } else if (byte < 0x20 || byte == 0x7f) {
      hex(byte);
    } else if (byte == 0xc2 && next >= 0x80 && next <= 0x9f) {
      hex(byte);
      hex(next);
      ++i;
    } else {
      piece[n++] = char(byte);
    }
    if (out.size() + n > limit) break;
    out.append(piece, n);
  }
  return out;
}

// printable(text) into out[0, size) with its NUL (size > 0), cut short
// before an escape that does not fit. Returns whether all of it fit.
inline bool copy_printable(std::string_view text, char* out, size_t size) {
  const std::string p = printable(text, size - 1);
  std::memcpy(out, p.data(), p.size());
  out[p.size()] = '\0';
  return p == printable(text);
}

}  // namespace mri::text

// error.h - how libmri reports a failure: the calling thread's message
// (MRI_Get_Error_Message) and the safe reading of the C enums a tool passes.
#pragma once

#include <cstring>

namespace mri::tool {

// Enum fields come from the tool and may hold any int: loading an
// out-of-range value as the enum type would be undefined, so they are read
// as raw ints until validated.
template <typename E>
int raw(const E& e) {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Sets the calling thread's error message (one printable line) and returns
// MRI_Error. Thread-safe: the message is per thread.
int fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Clears the calling thread's message (a call that succeeded).
void clear_error();
// The calling thread's message; valid until its next call into libmri.
const char* error_message();

}  // namespace mri::tool

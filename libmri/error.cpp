// error.cpp - the per-thread error message of the C API.
#include "error.h"

#include <cstdarg>
#include <cstdio>
#include <string>

#include "mri.h"
#include "mri_text.h"

namespace mri::tool {
namespace {
thread_local std::string t_error;
}  // namespace

int fail(const char* fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  // Messages carry text from the segment (names, the monitor's reasons)
  // and from the tool's own arguments: one line, no control character for
  // the terminal that shows it.
  t_error = text::printable(text);
  return MRI_Error;
}

void clear_error() { t_error.clear(); }

const char* error_message() { return t_error.c_str(); }

}  // namespace mri::tool

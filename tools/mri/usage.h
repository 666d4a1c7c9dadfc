// Usage errors of mri's command line and the numbers it takes, without
// the option parser (command.h), for the code that checks values after
// parsing.
//
// Thread safety: main thread only; usage_error() ends the process.
#pragma once

#include <string>

namespace mri::cli {

// Ends mri with status 2: "mri: MESSAGE" and the hint "Try 'mri COMMAND
// --help' for more information." (COMMAND: the one whose command line is
// being checked; `mri --help` before a command was named) on stderr.
[[noreturn]] void usage_error(const std::string& message);

// A count given on the command line: digits only (no sign, no blanks, no
// suffix, nothing empty), parsed with from_chars, which reports overflow.
// strtol() and strtoul() take a sign and leading blanks, and a strtoul()
// result cut to 32 bits would turn 4294968320 into 1024. false when `v` is
// not such a number or is above `max`.
bool whole_number(const std::string& v, unsigned long long max, unsigned long long& n);

}  // namespace mri::cli

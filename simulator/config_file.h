// config_file.h - configurations that a user names by file ("@FILE"), read
// where the user gave them: the tool side (libmri's
// MRI_Set_Cache_Configuration and MRI_CACHESIM_CONFIG, `mri hist --config`)
// and the replay tool. A library of its own (mri::simulator_files): the
// monitored program links only the parser (cachesim.h), so it cannot open a
// path it finds in the shared memory its tool writes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "cachesim.h"

namespace mri::sim {

// The largest configuration file read, in bytes: room for comments around
// the at most 9 levels (a canonical level is about 45 characters).
inline constexpr size_t kMaxConfigFileBytes = 64 << 10;

// Reads the regular file `path`, at most max_bytes bytes, into `text`.
// Returns "" or one line "config file 'PATH': REASON" (cannot open, not a
// regular file (a directory, a FIFO, a character device, ...), larger than
// max_bytes, cannot read); `text` is then unchanged. Anything but a regular
// file is refused before a byte is read, and it is opened with O_NONBLOCK:
// a FIFO or a device never blocks the caller or feeds it without end.
// Thread-safe.
std::string read_config_file(const std::string& path, size_t max_bytes, std::string& text);

// A configuration as a user gives it: "@FILE" is the contents of FILE
// (read_config_file with kMaxConfigFileBytes; a file that starts with '@'
// itself is an error), anything else the configuration text itself.
// Stores it in `text` and returns "", or returns the reason. Thread-safe.
std::string resolve_config_argument(std::string_view argument, std::string& text);

// resolve_config_argument, then parse_config; the errors of a file's
// contents name the file. Thread-safe.
std::string parse_config_argument(std::string_view argument, HierarchyConfig& out);

// parse_config_argument("@" + path).
std::string parse_config_file(const std::string& path, HierarchyConfig& out);

}  // namespace mri::sim

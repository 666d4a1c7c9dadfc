// The files mri writes (-o, --plot): their paths checked before the program
// runs, so that a long run is not lost to a bad path; standard output as an
// output (`-o -`); and the in-place writer of `mri hist`.
//
// Streams ("-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N, and
// an existing file that is neither a regular file nor a directory, such as
// a FIFO or /dev/null) are written directly
// (mri::exporters::is_stream_output()); a descriptor through a duplicate at
// its current offset, not reopened.
//
// Thread safety: main thread only (claim_stdout() changes descriptor 1).
#pragma once

#include <string>

namespace mri::cli {

// Ends mri with status 1 before anything ran when `path` cannot be written
// ("mri: cannot write PATH: REASON (the program was not run)"): a path that
// names no file, a directory, a descriptor not open for writing, a special
// file without write permission, a missing or unwritable directory, a name
// too long. by_rename: a regular file is written next to the path and
// renamed over it (tools/exporters/atomic_file.h), so its own permissions
// do not matter; otherwise it is opened for writing in place. Nothing to
// check for "" (no such output).
void check_output(const std::string& path, bool by_rename);

// Usage error (status 2) when the output `path` of `option` (-o, --plot)
// is the program file PROGRAM names (`mri profile -o a.out -- ./a.out`):
// writing it would overwrite the executable.
void check_not_program(const std::string& option, const std::string& path, const char* program);

// What a file path names, to tell two names of one file apart from two
// files: device and inode when it exists, else its directory's real path
// and its base name; "" when neither can be told (a stream, a missing
// directory: check_output() reports those).
std::string file_identity(const std::string& given);

// An output that names mri's standard output ("-", /dev/stdout,
// /dev/fd/1) gets it to itself: before the program starts, mri keeps a
// duplicate of descriptor 1 for the output and points 1 at stderr, where
// the program's own standard output and mri's tables then go, so that they
// do not end up inside the file (`mri profile -o - -- prog |
// callgrind_annotate /dev/stdin`). Nothing for another path.
void claim_stdout(const std::string& path);

// The path the writers get for the output `path`: /dev/fd/<the duplicate>
// for one claim_stdout() took, else `path`.
std::string writer_path(const std::string& path);

// The error text of an exporter or of write_file() without its own
// "cannot write PATH: " prefix, which the caller prints once.
std::string reason_only(const std::string& error, const std::string& path);

// Writes `text` to `path` in place (so /dev/null or a pipe will do); false
// with the reason in `error` on any I/O error. A regular file that was
// opened but not completely written (a full disk, a file-size limit:
// EFBIG) is removed: opening it had already truncated what it held, and a
// truncated CSV or SVG would pass for a complete one.
bool write_file(const std::string& path, const std::string& text, std::string& error);

}  // namespace mri::cli

// Buffered output to a temporary file that becomes visible under its final
// name only when everything was written (internal to the exporters).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mri::exporters::detail {

// The directory part of `path` ("." when it has none).
std::string directory_of(const std::string& path);
// The last component of `path`.
std::string base_name_of(const std::string& path);
// "<what> <path>: <strerror(err)>"
std::string io_error(const std::string& what, const std::string& path, int err);
// The process's file creation mask, read without changing it.
unsigned current_umask();

// The start of the temporary names of an output called `base`:
// ".<base>.tmp-", then "<pid>-XXXXXX".
std::string temp_stem(const std::string& base);
// Removes from `directory` the temporary files "<stem><pid>-XXXXXX" whose
// writer is gone: no process has that pid and no process holds a lock on
// the file (AtomicFile locks its own). Errors are ignored.
void remove_stale_temporaries(const std::string& directory, const std::string& stem);

// Writes to "<dir>/.<name>.tmp-<pid>-XXXXXX" (".mri-tmp-<pid>-XXXXXX" when
// that would be longer than a file name may be), locked (flock) while it
// is open, and renames it to `final_path` in commit() (to the file it
// names when it is a symbolic link), which keeps the mode of a file it
// replaces. The destructor removes the temporary file unless commit()
// succeeded. A writer killed meanwhile leaves it behind: open() first
// removes those of the same output whose writer is gone
// (remove_stale_temporaries), never another live run's. A stream target (is_stream_output(): "-", /dev/stdout,
// /dev/fd/N, a FIFO, a terminal) is written directly instead: commit()
// flushes and closes it, and nothing can be removed after a failure. Every failed write(2)/fsync/close is latched as the first
// error (with the final path and strerror); later writes are dropped.
// Not thread safe.
class AtomicFile {
 public:
  static constexpr size_t kBufferBytes = 1u << 20;

  AtomicFile() = default;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  // Creates the temporary file, or opens the stream. Fails when the
  // directory is missing or not writable, when `final_path` is a
  // directory, or when a named descriptor is not open for writing.
  bool open(const std::string& final_path, std::string& error);

  // Room for at least `n` bytes (n <= kBufferBytes) at the end of the
  // buffer; fill it, then advance() by what was used.
  char* reserve(size_t n) {
    if (buffer_.size() - used_ < n) flush_buffer();
    return buffer_.data() + used_;
  }
  void advance(size_t n) { used_ += n; }
  void write(std::string_view text);

  // Flushes, fsyncs, closes and renames. False with the first error; the
  // temporary file is then removed.
  bool commit(std::string& error);
  // Closes and removes the temporary file (idempotent).
  void abandon();

  bool failed() const { return !error_.empty(); }
  const std::string& first_error() const { return error_; }
  const std::string& final_path() const { return final_path_; }
  uint64_t bytes_written() const { return bytes_flushed_ + used_; }

 private:
  void flush_buffer();
  void latch(const std::string& what, int err);

  bool start(int fd, const std::string& final_path, bool stream);

  int fd_ = -1;
  bool stream_ = false;      // writing straight to a stream: no temporary file, no rename
  std::string final_path_;   // as given: the messages name it
  std::string target_path_;  // final_path_ with its symbolic links followed
  std::string temp_path_;
  std::vector<char> buffer_;
  size_t used_ = 0;
  uint64_t bytes_flushed_ = 0;
  std::string error_;
};

// Writes all of [data, data+n) to `fd`, retrying partial writes and EINTR.
// Returns 0 or the errno of the failure.
int write_fully(int fd, const void* data, size_t n);

}  // namespace mri::exporters::detail

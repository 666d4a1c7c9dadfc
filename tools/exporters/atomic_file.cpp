#include "atomic_file.h"
#include "mri_export.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <string_view>

namespace mri::exporters::detail {

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string io_error(const std::string& what, const std::string& path, int err) {
  return what + " " + path + ": " + std::strerror(err);
}

int write_fully(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t done = ::write(fd, p, n);
    if (done < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (done == 0) return EIO;  // no progress and no errno: treat as an I/O error
    p += done;
    n -= static_cast<size_t>(done);
  }
  return 0;
}

unsigned current_umask() {
  // umask(2) can only be read by setting it, which would race with other
  // threads creating files; Linux shows it in /proc/self/status instead.
  if (FILE* f = std::fopen("/proc/self/status", "re")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      unsigned mask = 0;
      if (std::sscanf(line, "Umask: %o", &mask) == 1) {
        std::fclose(f);
        return mask;
      }
    }
    std::fclose(f);
  }
  return 022;
}

}  // namespace mri::exporters::detail

namespace mri::exporters {

std::string follow_symlinks(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {  // Linux's own limit (ELOOP)
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::vector<char> text(size_t(st.st_size > 0 ? st.st_size : 4095) + 1);
    const ssize_t n = ::readlink(path.c_str(), text.data(), text.size());
    if (n <= 0 || size_t(n) >= text.size()) return path;
    const std::string target(text.data(), size_t(n));
    path = target[0] == '/' ? target : detail::directory_of(path) + "/" + target;
  }
  return path;
}

int output_descriptor(const std::string& path) {
  if (path == "-" || path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) continue;
    long n = 0;
    for (size_t i = prefix.size(); i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9' || n > 1'000'000'000) return -1;
      n = n * 10 + (path[i] - '0');
    }
    return int(n);
  }
  return -1;
}

bool is_stream_output(const std::string& path) {
  if (output_descriptor(path) >= 0) return true;
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

}  // namespace mri::exporters

namespace mri::exporters::detail {

AtomicFile::~AtomicFile() { abandon(); }

std::string temp_stem(const std::string& base) { return "." + base + ".tmp-"; }

// A killed writer (SIGKILL, a crash) leaves its temporary file behind:
// removes those of this output, "<stem><pid>-XXXXXX", whose writer is gone
// (no process of that pid, and no lock on the file), so that two runs
// writing the same output at once never remove each other's. Others (a
// name without a pid, one with the short form ".mri-tmp-", which does not
// say which output it was for) stay. Failures are ignored: the write
// goes on either way.
void remove_stale_temporaries(const std::string& directory, const std::string& stem) {
  DIR* dir = ::opendir(directory.c_str());
  if (!dir) return;
  const int dir_fd = ::dirfd(dir);
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view name = e->d_name;
    if (name.size() <= stem.size() || name.compare(0, stem.size(), stem) != 0) continue;
    const std::string_view rest = name.substr(stem.size());  // "<pid>-XXXXXX"
    const size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string_view::npos || rest.size() - dash - 1 != 6 || dash > 10) continue;
    long pid = 0;
    for (size_t i = 0; i < dash && pid >= 0; ++i) pid = rest[i] >= '0' && rest[i] <= '9' ? pid * 10 + (rest[i] - '0') : -1;
    if (pid <= 0 || pid > INT32_MAX || pid == ::getpid()) continue;
    if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;  // alive (EPERM: someone else's, alive)
    const std::string file(name);
    const int fd = ::openat(dir_fd, file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) continue;
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0)
      ::unlinkat(dir_fd, file.c_str(), 0);
    ::close(fd);
  }
  ::closedir(dir);
}

// Writing starts on `fd` (a temporary file, or a stream when `stream`).
bool AtomicFile::start(int fd, const std::string& final_path, bool stream) {
  fd_ = fd;
  stream_ = stream;
  final_path_ = final_path;
  buffer_.assign(kBufferBytes, '\0');
  used_ = 0;
  bytes_flushed_ = 0;
  error_.clear();
  return true;
}

bool AtomicFile::open(const std::string& final_path, std::string& error) {
  if (fd_ >= 0 || !temp_path_.empty()) {
    error = "output already open";
    return false;
  }
  if (final_path.empty() || final_path.back() == '/') {
    error = "invalid output path '" + final_path + "': it names no file";
    return false;
  }
  // A stream: a descriptor of this process, written through a duplicate
  // (at its offset: what the process wrote there before stays), or a FIFO,
  // terminal or other special file, opened as it is.
  if (const int descriptor = output_descriptor(final_path); descriptor >= 0) {
    const int fd = ::fcntl(descriptor, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {
      error = "cannot write " + final_path + ": descriptor " + std::to_string(descriptor) + " is not open";
      return false;
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) {
      ::close(fd);
      error = "cannot write " + final_path + ": descriptor " + std::to_string(descriptor) + " is open for reading only";
      return false;
    }
    return start(fd, final_path, true);
  }
  struct stat st;
  if (::stat(final_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) {
      error = "cannot write " + final_path + ": it exists and is not a regular file";
      return false;
    }
    const int fd = ::open(final_path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
      error = io_error("cannot write", final_path, errno);
      return false;
    }
    return start(fd, final_path, true);
  }
  // A symbolic link keeps pointing where it did: the file it names is
  // replaced. The temporary file lives in that file's directory so that
  // the final rename(2) stays within one file system and is atomic.
  target_path_ = follow_symlinks(final_path);
  // The temporary name is the final one's with ".tmp-PID-XXXXXX" added;
  // for a name the file system takes but that leaves no room for it
  // (NAME_MAX, 255 bytes on Linux), a short one of its own.
  const std::string base = base_name_of(target_path_);
  const std::string stem = temp_stem(base);
  const std::string mine = std::to_string(::getpid()) + "-XXXXXX";
  const std::string temp_base = stem.size() + mine.size() <= 255 ? stem + mine : ".mri-tmp-" + mine;
  remove_stale_temporaries(directory_of(target_path_), stem);
  std::string pattern = directory_of(target_path_) + "/" + temp_base;
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    error = io_error("cannot create a file in", directory_of(target_path_), errno);
    return false;
  }
  // Held until the file is closed, also by a process killed meanwhile:
  // remove_stale_temporaries() leaves a temporary file alone while its
  // lock is held (its writer lives, perhaps in another pid namespace or on
  // another host of a shared file system).
  ::flock(fd, LOCK_EX | LOCK_NB);
  // mkostemp creates mode 0600. A file that is replaced keeps its mode (a
  // file the user made private stays so); a new one gets the mode a plain
  // creat() would have given it.
  struct stat old;
  const bool replaces = ::stat(target_path_.c_str(), &old) == 0 && S_ISREG(old.st_mode);
  ::fchmod(fd, replaces ? (old.st_mode & 07777) : (0666 & ~current_umask()));
  temp_path_ = name.data();
  return start(fd, final_path, false);
}

void AtomicFile::latch(const std::string& what, int err) {
  if (error_.empty()) error_ = io_error(what, final_path_, err);
}

void AtomicFile::flush_buffer() {
  if (used_ == 0) return;
  if (error_.empty() && fd_ >= 0) {
    const int err = write_fully(fd_, buffer_.data(), used_);
    if (err != 0) latch("cannot write", err);
  }
  bytes_flushed_ += used_;
  used_ = 0;
}

void AtomicFile::write(std::string_view text) {
  while (!text.empty()) {
    if (used_ == buffer_.size()) flush_buffer();
    const size_t n = std::min(text.size(), buffer_.size() - used_);
    std::memcpy(buffer_.data() + used_, text.data(), n);
    used_ += n;
    text.remove_prefix(n);
  }
}

bool AtomicFile::commit(std::string& error) {
  if (fd_ < 0) {
    error = error_.empty() ? "output is not open" : error_;
    return false;
  }
  flush_buffer();
  if (stream_) {  // nothing to sync or rename; a pipe's reader may be gone (EPIPE), a close may fail
    if (::close(fd_) != 0 && error_.empty()) latch("cannot close", errno);
    fd_ = -1;
    stream_ = false;
    buffer_.clear();
    buffer_.shrink_to_fit();
    if (!error_.empty()) {
      error = error_;
      return false;
    }
    return true;
  }
  // fsync before rename: otherwise a crash shortly after could leave the
  // final name pointing at an empty file on some file systems.
  if (error_.empty() && ::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) latch("cannot sync", errno);
  if (::close(fd_) != 0 && error_.empty()) latch("cannot close", errno);
  fd_ = -1;
  if (error_.empty() && ::rename(temp_path_.c_str(), target_path_.c_str()) != 0) {
    latch("cannot rename the finished file to", errno);
  }
  if (!error_.empty()) {
    error = error_;
    abandon();
    return false;
  }
  temp_path_.clear();
  buffer_.clear();
  buffer_.shrink_to_fit();
  return true;
}

void AtomicFile::abandon() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
  stream_ = false;
  used_ = 0;
}

}  // namespace mri::exporters::detail

// Output paths checked before the run, standard output as an output, and
// in-place writes (output_files.h).
#include "output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "launch.h"
#include "usage.h"
#include "mri_export.h"

namespace mri::cli {

namespace {

int g_stdout_copy = -1;  // claim_stdout()'s duplicate of descriptor 1

// Why an output file cannot be written at `path`, or "" when it can
// (check_output()). The final write still reports its own errors.
std::string unwritable_reason(const std::string& path, bool by_rename) {
  if (path.empty() || path.back() == '/') return "it names no file";
  // A stream ("-", /dev/stdout, /dev/fd/N, a FIFO, a terminal): written
  // directly (mri::exporters::is_stream_output()).
  if (const int fd = mri::exporters::output_descriptor(path); fd >= 0) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0) return "descriptor " + std::to_string(fd) + " is not open";
    if ((flags & O_ACCMODE) == O_RDONLY) return "descriptor " + std::to_string(fd) + " is open for reading only";
    return "";
  }
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return "it is a directory";
  if (exists && !S_ISREG(st.st_mode)) return ::access(path.c_str(), W_OK) == 0 ? "" : std::strerror(errno);
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat ds;
  if (::stat(dir.c_str(), &ds) != 0) return "directory " + dir + ": " + std::strerror(errno);
  if (!S_ISDIR(ds.st_mode)) return dir + " is not a directory";
  if (path.size() - (slash == std::string::npos ? 0 : slash + 1) > NAME_MAX) return std::strerror(ENAMETOOLONG);
  if (by_rename || !exists) {
    if (::access(dir.c_str(), W_OK | X_OK) != 0) return "cannot create files in " + dir + ": " + std::strerror(errno);
    // In a sticky directory (/tmp) only the file's owner, the directory's
    // or root may replace a file (rename(2) fails with EPERM).
    const uid_t me = ::geteuid();
    if (exists && (ds.st_mode & S_ISVTX) && me != 0 && st.st_uid != me && ds.st_uid != me)
      return "it belongs to another user, and " + dir + " is a sticky directory: only its owner can replace it";
  } else if (::access(path.c_str(), W_OK) != 0) {
    return std::strerror(errno);
  }
  return "";
}

// The program file PROGRAM names, as libmri's launch finds it: the path
// itself when it has a '/', else its search of PATH (find_program()).
std::string program_identity(const char* program) {
  if (std::strchr(program, '/')) return file_identity(program);
  const std::string found = mri::launch::find_program(program);
  return found.empty() ? "" : file_identity(found);
}

}  // namespace

void check_output(const std::string& path, bool by_rename) {
  if (path.empty()) return;
  const std::string why = unwritable_reason(path, by_rename);
  if (why.empty()) return;
  std::fprintf(stderr, "mri: cannot write %s: %s (the program was not run)\n", path.c_str(), why.c_str());
  std::exit(1);
}

void check_not_program(const std::string& option, const std::string& path, const char* program) {
  const std::string id = file_identity(path);
  if (!id.empty() && id == program_identity(program))
    usage_error(option + " " + path + " is the program " + program +
                " itself: writing it would overwrite the executable; give another file");
}

std::string file_identity(const std::string& given) {
  if (given.empty() || mri::exporters::output_descriptor(given) >= 0) return "";
  // The file the writers write: a symbolic link's, also a dangling one's.
  const std::string path = mri::exporters::follow_symlinks(given);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0)
    return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  char* real = ::realpath(dir.c_str(), nullptr);
  if (!real) return "";
  std::string id = std::string("path ") + real + "/" + path.substr(slash == std::string::npos ? 0 : slash + 1);
  std::free(real);
  return id;
}

void claim_stdout(const std::string& path) {
  if (path.empty() || mri::exporters::output_descriptor(path) != 1 || g_stdout_copy >= 0) return;
  std::fflush(stdout);
  g_stdout_copy = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (g_stdout_copy >= 0) ::dup2(2, 1);
}

std::string writer_path(const std::string& path) {
  if (g_stdout_copy < 0 || path.empty() || mri::exporters::output_descriptor(path) != 1) return path;
  return "/dev/fd/" + std::to_string(g_stdout_copy);
}

std::string reason_only(const std::string& error, const std::string& path) {
  const std::string prefix = "cannot write " + path + ": ";
  return error.rfind(prefix, 0) == 0 ? error.substr(prefix.size()) : error;
}

bool write_file(const std::string& path, const std::string& text, std::string& error) {
  // A descriptor ("-", /dev/stdout, /dev/fd/N): written where it stands,
  // not reopened (which would truncate a file the shell redirected it to).
  if (const int fd = mri::exporters::output_descriptor(path); fd >= 0) {
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = std::strerror(n < 0 ? errno : EIO);
        return false;
      }
      done += size_t(n);
    }
    return true;
  }
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    error = std::strerror(errno);
    return false;
  }
  struct stat st;
  const bool regular = ::fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int e = errno;
  if (std::fclose(f) != 0 || !ok) {
    error = std::strerror(ok ? errno : e);
    // Through a symbolic link the partial file is the one it names.
    char* real = regular ? ::realpath(path.c_str(), nullptr) : nullptr;
    if (real && ::unlink(real) == 0) error += " (the partial file was removed)";
    std::free(real);
    return false;
  }
  return true;
}

}  // namespace mri::cli

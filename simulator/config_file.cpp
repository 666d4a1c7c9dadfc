// config_file.cpp - bounded reading of configuration files (config_file.h).
#include "config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace mri::sim {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

std::string too_large(const std::string& name, const std::string& size, size_t max_bytes) {
  return name + ": " + size + " bytes, more than the " + std::to_string(max_bytes) +
         " a configuration file may have";
}

}  // namespace

std::string read_config_file(const std::string& path, size_t max_bytes, std::string& text) {
  const std::string name = "config file '" + path + "'";
  // stat() before open(): opening a device can act (a tape rewinds, a
  // terminal becomes the controlling one); fstat() after it closes the
  // window in which the path could be replaced.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return name + ": cannot open: " + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return name + ": not a regular file (" + kind_of(st.st_mode) + ")";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return name + ": cannot open: " + std::strerror(errno);
  std::string error;
  std::vector<char> buffer(max_bytes + 1);  // one byte more: a file that grew past the limit is seen
  size_t got = 0;
  if (::fstat(fd, &st) != 0) {
    error = name + ": cannot read: " + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    error = name + ": not a regular file (" + kind_of(st.st_mode) + ")";
  } else if (uint64_t(st.st_size) > max_bytes) {
    error = too_large(name, std::to_string(st.st_size), max_bytes);
  } else {
    while (got < buffer.size()) {
      const ssize_t n = ::read(fd, buffer.data() + got, buffer.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error = name + ": cannot read: " + std::strerror(errno);
        break;
      }
      if (n == 0) break;
      got += size_t(n);
    }
    if (error.empty() && got > max_bytes) error = too_large(name, "over " + std::to_string(max_bytes), max_bytes);
  }
  ::close(fd);
  if (!error.empty()) return error;
  text.assign(buffer.data(), got);
  return "";
}

std::string resolve_config_argument(std::string_view argument, std::string& text) {
  if (argument.empty() || argument[0] != '@') {
    text = argument;
    return "";
  }
  const std::string path(argument.substr(1));
  std::string contents;
  if (std::string e = read_config_file(path, kMaxConfigFileBytes, contents); !e.empty()) return e;
  if (!contents.empty() && contents[0] == '@') return "config file '" + path + "': a config file cannot name another";
  text = std::move(contents);
  return "";
}

std::string parse_config_argument(std::string_view argument, HierarchyConfig& out) {
  std::string text;
  if (std::string e = resolve_config_argument(argument, text); !e.empty()) return e;
  std::string e = parse_config(text, out);
  if (!e.empty() && !argument.empty() && argument[0] == '@')
    return "config file '" + std::string(argument.substr(1)) + "': " + e;
  return e;
}

std::string parse_config_file(const std::string& path, HierarchyConfig& out) {
  return parse_config_argument("@" + path, out);
}

}  // namespace mri::sim

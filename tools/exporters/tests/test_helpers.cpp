#include "test_helpers.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace mri::exporters::testing {

ScratchDir::ScratchDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/mri-exporters-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) std::abort();
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  // A test may have made entries read-only; make them removable first.
  for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
  }
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> ScratchDir::entries() const {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

CommandResult run_command(const std::vector<std::string>& argv) {
  CommandResult result;
  int fds[2];
  if (::pipe(fds) != 0) return result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    result.output = std::string("cannot start ") + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool program_available(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

std::string run_in_child(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(fds[0]);
    std::string verdict;
    try {
      verdict = body();
    } catch (const std::exception& e) {
      verdict = std::string("exception: ") + e.what();
    }
    const char* p = verdict.data();
    size_t left = verdict.size();
    while (left > 0) {
      const ssize_t n = ::write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string verdict;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    verdict.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child process failed: " + verdict;
  return verdict;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TraceDefinitions sample_definitions(uint32_t locations) {
  TraceDefinitions defs;
  defs.program = "gauss";
  defs.timer_resolution = 1'000'000'000;
  for (uint32_t i = 0; i < locations; ++i) {
    defs.locations.push_back(Location{i, "thread " + std::to_string(i), static_cast<int32_t>(4000 + i)});
  }
  defs.regions = {
      Region{0, "main", "gauss.c", 10, "PROGRAM"},
      Region{1, "solve", "gauss.c", 42, "ROUTINE"},
      Region{2, "elimination step", "gauss.c", 57, "LOOP"},
  };
  return defs;
}

namespace {

// The parsers below avoid std::regex: GCC 12 warns (-Wmaybe-uninitialized)
// inside its regex implementation when built with the sanitizers.

std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const size_t last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Splits off the next blank-separated word of `rest`.
std::string next_word(std::string& rest) {
  rest = trim(rest);
  const size_t end = std::min(rest.find_first_of(" \t"), rest.size());
  std::string word = rest.substr(0, end);
  rest = rest.substr(end);
  return word;
}

}  // namespace

std::vector<Otf2Event> parse_otf2_events(const std::string& output) {
  // "ENTER                                          0                  100  Region: \"main\" <0>"
  std::vector<Otf2Event> events;
  std::istringstream in(output);
  std::string line;
  bool in_events = false;
  while (std::getline(in, line)) {
    if (line.rfind("=== Events", 0) == 0) {
      in_events = true;
      continue;
    }
    if (line.rfind("===", 0) == 0) in_events = false;
    if (!in_events) continue;
    std::string rest = line;
    const std::string kind = next_word(rest);
    const std::string location = next_word(rest);
    const std::string timestamp = next_word(rest);
    if (kind.empty() || !std::all_of(kind.begin(), kind.end(), [](char c) { return std::isupper(c) || c == '_'; }) ||
        !all_digits(location) || !all_digits(timestamp)) {
      continue;  // the table header and rules
    }
    Otf2Event e;
    e.kind = kind;
    e.location = std::stoull(location);
    e.timestamp = std::stoull(timestamp);
    e.rest = trim(rest);
    const std::string key = "Region: \"";
    if (const size_t at = e.rest.find(key); at != std::string::npos) {
      const size_t from = at + key.size();
      const size_t to = e.rest.find("\" <", from);
      if (to != std::string::npos) e.region = e.rest.substr(from, to - from);
    }
    events.push_back(e);
  }
  return events;
}

namespace {

// "1,234 (12.34%) 5 (6.00%)  rest" -> {1234, 5}, "rest"; false if the line
// does not start with `events` costs.
bool split_costs(const std::string& line, size_t events, std::vector<uint64_t>& costs, std::string& rest) {
  costs.clear();
  size_t i = 0;
  for (size_t n = 0; n < events; ++n) {
    while (i < line.size() && line[i] == ' ') ++i;
    std::string digits;
    while (i < line.size() && ((line[i] >= '0' && line[i] <= '9') || (line[i] == ',' && !digits.empty()))) {
      if (line[i] != ',') digits.push_back(line[i]);
      ++i;
    }
    if (digits.empty()) return false;
    if (line.compare(i, 2, " (") == 0) {  // the percentage
      const size_t close = line.find(')', i);
      if (close == std::string::npos) return false;
      i = close + 1;
    }
    if (i >= line.size() || line[i] != ' ') return false;
    costs.push_back(std::stoull(digits));
  }
  rest = trim(line.substr(i));
  return true;
}

// "main.c:a (2x) []" -> "main.c:a", 2
bool split_call(const std::string& text, std::string& name, uint64_t& calls) {
  std::string t = text;
  if (t.size() >= 3 && t.compare(t.size() - 1, 1, "]") == 0) {
    const size_t open = t.rfind(" [");
    if (open == std::string::npos) return false;
    t.resize(open);
  }
  if (t.empty() || t.back() != ')') return false;
  const size_t open = t.rfind(" (");
  if (open == std::string::npos) return false;
  const std::string count = t.substr(open + 2, t.size() - open - 2 - 2);  // between "(" and "x)"
  if (t.compare(t.size() - 2, 2, "x)") != 0 || !all_digits(count)) return false;
  name = t.substr(0, open);
  calls = std::stoull(count);
  return true;
}

}  // namespace

AnnotatedCosts parse_callgrind_annotate(const std::string& output, size_t events) {
  AnnotatedCosts result;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<uint64_t> costs;
    std::string rest;
    if (!split_costs(line, events, costs, rest)) continue;
    if (rest == "PROGRAM TOTALS") {
      result.totals = costs;
    } else if (!rest.empty() && rest[0] != '<' && rest[0] != '>' && rest[0] != '*') {
      result.functions[rest] = costs;
    }
  }
  return result;
}

std::map<std::string, std::map<std::string, TreeEntry>> parse_callgrind_callers(const std::string& output,
                                                                                 size_t events) {
  std::map<std::string, std::map<std::string, TreeEntry>> callers;
  std::map<std::string, TreeEntry> pending;  // "<" lines of the current group
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<uint64_t> costs;
    std::string rest;
    if (!split_costs(line, events, costs, rest)) {
      if (trim(line).empty()) pending.clear();
      continue;
    }
    if (rest.rfind("< ", 0) == 0) {
      std::string name;
      uint64_t calls = 0;
      if (split_call(trim(rest.substr(2)), name, calls)) pending[name] = TreeEntry{costs, calls};
    } else if (rest.rfind("* ", 0) == 0) {
      callers[trim(rest.substr(1))] = pending;
      pending.clear();
    }
  }
  return callers;
}

}  // namespace mri::exporters::testing

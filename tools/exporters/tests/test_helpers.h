// Helpers for the exporter tests: scratch directories, running the real
// consumers as subprocesses, running code in a child process.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mri_export.h"

namespace mri::exporters::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  // Names of the entries in the directory (hidden ones included), sorted.
  std::vector<std::string> entries() const;

 private:
  std::string path_;
};

struct CommandResult {
  int exit_status = -1;  // exit code, or -1 when it did not exit normally
  std::string output;    // stdout and stderr, interleaved
};
CommandResult run_command(const std::vector<std::string>& argv);

// Whether a consumer program was found at configure time and is executable.
bool program_available(const std::string& path);

// Runs `body` in a forked child and returns what it returned (the child's
// verdict, "" for success). Keeps process-wide changes such as resource
// limits or mount namespaces out of the test process.
std::string run_in_child(const std::function<std::string()>& body);

bool file_exists(const std::string& path);
std::string read_file(const std::string& path);

// Small model programs.
TraceDefinitions sample_definitions(uint32_t locations);

// --- otf2-print --------------------------------------------------------
struct Otf2Event {
  std::string kind;  // "ENTER", "LEAVE", "METRIC", ...
  uint64_t location = 0;
  uint64_t timestamp = 0;
  std::string region;  // region name for ENTER/LEAVE
  std::string rest;    // the attribute text
};
// Parses the event table of `otf2-print <anchor>`.
std::vector<Otf2Event> parse_otf2_events(const std::string& output);

// --- callgrind_annotate --------------------------------------------------
struct AnnotatedCosts {
  std::vector<uint64_t> totals;                                // PROGRAM TOTALS
  std::map<std::string, std::vector<uint64_t>> functions;      // "file:function" -> costs
};
// Parses the totals and the function table (lines "<cost> (<pct>) ...  file:fn").
AnnotatedCosts parse_callgrind_annotate(const std::string& output, size_t events);

struct TreeEntry {
  std::vector<uint64_t> costs;
  uint64_t calls = 0;
};
// With --tree=caller or both: for each function ("*" line), its callers
// ("<" lines above it): callee -> caller -> costs and call count.
std::map<std::string, std::map<std::string, TreeEntry>> parse_callgrind_callers(const std::string& output,
                                                                                 size_t events);

}  // namespace mri::exporters::testing

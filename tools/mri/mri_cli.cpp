// mri - command-line front end of the Monitoring Request Interface.
//
//   mri profile [options] -- PROGRAM [ARGS...]   per-region time profile (-o: callgrind file)
//   mri trace -o FILE [options] -- PROGRAM ...   trace archiver: VTF3 or OTF2
//   mri hist --metric EV [--data NAME] ... -- PROGRAM   cache events over addresses (CSV, SVG)
//   mri regions -- PROGRAM [ARGS...]             the program's static information
//   mri info                                     what this monitor can measure here
//
// Uses the public C API (include/mri.h), the exporters (tools/exporters)
// and, for `mri hist`, the standalone simulator's configuration functions
// (simulator/cachesim.h).
#include <fcntl.h>
#include <signal.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <climits>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cachesim.h"
#include "config_file.h"
#include "mri.h"
#include "mri_export.h"
#include "mri_text.h"

#include <cerrno>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace {

constexpr int kMaxFitRuns = 16;  // mri profile --fit RUNS

const char* kUsage =
    "usage: mri profile [--metric EVENT]... [--sort incl|excl|calls|name] [--per-thread] [--all]\n"
    "                   [--no-compensation | --fit RUNS | --overhead NS] [-o FILE [--unwind]] -- PROGRAM [ARGS...]\n"
    "       mri trace -o FILE [--format vtf3|otf2] [--region NAME]... [--no-subregions] [--ring RECORDS]\n"
    "                 -- PROGRAM [ARGS...]\n"
    "       mri hist --metric EVENT [--data NAME] [--bins N] [--region NAME]... [--config CACHES]\n"
    "                [-o FILE.csv] [--plot FILE.svg] -- PROGRAM [ARGS...]\n"
    "       mri regions -- PROGRAM [ARGS...]\n"
    "       mri info\n"
    "       mri --help | --version\n"
    "\n"
    "profile   run PROGRAM (built with libmonitor) to completion and print, per region,\n"
    "          calls, inclusive and exclusive time, in total and per thread; each time\n"
    "          also with the monitor's own overhead removed (\"comp\" columns)\n"
    "          --metric EVENT add inclusive and exclusive counts of a counter event\n"
    "                         (e.g. perf::PAGE-FAULTS; see mri info); up to 3, each once\n"
    "          --sort KEY     order of the rows (default: incl)\n"
    "          --per-thread   also print one table per thread (default when >1 thread)\n"
    "          --all          include regions that never ran\n"
    "          --no-compensation  raw times only (the monitor does less per region)\n"
    "          --fit RUNS     measure the overhead in PROGRAM itself first: run it 2 RUNS + 1\n"
    "                         times (its standard output discarded), with only its PROGRAM\n"
    "                         region and with every region measured in turn, and remove\n"
    "                         what an instance cost there (RUNS 1..16); for programs that\n"
    "                         do the same work each run and have an annotated main\n"
    "          --overhead NS  remove NS ns per measured region instance (what --fit printed)\n"
    "          --unwind       with -o: also put functions without annotations between\n"
    "                         regions into the call tree (stack unwinding at every enter)\n"
    "          -o FILE        also write the profile with its call tree in the callgrind\n"
    "                         format (open it with kcachegrind or callgrind_annotate)\n"
    "trace     the trace archiver: run PROGRAM and write every region enter and exit of\n"
    "          every thread to FILE: VTF3 (ASCII), or OTF2 when FILE ends in .otf2 or\n"
    "          with --format otf2 (FILE is then the archive's anchor file)\n"
    "          --region NAME  trace this region and the regions it calls (default: all);\n"
    "                         may be repeated; NAME@FILE[:LINE] picks one of several\n"
    "                         regions called NAME; a region not published at the start\n"
    "                         (a C++ scope's) is picked out of a trace of every region\n"
    "          --no-subregions  with --region: only the named regions' instances, not\n"
    "                         the regions they call (the others then cost nothing)\n"
    "          --ring N       records per thread in shared memory: a power of two from\n"
    "                         1024 to 16777216 (default 65536); a smaller ring makes\n"
    "                         threads wait for the archiver more often\n"
    "hist      histogram of a simulated cache event over the addresses of a data structure\n"
    "          (paper Figure 2); PROGRAM must be built with the cache-simulator backend\n"
    "          --metric EVENT L1_DATA_READ_MISS, L2_DATA_WRITE_MISS, L1_DATA_READ_HIT, ...\n"
    "                         (LCn_DATA_{READ,WRITE}_{MISS,HIT}; the L may also be LC)\n"
    "          --data NAME    the data structure (default: every registered one, packed)\n"
    "          --bins N       bins, 1..1024 (default 25)\n"
    "          --region NAME  count in this region's instances (default: the program\n"
    "                         region); may be repeated; NAME@FILE[:LINE] as for trace;\n"
    "                         only regions published at the start (not C++ scopes)\n"
    "          --config CACHES  simulated hierarchy, e.g. 'L1:32K,8,64;L2:1M,16,64'\n"
    "                         (default: MRI_CACHESIM_CONFIG, else this machine's caches)\n"
    "          -o FILE        write the bins as CSV; --plot FILE an SVG bar chart\n"
    "regions   list the regions PROGRAM publishes, then end it\n"
    "info      list the runtime information, aggregations and machine facts\n";

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "mri: %s: %s\n", what, MRI_Get_Error_Message());
  MRI_Finalize();
  std::exit(1);
}

// The error, then the commands' synopsis (not the 50 lines that explain
// every option: they would bury the one line that matters).
[[noreturn]] void usage_error(const char* fmt, const char* arg) {
  std::fprintf(stderr, "mri: ");
  std::fprintf(stderr, fmt, arg);
  const char* synopsis_end = std::strstr(kUsage, "\n\n");
  std::fprintf(stderr, "\n%.*s\n(mri --help explains every option)\n",
               int(synopsis_end ? synopsis_end - kUsage : std::strlen(kUsage)), kUsage);
  std::exit(2);
}

// -h or --help among a command's options: the usage on stdout, status 0.
void help_option(const std::string& arg) {
  if (arg != "--help" && arg != "-h") return;
  std::fputs(kUsage, stdout);
  std::exit(0);
}

// The value of the option at argv[i] (argv[i + 1]; i then points at it). A
// usage error when there is none, or when the next argument is the "--"
// that ends the options: taking it would run the wrong program or write a
// file named "--".
std::string option_value(int argc, char** argv, int& i, const char* what) {
  const char* option = argv[i];
  if (i + 1 >= argc || std::strcmp(argv[i + 1], "--") == 0)
    usage_error(("%s needs " + std::string(what)).c_str(), option);
  return argv[++i];
}

// An option that takes one value, given a second time: a usage error (the
// last one won before, silently: `mri hist --metric A --metric B` made one
// histogram of B). `seen` holds the options given so far; -o and --output
// are one option.
void once(std::vector<std::string>& seen, std::string option) {
  if (option == "--output") option = "-o";
  if (std::find(seen.begin(), seen.end(), option) != seen.end())
    usage_error("%s given twice: give it once", option.c_str());
  seen.push_back(option);
}

// The file name of -o or --plot: an empty one names no file (it was
// taken as no -o at all before, and nothing was written).
std::string file_value(int argc, char** argv, int& i) {
  const char* option = argv[i];
  std::string v = option_value(argc, argv, i, "a file name");
  if (v.empty()) usage_error("%s '': an empty file name names no file", option);
  return v;
}

// A count given on the command line: digits only (no sign, no blanks, no
// suffix, nothing empty), parsed with from_chars, which reports overflow.
// strtol() and strtoul() take a sign and leading blanks, and strtoul()'s
// unsigned long cut to 32 bits turned 4294968320 into 1024. false when `v`
// is not such a number or is above `max`.
bool whole_number(const std::string& v, unsigned long long max, unsigned long long& n) {
  const char* last = v.data() + v.size();
  const auto [end, ec] = std::from_chars(v.data(), last, n);
  return !v.empty() && ec == std::errc() && end == last && n <= max;
}

// The error text of an exporter or of write_file() without its own
// "cannot write PATH: " prefix, which the caller prints once.
std::string reason_only(const std::string& error, const std::string& path) {
  const std::string prefix = "cannot write " + path + ": ";
  return error.rfind(prefix, 0) == 0 ? error.substr(prefix.size()) : error;
}

// Why an output file cannot be written at `path`, or "" when it can: a
// path that names no file, a directory at the path, a descriptor that is
// not open for writing, a special file (FIFO, terminal) without write
// permission, a missing or unwritable directory. Checked before the
// program runs so that a long run is not lost to a bad path; the final
// write still reports its own errors. by_rename: a regular file is written
// next to the path and renamed over it (tools/exporters/atomic_file.h), so
// its own permissions do not matter; otherwise it is opened for writing in
// place. A stream is written directly either way.
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

// An output that names mri's standard output ("-", /dev/stdout,
// /dev/fd/1) gets it to itself: before the program starts, mri keeps a
// duplicate of descriptor 1 for the output and points 1 at stderr, where
// the program's own standard output and mri's tables then go, so that
// they do not end up inside the file (`mri profile -o - -- prog |
// callgrind_annotate /dev/stdin`). writer_path() is the path the writers
// get for such an output: /dev/fd/<the duplicate>.
int g_stdout_copy = -1;

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

// What a file path names, to tell two names of one file apart from two
// files: device and inode when it exists, else its directory's real path
// and its base name; "" when neither can be told (a stream, a missing
// directory: check_output() reports those).
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

// The program file PROGRAM names, as the loader finds it: the path itself
// when it has a '/', else the first match in PATH.
std::string program_identity(const char* program) {
  if (std::strchr(program, '/')) return file_identity(program);
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0;;) {
    const size_t colon = path.find(':', start);
    const std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return file_identity(candidate);
    if (colon == std::string::npos) return "";
    start = colon + 1;
  }
}

// Ends mri with status 2 when an output file would overwrite the program
// (mri profile -o a.out -- ./a.out): its executable would be lost.
void check_not_program(const std::string& option, const std::string& path, const char* program) {
  const std::string id = file_identity(path);
  if (!id.empty() && id == program_identity(program))
    usage_error("%s", (option + " " + path + " is the program " + program +
                       " itself: writing it would overwrite the executable; give another file")
                          .c_str());
}

// A --region value of mri trace or hist, once: a repeat adds nothing.
void add_region_name(std::vector<std::string>& names, const std::string& name) {
  if (name.empty()) usage_error("%s", "--region '' names no region (without --region: every region)");
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

// Ends mri with status 1 before anything ran when `path` cannot be written.
void check_output(const std::string& path, bool by_rename) {
  if (path.empty()) return;
  const std::string why = unwritable_reason(path, by_rename);
  if (why.empty()) return;
  std::fprintf(stderr, "mri: cannot write %s: %s (the program was not run)\n", path.c_str(), why.c_str());
  std::exit(1);
}

struct Row {
  std::string name, type, where;
  unsigned long long calls;
  double incl, excl;  // ns
  double comp_incl, comp_excl;  // ns, the monitor's overhead removed
  std::vector<double> metric_incl, metric_excl;  // per --metric, in events
};

std::vector<std::string> g_metrics;  // --metric names, for the column heads
bool g_compensate = true;            // not --no-compensation: show the compensated columns

// Whether `file` is `path` or a trailing part of it at a '/'.
bool file_matches(const std::string& path, const std::string& file) {
  if (path == file) return true;
  return path.size() > file.size() && path.compare(path.size() - file.size(), file.size(), file) == 0 &&
         path[path.size() - file.size() - 1] == '/';
}

// A file as the location column shows it: the shortest trailing part of
// its path, at a '/', that no other published file ends with. That is the
// base name, unless two files share it (a/util.c and b/util.c): then
// their rows would look the same.
std::string shown_file(int file_ID) {
  static std::map<int, std::string> shown;
  static int regions_seen = -1;  // built again when regions were published since
  MRI_Region_Table t;
  if (MRI_Get_Regions(&t) != MRI_OK) return "?";
  if (t.nr_Elements != regions_seen) {
    regions_seen = t.nr_Elements;
    std::map<int, std::string> paths;
    for (int k = 0; k < t.nr_Elements; ++k) {
      const char* f = MRI_Get_File_Name(t.region[k].id.file_ID);
      paths[t.region[k].id.file_ID] = f ? f : "?";
    }
    shown.clear();
    for (const auto& [id, path] : paths) {
      size_t slash = path.rfind('/');
      for (;;) {
        const std::string tail = slash == std::string::npos ? path : path.substr(slash + 1);
        bool shared = false;
        for (const auto& [other_id, other] : paths) shared = shared || (other_id != id && file_matches(other, tail));
        if (!shared || slash == std::string::npos || slash == 0) {
          shown[id] = tail;
          break;
        }
        slash = path.rfind('/', slash - 1);
      }
    }
  }
  const auto it = shown.find(file_ID);
  return it == shown.end() ? "?" : it->second;
}

std::string location(const MRI_Region_Spec& r) {
  return shown_file(r.id.file_ID) + ":" + std::to_string(r.id.line_NR);
}

// A --region value taken apart: NAME, and FILE and LINE when given
// (LINE -1: any line; `at`: whether the value had an '@').
struct RegionValue {
  std::string value, name, file;
  int line = -1;
  bool at = false;
};

RegionValue parse_region_value(const std::string& value) {
  RegionValue v{value, value, "", -1, false};
  const size_t at = value.rfind('@');
  if (at == std::string::npos) return v;
  v.at = true;
  v.name = value.substr(0, at);
  v.file = value.substr(at + 1);
  const size_t colon = v.file.rfind(':');
  if (colon != std::string::npos && colon + 1 < v.file.size() &&
      v.file.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    v.line = std::atoi(v.file.c_str() + colon + 1);
    v.file.resize(colon);
  }
  return v;
}

// Whether a region called `name`, in `file` at `line`, is one `v` names.
// The whole value is also taken as a name, as MRI_Find_Region() takes it
// (a region name may hold an '@').
bool region_value_matches(const RegionValue& v, const std::string& name, const std::string& file, int line) {
  if (name == v.value) return true;
  return name == v.name && (!v.at || (file_matches(file, v.file) && (v.line < 0 || v.line == line)));
}

// Whether the program has published a region `value` could name: one
// called `value`, or NAME of NAME@FILE[:LINE] (whatever its file: a
// FILE that fits none of them is find_region()'s error, with the list).
bool region_name_published(const std::string& value) {
  MRI_Region_Spec found{};
  if (MRI_Find_Region(value.c_str(), &found) == MRI_OK) return true;
  const RegionValue v = parse_region_value(value);
  MRI_Region_Table t;
  if (MRI_Get_Regions(&t) != MRI_OK) return false;
  for (int k = 0; k < t.nr_Elements; ++k) {
    MRI_Region_Info info;
    if (MRI_Get_Region_Info(&t.region[k], &info) == MRI_OK && (v.name == info.name || v.value == info.name))
      return true;
  }
  return false;
}

// The region a --region value names: NAME, or NAME@FILE or NAME@FILE:LINE
// when several regions share NAME (FILE: the file's path, or a trailing
// part of it at a '/', as the location column shows it). Dies with the
// candidates when the value names none or several.
MRI_Region_Spec find_region(const std::string& value) {
  MRI_Region_Spec found{};
  if (MRI_Find_Region(value.c_str(), &found) == MRI_OK) return found;
  const RegionValue v = parse_region_value(value);
  const std::string& name = v.name;
  MRI_Region_Table t;
  if (MRI_Get_Regions(&t) != MRI_OK) die(("--region " + value).c_str());
  std::vector<MRI_Region_Spec> named, matching;
  for (int k = 0; k < t.nr_Elements; ++k) {
    MRI_Region_Info info;
    if (MRI_Get_Region_Info(&t.region[k], &info) != MRI_OK || name != info.name) continue;
    named.push_back(t.region[k]);
    if (v.at && region_value_matches(v, info.name, info.file, t.region[k].id.line_NR)) matching.push_back(t.region[k]);
  }
  if (matching.size() == 1) return matching[0];
  if (named.empty()) {
    MRI_Find_Region(name.c_str(), &found);  // for its reason
    die(("--region " + value).c_str());
  }
  std::string which;
  for (const auto& r : named) which += (which.empty() ? "" : ", ") + name + "@" + location(r);
  if (!v.at)
    std::fprintf(stderr, "mri: --region %s: %zu regions have this name; name one of %s\n", value.c_str(),
                 named.size(), which.c_str());
  else if (matching.empty())
    std::fprintf(stderr, "mri: --region %s: no region named \"%s\" is at %s; the regions of this name: %s\n",
                 value.c_str(), name.c_str(), value.c_str() + name.size() + 1, which.c_str());
  else
    std::fprintf(stderr, "mri: --region %s: %zu regions named \"%s\" are at %s; name one of %s\n", value.c_str(),
                 matching.size(), name.c_str(), value.c_str() + name.size() + 1, which.c_str());
  MRI_Finalize();
  std::exit(1);
}

// A name as the tables show it: control characters written out (\n, \t,
// \xNN), so that a name with a newline does not break its row in two; the
// escaping of libmri's messages (protocol/mri_text.h).
std::string printable(const std::string& name) { return mri::text::printable(name); }

// A region's name as shown and exported: "(unnamed)" for an empty one (a
// name the monitor's name pool had no room for: monitor_message says so).
std::string shown_name(const char* name) { return name[0] ? name : "(unnamed)"; }

// A region's name for the tables (printable()).
std::string region_name(const MRI_Region_Spec& r) {
  MRI_Region_Info info;
  return MRI_Get_Region_Info(&r, &info) == MRI_OK ? printable(shown_name(info.name)) : "?";
}

void print_table(const char* title, std::vector<Row> rows, const std::string& sort, double total_ns) {
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (sort == "excl") return a.excl > b.excl;
    if (sort == "calls") return a.calls > b.calls;
    if (sort == "name") return a.name < b.name;
    return a.incl > b.incl;
  });
  size_t wn = 6, ww = 8;
  for (const auto& r : rows) {
    wn = std::max(wn, r.name.size());
    ww = std::max(ww, r.where.size());
  }
  std::printf("\n%s\n", title);
  std::printf("  %-*s  %-13s  %-*s  %12s  %14s  %14s", int(wn), "region", "type", int(ww), "location", "calls",
              "incl [ms]", "excl [ms]");
  if (g_compensate) std::printf("  %14s  %14s", "comp incl [ms]", "comp excl [ms]");
  std::printf("  %7s", "incl %");
  for (const auto& m : g_metrics) std::printf("  %*s  %*s", 22, (m + " incl").c_str(), 22, (m + " excl").c_str());
  std::printf("\n");
  for (const auto& r : rows) {
    std::printf("  %-*s  %-13s  %-*s  %12llu  %14.3f  %14.3f", int(wn), r.name.c_str(), r.type.c_str(), int(ww),
                r.where.c_str(), r.calls, r.incl / 1e6, r.excl / 1e6);
    if (g_compensate) std::printf("  %14.3f  %14.3f", r.comp_incl / 1e6, r.comp_excl / 1e6);
    std::printf("  %6.1f%%", total_ns > 0 ? 100.0 * r.incl / total_ns : 0.0);
    for (size_t m = 0; m < r.metric_incl.size(); ++m) std::printf("  %22.0f  %22.0f", r.metric_incl[m], r.metric_excl[m]);
    std::printf("\n");
  }
}

bool same_region(const MRI_Region_Spec& a, const MRI_Region_Spec& b) {
  return a.type == b.type && a.id.file_ID == b.id.file_ID && a.id.line_NR == b.id.line_NR;
}

// The element of a profile result for `region`, or nullptr.
const MRI_Profile_Element* element_for(const MRI_Histogram_Profile_Results* p, const MRI_Region_Spec& region) {
  for (int e = 0; e < p->nr_Elements; ++e)
    if (same_region(p->element[e].region, region)) return &p->element[e];
  return nullptr;
}

// The value of thread `id` in an element, or nullptr.
const MRI_Profile_Value* value_for(const MRI_Profile_Element* el, int id) {
  for (int t = 0; el && t < el->nr_Active_Objects; ++t)
    if (el->per_active_object[t].active_object.id == id) return &el->per_active_object[t];
  return nullptr;
}

// Ctrl-C, and SIGINT, SIGTERM, SIGHUP or SIGQUIT sent to mri alone, end
// the program, not mri: mri then reports the program's end and writes what
// was measured up to then, as for any program killed by a signal. Without
// this, mri died first: no results, a temporary file left behind, and a
// program that ran on unmonitored. A signal from the terminal (si_code
// SI_KERNEL) reached the program's process group, the program's too, so
// only one sent to mri by a process (kill) is passed on. One that arrives
// while the program is loaded is passed on when the load is done; one
// after the program's end ends mri with the default action. Caught rather
// than ignored, for the same reason as SIGXFSZ (survive_file_size_limit());
// left alone when mri was started with it ignored (a background job of a
// shell without job control: the program ignores it too, as without mri).
// PROGRAM may be a wrapper (a shell script) that started the monitored
// program without exec(): the signal goes to that process too, which
// would otherwise run on after the wrapper's end.
//
// A program that ignores or handles these signals and runs on: the third
// of them (the second says so) kills it with SIGKILL, as the only way left
// to end it and keep what was measured. SIGUSR1 and SIGUSR2 are passed on
// (and end mri by default after the program's end) without counting: a
// program may use them for its own purposes, and mri stands in for it.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int kPassedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
constexpr int kKillAfter = 3;             // stop signals, the last one ending the program with SIGKILL
std::atomic<pid_t> g_program_pid{0};     // 0: loading; -1: ended
std::atomic<pid_t> g_monitored_pid{0};   // the process that attached, when it is not g_program_pid
std::atomic<int> g_stop_signals{0};      // stop signals while the program ran
volatile sig_atomic_t g_pending_signal;  // arrived while loading

bool is_stop_signal(int sig) {
  for (int s : kStopSignals)
    if (s == sig) return true;
  return false;
}

// write(2) only: in a signal handler.
void say_from_handler(const char* text) {
  const ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
  (void)ignored;
}

void on_passed_signal(int sig, siginfo_t* info, void*) {
  const pid_t pid = g_program_pid.load();
  if (pid > 0) {
    const pid_t monitored = g_monitored_pid.load();
    const int n = is_stop_signal(sig) ? g_stop_signals.fetch_add(1) + 1 : 0;
    if (n >= kKillAfter) {
      say_from_handler("mri: killing the program (SIGKILL)\n");
      if (monitored > 0) kill(monitored, SIGKILL);
      kill(pid, SIGKILL);
      return;
    }
    if (info->si_code != SI_KERNEL) {
      if (monitored > 0) kill(monitored, sig);
      kill(pid, sig);
    }
    if (n == kKillAfter - 1)
      say_from_handler("mri: the program has not ended yet; one more interrupt kills it (SIGKILL)\n");
  } else if (pid == 0) {
    g_pending_signal = sig;
  } else {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

void pass_stop_signals_on() {
  for (int sig : kPassedSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_sigaction = on_passed_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(sig, &action, nullptr);
  }
}

// MRI_Application_Load() of the program, with the stop signals passed on
// to it from then on.
void load_program(char** prog) {
  pass_stop_signals_on();
  if (MRI_Application_Load(prog[0], prog) != MRI_OK) die("cannot load the program");
  MRI_Application_Status_Info st;
  if (MRI_Get_Application_Status(&st) == MRI_OK && st.pid > 0) {
    if (st.monitored_pid > 0 && st.monitored_pid != st.pid) g_monitored_pid.store(st.monitored_pid);
    g_program_pid.store(st.pid);
    if (const int sig = g_pending_signal) {
      if (is_stop_signal(sig)) g_stop_signals.fetch_add(1);
      if (st.monitored_pid > 0 && st.monitored_pid != st.pid) kill(st.monitored_pid, sig);
      kill(st.pid, sig);
    }
  }
}

int load(char** argv) {
  if (MRI_Init() != MRI_OK) die("init");
  load_program(argv);
  return 0;
}

// Releases the program until it has ended (a stop by someone else is
// continued).
void run_to_end() {
  for (;;) {
    const int st = MRI_Wait();
    if (st == MRI_Error) die("wait");
    if (st == MRI_APPLICATION_TERMINATED) break;
    if (MRI_Start() != MRI_OK) die("continue");
  }
  g_monitored_pid.store(0);  // ended or detached: its pid may be another process's now
  g_program_pid.store(-1);   // reaped: likewise
}

// What the results of a profile or histogram hold when the program was
// killed by a signal (final_status()).
const char* kKilledProfileNote =
    "results of the region instances that had ended by then are shown (one still open, such as the program's own, "
    "counts nothing)";
// The same when the monitor caught the signal (SIGINT, SIGTERM, SIGHUP left
// at their default action) and ended monitoring first.
const char* kCaughtProfileNote =
    "the monitor caught it and ended monitoring first, as at an exit: the region instances then open (such as the "
    "program's own) were measured up to it";

// The program's end as a status for ours and as words: its exit status, or
// 128 + signal.
int program_end(const MRI_Application_Status_Info& st, std::string& how) {
  if (st.reason == MRI_STOP_SIGNALED) {
    how = "was killed by signal " + std::to_string(st.signal) + " (" + strsignal(st.signal) + ")";
    return 128 + st.signal;
  }
  how = "exited with status " + std::to_string(st.exit_code);
  return st.exit_code;
}

// Whether the program was killed by a signal (it has ended).
bool killed() {
  MRI_Application_Status_Info st;
  return MRI_Get_Application_Status(&st) == MRI_OK && st.status == MRI_APPLICATION_TERMINATED &&
         st.reason == MRI_STOP_SIGNALED;
}

// Says what the monitor could not monitor: threads and regions beyond its
// limits.
void warn_unmonitored(const MRI_Application_Status_Info& st) {
  if (st.threads_dropped)
    std::fprintf(stderr, "mri: warning: %u threads were not monitored (more than MRI_MAX_THREADS)\n",
                 st.threads_dropped);
  if (st.regions_dropped)
    std::fprintf(stderr, "mri: warning: %u regions were not monitored (more than MRI_MAX_REGIONS, or more source files "
                 "than the monitor's file table holds)\n", st.regions_dropped);
}

// Ends the run and returns the program's exit status for ours. Warns about
// what was not monitored; when the program was killed by a signal, says so
// with `killed_note` (what the results hold then; "" for nothing more).
int final_status(const char* program, const char* killed_note = kKilledProfileNote,
                 const char* caught_note = kCaughtProfileNote) {
  MRI_Application_Status_Info st;
  MRI_Get_Application_Status(&st);
  warn_unmonitored(st);
  if (st.counter_errors)
    std::fprintf(stderr, "mri: warning: %u times a thread could not set up its counters\n", st.counter_errors);
  if (st.monitor_message[0]) std::fprintf(stderr, "mri: the monitor reported: %s\n", st.monitor_message);
  std::string how;
  const int code = program_end(st, how);
  if (st.exec_replaced == 1)
    // The process ran on with another program; its end is that program's.
    std::fprintf(stderr, "mri: %s replaced itself with exec() (pid %d): monitoring ended there (the region instances "
                 "then open were measured up to it; the new program was not monitored); the process then %s\n",
                 program, st.pid, how.c_str());
  else if (st.exec_replaced == 2)
    std::fprintf(stderr, "mri: %s called exec() (pid %d), which failed after monitoring had ended for it: the results "
                 "end at that call, the program ran on unmonitored and then %s\n",
                 program, st.pid, how.c_str());
  else if (st.reason == MRI_STOP_SIGNALED) {
    const char* note = st.signal_caught ? caught_note : killed_note;
    std::fprintf(stderr, "mri: %s %s%s%s\n", program, how.c_str(), note[0] ? "; " : "", note);
  }
  return code;
}

// The program ended before the requests took effect (it ended before its
// first region, e.g. on bad arguments, or declares none), or, `applied`,
// exited with them in place before any instance of a requested region
// ended: says so with the program's own exit status, and ends mri with that
// status (1 when the program's was 0: nothing was measured).
[[noreturn]] void ended_before_monitoring(const char* program, bool applied = false) {
  MRI_Wait();  // returns at once; but only then is the exit status collected
  MRI_Application_Status_Info st{};
  std::string how = "ended";
  int code = 1;
  if (MRI_Get_Application_Status(&st) == MRI_OK && st.status == MRI_APPLICATION_TERMINATED) {
    code = program_end(st, how);
    if (st.exec_replaced)
      how = std::string(st.exec_replaced == 1 ? "replaced itself with exec()" : "called exec(), which failed,") +
            " (pid " + std::to_string(st.pid) + ") and the process then " + how + ",";
  }
  // Regions beyond MRI_MAX_REGIONS were never monitored: a possible reason
  // nothing ended (the PROGRAM regions are kept first, the others as
  // their modules list them).
  warn_unmonitored(st);
  MRI_Region_Table regions{};
  if (MRI_Get_Regions(&regions) == MRI_OK && regions.nr_Elements == 0)
    std::fprintf(stderr, "mri: %s %s and has no monitored region (it declares none, or they were not "
                 "published): nothing was measured\n", program, how.c_str());
  else if (applied)
    std::fprintf(stderr, "mri: %s %s before any instance of a monitored region ended: nothing was measured\n",
                 program, how.c_str());
  else
    std::fprintf(stderr, "mri: %s %s before monitoring took effect (before its first monitored region): nothing was "
                 "measured\n", program, how.c_str());
  MRI_Finalize();
  std::exit(code == 0 ? 1 : code);
}

// MRI_Start() for the first release; when it fails because the program
// has already ended, says so (ended_before_monitoring()).
void start(const char* program) {
  if (MRI_Start() == MRI_OK) return;
  if (MRI_No_Wait() == MRI_APPLICATION_TERMINATED) ended_before_monitoring(program);
  die("start");
}

// A callgrind event name: letters, digits and '_', starting with a letter.
std::string event_name(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || !std::isalpha(static_cast<unsigned char>(out[0]))) out = "E" + out;
  return out;
}

// Region index (MRI_Get_Regions order) by spec.
using RegionKey = std::tuple<int, int, int>;
RegionKey key_of(const MRI_Region_Spec& r) { return {int(r.type), r.id.file_ID, r.id.line_NR}; }

std::map<RegionKey, uint32_t> region_indices(std::vector<mri::exporters::Region>* out) {
  std::map<RegionKey, uint32_t> index;
  MRI_Region_Table t;
  if (MRI_Get_Regions(&t) != MRI_OK) die("regions");
  for (int r = 0; r < t.nr_Elements; ++r) {
    index[key_of(t.region[r])] = uint32_t(r);
    if (out) {
      MRI_Region_Info info;
      mri::exporters::Region reg;
      reg.id = uint32_t(r);
      if (MRI_Get_Region_Info(&t.region[r], &info) == MRI_OK) {
        reg.name = shown_name(info.name);
        reg.file = info.file;
      } else {
        reg.name = "?";
        reg.file = "?";
      }
      reg.line = t.region[r].id.line_NR;
      if (t.region[r].type == MRI_REGION_FUNCTION) {
        // Found by unwinding: its "file" is the object file and its line the
        // offset in it, no source to show ("???" is callgrind's own name for
        // an unknown source file; annotators skip it).
        reg.line = 0;
        reg.file = "???";
      }
      reg.kind = MRI_Region_Type_Name(t.region[r].type);
      out->push_back(reg);
    }
  }
  return index;
}

// At most this many --metric: the monitor holds 4 profile requests at a
// time (the default geometry of protocol/mri_protocol.h, max_profile_slices,
// which the environment cannot change) and the time profile is one of them.
constexpr size_t kMaxMetrics = 3;

// The callgrind file of `mri profile -o`: regions as functions, exclusive
// values as self costs, and the call tree from the callpath requests.
// Events: Time_ns, TimeComp_ns (unless --no-compensation), Instances (when
// instances_req is a request), then one per --metric.
//
// Self costs come from the flat profiles (MRI_Get_Data() of the same
// requests), which count every instance: a pair that did not fit the
// monitor's edge table (MRI_MAX_EDGES) is missing from the callpath
// results, and its callee's cost with it. Then the call tree is incomplete,
// which a warning says; the functions and totals are not. Every region that
// ran is a function (every region with `all`, as in the table).
//
// The format has one record a line and no escapes: a line break in an
// argument, a region name or a file name (all legal) becomes a space, so
// that the file is written rather than refused after the whole run.
std::string one_line(std::string s) {
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return s;
}

void write_callgrind_file(const std::string& path, char** prog, MRI_Request_ID time_req, MRI_Request_ID instances_req,
                          const std::vector<MRI_Request_ID>& metric_req, bool all) {
  namespace ex = mri::exporters;
  ex::Profile profile;
  profile.program = one_line(prog[0]);
  for (char** a = prog; *a; ++a) profile.command += std::string(a == prog ? "" : " ") + one_line(*a);
  profile.events.push_back("Time_ns");
  profile.event_descriptions.push_back("Execution time (ns)");
  if (g_compensate) {
    profile.events.push_back("TimeComp_ns");
    profile.event_descriptions.push_back("Execution time with the monitor's overhead removed (ns)");
  }
  const bool with_instances = instances_req >= 0;
  if (with_instances) {
    profile.events.push_back("Instances");
    profile.event_descriptions.push_back("Region instances (inclusive: with the instances nested in them)");
  }
  for (const auto& m : g_metrics) {
    profile.events.push_back(event_name(m));
    profile.event_descriptions.push_back(m);
  }
  const auto index = region_indices(&profile.regions);
  for (auto& r : profile.regions) {
    r.name = one_line(r.name);
    r.file = one_line(r.file);
  }
  const size_t nev = profile.events.size();
  const size_t comp_column = g_compensate ? 1 : 0;       // TimeComp_ns follows Time_ns
  const size_t instances_column = 1 + comp_column;       // when with_instances
  const size_t first_metric = instances_column + (with_instances ? 1 : 0);
  // The time request, then the metrics; the instances request apart (its
  // self cost is the flat instance count of the time request).
  std::vector<MRI_Request_ID> reqs{time_req};
  std::vector<size_t> columns{0};
  for (size_t m = 0; m < metric_req.size(); ++m) {
    reqs.push_back(metric_req[m]);
    columns.push_back(first_metric + m);
  }

  // Self costs from the flat profiles.
  std::map<uint32_t, std::vector<uint64_t>> self;
  std::map<uint32_t, unsigned long long> flat_instances;
  for (size_t r = 0; r < reqs.size(); ++r) {
    void* data = nullptr;
    if (MRI_Get_Data(reqs[r], &data) != MRI_OK) die("profile results");
    const auto* flat = static_cast<const MRI_Histogram_Profile_Results*>(data);
    for (int e = 0; e < flat->nr_Elements; ++e) {
      const MRI_Profile_Element& el = flat->element[e];
      auto region = index.find(key_of(el.region));
      if (region == index.end()) continue;
      if (r == 0) {
        if (el.instances == 0 && !all) continue;
        flat_instances[region->second] = el.instances;
        auto& costs = self[region->second];
        costs.assign(nev, 0);
        costs[0] = uint64_t(el.exclusive + 0.5);
        if (comp_column) costs[1] = uint64_t(el.compensated_exclusive + 0.5);
        if (with_instances) costs[instances_column] = el.instances;
      } else if (auto it = self.find(region->second); it != self.end()) {
        it->second[columns[r]] = uint64_t(el.exclusive + 0.5);
      }
    }
  }

  // Calls from the callpath results: count and inclusive costs.
  std::map<std::pair<uint32_t, uint32_t>, ex::ProfileCall> calls;
  std::map<uint32_t, unsigned long long> paired;  // per callee: instances in some pair (time request)
  if (with_instances) {
    reqs.push_back(instances_req);
    columns.push_back(instances_column);
  }
  for (size_t r = 0; r < reqs.size(); ++r) {
    const size_t ev = columns[r];
    MRI_Callpath_Profile_Results* res = nullptr;
    if (MRI_Get_Callpath_Data(reqs[r], &res) != MRI_OK) die("callpath results");
    for (int i = 0; i < res->nr_Elements; ++i) {
      const MRI_Callpath_Element& e = res->element[i];
      auto callee = index.find(key_of(e.callee));
      if (callee == index.end()) continue;
      if (r == 0) paired[callee->second] += e.instances;
      // A thread's outermost region is called from outside the profile
      // (kNoCaller): callgrind_annotate takes a function's inclusive cost
      // from its incoming calls, so a region that is a root on one thread
      // and a callee on another (a worker's share of a parallel loop)
      // needs both (docs/formats.md).
      if (e.has_caller && !index.count(key_of(e.caller))) continue;
      const uint32_t caller = e.has_caller ? index.at(key_of(e.caller)) : ex::kNoCaller;
      ex::ProfileCall& c = calls[{caller, callee->second}];
      c.caller = caller;
      c.callee = callee->second;
      c.inclusive.resize(nev, 0);
      c.calls = std::max<uint64_t>(c.calls, e.instances);  // callgrind rejects calls=0
      c.inclusive[ev] += uint64_t(e.inclusive + 0.5);
      if (r == 0 && comp_column) c.inclusive[1] += uint64_t(e.compensated_inclusive + 0.5);
    }
  }
  // Every instance has one nearest caller (or none: a root), so the pairs
  // into a region account for all its instances unless some were dropped.
  unsigned long long unpaired = 0;
  for (const auto& [region, n] : flat_instances) {
    const auto p = paired.find(region);
    const unsigned long long in_pairs = p == paired.end() ? 0 : p->second;
    if (n > in_pairs) unpaired += n - in_pairs;
  }

  for (auto& [region, costs] : self) profile.functions.push_back({region, costs});
  for (auto& [k, c] : calls) profile.calls.push_back(c);
  std::string error;
  if (!ex::write_callgrind(writer_path(path), profile, error)) {
    std::fprintf(stderr, "mri: cannot write %s: %s\n", path.c_str(), reason_only(error, writer_path(path)).c_str());
    MRI_Finalize();
    std::exit(1);
  }
  // Every function in the file: those with costs of their own, those only
  // called or calling (unwound frames), and the one outside any region.
  std::set<uint32_t> functions;
  for (const auto& f : profile.functions) functions.insert(f.region);
  for (const auto& c : profile.calls) {
    functions.insert(c.caller);  // kNoCaller: the function outside any region
    functions.insert(c.callee);
  }
  std::fprintf(stderr, "mri: wrote %s (%zu functions, %zu call edges; open it with kcachegrind or callgrind_annotate)\n",
               path.c_str(), functions.size(), profile.calls.size());
  if (!with_instances)
    std::fprintf(stderr, "mri: note: %s has no Instances event: with %zu --metric every profile request the monitor "
                 "holds is in use\n", path.c_str(), kMaxMetrics);
  if (unpaired)
    std::fprintf(stderr, "mri: warning: the call tree in %s is incomplete: %llu region instances have no caller/callee "
                 "pair (the monitor's table of pairs per thread was full; MRI_MAX_EDGES raises it, up to 65536); "
                 "self costs and totals are complete\n", path.c_str(), unpaired);
}

// Whether one of `ris` has this property in the publication table.
bool any_runtime_information(const std::vector<MRI_Runtime_Information_Spec>& ris, bool counter, const char* backend) {
  MRI_Runtime_Information_Table t;
  if (ris.empty() || Get_Available_Runtime_Information(&t) != MRI_OK) return false;
  for (int k = 0; k < t.nr_Elements; ++k)
    if (std::find(ris.begin(), ris.end(), t.info[k].ri) != ris.end() &&
        (counter ? t.info[k].needs_counter != 0 : std::strcmp(t.info[k].backend, backend) == 0))
      return true;
  return false;
}

// The kind of measurement the regions of `mri profile` carry (docs/api.md,
// "Overhead compensation": a region's kind is the most expensive one it
// carries): counters read at enter and exit when a --metric needs a
// counter, else the callpath profile with -o, else the flat profile.
MRI_Overhead_Kind carried_kind(bool callpath, const std::vector<MRI_Runtime_Information_Spec>& metrics) {
  if (any_runtime_information(metrics, true, nullptr)) return MRI_OVERHEAD_COUNTER;
  return callpath ? MRI_OVERHEAD_CALLPATH : MRI_OVERHEAD_TIMER;
}

// Where the overhead removed came from, for the "comp:" line: "" (the
// application's calibration), or the fit's or --overhead's words.
std::string g_overhead_source;

// The header line of the compensated columns: the overhead of the kind the
// regions carried (carried_kind(); the flat or callpath profile when the
// counter kind was not calibrated).
void print_calibration(bool callpath, const std::vector<MRI_Runtime_Information_Spec>& metrics) {
  MRI_Overhead_Calibration cal;
  if (MRI_Get_Overhead_Calibration(&cal) != MRI_OK) return;
  MRI_Overhead_Kind kind = carried_kind(callpath, metrics);
  std::string what = callpath ? "; callpath profile" : "";
  if (kind == MRI_OVERHEAD_COUNTER && cal.kind[kind].calibrated) {
    // The events: the calibration's note names them, unless the tool set
    // the kind (--fit, --overhead): then the --metric names.
    std::string events = cal.kind[MRI_OVERHEAD_COUNTER].note;
    if (!g_overhead_source.empty()) {
      events.clear();
      for (size_t m = 0; m < metrics.size() && m < g_metrics.size(); ++m)
        if (metrics[m] != MRI_EXECUTION_TIME && metrics[m] != MRI_NUMBER_OF_INSTANCES)
          events += (events.empty() ? "" : ",") + g_metrics[m];
    }
    what = "; with the counters " + events + " read at enter and exit";
  }
  else if (kind == MRI_OVERHEAD_COUNTER)
    kind = callpath ? MRI_OVERHEAD_CALLPATH : MRI_OVERHEAD_TIMER;
  const MRI_Overhead_Value& v = cal.kind[kind];
  if (!v.calibrated) return;
  const std::string source = g_overhead_source.empty() ? "measured in the program" : g_overhead_source;
  std::printf("comp: the monitor's overhead removed (%s: %.1f ns per measured region\n"
              "      instance added to every enclosing one, %.1f ns of it inside its own time%s)\n",
              source.c_str(), v.delta_inclusive, v.delta_own, what.c_str());
  const MRI_Overhead_Value& sim = cal.kind[MRI_OVERHEAD_CACHE_SIMULATOR];
  if (sim.calibrated && any_runtime_information(metrics, false, "simulator"))
    std::printf("      and %.2f ns per memory reference recorded for the cache simulator\n", sim.delta_inclusive);
}

// Rows whose compensated total the library reported as 0 because more was
// removed than measured (docs/api.md, "Totals shown as 0"): in the table
// of all threads or of one, inclusive or exclusive. Their comp columns then
// no longer add up, which the user must be told.
void warn_overcompensated(const std::vector<Row>& rows, const std::vector<std::vector<Row>>& thread_rows) {
  std::vector<std::string> names;
  auto check = [&names](const std::vector<Row>& table) {
    for (const Row& r : table)
      if (((r.incl > 0 && r.comp_incl <= 0) || (r.excl > 0 && r.comp_excl <= 0)) &&
          std::find(names.begin(), names.end(), r.name) == names.end())
        names.push_back(r.name);
  };
  check(rows);
  for (const auto& table : thread_rows) check(table);
  if (names.empty()) return;
  std::string list;
  for (size_t k = 0; k < names.size() && k < 5; ++k) list += (k ? ", " : "") + names[k];
  if (names.size() > 5) list += ", ... (" + std::to_string(names.size()) + " in all)";
  std::fprintf(stderr, "mri: warning: compensation removed more than was measured from %s: their comp columns show "
               "0 there, and the rows around them no longer add up (the overhead removed exceeds what the instances "
               "cost in this run; --fit measures it in the program itself)\n", list.c_str());
}

// The requests of one run of `mri profile`: the time profile, one per
// --metric, and with -o the instance profile of the callgrind file
// (`instances`, when a profile request is left for it).
struct ProfileRequests {
  MRI_Request_ID time = -1, instances = -1;
  std::vector<MRI_Request_ID> metrics;
};

struct ProfileOptions {
  bool callpath = false, unwind = false, compensate = true, instances = false;
  std::vector<MRI_Runtime_Information_Spec> metric_ri;
};

// Places the requests of `mri profile` over `regions`: every region, or
// the PROGRAM regions in the fit's runs without the others.
ProfileRequests place_requests(MRI_Region_Table regions, const ProfileOptions& o) {
  ProfileRequests r;
  MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
  // With -o the requests keep the calling context for the call tree.
  auto request = o.callpath ? MRI_Callpath_Profile_Request : MRI_Profile_Request;
  r.time = request(&ri, &regions, nullptr, nullptr);
  if (r.time < 0) die("profile request");
  if (!o.compensate && MRI_Set_Compensation(r.time, 0) != MRI_OK) die("--no-compensation");
  if (o.unwind && MRI_Set_Callpath_Unwinding(r.time, 1) != MRI_OK) die("--unwind");
  for (size_t m = 0; m < o.metric_ri.size(); ++m) {
    MRI_Runtime_Information_Spec mri = o.metric_ri[m];
    r.metrics.push_back(request(&mri, &regions, nullptr, nullptr));
    if (r.metrics.back() < 0) die(("--metric " + g_metrics[m]).c_str());
    if (o.unwind && MRI_Set_Callpath_Unwinding(r.metrics.back(), 1) != MRI_OK) die("--unwind");
  }
  // The Instances event of the callgrind file: the inclusive instances of
  // a call (the callee's instances and those nested in them, under that
  // caller) are measured, not derivable from the pairs of the other
  // requests.
  if (o.instances) {
    MRI_Runtime_Information_Spec n = MRI_NUMBER_OF_INSTANCES;
    r.instances = MRI_Callpath_Profile_Request(&n, &regions, nullptr, nullptr);
    if (r.instances < 0) die("instance profile request");
    if (o.unwind && MRI_Set_Callpath_Unwinding(r.instances, 1) != MRI_OK) die("--unwind");
  }
  return r;
}

void delete_requests(const ProfileRequests& r) {
  std::vector<MRI_Request_ID> ids = r.metrics;
  ids.push_back(r.time);
  if (r.instances >= 0) ids.push_back(r.instances);
  for (MRI_Request_ID id : ids)
    if (MRI_Request_Delete(id) != MRI_OK) die("delete a request");
}

// --fit RUNS (docs/api.md, "Calibrating against the program"): what one
// measured region instance costs in this program on this machine, from
// 2 RUNS + 1 runs before the profile's own: without the other regions
// (only the PROGRAM region measured, "MO"), with every region ("PA", raw),
// MO, PA, ..., MO. Each PA run against the mean of the MO runs before and
// after it: (its PROGRAM time - theirs) / the region instances of its
// busiest thread. The median of the RUNS values is the fitted Delta_i.
struct FitRun {
  double program_ns = 0;         // the PROGRAM region's raw inclusive time
  unsigned long long busiest = 0;  // instances of the other regions, in the thread with most
  double own_ns = -1;            // the application's Delta_own of the kind, when it measured it
  double calibrated_ns = -1;     // the application's Delta_i of the kind, likewise
};

// `mri`'s standard output pointed at /dev/null while a fit run's program
// is started, so that it writes its own output there (its standard error
// stays); restored when this goes.
class QuietProgram {
 public:
  QuietProgram() {
    std::fflush(stdout);
    saved_ = dup(1);
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved_ < 0 || null < 0 || dup2(null, 1) < 0) {
      std::fprintf(stderr, "mri: --fit: cannot point the program's standard output at /dev/null: %s\n",
                   std::strerror(errno));
      std::exit(1);
    }
    close(null);
  }
  ~QuietProgram() {
    dup2(saved_, 1);
    close(saved_);
  }

 private:
  int saved_ = -1;
};

FitRun fit_run(char** prog, bool every_region, int n, int runs, const ProfileOptions& o, MRI_Overhead_Kind kind) {
  {
    QuietProgram quiet;
    load_program(prog);
  }
  MRI_Region_Table all{nullptr, 0};
  if (MRI_Get_Regions(&all) != MRI_OK) die("regions");
  std::vector<MRI_Region_Spec> program;
  for (int k = 0; k < all.nr_Elements; ++k)
    if (all.region[k].type == MRI_REGION_PROGRAM) program.push_back(all.region[k]);
  if (program.empty() && all.nr_Elements > 0) {
    std::fprintf(stderr, "mri: --fit: %s has no PROGRAM region (an annotated main) to time each run by; profile it "
                 "without --fit\n", prog[0]);
    MRI_Finalize();
    std::exit(2);
  }
  MRI_Region_Table regions{every_region ? nullptr : program.data(), every_region ? 0 : int(program.size())};
  // The profile's own requests, compensation included (it is part of what
  // an instance costs); the fit reads their raw values.
  ProfileRequests r = place_requests(regions, o);
  start(prog[0]);
  run_to_end();
  MRI_Application_Status_Info st;
  if (MRI_Get_Application_Status(&st) != MRI_OK) die("status");
  if (st.reason == MRI_STOP_SIGNALED || st.exec_replaced) {
    std::string how;
    const int code = program_end(st, how);
    std::fprintf(stderr, "mri: --fit: in run %d of %d, %s %s; no profile was taken\n", n, runs, prog[0],
                 st.exec_replaced ? "replaced itself with exec()" : how.c_str());
    MRI_Finalize();
    std::exit(code ? code : 1);
  }
  void* p = nullptr;
  if (MRI_Get_Data(r.time, &p) != MRI_OK) die("fit results");
  auto* prof = static_cast<MRI_Histogram_Profile_Results*>(p);
  if (!prof->active) ended_before_monitoring(prog[0]);
  FitRun out;
  bool ended = false;
  std::map<int, unsigned long long> per_thread;
  for (int e = 0; e < prof->nr_Elements; ++e) {
    const MRI_Profile_Element& el = prof->element[e];
    if (el.region.type == MRI_REGION_PROGRAM) {
      if (el.instances > 0 && el.inclusive > out.program_ns) out.program_ns = el.inclusive;
      ended = ended || el.instances > 0;
      continue;
    }
    for (int t = 0; t < el.nr_Active_Objects; ++t)
      per_thread[el.per_active_object[t].active_object.id] += el.per_active_object[t].instances;
  }
  for (const auto& [thread, count] : per_thread) out.busiest = std::max(out.busiest, count);
  if (!ended) {
    std::fprintf(stderr, "mri: --fit: in run %d of %d no instance of %s's PROGRAM region ended (exit() on another "
                 "thread than main's?): the fit needs its time\n", n, runs, prog[0]);
    MRI_Finalize();
    std::exit(1);
  }
  MRI_Overhead_Calibration cal;
  if (every_region && MRI_Get_Overhead_Calibration(&cal) == MRI_OK && cal.kind[kind].calibrated) {
    out.own_ns = cal.kind[kind].delta_own;
    out.calibrated_ns = cal.kind[kind].delta_inclusive;
  }
  delete_requests(r);
  if (every_region)
    std::fprintf(stderr, "mri: fit run %d of %d (every region, raw): %.3f ms, %llu region instances in the busiest "
                 "thread\n", n, runs, out.program_ns / 1e6, out.busiest);
  else
    std::fprintf(stderr, "mri: fit run %d of %d (only the PROGRAM region): %.3f ms\n", n, runs, out.program_ns / 1e6);
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The fit (see FitRun): the Delta_i and Delta_own to set, or delta 0 when
// the runs found nothing to fit (said why on stderr).
struct Fitted {
  double delta = 0, own = 0;
};

Fitted fit_overhead(char** prog, int pairs, const ProfileOptions& o, MRI_Overhead_Kind kind) {
  const int runs = 2 * pairs + 1;
  std::vector<FitRun> mo, pa;
  for (int n = 1; n <= runs; ++n) (n % 2 ? mo : pa).push_back(fit_run(prog, n % 2 == 0, n, runs, o, kind));
  std::vector<double> costs;  // one per run with every region in which other regions ran
  double own = -1, calibrated = -1;
  for (int k = 0; k < pairs; ++k) {
    if (pa[k].own_ns >= 0) own = pa[k].own_ns;
    if (pa[k].calibrated_ns > 0) calibrated = pa[k].calibrated_ns;
    if (pa[k].busiest == 0) continue;
    costs.push_back((pa[k].program_ns - (mo[k].program_ns + mo[k + 1].program_ns) / 2) / double(pa[k].busiest));
  }
  Fitted f;
  if (costs.empty()) {
    std::fprintf(stderr, "mri: --fit: no region besides the PROGRAM region ran, so there is no overhead to fit; the "
                 "application's calibration stays\n");
    return f;
  }
  std::string list;
  for (double c : costs) {
    char v[32];
    std::snprintf(v, sizeof v, " %.2f", c);
    list += v;
  }
  const double m = median(costs);
  if (!(m > 0)) {
    std::fprintf(stderr, "mri: --fit: the runs with every region were not slower than those without (ns an instance:"
                 "%s): the machine's noise is larger than the overhead; the application's calibration stays\n",
                 list.c_str());
    return f;
  }
  f.delta = m;
  f.own = own >= 0 ? std::min(own, m) : 0;
  std::fprintf(stderr, "mri: fit: a measured region instance costs %.2f ns in this program (median of%s); give "
               "--overhead %.2f to use it again without the fit runs\n", m, list.c_str(), m);
  // How far to trust it. The runs do the same work, so what sets them
  // apart is the machine's noise: the spread of the fitted costs, and (with
  // a single cost) of the runs with only the PROGRAM region against what
  // the instances added. Either beyond 20% is said, with what it means
  // for the compensated times. So is a fit far from the calibration (in
  // place an instance has cost 0.7 to 2.2 times the calibrated pair on the
  // hosts of docs/ACCURACY.md): the noise of a few runs can agree by
  // chance.
  double mo_min = mo[0].program_ns, mo_max = mo[0].program_ns, mo_sum = 0;
  for (const FitRun& r : mo) {
    mo_min = std::min(mo_min, r.program_ns);
    mo_max = std::max(mo_max, r.program_ns);
    mo_sum += r.program_ns;
  }
  std::vector<double> pa_ns;
  for (const FitRun& r : pa) pa_ns.push_back(r.program_ns);
  const double added = median(pa_ns) - mo_sum / double(mo.size());
  const double cost_spread = (*std::max_element(costs.begin(), costs.end()) -
                              *std::min_element(costs.begin(), costs.end())) / m;
  const double mo_spread = added > 0 ? (mo_max - mo_min) / added : 0;
  if (cost_spread > 0.2 || mo_spread > 0.2)
    std::fprintf(stderr, "mri: warning: --fit: the fit is uncertain: %s; the compensated times may be off by about "
                 "that share of the overhead removed (a quieter machine, a longer run or more RUNS help)\n",
                 cost_spread >= mo_spread
                     ? ("the fitted costs range over " + std::to_string(int(100 * cost_spread + 0.5)) +
                        "% of their median").c_str()
                     : ("the runs with only the PROGRAM region differ by " + std::to_string(int(100 * mo_spread + 0.5)) +
                        "% of what the measured instances added").c_str());
  else if (calibrated > 0 && (m > 3 * calibrated || m < calibrated / 3))
    std::fprintf(stderr, "mri: warning: --fit: the fit is uncertain: it is %.1f times the application's calibration "
                 "(%.2f ns), more than the code around the regions explains; the runs' noise may have agreed by "
                 "chance (a longer run or more RUNS tell)\n", m / calibrated, calibrated);
  return f;
}

int cmd_profile(int argc, char** argv) {
  std::vector<std::string> seen;  // single-valued options given (once())
  std::string sort = "incl", output;
  bool per_thread = false, all = false, unwind = false;
  int fit = 0;          // --fit RUNS
  double overhead = 0;  // --overhead NS
  int i = 0;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    help_option(a);
    if (a == "--sort" || a == "--fit" || a == "--overhead" || a == "-o" || a == "--output") once(seen, a);
    if (a == "--sort") {
      sort = option_value(argc, argv, i, "a value");
      if (sort != "incl" && sort != "excl" && sort != "calls" && sort != "name")
        usage_error("unknown sort key '%s' (incl, excl, calls, name)", sort.c_str());
    } else if (a == "--metric") {
      g_metrics.push_back(option_value(argc, argv, i, "an event name"));
    } else if (a == "--per-thread") {
      per_thread = true;
    } else if (a == "--all") {
      all = true;
    } else if (a == "--no-compensation") {
      g_compensate = false;
    } else if (a == "--unwind") {
      unwind = true;
    } else if (a == "--fit") {
      const std::string v = option_value(argc, argv, i, "a number of runs");
      unsigned long long n = 0;
      if (!whole_number(v, kMaxFitRuns, n) || n < 1)
        usage_error("--fit '%s': the number of runs with every region must be from 1 to 16", v.c_str());
      fit = int(n);
    } else if (a == "--overhead") {
      const std::string v = option_value(argc, argv, i, "ns per region instance");
      char* end = nullptr;
      // Digits with at most one '.', nothing strtod also takes (blanks, a
      // sign, hexadecimal, inf).
      const bool number = !v.empty() && v.find_first_not_of("0123456789.") == std::string::npos &&
                          std::count(v.begin(), v.end(), '.') <= 1 && v != ".";
      overhead = number ? std::strtod(v.c_str(), &end) : 0;
      if (!number || *end || !std::isfinite(overhead) || overhead <= 0 || overhead > 1e6)
        usage_error("--overhead '%s': give the ns one measured region instance costs, above 0 and at most 1000000 "
                    "(mri profile --fit prints it)", v.c_str());
    } else if (a == "-o" || a == "--output") {
      output = file_value(argc, argv, i);
    } else if (a.size() && a[0] == '-') {
      usage_error("unknown option '%s'", a.c_str());
    } else {
      break;
    }
  }
  if (i >= argc) usage_error("%s", "profile needs a program to run (after --)");
  check_not_program("-o", output, argv[i]);
  if (unwind && output.empty()) usage_error("%s", "--unwind needs -o FILE (it adds callers to the call tree)");
  if (fit && overhead > 0) usage_error("%s", "--fit and --overhead both set the overhead; give one");
  if ((fit || overhead > 0) && !g_compensate)
    usage_error("%s", "--fit and --overhead set the overhead that compensation removes; --no-compensation removes none");
  if (g_metrics.size() > kMaxMetrics)
    usage_error("%s", "at most 3 --metric: the monitor holds 4 profile requests at a time, and the time profile is one");
  check_output(output, true);
  claim_stdout(output);
  char** prog = argv + i;
  if (MRI_Init() != MRI_OK) die("init");
  // The events, before the program is started: an unknown name or an event
  // named twice (which would give two columns and two callgrind events of
  // one name) ends mri here.
  std::vector<MRI_Runtime_Information_Spec> metric_ri;
  for (size_t m = 0; m < g_metrics.size(); ++m) {
    MRI_Runtime_Information_Spec ri;
    if (MRI_Runtime_Information_By_Name(g_metrics[m].c_str(), &ri) != MRI_OK) die(("--metric " + g_metrics[m]).c_str());
    for (size_t k = 0; k < m; ++k) {
      const bool same = metric_ri[k] == ri;
      if (!same && (output.empty() || event_name(g_metrics[k]) != event_name(g_metrics[m]))) continue;
      if (same)
        std::fprintf(stderr, "mri: --metric %s: the same event as --metric %s (%s); give each event once\n",
                     g_metrics[m].c_str(), g_metrics[k].c_str(), MRI_Runtime_Information_Name(ri));
      else
        std::fprintf(stderr, "mri: --metric %s and --metric %s would both be the event %s of the callgrind file; "
                     "give one of them\n", g_metrics[k].c_str(), g_metrics[m].c_str(), event_name(g_metrics[m]).c_str());
      MRI_Finalize();
      return 2;
    }
    metric_ri.push_back(ri);
  }
  ProfileOptions opts;
  opts.callpath = !output.empty();
  opts.unwind = unwind;
  opts.compensate = g_compensate;
  // With -o, the Instances event of the callgrind file, when a profile
  // request is left for it; with kMaxMetrics metrics the file has none.
  opts.instances = !output.empty() && g_metrics.size() < kMaxMetrics;
  opts.metric_ri = metric_ri;
  const MRI_Overhead_Kind kind = carried_kind(opts.callpath, metric_ri);
  Fitted fitted;
  if (fit) {
    fitted = fit_overhead(prog, fit, opts, kind);
    if (fitted.delta > 0)
      g_overhead_source = "fitted to this program in " + std::to_string(2 * fit + 1) + " runs before this one";
  }
  load_program(prog);
  if (overhead > 0) {
    // Delta_own: the application's, at most the value given. The counter
    // kind is measured only at the first release, after this: the
    // application takes its own then (MRI_OVERHEAD_OWN_MEASURED). Until
    // 2026-11-29 it was 0 for that kind, and every parent lost the whole
    // overhead of its children from its exclusive time.
    fitted.delta = overhead;
    fitted.own = MRI_OVERHEAD_OWN_MEASURED;
    g_overhead_source = "given with --overhead";
  }
  if (fitted.delta > 0 && MRI_Set_Overhead(kind, fitted.delta, fitted.own) != MRI_OK)
    die(fit ? "--fit" : "--overhead");
  MRI_Region_Table every{nullptr, 0};
  const ProfileRequests placed = place_requests(every, opts);
  const MRI_Request_ID req = placed.time, instances_req = placed.instances;
  const std::vector<MRI_Request_ID>& metric_req = placed.metrics;
  start(prog[0]);
  run_to_end();
  // Results of the counter profiles first: each MRI_Get_Data buffer stays
  // valid until that request's next call.
  std::vector<const MRI_Histogram_Profile_Results*> metric_prof;
  for (MRI_Request_ID id : metric_req) {
    void* p = nullptr;
    if (MRI_Get_Data(id, &p) != MRI_OK) die("counter results");
    metric_prof.push_back(static_cast<MRI_Histogram_Profile_Results*>(p));
  }
  void* data = nullptr;
  if (MRI_Get_Data(req, &data) != MRI_OK) die("results");
  auto* prof = static_cast<MRI_Histogram_Profile_Results*>(data);
  if (!prof->active) ended_before_monitoring(prog[0]);
  // Applied, but the program exited before any region instance ended
  // (e.g. Monitor_Init() first thing, then exit() on a bad argument). A
  // killed program's note comes from final_status().
  bool measured = false;
  for (int e = 0; e < prof->nr_Elements && !measured; ++e) measured = prof->element[e].instances > 0;
  if (!measured && !killed()) ended_before_monitoring(prog[0], true);

  int nthreads = prof->nr_Elements ? prof->element[0].nr_Active_Objects : 0;
  std::vector<Row> rows;
  std::vector<std::vector<Row>> thread_rows(static_cast<size_t>(nthreads));
  double total = 0;
  for (int e = 0; e < prof->nr_Elements; ++e) {
    const MRI_Profile_Element& el = prof->element[e];
    if (el.instances == 0 && !all) continue;
    Row r{region_name(el.region), MRI_Region_Type_Name(el.region.type), location(el.region), el.instances,
          el.inclusive, el.exclusive, el.compensated_inclusive, el.compensated_exclusive, {}, {}};
    for (const auto* mp : metric_prof) {
      const MRI_Profile_Element* me = element_for(mp, el.region);
      r.metric_incl.push_back(me ? me->inclusive : 0.0);
      r.metric_excl.push_back(me ? me->exclusive : 0.0);
    }
    if (el.region.type == MRI_REGION_PROGRAM) total = std::max(total, el.inclusive);
    rows.push_back(r);
    for (int t = 0; t < el.nr_Active_Objects && t < nthreads; ++t) {
      const MRI_Profile_Value& v = el.per_active_object[t];
      if (v.instances == 0 && !all) continue;
      Row tr{r.name, r.type, r.where, v.instances, v.inclusive, v.exclusive, v.compensated_inclusive,
             v.compensated_exclusive, {}, {}};
      for (const auto* mp : metric_prof) {
        const MRI_Profile_Value* mv = value_for(element_for(mp, el.region), v.active_object.id);
        tr.metric_incl.push_back(mv ? mv->inclusive : 0.0);
        tr.metric_excl.push_back(mv ? mv->exclusive : 0.0);
      }
      thread_rows[size_t(t)].push_back(tr);
    }
  }
  // No PROGRAM instance ended (the program was killed, exit() was called
  // on another thread than the PROGRAM region's, or it has none): the
  // percentages are of the longest region, and the title says which.
  std::string title = "all threads (sum over threads; incl % of the PROGRAM region)";
  if (total <= 0) {
    const Row* longest = nullptr;
    for (const auto& r : rows)
      if (!longest || r.incl > longest->incl) longest = &r;
    if (longest) {
      total = longest->incl;
      title = "all threads (sum over threads; incl % of " + longest->name + " " + longest->where +
              ", the longest: no instance of a PROGRAM region ended)";
    }
  }

  MRI_Application_Status_Info st;
  MRI_Get_Application_Status(&st);
  // The --metric columns' unit: events of counters, and what the others
  // count (EXECUTION_TIME in ns, NUMBER_OF_INSTANCES in region instances).
  std::string metric_units;
  bool counters = false;
  for (size_t m = 0; m < metric_ri.size(); ++m) {
    if (metric_ri[m] == MRI_EXECUTION_TIME)
      metric_units += ", " + g_metrics[m] + " columns in ns";
    else if (metric_ri[m] == MRI_NUMBER_OF_INSTANCES)
      metric_units += ", " + g_metrics[m] + " columns in region instances";
    else
      counters = true;
  }
  if (counters) metric_units += ", counters in events (PAPI or the cache simulator)";
  std::printf("\nmri profile: %s (pid %d), %d thread%s, times in ms (EXECUTION_TIME, nanosecond clock)%s\n",
              prog[0], st.pid, nthreads, nthreads == 1 ? "" : "s", metric_units.c_str());
  if (g_compensate) print_calibration(!output.empty(), metric_ri);
  print_table(title.c_str(), rows, sort, total);
  if (per_thread || nthreads > 1) {
    for (int t = 0; t < nthreads; ++t) {
      MRI_Active_Object_Spec ao{MRI_THREAD, prof->element[0].per_active_object[t].active_object.id};
      MRI_Active_Object_Info info;
      char title[128];
      if (MRI_Get_Active_Object_Info(&ao, &info) == MRI_OK)
        std::snprintf(title, sizeof title, "thread %d \"%s\" (tid %d)", ao.id, info.name, info.os_id);
      else
        std::snprintf(title, sizeof title, "thread %d", ao.id);
      print_table(title, thread_rows[size_t(t)], sort, total);
    }
  }
  if (g_compensate) warn_overcompensated(rows, thread_rows);
  if (!output.empty()) write_callgrind_file(output, prog, req, instances_req, metric_req, all);
  int code = final_status(prog[0]);
  MRI_Finalize();
  return code;
}

// ---- mri trace: the trace archiver --------------------------------------

// A region spec packed into one word, for the archiver's per-record lookup.
uint64_t packed(const MRI_Region_Spec& r) {
  return (uint64_t(uint32_t(r.type)) << 56) ^ (uint64_t(uint32_t(r.id.file_ID)) << 32) ^ uint32_t(r.id.line_NR);
}

struct Archiver {
  std::unique_ptr<mri::exporters::TraceWriter> writer;
  std::map<RegionKey, uint32_t> regions;
  std::unordered_map<uint64_t, uint32_t> fast;  // packed spec -> id: the per-record lookup (a std::map of tuples cost 1/3 of the archiver's time)
  std::vector<uint8_t> location_known;  // by thread id
  size_t threads = 0;                   // threads with records: the locations defined, not the highest id + 1
  std::vector<mri::exporters::TraceEvent> events;
  std::string error;  // the first write error; later records are drained and dropped
  unsigned long long records = 0;
  time_t last_progress = 0;
  bool progress = false;

  // --region values naming no region published at the start (a C++ scope
  // publishes its region when it first runs): the monitor then traces
  // every region, and the archiver keeps the records of the named
  // regions' instances and, with `subregions`, of those nested in them on
  // the same thread. The names are matched as regions get published.
  bool filtering = false;
  bool subregions = true;
  std::vector<RegionValue> late;          // the values of regions not published at the start
  std::vector<uint8_t> selected;          // by region id: named by a --region value
  struct Open {
    uint32_t region;
    bool inside;  // an instance of a selected region, or nested in one
  };
  std::vector<std::vector<Open>> open;    // by thread: the instances open, innermost last
  unsigned long long left_out = 0;        // records outside the --region instances
  unsigned long long out_of_step = 0;     // exits that did not close the innermost open instance (records discarded)
};
Archiver g_archiver;

// Marks the regions published during the run, from `first` on, that a
// late --region value names. (Those the other values name were published
// at the start and marked then.)
void select_regions(Archiver& a, const std::vector<mri::exporters::Region>& all, size_t first) {
  if (!a.filtering) return;
  a.selected.resize(all.size(), 0);
  for (size_t r = first; r < all.size(); ++r)
    for (const auto& v : a.late) a.selected[r] = a.selected[r] || region_value_matches(v, all[r].name, all[r].file, all[r].line);
}

// Whether the record of `region` (entered or left) on `thread` is kept: it
// belongs to an instance of a selected region or, with subregions, lies
// inside one. Enters and leaves nest per thread (a region left by an
// exception or longjmp is left by its guard), so the stack of the thread's
// open instances tells inside from outside; each remembers whether it is.
//
// Unless records were discarded (a thread whose ring stayed full beyond
// MRI_TRACE_WAIT_MS, docs/api.md 4.4): then an exit may come whose enter
// was lost, or an enter whose exit was lost. A count of open instances
// would stay out of step from then on (a lost exit of the selected region
// kept every later record of the thread; a lost enter inside it ended it
// early and left out its exit). The stack resynchronises at the next exit
// it can match: an exit closes the innermost open instance of its region,
// and the instances above it, whose exits were lost, with it; an exit of
// no open instance is left out, so every exit kept has its enter kept.
bool keep_record(Archiver& a, int thread, uint32_t region, bool enter) {
  const bool named = region < a.selected.size() && a.selected[region];
  if (!a.subregions) return named;
  if (size_t(thread) >= a.open.size()) a.open.resize(size_t(thread) + 1);
  std::vector<Archiver::Open>& stack = a.open[size_t(thread)];
  if (enter) {
    const bool inside = named || (!stack.empty() && stack.back().inside);
    stack.push_back({region, inside});
    return inside;
  }
  size_t k = stack.size();
  while (k > 0 && stack[k - 1].region != region) --k;
  if (k != stack.size()) ++a.out_of_step;
  if (k == 0) return false;
  const bool inside = stack[k - 1].inside;
  stack.resize(k - 1);
  return inside;
}

// Defines thread `thread`'s location for the writer, once. It counts in
// the summary's threads (a.threads) unless `counted` is false (the main
// thread's location of a trace without events, defined last).
bool add_location(Archiver& a, int thread, bool counted = true) {
  if (size_t(thread) < a.location_known.size() && a.location_known[size_t(thread)]) return true;
  if (size_t(thread) >= a.location_known.size()) a.location_known.resize(size_t(thread) + 1, 0);
  mri::exporters::Location loc;
  loc.id = uint32_t(thread);
  MRI_Active_Object_Spec ao{MRI_THREAD, thread};
  MRI_Active_Object_Info info;
  if (MRI_Get_Active_Object_Info(&ao, &info) == MRI_OK) {
    loc.name = std::string("thread ") + std::to_string(thread) + (info.name[0] ? std::string(" ") + info.name : "");
    loc.os_tid = info.os_id;
  } else {
    loc.name = "thread " + std::to_string(thread);
  }
  a.location_known[size_t(thread)] = 1;
  a.threads += counted;
  return a.writer->add_location(loc, a.error);
}

// Region index of a record; regions published after the start are
// announced to the writer when they first appear.
bool region_of(Archiver& a, const MRI_Region_Spec& spec, uint32_t& id) {
  const uint64_t k = packed(spec);
  if (auto f = a.fast.find(k); f != a.fast.end()) {
    id = f->second;
    return true;
  }
  auto it = a.regions.find(key_of(spec));
  if (it != a.regions.end()) {
    id = it->second;
    a.fast.emplace(k, id);
    return true;
  }
  std::vector<mri::exporters::Region> all;
  auto fresh = region_indices(&all);
  for (const auto& r : all)  // ids are publication order: the new ones come after the known ones
    if (r.id >= a.regions.size() && !a.writer->add_region(r, a.error)) return false;
  const size_t known = a.regions.size();
  a.regions = fresh;
  select_regions(a, all, known);
  it = a.regions.find(key_of(spec));
  if (it == a.regions.end()) {
    a.error = "a trace record names a region the program never published";
    return false;
  }
  id = it->second;
  a.fast.emplace(k, id);
  return true;
}

void archive_records() {
  Archiver& a = g_archiver;
  static MRI_Trace_Element_Spec chunk[8192];
  int n;
  while ((n = MRI_Get_Trace_Records(chunk, 8192)) > 0) {
    a.records += unsigned(n);
    if (!a.error.empty()) continue;  // drain, so the program can finish
    a.events.clear();
    for (int i = 0; i < n; ++i) {
      const MRI_Trace_Element_Spec& r = chunk[i];
      uint32_t region;
      if (!region_of(a, r.region, region)) break;
      const bool enter = r.data == MRI_TRACE_ENTER;
      if (a.filtering && !keep_record(a, r.active_object.id, region, enter)) {
        ++a.left_out;
        continue;
      }
      if (!add_location(a, r.active_object.id)) break;
      mri::exporters::TraceEvent ev;
      ev.timestamp = r.timestamp;
      ev.location = uint32_t(r.active_object.id);
      ev.region = region;
      ev.kind = enter ? mri::exporters::EventKind::Enter : mri::exporters::EventKind::Leave;
      ev.synthetic = !enter && (r.data & MRI_TRACE_SYNTHETIC);
      a.events.push_back(ev);
    }
    if (a.error.empty()) a.writer->write(a.events.data(), a.events.size(), a.error);
  }
  if (a.progress && time(nullptr) - a.last_progress >= 2) {
    a.last_progress = time(nullptr);
    std::fprintf(stderr, "\rmri trace: %llu records written", a.records);
  }
}

// The records per thread ring of --ring, as MRI_Set_Trace_Buffer_Size()
// takes them (include/mri.h): a power of two from 1024 to 16777216 (a
// whole_number()). A usage error naming the value as given otherwise.
constexpr unsigned long long kMinRingRecords = 1024, kMaxRingRecords = 1ull << 24;

unsigned ring_records(const std::string& v) {
  unsigned long long n = 0;
  if (!whole_number(v, kMaxRingRecords, n) || n < kMinRingRecords || (n & (n - 1)))
    usage_error("--ring '%s': the records per thread must be a power of two from 1024 to 16777216", v.c_str());
  return unsigned(n);
}

int cmd_trace(int argc, char** argv) {
  std::vector<std::string> seen;  // single-valued options given (once())
  namespace ex = mri::exporters;
  std::string output, format;
  std::vector<std::string> region_names;
  bool subregions = true;
  unsigned ring = 0;
  int i = 0;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    help_option(a);
    if (a == "-o" || a == "--output" || a == "--format" || a == "--ring") once(seen, a);
    if (a == "-o" || a == "--output") {
      output = file_value(argc, argv, i);
    } else if (a == "--format") {
      format = option_value(argc, argv, i, "vtf3 or otf2");
    } else if (a == "--region") {
      add_region_name(region_names, option_value(argc, argv, i, "a region name"));
    } else if (a == "--no-subregions") {
      subregions = false;
    } else if (a == "--ring") {
      ring = ring_records(option_value(argc, argv, i, "a number of records"));
    } else if (a.size() && a[0] == '-') {
      usage_error("unknown option '%s'", a.c_str());
    } else {
      break;
    }
  }
  if (output.empty()) usage_error("%s", "trace needs an output file (-o FILE)");
  if (i >= argc) usage_error("%s", "trace needs a program to run (after --)");
  check_not_program("-o", output, argv[i]);
  if (!subregions && region_names.empty())
    usage_error("%s", "--no-subregions needs --region NAME (without it every region is traced)");
  ex::TraceFormat fmt = ex::trace_format_for_path(output);
  if (!format.empty() && !ex::parse_trace_format(format, fmt)) usage_error("unknown trace format '%s' (vtf3, otf2)", format.c_str());
  if (fmt == ex::TraceFormat::Vtf3 && output.size() >= 5 &&
      strcasecmp(output.c_str() + output.size() - 5, ".otf2") == 0)
    std::fprintf(stderr, "mri: warning: %s is written in VTF3 (text), which OTF2 readers cannot open: OTF2 is written "
                 "with --format otf2, or for a name that ends in .otf2 in lower case\n", output.c_str());
  char** prog = argv + i;
  if (fmt == ex::TraceFormat::Vtf3) claim_stdout(output);  // OTF2 refuses a stream below
  if (MRI_Init() != MRI_OK) die("init");
  if (ring && MRI_Set_Trace_Buffer_Size(ring, std::max(ring, 1u << 20)) != MRI_OK) die("--ring");
  load_program(prog);

  Archiver& a = g_archiver;
  a.progress = isatty(2);
  a.last_progress = time(nullptr);
  ex::TraceDefinitions defs;
  defs.program = prog[0];
  defs.timer_resolution = 1'000'000'000;  // MRI timestamps are nanoseconds
  a.regions = region_indices(&defs.regions);
  a.writer = ex::make_trace_writer(fmt);
  std::string error;
  if (!a.writer || !a.writer->begin(writer_path(output), defs, error)) {
    std::fprintf(stderr, "mri: cannot write %s: %s\n", output.c_str(),
                 a.writer ? reason_only(error, writer_path(output)).c_str() : "no writer");
    MRI_Application_Finish();
    MRI_Finalize();
    return 1;
  }
  std::vector<MRI_Region_Spec> specs;
  for (const auto& name : region_names) {
    if (region_name_published(name))
      specs.push_back(find_region(name));
    else
      a.late.push_back(parse_region_value(name));
  }
  if (!a.late.empty()) {
    // The monitor can only be asked for regions it has published; the
    // others are picked out of a trace of every region here.
    a.filtering = true;
    a.subregions = subregions;
    a.selected.assign(defs.regions.size(), 0);
    for (const auto& spec : specs) a.selected[a.regions.at(key_of(spec))] = 1;
    specs.clear();
    for (const auto& v : a.late)
      std::fprintf(stderr, "mri: --region %s: no region of this name is published yet (a C++ scope publishes its region "
                   "when it first runs): every region is traced and only the records of %s are kept (more overhead than "
                   "tracing published regions)\n", v.value.c_str(),
                   subregions ? "its instances and of the regions nested in them" : "its instances");
  }
  MRI_Region_Table table{specs.empty() ? nullptr : specs.data(), int(specs.size())};
  MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
  if (MRI_Register_Call_Back_Function(archive_records) != MRI_OK) die("call-back");
  const MRI_Request_ID request = MRI_Trace_Request(&ev, &table, nullptr, nullptr);
  if (request < 0) die("trace request");
  if (!subregions && !a.filtering && MRI_Set_Trace_Subregions(request, 0) != MRI_OK) die("--no-subregions");
  start(prog[0]);
  run_to_end();
  // A late --region value that no region published during the run
  // matched: a misspelt name, or a scope that never ran. Its trace would
  // hold nothing it asked for, so none is written.
  std::string never_published;
  if (a.filtering) {
    std::vector<ex::Region> all;
    region_indices(&all);
    for (const auto& v : a.late) {
      bool seen = false;
      for (const auto& r : all) seen = seen || region_value_matches(v, r.name, r.file, r.line);
      if (!seen) never_published += (never_published.empty() ? "" : ", ") + v.value;
    }
  }
  // MRI_Wait returned TERMINATED: the final call-back has run.
  if (a.progress) std::fprintf(stderr, "\n");
  unsigned long long emitted = 0, discarded = 0;
  MRI_Active_Object_Table objects;
  if (Get_Available_Active_Objects(&objects) == MRI_OK)
    for (int k = 0; k < objects.nr_Elements; ++k) {
      if (objects.active_object[k].type != MRI_THREAD) continue;
      MRI_Trace_Statistics st;
      if (MRI_Get_Trace_Statistics(&objects.active_object[k], &st) != MRI_OK) continue;
      emitted += st.emitted;
      discarded += st.discarded;
    }
  // The archive's locations are the threads with records. A trace
  // without any (none of the --region instances ran, or the program ran
  // no region) gets the main thread's: readers such as otf2-print refuse
  // an archive without locations.
  if (a.error.empty() && never_published.empty() && a.threads == 0) add_location(a, 0, false);
  if (a.error.empty() && never_published.empty()) a.writer->finish(a.error);
  // A killed program's threads could not publish their last records: a
  // thread makes its records visible 16 at a time (docs/api.md,
  // "Accounting"), and those it had not are neither delivered nor counted
  // as emitted. Nothing to say about the file when it was not written.
  const std::string killed_note =
      a.error.empty() && never_published.empty() ? output + " holds the records written up to then; the last ones of each thread (up to 15: a "
                                 "thread publishes its records 16 at a time) may be missing and are not counted as "
                                 "emitted, and regions still open have an enter without a leave"
                      : "";
  const std::string caught_note =
      a.error.empty() && never_published.empty()
          ? "the monitor caught it and ended monitoring first, as at an exit: " + output +
                " holds every record, and the regions then open end with a leave at the signal"
          : "";
  const int code = final_status(prog[0], killed_note.c_str(), caught_note.c_str());
  if (!never_published.empty()) {
    a.writer.reset();  // removes what it wrote
    std::fprintf(stderr, "mri: --region %s: the program published no region of this name during the run (no such "
                 "region, or it never ran): %s not written\n", never_published.c_str(), output.c_str());
    MRI_Finalize();
    return 1;
  }
  if (!a.error.empty()) {
    std::fprintf(stderr, "mri: cannot write %s: %s (%s)\n", output.c_str(),
                 reason_only(a.error, writer_path(output)).c_str(),
                 ex::is_stream_output(output) ? "a stream: what was written stays there" : "no trace file left behind");
    MRI_Finalize();
    return 1;
  }
  std::string left_out =
      a.filtering ? "; " + std::to_string(a.left_out) + " outside the --region instances left out" : "";
  if (a.out_of_step)  // discarded records, or else regions the program left without their exits
    left_out += "; " + std::to_string(a.out_of_step) + " exit" + (a.out_of_step == 1 ? "" : "s") +
                (discarded ? " out of step after discarded records: the --region filter resynchronised there, "
                             "records next to the gaps may be kept or left out wrongly"
                           : " that did not close the innermost open region: the --region filter resynchronised "
                             "there");
  if (a.writer->events_written() == 0)
    std::fprintf(stderr, "mri: warning: %s holds no events: %s\n", output.c_str(),
                 !region_names.empty() ? "no instance of the traced regions ran"
                                                      : "the program ran no monitored region");
  if (discarded > 0)
    std::fprintf(stderr, "mri: warning: %s lacks the %llu discarded records: readers find enters without their "
                 "leaves, and leaves without their enters, where they were (a thread discards a record when its ring "
                 "stays full for MRI_TRACE_WAIT_MS: mri did not keep up, or was stopped; a larger --ring or "
                 "MRI_TRACE_WAIT_MS avoids it)\n",
                 output.c_str(), discarded);
  std::fprintf(stderr, "mri: wrote %s (%s): %llu events of %zu thread%s; %llu records emitted, %llu discarded%s\n",
               output.c_str(), fmt == ex::TraceFormat::Otf2 ? "OTF2" : "VTF3", (unsigned long long)a.writer->events_written(),
               a.threads, a.threads == 1 ? "" : "s", emitted, discarded, left_out.c_str());
  MRI_Finalize();
  return code;
}

int cmd_regions(int argc, char** argv) {
  int i = 0;
  if (i < argc) help_option(argv[i]);
  if (i < argc && std::strcmp(argv[i], "--") == 0) ++i;
  if (i >= argc) usage_error("%s", "regions needs a program (after --)");
  load(argv + i);
  MRI_Region_Table t;
  if (MRI_Get_Regions(&t) != MRI_OK) die("regions");
  std::printf("%-28s  %-13s  %s\n", "region", "type", "location");
  for (int r = 0; r < t.nr_Elements; ++r)
    std::printf("%-28s  %-13s  %s\n", region_name(t.region[r]).c_str(), MRI_Region_Type_Name(t.region[r].type),
                location(t.region[r]).c_str());
  if (t.nr_Elements == 0)
    std::fprintf(stderr, "mri: %s published no region at its start (it declares none, or only C++ scopes and "
                 "dlopen()ed modules, published when they first run: `mri profile` shows those)\n", argv[i]);
  // A program that ended before its first region (its arguments refused,
  // most likely): the list is still its regions, but say how it ended.
  const bool ended = MRI_No_Wait() == MRI_APPLICATION_TERMINATED;
  if (ended) MRI_Wait();  // collects the exit status
  MRI_Application_Status_Info st{};
  if (MRI_Get_Application_Status(&st) == MRI_OK) {
    warn_unmonitored(st);  // regions beyond MRI_MAX_REGIONS are not in the list
    std::string how;
    if (ended && program_end(st, how) != 0)
      std::fprintf(stderr, "mri: note: %s %s before its first region\n", argv[i], how.c_str());
  }
  MRI_Application_Finish();
  MRI_Finalize();
  return 0;
}

int cmd_info() {
  if (MRI_Init() != MRI_OK) die("init");
  MRI_HW_Info hw;
  if (MRI_Get_System_Information(&hw) != MRI_OK) die("system information");
  auto count = [](int n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); };
  std::printf("machine: %s, %s, %s, %s (from %s)\n", count(hw.nr_CPUs, "CPU").c_str(), count(hw.nr_Cores, "core").c_str(),
              count(hw.nr_Sockets, "socket").c_str(), count(hw.nr_NUMA_Nodes, "NUMA node").c_str(), hw.topology_source);
  for (int i = 0; i < hw.nr_Cache_Levels; ++i) {
    const MRI_Cache_Info& c = hw.cache[i];
    const char* kind = c.is_data && c.is_instruction ? "unified" : c.is_data ? "data" : "instruction";
    const unsigned long long kib = 1024, mib = 1024 * kib;
    const std::string size = c.size_bytes == 0         ? "size unknown"
                             : c.size_bytes % mib == 0 ? std::to_string(c.size_bytes / mib) + " MiB"
                             : c.size_bytes % kib == 0 ? std::to_string(c.size_bytes / kib) + " KiB"
                                                       : std::to_string(c.size_bytes) + " bytes";
    const std::string line =
        c.line_size_bytes > 0 ? std::to_string(c.line_size_bytes) + "-byte lines" : "line size unknown";
    const std::string ways = c.associativity > 0   ? std::to_string(c.associativity) + "-way"
                             : c.associativity < 0 ? "fully associative"
                                                   : "associativity unknown";
    const std::string shared = c.shared_by_cpus > 0 ? "shared by " + count(c.shared_by_cpus, "CPU") : "sharing unknown";
    std::printf("  L%d %s cache: %s, %s, %s, %s\n", c.level, kind, size.c_str(), line.c_str(), ways.c_str(),
                shared.c_str());
  }
  std::printf("hardware counters: %d (%s)\n", hw.nr_Hardware_Counters, hw.counter_source);
  if (std::strstr(hw.counter_source, "; no CPU PMU"))
    std::printf("  (as PAPI's tables have them: the kernel has no CPU PMU here, a virtual machine without one most\n"
                "  likely, so no CPU event can be counted, only the kernel's software events)\n");
  std::printf("time entity: nanoseconds\n\n");
  MRI_Runtime_Information_Table t;
  if (Get_Available_Runtime_Information(&t) != MRI_OK) die("runtime information");
  // Aggregations as "SUM MIN MAX per thread; SUM MIN per process".
  auto aggregations = [](MRI_Runtime_Information_Spec ri) {
    MRI_Aggregation_Table a;
    if (Get_Available_Aggregations(ri, &a) != MRI_OK) return std::string("?");
    std::string per[2];
    for (int k = 0; k < a.nr_Elements; ++k) {
      std::string& p = per[a.aggregation[k].target == MRI_PER_THREAD ? 0 : 1];
      p += std::string(p.empty() ? "" : " ") + MRI_Aggregation_Operation_Name(a.aggregation[k].operation);
    }
    std::string out;
    if (!per[0].empty()) out += per[0] + " per thread";
    if (!per[1].empty()) out += (out.empty() ? "" : "; ") + per[1] + " per process";
    return out.empty() ? std::string("none (trace requests only)") : out;
  };
  size_t width = 20;
  for (int i = 0; i < t.nr_Elements; ++i) width = std::max(width, std::strlen(t.info[i].name));
  std::printf("%-*s  %-9s  %-9s  %s\n", int(width), "runtime information", "backend", "available",
              "aggregations, or why not available");
  for (int i = 0; i < t.nr_Elements; ++i) {
    const MRI_Runtime_Information_Info& r = t.info[i];
    std::printf("%-*s  %-9s  %-9s  %s\n", int(width), r.name, r.backend, r.available ? "yes" : "no",
                r.available ? aggregations(r.ri).c_str() : r.reason);
  }
  std::printf("\ncounter events count against the counter budget: at most 8 distinct events at once, fewer\n"
              "when the CPU has fewer counters or MRI_COUNTER_BUDGET says so; EXECUTION_TIME and\n"
              "NUMBER_OF_INSTANCES need no counter.\n");
  MRI_Finalize();
  return 0;
}

// ------------------------------------------------------------------ hist

// The runtime information of a cache event named L1_DATA_READ_MISS,
// LC1_DATA_READ_MISS or MRI_LC1_DATA_READ_MISS, and its cache level (1..3);
// false for anything else.
bool cache_metric(const std::string& name, MRI_Runtime_Information_Spec& ri, int& level) {
  std::string n = name.rfind("MRI_", 0) == 0 ? name.substr(4) : name;
  if (n.size() > 2 && n[0] == 'L' && std::isdigit(static_cast<unsigned char>(n[1]))) n = "LC" + n.substr(1);
  static const char* const kEvents[] = {"LC1_DATA_READ_MISS", "LC1_DATA_WRITE_MISS", "LC2_DATA_READ_MISS",
                                        "LC2_DATA_WRITE_MISS", "LC3_DATA_READ_MISS", "LC3_DATA_WRITE_MISS",
                                        "LC1_DATA_READ_HIT",  "LC1_DATA_WRITE_HIT",  "LC2_DATA_READ_HIT",
                                        "LC2_DATA_WRITE_HIT",  "LC3_DATA_READ_HIT",  "LC3_DATA_WRITE_HIT"};
  for (const char* e : kEvents)
    if (n == e) {
      level = e[2] - '0';
      return MRI_Runtime_Information_By_Name(e, &ri) == MRI_OK;
    }
  return false;
}

std::string hex(unsigned long long v) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", v);
  return text;
}

std::string bin_names(const MRI_Histogram_Bin& b, const char* separator) {
  std::string out;
  for (int k = 0; k < b.data_structures.nr_Elements; ++k)
    out += (k ? separator : "") + std::string(b.data_structures.data_structure[k].name);
  return out;
}

// Writes `text` to `path` in place (so /dev/null or a pipe will do); false
// with the reason on any I/O error. A regular file that was opened but not
// completely written (a full disk, a file-size limit: EFBIG) is removed:
// opening it had already truncated what it held, and a truncated CSV or
// SVG would pass for a complete one.
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

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A step of 1, 2 or 5 times a power of ten that cuts [0, top] into about
// five intervals.
double nice_step(double top) {
  if (top <= 0) return 1;
  const double raw = top / 5, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

// An SVG bar chart of the bins, written by hand: value axis with ticks and
// grid lines, bin numbers, and under the bins a bracket per data structure
// with its name.
std::string svg_chart(const MRI_Histogram_Request_Results& h, const std::string& title, const std::string& metric,
                      const std::string& xlabel) {
  const double W = 900, H = 500, left = 90, right = 30, top = 60, bottom = 130;
  const double pw = W - left - right, ph = H - top - bottom;
  unsigned long long maxv = 0;
  for (int b = 0; b < h.nr_Elements; ++b) maxv = std::max(maxv, h.element[b].value);
  const double step = nice_step(double(maxv));
  const double ytop = std::max(step, std::ceil(double(maxv) / step) * step);
  const int n = std::max(h.nr_Elements, 1);
  const double bw = pw / n;
  std::string o;
  char line[512];
  auto add = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    o += line;
  };
  add("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
  add("<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
  add("<text x=\"%.1f\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">%s</text>\n", W / 2, xml_escape(title).c_str());
  for (double v = 0; v <= ytop + step / 2; v += step) {  // value axis
    const double y = top + ph - v / ytop * ph;
    add("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", left, y, left + pw, y);
    add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n", left - 6, y + 4, v);
  }
  for (int b = 0; b < h.nr_Elements; ++b) {
    const double bh = double(h.element[b].value) / ytop * ph, x = left + b * bw;
    add("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#4a78b5\" stroke=\"white\" stroke-width=\"0.5\">"
        "<title>bin %d [%s, %s): %llu (%s)</title></rect>\n", x, top + ph - bh, bw, bh, b,
        hex(h.element[b].address_begin).c_str(), hex(h.element[b].address_end).c_str(), h.element[b].value,
        xml_escape(bin_names(h.element[b], ", ")).c_str());
    const int every = n <= 30 ? 1 : (n + 29) / 30;  // at most ~30 bin numbers
    if (b % every == 0)
      add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", x + bw / 2, top + ph + 16, b);
  }
  add("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top + ph, left + pw, top + ph);
  add("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top, left, top + ph);
  // Data structures: consecutive bins that list the same name share a bracket.
  std::map<std::string, std::pair<int, int>> span;  // name -> first, last bin
  for (int b = 0; b < h.nr_Elements; ++b)
    for (int k = 0; k < h.element[b].data_structures.nr_Elements; ++k) {
      const std::string name = h.element[b].data_structures.data_structure[k].name;
      auto it = span.find(name);
      if (it == span.end()) span[name] = {b, b};
      else it->second.second = b;
    }
  int row = 0;
  for (const auto& [name, r] : span) {
    const double x1 = left + r.first * bw + 2, x2 = left + (r.second + 1) * bw - 2;
    const double y = top + ph + 34 + 18 * (row++ % 3);
    add("<path d=\"M%.1f %.1f V%.1f H%.1f V%.1f\" fill=\"none\" stroke=\"#444444\"/>\n", x1, y - 6, y, x2, y - 6);
    add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (x1 + x2) / 2, y + 13, xml_escape(name).c_str());
  }
  add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", left + pw / 2, H - 18, xml_escape(xlabel).c_str());
  add("<text x=\"20\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 20 %.1f)\">%s</text>\n", top + ph / 2,
      top + ph / 2, xml_escape(metric).c_str());
  o += "</svg>\n";
  return o;
}

// Ends mri with status 2, before the program is loaded, when the simulated
// hierarchy has no cache of the event's level: the application would refuse
// the request only at its first release and run to its end for nothing.
// The hierarchy is the one the application will build (libmonitor/cache.cpp):
// `config` (--config), else MRI_CACHESIM_CONFIG, else this machine's caches,
// through the simulator's own parser and default.
void check_cache_level(const std::string& metric, int level, const std::string* config) {
  const char* env = std::getenv("MRI_CACHESIM_CONFIG");
  const std::string text = config ? *config : env ? env : "";
  const char* origin = config ? "--config" : !text.empty() ? "MRI_CACHESIM_CONFIG" : "this machine's caches";
  mri::sim::HierarchyConfig hierarchy;
  if (text.empty())
    hierarchy = mri::sim::default_config();
  else if (!mri::sim::parse_config_argument(text, hierarchy).empty())
    return;  // not valid: MRI_Application_Load() refuses it with the reason
  if (size_t(level) <= hierarchy.levels.size()) return;
  std::fprintf(stderr, "mri: --metric %s counts at L%d, but the simulated hierarchy (%s: %s) has %zu level%s\n",
               metric.c_str(), level, origin, mri::sim::format_config(hierarchy).c_str(), hierarchy.levels.size(),
               hierarchy.levels.size() == 1 ? "" : "s");
  MRI_Finalize();
  std::exit(2);
}

// A CSV field (RFC 4180): quoted, its quotes doubled, when it holds a
// comma, a quote or a line break (names are the program's own strings).
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

int cmd_hist(int argc, char** argv) {
  std::vector<std::string> seen;  // single-valued options given (once())
  std::string metric, data, csv, plot, config;
  bool have_config = false;
  std::vector<std::string> region_names;
  int bins = 25;
  int i = 0;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    help_option(a);
    if (a == "--metric" || a == "--data" || a == "--bins" || a == "--config" || a == "-o" || a == "--output" ||
        a == "--plot")
      once(seen, a);
    auto value = [&] { return option_value(argc, argv, i, "a value"); };
    if (a == "--metric") {
      metric = value();
    } else if (a == "--data") {
      data = value();
      if (data.empty()) usage_error("%s", "--data '' names no data structure (without --data: every registered one)");
    } else if (a == "--bins") {
      const std::string v = value();
      unsigned long long n = 0;
      if (!whole_number(v, 1024, n) || n < 1)
        usage_error("--bins: '%s' is not a bin count in 1..1024", v.c_str());
      bins = int(n);
    } else if (a == "--region") {
      add_region_name(region_names, value());
    } else if (a == "--config") {
      config = value();
      have_config = true;
    } else if (a == "-o" || a == "--output") {
      csv = file_value(argc, argv, i);
    } else if (a == "--plot") {
      plot = file_value(argc, argv, i);
    } else if (a.size() && a[0] == '-') {
      usage_error("unknown option '%s'", a.c_str());
    } else {
      break;
    }
  }
  if (metric.empty()) usage_error("%s", "hist needs --metric (e.g. L1_DATA_READ_MISS)");
  if (i >= argc) usage_error("%s", "hist needs a program to run (after --)");
  if (have_config && config.empty())
    usage_error("%s", "--config needs a cache hierarchy, e.g. 'L1:32K,8,64;L2:1M,16,64' (leave --config out to "
                "simulate this machine's caches)");
  check_not_program("-o", csv, argv[i]);
  check_not_program("--plot", plot, argv[i]);
  if (!csv.empty() && !plot.empty() && !file_identity(csv).empty() && file_identity(csv) == file_identity(plot))
    usage_error("%s", ("-o " + csv + " and --plot " + plot +
                       " name one file: the chart would replace the CSV; give them two files").c_str());
  check_output(csv, false);
  check_output(plot, false);
  if (!csv.empty() && !plot.empty() && mri::exporters::output_descriptor(csv) >= 0 &&
      mri::exporters::output_descriptor(csv) == mri::exporters::output_descriptor(plot))
    usage_error("%s", ("-o " + csv + " and --plot " + plot +
                       " name one descriptor: the CSV and the chart would run into each other; give one of them a file")
                          .c_str());
  claim_stdout(csv);
  claim_stdout(plot);
  char** prog = argv + i;
  if (MRI_Init() != MRI_OK) die("init");
  MRI_Runtime_Information_Spec ri;
  int level = 0;
  if (!cache_metric(metric, ri, level)) {
    std::fprintf(stderr, "mri: unknown metric '%s' for a histogram: use a cache event, L1_DATA_READ_MISS, "
                 "L1_DATA_WRITE_MISS, L2_..., L3_..., or the same with _HIT\n", metric.c_str());
    MRI_Finalize();
    return 2;
  }
  if (have_config && MRI_Set_Cache_Configuration(config.c_str()) != MRI_OK) {
    // A value of the command line: status 2, as for mri-cachesim --config.
    std::fprintf(stderr, "mri: --config: %s\n", MRI_Get_Error_Message());
    MRI_Finalize();
    return 2;
  }
  check_cache_level(metric, level, have_config ? &config : nullptr);
  load_program(prog);
  // A program that ended before its first region (exit() there) published
  // its regions and data structures, but nothing can be measured: said with
  // its status, before --data or --region is looked up in it.
  if (MRI_No_Wait() == MRI_APPLICATION_TERMINATED) ended_before_monitoring(prog[0]);

  std::vector<MRI_Region_Spec> regions;
  if (region_names.empty()) {
    MRI_Region_Table all;
    if (MRI_Get_Regions(&all) != MRI_OK) die("regions");
    for (int r = 0; r < all.nr_Elements; ++r)
      if (all.region[r].type == MRI_REGION_PROGRAM) regions.push_back(all.region[r]);
    if (regions.empty()) {
      std::fprintf(stderr, "mri: %s has no PROGRAM region: name the regions to count in with --region\n", prog[0]);
      MRI_Finalize();
      return 1;
    }
  }
  for (const auto& name : region_names) {
    // The monitor counts a histogram's events inside the instances of the
    // regions requested; nothing after the counting can pick out the
    // instances of a region it was not asked for (unlike a trace, which
    // holds every enter and leave), and it can only be asked for regions
    // published when the request is made, before the run.
    if (!region_name_published(name)) {
      std::fprintf(stderr, "mri: --region %s: the program publishes no region of this name at its start. hist "
                   "counts inside the instances of regions requested before the run, so it cannot count in a C++ "
                   "scope's region (MONITOR_SCOPE, MONITOR_FUNCTION), which is published only when it first runs: "
                   "name a region published at the start that encloses it ('mri regions -- PROGRAM' lists them), "
                   "or trace the scope with 'mri trace --region %s'\n",
                   name.c_str(), name.c_str());
      MRI_Finalize();
      return 1;
    }
    regions.push_back(find_region(name));
  }
  MRI_Data_Structure_Spec ds{};
  if (!data.empty() && MRI_Find_Data_Structure(data.c_str(), &ds) != MRI_OK) die(("--data " + data).c_str());
  if (data.empty()) {
    // Every registered data structure, packed: the monitor lays the bins
    // out when it applies the request, at the release, and refuses more
    // bins than bytes only then, after the whole run. Stopped at the load,
    // the set it will see is the one registered now.
    MRI_Data_Structure_Table all{};
    unsigned long long bytes = 0;
    if (MRI_Get_Data_Structures(&all) == MRI_OK)
      for (int k = 0; k < all.nr_Elements; ++k) {
        MRI_Data_Structure_Info info;
        if (MRI_Get_Data_Structure_Info(&all.data_structure[k], &info) == MRI_OK) bytes += info.size_bytes;
      }
    if (all.nr_Elements == 0) {
      std::fprintf(stderr, "mri: %s has registered no data structure before its first region: hist counts over "
                   "the data structures registered when the run starts (Monitor_Register_Data() before the first "
                   "annotated region)\n", prog[0]);
      MRI_Finalize();
      return 1;
    }
    if ((unsigned long long)bins > bytes) {
      std::fprintf(stderr, "mri: --bins %d: the %d data structures %s registered hold %llu bytes, and a bin covers at "
                   "least one byte: give at most %llu bins\n", bins, all.nr_Elements, prog[0], bytes, bytes);
      MRI_Finalize();
      return 1;
    }
  }
  MRI_Region_Table rt{regions.data(), int(regions.size())};
  MRI_Data_Structure_Table vt{&ds, data.empty() ? 0 : 1};
  const MRI_Request_ID req = MRI_Histogram_Request(&ri, &rt, nullptr, &vt, &bins);
  if (req < 0) die("histogram request");
  // The instances of those regions: whether the histogram counted anything
  // at all (a program released with the request in place may still exit
  // before any of them ended: Monitor_Init() first thing, then exit()).
  MRI_Runtime_Information_Spec n = MRI_NUMBER_OF_INSTANCES;
  MRI_Aggregation_Spec sum{MRI_SUM, MRI_PER_PROCESS};
  const MRI_Request_ID instances_req = MRI_Aggregate_Request(&n, &rt, nullptr, nullptr, &sum);
  if (instances_req < 0) die("instance count request");
  start(prog[0]);
  run_to_end();
  void* p = nullptr;
  if (MRI_Get_Data(req, &p) != MRI_OK) die("histogram results");
  const auto* h = static_cast<const MRI_Histogram_Request_Results*>(p);
  void* q = nullptr;
  if (MRI_Get_Data(instances_req, &q) != MRI_OK) die("instance counts");
  const auto* inst = static_cast<const MRI_Aggregate_Request_Results*>(q);
  unsigned long long instances = 0;
  for (int e = 0; e < inst->nr_Elements; ++e) instances += inst->element[e].count;
  if (!h->active) ended_before_monitoring(prog[0]);
  if (instances == 0 && !killed()) {
    if (region_names.empty()) ended_before_monitoring(prog[0], true);
    std::fprintf(stderr, "mri: warning: no instance of the --region regions ended: the histogram counted nothing\n");
  }
  char caches[1024];
  if (MRI_Get_Cache_Configuration(caches, sizeof caches) != MRI_OK) caches[0] = '\0';
  std::string where;
  for (const auto& r : regions) where += (where.empty() ? "" : ", ") + region_name(r);
  const char* base = std::strrchr(prog[0], '/');
  const std::string program = base ? base + 1 : prog[0];
  const std::string event = MRI_Runtime_Information_Name(ri);
  const unsigned long long width = h->nr_Elements ? h->element[0].address_end - h->element[0].address_begin : 0;
  unsigned long long total = 0;
  for (int b = 0; b < h->nr_Elements; ++b) total += h->element[b].value;

  std::printf("\nmri hist: %s of %s in %s (%s), %d bins%s\nsimulated caches: %s\n\n", event.c_str(),
              data.empty() ? "every registered data structure" : data.c_str(), where.c_str(), program.c_str(),
              h->nr_Elements,
              h->nr_Elements < bins ? " (fewer than asked: bins are whole bytes wide and every bin holds data)" : "",
              caches);
  std::printf("  %4s  %-20s  %-20s  %12s  %s\n", "bin", "address begin", "address end", event.c_str(), "data structures");
  for (int b = 0; b < h->nr_Elements; ++b) {
    const MRI_Histogram_Bin& e = h->element[b];
    std::printf("  %4d  %-20s  %-20s  %12llu  %s\n", b, hex(e.address_begin).c_str(), hex(e.address_end).c_str(),
                e.value, bin_names(e, ", ").c_str());
  }
  std::printf("  total %llu\n", total);
  // Nothing counted although the regions ran: say so, with the likely
  // reasons, rather than leave a table of zeros to speak for itself.
  if (total == 0 && instances > 0 && h->nr_Elements > 0)
    std::fprintf(stderr, "mri: note: the histogram counted nothing: no %s of %s during %s (the program does not make "
                 "such references there, or the data structure's registration had ended: Monitor_Unregister_Data)\n",
                 event.c_str(), data.empty() ? "the registered data structures" : data.c_str(), where.c_str());

  std::string error;
  if (!csv.empty()) {
    // bytes: what the bin covers of its data structures (a bin that holds
    // several spans the gaps between them, which it does not count).
    std::string text = "bin,address_begin,address_end,bytes,value,data_structures\n";
    for (int b = 0; b < h->nr_Elements; ++b) {
      const MRI_Histogram_Bin& e = h->element[b];
      unsigned long long bytes = 0;
      for (int k = 0; k < e.data_structures.nr_Elements; ++k) {
        MRI_Data_Structure_Info info;
        if (MRI_Get_Data_Structure_Info(&e.data_structures.data_structure[k], &info) != MRI_OK) die("data structure");
        const unsigned long long lo = std::max(e.address_begin, info.address);
        const unsigned long long hi = std::min(e.address_end, info.address + info.size_bytes);
        if (hi > lo) bytes += hi - lo;
      }
      text += std::to_string(b) + "," + hex(e.address_begin) + "," + hex(e.address_end) + "," +
              std::to_string(bytes) + "," + std::to_string(e.value) + "," + csv_field(bin_names(e, ";")) + "\n";
    }
    if (!write_file(writer_path(csv), text, error)) {
      std::fprintf(stderr, "mri: cannot write %s: %s\n", csv.c_str(), error.c_str());
      MRI_Finalize();
      return 1;
    }
  }
  if (!plot.empty()) {
    const std::string title = event + " of " + (data.empty() ? std::string("every data structure") : data) + " in " +
                              where + " (" + program + ", " + std::to_string(h->nr_Elements) + " bins)";
    const std::string xlabel = "bin: " + std::to_string(width) + " bytes of " +
                               (data.empty() ? std::string("the packed data structures") : data) + " each, in address order";
    if (!write_file(writer_path(plot), svg_chart(*h, title, event + " (simulated)", xlabel), error)) {
      std::fprintf(stderr, "mri: cannot write %s: %s\n", plot.c_str(), error.c_str());
      MRI_Finalize();
      return 1;
    }
  }
  const int code = final_status(prog[0]);
  MRI_Finalize();
  return code;
}

// A file-size limit (ulimit -f, RLIMIT_FSIZE) must fail the write that
// crosses it, not kill mri: with SIGXFSZ not at its default action,
// write(2) returns EFBIG, and the error path of the output runs (the
// message, status 1, no temporary file left behind). Caught by a handler
// that does nothing rather than ignored: an ignored signal stays ignored
// across the exec of PROGRAM (posix_spawn in libmri), a caught one is reset
// to the default there, so the program keeps the behaviour it has without
// mri.
void survive_file_size_limit() {
  struct sigaction action {};
  action.sa_handler = [](int) {};
  sigemptyset(&action.sa_mask);
  sigaction(SIGXFSZ, &action, nullptr);
}

// A reader of mri's standard output that goes away (`mri profile -- prog |
// head -3`) must not kill mri in the middle of its work: the table is
// printed before the -o file is written and MRI_Finalize() ends the run,
// so a SIGPIPE there lost the file without a word. SIGPIPE is caught by a
// handler that notes it (not ignored: PROGRAM gets its default action back
// at the exec, as for SIGXFSZ), writes to the pipe fail with EPIPE, and
// mri finishes everything else; end_of_output() then dies of SIGPIPE as a
// standard tool would, quietly, with status 141. Left ignored when mri was
// started with it ignored: then EPIPE is reported.
// A standard descriptor that mri was started with closed (`mri ... >&-`)
// is held by a placeholder: otherwise mri's own descriptors (the program's
// pidfd, the -o file) took its number, and the table went into them ("cannot
// write standard output: Invalid argument"). The placeholder is /dev/null
// opened the other way round, so a write to standard output fails as on a
// closed descriptor ("Bad file descriptor"), and close-on-exec, so the
// program starts with the descriptor closed, as it would without mri.
bool g_stdout_was_closed;  // its writes fail with EBADF; errno may say otherwise by the time it is read

void hold_closed_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    if (fd == 1) g_stdout_was_closed = true;
    // open() takes the lowest free number: fd (0..fd-1 are open by now).
    open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
  }
}

volatile sig_atomic_t g_broken_pipe;
bool g_sigpipe_ignored;

void survive_broken_pipe() {
  struct sigaction old {};
  if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) {
    g_sigpipe_ignored = true;
    return;
  }
  struct sigaction action {};
  action.sa_handler = [](int) { g_broken_pipe = 1; };
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPIPE, &action, nullptr);
}

// The end of a command (the program ended, files written, MRI_Finalize()
// done): what could not be written to standard output. A reader that went
// away ends mri by SIGPIPE; any other error is reported, status 1.
int end_of_output(int code) {
  const bool ok = std::fflush(stdout) == 0 && !std::ferror(stdout);
  const int err = g_stdout_was_closed ? EBADF : errno;
  if (ok) return code;
  if (g_broken_pipe && !g_sigpipe_ignored) {
    signal(SIGPIPE, SIG_DFL);
    raise(SIGPIPE);
  }
  std::fprintf(stderr, "mri: cannot write standard output: %s\n", std::strerror(g_broken_pipe ? EPIPE : err));
  return code == 0 ? 1 : code;
}

}  // namespace

int main(int argc, char** argv) {
  // Line by line, also into a file or a pipe: the tables (stdout) and the
  // messages (stderr) then keep their order in `mri ... > log 2>&1`.
  hold_closed_standard_descriptors();
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  survive_file_size_limit();
  survive_broken_pipe();
  if (argc < 2) usage_error("%s", "missing command");
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("mri %d.%d (protocol version %d)\n", MRI_API_VERSION_MAJOR, MRI_API_VERSION_MINOR,
                MRI_Get_Protocol_Version());
    return 0;
  }
  if (cmd == "profile") return end_of_output(cmd_profile(argc - 2, argv + 2));
  if (cmd == "regions") return end_of_output(cmd_regions(argc - 2, argv + 2));
  if (cmd == "hist") return end_of_output(cmd_hist(argc - 2, argv + 2));
  if (cmd == "trace") return end_of_output(cmd_trace(argc - 2, argv + 2));
  if (cmd == "info") {
    for (int k = 2; k < argc; ++k) help_option(argv[k]);
    if (argc > 2) usage_error("info takes no argument: '%s'", argv[2]);
    return end_of_output(cmd_info());
  }
  usage_error("unknown command '%s'", cmd.c_str());
}

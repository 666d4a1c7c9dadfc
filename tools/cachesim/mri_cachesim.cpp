// mri-cachesim - replays a Valgrind lackey memory trace through the cache
// simulator (simulator/) and prints what each level saw. README.md beside
// this file has the options and the output format.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cachesim.h"
#include "config_file.h"

namespace {

using mri::sim::Access;
using mri::sim::EventKind;
using mri::sim::HierarchyConfig;
using mri::sim::LevelConfig;

constexpr int kExitInput = 1;  // unreadable or malformed trace
constexpr int kExitUsage = 2;  // bad command line or configuration

// The longest trace line accepted, in bytes without the new line. A lackey
// line is at most about 30 bytes and Valgrind's messages a few hundred
// (more for a long command line);
// the cap keeps a file without new lines (binary garbage, a wrong file)
// from being gathered into memory as one line without limit.
constexpr size_t kMaxLineBytes = size_t(1) << 20;

const char kUsage[] =
    "usage: mri-cachesim [OPTIONS] [TRACE]\n"
    "Replays the output of `valgrind --tool=lackey --trace-mem=yes` (TRACE, or '-' or\n"
    "nothing for standard input) through a simulated cache hierarchy.\n"
    "\n"
    "  --config STR          hierarchy, e.g. 'L1:32K,8,64;L2:1M,16,64;cores=1'\n"
    "                        (simulator/README.md); '@FILE' reads it from FILE\n"
    "  --config-file FILE    the same as --config @FILE\n"
    "  --I1=SIZE,ASSOC,LINE  instruction L1 (bytes, as cachegrind's --I1)\n"
    "  --D1=SIZE,ASSOC,LINE  replaces L1\n"
    "  --LL=SIZE,ASSOC,LINE  replaces the last level (adds L2 if there is only L1)\n"
    "  --cachegrind-compat   count as Valgrind cachegrind does (keeps L1 and the last\n"
    "                        level only; give --I1 to simulate instruction fetches)\n"
    "  --cores N             simulated cores (the trace's references go to core 0)\n"
    "  --range BEGIN:END     also print a histogram of [BEGIN, END) (hex with 0x, or\n"
    "                        decimal)\n"
    "  --bins N              histogram bins (default 1)\n"
    "  --progress            progress on stderr every 2 s (default when stderr is a\n"
    "                        terminal); --no-progress turns it off\n"
    "  -h, --help            this text\n"
    "Without --config the hierarchy is this machine's (hwloc or sysconf).\n"
    "MRI_CACHESIM_VECTOR=0 searches the cache sets without AVX-512, =1 with it\n"
    "(same results); unset, the faster of the two here (the set_search line).\n"
    "Exit status: 0 done, 1 unreadable or malformed trace, 2 bad command line or\n"
    "environment.\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "mri-cachesim: %s (see --help)\n", message.c_str());
  std::exit(kExitUsage);
}

// "--I1=32768,8,64" -> a level with that geometry, checked on its own in
// a hierarchy of `cores` cores (the final count, so that shared=N is
// checked against it). The value is one level's body: a ';', a new line
// or a '#' would let it carry further config items (or hide a part as a
// comment), which the parser would take and this option would then drop.
LevelConfig parse_geometry(const std::string& option, const std::string& value, uint32_t cores) {
  if (value.find_first_of(";\n#") != std::string::npos)
    usage_error(option + ": expected SIZE,ASSOC,LINE[,OPTION...] of one level, got '" + value +
                "' (give other config items with --config)");
  HierarchyConfig one;
  const std::string error = mri::sim::parse_config("L1:" + value + ";cores=" + std::to_string(cores), one);
  if (!error.empty()) {
    // Messages from parse_config name the level "L1"; name the option instead.
    const std::string reason = error.rfind("L1: ", 0) == 0 ? error.substr(4) : error;
    usage_error(option + ": " + reason + " (expected SIZE,ASSOC,LINE in bytes, got '" + value + "')");
  }
  return one.levels[0];
}

// A plain decimal number or 0x and hexadecimal digits, below 2^64: no
// sign, no spaces (strtoull would take " -1" as 2^64 - 1).
bool parse_address(const std::string& text, uint64_t* out) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* first = text.data() + (hex ? 2 : 0);
  const char* last = text.data() + text.size();
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(first, last, v, hex ? 16 : 10);
  // from_chars reads digits only (an unsigned value takes no sign).
  if (first == last || ec != std::errc() || end != last) return false;
  *out = v;
  return true;
}

// A count: decimal digits only, from 1 to `max` (strtol took " 4" and
// "+4" as 4).
bool parse_count(const std::string& text, uint64_t max, uint32_t* out) {
  uint64_t v = 0;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), last, v);
  if (text.empty() || ec != std::errc() || end != last || v < 1 || v > max) return false;
  *out = uint32_t(v);
  return true;
}

struct Options {
  std::string trace = "-";
  std::string config_text;
  bool have_config = false;
  // --I1, --D1, --LL as given: checked by build_config(), once the core
  // count is known whatever the order of the options.
  std::optional<std::string> i1, d1, ll;
  bool compat = false;
  uint32_t cores = 0;  // 0: from the config
  bool have_range = false;
  uint64_t range_begin = 0, range_end = 0;
  uint32_t bins = 1;
  bool bins_given = false;
  int progress = -1;  // -1: if stderr is a terminal
};

Options parse_options(int argc, char** argv) {
  Options o;
  bool trace_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto take_value = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    auto no_value = [&]() {
      if (has_value) usage_error(arg + " takes no value");
    };
    // An option given twice is an error rather than "the last one wins",
    // which would hide a typo in a long command line (as the config
    // syntax refuses an item given twice).
    auto once = [&](bool given) {
      if (given) usage_error(arg + " given twice");
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--config") {
      if (o.have_config) usage_error("--config given twice");
      o.config_text = take_value();
      o.have_config = true;
    } else if (arg == "--config-file") {
      if (o.have_config) usage_error("--config given twice");
      o.config_text = "@" + take_value();
      o.have_config = true;
    } else if (arg == "--I1") {
      once(o.i1.has_value());
      o.i1 = take_value();
    } else if (arg == "--D1") {
      once(o.d1.has_value());
      o.d1 = take_value();
    } else if (arg == "--LL") {
      once(o.ll.has_value());
      o.ll = take_value();
    } else if (arg == "--cachegrind-compat") {
      no_value();
      o.compat = true;
    } else if (arg == "--cores") {
      once(o.cores != 0);
      const std::string v = take_value();
      if (!parse_count(v, mri::sim::kMaxCores, &o.cores))
        usage_error("--cores: '" + v + "' is not a core count in 1.." + std::to_string(mri::sim::kMaxCores));
    } else if (arg == "--range") {
      once(o.have_range);
      const std::string v = take_value();
      const size_t colon = v.find(':');
      if (colon == std::string::npos || !parse_address(v.substr(0, colon), &o.range_begin) ||
          !parse_address(v.substr(colon + 1), &o.range_end))
        usage_error("--range: expected BEGIN:END (e.g. 0x601040:0x614000), got '" + v + "'");
      if (o.range_end <= o.range_begin) usage_error("--range: END must be above BEGIN in '" + v + "'");
      o.have_range = true;
    } else if (arg == "--bins") {
      once(o.bins_given);
      const std::string v = take_value();
      if (!parse_count(v, 1u << 24, &o.bins)) usage_error("--bins: '" + v + "' is not a bin count in 1..16777216");
      o.bins_given = true;
    } else if (arg == "--progress") {
      no_value();
      o.progress = 1;
    } else if (arg == "--no-progress") {
      no_value();
      o.progress = 0;
    } else if (arg == "-" || arg[0] != '-') {
      if (trace_given) usage_error("more than one trace given ('" + o.trace + "' and '" + arg + "')");
      o.trace = arg;
      trace_given = true;
    } else {
      usage_error("unknown option '" + arg + "'");
    }
  }
  if (o.bins_given && !o.have_range) usage_error("--bins needs --range");
  return o;
}

HierarchyConfig build_config(const Options& o, std::string* source) {
  HierarchyConfig c;
  if (o.have_config) {
    if (std::string e = mri::sim::parse_config_argument(o.config_text, c); !e.empty()) usage_error("--config: " + e);
    *source = "--config";
  } else {
    c = mri::sim::default_config(source);
  }
  if (o.cores) c.cores = o.cores;
  if (o.compat) {
    c.cachegrind_compatible = true;
    c.cores = o.cores ? o.cores : 1;
  }
  // The core count is final here, so a level option's shared=N is checked
  // against it, wherever --cores (or the config's cores=N) stood.
  if (o.compat && c.levels.size() > 2) c.levels.erase(c.levels.begin() + 1, c.levels.end() - 1);
  if (o.d1) c.levels[0] = parse_geometry("--D1", *o.d1, c.cores);
  if (o.ll) {
    const LevelConfig ll = parse_geometry("--LL", *o.ll, c.cores);
    if (c.levels.size() == 1) c.levels.push_back(ll);
    else c.levels.back() = ll;
  }
  if (o.i1) c.instruction_l1 = parse_geometry("--I1", *o.i1, c.cores);
  for (auto [given, name] : {std::pair{o.i1.has_value(), " --I1"}, std::pair{o.d1.has_value(), " --D1"},
                             std::pair{o.ll.has_value(), " --LL"}, std::pair{o.cores != 0, " --cores"}})
    if (given) *source += name;
  // Levels that came from the machine may be shared by "all" cores; with a
  // new core count that stays meaningful. Fixed group sizes may not divide
  // it: validation says so.
  if (std::string e = mri::sim::validate_config(c); !e.empty()) usage_error("configuration: " + e);
  return c;
}

// A configuration can pass validation and still be too large for this
// machine's memory (an L1 of 1024G needs 128 GiB of tags): the library
// then says so when it builds the caches (and add_monitor() when a
// range's bins do not fit); this message adds the configuration.
[[noreturn]] void cannot_allocate(const HierarchyConfig& c) {
  std::fprintf(stderr, "mri-cachesim: cannot allocate the simulated caches (%" PRIu64 " bytes of tags for %s)\n",
               mri::sim::tag_bytes(c), mri::sim::format_config(c).c_str());
  std::exit(kExitUsage);
}

void print_level(const char* name, const mri::sim::LevelCounters& c, bool fetches) {
  std::printf("%s: reads=%" PRIu64 " read_misses=%" PRIu64 " writes=%" PRIu64 " write_misses=%" PRIu64, name,
              c.reads(), c.read_misses, c.writes(), c.write_misses);
  if (fetches) std::printf(" fetches=%" PRIu64 " fetch_misses=%" PRIu64, c.fetches(), c.fetch_misses);
  std::printf(" write_backs=%" PRIu64 " invalidations=%" PRIu64 "\n", c.write_backs, c.invalidations);
}

class Progress {
 public:
  explicit Progress(bool on) : on_(on), tty_(isatty(STDERR_FILENO)), start_(Clock::now()), last_(start_) {}
  void maybe_report(uint64_t lines, uint64_t refs) {
    if (!on_) return;
    const auto now = Clock::now();
    if (now - last_ < std::chrono::seconds(2)) return;
    last_ = now;
    const double secs = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "%smri-cachesim: %.1fM lines, %.1fM references, %.1fM references/s%s",
                 tty_ ? "\r" : "", lines / 1e6, refs / 1e6, refs / 1e6 / secs, tty_ ? "" : "\n");
    std::fflush(stderr);
    printed_ = true;
  }
  void finish() {
    if (on_ && printed_ && tty_) std::fputc('\n', stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool on_, tty_, printed_ = false;
  Clock::time_point start_, last_;
};

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_options(argc, argv);
  if (const std::string e = mri::sim::Hierarchy::vector_setting_error(); !e.empty()) {
    std::fprintf(stderr, "mri-cachesim: %s\n", e.c_str());
    return 2;
  }
  std::string source;
  const HierarchyConfig config = build_config(opt, &source);
  std::string error;
  const std::unique_ptr<mri::sim::Hierarchy> sim = mri::sim::Hierarchy::create(config, &error);
  if (!sim && error.rfind("cannot allocate", 0) == 0) cannot_allocate(config);
  if (!sim) usage_error("configuration: " + error);

  int monitor = -1;
  if (opt.have_range) {
    mri::sim::MonitorSpec spec;
    spec.begin = opt.range_begin;
    spec.end = opt.range_end;
    // Bins are ceil(size / N) bytes, so fewer than N of them may cover the
    // range (100 bytes in 40 bins of 3 bytes take 34); the rest would be
    // empty, past END. Ask for the bins that cover it, so that the header's
    // bins= is the number of bin lines printed. (More bins than bytes stay
    // as asked: add_monitor() refuses them.)
    const uint64_t span = opt.range_end - opt.range_begin;
    const uint64_t bin_bytes = span / opt.bins + (span % opt.bins != 0);
    spec.bins = opt.bins > span ? opt.bins : uint32_t(span / bin_bytes + (span % bin_bytes != 0));
    if (spec.bins < opt.bins)
      std::fprintf(stderr, "mri-cachesim: note: --bins %u: bins of %" PRIu64 " bytes cover the range in %u bins\n",
                   opt.bins, bin_bytes, spec.bins);
    for (uint32_t level = 0; level < sim->levels(); ++level)
      for (uint32_t kind = 0; kind < mri::sim::kEventKinds; ++kind)
        spec.events.push_back({uint8_t(level), EventKind(kind)});
    monitor = sim->add_monitor(spec, &error);
    if (monitor < 0) usage_error("--range: " + error);
  }

  FILE* in = stdin;
  const bool from_stdin = opt.trace == "-";
  const std::string trace_name = from_stdin ? "<stdin>" : opt.trace;
  if (!from_stdin) {
    in = std::fopen(opt.trace.c_str(), "rb");
    if (!in) {
      std::fprintf(stderr, "mri-cachesim: cannot open '%s': %s\n", opt.trace.c_str(), std::strerror(errno));
      return kExitInput;
    }
  }
  if (opt.compat && !config.instruction_l1)
    std::fprintf(stderr,
                 "mri-cachesim: note: no I1 given: instruction fetches are counted but not simulated, so the\n"
                 "  last level does not see them (cachegrind's LL does); give --I1 to match cachegrind\n");

  Progress progress(opt.progress == 1 || (opt.progress == -1 && isatty(STDERR_FILENO)));
  constexpr size_t kBatch = 8192;
  std::vector<Access> batch(kBatch);
  size_t used = 0;
  uint64_t line_number = 0, references = 0;
  std::vector<char> buffer(1 << 20);
  std::string partial;  // a line cut by the end of a read
  auto line_error = [&](const std::string& reason) {
    std::fprintf(stderr, "mri-cachesim: %s:%" PRIu64 ": %s\n", trace_name.c_str(), line_number, reason.c_str());
    std::exit(kExitInput);
  };
  // Called with the line's length so far (the whole line, or a part still
  // waiting for its new line): refuses it once it is past the cap.
  auto check_length = [&](size_t bytes) {
    if (bytes <= kMaxLineBytes) return;
    ++line_number;
    line_error("line longer than " + std::to_string(kMaxLineBytes) + " bytes (not a lackey trace?)");
  };
  auto handle_line = [&](std::string_view line) {
    ++line_number;
    int r = mri::sim::parse_lackey_line(line, &batch[used], &error);
    // No program makes an access past 2^64 - 1 (the simulator would end it
    // at the top of the address space): such a line is malformed.
    if (r == 1 && batch[used].size - 1 > UINT64_MAX - batch[used].addr) {
      char text[96];
      std::snprintf(text, sizeof text, "access of %u bytes at 0x%" PRIx64 " runs past the end of the address space",
                    unsigned(batch[used].size), batch[used].addr);
      error = text;
      r = -1;
    }
    if (r < 0) line_error(error);
    if (r == 1 && ++used == kBatch) {
      sim->simulate(0, batch.data(), used);
      references += used;
      used = 0;
      if ((references & ((1u << 20) - 1)) < kBatch) progress.maybe_report(line_number, references);
    }
  };
  for (;;) {
    const size_t got = std::fread(buffer.data(), 1, buffer.size(), in);
    if (got == 0) break;
    size_t start = 0;
    for (size_t i = 0; i < got; ++i) {
      if (buffer[i] != '\n') continue;
      check_length(partial.size() + (i - start));
      if (!partial.empty()) {
        partial.append(buffer.data() + start, i - start);
        handle_line(partial);
        partial.clear();
      } else {
        handle_line(std::string_view(buffer.data() + start, i - start));
      }
      start = i + 1;
    }
    check_length(partial.size() + (got - start));
    partial.append(buffer.data() + start, got - start);
  }
  if (std::ferror(in)) {
    std::fprintf(stderr, "mri-cachesim: reading '%s': %s\n", trace_name.c_str(), std::strerror(errno));
    return kExitInput;
  }
  if (!partial.empty()) handle_line(partial);
  if (used) sim->simulate(0, batch.data(), used);
  references += used;
  progress.finish();
  if (!from_stdin) std::fclose(in);
  // All zeros look like a result; an empty trace is more often a mistake
  // (a redirection that sent lackey's log elsewhere).
  if (references == 0)
    std::fprintf(stderr, "mri-cachesim: warning: the trace holds no reference (is it lackey's log, "
                 "--trace-mem=yes, sent to this input?): every count below is 0\n");

  // ---- summary
  std::printf("config: %s\n", mri::sim::format_config(config).c_str());
  std::printf("config_source: %s\n", source.c_str());
  std::printf("set_search: %s\n", mri::sim::Hierarchy::set_search_description().c_str());
  const mri::sim::ReferenceCounts refs = sim->total_references();
  std::printf("references: total=%" PRIu64 " instructions=%" PRIu64 " reads=%" PRIu64 " writes=%" PRIu64
              " modifies=%" PRIu64 "\n",
              refs.total(), refs.instructions, refs.reads, refs.writes, refs.modifies);
  const bool has_i1 = config.instruction_l1.has_value();
  if (has_i1) {
    const mri::sim::LevelCounters i1 = sim->instruction_counters(0);
    std::printf("I1: fetches=%" PRIu64 " fetch_misses=%" PRIu64 "\n", i1.fetches(), i1.fetch_misses);
  }
  for (uint32_t level = 0; level < sim->levels(); ++level) {
    const std::string name = "L" + std::to_string(level + 1);
    print_level(name.c_str(), sim->total_counters(level), has_i1 && level > 0);
  }
  // The same numbers under cachegrind's names: D1 = L1, LL = the last level.
  const mri::sim::LevelCounters d1 = sim->total_counters(0);
  const mri::sim::LevelCounters ll = sim->total_counters(sim->levels() - 1);
  const mri::sim::LevelCounters i1 = sim->instruction_counters(0);
  const uint64_t il_misses = sim->levels() > 1 ? ll.fetch_misses : i1.fetch_misses;
  std::printf("events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n");
  std::printf("summary: %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
              " %" PRIu64 " %" PRIu64 "\n",
              refs.instructions, i1.fetch_misses, il_misses, d1.reads(), d1.read_misses, ll.read_misses,
              d1.writes(), d1.write_misses, ll.write_misses);

  if (monitor >= 0) {
    mri::sim::MonitorResult result;
    sim->monitor_result(monitor, &result);
    std::printf("histogram: range=0x%" PRIx64 ":0x%" PRIx64 " bins=%u bin_bytes=%" PRIu64 "\n", opt.range_begin,
                opt.range_end, result.bins, result.bin_bytes);
    std::printf("bin begin end");
    for (const mri::sim::Event& e : result.events)
      std::printf(" L%u.%s", unsigned(e.level) + 1, mri::sim::event_kind_name(e.kind));
    std::printf("\n");
    // Offsets from BEGIN, never above END - BEGIN, so that no bound wraps
    // past 2^64 (a range that ends at 0xffffffffffffffff).
    const uint64_t span = opt.range_end - opt.range_begin;
    for (uint32_t b = 0; b < result.bins; ++b) {
      const uint64_t offset = uint64_t(b) * result.bin_bytes;
      const uint64_t width = result.bins == 1 ? span : std::min(result.bin_bytes, span - offset);
      const uint64_t begin = opt.range_begin + offset;
      std::printf("%u 0x%" PRIx64 " 0x%" PRIx64, b, begin, begin + width);
      for (size_t e = 0; e < result.events.size(); ++e) std::printf(" %" PRIu64, result.count(b, e));
      std::printf("\n");
    }
    std::printf("total - -");
    for (uint64_t t : result.totals) std::printf(" %" PRIu64, t);
    std::printf("\n");
  }
  if (std::fflush(stdout) != 0) {
    std::fprintf(stderr, "mri-cachesim: writing the summary: %s\n", std::strerror(errno));
    return kExitInput;
  }
  return 0;
}

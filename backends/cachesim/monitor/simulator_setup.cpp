// simulator_setup.cpp - the simulator, made at the first release with a
// cache request from the tool's configuration (or this machine's caches),
// and how it is split between the program's threads and the simulation
// thread (MRI_CACHESIM_SPLIT).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "cache_internal.h"
#include "cachesim.h"
#include "services.h"

namespace mri::monitor::cachesim {
namespace {

std::string* g_sim_error = nullptr;  // why it could not be created (control thread)

// With the simulation thread, the simulator can be split in two parts
// (simulator/cachesim.h, split_reason): part 0, the lines that are 0
// modulo the modulus, is then simulated by the program's threads, the rest
// by the simulation thread at the same time (cache_worker.cpp).
// MRI_CACHESIM_SPLIT:
//   - auto (the default): split by 4 while that pays, as measured over
//     windows of batches (cache_worker.cpp, decide_split); the monitor
//     sorts each batch by part as it hands it over. A program whose
//     simulation takes longer than its own work gains (the C-monitored ijk
//     multiply of bench/matmul.c: 4.9x native against 5.6x never split,
//     bash bench/run_cachesim_slowdown.sh, docs/PERFORMANCE.md); one whose
//     own work dominates stays joined, but for trials, which cost it
//     (is_sort 5-27% and tree_walk 5-17% slower under the simulator,
//     bench/compensation; docs/design/0009-split-by-cache-line.md).
//   - N, a power of two up to 64: split from the start, the program's
//     threads simulating 1/N of the lines; the instrumentation's callbacks
//     sort the references as they record them (backend version 3): about
//     0.2 ns more per reference recorded, against 0.6-0.7 ns for the sort
//     at the hand-over, but the latter is timed and removed like the
//     simulation where recording is only calibrated (0009, "Sorting at
//     the hand-over"). The inline recording (the plugin) does not sort
//     (1.5 ns a reference): the monitor does, at the hand-over.
//   - 0 or 1: never split.
// libmri refuses other values. `how` receives the end of cache_info.
constexpr uint32_t kAutoModulus = 4;

// Whether the instrumentation offers to sort references by part as it
// records them (backend version 3 with `split`). Where it does not (an
// older backend, or one whose recording is inlined into the program), a
// split simulator gets every reference in part 0 and the monitor sorts
// each batch as it hands it over (cache_worker.cpp).
bool backend_sorts() {
  const Monitor_Cache_Backend* b = g_backend.load(std::memory_order_acquire);
  return b && b->version >= 3 && b->split;
}

struct Split {
  uint32_t modulus = 0;   // 0: not split
  bool deferred = false;  // split later (auto), sorted by the monitor
};

Split split_of(const sim::HierarchyConfig& config, bool async, std::string* how) {
  *how = async ? "; simulated by a thread of its own" : "";
  if (!async) return {};
  const char* env = std::getenv("MRI_CACHESIM_SPLIT");
  const bool automatic = !env || !*env || std::strcmp(env, "auto") == 0;
  uint32_t modulus = kAutoModulus;
  if (!automatic) {
    char* end = nullptr;
    const unsigned long m = std::strtoul(env, &end, 10);
    modulus = end != env && *end == '\0' && m <= 64 ? uint32_t(m) : 0;
  }
  if (modulus <= 1) return {};
  std::string why;
  if (!automatic && backend_sorts() && config.levels[0].line_bytes < 16)
    // The instrumentation takes an access aligned to its size (up to 16
    // bytes) to lie within one line.
    why = "lines of " + std::to_string(config.levels[0].line_bytes) + " bytes are shorter than an access can be (16)";
  else
    why = sim::split_reason(config, modulus);
  if (!why.empty()) {
    *how = "; simulated by a thread of its own, not split: " + why;
    return {};
  }
  const std::string share = "the program's threads simulate 1/" + std::to_string(modulus) + " of the lines";
  const std::string sorted = backend_sorts() ? "" : " (the references sorted by part as they are handed over)";
  *how = automatic ? "; simulated by a thread of its own, split by line while that pays: then " + share
                   : "; simulated by a thread of its own, split: " + share + sorted;
  return {modulus, automatic};
}

}  // namespace

sim::Hierarchy* simulator() {
  if (sim::Hierarchy* h = g_sim.load(std::memory_order_relaxed)) return h;
  if (g_sim_error) return nullptr;
  char text[proto::kCacheConfigBytes];
  std::memcpy(text, segment().cache_config(), sizeof text);  // one fetch: the tool could change it
  sim::HierarchyConfig config;
  std::string source = "the tool's configuration", error;
  if (strnlen(text, sizeof text) == sizeof text) {
    error = "the configuration text in the segment is not terminated";
  } else if (text[0] == '\0') {
    config = sim::default_config(&source);
    source = "this machine's caches (" + source + ")";
  } else if (text[0] == '@') {
    // A file name: the program opens no path from the segment (a FIFO
    // would block this thread, /dev/zero exhaust its memory). The tool
    // reads the file and sends its configuration (protocol version 12).
    error = "the tool's configuration text starts with '@' (a file name); the program reads no file the tool "
            "names, the tool sends the configuration itself";
  } else {
    error = sim::parse_config(text, config);
  }
  if (!error.empty()) {
    g_sim_error = new std::string(error);
    return nullptr;
  }
  const bool async = cache_start_worker();
  std::string how;
  const Split split = split_of(config, async, &how);
  std::unique_ptr<sim::Hierarchy> h = sim::Hierarchy::create(config, &error, split.modulus, split.deferred);
  if (!h) {
    g_sim_error = new std::string(error);
    return nullptr;
  }
  if (h->parts() > 1 && !split.deferred && backend_sorts()) {
    // Before recording starts (set_recording), and never again.
    Monitor_Cache_Split* to = g_backend.load(std::memory_order_acquire)->split;
    to->shift = h->split_shift();
    to->mask = h->split_mask();
    to->address_bits = h->split_mask() << h->split_shift();
    g_backend_sorts = true;
  }
  std::snprintf(segment().cache_info(), proto::kCacheConfigBytes, "%s (%s%s; %s)", sim::format_config(config).c_str(),
                source.c_str(), how.c_str(), sim::Hierarchy::set_search_description().c_str());
  g_sim.store(h.release(), std::memory_order_release);
  return g_sim.load(std::memory_order_relaxed);
}

const char* simulator_error() { return g_sim_error ? g_sim_error->c_str() : ""; }

}  // namespace mri::monitor::cachesim

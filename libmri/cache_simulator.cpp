// cache_simulator.cpp - the tool side of simulated cache events: the
// cache events the application's simulator measures, and the simulator
// configuration (MRI_Set_Cache_Configuration, MRI_CACHESIM_CONFIG),
// validated with simulator/'s parser before the load.
#include "cache_simulator.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cachesim.h"
#include "config_file.h"
#include "error.h"
#include "mri.h"
#include "mri_sync.h"

namespace mri::tool {
namespace {

struct CacheEvent {
  int ri;
  uint32_t level;  // 0 = L1
  sim::EventKind kind;
  bool hit;
};

constexpr CacheEvent kCacheEvents[] = {
    {MRI_LC1_DATA_READ_MISS, 0, sim::EventKind::kReadMiss, false},
    {MRI_LC1_DATA_WRITE_MISS, 0, sim::EventKind::kWriteMiss, false},
    {MRI_LC2_DATA_READ_MISS, 1, sim::EventKind::kReadMiss, false},
    {MRI_LC2_DATA_WRITE_MISS, 1, sim::EventKind::kWriteMiss, false},
    {MRI_LC3_DATA_READ_MISS, 2, sim::EventKind::kReadMiss, false},
    {MRI_LC3_DATA_WRITE_MISS, 2, sim::EventKind::kWriteMiss, false},
    {MRI_LC1_DATA_READ_HIT, 0, sim::EventKind::kReadHit, true},
    {MRI_LC1_DATA_WRITE_HIT, 0, sim::EventKind::kWriteHit, true},
    {MRI_LC2_DATA_READ_HIT, 1, sim::EventKind::kReadHit, true},
    {MRI_LC2_DATA_WRITE_HIT, 1, sim::EventKind::kWriteHit, true},
    {MRI_LC3_DATA_READ_HIT, 2, sim::EventKind::kReadHit, true},
    {MRI_LC3_DATA_WRITE_HIT, 2, sim::EventKind::kWriteHit, true},
};

const CacheEvent* find_cache_event(int ri) {
  for (const auto& e : kCacheEvents)
    if (e.ri == ri) return &e;
  return nullptr;
}

}  // namespace

bool is_cache_event(int ri) { return find_cache_event(ri) != nullptr; }

uint32_t cache_event_code(int ri) {
  const CacheEvent* e = find_cache_event(ri);
  return e ? e->level * 8 + uint32_t(e->kind) : 0;
}

bool application_has_cache_simulator(const Session& s) {
  return s.loaded && s.view.base && sync::load(s.view.header()->app.cache_backend) == 1;
}

int check_cache_request(Session& s, Request& r, bool has_data_structure) {
  const CacheEvent* e = find_cache_event(raw(r.ri));
  const char* name = MRI_Runtime_Information_Name(r.ri);
  if (!e) return fail("a data structure restricts only cache events (LCn_DATA_..._MISS or _HIT); %s has no address", name);
  if (!application_has_cache_simulator(s)) {
    const char* what = has_data_structure              ? "restricting it to a data structure"
                       : e->hit                        ? "counting hits"
                       : r.kind == MRI_HISTOGRAM_REQUEST ? "a histogram over addresses"
                                                       : nullptr;
    if (!what) return MRI_OK;  // misses from PAPI, as before
    return fail("%s: %s needs the cache-simulator backend, and this application is not built with it "
                "(build it with mri_add_instrumented_executable, docs/user-guide.md)", name, what);
  }
  r.simulated = true;
  r.cache_event = e->level * 8 + uint32_t(e->kind);
  return MRI_OK;
}

// The text the application gets for a configuration as the user gave it
// (`given`): itself, or for "@FILE" the canonical text of the file's
// configuration (sim::format_config: comments and all left out, so that
// it fits the segment), read here, bounded. The application never gets a
// file name: it reads no file named in the segment (protocol version 12).
// MRI_OK, or MRI_Error with `origin` and the reason.
static int segment_text_of(const std::string& given, const char* origin, std::string& text) {
  if (given.empty()) {
    text.clear();
    return MRI_OK;
  }
  if (given[0] != '@' && given.size() >= proto::kCacheConfigBytes)
    return fail("%s is longer than %u characters", origin, proto::kCacheConfigBytes - 1);
  sim::HierarchyConfig parsed;
  const std::string error = sim::parse_config_argument(given, parsed);
  if (!error.empty()) return fail("%s \"%s\": %s", origin, given.c_str(), error.c_str());
  std::string out = given[0] == '@' ? sim::format_config(parsed) : given;
  if (out.size() >= proto::kCacheConfigBytes)  // 9 canonical levels take about 450
    return fail("%s \"%s\": the configuration is longer than %u characters", origin, given.c_str(),
                proto::kCacheConfigBytes - 1);
  text = std::move(out);
  return MRI_OK;
}

int cache_configuration_for_load(const Session& s, std::string& text) {
  const char* env = std::getenv("MRI_CACHESIM_CONFIG");
  if (s.cache_config_set) {
    text = s.cache_config;  // resolved and checked by MRI_Set_Cache_Configuration
  } else if (segment_text_of(env ? env : "", "MRI_CACHESIM_CONFIG", text) != MRI_OK) {
    return MRI_Error;
  }
  // Read by the application (backends/cachesim/monitor/cache_worker.cpp), which inherits
  // this environment; a value it would not understand is refused here.
  const char* async = std::getenv("MRI_CACHESIM_ASYNC");
  if (async && *async && std::strcmp(async, "0") != 0 && std::strcmp(async, "1") != 0)
    return fail("MRI_CACHESIM_ASYNC=\"%s\": 0 (simulate in the program's threads) or 1 (on a thread of its own)", async);
  if (const char* split = std::getenv("MRI_CACHESIM_SPLIT"); split && *split && std::strcmp(split, "auto") != 0) {
    char* end = nullptr;
    const unsigned long m = std::strtoul(split, &end, 10);
    if (*end != '\0' || !std::isdigit(static_cast<unsigned char>(*split)) || m > 64 || (m > 1 && (m & (m - 1)) != 0))
      return fail("MRI_CACHESIM_SPLIT=\"%s\": 0 or 1 (do not split the simulation), a power of two up to 64 "
                  "(the program's threads simulate 1/N of the lines), or auto (1/4 while that pays, as measured)",
                  split);
  }
  if (const char* after = std::getenv("MRI_CACHESIM_SPLIT_AFTER"); after && *after) {
    char* end = nullptr;
    const unsigned long k = std::strtoul(after, &end, 10);
    if (*end != '\0' || !std::isdigit(static_cast<unsigned char>(*after)) || k > 1000000)
      return fail("MRI_CACHESIM_SPLIT_AFTER=\"%s\": a number of hand-overs from 0 to 1000000", after);
  }
  if (const char* c = std::getenv("MRI_CACHESIM_CONDENSE");
      c && *c && std::strcmp(c, "0") != 0 && std::strcmp(c, "1") != 0 && std::strcmp(c, "auto") != 0)
    return fail("MRI_CACHESIM_CONDENSE=\"%s\": 0 (never), 1 (every batch handed to the simulation thread) or auto "
                "(while that thread is behind: the default)",
                c);
  if (const std::string e = sim::Hierarchy::vector_setting_error(); !e.empty()) return fail("%s", e.c_str());
  const char* log = std::getenv("MRI_CACHESIM_SPLIT_LOG");
  if (log && *log && std::strcmp(log, "0") != 0 && std::strcmp(log, "1") != 0)
    return fail("MRI_CACHESIM_SPLIT_LOG=\"%s\": 0 (quiet) or 1 (a line on the program's stderr for each window of "
                "the automatic split)", log);
  return MRI_OK;
}

int set_cache_configuration(Session& s, const char* config) {
  const std::string given = config ? config : "";
  std::string text;
  if (segment_text_of(given, "cache configuration", text) != MRI_OK) return MRI_Error;
  s.cache_config = text;
  s.cache_config_set = true;
  clear_error();
  return MRI_OK;
}

int cache_configuration_text(const Session& s, char* text, int bytes) {
  const char* info = s.view.cache_info();
  const size_t len = strnlen(info, proto::kCacheConfigBytes - 1);  // the application may not terminate it
  const size_t n = std::min(len, size_t(bytes - 1));
  std::memcpy(text, info, n);
  text[n] = '\0';
  clear_error();
  return MRI_OK;
}

}  // namespace mri::tool

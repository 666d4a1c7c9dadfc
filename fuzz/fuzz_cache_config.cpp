// The cache configuration parser (simulator/config.cpp, parse_config) on
// arbitrary text: what the application runs on the configuration its tool
// wrote into the segment (backends/cachesim/monitor/simulator_setup.cpp),
// and the tool on what its user gave. Every text is either refused with a one-line reason or
// accepted as a valid configuration whose canonical text (format_config)
// reads back to the same configuration; what the application computes
// from an accepted one (tag bytes, whether it can be split) must not fail.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cachesim.h"

namespace {

[[noreturn]] void broken(const char* what, std::string_view text) {
  std::fprintf(stderr, "cache configuration invariant broken: %s\non text: '%.*s'\n", what, int(text.size()),
               text.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mri::sim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  HierarchyConfig config;
  const std::string error = parse_config(text, config);
  if (!error.empty()) {
    if (error.find('\n') != std::string::npos) broken("a reason of more than one line", text);
    return 0;
  }
  if (!validate_config(config).empty()) broken("an accepted configuration that does not validate", text);
  const std::string canonical = format_config(config);
  HierarchyConfig again;
  if (!parse_config(canonical, again).empty()) broken("the canonical text does not parse", text);
  if (format_config(again) != canonical) broken("the canonical text reads back to another configuration", text);
  // One 8-byte tag per line of every cache instance: the sum must fit
  // (tag_bytes' contract for a validated configuration).
  unsigned __int128 tags = 0;
  auto level = [&](const LevelConfig& l) {
    const uint32_t sharing = l.shared_by == 0 ? config.cores : l.shared_by;
    tags += (unsigned __int128)(config.cores / sharing) * (l.size_bytes / l.line_bytes) * 8;
  };
  for (const LevelConfig& l : config.levels) level(l);
  if (config.instruction_l1) level(*config.instruction_l1);
  if (tags != tag_bytes(config)) broken("tag_bytes wraps", text);
  for (uint32_t modulus = 0; modulus <= 64; modulus = modulus ? modulus * 2 : 1) (void)split_reason(config, modulus);
  return 0;
}

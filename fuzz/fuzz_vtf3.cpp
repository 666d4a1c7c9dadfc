// The VTF3 reader (tools/exporters/vtf3_reader.cpp, parse_vtf3: what
// read_vtf3 runs on a file's contents) on arbitrary text, and what a
// converter does next with a trace it accepted (build_profile, the
// callgrind profile of its enters and leaves). A refusal names a line and
// leaves nothing behind; an accepted trace refers only to what it defined.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "mri_export.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mri::exporters;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  TraceDefinitions defs;
  std::vector<TraceEvent> events;
  std::string error;
  if (!parse_vtf3(text, "in.vtf", defs, events, error)) {
    CHECK(error.rfind("in.vtf:", 0) == 0);
    CHECK(events.empty() && defs.locations.empty() && defs.regions.empty() && defs.metrics.empty());
    return 0;
  }
  auto has = [](const auto& table, uint32_t id) {
    return std::any_of(table.begin(), table.end(), [id](const auto& d) { return d.id == id; });
  };
  uint64_t time = 0;
  for (const TraceEvent& e : events) {
    CHECK(e.timestamp >= time);
    time = e.timestamp;
    CHECK(has(defs.locations, e.location));
    if (e.kind == EventKind::Metric)
      CHECK(has(defs.metrics, e.metric));
    else
      CHECK(has(defs.regions, e.region));
  }
  Profile profile;
  if (build_profile(defs, events, profile, error)) {
    for (const ProfileFunction& f : profile.functions) CHECK(f.self.size() == profile.events.size());
    for (const ProfileCall& c : profile.calls) CHECK(c.inclusive.size() == profile.events.size() && c.calls > 0);
  }
  return 0;
}

// Format selection and the trace-to-profile reduction.
#include <algorithm>
#include <cctype>
#include <map>

#include "definitions.h"
#include "mri_export.h"

namespace mri::exporters {

TraceWriter::~TraceWriter() = default;

TraceFormat trace_format_for_path(const std::string& path) {
  const std::string suffix = ".otf2";
  if (path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return TraceFormat::Otf2;
  }
  return TraceFormat::Vtf3;
}

bool parse_trace_format(const std::string& name, TraceFormat& format) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "vtf3") {
    format = TraceFormat::Vtf3;
    return true;
  }
  if (lower == "otf2") {
    format = TraceFormat::Otf2;
    return true;
  }
  return false;
}

std::unique_ptr<TraceWriter> make_trace_writer(TraceFormat format) {
  return format == TraceFormat::Otf2 ? make_otf2_writer() : make_vtf3_writer();
}

namespace {

struct Frame {
  uint32_t region;
  uint64_t enter;           // ticks
  uint64_t children = 0;    // ticks spent in completed child instances
  uint64_t instances = 1;   // this instance and every instance below it
};

struct EdgeCost {
  uint64_t calls = 0;
  uint64_t ticks = 0;
  uint64_t instances = 0;
};

uint64_t ticks_to_ns(uint64_t ticks, uint64_t resolution) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(ticks) * 1'000'000'000u / resolution);
}

}  // namespace

bool build_profile(const TraceDefinitions& defs, const std::vector<TraceEvent>& events, Profile& profile,
                   std::string& error) {
  detail::DefinitionSet table;
  if (!table.reset(defs, error)) return false;
  detail::EventChecker checker;
  if (!checker.accept(table, events.data(), events.size(), error)) return false;

  std::vector<std::vector<Frame>> stacks(table.locations().size());
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> self;  // region -> (ticks, instances)
  std::map<std::pair<uint32_t, uint32_t>, EdgeCost> edges;  // (caller, callee)
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    std::vector<Frame>& stack = stacks[e.location];
    if (e.kind == EventKind::Enter) {
      stack.push_back(Frame{e.region, e.timestamp});
    } else if (e.kind == EventKind::Leave) {
      if (stack.empty()) continue;  // the trace began inside this region
      Frame done = stack.back();
      if (done.region != e.region) {
        error = "event " + std::to_string(i) + ": leave of region " + std::to_string(e.region) + " on location " +
                std::to_string(e.location) + " while region " + std::to_string(done.region) + " is the innermost open one";
        return false;
      }
      stack.pop_back();
      const uint64_t duration = e.timestamp - done.enter;
      auto& [self_ticks, instances] = self[done.region];
      self_ticks += duration - std::min(duration, done.children);
      instances += 1;
      const uint32_t caller = stack.empty() ? kNoCaller : stack.back().region;
      EdgeCost& edge = edges[{caller, done.region}];
      edge.calls += 1;
      edge.ticks += duration;
      edge.instances += done.instances;
      if (!stack.empty()) {
        stack.back().children += duration;
        stack.back().instances += done.instances;
      }
    }
  }

  const uint64_t resolution = table.timer_resolution();
  profile = Profile{};
  profile.program = defs.program;
  profile.events = {"Time_ns", "Instances"};
  profile.event_descriptions = {"Execution time (ns)", "Region instances"};
  for (const auto& r : table.regions())
    if (r) profile.regions.push_back(*r);
  for (const auto& [region, cost] : self) {
    profile.functions.push_back(ProfileFunction{region, {ticks_to_ns(cost.first, resolution), cost.second}});
  }
  for (const auto& [key, cost] : edges) {
    profile.calls.push_back(ProfileCall{key.first, key.second, cost.calls,
                                        {ticks_to_ns(cost.ticks, resolution), cost.instances}});
  }
  return true;
}

}  // namespace mri::exporters

#include "definitions.h"

namespace mri::exporters::detail {

namespace {

// Puts `value` at slot `id`; an identical value already there is fine, a
// different one is a conflict.
template <typename T, typename Same>
bool store(std::vector<std::optional<T>>& table, const T& value, const char* what, Same same, std::string& error) {
  if (value.id >= kMaxDefinitionId) {
    error = std::string(what) + " id " + std::to_string(value.id) + " is too large (limit " +
            std::to_string(kMaxDefinitionId - 1) + ")";
    return false;
  }
  if (value.id >= table.size()) table.resize(value.id + 1);
  auto& slot = table[value.id];
  if (slot.has_value()) {
    if (same(*slot, value)) return true;
    error = std::string(what) + " " + std::to_string(value.id) + " is already defined differently";
    return false;
  }
  slot = value;
  return true;
}

}  // namespace

const char* event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::Enter: return "Enter";
    case EventKind::Leave: return "Leave";
    case EventKind::Metric: return "Metric";
  }
  return "invalid kind";
}

bool DefinitionSet::reset(const TraceDefinitions& defs, std::string& error) {
  if (defs.timer_resolution == 0) {
    error = "timer_resolution must be at least 1 tick per second";
    return false;
  }
  program_ = defs.program;
  timer_resolution_ = defs.timer_resolution;
  locations_.clear();
  regions_.clear();
  metrics_.clear();
  for (const Location& l : defs.locations)
    if (!add_location(l, error)) return false;
  for (const Region& r : defs.regions)
    if (!add_region(r, error)) return false;
  for (const MetricDefinition& m : defs.metrics)
    if (!add_metric(m, error)) return false;
  return true;
}

bool DefinitionSet::add_location(const Location& location, std::string& error) {
  return store(locations_, location, "location",
               [](const Location& a, const Location& b) { return a.name == b.name && a.os_tid == b.os_tid; }, error);
}

bool DefinitionSet::add_region(const Region& region, std::string& error) {
  return store(regions_, region, "region",
               [](const Region& a, const Region& b) {
                 return a.name == b.name && a.file == b.file && a.line == b.line && a.kind == b.kind;
               },
               error);
}

bool DefinitionSet::add_metric(const MetricDefinition& metric, std::string& error) {
  if (metric.name.empty()) {
    error = "metric " + std::to_string(metric.id) + " has no name";
    return false;
  }
  return store(metrics_, metric, "metric",
               [](const MetricDefinition& a, const MetricDefinition& b) { return a.name == b.name && a.unit == b.unit; },
               error);
}

bool EventChecker::accept(const DefinitionSet& defs, const TraceEvent* events, size_t n, std::string& error) {
  if (n > 0 && events == nullptr) {
    error = "no events given (null pointer)";
    return false;
  }
  const size_t location_slots = defs.locations().size();
  if (last_ts_of_.size() < location_slots) {
    last_ts_of_.resize(location_slots, 0);
    counts_.resize(location_slots, 0);
    pending_.resize(location_slots, 0);
    pending_counts_.resize(location_slots, 0);
  }
  touched_.clear();
  bool ok = true;
  uint64_t batch_first = UINT64_MAX;
  uint64_t batch_last = 0;
  for (size_t i = 0; i < n; ++i) {
    const TraceEvent& e = events[i];
    auto describe = [&] {
      return "event " + std::to_string(i) + " of the batch (" + event_kind_name(e.kind) + ", location " +
             std::to_string(e.location) + ", timestamp " + std::to_string(e.timestamp) + "): ";
    };
    if (!defs.has_location(e.location)) {
      error = describe() + "location " + std::to_string(e.location) + " is not defined (add_location first)";
      ok = false;
      break;
    }
    if (e.kind == EventKind::Enter || e.kind == EventKind::Leave) {
      if (!defs.has_region(e.region)) {
        error = describe() + "region " + std::to_string(e.region) + " is not defined (add_region first)";
        ok = false;
        break;
      }
    } else if (e.kind == EventKind::Metric) {
      if (!defs.has_metric(e.metric)) {
        error = describe() + "metric " + std::to_string(e.metric) + " is not defined (add_metric first)";
        ok = false;
        break;
      }
    } else {
      error = describe() + "unknown event kind " + std::to_string(static_cast<unsigned>(e.kind));
      ok = false;
      break;
    }
    const uint32_t loc = e.location;
    if (pending_counts_[loc] == 0) {
      pending_[loc] = last_ts_of_[loc];
      touched_.push_back(loc);
    }
    if (e.timestamp < pending_[loc]) {
      error = describe() + "timestamp goes back in time (previous event of location " + std::to_string(loc) +
              " at " + std::to_string(pending_[loc]) + ")";
      ok = false;
      break;
    }
    pending_[loc] = e.timestamp;
    ++pending_counts_[loc];
    if (e.timestamp < batch_first) batch_first = e.timestamp;
    if (e.timestamp > batch_last) batch_last = e.timestamp;
  }
  for (uint32_t loc : touched_) {
    if (ok) {
      last_ts_of_[loc] = pending_[loc];
      counts_[loc] += pending_counts_[loc];
    }
    pending_counts_[loc] = 0;
  }
  if (!ok) return false;
  total_ += n;
  if (n > 0) {
    if (batch_first < first_ts_) first_ts_ = batch_first;
    if (batch_last > last_ts_) last_ts_ = batch_last;
  }
  return true;
}

}  // namespace mri::exporters::detail

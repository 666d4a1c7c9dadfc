// The definitions a trace writer knows and the checks every event batch
// must pass, shared by the VTF3 and OTF2 writers (internal).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mri_export.h"

namespace mri::exporters::detail {

// Definitions indexed by id. Not thread safe.
class DefinitionSet {
 public:
  // Validates and stores `defs` (program, resolution and all tables).
  bool reset(const TraceDefinitions& defs, std::string& error);

  // Identical re-definitions are accepted; conflicting ones are errors.
  bool add_location(const Location& location, std::string& error);
  bool add_region(const Region& region, std::string& error);
  bool add_metric(const MetricDefinition& metric, std::string& error);

  const std::string& program() const { return program_; }
  uint64_t timer_resolution() const { return timer_resolution_; }

  bool has_location(uint32_t id) const { return id < locations_.size() && locations_[id].has_value(); }
  bool has_region(uint32_t id) const { return id < regions_.size() && regions_[id].has_value(); }
  bool has_metric(uint32_t id) const { return id < metrics_.size() && metrics_[id].has_value(); }

  // Tables in id order; slots of ids never defined are empty.
  const std::vector<std::optional<Location>>& locations() const { return locations_; }
  const std::vector<std::optional<Region>>& regions() const { return regions_; }
  const std::vector<std::optional<MetricDefinition>>& metrics() const { return metrics_; }

 private:
  std::string program_;
  uint64_t timer_resolution_ = 1'000'000'000;
  std::vector<std::optional<Location>> locations_;
  std::vector<std::optional<Region>> regions_;
  std::vector<std::optional<MetricDefinition>> metrics_;
};

// Per-location time order and event counts. Not thread safe.
class EventChecker {
 public:
  // Checks a whole batch against `defs` and the time order of each location
  // (including earlier batches). On success the batch is accounted for; on
  // failure nothing changes and `error` names the first offending event.
  bool accept(const DefinitionSet& defs, const TraceEvent* events, size_t n, std::string& error);

  uint64_t total_events() const { return total_; }
  // Events accepted for `location` (0 for unknown ids).
  uint64_t events_of(uint32_t location) const { return location < counts_.size() ? counts_[location] : 0; }
  bool any_events() const { return total_ > 0; }
  uint64_t first_timestamp() const { return first_ts_; }
  uint64_t last_timestamp() const { return last_ts_; }

 private:
  std::vector<uint64_t> last_ts_of_;  // per location: last accepted timestamp
  std::vector<uint64_t> counts_;      // per location
  std::vector<uint64_t> pending_;         // scratch for one batch: last timestamp per location
  std::vector<uint64_t> pending_counts_;  // scratch for one batch: events per location
  std::vector<uint32_t> touched_;     // locations touched by the current batch
  uint64_t total_ = 0;
  uint64_t first_ts_ = UINT64_MAX;
  uint64_t last_ts_ = 0;
};

const char* event_kind_name(EventKind kind);

}  // namespace mri::exporters::detail

// time.cpp - EXECUTION_TIME: an instance's duration on the monitor's clock
// (ticks; the tool converts them with AppControl::ns_per_tick). The frame
// takes the clock at the enter and the exit itself (hot_path.cpp), so this
// source only accepts the requests; the monitor's own overhead can be
// removed from its values (compensation.cpp).
#include "source.h"

namespace mri::monitor {
namespace {

bool measures(uint32_t metric) { return metric == uint32_t(proto::Metric::kExecutionTime); }

Claim claim(const RequestInput& request, const ReleaseContext&) {
  Claim c;
  c.kind = ValueKind::kTime;
  c.compensable = !(request.record.flags & proto::kRequestNoCompensation);
  return c;
}

}  // namespace

extern const MeasurementSource time_source{.name = "time", .measures = measures, .kind = ValueKind::kTime, .claim = claim};

}  // namespace mri::monitor

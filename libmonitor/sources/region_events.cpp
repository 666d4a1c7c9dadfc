// region_events.cpp - REGION_EVENT: a trace record at every enter and exit
// of the traced instances (paper 3.3), written by the hot path's trace
// targets; no value. Trace requests only.
#include "source.h"

namespace mri::monitor {
namespace {

bool measures(uint32_t metric) { return metric == uint32_t(proto::Metric::kRegionEvent); }

}  // namespace

extern const MeasurementSource region_events_source{.name = "region events", .measures = measures, .kind = ValueKind::kEvent};

}  // namespace mri::monitor

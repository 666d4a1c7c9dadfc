// instances.cpp - INSTANCES: 1 per region instance (in a profile, the
// inclusive value of an instance is the profiled instances of its subtree,
// itself included). The frame counts its instances itself (hot_path.cpp),
// so this source only accepts the requests. It is also the smallest
// example of a source: a file like this one and a line in sources.cpp.
#include "source.h"

namespace mri::monitor {
namespace {

bool measures(uint32_t metric) { return metric == uint32_t(proto::Metric::kInstances); }

}  // namespace

extern const MeasurementSource instances_source{.name = "instances", .measures = measures, .kind = ValueKind::kCount};

}  // namespace mri::monitor

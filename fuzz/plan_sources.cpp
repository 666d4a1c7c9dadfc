// plan_sources.cpp - the list of measurement sources that the plan
// compiler's fuzz target links in place of libmonitor/source_list.cpp: the
// sources every program has (time, instances, region events, PAPI
// counters), in the registry's order, and a stand-in for the cache
// simulator's source. That one claims the cache-event requests and
// compiles them itself (compile_owned, which needs the whole monitor: the
// simulator, the data-structure table), so the plan compiler only hands
// them over; the fuzz target checks that it does.
#include <iterator>

#include "mri_monitor.h"
#include "source.h"

namespace mri::monitor {

extern const MeasurementSource time_source;
extern const MeasurementSource instances_source;
extern const MeasurementSource region_events_source;
extern const MeasurementSource papi_source;

namespace {

bool cache_measures(uint32_t metric) { return metric == uint32_t(proto::Metric::kCacheEvent); }
const MeasurementSource cache_stand_in{.name = "cache simulator (stand-in)", .measures = cache_measures,
                                       .kind = ValueKind::kOwned};

}  // namespace

MRI_SOURCE_LIST(&time_source, &instances_source, &region_events_source, &papi_source, &cache_stand_in);

}  // namespace mri::monitor

// plan.cpp includes mri_monitor.h, whose every translation unit registers
// its module's regions at start-up: the fuzz target has none and no
// monitor to register them with.
extern "C" void Monitor_Register_Regions(Monitor_Region_Descriptor*, Monitor_Region_Descriptor*) {}
extern "C" void Monitor_Unregister_Module(const void*) {}

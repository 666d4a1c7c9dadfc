// source_list.cpp - the measurement sources of libmonitor (sdk/source.h),
// in registry order.
//
// A new source is its own files plus one line in MRI_SOURCES below; its
// files define `extern const MeasurementSource NAME;` in mri::monitor.
// (The unit tests and the fuzz target link their own list in place of
// this file: libmonitor/tests/test_sources.cpp, fuzz/plan_sources.cpp.)
#include "source.h"

#define MRI_SOURCES(X)    \
  X(time_source)          \
  X(instances_source)     \
  X(region_events_source) \
  X(papi_source)          \
  X(cachesim_source)

namespace mri::monitor {

#define MRI_DECLARE_SOURCE(name) extern const MeasurementSource name;
MRI_SOURCES(MRI_DECLARE_SOURCE)
#undef MRI_DECLARE_SOURCE

#define MRI_LIST_SOURCE(name) &name,
MRI_SOURCE_LIST(MRI_SOURCES(MRI_LIST_SOURCE));
#undef MRI_LIST_SOURCE

}  // namespace mri::monitor

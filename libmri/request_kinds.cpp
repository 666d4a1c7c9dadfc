// request_kinds.cpp - the table of request kinds: one entry per
// MRI_Request_Kind (request_kind.h).
#include "request_kind.h"

#include "request_aggregate.h"
#include "request_histogram.h"
#include "request_profile.h"
#include "request_trace.h"

namespace mri::tool {

const RequestKindOps& request_kind_ops(MRI_Request_Kind kind) {
  switch (kind) {
    case MRI_AGGREGATE_REQUEST: return kAggregateRequests;
    case MRI_HISTOGRAM_REQUEST: return kHistogramRequests;
    case MRI_TRACE_REQUEST: return kTraceRequests;
    case MRI_PROFILE_REQUEST: return kProfileRequests;
  }
  return kAggregateRequests;  // not reached: a Request's kind is set by its MRI_*_Request
}

}  // namespace mri::tool

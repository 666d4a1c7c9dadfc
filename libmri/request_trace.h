// request_trace.h - trace requests (paper 4.4): a record per region
// instance (or enter and exit), delivered through the call-back and the
// trace-record functions (trace.cpp), not through MRI_Get_Data.
#pragma once

#include "mri.h"
#include "request_kind.h"
#include "session.h"

namespace mri::tool {

extern const RequestKindOps kTraceRequests;

// MRI_Trace_Request after the session checks: its id, or MRI_Error with
// the reason (at most proto::kMaxTraceRequests at a time).
MRI_Request_ID trace_request(Session& s, MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                             MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables);

}  // namespace mri::tool

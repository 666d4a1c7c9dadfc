// request_aggregate.h - aggregate requests (paper 4.1): one value per
// thread or per process, reduced by the tool from the threads' slots.
#pragma once

#include <functional>
#include <vector>

#include "mri.h"
#include "mri_protocol.h"
#include "request_kind.h"
#include "session.h"

namespace mri::tool {

extern const RequestKindOps kAggregateRequests;

// MRI_Aggregate_Request after the session checks: checks its arguments
// and places it. Its id, or MRI_Error with the reason.
MRI_Request_ID aggregate_request(Session& s, MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                 MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables,
                                 MRI_Aggregation_Spec* aggregation);

// Which aggregations the MCC implements for a runtime information.
std::vector<MRI_Aggregation_Spec> aggregations_for(MRI_Runtime_Information_Spec ri);

// Pure readers (unit tests, fuzz targets): no session, no process.
//
// Thread `thread`'s aggregate slot of one request.
struct ThreadSlot {
  int thread;
  proto::AggregateSlot slot;
};
// Fills slots[i].slot with thread slots[i].thread's slot of request
// record `record`, read under the thread's sequence word; left as it is
// (zero) when !active, for a thread outside [0, rows) and for a record
// beyond the geometry. rows is bounded by the geometry here as well.
void read_aggregate_slots(const proto::View& v, uint32_t record, uint32_t rows, bool active,
                          const std::function<bool()>& application_gone, std::vector<ThreadSlot>& slots);
// Reduction of per-thread aggregate slots to the values of one request:
// one value per slot (PER_THREAD) or one for process `process_id`
// (PER_PROCESS). Times are scaled by ns_per_tick; counts stay counts.
std::vector<MRI_Aggregate_Value> reduce_aggregate(MRI_Runtime_Information_Spec ri,
                                                  const MRI_Aggregation_Spec& agg,
                                                  const std::vector<ThreadSlot>& slots,
                                                  int process_id, double ns_per_tick);

}  // namespace mri::tool

// request_histogram.h - histogram requests (paper 4.2): simulated cache
// events distributed over the addresses of data structures, in bins the
// application's simulator counts per thread.
#pragma once

#include <deque>
#include <functional>
#include <vector>

#include "mri.h"
#include "mri_histogram.h"
#include "mri_protocol.h"
#include "request_kind.h"
#include "session.h"

namespace mri::tool {

extern const RequestKindOps kHistogramRequests;

// MRI_Histogram_Request after the session checks: its id, or MRI_Error
// with the reason.
MRI_Request_ID histogram_request(Session& s, MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                 MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables,
                                 int* histogram_elements_nr);

// Pure readers (unit tests, fuzz targets): no session, no process.
//
// What a histogram request asks of its histogram slot.
struct HistogramQuery {
  uint32_t histogram = 0;   // histogram slot
  uint32_t generation = 0;  // the request's generation
  uint32_t data_index = 0;  // 1 + index into the data-structure table; 0: every data structure
  uint32_t bins = 0;        // requested bins
  bool active = false;      // the request's record is applied (RequestAck)
};
// The bins the application counted for `query`: `applied` whether the slot
// holds the request's current layout (its HistogramHead), `layout` that
// layout recomputed from the first HistogramHead::data_structures records
// of `data`, and `values` its bins summed over `threads` (each row read
// under the thread's sequence word; threads beyond the geometry are left
// out). nullptr, or why the head the application published disagrees with
// the table (then nothing is read). A slot beyond kMaxHistograms reads as
// not applied.
const char* read_histogram(const proto::View& v, const HistogramQuery& query, const std::deque<DataEntry>& data,
                           const std::vector<int>& threads, const std::function<bool()>& application_gone,
                           bool& applied, proto::HistogramLayout& layout, std::vector<uint64_t>& values);
// Labels `layout`'s bins: bin b gets values[b], its address range, and
// the data structures it covers (pointers into `specs`, which it fills).
void label_histogram_bins(const proto::HistogramLayout& layout, const std::vector<uint64_t>& values,
                          const std::deque<DataEntry>& data, std::vector<MRI_Histogram_Bin>& bins,
                          std::vector<MRI_Data_Structure_Spec>& specs);

}  // namespace mri::tool

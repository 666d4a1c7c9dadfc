// request_histogram.cpp - histogram requests (paper 4.2): the check of
// MRI_Histogram_Request's arguments, the histogram slot and bins each
// takes in its record, and MRI_Get_Data's reading of the threads' bins,
// labelled with the layout both sides compute (protocol/mri_histogram.h).
#include "request_histogram.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "cache_simulator.h"
#include "data_structures.h"
#include "error.h"
#include "launch.h"
#include "requests.h"
#include "row_reader.h"
#include "saturate.h"

namespace mri::tool {
namespace {

int reserve_histogram(Session& s, Request& r) {
  int histogram = -1;
  for (size_t i = 0; i < s.histogram_busy.size(); ++i)
    if (!s.histogram_busy[i]) {
      histogram = int(i);
      break;
    }
  if (histogram < 0)
    return fail("too many histogram requests: at most %u at a time; delete one first", proto::kMaxHistograms);
  s.histogram_busy[size_t(histogram)] = 1;
  r.histogram = histogram;
  return MRI_OK;
}

void release_histogram(Session& s, Request& r) {
  if (r.histogram >= 0) s.histogram_busy[size_t(r.histogram)] = 0;
}

void encode_histogram(Session& s, const Request& r, uint32_t slot, proto::RequestRecord&) {
  if (!r.simulated) return;
  proto::CacheRequestRecord* c = s.view.cache_request(slot);
  c->bins = uint32_t(r.bins);
  c->histogram = uint32_t(r.histogram);
}

int histogram_results(Session& s, Request& r, bool active, void** results) {
  if (refresh_data_structures(s) != MRI_OK) return MRI_Error;
  r.hist_bins.clear();
  r.hist_specs.clear();
  HistogramQuery query;
  query.histogram = r.histogram < 0 ? proto::kMaxHistograms : uint32_t(r.histogram);  // none: not applied
  query.generation = r.generation;
  query.data_index = r.data_index < 0 ? 0 : uint32_t(r.data_index) + 1;
  query.bins = uint32_t(r.bins);
  query.active = active;
  const uint32_t nthreads = thread_rows(s.view);
  std::vector<int> threads;
  for (uint32_t t = 0; t < nthreads; ++t)
    if (wants_thread(r, int(t))) threads.push_back(int(t));
  bool applied = false;
  proto::HistogramLayout layout;
  std::vector<uint64_t> values;
  if (const char* why = read_histogram(s.view, query, s.data, threads, [&s] { return child_exited(s); }, applied,
                                       layout, values))
    return fail("the application published a bad histogram layout for request %d: %s", r.id, why);
  label_histogram_bins(layout, values, s.data, r.hist_bins, r.hist_specs);
  r.hist_result.kind = MRI_HISTOGRAM_REQUEST;
  r.hist_result.ri = r.ri;
  r.hist_result.active = applied;
  r.hist_result.nr_Elements = int(r.hist_bins.size());
  r.hist_result.element = r.hist_bins.empty() ? nullptr : r.hist_bins.data();
  *results = &r.hist_result;
  clear_error();
  return MRI_OK;
}

}  // namespace

const RequestKindOps kHistogramRequests = {
    .wire = proto::RequestKind::kHistogram,
    .record_usable = nullptr,
    .reserve = reserve_histogram,
    .encode = encode_histogram,
    .placed = nullptr,
    .unplacing = nullptr,
    .release = release_histogram,
    .get_data = histogram_results,
    .no_get_data = nullptr,
};

MRI_Request_ID histogram_request(Session& s, MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                 MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables,
                                 int* histogram_elements_nr) {
  if (!histogram_elements_nr) return fail("histogram_elements_nr is NULL");
  const int bins = *histogram_elements_nr;
  if (bins < 1 || bins > int(proto::kMaxHistogramBins))
    return fail("a histogram has 1 to %u bins (got %d)", proto::kMaxHistogramBins, bins);
  Request r;
  r.kind = MRI_HISTOGRAM_REQUEST;
  r.bins = bins;
  if (ri && !is_cache_event(raw(*ri)) && ri_known(raw(*ri)))
    return fail("a histogram distributes cache events over addresses; %s has no address (use a cache event such as "
                "LC1_DATA_READ_MISS)", MRI_Runtime_Information_Name(*ri));
  if (check_common(s, ri, regions, ao, variables, false, r) != MRI_OK) return MRI_Error;
  for (const auto& a : r.active_objects)
    if (a.type != MRI_THREAD && a.type != MRI_PROCESS) return fail("histogram active objects must be threads or the process");
  // The bins must fit the bytes they cover (the layout is fixed by the
  // application when it applies the request; checked here for a clear error).
  if (r.data_index >= 0 && uint64_t(bins) > s.data[size_t(r.data_index)].record.bytes)
    return fail("%d bins over data structure \"%s\" of %llu bytes: at most one bin per byte", bins,
                s.data[size_t(r.data_index)].name.c_str(), (unsigned long long)s.data[size_t(r.data_index)].record.bytes);
  return add_request(s, std::move(r));
}

const char* read_histogram(const proto::View& v, const HistogramQuery& query, const std::deque<DataEntry>& data,
                           const std::vector<int>& threads, const std::function<bool()>& application_gone,
                           bool& applied, proto::HistogramLayout& layout, std::vector<uint64_t>& values) {
  layout = proto::HistogramLayout{};
  values.clear();
  proto::HistogramHead head{};
  if (query.histogram < proto::kMaxHistograms) head = *v.histogram_head(query.histogram);
  applied = query.active && head.applied_generation == query.generation;
  if (!applied) return nullptr;
  // The layout the application applied, recomputed from the table: it
  // must agree with what the application published.
  std::vector<proto::DataRecord> records;
  for (uint32_t i = 0; i < head.data_structures && i < data.size(); ++i) records.push_back(data[i].record);
  const char* why = head.data_structures > data.size() || head.data_index != query.data_index
                        ? "it names data structures the table does not have"
                        : proto::histogram_layout(records.data(), uint32_t(records.size()), head.data_index,
                                                  query.bins, layout);
  if (!why && (layout.bins != head.bins || layout.bin_bytes != head.bin_bytes)) why = "its bins disagree with the table";
  if (why) {
    layout = proto::HistogramLayout{};
    return why;
  }
  values.assign(layout.bins, 0);
  std::vector<uint64_t> row(layout.bins);  // at most kMaxHistogramBins (histogram_layout)
  for (const int t : threads) {
    if (t < 0 || uint32_t(t) >= v.g.max_threads) continue;
    read_thread_consistent(
        v, uint32_t(t),
        [&] { std::copy_n(v.histogram_row(query.histogram, uint32_t(t)), row.size(), row.data()); },
        application_gone);
    for (uint32_t b = 0; b < layout.bins; ++b) values[b] = add_counts(values[b], row[b]);
  }
  return nullptr;
}

void label_histogram_bins(const proto::HistogramLayout& layout, const std::vector<uint64_t>& values,
                          const std::deque<DataEntry>& data, std::vector<MRI_Histogram_Bin>& bins,
                          std::vector<MRI_Data_Structure_Spec>& specs) {
  bins.clear();
  specs.clear();
  // Bin b covers packed bytes [b * W, min(T, (b + 1) * W)); its address
  // range runs from the lowest to one past the highest of those bytes'
  // addresses (data structures that overlap are packed one after the
  // other, so a later piece may lie below an earlier one).
  std::vector<std::pair<size_t, size_t>> lists;  // per bin: [first, last) into specs
  for (uint32_t b = 0; b < layout.bins; ++b) {
    const uint64_t begin = uint64_t(b) * layout.bin_bytes;
    const uint64_t end = std::min(layout.total_bytes, begin + layout.bin_bytes);
    MRI_Histogram_Bin bin{};
    bin.value = b < values.size() ? values[b] : 0;
    const size_t first = specs.size();
    bool have_begin = false;
    for (const proto::HistogramPiece& p : layout.pieces) {
      if (p.packed >= end || p.packed + p.bytes <= begin) continue;
      const unsigned long long from = p.address + (begin > p.packed ? begin - p.packed : 0);
      const unsigned long long to = p.address + std::min(p.bytes, end - p.packed);
      bin.address_begin = have_begin ? std::min(bin.address_begin, from) : from;
      bin.address_end = have_begin ? std::max(bin.address_end, to) : to;
      have_begin = true;
      if (p.data_index < data.size()) specs.push_back(data[p.data_index].spec);
    }
    lists.push_back({first, specs.size()});
    bins.push_back(bin);
  }
  for (size_t b = 0; b < bins.size(); ++b) {  // pointers only now: specs no longer grows
    bins[b].data_structures.nr_Elements = int(lists[b].second - lists[b].first);
    bins[b].data_structures.data_structure = specs.data() + lists[b].first;
  }
}

}  // namespace mri::tool

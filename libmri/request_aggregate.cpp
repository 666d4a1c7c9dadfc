// request_aggregate.cpp - aggregate requests (paper 4.1): the check of
// MRI_Aggregate_Request's arguments, and MRI_Get_Data's reading of the
// threads' slots and their reduction to one value per thread or process.
// The record holds nothing of its own beyond what slots.cpp writes.
#include "request_aggregate.h"

#include "cache_simulator.h"
#include "counters.h"
#include "error.h"
#include "launch.h"
#include "requests.h"
#include "row_reader.h"

namespace mri::tool {
namespace {

int aggregate_results(Session& s, Request& r, bool active, void** results) {
  const uint32_t nthreads = thread_rows(s.view);
  std::vector<ThreadSlot> slots;
  if (r.aggregation.target == MRI_PER_THREAD && !r.active_objects.empty()) {
    for (const auto& a : r.active_objects) slots.push_back({a.id, {}});
  } else {
    for (uint32_t t = 0; t < nthreads; ++t) slots.push_back({int(t), {}});
  }
  read_aggregate_slots(s.view, uint32_t(r.slot), nthreads, active, [&s] { return child_exited(s); }, slots);
  r.agg_values = reduce_aggregate(r.ri, r.aggregation, slots, int(s.pid), s.ns_per_tick);
  fill_results(r, r.agg_result, MRI_AGGREGATE_REQUEST, active, r.agg_values);
  r.agg_result.aggregation = r.aggregation;
  *results = &r.agg_result;
  clear_error();
  return MRI_OK;
}

}  // namespace

const RequestKindOps kAggregateRequests = {
    .wire = proto::RequestKind::kAggregate,
    .record_usable = nullptr,
    .reserve = nullptr,
    .encode = nullptr,
    .placed = nullptr,
    .unplacing = nullptr,
    .release = nullptr,
    .get_data = aggregate_results,
    .no_get_data = nullptr,
};

MRI_Request_ID aggregate_request(Session& s, MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                 MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables,
                                 MRI_Aggregation_Spec* aggregation) {
  Request r;
  r.kind = MRI_AGGREGATE_REQUEST;
  if (ri && raw(*ri) == MRI_REGION_EVENT)
    return fail("MRI_REGION_EVENT is only for trace requests and cannot be aggregated");
  if (check_common(s, ri, regions, ao, variables, false, r) != MRI_OK) return MRI_Error;
  if (!aggregation) return fail("aggregation pointer is NULL");
  if (raw(aggregation->operation) < MRI_SUM || raw(aggregation->operation) > MRI_COUNT)
    return fail("unknown aggregation operation %d", raw(aggregation->operation));
  if (raw(aggregation->target) < MRI_PER_THREAD || raw(aggregation->target) > MRI_PER_NODE)
    return fail("unknown aggregation target %d", raw(aggregation->target));
  if (aggregation->target == MRI_PER_NODE)
    return fail("aggregation target PER_NODE is not available: this monitor covers one node");
  const MRI_Active_Object_Type want = aggregation->target == MRI_PER_THREAD ? MRI_THREAD : MRI_PROCESS;
  for (const auto& a : r.active_objects)
    if (a.type != want)
      return fail("aggregation target %s needs %s active objects, but the table has a %s (section 2: target and active objects must match)",
                  aggregation->target == MRI_PER_THREAD ? "PER_THREAD" : "PER_PROCESS",
                  want == MRI_THREAD ? "thread" : "process", a.type == MRI_THREAD ? "thread" : a.type == MRI_PROCESS ? "process" : "node");
  bool valid = false;
  for (const auto& a : aggregations_for(*ri))
    if (a.operation == aggregation->operation && a.target == aggregation->target) valid = true;
  if (!valid)
    return fail("aggregation %s %s is not available for %s (see Get_Available_Aggregations())",
                MRI_Aggregation_Operation_Name(aggregation->operation),
                aggregation->target == MRI_PER_THREAD ? "PER_THREAD" : "PER_PROCESS", MRI_Runtime_Information_Name(*ri));
  r.aggregation = *aggregation;
  if (check_budget(s, r) != MRI_OK) return MRI_Error;
  return add_request(s, std::move(r));
}

std::vector<MRI_Aggregation_Spec> aggregations_for(MRI_Runtime_Information_Spec ri) {
  std::vector<MRI_Aggregation_Spec> out;
  if (ri == MRI_EXECUTION_TIME) {
    for (auto target : {MRI_PER_THREAD, MRI_PER_PROCESS})
      for (auto op : {MRI_SUM, MRI_MIN, MRI_MAX, MRI_AVG, MRI_COUNT}) out.push_back({op, target});
  } else if (ri == MRI_NUMBER_OF_INSTANCES) {
    out.push_back({MRI_SUM, MRI_PER_THREAD});
    for (auto op : {MRI_SUM, MRI_MIN, MRI_MAX, MRI_AVG}) out.push_back({op, MRI_PER_PROCESS});
  } else if (is_counter(ri) || is_cache_event(ri)) {
    // Counts aggregate like time.
    for (auto target : {MRI_PER_THREAD, MRI_PER_PROCESS})
      for (auto op : {MRI_SUM, MRI_MIN, MRI_MAX, MRI_AVG, MRI_COUNT}) out.push_back({op, target});
  }
  return out;
}

void read_aggregate_slots(const proto::View& v, uint32_t record, uint32_t rows, bool active,
                          const std::function<bool()>& application_gone, std::vector<ThreadSlot>& slots) {
  if (!active || record >= v.g.max_requests) return;
  rows = std::min(rows, v.g.max_threads);
  for (auto& ts : slots) {
    if (ts.thread < 0 || uint32_t(ts.thread) >= rows) continue;
    const uint32_t thread = uint32_t(ts.thread);
    read_thread_consistent(v, thread, [&] { ts.slot = *v.aggregate(thread, record); }, application_gone);
  }
}

std::vector<MRI_Aggregate_Value> reduce_aggregate(MRI_Runtime_Information_Spec ri, const MRI_Aggregation_Spec& agg,
                                                  const std::vector<ThreadSlot>& slots, int process_id,
                                                  double ns_per_tick) {
  const bool instances = ri == MRI_NUMBER_OF_INSTANCES;
  const double scale = instances || is_counter(ri) || is_cache_event(ri) ? 1.0 : ns_per_tick;  // ticks -> ns; counts stay counts
  // The raw and the compensated values reduce alike; `comp` picks the set.
  // The compensated sum is signed (libmonitor adds each instance's value
  // unclamped, as in profiles): a thread's total below 0 is reported as 0.
  auto sum_of = [](const proto::AggregateSlot& sl, bool comp) -> uint64_t {
    if (!comp) return sl.sum;
    const auto signed_sum = int64_t(sl.comp_sum);
    return signed_sum > 0 ? uint64_t(signed_sum) : 0;
  };
  auto min_of = [](const proto::AggregateSlot& sl, bool comp) { return ~(comp ? sl.not_comp_min : sl.not_min); };
  auto max_of = [](const proto::AggregateSlot& sl, bool comp) { return comp ? sl.comp_max : sl.max; };
  std::vector<MRI_Aggregate_Value> out;
  auto thread_ao = [](int t) { return MRI_Active_Object_Spec{MRI_THREAD, t}; };
  if (agg.target == MRI_PER_THREAD) {
    for (const auto& ts : slots) {
      MRI_Aggregate_Value v{};
      v.active_object = thread_ao(ts.thread);
      v.count = ts.slot.count;
      const auto& sl = ts.slot;
      for (const bool comp : {false, true}) {
        double value = 0.0;
        switch (agg.operation) {
          case MRI_SUM: value = instances ? double(sl.count) : double(sum_of(sl, comp)) * scale; break;
          case MRI_MIN: value = instances || !sl.count ? double(sl.count) : double(min_of(sl, comp)) * scale; break;
          case MRI_MAX: value = instances || !sl.count ? double(sl.count) : double(max_of(sl, comp)) * scale; break;
          case MRI_AVG: value = sl.count ? double(sum_of(sl, comp)) * scale / double(sl.count) : 0.0; break;
          case MRI_COUNT: value = double(sl.count); break;
        }
        (comp ? v.compensated_value : v.value) = value;
      }
      if (agg.operation == MRI_MIN || agg.operation == MRI_MAX) {
        v.has_focus = sl.count > 0;
        v.focus_active_object = v.active_object;
      }
      out.push_back(v);
    }
    return out;
  }
  // PER_PROCESS: combine the threads. The focus is where the raw extreme
  // was attained; the compensated extreme is taken on its own.
  MRI_Aggregate_Value v{};
  v.active_object = {MRI_PROCESS, process_id};
  uint64_t count = 0, threads_with_events = 0;
  for (const auto& ts : slots) {
    count += ts.slot.count;
    threads_with_events += ts.slot.count > 0;
  }
  v.count = count;
  for (const bool comp : {false, true}) {
    uint64_t sum = 0;
    bool have = false;
    double best = 0.0;
    int focus = -1;
    for (const auto& ts : slots) {
      const auto& sl = ts.slot;
      sum += sum_of(sl, comp);
      if (sl.count == 0 || (agg.operation != MRI_MIN && agg.operation != MRI_MAX)) continue;
      const double candidate = instances                   ? double(sl.count)
                               : agg.operation == MRI_MIN ? double(min_of(sl, comp)) * scale
                                                          : double(max_of(sl, comp)) * scale;
      if (!have || (agg.operation == MRI_MIN ? candidate < best : candidate > best)) {
        best = candidate;
        focus = ts.thread;
        have = true;
      }
    }
    double value = 0.0;
    switch (agg.operation) {
      case MRI_SUM: value = instances ? double(count) : double(sum) * scale; break;
      case MRI_COUNT: value = double(count); break;
      case MRI_AVG:
        if (instances)
          value = threads_with_events ? double(count) / double(threads_with_events) : 0.0;
        else
          value = count ? double(sum) * scale / double(count) : 0.0;
        break;
      case MRI_MIN:
      case MRI_MAX:
        value = best;
        if (!comp) {
          v.has_focus = have;
          if (have) v.focus_active_object = thread_ao(focus);
        }
        break;
    }
    (comp ? v.compensated_value : v.value) = value;
  }
  out.push_back(v);
  return out;
}

}  // namespace mri::tool

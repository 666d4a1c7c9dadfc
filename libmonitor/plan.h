// plan.h - the plan compiler: the tool's requests (untrusted records in the
// segment) -> what the MCC does at each region (RegionPlan and its
// targets), rebuilt at every release.
//
// Two steps. gather_requests() copies the active request records out of the
// segment once (the tool may rewrite them any time). compile_requests() is
// pure but for the sources' claims: it validates every request, asks the
// source of its metric how it is measured, and builds the targets of each
// request kind (one compile function per kind in plan.cpp), the
// acknowledgements and the result rows to reset. install_plan() (the
// control thread, every application thread quiescent) then applies the
// result to the segment and to the globals the hot path reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "monitor_internal.h"
#include "source.h"

namespace mri::monitor {

// An active request as it was in the segment, with what its last
// acknowledgement said (whether its results start anew, and whether it was
// already counted as corrupt in this generation).
struct GatheredRequest {
  RequestInput input;
  uint32_t acked_generation = 0;
  uint32_t acked_status = 0;
  uint64_t threads[proto::kThreadMaskWords]{};  // the request's thread-mask row (trace requests)
};

// Copies the active request records out of the segment (regions: the
// published ones, `regions` of them).
std::vector<GatheredRequest> gather_requests(const proto::View& view, uint32_t regions);

// How a request was answered.
struct Ack {
  uint32_t slot = 0;
  uint32_t generation = 0;
  bool ok = false;
  // Not a record a tool writes: counted in bad_requests and said, once per
  // generation (the ack did not already reject it).
  bool corrupt = false;
  std::string note;  // last_error text for a refusal ("" for none)
};

// Result rows that start anew (a fresh request).
struct Reset {
  enum class What : uint8_t { kAggregate, kProfile, kEdges } what;
  uint32_t index;  // request slot (kAggregate) or profile slice
};

struct CompiledPlan {
  uint32_t regions = 0;
  // Per region, its targets (flattened into the plan arrays by install).
  std::vector<std::vector<AggTarget>> aggs;
  std::vector<std::vector<uint32_t>> slices;
  std::vector<std::vector<TraceTarget>> traces;
  // Targets of the requests over every region, for regions published later.
  std::vector<uint32_t> all_slices;
  std::vector<TraceTarget> all_traces;
  // Per profile slice a request of this release uses (slice_set): what it
  // measures and how (index = slice).
  bool slice_set[proto::kHardMaxProfileSlices]{};
  AggTarget slice_value[proto::kHardMaxProfileSlices]{};
  bool slice_callpath[proto::kHardMaxProfileSlices]{};
  bool slice_compensate[proto::kHardMaxProfileSlices]{};
  bool slice_unwind[proto::kHardMaxProfileSlices]{};
  bool unwind_wanted_but_absent = false;  // a callpath request asked to unwind in a build without libunwind
  // Thread masks of the trace requests with active objects, by trace slot;
  // TraceTarget::threads points into trace_threads_of (install repoints it).
  uint32_t trace_slots = 0;
  uint64_t trace_threads[proto::kMaxTraceRequests][proto::kThreadMaskWords]{};
  bool trace_filtered[proto::kMaxTraceRequests]{};
  // Readings: each reading source's first index and count, the names in
  // reading order.
  Global::Reader readers[kMaxSources]{};
  uint32_t n_readers = 0;
  std::vector<std::string> reading_list;
  // Request slots whose REGION_EVENT instances still open on a thread stay
  // open (the same request as before); the others' are forgotten.
  std::vector<uint8_t> keep_trace_open;
  std::vector<Ack> acks;
  std::vector<Reset> resets;
  // Requests that sources measure themselves, per source index.
  std::vector<RequestInput> owned[kMaxSources];
};

struct PlanLimits {
  proto::Geometry geometry{};
  uint32_t regions = 0;   // published regions
  uint32_t threads = 0;   // thread rows in use
  bool unwind_available = false;
};

// Validates and compiles the gathered requests. Calls the sources' claims
// (begin_release first); touches neither the segment nor the globals.
CompiledPlan compile_requests(std::vector<GatheredRequest>& requests, const PlanLimits& limits,
                              const proto::View* view);

// The parts of a region's plan that follow from its trace targets.
void derive_trace_plan(RegionPlan& p, const TraceTarget* t, uint32_t n);

// Rebuilds the plans from the request table: gather, compile, install.
// Control thread only, while every application thread is quiescent.
void apply_requests();

}  // namespace mri::monitor

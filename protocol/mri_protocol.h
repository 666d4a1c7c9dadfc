// mri_protocol.h - THE shared-memory layout between libmri (tool process)
// and libmonitor (application process). Both sides include this one header;
// nothing else crosses the process boundary.
//
// Rules (see docs/protocol.md):
//  * Every word has exactly one writer process. Tool-written words are in
//    ToolControl and RequestRecord; everything else is written by the
//    application. There are no cross-process locks: a process may die at any
//    instant.
//  * Waiting is done with futex waits with a timeout on 32-bit words, plus a
//    liveness check of the peer after each timeout (the application polls a
//    pidfd of the tool; the tool, the application's parent, uses waitpid).
//  * The application treats the segment as untrusted: the geometry is bounded
//    by hard limits, the layout is recomputed from it and checked against the
//    kernel's segment size, and every index read from a request is checked.
//  * The protocol version changes whenever this file changes the layout or
//    the meaning of a field; it is independent of the library version.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#ifndef MRI_PROTOCOL_VERSION
#define MRI_PROTOCOL_VERSION 13
#endif

namespace mri::proto {

inline constexpr uint64_t kMagic = 0x314d48535f49524dULL;  // "MRI_SHM1" little-endian
inline constexpr uint32_t kProtocolVersion = MRI_PROTOCOL_VERSION;

// Environment variables through which the tool hands the segment to the
// application it starts.
inline constexpr const char* kEnvShmId = "MRI_SHMID";
inline constexpr const char* kEnvToolPid = "MRI_TOOL_PID";

// Hard limits: the application refuses a geometry above them, so a corrupt
// header cannot make it compute huge offsets.
inline constexpr uint32_t kHardMaxRegions = 1u << 16;
inline constexpr uint32_t kHardMaxThreads = 1024;
inline constexpr uint32_t kHardMaxRequests = 1024;
inline constexpr uint32_t kHardMaxProfileSlices = 16;
inline constexpr uint32_t kHardMaxFiles = 1u << 14;
inline constexpr uint32_t kHardMaxStringPool = 16u << 20;
inline constexpr uint32_t kHardMaxTraceRecords = 1u << 24;  // per thread ring
inline constexpr uint32_t kMaxTraceRequests = 8;            // trace requests active at once
inline constexpr uint32_t kHardMaxEdges = 1u << 16;         // callpath edges per (slice, thread)
inline constexpr uint32_t kThreadMaskWords = kHardMaxThreads / 64;
// Data structures and simulated cache events (version 7). Fixed sizes, not
// part of the Geometry (which has no spare word): the areas are small, and
// shared pages are backed only once touched.
inline constexpr uint32_t kMaxDataStructures = 1024;  // records in the data-structure table
inline constexpr uint32_t kMaxHistograms = 8;         // histogram requests in place at once
inline constexpr uint32_t kMaxHistogramBins = 1024;   // bins of one histogram
inline constexpr uint32_t kCacheConfigBytes = 1024;   // simulator configuration text, NUL included

inline constexpr uint32_t kMessageBytes = 256;
inline constexpr uint32_t kEventNameBytes = 64;  // PAPI event name of a counter request
inline constexpr uint32_t kThreadNameBytes = 16;
inline constexpr uint32_t kCacheLine = 64;

enum class AppState : uint32_t {
  kLoading = 0,     // segment created, application not attached yet
  kStopped = 1,     // parked; see stop_reason
  kRunning = 2,
  kTerminated = 3,  // Monitor_Final ran (normal exit or tool's terminate), or the program called exec()
  kRefused = 4,     // the application refused the segment (refuse_reason)
};

enum class StopReason : uint32_t {
  kNone = 0,
  kLoaded = 1,
  kBreakpoint = 2,
  kStopRequest = 3,
  kExited = 4,
  kTerminatedByTool = 6,
  // Version 10: the program replaced itself with exec() (without fork()).
  // Monitoring ended there as at an exit; the process (same pid) runs the
  // new image unmonitored. AppControl::end_ticks says when.
  kExec = 7,
  // Version 10: monitoring ended for an exec() that then failed (a failure
  // the monitor could not foresee, last_error says which); the program
  // runs on unmonitored. Published after kExec, in place of it.
  kExecFailed = 8,
  // Version 10: monitoring ended for a termination signal the monitor
  // caught (SIGINT, SIGTERM or SIGHUP left at their default action;
  // AppControl::end_signal), as at an exit; the process dies of the
  // signal next.
  kSignal = 9,
};

enum class Command : uint32_t {
  kNone = 0,
  kRun = 1,        // release; breakpoint region in ToolControl::breakpoint (-1: none)
  kStop = 2,       // stop at the next monitored event of each thread
  kTerminate = 3,  // publish final state and exit
};

enum class RequestState : uint32_t { kFree = 0, kActive = 1 };

enum class RequestKind : uint32_t { kAggregate = 0, kHistogram = 1, kTrace = 2, kProfile = 3 };

// Runtime information the application measures. Mirrors the values of
// MRI_Runtime_Information_Spec that the MCC implements.
// kRegionEvent: trace requests only (a record at every enter and exit).
// kCacheEvent: an event of the simulated cache hierarchy (version 7); the
// event, data structure and bins are in the request's CacheRequestRecord.
enum class Metric : uint32_t { kExecutionTime = 0, kInstances = 1, kCounter = 2, kRegionEvent = 3, kCacheEvent = 4 };

// Capacities, chosen by the tool before the application starts.
struct Geometry {
  uint32_t max_regions;
  uint32_t max_threads;
  uint32_t max_requests;
  uint32_t max_profile_slices;
  uint32_t max_files;
  uint32_t string_pool_bytes;
  uint32_t trace_records;  // records per thread ring: a power of two, or 0 (no trace area)
  uint32_t max_edges;      // caller/callee pairs per (profile slice, thread) of callpath profiles
};
static_assert(sizeof(Geometry) == 32);

// Words written by the tool only.
struct alignas(kCacheLine) ToolControl {
  uint32_t cmd_seq;     // futex word: incremented after a command's fields are written
  uint32_t cmd;         // Command
  int32_t breakpoint;   // region index for kRun, -1 for none
  uint32_t tool_pid;
  // How long a thread whose trace ring is full waits for the tool to make
  // room before it discards records (counted), in milliseconds; 0: 10 s.
  uint32_t trace_wait_ms;
  // Version 11: overhead values the tool set in place of the application's
  // calibration (MRI_Set_Overhead), per OverheadKind: bit k of
  // overhead_set says kind k is set; its values are IEEE single floats in
  // ns, stored as their bit patterns. Read by the application at each run
  // command, after its own calibrations; a kind whose bit is clear goes
  // back to what the application measured.
  uint32_t overhead_set;
  uint32_t overhead_pair_ns[4];  // float bits: what one instance adds to every enclosing one
  uint32_t overhead_own_ns[4];   // float bits: the part inside the instance's own interval
  uint32_t reserved[2];
};
static_assert(sizeof(ToolControl) == kCacheLine);
static_assert(offsetof(ToolControl, overhead_set) == 20);

// Words written by the application only.
struct alignas(kCacheLine) AppControl {
  // Sequence word and futex: odd while the application changes the status
  // fields (state, stop_reason, stop_region, ack_cmd_seq, stops,
  // threads_dropped), even when they are consistent; readers retry on a
  // change. The other counters are single words updated on their own.
  uint32_t status_seq;
  uint32_t state;        // AppState
  uint32_t stop_reason;  // StopReason
  int32_t stop_region;   // region index of the breakpoint that stopped it
  uint32_t ack_cmd_seq;  // last cmd_seq the application has acted on
  uint32_t app_pid;
  uint32_t stops;        // number of stops in this run
  uint32_t region_count;
  uint32_t file_count;
  uint32_t string_pool_used;
  uint32_t thread_count;       // threads registered (rows in use)
  uint32_t regions_dropped;    // regions beyond max_regions, or in files beyond max_files (not monitored)
  uint32_t threads_dropped;    // threads beyond max_threads (not monitored)
  uint32_t bad_requests;       // corrupt request records ignored
  uint32_t timer_kind;         // 0 = rdtsc, 1 = clock_gettime(CLOCK_MONOTONIC)
  uint32_t unmatched_exits;    // exits without a matching monitored enter
  double ns_per_tick;          // conversion of all time values in this segment
  uint32_t counter_errors;     // times a thread could not set up its counters (see last_error)
  // Trace rings: bumped (and futex-woken) when a thread's ring is full and
  // it waits for the tool to make room, or has records left at the end.
  uint32_t trace_signal;
  uint64_t trace_epoch;        // ticks at attach: trace timestamps count from here
  // Version 7. data_count: DataRecords published (release-stored after the
  // record is complete; records never change afterwards). cache_backend: 1
  // when the application is linked with the cache-simulator backend
  // (backends/cachesim), so simulated cache events can be requested.
  uint32_t data_count;
  uint32_t cache_backend;
  // Version 10: ticks (as trace timestamps) when monitoring ended at an
  // exec() (StopReason::kExec, and kExecFailed after it); stored before
  // the kExec state is published.
  uint64_t end_ticks;
  // Version 10: StopReason::kSignal: the signal; stored before the state.
  uint32_t end_signal;
  uint32_t reserved[5];
  char refuse_reason[kMessageBytes];  // AppState::kRefused: why
  char last_error[kMessageBytes];     // latest problem the MCC noticed
};
static_assert(offsetof(AppControl, ns_per_tick) == 64);
static_assert(offsetof(AppControl, end_ticks) == 96);
static_assert(sizeof(AppControl) == 128 + 2 * kMessageBytes);

// The monitor's own overhead per monitored region instance, measured by the
// application at start-up (before it publishes the static information;
// docs/ACCURACY.md, "Overhead compensation"). Written once, before the
// first status publication makes it visible.
enum class OverheadKind : uint32_t {
  kTimer = 0,     // a flat profile or time aggregate
  kCallpath = 1,  // a callpath profile (the caller/callee edge as well)
  kCounter = 2,   // time and a PAPI counter read at enter and exit
  kCacheSim = 3,  // the cache simulator is on: pair = recording cost per reference (own 0)
};
inline constexpr uint32_t kOverheadKinds = 4;
static_assert(sizeof(ToolControl::overhead_pair_ns) == kOverheadKinds * sizeof(uint32_t));
// The largest overhead per instance a tool may set (ns).
inline constexpr double kMaxToolOverheadNs = 1e6;
// An own part a tool sets as "the application's measured one, at most the
// pair" (MRI_OVERHEAD_OWN_MEASURED): the counter kind is measured only at
// the first release, after the tool had to set its values.
inline constexpr double kMeasuredOwnNs = -1.0;
// Why values a tool sets for an OverheadKind are not valid, or nullptr: the
// tool checks them before it writes them (MRI_Set_Overhead), and the
// application again when it reads them (the segment is untrusted).
inline const char* tool_overhead_problem(uint32_t kind, double pair_ns, double own_ns) {
  if (!std::isfinite(pair_ns) || !std::isfinite(own_ns)) return "the values must be finite numbers of ns";
  if (pair_ns < 0 || (own_ns < 0 && own_ns != kMeasuredOwnNs)) return "negative overhead";
  if (pair_ns > kMaxToolOverheadNs) return "delta_inclusive is above the bound of 1 ms a region instance";
  if (own_ns > pair_ns) return "delta_own is above delta_inclusive (own is a part of the pair's cost)";
  if (kind == uint32_t(OverheadKind::kCacheSim) && own_ns != 0)
    return "the cache-simulator kind is a cost per recorded reference; its delta_own must be 0";
  return nullptr;
}
struct OverheadValue {
  // Both in ticks (ns_per_tick converts). `own`: what the monitor adds to
  // an instance's own measured interval (its exclusive part of the
  // overhead); `pair`: what one monitored instance (enter + exit) adds to
  // every enclosing instance.
  double own_ticks;
  double pair_ticks;
  uint32_t calibrated;  // 1: measured; 0: see reason
  char reason[kEventNameBytes];  // why not calibrated, or the PAPI event used (kCounter)
  uint32_t reserved;
};
static_assert(sizeof(OverheadValue) == 88);
struct alignas(kCacheLine) OverheadCalibration {
  uint32_t repetitions;  // k: pairs per measurement
  uint32_t experiments;  // j: measurements, the minimum kept
  OverheadValue kind[kOverheadKinds];
};

struct alignas(kCacheLine) Header {
  uint64_t magic;
  uint32_t protocol_version;
  uint32_t header_size;  // sizeof(Header)
  uint64_t segment_size;  // bytes the tool created
  Geometry geometry;
  ToolControl tool;
  AppControl app;
  OverheadCalibration overhead;
};
static_assert(offsetof(Header, tool) == 64);
static_assert(offsetof(Header, app) == 128);
static_assert(offsetof(Header, overhead) == 128 + sizeof(AppControl));

// Static information (written once by the application at attach).
struct RegionRecord {
  uint32_t type;  // MRI_Region_Type
  int32_t line;
  uint32_t file_id;
  uint32_t name_offset;  // into the string pool
  uint32_t name_len;
  uint32_t reserved;
};
static_assert(sizeof(RegionRecord) == 24);

struct FileRecord {
  uint32_t name_offset;
  uint32_t name_len;
};
static_assert(sizeof(FileRecord) == 8);

enum class ThreadStatus : uint32_t { kUnused = 0, kAlive = 1, kExited = 2 };

// One row per application thread (active object). The thread's sequence
// word lives in its aggregate row (AggregateRow), not here.
struct alignas(kCacheLine) ThreadRecord {
  uint32_t reserved0;
  uint32_t status;  // ThreadStatus
  int32_t os_tid;
  uint32_t reserved;
  char name[kThreadNameBytes];
  uint8_t pad[kCacheLine - 32];
};
static_assert(sizeof(ThreadRecord) == kCacheLine);

// A request as the tool submits it. The region set is a bitmap in the
// request-bitmap area (one row of bitmap_words() words per request).
struct alignas(16) RequestRecord {
  uint32_t state;       // RequestState
  uint32_t generation;  // changes whenever the slot is reused
  uint32_t kind;        // RequestKind
  uint32_t metric;      // Metric
  uint32_t profile_slice;  // kProfile: which profile slice holds its results
  uint32_t flags;          // kRequest* bits, below
  uint32_t reserved[2];
  char event[kEventNameBytes];  // Metric::kCounter: the PAPI event name, NUL-terminated
};
inline constexpr uint32_t kRequestAllRegions = 1u << 0;
// Counter rotation: the request keeps its results and generation but does
// not measure in this run phase (its event is not in the threads' sets).
inline constexpr uint32_t kRequestPaused = 1u << 1;
// kTrace: only the threads set in the request's row of the thread-mask
// area are traced.
inline constexpr uint32_t kRequestThreadFilter = 1u << 2;
// kTrace: trace the requested regions only, not the regions they call.
inline constexpr uint32_t kRequestNoSubregions = 1u << 3;
// kProfile: also keep the calling context (EdgeSlot per caller/callee).
inline constexpr uint32_t kRequestCallpath = 1u << 4;
// kAggregate, kProfile: no overhead compensation; the compensated values
// equal the raw ones (and cost nothing extra to keep).
inline constexpr uint32_t kRequestNoCompensation = 1u << 5;
// kProfile with kRequestCallpath: unwind the stack at each instance's enter
// to find the functions without annotations between the instance and its
// enclosing profiled region (they become MRI_REGION_FUNCTION regions).
inline constexpr uint32_t kRequestUnwind = 1u << 6;
static_assert(sizeof(RequestRecord) == 32 + kEventNameBytes);

// Written by the application when it applied a request.
struct RequestAck {
  uint32_t applied_generation;  // generation whose results the slots hold
  uint32_t status;              // 0 = ok, 1 = rejected (bad record, or counters impossible: see last_error)
};
static_assert(sizeof(RequestAck) == 8);

// Head of a thread's aggregate row: the sequence lock over all of this
// thread's result slots (aggregate and profile), odd while the thread
// updates them. It sits in the same page as the thread's first result
// slots: a store to it followed by loads of a slot 4096 bytes apart (as when
// both areas started page-aligned) stalls the core (4K aliasing: the
// EXECUTION_TIME aggregate cost 26.0 instead of 24.7 ns per pair).
struct alignas(kCacheLine) AggregateRowHead {
  uint32_t seq;
  uint32_t reserved[15];
};
static_assert(sizeof(AggregateRowHead) == kCacheLine);

// Result slot of an aggregate request for one thread. Time in ticks. The
// comp_ fields are the same values with the monitor's own overhead removed
// (OverheadCalibration); equal to the raw ones for counts and counters.
// Minima are stored complemented (~minimum): an all-zero slot is empty.
struct alignas(kCacheLine) AggregateSlot {
  uint64_t count;
  uint64_t sum;
  uint64_t not_min;
  uint64_t max;
  uint64_t comp_sum;
  uint64_t not_comp_min;
  uint64_t comp_max;
  uint64_t reserved;
};
static_assert(sizeof(AggregateSlot) == 64);

// Callpath profile slot for one (slice, thread, edge): the instances of
// `callee` whose nearest enclosing profiled region was `caller`. The edge
// index of a pair is chosen by the application thread; caller and callee
// are written when the slot's first instance is counted. Time in ticks.
inline constexpr uint32_t kNoCaller = 0xffffffffu;  // a root: no profiled region encloses it
struct EdgeSlot {
  uint32_t caller;  // region index, or kNoCaller
  uint32_t callee;
  uint64_t calls;
  uint64_t inclusive;  // outermost instances of callee only (recursion)
  uint64_t exclusive;
  uint64_t comp_inclusive;  // the same with the monitor's overhead removed: signed, two's complement
  uint64_t comp_exclusive;  // (ProfileSlot's note)
  uint64_t reserved[2];
};
static_assert(sizeof(EdgeSlot) == 64);

// Trace records (kTrace requests). One single-producer ring per thread:
// the thread appends at `head` (TraceRingHead, application-written), the
// tool consumes up to `tail` (TraceRingTail, tool-written). Both count
// records since the start and only grow; a record lives at index
// (count & (trace_records - 1)).
enum class TraceKind : uint16_t {
  kEnter = 0,  // MRI_REGION_EVENT at a region enter; data 0
  kExit = 1,   // MRI_REGION_EVENT at a region exit; data 0, or kTraceExitSynthetic
  kValue = 2,  // one region instance ended: data = its measured value (ticks, instances or counts)
};
// data of a kExit record the monitor wrote for an instance whose exit the
// program never ran: at the end of monitoring (exit()), at the end of its
// thread, or when an enclosing instance of the same request exited first
// (longjmp). Its timestamp is that moment.
inline constexpr uint64_t kTraceExitSynthetic = 1;
struct TraceRecord {
  uint64_t timestamp;  // ticks
  uint64_t data;
  uint32_t region;
  uint16_t kind;     // TraceKind
  uint16_t request;  // index of the request record that produced it
};
static_assert(sizeof(TraceRecord) == 24);

struct alignas(kCacheLine) TraceRingHead {
  uint64_t head;       // records published (release-stored every 16 records, at waits, exits and stops)
  uint64_t discarded;  // records dropped: the tool was gone, or did not make room within the wait bound
  uint32_t waiting;    // 1 while the thread waits for room (the tool then futex-wakes `TraceRingTail::tail_seq`)
  uint32_t waits;      // times the thread found its ring full
  uint64_t wait_ticks; // ticks spent waiting for room
  uint32_t reserved[8];
};
static_assert(sizeof(TraceRingHead) == kCacheLine);

struct alignas(kCacheLine) TraceRingTail {
  uint64_t tail;      // records the tool has taken
  uint32_t tail_seq;  // futex word: bumped whenever tail moves
  uint32_t reserved[13];
};
static_assert(sizeof(TraceRingTail) == kCacheLine);

// Profile slot for one (slice, thread, region). Time in ticks.
struct ProfileSlot {
  uint64_t calls;
  uint64_t inclusive;
  uint64_t exclusive;
  // The same with the monitor's overhead removed: sums of signed values in
  // two's complement (each instance's time less its estimated overhead,
  // unclamped, so that compensated times add up); negative where the
  // estimate exceeded the time. Version 9.
  uint64_t comp_inclusive;
  uint64_t comp_exclusive;
  uint64_t reserved[3];
};
static_assert(sizeof(ProfileSlot) == 64);

// A data structure the application registered (Monitor_Register_Data),
// written once by the application before data_count covers it. Its
// program unit is (file_id, line): the file of the registration and the
// first line of the declaring region, or 0 for file scope.
struct DataRecord {
  uint64_t address;
  uint64_t bytes;  // 1..kMaxDataStructureBytes
  uint32_t name_offset;  // into the string pool
  uint32_t name_len;
  uint32_t file_id;
  int32_t line;
};
static_assert(sizeof(DataRecord) == 32);
// The largest data structure (version 12): the largest address space Linux
// gives a process (x86-64 with 5-level page tables: 2^56 bytes; arm64:
// 2^52). A larger size is no object's (a negative size cast to unsigned):
// the application refuses it at registration and both sides' histogram
// layouts refuse a record with it, so sums of sizes stay far from 2^64.
inline constexpr uint64_t kMaxDataStructureBytes = 1ull << 56;

// Tool-written, one per request slot; read for Metric::kCacheEvent only.
struct CacheRequestRecord {
  uint32_t event;       // simulated event: level (0 = L1) * 8 + kind (0 read hit, 1 read miss, 2 write hit, 3 write miss)
  uint32_t data_index;  // 1 + index into the data-structure table; 0: none (aggregate: every address; histogram: every data structure)
  uint32_t bins;        // kHistogram: 1..kMaxHistogramBins
  uint32_t histogram;   // kHistogram: its histogram slot, 0..kMaxHistograms-1
};
static_assert(sizeof(CacheRequestRecord) == 16);

// Application-written, one per histogram slot: the layout the MCC applied.
// The bins cover the data structures [data_index - 1] (or the first
// `data_structures` records of the table when data_index is 0) packed one
// after the other in address order, bin_bytes each (mri_histogram.h).
struct alignas(kCacheLine) HistogramHead {
  uint32_t applied_generation;  // request generation this layout belongs to (0: none yet)
  uint32_t data_index;          // as in the request
  uint32_t data_structures;     // records of the table the layout covers
  uint32_t bins;                // bins in use (<= requested)
  uint64_t bin_bytes;
  uint64_t total_bytes;
  uint32_t reserved[8];
};
static_assert(sizeof(HistogramHead) == kCacheLine);

// Byte offsets of each area from the segment start. A pure function of the
// geometry, computed identically on both sides.
struct Layout {
  uint64_t regions;
  uint64_t files;
  uint64_t strings;
  uint64_t threads;
  uint64_t requests;
  uint64_t request_bitmaps;
  uint64_t request_acks;
  uint64_t aggregates;  // [thread]{AggregateRowHead, slot[request]}
  uint64_t profiles;    // [slice][thread][region]
  uint64_t request_threads;  // [request][kThreadMaskWords] thread masks (tool-written)
  uint64_t edges;        // [slice][thread][max_edges] EdgeSlot
  uint64_t trace_heads;  // [thread] TraceRingHead
  uint64_t trace_tails;  // [thread] TraceRingTail (tool-written)
  uint64_t trace_rings;  // [thread][trace_records] TraceRecord
  // Version 7: data structures and the cache simulator.
  uint64_t data_records;     // [kMaxDataStructures] DataRecord (application-written)
  uint64_t cache_requests;   // [max_requests] CacheRequestRecord (tool-written)
  // char[kCacheConfigBytes]: the tool's simulator configuration text ("" =
  // the machine's). Version 12: text only; one that starts with '@' (a file
  // name before) is refused: the application opens no path from the
  // segment, the tool reads a file its user names and sends its contents.
  uint64_t cache_config;
  uint64_t cache_info;       // char[kCacheConfigBytes]: the configuration the application simulates
  uint64_t histogram_heads;  // [kMaxHistograms] HistogramHead (application-written)
  uint64_t histograms;       // [kMaxHistograms][thread][kMaxHistogramBins] uint64_t event counts
  uint64_t total;
};

constexpr uint32_t bitmap_words(const Geometry& g) { return (g.max_regions + 63) / 64; }

constexpr uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// One thread's aggregate row: its sequence word, then a slot per request.
constexpr uint64_t aggregate_row_bytes(const Geometry& g) {
  return sizeof(AggregateRowHead) + uint64_t{g.max_requests} * sizeof(AggregateSlot);
}

constexpr Layout compute_layout(const Geometry& g) {
  Layout l{};
  uint64_t at = align_up(sizeof(Header), 4096);
  auto take = [&at](uint64_t bytes) {
    uint64_t start = at;
    at = align_up(at + bytes, kCacheLine);
    return start;
  };
  l.regions = take(uint64_t{g.max_regions} * sizeof(RegionRecord));
  l.files = take(uint64_t{g.max_files} * sizeof(FileRecord));
  l.strings = take(g.string_pool_bytes);
  l.threads = take(uint64_t{g.max_threads} * sizeof(ThreadRecord));
  l.requests = take(uint64_t{g.max_requests} * sizeof(RequestRecord));
  l.request_bitmaps = take(uint64_t{g.max_requests} * bitmap_words(g) * sizeof(uint64_t));
  l.request_acks = take(uint64_t{g.max_requests} * sizeof(RequestAck));
  at = align_up(at, 4096);
  l.aggregates = take(uint64_t{g.max_threads} * aggregate_row_bytes(g));
  at = align_up(at, 4096);
  l.profiles =
      take(uint64_t{g.max_profile_slices} * g.max_threads * g.max_regions * sizeof(ProfileSlot));
  l.request_threads = take(uint64_t{g.max_requests} * kThreadMaskWords * sizeof(uint64_t));
  at = align_up(at, 4096);
  l.edges = take(uint64_t{g.max_profile_slices} * g.max_threads * g.max_edges * sizeof(EdgeSlot));
  l.trace_heads = take(uint64_t{g.max_threads} * sizeof(TraceRingHead));
  l.trace_tails = take(uint64_t{g.max_threads} * sizeof(TraceRingTail));
  at = align_up(at, 4096);
  l.trace_rings = take(uint64_t{g.max_threads} * g.trace_records * sizeof(TraceRecord));
  l.data_records = take(uint64_t{kMaxDataStructures} * sizeof(DataRecord));
  l.cache_requests = take(uint64_t{g.max_requests} * sizeof(CacheRequestRecord));
  l.cache_config = take(kCacheConfigBytes);
  l.cache_info = take(kCacheConfigBytes);
  l.histogram_heads = take(uint64_t{kMaxHistograms} * sizeof(HistogramHead));
  at = align_up(at, 4096);
  l.histograms = take(uint64_t{kMaxHistograms} * g.max_threads * kMaxHistogramBins * sizeof(uint64_t));
  l.total = align_up(at, 4096);
  return l;
}

// Returns nullptr when the geometry is acceptable, else why not.
constexpr const char* validate_geometry(const Geometry& g) {
  if (g.max_regions == 0 || g.max_regions > kHardMaxRegions) return "max_regions out of range";
  if (g.max_threads == 0 || g.max_threads > kHardMaxThreads) return "max_threads out of range";
  if (g.max_requests == 0 || g.max_requests > kHardMaxRequests) return "max_requests out of range";
  if (g.max_profile_slices == 0 || g.max_profile_slices > kHardMaxProfileSlices)
    return "max_profile_slices out of range";
  if (g.max_files == 0 || g.max_files > kHardMaxFiles) return "max_files out of range";
  if (g.string_pool_bytes == 0 || g.string_pool_bytes > kHardMaxStringPool)
    return "string_pool_bytes out of range";
  if (g.trace_records > kHardMaxTraceRecords || (g.trace_records & (g.trace_records - 1)) != 0)
    return "trace_records must be a power of two of at most 16777216 (or 0)";
  if (g.max_edges > kHardMaxEdges) return "max_edges out of range";
  return nullptr;
}

// Default capacities. Shared memory pages are only backed once touched, so
// the large profile area costs memory only for the rows in use.
inline constexpr Geometry kDefaultGeometry{
    /*max_regions=*/4096, /*max_threads=*/128,  /*max_requests=*/256,
    /*max_profile_slices=*/4, /*max_files=*/1024, /*string_pool_bytes=*/1u << 20,
    /*trace_records=*/1u << 16, /*max_edges=*/4096};

static_assert(validate_geometry(kDefaultGeometry) == nullptr);
static_assert(compute_layout(kDefaultGeometry).total < (1ull << 34));

// Typed views of the areas (no bounds checks: callers check indices against
// the geometry first).
struct View {
  unsigned char* base = nullptr;
  Geometry g{};
  Layout l{};

  Header* header() const { return reinterpret_cast<Header*>(base); }
  RegionRecord* region(uint32_t i) const {
    return reinterpret_cast<RegionRecord*>(base + l.regions) + i;
  }
  FileRecord* file(uint32_t i) const { return reinterpret_cast<FileRecord*>(base + l.files) + i; }
  char* strings() const { return reinterpret_cast<char*>(base + l.strings); }
  ThreadRecord* thread(uint32_t i) const {
    return reinterpret_cast<ThreadRecord*>(base + l.threads) + i;
  }
  RequestRecord* request(uint32_t i) const {
    return reinterpret_cast<RequestRecord*>(base + l.requests) + i;
  }
  uint64_t* request_bitmap(uint32_t i) const {
    return reinterpret_cast<uint64_t*>(base + l.request_bitmaps) + uint64_t{i} * bitmap_words(g);
  }
  RequestAck* request_ack(uint32_t i) const {
    return reinterpret_cast<RequestAck*>(base + l.request_acks) + i;
  }
  AggregateRowHead* row_head(uint32_t thread) const {
    return reinterpret_cast<AggregateRowHead*>(base + l.aggregates + uint64_t{thread} * aggregate_row_bytes(g));
  }
  AggregateSlot* aggregate(uint32_t thread, uint32_t request) const {
    return reinterpret_cast<AggregateSlot*>(row_head(thread) + 1) + request;
  }
  uint64_t* request_threads(uint32_t request) const {
    return reinterpret_cast<uint64_t*>(base + l.request_threads) + uint64_t{request} * kThreadMaskWords;
  }
  EdgeSlot* edge_row(uint32_t slice, uint32_t thread) const {
    return reinterpret_cast<EdgeSlot*>(base + l.edges) + (uint64_t{slice} * g.max_threads + thread) * g.max_edges;
  }
  TraceRingHead* trace_head(uint32_t thread) const {
    return reinterpret_cast<TraceRingHead*>(base + l.trace_heads) + thread;
  }
  TraceRingTail* trace_tail(uint32_t thread) const {
    return reinterpret_cast<TraceRingTail*>(base + l.trace_tails) + thread;
  }
  TraceRecord* trace_ring(uint32_t thread) const {
    return reinterpret_cast<TraceRecord*>(base + l.trace_rings) + uint64_t{thread} * g.trace_records;
  }
  DataRecord* data_record(uint32_t i) const { return reinterpret_cast<DataRecord*>(base + l.data_records) + i; }
  CacheRequestRecord* cache_request(uint32_t request) const {
    return reinterpret_cast<CacheRequestRecord*>(base + l.cache_requests) + request;
  }
  char* cache_config() const { return reinterpret_cast<char*>(base + l.cache_config); }
  char* cache_info() const { return reinterpret_cast<char*>(base + l.cache_info); }
  HistogramHead* histogram_head(uint32_t slot) const {
    return reinterpret_cast<HistogramHead*>(base + l.histogram_heads) + slot;
  }
  // Thread `thread`'s bins of histogram slot `slot`, under the thread's
  // sequence word (AggregateRowHead) like its other results.
  uint64_t* histogram_row(uint32_t slot, uint32_t thread) const {
    return reinterpret_cast<uint64_t*>(base + l.histograms) +
           (uint64_t{slot} * g.max_threads + thread) * kMaxHistogramBins;
  }
  ProfileSlot* profile_row(uint32_t slice, uint32_t thread) const {
    return reinterpret_cast<ProfileSlot*>(base + l.profiles) +
           (uint64_t{slice} * g.max_threads + thread) * g.max_regions;
  }
};

}  // namespace mri::proto

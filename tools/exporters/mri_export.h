// Exporters: trace writers (VTF3 ASCII, OTF2), a VTF3 reader and a
// callgrind profile writer, over one neutral in-memory data model.
//
// Nothing here knows about shared memory or the MCC: the archiver turns what
// it drains into these structures and hands them over. The formats as we
// write them, and the documents they follow, are in docs/formats.md.
//
// Errors: every function that can fail returns false (or nullptr) and puts a
// human-readable reason into its `error` argument; it never throws on bad
// input or I/O failure (std::bad_alloc may still propagate).
//
// Thread safety: a TraceWriter is used by one thread at a time (no internal
// locking). Distinct writers, and the free functions, may run concurrently on
// different output paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mri::exporters {

// ---------------------------------------------------------------------------
// Trace data model

// A thread of the application (an "active object"). Ids are dense from 0.
struct Location {
  uint32_t id = 0;
  std::string name;     // e.g. "thread 0"
  int32_t os_tid = -1;  // kernel thread id, -1 when unknown
};

// A code region. `kind` is the MRI region type name: "PROGRAM", "ROUTINE",
// "LOOP", "BLOCK", "PARALLEL", "PARALLEL_LOOP", "PARALLEL_SECTIONS", "MASTER"
// (any other string is written as it is). `file` may be empty, `line` 0.
struct Region {
  uint32_t id = 0;
  std::string name;
  std::string file;
  int32_t line = 0;
  std::string kind;
};

// A measured value attached to a region instance (e.g. a counter delta at the
// exit of an instance). Ids are dense from 0.
struct MetricDefinition {
  uint32_t id = 0;
  std::string name;  // e.g. "PAPI_L1_DCM"
  std::string unit;  // e.g. "#", "ns"
};

struct TraceDefinitions {
  std::string program;                        // program name
  uint64_t timer_resolution = 1'000'000'000;  // timestamp ticks per second (we use ns)
  std::vector<Location> locations;
  std::vector<Region> regions;
  std::vector<MetricDefinition> metrics;
};

enum class EventKind : uint8_t { Enter, Leave, Metric };

// `region` is used by Enter/Leave (and names the instance a Metric belongs
// to); `metric` and `value` only by Metric.
struct TraceEvent {
  uint64_t timestamp = 0;  // ticks, see TraceDefinitions::timer_resolution
  uint32_t location = 0;
  uint32_t region = 0;
  EventKind kind = EventKind::Enter;
  uint32_t metric = 0;
  uint64_t value = 0;
  // Leave only: the program never ran it; the monitor wrote it when the
  // thread ended, at the end of monitoring or when an enclosing region was
  // left (MRI_TRACE_SYNTHETIC). OTF2 marks it with the attribute
  // kSyntheticLeave; VTF3 cannot mark it.
  bool synthetic = false;
};

// The OTF2 attribute (UINT8, value 1) of a synthetic leave, and its
// description in the archive.
inline constexpr const char* kSyntheticLeave = "MRI_SYNTHETIC_LEAVE";
inline constexpr const char* kSyntheticLeaveDescription =
    "the program never left this region here: MRI wrote the leave when the thread ended, at the end of monitoring "
    "(exit() inside regions), or when an enclosing region was left";

// Ids of locations, regions and metrics must be below this bound; the
// writers index tables by id.
inline constexpr uint32_t kMaxDefinitionId = 1u << 24;

// One trace archive. Not thread safe: use from one thread at a time.
//
// Common rules of both formats:
//  - Output is atomic: until finish() succeeds nothing at `path` looks
//    complete. The writer works under a temporary name in the same directory
//    and renames at the end; after any error, and in the destructor without
//    a successful finish(), it removes what it wrote.
//  - Every I/O error (ENOSPC, EFBIG, EIO, ...) is reported with the path and
//    strerror. After an I/O error the writer is failed: every later call
//    returns false with the first error.
//  - Invalid input (an event naming an undefined location/region/metric, a
//    location going back in time, a conflicting redefinition) is rejected
//    with a reason; a rejected write() leaves the archive as it was (the whole
//    batch is rejected) and the writer usable.
//  - The writers do not check that enters and leaves nest: a trace that
//    starts inside a region may begin with leaves.
class TraceWriter {
 public:
  virtual ~TraceWriter();

  // Creates the output. Fails on: an unwritable or missing directory, a path
  // that exists and is not a regular file (VTF3), an OTF2 path not ending in
  // ".otf2" or an OTF2 archive that already exists (we do not delete
  // directories), invalid or conflicting definitions in `defs` (id too large,
  // metric without name, timer_resolution 0), a second begin().
  virtual bool begin(const std::string& path, const TraceDefinitions& defs, std::string& error) = 0;

  // Definitions may grow between writes: a location, region or metric
  // announced here may be used by the events of later write() calls.
  // Re-adding an identical definition is accepted. Fails on a different
  // definition with the same id, an id >= kMaxDefinitionId, a metric without
  // name, and outside begin()..finish().
  virtual bool add_location(const Location& location, std::string& error) = 0;
  virtual bool add_region(const Region& region, std::string& error) = 0;
  virtual bool add_metric(const MetricDefinition& metric, std::string& error) = 0;

  // Appends events. Per location the timestamps must not decrease (across
  // calls, too); locations may interleave arbitrarily, within a call and
  // between calls. Fails on invalid events (the batch is rejected, see
  // above) and on I/O errors (VTF3 spill files, OTF2 chunk flushes).
  virtual bool write(const TraceEvent* events, size_t n, std::string& error) = 0;

  // Completes the archive and makes it visible under `path`. Fails on I/O
  // errors (the partial output is removed) and when called before begin()
  // or twice.
  virtual bool finish(std::string& error) = 0;

  // Events accepted so far.
  virtual uint64_t events_written() const = 0;
};

// VTF3 ASCII, one file. Events are written in global time order (ties: by
// location id, then in the order given); the writer keeps at most
// `memory_budget_bytes` of events in memory (24 bytes each) and spills the
// rest to unlinked temporary files next to the output (docs/formats.md).
// The factories cannot fail and are thread safe.
std::unique_ptr<TraceWriter> make_vtf3_writer(size_t memory_budget_bytes = 64u << 20);

// OTF2 through the OTF2 library. `path` is the anchor file "<dir>/<name>.otf2";
// the archive also holds "<dir>/<name>.def" and the directory "<dir>/<name>/".
// In a build without OTF2 the writer exists but begin() fails with
// "built without OTF2". The first OTF2 writer of the process replaces the
// OTF2 library's process-wide error callback (which prints to stderr) with
// one that hands the messages to the writer of the calling thread.
std::unique_ptr<TraceWriter> make_otf2_writer();

// Whether this build can write OTF2. Thread safe.
bool otf2_supported();

// ---------------------------------------------------------------------------
// Output targets

// The descriptor of this process an output path names: "-" and
// "/dev/stdout" 1, "/dev/stderr" 2, "/dev/fd/N" and "/proc/self/fd/N" N;
// -1 for any other path. Such a path is taken as the stream behind the
// descriptor (written through a duplicate, at its current offset), not as
// a file to replace: "/dev/stdout" of a shell's `> file` appends to what
// the process wrote there, as "-" does. Thread safe.
int output_descriptor(const std::string& path);
// Whether `path` is written as a stream: it names a descriptor (above), or
// an existing file that is neither a regular file nor a directory (a FIFO,
// a terminal, /dev/null), opened for writing as it is. The one-file writers
// (VTF3, callgrind) write a stream directly, without a temporary file and
// rename, and cannot take back what they wrote when they fail later; an
// OTF2 archive (two files and a directory) cannot go to one. Thread safe.
bool is_stream_output(const std::string& path);
// The file the writers write for `path`: its symbolic links followed (a
// relative link is taken from the link's directory; a dangling link gives
// the file it would create); `path` itself when it is no link. A file
// that replaces another is written next to that file and renamed over it,
// so the link keeps pointing where it did.
std::string follow_symlinks(std::string path);

enum class TraceFormat { Vtf3, Otf2 };

// ".otf2" (the anchor file name) -> Otf2, anything else -> Vtf3. These
// three functions cannot fail (beyond `false`) and are thread safe.
TraceFormat trace_format_for_path(const std::string& path);
// "vtf3" or "otf2" (any case) -> true and `format`; anything else -> false.
bool parse_trace_format(const std::string& name, TraceFormat& format);
std::unique_ptr<TraceWriter> make_trace_writer(TraceFormat format);

// Reads a VTF3 ASCII file as written by make_vtf3_writer(): definitions and
// events (in file order, i.e. global time order). Fails with
// "<path>:<line>: <reason>" on malformed input, undefined references or
// records out of time order; with "<path>: <strerror>" when the file cannot
// be read. Thread safe.
bool read_vtf3(const std::string& path, TraceDefinitions& defs, std::vector<TraceEvent>& events,
               std::string& error);
// The same over text already in memory; `source` names it in the errors
// ("<source>:<line>: <reason>"). What read_vtf3 runs on a file's contents.
bool parse_vtf3(std::string_view content, const std::string& source, TraceDefinitions& defs,
                std::vector<TraceEvent>& events, std::string& error);

// ---------------------------------------------------------------------------
// Profile (callgrind format)

inline constexpr uint32_t kNoCaller = 0xffffffff;

// Self (exclusive) cost of one region, one value per Profile::events entry.
struct ProfileFunction {
  uint32_t region = 0;
  std::vector<uint64_t> self;
};

// One call edge: `calls` calls from `caller` to `callee`, and the inclusive
// cost spent in the callee during those calls (per Profile::events entry).
// `caller` is kNoCaller for calls from outside the profile (a thread's
// outermost regions, such as main); the callgrind file shows them as calls
// from a function "(outside any region)" without cost of its own.
struct ProfileCall {
  uint32_t caller = kNoCaller;
  uint32_t callee = 0;
  uint64_t calls = 0;
  std::vector<uint64_t> inclusive;
};

struct Profile {
  std::string program;  // written as a comment
  std::string command;  // "cmd:" line (omitted when empty)
  // Callgrind event names: a letter, then letters, digits or '_', e.g.
  // "Time_ns", "Instances", "PAPI_L1_DCM".
  std::vector<std::string> events;
  std::vector<std::string> event_descriptions;  // empty, or one long name per event ("event:" lines)
  std::vector<Region> regions;
  std::vector<ProfileFunction> functions;
  std::vector<ProfileCall> calls;
};

// Writes `profile` as a callgrind file (Callgrind Format version 1), with the
// same atomic-output and I/O-error rules as the trace writers. Fails on
// invalid profiles: no events, bad event names, cost vectors of the wrong
// length, references to undefined regions, duplicate functions, newlines in
// names, call edges with 0 calls. Thread safe.
bool write_callgrind(const std::string& path, const Profile& profile, std::string& error);

// Builds a profile with the events "Time_ns" (timestamps converted with
// timer_resolution) and "Instances" from a trace's enter/leave events: self
// time per region and one call edge per (caller, callee) pair, the caller
// being the enclosing region on the same location (kNoCaller at the
// outermost level). Metric events are ignored. Fails when enters and leaves
// do not nest (a leave of another region than the innermost open one) or
// when events refer to undefined definitions; instances still open at the
// end are ignored. Thread safe.
bool build_profile(const TraceDefinitions& defs, const std::vector<TraceEvent>& events,
                   Profile& profile, std::string& error);

}  // namespace mri::exporters

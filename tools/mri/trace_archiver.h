// The trace archiver of `mri trace`: the call-back that drains the
// program's trace rings (MRI_Get_Trace_Records(), 8192 records a call)
// into a VTF3 or OTF2 writer of tools/exporters, and the --region filter
// for regions not published at the start (C++ scopes).
//
// Errors: the first write error is kept in Archiver::error; the records
// after it are drained (so the program can finish) and dropped.
// Thread safety: libmri runs the call-back on the thread that waits
// (MRI_Wait()), mri's main thread; nothing else touches the archiver
// meanwhile.
#pragma once

#include "mri.h"
#include "mri_export.h"
#include "region_lookup.h"

#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace mri::cli {

struct Archiver {
  std::unique_ptr<mri::exporters::TraceWriter> writer;
  std::map<RegionKey, uint32_t> regions;
  // Packed spec -> id: the per-record lookup (a std::map of tuples cost a
  // third of the archiver's time).
  std::unordered_map<uint64_t, uint32_t> fast;
  std::vector<uint8_t> location_known;  // by thread id
  size_t threads = 0;                   // threads with records: the locations defined, not the highest id + 1
  std::vector<mri::exporters::TraceEvent> events;
  std::string error;  // the first write error; later records are drained and dropped
  unsigned long long records = 0;
  time_t last_progress = 0;
  bool progress = false;  // a progress line on stderr every 2 s (a terminal)

  // --region values naming no region published at the start (a C++ scope
  // publishes its region when it first runs): the monitor then traces
  // every region, and the archiver keeps the records of the named
  // regions' instances and, with `subregions`, of those nested in them on
  // the same thread. The names are matched as regions get published.
  bool filtering = false;
  bool subregions = true;
  std::vector<RegionValue> late;  // the values of regions not published at the start
  std::vector<uint8_t> selected;  // by region id: named by a --region value
  struct Open {
    uint32_t region;
    bool inside;  // an instance of a selected region, or nested in one
  };
  std::vector<std::vector<Open>> open;  // by thread: the instances open, innermost last
  unsigned long long left_out = 0;      // records outside the --region instances
  unsigned long long out_of_step = 0;   // exits that did not close the innermost open instance (records discarded)
};

// The archiver of this run (the call-back takes no argument).
Archiver& archiver();

// The call-back for MRI_Register_Call_Back_Function().
void archive_records();

// Defines thread `thread`'s location for the writer, once. It counts in
// the summary's threads (Archiver::threads) unless `counted` is false (the
// main thread's location of a trace without events, defined last). false
// on a write error (in a.error).
bool add_location(Archiver& a, int thread, bool counted = true);

}  // namespace mri::cli

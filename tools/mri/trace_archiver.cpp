// The trace archiver of `mri trace` (trace_archiver.h).
#include "trace_archiver.h"

#include <cstdio>

namespace mri::cli {

namespace {

Archiver g_archiver;

// A region spec packed into one word, for the archiver's per-record lookup.
uint64_t packed(const MRI_Region_Spec& r) {
  return (uint64_t(uint32_t(r.type)) << 56) ^ (uint64_t(uint32_t(r.id.file_ID)) << 32) ^ uint32_t(r.id.line_NR);
}

// Marks the regions published during the run, from `first` on, that a
// late --region value names. (Those the other values name were published
// at the start and marked then.)
void select_regions(Archiver& a, const std::vector<mri::exporters::Region>& all, size_t first) {
  if (!a.filtering) return;
  a.selected.resize(all.size(), 0);
  for (size_t r = first; r < all.size(); ++r)
    for (const auto& v : a.late) a.selected[r] = a.selected[r] || region_value_matches(v, all[r].name, all[r].file, all[r].line);
}

// Whether the record of `region` (entered or left) on `thread` is kept: it
// belongs to an instance of a selected region or, with subregions, lies
// inside one. Enters and leaves nest per thread (a region left by an
// exception or longjmp is left by its guard), so the stack of the thread's
// open instances tells inside from outside; each remembers whether it is.
//
// Unless records were discarded (a thread whose ring stayed full beyond
// MRI_TRACE_WAIT_MS, docs/api.md 4.4): then an exit may come whose enter
// was lost, or an enter whose exit was lost. A count of open instances
// would stay out of step from then on (a lost exit of the selected region
// would keep every later record of the thread; a lost enter inside it would
// end it early and leave out its exit). The stack resynchronises at the
// next exit it can match: an exit closes the innermost open instance of its
// region, and the instances above it, whose exits were lost, with it; an
// exit of no open instance is left out, so every exit kept has its enter
// kept.
bool keep_record(Archiver& a, int thread, uint32_t region, bool enter) {
  const bool named = region < a.selected.size() && a.selected[region];
  if (!a.subregions) return named;
  if (size_t(thread) >= a.open.size()) a.open.resize(size_t(thread) + 1);
  std::vector<Archiver::Open>& stack = a.open[size_t(thread)];
  if (enter) {
    const bool inside = named || (!stack.empty() && stack.back().inside);
    stack.push_back({region, inside});
    return inside;
  }
  size_t k = stack.size();
  while (k > 0 && stack[k - 1].region != region) --k;
  if (k != stack.size()) ++a.out_of_step;
  if (k == 0) return false;
  const bool inside = stack[k - 1].inside;
  stack.resize(k - 1);
  return inside;
}

// Region index of a record; regions published after the start are
// announced to the writer when they first appear.
bool region_of(Archiver& a, const MRI_Region_Spec& spec, uint32_t& id) {
  const uint64_t k = packed(spec);
  if (auto f = a.fast.find(k); f != a.fast.end()) {
    id = f->second;
    return true;
  }
  auto it = a.regions.find(key_of(spec));
  if (it != a.regions.end()) {
    id = it->second;
    a.fast.emplace(k, id);
    return true;
  }
  std::vector<mri::exporters::Region> all;
  auto fresh = region_indices(&all);
  for (const auto& r : all)  // ids are publication order: the new ones come after the known ones
    if (r.id >= a.regions.size() && !a.writer->add_region(r, a.error)) return false;
  const size_t known = a.regions.size();
  a.regions = fresh;
  select_regions(a, all, known);
  it = a.regions.find(key_of(spec));
  if (it == a.regions.end()) {
    a.error = "a trace record names a region the program never published";
    return false;
  }
  id = it->second;
  a.fast.emplace(k, id);
  return true;
}

}  // namespace

Archiver& archiver() { return g_archiver; }

bool add_location(Archiver& a, int thread, bool counted) {
  if (size_t(thread) < a.location_known.size() && a.location_known[size_t(thread)]) return true;
  if (size_t(thread) >= a.location_known.size()) a.location_known.resize(size_t(thread) + 1, 0);
  mri::exporters::Location loc;
  loc.id = uint32_t(thread);
  MRI_Active_Object_Spec ao{MRI_THREAD, thread};
  MRI_Active_Object_Info info;
  if (MRI_Get_Active_Object_Info(&ao, &info) == MRI_OK) {
    loc.name = std::string("thread ") + std::to_string(thread) + (info.name[0] ? std::string(" ") + info.name : "");
    loc.os_tid = info.os_id;
  } else {
    loc.name = "thread " + std::to_string(thread);
  }
  a.location_known[size_t(thread)] = 1;
  a.threads += counted;
  return a.writer->add_location(loc, a.error);
}

void archive_records() {
  Archiver& a = g_archiver;
  static MRI_Trace_Element_Spec chunk[8192];
  int n;
  while ((n = MRI_Get_Trace_Records(chunk, 8192)) > 0) {
    a.records += unsigned(n);
    if (!a.error.empty()) continue;  // drain, so the program can finish
    a.events.clear();
    for (int i = 0; i < n; ++i) {
      const MRI_Trace_Element_Spec& r = chunk[i];
      uint32_t region;
      if (!region_of(a, r.region, region)) break;
      const bool enter = r.data == MRI_TRACE_ENTER;
      if (a.filtering && !keep_record(a, r.active_object.id, region, enter)) {
        ++a.left_out;
        continue;
      }
      if (!add_location(a, r.active_object.id)) break;
      mri::exporters::TraceEvent ev;
      ev.timestamp = r.timestamp;
      ev.location = uint32_t(r.active_object.id);
      ev.region = region;
      ev.kind = enter ? mri::exporters::EventKind::Enter : mri::exporters::EventKind::Leave;
      ev.synthetic = !enter && (r.data & MRI_TRACE_SYNTHETIC);
      a.events.push_back(ev);
    }
    if (a.error.empty()) a.writer->write(a.events.data(), a.events.size(), a.error);
  }
  if (a.progress && time(nullptr) - a.last_progress >= 2) {
    a.last_progress = time(nullptr);
    std::fprintf(stderr, "\rmri trace: %llu records written", a.records);
  }
}

}  // namespace mri::cli

// registry.cpp - regions: the descriptors the program registers (by module
// section, or one by one for C++ scopes and dlopen()ed modules), the
// publication of the static information at the first event, and regions
// published later.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "monitor_internal.h"
#include "mri_sync.h"
#include "plan.h"
#include "clock.h"

namespace mri::monitor {
namespace {

using proto::AppState;
using proto::StopReason;

proto::AppControl& app() { return g.view.header()->app; }
}  // namespace

// Regions may be published after the first publication (registered at
// their first execution): the plan array never moves once reserved, so
// threads reading it need no lock while one is appended.
void reserve_plans() {
  g.plans.reserve(g.view.g.max_regions);
  g.plan = g.plans.data();
  std::atomic_ref<uint32_t>(g.plan_count).store(uint32_t(g.plans.size()), std::memory_order_release);
}

bool intern(std::string_view s, uint32_t& off, uint32_t& len) {
  proto::View& v = g.view;
  if (g.string_pool_used + s.size() + 1 > v.g.string_pool_bytes) return false;
  std::memcpy(v.strings() + g.string_pool_used, s.data(), s.size());
  v.strings()[g.string_pool_used + s.size()] = '\0';
  off = g.string_pool_used;
  len = uint32_t(s.size());
  g.string_pool_used += uint32_t(s.size()) + 1;
  sync::store(app().string_pool_used, g.string_pool_used);
  return true;
}

// Publishes one descriptor: its file and region records (descriptors with
// the same type, file and line share one region). Needs registry_mutex. Returns the region
// id, or -1 when a capacity is exhausted (counted as dropped).
int32_t publish_region(Monitor_Region_Descriptor* d) {
  proto::View& v = g.view;
  // A name that does not fit is published empty, and said.
  auto intern_or_empty = [&v](const char* s, uint32_t& off, uint32_t& len) {
    const std::string_view name = s ? s : "";
    if (intern(name, off, len)) return;
    if (!name.empty())
      note_error("%u region or file name(s) published empty: the name pool (%u bytes) is full; "
                 "those regions are still measured, known by their file and line",
                 ++g.names_emptied, v.g.string_pool_bytes);
    if (name.empty() || !intern("", off, len)) off = len = 0;  // not even room for the terminator
  };
  auto drop = [d]() {
    d->id = -1;
    sync::store(app().regions_dropped, sync::load(app().regions_dropped) + 1);
    return int32_t(-1);
  };
  const std::string file = d->file ? d->file : "?";
  auto fit = g.file_ids->find(file);
  uint32_t file_id;
  if (fit == g.file_ids->end()) {
    if (g.file_ids->size() >= v.g.max_files) return drop();
    file_id = uint32_t(g.file_ids->size());
    g.file_ids->emplace(file, file_id);
    proto::FileRecord* fr = v.file(file_id);
    intern_or_empty(file.c_str(), fr->name_offset, fr->name_len);
    sync::store(app().file_count, file_id + 1);
  } else {
    file_id = fit->second;
  }
  // A region is identified by type, file and first line (MRI_Region_Spec);
  // descriptors that agree on those share one region and its first name.
  const std::string key = std::to_string(d->type) + ':' + std::to_string(file_id) + ':' + std::to_string(d->line);
  auto rit = g.region_ids->find(key);
  if (rit != g.region_ids->end()) return d->id = int(rit->second);
  if (g.region_first.size() >= v.g.max_regions) return drop();
  const uint32_t id = uint32_t(g.region_first.size());
  g.region_ids->emplace(key, id);
  g.region_first.push_back(d);
  proto::RegionRecord* r = v.region(id);
  r->type = d->type;
  r->line = d->line;
  r->file_id = file_id;
  intern_or_empty(d->name, r->name_offset, r->name_len);
  sync::store(app().region_count, id + 1);  // release: the record is complete
  return d->id = int(id);
}

void publish_once(bool at_end) {
  static std::once_flag once;
  std::call_once(once, [at_end] {
    if (g.mode.load() != kStopped || !g.view.base) return;
    std::lock_guard<std::mutex> lock(g.registry_mutex);
    clock::Calibration cal = clock::calibrate();
    g.tsc = cal.kind == clock::Kind::kTsc;
    app().ns_per_tick = cal.ns_per_tick;
    calibrate_at_start();
    sync::store(app().trace_epoch, ticks());
    sync::store(app().timer_kind, uint32_t(cal.kind));
    g.file_ids = new std::unordered_map<std::string, uint32_t>;
    g.region_ids = new std::unordered_map<std::string, uint32_t>;
    g.region_first.clear();
    // PROGRAM regions first: when the region table is too small
    // (MRI_MAX_REGIONS), the regions it cannot hold are the last ones
    // published, and a profile without its PROGRAM region has no whole
    // to give percentages of. The others in the order of their modules'
    // sections (a compiler may put a file's descriptors there in reverse
    // order of their lines: gcc does).
    for (auto* d : g.descriptors)
      if (d->type == MRI_REGION_PROGRAM) publish_region(d);
    for (auto* d : g.descriptors)
      if (d->type != MRI_REGION_PROGRAM) publish_region(d);
    data_publish_pending();
    sources_publish();
    g.plans.assign(g.region_first.size(), RegionPlan{});
    reserve_plans();
    g.published = true;

    if (!start_control_thread()) {
      refuse("cannot start the control thread", true);
      return;
    }
    catch_termination_signals();
    if (!at_end) publish_state(AppState::kStopped, StopReason::kLoaded, -1, false);
  });
}

}  // namespace mri::monitor

using namespace mri::monitor;

extern "C" {

__attribute__((constructor)) static void monitor_attach_at_start() { attach_from_environment(); }

void Monitor_Register_Regions(Monitor_Region_Descriptor* begin, Monitor_Region_Descriptor* end) {
  if (!begin || !end || begin >= end) return;
  std::unique_lock<std::mutex> lock(g.registry_mutex);
  for (const void* m : g.modules)
    if (m == begin) return;
  g.modules.push_back(begin);
  const bool gate = g.mode.load() == kStopped && !g.published;
  for (auto* d = begin; d < end; ++d) {
    if (g.published) {
      // A module loaded after the static information went out (dlopen).
      lock.unlock();
      Monitor_Register_Region(d);
      lock.lock();
      continue;
    }
    g.descriptors.push_back(d);
    if (gate) __atomic_store_n(&d->armed, 1, __ATOMIC_RELAXED);
  }
}

void Monitor_Unregister_Module(const void* address_in_module) {
  // Only an attached monitor touches descriptors after this (at a release,
  // a detach or the end). At the process's exit every module's destructors
  // come here too: after Monitor_Final they return at once; before it (the
  // program's own, here) they drop the module's descriptors (or copy them,
  // not yet published), and Monitor_Final disarms the rest (the slow paths
  // do nothing once it ran).
  const uint32_t m = g.mode.load();
  if (m != kRunning && m != kStopped) return;
  Dl_info self;
  if (!address_in_module || dladdr(address_in_module, &self) == 0) return;
  auto in_module = [&self](const void* p) {
    Dl_info info;
    return dladdr(p, &info) != 0 && info.dli_fbase == self.dli_fbase;
  };
  std::lock_guard<std::mutex> control(g.control_mutex);
  std::lock_guard<std::mutex> registry(g.registry_mutex);
  if (!g.published) {
    // Not published yet (a program that ends before its first region comes
    // here from exit()): the module's regions are published later, by the
    // first region or Monitor_Final, from copies that outlive the module.
    // Publishing here instead would stop the program in its exit path,
    // where the tool could release it and apply its requests before
    // Monitor_Final ends it: requests in place for a program that never
    // ran a region.
    for (auto*& d : g.descriptors)
      if (in_module(d)) d = lasting_descriptor(*d);
    std::erase_if(g.modules, in_module);
    return;
  }
  std::erase_if(g.descriptors, in_module);
  std::erase_if(g.modules, in_module);
  for (auto& first : g.region_first)
    if (first && in_module(first)) first = nullptr;  // only its count is used; no pointer into the module kept
}

int Monitor_Register_Region(Monitor_Region_Descriptor* d) {
  if (!d) return -1;
  // The control mutex keeps this away from a reconfiguration (which rebuilds
  // the plans) and from a detach (which unmaps the segment).
  std::lock_guard<std::mutex> control(g.control_mutex);
  return register_region_locked(d);
}

}  // extern "C"

namespace mri::monitor {

Monitor_Region_Descriptor* lasting_descriptor(const Monitor_Region_Descriptor& d) {
  auto* copy = new Monitor_Region_Descriptor(d);
  copy->name = d.name ? strdup(d.name) : nullptr;
  copy->file = d.file ? strdup(d.file) : nullptr;
  return copy;
}

// Monitor_Register_Region with g.control_mutex held by the caller.
int register_region_locked(Monitor_Region_Descriptor* d) {
  std::lock_guard<std::mutex> registry(g.registry_mutex);
  for (auto* known : g.descriptors)
    if (known == d) return d->id;
  g.descriptors.push_back(d);
  const uint32_t m = g.mode.load();
  if (!g.published) {
    // Published with the rest; armed at the gate like the others.
    if (m == kStopped) __atomic_store_n(&d->armed, 1, __ATOMIC_RELAXED);
    return -1;
  }
  if ((m != kRunning && m != kStopped) || !g.view.base) return -1;
  const int32_t id = publish_region(d);
  if (id < 0) return -1;
  if (uint32_t(id) == g.plans.size() && g.plans.size() < g.plans.capacity()) {
    // A new region: it joins the requests over every region.
    RegionPlan p;
    p.prof_begin = g.all_prof_begin;
    p.n_prof = g.all_prof_count;
    p.trace_begin = g.all_trace_begin;
    p.n_trace = g.all_trace_count;
    derive_trace_plan(p, g.traces + p.trace_begin, p.n_trace);
    p.measure = p.n_prof > 0 || p.trace_values;
    p.armed = p.measure || p.n_trace;
    bool callpath = false;
    for (uint32_t k = 0; k < p.n_prof; ++k) {
      const uint32_t slice = g.slices[p.prof_begin + k];
      if (g.slice_value[slice].kind == uint8_t(ValueKind::kReading)) p.readings = 1;
      callpath |= g.slice_callpath[slice];
      p.unwind |= g.slice_unwind[slice];
    }
    set_plan_overhead(p, callpath);
    g.plans.push_back(p);  // within the reserved capacity: the array does not move
    std::atomic_ref<uint32_t>(g.plan_count).store(uint32_t(g.plans.size()), std::memory_order_release);
  }
  const uint32_t count = std::atomic_ref<uint32_t>(g.plan_count).load(std::memory_order_relaxed);
  const unsigned char armed = m == kStopped ? 1 : (uint32_t(id) < count ? g.plan[id].armed : 0);
  __atomic_store_n(&d->armed, armed, __ATOMIC_RELAXED);
  return id;
}

}  // namespace mri::monitor

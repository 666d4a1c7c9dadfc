// segment_in_memory.h - a segment in ordinary memory and a Session on it,
// as MRI_Application_Load leaves them, without a process: what the unit
// tests of libmri's placement and readers run on.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

#include "launch.h"
#include "mri_protocol.h"
#include "mri_sync.h"
#include "session.h"

namespace mri::tool::testing {

// A small geometry: every area is a few pages, and the limits are reached
// with a few requests.
inline proto::Geometry small_geometry() {
  proto::Geometry g{};
  g.max_regions = 8;
  g.max_threads = 4;
  g.max_requests = 4;
  g.max_profile_slices = 2;
  g.max_files = 4;
  g.string_pool_bytes = 4096;
  g.trace_records = 16;
  g.max_edges = 8;
  return g;
}

// A zeroed segment of the layout of `g`, page-aligned as shmat gives it.
class SegmentInMemory {
 public:
  explicit SegmentInMemory(const proto::Geometry& g = small_geometry()) {
    view_.g = g;
    view_.l = proto::compute_layout(g);
    view_.base = static_cast<unsigned char*>(std::aligned_alloc(4096, view_.l.total));
    std::memset(view_.base, 0, view_.l.total);
    proto::Header* h = view_.header();
    h->geometry = g;
    h->app.ns_per_tick = 1.0;
  }
  ~SegmentInMemory() { std::free(view_.base); }
  SegmentInMemory(const SegmentInMemory&) = delete;
  SegmentInMemory& operator=(const SegmentInMemory&) = delete;

  const proto::View& view() const { return view_; }
  proto::AppControl& app() const { return view_.header()->app; }
  uint64_t bytes() const { return view_.l.total; }

  // Publishes as the application does: a source file, a region in it
  // (its index), the threads in use.
  uint32_t publish_file(const std::string& name) {
    const uint32_t i = app().file_count;
    *view_.file(i) = proto::FileRecord{add_string(name), uint32_t(name.size())};
    sync::store(app().file_count, i + 1);
    return i;
  }
  uint32_t publish_region(MRI_Region_Type type, uint32_t file, int line, const std::string& name) {
    const uint32_t i = app().region_count;
    *view_.region(i) = proto::RegionRecord{uint32_t(type), line, file, add_string(name), uint32_t(name.size()), 0};
    sync::store(app().region_count, i + 1);
    return i;
  }
  void set_threads(uint32_t n) { sync::store(app().thread_count, n); }

 private:
  uint32_t add_string(const std::string& text) {
    const uint32_t at = app().string_pool_used;
    std::memcpy(view_.strings() + at, text.data(), text.size());
    sync::store(app().string_pool_used, uint32_t(at + text.size() + 1));  // names end below the used mark
    return at;
  }

  proto::View view_;
};

// A session with `segment` loaded as its current run (no process: the
// application reads as gone, so its status is TERMINATED), after the
// static information is read.
inline void load_in_memory(Session& s, const SegmentInMemory& segment) {
  s.initialized = true;
  start_run(s, segment.view(), -1);
  s.loaded = true;
  s.pid = -1;  // no process: child_exited() is true
  s.ns_per_tick = segment.view().header()->app.ns_per_tick;
  refresh_static_information(s);
}

}  // namespace mri::tool::testing

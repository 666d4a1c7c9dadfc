// row_reader.h - reading an application thread's result rows from the
// segment: how many rows are in use, and a consistent copy of one thread's
// rows under its sequence word. Pure functions of a proto::View (no
// session): the unit tests and fuzz targets run them on a segment in
// memory.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>

#include "mri_protocol.h"
#include "mri_sync.h"

namespace mri::tool {

// Thread rows the application has in use, bounded by the geometry: the
// count comes from the untrusted segment.
inline uint32_t thread_rows(const proto::View& v) {
  return std::min(std::atomic_ref<uint32_t>(v.header()->app.thread_count).load(std::memory_order_acquire),
                  v.g.max_threads);
}

// Runs `copy` (which copies thread `thread`'s rows out of the segment)
// until it ran while the thread's sequence word (AggregateRowHead::seq)
// stayed even and unchanged: true. A word that stays odd (the thread died
// mid-update, which `application_gone` says after 100 tries, or a corrupt
// segment) ends the retries after at most 10000 tries (about 0.1 s): the
// copy is then taken as it is, false. A thread beyond the geometry is not
// read (false, `copy` not run).
// A template, not a std::function: a copy that captures more than two
// references would be allocated on the heap at every call, once per
// thread and MRI_Get_Data.
template <class Copy>
bool read_thread_consistent(const proto::View& v, uint32_t thread, Copy&& copy,
                            const std::function<bool()>& application_gone) {
  if (thread >= v.g.max_threads) return false;
  const uint32_t& seq = v.row_head(thread)->seq;
  for (int attempt = 0; attempt < 10000; ++attempt) {
    const uint32_t a = sync::load(seq);
    if (a & 1) {
      if (attempt > 100 && application_gone()) break;  // died mid-update: take what is there
      if (attempt > 100) usleep(10);
      continue;
    }
    copy();
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sync::load(seq) == a) return true;
  }
  copy();
  return false;
}

}  // namespace mri::tool

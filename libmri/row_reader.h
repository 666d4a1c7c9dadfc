// row_reader.h - reading an application thread's result rows from the
// segment: how many rows are in use, and a consistent copy of one thread's
// rows under its sequence word. Pure functions of a proto::View (no
// session): the unit tests and fuzz targets run them on a segment in
// memory.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>

#include "mri_protocol.h"

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
bool read_thread_consistent(const proto::View& v, uint32_t thread, const std::function<void()>& copy,
                            const std::function<bool()>& application_gone);

}  // namespace mri::tool

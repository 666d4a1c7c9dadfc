// row_reader.cpp - a consistent copy of a thread's result rows.
#include "row_reader.h"

#include <unistd.h>

#include "mri_sync.h"

namespace mri::tool {

bool read_thread_consistent(const proto::View& v, uint32_t thread, const std::function<void()>& copy,
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

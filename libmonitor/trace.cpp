// trace.cpp - the slow side of the per-thread trace rings.
//
// Each thread owns one single-producer ring in the segment. The hot path
// (trace_append in monitor_internal.h) writes a record and release-stores
// the new head: no lock, no syscall. It comes here only when its head
// reaches trace_limit, the tool's tail plus the ring's capacity as last
// read, or when records are stashed.
//
// When the ring is really full the thread waits for the tool to make room
// (paper 4.4: "the application execution stops until the buffer is again
// empty"): it signals the tool and futex-waits on the tool's tail word,
// checking every millisecond that the tool lives and that the world is not
// being stopped. The wait is bounded (ToolControl::trace_wait_ms, 10 s by
// default); after it, or once the tool is gone, records are discarded and
// counted, never lost uncounted: per thread, head + discarded = records
// emitted. Time spent waiting is shifted out of the thread's open frames,
// like time parked at a breakpoint.
#include <cstring>

#include "monitor_internal.h"
#include "mri_sync.h"
#include "clock.h"

namespace mri::monitor {
namespace {

constexpr long kWaitPollNs = 1'000'000;  // re-check liveness and mode every 1 ms

// Reads the tool's tail and moves the limit. True when there is room.
bool refresh_limit(ThreadState* ts) {
  const uint64_t tail = __atomic_load_n(&ts->ring_tail->tail, __ATOMIC_ACQUIRE);
  const uint64_t capacity = ts->ring_mask + 1;
  // A corrupt tail (ahead of the head, or far behind) must not let us
  // overwrite unread records or compute a huge limit.
  if (tail > ts->trace_head || ts->trace_head - tail > capacity) return false;
  ts->trace_limit = tail + capacity;
  if (ts->trace_head == ts->trace_limit) return false;
  ts->trace_gave_up = false;  // the tool makes room again
  return true;
}

void count_discarded(ThreadState* ts, uint64_t n) {
  __atomic_store_n(&ts->ring_head->discarded, ts->ring_head->discarded + n, __ATOMIC_RELEASE);
}

enum class WaitResult { kRoom, kStopping, kGone };

// Waits for room in the ring. kStopping: the world is being stopped or
// ended (the caller stashes); kGone: the tool died or the bound expired.
WaitResult wait_for_room(ThreadState* ts, bool any_mode) {
  const uint64_t t0 = ticks();
  const uint64_t deadline = sync::monotonic_ns() + g.trace_wait_ns;
  proto::AppControl& app = g.view.header()->app;
  trace_publish_head(ts);  // the tool must see every record to make room
  __atomic_store_n(&ts->ring_head->waits, ts->ring_head->waits + 1, __ATOMIC_RELAXED);
  __atomic_store_n(&ts->ring_head->waiting, 1u, __ATOMIC_RELAXED);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // waiting before the tail re-read (the tool checks it after moving the tail)
  sync::bump(app.trace_signal);
  sync::futex_wake_shared(&app.trace_signal);
  WaitResult result;
  for (;;) {
    const uint32_t seq = sync::load(ts->ring_tail->tail_seq);
    if (refresh_limit(ts)) {
      result = WaitResult::kRoom;
      break;
    }
    if (!any_mode && g.mode.load(std::memory_order_acquire) != kRunning) {
      result = WaitResult::kStopping;
      break;
    }
    if (!tool_is_alive() || sync::monotonic_ns() > deadline) {
      result = WaitResult::kGone;
      break;
    }
    sync::futex_wait_shared(&ts->ring_tail->tail_seq, seq, kWaitPollNs);
  }
  __atomic_store_n(&ts->ring_head->waiting, 0u, __ATOMIC_RELAXED);
  const uint64_t waited = ticks() - t0;
  __atomic_store_n(&ts->ring_head->wait_ticks, ts->ring_head->wait_ticks + waited, __ATOMIC_RELAXED);
  // The wait is the monitor's, not the program's: shift it out of every
  // open frame (the instance being closed, if any, was popped already).
  for (uint32_t i = 0; i < ts->depth; ++i) ts->frames[i].start += waited;
  return result;
}

// Moves stashed records into the ring while there is room.
void drain_stash(ThreadState* ts) {
  uint32_t moved = 0;
  while (moved < ts->stashed && ts->trace_head < ts->trace_limit) trace_put(ts, ts->stash[moved++]);
  if (moved) {
    std::memmove(ts->stash, ts->stash + moved, (ts->stashed - moved) * sizeof(proto::TraceRecord));
    ts->stashed -= moved;
  }
}

}  // namespace

void trace_attach_thread(ThreadState* ts) {
  const proto::View& v = g.view;
  ts->ring_head = v.trace_head(ts->index);
  ts->ring_tail = v.trace_tail(ts->index);
  if (v.g.trace_records == 0) return;  // no ring: every record is discarded (the tool refuses trace requests then)
  ts->ring = v.trace_ring(ts->index);
  ts->ring_mask = v.g.trace_records - 1;
  ts->trace_head = 0;
  ts->trace_limit = v.g.trace_records;
}

void trace_append_slow(ThreadState* ts, const proto::TraceRecord& rec) {
  if (!ts->ring) return count_discarded(ts, 1);
  for (;;) {
    if (ts->trace_head >= ts->trace_limit) refresh_limit(ts);
    drain_stash(ts);
    if (ts->stashed == 0 && ts->trace_head < ts->trace_limit) {
      trace_put(ts, rec);
      if (ts->trace_head == ts->trace_limit) refresh_limit(ts);  // keep the fast path's test exact
      return;
    }
    if (ts->trace_gave_up) break;  // the tool did not make room within the bound: no second wait
    const WaitResult w = wait_for_room(ts, false);
    if (w == WaitResult::kRoom) continue;
    if (w == WaitResult::kStopping) {
      // The world is being stopped: keep the record aside. The thread's
      // next event moves it into the ring before it makes records of its
      // own (trace_drain_stash, through the fixup), so the stash holds the
      // records of one event at most, however often the tool stops the
      // program while the ring is full. Order kept: the limit equals the
      // head, so a later append of this event comes here too.
      if (ts->stashed < kStashRecords) {
        ts->stash[ts->stashed++] = rec;
        ts->trace_limit = ts->trace_head;
        ts->fixup.store(1, std::memory_order_relaxed);
        return;
      }
      break;
    }
    ts->trace_gave_up = true;  // gone, or the bound expired
    break;
  }
  count_discarded(ts, 1);
}

namespace {
// Moves the stashed records into the ring, waiting for room within the
// bound; what still does not fit then (or once the tool is gone) is
// counted as discarded. At the end (`at_end`) the wait ignores the mode;
// otherwise a stop of the world ends it and false is returned, the records
// still stashed.
bool move_stash(ThreadState* ts, bool at_end) {
  if (!ts->ring || ts->stashed == 0) return true;
  for (;;) {
    refresh_limit(ts);
    drain_stash(ts);
    if (ts->stashed == 0) return true;
    if (ts->trace_gave_up) break;
    const WaitResult w = wait_for_room(ts, at_end);
    if (w == WaitResult::kRoom) continue;
    if (w == WaitResult::kStopping) return false;
    ts->trace_gave_up = true;  // gone, or the bound expired
    break;
  }
  trace_discard_stash(ts);
  return true;
}
}  // namespace

bool trace_drain_stash(ThreadState* ts) { return move_stash(ts, false); }

void trace_flush_stash(ThreadState* ts) { move_stash(ts, true); }

void trace_discard_stash(ThreadState* ts) {
  if (ts->stashed && ts->ring_head) count_discarded(ts, ts->stashed);
  ts->stashed = 0;
}

}  // namespace mri::monitor

// results.h - the one place where an application thread writes its result
// slots in the segment (AggregateSlot, ProfileSlot, EdgeSlot, histogram
// rows): the core's hot path and every source that measures requests
// itself use these.
//
// A thread's slots sit under its sequence word (AggregateRowHead::seq):
// odd while the thread changes them, so that the tool, which reads them
// while the thread runs, retries a torn copy (libmri, read_thread_consistent).
// Only the owning thread writes its slots (the end of monitoring writes
// another thread's only while that one is quiescent).
#pragma once

#include <atomic>
#include <cstdint>

#include "mri_protocol.h"
#include "mri_sync.h"

namespace mri::monitor {

// Opens and closes the thread's sequence-locked section (odd inside).
inline void seq_begin(uint32_t* seq) {
  sync::store(*seq, *seq + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}
inline void seq_end(uint32_t* seq) { sync::store(*seq, *seq + 1); }

// The section as a scope.
class SeqSection {
 public:
  explicit SeqSection(uint32_t* seq) : seq_(seq) { seq_begin(seq_); }
  ~SeqSection() { seq_end(seq_); }
  SeqSection(const SeqSection&) = delete;
  SeqSection& operator=(const SeqSection&) = delete;

 private:
  uint32_t* seq_;
};

// One instance into an aggregate slot: `v` its value, `cv` its compensated
// value (at least 0: the compensated minimum and maximum), `csum` what it
// adds to the compensated sum (signed modulo 2^64, unclamped as in
// profiles, so that a SUM or AVG over a region is its profile's
// compensated inclusive time). For counts, cv = csum = v. Inside the
// thread's sequence-locked section.
// Minima are kept complemented: zeroed memory is "none yet", so there is
// no first-instance test (0.4 ns a pair, bench/run_ladder.sh aggregate rung).
// Branches, not conditional moves: a predicted branch breaks the chain
// through memory from one instance to the next (cmov: +4 ns a pair, the
// same rung).
__attribute__((always_inline)) inline void add_to_aggregate(proto::AggregateSlot* s, uint64_t v, uint64_t cv,
                                                            uint64_t csum) {
  if (~v > s->not_min) s->not_min = ~v;
  if (v > s->max) s->max = v;
  if (~cv > s->not_comp_min) s->not_comp_min = ~cv;
  if (cv > s->comp_max) s->comp_max = cv;
  s->sum += v;
  s->comp_sum += csum;
  s->count += 1;
}

// One instance into a profile or edge slot (ProfileSlot, EdgeSlot): the
// inclusive values only for the outermost instance of a region on the
// thread (recursion counts once). Inside the thread's sequence-locked
// section.
template <typename Slot>
__attribute__((always_inline)) inline void add_instance(Slot* s, uint64_t inclusive, uint64_t exclusive,
                                                        uint64_t comp_inclusive, uint64_t comp_exclusive,
                                                        bool outermost) {
  s->calls += 1;
  if (outermost) {
    s->inclusive += inclusive;
    s->comp_inclusive += comp_inclusive;
  }
  s->exclusive += exclusive;
  s->comp_exclusive += comp_exclusive;
}

}  // namespace mri::monitor

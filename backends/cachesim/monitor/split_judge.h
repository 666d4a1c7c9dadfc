// split_judge.h - the automatic split's decisions, window by window
// (cache_worker.cpp, decide_split; why each rule, with its measurements:
// docs/design/0009-split-by-cache-line.md). Pure: it sees each window's
// time per reference, all told, and says when to split the simulator and
// when to join it again; the caller makes the move, times the windows and
// offers the model's prediction. ../tests/test_split_judge.cpp feeds it
// sequences of times. With these rules the C-monitored ijk multiply of
// bench/matmul.c stays split in 98% of its windows on a noisy virtual
// machine (0009, "On a noisy host", with the rules it was measured
// against; MRI_CACHESIM_SPLIT_LOG=1 shows every window).
#pragma once

#include <algorithm>
#include <cstdint>

namespace mri::monitor::cachesim {

class SplitJudge {
 public:
  // A trial is two windows split, bracketed by unsplit windows: the one
  // just before it and the second one after it (the first after it is
  // skipped: the simulation thread's queue, emptied by the split, makes it
  // look faster than it is, as the backlog the thread still holds makes
  // the trial's first window look slower).
  enum class Phase : uint8_t {
    kJoined,   // not split; at the end of a window, maybe a trial
    kTrial,    // split for the trial's two windows
    kControl,  // joined again for two windows, the second one judged
    kSplit,    // the trial paid: split for kRecheck windows, then kJoined
  };
  enum class Move : uint8_t { kNone, kSplit, kJoin };

  // Split this many windows, the simulator is joined to look again: the
  // program may have changed its ways. Each change copies the tags of the
  // levels with less than 1 MiB of them between the parts (larger levels
  // share one array: docs/design/0010-shared-tag-arrays.md), outside the
  // windows' time; a window is 0.2-20 ms.
  static constexpr uint32_t kRecheck = 256;
  // The wait after a trial that did not pay, doubled at each one that
  // does not, up to the maximum.
  static constexpr uint32_t kFirstBackoff = 32, kMaxBackoff = 8192;
  // Split, the time per reference must stay 30% away from the trial's, one
  // way, for this many windows in a row before the simulator is joined
  // again: on a shared virtual machine a single window away is noise as
  // often as not.
  static constexpr uint32_t kStrays = 3;
  static constexpr double kBand = 0.7;
  // A trial is kept when its faster window is at least 5% faster than the
  // faster of the windows around it.
  static constexpr double kGain = 0.95;

  // The end of a window whose time per reference, all told, was per_ref:
  // the move to make. `predicted()` says whether the model predicts that
  // splitting pays; it is asked only where a trial may start. A move
  // takes effect with moved().
  template <class Predict>
  Move end_window(double per_ref, Predict predicted) {
    ++windows_;
    pending_ = Move::kNone;
    switch (phase_) {
      case Phase::kJoined:
        if (wait_ > 0) {
          --wait_;
        } else if (predicted()) {
          before_ = per_ref;
          trial_ = 0;
          propose(Move::kSplit, Phase::kTrial);
        }
        break;
      case Phase::kTrial:
        // The faster window: the machine's noise only ever adds time.
        trial_ = trial_ == 0 ? per_ref : std::min(trial_, per_ref);
        if (windows_ >= 2) propose(Move::kJoin, Phase::kControl);
        break;
      case Phase::kControl:
        if (windows_ < 2) break;
        if (trial_ <= kGain * std::min(before_, per_ref)) {
          backoff_ = kFirstBackoff;
          strays_ = 0;
          propose(Move::kSplit, Phase::kSplit);
        } else {
          wait_ = backoff_;
          backoff_ = std::min(2 * backoff_, kMaxBackoff);
          enter(Phase::kJoined);
        }
        break;
      case Phase::kSplit:
        // Joined again after kRecheck windows, or when the time per
        // reference has stayed away from the trial's for kStrays windows:
        // the program has changed its ways (is_sort's phase of many misses
        // ends, and split, its next phase runs at half speed).
        if (trial_ > 0 && (per_ref < kBand * trial_ || per_ref > trial_ / kBand)) {
          const bool slower = per_ref > trial_;
          strays_ = strays_ > 0 && slower_ == slower ? strays_ + 1 : 1;
          slower_ = slower;
        } else {
          strays_ = 0;
        }
        if (windows_ >= kRecheck || strays_ >= kStrays) propose(Move::kJoin, Phase::kJoined);
        break;
    }
    return pending_;
  }

  // The move end_window() asked for was made (done), or another thread
  // had made it first (the phase stays; changed_elsewhere() follows).
  void moved(bool done) {
    if (done && pending_ != Move::kNone) enter(next_);
    pending_ = Move::kNone;
  }

  // Another thread split or joined the simulator: no trial of this
  // thread's to judge.
  void changed_elsewhere(bool split) {
    enter(split ? Phase::kSplit : Phase::kJoined);
    trial_ = 0;
    strays_ = 0;
  }

  Phase phase() const { return phase_; }

 private:
  void propose(Move m, Phase next) {
    pending_ = m;
    next_ = next;
  }
  void enter(Phase p) {
    phase_ = p;
    windows_ = 0;
  }

  Phase phase_ = Phase::kJoined;
  uint32_t windows_ = 0;  // ended in this phase
  double before_ = 0;     // ticks per reference, all told: the window before the trial
  double trial_ = 0;      // the trial's faster window; 0: none to compare with
  uint32_t wait_ = 0;     // windows before the next trial may start
  uint32_t backoff_ = kFirstBackoff;
  uint32_t strays_ = 0;   // split: windows in a row away from the trial's time, one way
  bool slower_ = false;   // which way
  Move pending_ = Move::kNone;
  Phase next_ = Phase::kJoined;
};

}  // namespace mri::monitor::cachesim

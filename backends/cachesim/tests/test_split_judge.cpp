// The automatic split's decisions (monitor/split_judge.h), fed with
// sequences of window times such as a noisy host gives.
#include <gtest/gtest.h>

#include <vector>

#include "split_judge.h"

using mri::monitor::cachesim::SplitJudge;
using Move = SplitJudge::Move;
using Phase = SplitJudge::Phase;

namespace {

// Ends one window of `per_ref` and makes the move it asks for. `predicted`
// is the model's answer; `asked` counts the times it was asked.
struct Windows {
  SplitJudge judge;
  bool predicted = true;
  int asked = 0;
  Move window(double per_ref) {
    const Move m = judge.end_window(per_ref, [&] {
      ++asked;
      return predicted;
    });
    judge.moved(true);
    return m;
  }
  // Windows of the same time; the moves they asked for, in order.
  std::vector<Move> windows(int n, double per_ref) {
    std::vector<Move> moves;
    for (int i = 0; i < n; ++i)
      if (const Move m = window(per_ref); m != Move::kNone) moves.push_back(m);
    return moves;
  }
  // From joined: a trial of two windows, then two control windows.
  Move trial(double before, double t1, double t2, double c1, double c2) {
    EXPECT_EQ(window(before), Move::kSplit);
    EXPECT_EQ(judge.phase(), Phase::kTrial);
    EXPECT_EQ(window(t1), Move::kNone);
    EXPECT_EQ(window(t2), Move::kJoin);
    EXPECT_EQ(judge.phase(), Phase::kControl);
    EXPECT_EQ(window(c1), Move::kNone);  // skipped: the emptied queue flatters it
    return window(c2);
  }
};

TEST(SplitJudge, KeepsATrialWhoseFasterWindowPays) {
  Windows r;
  // The first trial window three times the second (the host took the other
  // CPU away, or the backlog of whole batches): the faster one is judged.
  EXPECT_EQ(r.trial(30, 90, 22, 60, 30), Move::kSplit);
  EXPECT_EQ(r.judge.phase(), Phase::kSplit);
}

TEST(SplitJudge, JudgesAgainstTheFasterWindowAround) {
  Windows r;
  // 22 is 5% below neither 23 (before) nor 22.5 (the second control
  // window): no split, however slow the first control window.
  EXPECT_EQ(r.trial(23, 22, 40, 10, 22.5), Move::kNone);
  EXPECT_EQ(r.judge.phase(), Phase::kJoined);
  Windows s;
  EXPECT_EQ(s.trial(100, 22, 40, 10, 23), Move::kNone);  // 22 > 0.95 * 23
  Windows t;
  EXPECT_EQ(t.trial(24, 22, 40, 10, 24), Move::kSplit);  // 22 <= 0.95 * 24
}

TEST(SplitJudge, AFailedTrialWaitsTwiceAsLongEachTime) {
  Windows r;
  EXPECT_EQ(r.trial(30, 31, 32, 30, 30), Move::kNone);
  // 32 windows without asking the model, then a trial.
  r.asked = 0;
  EXPECT_TRUE(r.windows(SplitJudge::kFirstBackoff, 30).empty());
  EXPECT_EQ(r.asked, 0);
  EXPECT_EQ(r.trial(30, 31, 32, 30, 30), Move::kNone);
  EXPECT_EQ(r.asked, 1);
  EXPECT_TRUE(r.windows(2 * SplitJudge::kFirstBackoff, 30).empty());
  EXPECT_EQ(r.asked, 1);
  // A trial that pays resets the wait.
  EXPECT_EQ(r.trial(30, 20, 20, 30, 30), Move::kSplit);
  EXPECT_EQ(r.windows(SplitJudge::kRecheck, 20), std::vector<Move>{Move::kJoin});
  EXPECT_EQ(r.trial(30, 31, 32, 30, 30), Move::kNone);
  r.asked = 0;
  EXPECT_TRUE(r.windows(SplitJudge::kFirstBackoff, 30).empty());
  EXPECT_EQ(r.window(30), Move::kSplit);
  EXPECT_EQ(r.asked, 1);
}

TEST(SplitJudge, NoTrialWhereTheModelSaysNo) {
  Windows r;
  r.predicted = false;
  EXPECT_TRUE(r.windows(1000, 30).empty());
  EXPECT_EQ(r.asked, 1000);
}

TEST(SplitJudge, SplitStaysThroughWindowsOfNoise) {
  Windows r;
  ASSERT_EQ(r.trial(30, 20, 20, 30, 30), Move::kSplit);
  // Two slow windows, one in the band, two more, one fast, one slow: no
  // three in a row one way.
  for (double t : {60.0, 60.0, 20.0, 60.0, 60.0, 10.0, 60.0, 20.0}) EXPECT_EQ(r.window(t), Move::kNone) << t;
  EXPECT_EQ(r.judge.phase(), Phase::kSplit);
}

TEST(SplitJudge, JoinsWhenTheTimeStaysAway) {
  Windows r;
  ASSERT_EQ(r.trial(30, 20, 20, 30, 30), Move::kSplit);
  // 20 / 0.7 = 28.6: three windows above it in a row.
  EXPECT_EQ(r.window(29), Move::kNone);
  EXPECT_EQ(r.window(40), Move::kNone);
  EXPECT_EQ(r.window(29), Move::kJoin);
  EXPECT_EQ(r.judge.phase(), Phase::kJoined);
  // And faster: three windows below 14.
  Windows f;
  ASSERT_EQ(f.trial(30, 20, 20, 30, 30), Move::kSplit);
  EXPECT_EQ(f.windows(2, 13), std::vector<Move>{});
  EXPECT_EQ(f.window(13), Move::kJoin);
}

TEST(SplitJudge, RechecksAfterKRecheckWindows) {
  Windows r;
  ASSERT_EQ(r.trial(30, 20, 20, 30, 30), Move::kSplit);
  EXPECT_TRUE(r.windows(SplitJudge::kRecheck - 1, 20).empty());
  EXPECT_EQ(r.window(20), Move::kJoin);
  // Joined again: the next window may start a trial at once.
  EXPECT_EQ(r.window(30), Move::kSplit);
}

TEST(SplitJudge, AMoveAnotherThreadMadeLeavesThePhase) {
  SplitJudge j;
  auto yes = [] { return true; };
  ASSERT_EQ(j.end_window(30, yes), Move::kSplit);
  j.moved(false);
  EXPECT_EQ(j.phase(), Phase::kJoined);
  // That thread split: split with no trial to compare with, so no window
  // strays; joined again only at the recheck.
  j.changed_elsewhere(true);
  EXPECT_EQ(j.phase(), Phase::kSplit);
  for (uint32_t i = 1; i < SplitJudge::kRecheck; ++i) ASSERT_EQ(j.end_window(i % 2 ? 1.0 : 1000.0, yes), Move::kNone);
  EXPECT_EQ(j.end_window(30, yes), Move::kJoin);
}

TEST(SplitJudge, AMoveNotMadeIsAskedForAgain) {
  SplitJudge j;
  auto yes = [] { return true; };
  ASSERT_EQ(j.end_window(30, yes), Move::kSplit);
  j.moved(true);
  ASSERT_EQ(j.end_window(20, yes), Move::kNone);
  ASSERT_EQ(j.end_window(20, yes), Move::kJoin);
  j.moved(false);  // not joined (yet): the trial goes on, and asks again
  EXPECT_EQ(j.phase(), Phase::kTrial);
  EXPECT_EQ(j.end_window(20, yes), Move::kJoin);
  j.moved(true);
  EXPECT_EQ(j.phase(), Phase::kControl);
}

}  // namespace

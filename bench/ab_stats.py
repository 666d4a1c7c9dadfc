"""The verdict of an A/B comparison of interleaved rounds (compare_ladder.sh,
compare_sim.sh).

Each side has one value per round (a median over the repetitions of one
process). The rounds of A and B interleave (A, B, B, A, A, B, ...), so a
host whose speed drifts moves both alike, and the spread of a side's
rounds is its run-to-run noise on this machine, at this time.

The rule ("the range rule"):
  - within noise: B's median lies within A's range (min to max over the
    rounds) and A's median within B's;
  - B slower / B faster (for a throughput: B lower / B higher): B's median
    lies outside A's range and A's median outside B's, on the same side;
  - unclear: one median lies within the other's range, the other not;
  - too few rounds: fewer than 5 on either side (with one round each, any
    difference would be called a change).

Only a change larger than the noise of both sides is called a change. For
two samples of N rounds from one distribution (an A/A comparison), a
row's verdict is other than "within noise" with a chance of 28% at N = 5,
3% at 10, 0.45% at 15, 0.08% at 20 and 0.015% at 25 (simulated; a
change is called in 5%, 0.15%, and below 0.01% from 15 on). So an A/A
run of 25 rows says "within noise" for all of them in about 98% of runs
at 20 rounds, and 89% at 15: give 20 rounds or more where the time
allows. The price: on a noisy machine the ranges are wide, and a real
change smaller than them is "within noise". The 95% interval of
the difference of the medians (a bootstrap over the rounds of each side)
is printed next to it, for reading: it shows how small a change the run
could have resolved, not whether the rule's verdict holds.

Run as a script, it checks itself on made-up samples.
"""
import random
import statistics

RESAMPLES = 2000


def median(values):
    return statistics.median(values)


MIN_ROUNDS = 5  # fewer: a range says next to nothing about the noise


def verdict(a, b, higher_is_better=False):
    """The range rule's verdict for B against A (lists of per-round values)."""
    if min(len(a), len(b)) < MIN_ROUNDS:
        return f"too few rounds (< {MIN_ROUNDS})"
    ma, mb = median(a), median(b)
    b_in_a = min(a) <= mb <= max(a)
    a_in_b = min(b) <= ma <= max(b)
    if b_in_a and a_in_b:
        return "within noise"
    if mb > max(a) and ma < min(b):
        return "B higher" if higher_is_better else "B slower"
    if mb < min(a) and ma > max(b):
        return "B lower" if higher_is_better else "B faster"
    return "unclear"


def diff_interval(a, b, seed=1):
    """95% bootstrap interval of median(b) - median(a), each side resampled on its own."""
    rng = random.Random(seed)
    d = sorted(median(rng.choices(b, k=len(b))) - median(rng.choices(a, k=len(a))) for _ in range(RESAMPLES))
    return d[int(0.025 * RESAMPLES)], d[int(0.975 * RESAMPLES) - 1]


def _self_test():
    base = [10.0, 10.2, 9.9, 10.4, 10.1, 9.8, 10.3, 10.0, 11.5, 10.1]
    # The same values in another order: within noise, the interval around 0.
    other = list(reversed(base))
    assert verdict(base, other) == "within noise"
    lo, hi = diff_interval(base, other)
    assert lo <= 0 <= hi, (lo, hi)
    # Shifted by more than the spread: slower (or for a throughput, higher).
    slow = [x + 3 for x in base]
    assert verdict(base, slow) == "B slower"
    assert verdict(base, slow, higher_is_better=True) == "B higher"
    assert verdict(slow, base) == "B faster"
    lo, hi = diff_interval(base, slow)
    assert 2 < lo <= hi < 4, (lo, hi)
    # B's median above all of A's rounds, but one round of B reaches back
    # below A's median: unclear.
    steady = [10.0 + 0.1 * i for i in range(10)]
    assert verdict(steady, [11.5] * 9 + [9.0]) == "unclear"
    # A small shift within both ranges: within noise, though the interval
    # may exclude 0 (it is for reading only).
    assert verdict(base, [x + 0.15 for x in base]) == "within noise"
    assert verdict(base[:4], slow[:4]).startswith("too few rounds")
    # Random A/A draws from one distribution with 15 rounds each: the rule
    # calls no change in (nearly) all of 200 comparisons.
    rng = random.Random(7)
    calls = 0
    for _ in range(200):
        a = [rng.lognormvariate(0, 0.1) for _ in range(15)]
        b = [rng.lognormvariate(0, 0.1) for _ in range(15)]
        calls += verdict(a, b) != "within noise"
    assert calls <= 4, calls
    print("ab_stats.py: self-test passed")


if __name__ == "__main__":
    _self_test()

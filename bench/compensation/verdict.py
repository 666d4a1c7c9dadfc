"""How sure a compensation table is of its medians (bench/run_compensation.sh).

The issue's targets (PA-comp within 1% of MO, CA-comp within 2%, where PA
dilates main by 100% or more) are about the error of the compensated time
against MO. With ten noisy runs of each, the median error itself is
uncertain; on a noisy host by more than the target. This module puts a 95%
interval on each median error (a bootstrap: resample the runs, recompute
the median, 2000 times, a fixed seed so that a table repeats) and says what
the interval allows: "met" when it lies within the target, "missed" when
it lies outside, "cannot tell" when it straddles the target's edge.

The bootstrap takes the runs (or paired rounds) as independent. Rounds of
one process that fall into one of the host's slow phases are not: there
the interval comes out narrower than it should, so a "met" from rounds is
worth checking against a second run.

Run as a script, it checks itself on made-up samples.
"""
import random
import statistics

TARGETS = {"PA-comp": 1.0, "CA-comp": 2.0}
RESAMPLES = 2000


def _percentiles(values):
    values = sorted(values)
    return values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]


def ratio_interval(runs, reference, seed=1):
    """95% interval of 100 * (median(runs) / median(reference) - 1)."""
    rng = random.Random(seed)
    errs = []
    for _ in range(RESAMPLES):
        a = statistics.median(rng.choices(runs, k=len(runs)))
        b = statistics.median(rng.choices(reference, k=len(reference)))
        errs.append(100 * (a / b - 1))
    return _percentiles(errs)


def median_interval(errors, seed=1):
    """95% interval of the median of per-round errors (paired rounds)."""
    rng = random.Random(seed)
    return _percentiles(statistics.median(rng.choices(errors, k=len(errors))) for _ in range(RESAMPLES))


def verdict(lo, hi, target):
    if -target <= lo and hi <= target:
        return "met"
    if hi < -target or lo > target:
        return "missed"
    return "cannot tell"


def cell(lo, hi, experiment, dilated):
    """A table cell: the interval, and the verdict where a target applies."""
    text = f"{lo:.1f} to {hi:.1f}"
    target = TARGETS.get(experiment)
    if target is not None and dilated:
        text += f" ({verdict(lo, hi, target)})"
    return text


def _selftest():
    rng = random.Random(7)
    mo = [100 + rng.gauss(0, 0.2) for _ in range(10)]
    close = [100.3 + rng.gauss(0, 0.2) for _ in range(10)]
    off = [105 + rng.gauss(0, 0.2) for _ in range(10)]
    noisy = [100 + rng.gauss(0, 8) for _ in range(10)]
    lo, hi = ratio_interval(close, mo)
    assert lo < 0.3 < hi and verdict(lo, hi, 1.0) == "met", (lo, hi)
    lo, hi = ratio_interval(off, mo)
    assert lo < 5 < hi and verdict(lo, hi, 1.0) == "missed", (lo, hi)
    lo, hi = ratio_interval(noisy, mo)
    assert hi - lo > 2 and verdict(lo, hi, 1.0) == "cannot tell", (lo, hi)
    assert verdict(-3.0, -1.5, 1.0) == "missed"
    # The same samples give the same interval (a table repeats).
    assert ratio_interval(noisy, mo) == ratio_interval(noisy, mo)
    errs = [0.1 * i for i in range(-5, 6)]
    lo, hi = median_interval(errs)
    assert lo <= 0 <= hi and hi - lo < 1.1, (lo, hi)
    assert cell(-0.5, 0.5, "PA-comp", True) == "-0.5 to 0.5 (met)"
    assert cell(-0.5, 0.5, "PA-comp", False) == "-0.5 to 0.5"
    assert cell(-0.5, 1.5, "CA-comp", True) == "-0.5 to 1.5 (met)"
    assert cell(-0.5, 1.5, "PA", True) == "-0.5 to 1.5"
    print("verdict.py: self-test passed")


if __name__ == "__main__":
    _selftest()

#!/usr/bin/env python3
"""What each thread's part cost in the paired rounds, and what other fits
would have made of the same rounds.

    thread_costs.py ROUNDS TIMES

ROUNDS: what `compensation_eval PAIRED N --fit FIT -- WORKLOAD -T TIMES ...`
printed on standard output (a line a round); TIMES: the file the workload
wrote with -T (crew.h: "ROUND NS0 NS1 ...", each thread's part of the
round). The monitor numbers a workload's threads in the order they first
ran a region: main 0, then the crew's threads, as crew_start() starts
them, which is the order of the TIMES columns.

For each PA and CA round between two MO rounds it takes:
  - each thread's cost per instance: (its part in the round - the mean of
    its part in the MO rounds around it) / its instances in the round;
  - the thread whose part took longest (the one main's time waited for);
  - the error of the compensated round against the mean of the MO rounds.
And, since the monitor hands on at a barrier the overhead that explains
the latest arrival (docs/api.md, "Threads that wait for threads"), what
the round would have been compensated to with another Delta_i:
    max over threads (part - instances x Delta_i) + (round - longest part)
(0 where that is below 0), which it checks against the compensated value
printed (exact with one thread; with more, the monitor's hand-over at the
barriers differs from it in some rounds), then replays the
fit of compensation_eval (the median of the last FIT costs of the
experiment before each round, from the rounds after the fit rounds) with
two ways of taking a round's cost: "raw" ((raw - MO) / the busiest
thread's instances) and "compensated" (the Delta_i used + (compensated -
MO) / the busiest thread's instances, what compensation_eval does).
Errors in % of MO; a 95% interval of each median from the order
statistics. Exit status 1 with the reason on bad input.
"""
import math
import statistics
import sys


def die(msg):
    sys.stderr.write("thread_costs: %s\n" % msg)
    sys.exit(1)


def read_rounds(path):
    rounds = {}
    with open(path) as f:
        for no, line in enumerate(f, 1):
            try:
                fields = dict(kv.split("=", 1) for kv in line.split())
                rounds[int(fields["round"])] = fields
            except (ValueError, KeyError):
                die("%s:%d: not a line of compensation_eval PAIRED: %s" % (path, no, line.strip()))
    return rounds


def read_times(path):
    times = {}
    with open(path) as f:
        for no, line in enumerate(f, 1):
            v = line.split()
            try:
                times[int(v[0])] = [int(x) for x in v[1:]]
            except (ValueError, IndexError):
                die("%s:%d: not a line of part times: %s" % (path, no, line.strip()))
    return times


def interval(values):
    v = sorted(values)
    n = len(v)
    h = 1.96 * math.sqrt(n) / 2
    return v[max(0, int(n / 2 - h))], v[min(n - 1, int(math.ceil(n / 2 + h)))]


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    rounds, times = read_rounds(argv[1]), read_times(argv[2])
    fit = sum(1 for f in rounds.values() if f["experiment"] == "fit-PA")
    if fit == 0:
        die("%s has no fit rounds (compensation_eval PAIRED ... --fit FIT)" % argv[1])
    cases = []  # PA and CA rounds between two MO rounds, in order
    for r in sorted(rounds):
        f = rounds[r]
        kind = f["experiment"].replace("fit-", "")
        if kind not in ("PA", "CA"):
            continue
        if "per_thread" not in f:
            die("round %d has no per_thread= (written by an older compensation_eval?)" % r)
        around = [rounds.get(r - 1), rounds.get(r + 1)]
        if any(a is None or a["experiment"].replace("fit-", "") != "MO" for a in around):
            continue
        if any(q not in times for q in (r - 1, r, r + 1)):
            die("round %d or the MO rounds around it have no part times in %s" % (r, argv[2]))
        n = [int(x) for x in f["per_thread"].split(",")]
        if len(n) != len(times[r]):
            die("round %d: %d threads counted, %d part times" % (r, len(n), len(times[r])))
        mo = (float(around[0]["raw_us"]) + float(around[1]["raw_us"])) * 500
        part = times[r]
        mo_part = [(times[r - 1][t] + times[r + 1][t]) / 2 for t in range(len(n))]
        cases.append(dict(
            round=r, kind=kind, fitting=f["experiment"].startswith("fit-"), n=n, part=part,
            raw=float(f["raw_us"]) * 1000, comp=float(f["comp_us"]) * 1000, used=float(f["delta_i_ns"]),
            busiest=int(f["busiest"]), mo=mo,
            cost=[(part[t] - mo_part[t]) / n[t] if n[t] else float("nan") for t in range(len(n))],
            longest=max(range(len(n)), key=lambda t: part[t])))
    if not cases:
        die("no PA or CA round between two MO rounds")

    def compensated(c, delta):  # a total below 0 is reported as 0
        return max(0, max(p - k * delta for p, k in zip(c["part"], c["n"])) + (c["raw"] - max(c["part"])))

    for kind in ("PA", "CA"):
        rs = [c for c in cases if c["kind"] == kind and not c["fitting"]]
        if not rs:
            continue
        threads = len(rs[0]["n"])
        print("%s: %d rounds after the fit, %d thread(s)" % (kind, len(rs), threads))
        for t in range(threads):
            costs = [c["cost"][t] for c in rs if c["n"][t]]
            if costs:
                print("  thread %d: %.2f ns an instance (median; quartiles %.2f, %.2f), %d instances a round"
                      % (t, statistics.median(costs), *statistics.quantiles(costs, n=4)[::2], rs[0]["n"][t]))
        if threads == 2 and all(c["n"][1] for c in rs):
            ratio = [c["cost"][0] / c["cost"][1] for c in rs]
            q = statistics.quantiles(ratio, n=4)
            print("  thread 0 / thread 1: %.3f (median; quartiles %.3f, %.3f)" % (statistics.median(ratio), q[0], q[2]))
        print("  Delta_i used: %.2f ns (median)" % statistics.median(c["used"] for c in rs))
        for t in range(threads):
            last = [c for c in rs if c["longest"] == t]
            if last:
                print("  thread %d longest in %d rounds: error %.1f%% (median)"
                      % (t, len(last), statistics.median((c["comp"] - c["mo"]) / c["mo"] * 100 for c in last)))
        off = sorted((compensated(c, c["used"]) - c["comp"]) / 1e6 for c in rs)
        print("  the formula above against the compensated rounds: %.2f ms (median), %.2f to %.2f (5%% to 95%%)"
              % (statistics.median(off), off[len(off) // 20], off[-1 - len(off) // 20]))
        for rule in ("raw", "compensated"):
            cost, errs = [], []
            for c in (c for c in cases if c["kind"] == kind):
                delta = c["used"] if c["fitting"] else statistics.median(cost[-fit:])
                comp = compensated(c, delta)
                if not c["fitting"]:
                    errs.append((comp - c["mo"]) / c["mo"] * 100)
                cost.append((c["raw"] - c["mo"]) / c["busiest"] if rule == "raw"
                            else delta + (comp - c["mo"]) / c["busiest"])
            lo, hi = interval(errs)
            print("  fit %-11s: error %.1f%% (median; 95%% interval %.1f to %.1f), mean %.1f%%"
                  % (rule, statistics.median(errs), lo, hi, statistics.mean(errs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

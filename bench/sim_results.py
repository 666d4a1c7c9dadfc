"""The tables of compare_sim.sh: the cache simulator's A/B comparison.

  sim_results.py throughput OUT_DIR        sim_throughput, from
                                           OUT_DIR/round-NN/{A,B}.json
  sim_results.py slowdown CSV NAMES...     the in-application slowdown, from
                                           the CSV of run_variants (order,
                                           round, variant, ms, cpu_ms); NAMES
                                           the variants' names, A's and B's
                                           alternating, each side's native
                                           first

Throughput: million references a second per benchmark, by CPU time
(Google Benchmark's items_per_second; for the rungs on two threads the
items_per_cpu_second counter, both threads' CPU time) and by wall time
(items_per_second x cpu_time / real_time; the two-thread rungs' own
items_per_second). Slowdown: per variant, its time over the same build's
native time in the same round, by wall time ("ms") and by CPU time of the
whole process ("cpu_ms"). Each side's figure per round is one process's
(throughput: the median over its repetitions); the table gives the median
over the rounds [range], B - A, a 95% bootstrap interval of it, and the
range rule's verdict (ab_stats.py). Exit status 1 when a figure is
missing.
"""
import csv
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ab_stats  # noqa: E402

RULE = ("Verdict (ab_stats.py, the range rule): 'within noise' = B's median within A's range and A's within B's;\n"
        "'B higher'/'B lower' (throughput), 'B slower'/'B faster' (slowdown) = each median outside the other's\n"
        "range, on the same side; 'unclear' = one inside, one outside. 95% CI of B-A: bootstrap, for reading.")


def cells(a, b, prec, higher_is_better):
    ma, mb = statistics.median(a), statistics.median(b)
    lo, hi = ab_stats.diff_interval(a, b)
    rng = lambda v: f"{statistics.median(v):.{prec}f} [{min(v):.{prec}f}..{max(v):.{prec}f}]"  # noqa: E731
    pct = f"({100 * (mb - ma) / ma:+.1f}%)" if ma else ""
    return (f"{rng(a):>22} {rng(b):>22} {mb - ma:+8.{prec}f} {pct:>8} {lo:+8.{prec}f}..{hi:+.{prec}f}  "
            f"{ab_stats.verdict(a, b, higher_is_better)}")


def load_throughput(path):
    """{benchmark: (M refs/s by CPU, by wall)} of one sim_throughput run."""
    res = {}
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return res
    for b in doc.get("benchmarks", []):
        # The median of the repetitions; with one repetition (no
        # aggregates), that run.
        median = b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median"
        name = b["run_name"].removesuffix("/real_time")
        if not median and (b.get("run_type") != "iteration" or name in res):
            continue
        items = b.get("items_per_second")
        if items is None:
            continue
        if "items_per_cpu_second" in b:  # two threads: items_per_second is by wall time
            res[name] = (b["items_per_cpu_second"] / 1e6, items / 1e6)
        else:
            res[name] = (items / 1e6, items * b["cpu_time"] / b["real_time"] / 1e6)
    return res


def throughput(out):
    rounds = sorted(glob.glob(os.path.join(out, "round-*")))
    sides = {s: [load_throughput(os.path.join(r, s + ".json")) for r in rounds] for s in ("A", "B")}
    names = []
    for r in sides["A"] + sides["B"]:
        names += [n for n in r if n not in names]
    if not names:
        print(f"sim_results: no sim_throughput results in {out}", file=sys.stderr)
        return 1
    ok = True
    print(f"Cache simulator throughput, million references/s: {len(rounds)} interleaved rounds")
    hdr = (f"{'benchmark':<40} {'time':<4} {'A median [range]':>22} {'B median [range]':>22} {'B-A':>17} "
           f"{'95% CI of B-A':>17}  verdict")
    print(hdr)
    print("-" * len(hdr))
    for name in names:
        for k, what in ((0, "cpu"), (1, "wall")):
            a = [r[name][k] for r in sides["A"] if name in r]
            b = [r[name][k] for r in sides["B"] if name in r]
            label = name.removeprefix("BM_") if k == 0 else ""
            if not a or not b:
                print(f"{label:<40} {what:<4} {'missing':>22}")
                ok = False
                continue
            print(f"{label:<40} {what:<4} {cells(a, b, 1, True)}")
    print(RULE)
    return 0 if ok else 1


def slowdown(path, names):
    rows = list(csv.DictReader(open(path)))
    ok = True
    print("In-application slowdown (bench/matmul.c, 256 x 256): x the same build's native time in the same round")
    hdr = (f"{'order':<5} {'variant':<38} {'time':<4} {'A median [range]':>22} {'B median [range]':>22} "
           f"{'B-A':>17} {'95% CI of B-A':>17}  verdict")
    print(hdr)
    print("-" * len(hdr))
    for order in sorted({r["order"] for r in rows}):
        t = {}
        for r in rows:
            if r["order"] == order:
                t.setdefault(int(r["variant"]), {})[int(r["round"])] = (float(r["ms"]), float(r["cpu_ms"]))
        # Variants 2k (A) and 2k+1 (B); 0 and 1 are the natives.
        for v in range(0, len(names), 2):
            for f, what in ((0, "wall"), (1, "cpu")):
                per = []
                for side in (v, v + 1):
                    native = t.get(side % 2, {})
                    per.append([t[side][k][f] / native[k][f] for k in t.get(side, {}) if k in native])
                label = f"{order:<5} {names[v].removeprefix('A: '):<38}" if f == 0 else f"{'':<5} {'':<38}"
                if v == 0:  # the natives themselves: their time in ms
                    per = [[t[side][k][f] for k in t.get(side, {})] for side in (v, v + 1)]
                    what += " ms"
                if not per[0] or not per[1]:
                    print(f"{label} {what:<4} {'missing':>22}")
                    ok = False
                    continue
                print(f"{label} {what:<4} {cells(per[0], per[1], 2 if v else 1, False)}")
    print("wall: the program's own time for the multiply; cpu: the process's CPU time over the same span, every")
    print("thread's (the simulation thread's too). Native rows: ms; the others: x native.")
    print(RULE)
    return 0 if ok else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "throughput":
        return throughput(argv[2])
    if len(argv) >= 4 and argv[1] == "slowdown":
        return slowdown(argv[2], argv[3:])
    print("usage: sim_results.py throughput OUT_DIR | slowdown CSV NAMES...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

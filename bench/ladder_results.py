"""The tables of the hot-path cost ladder from interleaved rounds
(run_ladder.sh, compare_ladder.sh; bench/README.md).

  ladder_results.py table OUT_DIR      run_ladder.sh's table
  ladder_results.py compare OUT_DIR    compare_ladder.sh's A/B table

OUT_DIR holds round-NN/NAME.json and .log (table) or round-NN/A/NAME.* and
round-NN/B/NAME.* (compare), NAME one of ladder_processes.sh's processes.
A process's figure for a benchmark is Google Benchmark's median over its
repetitions; the tables take the median and range of those over the
rounds. Times are ns per enter+exit pair on one thread:
  cpu   Google Benchmark's cpu_time: the benchmark threads' CPU time over
        the pairs they executed (at 2 threads also per thread);
  wall  real_time x threads: the wall time one thread took a pair (at 1
        thread the same as real_time). Where a second thread or the tool's
        trace collector competes for the 2 cores, wall exceeds cpu.
Exit status 1 when a figure is missing or a run's monitor state was not
the expected one.
"""
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ab_stats  # noqa: E402

SCALE = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}

# (label, process (trace: per thread count), benchmark, target on the CPU
#  difference to the uninstrumented rung in ns, expected monitor state:
#  0 dormant, 1 under the tool, None timer context, "floor" a timed pair
#  without a monitor)
RUNGS = [
    ("1 uninstrumented", "plain", "BM_uninstrumented", None, 0),
    ("2 dormant (no tool)", "plain", "BM_dormant", 1.0, 0),
    ("3 attached, no request", "attached", "BM_attached", 1.0, 1),
    ("4 EXECUTION_TIME aggr.", "aggregate", "BM_aggregate", 25.0, 1),
    ("5 EXECUTION_TIME profile", "profile", "BM_profile", 40.0, 1),
    ("5b EXECUTION_TIME callpath", "callpath", "BM_callpath", 40.0, 1),
    ("6 perf::TASK-CLOCK aggr.", "counter", "BM_counter", None, 1),
    ("7 REGION_EVENT trace", "trace", "BM_trace", 30.0, 1),
]
CONTEXT = [
    ("perf fd read(), 1 call", "plain", "BM_perf_read", None, None),
    ("2x PAPI_read around body", "plain", "BM_papi_pair", None, "floor"),
    ("rdtsc, 1 call", "plain", "BM_rdtsc", None, None),
    ("clock_gettime, 1 call", "plain", "BM_clock_gettime", None, None),
    ("2x rdtsc around body", "plain", "BM_rdtsc_pair", None, "floor"),
]
TRACE_RECORD_TARGET = 15.0  # ns per REGION_EVENT record, by CPU
COUNTER_SHARE_TARGET = 10.0  # % the monitor adds to PAPI's two reads

WAITS = re.compile(r"(\d+) waits for room, ([0-9.]+) s waited")


def process_name(process, threads):
    return f"trace{threads}" if process == "trace" else process


def load(base):
    """{run_name: {cpu, wall, attached}, "waits": n, "waited_s": s} of one process."""
    res = {}
    try:
        with open(base + ".json") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return res
    for b in doc.get("benchmarks", []):
        # The median of the repetitions; with one repetition (no
        # aggregates), that run.
        median = b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median"
        if not median and (b.get("run_type") != "iteration" or b["run_name"] in res):
            continue
        scale = SCALE[b.get("time_unit", "ns")]
        threads = int(b.get("threads", 1))
        res[b["run_name"]] = {
            "cpu": b["cpu_time"] * scale,
            "wall": b["real_time"] * scale * threads,
            "attached": b.get("monitor_attached"),
        }
    try:
        with open(base + ".log") as f:
            m = WAITS.search(f.read())
        if m:
            res["waits"] = int(m.group(1))
            res["waited_s"] = float(m.group(2))
    except OSError:
        pass
    return res


def rounds_of(out, side=""):
    """[{process: load()}] per round, in round order."""
    dirs = sorted(glob.glob(os.path.join(out, "round-*")))
    rounds = []
    for d in dirs:
        d = os.path.join(d, side) if side else d
        procs = {}
        for path in glob.glob(os.path.join(d, "*.json")):
            name = os.path.basename(path)[:-5]
            procs[name] = load(path[:-5])
        rounds.append(procs)
    return rounds


def series(rounds, process, bench, threads, field):
    """The per-round values of one figure (None where a round lacks it)."""
    vals = []
    for r in rounds:
        s = r.get(process_name(process, threads), {}).get(f"{bench}/threads:{threads}")
        vals.append(s[field] if s else None)
    return vals


def present(vals):
    return [v for v in vals if v is not None]


def fmt_range(vals, width=7, prec=2):
    return f"{statistics.median(vals):{width}.{prec}f} [{min(vals):.{prec}f}..{max(vals):.{prec}f}]"


def target_verdict(diffs, target):
    med = statistics.median(diffs)
    word = "met" if med <= target else "MISSED"
    if min(diffs) <= target < max(diffs):
        word += ", rounds straddle it"
    return f"<= {target:g}: {word}"


# ------------------------------------------------------------------ table


def table(out):
    rounds = rounds_of(out)
    if not rounds:
        print(f"ladder_results: no rounds in {out}", file=sys.stderr)
        return 1
    ok = True
    print(f"Hot-path cost ladder: {len(rounds)} interleaved rounds; per round, each process's median over its "
          "repetitions; below, the median over the rounds [range]")
    hdr = (f"{'rung':<27} {'thr':>3}  {'CPU ns/pair':>22}  {'diff ns':>22}  {'wall ns/pair':>22}  "
           "target on the median diff")
    print(hdr)
    print("-" * len(hdr))
    for label, process, bench, target, expect in RUNGS + CONTEXT:
        for t in (1, 2):
            cpu = series(rounds, process, bench, t, "cpu")
            if not present(cpu):
                print(f"{label:<27} {t:>3}  {'missing':>22}")
                ok = False
                continue
            base = series(rounds, "plain", "BM_uninstrumented", t, "cpu")
            diffs = [c - b for c, b in zip(cpu, base) if c is not None and b is not None]
            is_context = expect is None or expect == "floor"
            diff = "" if is_context or not diffs else fmt_range(diffs, 7, 2)
            wall = ""
            if t == 2 or process == "trace":
                wall = fmt_range(present(series(rounds, process, bench, t, "wall")))
            verdict = "(context)" if is_context else ""
            if target is not None and diffs:
                verdict = target_verdict(diffs, target)
            states = [s for s in series(rounds, process, bench, t, "attached") if s is not None]
            if expect in (0, 1) and any(int(s) != expect for s in states):
                verdict += " [monitor state unexpected]"
                ok = False
            print(f"{label:<27} {t:>3}  {fmt_range(present(cpu)):>22}  {diff:>22}  {wall:>22}  {verdict}")

    print()
    # The counter rung's target: the monitor adds at most 10 % to what PAPI
    # itself costs per pair (two PAPI_read() calls around the body, outside
    # the monitor, whose own event set would be the thread's running one).
    for t in (1, 2):
        c = series(rounds, "counter", "BM_counter", t, "cpu")
        p = series(rounds, "plain", "BM_papi_pair", t, "cpu")
        shares = [100.0 * (x - y) / y for x, y in zip(c, p) if x is not None and y is not None]
        if shares:
            print(f"counter rung, {t} thread(s): the monitor adds {fmt_range(shares, 0, 1).strip()} % to PAPI's "
                  f"{statistics.median(present(p)):.1f} ns a pair (target {COUNTER_SHARE_TARGET:g} %: "
                  f"{target_verdict(shares, COUNTER_SHARE_TARGET).split(': ', 1)[1]})")
    # The trace rung writes two records a pair: its target is per record.
    # By CPU time (the target's measure) and by wall time: the program's
    # threads wait for ring room while the tool's collector drains it.
    for t in (1, 2):
        per = {}
        for field in ("cpu", "wall"):
            tr = series(rounds, "trace", "BM_trace", t, field)
            base = series(rounds, "plain", "BM_uninstrumented", t, field)
            per[field] = [(x - y) / 2 for x, y in zip(tr, base) if x is not None and y is not None]
        waits = [r.get(f"trace{t}", {}).get("waits") for r in rounds]
        waited = [r.get(f"trace{t}", {}).get("waited_s") for r in rounds]
        if per["cpu"]:
            line = (f"trace rung, {t} thread(s): ns per REGION_EVENT record by CPU {fmt_range(per['cpu'], 0).strip()} "
                    f"(target {TRACE_RECORD_TARGET:g}: "
                    f"{target_verdict(per['cpu'], TRACE_RECORD_TARGET).split(': ', 1)[1]}), "
                    f"by wall {fmt_range(per['wall'], 0).strip()}")
            if present(waits):
                line += (f"; waits for ring room a process {fmt_range(present(waits), 0, 0).strip()}, "
                         f"waited {fmt_range([1e3 * w for w in present(waited)], 0, 1).strip()} ms")
            print(line)
    ctl = []
    for process in ("attached", "aggregate", "profile", "callpath", "counter"):
        for t in (1, 2):
            v = present(series(rounds, process, "BM_uninstrumented", t, "cpu"))
            if v:
                ctl.append(f"{process}/{t}t {statistics.median(v):.2f}")
    print()
    print("diff = the rung minus the uninstrumented rung of the same round and thread count (plain process).")
    print("wall = real_time x threads: the wall time one thread took a pair (2 threads, and the trace rung, whose")
    print("       collector runs in the tool's process).")
    print("uninstrumented control inside the tool runs, CPU ns: " + (", ".join(ctl) if ctl else "none"))
    print(f"JSON and logs: {out}")
    return 0 if ok else 1


# ------------------------------------------------------------------ compare


def compare(out):
    a_rounds, b_rounds = rounds_of(out, "A"), rounds_of(out, "B")
    if not a_rounds or not b_rounds:
        print(f"ladder_results: no rounds in {out}", file=sys.stderr)
        return 1
    ok = True
    hdr = (f"{'rung':<27} {'thr':>3} {'time':<5} {'A median [range]':>24} {'B median [range]':>24} "
           f"{'B-A':>16} {'95% CI of B-A':>17}  verdict")
    print(hdr)
    print("-" * len(hdr))

    def row(label, t, what, a, b, prec=2, words=None):
        nonlocal ok
        a, b = present(a), present(b)
        if not a or not b:
            print(f"{label:<27} {t:>3} {what:<5} {'missing':>24}")
            ok = False
            return
        ma, mb = statistics.median(a), statistics.median(b)
        pct = f"({100 * (mb - ma) / ma:+.1f}%)" if ma else ""
        lo, hi = ab_stats.diff_interval(a, b)
        v = ab_stats.verdict(a, b)
        if words:
            v = words.get(v, v)
        print(f"{label:<27} {t:>3} {what:<5} {fmt_range(a, 7, prec):>24} {fmt_range(b, 7, prec):>24} "
              f"{mb - ma:+8.{prec}f} {pct:>7} {lo:+8.{prec}f}..{hi:+.{prec}f}  {v}")

    for label, process, bench, _, expect in RUNGS:
        for t in (1, 2):
            row(label, t, "cpu", series(a_rounds, process, bench, t, "cpu"),
                series(b_rounds, process, bench, t, "cpu"))
            if t == 2 or process == "trace":
                row("", t, "wall", series(a_rounds, process, bench, t, "wall"),
                    series(b_rounds, process, bench, t, "wall"))
            if process == "trace":
                name = process_name(process, t)
                row("", t, "waits", [r.get(name, {}).get("waits") for r in a_rounds],
                    [r.get(name, {}).get("waits") for r in b_rounds], prec=0,
                    words={"B slower": "B more", "B faster": "B fewer"})
            for side, rounds in (("A", a_rounds), ("B", b_rounds)):
                states = [s for s in series(rounds, process, bench, t, "attached") if s is not None]
                if any(int(s) != expect for s in states):
                    print(f"    {side}: monitor state unexpected in some round (expected {expect})")
                    ok = False
    print()
    print("ns per enter+exit pair on one thread; cpu = Google Benchmark's cpu_time, wall = real_time x threads;")
    print("waits = ladder_tool's count of the trace process's waits for ring room (all its threads).")
    print("median [min..max] over the rounds of each process's median over its repetitions;")
    print("95% CI: bootstrap over the rounds of each side, for reading. Verdict (ab_stats.py, the range rule):")
    print("'within noise' = B's median within A's range and A's within B's; 'B slower'/'B faster' = each")
    print("median outside the other's range, on the same side; 'unclear' = one inside, one outside.")
    return 0 if ok else 1


def main(argv):
    if len(argv) != 3 or argv[1] not in ("table", "compare"):
        print("usage: ladder_results.py table|compare OUT_DIR", file=sys.stderr)
        return 2
    return table(argv[2]) if argv[1] == "table" else compare(argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))

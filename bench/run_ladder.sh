#!/usr/bin/env bash
# run_ladder.sh - runs the hot-path cost ladder and prints one summary table.
#
#   bench/run_ladder.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR is a configured and built tree (this script builds nothing); it
# needs BUILD_DIR/bench/ladder_app and BUILD_DIR/bench/ladder_tool.
# OUT_DIR (default BUILD_DIR/bench/ladder-results) receives one JSON file and
# one log per run.
#
# Seven processes, one after the other:
#   plain      ladder_app alone: uninstrumented, dormant, and the timer context
#              (rdtsc, clock_gettime, rdtsc_pair)
#   attached   ladder_tool attached  -- ladder_app: uninstrumented (control), attached
#   aggregate  ladder_tool aggregate -- ladder_app: uninstrumented (control), aggregate
#   profile    ladder_tool profile   -- ladder_app: uninstrumented (control), profile
#   callpath   ladder_tool callpath  -- ladder_app: uninstrumented (control), callpath
#   counter    ladder_tool counter   -- ladder_app: uninstrumented (control), counter
#   trace      ladder_tool trace     -- ladder_app: uninstrumented (control), trace
#
# Environment: LADDER_REPETITIONS (default 5), LADDER_MIN_TIME (seconds per
# repetition, default 0.2). The defaults take about 30 s on 2 cores.
#
# Reported time: the median over the repetitions of Google Benchmark's
# cpu_time, i.e. the CPU time of the benchmark threads divided by the pairs
# they executed = ns per enter+exit pair on one thread (also at 2 threads).
# Exit status: 0, or 1 when a run failed or a tool's check of its request
# did not pass. The targets are shown for reading, not enforced.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 BUILD_DIR [OUT_DIR]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
app=$build/bench/ladder_app
tool=$build/bench/ladder_tool
out=${2:-$build/bench/ladder-results}
reps=${LADDER_REPETITIONS:-5}
min_time=${LADDER_MIN_TIME:-0.2}
for f in "$app" "$tool"; do
  if [[ ! -x $f ]]; then
    echo "run_ladder: $f not found; build it first (make -C $1 ladder_app ladder_tool)" >&2
    exit 2
  fi
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

common=(--benchmark_repetitions="$reps" --benchmark_min_time="$min_time"
        --benchmark_report_aggregates_only=true --benchmark_out_format=json)
status=0

# run NAME FILTER [TOOL LEVEL]
run() {
  local name=$1 filter=$2
  shift 2
  local cmd=()
  [[ $# -gt 0 ]] && cmd=("$tool" "$2" --)
  cmd+=("$app" --benchmark_filter="$filter" "${common[@]}" --benchmark_out="$out/$name.json")
  echo "run_ladder: $name: ${cmd[*]}" >&2
  if ! "${cmd[@]}" >"$out/$name.log" 2>&1; then
    echo "run_ladder: $name failed; see $out/$name.log" >&2
    tail -5 "$out/$name.log" >&2
    status=1
  fi
  grep '^ladder_tool:' "$out/$name.log" >&2 || true
}

run plain '^BM_(uninstrumented|dormant|rdtsc|clock_gettime|rdtsc_pair|perf_read|papi_pair)/'
run attached '^BM_(uninstrumented|attached)/' tool attached
run aggregate '^BM_(uninstrumented|aggregate)/' tool aggregate
run profile '^BM_(uninstrumented|profile)/' tool profile
run callpath '^BM_(uninstrumented|callpath)/' tool callpath
run counter '^BM_(uninstrumented|counter)/' tool counter
run trace '^BM_(uninstrumented|trace)/' tool trace

python3 - "$out" "$reps" "$min_time" <<'EOF' || status=1
import json, os, sys

out, reps, min_time = sys.argv[1], sys.argv[2], sys.argv[3]

def load(name):
    path = os.path.join(out, name + ".json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"run_ladder: cannot read {path}: {e}", file=sys.stderr)
        return None

def stats(doc):
    """run_name -> {'median': ns, 'cv': fraction, 'attached': 0/1}"""
    res = {}
    if not doc:
        return res
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    for b in doc.get("benchmarks", []):
        if b.get("run_type") != "aggregate":
            continue
        r = res.setdefault(b["run_name"], {})
        agg = b.get("aggregate_name")
        if agg == "median":
            r["median"] = b["cpu_time"] * scale[b.get("time_unit", "ns")]
            r["attached"] = b.get("monitor_attached")
        elif agg == "cv":
            r["cv"] = b["cpu_time"]
    return res

runs = {name: stats(load(name)) for name in ("plain", "attached", "aggregate", "profile", "callpath", "counter", "trace")}

# (label, run file, benchmark, target on the difference to the uninstrumented
#  rung in ns, kind: 0 = must run dormant, 1 = must run under the tool,
#  None = timer context, "floor" = timed pair without a monitor)
rungs = [
    ("1 uninstrumented",         "plain",     "BM_uninstrumented", None, 0),
    ("2 dormant (no tool)",      "plain",     "BM_dormant",        1.0,  0),
    ("3 attached, no request",   "attached",  "BM_attached",       1.0,  1),
    ("4 EXECUTION_TIME aggr.",   "aggregate", "BM_aggregate",      25.0, 1),
    ("5 EXECUTION_TIME profile", "profile",   "BM_profile",        40.0, 1),
    ("5b EXECUTION_TIME callpath", "callpath", "BM_callpath",      40.0, 1),
    ("6 perf::TASK-CLOCK aggr.", "counter",   "BM_counter",        None, 1),
    ("7 REGION_EVENT trace",     "trace",     "BM_trace",          30.0, 1),
    ("perf fd read(), 1 call",   "plain",     "BM_perf_read",      None, None),
    ("2x PAPI_read around body", "plain",     "BM_papi_pair",      None, "floor"),
    ("rdtsc, 1 call",            "plain",     "BM_rdtsc",          None, None),
    ("clock_gettime, 1 call",    "plain",     "BM_clock_gettime",  None, None),
    ("2x rdtsc around body",     "plain",     "BM_rdtsc_pair",     None, "floor"),
]

ok = True
base = {}
for t in (1, 2):
    s = runs["plain"].get(f"BM_uninstrumented/threads:{t}")
    if s and "median" in s:
        base[t] = s["median"]

hdr = f"{'rung':<26} {'threads':>7} {'median ns/pair':>14} {'diff ns':>8} {'cv':>6}  {'target (diff)':<14}"
print()
print(f"Hot-path cost ladder: median of {reps} repetitions x {min_time} s, CPU time per pair per thread")
print(hdr)
print("-" * len(hdr))
for label, run, bench, target, expect in rungs:
    for t in (1, 2):
        s = runs[run].get(f"{bench}/threads:{t}")
        if not s or "median" not in s:
            print(f"{label:<26} {t:>7} {'missing':>14}")
            ok = False
            continue
        med = s["median"]
        is_timer = expect is None
        is_floor = expect == "floor"
        diff = "" if is_timer or t not in base else f"{med - base[t]:+8.2f}"
        cv = f"{100 * s['cv']:5.1f}%" if "cv" in s else ""
        verdict = ""
        if target is not None and t in base:
            verdict = f"<= {target:g} " + ("met" if med - base[t] <= target else "MISSED")
        elif is_timer or is_floor:
            verdict = "(context)"
        if expect in (0, 1) and s.get("attached") is not None and int(s["attached"]) != expect:
            verdict += " [monitor state unexpected]"
            ok = False
        print(f"{label:<26} {t:>7} {med:>14.2f} {diff:>8} {cv:>6}  {verdict:<14}")

# The counter rung's target: the monitor adds at most 10 % to what PAPI
# itself costs per pair (two PAPI_read() calls around the body).
for t in (1, 2):
    c = runs["counter"].get(f"BM_counter/threads:{t}")
    p = runs["plain"].get(f"BM_papi_pair/threads:{t}")  # PAPI alone: not under the monitor, whose
                                                      # own event set would be the thread's running one
    if c and p and "median" in c and "median" in p:
        extra = c["median"] - p["median"]
        share = 100.0 * extra / p["median"]
        print(f"counter rung, {t} thread(s): monitor adds {extra:+.1f} ns = {share:+.1f} % to PAPI's "
              f"{p['median']:.1f} ns per pair (target <= 10 %: {'met' if share <= 10 else 'MISSED'})")

# The trace rung writes two records per pair: its target is per record.
for t in (1, 2):
    s = runs["trace"].get(f"BM_trace/threads:{t}")
    if s and "median" in s and t in base:
        per = (s["median"] - base[t]) / 2
        print(f"trace rung, {t} thread(s): {per:.2f} ns per REGION_EVENT record (target <= 15: {'met' if per <= 15 else 'MISSED'})")

ctl = []
for run in ("attached", "aggregate", "profile", "callpath", "counter", "trace"):
    for t in (1, 2):
        s = runs[run].get(f"BM_uninstrumented/threads:{t}")
        if s and "median" in s:
            ctl.append(f"{run}/{t}t {s['median']:.2f}")
print()
print("diff = median minus the uninstrumented median at the same thread count (plain run).")
print("uninstrumented control inside the tool runs, ns: " + (", ".join(ctl) if ctl else "none"))
print(f"JSON and logs: {out}")
sys.exit(0 if ok else 1)
EOF
exit $status

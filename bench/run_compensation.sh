#!/usr/bin/env bash
# run_compensation.sh - the overhead-compensation evaluation of seed paper
# 001 (Malony & Shende, section 4.1), in the layout of its Table 1.
#
#   bench/run_compensation.sh [--simulated] BUILD_DIR [TRIALS] [OUT_CSV]
#
# --simulated: time under the cache simulator instead. The same workloads
# built with the cache-simulator instrumentation (*_cachesim); experiments
# MO (only main measured, the instrumentation dormant), SIM (the same with
# every memory reference simulated) and SIM-comp (compensated): the
# simulation is timed batch by batch and removed like the monitor's own
# overhead. Needs clang (MRI_CACHESIM_INSTRUMENTATION).
#
# Three workloads (bench/compensation/): is_sort (integer sort with tiny
# helper routines, like NAS IS), tree_walk (recursive C++ with small member
# functions), jacobi (loop-heavy stencil). Each with 1 and 2 threads; five
# experiments (MO, PA, PA-comp, CA, CA-comp), TRIALS runs each (default 10),
# interleaved so that a noisy period hits every experiment alike. Reports
# main's time (us), minimum and mean, and the % error against MO (of the
# minima and of the means, as the paper; and of the medians).
# BUILD_DIR must hold a build with the benchmarks (MRI_BUILD_BENCH, the
# default). Takes about 4 minutes with 10 trials on 2 cores.
set -euo pipefail

suffix=
experiments=(MO PA PA-comp CA CA-comp)
kind=compensation
if [[ ${1:-} == --simulated ]]; then
  suffix=_cachesim
  experiments=(MO SIM SIM-comp)
  kind=simulation-compensation
  shift
fi
if [[ $# -lt 1 || $# -gt 3 ]]; then
  echo "usage: $0 [--simulated] BUILD_DIR [TRIALS] [OUT_CSV]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
trials=${2:-10}
out=${3:-$build/bench/$kind-results.csv}
dir=$build/bench/compensation
eval_tool=$dir/compensation_eval
for f in "$eval_tool" "$dir/is_sort$suffix" "$dir/tree_walk$suffix" "$dir/jacobi$suffix"; do
  [[ -x $f ]] || {
    echo "run_compensation: $f not found; build the benchmarks first${suffix:+ (the instrumentation needs clang)}" >&2
    exit 1
  }
done
[[ $trials =~ ^[1-9][0-9]*$ ]] || { echo "run_compensation: TRIALS must be a positive number" >&2; exit 2; }

workloads=(is_sort tree_walk jacobi)
# The last two columns: the process's own calibration of the timer and
# callpath kinds (ns per pair, as published after its first release), so a
# run whose calibration a slow spell of the machine inflated can be told.
echo "workload,threads,experiment,trial,main_us,raw_us,instances,timer_delta_i_ns,callpath_delta_i_ns" >"$out"
total=$(( ${#workloads[@]} * 2 * trials * ${#experiments[@]} ))
done_runs=0
for w in "${workloads[@]}"; do
  for t in 1 2; do
    for ((trial = 1; trial <= trials; trial++)); do
      for e in "${experiments[@]}"; do
        line=$("$eval_tool" "$e" -- "$dir/$w$suffix" -t "$t" 2>"$build/bench/compensation-last.err") || {
          cat "$build/bench/compensation-last.err" >&2
          echo "run_compensation: $w -t $t, $e failed" >&2
          exit 1
        }
        main=${line#main_us=}; main=${main%% *}
        raw=${line#*raw_us=}; raw=${raw%% *}
        inst=${line#*instances=}
        cal=$(grep -o 'timer delta_i [0-9.]* ns.*callpath delta_i [0-9.]*' "$build/bench/compensation-last.err" | head -1)
        timer_di=$(echo "$cal" | awk '{print $3}')
        callpath_di=$(echo "$cal" | awk '{print $NF}')
        echo "$w,$t,$e,$trial,$main,$raw,$inst,$timer_di,$callpath_di" >>"$out"
        done_runs=$((done_runs + 1))
      done
      printf 'run_compensation: %d/%d runs\r' "$done_runs" "$total" >&2
    done
  done
done
echo >&2
grep calibration "$build/bench/compensation-last.err" >&2 || true

python3 - "$out" "${experiments[@]}" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
exps = sys.argv[2:]
data = {}
for r in rows:
    data.setdefault((r["workload"], int(r["threads"]), r["experiment"]), []).append(float(r["main_us"]))
print("| Workload | threads | | " + " | ".join(exps) + " |")
print("|---|---|---|" + "---|" * len(exps))
for (w, t) in sorted({(k[0], k[1]) for k in data}, key=lambda x: (["is_sort", "tree_walk", "jacobi"].index(x[0]), x[1])):
    mins = {e: min(data[(w, t, e)]) for e in exps}
    means = {e: statistics.mean(data[(w, t, e)]) for e in exps}
    print(f"| {w} | {t} | min (us) | " + " | ".join(f"{mins[e]:.0f}" for e in exps) + " |")
    print(f"| | | mean (us) | " + " | ".join(f"{means[e]:.0f}" for e in exps) + " |")
    err = ["" if e == "MO" else f"{100 * (mins[e] / mins['MO'] - 1):.1f} : {100 * (means[e] / means['MO'] - 1):.1f}" for e in exps]
    print(f"| | | % error (min : mean) | " + " | ".join(err) + " |")
    # Not in the paper's table: the medians, which a run slowed as a whole
    # by the machine does not move.
    meds = {e: statistics.median(data[(w, t, e)]) for e in exps}
    print(f"| | | % error of the medians | " + " | ".join("" if e == "MO" else f"{100 * (meds[e] / meds['MO'] - 1):.1f}" for e in exps) + " |")
PY
echo "run_compensation: every run in $out" >&2

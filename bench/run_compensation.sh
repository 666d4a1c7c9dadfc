#!/usr/bin/env bash
# run_compensation.sh - the overhead-compensation evaluation of seed paper
# 001 (Malony & Shende, section 4.1), in the layout of its Table 1.
#
#   bench/run_compensation.sh [--simulated] BUILD_DIR [TRIALS] [OUT_CSV]
#   bench/run_compensation.sh --paired [--simulated] [--fit FIT] BUILD_DIR [ROUNDS] [OUT_CSV]
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
#
# --paired: the experiments inside one process per workload and thread
# count (compensation_eval PAIRED): the workload does its work ROUNDS times
# (default 21), a warm-up round and then MO, PA, MO, CA, ... in turn, so
# that each PA or CA round lies between two MO rounds of the same process:
# what moves from one process to the next (its calibration, a slow spell
# of seconds) moves both sides. PA-comp and CA-comp are the compensated
# values of the PA and CA rounds. Reports the round's time (us), minimum,
# mean and median, the % error of each against MO's, and the median of the
# paired errors (each round against the mean of the MO rounds around it).
# About 1 minute on 2 cores.
#
# --paired --simulated [--fit FIT]: time under the cache simulator as
# rounds of one process (MO, SIM, MO, SIM, ...; the *_cachesim builds).
# With --fit, each SIM round is compensated with the recording cost per
# reference measured in the rounds before it, as compensation_eval
# describes; only with one program thread (the fit counts the references
# of the round's thread).
#
# --paired --fit FIT: the same rounds after FIT cycles of fit rounds (MO,
# PA, MO, CA). compensation_eval measures what an instance cost in place
# in every PA and CA round, and compensates each later one with the median
# of the last FIT of its experiment, set as the timer or callpath kind's
# overhead (MRI_Set_Overhead; docs/ACCURACY.md, "Calibrating against the
# program"). ROUNDS counts the rounds after the fit; the CSV's column
# fitted_delta_ns is the Delta_i each PA and CA round was compensated with.
set -euo pipefail

# --paired: every workload and thread count as ROUNDS rounds of one process.
run_paired() {
  local rounds=$1 w t log lines cal timer_di callpath_di period=4 mode=() threads=(1 2)
  local -a fit_args=()
  if [[ -n $suffix ]]; then
    period=2
    mode=(--simulated)
    # The fit counts the references of the round's thread: one program thread.
    if [[ $fit -gt 0 ]]; then threads=(1); fi
  fi
  if [[ $fit -gt 0 ]]; then fit_args=(--fit "$fit"); fi
  echo "workload,threads,round,experiment,raw_us,comp_us,instances,timer_delta_i_ns,callpath_delta_i_ns,fitted_delta_ns,references,recording_ns" >"$out"
  for w in is_sort tree_walk jacobi; do
    for t in "${threads[@]}"; do
      printf 'run_compensation: %s%s, %d thread(s), %d rounds%s\n' "$w" "$suffix" "$t" "$rounds" \
        "${fit_args:+ after $((period * fit)) fit rounds}" >&2
      log=$build/bench/compensation-last.err
      lines=$("$dir/compensation_eval" PAIRED "$((rounds + period * fit))" "${mode[@]}" "${fit_args[@]}" -- \
        "$dir/$w$suffix" -t "$t" 2>"$log") || {
        cat "$log" >&2
        echo "run_compensation: $w$suffix -t $t, PAIRED failed" >&2
        exit 1
      }
      cal=$(grep -o 'timer delta_i [0-9.]* ns.*callpath delta_i [0-9.]*' "$log" | head -1)
      timer_di=$(echo "$cal" | awk '{print $3}')
      callpath_di=$(echo "$cal" | awk '{print $NF}')
      # key=value fields; the last three only on some lines.
      echo "$lines" |
        awk -v w="$w" -v t="$t" -v a="$timer_di" -v b="$callpath_di" '{
          delete f
          for (i = 1; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
          print w "," t "," f["round"] "," f["experiment"] "," f["raw_us"] "," f["comp_us"] "," f["instances"] "," a "," b \
                "," f["fitted_delta_ns"] "," f["references"] "," f["recording_ns"]
        }' >>"$out"
      grep calibration "$log" | sed "s/^/  /" >&2 || true
    done
  done
  python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
order = ["is_sort", "tree_walk", "jacobi"]
simulated = any(r["experiment"].endswith("SIM") for r in rows)
measured = ["SIM"] if simulated else ["PA", "CA"]
cols = ["MO"] + [c for e in measured for c in (e, e + "-comp")]
print("| Workload | threads | | " + " | ".join(cols) + " |")
print("|---|---|---|" + "---|" * len(cols))
for (w, t) in sorted({(r["workload"], int(r["threads"])) for r in rows}, key=lambda x: (order.index(x[0]), x[1])):
    rs = sorted((r for r in rows if r["workload"] == w and int(r["threads"]) == t), key=lambda r: int(r["round"]))
    series = {c: [] for c in cols}  # (round, us)
    for r in rs:
        e, n = r["experiment"], int(r["round"])
        if e == "MO":
            series["MO"].append((n, float(r["raw_us"])))
        elif e in measured:
            series[e].append((n, float(r["raw_us"])))
            series[e + "-comp"].append((n, float(r["comp_us"])))
    v = {c: [x for _, x in series[c]] for c in cols}
    mo_at = dict(series["MO"])
    def stat(f): return {c: f(v[c]) for c in cols}
    mins, means, meds = stat(min), stat(statistics.mean), stat(statistics.median)
    def err(d): return ["" if c == "MO" else f"{100 * (d[c] / d['MO'] - 1):.1f}" for c in cols]
    print(f"| {w} | {t} | min (us) | " + " | ".join(f"{mins[c]:.0f}" for c in cols) + " |")
    print(f"| | | mean (us) | " + " | ".join(f"{means[c]:.0f}" for c in cols) + " |")
    print(f"| | | % error (min : mean) | " + " | ".join("" if c == "MO" else f"{a} : {b}" for c, a, b in zip(cols, err(mins), err(means))) + " |")
    print(f"| | | % error of the medians | " + " | ".join(err(meds)) + " |")
    # Each round against the mean of the MO rounds just before and after it.
    paired = []
    for c in cols[1:]:
        es = [100 * (x / statistics.mean([mo_at[n - 1], mo_at[n + 1]]) - 1) for n, x in series[c] if n - 1 in mo_at and n + 1 in mo_at]
        paired.append(f"{statistics.median(es):.1f}" if es else "")
    print(f"| | | % error, paired (median) | | " + " | ".join(paired) + " |")
PY
  echo "run_compensation: every round in $out" >&2
}

suffix=
experiments=(MO PA PA-comp CA CA-comp)
paired=
fit=0
usage() {
  echo "usage: $0 [--simulated] BUILD_DIR [TRIALS] [OUT_CSV]" >&2
  echo "       $0 --paired [--simulated] [--fit FIT] BUILD_DIR [ROUNDS] [OUT_CSV]" >&2
  exit 2
}
while [[ ${1:-} == --* ]]; do
  case $1 in
    --simulated)
      suffix=_cachesim
      experiments=(MO SIM SIM-comp)
      shift
      ;;
    --paired)
      paired=1
      shift
      ;;
    --fit)
      [[ ${2:-} =~ ^[0-9]+$ && ${2:-} -ge 1 && ${2:-} -le 64 ]] ||
        { echo "run_compensation: --fit FIT: FIT must be a number from 1 to 64" >&2; exit 2; }
      fit=$2
      shift 2
      ;;
    *)
      echo "run_compensation: unknown option $1" >&2
      usage
      ;;
  esac
done
if [[ $fit -gt 0 && -z $paired ]]; then
  echo "run_compensation: --fit needs --paired (the fit is made in rounds)" >&2
  exit 2
fi
if [[ $# -lt 1 || $# -gt 3 ]]; then usage; fi
kind=compensation
if [[ -n $suffix ]]; then kind=simulation-compensation; fi
if [[ -n $paired ]]; then kind=$kind-paired; fi
if [[ $fit -gt 0 ]]; then kind=$kind-fitted; fi
build=$(cd "$1" && pwd)
out=${3:-$build/bench/$kind-results.csv}
dir=$build/bench/compensation
eval_tool=$dir/compensation_eval
for f in "$eval_tool" "$dir/is_sort$suffix" "$dir/tree_walk$suffix" "$dir/jacobi$suffix"; do
  [[ -x $f ]] || {
    echo "run_compensation: $f not found; build the benchmarks first${suffix:+ (the instrumentation needs clang)}" >&2
    exit 1
  }
done
if [[ -n $paired ]]; then
  rounds=${2:-21}
  [[ $rounds =~ ^[0-9]+$ && $rounds -ge 6 ]] || { echo "run_compensation: ROUNDS must be a number, 6 or more" >&2; exit 2; }
  run_paired "$rounds"
  exit 0
fi
trials=${2:-10}
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

#!/usr/bin/env bash
# run_compensation.sh - the overhead-compensation evaluation of seed paper
# 001 (Malony & Shende, section 4.1), in the layout of its Table 1.
#
#   bench/run_compensation.sh [--simulated] BUILD_DIR [TRIALS] [OUT_CSV]
#   bench/run_compensation.sh --paired [--simulated] [--fit FIT] BUILD_DIR [ROUNDS] [OUT_CSV]
#   bench/run_compensation.sh --fit FIT BUILD_DIR [TRIALS] [OUT_CSV]
#
# --only WORKLOAD[:THREADS] (before the others) runs one workload, with 1
# and 2 threads or only THREADS: for a long run of one case, whose
# interval (below) narrows with the square root of its runs.
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
#
# --fit FIT without --paired: separate processes again, each trial one
# `mri profile --fit FIT` of the workload for the flat profile and one
# with -o /dev/null for the callpath profile (tools/mri: 2 FIT + 1 runs
# that fit the overhead in the program, then the profile's run with it).
# MO and PA or CA are the fit's own runs (only main measured; every region,
# raw), PA-comp and CA-comp main's compensated time in the profile's run;
# the CSV's delta columns hold the fitted Delta_i. Adds the median error of
# each profile against the MO runs of its own fit. About 6 minutes with
# FIT 3 and 10 trials on 2 cores.
#
# SIGTERM or SIGHUP to this script (kill, `timeout`, a closed terminal)
# ends the PAIRED run it waits for, and with it its program
# (compensation_eval passes the signal on), then the script, of the same
# signal. (Ctrl-C reaches them all at once.)
set -euo pipefail

running=  # the PAIRED run in the background, while there is one
stop_running() {
  trap - "$1"
  if [[ -n $running ]]; then
    kill -"$1" "$running" 2>/dev/null || true
    wait "$running" 2>/dev/null || true
  fi
  kill -"$1" $$
}
trap 'stop_running TERM' TERM
trap 'stop_running HUP' HUP

# --paired: every workload and thread count as ROUNDS rounds of one process.
run_paired() {
  local rounds=$1 w t log got all pid status timer_di callpath_di period=4 mode=()
  local -a fit_args=()
  if [[ -n $suffix ]]; then
    period=2
    mode=(--simulated)
    # The fit counts the references of the round's thread: one program thread.
    if [[ $fit -gt 0 ]]; then
      [[ ${threads[*]} != 2 ]] || { echo "run_compensation: --paired --simulated --fit runs one program thread, not 2" >&2; exit 2; }
      threads=(1)
    fi
  fi
  if [[ $fit -gt 0 ]]; then fit_args=(--fit "$fit"); fi
  echo "workload,threads,round,experiment,raw_us,comp_us,instances,timer_delta_i_ns,callpath_delta_i_ns,fitted_delta_ns,references,recording_ns" >"$out"
  for w in "${workloads[@]}"; do
    for t in "${threads[@]}"; do
      printf 'run_compensation: %s%s, %d thread(s), %d rounds%s\n' "$w" "$suffix" "$t" "$rounds" \
        "${fit_args:+ after $((period * fit)) fit rounds}" >&2
      log=$build/bench/compensation-last.err
      got=$build/bench/compensation-last.out
      all=$((rounds + period * fit)) status=0
      "$dir/compensation_eval" PAIRED "$all" "${mode[@]}" "${fit_args[@]}" -- \
        "$dir/$w$suffix" -t "$t" >"$got" 2>"$log" &
      pid=$! running=$!
      show_rounds "$pid" "$got" "$all"
      wait "$pid" || status=$?
      running=
      read_calibration "$log"
      # key=value fields; the last three only on some lines. The rounds
      # before a failure are kept too.
      awk -v w="$w" -v t="$t" -v a="$timer_di" -v b="$callpath_di" '{
          delete f
          for (i = 1; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
          print w "," t "," f["round"] "," f["experiment"] "," f["raw_us"] "," f["comp_us"] "," f["instances"] "," a "," b \
                "," f["fitted_delta_ns"] "," f["references"] "," f["recording_ns"]
        }' "$got" >>"$out"
      if ((status != 0)); then
        cat "$log" >&2
        echo "run_compensation: $w$suffix -t $t, PAIRED failed after $(wc -l <"$got") of $all rounds; every round so far is in $out" >&2
        exit 1
      fi
      grep calibration "$log" | sed "s/^/  /" >&2 || true
    done
  done
  python3 - "$out" "$here/compensation" <<'PY'
import csv, statistics, sys
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[2])
import verdict
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
    paired, spans, es_of = [], [], {}
    for c in cols[1:]:
        es_of[c] = [100 * (x / statistics.mean([mo_at[n - 1], mo_at[n + 1]]) - 1) for n, x in series[c] if n - 1 in mo_at and n + 1 in mo_at]
        paired.append(f"{statistics.median(es_of[c]):.1f}" if es_of[c] else "")
    print(f"| | | % error, paired (median) | | " + " | ".join(paired) + " |")
    # How sure that median is (bench/compensation/verdict.py).
    dilated = bool(es_of.get("PA")) and statistics.median(es_of["PA"]) >= 100
    for c in cols[1:]:
        spans.append(verdict.cell(*verdict.median_interval(es_of[c]), c, dilated) if len(es_of[c]) > 1 else "")
    print(f"| | | 95% interval of the paired median | | " + " | ".join(spans) + " |")
PY
  echo "run_compensation: every round in $out" >&2
}

# The application's calibrated Delta_i of the timer and the callpath kind,
# from compensation_eval's log $1, into timer_di and callpath_di (empty
# where it printed none).
read_calibration() {
  local cal
  cal=$(grep -o 'timer delta_i [0-9.]* ns.*callpath delta_i [0-9.]*' "$1" | head -1 || true)
  timer_di=$(echo "$cal" | awk '{print $3}')
  callpath_di=$(echo "$cal" | awk '{print $NF}')
}

# How far the PAIRED run $1 is, from the rounds in file $2 (of $3), while
# it runs: a line rewritten every second on a terminal, else one a minute.
show_rounds() {
  local pid=$1 file=$2 all=$3 tick=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    tick=$((tick + 1))
    if [[ -t 2 ]]; then
      printf '\r  round %d of %d' "$(wc -l <"$file")" "$all" >&2
    elif ((tick % 60 == 0)); then
      printf '  round %d of %d\n' "$(wc -l <"$file")" "$all" >&2
    fi
  done
  if [[ -t 2 ]]; then printf '\r\033[K' >&2; fi
}

suffix=
experiments=(MO PA PA-comp CA CA-comp)
paired=
fit=0
workloads=(is_sort tree_walk jacobi)
threads=(1 2)
usage() {
  echo "usage: $0 [--only WORKLOAD[:THREADS]] [--simulated] BUILD_DIR [TRIALS] [OUT_CSV]" >&2
  echo "       $0 [--only WORKLOAD[:THREADS]] --paired [--simulated] [--fit FIT] BUILD_DIR [ROUNDS] [OUT_CSV]" >&2
  echo "       $0 [--only WORKLOAD[:THREADS]] --fit FIT BUILD_DIR [TRIALS] [OUT_CSV]" >&2
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
    --only)
      [[ ${2:-} =~ ^(is_sort|tree_walk|jacobi)(:[12])?$ ]] ||
        { echo "run_compensation: --only WORKLOAD[:THREADS]: WORKLOAD is is_sort, tree_walk or jacobi, THREADS 1 or 2, not \"${2:-}\"" >&2; exit 2; }
      workloads=("${2%%:*}")
      [[ $2 != *:* ]] || threads=("${2##*:}")
      shift 2
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
  [[ -z $suffix ]] || { echo "run_compensation: --simulated --fit needs --paired (the fit is made in rounds)" >&2; exit 2; }
  [[ $fit -le 16 ]] || { echo "run_compensation: --fit FIT without --paired: FIT must be from 1 to 16 (mri profile --fit)" >&2; exit 2; }
fi
if [[ $# -lt 1 || $# -gt 3 ]]; then usage; fi
kind=compensation
if [[ -n $suffix ]]; then kind=simulation-compensation; fi
if [[ -n $paired ]]; then kind=$kind-paired; fi
if [[ $fit -gt 0 ]]; then kind=$kind-fitted; fi
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
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

mri=$build/tools/mri/mri

# One `mri profile --fit FIT` of workload $1 with $2 threads, trial $3;
# $4: flat or callpath. Appends its runs to the CSV.
profile_fit() {
  local w=$1 t=$2 trial=$3 form=$4 table err=$build/bench/compensation-last.err delta main comp
  local -a out_args=()
  local measured=PA
  if [[ $form == callpath ]]; then out_args=(-o /dev/null); measured=CA; fi
  table=$("$mri" profile --fit "$fit" "${out_args[@]}" -- "$dir/$w" -t "$t" 2>"$err") || {
    cat "$err" >&2
    echo "run_compensation: mri profile --fit $fit ${out_args[*]} -- $w -t $t failed" >&2
    exit 1
  }
  # Empty when the fit found no overhead (the runs with every region were
  # not slower): the profile kept the application's calibration, which the
  # CSV then shows as "calibration" in the delta column.
  delta=$(sed -n 's/^mri: fit: a measured region instance costs \([0-9.]*\) ns.*/\1/p' "$err")
  if [[ -z $delta ]]; then
    delta=calibration
    grep '^mri: --fit: ' "$err" | sed "s/^mri: /run_compensation: $w -t $t, trial $trial, $form: /" >&2
  fi
  # The fit's runs: only main (MO) or every region (PA or CA), raw.
  awk -v w="$w" -v t="$t" -v trial="$trial" -v m="$measured" -v form="$form" '
    /^mri: fit run .* \(only the PROGRAM region\)/ { printf "%s,%s,MO,%s,%.1f,%.1f,,,,%s\n", w, t, trial, $(NF - 1) * 1e3, $(NF - 1) * 1e3, form }
    /^mri: fit run .* \(every region/ { for (i = 1; i <= NF; i++) if ($i == "ms,") printf "%s,%s,%s,%s,%.1f,%.1f,%s,,,%s\n", w, t, m, trial, $(i - 1) * 1e3, $(i - 1) * 1e3, $(i + 1), form }
  ' "$err" >>"$out"
  # The profile's run: main's row of the first table (raw and compensated inclusive ms).
  read -r main comp <<<"$(echo "$table" | awk '$1 == "main" && $2 == "PROGRAM" { print $5, $7; exit }')"
  [[ -n $comp ]] || { echo "$table" >&2; echo "run_compensation: $w -t $t: no row of main" >&2; exit 1; }
  if [[ $form == flat ]]; then delta="$delta,"; else delta=",$delta"; fi
  awk -v w="$w" -v t="$t" -v trial="$trial" -v m="$measured-comp" -v raw="$main" -v comp="$comp" -v d="$delta" \
    -v form="$form" 'BEGIN { printf "%s,%s,%s,%s,%.1f,%.1f,,%s,%s\n", w, t, m, trial, comp * 1e3, raw * 1e3, d, form }' >>"$out"
}

# The last two columns: the process's own calibration of the timer and
# callpath kinds (ns per pair, as published after its first release), so a
# run whose calibration a slow spell of the machine inflated can be told.
# With --fit, the last column says which profile (flat or callpath) a fit
# run belongs to.
echo "workload,threads,experiment,trial,main_us,raw_us,instances,timer_delta_i_ns,callpath_delta_i_ns,profile" >"$out"
total=$(( ${#workloads[@]} * ${#threads[@]} * trials * ${#experiments[@]} ))
[[ $fit -gt 0 ]] && total=$(( ${#workloads[@]} * ${#threads[@]} * trials * 2 * (2 * fit + 2) ))
done_runs=0
for w in "${workloads[@]}"; do
  for t in "${threads[@]}"; do
    for ((trial = 1; trial <= trials; trial++)); do
      if [[ $fit -gt 0 ]]; then
        for form in flat callpath; do
          profile_fit "$w" "$t" "$trial" "$form"
          done_runs=$((done_runs + 2 * fit + 2))
        done
        printf 'run_compensation: %d/%d runs\r' "$done_runs" "$total" >&2
        continue
      fi
      for e in "${experiments[@]}"; do
        line=$("$eval_tool" "$e" -- "$dir/$w$suffix" -t "$t" 2>"$build/bench/compensation-last.err") || {
          cat "$build/bench/compensation-last.err" >&2
          echo "run_compensation: $w -t $t, $e failed" >&2
          exit 1
        }
        main=${line#main_us=}; main=${main%% *}
        raw=${line#*raw_us=}; raw=${raw%% *}
        inst=${line#*instances=}
        read_calibration "$build/bench/compensation-last.err"
        echo "$w,$t,$e,$trial,$main,$raw,$inst,$timer_di,$callpath_di" >>"$out"
        done_runs=$((done_runs + 1))
      done
      printf 'run_compensation: %d/%d runs\r' "$done_runs" "$total" >&2
    done
  done
done
echo >&2
grep calibration "$build/bench/compensation-last.err" >&2 || true

python3 - "$out" "$here/compensation" "${experiments[@]}" <<'PY'
import csv, statistics, sys
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[2])
import verdict
rows = list(csv.DictReader(open(sys.argv[1])))
exps = sys.argv[3:]
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
    # How sure that median error is (bench/compensation/verdict.py).
    dilated = "PA" in meds and meds["PA"] >= 2 * meds["MO"]
    print(f"| | | 95% interval of the medians' error | " + " | ".join(
        "" if e == "MO" else verdict.cell(*verdict.ratio_interval(data[(w, t, e)], data[(w, t, "MO")]), e, dilated)
        for e in exps) + " |")
    # --fit: each profile against the mean of the MO runs of its own fit.
    if any(r.get("profile") for r in rows):
        own = []
        for e in exps:
            if not e.endswith("-comp"):
                own.append("")
                continue
            es = []
            for r in rows:
                if (r["workload"], int(r["threads"]), r["experiment"]) != (w, t, e): continue
                mo = [float(x["main_us"]) for x in rows if (x["workload"], int(x["threads"]), x["experiment"], x["trial"], x["profile"]) == (w, t, "MO", r["trial"], r["profile"])]
                es.append(100 * (float(r["main_us"]) / statistics.mean(mo) - 1))
            own.append(f"{statistics.median(es):.1f}")
        print(f"| | | % error against its fit's MO runs (median) | " + " | ".join(own) + " |")
kept = [r for r in rows if r.get("profile") and "calibration" in (r["timer_delta_i_ns"], r["callpath_delta_i_ns"])]
if kept:
    print(f"\n{len(kept)} profile(s) kept the application's calibration (their fit found no overhead): " +
          ", ".join(f'{r["workload"]} -t {r["threads"]} {r["experiment"]} trial {r["trial"]}' for r in kept))
PY
echo "run_compensation: every run in $out" >&2

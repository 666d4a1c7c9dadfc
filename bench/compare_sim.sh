#!/usr/bin/env bash
# compare_sim.sh - A/B comparison of the cache simulator of two builds, in
# interleaved rounds: its throughput (sim_throughput) and its slowdown of
# an instrumented program (run_cachesim_slowdown.sh's matrix multiply).
#
#   bench/compare_sim.sh [--only throughput|slowdown] [--out DIR] BUILD_A BUILD_B [ROUNDS]
#
# BUILD_A and BUILD_B are built trees (this script builds nothing; they
# need bench/sim_throughput, and for the slowdown bench/matmul_clang,
# bench/matmul_cachesim and tools/mri/mri, which need clang). ROUNDS
# (default 20; give at least 15, ab_stats.py says why) rounds of each part:
#
# throughput: a round runs A's and B's sim_throughput (A first in odd
#   rounds, B first in even ones), every benchmark (SIM_FILTER, a
#   --benchmark_filter, chooses others) with SIM_REPETITIONS (default 1)
#   repetitions of SIM_MIN_TIME (default 0.2) s; a side's figure per
#   round is the median over the repetitions. Million references a second
#   by CPU time and by wall time (for the rungs on two threads by both
#   threads' CPU time: items_per_cpu_second).
# slowdown: a round runs, for the ijk and the ikj order, every variant of
#   both builds once (run_variants, starting one further along each
#   round): native (matmul_clang: the instrumented program's compiler and
#   flags), dormant (matmul_cachesim, no tool), simulated with C monitored
#   (`mri hist --data C`), the same simulated in the program's thread
#   (MRI_CACHESIM_ASYNC=0: the engine alone, no simulation thread), and
#   simulated with every data structure monitored. A variant's figure per
#   round is its time over the same build's native time in that round, by
#   wall time and by the process's CPU time (every thread's: the
#   simulation thread works on the second core).
#
# Each row: A's and B's median over the rounds with the range, B - A, a
# 95% bootstrap interval of it, and the range rule's verdict (ab_stats.py:
# "within noise" when each median lies within the other's range). The
# defaults take 10-12 min on 2 cores loaded by other work (a
# throughput round about 20 s, a slowdown round about 8 s). Results: OUT (default
# BUILD_B/bench/sim-compare): round-NN/A.json, round-NN/B.json and
# slowdown.csv. Exit status: 0; 1 when a run failed or a figure is
# missing; 2 for a bad command line.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/variants.sh"

usage="usage: compare_sim.sh [--only throughput|slowdown] [--out DIR] BUILD_A BUILD_B [ROUNDS]"
only="" out=""
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --only | --out)
      [[ $# -ge 2 ]] || { echo "compare_sim: $1 needs a value; $usage" >&2; exit 2; }
      if [[ $1 == --only ]]; then only=$2; else out=$2; fi
      shift 2 ;;
    --only=* | --out=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;
    --help | -h) echo "$usage"; exit 0 ;;
    *) echo "compare_sim: unknown option '$1'; $usage" >&2; exit 2 ;;
  esac
done
[[ -z $only || $only == throughput || $only == slowdown ]] ||
  { echo "compare_sim: --only takes throughput or slowdown, not '$only'" >&2; exit 2; }
[[ $# -ge 2 && $# -le 3 ]] || { echo "$usage" >&2; exit 2; }
for b in "$1" "$2"; do [[ -d $b ]] || { echo "compare_sim: $b: not a directory" >&2; exit 2; }; done
build_a=$(cd "$1" && pwd)
build_b=$(cd "$2" && pwd)
rounds=${3:-20}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare_sim: ROUNDS must be a positive whole number (got '$rounds'); $usage" >&2; exit 2; }
reps=${SIM_REPETITIONS:-1}
min_time=${SIM_MIN_TIME:-0.2}
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "compare_sim: SIM_REPETITIONS must be a positive whole number (got '$reps')" >&2; exit 2; }
[[ $min_time =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "compare_sim: SIM_MIN_TIME must be a number of seconds (got '$min_time')" >&2; exit 2; }
need=()
[[ $only != slowdown ]] && need+=(bench/sim_throughput)
[[ $only != throughput ]] && need+=(bench/matmul_clang bench/matmul_cachesim tools/mri/mri)
for b in "$build_a" "$build_b"; do
  for f in "${need[@]}"; do
    [[ -x $b/$f ]] || { echo "compare_sim: $b/$f not found; build it first (the instrumented programs need clang)" >&2; exit 2; }
  done
done
out=${out:-$build_b/bench/sim-compare}
mkdir -p "$out"
out=$(cd "$out" && pwd)
trap 'echo "compare_sim: interrupted; the rounds so far are in $out" >&2; exit 130' INT TERM
(( rounds >= 15 )) ||
  echo "compare_sim: note: with fewer than 15 rounds even an A/A run often says 'unclear' (ab_stats.py)" >&2

echo "Cache simulator, A/B: A = $build_a, B = $build_b"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
status=0

if [[ $only != slowdown ]]; then
  rm -rf "$out"/round-*
  for ((r = 1; r <= rounds; r++)); do
    echo "compare_sim: throughput, round $r of $rounds" >&2
    dir=$(printf '%s/round-%02d' "$out" "$r")
    mkdir -p "$dir"
    sides=(A B)
    (( r % 2 == 0 )) && sides=(B A)
    for side in "${sides[@]}"; do
      if [[ $side == A ]]; then build=$build_a; else build=$build_b; fi
      if ! "$build/bench/sim_throughput" --benchmark_filter="${SIM_FILTER:-.}" --benchmark_repetitions="$reps" \
          --benchmark_min_time="$min_time" --benchmark_report_aggregates_only=true --benchmark_out_format=json \
          --benchmark_out="$dir/$side.json" >"$dir/$side.log" 2>&1; then
        echo "compare_sim: round $r, $side: sim_throughput failed; see $dir/$side.log" >&2
        status=1
      fi
    done
  done
  echo
  python3 -B "$here/sim_results.py" throughput "$out" || status=1
  echo "repetitions: $reps x $min_time s a benchmark and process"
fi

if [[ $only != throughput ]]; then
  names=() cmds=()
  # variant NAME ARGS...: the variant for A, then for B (BUILD in ARGS stands for the build).
  variant() {
    local name=$1 side build
    shift
    for side in A B; do
      if [[ $side == A ]]; then build=$build_a; else build=$build_b; fi
      names+=("$side: $name")
      cmds+=("${*//BUILD/$build}")
    done
  }
  hist="BUILD/tools/mri/mri hist --metric L1_DATA_READ_MISS --region multiply -o /dev/null"
  variant "native (clang -O2, as instrumented)" BUILD/bench/matmul_clang
  variant "instrumented, dormant (no tool)" BUILD/bench/matmul_cachesim
  variant "simulated, C monitored" "$hist --data C -- BUILD/bench/matmul_cachesim"
  variant "  the same in place (ASYNC=0)" env MRI_CACHESIM_ASYNC=0 "$hist --data C -- BUILD/bench/matmul_cachesim"
  variant "simulated, all data structures" "$hist -- BUILD/bench/matmul_cachesim"
  csv=$out/slowdown.csv
  echo "order,round,variant,ms,cpu_ms" > "$csv"
  for order in ijk ikj; do
    for ((r = 1; r <= rounds; r++)); do
      echo "compare_sim: slowdown, $order, round $r of $rounds" >&2
      run_variants "$r" ms,cpu_ms "$csv" "$order," "$order, round $r" "$order"
    done
  done
  echo
  python3 -B "$here/sim_results.py" slowdown "$csv" "${names[@]}" || status=1
fi
echo "results: $out"
exit $status

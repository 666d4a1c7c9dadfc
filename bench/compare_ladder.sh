#!/usr/bin/env bash
# compare_ladder.sh - A/B comparison of the hot-path cost ladder of two
# builds, in interleaved rounds, with a verdict that says when a
# difference is within the run-to-run noise.
#
#   bench/compare_ladder.sh [--lib-a DIR] [--lib-b DIR] [--out DIR] BUILD_A BUILD_B [ROUNDS]
#
# BUILD_A and BUILD_B are built trees (BUILD/bench/ladder_app and
# ladder_tool; this script builds nothing): e.g. main in one, a branch in
# the other. The same tree twice with --lib-b DIR compares two
# libmonitor.so with the same ladder_app: DIR goes first on
# LD_LIBRARY_PATH for side B's processes (ladder_app's RUNPATH gives way
# to it; the header shows which libmonitor.so each side loads).
# The same tree twice without --lib-*: an A/A run, the check of the
# verdict rule (every row should say "within noise").
#
# ROUNDS (default 20) rounds; a round runs the ladder's eight processes
# (ladder_processes.sh: plain, attached, aggregate, profile, callpath,
# counter, trace1, trace2), starting one further along each round, each
# process for A and for B back to back, A first in odd rounds and B first
# in even ones. A process runs its rung at 1 and 2 threads (plain: the
# uninstrumented and the dormant rung; trace1 and trace2 one thread count
# each) with LADDER_REPETITIONS (default 3) repetitions of
# LADDER_MIN_TIME (default 0.1) s; its figure is the median of those. The
# defaults take about 17 s a round on 2 cores, 6 min in all; give at least
# 15 rounds (ab_stats.py: with fewer, even an A/A run often says
# "unclear").
#
# Output: per rung and thread count, ns per enter+exit pair by CPU time
# and, at 2 threads and for the trace rung, by wall time (one thread's
# wall time a pair: where the second thread or the tool's trace collector
# competes for the cores, the two differ), and for the trace rung the
# processes' waits for ring room: A's and B's median over the rounds with
# their range (min-max), the difference of the medians, a 95% bootstrap
# interval of it, and the verdict of the range rule (ab_stats.py):
#   within noise  B's median lies within A's range, and A's within B's
#   B slower      both medians outside the other's range, B's above
#   B faster      the same, B's below
#   unclear       one median within the other's range, the other not
# Every process's JSON and log: OUT (default BUILD_B/bench/ladder-compare),
# round-NN/A/NAME.* and round-NN/B/NAME.*.
#
# Exit status: 0; 1 when a process failed (its ladder_tool check, say) or
# a figure is missing; 2 for a bad command line. SIGINT (^C: the running
# process gets it too) ends the run; SIGTERM ends it once the running
# process has finished (a few seconds).
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/ladder_processes.sh"

usage="usage: compare_ladder.sh [--lib-a DIR] [--lib-b DIR] [--out DIR] BUILD_A BUILD_B [ROUNDS]"
lib_a="" lib_b="" out=""
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --lib-a | --lib-b | --out)
      [[ $# -ge 2 ]] || { echo "compare_ladder: $1 needs a directory; $usage" >&2; exit 2; }
      [[ $1 == --out || -d $2 ]] || { echo "compare_ladder: $1 $2: not a directory" >&2; exit 2; }
      case $1 in --lib-a) lib_a=$(cd "$2" && pwd) ;; --lib-b) lib_b=$(cd "$2" && pwd) ;; --out) out=$2 ;; esac
      shift 2 ;;
    --lib-a=* | --lib-b=* | --out=*)
      set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;
    --help | -h) echo "$usage"; exit 0 ;;
    *) echo "compare_ladder: unknown option '$1'; $usage" >&2; exit 2 ;;
  esac
done
[[ $# -ge 2 && $# -le 3 ]] || { echo "$usage" >&2; exit 2; }
ladder_check_build "$1" || exit 2
ladder_check_build "$2" || exit 2
build_a=$(cd "$1" && pwd)
build_b=$(cd "$2" && pwd)
rounds=${3:-20}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare_ladder: ROUNDS must be a positive whole number (got '$rounds'); $usage" >&2; exit 2; }
export LADDER_REPETITIONS=${LADDER_REPETITIONS:-3} LADDER_MIN_TIME=${LADDER_MIN_TIME:-0.1}
[[ $LADDER_REPETITIONS =~ ^[1-9][0-9]*$ ]] ||
  { echo "compare_ladder: LADDER_REPETITIONS must be a positive whole number (got '$LADDER_REPETITIONS')" >&2; exit 2; }
[[ $LADDER_MIN_TIME =~ ^[0-9]*\.?[0-9]+$ ]] ||
  { echo "compare_ladder: LADDER_MIN_TIME must be a number of seconds (got '$LADDER_MIN_TIME')" >&2; exit 2; }
out=${out:-$build_b/bench/ladder-compare}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out"/round-*
trap 'echo "compare_ladder: interrupted; the rounds so far are in $out" >&2; exit 130' INT TERM
(( rounds >= 15 )) ||
  echo "compare_ladder: note: with fewer than 15 rounds even an A/A run often says 'unclear' (ab_stats.py)" >&2

# Which libmonitor.so a side's ladder_app loads, as the dynamic loader resolves it.
libmonitor_of() {
  local build=$1 libdir=$2
  if [[ -n $libdir ]]; then
    LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$build/bench/ladder_app"
  else
    ldd "$build/bench/ladder_app"
  fi | awk '/libmonitor/ {print $3; exit}'
}

mapfile -t procs < <(ladder_processes)
status=0
for ((r = 1; r <= rounds; r++)); do
  echo "compare_ladder: round $r of $rounds" >&2
  dir=$(printf '%s/round-%02d' "$out" "$r")
  mkdir -p "$dir/A" "$dir/B"
  for ((k = 0; k < ${#procs[@]}; k++)); do
    name=${procs[$(( (k + r - 1) % ${#procs[@]} ))]}
    sides=(A B)
    (( r % 2 == 0 )) && sides=(B A)
    for side in "${sides[@]}"; do
      if [[ $side == A ]]; then build=$build_a lib=$lib_a; else build=$build_b lib=$lib_b; fi
      if ! ladder_run "$build" compare "$name" "$dir/$side/$name" "$lib"; then
        echo "compare_ladder: round $r, $side: $name failed; see $dir/$side/$name.log" >&2
        tail -3 "$dir/$side/$name.log" >&2
        status=1
      fi
    done
  done
done

echo
echo "Hot-path cost ladder, A/B: $rounds interleaved rounds, $LADDER_REPETITIONS x $LADDER_MIN_TIME s a process and benchmark"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "A: $build_a${lib_a:+ with LD_LIBRARY_PATH=$lib_a}; libmonitor: $(libmonitor_of "$build_a" "$lib_a")"
echo "B: $build_b${lib_b:+ with LD_LIBRARY_PATH=$lib_b}; libmonitor: $(libmonitor_of "$build_b" "$lib_b")"
echo
python3 -B "$here/ladder_results.py" compare "$out" || status=1
echo "JSON and logs: $out"
exit $status

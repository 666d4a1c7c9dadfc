#!/usr/bin/env bash
# run_ladder.sh - runs the hot-path cost ladder in interleaved rounds and
# prints one summary table.
#
#   bench/run_ladder.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR is a configured and built tree (this script builds nothing); it
# needs BUILD_DIR/bench/ladder_app and BUILD_DIR/bench/ladder_tool.
# OUT_DIR (default BUILD_DIR/bench/ladder-results) receives
# round-NN/NAME.json and .log, one pair a process (an earlier run's rounds
# there are removed first).
#
# A round is eight processes (ladder_processes.sh), one after the other,
# each round starting one process further along:
#   plain      ladder_app alone: uninstrumented, dormant, and the timer context
#              (rdtsc, clock_gettime, rdtsc_pair, perf_read, papi_pair)
#   attached   ladder_tool attached  -- ladder_app: uninstrumented (control), attached
#   aggregate  ladder_tool aggregate -- ladder_app: uninstrumented (control), aggregate
#   profile    ladder_tool profile   -- ladder_app: uninstrumented (control), profile
#   callpath   ladder_tool callpath  -- ladder_app: uninstrumented (control), callpath
#   counter    ladder_tool counter   -- ladder_app: uninstrumented (control), counter
#   trace1     ladder_tool trace     -- ladder_app: trace at 1 thread
#   trace2     ladder_tool trace     -- ladder_app: trace at 2 threads
#
# Environment: LADDER_ROUNDS (default 5), LADDER_REPETITIONS (per process,
# default 3), LADDER_MIN_TIME (seconds per repetition, default 0.1). The
# defaults take 1.5-3 min on 2 cores (the more, the busier the machine).
#
# Reported: per rung and thread count, the median over the rounds [and
# range] of each process's median over its repetitions, by CPU time
# (Google Benchmark's cpu_time: ns per enter+exit pair on one thread, also
# at 2 threads) and, at 2 threads and for the trace rung, by wall time
# (real_time x threads: one thread's wall time a pair); the difference to
# the uninstrumented rung of the same round; the target checked on the
# median of those differences over the rounds (never on one process
# run: the counter and 2-thread trace rungs flip between met and missed
# from run to run), saying when the rounds straddle it. The trace rung
# also gives ns per record by CPU and by wall and the waits for ring room
# (ladder_results.py). Exit status: 0, or 1 when a run failed, a tool's
# check of its request did not pass or a figure is missing. The targets
# are shown for reading, not enforced.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/ladder_processes.sh"

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 BUILD_DIR [OUT_DIR]" >&2
  exit 2
fi
ladder_check_build "$1" || exit 2
build=$(cd "$1" && pwd)
out=${2:-$build/bench/ladder-results}
rounds=${LADDER_ROUNDS:-5}
export LADDER_REPETITIONS=${LADDER_REPETITIONS:-3} LADDER_MIN_TIME=${LADDER_MIN_TIME:-0.1}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "run_ladder: LADDER_ROUNDS must be a positive whole number (got '$rounds')" >&2; exit 2; }
[[ $LADDER_REPETITIONS =~ ^[1-9][0-9]*$ ]] ||
  { echo "run_ladder: LADDER_REPETITIONS must be a positive whole number (got '$LADDER_REPETITIONS')" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out"/round-*

mapfile -t procs < <(ladder_processes)
status=0
for ((r = 1; r <= rounds; r++)); do
  dir=$(printf '%s/round-%02d' "$out" "$r")
  mkdir -p "$dir"
  echo "run_ladder: round $r of $rounds" >&2
  for ((k = 0; k < ${#procs[@]}; k++)); do
    name=${procs[$(( (k + r - 1) % ${#procs[@]} ))]}
    if ! ladder_run "$build" table "$name" "$dir/$name"; then
      echo "run_ladder: round $r: $name failed; see $dir/$name.log" >&2
      tail -5 "$dir/$name.log" >&2
      status=1
    fi
  done
done
grep -h '^ladder_tool:' "$out"/round-01/*.log >&2 || true

python3 -B "$here/ladder_results.py" table "$out" || status=1
echo "repetitions: $LADDER_REPETITIONS x $LADDER_MIN_TIME s per process and benchmark"
exit $status

#!/usr/bin/env bash
# What a short thread costs under the cache-simulator backend: threads
# created and joined one after another (bench/thread_churn.c), each making
# REFS memory references, timed by the program itself from the first
# creation to the last join ("us_per_thread=", wall time, and
# "cpu_us_per_thread=", the process's CPU time over the same span: the
# simulation thread works on the second core).
#
#   bench/run_thread_churn.sh BUILD_DIR [ROUNDS] [THREADS]
#
# ROUNDS rounds (default 5) for each REFS (1: one reference, the thread's
# start and end are all it costs; 4096: one batch of references to
# simulate), THREADS threads a run (default 20000). A round runs every
# variant once, starting one variant further along each round; the table
# gives each variant's median time a thread, the range over the rounds,
# and the median of its time / the native time of the same round (a host
# whose speed drifts moves both alike), by wall and by CPU time. Every
# run goes to BUILD_DIR/bench/thread-churn.csv (refs,round,variant,us,cpu_us).
#
# Variants: native (thread_churn_clang: the instrumented program's
# compiler and flags, no instrumentation, no tool); native built by the
# project's compiler (thread_churn), for reference; dormant (thread_churn_cachesim,
# no tool: the instrumentation tests its flag, nothing is recorded); timed
# (thread_churn_cachesim under compensation_eval MO: "main" timed, no cache
# request, nothing recorded); simulated (compensation_eval SIM: every
# reference of every thread recorded and simulated; each recording thread
# needs reference buffers, backends/cachesim/README.md).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/variants.sh"
usage="usage: run_thread_churn.sh BUILD_DIR [ROUNDS] [THREADS]"
build=${1:?$usage}
runs=${2:-5}
threads=${3:-20000}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive whole number (got '$runs'); $usage" >&2; exit 2; }
[[ $threads =~ ^[1-9][0-9]*$ && $threads -le 1000000 ]] ||
  { echo "THREADS must be a whole number from 1 to 1000000 (got '$threads'); $usage" >&2; exit 2; }
native=$build/bench/thread_churn_clang
native_cc=$build/bench/thread_churn
inst=$build/bench/thread_churn_cachesim
eval=$build/bench/compensation/compensation_eval
for f in "$native" "$native_cc" "$inst" "$eval"; do
  [ -x "$f" ] || { echo "missing $f (build with -DMRI_BUILD_BENCH=ON first; the instrumented program needs clang)" >&2; exit 1; }
done
csv=$build/bench/thread-churn.csv

names=("native (clang, as instrumented)" "  native, the project's compiler" "instrumented, dormant (no tool)"
       "instrumented, main timed (MO)" "instrumented, simulated (SIM)")
cmds=("$native" "$native_cc" "$inst" "$eval MO -- $inst" "$eval SIM -- $inst")

echo "refs,round,variant,us,cpu_us" > "$csv"
for refs in 1 4096; do
  for round in $(seq "$runs"); do
    echo "refs $refs: round $round of $runs" >&2
    run_variants "$round" us_per_thread,cpu_us_per_thread "$csv" "$refs," "refs $refs, round $round" "$threads" "$refs"
  done
done

printf '%s\n' "${names[@]}" | python3 -c '
import csv, statistics, sys
names = [l.rstrip("\n") for l in sys.stdin]
rows = list(csv.DictReader(open(sys.argv[1])))
print("%5s  %-34s  %35s  %35s" % ("", "", "--------------- wall --------------", "--------------- CPU ---------------"))
print("%5s  %-34s  %10s  %15s  %6s  %10s  %15s  %6s" % ("refs", "variant", "us/thread", "rounds", "x", "us/thread",
      "rounds", "x"))
for refs in ("1", "4096"):
    us = {}
    for r in rows:
        if r["refs"] == refs:
            us.setdefault(int(r["variant"]), {})[int(r["round"])] = (float(r["us"]), float(r["cpu_us"]))
    for v, name in enumerate(names):
        cells = []
        for f in (0, 1):
            own = [x[f] for x in us[v].values()]
            ratios = [us[v][k][f] / us[0][k][f] for k in us[v]]
            cells.append("%10.1f  %7.1f-%7.1f  %5.2fx" % (statistics.median(own), min(own), max(own),
                         statistics.median(ratios)))
        print("%5s  %-34s  %s  %s" % (refs, name, cells[0], cells[1]))
' "$csv"
echo "$threads threads a run, $runs rounds, every variant once a round; medians; runs in $csv"
echo "x: median over the rounds of the variant's time / that round's native time (the first row); CPU: every thread of the process"

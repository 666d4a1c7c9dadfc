#!/usr/bin/env bash
# What a short thread costs under the cache-simulator backend: threads
# created and joined one after another (bench/thread_churn.c), each making
# REFS memory references, timed by the program itself from the first
# creation to the last join ("us_per_thread=").
#
#   bench/run_thread_churn.sh BUILD_DIR [ROUNDS] [THREADS]
#
# ROUNDS rounds (default 5) for each REFS (1: one reference, the thread's
# start and end are all it costs; 4096: one batch of references to
# simulate), THREADS threads a run (default 20000). A round runs every
# variant once, starting one variant further along each round; the table
# gives each variant's median time a thread, the range over the rounds,
# and the median of its time / the native time of the same round (a host
# whose speed drifts moves both alike). Every run goes to
# BUILD_DIR/bench/thread-churn.csv (refs,round,variant,us).
#
# Variants: native (thread_churn, no tool); dormant (thread_churn_cachesim,
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
native=$build/bench/thread_churn
inst=$build/bench/thread_churn_cachesim
eval=$build/bench/compensation/compensation_eval
for f in "$native" "$inst" "$eval"; do
  [ -x "$f" ] || { echo "missing $f (build with -DMRI_BUILD_BENCH=ON first; the instrumented program needs clang)" >&2; exit 1; }
done
csv=$build/bench/thread-churn.csv

names=("native (no tool)" "instrumented, dormant (no tool)" "instrumented, main timed (MO)" "instrumented, simulated (SIM)")
cmds=("$native" "$inst" "$eval MO -- $inst" "$eval SIM -- $inst")

echo "refs,round,variant,us" > "$csv"
for refs in 1 4096; do
  for round in $(seq "$runs"); do
    echo "refs $refs: round $round of $runs" >&2
    run_variants "$round" us_per_thread "$csv" "$refs," "refs $refs, round $round" "$threads" "$refs"
  done
done

printf '%s\n' "${names[@]}" | python3 -c '
import csv, statistics, sys
names = [l.rstrip("\n") for l in sys.stdin]
rows = list(csv.DictReader(open(sys.argv[1])))
print("%5s  %-34s  %10s  %15s  %9s" % ("refs", "variant", "us/thread", "rounds", "/ native"))
for refs in ("1", "4096"):
    us = {}
    for r in rows:
        if r["refs"] == refs:
            us.setdefault(int(r["variant"]), {})[int(r["round"])] = float(r["us"])
    for v, name in enumerate(names):
        ratios = [us[v][k] / us[0][k] for k in us[v]]
        print("%5s  %-34s  %10.1f  %7.1f-%7.1f  %8.2fx" % (refs, name, statistics.median(us[v].values()),
              min(us[v].values()), max(us[v].values()), statistics.median(ratios)))
' "$csv"
echo "$threads threads a run, $runs rounds, every variant once a round; medians; runs in $csv"

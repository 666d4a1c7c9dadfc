#!/usr/bin/env bash
# What libmonitor's interposed pthread_barrier_wait costs
# (bench/barrier_wait.c; libmonitor/threads.cpp carries the overhead clock
# across barriers, counting each barrier's arrivals under a mutex).
#
#   bench/run_barrier_wait.sh BUILD_DIR [ROUNDS] [THREADS] [WAITS]
#
# ROUNDS rounds (default 7) of every variant, THREADS threads (default 2;
# 1: a wait returns at once, and the table shows what the interposition
# itself costs)
# meeting WAITS times (default 200000) at one barrier with no work
# between. A round runs every variant once, starting one further along
# each round; the table gives each variant's median time a wait, its
# range, and the median of its time / the plain program's in the same
# round. Every run goes to BUILD_DIR/bench/barrier-wait.csv
# (round,variant,ns_per_wait).
#
# Variants: plain (barrier_wait_plain: libc's barrier, no libmonitor);
# dormant (barrier_wait, linked with libmonitor, no tool: the arrivals are
# counted all the same); monitored (barrier_wait under compensation_eval
# MO: a tool attached, region "main" measured, the clock carried across
# every wait).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/variants.sh"
usage="usage: run_barrier_wait.sh BUILD_DIR [ROUNDS] [THREADS] [WAITS]"
build=${1:?$usage}
runs=${2:-7}
threads=${3:-2}
waits=${4:-200000}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive whole number (got '$runs'); $usage" >&2; exit 2; }
[[ $threads =~ ^[0-9]+$ && $threads -ge 1 && $threads -le 64 ]] ||
  { echo "THREADS must be a whole number from 1 to 64 (got '$threads'); $usage" >&2; exit 2; }
[[ $waits =~ ^[1-9][0-9]*$ && $waits -ge 2 && $waits -le 100000000 ]] ||
  { echo "WAITS must be a whole number from 2 to 100000000 (got '$waits'); $usage" >&2; exit 2; }
plain=$build/bench/barrier_wait_plain
linked=$build/bench/barrier_wait
eval=$build/bench/compensation/compensation_eval
for f in "$plain" "$linked" "$eval"; do
  [ -x "$f" ] || { echo "missing $f (build with -DMRI_BUILD_BENCH=ON first)" >&2; exit 1; }
done
csv=$build/bench/barrier-wait.csv

names=("plain (libc, no libmonitor)" "libmonitor, dormant (no tool)" "libmonitor, monitored (MO)")
cmds=("$plain" "$linked" "$eval MO -- $linked")

echo "round,variant,ns_per_wait" > "$csv"
for round in $(seq "$runs"); do
  echo "round $round of $runs" >&2
  run_variants "$round" ns_per_wait "$csv" "" "round $round" "$threads" "$waits"
done

echo "$threads threads, $waits waits a run, $runs rounds (every run in $csv)"
echo
printf '%s\n' "${names[@]}" | python3 -c '
import csv, statistics, sys
names = [l.rstrip("\n") for l in sys.stdin]
ns = {}
for r in csv.DictReader(open(sys.argv[1])):
    ns.setdefault(int(r["variant"]), {})[int(r["round"])] = float(r["ns_per_wait"])
print("| variant | ns a wait (median) | range | / plain (median of the rounds) |")
print("|---|---:|---:|---:|")
for v, name in enumerate(names):
    own = ns[v]
    print("| %s | %.0f | %.0f-%.0f | %.2f |" % (name, statistics.median(own.values()), min(own.values()),
          max(own.values()), statistics.median([own[k] / ns[0][k] for k in own])))
' "$csv"

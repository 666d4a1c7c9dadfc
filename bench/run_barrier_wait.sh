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
nv=${#names[@]}

echo "round,variant,ns_per_wait" > "$csv"
for round in $(seq "$runs"); do
  echo "round $round of $runs" >&2
  for k in $(seq 0 $((nv - 1))); do
    i=$(( (k + round - 1) % nv ))
    # $cmds[i] holds no quoted words with spaces: word splitting is wanted.
    # shellcheck disable=SC2086
    out=$(${cmds[$i]} "$threads" "$waits" 2>/dev/null) ||
      { echo "variant '${names[$i]}' failed (round $round)" >&2; exit 1; }
    ns=$(sed -n 's/.*ns_per_wait=\([0-9.]*\).*/\1/p' <<<"$out" | head -1)
    [ -n "$ns" ] || { echo "variant '${names[$i]}' printed no ns_per_wait= (round $round)" >&2; exit 1; }
    echo "$round,$i,$ns" >> "$csv"
  done
done

echo "$threads threads, $waits waits a run, $runs rounds (every run in $csv)"
echo
echo "| variant | ns a wait (median) | range | / plain (median of the rounds) |"
echo "|---|---:|---:|---:|"
for i in $(seq 0 $((nv - 1))); do
  awk -F, -v v="$i" -v name="${names[$i]}" '
    NR > 1 { t[$1, $2] = $3; if ($1 > rounds) rounds = $1 }
    function median(a, n,   i, j, x) {
      for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
      for (r = 1; r <= rounds; r++) { own[r] = t[r, v]; ratio[r] = t[r, v] / t[r, 0] }
      lo = own[1]; hi = own[1]
      for (r = 2; r <= rounds; r++) { if (own[r] < lo) lo = own[r]; if (own[r] > hi) hi = own[r] }
      printf "| %s | %.0f | %.0f-%.0f | %.2f |\n", name, median(own, rounds), lo, hi, median(ratio, rounds)
    }' "$csv"
done

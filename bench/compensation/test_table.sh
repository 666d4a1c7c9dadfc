#!/usr/bin/env bash
# run_compensation.sh --paired end to end, on jacobi (the shortest
# workload): the CSV holds every round and the table its rows; a run that
# fails part-way keeps the rounds before the failure in the CSV and says
# how far it came.
#
#   test_table.sh RUN_COMPENSATION BUILD_DIR
set -euo pipefail
script=$1 build=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bash "$script" --only jacobi:1 --paired "$build" 6 "$tmp/ok.csv" >"$tmp/ok.txt" 2>"$tmp/ok.err" ||
  { cat "$tmp/ok.err"; fail "--only jacobi:1 --paired 6 failed"; }
[[ $(head -1 "$tmp/ok.csv") == workload,threads,round,experiment,* ]] || fail "no CSV header: $(head -1 "$tmp/ok.csv")"
[[ $(grep -c '^jacobi,1,' "$tmp/ok.csv") == 6 ]] || { cat "$tmp/ok.csv"; fail "expected 6 rounds in the CSV"; }
awk -F, 'NR > 1 && !($3 == NR - 1 && $5 > 0 && $6 > 0 && $6 <= $5) { bad = 1 } END { exit bad }' "$tmp/ok.csv" ||
  { cat "$tmp/ok.csv"; fail "a CSV round out of order, or without its times"; }
grep -q '^| jacobi | 1 | min (us) | ' "$tmp/ok.txt" || { cat "$tmp/ok.txt"; fail "no table row for jacobi"; }
grep -q '95% interval' "$tmp/ok.txt" || { cat "$tmp/ok.txt"; fail "no 95% interval row"; }

# 2 threads with one thread row: the third round (the first that measures
# every region) finds the second thread without a row and the run stops.
status=0
MRI_MAX_THREADS=1 bash "$script" --only jacobi:2 --paired "$build" 6 "$tmp/part.csv" >"$tmp/part.txt" 2>"$tmp/part.err" ||
  status=$?
[[ $status == 1 ]] || { cat "$tmp/part.err"; fail "a failing PAIRED run: exit status $status, expected 1"; }
grep -q "found no row in the monitor (MRI_MAX_THREADS)" "$tmp/part.err" || { cat "$tmp/part.err"; fail "no reason given"; }
grep -q "PAIRED failed after 2 of 6 rounds; every round so far is in $tmp/part.csv" "$tmp/part.err" ||
  { cat "$tmp/part.err"; fail "not said how far the run came"; }
[[ $(grep -c '^jacobi,2,' "$tmp/part.csv") == 2 ]] || { cat "$tmp/part.csv"; fail "the 2 rounds before the failure are not in the CSV"; }
echo "PASS"

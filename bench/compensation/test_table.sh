#!/usr/bin/env bash
# run_compensation.sh --paired end to end, on jacobi (the shortest
# workload): the CSV holds every round and the table its rows; a run that
# fails part-way keeps the rounds before the failure in the CSV and says
# how far it came; SIGTERM to the script ends the run and its program.
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
# SIGTERM to the script (`timeout`, kill) ends the PAIRED run and its
# program with it; the script dies of it (143).
alive() { [[ -e /proc/$1 ]] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
(exec bash "$script" --only jacobi:1 --paired "$build" 100000 "$tmp/term.csv" >"$tmp/term.txt" 2>"$tmp/term.err") &
runner=$!
ev= program=
for i in $(seq 1 200); do
  ev=$(pgrep -P "$runner" -f compensation_eval || true)
  [[ -n $ev ]] && program=$(pgrep -P "$ev" || true)
  [[ -n $program && $(wc -l <"$build/bench/compensation-last.out" 2>/dev/null || echo 0) -ge 2 ]] && break
  sleep 0.05
done
[[ -n $program ]] || { kill -KILL "$runner" $ev 2>/dev/null; fail "SIGTERM: no PAIRED run under the script"; }
kill -TERM "$runner"
status=0
wait "$runner" || status=$?
[[ $status == 143 ]] || { cat "$tmp/term.err"; fail "SIGTERM to the script: status $status, expected 143"; }
for i in $(seq 1 100); do
  alive "$ev" || alive "$program" || break
  sleep 0.1
done
if alive "$ev" || alive "$program"; then
  kill -KILL "$ev" "$program" 2>/dev/null
  fail "SIGTERM to the script: compensation_eval or its program ran on"
fi
echo "PASS"

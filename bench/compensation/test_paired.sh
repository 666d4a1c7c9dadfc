#!/usr/bin/env bash
# compensation_eval PAIRED on the real workloads: the rounds come in the
# announced order, each round is measured once, the PA and CA rounds see
# every instance (as many as a whole-program PA run with as many threads
# counts, less main, which the rounds do not measure), compensation
# removes something from them and nothing but the round's own part from
# MO, a program with more threads than the monitor's rows is stopped with
# the reason and ended, and bad input is refused with a reason.
#
#   test_paired.sh COMPENSATION_EVAL TREE_WALK JACOBI [JACOBI_CACHESIM]
#
# With JACOBI_CACHESIM (the workload built with the cache-simulator
# instrumentation), also --simulated, with and without --fit.
set -euo pipefail
eval_tool=$1 tree_walk=$2 jacobi=$3 jacobi_cachesim=${4:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for threads in 1 2; do
  # A whole-program PA run (one round) for the instance count.
  "$eval_tool" PA -- "$tree_walk" -n 300 -w 2 -t "$threads" >"$tmp/pa.txt" 2>"$tmp/pa.err" ||
    { cat "$tmp/pa.err"; fail "PA run"; }
  whole=$(sed -E 's/.*instances=([0-9]+).*/\1/' "$tmp/pa.txt")
  [[ $whole =~ ^[0-9]+$ && $whole -gt 300 ]] || fail "PA run: no instance count in: $(cat "$tmp/pa.txt")"
  "$eval_tool" PAIRED 7 -- "$tree_walk" -n 300 -w 2 -t "$threads" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
    { cat "$tmp/err.txt"; fail "PAIRED 7 (tree_walk, $threads threads)"; }
  [[ $(wc -l <"$tmp/out.txt") == 7 ]] || { cat "$tmp/out.txt"; fail "expected 7 rounds"; }
  expected=(warm-up MO PA MO CA MO PA)
  n=0
  while read -r line; do
    n=$((n + 1))
    [[ $line =~ ^round=([0-9]+)\ experiment=([A-Za-z-]+)\ raw_us=([0-9.]+)\ comp_us=([0-9.]+)\ instances=([0-9]+)(\ busiest=([0-9]+)\ per_thread=([0-9,]+)\ delta_i_ns=([0-9.]+))?$ ]] ||
      fail "bad line: $line"
    round=${BASH_REMATCH[1]} exp=${BASH_REMATCH[2]} raw=${BASH_REMATCH[3]} comp=${BASH_REMATCH[4]} inst=${BASH_REMATCH[5]}
    busiest=${BASH_REMATCH[7]} per_thread=${BASH_REMATCH[8]}
    [[ $round == "$n" ]] || fail "round $round where $n was due"
    [[ $exp == "${expected[$((n - 1))]}" ]] || fail "round $n: experiment $exp, expected ${expected[$((n - 1))]}"
    case $exp in
      warm-up | MO)
        [[ $inst == 1 ]] || fail "round $n ($exp): $inst instances measured, expected only the round"
        [[ -z $busiest ]] || fail "round $n ($exp): a busiest thread's count in: $line"
        # Only the round's own part of its enter and exit is removed: well
        # under a microsecond.
        awk -v r="$raw" -v c="$comp" 'BEGIN { exit !(c <= r && r - c < 1) }' || fail "round $n ($exp): raw $raw, compensated $comp"
        ;;
      PA | CA)
        want=$((whole - 1))  # all but main
        [[ $inst == "$want" ]] || fail "round $n ($exp): $inst instances, expected $want"
        # Every thread builds and walks a tree of its own: the busiest has
        # them all with one thread (all but the round), about half of them
        # with two; each thread's count is given, and they add up.
        [[ $(tr ',' '\n' <<<"$per_thread" | wc -l) == "$threads" &&
           $(tr ',' '\n' <<<"$per_thread" | awk '{ s += $1 } END { print s }') == $((want - 1)) &&
           $(tr ',' '\n' <<<"$per_thread" | sort -n | tail -1) == "$busiest" ]] ||
          fail "round $n ($exp): per-thread instances $per_thread, busiest $busiest, $want in all"
        if [[ $threads == 1 ]]; then
          [[ $busiest == $((want - 1)) ]] || fail "round $n ($exp): busiest thread $busiest instances of $want"
        else
          [[ -n $busiest && $((busiest * 3)) -lt $((want * 2)) && $((busiest * 3)) -gt $want ]] ||
            fail "round $n ($exp): busiest thread ${busiest:-no} instances of $want"
        fi
        awk -v r="$raw" -v c="$comp" 'BEGIN { exit !(c < r) }' || fail "round $n ($exp): nothing removed (raw $raw, compensated $comp)"
        ;;
    esac
  done <"$tmp/out.txt"
  grep -q 'calibration (k=' "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "no calibration printed"; }
done

# --fit: the fit rounds first, then the rounds above. Each PA or CA round
# after the fit is compensated with the median of the last FIT in-place
# costs of its experiment, here the last one: the Delta_i that round was
# compensated with + (its compensated time - the mean of the MO rounds
# around it) / the instances of its busiest thread. With one thread the
# round loses its instances times the value set, and its own part; with
# two the compensation at the barriers decides what it loses.
# Rounds of 2000 nodes (about 50 000 instances a thread, 3 ms of
# overhead): the fit divides the noise of a round by its instances, and
# with two threads beside other tests the rounds of 300 nodes came out
# below their MO rounds. A fit that still finds no overhead stops with the
# reason; it is tried again, three times at most.
paired_fit() {
  local try
  for try in 1 2 3; do
    "$eval_tool" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt" && return 0
    grep -q "the rounds before found no overhead" "$tmp/err.txt" || return 1
  done
  return 1
}
for threads in 1 2; do
  paired_fit PAIRED 11 --fit 1 -- "$tree_walk" -n 2000 -w 2 -t $threads ||
    { cat "$tmp/err.txt"; fail "PAIRED 11 --fit 1 ($threads threads)"; }
  expected=(warm-up fit-MO fit-PA fit-MO fit-CA MO PA MO CA MO PA)
  mapfile -t lines <"$tmp/out.txt"
  [[ ${#lines[@]} == 11 ]] || { cat "$tmp/out.txt"; fail "--fit: expected 11 rounds"; }
  declare -a raw comp inst busy used delta
  for n in $(seq 1 11); do
    [[ ${lines[$((n - 1))]} =~ ^round=$n\ experiment=([A-Za-z-]+)\ raw_us=([0-9.]+)\ comp_us=([0-9.]+)\ instances=([0-9]+)(\ busiest=([0-9]+)\ per_thread=[0-9,]+\ delta_i_ns=([0-9.]+))?(\ fitted_delta_ns=([0-9.]+))?$ ]] ||
      fail "--fit: bad line $n: ${lines[$((n - 1))]}"
    [[ ${BASH_REMATCH[1]} == "${expected[$((n - 1))]}" ]] || fail "--fit: round $n is ${BASH_REMATCH[1]}, expected ${expected[$((n - 1))]}"
    raw[n]=${BASH_REMATCH[2]} comp[n]=${BASH_REMATCH[3]} inst[n]=${BASH_REMATCH[4]} busy[n]=${BASH_REMATCH[6]}
    used[n]=${BASH_REMATCH[7]} delta[n]=${BASH_REMATCH[9]}
    case $n in
      7 | 9 | 11) [[ -n ${delta[n]} ]] || fail "--fit: round $n has no fitted Delta_i" ;;
      *) [[ -z ${delta[n]} ]] || fail "--fit: round $n (${BASH_REMATCH[1]}) has a fitted Delta_i" ;;
    esac
  done
  # Round 7 is compensated with round 3's cost, 9 with 5's, 11 with 7's;
  # the application used the value set.
  for pair in 7:3 9:5 11:7; do
    n=${pair%:*} from=${pair#*:}
    awk -v c="${comp[$from]}" -v u="${used[$from]}" -v a="${raw[$((from - 1))]}" -v b="${raw[$((from + 1))]}" \
      -v i="${busy[$from]}" -v d="${delta[$n]}" -v now="${used[$n]}" \
      'BEGIN { want = u + (c - (a + b) / 2) * 1000 / i
               exit !(want > 0 && (d - want) ^ 2 < (0.001 * want + 0.001) ^ 2 && (now - d) ^ 2 < (0.001 * d + 0.0002) ^ 2) }' ||
      fail "--fit ($threads threads): round $n compensated with ${delta[$n]} ns (used ${used[$n]}), not what round $from cost (${raw[$((from - 1))]}, ${comp[$from]} compensated with ${used[$from]} ns, ${raw[$((from + 1))]} us, ${busy[$from]} instances)"
    [[ $threads == 1 ]] || continue
    # A total below 0 is reported as 0 and hides the figure. The round's own
    # part (at most Delta_i, tens of ns) is within the tolerance.
    awk -v r="${raw[$n]}" -v c="${comp[$n]}" -v i="${inst[$n]}" -v d="${delta[$n]}" \
      'BEGIN { if (c == 0) exit 0; removed = r - c; want = (i - 1) * d / 1000
               exit !((removed - want) ^ 2 < (0.002 * want + 0.3) ^ 2) }' ||
      fail "--fit: round $n lost $(awk -v r="${raw[$n]}" -v c="${comp[$n]}" 'BEGIN { print r - c }') us, not ${inst[$n]} - 1 instances times ${delta[$n]} ns"
  done
done

# -T FILE: each thread's part of every round, a line a round; and
# thread_costs.py on it with the rounds' lines: each thread's cost, the
# thread main waited for, the model of the compensated round, the two fits
# replayed. With one thread the model is what the monitor does (the part
# less its instances times Delta_i, plus the round outside it): it gives
# the printed value within 0.05 ms in the median. With two the barriers'
# hand-over differs from it in some rounds, more on a loaded machine.
# Bad input is refused with the reason.
for threads in 1 2; do
  paired_fit PAIRED 21 --fit 1 -- "$tree_walk" -n 2000 -w 2 -t $threads -T "$tmp/times.txt" ||
    { cat "$tmp/err.txt"; fail "PAIRED 21 --fit 1 with -T ($threads threads)"; }
  [[ $(wc -l <"$tmp/times.txt") == 21 ]] && awk -v f=$((threads + 1)) 'NF != f || $1 != NR || $2 <= 0 || $NF <= 0 { exit 1 }' "$tmp/times.txt" ||
    { cat "$tmp/times.txt"; fail "-T: not 21 lines of a round and $threads part time(s)"; }
  python3 -B "$here/thread_costs.py" "$tmp/out.txt" "$tmp/times.txt" >"$tmp/costs.txt" 2>&1 ||
    { cat "$tmp/costs.txt"; fail "thread_costs.py ($threads threads)"; }
  for kind in PA CA; do
    grep -Eq "^$kind: [0-9]+ rounds after the fit, $threads thread\\(s\\)$" "$tmp/costs.txt" ||
      { cat "$tmp/costs.txt"; fail "thread_costs.py: no $kind ($threads threads)"; }
  done
  [[ $(grep -Ec '^  thread [01]: [0-9.]+ ns an instance \(median; quartiles -?[0-9.]+, -?[0-9.]+\), [0-9]+ instances a round$' "$tmp/costs.txt") == $((2 * threads)) &&
     $(grep -Ec '^  fit (raw|compensated) *: error -?[0-9.]+% \(median; 95% interval -?[0-9.]+ to -?[0-9.]+\), mean -?[0-9.]+%$' "$tmp/costs.txt") == 4 &&
     $(grep -Ec '^  thread 0 / thread 1: ' "$tmp/costs.txt") == $((2 * (threads - 1))) ]] ||
    { cat "$tmp/costs.txt"; fail "thread_costs.py: not each thread's cost and both fits, for PA and CA ($threads threads)"; }
  [[ $threads == 1 ]] || continue
  awk '/the formula above against the compensated rounds: / { n++; for (i = 1; i < NF; i++) if ($i == "rounds:") v = $(i + 1) + 0
                                                              if (v > 0.05 || v < -0.05) bad = 1 }
       END { exit !(n == 2 && !bad) }' "$tmp/costs.txt" ||
    { cat "$tmp/costs.txt"; fail "thread_costs.py: with one thread its model of the compensated round is not what was printed"; }
done
if python3 -B "$here/thread_costs.py" "$tmp/times.txt" "$tmp/times.txt" >/dev/null 2>"$tmp/bad.err"; then
  fail "thread_costs.py took part times for rounds"
fi
grep -q "^thread_costs: .*not a line of compensation_eval PAIRED" "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "thread_costs.py: no reason"; }
head -5 "$tmp/times.txt" >"$tmp/short.txt"
if python3 -B "$here/thread_costs.py" "$tmp/out.txt" "$tmp/short.txt" >/dev/null 2>"$tmp/bad.err"; then
  fail "thread_costs.py took part times of 5 rounds for 21"
fi
grep -q "^thread_costs: round [0-9]* or the MO rounds around it have no part times" "$tmp/bad.err" ||
  { cat "$tmp/bad.err"; fail "thread_costs.py: no reason for missing part times"; }

# SIGTERM to compensation_eval alone (a script's trap, `timeout`): the
# program gets it too and ends, instead of running its remaining rounds
# detached from a tool that is gone; the tool dies of it (143).
alive() { [[ -e /proc/$1 ]] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
(exec "$eval_tool" PAIRED 100000 -- "$tree_walk" -n 300 -w 2 >"$tmp/out.txt" 2>"$tmp/err.txt") &
ev=$!
# Until its program runs rounds (bounded generously: a loaded machine may
# take long to start it).
program=
for i in $(seq 1 1200); do
  program=$(pgrep -P "$ev" || true)
  [[ -n $program && $(wc -l <"$tmp/out.txt" 2>/dev/null || echo 0) -ge 3 ]] && break
  alive "$ev" || break
  sleep 0.05
done
[[ -n $program ]] || { kill -KILL "$ev"; cat "$tmp/err.txt"; fail "SIGTERM: no program under compensation_eval"; }
kill -TERM "$ev"
status=0
wait "$ev" || status=$?
[[ $status == 143 ]] || { cat "$tmp/err.txt"; fail "SIGTERM to compensation_eval: status $status, expected 143"; }
for i in $(seq 1 100); do
  alive "$program" || break
  sleep 0.1
done
if alive "$program"; then
  kill -KILL "$program"
  fail "SIGTERM to compensation_eval: the program ran on"
fi

# --simulated: MO and SIM rounds; each SIM round recorded references (the
# round's L1 data reads and writes) and had its simulation and recording
# removed; MO rounds recorded nothing. With --fit 1, each SIM round after
# the fit is compensated with the recording cost the last SIM round
# measured: what was removed per reference plus (its compensated time -
# the mean of the MO rounds around it) / its references (0 where that is
# negative).
if [[ -n $jacobi_cachesim ]]; then
  "$eval_tool" PAIRED 5 --simulated -- "$jacobi_cachesim" -n 64 -s 4 >"$tmp/out.txt" 2>"$tmp/err.txt" ||
    { cat "$tmp/err.txt"; fail "PAIRED 5 --simulated"; }
  expected=(warm-up MO SIM MO SIM)
  mapfile -t lines <"$tmp/out.txt"
  [[ ${#lines[@]} == 5 ]] || { cat "$tmp/out.txt"; fail "--simulated: expected 5 rounds"; }
  for n in 1 2 3 4 5; do
    line=${lines[$((n - 1))]}
    case ${expected[$((n - 1))]} in
      SIM)
        [[ $line =~ ^round=$n\ experiment=SIM\ raw_us=([0-9.]+)\ comp_us=([0-9.]+)\ instances=1\ references=([0-9]+)\ recording_ns=([0-9.]+)$ ]] ||
          fail "--simulated: bad line $n: $line"
        [[ ${BASH_REMATCH[3]} -gt 1000 ]] || fail "--simulated: round $n recorded ${BASH_REMATCH[3]} references"
        awk -v r="${BASH_REMATCH[1]}" -v c="${BASH_REMATCH[2]}" 'BEGIN { exit !(c < r) }' ||
          fail "--simulated: round $n: nothing removed ($line)"
        ;;
      *)
        [[ $line =~ ^round=$n\ experiment=${expected[$((n - 1))]}\ raw_us=[0-9.]+\ comp_us=[0-9.]+\ instances=1$ ]] ||
          fail "--simulated: bad line $n: $line"
        ;;
    esac
  done
  "$eval_tool" PAIRED 7 --simulated --fit 1 -- "$jacobi_cachesim" -n 64 -s 4 >"$tmp/out.txt" 2>"$tmp/err.txt" ||
    { cat "$tmp/err.txt"; fail "PAIRED 7 --simulated --fit 1"; }
  expected=(warm-up fit-MO fit-SIM MO SIM MO SIM)
  mapfile -t lines <"$tmp/out.txt"
  [[ ${#lines[@]} == 7 ]] || { cat "$tmp/out.txt"; fail "--simulated --fit: expected 7 rounds"; }
  declare -a sraw scomp srefs srec sdelta
  for n in $(seq 1 7); do
    [[ ${lines[$((n - 1))]} =~ ^round=$n\ experiment=([A-Za-z-]+)\ raw_us=([0-9.]+)\ comp_us=(-?[0-9.]+)\ instances=1(\ references=([0-9]+)\ recording_ns=([0-9.]+))?(\ fitted_delta_ns=([0-9.]+))?$ ]] ||
      fail "--simulated --fit: bad line $n: ${lines[$((n - 1))]}"
    [[ ${BASH_REMATCH[1]} == "${expected[$((n - 1))]}" ]] || fail "--simulated --fit: round $n is ${BASH_REMATCH[1]}"
    sraw[n]=${BASH_REMATCH[2]} scomp[n]=${BASH_REMATCH[3]} srefs[n]=${BASH_REMATCH[5]} srec[n]=${BASH_REMATCH[6]}
    sdelta[n]=${BASH_REMATCH[8]}
  done
  # Round 5 with round 3's measure, round 7 with round 5's; and the
  # application compensated with the value set.
  for pair in 5:3 7:5; do
    n=${pair%:*} from=${pair#*:}
    [[ -n ${sdelta[$n]} ]] || fail "--simulated --fit: round $n has no fitted recording cost"
    awk -v rec="${srec[$from]}" -v c="${scomp[$from]}" -v a="${sraw[$((from - 1))]}" -v b="${sraw[$((from + 1))]}" \
      -v refs="${srefs[$from]}" -v d="${sdelta[$n]}" -v used="${srec[$n]}" \
      'BEGIN { want = rec + (c - (a + b) / 2) * 1000 / refs; if (want < 0) want = 0
               exit !((d - want) ^ 2 < (0.01 * want + 0.002) ^ 2 && (used - d) ^ 2 < (0.001 * d + 0.0002) ^ 2) }' ||
      fail "--simulated --fit: round $n compensated with ${sdelta[$n]} ns a reference (removed ${srec[$n]}), not what round $from measured"
  done
fi

# The workloads refuse a bad round count themselves.
if "$jacobi" -n 8 -s 2 -r 0 2>"$tmp/bad.err"; then fail "jacobi -r 0 succeeded"; fi
grep -q "ROUNDS >= 1" "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "jacobi -r 0: no reason"; }

# More threads than the monitor's rows: 8 threads, room for 6 (the
# workloads keep their threads for every round, so the first round that
# measures every region finds 2 of them without a row). The run stops at
# that round with the reason and ends the program (before, the tool
# returned and left the program running its remaining rounds unmonitored).
status=0
MRI_MAX_THREADS=6 "$eval_tool" PAIRED 400 -- "$tree_walk" -n 300 -w 2 -t 8 >"$tmp/rows.txt" 2>"$tmp/rows.err" || status=$?
[[ $status == 1 ]] || { cat "$tmp/rows.err"; fail "PAIRED 400 with 6 thread rows: exit status $status, expected 1"; }
grep -q "^compensation_eval: round 3: 2 thread(s) of the program found no row in the monitor (MRI_MAX_THREADS)" \
  "$tmp/rows.err" || { cat "$tmp/rows.err"; fail "PAIRED 400 with 6 thread rows: no reason"; }
[[ $(tail -1 "$tmp/rows.txt") == "round=2 experiment=MO "* ]] ||
  fail "PAIRED 400 with 6 thread rows: rounds printed after the first without rows"
sleep 0.2
pgrep -f -- "$tree_walk -n 300 -w 2 -t 8 -r 400" >/dev/null && fail "PAIRED 400 with 6 thread rows: the program was left running"

# The threads are the same in every round: 2 threads for 300 rounds (600
# thread rows if each round started its thread anew) fit in 4 rows.
MRI_MAX_THREADS=4 "$eval_tool" PAIRED 300 -- "$tree_walk" -n 100 -w 1 -t 2 >"$tmp/kept.txt" 2>"$tmp/kept.err" ||
  { cat "$tmp/kept.err"; fail "PAIRED 300 with 2 threads and 4 thread rows failed"; }
[[ $(wc -l <"$tmp/kept.txt") == 300 ]] || fail "PAIRED 300 with 2 threads: $(wc -l <"$tmp/kept.txt") rounds printed"

# Bad round counts are refused before anything starts.
for bad in 1 x 3y 100001; do
  status=0
  "$eval_tool" PAIRED "$bad" -- "$jacobi" -n 8 -s 2 >/dev/null 2>"$tmp/bad.err" || status=$?
  [[ $status == 2 ]] || fail "PAIRED $bad: exit status $status, expected 2"
  grep -q "ROUNDS must be a number from 2 to 100000" "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "PAIRED $bad: no reason"; }
done
# Bad fit counts too, and a fit that leaves no round after it.
for bad in "0" "x" "65"; do
  status=0
  "$eval_tool" PAIRED 300 --fit "$bad" -- "$jacobi" -n 8 -s 2 >/dev/null 2>"$tmp/bad.err" || status=$?
  [[ $status == 2 ]] || fail "PAIRED 300 --fit $bad: exit status $status, expected 2"
  grep -q "FIT must be a number from 1 to 64" "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "--fit $bad: no reason"; }
done
status=0
"$eval_tool" PAIRED 12 --fit 2 -- "$jacobi" -n 8 -s 2 >/dev/null 2>"$tmp/bad.err" || status=$?
[[ $status == 2 ]] || fail "PAIRED 12 --fit 2: exit status $status, expected 2"
grep -q "leave none after the fit; at least 13" "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "PAIRED 12 --fit 2: no reason"; }
echo "PASS"

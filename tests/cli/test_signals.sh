#!/usr/bin/env bash
# `mri` interrupted while the program runs: Ctrl-C (SIGINT to the process
# group of mri and the program) and SIGINT or SIGTERM sent to mri alone
# end the program; mri reports it killed and writes what was measured, as
# for any program killed by a signal (tests/apps/mri_testapp "forever").
# The program leaves those signals at their default action, so the monitor
# catches them and ends monitoring first, as at an exit: the instances open
# then are measured (main's row counts its one call) and every trace
# record is written, each enter with its leave. SIGKILL to the program
# ends it at once: mri says what the results then hold. SIGKILL to mri
# leaves its temporary output file, which the next run of the same output
# removes.
#
#   test_signals.sh MRI TESTAPP WORKDIR
set -uo pipefail
mri=$1 app=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
set -m  # each background job in a process group of its own, SIGINT not ignored
fail() { echo "FAIL: $*" >&2; exit 1; }
program=
trap '[[ -n $program ]] && kill -KILL "$program" 2>/dev/null' EXIT

# interrupted SIGNAL TARGET ARGS...: starts mri ARGS... -- TESTAPP forever
# running, sends SIGNAL to mri's process group (TARGET group) or to mri
# alone (TARGET mri) once the program has run its first monitored step,
# and sets $status to mri's exit status.
# started WHAT ARGS...: starts mri ARGS... in the background, its pid in
# $pid, and waits until the program has run its first monitored step.
started() {
  local what=$1 tries=0; shift
  rm -f running
  "$mri" "$@" >out.txt 2>err.txt &
  pid=$!
  while [[ ! -e running ]] && ((tries++ < 600)); do sleep 0.1; done
  [[ -e running ]] || { cat err.txt; fail "$what: the program did not start running"; }
}

interrupted() {
  local sig=$1 target=$2; shift 2
  started "$*" "$@" -- "$app" forever running
  program=$(pgrep -P "$pid")
  case $target in
    group) kill "-$sig" -- "-$pid" ;;
    program) kill "-$sig" "$program" ;;
    *) kill "-$sig" "$pid" ;;
  esac
  wait "$pid"
  status=$?
  local state
  state=$(ps -o stat= -p "$program") && [[ $state != Z* ]] && fail "$*: the program still runs after mri ended"
  program=
}

# only FILES...: nothing in the directory but FILES and the logs (no
# temporary file of the atomic writers).
only() {
  local left
  left=$(ls -A | grep -vxE "out\.txt|err\.txt|running|$(IFS='|'; echo "$*")" || true)
  [[ -z $left ]] || fail "left behind: $left"
}

# --- Ctrl-C: the program dies of SIGINT, mri reports it and writes the trace.
interrupted INT group trace -o int.vtf
[[ $status == 130 ]] || { cat err.txt; fail "trace, SIGINT to the group: status $status, expected 130"; }
grep -q 'was killed by signal 2 (Interrupt); the monitor caught it and ended monitoring first, as at an exit: int.vtf holds every record' err.txt ||
  { cat err.txt; fail "trace, SIGINT to the group: no report of the program's end"; }
grep -q 'wrote int.vtf (VTF3): ' err.txt || { cat err.txt; fail "trace, SIGINT to the group: no trace written"; }
enters=$(grep -c ' DOWNTO ' int.vtf) leaves=$(grep -c ' UPFROM ' int.vtf)
((enters > 0)) || fail "trace, SIGINT to the group: no enter in int.vtf"
((enters == leaves)) || fail "trace, SIGINT to the group: $enters enters, $leaves leaves in int.vtf"
only 'int\.vtf'

# --- SIGTERM to mri alone (kill, a batch system): passed on to the program.
interrupted TERM mri trace -o term.vtf
[[ $status == 143 ]] || { cat err.txt; fail "trace, SIGTERM to mri: status $status, expected 143"; }
grep -q 'was killed by signal 15 (Terminated); the monitor caught it and ended monitoring first, as at an exit: term.vtf holds every record' err.txt ||
  { cat err.txt; fail "trace, SIGTERM to mri: no report of the program's end"; }
enters=$(grep -c ' DOWNTO ' term.vtf) leaves=$(grep -c ' UPFROM ' term.vtf)
((enters > 0 && enters == leaves)) || fail "trace, SIGTERM to mri: $enters enters, $leaves leaves in term.vtf"
rm -f int.vtf term.vtf
only

# --- SIGKILL to the program: nothing is caught; the trace holds what its
# thread had published.
interrupted KILL program trace -o kill.vtf
[[ $status == 137 ]] || { cat err.txt; fail "trace, SIGKILL to the program: status $status, expected 137"; }
grep -q 'was killed by signal 9 (Killed); kill.vtf holds the records written up to then' err.txt ||
  { cat err.txt; fail "trace, SIGKILL to the program: no report of the program's end"; }
grep -q ' DOWNTO ' kill.vtf || fail "trace, SIGKILL to the program: no enter in kill.vtf"
rm -f kill.vtf

# --- SIGINT to mri alone during a profile: the table of the steps so far.
interrupted INT mri profile
[[ $status == 130 ]] || { cat err.txt; fail "profile, SIGINT to mri: status $status, expected 130"; }
grep -q 'was killed by signal 2 (Interrupt); the monitor caught it and ended monitoring first, as at an exit: the region instances then open' err.txt ||
  { cat err.txt; fail "profile, SIGINT to mri: no report of the program's end"; }
grep -qE '^  step +LOOP ' out.txt || { cat out.txt err.txt; fail "profile, SIGINT to mri: no row of region step"; }
grep -qE '^  main +PROGRAM +[^ ]+ +1 ' out.txt || { cat out.txt err.txt; fail "profile, SIGINT to mri: main's instance not measured"; }

# --- SIGKILL to the program during a profile: main, still open, counts nothing.
interrupted KILL program profile
[[ $status == 137 ]] || { cat err.txt; fail "profile, SIGKILL to the program: status $status, expected 137"; }
grep -q 'was killed by signal 9 (Killed); results of the region instances that had ended by then' err.txt ||
  { cat err.txt; fail "profile, SIGKILL to the program: no report of the program's end"; }
grep -qE '^  step +LOOP ' out.txt || { cat out.txt err.txt; fail "profile, SIGKILL to the program: no row of region step"; }
grep -qE '^  main +PROGRAM +[^ ]+ +1 ' out.txt && { cat out.txt; fail "profile, SIGKILL to the program: main counted"; }
# --- SIGTERM to mri alone when PROGRAM is a wrapper that starts the
# monitored program without exec(): the program gets it too (it ran on
# unmonitored after the wrapper's end before).
printf '#!/bin/sh\n"%s" forever running\nexit $?\n' "$app" > wrapper.sh && chmod +x wrapper.sh
started wrapper profile -- ./wrapper.sh
program=$(pgrep -P "$(pgrep -P "$pid")")
[[ -n $program ]] || fail "wrapper: no program below the wrapper"
kill -TERM "$pid"
wait "$pid"
status=$?
[[ $status == 143 ]] || { cat err.txt; fail "profile of a wrapper, SIGTERM to mri: status $status, expected 143"; }
for _ in $(seq 50); do kill -0 "$program" 2>/dev/null || break; sleep 0.1; done
kill -0 "$program" 2>/dev/null && fail "profile of a wrapper, SIGTERM to mri: the program still runs"
program=
grep -qE '^  main +PROGRAM +[^ ]+ +1 ' out.txt || { cat out.txt err.txt; fail "profile of a wrapper, SIGTERM to mri: main's instance not measured"; }
rm -f wrapper.sh

# --- SIGQUIT and SIGUSR1 to mri alone: passed on; the program (which
# leaves them at their default action, not caught by the monitor) dies of
# them, and mri reports it, as it would without mri.
interrupted QUIT mri profile
[[ $status == 131 ]] || { cat err.txt; fail "profile, SIGQUIT to mri: status $status, expected 131"; }
grep -q 'was killed by signal 3 (Quit); results of the region instances that had ended by then' err.txt ||
  { cat err.txt; fail "profile, SIGQUIT to mri: no report of the program's end"; }
grep -qE '^  step +LOOP ' out.txt || { cat out.txt err.txt; fail "profile, SIGQUIT to mri: no row of region step"; }
interrupted USR1 mri profile
[[ $status == 138 ]] || { cat err.txt; fail "profile, SIGUSR1 to mri: status $status, expected 138"; }
grep -q 'was killed by signal 10 (User defined signal 1)' err.txt ||
  { cat err.txt; fail "profile, SIGUSR1 to mri: no report of the program's end"; }

# --- A program that ignores SIGINT and SIGTERM (inherited through exec):
# the first two signals to mri are passed on and change nothing, the
# second says the next one kills; the third kills the program with
# SIGKILL, and mri shows what had been measured.
printf '#!/bin/sh\ntrap "" INT TERM\nexec "%s" forever running\n' "$app" > deaf.sh && chmod +x deaf.sh
started deaf profile -- ./deaf.sh
program=$(pgrep -P "$pid")
for sig in TERM INT; do
  kill "-$sig" "$pid"
  sleep 0.3
  kill -0 "$pid" 2>/dev/null || { cat err.txt; fail "deaf: mri ended after SIG$sig"; }
  [[ $(ps -o stat= -p "$program") != Z* ]] || fail "deaf: the program ended of SIG$sig, which it ignores"
done
grep -q 'one more interrupt kills it (SIGKILL)' err.txt || { cat err.txt; fail "deaf: no warning at the second signal"; }
kill -TERM "$pid"
wait "$pid"
status=$?
[[ $status == 137 ]] || { cat err.txt; fail "deaf, third signal: status $status, expected 137"; }
grep -q 'mri: killing the program (SIGKILL)' err.txt || { cat err.txt; fail "deaf: the kill not said"; }
grep -q 'was killed by signal 9 (Killed)' err.txt || { cat err.txt; fail "deaf: no report of the program's end"; }
grep -qE '^  step +LOOP ' out.txt || { cat out.txt err.txt; fail "deaf: no row of region step"; }
program=
rm -f deaf.sh

# --- SIGKILL to mri alone while it writes a trace: its temporary file
# (.killed.vtf.tmp-PID-XXXXXX) stays, as nothing can remove it then; the
# next run that writes the same output removes it (its writer is gone).
started "trace, SIGKILL to mri" trace -o killed.vtf -- "$app" forever running
program=$(pgrep -P "$pid")
kill -KILL "$pid"
wait "$pid"
kill -KILL "$program"  # detached from its dead tool, it would run on
for _ in $(seq 50); do kill -0 "$program" 2>/dev/null || break; sleep 0.1; done
program=
stale=$(ls -A | grep -E '^\.killed\.vtf\.tmp-' || true)
[[ -n $stale ]] || fail "trace, SIGKILL to mri: no temporary file left behind to test with"
"$mri" trace -o killed.vtf -- "$app" steps 2 0 >out.txt 2>err.txt || { cat err.txt; fail "trace after a killed one failed"; }
[[ ! -e $stale ]] || fail "trace after a killed one: $stale is still there"
rm -f killed.vtf
only
echo "signals: all checks passed"

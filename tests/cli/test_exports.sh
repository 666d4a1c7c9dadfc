#!/usr/bin/env bash
# End-to-end test of the exports of the `mri` tool with their real readers:
#   mri trace (VTF3 and OTF2, read back by otf2-print) and
#   mri profile -o (callgrind format, read by callgrind_annotate),
# on mri_testapp "steps 10 2": main -> step (10x) -> inner (20x, 2 per step),
# and on mri_testapp "exec" (a program that replaces itself with exec()).
#
# and, with mri_relay, mri profile --unwind (callers without annotations).
#
#   test_exports.sh MRI TESTAPP WORKDIR RELAY HAVE_LIBUNWIND(0|1)
set -euo pipefail
mri=$1 app=$2 work=$3 relay=$4 have_unwind=$5
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- VTF3: 31 enters (DOWNTO) and 31 leaves (UPFROM) on thread 0.
"$mri" trace -o run.vtf -- "$app" steps 10 2 2>trace.err || { cat trace.err; fail "mri trace (vtf3)"; }
[[ -f run.vtf ]] || fail "no run.vtf"
[[ $(grep -c ' DOWNTO ' run.vtf) == 31 ]] || fail "VTF3: expected 31 DOWNTO records, got $(grep -c ' DOWNTO ' run.vtf)"
[[ $(grep -c ' UPFROM ' run.vtf) == 31 ]] || fail "VTF3: expected 31 UPFROM records"
grep -q 'DEFSTATE .* "inner"' run.vtf || fail "VTF3: no region definition for inner"
grep -q 'wrote run.vtf (VTF3): 62 events of 1 thread; 62 records emitted, 0 discarded' trace.err ||
  { cat trace.err; fail "mri trace summary"; }

# --- --region step with and without its subregions: 10 steps; with their
# 20 inners, or without.
"$mri" trace -o sub.vtf --region step -- "$app" steps 10 2 2>sub.err || { cat sub.err; fail "mri trace --region"; }
[[ $(grep -c ' DOWNTO ' sub.vtf) == 30 ]] || fail "--region step: expected 30 DOWNTO records, got $(grep -c ' DOWNTO ' sub.vtf)"
"$mri" trace -o only.vtf --region step --no-subregions -- "$app" steps 10 2 2>only.err ||
  { cat only.err; fail "mri trace --no-subregions"; }
[[ $(grep -c ' DOWNTO ' only.vtf) == 10 ]] || fail "--no-subregions: expected 10 DOWNTO records, got $(grep -c ' DOWNTO ' only.vtf)"
[[ $(grep -c ' UPFROM ' only.vtf) == 10 ]] || fail "--no-subregions: expected 10 UPFROM records"
if "$mri" trace -o x.vtf --no-subregions -- "$app" steps 1 0 2>nosub.err; then fail "--no-subregions without --region succeeded"; fi
grep -q "needs --region" nosub.err || { cat nosub.err; fail "no clear error for --no-subregions alone"; }

# --- OTF2, read back by the real otf2-print: counts and nesting.
if "$mri" trace -o run.otf2 -- "$app" steps 10 2 2>otf2.err; then
  command -v otf2-print >/dev/null || fail "otf2-print is not installed (scripts/install-deps.sh)"
  otf2-print run.otf2 >otf2.txt
  [[ $(grep -c '^ENTER ' otf2.txt) == 31 ]] || fail "OTF2: expected 31 ENTER events"
  [[ $(grep -c '^LEAVE ' otf2.txt) == 31 ]] || fail "OTF2: expected 31 LEAVE events"
  # Nesting: every LEAVE closes the innermost open region.
  awk '/^(ENTER|LEAVE) /{ r=$0; sub(/.*Region: "/,"",r); sub(/".*/,"",r);
       if ($1=="ENTER") s[++d]=r; else { if (d==0 || s[d]!=r) bad=1; d-- } }
       END { exit (bad || d) }' otf2.txt || fail "OTF2: enters and leaves do not nest"
  [[ $(grep -c 'Region: "inner"' otf2.txt) == 40 ]] || fail "OTF2: expected 20 inner instances"
  # A program that ends inside regions (exit_inside: exit() inside main >
  # step > inner; thread 1 ended by pthread_exit() inside parent > child;
  # thread 2 inside spin at the exit): per location, every LEAVE closes the
  # innermost open region, nothing stays open, and the times do not go
  # back; the 6 leaves the program never ran carry MRI_SYNTHETIC_LEAVE.
  "$mri" trace -o open.otf2 -- "$app" exit_inside 3 2>open.err || { cat open.err; fail "mri trace (exit_inside)"; }
  otf2-print open.otf2 >open.txt || fail "otf2-print cannot read open.otf2"
  awk '/^(ENTER|LEAVE) /{ l=$2; t=$3; r=$0; sub(/.*Region: "/,"",r); sub(/".*/,"",r);
         if (t < last[l]) bad="time goes back on location " l; last[l]=t;
         if ($1=="ENTER") s[l, ++d[l]]=r;
         else { if (d[l]==0 || s[l, d[l]]!=r) bad="leave of " r " does not close the innermost region on " l; d[l]-- }
         n[l]++ }
       END { for (l in d) if (d[l]) bad=bad " location " l " has " d[l] " regions open";
             if (length(n) != 3) bad=bad " expected 3 locations"; if (bad) print bad; exit (bad != "") }' open.txt ||
    fail "OTF2 of a program ending inside regions: enters and leaves do not balance"
  [[ $(grep -c '^ENTER ' open.txt) == 15 ]] || fail "exit_inside: expected 15 ENTER events, got $(grep -c '^ENTER ' open.txt)"
  [[ $(grep -c '"MRI_SYNTHETIC_LEAVE"' open.txt) == 6 ]] ||
    { grep -A1 '^LEAVE' open.txt | head -20; fail "exit_inside: expected 6 leaves marked MRI_SYNTHETIC_LEAVE"; }
  # A traced region that never runs ("sleeper" in the steps mode): an
  # archive without events that otf2-print reads, its thread defined, and
  # a warning. Before, it had no location, and otf2-print failed on it.
  "$mri" trace -o never.otf2 --region sleeper -- "$app" steps 2 0 2>never.err || { cat never.err; fail "mri trace (never)"; }
  grep -q '^mri: warning: never.otf2 holds no events: no instance of the traced regions ran$' never.err ||
    { cat never.err; fail "never.otf2: no warning"; }
  otf2-print -G never.otf2 >never.txt || fail "otf2-print cannot read never.otf2"
  grep -q '^LOCATION .*"thread 0' never.txt || { cat never.txt; fail "never.otf2: thread 0 not defined"; }
elif grep -q "built without OTF2" otf2.err; then
  echo "OTF2 part skipped: this build has no OTF2"
else
  cat otf2.err; fail "mri trace (otf2)"
fi

# --- callgrind: totals and callers as callgrind_annotate reads them.
"$mri" profile -o callgrind.out.test -- "$app" steps 10 2 >profile.txt 2>profile.err ||
  { cat profile.err; fail "mri profile -o"; }
command -v callgrind_annotate >/dev/null || fail "callgrind_annotate is not installed (scripts/install-deps.sh)"
callgrind_annotate --inclusive=yes --tree=caller --threshold=100 callgrind.out.test >annotate.txt
grep -q 'PROGRAM TOTALS' annotate.txt || fail "callgrind_annotate: no totals"
grep -Eq '< .*:step \(20x\)' annotate.txt || fail "callgrind_annotate: inner is not called 20 times by step"
grep -Eq '< .*:main \(10x\)' annotate.txt || fail "callgrind_annotate: step is not called 10 times by main"
# The program total is main's inclusive time: at least 10 steps of 2 ms.
total=$(grep 'PROGRAM TOTALS' annotate.txt | awk '{gsub(",","",$1); print $1}')
(( total >= 20000000 )) || fail "callgrind_annotate: total $total ns is below the 20 ms the steps sleep"
# The compensated time is a second event: positive, and below the raw time
# (the monitor's overhead was removed, not added).
grep -q '^events: Time_ns TimeComp_ns Instances' callgrind.out.test || fail "callgrind: no TimeComp_ns and Instances events"
comp=$(grep 'PROGRAM TOTALS' annotate.txt | awk '{gsub(",","",$3); print $3}')
(( comp > 0 && comp < total )) || fail "callgrind_annotate: compensated total $comp not in (0, $total)"
# Instances: 1 main + 10 steps + 20 inners in all; 30 inclusive in step.
instances=$(grep 'PROGRAM TOTALS' annotate.txt | awk '{gsub(",","",$5); print $5}')
[[ $instances == 31 ]] || fail "callgrind_annotate: $instances instances in all, expected 31"
# Percentages are dropped before counting fields: small ones are padded, "( 6.0%)".
step_instances=$(awk '/^[0-9,]+ .*\* .*:step$/ {gsub(/\([^)]*\)/, ""); gsub(",","",$3); print $3; exit}' annotate.txt)
[[ $step_instances == 30 ]] || { cat annotate.txt; fail "callgrind_annotate: step's inclusive instances $step_instances, expected 30"; }

# --- A region that is a thread's outermost one on a worker and a callee of
# main on the main thread ("nested 2 5": each thread runs 5 steps of 2
# inners): callgrind_annotate takes its inclusive cost from its incoming
# calls, so the worker's steps must come in as calls from outside any
# region. They were left out: step had 15 inclusive instances, not 30.
"$mri" profile -o callgrind.threads -- "$app" nested 2 5 >threads.txt 2>threads.err ||
  { cat threads.err; fail "mri profile -o of two threads"; }
callgrind_annotate --inclusive=yes --threshold=100 callgrind.threads >threads.ann
step_instances=$(awk '/^ *[0-9,]+ .*:step$/ {gsub(/\([^)]*\)/, ""); gsub(",","",$3); print $3; exit}' threads.ann)
[[ $step_instances == 30 ]] ||
  { cat threads.ann; fail "callgrind_annotate, two threads: step's inclusive instances $step_instances, expected 30"; }
grep -q '(outside any region)' threads.ann || { cat threads.ann; fail "callgrind, two threads: no calls from outside"; }

# --- A name that looks like OTF2 but is written in VTF3 is warned about;
# the tables and the messages keep their order in one log file.
"$mri" trace -o up.OTF2 -- "$app" steps 2 0 >upper.log 2>&1 || { cat upper.log; fail "mri trace -o up.OTF2"; }
grep -q 'warning: up.OTF2 is written in VTF3' upper.log || { cat upper.log; fail "trace -o up.OTF2: no warning"; }
"$mri" profile -o order.cg -- "$app" steps 2 0 >order.log 2>&1 || { cat order.log; fail "mri profile -o order.cg"; }
table=$(grep -n '^all threads' order.log | cut -d: -f1) wrote=$(grep -n '^mri: wrote order.cg' order.log | cut -d: -f1)
[[ -n $table && -n $wrote ]] && ((table < wrote)) || { cat order.log; fail "profile > log 2>&1: 'wrote' before the table"; }

# --- A line break in an argument (the command line is in the file):
# written as a space, not refused after the run.
"$mri" profile -o callgrind.break -- "$app" steps 2 0 $'two\nlines' >break.txt 2>break.err ||
  { cat break.err; fail "mri profile -o with a line break in an argument"; }
grep -qx "cmd: $app steps 2 0 two lines" callgrind.break || fail "callgrind: the command line is not on one line"
callgrind_annotate callgrind.break >/dev/null || fail "callgrind_annotate cannot read callgrind.break"

# --- --unwind: the functions without annotations between main and child
# are callers in the call tree (mri_relay 20: child 20 times through
# relay_outer -> relay_inner).
"$mri" profile -o callgrind.relay --unwind -- "$relay" 20 >relay.txt 2>&1 || { cat relay.txt; fail "mri profile --unwind"; }
callgrind_annotate --inclusive=yes --tree=caller --threshold=100 callgrind.relay >relay_annotate.txt 2>&1
if [[ $have_unwind == 1 ]]; then
  grep -Eq '< \?\?\?:relay_inner \(20x\)' relay_annotate.txt || { cat relay_annotate.txt; fail "--unwind: relay_inner is not child's caller"; }
  grep -Eq '^c?fn=\([0-9]+\) relay_outer$' callgrind.relay || fail "--unwind: no relay_outer in the call tree"
else
  grep -Eq '< .*:main \(40x\)' relay_annotate.txt || { cat relay_annotate.txt; fail "without libunwind: main should call child 40 times"; }
fi
if "$mri" profile --unwind -- "$relay" 1 >/dev/null 2>unw.err; then fail "--unwind without -o succeeded"; fi
grep -q "needs -o" unw.err || { cat unw.err; fail "no clear error for --unwind without -o"; }

# --- The profile table shows raw and compensated columns, or raw only.
"$mri" profile -- "$app" steps 3 1 >table.txt 2>&1 || { cat table.txt; fail "mri profile"; }
grep -q 'comp incl \[ms\]' table.txt || { cat table.txt; fail "mri profile: no compensated columns"; }
"$mri" profile --no-compensation -- "$app" steps 3 1 >raw.txt 2>&1 || { cat raw.txt; fail "mri profile --no-compensation"; }
grep -q 'incl \[ms\]' raw.txt && ! grep -q 'comp incl' raw.txt || { cat raw.txt; fail "--no-compensation still shows compensated columns"; }

# --- A program that replaces itself with exec() inside "step" after 3
# steps (the new image: the test program again, "exit 2 5", unmonitored):
# every record reaches the file (22: main's enter, 3 steps of 6, the
# enter of the step around the exec, and the exits libmonitor writes for
# the two instances open at the exec, marked MRI_SYNTHETIC_LEAVE; a thread
# publishes 16 at a time), enters and leaves nest, mri says so and ends
# with the process's status, 5.
status=0
"$mri" trace -o exec.otf2 -- "$app" exec 3 v "$app" exit 2 5 >exec.out 2>exec.err || status=$?
if grep -q "built without OTF2" exec.err; then
  echo "OTF2 exec part skipped: this build has no OTF2"
else
  [[ $status == 5 ]] || { cat exec.err; fail "trace of exec: status $status, expected 5 (the new program's)"; }
  grep -q "replaced itself with exec() (pid [0-9]*): monitoring ended there" exec.err ||
    { cat exec.err; fail "trace of exec: mri does not say that the program replaced itself"; }
  grep -q "the process then exited with status 5" exec.err || { cat exec.err; fail "trace of exec: no exit status"; }
  grep -q "22 records emitted, 0 discarded" exec.err || { cat exec.err; fail "trace of exec: records lost"; }
  otf2-print exec.otf2 >exec_otf2.txt
  [[ $(grep -c '"MRI_SYNTHETIC_LEAVE"' exec_otf2.txt) == 2 ]] ||
    fail "OTF2 of exec: expected the 2 leaves of the instances open at the exec marked MRI_SYNTHETIC_LEAVE"
  [[ $(grep -c '^ENTER ' exec_otf2.txt) == 11 ]] || fail "OTF2 of exec: expected 11 ENTER events"
  [[ $(grep -c '^LEAVE ' exec_otf2.txt) == 11 ]] || fail "OTF2 of exec: expected 11 LEAVE events"
  awk '/^(ENTER|LEAVE) /{ r=$0; sub(/.*Region: "/,"",r); sub(/".*/,"",r);
       if ($1=="ENTER") s[++d]=r; else { if (d==0 || s[d]!=r) bad=1; d-- } }
       END { exit (bad || d) }' exec_otf2.txt || fail "OTF2 of exec: enters and leaves do not nest"
  [[ $(grep -c 'Region: "step"' exec_otf2.txt) == 8 ]] || fail "OTF2 of exec: expected 4 step instances"
fi
# The profile: main once, step 4 times (the one around the exec too), inner
# 6 times; none of the new image's.
status=0
"$mri" profile -o callgrind.exec -- "$app" exec 3 vp "$app" exit 2 5 >exec_profile.txt 2>exec_profile.err || status=$?
[[ $status == 5 ]] || { cat exec_profile.err; fail "profile of exec: status $status, expected 5"; }
grep -q "replaced itself with exec() (pid [0-9]*): monitoring ended there" exec_profile.err ||
  { cat exec_profile.err; fail "profile of exec: mri does not say that the program replaced itself"; }
callgrind_annotate --inclusive=yes --tree=caller --threshold=100 callgrind.exec >exec_annotate.txt
grep -Eq '< .*:main \(4x\)' exec_annotate.txt || { cat exec_annotate.txt; fail "profile of exec: step is not called 4 times by main"; }
grep -Eq '< .*:step \(6x\)' exec_annotate.txt || { cat exec_annotate.txt; fail "profile of exec: inner is not called 6 times by step"; }
instances=$(grep 'PROGRAM TOTALS' exec_annotate.txt | awk '{gsub(",","",$5); print $5}')
[[ $instances == 11 ]] || fail "profile of exec: $instances instances in all, expected 11 (1 main, 4 steps, 6 inners)"
# A failed exec (no such program on PATH) changes nothing: the program goes
# on monitored (2 + 1 + 2 steps), mri says nothing about an exec.
status=0
"$mri" profile -- "$app" exec 2 vp mri-no-such-program >exec_fail.txt 2>exec_fail.err || status=$?
[[ $status == 4 ]] || { cat exec_fail.err; fail "profile of a failed exec: status $status, expected 4 (the program's)"; }
! grep -q "^mri: .*exec()" exec_fail.err || { cat exec_fail.err; fail "profile of a failed exec: mri speaks of an exec"; }
[[ $(awk '$1=="step" {print $4}' exec_fail.txt) == 5 ]] || { cat exec_fail.txt; fail "profile of a failed exec: step is not counted 5 times"; }

# --- Bad output: a clear error, exit 1, and nothing left behind.
if "$mri" trace -o "$work/missing/dir/run.vtf" -- "$app" steps 1 0 2>bad.err; then fail "trace into a missing directory succeeded"; fi
grep -q "cannot write" bad.err || { cat bad.err; fail "no clear error for an unwritable path"; }
[[ ! -e "$work/missing" ]] || fail "something was left behind"
if "$mri" profile -o "$work/missing/dir/out" -- "$app" steps 1 0 >/dev/null 2>bad2.err; then fail "profile into a missing directory succeeded"; fi
grep -q "cannot write" bad2.err || { cat bad2.err; fail "no clear error for an unwritable profile path"; }
echo "exports: all checks passed"

#!/usr/bin/env bash
# The tool of docs/user-guide.md ("Writing a tool"), as a reader copies it:
# taken out of the guide, built with the guide's command line (warnings
# are errors here) and run on examples/stencil as the guide shows, and on
# runs with fewer time steps than it watches, which end during one of its
# MRI_Start_Stop() calls (the tool must then end cleanly, not fail with
# "start: the application has terminated").
#
#   test_user_guide_tool.sh GUIDE CC INCLUDE_DIR LIBMRI_DIR STENCIL WORKDIR [CFLAGS]
#
# CFLAGS: added to the guide's (the sanitizer libmri was built with).
set -uo pipefail
guide=$1 cc=$2 include=$3 libdir=$4 stencil=$5 work=$6 cflags=${7:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }

awk '/^\/\* watch_steps\.c/ { on = 1 } on && /^```/ { exit } on { print }' "$guide" >watch_steps.c
[[ $(wc -l <watch_steps.c) -gt 50 ]] || fail "no watch_steps.c in $guide"
grep -q '^\$ cc -Wall -O2 -I\$MRI/include watch_steps.c -o watch_steps' "$guide" ||
  fail "the guide's build command changed: change this test with it"
# shellcheck disable=SC2086 # CFLAGS: several words
"$cc" -Wall -Werror -O2 $cflags -I"$include" watch_steps.c -o watch_steps -L"$libdir" -lmri -Wl,-rpath,"$libdir" ||
  fail "watch_steps.c does not build"

# run STEPS: watch_steps on stencil -n 128 -t STEPS with 2 threads, into out.txt.
run() {
  OMP_NUM_THREADS=2 ./watch_steps "$stencil" -n 128 -t "$1" >out.txt 2>err.txt
  local status=$?
  [[ $status == 0 ]] || { cat out.txt err.txt; fail "-t $1: status $status"; }
  [[ ! -s err.txt ]] || { cat err.txt; fail "-t $1: something on stderr"; }
}
# expect STEPS PER_THREAD: the step lines (one per step, at most 4, each
# of 2 instances) and, when PER_THREAD is not empty, one line per thread
# with PER_THREAD instances.
expect() {
  local steps=$1 per_thread=$2 k
  [[ $(grep -c '^step ' out.txt) == "$steps" ]] || { cat out.txt; fail "-t $3: not $steps step lines"; }
  for ((k = 1; k <= steps; k++)); do
    grep -qE "^step $k: slowest update_rows +[0-9.]+ us on thread [01] \(2 instances\)$" out.txt ||
      { cat out.txt; fail "-t $3: step $k"; }
  done
  if [[ -z $per_thread ]]; then
    grep -q '^thread ' out.txt && { cat out.txt; fail "-t $3: per-thread lines without the request"; }
  else
    for k in 0 1; do
      grep -qE "^thread $k: update_rows [0-9.]+ ms in $per_thread instances \(steps 3 to the end\)$" out.txt ||
        { cat out.txt; fail "-t $3: thread $k not $per_thread instances"; }
    done
  fi
  grep -q "^stencil: n=128 steps=$3 threads=2 " out.txt || { cat out.txt; fail "-t $3: the program's line"; }
}
run 10 && expect 4 8 10   # as in the guide: per-thread sums of steps 3 to 10
run 3 && expect 3 1 3     # ends during the fourth MRI_Start_Stop()
run 1 && expect 1 "" 1    # ends during the second, before the per-thread request
echo "PASS"

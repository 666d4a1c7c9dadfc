#!/usr/bin/env bash
# `mri trace` at its edges, and every output of `mri` under a file-size
# limit (ulimit -f), on tests/apps/mri_testapp, examples/gauss and, for
# `mri hist`, gauss_cachesim when the build has it; --region of C++ scopes
# on tests/apps/mri_testapp_cpp.
#
#   test_trace.sh MRI TESTAPP GAUSS GAUSS_CACHESIM|- SAME_NAME TESTAPP_CPP WORKDIR
set -uo pipefail
mri=$1 app=$2 gauss=$3 cachesim=$4 same_name=$5 app_cpp=$6 work=$7
[[ $cachesim == - ]] && cachesim=
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }

# limited BLOCKS STDOUT ARGS...: runs mri with its files limited to BLOCKS
# KiB (bash's ulimit -f unit), stdout to STDOUT (a file the limit applies
# to as well: keep it small), stderr through a pipe into err.txt; sets
# $status.
limited() {
  local blocks=$1 stdout=$2 errors; shift 2
  errors=$( (ulimit -f "$blocks"; exec "$mri" "$@" 2>&1 >"$stdout") )
  status=$?
  printf '%s\n' "$errors" >err.txt
}

# only_logs WHAT: nothing in the directory but the logs of the runs (no
# output, no temporary file of the atomic writers).
only_logs() {
  local left
  left=$(ls -A | grep -vxE 'err\.txt|out\.txt' || true)
  [[ -z $left ]] || fail "$1: left behind: $left"
}

# --- A file-size limit fails the write (EFBIG) instead of killing mri with
# SIGXFSZ (status 153, temporary files left): the message, status 1, and
# nothing left behind.
for out in w.vtf w.otf2; do
  limited 200 out.txt trace -o "$out" -- "$app" nested 2 50000
  if [[ $out == *.otf2 ]] && grep -q "built without OTF2" err.txt; then
    echo "OTF2 part skipped: this build has no OTF2"; rm -f err.txt out.txt; continue
  fi
  [[ $status == 1 ]] || { cat err.txt; fail "trace -o $out under ulimit -f 200: status $status, expected 1"; }
  grep -qF "mri: cannot write $out: " err.txt || { cat err.txt; fail "trace -o $out: no 'cannot write' message"; }
  grep -q "File too large" err.txt || { cat err.txt; fail "trace -o $out: the reason is not EFBIG"; }
  grep -qF "(no trace file left behind)" err.txt || { cat err.txt; fail "trace -o $out: no word on the file"; }
  only_logs "trace -o $out under a file-size limit"
  rm -f err.txt out.txt
done
# profile -o: the callgrind file of gauss is about 1 KiB; the table to
# /dev/null, which the limit does not concern. A limit of 0 stops any
# file write, also one a sanitizer's runtime makes at start-up (the
# ThreadSanitizer build's `mri --version` dies of SIGXFSZ under it): then
# this case is skipped.
limited 0 /dev/null --version
if [[ $status == 153 ]]; then
  echo "profile -o under ulimit -f 0 skipped: this build's runtime writes a file at start-up"
  rm -f err.txt
else
  limited 0 /dev/null profile -o cg.out -- "$gauss"
  [[ $status == 1 ]] || { cat err.txt; fail "profile -o under ulimit -f 0: status $status, expected 1"; }
  grep -q "^mri: cannot write cg.out: File too large" err.txt || { cat err.txt; fail "profile -o: no EFBIG message"; }
  only_logs "profile -o under a file-size limit"
fi
if [[ -n $cachesim ]]; then
  # hist writes in place; a partial file is removed.
  limited 1 /dev/null hist --metric L1_DATA_READ_MISS --bins 1024 -o h.csv -- "$cachesim"
  [[ $status == 1 ]] || { cat err.txt; fail "hist -o under ulimit -f 1: status $status, expected 1"; }
  grep -q "^mri: cannot write h.csv: File too large" err.txt || { cat err.txt; fail "hist -o: no EFBIG message"; }
  only_logs "hist -o under a file-size limit"
  limited 1 /dev/null hist --metric L1_DATA_READ_MISS --plot h.svg -- "$cachesim"
  [[ $status == 1 ]] || { cat err.txt; fail "hist --plot under ulimit -f 1: status $status, expected 1"; }
  grep -q "^mri: cannot write h.svg: File too large" err.txt || { cat err.txt; fail "hist --plot: no EFBIG message"; }
  only_logs "hist --plot under a file-size limit"
else
  echo "mri hist parts skipped: this build has no cache-simulator instrumentation (gauss_cachesim)"
fi
rm -f err.txt out.txt

# --- The summary counts the threads with records, not the highest thread
# id + 1: "imbalance 3 2" runs "work" in threads 1..3 only (thread 0, the
# main one, runs "main"), so --region work has 3 threads, all regions 4.
"$mri" trace -o work.vtf --region work -- "$app" imbalance 3 2 >out.txt 2>err.txt || { cat err.txt; fail "trace --region work"; }
grep -q 'wrote work.vtf (VTF3): 12 events of 3 threads;' err.txt || { cat err.txt; fail "--region work: not '12 events of 3 threads'"; }
[[ $(grep -c '^DEFCPUNAME ' work.vtf) == 3 ]] || fail "--region work: not 3 locations in the file"
"$mri" trace -o all.vtf -- "$app" imbalance 3 2 >out.txt 2>err.txt || { cat err.txt; fail "trace imbalance"; }
grep -q 'wrote all.vtf (VTF3): 14 events of 4 threads;' err.txt || { cat err.txt; fail "every region: not '14 events of 4 threads'"; }
"$mri" trace -o one.vtf -- "$app" steps 1 0 >out.txt 2>err.txt || { cat err.txt; fail "trace steps"; }
grep -q 'wrote one.vtf (VTF3): 8 events of 1 thread;' err.txt || { cat err.txt; fail "one thread: not '8 events of 1 thread'"; }

# --- A program killed by a signal: the trace's own wording (not the
# profile's "results of the region instances ..."), its status 128 + 6,
# and a file with what was published: enters of the regions still open
# without their leaves.
"$mri" trace -o crash.vtf -- "$app" crash 5 >out.txt 2>err.txt
status=$?
[[ $status == 134 ]] || { cat err.txt; fail "trace of a program that aborts: status $status, expected 134"; }
grep -q 'was killed by signal 6 (Aborted); crash.vtf holds the records written up to then' err.txt ||
  { cat err.txt; fail "killed program: not the trace's wording"; }
grep -q 'publishes its records 16 at a time' err.txt || { cat err.txt; fail "killed program: no word on the last records"; }
grep -q 'results of the region instances' err.txt && { cat err.txt; fail "killed program: the profile's wording"; }
grep -q 'wrote crash.vtf (VTF3): ' err.txt || { cat err.txt; fail "killed program: no trace written"; }
enters=$(grep -c ' DOWNTO ' crash.vtf) leaves=$(grep -c ' UPFROM ' crash.vtf)
(( enters > leaves && leaves > 0 )) || fail "killed program: $enters enters and $leaves leaves in crash.vtf"
# --- Two regions named "part", in one/part.c and two/part.c
# (tests/apps/mri_same_name): the location column tells them apart, and
# --region names one of them as NAME@FILE[:LINE], FILE a trailing part of
# the path; the name alone, or a FILE that fits both or neither, is an
# error that lists them.
"$mri" profile -- "$same_name" >out.txt 2>err.txt || { cat err.txt; fail "profile of mri_same_name"; }
grep -qE '^  part +ROUTINE +one/part\.c:[0-9]+ +3 ' out.txt || { cat out.txt; fail "same name: no row one/part.c with 3 calls"; }
grep -qE '^  part +ROUTINE +two/part\.c:[0-9]+ +5 ' out.txt || { cat out.txt; fail "same name: no row two/part.c with 5 calls"; }
"$mri" trace -o part.vtf --region part -- "$same_name" >out.txt 2>err.txt
status=$?
[[ $status == 1 ]] || { cat err.txt; fail "--region part: status $status, expected 1"; }
grep -qE '^mri: --region part: 2 regions have this name; name one of part@one/part\.c:[0-9]+, part@two/part\.c:[0-9]+$' err.txt ||
  { cat err.txt; fail "--region part: the regions are not listed"; }
"$mri" trace -o part.vtf --region part@two/part.c -- "$same_name" >out.txt 2>err.txt ||
  { cat err.txt; fail "--region part@two/part.c"; }
[[ $(grep -c ' DOWNTO ' part.vtf) == 5 ]] || fail "--region part@two/part.c: not the 5 instances of two/part.c"
line=$(grep -oE 'part@one/part\.c:[0-9]+' <("$mri" trace -o part.vtf --region part -- "$same_name" 2>&1))
"$mri" trace -o part.vtf --region "$line" -- "$same_name" >out.txt 2>err.txt || { cat err.txt; fail "--region $line"; }
[[ $(grep -c ' DOWNTO ' part.vtf) == 3 ]] || fail "--region $line: not the 3 instances of one/part.c"
for value in part@part.c part@three/part.c; do
  "$mri" trace -o part.vtf --region "$value" -- "$same_name" >out.txt 2>err.txt
  status=$?
  [[ $status == 1 ]] || { cat err.txt; fail "--region $value: status $status, expected 1"; }
  case $value in
    part@part.c) says='2 regions named "part" are at part\.c; name one of' ;;
    *) says='no region named "part" is at three/part\.c; the regions of this name:' ;;
  esac
  grep -qE "^mri: --region $value: $says part@one/part\.c:[0-9]+, part@two/part\.c:[0-9]+\$" err.txt ||
    { cat err.txt; fail "--region $value: not said, or the regions are not listed"; }
done

# --- --region of a C++ scope's region, which the program publishes only
# when the scope first runs (after mri looked the names up): every region
# is traced and the archiver keeps the named region's instances and the
# regions nested in them, nothing else. "nest 3" runs beside{inner},
# outer{inner inner inner}, beside{inner}, then inline_helper, all inside
# main (the one region published at the start).
# events FILE: "NAME ENTERS LEAVES" for every region with events in the
# VTF3 FILE, by name, on one line.
events() {
  awk '$1 == "DEFSTATE" { n = $4; gsub(/"/, "", n); name[$3] = n }  # DEFSTATE ACTIVITY ID "NAME" ...
       $2 == "DOWNTO" { e[name[$3]]++; seen[name[$3]] = 1 }
       $2 == "UPFROM" { l[name[$3]]++; seen[name[$3]] = 1 }
       END { for (k in seen) print k, e[k] + 0, l[k] + 0 }' "$1" | sort | tr '\n' ' '
}
# late EXPECTED ARGS...: trace with ARGS into late.vtf, which must hold
# exactly EXPECTED, and stderr must say once that every region is traced.
late() {
  local expected=$1; shift
  "$mri" trace -o late.vtf "$@" >out.txt 2>err.txt
  status=$?
  [[ $status == 0 ]] || { cat err.txt; fail "trace $*: status $status"; }
  [[ $(grep -c 'no region of this name is published yet' err.txt) == 1 ]] ||
    { cat err.txt; fail "trace $*: not one word that the region is not published yet"; }
  grep -q 'every region is traced' err.txt || { cat err.txt; fail "trace $*: no word that every region is traced"; }
  grep -q 'outside the --region instances left out' err.txt || { cat err.txt; fail "trace $*: no count of left out records"; }
  local got; got=$(events late.vtf)
  [[ $got == "$expected" ]] || fail "trace $*: events '$got', expected '$expected'"
}
late "inner 3 3 outer 1 1 " --region outer -- "$app_cpp" nest 3
late "outer 1 1 " --region outer --no-subregions -- "$app_cpp" nest 3
late "inner 5 5 " --region inner --no-subregions -- "$app_cpp" nest 3
late "recurse 4 4 " --region recurse -- "$app_cpp" recurse 4
# NAME@FILE for a late region: FILE a trailing part of its path.
late "inner 3 3 outer 1 1 " --region outer@mri_testapp_cpp.cpp -- "$app_cpp" nest 3
# A published region among them keeps its name's meaning.
late "main 1 1 outer 1 1 " --region main --region outer --no-subregions -- "$app_cpp" nest 3
# A name no region took during the run: status 1, the name, no file.
"$mri" trace -o none.vtf --region outre -- "$app_cpp" nest 3 >out.txt 2>err.txt
status=$?
[[ $status == 1 ]] || { cat err.txt; fail "--region outre: status $status, expected 1"; }
grep -q '^mri: --region outre: the program published no region of this name during the run' err.txt ||
  { cat err.txt; fail "--region outre: no word that no such region was published"; }
[[ ! -e none.vtf ]] || fail "--region outre: none.vtf left behind"
grep -q 'wrote none.vtf' err.txt && { cat err.txt; fail "--region outre: says it wrote none.vtf"; }
# --- --region of a C++ scope with records discarded (a ring full beyond
# MRI_TRACE_WAIT_MS): "gaps" stops mri (SIGSTOP) and fills its ring, so its
# trace loses the 200 enters of the first "gapped"'s "dive" chain and the
# 200 exits of the second's; then "beside" runs outside any "gapped". The
# filter must keep both "gapped" instances whole and nothing of "beside":
# a count of open instances went out of step at each gap (the lost enters
# ended the first "gapped" early and left out its exit, the lost exits kept
# the second open to the end, "beside" and its "inner" with it). Kept
# "dive" records: the second chain's 200 enters; its exits were lost and
# the first chain's exits, whose enters were lost, are left out. "inner"
# lost its records past the full ring (an enter may have lost its exit).
MRI_TRACE_WAIT_MS=200 "$mri" trace -o gaps.vtf --ring 1024 --region gapped -- "$app_cpp" gaps 2000 >out.txt 2>err.txt ||
  { cat err.txt; fail "trace --region gapped: status $?"; }
discarded=$(grep -oE 'records emitted, [0-9]+ discarded' err.txt | grep -oE '[0-9]+ discarded' | grep -oE '[0-9]+')
[[ -n $discarded && $discarded -gt 0 ]] || { cat err.txt; fail "trace --region gapped: no record discarded"; }
grep -q "^mri: warning: gaps.vtf lacks the $discarded discarded records: readers find enters without their leaves" err.txt ||
  { cat err.txt; fail "trace --region gapped: no warning on the discarded records"; }
got=$(events gaps.vtf)
[[ $got == *"gapped 2 2 "* ]] || fail "trace --region gapped: events '$got', expected 'gapped 2 2'"
[[ $got == *"dive 200 0 "* ]] || fail "trace --region gapped: events '$got', expected 'dive 200 0'"
[[ $got != *beside* && $got != *main* && $got != *inline_helper* ]] ||
  fail "trace --region gapped: events '$got' keep regions outside every 'gapped'"
read -r inner_enters inner_leaves < <(grep -oE 'inner [0-9]+ [0-9]+' <<<"$got" | cut -d' ' -f2-)
(( inner_enters > 0 && inner_enters <= 2 * 2000 && inner_enters - inner_leaves <= 2 && inner_enters >= inner_leaves )) ||
  fail "trace --region gapped: events '$got': 'inner' enters and leaves out of step"
grep -qE '; [0-9]+ exits out of step after discarded records: the --region filter resynchronised there' err.txt ||
  { cat err.txt; fail "trace --region gapped: no word that the filter resynchronised"; }
# --- A program that exits inside more region instances than the monitor
# keeps open per thread (256): the innermost get no leave, and mri says
# so (before, the trace just did not balance); within 256 it balances.
"$mri" trace -o deep.vtf -- "$app" deep_exit 300 >out.txt 2>err.txt || { cat err.txt; fail "trace deep_exit 300"; }
[[ $(grep -c ' DOWNTO ' deep.vtf) == 301 && $(grep -c ' UPFROM ' deep.vtf) == 256 ]] ||
  fail "trace deep_exit 300: not 301 enters and 256 leaves"
grep -qF "thread 0 ended inside 301 traced region instances: the 45 innermost, beyond the 256 the monitor keeps, have no exit record" err.txt ||
  { cat err.txt; fail "trace deep_exit 300: no word on the leaves missing"; }
"$mri" trace -o deep.vtf -- "$app" deep_exit 200 >out.txt 2>err.txt || { cat err.txt; fail "trace deep_exit 200"; }
[[ $(grep -c ' DOWNTO ' deep.vtf) == 201 && $(grep -c ' UPFROM ' deep.vtf) == 201 ]] ||
  fail "trace deep_exit 200: enters and leaves do not balance"
grep -q 'monitor reported' err.txt && { cat err.txt; fail "trace deep_exit 200: a message"; }
# --- -o - : the VTF3 trace on stdout, written directly, the program's own
# output on stderr; an OTF2 archive cannot go to a stream, said before the
# run; hist's CSV on stdout; -o and --plot on one descriptor are refused.
"$mri" trace -o - -- "$gauss" >dash.vtf 2>dash.err || { cat dash.err; fail "trace -o -"; }
[[ $(head -1 dash.vtf) == '0 COMMENT "MRI trace, VTF3 ASCII records, rendition 1"' ]] ||
  { head -3 dash.vtf; fail "trace -o -: stdout is not the VTF3 trace"; }
enters=$(grep -c ' DOWNTO ' dash.vtf) leaves=$(grep -c ' UPFROM ' dash.vtf)
[[ $enters -gt 0 && $enters == "$leaves" ]] || fail "trace -o -: $enters enters, $leaves leaves"
grep -q 'gauss: n=' dash.err || { cat dash.err; fail "trace -o -: the program's output is not on stderr"; }
grep -q '^mri: wrote - (VTF3)' dash.err || { cat dash.err; fail "trace -o -: no summary naming -"; }
"$mri" trace -o - --format otf2 -- "$gauss" >otf2.out 2>otf2.err
status=$?
if grep -q "built without OTF2" otf2.err; then
  echo "OTF2 to a stream skipped: this build has no OTF2"
else
  [[ $status == 1 ]] || { cat otf2.err; fail "trace -o - --format otf2: status $status, expected 1"; }
  grep -q '^mri: cannot write -: an OTF2 archive is two files and a directory' otf2.err ||
    { cat otf2.err; fail "trace -o - --format otf2: no clear error"; }
  [[ ! -s otf2.out ]] || fail "trace -o - --format otf2: wrote to stdout"
fi
if [[ -n $cachesim ]]; then
  "$mri" hist --metric L1_DATA_READ_MISS -o - -- "$cachesim" >dash.csv 2>hist.err || { cat hist.err; fail "hist -o -"; }
  [[ $(head -1 dash.csv) == 'bin,address_begin,address_end,bytes,value,data_structures' ]] ||
    { head -3 dash.csv; fail "hist -o -: stdout is not the CSV"; }
  "$mri" hist --metric L1_DATA_READ_MISS -o - --plot /dev/stdout -- "$cachesim" >/dev/null 2>both.err
  [[ $? == 2 ]] || { cat both.err; fail "hist -o - --plot /dev/stdout: not a usage error"; }
  grep -q 'name one descriptor' both.err || { cat both.err; fail "hist -o - --plot /dev/stdout: no clear error"; }
fi
[[ ! -e ./- ]] || fail "-o - wrote a file named '-'"
echo "trace: all checks passed"

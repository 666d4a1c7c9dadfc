#!/usr/bin/env bash
# `mri hist` (and `mri profile`) on examples/gauss and gauss_cachesim when
# the program cannot be monitored or the request cannot be met:
#   - the program ends before its first region (gauss -n 0 exits 2 on the
#     bad matrix order): mri says so with the program's exit status, and
#     ends with it; the same when the program was released with the
#     requests in place and exited before any region (mri_testapp
#     init_exit: Monitor_Init(), then exit());
#   - regions beyond MRI_MAX_REGIONS: said next to "nothing was measured";
#   - a program without any region (mri_noregions): mri profile says it has
#     none (status 1: nothing measured), mri regions lists none and says so;
#   - more bins than the registered data structures' bytes, an event of a
#     cache level the simulated hierarchy lacks, an empty --config, and a
#     configuration file ("@FILE") that is not a regular file of at most
#     64 KiB, are refused before the program runs (status 2; 1 from
#     MRI_CACHESIM_CONFIG).
#
#   test_hist.sh MRI GAUSS GAUSS_CACHESIM|- TESTAPP NOREGIONS WORKDIR
set -uo pipefail
mri=$1 gauss=$2 cachesim=$3 testapp=$4 noregions=$5 work=$6
[[ $cachesim == - ]] && cachesim=
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }

run() {  # run EXPECTED_STATUS ARGS...: mri with out.txt and err.txt
  local want=$1; shift
  "$mri" "$@" >out.txt 2>err.txt
  local got=$?
  [[ $got == "$want" ]] || { cat out.txt err.txt; fail "mri $*: status $got, expected $want"; }
}

# --- The program ends before monitoring took effect. gauss checks its
# options before its first region; its usage goes to stderr. Several runs:
# the end may come before or after mri releases the program.
ended_early() {  # ended_early PROGRAM MRI-ARGS...
  local program=$1; shift
  for k in 1 2 3; do
    run 2 "$@" -- "$program" -n 0
    grep -qF "mri: $program exited with status 2 before monitoring took effect" err.txt ||
      { cat err.txt; fail "mri $* -- $program -n 0: no clear message with the program's status"; }
  done
}
ended_early "$gauss" profile
for code in 3 0; do  # 0: nothing was measured all the same (status 1)
  run $((code ? code : 1)) profile -- "$testapp" init_exit $code
  grep -qF "mri: $testapp exited with status $code before any instance of a monitored region ended: nothing was measured" err.txt ||
    { cat out.txt err.txt; fail "mri profile -- $testapp init_exit $code: no clear message"; }
done
# Too small a region table: the PROGRAM region is kept (published first),
# the others beyond the table are not monitored, and mri says so (gcc puts
# a file's descriptors in reverse order: main, declared first, would be
# among those dropped, and nothing measured).
MRI_MAX_REGIONS=3 run 0 profile -- "$testapp" imbalance 2 3
grep -qE "^mri: warning: [0-9]+ regions were not monitored \(more than MRI_MAX_REGIONS" err.txt ||
  { cat out.txt err.txt; fail "MRI_MAX_REGIONS=3 mri profile -- $testapp imbalance: no word on the regions dropped"; }
grep -qE '^  main +PROGRAM +mri_testapp\.c:[0-9]+ +1 ' out.txt ||
  { cat out.txt err.txt; fail "MRI_MAX_REGIONS=3 mri profile -- $testapp imbalance: main not measured"; }
MRI_MAX_REGIONS=3 run 0 regions -- "$testapp" imbalance 2 3
grep -qE '^main +PROGRAM ' out.txt || { cat out.txt; fail "MRI_MAX_REGIONS=3 mri regions: main not listed"; }
grep -qE "^mri: warning: [0-9]+ regions were not monitored" err.txt ||
  { cat err.txt; fail "MRI_MAX_REGIONS=3 mri regions: no word on the regions dropped"; }
run 1 profile -- "$noregions"
grep -qF "mri: $noregions exited with status 0 and has no monitored region" err.txt ||
  { cat out.txt err.txt; fail "mri profile -- $noregions: no clear message"; }
run 0 regions -- "$noregions"
[[ $(grep -vc "no region here" out.txt) == 1 ]] || { cat out.txt; fail "mri regions -- $noregions: more than the header"; }
grep -qF "mri: $noregions published no region at its start" err.txt ||
  { cat err.txt; fail "mri regions -- $noregions: no note"; }

# --- A configuration file ("@FILE"): regular files only, at most 64 KiB,
# else one line that names the file and why, before anything runs (before:
# /dev/zero was read until mri aborted, and a FIFO hung it with no output).
# `timeout`: a hang fails here instead of at the suite's time limit.
mkfifo config.fifo
printf '%s\n' "# 0123456789abcdef" > comments.cfg
for k in $(seq 12); do cat comments.cfg comments.cfg > twice.cfg && mv twice.cfg comments.cfg; done  # 76 KiB
for bad in "/dev/zero:not a regular file (a character device)" "config.fifo:not a regular file (a FIFO)" \
           ".:not a regular file (a directory)" "comments.cfg:77824 bytes, more than the 65536 a configuration file may have"; do
  file=${bad%%:*} why=${bad#*:}
  timeout 60 "$mri" hist --metric L1_DATA_READ_MISS --config "@$file" -o never.csv -- "$gauss" >out.txt 2>err.txt
  got=$?
  [[ $got == 2 ]] || { cat err.txt; fail "mri hist --config @$file: status $got, expected 2 (124: it hung)"; }
  [[ $(wc -l <err.txt) == 1 ]] &&
    grep -qxF "mri: --config: cache configuration \"@$file\": config file '$file': $why" err.txt ||
    { cat err.txt; fail "mri hist --config @$file: not the one-line reason"; }
  MRI_CACHESIM_CONFIG="@$file" timeout 60 "$mri" hist --metric L1_DATA_READ_MISS -o never.csv -- "$gauss" >out.txt 2>err.txt
  got=$?
  [[ $got == 1 ]] || { cat err.txt; fail "MRI_CACHESIM_CONFIG=@$file mri hist: status $got, expected 1 (124: it hung)"; }
  [[ $(wc -l <err.txt) == 1 ]] &&
    grep -qxF "mri: cannot load the program: MRI_CACHESIM_CONFIG \"@$file\": config file '$file': $why" err.txt ||
    { cat err.txt; fail "MRI_CACHESIM_CONFIG=@$file mri hist: not the one-line reason"; }
  grep -q "gauss: n=" out.txt err.txt && fail "mri hist with @$file: the program ran"
  [[ ! -e never.csv ]] || fail "mri hist with @$file: wrote a CSV"
done
rm -f config.fifo comments.cfg

if [[ -z $cachesim ]]; then
  echo "mri hist parts skipped: this build has no cache-simulator instrumentation (gauss_cachesim)"
  echo "hist: all checks passed"
  exit 0
fi
ended_early "$cachesim" hist --metric L1_DATA_READ_MISS

# --- A level the simulated hierarchy lacks, from --config and from
# MRI_CACHESIM_CONFIG: refused before the program runs.
run 2 hist --metric L3_DATA_READ_MISS --config "L1:32K,8,64;L2:1M,16,64" -o l3.csv -- "$cachesim"
grep -q "L3_DATA_READ_MISS counts at L3, but the simulated hierarchy (--config: .*) has 2 levels" err.txt ||
  { cat err.txt; fail "L3 event with two levels: no clear error"; }
grep -q "gauss: n=" out.txt err.txt && fail "L3 event with two levels: the program ran"
[[ ! -e l3.csv ]] || fail "L3 event with two levels: wrote a CSV"
MRI_CACHESIM_CONFIG="L1:32K,8,64" run 2 hist --metric LC2_DATA_WRITE_HIT -- "$cachesim"
grep -q "counts at L2, but the simulated hierarchy (MRI_CACHESIM_CONFIG: .*) has 1 level" err.txt ||
  { cat err.txt; fail "L2 event with one level: no clear error"; }
# The levels that are there still work, --config before MRI_CACHESIM_CONFIG.
MRI_CACHESIM_CONFIG="L1:32K,8,64" run 0 hist --metric L2_DATA_READ_MISS --config "L1:32K,8,64;L2:1M,16,64" -- "$cachesim"
grep -q "simulated caches: L1:32K,8,64,[^;]*;L2:1M" out.txt || { cat out.txt; fail "two levels from --config"; }

# --- A histogram that counted nothing (init_matrix does not write x):
# zeros, and a note that says so; one that counted says nothing of it.
run 0 hist --metric L1_DATA_WRITE_MISS --data x --region init_matrix --bins 2 -- "$cachesim"
grep -q '^  total 0$' out.txt || { cat out.txt; fail "x in init_matrix: not 0"; }
grep -qF 'mri: note: the histogram counted nothing: no LC1_DATA_WRITE_MISS of x during init_matrix' err.txt ||
  { cat err.txt; fail "x in init_matrix: no note that nothing was counted"; }
run 0 hist --metric L1_DATA_WRITE_MISS --data A --region init_matrix --bins 2 -- "$cachesim"
grep -q 'counted nothing' err.txt && { cat err.txt; fail "A in init_matrix: a note that nothing was counted"; }

# --- More bins than the bytes of every registered data structure (gauss
# -n 10: A, b and x hold 960 bytes): refused before the program runs (it
# was refused by the monitor at the release, reported after the whole run).
run 1 hist --metric L1_DATA_READ_MISS --bins 1000 -- "$cachesim" -n 10
grep -qF -- "--bins 1000: the 3 data structures $cachesim registered hold 960 bytes" err.txt ||
  { cat err.txt; fail "--bins 1000 over 960 bytes: no clear error"; }
grep -q "gauss: n=" out.txt err.txt && fail "--bins 1000 over 960 bytes: the program ran"

# --- An explicitly empty --config.
run 2 hist --metric L1_DATA_READ_MISS --config "" -- "$cachesim"
grep -q -- "--config needs a cache hierarchy" err.txt || { cat err.txt; fail "--config '': no clear error"; }
grep -q "gauss: n=" out.txt err.txt && fail "--config '': the program ran"
echo "hist: all checks passed"

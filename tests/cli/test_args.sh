#!/usr/bin/env bash
# The command line of the `mri` tool: option values and --help, on
# examples/gauss (gauss_cachesim is for later checks of `mri hist`, when the
# build has the cache-simulator instrumentation).
#
#   test_args.sh MRI GAUSS GAUSS_CACHESIM|- WORKDIR
set -uo pipefail
mri=$1 gauss=$2 cachesim=$3 work=$4
[[ $cachesim == - ]] && cachesim=
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }

# run EXPECTED_STATUS ARGS...: runs mri with out.txt and err.txt; fails
# unless it ends with EXPECTED_STATUS.
run() {
  local want=$1; shift
  "$mri" "$@" >out.txt 2>err.txt
  local got=$?
  [[ $got == "$want" ]] || { cat out.txt err.txt; fail "mri $*: status $got, expected $want"; }
}

# --- An option whose value is missing (the next argument is "--", or
# there is none) is a usage error naming the option; nothing is run and no
# file named "--" is written.
missing_value() {  # missing_value OPTION ARGS...
  local option=$1; shift
  run 2 "$@"
  grep -qF -- "mri: $option needs" err.txt || { cat err.txt; fail "mri $*: no error naming $option"; }
  grep -q 'gauss: n=' out.txt && fail "mri $*: the program ran"
  [[ ! -e -- ]] || fail "mri $*: wrote a file named --"
}
missing_value -o profile -o -- "$gauss"
missing_value --sort profile --sort -- "$gauss"
missing_value --metric profile --metric -- "$gauss"
missing_value --metric profile --metric
missing_value -o trace -o -- "$gauss"
missing_value --region trace -o t.vtf --region -- "$gauss"
missing_value --ring trace -o t.vtf --ring -- "$gauss"
missing_value --metric hist --metric -- "$gauss"
missing_value --data hist --metric L1_DATA_READ_MISS --data -- "$gauss"
missing_value --bins hist --metric L1_DATA_READ_MISS --bins -- "$gauss"
missing_value --config hist --metric L1_DATA_READ_MISS --config -- "$gauss"
missing_value -o hist --metric L1_DATA_READ_MISS -o -- "$gauss"
missing_value --plot hist --metric L1_DATA_READ_MISS --plot -- "$gauss"
missing_value --plot hist --metric L1_DATA_READ_MISS --plot

# --- --help (and -h) after a command: the usage on stdout, status 0.
for command in profile trace hist regions info; do
  for help in --help -h; do
    run 0 "$command" "$help"
    grep -q '^usage: mri profile' out.txt || { cat out.txt; fail "mri $command $help: no usage"; }
  done
done
run 0 profile --metric perf::PAGE-FAULTS --help
grep -q '^usage: mri profile' out.txt || fail "mri profile ... --help: no usage"

echo "args: all checks passed"

#!/usr/bin/env bash
# The command line of the `mri` tool: option values, --help, the parser's
# conventions (--opt=value, unknown options, missing values, PROGRAM's
# arguments untouched), and output paths that cannot be written, on
# examples/gauss (and gauss_cachesim for `mri hist`, when the build has the
# cache-simulator instrumentation).
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
missing_value --fit profile --fit -- "$gauss"
missing_value --overhead profile --overhead -- "$gauss"

# --- profile --fit RUNS: digits only, 1 to 16; --overhead NS: a decimal
# number above 0 and at most 1 ms; neither with the other nor with
# --no-compensation. Usage errors naming the value, before any run.
for runs in 0 17 '' -1 +2 ' 2' 2x 1.5 100; do
  run 2 profile --fit "$runs" -- "$gauss"
  grep -qF -- "mri: --fit '$runs': " err.txt || { cat err.txt; fail "--fit '$runs': no error naming the value"; }
  grep -q 'gauss: n=' out.txt err.txt && fail "--fit '$runs': the program ran"
done
for ns in 0 0.0 -5 +5 ' 5' 5ns 0x10 inf nan . 1.2.3 1000001; do
  run 2 profile --overhead "$ns" -- "$gauss"
  grep -qF -- "mri: --overhead '$ns': " err.txt || { cat err.txt; fail "--overhead '$ns': no error naming the value"; }
  grep -q 'gauss: n=' out.txt err.txt && fail "--overhead '$ns': the program ran"
done
run 2 profile --fit 2 --overhead 20 -- "$gauss"
grep -q -- '--fit and --overhead both set the overhead' err.txt || { cat err.txt; fail "--fit with --overhead accepted"; }
for opt in "--fit 2" "--overhead 20"; do
  # shellcheck disable=SC2086
  run 2 profile $opt --no-compensation -- "$gauss"
  grep -q -- '--no-compensation removes none' err.txt || { cat err.txt; fail "$opt with --no-compensation accepted"; }
done

# --- --ring: digits only, a power of two from 1024 to 16777216; anything
# else is a usage error naming the value as given, before the program runs
# (strtoul took "", a sign and blanks, and 4294968320 was cut to 1024).
for ring in 0 '' 4294967296 4294968320 -1 +1024 ' 1024' 1024x 1000 3072 512 33554432 99999999999999999999999; do
  run 2 trace -o t.vtf --ring "$ring" -- "$gauss"
  grep -qF -- "mri: --ring '$ring': " err.txt || { cat err.txt; fail "--ring '$ring': no error naming the value"; }
  grep -q 'power of two from 1024 to 16777216' err.txt || { cat err.txt; fail "--ring '$ring': the range is not given"; }
  grep -q 'gauss: n=' out.txt && fail "--ring '$ring': the program ran"
  [[ ! -e t.vtf ]] || fail "--ring '$ring': wrote t.vtf"
done
run 0 trace -o t.vtf --ring 1024 -- "$gauss"
grep -q 'wrote t.vtf' err.txt || { cat err.txt; fail "--ring 1024: no trace"; }
rm -f t.vtf

# --- hist --bins: digits only, 1 to 1024 (strtol took a sign and blanks).
for bins in 0 1025 '' +5 ' 5' 5x -1 99999999999999999999999; do
  run 2 hist --metric L1_DATA_READ_MISS --bins "$bins" -- "$gauss"
  grep -qF -- "mri: --bins: '$bins' is not a bin count in 1..1024" err.txt || { cat err.txt; fail "--bins '$bins': no error naming the value"; }
  grep -q 'gauss: n=' out.txt err.txt && fail "--bins '$bins': the program ran"
done

# --- --help (and -h) after a command: that command's usage and options on
# stdout, nothing on stderr, status 0. Each lists its own options and not
# another command's.
declare -A own_option=([profile]='--fit RUNS' [trace]='--ring RECORDS' [hist]='--plot FILE' [regions]='-h, --help'
                       [info]='-h, --help')
declare -A other_option=([profile]='--ring' [trace]='--fit' [hist]='--unwind' [regions]='--metric' [info]='--region')
for command in profile trace hist regions info; do
  for help in --help -h; do
    run 0 "$command" "$help"
    [[ $(head -1 out.txt) == "usage: mri $command"* ]] || { cat out.txt; fail "mri $command $help: no usage of $command"; }
    grep -q '^options:$' out.txt || { cat out.txt; fail "mri $command $help: no options"; }
    grep -qF -- "  ${own_option[$command]}  " out.txt || { cat out.txt; fail "mri $command $help: ${own_option[$command]} not listed"; }
    grep -qF -- "${other_option[$command]}" out.txt && { cat out.txt; fail "mri $command $help: lists ${other_option[$command]}"; }
    [[ ! -s err.txt ]] || { cat err.txt; fail "mri $command $help: something on stderr"; }
  done
done
# mri --help, -h and help: every command's usage, status 0.
for help in --help -h help; do
  run 0 "$help"
  for command in profile trace hist regions info; do
    grep -qE "^(usage:|      ) mri $command( |\$)" out.txt || { cat out.txt; fail "mri $help: no usage of $command"; }
  done
done
run 0 --version
grep -qE '^mri [0-9]+\.[0-9]+ \(protocol version [0-9]+\)$' out.txt || { cat out.txt; fail "mri --version"; }

# --- Usage errors of the parser: one line naming what is wrong, then the
# hint to the command's --help; status 2, nothing run.
usage_error() {  # usage_error MESSAGE HINT-COMMAND ARGS...
  local message=$1 hint=$2; shift 2
  run 2 "$@"
  [[ $(cat err.txt) == "mri: $message"$'\n'"Try '$hint --help' for more information." ]] ||
    { cat err.txt; fail "mri $*: not the error '$message' and the hint to $hint --help"; }
  grep -q 'gauss: n=' out.txt && fail "mri $*: the program ran"
  return 0
}
for command in profile trace hist regions info; do
  usage_error "unknown option '--bogus'" "mri $command" "$command" --bogus -- "$gauss"
  usage_error "unknown option '--bogus=3'" "mri $command" "$command" --bogus=3 -- "$gauss"
done
usage_error "unknown option '-x'" "mri profile" profile --sort name -x -- "$gauss"
usage_error "unknown option '--bogus'" "mri" --bogus
usage_error "unknown command 'bogus'" "mri" bogus
usage_error "missing command" "mri"
# A missing value, at the end or before "--": named as given.
usage_error "--output needs a file name" "mri trace" trace --output -- "$gauss"
usage_error "--metric needs an event name" "mri profile" profile --metric
usage_error "--sort needs a value" "mri profile" profile --sort=
[[ ! -e -- ]] || fail "a file named -- was written"

# --- --opt=value, and -oFILE: the same as --opt value. Values the option
# refuses are refused as given.
run 2 trace --output=t.vtf --ring=1000 -- "$gauss"
grep -qF -- "mri: --ring '1000': " err.txt || { cat err.txt; fail "--ring=1000: not refused as given"; }
run 2 profile --sort=size -- "$gauss"
grep -qF -- "mri: unknown sort key 'size'" err.txt || { cat err.txt; fail "--sort=size: not refused as given"; }
run 0 profile --sort=calls --output=eq.cg -- "$gauss"
grep -q '^fn=' eq.cg || fail "profile --output=eq.cg: no callgrind file"
[[ $(awk '/^  region /{on=1; next} on && NF {print $1; exit}' out.txt) == row_update ]] ||
  { cat out.txt; fail "profile --sort=calls: row_update (the most calls) is not first"; }
run 0 trace -oeq.vtf --region=back_substitution --no-subregions -- "$gauss"
[[ $(grep -c ' DOWNTO ' eq.vtf) == 1 ]] || fail "trace -oeq.vtf --region=back_substitution: not its one instance"
rm -f eq.cg eq.vtf

# --- PROGRAM and everything after it are the program's, untouched: words
# like mri's options, "--", a bracketed list (which CLI11 would split), an
# empty argument. A wrapper writes its arguments down and runs gauss.
printf '#!/bin/sh\nprintf "[%%s]\\n" "$@" >args.txt\nexec "%s" -n 10\n' "$gauss" >wrap.sh && chmod +x wrap.sh
expect_args() {  # expect_args EXPECTED-LINES ARGS...
  local expected=$1; shift
  run 0 "$@"
  [[ $(cat args.txt) == "$expected" ]] || { cat args.txt; fail "mri $*: the program got other arguments"; }
}
expect_args $'[-o]\n[x]\n[--]\n[--sort]\n[[1,2]]\n[]' profile -- ./wrap.sh -o x -- --sort '[1,2]' ''
expect_args $'[--help]\n[-h]' regions -- ./wrap.sh --help -h
expect_args $'[--ring]\n[5]' profile --sort name ./wrap.sh --ring 5
expect_args $'[--]\n[a]' trace -o w.vtf -- ./wrap.sh -- a
rm -f wrap.sh args.txt w.vtf
# --- mri started with standard output closed: the table cannot be
# written, and mri says so with the right reason; the -o file is still
# written; a command that prints nothing there is not disturbed. Before,
# mri's own descriptors took number 1 ("Invalid argument", or a stale
# "No such file or directory").
"$mri" profile -o closed.cg -- "$gauss" >&- 2>err.txt
status=$?
[[ $status == 1 ]] || { cat err.txt; fail "profile with stdout closed: status $status, expected 1"; }
grep -qx 'mri: cannot write standard output: Bad file descriptor' err.txt || { cat err.txt; fail "profile with stdout closed: not EBADF"; }
grep -q '^fn=' closed.cg || fail "profile with stdout closed: closed.cg not written"
"$mri" trace -o closed.vtf -- "$gauss" >&- 2>err.txt || { cat err.txt; fail "trace with stdout closed"; }
grep -q 'wrote closed.vtf' err.txt || { cat err.txt; fail "trace with stdout closed: no trace"; }
rm -f closed.cg closed.vtf

# --- info takes no argument (before: ignored); regions lists the regions
# of a program that refused its arguments, and says how it ended.
run 2 info extra
grep -qF "mri: info takes no argument: 'extra'" err.txt || { cat err.txt; fail "info extra: no usage error"; }
run 0 regions -- "$gauss" -n -5
grep -qE '^eliminate +ROUTINE +gauss\.c:[0-9]+$' out.txt || { cat out.txt; fail "regions of gauss -n -5: not listed"; }
grep -qF "mri: note: $gauss exited with status 2 before its first region" err.txt ||
  { cat err.txt; fail "regions of gauss -n -5: no note of its end"; }
run 0 regions -- "$gauss"
grep -q 'mri: note' err.txt && { cat err.txt; fail "regions of gauss: a note"; }
run 0 profile --metric perf::PAGE-FAULTS --help
grep -q '^usage: mri profile' out.txt || fail "mri profile ... --help: no usage"

# --- Output paths that cannot be written: one "cannot write PATH: reason",
# status 1, found before the program runs.
touch plain
cannot_write() {  # cannot_write PATH ARGS...
  local path=$1; shift
  run 1 "$@"
  grep -q 'gauss: n=' out.txt && fail "mri $*: the program ran before the output path was checked"
  [[ $(grep -c "cannot write" err.txt) == 1 ]] || { cat err.txt; fail "mri $*: not one 'cannot write' message"; }
  grep -qF "mri: cannot write $path: " err.txt || { cat err.txt; fail "mri $*: the message does not name $path"; }
}
cannot_write "$work" profile -o "$work" -- "$gauss"
grep -q "is a directory" err.txt || { cat err.txt; fail "profile -o DIR: the reason is not that it is a directory"; }
cannot_write "$work/missing/out" profile -o "$work/missing/out" -- "$gauss"
cannot_write plain/out profile -o plain/out -- "$gauss"
[[ ! -e "$work/missing" ]] || fail "something was left behind"
# A file name longer than NAME_MAX (255 bytes); one of 251 bytes, which
# leaves no room for the temporary name's 12 more, is written.
long=$(printf 'a%.0s' $(seq 256))
cannot_write "$long" profile -o "$long" -- "$gauss"
grep -q "File name too long" err.txt || { cat err.txt; fail "profile -o of 256 bytes: not 'File name too long'"; }
long=$(printf 'b%.0s' $(seq 248)).cg
run 0 profile -o "$long" -- "$gauss"
[[ -s $long ]] || fail "profile -o of 251 bytes: nothing written"
[[ $(ls -A | grep -c tmp) == 0 ]] || fail "profile -o of 251 bytes: a temporary file was left"
rm -f "$long"
if [[ -n $cachesim ]]; then
  cannot_write "$work/missing/a.csv" hist --metric L1_DATA_READ_MISS -o "$work/missing/a.csv" -- "$cachesim"
  cannot_write "$work" hist --metric L1_DATA_READ_MISS --plot "$work" -- "$cachesim"
  cannot_write plain/a.svg hist --metric L1_DATA_READ_MISS --plot plain/a.svg -- "$cachesim"
  # What can be written still is: /dev/null, and a new file.
  run 0 hist --metric L1_DATA_READ_MISS -o /dev/null --plot a.svg -- "$cachesim"
  grep -q '<svg' a.svg || fail "hist --plot a.svg: no chart"
else
  echo "mri hist parts skipped: this build has no cache-simulator instrumentation (gauss_cachesim)"
fi
# The trace writer already opens its file before the run: one prefix too.
run 1 trace -o "$work" -- "$gauss"
[[ $(grep -c "cannot write" err.txt) == 1 ]] || { cat err.txt; fail "trace -o DIR: not one 'cannot write' message"; }

# --- Output names that are usage errors (status 2, nothing run, nothing
# written): an empty name (taken as no -o before: nothing was written), the
# program itself (its executable was overwritten), and one file for both
# the CSV and the chart (the chart replaced the CSV).
refused() {  # refused MESSAGE ARGS...
  local message=$1; shift
  run 2 "$@"
  grep -qF -- "$message" err.txt || { cat err.txt; fail "mri $*: no error '$message'"; }
  grep -q 'gauss: n=' out.txt && fail "mri $*: the program ran"
  return 0
}
refused "mri: -o '': an empty file name names no file" profile -o '' -- "$gauss"
refused "mri: -o '': an empty file name names no file" trace -o '' -- "$gauss"
# An empty --region (before: every instance left out, an empty trace with
# status 0, and an OTF2 archive otf2-print could not read).
refused "mri: --region '' names no region" trace -o t.vtf --region '' -- "$gauss"
refused "mri: --region '' names no region" trace -o t.vtf --region eliminate --region '' -- "$gauss"
[[ ! -e t.vtf ]] || fail "trace --region '': t.vtf written"
refused "mri: --region '' names no region" hist --metric L1_DATA_READ_MISS --region '' -- "$gauss"
cp "$gauss" ./prog
refused "mri: -o prog is the program ./prog itself" profile -o prog -- ./prog
refused "mri: -o $work/prog is the program ./prog itself" trace -o "$work/prog" -- ./prog
cmp -s prog "$gauss" || fail "profile/trace -o PROGRAM: the program file changed"
PATH="$work:$PATH" refused "mri: -o prog is the program prog itself" profile -o prog -- prog
if [[ -n $cachesim ]]; then
  refused "mri: --plot '': an empty file name names no file" hist --metric L1_DATA_READ_MISS --plot '' -- "$cachesim"
  refused "mri: -o a.csv and --plot ./a.csv name one file" hist --metric L1_DATA_READ_MISS -o a.csv --plot ./a.csv -- "$cachesim"
  [[ ! -e a.csv ]] || fail "hist -o a.csv --plot ./a.csv: a.csv written"
  ln -s a.csv link.csv  # dangling until a.csv is written
  refused "mri: -o a.csv and --plot link.csv name one file" hist --metric L1_DATA_READ_MISS -o a.csv --plot link.csv -- "$cachesim"
  [[ ! -e a.csv ]] || fail "hist -o a.csv --plot link.csv: a.csv written"
  rm -f link.csv
fi
rm -f prog

# --- A program that never attaches, started through a wrapper: when the
# load gives up, nothing it started runs on (the shell's sleep was left,
# adopted by init).
MRI_LOAD_TIMEOUT_MS=1000 run 1 profile -- sh -c 'sleep 37.25; true'
grep -q 'did not attach within 1000 ms' err.txt || { cat err.txt; fail "a program that never attaches: no clear message"; }
sleep 0.2
pgrep -f 'sleep 37.25' >/dev/null && { pkill -f 'sleep 37.25'; fail "a program that never attaches: its child runs on"; }

# --- A single-valued option given twice is a usage error (the last one
# won, silently: hist --metric A --metric B made one histogram of B).
refused "mri: --sort given twice: give it once" profile --sort calls --sort name -- "$gauss"
refused "mri: -o given twice: give it once" profile -o a.cg --output b.cg -- "$gauss"
refused "mri: --ring given twice: give it once" trace -o t.vtf --ring 1024 --ring 2048 -- "$gauss"
refused "mri: --metric given twice: give it once" hist --metric L1_DATA_READ_MISS --metric L2_DATA_READ_MISS -- "$gauss"
refused "mri: --data given twice: give it once" hist --metric L1_DATA_READ_MISS --data A --data b -- "$gauss"
[[ ! -e a.cg && ! -e b.cg && ! -e t.vtf ]] || fail "a repeated option: a file was written"
echo "args: all checks passed"

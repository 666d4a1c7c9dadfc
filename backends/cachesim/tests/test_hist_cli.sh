#!/usr/bin/env bash
# `mri hist` on mri_cacheapp (two sweeps of A, one thread): the CSV must have
# 16 bins of 4096 bytes over A, each with 2 x 64 L1 read misses (every line
# of A misses once per sweep with a 32 KiB L1); the SVG must name A; bad
# metric, data structure and bin counts must fail with a clear message; a
# program that exits before any region, and a --region that never runs, are
# said so.
# Usage: test_hist_cli.sh MRI CACHEAPP WORKDIR
set -euo pipefail
mri=$1 app=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
export MRI_CACHESIM_CONFIG="L1:32K,8,64;L2:256K,8,64;cores=2"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$mri" hist --metric L1_DATA_READ_MISS --data A --bins 16 --region sweep -o "$dir/a.csv" --plot "$dir/a.svg" \
  -- "$app" sweep 2 1 > "$dir/a.out"
[ "$(head -1 "$dir/a.csv")" = "bin,address_begin,address_end,bytes,value,data_structures" ] || fail "CSV header"
[ "$(wc -l < "$dir/a.csv")" -eq 17 ] || fail "expected 16 bins: $(cat "$dir/a.csv")"
awk -F, 'NR > 1 && ($1 != NR - 2 || $4 != 4096 || $5 != 128 || $6 != "A") { print "bad row: " $0; bad = 1 }
         END { exit bad }' "$dir/a.csv" || fail "CSV content"
# Consecutive bins tile A: each begins where the previous ended.
awk -F, 'NR > 2 && $2 != prev { bad = 1 } NR > 1 { prev = $3 } END { exit bad }' "$dir/a.csv" || fail "bins do not tile A"
grep -q "total 2048" "$dir/a.out" || fail "printed total: $(cat "$dir/a.out")"
grep -q '<svg' "$dir/a.svg" && grep -q '>A</text>' "$dir/a.svg" && grep -q 'LC1_DATA_READ_MISS' "$dir/a.svg" ||
  fail "SVG lacks the chart, the data structure's name or the metric"
[ "$(grep -c '<rect x=' "$dir/a.svg")" -eq 16 ] || fail "SVG should have 16 bars"

# Every registered data structure, write misses of the fill: B's 512 lines.
"$mri" hist --metric LC1_DATA_WRITE_MISS --bins 8 --region fill -o "$dir/all.csv" -- "$app" sweep 1 1 > "$dir/all.out"
awk -F, 'NR > 1 { sum += $5 } END { exit sum != 512 }' "$dir/all.csv" || fail "write misses of B: $(cat "$dir/all.csv")"
grep -q ';' "$dir/all.csv" || fail "no bin lists two data structures: $(cat "$dir/all.csv")"
# 8 bins over A (65536) + B (32768) + C (64 bytes) packed: 12296 bytes each, the last 12292.
awk -F, 'NR > 1 { sum += $4; if (NR < 9 && $4 != 12296) bad = 1 } END { exit bad || sum != 98368 }' "$dir/all.csv" ||
  fail "bin sizes: $(cat "$dir/all.csv")"

# The automatic split's log (MRI_CACHESIM_SPLIT_LOG=1, windows of 4
# batches): one line per window on the program's stderr, numbered from 1,
# and the counts as without it (every line of A misses at each of 100
# sweeps); nothing with 0.
for log in 1 0; do
  MRI_CACHESIM_ASYNC=1 MRI_CACHESIM_SPLIT_AFTER=4 MRI_CACHESIM_SPLIT_LOG=$log \
    "$mri" hist --metric L1_DATA_READ_MISS --data A --region sweep -o /dev/null -- "$app" sweep 100 1 \
    > "$dir/log$log.out" 2> "$dir/log$log.err" || { cat "$dir/log$log.err"; fail "mri hist with MRI_CACHESIM_SPLIT_LOG=$log"; }
  grep -q "total 102400" "$dir/log$log.out" || fail "SPLIT_LOG=$log: L1 read misses of A: $(cat "$dir/log$log.out")"
done
# (The program's stderr holds the tool's messages too: A registered twice.)
grep '^mri-cachesim:' "$dir/log1.err" > "$dir/windows.txt" || true
grep -Ev '^mri-cachesim: tid [0-9]+ window [0-9]+ \((joined|trial|control|split)\): [0-9.]+ ns a reference \(program [0-9.]+' \
  "$dir/windows.txt" | grep -q . && fail "SPLIT_LOG=1: malformed window lines: $(head "$dir/windows.txt")"
awk '{ if ($5 + 0 != NR) bad = 1 } END { exit bad || NR < 10 }' "$dir/windows.txt" ||
  fail "SPLIT_LOG=1: windows not numbered 1..N (N >= 10): $(head "$dir/windows.txt")"
grep -q 'mri-cachesim' "$dir/log0.err" && fail "SPLIT_LOG=0 logged: $(head "$dir/log0.err")"

# Threads whose only references are handed over as they end (no region:
# the backend flushes them from a pthread key destructor) leave the
# simulation thread to the program's later batches. With 8 of them first,
# the main thread's 40 sweeps still take the automatic split's windows
# (one log line each), where a CPU is to spare. (Each such thread stayed
# counted as a thread handing batches over; from the second one on, every
# later batch of the program was simulated in place, without a window.)
if [ "$(nproc)" -ge 2 ]; then
  MRI_CACHESIM_SPLIT_AFTER=4 MRI_CACHESIM_SPLIT_LOG=1 \
    "$mri" hist --metric L1_DATA_READ_MISS --data A -o /dev/null -- "$app" brief 8 40 \
    > "$dir/brief.out" 2> "$dir/brief.err" || { cat "$dir/brief.err"; fail "mri hist on brief threads"; }
  grep -q "total $((40 * 1024))$" "$dir/brief.out" || fail "brief threads: L1 read misses of A: $(cat "$dir/brief.out")"
  windows=$(grep -c '^mri-cachesim: tid [0-9]* window ' "$dir/brief.err" || true)
  [ "$windows" -ge 10 ] || fail "brief threads: $windows windows of the automatic split (80 batches of main's, 4 a window): $(head "$dir/brief.err")"
else
  echo "brief threads: skipped, one CPU (the simulation thread takes batches only with a CPU to spare)"
fi

expect_error() {  # expect_error FRAGMENT ARGS...
  local fragment=$1; shift
  if "$mri" hist "$@" > "$dir/err.out" 2>&1; then fail "mri hist $* succeeded"; fi
  grep -qF -- "$fragment" "$dir/err.out" || fail "mri hist $*: '$fragment' not in: $(cat "$dir/err.out")"
}
expect_error "unknown metric 'EXECUTION_TIME'" --metric EXECUTION_TIME -- "$app" sweep 1 1
expect_error "has not registered a data structure \"nope\" (registered: A, B, C)" --metric L1_DATA_READ_MISS --data nope -- "$app" sweep 1 1
expect_error "--bins: '0' is not a bin count in 1..1024" --metric L1_DATA_READ_MISS --bins 0 -- "$app" sweep 1 1
# A simulated cache event as a profile metric, into the callgrind file: the
# sweeps' L1 read misses (at least A's 2 x 1024 lines) are an event of
# their own, and callgrind_annotate reads them back.
"$mri" profile --metric LC1_DATA_READ_MISS -o "$dir/callgrind.out" -- "$app" sweep 2 1 > "$dir/p.out" 2>&1 ||
  { cat "$dir/p.out"; fail "mri profile --metric LC1_DATA_READ_MISS"; }
grep -q '^events: Time_ns TimeComp_ns Instances LC1_DATA_READ_MISS' "$dir/callgrind.out" || fail "callgrind: no cache event"
callgrind_annotate "$dir/callgrind.out" > "$dir/annotate.txt" 2>/dev/null || fail "callgrind_annotate"
# Percentages are dropped first: callgrind_annotate pads small ones, "( 6.02%)".
misses=$(awk '/:sweep$/ { gsub(/\([^)]*\)/, ""); gsub(",", "", $4); print $4 }' "$dir/annotate.txt")
[ -n "$misses" ] && [ "$misses" -ge 2048 ] || { cat "$dir/annotate.txt"; fail "sweep's L1 read misses: '$misses' < 2048"; }

expect_error "--bins: '2000' is not a bin count" --metric L1_DATA_READ_MISS --bins 2000 -- "$app" sweep 1 1
expect_error "at most one bin per byte" --metric L1_DATA_READ_MISS --data C --bins 100 -- "$app" sweep 1 1
expect_error "L2: 48 sets is not a power of two" --metric L1_DATA_READ_MISS --config "L1:32K,8,64;L2:48K,16,64" -- "$app" sweep 1 1
status=0
"$mri" hist --metric L1_DATA_READ_MISS --config "L1:32K,8,64;L2:48K,16,64" -- "$app" sweep 1 1 > /dev/null 2>&1 || status=$?
[ "$status" = 2 ] || fail "a malformed --config: status $status, expected 2 (a bad command line)"
expect_error "hist needs --metric" -- "$app" sweep 1 1

# The request applied at the release, but the program exits before any
# region (Monitor_Init(), then exit(3)): said so, with its status; and a
# --region that never ran is warned about, its empty histogram printed.
status=0
"$mri" hist --metric L1_DATA_READ_MISS --data A -- "$app" init_exit 3 > "$dir/init.out" 2>&1 || status=$?
[ "$status" = 3 ] && grep -qF "exited with status 3 before any instance of a monitored region ended: nothing was measured" \
  "$dir/init.out" || { cat "$dir/init.out"; fail "init_exit 3: status $status, or no clear message"; }
"$mri" hist --metric L1_DATA_READ_MISS --data A --region fresh -- "$app" sweep 1 1 > "$dir/fresh.out" 2>&1 ||
  { cat "$dir/fresh.out"; fail "--region fresh (never run)"; }
grep -qF "mri: warning: no instance of the --region regions ended: the histogram counted nothing" "$dir/fresh.out" &&
  grep -q "total 0" "$dir/fresh.out" || { cat "$dir/fresh.out"; fail "--region fresh: no warning, or a count"; }

# A name with a comma and quotes is one quoted CSV field (RFC 4180).
"$mri" hist --metric L1_DATA_READ_MISS --bins 2 -o "$dir/names.csv" -- "$app" names > "$dir/names.out" 2>&1 ||
  { cat "$dir/names.out"; fail "hist of a data structure named A,\"1\""; }
grep -qF ',"A,""1"""' "$dir/names.csv" || fail "the name is not one quoted field: $(cat "$dir/names.csv")"
python3 -c 'import csv, sys; rows = list(csv.reader(open(sys.argv[1]))); sys.exit(any(len(r) != 6 for r in rows) or rows[1][5] != "A,\"1\"")' \
  "$dir/names.csv" || fail "a CSV reader does not read 6 fields with the name: $(cat "$dir/names.csv")"
# The chart of a data structure whose name is as long as a name may be
# (255 bytes) and 5 times longer once escaped for XML: a well-formed SVG
# that holds the whole name.
long=$(printf '&%.0s' $(seq 255))
"$mri" hist --metric L1_DATA_READ_MISS --data "$long" --bins 4 --plot "$dir/long.svg" -o /dev/null -- "$app" names "$long" \
  > "$dir/long.out" 2>&1 || { cat "$dir/long.out"; fail "hist of a data structure with a 255-byte name"; }
python3 -c 'import sys, xml.etree.ElementTree as E; t = E.parse(sys.argv[1]); sys.exit(not any(sys.argv[2] in (x.text or "") for x in t.iter()))' \
  "$dir/long.svg" "$long" || fail "the SVG of a long name is not well-formed or lacks the name: $(head -c 600 "$dir/long.svg")"
# No data structure registered before the first region: refused before the
# run (the monitor would reject the request at the release, after it).
expect_error "has registered no data structure before its first region" --metric L1_DATA_READ_MISS -- "$app" late
grep -q "sweep" "$dir/err.out" && fail "late: the program's regions ran"
# An empty --data is a usage error, not "every data structure".
expect_error "--data '' names no data structure" --metric L1_DATA_READ_MISS --data '' -- "$app" sweep 1 1
# --data of a program that ended before its first region: the end is said,
# with the program's status, not that the name is not registered.
status=0
"$mri" hist --metric L1_DATA_READ_MISS --data A -- "$app" sweep 0 1 > "$dir/early.out" 2>&1 || status=$?
grep -qF "before monitoring took effect" "$dir/early.out" || { cat "$dir/early.out"; fail "--data A, early end: not said"; }
echo "mri hist: CSV, SVG and errors as expected"

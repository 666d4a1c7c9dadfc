#!/usr/bin/env bash
# Slowdown of the cache-simulator backend on a 256 x 256 double matrix
# multiply, against the native run and against Valgrind's cachegrind and
# callgrind --cache-sim=yes on the same (uninstrumented) program. Every
# number is the program's own time for the multiply ("ms=" and "cpu_ms="
# of bench/matmul.c), so start-up and the tool's work before and after
# are not counted for anybody.
#
#   bench/run_cachesim_slowdown.sh BUILD_DIR [RUNS]
#
# RUNS rounds (default 5) per loop order; a round runs every variant once,
# starting one variant further along each round. Each variant's slowdown
# is the median over the rounds of its time divided by the native time of
# the same round: a host whose speed drifts over minutes (a shared virtual
# machine) moves both alike. The table gives it twice: by wall time (the
# program's "ms") and by CPU time (the process's CPU time over the same
# span, every thread's: the simulation thread works on the second core
# while the program runs on the first, so wall time alone hides half of
# the work), each with the median time and the range of the rounds'
# slowdowns; every run goes to BUILD_DIR/bench/cachesim-slowdown.csv
# (order,round,variant,ms,cpu_ms).
#
# The baseline, "native", is matmul_clang: the instrumented programs'
# compiler (clang) and flags (-O2 -g), without instrumentation; cachegrind
# and callgrind run it too. matmul, built by the project's compiler (gcc
# by default), is timed for reference: clang vectorises the ikj loop, gcc
# does not (1.8-3x slower), so a slowdown against gcc's native would be
# understated by that much.
#
# Variants: native; the project compiler's native; dormant
# (matmul_cachesim, no tool: the instrumentation only tests its flag);
# simulated (matmul_cachesim under `mri hist`, L1 read misses of C in
# "multiply": every reference simulated, C monitored); the same with the
# histogram over every registered data structure (A, B and C monitored);
# cachegrind; callgrind. "simulated" uses the simulation thread where the
# machine has a CPU to spare for it, and splits the simulation between it
# and the program's thread while that pays
# (backends/cachesim/monitor/cache_worker.cpp, the default). The rows under it are the C-monitored run again never
# split (MRI_CACHESIM_SPLIT=0), never condensed (MRI_CACHESIM_CONDENSE=0:
# by default the program's thread condenses its batches while the
# simulation thread is behind), split from the start (=4 and =8: the
# program simulates 1/4 and 1/8 of the cache lines), and with each batch
# simulated by the program's thread (MRI_CACHESIM_ASYNC=0), for
# comparison. matmul_cachesim is instrumented by the inlining plugin where
# it is built (backends/cachesim/plugin); then the dormant and the
# C-monitored runs are repeated with matmul_cachesim_sancov, the same
# program through SanitizerCoverage's callbacks.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/variants.sh"
usage="usage: run_cachesim_slowdown.sh BUILD_DIR [RUNS]"
build=${1:?$usage}
runs=${2:-5}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a positive whole number (got '$runs'); $usage" >&2; exit 2; }
native=$build/bench/matmul_clang
native_cc=$build/bench/matmul
inst=$build/bench/matmul_cachesim
sancov=$build/bench/matmul_cachesim_sancov  # built where the plugin is: the other instrumentation
mri=$build/tools/mri/mri
for f in "$native" "$native_cc" "$inst" "$mri"; do [ -x "$f" ] || { echo "missing $f (build first; instrumentation needs clang)" >&2; exit 1; }; done
command -v valgrind >/dev/null || { echo "valgrind not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
csv=$build/bench/cachesim-slowdown.csv

hist=("$mri" hist --metric L1_DATA_READ_MISS --data C --region multiply -o /dev/null --)
names=() cmds=()
variant() { names+=("$1"); shift; cmds+=("$*"); }
variant "native (clang -O2, as instrumented)" "$native"
variant "  native, the project's compiler" "$native_cc"
variant "instrumented, dormant (no tool)" "$inst"
[ -x "$sancov" ] && variant "  the same through SanitizerCoverage's calls" "$sancov"
variant "instrumented, simulated, C monitored" "${hist[@]}" "$inst"
variant "  the same, never split (SPLIT=0)" env MRI_CACHESIM_SPLIT=0 "${hist[@]}" "$inst"
variant "  the same, never condensed (CONDENSE=0)" env MRI_CACHESIM_CONDENSE=0 "${hist[@]}" "$inst"
variant "  the same, 1/4 in the program (SPLIT=4)" env MRI_CACHESIM_SPLIT=4 "${hist[@]}" "$inst"
variant "  the same, 1/8 in the program (SPLIT=8)" env MRI_CACHESIM_SPLIT=8 "${hist[@]}" "$inst"
variant "  the same simulated in place (ASYNC=0)" env MRI_CACHESIM_ASYNC=0 "${hist[@]}" "$inst"
[ -x "$sancov" ] && variant "  the same through SanitizerCoverage's calls" "${hist[@]}" "$sancov"
variant "instrumented, simulated, all data structures" "$mri" hist --metric L1_DATA_READ_MISS --region multiply -o /dev/null -- "$inst"
variant "valgrind --tool=cachegrind" valgrind --tool=cachegrind --cachegrind-out-file=/dev/null "$native"
variant "valgrind --tool=callgrind --cache-sim=yes" valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file=/dev/null "$native"

echo "order,round,variant,ms,cpu_ms" > "$csv"
for order in ijk ikj; do
  for round in $(seq "$runs"); do
    echo "$order: round $round of $runs" >&2
    run_variants "$round" ms,cpu_ms "$csv" "$order," "$order, round $round" "$order"
  done
done

# The table: per order and variant, by wall and by CPU time, the median
# time, and the median and range of (time / that round's native time).
printf '%s\n' "${names[@]}" | python3 -c '
import csv, statistics, sys
names = [l.rstrip("\n") for l in sys.stdin]
rows = list(csv.DictReader(open(sys.argv[1])))
print("%-5s  %-44s  %27s  %27s" % ("", "", "---------- wall ----------", "----------- CPU ----------"))
print("%-5s  %-44s  %8s %6s %11s  %8s %6s %11s" % ("order", "variant", "ms", "x", "rounds", "ms", "x", "rounds"))
for order in ("ijk", "ikj"):
    t = {}
    for r in rows:
        if r["order"] == order:
            t.setdefault(int(r["variant"]), {})[int(r["round"])] = (float(r["ms"]), float(r["cpu_ms"]))
    native = t[0]
    for v, name in enumerate(names):
        cells = []
        for f in (0, 1):
            ratios = [t[v][k][f] / native[k][f] for k in t[v]]
            cells.append("%8.1f %5.1fx %4.1fx-%5.1fx" % (statistics.median(x[f] for x in t[v].values()),
                         statistics.median(ratios), min(ratios), max(ratios)))
        print("%-5s  %-44s  %s  %s" % (order, name, cells[0], cells[1]))
' "$csv"
# The simulated hierarchy, how it was simulated and how the simulator
# searched its sets, as one more simulated run reports it (the ratios
# depend on them and on the host; docs/PERFORMANCE.md). The set search is
# measured by every process anew (simulator/README.md, "Set search").
caches=$("${hist[@]}" "$inst" ijk 2>/dev/null | sed -n 's/^simulated caches: //p' || true)
echo "simulated caches (one more run): ${caches:-unknown}"
echo "$runs rounds, every variant once a round; medians; runs in $csv"
echo "x: median over the rounds of the variant's time / that round's native time (the first row); CPU: every thread of the process"

#!/usr/bin/env bash
# Slowdown of the cache-simulator backend on a 256 x 256 double matrix
# multiply, against the native run and against Valgrind's cachegrind and
# callgrind --cache-sim=yes on the same (uninstrumented) program. Every
# number is the program's own time for the multiply ("ms=" of bench/matmul.c),
# the median of RUNS runs (default 5), so start-up and the tool's work are
# not counted for anybody.
#
#   bench/run_cachesim_slowdown.sh BUILD_DIR [RUNS]
#
# Variants: native (matmul, no tool); dormant (matmul_cachesim, no tool:
# the instrumentation only tests its flag); simulated
# (matmul_cachesim under `mri hist`, L1 read misses of C in "multiply": every
# reference simulated, C monitored); the same with the histogram over every
# registered data structure (A, B and C monitored); cachegrind; callgrind.
# "simulated" uses the simulation thread where the machine has a CPU to
# spare for it, and splits the simulation between it and the program's
# thread while that pays (libmonitor/cache_worker.cpp, the default). The
# rows under it are the C-monitored run again never split
# (MRI_CACHESIM_SPLIT=0), split from the start (=4 and =8: the program
# simulates 1/4 and 1/8 of the cache lines), and with each batch simulated
# by the program's thread (MRI_CACHESIM_ASYNC=0), for comparison.
# matmul_cachesim is instrumented by the inlining plugin where it is built
# (backends/cachesim/plugin); then the dormant and the C-monitored runs are
# repeated with matmul_cachesim_sancov, the same program through
# SanitizerCoverage's callbacks.
set -euo pipefail
build=${1:?usage: run_cachesim_slowdown.sh BUILD_DIR [RUNS]}
runs=${2:-5}
native=$build/bench/matmul
inst=$build/bench/matmul_cachesim
sancov=$build/bench/matmul_cachesim_sancov  # built where the plugin is: the other instrumentation
mri=$build/tools/mri/mri
for f in "$native" "$inst" "$mri"; do [ -x "$f" ] || { echo "missing $f (build first; instrumentation needs clang)" >&2; exit 1; }; done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ms_of() { grep -o 'ms=[0-9.]*' | head -1 | cut -d= -f2; }
measure() {  # measure ORDER CMD...: median ms over the runs
  local order=$1; shift
  for _ in $(seq "$runs"); do "$@" 2>/dev/null | ms_of; done | median
}
printf "%-5s  %-44s  %10s  %9s\n" order variant "ms" slowdown
for order in ijk ikj; do
  base=$(measure $order "$native" $order)
  row() { printf "%-5s  %-44s  %10.1f  %8.1fx\n" $order "$1" "$2" "$(echo "$2 / $base" | bc -l)"; }
  row "native (gcc -O2, no tool)" "$base"
  row "instrumented, dormant (no tool)" "$(measure $order "$inst" $order)"
  [ -x "$sancov" ] && row "  the same through SanitizerCoverage's calls" "$(measure $order "$sancov" $order)"
  row "instrumented, simulated, C monitored" \
      "$(measure $order "$mri" hist --metric L1_DATA_READ_MISS --data C --region multiply -o /dev/null -- "$inst" $order)"
  row "  the same, never split (SPLIT=0)" \
      "$(measure $order env MRI_CACHESIM_SPLIT=0 "$mri" hist --metric L1_DATA_READ_MISS --data C --region multiply -o /dev/null -- "$inst" $order)"
  row "  the same, 1/4 in the program (SPLIT=4)" \
      "$(measure $order env MRI_CACHESIM_SPLIT=4 "$mri" hist --metric L1_DATA_READ_MISS --data C --region multiply -o /dev/null -- "$inst" $order)"
  row "  the same, 1/8 in the program (SPLIT=8)" \
      "$(measure $order env MRI_CACHESIM_SPLIT=8 "$mri" hist --metric L1_DATA_READ_MISS --data C --region multiply -o /dev/null -- "$inst" $order)"
  row "  the same simulated in place (ASYNC=0)" \
      "$(measure $order env MRI_CACHESIM_ASYNC=0 "$mri" hist --metric L1_DATA_READ_MISS --data C --region multiply -o /dev/null -- "$inst" $order)"
  [ -x "$sancov" ] && row "  the same through SanitizerCoverage's calls" \
      "$(measure $order "$mri" hist --metric L1_DATA_READ_MISS --data C --region multiply -o /dev/null -- "$sancov" $order)"
  row "instrumented, simulated, all data structures" \
      "$(measure $order "$mri" hist --metric L1_DATA_READ_MISS --region multiply -o /dev/null -- "$inst" $order)"
  row "valgrind --tool=cachegrind" "$(measure $order valgrind --tool=cachegrind --cachegrind-out-file=/dev/null "$native" $order)"
  row "valgrind --tool=callgrind --cache-sim=yes" \
      "$(measure $order valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file=/dev/null "$native" $order)"
done
hierarchy=${MRI_CACHESIM_CONFIG:-"the machine's caches (hwloc)"}
# The hierarchy that default stands for on this machine, as the replay tool
# reads it (the ratios depend on it and on the host; docs/PERFORMANCE.md).
if [ -z "${MRI_CACHESIM_CONFIG:-}" ] && [ -x "$build/tools/cachesim/mri-cachesim" ]; then
  hierarchy="$hierarchy: $("$build/tools/cachesim/mri-cachesim" --no-progress - </dev/null | sed -n 's/^config: //p')"
fi
echo "simulated hierarchy: $hierarchy; $runs runs each, medians"

#!/usr/bin/env bash
# run_trace_export.sh - end-to-end throughput of the trace archiver and the
# application's dilation as a function of the ring size.
#
#   bench/run_trace_export.sh BUILD_DIR [OUT_DIR]
#
# Workload: mri_testapp nested 1 N (one thread, N steps of step + 2 inner:
# 6 records per step, nothing else). For each ring size it runs
#   mri trace -o OUT_DIR/run.otf2 --ring R -- mri_testapp nested 1 N
# TRACE_REPETITIONS times (default 3) and reports the median wall time, the
# events per second from the application's start to the closed archive, and
# the dilation against the median native run (the same binary, no tool).
set -euo pipefail
build=$(cd "$1" && pwd)
out=${2:-$build/bench/trace-export}
mkdir -p "$out"
mri=$build/tools/mri/mri
app=$build/tests/apps/mri_testapp
steps=${TRACE_STEPS:-2000000}
reps=${TRACE_REPETITIONS:-3}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
native=$(for _ in $(seq "$reps"); do secs "$app" nested 1 "$steps"; done | median)
events=$((6 * steps + 2))
printf "workload: mri_testapp nested 1 %d (%d events); native run: %.3f s (median of %d)\n" "$steps" "$events" "$native" "$reps"
printf "%-10s %-8s %10s %14s %10s\n" ring format "wall [s]" "events/s" dilation
for fmt in otf2 vtf; do
  for ring in 4096 16384 65536 262144; do
    t=$(for _ in $(seq "$reps"); do rm -rf "$out"/run*; secs "$mri" trace -o "$out/run.$fmt" --ring "$ring" -- "$app" nested 1 "$steps"; done | median)
    printf "%-10s %-8s %10.3f %14.3g %9.1fx\n" "$ring" "$fmt" "$t" "$(echo "$events / $t" | bc -l)" "$(echo "$t / $native" | bc -l)"
  done
done
rm -rf "$out"/run*

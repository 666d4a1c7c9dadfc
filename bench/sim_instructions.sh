#!/usr/bin/env bash
# sim_instructions.sh - instructions per simulated reference of the cache
# simulator's engine on sim_throughput's streams, counted by Valgrind's
# callgrind: the same count on every run of the same binary, for A/B
# comparisons on a machine whose timings move by more than the change.
#
#   bench/sim_instructions.sh BUILD_DIR [STREAM,CONFIG ...]
#
# STREAM is ijk, ikj or vector (the program rung's stream), CONFIG two (L1 +
# L2), three (+ a shared L3), 2cores (the 3 levels of a 2-core machine,
# coherent) or program (the program rung's hierarchy and monitor); the
# default is ijk and ikj with each of the first three, and vector,program.
# For each, `sim_throughput --replay=STREAM,CONFIG,N` runs under callgrind
# with 1 and with 3 passes over the stream, counting only inside the
# bench's replay_pass (its calls of Hierarchy::simulate); the difference
# over two passes' references is the warm caches' cost of a reference (the
# first pass fills the caches). Valgrind does not offer AVX-512 to the
# program, so these are the counts of the scalar kernels
# (Hierarchy::vector_lookups). About 10 s a line. Exit status 1 when a run
# failed.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 BUILD_DIR [ijk|ikj|vector,two|three|2cores|program ...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
shift
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(ijk,two ikj,two ijk,three ikj,three ijk,2cores ikj,2cores vector,program)
bin=$build/bench/sim_throughput
[[ -x $bin ]] || { echo "sim_instructions: $bin not found; build it first (-DMRI_BUILD_BENCH=ON)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "sim_instructions: valgrind not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() {  # count CASE PASSES: instructions inside replay_pass(); prints "IR REFS"
  local log=$tmp/run.log
  if ! valgrind --tool=callgrind --toggle-collect='*replay_pass*' \
      --callgrind-out-file="$tmp/out" "$bin" --replay="$1,$2" >"$log" 2>&1; then
    echo "sim_instructions: $1: the run failed:" >&2
    tail -5 "$log" >&2
    return 1
  fi
  local ir refs
  ir=$(grep -oE 'Collected : [0-9]+' "$log" | awk '{print $3}')
  refs=$(grep -oE 'references per pass [0-9]+' "$log" | awk '{print $4}')
  echo "$ir $refs"
}

status=0
printf '%-12s %14s %14s\n' case references instr/ref
for c in "${cases[@]}"; do
  if ! one=$(count "$c" 1) || ! three=$(count "$c" 3); then
    status=1
    continue
  fi
  read -r ir1 refs <<<"$one"
  read -r ir3 _ <<<"$three"
  awk -v c="$c" -v a="$ir1" -v b="$ir3" -v r="$refs" \
    'BEGIN { printf "%-12s %14d %14.2f\n", c, r, (b - a) / (2 * r) }'
done
exit $status

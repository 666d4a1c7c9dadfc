#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (fuzz/README.md).
#
#   scripts/fuzz.sh [--ci] TARGET|all [SECONDS]
#
# Builds them first (clang, -DMRI_FUZZ=ON, into ${BUILD_DIR:-build-fuzz},
# or build-fuzz-ci without optimisation for --ci; extra cmake arguments in
# MRI_FUZZ_CMAKE_ARGS), then runs each target for
# SECONDS (default 600) on its seeds (fuzz/corpus/TARGET, never written) and
# a corpus of its own that persists outside the tree, in
# ${MRI_FUZZ_DIR:-$HOME/.cache/mri-fuzz}/TARGET/corpus; inputs that crash,
# leak, time out (10 s) or run out of memory (2 GiB) go to
# .../TARGET/findings/ (those of this run are reported). MRI_FUZZ_JOBS=N
# runs N targets at once (default 1).
# With --ci the corpus is a temporary directory, removed at the end.
#
# Prints a line per target: seconds, executions, coverage (libFuzzer's
# edges "cov" and features "ft"), corpus size and findings; exits 1 when a
# target found something (its log is printed), 2 on a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."

ci=0
if [ "${1:-}" = "--ci" ]; then
  ci=1
  shift
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
what=$1
seconds=${2:-600}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: SECONDS must be a positive number of seconds, not '$seconds'" >&2
  exit 2
fi
jobs=${MRI_FUZZ_JOBS:-1}
if ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: MRI_FUZZ_JOBS must be a positive number, not '$jobs'" >&2
  exit 2
fi

# --ci builds without optimisation, in a directory of its own: with ASan,
# UBSan and coverage, -O2 triples the build (the simulator's kernels: 42 s
# against 13 s for hierarchy.cpp), and seconds of fuzzing need no speed.
if [ $ci = 1 ]; then
  build_dir=${BUILD_DIR:-build-fuzz-ci}
  build_type=Debug
else
  build_dir=${BUILD_DIR:-build-fuzz}
  build_type=RelWithDebInfo
fi
# shellcheck disable=SC2086  # MRI_FUZZ_CMAKE_ARGS is a list of arguments
CC=clang CXX=clang++ BUILD_DIR=$build_dir scripts/build.sh -DMRI_FUZZ=ON -DCMAKE_BUILD_TYPE=$build_type \
  ${MRI_FUZZ_CMAKE_ARGS:-} > /dev/null

all_targets=()
for f in fuzz/corpus/*/; do
  t=$(basename "$f")
  [ -x "$build_dir/fuzz/fuzz_$t" ] && all_targets+=("$t")
done
if [ "$what" = all ]; then
  targets=("${all_targets[@]}")
else
  if ! [ -x "$build_dir/fuzz/fuzz_$what" ] || ! [ -d "fuzz/corpus/$what" ]; then
    echo "fuzz.sh: no fuzz target '$what' (targets: ${all_targets[*]})" >&2
    exit 2
  fi
  targets=("$what")
fi

if [ $ci = 1 ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/mri-fuzz.XXXXXX")
  trap 'rm -rf "$work"' EXIT
else
  work=${MRI_FUZZ_DIR:-$HOME/.cache/mri-fuzz}
fi

# One target: its log in $work/TARGET/log, its summary line in .../summary.
run_target() {
  local t=$1 dir=$work/$1
  mkdir -p "$dir/corpus" "$dir/findings"
  local dict=()
  [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
  local started=$SECONDS status=0
  touch "$dir/started"
  "$build_dir/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$dir/findings/" "${dict[@]}" "$dir/corpus" "fuzz/corpus/$t" > "$dir/log" 2>&1 || status=$?
  local elapsed=$((SECONDS - started))
  local execs cov ft corpus findings
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2 || true)
  ft=$(grep -o 'ft: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2 || true)
  corpus=$(find "$dir/corpus" -type f | wc -l)
  findings=$(find "$dir/findings" -type f -newer "$dir/started" | wc -l)
  [ "$status" -ne 0 ] && [ "$findings" -eq 0 ] && findings="exit status $status"
  printf '%-18s %5s s  %12s execs  cov %5s  ft %6s  corpus %6s  findings %s\n' "$t" "$elapsed" "${execs:-?}" \
    "${cov:-?}" "${ft:-?}" "$corpus" "$findings" > "$dir/summary"
}

echo "fuzz.sh: ${#targets[@]} target(s), ${seconds} s each, $jobs at once; corpus and findings in $work"
running=0
for t in "${targets[@]}"; do
  run_target "$t" &
  running=$((running + 1))
  if [ $running -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

failed=0
for t in "${targets[@]}"; do
  cat "$work/$t/summary"
  if ! grep -q 'findings 0$' "$work/$t/summary"; then
    failed=1
    echo "---- $t: the end of its log ($work/$t/log)"
    tail -40 "$work/$t/log"
    for f in $(find "$work/$t/findings" -type f -newer "$work/$t/started"); do
      echo "---- $t: finding $f (reproduce: $build_dir/fuzz/fuzz_$t $f), first bytes:"
      od -A d -t x1z "$f" | head -8
    done
  fi
done
exit $failed

#!/usr/bin/env bash
# The kill matrix (tests/kill/kill_matrix.cpp) for as many runs as asked:
#
#   scripts/kill_matrix.sh [RUNS [SEED [OPTIONS...]]]
#
# RUNS defaults to 10000; OPTIONS go to test_kill_matrix (--only
# VICTIM:STATE:SIGNAL, --verbose). Runs the build in ${BUILD_DIR:-build}.
# Prints the release latency per cell of the matrix and what the runs left
# behind; exits 1 when a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
runs=${1:-10000}
seed=${2:-$(date +%s)}
shift $(($# < 2 ? $# : 2))
binary=$build_dir/tests/test_kill_matrix
if ! [ -x "$binary" ]; then
  echo "kill_matrix.sh: no $binary: build it first (BUILD_DIR=$build_dir scripts/build.sh)" >&2
  exit 2
fi
echo "kill_matrix.sh: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), load $(cut -d' ' -f1-3 /proc/loadavg)"
exec "$binary" --runs "$runs" --seed "$seed" "$@"

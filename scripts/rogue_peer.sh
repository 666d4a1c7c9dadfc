#!/usr/bin/env bash
# The rogue-peer campaign (tests/rogue/rogue_peer.cpp) for as long as asked:
#
#   scripts/rogue_peer.sh [SEED [ITERATIONS [OPTIONS...]]]
#
# ITERATIONS 0 (the default) runs until interrupted; OPTIONS go to
# test_rogue_peer (--operations K, --watchdog SECONDS, --verbose, ...). Runs
# the build in ${BUILD_DIR:-build-asan} (ASan and UBSan: scripts/build.sh
# -DMRI_SANITIZE=address, as scripts/test.sh builds it), with the
# sanitizer options of its CTest run. Stops at the first iteration that
# crashed, hung or drew a sanitizer report, and says how to repeat it.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-asan}
seed=${1:-$(date +%s)}
iterations=${2:-0}
shift $(($# < 2 ? $# : 2))
binary=$build_dir/tests/test_rogue_peer
if ! [ -x "$binary" ]; then
  echo "rogue_peer.sh: no $binary: build it first (BUILD_DIR=$build_dir scripts/build.sh -DMRI_SANITIZE=address)" >&2
  exit 2
fi
echo "rogue_peer.sh: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), load $(cut -d' ' -f1-3 /proc/loadavg)"
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}
exec "$binary" --seed "$seed" --iterations "$iterations" "$@"

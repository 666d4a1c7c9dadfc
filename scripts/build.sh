#!/usr/bin/env bash
# Configures and builds into BUILD_DIR (default: build). Extra arguments go
# to cmake, e.g. -DMRI_SANITIZE=address.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
mkdir -p "$build_dir"
log=$build_dir/configure.log
cmake -S . -B "$build_dir" "$@" > "$log" 2>&1 || { cat "$log"; exit 1; }
cmake --build "$build_dir" -j "$(nproc)"

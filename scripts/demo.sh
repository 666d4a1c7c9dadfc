#!/usr/bin/env bash
# The main job on a fresh machine: install, build, and profile the paper's
# running example (Gaussian elimination) with the mri tool.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build/tools/mri/mri profile -- build/examples/gauss/gauss

#!/usr/bin/env bash
# The whole test suite on a fresh machine: install, build, run every test
# (CTest: C API, fault, unit tests and the shared-memory leak check), then
# the same suite again under AddressSanitizer + UndefinedBehaviorSanitizer,
# under ThreadSanitizer, and built without the optional PAPI, hwloc and OTF2 (the
# publication interface must then say they are absent) and without the
# instrumentation plugin (programs instrumented through SanitizerCoverage's
# callbacks, as where LLVM's development files are missing); and the fuzz
# targets (fuzz/): their seeds, then a few seconds of fuzzing each.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

echo "== build and test (RelWithDebInfo)"
BUILD_DIR=build scripts/build.sh
(cd build && ctest --output-on-failure)

echo "== build and test under ASan+UBSan"
BUILD_DIR=build-asan scripts/build.sh -DMRI_SANITIZE=address -DMRI_BUILD_BENCH=OFF
(cd build-asan && ctest --output-on-failure)

echo "== build and test under TSan"
BUILD_DIR=build-tsan scripts/build.sh -DMRI_SANITIZE=thread -DMRI_BUILD_BENCH=OFF
(cd build-tsan && ctest --output-on-failure)

echo "== build and test without PAPI, hwloc and the instrumentation plugin"
BUILD_DIR=build-minimal scripts/build.sh -DMRI_USE_PAPI=OFF -DMRI_USE_HWLOC=OFF -DMRI_USE_OTF2=OFF -DMRI_USE_LIBUNWIND=OFF -DMRI_CACHESIM_PLUGIN=OFF -DMRI_BUILD_BENCH=OFF
(cd build-minimal && ctest --output-on-failure)

echo "== fuzz targets (clang, libFuzzer): the seeds, then 4 s of fuzzing each"
MRI_FUZZ_JOBS=2 scripts/fuzz.sh --ci all 4

#!/usr/bin/env bash
# Installs what the build, the tests and the benchmarks need on Debian 12.
# Installs only what is missing, so it is quick on a machine that has them.
# Extra package names given as arguments are installed the same way (used by
# scripts that need more, like scripts/kcachegrind-screenshot.sh).
set -euo pipefail

packages=(
  build-essential cmake pkg-config   # toolchain
  libcmocka-dev                      # C API tests
  libcli11-dev                       # the mri tool's option parsing (tools/mri; header-only)
  libpapi-dev papi-tools             # PAPI backend: counters by name (papi_avail to look around)
  libpfm4-dev                        # PAPI's event tables: chosen by the backend on a CPU libpfm4 does not know
  googletest libgtest-dev libgmock-dev  # unit and fault tests
  libhwloc-dev                       # machine topology (MRI_Get_System_Information)
  libunwind-dev                      # unannotated callers in callpath profiles (libmonitor; optional, MRI_USE_LIBUNWIND)
  libbenchmark-dev                   # bench/
  python3 bc                         # bench/run_ladder.sh summary, bench/run_trace_export.sh
  procps util-linux                  # ipcs, used by the shared-memory check
  libopen-trace-format2-dev          # OTF2 trace writer (tools/exporters; optional, MRI_USE_OTF2)
  otf2-tools                         # otf2-print: the exporter tests read OTF2 archives back with it
  valgrind                           # callgrind_annotate (exporter tests); cachegrind and lackey (simulator test)
  clang                              # cache-simulator instrumentation (backends/cachesim: SanitizerCoverage loads/stores)
  libclang-rt-14-dev                 # libFuzzer and clang's sanitizer runtimes (fuzz/, scripts/fuzz.sh); clang only recommends it
  llvm-dev                           # the inlining instrumentation plugin (backends/cachesim/plugin), against clang's LLVM
  openmpi-bin libopenmpi-dev         # MPI jobs: examples/mpi_pi and tests/mpi run real Open MPI jobs (mpirun)
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: everything is installed"
fi

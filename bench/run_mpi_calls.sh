#!/usr/bin/env bash
# What the MPI wrapper library (mpi/, libmri_mpi.so) costs a rank's MPI
# calls (bench/mpi_call_cost.c: MPI_Iprobe with nothing pending and
# MPI_Barrier, on one rank, so that each returns at once and the
# difference is the wrapper's own).
#
#   bench/run_mpi_calls.sh BUILD_DIR [ROUNDS] [CALLS]
#
# ROUNDS rounds (default 7) of every variant, each starting one further
# along; CALLS calls of each kind a run (default 1000000). The table gives
# each variant's median ns a call, its range, and the median of its time /
# the plain program's in the same round. Every run goes to
# BUILD_DIR/bench/mpi-calls.csv (round,variant,iprobe_ns,barrier_ns).
#
# Variants, all `mpirun -np 1` of one binary (same compiler and flags):
# plain (no wrappers); dormant (the wrappers preloaded, no tool: a byte load
# and a branch around each call); measured (`mri profile` in the job: the
# wrappers preloaded, every call a measured region of a profile).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/variants.sh"
usage="usage: run_mpi_calls.sh BUILD_DIR [ROUNDS] [CALLS]"
build=${1:?$usage}
runs=${2:-7}
calls=${3:-1000000}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive whole number (got '$runs'); $usage" >&2; exit 2; }
[[ $calls =~ ^[1-9][0-9]*$ && $calls -ge 10 && $calls -le 1000000000 ]] ||
  { echo "CALLS must be a whole number from 10 to 1000000000 (got '$calls'); $usage" >&2; exit 2; }
prog=$build/bench/mpi_call_cost
wrappers=$build/mpi/libmri_mpi.so
mri=$build/tools/mri/mri
for f in "$prog" "$wrappers" "$mri"; do
  [ -e "$f" ] || { echo "missing $f (build with MPI and -DMRI_BUILD_BENCH=ON first)" >&2; exit 1; }
done
command -v mpirun >/dev/null || { echo "mpirun not found (scripts/install-deps.sh installs Open MPI)" >&2; exit 1; }
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
csv=$build/bench/mpi-calls.csv

names=("plain (no wrappers)" "wrappers, dormant (no tool)" "wrappers, measured (mri profile)")
cmds=("mpirun -np 1 $prog" "mpirun -np 1 -x LD_PRELOAD=$wrappers $prog" "mpirun -np 1 $mri profile $prog")

echo "round,variant,iprobe_ns,barrier_ns" > "$csv"
for round in $(seq "$runs"); do
  echo "round $round of $runs" >&2
  run_variants "$round" iprobe_ns,barrier_ns "$csv" "" "round $round" "$calls"
done

echo "1 rank, $calls calls of each kind a run, $runs rounds (every run in $csv)"
echo
printf '%s\n' "${names[@]}" | python3 -c '
import csv, statistics, sys
names = [l.rstrip("\n") for l in sys.stdin]
ns = {}
for r in csv.DictReader(open(sys.argv[1])):
    for call in ("iprobe_ns", "barrier_ns"):
        ns.setdefault(call, {}).setdefault(int(r["variant"]), {})[int(r["round"])] = float(r[call])
print("| call | variant | ns a call (median) | range | / plain (median of the rounds) |")
print("|---|---|---:|---:|---:|")
for call, label in (("iprobe_ns", "MPI_Iprobe"), ("barrier_ns", "MPI_Barrier")):
    for v, name in enumerate(names):
        own = ns[call][v]
        print("| %s | %s | %.1f | %.1f-%.1f | %.2f |" % (label, name, statistics.median(own.values()),
              min(own.values()), max(own.values()), statistics.median([own[k] / ns[call][0][k] for k in own])))
' "$csv"

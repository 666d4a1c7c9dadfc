#!/usr/bin/env bash
# examples/mpi_jacobi (the stencil's Jacobi relaxation over MPI ranks and
# OpenMP threads, with a halo exchange) under mri in real Open MPI jobs:
#   - its checksum is the OpenMP stencil's, with 1 and 3 ranks of 2
#     threads;
#   - `mpirun -np 3 mri profile`: in every rank's table, STEPS instances of
#     time_step, halo_exchange and residual, 2 x STEPS of MPI_Sendrecv
#     (also at the plate's edges, where one side is MPI_PROC_NULL), STEPS
#     + 1 of MPI_Allreduce (one a step, one that checks the allocations),
#     one MPI_Bcast and one MPI_Gatherv (the plate gathered at the end),
#     and sweep and update_rows STEPS times per thread (2 threads);
#   - -n below the number of ranks: one line from rank 0, status 2.
#
#   test_jacobi.sh MRI MPI_JACOBI STENCIL WORKDIR
set -uo pipefail
mri=$1 jacobi=$2 stencil=$3 work=$4
. "$(dirname "${BASH_SOURCE[0]}")/job_env.sh"
. "$(dirname "${BASH_SOURCE[0]}")/tables.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
# 3 ranks of 2 threads on 2 cores: threads that wait sleep instead of spinning.
export OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive
n=64 steps=20

expected=$("$stencil" -n $n -t $steps | sed -n 's/.*checksum=//p')
[[ -n $expected ]] || fail "the stencil printed no checksum"
for ranks in 1 3; do
  timeout 240 "${mpirun[@]}" -np $ranks "$jacobi" -n $n -t $steps >plain.$ranks 2>plain.$ranks.err ||
    { cat plain.$ranks.err; fail "mpi_jacobi on $ranks ranks"; }
  grep -q "^mpi_jacobi: n=$n steps=$steps ranks=$ranks threads=2 checksum=$expected$" plain.$ranks ||
    { cat plain.$ranks; fail "mpi_jacobi on $ranks ranks: not the stencil's checksum $expected"; }
done

# Each rank's table in a file of its own (mpirun merges outputs in chunks).
timeout 240 "${mpirun[@]}" -np 3 --output-filename of "$mri" profile "$jacobi" -n $n -t $steps >prof.mpirun 2>prof.err ||
  { cat prof.err; fail "mpirun -np 3 mri profile mpi_jacobi"; }
for r in 0 1 2; do
  table=of/1/rank.$r/stdout
  grep -q "^mri profile: .* (pid [0-9]*, rank $r of 3), 2 threads," "$table" || { cat "$table"; fail "rank $r: no table of 2 threads"; }
  for check in "time_step $steps" "halo_exchange $steps" "residual $steps" "MPI_Sendrecv $((2 * steps))" \
               "MPI_Allreduce $((steps + 1))" "MPI_Gatherv 1" "MPI_Bcast 1" "sweep $((2 * steps))" "update_rows $((2 * steps))" "MPI_Init_thread 1"; do
    set -- $check
    [[ $(calls "$table" $r "$1") == "$2" ]] || { cat "$table"; fail "rank $r: $1 called $(calls "$table" $r "$1") times, expected $2"; }
  done
done
grep -q "checksum=$expected$" of/1/rank.0/stdout || { cat of/1/rank.0/stdout; fail "under mri: not the stencil's checksum"; }

# Fewer rows than ranks.
timeout 60 "${mpirun[@]}" -np 3 "$jacobi" -n 2 >few.out 2>few.err
[[ $? != 0 ]] && [[ $(grep -c '^mpi_jacobi: ' few.err) == 1 ]] &&
  grep -q '^mpi_jacobi: -n 2: fewer rows than the 3 ranks (each needs one)$' few.err ||
  { cat few.err; fail "-n 2 on 3 ranks: not one line from rank 0"; }
echo ok

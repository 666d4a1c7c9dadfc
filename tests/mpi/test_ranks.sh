#!/usr/bin/env bash
# `mri` as one rank of real Open MPI jobs (examples/mpi_pi: rank 0 hands out
# BATCHES batches, the other ranks compute them in compute_batch):
#   - `mpirun -np 4 mri profile -o cg.%r.out PROGRAM`: one table per rank,
#     each titled with its rank of 4, one callgrind file per rank that
#     callgrind_annotate reads, and the ranks' compute_batch calls add up to
#     BATCHES (nothing lost or counted twice); the same with 16 ranks;
#   - the MPI calls as regions of type MPI (the wrappers mri preloads):
#     MPI_Init and MPI_Finalize once a rank; a worker sends and receives
#     once per batch it computed and once more (the request that was told
#     to stop), rank 0 BATCHES + RANKS - 1 times; none with --no-mpi-calls;
#   - %p: the file names carry the pids the titles give;
#   - `mpirun -np 2 mri trace -o t.%r.otf2`: one OTF2 archive per rank that
#     otf2-print reads (VTF3 files in a build without OTF2), whose compute_batch enters add up to BATCHES, with
#     MPI_Send defined as a POINT2POINT region of the MPI paradigm;
#   - a program on another MPI (a stand-in libmpi.so.12): one line at start
#     says its calls are not measured, and they reach its MPI;
#   - the forms that cannot work say in one line what to type, and run
#     nothing: one -o file for every rank (said once, by rank 0), `mri
#     profile -- mpirun ...`, --fit in a job; a % that starts no sequence;
#     any other usage error in a job is said once too;
#   - one rank's program killed (SIGKILL): its mri says "rank 2: ... was
#     killed by signal 9", and mpirun ends the job instead of hanging;
#   - outside a job: %r is 0, %% a %, and the MPI program runs as a
#     singleton under mri.
#
#   test_ranks.sh MRI MPI_PI FOREIGN_MPI WORKDIR
set -uo pipefail
mri=$1 pi=$2 foreign=$3 work=$4
. "$(dirname "${BASH_SOURCE[0]}")/job_env.sh"
. "$(dirname "${BASH_SOURCE[0]}")/tables.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }

# job NAME RANKS ARGS...: mpirun -np RANKS ARGS with each rank's standard
# output in a file of its own (mpirun merges them chunk by chunk, which
# may split a rank's table), then NAME holds them in rank order; mpirun's
# own output in NAME.mpirun and NAME.err. The status is mpirun's.
job() {
  local name=$1 n=$2
  shift 2
  timeout 240 "${mpirun[@]}" -np "$n" --output-filename "of.$name" "$@" >"$name.mpirun" 2>"$name.err"
  local status=$? last=$((n - 1))
  # mpirun pads the ranks in the directory names to the width of the last.
  for ((r = 0; r < n; ++r)); do cat "of.$name/1/rank.$(printf "%0${#last}d" $r)/stdout" 2>/dev/null; done >"$name"
  return $status
}
# The ranks the tables' titles name, sorted.
title_ranks() { sed -n 's/^mri profile: .* (pid [0-9]*, rank \([0-9]*\) of \([0-9]*\)).*/\1 of \2/p' "$1" | sort -n; }

for ranks in 4 16; do
  batches=$((ranks * 5))
  job prof.$ranks $ranks "$mri" profile -o cg.$ranks.%r.out "$pi" -b $batches -p 20000 ||
    { cat prof.$ranks.err; fail "$ranks ranks: mpirun ... mri profile -o cg.$ranks.%r.out"; }
  diff <(title_ranks prof.$ranks) <(for ((r = 0; r < ranks; ++r)); do echo "$r of $ranks"; done) >/dev/null ||
    { cat prof.$ranks; fail "$ranks ranks: the tables are not titled rank 0 to $((ranks - 1)) of $ranks"; }
  [[ $(calls_over_ranks prof.$ranks compute_batch) == "$batches" ]] ||
    { cat prof.$ranks; fail "$ranks ranks: compute_batch ran $(calls_over_ranks prof.$ranks compute_batch) times over the ranks, expected $batches"; }
  for ((r = 0; r < ranks; ++r)); do
    [[ -s cg.$ranks.$r.out ]] || fail "$ranks ranks: no cg.$ranks.$r.out"
    callgrind_annotate --threshold=100 cg.$ranks.$r.out >ann.$ranks.$r 2>&1 || { cat ann.$ranks.$r; fail "callgrind_annotate cg.$ranks.$r.out"; }
    region=$([[ $r == 0 ]] && echo master || echo worker)
    grep -q "$region" ann.$ranks.$r || { cat ann.$ranks.$r; fail "cg.$ranks.$r.out: no $region"; }
  done
  [[ $(ls cg.$ranks.* | wc -l) == "$ranks" ]] || { ls; fail "$ranks ranks: not one file per rank"; }
  for ((r = 0; r < ranks; ++r)); do
    for call in MPI_Init MPI_Finalize; do
      [[ $(calls prof.$ranks $r $call) == 1 ]] || { cat prof.$ranks; fail "$ranks ranks: rank $r called $call $(calls prof.$ranks $r $call) times"; }
    done
    if ((r == 0)); then expected=$((batches + ranks - 1)); else expected=$(($(calls prof.$ranks $r compute_batch) + 1)); fi
    for call in MPI_Send MPI_Recv; do
      [[ $(calls prof.$ranks $r $call) == "$expected" ]] ||
        { cat prof.$ranks; fail "$ranks ranks: rank $r: $call $(calls prof.$ranks $r $call) times, expected $expected"; }
    done
  done
  [[ $(rank_rows prof.$ranks | awk '$2 == "MPI_Send" { print $3 }' | sort -u) == MPI ]] ||
    { cat prof.$ranks; fail "$ranks ranks: MPI_Send's rows are not of type MPI"; }
  grep -q "^mpi_pi: ranks=$ranks batches=$batches " prof.$ranks || { cat prof.$ranks; fail "$ranks ranks: no result line"; }
done

# --no-mpi-calls: no region of type MPI.
job nompi.out 2 "$mri" profile --no-mpi-calls "$pi" -b 4 -p 1000 || { cat nompi.out.err; fail "mri profile --no-mpi-calls"; }
[[ $(rank_rows nompi.out | awk '$3 == "MPI"' | wc -l) == 0 && $(calls nompi.out 1 compute_batch) -gt 0 ]] ||
  { cat nompi.out; fail "--no-mpi-calls: MPI calls in the tables, or no compute_batch"; }

# %p: the program's pid, as the titles give it.
job pid.out 2 "$mri" profile -o pid.%p.out "$pi" -b 4 -p 1000 || { cat pid.out.err; fail "mri profile -o pid.%p.out"; }
for p in $(sed -n 's/^mri profile: .* (pid \([0-9]*\), rank.*/\1/p' pid.out); do
  [[ -s pid.$p.out ]] || { ls; fail "no pid.$p.out for the program of pid $p"; }
done
[[ $(ls pid.*.out | wc -l) == 2 ]] || { ls; fail "-o pid.%p.out: not two files"; }

# A trace per rank: OTF2, or VTF3 in a build without OTF2. enters FILE
# REGION: the enters of REGION in one rank's trace.
if timeout 120 "${mpirun[@]}" -np 2 "$mri" trace -o t.%r.otf2 "$pi" -b 20 -p 1000 >trace.out 2>trace.err; then
  format=otf2
  for r in 0 1; do otf2-print t.$r.otf2 >print.$r 2>&1 || { cat print.$r; fail "otf2-print t.$r.otf2"; }; done
  enters() { grep -c "^ENTER .*\"$2\"" "print.$1"; }
elif grep -q "built without OTF2" trace.err; then
  format=vtf3
  timeout 120 "${mpirun[@]}" -np 2 "$mri" trace -o t.%r.vtf "$pi" -b 20 -p 1000 >trace.out 2>trace.err ||
    { cat trace.err; fail "mri trace -o t.%r.vtf"; }
  enters() {
    awk -v r="\"$2\"" '$1 == "DEFSTATE" && $4 == r { id = $3 } $2 == "DOWNTO" && $3 == id { n++ } END { print n + 0 }' "t.$1.vtf"
  }
else
  cat trace.err
  fail "mri trace -o t.%r.otf2"
fi
total=$(($(enters 0 compute_batch) + $(enters 1 compute_batch)))
[[ $total == 20 ]] || fail "the $format traces hold $total enters of compute_batch, expected 20"
# Rank 1 computed all 20 batches: 21 sends (the last request was told to stop).
[[ $(enters 1 MPI_Send) == 21 ]] || fail "rank 1's $format trace: $(enters 1 MPI_Send) enters of MPI_Send, expected 21"
if [[ $format == otf2 ]]; then
  otf2-print -G t.1.otf2 >defs.1 2>&1 || { cat defs.1; fail "otf2-print -G t.1.otf2"; }
  grep -q 'Name: "MPI_Send" .*Descr.: "MPI" .*Role: POINT2POINT, Paradigm: MPI' defs.1 ||
    { grep MPI_Send defs.1; fail "t.1.otf2: MPI_Send is not a POINT2POINT region of the MPI paradigm"; }
  grep -q 'Name: "MPI_Allreduce" .*Role: COLL_ALL2ALL, Paradigm: MPI' defs.1 ||
    { grep MPI_Allreduce defs.1; fail "t.1.otf2: MPI_Allreduce is not a COLL_ALL2ALL region"; }
fi

# A program on another MPI: said at start, its calls reach it unmeasured.
timeout 60 "${mpirun[@]}" -np 1 "$mri" profile "$foreign" >foreign.out 2>foreign.err || { cat foreign.err; fail "mri profile of foreign_mpi"; }
grep -q "^mri-mpi: not measuring MPI calls: this program's MPI library is .*libmpi.so.12, and the wrappers were built for libmpi.so.[0-9]*; the calls run unmeasured$" foreign.err ||
  { cat foreign.err; fail "foreign MPI: no line saying its calls are not measured"; }
grep -q '^fake MPICH: 3 sends$' foreign.out || { cat foreign.out; fail "foreign MPI: the sends did not reach its MPI"; }
[[ $(rank_rows foreign.out | awk '$3 == "MPI"' | wc -l) == 0 && $(calls foreign.out 0 main) == 1 ]] ||
  { cat foreign.out; fail "foreign MPI: MPI rows in the table, or main not profiled"; }

# One file for every rank: said once, nothing run, no file.
timeout 60 "${mpirun[@]}" -np 4 "$mri" profile -o same.out "$pi" -b 4 >same.out.1 2>same.err
status=$?
[[ $status != 0 ]] || fail "-o same.out in a job of 4: status 0"
[[ $(grep -c '^mri: ' same.err) == 1 ]] && grep -q "^mri: -o same.out: all 4 ranks of this job would write this one file; put %r (the rank) or %p (the pid) in its name: -o same.%r.out$" same.err ||
  { cat same.err; fail "-o same.out in a job of 4: not one line saying what to type"; }
[[ ! -e same.out ]] && ! grep -q '^mpi_pi:' same.out.1 || fail "-o same.out in a job of 4: the program ran or the file was written"

# mri around the launcher.
"$mri" profile --sort calls -- mpirun -np 4 --oversubscribe "$pi" -b 4 >around.out 2>around.err
status=$?
[[ $status == 2 ]] || { cat around.err; fail "mri profile -- mpirun: status $status, expected 2"; }
grep -q "^mri: mpirun starts the ranks as processes of its own, and mri monitors the one process it starts; type instead: mpirun -np 4 --oversubscribe mri profile --sort calls $pi -b 4 (each rank under its own mri; name its files with %r)$" around.err ||
  { cat around.err; fail "mri profile -- mpirun: not the command to type"; }
! grep -q '^mpi_pi:' around.out || fail "mri profile -- mpirun: the program ran"

# --fit in a job.
timeout 60 "${mpirun[@]}" -np 2 "$mri" profile --fit 1 "$pi" -b 4 >fit.out 2>fit.err
[[ $? != 0 && $(grep -c '^mri: ' fit.err) == 1 ]] && grep -q '^mri: --fit runs the program 3 times, and a rank of a job can start it once' fit.err ||
  { cat fit.err; fail "--fit in a job: not one line saying why"; }

# Any usage error in a job: said once.
timeout 60 "${mpirun[@]}" -np 4 "$mri" profile --sort bogus "$pi" >sort.out 2>sort.err
[[ $? != 0 && $(grep -c '^mri: ' sort.err) == 1 ]] && grep -q "^mri: unknown sort key 'bogus'" sort.err ||
  { cat sort.err; fail "--sort bogus in a job of 4: not said once"; }

# A % that starts nothing.
"$mri" profile -o 'bad%d.out' -- "$pi" -b 1 >bad.out 2>bad.err
[[ $? == 2 ]] && grep -q "^mri: -o bad%d.out: '%d': a % in a file name starts %r (the rank in an MPI job), %p (the program's pid) or %% (a %)$" bad.err ||
  { cat bad.err; fail "-o bad%d.out: not refused"; }

# One rank's program killed: its mri names the rank and the signal, and
# mpirun ends the job (the other ranks' programs end through their mri)
# instead of hanging. The program is found by its binary, this test's
# working directory and its rank (pgrep -x: its name, then /proc).
timeout 120 "${mpirun[@]}" -np 4 "$mri" profile "$pi" -b 40 -p 1000 -s 2 -d 5000 >kill.out 2>kill.err &
job_pid=$!
victim=
for ((k = 0; k < 200; ++k)); do
  for p in $(pgrep -x "$(basename "$pi")" | sed 's|^|/proc/|'); do
    [[ $(readlink "$p/exe" 2>/dev/null) == "$(readlink -f "$pi")" && $(readlink "$p/cwd" 2>/dev/null) == "$PWD" ]] || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=2 && victim=${p#/proc/}
  done
  [[ -z $victim ]] || break
  sleep 0.05
done
[[ -n $victim ]] || { kill $job_pid; fail "rank 2's program never started"; }
sleep 0.5  # into its first batch, which takes 5 s
kill -KILL "$victim"
wait $job_pid
status=$?
[[ $status != 0 && $status != 124 ]] || { cat kill.err; fail "a rank killed: mpirun ended with $status (0: not noticed, 124: hung)"; }
grep -q "^mri: rank 2: $pi was killed by signal 9 (Killed)" kill.err || { cat kill.err; fail "a rank killed: its mri does not name the rank and the signal"; }

# Outside a job: the singleton, %r is 0, %% a %.
"$mri" profile -o 'single%%.%r.out' -- "$pi" -b 3 -p 1000 >single.out 2>single.err || { cat single.err; fail "mri profile of a singleton"; }
[[ -s single%.0.out ]] || { ls; fail "-o single%%.%r.out outside a job: no single%.0.out"; }
grep -q '^mri profile: .* (pid [0-9]*), ' single.out || { cat single.out; fail "outside a job: the title names a rank"; }
[[ $(calls_over_ranks single.out compute_batch) == 3 ]] || { cat single.out; fail "the singleton computed $(calls_over_ranks single.out compute_batch) batches, expected 3"; }
echo "ok"

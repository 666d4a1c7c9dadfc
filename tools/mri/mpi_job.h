// mri as one rank of a parallel job (`mpirun -np 4 mri profile ./app`):
// the rank it runs as, its output names with %r and %p, the MPI wrapper
// library preloaded into the rank (its MPI calls as regions), and the
// refusal of forms that cannot work (`mri profile -- mpirun ...`, every rank writing
// one file), each with the command to type instead (docs/user-guide.md,
// "MPI jobs"). The launchers' variables are read by mri::launch.
//
// Thread safety: main thread only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launch.h"

namespace mri::cli {

// This process's place in its job (read once), or nullopt outside one.
const std::optional<mri::launch::JobPlace>& this_job();

// ", rank R of S" (", rank R" when the launcher gives no size) for the
// tables' titles; "" outside a job.
std::string job_words();

// Before a message every rank of a job would print alike (a usage error:
// each rank parses the same command line): in a job, every rank but 0
// ends here with `status`, silently, 2 s later (mpirun ends the job at the
// first rank that fails, and would kill rank 0 before its message was
// out); rank 0, or a process outside a job, returns and says it.
void leave_unless_first_rank(int status);

// "rank R: " to put before a message that every rank would print alike
// (the program's end, a failed MRI call); "" outside a job.
std::string job_prefix();

// Binds the output named by `option` (-o, --plot) whose value `name` the
// user gave: expands it in place now (%r: the rank, 0 outside a job; %p:
// mri's own pid until the program is loaded; %%: a %), and again with the
// program's pid once it is (program_loaded()). Usage errors: a % that
// starts none of these; in a job of two ranks or more, a file name with
// neither %r nor %p (every rank would write that one file; said by rank 0
// only, as every usage error). Nothing for "" (no such output).
void bind_job_output(const std::string& option, std::string& name);

// The program's pid is known: re-expands the outputs bound with %p.
void program_loaded(long pid);

// In a job: the MPI wrapper library (mpi/, libmri_mpi.so) added to the
// program's LD_PRELOAD, after what the user preloads, so that its MPI
// calls are regions of type MRI_REGION_MPI. Outside a job, or in a build
// without MPI, nothing. A library that is missing (moved since the build)
// is said in a warning, and the program runs without it.
void preload_mpi_wrappers();

// Usage error (status 2) when `program` (PROGRAM and its arguments) starts
// a job (mpirun, mpiexec, srun): mri would monitor one of its processes at
// most. Says what to type instead, with `mri_words` ("mri profile -o
// p.%r") in front of the ranks' program.
void check_not_launcher(const std::vector<std::string>& program, const std::string& mri_words);

}  // namespace mri::cli

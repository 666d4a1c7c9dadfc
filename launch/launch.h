// Parallel jobs as their launchers present them: a process's place in a job
// (its rank, the job's size) from the variables the launcher set, and the
// command lines that start a job (mpirun, mpiexec, srun). Everything MRI
// knows about launchers is here, so that a new one (srun's variables, a
// PMIx spawn) changes this component only (docs/design/0018-mpi-jobs.md).
//
// The environment is untrusted input: a value that is not a whole number
// from 0 to 2^31-1, or a rank not below the size, is reported, never used.
//
// Thread safety: the functions keep no state; job_place() reads the
// environment through the lookup it is given (getenv by default, which
// must not race with setenv).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mri::launch {

// A process's place in a job: `rank` of `size` processes (size 0: the
// launcher did not say), `local_rank` among those on its node (-1 when not
// said), and which launcher's variables said it ("Open MPI", "PMIx",
// "MPICH", "Slurm").
struct JobPlace {
  int rank = 0;
  int size = 0;
  int local_rank = -1;
  std::string launcher;
};

// Looks a variable up: nullptr when unset.
using Lookup = std::function<const char*(const char*)>;

// The place the environment gives, the first of Open MPI
// (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK), PMIx (PMIX_RANK, no size),
// MPICH's Hydra (PMI_RANK, PMI_SIZE), Slurm (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID) whose rank variable is set. nullopt outside a job; also
// when that launcher's variables are malformed, with why in `problem`
// ("OMPI_COMM_WORLD_RANK='x' is not a whole number").
std::optional<JobPlace> job_place(std::string* problem = nullptr, const Lookup& env = nullptr);

// The file a command name runs, as the tool's launch finds it (libmri,
// MRI_Application_Load): a word with a slash as it is; otherwise the first
// regular, executable file of that name in a directory of PATH (an empty
// entry is the current directory; PATH unset: /usr/bin:/bin). "" when
// there is none.
std::string find_program(const std::string& word);

// A command line that starts a job: the launcher's name as the user typed
// it (basename), and the index in argv of the program it runs (0 when it
// cannot be told: an option this component does not know may take a value).
struct LauncherCommand {
  std::string name;
  size_t program = 0;
};

// Whether argv[0] is a launcher (mpirun, mpiexec, orterun, oshrun,
// prterun, srun, with a .openmpi, .mpich or .hydra suffix too) and, if so,
// where its program starts: after the launcher's options, skipping the
// values of those known to take one (-np 4, --map-by ppr:1:node,
// --mca NAME VALUE), at the first argument that names an existing file
// or a command on PATH.
std::optional<LauncherCommand> launcher_command(const std::vector<std::string>& argv);

// The command a user types instead of `mri WORDS... -- LAUNCHER ARGS...`:
// the launcher and its options, then `mri_words` (e.g. "mri profile
// --fit 2"), then the program and its arguments; each word quoted for a
// POSIX shell where it needs it. When the program's place is unknown:
// "LAUNCHER [OPTIONS] MRI_WORDS PROGRAM [ARGS]".
std::string launch_under(const std::vector<std::string>& argv, const LauncherCommand& cmd,
                         const std::string& mri_words);

// `word` as a POSIX shell reads it back: unchanged when it holds only
// characters no shell treats specially, else in single quotes.
std::string shell_quoted(const std::string& word);

}  // namespace mri::launch

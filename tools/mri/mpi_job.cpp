// mri as one rank of a job: output names per rank, refused forms
// (mpi_job.h).
#include "mpi_job.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mri_export.h"
#include "usage.h"

namespace mri::cli {

namespace {

struct BoundOutput {
  std::string given;  // as typed, with its %r and %p
  std::string* name;  // the command's member, expanded
  bool uses_pid;      // holds %p: expanded again with the program's pid
};

// What expand() found in a name.
struct Expansion {
  std::string name;
  size_t bad = std::string::npos;  // the offset of the first % that starts no sequence
  bool uses_rank = false, uses_pid = false;
};

std::vector<BoundOutput>& bound_outputs() {
  static std::vector<BoundOutput> outputs;
  return outputs;
}

// `given` with %r, %p and %% replaced.
Expansion expand(const std::string& given, long pid) {
  const auto& job = this_job();
  Expansion e;
  for (size_t k = 0; k < given.size(); ++k) {
    if (given[k] != '%') {
      e.name += given[k];
      continue;
    }
    const char next = k + 1 < given.size() ? given[k + 1] : '\0';
    if (next == 'r') {
      e.name += std::to_string(job ? job->rank : 0);
      e.uses_rank = true;
    } else if (next == 'p') {
      e.name += std::to_string(pid);
      e.uses_pid = true;
    } else if (next == '%') {
      e.name += '%';
    } else {
      e.bad = k;
      return e;
    }
    ++k;
  }
  return e;
}

// `name` with ".%r" before its extension (cg.out -> cg.%r.out, prof ->
// prof.%r), for the message that asks for one.
std::string with_rank(const std::string& name) {
  const size_t slash = name.find_last_of('/');
  const size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1 || dot == 0)
    return name + ".%r";
  return name.substr(0, dot) + ".%r" + name.substr(dot);
}

}  // namespace

const std::optional<mri::launch::JobPlace>& this_job() {
  static const std::optional<mri::launch::JobPlace> place = [] {
    std::string problem;
    auto p = mri::launch::job_place(&problem);
    if (!problem.empty())
      std::fprintf(stderr, "mri: warning: %s: mri runs as if outside a job (%%r is 0)\n", problem.c_str());
    return p;
  }();
  return place;
}

std::string job_words() {
  const auto& job = this_job();
  if (!job) return "";
  return ", rank " + std::to_string(job->rank) + (job->size > 0 ? " of " + std::to_string(job->size) : "");
}

std::string job_prefix() {
  const auto& job = this_job();
  return job ? "rank " + std::to_string(job->rank) + ": " : "";
}

void leave_unless_first_rank(int status) {
  const auto& job = this_job();
  if (!job || job->rank == 0) return;
  // Rank 0 says it within milliseconds (the same parse); mpirun then ends
  // this rank, or it ends itself.
  ::sleep(2);
  std::exit(status);
}

void bind_job_output(const std::string& option, std::string& name) {
  if (name.empty()) return;
  const std::string given = name;
  const Expansion e = expand(given, long(::getpid()));
  if (e.bad != std::string::npos)
    usage_error(option + " " + given + ": '" + given.substr(e.bad, 2) +
                "': a % in a file name starts %r (the rank in an MPI job), %p (the program's pid) or %% (a %)");
  name = e.name;
  const auto& job = this_job();
  if (job && job->size > 1 && !e.uses_rank && !e.uses_pid && !mri::exporters::is_stream_output(name))
    usage_error(option + " " + given + ": all " + std::to_string(job->size) +
                " ranks of this job would write this one file; put %r (the rank) or %p (the pid) in its name: " +
                option + " " + with_rank(given));
  bound_outputs().push_back({given, &name, e.uses_pid});
}

void program_loaded(long pid) {
  for (const BoundOutput& b : bound_outputs())
    if (b.uses_pid) *b.name = expand(b.given, pid).name;
}

void preload_mpi_wrappers() {
  if (!this_job()) return;
#ifdef MRI_MPI_WRAPPERS
  const char* library = MRI_MPI_WRAPPERS;
  if (::access(library, R_OK) != 0) {
    std::fprintf(stderr, "mri: warning: %s: %s: MPI calls are not measured\n", library, std::strerror(errno));
    return;
  }
  const char* old = std::getenv("LD_PRELOAD");
  const std::string preload = old && *old ? std::string(old) + ":" + library : std::string(library);
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
#endif
}

void check_not_launcher(const std::vector<std::string>& program, const std::string& mri_words) {
  const auto cmd = mri::launch::launcher_command(program);
  if (!cmd) return;
  usage_error(cmd->name + " starts the ranks as processes of its own, and mri monitors the one process it starts; "
              "type instead: " + mri::launch::launch_under(program, *cmd, mri_words) +
              " (each rank under its own mri; name its files with %r)");
}

}  // namespace mri::cli

// Jobs as their launchers present them (launch.h).
#include "launch.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace mri::launch {

namespace {

// One launcher's variables: the rank's (required), the size's and the
// local rank's (nullptr: the launcher sets none).
struct Variables {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
};

constexpr std::array<Variables, 4> kVariables{{
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"PMIx", "PMIX_RANK", nullptr, nullptr},
    {"MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
}};

// A whole number from 0 to INT_MAX in decimal digits only (no sign, no
// blank): `out`, or false.
bool whole(const char* v, int& out) {
  const size_t n = std::strlen(v);
  if (n == 0 || n > 10) return false;
  long long x = 0;
  const auto [end, ec] = std::from_chars(v, v + n, x);
  if (ec != std::errc() || end != v + n || v[0] == '-' || v[0] == '+' || x > INT_MAX) return false;
  out = int(x);
  return true;
}

// Reads `name` through `env` into `out` (left alone when unset); false,
// with why in `problem`, when it is set but malformed.
bool read(const Lookup& env, const char* name, int& out, std::string* problem) {
  if (!name) return true;
  const char* v = env(name);
  if (!v) return true;
  if (whole(v, out)) return true;
  if (problem) {
    // At most 32 characters of the value: the environment may hold anything.
    std::string shown(v, strnlen(v, 32));
    *problem = std::string(name) + "='" + shown + (std::strlen(v) > 32 ? "...'" : "'") +
               " is not a whole number from 0 to " + std::to_string(INT_MAX);
  }
  return false;
}

// Launchers by basename, with the suffixes Debian's alternatives give them.
bool is_launcher(const std::string& base) {
  static constexpr std::array<const char*, 6> kNames{"mpirun", "mpiexec", "orterun", "oshrun", "prterun", "srun"};
  static constexpr std::array<const char*, 4> kSuffixes{"", ".openmpi", ".mpich", ".hydra"};
  for (const char* n : kNames)
    for (const char* s : kSuffixes)
      if (base == std::string(n) + s) return true;
  return false;
}

// How many values a launcher option takes (0: a flag or unknown). Open
// MPI 4.1's mpirun, MPICH's mpiexec and srun's short forms; a long option
// given as --name=value takes none of the words after it.
int values_of(const std::string& opt) {
  static constexpr std::array<const char*, 47> kOne{
      "-np", "-n", "--np", "-c", "-N", "--n", "-H", "-host", "--host", "-hostfile", "--hostfile", "-machinefile",
      "--machinefile", "-f", "--map-by", "-map-by", "--rank-by", "-rank-by", "--bind-to", "-bind-to", "-x",
      "-wdir", "--wdir", "-wd", "--wd", "--prefix", "-prefix", "--preload-files", "--output-filename",
      "-output-filename", "--npernode", "-npernode", "--npersocket", "-npersocket", "--cpus-per-proc",
      "--cpus-per-rank", "--path", "-path", "--stdin", "-stdin", "--timeout", "-ppn", "-genv1", "-p", "-t", "-J",
      "-w"};
  static constexpr std::array<const char*, 6> kTwo{"--mca", "-mca", "--gmca", "-gmca", "-genv", "-env"};
  if (opt.find('=') != std::string::npos && opt.rfind("--", 0) == 0) return 0;
  for (const char* o : kTwo)
    if (opt == o) return 2;
  for (const char* o : kOne)
    if (opt == o) return 1;
  return 0;
}

// Whether `word` names an executable file, as a path or a command on PATH.
bool names_program(const std::string& word) {
  if (word.find('/') != std::string::npos) return ::access(word.c_str(), X_OK) == 0;
  return !find_program(word).empty();
}

}  // namespace

std::string find_program(const std::string& word) {
  if (word.empty()) return "";
  if (word.find('/') != std::string::npos) return word;
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t at = 0; at <= dirs.size();) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    const std::string file = (end == at ? std::string(".") : dirs.substr(at, end - at)) + "/" + word;
    struct stat st;
    if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(file.c_str(), X_OK) == 0) return file;
    at = end + 1;
  }
  return "";
}

std::optional<JobPlace> job_place(std::string* problem, const Lookup& lookup) {
  const Lookup env = lookup ? lookup : Lookup([](const char* name) -> const char* { return std::getenv(name); });
  for (const Variables& v : kVariables) {
    if (!env(v.rank)) continue;
    JobPlace place;
    place.launcher = v.launcher;
    if (!read(env, v.rank, place.rank, problem) || !read(env, v.size, place.size, problem) ||
        !read(env, v.local_rank, place.local_rank, problem))
      return std::nullopt;
    if (place.size != 0 && place.rank >= place.size) {
      if (problem)
        *problem = std::string(v.rank) + "=" + std::to_string(place.rank) + " is not below " + v.size + "=" +
                   std::to_string(place.size);
      return std::nullopt;
    }
    return place;
  }
  return std::nullopt;
}

std::optional<LauncherCommand> launcher_command(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::nullopt;
  const size_t slash = argv[0].find_last_of('/');
  LauncherCommand cmd;
  cmd.name = slash == std::string::npos ? argv[0] : argv[0].substr(slash + 1);
  if (!is_launcher(cmd.name)) return std::nullopt;
  for (size_t k = 1; k < argv.size(); ++k) {
    const std::string& a = argv[k];
    if (a == "--") {
      if (k + 1 < argv.size() && names_program(argv[k + 1])) cmd.program = k + 1;
      break;
    }
    if (a.size() > 1 && a[0] == '-') {
      k += size_t(values_of(a));
      continue;
    }
    // The first word that is no option: the program, when it names one.
    if (names_program(a)) cmd.program = k;
    break;
  }
  return cmd;
}

std::string shell_quoted(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,%@") ==
          std::string::npos)
    return word;
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string launch_under(const std::vector<std::string>& argv, const LauncherCommand& cmd,
                         const std::string& mri_words) {
  std::string out;
  auto add = [&](const std::string& w) { out += (out.empty() ? "" : " ") + w; };
  if (cmd.program == 0) {
    add(shell_quoted(argv.empty() ? cmd.name : argv[0]));
    add("[OPTIONS]");
    add(mri_words);
    add("PROGRAM [ARGS]");
    return out;
  }
  for (size_t k = 0; k < cmd.program; ++k)
    if (!(argv[k] == "--" && k + 1 == cmd.program)) add(shell_quoted(argv[k]));
  add(mri_words);
  for (size_t k = cmd.program; k < argv.size(); ++k) add(shell_quoted(argv[k]));
  return out;
}

}  // namespace mri::launch

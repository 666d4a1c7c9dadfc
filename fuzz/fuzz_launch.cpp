// fuzz_launch.cpp - the launch component's readers of what a launcher or a
// user wrote (launch/launch.h): the rank variables, and a command line
// that may start a job. The input is split at NUL bytes: the first four
// pieces are the values of OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK and
// PMIX_RANK (a piece starting with 0x01 leaves that variable unset), the
// rest a command line.
//
// Invariants: a place is given only with 0 <= rank, rank < size when the
// size is given, local_rank >= -1; when none is given for a set rank
// variable, the problem names one of the variables and quotes at most 32
// characters of a value; launcher_command() points at a word of the
// command line after its name or at none; launch_under() keeps the mri
// words and, when it found the program, every word from the program on.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "launch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> pieces(1);
  for (size_t k = 0; k < size && pieces.size() < 64; ++k) {
    if (data[k] == 0) pieces.emplace_back();
    else pieces.back() += char(data[k]);
  }
  static const char* const kNames[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                                       "PMIX_RANK"};
  std::map<std::string, std::string> env;
  size_t k = 0;
  for (; k < 4 && k < pieces.size(); ++k)
    if (pieces[k].empty() || pieces[k][0] != '\x01') env[kNames[k]] = pieces[k];
  const mri::launch::Lookup lookup = [&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  std::string problem;
  const auto place = mri::launch::job_place(&problem, lookup);
  if (place) {
    CHECK(place->rank >= 0);
    CHECK(place->size >= 0);
    CHECK(place->size == 0 || place->rank < place->size);
    CHECK(place->local_rank >= -1);
    CHECK(problem.empty());
  } else if (env.count("OMPI_COMM_WORLD_RANK") || env.count("PMIX_RANK")) {
    CHECK(!problem.empty());
    CHECK(problem.rfind("OMPI_COMM_WORLD_", 0) == 0 || problem.rfind("PMIX_RANK", 0) == 0);
    // A value is quoted with at most 32 of its characters (and "..."); a
    // rank not below the size is said in numbers.
    const size_t open = problem.find("='");
    if (open != std::string::npos) {
      const size_t close = problem.rfind("' is not a whole number from 0 to 2147483647");
      CHECK(close != std::string::npos && close >= open + 2 && close - (open + 2) <= 35);
    } else {
      CHECK(problem.find(" is not below ") != std::string::npos);
    }
  } else {
    CHECK(problem.empty());
  }

  // The command line: names of no file on this machine mostly, so the
  // program's place is usually unknown; words naming a file test the rest.
  std::vector<std::string> argv(pieces.begin() + long(k), pieces.end());
  if (argv.empty()) return 0;
  if (argv.size() > 1 && argv[0].size() < 4) argv[0] = "mpirun";  // reach the option walk often
  const auto cmd = mri::launch::launcher_command(argv);
  if (!cmd) return 0;
  CHECK(cmd->program == 0 || (cmd->program >= 1 && cmd->program < argv.size()));
  const std::string words = "mri profile -o x.%r";
  const std::string line = mri::launch::launch_under(argv, *cmd, words);
  CHECK(line.find(words) != std::string::npos);
  if (cmd->program)
    for (size_t w = cmd->program; w < argv.size(); ++w)
      CHECK(line.find(mri::launch::shell_quoted(argv[w])) != std::string::npos);
  return 0;
}

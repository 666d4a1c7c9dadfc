// mri - command-line front end of the Monitoring Request Interface.
//
//   mri profile [options] -- PROGRAM [ARGS...]   per-region time profile (-o: callgrind file)
//   mri trace -o FILE [options] -- PROGRAM ...   trace archiver: VTF3 or OTF2
//   mri hist --metric EV [--data NAME] ... -- PROGRAM   cache events over addresses (CSV, SVG)
//   mri regions -- PROGRAM [ARGS...]             the program's static information
//   mri info                                     what this monitor can measure here
//
// Uses the public C API (include/mri.h), the exporters (tools/exporters)
// and, for `mri hist`, the standalone simulator's configuration functions
// (simulator/cachesim.h). One file per subcommand (commands.h); this one
// picks the subcommand and sets up what all of them share.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "mri.h"
#include "standard_streams.h"

int main(int argc, char** argv) {
  using namespace mri::cli;
  hold_closed_standard_descriptors();
  // Line by line, also into a file or a pipe: the tables (stdout) and the
  // messages (stderr) then keep their order in `mri ... > log 2>&1`.
  // (As a rank of a job too: Open MPI 4.1's mpirun merges the ranks'
  // outputs in chunks of at most 2 KiB, so a table written at once is cut
  // mid-line where a chunk ends, while lines written one by one mostly
  // stay whole: docs/user-guide.md, "MPI jobs".)
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  survive_file_size_limit();
  survive_broken_pipe();

  const std::vector<std::shared_ptr<Command>> commands{make_profile_command(), make_trace_command(),
                                                       make_hist_command(), make_regions_command(),
                                                       make_info_command()};
  std::vector<const Command*> listed;
  for (const auto& c : commands) listed.push_back(c.get());

  // mri's own options (--help, --version) up to the command's name; the
  // name and everything after it are left to the command.
  CLI::App mri("the Monitoring Request Interface's command-line tool", "mri");
  mri.prefix_command();
  mri.set_help_flag("-h,--help", "print this help and exit");
  mri.set_version_flag("--version",
                       "mri " + std::to_string(MRI_API_VERSION_MAJOR) + "." + std::to_string(MRI_API_VERSION_MINOR) +
                           " (protocol version " + std::to_string(MRI_Get_Protocol_Version()) + ")",
                       "print the version and exit");
  try {
    mri.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(overall_help(listed).c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    std::printf("%s\n", e.what());
    return 0;
  } catch (const CLI::ParseError& e) {
    usage_error(e.what());
  }
  const std::vector<std::string> rest = mri.remaining();
  if (rest.empty()) usage_error("missing command");
  if (rest[0] == "help") {
    std::fputs(overall_help(listed).c_str(), stdout);
    return 0;
  }
  for (const auto& command : commands) {
    if (command->get_name() != rest[0]) continue;
    command->parse_command_line(std::vector<std::string>(rest.begin() + 1, rest.end()));
    return end_of_output(command->run());
  }
  const bool option = rest[0].size() > 1 && rest[0][0] == '-' && rest[0] != "--";
  usage_error((option ? "unknown option '" : "unknown command '") + rest[0] + "'");
}

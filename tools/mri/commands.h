// The subcommands of `mri`, one file each (COMMAND_command.cpp): each
// declares its options, checks their values and runs. main() lists them;
// a new subcommand is one more line there.
#pragma once

#include <memory>

#include "command.h"

namespace mri::cli {

std::shared_ptr<Command> make_profile_command();  // profile_command.cpp
std::shared_ptr<Command> make_trace_command();    // trace_command.cpp
std::shared_ptr<Command> make_hist_command();     // hist_command.cpp
std::shared_ptr<Command> make_regions_command();  // regions_command.cpp
std::shared_ptr<Command> make_info_command();     // info_command.cpp

}  // namespace mri::cli

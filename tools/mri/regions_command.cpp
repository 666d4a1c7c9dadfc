// `mri regions`: loads PROGRAM, lists the regions it published at its
// start, and ends it. Status 0 (1 when an MRI call fails).
#include <cstdio>

#include "commands.h"
#include "program_run.h"
#include "region_lookup.h"

namespace mri::cli {

namespace {

class RegionsCommand : public Command {
 public:
  RegionsCommand()
      : Command("regions", {"-- PROGRAM [ARGS...]"}, "list the regions PROGRAM publishes, then end it", true) {}

  int run() override {
    char** prog = program();
    if (!prog) usage_error("regions needs a program (after --)");
    if (MRI_Init() != MRI_OK) die("init");
    load_program(prog);
    MRI_Region_Table t;
    if (MRI_Get_Regions(&t) != MRI_OK) die("regions");
    std::printf("%-28s  %-13s  %s\n", "region", "type", "location");
    for (int r = 0; r < t.nr_Elements; ++r)
      std::printf("%-28s  %-13s  %s\n", region_name(t.region[r]).c_str(), MRI_Region_Type_Name(t.region[r].type),
                  location(t.region[r]).c_str());
    if (t.nr_Elements == 0)
      std::fprintf(stderr, "mri: %s published no region at its start (it declares none, or only C++ scopes and "
                   "dlopen()ed modules, published when they first run: `mri profile` shows those)\n", prog[0]);
    // A program that ended before its first region (its arguments refused,
    // most likely): the list is still its regions, but say how it ended.
    const bool ended = MRI_No_Wait() == MRI_APPLICATION_TERMINATED;
    if (ended) MRI_Wait();  // collects the exit status
    MRI_Application_Status_Info st{};
    if (MRI_Get_Application_Status(&st) == MRI_OK) {
      warn_unmonitored(st);  // regions beyond MRI_MAX_REGIONS are not in the list
      std::string how;
      if (ended && program_end(st, how) != 0)
        std::fprintf(stderr, "mri: note: %s %s before its first region\n", prog[0], how.c_str());
    }
    MRI_Application_Finish();
    MRI_Finalize();
    return 0;
  }
};

}  // namespace

std::shared_ptr<Command> make_regions_command() { return std::make_shared<RegionsCommand>(); }

}  // namespace mri::cli

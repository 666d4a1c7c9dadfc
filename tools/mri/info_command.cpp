// `mri info`: machine facts (from hwloc or sysconf), the hardware counters
// and their source, and every runtime information with its backend,
// availability and aggregations, or the reason it is not available.
// Status 0 (1 when an MRI call fails).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.h"
#include "program_run.h"

namespace mri::cli {

namespace {

// Aggregations as "SUM MIN MAX per thread; SUM MIN per process".
std::string aggregations(MRI_Runtime_Information_Spec ri) {
  MRI_Aggregation_Table a;
  if (Get_Available_Aggregations(ri, &a) != MRI_OK) return std::string("?");
  std::string per[2];
  for (int k = 0; k < a.nr_Elements; ++k) {
    std::string& p = per[a.aggregation[k].target == MRI_PER_THREAD ? 0 : 1];
    p += std::string(p.empty() ? "" : " ") + MRI_Aggregation_Operation_Name(a.aggregation[k].operation);
  }
  std::string out;
  if (!per[0].empty()) out += per[0] + " per thread";
  if (!per[1].empty()) out += (out.empty() ? "" : "; ") + per[1] + " per process";
  return out.empty() ? std::string("none (trace requests only)") : out;
}

class InfoCommand : public Command {
 public:
  InfoCommand() : Command("info", {}, "list the runtime information, aggregations and machine facts", false) {}

  int run() override {
    if (MRI_Init() != MRI_OK) die("init");
    MRI_HW_Info hw;
    if (MRI_Get_System_Information(&hw) != MRI_OK) die("system information");
    auto count = [](int n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); };
    std::printf("machine: %s, %s, %s, %s (from %s)\n", count(hw.nr_CPUs, "CPU").c_str(),
                count(hw.nr_Cores, "core").c_str(), count(hw.nr_Sockets, "socket").c_str(),
                count(hw.nr_NUMA_Nodes, "NUMA node").c_str(), hw.topology_source);
    for (int i = 0; i < hw.nr_Cache_Levels; ++i) {
      const MRI_Cache_Info& c = hw.cache[i];
      const char* kind = c.is_data && c.is_instruction ? "unified" : c.is_data ? "data" : "instruction";
      const unsigned long long kib = 1024, mib = 1024 * kib;
      const std::string size = c.size_bytes == 0         ? "size unknown"
                               : c.size_bytes % mib == 0 ? std::to_string(c.size_bytes / mib) + " MiB"
                               : c.size_bytes % kib == 0 ? std::to_string(c.size_bytes / kib) + " KiB"
                                                         : std::to_string(c.size_bytes) + " bytes";
      const std::string line =
          c.line_size_bytes > 0 ? std::to_string(c.line_size_bytes) + "-byte lines" : "line size unknown";
      const std::string ways = c.associativity > 0   ? std::to_string(c.associativity) + "-way"
                               : c.associativity < 0 ? "fully associative"
                                                     : "associativity unknown";
      const std::string shared =
          c.shared_by_cpus > 0 ? "shared by " + count(c.shared_by_cpus, "CPU") : "sharing unknown";
      std::printf("  L%d %s cache: %s, %s, %s, %s\n", c.level, kind, size.c_str(), line.c_str(), ways.c_str(),
                  shared.c_str());
    }
    std::printf("hardware counters: %d (%s)\n", hw.nr_Hardware_Counters, hw.counter_source);
    if (std::strstr(hw.counter_source, "; no CPU PMU"))
      std::printf("  (as PAPI's tables have them: the kernel has no CPU PMU here, a virtual machine without one most\n"
                  "  likely, so no CPU event can be counted, only the kernel's software events)\n");
    std::printf("time entity: nanoseconds\n\n");
    MRI_Runtime_Information_Table t;
    if (Get_Available_Runtime_Information(&t) != MRI_OK) die("runtime information");
    size_t width = 20;
    for (int i = 0; i < t.nr_Elements; ++i) width = std::max(width, std::strlen(t.info[i].name));
    std::printf("%-*s  %-9s  %-9s  %s\n", int(width), "runtime information", "backend", "available",
                "aggregations, or why not available");
    for (int i = 0; i < t.nr_Elements; ++i) {
      const MRI_Runtime_Information_Info& r = t.info[i];
      std::printf("%-*s  %-9s  %-9s  %s\n", int(width), r.name, r.backend, r.available ? "yes" : "no",
                  r.available ? aggregations(r.ri).c_str() : r.reason);
    }
    std::printf("\ncounter events count against the counter budget: at most 8 distinct events at once, fewer\n"
                "when the CPU has fewer counters or MRI_COUNTER_BUDGET says so; EXECUTION_TIME and\n"
                "NUMBER_OF_INSTANCES need no counter.\n");
    MRI_Finalize();
    return 0;
  }
};

}  // namespace

std::shared_ptr<Command> make_info_command() { return std::make_shared<InfoCommand>(); }

}  // namespace mri::cli

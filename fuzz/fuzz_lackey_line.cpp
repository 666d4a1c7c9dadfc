// The lackey trace reader of the replay tool (tools/cachesim): every line
// of a user's trace through parse_lackey_line (simulator/config.cpp), and
// the references it accepts, which the tool has not refused as running
// past the end of the address space, simulated on a small hierarchy with
// an I1, as the tool simulates them.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "cachesim.h"
#include "fuzz_check.h"

namespace {

mri::sim::Hierarchy& hierarchy() {
  static std::unique_ptr<mri::sim::Hierarchy> h = [] {
    mri::sim::HierarchyConfig config;
    std::string error = mri::sim::parse_config("I1:1K,2,64;L1:1K,2,64;L2:4K,4,64", config);
    auto made = error.empty() ? mri::sim::Hierarchy::create(config, &error) : nullptr;
    if (!made) broken(error.c_str());
    return made;
  }();
  return *h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    const std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
    mri::sim::Access access{};
    std::string error;
    const int r = mri::sim::parse_lackey_line(line, &access, &error);
    if (r < 0) {
      if (error.empty() || error.find('\n') != std::string::npos) broken("a refusal without a one-line reason");
      continue;
    }
    if (r == 0) continue;
    if (r != 1 || access.size < 1 || access.size > 4096) broken("an accepted reference of a size outside 1..4096");
    if (access.size - 1 > UINT64_MAX - access.addr) continue;  // the tool refuses it (mri_cachesim.cpp)
    hierarchy().simulate(0, &access, 1);
  }
  return 0;
}

// test_sources.h - the list of sources the plan compiler's unit tests link
// in place of libmonitor's source_list.cpp: the core's own sources (time,
// instances, region events), the real counter source and two fake ones
// whose behaviour each test sets.
#pragma once

#include <string>
#include <vector>

#include "source.h"

namespace mri::monitor::testing {

// A reading source for proto::Metric kFakeReadingMetric (or the second
// one): every request names one reading by its event field; `refuse`
// refuses every request with that reason (not corrupt).
inline constexpr uint32_t kFakeReadingMetric = 100;
inline constexpr uint32_t kSecondReadingMetric = 101;
struct FakeReadings {
  std::vector<std::string> names;
  const char* refuse = nullptr;
};
FakeReadings& fake_readings();
FakeReadings& second_readings();

}  // namespace mri::monitor::testing

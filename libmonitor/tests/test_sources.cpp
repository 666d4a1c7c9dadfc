// test_sources.cpp - see test_sources.h.
#include "test_sources.h"

#include "mri_monitor.h"

#include <cstring>
#include <iterator>

namespace mri::monitor {

extern const MeasurementSource time_source;
extern const MeasurementSource instances_source;
extern const MeasurementSource region_events_source;
extern const MeasurementSource papi_source;

namespace testing {
namespace {

template <FakeReadings& (*state)(), uint32_t kMetric>
struct Fake {
  static bool measures(uint32_t metric) { return metric == kMetric; }
  static void begin_release(const ReleaseContext&) { state().names.clear(); }
  static Claim claim(const RequestInput& request, const ReleaseContext&) {
    Claim c;
    c.kind = ValueKind::kReading;
    if (state().refuse) {
      c.refused = state().refuse;
      return c;
    }
    const std::string name(request.record.event, strnlen(request.record.event, sizeof request.record.event));
    uint32_t i = 0;
    while (i < state().names.size() && state().names[i] != name) ++i;
    if (i == state().names.size()) state().names.push_back(name);
    c.reading = uint16_t(i);
    return c;
  }
  static const std::vector<std::string>& reading_names() { return state().names; }
};

FakeReadings g_fake, g_second;

// A source that measures cache events itself (as the cache simulator does).
bool owned_measures(uint32_t metric) { return metric == uint32_t(proto::Metric::kCacheEvent); }

}  // namespace

FakeReadings& fake_readings() { return g_fake; }
FakeReadings& second_readings() { return g_second; }

using FakeA = Fake<fake_readings, kFakeReadingMetric>;
using FakeB = Fake<second_readings, kSecondReadingMetric>;
const MeasurementSource fake_a{.name = "fake readings",
                               .measures = FakeA::measures,
                               .kind = ValueKind::kReading,
                               .begin_release = FakeA::begin_release,
                               .claim = FakeA::claim,
                               .reading_names = FakeA::reading_names};
const MeasurementSource fake_b{.name = "second fake readings",
                               .measures = FakeB::measures,
                               .kind = ValueKind::kReading,
                               .begin_release = FakeB::begin_release,
                               .claim = FakeB::claim,
                               .reading_names = FakeB::reading_names};
const MeasurementSource fake_owned{.name = "fake owned", .measures = owned_measures, .kind = ValueKind::kOwned};

}  // namespace testing

MRI_SOURCE_LIST(&time_source, &instances_source, &region_events_source, &papi_source, &testing::fake_a,
                &testing::fake_b, &testing::fake_owned);

}  // namespace mri::monitor

// plan.cpp includes mri_monitor.h (through monitor_internal.h), whose
// every translation unit registers its module's regions at start-up: this
// test program has none and no monitor to register them with.
extern "C" void Monitor_Register_Regions(Monitor_Region_Descriptor*, Monitor_Region_Descriptor*) {}
extern "C" void Monitor_Unregister_Module(const void*) {}

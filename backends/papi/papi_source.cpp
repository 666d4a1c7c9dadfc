// papi_source.cpp - counter events through PAPI as a measurement source of
// the MCC (kReading, libmonitor/sdk/source.h).
//
// Every thread counts every event of the current counter requests in one
// event set of its own (PAPI counts per thread; only the owning thread may
// build or read it), built at the thread's first event after the list
// changed. PAPI is initialised at the first release that has a counter
// request, so time-only sessions never pay for it; when it cannot be, the
// counter requests are refused with the reason and time requests go on.
#include <cstring>
#include <string>
#include <vector>

#include "mri_papi.h"
#include "source.h"

namespace mri::monitor {
namespace {

static_assert(papi::kMaxEvents <= kMaxReadings, "a frame must hold every event a thread counts");

// The events of the release being compiled, then in force (control
// thread; the application's threads read them only while they are parked
// or after the release published them).
std::vector<std::string>* g_events = new std::vector<std::string>;
enum class Init { kNotYet, kOk, kFailed };
Init g_init = Init::kNotYet;
std::string* g_init_error = new std::string;

bool measures(uint32_t metric) { return metric == uint32_t(proto::Metric::kCounter); }

void begin_release(const ReleaseContext&) { g_events->clear(); }

Claim claim(const RequestInput& request, const ReleaseContext&) {
  const proto::RequestRecord& rec = request.record;
  Claim c;
  c.kind = ValueKind::kReading;
  // The event name: terminated inside its field, printable, not empty.
  const size_t len = strnlen(rec.event, sizeof rec.event);
  bool ok = len > 0 && len < sizeof rec.event;
  for (size_t i = 0; ok && i < len; ++i) ok = rec.event[i] > ' ' && rec.event[i] < 127;
  if (!ok) {
    c.refused = "bad counter event name";
    c.corrupt = true;
    return c;
  }
  const std::string name(rec.event, len);
  size_t e = 0;
  while (e < g_events->size() && (*g_events)[e] != name) ++e;
  const bool new_event = e == g_events->size() && !(rec.flags & proto::kRequestPaused);  // a paused request counts nothing
  if (new_event && g_events->size() >= papi::kMaxEvents) {
    c.refused = "more counter events than the budget";  // the tool enforces the budget: not its record
    c.corrupt = true;
    return c;
  }
  if (g_init == Init::kNotYet) {
    std::string why;
    g_init = papi::init(why) ? Init::kOk : Init::kFailed;
    if (g_init == Init::kFailed) *g_init_error = "counter requests rejected: " + why;
  }
  if (g_init == Init::kFailed) {
    c.refused = g_init_error->c_str();
    return c;
  }
  if (new_event) g_events->push_back(name);
  c.reading = uint16_t(e);
  return c;
}

const std::vector<std::string>& reading_names() { return *g_events; }

bool prepare_thread(void*& state, std::string& why) {
  if (!state) {
    if (g_events->empty()) return true;  // nothing to count, nothing held
    state = new papi::EventSet;
  }
  return papi::build(*static_cast<papi::EventSet*>(state), *g_events, why);
}

bool read(void* state, int64_t* out) {
  const auto* set = static_cast<const papi::EventSet*>(state);
  if (!set || set->n == 0) return false;
  long long values[papi::kMaxEvents];
  if (!papi::read(*set, values)) return false;
  for (uint32_t e = 0; e < set->n; ++e) out[e] = values[e];
  return true;
}

void release_thread(void*& state) {
  auto* set = static_cast<papi::EventSet*>(state);
  if (set->n) {
    papi::destroy(*set);
    papi::unregister_thread();
  }
  delete set;
  state = nullptr;
}

}  // namespace

extern const MeasurementSource papi_source{
    .name = "PAPI counters",
    .measures = measures,
    .kind = ValueKind::kReading,
    .begin_release = begin_release,
    .claim = claim,
    .compile_owned = nullptr,
    .reading_names = reading_names,
    .prepare_thread = prepare_thread,
    .read = read,
    .release_thread = release_thread,
};

}  // namespace mri::monitor

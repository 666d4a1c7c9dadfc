// mri_api.cpp - the Monitoring Request Interface entry points (include/mri.h).
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "mri.h"
#include "mri_sync.h"
#include "mri_text.h"
#include "mri_papi.h"
#include "tool_internal.h"

namespace mri::tool {

Session s;

namespace {
thread_local std::string t_error;

// A profile's compensated sum: the application adds each instance's
// compensated time unclamped, modulo 2^64 (libmonitor's accumulate), so
// that compensated times add up; the sum is signed, negative where the
// estimated overhead exceeded the measured time. Reported clamped at 0.
double signed_sum(uint64_t sum) { return double(int64_t(sum)); }

bool same_region(const MRI_Region_Spec& a, const MRI_Region_Spec& b) {
  return raw(a.type) == raw(b.type) && a.id.file_ID == b.id.file_ID && a.id.line_NR == b.id.line_NR;
}

bool region_type_valid(const MRI_Region_Spec& r) { return raw(r.type) >= 0 && raw(r.type) < MRI_REGION_TYPE_COUNT; }

// The index of the first element of `table` (s.regions or s.files) that
// `match` accepts, or -1. Not found, the static information is read again
// first: it may have been published since we last looked (a region that
// registers at its first execution, and its file).
template <class Table, class Match>
int published_index(const Table& table, Match match) {
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < table.size(); ++i)
      if (match(table[i])) return int(i);
    if (pass == 0 && refresh_static_information() != MRI_OK) return -1;
  }
  return -1;
}

int region_index(const MRI_Region_Spec& spec) {
  return published_index(s.regions, [&](const auto& r) { return same_region(r.spec, spec); });
}

// The id of the source file called `name` in this run, or -1.
int file_id_named(const std::string& name) {
  return published_index(s.files, [&](const std::string& f) { return f == name; });
}

// The name of file `id` in this run ("" when there is none): what a
// request keeps of the files it names, since ids are the program's own.
std::string file_name_of(int id) { return id >= 0 && size_t(id) < s.files.size() ? s.files[size_t(id)] : ""; }

std::string describe_region(const MRI_Region_Spec& r) {
  char text[160];
  if (!region_type_valid(r)) {
    std::snprintf(text, sizeof text, "region of unknown type %d", raw(r.type));
    return text;
  }
  const char* file = (r.id.file_ID >= 0 && size_t(r.id.file_ID) < s.files.size())
                         ? s.files[r.id.file_ID].c_str()
                         : "?";
  std::snprintf(text, sizeof text, "%s region at file %d (%s) line %d", MRI_Region_Type_Name(r.type),
                r.id.file_ID, file, r.id.line_NR);
  return text;
}

bool ri_known(int ri) {
  switch (ri) {
    case MRI_EXECUTION_TIME: case MRI_NUMBER_OF_INSTANCES: case MRI_REGION_EVENT:
      return true;
    default:
      return is_counter(ri) || is_cache_event(ri);
  }
}

// Checks what all four request kinds share. Needs mu held.
int check_common(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions, MRI_Active_Object_Table* ao,
                 MRI_Data_Structure_Table* variables, bool regions_may_be_empty, Request& out) {
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!ri) return fail("runtime information pointer is NULL");
  if (!ri_known(raw(*ri)))
    return fail("unknown runtime information %d (see Get_Available_Runtime_Information())", raw(*ri));
  if (!s.loaded)
    return fail("no application loaded: call MRI_Application_Load() first, its regions are not known yet");
  out.ri = *ri;
  if (regions) {
    if (regions->nr_Elements < 0) return fail("region table has a negative nr_Elements (%d)", regions->nr_Elements);
    if (regions->nr_Elements > 0 && !regions->region)
      return fail("region table has %d elements but a NULL region pointer", regions->nr_Elements);
    for (int i = 0; i < regions->nr_Elements; ++i) {
      const MRI_Region_Spec& r = regions->region[i];
      if (!region_type_valid(r)) return fail("region table element %d: unknown region type %d", i, raw(r.type));
      if (region_index(r) < 0)
        return fail("region table element %d: the application has no %s (see MRI_Get_Regions())", i,
                    describe_region(r).c_str());
      out.regions.push_back(r);
      out.region_files.push_back(file_name_of(r.id.file_ID));
    }
  }
  if (out.regions.empty() && !regions_may_be_empty)
    return fail("the region table is empty: name at least one region");
  if (ao) {
    // One check for every request kind: each thread at most once, and
    // either the process (every thread) or threads, so that a request's
    // results list exactly the active objects it named.
    const uint32_t max_threads = s.view.g.max_threads;
    if (ao->nr_Elements < 0) return fail("active object table has a negative nr_Elements (%d)", ao->nr_Elements);
    if (ao->nr_Elements > 0 && !ao->active_object)
      return fail("active object table has %d elements but a NULL pointer", ao->nr_Elements);
    if (uint32_t(ao->nr_Elements) > max_threads)
      return fail("active object table has %d elements: at most %u, one per thread the application monitors "
                  "(MRI_MAX_THREADS), or the process alone", ao->nr_Elements, max_threads);
    std::vector<int> element_of_thread(max_threads, -1);
    int process_element = -1, first_thread_element = -1;
    for (int i = 0; i < ao->nr_Elements; ++i) {
      const MRI_Active_Object_Spec& a = ao->active_object[i];
      const int type = raw(a.type);
      if (type == MRI_THREAD) {
        if (a.id < 0 || uint32_t(a.id) >= max_threads)
          return fail("active object %d: thread id %d out of range (0..%u)", i, a.id, max_threads - 1);
        if (element_of_thread[size_t(a.id)] >= 0)
          return fail("active object %d: thread %d is named twice (also element %d); name each thread once", i, a.id,
                      element_of_thread[size_t(a.id)]);
        element_of_thread[size_t(a.id)] = i;
        if (first_thread_element < 0) first_thread_element = i;
      } else if (type == MRI_PROCESS) {
        if (a.id != s.pid)
          return fail("active object %d: process %d is not the application (pid %d)", i, a.id, int(s.pid));
        if (process_element >= 0)
          return fail("active object %d: the process is named twice (also element %d); name it once", i,
                      process_element);
        process_element = i;
      } else if (type == MRI_NODE) {
        return fail("active object %d: node-level monitoring is not available (single-node monitor)", i);
      } else {
        return fail("active object %d: unknown type %d", i, type);
      }
      if (process_element >= 0 && first_thread_element >= 0)
        return fail("active objects %d and %d: the table names the process, which stands for every thread, and a "
                    "thread; name either the process or threads", std::min(process_element, first_thread_element),
                    std::max(process_element, first_thread_element));
      out.active_objects.push_back(a);
    }
  }
  if (variables) {
    if (variables->nr_Elements < 0) return fail("data structure table has a negative nr_Elements");
    if (variables->nr_Elements > 1) return fail("at most one data structure per request (section 3.1)");
    if (variables->nr_Elements == 1) {
      if (raw(*ri) == MRI_EXECUTION_TIME || raw(*ri) == MRI_NUMBER_OF_INSTANCES)
        return fail("a data structure cannot restrict %s: only cache events have addresses",
                    MRI_Runtime_Information_Name(*ri));
      if (!variables->data_structure) return fail("data structure table has 1 element but a NULL pointer");
      out.data_index = data_structure_index(variables->data_structure[0]);
      if (out.data_index < 0) return MRI_Error;
      out.data_name = s.data[size_t(out.data_index)].name;
      out.data_unit = s.data[size_t(out.data_index)].spec.id;
      out.data_file = file_name_of(out.data_unit.file_ID);
    }
  }
  // Cache events of an application with the cache simulator are simulated
  // (histogram.cpp); data structures and hits need it.
  if ((is_cache_event(raw(*ri)) || out.data_index >= 0) && check_cache_request(out, out.data_index >= 0) != MRI_OK)
    return MRI_Error;
  if (!out.simulated && is_counter(raw(*ri))) {
    out.event = event_of(raw(*ri));
    if (out.event.size() >= proto::kEventNameBytes)
      return fail("event name \"%s\" is longer than the monitor takes (%u characters)", out.event.c_str(),
                  proto::kEventNameBytes - 1);
    std::string why;
    switch (papi::check_event(out.event, why)) {
      case papi::EventCheck::kOk:
        break;
      case papi::EventCheck::kUnknown:
        return fail("runtime information %s: %s", MRI_Runtime_Information_Name(*ri), why.c_str());
      case papi::EventCheck::kUnavailable:
        return fail("runtime information %s is not available on this machine: %s", MRI_Runtime_Information_Name(*ri),
                    why.c_str());
    }
  }
  return MRI_OK;
}

MRI_Request_ID add_request(Request&& r) {
  r.id = s.next_id++;
  if (place_request(r) != MRI_OK) {
    --s.next_id;
    return MRI_Error;
  }
  MRI_Request_ID id = r.id;
  s.requests.emplace(id, std::move(r));
  clear_error();
  return id;
}

// One command slot: a command must be acted on before the next replaces
// it (e.g. MRI_Stop right after MRI_Start). Waits for the acknowledgement
// of the previous one, at most 2 s (the application may be busy outside
// monitored code; then the newer command wins).
// Returns whether the application acknowledged the last command (false:
// it did not within 2 s, or it ended).
bool await_ack() {
  const proto::AppControl& a = s.view.header()->app;
  const uint64_t deadline = sync::monotonic_ns() + 2'000'000'000ull;
  for (;;) {
    const uint32_t seq = sync::load(a.status_seq);
    if (!(seq & 1) && sync::load(a.ack_cmd_seq) == s.last_cmd_seq) return true;
    if ((seq & 1) && s.status_stuck && seq == s.stuck_seq) return false;  // no acknowledgement can be read
    if (child_exited() || sync::monotonic_ns() > deadline) return false;
    sync::futex_wait_shared(const_cast<uint32_t*>(&a.status_seq), seq, 5'000'000);
  }
}

// A release (MRI_Start, MRI_Start_Stop) that the application never took
// and a later command replaced: it is not an iteration. Its number goes
// back, and so does every request's record that it measured that
// iteration (counter rotation follows the number at the next release).
void withdraw_release() {
  for (auto& [id, r] : s.requests)
    if (!r.measured.empty() && r.measured.back() == s.iteration) {
      r.measured.pop_back();
      r.measured_restarted = true;  // no longer only grown: hand_out_measured() copies it whole
    }
  --s.iteration;
}

void send_command(proto::Command cmd, int32_t breakpoint) {
  if (!await_ack() && s.last_cmd == proto::Command::kRun && !child_exited()) withdraw_release();
  s.last_cmd = cmd;
  proto::ToolControl& tc = s.view.header()->tool;
  sync::store(tc.cmd, uint32_t(cmd));
  sync::store(tc.breakpoint, breakpoint);
  s.last_cmd_seq = sync::bump(tc.cmd_seq);
  sync::futex_wake_shared(&tc.cmd_seq);
}

// MRI_Wait and MRI_Wait_Timeout (`name`). Refused in the trace call-back:
// it runs on the collector thread, the one that makes room in the rings, so
// the application's threads would fill them, wait MRI_TRACE_WAIT_MS for
// room and then discard records, all the while this waited for them.
int wait_status(const char* name, int64_t timeout_ms) {
  if (trace_in_callback())
    return fail("%s cannot be called from the trace call-back: the call-back runs on the thread that moves the trace "
                "records, so the application would wait for room (MRI_TRACE_WAIT_MS) and then discard records; ask "
                "with MRI_No_Wait(), or wait in another thread",
                name);
  const uint64_t deadline =
      timeout_ms < 0 ? UINT64_MAX : sync::monotonic_ns() + uint64_t(timeout_ms) * 1000000ull;
  for (;;) {
    proto::View v;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (!s.initialized) return fail("MRI_Init() has not been called");
      if (!s.loaded) return fail("no application loaded");
      v = s.view;
    }
    const uint32_t seq = sync::load(v.header()->app.status_seq);
    MRI_Application_Status st;
    if (readable_status(&st) != MRI_OK) return MRI_Error;
    if (st != MRI_APPLICATION_RUNNING) {
      if (st == MRI_APPLICATION_TERMINATED) {
        if (ended_at_exec(snapshot().reason)) {
          // Monitoring ended at an exec(); the process runs the new image
          // until it ends (or the caller's timeout).
          const uint64_t now = sync::monotonic_ns();
          await_exit_status(deadline == UINT64_MAX ? -1 : int(deadline > now ? (deadline - now) / 1000000ull : 0));
        }
        await_exit_status(2000);
        trace_await_end(-1);  // every trace record delivered first (mri.h)
      }
      clear_error();
      return st;
    }
    const uint64_t now = sync::monotonic_ns();
    if (now >= deadline) {
      clear_error();
      return MRI_APPLICATION_RUNNING;
    }
    const uint64_t left = deadline - now;
    sync::futex_wait_shared(&v.header()->app.status_seq, seq, long(std::min<uint64_t>(left, 20'000'000)));
  }
}

}  // namespace

int fail(const char* fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  // Messages carry text from the segment (names, the monitor's reasons)
  // and from the tool's own arguments: one line, no control character for
  // the terminal that shows it.
  t_error = text::printable(text);
  return MRI_Error;
}

void clear_error() { t_error.clear(); }

bool is_serial_region_type(MRI_Region_Type type) {
  return type == MRI_REGION_PROGRAM || type == MRI_REGION_ROUTINE || type == MRI_REGION_LOOP ||
         type == MRI_REGION_BLOCK;
}

// A consistent copy of the application's status fields (they change
// between an odd and an even status_seq). A word that stays odd beyond
// the retry (1000 yields, then 2 s) while the program lives marks the
// run's status stuck at that value (Session::status_stuck): a later read
// that finds the same value gives up at once, one that finds another odd
// value after the yields, so no call waits the 2 s again (each of them
// did: ten MRI_No_Wait() took 20 s).
AppSnapshot snapshot() {
  const proto::AppControl& a = s.view.header()->app;
  AppSnapshot snap{};
  uint64_t give_up = 0;
  for (int attempt = 0;; ++attempt) {
    const uint32_t seq = sync::load(a.status_seq);
    if (seq & 1) {  // being written: a few instructions, unless the writer died or was frozen
      if (s.status_stuck && seq == s.stuck_seq) {
        snap.torn = true;
        break;
      }
      if (attempt < 1000) {
        sched_yield();
        continue;
      }
      if (give_up == 0) give_up = sync::monotonic_ns() + 2'000'000'000ull;
      if (s.status_stuck || child_exited()) {
        snap.torn = true;
        break;
      }
      if (sync::monotonic_ns() > give_up) {
        s.stuck_seq = seq;
        s.status_stuck = true;
        snap.torn = true;
        break;
      }
      usleep(1000);
      continue;
    }
    snap.state = sync::load(a.state);
    snap.ack = sync::load(a.ack_cmd_seq);
    snap.reason = sync::load(a.stop_reason);
    snap.region = sync::load(a.stop_region);
    snap.stops = sync::load(a.stops);
    snap.threads_dropped = sync::load(a.threads_dropped);
    snap.regions_dropped = sync::load(a.regions_dropped);
    snap.unmatched_exits = sync::load(a.unmatched_exits);
    snap.bad_requests = sync::load(a.bad_requests);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (seq == sync::load(a.status_seq)) break;
  }
  return snap;
}

MRI_Application_Status status_of(const AppSnapshot& snap) {
  if (snap.state == uint32_t(proto::AppState::kTerminated)) return MRI_APPLICATION_TERMINATED;
  // A wrapper that started the monitored program without exec() may end
  // first: until the program ends too (or publishes its end), its results
  // are still coming.
  if (child_exited() && !monitored_below()) return MRI_APPLICATION_TERMINATED;
  if (snap.torn) return MRI_APPLICATION_RUNNING;  // alive but frozen mid-update: not stopped for us
  if (snap.state == uint32_t(proto::AppState::kStopped) && snap.ack == s.last_cmd_seq) return MRI_APPLICATION_STOPPED;
  return MRI_APPLICATION_RUNNING;
}

MRI_Application_Status current_status() {
  if (!s.loaded) return MRI_APPLICATION_NOT_LOADED;
  return status_of(snapshot());
}

static int status_stuck_error() {
  return fail("the application's status cannot be read: its status word has stayed odd (mid-update) for more than "
              "2 s while the program lives (frozen inside an update, or a corrupt segment); "
              "MRI_Application_Finish() ends it");
}

int readable_status(MRI_Application_Status* st) {
  if (!s.loaded) {
    *st = MRI_APPLICATION_NOT_LOADED;
    return MRI_OK;
  }
  const AppSnapshot snap = snapshot();
  *st = status_of(snap);
  if (snap.torn && s.status_stuck && *st != MRI_APPLICATION_TERMINATED) return status_stuck_error();
  return MRI_OK;
}

// Whether a trace request may take request record `slot`: no deleted
// trace request's records can be delivered with its runtime information
// any more. They cannot come once the application has stopped or ended
// after the deletion took effect (the release after it, or at once when
// it was stopped then), and have all been taken. Needs mu.
static bool trace_slot_drained(int slot) {
  auto it = s.trace_draining.find(slot);
  if (it == s.trace_draining.end()) return true;
  const MRI_Application_Status st = current_status();
  const bool over = st == MRI_APPLICATION_TERMINATED ||
                    (st == MRI_APPLICATION_STOPPED && (it->second.stopped || s.iteration > it->second.iteration));
  if (!over || trace_slot_has_records(slot)) return false;
  s.trace_draining.erase(it);
  return true;
}

int place_request(Request& r) {
  if (!s.loaded || !s.view.base) return fail("no application loaded");
  if (r.simulated || !r.data_name.empty()) {  // a rerun: the table and the backend are the new run's
    if (!application_has_cache_simulator())
      return fail("this run of the application is not built with the cache-simulator backend");
    if (!r.data_name.empty()) {
      // Its unit's file by name, as the regions' below.
      if (!r.data_file.empty()) {
        const int file = file_id_named(r.data_file);
        if (file < 0)
          return fail("the application has no data structure \"%s\" (this program has no source file %s, where it "
                      "was registered)", r.data_name.c_str(), r.data_file.c_str());
        r.data_unit.file_ID = file;
      }
      const MRI_Data_Structure_Spec spec{r.data_unit, r.data_name.c_str()};
      r.data_index = data_structure_index(spec);
      if (r.data_index < 0) return MRI_Error;
    }
  }
  // Each region's file by its name in this run's file table (the same id
  // when it is the run the request was made in).
  for (size_t k = 0; k < r.regions.size() && k < r.region_files.size(); ++k) {
    const int file = file_id_named(r.region_files[k]);
    if (file < 0)
      return fail("the application has no %s region at %s line %d (this program has no such source file)",
                  MRI_Region_Type_Name(r.regions[k].type), r.region_files[k].c_str(), r.regions[k].id.line_NR);
    r.regions[k].id.file_ID = file;
  }
  for (const auto& spec : r.regions)
    if (region_index(spec) < 0)
      return fail("the application has no %s", describe_region(spec).c_str());
  // Round robin, not the lowest free slot: a request's records name its
  // slot, and a trace request's records may still be in the rings or the
  // buffer when it is deleted. A trace request never takes the slot of a
  // deleted one while any of its records may come (trace_slot_drained):
  // they would be delivered with the new request's runtime information.
  // (Round robin alone let that happen once the other slots were taken:
  // REGION_EVENT records delivered as EXECUTION_TIME values of 1 and 2.)
  int slot = -1, draining = 0;
  for (size_t k = 0; k < s.slot_busy.size(); ++k) {
    const size_t i = (s.next_slot + k) % s.slot_busy.size();
    if (s.slot_busy[i]) continue;
    if (r.kind == MRI_TRACE_REQUEST && !trace_slot_drained(int(i))) {
      ++draining;
      continue;
    }
    slot = int(i);
    s.next_slot = i + 1;
    break;
  }
  if (slot < 0 && draining > 0)
    return fail("too many requests: at most %u at a time, and the %d free request record%s still hold%s trace records "
                "of deleted trace requests: take them (MRI_Get_Trace_Records) while the application is stopped, or "
                "delete another request first", s.view.g.max_requests, draining, draining == 1 ? "" : "s",
                draining == 1 ? "s" : "");
  if (slot < 0) return fail("too many requests: at most %u at a time; delete some first", s.view.g.max_requests);
  int slice = -1;
  int histogram = -1;  // histogram slot (simulated cache events)
  if (r.kind == MRI_HISTOGRAM_REQUEST) {
    for (size_t i = 0; i < s.histogram_busy.size(); ++i)
      if (!s.histogram_busy[i]) {
        histogram = int(i);
        break;
      }
    if (histogram < 0)
      return fail("too many histogram requests: at most %u at a time; delete one first", proto::kMaxHistograms);
  }
  if (r.kind == MRI_PROFILE_REQUEST) {
    for (size_t i = 0; i < s.slice_busy.size(); ++i)
      if (!s.slice_busy[i]) {
        slice = int(i);
        break;
      }
    if (slice < 0)
      return fail("too many profile requests: at most %u at a time; delete one first", s.view.g.max_profile_slices);
  }
  proto::RequestRecord* rec = s.view.request(uint32_t(slot));
  uint64_t* bits = s.view.request_bitmap(uint32_t(slot));
  const uint32_t words = proto::bitmap_words(s.view.g);
  std::fill(bits, bits + words, 0);
  if (r.regions.empty()) {
    for (size_t i = 0; i < s.regions.size(); ++i) bits[i / 64] |= 1ull << (i % 64);
  } else {
    for (const auto& spec : r.regions) {
      const int i = region_index(spec);
      bits[i / 64] |= 1ull << (i % 64);
    }
  }
  rec->kind = r.kind == MRI_PROFILE_REQUEST     ? uint32_t(proto::RequestKind::kProfile)
              : r.kind == MRI_TRACE_REQUEST   ? uint32_t(proto::RequestKind::kTrace)
              : r.kind == MRI_HISTOGRAM_REQUEST ? uint32_t(proto::RequestKind::kHistogram)
                                              : uint32_t(proto::RequestKind::kAggregate);
  if (r.simulated) {
    proto::CacheRequestRecord* c = s.view.cache_request(uint32_t(slot));
    c->event = r.cache_event;
    c->data_index = r.data_index < 0 ? 0 : uint32_t(r.data_index) + 1;
    c->bins = r.kind == MRI_HISTOGRAM_REQUEST ? uint32_t(r.bins) : 0;
    c->histogram = histogram < 0 ? 0 : uint32_t(histogram);
  }
  rec->metric = r.simulated                     ? uint32_t(proto::Metric::kCacheEvent)
                : !r.event.empty()              ? uint32_t(proto::Metric::kCounter)
                : r.ri == MRI_NUMBER_OF_INSTANCES ? uint32_t(proto::Metric::kInstances)
                : r.ri == MRI_REGION_EVENT        ? uint32_t(proto::Metric::kRegionEvent)
                                                  : uint32_t(proto::Metric::kExecutionTime);
  std::memset(rec->event, 0, sizeof rec->event);
  std::memcpy(rec->event, r.event.data(), std::min(r.event.size(), sizeof rec->event - 1));
  rec->profile_slice = slice < 0 ? 0 : uint32_t(slice);
  rec->flags = r.regions.empty() ? proto::kRequestAllRegions : 0;
  if (r.callpath) rec->flags |= proto::kRequestCallpath;
  if (!r.compensate) rec->flags |= proto::kRequestNoCompensation;
  if (!r.subregions) rec->flags |= proto::kRequestNoSubregions;
  if (r.unwind) rec->flags |= proto::kRequestUnwind;
  if (r.kind == MRI_TRACE_REQUEST) {
    // Threads named in the active-object table (the process means all).
    bool all = r.active_objects.empty();
    for (const auto& a : r.active_objects) all |= a.type == MRI_PROCESS;
    uint64_t* mask = s.view.request_threads(uint32_t(slot));
    std::fill(mask, mask + proto::kThreadMaskWords, 0);
    if (!all) {
      for (const auto& a : r.active_objects) mask[uint32_t(a.id) / 64] |= 1ull << (uint32_t(a.id) % 64);
      rec->flags |= proto::kRequestThreadFilter;
    }
    trace_note_slot(slot, int(r.ri), r.data_index >= 0 ? &s.data[size_t(r.data_index)].spec : nullptr);
  }
  r.generation = rec->generation + 1;
  sync::store(rec->generation, r.generation);
  sync::store(rec->state, uint32_t(proto::RequestState::kActive));
  s.slot_busy[slot] = 1;
  if (slice >= 0) s.slice_busy[slice] = 1;
  if (histogram >= 0) s.histogram_busy[histogram] = 1;
  r.slot = slot;
  r.slice = slice;
  r.histogram = histogram;
  if (r.kind == MRI_TRACE_REQUEST) trace_start_collector();
  return MRI_OK;
}

void unplace_request(Request& r) {
  if (r.kind == MRI_TRACE_REQUEST && r.slot >= 0 && s.view.base)
    s.trace_draining[r.slot] = {s.iteration, current_status() != MRI_APPLICATION_RUNNING};
  if (r.slot >= 0 && s.view.base) {
    sync::store(s.view.request(uint32_t(r.slot))->state, uint32_t(proto::RequestState::kFree));
    s.slot_busy[r.slot] = 0;
    if (r.slice >= 0) s.slice_busy[r.slice] = 0;
    if (r.histogram >= 0) s.histogram_busy[r.histogram] = 0;
  }
  r.slot = -1;
  r.slice = -1;
  r.histogram = -1;
}

bool read_thread_consistent(uint32_t thread, const std::function<void()>& copy) {
  const uint32_t& seq = s.view.row_head(thread)->seq;
  for (int attempt = 0; attempt < 10000; ++attempt) {
    const uint32_t a = sync::load(seq);
    if (a & 1) {
      if (attempt > 100 && child_exited()) break;  // died mid-update: take what is there
      if (attempt > 100) usleep(10);
      continue;
    }
    copy();
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sync::load(seq) == a) return true;
  }
  copy();
  return false;
}

std::vector<MRI_Aggregation_Spec> aggregations_for(MRI_Runtime_Information_Spec ri) {
  std::vector<MRI_Aggregation_Spec> out;
  if (ri == MRI_EXECUTION_TIME) {
    for (auto target : {MRI_PER_THREAD, MRI_PER_PROCESS})
      for (auto op : {MRI_SUM, MRI_MIN, MRI_MAX, MRI_AVG, MRI_COUNT}) out.push_back({op, target});
  } else if (ri == MRI_NUMBER_OF_INSTANCES) {
    out.push_back({MRI_SUM, MRI_PER_THREAD});
    for (auto op : {MRI_SUM, MRI_MIN, MRI_MAX, MRI_AVG}) out.push_back({op, MRI_PER_PROCESS});
  } else if (is_counter(ri) || is_cache_event(ri)) {
    // Counts aggregate like time.
    for (auto target : {MRI_PER_THREAD, MRI_PER_PROCESS})
      for (auto op : {MRI_SUM, MRI_MIN, MRI_MAX, MRI_AVG, MRI_COUNT}) out.push_back({op, target});
  }
  return out;
}

std::vector<MRI_Aggregate_Value> reduce_aggregate(MRI_Runtime_Information_Spec ri, const MRI_Aggregation_Spec& agg,
                                                  const std::vector<ThreadSlot>& slots, int process_id,
                                                  double ns_per_tick) {
  const bool instances = ri == MRI_NUMBER_OF_INSTANCES;
  const double scale = instances || is_counter(ri) || is_cache_event(ri) ? 1.0 : ns_per_tick;  // ticks -> ns; counts stay counts
  // The raw and the compensated values reduce alike; `comp` picks the set.
  // The compensated sum is signed (libmonitor adds each instance's value
  // unclamped, as in profiles): a thread's total below 0 is reported as 0.
  auto sum_of = [](const proto::AggregateSlot& sl, bool comp) -> uint64_t {
    if (!comp) return sl.sum;
    const auto signed_sum = int64_t(sl.comp_sum);
    return signed_sum > 0 ? uint64_t(signed_sum) : 0;
  };
  auto min_of = [](const proto::AggregateSlot& sl, bool comp) { return ~(comp ? sl.not_comp_min : sl.not_min); };
  auto max_of = [](const proto::AggregateSlot& sl, bool comp) { return comp ? sl.comp_max : sl.max; };
  std::vector<MRI_Aggregate_Value> out;
  auto thread_ao = [](int t) { return MRI_Active_Object_Spec{MRI_THREAD, t}; };
  if (agg.target == MRI_PER_THREAD) {
    for (const auto& ts : slots) {
      MRI_Aggregate_Value v{};
      v.active_object = thread_ao(ts.thread);
      v.count = ts.slot.count;
      const auto& sl = ts.slot;
      for (const bool comp : {false, true}) {
        double value = 0.0;
        switch (agg.operation) {
          case MRI_SUM: value = instances ? double(sl.count) : double(sum_of(sl, comp)) * scale; break;
          case MRI_MIN: value = instances || !sl.count ? double(sl.count) : double(min_of(sl, comp)) * scale; break;
          case MRI_MAX: value = instances || !sl.count ? double(sl.count) : double(max_of(sl, comp)) * scale; break;
          case MRI_AVG: value = sl.count ? double(sum_of(sl, comp)) * scale / double(sl.count) : 0.0; break;
          case MRI_COUNT: value = double(sl.count); break;
        }
        (comp ? v.compensated_value : v.value) = value;
      }
      if (agg.operation == MRI_MIN || agg.operation == MRI_MAX) {
        v.has_focus = sl.count > 0;
        v.focus_active_object = v.active_object;
      }
      out.push_back(v);
    }
    return out;
  }
  // PER_PROCESS: combine the threads. The focus is where the raw extreme
  // was attained; the compensated extreme is taken on its own.
  MRI_Aggregate_Value v{};
  v.active_object = {MRI_PROCESS, process_id};
  uint64_t count = 0, threads_with_events = 0;
  for (const auto& ts : slots) {
    count += ts.slot.count;
    threads_with_events += ts.slot.count > 0;
  }
  v.count = count;
  for (const bool comp : {false, true}) {
    uint64_t sum = 0;
    bool have = false;
    double best = 0.0;
    int focus = -1;
    for (const auto& ts : slots) {
      const auto& sl = ts.slot;
      sum += sum_of(sl, comp);
      if (sl.count == 0 || (agg.operation != MRI_MIN && agg.operation != MRI_MAX)) continue;
      const double candidate = instances                   ? double(sl.count)
                               : agg.operation == MRI_MIN ? double(min_of(sl, comp)) * scale
                                                          : double(max_of(sl, comp)) * scale;
      if (!have || (agg.operation == MRI_MIN ? candidate < best : candidate > best)) {
        best = candidate;
        focus = ts.thread;
        have = true;
      }
    }
    double value = 0.0;
    switch (agg.operation) {
      case MRI_SUM: value = instances ? double(count) : double(sum) * scale; break;
      case MRI_COUNT: value = double(count); break;
      case MRI_AVG:
        if (instances)
          value = threads_with_events ? double(count) / double(threads_with_events) : 0.0;
        else
          value = count ? double(sum) * scale / double(count) : 0.0;
        break;
      case MRI_MIN:
      case MRI_MAX:
        value = best;
        if (!comp) {
          v.has_focus = have;
          if (have) v.focus_active_object = thread_ao(focus);
        }
        break;
    }
    (comp ? v.compensated_value : v.value) = value;
  }
  out.push_back(v);
  return out;
}

}  // namespace mri::tool

using namespace mri;
using namespace mri::tool;

extern "C" {

const char* MRI_Get_Error_Message(void) { return t_error.c_str(); }
int MRI_Get_Protocol_Version(void) { return int(proto::kProtocolVersion); }

int MRI_Init(void) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.initialized) return fail("MRI_Init() called twice");
  s.initialized = true;
  s.next_id = 1;
  s.rotation = false;
  s.cache_config.clear();
  s.cache_config_set = false;
  s.iteration = 0;
  clear_error();
  return MRI_OK;
}

int MRI_Finalize(void) {
  if (trace_in_callback()) return fail("MRI_Finalize cannot be called from the trace call-back");
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.initialized) return fail("MRI_Init() has not been called");
    finish_application();
  }
  trace_stop_collector();  // final call-back, without mu (it may call MRI functions)
  trace_forget_callback();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  release_segment();
  s.loaded = false;
  s.requests.clear();
  s.regions.clear();
  s.files.clear();
  {
    std::lock_guard<std::mutex> events_lock(s.events_mu);
    s.dyn_events.clear();
  }
  s.initialized = false;
  clear_error();
  return MRI_OK;
}

int MRI_Application_Load(const char* path, char* const argv[]) {
  if (trace_in_callback()) return fail("MRI_Application_Load cannot be called from the trace call-back");
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.initialized) return fail("MRI_Init() has not been called");
    if (!path || !*path) return fail("application path is NULL or empty");
    if (s.loaded && !child_exited() && current_status() != MRI_APPLICATION_TERMINATED)
      return fail("an application is already loaded (pid %d): call MRI_Application_Finish() first", int(s.pid));
  }
  trace_stop_collector();  // the previous run's final call-back, without mu
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (s.loaded && !child_exited() && current_status() != MRI_APPLICATION_TERMINATED)
    return fail("an application is already loaded (pid %d): call MRI_Application_Finish() first", int(s.pid));
  // Checked before the previous run is let go: a load that cannot start
  // keeps its results readable.
  LoadInputs in;
  if (check_load(path, in) != MRI_OK) return MRI_Error;
  if (s.loaded) {
    finish_application();
    release_segment();
    s.loaded = false;
  }
  s.iteration = 0;
  for (auto& [id, r] : s.requests) {  // iterations count per run
    r.measured.clear();
    r.measured_restarted = true;
  }
  return load_application(in, argv);
}

int MRI_Application_Finish(void) {
  if (trace_in_callback()) return fail("MRI_Application_Finish cannot be called from the trace call-back");
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.initialized) return fail("MRI_Init() has not been called");
    if (!s.loaded) return fail("no application loaded");
    finish_application();
  }
  trace_await_end(-1);  // the final trace call-back ran (it may call MRI functions: no mu)
  clear_error();
  return MRI_OK;
}

static int release(const MRI_Region_Spec* region) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!s.loaded) return fail("no application loaded: call MRI_Application_Load() first");
  MRI_Application_Status st;
  if (readable_status(&st) != MRI_OK) return MRI_Error;
  if (st == MRI_APPLICATION_TERMINATED) return fail("the application has terminated");
  if (st == MRI_APPLICATION_RUNNING) return fail("the application is running: wait for it to stop (MRI_Wait) or stop it (MRI_Stop)");
  int32_t bp = -1;
  if (region) {
    if (!region_type_valid(*region)) return fail("breakpoint: unknown region type %d", raw(region->type));
    bp = region_index(*region);
    if (bp < 0) return fail("breakpoint: the application has no %s", describe_region(*region).c_str());
    if (!is_serial_region_type(region->type))
      return fail("breakpoint: %s \"%s\" is a %s region; only serial regions (program, routine, loop, block) can be breakpoints",
                  describe_region(*region).c_str(), s.regions[bp].name.c_str(), MRI_Region_Type_Name(region->type));
  }
  ++s.iteration;
  rotate_counters();
  send_command(proto::Command::kRun, bp);
  clear_error();
  return MRI_OK;
}

int MRI_Start(void) { return release(nullptr); }

int MRI_Start_Stop(MRI_Region_Spec* region) {
  if (!region) return fail("breakpoint region is NULL");
  return release(region);
}

int MRI_Stop(void) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!s.loaded) return fail("no application loaded");
  MRI_Application_Status st;
  if (readable_status(&st) != MRI_OK) return MRI_Error;
  if (st == MRI_APPLICATION_TERMINATED) return fail("the application has terminated");
  if (st == MRI_APPLICATION_STOPPED) {
    clear_error();
    return MRI_OK;  // already stopped
  }
  send_command(proto::Command::kStop, -1);
  clear_error();
  return MRI_OK;
}

int MRI_Wait(void) { return wait_status("MRI_Wait", -1); }

int MRI_Wait_Timeout(int timeout_ms) {
  if (timeout_ms < 0) return fail("negative timeout");
  return wait_status("MRI_Wait_Timeout", timeout_ms);
}

int MRI_No_Wait(void) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!s.loaded) return fail("no application loaded");
  MRI_Application_Status st;
  if (readable_status(&st) != MRI_OK) return MRI_Error;
  clear_error();
  return st;
}

int MRI_Get_Application_Status(MRI_Application_Status_Info* info) {
  if (!info) return fail("status info pointer is NULL");
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  std::memset(info, 0, sizeof *info);
  if (!s.loaded) {
    info->status = MRI_APPLICATION_NOT_LOADED;
    clear_error();
    return MRI_OK;
  }
  const proto::AppControl& a = s.view.header()->app;
  const AppSnapshot snap = snapshot();  // one snapshot for the status and its details
  info->status = status_of(snap);
  info->pid = s.pid;
  info->monitored_pid = int(sync::load(a.app_pid));
  info->stops = snap.stops;
  info->threads_dropped = snap.threads_dropped;
  info->regions_dropped = snap.regions_dropped;
  info->unmatched_exits = snap.unmatched_exits;
  info->bad_requests = snap.bad_requests;
  info->counter_errors = sync::load(a.counter_errors);
  // The monitor's message; before it, what this side found corrupt in the
  // segment, which explains results that lack records.
  std::string message(a.last_error, strnlen(a.last_error, sizeof a.last_error));
  if (const std::string problem = trace_problem(); !problem.empty())
    message = message.empty() ? problem : problem + "; the monitor reported: " + message;
  text::copy_printable(message, info->monitor_message, sizeof info->monitor_message);
  const auto reason = proto::StopReason(snap.reason);
  if (info->status == MRI_APPLICATION_TERMINATED) {
    child_exited();  // reaps it if it has ended since: its exit status, not 0, without MRI_Wait()
    const int end_signal = reason == proto::StopReason::kSignal ? int(sync::load(a.end_signal)) : 0;
    if (s.reaped && WIFSIGNALED(s.wait_status)) {
      info->signal = WTERMSIG(s.wait_status);
      // Killed by MRI_Application_Finish() when it did not end within the
      // grace (stopped with SIGSTOP, hung): the tool's doing, not a signal
      // from outside; `signal` still says how.
      const bool by_finish = s.finish_killed && info->signal == SIGKILL;
      info->reason = by_finish ? MRI_STOP_TERMINATED_BY_TOOL : MRI_STOP_SIGNALED;
      info->signal_caught = !by_finish && end_signal != 0 && info->signal == end_signal;
    } else if (end_signal != 0 && !s.reaped) {
      // Monitoring ended for the signal; the process is dying of it.
      info->reason = MRI_STOP_SIGNALED;
      info->signal = end_signal;
      info->signal_caught = 1;
    } else if (reason == proto::StopReason::kTerminatedByTool || (s.finish_requested && !s.reaped)) {
      info->reason = MRI_STOP_TERMINATED_BY_TOOL;
    } else {
      info->reason = MRI_STOP_EXITED;
      if (s.reaped && WIFEXITED(s.wait_status)) info->exit_code = WEXITSTATUS(s.wait_status);
    }
    if (s.finish_requested && reason == proto::StopReason::kTerminatedByTool) info->reason = MRI_STOP_TERMINATED_BY_TOOL;
    if (ended_at_exec(uint32_t(reason))) {
      info->exec_replaced = reason == proto::StopReason::kExec ? 1 : 2;
      if (!s.reaped) info->reason = MRI_STOP_EXEC;
      const uint64_t end = sync::load(a.end_ticks), epoch = sync::load(a.trace_epoch);
      const double ns_per_tick = a.ns_per_tick;
      if (end > epoch && ns_per_tick > 0 && ns_per_tick < 1e6)
        info->exec_timestamp = (unsigned long long)(double(end - epoch) * ns_per_tick);
    }
  } else if (info->status == MRI_APPLICATION_STOPPED) {
    switch (reason) {
      case proto::StopReason::kLoaded: info->reason = MRI_STOP_LOADED; break;
      case proto::StopReason::kBreakpoint: info->reason = MRI_STOP_BREAKPOINT; break;
      case proto::StopReason::kStopRequest: info->reason = MRI_STOP_STOP_REQUEST; break;
      default: info->reason = MRI_STOP_NONE; break;
    }
    const int32_t region = snap.region;
    if (region >= 0 && size_t(region) < s.regions.size()) info->region = s.regions[region].spec;
  }
  // The rest of *info stays filled (pid, monitor_message): what can be known.
  if (snap.torn && s.status_stuck && info->status != MRI_APPLICATION_TERMINATED) return status_stuck_error();
  clear_error();
  return MRI_OK;
}

MRI_Request_ID MRI_Aggregate_Request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                     MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables,
                                     MRI_Aggregation_Spec* aggregation) {
  std::lock_guard<std::mutex> lock(s.mu);
  Request r;
  r.kind = MRI_AGGREGATE_REQUEST;
  if (ri && raw(*ri) == MRI_REGION_EVENT && s.initialized)
    return fail("MRI_REGION_EVENT is only for trace requests and cannot be aggregated");
  if (check_common(ri, regions, ao, variables, false, r) != MRI_OK) return MRI_Error;
  if (!aggregation) return fail("aggregation pointer is NULL");
  if (raw(aggregation->operation) < MRI_SUM || raw(aggregation->operation) > MRI_COUNT)
    return fail("unknown aggregation operation %d", raw(aggregation->operation));
  if (raw(aggregation->target) < MRI_PER_THREAD || raw(aggregation->target) > MRI_PER_NODE)
    return fail("unknown aggregation target %d", raw(aggregation->target));
  if (aggregation->target == MRI_PER_NODE)
    return fail("aggregation target PER_NODE is not available: this monitor covers one node");
  const MRI_Active_Object_Type want = aggregation->target == MRI_PER_THREAD ? MRI_THREAD : MRI_PROCESS;
  for (const auto& a : r.active_objects)
    if (a.type != want)
      return fail("aggregation target %s needs %s active objects, but the table has a %s (section 2: target and active objects must match)",
                  aggregation->target == MRI_PER_THREAD ? "PER_THREAD" : "PER_PROCESS",
                  want == MRI_THREAD ? "thread" : "process", a.type == MRI_THREAD ? "thread" : a.type == MRI_PROCESS ? "process" : "node");
  bool valid = false;
  for (const auto& a : aggregations_for(*ri))
    if (a.operation == aggregation->operation && a.target == aggregation->target) valid = true;
  if (!valid)
    return fail("aggregation %s %s is not available for %s (see Get_Available_Aggregations())",
                MRI_Aggregation_Operation_Name(aggregation->operation),
                aggregation->target == MRI_PER_THREAD ? "PER_THREAD" : "PER_PROCESS", MRI_Runtime_Information_Name(*ri));
  r.aggregation = *aggregation;
  if (check_budget(r) != MRI_OK) return MRI_Error;
  return add_request(std::move(r));
}

}  // extern "C"

namespace mri::tool {

// Section 3.1: a request that needs a counter beyond the budget fails.
int check_budget(const Request& r) {
  if (!r.event.empty()) {
    std::vector<std::string> in_use;
    for (const auto& [id, q] : s.requests)
      if (!q.event.empty() && std::find(in_use.begin(), in_use.end(), q.event) == in_use.end())
        in_use.push_back(q.event);
    if (std::find(in_use.begin(), in_use.end(), r.event) == in_use.end() && !s.rotation) {
      std::string detail;
      const int budget = counter_budget(detail);
      if (budget < 0) return fail("%s", detail.c_str());
      if (int(in_use.size()) + 1 > budget) {
        std::string used;
        for (const auto& e : in_use) used += (used.empty() ? "" : ", ") + e;
        return fail("no counter left for %s: the counter budget is %d (%s) and %s; delete a request, or "
                    "measure it in another run (MRI_Application_Finish, MRI_Application_Load), or turn "
                    "on counter rotation (MRI_Set_Counter_Rotation)",
                    r.event.c_str(), budget, detail.c_str(),
                    used.empty() ? "there are none" : ("in use: " + used).c_str());
      }
    }
  }
  return MRI_OK;
}

// MRI_Profile_Request and MRI_Callpath_Profile_Request.
MRI_Request_ID profile_request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                               MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables, bool callpath) {
  std::lock_guard<std::mutex> lock(s.mu);
  Request r;
  r.kind = MRI_PROFILE_REQUEST;
  r.callpath = callpath;
  if (ri && raw(*ri) == MRI_REGION_EVENT && s.initialized)
    return fail("MRI_REGION_EVENT is only for trace requests; a profile needs a measured value");
  if (check_common(ri, regions, ao, variables, true, r) != MRI_OK) return MRI_Error;
  if (callpath && s.view.g.max_edges == 0) return fail("this run keeps no calling context (MRI_MAX_EDGES is 0)");
  if (check_budget(r) != MRI_OK) return MRI_Error;
  for (const auto& a : r.active_objects)
    if (a.type != MRI_THREAD && a.type != MRI_PROCESS)
      return fail("profile active objects must be threads or the process");
  return add_request(std::move(r));
}

// Whether a request names threads (not none, not the process: check_common
// lets a table hold either the process or threads).
bool names_threads(const Request& r) { return !r.active_objects.empty() && r.active_objects[0].type == MRI_THREAD; }

// Whether a request's results cover thread t (all when it named none, or
// the process).
bool wants_thread(const Request& r, int t) {
  if (r.active_objects.empty()) return true;
  for (const auto& a : r.active_objects)
    if (a.type == MRI_PROCESS || (a.type == MRI_THREAD && a.id == t)) return true;
  return false;
}

}  // namespace mri::tool

extern "C" {

MRI_Request_ID MRI_Histogram_Request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                     MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables,
                                     int* histogram_elements_nr) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!histogram_elements_nr) return fail("histogram_elements_nr is NULL");
  const int bins = *histogram_elements_nr;
  if (bins < 1 || bins > int(proto::kMaxHistogramBins))
    return fail("a histogram has 1 to %u bins (got %d)", proto::kMaxHistogramBins, bins);
  Request r;
  r.kind = MRI_HISTOGRAM_REQUEST;
  r.bins = bins;
  if (ri && s.initialized && !is_cache_event(raw(*ri)) && ri_known(raw(*ri)))
    return fail("a histogram distributes cache events over addresses; %s has no address (use a cache event such as "
                "LC1_DATA_READ_MISS)", MRI_Runtime_Information_Name(*ri));
  if (check_common(ri, regions, ao, variables, false, r) != MRI_OK) return MRI_Error;
  for (const auto& a : r.active_objects)
    if (a.type != MRI_THREAD && a.type != MRI_PROCESS) return fail("histogram active objects must be threads or the process");
  // The bins must fit the bytes they cover (the layout is fixed by the
  // application when it applies the request; checked here for a clear error).
  if (r.data_index >= 0 && uint64_t(bins) > s.data[size_t(r.data_index)].record.bytes)
    return fail("%d bins over data structure \"%s\" of %llu bytes: at most one bin per byte", bins,
                s.data[size_t(r.data_index)].name.c_str(), (unsigned long long)s.data[size_t(r.data_index)].record.bytes);
  return add_request(std::move(r));
}

MRI_Request_ID MRI_Trace_Request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                 MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables) {
  std::lock_guard<std::mutex> lock(s.mu);
  Request r;
  r.kind = MRI_TRACE_REQUEST;
  if (check_common(ri, regions, ao, variables, true, r) != MRI_OK) return MRI_Error;
  int traces = 0;
  for (const auto& [id, q] : s.requests) traces += q.kind == MRI_TRACE_REQUEST;
  if (traces >= int(proto::kMaxTraceRequests))
    return fail("too many trace requests: at most %u at a time; delete one first", proto::kMaxTraceRequests);
  if (check_budget(r) != MRI_OK) return MRI_Error;
  return add_request(std::move(r));
}

MRI_Request_ID MRI_Profile_Request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                   MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables) {
  return profile_request(ri, regions, ao, variables, false);
}

MRI_Request_ID MRI_Callpath_Profile_Request(MRI_Runtime_Information_Spec* ri, MRI_Region_Table* regions,
                                            MRI_Active_Object_Table* ao, MRI_Data_Structure_Table* variables) {
  return profile_request(ri, regions, ao, variables, true);
}

int MRI_Get_Callpath_Data(MRI_Request_ID request, MRI_Callpath_Profile_Results** results) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!results) return fail("results pointer is NULL");
  auto it = s.requests.find(request);
  if (it == s.requests.end()) return fail("request %d does not exist (never created, or deleted)", request);
  Request& r = it->second;
  if (!r.callpath)
    return fail("request %d keeps no calling context: make it with MRI_Callpath_Profile_Request()", request);
  if (!s.loaded || !s.view.base) return fail("no application loaded");
  if (r.slot < 0) return fail("request %d is not in place in this run: %s", request, r.placement_error.c_str());
  const proto::RequestAck ack = *s.view.request_ack(uint32_t(r.slot));
  const bool active = ack.applied_generation == r.generation && ack.status == 0;
  refresh_static_information();
  const uint32_t nthreads = thread_rows(s.view);
  const uint32_t nreg = uint32_t(s.regions.size());
  const double scale = r.ri == MRI_NUMBER_OF_INSTANCES || !r.event.empty() || r.simulated ? 1.0 : s.ns_per_tick;
  std::map<std::pair<uint32_t, uint32_t>, MRI_Callpath_Element> sums;
  std::vector<proto::EdgeSlot> row(s.view.g.max_edges);
  for (uint32_t t = 0; t < nthreads && active; ++t) {
    if (!wants_thread(r, int(t))) continue;
    read_thread_consistent(t, [&] {
      std::memcpy(row.data(), s.view.edge_row(uint32_t(r.slice), t), row.size() * sizeof(proto::EdgeSlot));
    });
    for (const auto& e : row) {
      if (e.calls == 0) continue;
      if (e.callee >= nreg || (e.caller != proto::kNoCaller && e.caller >= nreg)) continue;  // not a published region
      MRI_Callpath_Element& el = sums[{e.caller, e.callee}];
      if (el.instances == 0) {
        el.has_caller = e.caller != proto::kNoCaller;
        if (el.has_caller) el.caller = s.regions[e.caller].spec;
        el.callee = s.regions[e.callee].spec;
      }
      el.instances += e.calls;
      el.inclusive += double(e.inclusive) * scale;
      el.exclusive += double(e.exclusive) * scale;
      el.compensated_inclusive += signed_sum(e.comp_inclusive) * scale;
      el.compensated_exclusive += signed_sum(e.comp_exclusive) * scale;
    }
  }
  r.callpath_elements.clear();
  for (auto& [key, el] : sums) {
    el.compensated_inclusive = std::max(el.compensated_inclusive, 0.0);
    el.compensated_exclusive = std::max(el.compensated_exclusive, 0.0);
    r.callpath_elements.push_back(el);
  }
  r.callpath_result.kind = MRI_PROFILE_REQUEST;
  r.callpath_result.ri = r.ri;
  r.callpath_result.active = active;
  r.callpath_result.nr_Elements = int(r.callpath_elements.size());
  r.callpath_result.element = r.callpath_elements.empty() ? nullptr : r.callpath_elements.data();
  *results = &r.callpath_result;
  clear_error();
  return MRI_OK;
}

int MRI_Set_Counter_Rotation(int enabled) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!enabled && s.rotation) {
    std::vector<std::string> events;
    for (const auto& [id, r] : s.requests)
      if (!r.event.empty() && std::find(events.begin(), events.end(), r.event) == events.end()) events.push_back(r.event);
    std::string detail;
    const int budget = counter_budget(detail);
    if (int(events.size()) > budget)
      return fail("cannot turn counter rotation off: %zu counter events are requested and the budget is %d (%s); "
                  "delete requests first", events.size(), budget, detail.c_str());
  }
  s.rotation = enabled != 0;
  clear_error();
  return MRI_OK;
}

}  // extern "C"

namespace {

// The per-request switches below: finds the request, checks that the switch
// applies to it (`why_not`: the reason when not), and sets `bit` in its
// placed record when `set_bit`, else clears it. The application reads the
// record's flags at the next release; results stay.
int set_request_switch(MRI_Request_ID request, bool (*applies)(const Request&), const char* why_not,
                       bool Request::*field, bool value, uint32_t bit, bool set_bit) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  auto it = s.requests.find(request);
  if (it == s.requests.end()) return fail("request %d does not exist (never created, or deleted)", request);
  Request& r = it->second;
  if (!applies(r)) return fail("request %d %s", request, why_not);
  r.*field = value;
  if (r.slot >= 0 && s.view.base) {
    proto::RequestRecord* rec = s.view.request(uint32_t(r.slot));
    const uint32_t flags = sync::load(rec->flags);
    sync::store(rec->flags, set_bit ? flags | bit : flags & ~bit);
  }
  clear_error();
  return MRI_OK;
}

}  // namespace

extern "C" {

int MRI_Set_Compensation(MRI_Request_ID request, int enabled) {
  return set_request_switch(
      request, [](const Request& r) { return r.kind != MRI_TRACE_REQUEST; },
      "is a trace request: trace records carry raw values, there is nothing to compensate", &Request::compensate,
      enabled != 0, proto::kRequestNoCompensation, enabled == 0);
}

int MRI_Set_Trace_Subregions(MRI_Request_ID request, int enabled) {
  return set_request_switch(
      request, [](const Request& r) { return r.kind == MRI_TRACE_REQUEST; },
      "is not a trace request: only traces follow their regions into subregions", &Request::subregions,
      enabled != 0, proto::kRequestNoSubregions, enabled == 0);
}

int MRI_Set_Callpath_Unwinding(MRI_Request_ID request, int enabled) {
  return set_request_switch(
      request, [](const Request& r) { return r.kind == MRI_PROFILE_REQUEST && r.callpath; },
      "is not a callpath profile request (MRI_Callpath_Profile_Request)", &Request::unwind, enabled != 0,
      proto::kRequestUnwind, enabled != 0);
}

// The overhead per kind that the application's compensation uses, set by
// the tool (protocol ToolControl::overhead_set; read at the next release).
static int overhead_words(int kind, const char* name) {
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (kind < 0 || kind >= MRI_OVERHEAD_KINDS)
    return fail("%s: kind %d is not an overhead kind (MRI_OVERHEAD_TIMER 0 to MRI_OVERHEAD_CACHE_SIMULATOR 3)", name,
                kind);
  if (!s.loaded || !s.view.base) return fail("%s: no application loaded", name);
  if (current_status() == MRI_APPLICATION_TERMINATED) return fail("%s: the application has terminated", name);
  return MRI_OK;
}

static uint32_t float_bits(double v) {
  const float f = float(v);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

int MRI_Set_Overhead(MRI_Overhead_Kind overhead_kind, double delta_inclusive, double delta_own) {
  const int kind = int(overhead_kind);
  std::lock_guard<std::mutex> lock(s.mu);
  if (overhead_words(kind, "MRI_Set_Overhead") != MRI_OK) return MRI_Error;
  if (const char* problem = proto::tool_overhead_problem(uint32_t(kind), delta_inclusive, delta_own))
    return fail("MRI_Set_Overhead: %s (delta_inclusive %.10g ns, delta_own %.10g ns)", problem, delta_inclusive, delta_own);
  // Not while the application reads the words at a release it has not
  // acknowledged yet.
  await_ack();
  proto::ToolControl& tc = s.view.header()->tool;
  sync::store(tc.overhead_pair_ns[kind], float_bits(delta_inclusive));
  sync::store(tc.overhead_own_ns[kind], float_bits(delta_own));
  sync::store(tc.overhead_set, sync::load(tc.overhead_set) | (1u << kind));
  clear_error();
  return MRI_OK;
}

int MRI_Clear_Overhead(MRI_Overhead_Kind overhead_kind) {
  const int kind = int(overhead_kind);
  std::lock_guard<std::mutex> lock(s.mu);
  if (overhead_words(kind, "MRI_Clear_Overhead") != MRI_OK) return MRI_Error;
  await_ack();
  proto::ToolControl& tc = s.view.header()->tool;
  sync::store(tc.overhead_set, sync::load(tc.overhead_set) & ~(1u << kind));
  clear_error();
  return MRI_OK;
}

int MRI_Request_Delete(MRI_Request_ID request) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  auto it = s.requests.find(request);
  if (it == s.requests.end())
    return fail("request %d does not exist (never created, or already deleted)", request);
  unplace_request(it->second);
  s.requests.erase(it);
  clear_error();
  return MRI_OK;
}

// The iterations a request measured, as MRI_Get_Data hands them out
// (measured_copy: stable until the next call, while `measured` grows at
// the next release). Within a run `measured` only grows, so the copy of
// the last call is its beginning and only the new iterations are
// appended: a whole copy at every call made the reads of a long run
// quadratic (10 requests read at every stop: 17 us a stop at the start,
// 193 us after 40 000 stops).
static void hand_out_measured(Request& r) {
  if (!r.measured_restarted && r.measured_copy.size() <= r.measured.size())
    r.measured_copy.insert(r.measured_copy.end(), r.measured.begin() + ptrdiff_t(r.measured_copy.size()),
                           r.measured.end());
  else
    r.measured_copy = r.measured;
  r.measured_restarted = false;
}

int MRI_Get_Data(MRI_Request_ID request, void** results) {
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) return fail("MRI_Init() has not been called");
  if (!results) return fail("results pointer is NULL");
  auto it = s.requests.find(request);
  if (it == s.requests.end()) return fail("request %d does not exist (never created, or deleted)", request);
  Request& r = it->second;
  if (r.kind == MRI_TRACE_REQUEST)
    return fail("request %d is a trace request: its records come through the call-back and "
                "MRI_Get_First_Trace_Record()/MRI_Get_Next_Trace_Record() (section 4.4), not MRI_Get_Data()", request);
  if (!s.loaded || !s.view.base) return fail("no application loaded");
  if (r.slot < 0) return fail("request %d is not in place in this run: %s", request, r.placement_error.c_str());
  const proto::RequestAck ack = *s.view.request_ack(uint32_t(r.slot));
  if (ack.applied_generation == r.generation && ack.status != 0) {
    const proto::AppControl& a = s.view.header()->app;
    return fail("the application rejected request %d: %.*s", request, int(strnlen(a.last_error, sizeof a.last_error)),
                a.last_error);
  }
  const bool active = ack.applied_generation == r.generation && ack.status == 0;
  const uint32_t nthreads = thread_rows(s.view);
  if (r.kind == MRI_HISTOGRAM_REQUEST) return histogram_results(r, active, results);

  if (r.kind == MRI_AGGREGATE_REQUEST) {
    std::vector<ThreadSlot> slots;
    if (r.aggregation.target == MRI_PER_THREAD && !r.active_objects.empty()) {
      for (const auto& a : r.active_objects) slots.push_back({a.id, {}});
    } else {
      for (uint32_t t = 0; t < nthreads; ++t) slots.push_back({int(t), {}});
    }
    for (auto& ts : slots) {
      if (!active || uint32_t(ts.thread) >= nthreads) continue;
      read_thread_consistent(uint32_t(ts.thread),
                             [&] { ts.slot = *s.view.aggregate(uint32_t(ts.thread), uint32_t(r.slot)); });
    }
    r.agg_values = reduce_aggregate(r.ri, r.aggregation, slots, int(s.pid), s.ns_per_tick);
    r.agg_result.kind = MRI_AGGREGATE_REQUEST;
    r.agg_result.ri = r.ri;
    r.agg_result.aggregation = r.aggregation;
    r.agg_result.active = active;
    r.agg_result.nr_Elements = int(r.agg_values.size());
    r.agg_result.element = r.agg_values.data();
    hand_out_measured(r);
    r.agg_result.nr_Measured_Iterations = int(r.measured_copy.size());
    r.agg_result.measured_iteration = r.measured_copy.empty() ? nullptr : r.measured_copy.data();
    *results = &r.agg_result;
    clear_error();
    return MRI_OK;
  }

  // Profile.
  refresh_static_information();
  std::vector<int> region_ids;
  if (r.regions.empty()) {
    for (size_t i = 0; i < s.regions.size(); ++i) region_ids.push_back(int(i));
  } else {
    for (const auto& spec : r.regions) region_ids.push_back(region_index(spec));
  }
  // The threads the request named, in its order, whether or not they have
  // run yet (as an aggregate request's elements); every thread seen so far
  // when it named none or the process.
  std::vector<int> threads;
  if (names_threads(r)) {
    for (const auto& a : r.active_objects) threads.push_back(a.id);
  } else {
    for (uint32_t t = 0; t < nthreads; ++t) threads.push_back(int(t));
  }
  const size_t nr = region_ids.size(), nt = threads.size();
  r.prof_elements.assign(nr, MRI_Profile_Element{});
  r.prof_values.assign(nr * nt, MRI_Profile_Value{});
  // Profile values: time in ticks -> ns; counts as they are (instances:
  // inclusive counts the profiled instances nested in each instance too).
  const double scale = r.ri == MRI_NUMBER_OF_INSTANCES || !r.event.empty() || r.simulated ? 1.0 : s.ns_per_tick;
  std::vector<proto::ProfileSlot> row(s.regions.size());
  for (size_t ti = 0; ti < nt; ++ti) {
    const uint32_t t = uint32_t(threads[ti]);
    if (active && t < nthreads)
      read_thread_consistent(t, [&] {
        std::memcpy(row.data(), s.view.profile_row(uint32_t(r.slice), t), row.size() * sizeof(proto::ProfileSlot));
      });
    else
      std::fill(row.begin(), row.end(), proto::ProfileSlot{});
    for (size_t ri = 0; ri < nr; ++ri) {
      const proto::ProfileSlot& sl = row[size_t(region_ids[ri])];
      MRI_Profile_Value& v = r.prof_values[ri * nt + ti];
      v.active_object = {MRI_THREAD, int(t)};
      v.instances = sl.calls;
      v.inclusive = double(sl.inclusive) * scale;
      v.exclusive = double(sl.exclusive) * scale;
      v.compensated_inclusive = std::max(signed_sum(sl.comp_inclusive) * scale, 0.0);
      v.compensated_exclusive = std::max(signed_sum(sl.comp_exclusive) * scale, 0.0);
    }
  }
  for (size_t ri = 0; ri < nr; ++ri) {
    MRI_Profile_Element& e = r.prof_elements[ri];
    e.region = s.regions[size_t(region_ids[ri])].spec;
    e.nr_Active_Objects = int(nt);
    e.per_active_object = nt ? &r.prof_values[ri * nt] : nullptr;
    for (size_t ti = 0; ti < nt; ++ti) {
      e.instances += e.per_active_object[ti].instances;
      e.inclusive += e.per_active_object[ti].inclusive;
      e.exclusive += e.per_active_object[ti].exclusive;
      e.compensated_inclusive += e.per_active_object[ti].compensated_inclusive;
      e.compensated_exclusive += e.per_active_object[ti].compensated_exclusive;
    }
  }
  r.prof_result.kind = MRI_PROFILE_REQUEST;
  r.prof_result.ri = r.ri;
  r.prof_result.active = active;
  r.prof_result.nr_Elements = int(nr);
  r.prof_result.element = r.prof_elements.data();
  hand_out_measured(r);
  r.prof_result.nr_Measured_Iterations = int(r.measured_copy.size());
  r.prof_result.measured_iteration = r.measured_copy.empty() ? nullptr : r.measured_copy.data();
  *results = &r.prof_result;
  clear_error();
  return MRI_OK;
}

}  // extern "C"

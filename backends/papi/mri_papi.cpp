#include "mri_papi.h"

#include <pthread.h>

#include <cstdio>
#include <mutex>

#ifdef MRI_HAVE_PAPI
#include <papi.h>
#endif

namespace mri::papi {

#ifdef MRI_HAVE_PAPI

namespace {

unsigned long thread_id() { return static_cast<unsigned long>(pthread_self()); }

std::once_flag g_once;
bool g_ok = false;
std::string g_why;

std::string papi_error(int code) { return std::string(PAPI_strerror(code)) + " (PAPI error " + std::to_string(code) + ")"; }

}  // namespace

bool built_with_papi() { return true; }

bool init(std::string& why) {
  std::call_once(g_once, [] {
    const int v = PAPI_library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
      g_why = v > 0 ? "PAPI library version mismatch" : "PAPI_library_init failed: " + papi_error(v);
      return;
    }
    const int t = PAPI_thread_init(thread_id);
    if (t != PAPI_OK) {
      g_why = "PAPI_thread_init failed: " + papi_error(t);
      return;
    }
    g_ok = true;
  });
  if (!g_ok) why = g_why;
  return g_ok;
}

std::string version() {
  std::string why;
  if (!init(why)) return "unavailable: " + why;
  const int v = PAPI_get_opt(PAPI_LIB_VERSION, nullptr);
  char text[32];
  std::snprintf(text, sizeof text, "%d.%d.%d.%d", PAPI_VERSION_MAJOR(v), PAPI_VERSION_MINOR(v),
                PAPI_VERSION_REVISION(v), PAPI_VERSION_INCREMENT(v));
  return text;
}

int hardware_counters() {
  std::string why;
  if (!init(why)) return 0;
  const int cid = PAPI_get_component_index("perf_event");
  const int n = PAPI_num_cmp_hwctrs(cid >= 0 ? cid : 0);
  return n > 0 ? n : 0;
}

EventCheck check_event(const std::string& name, std::string& why) {
  if (!init(why)) return EventCheck::kUnavailable;
  int code = 0;
  if (PAPI_event_name_to_code(name.c_str(), &code) != PAPI_OK) {
    why = "PAPI knows no event \"" + name + "\" (see mri info or papi_avail / papi_native_avail)";
    return EventCheck::kUnknown;
  }
  if (PAPI_query_event(code) != PAPI_OK) {
    why = name + " cannot be counted on this machine (PAPI: the event does not exist here)";
    return EventCheck::kUnavailable;
  }
  int es = PAPI_NULL;
  int rc = PAPI_create_eventset(&es);
  if (rc == PAPI_OK) rc = PAPI_add_event(es, code);
  if (rc == PAPI_OK) {
    rc = PAPI_start(es);
    long long v = 0;
    if (rc == PAPI_OK) PAPI_stop(es, &v);
  }
  if (es != PAPI_NULL) {
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
  }
  if (rc != PAPI_OK) {
    why = name + " cannot be counted on this machine (PAPI: " + papi_error(rc) + ")";
    return EventCheck::kUnavailable;
  }
  return EventCheck::kOk;
}

std::string describe_event(const std::string& name) {
  std::string why;
  int code = 0;
  if (!init(why) || PAPI_event_name_to_code(name.c_str(), &code) != PAPI_OK) return "";
  PAPI_event_info_t info;
  if (PAPI_get_event_info(code, &info) != PAPI_OK) return "";
  return info.long_descr[0] ? info.long_descr : info.short_descr;
}

std::vector<std::string> countable_events() {
  std::vector<std::string> out;
  std::string why;
  if (!init(why)) return out;
  int code = PAPI_PRESET_MASK;
  if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) == PAPI_OK) {
    do {
      char name[PAPI_MAX_STR_LEN];
      if (PAPI_event_code_to_name(code, name) == PAPI_OK && check_event(name, why) == EventCheck::kOk)
        out.emplace_back(name);
    } while (PAPI_enum_event(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
  }
  const int cid = PAPI_get_component_index("perf_event");
  if (cid >= 0) {
    code = PAPI_NATIVE_MASK;
    if (PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, cid) == PAPI_OK) {
      do {
        char name[PAPI_MAX_STR_LEN];
        if (PAPI_event_code_to_name(code, name) == PAPI_OK && check_event(name, why) == EventCheck::kOk)
          out.emplace_back(name);
      } while (PAPI_enum_cmp_event(&code, PAPI_ENUM_EVENTS, cid) == PAPI_OK);
    }
  }
  return out;
}

bool build(EventSet& set, const std::vector<std::string>& names, std::string& why) {
  destroy(set);
  if (names.empty()) return true;
  if (!init(why)) return false;
  int es = PAPI_NULL;
  int rc = PAPI_create_eventset(&es);
  if (rc != PAPI_OK) {
    why = "PAPI_create_eventset: " + papi_error(rc);
    return false;
  }
  for (const auto& name : names) {
    rc = PAPI_add_named_event(es, name.c_str());
    if (rc != PAPI_OK) {
      why = "cannot count " + name + ": " + papi_error(rc);
      PAPI_cleanup_eventset(es);
      PAPI_destroy_eventset(&es);
      return false;
    }
  }
  rc = PAPI_start(es);
  if (rc != PAPI_OK) {
    why = "PAPI_start: " + papi_error(rc);
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
    return false;
  }
  set.handle = es;
  set.n = uint32_t(names.size());
  return true;
}

bool read(const EventSet& set, long long* values) { return PAPI_read(set.handle, values) == PAPI_OK; }

void destroy(EventSet& set) {
  if (set.n == 0 && set.handle == -1) return;
  int es = set.handle;
  if (es != PAPI_NULL) {
    long long scratch[kMaxEvents];
    PAPI_stop(es, scratch);
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
  }
  set.handle = -1;
  set.n = 0;
}

void unregister_thread() {
  if (g_ok) PAPI_unregister_thread();
}

#else  // no PAPI at build time

namespace {
const char* kAbsent = "this build has no PAPI support (built with MRI_USE_PAPI=OFF or without libpapi-dev)";
}

bool built_with_papi() { return false; }
bool init(std::string& why) {
  why = kAbsent;
  return false;
}
std::string version() { return std::string("absent: ") + kAbsent; }
int hardware_counters() { return 0; }
EventCheck check_event(const std::string& name, std::string& why) {
  why = name + " needs PAPI, and " + kAbsent;
  return EventCheck::kUnavailable;
}
std::string describe_event(const std::string&) { return ""; }
std::vector<std::string> countable_events() { return {}; }
bool build(EventSet& set, const std::vector<std::string>& names, std::string& why) {
  set = EventSet{};
  if (names.empty()) return true;
  why = kAbsent;
  return false;
}
bool read(const EventSet&, long long*) { return false; }
void destroy(EventSet& set) { set = EventSet{}; }
void unregister_thread() {}

#endif

}  // namespace mri::papi

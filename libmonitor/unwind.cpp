// unwind.cpp - callers without annotations, for callpath profiles that ask
// for them (kRequestUnwind, MRI_Set_Callpath_Unwinding).
//
// A callpath edge's caller is normally the nearest enclosing profiled
// region. When functions without annotations lie between that region and
// an instance, the enter walks the stack with libunwind: from the function
// holding the region's MONITOR_ENTER up to the function that held the
// enclosing region's enter. The functions in between become regions of
// type MRI_REGION_FUNCTION (published like a region registered late), and
// the exit adds one edge per step of that path (hot_path.cpp,
// accumulate_edge).
//
// Only the enters of regions in such a request pay for it: about 80 ns per
// instance once warm (docs/PERFORMANCE.md). The fast walk takes the return
// addresses from unw_backtrace (libunwind's cached frame walk) and looks
// them up in a per-thread cache; a return address it has not seen sends the
// enter to the slow walk, a libunwind cursor that finds each frame's
// procedure start (.eh_frame_hdr) and, once per new function, its name
// (from the symbol table, static functions included).
#include "monitor_internal.h"
#include "mri_sync.h"

#ifdef MRI_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <cxxabi.h>
#include <dlfcn.h>
#include <libunwind.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#endif

namespace mri::monitor {

#ifndef MRI_HAVE_LIBUNWIND

bool unwind_available() { return false; }
void unwind_enter(ThreadState*, uint32_t, uint32_t) {}

#else

bool unwind_available() { return true; }

namespace {

// Takes the control mutex from inside the slow path. Its holder may be
// about to wait for this thread to leave the slow path, but every such
// holder first moves the mode away from kRunning: the thread gives up then
// (and after a second in any case, a safety net only). Until then the
// holder is one that releases it soon (another thread registering a region
// or a data structure; the control thread wakes the threads of a release
// only after unlocking). Soon, that is, unless the host stalls the holder:
// a 10 ms limit once made every instance of a program's first burst give
// up on a busy machine, attributed to the caller's region.
bool lock_control_in_slow_path() {
  const uint64_t deadline = sync::monotonic_ns() + 1'000'000'000;
  while (!g.control_mutex.try_lock()) {
    if (g.mode.load(std::memory_order_acquire) != kRunning || sync::monotonic_ns() > deadline) return false;
    sched_yield();
  }
  return true;
}

// The published region of the function starting at `start` (named from the
// cursor at one of its frames), or -1 (then this instance keeps its region
// caller, and a later one tries again).
int32_t function_region(uint64_t start, unw_cursor_t* cursor) {
  std::lock_guard<std::mutex> lock(g.unwind_mutex);
  if (!g.function_regions) g.function_regions = new std::unordered_map<uint64_t, int32_t>;
  auto it = g.function_regions->find(start);
  if (it != g.function_regions->end()) return it->second;
  if (!lock_control_in_slow_path()) return -1;
  std::lock_guard<std::mutex> control(g.control_mutex, std::adopt_lock);

  char symbol[256] = "";
  unw_word_t offset = 0;
  std::string name;
  if (unw_get_proc_name(cursor, symbol, sizeof symbol, &offset) == 0 && symbol[0]) {
    int status = -1;
    char* demangled = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
    name = status == 0 && demangled ? demangled : symbol;
    std::free(demangled);
  } else {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(start));
    name = hex;
  }
  Dl_info info{};
  std::string file = "?";
  uint64_t base = 0;
  if (dladdr(reinterpret_cast<void*>(start), &info) && info.dli_fname) {
    file = info.dli_fname[0] ? info.dli_fname : "?";
    base = reinterpret_cast<uint64_t>(info.dli_fbase);
  }
  Monitor_Region_Descriptor found{};
  found.type = MRI_REGION_FUNCTION;
  found.id = -1;
  found.name = name.c_str();
  found.file = file.c_str();
  found.line = int(start - base);  // the function's offset in its object file
  // Lives as long as the process, like the static descriptors.
  const int32_t id = register_region_locked(lasting_descriptor(found));
  g.function_regions->emplace(start, id);
  return id;
}

uint64_t procedure_start(unw_cursor_t* cursor) {
  unw_proc_info_t pi;
  return unw_get_proc_info(cursor, &pi) == 0 ? uint64_t(pi.start_ip) : 0;
}

// The function the enclosing profiled instance's enter was in; 0: none,
// or not known (that instance did not unwind).
uint64_t enclosing_function(const ThreadState* ts, uint32_t index) {
  int32_t parent = int32_t(index) - 1;
  while (parent >= 0 && !ts->frames[parent].profiled) --parent;
  if (parent < 0 || !ts->frames[parent].unwound) return 0;
  return ts->unwound[parent].function;
}

// This thread's cache: return address -> the function holding it, and that
// function's region once one was needed.
struct IpInfo {
  uint64_t start;
  int32_t region;  // -1: not published (yet)
};
using IpCache = std::unordered_map<uint64_t, IpInfo>;

IpCache& cache_of(ThreadState* ts) {
  if (!ts->unwind_cache) ts->unwind_cache = new IpCache;
  return *static_cast<IpCache*>(ts->unwind_cache);
}

// Fills u.n/u.chain from the functions of successive frames, given by
// `next` (returns the next frame's function start and region, false at the
// end of what it can tell). The logic of both walks below.
template <typename Next>
void build_chain(UnwoundFrame& u, uint32_t type, uint64_t stop, Next next) {
  // An annotated routine is its own function: the path starts at its
  // caller. Any other region (a loop, a block) is inside an unannotated
  // function unless that is the enclosing region's.
  const bool routine = type == MRI_REGION_ROUTINE || type == MRI_REGION_PROGRAM;
  int32_t ids[kMaxUnwound];
  uint32_t n = 0;
  uint64_t start = u.function;
  int32_t region = -1;
  if (!routine) {
    if (!next(true, start, region)) return;  // the region's own function
    ids[n++] = region;
  }
  for (;;) {
    if (!next(false, start, region)) return;  // not on the stack within reach: keep the region caller
    if (start == stop) break;
    if (n == kMaxUnwound) return;
    ids[n++] = region;
  }
  for (uint32_t k = 0; k < n; ++k)
    if (ids[k] < 0) return;  // a function could not be published (capacity, or busy): keep the region caller
  for (uint32_t k = 0; k < n; ++k) u.chain[k] = ids[n - 1 - k];  // outermost first
  u.n = n;
}

// The fast walk: unw_backtrace (libunwind's cached frame walk, no DWARF
// interpretation once warm) and the IP cache. False when anything it needs
// is not cached yet: then the slow walk runs.
bool fast_walk(ThreadState* ts, UnwoundFrame& u, uint32_t type, uint32_t index, void* monitor_return) {
  void* ips[kMaxUnwound + 8];
  const int n = unw_backtrace(ips, int(sizeof ips / sizeof ips[0]));
  int k = 0;
  while (k < n && ips[k] != monitor_return) ++k;  // the frame of Monitor_Region_Enter_Slow
  if (++k >= n) return false;
  IpCache& cache = cache_of(ts);
  auto own = cache.find(uint64_t(ips[k]));
  if (own == cache.end()) return false;
  u.function = own->second.start;
  const uint64_t stop = enclosing_function(ts, index);
  if (!stop || stop == u.function) return true;
  bool complete = true;
  build_chain(u, type, stop, [&](bool self, uint64_t& start, int32_t& region) {
    if (self) {
      start = own->second.start;
      region = own->second.region;
      complete &= region >= 0;
      return complete;
    }
    if (++k >= n) {
      complete = n < int(sizeof ips / sizeof ips[0]);  // a full array: the slow walk may reach further
      return false;
    }
    auto it = cache.find(uint64_t(ips[k]));
    if (it == cache.end()) return complete = false;
    start = it->second.start;
    region = it->second.region;
    if (start != stop && region < 0) return complete = false;
    return true;
  });
  return complete;
}

// The slow walk: a libunwind cursor, frame by frame; publishes the
// functions it meets and fills the IP cache.
void slow_walk(ThreadState* ts, UnwoundFrame& u, uint32_t type, uint32_t index, void* monitor_return) {
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return;
  // Up to the frame of Monitor_Region_Enter_Slow, then one more.
  for (int k = 0;; ++k) {
    unw_word_t ip = 0;
    if (k == 8 || unw_step(&cursor) <= 0 || unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0) return;
    if (ip == unw_word_t(monitor_return)) break;
  }
  if (unw_step(&cursor) <= 0) return;
  IpCache& cache = cache_of(ts);
  auto info_here = [&](bool publish) -> IpInfo* {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0) return nullptr;
    IpInfo& info = cache[uint64_t(ip)];
    if (!info.start) {
      info.start = procedure_start(&cursor);
      info.region = -1;
      if (!info.start) {
        cache.erase(uint64_t(ip));
        return nullptr;
      }
    }
    if (publish && info.region < 0) info.region = function_region(info.start, &cursor);
    return &info;
  };
  const IpInfo* own = info_here(false);
  if (!own) return;
  u.function = own->start;
  const uint64_t stop = enclosing_function(ts, index);
  if (!stop || stop == u.function) return;
  build_chain(u, type, stop, [&](bool self, uint64_t& start, int32_t& region) {
    if (!self && unw_step(&cursor) <= 0) return false;
    const IpInfo* info = info_here(false);
    if (!info) return false;
    start = info->start;
    if (start != stop) info = info_here(true);
    region = info->region;
    return true;
  });
}

}  // namespace

// Called by Monitor_Region_Enter_Slow, which is called from the function
// holding the region's MONITOR_ENTER (a macro, so no frame of its own).
void unwind_enter(ThreadState* ts, uint32_t type, uint32_t index) {
  static const bool per_thread_cache =
      (unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD), true);  // no lock, no signal mask
  (void)per_thread_cache;
  if (!ts->unwound) ts->unwound = new UnwoundFrame[kMaxDepth];
  UnwoundFrame& u = ts->unwound[index];
  ts->frames[index].unwound = 1;
  u.function = 0;
  u.n = 0;
  void* const monitor_return = __builtin_return_address(0);  // in Monitor_Region_Enter_Slow
  if (fast_walk(ts, u, type, index, monitor_return)) return;
  u.function = 0;
  u.n = 0;
  slow_walk(ts, u, type, index, monitor_return);
}

#endif

}  // namespace mri::monitor

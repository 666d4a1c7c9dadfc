// mri - command-line front end of the Monitoring Request Interface.
//
//   mri profile [options] -- PROGRAM [ARGS...]   per-region time profile
//   mri regions -- PROGRAM [ARGS...]             the program's static information
//   mri info                                     what this monitor can measure here
//
// Uses only the public C API (include/mri.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mri.h"

namespace {

const char* kUsage =
    "usage: mri profile [--metric EVENT]... [--sort incl|excl|calls|name] [--per-thread] [--all] -- PROGRAM [ARGS...]\n"
    "       mri regions -- PROGRAM [ARGS...]\n"
    "       mri info\n"
    "       mri --help | --version\n"
    "\n"
    "profile   run PROGRAM (built with libmonitor) to completion and print, per region,\n"
    "          calls, inclusive and exclusive time, in total and per thread\n"
    "          --metric EVENT add inclusive and exclusive counts of a counter event\n"
    "                         (e.g. perf::PAGE-FAULTS; see mri info); may be repeated\n"
    "          --sort KEY     order of the rows (default: incl)\n"
    "          --per-thread   also print one table per thread (default when >1 thread)\n"
    "          --all          include regions that never ran\n"
    "regions   list the regions PROGRAM publishes, then end it\n"
    "info      list the runtime information, aggregations and machine facts\n";

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "mri: %s: %s\n", what, MRI_Get_Error_Message());
  MRI_Finalize();
  std::exit(1);
}

[[noreturn]] void usage_error(const char* fmt, const char* arg) {
  std::fprintf(stderr, "mri: ");
  std::fprintf(stderr, fmt, arg);
  std::fprintf(stderr, "\n%s", kUsage);
  std::exit(2);
}

struct Row {
  std::string name, type, where;
  unsigned long long calls;
  double incl, excl;  // ns
  std::vector<double> metric_incl, metric_excl;  // per --metric, in events
};

std::vector<std::string> g_metrics;  // --metric names, for the column heads

std::string location(const MRI_Region_Spec& r) {
  MRI_Region_Info info;
  if (MRI_Get_Region_Info(&r, &info) != MRI_OK) return "?";
  const char* base = std::strrchr(info.file, '/');
  return std::string(base ? base + 1 : info.file) + ":" + std::to_string(r.id.line_NR);
}

std::string region_name(const MRI_Region_Spec& r) {
  MRI_Region_Info info;
  return MRI_Get_Region_Info(&r, &info) == MRI_OK ? info.name : "?";
}

void print_table(const char* title, std::vector<Row> rows, const std::string& sort, double total_ns) {
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (sort == "excl") return a.excl > b.excl;
    if (sort == "calls") return a.calls > b.calls;
    if (sort == "name") return a.name < b.name;
    return a.incl > b.incl;
  });
  size_t wn = 6, ww = 8;
  for (const auto& r : rows) {
    wn = std::max(wn, r.name.size());
    ww = std::max(ww, r.where.size());
  }
  std::printf("\n%s\n", title);
  std::printf("  %-*s  %-13s  %-*s  %12s  %14s  %14s  %7s", int(wn), "region", "type", int(ww), "location", "calls",
              "incl [ms]", "excl [ms]", "incl %");
  for (const auto& m : g_metrics) std::printf("  %*s  %*s", 22, (m + " incl").c_str(), 22, (m + " excl").c_str());
  std::printf("\n");
  for (const auto& r : rows) {
    std::printf("  %-*s  %-13s  %-*s  %12llu  %14.3f  %14.3f  %6.1f%%", int(wn), r.name.c_str(), r.type.c_str(),
                int(ww), r.where.c_str(), r.calls, r.incl / 1e6, r.excl / 1e6,
                total_ns > 0 ? 100.0 * r.incl / total_ns : 0.0);
    for (size_t m = 0; m < r.metric_incl.size(); ++m) std::printf("  %22.0f  %22.0f", r.metric_incl[m], r.metric_excl[m]);
    std::printf("\n");
  }
}

bool same_region(const MRI_Region_Spec& a, const MRI_Region_Spec& b) {
  return a.type == b.type && a.id.file_ID == b.id.file_ID && a.id.line_NR == b.id.line_NR;
}

// The element of a profile result for `region`, or nullptr.
const MRI_Profile_Element* element_for(const MRI_Histogram_Profile_Results* p, const MRI_Region_Spec& region) {
  for (int e = 0; e < p->nr_Elements; ++e)
    if (same_region(p->element[e].region, region)) return &p->element[e];
  return nullptr;
}

// The value of thread `id` in an element, or nullptr.
const MRI_Profile_Value* value_for(const MRI_Profile_Element* el, int id) {
  for (int t = 0; el && t < el->nr_Active_Objects; ++t)
    if (el->per_active_object[t].active_object.id == id) return &el->per_active_object[t];
  return nullptr;
}

int load(char** argv) {
  if (MRI_Init() != MRI_OK) die("init");
  if (MRI_Application_Load(argv[0], argv) != MRI_OK) die("cannot load the program");
  return 0;
}

// Ends the run and returns the program's exit status for ours.
int final_status(const char* program) {
  MRI_Application_Status_Info st;
  MRI_Get_Application_Status(&st);
  if (st.threads_dropped)
    std::fprintf(stderr, "mri: warning: %u threads were not monitored (more than MRI_MAX_THREADS)\n", st.threads_dropped);
  if (st.regions_dropped)
    std::fprintf(stderr, "mri: warning: %u regions were not monitored (more than MRI_MAX_REGIONS, or more source files than the monitor's file table holds)\n",
                 st.regions_dropped);
  if (st.counter_errors)
    std::fprintf(stderr, "mri: warning: %u times a thread could not set up its counters\n", st.counter_errors);
  if (st.monitor_message[0]) std::fprintf(stderr, "mri: the monitor reported: %s\n", st.monitor_message);
  if (st.reason == MRI_STOP_SIGNALED) {
    std::fprintf(stderr, "mri: %s was killed by signal %d (%s); results up to then are shown\n", program, st.signal,
                 strsignal(st.signal));
    return 128 + st.signal;
  }
  return st.exit_code;
}

int cmd_profile(int argc, char** argv) {
  std::string sort = "incl";
  bool per_thread = false, all = false;
  int i = 0;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--sort") {
      if (i + 1 >= argc) usage_error("%s needs a value", "--sort");
      sort = argv[++i];
      if (sort != "incl" && sort != "excl" && sort != "calls" && sort != "name")
        usage_error("unknown sort key '%s' (incl, excl, calls, name)", sort.c_str());
    } else if (a == "--metric") {
      if (i + 1 >= argc) usage_error("%s needs an event name", "--metric");
      g_metrics.push_back(argv[++i]);
    } else if (a == "--per-thread") {
      per_thread = true;
    } else if (a == "--all") {
      all = true;
    } else if (a.size() && a[0] == '-') {
      usage_error("unknown option '%s'", a.c_str());
    } else {
      break;
    }
  }
  if (i >= argc) usage_error("%s", "profile needs a program to run (after --)");
  char** prog = argv + i;
  load(prog);

  MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
  MRI_Region_Table every{nullptr, 0};
  MRI_Request_ID req = MRI_Profile_Request(&ri, &every, nullptr, nullptr);
  if (req < 0) die("profile request");
  std::vector<MRI_Request_ID> metric_req;
  for (const auto& m : g_metrics) {
    MRI_Runtime_Information_Spec mri;
    if (MRI_Runtime_Information_By_Name(m.c_str(), &mri) != MRI_OK) die(("--metric " + m).c_str());
    metric_req.push_back(MRI_Profile_Request(&mri, &every, nullptr, nullptr));
    if (metric_req.back() < 0) die(("--metric " + m).c_str());
  }
  if (MRI_Start() != MRI_OK) die("start");
  for (;;) {
    int st = MRI_Wait();
    if (st == MRI_Error) die("wait");
    if (st == MRI_APPLICATION_TERMINATED) break;
    if (MRI_Start() != MRI_OK) die("continue");  // stopped by someone else: keep going
  }
  // Results of the counter profiles first: each MRI_Get_Data buffer stays
  // valid until that request's next call.
  std::vector<const MRI_Histogram_Profile_Results*> metric_prof;
  for (MRI_Request_ID id : metric_req) {
    void* p = nullptr;
    if (MRI_Get_Data(id, &p) != MRI_OK) die("counter results");
    metric_prof.push_back(static_cast<MRI_Histogram_Profile_Results*>(p));
  }
  void* data = nullptr;
  if (MRI_Get_Data(req, &data) != MRI_OK) die("results");
  auto* prof = static_cast<MRI_Histogram_Profile_Results*>(data);

  int nthreads = prof->nr_Elements ? prof->element[0].nr_Active_Objects : 0;
  std::vector<Row> rows;
  std::vector<std::vector<Row>> thread_rows(static_cast<size_t>(nthreads));
  double total = 0;
  for (int e = 0; e < prof->nr_Elements; ++e) {
    const MRI_Profile_Element& el = prof->element[e];
    if (el.instances == 0 && !all) continue;
    Row r{region_name(el.region), MRI_Region_Type_Name(el.region.type), location(el.region), el.instances,
          el.inclusive, el.exclusive, {}, {}};
    for (const auto* mp : metric_prof) {
      const MRI_Profile_Element* me = element_for(mp, el.region);
      r.metric_incl.push_back(me ? me->inclusive : 0.0);
      r.metric_excl.push_back(me ? me->exclusive : 0.0);
    }
    if (el.region.type == MRI_REGION_PROGRAM) total = std::max(total, el.inclusive);
    rows.push_back(r);
    for (int t = 0; t < el.nr_Active_Objects && t < nthreads; ++t) {
      const MRI_Profile_Value& v = el.per_active_object[t];
      if (v.instances == 0 && !all) continue;
      Row tr{r.name, r.type, r.where, v.instances, v.inclusive, v.exclusive, {}, {}};
      for (const auto* mp : metric_prof) {
        const MRI_Profile_Value* mv = value_for(element_for(mp, el.region), v.active_object.id);
        tr.metric_incl.push_back(mv ? mv->inclusive : 0.0);
        tr.metric_excl.push_back(mv ? mv->exclusive : 0.0);
      }
      thread_rows[size_t(t)].push_back(tr);
    }
  }
  if (total <= 0)
    for (const auto& r : rows) total = std::max(total, r.incl);

  MRI_Application_Status_Info st;
  MRI_Get_Application_Status(&st);
  std::printf("\nmri profile: %s (pid %d), %d thread%s, times in ms (EXECUTION_TIME, nanosecond clock)%s\n",
              prog[0], st.pid, nthreads, nthreads == 1 ? "" : "s",
              g_metrics.empty() ? "" : ", counters in events (PAPI)");
  print_table("all threads (sum over threads; incl % of the PROGRAM region)", rows, sort, total);
  if (per_thread || nthreads > 1) {
    for (int t = 0; t < nthreads; ++t) {
      MRI_Active_Object_Spec ao{MRI_THREAD, prof->element[0].per_active_object[t].active_object.id};
      MRI_Active_Object_Info info;
      char title[128];
      if (MRI_Get_Active_Object_Info(&ao, &info) == MRI_OK)
        std::snprintf(title, sizeof title, "thread %d \"%s\" (tid %d)", ao.id, info.name, info.os_id);
      else
        std::snprintf(title, sizeof title, "thread %d", ao.id);
      print_table(title, thread_rows[size_t(t)], sort, total);
    }
  }
  int code = final_status(prog[0]);
  MRI_Finalize();
  return code;
}

int cmd_regions(int argc, char** argv) {
  int i = 0;
  if (i < argc && std::strcmp(argv[i], "--") == 0) ++i;
  if (i >= argc) usage_error("%s", "regions needs a program (after --)");
  load(argv + i);
  MRI_Region_Table t;
  if (MRI_Get_Regions(&t) != MRI_OK) die("regions");
  std::printf("%-28s  %-13s  %s\n", "region", "type", "location");
  for (int r = 0; r < t.nr_Elements; ++r)
    std::printf("%-28s  %-13s  %s\n", region_name(t.region[r]).c_str(), MRI_Region_Type_Name(t.region[r].type),
                location(t.region[r]).c_str());
  MRI_Application_Finish();
  MRI_Finalize();
  return 0;
}

int cmd_info() {
  if (MRI_Init() != MRI_OK) die("init");
  MRI_HW_Info hw;
  if (MRI_Get_System_Information(&hw) != MRI_OK) die("system information");
  auto count = [](int n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); };
  std::printf("machine: %s, %s, %s, %s (from %s)\n", count(hw.nr_CPUs, "CPU").c_str(), count(hw.nr_Cores, "core").c_str(),
              count(hw.nr_Sockets, "socket").c_str(), count(hw.nr_NUMA_Nodes, "NUMA node").c_str(), hw.topology_source);
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
    const std::string shared = c.shared_by_cpus > 0 ? "shared by " + count(c.shared_by_cpus, "CPU") : "sharing unknown";
    std::printf("  L%d %s cache: %s, %s, %s, %s\n", c.level, kind, size.c_str(), line.c_str(), ways.c_str(),
                shared.c_str());
  }
  std::printf("hardware counters: %d (%s)\ntime entity: nanoseconds\n\n", hw.nr_Hardware_Counters, hw.counter_source);
  MRI_Runtime_Information_Table t;
  if (Get_Available_Runtime_Information(&t) != MRI_OK) die("runtime information");
  // Aggregations as "SUM MIN MAX per thread; SUM MIN per process".
  auto aggregations = [](MRI_Runtime_Information_Spec ri) {
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
  };
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage_error("%s", "missing command");
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("mri %d.%d (protocol version %d)\n", MRI_API_VERSION_MAJOR, MRI_API_VERSION_MINOR,
                MRI_Get_Protocol_Version());
    return 0;
  }
  if (cmd == "profile") return cmd_profile(argc - 2, argv + 2);
  if (cmd == "regions") return cmd_regions(argc - 2, argv + 2);
  if (cmd == "info") return cmd_info();
  usage_error("unknown command '%s'", cmd.c_str());
}

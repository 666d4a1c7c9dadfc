// rogue_tool.cpp - see rogue_tool.h.
#include "rogue_tool.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "mri.h"
#include "segment_peer.h"

namespace mri::rogue {
namespace {

// The call-back's state (it runs on libmri's collector thread).
std::atomic<uint64_t> g_records_taken{0};
void take_records() {
  MRI_Trace_Element_Spec records[256];
  for (int n, rounds = 0; rounds < 64 && (n = MRI_Get_Trace_Records(records, 256)) > 0; ++rounds)
    g_records_taken += uint64_t(n);
}

class Driver {
 public:
  Driver(const ToolPlan& plan, Progress* progress, ToolReport& report)
      : plan_(plan), progress_(progress), report_(report), rng_(plan.seed) {}

  int run() {
    stage("init");
    if (MRI_Init() != MRI_OK) return 3;
    if (MRI_Set_Trace_Buffer_Size(1024, 4096) != MRI_OK) return 3;
    if (plan_.cache_program && MRI_Set_Cache_Configuration("L1:32K,8,64;L2:256K,8,64;cores=2") != MRI_OK) return 3;
    std::vector<std::string> args = plan_.args;
    args.insert(args.begin(), plan_.program);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    stage("load");
    // From the load on: a thread watches for the segment (libmri creates
    // it inside the load) and forks the rogue as soon as it is mapped.
    std::thread watcher;
    std::atomic<bool> loading{true};
    if (plan_.from_load && !plan_.no_rogue)
      watcher = std::thread([&] {
        while (loading.load() && !start_rogue(32)) usleep(100);
      });
    const int loaded = MRI_Application_Load(plan_.program.c_str(), argv.data());
    loading = false;
    if (watcher.joinable()) watcher.join();
    if (loaded != MRI_OK) {
      // Allowed when the rogue was there: the load checks what the program published.
      std::fprintf(stderr, "rogue tool: load failed: %s\n", MRI_Get_Error_Message());
      if (report_.rogue_pid == 0) return 3;
      ++report_.errors;
      return end();
    }
    MRI_Application_Status_Info info;
    if (MRI_Get_Application_Status(&info) == MRI_OK) report_.pid = info.pid;
    // What the program published (the rogue may have written there already).
    const bool attacked = report_.rogue_pid != 0;
    MRI_Region_Table table{};
    if (check(MRI_Get_Regions(&table)) == MRI_OK && table.nr_Elements > 0)
      regions_.assign(table.region, table.region + table.nr_Elements);
    if (check(MRI_Find_Region(plan_.cache_program ? "sweep" : "step", &loop_)) != MRI_OK && !attacked) return 3;
    if (check(MRI_Find_Region("main", &main_)) != MRI_OK && !attacked) return 3;
    if (plan_.cache_program && check(MRI_Find_Data_Structure("A", &data_)) != MRI_OK && !attacked) return 3;
    if (regions_.empty()) regions_.push_back(loop_);
    if (plan_.call_back) check(MRI_Register_Call_Back_Function(take_records));

    stage("rogue");
    if (!plan_.no_rogue && report_.rogue_pid == 0 && !start_rogue(uint32_t(regions_.size()))) return 3;
    for (int kind = 0; kind < kinds(); ++kind) add(make_request(kind), kind);
    for (uint32_t i = 0; i < plan_.operations; ++i) {
      operation(int(rng_() % 10));
      ++report_.operations;
    }
    if (!plan_.rogue_through_end) stop_rogue();
    return end();
  }

 private:
  // Ends the program and the library, then the rogue.
  int end() {
    MRI_Application_Status_Info info;
    stage("finish");
    check(MRI_Application_Finish());
    stage("status");
    if (check(MRI_Get_Application_Status(&info)) == MRI_OK) {
      report_.status = info.status;
      report_.reason = info.reason;
      report_.exit_code = info.exit_code;
      report_.signal = info.signal;
    }
    stage("finalize");
    check(MRI_Finalize());
    stop_rogue();
    report_.checksum = sink_;
    stage("done");
    return 0;
  }

  void stage(const char* what) {
    std::snprintf(report_.stage, sizeof report_.stage, "%s", what);
    std::snprintf(progress_->operation, sizeof progress_->operation, "%s", what);
  }

  // An MRI call's result; a refusal is counted and goes to the log (the
  // harness keeps it when the iteration fails).
  int check(int rc) {
    if (rc < 0) {
      ++report_.errors;
      std::fprintf(stderr, "rogue tool: %s: %s\n", report_.stage, MRI_Get_Error_Message());
    }
    return rc;
  }

  // Forks the rogue on the segment mapped in this process; false when
  // there is none (yet). `regions`: the published ones, whose records it
  // overwrites.
  bool start_rogue(uint32_t regions) {
    auto* header = static_cast<proto::Header*>(mri_test_segment());
    if (!header) return false;
    const proto::Geometry g = header->geometry;
    if (proto::validate_geometry(g)) return false;
    areas_ = areas_of(plan_.side, g, 4, regions);
    if (plan_.area >= 0) areas_ = {areas_[size_t(plan_.area) % areas_.size()]};
    std::snprintf(report_.area, sizeof report_.area, "%s", plan_.area >= 0 ? areas_[0].name : "all");
    const uint64_t seed = rng_();
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0)
      write_forever(reinterpret_cast<unsigned char*>(header), g, areas_.data(), areas_.size(), seed, plan_.max_pause_us);
    report_.rogue_pid = pid;
    return true;
  }

  void stop_rogue() {
    if (report_.rogue_pid <= 0) return;
    kill(report_.rogue_pid, SIGKILL);
    waitpid(report_.rogue_pid, nullptr, 0);
    report_.rogue_pid = -report_.rogue_pid;  // stopped
  }

  int kinds() const { return plan_.cache_program ? 9 : 6; }

  MRI_Request_ID make_request(int kind) {
    MRI_Region_Table loop{&loop_, 1}, everything{regions_.data(), int(regions_.size())}, main{&main_, 1};
    MRI_Data_Structure_Table data{&data_, 1};
    MRI_Runtime_Information_Spec ri;
    switch (kind) {
      case 0: {
        ri = MRI_EXECUTION_TIME;
        MRI_Aggregation_Spec agg{MRI_SUM, MRI_PER_THREAD};
        return check(MRI_Aggregate_Request(&ri, &loop, nullptr, nullptr, &agg));
      }
      case 1: {
        ri = MRI_NUMBER_OF_INSTANCES;
        MRI_Aggregation_Spec agg{MRI_MAX, MRI_PER_PROCESS};
        return check(MRI_Aggregate_Request(&ri, &everything, nullptr, nullptr, &agg));
      }
      case 2:
        ri = MRI_EXECUTION_TIME;
        return check(MRI_Profile_Request(&ri, &everything, nullptr, nullptr));
      case 3:
        ri = MRI_NUMBER_OF_INSTANCES;
        return check(MRI_Callpath_Profile_Request(&ri, &everything, nullptr, nullptr));
      case 4:
        ri = MRI_REGION_EVENT;
        return check(MRI_Trace_Request(&ri, &loop, nullptr, nullptr));
      case 5:
        ri = MRI_EXECUTION_TIME;
        return check(MRI_Trace_Request(&ri, &main, nullptr, nullptr));
      case 6: {
        ri = MRI_LC1_DATA_READ_MISS;
        int bins = 16;
        return check(MRI_Histogram_Request(&ri, &loop, nullptr, &data, &bins));
      }
      case 7: {
        ri = MRI_LC1_DATA_READ_HIT;
        MRI_Aggregation_Spec agg{MRI_SUM, MRI_PER_THREAD};
        return check(MRI_Aggregate_Request(&ri, &loop, nullptr, &data, &agg));
      }
      default:
        ri = MRI_LC2_DATA_WRITE_MISS;
        return check(MRI_Profile_Request(&ri, &everything, nullptr, nullptr));
    }
  }

  void add(MRI_Request_ID id, int kind) {
    if (id > 0) requests_.push_back({id, kind == 4 || kind == 5});
  }

  // Reads every field of a result, so that the sanitizers see the memory.
  template <typename T>
  static double sum(const T* p, int n) {
    double s = 0;
    for (int i = 0; p && i < n; ++i) {
      unsigned char bytes[sizeof(T)];
      std::memcpy(bytes, &p[i], sizeof bytes);
      for (unsigned char b : bytes) s += b;
    }
    return s;
  }

  void read_results() {
    for (const auto& [id, trace] : requests_) {
      if (trace) continue;  // no MRI_Get_Data: their records are read elsewhere
      void* results = nullptr;
      if (check(MRI_Get_Data(id, &results)) != MRI_OK || !results) continue;
      switch (*static_cast<MRI_Request_Kind*>(results)) {
        case MRI_AGGREGATE_REQUEST: {
          auto* r = static_cast<MRI_Aggregate_Request_Results*>(results);
          sink_ += sum(r->element, r->nr_Elements) + sum(r->measured_iteration, r->nr_Measured_Iterations);
          break;
        }
        case MRI_PROFILE_REQUEST: {
          auto* r = static_cast<MRI_Histogram_Profile_Results*>(results);
          for (int i = 0; i < r->nr_Elements; ++i)
            sink_ += sum(&r->element[i], 1) +
                     sum(r->element[i].per_active_object, r->element[i].nr_Active_Objects);
          break;
        }
        case MRI_HISTOGRAM_REQUEST: {
          auto* r = static_cast<MRI_Histogram_Request_Results*>(results);
          for (int i = 0; i < r->nr_Elements; ++i) {
            const MRI_Data_Structure_Table& t = r->element[i].data_structures;
            sink_ += sum(&r->element[i], 1) + sum(t.data_structure, t.nr_Elements);
            for (int k = 0; k < t.nr_Elements; ++k) sink_ += double(std::strlen(t.data_structure[k].name));
          }
          break;
        }
        default:
          break;
      }
      MRI_Callpath_Profile_Results* callpath = nullptr;
      if (MRI_Get_Callpath_Data(id, &callpath) == MRI_OK && callpath)
        sink_ += sum(callpath->element, callpath->nr_Elements);
    }
  }

  void read_static_information() {
    MRI_Region_Table table{};
    if (check(MRI_Get_Regions(&table)) == MRI_OK)
      for (int i = 0; i < table.nr_Elements; ++i) {
        MRI_Region_Info info;
        if (check(MRI_Get_Region_Info(&table.region[i], &info)) == MRI_OK)
          sink_ += double(std::strlen(info.name) + std::strlen(info.file));
        if (const char* file = MRI_Get_File_Name(table.region[i].id.file_ID)) sink_ += double(std::strlen(file));
      }
    MRI_Data_Structure_Table data{};
    if (check(MRI_Get_Data_Structures(&data)) == MRI_OK)
      for (int i = 0; i < data.nr_Elements; ++i) {
        MRI_Data_Structure_Info info;
        if (check(MRI_Get_Data_Structure_Info(&data.data_structure[i], &info)) == MRI_OK)
          sink_ += double(std::strlen(info.data_structure.name) + std::strlen(info.file));
      }
    for (int t = 0; t < 4; ++t) {
      const MRI_Active_Object_Spec thread{MRI_THREAD, t};
      MRI_Active_Object_Info info;
      if (MRI_Get_Active_Object_Info(&thread, &info) == MRI_OK) sink_ += sum(&info, 1);
    }
  }

  void read_status_and_traces() {
    MRI_Application_Status_Info info;
    check(MRI_No_Wait());
    if (check(MRI_Get_Application_Status(&info)) == MRI_OK) sink_ += double(std::strlen(info.monitor_message));
    for (int t = 0; t < 4; ++t) {
      const MRI_Active_Object_Spec thread{MRI_THREAD, t};
      MRI_Trace_Statistics st;
      if (MRI_Get_Trace_Statistics(&thread, &st) == MRI_OK) sink_ += double(st.emitted);
    }
    if (!plan_.call_back) {
      MRI_Trace_Element_Spec records[256];
      for (int n, rounds = 0; rounds < 16 && (n = MRI_Get_Trace_Records(records, 256)) > 0; ++rounds)
        sink_ += sum(records, n);
    }
  }

  void operation(int which) {
    static const char* const kNames[] = {"start_stop", "start, stop", "results", "static information",
                                         "status and traces", "replace a request", "overhead", "cache configuration",
                                         "start_stop", "results"};
    stage(kNames[which]);
    switch (which) {
      case 0:
      case 8:
        check(MRI_Start_Stop(&loop_));
        check(MRI_Wait_Timeout(500));
        break;
      case 1:
        check(MRI_Start());
        check(MRI_Wait_Timeout(int(rng_() % 20)));
        check(MRI_Stop());
        check(MRI_Wait_Timeout(500));
        break;
      case 2:
      case 9:
        read_results();
        break;
      case 3:
        read_static_information();
        break;
      case 4:
        read_status_and_traces();
        break;
      case 5: {
        if (!requests_.empty()) {
          const size_t k = rng_() % requests_.size();
          check(MRI_Request_Delete(requests_[k].first));
          requests_.erase(requests_.begin() + long(k));
        }
        const int kind = int(rng_() % uint64_t(kinds()));
        add(make_request(kind), kind);
        break;
      }
      case 6: {
        MRI_Overhead_Calibration c;
        if (check(MRI_Get_Overhead_Calibration(&c)) == MRI_OK) sink_ += sum(&c, 1);
        const auto kind = MRI_Overhead_Kind(rng_() % MRI_OVERHEAD_CACHE_SIMULATOR);
        if (rng_() % 2)
          check(MRI_Set_Overhead(kind, double(rng_() % 1000), 0.0));
        else
          check(MRI_Clear_Overhead(kind));
        break;
      }
      default: {
        char text[1024];
        if (check(MRI_Get_Cache_Configuration(text, sizeof text)) >= 0) sink_ += double(strnlen(text, sizeof text));
        break;
      }
    }
  }

  const ToolPlan& plan_;
  Progress* progress_;
  ToolReport& report_;
  std::mt19937_64 rng_;
  std::vector<MRI_Region_Spec> regions_;
  MRI_Region_Spec loop_{}, main_{};
  MRI_Data_Structure_Spec data_{};
  std::vector<std::pair<MRI_Request_ID, bool>> requests_;  // and whether it is a trace request
  std::vector<Area> areas_;
  double sink_ = 0;  // a sum of what was read, handed to the report: the reads are not optimised away
};

}  // namespace

int run_tool(const ToolPlan& plan, Progress* progress, ToolReport& report) {
  Driver driver(plan, progress, report);
  return driver.run();
}

}  // namespace mri::rogue

// `mri hist`: a histogram request (paper section 3.2, Figure 2) of one
// simulated cache event over the addresses of a data structure in the
// instances of the --region regions (default: the PROGRAM region). Prints
// the bins; -o writes them as CSV, --plot as an SVG bar chart. PROGRAM must
// be built with the cache-simulator backend. Status: the program's; 2 for
// an event or a hierarchy refused before the run; 1 when a file cannot be
// written.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cachesim.h"
#include "commands.h"
#include "config_file.h"
#include "histogram_chart.h"
#include "mpi_job.h"
#include "mri_export.h"
#include "output_files.h"
#include "program_run.h"
#include "region_lookup.h"

namespace mri::cli {

namespace {

constexpr unsigned long long kMaxBins = 1024;

// The runtime information of a cache event named L1_DATA_READ_MISS,
// LC1_DATA_READ_MISS or MRI_LC1_DATA_READ_MISS, and its cache level (1..3);
// false for anything else.
bool cache_metric(const std::string& name, MRI_Runtime_Information_Spec& ri, int& level) {
  std::string n = name.rfind("MRI_", 0) == 0 ? name.substr(4) : name;
  if (n.size() > 2 && n[0] == 'L' && std::isdigit(static_cast<unsigned char>(n[1]))) n = "LC" + n.substr(1);
  static const char* const kEvents[] = {"LC1_DATA_READ_MISS", "LC1_DATA_WRITE_MISS", "LC2_DATA_READ_MISS",
                                        "LC2_DATA_WRITE_MISS", "LC3_DATA_READ_MISS", "LC3_DATA_WRITE_MISS",
                                        "LC1_DATA_READ_HIT",  "LC1_DATA_WRITE_HIT",  "LC2_DATA_READ_HIT",
                                        "LC2_DATA_WRITE_HIT",  "LC3_DATA_READ_HIT",  "LC3_DATA_WRITE_HIT"};
  for (const char* e : kEvents)
    if (n == e) {
      level = e[2] - '0';
      return MRI_Runtime_Information_By_Name(e, &ri) == MRI_OK;
    }
  return false;
}

// Ends mri with status 2, before the program is loaded, when the simulated
// hierarchy has no cache of the event's level: the application would refuse
// the request only at its first release and run to its end for nothing.
// The hierarchy is the one the application will build (backends/cachesim/monitor/simulator_setup.cpp):
// `config` (--config), else MRI_CACHESIM_CONFIG, else this machine's caches,
// through the simulator's own parser and default ("@FILE" through its
// bounded file reader).
void check_cache_level(const std::string& metric, int level, const std::string* config) {
  const char* env = std::getenv("MRI_CACHESIM_CONFIG");
  const std::string text = config ? *config : env ? env : "";
  const char* origin = config ? "--config" : !text.empty() ? "MRI_CACHESIM_CONFIG" : "this machine's caches";
  mri::sim::HierarchyConfig hierarchy;
  if (text.empty())
    hierarchy = mri::sim::default_config();
  else if (!mri::sim::parse_config_argument(text, hierarchy).empty())
    return;  // not valid: MRI_Application_Load() refuses it with the reason
  if (size_t(level) <= hierarchy.levels.size()) return;
  std::fprintf(stderr, "mri: --metric %s counts at L%d, but the simulated hierarchy (%s: %s) has %zu level%s\n",
               metric.c_str(), level, origin, mri::sim::format_config(hierarchy).c_str(), hierarchy.levels.size(),
               hierarchy.levels.size() == 1 ? "" : "s");
  MRI_Finalize();
  std::exit(2);
}

// A CSV field (RFC 4180): quoted, its quotes doubled, when it holds a
// comma, a quote or a line break (names are the program's own strings).
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

class HistCommand : public Command {
 public:
  HistCommand()
      : Command("hist",
                {"--metric EVENT [--data NAME] [--bins N] [--region NAME]... [--config CACHES]",
                 "[-o FILE.csv] [--plot FILE.svg] -- PROGRAM [ARGS...]"},
                "histogram of a simulated cache event over the addresses of a data structure\n"
                "(paper Figure 2); PROGRAM must be built with the cache-simulator backend",
                true) {
    add_value("--metric", metric_, "EVENT", "a value",
              "L1_DATA_READ_MISS, L2_DATA_WRITE_MISS, L1_DATA_READ_HIT, ...\n"
              "(LCn_DATA_{READ,WRITE}_{MISS,HIT}; the L may also be LC) (required)");
    data_option_ = add_value("--data", data_, "NAME", "a value",
                             "the data structure (default: every registered one, packed)");
    bins_option_ = add_value("--bins", bins_, "N", "a value", "bins, 1..1024 (default 25)");
    add_values("--region", region_values_, "NAME", "a value",
               "count in this region's instances (default: the program\n"
               "region); may be repeated; NAME@FILE[:LINE] as for trace;\n"
               "only regions published at the start (not C++ scopes)");
    config_option_ = add_value("--config", config_, "CACHES", "a value",
                               "simulated hierarchy, e.g. 'L1:32K,8,64;L2:1M,16,64'\n"
                               "(default: MRI_CACHESIM_CONFIG, else this machine's caches)");
    add_file("-o,--output", csv_, "FILE", "write the bins as CSV (%r: the MPI rank, %p: the pid)");
    add_file("--plot", plot_, "FILE", "write the bins as an SVG bar chart (%r, %p as for -o)");
  }

  int run() override;

 private:
  // The option checks before anything runs; usage errors.
  void check_options(char** prog);

  std::string metric_, data_, bins_, config_, csv_, plot_;
  std::vector<std::string> region_values_, region_names_;
  int bin_count_ = 25;
  CLI::Option* data_option_ = nullptr;
  CLI::Option* bins_option_ = nullptr;
  CLI::Option* config_option_ = nullptr;
};

void HistCommand::check_options(char** prog) {
  if (data_option_->count() && data_.empty())
    usage_error("--data '' names no data structure (without --data: every registered one)");
  if (bins_option_->count()) {
    unsigned long long n = 0;
    if (!whole_number(bins_, kMaxBins, n) || n < 1) usage_error("--bins: '" + bins_ + "' is not a bin count in 1..1024");
    bin_count_ = int(n);
  }
  for (const auto& v : region_values_) add_region_name(region_names_, v);
  if (metric_.empty()) usage_error("hist needs --metric (e.g. L1_DATA_READ_MISS)");
  if (!prog) usage_error("hist needs a program to run (after --)");
  if (config_option_->count() && config_.empty())
    usage_error("--config needs a cache hierarchy, e.g. 'L1:32K,8,64;L2:1M,16,64' (leave --config out to "
                "simulate this machine's caches)");
  bind_job_output("-o", csv_);
  bind_job_output("--plot", plot_);
  check_not_program("-o", csv_, prog[0]);
  check_not_program("--plot", plot_, prog[0]);
  if (!csv_.empty() && !plot_.empty() && !file_identity(csv_).empty() && file_identity(csv_) == file_identity(plot_))
    usage_error("-o " + csv_ + " and --plot " + plot_ + " name one file: the chart would replace the CSV; give them two files");
  check_output(csv_, false);
  check_output(plot_, false);
  if (!csv_.empty() && !plot_.empty() && mri::exporters::output_descriptor(csv_) >= 0 &&
      mri::exporters::output_descriptor(csv_) == mri::exporters::output_descriptor(plot_))
    usage_error("-o " + csv_ + " and --plot " + plot_ +
                " name one descriptor: the CSV and the chart would run into each other; give one of them a file");
}

int HistCommand::run() {
  char** prog = program();
  check_options(prog);
  const std::vector<std::string>& region_names = region_names_;
  const bool have_config = config_option_->count() > 0;
  const std::string& data = data_;
  int bins = bin_count_;
  claim_stdout(csv_);
  claim_stdout(plot_);
  if (MRI_Init() != MRI_OK) die("init");
  MRI_Runtime_Information_Spec ri;
  int level = 0;
  if (!cache_metric(metric_, ri, level)) {
    std::fprintf(stderr, "mri: unknown metric '%s' for a histogram: use a cache event, L1_DATA_READ_MISS, "
                 "L1_DATA_WRITE_MISS, L2_..., L3_..., or the same with _HIT\n", metric_.c_str());
    MRI_Finalize();
    return 2;
  }
  if (have_config && MRI_Set_Cache_Configuration(config_.c_str()) != MRI_OK) {
    // A value of the command line: status 2, as for mri-cachesim --config.
    std::fprintf(stderr, "mri: --config: %s\n", MRI_Get_Error_Message());
    MRI_Finalize();
    return 2;
  }
  check_cache_level(metric_, level, have_config ? &config_ : nullptr);
  load_program(prog);
  // A program that ended before its first region (exit() there) published
  // its regions and data structures, but nothing can be measured: said with
  // its status, before --data or --region is looked up in it.
  if (MRI_No_Wait() == MRI_APPLICATION_TERMINATED) ended_before_monitoring(prog[0]);

  std::vector<MRI_Region_Spec> regions;
  if (region_names.empty()) {
    MRI_Region_Table all;
    if (MRI_Get_Regions(&all) != MRI_OK) die("regions");
    for (int r = 0; r < all.nr_Elements; ++r)
      if (all.region[r].type == MRI_REGION_PROGRAM) regions.push_back(all.region[r]);
    if (regions.empty()) {
      std::fprintf(stderr, "mri: %s has no PROGRAM region: name the regions to count in with --region\n", prog[0]);
      MRI_Finalize();
      return 1;
    }
  }
  for (const auto& name : region_names) {
    // The monitor counts a histogram's events inside the instances of the
    // regions requested; nothing after the counting can pick out the
    // instances of a region it was not asked for (unlike a trace, which
    // holds every enter and leave), and it can only be asked for regions
    // published when the request is made, before the run.
    if (!region_name_published(name)) {
      std::fprintf(stderr, "mri: --region %s: the program publishes no region of this name at its start. hist "
                   "counts inside the instances of regions requested before the run, so it cannot count in a C++ "
                   "scope's region (MONITOR_SCOPE, MONITOR_FUNCTION), which is published only when it first runs: "
                   "name a region published at the start that encloses it ('mri regions -- PROGRAM' lists them), "
                   "or trace the scope with 'mri trace --region %s'\n",
                   name.c_str(), name.c_str());
      MRI_Finalize();
      return 1;
    }
    regions.push_back(find_region(name));
  }
  MRI_Data_Structure_Spec ds{};
  if (!data.empty() && MRI_Find_Data_Structure(data.c_str(), &ds) != MRI_OK) die("--data " + data);
  if (data.empty()) {
    // Every registered data structure, packed: the monitor lays the bins
    // out when it applies the request, at the release, and refuses more
    // bins than bytes only then, after the whole run. Stopped at the load,
    // the set it will see is the one registered now.
    MRI_Data_Structure_Table all{};
    unsigned long long bytes = 0;
    if (MRI_Get_Data_Structures(&all) == MRI_OK)
      for (int k = 0; k < all.nr_Elements; ++k) {
        MRI_Data_Structure_Info info;
        if (MRI_Get_Data_Structure_Info(&all.data_structure[k], &info) == MRI_OK) bytes += info.size_bytes;
      }
    if (all.nr_Elements == 0) {
      std::fprintf(stderr, "mri: %s has registered no data structure before its first region: hist counts over "
                   "the data structures registered when the run starts (Monitor_Register_Data() before the first "
                   "annotated region)\n", prog[0]);
      MRI_Finalize();
      return 1;
    }
    if ((unsigned long long)bins > bytes) {
      std::fprintf(stderr, "mri: --bins %d: the %d data structures %s registered hold %llu bytes, and a bin covers at "
                   "least one byte: give at most %llu bins\n", bins, all.nr_Elements, prog[0], bytes, bytes);
      MRI_Finalize();
      return 1;
    }
  }
  MRI_Region_Table rt{regions.data(), int(regions.size())};
  MRI_Data_Structure_Table vt{&ds, data.empty() ? 0 : 1};
  const MRI_Request_ID req = MRI_Histogram_Request(&ri, &rt, nullptr, &vt, &bins);
  if (req < 0) die("histogram request");
  // The instances of those regions: whether the histogram counted anything
  // at all (a program released with the request in place may still exit
  // before any of them ended: Monitor_Init() first thing, then exit()).
  MRI_Runtime_Information_Spec n = MRI_NUMBER_OF_INSTANCES;
  MRI_Aggregation_Spec sum{MRI_SUM, MRI_PER_PROCESS};
  const MRI_Request_ID instances_req = MRI_Aggregate_Request(&n, &rt, nullptr, nullptr, &sum);
  if (instances_req < 0) die("instance count request");
  start(prog[0]);
  run_to_end();
  void* p = nullptr;
  if (MRI_Get_Data(req, &p) != MRI_OK) die("histogram results");
  const auto* h = static_cast<const MRI_Histogram_Request_Results*>(p);
  void* q = nullptr;
  if (MRI_Get_Data(instances_req, &q) != MRI_OK) die("instance counts");
  const auto* inst = static_cast<const MRI_Aggregate_Request_Results*>(q);
  unsigned long long instances = 0;
  for (int e = 0; e < inst->nr_Elements; ++e) instances += inst->element[e].count;
  if (!h->active) ended_before_monitoring(prog[0]);
  if (instances == 0 && !killed()) {
    if (region_names.empty()) ended_before_monitoring(prog[0], true);
    std::fprintf(stderr, "mri: warning: no instance of the --region regions ended: the histogram counted nothing\n");
  }
  char caches[1024];
  if (MRI_Get_Cache_Configuration(caches, sizeof caches) != MRI_OK) caches[0] = '\0';
  std::string where;
  for (const auto& r : regions) where += (where.empty() ? "" : ", ") + region_name(r);
  const char* base = std::strrchr(prog[0], '/');
  const std::string program = base ? base + 1 : prog[0];
  const std::string event = MRI_Runtime_Information_Name(ri);
  const unsigned long long width = h->nr_Elements ? h->element[0].address_end - h->element[0].address_begin : 0;
  unsigned long long total = 0;
  for (int b = 0; b < h->nr_Elements; ++b) total += h->element[b].value;

  std::printf("\nmri hist: %s of %s in %s (%s%s), %d bins%s\nsimulated caches: %s\n\n", event.c_str(),
              data.empty() ? "every registered data structure" : data.c_str(), where.c_str(), program.c_str(),
              job_words().c_str(),
              h->nr_Elements,
              h->nr_Elements < bins ? " (fewer than asked: bins are whole bytes wide and every bin holds data)" : "",
              caches);
  std::printf("  %4s  %-20s  %-20s  %12s  %s\n", "bin", "address begin", "address end", event.c_str(), "data structures");
  for (int b = 0; b < h->nr_Elements; ++b) {
    const MRI_Histogram_Bin& e = h->element[b];
    std::printf("  %4d  %-20s  %-20s  %12llu  %s\n", b, hex(e.address_begin).c_str(), hex(e.address_end).c_str(),
                e.value, bin_names(e, ", ").c_str());
  }
  std::printf("  total %llu\n", total);
  // Nothing counted although the regions ran: say so, with the likely
  // reasons, rather than leave a table of zeros to speak for itself.
  if (total == 0 && instances > 0 && h->nr_Elements > 0)
    std::fprintf(stderr, "mri: note: the histogram counted nothing: no %s of %s during %s (the program does not make "
                 "such references there, or the data structure's registration had ended: Monitor_Unregister_Data)\n",
                 event.c_str(), data.empty() ? "the registered data structures" : data.c_str(), where.c_str());

  std::string error;
  if (!csv_.empty()) {
    // bytes: what the bin covers of its data structures (a bin that holds
    // several spans the gaps between them, which it does not count).
    std::string text = "bin,address_begin,address_end,bytes,value,data_structures\n";
    for (int b = 0; b < h->nr_Elements; ++b) {
      const MRI_Histogram_Bin& e = h->element[b];
      unsigned long long bytes = 0;
      for (int k = 0; k < e.data_structures.nr_Elements; ++k) {
        MRI_Data_Structure_Info info;
        if (MRI_Get_Data_Structure_Info(&e.data_structures.data_structure[k], &info) != MRI_OK) die("data structure");
        const unsigned long long lo = std::max(e.address_begin, info.address);
        const unsigned long long hi = std::min(e.address_end, info.address + info.size_bytes);
        if (hi > lo) bytes += hi - lo;
      }
      text += std::to_string(b) + "," + hex(e.address_begin) + "," + hex(e.address_end) + "," +
              std::to_string(bytes) + "," + std::to_string(e.value) + "," + csv_field(bin_names(e, ";")) + "\n";
    }
    if (!write_file(writer_path(csv_), text, error)) {
      std::fprintf(stderr, "mri: cannot write %s: %s\n", csv_.c_str(), error.c_str());
      MRI_Finalize();
      return 1;
    }
  }
  if (!plot_.empty()) {
    const std::string title = event + " of " + (data.empty() ? std::string("every data structure") : data) + " in " +
                              where + " (" + program + ", " + std::to_string(h->nr_Elements) + " bins)";
    const std::string xlabel = "bin: " + std::to_string(width) + " bytes of " +
                               (data.empty() ? std::string("the packed data structures") : data) + " each, in address order";
    if (!write_file(writer_path(plot_), svg_chart(*h, title, event + " (simulated)", xlabel), error)) {
      std::fprintf(stderr, "mri: cannot write %s: %s\n", plot_.c_str(), error.c_str());
      MRI_Finalize();
      return 1;
    }
  }
  const int code = final_status(prog[0]);
  MRI_Finalize();
  return code;
}

}  // namespace

std::shared_ptr<Command> make_hist_command() { return std::make_shared<HistCommand>(); }

}  // namespace mri::cli

// `mri profile`: runs PROGRAM to its end under one EXECUTION_TIME profile
// of every region (and one per --metric), prints the tables and, with -o,
// writes the callgrind file. Status: the program's (128 + signal when it
// was killed).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "callgrind_output.h"
#include "commands.h"
#include "mpi_job.h"
#include "output_files.h"
#include "overhead_fit.h"
#include "profile_requests.h"
#include "profile_table.h"
#include "program_run.h"
#include "region_lookup.h"

namespace mri::cli {

namespace {

constexpr unsigned long long kMaxFitRuns = 16;  // --fit RUNS
constexpr double kMaxOverheadNs = 1e6;          // --overhead NS: 1 ms per instance is far beyond any measured cost

class ProfileCommand : public Command {
 public:
  ProfileCommand()
      : Command("profile",
                {"[--metric EVENT]... [--sort incl|excl|calls|name] [--per-thread] [--all] [--no-mpi-calls]",
                 "[--no-compensation | --fit RUNS | --overhead NS] [-o FILE [--unwind]] -- PROGRAM [ARGS...]"},
                "run PROGRAM (built with libmonitor) to completion and print, per region,\n"
                "calls, inclusive and exclusive time, in total and per thread; each time\n"
                "also with the monitor's own overhead removed (\"comp\" columns); in an\n"
                "MPI job each rank under its own mri: mpirun -np 4 mri profile ./app",
                true) {
    add_values("--metric", metrics_, "EVENT", "an event name",
               "add inclusive and exclusive counts of a counter event\n"
               "(e.g. perf::PAGE-FAULTS; see mri info); up to 3, each once");
    add_value("--sort", sort_, "KEY", "a value", "order of the rows: incl, excl, calls or name (default: incl)");
    add_switch("--per-thread", per_thread_, "also print one table per thread (default when >1 thread)");
    add_switch("--all", all_, "include regions that never ran");
    add_switch("--no-compensation", no_compensation_, "raw times only (the monitor does less per region)");
    add_switch("--no-mpi-calls", no_mpi_calls_, "in an MPI job: leave the MPI calls out (by default each is\na region of type MPI)");
    fit_option_ = add_value("--fit", fit_, "RUNS", "a number of runs",
                            "measure the overhead in PROGRAM itself first: run it 2 RUNS + 1\n"
                            "times (its standard output discarded), with only its PROGRAM\n"
                            "region and with every region measured in turn, and remove\n"
                            "what an instance cost there (RUNS 1..16); for programs that\n"
                            "do the same work each run and have an annotated main");
    overhead_option_ = add_value("--overhead", overhead_, "NS", "ns per region instance",
                                 "remove NS ns per measured region instance (what --fit printed)");
    add_switch("--unwind", unwind_,
               "with -o: also put functions without annotations between\n"
               "regions into the call tree (stack unwinding at every enter)");
    add_file("-o,--output", output_, "FILE",
             "also write the profile with its call tree in the callgrind\n"
             "format (open it with kcachegrind or callgrind_annotate);\n"
             "%r in FILE is the MPI rank, %p the program's pid, %% a %");
  }

  int run() override;

 private:
  void check_options(char** prog);
  // The --metric events into `metric_ri`, before the program is started:
  // an unknown name ends mri with status 1; false (said why) for an event
  // named twice, which would give two columns and two callgrind events of
  // one name.
  bool metric_events(std::vector<MRI_Runtime_Information_Spec>& metric_ri);

  std::vector<std::string> metrics_;  // --metric names, for the column heads
  std::string sort_ = "incl", output_, fit_, overhead_;
  bool per_thread_ = false, all_ = false, no_compensation_ = false, unwind_ = false, no_mpi_calls_ = false;
  CLI::Option* fit_option_ = nullptr;
  CLI::Option* overhead_option_ = nullptr;
  int fit_runs_ = 0;         // --fit RUNS
  double overhead_ns_ = 0;  // --overhead NS
};

void ProfileCommand::check_options(char** prog) {
  if (sort_ != "incl" && sort_ != "excl" && sort_ != "calls" && sort_ != "name")
    usage_error("unknown sort key '" + sort_ + "' (incl, excl, calls, name)");
  if (fit_option_->count()) {
    unsigned long long n = 0;
    if (!whole_number(fit_, kMaxFitRuns, n) || n < 1)
      usage_error("--fit '" + fit_ + "': the number of runs with every region must be from 1 to 16");
    fit_runs_ = int(n);
  }
  if (overhead_option_->count()) {
    char* end = nullptr;
    // Digits with at most one '.', nothing strtod also takes (blanks, a
    // sign, hexadecimal, inf).
    const std::string& v = overhead_;
    const bool number = !v.empty() && v.find_first_not_of("0123456789.") == std::string::npos &&
                        std::count(v.begin(), v.end(), '.') <= 1 && v != ".";
    overhead_ns_ = number ? std::strtod(v.c_str(), &end) : 0;
    if (!number || *end || !std::isfinite(overhead_ns_) || overhead_ns_ <= 0 || overhead_ns_ > kMaxOverheadNs)
      usage_error("--overhead '" + v + "': give the ns one measured region instance costs, above 0 and at most "
                  "1000000 (mri profile --fit prints it)");
  }
  if (!prog) usage_error("profile needs a program to run (after --)");
  check_not_program("-o", output_, prog[0]);
  if (unwind_ && output_.empty()) usage_error("--unwind needs -o FILE (it adds callers to the call tree)");
  // A rank starts its program once: the launcher refuses a second MPI_Init
  // in its place, so the fit's runs cannot run there.
  if (fit_runs_ && this_job())
    usage_error("--fit runs the program " + std::to_string(2 * fit_runs_ + 1) +
                " times, and a rank of a job can start it once; fit it outside the job (mri profile --fit " +
                std::to_string(fit_runs_) + " -- PROGRAM, one process) and give the ns it prints here with --overhead NS");
  if (fit_runs_ && overhead_ns_ > 0) usage_error("--fit and --overhead both set the overhead; give one");
  if ((fit_runs_ || overhead_ns_ > 0) && no_compensation_)
    usage_error("--fit and --overhead set the overhead that compensation removes; --no-compensation removes none");
  if (metrics_.size() > kMaxMetrics)
    usage_error("at most 3 --metric: the monitor holds 4 profile requests at a time, and the time profile is one");
}

bool ProfileCommand::metric_events(std::vector<MRI_Runtime_Information_Spec>& metric_ri) {
  for (size_t m = 0; m < metrics_.size(); ++m) {
    MRI_Runtime_Information_Spec ri;
    if (MRI_Runtime_Information_By_Name(metrics_[m].c_str(), &ri) != MRI_OK) die("--metric " + metrics_[m]);
    for (size_t k = 0; k < m; ++k) {
      const bool same = metric_ri[k] == ri;
      if (!same && (output_.empty() || event_name(metrics_[k]) != event_name(metrics_[m]))) continue;
      if (same)
        std::fprintf(stderr, "mri: --metric %s: the same event as --metric %s (%s); give each event once\n",
                     metrics_[m].c_str(), metrics_[k].c_str(), MRI_Runtime_Information_Name(ri));
      else
        std::fprintf(stderr, "mri: --metric %s and --metric %s would both be the event %s of the callgrind file; "
                     "give one of them\n", metrics_[k].c_str(), metrics_[m].c_str(), event_name(metrics_[m]).c_str());
      return false;
    }
    metric_ri.push_back(ri);
  }
  return true;
}

int ProfileCommand::run() {
  char** prog = program();
  bind_job_output("-o", output_);
  check_options(prog);
  const bool compensate = !no_compensation_;
  check_output(output_, true);
  claim_stdout(output_);
  if (!no_mpi_calls_) preload_mpi_wrappers();
  if (MRI_Init() != MRI_OK) die("init");
  std::vector<MRI_Runtime_Information_Spec> metric_ri;
  if (!metric_events(metric_ri)) {
    MRI_Finalize();
    return 2;
  }
  ProfileOptions opts;
  opts.callpath = !output_.empty();
  opts.unwind = unwind_;
  opts.compensate = compensate;
  // With -o, the Instances event of the callgrind file, when a profile
  // request is left for it; with kMaxMetrics metrics the file has none.
  opts.instances = !output_.empty() && metrics_.size() < kMaxMetrics;
  opts.metric_ri = metric_ri;
  opts.metric_names = metrics_;
  const MRI_Overhead_Kind kind = carried_kind(opts.callpath, metric_ri);
  // Where the overhead removed came from, for the "comp:" line: "" (the
  // application's calibration), or the fit's or --overhead's words.
  std::string overhead_source;
  Fitted fitted;
  if (fit_runs_) {
    fitted = fit_overhead(prog, fit_runs_, opts, kind);
    if (fitted.delta > 0)
      overhead_source = "fitted to this program in " + std::to_string(2 * fit_runs_ + 1) + " runs before this one";
  }
  load_program(prog);
  if (overhead_ns_ > 0) {
    // Delta_own: the application's, at most the value given. The counter
    // kind is measured only at the first release, after this: the
    // application takes its own then (MRI_OVERHEAD_OWN_MEASURED); with 0,
    // every parent would lose the whole overhead of its children from its
    // exclusive time.
    fitted.delta = overhead_ns_;
    fitted.own = MRI_OVERHEAD_OWN_MEASURED;
    overhead_source = "given with --overhead";
  }
  if (fitted.delta > 0 && MRI_Set_Overhead(kind, fitted.delta, fitted.own) != MRI_OK)
    die(fit_runs_ ? "--fit" : "--overhead");
  MRI_Region_Table every{nullptr, 0};
  const ProfileRequests placed = place_requests(every, opts);
  start(prog[0]);
  run_to_end();
  // Results of the counter profiles first: each MRI_Get_Data buffer stays
  // valid until that request's next call.
  std::vector<const MRI_Histogram_Profile_Results*> metric_prof;
  for (MRI_Request_ID id : placed.metrics) {
    void* p = nullptr;
    if (MRI_Get_Data(id, &p) != MRI_OK) die("counter results");
    metric_prof.push_back(static_cast<MRI_Histogram_Profile_Results*>(p));
  }
  void* data = nullptr;
  if (MRI_Get_Data(placed.time, &data) != MRI_OK) die("results");
  auto* prof = static_cast<MRI_Histogram_Profile_Results*>(data);
  if (!prof->active) ended_before_monitoring(prog[0]);
  // Applied, but the program exited before any region instance ended
  // (e.g. Monitor_Init() first thing, then exit() on a bad argument). A
  // killed program's note comes from final_status().
  bool measured = false;
  for (int e = 0; e < prof->nr_Elements && !measured; ++e) measured = prof->element[e].instances > 0;
  if (!measured && !killed()) ended_before_monitoring(prog[0], true);

  int nthreads = prof->nr_Elements ? prof->element[0].nr_Active_Objects : 0;
  std::vector<Row> rows;
  std::vector<std::vector<Row>> thread_rows(static_cast<size_t>(nthreads));
  double total = 0;
  for (int e = 0; e < prof->nr_Elements; ++e) {
    const MRI_Profile_Element& el = prof->element[e];
    if (el.instances == 0 && !all_) continue;
    Row r{region_name(el.region), MRI_Region_Type_Name(el.region.type), location(el.region), el.instances,
          el.inclusive, el.exclusive, el.compensated_inclusive, el.compensated_exclusive, {}, {}};
    for (const auto* mp : metric_prof) {
      const MRI_Profile_Element* me = element_for(mp, el.region);
      r.metric_incl.push_back(me ? me->inclusive : 0.0);
      r.metric_excl.push_back(me ? me->exclusive : 0.0);
    }
    if (el.region.type == MRI_REGION_PROGRAM) total = std::max(total, el.inclusive);
    rows.push_back(r);
    for (int t = 0; t < el.nr_Active_Objects && t < nthreads; ++t) {
      const MRI_Profile_Value& v = el.per_active_object[t];
      if (v.instances == 0 && !all_) continue;
      Row tr{r.name, r.type, r.where, v.instances, v.inclusive, v.exclusive, v.compensated_inclusive,
             v.compensated_exclusive, {}, {}};
      for (const auto* mp : metric_prof) {
        const MRI_Profile_Value* mv = value_for(element_for(mp, el.region), v.active_object.id);
        tr.metric_incl.push_back(mv ? mv->inclusive : 0.0);
        tr.metric_excl.push_back(mv ? mv->exclusive : 0.0);
      }
      thread_rows[size_t(t)].push_back(tr);
    }
  }
  // No PROGRAM instance ended (the program was killed, exit() was called
  // on another thread than the PROGRAM region's, or it has none): the
  // percentages are of the longest region, and the title says which.
  std::string title = "all threads (sum over threads; incl % of the PROGRAM region)";
  if (total <= 0) {
    const Row* longest = nullptr;
    for (const auto& r : rows)
      if (!longest || r.incl > longest->incl) longest = &r;
    if (longest) {
      total = longest->incl;
      title = "all threads (sum over threads; incl % of " + longest->name + " " + longest->where +
              ", the longest: no instance of a PROGRAM region ended)";
    }
  }

  MRI_Application_Status_Info st;
  MRI_Get_Application_Status(&st);
  // The --metric columns' unit: events of counters, and what the others
  // count (EXECUTION_TIME in ns, NUMBER_OF_INSTANCES in region instances).
  std::string metric_units;
  bool counters = false;
  for (size_t m = 0; m < metric_ri.size(); ++m) {
    if (metric_ri[m] == MRI_EXECUTION_TIME)
      metric_units += ", " + metrics_[m] + " columns in ns";
    else if (metric_ri[m] == MRI_NUMBER_OF_INSTANCES)
      metric_units += ", " + metrics_[m] + " columns in region instances";
    else
      counters = true;
  }
  if (counters) metric_units += ", counters in events (PAPI or the cache simulator)";
  std::printf("\nmri profile: %s (pid %d%s), %d thread%s, times in ms (EXECUTION_TIME, nanosecond clock)%s\n",
              prog[0], st.pid, job_words().c_str(), nthreads, nthreads == 1 ? "" : "s", metric_units.c_str());
  if (compensate) print_calibration(!output_.empty(), metric_ri, metrics_, overhead_source);
  const TableColumns columns{compensate, metrics_};
  print_table(title.c_str(), rows, sort_, total, columns);
  if (per_thread_ || nthreads > 1) {
    for (int t = 0; t < nthreads; ++t) {
      MRI_Active_Object_Spec ao{MRI_THREAD, prof->element[0].per_active_object[t].active_object.id};
      MRI_Active_Object_Info info;
      char thread_title[128];
      if (MRI_Get_Active_Object_Info(&ao, &info) == MRI_OK)
        std::snprintf(thread_title, sizeof thread_title, "thread %d \"%s\" (tid %d)", ao.id, info.name, info.os_id);
      else
        std::snprintf(thread_title, sizeof thread_title, "thread %d", ao.id);
      print_table(thread_title, thread_rows[size_t(t)], sort_, total, columns);
    }
  }
  if (compensate) warn_overcompensated(rows, thread_rows);
  if (!output_.empty()) write_callgrind_file(output_, prog, placed, metrics_, compensate, all_);
  int code = final_status(prog[0]);
  MRI_Finalize();
  return code;
}

}  // namespace

std::shared_ptr<Command> make_profile_command() { return std::make_shared<ProfileCommand>(); }

}  // namespace mri::cli

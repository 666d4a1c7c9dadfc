// The overhead fitted to the program, `mri profile --fit` (overhead_fit.h).
#include "overhead_fit.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "program_run.h"

namespace mri::cli {

namespace {

// One run of the fit.
struct FitRun {
  double program_ns = 0;           // the PROGRAM region's raw inclusive time
  unsigned long long busiest = 0;  // instances of the other regions, in the thread with most
  double own_ns = -1;              // the application's Delta_own of the kind, when it measured it
  double calibrated_ns = -1;       // the application's Delta_i of the kind, likewise
};

// `mri`'s standard output pointed at /dev/null while a fit run's program
// is started, so that it writes its own output there (its standard error
// stays); restored when this goes.
class QuietProgram {
 public:
  QuietProgram() {
    std::fflush(stdout);
    saved_ = dup(1);
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved_ < 0 || null < 0 || dup2(null, 1) < 0) {
      std::fprintf(stderr, "mri: --fit: cannot point the program's standard output at /dev/null: %s\n",
                   std::strerror(errno));
      std::exit(1);
    }
    close(null);
  }
  ~QuietProgram() {
    dup2(saved_, 1);
    close(saved_);
  }

 private:
  int saved_ = -1;
};

// Run `n` of `runs`: over every region, or over the PROGRAM regions only.
FitRun fit_run(char** prog, bool every_region, int n, int runs, const ProfileOptions& o, MRI_Overhead_Kind kind) {
  {
    QuietProgram quiet;
    load_program(prog);
  }
  MRI_Region_Table all{nullptr, 0};
  if (MRI_Get_Regions(&all) != MRI_OK) die("regions");
  std::vector<MRI_Region_Spec> program;
  for (int k = 0; k < all.nr_Elements; ++k)
    if (all.region[k].type == MRI_REGION_PROGRAM) program.push_back(all.region[k]);
  if (program.empty() && all.nr_Elements > 0) {
    std::fprintf(stderr, "mri: --fit: %s has no PROGRAM region (an annotated main) to time each run by; profile it "
                 "without --fit\n", prog[0]);
    MRI_Finalize();
    std::exit(2);
  }
  MRI_Region_Table regions{every_region ? nullptr : program.data(), every_region ? 0 : int(program.size())};
  // The profile's own requests, compensation included (it is part of what
  // an instance costs); the fit reads their raw values.
  ProfileRequests r = place_requests(regions, o);
  start(prog[0]);
  run_to_end();
  MRI_Application_Status_Info st;
  if (MRI_Get_Application_Status(&st) != MRI_OK) die("status");
  if (st.reason == MRI_STOP_SIGNALED || st.exec_replaced) {
    std::string how;
    const int code = program_end(st, how);
    std::fprintf(stderr, "mri: --fit: in run %d of %d, %s %s; no profile was taken\n", n, runs, prog[0],
                 st.exec_replaced ? "replaced itself with exec()" : how.c_str());
    MRI_Finalize();
    std::exit(code ? code : 1);
  }
  void* p = nullptr;
  if (MRI_Get_Data(r.time, &p) != MRI_OK) die("fit results");
  auto* prof = static_cast<MRI_Histogram_Profile_Results*>(p);
  if (!prof->active) ended_before_monitoring(prog[0]);
  FitRun out;
  bool ended = false;
  std::map<int, unsigned long long> per_thread;
  for (int e = 0; e < prof->nr_Elements; ++e) {
    const MRI_Profile_Element& el = prof->element[e];
    if (el.region.type == MRI_REGION_PROGRAM) {
      if (el.instances > 0 && el.inclusive > out.program_ns) out.program_ns = el.inclusive;
      ended = ended || el.instances > 0;
      continue;
    }
    for (int t = 0; t < el.nr_Active_Objects; ++t)
      per_thread[el.per_active_object[t].active_object.id] += el.per_active_object[t].instances;
  }
  for (const auto& [thread, count] : per_thread) out.busiest = std::max(out.busiest, count);
  if (!ended) {
    std::fprintf(stderr, "mri: --fit: in run %d of %d no instance of %s's PROGRAM region ended (exit() on another "
                 "thread than main's?): the fit needs its time\n", n, runs, prog[0]);
    MRI_Finalize();
    std::exit(1);
  }
  MRI_Overhead_Calibration cal;
  if (every_region && MRI_Get_Overhead_Calibration(&cal) == MRI_OK && cal.kind[kind].calibrated) {
    out.own_ns = cal.kind[kind].delta_own;
    out.calibrated_ns = cal.kind[kind].delta_inclusive;
  }
  delete_requests(r);
  if (every_region)
    std::fprintf(stderr, "mri: fit run %d of %d (every region, raw): %.3f ms, %llu region instances in the busiest "
                 "thread\n", n, runs, out.program_ns / 1e6, out.busiest);
  else
    std::fprintf(stderr, "mri: fit run %d of %d (only the PROGRAM region): %.3f ms\n", n, runs, out.program_ns / 1e6);
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

Fitted fit_overhead(char** prog, int pairs, const ProfileOptions& o, MRI_Overhead_Kind kind) {
  const int runs = 2 * pairs + 1;
  std::vector<FitRun> mo, pa;
  for (int n = 1; n <= runs; ++n) (n % 2 ? mo : pa).push_back(fit_run(prog, n % 2 == 0, n, runs, o, kind));
  std::vector<double> costs;  // one per run with every region in which other regions ran
  double own = -1, calibrated = -1;
  for (int k = 0; k < pairs; ++k) {
    if (pa[k].own_ns >= 0) own = pa[k].own_ns;
    if (pa[k].calibrated_ns > 0) calibrated = pa[k].calibrated_ns;
    if (pa[k].busiest == 0) continue;
    costs.push_back((pa[k].program_ns - (mo[k].program_ns + mo[k + 1].program_ns) / 2) / double(pa[k].busiest));
  }
  Fitted f;
  if (costs.empty()) {
    std::fprintf(stderr, "mri: --fit: no region besides the PROGRAM region ran, so there is no overhead to fit; the "
                 "application's calibration stays\n");
    return f;
  }
  std::string list;
  for (double c : costs) {
    char v[32];
    std::snprintf(v, sizeof v, " %.2f", c);
    list += v;
  }
  const double m = median(costs);
  if (!(m > 0)) {
    std::fprintf(stderr, "mri: --fit: the runs with every region were not slower than those without (ns an instance:"
                 "%s): the machine's noise is larger than the overhead; the application's calibration stays\n",
                 list.c_str());
    return f;
  }
  f.delta = m;
  f.own = own >= 0 ? std::min(own, m) : 0;
  std::fprintf(stderr, "mri: fit: a measured region instance costs %.2f ns in this program (median of%s); give "
               "--overhead %.2f to use it again without the fit runs\n", m, list.c_str(), m);
  // How far to trust it. The runs do the same work, so what sets them
  // apart is the machine's noise: the spread of the fitted costs, and (with
  // a single cost) of the runs with only the PROGRAM region against what
  // the instances added. Either beyond 20% is said, with what it means
  // for the compensated times. So is a fit more than 3 times off the
  // calibration either way (in place an instance costs 0.7 to 2.2 times the
  // calibrated pair: docs/ACCURACY.md): the noise of a few runs can agree
  // by chance.
  double mo_min = mo[0].program_ns, mo_max = mo[0].program_ns, mo_sum = 0;
  for (const FitRun& r : mo) {
    mo_min = std::min(mo_min, r.program_ns);
    mo_max = std::max(mo_max, r.program_ns);
    mo_sum += r.program_ns;
  }
  std::vector<double> pa_ns;
  for (const FitRun& r : pa) pa_ns.push_back(r.program_ns);
  const double added = median(pa_ns) - mo_sum / double(mo.size());
  const double cost_spread = (*std::max_element(costs.begin(), costs.end()) -
                              *std::min_element(costs.begin(), costs.end())) / m;
  const double mo_spread = added > 0 ? (mo_max - mo_min) / added : 0;
  if (cost_spread > 0.2 || mo_spread > 0.2)
    std::fprintf(stderr, "mri: warning: --fit: the fit is uncertain: %s; the compensated times may be off by about "
                 "that share of the overhead removed (a quieter machine, a longer run or more RUNS help)\n",
                 cost_spread >= mo_spread
                     ? ("the fitted costs range over " + std::to_string(int(100 * cost_spread + 0.5)) +
                        "% of their median").c_str()
                     : ("the runs with only the PROGRAM region differ by " + std::to_string(int(100 * mo_spread + 0.5)) +
                        "% of what the measured instances added").c_str());
  else if (calibrated > 0 && (m > 3 * calibrated || m < calibrated / 3))
    std::fprintf(stderr, "mri: warning: --fit: the fit is uncertain: it is %.1f times the application's calibration "
                 "(%.2f ns), more than the code around the regions explains; the runs' noise may have agreed by "
                 "chance (a longer run or more RUNS tell)\n", m / calibrated, calibrated);
  return f;
}

}  // namespace mri::cli

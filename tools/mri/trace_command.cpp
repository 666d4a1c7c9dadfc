// `mri trace`: the trace archiver. One MRI_REGION_EVENT trace request over
// every region, or over the --region regions and the regions entered
// during them; the records go to a VTF3 or OTF2 file (trace_archiver.h).
// Status: the program's; 1 when the file cannot be written or a --region
// value named no region the program published.
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "mpi_job.h"
#include "mri_export.h"
#include "output_files.h"
#include "program_run.h"
#include "region_lookup.h"
#include "trace_archiver.h"

namespace mri::cli {

namespace {

// The records per thread ring of --ring, as MRI_Set_Trace_Buffer_Size()
// takes them (include/mri.h): a power of two from 1024 to 16777216.
constexpr unsigned long long kMinRingRecords = 1024, kMaxRingRecords = 1ull << 24;

class TraceCommand : public Command {
 public:
  TraceCommand()
      : Command("trace",
                {"-o FILE [--format vtf3|otf2] [--region NAME]... [--no-subregions] [--ring RECORDS]",
                 "[--no-mpi-calls] -- PROGRAM [ARGS...]"},
                "the trace archiver: run PROGRAM and write every region enter and exit of\n"
                "every thread to FILE: VTF3 (ASCII), or OTF2 when FILE ends in .otf2 or\n"
                "with --format otf2 (FILE is then the archive's anchor file)",
                true) {
    add_file("-o,--output", output_, "FILE", "the trace file (required); %r in FILE is the MPI\nrank, %p the program's pid, %% a %");
    add_value("--format", format_, "FORMAT", "vtf3 or otf2", "vtf3 or otf2 (default: from FILE's name)");
    add_values("--region", region_values_, "NAME", "a region name",
               "trace this region and the regions it calls (default: all);\n"
               "may be repeated; NAME@FILE[:LINE] picks one of several\n"
               "regions called NAME; a region not published at the start\n"
               "(a C++ scope's) is picked out of a trace of every region");
    add_switch("--no-subregions", no_subregions_,
               "with --region: only the named regions' instances, not\n"
               "the regions they call (the others then cost nothing)");
    add_switch("--no-mpi-calls", no_mpi_calls_, "in an MPI job: leave the MPI calls out (by default each is\na region of type MPI)");
    ring_option_ = add_value("--ring", ring_, "RECORDS", "a number of records",
                             "records per thread in shared memory: a power of two from\n"
                             "1024 to 16777216 (default 65536); a smaller ring makes\n"
                             "threads wait for the archiver more often");
  }

  int run() override;

 private:
  // --ring as MRI_Set_Trace_Buffer_Size() takes it: decimal digits only (a
  // whole_number()); a usage error naming the value as given otherwise.
  unsigned ring_records() const;

  std::string output_, format_, ring_;
  std::vector<std::string> region_values_;
  bool no_subregions_ = false, no_mpi_calls_ = false;
  CLI::Option* ring_option_ = nullptr;
};

unsigned TraceCommand::ring_records() const {
  unsigned long long n = 0;
  if (!whole_number(ring_, kMaxRingRecords, n) || n < kMinRingRecords || (n & (n - 1)))
    usage_error("--ring '" + ring_ + "': the records per thread must be a power of two from 1024 to 16777216");
  return unsigned(n);
}

int TraceCommand::run() {
  namespace ex = mri::exporters;
  std::vector<std::string> region_names;
  for (const auto& v : region_values_) add_region_name(region_names, v);
  const unsigned ring = ring_option_->count() ? ring_records() : 0;
  const bool subregions = !no_subregions_;
  const std::string& output = output_;
  char** prog = program();
  if (output.empty()) usage_error("trace needs an output file (-o FILE)");
  if (!prog) usage_error("trace needs a program to run (after --)");
  bind_job_output("-o", output_);
  check_not_program("-o", output, prog[0]);
  if (!subregions && region_names.empty())
    usage_error("--no-subregions needs --region NAME (without it every region is traced)");
  ex::TraceFormat fmt = ex::trace_format_for_path(output);
  if (!format_.empty() && !ex::parse_trace_format(format_, fmt))
    usage_error("unknown trace format '" + format_ + "' (vtf3, otf2)");
  if (fmt == ex::TraceFormat::Vtf3 && output.size() >= 5 &&
      strcasecmp(output.c_str() + output.size() - 5, ".otf2") == 0)
    std::fprintf(stderr, "mri: warning: %s is written in VTF3 (text), which OTF2 readers cannot open: OTF2 is written "
                 "with --format otf2, or for a name that ends in .otf2 in lower case\n", output.c_str());
  if (fmt == ex::TraceFormat::Vtf3) claim_stdout(output);  // OTF2 refuses a stream below
  if (!no_mpi_calls_) preload_mpi_wrappers();
  if (MRI_Init() != MRI_OK) die("init");
  if (ring && MRI_Set_Trace_Buffer_Size(ring, std::max(ring, 1u << 20)) != MRI_OK) die("--ring");
  load_program(prog);

  Archiver& a = archiver();
  a.progress = isatty(2);
  a.last_progress = time(nullptr);
  ex::TraceDefinitions defs;
  defs.program = prog[0];
  defs.timer_resolution = 1'000'000'000;  // MRI timestamps are nanoseconds
  a.regions = region_indices(&defs.regions);
  a.writer = ex::make_trace_writer(fmt);
  std::string error;
  if (!a.writer || !a.writer->begin(writer_path(output), defs, error)) {
    std::fprintf(stderr, "mri: cannot write %s: %s\n", output.c_str(),
                 a.writer ? reason_only(error, writer_path(output)).c_str() : "no writer");
    MRI_Application_Finish();
    MRI_Finalize();
    return 1;
  }
  std::vector<MRI_Region_Spec> specs;
  for (const auto& name : region_names) {
    if (region_name_published(name))
      specs.push_back(find_region(name));
    else
      a.late.push_back(parse_region_value(name));
  }
  if (!a.late.empty()) {
    // The monitor can only be asked for regions it has published; the
    // others are picked out of a trace of every region here.
    a.filtering = true;
    a.subregions = subregions;
    a.selected.assign(defs.regions.size(), 0);
    for (const auto& spec : specs) a.selected[a.regions.at(key_of(spec))] = 1;
    specs.clear();
    for (const auto& v : a.late)
      std::fprintf(stderr, "mri: --region %s: no region of this name is published yet (a C++ scope publishes its region "
                   "when it first runs): every region is traced and only the records of %s are kept (more overhead than "
                   "tracing published regions)\n", v.value.c_str(),
                   subregions ? "its instances and of the regions nested in them" : "its instances");
  }
  MRI_Region_Table table{specs.empty() ? nullptr : specs.data(), int(specs.size())};
  MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
  if (MRI_Register_Call_Back_Function(archive_records) != MRI_OK) die("call-back");
  const MRI_Request_ID request = MRI_Trace_Request(&ev, &table, nullptr, nullptr);
  if (request < 0) die("trace request");
  if (!subregions && !a.filtering && MRI_Set_Trace_Subregions(request, 0) != MRI_OK) die("--no-subregions");
  start(prog[0]);
  run_to_end();
  // A late --region value that no region published during the run
  // matched: a misspelt name, or a scope that never ran. Its trace would
  // hold nothing it asked for, so none is written.
  std::string never_published;
  if (a.filtering) {
    std::vector<ex::Region> all;
    region_indices(&all);
    for (const auto& v : a.late) {
      bool seen = false;
      for (const auto& r : all) seen = seen || region_value_matches(v, r.name, r.file, r.line);
      if (!seen) never_published += (never_published.empty() ? "" : ", ") + v.value;
    }
  }
  // MRI_Wait returned TERMINATED: the final call-back has run.
  if (a.progress) std::fprintf(stderr, "\n");
  unsigned long long emitted = 0, discarded = 0;
  MRI_Active_Object_Table objects;
  if (Get_Available_Active_Objects(&objects) == MRI_OK)
    for (int k = 0; k < objects.nr_Elements; ++k) {
      if (objects.active_object[k].type != MRI_THREAD) continue;
      MRI_Trace_Statistics st;
      if (MRI_Get_Trace_Statistics(&objects.active_object[k], &st) != MRI_OK) continue;
      emitted += st.emitted;
      discarded += st.discarded;
    }
  // The archive's locations are the threads with records. A trace
  // without any (none of the --region instances ran, or the program ran
  // no region) gets the main thread's: readers such as otf2-print refuse
  // an archive without locations.
  if (a.error.empty() && never_published.empty() && a.threads == 0) add_location(a, 0, false);
  if (a.error.empty() && never_published.empty()) a.writer->finish(a.error);
  // A killed program's threads could not publish their last records: a
  // thread makes its records visible 16 at a time (docs/api.md,
  // "Accounting"), and those it had not are neither delivered nor counted
  // as emitted. Nothing to say about the file when it was not written.
  const std::string killed_note =
      a.error.empty() && never_published.empty() ? output + " holds the records written up to then; the last ones of each thread (up to 15: a "
                                 "thread publishes its records 16 at a time) may be missing and are not counted as "
                                 "emitted, and regions still open have an enter without a leave"
                      : "";
  const std::string caught_note =
      a.error.empty() && never_published.empty()
          ? "the monitor caught it and ended monitoring first, as at an exit: " + output +
                " holds every record, and the regions then open end with a leave at the signal"
          : "";
  const int code = final_status(prog[0], killed_note.c_str(), caught_note.c_str());
  if (!never_published.empty()) {
    a.writer.reset();  // removes what it wrote
    std::fprintf(stderr, "mri: --region %s: the program published no region of this name during the run (no such "
                 "region, or it never ran): %s not written\n", never_published.c_str(), output.c_str());
    MRI_Finalize();
    return 1;
  }
  if (!a.error.empty()) {
    std::fprintf(stderr, "mri: cannot write %s: %s (%s)\n", output.c_str(),
                 reason_only(a.error, writer_path(output)).c_str(),
                 ex::is_stream_output(output) ? "a stream: what was written stays there" : "no trace file left behind");
    MRI_Finalize();
    return 1;
  }
  std::string left_out =
      a.filtering ? "; " + std::to_string(a.left_out) + " outside the --region instances left out" : "";
  if (a.out_of_step)  // discarded records, or else regions the program left without their exits
    left_out += "; " + std::to_string(a.out_of_step) + " exit" + (a.out_of_step == 1 ? "" : "s") +
                (discarded ? " out of step after discarded records: the --region filter resynchronised there, "
                             "records next to the gaps may be kept or left out wrongly"
                           : " that did not close the innermost open region: the --region filter resynchronised "
                             "there");
  if (a.writer->events_written() == 0)
    std::fprintf(stderr, "mri: warning: %s holds no events: %s\n", output.c_str(),
                 !region_names.empty() ? "no instance of the traced regions ran"
                                                      : "the program ran no monitored region");
  if (discarded > 0)
    std::fprintf(stderr, "mri: warning: %s lacks the %llu discarded records: readers find enters without their "
                 "leaves, and leaves without their enters, where they were (a thread discards a record when its ring "
                 "stays full for MRI_TRACE_WAIT_MS: mri did not keep up, or was stopped; a larger --ring or "
                 "MRI_TRACE_WAIT_MS avoids it)\n",
                 output.c_str(), discarded);
  std::fprintf(stderr, "mri: wrote %s (%s): %llu events of %zu thread%s; %llu records emitted, %llu discarded%s\n",
               output.c_str(), fmt == ex::TraceFormat::Otf2 ? "OTF2" : "VTF3", (unsigned long long)a.writer->events_written(),
               a.threads, a.threads == 1 ? "" : "s", emitted, discarded, left_out.c_str());
  MRI_Finalize();
  return code;
}

}  // namespace

std::shared_ptr<Command> make_trace_command() { return std::make_shared<TraceCommand>(); }

}  // namespace mri::cli

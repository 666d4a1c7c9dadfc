// launch.h - the application's side of a run, as the tool manages it: the
// segment, starting the program, its static information, its end.
// Functions take the session with mu held unless they say otherwise.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "mri_protocol.h"
#include "session.h"

namespace mri::tool {

// What a load needs from the tool's side.
struct LoadInputs {
  std::string path;     // as the tool gave it (argv[0] when argv is NULL)
  std::string program;  // the resolved path
  proto::Geometry geo = proto::kDefaultGeometry;
  uint32_t tool_records = 0, trace_wait_ms = 0;
  uint32_t timeout_env = 0;
  std::string cache_config;
};
// Whether a load of `path` can start (the program found, the
// environment's limits and the cache configuration sound): MRI_OK with
// `in` filled, or MRI_Error with the reason, changing nothing.
int check_load(Session& s, const char* path, LoadInputs& in);
// Creates the segment, starts the program and waits until it attached and
// published its static information; places the kept requests again.
// MRI_OK, or MRI_Error with the reason (nothing left running).
int load_application(Session& s, const LoadInputs& in, char* const argv[]);
// Whether a stop reason says monitoring ended at an exec() (which then
// replaced the program, or failed after monitoring had ended for it): the
// process runs on, unmonitored, and nobody answers commands.
inline bool ended_at_exec(uint32_t reason) {
  return reason == uint32_t(proto::StopReason::kExec) || reason == uint32_t(proto::StopReason::kExecFailed);
}
// The process that attached, when it is not the one the tool started (a
// wrapper started it without exec()), while it is attached and alive; 0
// otherwise.
pid_t monitored_below(Session& s);
// Asks the application to end, and kills it when it has not ended within
// the grace (5 s). Always MRI_OK.
int finish_application(Session& s);
// Detaches the segment (marked for removal since its creation).
void release_segment(Session& s);
// Picks up regions and files published after start-up; MRI_OK, or
// MRI_Error when the application published an inconsistent table.
int refresh_static_information(Session& s);
// Whether the application process has ended; reaps it when possible.
// Without mu (reap_mu): the trace collector and the waits call it too.
bool child_exited(Session& s);
// s.program_name from /proc while the pid is the application's (reap_mu).
void read_program_name(Session& s);
// Waits up to `ms` (-1: no limit) for the exit status after the
// application announced its end. Without mu.
void await_exit_status(Session& s, int ms);

}  // namespace mri::tool

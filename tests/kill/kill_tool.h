// kill_tool.h - the tool of the kill matrix (tests/kill): it brings a real
// program (mri_testapp until_detached) into one state of a session and
// says so on a pipe, then stays there; when the program dies under it, it
// notices, says when, ends cleanly and exits.
#pragma once

#include <cstdint>
#include <string>

namespace mri::kill {

// The states of a session in which one side is killed.
enum class State : int {
  kLoading,   // the tool inside MRI_Application_Load (the program starting up, attaching)
  kWaiting,   // loaded: the program parked at its first event, waiting for a command
  kRunning,   // released with an aggregate request in place
  kStopped,   // parked at a breakpoint (MRI_Start_Stop)
  kTracing,   // running with a trace request, the records taken through the call-back
  kDraining,  // a trace ring full: the program waits for room while the tool takes records slowly
};
inline constexpr int kStates = 6;
const char* state_name(State s);

// What the tool says on its pipe.
struct Message {
  enum Kind : int {
    kReached,   // the state is reached (pid: the program's, 0 while loading)
    kNoticed,   // the program is gone: `ns` is when the tool knew (CLOCK_MONOTONIC)
    kFinished,  // MRI_Finalize returned; `zombies`: children of the tool left unreaped
    kFailed,    // the tool could not reach the state without a kill (`text` says why)
  } kind;
  int state = 0;
  int pid = 0;
  int status = 0;  // kNoticed: what the noticing call returned
  int zombies = 0;
  uint64_t ns = 0;
  char text[160] = {};
};

struct ToolRun {
  State state = State::kWaiting;
  std::string program;  // mri_testapp
  std::string marker;   // the file until_detached writes when it sees the detach
  int fd = -1;          // the pipe to the harness
};

// Runs in the tool process; returns its exit status.
int run_tool(const ToolRun& run);

}  // namespace mri::kill

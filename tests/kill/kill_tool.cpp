// kill_tool.cpp - see kill_tool.h.
#include "kill_tool.h"

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "mri.h"

namespace mri::kill {

const char* state_name(State s) {
  static const char* const kNames[kStates] = {"loading", "waiting", "running", "stopped", "tracing", "draining"};
  return kNames[int(s)];
}

namespace {

uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void say(int fd, Message m) {
  if (write(fd, &m, sizeof m) != ssize_t(sizeof m)) _exit(5);
}

int failed(const ToolRun& run, const char* what) {
  Message m{Message::kFailed};
  m.state = int(run.state);
  std::snprintf(m.text, sizeof m.text, "%s: %s", what, MRI_Get_Error_Message());
  say(run.fd, m);
  return 3;
}

void take_records() {
  MRI_Trace_Element_Spec records[256];
  for (int rounds = 0; rounds < 64 && MRI_Get_Trace_Records(records, 256) > 0; ++rounds) {
  }
}

// Children of this process that are zombies: a program libmri left unreaped.
int zombie_children() {
  int n = 0;
  DIR* d = opendir("/proc");
  if (!d) return 0;
  const pid_t self = getpid();
  while (dirent* e = readdir(d)) {
    if (std::atoi(e->d_name) <= 0) continue;
    std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + line.rfind(')') + 2, "%c %d", &state, &ppid) == 2 && ppid == self && state == 'Z')
      ++n;
  }
  closedir(d);
  return n;
}

}  // namespace

int run_tool(const ToolRun& run) {
  if (MRI_Init() != MRI_OK) return failed(run, "init");
  const bool draining = run.state == State::kDraining;
  // Draining: rings and a tool-side buffer that fill in a fraction of a
  // second of 0.05 ms steps, and a program that waits for room far longer
  // than a run lasts.
  if (draining && MRI_Set_Trace_Buffer_Size(1024, 1024) != MRI_OK) return failed(run, "buffer size");
  char* argv[] = {const_cast<char*>(run.program.c_str()), const_cast<char*>("until_detached"),
                  const_cast<char*>(run.marker.c_str()), const_cast<char*>(draining ? "0.05" : "1"), nullptr};
  Message m{Message::kReached};
  m.state = int(State::kLoading);
  m.ns = now_ns();
  say(run.fd, m);
  if (MRI_Application_Load(run.program.c_str(), argv) != MRI_OK) {
    // Killed while loading: the load's failure is how the tool notices.
    Message n{Message::kNoticed};
    n.ns = now_ns();
    n.status = MRI_Error;
    std::snprintf(n.text, sizeof n.text, "%s", MRI_Get_Error_Message());
    say(run.fd, n);
    MRI_Finalize();
    Message f{Message::kFinished};
    f.zombies = zombie_children();
    say(run.fd, f);
    return 0;
  }
  MRI_Application_Status_Info info;
  if (MRI_Get_Application_Status(&info) != MRI_OK) return failed(run, "status");
  MRI_Region_Spec step;
  if (MRI_Find_Region("step", &step) != MRI_OK) return failed(run, "find step");
  MRI_Region_Table steps{&step, 1};
  MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
  MRI_Aggregation_Spec sum{MRI_SUM, MRI_PER_THREAD};
  bool running = false;
  switch (run.state) {
    case State::kLoading:
    case State::kWaiting:
      break;
    case State::kRunning:
      if (MRI_Aggregate_Request(&ri, &steps, nullptr, nullptr, &sum) < 0) return failed(run, "request");
      if (MRI_Start() != MRI_OK) return failed(run, "start");
      running = true;
      break;
    case State::kStopped:
      if (MRI_Aggregate_Request(&ri, &steps, nullptr, nullptr, &sum) < 0) return failed(run, "request");
      if (MRI_Start_Stop(&step) != MRI_OK || MRI_Wait() != MRI_APPLICATION_STOPPED) return failed(run, "stop");
      break;
    case State::kTracing:
    case State::kDraining: {
      MRI_Runtime_Information_Spec event = MRI_REGION_EVENT;
      if (MRI_Trace_Request(&event, &steps, nullptr, nullptr) < 0) return failed(run, "trace request");
      if (!draining && MRI_Register_Call_Back_Function(take_records) != MRI_OK) return failed(run, "call-back");
      if (MRI_Start() != MRI_OK) return failed(run, "start");
      running = true;
      if (draining) {
        // Until the program's thread has found its ring full (bounded:
        // a loaded machine, 30 s).
        const MRI_Active_Object_Spec thread{MRI_THREAD, 0};
        MRI_Trace_Statistics st{};
        const uint64_t deadline = now_ns() + 30'000'000'000ull;
        while ((MRI_Get_Trace_Statistics(&thread, &st) != MRI_OK || st.waits == 0) && now_ns() < deadline)
          usleep(1000);
        if (st.waits == 0) return failed(run, "the ring never filled");
      }
      break;
    }
  }
  // (Loaded: a kill meant for the loading comes too late now.)
  m.state = int(run.state == State::kLoading ? State::kWaiting : run.state);
  m.pid = info.pid;
  m.ns = now_ns();
  say(run.fd, m);

  // Watch the program: a blocking wait while it runs, a look every 0.2 ms
  // while it is parked. Draining, take a few records at each round.
  MRI_Trace_Element_Spec records[16];
  for (;;) {
    const int st = running ? MRI_Wait_Timeout(20) : MRI_No_Wait();
    if (st == MRI_APPLICATION_TERMINATED || st == MRI_Error) {
      Message n{Message::kNoticed};
      n.ns = now_ns();
      n.status = st;
      say(run.fd, n);
      break;
    }
    if (draining) MRI_Get_Trace_Records(records, 16);
    if (!running) usleep(200);
  }
  MRI_Finalize();
  Message f{Message::kFinished};
  f.zombies = zombie_children();
  say(run.fd, f);
  return 0;
}

}  // namespace mri::kill

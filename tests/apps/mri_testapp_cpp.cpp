// mri_testapp_cpp - the C++ annotations under test: MONITOR_FUNCTION,
// MONITOR_SCOPE, guards left by exceptions, recursion, and a region in an
// inline function defined in a header (one region however many times the
// header is included).
//
//   mri_testapp_cpp recurse DEPTH      fib-like recursion "recurse" to DEPTH, 2 ms at the leaf
//   mri_testapp_cpp deep DEPTH         the same, and 4 ms in the outermost instance after
//                                      the recursion returned
//   mri_testapp_cpp throw N            N calls of "thrower", each left by an exception
//   mri_testapp_cpp nest N             "beside", then "outer" with N instances of "inner"
//                                      nested in it, then "beside" again: scopes the tool
//                                      learns of only as they first run
//   mri_testapp_cpp gaps N             two instances of "gapped", each with a chain of 200
//                                      nested "dive" instances, then "beside": makes its
//                                      trace lose records at known places. It stops its
//                                      parent (the tool: run it under `mri trace --ring
//                                      1024` with a short MRI_TRACE_WAIT_MS) with SIGSTOP
//                                      and fills its ring with N "inner" instances: in the
//                                      first "gapped" before the chain, so the chain's
//                                      enters are discarded; in the second at the chain's
//                                      bottom, so its exits are. Then SIGCONT, and 500 ms
//                                      for the tool to make room. Each signal is repeated
//                                      until /proc shows the tool stopped or running again.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "mri_testapp_inline.h"
#include "mri_monitor.h"

namespace {

void sleep_ms(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

// A chain, not a tree: DEPTH nested instances of the same region; the leaf
// sleeps 2 ms. Inclusive time must count that once, not DEPTH times.
// after_ms: slept after the recursion returned (the outermost instance).
void recurse(int depth, int after_ms = 0) {
  MONITOR_SCOPE(MRI_REGION_ROUTINE, "recurse");
  if (depth <= 1) {
    sleep_ms(2);
    return;
  }
  recurse(depth - 1);
  if (after_ms > 0) sleep_ms(after_ms);
}

void thrower() {
  MONITOR_FUNCTION();
  sleep_ms(1);
  throw std::runtime_error("leaves the region");
}

void inner() { MONITOR_SCOPE(MRI_REGION_BLOCK, "inner"); }

void beside() {
  MONITOR_SCOPE(MRI_REGION_BLOCK, "beside");
  inner();  // an "inner" outside "outer"
}

void outer(int n) {
  MONITOR_SCOPE(MRI_REGION_ROUTINE, "outer");
  for (int i = 0; i < n; ++i) inner();
}

// For "gaps": stops and continues the tool, and fills the thread's ring.
int g_fill = 0;

// Whether the parent's main thread is stopped (state T in /proc/PID/stat).
bool parent_stopped() {
  char path[64], text[512] = "";
  std::snprintf(path, sizeof path, "/proc/%d/stat", int(getppid()));
  FILE* f = std::fopen(path, "r");
  if (!f) return false;
  const size_t n = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  text[n] = '\0';
  const char* end = std::strrchr(text, ')');  // the state follows the command name
  return end && end[1] == ' ' && end[2] == 'T';
}

// Sends `signal` to the parent until it is stopped (SIGSTOP) or runs again
// (SIGCONT): a signal sent once did not always stop it before the ring
// was full. Exits with status 4 when that takes more than 10 s.
void signal_tool(int signal) {
  const bool stop = signal == SIGSTOP;
  for (int ms = 0; ms < 10000; ++ms) {
    kill(getppid(), signal);
    if (parent_stopped() == stop) return;
    sleep_ms(1);
  }
  std::fprintf(stderr, "mri_testapp_cpp: the tool did not %s\n", stop ? "stop" : "continue");
  std::exit(4);
}

void stop_tool() { signal_tool(SIGSTOP); }

void continue_tool() {
  signal_tool(SIGCONT);
  sleep_ms(500);
}

void fill_ring() {
  for (int i = 0; i < g_fill; ++i) inner();
}

void stop_tool_and_fill_ring() {
  stop_tool();
  fill_ring();
}

// `depth` nested instances of "dive", `at_bottom` in the innermost.
void dive(int depth, void (*at_bottom)()) {
  MONITOR_SCOPE(MRI_REGION_ROUTINE, "dive");
  if (depth > 1) return dive(depth - 1, at_bottom);
  at_bottom();
}

void gapped(bool lose_exits) {
  MONITOR_SCOPE(MRI_REGION_ROUTINE, "gapped");
  if (!lose_exits) {
    stop_tool();
    fill_ring();
    dive(200, continue_tool);  // the chain's enters are lost, its exits arrive
  } else {
    dive(200, stop_tool_and_fill_ring);  // the chain's enters arrive, its exits are lost
    continue_tool();
  }
}

}  // namespace

int main(int argc, char** argv) {
  MONITOR_SCOPE(MRI_REGION_PROGRAM, "main");
  if (argc < 3) {
    std::fprintf(stderr, "usage: mri_testapp_cpp recurse DEPTH | deep DEPTH | throw N | nest N | gaps N\n");
    return 2;
  }
  const int n = std::atoi(argv[2]);
  if (std::strcmp(argv[1], "recurse") == 0) {
    recurse(n);
  } else if (std::strcmp(argv[1], "deep") == 0) {
    recurse(n, 4);
  } else if (std::strcmp(argv[1], "throw") == 0) {
    int caught = 0;
    for (int i = 0; i < n; ++i) {
      try {
        thrower();
      } catch (const std::runtime_error&) {
        ++caught;
      }
    }
    if (caught != n) return 1;
  } else if (std::strcmp(argv[1], "gaps") == 0) {
    g_fill = n;
    gapped(false);
    gapped(true);
    beside();
  } else if (std::strcmp(argv[1], "nest") == 0) {
    beside();
    outer(n);
    beside();
  } else {
    return 2;
  }
  return inline_helper(3) == 3 ? 0 : 1;
}

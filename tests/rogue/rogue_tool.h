// rogue_tool.h - the real tool of tests/rogue: it loads a program through
// libmri, starts the rogue writer on one side's areas of the live segment,
// and drives the program (requests of every kind, stops, releases,
// results, trace records) for a seeded sequence of operations, then ends
// it. Whatever the rogue writes, every call must return.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rogue_writer.h"

namespace mri::rogue {

struct ToolPlan {
  std::string program;
  std::vector<std::string> args;
  bool cache_program = false;  // built with the cache simulator: histograms and cache events too
  Side side = Side::kTool;
  uint64_t seed = 1;
  uint32_t operations = 20;
  bool rogue_through_end = false;  // the rogue keeps writing through the end of the program
  bool call_back = false;          // trace records through the call-back (else fetched by the driver)
  int area = -1;                   // the one area of the side the rogue writes (index in areas_of), -1: all
  uint32_t max_pause_us = 200;     // between the rogue's bursts of writes
  bool no_rogue = false;           // a control run: the same plan without the rogue
  bool from_load = false;          // the rogue starts as soon as the segment exists, during the load
};

// What the tool saw, written to the harness through a pipe.
struct ToolReport {
  uint32_t operations = 0;  // done
  uint32_t errors = 0;      // MRI calls that returned an error (allowed: the segment is corrupt)
  int status = -1;          // MRI_Application_Status after MRI_Application_Finish, -1: unreadable
  int reason = -1;          // MRI_Stop_Reason
  int exit_code = 0;
  int signal = 0;
  int pid = 0;              // the program's
  int rogue_pid = 0;
  char area[64] = {};       // what the rogue wrote ("all" or the area's name)
  double checksum = 0;      // of the results read (so that reading them is not optimised away)
  char stage[64] = {};      // the last stage reached
};

// Where the harness can see how far the tool came (a shared mapping), for
// a hang's report.
struct Progress {
  char operation[64];
};

// Runs the plan in this process (the harness forked it). Returns the exit
// status for the harness: 0 when the plan ran to its end (MRI errors
// included), 3 when the program could not be loaded before the rogue
// started.
int run_tool(const ToolPlan& plan, Progress* progress, ToolReport& report);

}  // namespace mri::rogue

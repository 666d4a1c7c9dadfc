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
#include <time.h>

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

}  // namespace

int main(int argc, char** argv) {
  MONITOR_SCOPE(MRI_REGION_PROGRAM, "main");
  if (argc < 3) {
    std::fprintf(stderr, "usage: mri_testapp_cpp recurse DEPTH | deep DEPTH | throw N | nest N\n");
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
  } else if (std::strcmp(argv[1], "nest") == 0) {
    beside();
    outer(n);
    beside();
  } else {
    return 2;
  }
  return inline_helper(3) == 3 ? 0 : 1;
}

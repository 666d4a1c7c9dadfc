// fuzz_check.h - how a fuzz target reports a broken invariant: the
// condition (or what broke) on stderr, then abort(), which libFuzzer
// reports as a finding and saves the input of (README.md).
#pragma once

#include <cstdio>
#include <cstdlib>

[[noreturn]] inline void broken(const char* what) {
  std::fprintf(stderr, "fuzz target invariant broken: %s\n", what);
  std::abort();
}

#define CHECK(cond)             \
  do {                          \
    if (!(cond)) broken(#cond); \
  } while (0)

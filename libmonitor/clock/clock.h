// clock.h - the monitor's clock: ticks of the invariant
// TSC where the CPU has one, else CLOCK_MONOTONIC nanoseconds.
//
// Values are stored as raw ticks in the result slots and converted to
// nanoseconds by the tool with the calibrated factor the application
// publishes (AppControl::ns_per_tick), so the hot path never divides.
// rdtsc costs 7.2 ns against 16.0 ns for clock_gettime on the Intel guest
// (docs/design/0002-tsc-timer.md, with the command).
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace mri::clock {

enum class Kind : uint32_t { kTsc = 0, kMonotonic = 1 };

struct Calibration {
  Kind kind;
  double ns_per_tick;
};

// Chooses the clock and measures ticks per nanosecond against
// CLOCK_MONOTONIC over `calibration_ms`. Thread-safe; call once. Every
// monitored process spends this long at its first publication. 5 ms gives
// factors within 1.3e-7 of 20 ms ones (six pairs on the Zen 5 guest,
// docs/PERFORMANCE.md "Machines").
Calibration calibrate(unsigned calibration_ms = 5);

// The kind chosen by the last calibrate() (kMonotonic before).
extern Kind g_kind;

uint64_t monotonic_ticks();

inline uint64_t now() {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_expect(g_kind == Kind::kTsc, 1)) return __rdtsc();
#endif
  return monotonic_ticks();
}

}  // namespace mri::clock

// `mri profile --fit RUNS` (docs/api.md, "Calibrating against the program"):
// what one measured region instance costs in this program on this machine,
// from 2 RUNS + 1 runs of PROGRAM before the profile's own.
//
// Errors: a run that ends PROGRAM by a signal or exec(), a program without
// a PROGRAM region (status 2) or whose PROGRAM region never ended, and a
// failing MRI call end mri with a message. A fit that finds nothing keeps
// the application's calibration and says why.
// Thread safety: main thread only (it points descriptor 1 at /dev/null
// while a run's program starts).
#pragma once

#include "mri.h"
#include "profile_requests.h"

namespace mri::cli {

// The fitted Delta_i and Delta_own to set (MRI_Set_Overhead()), or delta 0
// when the runs found nothing to fit (said why on stderr).
struct Fitted {
  double delta = 0, own = 0;
};

// Runs `prog` 2 `pairs` + 1 times with the profile's requests `o`: without
// the other regions (only the PROGRAM region measured, "MO"), with every
// region ("PA", raw), MO, PA, ..., MO; its standard output discarded. Each
// PA run against the mean of the MO runs before and after it: (its PROGRAM
// time - theirs) / the region instances of its busiest thread. The median
// of the `pairs` values is the fitted Delta_i of `kind`, the kind the
// regions carry. Warns when the runs' noise makes it uncertain.
Fitted fit_overhead(char** prog, int pairs, const ProfileOptions& o, MRI_Overhead_Kind kind);

}  // namespace mri::cli

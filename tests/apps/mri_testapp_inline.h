// An inline function with a region, included by two translation units of
// mri_testapp_cpp: C++ gives it one static descriptor, so the application
// must publish it as one region.
#pragma once
#include "mri_monitor.h"

inline int inline_helper(int calls) {
  int done = 0;
  for (int i = 0; i < calls; ++i) {
    MONITOR_SCOPE(MRI_REGION_BLOCK, "inline_helper");
    ++done;
  }
  return done;
}

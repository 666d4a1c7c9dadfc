/* calibrate_inline.c - the calibration loop of the inline recording,
 * compiled by clang with the plugin (CMakeLists.txt): the plugin records
 * its references as it does a program's, under the calibration's own
 * switch (__mri_cachesim_calibrating). instrument.cpp times it recording
 * and not (libmonitor/compensation.cpp, the cache-simulator kind). */
#include "mri_cachesim_abi.h"

/* The instrumented code of `v[i] += 1` over an array: a load and a store
 * per element, one run of two accesses per iteration (a volatile load
 * and store: no vectorising, no merging), 128 lines swept so that a split
 * simulator's references change part as a program's do. */
void __mri_calibrate_loop(volatile double *v, unsigned long n)
{
    for (unsigned long i = 0; i < n / 2; ++i) {
        volatile double *p = &v[i & 1023];
        *p = *p + 1;
    }
}

/* calibrate_inline.c - the calibration loop of the inline recording,
 * compiled by clang with the plugin (CMakeLists.txt): the plugin records
 * its references as it does a program's, under the calibration's own
 * switch (__mri_cachesim_calibrating). instrument.cpp times it recording
 * and not (libmonitor/compensation.cpp, the cache-simulator kind). */
#include "mri_cachesim_abi.h"

/* Not instrumented (the plugin leaves __mri_ functions alone): a call that
 * ends a run of recorded references. */
__attribute__((noinline)) void __mri_calibrate_barrier(void)
{
    __asm__ volatile("" ::: "memory");
}

/* The instrumented code of `v[i] += 1` over an array: a load and a store
 * per element (volatile: no vectorising, no merging), 128 lines swept so
 * that the buffer fills as a program's does, each reference a run of its
 * own (the calls between them end the runs): the recording's per-run part
 * (the switch, the cursor's loads and store) is then paid by every
 * reference, as in code made of small routines. Runs of two in the same
 * loop without the calls calibrated 0.17 ns a reference against 0.24 with
 * them, and the three workloads of bench/compensation, loops included,
 * were left under-compensated by both (docs/ACCURACY.md, "Time under the
 * cache simulator"). */
void __mri_calibrate_loop(volatile double *v, unsigned long n)
{
    for (unsigned long i = 0; i < n / 2; ++i) {
        volatile double *p = &v[i & 1023];
        const double x = *p;
        __mri_calibrate_barrier();
        *p = x + 1;
        __mri_calibrate_barrier();
    }
}

/* mri_cachesim_abi.h - what the instrumented code and the backend's runtime
 * (instrument.cpp) share. The compiler plugin (plugin/mri_memtrace.cpp)
 * inlines the recording of every load and store into the program and
 * declares these objects itself, by name and layout: a change here is a
 * change there, and to MRI_CACHESIM_ABI_VERSION.
 *
 * The plugin records a run of references without a call between them
 * (plugin/mri_memtrace.cpp, record_run), in the thread that makes them:
 *
 *   if (__mri_cachesim_recording) {
 *     at = __mri_cachesim_cursor.next[0];
 *     if (__mri_cachesim_split.address_bits == 0 && __mri_cachesim_cursor.end[0] - at >= n)   (signed)
 *       at[i] = {a_i, size_i, type_i} for each reference i; then next[0] = at + n
 *     else
 *       __mri_cachesim_record(a_i, size_i | type_i << 32) for each
 *   }
 *
 * (the room compared signed: a cursor past the end has none; next[0]
 * moves on only if nothing else moved it meanwhile: a signal handler that
 * recorded inside the run keeps its references, less those the run wrote
 * over, and the run is dropped; a handler that handed the buffer over
 * between the compare and the store makes the store put back a cursor
 * into the other half of the buffer, which the next hand-over drops,
 * instrument.cpp). While the thread hands a
 * batch over, next equals end, so a handler's references take the call,
 * and instrument.cpp keeps them aside until the batch is through. A program with any
 * code recorded inline does not offer libmonitor to sort references by
 * part (instrument.cpp), so address_bits stays 0 in it; were it not, the
 * call would sort them.
 */
#ifndef MRI_CACHESIM_ABI_H
#define MRI_CACHESIM_ABI_H

#include "mri_monitor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MRI_CACHESIM_ABI_VERSION 2

/* Per thread (initial-exec TLS): part p's next free record and the end of
 * its buffer; both null until the thread's first reference. */
typedef struct Mri_Cachesim_Cursor {
    Monitor_Cache_Access *next[2];
    Monitor_Cache_Access *end[2];
} Mri_Cachesim_Cursor;

extern __thread Mri_Cachesim_Cursor __mri_cachesim_cursor __attribute__((tls_model("initial-exec")));
extern unsigned char __mri_cachesim_recording;
extern Monitor_Cache_Split __mri_cachesim_split;

/* The switch of the calibration loop below, which the plugin records like
 * the program's code but tests instead of __mri_cachesim_recording. */
extern unsigned char __mri_cachesim_calibrating;

/* Defined (weak, MRI_CACHESIM_ABI_VERSION) by the plugin in every module
 * whose own code it recorded: the program records inline, and its
 * recording is calibrated with the loop below. */
extern const unsigned char __mri_cachesim_inline __attribute__((weak));

/* calibrate_inline.c, compiled with the plugin: n references of the
 * instrumented `v[i] += 1` over 128 lines of `v` (1024 doubles), a load and
 * a store each time. */
void __mri_calibrate_loop(volatile double *v, unsigned long n);

/* Records one reference the inline path did not: a full buffer, the
 * thread's first reference, or one that may straddle parts. `meta` is the
 * size in bytes | the type << 32. */
void __mri_cachesim_record(void *address, unsigned long long meta);

#ifdef __cplusplus
}
#endif

#endif

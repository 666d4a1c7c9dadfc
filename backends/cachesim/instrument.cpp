// instrument.cpp - the memory-access instrumentation of the cache-simulator
// backend: clang's SanitizerCoverage load/store callbacks
// (-fsanitize-coverage=edge,trace-loads,trace-stores) append each reference
// to a per-thread buffer; a full buffer goes to the simulator in one batch
// (Monitor_Cache_Simulate), and libmonitor flushes it at the enter and exit
// of measured regions while recording. Never a simulator call per reference.
//
// This file is linked into the instrumented executable (a static library)
// and is itself not instrumented, nor is libmonitor: the monitor's own
// references are never simulated.
//
// Cost per reference (docs/PERFORMANCE.md): dormant (no cache request) a
// call, one byte load and a predictable branch; recording, a 16-byte store
// into the buffer and, every kBatch references, the simulation of the batch.
#include <emmintrin.h>
#include <pthread.h>

#include <cstdint>

#include "mri_monitor.h"

namespace {

// References per batch: 4096 x 16 bytes = 64 KiB per thread. The batch is
// written sequentially and read once by the simulator; smaller batches
// (1024) cost about 2% more in the simulator's per-batch work, larger ones
// only more memory.
constexpr uint32_t kBatch = 4096;

// Zero-initialised and trivially destructible: a thread_local access is then
// one %fs-relative address, without the lazy-initialisation guard call that a
// thread_local with a constructor would add to every reference.
// initial-exec: the library is linked into the executable, so the linker
// turns it into local-exec (no __tls_get_addr).
// Line-aligned, records at 16-byte offsets: no record straddles two lines.
struct alignas(64) Buffer {
  uint32_t n;      // references buffered
  uint32_t limit;  // 0 until the thread's first reference, then kBatch
  alignas(16) Monitor_Cache_Access ref[kBatch];
};
__attribute__((tls_model("initial-exec"))) thread_local Buffer t_buffer;

// Set by libmonitor while a cache request is in place (relaxed: a missed
// or extra reference at the switch is harmless; the switches happen while
// the program is stopped anyway).
unsigned char g_recording = 0;

pthread_key_t g_exit_key;
pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;

void flush_this_thread() {
  Buffer& b = t_buffer;
  if (b.n == 0) return;
  const uint32_t n = b.n;
  b.n = 0;  // first: the simulator call cannot come back here, but a signal handler could
  Monitor_Cache_Simulate(b.ref, n);
}

// A thread's remaining references at its exit.
void at_thread_exit(void*) { flush_this_thread(); }

void create_exit_key() { pthread_key_create(&g_exit_key, at_thread_exit); }

// The buffer is full, or this is the thread's first reference. Returns the
// index to write at.
__attribute__((noinline)) uint32_t make_room() {
  Buffer& b = t_buffer;
  if (b.limit == 0) {
    pthread_once(&g_exit_once, create_exit_key);
    pthread_setspecific(g_exit_key, &b);  // non-null: the destructor runs at the thread's exit
    b.limit = kBatch;
    return b.n;
  }
  flush_this_thread();
  return 0;
}

// The reference that finds the buffer full (or is the thread's first).
__attribute__((noinline)) void record_after_room(const void* address, uint32_t size, uint32_t type) {
  Buffer& b = t_buffer;
  const uint32_t i = make_room();
  b.ref[i] = Monitor_Cache_Access{reinterpret_cast<uintptr_t>(address), size, type};
  b.n = i + 1;
}

// The fast path has no call but a tail call, hence no stack frame: saving a
// register around make_room() used to cost every reference a push and a pop.
template <uint32_t Size, uint32_t Type>
__attribute__((always_inline)) inline void record(const unsigned char* recording, const void* address) {
  if (!__atomic_load_n(recording, __ATOMIC_RELAXED)) return;
  Buffer& b = t_buffer;
  const uint32_t i = b.n;
  if (__builtin_expect(i == b.limit, 0)) return record_after_room(address, Size, Type);
  // One 16-byte store instead of two 8-byte ones: stores are what recording
  // costs a reference-dense loop (docs/ACCURACY.md, time under the simulator).
  const __m128i r = _mm_set_epi64x((int64_t(Type) << 32) | Size, int64_t(reinterpret_cast<uintptr_t>(address)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&b.ref[i]), r);
  b.n = i + 1;
}

void flush_for_monitor() { flush_this_thread(); }

// The overhead calibration: a callback like the real ones, but testing its
// own switch (flipping g_recording would make the other threads record),
// called through a pointer the compiler cannot see through: a call per
// reference, as in the instrumented code.
unsigned char g_calibration_recording = 0;
__attribute__((noinline)) void calibration_load8(void* p) { record<8, 0>(&g_calibration_recording, p); }
__attribute__((noinline)) void calibration_store8(void* p) { record<8, 1>(&g_calibration_recording, p); }
void (*volatile g_calibration_load)(void*) = calibration_load8;
void (*volatile g_calibration_store)(void*) = calibration_store8;

unsigned long calibrate_for_monitor(unsigned long n, int recording) {
  Buffer& b = t_buffer;
  if (b.limit == 0) make_room();  // the thread's first use: sets the limit, flushes nothing
  const uint32_t keep = b.n;
  const unsigned long room = b.limit - keep;  // never reaches make_room(): no flush
  if (n > room) n = room;
  n &= ~1ul;
  __atomic_store_n(&g_calibration_recording, recording ? 1 : 0, __ATOMIC_RELAXED);
  // The instrumented code of `v[i] += 1` over a small array: a load and a
  // store, each with its callback. This loop, like one of bare callbacks,
  // still hides most of the recording behind the calls, which a program's
  // dense references do not (docs/ACCURACY.md, "Time under the cache
  // simulator": 0.1 ns calibrated, 0.2-0.6 ns in programs).
  volatile double v[8] = {};
  void (*const load)(void*) = g_calibration_load;
  void (*const store)(void*) = g_calibration_store;
  for (unsigned long i = 0; i < n / 2; ++i) {
    volatile double* p = &v[i & 7];
    load(const_cast<double*>(p));
    const double x = *p;
    store(const_cast<double*>(p));
    *p = x + 1;
  }
  b.n = keep;  // discarded
  return n;
}

const Monitor_Cache_Backend kBackend = {MONITOR_CACHE_BACKEND_VERSION, &g_recording, flush_for_monitor,
                                        calibrate_for_monitor};

// Registers with libmonitor before main(); libmonitor's own constructor
// (which attaches to the tool) has run by then, since the executable's
// constructors run after those of the shared libraries it needs.
__attribute__((constructor)) void register_backend() { Monitor_Register_Cache_Backend(&kBackend); }

}  // namespace

// The SanitizerCoverage callbacks (clang >= 14). One per access size; the
// argument is the address loaded from or stored to.
extern "C" {
#define MRI_CACHESIM_CALLBACKS(bytes)                                                        \
  void __sanitizer_cov_load##bytes(void* p) { record<bytes, 0>(&g_recording, p); }            \
  void __sanitizer_cov_store##bytes(void* p) { record<bytes, 1>(&g_recording, p); }
MRI_CACHESIM_CALLBACKS(1)
MRI_CACHESIM_CALLBACKS(2)
MRI_CACHESIM_CALLBACKS(4)
MRI_CACHESIM_CALLBACKS(8)
MRI_CACHESIM_CALLBACKS(16)
#undef MRI_CACHESIM_CALLBACKS
}

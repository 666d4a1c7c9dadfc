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
// call, one byte load and a predictable branch; recording, the part of the
// reference's line (where the simulator is split in two, g_split), a
// 16-byte store into that part's buffer and, every kBatch references of a
// part, the simulation of the batch.
#include <emmintrin.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "mri_cachesim_abi.h"
#include "mri_monitor.h"

// The callbacks' fast path is not instrumented by the sanitizers of the
// ASan and TSan builds: it touches only the thread's own buffer and the
// split that libmonitor writes before recording starts, and checking
// those accesses made recording 3 ns per reference under ASan, far more
// in the calibration loop than among a program's own loads, which broke
// the compensation of time under the simulator in those builds.
#define MRI_UNCHECKED __attribute__((no_sanitize("address", "thread", "undefined")))

namespace {

// References per batch: 4096 x 16 bytes = 64 KiB per part and thread, in
// each of the part's two halves (below). The batch is
// written sequentially and read once by the simulator; smaller batches
// (1024) cost about 2% more in the simulator's per-batch work, larger ones
// only more memory.
constexpr uint32_t kBatch = 4096;

// A thread's buffers are mapped at its first reference (Buffers, below);
// what every reference reads is its cursor (__mri_cachesim_cursor, below):
// zero-initialised and trivially destructible, so a thread_local access is
// one %fs-relative address, without the lazy-initialisation guard call that
// a thread_local with a constructor would add to every reference.
// initial-exec: the library is linked into the executable, so the linker
// turns it into local-exec (no __tls_get_addr).
// Page-aligned (mapped), records at 16-byte offsets: no record straddles
// two lines. One buffer per part of the simulator (the split): each part's
// references in program order, which is all a part needs
// (simulator/cachesim.h).
//
// Each buffer has two halves of kBatch, filled in turn: a hand-over moves
// the cursor to the other half. A commit (the inline recording's, the
// callbacks') compares the cursor with where it wrote, then stores: a
// signal handler that hands the buffer over between the two makes the
// store put back a cursor from before. Were the half the same, the
// records between the handler's and that cursor, simulated already,
// would count again (up to a batch; one test run in about 80 under load).
// With the halves, that cursor points into the other
// half: the next hand-over finds it outside the half in use and drops
// what it cannot tell (at most the handler's references and the run's
// few, as when a handler interrupts a run) instead. A cursor above the
// half's end takes the slow path (the inline room check is signed).
// Comparing and storing in one instruction (cmpxchg without a lock) cost
// 3.1 ns more a run (0.27 -> 3.4 ns a reference in the calibration loop).
struct alignas(64) Buffer {
  Monitor_Cache_Access ref[2][2 * kBatch];
};

}  // namespace

// What the instrumented code reads, under reserved names: the callbacks
// below, and the recording that the compiler plugin (plugin/) inlines
// into the program, which declares the same three objects
// (mri_cachesim_abi.h).
extern "C" {
// Where part p's next reference goes, and the end of its buffer (null
// until the thread's first reference): a pointer compare and an increment
// on the fast path, no index arithmetic.
__attribute__((tls_model("initial-exec"))) __thread Mri_Cachesim_Cursor __mri_cachesim_cursor;
// Set by libmonitor while a cache request is in place (relaxed: a missed
// or extra reference at the switch is harmless; the switches happen while
// the program is stopped anyway).
unsigned char __mri_cachesim_recording = 0;
// Set by libmonitor before recording starts, never changed after: the
// reference to line L = address >> shift is part (L & mask) != 0's. Mask 0
// (not split): everything is part 0's.
Monitor_Cache_Split __mri_cachesim_split = {6, 0, 0};
// The calibration loop's own switch (calibrate_inline.c).
unsigned char __mri_cachesim_calibrating = 0;
}

namespace {

pthread_key_t g_exit_key;
pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;

// A signal handler can interrupt its thread while the thread hands a batch
// over (Monitor_Cache_Simulate_Part reads the buffer, or copies it for the
// simulation thread), and record references of its own. They must not go
// into the batch being read, nor start a hand-over inside the hand-over (the
// simulator is not reentrant, and its mutex is held). So while a thread
// hands a batch over, the part's buffer reads full: the handler's references
// take the slow path (record_after_room), whose flush returns at once
// (t_handing_over), and they are set aside here, to be simulated right after
// the batch, in order. A handler that records more than kAside references
// during one hand-over loses the rest, and says so once on stderr.
constexpr uint32_t kAside = 2048;
struct alignas(64) Aside {
  Monitor_Cache_Access ref[2][kAside];
  uint32_t count[2];        // set-aside references per part
  uint32_t handing_over;    // this thread is inside a hand-over (any part)
};

// A thread's buffers and its handlers' aside, 320 KiB: mapped at the
// thread's first reference (make_room), unmapped at its exit. Not in
// static TLS: glibc takes static TLS from the thread's stack, so a thread
// the program created with a stack under 320 KiB could not start
// (docs/design/0015-reference-buffers-per-thread.md).
struct Buffers {
  Buffer refs;
  Aside aside;
};
__attribute__((tls_model("initial-exec"))) thread_local Buffers* t_buffers;
// The thread is past its exit's flush, or no memory was left for its
// buffers: its references are not recorded.
__attribute__((tls_model("initial-exec"))) thread_local bool t_no_buffers;
std::atomic<bool> g_aside_overflowed{false};
std::atomic<bool> g_mapping_failed{false};

void set_aside(uint32_t part, uintptr_t address, uint32_t size, uint32_t type) {
  Aside& a = t_buffers->aside;
  const uint32_t i = __atomic_load_n(&a.count[part], __ATOMIC_RELAXED);
  if (i < kAside) {
    a.ref[part][i] = Monitor_Cache_Access{address, size, type};
    std::atomic_signal_fence(std::memory_order_seq_cst);
    __atomic_store_n(&a.count[part], i + 1, __ATOMIC_RELAXED);
    return;
  }
  if (!g_aside_overflowed.exchange(true, std::memory_order_relaxed)) {
    static const char kMessage[] =
        "mri-cachesim: a signal handler recorded more than 2048 memory references while its thread handed a batch "
        "to the simulator; the references beyond those are not simulated\n";
    [[maybe_unused]] const ssize_t w = write(2, kMessage, sizeof kMessage - 1);  // async-signal-safe
  }
}

// Commits the reference just written at `at`, unless a signal handler that
// recorded references of its own moved the cursor meanwhile: its references
// are kept, and this one is dropped (as the inline recording does,
// mri_cachesim_abi.h). Committing over a moved cursor would drop the
// handler's, or, where the handler handed the buffer over, make the slots
// between its references and this one count again in the next batch. A
// handler between the compare and the store keeps its first reference
// (in this one's slot) and loses the others: the store puts the cursor
// back over them (up to 1 handler run in 60 in mri_cacheapp signals,
// whose loop is all callbacks); where it handed the buffer over
// meanwhile: Buffer, above.
MRI_UNCHECKED __attribute__((always_inline)) inline void commit(Mri_Cachesim_Cursor& c, uint32_t part,
                                                                  Monitor_Cache_Access* at) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (__builtin_expect(c.next[part] == at, 1)) c.next[part] = at + 1;
}

void flush_part(uint32_t part) {
  Mri_Cachesim_Cursor& c = __mri_cachesim_cursor;
  if (c.end[part] == nullptr) return;
  Aside& a = t_buffers->aside;
  // A signal handler's flush (its region's enter or exit, or its own full
  // buffer) inside this thread's hand-over: its references wait aside.
  if (__atomic_load_n(&a.handing_over, __ATOMIC_RELAXED)) return;
  Monitor_Cache_Access* const end = c.end[part];
  Monitor_Cache_Access* const first = end - kBatch;  // the half in use
  if (c.next[part] == first && __atomic_load_n(&a.count[part], __ATOMIC_RELAXED) == 0) return;
  __atomic_store_n(&a.handing_over, 1u, __ATOMIC_RELAXED);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // The buffer reads full from here: a handler's references take the slow
  // path, aside. One instruction: whatever a handler appended before it is
  // in the batch.
  Monitor_Cache_Access* const last = __atomic_exchange_n(&c.next[part], end, __ATOMIC_RELAXED);
  // Outside the half: a commit overtaken by a handler's hand-over put back
  // a cursor from the other half (Buffer, above); nothing here is known
  // to be new.
  const unsigned long n = last >= first && last <= end ? static_cast<unsigned long>(last - first) : 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (n) Monitor_Cache_Simulate_Part(part, first, n);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // The other half; a handler's references go into it again, after those
  // set aside. The end first: until the cursor follows, a handler's
  // reference finds it past the end (the slow path, aside) or writes into
  // the new half from its start, and is then written over.
  Monitor_Cache_Access* const base = t_buffers->refs.ref[part];
  Monitor_Cache_Access* const other = first == base ? base + kBatch : base;
  c.end[part] = other + kBatch;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  c.next[part] = other;
  // Those set aside, oldest first; a handler adds to them now only if it
  // fills the buffer. The compare-exchange is one instruction: a handler
  // runs before or after it, never inside.
  for (uint32_t done = 0;;) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    uint32_t k = __atomic_load_n(&a.count[part], __ATOMIC_RELAXED);
    if (k == done && __atomic_compare_exchange_n(&a.count[part], &k, 0u, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      break;
    if (k > done) {
      Monitor_Cache_Simulate_Part(part, a.ref[part] + done, k - done);
      done = k;
    }
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  __atomic_store_n(&a.handing_over, 0u, __ATOMIC_RELAXED);
}

// Part 1 first: where a thread of its own simulates it, part 0 is then
// simulated here meanwhile.
void flush_this_thread() {
  flush_part(1);
  flush_part(0);
}

// Buffers of threads that ended, kept for the next threads' first
// references: mapping and unmapping 320 KiB, and faulting its pages in
// again, made a thread with one reference cost 1.5 times its creation and
// join alone, and one with a batch of references 5.6 times
// (docs/PERFORMANCE.md, "Short threads under the simulator"). At most
// kSpare (5 MiB); beyond that a thread's buffers are unmapped at its exit.
// One slot, one exchange: taking and giving back are lock-free and
// async-signal-safe (a thread's first reference may be its handler's), and
// a slot's buffers go to one thread only.
constexpr int kSpare = 16;
std::atomic<Buffers*> g_spare[kSpare];

Buffers* take_spare() {
  for (auto& slot : g_spare)
    if (slot.load(std::memory_order_relaxed))
      if (Buffers* const b = slot.exchange(nullptr, std::memory_order_acquire)) return b;
  return nullptr;
}

void give_back(Buffers* b) {
  for (auto& slot : g_spare) {
    Buffers* expected = nullptr;
    if (slot.compare_exchange_strong(expected, b, std::memory_order_release, std::memory_order_relaxed)) return;
  }
  munmap(b, sizeof *b);
}

// A thread's remaining references at its exit, then its buffers go to
// the next thread (give_back). A
// reference after this (a later thread-local destructor's, a handler's)
// is not recorded: before the buffers left static TLS it stayed in them,
// never simulated, alike.
void at_thread_exit(void*) {
  flush_this_thread();
  Mri_Cachesim_Cursor& c = __mri_cachesim_cursor;
  __atomic_store_n(&t_no_buffers, true, __ATOMIC_RELAXED);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  for (uint32_t p = 0; p < 2; ++p) c.end[p] = c.next[p] = nullptr;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  Buffers* const b = __atomic_exchange_n(&t_buffers, nullptr, __ATOMIC_RELAXED);
  if (b) give_back(b);
}

void create_exit_key() { pthread_key_create(&g_exit_key, at_thread_exit); }

// The thread's buffers, mapped at its first reference. False when there is
// no memory for them (said once on stderr; the thread records nothing).
bool map_buffers() {
  if (__atomic_load_n(&t_buffers, __ATOMIC_RELAXED)) return true;
  void* m = take_spare();
  if (m) {
    // An ended thread's: its exit flushed what was set aside; zero as a
    // new mapping is, all the same (a thread that left from inside a
    // signal handler may have left its hand-over unfinished).
    Aside& a = static_cast<Buffers*>(m)->aside;
    a.count[0] = a.count[1] = 0;
    a.handing_over = 0;
  } else {
    m = mmap(nullptr, sizeof(Buffers), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (m == MAP_FAILED) {
    __atomic_store_n(&t_no_buffers, true, __ATOMIC_RELAXED);
    if (!g_mapping_failed.exchange(true, std::memory_order_relaxed)) {
      static const char kMessage[] =
          "mri-cachesim: no memory for a thread's reference buffers (320 KiB): that thread's memory references are "
          "not simulated\n";
      [[maybe_unused]] const ssize_t w = write(2, kMessage, sizeof kMessage - 1);  // async-signal-safe
    }
    return false;
  }
  // A signal handler's first reference may have mapped them meanwhile:
  // the handler's stay (one instruction decides).
  Buffers* expected = nullptr;
  if (!__atomic_compare_exchange_n(&t_buffers, &expected, static_cast<Buffers*>(m), false, __ATOMIC_RELAXED,
                                   __ATOMIC_RELAXED))
    give_back(static_cast<Buffers*>(m));
  return true;
}

// Part `part`'s buffer is full, or this is the thread's first reference.
// Returns where to write, or null where the thread records nothing
// (t_no_buffers).
__attribute__((noinline)) Monitor_Cache_Access* make_room(uint32_t part) {
  Mri_Cachesim_Cursor& c = __mri_cachesim_cursor;
  if (c.end[part] == nullptr) {
    if (__atomic_load_n(&t_no_buffers, __ATOMIC_RELAXED) || !map_buffers()) return nullptr;
    pthread_once(&g_exit_once, create_exit_key);
    pthread_setspecific(g_exit_key, &c);  // non-null: the destructor runs at the thread's exit
    Buffer& refs = t_buffers->refs;
    for (uint32_t p = 0; p < 2; ++p) {
      c.next[p] = refs.ref[p];
      c.end[p] = refs.ref[p] + kBatch;
    }
    return c.next[part];
  }
  flush_part(part);
  return c.next[part];
}

// The reference that finds its buffer full (or is the thread's first). Still
// full after make_room(): a signal handler's reference inside its thread's
// hand-over.
__attribute__((noinline)) void record_after_room(uint32_t part, uintptr_t address, uint32_t size, uint32_t type) {
  Monitor_Cache_Access* at = make_room(part);
  if (!at) return;
  if (at >= __mri_cachesim_cursor.end[part]) return set_aside(part, address, size, type);
  *at = Monitor_Cache_Access{address, size, type};
  commit(__mri_cachesim_cursor, part, at);
}

void record_in(uint32_t part, uintptr_t address, uint32_t size, uint32_t type) {
  Mri_Cachesim_Cursor& c = __mri_cachesim_cursor;
  Monitor_Cache_Access* at = c.next[part];
  if (at >= c.end[part]) return record_after_room(part, address, size, type);
  *at = Monitor_Cache_Access{address, size, type};
  commit(c, part, at);
}

// A reference that straddles two lines of different parts: into both
// buffers (each part simulates its own line of it; the part of the first
// byte counts the reference).
__attribute__((noinline)) void record_straddling(uintptr_t a, uint32_t size, uint32_t type) {
  record_in(0, a, size, type);
  record_in(1, a, size, type);
}


// The fast path has no call but a tail call, hence no stack frame: saving a
// register around a call to make_room() would cost every reference a push and
// a pop.
template <uint32_t Size, uint32_t Type>
MRI_UNCHECKED __attribute__((always_inline)) inline void record(const unsigned char* recording, const void* address) {
  if (!__atomic_load_n(recording, __ATOMIC_RELAXED)) return;
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  // The part of the line of the first byte ((line & mask) != 0 without the
  // shift), and of the last: a reference that straddles two lines (lines
  // are 16 bytes or more where the simulator is split,
  // monitor/simulator_setup.cpp, so never three) of different parts goes
  // into both buffers, and each part simulates its own line of it.
  // Nothing else needs a second look.
  const uint64_t bits = __mri_cachesim_split.address_bits;
  const uint32_t part = (a & bits) != 0;
  if (Size > 1 && __builtin_expect((((a + Size - 1) & bits) != 0) != part, 0))
    return record_straddling(a, Size, Type);
  Mri_Cachesim_Cursor& c = __mri_cachesim_cursor;
  Monitor_Cache_Access* at = c.next[part];
  if (__builtin_expect(at >= c.end[part], 0)) return record_after_room(part, a, Size, Type);
  // One 16-byte store instead of two 8-byte ones: stores are what recording
  // costs a reference-dense loop (docs/ACCURACY.md, time under the simulator).
  const __m128i r = _mm_set_epi64x((int64_t(Type) << 32) | Size, int64_t(a));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(at), r);
  commit(c, part, at);
}

// A reference of any size, for the out-of-line path of the inlined
// recording (__mri_cachesim_record): vector references may touch more than
// two lines. Part 1 holds every line not 0 modulo the split's modulus, so
// a reference over two lines or more always touches it, and touches part 0
// too when one of its lines is a multiple of the modulus.
MRI_UNCHECKED void record_any(uintptr_t a, uint32_t size, uint32_t type) {
  const uint64_t mask = __mri_cachesim_split.mask;
  const uint32_t shift = __mri_cachesim_split.shift;
  const uint64_t first = a >> shift, last = (a + (size ? size : 1) - 1) >> shift;
  if (mask == 0 || first == last) return record_in((first & mask) != 0, a, size, type);
  if ((last & ~mask) >= first) return record_straddling(a, size, type);
  record_in(1, a, size, type);
}

void flush_for_monitor() { flush_this_thread(); }

// The overhead calibration: a callback like the real ones, but testing its
// own switch (flipping g_recording would make the other threads record),
// called through a pointer the compiler cannot see through: a call per
// reference, as in the instrumented code.
unsigned char g_calibration_recording = 0;
MRI_UNCHECKED __attribute__((noinline)) void calibration_load8(void* p) { record<8, 0>(&g_calibration_recording, p); }
MRI_UNCHECKED __attribute__((noinline)) void calibration_store8(void* p) { record<8, 1>(&g_calibration_recording, p); }
void (*volatile g_calibration_load)(void*) = calibration_load8;
void (*volatile g_calibration_store)(void*) = calibration_store8;

// The array both calibration loops sweep: 128 lines, so that where the
// simulator is split the references change part as a program's do.
volatile double g_calibration_array[1024] alignas(64);

// The inline recording's calibration (calibrate_inline.c, compiled with the
// plugin where it is built): the same array, the same two references per
// element, recorded as the plugin records a program's. MRI_CACHESIM_PLUGIN
// is defined where the plugin is built (CMakeLists.txt).
void calibrate_inline(unsigned long n, int recording) {
#ifdef MRI_CACHESIM_PLUGIN
  __atomic_store_n(&__mri_cachesim_calibrating, recording ? 1 : 0, __ATOMIC_RELAXED);
  __mri_calibrate_loop(g_calibration_array, n);
  __atomic_store_n(&__mri_cachesim_calibrating, 0, __ATOMIC_RELAXED);
#else
  (void)n;
  (void)recording;
#endif
}

// Whether the program's code records inline: the plugin marks every module
// it instruments (mri_cachesim_abi.h). A program that mixes both
// instrumentations is calibrated as inline.
bool records_inline() {
#ifdef MRI_CACHESIM_PLUGIN
  return &__mri_cachesim_inline != nullptr;
#else
  return false;
#endif
}

unsigned long calibrate_for_monitor(unsigned long n, int recording) {
  Mri_Cachesim_Cursor& c = __mri_cachesim_cursor;
  // The thread's first use: sets the buffers up, flushes nothing; without
  // them, no room (0: not calibrated, and says why).
  if (c.end[0] == nullptr && !make_room(0)) return 0;
  Monitor_Cache_Access* const keep[2] = {c.next[0], c.next[1]};
  // Never reaches make_room(): no flush, whichever part the references are.
  const unsigned long room = static_cast<unsigned long>(std::max<long>(0, std::min(c.end[0] - keep[0], c.end[1] - keep[1])));
  if (n > room) n = room;
  n &= ~1ul;
  if (records_inline()) {
    calibrate_inline(n, recording);
  } else {
    __atomic_store_n(&g_calibration_recording, recording ? 1 : 0, __ATOMIC_RELAXED);
    // The instrumented code of `v[i] += 1` over an array: a load and a
    // store, each with its callback. This loop, like one of bare callbacks,
    // still hides most of the recording behind the calls, which a program's
    // dense references do not (docs/ACCURACY.md, "Time under the cache
    // simulator": 0.1 ns calibrated, 0.2-0.6 ns in programs). Sweeping
    // the array, the references change part where the simulator is split,
    // which costs: 0.44 ns calibrated on the Zen 5 host against 0.24
    // unsplit (an 8-element array, one line, gave 0.24 for both).
    // Calibrated once, by one thread.
    void (*const load)(void*) = g_calibration_load;
    void (*const store)(void*) = g_calibration_store;
    for (unsigned long i = 0; i < n / 2; ++i) {
      volatile double* p = &g_calibration_array[i & 1023];
      load(const_cast<double*>(p));
      const double x = *p;
      store(const_cast<double*>(p));
      *p = x + 1;
    }
  }
  c.next[0] = keep[0];  // discarded
  c.next[1] = keep[1];
  return n;
}

// Registers with libmonitor before main(); libmonitor's own constructor
// (which attaches to the tool) has run by then, since the executable's
// constructors run after those of the shared libraries it needs. A
// program that records inline does not offer to sort by part (`split`
// null): the plugin's records sorted by part cost 1.5 ns a reference
// against 0.2 unsorted, and libmonitor sorts at the hand-over for 0.6-0.7
// (the callbacks sort for 0.2 more).
__attribute__((constructor)) void register_backend() {
  static Monitor_Cache_Backend backend = {MONITOR_CACHE_BACKEND_VERSION, &__mri_cachesim_recording,
                                          flush_for_monitor, calibrate_for_monitor, &__mri_cachesim_split};
  if (records_inline()) backend.split = nullptr;
  Monitor_Register_Cache_Backend(&backend);
}

}  // namespace

// The SanitizerCoverage callbacks (clang >= 14). One per access size; the
// argument is the address loaded from or stored to.
extern "C" {
#define MRI_CACHESIM_CALLBACKS(bytes)                                                        \
  MRI_UNCHECKED void __sanitizer_cov_load##bytes(void* p) { record<bytes, 0>(&__mri_cachesim_recording, p); }  \
  MRI_UNCHECKED void __sanitizer_cov_store##bytes(void* p) { record<bytes, 1>(&__mri_cachesim_recording, p); }
MRI_CACHESIM_CALLBACKS(1)
MRI_CACHESIM_CALLBACKS(2)
MRI_CACHESIM_CALLBACKS(4)
MRI_CACHESIM_CALLBACKS(8)
MRI_CACHESIM_CALLBACKS(16)
#undef MRI_CACHESIM_CALLBACKS

MRI_UNCHECKED void __mri_cachesim_record(void* address, unsigned long long meta) {
  if (!__atomic_load_n(&__mri_cachesim_recording, __ATOMIC_RELAXED)) return;
  record_any(reinterpret_cast<uintptr_t>(address), uint32_t(meta), uint32_t(meta >> 32));
}
}

// hierarchy.cpp - the simulation engine.
//
// One file on purpose (about 1800 lines): the kernels are specialisations
// of one access loop over one engine's layout, and gcc inlines and
// specialises them only when it sees them together.
//
// Layout. Each level keeps, per instance, sets x ways tag words, one set
// contiguous. A tag word is (line number << 1) | dirty, where the line
// number is the address shifted right by log2(line size) (the whole number,
// not only the bits above the set index: one compare needs no masking). In
// each set the ways are kept in recency order for LRU (way 0 = most recent)
// and in insertion order for FIFO (way 0 = newest), so the eviction victim
// is always the last way and the common hit is a compare with way 0.
// Invalid ways hold kInvalid, which no line number can match.
//
// Specialisation. simulate() calls one of five kernels chosen when the
// hierarchy or its monitors change (never per access): {default,
// cachegrind-compatible} x {no monitor enabled, some monitor enabled}, and
// for the default one with monitors, whether any counts L1 hits. The
// default one has versions for common geometries (default_kernel), with
// their sets searched by AVX-512 compares where that is the process's set
// search (run_default_vec, lookup_lru_vec; set_search.cpp chooses). The
// default kernel's loop handles an L1 hit of a read, or of a write to a line
// that is already dirty, inline; everything else goes to the out-of-line
// general path. On the matrix-multiply streams of bench/sim_throughput.cpp
// about 96% (ikj order) and 50% (ijk order) of references stay inline.
//
// Parts. Hierarchy holds one engine (Impl) per part: one, or two for a
// split hierarchy (cachesim.h, split_reason). Each engine is a whole
// hierarchy with its own mutex, counters and copy of every monitor, and
// simulates only its own lines (Impl::own: general_access skips the other
// part's lines of a straddling reference); readers sum over the engines,
// monitor changes go to all of them.
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "cachesim.h"
#include "set_search.h"

namespace mri::sim {

namespace {

constexpr uint64_t kInvalid = ~uint64_t{1};
constexpr uint64_t kDirty = 1;

// Counter classes.
enum Class : uint32_t { kClsRead = 0, kClsWrite = 1, kClsFetch = 2 };

// What a level is asked to do with a line.
enum Op : uint8_t {
  kOpRead,       // demand read (or a fill for a read above)
  kOpWrite,      // the written data arrives here (demand write, write-through, no-write-allocate)
  kOpWriteFill,  // a fill for a line that a write-back level above will write
  kOpFetch,      // instruction fetch (or a fill for one)
};

constexpr Class op_class(Op op) {
  return op == kOpRead ? kClsRead : op == kOpFetch ? kClsFetch : kClsWrite;
}

struct RawCounters {
  uint64_t accesses[3] = {0, 0, 0};
  uint64_t misses[3] = {0, 0, 0};
  uint64_t write_backs = 0;
  uint64_t invalidations = 0;
};

// The two parts of a split hierarchy touch disjoint sets (split_reason),
// so they can keep them in one array. A level whose tags take at least
// this much has one array, part 0's, that part 1 borrows: split() and
// unsplit() then copy nothing of it, and it is allocated once. (A 480 MiB
// L3, as hwloc reports one on a Zen 5 guest, has 60 MiB of tags a core:
// copying them at every split and join cost 10-40 ms, more than the
// automatic split's trials could gain.) Smaller levels keep a copy each:
// their sets are hit all the time, and neighbouring sets of the two parts
// would share host cache lines wherever a set is not a whole number of
// them (12 ways: 96 bytes).
constexpr size_t kBorrowTagBytes = size_t{1} << 20;

// Where `set` lies in its level's array (Cache::position; the read path
// computes it from its copies of the level's skew_shift and skew_mask).
inline uint64_t set_position(uint64_t set, uint32_t skew_shift, uint64_t skew_mask) {
  return set ^ ((set >> skew_shift) & skew_mask);
}

// One level with all its instances.
struct Cache {
  uint32_t line_shift = 0;  // log2(line bytes)
  uint64_t set_mask = 0;    // sets - 1
  uint64_t sets = 0;
  uint32_t ways = 0;
  bool lru = true;
  bool write_back = true;
  bool write_allocate = true;
  uint32_t cores_per_instance = 1;
  uint32_t instances = 1;
  std::vector<uint64_t> tags;        // with up to 7 words of padding before `first`; empty when borrowed
  uint64_t* first = nullptr;         // the first set, aligned to 64 bytes: an 8-way set is one host cache line
  std::vector<uint64_t*> core_base;  // [core]: the tags of the core's instance
  bool borrowed = false;             // `first` is part 0's (kBorrowTagBytes)
  // Where a set lies in the array: position(set) = set ^ ((set >> skew_shift)
  // & skew_mask), a permutation. Sets whose tags would lie a multiple of 4
  // KiB apart are moved apart by a set or more within their page: a
  // program that walks down a column of a matrix with a power-of-two row
  // touches exactly such sets of L2, one after the other (the ijk multiply's
  // B, 32 sets = 4 KiB of a 16-way L2's tags apart), and a load of the tags
  // whose address matches a pending store's in its low 12 bits waits for
  // that store (4K aliasing): the tag loads and stores of consecutive
  // references then ran one after the other. Only where the sets are
  // searched with vector loads and stores (Impl::vec): the ijk
  // stream 17-20% faster there, level or slower with the scalar search.
  // Identity for the first level, whose sets the inline path computes in
  // two instructions (and which has 64 sets, one 4 KiB page or less, on
  // every x86 host).
  uint32_t skew_shift = 63;
  uint64_t skew_mask = 0;

  // `lend`: part 0's instance of this level, whose tags this one (part 1's)
  // uses when they are large (kBorrowTagBytes); null: tags of its own.
  // `skew`: lay the sets out with position() (not for the first level).
  void init(const LevelConfig& l, uint32_t cores, const Cache* lend = nullptr, bool skew = false) {
    line_shift = uint32_t(std::countr_zero(l.line_bytes));
    sets = l.size_bytes / (uint64_t(l.line_bytes) * l.ways);
    set_mask = sets - 1;
    ways = l.ways;
    // Sets `period` apart have tags a multiple of 4 KiB apart.
    const uint64_t set_bytes = uint64_t(ways) * sizeof(uint64_t);
    const uint64_t period = 4096 / std::gcd(set_bytes, uint64_t{4096});
    skew_shift = 63;
    skew_mask = 0;
    if (skew && period > 1 && sets > period) {
      skew_shift = uint32_t(std::countr_zero(period));
      skew_mask = period - 1;
    }
    lru = l.replacement == Replacement::kLru;
    write_back = l.write_back;
    write_allocate = l.write_allocate;
    cores_per_instance = l.shared_by == 0 ? cores : l.shared_by;
    instances = cores / cores_per_instance;
    borrowed = lend && size_t(instances) * sets * ways * sizeof(uint64_t) >= kBorrowTagBytes;
    if (borrowed) {
      first = lend->first;
    } else {
      tags.assign(size_t(instances) * sets * ways + 7, kInvalid);
      const uintptr_t at = reinterpret_cast<uintptr_t>(tags.data());
      first = tags.data() + ((64 - at % 64) % 64) / sizeof(uint64_t);
    }
    core_base.resize(cores);
    for (uint32_t core = 0; core < cores; ++core) core_base[core] = instance_base(instance_of(core));
  }
  uint32_t instance_of(uint32_t core) const { return core / cores_per_instance; }
  uint64_t* instance_base(uint32_t instance) { return first + size_t(instance) * sets * ways; }
  uint64_t position(uint64_t set) const { return set_position(set, skew_shift, skew_mask); }
  uint64_t* set_for(uint32_t instance, uint64_t line) {
    return instance_base(instance) + size_t(position(line & set_mask)) * ways;
  }
  uint64_t* core_set(uint32_t core, uint64_t line) {
    return core_base[core] + size_t(position(line & set_mask)) * ways;
  }
};

// The last byte of an access of `size` bytes (at least 1) at `addr`; one
// that would run past the end of the address space ends there.
inline uint64_t last_byte(uint64_t addr, uint64_t size) {
  const uint64_t last = addr + (size - 1);
  return last < addr ? ~uint64_t{0} : last;
}

// Index of the way holding `key` (a line number << 1), or -1.
inline int find_way(const uint64_t* set, uint32_t ways, uint64_t key) {
  for (uint32_t w = 0; w < ways; ++w)
    if ((set[w] ^ key) <= 1) return int(w);
  return -1;
}

inline void move_to_front(uint64_t* set, int way) {
  const uint64_t entry = set[way];
  for (int j = way; j > 0; --j) set[j] = set[j - 1];
  set[0] = entry;
}

// Puts `entry` in way 0 and returns the word pushed out of the last way.
inline uint64_t insert_front(uint64_t* set, uint32_t ways, uint64_t entry) {
  const uint64_t victim = set[ways - 1];
  for (uint32_t j = ways - 1; j > 0; --j) set[j] = set[j - 1];
  set[0] = entry;
  return victim;
}

// LRU lookup and reorder in one pass over the set. On a hit the line moves
// to way 0 and 0 is returned. On a miss every way moves down one, way 0 is
// left holding kInvalid for the caller to fill, the word pushed out of the
// last way goes to *victim, and -1 is returned. One pass instead of a scan
// and then a shift: on the ijk matmul stream (bench/sim_throughput.cpp),
// where half the references miss L1 and find their line 8 deep in L2, this
// took the throughput from 78 to 95-104 million references/s.
// A way holds the line when tag - key is 0 (clean) or 1 (dirty; key is
// even).
inline int lookup_lru(uint64_t* set, uint32_t ways, uint64_t key, uint64_t* victim) {
  const uint64_t neg = 0 - key;
  uint64_t prev = set[0];
  if (prev + neg <= 1) return 0;
#pragma GCC unroll 16
  for (uint32_t w = 1; w < ways; ++w) {
    const uint64_t cur = set[w];
    set[w] = prev;
    if (cur + neg <= 1) {
      set[0] = cur;
      return 0;
    }
    prev = cur;
  }
  set[0] = kInvalid;
  *victim = prev;
  return -1;
}

// One way of lookup_lru_unrolled: moves `prev` into way I and takes what was
// there; true if that was the line.
template <size_t I>
__attribute__((always_inline)) inline bool lookup_step(uint64_t* set, uint64_t& prev, uint64_t neg) {
  const uint64_t cur = set[I];
  set[I] = prev;
  prev = cur;
  return cur + neg <= 1;
}

// lookup_lru for a set of W ways, written out way by way with constant
// offsets: a line found at a fixed depth (the ijk stream's B lines, 8 deep
// in L2) costs no loop branches (139 against 121 million/s on that stream
// when the loop was first unrolled), and each way is five instructions: a
// load, a store, a lea (tag + neg), a compare and a branch. GCC's own
// unrolling of the loop above takes eight (a pointer increment, two
// register moves, and a copy and subtraction instead of the lea).
// kFrom 1: way 0 is compared first. kFrom 2: ways 0 and 1 are known not to
// hold the line (the inline path compared them), so they move down one
// without a compare and the search starts at way 2.
template <size_t kFrom, size_t... I>
__attribute__((always_inline)) inline int lookup_lru_unrolled(uint64_t* set, uint64_t key, uint64_t* victim,
                                                              std::index_sequence<I...>) {
  static_assert(kFrom == 1 || kFrom == 2);
  uint64_t neg = 0 - key;
  // Hidden from the optimiser, which otherwise turns tag + neg back into
  // a copy of the tag and a subtraction of key.
  asm("" : "+r"(neg));
  uint64_t prev;
  if constexpr (kFrom == 1) {
    prev = set[0];
    if (prev + neg <= 1) return 0;
  } else {
    prev = set[1];
    set[1] = set[0];
  }
  // Ways kFrom .. W-1 in order; the fold stops at the first hit.
  if ((lookup_step<I + kFrom>(set, prev, neg) || ...)) {
    set[0] = prev;
    return 0;
  }
  set[0] = kInvalid;
  *victim = prev;
  return -1;
}

template <uint32_t W>
__attribute__((always_inline)) inline int lookup_lru_fixed(uint64_t* set, uint64_t key, uint64_t* victim) {
  return lookup_lru_unrolled<1>(set, key, victim, std::make_index_sequence<W - 1>{});
}

// lookup_lru_fixed for a set whose ways 0 and 1 are known not to hold the
// line.
template <uint32_t W>
__attribute__((always_inline)) inline int lookup_lru_after_two(uint64_t* set, uint64_t key, uint64_t* victim) {
  return lookup_lru_unrolled<2>(set, key, victim, std::make_index_sequence<W - 2>{});
}

#if defined(__x86_64__)
// lookup_lru for a set of W ways (8, 12 or 16) with AVX-512: the whole set
// compared at once, and reordered by shifting it one way down from way 0
// to the line's way (or the last) in a few whole-vector moves. Unlike
// lookup_lru, a miss leaves way 0 holding `key`, the line clean, as the
// LRU read path fills it (read_l1_l2, kVec): one vector store per half,
// with no 8-byte store into it that the set's next vector load would wait
// for. The set starts on a 64-byte boundary (W 8 or 16) or a 32-byte one
// (12). Not always_inline: a function compiled for AVX-512 cannot be forced
// into one that is not (read_level); run_default_vec, compiled for it,
// flattens it in. On the ijk stream, where half the references miss L1 and
// find their line 8 deep in L2, a miss costs about 30 instructions instead
// of about 130.
#define MRI_VECTOR_TARGET __attribute__((target("avx512f")))
// (GCC 12's AVX-512 shifts start from an undefined vector, which
// -Wmaybe-uninitialized takes for a use of one.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <uint32_t W>
MRI_VECTOR_TARGET inline int lookup_lru_vec(uint64_t* set, uint64_t key, uint64_t* victim) {
  static_assert(W == 8 || W == 12 || W == 16);
  const __m512i k = _mm512_set1_epi64(int64_t(key));
  const __m512i care = _mm512_set1_epi64(int64_t(~kDirty));  // a way holds the line clean or dirty
  const __m512i v0 = _mm512_loadu_si512(set);
  // Ways 8 .. W-1 (none for W 8); a 12-way set's last four only.
  constexpr __mmask8 kHigh = W == 16 ? 0xff : 0x0f;
  __m512i v1 = _mm512_setzero_si512();
  if constexpr (W > 8) v1 = _mm512_maskz_loadu_epi64(kHigh, set + 8);
  uint32_t m = _mm512_testn_epi64_mask(_mm512_xor_si512(v0, k), care);
  if constexpr (W > 8) m |= uint32_t(_mm512_mask_testn_epi64_mask(kHigh, _mm512_xor_si512(v1, k), care)) << 8;
  // Way 7 moved into way 8, the rest of the second half one down.
  const __m512i s1 = W > 8 ? _mm512_alignr_epi64(v1, v0, 7) : v1;
  if (m == 0) {
    *victim = set[W - 1];
    _mm512_storeu_si512(set, _mm512_alignr_epi64(v0, k, 7));  // key, ways 0 .. 6
    if constexpr (W > 8) _mm512_mask_storeu_epi64(set + 8, kHigh, s1);
    return -1;
  }
  const uint32_t w = uint32_t(std::countr_zero(m));
  const __m512i e = _mm512_set1_epi64(int64_t(set[w]));
  const uint32_t upto = (2u << w) - 1;  // ways 0 .. w take the shifted words
  _mm512_storeu_si512(set, _mm512_mask_blend_epi64(__mmask8(upto), v0, _mm512_alignr_epi64(v0, e, 7)));
  if constexpr (W > 8) _mm512_mask_storeu_epi64(set + 8, __mmask8(upto >> 8) & kHigh, s1);
  return 0;
}
#pragma GCC diagnostic pop

#endif

// lookup_lru with the common associativities unrolled.
__attribute__((always_inline)) inline int lookup_lru_any(uint64_t* set, uint32_t ways, uint64_t key, uint64_t* victim) {
  switch (ways) {
    case 8:
      return lookup_lru_fixed<8>(set, key, victim);
    case 12:
      return lookup_lru_fixed<12>(set, key, victim);
    case 16:
      return lookup_lru_fixed<16>(set, key, victim);
    default:
      return lookup_lru(set, ways, key, victim);
  }
}

inline void remove_way(uint64_t* set, uint32_t ways, int way) {
  for (uint32_t j = uint32_t(way); j + 1 < ways; ++j) set[j] = set[j + 1];
  set[ways - 1] = kInvalid;
}

constexpr uint32_t event_bit(uint32_t level, EventKind kind) { return level * 8 + uint32_t(kind); }

constexpr EventKind hit_kind(Class cls) { return cls == kClsRead ? EventKind::kReadHit : EventKind::kWriteHit; }
constexpr EventKind miss_kind(Class cls) { return cls == kClsRead ? EventKind::kReadMiss : EventKind::kWriteMiss; }

struct MonitorData {
  MonitorSpec spec;
  std::vector<Event> events;  // sorted, unique
  uint64_t mask = 0;          // event bits
  uint64_t bin_bytes = 0;
  std::vector<uint64_t> totals;
  std::vector<uint64_t> bins;
  bool frozen = false;  // freeze_monitor(): never enabled again
};

// The enabled monitors in the form the kernels read.
struct ActiveMonitor {
  uint64_t begin;
  uint64_t span;  // end - begin; ~0 for the whole address space
  uint64_t mask;
  int32_t core;
  int64_t thread;      // MonitorSpec::thread
  uint32_t events;
  uint64_t bin_bytes;  // 0: one bin
  uint64_t bin_phase;  // offset of `begin` within its bin (MonitorSpec::bin_phase)
  int bin_shift;       // log2(bin_bytes) when a power of two, else -1
  uint64_t* totals;
  uint64_t* bins;
};

}  // namespace

struct Hierarchy::Impl {
  HierarchyConfig config;
  uint32_t cores = 1;
  uint32_t nlevels = 0;
  std::vector<Cache> data;
  bool has_icache = false;
  Cache icache;
  // Index of the first level with a single instance (nlevels if none): a
  // read that leaves the multi-instance levels must see other cores'
  // dirty copies first.
  uint32_t first_single = 0;
  bool coherent = false;     // more than one core and some level with more than one instance
  bool lru_reads = false;    // the first two data levels are LRU: run_default's read_l1_l2 applies
  uint32_t compat_max_size = 0;  // cachegrind clamps larger accesses to its smallest line size

  std::vector<RawCounters> counters;  // [core * (nlevels + 1) + level]; level nlevels = I1
  std::vector<ReferenceCounts> refs;  // per core

  std::map<int, MonitorData> monitors;
  int next_monitor_id = 0;
  std::vector<ActiveMonitor> active;
  uint64_t active_lo = 0, active_span = 0;  // hull of the enabled monitors
  uint64_t active_events = 0;               // event bits some enabled monitor counts
  // The hull the inline path of run_default must leave to the general
  // path: the hull itself when a monitor counts L1 hits (the only events an
  // inline hit produces), else empty. A monitor of misses then costs its
  // data structure's L1 hits nothing: 3x faster on the ikj matmul stream
  // with C monitored (docs/PERFORMANCE.md, cache-simulator backend).
  uint64_t inline_lo = 0, inline_span = 0;
  // Whether condense() may drop references from a batch: L1 is LRU,
  // write-back and write-allocate with two ways or more (so the line a set
  // saw last is in it, most recent, and a write to it when dirty changes
  // nothing), not cachegrind's model, and no enabled monitor counts L1
  // hits (the only event a dropped reference has). Read by the threads that
  // condense, without the mutex.
  std::atomic<bool> condensable{false};
  void update_condensable(bool l1_hits_counted) {
    const Cache& l1 = data[0];
    condensable.store(!config.cachegrind_compatible && l1.lru && l1.write_back && l1.write_allocate && l1.ways >= 2 &&
                          !l1_hits_counted,
                      std::memory_order_relaxed);
  }

  mutable std::mutex mutex;
  // The core argument of the batch being simulated, before the modulo
  // (MonitorSpec::thread); set under `mutex` by simulate() and
  // simulate_part().
  uint64_t batch_thread = 0;
  using Kernel = void (Impl::*)(uint32_t, const Access*, size_t);
  Kernel kernel = nullptr;
  // The line size (log2) of L1 and L2 and the L1 set count of the kernels
  // with fixed ways (default_kernel).
  static constexpr uint32_t kFixedShift = 6;
  static constexpr uint64_t kFixedSets = 64;
  // The L1 set of `addr` in such a kernel, from the address's set bits
  // directly: with 8 ways, one mask (the set's byte offset, set x 8 ways x
  // 8 bytes, is the address's bits 6 to 11).
  template <uint32_t W>
  static uint64_t* fixed_set(uint64_t* base, uint64_t addr) {
    const uint64_t set_bits = addr & ((kFixedSets - 1) << kFixedShift);  // set << 6
    return reinterpret_cast<uint64_t*>(reinterpret_cast<char*>(base) + (set_bits >> 3) * W);
  }

  RawCounters& raw(uint32_t core, uint32_t level) { return counters[size_t(core) * (nlevels + 1) + level]; }

  // Whether the kernels with fixed ways search sets with AVX-512
  // (run_default_vec), and the levels below L1 are laid out for it
  // (Cache::position). Both parts of a split hierarchy have the same, so
  // that split() and unsplit() can copy sets as they lie.
  bool vec = false;

  // `lend`: part 0, whose large tag arrays this part (1) uses (kBorrowTagBytes).
  // `vector`: search with AVX-512 (ignored without AVX-512F).
  void init(const HierarchyConfig& c, const Impl* lend, bool vector) {
    vec = vector && internal::cpu_has_avx512f();
    config = c;
    cores = c.cores;
    nlevels = uint32_t(c.levels.size());
    data.resize(nlevels);
    for (uint32_t i = 0; i < nlevels; ++i)
      data[i].init(c.levels[i], cores, lend ? &lend->data[i] : nullptr, i > 0 && vec);
    has_icache = c.instruction_l1.has_value();
    if (has_icache) icache.init(*c.instruction_l1, cores, lend ? &lend->icache : nullptr);
    first_single = nlevels;
    for (uint32_t i = 0; i < nlevels; ++i)
      if (data[i].instances == 1) {
        first_single = i;
        break;
      }
    coherent = cores > 1 && first_single > 0;
    lru_reads = data[0].lru && (nlevels < 2 || data[1].lru);
    compat_max_size = c.levels[0].line_bytes;
    for (const LevelConfig& l : c.levels) compat_max_size = std::min(compat_max_size, l.line_bytes);
    if (has_icache) compat_max_size = std::min(compat_max_size, c.instruction_l1->line_bytes);
    counters.assign(size_t(cores) * (nlevels + 1), RawCounters{});
    refs.assign(cores, ReferenceCounts{});
    update_condensable(false);
    choose_kernel();
  }

  void choose_kernel() {
    const bool mon = !active.empty();
    if (config.cachegrind_compatible)
      kernel = mon ? &Impl::run_compat<true> : &Impl::run_compat<false>;
    else
      kernel = !mon              ? default_kernel<false, false>()
               : inline_span != 0 ? default_kernel<true, true>()
                                  : default_kernel<true, false>();
  }

  // run_default for the associativities of L1 and L2 when they are common
  // ones (8 or 12 ways over 8 or 16; a Zen 5 guest's hwloc gives 12 over 8
  // or 16), so that the inline and read paths
  // index sets and search them without a switch on the ways or a multiply,
  // and for the geometry of every x86 L1d of 32 or 48 KiB over its L2: 64
  // sets of 64-byte lines over 64-byte lines (kFixedShift, kFixedSets), so
  // that the line and the set of a reference take constant shifts and
  // masks, and two registers more stay free.
  template <bool kMon, bool kHits>
  Kernel default_kernel() const {
    if (lru_reads && nlevels >= 2 && data[0].line_shift == kFixedShift && data[0].set_mask == kFixedSets - 1 &&
        data[1].line_shift == kFixedShift) {
      const uint32_t w1 = data[0].ways, w2 = data[1].ways;
#if defined(__x86_64__)
      if (vec) {
        if (w1 == 8 && w2 == 8) return &Impl::run_default_vec<kMon, kHits, 8, 8>;
        if (w1 == 8 && w2 == 16) return &Impl::run_default_vec<kMon, kHits, 8, 16>;
        if (w1 == 12 && w2 == 16) return &Impl::run_default_vec<kMon, kHits, 12, 16>;
        if (w1 == 12 && w2 == 8) return &Impl::run_default_vec<kMon, kHits, 12, 8>;
      }
#endif
      if (w1 == 8 && w2 == 8) return &Impl::run_default<kMon, kHits, 8, 8>;
      if (w1 == 8 && w2 == 16) return &Impl::run_default<kMon, kHits, 8, 16>;
      if (w1 == 12 && w2 == 16) return &Impl::run_default<kMon, kHits, 12, 16>;
      if (w1 == 12 && w2 == 8) return &Impl::run_default<kMon, kHits, 12, 8>;
    }
    return &Impl::run_default<kMon, kHits>;
  }

  // ------------------------------------------------------------ monitors

  void refresh_active() {
    active.clear();
    active_events = 0;
    uint64_t lo = ~uint64_t{0}, hi = 0;
    bool whole = false;
    for (auto& [id, m] : monitors) {
      if (!m.spec.enabled) continue;
      ActiveMonitor a;
      a.begin = m.spec.whole_address_space ? 0 : m.spec.begin;
      a.span = m.spec.whole_address_space ? ~uint64_t{0} : m.spec.end - m.spec.begin;
      a.mask = m.mask;
      a.core = m.spec.core;
      a.thread = m.spec.thread;
      a.events = uint32_t(m.events.size());
      a.bin_bytes = m.spec.bins == 1 ? 0 : m.bin_bytes;
      a.bin_phase = m.spec.bin_phase;
      a.bin_shift = a.bin_bytes && std::has_single_bit(a.bin_bytes) ? std::countr_zero(a.bin_bytes) : -1;
      a.totals = m.totals.data();
      a.bins = m.bins.data();
      active.push_back(a);
      active_events |= a.mask;
      if (m.spec.whole_address_space) whole = true;
      lo = std::min(lo, a.begin);
      hi = std::max(hi, m.spec.end);
    }
    if (whole) {
      active_lo = 0;
      active_span = ~uint64_t{0};
    } else if (!active.empty()) {
      active_lo = lo;
      active_span = hi - lo;
    } else {
      active_lo = 0;
      active_span = 0;
    }
    const uint64_t l1_hits = (uint64_t{1} << event_bit(0, EventKind::kReadHit)) |
                             (uint64_t{1} << event_bit(0, EventKind::kWriteHit));
    bool hits_counted = false;
    for (const ActiveMonitor& a : active) hits_counted |= (a.mask & l1_hits) != 0;
    inline_lo = hits_counted ? active_lo : 0;
    inline_span = hits_counted ? active_span : 0;
    update_condensable(hits_counted);
    choose_kernel();
  }

  // An event no enabled monitor counts costs a test of one bit (a
  // histogram of L1 read misses does not look at L2 hits); then the range
  // check against the hull of all enabled monitors: most references of a
  // program are outside a monitored data structure.
  template <bool kMon>
  inline void note(uint32_t core, uint64_t addr, uint32_t level, EventKind kind) {
    if constexpr (kMon) {
      const uint32_t bit = event_bit(level, kind);
      if (((active_events >> bit) & 1) && addr - active_lo < active_span) note_slow(core, addr, bit);
    }
  }

  // The same, with the monitors' summary from a ReadPath.
  template <bool kMon, class P>
  inline void note(uint32_t core, uint64_t addr, uint32_t level, EventKind kind, const P& p) {
    if constexpr (kMon) {
      const uint32_t bit = event_bit(level, kind);
      if (((p.events >> bit) & 1) && addr - p.lo < p.span) note_slow(core, addr, bit);
    }
  }

  __attribute__((noinline)) void note_slow(uint32_t core, uint64_t addr, uint32_t bit) {
    for (ActiveMonitor& m : active) {
      const uint64_t off = addr - m.begin;
      if (off >= m.span || !((m.mask >> bit) & 1)) continue;
      if (m.core >= 0 && uint32_t(m.core) != core) continue;
      if (m.thread >= 0 && uint64_t(m.thread) != batch_thread) continue;
      const uint32_t index = uint32_t(std::popcount(m.mask & ((uint64_t{1} << bit) - 1)));
      ++m.totals[index];
      const uint64_t pos = off + m.bin_phase;
      const uint64_t bin = m.bin_bytes == 0 ? 0 : m.bin_shift >= 0 ? pos >> m.bin_shift : pos / m.bin_bytes;
      ++m.bins[bin * m.events + index];
    }
  }

  // ------------------------------------------------------------ coherence

  // A dirty line leaves a cache: it goes to the first level at or below
  // `from` on `core`'s path that holds the line and is write-back, and is
  // marked dirty there (without touching the replacement order, and without
  // allocating: a write-back is not a demand access); else to memory.
  void push_write_back(uint32_t core, uint32_t from, uint64_t addr) {
    for (uint32_t lvl = from; lvl < nlevels; ++lvl) {
      Cache& c = data[lvl];
      const uint64_t line = addr >> c.line_shift;
      uint64_t* set = c.core_set(core, line);
      const int w = find_way(set, c.ways, line << 1);
      if (w >= 0 && c.write_back) {
        set[w] |= kDirty;
        return;
      }
    }
  }

  // Other cores' copies of the line holding `addr`, in every private
  // instance not on `core`'s path. kInvalidate (another core writes it):
  // each copy is removed, a dirty one written back to the shared levels
  // first. Otherwise (a read leaves `core`'s private levels): dirty copies
  // are written back and stay as clean copies.
  // (noinline here and in evicted(): the cold paths stay out of
  // run_default_vec, which flattens everything else in.)
  template <bool kMon, bool kInvalidate>
  __attribute__((noinline)) void visit_others(uint32_t core, uint64_t addr) {
    for (uint32_t lvl = 0; lvl < first_single; ++lvl) {
      Cache& c = data[lvl];
      const uint32_t mine = c.instance_of(core);
      const uint64_t line = addr >> c.line_shift;
      const uint64_t line_addr = line << c.line_shift;
      for (uint32_t inst = 0; inst < c.instances; ++inst) {
        if (inst == mine) continue;
        uint64_t* set = c.set_for(inst, line);
        const int w = find_way(set, c.ways, line << 1);
        if (w < 0) continue;
        const uint64_t entry = set[w];
        const uint32_t owner = inst * c.cores_per_instance;
        if (kInvalidate) {
          remove_way(set, c.ways, w);
          ++raw(owner, lvl).invalidations;
          note<kMon>(owner, line_addr, lvl, EventKind::kInvalidation);
        } else {
          if (!(entry & kDirty)) continue;
          set[w] &= ~kDirty;
        }
        if (entry & kDirty) {
          ++raw(owner, lvl).write_backs;
          note<kMon>(owner, line_addr, lvl, EventKind::kWriteBack);
          push_write_back(owner, first_single, line_addr);
        }
      }
    }
  }
  template <bool kMon>
  void invalidate_others(uint32_t core, uint64_t addr) {
    visit_others<kMon, true>(core, addr);
  }
  template <bool kMon>
  void downgrade_others(uint32_t core, uint64_t addr) {
    visit_others<kMon, false>(core, addr);
  }

  // ------------------------------------------------------------ general path

  // Puts `entry` into `set` of level `lvl`; a dirty victim is written back.
  template <bool kMon>
  void install(uint32_t core, uint32_t lvl, uint64_t* set, uint64_t entry) {
    evicted<kMon>(core, lvl, insert_front(set, data[lvl].ways, entry));
  }

  // `victim` left level `lvl`: a dirty line is written back.
  template <bool kMon>
  __attribute__((noinline)) void evicted(uint32_t core, uint32_t lvl, uint64_t victim) {
    if (victim != kInvalid && (victim & kDirty)) {
      const uint64_t victim_addr = (victim >> 1) << data[lvl].line_shift;
      ++raw(core, lvl).write_backs;
      note<kMon>(core, victim_addr, lvl, EventKind::kWriteBack);
      push_write_back(core, lvl + 1, victim_addr);
    }
  }

  // One reference to the line holding `addr` at data level `lvl`.
  template <bool kMon>
  void ref_line(uint32_t core, uint32_t lvl, uint64_t addr, Op op) {
    Cache& c = data[lvl];
    const uint64_t line = addr >> c.line_shift;
    const uint64_t key = line << 1;
    uint64_t* set = c.core_set(core, line);
    const Class cls = op_class(op);
    RawCounters& k = raw(core, lvl);
    ++k.accesses[cls];
    // LRU levels that fill the line on a miss search and reorder in one
    // pass; the others search first.
    const bool fused = c.lru && (c.write_allocate || op == kOpRead || op == kOpFetch);
    uint64_t victim = kInvalid;
    int w;
    if (fused) {
      w = lookup_lru_any(set, c.ways, key, &victim);
    } else {
      w = find_way(set, c.ways, key);
      if (c.lru && w > 0) {
        move_to_front(set, w);
        w = 0;
      }
    }
    if (w >= 0) {
      const bool was_dirty = set[w] & kDirty;
      if (cls != kClsFetch) note<kMon>(core, addr, lvl, hit_kind(cls));
      if (op == kOpWrite) {
        // A dirty L1 line is exclusive: no other core can hold a copy.
        if (lvl == 0 && coherent && !was_dirty) invalidate_others<kMon>(core, addr);
        if (c.write_back) set[w] |= kDirty;
        else if (lvl + 1 < nlevels) ref_line<kMon>(core, lvl + 1, addr, kOpWrite);
      }
      return;
    }
    ++k.misses[cls];
    if (cls != kClsFetch) note<kMon>(core, addr, lvl, miss_kind(cls));
    if (op == kOpWrite && lvl == 0 && coherent) invalidate_others<kMon>(core, addr);
    if ((op == kOpWrite || op == kOpWriteFill) && !c.write_allocate) {
      if (lvl + 1 < nlevels) ref_line<kMon>(core, lvl + 1, addr, op);
      return;
    }
    if (op == kOpRead && coherent && lvl + 1 == first_single) downgrade_others<kMon>(core, addr);
    if (lvl + 1 < nlevels) {
      // A write-through level passes the data on with the fill; a
      // write-back level only asks for the line.
      const Op below = op == kOpWrite ? (c.write_back ? kOpWriteFill : kOpWrite) : op;
      ref_line<kMon>(core, lvl + 1, addr, below);
    }
    const uint64_t entry = key | (op == kOpWrite && c.write_back ? kDirty : 0);
    if (fused) {
      set[0] = entry;  // lookup_lru made room
      evicted<kMon>(core, lvl, victim);
    } else {
      install<kMon>(core, lvl, set, entry);
    }
  }

  // One instruction-fetch reference to the line holding `addr` in I1.
  template <bool kMon>
  void fetch_line(uint32_t core, uint64_t addr) {
    const uint64_t line = addr >> icache.line_shift;
    uint64_t* set = icache.core_set(core, line);
    RawCounters& k = raw(core, nlevels);
    ++k.accesses[kClsFetch];
    const int w = find_way(set, icache.ways, line << 1);
    if (w >= 0) {
      if (icache.lru && w > 0) move_to_front(set, w);
      return;
    }
    ++k.misses[kClsFetch];
    if (nlevels > 1) ref_line<kMon>(core, 1, addr, kOpFetch);
    insert_front(set, icache.ways, line << 1);  // never dirty
  }

  // Every reference the inline path of run_default() does not take. In a
  // split hierarchy, only the lines of this engine's part (a reference
  // that straddles into the other part reaches both), and the reference
  // counts in the part of its first byte.
  template <bool kMon>
  __attribute__((noinline)) void general_access(uint32_t core, const Access& a) {
    const uint32_t size = a.size == 0 ? 1 : a.size;
    ReferenceCounts& r = refs[core];
    const bool counted = own(a.addr >> data[0].line_shift);
    if (a.type == kInstruction) {
      r.instructions += counted;
      if (!has_icache) return;
      const uint32_t shift = icache.line_shift;
      const uint64_t first = a.addr >> shift, last = last_byte(a.addr, size) >> shift;
      for (uint64_t ln = first; ln <= last; ++ln)
        if (own(ln)) fetch_line<kMon>(core, ln == first ? a.addr : ln << shift);
      return;
    }
    if (a.type == kRead) r.reads += counted;
    else if (a.type == kWrite) r.writes += counted;
    else r.modifies += counted;
    const uint32_t shift = data[0].line_shift;
    const uint64_t first = a.addr >> shift, last = last_byte(a.addr, size) >> shift;
    for (uint64_t ln = first; ln <= last; ++ln) {
      if (!own(ln)) continue;
      const uint64_t addr = ln == first ? a.addr : ln << shift;
      if (a.type != kWrite) ref_line<kMon>(core, 0, addr, kOpRead);
      if (a.type != kRead) ref_line<kMon>(core, 0, addr, kOpWrite);
    }
  }

  // Why the inline path stopped at a reference.
  enum Stop : uint8_t {
    kStopOther,   // not a read or write of one line (or the batch's end)
    kStopOneLine, // a read or write of one line (a monitored address: ways not compared)
    kStopMissed,  // a read of one line that neither of the two most recent ways
                  // of its L1 set (*set1) holds: compared, not to be again
  };

  // The inline path: consumes references from *it on (up to end) while each is
  // a read or write within one line that hits one of the two most recent
  // ways of its L1 set (a read always; a write only if the line is already dirty, so there
  // is no dirty bit to set and no other core to invalidate), and, with
  // monitors that count L1 hits, lies outside every monitored range. Returns the
  // first reference it did not take (end if none), and sets *stop to why it stopped
  // there (*set1 to its L1 set for kStopMissed). It calls nothing, so its state stays
  // in registers; its write hits go to *write_hits (its hits are what the
  // caller did not send elsewhere). always_inline (into
  // run_default, whose loop calls it after every general-path reference):
  // 369 million references/s on the ikj matmul stream, 340 million when it
  // is a call (medians of 5, bench/sim_throughput.cpp).
  template <bool kMon, uint32_t W1 = 0>
  __attribute__((always_inline)) inline const Access* inline_hits(uint64_t* base, const Access* it,
                                                                  const Access* const end, uint64_t* write_hits,
                                                                  Stop* stop, uint64_t** set1) {
    const Cache& l1 = data[0];
    const uint32_t shift = W1 != 0 ? kFixedShift : l1.line_shift;
    const uint64_t mask = W1 != 0 ? kFixedSets - 1 : l1.set_mask;
    const uint64_t ways = W1 != 0 ? W1 : l1.ways;
    const bool two_ways = ways >= 2;
    const bool lru = W1 != 0 || l1.lru;
    const uint64_t lo = inline_lo, span = inline_span;
    uint64_t w = 0;
    // The set of the previous reference and its two most recent ways, as
    // they are in memory: a reference to the same set compares registers
    // instead of loading what the previous reference may just have stored.
    const uint64_t* last = nullptr;
    uint64_t way0 = 0, way1 = 0;
    for (; it != end; ++it) {
      const Access& a = *it;
      const uint64_t line = a.addr >> shift;
      const uint64_t type = a.type;
      if (type > kWrite || ((a.addr + a.size - 1) >> shift) != line) break;
      if (kMon && a.addr - lo < span) {
        *stop = kStopOneLine;
        break;
      }
      // A read hits a way whose tag is key or key | 1 (clean or dirty),
      // a write (type 1) one whose tag is key | 1: the tag ^ (key | type)
      // is 0 apart from bit 0 for a read, and 0 for a write, so one
      // xor and one test against ~(1 - type) decide it.
      uint64_t* set = W1 != 0 ? fixed_set<W1>(base, a.addr) : base + (line & mask) * ways;
      const uint64_t key = (line << 1) | type;
      const uint64_t care = type - 2;  // ~(1 - type): ~1 for a read, ~0 for a write
      if (set != last) {
        last = set;
        way0 = set[0];
        way1 = two_ways ? set[1] : kInvalid;
      }
      if (((way0 ^ key) & care) != 0) {
        // The second most recent way too: two lines that alternate in one
        // set (a row of B and a row of C in ikj matmul) would otherwise
        // leave the inline path at every reference.
        if (((way1 ^ key) & care) != 0) {
          // A write may be a clean hit in way 0 or 1 (it stops for the
          // dirty bit): only a read is known to be in neither.
          *stop = type == kRead && two_ways ? kStopMissed : kStopOneLine;
          *set1 = set;
          break;
        }
        if (lru) {
          set[1] = way0;
          set[0] = way1;
          std::swap(way0, way1);
        }
      }
      w += type;
    }
    *write_hits += w;
    return it;
  }

  // The first two levels as one core's reads see them, copied out of
  // data[] at the start of a batch, and their read counters, kept here and
  // added to counters[] at its end. The tag stores of the read path are
  // uint64_t stores, which as far as the compiler knows may change any
  // uint64_t field of a Cache (set_mask) or a counter: read from data[] and
  // counted in memory, every reference reloaded the geometry and read,
  // incremented and stored four counters.
  struct ReadPath {
    uint64_t* base[2];
    uint64_t mask[2];
    uint64_t skew_mask[2];
    uint32_t skew_shift[2];
    uint32_t shift[2];
    uint32_t ways[2];
    bool downgrade[2];          // coherent && lvl + 1 == first_single
    uint64_t events, lo, span;  // active_events, active_lo, active_span, for note()
    uint64_t misses[2] = {0, 0};
  };

  ReadPath read_path(uint32_t core) const {
    ReadPath p;
    for (uint32_t lvl = 0; lvl < 2; ++lvl) {
      // With one level, entry 1 repeats L1 and is never used (nlevels > 1
      // guards every use).
      const Cache& c = data[std::min(lvl, nlevels - 1)];
      p.base[lvl] = c.core_base[core];
      p.mask[lvl] = c.set_mask;
      p.skew_mask[lvl] = c.skew_mask;
      p.skew_shift[lvl] = c.skew_shift;
      p.shift[lvl] = c.line_shift;
      p.ways[lvl] = c.ways;
      p.downgrade[lvl] = coherent && lvl + 1 == first_single;
    }
    p.events = active_events;
    p.lo = active_lo;
    p.span = active_span;
    return p;
  }

  // A read of one line at LRU level `lvl` (0 or 1): looks it up and
  // reorders the set. Returns true on a hit; on a miss, way 0 of *set is
  // left for the caller to fill once the levels below have seen the
  // reference, and the line pushed out of the set is in *victim.
  // W: the level's ways when the kernel knows them, else 0.
  // kAfterTwo: *set is given, its ways 0 and 1 known not to hold the line
  // (kStopMissed; W >= 2).
  // kVec: W is 8, 12 or 16 and the kernel is compiled for AVX-512
  // (run_default_vec): the set is searched with lookup_lru_vec, and a miss
  // leaves the line in way 0 already.
  template <bool kMon, uint32_t W, bool kAfterTwo = false, bool kVec = false>
  __attribute__((always_inline)) inline bool read_level(uint32_t core, uint32_t lvl, uint64_t addr, ReadPath& p,
                                                         uint64_t** set, uint64_t* victim) {
    const uint64_t line = addr >> (W != 0 ? kFixedShift : p.shift[lvl]);
    const uint64_t mask = W != 0 && lvl == 0 ? kFixedSets - 1 : p.mask[lvl];
    if constexpr (!kAfterTwo) {
      uint64_t at = line & mask;
      // L1's position is the identity, and the levels are in order where
      // the kernels with fixed ways search them one way at a time.
      if (W == 0 || (kVec && lvl != 0)) at = set_position(at, p.skew_shift[lvl], p.skew_mask[lvl]);
      *set = p.base[lvl] + at * (W != 0 ? W : p.ways[lvl]);
    }
    int found;
#if defined(__x86_64__)
    if constexpr (kVec)
      found = lookup_lru_vec<W>(*set, line << 1, victim);
    else
#endif
    if constexpr (kAfterTwo)
      found = lookup_lru_after_two<W>(*set, line << 1, victim);
    else if constexpr (W != 0)
      found = lookup_lru_fixed<W>(*set, line << 1, victim);
    else
      found = lookup_lru_any(*set, p.ways[lvl], line << 1, victim);
    if (found == 0) {
      note<kMon>(core, addr, lvl, EventKind::kReadHit, p);
      return true;
    }
    ++p.misses[lvl];
    note<kMon>(core, addr, lvl, EventKind::kReadMiss, p);
    if (p.downgrade[lvl]) downgrade_others<kMon>(core, addr);
    return false;
  }

  // ref_line(core, 0, addr, kOpRead) for a hierarchy whose first two levels
  // are LRU, with those two levels inline: the path of a read that misses
  // L1 and hits L2, half of all references of the ijk multiply. The reads
  // of L1 are counted by the caller, the reads of L2 and the misses of both
  // in `p`.
  // kAfterTwo: set1 is the line's L1 set, whose ways 0 and 1 the inline
  // path found without it (kStopMissed).
  // kVec: the kernel is compiled for AVX-512 and W1, W2 are known; both
  // levels fill way 0 in the lookup (read_level), before the levels below
  // see the reference, which no one looks at meanwhile (they are other
  // sets and other instances).
  template <bool kMon, uint32_t W1, uint32_t W2, bool kAfterTwo = false, bool kVec = false>
  __attribute__((always_inline)) inline void read_l1_l2(uint32_t core, uint64_t addr, ReadPath& p,
                                                        uint64_t* set1 = nullptr) {
    uint64_t* set2;
    uint64_t victim1 = kInvalid, victim2 = kInvalid;
    if (read_level<kMon, W1, kAfterTwo, kVec>(core, 0, addr, p, &set1, &victim1)) return;
    // (The kernels with fixed ways have two levels or more.)
    if ((W2 != 0 || nlevels > 1) && !read_level<kMon, W2, false, kVec>(core, 1, addr, p, &set2, &victim2)) {
      if (nlevels > 2) ref_line<kMon>(core, 2, addr, kOpRead);
      if constexpr (!kVec) set2[0] = (addr >> (W2 != 0 ? kFixedShift : p.shift[1])) << 1;
      if (victim2 & kDirty) evicted<kMon>(core, 1, victim2);
    }
    if constexpr (!kVec) set1[0] = (addr >> (W1 != 0 ? kFixedShift : p.shift[0])) << 1;
    if (victim1 & kDirty) evicted<kMon>(core, 0, victim1);
  }

  // kHits: some enabled monitor counts L1 hits, so the inline path must
  // leave monitored addresses to the general one. Without (a histogram of
  // misses) the inline path skips that test and keeps in registers what
  // it would spill (sim_throughput's program rung: 429-433 -> 445-450
  // million references/s).
  // W1, W2: the ways of L1 and L2 when known at compile time
  // (default_kernel), else 0.
  // kVec: compiled for AVX-512 (run_default_vec), with vector lookups.
  template <bool kMon, bool kHits = kMon, uint32_t W1 = 0, uint32_t W2 = 0, bool kVec = false>
  __attribute__((always_inline)) inline void run_default_body(uint32_t core, const Access* accesses, size_t n) {
    Cache& l1 = data[0];
    uint64_t* const base = l1.core_base[core];
    ReadPath p = read_path(core);
    const bool lru = W1 != 0 || lru_reads;
    uint64_t write_hits = 0, reads = 0, others = 0;
    const Access* const end = accesses + n;
    for (const Access* it = accesses; it != end; ++it) {
      Stop stop = kStopOther;
      uint64_t* set1 = nullptr;
      it = inline_hits<kHits, W1>(base, it, end, &write_hits, &stop, &set1);
      if (it == end) break;
      const Access& a = *it;
      if (W1 >= 2 && lru && stop == kStopMissed) {  // a read: the inline path compared ways 0 and 1
        ++reads;
        read_l1_l2<kMon, W1, W2, (W1 >= 2), kVec>(core, a.addr, p, set1);
      } else if (lru && a.type == kRead && stop != kStopOther) {
        ++reads;
        read_l1_l2<kMon, W1, W2, false, kVec>(core, a.addr, p);
      } else {
        ++others;
        general_access<kMon>(core, a);
      }
    }
    // Every reference went to exactly one of the three paths.
    const uint64_t hits = n - reads - others;
    RawCounters& k = raw(core, 0);
    k.accesses[kClsRead] += hits - write_hits + reads;
    k.accesses[kClsWrite] += write_hits;
    k.misses[kClsRead] += p.misses[0];
    if (nlevels > 1) {
      RawCounters& k2 = raw(core, 1);
      k2.accesses[kClsRead] += p.misses[0];
      k2.misses[kClsRead] += p.misses[1];
    }
    refs[core].reads += hits - write_hits + reads;
    refs[core].writes += write_hits;
  }

  template <bool kMon, bool kHits = kMon, uint32_t W1 = 0, uint32_t W2 = 0>
  void run_default(uint32_t core, const Access* accesses, size_t n) {
    run_default_body<kMon, kHits, W1, W2>(core, accesses, n);
  }

#if defined(__x86_64__)
  // run_default with the sets of L1 and L2 searched by lookup_lru_vec,
  // compiled for AVX-512F and chosen at run time (Impl::vec).
  // `flatten` brings lookup_lru_vec in: a function compiled for AVX-512
  // cannot be forced inline into one that is not, and the body is shared
  // with run_default. What the body keeps out of line (general_access,
  // note_slow) stays out of line.
  template <bool kMon, bool kHits, uint32_t W1, uint32_t W2>
  MRI_VECTOR_TARGET __attribute__((flatten)) void run_default_vec(uint32_t core, const Access* accesses, size_t n) {
    run_default_body<kMon, kHits, W1, W2, true>(core, accesses, n);
  }
#endif

  // ------------------------------------------------------------ cachegrind

  // cachegrind's reference: every line the access touches is looked up (and
  // filled on a miss), and the access is one miss if any of them missed.
  bool compat_ref(uint32_t core, uint32_t lvl, Cache& c, uint64_t addr, uint32_t size, bool dirty) {
    const uint64_t first = addr >> c.line_shift, last = last_byte(addr, size) >> c.line_shift;
    bool miss = false;
    for (uint64_t line = first; line <= last; ++line) {
      uint64_t* set = c.set_for(0, line);
      const int w = find_way(set, c.ways, line << 1);
      if (w >= 0) {
        move_to_front(set, w);
        if (dirty) set[0] |= kDirty;
        continue;
      }
      miss = true;
      const uint64_t victim = insert_front(set, c.ways, (line << 1) | (dirty ? kDirty : 0));
      if (victim != kInvalid && (victim & kDirty)) {
        ++raw(core, lvl).write_backs;
        push_write_back(core, lvl + 1, (victim >> 1) << c.line_shift);
      }
    }
    return miss;
  }

  // The model of Valgrind's cachegrind (cg_sim.c): D1 (= L1) and LL (= L2),
  // LRU, write-allocate; an access is one reference at each level, a miss
  // if any line it touches misses; LL is consulted, with the whole access,
  // only on an L1 miss; a modify counts as one read; instruction fetches go
  // through I1 and then the same LL; accesses longer than the smallest line
  // size are cut to it (cachegrind does that for its large "dirty helper"
  // accesses, e.g. fxsave; no ordinary load or store is that long).
  template <bool kMon>
  void run_compat(uint32_t core, const Access* accesses, size_t n) {
    RawCounters& k1 = raw(core, 0);
    RawCounters& k2 = raw(core, 1);
    ReferenceCounts& r = refs[core];
    for (size_t i = 0; i < n; ++i) {
      const Access& a = accesses[i];
      const uint32_t size = a.size == 0 ? 1 : std::min(a.size, compat_max_size);
      if (a.type == kInstruction) {
        ++r.instructions;
        if (!has_icache) continue;
        RawCounters& ki = raw(core, nlevels);
        ++ki.accesses[kClsFetch];
        if (!compat_ref(core, nlevels, icache, a.addr, size, false)) continue;
        ++ki.misses[kClsFetch];
        ++k2.accesses[kClsFetch];
        if (compat_ref(core, 1, data[1], a.addr, size, false)) ++k2.misses[kClsFetch];
        continue;
      }
      if (a.type == kRead) ++r.reads;
      else if (a.type == kWrite) ++r.writes;
      else ++r.modifies;
      const Class cls = a.type == kWrite ? kClsWrite : kClsRead;
      ++k1.accesses[cls];
      if (!compat_ref(core, 0, data[0], a.addr, size, a.type != kRead)) {
        note<kMon>(core, a.addr, 0, hit_kind(cls));
        continue;
      }
      ++k1.misses[cls];
      note<kMon>(core, a.addr, 0, miss_kind(cls));
      ++k2.accesses[cls];
      if (compat_ref(core, 1, data[1], a.addr, size, false)) {
        ++k2.misses[cls];
        note<kMon>(core, a.addr, 1, miss_kind(cls));
      } else {
        note<kMon>(core, a.addr, 1, hit_kind(cls));
      }
    }
  }

  // ------------------------------------------------------------ parts

  // A split hierarchy (Hierarchy::create) has an engine per part; this one
  // holds the lines for which own() is true. Unsplit: split_mask 0 and
  // part 0, so every line is its own.
  uint64_t split_mask = 0;
  uint64_t part = 0;
  bool own(uint64_t line) const { return uint64_t((line & split_mask) != 0) == part; }

  // simulate() on a split hierarchy: the references of this part (within
  // one line and of this part, or straddling) copied into `scratch`, and
  // the kernel run over the copy a block at a time.
  static constexpr size_t kScratch = 4096;
  std::vector<Access> scratch;

  // The copy, from in[*i] on, until `room` are taken or the input ends.
  // Branch-free (every reference is written, and kept by advancing the
  // end), so a stream whose parts alternate costs no mispredictions; a
  // function of its own so that its state stays in registers.
  static size_t copy_part(const Access* __restrict in, size_t* i, size_t n, Access* __restrict out, size_t room,
                          uint32_t shift, uint64_t mask, uint64_t part) {
    size_t k = 0, j = *i;
    const size_t end = n - j < room ? n : j + room;
    for (; j < end; ++j) {
      const uint64_t addr = in[j].addr, size = in[j].size;
      const uint64_t first = addr >> shift, last = (addr + size - (size != 0)) >> shift;
      std::memcpy(&out[k], &in[j], sizeof(Access));
      k += (uint64_t((first & mask) != 0) == part) | (first != last);
    }
    *i = j;
    return k;
  }

  void run_sorted(uint32_t core, const Access* in, size_t n) {
    if (scratch.size() != kScratch) scratch.resize(kScratch);
    for (size_t i = 0; i < n;) {
      const size_t k = copy_part(in, &i, n, scratch.data(), kScratch, data[0].line_shift, split_mask, part);
      if (k > 0) (this->*kernel)(core, scratch.data(), k);
    }
  }

  // The kernel over a batch sorted for part `as` of a split by `mask`
  // while this engine, part 0 of a hierarchy joined since, holds every
  // set: it simulates the batch as that part would have, only the lines
  // of that part (a reference across lines is in both parts' batches) and
  // counting a reference in the part of its first byte.
  void run_as_part(uint64_t as, uint64_t mask, uint32_t core, const Access* in, size_t n) {
    split_mask = mask;
    part = as;
    (this->*kernel)(core, in, n);
    split_mask = 0;
    part = 0;
  }
};

// ---------------------------------------------------------------- public

std::string split_reason(const HierarchyConfig& config, uint32_t modulus) {
  if (modulus <= 1) return "";
  if (modulus > 64 || !std::has_single_bit(modulus))
    return "the split modulus must be 0, 1 or a power of two up to 64, not " + std::to_string(modulus);
  if (config.cachegrind_compatible)
    return "cachegrind-compatible counting takes an access across two lines as one event";
  auto check = [&](const LevelConfig& l, const std::string& name) -> std::string {
    if (l.line_bytes != config.levels[0].line_bytes)
      return name + "'s line size " + std::to_string(l.line_bytes) + " differs from L1's " +
             std::to_string(config.levels[0].line_bytes);
    const uint64_t sets = l.size_bytes / (uint64_t(l.line_bytes) * l.ways);
    if (sets < modulus)
      return name + " has " + std::to_string(sets) + (sets == 1 ? " set" : " sets") + ", fewer than the modulus " +
             std::to_string(modulus);
    return "";
  };
  for (size_t i = 0; i < config.levels.size(); ++i)
    if (std::string e = check(config.levels[i], "L" + std::to_string(i + 1)); !e.empty()) return e;
  if (config.instruction_l1)
    if (std::string e = check(*config.instruction_l1, "I1"); !e.empty()) return e;
  return "";
}

Hierarchy::Hierarchy(std::vector<std::unique_ptr<Impl>> parts, uint64_t mask, uint64_t deferred_mask)
    : parts_(std::move(parts)), mask_(mask), deferred_mask_(deferred_mask) {}
Hierarchy::~Hierarchy() = default;

std::unique_ptr<Hierarchy> Hierarchy::create(const HierarchyConfig& config, std::string* error,
                                             uint32_t split_modulus, bool deferred) {
  return create_with_search(config, set_search().vector, error, split_modulus, deferred);
}

std::unique_ptr<Hierarchy> Hierarchy::create_with_search(const HierarchyConfig& config, bool vector,
                                                         std::string* error, uint32_t split_modulus,
                                                         bool deferred) {
  std::string e = validate_config(config);
  if (e.empty()) e = split_reason(config, split_modulus);
  if (!e.empty()) {
    if (error) *error = e;
    return nullptr;
  }
  std::vector<std::unique_ptr<Impl>> engines;
  const uint32_t parts = split_modulus > 1 ? 2 : 1;
  const uint64_t mask = parts > 1 ? split_modulus - 1 : 0;
  // Deferred: mask 0 in both engines until split(), so part 0 owns every
  // line and part 1 none.
  const uint64_t now = deferred ? 0 : mask;
  try {
    for (uint32_t p = 0; p < parts; ++p) {
      engines.push_back(std::make_unique<Impl>());
      engines.back()->init(config, p > 0 ? engines.front().get() : nullptr, vector);
      engines.back()->split_mask = now;
      engines.back()->part = p;
    }
  } catch (const std::bad_alloc&) {
    // A valid configuration can still be too large for this machine
    // (validate_config allows sizes up to 1 TiB a level).
    if (error)
      // Part 1 borrows part 0's large arrays (kBorrowTagBytes): its own
      // are under 1 MiB each.
      *error = "cannot allocate the simulated caches: " + std::to_string(tag_bytes(config)) + " bytes of tags" +
               (parts > 1 ? " (and the second part's copies of the small levels)" : "");
    return nullptr;
  }
  return std::unique_ptr<Hierarchy>(new Hierarchy(std::move(engines), now, parts > 1 && deferred ? mask : 0));
}

namespace {

// Threads that simulate their own batches take turns at a part's mutex, a
// batch (microseconds) at a time: try for a while before sleeping, which on
// a virtual machine costs tens of microseconds to wake from. 1500 pauses:
// ~35 us on a Zen 5 (4000 did no better, docs/PERFORMANCE.md).
void lock_for_batch(std::mutex& mutex) {
  constexpr int kLockTries = 1500;
  for (int i = 0; i < kLockTries; ++i) {
    if (mutex.try_lock()) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  mutex.lock();
}

// Every part's mutex, in part order, for the readers and the monitor
// changes (which see or change all parts at once).
class AllParts {
 public:
  explicit AllParts(const std::vector<std::unique_ptr<Hierarchy::Impl>>& parts) : parts_(parts) {
    for (const auto& p : parts_) p->mutex.lock();
  }
  ~AllParts() {
    for (auto it = parts_.rbegin(); it != parts_.rend(); ++it) (*it)->mutex.unlock();
  }
  AllParts(const AllParts&) = delete;
  AllParts& operator=(const AllParts&) = delete;

 private:
  const std::vector<std::unique_ptr<Hierarchy::Impl>>& parts_;
};

// Calls f(engine, monitor) for every part's copy of monitor `id`, with all
// parts locked; whether there is one.
template <class F>
bool each_copy(const std::vector<std::unique_ptr<Hierarchy::Impl>>& parts, int id, F f) {
  AllParts lock(parts);
  bool found = false;
  for (const auto& p : parts) {
    auto it = p->monitors.find(id);
    if (it == p->monitors.end()) continue;
    found = true;
    f(*p, it->second);
  }
  return found;
}

// sort_parts' loop: `bits` selects the line number's low bits in the
// address. A reference across lines goes to both outputs (as copy_part's:
// each part simulates its own lines of it, and the part of the first byte
// counts it). With a branch per reference, 0.6 ns a reference on the Zen 5
// host, against 1.0-1.5 for a branch-free form that writes every reference
// to both outputs (even on a stream whose parts alternate at random).
void sort_into(const Access* __restrict in, size_t n, Access* __restrict out0, size_t* n0, Access* __restrict out1,
               size_t* n1, uint32_t shift, uint64_t bits) {
  const uint64_t offset = (uint64_t{1} << shift) - 1;  // of a byte within its line
  size_t k0 = 0, k1 = 0;
  for (size_t j = 0; j < n; ++j) {
    const Access a = in[j];
    const uint32_t size = a.size == 0 ? 1 : a.size;
    if (__builtin_expect((a.addr & offset) + size > offset + 1, 0)) {
      out0[k0++] = a;
      out1[k1++] = a;
    } else if (a.addr & bits) {
      out1[k1++] = a;
    } else {
      out0[k0++] = a;
    }
  }
  *n0 = k0;
  *n1 = k1;
}

#if defined(__x86_64__)
// For each set of kept records among four (a bit each), the 64-bit lanes
// that bring them to the front, in order.
struct alignas(64) KeepFront {
  int64_t lane[16][8];
  constexpr KeepFront() : lane{} {
    for (int m = 0; m < 16; ++m) {
      int at = 0;
      for (int r = 0; r < 4; ++r)
        if (m & (1 << r)) {
          lane[m][at++] = 2 * r;
          lane[m][at++] = 2 * r + 1;
        }
      while (at < 8) lane[m][at++] = 0;
    }
  }
  const int64_t* operator[](uint32_t m) const { return lane[m]; }
};
constexpr KeepFront kKeepFront;

// condense()'s loop, eight references at a time with AVX-512 (the
// foundation, conflict detection (CD), 32-bit population counts
// (VPOPCNTDQ)), chosen at run time; without them nothing is dropped.
//
// A reference j is dropped when the references before it in the batch
// show, within a window of the (up to) 15 references before it, that it hits
// the most recent way of its L1 set and changes nothing there:
//   - it is a read or a write within one line;
//   - the latest reference in the window to its slot (the L1 sets equal
//     modulo 64: line & slot_mask, a superset of its set) is to its line:
//     no other line of its set came since, so its line is the set's most
//     recent (LRU, write-allocate: a reference leaves its line there);
//   - a read; or a write, and the window has a write (or modify) to its
//     line followed by fewer than `ways` references to other lines of its
//     slot: the line has been dirty since (it cannot have left the set,
//     and only leaving it cleans a line of a one-core batch).
// A reference across lines touches two slots: its block and the next are
// left whole. So is any window whose lines differ above their low 32 bits
// (the lines are compared as 32-bit numbers). Instruction fetches do not
// touch the data levels and take no part. The last n % 8 references are
// kept. About 1.1 ns a reference on the Zen 5 host (sim_throughput's
// condense rungs), where the simulation takes 1.6-2.5 on such a stream.
#define MRI_CONDENSE_TARGET __attribute__((target("avx512f,avx512cd,avx512vpopcntdq")))

// (GCC 12's AVX-512 shifts start from an undefined vector, which
// -Wmaybe-uninitialized takes for a use of one.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
MRI_CONDENSE_TARGET
size_t condense_avx512(const Access* in, size_t n, Access* out, uint32_t shift, uint32_t slot_mask, uint32_t ways,
                       Condensed* dropped) {
  const __m128i vshift = _mm_cvtsi32_si128(int(shift));
  const __m512i addr_index = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i meta_index = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
  const __m512i low32 = _mm512_set1_epi64(0xffffffff);
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i two = _mm512_set1_epi64(2);
  const __m512i three = _mm512_set1_epi64(3);
  const __m256i slots = _mm256_set1_epi32(int(slot_mask));
  const __m512i all = _mm512_set1_epi32(-1);
  const __m512i thirty_two = _mm512_set1_epi32(32);
  const __m512i vways = _mm512_set1_epi32(int(std::min<uint32_t>(ways, 32)));
  // The block before, as the window's low 8 lanes.
  __m256i prev_line = _mm256_setzero_si256(), prev_slot = _mm256_setzero_si256();
  uint32_t prev_data = 0, prev_written = 0;
  bool prev_whole = false;  // crossed lines or had other high bits: no drops that look into it
  __m512i high_bits = _mm512_set1_epi64(n ? int64_t(in[0].addr >> shift >> 32) : 0);
  size_t k = 0, j = 0;
  uint64_t reads = 0, writes = 0;
  for (; j + 8 <= n; j += 8) {
    const __m512i r0 = _mm512_loadu_si512(in + j), r1 = _mm512_loadu_si512(in + j + 4);
    const __m512i addr = _mm512_permutex2var_epi64(r0, addr_index, r1);
    const __m512i meta = _mm512_permutex2var_epi64(r0, meta_index, r1);
    const __m512i size = _mm512_and_si512(meta, low32);
    const __m512i type = _mm512_srli_epi64(meta, 32);
    const __m512i line = _mm512_srl_epi64(addr, vshift);
    const __m512i end = _mm512_add_epi64(addr, size);
    const __m512i last_byte = _mm512_mask_sub_epi64(end, _mm512_test_epi64_mask(size, size), end, one);
    const __mmask8 one_line = _mm512_cmpeq_epi64_mask(line, _mm512_srl_epi64(last_byte, vshift));
    const __mmask8 data = _mm512_cmpneq_epi64_mask(type, three);
    const __mmask8 simple = _mm512_cmple_epu64_mask(type, one) & one_line;  // a read or write of one line
    const __mmask8 written =  // writes and modifies
        _mm512_mask_cmpeq_epi64_mask(data, type, one) | _mm512_mask_cmpeq_epi64_mask(data, type, two);
    const __mmask8 is_write = _mm512_cmpeq_epi64_mask(type, one);
    // High bits: every data lane's those of `high_bits` (then so were the
    // block before's, unless it was whole); where not, the block is whole
    // and its last data lane's become `high_bits`.
    const __m512i high = _mm512_srli_epi64(line, 32);
    const __mmask8 other_high = _mm512_mask_cmpneq_epi64_mask(data, high, high_bits);
    if (__builtin_expect(other_high != 0, 0))
      high_bits = _mm512_permutexvar_epi64(_mm512_set1_epi64(31 - __builtin_clz(data)), high);
    const bool whole = (data & ~one_line) != 0 || other_high != 0;
    const bool looks = !whole && !prev_whole;
    const __m256i line32 = _mm512_cvtepi64_epi32(line);
    const __m256i slot32 = _mm256_and_si256(line32, slots);
    uint32_t drop = 0;
    if (looks && simple) {
      const __m512i lines = _mm512_inserti64x4(_mm512_castsi256_si512(prev_line), line32, 1);
      const __m512i slotv = _mm512_inserti64x4(_mm512_castsi256_si512(prev_slot), slot32, 1);
      const __m512i data16 = _mm512_set1_epi32(int(prev_data | (uint32_t(data) << 8)));
      const __m512i written16 = _mm512_set1_epi32(int(prev_written | (uint32_t(written) << 8)));
      const __m512i same_slot = _mm512_and_si512(_mm512_conflict_epi32(slotv), data16);
      const __m512i same_line = _mm512_and_si512(_mm512_conflict_epi32(lines), data16);
      const __m512i other = _mm512_andnot_si512(same_line, same_slot);  // other lines of the slot
      // The latest of the slot is of the line: its top bit above other's.
      const __mmask16 recent = _mm512_cmplt_epi32_mask(_mm512_lzcnt_epi32(same_slot), _mm512_lzcnt_epi32(other));
      // Dirty: other lines of the slot after the latest write to the line.
      const __m512i line_writes = _mm512_and_si512(same_line, written16);
      const __m512i after = _mm512_sllv_epi32(all, _mm512_sub_epi32(thirty_two, _mm512_lzcnt_epi32(line_writes)));
      const __m512i between = _mm512_popcnt_epi32(_mm512_and_si512(other, after));
      const __mmask16 dirty =
          _mm512_test_epi32_mask(line_writes, line_writes) & _mm512_cmplt_epi32_mask(between, vways);
      const uint32_t cur_recent = uint32_t(recent) >> 8, cur_dirty = uint32_t(dirty) >> 8;
      drop = simple & cur_recent & (~uint32_t(is_write) | cur_dirty);
    }
    const uint32_t kept = ~drop & 0xff;
    const uint32_t k0 = kept & 0xf, k1 = kept >> 4;
    const uint32_t n0 = uint32_t(__builtin_popcount(k0)), n1 = uint32_t(__builtin_popcount(k1));
    // The kept records of each half to its front (a permutation from a
    // table: vpcompressq takes 5 cycles here), then whole 64-byte stores (a
    // masked store is several times slower): k <= j, so each stays within
    // the first j + 8 records of `out`.
    _mm512_storeu_si512(out + k, _mm512_permutexvar_epi64(_mm512_load_si512(kKeepFront[k0]), r0));
    k += n0;
    _mm512_storeu_si512(out + k, _mm512_permutexvar_epi64(_mm512_load_si512(kKeepFront[k1]), r1));
    k += n1;
    const uint32_t dropped_writes = uint32_t(__builtin_popcount(drop & is_write));
    writes += dropped_writes;
    reads += uint32_t(__builtin_popcount(drop)) - dropped_writes;
    prev_line = line32;
    prev_slot = slot32;
    prev_data = data;
    prev_written = written;
    prev_whole = whole;
  }
  std::memcpy(out + k, in + j, (n - j) * sizeof(Access));
  k += n - j;
  dropped->reads = reads;
  dropped->writes = writes;
  return k;
}
#pragma GCC diagnostic pop

bool condense_supported() {
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                                __builtin_cpu_supports("avx512vpopcntdq");
  return supported;
}
#else
bool condense_supported() { return false; }
#endif
}  // namespace

bool Hierarchy::can_condense() { return condense_supported(); }

bool Hierarchy::vector_lookups() { return set_search().vector; }

bool Hierarchy::vector_search() const { return parts_[0]->vec; }

size_t Hierarchy::condense(const Access* in, size_t n, Access* out, Condensed* dropped) const {
#if defined(__x86_64__)
  const Impl& s = *parts_[0];
  if (s.condensable.load(std::memory_order_relaxed) && condense_supported())
    return condense_avx512(in, n, out, s.data[0].line_shift, uint32_t(s.data[0].set_mask & 63), s.data[0].ways,
                           dropped);
#endif
  std::memcpy(out, in, n * sizeof(Access));
  *dropped = Condensed{};
  return n;
}

bool Hierarchy::split() {
  if (deferred_mask_ == 0) return false;
  AllParts lock(parts_);
  Impl& from = *parts_[0];
  Impl& to = *parts_[1];
  if (from.split_mask != 0) return false;
  // Part 1 takes part 0's cache contents (its counters and monitor counts,
  // zero or from an earlier split, stay: readers sum over both parts), and
  // from now on each part touches only its own sets (split_reason: a set
  // holds lines of one part).
  auto copy = [](const Cache& a, Cache& b) {
    if (!b.borrowed) std::copy(a.first, a.first + size_t(a.instances) * a.sets * a.ways, b.first);
  };
  for (uint32_t i = 0; i < from.nlevels; ++i) copy(from.data[i], to.data[i]);
  if (from.has_icache) copy(from.icache, to.icache);
  from.split_mask = to.split_mask = deferred_mask_;
  mask_.store(deferred_mask_, std::memory_order_release);
  return true;
}

bool Hierarchy::unsplit() {
  if (deferred_mask_ == 0) return false;
  AllParts lock(parts_);
  Impl& to = *parts_[0];
  const Impl& from = *parts_[1];
  if (to.split_mask == 0) return false;
  // Part 1's sets back into part 0; its counters and monitor counts stay
  // where they are (readers sum over both parts).
  auto merge = [&](const Cache& a, Cache& b) {
    if (a.borrowed) return;  // one array: part 1's sets are there already
    for (uint32_t instance = 0; instance < a.instances; ++instance)
      for (uint64_t set = 0; set < a.sets; ++set)
        if (set & deferred_mask_) {
          const size_t at = (size_t(instance) * a.sets + a.position(set)) * a.ways;
          std::copy(a.first + at, a.first + at + a.ways, b.first + at);
        }
  };
  for (uint32_t i = 0; i < to.nlevels; ++i) merge(from.data[i], to.data[i]);
  if (to.has_icache) merge(from.icache, to.icache);
  to.split_mask = parts_[1]->split_mask = 0;
  mask_.store(0, std::memory_order_release);
  return true;
}

uint64_t Hierarchy::sort_parts(const Access* in, size_t n, Access* out0, size_t* n0, Access* out1, size_t* n1,
                               bool as_planned) const {
  const uint64_t mask = as_planned ? planned_split_mask() : split_mask();
  if (mask == 0) {
    std::memcpy(out0, in, n * sizeof(Access));
    *n0 = n;
    *n1 = 0;
    return 0;
  }
  sort_into(in, n, out0, n0, out1, n1, split_shift(), mask << split_shift());
  return mask;
}
void Hierarchy::simulate(uint32_t core, const Access* accesses, size_t n) { simulate(core, accesses, n, Condensed{}); }

void Hierarchy::simulate(uint32_t core, const Access* accesses, size_t n, const Condensed& dropped) {
  for (const auto& p : parts_) {
    Impl& s = *p;
    lock_for_batch(s.mutex);
    std::lock_guard<std::mutex> lock(s.mutex, std::adopt_lock);
    const uint32_t c = core % s.cores;
    s.batch_thread = core;
    if (&s == parts_[0].get() && (dropped.reads | dropped.writes) != 0) {
      // The dropped references: L1 hits of this core (part 0 holds them
      // whatever their lines: readers sum over the parts).
      RawCounters& k = s.raw(c, 0);
      k.accesses[kClsRead] += dropped.reads;
      k.accesses[kClsWrite] += dropped.writes;
      s.refs[c].reads += dropped.reads;
      s.refs[c].writes += dropped.writes;
    }
    // Not split (or deferred and not yet split, which split() decides
    // under this mutex too): part 0 simulates everything.
    if (s.split_mask == 0) return (s.*s.kernel)(c, accesses, n);
    s.run_sorted(c, accesses, n);
  }
}

void Hierarchy::simulate_part(uint32_t part, uint32_t core, const Access* accesses, size_t n) {
  if (part >= parts_.size() || n == 0) return;
  Impl& s = *parts_[part];
  {
    lock_for_batch(s.mutex);
    std::lock_guard<std::mutex> lock(s.mutex, std::adopt_lock);
    s.batch_thread = core;
    if (s.split_mask != 0 || deferred_mask_ == 0) return (s.*s.kernel)(core % s.cores, accesses, n);
    // A deferred hierarchy joined since the batch was sorted: part 0 has
    // every set again.
    if (part == 0) return s.run_as_part(0, deferred_mask_, core % s.cores, accesses, n);
  }
  AllParts lock(parts_);  // part 0, then part 1 (split again meanwhile?)
  Impl& p1 = *parts_[1];
  p1.batch_thread = parts_[0]->batch_thread = core;
  if (p1.split_mask != 0) return (p1.*p1.kernel)(core % p1.cores, accesses, n);
  parts_[0]->run_as_part(1, deferred_mask_, core % s.cores, accesses, n);
}

uint32_t Hierarchy::parts() const { return uint32_t(parts_.size()); }
uint32_t Hierarchy::split_shift() const { return parts_[0]->data[0].line_shift; }
uint64_t Hierarchy::split_mask() const { return mask_.load(std::memory_order_acquire); }
uint64_t Hierarchy::planned_split_mask() const { return deferred_mask_ ? deferred_mask_ : split_mask(); }
bool Hierarchy::deferred() const { return deferred_mask_ != 0; }

void Hierarchy::access(uint32_t core, uint64_t addr, uint32_t size, AccessType type) {
  const Access a{addr, size, type};
  simulate(core, &a, 1);
}

namespace {
LevelCounters to_public(const RawCounters& r) {
  LevelCounters c;
  c.read_misses = r.misses[kClsRead];
  c.read_hits = r.accesses[kClsRead] - c.read_misses;
  c.write_misses = r.misses[kClsWrite];
  c.write_hits = r.accesses[kClsWrite] - c.write_misses;
  c.fetch_misses = r.misses[kClsFetch];
  c.fetch_hits = r.accesses[kClsFetch] - c.fetch_misses;
  c.write_backs = r.write_backs;
  c.invalidations = r.invalidations;
  return c;
}
}  // namespace

LevelCounters Hierarchy::counters(uint32_t core, uint32_t level) const {
  AllParts lock(parts_);
  LevelCounters sum;
  if (core >= cores() || level >= levels()) return sum;
  for (const auto& p : parts_) sum += to_public(p->raw(core, level));
  return sum;
}

LevelCounters Hierarchy::total_counters(uint32_t level) const {
  AllParts lock(parts_);
  LevelCounters sum;
  if (level >= levels()) return sum;
  for (const auto& p : parts_)
    for (uint32_t core = 0; core < p->cores; ++core) sum += to_public(p->raw(core, level));
  return sum;
}

LevelCounters Hierarchy::instruction_counters(uint32_t core) const {
  AllParts lock(parts_);
  LevelCounters sum;
  if (core >= cores() || !parts_[0]->has_icache) return sum;
  for (const auto& p : parts_) sum += to_public(p->raw(core, p->nlevels));
  return sum;
}

namespace {
void add_references(ReferenceCounts& sum, const ReferenceCounts& r) {
  sum.reads += r.reads;
  sum.writes += r.writes;
  sum.modifies += r.modifies;
  sum.instructions += r.instructions;
}
}  // namespace

ReferenceCounts Hierarchy::references(uint32_t core) const {
  AllParts lock(parts_);
  ReferenceCounts sum;
  if (core >= cores()) return sum;
  for (const auto& p : parts_) add_references(sum, p->refs[core]);
  return sum;
}

ReferenceCounts Hierarchy::total_references() const {
  AllParts lock(parts_);
  ReferenceCounts sum;
  for (const auto& p : parts_)
    for (const ReferenceCounts& r : p->refs) add_references(sum, r);
  return sum;
}

void Hierarchy::reset_counters() {
  AllParts lock(parts_);
  for (const auto& p : parts_) {
    std::fill(p->counters.begin(), p->counters.end(), RawCounters{});
    std::fill(p->refs.begin(), p->refs.end(), ReferenceCounts{});
  }
}

void Hierarchy::invalidate_all() {
  AllParts lock(parts_);
  for (const auto& p : parts_) {
    for (Cache& c : p->data) std::fill(c.tags.begin(), c.tags.end(), kInvalid);
    if (p->has_icache) std::fill(p->icache.tags.begin(), p->icache.tags.end(), kInvalid);
  }
}

int Hierarchy::add_monitor(const MonitorSpec& spec, std::string* error) {
  Impl& s = *parts_[0];
  auto fail = [&](std::string message) {
    if (error) *error = std::move(message);
    return -1;
  };
  if (spec.whole_address_space) {
    if (spec.bins != 1) return fail("a whole-address-space monitor has exactly 1 bin, not " + std::to_string(spec.bins));
    if (spec.bin_bytes != 0 || spec.bin_phase != 0) return fail("a whole-address-space monitor has no bin geometry");
  } else {
    if (spec.end <= spec.begin) return fail("the range is empty: end must be above begin");
    if (spec.bins == 0) return fail("bins must be at least 1");
    if (spec.bin_bytes == 0 && spec.bin_phase != 0) return fail("bin_phase needs bin_bytes");
    if (spec.bin_bytes != 0) {
      if (spec.bin_phase >= spec.bin_bytes) return fail("bin_phase must be below bin_bytes");
      const uint64_t need = (spec.bin_phase + (spec.end - spec.begin) - 1) / spec.bin_bytes + 1;
      if (need != spec.bins)
        return fail("bins (" + std::to_string(spec.bins) + ") must be " + std::to_string(need) +
                    " for this range, bin_bytes and bin_phase");
    } else if (spec.bins > spec.end - spec.begin) {
      return fail("bins (" + std::to_string(spec.bins) + ") exceeds the range's " +
                  std::to_string(spec.end - spec.begin) + " bytes");
    }
  }
  if (spec.bins > (1u << 24)) return fail("bins must be at most 16777216");
  if (spec.events.empty()) return fail("no event to count");
  AllParts lock(parts_);
  if (spec.core < -1 || spec.core >= int32_t(s.cores))
    return fail("core " + std::to_string(spec.core) + " is outside -1.." + std::to_string(s.cores - 1));
  if (spec.thread < -1) return fail("thread " + std::to_string(spec.thread) + " is below -1");
  MonitorData m;
  m.spec = spec;
  for (const Event& e : spec.events) {
    if (e.level >= s.nlevels)
      return fail("event level " + std::to_string(e.level) + " (L" + std::to_string(e.level + 1) +
                  ") is beyond the " + std::to_string(s.nlevels) + " data levels");
    if (uint32_t(e.kind) >= kEventKinds) return fail("unknown event kind " + std::to_string(int(e.kind)));
    m.mask |= uint64_t{1} << event_bit(e.level, e.kind);
  }
  for (uint32_t bit = 0; bit < 64; ++bit)
    if ((m.mask >> bit) & 1) m.events.push_back(Event{uint8_t(bit / 8), EventKind(bit % 8)});
  if (!spec.whole_address_space) {
    const uint64_t span = spec.end - spec.begin;
    m.bin_bytes = spec.bin_bytes ? spec.bin_bytes : span / spec.bins + (span % spec.bins != 0);
  }
  const int id = s.next_monitor_id;  // the same in every part
  try {  // up to 2^24 bins of every event, in every part: gigabytes
    m.totals.assign(m.events.size(), 0);
    m.bins.assign(size_t(spec.bins) * m.events.size(), 0);
    for (const auto& p : parts_) p->monitors.emplace(id, m);
  } catch (const std::bad_alloc&) {
    for (const auto& p : parts_) p->monitors.erase(id);
    return fail("cannot allocate the monitor's counts (" + std::to_string(spec.bins) + " bins of " +
                std::to_string(m.events.size()) + " events, " + std::to_string(parts_.size()) +
                (parts_.size() == 1 ? " copy)" : " copies)"));
  }
  for (const auto& p : parts_) {
    ++p->next_monitor_id;
    p->refresh_active();
  }
  return id;
}

bool Hierarchy::remove_monitor(int id) {
  AllParts lock(parts_);
  bool found = false;
  for (const auto& p : parts_)
    if (p->monitors.erase(id) != 0) {
      found = true;
      p->refresh_active();
    }
  return found;
}

bool Hierarchy::set_monitor_enabled(int id, bool enabled) {
  return each_copy(parts_, id, [&](Impl& engine, auto& m) {
    const bool on = enabled && !m.frozen;
    if (m.spec.enabled != on) {
      m.spec.enabled = on;
      engine.refresh_active();
    }
  });
}

bool Hierarchy::freeze_monitor(int id) {
  return each_copy(parts_, id, [](Impl& engine, auto& m) {
    m.frozen = true;
    if (m.spec.enabled) {
      m.spec.enabled = false;
      engine.refresh_active();
    }
  });
}

bool Hierarchy::reset_monitor(int id) {
  return each_copy(parts_, id, [](Impl&, auto& m) {
    std::fill(m.totals.begin(), m.totals.end(), 0);
    std::fill(m.bins.begin(), m.bins.end(), 0);
  });
}

// Monitors are added to and removed from every part at once, so a monitor
// is in all parts or in none: the readers sum over the parts.
bool Hierarchy::monitor_result(int id, MonitorResult* out) const {
  AllParts lock(parts_);
  auto it = parts_[0]->monitors.find(id);
  if (it == parts_[0]->monitors.end()) return false;
  const MonitorData& m = it->second;
  out->events = m.events;
  out->totals = m.totals;
  out->bins = m.spec.bins;
  out->bin_bytes = m.bin_bytes;
  out->bin_counts = m.bins;
  for (size_t p = 1; p < parts_.size(); ++p) {
    const MonitorData& o = parts_[p]->monitors.at(id);
    for (size_t e = 0; e < o.totals.size(); ++e) out->totals[e] += o.totals[e];
    for (size_t b = 0; b < o.bins.size(); ++b) out->bin_counts[b] += o.bins[b];
  }
  return true;
}

bool Hierarchy::monitor_totals(int id, uint64_t* out, size_t n) const {
  AllParts lock(parts_);
  if (parts_[0]->monitors.find(id) == parts_[0]->monitors.end()) return false;
  for (size_t p = 0; p < parts_.size(); ++p) {
    const std::vector<uint64_t>& t = parts_[p]->monitors.find(id)->second.totals;
    const size_t k = std::min(n, t.size());
    for (size_t e = 0; e < k; ++e) out[e] = (p == 0 ? 0 : out[e]) + t[e];
  }
  return true;
}

bool Hierarchy::monitor_bin_counts(int id, size_t event_index, uint64_t* out, size_t n) const {
  AllParts lock(parts_);
  auto it = parts_[0]->monitors.find(id);
  if (it == parts_[0]->monitors.end()) return false;
  const size_t events = it->second.events.size();
  if (event_index >= events) return false;
  const size_t bins = std::min<size_t>(n, it->second.spec.bins);
  for (size_t p = 0; p < parts_.size(); ++p) {
    const std::vector<uint64_t>& counts = parts_[p]->monitors.find(id)->second.bins;
    for (size_t b = 0; b < bins; ++b) out[b] = (p == 0 ? 0 : out[b]) + counts[b * events + event_index];
  }
  return true;
}

const HierarchyConfig& Hierarchy::config() const { return parts_[0]->config; }
uint32_t Hierarchy::cores() const { return parts_[0]->cores; }
uint32_t Hierarchy::levels() const { return parts_[0]->nlevels; }

}  // namespace mri::sim

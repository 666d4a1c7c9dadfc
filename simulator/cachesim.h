// cachesim.h - a standalone cache-hierarchy simulator (no MRI dependency).
//
// What it models (README.md has the details and the config syntax):
//   - 1 to 8 data/unified levels L1..Ln, each set-associative with its own
//     size, line size and associativity, LRU or FIFO replacement,
//     write-back or write-through, write-allocate or no-write-allocate;
//   - an optional private level-1 instruction cache (I1) whose misses go to
//     L2 (or to memory when there is only L1);
//   - N simulated cores; each level is private (one instance per core) or
//     shared by groups of cores; a write invalidates the line in every cache
//     instance that is not on the writing core's path;
//   - address-range monitors that count chosen events per range and per
//     histogram bin while the cache state is simulated for every access;
//   - a cachegrind-compatible mode that reproduces Valgrind cachegrind's
//     counts exactly from the same address stream.
//
// Thread safety: every public member of Hierarchy takes an internal mutex,
// so any thread may call any of them. simulate() holds it for the whole
// batch: threads feeding different cores serialise batch by batch, which
// keeps the result a deterministic interleaving of whole batches. A
// hierarchy split in two parts (Hierarchy::create, split_reason) has one
// mutex per part, and two threads may simulate the two parts at once. The
// free functions are pure and thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mri::sim {

// ---------------------------------------------------------------- config

enum class Replacement : uint8_t {
  kLru,   // least recently used: a hit makes the line the most recent
  kFifo,  // first in, first out: hits do not change the eviction order
};

// One cache level. Sizes are in bytes.
struct LevelConfig {
  uint64_t size_bytes = 0;
  uint32_t ways = 0;        // associativity
  uint32_t line_bytes = 0;
  Replacement replacement = Replacement::kLru;
  // Cores per instance of this level: 1 = private, 0 = one instance shared
  // by all cores, N = cores 0..N-1 share one instance, N..2N-1 the next, ...
  uint32_t shared_by = 1;
  bool write_back = true;      // false: write-through (every write goes on)
  bool write_allocate = true;  // false: a write miss does not fill the line
};

struct HierarchyConfig {
  std::vector<LevelConfig> levels;            // data/unified; [0] is L1
  std::optional<LevelConfig> instruction_l1;  // I1, private
  uint32_t cores = 1;
  // Reproduce cachegrind's counting (README.md, "cachegrind-compatible
  // mode"); needs exactly L1 and L2, LRU, write-back, write-allocate, one core.
  bool cachegrind_compatible = false;
};

inline constexpr uint32_t kMaxLevels = 8;
inline constexpr uint32_t kMaxDefaultWays = 32;  // default_config(): associativity cap
inline constexpr uint32_t kMaxCores = 1024;

// Checks a configuration. Returns "" when it is usable, else one message that
// names the level, the field and the reason, e.g.
//   "L2: 24576 sets is not a power of two (size 1536K / (64-byte lines x 1 way))".
// Pure; thread-safe.
std::string validate_config(const HierarchyConfig& config);

// Parses the config syntax (README.md), e.g.
//   "L1:32K,8,64,lru,private;L2:1M,16,64;L3:32M,16,64,shared;cores=4".
// Items are separated by ';' or newlines; '#' starts a comment to the end of
// the line. A level is NAME:SIZE,WAYS,LINE[,OPTION...] with NAME L1..L8 or
// I1, SIZE a byte count with an optional K, M or G (powers of 1024) suffix,
// OPTION one of lru fifo private shared shared=N wb wt wa nwa. Other items:
// cores=N, cachegrind-compat. On success stores the validated config in
// `out` and returns ""; on failure leaves `out` alone and returns the
// reason. Pure: it reads no file. A text that starts with '@' (the form in
// which a user names a file, resolved by config_file.h where the user gave
// it) is an error, so a program that parses a text it was sent, such as
// the monitored program the text its tool wrote into shared memory, never
// opens a path from there. Thread-safe.
std::string parse_config(std::string_view text, HierarchyConfig& out);

// The canonical text of a config, which parse_config() reads back to an
// equal config. Pure; thread-safe.
std::string format_config(const HierarchyConfig& config);

// The bytes of tag arrays one hierarchy of `config` holds: one 8-byte tag
// per line of every cache instance (a level shared by k cores has cores /
// k instances; I1 is private). A validated config's sum fits in 64 bits.
// Pure; thread-safe.
uint64_t tag_bytes(const HierarchyConfig& config);

// The data/unified caches of this machine: from hwloc when the library was
// built with it (MRI_SIM_HAVE_HWLOC), else from sysconf(_SC_LEVEL1_DCACHE_*),
// else the fallback "L1:32K,8,64;L2:1M,16,64;L3:8M,16,64,shared". cores is
// the number of hardware threads. Each level gets a power-of-two number of
// sets and at most 32 ways (kMaxDefaultWays): the sets are the largest power
// of two that the size allows at the reported associativity, and the ways
// are then what fills the size, up to 32 (a 480 MiB 16-way cache becomes
// 2^18 sets x 30 ways, still 480 MiB; a size that cannot be matched is
// rounded down). `source`, when given, receives where the values came
// from ("hwloc", "sysconf" or "fallback"). Never fails; thread-safe.
HierarchyConfig default_config(std::string* source = nullptr);

// Whether a hierarchy with this config can be simulated in two parts split
// by `modulus` (Hierarchy::create): "" if so, else the reason. Part 0 holds
// the lines whose line number is 0 modulo `modulus`, part 1 all others (so
// part 0 gets 1/modulus of a program's lines: a thread that records
// references and simulates part 0 keeps the lighter share). That is exact
// when every level (I1 too) has the same line size and at least `modulus`
// sets: a set, and everything a reference does to it (fills, evictions,
// write-backs, invalidations), then holds lines of one part only. Not in
// cachegrind-compatible mode, where an access that straddles two lines is
// one event. `modulus` must be 0 or 1 (no split) or a power of two up to
// 64. Pure.
std::string split_reason(const HierarchyConfig& config, uint32_t modulus);

// ---------------------------------------------------------------- accesses

enum AccessType : uint32_t {
  kRead = 0,
  kWrite = 1,
  kModify = 2,       // read then write of the same bytes by one instruction
  kInstruction = 3,  // instruction fetch (simulated only with an I1)
};

// One memory reference. 16 bytes, so a batch is a plain array.
struct Access {
  uint64_t addr;
  uint32_t size;  // bytes; 0 is taken as 1
  AccessType type;
};
static_assert(sizeof(Access) == 16, "Access is a 16-byte record");

// The references Hierarchy::condense() dropped from a batch, by type.
struct Condensed {
  uint64_t reads = 0, writes = 0;
};

// Events counted per core and level. accesses = hits + misses.
struct LevelCounters {
  uint64_t read_hits = 0, read_misses = 0;
  uint64_t write_hits = 0, write_misses = 0;
  uint64_t fetch_hits = 0, fetch_misses = 0;  // instruction fetches (I1, and
                                              // the levels below it)
  uint64_t write_backs = 0;    // dirty lines this level sent down
  uint64_t invalidations = 0;  // lines removed by another core's write
  uint64_t reads() const { return read_hits + read_misses; }
  uint64_t writes() const { return write_hits + write_misses; }
  uint64_t fetches() const { return fetch_hits + fetch_misses; }
  LevelCounters& operator+=(const LevelCounters& o);
};

// References handed to simulate(), by type, per core.
struct ReferenceCounts {
  uint64_t reads = 0, writes = 0, modifies = 0, instructions = 0;
  uint64_t total() const { return reads + writes + modifies + instructions; }
};

// ---------------------------------------------------------------- monitors

enum class EventKind : uint8_t {
  kReadHit = 0,
  kReadMiss = 1,
  kWriteHit = 2,
  kWriteMiss = 3,
  kWriteBack = 4,     // attributed to the address of the evicted line
  kInvalidation = 5,  // attributed to the address of the invalidated line
};
inline constexpr uint32_t kEventKinds = 6;
const char* event_kind_name(EventKind kind);  // "read_hit", "read_miss", ...

// An event at one data level (0 = L1). Instruction fetches are not monitored.
struct Event {
  uint8_t level;
  EventKind kind;
  bool operator==(const Event&) const = default;
};

// What a monitor counts. Events of a reference are attributed to the first
// byte of the reference that lies in the line concerned (so the two halves
// of a straddling access land in their own lines; in cachegrind-compatible
// mode, where an access is one event, to its first byte; that mode
// attributes only read and write hits and misses).
struct MonitorSpec {
  bool whole_address_space = false;  // if true, begin/end are ignored
  uint64_t begin = 0, end = 0;       // [begin, end), end > begin
  // Equal-width bins of ceil((end - begin) / bins) bytes; the last may be
  // shorter. Must be 1 for a whole-address-space monitor.
  uint32_t bins = 1;
  // Explicit bin geometry (0: derived from bins as above). With bin_bytes
  // set, byte begin + k lies in bin (bin_phase + k) / bin_bytes, so a range
  // can start part-way into its first bin (a histogram over several packed
  // ranges, protocol/mri_histogram.h); bins must then be exactly
  // (bin_phase + size - 1) / bin_bytes + 1, and bin_phase < bin_bytes.
  uint64_t bin_bytes = 0;
  uint64_t bin_phase = 0;
  std::vector<Event> events;  // at least one; duplicates are ignored
  int32_t core = -1;          // count only this core's references; -1 = all
  // Count only the references of batches given to simulate() or
  // simulate_part() with exactly this `core` argument, before the modulo
  // (an application's thread index: threads i and i + cores() share a
  // simulated core, not their monitors); -1 = any. With core, both must
  // match.
  int64_t thread = -1;
  bool enabled = true;
};

struct MonitorResult {
  std::vector<Event> events;     // sorted by (level, kind), no duplicates
  std::vector<uint64_t> totals;  // per event
  uint32_t bins = 1;
  uint64_t bin_bytes = 0;  // width of a bin (0 for whole address space)
  std::vector<uint64_t> bin_counts;  // bins x events, row by row
  uint64_t count(uint32_t bin, size_t event_index) const {
    return bin_counts[size_t(bin) * events.size() + event_index];
  }
};

// ---------------------------------------------------------------- set search

// How the kernels for the common geometries (an L1 of 64 sets of 8 or 12
// ways over an L2 of 8 or 16, 64-byte lines, both LRU) search a set that
// the inline path missed: with AVX-512 compares of the whole set (and the
// levels below L1 laid out against 4K aliasing), or one way at a time.
// The counts are the same either way; which is faster depends on the CPU
// (an Intel guest ran the vector search at 160-317 million references/s,
// bimodal, the scalar one at 239-277), so it is measured.
struct SetSearch {
  enum class Reason : uint8_t {
    kNoAvx512,  // the CPU has no AVX-512F: scalar
    kForced,    // MRI_CACHESIM_VECTOR=0 (scalar) or set otherwise (vector)
    kMeasured,  // MRI_CACHESIM_VECTOR unset or empty: the faster one here
  };
  bool vector = false;  // AVX-512 compares
  Reason reason = Reason::kNoAvx512;
  // kMeasured only: each kernel's median time per reference over `rounds`
  // interleaved passes of a synthetic stream (the ijk multiply's column
  // walk: every reference of B misses L1 and hits 8 deep in L2), and what
  // the whole measurement took.
  double scalar_ns = 0, vector_ns = 0;
  uint32_t rounds = 0;
  double took_ms = 0;
};

// ---------------------------------------------------------------- hierarchy

class Hierarchy {
 public:
  // Builds the caches (all lines invalid). Returns null and sets *error to
  // validate_config()'s message when the config is not usable, or to
  // split_reason()'s when it cannot be split by `split_modulus`. Split (a
  // modulus of 2 or more), each part is a hierarchy of its own that sees
  // only its lines (a level with at least 1 MiB of tags has one array that
  // both parts use, each only its own sets; a smaller one a copy per part);
  // every count and monitor result is the sum over the two parts, and
  // equals that of an unsplit hierarchy exactly (tests/test_parts.cpp).
  // Deferred (a modulus of 2 or more and `deferred`): built with its two
  // parts but not split yet: part 0 simulates every line (split_mask() is
  // 0, simulate() runs it alone) until split() divides the lines by
  // `split_modulus`, and unsplit() joins them again, at any points of the
  // stream, without changing a count.
  // The set search is the process's (set_search()); the first create()
  // in a process may therefore take the measurement's time (a few ms).
  static std::unique_ptr<Hierarchy> create(const HierarchyConfig& config, std::string* error,
                                           uint32_t split_modulus = 0, bool deferred = false);
  // create() with the set search given instead of the process's: `vector`
  // searches with AVX-512 where the CPU has AVX-512F (else it is ignored).
  // For the measurement itself and for comparing the kernels in one
  // process. Same errors; thread-safe.
  static std::unique_ptr<Hierarchy> create_with_search(const HierarchyConfig& config, bool vector,
                                                       std::string* error, uint32_t split_modulus = 0,
                                                       bool deferred = false);
  ~Hierarchy();
  Hierarchy(const Hierarchy&) = delete;
  Hierarchy& operator=(const Hierarchy&) = delete;

  // Simulates `n` references made by one core, in order. `core` is taken
  // modulo cores(), so application thread i may pass i (thread i -> core
  // i mod cores). No allocation, no error: a size of 0 is taken as 1.
  // Takes the hierarchy's mutex once for the whole batch; a thread that
  // finds it taken tries again for a while (1500 pauses, ~35 us on a Zen 5)
  // before it sleeps: threads that simulate their own batches take turns
  // batch by batch, and waking a sleeper is slow on a virtual machine.
  void simulate(uint32_t core, const Access* accesses, size_t n);
  // A batch without the references that could not change the cache state
  // (condense()): simulate() of the original batch, to the same counts and
  // monitor results, provided no monitor that counts L1 hits was enabled in
  // between.
  void simulate(uint32_t core, const Access* accesses, size_t n, const Condensed& dropped);
  // Copies a batch of one core's references to `out` (room for n), without
  // each read or write within one line whose line the batch referenced
  // last in its L1 set, unless it writes a line the batch has not yet
  // written: with an LRU, write-back, write-allocate L1, a hit in the most
  // recent way that changes no state and produces no event but the L1
  // hit. Those are counted in *dropped; returns how many were copied. Where
  // that does not hold (another L1, cachegrind's model, an enabled monitor
  // that counts L1 hits), a plain copy. Thread-safe, no mutex: a program's
  // thread can condense its batch while another simulates. The rule
  // looks back up to 15 references (hierarchy.cpp, condense_avx512): 58%
  // of the ikj multiply's references are dropped, 43% of the ijk one's
  // (its row of A), none of a random stream's.
  size_t condense(const Access* in, size_t n, Access* out, Condensed* dropped) const;
  // Whether condense() can drop anything on this CPU: it needs AVX-512
  // (F, CD, VPOPCNTDQ); without, it copies.
  static bool can_condense();
  // The process's set search (SetSearch), decided at the first call (or
  // the first create()) and kept: without AVX-512F scalar; with it,
  // MRI_CACHESIM_VECTOR=0 scalar, any other non-empty value vector, and
  // unset or empty whichever of the two ran a synthetic stream faster
  // here (about 2 ms of measurement, well under 50 ms: the passes stop after
  // 20 ms). Never fails; thread-safe.
  static const SetSearch& set_search();
  // set_search() in words, e.g. "sets searched with AVX-512 (measured:
  // 3.46 ns a reference, against 3.80 scalar; 9 rounds in 1.6 ms)".
  static std::string set_search_description();
  // set_search().vector: whether the hierarchies create() makes search
  // their sets with AVX-512 compares. The results are the same either way.
  static bool vector_lookups();
  // Whether this hierarchy's kernels search with AVX-512 (the process's
  // choice when it was created, or create_with_search's).
  bool vector_search() const;
  // "" when MRI_CACHESIM_VECTOR is unset, empty, 0 or 1, else what is
  // wrong with it: for the tools that check the environment up front
  // (mri-cachesim, MRI_Application_Load). Any value other than 0 counts as
  // 1 in set_search().
  static std::string vector_setting_error();
  // One reference; the same as a batch of one (the mutex costs ~20 ns).
  void access(uint32_t core, uint64_t addr, uint32_t size, AccessType type);
  // Split hierarchies. parts() is 1 or 2. The part of the line holding
  // byte `addr` is ((addr >> split_shift()) & split_mask()) != 0; the mask
  // is 0 when the hierarchy is not split.
  uint32_t parts() const;
  uint32_t split_shift() const;  // log2 of the line size
  uint64_t split_mask() const;   // split modulus - 1; 0 until a deferred split happens
  uint64_t planned_split_mask() const;  // the mask split() sets, or split_mask() when not deferred
  bool deferred() const;                // created deferred: split() and unsplit() apply
  // A deferred hierarchy: splits it now (part 1 takes a copy of the small
  // levels' state and works in the large ones' shared arrays, so the counts
  // stay those of one hierarchy) and returns true; on
  // any other, or when split already, false. unsplit() the other way (part
  // 0 takes part 1's lines back). Any number of times, at any point of the
  // stream; both take both parts' mutexes.
  bool split();
  bool unsplit();
  // Sorts n references by part, in order, for simulate_part(): those of
  // part 0 to out0, of part 1 to out1 (each with room for n), one that
  // straddles lines of both parts to both; *n0 and *n1 receive the counts.
  // Branch-free, one pass. Returns the split mask it sorted by; 0 when not
  // split: everything to out0, which is then no batch for simulate_part()
  // but one for simulate(). as_planned: by the split a deferred hierarchy
  // will have (to time the sort beforehand).
  uint64_t sort_parts(const Access* in, size_t n, Access* out0, size_t* n0, Access* out1, size_t* n1,
                      bool as_planned = false) const;
  // Simulates references of part `part` only, taking only that part's
  // mutex: two threads may simulate the two parts at the same time. The
  // caller sorts: a reference within one line must be of this part (one
  // of the other part would be simulated here, in the wrong sets); one
  // that straddles lines is given to every part whose lines it touches,
  // and each simulates its own lines (the part of the first byte counts
  // the reference). Each part must see its references in program order per
  // core; how the parts interleave does not matter. simulate() sorts a
  // batch itself (a copy per part) and simulates both parts in turn. A
  // part out of range is ignored. The batch must have been sorted by a
  // split; when a deferred hierarchy was joined since (unsplit()), part 0,
  // which holds every set again, simulates it as the part it was sorted
  // for would have: only that part's lines of a reference that straddles
  // (the other part's batch has the others), counted in the part of its
  // first byte.
  void simulate_part(uint32_t part, uint32_t core, const Access* accesses, size_t n);

  // Counters of data level `level` (0 = L1) for one core; for a shared
  // level, the events caused by that core's references. Out-of-range core
  // or level gives zeros.
  LevelCounters counters(uint32_t core, uint32_t level) const;
  LevelCounters total_counters(uint32_t level) const;  // summed over cores
  LevelCounters instruction_counters(uint32_t core) const;  // I1 (zeros without)
  ReferenceCounts references(uint32_t core) const;
  ReferenceCounts total_references() const;
  void reset_counters();   // counters only; cache contents stay
  void invalidate_all();   // empties every cache, without write-backs

  // Monitors. add_monitor returns an id >= 0, or -1 with *error set (empty
  // range, bins = 0, no events, an event level beyond the hierarchy, core out
  // of range, whole address space with bins != 1). The others return false
  // for an unknown id. Changing monitors never touches the cache state.
  int add_monitor(const MonitorSpec& spec, std::string* error);
  bool remove_monitor(int id);
  bool set_monitor_enabled(int id, bool enabled);
  // Disables the monitor for good: set_monitor_enabled(id, true) is then
  // ignored, its counts stay readable (the data structure it watched has
  // ended, and its memory may hold another one from now on).
  bool freeze_monitor(int id);
  bool reset_monitor(int id);
  bool monitor_result(int id, MonitorResult* out) const;
  // Without allocation (for callers on a monitored program's path): copies
  // up to n per-event totals, or up to n bin counts of event `event_index`,
  // into out. Return false for an unknown id or event index.
  bool monitor_totals(int id, uint64_t* out, size_t n) const;
  bool monitor_bin_counts(int id, size_t event_index, uint64_t* out, size_t n) const;

  const HierarchyConfig& config() const;
  uint32_t cores() const;
  uint32_t levels() const;  // data levels

  struct Impl;

 private:
  explicit Hierarchy(std::vector<std::unique_ptr<Impl>> parts, uint64_t mask, uint64_t deferred_mask);
  std::vector<std::unique_ptr<Impl>> parts_;  // one engine per part
  std::atomic<uint64_t> mask_;                // split_mask()
  const uint64_t deferred_mask_;              // what split() sets it to; 0 when not deferred
};

// ---------------------------------------------------------------- traces

// Parses one line of `valgrind --tool=lackey --trace-mem=yes` output:
//   "I  04222cac,3"   instruction fetch
//   " L 04222cac,8"   load       " S ..." store       " M ..." modify
// Lines starting with "==", "--" or "###" (Valgrind's own messages) and
// empty lines are skipped. Returns 1 and fills *out for a reference, 0 for a
// skipped line, -1 with *error set (without the line number) otherwise.
// Pure; thread-safe.
int parse_lackey_line(std::string_view line, Access* out, std::string* error);

}  // namespace mri::sim

/*
 * mri_monitor.h - the application side of MRI: region annotations for C and
 * C++, and Monitor_Init / Monitor_Final.
 *
 * Link the application with libmonitor. Annotate regions:
 *
 *     MONITOR_REGION(step, MRI_REGION_LOOP, "time step");  // static descriptor
 *     for (...) {
 *         MONITOR_ENTER(step);
 *         ...
 *         MONITOR_EXIT(step);
 *     }
 *
 * or, in C++, `MONITOR_SCOPE(MRI_REGION_ROUTINE, "solve");` for a scoped
 * guard, or `MONITOR_FUNCTION();` at the top of a function.
 *
 * Each annotation defines a static descriptor (type, file, first line,
 * name) placed in the ELF section "mri_regions", so the monitor knows every
 * region of the program before any of them runs and can publish them as the
 * application's static information (paper section 7). (A constructor of
 * the program's: this header registers the section in a constructor of
 * default priority. A constructor with a priority, constructor(101) and
 * the like, runs before it: the regions it runs are not yet known there
 * and are not measured, and a Monitor_Init() made there publishes the
 * regions later, as they are registered, like C++ scopes'.)
 *
 * Cost: when no tool is attached, or nothing is requested for a region, an
 * enter or exit is one load of the descriptor's `armed` byte and one
 * predictable branch; everything else happens in libmonitor's slow path.
 *
 * Without a tool (the environment variable MRI_SHMID is unset) the program
 * runs at full speed with libmonitor dormant.
 *
 * Thread safety: annotations may be used from any thread (pthreads,
 * OpenMP); every thread that executes a monitored region is an active
 * object.
 */
#ifndef MRI_MONITOR_H
#define MRI_MONITOR_H

#include "mri.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Static description of one region. Defined by the macros below; do not
 * fill one by hand. `armed` comes first: the hot path loads only it. */
typedef struct Monitor_Region_Descriptor {
    unsigned char armed;      /* non-zero: take the slow path (written by libmonitor only) */
    unsigned char type;       /* MRI_Region_Type */
    unsigned short reserved;
    int id;                   /* index in the published region table, -1 before registration */
    const char *name;
    const char *file;
    int line;
    int reserved2;
} Monitor_Region_Descriptor;

/* libmonitor is built with hidden visibility; these are its exports. */
#define MONITOR_API __attribute__((visibility("default")))

/* gcc: call the slow paths through the GOT directly instead of a PLT stub
 * (one indirect jump less per call: about 0.5 ns per pair here). */
#if defined(__GNUC__) && !defined(__clang__)
#define MONITOR_NOPLT_ __attribute__((noplt))
#else
#define MONITOR_NOPLT_
#endif

/* Slow paths, in libmonitor. */
MONITOR_API MONITOR_NOPLT_ void Monitor_Region_Enter_Slow(Monitor_Region_Descriptor *region);
MONITOR_API MONITOR_NOPLT_ void Monitor_Region_Exit_Slow(Monitor_Region_Descriptor *region);

/* Registers the descriptors of one module (executable or shared object).
 * Called by a constructor that this header puts into every translation
 * unit; repeated calls for the same module are ignored. */
MONITOR_API void Monitor_Register_Regions(Monitor_Region_Descriptor *begin, Monitor_Region_Descriptor *end);

/* Forgets the descriptors of the module (executable or shared object) that
 * holds `address_in_module`, those of its section and those its C++ scopes
 * registered: called by a destructor that this header puts into every
 * translation unit, so that a module unloaded with dlclose() is no longer
 * touched. Its regions stay published (not yet published, they are kept
 * as copies and published with the rest); loaded again, the module
 * registers them again and they keep their ids. */
MONITOR_API void Monitor_Unregister_Module(const void *address_in_module);

/* Registers one descriptor that is not in the "mri_regions" section (the
 * C++ scope macros call it at a region's first execution). Before the
 * static information is published it joins it; afterwards the region is
 * published on its own, and requests over every region include it. Returns
 * the region id, or -1 when not (yet) published. Thread-safe. */
MONITOR_API int Monitor_Register_Region(Monitor_Region_Descriptor *region);

/* Connects to the tool named by the environment (MRI_SHMID), publishes the
 * static information and blocks until the tool releases the application.
 * Runs automatically at the first monitored event; calling it first thing
 * in main() makes the start-up point explicit. Without a tool it does
 * nothing. Idempotent and thread-safe. */
MONITOR_API void Monitor_Init(void);

/* Publishes the final state; the monitor is finished afterwards (results
 * stay in the segment for the tool). Registered with atexit() when the
 * monitor attaches at start-up; calling it explicitly at an exit point is
 * harmless. */
MONITOR_API void Monitor_Final(void);

/* 1 when a tool is attached and monitoring, 0 when dormant or detached. */
MONITOR_API int Monitor_Is_Attached(void);

/* ------------------------------------------------------------------------ */
/* Data structures (paper section 2: MRI_Data_Structure_Spec)                */
/* ------------------------------------------------------------------------ */

/* Registers a data structure: `bytes` bytes at `address`, called `name`,
 * declared in program unit `unit` (the region descriptor of the routine or
 * program that declares it) or, with unit NULL, at file scope of `file`
 * (the tool then sees line 0). The tool names it in requests by name and
 * program unit (MRI_Find_Data_Structure), and a cache event restricted to
 * it counts only references to [address, address + bytes).
 *
 * Register before the first monitored region enter (or Monitor_Init) and
 * the data structure is part of the static information the tool sees at
 * load time; a later registration (a heap array allocated on the way) is
 * published at once and can be requested from the next stop on.
 *
 * Returns 0, or -1 when: name is NULL or empty or longer than 255
 * characters, address is NULL, bytes is 0, bytes is above 2^56 (the
 * largest address space: a negative size cast to unsigned), the range
 * wraps around the address space, the same name is already registered in
 * the same program unit, or the table (1024 data structures) or the name
 * pool is full (the last three only with a tool attached; with a tool, the
 * tool also gets the reason of these and of the sizes).
 * Without a tool it only checks its arguments (no allocation). Thread-safe. */
MONITOR_API int Monitor_Register_Data(const char *name, const void *address, unsigned long long bytes,
                                      const Monitor_Region_Descriptor *unit, const char *file);

/* Ends the most recent registration of a data structure that starts at
 * `address` (a heap array about to be freed, or moved): from the call on,
 * no cache event counts for it, in requests made before or after, although
 * its memory may hold another data structure next. References the calling
 * thread made before the call still count (they are simulated first);
 * another thread's references that it has not yet handed to the simulator
 * (at most one batch, flushed at every monitored region enter and exit) do
 * not. The record stays in the table: results name it as before. The same
 * name may then be registered again in the same program unit; the tool's
 * MRI_Find_Data_Structure() and requests made from then on name the new
 * registration, requests made before keep the one they named.
 *
 * Returns 0, or -1 when address is NULL or no registration that has not
 * ended starts at it. Without a tool it only checks its argument. */
MONITOR_API int Monitor_Unregister_Data(const void *address);

/* One line per data structure. MONITOR_DATA for an object (a static or
 * global array, a struct): its address is &var. MONITOR_DATA_PTR for memory
 * a pointer points to (a heap array): the address is the pointer's value,
 * the name the pointer's. The _IN forms name the declaring program unit
 * (a MONITOR_REGION handle); the others mean file scope. All evaluate to
 * Monitor_Register_Data()'s result. */
#define MONITOR_DATA(var, bytes) \
    Monitor_Register_Data(#var, (const void *)&(var), (unsigned long long)(bytes), 0, __FILE__)
#define MONITOR_DATA_PTR(ptr, bytes) \
    Monitor_Register_Data(#ptr, (const void *)(ptr), (unsigned long long)(bytes), 0, __FILE__)
#define MONITOR_DATA_IN(unit, var, bytes) \
    Monitor_Register_Data(#var, (const void *)&(var), (unsigned long long)(bytes), &(unit), __FILE__)
#define MONITOR_DATA_PTR_IN(unit, ptr, bytes) \
    Monitor_Register_Data(#ptr, (const void *)(ptr), (unsigned long long)(bytes), &(unit), __FILE__)

/* ------------------------------------------------------------------------ */
/* Cache-simulator backend interface (backends/cachesim; not for programs)   */
/* ------------------------------------------------------------------------ */

/* One memory reference, as the simulator takes it (16 bytes). */
typedef struct Monitor_Cache_Access {
    unsigned long long address;
    unsigned int size;    /* bytes */
    unsigned int type;    /* 0 read, 1 write, 2 read-modify-write */
} Monitor_Cache_Access;

#define MONITOR_CACHE_BACKEND_VERSION 3

/* How the simulator is split in two parts (version 3): the reference to
 * line L = address >> shift belongs to part (L & mask) != 0, that is
 * (address & address_bits) != 0 with address_bits = mask << shift; one
 * that straddles lines belongs to the part of each line it touches. mask
 * 0: one part (part 0). */
typedef struct Monitor_Cache_Split {
    unsigned int shift;
    unsigned long long mask;
    unsigned long long address_bits;
} Monitor_Cache_Split;

/* What a memory-access instrumentation hands to libmonitor. */
typedef struct Monitor_Cache_Backend {
    unsigned int version;        /* MONITOR_CACHE_BACKEND_VERSION */
    /* The byte the access callbacks test before recording: libmonitor sets
     * it to 1 while a simulated cache event is requested (written with
     * __atomic_store_n, relaxed) and to 0 otherwise. */
    unsigned char *recording;
    /* Simulates the calling thread's buffered references now (libmonitor
     * calls it at the enter and exit of every measured region while
     * recording, so that each batch's cost lands in the right instances). */
    void (*flush)(void);
    /* Version 2: the overhead calibration of recording (libmonitor calls it
     * at the first release with simulated cache events). Runs the access
     * callbacks' path n times on a private address, recording when
     * `recording` is non-zero and only testing the switch otherwise, into
     * the calling thread's buffer without ever flushing it; the references
     * are discarded. Returns how many it made (at most n; fewer when the
     * buffer has less room). */
    unsigned long (*calibrate)(unsigned long n, int recording);
    /* Version 3: the split the callbacks sort references by. libmonitor
     * writes it before recording starts and never changes it after; the
     * callbacks keep a buffer per part and hand each over with
     * Monitor_Cache_Simulate_Part. The backend's initial value must be
     * mask 0. Null: the instrumentation does not sort (its references all
     * go to part 0), and libmonitor sorts them as it hands them over. */
    Monitor_Cache_Split *split;
} Monitor_Cache_Backend;

/* Registers the instrumentation (one per process; a second is ignored;
 * version 1, without `calibrate`, is accepted, and its recording cost is
 * then not compensated).
 * The structure must outlive the process. Thread-safe. */
MONITOR_API void Monitor_Register_Cache_Backend(const Monitor_Cache_Backend *backend);

/* Simulates n references made by the calling thread (thread i of the
 * monitor is simulated core i modulo the configured cores). Does nothing
 * while no simulator is configured. Never fails; thread-safe (threads
 * serialise batch by batch in the simulator). */
MONITOR_API void Monitor_Cache_Simulate(const Monitor_Cache_Access *accesses, unsigned long n);

/* The same for references of one part of the split (version 3 backends):
 * each part's references in the thread's program order, those within one
 * line all of that part, those that straddle lines in every part whose
 * lines they touch. Where the process has a CPU to spare, part 1 is
 * simulated by a thread of its own while part 0 is simulated here. */
MONITOR_API void Monitor_Cache_Simulate_Part(unsigned int part, const Monitor_Cache_Access *accesses,
                                             unsigned long n);

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------------------ */
/* Annotation macros                                                          */
/* ------------------------------------------------------------------------ */

#define MONITOR_SECTION_ "mri_regions"

/* Defines a static region descriptor called `handle` at this line. In C++,
 * use it at namespace scope or in ordinary functions; in inline functions
 * and templates use MONITOR_SCOPE / MONITOR_FUNCTION (see there). */
#define MONITOR_REGION(handle, region_type, region_name)                                   \
    static Monitor_Region_Descriptor handle                                                \
        __attribute__((section(MONITOR_SECTION_), used, aligned(8))) = {                   \
            0, (unsigned char)(region_type), 0, -1, (region_name), __FILE__, __LINE__, 0}

/* The hot path. __atomic_load_n(..., RELAXED) compiles to a plain byte load;
 * it only tells the compiler (and ThreadSanitizer) that libmonitor may
 * change the byte from another thread. */
#define MONITOR_ENTER(handle)                                                              \
    do {                                                                                   \
        if (__builtin_expect(__atomic_load_n(&(handle).armed, __ATOMIC_RELAXED), 0))       \
            Monitor_Region_Enter_Slow(&(handle));                                          \
    } while (0)

#define MONITOR_EXIT(handle)                                                               \
    do {                                                                                   \
        if (__builtin_expect(__atomic_load_n(&(handle).armed, __ATOMIC_RELAXED), 0))       \
            Monitor_Region_Exit_Slow(&(handle));                                           \
    } while (0)

#define MONITOR_CAT2_(a, b) a##b
#define MONITOR_CAT_(a, b) MONITOR_CAT2_(a, b)

/* Every translation unit that includes this header registers its module's
 * descriptors before main() (the section's bounds are provided by the
 * linker; weak so that a module without regions links too). */
extern Monitor_Region_Descriptor __start_mri_regions[] __attribute__((weak, visibility("hidden")));
extern Monitor_Region_Descriptor __stop_mri_regions[] __attribute__((weak, visibility("hidden")));
__attribute__((constructor, used)) static void monitor_register_this_module_(void)
{
    Monitor_Register_Regions(__start_mri_regions, __stop_mri_regions);
}
__attribute__((destructor, used)) static void monitor_unregister_this_module_(void)
{
    Monitor_Unregister_Module((const void *)&monitor_unregister_this_module_);
}

#ifdef __cplusplus
/* Scoped guard: enter on construction, exit on destruction (also when an
 * exception leaves the scope). */
class Monitor_Region_Guard {
public:
    explicit Monitor_Region_Guard(Monitor_Region_Descriptor &region) noexcept : region_(region)
    {
        MONITOR_ENTER(region_);
    }
    ~Monitor_Region_Guard() { MONITOR_EXIT(region_); }
    Monitor_Region_Guard(const Monitor_Region_Guard &) = delete;
    Monitor_Region_Guard &operator=(const Monitor_Region_Guard &) = delete;

private:
    Monitor_Region_Descriptor &region_;
};

/* The descriptor of a scope is not placed in the "mri_regions" section:
 * gcc cannot put a static of an inline function or a template (one shared
 * copy per program) in a named section together with ordinary statics, and
 * scopes are typical in both. It registers itself at its first execution
 * instead (a C++ static initialisation: one more predictable branch per
 * enter), so a scope's region appears in the static information once it
 * has run. */
#define MONITOR_SCOPE(region_type, region_name)                                            \
    static Monitor_Region_Descriptor MONITOR_CAT_(monitor_region_, __LINE__) = {           \
        0, (unsigned char)(region_type), 0, -1, (region_name), __FILE__, __LINE__, 0};     \
    static const int MONITOR_CAT_(monitor_registered_, __LINE__)                           \
        __attribute__((unused)) =                                                          \
            Monitor_Register_Region(&MONITOR_CAT_(monitor_region_, __LINE__));             \
    Monitor_Region_Guard MONITOR_CAT_(monitor_guard_, __LINE__)(                           \
        MONITOR_CAT_(monitor_region_, __LINE__))

#define MONITOR_FUNCTION() MONITOR_SCOPE(MRI_REGION_ROUTINE, __func__)
#endif /* __cplusplus */

#endif /* MRI_MONITOR_H */

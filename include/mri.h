/*
 * mri.h - the Monitoring Request Interface, tool side.
 *
 * A performance tool links libmri and uses this C API to load an application
 * that was built with <mri_monitor.h> / libmonitor, tell it what to measure
 * (runtime information), where (code regions, data structures, active
 * objects) and how to summarise it (aggregate, histogram, trace, profile),
 * run it to breakpoints and read partial results.
 *
 * Type, field and function names follow Kereku & Gerndt, "The Monitoring
 * Request Interface (MRI)". Where the paper is silent, the choice is
 * documented next to the declaration.
 *
 * Errors: every function reports failure by returning MRI_Error (-1), a
 * negative request id, or NULL; MRI_Get_Error_Message() then returns a
 * human-readable reason. The message is per calling thread.
 *
 * Thread safety: calls may be made from any thread of the tool. They are
 * serialised internally, except that MRI_Stop() and MRI_No_Wait() never block
 * behind a thread sitting in MRI_Wait(), so a tool can stop the application
 * from a second thread while the first one waits.
 *
 * Lifetime of results: MRI_Get_Data() returns memory owned by the library. It
 * stays valid until the next MRI_Get_Data() for the same request, the
 * deletion of the request, a reload of the application, or MRI_Finalize()
 * (measured_iteration too: a copy made at the call, not moved by releases).
 *
 * One header on purpose, near 1000 lines: the paper's whole API, with the
 * semantics documented next to each declaration, is what a tool includes.
 */
#ifndef MRI_H
#define MRI_H

#ifdef __cplusplus
extern "C" {
#endif

/* libmri is built with hidden visibility; the declarations of this header
 * are its exports. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ------------------------------------------------------------------------ */
/* Status values                                                             */
/* ------------------------------------------------------------------------ */

#define MRI_OK 0
#define MRI_Error (-1)

/* Version of this API (not of the shared-memory protocol, see
 * MRI_Get_Protocol_Version()). */
#define MRI_API_VERSION_MAJOR 1
#define MRI_API_VERSION_MINOR 6

/* ------------------------------------------------------------------------ */
/* Section 2: terms and definitions                                          */
/* ------------------------------------------------------------------------ */

/* Runtime information: what is measured. The paper names it an enumerator.
 * Values from MRI_RUNTIME_INFORMATION_DYNAMIC_BASE upwards name events by
 * backend-specific name (PAPI presets and native events); they are handed out
 * by MRI_Runtime_Information_By_Name(). */
typedef enum {
    MRI_EXECUTION_TIME = 0,       /* inclusive wall-clock time of a region instance, in the published MRI_Time_Entity */
    MRI_NUMBER_OF_INSTANCES = 1,  /* how many times a region was executed */
    MRI_REGION_EVENT = 2,         /* enter/exit events; trace requests only */
    /* Hardware (or simulated) cache events, section 7. */
    MRI_LC1_DATA_READ_MISS = 10,
    MRI_LC1_DATA_WRITE_MISS = 11,
    MRI_LC2_DATA_READ_MISS = 12,
    MRI_LC2_DATA_WRITE_MISS = 13,
    MRI_LC3_DATA_READ_MISS = 14,
    MRI_LC3_DATA_WRITE_MISS = 15,
    MRI_TOTAL_CYCLES = 20,
    MRI_TOTAL_INSTRUCTIONS = 21,
    /* Not in the paper: hits, which only the cache simulator counts. */
    MRI_LC1_DATA_READ_HIT = 30,
    MRI_LC1_DATA_WRITE_HIT = 31,
    MRI_LC2_DATA_READ_HIT = 32,
    MRI_LC2_DATA_WRITE_HIT = 33,
    MRI_LC3_DATA_READ_HIT = 34,
    MRI_LC3_DATA_WRITE_HIT = 35,
    MRI_RUNTIME_INFORMATION_DYNAMIC_BASE = 1000
} MRI_Runtime_Information_Spec;

/* Kinds of code region. Serial kinds (program, routine, loop, block) may be
 * used as breakpoints; parallel kinds may not (section 5). */
typedef enum {
    MRI_REGION_PROGRAM = 0,       /* the main program */
    MRI_REGION_ROUTINE = 1,       /* procedure or function */
    MRI_REGION_LOOP = 2,          /* sequential loop (or one iteration of it, e.g. a time step) */
    MRI_REGION_BLOCK = 3,         /* other sequential statements */
    MRI_REGION_PARALLEL = 4,      /* parallel region: executed by every thread of a team */
    MRI_REGION_PARALLEL_LOOP = 5, /* work-shared loop */
    MRI_REGION_PARALLEL_SECTIONS = 6,
    MRI_REGION_MASTER = 7,        /* master region inside a parallel region */
    /* Not in the paper: a function without annotations, found by unwinding
     * the stack as the caller of a region (MRI_Set_Callpath_Unwinding). Its
     * file is the object file (executable or shared library), its line the
     * function's offset in it; it is never entered, so it has no flat
     * profile values, only callpath edges. */
    MRI_REGION_FUNCTION = 8,
    /* Not in the paper: a call of the MPI library (MPI_Send, MPI_Allreduce,
     * ...), measured by the MPI wrapper library (mpi/, libmri_mpi) that
     * `mri` preloads into the ranks of a job. Named after the call; not a
     * breakpoint (an MPI call may run on any thread). */
    MRI_REGION_MPI = 9,
    MRI_REGION_TYPE_COUNT = 10
} MRI_Region_Type;

/* Location of a region: a unique id of its source file (see
 * MRI_Get_File_Name()) and the region's first line. */
typedef struct {
    int file_ID;
    int line_NR;
} MRI_Region_ID;

/* A code region. Two regions are the same when type, file_ID and line_NR
 * are equal. */
typedef struct {
    MRI_Region_Type type;
    MRI_Region_ID id;
} MRI_Region_Spec;

/* A data structure: the program unit where it is declared (same form as a
 * region id) plus its name. */
typedef struct {
    MRI_Region_ID id;
    const char *name;
} MRI_Data_Structure_Spec;

typedef enum {
    MRI_THREAD = 0,
    MRI_PROCESS = 1,
    MRI_NODE = 2
} MRI_Active_Object_Type;

/* An active object. For MRI_THREAD, id is the thread's monitoring index
 * (0, 1, ... in the order threads first produced a monitored event; see
 * Get_Available_Active_Objects() for their OS ids and names). For
 * MRI_PROCESS, id is the application's process id. For MRI_NODE, id is 0. */
typedef struct {
    MRI_Active_Object_Type type;
    int id;
} MRI_Active_Object_Spec;

typedef enum {
    MRI_SUM = 0,
    MRI_MIN = 1,
    MRI_MAX = 2,
    MRI_AVG = 3,
    MRI_COUNT = 4 /* number of region instances aggregated */
} MRI_Aggregation_Operation;

typedef enum {
    MRI_PER_THREAD = 0,
    MRI_PER_PROCESS = 1,
    MRI_PER_NODE = 2
} MRI_Aggregation_Target;

/* Aggregation: operation and target. The target must match the kind of the
 * active objects of the request (PER_THREAD with threads, PER_PROCESS with
 * processes); a mismatch is an error (section 2). */
typedef struct {
    MRI_Aggregation_Operation operation;
    MRI_Aggregation_Target target;
} MRI_Aggregation_Spec;

/* Tables (section 3). A NULL table pointer or nr_Elements == 0 means
 * "none" for data structures and "all" for active objects; region tables
 * must not be empty except for profile and trace requests, where empty
 * means every region. An active-object table names either threads, each
 * once (a thread may be named before it has run), or the process once
 * (every thread); every kind of request refuses the same invalid tables
 * (an index out of range, a thread or the process twice, the process
 * with threads, more elements than MRI_MAX_THREADS) with the reason, and
 * its results cover exactly the threads named (docs/api.md, "Thread
 * lists"). */
typedef struct {
    MRI_Region_Spec *region;
    int nr_Elements;
} MRI_Region_Table;

typedef struct {
    MRI_Active_Object_Spec *active_object;
    int nr_Elements;
} MRI_Active_Object_Table;

typedef struct {
    MRI_Data_Structure_Spec *data_structure;
    int nr_Elements;
} MRI_Data_Structure_Table;

typedef int MRI_Request_ID; /* >= 1; MRI_Error (-1) on failure */

/* ------------------------------------------------------------------------ */
/* Section 3: requests                                                       */
/* ------------------------------------------------------------------------ */
/* Requests are recorded immediately and take effect when the application is
 * next released by MRI_Start() or MRI_Start_Stop() (section 3: "the
 * monitoring only starts after one of the application control routines is
 * called"). They need a loaded application, whose regions they are checked
 * against; requests that exist when the application is reloaded
 * (MRI_Application_Load after MRI_Application_Finish) are carried over.
 * Errors: bad pointers, negative counts, unknown regions, runtime
 * information or aggregation not available (see the publication interface),
 * an invalid active-object table (above), target/active-object mismatch,
 * too many requests. */

MRI_Request_ID MRI_Aggregate_Request(MRI_Runtime_Information_Spec *ri,
                                     MRI_Region_Table *regions,
                                     MRI_Active_Object_Table *ao,
                                     MRI_Data_Structure_Table *variables,
                                     MRI_Aggregation_Spec *aggregation);

/* Simulated cache events. The MRI_LCn_DATA_{READ,WRITE}_{MISS,HIT} runtime
 * information of an application built with the cache-simulator backend
 * (backends/cachesim) comes from the simulator: every load and store of the
 * program goes through a simulated hierarchy (MRI_Set_Cache_Configuration),
 * and the events of a region instance are those of the thread's own
 * references (thread i = simulated core i mod the configured cores). With
 * a data structure in `variables` only references to its address range
 * count (section 3.1); the cache state is simulated for all of them either
 * way. Without the backend the misses come from PAPI (counters), and hits
 * and data structures are refused with the reason. Simulated events work in
 * aggregate, histogram, profile (flat and callpath) and trace requests
 * (docs/api.md), and use no hardware counter.
 *
 * Histogram request (3.2, 4.2): *histogram_elements_nr bins (1..1024) over
 * the address range of the one data structure in `variables`, or, without
 * one, over every data structure registered when the request is first
 * applied (the MRI_Start or MRI_Start_Stop that follows), packed one after
 * the other in address order without the gaps between them. Each bin covers
 * ceil(bytes / bins) bytes of that packed range (the last may be shorter;
 * fewer bins are used when the rounding leaves the last empty) and lists the
 * data structures it overlaps. A cache event only (simulated); at most 8
 * histogram requests at a time; values are summed over the requested
 * threads (all when the table is empty or names the process); a thread's
 * values are updated when its outermost instance of a requested region
 * ends. Errors: as for aggregate requests, plus a bin count out of range or
 * above the bytes covered, no registered data structure, a data structure
 * the application never registered, more than one data structure. */
MRI_Request_ID MRI_Histogram_Request(MRI_Runtime_Information_Spec *ri,
                                     MRI_Region_Table *regions,
                                     MRI_Active_Object_Table *ao,
                                     MRI_Data_Structure_Table *variables,
                                     int *histogram_elements_nr);

/* Trace request (3.3): a trace record for every instance of the regions
 * and of their subregions (regions entered during an instance), per
 * requested thread (all when the active-object table is empty or names
 * the process). With MRI_REGION_EVENT a record at every enter and exit;
 * with EXECUTION_TIME, NUMBER_OF_INSTANCES or a counter one record per
 * instance carrying its value. An empty region table means every region.
 * At most 8 trace requests at a time. Records are delivered through the
 * call-back (section 4.4, below). A record names its request by the
 * request's record in the segment: a trace request does not take the
 * record of a deleted trace request until the application has stopped or
 * ended after the deletion took effect and its records have been taken;
 * when only such records are free it fails with the reason. */
MRI_Request_ID MRI_Trace_Request(MRI_Runtime_Information_Spec *ri,
                                 MRI_Region_Table *regions,
                                 MRI_Active_Object_Table *ao,
                                 MRI_Data_Structure_Table *variables);

/* Profile request: per region, the runtime information summed over the
 * requested active objects (all when the table is empty), inclusive and
 * exclusive of subregions, plus instance counts, and per thread: one
 * entry per thread the table names, in its order (zeros for one that has
 * not run), or per thread seen so far for the process or an empty table.
 * Exclusive values exclude the time of directly nested regions that are
 * themselves profiled. */
MRI_Request_ID MRI_Profile_Request(MRI_Runtime_Information_Spec *ri,
                                   MRI_Region_Table *regions,
                                   MRI_Active_Object_Table *ao,
                                   MRI_Data_Structure_Table *variables);

/* Not in the paper: a profile request that also keeps the calling context
 * of every instance: its caller is the nearest enclosing region profiled by
 * any profile request (none for a root). MRI_Get_Data() returns the flat
 * profile as for MRI_Profile_Request(); MRI_Get_Callpath_Data() returns one
 * element per (caller, callee) pair. Each thread keeps at most 4096 pairs
 * (MRI_MAX_EDGES in the environment at load, up to 65536); instances beyond
 * count in the flat profile only (noted in monitor_message). */
MRI_Request_ID MRI_Callpath_Profile_Request(MRI_Runtime_Information_Spec *ri,
                                            MRI_Region_Table *regions,
                                            MRI_Active_Object_Table *ao,
                                            MRI_Data_Structure_Table *variables);

/* Overhead compensation (not in the paper; seed paper 001, Malony &
 * Shende). Aggregate and profile results carry raw values and compensated
 * ones, from which the monitor's own overhead is removed at every region
 * exit: the part of a region's enter and exit inside its own measured
 * interval, and what every monitored instance nested in it added
 * (MRI_Get_Overhead_Calibration() has the calibrated amounts). On by
 * default for every request. enabled = 0 makes the compensated values of
 * the instances measured from then on equal their raw ones (and saves the
 * work): the change applies from the next release (MRI_Start/
 * MRI_Start_Stop) on and does not reset results, so what was compensated
 * before stays in the compensated totals (a request made afresh starts
 * from zero). Errors: unknown request, a trace request (traces carry raw
 * values). */
int MRI_Set_Compensation(MRI_Request_ID request, int enabled);

/* Trace requests only (not in the paper, which always traces subregions):
 * enabled = 0 traces the listed regions' own instances, not the regions
 * entered during them. Then no other region of the program is armed for
 * this request, so unrequested regions keep the inline path (about 0.1 ns
 * per enter/exit instead of the monitor's slow path). On (1) by default; a
 * request over all regions is unaffected. The change applies from the next
 * release (MRI_Start/MRI_Start_Stop) on.
 * Errors: unknown request, not a trace request. */
int MRI_Set_Trace_Subregions(MRI_Request_ID request, int enabled);

/* Callpath profile requests only (not in the paper): enabled = 1 finds the
 * functions without annotations between an instance and its enclosing
 * profiled region by unwinding the application's stack (libunwind) at
 * every enter of the request's regions. Each such function becomes a region
 * of type MRI_REGION_FUNCTION named by its symbol, and the instance's path
 * P -> F1 -> ... -> Fn -> R appears as edges (P, F1), ..., (Fn, R) in
 * MRI_Get_Callpath_Data(): the edges into a function carry the instances
 * and the inclusive values of the regions reached through it (a function's
 * own calls are not counted; its exclusive value is 0). Off (0) by default:
 * the unwinding costs about 80 ns per instance once the call sites are
 * known (some microseconds at a call site's first instance). Applies from the
 * next release. Inlined functions have no frame and do not appear; when the
 * enclosing region's function is not found within 8 frames, the instance's
 * caller is the region, as without unwinding.
 * Errors: unknown request, not a callpath profile request. An application
 * whose libmonitor was built without libunwind notes so in monitor_message
 * and keeps the region-only callers. */
int MRI_Set_Callpath_Unwinding(MRI_Request_ID request, int enabled);

/* Deletes a request; its results are no longer accessible. Deleting an
 * unknown or already deleted id is an error. */
int MRI_Request_Delete(MRI_Request_ID request);

/* Counter rotation across breakpoints (not in the paper; off by default).
 * When on, counter requests beyond the counter budget are accepted. Their
 * events are split into groups that fit, and each release (MRI_Start or
 * MRI_Start_Stop) measures one group, in turn; the other counter requests
 * keep their results but measure nothing until their group's turn. The
 * results list the iterations that measured each request
 * (nr_Measured_Iterations, measured_iteration); nothing is extrapolated to
 * iterations that were not measured. Turning rotation off fails while more
 * counter events are requested than fit. */
int MRI_Set_Counter_Rotation(int enabled);

/* ------------------------------------------------------------------------ */
/* Section 4: data retrieval                                                 */
/* ------------------------------------------------------------------------ */

typedef enum {
    MRI_AGGREGATE_REQUEST = 0,
    MRI_HISTOGRAM_REQUEST = 1,
    MRI_TRACE_REQUEST = 2,
    MRI_PROFILE_REQUEST = 3
} MRI_Request_Kind;

/* One aggregated value (4.1). value is in the unit of the runtime
 * information (MRI_EXECUTION_TIME: the published time entity). count is
 * the number of region instances that went into it. For MIN and MAX the
 * focus active object names where the extreme was attained (for PER_PROCESS
 * the thread; for PER_THREAD the thread itself); has_focus is 0 otherwise.
 * For MRI_NUMBER_OF_INSTANCES the per-thread value is the thread's instance
 * count, so PER_PROCESS MIN/MAX/AVG compare threads. */
typedef struct {
    MRI_Active_Object_Spec active_object;
    double value;
    unsigned long long count;
    int has_focus;
    MRI_Active_Object_Spec focus_active_object;
    /* Not in the paper: value with the monitor's own overhead removed
     * (overhead compensation, see MRI_Get_Overhead_Calibration()). Equal to
     * value for counts, counters, and requests with compensation off. */
    double compensated_value;
} MRI_Aggregate_Value;

/* Result of an aggregate request: one element per requested active object
 * (PER_THREAD: per thread; PER_PROCESS: the process). When the request
 * named no active objects, PER_THREAD yields one element per thread seen so
 * far. */
typedef struct {
    MRI_Request_Kind kind; /* MRI_AGGREGATE_REQUEST */
    MRI_Runtime_Information_Spec ri;
    MRI_Aggregation_Spec aggregation;
    int active; /* 0 until the application has been released with the request in place */
    int nr_Elements;
    MRI_Aggregate_Value *element;
    /* Releases of this run (1 = the first MRI_Start/MRI_Start_Stop after the
     * load) during which the request measured: every one since it was
     * submitted, or only its group's turns under counter rotation. */
    int nr_Measured_Iterations;
    const unsigned int *measured_iteration;
} MRI_Aggregate_Request_Results;

/* Histogram results (4.2). */
typedef struct {
    unsigned long long value;
    unsigned long long address_begin; /* sub-range [begin, end) of the bin */
    unsigned long long address_end;
    MRI_Data_Structure_Table data_structures; /* data structures mapped to this bin */
} MRI_Histogram_Bin;

typedef struct {
    MRI_Request_Kind kind; /* MRI_HISTOGRAM_REQUEST */
    MRI_Runtime_Information_Spec ri;
    int active;
    int nr_Elements;
    MRI_Histogram_Bin *element;
} MRI_Histogram_Request_Results;

/* Profile results (4.3): one element per region, values summed over the
 * requested active objects, with the per-active-object breakdown. */
/* compensated_inclusive / compensated_exclusive (not in the paper): the
 * same with the monitor's own overhead removed (overhead compensation, see
 * MRI_Get_Overhead_Calibration()). Equal to the raw values for instances,
 * counters, and requests with compensation off. */
typedef struct {
    MRI_Active_Object_Spec active_object;
    unsigned long long instances;
    double inclusive;
    double exclusive;
    double compensated_inclusive;
    double compensated_exclusive;
} MRI_Profile_Value;

typedef struct {
    MRI_Region_Spec region;
    unsigned long long instances;
    double inclusive;
    double exclusive;
    int nr_Active_Objects;
    MRI_Profile_Value *per_active_object;
    double compensated_inclusive;
    double compensated_exclusive;
} MRI_Profile_Element;

typedef struct {
    MRI_Request_Kind kind; /* MRI_PROFILE_REQUEST */
    MRI_Runtime_Information_Spec ri;
    int active;
    int nr_Elements;
    MRI_Profile_Element *element;
    int nr_Measured_Iterations; /* as in MRI_Aggregate_Request_Results */
    const unsigned int *measured_iteration;
} MRI_Histogram_Profile_Results;

/* Callpath profile results: values summed over the requested active
 * objects. inclusive counts only instances that are not nested in another
 * instance of the same callee (recursion); exclusive excludes directly
 * nested profiled instances, as in the flat profile. */
typedef struct {
    int has_caller;            /* 0: a root (no enclosing profiled region) */
    MRI_Region_Spec caller;
    MRI_Region_Spec callee;
    unsigned long long instances;
    double inclusive;
    double exclusive;
    double compensated_inclusive; /* as in MRI_Profile_Value */
    double compensated_exclusive;
} MRI_Callpath_Element;

typedef struct {
    MRI_Request_Kind kind; /* MRI_PROFILE_REQUEST */
    MRI_Runtime_Information_Spec ri;
    int active;
    int nr_Elements;
    MRI_Callpath_Element *element;
} MRI_Callpath_Profile_Results;

/* The calling-context results of a request made with
 * MRI_Callpath_Profile_Request(). Memory as for MRI_Get_Data(). */
int MRI_Get_Callpath_Data(MRI_Request_ID request, MRI_Callpath_Profile_Results **results);

/* Trace records (4.4).
 * event_type: the request's runtime information.
 * region, active_object: where (the thread that produced the record).
 * data_structure: the request's data structure; {{0, 0}, NULL} when none
 *   (its name stays valid until the request is deleted).
 * timestamp: nanoseconds (the published MRI_Time_Entity) since the
 *   application published its static information at start-up (while
 *   MRI_Application_Load waits); one clock for all threads.
 * data: for MRI_REGION_EVENT, MRI_TRACE_ENTER or MRI_TRACE_EXIT (bits:
 *   test exits with data & MRI_TRACE_EXIT), the latter with the bit
 *   MRI_TRACE_SYNTHETIC set when the monitor wrote the exit for an instance
 *   whose exit the program never ran, with the time it did so: at the end
 *   of monitoring (the program called exit() inside regions, also those of
 *   its other threads then), when the instance's thread ended (pthread_exit()
 *   inside a region), or when an enclosing instance of the same request
 *   exited first (longjmp out of regions). An instance entered before the
 *   request took effect (main, for a request made at a breakpoint) has
 *   neither record. So every thread's enters and exits nest and balance,
 *   except when records were discarded, for a request deleted while they
 *   were open, after _exit() or a kill (other than SIGINT, SIGTERM or SIGHUP
 *   left at their default action, which the monitor catches: no exits
 *   written), or beyond 256 open instances per thread; otherwise
 *   the measured value of one region instance (EXECUTION_TIME: its
 *   inclusive time in ns; NUMBER_OF_INSTANCES: 1; a counter or a simulated
 *   cache event: the count over the instance), and timestamp is the
 *   instance's end. */
typedef struct MRI_Trace_Element_Spec {
    MRI_Runtime_Information_Spec event_type;
    MRI_Region_Spec region;
    MRI_Active_Object_Spec active_object;
    MRI_Data_Structure_Spec data_structure;
    unsigned long long timestamp;
    unsigned long long data;
} MRI_Trace_Element_Spec;

#define MRI_TRACE_ENTER 1ULL
#define MRI_TRACE_EXIT 2ULL
#define MRI_TRACE_SYNTHETIC 4ULL /* with MRI_TRACE_EXIT: written by the monitor, see above */

typedef void (*MRI_Call_Back_Function)(void);

/* Returns MRI_OK and sets *results to the request's current (partial or
 * final) results; cast it according to the request kind (the first member
 * of every result struct is its MRI_Request_Kind). Works while the
 * application runs (values are read consistently per thread), when it is
 * stopped, and after it terminated, until the request is deleted. Trace
 * requests have no MRI_Get_Data(): use the call-back and the record
 * iteration below. */
int MRI_Get_Data(MRI_Request_ID request, void **results);

/* Trace delivery (4.4). Every application thread writes its records into
 * its own ring in shared memory; a thread of this library moves them into
 * the tool-side trace buffer (MRI_Set_Trace_Buffer_Size). The registered
 * call-back runs, on that library thread, when the tool-side buffer is half
 * full and once more at the end of monitoring (the application terminated
 * and every record has been collected). Inside it, MRI_Get_First_Trace_Record()
 * and MRI_Get_Next_Trace_Record() empty the buffer. While the buffer is full
 * the application threads whose rings are full wait ("the application
 * execution stops until the buffer is again empty"); a thread waits at most
 * MRI_TRACE_WAIT_MS (environment, default 10000 ms) for a hung tool, then
 * discards and counts records (MRI_Get_Trace_Statistics); a dead tool never
 * makes it wait.
 *
 * The call-back may call any MRI function except MRI_Finalize,
 * MRI_Application_Load, MRI_Application_Finish, MRI_Wait and
 * MRI_Wait_Timeout, which fail at once with the reason (a wait there would
 * hold up the thread that makes room for the records: the application
 * would wait for room, then discard records; MRI_No_Wait() tells the
 * status). It runs concurrently with the tool's other threads. When the
 * application has terminated, MRI_Wait() returns only after the final
 * call-back returned, so every record has been delivered (or counted as
 * discarded) by then.
 * Without a call-back, records stay in the tool-side buffer and any one
 * thread of the tool may fetch them at any time. While the application is
 * stopped or after it terminated, the Get functions first move in what the
 * threads' rings hold when the buffer runs empty: taking records until none
 * come then yields every record written before the stop or the end.
 *
 * MRI_Register_Call_Back_Function: NULL unregisters. Errors: not initialised.
 * MRI_Get_First_Trace_Record: the oldest record not yet delivered, or NULL
 *   when the buffer is empty (MRI_Get_Error_Message() is then "").
 * MRI_Get_Next_Trace_Record: the next one, or NULL when the buffer is empty.
 *   A returned record counts as delivered; the pointer stays valid until
 *   the next call of either function. Records of one thread come in the
 *   order the thread wrote them; records of different threads interleave. */
int MRI_Register_Call_Back_Function(MRI_Call_Back_Function function);
MRI_Trace_Element_Spec *MRI_Get_First_Trace_Record(void);
MRI_Trace_Element_Spec *MRI_Get_Next_Trace_Record(void);

/* Not in the paper: up to max records at once into out (same semantics as
 * MRI_Get_Next_Trace_Record, without a call per record). Returns how many
 * (0 when the buffer is empty), or MRI_Error. */
int MRI_Get_Trace_Records(MRI_Trace_Element_Spec *out, int max);

/* Not in the paper: sizes of the trace buffers, for the next
 * MRI_Application_Load(). ring_records: records per application thread in
 * shared memory (a power of two, 1024 .. 16777216; default 65536, or
 * MRI_TRACE_RING_RECORDS in the environment), 24 bytes each. tool_records:
 * the tool-side buffer (default 1048576, at least ring_records). 0 keeps a
 * value. */
int MRI_Set_Trace_Buffer_Size(unsigned int ring_records, unsigned int tool_records);

/* Not in the paper: per-thread accounting of trace records. For every
 * thread, emitted == delivered + discarded + buffered, exactly; once the
 * application has terminated and the buffer is empty, buffered is 0.
 * A ring whose head is one its thread never writes (behind the tool's
 * tail, more than the ring's capacity ahead of it, or moved after the
 * program ended: a corrupt segment) is not read again in that run; what
 * it can hold beyond the tail (at most the ring's records) is counted as
 * discarded, and MRI_Get_Application_Status's monitor_message says so. */
typedef struct {
    unsigned long long emitted;    /* records the thread produced */
    unsigned long long delivered;  /* returned to the tool by the Get functions */
    unsigned long long discarded;  /* dropped: the tool was gone, or did not make room within the wait bound */
    unsigned long long buffered;   /* in the thread's ring or the tool-side buffer */
    unsigned long long waits;      /* times the thread found its ring full and waited */
    double wait_ns;                /* time the thread spent waiting for room */
} MRI_Trace_Statistics;

int MRI_Get_Trace_Statistics(const MRI_Active_Object_Spec *thread, MRI_Trace_Statistics *stats);

/* ------------------------------------------------------------------------ */
/* Sections 4 and 5: synchronisation and application control                 */
/* ------------------------------------------------------------------------ */

typedef enum {
    MRI_APPLICATION_RUNNING = 0,
    MRI_APPLICATION_STOPPED = 1,
    MRI_APPLICATION_TERMINATED = 2,
    MRI_APPLICATION_NOT_LOADED = 3
} MRI_Application_Status;

/* Why the application stopped or terminated. */
typedef enum {
    MRI_STOP_NONE = 0,
    MRI_STOP_LOADED = 1,        /* waiting for its first release after MRI_Application_Load() */
    MRI_STOP_BREAKPOINT = 2,    /* end of the MRI_Start_Stop() region reached */
    MRI_STOP_STOP_REQUEST = 3,  /* MRI_Stop() */
    MRI_STOP_EXITED = 4,        /* terminated: exited by itself (exit_code valid) */
    MRI_STOP_SIGNALED = 5,      /* terminated: killed by a signal (signal valid) */
    MRI_STOP_TERMINATED_BY_TOOL = 6, /* terminated: MRI_Application_Finish() */
    MRI_STOP_EXEC = 7           /* terminated for the monitor: monitoring ended at an exec()
                                   (exec_replaced) and the process (same pid) still runs,
                                   unmonitored; once it has ended, the reason is MRI_STOP_EXITED
                                   or MRI_STOP_SIGNALED and exec_replaced stays set */
} MRI_Stop_Reason;

typedef struct {
    MRI_Application_Status status;
    MRI_Stop_Reason reason;
    MRI_Region_Spec region; /* MRI_STOP_BREAKPOINT: the breakpoint region */
    int pid;
    int exit_code;          /* MRI_STOP_EXITED */
    int signal;             /* MRI_STOP_SIGNALED */
    unsigned long long stops; /* number of stops so far in this run */
    /* What the monitor could not monitor; all 0 in a healthy run. */
    unsigned int threads_dropped;  /* threads beyond MRI_MAX_THREADS (default 128): not monitored */
    unsigned int regions_dropped;  /* regions beyond MRI_MAX_REGIONS (or files beyond the file table) */
    unsigned int unmatched_exits;  /* exits of requested regions entered before their requests applied */
    unsigned int bad_requests;     /* corrupt request records the monitor ignored */
    unsigned int counter_errors;   /* times a thread could not set up its counters (see monitor_message) */
    char monitor_message[256];     /* the latest problem the monitor noticed, "" if none (see
                                      MRI_Get_Application_Status) */
    /* 1: the program replaced itself with exec() (without fork()). Monitoring
     * ended there as at an exit: the instances then open were measured up to
     * it, every trace record was published. The new image is not monitored.
     * 2: monitoring ended for an exec() that then failed in a way the monitor
     * could not foresee (monitor_message says how); the program ran on
     * unmonitored. (An exec() that fails because the file is missing or not
     * executable ends nothing: monitoring goes on, and this stays 0.) */
    int exec_replaced;
    unsigned long long exec_timestamp; /* exec_replaced: when monitoring ended, on the clock of the trace records (ns) */
    /* MRI_STOP_SIGNALED: 1 when the monitor caught the signal (SIGINT,
     * SIGTERM or SIGHUP whose action the program left at the default: Ctrl-C,
     * `timeout`, `kill`) and ended monitoring as at an exit before the
     * process died of it: the instances then open, on every thread, were
     * measured up to it (counter metrics leave them out), every trace record
     * was published. 0 when the signal ended the process at once (SIGKILL,
     * SIGSEGV, one the program handles itself): instances still open count
     * nothing. */
    int signal_caught;
    /* The process that attached to the monitor, which runs the monitored
     * program: pid itself, or a descendant when pid is a wrapper that
     * started the program without exec() (a shell script); 0 before it
     * attached. A tool that signals the program signals this one. */
    int monitored_pid;
} MRI_Application_Status_Info;

/* Blocks until the application is stopped (at a breakpoint or by MRI_Stop)
 * or has terminated. Returns MRI_APPLICATION_STOPPED or
 * MRI_APPLICATION_TERMINATED, or MRI_Error (not initialised, no
 * application, called from the trace call-back). When the program
 * replaced itself with exec() (MRI_Application_Status_Info's
 * exec_replaced), monitoring has ended but the process runs on: MRI_Wait()
 * returns once the process has ended, so that its exit status is known. */
int MRI_Wait(void);

/* Like MRI_Wait() but bounded: returns MRI_APPLICATION_RUNNING when the
 * timeout (milliseconds) expires first. Errors: as MRI_Wait(), a negative
 * timeout. After an exec() it returns MRI_APPLICATION_TERMINATED at the
 * timeout at the latest (the reason is MRI_STOP_EXEC while the process
 * runs). */
int MRI_Wait_Timeout(int timeout_ms);

/* Returns the status without blocking: MRI_APPLICATION_RUNNING, _STOPPED,
 * _TERMINATED, or MRI_Error.
 *
 * A status that cannot be read: the application changes its status words
 * between two steps of a sequence word, which is odd in between (a few
 * instructions). A word that stays odd for 2 s while the program lives (a
 * program frozen inside an update, a corrupt segment) marks the status of
 * this run unreadable: the call that finds out takes those 2 s (the
 * bound), and from then on MRI_No_Wait, MRI_Wait, MRI_Wait_Timeout,
 * MRI_Get_Application_Status, MRI_Start, MRI_Start_Stop and MRI_Stop fail
 * at once with that reason while it lives. MRI_Application_Finish() still
 * ends it; its end is read as usual. */
int MRI_No_Wait(void);

/* Fills *info with the status and why the application stopped or ended.
 * Errors: not initialised, NULL info, the status cannot be read (see
 * MRI_No_Wait; *info then holds what is known: pid, monitored_pid,
 * monitor_message, status MRI_APPLICATION_RUNNING). monitor_message holds
 * the monitor's latest message; when this side found a trace ring of the
 * segment corrupt (MRI_Get_Trace_Statistics), that comes first. */
int MRI_Get_Application_Status(MRI_Application_Status_Info *info);

/* Releases a stopped application until it terminates or MRI_Stop() is
 * called. Error when it is running or not loaded. */
int MRI_Start(void);

/* Releases a stopped application until the end of the given serial region;
 * there it stops (all threads: each parks at its next monitored event).
 * Parallel, work-shared and master regions are refused. */
int MRI_Start_Stop(MRI_Region_Spec *region);

/* Stops a running application at the next monitored event of each thread.
 * Safe to call from another thread while one thread is in MRI_Wait(). */
int MRI_Stop(void);

/* Starts the instrumented program `path` with arguments argv (argv[0] is
 * the program name; NULL-terminated; argv may be NULL). Returns when the
 * application has attached and published its static information; it is
 * then stopped (reason MRI_STOP_LOADED) until MRI_Start or MRI_Start_Stop.
 * Requests that exist already are applied to the new run (rerun with the
 * same requests, section 5). Errors: not initialised, already loaded,
 * program not found or not executable, program exited or did not attach
 * within the load timeout (not built with libmonitor?), protocol version
 * mismatch. The timeout is 10 s, or MRI_LOAD_TIMEOUT_MS in the environment.
 * The application inherits the tool's standard streams and environment. */
int MRI_Application_Load(const char *path, char *const argv[]);

/* Ends the application: asks it to terminate at once (its threads still
 * running program code get up to 100 ms to park at their next event; it
 * ends every open region instance as at an exit, up to now or, for a
 * thread parked at a stop or at that event, to where it parked, publishes
 * its final state and exits without atexit handlers), kills it if it has
 * not gone within 5 s, and
 * reaps it. A process whose monitoring ended at an exec() (exec_replaced)
 * no longer answers: it is killed (SIGKILL) at once. Results stay readable
 * until the next load or MRI_Finalize(). Returns MRI_OK also when the
 * application had already terminated. */
int MRI_Application_Finish(void);

/* Initialises the library. Must precede every other call except the name
 * helpers, MRI_Get_Error_Message(), MRI_Get_Protocol_Version(),
 * MRI_Runtime_Information_By_Name(), MRI_Get_File_Name(),
 * MRI_Set_Trace_Buffer_Size() and the trace record functions (docs/api.md,
 * "Errors"). Calling it twice is an error. */
int MRI_Init(void);

/* Finishes a loaded application (as MRI_Application_Finish), deletes all
 * requests, unregisters the trace call-back (after its final call) and
 * releases every resource. */
int MRI_Finalize(void);

/* ------------------------------------------------------------------------ */
/* Section 6: publication interface                                          */
/* ------------------------------------------------------------------------ */

typedef enum {
    MRI_SECONDS = 0,
    MRI_MILLISECONDS = 1,
    MRI_MICROSECONDS = 2,
    MRI_NANOSECONDS = 3
} MRI_Time_Entity;

#define MRI_MAX_CACHE_LEVELS 4

typedef struct {
    int level;              /* 1, 2, 3, ... */
    int is_data;            /* data or unified cache */
    int is_instruction;     /* instruction or unified cache */
    unsigned long long size_bytes;
    int line_size_bytes;
    int associativity;      /* ways; 0 = unknown, -1 = fully associative */
    int shared_by_cpus;     /* logical CPUs sharing one instance */
} MRI_Cache_Info;

typedef struct {
    int nr_CPUs;            /* logical processors */
    int nr_Cores;
    int nr_Sockets;
    int nr_NUMA_Nodes;
    int nr_Cache_Levels;    /* entries used in cache[] */
    MRI_Cache_Info cache[MRI_MAX_CACHE_LEVELS * 2];
    int nr_Hardware_Counters; /* counters of the CPU as PAPI reports them (0 without PAPI); a virtual
                                 machine without a PMU may report counters that count no hardware event */
    MRI_Time_Entity time_entity;
    char topology_source[32];   /* where the topology came from: "hwloc <version>", or "sysconf" when hwloc is unavailable */
    char counter_source[64];    /* "PAPI x.y.z" or why there are none */
} MRI_HW_Info;

/* Fills *info from the machine (the tool's machine, which is the
 * application's: MRI runs both on one node). */
int MRI_Get_System_Information(MRI_HW_Info *info);

typedef struct {
    MRI_Runtime_Information_Spec ri;
    const char *name;        /* e.g. "EXECUTION_TIME", "PAPI_L1_DCM" */
    const char *description;
    const char *backend;     /* "timer", "papi", "simulator" */
    int available;           /* usable on this machine now */
    const char *reason;      /* why not, when available == 0; "" otherwise */
    int needs_counter;       /* counts against the hardware counter budget */
    int request_kinds;       /* bit (1 << MRI_Request_Kind) per kind it can be used with */
} MRI_Runtime_Information_Info;

typedef struct {
    MRI_Runtime_Information_Info *info;
    int nr_Elements;
} MRI_Runtime_Information_Table;

/* Tables returned by the publication interface are owned by the library
 * and stay valid until the next call of the same function or
 * MRI_Finalize(). */
int Get_Available_Runtime_Information(MRI_Runtime_Information_Table *table);

/* Thread names and OS ids for the active objects, parallel to the table. */
typedef struct {
    MRI_Active_Object_Spec active_object;
    int os_id;         /* thread id (gettid) or process id */
    char name[32];     /* thread name (pthread_setname_np) or program name */
    int alive;         /* 0 once the thread or process has ended */
} MRI_Active_Object_Info;

/* Active objects seen so far: the application process followed by every
 * thread that produced a monitored event. Needs a loaded application. */
int Get_Available_Active_Objects(MRI_Active_Object_Table *table);
int MRI_Get_Active_Object_Info(const MRI_Active_Object_Spec *ao, MRI_Active_Object_Info *info);

typedef struct {
    MRI_Aggregation_Spec *aggregation;
    int nr_Elements;
} MRI_Aggregation_Table;

/* Aggregations valid for ri (MRI_REGION_EVENT: none). */
int Get_Available_Aggregations(MRI_Runtime_Information_Spec ri, MRI_Aggregation_Table *table);

/* ------------------------------------------------------------------------ */
/* Static information (the application's regions); not named by the paper    */
/* ------------------------------------------------------------------------ */

typedef struct {
    MRI_Region_Spec region;
    const char *name;      /* the name given in the annotation */
    const char *file;      /* source file as compiled (__FILE__) */
} MRI_Region_Info;

/* All regions the loaded application published. */
int MRI_Get_Regions(MRI_Region_Table *table);
int MRI_Get_Region_Info(const MRI_Region_Spec *region, MRI_Region_Info *info);
/* Finds the one region with this name (error when none or several). */
int MRI_Find_Region(const char *name, MRI_Region_Spec *region);
const char *MRI_Get_File_Name(int file_ID);

/* Name of a runtime information, aggregation operation or region type
 * ("EXECUTION_TIME", "SUM", "LOOP"); "?" when unknown. */
const char *MRI_Runtime_Information_Name(MRI_Runtime_Information_Spec ri);
const char *MRI_Aggregation_Operation_Name(MRI_Aggregation_Operation op);
const char *MRI_Region_Type_Name(MRI_Region_Type type);

/* The monitor's own overhead per monitored region instance, as the
 * application measured it (seed paper 001, section 3.1): k enter/exit pairs
 * back to back, timed j times, the minimum kept; once with the region
 * measured and once with it dormant. In nanoseconds.
 *   delta_inclusive (the paper's Delta_i): what one monitored instance adds
 *     to the inclusive time of every instance that encloses it;
 *   delta_own: the part of it inside the instance's own measured time;
 *   delta_exclusive (the paper's Delta_e): what a direct child adds to its
 *     parent's exclusive time (delta_inclusive - delta_own).
 * Per kind of measurement a region carries. The time-only kinds are
 * measured at start-up; MRI_OVERHEAD_COUNTER at the first release with
 * each new list of counter events (`note` then names the events).
 * MRI_OVERHEAD_CACHE_SIMULATOR differs: simulating the references is timed
 * where it happens (batch by batch) and removed like overhead, so only the
 * cost of recording a reference in the instrumented code is calibrated,
 * at the first release with simulated cache events: delta_inclusive =
 * delta_exclusive = ns per recorded reference, delta_own = 0. */
typedef enum {
    MRI_OVERHEAD_TIMER = 0,            /* flat profile or time aggregate */
    MRI_OVERHEAD_CALLPATH = 1,         /* callpath profile */
    MRI_OVERHEAD_COUNTER = 2,          /* time and PAPI counters read at enter and exit */
    MRI_OVERHEAD_CACHE_SIMULATOR = 3,  /* cache simulator on: per recorded memory reference */
    MRI_OVERHEAD_KINDS = 4
} MRI_Overhead_Kind;

typedef struct {
    int calibrated;          /* 0: not measured (note says why) */
    double delta_inclusive;  /* ns */
    double delta_exclusive;  /* ns */
    double delta_own;        /* ns */
    char note[64];           /* why not calibrated, or the counter events it was measured with */
} MRI_Overhead_Value;

typedef struct {
    int repetitions;  /* k (time-only kinds) */
    int experiments;  /* j */
    MRI_Overhead_Value kind[MRI_OVERHEAD_KINDS];
} MRI_Overhead_Calibration;

/* Needs a loaded application. */
int MRI_Get_Overhead_Calibration(MRI_Overhead_Calibration *calibration);

/* Sets the overhead of one kind of measurement in place of the application's
 * own calibration, for the loaded application: from the next release
 * (MRI_Start, MRI_Start_Stop) on, every instance that kind of region
 * measures is compensated with these values, and
 * MRI_Get_Overhead_Calibration reports them, its note saying "set by the
 * tool" and what was measured. For a tool that determined the overhead
 * from the program itself, e.g. from the same repeated region measured
 * with only itself requested and with every region requested
 * (docs/ACCURACY.md, "Calibrating against the program"): what each
 * descendant instance added to it is delta_inclusive. delta_own is the part
 * of it inside an instance's own time (keep the measured delta_own when
 * the program tells nothing about it; MRI_OVERHEAD_OWN_MEASURED does so
 * also for a kind the application measures only at its first release, the
 * counter kind: the measured delta_own, at most delta_inclusive). In ns;
 * for MRI_OVERHEAD_CACHE_SIMULATOR, ns per recorded reference with
 * delta_own 0. The values take effect at the next release, and
 * MRI_Get_Overhead_Calibration reports them from then on. Errors: not
 * initialised, no application or it has terminated, kind out of range,
 * values not finite, negative (but MRI_OVERHEAD_OWN_MEASURED), delta_own
 * above delta_inclusive, or delta_inclusive above 1 ms. */
#define MRI_OVERHEAD_OWN_MEASURED (-1.0)
int MRI_Set_Overhead(MRI_Overhead_Kind kind, double delta_inclusive, double delta_own);
/* Back to the application's own calibration of that kind from the next
 * release on (nothing to do when it was not set). Same errors, but the
 * values'. */
int MRI_Clear_Overhead(MRI_Overhead_Kind kind);

/* Looks up an event by name ("PAPI_L1_DCM", "perf::TASK-CLOCK"). */
int MRI_Runtime_Information_By_Name(const char *name, MRI_Runtime_Information_Spec *ri);

/* ------------------------------------------------------------------------ */
/* Data structures and the cache simulator; not named by the paper           */
/* ------------------------------------------------------------------------ */

/* A data structure the application registered (mri_monitor.h,
 * MONITOR_DATA / Monitor_Register_Data). data_structure.id is its program
 * unit: the file of the registration and the first line of the declaring
 * region, or line 0 for file scope. */
typedef struct {
    MRI_Data_Structure_Spec data_structure;
    unsigned long long address;    /* in the application's address space */
    unsigned long long size_bytes;
    const char *file;              /* source file of the program unit */
} MRI_Data_Structure_Info;

/* Every data structure the loaded application has registered so far (a
 * registration after start-up shows up once it has happened). Names stay
 * valid until the next load or MRI_Finalize(). Errors: not initialised,
 * no application loaded, a corrupt table in the segment. A data structure
 * the application ended (Monitor_Unregister_Data) and registered again
 * appears once per registration; its spec, here and in requests, names
 * the newest. */
int MRI_Get_Data_Structures(MRI_Data_Structure_Table *table);
/* Finds the one data structure with this name (error when none, listing
 * the registered ones, or several in different program units: then name
 * the unit). */
int MRI_Find_Data_Structure(const char *name, MRI_Data_Structure_Spec *data_structure);
int MRI_Get_Data_Structure_Info(const MRI_Data_Structure_Spec *data_structure, MRI_Data_Structure_Info *info);

/* The simulated cache hierarchy for the next MRI_Application_Load(), in the
 * simulator's syntax (simulator/README.md), e.g.
 * "L1:32K,8,64;L2:1M,16,64;L3:32M,16,64,shared;cores=4"; NULL or "" means
 * the machine's own caches (hwloc), which is also the default. "@FILE"
 * reads the configuration from FILE now (comments and line breaks
 * allowed): a regular file of at most 64 KiB; the application gets its
 * configuration, never the file's name. Without a call,
 * MRI_CACHESIM_CONFIG in the environment at the load counts (the same
 * forms; a file is read at the load).
 * Errors: the configuration is not valid (the message names the level,
 * field and reason); a file that cannot be opened, is not a regular file
 * (a directory, a FIFO, a device) or is larger (the message names it). */
int MRI_Set_Cache_Configuration(const char *config);
/* The hierarchy the loaded application simulates, once a cache request has
 * been applied (before: ""), with where it came from, which thread
 * simulates, and how the simulator searches cache sets there
 * (simulator/README.md, "Set search"). Writes at most
 * bytes - 1 characters and a NUL. Errors: NULL buffer, no application. */
int MRI_Get_Cache_Configuration(char *text, int bytes);

/* ------------------------------------------------------------------------ */
/* Errors and versions                                                       */
/* ------------------------------------------------------------------------ */

/* Reason for the last failure in the calling thread ("" if none). Valid
 * until the next MRI call in this thread: copy it before that. */
const char *MRI_Get_Error_Message(void);

/* The shared-memory protocol version this library speaks. */
int MRI_Get_Protocol_Version(void);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* MRI_H */

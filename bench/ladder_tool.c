/*
 * ladder_tool - runs bench/ladder_app under a real MRI tool with the
 * requests of one rung of the hot-path cost ladder (bench/README.md).
 *
 *   ladder_tool LEVEL -- ./ladder_app [benchmark args...]
 *
 * LEVEL  attached   no request at all (rung 3: region "bench_attached")
 *        aggregate  EXECUTION_TIME, SUM, PER_THREAD over "bench_aggregate" (rung 4)
 *        profile    EXECUTION_TIME profile over "bench_profile" (rung 5)
 *        callpath   EXECUTION_TIME callpath profile over "bench_callpath" and
 *                   its caller "bench_callpath_caller" (rung 5b)
 *        counter    perf::TASK-CLOCK SUM PER_THREAD over "bench_counter" (rung 6)
 *        trace      REGION_EVENT trace over "bench_trace" (rung 7), drained by a
 *                   call-back that counts the records
 *
 * Loads the application (it waits in Monitor_Init() until released), submits
 * the level's request, releases it with MRI_Start() and waits until it has
 * terminated. Then it prints one line starting with "ladder_tool:" that shows
 * the request really was in effect (instances and time it saw) and exits
 * with the application's status. When the application succeeded but the
 * check fails (request not active, no instances seen), the exit status is 3.
 *
 * Uses only the public C API (include/mri.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mri.h"

static void die(const char *what) __attribute__((noreturn));
static void die(const char *what)
{
    fprintf(stderr, "ladder_tool: %s: %s\n", what, MRI_Get_Error_Message());
    MRI_Finalize();
    exit(1);
}

static void usage(void) __attribute__((noreturn));
static void usage(void)
{
    fprintf(stderr,
            "usage: ladder_tool attached|aggregate|profile|callpath|counter|trace -- PROGRAM [ARGS...]\n"
            "  attached   tool attached, nothing requested (region bench_attached)\n"
            "  aggregate  EXECUTION_TIME SUM PER_THREAD over region bench_aggregate\n"
            "  counter    perf::TASK-CLOCK SUM PER_THREAD over region bench_counter\n"
            "  profile    EXECUTION_TIME profile over region bench_profile\n"
            "  callpath   EXECUTION_TIME callpath profile over bench_callpath and bench_callpath_caller\n"
            "  trace      REGION_EVENT trace over region bench_trace\n");
    exit(2);
}

static int same_region(const MRI_Region_Spec *a, const MRI_Region_Spec *b)
{
    return a->type == b->type && a->id.file_ID == b->id.file_ID && a->id.line_NR == b->id.line_NR;
}

/* Threads the monitor has seen (active objects of type MRI_THREAD). */
static int threads_seen(void)
{
    MRI_Active_Object_Table t;
    int n = 0;
    if (Get_Available_Active_Objects(&t) != MRI_OK) return -1;
    for (int i = 0; i < t.nr_Elements; ++i)
        if (t.active_object[i].type == MRI_THREAD) ++n;
    return n;
}

enum level { LEVEL_ATTACHED, LEVEL_AGGREGATE, LEVEL_PROFILE, LEVEL_CALLPATH, LEVEL_COUNTER, LEVEL_TRACE };

/* The trace rung's call-back: takes the records in chunks and counts them. */
static unsigned long long trace_records;
static void count_records(void)
{
    static MRI_Trace_Element_Spec chunk[4096];
    int n;
    while ((n = MRI_Get_Trace_Records(chunk, 4096)) > 0) trace_records += (unsigned long long)n;
}

int main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[2], "--") != 0) usage();
    enum level level;
    const char *region_name;
    if (strcmp(argv[1], "attached") == 0) {
        level = LEVEL_ATTACHED;
        region_name = "bench_attached";
    } else if (strcmp(argv[1], "aggregate") == 0) {
        level = LEVEL_AGGREGATE;
        region_name = "bench_aggregate";
    } else if (strcmp(argv[1], "profile") == 0) {
        level = LEVEL_PROFILE;
        region_name = "bench_profile";
    } else if (strcmp(argv[1], "callpath") == 0) {
        level = LEVEL_CALLPATH;
        region_name = "bench_callpath";
    } else if (strcmp(argv[1], "counter") == 0) {
        level = LEVEL_COUNTER;
        region_name = "bench_counter";
    } else if (strcmp(argv[1], "trace") == 0) {
        level = LEVEL_TRACE;
        region_name = "bench_trace";
    } else {
        usage();
    }
    char **prog = argv + 3;

    if (MRI_Init() != MRI_OK) die("init");
    if (MRI_Application_Load(prog[0], prog) != MRI_OK) die("cannot load the program");

    MRI_Region_Spec both[2]; /* the rung's region; for the callpath rung, its caller too */
    MRI_Region_Spec *const region = &both[0], *const caller = &both[1];
    if (MRI_Find_Region(region_name, region) != MRI_OK) die(region_name);
    MRI_Region_Table regions = {both, 1};
    if (level == LEVEL_CALLPATH) {
        if (MRI_Find_Region("bench_callpath_caller", caller) != MRI_OK) die("bench_callpath_caller");
        regions.nr_Elements = 2;
    }
    MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
    MRI_Request_ID req = 0;
    if (level == LEVEL_COUNTER && MRI_Runtime_Information_By_Name("perf::TASK-CLOCK", &ri) != MRI_OK)
        die("perf::TASK-CLOCK");
    if (level == LEVEL_AGGREGATE || level == LEVEL_COUNTER) {
        MRI_Aggregation_Spec agg = {MRI_SUM, MRI_PER_THREAD};
        req = MRI_Aggregate_Request(&ri, &regions, NULL, NULL, &agg);
        if (req < 0) die("aggregate request");
    } else if (level == LEVEL_PROFILE) {
        req = MRI_Profile_Request(&ri, &regions, NULL, NULL);
        if (req < 0) die("profile request");
    } else if (level == LEVEL_CALLPATH) {
        req = MRI_Callpath_Profile_Request(&ri, &regions, NULL, NULL);
        if (req < 0) die("callpath profile request");
    } else if (level == LEVEL_TRACE) {
        ri = MRI_REGION_EVENT;
        if (MRI_Register_Call_Back_Function(count_records) != MRI_OK) die("call-back");
        req = MRI_Trace_Request(&ri, &regions, NULL, NULL);
        if (req < 0) die("trace request");
    }

    if (MRI_Start() != MRI_OK) die("start");
    for (;;) {
        int st = MRI_Wait();
        if (st == MRI_Error) die("wait");
        if (st == MRI_APPLICATION_TERMINATED) break;
        if (MRI_Start() != MRI_OK) die("continue"); /* stopped by someone else: keep going */
    }

    MRI_Application_Status_Info status;
    if (MRI_Get_Application_Status(&status) != MRI_OK) die("status");
    int code = status.reason == MRI_STOP_SIGNALED ? 128 + status.signal : status.exit_code;
    int ok = 1;

    if (level == LEVEL_ATTACHED) {
        /* Nothing is armed after the release, so only the thread that waited
         * in Monitor_Init() ever entered the monitor. */
        int n = threads_seen();
        printf("ladder_tool: attached, no request for %s: %d thread(s) entered the monitor\n",
               region_name, n);
    } else if (level == LEVEL_AGGREGATE || level == LEVEL_COUNTER) {
        void *data = NULL;
        if (MRI_Get_Data(req, &data) != MRI_OK) die("aggregate results");
        const MRI_Aggregate_Request_Results *res = data;
        unsigned long long instances = 0;
        double total_ns = 0;
        int with_instances = 0;
        for (int i = 0; i < res->nr_Elements; ++i) {
            instances += res->element[i].count;
            total_ns += res->element[i].value;
            if (res->element[i].count) ++with_instances;
        }
        printf("ladder_tool: aggregate %s SUM PER_THREAD over %s: active %d, "
               "%llu instances on %d of %d threads, %.3f s in total, %.1f ns per instance\n",
               MRI_Runtime_Information_Name(ri), region_name, res->active, instances, with_instances,
               res->nr_Elements, total_ns / 1e9, instances ? total_ns / (double)instances : 0.0);
        ok = res->active && instances > 0;
    } else if (level == LEVEL_TRACE) {
        /* Every record emitted was delivered: none discarded, none left. */
        MRI_Active_Object_Table t;
        if (Get_Available_Active_Objects(&t) != MRI_OK) die("active objects");
        unsigned long long emitted = 0, delivered = 0, discarded = 0, waits = 0;
        double wait_ns = 0;
        for (int i = 0; i < t.nr_Elements; ++i) {
            if (t.active_object[i].type != MRI_THREAD) continue;
            MRI_Trace_Statistics st;
            if (MRI_Get_Trace_Statistics(&t.active_object[i], &st) != MRI_OK) die("trace statistics");
            emitted += st.emitted;
            delivered += st.delivered;
            discarded += st.discarded;
            waits += st.waits;
            wait_ns += st.wait_ns;
        }
        printf("ladder_tool: trace REGION_EVENT over %s: %llu records emitted, %llu delivered "
               "(%llu counted by the call-back), %llu discarded; %llu waits for room, %.3f s waited\n",
               region_name, emitted, delivered, trace_records, discarded, waits, wait_ns / 1e9);
        ok = emitted > 0 && emitted == delivered && delivered == trace_records && discarded == 0;
    } else if (level == LEVEL_CALLPATH) {
        /* Every pair went to the edge caller -> callee. */
        MRI_Callpath_Profile_Results *cp = NULL;
        if (MRI_Get_Callpath_Data(req, &cp) != MRI_OK) die("callpath results");
        const MRI_Callpath_Element *edge = NULL;
        for (int i = 0; i < cp->nr_Elements; ++i)
            if (cp->element[i].has_caller && same_region(&cp->element[i].caller, caller) &&
                same_region(&cp->element[i].callee, region))
                edge = &cp->element[i];
        if (edge) {
            printf("ladder_tool: callpath profile EXECUTION_TIME, edge bench_callpath_caller -> %s: active %d, "
                   "%llu instances, inclusive %.3f s, %.1f ns per instance\n",
                   region_name, cp->active, edge->instances, edge->inclusive / 1e9,
                   edge->instances ? edge->inclusive / (double)edge->instances : 0.0);
            ok = cp->active && edge->instances > 0;
        } else {
            printf("ladder_tool: callpath profile: no edge bench_callpath_caller -> %s among %d element(s)\n",
                   region_name, cp->nr_Elements);
            ok = 0;
        }
    } else {
        void *data = NULL;
        if (MRI_Get_Data(req, &data) != MRI_OK) die("profile results");
        const MRI_Histogram_Profile_Results *res = data;
        const MRI_Profile_Element *el = NULL;
        for (int i = 0; i < res->nr_Elements; ++i)
            if (same_region(&res->element[i].region, region)) el = &res->element[i];
        if (el) {
            int with_instances = 0;
            for (int t = 0; t < el->nr_Active_Objects; ++t)
                if (el->per_active_object[t].instances) ++with_instances;
            printf("ladder_tool: profile EXECUTION_TIME over %s: active %d, %llu instances on %d "
                   "of %d threads, inclusive %.3f s, exclusive %.3f s, %.1f ns per instance\n",
                   region_name, res->active, el->instances, with_instances, el->nr_Active_Objects,
                   el->inclusive / 1e9, el->exclusive / 1e9,
                   el->instances ? el->inclusive / (double)el->instances : 0.0);
            ok = res->active && el->instances > 0;
        } else {
            printf("ladder_tool: profile over %s: active %d, region missing from the %d result "
                   "element(s)\n",
                   region_name, res->active, res->nr_Elements);
            ok = 0;
        }
    }
    fflush(stdout);

    if (MRI_Finalize() != MRI_OK) die("finalize");
    if (code == 0 && !ok) {
        fprintf(stderr, "ladder_tool: the %s request did not take effect\n", argv[1]);
        return 3;
    }
    return code;
}

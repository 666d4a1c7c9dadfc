/*
 * C API tests: a real tool (this process, through libmri) and a real
 * instrumented application (mri_testapp or an example) in a second process,
 * talking over System V shared memory.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the headers above first. */
#include <cmocka.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mri.h"
#include "mri_test_helpers.h"
#include "segment_peer.h"

#ifndef MRI_TESTAPP
#error "MRI_TESTAPP must name the test application"
#endif

static int teardown(void **state)
{
    (void)state;
    MRI_Finalize(); /* also cleans up after a failed assertion */
    return 0;
}

static void load(char *mode, ...)
{
    char *argv[16] = {MRI_TESTAPP, mode};
    int n = 2;
    va_list ap;
    va_start(ap, mode);
    char *a;
    while ((a = va_arg(ap, char *)) != NULL && n < 15) argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    assert_int_equal(MRI_Init(), MRI_OK);
    int rc = MRI_Application_Load(MRI_TESTAPP, argv);
    if (rc != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
}

static double agg_total(MRI_Request_ID id)
{
    MRI_Aggregate_Request_Results *r = agg_data(id);
    double v = 0;
    for (int i = 0; i < r->nr_Elements; ++i) v += r->element[i].value;
    return v;
}

/* ---------------------------------------------------------------------- */

static void test_misuse_before_init(void **state)
{
    (void)state;
    MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
    MRI_Aggregation_Spec agg = {MRI_SUM, MRI_PER_THREAD};
    expect_error(MRI_Aggregate_Request(&ri, NULL, NULL, NULL, &agg), "MRI_Init");
    expect_error(MRI_Start(), "MRI_Init");
    expect_error(MRI_Wait(), "MRI_Init");
    expect_error(MRI_Application_Load(MRI_TESTAPP, NULL), "MRI_Init");
    expect_error(MRI_Finalize(), "MRI_Init");
    assert_int_equal(MRI_Init(), MRI_OK);
    expect_error(MRI_Init(), "twice");
    /* Before a load: no regions are known, no control is possible. */
    expect_error(MRI_Aggregate_Request(&ri, NULL, NULL, NULL, &agg), "MRI_Application_Load");
    expect_error(MRI_Start(), "no application loaded");
    MRI_Region_Spec r = {MRI_REGION_LOOP, {0, 1}};
    expect_error(MRI_Start_Stop(&r), "no application loaded");
    expect_error(MRI_Stop(), "no application loaded");
    expect_error(MRI_Request_Delete(1), "does not exist");
    void *p;
    expect_error(MRI_Get_Data(1, &p), "does not exist");
    expect_error(MRI_Application_Load(NULL, NULL), "NULL");
    expect_error(MRI_Application_Load("/nonexistent/program", NULL), "no such file");
    char plain[] = "/tmp/mri_test_plain_XXXXXX";
    int fd = mkstemp(plain);
    assert_true(fd >= 0);
    close(fd);
    expect_error(MRI_Application_Load(plain, NULL), "not executable");
    unlink(plain);
    expect_error(MRI_Application_Load("mri-no-such-program-in-path", NULL), "not found in PATH");
    setenv("MRI_MAX_THREADS", "lots", 1);
    expect_error(MRI_Application_Load(MRI_TESTAPP, NULL), "MRI_MAX_THREADS=\"lots\" is not a positive number");
    setenv("MRI_MAX_THREADS", "0", 1);
    expect_error(MRI_Application_Load(MRI_TESTAPP, NULL), "not a positive number");
    setenv("MRI_MAX_THREADS", " 4", 1); /* digits only: strtoul took blanks and a sign */
    expect_error(MRI_Application_Load(MRI_TESTAPP, NULL), "MRI_MAX_THREADS=\" 4\" is not a positive number");
    setenv("MRI_MAX_THREADS", "+4", 1);
    expect_error(MRI_Application_Load(MRI_TESTAPP, NULL), "MRI_MAX_THREADS=\"+4\" is not a positive number");
    unsetenv("MRI_MAX_THREADS");
    setenv("MRI_LOAD_TIMEOUT_MS", "-5", 1);
    expect_error(MRI_Application_Load(MRI_TESTAPP, NULL), "MRI_LOAD_TIMEOUT_MS");
    unsetenv("MRI_LOAD_TIMEOUT_MS");
    setenv("MRI_MAX_REGIONS", "100000000", 1);
    expect_error(MRI_Application_Load(MRI_TESTAPP, NULL), "max_regions out of range");
    unsetenv("MRI_MAX_REGIONS");
}

static void test_misuse_with_application(void **state)
{
    (void)state;
    load("steps", "3", "0", NULL);
    MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
    MRI_Aggregation_Spec agg = {MRI_SUM, MRI_PER_THREAD};
    MRI_Region_Spec step = region("step");
    MRI_Region_Table regions = {&step, 1};
    expect_error(MRI_Aggregate_Request(NULL, &regions, NULL, NULL, &agg), "NULL");
    expect_error(MRI_Aggregate_Request(&ri, &regions, NULL, NULL, NULL), "NULL");
    MRI_Region_Table null_table = {NULL, 2};
    expect_error(MRI_Aggregate_Request(&ri, &null_table, NULL, NULL, &agg), "NULL region pointer");
    MRI_Region_Table neg = {&step, -1};
    expect_error(MRI_Aggregate_Request(&ri, &neg, NULL, NULL, &agg), "negative");
    expect_error(MRI_Aggregate_Request(&ri, NULL, NULL, NULL, &agg), "empty");
    MRI_Region_Spec bogus = {MRI_REGION_LOOP, {0, 99999}};
    MRI_Region_Table bogus_table = {&bogus, 1};
    expect_error(MRI_Aggregate_Request(&ri, &bogus_table, NULL, NULL, &agg), "has no LOOP region");
    MRI_Runtime_Information_Spec unknown = (MRI_Runtime_Information_Spec)4242;
    expect_error(MRI_Aggregate_Request(&unknown, &regions, NULL, NULL, &agg), "unknown runtime information");
    MRI_Runtime_Information_Spec l1 = MRI_LC1_DATA_READ_MISS;
    expect_error(MRI_Aggregate_Request(&l1, &regions, NULL, NULL, &agg), "not available");
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    expect_error(MRI_Aggregate_Request(&ev, &regions, NULL, NULL, &agg), "REGION_EVENT");
    MRI_Aggregation_Spec bad_op = {(MRI_Aggregation_Operation)99, MRI_PER_THREAD};
    expect_error(MRI_Aggregate_Request(&ri, &regions, NULL, NULL, &bad_op), "unknown aggregation operation");
    /* Pairing rule of section 2. */
    MRI_Active_Object_Spec proc = {MRI_PROCESS, 0};
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    proc.id = st.pid;
    MRI_Active_Object_Table procs = {&proc, 1};
    expect_error(MRI_Aggregate_Request(&ri, &regions, &procs, NULL, &agg), "must match");
    MRI_Active_Object_Spec thread0 = {MRI_THREAD, 0};
    MRI_Active_Object_Table threads = {&thread0, 1};
    MRI_Aggregation_Spec per_process = {MRI_MAX, MRI_PER_PROCESS};
    expect_error(MRI_Aggregate_Request(&ri, &regions, &threads, NULL, &per_process), "must match");
    MRI_Active_Object_Spec other = {MRI_PROCESS, 1};
    MRI_Active_Object_Table others = {&other, 1};
    expect_error(MRI_Aggregate_Request(&ri, &regions, &others, NULL, &per_process), "not the application");
    /* Execution time cannot be restricted to a data structure. */
    MRI_Data_Structure_Spec ds = {{0, 1}, "A"};
    MRI_Data_Structure_Table vars = {&ds, 1};
    expect_error(MRI_Aggregate_Request(&ri, &regions, NULL, &vars, &agg), "data structure");
    /* Instances have no per-thread MIN. */
    MRI_Runtime_Information_Spec inst = MRI_NUMBER_OF_INSTANCES;
    MRI_Aggregation_Spec min_thread = {MRI_MIN, MRI_PER_THREAD};
    expect_error(MRI_Aggregate_Request(&inst, &regions, NULL, NULL, &min_thread), "not available for");
    /* A histogram needs the cache simulator, which this application lacks
     * (backends/cachesim/tests has the ones that have it). */
    int bins = 25;
    expect_error(MRI_Histogram_Request(&l1, &regions, NULL, NULL, &bins), "needs the cache-simulator backend");
    /* Trace misuse: an unregistered data structure, too many traces,
     * MRI_Get_Data on a trace, bad buffer sizes. */
    expect_error(MRI_Trace_Request(&ev, &regions, NULL, &vars), "data structure");
    MRI_Request_ID traces[8];
    for (int i = 0; i < 8; ++i) {
        traces[i] = MRI_Trace_Request(&ev, &regions, NULL, NULL);
        assert_true(traces[i] > 0);
    }
    expect_error(MRI_Trace_Request(&ev, &regions, NULL, NULL), "too many trace requests");
    void *p;
    expect_error(MRI_Get_Data(traces[0], &p), "is a trace request");
    for (int i = 0; i < 8; ++i) assert_int_equal(MRI_Request_Delete(traces[i]), MRI_OK);
    expect_error(MRI_Set_Trace_Buffer_Size(1000, 0), "power of two");
    expect_error(MRI_Set_Trace_Buffer_Size(1u << 25, 0), "power of two");
    expect_error(MRI_Set_Trace_Buffer_Size(4096, 1024), "at least one ring");
    assert_null(MRI_Get_First_Trace_Record());  /* nothing traced: empty, and no error */
    assert_string_equal(MRI_Get_Error_Message(), "");
    /* Deleting twice. */
    MRI_Request_ID id = MRI_Aggregate_Request(&ri, &regions, NULL, NULL, &agg);
    assert_true(id > 0);
    assert_int_equal(MRI_Request_Delete(id), MRI_OK);
    expect_error(MRI_Request_Delete(id), "does not exist");
    expect_error(MRI_Get_Data(id, &p), "does not exist");
    expect_error(MRI_Get_Data(1, NULL), "NULL");
    /* Control misuse. */
    expect_error(MRI_Start_Stop(NULL), "NULL");
    expect_error(MRI_Start_Stop(&bogus), "has no LOOP region");
    expect_error(MRI_Application_Load(MRI_TESTAPP, NULL), "already loaded");
    assert_int_equal(MRI_Start(), MRI_OK);
    int rc = MRI_Start();
    /* Either still running (error: running) or already ended (error: terminated). */
    assert_int_equal(rc, MRI_Error);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    expect_error(MRI_Start(), "terminated");
}

/* A thread list is checked alike by every kind of request (paper section
 * 3: the first four parameters are the same for all): a thread named
 * twice, a negative id, more elements than threads, the process twice or
 * the process with threads get the same error from each. A valid list's
 * threads are in the results as named, also one that never ran: the
 * profile used to leave that out (and to list a twice-named thread once),
 * where the aggregate kept it. */
static void test_thread_lists(void **state)
{
    (void)state;
    load("nested", "2", "50", NULL);
    MRI_Runtime_Information_Spec time = MRI_EXECUTION_TIME, ev = MRI_REGION_EVENT, l1 = MRI_LC1_DATA_READ_MISS;
    MRI_Region_Spec step = region("step");
    MRI_Region_Table regions = {&step, 1};
    MRI_Aggregation_Spec per_thread = {MRI_SUM, MRI_PER_THREAD};
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    enum { kMaxThreads = 128 }; /* MRI_MAX_THREADS's default */
    static MRI_Active_Object_Spec many[kMaxThreads + 1];
    for (int i = 0; i <= kMaxThreads; ++i) many[i] = (MRI_Active_Object_Spec){MRI_THREAD, i};
    MRI_Active_Object_Spec twice[] = {{MRI_THREAD, 1}, {MRI_THREAD, 0}, {MRI_THREAD, 1}};
    MRI_Active_Object_Spec negative[] = {{MRI_THREAD, 0}, {MRI_THREAD, -1}};
    MRI_Active_Object_Spec process_twice[] = {{MRI_PROCESS, st.pid}, {MRI_PROCESS, st.pid}};
    MRI_Active_Object_Spec mixed[] = {{MRI_THREAD, 0}, {MRI_PROCESS, st.pid}};
    const struct {
        MRI_Active_Object_Table table;
        const char *error;
    } bad[] = {
        {{twice, 3}, "active object 2: thread 1 is named twice (also element 0); name each thread once"},
        {{negative, 2}, "active object 1: thread id -1 out of range (0..127)"},
        {{many, kMaxThreads + 1}, "active object table has 129 elements: at most 128"},
        {{process_twice, 2}, "active object 1: the process is named twice (also element 0)"},
        {{mixed, 2}, "active objects 0 and 1: the table names the process, which stands for every thread, and a thread"},
    };
    int bins = 4;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        MRI_Active_Object_Table t = bad[i].table;
        expect_error(MRI_Aggregate_Request(&time, &regions, &t, NULL, &per_thread), bad[i].error);
        expect_error(MRI_Profile_Request(&time, &regions, &t, NULL), bad[i].error);
        expect_error(MRI_Callpath_Profile_Request(&time, &regions, &t, NULL), bad[i].error);
        expect_error(MRI_Histogram_Request(&l1, &regions, &t, NULL, &bins), bad[i].error);
        expect_error(MRI_Trace_Request(&ev, &regions, &t, NULL), bad[i].error);
    }
    /* Thread 1 runs 50 steps; thread 7 never exists. */
    MRI_Active_Object_Spec listed[] = {{MRI_THREAD, 1}, {MRI_THREAD, 7}};
    MRI_Active_Object_Table list = {listed, 2};
    const MRI_Request_ID agg = MRI_Aggregate_Request(&time, &regions, &list, NULL, &per_thread);
    const MRI_Request_ID prof = MRI_Profile_Request(&time, &regions, &list, NULL);
    const MRI_Request_ID path = MRI_Callpath_Profile_Request(&time, &regions, &list, NULL);
    const MRI_Request_ID trace = MRI_Trace_Request(&ev, &regions, &list, NULL);
    assert_true(agg > 0 && prof > 0 && path > 0 && trace > 0);
    run_to_end();
    MRI_Aggregate_Request_Results *a = agg_data(agg);
    assert_int_equal(a->nr_Elements, 2);
    assert_int_equal(a->element[0].active_object.id, 1);
    assert_int_equal(a->element[0].count, 50);
    assert_int_equal(a->element[1].active_object.id, 7);
    assert_int_equal(a->element[1].count, 0);
    void *p;
    assert_int_equal(MRI_Get_Data(prof, &p), MRI_OK);
    const MRI_Histogram_Profile_Results *res = p;
    assert_int_equal(res->nr_Elements, 1);
    const MRI_Profile_Element *e = &res->element[0];
    assert_int_equal(e->instances, 50);
    assert_int_equal(e->nr_Active_Objects, 2);
    assert_int_equal(e->per_active_object[0].active_object.type, MRI_THREAD);
    assert_int_equal(e->per_active_object[0].active_object.id, 1);
    assert_int_equal(e->per_active_object[0].instances, 50);
    assert_true(e->per_active_object[0].inclusive > 0.0);
    assert_int_equal(e->per_active_object[1].active_object.type, MRI_THREAD);
    assert_int_equal(e->per_active_object[1].active_object.id, 7);
    assert_int_equal(e->per_active_object[1].instances, 0);
    assert_true(e->per_active_object[1].inclusive == 0.0);
    MRI_Callpath_Profile_Results *cp;
    assert_int_equal(MRI_Get_Callpath_Data(path, &cp), MRI_OK);
    assert_int_equal(cp->nr_Elements, 1);
    assert_int_equal(cp->element[0].instances, 50);
}

static void test_times_and_instances(void **state)
{
    (void)state;
    load("sleep", "5", "10", NULL);
    MRI_Request_ID sum = aggregate(MRI_EXECUTION_TIME, "sleeper", MRI_SUM, MRI_PER_THREAD);
    MRI_Request_ID min = aggregate(MRI_EXECUTION_TIME, "sleeper", MRI_MIN, MRI_PER_PROCESS);
    MRI_Request_ID max = aggregate(MRI_EXECUTION_TIME, "sleeper", MRI_MAX, MRI_PER_PROCESS);
    MRI_Request_ID avg = aggregate(MRI_EXECUTION_TIME, "sleeper", MRI_AVG, MRI_PER_PROCESS);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "sleeper", MRI_SUM, MRI_PER_PROCESS);
    MRI_Request_ID count = aggregate(MRI_EXECUTION_TIME, "sleeper", MRI_COUNT, MRI_PER_THREAD);
    /* Before the first release nothing is active yet. */
    MRI_Aggregate_Request_Results *before = agg_data(sum);
    assert_int_equal(before->active, 0);
    run_to_end();
    MRI_Aggregate_Request_Results *r = agg_data(sum);
    assert_int_equal(r->active, 1);
    assert_int_equal(r->nr_Elements, 1); /* one thread */
    assert_int_equal(r->element[0].count, 5);
    double total = r->element[0].value;
    /* 5 x 10 ms of nanosleep: at least 50 ms, and not wildly more. */
    assert_true(total >= 50 * kMs);
    assert_true(total < 50 * kMs + 200 * kMs);
    double mn = agg_total(min), mx = agg_total(max), av = agg_total(avg);
    assert_true(mn >= 10 * kMs);
    assert_true(mx >= mn);
    assert_true(av >= mn && av <= mx);
    assert_true(agg_data(min)->element[0].has_focus);
    assert_int_equal((long)agg_total(inst), 5);
    assert_int_equal((long)agg_total(count), 5);
}

static void test_profile(void **state)
{
    (void)state;
    load("steps", "4", "8", NULL);
    MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
    MRI_Request_ID prof = MRI_Profile_Request(&ri, NULL, NULL, NULL);
    assert_true(prof > 0);
    run_to_end();
    void *p;
    assert_int_equal(MRI_Get_Data(prof, &p), MRI_OK);
    MRI_Histogram_Profile_Results *res = p;
    assert_int_equal(res->kind, MRI_PROFILE_REQUEST);
    assert_int_equal(res->active, 1);
    MRI_Region_Spec step = region("step"), inner = region("inner"), mainr = region("main");
    const MRI_Profile_Element *e_step = NULL, *e_inner = NULL, *e_main = NULL;
    for (int i = 0; i < res->nr_Elements; ++i) {
        const MRI_Profile_Element *e = &res->element[i];
        if (memcmp(&e->region, &step, sizeof step) == 0) e_step = e;
        if (memcmp(&e->region, &inner, sizeof inner) == 0) e_inner = e;
        if (memcmp(&e->region, &mainr, sizeof mainr) == 0) e_main = e;
    }
    assert_non_null(e_step);
    assert_non_null(e_inner);
    assert_non_null(e_main);
    assert_int_equal(e_step->instances, 4);
    assert_int_equal(e_inner->instances, 8);
    assert_int_equal(e_main->instances, 1);
    /* Each step: 2 x 2 ms inner + 4 ms of its own. */
    assert_true(e_inner->inclusive >= 8 * 2 * kMs);
    assert_true(e_step->inclusive >= 4 * 8 * kMs);
    /* Exclusive time of step excludes its profiled children. */
    double expect_excl = e_step->inclusive - e_inner->inclusive;
    assert_true(e_step->exclusive > expect_excl - 0.5 * kMs && e_step->exclusive < expect_excl + 0.5 * kMs);
    assert_true(e_main->inclusive >= e_step->inclusive);
    assert_int_equal(e_step->nr_Active_Objects, 1);
    assert_int_equal(e_step->per_active_object[0].instances, 4);
}

/* Releases the program until the end of `region`, and returns the status
 * there: stopped at that breakpoint. */
static MRI_Application_Status_Info run_to_breakpoint(MRI_Region_Spec *region)
{
    assert_int_equal(MRI_Start_Stop(region), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_BREAKPOINT);
    assert_memory_equal(&st.region, region, sizeof *region);
    return st;
}

static void test_breakpoints_iterative(void **state)
{
    (void)state;
    load("steps", "6", "1", NULL);
    MRI_Region_Spec step = region("step");
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_No_Wait(), MRI_APPLICATION_STOPPED);
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_LOADED);
    MRI_Request_ID inner_req = -1;
    for (int k = 1; k <= 3; ++k) {
        st = run_to_breakpoint(&step);
        assert_int_equal((long)agg_total(inst), k);
        if (k == 2) {
            /* Change the requests at a stop: a new one counts from here on. */
            inner_req = aggregate(MRI_NUMBER_OF_INSTANCES, "inner", MRI_SUM, MRI_PER_PROCESS);
            assert_int_equal(agg_data(inner_req)->active, 0);
        }
        if (k == 3) assert_int_equal((long)agg_total(inner_req), 2); /* one step since added */
    }
    assert_int_equal(MRI_Request_Delete(inst), MRI_OK);
    run_to_end();
    assert_int_equal((long)agg_total(inner_req), 2 * 4);
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    assert_int_equal(st.stops, 3);
    assert_int_equal(st.threads_dropped, 0);
    assert_int_equal(st.regions_dropped, 0);
    assert_int_equal(st.bad_requests, 0);
    assert_string_equal(st.monitor_message, "");
}

static void test_stopped_time_not_charged(void **state)
{
    (void)state;
    load("steps", "3", "4", NULL);
    MRI_Region_Spec step = region("step");
    MRI_Request_ID main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_THREAD);
    for (int k = 0; k < 2; ++k) {
        assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        usleep(300 * 1000); /* the tool takes its time at each stop */
    }
    run_to_end();
    double t = agg_total(main_time);
    assert_true(t >= 3 * 4 * kMs);
    assert_true(t < 3 * 4 * kMs + 250 * kMs); /* far below the 600 ms spent stopped */
}

/* MRI_Stop mostly reaches this thread while it sleeps inside "sleeper", so
 * it parks at the region's exit: that instance must keep its own time and
 * not get the stop's. */
static void test_stop_at_an_exit_is_charged_to_nobody(void **state)
{
    (void)state;
    load("sleep", "40", "5", NULL);
    MRI_Request_ID min = aggregate(MRI_EXECUTION_TIME, "sleeper", MRI_MIN, MRI_PER_PROCESS);
    MRI_Request_ID max = aggregate(MRI_EXECUTION_TIME, "sleeper", MRI_MAX, MRI_PER_PROCESS);
    assert_int_equal(MRI_Start(), MRI_OK);
    int stops = 0;
    for (int k = 0; k < 6; ++k) {
        usleep(12 * 1000);
        assert_int_equal(MRI_Stop(), MRI_OK);
        int st = MRI_Wait();
        if (st == MRI_APPLICATION_TERMINATED) break;
        assert_int_equal(st, MRI_APPLICATION_STOPPED);
        ++stops;
        usleep(100 * 1000); /* the tool looks at the results for a while */
        assert_int_equal(MRI_Start(), MRI_OK);
    }
    assert_true(stops >= 3);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    assert_true(agg_total(min) >= 5 * kMs);          /* no instance lost its time */
    assert_true(agg_total(max) < 5 * kMs + 60 * kMs); /* none got a 100 ms stop */
}

static void test_min_max_focus(void **state)
{
    (void)state;
    load("imbalance", "3", "5", NULL);
    MRI_Request_ID max = aggregate(MRI_EXECUTION_TIME, "work", MRI_MAX, MRI_PER_PROCESS);
    MRI_Request_ID min = aggregate(MRI_EXECUTION_TIME, "work", MRI_MIN, MRI_PER_PROCESS);
    MRI_Request_ID per_thread = aggregate(MRI_EXECUTION_TIME, "work", MRI_SUM, MRI_PER_THREAD);
    MRI_Request_ID most = aggregate(MRI_NUMBER_OF_INSTANCES, "work", MRI_MAX, MRI_PER_PROCESS);
    run_to_end();
    MRI_Aggregate_Request_Results *r = agg_data(max);
    assert_int_equal(r->nr_Elements, 1);
    assert_true(r->element[0].has_focus);
    assert_int_equal(r->element[0].focus_active_object.type, MRI_THREAD);
    MRI_Active_Object_Info info;
    assert_int_equal(MRI_Get_Active_Object_Info(&r->element[0].focus_active_object, &info), MRI_OK);
    assert_string_equal(info.name, "slow");
    assert_true(r->element[0].value >= 20 * kMs);
    r = agg_data(min);
    assert_int_equal(MRI_Get_Active_Object_Info(&r->element[0].focus_active_object, &info), MRI_OK);
    assert_string_not_equal(info.name, "slow");
    assert_true(r->element[0].value < 4 * kMs);
    r = agg_data(per_thread);
    assert_int_equal(r->nr_Elements, 4); /* main thread (only "main") + 3 workers */
    int slow_seen = 0;
    for (int i = 0; i < r->nr_Elements; ++i) {
        assert_int_equal(MRI_Get_Active_Object_Info(&r->element[i].active_object, &info), MRI_OK);
        if (strcmp(info.name, "slow") == 0) {
            slow_seen = 1;
            assert_true(r->element[i].value >= 5 * 20 * kMs);
            assert_int_equal(r->element[i].count, 5);
        }
    }
    assert_true(slow_seen);
    assert_int_equal((long)agg_total(most), 5);
    /* The publication interface lists the process and the threads. */
    MRI_Active_Object_Table aos;
    assert_int_equal(Get_Available_Active_Objects(&aos), MRI_OK);
    assert_int_equal(aos.nr_Elements, 1 + 4);
    assert_int_equal(aos.active_object[0].type, MRI_PROCESS);
}

static void test_parallel_region_is_no_breakpoint(void **state)
{
    (void)state;
    load("parallel", NULL);
    MRI_Region_Spec team = region("team");
    expect_error(MRI_Start_Stop(&team), "only serial regions");
    assert_int_equal(MRI_No_Wait(), MRI_APPLICATION_STOPPED);
    run_to_end();
}

/* Requests outlive a reload; their regions are found by file name and
 * line in the new run. Another program (the stencil) has neither: the
 * reason names the request's own file, not whatever file has its id in
 * the new program. The same program again: in place, and measuring. */
static void test_requests_across_programs(void **state)
{
    (void)state;
    load("steps", "2", "0", NULL);
    MRI_Request_ID inner = aggregate(MRI_NUMBER_OF_INSTANCES, "inner", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    assert_int_equal((long)agg_total(inner), 4);
    char *stencil[] = {MRI_STENCIL, "-n", "16", "-t", "1", NULL};
    if (MRI_Application_Load(MRI_STENCIL, stencil) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    void *p = NULL;
    expect_error(MRI_Get_Data(inner, &p), "not in place in this run");
    assert_non_null(strstr(MRI_Get_Error_Message(), "mri_testapp.c"));
    assert_null(strstr(MRI_Get_Error_Message(), "stencil.c"));
    MRI_Application_Finish();
    char *again[] = {MRI_TESTAPP, "steps", "3", "0", NULL};
    if (MRI_Application_Load(MRI_TESTAPP, again) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    run_to_end();
    assert_int_equal((long)agg_total(inner), 6);
}

static void test_openmp_stencil_parallel_breakpoint(void **state)
{
    (void)state;
    char *argv[] = {MRI_STENCIL, "-n", "64", "-t", "4", NULL};
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Application_Load(MRI_STENCIL, argv) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    MRI_Region_Spec sweep = region("sweep"), rows = region("update_rows"), step = region("time_step");
    expect_error(MRI_Start_Stop(&sweep), "PARALLEL region");
    expect_error(MRI_Start_Stop(&rows), "only serial regions");
    assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    MRI_Application_Finish();
}

struct stopper {
    int delay_ms;
    int rc;
};

static void *stop_later(void *p)
{
    struct stopper *s = p;
    usleep((useconds_t)s->delay_ms * 1000);
    s->rc = MRI_Stop();
    return NULL;
}

static void test_stop_from_another_thread(void **state)
{
    (void)state;
    load("forever", NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    assert_int_equal(MRI_Start(), MRI_OK);
    struct stopper s = {50, -2};
    pthread_t th;
    pthread_create(&th, NULL, stop_later, &s);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED); /* blocks until the other thread stops it */
    pthread_join(th, NULL);
    assert_int_equal(s.rc, MRI_OK);
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_STOP_REQUEST);
    double a = agg_total(inst);
    assert_true(a >= 1);
    usleep(50 * 1000);
    assert_true(agg_total(inst) == a); /* stopped means stopped */
    /* Continue and terminate from the tool. */
    assert_int_equal(MRI_Start(), MRI_OK);
    usleep(20 * 1000);
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    assert_int_equal(MRI_No_Wait(), MRI_APPLICATION_TERMINATED);
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_TERMINATED_BY_TOOL);
    assert_true(agg_total(inst) > a); /* results stay readable after the end */
}

/* A stop sent right behind a start must not be lost or answered by the
 * previous stop: the tool waits for the start to be acknowledged. */
static void test_stop_right_after_start(void **state)
{
    (void)state;
    load("forever", NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    for (int k = 0; k < 5; ++k) {
        assert_int_equal(MRI_Start(), MRI_OK);
        assert_int_equal(MRI_Stop(), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        MRI_Application_Status_Info st;
        assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
        assert_int_equal(st.reason, MRI_STOP_STOP_REQUEST);
        assert_int_equal(st.stops, (unsigned long long)(k + 1));
    }
    assert_int_equal(agg_data(inst)->active, 1); /* the start's requests were applied */
    MRI_Application_Finish();
}

static void test_every_thread_stops(void **state)
{
    (void)state;
    load("workers", "3", "200", NULL);
    MRI_Region_Spec step = region("step");
    MRI_Request_ID spins = aggregate(MRI_NUMBER_OF_INSTANCES, "spin", MRI_SUM, MRI_PER_THREAD);
    assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    /* Until the workers have run a "spin" between two stops (a 2 ms step
     * each time: on a loaded machine they may not get a core during one). */
    double a = 0;
    for (int k = 0; k < 100 && a == 0; ++k) {
        assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        a = agg_total(spins);
    }
    assert_true(a > 0); /* the workers did run between the stops */
    usleep(100 * 1000);
    double b = agg_total(spins);
    assert_true(a == b); /* ... and are parked now, not only the main thread */
    MRI_Application_Finish();
}

/* The program ended by MRI_Application_Finish() at a breakpoint stop,
 * first frozen with SIGSTOP when `freeze` (it then does not answer, and is
 * killed after the 5 s grace): the tool's termination either way. */
static MRI_Application_Status_Info terminate_at_a_stop(int freeze)
{
    load("forever", NULL);
    MRI_Region_Spec step = region("step");
    MRI_Application_Status_Info st = run_to_breakpoint(&step);
    if (freeze) assert_int_equal(kill(st.pid, SIGSTOP), 0);
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.reason, MRI_STOP_TERMINATED_BY_TOOL);
    return st;
}

static void test_terminate_while_stopped(void **state)
{
    (void)state;
    MRI_Application_Status_Info st = terminate_at_a_stop(0);
    assert_int_equal(st.signal, 0);
}

/* Killed with SIGKILL after the grace: still the tool's termination, with
 * the signal it took. */
static void test_terminate_a_frozen_program(void **state)
{
    (void)state;
    MRI_Application_Status_Info st = terminate_at_a_stop(1);
    assert_int_equal(st.signal, SIGKILL);
    assert_int_equal(st.signal_caught, 0);
}

/* Sends SIGSTOP to `pid` and returns once every thread of it is stopped
 * (task state 'T' in /proc/PID/task/TID/stat): kill() returns before the
 * threads stop, and one of them may still act meanwhile. */
static void freeze(pid_t pid)
{
    assert_int_equal(kill(pid, SIGSTOP), 0);
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    for (int tries = 0;; tries++) {
        assert_true(tries < 5000); /* 5 s */
        DIR *d = opendir(dir);
        assert_non_null(d);
        int running = 0;
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            char path[sizeof dir + sizeof e->d_name + 8], line[512];
            snprintf(path, sizeof path, "%s/%s/stat", dir, e->d_name);
            FILE *f = fopen(path, "r");
            if (!f) continue; /* the thread ended */
            const char *state = fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
            fclose(f);
            if (state && state[1] == ' ' && state[2] != 'T' && state[2] != 't') running = 1;
        }
        closedir(d);
        if (!running) return;
        usleep(1000);
    }
}

/* A release the program never took is not an iteration: at a breakpoint
 * stop the program is frozen (SIGSTOP, as by Ctrl-Z), MRI_Start() sends
 * the release and MRI_Stop(), after 2 s without an acknowledgement,
 * replaces it; the program, thawed, stays stopped. The request lists the
 * one release it measured, and the next release is numbered 2. Before,
 * the withdrawn release counted: iterations {1, 2}, and the next was 3
 * while the program had run twice. */
static void test_release_never_taken_is_not_counted(void **state)
{
    (void)state;
    load("forever", NULL);
    MRI_Region_Spec step = region("step");
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Application_Status_Info st = run_to_breakpoint(&step);
    freeze(st.pid);
    assert_int_equal(MRI_Start(), MRI_OK);
    assert_int_equal(MRI_Stop(), MRI_OK); /* after 2 s: replaces the release */
    assert_int_equal(kill(st.pid, SIGCONT), 0);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    usleep(100 * 1000); /* had the program taken the release, it would run now */
    assert_int_equal(MRI_No_Wait(), MRI_APPLICATION_STOPPED);
    assert_int_equal((long)agg_total(inst), 1);
    const MRI_Aggregate_Request_Results *r = agg_data(inst); /* after agg_total: its call would end this one's data */
    assert_int_equal(r->nr_Measured_Iterations, 1);
    assert_int_equal(r->measured_iteration[0], 1);
    MRI_Application_Status_Info after;
    assert_int_equal(MRI_Get_Application_Status(&after), MRI_OK);
    assert_int_equal(after.stops, st.stops);
    /* The next release is the program's second. */
    run_to_breakpoint(&step);
    assert_int_equal((long)agg_total(inst), 2);
    r = agg_data(inst);
    assert_int_equal(r->nr_Measured_Iterations, 2);
    assert_int_equal(r->measured_iteration[1], 2);
    MRI_Application_Finish();
}

static void test_crash_keeps_results(void **state)
{
    (void)state;
    load("crash", "7", NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.status, MRI_APPLICATION_TERMINATED);
    assert_int_equal(st.reason, MRI_STOP_SIGNALED);
    assert_int_equal(st.signal, SIGABRT);
    assert_int_equal((long)agg_total(inst), 7);
}

/* The data structure table holds 1024: the 1025th registration, made
 * before the first region, fails and says why, as one made after it does
 * (before, it only returned -1). A registration at address NULL is
 * refused (mri_testapp many_data exits 5 otherwise). */
static void test_data_structures_beyond_the_table(void **state)
{
    (void)state;
    load("many_data", "1025", NULL);
    MRI_Data_Structure_Table t;
    assert_int_equal(MRI_Get_Data_Structures(&t), MRI_OK);
    assert_int_equal(t.nr_Elements, 1024);
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    assert_string_equal(st.monitor_message, "data structure \"d1024\" not published: more than 1024 data structures");
    MRI_Finalize();
    load("many_data", "1024", NULL);
    run_to_end();
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.exit_code, 0);
    assert_string_equal(st.monitor_message, "");
}

/* A size no address space holds (a negative size cast to unsigned, whose
 * range ends at the last byte and so does not wrap) is refused at the
 * registration with the reason; before, it was published and its histogram
 * layout wrapped (0 bins). */
static void test_data_structure_of_a_negative_size(void **state)
{
    (void)state;
    load("huge_data", NULL);
    MRI_Data_Structure_Table t;
    assert_int_equal(MRI_Get_Data_Structures(&t), MRI_OK);
    assert_int_equal(t.nr_Elements, 1);
    assert_string_equal(t.data_structure[0].name, "fine");
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    if (!strstr(st.monitor_message, "data structure \"negative\" not registered: its size of ") ||
        !strstr(st.monitor_message, " bytes is above 2^56, the largest address space"))
        fail_msg("monitor_message: %s", st.monitor_message);
}

/* Writes `text` to `path`; fails the test when it cannot. */
static void write_text_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) fail_msg("cannot write %s", path);
}

/* A cache configuration named "@FILE" is read by the tool, bounded: a
 * regular file of at most 64 KiB. Anything else fails at once with one line
 * that names the file and why (before, /dev/zero was read until the
 * allocation failed and the tool aborted, and a FIFO blocked it for ever in
 * open()). MRI_CACHESIM_CONFIG alike, at the load. These need no cache
 * simulator in the program: they are the tool's checks. */
static void test_cache_configuration_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/mri_cache_config_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[64], big[64], nested[64], good[64], arg[80], want[256];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(big, sizeof big, "%s/big", dir);
    snprintf(nested, sizeof nested, "%s/nested", dir);
    snprintf(good, sizeof good, "%s/good", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char *text = malloc(70000);
    assert_non_null(text);
    memset(text, '#', 69999);
    text[69999] = '\0';
    write_text_file(big, text);
    free(text);
    write_text_file(nested, "@/dev/zero\n");
    write_text_file(good, "# two levels\nL1:32K,8,64\nL2:1M,16,64  # private\n");
    assert_int_equal(MRI_Init(), MRI_OK);
    alarm(60); /* a FIFO that blocks ends the test here rather than hanging it */
    snprintf(arg, sizeof arg, "@%s", fifo);
    snprintf(want, sizeof want, "cache configuration \"%s\": config file '%s': not a regular file (a FIFO)", arg, fifo);
    expect_error(MRI_Set_Cache_Configuration(arg), want);
    expect_error(MRI_Set_Cache_Configuration("@/dev/zero"),
                 "cache configuration \"@/dev/zero\": config file '/dev/zero': not a regular file (a character device)");
    snprintf(arg, sizeof arg, "@%s", dir);
    expect_error(MRI_Set_Cache_Configuration(arg), "': not a regular file (a directory)");
    snprintf(arg, sizeof arg, "@%s", big);
    expect_error(MRI_Set_Cache_Configuration(arg), "': 69999 bytes, more than the 65536 a configuration file may have");
    snprintf(arg, sizeof arg, "@%s", nested);
    expect_error(MRI_Set_Cache_Configuration(arg), "': a config file cannot name another");
    expect_error(MRI_Set_Cache_Configuration("@/nonexistent/caches"),
                 "config file '/nonexistent/caches': cannot open: No such file or directory");
    assert_null(strchr(MRI_Get_Error_Message(), '\n'));
    /* The environment, at the load: the program is not started. */
    setenv("MRI_CACHESIM_CONFIG", "@/dev/zero", 1);
    char *argv[] = {MRI_TESTAPP, "steps", "1", "0", NULL};
    expect_error(MRI_Application_Load(MRI_TESTAPP, argv),
                 "MRI_CACHESIM_CONFIG \"@/dev/zero\": config file '/dev/zero': not a regular file (a character device)");
    snprintf(arg, sizeof arg, "@%s", fifo);
    setenv("MRI_CACHESIM_CONFIG", arg, 1);
    expect_error(MRI_Application_Load(MRI_TESTAPP, argv), "': not a regular file (a FIFO)");
    unsetenv("MRI_CACHESIM_CONFIG");
    alarm(0);
    snprintf(arg, sizeof arg, "@%s", good);
    assert_int_equal(MRI_Set_Cache_Configuration(arg), MRI_OK);
    unlink(fifo);
    unlink(big);
    unlink(nested);
    unlink(good);
    rmdir(dir);
}

/* Text from the segment reaches the tool's user escaped, as the region
 * tables show names: the monitor's message with a terminal escape, a bell
 * and a newline in it (written here as a faulty or hostile program would)
 * comes out as \x1b, \x07 and \n; so does every error message (before,
 * the raw bytes went to the terminal). */
static void test_messages_are_printable(void **state)
{
    (void)state;
    load("steps", "1", "0", NULL);
    char *message = mri_test_last_error();
    assert_non_null(message);
    snprintf(message, mri_test_message_bytes(), "bad\x1b]0;title\x07\nline two\x7f\xc2\x9b" "2J \xc3\xa9t\xc3\xa9");
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_string_equal(st.monitor_message, "bad\\x1b]0;title\\x07\\nline two\\x7f\\xc2\\x9b2J \xc3\xa9t\xc3\xa9");
    /* Longer once escaped than the field: cut before an escape that does
     * not fit whole (127 of the 255 "\n" take 254 of its 255 bytes). */
    memset(message, '\n', mri_test_message_bytes() - 1);
    message[mri_test_message_bytes() - 1] = '\0';
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(strlen(st.monitor_message), 254);
    for (size_t i = 0; i < 254; i += 2) assert_memory_equal(st.monitor_message + i, "\\n", 2);
    expect_error(MRI_Set_Cache_Configuration("L1:\x1b[2J"), "cache configuration \"L1:\\x1b[2J\": ");
    MRI_Application_Finish();
}

/* Names that do not fit in the name pool are published empty, and the
 * monitor says how many; a larger MRI_MAX_REGIONS brings a larger pool
 * (256 bytes a region, from 1 MiB up to 16 MiB). Before, the names were
 * emptied without a word. */
static int count_long_names(int *empty)
{
    MRI_Region_Table t;
    assert_int_equal(MRI_Get_Regions(&t), MRI_OK);
    int named = 0;
    *empty = 0;
    for (int i = 0; i < t.nr_Elements; ++i) {
        MRI_Region_Info info;
        assert_int_equal(MRI_Get_Region_Info(&t.region[i], &info), MRI_OK);
        if (t.region[i].id.line_NR < 1000) continue;
        if (strlen(info.name) == 30000) ++named;
        else if (info.name[0] == '\0') ++*empty;
        else fail_msg("region at line %d named \"%.20s...\"", t.region[i].id.line_NR, info.name);
    }
    return named;
}

static void test_names_beyond_the_name_pool(void **state)
{
    (void)state;
    load("long_names", "40", "30000", NULL);
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.exit_code, 0);
    int empty;
    const int named = count_long_names(&empty);
    assert_int_equal(named + empty, 40);
    assert_in_range(named, 30, 34); /* 1 MiB holds 34 of 30001 bytes, less the other names */
    char expected[256];
    snprintf(expected, sizeof expected,
             "%d region or file name(s) published empty: the name pool (1048576 bytes) is full; "
             "those regions are still measured, known by their file and line", empty);
    assert_string_equal(st.monitor_message, expected);
    MRI_Finalize();
    setenv("MRI_MAX_REGIONS", "8192", 1);
    load("long_names", "40", "30000", NULL);
    unsetenv("MRI_MAX_REGIONS");
    run_to_end();
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.exit_code, 0);
    assert_int_equal(count_long_names(&empty), 40);
    assert_int_equal(empty, 0);
    assert_string_equal(st.monitor_message, "");
}

static void test_exit_code_and_reload(void **state)
{
    (void)state;
    load("exit", "4", "3", NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Request_ID main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
    MRI_Request_ID step_time = aggregate(MRI_EXECUTION_TIME, "step", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    /* exit() inside main: main's instance, still open, ends at the exit. */
    MRI_Aggregate_Request_Results *m = agg_data(main_time);
    assert_int_equal(m->nr_Elements, 1);
    assert_int_equal(m->element[0].count, 1);
    assert_true(m->element[0].value >= agg_total(step_time));
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 3);
    assert_int_equal((long)agg_total(inst), 4);
    /* A load that cannot start (no such program, a bad limit) keeps this
     * run's results and status. */
    char *missing[] = {"/nonexistent/mri_testapp", NULL};
    expect_error(MRI_Application_Load(missing[0], missing), "/nonexistent/mri_testapp");
    setenv("MRI_MAX_REGIONS", "0", 1);
    char *again[] = {MRI_TESTAPP, "exit", "1", "0", NULL};
    expect_error(MRI_Application_Load(MRI_TESTAPP, again), "MRI_MAX_REGIONS");
    unsetenv("MRI_MAX_REGIONS");
    assert_int_equal((long)agg_total(inst), 4);
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.status, MRI_APPLICATION_TERMINATED);
    assert_int_equal(st.exit_code, 3);
    /* Rerun with the same requests (section 5). */
    char *argv[] = {MRI_TESTAPP, "exit", "9", "0", NULL};
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    run_to_end();
    assert_int_equal((long)agg_total(inst), 9);
}

/* A program that attached (libmonitor's constructor) and then died before
 * its first annotated region is named as such, not as one that may lack
 * libmonitor; a load afterwards works. */
static void test_death_before_the_first_region(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    char *early[] = {MRI_TESTAPP, "early_abort", NULL};
    expect_error(MRI_Application_Load(MRI_TESTAPP, early),
                 "attached to the tool, then was killed by signal 6 (Aborted) before its first annotated region");
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.status, MRI_APPLICATION_NOT_LOADED);
    char *argv[] = {MRI_TESTAPP, "exit", "2", "0", NULL};
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    run_to_end();
}

/* A program that attached and then called exit() before its first
 * annotated region: exit() publishes its static information and ends
 * monitoring, so the load succeeds with the program terminated. Its exit
 * status is there as soon as the load returns, not 0 until MRI_Wait()
 * reaps it. */
static void test_exit_before_the_first_region(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    char *argv[] = {MRI_TESTAPP, "early_exit", "3", NULL};
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.status, MRI_APPLICATION_TERMINATED);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 3);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.exit_code, 3);
}

/* The program replaces itself with exec() (no fork()) inside "step", inside
 * "main", after 3 steps, in each of the ways of the exec family. Monitoring
 * ends there as at an exit: the open "step" and "main" instances are
 * measured up to the exec. The new image (the test program again, with
 * `exit 2 5`: two steps, exit status 5; for execl `init_exit 5`) is not
 * monitored: its steps add nothing. The tool learns of the exec and waits for the process's end. */
static void test_exec_ends_monitoring_there(void **state)
{
    (void)state;
    const char *ways[] = {"v", "vp", "ve", "vpe", "l", "lp", "le", "fd"};
    for (size_t w = 0; w < sizeof ways / sizeof *ways; ++w) {
        /* execl* pass at most 2 arguments: Monitor_Init(), exit(5). */
        if (ways[w][0] == 'l')
            load("exec", "3", (char *)ways[w], MRI_TESTAPP, "init_exit", "5", NULL);
        else
            load("exec", "3", (char *)ways[w], MRI_TESTAPP, "exit", "2", "5", NULL);
        MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
        MRI_Request_ID main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
        MRI_Request_ID step_time = aggregate(MRI_EXECUTION_TIME, "step", MRI_SUM, MRI_PER_PROCESS);
        run_to_end();
        MRI_Application_Status_Info st;
        assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
        print_message("exec%s: reason %d, exit code %d, exec_replaced %d at %llu ns\n", ways[w], st.reason,
                      st.exit_code, st.exec_replaced, st.exec_timestamp);
        assert_int_equal(st.status, MRI_APPLICATION_TERMINATED);
        assert_int_equal(st.exec_replaced, 1);
        /* The process has ended: the reason says how (the new image's exit). */
        assert_int_equal(st.reason, MRI_STOP_EXITED);
        assert_int_equal(st.exit_code, 5);
        assert_true(st.exec_timestamp > 0);
        assert_int_equal(st.unmatched_exits, 0);
        assert_string_equal(st.monitor_message, "");
        assert_int_equal((long)agg_total(inst), 4); /* 3 + the one open at the exec; none of the new image's */
        MRI_Aggregate_Request_Results *m = agg_data(main_time);
        assert_int_equal(m->nr_Elements, 1);
        assert_int_equal(m->element[0].count, 1);
        assert_true(m->element[0].value >= agg_total(step_time));
        assert_true(agg_total(step_time) > 0);
        assert_int_equal(MRI_Finalize(), MRI_OK);
    }
}

/* An exec() that fails because the file is missing, not executable or no
 * file (ENOENT, EACCES) ends nothing: the program goes on, monitored, and
 * its steps after the failure count. */
static void test_failed_exec_goes_on_monitored(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"v", "/nonexistent/mri-no-such-program"}, {"vp", "mri-no-such-program"}, {"v", "/dev/null"},
        {"l", "/"}, {"vpe", "/nonexistent/dir/prog"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        load("exec", "3", (char *)cases[c][0], (char *)cases[c][1], NULL);
        MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
        MRI_Request_ID main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
        run_to_end();
        MRI_Application_Status_Info st;
        assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
        assert_int_equal(st.reason, MRI_STOP_EXITED);
        assert_int_equal(st.exit_code, 4); /* the program's own: it saw the failure */
        assert_int_equal(st.exec_replaced, 0);
        assert_string_equal(st.monitor_message, "");
        assert_int_equal((long)agg_total(inst), 7); /* 3, the one around the exec, 3 more */
        assert_int_equal(agg_data(main_time)->element[0].count, 1);
        assert_int_equal(MRI_Finalize(), MRI_OK);
    }
}

/* A vfork()ed child shares the program's memory; its exec must not end the
 * program's monitoring (it is not the monitored process). */
static void test_vfork_child_exec_is_not_the_program(void **state)
{
    (void)state;
    load("vfork_exec", "3", NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    assert_int_equal(st.exec_replaced, 0);
    assert_int_equal((long)agg_total(inst), 7);
}

/* A failure the monitor cannot foresee: a regular, executable file that is
 * no program (execv: ENOEXEC). Monitoring had ended for the exec; the
 * program goes on unmonitored and the tool is told so, not that the program
 * was replaced. */
static void test_exec_failing_after_the_end(void **state)
{
    (void)state;
    char path[] = "/tmp/mri_not_a_programXXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "just some text\n", 15), 15); /* no "#!": the kernel refuses it */
    assert_int_equal(fchmod(fd, 0700), 0);
    close(fd);
    load("exec", "3", "v", path, NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Request_ID main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    unlink(path);
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 4);
    assert_int_equal(st.exec_replaced, 2);
    assert_non_null(strstr(st.monitor_message, "exec() failed (Exec format error) after monitoring had ended"));
    assert_int_equal((long)agg_total(inst), 4); /* up to the exec; the 3 after it are not monitored */
    assert_int_equal(agg_data(main_time)->element[0].count, 1);
}

static void test_publication(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    MRI_HW_Info hw;
    assert_int_equal(MRI_Get_System_Information(&hw), MRI_OK);
    assert_true(hw.nr_CPUs >= 1);
    assert_int_equal(hw.time_entity, MRI_NANOSECONDS);
    MRI_Runtime_Information_Table t;
    assert_int_equal(Get_Available_Runtime_Information(&t), MRI_OK);
    int seen_time = 0, seen_l1 = 0, seen_event = 0;
    for (int i = 0; i < t.nr_Elements; ++i) {
        if (t.info[i].ri == MRI_REGION_EVENT) {
            seen_event = 1;
            assert_true(t.info[i].available);
            assert_int_equal(t.info[i].request_kinds, 1 << MRI_TRACE_REQUEST); /* traces only */
        }
        if (t.info[i].ri == MRI_EXECUTION_TIME) {
            seen_time = 1;
            assert_true(t.info[i].available);
            assert_false(t.info[i].needs_counter);
        }
        if (t.info[i].ri == MRI_LC1_DATA_READ_MISS) {
            seen_l1 = 1;
            assert_false(t.info[i].available);
            assert_true(strlen(t.info[i].reason) > 10);
        }
    }
    assert_true(seen_time && seen_l1 && seen_event);
    MRI_Aggregation_Table a;
    assert_int_equal(Get_Available_Aggregations(MRI_REGION_EVENT, &a), MRI_OK);
    assert_int_equal(a.nr_Elements, 0);
    assert_int_equal(Get_Available_Aggregations(MRI_EXECUTION_TIME, &a), MRI_OK);
    assert_int_equal(a.nr_Elements, 10);
    expect_error(Get_Available_Active_Objects(&(MRI_Active_Object_Table){0}), "no application");
    MRI_Runtime_Information_Spec ri;
    assert_int_equal(MRI_Runtime_Information_By_Name("MRI_EXECUTION_TIME", &ri), MRI_OK);
    assert_int_equal(ri, MRI_EXECUTION_TIME);
    expect_error(MRI_Runtime_Information_By_Name("NO_SUCH_EVENT", &ri), "unknown");
    assert_string_equal(MRI_Region_Type_Name(MRI_REGION_PARALLEL), "PARALLEL");
}

/* The process is named after its program, also once it has ended (its
 * /proc entry is gone then, and the name was ""). */
static void test_process_keeps_its_name(void **state)
{
    (void)state;
    load("steps", "2", "0", NULL);
    const char *program = strrchr(MRI_TESTAPP, '/') ? strrchr(MRI_TESTAPP, '/') + 1 : MRI_TESTAPP;
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    MRI_Active_Object_Spec proc = {MRI_PROCESS, st.pid};
    MRI_Active_Object_Info info;
    assert_int_equal(MRI_Get_Active_Object_Info(&proc, &info), MRI_OK);
    assert_true(info.alive);
    assert_string_equal(info.name, program);
    /* A node is refused for what it is, as requests refuse it. */
    MRI_Active_Object_Spec node = {MRI_NODE, 0};
    expect_error(MRI_Get_Active_Object_Info(&node, &info), "node-level monitoring is not available");
    run_to_end();
    assert_int_equal(MRI_Get_Active_Object_Info(&proc, &info), MRI_OK);
    assert_false(info.alive);
    assert_int_equal(info.os_id, st.pid);
    assert_string_equal(info.name, program);
}

/* At the load stop the program is parked at its first monitored event:
 * its thread is an active object already, every time (its row used to be
 * published after the stop, so a tool that asked at once sometimes found
 * no thread). */
static void test_loaded_thread_is_known_at_once(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    char *argv[] = {MRI_TESTAPP, "steps", "1", "0", NULL};
    for (int i = 0; i < 30; ++i) {
        if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
        MRI_Active_Object_Table table;
        assert_int_equal(Get_Available_Active_Objects(&table), MRI_OK);
        assert_int_equal(table.nr_Elements, 2); /* the process and thread 0 */
        MRI_Active_Object_Spec thread0 = {MRI_THREAD, 0};
        MRI_Active_Object_Info info;
        if (MRI_Get_Active_Object_Info(&thread0, &info) != MRI_OK) fail_msg("load %d: %s", i, MRI_Get_Error_Message());
        assert_true(info.alive);
        assert_int_equal(info.os_id, table.active_object[0].id); /* the main thread */
        assert_int_equal(MRI_Application_Finish(), MRI_OK);
    }
}

/* One attribute of cpu0's cache indexN as Linux reports it; 0 when absent. */
static int sysfs_cache_attr(int index, const char *name, char *buf, int size)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, name);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    const int ok = fgets(buf, size, f) != NULL;
    fclose(f);
    if (ok) buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

/* "48K", "2048K", "480M" in bytes. */
static unsigned long long sysfs_size(const char *text)
{
    char *end;
    const unsigned long long v = strtoull(text, &end, 10);
    switch (*end) {
        case 'K': return v << 10;
        case 'M': return v << 20;
        case 'G': return v << 30;
        default: return v;
    }
}

/* The machine's topology against what the kernel reports. */
static void test_system_topology(void **state)
{
    (void)state;
    MRI_HW_Info hw;
    expect_error(MRI_Get_System_Information(&hw), "MRI_Init");
    assert_int_equal(MRI_Init(), MRI_OK);
    expect_error(MRI_Get_System_Information(NULL), "NULL");
    assert_int_equal(MRI_Get_System_Information(&hw), MRI_OK);
    assert_int_equal(hw.nr_CPUs, (int)sysconf(_SC_NPROCESSORS_ONLN));
    assert_in_range(hw.nr_Cores, 1, hw.nr_CPUs);
    assert_true(hw.nr_Sockets >= 1);
    assert_true(hw.nr_NUMA_Nodes >= 1);
#ifdef MRI_HAVE_HWLOC
    if (strncmp(hw.topology_source, "hwloc ", 6) != 0) fail_msg("topology from \"%s\", not hwloc", hw.topology_source);
#else
    assert_string_equal(hw.topology_source, "sysconf");
#endif
    assert_in_range(hw.nr_Cache_Levels, 1, MRI_MAX_CACHE_LEVELS * 2);
    for (int i = 0; i < hw.nr_Cache_Levels; ++i) {
        const MRI_Cache_Info *c = &hw.cache[i];
        assert_in_range(c->level, 1, MRI_MAX_CACHE_LEVELS);
        assert_true(c->is_data || c->is_instruction);
        assert_true(c->associativity >= -1);
        assert_in_range(c->shared_by_cpus, 0, hw.nr_CPUs);
#ifdef MRI_HAVE_HWLOC
        assert_true(c->shared_by_cpus >= 1);
#endif
        if (i > 0) { /* by level; data and unified before instruction */
            const MRI_Cache_Info *p = &hw.cache[i - 1];
            assert_true(p->level <= c->level);
            if (p->level == c->level) assert_true(p->is_data || !c->is_data);
        }
    }

    /* cpu0's level 1 data cache in sysfs. */
    char level[16], type[32], size[32], line[16], ways[16];
    unsigned long long l1d_size = 0;
    int l1d_line = 0, l1d_ways = 0;
    for (int i = 0; sysfs_cache_attr(i, "level", level, sizeof level); ++i) {
        if (strcmp(level, "1") != 0 || !sysfs_cache_attr(i, "type", type, sizeof type) || strcmp(type, "Data") != 0)
            continue;
        assert_true(sysfs_cache_attr(i, "size", size, sizeof size));
        assert_true(sysfs_cache_attr(i, "coherency_line_size", line, sizeof line));
        assert_true(sysfs_cache_attr(i, "ways_of_associativity", ways, sizeof ways));
        l1d_size = sysfs_size(size);
        l1d_line = atoi(line);
        l1d_ways = atoi(ways);
        break;
    }
    if (l1d_size == 0) {
        print_message("no level 1 data cache in /sys/devices/system/cpu/cpu0/cache: not compared\n");
        return;
    }
    int found = 0;
    for (int i = 0; i < hw.nr_Cache_Levels && !found; ++i) {
        const MRI_Cache_Info *c = &hw.cache[i];
        if (c->level != 1 || !c->is_data || c->is_instruction || c->size_bytes != l1d_size) continue;
        found = 1;
        assert_int_equal(c->line_size_bytes, l1d_line);
        if (l1d_ways > 0)
            assert_int_equal(c->associativity, l1d_ways);
        else /* the kernel's 0: fully associative or unknown */
            assert_true(c->associativity <= 0);
    }
    if (!found) fail_msg("no level 1 data cache of %llu bytes (cpu0's in sysfs)", l1d_size);
}

static void test_static_information(void **state)
{
    (void)state;
    load("steps", "1", "0", NULL);
    MRI_Region_Table t;
    assert_int_equal(MRI_Get_Regions(&t), MRI_OK);
    assert_int_equal(t.nr_Elements, 11); /* every region of mri_testapp, known before any ran */
    int found = 0;
    for (int i = 0; i < t.nr_Elements; ++i) {
        MRI_Region_Info info;
        assert_int_equal(MRI_Get_Region_Info(&t.region[i], &info), MRI_OK);
        assert_non_null(strstr(info.file, "mri_testapp.c"));
        if (strcmp(info.name, "team") == 0) {
            found = 1;
            assert_int_equal(t.region[i].type, MRI_REGION_PARALLEL);
        }
        assert_true(t.region[i].id.line_NR > 0);
    }
    assert_true(found);
    MRI_Region_Spec r;
    expect_error(MRI_Find_Region("nope", &r), "no region named");
    run_to_end();
}

static void test_thread_limit_is_reported(void **state)
{
    (void)state;
    setenv("MRI_MAX_THREADS", "2", 1);
    load("imbalance", "3", "2", NULL);
    unsetenv("MRI_MAX_THREADS");
    MRI_Request_ID per_thread = aggregate(MRI_NUMBER_OF_INSTANCES, "work", MRI_SUM, MRI_PER_THREAD);
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.threads_dropped, 2); /* main + 3 workers, room for 2 */
    /* Said in words too: the count alone went unnoticed. */
    if (!strstr(st.monitor_message, "more than 2 threads (MRI_MAX_THREADS)"))
        fail_msg("monitor_message \"%s\" does not name the thread limit", st.monitor_message);
    MRI_Aggregate_Request_Results *r = agg_data(per_thread);
    assert_int_equal(r->nr_Elements, 2);
    assert_int_equal((long)agg_total(per_thread), 2); /* the one monitored worker's 2 instances */
}

static const MRI_Profile_Element *profile_of(MRI_Histogram_Profile_Results *res, const char *name)
{
    MRI_Region_Spec r = region(name);
    for (int i = 0; i < res->nr_Elements; ++i)
        if (memcmp(&res->element[i].region, &r, sizeof r) == 0) return &res->element[i];
    fail_msg("no profile element for %s", name);
    return NULL;
}

static MRI_Histogram_Profile_Results *profile_run(char *const argv[])
{
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Application_Load(argv[0], argv) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
    MRI_Request_ID prof = MRI_Profile_Request(&ri, NULL, NULL, NULL);
    assert_true(prof > 0);
    run_to_end();
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.exit_code, 0);
    void *p;
    assert_int_equal(MRI_Get_Data(prof, &p), MRI_OK);
    return p;
}

static void test_cpp_recursion_counts_inclusive_once(void **state)
{
    (void)state;
    char *argv[] = {MRI_TESTAPP_CPP, "recurse", "50", NULL};
    MRI_Histogram_Profile_Results *res = profile_run(argv);
    const MRI_Profile_Element *rec = profile_of(res, "recurse");
    assert_int_equal(rec->instances, 50);
    /* One 2 ms sleep inside 50 nested instances: inclusive is ~2 ms, not 100 ms. */
    assert_true(rec->inclusive >= 2 * kMs);
    assert_true(rec->inclusive < 2 * kMs + 40 * kMs);
    /* Exclusive sums the instances' own parts: the same total, nothing double-counted. */
    assert_true(rec->exclusive <= rec->inclusive + 0.01 * kMs);
    assert_true(rec->exclusive >= 2 * kMs);
    /* The inline region in a header used by two translation units is one region. */
    MRI_Region_Table t;
    assert_int_equal(MRI_Get_Regions(&t), MRI_OK);
    int inline_regions = 0;
    for (int i = 0; i < t.nr_Elements; ++i) {
        MRI_Region_Info info;
        assert_int_equal(MRI_Get_Region_Info(&t.region[i], &info), MRI_OK);
        if (strcmp(info.name, "inline_helper") == 0) ++inline_regions;
    }
    assert_int_equal(inline_regions, 1);
    assert_int_equal(profile_of(res, "inline_helper")->instances, 3);
}

static void test_cpp_guard_closes_on_exception(void **state)
{
    (void)state;
    char *argv[] = {MRI_TESTAPP_CPP, "throw", "4", NULL};
    MRI_Histogram_Profile_Results *res = profile_run(argv);
    const MRI_Profile_Element *thrower = profile_of(res, "thrower"); /* MONITOR_FUNCTION() uses __func__ */
    assert_int_equal(thrower->instances, 4);
    assert_true(thrower->inclusive >= 4 * kMs);
    assert_int_equal(thrower->region.type, MRI_REGION_ROUTINE);
    const MRI_Profile_Element *mainr = profile_of(res, "main");
    assert_int_equal(mainr->instances, 1);
    /* main's exclusive time excludes the thrower instances: every exit was seen. */
    assert_true(mainr->exclusive < mainr->inclusive - 4 * kMs + 0.5 * kMs);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.unmatched_exits, 0);
}

/* Deeper than the monitor's 256 frames: the instances beyond are not
 * measured, and their exits do not pop the frames of the ones that are (the
 * outermost instance keeps the 4 ms it spends after the recursion). */
static void test_recursion_deeper_than_the_stack(void **state)
{
    (void)state;
    char *argv[] = {MRI_TESTAPP_CPP, "deep", "300", NULL};
    MRI_Histogram_Profile_Results *res = profile_run(argv);
    const MRI_Profile_Element *rec = profile_of(res, "recurse");
    assert_int_equal(rec->instances, 255); /* 256 frames, main's the first */
    assert_true(rec->inclusive >= 6 * kMs);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.unmatched_exits, 0);
}

/* A module unloaded with dlclose() and loaded again, between breakpoints:
 * the monitor no longer touches the unloaded descriptors (it crashed at
 * the next release), and the module's region, loaded again, is measured
 * again under its id. */
static void test_module_unloaded_and_loaded_again(void **state)
{
    (void)state;
    load("dlclose", MRI_PLUGIN, "4", NULL);
    MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
    MRI_Request_ID prof = MRI_Profile_Request(&ri, NULL, NULL, NULL);
    assert_true(prof > 0);
    MRI_Region_Spec step = region("step");
    int stops = 0;
    while (MRI_Start_Stop(&step) == MRI_OK && MRI_Wait() == MRI_APPLICATION_STOPPED) ++stops;
    assert_int_equal(stops, 4);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    void *p;
    assert_int_equal(MRI_Get_Data(prof, &p), MRI_OK);
    assert_int_equal(profile_of(p, "plugin_work")->instances, 8);
}

/* A module loaded and unloaded before the first region, while its regions
 * wait to be published with the rest: they are published from copies that
 * outlive the module (its name and file read back), and the program runs
 * on. (They were published at the unload before, which, coming from a
 * program's exit, let the tool release it with its requests in place.) */
static void test_module_unloaded_before_publication(void **state)
{
    (void)state;
    load("early_dlclose", MRI_PLUGIN, "3", NULL);
    MRI_Region_Spec plugin = region("plugin_work");
    MRI_Region_Info info;
    assert_int_equal(MRI_Get_Region_Info(&plugin, &info), MRI_OK);
    assert_string_equal(info.name, "plugin_work");
    assert_non_null(strstr(info.file, "mri_plugin.c"));
    MRI_Request_ID steps = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    assert_int_equal((long)agg_total(steps), 3);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.exit_code, 0);
    assert_int_equal(st.regions_dropped, 0);
}

/* The main thread ends with pthread_exit() while another thread runs on:
 * the program ends when that thread has ended, with status 0, as it does
 * without the monitor (whose control thread kept it alive for ever). */
static void test_main_thread_pthread_exit(void **state)
{
    (void)state;
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer's own background thread keeps such a program alive,
     * with the monitor or without it. */
    skip();
#endif
    load("pthread_exit", "10", NULL);
    MRI_Request_ID steps = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Request_ID main_count = aggregate(MRI_NUMBER_OF_INSTANCES, "main", MRI_SUM, MRI_PER_PROCESS);
    assert_int_equal(MRI_Start(), MRI_OK);
    const int st = MRI_Wait_Timeout(60000);
    if (st != MRI_APPLICATION_TERMINATED) fail_msg("the program did not end (status %d)", st);
    assert_int_equal((long)agg_total(steps), 10);
    assert_int_equal((long)agg_total(main_count), 1);
    MRI_Application_Status_Info info;
    MRI_Get_Application_Status(&info);
    assert_int_equal(info.reason, MRI_STOP_EXITED);
    assert_int_equal(info.exit_code, 0);
}

/* A program ended by SIGTERM (`kill`, `timeout`), SIGINT (Ctrl-C) or SIGHUP,
 * whose action it left at the default: the monitor catches the signal,
 * ends monitoring as an exit does (main's instance and the step open then
 * are measured up to it) and the process dies of the signal, as it would
 * have. SIGKILL ends it at once: the instances open then count nothing. */
/* 200 s of 2 ms steps, with main's instances and time requested (and,
 * given `steps`, the instances of "step"), stopped at the end of its first
 * step. */
static void steps_stopped_after_the_first(MRI_Request_ID *main_count, MRI_Request_ID *main_time,
                                          MRI_Request_ID *steps)
{
    load("steps", "100000", "2", NULL);
    *main_count = aggregate(MRI_NUMBER_OF_INSTANCES, "main", MRI_SUM, MRI_PER_PROCESS);
    *main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
    if (steps) *steps = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Region_Spec step = region("step");
    assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
}

/* main, ended while stopped after its first step: that 2 ms step, not the
 * 300 ms stop that followed. */
static void assert_main_time_without_the_stop(MRI_Request_ID main_time)
{
    const double t = agg_total(main_time);
    if (!(t >= 2 * kMs && t < 150 * kMs)) fail_msg("main took %.1f ms, expected 2 to 150", t / kMs);
}

static void killed_by(int sig, int caught)
{
    MRI_Request_ID main_count, main_time, steps;
    steps_stopped_after_the_first(&main_count, &main_time, &steps);
    const double done = agg_total(steps);
    assert_int_equal(MRI_Start(), MRI_OK);
    usleep(50 * 1000);
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(kill(info.pid, sig), 0);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.reason, MRI_STOP_SIGNALED);
    assert_int_equal(info.signal, sig);
    assert_int_equal(info.signal_caught, caught);
    assert_int_equal((long)agg_total(main_count), caught);
    /* main encloses every step, each a 2 ms sleep: the steps that ended
     * (all but the one open at the signal) are inside its time, also
     * those after the release (steps > done below). */
    if (caught) assert_true(agg_total(main_time) >= (agg_total(steps) - 1) * 1.95 * kMs);
    else assert_true(agg_total(main_time) == 0);
    assert_true(agg_total(steps) > done);
}

static void test_terminating_signal_is_caught(void **state)
{
    (void)state;
    killed_by(SIGTERM, 1);
}

static void test_interrupt_is_caught(void **state)
{
    (void)state;
    killed_by(SIGINT, 1);
}

static void test_sigkill_ends_at_once(void **state)
{
    (void)state;
    killed_by(SIGKILL, 0);
}

/* The signal comes while the program is stopped for the tool (300 ms at a
 * breakpoint): main's instance ends where its thread parked, without the
 * stop, as every measured time leaves stops out. */
static void test_signal_while_stopped_leaves_the_stop_out(void **state)
{
    (void)state;
    MRI_Request_ID main_count, main_time;
    steps_stopped_after_the_first(&main_count, &main_time, NULL);
    usleep(300 * 1000);
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(kill(info.pid, SIGTERM), 0);
    /* Stopped, MRI_Wait() returns at once: poll for the end. */
    for (int i = 0; i < 1000 && MRI_No_Wait() != MRI_APPLICATION_TERMINATED; ++i) usleep(10 * 1000);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED); /* and reaped */
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.reason, MRI_STOP_SIGNALED);
    assert_int_equal(info.signal, SIGTERM);
    assert_int_equal(info.signal_caught, 1);
    assert_int_equal((long)agg_total(main_count), 1);
    assert_main_time_without_the_stop(main_time); /* it was >= 300 ms before */
}

/* MRI_Application_Finish() ends the program as at an exit, then at once:
 * main's instance, open, is measured up to the end; while the program is
 * stopped for the tool (300 ms at a breakpoint), up to where it parked. */
static void finished_by_the_tool(int stopped)
{
    MRI_Request_ID main_count, main_time;
    steps_stopped_after_the_first(&main_count, &main_time, NULL);
    if (!stopped) assert_int_equal(MRI_Start(), MRI_OK);
    usleep(300 * 1000);
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.status, MRI_APPLICATION_TERMINATED);
    assert_int_equal(info.reason, MRI_STOP_TERMINATED_BY_TOOL);
    assert_int_equal((long)agg_total(main_count), 1);
    if (stopped) {
        assert_main_time_without_the_stop(main_time);
    } else {
        /* 2 ms before the stop and the 300 ms after the release, less the
         * time main's thread took to be scheduled again after the release
         * (296.7 ms beside other tests on 2 CPUs): well above the 150 ms
         * the stopped case stays under. */
        const double t = agg_total(main_time);
        if (!(t >= 250 * kMs)) fail_msg("main took %.1f ms, expected about 300 (250 or more)", t / kMs);
    }
}

static void test_finish_measures_the_open_instances(void **state)
{
    (void)state;
    finished_by_the_tool(0);
}

static void test_finish_while_stopped_leaves_the_stop_out(void **state)
{
    (void)state;
    finished_by_the_tool(1);
}

/* An exit without an enter is ignored, also when it is the breakpoint's:
 * three stray exits of "step", then one step, stop once. */
static void test_stray_exit_is_no_breakpoint(void **state)
{
    (void)state;
    load("stray_exits", "3", NULL);
    MRI_Request_ID count = aggregate(MRI_EXECUTION_TIME, "step", MRI_COUNT, MRI_PER_PROCESS);
    MRI_Region_Spec step = region("step");
    int stops = 0;
    while (MRI_Start_Stop(&step) == MRI_OK && MRI_Wait() == MRI_APPLICATION_STOPPED) ++stops;
    assert_int_equal(stops, 1);
    assert_int_equal((long)agg_total(count), 1);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.unmatched_exits, 3);
}

/* The tool stops inside a "step" (at the end of its first "inner"), adds a
 * request on "step" and asks for the end of "step": the program stops at
 * the end of that same step, although its enter came before the request
 * (the exit is unmeasured and counted as unmatched), not at the end of the
 * next one. The step after is measured as usual. */
static void test_breakpoint_in_the_instance_stopped_inside(void **state)
{
    (void)state;
    load("steps", "4", "1", NULL);
    MRI_Region_Spec step = region("step"), inner = region("inner");
    MRI_Request_ID inners = aggregate(MRI_NUMBER_OF_INSTANCES, "inner", MRI_SUM, MRI_PER_PROCESS);
    run_to_breakpoint(&inner);
    assert_int_equal((long)agg_total(inners), 1);
    MRI_Request_ID steps = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Application_Status_Info st;
    for (int k = 1; k <= 2; ++k) {
        st = run_to_breakpoint(&step);
        assert_int_equal((long)agg_total(inners), 2 * k); /* the end of step k */
        assert_int_equal((long)agg_total(steps), k - 1);  /* step 1 was entered unmeasured */
        assert_int_equal(st.unmatched_exits, 1);
    }
    run_to_end();
    assert_int_equal((long)agg_total(steps), 3);
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.stops, 3);
}

static void test_module_loaded_later_is_published(void **state)
{
    (void)state;
    char *argv[] = {MRI_TESTAPP, "dlopen", MRI_PLUGIN, "6", NULL};
    MRI_Histogram_Profile_Results *res = profile_run(argv);
    /* Unknown at start-up, published when the module arrived, and included
     * in the profile over every region. */
    const MRI_Profile_Element *plugin = profile_of(res, "plugin_work");
    assert_int_equal(plugin->instances, 6);
    MRI_Region_Info info;
    assert_int_equal(MRI_Get_Region_Info(&plugin->region, &info), MRI_OK);
    assert_non_null(strstr(info.file, "mri_plugin.c"));
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.regions_dropped, 0);
}

static void test_not_instrumented(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    char *argv[] = {"true", NULL};
    expect_error(MRI_Application_Load("true", argv), "before attaching");
}

/* A wrapper (here a shell) passes the environment on to every program it
 * starts: only the first to attach is monitored; the other runs
 * unmonitored instead of adding its numbers to the first's. */
static void test_second_program_is_not_monitored(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    char cmd[2 * sizeof MRI_TESTAPP + 64];
    snprintf(cmd, sizeof cmd, "%s steps 3 20 & %s steps 3 20; wait", MRI_TESTAPP, MRI_TESTAPP);
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    if (MRI_Application_Load("/bin/sh", argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    assert_int_equal((long)agg_total(inst), 3);
}

static void test_segment_is_private_and_marked_for_removal(void **state)
{
    (void)state;
    load("steps", "1", "0", NULL);
    struct shm_info info;
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)&info);
    int mine = 0;
    for (int i = 0; i <= max; ++i) {
        struct shmid_ds ds;
        if (shmctl(i, SHM_STAT, &ds) < 0) continue;
        if (ds.shm_cpid != getpid()) continue;
        ++mine;
        assert_int_equal(ds.shm_perm.mode & 0777, 0600);
        assert_true(ds.shm_perm.mode & SHM_DEST); /* gone as soon as both sides detach */
        assert_int_equal(ds.shm_nattch, 2);
    }
    assert_int_equal(mine, 1);
    run_to_end();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_misuse_before_init, teardown),
        cmocka_unit_test_teardown(test_misuse_with_application, teardown),
        cmocka_unit_test_teardown(test_thread_lists, teardown),
        cmocka_unit_test_teardown(test_times_and_instances, teardown),
        cmocka_unit_test_teardown(test_profile, teardown),
        cmocka_unit_test_teardown(test_breakpoints_iterative, teardown),
        cmocka_unit_test_teardown(test_stopped_time_not_charged, teardown),
        cmocka_unit_test_teardown(test_stop_at_an_exit_is_charged_to_nobody, teardown),
        cmocka_unit_test_teardown(test_min_max_focus, teardown),
        cmocka_unit_test_teardown(test_parallel_region_is_no_breakpoint, teardown),
        cmocka_unit_test_teardown(test_openmp_stencil_parallel_breakpoint, teardown),
        cmocka_unit_test_teardown(test_requests_across_programs, teardown),
        cmocka_unit_test_teardown(test_stop_from_another_thread, teardown),
        cmocka_unit_test_teardown(test_stop_right_after_start, teardown),
        cmocka_unit_test_teardown(test_every_thread_stops, teardown),
        cmocka_unit_test_teardown(test_terminate_while_stopped, teardown),
        cmocka_unit_test_teardown(test_terminate_a_frozen_program, teardown),
        cmocka_unit_test_teardown(test_release_never_taken_is_not_counted, teardown),
        cmocka_unit_test_teardown(test_crash_keeps_results, teardown),
        cmocka_unit_test_teardown(test_data_structures_beyond_the_table, teardown),
        cmocka_unit_test_teardown(test_data_structure_of_a_negative_size, teardown),
        cmocka_unit_test_teardown(test_cache_configuration_files, teardown),
        cmocka_unit_test_teardown(test_messages_are_printable, teardown),
        cmocka_unit_test_teardown(test_names_beyond_the_name_pool, teardown),
        cmocka_unit_test_teardown(test_exit_code_and_reload, teardown),
        cmocka_unit_test_teardown(test_death_before_the_first_region, teardown),
        cmocka_unit_test_teardown(test_exit_before_the_first_region, teardown),
        cmocka_unit_test_teardown(test_exec_ends_monitoring_there, teardown),
        cmocka_unit_test_teardown(test_failed_exec_goes_on_monitored, teardown),
        cmocka_unit_test_teardown(test_vfork_child_exec_is_not_the_program, teardown),
        cmocka_unit_test_teardown(test_exec_failing_after_the_end, teardown),
        cmocka_unit_test_teardown(test_publication, teardown),
        cmocka_unit_test_teardown(test_process_keeps_its_name, teardown),
        cmocka_unit_test_teardown(test_loaded_thread_is_known_at_once, teardown),
        cmocka_unit_test_teardown(test_system_topology, teardown),
        cmocka_unit_test_teardown(test_static_information, teardown),
        cmocka_unit_test_teardown(test_thread_limit_is_reported, teardown),
        cmocka_unit_test_teardown(test_cpp_recursion_counts_inclusive_once, teardown),
        cmocka_unit_test_teardown(test_cpp_guard_closes_on_exception, teardown),
        cmocka_unit_test_teardown(test_module_loaded_later_is_published, teardown),
        cmocka_unit_test_teardown(test_not_instrumented, teardown),
        cmocka_unit_test_teardown(test_segment_is_private_and_marked_for_removal, teardown),
        cmocka_unit_test_teardown(test_second_program_is_not_monitored, teardown),
        cmocka_unit_test_teardown(test_recursion_deeper_than_the_stack, teardown),
        cmocka_unit_test_teardown(test_module_unloaded_and_loaded_again, teardown),
        cmocka_unit_test_teardown(test_module_unloaded_before_publication, teardown),
        cmocka_unit_test_teardown(test_main_thread_pthread_exit, teardown),
        cmocka_unit_test_teardown(test_terminating_signal_is_caught, teardown),
        cmocka_unit_test_teardown(test_interrupt_is_caught, teardown),
        cmocka_unit_test_teardown(test_sigkill_ends_at_once, teardown),
        cmocka_unit_test_teardown(test_signal_while_stopped_leaves_the_stop_out, teardown),
        cmocka_unit_test_teardown(test_finish_measures_the_open_instances, teardown),
        cmocka_unit_test_teardown(test_finish_while_stopped_leaves_the_stop_out, teardown),
        cmocka_unit_test_teardown(test_stray_exit_is_no_breakpoint, teardown),
        cmocka_unit_test_teardown(test_breakpoint_in_the_instance_stopped_inside, teardown),
    };
    mri_test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}

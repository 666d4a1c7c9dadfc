/*
 * test_capi, requests and results: misuse and errors, thread lists, times,
 * instances, MIN/MAX focus and profiles (also of C++ recursion and
 * exceptions), requests kept across a reload.
 */
#define _GNU_SOURCE
#include "capi_common.h" /* first: cmocka and the headers it needs before it */

#include <unistd.h>

void test_misuse_before_init(void **state)
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

void test_misuse_with_application(void **state)
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
void test_thread_lists(void **state)
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

void test_times_and_instances(void **state)
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

void test_profile(void **state)
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

void test_min_max_focus(void **state)
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

/* Requests outlive a reload; their regions are found by file name and
 * line in the new run. Another program (the stencil) has neither: the
 * reason names the request's own file, not whatever file has its id in
 * the new program. The same program again: in place, and measuring. */
void test_requests_across_programs(void **state)
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

void test_cpp_recursion_counts_inclusive_once(void **state)
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

void test_cpp_guard_closes_on_exception(void **state)
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
void test_recursion_deeper_than_the_stack(void **state)
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

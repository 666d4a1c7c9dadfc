/*
 * Two-process tests of simulated cache events through mri.h: the tool (this
 * program) loads mri_cacheapp, which is built with the cache-simulator
 * instrumentation, and checks data-structure-restricted aggregates and
 * histograms against the counts its access pattern must produce (see
 * mri_cacheapp.c), per thread, plus the errors for bad configurations,
 * unknown data structures and bad bin counts.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mri.h"
#include "mri_test_helpers.h"
#include "segment_peer.h"

/* The instrumented program: mri_cacheapp as built with the default
 * instrumentation, or the one MRI_TEST_CACHEAPP names (the same program
 * built with the other instrumentation: every count below holds for both). */
static const char *cacheapp(void)
{
    const char *other = getenv("MRI_TEST_CACHEAPP");
    return other && *other ? other : MRI_CACHEAPP;
}

/* How the program cacheapp() names is instrumented: "plugin" or "sancov"
 * (MRI_TEST_CACHEAPP_INSTRUMENTATION goes with MRI_TEST_CACHEAPP). */
static const char *cacheapp_instrumentation(void)
{
    const char *other = getenv("MRI_TEST_CACHEAPP"), *how = getenv("MRI_TEST_CACHEAPP_INSTRUMENTATION");
    return other && *other && how ? how : MRI_CACHEAPP_INSTRUMENTATION;
}

/* 32 KiB 8-way L1 and 256 KiB 8-way L2, both private, two cores. */
static const char *kConfig = "L1:32K,8,64;L2:256K,8,64;cores=2";

enum { kLinesA = 1024, kLinesB = 512, kReadsA = 8192, kWritesB = 4096 };

/* A new session with mri_cacheapp loaded in the mode argv[1] says, on
 * the test hierarchy kConfig. */
static void load_mode(char **argv)
{
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Set_Cache_Configuration(kConfig) != MRI_OK) fail_msg("config: %s", MRI_Get_Error_Message());
    if (MRI_Application_Load(cacheapp(), argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
}

static void load_app(const char *passes, const char *threads)
{
    char *argv[] = {(char *)cacheapp(), (char *)"sweep", (char *)passes, (char *)threads, NULL};
    load_mode(argv);
}

static MRI_Data_Structure_Spec data(const char *name)
{
    MRI_Data_Structure_Spec d;
    if (MRI_Find_Data_Structure(name, &d) != MRI_OK) fail_msg("find %s: %s", name, MRI_Get_Error_Message());
    return d;
}

static MRI_Request_ID cache_aggregate(MRI_Runtime_Information_Spec ri, const char *region_name, const char *ds,
                                      MRI_Aggregation_Operation op)
{
    MRI_Region_Spec r = region(region_name);
    MRI_Region_Table regions = {&r, 1};
    MRI_Data_Structure_Spec d;
    MRI_Data_Structure_Table variables = {&d, ds ? 1 : 0};
    if (ds) d = data(ds);
    MRI_Aggregation_Spec agg = {op, MRI_PER_THREAD};
    MRI_Request_ID id = MRI_Aggregate_Request(&ri, &regions, NULL, &variables, &agg);
    if (id < 0) fail_msg("cache aggregate: %s", MRI_Get_Error_Message());
    return id;
}

/* The value of thread `thread` in an aggregate result. */
static double thread_value(MRI_Request_ID id, int thread)
{
    MRI_Aggregate_Request_Results *r = agg_data(id);
    assert_int_equal(r->active, 1);
    for (int i = 0; i < r->nr_Elements; i++)
        if (r->element[i].active_object.id == thread) return r->element[i].value;
    fail_msg("request %d has no value for thread %d", id, thread);
    return -1;
}

static void test_data_structures_published(void **state)
{
    (void)state;
    load_app("1", "1");
    MRI_Data_Structure_Table t;
    assert_int_equal(MRI_Get_Data_Structures(&t), MRI_OK);
    assert_int_equal(t.nr_Elements, 3);
    MRI_Data_Structure_Info a, b, c;
    MRI_Data_Structure_Spec sa = data("A"), sb = data("B"), sc = data("C");
    assert_int_equal(MRI_Get_Data_Structure_Info(&sa, &a), MRI_OK);
    assert_int_equal(MRI_Get_Data_Structure_Info(&sb, &b), MRI_OK);
    assert_int_equal(MRI_Get_Data_Structure_Info(&sc, &c), MRI_OK);
    assert_int_equal(a.size_bytes, 8 * kReadsA);
    assert_int_equal(b.size_bytes, 8 * kWritesB);
    assert_int_equal(c.size_bytes, 64);
    assert_int_equal(a.address % 64, 0);
    assert_int_equal(sa.id.line_NR, 0); /* file scope */
    assert_non_null(strstr(a.file, "mri_cacheapp.c"));
    MRI_Region_Info main_info;
    MRI_Region_Spec main_region = region("main");
    assert_int_equal(MRI_Get_Region_Info(&main_region, &main_info), MRI_OK);
    assert_int_equal(sc.id.line_NR, main_region.id.line_NR); /* declared in unit "main" */

    /* Unknown names, and a known name in the wrong unit. */
    MRI_Data_Structure_Spec nope;
    expect_error(MRI_Find_Data_Structure("nope", &nope), "has not registered a data structure \"nope\" (registered: A, B, C");
    MRI_Data_Structure_Spec wrong = sa;
    wrong.id.line_NR = 42;
    MRI_Data_Structure_Info info;
    expect_error(MRI_Get_Data_Structure_Info(&wrong, &info), "registered \"A\", but not in the unit at");

    /* The publication names the simulator for every cache event, with each
     * kind of request it takes (mri.h, "Simulated cache events"). */
    MRI_Runtime_Information_Table pub;
    assert_int_equal(Get_Available_Runtime_Information(&pub), MRI_OK);
    int simulated = 0;
    for (int i = 0; i < pub.nr_Elements; ++i) {
        const MRI_Runtime_Information_Info *e = &pub.info[i];
        if (e->ri < MRI_LC1_DATA_READ_MISS || e->ri > MRI_LC3_DATA_WRITE_HIT || e->ri == MRI_TOTAL_CYCLES ||
            e->ri == MRI_TOTAL_INSTRUCTIONS)
            continue;
        ++simulated;
        assert_true(e->available);
        assert_string_equal(e->backend, "simulator");
        assert_false(e->needs_counter);
        assert_int_equal(e->request_kinds, (1 << MRI_AGGREGATE_REQUEST) | (1 << MRI_HISTOGRAM_REQUEST) |
                                               (1 << MRI_PROFILE_REQUEST) | (1 << MRI_TRACE_REQUEST));
    }
    assert_int_equal(simulated, 12);

    MRI_Runtime_Information_Spec ri = MRI_LC1_DATA_READ_MISS;
    MRI_Region_Spec r = region("sweep");
    MRI_Region_Table regions = {&r, 1};
    MRI_Aggregation_Spec agg = {MRI_SUM, MRI_PER_THREAD};
    MRI_Data_Structure_Spec ghost = {sa.id, "ghost"};
    MRI_Data_Structure_Table variables = {&ghost, 1};
    expect_error(MRI_Aggregate_Request(&ri, &regions, NULL, &variables, &agg),
                 "the application has not registered a data structure \"ghost\"");
    int bins = 4;
    expect_error(MRI_Histogram_Request(&ri, &regions, NULL, &variables, &bins), "has not registered a data structure \"ghost\"");
    /* A data structure restricts cache events only. */
    MRI_Runtime_Information_Spec time = MRI_EXECUTION_TIME;
    variables.data_structure = &sa;
    expect_error(MRI_Aggregate_Request(&time, &regions, NULL, &variables, &agg), "only cache events have addresses");
    expect_error(MRI_Histogram_Request(&time, &regions, NULL, &variables, &bins), "has no address");
    /* Bin counts: 1..1024, at most one per byte. */
    bins = 0;
    expect_error(MRI_Histogram_Request(&ri, &regions, NULL, &variables, &bins), "1 to 1024 bins (got 0)");
    bins = 1025;
    expect_error(MRI_Histogram_Request(&ri, &regions, NULL, &variables, &bins), "1 to 1024 bins (got 1025)");
    bins = 65;
    variables.data_structure = &sc;
    expect_error(MRI_Histogram_Request(&ri, &regions, NULL, &variables, &bins), "at most one bin per byte");
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* Data-structure-restricted aggregates against the counts of the pattern,
 * per thread: each thread's L1 is its own (private core), so both threads
 * see the same counts. */
static void test_restricted_aggregates(void **state)
{
    (void)state;
    load_app("3", "2");
    const MRI_Request_ID l1_sum = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    const MRI_Request_ID l1_max = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_MAX);
    const MRI_Request_ID l1_hits = cache_aggregate(MRI_LC1_DATA_READ_HIT, "sweep", "A", MRI_SUM);
    const MRI_Request_ID l2_sum = cache_aggregate(MRI_LC2_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    const MRI_Request_ID l2_min = cache_aggregate(MRI_LC2_DATA_READ_MISS, "sweep", "A", MRI_MIN);
    const MRI_Request_ID l1_b = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "B", MRI_SUM);
    const MRI_Request_ID all = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", NULL, MRI_SUM);
    const MRI_Request_ID wmiss = cache_aggregate(MRI_LC1_DATA_WRITE_MISS, "fill", "B", MRI_SUM);
    const MRI_Request_ID whits = cache_aggregate(MRI_LC1_DATA_WRITE_HIT, "fill", "B", MRI_SUM);
    const MRI_Request_ID l3 = cache_aggregate(MRI_LC3_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    run_to_end();
    for (int t = 0; t < 2; t++) {
        assert_int_equal((long)thread_value(l1_sum, t), 3 * kLinesA);
        assert_int_equal((long)thread_value(l1_max, t), kLinesA);
        assert_int_equal((long)thread_value(l1_hits, t), 3 * (kReadsA - kLinesA));
        assert_int_equal((long)thread_value(l2_sum, t), kLinesA); /* only the first sweep misses L2 */
        assert_int_equal((long)thread_value(l2_min, t), 0);
        assert_int_equal((long)thread_value(l1_b, t), 0); /* the sweeps do not touch B */
        /* Unrestricted: A's misses and whatever else the sweep touched. */
        assert_true(thread_value(all, t) >= 3 * kLinesA);
        assert_int_equal((long)thread_value(wmiss, t), kLinesB);
        assert_int_equal((long)thread_value(whits, t), kWritesB - kLinesB);
    }
    MRI_Aggregate_Request_Results *r = agg_data(l1_max);
    assert_int_equal(r->element[0].count, 3); /* instances */
    /* An L3 event on a two-level hierarchy: the application rejects it. */
    void *p;
    expect_error(MRI_Get_Data(l3, &p), "the simulated hierarchy has 2 levels");
    char config[256];
    assert_int_equal(MRI_Get_Cache_Configuration(config, sizeof config), MRI_OK);
    assert_non_null(strstr(config, "L1:32K,8,64"));
    /* Simulated by a thread of its own on two CPUs or more, unless
     * MRI_CACHESIM_ASYNC=0 (CTest runs this suite both ways). */
    const char *async = getenv("MRI_CACHESIM_ASYNC");
    const int want_thread = async && *async ? strcmp(async, "0") != 0 : sysconf(_SC_NPROCESSORS_ONLN) >= 2;
    print_message("%s\n", config);
    assert_int_equal(strstr(config, "simulated by a thread of its own") != NULL, want_thread);
    /* With the thread and MRI_CACHESIM_SPLIT=N, split: the program's
     * threads simulate 1/N of the lines (CTest runs the suite with 2 and
     * 8 too); by default (auto) split by 4 while that pays (CTest runs it
     * with MRI_CACHESIM_SPLIT_AFTER=0 too: split at the first hand-over).
     * The counts above are exact either way. */
    const char *split = getenv("MRI_CACHESIM_SPLIT");
    const int automatic = !split || !*split || strcmp(split, "auto") == 0;
    const int modulus = automatic ? 4 : atoi(split);
    char want_split[128];
    snprintf(want_split, sizeof want_split, "%s the program's threads simulate 1/%d of the lines",
             automatic ? "split by line while that pays: then" : "split:", modulus);
    assert_int_equal(strstr(config, want_split) != NULL, want_thread && modulus > 1);
    assert_int_equal(strstr(config, "split") != NULL, want_thread && modulus > 1);
    /* Loaded again, one sweep: the requests find A and B again (by the
     * name of the file they were registered in) and count anew. */
    char *again[] = {(char *)cacheapp(), (char *)"sweep", (char *)"1", (char *)"1", NULL};
    if (MRI_Application_Load(cacheapp(), again) != MRI_OK) fail_msg("reload: %s", MRI_Get_Error_Message());
    run_to_end();
    assert_int_equal((long)thread_value(l1_sum, 0), kLinesA);
    assert_int_equal((long)thread_value(wmiss, 0), kLinesB);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* Runs the loaded program to its end, which must be an exit with status
 * 0 (a thread that could not be created makes the sweep program exit
 * with 3); its final status. */
static MRI_Application_Status_Info run_to_clean_exit(void)
{
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.exit_code, 0);
    return st;
}

/* A thread the program creates with a small stack (64 KiB) starts, and its
 * references are simulated: the backend's buffers (320 KiB a thread) are
 * mapped at a thread's first reference, not in static TLS, which glibc
 * takes from the stack (there pthread_create fails with EINVAL under
 * 320 KiB, and the program exits with status 3). */
static void test_thread_with_a_small_stack(void **state)
{
    (void)state;
    char *argv[] = {(char *)cacheapp(), (char *)"sweep", (char *)"3", (char *)"2", (char *)"64", NULL};
    load_mode(argv);
    const MRI_Request_ID l1_sum = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    const MRI_Request_ID whits = cache_aggregate(MRI_LC1_DATA_WRITE_HIT, "fill", "B", MRI_SUM);
    run_to_clean_exit();
    for (int t = 0; t < 2; t++) {
        assert_int_equal((long)thread_value(l1_sum, t), 3 * kLinesA);
        assert_int_equal((long)thread_value(whits, t), kWritesB - kLinesB);
    }
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* Six threads, one after another (main, then five it creates and joins in
 * turn), each with two sweeps of A and a fill of B: every thread after
 * the second records into the buffers an ended one left (the backend keeps
 * them for the next thread). Each thread's counts are exactly its own:
 * nothing lost, nothing an earlier thread left in the buffers counted
 * again. And "main", open on the main thread while the others run, counts
 * the main thread's references only, although threads 2 and 4 share its
 * simulated core (cores=2). */
static void test_threads_one_after_another(void **state)
{
    (void)state;
    load_app("2", "6");
    const MRI_Request_ID rmiss = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    const MRI_Request_ID rhits = cache_aggregate(MRI_LC1_DATA_READ_HIT, "sweep", "A", MRI_SUM);
    const MRI_Request_ID wmiss = cache_aggregate(MRI_LC1_DATA_WRITE_MISS, "fill", "B", MRI_SUM);
    const MRI_Request_ID whits = cache_aggregate(MRI_LC1_DATA_WRITE_HIT, "fill", "B", MRI_SUM);
    const MRI_Request_ID in_main = cache_aggregate(MRI_LC1_DATA_READ_MISS, "main", "A", MRI_SUM);
    run_to_clean_exit();
    assert_int_equal((long)thread_value(in_main, 0), 2 * kLinesA);
    for (int t = 0; t < 6; t++) {
        assert_int_equal((long)thread_value(rmiss, t), 2 * kLinesA);
        assert_int_equal((long)thread_value(rhits, t), 2 * (kReadsA - kLinesA));
        assert_int_equal((long)thread_value(wmiss, t), kLinesB);
        assert_int_equal((long)thread_value(whits, t), kWritesB - kLinesB);
    }
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* The same six threads with room for two (MRI_MAX_THREADS=2): the four
 * later ones are not monitored, and their references, still simulated,
 * count for no thread, not as thread 0's in the main thread's open
 * "main". */
static void test_threads_beyond_max_threads_count_for_nobody(void **state)
{
    (void)state;
    setenv("MRI_MAX_THREADS", "2", 1);
    load_app("2", "6");
    unsetenv("MRI_MAX_THREADS");
    const MRI_Request_ID in_main = cache_aggregate(MRI_LC1_DATA_READ_MISS, "main", "A", MRI_SUM);
    const MRI_Request_ID rmiss = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    const MRI_Application_Status_Info st = run_to_clean_exit();
    assert_int_equal(st.threads_dropped, 4);
    assert_int_equal((long)thread_value(in_main, 0), 2 * kLinesA);
    for (int t = 0; t < 2; t++) assert_int_equal((long)thread_value(rmiss, t), 2 * kLinesA);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* Runs the loaded sweep program to the end of its first "sweep", lets it
 * run 20 ms more, and ends it there (MRI_Application_Finish): the sweep it
 * is in and main are open. */
static void finish_inside_a_sweep(void)
{
    MRI_Region_Spec sweep = region("sweep");
    assert_int_equal(MRI_Start_Stop(&sweep), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    assert_int_equal(MRI_Start(), MRI_OK);
    usleep(20 * 1000);
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_TERMINATED_BY_TOOL);
}

/* What monitor_message says when the end gave up on one running thread,
 * and when it passed one that ran during its wait and then blocked. */
#define GAVE_UP_ON_ONE "the end gave up after 100 ms on 1 thread still running program code"
#define PASSED_ONE "the end passed 1 thread that ran during its wait and then did not run for 5 ms"

/* On a loaded machine (the sanitizer suites run two tests at a time) the
 * program may reach no event in the 100 ms the end waits, or its host may
 * keep a sleeping thread from waking for longer than the end's 5 ms of
 * quiet: its last batch is then lost, and the monitor must say so (in one
 * ThreadSanitizer run, before that message, the end passed the worker of
 * test_thread_asleep_at_the_end_is_waited_for silently: 896 misses of
 * 1024). After an end that lost
 * references (`lost`), whether to run the test again: only when the
 * monitor said so and tries are left (the session finalized for the next
 * try); a batch lost without the message, or in every try, fails. */
#define FINISH_TRIES 3
static int try_again_after_giving_up(int lost, int attempt)
{
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    if (!lost || attempt >= FINISH_TRIES ||
        (!strstr(st.monitor_message, GAVE_UP_ON_ONE) && !strstr(st.monitor_message, PASSED_ONE)))
        return 0;
    print_message("try %d of %d: %s\n", attempt, FINISH_TRIES, st.monitor_message);
    assert_int_equal(MRI_Finalize(), MRI_OK);
    return 1;
}

/* The tool ends the program in the middle of its sweeps
 * (MRI_Application_Finish): "main", still open, is ended as at an exit,
 * with the simulated events of A up to then (every line of A missed L1 in
 * the first sweep). Before, it counted nothing. (Its time is requested
 * too: the region has a frame; test_finish_ends_cache_only_instances has
 * none.) The end waits for the running program to park at its next
 * event, a sweep's enter or exit, where it hands its references over
 * first: main's misses are those of whole sweeps, every one of them also
 * a sweep instance's. Before, a sweep's second half (4096 references,
 * recorded and not handed over) was lost whenever the end came during it:
 * main was 512 misses short about every other run. */
static void test_finish_ends_the_open_instances(void **state)
{
    (void)state;
    MRI_Request_ID in_main, main_time, sweeps, sweep_time;
    for (int attempt = 1;; attempt++) {
        load_app("1000000", "1");
        in_main = cache_aggregate(MRI_LC1_DATA_READ_MISS, "main", "A", MRI_SUM);
        main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
        sweeps = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_SUM);
        sweep_time = aggregate(MRI_EXECUTION_TIME, "sweep", MRI_SUM, MRI_PER_PROCESS);
        finish_inside_a_sweep();
        if (!try_again_after_giving_up((long)thread_value(in_main, 0) % kLinesA != 0, attempt))
            break;
    }
    assert_true(thread_value(in_main, 0) >= kLinesA);
    assert_int_equal((long)thread_value(in_main, 0) % kLinesA, 0);
    assert_int_equal((long)thread_value(in_main, 0), (long)thread_value(sweeps, 0));
    assert_int_equal(agg_data(in_main)->element[0].count, 1);
    /* main's time, ended at the end, encloses every sweep's, the last one
     * (open at the end) ended there too. (Not "at least the 20 ms the tool
     * let it run": the time stopped at "sweep" is not counted, and under
     * load the program may take a few of those ms to wake up.) */
    assert_true(agg_data(sweep_time)->element[0].value > 0);
    assert_true(agg_data(main_time)->element[0].value >= agg_data(sweep_time)->element[0].value);
}

static const MRI_Histogram_Request_Results *hist_data(MRI_Request_ID id);

/* mri_cacheapp's park mode (SPIN_MS "0": none; SLEEP_US "0": none;
 * REST_MS "0": none): stops it at "fresh", lets its worker read A and
 * waits, polling every 0.1 ms, until the worker has removed the file that
 * let it go, after its reads. Then the caller ends the program; *in_worker
 * has the worker's L1 read misses of A. */
static void release_the_park_worker_to_rest(const char *spin_ms, const char *sleep_us, const char *rest_ms,
                                            MRI_Request_ID *in_worker)
{
    char dir[] = "/tmp/mri_cacheapp_park_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char go[sizeof dir + 8];
    snprintf(go, sizeof go, "%s/go", dir);
    char *argv[] = {(char *)cacheapp(), (char *)"park", go, (char *)spin_ms, (char *)sleep_us, (char *)rest_ms, NULL};
    load_mode(argv);
    *in_worker = cache_aggregate(MRI_LC1_DATA_READ_MISS, "worker", "A", MRI_SUM);
    MRI_Region_Spec fresh = region("fresh");
    assert_int_equal(MRI_Start_Stop(&fresh), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    FILE *f = fopen(go, "w");
    assert_non_null(f);
    fclose(f);
    for (int i = 0; access(go, F_OK) == 0 && i < 200000; i++) usleep(100);
    assert_int_not_equal(access(go, F_OK), 0);
    rmdir(dir);
}

static void release_the_park_worker_after(const char *spin_ms, const char *sleep_us, MRI_Request_ID *in_worker)
{
    release_the_park_worker_to_rest(spin_ms, sleep_us, "0", in_worker);
}

static void release_the_park_worker(const char *spin_ms, MRI_Request_ID *in_worker)
{
    release_the_park_worker_after(spin_ms, "0", in_worker);
}

/* A thread that parks at a region's enter while the program is stopped
 * has its references up to there simulated first: mri_cacheapp's worker
 * reads all of A (1024 cold L1 misses) after the stop at "fresh", then
 * parks at the enter of "after"; the tool then ends the program. Its
 * "worker" instance, still open, counts all 1024. Before, the enter
 * flushed the thread's buffer only after the park, and the end (on the
 * control thread) cannot reach it: the last 4096 references, half of the
 * misses, were not counted. */
static void test_thread_parked_at_an_enter_keeps_its_references(void **state)
{
    (void)state;
    MRI_Request_ID in_worker;
    release_the_park_worker("0", &in_worker);
    usleep(100 * 1000); /* the worker removes the file just before the enter where it parks */
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    assert_int_equal((long)thread_value(in_worker, 1), kLinesA);
    MRI_Aggregate_Request_Results *r = agg_data(in_worker);
    for (int i = 0; i < r->nr_Elements; i++)
        if (r->element[i].active_object.id == 1) assert_int_equal(r->element[i].count, 1);
}

/* The same, with the worker still running program code when the tool
 * ends the program: it removed the file after its reads and then runs
 * 30 ms without an event. The end waits for a running thread to park
 * at its next event (at most 100 ms), here the enter of "after", where it
 * hands its references over: all 1024 misses. Before, the end came at
 * once and the worker's last 2048 references, still in its buffer, were
 * lost: 768. (Were the tool 30 ms late, the worker would have parked
 * before the end and this test could not tell; it cannot fail for that.) */
static void test_thread_running_at_the_end_is_waited_for(void **state)
{
    (void)state;
    MRI_Request_ID in_worker;
    for (int attempt = 1;; attempt++) {
        /* 30 ms of the process's CPU time: under a machine loaded twice
         * over still well within the end's 100 ms wait (60 ms were not, and
         * the worker's last references were lost) */
        release_the_park_worker("30", &in_worker);
        assert_int_equal(MRI_Application_Finish(), MRI_OK); /* at once: the worker is in its 30 ms */
        if (!try_again_after_giving_up((long)thread_value(in_worker, 1) != kLinesA, attempt))
            break;
    }
    assert_int_equal((long)thread_value(in_worker, 1), kLinesA);
}

/* The same with a worker that runs 10 ms of the process's CPU time in
 * slices of 0.2 ms of its own, each after a sleep of 0.3 ms (about 30 ms
 * in all, within the end's 100 ms wait under a machine loaded twice over;
 * 30 ms in slices were not): the end most likely finds it asleep (task
 * state 'S') and must still wait for it, as for any thread caught inside
 * a system call it returns from to run program code. Before, the end
 * looked at the task state once, took such a thread for blocked and came
 * at once, without waiting or saying so: 768 misses, in every run here
 * (and in one CI run, the worker of
 * test_end_that_gives_up_on_a_thread_says_so, caught in its unlink under
 * I/O load). The end now counts a thread that used CPU time since its
 * last look as running, and ends its wait after 10 looks, over 5 ms at
 * least, that saw none (libmonitor/world.cpp). */
static void test_thread_asleep_at_the_end_is_waited_for(void **state)
{
    (void)state;
    MRI_Request_ID in_worker;
    for (int attempt = 1;; attempt++) {
        release_the_park_worker_after("10", "300", &in_worker);
        assert_int_equal(MRI_Application_Finish(), MRI_OK); /* at once: the worker is in its slices */
        if (!try_again_after_giving_up((long)thread_value(in_worker, 1) != kLinesA, attempt))
            break;
    }
    assert_int_equal((long)thread_value(in_worker, 1), kLinesA);
}

/* The same with a worker that runs 30 ms of CPU time without an event,
 * then sleeps 1 s before its next: the end finds it running, waits, and
 * after 5 ms without it running passes it as blocked (it may be blocked
 * for good, on a lock the parked threads hold). The references it
 * recorded since its last hand-over are lost, and the monitor's message
 * says so. Before, nothing told the tool. The end may also come after
 * the spin, never see the worker run and say nothing: then the test
 * tries again (at most three times in all). */
static void test_end_that_passes_a_thread_that_ran_says_so(void **state)
{
    (void)state;
    MRI_Request_ID in_worker;
    MRI_Application_Status_Info st;
    for (int attempt = 1;; attempt++) {
        release_the_park_worker_to_rest("30", "0", "1000", &in_worker);
        assert_int_equal(MRI_Application_Finish(), MRI_OK);
        assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
        if (strstr(st.monitor_message, PASSED_ONE) || attempt == FINISH_TRIES)
            break;
        print_message("try %d of %d: the end did not see the worker run (\"%s\")\n", attempt, FINISH_TRIES,
                      st.monitor_message);
        assert_int_equal(MRI_Finalize(), MRI_OK);
    }
    print_message("%s\n", st.monitor_message);
    assert_non_null(strstr(st.monitor_message, PASSED_ONE ": the references each recorded since its last event "
                                                          "(up to 4096) may not be simulated"));
    const long misses = (long)thread_value(in_worker, 1);
    assert_true(misses < kLinesA);
    assert_true(misses >= kLinesA / 2);
}

/* The same with a worker that runs 1 s of CPU time without an event: the
 * end gives up after its 100 ms, the references the worker recorded since
 * its last hand-over (its last 2048, a quarter of A's misses, with the
 * batches of the inlined recording) are lost, and the monitor's message
 * says so. Before, nothing told the tool. */
static void test_end_that_gives_up_on_a_thread_says_so(void **state)
{
    (void)state;
    MRI_Request_ID in_worker;
    release_the_park_worker("1000", &in_worker);
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    print_message("%s\n", st.monitor_message);
    assert_non_null(strstr(st.monitor_message, GAVE_UP_ON_ONE ": the references each recorded since its last event "
                                                               "(up to 4096) are not simulated"));
    const long misses = (long)thread_value(in_worker, 1);
    assert_true(misses < kLinesA);
    assert_true(misses >= kLinesA / 2);
}

/* The same end with cache requests only: "main" and "sweep" have no frame
 * (no time or counter request), and their open instances still end as at
 * an exit: the aggregate of main gets its one instance with A's misses up
 * to then, the histogram over A in main its bins (every line of A missed
 * in the first sweep), and sweep's aggregate the sweep it was in. Before,
 * all three stayed empty. */
static void test_finish_ends_cache_only_instances(void **state)
{
    (void)state;
    load_app("1000000", "1");
    const MRI_Request_ID in_main = cache_aggregate(MRI_LC1_DATA_READ_MISS, "main", "A", MRI_SUM);
    const MRI_Request_ID sweeps = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    MRI_Data_Structure_Spec a = data("A");
    MRI_Runtime_Information_Spec ri = MRI_LC1_DATA_READ_MISS;
    MRI_Region_Spec r_main = region("main");
    MRI_Region_Table regions = {&r_main, 1};
    MRI_Data_Structure_Table variables = {&a, 1};
    int bins = 4;
    const MRI_Request_ID hist = MRI_Histogram_Request(&ri, &regions, NULL, &variables, &bins);
    if (hist < 0) fail_msg("histogram: %s", MRI_Get_Error_Message());
    finish_inside_a_sweep();
    assert_int_equal(agg_data(in_main)->element[0].count, 1);
    assert_true(thread_value(in_main, 0) >= kLinesA);
    assert_true(agg_data(sweeps)->element[0].count >= 1);
    assert_true(thread_value(in_main, 0) >= thread_value(sweeps, 0));
    const MRI_Histogram_Request_Results *h = hist_data(hist);
    assert_int_equal(h->active, 1);
    assert_int_equal(h->nr_Elements, 4);
    unsigned long long total = 0;
    for (int i = 0; i < 4; i++) {
        assert_true(h->element[i].value >= kLinesA / 4); /* each bin's lines missed in the first sweep */
        total += h->element[i].value;
    }
    assert_true(total == (unsigned long long)thread_value(in_main, 0));
}

/* Hits plus misses of writes to data structure `ds` in "fill", thread 0
 * (every store counts once, whether the memory was still cached or not). */
static MRI_Request_ID fill_writes[2];
static void request_fill_writes(void)
{
    fill_writes[0] = cache_aggregate(MRI_LC1_DATA_WRITE_HIT, "fill", "B", MRI_SUM);
    fill_writes[1] = cache_aggregate(MRI_LC1_DATA_WRITE_MISS, "fill", "B", MRI_SUM);
}
static long writes(const MRI_Request_ID ids[2])
{
    return (long)(thread_value(ids[0], 0) + thread_value(ids[1], 0));
}

/* A heap array freed and allocated again under the same name
 * (Monitor_Unregister_Data): each round's "B" counts the 4096 stores of
 * the fill before its end and none of the fill after it, even where the
 * next round's array has the same address; the name finds the newest
 * registration. */
static void test_data_structure_ended_and_registered_again(void **state)
{
    (void)state;
    char *argv[] = {(char *)cacheapp(), (char *)"realloc", (char *)"3", NULL};
    load_mode(argv);
    MRI_Region_Spec fresh = region("fresh");
    assert_int_equal(MRI_Start_Stop(&fresh), MRI_OK);
    MRI_Request_ID rounds[3][2];
    MRI_Data_Structure_Info info[3];
    for (int r = 0; r < 3; r++) {
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED); /* round r's B is registered */
        MRI_Data_Structure_Spec b = data("B");
        assert_int_equal(MRI_Get_Data_Structure_Info(&b, &info[r]), MRI_OK);
        request_fill_writes();
        rounds[r][0] = fill_writes[0];
        rounds[r][1] = fill_writes[1];
        for (int earlier = 0; earlier < r; earlier++)
            assert_int_equal(writes(rounds[earlier]), kWritesB); /* stopped counting at its end */
        if (r < 2) assert_int_equal(MRI_Start_Stop(&fresh), MRI_OK);
    }
    assert_int_equal(MRI_Start(), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0); /* the application's own checks of the return values */
    for (int r = 0; r < 3; r++) assert_int_equal(writes(rounds[r]), kWritesB);
    print_message("B's addresses: %#llx %#llx %#llx\n", (unsigned long long)info[0].address,
                  (unsigned long long)info[1].address, (unsigned long long)info[2].address);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* A program that fork()s while its references are being simulated: the
 * children run instrumented code too, and must neither hang nor disturb
 * the parent's counts (a forked child is not the monitored process). The
 * parent's 160 strided passes per round miss A's 1024 lines in L1 every
 * time. */
static void test_fork_while_simulating(void **state)
{
    (void)state;
    char *argv[] = {(char *)cacheapp(), (char *)"fork", (char *)"30", NULL};
    load_mode(argv);
    const MRI_Request_ID misses = cache_aggregate(MRI_LC1_DATA_READ_MISS, "main", "A", MRI_SUM);
    assert_int_equal(MRI_Start(), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0); /* no child hung */
    assert_int_equal((long)thread_value(misses, 0), 30L * 160 * kLinesA);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

static const MRI_Profile_Element *profile_element(const MRI_Histogram_Profile_Results *p, const char *name)
{
    MRI_Region_Spec r = region(name);
    for (int i = 0; i < p->nr_Elements; i++)
        if (p->element[i].region.type == r.type && p->element[i].region.id.file_ID == r.id.file_ID &&
            p->element[i].region.id.line_NR == r.id.line_NR)
            return &p->element[i];
    fail_msg("no profile element for %s", name);
    return NULL;
}

/* Simulated cache events in flat and callpath profiles: A's read misses
 * happen in "sweep" (inside "main"), B's write misses in "fill". */
static void test_profiles(void **state)
{
    (void)state;
    load_app("3", "1");
    MRI_Runtime_Information_Spec reads = MRI_LC1_DATA_READ_MISS, writes = MRI_LC1_DATA_WRITE_MISS;
    MRI_Region_Table all = {NULL, 0};
    MRI_Data_Structure_Spec a = data("A"), b = data("B");
    MRI_Data_Structure_Table only_a = {&a, 1}, only_b = {&b, 1};
    const MRI_Request_ID read_profile = MRI_Callpath_Profile_Request(&reads, &all, NULL, &only_a);
    const MRI_Request_ID write_profile = MRI_Profile_Request(&writes, &all, NULL, &only_b);
    assert_true(read_profile > 0 && write_profile > 0);
    run_to_end();

    void *p = NULL;
    assert_int_equal(MRI_Get_Data(read_profile, &p), MRI_OK);
    const MRI_Histogram_Profile_Results *flat = p;
    assert_int_equal(flat->active, 1);
    const MRI_Profile_Element *sweep = profile_element(flat, "sweep"), *main_ = profile_element(flat, "main");
    assert_int_equal(sweep->instances, 3);
    assert_int_equal((long)sweep->inclusive, 3 * kLinesA);
    assert_int_equal((long)sweep->exclusive, 3 * kLinesA);
    assert_int_equal((long)main_->inclusive, 3 * kLinesA);
    assert_int_equal((long)main_->exclusive, 0); /* all of A's misses are in its sweeps */
    assert_int_equal((long)profile_element(flat, "fill")->inclusive, 0);

    MRI_Callpath_Profile_Results *cp = NULL;
    assert_int_equal(MRI_Get_Callpath_Data(read_profile, &cp), MRI_OK);
    int found = 0;
    MRI_Region_Spec m = region("main"), s = region("sweep");
    for (int i = 0; i < cp->nr_Elements; i++) {
        const MRI_Callpath_Element *e = &cp->element[i];
        if (e->has_caller && e->caller.id.line_NR == m.id.line_NR && e->callee.id.line_NR == s.id.line_NR) {
            assert_int_equal(e->instances, 3);
            assert_int_equal((long)e->inclusive, 3 * kLinesA);
            found = 1;
        }
    }
    assert_true(found);

    assert_int_equal(MRI_Get_Data(write_profile, &p), MRI_OK);
    flat = p;
    assert_int_equal((long)profile_element(flat, "fill")->inclusive, kLinesB);
    assert_int_equal((long)profile_element(flat, "main")->exclusive, 0);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* Trace records of simulated cache events, drained by the call-back. */
static int trace_sweep_records, trace_main_records, trace_fill_records, trace_other_records;
static unsigned long long trace_sweep_sum, trace_main_value;
static MRI_Region_Spec trace_sweep, trace_main, trace_fill;

static int same_region(const MRI_Region_Spec *a, const MRI_Region_Spec *b)
{
    return a->type == b->type && a->id.file_ID == b->id.file_ID && a->id.line_NR == b->id.line_NR;
}

static void reset_trace_counts(void)
{
    trace_sweep_records = trace_main_records = trace_fill_records = trace_other_records = 0;
    trace_sweep_sum = trace_main_value = 0;
}

static void drain_cache_records(void)
{
    for (MRI_Trace_Element_Spec *r = MRI_Get_First_Trace_Record(); r; r = MRI_Get_Next_Trace_Record()) {
        if (r->event_type != MRI_LC1_DATA_READ_MISS || r->active_object.id != 0 || !r->data_structure.name ||
            strcmp(r->data_structure.name, "A") != 0) {
            trace_other_records++;
        } else if (same_region(&r->region, &trace_sweep)) {
            trace_sweep_records++;
            trace_sweep_sum += r->data;
        } else if (same_region(&r->region, &trace_main)) {
            trace_main_records++;
            trace_main_value = r->data;
        } else if (same_region(&r->region, &trace_fill)) {
            trace_fill_records++;
        } else {
            trace_other_records++;
        }
    }
}

/* A trace of A's L1 read misses over "main" with its subregions: one value
 * record per instance of main, of its 3 sweeps and of fill, each carrying
 * the instance's misses; a second trace over "sweep" alone (no
 * subregions, MRI_Set_Trace_Subregions) has 3 more. */
static void test_traces(void **state)
{
    (void)state;
    reset_trace_counts();
    load_app("3", "1");
    trace_sweep = region("sweep");
    trace_main = region("main");
    trace_fill = region("fill");
    assert_int_equal(MRI_Register_Call_Back_Function(drain_cache_records), MRI_OK);
    MRI_Runtime_Information_Spec reads = MRI_LC1_DATA_READ_MISS;
    MRI_Data_Structure_Spec a = data("A");
    MRI_Data_Structure_Table only_a = {&a, 1};
    MRI_Region_Table in_main = {&trace_main, 1}, in_sweep = {&trace_sweep, 1};
    const MRI_Request_ID with_sub = MRI_Trace_Request(&reads, &in_main, NULL, &only_a);
    const MRI_Request_ID sweeps = MRI_Trace_Request(&reads, &in_sweep, NULL, &only_a);
    assert_true(with_sub > 0 && sweeps > 0);
    assert_int_equal(MRI_Set_Trace_Subregions(sweeps, 0), MRI_OK);
    run_to_end();
    assert_int_equal(trace_main_records, 1);
    assert_int_equal((long)trace_main_value, 3 * kLinesA); /* every miss of A is inside main */
    assert_int_equal(trace_sweep_records, 6);             /* 3 from each request */
    assert_int_equal((long)trace_sweep_sum, 6 * kLinesA);
    assert_int_equal(trace_fill_records, 1);
    assert_int_equal(trace_other_records, 0);
    MRI_Register_Call_Back_Function(NULL);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* The tool ends the program inside a sweep (MRI_Application_Finish): the
 * instances then open, main and the sweep, get their value records at the
 * end, main's with A's misses up to then (every line of A missed in the
 * first sweep), and the sweeps' values add up to at most main's. Before,
 * neither open instance had a record. */
static void test_trace_values_of_instances_open_at_the_end(void **state)
{
    (void)state;
    reset_trace_counts();
    load_app("1000000", "1");
    trace_sweep = region("sweep");
    trace_main = region("main");
    trace_fill = region("fill");
    MRI_Runtime_Information_Spec reads = MRI_LC1_DATA_READ_MISS;
    MRI_Data_Structure_Spec a = data("A");
    MRI_Data_Structure_Table only_a = {&a, 1};
    MRI_Region_Table in_main = {&trace_main, 1};
    assert_true(MRI_Trace_Request(&reads, &in_main, NULL, &only_a) > 0);
    finish_inside_a_sweep();
    drain_cache_records();
    assert_int_equal(trace_main_records, 1);
    assert_true(trace_main_value >= kLinesA);
    assert_true(trace_sweep_records >= 1);
    assert_true(trace_sweep_sum <= trace_main_value);
    assert_int_equal(trace_other_records, 0);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

static const MRI_Histogram_Request_Results *hist_data(MRI_Request_ID id)
{
    void *p = NULL;
    if (MRI_Get_Data(id, &p) != MRI_OK) fail_msg("get data: %s", MRI_Get_Error_Message());
    const MRI_Histogram_Request_Results *h = p;
    assert_int_equal(h->kind, MRI_HISTOGRAM_REQUEST);
    return h;
}

/* A histogram over A: every 4 KiB bin holds 64 lines, each missing once per
 * sweep; and one over every data structure, of B's write misses. */
static void test_histograms(void **state)
{
    (void)state;
    load_app("2", "2");
    MRI_Data_Structure_Spec a = data("A");
    MRI_Data_Structure_Info ai, bi;
    assert_int_equal(MRI_Get_Data_Structure_Info(&a, &ai), MRI_OK);
    MRI_Data_Structure_Spec b = data("B");
    assert_int_equal(MRI_Get_Data_Structure_Info(&b, &bi), MRI_OK);

    MRI_Runtime_Information_Spec ri = MRI_LC1_DATA_READ_MISS;
    MRI_Region_Spec sweep = region("sweep");
    MRI_Region_Table regions = {&sweep, 1};
    MRI_Data_Structure_Table variables = {&a, 1};
    int bins = 16;
    MRI_Active_Object_Spec thread1 = {MRI_THREAD, 1};
    MRI_Active_Object_Table only1 = {&thread1, 1};
    const MRI_Request_ID over_a = MRI_Histogram_Request(&ri, &regions, NULL, &variables, &bins);
    if (over_a < 0) fail_msg("histogram: %s", MRI_Get_Error_Message());
    const MRI_Request_ID over_a_t1 = MRI_Histogram_Request(&ri, &regions, &only1, &variables, &bins);
    assert_true(over_a_t1 > 0);
    /* Before the release: not applied, no bins yet. */
    assert_int_equal(hist_data(over_a)->active, 0);

    MRI_Runtime_Information_Spec wri = MRI_LC1_DATA_WRITE_MISS;
    MRI_Region_Spec fill = region("fill");
    MRI_Region_Table fill_regions = {&fill, 1};
    int all_bins = 12; /* A 64 KiB + B 32 KiB + C 64 bytes, packed: 8198-byte bins */
    const MRI_Request_ID over_all = MRI_Histogram_Request(&wri, &fill_regions, NULL, NULL, &all_bins);
    if (over_all < 0) fail_msg("histogram: %s", MRI_Get_Error_Message());
    run_to_end();

    const MRI_Histogram_Request_Results *h = hist_data(over_a);
    assert_int_equal(h->active, 1);
    assert_int_equal(h->nr_Elements, 16);
    for (int i = 0; i < 16; i++) {
        const MRI_Histogram_Bin *bin = &h->element[i];
        assert_int_equal(bin->address_begin, ai.address + 4096ull * i);
        assert_int_equal(bin->address_end, ai.address + 4096ull * (i + 1));
        assert_int_equal(bin->value, 2 * 2 * 64); /* 2 threads x 2 sweeps x 64 lines */
        assert_int_equal(bin->data_structures.nr_Elements, 1);
        assert_string_equal(bin->data_structures.data_structure[0].name, "A");
    }
    h = hist_data(over_a_t1);
    for (int i = 0; i < 16; i++) assert_int_equal(h->element[i].value, 2 * 64);

    /* The whole registered space: a B line's write miss lands in the bin of
     * its first byte; A's and C's bins get none. Expected counts from B's
     * address and the bins' ranges. */
    h = hist_data(over_all);
    assert_int_equal(h->nr_Elements, 12);
    unsigned long long total = 0;
    int saw_shared_bin = 0;
    for (int i = 0; i < h->nr_Elements; i++) {
        const MRI_Histogram_Bin *bin = &h->element[i];
        unsigned long long expect = 0;
        for (unsigned long long line = bi.address; line < bi.address + bi.size_bytes; line += 64)
            if (line >= bin->address_begin && line < bin->address_end) expect += 2; /* 2 threads */
        /* A bin that spans from one data structure into the next covers
         * a gap; count B's lines only where the bin lists B. */
        int lists_b = 0;
        for (int k = 0; k < bin->data_structures.nr_Elements; k++)
            lists_b |= strcmp(bin->data_structures.data_structure[k].name, "B") == 0;
        if (!lists_b) expect = 0;
        saw_shared_bin |= bin->data_structures.nr_Elements > 1;
        assert_int_equal(bin->value, expect);
        total += bin->value;
    }
    assert_int_equal(total, 2 * kLinesB);
    assert_true(saw_shared_bin); /* 8198-byte bins straddle A|B or B|C */
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* Time under the simulator, compensated (seed paper 001, the cache-simulator
 * kind). One process measures the sweeps' time with the simulator off (the
 * instrumentation dormant); another the same with every reference recorded
 * and simulated in the program's thread (a cache request on "main",
 * MRI_CACHESIM_ASYNC=0). The simulation is timed batch by batch and the
 * recording calibrated, so the compensated sweeps must come back to the
 * dormant time: the median of five runs within 25% of what simulating
 * added (typically a few %; a run's figure also moves with the machine's
 * other load, hence the median; of five, since on a KVM guest whose speed
 * swings by 2x to 5x the recording's calibration came out at 0.31 to 1.69
 * ns a reference from one process to the next, and through the callbacks
 * the runs left -3 to -23%, median -9%: two runs of three beyond -25%
 * failed a CI run, docs/ACCURACY.md). A third process simulates on the
 * simulation thread (MRI_CACHESIM_ASYNC=1): the sweeps then pay only for
 * handing the references over and for waiting when the thread is behind,
 * both timed, so its compensated time must come back to the dormant one
 * just as well, measured against what simulating in place added. */
#define SIM_RUNS (MRI_TEST_SANITIZED ? 1 : 5) /* once, not held, under a sanitizer */

static double mean_sweep(int simulate, const char *async, double *raw, double *comp)
{
    setenv("MRI_CACHESIM_ASYNC", async, 1);
    load_app("300", "1");
    const MRI_Request_ID t = aggregate(MRI_EXECUTION_TIME, "sweep", MRI_SUM, MRI_PER_PROCESS);
    /* L1 read hits of every address: each reference then leaves the
     * kernel's inline path and is counted (a miss monitor costs the hits
     * nothing), so simulating adds at least twice what the dormant sweep
     * takes (about 2.3 times through the callbacks, 13 times with the
     * inline recording), however fast the kernel searches its sets.
     * Counting misses, it added 30-60% once the sets came to be searched
     * with AVX-512. */
    MRI_Request_ID hits = -1;
    if (simulate) hits = cache_aggregate(MRI_LC1_DATA_READ_HIT, "main", NULL, MRI_SUM);
    run_to_end();
    const MRI_Aggregate_Request_Results *r = agg_data(t);
    assert_int_equal(r->nr_Elements, 1);
    assert_int_equal(r->element[0].count, 300);
    *raw = r->element[0].value / 300;
    *comp = r->element[0].compensated_value / 300;
    if (simulate) {
        /* Every reference was simulated: each sweep of A hits L1 on the
         * 7 reads of each line after its first (A is larger than L1). */
        assert_true(thread_value(hits, 0) >= 300.0 * (kReadsA - kLinesA));
        MRI_Overhead_Calibration c;
        assert_int_equal(MRI_Get_Overhead_Calibration(&c), MRI_OK);
        const MRI_Overhead_Value *v = &c.kind[MRI_OVERHEAD_CACHE_SIMULATOR];
        print_message("recording: %.2f ns per reference (%s)\n", v->delta_inclusive, v->note);
        assert_true(v->calibrated);
        assert_true(v->delta_inclusive >= 0.0 && v->delta_inclusive < 1000.0);
        assert_true(v->delta_own == 0.0);
        assert_non_null(strstr(v->note, "per reference"));
        /* The simulation ran where it was asked to. */
        char cfg[512];
        assert_int_equal(MRI_Get_Cache_Configuration(cfg, sizeof cfg), MRI_OK);
        const int threaded = strstr(cfg, "simulated by a thread of its own") != NULL;
        assert_int_equal(threaded, strcmp(async, "1") == 0);
    }
    assert_int_equal(MRI_Finalize(), MRI_OK);
    return *raw;
}

/* One set of SIM_RUNS runs; returns NULL when its medians hold the bounds
 * (or under a sanitizer, where they are only printed), else why not, in
 * `why`. */
static const char *simulation_set(char *why, size_t size)
{
    double share[SIM_RUNS], share_async[SIM_RUNS], dormant[SIM_RUNS], simulated[SIM_RUNS];
    for (int run = 0; run < SIM_RUNS; run++) {
        double t0, t0_comp, raw, comp, raw_async, comp_async;
        mean_sweep(0, "0", &t0, &t0_comp);
        mean_sweep(1, "0", &raw, &comp);
        mean_sweep(1, "1", &raw_async, &comp_async);
        print_message("sweep: %.0f ns dormant, %.0f ns simulated, %.0f ns compensated (%.1f%% of the added time "
                      "left); on the simulation thread %.0f ns, %.0f ns compensated (%.1f%%)\n",
                      t0, raw, comp, 100.0 * (comp - t0) / (raw - t0), raw_async, comp_async,
                      100.0 * (comp_async - t0) / (raw - t0));
        assert_true(comp < raw);
        assert_true(comp_async <= raw_async);
        share[run] = (comp - t0) / (raw - t0);
        share_async[run] = (comp_async - t0) / (raw - t0);
        dormant[run] = t0;
        simulated[run] = raw;
    }
    if (MRI_TEST_SANITIZED) return NULL; /* the figures are printed above (mri_test_helpers.h) */
    /* The shares mean something only if simulating adds time well beyond
     * the noise (with the hits counted, at least twice what the sweep
     * itself takes; mean_sweep). Medians: one process in a few dozen ran its
     * dormant sweeps a third slower. */
    const double t0 = median(dormant, SIM_RUNS), raw = median(simulated, SIM_RUNS);
    const double m = median(share, SIM_RUNS), m_async = median(share_async, SIM_RUNS);
    if (raw < 1.5 * t0)
        snprintf(why, size, "simulating added only %.0f ns to %.0f ns (medians)", raw - t0, t0);
    else if (fabs(m) > 0.25)
        snprintf(why, size, "the median run left %.1f%% of the simulation's time, not within 25%%", 100.0 * m);
    else if (fabs(m_async) > 0.25)
        snprintf(why, size,
                 "on the simulation thread, the median run left %.1f%% of what simulating in place added, not "
                 "within 25%%",
                 100.0 * m_async);
    else
        return NULL;
    return why;
}

/* Up to SIM_SETS sets: a set whose median misses a bound is run again, and
 * the check fails only when every set missed. Through the callbacks (the
 * build without the plugin) the runs' shares centre on -11%; in 20 sets
 * of 5 on a Zen 3 guest the sets' medians came out at -5 to -25% in place
 * and -4 to -22% on the simulation thread, and at -35.7% in one CI run,
 * where the recording was calibrated at 1.2 to 1.5 ns a reference in
 * nine processes of ten and at 0.32 in the other: phases of the host,
 * not the compensation. A compensation that is off by more than the bound misses
 * it in every set. */
#define SIM_SETS 3

/* Data structures that overlap (A and A_tail, its second half), in a
 * histogram over all of them: they are packed one after the other, so a
 * bin holding A's end and A_tail's start covers both pieces' addresses
 * (its end was A_tail's piece's, below its beginning). */
static void test_histogram_of_overlapping_data_structures(void **state)
{
    (void)state;
    char *argv[] = {(char *)cacheapp(), (char *)"overlap", NULL};
    load_mode(argv);
    MRI_Data_Structure_Spec a = data("A");
    MRI_Data_Structure_Info ai;
    assert_int_equal(MRI_Get_Data_Structure_Info(&a, &ai), MRI_OK);
    MRI_Runtime_Information_Spec ri = MRI_LC1_DATA_READ_MISS;
    MRI_Region_Spec sweep = region("sweep");
    MRI_Region_Table regions = {&sweep, 1};
    int bins = 5; /* 96 KiB packed: bin 3 holds A's last 5 KiB and A_tail's first 14 KiB */
    const MRI_Request_ID id = MRI_Histogram_Request(&ri, &regions, NULL, NULL, &bins);
    if (id < 0) fail_msg("histogram: %s", MRI_Get_Error_Message());
    run_to_end();
    const MRI_Histogram_Request_Results *h = hist_data(id);
    assert_int_equal(h->nr_Elements, 5);
    double total = 0;
    int both = 0;
    for (int i = 0; i < h->nr_Elements; i++) {
        const MRI_Histogram_Bin *bin = &h->element[i];
        assert_true(bin->address_begin < bin->address_end);
        assert_true(bin->address_begin >= ai.address && bin->address_end <= ai.address + ai.size_bytes);
        total += bin->value;
        if (bin->data_structures.nr_Elements == 2) {
            ++both;
            assert_int_equal(bin->address_begin, ai.address + ai.size_bytes / 2); /* A_tail's first byte */
            assert_int_equal(bin->address_end, ai.address + ai.size_bytes);       /* A's last, plus one */
        }
    }
    assert_int_equal(both, 1);
    assert_true(total == kLinesA + kLinesA / 2);
}

static void test_simulation_is_compensated(void **state)
{
    (void)state;
    const char *given = getenv("MRI_CACHESIM_ASYNC");
    char *saved = given ? strdup(given) : NULL;
    char why[256];
    const char *failed = NULL;
    for (int set = 0; set < SIM_SETS; set++) {
        failed = simulation_set(why, sizeof why);
        if (failed == NULL) break;
        print_message("set %d of %d: %s%s\n", set + 1, SIM_SETS, failed,
                      set + 1 < SIM_SETS ? "; running the set again" : "");
    }
    if (saved) {
        setenv("MRI_CACHESIM_ASYNC", saved, 1);
        free(saved);
    } else {
        unsetenv("MRI_CACHESIM_ASYNC");
    }
    if (failed) fail_msg("%s, in each of %d sets of %d runs", failed, SIM_SETS, SIM_RUNS);
}

/* References that straddle two lines (mri_cacheapp straddle): one L1
 * event per line, in every mode; where the simulator is split
 * (MRI_CACHESIM_SPLIT, CTest's cachesim_backend_split2 and _split8), the
 * reads whose lines are of different parts are recorded for both parts. */
static void test_straddling_references(void **state)
{
    (void)state;
    char *argv[] = {(char *)cacheapp(), (char *)"straddle", NULL};
    load_mode(argv);
    const MRI_Request_ID misses = cache_aggregate(MRI_LC1_DATA_READ_MISS, "straddle", "B", MRI_SUM);
    const MRI_Request_ID hits = cache_aggregate(MRI_LC1_DATA_READ_HIT, "straddle", "B", MRI_SUM);
    run_to_end();
    assert_int_equal((long)thread_value(misses, 0), kLinesB);
    assert_int_equal((long)thread_value(hits, 0), kLinesB - 2);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* Signal handlers that record references (mri_cacheapp signals): a
 * SIGALRM every 100 us reads all of S, most often while its thread hands
 * a batch of references to the simulator. Before, a handler in a hand-over
 * wrote over the batch being read: its reads were simulated twice and
 * some of A's not at all (1.03 million reads of S for 1980 handler runs
 * of 512, 34 000 of A's 12.3 million lost), and where the handler's own
 * references filled the buffer while it had interrupted the program's
 * recording of one reference, the buffer's older slots were simulated a
 * second time (72 000 reads of A too many). Now the handler's references
 * wait aside during a hand-over and come right after the batch. What is
 * left: where a handler interrupts the recording of a reference, or of a
 * run of them recorded inline, the handler's first references or the
 * program's are lost (mri_cachesim_abi.h): one at most per handler run
 * through the callbacks, a run's length inline. The handler itself is
 * never interrupted (SIGALRM is blocked in it). */
static void test_signal_handlers_record_during_a_hand_over(void **state)
{
    (void)state;
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer runs handlers at points of its own, and stops the
     * program (halt_on_error) at what a handler whose references fill its
     * buffer does: it hands the buffer over inside the handler, through
     * code that is not async-signal-safe (backends/cachesim/README.md). */
    skip();
#endif
    char path[] = "/tmp/mri_cacheapp_signals_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    enum { kPasses = 1500, kReadsS = 64 };
    char *argv[] = {(char *)cacheapp(), (char *)"signals", (char *)"1500", path, NULL};
    /* The program's standard error, to see whether its handlers filled the
     * set-aside room (2048 references) during a hand-over: a hand-over that
     * waits 3.2 ms for the simulation thread on a busy machine lets 32
     * handler runs in, and the backend drops the rest and says so. Shown
     * again below. */
    char err_path[] = "/tmp/mri_cacheapp_signals_err_XXXXXX";
    const int err_fd = mkstemp(err_path);
    assert_true(err_fd >= 0);
    fflush(stderr);
    const int saved_err = dup(2);
    assert_true(saved_err >= 0 && dup2(err_fd, 2) == 2);
    load_mode(argv);
    const MRI_Request_ID s_misses = cache_aggregate(MRI_LC1_DATA_READ_MISS, "main", "S", MRI_SUM);
    const MRI_Request_ID s_hits = cache_aggregate(MRI_LC1_DATA_READ_HIT, "main", "S", MRI_SUM);
    const MRI_Request_ID a_misses = cache_aggregate(MRI_LC1_DATA_READ_MISS, "main", "A", MRI_SUM);
    const MRI_Request_ID a_hits = cache_aggregate(MRI_LC1_DATA_READ_HIT, "main", "A", MRI_SUM);
    run_to_end();
    fflush(stderr);
    assert_true(dup2(saved_err, 2) == 2);
    close(saved_err);
    char err[4096];
    const ssize_t err_bytes = pread(err_fd, err, sizeof err - 1, 0);
    close(err_fd);
    unlink(err_path);
    err[err_bytes > 0 ? err_bytes : 0] = '\0';
    fputs(err, stderr);
    const int overflowed = strstr(err, "recorded more than 2048 memory references") != NULL;
    FILE *f = fopen(path, "r");
    int handled = -1;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &handled), 1);
    fclose(f);
    unlink(path);
    const long s_reads = (long)(thread_value(s_misses, 0) + thread_value(s_hits, 0));
    const long a_reads = (long)(thread_value(a_misses, 0) + thread_value(a_hits, 0));
    const long s_made = (long)kReadsS * handled, a_made = (long)kPasses * kReadsA;
    const int inline_runs = strcmp(cacheapp_instrumentation(), "plugin") == 0;
    print_message("signals (%s): %d handler runs, %ld of their %ld reads of S simulated%s, %ld of the program's %ld "
                  "reads of A\n",
                  cacheapp_instrumentation(), handled, s_reads, s_made,
                  overflowed ? " (the set-aside room overflowed: only an upper bound)" : "", a_reads, a_made);
    assert_true(handled >= 50); /* the timer did run */
    if (inline_runs) {
        /* A run that a handler interrupts either writes over the handler's
         * first references or has its own written over: a run's length at
         * most (the sweep's runs are shorter than 16), lost to one side. */
        if (s_reads > s_made || (!overflowed && s_reads < s_made - 16L * handled))
            fail_msg("%ld reads of S simulated, the handlers made %ld in %d runs", s_reads, s_made, handled);
        if (a_reads > a_made || a_reads < a_made - 16L * handled)
            fail_msg("%ld reads of A simulated, the program made %ld and %d handler runs can drop 16 each", a_reads,
                     a_made, handled);
    } else {
        /* A handler that runs between the callback's write and its commit
         * has its first reference written over by the program's (S loses
         * one). One that runs between the commit's compare and its store
         * keeps its first reference, in the program's slot, and the store
         * puts the cursor back over its other 63, which the program's next
         * references write over (S loses 63, A one): S's loss beyond one
         * per run is at most 63 for each read of A lost. A's are lost
         * otherwise too (a handler that fills the buffer during a
         * callback's write), which only widens the bound. Measured on 20
         * quiet runs: 300 to 1,700 of about 99,000 lost. */
        const long a_lost = a_made > a_reads ? a_made - a_reads : 0;
        if (s_reads > s_made || (!overflowed && s_reads < s_made - handled - (kReadsS - 1) * a_lost))
            fail_msg("%ld reads of S simulated, the handlers made %ld in %d runs, %ld reads of A lost", s_reads,
                     s_made, handled, a_lost);
        if (a_reads > a_made + handled || a_reads < a_made - handled)
            fail_msg("%ld reads of A simulated, the program made %ld and %d handler runs can move one each", a_reads,
                     a_made, handled);
    }
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* 32-byte AVX loads (mri_cacheapp vector): recorded inline, whole (one L1
 * event per line: a miss, then a hit); the callbacks have no entry for
 * them. */
static void test_vector_references(void **state)
{
    (void)state;
    if (!__builtin_cpu_supports("avx")) skip();
    const char *how = cacheapp_instrumentation();
    const long expected = strcmp(how, "plugin") == 0 ? kLinesA : 0;
    char *argv[] = {(char *)cacheapp(), (char *)"vector", NULL};
    load_mode(argv);
    const MRI_Request_ID misses = cache_aggregate(MRI_LC1_DATA_READ_MISS, "vector", "A", MRI_SUM);
    const MRI_Request_ID hits = cache_aggregate(MRI_LC1_DATA_READ_HIT, "vector", "A", MRI_SUM);
    run_to_end();
    print_message("vector (%s): %.0f L1 read misses, %.0f hits\n", how, thread_value(misses, 0), thread_value(hits, 0));
    assert_int_equal((long)thread_value(misses, 0), expected);
    assert_int_equal((long)thread_value(hits, 0), expected);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* The load fails for each of `values` of the environment variable `name`,
 * saying `name="value": ` and then `reason`; the variable is left as it
 * was. */
static void expect_refused(const char *name, const char *const *values, size_t n, const char *reason, char **argv)
{
    const char *given = getenv(name);
    char *saved = given ? strdup(given) : NULL;
    for (size_t i = 0; i < n; ++i) {
        setenv(name, values[i], 1);
        char want[160];
        snprintf(want, sizeof want, "%s=\"%s\": %s", name, values[i], reason);
        expect_error(MRI_Application_Load(cacheapp(), argv), want);
    }
    if (saved) {
        setenv(name, saved, 1);
        free(saved);
    } else {
        unsetenv(name);
    }
}

/* Bad simulator configurations: from the environment (at the load) and
 * through the API. */
static void test_bad_configuration(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    expect_error(MRI_Set_Cache_Configuration("L1:24K,8,64"), "L1: 48 sets is not a power of two");
    expect_error(MRI_Set_Cache_Configuration("L1:32K,8,64;bogus"), "cache configuration \"L1:32K,8,64;bogus\"");
    setenv("MRI_CACHESIM_CONFIG", "L1:32K,8,64;L2:256K,8,32", 1);
    char *argv[] = {(char *)cacheapp(), (char *)"sweep", (char *)"1", (char *)"1", NULL};
    expect_error(MRI_Application_Load(cacheapp(), argv), "MRI_CACHESIM_CONFIG \"L1:32K,8,64;L2:256K,8,32\": L2: line size 32 is smaller");
    unsetenv("MRI_CACHESIM_CONFIG");
    /* Where the simulation runs: 0 or 1, nothing else. */
    const char *bad_asyncs[] = {"yes"};
    expect_refused("MRI_CACHESIM_ASYNC", bad_asyncs, 1, "0", argv);
    /* How it is split: 0, 1, a power of two up to 64, or auto. */
    const char *bad_splits[] = {"3", "128", "-2", "4x", " 4", "Auto"};
    expect_refused("MRI_CACHESIM_SPLIT", bad_splits, sizeof bad_splits / sizeof *bad_splits, "0 or 1", argv);
    /* When auto splits: a count of hand-overs. */
    const char *bad_afters[] = {"-1", "x", "2000000", "8 "};
    expect_refused("MRI_CACHESIM_SPLIT_AFTER", bad_afters, sizeof bad_afters / sizeof *bad_afters,
                   "a number of hand-overs", argv);
    /* When batches are condensed: 0, 1 or auto. */
    const char *bad_condenses[] = {"2", "yes", "Auto", "1 "};
    expect_refused("MRI_CACHESIM_CONDENSE", bad_condenses, sizeof bad_condenses / sizeof *bad_condenses,
                   "0 (never), 1 (every batch", argv);
    /* Whether the simulator searches sets with AVX-512: 0 or 1. */
    const char *bad_vectors[] = {"yes", "2", "auto"};
    expect_refused("MRI_CACHESIM_VECTOR", bad_vectors, 3, "0 (search the cache sets one way at a time)", argv);
    /* Whether the automatic split says what it does: 0 or 1. */
    const char *bad_logs[] = {"yes", "2"};
    expect_refused("MRI_CACHESIM_SPLIT_LOG", bad_logs, 2, "0 (quiet) or 1", argv);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* The program never opens a path from the segment. A configuration text
 * that starts with '@' there is an invalid configuration, refused with the
 * reason, and the program runs to its end; before, the program read the
 * named file (/dev/zero until its memory ran out, a FIFO blocked its
 * control thread for ever). The tool resolves "@FILE" itself, so only a
 * peer that writes the segment, as this test does, can put one there: it
 * names a valid configuration file, which the program must not take. */
static void test_program_reads_no_file_named_in_the_segment(void **state)
{
    (void)state;
    char path[] = "/tmp/mri_cache_config_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char config[] = "L1:32K,8,64;L2:256K,8,64\n";
    assert_int_equal(write(fd, config, sizeof config - 1), (long)(sizeof config - 1));
    close(fd);
    load_app("1", "1");
    char *text = mri_test_cache_config();
    assert_non_null(text);
    snprintf(text, mri_test_cache_config_bytes(), "@%s", path);
    const MRI_Request_ID misses = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    run_to_end();
    void *p;
    expect_error(MRI_Get_Data(misses, &p), "the tool's configuration text starts with '@' (a file name); the program "
                                           "reads no file the tool names");
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    /* The way a file gets there: the tool reads it and sends its
     * configuration. */
    assert_int_equal(MRI_Finalize(), MRI_OK);
    assert_int_equal(MRI_Init(), MRI_OK);
    char arg[64];
    snprintf(arg, sizeof arg, "@%s", path);
    if (MRI_Set_Cache_Configuration(arg) != MRI_OK) fail_msg("config: %s", MRI_Get_Error_Message());
    char *argv[] = {(char *)cacheapp(), (char *)"sweep", (char *)"1", (char *)"1", NULL};
    if (MRI_Application_Load(cacheapp(), argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    assert_string_equal(mri_test_cache_config(), "L1:32K,8,64,lru,private,wb,wa;L2:256K,8,64,lru,private,wb,wa;cores=1");
    const MRI_Request_ID again = cache_aggregate(MRI_LC1_DATA_READ_MISS, "sweep", "A", MRI_SUM);
    run_to_end();
    assert_int_equal((long)thread_value(again, 0), kLinesA);
    unlink(path);
}

/* An application without the instrumentation: data structures and
 * histograms are refused with the reason. */
static void test_without_backend(void **state)
{
    (void)state;
    char *argv[] = {(char *)MRI_TESTAPP, (char *)"steps", (char *)"2", (char *)"1", NULL};
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    MRI_Runtime_Information_Spec ri = MRI_LC1_DATA_READ_MISS;
    MRI_Region_Spec r = region("step");
    MRI_Region_Table regions = {&r, 1};
    int bins = 10;
    expect_error(MRI_Histogram_Request(&ri, &regions, NULL, NULL, &bins), "needs the cache-simulator backend");
    MRI_Runtime_Information_Spec hits = MRI_LC1_DATA_READ_HIT;
    MRI_Aggregation_Spec agg = {MRI_SUM, MRI_PER_THREAD};
    expect_error(MRI_Aggregate_Request(&hits, &regions, NULL, NULL, &agg), "counting hits needs the cache-simulator backend");
    MRI_Data_Structure_Table t;
    assert_int_equal(MRI_Get_Data_Structures(&t), MRI_OK);
    assert_int_equal(t.nr_Elements, 0);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* A long run as an automatic analyser makes it: 600 stops at the end of
 * "sweep" (one pass over A each), and at every other stop one histogram
 * over A deleted and another made (1 to 8 in place, 16, 64 or 1024 bins,
 * so every histogram slot is reused many times), and an aggregate of A's
 * misses deleted and made anew. Every bin of every histogram holds the
 * lines it covers times the sweeps since it was applied, every aggregate
 * 1024 per sweep; the application's descriptors, threads and anonymous
 * memory do not grow from the 300th stop on. */
static void test_histogram_churn_over_many_stops(void **state)
{
    (void)state;
    load_app("1000000000", "1");
    MRI_Region_Spec sweep = region("sweep");
    MRI_Region_Table regions = {&sweep, 1};
    MRI_Data_Structure_Spec a = data("A");
    MRI_Data_Structure_Table variables = {&a, 1};
    MRI_Runtime_Information_Spec misses = MRI_LC1_DATA_READ_MISS;
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    struct { MRI_Request_ID id; int first, bins; } hist[8];
    int nhist = 0, made = 0, agg_first = 1;
    MRI_Request_ID agg = cache_aggregate(misses, "sweep", "A", MRI_SUM);
    const int bin_choices[] = {16, 64, 1024}, stops = 600;
    long anon = 0, threads = 0;
    for (int release = 1; release <= stops; ++release) {
        if (release % 2 == 0) {
            if (nhist == 8 || (nhist > 0 && release % 6 == 0)) {
                const int victim = (release / 2) % nhist;
                assert_int_equal(MRI_Request_Delete(hist[victim].id), MRI_OK);
                hist[victim] = hist[nhist - 1];
                --nhist;
            }
            int bins = bin_choices[made % 3];
            const MRI_Request_ID id = MRI_Histogram_Request(&misses, &regions, NULL, &variables, &bins);
            if (id < 0) fail_msg("stop %d: histogram request: %s", release, MRI_Get_Error_Message());
            hist[nhist].id = id;
            hist[nhist].first = release;
            hist[nhist++].bins = bins;
            ++made;
            assert_int_equal(MRI_Request_Delete(agg), MRI_OK);
            agg = cache_aggregate(misses, "sweep", "A", MRI_SUM);
            agg_first = release;
        }
        assert_int_equal(MRI_Start_Stop(&sweep), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        assert_int_equal(thread_value(agg, 0), kLinesA * (release - agg_first + 1));
        for (int h = 0; h < nhist; ++h) {
            const MRI_Histogram_Request_Results *r = hist_data(hist[h].id);
            const unsigned long long sweeps = (unsigned long long)(release - hist[h].first + 1);
            assert_int_equal(r->active, 1);
            assert_int_equal(r->nr_Elements, hist[h].bins);
            for (int b = 0; b < r->nr_Elements; ++b)
                if (r->element[b].value != sweeps * (kLinesA / hist[h].bins))
                    fail_msg("stop %d: histogram %d bin %d holds %llu, want %llu", release, hist[h].id, b,
                             r->element[b].value, sweeps * (kLinesA / hist[h].bins));
        }
        if (release == stops / 2) {
            anon = proc_status(info.pid, "RssAnon");
            threads = proc_status(info.pid, "Threads");
        }
    }
    /* Deleted histograms handed their slots on: the ones left are in place. */
    assert_true(made > 8);
    print_message("%d histograms made; the application: %ld -> %ld kB anonymous, %ld -> %ld threads\n", made, anon,
                  proc_status(info.pid, "RssAnon"), threads, proc_status(info.pid, "Threads"));
    assert_int_equal(proc_status(info.pid, "Threads"), threads);
    if (!MRI_TEST_SANITIZED) assert_true(proc_status(info.pid, "RssAnon") - anon <= 64);
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.bad_requests, 0);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

/* After a failed assertion the test left its session open: close it, so
 * that the next test starts afresh instead of failing in MRI_Init. */
static int teardown(void **state)
{
    (void)state;
    MRI_Finalize();
    return 0;
}

int main(void)
{
    /* A CTest variant skips the tests whose run it would only repeat
     * (MRI_TEST_SKIP: a cmocka pattern; backends/cachesim/tests/CMakeLists.txt). */
    const char *skip = getenv("MRI_TEST_SKIP");
    if (skip && *skip) cmocka_set_skip_filter(skip);
    /* And only those that match MRI_TEST_ONLY (a cmocka pattern), to
     * repeat one test by hand. */
    const char *only = getenv("MRI_TEST_ONLY");
    if (only && *only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_data_structures_published, teardown),
        cmocka_unit_test_teardown(test_restricted_aggregates, teardown),
        cmocka_unit_test_teardown(test_thread_with_a_small_stack, teardown),
        cmocka_unit_test_teardown(test_threads_one_after_another, teardown),
        cmocka_unit_test_teardown(test_threads_beyond_max_threads_count_for_nobody, teardown),
        cmocka_unit_test_teardown(test_finish_ends_the_open_instances, teardown),
        cmocka_unit_test_teardown(test_finish_ends_cache_only_instances, teardown),
        cmocka_unit_test_teardown(test_trace_values_of_instances_open_at_the_end, teardown),
        cmocka_unit_test_teardown(test_thread_parked_at_an_enter_keeps_its_references, teardown),
        cmocka_unit_test_teardown(test_thread_running_at_the_end_is_waited_for, teardown),
        cmocka_unit_test_teardown(test_thread_asleep_at_the_end_is_waited_for, teardown),
        cmocka_unit_test_teardown(test_end_that_passes_a_thread_that_ran_says_so, teardown),
        cmocka_unit_test_teardown(test_end_that_gives_up_on_a_thread_says_so, teardown),
        cmocka_unit_test_teardown(test_data_structure_ended_and_registered_again, teardown),
        cmocka_unit_test_teardown(test_histograms, teardown),
        cmocka_unit_test_teardown(test_histogram_of_overlapping_data_structures, teardown),
        cmocka_unit_test_teardown(test_signal_handlers_record_during_a_hand_over, teardown),
        cmocka_unit_test_teardown(test_histogram_churn_over_many_stops, teardown),
        cmocka_unit_test_teardown(test_profiles, teardown),
        cmocka_unit_test_teardown(test_traces, teardown),
        cmocka_unit_test_teardown(test_fork_while_simulating, teardown),
        cmocka_unit_test_teardown(test_simulation_is_compensated, teardown),
        cmocka_unit_test_teardown(test_straddling_references, teardown),
        cmocka_unit_test_teardown(test_vector_references, teardown),
        cmocka_unit_test_teardown(test_bad_configuration, teardown),
        cmocka_unit_test_teardown(test_program_reads_no_file_named_in_the_segment, teardown),
        cmocka_unit_test_teardown(test_without_backend, teardown),
    };
    mri_test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_trace - trace requests and their delivery through the call-back
 * (paper sections 3.3 and 4.4), and the calling context of callpath
 * profiles; tool and application in two processes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "mri.h"
#include "mri_test_helpers.h"

#define MAX_THREADS 8
#define MAX_DEPTH 64

/* What the call-back saw, per thread: a stack to check the nesting of
 * REGION_EVENT records, counts per region line, the last timestamp. */
struct thread_view {
    unsigned long long records, enters, exits, synthetic_exits, values;
    unsigned long long last_timestamp;
    int depth, max_depth, misnested, backwards;
    MRI_Region_Spec stack[MAX_DEPTH];
};
static struct thread_view seen[MAX_THREADS];
static unsigned long long other_threads, callbacks, value_sum;
static MRI_Region_Spec step_region, inner_region;
static unsigned long long step_values, inner_values, min_step_value = ~0ull, min_inner_value = ~0ull;
static int take_nothing;
static int slow, inside; /* set by the test; set by a slow call-back while it runs */

static int same(const MRI_Region_Spec *a, const MRI_Region_Spec *b)
{
    return a->type == b->type && a->id.file_ID == b->id.file_ID && a->id.line_NR == b->id.line_NR;
}

static void account(const MRI_Trace_Element_Spec *r)
{
    if (r->active_object.type != MRI_THREAD || r->active_object.id < 0 || r->active_object.id >= MAX_THREADS) {
        ++other_threads;
        return;
    }
    struct thread_view *v = &seen[r->active_object.id];
    ++v->records;
    if (r->timestamp < v->last_timestamp) ++v->backwards;
    v->last_timestamp = r->timestamp;
    if (r->event_type == MRI_REGION_EVENT) {
        if (r->data == MRI_TRACE_ENTER) {
            ++v->enters;
            if (v->depth < MAX_DEPTH) v->stack[v->depth] = r->region;
            ++v->depth;
            if (v->depth > v->max_depth) v->max_depth = v->depth;
        } else if (r->data == MRI_TRACE_EXIT || r->data == (MRI_TRACE_EXIT | MRI_TRACE_SYNTHETIC)) {
            ++v->exits;
            if (r->data & MRI_TRACE_SYNTHETIC) ++v->synthetic_exits;
            if (v->depth == 0 || (v->depth <= MAX_DEPTH && !same(&v->stack[v->depth - 1], &r->region)))
                ++v->misnested;
            else
                --v->depth;
        } else {
            ++v->misnested;
        }
    } else {
        ++v->values;
        value_sum += r->data;
        if (same(&r->region, &step_region)) {
            ++step_values;
            if (r->data < min_step_value) min_step_value = r->data;
        } else if (same(&r->region, &inner_region)) {
            ++inner_values;
            if (r->data < min_inner_value) min_inner_value = r->data;
        }
    }
}

/* The paper's way: first, then next until the buffer is empty. */
static void drain_callback(void)
{
    __atomic_add_fetch(&callbacks, 1, __ATOMIC_RELEASE);
    if (__atomic_load_n(&slow, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&inside, 1, __ATOMIC_RELEASE);
        struct timespec ms100 = {0, 100000000};
        nanosleep(&ms100, NULL);
        __atomic_store_n(&inside, 0, __ATOMIC_RELEASE);
    }
    if (take_nothing) return;
    for (MRI_Trace_Element_Spec *r = MRI_Get_First_Trace_Record(); r; r = MRI_Get_Next_Trace_Record()) account(r);
}

static void reset_views(void)
{
    memset(seen, 0, sizeof seen);
    other_threads = callbacks = value_sum = 0;
    step_values = inner_values = 0;
    min_step_value = min_inner_value = ~0ull;
    take_nothing = 0;
    slow = inside = 0;
}

static int setup(void **state)
{
    (void)state;
    reset_views();
    unsetenv("MRI_TRACE_WAIT_MS");
    return MRI_Init() == MRI_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    MRI_Register_Call_Back_Function(NULL);
    MRI_Finalize();
    MRI_Set_Trace_Buffer_Size(65536, 1u << 20);
    return 0;
}

static void load(char *const *argv)
{
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    step_region = region("step");
    inner_region = region("inner");
}

static MRI_Trace_Statistics stats_of(int thread)
{
    MRI_Trace_Statistics st;
    MRI_Active_Object_Spec ao = {MRI_THREAD, thread};
    if (MRI_Get_Trace_Statistics(&ao, &st) != MRI_OK) fail_msg("statistics: %s", MRI_Get_Error_Message());
    return st;
}

/* Takes every record the tool-side buffer holds (no call-back registered)
 * into the per-thread views; returns what the last call returned (0 when
 * the buffer ran empty, MRI_Error on a failure). */
static int take_all_records(void)
{
    MRI_Trace_Element_Spec chunk[64];
    int k;
    while ((k = MRI_Get_Trace_Records(chunk, 64)) > 0)
        for (int i = 0; i < k; ++i) account(&chunk[i]);
    return k;
}

/* REGION_EVENT over every region, three threads writing at once into rings
 * far smaller than the trace: the threads must wait for the tool, and not
 * one record may be lost. */
static void test_region_events_three_threads_small_rings(void **state)
{
    (void)state;
    const int n = 20000;
    assert_int_equal(MRI_Set_Trace_Buffer_Size(1024, 4096), MRI_OK);
    assert_int_equal(MRI_Register_Call_Back_Function(drain_callback), MRI_OK);
    char *argv[] = {"mri_testapp", "nested", "3", "20000", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    run_to_end();
    /* MRI_Wait returned TERMINATED: the final call-back has run. */
    assert_int_equal(other_threads, 0);
    unsigned long long waits = 0;
    for (int t = 0; t < 3; ++t) {
        const struct thread_view *v = &seen[t];
        /* Per step: step, inner, inner entered and left; thread 0 also main. */
        const unsigned long long expected = 6ull * n + (t == 0 ? 2 : 0);
        assert_int_equal(v->records, expected);
        assert_int_equal(v->enters, v->exits);
        assert_int_equal(v->misnested, 0);
        assert_int_equal(v->depth, 0);
        assert_int_equal(v->max_depth, t == 0 ? 3 : 2);
        assert_int_equal(v->backwards, 0);
        MRI_Trace_Statistics st = stats_of(t);
        assert_int_equal(st.emitted, expected);
        assert_int_equal(st.delivered, expected);
        assert_int_equal(st.discarded, 0);
        assert_int_equal(st.buffered, 0);
        waits += st.waits;
    }
    assert_true(waits > 0);      /* 120002 records through 1024-record rings */
    assert_true(callbacks > 1);  /* half-full call-backs, and the final one */
}

/* How often the thread waited for room so far (0 before its first record). */
static unsigned long long waits_of(int thread)
{
    MRI_Trace_Statistics st;
    MRI_Active_Object_Spec ao = {MRI_THREAD, thread};
    return MRI_Get_Trace_Statistics(&ao, &st) == MRI_OK ? st.waits : 0;
}

/* The tool stops and releases the application again and again while the
 * rings are full and it takes no record: a thread waiting for room keeps
 * the record of the event the stop interrupted aside. It must write those
 * before its next event's, not keep one more aside at every stop: with the
 * tool alive and within the wait bound, not one record may be discarded. */
static void test_repeated_stops_while_the_rings_are_full(void **state)
{
    (void)state;
    assert_int_equal(MRI_Set_Trace_Buffer_Size(1024, 1024), MRI_OK);
    char *argv[] = {"mri_testapp", "nested", "2", "3000", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    for (int k = 0; k < 40; ++k) {
        /* Released, the main thread finds its ring full (again) and waits
         * for room; then the stop interrupts the wait. */
        const unsigned long long waits = waits_of(0);
        assert_int_equal(MRI_Start(), MRI_OK);
        while (waits_of(0) == waits) assert_int_equal(MRI_Wait_Timeout(1), MRI_APPLICATION_RUNNING);
        assert_int_equal(MRI_Stop(), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    }
    assert_int_equal(MRI_Start(), MRI_OK);
    /* Now take everything, as it comes, until the end. */
    MRI_Trace_Element_Spec chunk[300];
    int k, status;
    do {
        status = MRI_Wait_Timeout(1);
        while ((k = MRI_Get_Trace_Records(chunk, 300)) > 0)
            for (int i = 0; i < k; ++i) account(&chunk[i]);
    } while (status != MRI_APPLICATION_TERMINATED);
    while ((k = MRI_Get_Trace_Records(chunk, 300)) > 0)
        for (int i = 0; i < k; ++i) account(&chunk[i]);
    for (int t = 0; t < 2; ++t) {
        MRI_Trace_Statistics st = stats_of(t);
        assert_int_equal(st.discarded, 0);
        assert_int_equal(st.buffered, 0);
        assert_int_equal(st.delivered, st.emitted);
        assert_int_equal(st.emitted, 6ull * 3000 + (t == 0 ? 2 : 0));
        assert_int_equal(seen[t].misnested, 0);
    }
}

/* Without a call-back: the tool takes the records after the end, until
 * nothing comes. The buffer was full when the application ended (the
 * threads gave up waiting after 50 ms and discarded), so records were left
 * in the rings: taking them must move those in too, and then nothing is
 * left buffered (they were stranded until the collector's next poll). */
static void test_records_taken_after_the_end_without_a_call_back(void **state)
{
    (void)state;
    setenv("MRI_TRACE_WAIT_MS", "50", 1);
    assert_int_equal(MRI_Set_Trace_Buffer_Size(1024, 1024), MRI_OK);
    char *argv[] = {"mri_testapp", "nested", "2", "2000", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    run_to_end();
    assert_int_equal(take_all_records(), 0);
    for (int t = 0; t < 2; ++t) {
        MRI_Trace_Statistics st = stats_of(t);
        assert_int_equal(st.buffered, 0);
        assert_int_equal(st.delivered + st.discarded, st.emitted);
        assert_int_equal(seen[t].records, st.delivered);
        assert_int_equal(st.emitted, 6ull * 2000 + (t == 0 ? 2 : 0));
    }
}

/* exit() inside main: Monitor_Final ends main's open instance, and its
 * EXECUTION_TIME record is the thirteenth (4 steps and 8 inners before it).
 * It was written after the monitor had made the thread's records visible
 * for the last time (a thread does it 16 records at a time): lost, and not
 * counted as emitted. */
static void test_exit_delivers_the_records_of_the_instances_it_ends(void **state)
{
    (void)state;
    char *argv[] = {"mri_testapp", "exit", "4", "3", NULL};
    load(argv);
    MRI_Runtime_Information_Spec t = MRI_EXECUTION_TIME;
    MRI_Region_Spec main_region = region("main");
    MRI_Region_Table regions = {&main_region, 1};
    assert_true(MRI_Trace_Request(&t, &regions, NULL, NULL) > 0);
    run_to_end();
    MRI_Trace_Element_Spec chunk[64];
    int k;
    unsigned long long main_value = 0;
    while ((k = MRI_Get_Trace_Records(chunk, 64)) > 0)
        for (int i = 0; i < k; ++i) {
            account(&chunk[i]);
            if (same(&chunk[i].region, &main_region)) main_value = chunk[i].data;
        }
    assert_int_equal(step_values, 4);
    assert_int_equal(inner_values, 8);
    assert_int_equal(seen[0].values, 13);
    assert_true(main_value > 0);
    MRI_Trace_Statistics st = stats_of(0);
    assert_int_equal(st.emitted, 13);
    assert_int_equal(st.delivered, 13);
    assert_int_equal(st.discarded, 0);
}

/* The program replaces itself with exec() after 20 records (main's enter,
 * 3 steps of 6, the enter of the step around the exec): a thread makes its
 * records visible 16 at a time, and the last 4 were lost uncounted. Now
 * every record arrives, and the two instances open at the exec (main and
 * that step, only traced) get their exits there, marked synthetic, as at
 * an exit: 22 records (MRI_Get_Application_Status() says when the exec
 * came: exec_timestamp, not before any record). */
static void test_exec_publishes_every_record(void **state)
{
    (void)state;
    char *argv[] = {"mri_testapp", "exec", "3", "v", MRI_TESTAPP, "exit", "2", "0", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    run_to_end();
    assert_int_equal(take_all_records(), 0);
    MRI_Trace_Statistics st = stats_of(0);
    assert_int_equal(st.emitted, 22);
    assert_int_equal(st.delivered, 22);
    assert_int_equal(st.discarded, 0);
    assert_int_equal(st.buffered, 0);
    assert_int_equal(seen[0].records, 22);
    assert_int_equal(seen[0].enters, 11);
    assert_int_equal(seen[0].exits, 11);
    assert_int_equal(seen[0].synthetic_exits, 2); /* main and the step around the exec */
    assert_int_equal(seen[0].misnested, 0);
    assert_int_equal(seen[0].depth, 0);
    assert_int_equal(other_threads, 0);
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.exec_replaced, 1);
    assert_true(info.exec_timestamp >= seen[0].last_timestamp);
}

/* Without a call-back, at each breakpoint: the tool takes the records as
 * soon as MRI_Wait() returns, until nothing comes, and has every record
 * written before the stop (they were in the rings until the collector's
 * next poll, up to 2 ms later, so the tool often found none). */
static void test_records_taken_at_a_stop_without_a_call_back(void **state)
{
    (void)state;
    char *argv[] = {"mri_testapp", "steps", "21", "0", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    for (int k = 1; k <= 20; ++k) {
        assert_int_equal(MRI_Start_Stop(&step_region), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        MRI_Trace_Element_Spec chunk[16];
        int n;
        while ((n = MRI_Get_Trace_Records(chunk, 16)) > 0)
            for (int i = 0; i < n; ++i) account(&chunk[i]);
        assert_int_equal(n, 0);
        /* main entered; k steps with two inner each entered and left. */
        assert_int_equal(seen[0].enters, 1 + 3 * k);
        assert_int_equal(seen[0].exits, 3 * k);
        assert_int_equal(seen[0].misnested, 0);
        MRI_Trace_Statistics st = stats_of(0);
        assert_int_equal(st.buffered, 0);
        assert_int_equal(st.delivered, st.emitted);
    }
    /* The record functions one at a time, as the paper has them. */
    assert_int_equal(MRI_Start_Stop(&step_region), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    for (MRI_Trace_Element_Spec *r = MRI_Get_First_Trace_Record(); r; r = MRI_Get_Next_Trace_Record()) account(r);
    assert_int_equal(seen[0].enters, 1 + 3 * 21);
    assert_int_equal(seen[0].exits, 3 * 21);
    run_to_end();
}

/* A trace request made at a breakpoint, inside main (the usual way of an
 * analyser that changes its requests at stops): main's enter came before
 * the request, so its exit is not written either. Before, it came alone,
 * and a reader of the trace (OTF2) found a leave without its enter. */
static void test_request_at_a_stop_writes_no_exit_without_its_enter(void **state)
{
    (void)state;
    char *argv[] = {"mri_testapp", "steps", "4", "0", NULL};
    load(argv);
    assert_int_equal(MRI_Start_Stop(&step_region), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    run_to_end();
    take_all_records();
    /* The 3 steps after the stop, each with its two inner: whole. */
    assert_int_equal(seen[0].enters, 3 * 3);
    assert_int_equal(seen[0].exits, 3 * 3);
    assert_int_equal(seen[0].synthetic_exits, 0);
    assert_int_equal(seen[0].misnested, 0);
    assert_int_equal(seen[0].depth, 0);
    MRI_Trace_Statistics st = stats_of(0);
    assert_int_equal(st.emitted, 18);
    assert_int_equal(st.delivered, 18);
}

/* MRI_Finalize() ends the session's call-back with it: a tool that
 * registered one, finalised and initialised again (perhaps after
 * unloading the code of the old one) must not have it called in the new
 * session. Its records wait for the record functions. */
static void test_finalize_unregisters_the_call_back(void **state)
{
    (void)state;
    assert_int_equal(MRI_Register_Call_Back_Function(drain_callback), MRI_OK);
    assert_int_equal(MRI_Finalize(), MRI_OK);
    assert_int_equal(MRI_Init(), MRI_OK);
    char *argv[] = {"mri_testapp", "steps", "3", "0", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    run_to_end();
    assert_int_equal(callbacks, 0);
    take_all_records();
    assert_int_equal(seen[0].enters, 1 + 3 * 3);
    assert_int_equal(seen[0].exits, 1 + 3 * 3);
}

/* A trace request deleted at a stop, with its records not yet delivered,
 * and another of another kind placed at once: the records keep the type of
 * the request that wrote them (the new one took the deleted one's slot and
 * relabelled them). */
static void test_records_keep_their_request_type(void **state)
{
    (void)state;
    char *argv[] = {"mri_testapp", "steps", "10", "0", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT, time = MRI_EXECUTION_TIME;
    MRI_Region_Table all = {NULL, 0};
    const MRI_Request_ID events = MRI_Trace_Request(&ev, &all, NULL, NULL);
    assert_true(events > 0);
    assert_int_equal(MRI_Start_Stop(&step_region), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    assert_int_equal(MRI_Request_Delete(events), MRI_OK);
    assert_true(MRI_Trace_Request(&time, &all, NULL, NULL) > 0);
    run_to_end();
    take_all_records();
    /* The first step's events: main, step and two inner entered, all but
     * main left; then one value per instance of the other 9 steps (step
     * and two inner; main was entered before the request, so it has no
     * measured instance). */
    assert_int_equal(seen[0].enters, 4);
    assert_int_equal(seen[0].exits, 3);
    assert_int_equal(seen[0].misnested, 0);
    assert_int_equal(seen[0].values, 9 * 3);
}

/* The same when every other request record is taken (255 aggregates), so
 * that a new trace request could only take the deleted one's record: it is
 * refused with the reason until the deleted request's records have been
 * taken, which keep their type. (It took the record at once, and the
 * REGION_EVENT records came as EXECUTION_TIME values of 1 and 2.) */
static void test_deleted_trace_records_keep_their_type_when_records_run_out(void **state)
{
    (void)state;
    char *argv[] = {"mri_testapp", "steps", "10", "0", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT, time = MRI_EXECUTION_TIME;
    MRI_Region_Table all = {NULL, 0};
    const MRI_Request_ID events = MRI_Trace_Request(&ev, &all, NULL, NULL);
    assert_true(events > 0);
    int others = 0;
    while (request(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS) > 0) ++others;
    expect_error(MRI_Error, "too many requests: at most");
    assert_true(others > 0);
    assert_int_equal(MRI_Start_Stop(&step_region), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    assert_int_equal(MRI_Request_Delete(events), MRI_OK);
    expect_error(MRI_Trace_Request(&time, &all, NULL, NULL), "still holds trace records of deleted trace requests");
    /* An aggregate does not change the records' type: it may take it. */
    const MRI_Request_ID aggregate_there = request(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    assert_true(aggregate_there > 0);
    assert_int_equal(MRI_Request_Delete(aggregate_there), MRI_OK);
    MRI_Trace_Element_Spec chunk[64];
    int k;
    while ((k = MRI_Get_Trace_Records(chunk, 64)) > 0)
        for (int i = 0; i < k; ++i) {
            assert_int_equal(chunk[i].event_type, MRI_REGION_EVENT);
            account(&chunk[i]);
        }
    assert_int_equal(seen[0].enters, 4); /* main, step, inner, inner */
    assert_int_equal(seen[0].exits, 3);
    /* Taken: the record is free for a trace request again. */
    assert_true(MRI_Trace_Request(&time, &all, NULL, NULL) > 0);
    run_to_end();
    while ((k = MRI_Get_Trace_Records(chunk, 64)) > 0)
        for (int i = 0; i < k; ++i) {
            assert_int_equal(chunk[i].event_type, MRI_EXECUTION_TIME);
            account(&chunk[i]);
        }
    assert_int_equal(seen[0].values, 9 * 3);
    assert_int_equal(seen[0].enters, 4);
}

/* EXECUTION_TIME traces "step": one record per instance of step and of its
 * subregion inner, carrying the instance's time. */
static void test_execution_time_of_region_and_subregions(void **state)
{
    (void)state;
    assert_int_equal(MRI_Register_Call_Back_Function(drain_callback), MRI_OK);
    char *argv[] = {"mri_testapp", "steps", "40", "2", NULL};
    load(argv);
    MRI_Runtime_Information_Spec t = MRI_EXECUTION_TIME;
    MRI_Region_Spec step = region("step");
    MRI_Region_Table regions = {&step, 1};
    assert_true(MRI_Trace_Request(&t, &regions, NULL, NULL) > 0);
    run_to_end();
    assert_int_equal(step_values, 40);
    assert_int_equal(inner_values, 80);          /* subregions of step */
    assert_int_equal(seen[0].values, 120);       /* and nothing else: main is outside step */
    assert_int_equal(seen[0].enters + seen[0].exits, 0);
    assert_true(min_step_value >= 2 * kMs * 0.99);   /* a step sleeps 2 ms in all */
    assert_true(min_inner_value >= 0.5 * kMs * 0.99); /* an inner 0.5 ms */
}

/* Only the named thread is traced. */
static void test_thread_filter(void **state)
{
    (void)state;
    assert_int_equal(MRI_Register_Call_Back_Function(drain_callback), MRI_OK);
    char *argv[] = {"mri_testapp", "nested", "3", "1000", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Spec step = region("step");
    MRI_Region_Table regions = {&step, 1};
    MRI_Active_Object_Spec one = {MRI_THREAD, 1};
    MRI_Active_Object_Table threads = {&one, 1};
    assert_true(MRI_Trace_Request(&ev, &regions, &threads, NULL) > 0);
    run_to_end();
    assert_int_equal(seen[0].records, 0);
    assert_int_equal(seen[1].records, 6000); /* step and its two inners, entered and left */
    assert_int_equal(seen[2].records, 0);
    assert_int_equal(seen[1].misnested, 0);
}

/* MRI_Set_Trace_Subregions(id, 0): the named region's own instances only,
 * for both kinds of trace; the setting is refused for other requests. */
static void test_without_subregions(void **state)
{
    (void)state;
    assert_int_equal(MRI_Register_Call_Back_Function(drain_callback), MRI_OK);
    char *argv[] = {"mri_testapp", "nested", "2", "1000", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT, t = MRI_EXECUTION_TIME;
    MRI_Region_Spec step = region("step");
    MRI_Region_Table regions = {&step, 1};
    const MRI_Request_ID events = MRI_Trace_Request(&ev, &regions, NULL, NULL);
    const MRI_Request_ID values = MRI_Trace_Request(&t, &regions, NULL, NULL);
    assert_true(events > 0 && values > 0);
    assert_int_equal(MRI_Set_Trace_Subregions(events, 0), MRI_OK);
    assert_int_equal(MRI_Set_Trace_Subregions(values, 0), MRI_OK);
    MRI_Aggregation_Spec sum = {MRI_SUM, MRI_PER_THREAD};
    const MRI_Request_ID agg = MRI_Aggregate_Request(&t, &regions, NULL, NULL, &sum);
    assert_true(agg > 0);
    expect_error(MRI_Set_Trace_Subregions(agg, 0), "not a trace request");
    expect_error(MRI_Set_Trace_Subregions(98765, 0), "does not exist");
    run_to_end();
    for (int th = 0; th < 2; ++th) {
        assert_int_equal(seen[th].enters, 1000); /* step only: its two inners per step are not traced */
        assert_int_equal(seen[th].exits, 1000);
        assert_int_equal(seen[th].misnested, 0);
        assert_int_equal(seen[th].max_depth, 1);
        assert_int_equal(seen[th].values, 1000);
    }
    assert_int_equal(step_values, 2000);
    assert_int_equal(inner_values, 0);
}

/* The program calls exit() inside "main", "step" and "inner"; thread 1
 * ended with pthread_exit() inside "parent" and "child"; thread 2 is inside
 * "spin" at the exit. Every instance the program left open gets an exit
 * record, marked MRI_TRACE_SYNTHETIC, when its thread ends or at the end of
 * monitoring, innermost first, no earlier than the thread's other records:
 * each thread's trace is balanced. With `measured`, a profile request over
 * every region gives the regions frames too (the exiting thread's
 * instances are then measured at the end): still one exit per enter. */
static void exit_inside_regions(int measured)
{
    assert_int_equal(MRI_Register_Call_Back_Function(drain_callback), MRI_OK);
    char *argv[] = {"mri_testapp", "exit_inside", "3", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT, t = MRI_EXECUTION_TIME;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    MRI_Request_ID profile = 0;
    if (measured) assert_true((profile = MRI_Profile_Request(&t, NULL, NULL, NULL)) > 0);
    run_to_end();
    assert_int_equal(other_threads, 0);
    /* main + 3 steps with two inners each + step and inner; parent and
     * child; spin. */
    const unsigned long long enters[3] = {1 + 3 * 3 + 2, 2, 1}, synthetic[3] = {3, 2, 1};
    for (int th = 0; th < 3; ++th) {
        const struct thread_view *v = &seen[th];
        assert_int_equal(v->enters, enters[th]);
        assert_int_equal(v->exits, enters[th]);
        assert_int_equal(v->synthetic_exits, synthetic[th]);
        assert_int_equal(v->misnested, 0);
        assert_int_equal(v->depth, 0);
        assert_int_equal(v->backwards, 0);
        MRI_Trace_Statistics st = stats_of(th);
        assert_int_equal(st.emitted, 2 * enters[th]);
        assert_int_equal(st.delivered, 2 * enters[th]);
        assert_int_equal(st.discarded, 0);
    }
    if (!measured) return;
    /* Thread 1's "parent" and "child", ended by its pthread_exit(), are
     * measured at the thread's end, as main's instances at the exit: one
     * instance each, the child inside the parent. "spin", open on thread 2
     * when main calls exit(), is measured up to the exit. */
    void *p = NULL;
    assert_int_equal(MRI_Get_Data(profile, &p), MRI_OK);
    const MRI_Histogram_Profile_Results *f = p;
    const MRI_Region_Spec parent = region("parent"), child = region("child"), spin = region("spin");
    const MRI_Profile_Element *pe = NULL, *ce = NULL, *se = NULL;
    for (int i = 0; i < f->nr_Elements; ++i) {
        if (same(&f->element[i].region, &parent)) pe = &f->element[i];
        if (same(&f->element[i].region, &child)) ce = &f->element[i];
        if (same(&f->element[i].region, &spin)) se = &f->element[i];
    }
    assert_non_null(pe);
    assert_non_null(ce);
    assert_int_equal(pe->instances, 1);
    assert_int_equal(ce->instances, 1);
    assert_true(ce->inclusive > 0);
    assert_true(pe->inclusive >= ce->inclusive);
    assert_true(pe->exclusive <= pe->inclusive - ce->inclusive + 1e-9 * pe->inclusive);
    for (int a = 0; a < pe->nr_Active_Objects; ++a)
        assert_int_equal(pe->per_active_object[a].instances, pe->per_active_object[a].active_object.id == 1);
    assert_non_null(se);
    assert_int_equal(se->instances, 1);
    assert_true(se->inclusive > 0);
    for (int a = 0; a < se->nr_Active_Objects; ++a)
        assert_int_equal(se->per_active_object[a].instances, se->per_active_object[a].active_object.id == 2);
}

static void test_instances_open_at_the_end_get_exits(void **state)
{
    (void)state;
    exit_inside_regions(0);
}

static void test_measured_instances_open_at_the_end_get_one_exit(void **state)
{
    (void)state;
    exit_inside_regions(1);
}

/* longjmp() out of "inner" back into "step", 5 times: each inner's exit
 * is written, marked, when its step exits, before the step's: the trace
 * balances and nests. */
static void test_exits_skipped_by_longjmp_are_written(void **state)
{
    (void)state;
    assert_int_equal(MRI_Register_Call_Back_Function(drain_callback), MRI_OK);
    char *argv[] = {"mri_testapp", "jump", "5", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    run_to_end();
    const struct thread_view *v = &seen[0];
    assert_int_equal(v->enters, 1 + 2 * 5);
    assert_int_equal(v->exits, 1 + 2 * 5);
    assert_int_equal(v->synthetic_exits, 5);
    assert_int_equal(v->misnested, 0);
    assert_int_equal(v->depth, 0);
    assert_int_equal(v->backwards, 0);
}

/* A tool that never empties the buffer: every thread waits at most
 * MRI_TRACE_WAIT_MS, then discards, and every record is accounted for. */
static void test_hung_tool_turns_into_counted_discards(void **state)
{
    (void)state;
    setenv("MRI_TRACE_WAIT_MS", "200", 1);
    assert_int_equal(MRI_Set_Trace_Buffer_Size(1024, 1024), MRI_OK);
    take_nothing = 1;
    assert_int_equal(MRI_Register_Call_Back_Function(drain_callback), MRI_OK);
    char *argv[] = {"mri_testapp", "nested", "2", "5000", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    run_to_end();
    clock_gettime(CLOCK_MONOTONIC, &b);
    const double seconds = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    assert_true(seconds < 5.0); /* two threads, one bounded wait each */
    /* The call-back took nothing at the end: it is not called again on
     * the same records (it used to be, at every poll of the collector). */
    const unsigned long long at_end = __atomic_load_n(&callbacks, __ATOMIC_ACQUIRE);
    assert_true(at_end > 0);
    struct timespec ms50 = {0, 50000000};
    nanosleep(&ms50, NULL);
    assert_int_equal(__atomic_load_n(&callbacks, __ATOMIC_ACQUIRE), at_end);
    /* Registered again, it is called again on what is left; unregistering
     * while it runs (made slow: 100 ms) returns only after it returned. */
    __atomic_store_n(&slow, 1, __ATOMIC_RELEASE);
    assert_int_equal(MRI_Register_Call_Back_Function(drain_callback), MRI_OK);
    for (int spins = 0; !__atomic_load_n(&inside, __ATOMIC_ACQUIRE) && spins < 2000; ++spins) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    assert_true(__atomic_load_n(&inside, __ATOMIC_ACQUIRE)); /* caught it running */
    assert_int_equal(MRI_Register_Call_Back_Function(NULL), MRI_OK);
    assert_false(__atomic_load_n(&inside, __ATOMIC_ACQUIRE));
    assert_int_equal(__atomic_load_n(&callbacks, __ATOMIC_ACQUIRE), at_end + 1);
    /* Now empty the buffer without the call-back: what was kept arrives. */
    MRI_Trace_Statistics before[2] = {stats_of(0), stats_of(1)};
    unsigned long long kept = before[0].buffered + before[1].buffered, got = 0;
    MRI_Trace_Element_Spec chunk[512];
    for (int spins = 0; got < kept && spins < 5000; ++spins) {
        int k = MRI_Get_Trace_Records(chunk, 512);
        assert_true(k >= 0);
        for (int i = 0; i < k; ++i) account(&chunk[i]);
        got += (unsigned long long)k;
        if (k == 0) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    assert_int_equal(got, kept);
    for (int t = 0; t < 2; ++t) {
        MRI_Trace_Statistics st = stats_of(t);
        const unsigned long long expected = 6ull * 5000 + (t == 0 ? 2 : 0);
        assert_int_equal(st.emitted, expected);
        assert_true(st.discarded > 0);
        assert_int_equal(st.buffered, 0);
        assert_int_equal(st.delivered + st.discarded, st.emitted);
        assert_int_equal(seen[t].records, st.delivered);
        assert_true(st.wait_ns >= 0.2e9 * 0.95); /* it waited the bound once */
    }
}

/* What the call-back of the next test got from the calls that block
 * elsewhere, made while the application ran (its first call only). */
static struct {
    int tried, wait, wait_timeout, reregister, finalize, load, finish, stop;
    char wait_message[512], wait_timeout_message[512];
    int done; /* set last (release): the fields above are written */
} in_callback;

static void blocking_calls_callback(void)
{
    if (!in_callback.tried && MRI_No_Wait() == MRI_APPLICATION_RUNNING) {
        in_callback.tried = 1;
        in_callback.wait = MRI_Wait();
        snprintf(in_callback.wait_message, sizeof in_callback.wait_message, "%s", MRI_Get_Error_Message());
        in_callback.wait_timeout = MRI_Wait_Timeout(100);
        snprintf(in_callback.wait_timeout_message, sizeof in_callback.wait_timeout_message, "%s",
                 MRI_Get_Error_Message());
        in_callback.reregister = MRI_Register_Call_Back_Function(blocking_calls_callback);
        in_callback.finalize = MRI_Finalize();
        char *argv[] = {"mri_testapp", "steps", "1", "0", NULL};
        in_callback.load = MRI_Application_Load(MRI_TESTAPP, argv);
        in_callback.finish = MRI_Application_Finish();
        in_callback.stop = MRI_Stop();
        __atomic_store_n(&in_callback.done, 1, __ATOMIC_RELEASE);
    }
    for (MRI_Trace_Element_Spec *r = MRI_Get_First_Trace_Record(); r; r = MRI_Get_Next_Trace_Record()) account(r);
}

/* MRI_Wait() and MRI_Wait_Timeout() in the call-back while the application
 * runs: they fail at once with the reason. (They used to wait: the
 * call-back runs on the thread that moves the records, so the threads
 * waited for room for MRI_TRACE_WAIT_MS, then discarded records.) The
 * other calls that could wait do not: registering from the call-back,
 * MRI_Stop() (the application then stops, the tool's MRI_Wait() sees it);
 * MRI_Finalize, MRI_Application_Load and _Finish are refused. Not one
 * record is lost. */
static void test_blocking_calls_in_the_call_back(void **state)
{
    (void)state;
    setenv("MRI_TRACE_WAIT_MS", "2000", 1);
    memset(&in_callback, 0, sizeof in_callback);
    assert_int_equal(MRI_Set_Trace_Buffer_Size(1024, 4096), MRI_OK);
    assert_int_equal(MRI_Register_Call_Back_Function(blocking_calls_callback), MRI_OK);
    char *argv[] = {"mri_testapp", "nested", "2", "20000", NULL};
    load(argv);
    MRI_Runtime_Information_Spec ev = MRI_REGION_EVENT;
    MRI_Region_Table all = {NULL, 0};
    assert_true(MRI_Trace_Request(&ev, &all, NULL, NULL) > 0);
    assert_int_equal(MRI_Start(), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED); /* the call-back's MRI_Stop() */
    /* The stop reached this thread through the application, which orders
     * nothing between the two threads of this process: the call-back's
     * flag does (ThreadSanitizer saw the fields read unordered). */
    for (int i = 0; i < 10000 && !__atomic_load_n(&in_callback.done, __ATOMIC_ACQUIRE); ++i) {
        struct timespec ms1 = {0, 1000000};
        nanosleep(&ms1, NULL);
    }
    assert_int_equal(__atomic_load_n(&in_callback.done, __ATOMIC_ACQUIRE), 1);
    assert_int_equal(in_callback.tried, 1);
    assert_int_equal(in_callback.wait, MRI_Error);
    if (!strstr(in_callback.wait_message, "MRI_Wait cannot be called from the trace call-back"))
        fail_msg("MRI_Wait in the call-back: \"%s\"", in_callback.wait_message);
    assert_int_equal(in_callback.wait_timeout, MRI_Error);
    if (!strstr(in_callback.wait_timeout_message, "MRI_Wait_Timeout cannot be called from the trace call-back"))
        fail_msg("MRI_Wait_Timeout in the call-back: \"%s\"", in_callback.wait_timeout_message);
    assert_int_equal(in_callback.reregister, MRI_OK);
    assert_int_equal(in_callback.finalize, MRI_Error);
    assert_int_equal(in_callback.load, MRI_Error);
    assert_int_equal(in_callback.finish, MRI_Error);
    assert_int_equal(in_callback.stop, MRI_OK);
    run_to_end();
    for (int t = 0; t < 2; ++t) {
        MRI_Trace_Statistics st = stats_of(t);
        const unsigned long long expected = 6ull * 20000 + (t == 0 ? 2 : 0);
        assert_int_equal(st.emitted, expected);
        assert_int_equal(st.discarded, 0);
        assert_int_equal(st.delivered, expected);
        assert_int_equal(seen[t].records, expected);
        assert_int_equal(seen[t].misnested, 0);
    }
}

static const MRI_Callpath_Element *edge(const MRI_Callpath_Profile_Results *res, const char *caller, const char *callee)
{
    MRI_Region_Spec ce = region(callee), cr;
    if (caller) cr = region(caller);
    for (int i = 0; i < res->nr_Elements; ++i) {
        const MRI_Callpath_Element *e = &res->element[i];
        if (!same(&e->callee, &ce)) continue;
        if (caller ? (e->has_caller && same(&e->caller, &cr)) : !e->has_caller) return e;
    }
    fail_msg("no edge %s -> %s", caller ? caller : "(root)", callee);
    return NULL;
}

/* main -> step (N times) -> inner (twice per step): the callpath profile
 * has exactly these edges, with consistent times. */
static void test_callpath_profile(void **state)
{
    (void)state;
    char *argv[] = {"mri_testapp", "steps", "10", "2", NULL};
    load(argv);
    MRI_Runtime_Information_Spec t = MRI_EXECUTION_TIME;
    MRI_Region_Table all = {NULL, 0};
    MRI_Request_ID id = MRI_Callpath_Profile_Request(&t, &all, NULL, NULL);
    assert_true(id > 0);
    MRI_Request_ID flat = MRI_Profile_Request(&t, &all, NULL, NULL);
    assert_true(flat > 0);
    MRI_Runtime_Information_Spec n = MRI_NUMBER_OF_INSTANCES;
    MRI_Request_ID counts = MRI_Callpath_Profile_Request(&n, &all, NULL, NULL);
    assert_true(counts > 0);
    expect_error(MRI_Get_Callpath_Data(flat, &(MRI_Callpath_Profile_Results *){NULL}), "no calling context");
    run_to_end();
    MRI_Callpath_Profile_Results *res = NULL;
    assert_int_equal(MRI_Get_Callpath_Data(id, &res), MRI_OK);
    assert_int_equal(res->active, 1);
    assert_int_equal(res->nr_Elements, 3);
    const MRI_Callpath_Element *root = edge(res, NULL, "main");
    const MRI_Callpath_Element *ms = edge(res, "main", "step");
    const MRI_Callpath_Element *si = edge(res, "step", "inner");
    assert_int_equal(root->instances, 1);
    assert_int_equal(ms->instances, 10);
    assert_int_equal(si->instances, 20);
    assert_true(si->inclusive >= 20 * 0.5 * kMs * 0.99);       /* 0.5 ms per inner */
    assert_true(ms->inclusive >= 10 * 2 * kMs * 0.99);         /* 2 ms per step */
    assert_true(ms->exclusive >= 10 * 1 * kMs * 0.99);         /* the 1 ms outside its inners */
    assert_true(ms->exclusive <= ms->inclusive - si->inclusive + 1e-6 * ms->inclusive);
    assert_true(root->inclusive >= ms->inclusive);
    /* The same totals as the flat profile of the same run. */
    void *p = NULL;
    assert_int_equal(MRI_Get_Data(id, &p), MRI_OK);
    const MRI_Histogram_Profile_Results *f = p;
    MRI_Region_Spec inner = region("inner");
    for (int i = 0; i < f->nr_Elements; ++i)
        if (same(&f->element[i].region, &inner)) {
            assert_int_equal(f->element[i].instances, si->instances);
            assert_true(f->element[i].inclusive == si->inclusive);
        }
    /* Instance counts: exclusive = the instances, inclusive = with the
     * profiled instances nested in them (main 1 + 10 steps + 20 inners). */
    MRI_Callpath_Profile_Results *cr = NULL;
    assert_int_equal(MRI_Get_Callpath_Data(counts, &cr), MRI_OK);
    assert_int_equal((long)edge(cr, NULL, "main")->inclusive, 31);
    assert_int_equal((long)edge(cr, NULL, "main")->exclusive, 1);
    assert_int_equal((long)edge(cr, "main", "step")->inclusive, 30);
    assert_int_equal((long)edge(cr, "main", "step")->exclusive, 10);
    assert_int_equal((long)edge(cr, "step", "inner")->inclusive, 20);
    assert_int_equal(MRI_Get_Data(counts, &p), MRI_OK);
    f = p;
    MRI_Region_Spec step = region("step");
    for (int i = 0; i < f->nr_Elements; ++i)
        if (same(&f->element[i].region, &step)) {
            assert_int_equal(f->element[i].instances, 10);
            assert_int_equal((long)f->element[i].inclusive, 30);
            assert_int_equal((long)f->element[i].exclusive, 10);
        }
}

/* Callers without annotations, found by unwinding: "mri_relay 50" calls child
 * through relay_outer -> relay_inner, from main directly, and from a loop
 * region inside relay_loop. A second callpath request in the same run
 * without unwinding sees region callers only. */
static void test_callpath_unwinding(void **state)
{
    (void)state;
    char *argv[] = {"mri_relay", "50", NULL};
    if (MRI_Application_Load(MRI_RELAY, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    MRI_Runtime_Information_Spec t = MRI_EXECUTION_TIME;
    MRI_Region_Table all = {NULL, 0};
    MRI_Request_ID unwound = MRI_Callpath_Profile_Request(&t, &all, NULL, NULL);
    MRI_Request_ID regions_only = MRI_Callpath_Profile_Request(&t, &all, NULL, NULL);
    MRI_Request_ID flat = MRI_Profile_Request(&t, &all, NULL, NULL);
    assert_true(unwound > 0 && regions_only > 0 && flat > 0);
    assert_int_equal(MRI_Set_Callpath_Unwinding(unwound, 1), MRI_OK);
    expect_error(MRI_Set_Callpath_Unwinding(flat, 1), "not a callpath profile request");
    expect_error(MRI_Set_Callpath_Unwinding(4242, 1), "does not exist");
    run_to_end();

    MRI_Callpath_Profile_Results *res = NULL;
    assert_int_equal(MRI_Get_Callpath_Data(regions_only, &res), MRI_OK);
    assert_int_equal(res->nr_Elements, 4);
    assert_int_equal(edge(res, NULL, "main")->instances, 1);
    assert_int_equal(edge(res, "main", "child")->instances, 100);
    assert_int_equal(edge(res, "main", "step")->instances, 1);
    assert_int_equal(edge(res, "step", "child")->instances, 50);
    const double child_total = edge(res, "main", "child")->inclusive + edge(res, "step", "child")->inclusive;

#ifdef MRI_TEST_HAVE_LIBUNWIND
    assert_int_equal(MRI_Get_Callpath_Data(unwound, &res), MRI_OK);
    assert_int_equal(res->nr_Elements, 8);
    assert_int_equal(edge(res, NULL, "main")->instances, 1);
    assert_int_equal(edge(res, "main", "relay_outer")->instances, 50);
    assert_int_equal(edge(res, "relay_outer", "relay_inner")->instances, 50);
    const MRI_Callpath_Element *via = edge(res, "relay_inner", "child");
    assert_int_equal(via->instances, 50);
    assert_int_equal(edge(res, "main", "child")->instances, 50);
    assert_int_equal(edge(res, "main", "relay_loop")->instances, 1);
    assert_int_equal(edge(res, "relay_loop", "step")->instances, 1);
    assert_int_equal(edge(res, "step", "child")->instances, 50);
    /* A function's edges carry the inclusive value of what was reached
     * through it, and no exclusive value. */
    assert_true(edge(res, "main", "relay_outer")->inclusive == via->inclusive);
    assert_true(edge(res, "relay_outer", "relay_inner")->exclusive == 0);
    assert_true(via->exclusive > 0);
    assert_true(edge(res, "main", "relay_loop")->inclusive == edge(res, "relay_loop", "step")->inclusive);
    /* The same child instances as in the request without unwinding. */
    const double total = via->inclusive + edge(res, "main", "child")->inclusive + edge(res, "step", "child")->inclusive;
    assert_true(total > 0 && child_total > 0);
    /* The functions are regions of their own type, named by their symbols. */
    MRI_Region_Spec f = region("relay_inner");
    assert_int_equal(f.type, MRI_REGION_FUNCTION);
#else
    /* Without libunwind in the application's libmonitor: region callers,
     * and the reason in the monitor's message. */
    assert_int_equal(MRI_Get_Callpath_Data(unwound, &res), MRI_OK);
    assert_int_equal(res->nr_Elements, 4);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_region_events_three_threads_small_rings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_execution_time_of_region_and_subregions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_without_subregions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hung_tool_turns_into_counted_discards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_taken_after_the_end_without_a_call_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_delivers_the_records_of_the_instances_it_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_publishes_every_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeated_stops_while_the_rings_are_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_taken_at_a_stop_without_a_call_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_request_at_a_stop_writes_no_exit_without_its_enter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_keep_their_request_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_trace_records_keep_their_type_when_records_run_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_unregisters_the_call_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blocking_calls_in_the_call_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_instances_open_at_the_end_get_exits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_measured_instances_open_at_the_end_get_one_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exits_skipped_by_longjmp_are_written, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callpath_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callpath_unwinding, setup, teardown),
    };
    mri_test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}

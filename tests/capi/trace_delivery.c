/*
 * test_trace, delivery: records through small rings with nothing lost, taken
 * with or without a call-back (at a stop, after the end), a tool that takes
 * nothing, and the calls that would block made from the call-back.
 */
#include "trace_common.h"

/* REGION_EVENT over every region, three threads writing at once into rings
 * far smaller than the trace: the threads must wait for the tool, and not
 * one record may be lost. */
void test_region_events_three_threads_small_rings(void **state)
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
void test_repeated_stops_while_the_rings_are_full(void **state)
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
void test_records_taken_after_the_end_without_a_call_back(void **state)
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

/* Without a call-back, at each breakpoint: the tool takes the records as
 * soon as MRI_Wait() returns, until nothing comes, and has every record
 * written before the stop (they were in the rings until the collector's
 * next poll, up to 2 ms later, so the tool often found none). */
void test_records_taken_at_a_stop_without_a_call_back(void **state)
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

/* MRI_Finalize() ends the session's call-back with it: a tool that
 * registered one, finalised and initialised again (perhaps after
 * unloading the code of the old one) must not have it called in the new
 * session. Its records wait for the record functions. */
void test_finalize_unregisters_the_call_back(void **state)
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

/* A tool that never empties the buffer: every thread waits at most
 * MRI_TRACE_WAIT_MS, then discards, and every record is accounted for. */
void test_hung_tool_turns_into_counted_discards(void **state)
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
void test_blocking_calls_in_the_call_back(void **state)
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

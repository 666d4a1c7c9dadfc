/*
 * test_trace, the program's end: exit() and exec() deliver every record, and
 * the instances left open (at an exit, a thread's end, a longjmp) get their
 * exits, marked synthetic.
 */
#include "trace_common.h"

/* exit() inside main: Monitor_Final ends main's open instance, and its
 * EXECUTION_TIME record is the thirteenth (4 steps and 8 inners before it).
 * It was written after the monitor had made the thread's records visible
 * for the last time (a thread does it 16 records at a time): lost, and not
 * counted as emitted. */
void test_exit_delivers_the_records_of_the_instances_it_ends(void **state)
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
void test_exec_publishes_every_record(void **state)
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

void test_instances_open_at_the_end_get_exits(void **state)
{
    (void)state;
    exit_inside_regions(0);
}

void test_measured_instances_open_at_the_end_get_one_exit(void **state)
{
    (void)state;
    exit_inside_regions(1);
}

/* longjmp() out of "inner" back into "step", 5 times: each inner's exit
 * is written, marked, when its step exits, before the step's: the trace
 * balances and nests. */
void test_exits_skipped_by_longjmp_are_written(void **state)
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

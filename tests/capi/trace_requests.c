/*
 * test_trace, what a trace request records: a region with or without its
 * subregions, a thread filter, and requests made or deleted at a stop (their
 * records keep their type).
 */
#include "trace_common.h"

/* A trace request made at a breakpoint, inside main (the usual way of an
 * analyser that changes its requests at stops): main's enter came before
 * the request, so its exit is not written either. Before, it came alone,
 * and a reader of the trace (OTF2) found a leave without its enter. */
void test_request_at_a_stop_writes_no_exit_without_its_enter(void **state)
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

/* A trace request deleted at a stop, with its records not yet delivered,
 * and another of another kind placed at once: the records keep the type of
 * the request that wrote them (the new one took the deleted one's slot and
 * relabelled them). */
void test_records_keep_their_request_type(void **state)
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
void test_deleted_trace_records_keep_their_type_when_records_run_out(void **state)
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
void test_execution_time_of_region_and_subregions(void **state)
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
void test_thread_filter(void **state)
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
void test_without_subregions(void **state)
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

/*
 * What the parts of test_trace share (one program: test_trace.c has main(),
 * the list of the tests in the order they run and the call-back's view of
 * the records, which it resets before each test; trace_delivery.c,
 * trace_requests.c, trace_endings.c and trace_callpath.c hold the tests).
 */
#ifndef MRI_TRACE_COMMON_H
#define MRI_TRACE_COMMON_H

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
extern struct thread_view seen[MAX_THREADS];
extern unsigned long long other_threads, callbacks, value_sum;
extern MRI_Region_Spec step_region, inner_region;
extern unsigned long long step_values, inner_values, min_step_value, min_inner_value;
extern int take_nothing;
extern int slow, inside; /* set by the test; set by a slow call-back while it runs */

static inline int same(const MRI_Region_Spec *a, const MRI_Region_Spec *b)
{
    return a->type == b->type && a->id.file_ID == b->id.file_ID && a->id.line_NR == b->id.line_NR;
}

/* In test_trace.c: a record into the views; the call-back that takes every
 * record into them; the load of mri_testapp, which finds "step" and
 * "inner". */
void account(const MRI_Trace_Element_Spec *r);
void drain_callback(void);
void load(char *const *argv);

static inline MRI_Trace_Statistics stats_of(int thread)
{
    MRI_Trace_Statistics st;
    MRI_Active_Object_Spec ao = {MRI_THREAD, thread};
    if (MRI_Get_Trace_Statistics(&ao, &st) != MRI_OK) fail_msg("statistics: %s", MRI_Get_Error_Message());
    return st;
}

/* Takes every record the tool-side buffer holds (no call-back registered)
 * into the per-thread views; returns what the last call returned (0 when
 * the buffer ran empty, MRI_Error on a failure). */
static inline int take_all_records(void)
{
    MRI_Trace_Element_Spec chunk[64];
    int k;
    while ((k = MRI_Get_Trace_Records(chunk, 64)) > 0)
        for (int i = 0; i < k; ++i) account(&chunk[i]);
    return k;
}

/* trace_delivery.c */
void test_region_events_three_threads_small_rings(void **state);
void test_repeated_stops_while_the_rings_are_full(void **state);
void test_records_taken_after_the_end_without_a_call_back(void **state);
void test_records_taken_at_a_stop_without_a_call_back(void **state);
void test_finalize_unregisters_the_call_back(void **state);
void test_hung_tool_turns_into_counted_discards(void **state);
void test_blocking_calls_in_the_call_back(void **state);

/* trace_requests.c */
void test_request_at_a_stop_writes_no_exit_without_its_enter(void **state);
void test_records_keep_their_request_type(void **state);
void test_deleted_trace_records_keep_their_type_when_records_run_out(void **state);
void test_execution_time_of_region_and_subregions(void **state);
void test_thread_filter(void **state);
void test_without_subregions(void **state);

/* trace_endings.c */
void test_exit_delivers_the_records_of_the_instances_it_ends(void **state);
void test_exec_publishes_every_record(void **state);
void test_instances_open_at_the_end_get_exits(void **state);
void test_measured_instances_open_at_the_end_get_one_exit(void **state);
void test_exits_skipped_by_longjmp_are_written(void **state);

/* trace_callpath.c */
void test_callpath_profile(void **state);
void test_callpath_unwinding(void **state);

#endif

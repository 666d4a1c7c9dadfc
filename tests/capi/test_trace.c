/*
 * test_trace - trace requests and their delivery through the call-back
 * (paper sections 3.3 and 4.4), and the calling context of callpath
 * profiles; tool and application in two processes.
 *
 * This file has main() and the list of the tests, in the order they run,
 * and the call-back's view of the records (trace_common.h); the tests are
 * in trace_delivery.c, trace_requests.c, trace_endings.c and
 * trace_callpath.c.
 */
#include "trace_common.h"

struct thread_view seen[MAX_THREADS];
unsigned long long other_threads, callbacks, value_sum;
MRI_Region_Spec step_region, inner_region;
unsigned long long step_values, inner_values, min_step_value = ~0ull, min_inner_value = ~0ull;
int take_nothing;
int slow, inside; /* set by the test; set by a slow call-back while it runs */

void account(const MRI_Trace_Element_Spec *r)
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
void drain_callback(void)
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

void load(char *const *argv)
{
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    step_region = region("step");
    inner_region = region("inner");
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

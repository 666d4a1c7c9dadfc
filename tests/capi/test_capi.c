/*
 * C API tests: a real tool (this process, through libmri) and a real
 * instrumented application (mri_testapp or an example) in a second process,
 * talking over System V shared memory.
 *
 * This file has main() and the list of the tests, in the order they run;
 * the tests are in capi_requests.c, capi_control.c, capi_lifecycle.c and
 * capi_static.c, what they share in capi_common.h.
 */
#define _GNU_SOURCE
#include "capi_common.h"

static int teardown(void **state)
{
    (void)state;
    MRI_Finalize(); /* also cleans up after a failed assertion */
    return 0;
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

/*
 * Two-process tests of simulated cache events through mri.h: the tool (this
 * program) loads mri_cacheapp, which is built with the cache-simulator
 * instrumentation, and checks data-structure-restricted aggregates and
 * histograms against the counts its access pattern must produce (see
 * mri_cacheapp.c), per thread, plus the errors for bad configurations,
 * unknown data structures and bad bin counts.
 *
 * This file has main() and the list of the tests, in the order they run;
 * the tests are in cachesim_counts.c, cachesim_end.c, cachesim_results.c
 * and cachesim_config.c, what they share in cachesim_common.h.
 */
#include "cachesim_common.h"

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

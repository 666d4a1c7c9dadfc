/*
 * What the parts of test_capi share (one program: test_capi.c has main() and
 * the list of the tests in the order they run; capi_requests.c,
 * capi_control.c, capi_lifecycle.c and capi_static.c hold the tests by theme).
 */
#ifndef MRI_CAPI_COMMON_H
#define MRI_CAPI_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the headers above first. */
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mri.h"
#include "mri_test_helpers.h"

#ifndef MRI_TESTAPP
#error "MRI_TESTAPP must name the test application"
#endif

static inline void load(char *mode, ...)
{
    char *argv[16] = {MRI_TESTAPP, mode};
    int n = 2;
    va_list ap;
    va_start(ap, mode);
    char *a;
    while ((a = va_arg(ap, char *)) != NULL && n < 15) argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    assert_int_equal(MRI_Init(), MRI_OK);
    int rc = MRI_Application_Load(MRI_TESTAPP, argv);
    if (rc != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
}

static inline double agg_total(MRI_Request_ID id)
{
    MRI_Aggregate_Request_Results *r = agg_data(id);
    double v = 0;
    for (int i = 0; i < r->nr_Elements; ++i) v += r->element[i].value;
    return v;
}

static inline const MRI_Profile_Element *profile_of(MRI_Histogram_Profile_Results *res, const char *name)
{
    MRI_Region_Spec r = region(name);
    for (int i = 0; i < res->nr_Elements; ++i)
        if (memcmp(&res->element[i].region, &r, sizeof r) == 0) return &res->element[i];
    fail_msg("no profile element for %s", name);
    return NULL;
}

static inline MRI_Histogram_Profile_Results *profile_run(char *const argv[])
{
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Application_Load(argv[0], argv) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
    MRI_Request_ID prof = MRI_Profile_Request(&ri, NULL, NULL, NULL);
    assert_true(prof > 0);
    run_to_end();
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.exit_code, 0);
    void *p;
    assert_int_equal(MRI_Get_Data(prof, &p), MRI_OK);
    return p;
}

/* capi_requests.c */
void test_misuse_before_init(void **state);
void test_misuse_with_application(void **state);
void test_thread_lists(void **state);
void test_times_and_instances(void **state);
void test_profile(void **state);
void test_min_max_focus(void **state);
void test_requests_across_programs(void **state);
void test_cpp_recursion_counts_inclusive_once(void **state);
void test_cpp_guard_closes_on_exception(void **state);
void test_recursion_deeper_than_the_stack(void **state);

/* capi_control.c */
void test_breakpoints_iterative(void **state);
void test_stopped_time_not_charged(void **state);
void test_stop_at_an_exit_is_charged_to_nobody(void **state);
void test_parallel_region_is_no_breakpoint(void **state);
void test_openmp_stencil_parallel_breakpoint(void **state);
void test_stop_from_another_thread(void **state);
void test_stop_right_after_start(void **state);
void test_every_thread_stops(void **state);
void test_terminate_while_stopped(void **state);
void test_terminate_a_frozen_program(void **state);
void test_release_never_taken_is_not_counted(void **state);
void test_stray_exit_is_no_breakpoint(void **state);
void test_breakpoint_in_the_instance_stopped_inside(void **state);

/* capi_lifecycle.c */
void test_crash_keeps_results(void **state);
void test_exit_code_and_reload(void **state);
void test_death_before_the_first_region(void **state);
void test_exit_before_the_first_region(void **state);
void test_exec_ends_monitoring_there(void **state);
void test_failed_exec_goes_on_monitored(void **state);
void test_vfork_child_exec_is_not_the_program(void **state);
void test_exec_failing_after_the_end(void **state);
void test_main_thread_pthread_exit(void **state);
void test_terminating_signal_is_caught(void **state);
void test_interrupt_is_caught(void **state);
void test_sigkill_ends_at_once(void **state);
void test_signal_while_stopped_leaves_the_stop_out(void **state);
void test_finish_measures_the_open_instances(void **state);
void test_finish_while_stopped_leaves_the_stop_out(void **state);
void test_not_instrumented(void **state);
void test_second_program_is_not_monitored(void **state);

/* capi_static.c */
void test_data_structures_beyond_the_table(void **state);
void test_data_structure_of_a_negative_size(void **state);
void test_cache_configuration_files(void **state);
void test_messages_are_printable(void **state);
void test_names_beyond_the_name_pool(void **state);
void test_publication(void **state);
void test_process_keeps_its_name(void **state);
void test_loaded_thread_is_known_at_once(void **state);
void test_system_topology(void **state);
void test_static_information(void **state);
void test_thread_limit_is_reported(void **state);
void test_module_unloaded_and_loaded_again(void **state);
void test_module_unloaded_before_publication(void **state);
void test_module_loaded_later_is_published(void **state);
void test_segment_is_private_and_marked_for_removal(void **state);

#endif

/*
 * What the parts of test_cachesim_backend share (one program:
 * test_cachesim_backend.c has main() and the list of the tests in the order
 * they run; cachesim_counts.c, cachesim_end.c, cachesim_results.c and
 * cachesim_config.c hold the tests by theme).
 */
#ifndef MRI_CACHESIM_COMMON_H
#define MRI_CACHESIM_COMMON_H

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

/* The instrumented program: mri_cacheapp as built with the default
 * instrumentation, or the one MRI_TEST_CACHEAPP names (the same program
 * built with the other instrumentation: every count below holds for both). */
static inline const char *cacheapp(void)
{
    const char *other = getenv("MRI_TEST_CACHEAPP");
    return other && *other ? other : MRI_CACHEAPP;
}

/* 32 KiB 8-way L1 and 256 KiB 8-way L2, both private, two cores. */
static const char *kConfig = "L1:32K,8,64;L2:256K,8,64;cores=2";

enum { kLinesA = 1024, kLinesB = 512, kReadsA = 8192, kWritesB = 4096 };

/* A new session with mri_cacheapp loaded in the mode argv[1] says, on
 * the test hierarchy kConfig. */
static inline void load_mode(char **argv)
{
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Set_Cache_Configuration(kConfig) != MRI_OK) fail_msg("config: %s", MRI_Get_Error_Message());
    if (MRI_Application_Load(cacheapp(), argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
}

static inline void load_app(const char *passes, const char *threads)
{
    char *argv[] = {(char *)cacheapp(), (char *)"sweep", (char *)passes, (char *)threads, NULL};
    load_mode(argv);
}

static inline MRI_Data_Structure_Spec data(const char *name)
{
    MRI_Data_Structure_Spec d;
    if (MRI_Find_Data_Structure(name, &d) != MRI_OK) fail_msg("find %s: %s", name, MRI_Get_Error_Message());
    return d;
}

static inline MRI_Request_ID cache_aggregate(MRI_Runtime_Information_Spec ri, const char *region_name, const char *ds,
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
static inline double thread_value(MRI_Request_ID id, int thread)
{
    MRI_Aggregate_Request_Results *r = agg_data(id);
    assert_int_equal(r->active, 1);
    for (int i = 0; i < r->nr_Elements; i++)
        if (r->element[i].active_object.id == thread) return r->element[i].value;
    fail_msg("request %d has no value for thread %d", id, thread);
    return -1;
}

/* Runs the loaded sweep program to the end of its first "sweep", lets it
 * run 20 ms more, and ends it there (MRI_Application_Finish): the sweep it
 * is in and main are open. */
static inline void finish_inside_a_sweep(void)
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

static inline const MRI_Histogram_Request_Results *hist_data(MRI_Request_ID id)
{
    void *p = NULL;
    if (MRI_Get_Data(id, &p) != MRI_OK) fail_msg("get data: %s", MRI_Get_Error_Message());
    const MRI_Histogram_Request_Results *h = p;
    assert_int_equal(h->kind, MRI_HISTOGRAM_REQUEST);
    return h;
}

/* cachesim_counts.c */
void test_data_structures_published(void **state);
void test_restricted_aggregates(void **state);
void test_thread_with_a_small_stack(void **state);
void test_threads_one_after_another(void **state);
void test_threads_beyond_max_threads_count_for_nobody(void **state);
void test_data_structure_ended_and_registered_again(void **state);
void test_fork_while_simulating(void **state);
void test_straddling_references(void **state);
void test_signal_handlers_record_during_a_hand_over(void **state);
void test_vector_references(void **state);

/* cachesim_end.c */
void test_finish_ends_the_open_instances(void **state);
void test_thread_parked_at_an_enter_keeps_its_references(void **state);
void test_thread_running_at_the_end_is_waited_for(void **state);
void test_thread_asleep_at_the_end_is_waited_for(void **state);
void test_end_that_passes_a_thread_that_ran_says_so(void **state);
void test_end_that_gives_up_on_a_thread_says_so(void **state);
void test_finish_ends_cache_only_instances(void **state);

/* cachesim_results.c */
void test_profiles(void **state);
void test_traces(void **state);
void test_trace_values_of_instances_open_at_the_end(void **state);
void test_histograms(void **state);
void test_histogram_of_overlapping_data_structures(void **state);
void test_histogram_churn_over_many_stops(void **state);

/* cachesim_config.c */
void test_simulation_is_compensated(void **state);
void test_bad_configuration(void **state);
void test_program_reads_no_file_named_in_the_segment(void **state);
void test_without_backend(void **state);

#endif

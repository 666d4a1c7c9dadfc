/*
 * Helpers shared by the CMocka suites of the C API (include after cmocka.h
 * and mri.h). Each fails the running test with the library's reason.
 */
#ifndef MRI_TEST_HELPERS_H
#define MRI_TEST_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double kMs = 1e6; /* ns per ms */

/* 1 where the test is built with a sanitizer (MRI_SANITIZE). The checks
 * that hold a measured time to a bound (overhead compensation in
 * test_compensation.c and test_papi.c, time under the cache simulator in
 * backends/cachesim/tests) print their figure there but do not hold it,
 * and run once where they would take the median of several processes: a
 * sanitizer's checks in the monitor's code cost the calibration's tight
 * loop another share than they cost the program (ASan on a Zen 5 host:
 * 27 to 40% left; TSan on a Zen 3 one: a pair calibrated at 2.8-3.5 us
 * cost 1.5-1.9 us in place), so the figure measures the sanitizer. Every
 * other assertion, the exact arithmetic of the compensation among them,
 * stays. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MRI_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MRI_TEST_SANITIZED 1
#endif
#endif
#ifndef MRI_TEST_SANITIZED
#define MRI_TEST_SANITIZED 0
#endif

/* A field of /proc/PID/status in kB (or a plain count: "Threads"), -1 when
 * the process or the field is not there. For the checks that a long run
 * does not grow (test_soak.c, backends/cachesim/tests). */
static inline long proc_status(int pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    long value = -1;
    const size_t n = strlen(field);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') value = atol(line + n + 1);
    fclose(f);
    return value;
}

/* The region with this name in the loaded application. */
static inline MRI_Region_Spec region(const char *name)
{
    MRI_Region_Spec r;
    if (MRI_Find_Region(name, &r) != MRI_OK) fail_msg("find %s: %s", name, MRI_Get_Error_Message());
    return r;
}

/* An aggregate request over one region and all active objects; returns
 * what MRI_Aggregate_Request returned (tests of refusals look at it). */
static inline MRI_Request_ID request(MRI_Runtime_Information_Spec ri, const char *name, MRI_Aggregation_Operation op,
                                     MRI_Aggregation_Target target)
{
    MRI_Region_Spec r = region(name);
    MRI_Region_Table regions = {&r, 1};
    MRI_Aggregation_Spec agg = {op, target};
    return MRI_Aggregate_Request(&ri, &regions, NULL, NULL, &agg);
}

/* The same, failing the test when the request is refused. */
static inline MRI_Request_ID aggregate(MRI_Runtime_Information_Spec ri, const char *name,
                                       MRI_Aggregation_Operation op, MRI_Aggregation_Target target)
{
    MRI_Request_ID id = request(ri, name, op, target);
    if (id < 0) fail_msg("aggregate request: %s", MRI_Get_Error_Message());
    return id;
}

static inline MRI_Aggregate_Request_Results *agg_data(MRI_Request_ID id)
{
    void *p = NULL;
    if (MRI_Get_Data(id, &p) != MRI_OK) fail_msg("get data: %s", MRI_Get_Error_Message());
    MRI_Aggregate_Request_Results *r = p;
    assert_int_equal(r->kind, MRI_AGGREGATE_REQUEST);
    return r;
}

static inline void run_to_end(void)
{
    assert_int_equal(MRI_Start(), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
}

/* The call failed, and its reason contains `fragment`. */
static inline void expect_error(int rc, const char *fragment)
{
    assert_true(rc < 0);
    const char *msg = MRI_Get_Error_Message();
    if (strstr(msg, fragment) == NULL) fail_msg("error message \"%s\" lacks \"%s\"", msg, fragment);
}

static inline int mri_test_by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n values (an odd n: the middle one); sorts them. Timing
 * checks hold the median of a few runs, each in its own process, to their
 * bound: one run's figure moves with the machine's other load. */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], mri_test_by_value);
    return v[n / 2];
}

/* Runs only the tests whose names match MRI_TEST_FILTER (a cmocka pattern,
 * '*' and '?'), when it is set: call before cmocka_run_group_tests(). */
static inline void mri_test_filter_from_environment(void)
{
    const char *filter = getenv("MRI_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
}

#endif

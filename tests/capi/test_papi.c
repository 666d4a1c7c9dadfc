/*
 * PAPI backend tests: real PAPI counters in a real application process.
 * This machine has no hardware PMU: PAPI's presets are unavailable, the
 * perf software events (perf::TASK-CLOCK, perf::PAGE-FAULTS,
 * perf::CPU-CLOCK; perf::CONTEXT-SWITCHES where the user may count kernel
 * events) work. Where PAPI was not built in, the tests check that counters
 * are reported absent.
 */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the headers above first. */
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mri.h"
#include "mri_test_helpers.h"

static int teardown(void **state)
{
    (void)state;
    MRI_Finalize();
    unsetenv("MRI_COUNTER_BUDGET");
    return 0;
}

static int papi_built(void)
{
    MRI_HW_Info hw;
    assert_int_equal(MRI_Get_System_Information(&hw), MRI_OK);
    return strncmp(hw.counter_source, "PAPI", 4) == 0;
}

static void load(char *const argv[])
{
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Application_Load(argv[0], argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
}

static MRI_Runtime_Information_Spec ri_named(const char *name)
{
    MRI_Runtime_Information_Spec ri;
    if (MRI_Runtime_Information_By_Name(name, &ri) != MRI_OK) fail_msg("%s: %s", name, MRI_Get_Error_Message());
    return ri;
}

static void test_page_faults_count_the_pages_touched(void **state)
{
    (void)state;
    char *argv[] = {MRI_TESTAPP, "touch", "5", "64", NULL};
    load(argv);
    if (!papi_built()) skip();
    MRI_Runtime_Information_Spec faults = ri_named("perf::PAGE-FAULTS");
    assert_true(faults >= MRI_RUNTIME_INFORMATION_DYNAMIC_BASE);
    assert_string_equal(MRI_Runtime_Information_Name(faults), "perf::PAGE-FAULTS");
    MRI_Request_ID sum = request(faults, "toucher", MRI_SUM, MRI_PER_THREAD);
    MRI_Request_ID min = request(faults, "toucher", MRI_MIN, MRI_PER_PROCESS);
    assert_true(sum > 0 && min > 0);
    run_to_end();
    MRI_Aggregate_Request_Results *r = agg_data(sum);
    assert_int_equal(r->active, 1);
    assert_int_equal(r->element[0].count, 5);
    assert_true(r->element[0].value >= 5 * 64); /* every touched page faulted once */
    assert_true(r->element[0].value < 5 * 64 * 4);
    assert_true(agg_data(min)->element[0].value >= 64);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_string_equal(st.monitor_message, "");
}

static void test_task_clock_tracks_time_per_thread(void **state)
{
    (void)state;
    char *argv[] = {MRI_TESTAPP, "spin", "2", "4", "15", NULL};
    load(argv);
    if (!papi_built()) skip();
    MRI_Request_ID clock = request(ri_named("perf::TASK-CLOCK"), "spinner", MRI_SUM, MRI_PER_THREAD);
    MRI_Request_ID wall = request((MRI_Runtime_Information_Spec)MRI_EXECUTION_TIME, "spinner", MRI_SUM, MRI_PER_THREAD);
    assert_true(clock > 0 && wall > 0);
    run_to_end();
    MRI_Aggregate_Request_Results *c = agg_data(clock), *w = agg_data(wall);
    int spinners = 0;
    for (int i = 0; i < c->nr_Elements; ++i) {
        if (c->element[i].count == 0) continue; /* the main thread only ran "main" */
        ++spinners;
        assert_int_equal(c->element[i].count, 4);
        /* Each instance spins until its thread used 15 ms of CPU time: the
         * thread's task clock counts at least that, whatever the machine's
         * load, and never more than the wall time. The sleeping main
         * thread's clock, or a count of something else, would not. */
        const double cpu = c->element[i].value, elapsed = w->element[i].value;
        assert_true(elapsed >= 4 * 15 * kMs);
        assert_true(cpu <= elapsed * 1.02 + 0.1 * kMs);
        assert_true(cpu >= 4 * 15 * kMs * 0.99);
    }
    assert_int_equal(spinners, 2); /* one event set per thread */
}

/* A profile of page faults: inclusive and exclusive counts per region,
 * with nested profiled regions taken out of their parent's exclusive. */
static void test_counter_profile(void **state)
{
    (void)state;
    char *argv[] = {MRI_TESTAPP, "touch", "4", "32", NULL};
    load(argv);
    if (!papi_built()) skip();
    MRI_Runtime_Information_Spec faults = ri_named("perf::PAGE-FAULTS");
    MRI_Request_ID prof = MRI_Profile_Request(&faults, NULL, NULL, NULL);
    if (prof < 0) fail_msg("%s", MRI_Get_Error_Message());
    run_to_end();
    void *p;
    assert_int_equal(MRI_Get_Data(prof, &p), MRI_OK);
    MRI_Histogram_Profile_Results *res = p;
    assert_int_equal(res->active, 1);
    MRI_Region_Spec toucher, mainr;
    assert_int_equal(MRI_Find_Region("toucher", &toucher), MRI_OK);
    assert_int_equal(MRI_Find_Region("main", &mainr), MRI_OK);
    const MRI_Profile_Element *t = NULL, *m = NULL;
    for (int i = 0; i < res->nr_Elements; ++i) {
        if (memcmp(&res->element[i].region, &toucher, sizeof toucher) == 0) t = &res->element[i];
        if (memcmp(&res->element[i].region, &mainr, sizeof mainr) == 0) m = &res->element[i];
    }
    assert_non_null(t);
    assert_non_null(m);
    assert_int_equal(t->instances, 4);
    assert_true(t->inclusive >= 4 * 32);
    assert_true(t->exclusive == t->inclusive); /* no profiled subregion */
    assert_true(m->inclusive >= t->inclusive);
    assert_true(m->exclusive <= m->inclusive - t->inclusive + 0.5); /* main's own faults only */
}

/* OpenMP keeps its worker threads between parallel regions: each thread's
 * event set must keep counting across time steps and stops. */
static void test_counters_in_reused_openmp_threads(void **state)
{
    (void)state;
    setenv("OMP_NUM_THREADS", "2", 1);
    char *argv[] = {MRI_STENCIL, "-n", "192", "-t", "6", NULL};
    load(argv);
    if (!papi_built()) skip();
    MRI_Request_ID clock = request(ri_named("perf::TASK-CLOCK"), "update_rows", MRI_SUM, MRI_PER_THREAD);
    assert_true(clock > 0);
    MRI_Region_Spec step;
    assert_int_equal(MRI_Find_Region("time_step", &step), MRI_OK);
    for (int k = 0; k < 3; ++k) {
        assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    }
    run_to_end();
    MRI_Aggregate_Request_Results *r = agg_data(clock);
    int threads = 0;
    for (int i = 0; i < r->nr_Elements; ++i) {
        if (r->element[i].count == 0) continue;
        ++threads;
        assert_int_equal(r->element[i].count, 6); /* one update_rows per step and thread */
        assert_true(r->element[i].value > 0);
    }
    assert_int_equal(threads, 2);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_string_equal(st.monitor_message, "");
}

static void test_unavailable_and_unknown_events(void **state)
{
    (void)state;
    char *argv[] = {MRI_TESTAPP, "touch", "1", "1", NULL};
    load(argv);
    MRI_Aggregation_Spec agg = {MRI_SUM, MRI_PER_THREAD};
    MRI_Region_Spec r;
    assert_int_equal(MRI_Find_Region("toucher", &r), MRI_OK);
    MRI_Region_Table regions = {&r, 1};
    MRI_Runtime_Information_Spec l1 = MRI_LC1_DATA_READ_MISS;
    expect_error(MRI_Aggregate_Request(&l1, &regions, NULL, NULL, &agg), "not available on this machine");
    if (papi_built()) {
        /* A preset PAPI knows but this machine (no PMU) cannot count. */
        MRI_Runtime_Information_Spec dcm = ri_named("PAPI_L1_DCM");
        expect_error(MRI_Aggregate_Request(&dcm, &regions, NULL, NULL, &agg), "PAPI_L1_DCM");
        expect_error(MRI_Aggregate_Request(&dcm, &regions, NULL, NULL, &agg), "not available on this machine");
        MRI_Runtime_Information_Spec ri;
        expect_error(MRI_Runtime_Information_By_Name("nonsense::NO_SUCH_EVENT", &ri), "knows no event");
        expect_error(MRI_Profile_Request(&dcm, NULL, NULL, NULL), "not available on this machine");
    }
    run_to_end();
}

/* kernel.perf_event_paranoid, or -1 when it cannot be read. */
static int perf_event_paranoid(void)
{
    int level = -1;
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    if (f) {
        if (fscanf(f, "%d", &level) != 1) level = -1;
        fclose(f);
    }
    return level;
}

/* Context switches happen in the kernel: counted in user mode, as PAPI
 * counts by default, 20 sleeps made 0 of them (as did CPU migrations).
 * The monitor counts them in both modes where the kernel lets this user
 * count kernel events (root, as in CI), and refuses them elsewhere with
 * that reason. */
static void test_context_switches_are_counted_in_the_kernel(void **state)
{
    (void)state;
    char *argv[] = {MRI_TESTAPP, "sleep", "20", "2", NULL};
    load(argv);
    if (!papi_built()) skip();
    const MRI_Request_ID id = request(ri_named("perf::CONTEXT-SWITCHES"), "sleeper", MRI_SUM, MRI_PER_PROCESS);
    if (id < 0) {
        print_message("%s\n", MRI_Get_Error_Message());
        assert_non_null(strstr(MRI_Get_Error_Message(), "happens inside the kernel, and this user may not count "
                                                        "kernel events"));
        assert_true(geteuid() != 0 && perf_event_paranoid() >= 2); /* refused only where the kernel refuses */
        run_to_end();
        return;
    }
    run_to_end();
    MRI_Aggregate_Request_Results *res = agg_data(id);
    assert_int_equal(res->element[0].count, 20);
    assert_true(res->element[0].value >= 20); /* every sleep gave the CPU away */
}

/* A name of kilobytes is refused with a reason of readable length; PAPI's
 * name parser used to get it and abort the tool (fortify: buffer overflow). */
static void test_overlong_event_name(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    static char name[20000];
    memset(name, 'A', sizeof name - 1);
    memcpy(name, "perf::", 6);
    MRI_Runtime_Information_Spec ri;
    expect_error(MRI_Runtime_Information_By_Name(name, &ri), "unknown runtime information");
    assert_true(strlen(MRI_Get_Error_Message()) < 300);
    if (papi_built()) expect_error(MRI_Runtime_Information_By_Name(name, &ri), "19999 characters");
}

static void test_counter_budget(void **state)
{
    (void)state;
    setenv("MRI_COUNTER_BUDGET", "2", 1);
    char *argv[] = {MRI_TESTAPP, "touch", "3", "8", NULL};
    load(argv);
    if (!papi_built()) skip();
    MRI_Runtime_Information_Spec faults = ri_named("perf::PAGE-FAULTS"), clock = ri_named("perf::TASK-CLOCK"),
                                 switches = ri_named("perf::CPU-CLOCK"); /* any user can count it */
    MRI_Request_ID a = request(faults, "toucher", MRI_SUM, MRI_PER_THREAD);
    MRI_Request_ID b = request(clock, "toucher", MRI_SUM, MRI_PER_THREAD);
    assert_true(a > 0 && b > 0);
    /* A third event does not fit, and the reason names the budget. */
    expect_error(request(switches, "toucher", MRI_SUM, MRI_PER_THREAD), "counter budget is 2");
    expect_error(request(switches, "main", MRI_SUM, MRI_PER_PROCESS), "in use: perf::PAGE-FAULTS, perf::TASK-CLOCK");
    /* The same event again shares its counter; time needs none. */
    MRI_Request_ID c = request(faults, "main", MRI_MAX, MRI_PER_PROCESS);
    MRI_Request_ID t = request((MRI_Runtime_Information_Spec)MRI_EXECUTION_TIME, "toucher", MRI_SUM, MRI_PER_THREAD);
    assert_true(c > 0 && t > 0);
    /* A budget that is not a number is refused, not ignored. */
    setenv("MRI_COUNTER_BUDGET", "two", 1);
    expect_error(request(switches, "toucher", MRI_SUM, MRI_PER_THREAD), "MRI_COUNTER_BUDGET=\"two\" is not a number");
    setenv("MRI_COUNTER_BUDGET", "+1", 1); /* digits only */
    expect_error(request(switches, "toucher", MRI_SUM, MRI_PER_THREAD), "MRI_COUNTER_BUDGET=\"+1\" is not a number");
    setenv("MRI_COUNTER_BUDGET", "99999999999999999999", 1); /* beyond a long: not a budget of LONG_MAX */
    expect_error(request(switches, "toucher", MRI_SUM, MRI_PER_THREAD), "MRI_COUNTER_BUDGET=\"99999999999999999999\" is not a number");
    setenv("MRI_COUNTER_BUDGET", "2", 1);
    /* Freeing a counter makes room. */
    assert_int_equal(MRI_Request_Delete(b), MRI_OK);
    MRI_Request_ID d = request(switches, "toucher", MRI_SUM, MRI_PER_THREAD);
    assert_true(d > 0);
    run_to_end();
    assert_true(agg_data(a)->element[0].value >= 3 * 8);
    assert_int_equal(agg_data(d)->active, 1);
    assert_true(agg_data(c)->element[0].value >= 3 * 8); /* main encloses every toucher instance */
}

/* Two counter events, room for one: with rotation each release measures
 * one of them, in turn, and the results say which iterations did. */
static void test_counter_rotation_across_breakpoints(void **state)
{
    (void)state;
    setenv("MRI_COUNTER_BUDGET", "1", 1);
    char *argv[] = {MRI_TESTAPP, "touch", "6", "16", NULL};
    load(argv);
    if (!papi_built()) skip();
    MRI_Runtime_Information_Spec faults = ri_named("perf::PAGE-FAULTS"), clock = ri_named("perf::TASK-CLOCK");
    MRI_Request_ID a = request(faults, "toucher", MRI_SUM, MRI_PER_PROCESS);
    assert_true(a > 0);
    expect_error(request(clock, "toucher", MRI_SUM, MRI_PER_PROCESS), "counter rotation");
    assert_int_equal(MRI_Set_Counter_Rotation(1), MRI_OK);
    MRI_Request_ID b = request(clock, "toucher", MRI_SUM, MRI_PER_PROCESS);
    MRI_Request_ID t = request((MRI_Runtime_Information_Spec)MRI_EXECUTION_TIME, "toucher", MRI_SUM, MRI_PER_PROCESS);
    assert_true(b > 0 && t > 0);
    expect_error(MRI_Set_Counter_Rotation(0), "cannot turn counter rotation off");
    MRI_Region_Spec toucher;
    assert_int_equal(MRI_Find_Region("toucher", &toucher), MRI_OK);
    for (int k = 1; k <= 6; ++k) { /* one toucher instance per iteration */
        assert_int_equal(MRI_Start_Stop(&toucher), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    }
    run_to_end(); /* iteration 7: the rest of the program */
    MRI_Aggregate_Request_Results *ra = agg_data(a), *rb = agg_data(b), *rt = agg_data(t);
    /* Group 1 (page faults) measured iterations 1, 3, 5, 7; group 2 (task clock) 2, 4, 6. */
    assert_int_equal(ra->nr_Measured_Iterations, 4);
    assert_int_equal(rb->nr_Measured_Iterations, 3);
    for (int i = 0; i < ra->nr_Measured_Iterations; ++i) assert_int_equal(ra->measured_iteration[i], 2 * i + 1);
    for (int i = 0; i < rb->nr_Measured_Iterations; ++i) assert_int_equal(rb->measured_iteration[i], 2 * i + 2);
    assert_int_equal(rt->nr_Measured_Iterations, 7); /* time needs no counter: every iteration */
    /* The list handed out stays valid: a later call makes its own copy. */
    const unsigned int *first = ra->measured_iteration;
    assert_int_equal(first[3], 7);
    assert_int_equal(ra->element[0].count, 3);       /* the toucher instances of iterations 1, 3, 5 */
    assert_int_equal(rb->element[0].count, 3);       /* those of 2, 4, 6 */
    assert_int_equal(rt->element[0].count, 6);
    assert_true(ra->element[0].value >= 3 * 16);     /* the faults of those 3 instances, not extrapolated */
    assert_true(rb->element[0].value > 0);
}

static void test_publication_lists_counters(void **state)
{
    (void)state;
    const int user_chose_tables = getenv("LIBPFM_FORCE_PMU") != NULL;
    assert_int_equal(MRI_Init(), MRI_OK);
    MRI_HW_Info hw;
    assert_int_equal(MRI_Get_System_Information(&hw), MRI_OK);
    print_message("counter source: %s\n", hw.counter_source);
    /* Where libpfm4 does not know the CPU the backend names the tables it
     * chose for PAPI's start-up, and the process's environment is its
     * own again afterwards; a user's own choice is left alone. */
    if (user_chose_tables) {
        assert_null(strstr(hw.counter_source, "CPU events of"));
    } else {
        assert_null(getenv("LIBPFM_FORCE_PMU"));
    }
    MRI_Runtime_Information_Table t;
    assert_int_equal(Get_Available_Runtime_Information(&t), MRI_OK);
    int l1 = 0, task_clock = 0;
    /* A machine said to have no CPU PMU counts no CPU event. */
    const int no_pmu = strstr(hw.counter_source, "; no CPU PMU") != NULL;
    for (int i = 0; i < t.nr_Elements; ++i) {
        const MRI_Runtime_Information_Info *info = &t.info[i];
        if (no_pmu && (info->ri == MRI_TOTAL_CYCLES || info->ri == MRI_TOTAL_INSTRUCTIONS))
            assert_false(info->available);
        if (info->ri == MRI_LC1_DATA_READ_MISS) {
            l1 = 1;
            assert_false(info->available);
            assert_non_null(strstr(info->reason, "PAPI_L1_LDM"));
            assert_true(info->needs_counter);
        }
        if (strcmp(info->name, "perf::TASK-CLOCK") == 0) {
            task_clock = 1;
            assert_true(info->available);
            assert_string_equal(info->backend, "papi");
            MRI_Aggregation_Table a;
            assert_int_equal(Get_Available_Aggregations(info->ri, &a), MRI_OK);
            assert_int_equal(a.nr_Elements, 10);
        }
    }
    assert_true(l1);
    if (papi_built()) {
        assert_true(task_clock);
        assert_true(hw.nr_Hardware_Counters > 0);
    } else {
        assert_false(task_clock);
        assert_non_null(strstr(hw.counter_source, "absent"));
    }
}

/* Per-step minimum of the parent's raw and compensated inclusive time (ns)
 * in the flat profile `id`, over `steps` steps. */
static void parent_steps(MRI_Request_ID id, int steps, double *raw, double *comp)
{
    MRI_Region_Spec step = region("step"), parent = region("parent");
    double last_raw = 0, last_comp = 0;
    *raw = *comp = 1e300;
    for (int i = 0; i <= steps; ++i) {
        if (i > 0) {
            assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
            assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        }
        void *p = NULL;
        assert_int_equal(MRI_Get_Data(id, &p), MRI_OK);
        const MRI_Histogram_Profile_Results *res = p;
        for (int e = 0; e < res->nr_Elements; ++e) {
            const MRI_Profile_Element *el = &res->element[e];
            if (el->region.id.line_NR != parent.id.line_NR) continue;
            if (i > 0 && el->inclusive - last_raw < *raw) *raw = el->inclusive - last_raw;
            if (i > 0 && el->compensated_inclusive - last_comp < *comp) *comp = el->compensated_inclusive - last_comp;
            last_raw = el->inclusive;
            last_comp = el->compensated_inclusive;
        }
    }
}

/* One process's run of the check below: the share of the overhead the
 * counting children added to their parent that the compensation left (0:
 * all removed; negative: more removed than they added). NAN where PAPI was
 * not built in. */
static double counter_overhead_left(void)
{
    char *argv[] = {MRI_TESTAPP, "children", "2000", "100", NULL};
    load(argv);
    if (!papi_built()) return NAN;
    MRI_Region_Spec parent = region("parent"), child = region("child");
    MRI_Region_Table just_parent = {&parent, 1}, just_child = {&child, 1};
    MRI_Runtime_Information_Spec time = MRI_EXECUTION_TIME, clock = ri_named("perf::TASK-CLOCK");
    MRI_Request_ID alone = MRI_Profile_Request(&time, &just_parent, NULL, NULL);
    assert_true(alone > 0);
    double t0, raw, comp;
    parent_steps(alone, 4, &raw, &t0);
    MRI_Overhead_Calibration c;
    assert_int_equal(MRI_Get_Overhead_Calibration(&c), MRI_OK);
    assert_false(c.kind[MRI_OVERHEAD_COUNTER].calibrated);

    MRI_Region_Spec both_regions[2] = {parent, child};
    MRI_Region_Table both = {both_regions, 2};
    MRI_Request_ID times = MRI_Profile_Request(&time, &both, NULL, NULL);
    MRI_Request_ID counts = MRI_Profile_Request(&clock, &just_child, NULL, NULL);
    assert_true(times > 0 && counts > 0);
    parent_steps(times, 4, &raw, &comp);
    assert_int_equal(MRI_Get_Overhead_Calibration(&c), MRI_OK);
    const MRI_Overhead_Value *k = &c.kind[MRI_OVERHEAD_COUNTER];
    const double left = (comp - t0) / (raw - t0);
    print_message("counter kind: delta_i %.1f ns, own %.1f ns (%s); timer kind delta_i %.1f ns\n",
                  k->delta_inclusive, k->delta_own, k->note, c.kind[MRI_OVERHEAD_TIMER].delta_inclusive);
    print_message("parent alone %.0f ns; with 2000 counting children %.0f ns raw, %.0f ns compensated "
                  "(%.1f%% of the added overhead left)\n",
                  t0, raw, comp, 100.0 * left);
    assert_true(k->calibrated);
    assert_non_null(strstr(k->note, "perf::TASK-CLOCK"));
    assert_true(k->delta_inclusive > c.kind[MRI_OVERHEAD_TIMER].delta_inclusive);
    assert_true(raw - t0 > 0.2 * t0);
    MRI_Finalize();
    return left;
}

/* How many processes the check below runs; the median is held to the bound.
 * A counter read is a system call whose cost on a virtual machine drifts
 * by half between the calibration and the measurement a few milliseconds
 * later: on the Zen 5 KVM guest, 3 runs in 30 had each child cost ~1950 ns
 * against a calibrated ~1450 ns and left 26-28% (the parent alone was
 * 1.5x slower in those runs too); the others left 0-22%. On the Zen 3
 * guest the calibration itself falls on one of two sides from one process
 * to the next (2270 or 2920-3020 ns, against about 3000 in place): in 15
 * processes the share left was -1 to 25%, and in one fresh-clone CI run 3
 * processes of 5 left 27.5-33.6%; quiet runs gave medians of 28.6%, and
 * runs beside a parallel build 37.9 to 54%. Hence the bound of 50% on the
 * median: compensation switched off leaves 100%, applied twice about
 * -100%, both still far outside it. Once, not held, under a sanitizer (MRI_TEST_SANITIZED). */
#define COUNTER_RUNS (MRI_TEST_SANITIZED ? 1 : 5)

/* Regions that read counters cost far more than time-only ones; their
 * overhead is calibrated for the requested events at the release that
 * starts counting them, and removed from the enclosing time. Compensation
 * switched off leaves 100%, applied twice about -100%. */
static void test_counter_overhead_is_calibrated_and_compensated(void **state)
{
    (void)state;
    double left[COUNTER_RUNS];
    for (int run = 0; run < COUNTER_RUNS; ++run) {
        left[run] = counter_overhead_left();
        if (isnan(left[run])) skip();
    }
    const double m = median(left, COUNTER_RUNS);
    if (MRI_TEST_SANITIZED) return; /* the figure is printed above */
    if (fabs(m) > 0.50)
        fail_msg("the median of %d runs left %.1f%% of the added overhead, not within 50%%", COUNTER_RUNS, 100.0 * m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_page_faults_count_the_pages_touched, teardown),
        cmocka_unit_test_teardown(test_task_clock_tracks_time_per_thread, teardown),
        cmocka_unit_test_teardown(test_counter_profile, teardown),
        cmocka_unit_test_teardown(test_counters_in_reused_openmp_threads, teardown),
        cmocka_unit_test_teardown(test_unavailable_and_unknown_events, teardown),
        cmocka_unit_test_teardown(test_context_switches_are_counted_in_the_kernel, teardown),
        cmocka_unit_test_teardown(test_overlong_event_name, teardown),
        cmocka_unit_test_teardown(test_counter_budget, teardown),
        cmocka_unit_test_teardown(test_counter_rotation_across_breakpoints, teardown),
        cmocka_unit_test_teardown(test_publication_lists_counters, teardown),
        cmocka_unit_test_teardown(test_counter_overhead_is_calibrated_and_compensated, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

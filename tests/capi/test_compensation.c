/*
 * test_compensation - overhead compensation (seed paper 001) through mri.h,
 * tool and application in two processes.
 *
 * The application's "parent" region calls a short "child" region N times
 * per step. With only the parent measured, its compensated time per step is
 * the reference T0 (nothing else of the monitor runs inside it). Once the
 * child is measured too, the parent's raw time grows by N times the
 * monitor's per-instance overhead; its compensated time must come back to
 * T0. Each figure is the minimum over a few steps (the machine is shared).
 *
 * Two checks. The arithmetic, exactly: each parent instance loses N
 * calibrated pairs and its own part, no more and no less (in a profile,
 * whose compensated sums are not clamped instance by instance; in an
 * aggregate, all of its time where it was shorter than that), and
 * compensated times add up (expect_removal, expect_additive; they depend
 * on no timing). The calibration against the program: the
 * compensated parent must come within 50% of the added overhead from T0
 * (and the overhead must be visible: at least 20% of T0). Why so wide: the
 * calibration (the paper's) times enter/exit pairs with nothing between
 * them; in place an out-of-order core runs part of the program's work in
 * the time of the monitor's clock reads (docs/ACCURACY.md, "The clock's
 * shadow"), or loses overlap the program had. On an AMD Zen 4 host 5 to
 * 15% was left; on a Zen 5 host the
 * calibrated pair is 17.8 ns, a calibration with the child's 40 additions
 * inside the pair 14.9 ns, and the compensation removes 21-33% more than
 * the children added (one run's figure; a CI host the same). Switched off,
 * compensation leaves 100%; applied twice, it removes more than 100% too
 * much. docs/ACCURACY.md has the figures on whole programs.
 */
#include <math.h>
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

#define CHILDREN "20000"
#define STEPS_PER_PHASE 4

/* The test program in MODE ("children": the parent calls its children;
 * "offload": it runs them in a thread it creates and joins). */
static void load_mode(const char *mode)
{
    char *argv[] = {"mri_testapp", (char *)mode, CHILDREN, "100", NULL};
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
}

static void load(void) { load_mode("children"); }

static void finish(void)
{
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    assert_int_equal(MRI_Finalize(), MRI_OK);
}

static MRI_Request_ID profile(int callpath, const char *a, const char *b)
{
    MRI_Region_Spec r[2] = {region(a), b ? region(b) : region(a)};
    MRI_Region_Table regions = {r, b ? 2 : 1};
    MRI_Runtime_Information_Spec ri = MRI_EXECUTION_TIME;
    MRI_Request_ID id = callpath ? MRI_Callpath_Profile_Request(&ri, &regions, NULL, NULL)
                                 : MRI_Profile_Request(&ri, &regions, NULL, NULL);
    if (id < 0) fail_msg("profile request: %s", MRI_Get_Error_Message());
    return id;
}

static const MRI_Profile_Element *element(MRI_Request_ID id, const char *name)
{
    void *p = NULL;
    if (MRI_Get_Data(id, &p) != MRI_OK) fail_msg("get data: %s", MRI_Get_Error_Message());
    const MRI_Histogram_Profile_Results *res = p;
    MRI_Region_Spec want = region(name);
    for (int i = 0; i < res->nr_Elements; ++i)
        if (res->element[i].region.id.line_NR == want.id.line_NR &&
            res->element[i].region.id.file_ID == want.id.file_ID)
            return &res->element[i];
    fail_msg("no profile element for %s", name);
    return NULL;
}

/* The parent's compensated exclusive time is its compensated inclusive
 * time minus its children's compensated inclusive time (totals so far),
 * or 0 where that is negative: the compensation removed more than the
 * parent's own work between its children (a few ns per child: a
 * calibration a little above what a pair costs in place does that). A
 * profile adds compensated times unclamped, instance by instance, and
 * clamps only what it reports. So where the children's total is reported
 * as 0 it may have been below 0 (each child's compensated time can be,
 * by up to its estimated overhead): the parent's exclusive time is then
 * its inclusive time plus that much, at most `slack` (every child's
 * estimated overhead, over every parent instance so far). A fast phase of
 * the host can take the children's total below 0 (-334 ns seen in CI). */
static void expect_additive(double inclusive, double exclusive, double children, double slack)
{
    const double own = inclusive > children ? inclusive - children : 0;
    const double tolerance = 1e-6 * inclusive + 2;
    if (children == 0 && exclusive >= own - tolerance && exclusive <= own + slack + tolerance) return;
    if (fabs(exclusive - own) > tolerance)
        fail_msg("parent's compensated exclusive %.0f ns, not its compensated inclusive %.0f ns "
                 "minus its children's %.0f ns",
                 exclusive, inclusive, children);
}

/* The overhead the compensation must remove from one parent instance
 * whose N children are measured too, by the published calibration of
 * `kind`: N children's pairs and the parent's own part. */
static double expected_removal(int kind)
{
    MRI_Overhead_Calibration c;
    assert_int_equal(MRI_Get_Overhead_Calibration(&c), MRI_OK);
    assert_true(c.kind[kind].calibrated);
    return atof(CHILDREN) * c.kind[kind].delta_inclusive + c.kind[kind].delta_own;
}

/* Steps of the current check whose whole removal was seen (see
 * expect_removal). */
static int g_unclamped;

/* Whether a parent instance of `raw` ns, compensated to `comp` ns, lost
 * what the calibration says: `expected` ns, or, where `clamped` (an
 * aggregate's instance values are never below 0), all of it where the
 * instance was shorter. That happens where the machine
 * ran the instance faster than it ran the calibration: on a shared KVM
 * guest whose speed swings by 2x within a second, a calibration of 67 ns
 * a pair met children that cost 47. Up to the fixed-point rounding of the
 * per-instance amounts (a few ns over 20 000 children), this depends on
 * no timing: a child left out of the count, or a pair removed twice, is
 * off by far more. */
static void expect_removal(const char *what, double raw, double comp, double expected, int clamped)
{
    const double removed = raw - comp, tolerance = 1e-3 * expected + 10;
    const double due = clamped && raw < expected ? raw : expected;
    if (fabs(removed - due) > tolerance)
        fail_msg("%s: the compensation removed %.0f ns from a parent instance of %.0f ns, the calibration says %.0f",
                 what, removed, raw, expected);
    if (!clamped || raw > expected + tolerance) ++g_unclamped;
}

/* At least one step of the check showed the whole removal: where every
 * instance was shorter than it, the exact check above proved nothing. */
static void expect_some_unclamped(const char *what)
{
    if (g_unclamped == 0)
        fail_msg("%s: every parent instance was shorter than the calibrated removal; the exact check saw none whole",
                 what);
}

/* Runs STEPS_PER_PHASE steps; the minimum per step of the parent's raw and
 * compensated inclusive time (ns) in request `id`. With `removal` > 0,
 * the request profiles the children too: each step's figures must add up
 * (expect_additive), and the compensation must have removed `removal` ns
 * from the parent (expect_removal). */
static void steps_checked(MRI_Request_ID id, double *raw, double *comp, double removal)
{
    MRI_Region_Spec step = region("step");
    const MRI_Profile_Element *e = element(id, "parent");
    double last_raw = e->inclusive, last_comp = e->compensated_inclusive;
    *raw = *comp = INFINITY;
    for (int i = 0; i < STEPS_PER_PHASE; ++i) {
        assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        e = element(id, "parent");
        const double d_raw = e->inclusive - last_raw, d_comp = e->compensated_inclusive - last_comp;
        if (d_raw < *raw) *raw = d_raw;
        if (d_comp < *comp) *comp = d_comp;
        if (removal > 0) {
            const double children = element(id, "child")->compensated_inclusive;
            expect_additive(e->compensated_inclusive, e->compensated_exclusive, children,
                            removal * (double)e->instances);
            /* Exactly the removal, unless a total was reported as 0 (it
             * went below: the parent's instances shorter than their
             * estimated overhead), which hides the step's figure. */
            if (last_comp > 0 && e->compensated_inclusive > 0) expect_removal("profile", d_raw, d_comp, removal, 0);
        }
        last_raw = e->inclusive;
        last_comp = e->compensated_inclusive;
    }
}

static void steps(MRI_Request_ID id, double *raw, double *comp) { steps_checked(id, raw, comp, 0); }

/* Each compensation check runs RUNS times, each in its own process, and
 * the median is held to the bound: one process's figure depends on where
 * its code and stack landed (the parent alone ran 1.27 or 1.40 ms in
 * different processes of the same build), and on a shared machine a single
 * run now and then left more than the bound. */
#define RUNS 3

/* Within one process the reference (the parent alone) and the check's
 * measurement alternate, ROUNDS phases of each, and each figure is the
 * minimum over all of its phases: a slow spell of the machine then moves
 * both alike. Measured one after the other, a reference taken in such a
 * spell (the parent alone 20 to 60% slower than in the other runs) made a
 * CI run's compensation look 50 to 130% too large. */
#define ROUNDS 3

/* How many runs in all a check may repeat at once because the machine
 * changed its speed between the calibration and the run (see left_share).
 * Beyond these, a disturbed run is repeated after a pause of PAUSE_S
 * seconds, while the checks have paused less than PAUSE_BUDGET_S in all: a
 * CI run had every child cost 2.3 times its calibration in all 16 runs of
 * the four checks, over the 4 s they took (calibration and parent alone
 * as usual; the same checks had passed 25 minutes earlier in that run),
 * and an earlier one for a minute (docs/ACCURACY.md, "What the host's
 * phases slow down": the parent's chain of additions is latency-bound, the
 * monitor's pairs are not). A monitor whose pairs really cost twice their
 * calibration fails after the budget. */
#define MAX_REPEATS 3
#define PAUSE_S 5
#define PAUSE_BUDGET_S 120
static int g_paused; /* seconds, over all the checks of this file */

/* One run: the share of the overhead the children's measurement added that
 * the compensation left (0: all removed), or NAN when the run says nothing
 * about the compensation, because the machine ran the children at another
 * speed than the calibration, or the parent alone at another speed than
 * the run. Since each parent instance loses exactly N
 * calibrated Delta_i (expect_removal), the share is about 1 - Delta_i /
 * (what each child added), and the bound of 50% either way is: each child
 * added between 2/3 of Delta_i and twice it. Beyond, the cause is the
 * machine, not the monitor: a CI run once had every child cost 40 ns
 * against a calibrated 19, in all four checks, for a minute, and 15 ns
 * again right after; on a KVM guest whose speed swings by 2x to 5x within
 * seconds (docs/ACCURACY.md), a calibration taken in a slow spell met
 * children that cost half of it. Such a run is repeated, at once and
 * then after pauses (MAX_REPEATS); a monitor whose pairs really cost twice
 * their calibration, or 2/3 of it, fails all the same, after the repeats. */
static double left_share(const char *what, int kind, double t0, double raw, double comp)
{
    print_message("%s: parent alone %.0f ns, with %s children measured %.0f ns raw, %.0f ns compensated "
                  "(%.1f%% of the added overhead left)\n",
                  what, t0, CHILDREN, raw, comp, 100.0 * (comp - t0) / (raw - t0));
    /* Measured 20000 times, the children add at least their calibrated
     * cost, a multiple of the parent's own time. Less than a fifth of it
     * says the parent alone ran in a slow spell of the machine and the
     * measured run in a fast one (seen: 1.25 ms alone, 1.26 ms with the
     * children measured, against 0.33 and 1.05 ms in the run before): a
     * disturbed run, repeated like the next check's. */
    if (raw - t0 < 0.2 * t0) {
        print_message("%s: measuring the children added only %.0f ns to %.0f ns: the machine ran the parent alone "
                      "slower than this run\n",
                      what, raw - t0, t0);
        return NAN;
    }
    MRI_Overhead_Calibration c;
    assert_int_equal(MRI_Get_Overhead_Calibration(&c), MRI_OK);
    const double per_child = (raw - t0) / atof(CHILDREN), delta = c.kind[kind].delta_inclusive;
    if (!MRI_TEST_SANITIZED && (per_child > 2.0 * delta || per_child < delta / 1.5)) {
        print_message("%s: each child added %.1f ns, %s the calibrated %.1f ns: the machine ran this run at "
                      "another speed than the calibration\n",
                      what, per_child, per_child > delta ? "more than twice" : "less than 2/3 of", delta);
        return NAN;
    }
    return (comp - t0) / (raw - t0);
}

/* Whether a run's share counts; a disturbed one (NAN) is repeated while
 * repeats are left, and fails the check when none are. */
static int accepted(const char *what, double share, int *repeats)
{
    if (!isnan(share)) return 1;
    if (++*repeats <= MAX_REPEATS) return 0;
    if (g_paused + PAUSE_S > PAUSE_BUDGET_S)
        fail_msg("%s: %d runs whose children cost more than twice, or less than 2/3 of, their calibration, or "
                 "added less than a fifth of the parent's time, the last ones after the checks had paused %d s",
                 what, *repeats, g_paused);
    print_message("%s: %d disturbed runs; the next one in %d s\n", what, *repeats, PAUSE_S);
    sleep(PAUSE_S);
    g_paused += PAUSE_S;
    return 0;
}

/* The median run left at most 50% of the added overhead (either way; see
 * the top of the file). Not under a sanitizer (MRI_TEST_SANITIZED): there
 * the figure measures the sanitizer's checks in the monitor's code, which
 * cost more or less in place than in the calibration's tight loop. */
#define MAX_LEFT 0.50
static void expect_compensated(const char *what, double share[RUNS])
{
    const double m = median(share, RUNS);
    if (MRI_TEST_SANITIZED) {
        print_message("%s: the median run left %.1f%% of the added overhead (not held under a sanitizer)\n", what,
                      100.0 * m);
        return;
    }
    if (fabs(m) > MAX_LEFT)
        fail_msg("%s: the median run left %.1f%% of the added overhead, not within %.0f%%", what, 100.0 * m,
                 100.0 * MAX_LEFT);
}

static void test_calibration_is_published(void **state)
{
    (void)state;
    load();
    MRI_Overhead_Calibration c;
    assert_int_equal(MRI_Get_Overhead_Calibration(NULL), MRI_Error);
    assert_int_equal(MRI_Get_Overhead_Calibration(&c), MRI_OK);
    assert_true(c.repetitions >= 100 && c.experiments >= 10);
    for (int k = MRI_OVERHEAD_TIMER; k <= MRI_OVERHEAD_CALLPATH; ++k) {
        const MRI_Overhead_Value *v = &c.kind[k];
        print_message("kind %d: delta_i %.2f ns, delta_e %.2f ns, own %.2f ns\n", k, v->delta_inclusive,
                      v->delta_exclusive, v->delta_own);
        assert_true(v->calibrated);
        /* A pair costs at least a clock read and at most what a slow
         * machine under a sanitizer might take. */
        assert_true(v->delta_inclusive > 1.0 && v->delta_inclusive < 20000.0);
        assert_true(v->delta_own > 0.0 && v->delta_own < v->delta_inclusive);
        assert_true(fabs(v->delta_exclusive - (v->delta_inclusive - v->delta_own)) < 1e-9);
    }
    /* The counter kind waits for counter requests, the cache-simulator kind
     * for simulated cache events. */
    assert_false(c.kind[MRI_OVERHEAD_COUNTER].calibrated);
    assert_non_null(strstr(c.kind[MRI_OVERHEAD_COUNTER].note, "first release"));
    assert_false(c.kind[MRI_OVERHEAD_CACHE_SIMULATOR].calibrated);
    assert_non_null(strstr(c.kind[MRI_OVERHEAD_CACHE_SIMULATOR].note, "first release with simulated cache events"));
    /* The first release measures the time kinds again and keeps the
     * smaller value of each (a slow spell of the machine during one
     * measurement must not inflate the run's compensation). */
    MRI_Region_Spec step = region("step");
    assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    MRI_Overhead_Calibration after;
    assert_int_equal(MRI_Get_Overhead_Calibration(&after), MRI_OK);
    for (int k = MRI_OVERHEAD_TIMER; k <= MRI_OVERHEAD_CALLPATH; ++k) {
        print_message("kind %d after the first release: delta_i %.2f ns, own %.2f ns\n", k,
                      after.kind[k].delta_inclusive, after.kind[k].delta_own);
        assert_true(after.kind[k].calibrated);
        assert_true(after.kind[k].delta_inclusive <= c.kind[k].delta_inclusive);
        assert_true(after.kind[k].delta_own <= c.kind[k].delta_own);
        assert_true(after.kind[k].delta_inclusive > 1.0);
    }
    finish();
    expect_error(MRI_Get_Overhead_Calibration(&c), "MRI_Init");
    expect_error(MRI_Get_Overhead_Calibration(NULL), "MRI_Init"); /* not initialised comes first */
}

/* What the four compensation checks measure with the children: a flat or
 * a callpath profile of parent and child; the same flat profile with the
 * children in a thread the parent waits for; the parent's time as a MIN
 * aggregate while a profile measures the child. */
enum check { FLAT, CALLPATH, JOIN, BARRIER, AGGREGATE };
static const char *const check_name[] = {"flat", "callpath", "join", "barrier", "aggregate MIN"};

static int check_kind(enum check what) { return what == CALLPATH ? MRI_OVERHEAD_CALLPATH : MRI_OVERHEAD_TIMER; }

/* One phase of the check's measurement: its requests go to ids[0..1]
 * (ids[1] < 0 when there is one); the parent's minimum raw and compensated
 * time per step are folded into *raw and *comp. */
static void measured_phase(enum check what, MRI_Request_ID ids[2], double *raw, double *comp)
{
    double r, c;
    ids[1] = -1;
    switch (what) {
    case FLAT:
    case CALLPATH:
        ids[0] = profile(what == CALLPATH, "parent", "child");
        steps_checked(ids[0], &r, &c, expected_removal(check_kind(what)));
        break;
    case JOIN: /* the children's pairs reach the parent at the join: what is removed depends on the timing */
    case BARRIER: /* at the second barrier, alike */
        ids[0] = profile(0, "parent", "child");
        steps(ids[0], &r, &c);
        break;
    case AGGREGATE: {
        ids[0] = aggregate(MRI_EXECUTION_TIME, "parent", MRI_MIN, MRI_PER_THREAD);
        ids[1] = profile(0, "child", NULL);
        const double removal = expected_removal(check_kind(what));
        MRI_Region_Spec step = region("step");
        for (int i = 0; i < STEPS_PER_PHASE; ++i) {
            assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
            assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        }
        const MRI_Aggregate_Request_Results *a = agg_data(ids[0]);
        assert_int_equal(a->nr_Elements, 1);
        r = a->element[0].value;
        c = a->element[0].compensated_value;
        /* Every instance loses the same amount (or all it has): the
         * smallest raw and the smallest compensated value differ by
         * exactly that. */
        expect_removal(check_name[what], r, c, removal, 1);
        break;
    }
    }
    if (r < *raw) *raw = r;
    if (c < *comp) *comp = c;
}

/* One run of a check, in a process of its own: ROUNDS times the parent
 * alone, then with its children measured. Returns the share of the added
 * overhead left (left_share) and leaves the last phase's requests in ids
 * for the caller's checks; the caller finishes. */
static double measured_run(enum check what, MRI_Request_ID ids[2])
{
    load_mode(what == JOIN ? "offload" : what == BARRIER ? "barrier" : "children");
    double t0 = INFINITY, raw = INFINITY, comp = INFINITY;
    ids[0] = ids[1] = -1;
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < 2; ++i)
            if (ids[i] >= 0) assert_int_equal(MRI_Request_Delete(ids[i]), MRI_OK);
        MRI_Request_ID only = profile(0, "parent", NULL);
        double r, c;
        steps(only, &r, &c);
        assert_true(c <= r);
        assert_int_equal(MRI_Request_Delete(only), MRI_OK);
        if (c < t0) t0 = c;
        measured_phase(what, ids, &raw, &comp);
    }
    return left_share(check_name[what], check_kind(what), t0, raw, comp);
}

/* RUNS accepted runs of a check, each run's last requests looked at by
 * `inspect` (when given), the median share held to the bound. */
static void check_runs(enum check what, void (*inspect)(MRI_Request_ID ids[2]))
{
    double share[RUNS];
    g_unclamped = 0;
    for (int run = 0, repeats = 0; run < RUNS;) {
        MRI_Request_ID ids[2];
        share[run] = measured_run(what, ids);
        if (inspect) inspect(ids);
        finish();
        run += accepted(check_name[what], share[run], &repeats);
    }
    if (what != JOIN && what != BARRIER) expect_some_unclamped(check_name[what]); /* those have no exact check */
    expect_compensated(check_name[what], share);
}

/* The child's own compensated time is below its raw time, and its
 * compensated exclusive time equals its inclusive (no profiled
 * subregion). */
static void inspect_flat(MRI_Request_ID ids[2])
{
    const MRI_Profile_Element *c = element(ids[0], "child");
    assert_true(c->compensated_inclusive < c->inclusive);
    assert_true(fabs(c->compensated_exclusive - c->compensated_inclusive) <= 1e-6 * c->compensated_inclusive + 1);
}

/* One parent -> child edge, compensated below its raw time and above 0. */
static void inspect_callpath(MRI_Request_ID ids[2])
{
    MRI_Callpath_Profile_Results *cp = NULL;
    assert_int_equal(MRI_Get_Callpath_Data(ids[0], &cp), MRI_OK);
    MRI_Region_Spec parent = region("parent"), child = region("child");
    int edges = 0;
    for (int i = 0; i < cp->nr_Elements; ++i) {
        const MRI_Callpath_Element *e = &cp->element[i];
        if (!e->has_caller || e->caller.id.line_NR != parent.id.line_NR || e->callee.id.line_NR != child.id.line_NR)
            continue;
        ++edges;
        assert_true(e->compensated_inclusive < e->inclusive);
        assert_true(e->compensated_inclusive > 0);
    }
    assert_int_equal(edges, 1);
}

static void test_flat_profile_is_compensated(void **state)
{
    (void)state;
    check_runs(FLAT, inspect_flat);
}

static void test_callpath_profile_is_compensated(void **state)
{
    (void)state;
    check_runs(CALLPATH, inspect_callpath);
}

/* The parent measured alone waits for a thread running its children;
 * measuring the children slows that thread, and the parent with it. The
 * children's overhead is not the parent's thread's, but the join hands it
 * over (libmonitor/threads.cpp): the compensated parent is back near its
 * time alone. Without that, all of the added overhead would be left. */
static void test_overhead_waited_for_at_a_join_is_compensated(void **state)
{
    (void)state;
    check_runs(JOIN, NULL);
}

/* The same with a thread kept for every step, which the parent lets go
 * through a barrier and waits for at a second one: the barrier hands the
 * children's overhead over as the join does. */
static void test_overhead_waited_for_at_a_barrier_is_compensated(void **state)
{
    (void)state;
    check_runs(BARRIER, NULL);
}

static void test_time_aggregate_is_compensated(void **state)
{
    (void)state;
    check_runs(AGGREGATE, NULL);
}

static void test_compensation_can_be_switched_off(void **state)
{
    (void)state;
    load();
    MRI_Request_ID both = profile(0, "parent", "child");
    MRI_Request_ID t = aggregate(MRI_EXECUTION_TIME, "parent", MRI_SUM, MRI_PER_PROCESS);
    assert_int_equal(MRI_Set_Compensation(both, 0), MRI_OK);
    assert_int_equal(MRI_Set_Compensation(t, 0), MRI_OK);
    expect_error(MRI_Set_Compensation(12345, 0), "does not exist");
    double raw, comp;
    steps(both, &raw, &comp);
    assert_true(raw == comp);
    const MRI_Profile_Element *c = element(both, "child");
    assert_true(c->inclusive == c->compensated_inclusive && c->exclusive == c->compensated_exclusive);
    const MRI_Aggregate_Request_Results *a = agg_data(t);
    assert_true(a->element[0].value > 0 && a->element[0].value == a->element[0].compensated_value);
    /* Back on: from the next release on, compensated values grow less. */
    assert_int_equal(MRI_Set_Compensation(both, 1), MRI_OK);
    steps(both, &raw, &comp);
    assert_true(comp < raw);
    finish();
}

static void test_trace_requests_have_nothing_to_compensate(void **state)
{
    (void)state;
    load();
    MRI_Region_Spec r = region("parent");
    MRI_Region_Table regions = {&r, 1};
    MRI_Runtime_Information_Spec ri = MRI_REGION_EVENT;
    MRI_Request_ID id = MRI_Trace_Request(&ri, &regions, NULL, NULL);
    assert_true(id > 0);
    expect_error(MRI_Set_Compensation(id, 0), "trace request");
    finish();
}

/* One release to the end of the next step. */
static void one_step(void)
{
    MRI_Region_Spec step = region("step");
    assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
}

/* A thread whose overhead was made up for by waiting at a barrier does not
 * hand it on at the next: in the first step the second thread's children
 * are measured and it then waits 5 ms for "parent"; in the second "parent"
 * waits 5 ms for it, which had no overhead since. Before, the thread kept
 * its clock, and the second step's "parent" lost the first step's
 * overhead (N children's worth, about 1 ms) it had not waited for. */
static void test_overhead_made_up_for_at_a_barrier_is_not_handed_on(void **state)
{
    (void)state;
    char *argv[] = {"mri_testapp", "barrier_ahead", CHILDREN, NULL};
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    MRI_Request_ID id = profile(0, "parent", "child");
    one_step();
    const MRI_Profile_Element *p = element(id, "parent");
    assert_int_equal(p->instances, 1);
    const double raw1 = p->inclusive, comp1 = p->compensated_inclusive;
    const MRI_Profile_Element *c = element(id, "child");
    assert_int_equal(c->instances, atoi(CHILDREN));
    const double children_overhead = c->inclusive - c->compensated_inclusive;
    one_step();
    p = element(id, "parent");
    assert_int_equal(p->instances, 2);
    const double raw2 = p->inclusive - raw1, removed2 = raw2 - (p->compensated_inclusive - comp1);
    print_message("barrier ahead: the first parent lost %.0f of %.0f ns, the second %.0f of %.0f ns (the "
                  "children's overhead: %.0f ns)\n",
                  raw1 - comp1, raw1, removed2, raw2, children_overhead);
    assert_true(raw2 >= 5e6);
    /* Its own part only: well under a tenth of the children's overhead. */
    if (!(removed2 >= 0 && removed2 < 0.1 * children_overhead))
        fail_msg("the second parent lost %.0f ns: overhead handed on from the first step", removed2);
    finish();
}

/* A compensated SUM over a region is its profile's compensated inclusive
 * time: both add each instance's time less its own overhead unclamped.
 * The own part is set a quarter of the way from the fastest child to a
 * child's mean time in the step before, so that the fastest children come
 * out below 0 and the total above it (a step's mean moves by 15% from one
 * step to the next here, its fastest child less): a SUM that took the
 * children below 0 as 0 would come out above the profile. The
 * equalities are exact; whether a step shows both sides depends on its
 * speed against the step before, so a step that does not is measured
 * again, with the own part from it, up to 5 times. (With 0.8 of the mean, one CI run's step ran 25% faster than the
 * one before and left every total below 0; under ThreadSanitizer no child
 * was below 0.8 of the mean, which slow children inflate there.) */
static void test_time_sum_is_the_profiles(void **state)
{
    (void)state;
    load();
    one_step(); /* a warm-up: the first step's children ran 25% slower than the next's */
    MRI_Request_ID prof = profile(0, "child", NULL);
    MRI_Request_ID min = aggregate(MRI_EXECUTION_TIME, "child", MRI_MIN, MRI_PER_PROCESS);
    one_step();
    for (int attempt = 1;; ++attempt) {
        const MRI_Profile_Element *c = element(prof, "child");
        const double mean = c->inclusive / (double)c->instances, fastest = agg_data(min)->element[0].value;
        const double own = fastest + (mean - fastest) / 4;
        print_message("attempt %d: a child took %.2f ns on average in the step before, the fastest %.2f\n", attempt,
                      mean, fastest);
        assert_int_equal(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, own, own), MRI_OK);
        assert_int_equal(MRI_Request_Delete(prof), MRI_OK);
        assert_int_equal(MRI_Request_Delete(min), MRI_OK);
        prof = profile(0, "child", NULL);
        min = aggregate(MRI_EXECUTION_TIME, "child", MRI_MIN, MRI_PER_PROCESS);
        MRI_Request_ID sum = aggregate(MRI_EXECUTION_TIME, "child", MRI_SUM, MRI_PER_PROCESS);
        one_step();
        c = element(prof, "child");
        const MRI_Aggregate_Request_Results *a = agg_data(sum);
        const double min_comp = agg_data(min)->element[0].compensated_value;
        print_message("children: raw %.0f ns, compensated %.0f ns (profile) and %.0f ns (SUM), fastest %.1f ns\n",
                      c->inclusive, c->compensated_inclusive, a->element[0].compensated_value, min_comp);
        assert_true(a->element[0].count == c->instances);
        assert_true(fabs(a->element[0].value - c->inclusive) <= 1e-6 * c->inclusive);
        assert_true(fabs(a->element[0].compensated_value - c->compensated_inclusive) <= 1e-6 * c->inclusive + 1.0);
        /* An instance's own value is never below 0. */
        assert_true(min_comp >= 0);
        /* Both sides shown: a child at or below 0, the total above it. */
        if (c->compensated_inclusive > 0 && min_comp == 0) break;
        if (attempt == 5) fail_msg("5 steps in a row did not show a child below 0 and a total above 0");
        assert_int_equal(MRI_Request_Delete(sum), MRI_OK);
    }
    finish();
}

/* A tool sets the timer kind's overhead in place of the calibration
 * (MRI_Set_Overhead): from the next release on, the published calibration
 * says so and each parent instance loses exactly N times the tool's value
 * plus its own part; the callpath kind keeps its measurement; cleared,
 * the measurement comes back. The values are far below the calibration
 * (2 ns a pair against 15 to 70 on the hosts measured), so the removal
 * cannot pass for the calibrated one; exact, they depend on no timing. */
static void test_overhead_set_by_the_tool(void **state)
{
    (void)state;
    expect_error(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, 2.0, 0.5), "MRI_Init");
    load();
    expect_error(MRI_Set_Overhead((MRI_Overhead_Kind)-1, 2.0, 0.5), "not an overhead kind");
    expect_error(MRI_Set_Overhead(MRI_OVERHEAD_KINDS, 2.0, 0.5), "not an overhead kind");
    expect_error(MRI_Clear_Overhead((MRI_Overhead_Kind)7), "not an overhead kind");
    expect_error(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, NAN, 0.5), "finite");
    expect_error(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, 2.0, INFINITY), "finite");
    expect_error(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, -2.0, 0.0), "negative");
    expect_error(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, 2.0, -0.5), "negative");
    expect_error(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, 2.0, -2.0), "negative"); /* only -1 means "measured" */
    expect_error(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, 2.0, 3.0), "above delta_inclusive");
    expect_error(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, 2e6, 1.0), "above the bound");
    expect_error(MRI_Set_Overhead(MRI_OVERHEAD_CACHE_SIMULATOR, 0.3, 0.1), "delta_own must be 0");

    MRI_Overhead_Calibration measured, now;
    assert_int_equal(MRI_Get_Overhead_Calibration(&measured), MRI_OK);
    assert_int_equal(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, 2.0, 0.5), MRI_OK);
    /* Read at the next release: until then the application's values. */
    assert_int_equal(MRI_Get_Overhead_Calibration(&now), MRI_OK);
    assert_true(now.kind[MRI_OVERHEAD_TIMER].delta_inclusive == measured.kind[MRI_OVERHEAD_TIMER].delta_inclusive);
    MRI_Request_ID flat = profile(0, "parent", "child");
    one_step();
    assert_int_equal(MRI_Get_Overhead_Calibration(&now), MRI_OK);
    const MRI_Overhead_Value *t = &now.kind[MRI_OVERHEAD_TIMER];
    print_message("timer kind set by the tool: delta_i %.4f ns, own %.4f ns (%s)\n", t->delta_inclusive,
                  t->delta_own, t->note);
    assert_true(t->calibrated);
    assert_true(fabs(t->delta_inclusive - 2.0) < 1e-6 && fabs(t->delta_own - 0.5) < 1e-6);
    assert_true(fabs(t->delta_exclusive - 1.5) < 1e-6);
    assert_non_null(strstr(t->note, "set by the tool (measured "));
    /* The other kinds keep what the application measured. */
    assert_true(now.kind[MRI_OVERHEAD_CALLPATH].calibrated);
    assert_string_equal(now.kind[MRI_OVERHEAD_CALLPATH].note, "");

    double raw, comp;
    g_unclamped = 0;
    steps_checked(flat, &raw, &comp, atof(CHILDREN) * 2.0 + 0.5);
    assert_true(g_unclamped > 0);
    /* Each child, a leaf, lost its own part: 0.5 ns an instance, summed
     * to within the fixed point's 1/256 of a tick an instance (0.1% here).
     * Rounded to whole ticks the same way every time, 100000 instances
     * would lose about 4.6% too little (the carry in pop_and_measure). */
    const MRI_Profile_Element *leaf = element(flat, "child");
    const double leaf_lost = leaf->exclusive - leaf->compensated_exclusive;
    print_message("the children lost %.1f ns in %llu instances (0.5 ns each: %.1f)\n", leaf_lost, leaf->instances,
                  0.5 * (double)leaf->instances);
    assert_true(fabs(leaf_lost - 0.5 * (double)leaf->instances) <= 0.005 * 0.5 * (double)leaf->instances + 1.0);
    /* A callpath profile goes on with the measured callpath kind. */
    MRI_Request_ID cp = profile(1, "parent", "child");
    assert_int_equal(MRI_Request_Delete(flat), MRI_OK);
    one_step();
    steps_checked(cp, &raw, &comp, expected_removal(MRI_OVERHEAD_CALLPATH));
    assert_int_equal(MRI_Request_Delete(cp), MRI_OK);

    /* Set again with other values, and for a kind the application has not
     * measured yet (no counter request so far). */
    assert_int_equal(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, 3.0, 0.0), MRI_OK);
    assert_int_equal(MRI_Set_Overhead(MRI_OVERHEAD_COUNTER, 500.0, 100.0), MRI_OK);
    flat = profile(0, "parent", "child");
    one_step();
    assert_int_equal(MRI_Get_Overhead_Calibration(&now), MRI_OK);
    assert_true(fabs(now.kind[MRI_OVERHEAD_TIMER].delta_inclusive - 3.0) < 1e-6);
    assert_true(now.kind[MRI_OVERHEAD_COUNTER].calibrated);
    assert_true(fabs(now.kind[MRI_OVERHEAD_COUNTER].delta_inclusive - 500.0) < 1e-4);
    assert_non_null(strstr(now.kind[MRI_OVERHEAD_COUNTER].note, "set by the tool (not measured)"));
    steps_checked(flat, &raw, &comp, atof(CHILDREN) * 3.0);

    /* MRI_OVERHEAD_OWN_MEASURED: the application's measured own part, at
     * most the pair (mri profile --overhead, for the counter kind, which is
     * measured only at the first release). */
    assert_int_equal(MRI_Set_Overhead(MRI_OVERHEAD_TIMER, 40.0, MRI_OVERHEAD_OWN_MEASURED), MRI_OK);
    one_step();
    assert_int_equal(MRI_Get_Overhead_Calibration(&now), MRI_OK);
    double measured_pair = 0, measured_own = -1;
    assert_int_equal(sscanf(now.kind[MRI_OVERHEAD_TIMER].note, "set by the tool (measured %lf ns, own %lf)",
                            &measured_pair, &measured_own), 2);
    print_message("timer kind 40 ns with the measured own part: own %.4f ns (measured %.4f)\n",
                  now.kind[MRI_OVERHEAD_TIMER].delta_own, measured_own);
    assert_true(fabs(now.kind[MRI_OVERHEAD_TIMER].delta_inclusive - 40.0) < 1e-4);
    assert_true(measured_own > 0);
    assert_true(fabs(now.kind[MRI_OVERHEAD_TIMER].delta_own - fmin(measured_own, 40.0)) < 0.01);

    /* Cleared: the measurement again (the note empty), and the removal it
     * says. */
    assert_int_equal(MRI_Clear_Overhead(MRI_OVERHEAD_TIMER), MRI_OK);
    assert_int_equal(MRI_Clear_Overhead(MRI_OVERHEAD_COUNTER), MRI_OK);
    assert_int_equal(MRI_Clear_Overhead(MRI_OVERHEAD_COUNTER), MRI_OK); /* nothing set: nothing to do */
    one_step();
    assert_int_equal(MRI_Get_Overhead_Calibration(&now), MRI_OK);
    assert_string_equal(now.kind[MRI_OVERHEAD_TIMER].note, "");
    assert_true(now.kind[MRI_OVERHEAD_TIMER].delta_inclusive > 2.0 * 3.0); /* not the tool's 3 ns */
    assert_false(now.kind[MRI_OVERHEAD_COUNTER].calibrated);
    assert_non_null(strstr(now.kind[MRI_OVERHEAD_COUNTER].note, "first release"));
    steps_checked(flat, &raw, &comp, expected_removal(MRI_OVERHEAD_TIMER));
    finish();
    expect_error(MRI_Clear_Overhead(MRI_OVERHEAD_TIMER), "MRI_Init");
}

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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_calibration_is_published, teardown),
        cmocka_unit_test_teardown(test_flat_profile_is_compensated, teardown),
        cmocka_unit_test_teardown(test_callpath_profile_is_compensated, teardown),
        cmocka_unit_test_teardown(test_overhead_waited_for_at_a_join_is_compensated, teardown),
        cmocka_unit_test_teardown(test_overhead_waited_for_at_a_barrier_is_compensated, teardown),
        cmocka_unit_test_teardown(test_overhead_made_up_for_at_a_barrier_is_not_handed_on, teardown),
        cmocka_unit_test_teardown(test_time_aggregate_is_compensated, teardown),
        cmocka_unit_test_teardown(test_compensation_can_be_switched_off, teardown),
        cmocka_unit_test_teardown(test_time_sum_is_the_profiles, teardown),
        cmocka_unit_test_teardown(test_trace_requests_have_nothing_to_compensate, teardown),
        cmocka_unit_test_teardown(test_overhead_set_by_the_tool, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_trace, callpath profiles: the edges main -> step -> inner with their
 * times and instance counts, and callers found by unwinding (mri_relay).
 */
#include "trace_common.h"

static const MRI_Callpath_Element *edge(const MRI_Callpath_Profile_Results *res, const char *caller, const char *callee)
{
    MRI_Region_Spec ce = region(callee), cr;
    if (caller) cr = region(caller);
    for (int i = 0; i < res->nr_Elements; ++i) {
        const MRI_Callpath_Element *e = &res->element[i];
        if (!same(&e->callee, &ce)) continue;
        if (caller ? (e->has_caller && same(&e->caller, &cr)) : !e->has_caller) return e;
    }
    fail_msg("no edge %s -> %s", caller ? caller : "(root)", callee);
    return NULL;
}

/* main -> step (N times) -> inner (twice per step): the callpath profile
 * has exactly these edges, with consistent times. */
void test_callpath_profile(void **state)
{
    (void)state;
    char *argv[] = {"mri_testapp", "steps", "10", "2", NULL};
    load(argv);
    MRI_Runtime_Information_Spec t = MRI_EXECUTION_TIME;
    MRI_Region_Table all = {NULL, 0};
    MRI_Request_ID id = MRI_Callpath_Profile_Request(&t, &all, NULL, NULL);
    assert_true(id > 0);
    MRI_Request_ID flat = MRI_Profile_Request(&t, &all, NULL, NULL);
    assert_true(flat > 0);
    MRI_Runtime_Information_Spec n = MRI_NUMBER_OF_INSTANCES;
    MRI_Request_ID counts = MRI_Callpath_Profile_Request(&n, &all, NULL, NULL);
    assert_true(counts > 0);
    expect_error(MRI_Get_Callpath_Data(flat, &(MRI_Callpath_Profile_Results *){NULL}), "no calling context");
    run_to_end();
    MRI_Callpath_Profile_Results *res = NULL;
    assert_int_equal(MRI_Get_Callpath_Data(id, &res), MRI_OK);
    assert_int_equal(res->active, 1);
    assert_int_equal(res->nr_Elements, 3);
    const MRI_Callpath_Element *root = edge(res, NULL, "main");
    const MRI_Callpath_Element *ms = edge(res, "main", "step");
    const MRI_Callpath_Element *si = edge(res, "step", "inner");
    assert_int_equal(root->instances, 1);
    assert_int_equal(ms->instances, 10);
    assert_int_equal(si->instances, 20);
    assert_true(si->inclusive >= 20 * 0.5 * kMs * 0.99);       /* 0.5 ms per inner */
    assert_true(ms->inclusive >= 10 * 2 * kMs * 0.99);         /* 2 ms per step */
    assert_true(ms->exclusive >= 10 * 1 * kMs * 0.99);         /* the 1 ms outside its inners */
    assert_true(ms->exclusive <= ms->inclusive - si->inclusive + 1e-6 * ms->inclusive);
    assert_true(root->inclusive >= ms->inclusive);
    /* The same totals as the flat profile of the same run. */
    void *p = NULL;
    assert_int_equal(MRI_Get_Data(id, &p), MRI_OK);
    const MRI_Histogram_Profile_Results *f = p;
    MRI_Region_Spec inner = region("inner");
    for (int i = 0; i < f->nr_Elements; ++i)
        if (same(&f->element[i].region, &inner)) {
            assert_int_equal(f->element[i].instances, si->instances);
            assert_true(f->element[i].inclusive == si->inclusive);
        }
    /* Instance counts: exclusive = the instances, inclusive = with the
     * profiled instances nested in them (main 1 + 10 steps + 20 inners). */
    MRI_Callpath_Profile_Results *cr = NULL;
    assert_int_equal(MRI_Get_Callpath_Data(counts, &cr), MRI_OK);
    assert_int_equal((long)edge(cr, NULL, "main")->inclusive, 31);
    assert_int_equal((long)edge(cr, NULL, "main")->exclusive, 1);
    assert_int_equal((long)edge(cr, "main", "step")->inclusive, 30);
    assert_int_equal((long)edge(cr, "main", "step")->exclusive, 10);
    assert_int_equal((long)edge(cr, "step", "inner")->inclusive, 20);
    assert_int_equal(MRI_Get_Data(counts, &p), MRI_OK);
    f = p;
    MRI_Region_Spec step = region("step");
    for (int i = 0; i < f->nr_Elements; ++i)
        if (same(&f->element[i].region, &step)) {
            assert_int_equal(f->element[i].instances, 10);
            assert_int_equal((long)f->element[i].inclusive, 30);
            assert_int_equal((long)f->element[i].exclusive, 10);
        }
}

/* Callers without annotations, found by unwinding: "mri_relay 50" calls child
 * through relay_outer -> relay_inner, from main directly, and from a loop
 * region inside relay_loop. A second callpath request in the same run
 * without unwinding sees region callers only. */
void test_callpath_unwinding(void **state)
{
    (void)state;
    char *argv[] = {"mri_relay", "50", NULL};
    if (MRI_Application_Load(MRI_RELAY, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    MRI_Runtime_Information_Spec t = MRI_EXECUTION_TIME;
    MRI_Region_Table all = {NULL, 0};
    MRI_Request_ID unwound = MRI_Callpath_Profile_Request(&t, &all, NULL, NULL);
    MRI_Request_ID regions_only = MRI_Callpath_Profile_Request(&t, &all, NULL, NULL);
    MRI_Request_ID flat = MRI_Profile_Request(&t, &all, NULL, NULL);
    assert_true(unwound > 0 && regions_only > 0 && flat > 0);
    assert_int_equal(MRI_Set_Callpath_Unwinding(unwound, 1), MRI_OK);
    expect_error(MRI_Set_Callpath_Unwinding(flat, 1), "not a callpath profile request");
    expect_error(MRI_Set_Callpath_Unwinding(4242, 1), "does not exist");
    run_to_end();

    MRI_Callpath_Profile_Results *res = NULL;
    assert_int_equal(MRI_Get_Callpath_Data(regions_only, &res), MRI_OK);
    assert_int_equal(res->nr_Elements, 4);
    assert_int_equal(edge(res, NULL, "main")->instances, 1);
    assert_int_equal(edge(res, "main", "child")->instances, 100);
    assert_int_equal(edge(res, "main", "step")->instances, 1);
    assert_int_equal(edge(res, "step", "child")->instances, 50);
    const double child_total = edge(res, "main", "child")->inclusive + edge(res, "step", "child")->inclusive;

#ifdef MRI_TEST_HAVE_LIBUNWIND
    assert_int_equal(MRI_Get_Callpath_Data(unwound, &res), MRI_OK);
    assert_int_equal(res->nr_Elements, 8);
    assert_int_equal(edge(res, NULL, "main")->instances, 1);
    assert_int_equal(edge(res, "main", "relay_outer")->instances, 50);
    assert_int_equal(edge(res, "relay_outer", "relay_inner")->instances, 50);
    const MRI_Callpath_Element *via = edge(res, "relay_inner", "child");
    assert_int_equal(via->instances, 50);
    assert_int_equal(edge(res, "main", "child")->instances, 50);
    assert_int_equal(edge(res, "main", "relay_loop")->instances, 1);
    assert_int_equal(edge(res, "relay_loop", "step")->instances, 1);
    assert_int_equal(edge(res, "step", "child")->instances, 50);
    /* A function's edges carry the inclusive value of what was reached
     * through it, and no exclusive value. */
    assert_true(edge(res, "main", "relay_outer")->inclusive == via->inclusive);
    assert_true(edge(res, "relay_outer", "relay_inner")->exclusive == 0);
    assert_true(via->exclusive > 0);
    assert_true(edge(res, "main", "relay_loop")->inclusive == edge(res, "relay_loop", "step")->inclusive);
    /* The same child instances as in the request without unwinding. */
    const double total = via->inclusive + edge(res, "main", "child")->inclusive + edge(res, "step", "child")->inclusive;
    assert_true(total > 0 && child_total > 0);
    /* The functions are regions of their own type, named by their symbols. */
    MRI_Region_Spec f = region("relay_inner");
    assert_int_equal(f.type, MRI_REGION_FUNCTION);
#else
    /* Without libunwind in the application's libmonitor: region callers,
     * and the reason in the monitor's message. */
    assert_int_equal(MRI_Get_Callpath_Data(unwound, &res), MRI_OK);
    assert_int_equal(res->nr_Elements, 4);
#endif
}

/*
 * test_capi, stops, breakpoints and control: breakpoints and requests changed
 * at stops, stopped time not charged, MRI_Stop from another thread and right
 * after MRI_Start, every thread parked, termination at a stop.
 */
#define _GNU_SOURCE
#include "capi_common.h" /* first: cmocka and the headers it needs before it */

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

/* Releases the program until the end of `region`, and returns the status
 * there: stopped at that breakpoint. */
static MRI_Application_Status_Info run_to_breakpoint(MRI_Region_Spec *region)
{
    assert_int_equal(MRI_Start_Stop(region), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_BREAKPOINT);
    assert_memory_equal(&st.region, region, sizeof *region);
    return st;
}

void test_breakpoints_iterative(void **state)
{
    (void)state;
    load("steps", "6", "1", NULL);
    MRI_Region_Spec step = region("step");
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_No_Wait(), MRI_APPLICATION_STOPPED);
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_LOADED);
    MRI_Request_ID inner_req = -1;
    for (int k = 1; k <= 3; ++k) {
        st = run_to_breakpoint(&step);
        assert_int_equal((long)agg_total(inst), k);
        if (k == 2) {
            /* Change the requests at a stop: a new one counts from here on. */
            inner_req = aggregate(MRI_NUMBER_OF_INSTANCES, "inner", MRI_SUM, MRI_PER_PROCESS);
            assert_int_equal(agg_data(inner_req)->active, 0);
        }
        if (k == 3) assert_int_equal((long)agg_total(inner_req), 2); /* one step since added */
    }
    assert_int_equal(MRI_Request_Delete(inst), MRI_OK);
    run_to_end();
    assert_int_equal((long)agg_total(inner_req), 2 * 4);
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    assert_int_equal(st.stops, 3);
    assert_int_equal(st.threads_dropped, 0);
    assert_int_equal(st.regions_dropped, 0);
    assert_int_equal(st.bad_requests, 0);
    assert_string_equal(st.monitor_message, "");
}

void test_stopped_time_not_charged(void **state)
{
    (void)state;
    load("steps", "3", "4", NULL);
    MRI_Region_Spec step = region("step");
    MRI_Request_ID main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_THREAD);
    for (int k = 0; k < 2; ++k) {
        assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        usleep(300 * 1000); /* the tool takes its time at each stop */
    }
    run_to_end();
    double t = agg_total(main_time);
    assert_true(t >= 3 * 4 * kMs);
    assert_true(t < 3 * 4 * kMs + 250 * kMs); /* far below the 600 ms spent stopped */
}

/* MRI_Stop mostly reaches this thread while it sleeps inside "sleeper", so
 * it parks at the region's exit: that instance must keep its own time and
 * not get the stop's. */
void test_stop_at_an_exit_is_charged_to_nobody(void **state)
{
    (void)state;
    load("sleep", "40", "5", NULL);
    MRI_Request_ID min = aggregate(MRI_EXECUTION_TIME, "sleeper", MRI_MIN, MRI_PER_PROCESS);
    MRI_Request_ID max = aggregate(MRI_EXECUTION_TIME, "sleeper", MRI_MAX, MRI_PER_PROCESS);
    assert_int_equal(MRI_Start(), MRI_OK);
    int stops = 0;
    for (int k = 0; k < 6; ++k) {
        usleep(12 * 1000);
        assert_int_equal(MRI_Stop(), MRI_OK);
        int st = MRI_Wait();
        if (st == MRI_APPLICATION_TERMINATED) break;
        assert_int_equal(st, MRI_APPLICATION_STOPPED);
        ++stops;
        usleep(100 * 1000); /* the tool looks at the results for a while */
        assert_int_equal(MRI_Start(), MRI_OK);
    }
    assert_true(stops >= 3);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    assert_true(agg_total(min) >= 5 * kMs);          /* no instance lost its time */
    assert_true(agg_total(max) < 5 * kMs + 60 * kMs); /* none got a 100 ms stop */
}

void test_parallel_region_is_no_breakpoint(void **state)
{
    (void)state;
    load("parallel", NULL);
    MRI_Region_Spec team = region("team");
    expect_error(MRI_Start_Stop(&team), "only serial regions");
    assert_int_equal(MRI_No_Wait(), MRI_APPLICATION_STOPPED);
    run_to_end();
}

void test_openmp_stencil_parallel_breakpoint(void **state)
{
    (void)state;
    char *argv[] = {MRI_STENCIL, "-n", "64", "-t", "4", NULL};
    assert_int_equal(MRI_Init(), MRI_OK);
    if (MRI_Application_Load(MRI_STENCIL, argv) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    MRI_Region_Spec sweep = region("sweep"), rows = region("update_rows"), step = region("time_step");
    expect_error(MRI_Start_Stop(&sweep), "PARALLEL region");
    expect_error(MRI_Start_Stop(&rows), "only serial regions");
    assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    MRI_Application_Finish();
}

struct stopper {
    int delay_ms;
    int rc;
};

static void *stop_later(void *p)
{
    struct stopper *s = p;
    usleep((useconds_t)s->delay_ms * 1000);
    s->rc = MRI_Stop();
    return NULL;
}

void test_stop_from_another_thread(void **state)
{
    (void)state;
    load("forever", NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    assert_int_equal(MRI_Start(), MRI_OK);
    struct stopper s = {50, -2};
    pthread_t th;
    pthread_create(&th, NULL, stop_later, &s);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED); /* blocks until the other thread stops it */
    pthread_join(th, NULL);
    assert_int_equal(s.rc, MRI_OK);
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_STOP_REQUEST);
    double a = agg_total(inst);
    assert_true(a >= 1);
    usleep(50 * 1000);
    assert_true(agg_total(inst) == a); /* stopped means stopped */
    /* Continue and terminate from the tool. */
    assert_int_equal(MRI_Start(), MRI_OK);
    usleep(20 * 1000);
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    assert_int_equal(MRI_No_Wait(), MRI_APPLICATION_TERMINATED);
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_TERMINATED_BY_TOOL);
    assert_true(agg_total(inst) > a); /* results stay readable after the end */
}

/* A stop sent right behind a start must not be lost or answered by the
 * previous stop: the tool waits for the start to be acknowledged. */
void test_stop_right_after_start(void **state)
{
    (void)state;
    load("forever", NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    for (int k = 0; k < 5; ++k) {
        assert_int_equal(MRI_Start(), MRI_OK);
        assert_int_equal(MRI_Stop(), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        MRI_Application_Status_Info st;
        assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
        assert_int_equal(st.reason, MRI_STOP_STOP_REQUEST);
        assert_int_equal(st.stops, (unsigned long long)(k + 1));
    }
    assert_int_equal(agg_data(inst)->active, 1); /* the start's requests were applied */
    MRI_Application_Finish();
}

void test_every_thread_stops(void **state)
{
    (void)state;
    load("workers", "3", "200", NULL);
    MRI_Region_Spec step = region("step");
    MRI_Request_ID spins = aggregate(MRI_NUMBER_OF_INSTANCES, "spin", MRI_SUM, MRI_PER_THREAD);
    assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    /* Until the workers have run a "spin" between two stops (a 2 ms step
     * each time: on a loaded machine they may not get a core during one). */
    double a = 0;
    for (int k = 0; k < 100 && a == 0; ++k) {
        assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
        assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
        a = agg_total(spins);
    }
    assert_true(a > 0); /* the workers did run between the stops */
    usleep(100 * 1000);
    double b = agg_total(spins);
    assert_true(a == b); /* ... and are parked now, not only the main thread */
    MRI_Application_Finish();
}

/* The program ended by MRI_Application_Finish() at a breakpoint stop,
 * first frozen with SIGSTOP when `freeze` (it then does not answer, and is
 * killed after the 5 s grace): the tool's termination either way. */
static MRI_Application_Status_Info terminate_at_a_stop(int freeze)
{
    load("forever", NULL);
    MRI_Region_Spec step = region("step");
    MRI_Application_Status_Info st = run_to_breakpoint(&step);
    if (freeze) assert_int_equal(kill(st.pid, SIGSTOP), 0);
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.reason, MRI_STOP_TERMINATED_BY_TOOL);
    return st;
}

void test_terminate_while_stopped(void **state)
{
    (void)state;
    MRI_Application_Status_Info st = terminate_at_a_stop(0);
    assert_int_equal(st.signal, 0);
}

/* Killed with SIGKILL after the grace: still the tool's termination, with
 * the signal it took. */
void test_terminate_a_frozen_program(void **state)
{
    (void)state;
    MRI_Application_Status_Info st = terminate_at_a_stop(1);
    assert_int_equal(st.signal, SIGKILL);
    assert_int_equal(st.signal_caught, 0);
}

/* Sends SIGSTOP to `pid` and returns once every thread of it is stopped
 * (task state 'T' in /proc/PID/task/TID/stat): kill() returns before the
 * threads stop, and one of them may still act meanwhile. */
static void freeze(pid_t pid)
{
    assert_int_equal(kill(pid, SIGSTOP), 0);
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    for (int tries = 0;; tries++) {
        assert_true(tries < 5000); /* 5 s */
        DIR *d = opendir(dir);
        assert_non_null(d);
        int running = 0;
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            char path[sizeof dir + sizeof e->d_name + 8], line[512];
            snprintf(path, sizeof path, "%s/%s/stat", dir, e->d_name);
            FILE *f = fopen(path, "r");
            if (!f) continue; /* the thread ended */
            const char *state = fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
            fclose(f);
            if (state && state[1] == ' ' && state[2] != 'T' && state[2] != 't') running = 1;
        }
        closedir(d);
        if (!running) return;
        usleep(1000);
    }
}

/* A release the program never took is not an iteration: at a breakpoint
 * stop the program is frozen (SIGSTOP, as by Ctrl-Z), MRI_Start() sends
 * the release and MRI_Stop(), after 2 s without an acknowledgement,
 * replaces it; the program, thawed, stays stopped. The request lists the
 * one release it measured, and the next release is numbered 2. Before,
 * the withdrawn release counted: iterations {1, 2}, and the next was 3
 * while the program had run twice. */
void test_release_never_taken_is_not_counted(void **state)
{
    (void)state;
    load("forever", NULL);
    MRI_Region_Spec step = region("step");
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Application_Status_Info st = run_to_breakpoint(&step);
    freeze(st.pid);
    assert_int_equal(MRI_Start(), MRI_OK);
    assert_int_equal(MRI_Stop(), MRI_OK); /* after 2 s: replaces the release */
    assert_int_equal(kill(st.pid, SIGCONT), 0);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
    usleep(100 * 1000); /* had the program taken the release, it would run now */
    assert_int_equal(MRI_No_Wait(), MRI_APPLICATION_STOPPED);
    assert_int_equal((long)agg_total(inst), 1);
    const MRI_Aggregate_Request_Results *r = agg_data(inst); /* after agg_total: its call would end this one's data */
    assert_int_equal(r->nr_Measured_Iterations, 1);
    assert_int_equal(r->measured_iteration[0], 1);
    MRI_Application_Status_Info after;
    assert_int_equal(MRI_Get_Application_Status(&after), MRI_OK);
    assert_int_equal(after.stops, st.stops);
    /* The next release is the program's second. */
    run_to_breakpoint(&step);
    assert_int_equal((long)agg_total(inst), 2);
    r = agg_data(inst);
    assert_int_equal(r->nr_Measured_Iterations, 2);
    assert_int_equal(r->measured_iteration[1], 2);
    MRI_Application_Finish();
}

/* An exit without an enter is ignored, also when it is the breakpoint's:
 * three stray exits of "step", then one step, stop once. */
void test_stray_exit_is_no_breakpoint(void **state)
{
    (void)state;
    load("stray_exits", "3", NULL);
    MRI_Request_ID count = aggregate(MRI_EXECUTION_TIME, "step", MRI_COUNT, MRI_PER_PROCESS);
    MRI_Region_Spec step = region("step");
    int stops = 0;
    while (MRI_Start_Stop(&step) == MRI_OK && MRI_Wait() == MRI_APPLICATION_STOPPED) ++stops;
    assert_int_equal(stops, 1);
    assert_int_equal((long)agg_total(count), 1);
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.unmatched_exits, 3);
}

/* The tool stops inside a "step" (at the end of its first "inner"), adds a
 * request on "step" and asks for the end of "step": the program stops at
 * the end of that same step, although its enter came before the request
 * (the exit is unmeasured and counted as unmatched), not at the end of the
 * next one. The step after is measured as usual. */
void test_breakpoint_in_the_instance_stopped_inside(void **state)
{
    (void)state;
    load("steps", "4", "1", NULL);
    MRI_Region_Spec step = region("step"), inner = region("inner");
    MRI_Request_ID inners = aggregate(MRI_NUMBER_OF_INSTANCES, "inner", MRI_SUM, MRI_PER_PROCESS);
    run_to_breakpoint(&inner);
    assert_int_equal((long)agg_total(inners), 1);
    MRI_Request_ID steps = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Application_Status_Info st;
    for (int k = 1; k <= 2; ++k) {
        st = run_to_breakpoint(&step);
        assert_int_equal((long)agg_total(inners), 2 * k); /* the end of step k */
        assert_int_equal((long)agg_total(steps), k - 1);  /* step 1 was entered unmeasured */
        assert_int_equal(st.unmatched_exits, 1);
    }
    run_to_end();
    assert_int_equal((long)agg_total(steps), 3);
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.stops, 3);
}

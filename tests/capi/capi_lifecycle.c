/*
 * test_capi, the program's lifecycle: crash, exit code and reload, death or
 * exit before the first region, exec (and a vfork child's), pthread_exit of
 * the main thread, terminating signals, MRI_Application_Finish, wrappers.
 */
#define _GNU_SOURCE
#include "capi_common.h" /* first: cmocka and the headers it needs before it */

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

void test_crash_keeps_results(void **state)
{
    (void)state;
    load("crash", "7", NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.status, MRI_APPLICATION_TERMINATED);
    assert_int_equal(st.reason, MRI_STOP_SIGNALED);
    assert_int_equal(st.signal, SIGABRT);
    assert_int_equal((long)agg_total(inst), 7);
}

void test_exit_code_and_reload(void **state)
{
    (void)state;
    load("exit", "4", "3", NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Request_ID main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
    MRI_Request_ID step_time = aggregate(MRI_EXECUTION_TIME, "step", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    /* exit() inside main: main's instance, still open, ends at the exit. */
    MRI_Aggregate_Request_Results *m = agg_data(main_time);
    assert_int_equal(m->nr_Elements, 1);
    assert_int_equal(m->element[0].count, 1);
    assert_true(m->element[0].value >= agg_total(step_time));
    MRI_Application_Status_Info st;
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 3);
    assert_int_equal((long)agg_total(inst), 4);
    /* A load that cannot start (no such program, a bad limit) keeps this
     * run's results and status. */
    char *missing[] = {"/nonexistent/mri_testapp", NULL};
    expect_error(MRI_Application_Load(missing[0], missing), "/nonexistent/mri_testapp");
    setenv("MRI_MAX_REGIONS", "0", 1);
    char *again[] = {MRI_TESTAPP, "exit", "1", "0", NULL};
    expect_error(MRI_Application_Load(MRI_TESTAPP, again), "MRI_MAX_REGIONS");
    unsetenv("MRI_MAX_REGIONS");
    assert_int_equal((long)agg_total(inst), 4);
    MRI_Get_Application_Status(&st);
    assert_int_equal(st.status, MRI_APPLICATION_TERMINATED);
    assert_int_equal(st.exit_code, 3);
    /* Rerun with the same requests (section 5). */
    char *argv[] = {MRI_TESTAPP, "exit", "9", "0", NULL};
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    run_to_end();
    assert_int_equal((long)agg_total(inst), 9);
}

/* A program that attached (libmonitor's constructor) and then died before
 * its first annotated region is named as such, not as one that may lack
 * libmonitor; a load afterwards works. */
void test_death_before_the_first_region(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    char *early[] = {MRI_TESTAPP, "early_abort", NULL};
    expect_error(MRI_Application_Load(MRI_TESTAPP, early),
                 "attached to the tool, then was killed by signal 6 (Aborted) before its first annotated region");
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.status, MRI_APPLICATION_NOT_LOADED);
    char *argv[] = {MRI_TESTAPP, "exit", "2", "0", NULL};
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    run_to_end();
}

/* A program that attached and then called exit() before its first
 * annotated region: exit() publishes its static information and ends
 * monitoring, so the load succeeds with the program terminated. Its exit
 * status is there as soon as the load returns, not 0 until MRI_Wait()
 * reaps it. */
void test_exit_before_the_first_region(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    char *argv[] = {MRI_TESTAPP, "early_exit", "3", NULL};
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("%s", MRI_Get_Error_Message());
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.status, MRI_APPLICATION_TERMINATED);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 3);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.exit_code, 3);
}

/* The program replaces itself with exec() (no fork()) inside "step", inside
 * "main", after 3 steps, in each of the ways of the exec family. Monitoring
 * ends there as at an exit: the open "step" and "main" instances are
 * measured up to the exec. The new image (the test program again, with
 * `exit 2 5`: two steps, exit status 5; for execl `init_exit 5`) is not
 * monitored: its steps add nothing. The tool learns of the exec and waits for the process's end. */
void test_exec_ends_monitoring_there(void **state)
{
    (void)state;
    const char *ways[] = {"v", "vp", "ve", "vpe", "l", "lp", "le", "fd"};
    for (size_t w = 0; w < sizeof ways / sizeof *ways; ++w) {
        /* execl* pass at most 2 arguments: Monitor_Init(), exit(5). */
        if (ways[w][0] == 'l')
            load("exec", "3", (char *)ways[w], MRI_TESTAPP, "init_exit", "5", NULL);
        else
            load("exec", "3", (char *)ways[w], MRI_TESTAPP, "exit", "2", "5", NULL);
        MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
        MRI_Request_ID main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
        MRI_Request_ID step_time = aggregate(MRI_EXECUTION_TIME, "step", MRI_SUM, MRI_PER_PROCESS);
        run_to_end();
        MRI_Application_Status_Info st;
        assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
        print_message("exec%s: reason %d, exit code %d, exec_replaced %d at %llu ns\n", ways[w], st.reason,
                      st.exit_code, st.exec_replaced, st.exec_timestamp);
        assert_int_equal(st.status, MRI_APPLICATION_TERMINATED);
        assert_int_equal(st.exec_replaced, 1);
        /* The process has ended: the reason says how (the new image's exit). */
        assert_int_equal(st.reason, MRI_STOP_EXITED);
        assert_int_equal(st.exit_code, 5);
        assert_true(st.exec_timestamp > 0);
        assert_int_equal(st.unmatched_exits, 0);
        assert_string_equal(st.monitor_message, "");
        assert_int_equal((long)agg_total(inst), 4); /* 3 + the one open at the exec; none of the new image's */
        MRI_Aggregate_Request_Results *m = agg_data(main_time);
        assert_int_equal(m->nr_Elements, 1);
        assert_int_equal(m->element[0].count, 1);
        assert_true(m->element[0].value >= agg_total(step_time));
        assert_true(agg_total(step_time) > 0);
        assert_int_equal(MRI_Finalize(), MRI_OK);
    }
}

/* An exec() that fails because the file is missing, not executable or no
 * file (ENOENT, EACCES) ends nothing: the program goes on, monitored, and
 * its steps after the failure count. */
void test_failed_exec_goes_on_monitored(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"v", "/nonexistent/mri-no-such-program"}, {"vp", "mri-no-such-program"}, {"v", "/dev/null"},
        {"l", "/"}, {"vpe", "/nonexistent/dir/prog"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        load("exec", "3", (char *)cases[c][0], (char *)cases[c][1], NULL);
        MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
        MRI_Request_ID main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
        run_to_end();
        MRI_Application_Status_Info st;
        assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
        assert_int_equal(st.reason, MRI_STOP_EXITED);
        assert_int_equal(st.exit_code, 4); /* the program's own: it saw the failure */
        assert_int_equal(st.exec_replaced, 0);
        assert_string_equal(st.monitor_message, "");
        assert_int_equal((long)agg_total(inst), 7); /* 3, the one around the exec, 3 more */
        assert_int_equal(agg_data(main_time)->element[0].count, 1);
        assert_int_equal(MRI_Finalize(), MRI_OK);
    }
}

/* A vfork()ed child shares the program's memory; its exec must not end the
 * program's monitoring (it is not the monitored process). */
void test_vfork_child_exec_is_not_the_program(void **state)
{
    (void)state;
    load("vfork_exec", "3", NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 0);
    assert_int_equal(st.exec_replaced, 0);
    assert_int_equal((long)agg_total(inst), 7);
}

/* A failure the monitor cannot foresee: a regular, executable file that is
 * no program (execv: ENOEXEC). Monitoring had ended for the exec; the
 * program goes on unmonitored and the tool is told so, not that the program
 * was replaced. */
void test_exec_failing_after_the_end(void **state)
{
    (void)state;
    char path[] = "/tmp/mri_not_a_programXXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "just some text\n", 15), 15); /* no "#!": the kernel refuses it */
    assert_int_equal(fchmod(fd, 0700), 0);
    close(fd);
    load("exec", "3", "v", path, NULL);
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Request_ID main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    unlink(path);
    MRI_Application_Status_Info st;
    assert_int_equal(MRI_Get_Application_Status(&st), MRI_OK);
    assert_int_equal(st.reason, MRI_STOP_EXITED);
    assert_int_equal(st.exit_code, 4);
    assert_int_equal(st.exec_replaced, 2);
    assert_non_null(strstr(st.monitor_message, "exec() failed (Exec format error) after monitoring had ended"));
    assert_int_equal((long)agg_total(inst), 4); /* up to the exec; the 3 after it are not monitored */
    assert_int_equal(agg_data(main_time)->element[0].count, 1);
}

/* The main thread ends with pthread_exit() while another thread runs on:
 * the program ends when that thread has ended, with status 0, as it does
 * without the monitor (whose control thread kept it alive for ever). */
void test_main_thread_pthread_exit(void **state)
{
    (void)state;
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer's own background thread keeps such a program alive,
     * with the monitor or without it. */
    skip();
#endif
    load("pthread_exit", "10", NULL);
    MRI_Request_ID steps = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Request_ID main_count = aggregate(MRI_NUMBER_OF_INSTANCES, "main", MRI_SUM, MRI_PER_PROCESS);
    assert_int_equal(MRI_Start(), MRI_OK);
    const int st = MRI_Wait_Timeout(60000);
    if (st != MRI_APPLICATION_TERMINATED) fail_msg("the program did not end (status %d)", st);
    assert_int_equal((long)agg_total(steps), 10);
    assert_int_equal((long)agg_total(main_count), 1);
    MRI_Application_Status_Info info;
    MRI_Get_Application_Status(&info);
    assert_int_equal(info.reason, MRI_STOP_EXITED);
    assert_int_equal(info.exit_code, 0);
}

/* A program ended by SIGTERM (`kill`, `timeout`), SIGINT (Ctrl-C) or SIGHUP,
 * whose action it left at the default: the monitor catches the signal,
 * ends monitoring as an exit does (main's instance and the step open then
 * are measured up to it) and the process dies of the signal, as it would
 * have. SIGKILL ends it at once: the instances open then count nothing. */
/* 200 s of 2 ms steps, with main's instances and time requested (and,
 * given `steps`, the instances of "step"), stopped at the end of its first
 * step. */
static void steps_stopped_after_the_first(MRI_Request_ID *main_count, MRI_Request_ID *main_time,
                                          MRI_Request_ID *steps)
{
    load("steps", "100000", "2", NULL);
    *main_count = aggregate(MRI_NUMBER_OF_INSTANCES, "main", MRI_SUM, MRI_PER_PROCESS);
    *main_time = aggregate(MRI_EXECUTION_TIME, "main", MRI_SUM, MRI_PER_PROCESS);
    if (steps) *steps = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    MRI_Region_Spec step = region("step");
    assert_int_equal(MRI_Start_Stop(&step), MRI_OK);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_STOPPED);
}

/* main, ended while stopped after its first step: that 2 ms step, not the
 * 300 ms stop that followed. */
static void assert_main_time_without_the_stop(MRI_Request_ID main_time)
{
    const double t = agg_total(main_time);
    if (!(t >= 2 * kMs && t < 150 * kMs)) fail_msg("main took %.1f ms, expected 2 to 150", t / kMs);
}

static void killed_by(int sig, int caught)
{
    MRI_Request_ID main_count, main_time, steps;
    steps_stopped_after_the_first(&main_count, &main_time, &steps);
    const double done = agg_total(steps);
    assert_int_equal(MRI_Start(), MRI_OK);
    usleep(50 * 1000);
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(kill(info.pid, sig), 0);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.reason, MRI_STOP_SIGNALED);
    assert_int_equal(info.signal, sig);
    assert_int_equal(info.signal_caught, caught);
    assert_int_equal((long)agg_total(main_count), caught);
    /* main encloses every step, each a 2 ms sleep: the steps that ended
     * (all but the one open at the signal) are inside its time, also
     * those after the release (steps > done below). */
    if (caught) assert_true(agg_total(main_time) >= (agg_total(steps) - 1) * 1.95 * kMs);
    else assert_true(agg_total(main_time) == 0);
    assert_true(agg_total(steps) > done);
}

void test_terminating_signal_is_caught(void **state)
{
    (void)state;
    killed_by(SIGTERM, 1);
}

void test_interrupt_is_caught(void **state)
{
    (void)state;
    killed_by(SIGINT, 1);
}

void test_sigkill_ends_at_once(void **state)
{
    (void)state;
    killed_by(SIGKILL, 0);
}

/* The signal comes while the program is stopped for the tool (300 ms at a
 * breakpoint): main's instance ends where its thread parked, without the
 * stop, as every measured time leaves stops out. */
void test_signal_while_stopped_leaves_the_stop_out(void **state)
{
    (void)state;
    MRI_Request_ID main_count, main_time;
    steps_stopped_after_the_first(&main_count, &main_time, NULL);
    usleep(300 * 1000);
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(kill(info.pid, SIGTERM), 0);
    /* Stopped, MRI_Wait() returns at once: poll for the end. */
    for (int i = 0; i < 1000 && MRI_No_Wait() != MRI_APPLICATION_TERMINATED; ++i) usleep(10 * 1000);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED); /* and reaped */
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.reason, MRI_STOP_SIGNALED);
    assert_int_equal(info.signal, SIGTERM);
    assert_int_equal(info.signal_caught, 1);
    assert_int_equal((long)agg_total(main_count), 1);
    assert_main_time_without_the_stop(main_time); /* it was >= 300 ms before */
}

/* MRI_Application_Finish() ends the program as at an exit, then at once:
 * main's instance, open, is measured up to the end; while the program is
 * stopped for the tool (300 ms at a breakpoint), up to where it parked. */
static void finished_by_the_tool(int stopped)
{
    MRI_Request_ID main_count, main_time;
    steps_stopped_after_the_first(&main_count, &main_time, NULL);
    if (!stopped) assert_int_equal(MRI_Start(), MRI_OK);
    usleep(300 * 1000);
    assert_int_equal(MRI_Application_Finish(), MRI_OK);
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.status, MRI_APPLICATION_TERMINATED);
    assert_int_equal(info.reason, MRI_STOP_TERMINATED_BY_TOOL);
    assert_int_equal((long)agg_total(main_count), 1);
    if (stopped) {
        assert_main_time_without_the_stop(main_time);
    } else {
        /* 2 ms before the stop and the 300 ms after the release, less the
         * time main's thread took to be scheduled again after the release
         * (296.7 ms beside other tests on 2 CPUs): well above the 150 ms
         * the stopped case stays under. */
        const double t = agg_total(main_time);
        if (!(t >= 250 * kMs)) fail_msg("main took %.1f ms, expected about 300 (250 or more)", t / kMs);
    }
}

void test_finish_measures_the_open_instances(void **state)
{
    (void)state;
    finished_by_the_tool(0);
}

void test_finish_while_stopped_leaves_the_stop_out(void **state)
{
    (void)state;
    finished_by_the_tool(1);
}

void test_not_instrumented(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    char *argv[] = {"true", NULL};
    expect_error(MRI_Application_Load("true", argv), "before attaching");
}

/* A wrapper (here a shell) passes the environment on to every program it
 * starts: only the first to attach is monitored; the other runs
 * unmonitored instead of adding its numbers to the first's. */
void test_second_program_is_not_monitored(void **state)
{
    (void)state;
    assert_int_equal(MRI_Init(), MRI_OK);
    char cmd[2 * sizeof MRI_TESTAPP + 64];
    snprintf(cmd, sizeof cmd, "%s steps 3 20 & %s steps 3 20; wait", MRI_TESTAPP, MRI_TESTAPP);
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    if (MRI_Application_Load("/bin/sh", argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    MRI_Request_ID inst = aggregate(MRI_NUMBER_OF_INSTANCES, "step", MRI_SUM, MRI_PER_PROCESS);
    run_to_end();
    assert_int_equal((long)agg_total(inst), 3);
}

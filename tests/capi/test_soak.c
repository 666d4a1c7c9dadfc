/*
 * Soak tests: a tool used as an automatic performance analyser uses it, on
 * a long-running program, for hundreds of iterations. Each iteration stops
 * the program at the end of region "step" (MRI_Start_Stop), reads every
 * request's partial results, deletes one request and submits another
 * (aggregates, flat and callpath profiles, a REGION_EVENT trace delivered
 * through the call-back), and releases it again. A real tool (this
 * process) and a real application (mri_testapp steps, one "step" with two
 * "inner"s per iteration) in two processes.
 *
 * Checked: every result equals what the program did since the request was
 * applied, at every stop; no descriptor, thread or (outside sanitizer
 * builds) anonymous memory grows in either process once the request slots
 * have all been used; MRI_Finalize() gives back every descriptor and
 * thread; and no shared memory segment the tool created is left, after a
 * normal end, after the tool is killed with SIGKILL in the middle of the
 * iterations, and after the application is.
 *
 * 3000 releases take about a second; MRI_SOAK_ITERATIONS in the environment
 * sets another number (at least 300; 30000 pass the same checks).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the headers above first. */
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mri.h"
#include "mri_test_helpers.h"

#ifndef MRI_TESTAPP
#error "MRI_TESTAPP must name the test application"
#endif

static int teardown(void **state)
{
    (void)state;
    MRI_Finalize(); /* also cleans up after a failed assertion */
    return 0;
}

static int iterations(void)
{
    const char *v = getenv("MRI_SOAK_ITERATIONS");
    const int n = v ? atoi(v) : 0;
    return n >= 300 ? n : 3000;
}

/* ---- what a process holds --------------------------------------------- */

static int open_descriptors(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

/* System V shared memory segments created by process `creator` that still
 * exist (/proc/sysvipc/shm: key shmid perms size cpid ...). */
static int segments_created_by(int creator)
{
    FILE *f = fopen("/proc/sysvipc/shm", "re");
    assert_non_null(f);
    char line[512];
    int n = 0;
    if (!fgets(line, sizeof line, f)) line[0] = '\0'; /* the header */
    while (fgets(line, sizeof line, f)) {
        long key, id, perms, cpid;
        unsigned long long size;
        if (sscanf(line, "%ld %ld %lo %llu %ld", &key, &id, &perms, &size, &cpid) == 5 && cpid == creator) ++n;
    }
    fclose(f);
    return n;
}

/* ---- the churn ---------------------------------------------------------- */

static atomic_ullong g_records;      /* REGION_EVENT records taken */
static atomic_ullong g_other_records; /* records of another type: never */

/* Counts, without assertions: the call-back runs on libmri's thread. */
static void take_records(void)
{
    MRI_Trace_Element_Spec buf[512];
    int n;
    while ((n = MRI_Get_Trace_Records(buf, 512)) > 0)
        for (int i = 0; i < n; ++i)
            atomic_fetch_add(buf[i].event_type == MRI_REGION_EVENT ? &g_records : &g_other_records, 1);
}

enum kind { INSTANCES, TIME_COUNT, PROFILE, CALLPATH, TRACE, KINDS };

struct live {
    MRI_Request_ID id;
    enum kind kind;
    int first; /* the first release it measured in */
};

struct churn {
    MRI_Region_Spec step, inner;
    struct live live[16];
    int nlive;
    int app_pid;
    unsigned long long want_records;
    int created, deleted;
};

static MRI_Request_ID submit(struct churn *c, enum kind kind)
{
    MRI_Region_Table step = {&c->step, 1}, all = {NULL, 0};
    MRI_Aggregation_Spec sum = {MRI_SUM, MRI_PER_PROCESS}, count = {MRI_COUNT, MRI_PER_THREAD};
    MRI_Runtime_Information_Spec instances = MRI_NUMBER_OF_INSTANCES, exec_time = MRI_EXECUTION_TIME,
                                 events = MRI_REGION_EVENT;
    switch (kind) {
        case INSTANCES: return MRI_Aggregate_Request(&instances, &step, NULL, NULL, &sum);
        case TIME_COUNT: return MRI_Aggregate_Request(&exec_time, &step, NULL, NULL, &count);
        case PROFILE: return MRI_Profile_Request(&exec_time, &all, NULL, NULL);
        case CALLPATH: return MRI_Callpath_Profile_Request(&exec_time, &all, NULL, NULL);
        case TRACE: return MRI_Trace_Request(&events, &step, NULL, NULL);
        default: return MRI_Error;
    }
}

static int live_of(const struct churn *c, enum kind kind)
{
    int n = 0;
    for (int i = 0; i < c->nlive; ++i) n += c->live[i].kind == kind;
    return n;
}

static unsigned long long profile_instances(const MRI_Histogram_Profile_Results *r, const MRI_Region_Spec *region)
{
    for (int e = 0; e < r->nr_Elements; ++e)
        if (memcmp(&r->element[e].region, region, sizeof *region) == 0) return r->element[e].instances;
    fail_msg("no profile element for the region");
    return 0;
}

/* Every request's results after release `release` (1, 2, ...): each
 * "step" ran once per release and called "inner" twice. */
static void check_results(struct churn *c, int release)
{
    for (int i = 0; i < c->nlive; ++i) {
        const struct live *l = &c->live[i];
        const unsigned long long steps = (unsigned long long)(release - l->first + 1);
        void *p = NULL;
        if (l->kind == TRACE) continue;
        if (MRI_Get_Data(l->id, &p) != MRI_OK) fail_msg("get data of %d: %s", l->id, MRI_Get_Error_Message());
        if (l->kind == INSTANCES || l->kind == TIME_COUNT) {
            const MRI_Aggregate_Request_Results *r = p;
            assert_true(r->active);
            assert_int_equal(r->nr_Elements, 1);
            if (l->kind == INSTANCES && r->element[0].value != (double)steps)
                fail_msg("release %d: request %d counts %.0f steps, the program ran %llu", release, l->id,
                         r->element[0].value, steps);
            if (l->kind == TIME_COUNT && r->element[0].count != steps)
                fail_msg("release %d: request %d aggregated %llu instances, the program ran %llu", release, l->id,
                         r->element[0].count, steps);
            assert_int_equal(r->nr_Measured_Iterations, (int)steps);
            assert_int_equal(r->measured_iteration[0], (unsigned)l->first);
            /* the list handed out grows with each read: its last iteration too */
            assert_int_equal(r->measured_iteration[steps - 1], (unsigned)l->first + (unsigned)steps - 1);
        } else {
            const MRI_Histogram_Profile_Results *r = p;
            assert_true(r->active);
            const unsigned long long s = profile_instances(r, &c->step), in = profile_instances(r, &c->inner);
            if (s != steps || in != 2 * steps)
                fail_msg("release %d: profile %d has %llu steps and %llu inners, the program ran %llu and %llu",
                         release, l->id, s, in, steps, 2 * steps);
            if (l->kind == CALLPATH) {
                MRI_Callpath_Profile_Results *cp = NULL;
                assert_int_equal(MRI_Get_Callpath_Data(l->id, &cp), MRI_OK);
                unsigned long long step_to_inner = 0;
                for (int e = 0; e < cp->nr_Elements; ++e)
                    if (cp->element[e].has_caller && !memcmp(&cp->element[e].caller, &c->step, sizeof c->step) &&
                        !memcmp(&cp->element[e].callee, &c->inner, sizeof c->inner))
                        step_to_inner = cp->element[e].instances;
                assert_int_equal(step_to_inner, 2 * steps);
            }
        }
    }
}

/* One iteration: change the requests, release to the end of "step", take
 * the trace records, check every result. Returns the stop's status. */
static int iterate(struct churn *c, int release)
{
    /* Deletes one request every third iteration, or when 12 are live. */
    if (c->nlive > 0 && (c->nlive >= 12 || release % 3 == 0)) {
        const int victim = (release * 7) % c->nlive;
        assert_int_equal(MRI_Request_Delete(c->live[victim].id), MRI_OK);
        c->live[victim] = c->live[--c->nlive];
        ++c->deleted;
    }
    const enum kind kind = (enum kind)(release % KINDS);
    const int room = kind == TRACE ? live_of(c, TRACE) == 0
                     : kind == PROFILE || kind == CALLPATH ? live_of(c, PROFILE) + live_of(c, CALLPATH) < 3
                                                           : 1;
    if (room) {
        const MRI_Request_ID id = submit(c, kind);
        if (id <= 0) fail_msg("release %d: request of kind %d: %s", release, kind, MRI_Get_Error_Message());
        c->live[c->nlive++] = (struct live){id, kind, release};
        ++c->created;
    }
    if (live_of(c, TRACE)) c->want_records += 6; /* step and 2 inners: an enter and an exit each */
    if (MRI_Start_Stop(&c->step) != MRI_OK) fail_msg("release %d: %s", release, MRI_Get_Error_Message());
    const int st = MRI_Wait();
    if (st != MRI_APPLICATION_STOPPED) return st;
    take_records(); /* what the call-back has not taken yet */
    assert_int_equal(atomic_load(&g_other_records), 0);
    if (atomic_load(&g_records) != c->want_records)
        fail_msg("release %d: %llu trace records, the program emitted %llu", release,
                 (unsigned long long)atomic_load(&g_records), c->want_records);
    check_results(c, release);
    return st;
}

static void start_churn(struct churn *c)
{
    memset(c, 0, sizeof *c);
    atomic_store(&g_records, 0);
    atomic_store(&g_other_records, 0);
    char *argv[] = {MRI_TESTAPP, "steps", "1000000000", "0", NULL};
    assert_int_equal(MRI_Init(), MRI_OK);
    assert_int_equal(MRI_Register_Call_Back_Function(take_records), MRI_OK);
    if (MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK) fail_msg("load: %s", MRI_Get_Error_Message());
    c->step = region("step");
    c->inner = region("inner");
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    c->app_pid = info.pid;
}

/* ---- tests -------------------------------------------------------------- */

struct footprint {
    long anon_kb;
    int descriptors;
    long threads;
};

static struct footprint footprint_of(int pid)
{
    struct footprint f = {proc_status(pid, "RssAnon"), open_descriptors(pid), proc_status(pid, "Threads")};
    return f;
}

static void *nothing(void *arg) { return arg; }

/* This process's thread count once it has come down to `expected`, or
 * after a second when it does not (a runtime's own thread, started at the
 * first pthread_create(), stays). */
static long settle_threads(long expected)
{
    long n = proc_status(getpid(), "Threads");
    for (int i = 0; i < 100 && n > expected; ++i) {
        struct timespec ms10 = {0, 10000000};
        nanosleep(&ms10, NULL);
        n = proc_status(getpid(), "Threads");
    }
    return n;
}

static void test_request_churn_keeps_counts_and_resources(void **state)
{
    (void)state;
    /* A thread made and joined first: a runtime that starts a thread of its
     * own at the first pthread_create() (ThreadSanitizer's) then has it in
     * the count before the tool starts its collector too. */
    const long alone = proc_status(getpid(), "Threads");
    pthread_t first;
    assert_int_equal(pthread_create(&first, NULL, nothing, NULL), 0);
    assert_int_equal(pthread_join(first, NULL), 0);
    /* The joined thread leaves the count a moment after the join returns
     * (see the end of the test): wait for it, so that the count taken here
     * is not one too high, which would hide a collector left running. */
    settle_threads(alone);
    const struct footprint tool_before = footprint_of(getpid());
    struct churn c;
    start_churn(&c);
    const int n = iterations();
    /* Measured after the request slots have all been used once (256 at a
     * time, handed out round robin) and the first trace records were
     * delivered: from then on nothing may grow. */
    const int settled = n / 2;
    struct footprint tool_mid = {0}, app_mid = {0};
    for (int release = 1; release <= n; ++release) {
        assert_int_equal(iterate(&c, release), MRI_APPLICATION_STOPPED);
        if (release == settled) {
            tool_mid = footprint_of(getpid());
            app_mid = footprint_of(c.app_pid);
        }
    }
    const struct footprint tool_end = footprint_of(getpid()), app_end = footprint_of(c.app_pid);
    print_message("%d releases, %d requests made and %d deleted, %llu trace records\n", n, c.created, c.deleted,
                  (unsigned long long)atomic_load(&g_records));
    print_message("tool: %ld -> %ld kB anonymous, %d -> %d descriptors, %ld -> %ld threads\n", tool_mid.anon_kb,
                  tool_end.anon_kb, tool_mid.descriptors, tool_end.descriptors, tool_mid.threads, tool_end.threads);
    print_message("application: %ld -> %ld kB anonymous, %d -> %d descriptors, %ld -> %ld threads\n",
                  app_mid.anon_kb, app_end.anon_kb, app_mid.descriptors, app_end.descriptors, app_mid.threads,
                  app_end.threads);
    assert_true(c.created > 256); /* every request slot was reused */
    assert_int_equal(tool_end.descriptors, tool_mid.descriptors);
    assert_int_equal(tool_end.threads, tool_mid.threads);
    assert_int_equal(app_end.descriptors, app_mid.descriptors);
    assert_int_equal(app_end.threads, app_mid.threads);
    if (!MRI_TEST_SANITIZED) { /* a sanitizer's quarantine keeps freed memory */
        /* Short-lived requests hold nothing that grows with the run (a
         * request living through N releases lists them: 4 bytes each). A
         * page or so of slack for the allocator. */
        assert_true(tool_end.anon_kb - tool_mid.anon_kb <= 64);
        assert_true(app_end.anon_kb - app_mid.anon_kb <= 64);
    }

    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.stops, (unsigned long long)n);
    assert_int_equal(info.bad_requests, 0);
    assert_int_equal(info.unmatched_exits, 0);
    assert_string_equal(info.monitor_message, "");

    assert_int_equal(MRI_Finalize(), MRI_OK);
    /* The application is gone and reaped, the segment with it. */
    assert_int_equal(kill(c.app_pid, 0), -1);
    assert_int_equal(segments_created_by(getpid()), 0);
    const struct footprint tool_after = footprint_of(getpid());
    assert_int_equal(tool_after.descriptors, tool_before.descriptors);
    /* The trace collector has been joined, but a joined thread leaves the
     * process's count only when the kernel has released it, a moment after
     * the join returns (seen under ASan): a thread really left running
     * stays counted for the whole second. */
    assert_int_equal(settle_threads(tool_before.threads), tool_before.threads);
}

static void test_application_killed_mid_run(void **state)
{
    (void)state;
    struct churn c;
    start_churn(&c);
    const int n = iterations() / 4;
    for (int release = 1; release <= n; ++release) assert_int_equal(iterate(&c, release), MRI_APPLICATION_STOPPED);
    /* Killed while it runs towards the next stop. */
    assert_int_equal(MRI_Start(), MRI_OK);
    assert_int_equal(kill(c.app_pid, SIGKILL), 0);
    assert_int_equal(MRI_Wait(), MRI_APPLICATION_TERMINATED);
    MRI_Application_Status_Info info;
    assert_int_equal(MRI_Get_Application_Status(&info), MRI_OK);
    assert_int_equal(info.reason, MRI_STOP_SIGNALED);
    assert_int_equal(info.signal, SIGKILL);
    /* The results stay readable and count at least what ran to the stops. */
    for (int i = 0; i < c.nlive; ++i) {
        if (c.live[i].kind != INSTANCES) continue;
        MRI_Aggregate_Request_Results *r = agg_data(c.live[i].id);
        assert_true(r->element[0].value >= (double)(n - c.live[i].first + 1));
    }
    assert_int_equal(MRI_Finalize(), MRI_OK);
    assert_int_equal(segments_created_by(getpid()), 0);
}

static void test_tool_killed_mid_run(void **state)
{
    (void)state;
    /* The application is the tool's child: adopt it when the tool dies, to
     * see it end. */
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    const pid_t tool = fork();
    assert_true(tool >= 0);
    if (tool == 0) {
        /* The tool: no cmocka assertions here (a failure would go on with
         * the next test in this process); an exit status instead. */
        close(ready[0]);
        char *argv[] = {MRI_TESTAPP, "steps", "1000000000", "0", NULL};
        if (MRI_Init() != MRI_OK || MRI_Register_Call_Back_Function(take_records) != MRI_OK ||
            MRI_Application_Load(MRI_TESTAPP, argv) != MRI_OK)
            _exit(3);
        struct churn c;
        memset(&c, 0, sizeof c);
        if (MRI_Find_Region("step", &c.step) != MRI_OK || MRI_Find_Region("inner", &c.inner) != MRI_OK) _exit(4);
        MRI_Application_Status_Info info;
        if (MRI_Get_Application_Status(&info) != MRI_OK) _exit(5);
        MRI_Request_ID ids[KINDS];
        for (int release = 1; release <= iterations() / 4; ++release) {
            /* Every kind in place at every release, each made anew. */
            for (int k = 0; k < KINDS; ++k)
                if ((release > 1 && MRI_Request_Delete(ids[k]) != MRI_OK) || (ids[k] = submit(&c, k)) <= 0) _exit(6);
            if (MRI_Start_Stop(&c.step) != MRI_OK || MRI_Wait() != MRI_APPLICATION_STOPPED) _exit(7);
            /* The records, as an analyser takes them at a stop: a deleted
             * trace request's record is not given to another trace request
             * while its records wait. */
            take_records();
        }
        /* Running, with requests of every kind in place, when it dies. */
        if (MRI_Start() != MRI_OK) _exit(8);
        if (write(ready[1], &info.pid, sizeof info.pid) != sizeof info.pid) _exit(9);
        pause();
        _exit(10);
    }
    close(ready[1]);
    int app = 0;
    const ssize_t got = read(ready[0], &app, sizeof app);
    close(ready[0]);
    int status = 0;
    if (got != (ssize_t)sizeof app) {
        assert_int_equal(waitpid(tool, &status, 0), tool);
        fail_msg("the tool ended before its application was running (exit status %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    assert_true(app > 0);
    assert_int_equal(segments_created_by(tool), 1);
    assert_int_equal(kill(tool, SIGKILL), 0);
    assert_int_equal(waitpid(tool, &status, 0), tool);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* The application detaches and runs on, unmonitored; it is ended here
     * (it would run a billion steps). The segment goes with the last
     * process attached. */
    struct timespec pause_ms = {0, 1000000};
    for (int i = 0; i < 5000 && segments_created_by(tool) > 0; ++i) nanosleep(&pause_ms, NULL);
    assert_int_equal(segments_created_by(tool), 0);
    assert_int_equal(kill(app, SIGKILL), 0);
    assert_int_equal(waitpid(app, &status, 0), app);
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_request_churn_keeps_counts_and_resources, teardown),
        cmocka_unit_test_teardown(test_application_killed_mid_run, teardown),
        cmocka_unit_test_teardown(test_tool_killed_mid_run, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

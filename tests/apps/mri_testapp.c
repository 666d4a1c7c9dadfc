/*
 * mri_testapp - an instrumented program with known behaviour, started by the
 * integration tests as the monitored application.
 *
 *   mri_testapp sleep N MS            region "sleeper" (ROUTINE) N times, MS ms each
 *   mri_testapp imbalance T N         T threads run region "work" N times; thread 1
 *                                     is named "slow" and sleeps 20 ms, others 1 ms
 *   mri_testapp steps N MS            region "step" (LOOP) N times (MS ms each) with a
 *                                     nested "inner" ROUTINE twice per step
 *   mri_testapp workers T N           T-1 worker threads run region "spin" (ROUTINE)
 *                                     until the main thread finished N "step"s
 *   mri_testapp forever [FILE]        region "step" every ms until terminated; after
 *                                     the first step (monitoring runs), create FILE
 *   mri_testapp until_detached FILE [MS]
 *                                     region "step" every MS ms (default 1); once the
 *                                     monitor has detached, write "<ns>\n" (CLOCK_MONOTONIC
 *                                     time it noticed) to FILE and exit 0
 *   mri_testapp deep N                "inner" calls itself until N instances are open
 *                                     at once, then returns
 *   mri_testapp deep_exit N           the same, then calls exit(0) inside them
 *   mri_testapp close_fds N           close every descriptor above 2 (close_range) and
 *                                     open /dev/null in the first freed one, then
 *                                     N "step"s of 10 ms; exit 3 if the monitor was
 *                                     attached at the start and is no longer
 *   mri_testapp crash N               region "step" N times, then abort()
 *   mri_testapp exit N CODE           region "step" N times, then exit(CODE)
 *   mri_testapp exec N HOW PROG [ARG...]
 *                                     N "step"s, then inside a "step" replace the
 *                                     program with PROG ARG... (argv[0] = PROG) by
 *                                     HOW: v execv, vp execvp, ve execve, vpe execvpe,
 *                                     l execl, lp execlp, le execle (at most 2 ARGs),
 *                                     fd fexecve (PROG opened).
 *                                     When the exec fails: print why on stderr, leave
 *                                     the "step", N more "step"s, exit 4
 *   mri_testapp vfork_exec N          N "step"s, then inside a "step" vfork() a child
 *                                     that execs /bin/true, wait for it, N more "step"s
 *   mri_testapp parallel              an OpenMP-style PARALLEL region in threads
 *   mri_testapp touch N PAGES         region "toucher" N times: map PAGES new pages,
 *                                     write one byte in each, unmap them
 *   mri_testapp spin T N MS           T threads each run region "spinner" N times,
 *                                     busy until it used MS ms of its own CPU time
 *   mri_testapp nested T N            T threads (the main one and T-1 more) each run N
 *                                     "step"s with two nested "inner"s, no waiting
 *   mri_testapp dlopen PATH N         dlopen() the module PATH after start-up and
 *                                     call its plugin_work() N times
 *   mri_testapp dlclose PATH N        N times: a "step", dlopen() PATH, plugin_work()
 *                                     twice, dlclose()
 *   mri_testapp stray_exits N         N exits of "step" without an enter, then one step
 *   mri_testapp children N M          M "step"s, each one "parent" (ROUTINE) that
 *                                     calls "child" (ROUTINE, ~40 additions) N times
 *   mri_testapp offload N M           the same, but "parent" creates a thread that
 *                                     calls "child" N times, and joins it
 *   mri_testapp barrier N M           the same, but with one thread for all steps:
 *                                     "parent" lets it go through a barrier and
 *                                     waits at a second one while it calls "child"
 *                                     N times
 *   mri_testapp barrier_ahead N       two "step"s, each one "parent" between two
 *                                     barriers with a second thread: in the first
 *                                     that thread calls "child" N times and waits
 *                                     for "parent", which stays 5 ms longer; in the
 *                                     second it sleeps 5 ms, without regions
 *   mri_testapp pthread_exit N        a thread runs N "step"s of 2 ms while the main
 *                                     thread leaves "main" and calls pthread_exit()
 *   mri_testapp exit_inside N         N "step"s; a thread enters "parent" and "child"
 *                                     and ends with pthread_exit() inside them; a
 *                                     second thread enters "spin" and sleeps there;
 *                                     then main enters "step" and "inner" and calls
 *                                     exit(0) inside them (and "main")
 *   mri_testapp jump N                N "step"s, each entering "inner" and leaving it
 *                                     by longjmp() back into the step (no exit of
 *                                     "inner"), then leaving "step"
 *   mri_testapp init_exit CODE        Monitor_Init() (waits for the tool's release),
 *                                     then exit(CODE) before any region
 *   mri_testapp late_start MS         sleep MS ms before the first region, then one "step"
 *   mri_testapp early_abort           abort() before the first region (attached, never published)
 *   mri_testapp early_exit CODE       exit(CODE) before the first region (attached; exit() publishes)
 *   mri_testapp many_data N           registers N data structures ("d0", "d1", ...,
 *                                     a byte each) before the first region (exit 4
 *                                     when one fails that the table holds, 5 when one
 *                                     at address NULL is taken), then one "step"
 *   mri_testapp huge_data             registers "fine" (16 bytes) and "negative" (from a
 *                                     static buffer up to the last byte of the address
 *                                     space: a negative size cast, which does not wrap)
 *                                     before the first region, then one "step"; exit 6
 *                                     when "negative" is taken, 7 when "fine" is not
 *   mri_testapp long_names N BYTES    registers N ROUTINE regions at run time, each
 *                                     named by BYTES characters ("0xxx...", "1xxx...",
 *                                     ...), and runs each once (exit 3 when one gets
 *                                     no id)
 *   mri_testapp early_dlclose PATH N  dlopen() and dlclose() the module PATH before
 *                                     the first region (its regions are not yet
 *                                     published), then N "step"s in "main"
 *
 * Every other mode is wrapped in region "main" (PROGRAM).
 */
#define _GNU_SOURCE
#include <mri_monitor.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

MONITOR_REGION(r_main, MRI_REGION_PROGRAM, "main");
MONITOR_REGION(r_sleeper, MRI_REGION_ROUTINE, "sleeper");
MONITOR_REGION(r_work, MRI_REGION_ROUTINE, "work");
MONITOR_REGION(r_step, MRI_REGION_LOOP, "step");
MONITOR_REGION(r_inner, MRI_REGION_ROUTINE, "inner");
MONITOR_REGION(r_spin, MRI_REGION_ROUTINE, "spin");
MONITOR_REGION(r_parallel, MRI_REGION_PARALLEL, "team");
MONITOR_REGION(r_toucher, MRI_REGION_ROUTINE, "toucher");
MONITOR_REGION(r_spinner, MRI_REGION_ROUTINE, "spinner");
MONITOR_REGION(r_parent, MRI_REGION_ROUTINE, "parent");
MONITOR_REGION(r_child, MRI_REGION_ROUTINE, "child");

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static unsigned long long clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static unsigned long long now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static int arg_int(int argc, char **argv, int i)
{
    if (i >= argc) {
        fprintf(stderr, "mri_testapp: missing argument %d\n", i);
        exit(2);
    }
    return atoi(argv[i]);
}

struct imbalance_arg {
    int index, n;
};

static void *imbalance_thread(void *p)
{
    struct imbalance_arg *a = p;
    char name[16];
    snprintf(name, sizeof name, a->index == 1 ? "slow" : "worker%d", a->index);
    pthread_setname_np(pthread_self(), name);
    for (int i = 0; i < a->n; ++i) {
        MONITOR_ENTER(r_work);
        /* 20 against 1: a 1 ms sleep can oversleep past 4 ms under
         * ThreadSanitizer, and the slow one must stay the slowest. */
        sleep_ms(a->index == 1 ? 20.0 : 1.0);
        MONITOR_EXIT(r_work);
    }
    return NULL;
}

static volatile int workers_stop;

static void *spin_thread(void *p)
{
    (void)p;
    pthread_setname_np(pthread_self(), "spinner");
    volatile unsigned long long sink = 0; /* per thread: busy work, no sharing */
    while (!__atomic_load_n(&workers_stop, __ATOMIC_RELAXED)) {
        MONITOR_ENTER(r_spin);
        for (int i = 0; i < 1000; ++i) sink += (unsigned long long)i;
        MONITOR_EXIT(r_spin);
    }
    return NULL;
}

static int deep_exits; /* deep_exit mode: exit(0) at the innermost instance */

static int deep(int n)
{
    MONITOR_ENTER(r_inner);
    if (n == 1 && deep_exits) exit(0);
    const int depth = n > 1 ? deep(n - 1) + 1 : 1;
    MONITOR_EXIT(r_inner);
    return depth;
}

static void one_step(double ms)
{
    MONITOR_ENTER(r_step);
    for (int k = 0; k < 2; ++k) {
        MONITOR_ENTER(r_inner);
        if (ms > 0) sleep_ms(ms / 4);
        MONITOR_EXIT(r_inner);
    }
    if (ms > 0) sleep_ms(ms / 2);
    MONITOR_EXIT(r_step);
}

struct spin_arg {
    int n, ms;
};

static void *spin_worker(void *p)
{
    const struct spin_arg *a = p;
    for (int i = 0; i < a->n; ++i) {
        MONITOR_ENTER(r_spinner);
        /* CPU time, not wall time: however loaded the machine, each
         * instance holds MS ms of this thread's CPU time. */
        const unsigned long long end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (unsigned long long)a->ms * 1000000ull;
        while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end) {
        }
        MONITOR_EXIT(r_spinner);
    }
    return NULL;
}

static void *nested_thread(void *p)
{
    const int n = *(const int *)p;
    for (int i = 0; i < n; ++i) one_step(0);
    return NULL;
}

/* The pthread_exit mode's thread: N slow steps, so that the main thread
 * has ended before it does. */
static void *late_thread(void *p)
{
    const int n = *(const int *)p;
    for (int i = 0; i < n; ++i) one_step(2);
    return NULL;
}

/* A short routine: about as long as the monitor's own work per instance,
 * so measuring it doubles its caller's time (overhead compensation tests). */
static volatile unsigned long long child_sink;
__attribute__((noinline)) static void child(void)
{
    MONITOR_ENTER(r_child);
    for (int i = 0; i < 40; ++i) child_sink += (unsigned long long)i;
    MONITOR_EXIT(r_child);
}

__attribute__((noinline)) static void parent(int n)
{
    MONITOR_ENTER(r_parent);
    for (int i = 0; i < n; ++i) child();
    MONITOR_EXIT(r_parent);
}

static void *offload_children(void *p)
{
    const int n = *(const int *)p;
    for (int i = 0; i < n; ++i) child();
    return NULL;
}

/* "parent" waits for its children's thread, and with it for their
 * measurement overhead: compensated across the join. */
__attribute__((noinline)) static int offload_parent(int n)
{
    MONITOR_ENTER(r_parent);
    pthread_t th;
    int rc = pthread_create(&th, NULL, offload_children, &n);
    if (rc == 0) rc = pthread_join(th, NULL);
    MONITOR_EXIT(r_parent);
    return rc;
}

/* "parent" waits at a barrier for a thread kept for every step, and with
 * it for its children's measurement overhead: compensated across the
 * barrier (libmonitor/threads.cpp). */
struct barrier_work {
    pthread_barrier_t start, done;
    int n, steps;
};

static void *barrier_children(void *p)
{
    struct barrier_work *w = p;
    for (int s = 0; s < w->steps; ++s) {
        pthread_barrier_wait(&w->start);
        for (int i = 0; i < w->n; ++i) child();
        pthread_barrier_wait(&w->done);
    }
    return NULL;
}

__attribute__((noinline)) static void barrier_parent(struct barrier_work *w)
{
    MONITOR_ENTER(r_parent);
    pthread_barrier_wait(&w->start);
    pthread_barrier_wait(&w->done);
    MONITOR_EXIT(r_parent);
}

/* barrier_ahead: the second thread's overhead is behind it when it waits
 * for "parent" in the first step; in the second "parent" waits for it,
 * and for none of that overhead. */
static int g_children_done;

static void *barrier_ahead_children(void *p)
{
    struct barrier_work *w = p;
    pthread_barrier_wait(&w->start);
    for (int i = 0; i < w->n; ++i) child();
    __atomic_store_n(&g_children_done, 1, __ATOMIC_RELEASE);
    pthread_barrier_wait(&w->done);
    pthread_barrier_wait(&w->start);
    sleep_ms(5);
    pthread_barrier_wait(&w->done);
    return NULL;
}

__attribute__((noinline)) static void barrier_ahead_parent(struct barrier_work *w, int first)
{
    MONITOR_ENTER(r_parent);
    pthread_barrier_wait(&w->start);
    if (first) {
        while (!__atomic_load_n(&g_children_done, __ATOMIC_ACQUIRE)) sleep_ms(0.1);
        sleep_ms(5);
    }
    pthread_barrier_wait(&w->done);
    MONITOR_EXIT(r_parent);
}

/* exit_inside: a thread that ends inside two regions, and one that is
 * inside a region when the process exits. */
static void *ends_inside(void *p)
{
    (void)p;
    MONITOR_ENTER(r_parent);
    MONITOR_ENTER(r_child);
    pthread_exit(NULL);
}

static volatile int stays_inside_entered;
static void *stays_inside(void *p)
{
    (void)p;
    MONITOR_ENTER(r_spin);
    __atomic_store_n(&stays_inside_entered, 1, __ATOMIC_RELEASE);
    for (;;) sleep_ms(1);
    return NULL;
}

static void *team_member(void *p)
{
    (void)p;
    MONITOR_ENTER(r_parallel);
    sleep_ms(1);
    MONITOR_EXIT(r_parallel);
    return NULL;
}

typedef int (*plugin_fn)(int);

/* dlopen()s the module PATH; its plugin_work(), or NULL (said why). */
static plugin_fn load_plugin(const char *path, void **module)
{
    *module = dlopen(path, RTLD_NOW);
    if (!*module) {
        fprintf(stderr, "mri_testapp: %s\n", dlerror());
        return NULL;
    }
    plugin_fn work = (plugin_fn)dlsym(*module, "plugin_work");
    if (!work) fprintf(stderr, "mri_testapp: %s has no plugin_work\n", path);
    return work;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "init_exit") == 0) {
        Monitor_Init();
        exit(arg_int(argc, argv, 2));
    }
    if (argc == 3 && strcmp(argv[1], "late_start") == 0) sleep_ms(arg_int(argc, argv, 2));
    if (argc == 2 && strcmp(argv[1], "early_abort") == 0) abort();
    if (argc == 3 && strcmp(argv[1], "early_exit") == 0) exit(arg_int(argc, argv, 2));
    if (argc == 3 && strcmp(argv[1], "many_data") == 0) {
        static char bytes[2048];
        const int n = arg_int(argc, argv, 2);
        if (n < 0 || n > (int)sizeof bytes) return 2;
        for (int i = 0; i < n; ++i) {
            char name[16];
            snprintf(name, sizeof name, "d%d", i);
            if (Monitor_Register_Data(name, bytes + i, 1, NULL, __FILE__) != 0 && i < 1024) return 4;
        }
        if (Monitor_Register_Data("null", NULL, 16, NULL, __FILE__) != -1) return 5;
    }
    if (argc == 2 && strcmp(argv[1], "huge_data") == 0) {
        static char fine[16];
        const unsigned long long to_the_end = ~0ull - (unsigned long long)(uintptr_t)fine;
        if (Monitor_Register_Data("negative", fine, to_the_end, NULL, __FILE__) != -1) return 6;
        if (Monitor_Register_Data("fine", fine, sizeof fine, NULL, __FILE__) != 0) return 7;
    }
    if (argc == 4 && strcmp(argv[1], "early_dlclose") == 0) {
        void *module;
        if (!load_plugin(argv[2], &module)) return 3;
        dlclose(module);
    }
    MONITOR_ENTER(r_main);
    if (argc < 2) {
        fprintf(stderr, "usage: mri_testapp MODE ...\n");
        return 2;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "sleep") == 0) {
        int n = arg_int(argc, argv, 2), ms = arg_int(argc, argv, 3);
        for (int i = 0; i < n; ++i) {
            MONITOR_ENTER(r_sleeper);
            sleep_ms(ms);
            MONITOR_EXIT(r_sleeper);
        }
    } else if (strcmp(mode, "imbalance") == 0) {
        int t = arg_int(argc, argv, 2), n = arg_int(argc, argv, 3);
        pthread_t th[64];
        struct imbalance_arg a[64];
        if (t < 1 || t > 64) return 2;
        for (int i = 0; i < t; ++i) {
            a[i].index = i;
            a[i].n = n;
            pthread_create(&th[i], NULL, imbalance_thread, &a[i]);
        }
        for (int i = 0; i < t; ++i) pthread_join(th[i], NULL);
    } else if (strcmp(mode, "steps") == 0) {
        int n = arg_int(argc, argv, 2), ms = arg_int(argc, argv, 3);
        for (int i = 0; i < n; ++i) one_step(ms);
    } else if (strcmp(mode, "workers") == 0) {
        int t = arg_int(argc, argv, 2), n = arg_int(argc, argv, 3);
        pthread_t th[64];
        if (t < 2 || t > 64) return 2;
        for (int i = 0; i < t - 1; ++i) pthread_create(&th[i], NULL, spin_thread, NULL);
        for (int i = 0; i < n; ++i) one_step(2);
        __atomic_store_n(&workers_stop, 1, __ATOMIC_RELAXED);
        for (int i = 0; i < t - 1; ++i) pthread_join(th[i], NULL);
    } else if (strcmp(mode, "nested") == 0) {
        int t = arg_int(argc, argv, 2), n = arg_int(argc, argv, 3);
        pthread_t th[64];
        if (t < 1 || t > 64) return 2;
        for (int i = 0; i < t - 1; ++i) pthread_create(&th[i], NULL, nested_thread, &n);
        nested_thread(&n);
        for (int i = 0; i < t - 1; ++i) pthread_join(th[i], NULL);
    } else if (strcmp(mode, "children") == 0) {
        int n = arg_int(argc, argv, 2), m = arg_int(argc, argv, 3);
        for (int i = 0; i < m; ++i) {
            MONITOR_ENTER(r_step);
            parent(n);
            MONITOR_EXIT(r_step);
        }
    } else if (strcmp(mode, "offload") == 0) {
        int n = arg_int(argc, argv, 2), m = arg_int(argc, argv, 3);
        for (int i = 0; i < m; ++i) {
            MONITOR_ENTER(r_step);
            const int rc = offload_parent(n);
            MONITOR_EXIT(r_step);
            if (rc != 0) return 3;
        }
    } else if (strcmp(mode, "barrier") == 0 || strcmp(mode, "barrier_ahead") == 0) {
        const int ahead = strcmp(mode, "barrier_ahead") == 0;
        struct barrier_work w = {.n = arg_int(argc, argv, 2), .steps = ahead ? 2 : arg_int(argc, argv, 3)};
        pthread_t th;
        if (pthread_barrier_init(&w.start, NULL, 2) != 0 || pthread_barrier_init(&w.done, NULL, 2) != 0 ||
            pthread_create(&th, NULL, ahead ? barrier_ahead_children : barrier_children, &w) != 0)
            return 3;
        for (int i = 0; i < w.steps; ++i) {
            MONITOR_ENTER(r_step);
            if (ahead)
                barrier_ahead_parent(&w, i == 0);
            else
                barrier_parent(&w);
            MONITOR_EXIT(r_step);
        }
        if (pthread_join(th, NULL) != 0) return 3;
        pthread_barrier_destroy(&w.start);
        pthread_barrier_destroy(&w.done);
    } else if (strcmp(mode, "forever") == 0) {
        one_step(1);
        if (argc > 2) {
            FILE *f = fopen(argv[2], "w");
            if (f) fclose(f);
        }
        for (;;) one_step(1);
    } else if (strcmp(mode, "until_detached") == 0) {
        const char *file = argc > 2 ? argv[2] : NULL;
        const double ms = argc > 3 ? atof(argv[3]) : 1.0;
        /* Only used under a tool: if the first event already finds the
         * monitor detached (the tool died while the program was parked at
         * start-up), that is the detach we wait for. */
        int was_attached = 1;
        for (;;) {
            one_step(ms);
            int attached = Monitor_Is_Attached();
            if (attached) was_attached = 1;
            if (was_attached && !attached) {
                unsigned long long t = now_ns();
                FILE *f = file ? fopen(file, "w") : NULL;
                if (f) {
                    fprintf(f, "%llu\n", t);
                    fclose(f);
                }
                break;
            }
        }
    } else if (strcmp(mode, "late_start") == 0 || strcmp(mode, "many_data") == 0 || strcmp(mode, "huge_data") == 0) {
        one_step(0);
    } else if (strcmp(mode, "long_names") == 0) {
        /* Names that outgrow the monitor's name pool (1 MiB by default). */
        static Monitor_Region_Descriptor regions[64];
        const int n = arg_int(argc, argv, 2), bytes = arg_int(argc, argv, 3);
        if (n < 1 || n > 64 || bytes < 2) return 2;
        for (int i = 0; i < n; ++i) {
            char *name = malloc((size_t)bytes + 1);
            if (!name) return 2;
            memset(name, 'x', (size_t)bytes);
            name[bytes] = '\0';
            name[snprintf(name, (size_t)bytes, "%d", i)] = 'x';
            regions[i] = (Monitor_Region_Descriptor){0, MRI_REGION_ROUTINE, 0, -1, name, __FILE__, 1000 + i, 0};
            if (Monitor_Register_Region(&regions[i]) < 0) return 3;
            MONITOR_ENTER(regions[i]);
            MONITOR_EXIT(regions[i]);
        }
    } else if (strcmp(mode, "deep") == 0 || strcmp(mode, "deep_exit") == 0) {
        deep_exits = strcmp(mode, "deep_exit") == 0;
        if (deep(arg_int(argc, argv, 2)) != arg_int(argc, argv, 2)) return 3;
    } else if (strcmp(mode, "close_fds") == 0) {
        /* As a daemon does at start-up: the monitor's descriptors go too. */
        const int attached = Monitor_Is_Attached();
        syscall(SYS_close_range, 3u, ~0u, 0u);
        if (open("/dev/null", O_RDONLY) < 0) return 3;
        int n = arg_int(argc, argv, 2);
        for (int i = 0; i < n; ++i) one_step(10);
        if (attached && !Monitor_Is_Attached()) return 3;
    } else if (strcmp(mode, "crash") == 0) {
        int n = arg_int(argc, argv, 2);
        for (int i = 0; i < n; ++i) one_step(0);
        abort();
    } else if (strcmp(mode, "exit") == 0) {
        int n = arg_int(argc, argv, 2), code = arg_int(argc, argv, 3);
        for (int i = 0; i < n; ++i) one_step(0);
        exit(code);
    } else if (strcmp(mode, "exec") == 0 && argc >= 5) {
        int n = arg_int(argc, argv, 2);
        const char *how = argv[3], *prog = argv[4];
        char **args = argv + 4;
        extern char **environ;
        for (int i = 0; i < n; ++i) one_step(0);
        MONITOR_ENTER(r_step);
        if (strcmp(how, "v") == 0) {
            execv(prog, args);
        } else if (strcmp(how, "vp") == 0) {
            execvp(prog, args);
        } else if (strcmp(how, "ve") == 0) {
            execve(prog, args, environ);
        } else if (strcmp(how, "vpe") == 0) {
            execvpe(prog, args, environ);
        } else if (strcmp(how, "l") == 0) {
            execl(prog, prog, argc > 5 ? argv[5] : NULL, argc > 6 ? argv[6] : NULL, (char *)NULL);
        } else if (strcmp(how, "lp") == 0) {
            execlp(prog, prog, argc > 5 ? argv[5] : NULL, argc > 6 ? argv[6] : NULL, (char *)NULL);
        } else if (strcmp(how, "le") == 0) {
            execle(prog, prog, argc > 5 ? argv[5] : NULL, argc > 6 ? argv[6] : NULL, (char *)NULL, environ);
        } else if (strcmp(how, "fd") == 0) {
            int fd = open(prog, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) fexecve(fd, args, environ);
        } else {
            fprintf(stderr, "mri_testapp: unknown exec way %s\n", how);
            return 2;
        }
        fprintf(stderr, "mri_testapp: exec %s failed: %s\n", prog, strerror(errno));
        MONITOR_EXIT(r_step);
        for (int i = 0; i < n; ++i) one_step(0);
        MONITOR_EXIT(r_main);
        return 4;
    } else if (strcmp(mode, "vfork_exec") == 0) {
        int n = arg_int(argc, argv, 2);
        for (int i = 0; i < n; ++i) one_step(0);
        MONITOR_ENTER(r_step);
        pid_t child = vfork();
        if (child == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        int status = -1;
        if (child < 0 || waitpid(child, &status, 0) != child || status != 0) return 3;
        MONITOR_EXIT(r_step);
        for (int i = 0; i < n; ++i) one_step(0);
    } else if (strcmp(mode, "touch") == 0) {
        int n = arg_int(argc, argv, 2), pages = arg_int(argc, argv, 3);
        const size_t page = (size_t)sysconf(_SC_PAGESIZE);
        for (int i = 0; i < n; ++i) {
            MONITOR_ENTER(r_toucher);
            char *m = mmap(NULL, page * (size_t)pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) return 3;
            for (int k = 0; k < pages; ++k) m[(size_t)k * page] = (char)k; /* one fault per page */
            munmap(m, page * (size_t)pages);
            MONITOR_EXIT(r_toucher);
        }
    } else if (strcmp(mode, "spin") == 0) {
        int t = arg_int(argc, argv, 2);
        struct spin_arg a = {arg_int(argc, argv, 3), arg_int(argc, argv, 4)};
        pthread_t th[64];
        if (t < 1 || t > 64) return 2;
        for (int i = 0; i < t; ++i) pthread_create(&th[i], NULL, spin_worker, &a);
        for (int i = 0; i < t; ++i) pthread_join(th[i], NULL);
    } else if (strcmp(mode, "dlopen") == 0) {
        if (argc < 4) return 2;
        one_step(0); /* the static information is out before the module arrives */
        void *module;
        plugin_fn work = load_plugin(argv[2], &module);
        if (!work) return 3;
        int n = arg_int(argc, argv, 3);
        for (int i = 0; i < n; ++i) work(i);
    } else if (strcmp(mode, "early_dlclose") == 0) {
        int n = arg_int(argc, argv, 3);
        for (int i = 0; i < n; ++i) one_step(0);
    } else if (strcmp(mode, "dlclose") == 0) {
        if (argc < 4) return 2;
        int n = arg_int(argc, argv, 3);
        for (int i = 0; i < n; ++i) {
            one_step(0);
            void *module;
            plugin_fn work = load_plugin(argv[2], &module);
            if (!work) return 3;
            work(i);
            work(i);
            dlclose(module);
        }
    } else if (strcmp(mode, "stray_exits") == 0) {
        int n = arg_int(argc, argv, 2);
        for (int i = 0; i < n; ++i) MONITOR_EXIT(r_step);
        one_step(0);
    } else if (strcmp(mode, "pthread_exit") == 0) {
        static int n; /* the thread reads it after main has ended */
        n = arg_int(argc, argv, 2);
        pthread_t th;
        if (pthread_create(&th, NULL, late_thread, &n) != 0) return 1;
        MONITOR_EXIT(r_main);
        pthread_exit(NULL);
    } else if (strcmp(mode, "exit_inside") == 0) {
        int n = arg_int(argc, argv, 2);
        for (int i = 0; i < n; ++i) one_step(0);
        pthread_t th;
        if (pthread_create(&th, NULL, ends_inside, NULL) != 0) return 1;
        pthread_join(th, NULL);
        if (pthread_create(&th, NULL, stays_inside, NULL) != 0) return 1;
        while (!__atomic_load_n(&stays_inside_entered, __ATOMIC_ACQUIRE)) sleep_ms(1);
        MONITOR_ENTER(r_step);
        MONITOR_ENTER(r_inner);
        exit(0);
    } else if (strcmp(mode, "jump") == 0) {
        int n = arg_int(argc, argv, 2);
        for (volatile int i = 0; i < n; ++i) { /* volatile: kept across the longjmp */
            jmp_buf back;
            MONITOR_ENTER(r_step);
            if (!setjmp(back)) {
                MONITOR_ENTER(r_inner);
                longjmp(back, 1);
            }
            MONITOR_EXIT(r_step);
        }
    } else if (strcmp(mode, "parallel") == 0) {
        pthread_t th[2];
        for (int i = 0; i < 2; ++i) pthread_create(&th[i], NULL, team_member, NULL);
        for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    } else {
        fprintf(stderr, "mri_testapp: unknown mode %s\n", mode);
        return 2;
    }
    MONITOR_EXIT(r_main);
    return 0;
}

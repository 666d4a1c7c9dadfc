/*
 * mri_cacheapp - a program with a known memory-access pattern, built with the
 * cache-simulator instrumentation, started by the cache tests as the
 * monitored application.
 *
 *   mri_cacheapp sweep PASSES THREADS
 *
 * Registers three data structures before its first monitored event:
 *   A  64 KiB static array of double (64-byte aligned: 1024 lines), file scope
 *   B  32 KiB heap array of double (64-byte aligned: 512 lines), file scope
 *   C  64-byte static array, in the program unit "main"
 * Then region "sweep" (LOOP) PASSES times: one read of every double of A
 * (8-byte volatile loads, 8192 per pass), and region "fill" (ROUTINE) once:
 * one write of every double of B (4096 stores). With THREADS from 2 to 16,
 * THREADS - 1 more threads do the same afterwards, one after another (the
 * main thread creates each when the one before has ended): each later
 * thread's reference buffers are, in the cache-simulator backend, the
 * ones the thread before left. Every mode is wrapped in region "main"
 * (PROGRAM).
 *
 *   mri_cacheapp sweep PASSES THREADS STACK_KIB
 *
 * The same, the other threads created with a stack of STACK_KIB KiB
 * (pthread_attr_setstacksize); exit status 3 when one cannot be created.
 *
 *   mri_cacheapp realloc ROUNDS
 *
 * ROUNDS times, in region "main": allocates B (32 KiB, 64-byte aligned)
 * and registers it, passes region "fresh" (empty: a place to stop), runs
 * "fill" over B, ends B (Monitor_Unregister_Data), runs "fill" over the
 * same memory again (counted for nobody) and frees it. The allocator may
 * give every round the same address.
 *
 *   mri_cacheapp straddle
 *
 * Registers B (32 KiB, 64-byte aligned, zeroed outside the instrumented
 * code) and, in region "straddle" inside "main", reads 8 bytes at offset
 * 60 of each of B's lines but the last (511 reads, unaligned, through
 * memcpy): each straddles two lines. With the 32 KiB L1, B fits: lines 0
 * and 1 miss at the first read, each later read hits its first line and
 * misses its second, so 512 L1 read misses and 510 hits, 1022 in all, one
 * per line touched. Where the simulator is split, a read whose two lines
 * are of different parts goes to both, and each part counts its line.
 *
 *   mri_cacheapp vector
 *
 * Registers A and, in region "vector" inside "main", reads it with 32-byte
 * AVX loads (2048, two per line; the CPU must have AVX): 1024 L1 read
 * misses and 1024 hits where 32-byte references are recorded (the
 * plugin), none where they are not (SanitizerCoverage's callbacks stop at
 * 16 bytes).
 *
 *   mri_cacheapp overlap
 *
 * Registers A and "A_tail", the second half of A (32 KiB), and in region
 * "sweep" inside "main" reads every double of A once: 1024 L1 read misses
 * on A, 512 of them on A_tail too.
 *
 *   mri_cacheapp names [NAME]
 *
 * Registers A under the name `A,"1"` (a comma and quotes: CSV must quote
 * it), or NAME, and, in region "sweep" inside "main", reads every double
 * of A once.
 *
 *   mri_cacheapp late
 *
 * Registers nothing before its first region: in region "main", registers
 * A, then reads it in region "sweep".
 *
 *   mri_cacheapp park PATH [SPIN_MS [SLEEP_US [REST_MS]]]
 *
 * Registers A; in region "main" starts a thread that enters region
 * "worker", reads 2048 doubles of an unregistered array, waits until file
 * PATH exists (no monitored event or recorded reference meanwhile), reads
 * every double of A (8192 reads, 1024 L1 read misses), removes PATH and
 * enters region "after"; the main thread, once the worker is inside
 * "worker", passes region "fresh" (a place to stop) and joins it. A tool
 * that stops the program at "fresh" and then creates PATH has the worker
 * park at the enter of "after" with about its last 2048 references (256
 * of A's misses) still in its buffer (4096 references a batch). With
 * SPIN_MS, the worker runs that long (CPU time of the process, no event,
 * no recorded reference) between removing PATH and entering "after": a
 * tool that ends the program then finds it running program code. With
 * SLEEP_US too, the spin comes in slices of 0.2 ms, each after a sleep of
 * SLEEP_US (nanosleep): a tool that ends the program meanwhile most
 * likely finds it asleep in a system call, between slices of program
 * code. With REST_MS too, the worker then sleeps REST_MS (one nanosleep)
 * before it enters "after": a tool that ends the program during the spin
 * finds it running, and then blocked.
 *
 *   mri_cacheapp init_exit CODE
 *
 * Registers A, calls Monitor_Init() (waits for the tool's release) and
 * exits with CODE before any region.
 *
 *   mri_cacheapp signals PASSES PATH
 *
 * Registers A and S (64 doubles, 8 lines) and, in region "main", sweeps A
 * PASSES times (as in the sweep mode) while a SIGALRM arrives every 100
 * us; its handler reads every double of S (64 reads, instrumented like the
 * rest). The timer is stopped and the signal
 * blocked before main ends, and the number of handler runs is written to
 * PATH. Every read of S is then a handler's; most handlers run while the
 * thread hands a batch of references to the simulator.
 *
 *   mri_cacheapp brief THREADS PASSES
 *
 * Registers A; in region "main" starts THREADS threads one after another
 * (each when the one before has ended), each reading C[0] (not registered
 * in this mode), adding it to a static double and passing no region: its
 * three references are handed to the simulator only as the thread ends.
 * Then the main thread sweeps A PASSES times, as in the sweep mode:
 * PASSES x 1024 L1 read misses of A.
 *
 *   mri_cacheapp fork ROUNDS
 *
 * ROUNDS times, in region "main": reads one double of each of A's lines,
 * 160 times over (no regions: the references only keep the simulator
 * busy), then fork()s; the child does the same and exits, and the parent
 * waits for it, at most 20 s (then kills it and fails: the child hung). A
 * forked child is not the monitored process: it must neither record nor
 * wait for a simulator that another thread of its parent held at the
 * fork.
 *
 * With 32 KiB 8-way LRU L1 caches, a sweep of A misses every line in L1
 * every time (1024 read misses, 7168 read hits); a 256 KiB private L2 holds
 * A, so only each thread's first sweep misses there. The fill misses each
 * line of B once in L1 (512 write misses, 3584 write hits).
 */
#include <immintrin.h>
#include <mri_monitor.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define A_DOUBLES 8192 /* 64 KiB */
#define B_DOUBLES 4096 /* 32 KiB */

MONITOR_REGION(r_main, MRI_REGION_PROGRAM, "main");
MONITOR_REGION(r_sweep, MRI_REGION_LOOP, "sweep");
MONITOR_REGION(r_fill, MRI_REGION_ROUTINE, "fill");
MONITOR_REGION(r_fresh, MRI_REGION_BLOCK, "fresh");
MONITOR_REGION(r_straddle, MRI_REGION_LOOP, "straddle");
MONITOR_REGION(r_vector, MRI_REGION_LOOP, "vector");
MONITOR_REGION(r_worker, MRI_REGION_ROUTINE, "worker");
MONITOR_REGION(r_after, MRI_REGION_BLOCK, "after");

static double A[A_DOUBLES] __attribute__((aligned(64)));
static int C[16] __attribute__((aligned(64)));
static double *B;
static int passes = 1;
static double sink;

/* n sweeps of A, each in region "sweep". volatile: one 8-byte load or
 * store per element, as the comment above counts them (no vectorised
 * 16-byte accesses). */
static void work_passes_over_a(int n)
{
    const volatile double *a = A;
    for (int p = 0; p < n; p++) {
        MONITOR_ENTER(r_sweep);
        double sum = 0.0;
        for (int i = 0; i < A_DOUBLES; i++)
            sum += a[i];
        sink += sum;
        MONITOR_EXIT(r_sweep);
    }
}

static void work(void)
{
    volatile double *b = B;
    work_passes_over_a(passes);
    MONITOR_ENTER(r_fill);
    for (int i = 0; i < B_DOUBLES; i++)
        b[i] = (double)i;
    MONITOR_EXIT(r_fill);
}

static void fill(void)
{
    volatile double *b = B;
    MONITOR_ENTER(r_fill);
    for (int i = 0; i < B_DOUBLES; i++)
        b[i] = (double)i;
    MONITOR_EXIT(r_fill);
}

/* The overlap mode (see the top). */
static int overlap(void)
{
    if (MONITOR_DATA(A, sizeof A) != 0 ||
        Monitor_Register_Data("A_tail", (const char *)A + sizeof A / 2, sizeof A / 2, 0, __FILE__) != 0) {
        fprintf(stderr, "mri_cacheapp: data structure registration failed\n");
        return 1;
    }
    MONITOR_ENTER(r_main);
    work_passes_over_a(1);
    MONITOR_EXIT(r_main);
    return 0;
}

/* The realloc mode (see the top). 0, or 1 when a call of the data-structure
 * interface did not return what it must. */
static int reallocate(int rounds)
{
    MONITOR_ENTER(r_main);
    for (int r = 0; r < rounds; r++) {
        B = aligned_alloc(64, B_DOUBLES * sizeof(double));
        if (!B || MONITOR_DATA_PTR(B, B_DOUBLES * sizeof(double)) != 0)
            return 1;
        MONITOR_ENTER(r_fresh);
        MONITOR_EXIT(r_fresh);
        fill();
        /* Ended once; a second end finds nothing (with a tool attached). */
        if (Monitor_Unregister_Data(B) != 0 || (Monitor_Is_Attached() && Monitor_Unregister_Data(B) != -1))
            return 1;
        fill();
        free(B);
    }
    MONITOR_EXIT(r_main);
    return Monitor_Unregister_Data(NULL) == -1 ? 0 : 1;
}

/* n passes over A reading one double per line: every read misses L1,
 * which costs the simulator more than recording costs the program, so a
 * simulation thread is still busy when the program forks. */
static void sweeps(int n)
{
    const volatile double *a = A;
    double sum = 0.0;
    for (int p = 0; p < n; p++)
        for (int i = 0; i < A_DOUBLES; i += 8)
            sum += a[i];
    sink += sum;
}

/* The fork mode (see the top). 0, or 1 when a child hung or failed. */
static int forks(int rounds)
{
    if (MONITOR_DATA(A, sizeof A) != 0)
        return 1;
    MONITOR_ENTER(r_main);
    for (int r = 0; r < rounds; r++) {
        sweeps(160);
        const pid_t child = fork();
        if (child < 0)
            return 1;
        if (child == 0) {
            sweeps(160);
            _exit(0);
        }
        int status = 0;
        int waited_ms = 0;
        pid_t done;
        while ((done = waitpid(child, &status, WNOHANG)) == 0 && waited_ms < 20000) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            waited_ms++;
        }
        if (done == 0) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            fprintf(stderr, "mri_cacheapp: round %d: the forked child hung\n", r);
            return 1;
        }
        if (done != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    MONITOR_EXIT(r_main);
    return 0;
}

/* The names and late modes (see the top). */
static int read_a_once(int late, const char *name)
{
    if (!late && Monitor_Register_Data(name, A, sizeof A, 0, __FILE__) != 0)
        return 1;
    MONITOR_ENTER(r_main);
    if (late && MONITOR_DATA(A, sizeof A) != 0)
        return 1;
    MONITOR_ENTER(r_sweep);
    double sum = 0;
    for (int i = 0; i < A_DOUBLES; i++) sum += ((volatile double *)A)[i];
    MONITOR_EXIT(r_sweep);
    MONITOR_EXIT(r_main);
    sink += sum;
    return 0;
}

/* The straddle mode (see the top). */
static int straddle(void)
{
    B = aligned_alloc(64, B_DOUBLES * sizeof(double));
    if (!B || MONITOR_DATA_PTR(B, B_DOUBLES * sizeof(double)) != 0)
        return 1;
    memset(B, 0, B_DOUBLES * sizeof(double));
    const char *bytes = (const char *)B;
    unsigned long long sum = 0;
    MONITOR_ENTER(r_main);
    MONITOR_ENTER(r_straddle);
    for (int line = 0; line < B_DOUBLES / 8 - 1; line++) {
        unsigned long long v;
        memcpy(&v, bytes + 64 * line + 60, sizeof v);
        sum += v;
    }
    MONITOR_EXIT(r_straddle);
    MONITOR_EXIT(r_main);
    sink += (double)sum;
    free(B);
    return 0;
}

/* The vector mode (see the top): 32-byte loads of A. */
__attribute__((target("avx"))) static int vector(void)
{
    if (MONITOR_DATA(A, sizeof A) != 0)
        return 1;
    MONITOR_ENTER(r_main);
    MONITOR_ENTER(r_vector);
    __m256d sum = _mm256_setzero_pd();
    for (int i = 0; i < A_DOUBLES; i += 4)
        sum = _mm256_add_pd(sum, _mm256_load_pd(&A[i]));
    MONITOR_EXIT(r_vector);
    MONITOR_EXIT(r_main);
    double lanes[4];
    _mm256_storeu_pd(lanes, sum);
    sink += lanes[0] + lanes[1] + lanes[2] + lanes[3];
    return 0;
}

/* The park mode (see the top). */
static int worker_in; /* atomic: the worker is inside "worker" */
static double pad[2048];

/* A static timespec: no store the instrumentation would record. */
static void pause_1ms(void)
{
    static const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
}

/* This thread's CPU time, ns (returned: nothing recorded). */
static long thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int spin_ms;          /* read before the worker starts */
static struct timespec nap;  /* the same: the sleep before each slice of the spin (none: 0) */
static struct timespec rest; /* the same: the sleep after the spin (none: 0) */

static void *park_worker(void *arg)
{
    const char *path = (const char *)arg; /* in a register: the wait records nothing */
    const clock_t spin = (clock_t)spin_ms * (CLOCKS_PER_SEC / 1000); /* the same for the spin */
    const int sleeps = nap.tv_nsec != 0;                              /* and its sleeps */
    MONITOR_ENTER(r_worker);
    __atomic_store_n(&worker_in, 1, __ATOMIC_RELEASE);
    const volatile double *p = pad;
    double sum = 0.0;
    for (int i = 0; i < 2048; i++)
        sum += p[i];
    while (access(path, F_OK) != 0)
        pause_1ms();
    const volatile double *a = A;
    for (int i = 0; i < A_DOUBLES; i++)
        sum += a[i];
    unlink(path);
    const clock_t until = clock() + spin; /* clock() returns its value: nothing recorded */
    for (clock_t now = clock(); now < until; now = clock()) {
        if (!sleeps)
            continue;
        nanosleep(&nap, NULL); /* the kernel reads it: nothing recorded */
        const long slice = thread_cpu_ns() + 200000; /* this thread's: the end's looks take the process's CPU too */
        while (thread_cpu_ns() < slice) {
        }
    }
    if (rest.tv_sec != 0 || rest.tv_nsec != 0)
        nanosleep(&rest, NULL);
    MONITOR_ENTER(r_after);
    MONITOR_EXIT(r_after);
    MONITOR_EXIT(r_worker);
    return (void *)(long)(sum != 0.0);
}

static int park(const char *path)
{
    if (MONITOR_DATA(A, sizeof A) != 0)
        return 1;
    MONITOR_ENTER(r_main);
    pthread_t t;
    if (pthread_create(&t, NULL, park_worker, (void *)path) != 0)
        return 1;
    while (!__atomic_load_n(&worker_in, __ATOMIC_ACQUIRE))
        pause_1ms();
    MONITOR_ENTER(r_fresh);
    MONITOR_EXIT(r_fresh);
    if (pthread_join(t, NULL) != 0)
        return 1;
    MONITOR_EXIT(r_main);
    return 0;
}

/* The signals mode (see the top). */
#define S_DOUBLES 64 /* 512 bytes: 8 lines */
static double S[S_DOUBLES] __attribute__((aligned(64)));
static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
    (void)sig;
    const volatile double *s = S;
    double sum = 0.0;
    for (int i = 0; i < S_DOUBLES; i++)
        sum += s[i];
    handled = handled + (sum == 0.0); /* S is all zeros: one more run */
}

static int signals(int n, const char *path)
{
    if (MONITOR_DATA(A, sizeof A) != 0 || MONITOR_DATA(S, sizeof S) != 0)
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    static const struct itimerval every = {{0, 100}, {0, 100}}, off = {{0, 0}, {0, 0}};
    sigset_t alarm;
    sigemptyset(&alarm);
    sigaddset(&alarm, SIGALRM);
    if (sigaction(SIGALRM, &sa, NULL) != 0)
        return 1;
    MONITOR_ENTER(r_main);
    if (setitimer(ITIMER_REAL, &every, NULL) != 0)
        return 1;
    work_passes_over_a(n);
    /* A signal already pending is delivered as the calls return, still
     * inside main. */
    if (setitimer(ITIMER_REAL, &off, NULL) != 0 || sigprocmask(SIG_BLOCK, &alarm, NULL) != 0)
        return 1;
    MONITOR_EXIT(r_main);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%d\n", (int)handled) < 0 || fclose(f) != 0)
        return 1;
    return 0;
}

static void *brief_thread(void *arg)
{
    (void)arg;
    sink += ((const volatile int *)C)[0];
    return NULL;
}

/* The brief mode (see the top). */
static int brief(int threads, int n)
{
    if (MONITOR_DATA(A, sizeof A) != 0)
        return 1;
    MONITOR_ENTER(r_main);
    for (int t = 0; t < threads; t++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, brief_thread, NULL) != 0 || pthread_join(thread, NULL) != 0)
            return 1;
    }
    work_passes_over_a(n);
    MONITOR_EXIT(r_main);
    return 0;
}

static void *second_thread(void *arg)
{
    (void)arg;
    work();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "realloc") == 0) {
        const int rounds = atoi(argv[2]);
        if (rounds < 1) {
            fprintf(stderr, "%s: ROUNDS >= 1\n", argv[0]);
            return 2;
        }
        if (reallocate(rounds) != 0) {
            fprintf(stderr, "%s: a data-structure call returned the wrong result\n", argv[0]);
            return 1;
        }
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "init_exit") == 0) {
        if (MONITOR_DATA(A, sizeof A) != 0)
            return 1;
        Monitor_Init();
        exit(atoi(argv[2]));
    }
    if (argc == 3 && strcmp(argv[1], "fork") == 0) {
        const int rounds = atoi(argv[2]);
        if (rounds < 1) {
            fprintf(stderr, "%s: ROUNDS >= 1\n", argv[0]);
            return 2;
        }
        return forks(rounds);
    }
    if (argc >= 3 && argc <= 6 && strcmp(argv[1], "park") == 0) {
        spin_ms = argc >= 4 ? atoi(argv[3]) : 0;
        if (spin_ms < 0 || spin_ms > 10000) {
            fprintf(stderr, "%s: SPIN_MS from 0 to 10000\n", argv[0]);
            return 2;
        }
        const int sleep_us = argc >= 5 ? atoi(argv[4]) : 0;
        if (sleep_us < 0 || sleep_us > 999999) {
            fprintf(stderr, "%s: SLEEP_US from 0 to 999999\n", argv[0]);
            return 2;
        }
        nap.tv_nsec = 1000L * sleep_us;
        const int rest_ms = argc == 6 ? atoi(argv[5]) : 0;
        if (rest_ms < 0 || rest_ms > 10000) {
            fprintf(stderr, "%s: REST_MS from 0 to 10000\n", argv[0]);
            return 2;
        }
        rest.tv_sec = rest_ms / 1000;
        rest.tv_nsec = 1000000L * (rest_ms % 1000);
        return park(argv[2]);
    }
    if (argc == 4 && strcmp(argv[1], "signals") == 0) {
        const int n = atoi(argv[2]);
        if (n < 1) {
            fprintf(stderr, "%s: PASSES >= 1\n", argv[0]);
            return 2;
        }
        return signals(n, argv[3]);
    }
    if (argc == 4 && strcmp(argv[1], "brief") == 0) {
        const int threads = atoi(argv[2]), n = atoi(argv[3]);
        if (threads < 1 || threads > 1000 || n < 1) {
            fprintf(stderr, "%s: THREADS 1 to 1000, PASSES >= 1\n", argv[0]);
            return 2;
        }
        return brief(threads, n);
    }
    if (argc == 2 && strcmp(argv[1], "straddle") == 0)
        return straddle();
    if (argc == 2 && (strcmp(argv[1], "names") == 0 || strcmp(argv[1], "late") == 0))
        return read_a_once(strcmp(argv[1], "late") == 0, "A,\"1\"");
    if (argc == 3 && strcmp(argv[1], "names") == 0)
        return read_a_once(0, argv[2]);
    if (argc == 2 && strcmp(argv[1], "overlap") == 0)
        return overlap();
    if (argc == 2 && strcmp(argv[1], "vector") == 0) {
        if (!__builtin_cpu_supports("avx")) {
            fprintf(stderr, "%s: vector: this CPU has no AVX\n", argv[0]);
            return 2;
        }
        return vector();
    }
    if ((argc != 4 && argc != 5) || strcmp(argv[1], "sweep") != 0) {
        fprintf(stderr, "usage: %s sweep PASSES THREADS [STACK_KIB] | realloc ROUNDS | brief THREADS PASSES | fork ROUNDS | park PATH [SPIN_MS [SLEEP_US [REST_MS]]] | signals PASSES PATH | straddle | overlap | vector | names | late | init_exit CODE\n",
                argv[0]);
        return 2;
    }
    passes = atoi(argv[2]);
    const int threads = atoi(argv[3]);
    const int stack_kib = argc == 5 ? atoi(argv[4]) : 0;
    if (passes < 1 || threads < 1 || threads > 16 || (argc == 5 && (threads < 2 || stack_kib < 16))) {
        fprintf(stderr, "%s: PASSES >= 1, THREADS 1 to 16; STACK_KIB >= 16, with 2 threads or more\n", argv[0]);
        return 2;
    }
    B = aligned_alloc(64, B_DOUBLES * sizeof(double));
    if (!B)
        return 1;
    if (MONITOR_DATA(A, sizeof A) != 0 || MONITOR_DATA_PTR(B, B_DOUBLES * sizeof(double)) != 0 ||
        MONITOR_DATA_IN(r_main, C, sizeof C) != 0) {
        fprintf(stderr, "%s: data structure registration failed\n", argv[0]);
        return 1;
    }
    /* Refused: a zero size; with a tool attached also the same name in the
     * same unit again (without one nothing is recorded). */
    if (Monitor_Register_Data("empty", A, 0, NULL, __FILE__) != -1 ||
        (Monitor_Is_Attached() && MONITOR_DATA(A, sizeof A) != -1)) {
        fprintf(stderr, "%s: a bad registration was accepted\n", argv[0]);
        return 1;
    }

    MONITOR_ENTER(r_main);
    work();
    for (int k = 1; k < threads; k++) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        if (stack_kib && pthread_attr_setstacksize(&attr, (size_t)stack_kib * 1024) != 0)
            return 3;
        const int e = pthread_create(&t, &attr, second_thread, NULL);
        if (e != 0) {
            fprintf(stderr, "%s: cannot create a thread with a %d KiB stack: %s\n", argv[0], stack_kib, strerror(e));
            return 3;
        }
        if (pthread_join(t, NULL) != 0)
            return 1;
    }
    C[0] = (int)sink;
    MONITOR_EXIT(r_main);
    free(B);
    return 0;
}

/*
 * barrier_wait - what libmonitor adds to pthread_barrier_wait (it is
 * interposed: libmonitor/threads.cpp carries the overhead clock across
 * barriers). THREADS threads meet WAITS times at one barrier, with no work
 * between; the main thread times the waits (bench/run_barrier_wait.sh,
 * docs/PERFORMANCE.md "Barriers").
 *
 *   barrier_wait THREADS WAITS   THREADS 1 to 64, WAITS 1 to 100000000 (with 1
 *                                thread a wait returns at once: what the
 *                                interposition itself costs)
 *
 * Built as `barrier_wait` (linked with libmonitor, which interposes the
 * barrier) and `barrier_wait_plain` (without it: libc's barrier alone).
 * Prints "barrier_wait: threads=T waits=W ns_per_wait=<first to last wait,
 * per wait>". Linked with libmonitor, region "main" (PROGRAM) holds the
 * waits, so that a tool can attach and measure it (compensation_eval MO).
 */
#define _POSIX_C_SOURCE 200809L
#ifdef MRI_BARRIER_WITH_MONITOR
#include <mri_monitor.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef MRI_BARRIER_WITH_MONITOR
MONITOR_REGION(r_main, MRI_REGION_PROGRAM, "main");
#define ENTER_MAIN() MONITOR_ENTER(r_main)
#define EXIT_MAIN() MONITOR_EXIT(r_main)
#else
#define ENTER_MAIN()
#define EXIT_MAIN()
#endif

static pthread_barrier_t barrier;
static long waits;

static void *waiter(void *arg)
{
    (void)arg;
    for (long i = 0; i < waits; ++i) pthread_barrier_wait(&barrier);
    return NULL;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    ENTER_MAIN();
    const int threads = argc == 3 ? atoi(argv[1]) : 0;
    waits = argc == 3 ? atol(argv[2]) : 0;
    if (threads < 1 || threads > 64 || waits < 1 || waits > 100000000) {
        fprintf(stderr, "usage: barrier_wait THREADS WAITS (THREADS 1 to 64, WAITS 1 to 100000000)\n");
        return 2;
    }
    pthread_t tid[64];
    if (pthread_barrier_init(&barrier, NULL, (unsigned)threads) != 0) return 1;
    for (int t = 1; t < threads; ++t)
        if (pthread_create(&tid[t], NULL, waiter, NULL) != 0) return 1;
    pthread_barrier_wait(&barrier); /* everyone started */
    const double t0 = now_ns();
    for (long i = 1; i < waits; ++i) pthread_barrier_wait(&barrier);
    const double t1 = now_ns();
    for (int t = 1; t < threads; ++t) pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&barrier);
    EXIT_MAIN();
    printf("barrier_wait: threads=%d waits=%ld ns_per_wait=%.1f\n", threads, waits,
           waits > 1 ? (t1 - t0) / (double)(waits - 1) : 0.0);
    return 0;
}

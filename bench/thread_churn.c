/*
 * thread_churn - a program that creates many short threads, one after
 * another, for what a thread costs under the cache-simulator backend
 * (bench/run_thread_churn.sh, docs/PERFORMANCE.md "Short threads under the
 * simulator"). Built as `thread_churn` (normal build) and
 * `thread_churn_cachesim` (every load and store instrumented).
 *
 *   thread_churn THREADS REFS   THREADS threads (1 to 1000000), each created
 *                               and joined before the next; each reads REFS
 *                               doubles (0 to 8192) of the array A
 *
 * Prints "thread_churn: threads=T refs=R us_per_thread=<create to join,
 * per thread> cpu_us_per_thread=<the process's CPU time over the same
 * span, every thread's, per thread> checksum=<sum read>": the cache
 * simulator's own thread works alongside. Data structure A (64 KiB) is registered;
 * the threads run inside region "main" (PROGRAM), without regions of their
 * own: what a thread adds is its start, its references and its end.
 */
#define _POSIX_C_SOURCE 200809L
#include <mri_monitor.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define A_DOUBLES 8192

static double A[A_DOUBLES] __attribute__((aligned(64)));
static int refs;

static void *reader(void *arg)
{
    const volatile double *a = A;
    double sum = 0.0;
    for (int i = 0; i < refs; i++)
        sum += a[i];
    *(double *)arg = sum;
    return NULL;
}

static double clock_us(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A decimal count from lo to hi, or -1. */
static long count(const char *s, long lo, long hi)
{
    char *end;
    const long v = strtol(s, &end, 10);
    return *s && !*end && v >= lo && v <= hi ? v : -1;
}

int main(int argc, char **argv)
{
    MONITOR_REGION(r_main, MRI_REGION_PROGRAM, "main");
    const long threads = argc == 3 ? count(argv[1], 1, 1000000) : -1;
    refs = argc == 3 ? (int)count(argv[2], 0, A_DOUBLES) : -1;
    if (threads < 0 || refs < 0) {
        fprintf(stderr, "usage: %s THREADS REFS   (THREADS 1 to 1000000, REFS 0 to %d)\n", argv[0], A_DOUBLES);
        return 2;
    }
    for (int i = 0; i < A_DOUBLES; i++)
        A[i] = i & 7;
    if (MONITOR_DATA(A, sizeof A) != 0) {
        fprintf(stderr, "%s: data structure registration failed\n", argv[0]);
        return 1;
    }
    double checksum = 0.0;
    MONITOR_ENTER(r_main);
    const double t0 = clock_us(CLOCK_MONOTONIC), cpu0 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
    for (long t = 0; t < threads; t++) {
        pthread_t id;
        double sum = 0.0;
        const int e = pthread_create(&id, NULL, reader, &sum);
        if (e != 0) {
            fprintf(stderr, "%s: thread %ld of %ld not created: %s\n", argv[0], t + 1, threads, strerror(e));
            return 1;
        }
        pthread_join(id, NULL);
        checksum += sum;
    }
    const double t1 = clock_us(CLOCK_MONOTONIC), cpu1 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
    MONITOR_EXIT(r_main);
    printf("thread_churn: threads=%ld refs=%d us_per_thread=%.3f cpu_us_per_thread=%.3f checksum=%.0f\n", threads,
           refs, (t1 - t0) / (double)threads, (cpu1 - cpu0) / (double)threads, checksum);
    return 0;
}

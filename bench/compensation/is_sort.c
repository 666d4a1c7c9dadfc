/*
 * is_sort - an integer sort in the manner of the NAS IS kernel, with tiny
 * helper routines: every key is made by four calls of a linear congruential
 * generator and ranked through a bucket function, each an annotated routine
 * of a few nanoseconds. Measuring every routine dilates the run several
 * times over: the hard case for overhead compensation.
 *
 *   is_sort [-t THREADS] [-n KEYS] [-i ITERATIONS] [-r ROUNDS] [-T FILE]
 *
 * Each thread sorts its own KEYS keys ITERATIONS times (default 1 thread,
 * 400000 keys, 4 iterations); region "main" covers the whole program. With
 * ROUNDS (default 1) the whole work is done that many times, each a region
 * "round" (compensation_eval PAIRED); the threads are started once and kept
 * for every round (crew.h). -T FILE: each round's time of each thread's
 * part, a line a round (crew.h).
 */
#include <mri_monitor.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "crew.h"

MONITOR_REGION(r_main, MRI_REGION_PROGRAM, "main");
MONITOR_REGION(r_round, MRI_REGION_LOOP, "round");
MONITOR_REGION(r_rand, MRI_REGION_ROUTINE, "randlc");
MONITOR_REGION(r_key, MRI_REGION_ROUTINE, "make_key");
MONITOR_REGION(r_bucket, MRI_REGION_ROUTINE, "bucket_of");
MONITOR_REGION(r_rank, MRI_REGION_ROUTINE, "rank");
MONITOR_REGION(r_verify, MRI_REGION_ROUTINE, "verify");
MONITOR_REGION(r_part, MRI_REGION_ROUTINE, "sort_part");

enum { kMaxKey = 1 << 19, kBuckets = 1 << 10 };

__attribute__((noinline)) static double randlc(unsigned long long *seed)
{
    MONITOR_ENTER(r_rand);
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    const double r = (double)(*seed >> 11) * (1.0 / 9007199254740992.0);
    MONITOR_EXIT(r_rand);
    return r;
}

__attribute__((noinline)) static int make_key(unsigned long long *seed)
{
    MONITOR_ENTER(r_key);
    double x = 0;
    for (int k = 0; k < 4; ++k) x += randlc(seed); /* as IS: the mean of four */
    const int key = (int)(x * 0.25 * kMaxKey);
    MONITOR_EXIT(r_key);
    return key;
}

__attribute__((noinline)) static int bucket_of(int key)
{
    MONITOR_ENTER(r_bucket);
    const int b = key >> 9; /* kMaxKey / kBuckets keys per bucket */
    MONITOR_EXIT(r_bucket);
    return b;
}

/* Counting sort of keys into sorted, through the buckets. */
__attribute__((noinline)) static void rank(const int *keys, int *sorted, int n, int *bucket_start)
{
    MONITOR_ENTER(r_rank);
    for (int b = 0; b <= kBuckets; ++b) bucket_start[b] = 0;
    for (int i = 0; i < n; ++i) bucket_start[bucket_of(keys[i]) + 1] += 1;
    for (int b = 0; b < kBuckets; ++b) bucket_start[b + 1] += bucket_start[b];
    for (int i = 0; i < n; ++i) sorted[bucket_start[bucket_of(keys[i])]++] = keys[i];
    /* Within a bucket: insertion sort (buckets are small). */
    for (int i = 1; i < n; ++i) {
        const int v = sorted[i];
        int j = i - 1;
        while (j >= 0 && sorted[j] > v) {
            sorted[j + 1] = sorted[j];
            --j;
        }
        sorted[j + 1] = v;
    }
    MONITOR_EXIT(r_rank);
}

__attribute__((noinline)) static int verify(const int *sorted, int n)
{
    MONITOR_ENTER(r_verify);
    int bad = 0;
    for (int i = 1; i < n; ++i) bad += sorted[i - 1] > sorted[i];
    MONITOR_EXIT(r_verify);
    return bad;
}

struct part {
    int n, iterations, index, bad;
};

static void *sort_part(void *p)
{
    struct part *a = p;
    MONITOR_ENTER(r_part);
    int *keys = malloc(sizeof(int) * (size_t)a->n), *sorted = malloc(sizeof(int) * (size_t)a->n);
    int *bucket_start = malloc(sizeof(int) * (kBuckets + 1));
    if (!keys || !sorted || !bucket_start) {
        fprintf(stderr, "is_sort: out of memory\n");
        exit(1);
    }
    unsigned long long seed = 314159265ull + (unsigned long long)a->index;
    for (int it = 0; it < a->iterations; ++it) {
        for (int i = 0; i < a->n; ++i) keys[i] = make_key(&seed);
        rank(keys, sorted, a->n, bucket_start);
        a->bad += verify(sorted, a->n);
    }
    free(keys);
    free(sorted);
    free(bucket_start);
    MONITOR_EXIT(r_part);
    return NULL;
}

int main(int argc, char **argv)
{
    MONITOR_ENTER(r_main);
    int threads = 1, n = 400000, iterations = 4, rounds = 1, opt;
    const char *times = NULL;
    while ((opt = getopt(argc, argv, "t:n:i:r:T:")) != -1) {
        if (opt == 't') threads = atoi(optarg);
        else if (opt == 'n') n = atoi(optarg);
        else if (opt == 'i') iterations = atoi(optarg);
        else if (opt == 'r') rounds = atoi(optarg);
        else if (opt == 'T') times = optarg;
        else {
            fprintf(stderr, "usage: is_sort [-t THREADS] [-n KEYS] [-i ITERATIONS] [-r ROUNDS] [-T FILE]\n");
            return 2;
        }
    }
    if (threads < 1 || threads > 64 || n < 1 || iterations < 1 || rounds < 1) {
        fprintf(stderr, "is_sort: need 1..64 threads, KEYS >= 1, ITERATIONS >= 1, ROUNDS >= 1\n");
        return 2;
    }
    struct part parts[crew_max_threads];
    struct crew crew;
    crew_start(&crew, threads, rounds, sort_part, parts, sizeof parts[0]);
    crew_times_to(&crew, times);
    int bad = 0;
    for (int r = 0; r < rounds; ++r) {
        MONITOR_ENTER(r_round);
        for (int t = 0; t < threads; ++t) parts[t] = (struct part){n, iterations, t, 0};
        crew_round(&crew);
        for (int t = 0; t < threads; ++t) bad += parts[t].bad;
        MONITOR_EXIT(r_round);
        crew_write_times(&crew, r);
    }
    crew_finish(&crew);
    MONITOR_EXIT(r_main);
    if (bad) {
        fprintf(stderr, "is_sort: %d keys out of order\n", bad);
        return 1;
    }
    return 0;
}

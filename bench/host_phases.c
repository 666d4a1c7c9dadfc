/*
 * host_phases - what kind of code a host's slow and fast phases slow down
 * (docs/ACCURACY.md, "What the host's phases slow down").
 *
 *   host_phases [ITERATIONS [BLOCK]]
 *
 * Runs four kernels one after the other, ITERATIONS times (default 4000,
 * about two minutes), and prints, for every BLOCK iterations (default
 * 250), the median time of each in microseconds:
 *
 *   chain   300000 dependent multiply-adds: bound by the multiplier's
 *           latency, not by how many instructions the core can issue
 *   sort    qsort() of 200000 integers: branches, calls, loads and stores
 *   random  800000 loads at random from 8 MiB
 *   l1      2 million read-modify-writes within 4 KiB (level 1 cache)
 *
 * A phase that changes `chain` as much as the others is the core's clock;
 * one that changes the others and leaves `chain` alone is a competitor for
 * the core's issue slots and caches (another guest on the sibling hardware
 * thread), which an enter/exit pair of the monitor feels and a latency-
 * bound program does not. No MRI code is involved.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { KERNELS = 4, SORT_N = 200000, TABLE = 1 << 21, L1_N = 1024 };
static const char *const kernel_name[KERNELS] = {"chain", "sort", "random", "l1"};

static volatile uint64_t sink;
static int *keys, *table, *l1;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void chain(void)
{
    uint64_t x = 1;
    for (int i = 0; i < 300000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static int compare(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void sort(void)
{
    uint32_t s = 12345;
    for (int i = 0; i < SORT_N; ++i) {
        s = s * 1103515245u + 12345u;
        keys[i] = (int)(s >> 8);
    }
    qsort(keys, SORT_N, sizeof *keys, compare);
}

static void random_loads(void)
{
    uint64_t acc = 0;
    for (int k = 0; k < 4; ++k)
        for (int i = 0; i < SORT_N; ++i) acc += (uint64_t)table[keys[i] & (TABLE - 1)];
    sink = acc;
}

static void l1_updates(void)
{
    for (int k = 0; k < 2000; ++k)
        for (int i = 0; i < L1_N; ++i) l1[i] += i ^ k;
    sink = (uint64_t)l1[5];
}

static void (*const kernel[KERNELS])(void) = {chain, sort, random_loads, l1_updates};

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int count(const char *text, const char *what)
{
    char *end;
    const long v = strtol(text, &end, 10);
    if (*end || v < 1 || v > 10000000) {
        fprintf(stderr, "host_phases: %s must be a whole number from 1 to 10000000, not '%s'\n", what, text);
        exit(2);
    }
    return (int)v;
}

int main(int argc, char **argv)
{
    if (argc > 3 || (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
        fprintf(stderr, "usage: host_phases [ITERATIONS [BLOCK]]\n");
        return argc > 3 ? 2 : 0;
    }
    const int iterations = argc > 1 ? count(argv[1], "ITERATIONS") : 4000;
    const int block = argc > 2 ? count(argv[2], "BLOCK") : 250;
    keys = malloc(SORT_N * sizeof *keys);
    table = calloc(TABLE, sizeof *table);
    l1 = calloc(L1_N, sizeof *l1);
    double *times[KERNELS];
    for (int k = 0; k < KERNELS; ++k) times[k] = malloc((size_t)block * sizeof **times);
    if (!keys || !table || !l1 || !times[KERNELS - 1]) {
        fprintf(stderr, "host_phases: out of memory\n");
        return 1;
    }
    printf("%10s", "iterations");
    for (int k = 0; k < KERNELS; ++k) printf(" %10s", kernel_name[k]);
    printf("   (median us per block)\n");
    for (int first = 0; first < iterations; first += block) {
        const int n = iterations - first < block ? iterations - first : block;
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < KERNELS; ++k) {
                const double t0 = now_us();
                kernel[k]();
                times[k][i] = now_us() - t0;
            }
        printf("%10d", first + n);
        for (int k = 0; k < KERNELS; ++k) printf(" %10.1f", median(times[k], n));
        printf("\n");
        fflush(stdout);
    }
    return 0;
}

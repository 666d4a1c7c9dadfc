/*
 * jacobi - a loop-heavy numerical kernel: Jacobi sweeps of the 2-D Laplace
 * equation. Its routines run for tens of microseconds each, so measuring
 * every one of them dilates the run very little: the easy case for
 * overhead compensation (and the check that it does no harm).
 *
 *   jacobi [-t THREADS] [-n N] [-s SWEEPS] [-r ROUNDS] [-T FILE]
 *
 * Each thread relaxes its own N x N grid SWEEPS times (default 1 thread,
 * N = 256, 2000 sweeps); region "main" covers the whole program. With
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
MONITOR_REGION(r_row, MRI_REGION_ROUTINE, "relax_row");
MONITOR_REGION(r_sweep, MRI_REGION_ROUTINE, "sweep");
MONITOR_REGION(r_norm, MRI_REGION_ROUTINE, "residual");
MONITOR_REGION(r_part, MRI_REGION_ROUTINE, "relax_part");

__attribute__((noinline)) static void relax_row(const double *up, const double *row, const double *down, double *out,
                                                int n)
{
    MONITOR_ENTER(r_row);
    for (int j = 1; j < n - 1; ++j) out[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
    MONITOR_EXIT(r_row);
}

__attribute__((noinline)) static void sweep(const double *u, double *v, int n)
{
    MONITOR_ENTER(r_sweep);
    for (int i = 1; i < n - 1; ++i)
        relax_row(u + (size_t)(i - 1) * n, u + (size_t)i * n, u + (size_t)(i + 1) * n, v + (size_t)i * n, n);
    MONITOR_EXIT(r_sweep);
}

__attribute__((noinline)) static double residual(const double *u, const double *v, int n)
{
    MONITOR_ENTER(r_norm);
    double r = 0;
    for (size_t k = 0; k < (size_t)n * n; ++k) r += (u[k] - v[k]) * (u[k] - v[k]);
    MONITOR_EXIT(r_norm);
    return r;
}

struct part {
    int n, sweeps;
    double last;
};

static void *relax_part(void *p)
{
    struct part *a = p;
    MONITOR_ENTER(r_part);
    const int n = a->n;
    double *u = calloc((size_t)n * n, sizeof(double)), *v = calloc((size_t)n * n, sizeof(double));
    if (!u || !v) {
        fprintf(stderr, "jacobi: out of memory\n");
        exit(1);
    }
    for (int j = 0; j < n; ++j) u[j] = v[j] = 1.0; /* a hot edge */
    for (int s = 0; s < a->sweeps; ++s) {
        sweep(u, v, n);
        if (s % 10 == 9) a->last = residual(u, v, n);
        double *t = u;
        u = v;
        v = t;
    }
    free(u);
    free(v);
    MONITOR_EXIT(r_part);
    return NULL;
}

int main(int argc, char **argv)
{
    MONITOR_ENTER(r_main);
    int threads = 1, n = 256, sweeps = 2000, rounds = 1, opt;
    const char *times = NULL;
    while ((opt = getopt(argc, argv, "t:n:s:r:T:")) != -1) {
        if (opt == 't') threads = atoi(optarg);
        else if (opt == 'n') n = atoi(optarg);
        else if (opt == 's') sweeps = atoi(optarg);
        else if (opt == 'r') rounds = atoi(optarg);
        else if (opt == 'T') times = optarg;
        else {
            fprintf(stderr, "usage: jacobi [-t THREADS] [-n N] [-s SWEEPS] [-r ROUNDS] [-T FILE]\n");
            return 2;
        }
    }
    if (threads < 1 || threads > 64 || n < 3 || sweeps < 1 || rounds < 1) {
        fprintf(stderr, "jacobi: need 1..64 threads, N >= 3, SWEEPS >= 1, ROUNDS >= 1\n");
        return 2;
    }
    struct part parts[crew_max_threads];
    struct crew crew;
    crew_start(&crew, threads, rounds, relax_part, parts, sizeof parts[0]);
    crew_times_to(&crew, times);
    int ok = 1;
    for (int r = 0; r < rounds; ++r) {
        MONITOR_ENTER(r_round);
        for (int t = 0; t < threads; ++t) parts[t] = (struct part){n, sweeps, 0.0};
        crew_round(&crew);
        ok &= parts[0].last >= 0;
        MONITOR_EXIT(r_round);
        crew_write_times(&crew, r);
    }
    crew_finish(&crew);
    MONITOR_EXIT(r_main);
    return ok ? 0 : 1;
}

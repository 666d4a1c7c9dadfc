/*
 * matmul - a 256 x 256 double matrix multiply that times itself, for the
 * slowdown of the cache-simulator backend (bench/run_cachesim_slowdown.sh,
 * docs/PERFORMANCE.md). Built twice: `matmul` (normal build) and
 * `matmul_cachesim` (every load and store instrumented).
 *
 *   matmul [ijk|ikj] [N]     loop order (default ijk: C[i][j] += A[i][k] * B[k][j]
 *                            with k innermost) and order N (default 256, <= 1024)
 *
 * Prints "matmul: order=ijk n=256 ms=<multiply time> cpu_ms=<CPU time>
 * checksum=<sum of C>": cpu_ms is the CPU time of the whole process over
 * the same span, every thread's (the cache simulator's own thread works
 * alongside the program's, and the exit of "multiply" waits until it has
 * simulated every reference of it).
 * Data structures A, B, C are registered; region "multiply" (ROUTINE) is
 * the timed part, inside "main" (PROGRAM).
 */
#define _POSIX_C_SOURCE 200809L
#include <mri_monitor.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_N 1024

static double A[MAX_N * MAX_N], B[MAX_N * MAX_N], C[MAX_N * MAX_N];

static double clock_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    MONITOR_REGION(r_main, MRI_REGION_PROGRAM, "main");
    MONITOR_REGION(r_multiply, MRI_REGION_ROUTINE, "multiply");
    const int ikj = argc > 1 && strcmp(argv[1], "ikj") == 0;
    if (argc > 1 && !ikj && strcmp(argv[1], "ijk") != 0) {
        fprintf(stderr, "usage: %s [ijk|ikj] [N]\n", argv[0]);
        return 2;
    }
    const int n = argc > 2 ? atoi(argv[2]) : 256;
    if (n < 1 || n > MAX_N) {
        fprintf(stderr, "%s: N must be 1..%d\n", argv[0], MAX_N);
        return 2;
    }
    const size_t bytes = (size_t)n * n * sizeof(double);
    MONITOR_DATA(A, bytes);
    MONITOR_DATA(B, bytes);
    MONITOR_DATA(C, bytes);
    MONITOR_ENTER(r_main);
    for (int i = 0; i < n * n; i++) {
        A[i] = (double)(i % 7) - 3.0;
        B[i] = (double)(i % 5) - 2.0;
        C[i] = 0.0;
    }
    const double t0 = clock_ms(CLOCK_MONOTONIC), cpu0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
    MONITOR_ENTER(r_multiply);
    if (ikj) {
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++) {
                const double a = A[(size_t)i * n + k];
                for (int j = 0; j < n; j++)
                    C[(size_t)i * n + j] += a * B[(size_t)k * n + j];
            }
    } else {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double sum = 0.0;
                for (int k = 0; k < n; k++)
                    sum += A[(size_t)i * n + k] * B[(size_t)k * n + j];
                C[(size_t)i * n + j] = sum;
            }
    }
    MONITOR_EXIT(r_multiply);
    const double ms = clock_ms(CLOCK_MONOTONIC) - t0, cpu_ms = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    double checksum = 0.0;
    for (int i = 0; i < n * n; i++)
        checksum += C[i];
    printf("matmul: order=%s n=%d ms=%.3f cpu_ms=%.3f checksum=%.6g\n", ikj ? "ikj" : "ijk", n, ms, cpu_ms,
           checksum);
    MONITOR_EXIT(r_main);
    return 0;
}

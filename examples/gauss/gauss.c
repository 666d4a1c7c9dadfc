/*
 * gauss.c - Gaussian elimination without pivoting of a dense N x N system
 * Ax = b, the running example of the MRI paper (its Figure 2 shows the L1
 * read misses over the 100 x 100 matrix A).
 *
 * Usage: gauss [-n N] [-r R] [-h]
 *   -n N  matrix order, 2..2000 (default 100)
 *   -r R  solve the system R times (default 1)
 *
 * Prints "gauss: n=N repeats=R residual=..." and exits 0 when the residual
 * max|Ax - b| is below 1e-6, 1 otherwise, 2 on a bad command line.
 *
 * Data structures (MONITOR_DATA, file scope): A (the n x n block in use),
 * b and x.
 *
 * Monitored regions:
 *   main               PROGRAM   the whole run
 *   init_matrix        ROUTINE   fills A and b
 *   eliminate          ROUTINE   forward elimination
 *   elimination_step   LOOP      one instance per pivot k
 *   row_update         LOOP      one instance per row i updated in a step
 *   back_substitution  ROUTINE   solves the triangular system
 *   check_solution     ROUTINE   residual of the original system
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mri_monitor.h>

#define DEFAULT_N 100
#define MAX_N 2000
#define MAX_REPEATS 1000000

/*
 * The system lives in global arrays so that A is one named object in the
 * executable's symbol table: that is how a tool maps miss addresses back to
 * a data structure. A is stored row-major with stride n (not MAX_N), so the
 * part in use is one contiguous block at the start of the array.
 */
double A[MAX_N * MAX_N];
double b[MAX_N];
double x[MAX_N];

/*
 * Off-diagonal entries in [-1, 1) from an integer hash of (i, j): the
 * matrix is deterministic without any random-number state, and
 * check_solution() can recompute the original entries after elimination
 * has overwritten A.
 */
static double off_diagonal(int i, int j)
{
    uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)j * 2246822519u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    h *= 3266489917u;
    h ^= h >> 16;
    return (double)(h & 0xffffu) / 32768.0 - 1.0;
}

/*
 * The diagonal outweighs the sum of the n - 1 off-diagonal magnitudes of
 * its row, so elimination without pivoting never meets a small pivot.
 */
static double a_entry(int i, int j, int n)
{
    return i == j ? 2.0 * n : off_diagonal(i, j);
}

static double b_entry(int i)
{
    return 1.0 + (double)(i % 10);
}

static void init_matrix(int n)
{
    MONITOR_REGION(region, MRI_REGION_ROUTINE, "init_matrix");
    MONITOR_ENTER(region);

    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            A[(size_t)i * n + j] = a_entry(i, j, n);
        b[i] = b_entry(i);
        x[i] = 0.0;
    }

    MONITOR_EXIT(region);
}

static void eliminate(int n)
{
    MONITOR_REGION(region, MRI_REGION_ROUTINE, "eliminate");
    MONITOR_ENTER(region);

    MONITOR_REGION(step_region, MRI_REGION_LOOP, "elimination_step");
    for (int k = 0; k < n - 1; k++) {
        MONITOR_ENTER(step_region);

        const double *pivot_row = &A[(size_t)k * n];
        const double pivot = pivot_row[k];

        MONITOR_REGION(row_region, MRI_REGION_LOOP, "row_update");
        for (int i = k + 1; i < n; i++) {
            MONITOR_ENTER(row_region);

            double *row = &A[(size_t)i * n];
            const double factor = row[k] / pivot;
            /* Column k below the pivot is never read again; leave it. */
            for (int j = k + 1; j < n; j++)
                row[j] -= factor * pivot_row[j];
            b[i] -= factor * b[k];

            MONITOR_EXIT(row_region);
        }

        MONITOR_EXIT(step_region);
    }

    MONITOR_EXIT(region);
}

static void back_substitution(int n)
{
    MONITOR_REGION(region, MRI_REGION_ROUTINE, "back_substitution");
    MONITOR_ENTER(region);

    for (int i = n - 1; i >= 0; i--) {
        const double *row = &A[(size_t)i * n];
        double sum = b[i];
        for (int j = i + 1; j < n; j++)
            sum -= row[j] * x[j];
        x[i] = sum / row[i];
    }

    MONITOR_EXIT(region);
}

/* Returns max|Ax - b| against the original A and b, which elimination has
 * overwritten, so their entries are recomputed. */
static double check_solution(int n, int repeats)
{
    MONITOR_REGION(region, MRI_REGION_ROUTINE, "check_solution");
    MONITOR_ENTER(region);

    double residual = 0.0;
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int j = 0; j < n; j++)
            sum += a_entry(i, j, n) * x[j];
        const double r = fabs(sum - b_entry(i));
        /* Written so that a NaN residual is kept, not skipped. */
        if (!(r <= residual))
            residual = r;
    }
    printf("gauss: n=%d repeats=%d residual=%.3g\n", n, repeats, residual);

    MONITOR_EXIT(region);
    return residual;
}

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s [-n N] [-r R] [-h]\n"
            "  -n N  matrix order, 2..%d (default %d)\n"
            "  -r R  repeat the whole solve R times, 1..%d (default 1)\n"
            "  -h    print this help and exit\n",
            prog, MAX_N, DEFAULT_N, MAX_REPEATS);
}

/* Strict decimal parse: the whole argument must be an integer in [lo, hi]. */
static int parse_int(const char *text, int lo, int hi, int *value)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
        return -1;
    *value = (int)v;
    return 0;
}

enum { OPTIONS_OK = -1 };

/* Returns OPTIONS_OK, or the exit status when the program should stop. */
static int parse_options(int argc, char **argv, int *n, int *repeats)
{
    const char *prog = argc > 0 ? argv[0] : "gauss";
    int c;

    while ((c = getopt(argc, argv, ":n:r:h")) != -1) {
        switch (c) {
        case 'n':
            if (parse_int(optarg, 2, MAX_N, n) != 0) {
                fprintf(stderr, "%s: -n: '%s' is not a matrix order in 2..%d\n", prog, optarg,
                        MAX_N);
                usage(stderr, prog);
                return 2;
            }
            break;
        case 'r':
            if (parse_int(optarg, 1, MAX_REPEATS, repeats) != 0) {
                fprintf(stderr, "%s: -r: '%s' is not a repeat count in 1..%d\n", prog, optarg,
                        MAX_REPEATS);
                usage(stderr, prog);
                return 2;
            }
            break;
        case 'h':
            usage(stdout, prog);
            return 0;
        case ':':
            fprintf(stderr, "%s: option -%c needs an argument\n", prog, optopt);
            usage(stderr, prog);
            return 2;
        default:
            fprintf(stderr, "%s: unknown option -%c\n", prog, optopt);
            usage(stderr, prog);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        usage(stderr, prog);
        return 2;
    }
    return OPTIONS_OK;
}

int main(int argc, char **argv)
{
    MONITOR_REGION(main_region, MRI_REGION_PROGRAM, "main");

    int n = DEFAULT_N;
    int repeats = 1;
    int status = parse_options(argc, argv, &n, &repeats);
    if (status != OPTIONS_OK)
        return status;

    /* The data structures, registered before the first monitored event so
     * that a tool sees them at load time: the n x n block of A in use (not
     * the whole MAX_N x MAX_N array), b and x. */
    MONITOR_DATA(A, (size_t)n * n * sizeof A[0]);
    MONITOR_DATA(b, (size_t)n * sizeof b[0]);
    MONITOR_DATA(x, (size_t)n * sizeof x[0]);

    MONITOR_ENTER(main_region);
    {
        /* Every repeat starts again from the original system, because
         * elimination works in place. */
        for (int r = 0; r < repeats; r++) {
            init_matrix(n);
            eliminate(n);
            back_substitution(n);
        }
        status = check_solution(n, repeats) < 1e-6 ? 0 : 1;
    }

    /* Single exit point, so that the program region is always left. */
    MONITOR_EXIT(main_region);
    return status;
}

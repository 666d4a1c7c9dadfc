/*
 * stencil.c - iterative 2-D Jacobi relaxation with a 5-point stencil,
 * parallelised with OpenMP: heat spreading from one hot edge of a square
 * plate whose other edges are held at zero.
 *
 * Usage: stencil [-n N] [-t T] [-s MS] [-h]
 *   -n N   interior grid points per side (default 256)
 *   -t T   time steps (default 50)
 *   -s MS  extra sleep per time step in milliseconds, in the serial part
 *          (default 0); slows the run down so a tool can watch it
 * The number of threads is taken from OMP_NUM_THREADS.
 *
 * Prints "stencil: n=N steps=T threads=P checksum=..." and exits 0; 2 on a
 * bad command line.
 *
 * Monitored regions:
 *   main         PROGRAM        the whole run
 *   time_step    LOOP           one instance per time step (serial code,
 *                               encloses the parallel sweep); the natural
 *                               breakpoint for a tool
 *   sweep        PARALLEL       the parallel region, entered by every thread
 *   update_rows  PARALLEL_LOOP  the work-shared loop over rows, every thread
 *   residual     ROUTINE        serial max-change computation, once per step
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <mri_monitor.h>

#define DEFAULT_N 256
#define DEFAULT_STEPS 50
#define MAX_N 4096
#define MAX_STEPS 1000000
#define MAX_SLEEP_MS 60000

/* Grids carry a one-point boundary frame: (n + 2) x (n + 2), row-major. */
static size_t stride_of(int n)
{
    return (size_t)n + 2;
}

static double *grid_new(int n)
{
    const size_t stride = stride_of(n);
    double *g = calloc(stride * stride, sizeof *g);
    if (g == NULL)
        return NULL;
    /* The sweep never writes the frame, so both grids need the boundary
     * values, not just the initial one. */
    for (size_t j = 0; j < stride; j++)
        g[j] = 1.0;
    return g;
}

/* One Jacobi sweep from src into dst. Stores the team size in *threads so
 * that the report shows what OpenMP actually used. */
static void sweep(const double *src, double *dst, int n, int *threads)
{
    const size_t stride = stride_of(n);

#pragma omp parallel default(none) shared(src, dst, n, stride, threads)
    {
        MONITOR_REGION(sweep_region, MRI_REGION_PARALLEL, "sweep");
        MONITOR_ENTER(sweep_region);

        if (omp_get_thread_num() == 0)
            *threads = omp_get_num_threads();

        MONITOR_REGION(rows_region, MRI_REGION_PARALLEL_LOOP, "update_rows");
        MONITOR_ENTER(rows_region);
#pragma omp for schedule(static)
        for (int i = 1; i <= n; i++) {
            const double *up = &src[(size_t)(i - 1) * stride];
            const double *mid = &src[(size_t)i * stride];
            const double *down = &src[(size_t)(i + 1) * stride];
            double *out = &dst[(size_t)i * stride];
            for (int j = 1; j <= n; j++)
                out[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
        }
        /* The implicit barrier of the loop is inside the region, so its
         * time shows up as load imbalance of update_rows. */
        MONITOR_EXIT(rows_region);

        MONITOR_EXIT(sweep_region);
    }
}

/*
 * Largest change of any point in this step. Deliberately serial: it is the
 * kind of sequential fraction between parallel regions that a tool should
 * be able to see.
 */
static double residual(const double *before, const double *after, int n)
{
    MONITOR_REGION(region, MRI_REGION_ROUTINE, "residual");
    MONITOR_ENTER(region);

    const size_t stride = stride_of(n);
    double max_change = 0.0;
    for (int i = 1; i <= n; i++) {
        const double *a = &before[(size_t)i * stride];
        const double *b = &after[(size_t)i * stride];
        for (int j = 1; j <= n; j++) {
            const double d = fabs(b[j] - a[j]);
            /* Written so that a NaN is kept, not skipped. */
            if (!(d <= max_change))
                max_change = d;
        }
    }

    MONITOR_EXIT(region);
    return max_change;
}

/* Summed in a fixed order, so the checksum does not depend on the number
 * of threads. */
static double checksum(const double *g, int n)
{
    const size_t stride = stride_of(n);
    double sum = 0.0;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++)
            sum += g[(size_t)i * stride + j];
    return sum;
}

static void sleep_ms(int ms)
{
    struct timespec left = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s [-n N] [-t T] [-s MS] [-h]\n"
            "  -n N   interior grid points per side, 1..%d (default %d)\n"
            "  -t T   time steps, 1..%d (default %d)\n"
            "  -s MS  extra sleep per time step in milliseconds, 0..%d (default 0)\n"
            "  -h     print this help and exit\n"
            "The number of threads comes from OMP_NUM_THREADS.\n",
            prog, MAX_N, DEFAULT_N, MAX_STEPS, DEFAULT_STEPS, MAX_SLEEP_MS);
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

struct options {
    int n;
    int steps;
    int sleep_ms;
};

enum { OPTIONS_OK = -1 };

/* Returns OPTIONS_OK, or the exit status when the program should stop. */
static int parse_options(int argc, char **argv, struct options *opt)
{
    const char *prog = argc > 0 ? argv[0] : "stencil";
    int c;

    while ((c = getopt(argc, argv, ":n:t:s:h")) != -1) {
        switch (c) {
        case 'n':
            if (parse_int(optarg, 1, MAX_N, &opt->n) != 0) {
                fprintf(stderr, "%s: -n: '%s' is not a grid size in 1..%d\n", prog, optarg, MAX_N);
                usage(stderr, prog);
                return 2;
            }
            break;
        case 't':
            if (parse_int(optarg, 1, MAX_STEPS, &opt->steps) != 0) {
                fprintf(stderr, "%s: -t: '%s' is not a step count in 1..%d\n", prog, optarg,
                        MAX_STEPS);
                usage(stderr, prog);
                return 2;
            }
            break;
        case 's':
            if (parse_int(optarg, 0, MAX_SLEEP_MS, &opt->sleep_ms) != 0) {
                fprintf(stderr, "%s: -s: '%s' is not a sleep time in 0..%d ms\n", prog, optarg,
                        MAX_SLEEP_MS);
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

static int run(const struct options *opt)
{
    const int n = opt->n;
    double *cur = grid_new(n);
    double *next = grid_new(n);
    if (cur == NULL || next == NULL) {
        fprintf(stderr, "stencil: cannot allocate two %dx%d grids\n", n + 2, n + 2);
        free(cur);
        free(next);
        return 1;
    }

    int threads = omp_get_max_threads();
    double change = 0.0;

    MONITOR_REGION(step_region, MRI_REGION_LOOP, "time_step");
    for (int t = 0; t < opt->steps; t++) {
        MONITOR_ENTER(step_region);

        sweep(cur, next, n, &threads);
        change = residual(cur, next, n);

        double *tmp = cur;
        cur = next;
        next = tmp;

        if (opt->sleep_ms > 0)
            sleep_ms(opt->sleep_ms);

        MONITOR_EXIT(step_region);
    }

    int status = 0;
    /* Jacobi on this problem cannot diverge; a non-finite change means the
     * grid was corrupted, and the checksum would be meaningless. */
    if (!isfinite(change)) {
        fprintf(stderr, "stencil: non-finite change %g after the last step\n", change);
        status = 1;
    } else {
        printf("stencil: n=%d steps=%d threads=%d checksum=%.6e\n", n, opt->steps, threads,
               checksum(cur, n));
    }

    free(cur);
    free(next);
    return status;
}

int main(int argc, char **argv)
{
    MONITOR_REGION(main_region, MRI_REGION_PROGRAM, "main");
    MONITOR_ENTER(main_region);

    struct options opt = {DEFAULT_N, DEFAULT_STEPS, 0};
    int status = parse_options(argc, argv, &opt);
    if (status == OPTIONS_OK)
        status = run(&opt);

    /* Single exit point, so that the program region is always left. */
    MONITOR_EXIT(main_region);
    return status;
}

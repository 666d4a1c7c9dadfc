/*
 * mpi_jacobi.c - the 2-D Jacobi relaxation of examples/stencil over MPI and
 * OpenMP: the plate's rows are split into contiguous blocks, one a rank;
 * every time step a rank exchanges its edge rows with the ranks above and
 * below it (halo exchange, MPI_Sendrecv), sweeps its block with its OpenMP
 * threads, and the ranks agree on the largest change (MPI_Allreduce). At
 * the end rank 0 gathers the plate and sums it in the stencil's order:
 * every point is computed from the same operands in the same order as
 * there, so the checksum is the stencil's whatever the numbers of ranks
 * and threads.
 *
 * Usage: mpi_jacobi [-n N] [-t T] [-s MS] [-h]
 *   -n N   interior grid points per side, at least the number of ranks
 *          (default 256, at most 4096)
 *   -t T   time steps (default 50, at most 1000000)
 *   -s MS  extra sleep per time step in the serial part (default 0)
 * The number of threads a rank comes from OMP_NUM_THREADS.
 *
 * Rank 0 prints "mpi_jacobi: n=N steps=T ranks=P threads=Q checksum=..."
 * and every rank exits 0; 2 on a bad command line (said by rank 0).
 *
 * Monitored regions (each rank):
 *   main           PROGRAM        the whole run
 *   time_step      LOOP           one instance per time step
 *   halo_exchange  ROUTINE        the two MPI_Sendrecv of a step
 *   sweep          PARALLEL       the parallel region, every thread
 *   update_rows    PARALLEL_LOOP  the work-shared loop over the block's rows
 *   residual       ROUTINE        the local largest change and MPI_Allreduce
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mri_monitor.h>

#define MAX_N 4096
#define MAX_STEPS 1000000
#define MAX_SLEEP_MS 60000

struct options {
    int n, steps, sleep_ms;
};

/* A whole number from lo to hi, or -1. */
static int number(const char *s, int lo, int hi)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return (int)v;
}

/* 0 to run, else the exit status (1: -h). */
static int parse(int argc, char **argv, struct options *o, int rank, int ranks)
{
    o->n = 256, o->steps = 50, o->sleep_ms = 0;
    for (int i = 1; i < argc; i++) {
        int *slot = NULL, lo = 0, hi = 0;
        if (strcmp(argv[i], "-n") == 0) slot = &o->n, lo = 1, hi = MAX_N;
        else if (strcmp(argv[i], "-t") == 0) slot = &o->steps, lo = 1, hi = MAX_STEPS;
        else if (strcmp(argv[i], "-s") == 0) slot = &o->sleep_ms, lo = 0, hi = MAX_SLEEP_MS;
        else {
            const int help = strcmp(argv[i], "-h") == 0;
            if (rank == 0 && !help)
                fprintf(stderr, "mpi_jacobi: unknown option '%s'\n", argv[i]);
            if (rank == 0)
                fprintf(help ? stdout : stderr, "usage: mpi_jacobi [-n N] [-t T] [-s MS]\n");
            return help ? 1 : 2;
        }
        if (i + 1 >= argc || (*slot = number(argv[i + 1], lo, hi)) < 0) {
            if (rank == 0)
                fprintf(stderr, "mpi_jacobi: %s needs a whole number from %d to %d\n", argv[i], lo, hi);
            return 2;
        }
        i++;
    }
    if (o->n < ranks) {
        if (rank == 0)
            fprintf(stderr, "mpi_jacobi: -n %d: fewer rows than the %d ranks (each needs one)\n", o->n, ranks);
        return 2;
    }
    return 0;
}

/* One Jacobi sweep of the block's rows 1..rows from src into dst (rows of
 * n + 2 points; rows 0 and rows + 1 are the halo). */
static void sweep(const double *src, double *dst, int rows, int n, int *threads)
{
    const size_t stride = (size_t)n + 2;
#pragma omp parallel default(none) shared(src, dst, rows, n, stride, threads)
    {
        MONITOR_REGION(sweep_region, MRI_REGION_PARALLEL, "sweep");
        MONITOR_ENTER(sweep_region);
        if (omp_get_thread_num() == 0)
            *threads = omp_get_num_threads();
        MONITOR_REGION(rows_region, MRI_REGION_PARALLEL_LOOP, "update_rows");
        MONITOR_ENTER(rows_region);
#pragma omp for schedule(static)
        for (int i = 1; i <= rows; i++) {
            const double *up = &src[(size_t)(i - 1) * stride];
            const double *mid = &src[(size_t)i * stride];
            const double *down = &src[(size_t)(i + 1) * stride];
            double *out = &dst[(size_t)i * stride];
            for (int j = 1; j <= n; j++)
                out[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
        }
        MONITOR_EXIT(rows_region);
        MONITOR_EXIT(sweep_region);
    }
}

/* Sends the block's first row up and its last row down, and receives the
 * halo rows from the neighbours (MPI_PROC_NULL at the plate's edges, whose
 * boundary rows then stay as they are). */
static void halo_exchange(double *g, int rows, int n, int rank, int ranks)
{
    MONITOR_REGION(region, MRI_REGION_ROUTINE, "halo_exchange");
    MONITOR_ENTER(region);
    const size_t stride = (size_t)n + 2;
    const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int down = rank + 1 < ranks ? rank + 1 : MPI_PROC_NULL;
    MPI_Sendrecv(&g[stride], (int)stride, MPI_DOUBLE, up, 0, &g[(size_t)(rows + 1) * stride], (int)stride,
                 MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&g[(size_t)rows * stride], (int)stride, MPI_DOUBLE, down, 1, &g[0], (int)stride, MPI_DOUBLE, up, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MONITOR_EXIT(region);
}

/* The largest change of any point of the plate in this step. */
static double residual(const double *before, const double *after, int rows, int n)
{
    MONITOR_REGION(region, MRI_REGION_ROUTINE, "residual");
    MONITOR_ENTER(region);
    const size_t stride = (size_t)n + 2;
    double local = 0.0;
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j <= n; j++) {
            const double d = fabs(after[(size_t)i * stride + j] - before[(size_t)i * stride + j]);
            if (!(d <= local)) /* a NaN is kept */
                local = d;
        }
    double global = 0.0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MONITOR_EXIT(region);
    return global;
}

/* The stencil's checksum: every interior point summed in row-major order. */
static double checksum(const double *plate, int n)
{
    const size_t stride = (size_t)n + 2;
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 1; j <= n; j++)
            sum += plate[(size_t)i * stride + j];
    return sum;
}

static int run(const struct options *o, int rank, int ranks)
{
    const int n = o->n;
    const size_t stride = (size_t)n + 2;
    /* Rows first .. first + rows - 1 of the plate's 0 .. n - 1. */
    const int first = (int)((long)rank * n / ranks), rows = (int)((long)(rank + 1) * n / ranks) - first;
    double *cur = calloc((size_t)(rows + 2) * stride, sizeof *cur);
    double *next = calloc((size_t)(rows + 2) * stride, sizeof *next);
    int ok = cur != NULL && next != NULL, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (!ok)
            fprintf(stderr, "mpi_jacobi: rank %d cannot allocate two %d x %zu blocks\n", rank, rows + 2, stride);
        free(cur), free(next);
        return 1;
    }
    if (rank == 0) /* the hot edge, in both grids: the sweep never writes it */
        for (size_t j = 0; j < stride; j++)
            cur[j] = next[j] = 1.0;

    int threads = omp_get_max_threads();
    double change = 0.0;
    MONITOR_REGION(step_region, MRI_REGION_LOOP, "time_step");
    for (int t = 0; t < o->steps; t++) {
        MONITOR_ENTER(step_region);
        halo_exchange(cur, rows, n, rank, ranks);
        sweep(cur, next, rows, n, &threads);
        change = residual(cur, next, rows, n);
        double *tmp = cur;
        cur = next, next = tmp;
        if (o->sleep_ms > 0) {
            struct timespec ts = {o->sleep_ms / 1000, (long)(o->sleep_ms % 1000) * 1000000L};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            }
        }
        MONITOR_EXIT(step_region);
    }

    /* Rank 0 gathers every block's rows (without the halo). */
    int *counts = NULL, *displs = NULL;
    double *plate = NULL;
    if (rank == 0) {
        counts = malloc((size_t)ranks * sizeof *counts);
        displs = malloc((size_t)ranks * sizeof *displs);
        plate = malloc((size_t)n * stride * sizeof *plate);
        ok = counts && displs && plate;
        for (int r = 0; ok && r < ranks; r++) {
            const int f = (int)((long)r * n / ranks), c = (int)((long)(r + 1) * n / ranks) - f;
            counts[r] = c * (int)stride, displs[r] = f * (int)stride;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int status = 0;
    if (ok) {
        MPI_Gatherv(&cur[stride], rows * (int)stride, MPI_DOUBLE, plate, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            if (!isfinite(change)) {
                fprintf(stderr, "mpi_jacobi: the grid holds non-finite values\n");
                status = 1;
            } else {
                printf("mpi_jacobi: n=%d steps=%d ranks=%d threads=%d checksum=%.6e\n", n, o->steps, ranks, threads,
                       checksum(plate, n));
            }
        }
    } else {
        if (rank == 0)
            fprintf(stderr, "mpi_jacobi: cannot allocate the %d x %zu plate\n", n, stride);
        status = 1;
    }
    free(counts), free(displs), free(plate), free(cur), free(next);
    return status;
}

int main(int argc, char **argv)
{
    MONITOR_REGION(main_region, MRI_REGION_PROGRAM, "main");
    MONITOR_ENTER(main_region);
    int provided = 0, rank = 0, ranks = 1;
    /* Only the initial thread calls MPI. */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    struct options o;
    int status = parse(argc, argv, &o, rank, ranks);
    if (status == 1)
        status = 0;
    else if (status == 0)
        status = run(&o, rank, ranks);
    MPI_Finalize();
    MONITOR_EXIT(main_region);
    return status;
}

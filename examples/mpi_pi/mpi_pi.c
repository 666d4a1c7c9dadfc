/*
 * mpi_pi.c - Monte Carlo estimate of pi by a master and its workers over
 * MPI: the program of seed paper 000. Rank 0 hands out batches of random
 * points on request; every other rank counts the points of a batch that
 * fall inside the unit quarter circle and sends the count back with its
 * next request. With one rank, rank 0 does every batch itself.
 *
 * Usage: mpi_pi [-b BATCHES] [-p POINTS] [-s RANK] [-d MS] [-h]
 *   -b BATCHES  batches in all (default 64)
 *   -p POINTS   points per batch (default 100000)
 *   -s RANK     the rank slowed on purpose (default none): it sleeps MS
 *               milliseconds in every batch it computes
 *   -d MS       that sleep, 0..10000 ms (default 10)
 *
 * Rank 0 prints "mpi_pi: ranks=R batches=B points=P pi=..." and every rank
 * exits 0; 2 on a bad command line (every rank says nothing but rank 0).
 *
 * Monitored regions:
 *   main           PROGRAM  the whole run of a rank
 *   master         ROUTINE  rank 0 hands out batches and collects counts
 *   worker         ROUTINE  a worker's loop: request, compute, until told
 *                           to stop
 *   compute_batch  ROUTINE  one batch of points, on whichever rank
 *                           computes it; the natural breakpoint
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mri_monitor.h>

enum { TAG_REQUEST = 1, TAG_WORK = 2, TAG_STOP = 3 };

#define MAX_BATCHES 100000000L
#define MAX_POINTS 100000000L
#define MAX_DELAY_MS 10000L

struct options {
    long batches, points, slow_rank, delay_ms;
};

/* A whole number from lo to hi, or -1. */
static long number(const char *s, long lo, long hi)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return v;
}

static int parse(int argc, char **argv, struct options *o, int rank)
{
    o->batches = 64;
    o->points = 100000;
    o->slow_rank = -1;
    o->delay_ms = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long *slot = NULL, lo = 0, hi = 0;
        if (strcmp(a, "-b") == 0) slot = &o->batches, lo = 1, hi = MAX_BATCHES;
        else if (strcmp(a, "-p") == 0) slot = &o->points, lo = 1, hi = MAX_POINTS;
        else if (strcmp(a, "-s") == 0) slot = &o->slow_rank, lo = 0, hi = 1L << 30;
        else if (strcmp(a, "-d") == 0) slot = &o->delay_ms, lo = 0, hi = MAX_DELAY_MS;
        else {
            const int help = strcmp(a, "-h") == 0;
            if (rank == 0 && !help)
                fprintf(stderr, "%s: unknown option '%s'\n", argv[0], a);
            if (rank == 0)
                fprintf(help ? stdout : stderr, "usage: mpi_pi [-b BATCHES] [-p POINTS] [-s RANK] [-d MS]\n");
            return help ? 1 : 2;
        }
        if (i + 1 >= argc || (*slot = number(argv[i + 1], lo, hi)) < 0) {
            if (rank == 0)
                fprintf(stderr, "%s: %s needs a whole number from %ld to %ld\n", argv[0], a, lo, hi);
            return 2;
        }
        i++;
    }
    return 0;
}

/* The points of batch `b` inside the quarter circle: a generator seeded by
 * the batch number, so the estimate does not depend on who computes what. */
static long compute_batch(long b, const struct options *o, int rank)
{
    MONITOR_REGION(batch_region, MRI_REGION_ROUTINE, "compute_batch");
    MONITOR_ENTER(batch_region);
    unsigned long long x = 0x9E3779B97F4A7C15ULL * (unsigned long long)(b + 1);
    long inside = 0;
    for (long k = 0; k < o->points; k++) {
        /* xorshift64*: two 26-bit coordinates per step. */
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        const unsigned long long r = x * 0x2545F4914F6CDD1DULL;
        const double px = (double)(r >> 38) / (double)(1ULL << 26);
        const double py = (double)((r >> 12) & ((1ULL << 26) - 1)) / (double)(1ULL << 26);
        inside += px * px + py * py <= 1.0;
    }
    if (rank == o->slow_rank && o->delay_ms > 0) {
        struct timespec ts = {o->delay_ms / 1000, (o->delay_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
    MONITOR_EXIT(batch_region);
    return inside;
}

static long master(const struct options *o, int ranks)
{
    MONITOR_REGION(master_region, MRI_REGION_ROUTINE, "master");
    MONITOR_ENTER(master_region);
    long inside = 0, next = 0;
    if (ranks == 1) {
        for (; next < o->batches; next++)
            inside += compute_batch(next, o, 0);
    } else {
        /* Every request carries the count of the worker's previous batch
         * (-1 with its first); a worker asking when none is left is told to
         * stop, until every worker has been. */
        for (int stopped = 0; stopped < ranks - 1;) {
            long count = 0;
            MPI_Status st;
            MPI_Recv(&count, 1, MPI_LONG, MPI_ANY_SOURCE, TAG_REQUEST, MPI_COMM_WORLD, &st);
            if (count > 0)
                inside += count;
            if (next < o->batches) {
                MPI_Send(&next, 1, MPI_LONG, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
                next++;
            } else {
                MPI_Send(&next, 1, MPI_LONG, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
                stopped++;
            }
        }
    }
    MONITOR_EXIT(master_region);
    return inside;
}

static void worker(const struct options *o, int rank)
{
    MONITOR_REGION(worker_region, MRI_REGION_ROUTINE, "worker");
    MONITOR_ENTER(worker_region);
    long count = -1;
    for (;;) {
        long b = 0;
        MPI_Status st;
        MPI_Send(&count, 1, MPI_LONG, 0, TAG_REQUEST, MPI_COMM_WORLD);
        MPI_Recv(&b, 1, MPI_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == TAG_STOP)
            break;
        count = compute_batch(b, o, rank);
    }
    MONITOR_EXIT(worker_region);
}

int main(int argc, char **argv)
{
    MONITOR_REGION(main_region, MRI_REGION_PROGRAM, "main");
    MONITOR_ENTER(main_region);
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    struct options o;
    const int bad = parse(argc, argv, &o, rank);
    if (bad) {
        MPI_Finalize();
        MONITOR_EXIT(main_region);
        return bad == 1 ? 0 : 2;
    }
    if (rank == 0) {
        const long inside = master(&o, ranks);
        printf("mpi_pi: ranks=%d batches=%ld points=%ld pi=%.6f\n", ranks, o.batches, o.points,
               4.0 * (double)inside / ((double)o.batches * (double)o.points));
    } else {
        worker(&o, rank);
    }
    MPI_Finalize();
    MONITOR_EXIT(main_region);
    return 0;
}

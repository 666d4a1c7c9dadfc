/*
 * mpi_call_cost.c - what an MPI call costs a rank, for bench/run_mpi_calls.sh:
 * CALLS calls of MPI_Iprobe (nothing pending) and CALLS of MPI_Barrier, on
 * the ranks it runs on (one: each call returns without waiting), each loop
 * timed with CLOCK_MONOTONIC after a warm-up of CALLS / 10.
 *
 * Usage: mpi_call_cost [CALLS]   (default 1000000, 10..1000000000)
 * Rank 0 prints "mpi_call_cost: ranks=R iprobe_ns=X barrier_ns=Y" (ns a
 * call). Linked with libmonitor; its one region is main (PROGRAM), so the
 * MPI calls are the only other regions a tool sees.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mri_monitor.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double iprobe_ns(long calls)
{
    int flag = 0;
    const double t0 = now_ns();
    for (long k = 0; k < calls; k++)
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    return (now_ns() - t0) / (double)calls;
}

static double barrier_ns(long calls)
{
    const double t0 = now_ns();
    for (long k = 0; k < calls; k++)
        MPI_Barrier(MPI_COMM_WORLD);
    return (now_ns() - t0) / (double)calls;
}

int main(int argc, char **argv)
{
    MONITOR_REGION(main_region, MRI_REGION_PROGRAM, "main");
    MONITOR_ENTER(main_region);
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    long calls = 1000000;
    if (argc > 1) {
        char *end = NULL;
        errno = 0;
        calls = strtol(argv[1], &end, 10);
        if (errno || end == argv[1] || *end || calls < 10 || calls > 1000000000L) {
            if (rank == 0)
                fprintf(stderr, "usage: mpi_call_cost [CALLS] (10..1000000000)\n");
            MPI_Finalize();
            return 2;
        }
    }
    iprobe_ns(calls / 10);
    const double probe = iprobe_ns(calls);
    barrier_ns(calls / 10);
    const double barrier = barrier_ns(calls);
    if (rank == 0)
        printf("mpi_call_cost: ranks=%d iprobe_ns=%.1f barrier_ns=%.1f\n", ranks, probe, barrier);
    MPI_Finalize();
    MONITOR_EXIT(main_region);
    return 0;
}

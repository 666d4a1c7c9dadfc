/*
 * fake_mpich.c - a stand-in for another MPI library than the one the MPI
 * wrappers were built against: built as libmpi.so.12 (MPICH's soname),
 * with int handles as MPICH has them. It defines the three calls
 * foreign_mpi.c makes, in both their MPI_ and PMPI_ names, and counts the
 * sends, so the test can tell that the calls reached it.
 */
#include <stdio.h>

static int sends;

int PMPI_Init(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}
int MPI_Init(int *argc, char ***argv) { return PMPI_Init(argc, argv); }

int PMPI_Send(const void *buf, int count, int type, int dest, int tag, int comm)
{
    (void)buf, (void)count, (void)type, (void)dest, (void)tag, (void)comm;
    sends++;
    return 0;
}
int MPI_Send(const void *buf, int count, int type, int dest, int tag, int comm)
{
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int PMPI_Finalize(void)
{
    printf("fake MPICH: %d sends\n", sends);
    return 0;
}
int MPI_Finalize(void) { return PMPI_Finalize(); }

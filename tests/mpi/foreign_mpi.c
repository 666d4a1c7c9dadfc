/*
 * foreign_mpi.c - an annotated program linked with another MPI than the
 * wrappers' (fake_mpich.c, libmpi.so.12): MPI_Init, three MPI_Send,
 * MPI_Finalize. Under mri in a job, the wrappers must say at start that
 * they do not measure this MPI, and hand every call on to it.
 */
#include <stdio.h>

#include <mri_monitor.h>

/* MPICH's prototypes (int handles), not Open MPI's mpi.h. */
int MPI_Init(int *argc, char ***argv);
int MPI_Send(const void *buf, int count, int type, int dest, int tag, int comm);
int MPI_Finalize(void);

int main(int argc, char **argv)
{
    MONITOR_REGION(main_region, MRI_REGION_PROGRAM, "main");
    MONITOR_ENTER(main_region);
    MPI_Init(&argc, &argv);
    int v = 1;
    for (int k = 0; k < 3; k++)
        MPI_Send(&v, 1, 0x4c000405 /* MPICH's MPI_INT */, 0, k, 0x44000000 /* MPI_COMM_WORLD */);
    MPI_Finalize();
    MONITOR_EXIT(main_region);
    return 0;
}

/*
 * mpi_calls.c - the MPI wrapper library (libmri_mpi): each wrapped MPI call
 * is a region of type MRI_REGION_MPI named after the call, entered before
 * the call's PMPI_ form and exited after it. `mri` preloads the library
 * into the ranks of a job (LD_PRELOAD); a program may also link it before
 * the MPI library (-lmri_mpi -lmpi).
 *
 * Without a tool the regions are dormant like any other: a byte load and a
 * branch around each call. A program whose MPI is another than the one
 * this library was built against (found at start: the library that defines
 * PMPI_Send is not MRI_MPI_SONAME) gets one line on stderr and its calls
 * pass through unmeasured: the arguments are handed on bit for bit, never
 * read, so another MPI's types do not matter.
 *
 * C bindings only: Fortran calls reach Open MPI's PMPI_ symbols directly.
 *
 * Thread safety: the wrappers are reentrant; the mismatch flag is written
 * once by the constructor, before main().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include <mri_monitor.h>

#ifndef MRI_MPI_SONAME
#error "MRI_MPI_SONAME: the soname of the MPI library this is built against (CMake sets it)"
#endif

/* Set when the program's MPI is not the one built against: pass through. */
static int foreign_mpi;

/* The file name of the object that defines `symbol` for this process. */
static const char *defining_object(void *address)
{
    Dl_info info;
    if (address == NULL || dladdr(address, &info) == 0 || info.dli_fname == NULL)
        return NULL;
    return info.dli_fname;
}

__attribute__((constructor)) static void mri_mpi_check(void)
{
    const char *object = defining_object((void *)&PMPI_Send);
    if (object == NULL)
        return;
    const char *base = strrchr(object, '/');
    base = base ? base + 1 : object;
    /* libmpi.so.40, or a file name that continues it (libmpi.so.40.30.4). */
    const size_t n = strlen(MRI_MPI_SONAME);
    if (strncmp(base, MRI_MPI_SONAME, n) == 0 && (base[n] == '\0' || base[n] == '.'))
        return;
    foreign_mpi = 1;
    fprintf(stderr, "mri-mpi: not measuring MPI calls: this program's MPI library is %s, and the wrappers were built "
                    "for %s; the calls run unmeasured\n", object, MRI_MPI_SONAME);
}

/* One wrapper: `name` without MPI_, its parameter list and the arguments
 * that hand them on. Each wrapper stands on a line of its own: a region is
 * its type, file and line. */
#define MRI_WRAP(name, params, args)                                   \
    int MPI_##name params                                              \
    {                                                                  \
        MONITOR_REGION(region, MRI_REGION_MPI, "MPI_" #name);          \
        if (foreign_mpi)                                               \
            return PMPI_##name args;                                   \
        MONITOR_ENTER(region);                                         \
        const int rc = PMPI_##name args;                               \
        MONITOR_EXIT(region);                                          \
        return rc;                                                     \
    }

/* clang-format off */
MRI_WRAP(Init, (int *argc, char ***argv), (argc, argv))
MRI_WRAP(Init_thread, (int *argc, char ***argv, int required, int *provided), (argc, argv, required, provided))
MRI_WRAP(Finalize, (void), ())
MRI_WRAP(Send, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), (buf, count, type, dest, tag, comm))
MRI_WRAP(Ssend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), (buf, count, type, dest, tag, comm))
MRI_WRAP(Bsend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), (buf, count, type, dest, tag, comm))
MRI_WRAP(Rsend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm), (buf, count, type, dest, tag, comm))
MRI_WRAP(Recv, (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status), (buf, count, type, source, tag, comm, status))
MRI_WRAP(Isend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, type, dest, tag, comm, request))
MRI_WRAP(Issend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, type, dest, tag, comm, request))
MRI_WRAP(Irecv, (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request), (buf, count, type, source, tag, comm, request))
MRI_WRAP(Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status), (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status))
MRI_WRAP(Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status), (source, tag, comm, status))
MRI_WRAP(Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status), (source, tag, comm, flag, status))
MRI_WRAP(Wait, (MPI_Request *request, MPI_Status *status), (request, status))
MRI_WRAP(Waitall, (int count, MPI_Request requests[], MPI_Status statuses[]), (count, requests, statuses))
MRI_WRAP(Waitany, (int count, MPI_Request requests[], int *index, MPI_Status *status), (count, requests, index, status))
MRI_WRAP(Waitsome, (int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[]), (incount, requests, outcount, indices, statuses))
MRI_WRAP(Test, (MPI_Request *request, int *flag, MPI_Status *status), (request, flag, status))
MRI_WRAP(Testall, (int count, MPI_Request requests[], int *flag, MPI_Status statuses[]), (count, requests, flag, statuses))
MRI_WRAP(Barrier, (MPI_Comm comm), (comm))
MRI_WRAP(Ibarrier, (MPI_Comm comm, MPI_Request *request), (comm, request))
MRI_WRAP(Bcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm), (buf, count, type, root, comm))
MRI_WRAP(Ibcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *request), (buf, count, type, root, comm, request))
MRI_WRAP(Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm), (sendbuf, recvbuf, count, type, op, root, comm))
MRI_WRAP(Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, count, type, op, comm))
MRI_WRAP(Iallreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request), (sendbuf, recvbuf, count, type, op, comm, request))
MRI_WRAP(Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
MRI_WRAP(Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))
MRI_WRAP(Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
MRI_WRAP(Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm), (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))
MRI_WRAP(Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
MRI_WRAP(Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
MRI_WRAP(Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))
MRI_WRAP(Alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
MRI_WRAP(Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, recvcounts, type, op, comm))
MRI_WRAP(Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, count, type, op, comm))
MRI_WRAP(Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm), (sendbuf, recvbuf, count, type, op, comm))
/* clang-format on */

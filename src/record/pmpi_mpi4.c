/* cdag — src/record/pmpi_mpi4.c: MPI-4's communication calls the recorder does not record,
 * counted.
 *
 * The large-count forms of the neighbourhood v- and w-collectives, the persistent
 * collectives and the one-sided calls (MPI_Neighbor_alltoallv_c, MPI_Put_c, ...: counts and
 * displacements as MPI_Count or MPI_Aint), of matched receives and of
 * MPI_Isendrecv(_replace), and partitioned communication (MPI_Psend_init, MPI_Precv_init)
 * move data the recording does not hold. Each call is passed on to MPI unchanged and, in a
 * phase, counted under `unsupported` in index.json with its reason, so that a recording that
 * lacks them says so (before this file they were missing without a word, and the messages
 * they matched looked unreceived or unsent). The large-count forms of point-to-point calls
 * and of the other collectives are recorded where their counts fit an int
 * (pmpi_p2p.c, pmpi_coll_c.c), as are MPI_Isendrecv(_replace) and MPI's persistent
 * collectives (pmpi_pcoll.c). The list was taken from MPICH 4.0.2's
 * mpi_proto.h; an MPI before 4.0 has none of them. */
#include "record/pmpi.h"

#if MPI_VERSION >= 4

#define LARGE "MPI-4's large-count form: not recorded (its data is missing from the graph)"
#define PARTITIONED "MPI-4's partitioned communication: not recorded (its messages are missing from the graph)"

#define UNRECORDED(NAME, WHY, PARAMS, ARGS)                                                       \
  int MPI_##NAME PARAMS {                                                                         \
    COUNT(C_##NAME);                                                                              \
    if (recording()) unsupported_because(C_##NAME, WHY);                                          \
    return PMPI_##NAME ARGS;                                                                      \
  }

/* The init of a persistent request: counted even outside a phase, as its starts may come in
   one (and are not counted: the request is unknown to the recorder). */
#define UNRECORDED_INIT(NAME, WHY, PARAMS, ARGS)                                                  \
  int MPI_##NAME PARAMS {                                                                         \
    COUNT(C_##NAME);                                                                              \
    if (R && R->fd >= 0) unsupported_because(C_##NAME, WHY);                                      \
    return PMPI_##NAME ARGS;                                                                      \
  }

#pragma GCC visibility push(default)

UNRECORDED(Mrecv_c, LARGE, (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status), (buf, count, datatype, message, status))
UNRECORDED(Imrecv_c, LARGE, (void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request), (buf, count, datatype, message, request))
UNRECORDED(Put_c, LARGE, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win))
UNRECORDED(Get_c, LARGE, (void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win))
UNRECORDED(Accumulate_c, LARGE, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win))
UNRECORDED(Get_accumulate_c, LARGE, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win), (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win))
UNRECORDED(Rput_c, LARGE, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request))
UNRECORDED(Rget_c, LARGE, (void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, request))
UNRECORDED(Raccumulate_c, LARGE, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request), (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request))
UNRECORDED(Rget_accumulate_c, LARGE, (const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request), (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request))
UNRECORDED(Win_create_c, LARGE, (void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win), (base, size, disp_unit, info, comm, win))
UNRECORDED(Win_allocate_c, LARGE, (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win), (size, disp_unit, info, comm, baseptr, win))
UNRECORDED(Win_allocate_shared_c, LARGE, (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win), (size, disp_unit, info, comm, baseptr, win))
UNRECORDED_INIT(Bcast_init_c, LARGE, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request), (buffer, count, datatype, root, comm, info, request))
UNRECORDED_INIT(Gather_init_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request))
UNRECORDED_INIT(Gatherv_init_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, info, request))
UNRECORDED_INIT(Scatter_init_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request))
UNRECORDED_INIT(Scatterv_init_c, LARGE, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request))
UNRECORDED_INIT(Allgather_init_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))
UNRECORDED_INIT(Allgatherv_init_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request))
UNRECORDED_INIT(Alltoall_init_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))
UNRECORDED_INIT(Alltoallv_init_c, LARGE, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request))
UNRECORDED_INIT(Alltoallw_init_c, LARGE, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, info, request))
UNRECORDED_INIT(Reduce_init_c, LARGE, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, recvbuf, count, datatype, op, root, comm, info, request))
UNRECORDED_INIT(Allreduce_init_c, LARGE, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, recvbuf, count, datatype, op, comm, info, request))
UNRECORDED_INIT(Reduce_scatter_init_c, LARGE, (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request))
UNRECORDED_INIT(Reduce_scatter_block_init_c, LARGE, (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, recvbuf, recvcount, datatype, op, comm, info, request))
UNRECORDED_INIT(Scan_init_c, LARGE, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, recvbuf, count, datatype, op, comm, info, request))
UNRECORDED_INIT(Exscan_init_c, LARGE, (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, recvbuf, count, datatype, op, comm, info, request))
UNRECORDED_INIT(Neighbor_allgather_init_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))
UNRECORDED(Neighbor_allgatherv_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))
UNRECORDED(Ineighbor_allgatherv_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))
UNRECORDED_INIT(Neighbor_allgatherv_init_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request))
UNRECORDED_INIT(Neighbor_alltoall_init_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))
UNRECORDED(Neighbor_alltoallv_c, LARGE, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))
UNRECORDED(Ineighbor_alltoallv_c, LARGE, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request))
UNRECORDED_INIT(Neighbor_alltoallv_init_c, LARGE, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request))
UNRECORDED(Neighbor_alltoallw_c, LARGE, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
UNRECORDED(Ineighbor_alltoallw_c, LARGE, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request))
UNRECORDED_INIT(Neighbor_alltoallw_init_c, LARGE, (const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request), (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, info, request))
UNRECORDED(Isendrecv_c, LARGE, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request), (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, request))
UNRECORDED(Isendrecv_replace_c, LARGE, (void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request *request), (buf, count, datatype, dest, sendtag, source, recvtag, comm, request))
UNRECORDED_INIT(Psend_init, PARTITIONED, (const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request), (buf, partitions, count, datatype, dest, tag, comm, info, request))
UNRECORDED_INIT(Precv_init, PARTITIONED, (void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request), (buf, partitions, count, datatype, dest, tag, comm, info, request))

#pragma GCC visibility pop

#endif

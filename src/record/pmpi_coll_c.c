/* cdag — src/record/pmpi_coll_c.c: MPI-4's large-count forms of the collectives whose counts
 * are scalars (MPI_Bcast_c, MPI_Gather_c, ..., MPI_Ineighbor_alltoall_c), recorded as their
 * int forms (pmpi_coll.c, pmpi_vcoll.c, pmpi_nbcoll.c) where every count fits an int, which
 * is what a line holds; a larger count is passed on and counted (count_fits). The forms with
 * arrays of counts and displacements (v, w, Reduce_scatter) and the persistent ones are
 * counted in pmpi_mpi4.c. */
#include "record/pmpi_coll.h"

#if MPI_VERSION >= 4

/* A form described (DESCRIBE, on coll c) before MPI's call where FITS (every count fits an
   int), then FINISH with MPI's return rc. */
#define LARGE_C(NAME, PARAMS, ARGS, FITS, DESCRIBE, FINISH)                                       \
  int MPI_##NAME##_c PARAMS {                                                                     \
    COUNT(C_##NAME##_c);                                                                          \
    if (!(FITS)) return PMPI_##NAME##_c ARGS;                                                     \
    coll c;                                                                                       \
    DESCRIBE;                                                                                     \
    int rc = PMPI_##NAME##_c ARGS;                                                                \
    FINISH;                                                                                       \
    return rc;                                                                                    \
  }
/* Blocking: its output the shadow's when MPI returns. Nonblocking: its request kept until a
   completion call sees it complete. */
#define BLOCKING_C(NAME, PARAMS, ARGS, FITS, DESCRIBE) LARGE_C(NAME, PARAMS, ARGS, FITS, DESCRIBE, coll_returned(&c, rc))
#define NONBLOCKING_C(NAME, PARAMS, ARGS, FITS, DESCRIBE)                                         \
  LARGE_C(NAME, PARAMS, ARGS, FITS, DESCRIBE, nbcoll_started(&c, rc, rq))

#define FIT(n, NAME) count_fits(n, C_##NAME##_c, 0)
#define FIT2(NAME) (FIT(scount, NAME) && FIT(rcount, NAME))

#define BUF_ARGS const void *sbuf, MPI_Count scount, MPI_Datatype st, void *rbuf, MPI_Count rcount, MPI_Datatype rt
#define RED_ARGS const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype t, MPI_Op o

#pragma GCC visibility push(default)

BLOCKING_C(Bcast, (void *buf, MPI_Count count, MPI_Datatype t, int root, MPI_Comm comm), (buf, count, t, root, comm),
           FIT(count, Bcast), coll_bcast(&c, C_Bcast_c, 0, buf, (int)count, t, root, comm))
NONBLOCKING_C(Ibcast, (void *buf, MPI_Count count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *rq),
              (buf, count, t, root, comm, rq), FIT(count, Ibcast),
              coll_bcast(&c, C_Ibcast_c, 1, buf, (int)count, t, root, comm))

BLOCKING_C(Gather, (BUF_ARGS, int root, MPI_Comm comm), (sbuf, scount, st, rbuf, rcount, rt, root, comm), FIT2(Gather),
           coll_gather(&c, C_Gather_c, 0, sbuf, (int)scount, st, rbuf, (int)rcount, rt, root, comm))
NONBLOCKING_C(Igather, (BUF_ARGS, int root, MPI_Comm comm, MPI_Request *rq),
              (sbuf, scount, st, rbuf, rcount, rt, root, comm, rq), FIT2(Igather),
              coll_gather(&c, C_Igather_c, 1, sbuf, (int)scount, st, rbuf, (int)rcount, rt, root, comm))

BLOCKING_C(Scatter, (BUF_ARGS, int root, MPI_Comm comm), (sbuf, scount, st, rbuf, rcount, rt, root, comm),
           FIT2(Scatter), coll_scatter(&c, C_Scatter_c, 0, sbuf, (int)scount, st, rbuf, (int)rcount, rt, root, comm))
NONBLOCKING_C(Iscatter, (BUF_ARGS, int root, MPI_Comm comm, MPI_Request *rq),
              (sbuf, scount, st, rbuf, rcount, rt, root, comm, rq), FIT2(Iscatter),
              coll_scatter(&c, C_Iscatter_c, 1, sbuf, (int)scount, st, rbuf, (int)rcount, rt, root, comm))

BLOCKING_C(Allgather, (BUF_ARGS, MPI_Comm comm), (sbuf, scount, st, rbuf, rcount, rt, comm), FIT2(Allgather),
           coll_blocks(&c, C_Allgather_c, 0, IR_COLL_ALLGATHER, sbuf, (int)scount, st, rbuf, (int)rcount, rt, comm))
NONBLOCKING_C(Iallgather, (BUF_ARGS, MPI_Comm comm, MPI_Request *rq), (sbuf, scount, st, rbuf, rcount, rt, comm, rq),
              FIT2(Iallgather),
              coll_blocks(&c, C_Iallgather_c, 1, IR_COLL_ALLGATHER, sbuf, (int)scount, st, rbuf, (int)rcount, rt, comm))

BLOCKING_C(Alltoall, (BUF_ARGS, MPI_Comm comm), (sbuf, scount, st, rbuf, rcount, rt, comm), FIT2(Alltoall),
           coll_blocks(&c, C_Alltoall_c, 0, IR_COLL_ALLTOALL, sbuf, (int)scount, st, rbuf, (int)rcount, rt, comm))
NONBLOCKING_C(Ialltoall, (BUF_ARGS, MPI_Comm comm, MPI_Request *rq), (sbuf, scount, st, rbuf, rcount, rt, comm, rq),
              FIT2(Ialltoall),
              coll_blocks(&c, C_Ialltoall_c, 1, IR_COLL_ALLTOALL, sbuf, (int)scount, st, rbuf, (int)rcount, rt, comm))

BLOCKING_C(Reduce, (RED_ARGS, int root, MPI_Comm comm), (sbuf, rbuf, count, t, o, root, comm), FIT(count, Reduce),
           coll_reduction(&c, C_Reduce_c, 0, IR_COLL_REDUCE, sbuf, rbuf, (int)count, t, o, root, comm))
NONBLOCKING_C(Ireduce, (RED_ARGS, int root, MPI_Comm comm, MPI_Request *rq), (sbuf, rbuf, count, t, o, root, comm, rq),
              FIT(count, Ireduce),
              coll_reduction(&c, C_Ireduce_c, 1, IR_COLL_REDUCE, sbuf, rbuf, (int)count, t, o, root, comm))

BLOCKING_C(Allreduce, (RED_ARGS, MPI_Comm comm), (sbuf, rbuf, count, t, o, comm), FIT(count, Allreduce),
           coll_reduction(&c, C_Allreduce_c, 0, IR_COLL_ALLREDUCE, sbuf, rbuf, (int)count, t, o, -1, comm))
NONBLOCKING_C(Iallreduce, (RED_ARGS, MPI_Comm comm, MPI_Request *rq), (sbuf, rbuf, count, t, o, comm, rq),
              FIT(count, Iallreduce),
              coll_reduction(&c, C_Iallreduce_c, 1, IR_COLL_ALLREDUCE, sbuf, rbuf, (int)count, t, o, -1, comm))

BLOCKING_C(Reduce_scatter_block, (RED_ARGS, MPI_Comm comm), (sbuf, rbuf, count, t, o, comm),
           FIT(count, Reduce_scatter_block),
           coll_reduction(&c, C_Reduce_scatter_block_c, 0, IR_COLL_REDUCE_SCATTER_BLOCK, sbuf, rbuf, (int)count, t, o,
                          -1, comm))
NONBLOCKING_C(Ireduce_scatter_block, (RED_ARGS, MPI_Comm comm, MPI_Request *rq), (sbuf, rbuf, count, t, o, comm, rq),
              FIT(count, Ireduce_scatter_block),
              coll_reduction(&c, C_Ireduce_scatter_block_c, 1, IR_COLL_REDUCE_SCATTER_BLOCK, sbuf, rbuf, (int)count,
                             t, o, -1, comm))

BLOCKING_C(Scan, (RED_ARGS, MPI_Comm comm), (sbuf, rbuf, count, t, o, comm), FIT(count, Scan),
           coll_prefix(&c, C_Scan_c, 0, IR_COLL_SCAN, sbuf, rbuf, (int)count, t, o, comm))
NONBLOCKING_C(Iscan, (RED_ARGS, MPI_Comm comm, MPI_Request *rq), (sbuf, rbuf, count, t, o, comm, rq),
              FIT(count, Iscan), coll_prefix(&c, C_Iscan_c, 1, IR_COLL_SCAN, sbuf, rbuf, (int)count, t, o, comm))

BLOCKING_C(Exscan, (RED_ARGS, MPI_Comm comm), (sbuf, rbuf, count, t, o, comm), FIT(count, Exscan),
           coll_prefix(&c, C_Exscan_c, 0, IR_COLL_EXSCAN, sbuf, rbuf, (int)count, t, o, comm))
NONBLOCKING_C(Iexscan, (RED_ARGS, MPI_Comm comm, MPI_Request *rq), (sbuf, rbuf, count, t, o, comm, rq),
              FIT(count, Iexscan), coll_prefix(&c, C_Iexscan_c, 1, IR_COLL_EXSCAN, sbuf, rbuf, (int)count, t, o, comm))

BLOCKING_C(Neighbor_allgather, (BUF_ARGS, MPI_Comm comm), (sbuf, scount, st, rbuf, rcount, rt, comm),
           FIT2(Neighbor_allgather),
           coll_neighbor_allgather(&c, C_Neighbor_allgather_c, 0, sbuf, (int)scount, st, rbuf, (int)rcount, rt, comm))
NONBLOCKING_C(Ineighbor_allgather, (BUF_ARGS, MPI_Comm comm, MPI_Request *rq),
              (sbuf, scount, st, rbuf, rcount, rt, comm, rq), FIT2(Ineighbor_allgather),
              coll_neighbor_allgather(&c, C_Ineighbor_allgather_c, 1, sbuf, (int)scount, st, rbuf, (int)rcount, rt,
                                      comm))

BLOCKING_C(Neighbor_alltoall, (BUF_ARGS, MPI_Comm comm), (sbuf, scount, st, rbuf, rcount, rt, comm),
           FIT2(Neighbor_alltoall),
           coll_neighbor_alltoall(&c, C_Neighbor_alltoall_c, 0, sbuf, (int)scount, st, rbuf, (int)rcount, rt, comm))
NONBLOCKING_C(Ineighbor_alltoall, (BUF_ARGS, MPI_Comm comm, MPI_Request *rq),
              (sbuf, scount, st, rbuf, rcount, rt, comm, rq), FIT2(Ineighbor_alltoall),
              coll_neighbor_alltoall(&c, C_Ineighbor_alltoall_c, 1, sbuf, (int)scount, st, rbuf, (int)rcount, rt,
                                     comm))

#pragma GCC visibility pop

#endif

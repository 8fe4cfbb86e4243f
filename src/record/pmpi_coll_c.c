/* cdag — src/record/pmpi_coll_c.c: MPI-4's large-count forms of the collectives, blocking and
 * nonblocking (MPI_Bcast_c, MPI_Gatherv_c, ..., MPI_Ineighbor_alltoall_c), recorded as their
 * int forms (pmpi_coll.c, pmpi_vcoll.c, pmpi_nbcoll.c) where every count fits an int, which
 * is what a line holds; a larger count is passed on and counted (count_fits). The v- and
 * w-forms and Reduce_scatter have their arrays of counts and displacements copied as ints
 * for the description, which reads them during the call as the int forms' does. The
 * neighbourhood v- and w-forms and the persistent ones are counted in pmpi_mpi4.c. */
#include <stdlib.h>

#include "record/pmpi_coll.h"

#if MPI_VERSION >= 4

/* A form whose counts (and, for the v- and w-forms, arrays of them copied as ints into x)
   fit an int (FITS), described (DESCRIBE, on coll c) before MPI's call, then FINISH with
   MPI's return rc. */
#define LARGE_C(NAME, PARAMS, ARGS, FITS, DESCRIBE, FINISH)                                       \
  int MPI_##NAME##_c PARAMS {                                                                     \
    COUNT(C_##NAME##_c);                                                                          \
    ints4 x = {{NULL, NULL, NULL, NULL}, NULL};                                                   \
    if (!(FITS)) return PMPI_##NAME##_c ARGS;                                                     \
    coll c;                                                                                       \
    DESCRIBE;                                                                                     \
    int rc = PMPI_##NAME##_c ARGS;                                                                \
    FINISH;                                                                                       \
    free(x.block);                                                                                \
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

/* The members an array of comm's call has an entry for: an intercommunicator's remote group
   (local 0), or its local group (local 1: Reduce_scatter's counts, one per process that gets
   part of the result). */
static int members(MPI_Comm comm, int local) {
  int inter = 0, n = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter && !local) PMPI_Comm_remote_size(comm, &n);
  else PMPI_Comm_size(comm, &n);
  return n;
}

/* Up to four arrays of n counts (MPI_Count) or displacements (MPI_Aint) as ints, in one block
   (NULL stays NULL). 1 when each value fits an int; else 0, counted under `call`, or for
   want of memory (counted as such). */
typedef struct { int *v[4]; int *block; } ints4;

static int as_ints(ints4 *o, int n, int call, const MPI_Count *c0, const MPI_Aint *a1, const MPI_Count *c2,
                   const MPI_Aint *a3) {
  const void *src[4] = {c0, a1, c2, a3};
  *o = (ints4){{NULL, NULL, NULL, NULL}, n > 0 ? malloc((size_t)n * 4 * sizeof(int)) : NULL};
  if (n > 0 && !o->block) return nomem(OOM_CALLS), 0;
  for (int k = 0; k < 4; k++) {
    if (!src[k]) continue;
    o->v[k] = o->block + (size_t)k * (size_t)n;
    for (int i = 0; i < n; i++) {
      int64_t x = k % 2 ? (int64_t)((const MPI_Aint *)src[k])[i] : (int64_t)((const MPI_Count *)src[k])[i];
      if (x < INT32_MIN || !count_fits(x < 0 ? 0 : x, call, 0)) return free(o->block), o->block = NULL, 0;
      o->v[k][i] = (int)x;
    }
  }
  return 1;
}

/* Is this process the root whose arrays a rooted v-form reads? */
static int reads_root_arrays(int root, MPI_Comm comm) {
  int inter = 0, me = -1;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return root == MPI_ROOT;
  PMPI_Comm_rank(comm, &me);
  return me == root;
}

/* A v- or w-form's arrays are copied only while recording (none is read otherwise). */
#define ARRAYS(AS) (recording() && (AS))

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

#define GATHERV_PARAMS                                                                            \
  const void *sbuf, MPI_Count scount, MPI_Datatype st, void *rbuf, const MPI_Count rcounts[], const MPI_Aint displs[], \
      MPI_Datatype rt
#define GATHERV_AS(NAME)                                                                          \
  FIT(scount, NAME) && (!reads_root_arrays(root, comm) ||                                         \
                        as_ints(&x, members(comm, 0), C_##NAME##_c, rcounts, displs, NULL, NULL))
BLOCKING_C(Gatherv, (GATHERV_PARAMS, int root, MPI_Comm comm), (sbuf, scount, st, rbuf, rcounts, displs, rt, root, comm),
                  ARRAYS(GATHERV_AS(Gatherv)), coll_gatherv(&c, C_Gatherv_c, 0, sbuf, (int)scount, st, rbuf, x.v[0], x.v[1], rt, root, comm))
NONBLOCKING_C(Igatherv, (GATHERV_PARAMS, int root, MPI_Comm comm, MPI_Request *rq),
                     (sbuf, scount, st, rbuf, rcounts, displs, rt, root, comm, rq), ARRAYS(GATHERV_AS(Igatherv)),
                     coll_gatherv(&c, C_Igatherv_c, 1, sbuf, (int)scount, st, rbuf, x.v[0], x.v[1], rt, root, comm))

#define SCATTERV_PARAMS                                                                           \
  const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[], MPI_Datatype st, void *rbuf, MPI_Count rcount, \
      MPI_Datatype rt
#define SCATTERV_AS(NAME)                                                                         \
  FIT(rcount, NAME) && (!reads_root_arrays(root, comm) ||                                         \
                        as_ints(&x, members(comm, 0), C_##NAME##_c, scounts, displs, NULL, NULL))
BLOCKING_C(Scatterv, (SCATTERV_PARAMS, int root, MPI_Comm comm), (sbuf, scounts, displs, st, rbuf, rcount, rt, root, comm),
                  ARRAYS(SCATTERV_AS(Scatterv)), coll_scatterv(&c, C_Scatterv_c, 0, sbuf, x.v[0], x.v[1], st, rbuf, (int)rcount, rt, root, comm))
NONBLOCKING_C(Iscatterv, (SCATTERV_PARAMS, int root, MPI_Comm comm, MPI_Request *rq),
                     (sbuf, scounts, displs, st, rbuf, rcount, rt, root, comm, rq), ARRAYS(SCATTERV_AS(Iscatterv)),
                     coll_scatterv(&c, C_Iscatterv_c, 1, sbuf, x.v[0], x.v[1], st, rbuf, (int)rcount, rt, root, comm))

#define ALLGATHERV_AS(NAME) FIT(scount, NAME) && as_ints(&x, members(comm, 0), C_##NAME##_c, rcounts, displs, NULL, NULL)
BLOCKING_C(Allgatherv, (GATHERV_PARAMS, MPI_Comm comm), (sbuf, scount, st, rbuf, rcounts, displs, rt, comm),
                  ARRAYS(ALLGATHERV_AS(Allgatherv)), coll_allgatherv(&c, C_Allgatherv_c, 0, sbuf, (int)scount, st, rbuf, x.v[0], x.v[1], rt, comm))
NONBLOCKING_C(Iallgatherv, (GATHERV_PARAMS, MPI_Comm comm, MPI_Request *rq),
                     (sbuf, scount, st, rbuf, rcounts, displs, rt, comm, rq), ARRAYS(ALLGATHERV_AS(Iallgatherv)),
                     coll_allgatherv(&c, C_Iallgatherv_c, 1, sbuf, (int)scount, st, rbuf, x.v[0], x.v[1], rt, comm))

#define ALLTOALLV_PARAMS                                                                          \
  const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype st, void *rbuf,               \
      const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rt
#define ALLTOALLV_AS(NAME) as_ints(&x, members(comm, 0), C_##NAME##_c, scounts, sdispls, rcounts, rdispls)
BLOCKING_C(Alltoallv, (ALLTOALLV_PARAMS, MPI_Comm comm), (sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm),
                  ARRAYS(ALLTOALLV_AS(Alltoallv)),
                  coll_alltoallvw(&c, C_Alltoallv_c, 0, sbuf, x.v[0], x.v[1], st, NULL, rbuf, x.v[2], x.v[3], rt, NULL, comm))
NONBLOCKING_C(Ialltoallv, (ALLTOALLV_PARAMS, MPI_Comm comm, MPI_Request *rq),
                     (sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm, rq), ARRAYS(ALLTOALLV_AS(Ialltoallv)),
                     coll_alltoallvw(&c, C_Ialltoallv_c, 1, sbuf, x.v[0], x.v[1], st, NULL, rbuf, x.v[2], x.v[3], rt, NULL, comm))

#define ALLTOALLW_PARAMS                                                                          \
  const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], const MPI_Datatype sts[], void *rbuf,      \
      const MPI_Count rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rts[]
BLOCKING_C(Alltoallw, (ALLTOALLW_PARAMS, MPI_Comm comm), (sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm),
                  ARRAYS(ALLTOALLV_AS(Alltoallw)),
                  coll_alltoallvw(&c, C_Alltoallw_c, 0, sbuf, x.v[0], x.v[1], MPI_DATATYPE_NULL, sts, rbuf, x.v[2], x.v[3],
                                  MPI_DATATYPE_NULL, rts, comm))
NONBLOCKING_C(Ialltoallw, (ALLTOALLW_PARAMS, MPI_Comm comm, MPI_Request *rq),
                     (sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm, rq), ARRAYS(ALLTOALLV_AS(Ialltoallw)),
                     coll_alltoallvw(&c, C_Ialltoallw_c, 1, sbuf, x.v[0], x.v[1], MPI_DATATYPE_NULL, sts, rbuf, x.v[2],
                                     x.v[3], MPI_DATATYPE_NULL, rts, comm))

#define REDSCAT_AS(NAME) as_ints(&x, members(comm, 1), C_##NAME##_c, rcounts, NULL, NULL, NULL)
BLOCKING_C(Reduce_scatter, (const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype t, MPI_Op o, MPI_Comm comm),
                  (sbuf, rbuf, rcounts, t, o, comm), ARRAYS(REDSCAT_AS(Reduce_scatter)),
                  coll_reduce_scatter(&c, C_Reduce_scatter_c, 0, sbuf, rbuf, x.v[0], t, o, comm))
NONBLOCKING_C(Ireduce_scatter,
                     (const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype t, MPI_Op o, MPI_Comm comm,
                      MPI_Request *rq),
                     (sbuf, rbuf, rcounts, t, o, comm, rq), ARRAYS(REDSCAT_AS(Ireduce_scatter)),
                     coll_reduce_scatter(&c, C_Ireduce_scatter_c, 1, sbuf, rbuf, x.v[0], t, o, comm))

#pragma GCC visibility pop

#endif

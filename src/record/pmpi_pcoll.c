/* cdag — src/record/pmpi_pcoll.c: MPI-4's persistent collectives (MPI_Barrier_init,
 * Bcast_init, Gather_init, ..., the v- and w-forms, Reduce_scatter(_block)_init, Scan_init,
 * Exscan_init and the Neighbor_*_init forms), recorded at each MPI_Start or MPI_Startall as
 * the nonblocking collective that start begins (pmpi_nbcoll.c).
 *
 * The init keeps its arguments with the request (pend, kind P_COLL, persistent, inactive):
 * MPI binds them there, and the program may not change the buffers' places, counts or types
 * while the request lives. Each start describes the call from them as the MPI_I... call with
 * those arguments would be, before MPI may write its output (what it reads is checked by the
 * shadow there), and writes its line with `nonblocking`; the request then holds the call
 * until a completion call sees it complete, and stays, inactive, for the next start. The
 * arrays of counts, displacements and datatypes are read at each start, as MPI may. A
 * request freed while inactive forgets the arguments; one freed while active is counted as
 * a nonblocking collective's is (pmpi_nbcoll.c). Before this file, a start of such a request
 * was not recorded and not counted: the recording lost the collective silently. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "record/pmpi_coll.h"

/* The arguments of an init. */
struct pcoll {
  int call;                     /* C_*_init: which collective */
  const void *sbuf;
  void *rbuf;
  int scount, rcount, root;
  MPI_Datatype st, rt;
  const int *scounts, *sdispls, *rcounts, *rdispls;
  const MPI_Aint *sdispls_a, *rdispls_a;   /* the w-form of the neighbourhood alltoall */
  const MPI_Datatype *sts, *rts;
  MPI_Op op;
  MPI_Comm comm;
  rcomm *own;                   /* the communicator its starts are recorded on (comm_persistent) */
};

/* The starts of one MPI_Start or MPI_Startall that begin persistent collectives: their
   requests' operations (indexes into R->p) and their calls, described. */
struct pcoll_starts {
  int n;
  int64_t *at;
  coll *c;
};

/* The init returned rc with request *rq: its arguments kept with the request. */
static int init_done(int rc, const MPI_Request *rq, struct pcoll a) {
  if (rc != MPI_SUCCESS || !R || *rq == MPI_REQUEST_NULL) return rc;
  a.own = comm_persistent(a.comm, a.call);   /* first: every member counts its inits alike */
  struct pcoll *k = malloc(sizeof *k);
  if (!k) {
    comm_release(a.own);
    nomem(OOM_REQUESTS);
    unsupported_because(a.call, "no memory to keep the persistent collective's arguments: its starts are not recorded");
    return rc;
  }
  *k = a;
  if (pend_put(*rq, (pend){.kind = P_COLL, .persistent = 1, .comm = MPI_COMM_NULL, .pc = k})) {
    comm_release(k->own);
    free(k);
    unsupported_because(a.call, "no memory to keep the persistent collective's request: its starts are not recorded");
  }
  return rc;
}

void pcoll_forget(pend *p) {
  if (p->pc) comm_release(p->pc->own);
  free(p->pc);
  p->pc = NULL;
}

/* c: the call a start of a begins, as its nonblocking form would be described. */
static void describe_call(const struct pcoll *a, coll *c) {
  int k = a->call;
  switch (k) {
  case C_Barrier_init: coll_barrier(c, k, 1, a->comm); break;
  case C_Bcast_init: coll_bcast(c, k, 1, a->rbuf, a->rcount, a->rt, a->root, a->comm); break;
  case C_Gather_init:
    coll_gather(c, k, 1, a->sbuf, a->scount, a->st, a->rbuf, a->rcount, a->rt, a->root, a->comm);
    break;
  case C_Scatter_init:
    coll_scatter(c, k, 1, a->sbuf, a->scount, a->st, a->rbuf, a->rcount, a->rt, a->root, a->comm);
    break;
  case C_Allgather_init:
  case C_Alltoall_init:
    coll_blocks(c, k, 1, k == C_Allgather_init ? IR_COLL_ALLGATHER : IR_COLL_ALLTOALL, a->sbuf, a->scount, a->st,
                a->rbuf, a->rcount, a->rt, a->comm);
    break;
  case C_Reduce_init:
  case C_Allreduce_init:
  case C_Reduce_scatter_block_init:
    coll_reduction(c, k, 1,
                   k == C_Reduce_init ? IR_COLL_REDUCE : k == C_Allreduce_init ? IR_COLL_ALLREDUCE : IR_COLL_REDUCE_SCATTER_BLOCK,
                   a->sbuf, a->rbuf, a->rcount, a->rt, a->op, k == C_Reduce_init ? a->root : -1, a->comm);
    break;
  case C_Reduce_scatter_init: coll_reduce_scatter(c, k, 1, a->sbuf, a->rbuf, a->rcounts, a->rt, a->op, a->comm); break;
  case C_Scan_init:
  case C_Exscan_init:
    coll_prefix(c, k, 1, k == C_Scan_init ? IR_COLL_SCAN : IR_COLL_EXSCAN, a->sbuf, a->rbuf, a->rcount, a->rt, a->op,
                a->comm);
    break;
  case C_Gatherv_init:
    coll_gatherv(c, k, 1, a->sbuf, a->scount, a->st, a->rbuf, a->rcounts, a->rdispls, a->rt, a->root, a->comm);
    break;
  case C_Scatterv_init:
    coll_scatterv(c, k, 1, a->sbuf, a->scounts, a->sdispls, a->st, a->rbuf, a->rcount, a->rt, a->root, a->comm);
    break;
  case C_Allgatherv_init:
    coll_allgatherv(c, k, 1, a->sbuf, a->scount, a->st, a->rbuf, a->rcounts, a->rdispls, a->rt, a->comm);
    break;
  case C_Alltoallv_init:
  case C_Alltoallw_init:
    coll_alltoallvw(c, k, 1, a->sbuf, a->scounts, a->sdispls, a->st, a->sts, a->rbuf, a->rcounts, a->rdispls, a->rt,
                    a->rts, a->comm);
    break;
  case C_Neighbor_allgather_init:
    coll_neighbor_allgather(c, k, 1, a->sbuf, a->scount, a->st, a->rbuf, a->rcount, a->rt, a->comm);
    break;
  case C_Neighbor_allgatherv_init:
    coll_neighbor_allgatherv(c, k, 1, a->sbuf, a->scount, a->st, a->rbuf, a->rcounts, a->rdispls, a->rt, a->comm);
    break;
  case C_Neighbor_alltoall_init:
    coll_neighbor_alltoall(c, k, 1, a->sbuf, a->scount, a->st, a->rbuf, a->rcount, a->rt, a->comm);
    break;
  case C_Neighbor_alltoallv_init:
    coll_neighbor_alltoallv(c, k, 1, a->sbuf, a->scounts, a->sdispls, a->st, a->rbuf, a->rcounts, a->rdispls, a->rt,
                            a->comm);
    break;
  default:   /* C_Neighbor_alltoallw_init */
    coll_neighbor_alltoallw(c, k, 1, a->sbuf, a->scounts, a->sdispls_a, a->sts, a->rbuf, a->rcounts, a->rdispls_a,
                            a->rts, a->comm);
  }
}

/* The same, on a's own communicator. */
static void describe(const struct pcoll *a, coll *c) {
  R->coll_as = a->own;
  describe_call(a, c);
  R->coll_as = NULL;
}

/* The operation of request rq if it is a persistent collective, else -1. */
static int64_t persistent_coll(MPI_Request rq) {
  int64_t i = pend_find(rq);
  return i >= 0 && R->p[i].kind == P_COLL && R->p[i].pc ? i : -1;
}

struct pcoll_starts *pcoll_describe(const MPI_Request *rq, int n) {
  if (!R || n <= 0) return NULL;
  int m = 0;
  for (int j = 0; j < n; j++) m += persistent_coll(rq[j]) >= 0;
  if (!m) return NULL;
  struct pcoll_starts *s = malloc(sizeof *s);
  if (s) *s = (struct pcoll_starts){0, malloc((size_t)m * sizeof *s->at), malloc((size_t)m * sizeof *s->c)};
  if (!s || !s->at || !s->c) {
    if (s) free(s->at), free(s->c), free(s);
    nomem(OOM_REQUESTS);
    return NULL;
  }
  for (int j = 0; j < n; j++) {
    int64_t i = persistent_coll(rq[j]);
    if (i < 0) continue;
    s->at[s->n] = i;
    describe(R->p[i].pc, &s->c[s->n++]);
  }
  return s;
}

void pcoll_started(struct pcoll_starts *s, int rc) {
  if (!s) return;
  for (int j = 0; j < s->n; j++) {
    coll *c = &s->c[j];
    if (!c->x) continue;   /* not recorded (no phase, a communicator not recorded: counted) */
    coll_started(c);
    if (rc != MPI_SUCCESS) {   /* the line is written; nothing completes it */
      coll_drop(c);
      continue;
    }
    coll *k = malloc(sizeof *k);
    if (!k) {
      nomem(OOM_REQUESTS);
      nbcoll_complete_now(c);
      continue;
    }
    *k = *c;
    pend *p = &R->p[s->at[j]];
    p->buf = k, p->active = 1, p->phase = R->phase, p->seq = c->seq;
  }
  free(s->at);
  free(s->c);
  free(s);
}

#if MPI_VERSION >= 4   /* an MPI before 4.0 has no persistent collectives: nothing starts one */
#pragma GCC visibility push(default)

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Barrier_init);
  return init_done(PMPI_Barrier_init(comm, info, rq), rq, (struct pcoll){.call = C_Barrier_init, .comm = comm});
}

int MPI_Bcast_init(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Bcast_init);
  return init_done(PMPI_Bcast_init(buf, count, t, root, comm, info, rq), rq,
                   (struct pcoll){.call = C_Bcast_init, .rbuf = buf, .rcount = count, .rt = t, .root = root, .comm = comm});
}

int MPI_Gather_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Gather_init);
  return init_done(PMPI_Gather_init(sbuf, scount, st, rbuf, rcount, rt, root, comm, info, rq), rq,
                   (struct pcoll){.call = C_Gather_init, .sbuf = sbuf, .scount = scount, .st = st, .rbuf = rbuf,
                                  .rcount = rcount, .rt = rt, .root = root, .comm = comm});
}

int MPI_Scatter_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Scatter_init);
  return init_done(PMPI_Scatter_init(sbuf, scount, st, rbuf, rcount, rt, root, comm, info, rq), rq,
                   (struct pcoll){.call = C_Scatter_init, .sbuf = sbuf, .scount = scount, .st = st, .rbuf = rbuf,
                                  .rcount = rcount, .rt = rt, .root = root, .comm = comm});
}

int MPI_Allgather_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                       MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Allgather_init);
  return init_done(PMPI_Allgather_init(sbuf, scount, st, rbuf, rcount, rt, comm, info, rq), rq,
                   (struct pcoll){.call = C_Allgather_init, .sbuf = sbuf, .scount = scount, .st = st, .rbuf = rbuf,
                                  .rcount = rcount, .rt = rt, .comm = comm});
}

int MPI_Alltoall_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                      MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Alltoall_init);
  return init_done(PMPI_Alltoall_init(sbuf, scount, st, rbuf, rcount, rt, comm, info, rq), rq,
                   (struct pcoll){.call = C_Alltoall_init, .sbuf = sbuf, .scount = scount, .st = st, .rbuf = rbuf,
                                  .rcount = rcount, .rt = rt, .comm = comm});
}

/* Reduce_init, Allreduce_init, Reduce_scatter_block_init, Scan_init, Exscan_init: count
   elements of t (per block for the scatter), root for Reduce_init only. */
static int reduction_init(int call, int rc, MPI_Request *rq, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                          MPI_Op op, int root, MPI_Comm comm) {
  return init_done(rc, rq, (struct pcoll){.call = call, .sbuf = sbuf, .rbuf = rbuf, .rcount = count, .rt = t,
                                          .op = op, .root = root, .comm = comm});
}

int MPI_Reduce_init(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *rq) {
  COUNT(C_Reduce_init);
  return reduction_init(C_Reduce_init, PMPI_Reduce_init(sbuf, rbuf, count, t, op, root, comm, info, rq), rq, sbuf, rbuf,
                        count, t, op, root, comm);
}

int MPI_Allreduce_init(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                       MPI_Info info, MPI_Request *rq) {
  COUNT(C_Allreduce_init);
  return reduction_init(C_Allreduce_init, PMPI_Allreduce_init(sbuf, rbuf, count, t, op, comm, info, rq), rq, sbuf,
                        rbuf, count, t, op, -1, comm);
}

int MPI_Reduce_scatter_block_init(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *rq) {
  COUNT(C_Reduce_scatter_block_init);
  return reduction_init(C_Reduce_scatter_block_init,
                        PMPI_Reduce_scatter_block_init(sbuf, rbuf, count, t, op, comm, info, rq), rq, sbuf, rbuf,
                        count, t, op, -1, comm);
}

int MPI_Scan_init(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Info info,
                  MPI_Request *rq) {
  COUNT(C_Scan_init);
  return reduction_init(C_Scan_init, PMPI_Scan_init(sbuf, rbuf, count, t, op, comm, info, rq), rq, sbuf, rbuf, count,
                        t, op, -1, comm);
}

int MPI_Exscan_init(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Info info,
                    MPI_Request *rq) {
  COUNT(C_Exscan_init);
  return reduction_init(C_Exscan_init, PMPI_Exscan_init(sbuf, rbuf, count, t, op, comm, info, rq), rq, sbuf, rbuf,
                        count, t, op, -1, comm);
}

int MPI_Reduce_scatter_init(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype t, MPI_Op op,
                            MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Reduce_scatter_init);
  return init_done(PMPI_Reduce_scatter_init(sbuf, rbuf, rcounts, t, op, comm, info, rq), rq,
                   (struct pcoll){.call = C_Reduce_scatter_init, .sbuf = sbuf, .rbuf = rbuf, .rcounts = rcounts,
                                  .rt = t, .op = op, .comm = comm});
}

int MPI_Gatherv_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
                     const int displs[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Gatherv_init);
  return init_done(PMPI_Gatherv_init(sbuf, scount, st, rbuf, rcounts, displs, rt, root, comm, info, rq), rq,
                   (struct pcoll){.call = C_Gatherv_init, .sbuf = sbuf, .scount = scount, .st = st, .rbuf = rbuf,
                                  .rcounts = rcounts, .rdispls = displs, .rt = rt, .root = root, .comm = comm});
}

int MPI_Scatterv_init(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype st, void *rbuf,
                      int rcount, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Scatterv_init);
  return init_done(PMPI_Scatterv_init(sbuf, scounts, displs, st, rbuf, rcount, rt, root, comm, info, rq), rq,
                   (struct pcoll){.call = C_Scatterv_init, .sbuf = sbuf, .scounts = scounts, .sdispls = displs,
                                  .st = st, .rbuf = rbuf, .rcount = rcount, .rt = rt, .root = root, .comm = comm});
}

int MPI_Allgatherv_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
                        const int displs[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Allgatherv_init);
  return init_done(PMPI_Allgatherv_init(sbuf, scount, st, rbuf, rcounts, displs, rt, comm, info, rq), rq,
                   (struct pcoll){.call = C_Allgatherv_init, .sbuf = sbuf, .scount = scount, .st = st, .rbuf = rbuf,
                                  .rcounts = rcounts, .rdispls = displs, .rt = rt, .comm = comm});
}

int MPI_Alltoallv_init(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype st, void *rbuf,
                       const int rcounts[], const int rdispls[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info,
                       MPI_Request *rq) {
  COUNT(C_Alltoallv_init);
  return init_done(PMPI_Alltoallv_init(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm, info, rq), rq,
                   (struct pcoll){.call = C_Alltoallv_init, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls,
                                  .st = st, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rt = rt,
                                  .comm = comm});
}

int MPI_Alltoallw_init(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype sts[],
                       void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rts[], MPI_Comm comm,
                       MPI_Info info, MPI_Request *rq) {
  COUNT(C_Alltoallw_init);
  return init_done(PMPI_Alltoallw_init(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm, info, rq), rq,
                   (struct pcoll){.call = C_Alltoallw_init, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls,
                                  .st = MPI_DATATYPE_NULL, .sts = sts, .rbuf = rbuf, .rcounts = rcounts,
                                  .rdispls = rdispls, .rt = MPI_DATATYPE_NULL, .rts = rts, .comm = comm});
}

int MPI_Neighbor_allgather_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                                MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Neighbor_allgather_init);
  return init_done(PMPI_Neighbor_allgather_init(sbuf, scount, st, rbuf, rcount, rt, comm, info, rq), rq,
                   (struct pcoll){.call = C_Neighbor_allgather_init, .sbuf = sbuf, .scount = scount, .st = st,
                                  .rbuf = rbuf, .rcount = rcount, .rt = rt, .comm = comm});
}

int MPI_Neighbor_allgatherv_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
                                 const int displs[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Neighbor_allgatherv_init);
  return init_done(PMPI_Neighbor_allgatherv_init(sbuf, scount, st, rbuf, rcounts, displs, rt, comm, info, rq), rq,
                   (struct pcoll){.call = C_Neighbor_allgatherv_init, .sbuf = sbuf, .scount = scount, .st = st,
                                  .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs, .rt = rt, .comm = comm});
}

int MPI_Neighbor_alltoall_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                               MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Neighbor_alltoall_init);
  return init_done(PMPI_Neighbor_alltoall_init(sbuf, scount, st, rbuf, rcount, rt, comm, info, rq), rq,
                   (struct pcoll){.call = C_Neighbor_alltoall_init, .sbuf = sbuf, .scount = scount, .st = st,
                                  .rbuf = rbuf, .rcount = rcount, .rt = rt, .comm = comm});
}

int MPI_Neighbor_alltoallv_init(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype st,
                                void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rt, MPI_Comm comm,
                                MPI_Info info, MPI_Request *rq) {
  COUNT(C_Neighbor_alltoallv_init);
  return init_done(
      PMPI_Neighbor_alltoallv_init(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm, info, rq), rq,
      (struct pcoll){.call = C_Neighbor_alltoallv_init, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls,
                     .st = st, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rt = rt, .comm = comm});
}

int MPI_Neighbor_alltoallw_init(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sts[], void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                                const MPI_Datatype rts[], MPI_Comm comm, MPI_Info info, MPI_Request *rq) {
  COUNT(C_Neighbor_alltoallw_init);
  return init_done(
      PMPI_Neighbor_alltoallw_init(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm, info, rq), rq,
      (struct pcoll){.call = C_Neighbor_alltoallw_init, .sbuf = sbuf, .scounts = scounts, .sdispls_a = sdispls,
                     .sts = sts, .rbuf = rbuf, .rcounts = rcounts, .rdispls_a = rdispls, .rts = rts, .comm = comm});
}

#pragma GCC visibility pop
#endif

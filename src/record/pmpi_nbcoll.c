/* cdag — src/record/pmpi_nbcoll.c: the nonblocking collectives (MPI_Ibarrier, Ibcast,
 * Igather, Iscatter, Iallgather, Ialltoall, Ireduce, Iallreduce, Ireduce_scatter_block,
 * Ireduce_scatter, Iscan, Iexscan),
 * recorded as the graph format's nonblocking native collectives (docs/format.md).
 *
 * A call is described as its blocking form is (pmpi_coll.h) where the program starts it:
 * what it reads is checked by the shadow there (MPI forbids changing it until completion),
 * and its line carries `nonblocking`. Its request joins the point-to-point requests (pend,
 * kind P_COLL), so Wait, Test and their -all/-any/-some forms complete it like any other:
 * the completion's `wait` line names the call, what the call wrote is given to the shadow
 * at that position, and a derived datatype's copies out of its packing area come right
 * after it (the program may read the output only from then on).
 * A request freed with MPI_Request_free before it completed (MPI calls that erroneous for a
 * collective; MPICH refuses it, fatally unless errors return) leaves the call started and
 * never completed in the recording: no wait names it, its output is not the shadow's;
 * index.json counts the call as unsupported with that reason. (Keeping the request instead,
 * for an MPI that refuses the free and a program that waits later, would complete the wrong
 * call under an MPI that frees it and hands the handle out again.) A call completed in a later phase than it started leaves its phase without a
 * wait for it: its messages are there, the completion is not. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>

#include "record/pmpi_coll.h"

/* The call just handed to MPI (rc its return): its request kept until a completion call
   sees it complete; without a request (MPI_REQUEST_NULL, or no memory to keep it: counted)
   the output is the shadow's now. */
static void started(coll *c, int rc, MPI_Request *rq) {
  if (!c->x) return;
  coll_started(c);
  if (rc != MPI_SUCCESS) {   /* the line is written (as for a blocking call MPI refused): nothing completes it */
    coll_drop(c);
    return;
  }
  coll *k = *rq != MPI_REQUEST_NULL ? malloc(sizeof *k) : NULL;
  if (k) *k = *c;
  if (k && !pend_put(*rq, (pend){.kind = P_COLL, .active = 1, .live = 1, .newer = -1, .oldest = -1,
                                  .phase = R->phase, .seq = c->seq, .buf = k, .comm = MPI_COMM_NULL}))
    return;
  if (*rq != MPI_REQUEST_NULL && !k) nomem(OOM_REQUESTS);
  free(k);
  uint64_t done = next_seq();   /* no completion will say when: complete now, as a blocking call would */
  out("%d %llu wait %llu\n", R->phase, (unsigned long long)done, (unsigned long long)c->seq);
  coll_finish(c, done);
}

/* The call a P_COLL request holds (pend's buf). */
static coll *coll_of(const pend *p) { return (coll *)(uintptr_t)p->buf; }

void nbcoll_completed(pend *p, uint64_t done) {
  coll *k = coll_of(p);
  if (!k) return;
  if (p->phase == R->phase && R->active) coll_finish(k, done);
  else coll_drop(k);   /* the shadow is another phase's */
  free(k);
  p->buf = NULL;
}

void nbcoll_dropped(pend *p) {
  coll *k = coll_of(p);
  if (!k) return;
  if (p->active)
    unsupported_because(k->call, "its request freed before completion (MPI_Request_free): the completion is not recorded");
  coll_drop(k);
  free(k);
  p->buf = NULL;
}

#pragma GCC visibility push(default)

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ibarrier);
  coll c;
  coll_barrier(&c, C_Ibarrier, 1, comm);
  int rc = PMPI_Ibarrier(comm, rq);
  started(&c, rc, rq);
  return rc;
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ibcast);
  coll c;
  coll_bcast(&c, C_Ibcast, 1, buf, count, t, root, comm);
  int rc = PMPI_Ibcast(buf, count, t, root, comm, rq);
  started(&c, rc, rq);
  return rc;
}

int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Igather);
  coll c;
  coll_gather(&c, C_Igather, 1, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  int rc = PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, rq);
  started(&c, rc, rq);
  return rc;
}

int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iscatter);
  coll c;
  coll_scatter(&c, C_Iscatter, 1, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  int rc = PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, rq);
  started(&c, rc, rq);
  return rc;
}

int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iallgather);
  coll c;
  coll_blocks(&c, C_Iallgather, 1, IR_COLL_ALLGATHER, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  int rc = PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, rq);
  started(&c, rc, rq);
  return rc;
}

int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ialltoall);
  coll c;
  coll_blocks(&c, C_Ialltoall, 1, IR_COLL_ALLTOALL, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  int rc = PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, rq);
  started(&c, rc, rq);
  return rc;
}

int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm,
                MPI_Request *rq) {
  COUNT(C_Ireduce);
  coll c;
  coll_reduction(&c, C_Ireduce, 1, IR_COLL_REDUCE, sbuf, rbuf, count, t, o, root, comm);
  int rc = PMPI_Ireduce(sbuf, rbuf, count, t, o, root, comm, rq);
  started(&c, rc, rq);
  return rc;
}

int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iallreduce);
  coll c;
  coll_reduction(&c, C_Iallreduce, 1, IR_COLL_ALLREDUCE, sbuf, rbuf, count, t, o, -1, comm);
  int rc = PMPI_Iallreduce(sbuf, rbuf, count, t, o, comm, rq);
  started(&c, rc, rq);
  return rc;
}

int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm,
                              MPI_Request *rq) {
  COUNT(C_Ireduce_scatter_block);
  coll c;
  coll_reduction(&c, C_Ireduce_scatter_block, 1, IR_COLL_REDUCE_SCATTER_BLOCK, sbuf, rbuf, count, t, o, -1, comm);
  int rc = PMPI_Ireduce_scatter_block(sbuf, rbuf, count, t, o, comm, rq);
  started(&c, rc, rq);
  return rc;
}

int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype t, MPI_Op o, MPI_Comm comm,
                        MPI_Request *rq) {
  COUNT(C_Ireduce_scatter);
  coll c;
  uint64_t *v = NULL;
  if (coll_start(&c, comm, C_Ireduce_scatter, 1)) v = coll_reduce_scatter(&c, C_Ireduce_scatter, sbuf, rbuf, rcounts, t, o);
  int rc = PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, t, o, comm, rq);
  started(&c, rc, rq);
  free(v);
  return rc;
}

int MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iscan);
  coll c;
  if (coll_start(&c, comm, C_Iscan, 1)) coll_prefix(&c, IR_COLL_SCAN, C_Iscan, sbuf, rbuf, count, t, o);
  int rc = PMPI_Iscan(sbuf, rbuf, count, t, o, comm, rq);
  started(&c, rc, rq);
  return rc;
}

int MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iexscan);
  coll c;
  if (coll_start(&c, comm, C_Iexscan, 1)) coll_prefix(&c, IR_COLL_EXSCAN, C_Iexscan, sbuf, rbuf, count, t, o);
  int rc = PMPI_Iexscan(sbuf, rbuf, count, t, o, comm, rq);
  started(&c, rc, rq);
  return rc;
}

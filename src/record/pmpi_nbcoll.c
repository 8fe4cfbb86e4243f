/* cdag — src/record/pmpi_nbcoll.c: the nonblocking collectives (MPI_Ibarrier, Ibcast,
 * Igather, Iscatter, Iallgather, Ialltoall, Ireduce, Iallreduce, Ireduce_scatter_block,
 * Ireduce_scatter, Iscan, Iexscan, the v- and w-forms Igatherv, Iscatterv, Iallgatherv,
 * Ialltoallv, Ialltoallw, and the neighbourhood ones MPI_Ineighbor_allgather(v) and
 * _alltoall(v,w)), recorded as the graph format's nonblocking native collectives
 * (docs/format.md).
 *
 * A call is described as its blocking form is (pmpi_coll.h) where the program starts it:
 * what it reads is checked by the shadow there (MPI forbids changing it until completion),
 * its counts, displacements and datatypes are read there too (what is kept is the byte
 * ranges they meant, no pointer to the program's arrays, and a datatype the program frees
 * before completion is laid out already), and its line carries `nonblocking`. Its request
 * joins the point-to-point requests (pend, kind P_COLL), so Wait, Test and their
 * -all/-any/-some forms complete it like any other:
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
void nbcoll_started(coll *c, int rc, MPI_Request *rq) {
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
  nbcoll_complete_now(c);
}

void nbcoll_complete_now(coll *c) {
  if (c->ic) {
    c->nonblocking = 0;   /* its own wait line */
    coll_finish(c, 0);
    return;
  }
  uint64_t done = next_seq();
  out("%d %llu wait %llu\n", R->phase, (unsigned long long)done, (unsigned long long)c->seq);
  coll_finish(c, done);
}

/* The call a P_COLL request holds (pend's buf). */
static coll *coll_of(const pend *p) { return (coll *)(uintptr_t)p->buf; }

int nbcoll_completed(pend *p, uint64_t done) {
  coll *k = coll_of(p);
  if (!k) return 1;
  int named = !k->ic;   /* an intercommunicator's call names its messages itself */
  if (p->phase == R->phase && R->active) {
    coll_finish(k, done);
  } else {
    if (k->ic) ic_finish(k, &done);   /* its messages stay in their phase */
    coll_drop(k);   /* the shadow is another phase's */
  }
  free(k);
  p->buf = NULL;
  return named;
}

void nbcoll_dropped(pend *p) {
  coll *k = coll_of(p);
  if (k) {
    if (p->active)
      unsupported_because(k->call, "its request freed before completion (MPI_Request_free): the completion is not recorded");
    coll_drop(k);
    free(k);
    p->buf = NULL;
  }
  pcoll_forget(p);   /* after the call: it may name the persistent collective's communicator */
}

#pragma GCC visibility push(default)

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ibarrier);
  coll c;
  coll_barrier(&c, C_Ibarrier, 1, comm);
  int rc = PMPI_Ibarrier(comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ibcast);
  coll c;
  coll_bcast(&c, C_Ibcast, 1, buf, count, t, root, comm);
  int rc = PMPI_Ibcast(buf, count, t, root, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Igather);
  coll c;
  coll_gather(&c, C_Igather, 1, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  int rc = PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iscatter);
  coll c;
  coll_scatter(&c, C_Iscatter, 1, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  int rc = PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iallgather);
  coll c;
  coll_blocks(&c, C_Iallgather, 1, IR_COLL_ALLGATHER, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  int rc = PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ialltoall);
  coll c;
  coll_blocks(&c, C_Ialltoall, 1, IR_COLL_ALLTOALL, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  int rc = PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm,
                MPI_Request *rq) {
  COUNT(C_Ireduce);
  coll c;
  coll_reduction(&c, C_Ireduce, 1, IR_COLL_REDUCE, sbuf, rbuf, count, t, o, root, comm);
  int rc = PMPI_Ireduce(sbuf, rbuf, count, t, o, root, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iallreduce);
  coll c;
  coll_reduction(&c, C_Iallreduce, 1, IR_COLL_ALLREDUCE, sbuf, rbuf, count, t, o, -1, comm);
  int rc = PMPI_Iallreduce(sbuf, rbuf, count, t, o, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm,
                              MPI_Request *rq) {
  COUNT(C_Ireduce_scatter_block);
  coll c;
  coll_reduction(&c, C_Ireduce_scatter_block, 1, IR_COLL_REDUCE_SCATTER_BLOCK, sbuf, rbuf, count, t, o, -1, comm);
  int rc = PMPI_Ireduce_scatter_block(sbuf, rbuf, count, t, o, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype t, MPI_Op o, MPI_Comm comm,
                        MPI_Request *rq) {
  COUNT(C_Ireduce_scatter);
  coll c;
  coll_reduce_scatter(&c, C_Ireduce_scatter, 1, sbuf, rbuf, rcounts, t, o, comm);
  int rc = PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, t, o, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iscan);
  coll c;
  coll_prefix(&c, C_Iscan, 1, IR_COLL_SCAN, sbuf, rbuf, count, t, o, comm);
  int rc = PMPI_Iscan(sbuf, rbuf, count, t, o, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iexscan);
  coll c;
  coll_prefix(&c, C_Iexscan, 1, IR_COLL_EXSCAN, sbuf, rbuf, count, t, o, comm);
  int rc = PMPI_Iexscan(sbuf, rbuf, count, t, o, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Igatherv);
  coll c;
  coll_gatherv(&c, C_Igatherv, 1, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
  int rc = PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iscatterv);
  coll c;
  coll_scatterv(&c, C_Iscatterv, 1, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
  int rc = PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                    const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Iallgatherv);
  coll c;
  coll_allgatherv(&c, C_Iallgatherv, 1, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  int rc = PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ialltoallv);
  coll c;
  coll_alltoallvw(&c, C_Ialltoallv, 1, sbuf, scounts, sdispls, stype, NULL, rbuf, rcounts, rdispls, rtype, NULL, comm);
  int rc = PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void *rbuf,
                   const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                   MPI_Request *rq) {
  COUNT(C_Ialltoallw);
  coll c;
  coll_alltoallvw(&c, C_Ialltoallw, 1, sbuf, scounts, sdispls, MPI_DATATYPE_NULL, stypes, rbuf, rcounts, rdispls,
                  MPI_DATATYPE_NULL, rtypes, comm);
  int rc = PMPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ineighbor_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                            MPI_Datatype rtype, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ineighbor_allgather);
  coll c;
  coll_neighbor_allgather(&c, C_Ineighbor_allgather, 1, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  int rc = PMPI_Ineighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ineighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                             const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ineighbor_allgatherv);
  coll c;
  coll_neighbor_allgatherv(&c, C_Ineighbor_allgatherv, 1, sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                           comm);
  int rc = PMPI_Ineighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ineighbor_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                           MPI_Datatype rtype, MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ineighbor_alltoall);
  coll c;
  coll_neighbor_alltoall(&c, C_Ineighbor_alltoall, 1, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  int rc = PMPI_Ineighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ineighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                            void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                            MPI_Request *rq) {
  COUNT(C_Ineighbor_alltoallv);
  coll c;
  coll_neighbor_alltoallv(&c, C_Ineighbor_alltoallv, 1, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
                          rtype, comm);
  int rc = PMPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

int MPI_Ineighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request *rq) {
  COUNT(C_Ineighbor_alltoallw);
  coll c;
  coll_neighbor_alltoallw(&c, C_Ineighbor_alltoallw, 1, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                          rtypes, comm);
  int rc = PMPI_Ineighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, rq);
  nbcoll_started(&c, rc, rq);
  return rc;
}

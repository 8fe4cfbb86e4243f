/* cdag — src/record/pmpi_intercoll.c: the collectives on intercommunicators, blocking and
 * nonblocking, recorded as the messages they move between the two groups (MPI-3.1 5.2.2).
 *
 * The graph format's collectives are over one group, so an intercommunicator's call is its
 * point-to-point traffic: a rooted call between its root (MPI_ROOT) and every rank of the
 * other group, the other ranks of the root's group (MPI_PROC_NULL) moving nothing; the
 * all-to-all calls between every rank and every rank of the other group; a barrier as empty
 * messages both ways. The sends are posted where the call starts and the receives too (each
 * at a position of its own, in call order, so matching pairs them as MPI did); the completion
 * (the blocking call's return, or the Wait or Test that sees the request complete) writes
 * the receives and one wait line naming every message. Their tag is MPI_TAG_UB + 1, which no
 * message of the program can carry (none is left when MPI_TAG_UB is 2^31 - 1: the call is
 * then counted unsupported).
 *
 * Reductions (reduce, allreduce, reduce_scatter_block, reduce_scatter) move every input to
 * the ranks of the other group whose result combines it, into a scratch area (a packing
 * area), and each result is a computation of the whole area at the completion, as a
 * reduction cdag cannot combine is (pmpi_coll.c, coll_combined): any op and datatype.
 * reduce_scatter_block sends block j of an input (local size x recvcount elements, as MPICH
 * reads it) to rank j of the other group. reduce_scatter's blocks are sized by the other
 * group's recvcounts, which a sender does not know: each input goes whole to every rank of
 * the other group, so the recording names more bytes than MPI moved (docs/recording.md). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "record/pmpi_coll.h"

/* A receive posted by the call, written at its completion. */
typedef struct {
  uint64_t at;          /* its position (the post) */
  void *buf;
  int count, src;
  uint64_t bytes;
  MPI_Datatype t;
  held_type *held;      /* t's decoding, which the program may free before completion */
} ic_recv;

struct intercoll {
  int tag;
  int phase;            /* where the call started: its receives belong there */
  MPI_Comm comm;
  rcomm *x;             /* held from the start to the completion */
  uint64_t *sends;      /* the sends' positions */
  int64_t nsends, sendcap;
  ic_recv *recvs;
  int64_t nrecvs, recvcap;
};

/* The tag of the calls' messages, 0 if none is free (counted). */
static int inter_tag(MPI_Comm comm, int call) {
  int *ub = NULL, flag = 0;
  PMPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag);
  if (flag && ub && *ub < INT32_MAX) return *ub + 1;
  unsupported_because(call, "a collective on an intercommunicator whose MPI_TAG_UB leaves no tag free");
  return 0;
}

int ic_start(coll *c, MPI_Comm comm) {
  int tag = inter_tag(comm, c->call);
  intercoll *ic = tag ? calloc(1, sizeof *ic) : NULL;
  if (tag && !ic) nomem(OOM_CALLS);
  if (!ic) return 0;
  ic->tag = tag;
  ic->phase = R->phase;
  ic->comm = comm;
  ic->x = comm_hold(comm);
  c->ic = ic;
  return 1;
}

/* The call cannot be recorded after all: counted, nothing kept. */
static int ic_refuse(coll *c, const char *why) {
  unsupported_because(c->call, why);
  coll_drop(c);
  return 0;
}

int ic_undefined(coll *c) { return ic_refuse(c, "a collective MPI does not define on intercommunicators"); }

/* count t at buf to rank dest of the other group, posted now. */
static void ic_send(coll *c, const void *buf, int count, MPI_Datatype t, int dest) {
  intercoll *ic = c->ic;
  if (base_grow((void **)&ic->sends, ic->nsends, &ic->sendcap, 1, sizeof *ic->sends, "intercommunicator call")) {
    nomem(OOM_CALLS);
    return;
  }
  uint64_t at = record_send(buf, count, t, NULL, dest, ic->tag, ic->comm, ic->x, c->call, 0);
  if (at) ic->sends[ic->nsends++] = at;
}

/* count t into buf from rank src of the other group: posted now, written at completion. */
static void ic_post(coll *c, void *buf, int count, MPI_Datatype t, int src) {
  intercoll *ic = c->ic;
  if (base_grow((void **)&ic->recvs, ic->nrecvs, &ic->recvcap, 1, sizeof *ic->recvs, "intercommunicator call")) {
    nomem(OOM_CALLS);
    return;
  }
  held_type *held = type_hold(t);
  if (!held) {
    not_recorded(c->call);
    return;
  }
  ic->recvs[ic->nrecvs++] = (ic_recv){next_seq(), buf, count, src, count > 0 ? type_bytes(count, t) : 0, t, held};
}

/* Block i at buf: by integer arithmetic, as buf may be MPI_BOTTOM (absolute addresses). */
static char *at(const void *buf, int64_t i, MPI_Aint step) { return (char *)((uintptr_t)buf + (uintptr_t)(i * step)); }

/* MPI_ROOT, MPI_PROC_NULL or a rank of the other group (else the call fails in MPI: not
   recorded, counted). */
static int root_ok(coll *c, int root) {
  if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->x->n)) return 1;
  return ic_refuse(c, "a root that is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the other group");
}

/* A buffer this rank sends from or receives into that is MPI_IN_PLACE, which MPI does not
   allow on an intercommunicator: refused (counted). */
static int in_place(coll *c, const void *buf) {
  return buf == MPI_IN_PLACE && !ic_refuse(c, "MPI_IN_PLACE on an intercommunicator (MPI does not allow it)");
}

int ic_barrier(coll *c) {
  for (int r = 0; r < c->x->n; r++) ic_send(c, NULL, 0, MPI_BYTE, r);
  for (int r = 0; r < c->x->n; r++) ic_post(c, NULL, 0, MPI_BYTE, r);
  return 1;
}

int ic_bcast(coll *c, void *buf, int count, MPI_Datatype t, int root) {
  if (!root_ok(c, root)) return 0;
  if (root == MPI_ROOT)
    for (int r = 0; r < c->x->n; r++) ic_send(c, buf, count, t, r);
  else if (root >= 0)
    ic_post(c, buf, count, t, root);
  return 1;
}

/* gather (rcounts NULL: rcount each, at r * rcount) and gatherv. */
int ic_gatherv(coll *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, const int *rcounts,
               const int *displs, MPI_Datatype rtype, int root) {
  if (!root_ok(c, root) || (root >= 0 && in_place(c, sbuf))) return 0;
  if (root >= 0) ic_send(c, sbuf, scount, stype, root);
  MPI_Aint ext = root == MPI_ROOT ? type_extent(rtype) : 0;
  for (int r = 0; root == MPI_ROOT && r < c->x->n; r++)
    ic_post(c, at(rbuf, rcounts ? displs[r] : (int64_t)r * rcount, ext), rcounts ? rcounts[r] : rcount, rtype, r);
  return 1;
}

/* scatter (scounts NULL: scount each, from r * scount) and scatterv. */
int ic_scatterv(coll *c, const void *sbuf, int scount, const int *scounts, const int *displs, MPI_Datatype stype,
                void *rbuf, int rcount, MPI_Datatype rtype, int root) {
  if (!root_ok(c, root) || (root >= 0 && in_place(c, rbuf))) return 0;
  MPI_Aint ext = root == MPI_ROOT ? type_extent(stype) : 0;
  for (int r = 0; root == MPI_ROOT && r < c->x->n; r++)
    ic_send(c, at(sbuf, scounts ? displs[r] : (int64_t)r * scount, ext), scounts ? scounts[r] : scount, stype, r);
  if (root >= 0) ic_post(c, rbuf, rcount, rtype, root);
  return 1;
}

/* allgather (rcounts NULL) and allgatherv: this rank's block to every rank of the other
   group, block r from its rank r. */
int ic_allgatherv(coll *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  const int *rcounts, const int *displs, MPI_Datatype rtype) {
  if (in_place(c, sbuf)) return 0;
  MPI_Aint ext = type_extent(rtype);
  for (int r = 0; r < c->x->n; r++) ic_send(c, sbuf, scount, stype, r);
  for (int r = 0; r < c->x->n; r++)
    ic_post(c, at(rbuf, rcounts ? displs[r] : (int64_t)r * rcount, ext), rcounts ? rcounts[r] : rcount, rtype, r);
  return 1;
}

/* alltoall (scounts, rcounts NULL), alltoallv (per-rank counts, displacements in extents)
   and alltoallw (sts, rts given: per-rank types, displacements in bytes). */
int ic_alltoallvw(coll *c, const void *sbuf, int scount, const int *scounts, const int *sdispls, MPI_Datatype st,
                  const MPI_Datatype *sts, void *rbuf, int rcount, const int *rcounts, const int *rdispls,
                  MPI_Datatype rt, const MPI_Datatype *rts) {
  if (in_place(c, sbuf)) return 0;
  MPI_Aint sext = sts ? 1 : type_extent(st), rext = rts ? 1 : type_extent(rt);
  for (int r = 0; r < c->x->n; r++)
    ic_send(c, at(sbuf, scounts ? sdispls[r] : (int64_t)r * scount, sext), scounts ? scounts[r] : scount,
            sts ? sts[r] : st, r);
  for (int r = 0; r < c->x->n; r++)
    ic_post(c, at(rbuf, rcounts ? rdispls[r] : (int64_t)r * rcount, rext), rcounts ? rcounts[r] : rcount,
            rts ? rts[r] : rt, r);
  return 1;
}

/* Receives of `bytes` from every rank of the other group into a scratch area, whose whole
   the result (c->out) is computed from at completion. */
static int ic_combined(coll *c, uint64_t bytes) {
  if (bytes > INT32_MAX) return ic_refuse(c, "a reduction's input of more than 2^31 - 1 bytes");
  uint64_t area = bytes ? pack_area(bytes * (uint64_t)c->x->n) : 0;
  for (int r = 0; r < c->x->n; r++) ic_post(c, (void *)(uintptr_t)(area + (uint64_t)r * bytes), (int)bytes, MPI_BYTE, r);
  c->calc_at = area;
  c->calc_len = bytes * (uint64_t)c->x->n;
  return 1;
}

/* reduce (root: MPI_ROOT, MPI_PROC_NULL or a rank of the other group), allreduce,
   reduce_scatter_block (count: the recvcount) and reduce_scatter (rcounts). */
int ic_reduction(coll *c, int kind, const void *sbuf, void *rbuf, int count, const int *rcounts, MPI_Datatype t,
                 int root) {
  if (kind == IR_COLL_REDUCE && (!root_ok(c, root) || root == MPI_PROC_NULL)) return root == MPI_PROC_NULL;
  int local = 0, me = c->me, sends = kind != IR_COLL_REDUCE || root >= 0;   /* MPI_PROC_NULL's arguments: none read */
  PMPI_Comm_size(c->ic->comm, &local);
  if (sends && sbuf == MPI_IN_PLACE) return ic_refuse(c, "MPI_IN_PLACE on an intercommunicator (MPI does not allow it)");
  int64_t in = count;   /* elements of each input */
  if (kind == IR_COLL_REDUCE_SCATTER_BLOCK) in = (int64_t)local * count;
  if (kind == IR_COLL_REDUCE_SCATTER) {
    in = 0;
    for (int r = 0; r < local; r++) in += rcounts[r];
  }
  if (in > INT32_MAX) return ic_refuse(c, "an input of more than 2^31 - 1 elements");
  if (kind == IR_COLL_REDUCE_SCATTER_BLOCK && in % c->x->n)
    return ic_refuse(c, "an input that does not split into a block per rank of the other group");
  int64_t block = kind == IR_COLL_REDUCE_SCATTER_BLOCK ? in / c->x->n : in;   /* what each remote rank gets */
  int mine = kind == IR_COLL_REDUCE_SCATTER ? rcounts[me] : count;                /* elements of the result */
  int result = kind != IR_COLL_REDUCE || root == MPI_ROOT;
  if (result && side_of(&c->out, rbuf, mine, t)) return ic_refuse(c, "its result's datatype cannot be laid out");
  MPI_Aint ext = type_extent(t);
  if (kind == IR_COLL_REDUCE && root >= 0) ic_send(c, sbuf, count, t, root);
  for (int r = 0; kind != IR_COLL_REDUCE && r < c->x->n; r++)
    ic_send(c, at(sbuf, kind == IR_COLL_REDUCE_SCATTER_BLOCK ? r * block : 0, ext), (int)block, t, r);
  if (!result) return 1;
  /* what each remote rank sends this one: its whole input for reduce_scatter, else the
     result's elements */
  return ic_combined(c, type_bytes(kind == IR_COLL_REDUCE_SCATTER ? (int)in : mine, t));
}

/* At completion (position done; a blocking call takes its own after MPI returned, *done
   set to it): the receives written in the phase the call started in, every message named by
   the wait line when that phase is still the one recorded (a blocking call's line written
   here). A call completed in a later phase keeps its messages, without a wait, as a
   point-to-point receive does. */
void ic_finish(coll *c, uint64_t *done) {
  intercoll *ic = c->ic;
  int blocking = !c->nonblocking, now = ic->phase == R->phase && R->active;
  if (blocking) {
    *done = next_seq();
    R->nwait = 0;
  }
  for (int64_t i = 0; now && i < ic->nsends; i++) wait_note(ic->sends[i]);
  for (int64_t i = 0; i < ic->nrecvs; i++) {
    ic_recv *v = &ic->recvs[i];
    MPI_Status st;
    memset(&st, 0, sizeof st);
    st.MPI_SOURCE = v->src, st.MPI_TAG = ic->tag;
    PMPI_Status_set_elements_x(&st, MPI_BYTE, (MPI_Count)v->bytes);
    PMPI_Status_set_cancelled(&st, 0);
    if (record_recv(ic->phase, v->at, v->buf, v->count, v->t, v->held, ic->comm, ic->x, &st, *done, 0, c->call) && now)
      wait_note(v->at);
  }
  if (blocking) wait_line(*done);
}

void ic_free(coll *c) {
  intercoll *ic = c->ic;
  if (!ic) return;
  for (int64_t i = 0; i < ic->nrecvs; i++) type_release(ic->recvs[i].held);
  comm_release(ic->x);
  free(ic->sends);
  free(ic->recvs);
  free(ic);
  c->ic = NULL;
}

/* cdag — src/record/pmpi_coll.c: the collectives, recorded as the graph format's native
 * collective operations (pmpi.h; the lines: record.h): barrier, bcast, gather, scatter,
 * allgather, alltoall, reduce, allreduce and reduce_scatter_block, the kinds
 * ir/coll_kinds.h marks native. A reduction on MPI's predefined types and ops is native; one
 * cdag cannot combine (a user op, a derived datatype) is its data movement and a computation
 * (coll_combined). Each kind's call is described once here (pmpi_coll.h), for these blocking
 * wrappers and for the nonblocking ones of pmpi_nbcoll.c; on an intercommunicator the
 * description hands over to pmpi_intercoll.c (its messages). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/pmpi_coll.h"

/* ---- collectives ----
 * Each buffer of a collective is one side: its byte ranges (a derived datatype's, flattened;
 * members' blocks follow each other as in MPI), moved through a packing area when there is
 * more than one, so every member records the call whatever datatype it passed (MPI only
 * asks that the type signatures match). A side read by the call is checked by the shadow
 * before it, a side it wrote is given to the shadow after it. */

/* `count` elements of t at buf: CDAG_OK, or -1 (unrecordable: R->unsupported counts it). */
int side_of(side *sd, const void *buf, int64_t count, MPI_Datatype t) {
  if (count > INT32_MAX) return -1;
  sd->bytes = count > 0 ? type_bytes((int)count, t) : 0;
  sd->addr = (uint64_t)(uintptr_t)buf;
  sd->type = type_name(t);
  if (!sd->bytes) return 0;
  if (layout(buf, (int)count, t, NULL, sd->bytes, &sd->r)) return -1;
  if (sd->r.n == 1) sd->addr = sd->r.a[0];
  else sd->addr = pack_area(sd->bytes);
  return 0;
}

static void side_before(const side *in, uint64_t seq) {
  if (!in->bytes) return;
  check_sent(&in->r, seq, in->type);
  if (in->r.n > 1) pack_copies(&in->r, in->addr, seq - REC_SEQ_STEP / 4, 1);
}

static void side_after(const side *out, uint64_t seq, uint64_t posted) {
  if (!out->bytes) return;
  if (out->r.n > 1) {
    uint64_t first = rec_shadow_reserve(R->sh, seq, (uint32_t)out->r.ncopies);   /* copies, not ranges */
    if (first) pack_copies(&out->r, out->addr, first, 0);
  }
  noted_recv(out->r.a, out->r.l, out->r.n, seq, posted, out->type);
}

void side_free(side *sd) {
  free(sd->r.a);
  free(sd->r.l);
}

/* Starts recording a call on comm: NULL-free x when it cannot be recorded. */
int coll_start(coll *c, MPI_Comm comm, int call, int nonblocking) {
  memset(c, 0, sizeof *c);
  c->call = call;
  c->nonblocking = nonblocking;
  if (R) R->oom_now = 0;
  c->x = !recording() ? NULL : R->coll_as ? R->coll_as : usable(comm, call);
  if (c->x && c->x->inter && !ic_start(c, comm)) c->x = NULL;   /* its messages (pmpi_intercoll.c) */
  if (c->x) PMPI_Comm_rank(comm, &c->me);
  return c->x != NULL;
}

/* The sides are set: 0 and the call's position, or -1 if a side cannot be recorded. */
int coll_ready(coll *c, int call, int ok) {
  if (!ok) {
    not_recorded(call);
    side_free(&c->in);
    side_free(&c->out);
    c->x = NULL;
    return -1;
  }
  c->seq = next_seq();
  side_before(&c->in, c->seq);
  return 0;
}

/* The call's line: kind IR_COLL_*, root a world rank (-1 unrooted), count bytes per block
   or elements of (type, rop); the sides' addresses as the format places them. */
static void coll_line(const coll *c, int kind, int root, uint64_t count, int type, int rop) {
  ir_call call = {.op = -1, .kind = (uint8_t)kind, .comm = c->x->id, .root = root, .type = type, .rop = rop,
                  .in = c->in.addr, .out = c->out.addr, .count = count, .nonblocking = (uint8_t)c->nonblocking};
  ir_line l = line_of(IR_LINE_COLL);
  l.call = &call;
  l.rank = R->rank;
  out_op(R->phase, c->seq, &l);
}

void coll_started(coll *c) {
  side_free(&c->in);
  c->in.r = (ranges){0};
}

/* A combined reduction's computation, right after the completion at done (before the
   copies out of a packing area): its output from the gathered inputs. 0 if the completion
   has no position left for it: the output is then not the recording's (the shadow finds it
   computed where it is next sent, as any byte the recording does not hold). */
static int combine(const coll *c, uint64_t done) {
  uint64_t at = rec_shadow_reserve(R->sh, done, 1);
  if (!at) return 0;
  ir_line l = line_of(IR_CALC);
  l.bytes = 0;   /* its time is the MPI call's */
  l.rlen = c->calc_len;
  l.addr2 = c->calc_at;
  l.wlen = c->out.bytes;
  l.addr = c->out.addr;
  out_op(R->phase, at, &l);
  return 1;
}

void coll_finish(coll *c, uint64_t done) {
  if (!c->x) return;
  if (c->ic) ic_finish(c, &done);
  if (!c->calc_len || !c->out.bytes || combine(c, done)) side_after(&c->out, done, c->seq);
  coll_drop(c);
}

void coll_done(coll *c) { coll_finish(c, c->seq); }

void coll_returned(coll *c, int rc) {
  if (rc == MPI_SUCCESS) coll_done(c);
  else coll_drop(c);   /* MPI refused the call: it wrote nothing, and received nothing */
}

void coll_drop(coll *c) {
  ic_free(c);
  side_free(&c->in);
  side_free(&c->out);
  c->in.r = c->out.r = (ranges){0};
  c->x = NULL;
}

int coll_barrier(coll *c, int call, int nonblocking, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_barrier(c);
  if (coll_ready(c, call, 1)) return 0;
  coll_line(c, IR_COLL_BARRIER, -1, 0, 0, 0);
  return 1;
}

int coll_bcast(coll *c, int call, int nonblocking, void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_bcast(c, buf, count, t, root);
  side *sd = c->me == root ? &c->in : &c->out;
  if (coll_ready(c, call, !side_of(sd, buf, count, t))) return 0;
  c->out.addr = sd->addr;   /* the format's bcast names its one buffer `addr` (the call's out) */
  coll_line(c, IR_COLL_BCAST, world_of(c->x, root), sd->bytes, 0, 0);
  return 1;
}

int coll_gather(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_gatherv(c, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype, root);
  int root_me = c->me == root, ok;
  if (sbuf == MPI_IN_PLACE)   /* the root's own block of rbuf */
    ok = !side_of(&c->in, (char *)rbuf + (int64_t)c->me * rcount * (int64_t)type_extent(rtype), rcount, rtype);
  else
    ok = !side_of(&c->in, sbuf, scount, stype);
  if (root_me) ok = ok && !side_of(&c->out, rbuf, (int64_t)rcount * c->x->n, rtype);
  if (coll_ready(c, call, ok)) return 0;
  coll_line(c, IR_COLL_GATHER, world_of(c->x, root), c->in.bytes, 0, 0);
  return 1;
}

int coll_scatter(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                 int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_scatterv(c, sbuf, scount, NULL, NULL, stype, rbuf, rcount, rtype, root);
  int root_me = c->me == root, ok = 1;
  if (root_me) ok = !side_of(&c->in, sbuf, (int64_t)scount * c->x->n, stype);
  if (rbuf == MPI_IN_PLACE)
    ok = ok && !side_of(&c->out, (const char *)sbuf + (int64_t)c->me * scount * (int64_t)type_extent(stype), scount, stype);
  else
    ok = ok && !side_of(&c->out, rbuf, rcount, rtype);
  if (coll_ready(c, call, ok)) return 0;
  coll_line(c, IR_COLL_SCATTER, world_of(c->x, root), c->out.bytes, 0, 0);
  return 1;
}

/* allgather and alltoall: `rcount` elements of rtype per member. */
int coll_blocks(coll *c, int call, int nonblocking, int kind, const void *sbuf, int scount, MPI_Datatype stype,
                void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm) {
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  int a2a = ir_coll_get(kind)->send == IR_SLOTS_MEMBER, n = c->x->n, ok;   /* a block per member in */
  if (c->ic && a2a) return ic_alltoallvw(c, sbuf, scount, NULL, NULL, stype, NULL, rbuf, rcount, NULL, NULL, rtype, NULL);
  if (c->ic) return ic_allgatherv(c, sbuf, scount, stype, rbuf, rcount, NULL, NULL, rtype);
  if (sbuf == MPI_IN_PLACE && a2a) ok = !side_of(&c->in, rbuf, (int64_t)rcount * n, rtype);
  else if (sbuf == MPI_IN_PLACE)
    ok = !side_of(&c->in, (char *)rbuf + (int64_t)c->me * rcount * (int64_t)type_extent(rtype), rcount, rtype);
  else ok = !side_of(&c->in, sbuf, a2a ? (int64_t)scount * n : scount, stype);
  ok = ok && !side_of(&c->out, rbuf, (int64_t)rcount * n, rtype);
  if (coll_ready(c, call, ok)) return 0;
  coll_line(c, a2a ? IR_COLL_ALLTOALL : IR_COLL_ALLGATHER, -1, c->out.bytes / (uint64_t)n, 0, 0);
  return 1;
}

/* `count` elements of cdag type `type` at buf: one range, padding included (a pair's
   padding is part of cdag's element, mpi_glue checked MPI's extent is cdag's size). */
static int side_span(side *sd, const void *buf, int64_t count, int type) {
  sd->addr = (uint64_t)(uintptr_t)buf;
  sd->bytes = count > 0 ? (uint64_t)count * (uint64_t)ir_type_size(type) : 0;
  sd->type = ir_type_name(type);
  sd->r.n = 0;
  return sd->bytes ? ranges_add(&sd->r, sd->addr, sd->bytes) : 0;
}

int reduction(coll *c, int call, const void *sbuf, void *rbuf, int64_t in_count, int64_t out_count, int has_out,
              MPI_Datatype t, MPI_Op o, int *type, int *rop) {
  char why[80];
  if (mpig_reduction(t, o, type, rop, why, sizeof why) != MPIG_REDUCTION_OK) {
    unsupported_because(call, why);
    c->x = NULL;
    return 0;
  }
  int ok = !side_span(&c->in, sbuf == MPI_IN_PLACE ? rbuf : sbuf, in_count, *type);
  if (has_out) ok = ok && !side_span(&c->out, rbuf, out_count, *type);
  return coll_ready(c, call, ok) == 0;
}

/* A user op, a type cdag has none for, or an op MPI does not define for the type but the
   MPI library ran (MPICH's MPI_LXOR on floats): recorded as its data movement and a
   computation (coll_combined). */
int reduction_computed(MPI_Datatype t, MPI_Op o) {
  char why[80];
  int type, rop;
  return mpig_reduction(t, o, &type, &rop, why, sizeof why) != MPIG_REDUCTION_OK;
}

/* The data movement: every input byte reaches each member whose output combines it, into a
   scratch area (a packing area: no program address reaches it), where the member computes its
   output from the whole area (a scan's member from the blocks of the members up to it):
   - reduce: the inputs gathered at the root;
   - allreduce: allgathered (a gather then a bcast of the result would serialise the same
     dependencies and take two calls, which a nonblocking call cannot place in order);
   - reduce_scatter_block: an alltoall, member j gets block j of every input;
   - scan, exscan: allgathered, member j computes from blocks 0..j (exscan: 0..j-1; member 0
     computes nothing).
   The inputs travel as packed bytes, so any datatype MPI can reduce is described, and every
   member decides alike (MPI asks them all to pass the same op and type signature). */
int coll_combined(coll *c, int call, int kind, const void *sbuf, void *rbuf, int count, MPI_Datatype t, int root) {
  int n = c->x->n, rsb = kind == IR_COLL_REDUCE_SCATTER_BLOCK, root_me = c->me == root;
  int has_out = kind == IR_COLL_REDUCE ? root_me : kind != IR_COLL_EXSCAN || c->me > 0;
  int ok = !side_of(&c->in, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rsb ? (int64_t)count * n : count, t);
  if (has_out) ok = ok && !side_of(&c->out, rbuf, count, t);
  if (coll_ready(c, call, ok)) return 0;
  uint64_t block = rsb ? c->in.bytes / (uint64_t)n : c->in.bytes;   /* what each member sends each receiver */
  int receives = kind != IR_COLL_REDUCE || root_me;
  uint64_t area = receives && block ? pack_area(block * (uint64_t)n) : 0;
  coll g = *c;   /* the line's out is the area; the call's stays the program's buffer */
  g.out.addr = area;
  if (kind == IR_COLL_REDUCE) coll_line(&g, IR_COLL_GATHER, world_of(c->x, root), block, 0, 0);
  else coll_line(&g, rsb ? IR_COLL_ALLTOALL : IR_COLL_ALLGATHER, -1, block, 0, 0);
  int64_t blocks = kind == IR_COLL_SCAN ? c->me + 1 : kind == IR_COLL_EXSCAN ? c->me : n;
  c->calc_at = area;
  c->calc_len = has_out ? block * (uint64_t)blocks : 0;
  return 1;
}

/* Reductions: predefined types and ops that the loader accepts (mpi_glue applies the
   loader's rule) are native; those cdag cannot combine are computed (coll_combined); every
   member decides alike (MPI asks them all to pass the same op and type). reduce_scatter_block
   reads a block per member. */
int coll_reduction(coll *c, int call, int nonblocking, int kind, const void *sbuf, void *rbuf, int count,
                   MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm) {
  char why[80];
  int type, rop;
  if (!coll_start(c, comm, call, nonblocking)) return 0;
  if (c->ic) return ic_reduction(c, kind, sbuf, rbuf, count, NULL, t, root);
  if (reduction_computed(t, o)) return coll_combined(c, call, kind, sbuf, rbuf, count, t, root);
  if (mpig_reduction(t, o, &type, &rop, why, sizeof why) != MPIG_REDUCTION_OK) {
    unsupported_because(call, why);
    c->x = NULL;
    return 0;
  }
  int64_t in_count = kind == IR_COLL_REDUCE_SCATTER_BLOCK ? (int64_t)count * c->x->n : count;
  int has_out = kind != IR_COLL_REDUCE || c->me == root;
  int ok = !side_span(&c->in, sbuf == MPI_IN_PLACE ? rbuf : sbuf, in_count, type);
  if (has_out) ok = ok && !side_span(&c->out, rbuf, count, type);
  if (coll_ready(c, call, ok)) return 0;
  coll_line(c, kind, kind == IR_COLL_REDUCE ? world_of(c->x, root) : -1, (uint64_t)count, type, rop);
  return 1;
}

/* ---- the blocking calls: the output is the shadow's when MPI returns ---- */

#pragma GCC visibility push(default)

int MPI_Barrier(MPI_Comm comm) {
  COUNT(C_Barrier);
  coll c;
  coll_barrier(&c, C_Barrier, 0, comm);
  int rc = PMPI_Barrier(comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
  COUNT(C_Bcast);
  coll c;
  coll_bcast(&c, C_Bcast, 0, buf, count, t, root, comm);
  int rc = PMPI_Bcast(buf, count, t, root, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  COUNT(C_Gather);
  coll c;
  coll_gather(&c, C_Gather, 0, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  int rc = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  COUNT(C_Scatter);
  coll c;
  coll_scatter(&c, C_Scatter, 0, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  int rc = PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  COUNT(C_Allgather);
  coll c;
  coll_blocks(&c, C_Allgather, 0, IR_COLL_ALLGATHER, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  int rc = PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  COUNT(C_Alltoall);
  coll c;
  coll_blocks(&c, C_Alltoall, 0, IR_COLL_ALLTOALL, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  int rc = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm) {
  COUNT(C_Reduce);
  coll c;
  coll_reduction(&c, C_Reduce, 0, IR_COLL_REDUCE, sbuf, rbuf, count, t, o, root, comm);
  int rc = PMPI_Reduce(sbuf, rbuf, count, t, o, root, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm) {
  COUNT(C_Allreduce);
  coll c;
  coll_reduction(&c, C_Allreduce, 0, IR_COLL_ALLREDUCE, sbuf, rbuf, count, t, o, -1, comm);
  int rc = PMPI_Allreduce(sbuf, rbuf, count, t, o, comm);
  coll_returned(&c, rc);
  return rc;
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op o, MPI_Comm comm) {
  COUNT(C_Reduce_scatter_block);
  coll c;
  coll_reduction(&c, C_Reduce_scatter_block, 0, IR_COLL_REDUCE_SCATTER_BLOCK, sbuf, rbuf, count, t, o, -1, comm);
  int rc = PMPI_Reduce_scatter_block(sbuf, rbuf, count, t, o, comm);
  coll_returned(&c, rc);
  return rc;
}

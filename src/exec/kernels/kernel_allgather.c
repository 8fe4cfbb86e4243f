/* cdag — src/exec/kernels/kernel_allgather.c: regular allgather on the circulant graph.
 *
 * Algorithm (Träff, the broadcast's graph with edges reversed): slot j of rank
 * r's working buffer holds the block of rank r + j (mod p). After round k a rank holds slots
 * [0, skip[k+1]): in round k it receives slots [0, skip[k+1] - skip[k]) of r + skip[k] into
 * its slots [skip[k], skip[k+1]) and sends the same count of its own first slots to
 * r - skip[k]. Since skip[k+1] <= 2 skip[k], the slots it sends are ones it already holds.
 * q rounds and p - 1 blocks of m bytes each way in total:
 *   T = q alpha + (p - 1) beta m
 * (the lower bound in both terms, for any p). A contiguous result buffer is used in place
 * (a slot range that wraps around member p - 1 is a two-piece datatype); a result in pieces
 * goes through a rotated working buffer and one unpacking copy. */
#include <stdio.h>

#include "exec/kernels/kernel_int.h"

/* Members first .. first + cnt - 1 (mod p) of a buffer in member order, as a message. */
static int ring_range(kern_op *op, unsigned char *base, uint64_t m, int first, int cnt, void **buf, MPI_Count *count,
                      MPI_Datatype *type) {
  MPI_Count d[2], l[2];
  kern_pieces ps = {d, l, 0};
  int head = first + cnt <= op->p ? cnt : op->p - first;
  kern__piece_add(&ps, (uint64_t)first * m, (uint64_t)head * m);
  kern__piece_add(&ps, 0, (uint64_t)(cnt - head) * m);
  return kern__piece_message(op, &ps, base, buf, count, type);
}

/* The q rounds. rotated: work slot j is member me + j; else work is in member order and a
   slot range that wraps around the end is a two-piece datatype. */
static int allgather_rounds(kern_op *op, unsigned char *work, uint64_t m, int rotated) {
  circ_graph c;
  if (circ_init(&c, op->p) != 0) return cdag__error(CDAG_ERR_ARG, "rank %d: kernel allgather: p = %d", op->rank, op->p);
  for (int k = 0; k < c.q && m > 0; k++) {
    int s = c.skip[k], cnt = c.skip[k + 1] - s, rc;
    kern_step *st = kern__step(op);
    if (!st) return CDAG_ERR_NOMEM;
    st->speer = op->members[(op->me - s + op->p) % op->p];
    st->rpeer = op->members[(op->me + s) % op->p];
    if (rotated) {
      st->sbuf = work;
      st->scount = (MPI_Count)((uint64_t)cnt * m);
      st->rbuf = work + (uint64_t)s * m;
      st->rcount = st->scount;
      continue;
    }
    rc = ring_range(op, work, m, op->me, cnt, &st->sbuf, &st->scount, &st->stype);
    if (rc == CDAG_OK) rc = ring_range(op, work, m, (op->me + s) % op->p, cnt, &st->rbuf, &st->rcount, &st->rtype);
    if (rc != CDAG_OK) return rc;
  }
  return CDAG_OK;
}

static int allgather_build(kern_op *op, kern_iov send, kern_iov recv) {
  uint64_t total = kern__iov_bytes(recv), p = (uint64_t)op->p, m = total / p;
  if (total % p != 0 || (send.n && kern__iov_bytes(send) != m))
    return cdag__error(CDAG_ERR_ARG, "rank %d: kernel allgather: send %llu bytes, recv %llu bytes for %d members",
                       op->rank, (unsigned long long)kern__iov_bytes(send), (unsigned long long)total, op->p);
  uint64_t mine = (uint64_t)op->me * m;
  unsigned char *work = kern__iov_contig(recv);
  int rc = CDAG_OK, rotated = work == NULL;
  if (!rotated && send.n) {   /* contiguous result: own block in place, rounds in the user's buffer */
    int vs = kern__keep_iov(op, send);
    rc = vs < 0 ? CDAG_ERR_NOMEM : kern__copy(op, 1, vs, 0, work + mine, m, 0);
  } else if (rotated) {       /* pieces: rotated working buffer, unpacked in member order */
    work = kern__alloc(op, total);
    int vr = kern__keep_iov(op, recv), vs = send.n ? kern__keep_iov(op, send) : vr;
    if (!work || vr < 0 || vs < 0) return CDAG_NOMEM("allgather buffer");
    rc = kern__copy(op, 1, vs, send.n ? 0 : mine, work, m, 0);
    /* slot j is member me + j: slots [0, p - me) go to offset me*m on, the rest to 0 on */
    if (rc == CDAG_OK) rc = kern__copy(op, 0, vr, mine, work, total - mine, 1);
    if (rc == CDAG_OK) rc = kern__copy(op, 0, vr, 0, work + (total - mine), mine, 1);
  }
  if (rc == CDAG_OK) rc = allgather_rounds(op, work, m, rotated);
  if (rc != CDAG_OK) return rc;
  op->bytes = total;
  snprintf(op->desc, sizeof op->desc, "allgather circulant p=%d steps=%lld%s", op->p, (long long)op->nsteps,
           rotated ? " packed" : "");
  return kern__finish(op);
}

int kern_allgather_init(const kern_group *g, kern_iov send, kern_iov recv, kern_op **out) {
  kern_op *op;
  int rc = kern__open(g, ir_coll_name(IR_COLL_ALLGATHER), KERN_TAG + IR_COLL_ALLGATHER, &op);
  if (rc != CDAG_OK) return rc;
  if ((rc = allgather_build(op, send, recv)) != CDAG_OK) {
    kern_free(&op);
    return rc;
  }
  *out = op;
  return CDAG_OK;
}

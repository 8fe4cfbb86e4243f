/* cdag — src/exec/kernels/kernel_bcast.c: n-block broadcast on a circulant graph.
 *
 * Algorithm (Träff, round-optimal n-block broadcast schedules, CLUSTER 2022): the m bytes form n blocks. In round i
 * (k = i mod q) rank r sends one block to r + skip[k] and receives one from r - skip[k]
 * (ranks relative to the root), the blocks given by the precomputed send and receive
 * schedules (circulant.h) shifted by q each phase of q rounds; x dummy rounds at the start
 * make the round count n - 1 + q + x a multiple of q, negative blocks are virtual and blocks
 * past n - 1 are capped to n - 1. Every rank has every block after n - 1 + q rounds:
 *   T(n) = (n - 1 + q) (alpha + beta m / n),  best at n* = sqrt((q - 1) beta m / alpha),
 *   T* = (sqrt((q - 1) alpha) + sqrt(beta m))^2
 * against q (alpha + beta m) for a binomial tree. Building costs O(log^3 p) for the
 * schedules plus O(n + q) rounds. Run backwards (reverse = 1) the same rounds are the
 * reduction of kernel_reduce.c: each block travels along a spanning tree (each rank receives
 * each block once, Träff), so reversing the edges sums every contribution once. */
#include <stdio.h>

#include "exec/kernels/kernel_int.h"

/* Comm rank of the member at position rel relative to root. */
static int member_at(const kern_op *op, int root, int rel) { return op->members[(root + rel) % op->p]; }

/* One round of the broadcast (forward) or of the reduction (reverse). */
static int circ_round(kern_op *op, int root, int n, uint64_t units, uint64_t unit, unsigned char *work,
                      unsigned char *scratch, int reverse, int64_t sb, int to_rel, int64_t rb, int from_rel) {
  int has_send = sb >= 0 && to_rel != 0, has_recv = rb >= 0 && from_rel >= 0;
  if (!has_send && !has_recv) return CDAG_OK;
  kern_step *s = kern__step(op);
  if (!s) return CDAG_ERR_NOMEM;
  uint64_t off, len;
  if (has_send) {           /* forward: block sb goes to the to-neighbour */
    kern_block(units, unit, n, sb < n - 1 ? sb : n - 1, &off, &len);
    if (!reverse) {
      s->speer = member_at(op, root, to_rel);
      s->sbuf = work + off;
      s->scount = (MPI_Count)len;
    } else {                /* reverse: its partial sum comes back from there */
      s->rpeer = member_at(op, root, to_rel);
      s->rbuf = scratch;
      s->rcount = (MPI_Count)len;
      s->cdst = work + off;
      s->ccount = len / unit;
    }
  }
  if (has_recv) {           /* forward: block rb comes from the from-neighbour */
    kern_block(units, unit, n, rb < n - 1 ? rb : n - 1, &off, &len);
    if (!reverse) {
      s->rpeer = member_at(op, root, from_rel);
      s->rbuf = work + off;
      s->rcount = (MPI_Count)len;
    } else {                /* reverse: our partial sum of it goes back there */
      s->speer = member_at(op, root, from_rel);
      s->sbuf = work + off;
      s->scount = (MPI_Count)len;
    }
  }
  return CDAG_OK;
}

int kern__circulant_steps(kern_op *op, int root, int n, uint64_t units, uint64_t unit, unsigned char *work,
                          unsigned char *scratch, int reverse) {
  circ_graph c;
  if (circ_init(&c, op->p) != 0) return cdag__error(CDAG_ERR_ARG, "rank %d: kernel %s: p = %d", op->rank, op->name, op->p);
  int q = c.q, p = op->p, rel = (op->me - root + p) % p, R[KERN_MAXQ], S[KERN_MAXQ];
  if (q == 0 || units == 0) return CDAG_OK;
  circ_recvsched(&c, rel, R);
  circ_sendsched(&c, rel, S);
  int64_t x = (q - (n - 1) % q) % q, last = n - 2 + q + x;
  for (int64_t j = x; j <= last; j++) {
    int64_t i = reverse ? last + x - j : j, off = -x + q * (i / q);
    int k = (int)(i % q);
    int to_rel = (rel + c.skip[k]) % p, from_rel = rel == 0 ? -1 : (rel - c.skip[k] + p) % p;
    int rc = circ_round(op, root, n, units, unit, work, scratch, reverse, S[k] + off, to_rel, R[k] + off, from_rel);
    if (rc != CDAG_OK) return rc;
  }
  return CDAG_OK;
}

static int bcast_build(kern_op *op, const kern_group *g, int root, kern_iov buf) {
  if (root < 0 || root >= op->p)
    return cdag__error(CDAG_ERR_ARG, "rank %d: kernel bcast: root %d not among %d members", op->rank, root, op->p);
  uint64_t bytes = kern__iov_bytes(buf);
  unsigned char *work = kern__iov_contig(buf);
  int n = kern__nblocks(g, op->p, bytes, 1);
  if (buf.n > 1) {
    int v = kern__keep_iov(op, buf);
    if (v < 0) return CDAG_ERR_NOMEM;
    if (!(work = kern__alloc(op, bytes))) return CDAG_NOMEM("bcast buffer");
    int rc = kern__copy(op, op->me == root, v, 0, work, bytes, op->me != root);
    if (rc != CDAG_OK) return rc;
  }
  op->bytes = bytes;
  op->nblocks = n;
  int rc = kern__circulant_steps(op, root, n, bytes, 1, work, NULL, 0);
  if (rc != CDAG_OK) return rc;
  snprintf(op->desc, sizeof op->desc, "bcast circulant p=%d n=%d steps=%lld", op->p, n, (long long)op->nsteps);
  return kern__finish(op);
}

int kern_bcast_init(const kern_group *g, int root, kern_iov buf, kern_op **out) {
  kern_op *op;
  int rc = kern__open(g, ir_coll_name(IR_COLL_BCAST), KERN_TAG + IR_COLL_BCAST, &op);
  if (rc != CDAG_OK) return rc;
  if ((rc = bcast_build(op, g, root, buf)) != CDAG_OK) {
    kern_free(&op);
    return rc;
  }
  *out = op;
  return CDAG_OK;
}

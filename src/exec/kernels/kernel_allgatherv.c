/* cdag — src/exec/kernels/kernel_allgatherv.c: irregular allgather as p simultaneous broadcasts.
 *
 * Algorithm (Träff's Alg. 9, CLUSTER 2022): every member j broadcasts its m_j bytes as
 * n blocks on the one circulant graph, all p broadcasts in the same rounds. For root j rank
 * r plays the relative rank v = r - j, so in round k it receives block R_v[k] + off of every
 * root from r - skip[k] and sends block R_{v + skip[k]}[k] + off (the to-neighbour's receive)
 * to r + skip[k], unless that neighbour is j. A round's blocks to one neighbour travel as one
 * message (an hindexed datatype over the working buffer, built once). With m = sum m_j:
 *   T(n) = (n - 1 + q)(alpha + beta m / n),  n* = sqrt((q - 1) beta m / alpha),
 * plus building the p receive schedules once, O(p log^2 p). */
#include <stdio.h>
#include <stdlib.h>

#include "exec/kernels/kernel_int.h"

typedef struct {
  const circ_graph *c;
  const int *R;             /* R[v * q + k]: receive schedule of relative rank v */
  const uint64_t *counts, *displ;
  int n;
  unsigned char *work;
  kern_pieces out, in;
} agv_ctx;

/* Round i of all p broadcasts. */
static int agv_round(kern_op *op, agv_ctx *a, int64_t i, int64_t off) {
  int p = op->p, q = a->c->q, k = (int)(i % q), s = a->c->skip[k];
  a->out.n = a->in.n = 0;
  for (int j = 0; j < p; j++) {
    int v = (op->me - j + p) % p, to = (v + s) % p;
    uint64_t bo, bl;
    int64_t rb = a->R[(size_t)v * q + k] + off, sb = a->R[(size_t)to * q + k] + off;
    if (v != 0 && rb >= 0) {
      kern_block(a->counts[j], 1, a->n, rb < a->n - 1 ? rb : a->n - 1, &bo, &bl);
      kern__piece_add(&a->in, a->displ[j] + bo, bl);
    }
    if (to != 0 && sb >= 0) {
      kern_block(a->counts[j], 1, a->n, sb < a->n - 1 ? sb : a->n - 1, &bo, &bl);
      kern__piece_add(&a->out, a->displ[j] + bo, bl);
    }
  }
  if (!a->out.n && !a->in.n) return CDAG_OK;
  kern_step *st = kern__step(op);
  if (!st) return CDAG_ERR_NOMEM;
  int rc = CDAG_OK;
  if (a->out.n) {
    st->speer = op->members[(op->me + s) % p];
    rc = kern__piece_message(op, &a->out, a->work, &st->sbuf, &st->scount, &st->stype);
  }
  if (rc == CDAG_OK && a->in.n) {
    st->rpeer = op->members[(op->me - s + p) % p];
    rc = kern__piece_message(op, &a->in, a->work, &st->rbuf, &st->rcount, &st->rtype);
  }
  return rc;
}

static int agv_rounds(kern_op *op, agv_ctx *a) {
  int p = op->p, q = a->c->q, n = a->n;
  int *R = malloc((size_t)p * (size_t)(q ? q : 1) * sizeof *R);
  MPI_Count *mem = malloc(4 * (size_t)p * sizeof *mem);
  int rc = CDAG_OK;
  if (!R || !mem) rc = CDAG_NOMEM("allgatherv schedules");
  if (rc == CDAG_OK) {
    for (int v = 0; v < p; v++) circ_recvsched(a->c, v, R + (size_t)v * q);
    a->R = R;
    a->out = (kern_pieces){mem, mem + p, 0};
    a->in = (kern_pieces){mem + 2 * p, mem + 3 * p, 0};
    int64_t x = (q - (n - 1) % q) % q, last = n - 2 + q + x;
    for (int64_t i = x; i <= last && rc == CDAG_OK; i++) rc = agv_round(op, a, i, -x + q * (i / q));
  }
  free(R);
  free(mem);
  return rc;
}

static int allgatherv_build(kern_op *op, const kern_group *g, kern_iov send, kern_iov recv, const uint64_t *counts) {
  if (!counts) return cdag__error(CDAG_ERR_ARG, "rank %d: kernel allgatherv: NULL counts", op->rank);
  uint64_t *displ = (uint64_t *)kern__alloc(op, ((uint64_t)op->p + 1) * sizeof *displ), maxc = 0;
  if (!displ) return CDAG_NOMEM("allgatherv displacements");
  for (int j = 0; j < op->p; j++) {
    displ[j + 1] = displ[j] + counts[j];
    if (counts[j] > maxc) maxc = counts[j];
  }
  uint64_t total = displ[op->p], mine = counts[op->me];
  if (kern__iov_bytes(recv) != total || (send.n && kern__iov_bytes(send) != mine))
    return cdag__error(CDAG_ERR_ARG, "rank %d: kernel allgatherv: send %llu bytes (count %llu), recv %llu (total %llu)",
                       op->rank, (unsigned long long)kern__iov_bytes(send), (unsigned long long)mine,
                       (unsigned long long)kern__iov_bytes(recv), (unsigned long long)total);
  unsigned char *work = kern__iov_contig(recv);
  int rc = CDAG_OK, vr = -1;
  if (!work) {
    vr = kern__keep_iov(op, recv);
    if (vr < 0 || !(work = kern__alloc(op, total))) return CDAG_NOMEM("allgatherv buffer");
    rc = kern__copy(op, 0, vr, 0, work, total, 1);
  }
  if (rc == CDAG_OK && send.n) {
    int vs = kern__keep_iov(op, send);
    rc = vs < 0 ? CDAG_ERR_NOMEM : kern__copy(op, 1, vs, 0, work + displ[op->me], mine, 0);
  } else if (rc == CDAG_OK && vr >= 0) {   /* in place, packed: own block from recv */
    rc = kern__copy(op, 1, vr, displ[op->me], work + displ[op->me], mine, 0);
  }
  if (rc != CDAG_OK) return rc;
  circ_graph c;
  if (circ_init(&c, op->p) != 0) return cdag__error(CDAG_ERR_ARG, "rank %d: kernel allgatherv: p = %d", op->rank, op->p);
  int n = kern__nblocks(g, op->p, total, 1);
  if ((uint64_t)n > maxc) n = maxc > 0 ? (int)maxc : 1;
  agv_ctx a = {.c = &c, .counts = counts, .displ = displ, .n = n, .work = work};
  if (c.q > 0 && total > 0 && (rc = agv_rounds(op, &a)) != CDAG_OK) return rc;
  op->bytes = total;
  op->nblocks = n;
  snprintf(op->desc, sizeof op->desc, "allgatherv circulant p=%d n=%d steps=%lld", op->p, n, (long long)op->nsteps);
  return kern__finish(op);
}

int kern_allgatherv_init(const kern_group *g, kern_iov send, kern_iov recv, const uint64_t *counts, kern_op **out) {
  kern_op *op;
  int rc = kern__open(g, ir_coll_name(IR_COLL_ALLGATHERV), KERN_TAG + IR_COLL_ALLGATHERV, &op);
  if (rc != CDAG_OK) return rc;
  if ((rc = allgatherv_build(op, g, send, recv, counts)) != CDAG_OK) {
    kern_free(&op);
    return rc;
  }
  *out = op;
  return CDAG_OK;
}

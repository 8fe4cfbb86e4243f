/* cdag tests — tests/support/gen_random.c: random graphs that are always valid.
 *
 * Ops are added in one global sequence in which every message's send and receive are added
 * together; dependencies only ever point from earlier to later ops, so the graph is
 * matchable and deadlock-free by construction. Each rank has two data buffers and one
 * scratch buffer; messages go between any of them (forwarding through other ranks and
 * through scratch happens naturally), with local copies and, in "reduce mode", int32
 * local reduces with one op per graph (everything 4-byte aligned so no element splits).
 * Optionally the ops are added rank by rank, ranks in random order, so that op ids no
 * longer follow dependencies (the same graph otherwise). With computations, a computation
 * reads all its rank wrote or one range, and writes a range or nothing. */
#include <stdlib.h>

#include "support/support.h"

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static uint64_t pick(uint64_t *s, uint64_t n) { return next(s) % n; }

enum { BUF_A = 0x1000, BUF_B = 0x2000, BUF_S = 0x8000, BUF_LEN = 64 };

/* A random range [addr, addr+len) inside one of the rank's buffers, unit-aligned. */
static void range(uint64_t *s, int unit, uint64_t len, int allow_scratch, uint64_t *addr) {
  static const uint64_t bases[3] = {BUF_A, BUF_B, BUF_S};
  uint64_t base = bases[pick(s, allow_scratch ? 3 : 2)];
  uint64_t slots = (BUF_LEN - len) / (uint64_t)unit + 1;
  *addr = base + pick(s, slots) * (uint64_t)unit;
}

/* One generated op, kept so that ops can be added to the graph in another order. */
typedef struct {
  int kind, rank, peer, tag, rop;
  uint64_t x, y, len, rlen;
} gen_op;

static int add_op(cdag_graph *g, const gen_op *op) {
  switch (op->kind) {
    case IR_SEND: return cdag_rank_send(g, op->rank, op->x, op->len, op->peer, op->tag, NULL);
    case IR_RECV: {   /* with computations, blocking (a computation reading all reads it) */
      cdag_op id;
      int rc = cdag_rank_recv(g, op->rank, op->y, op->rlen, op->peer, op->tag, &id);
      return rc || !op->rop ? rc : ir_set_join(g, (int32_t)id, IR_JOIN_AFTER);
    }
    case IR_COPY: return cdag_rank_copy_local(g, op->rank, op->x, op->y, op->len, NULL);
    case IR_CALC: return ir_add_compute(g, op->rank, op->rlen, op->x, op->peer ? IR_READS_ALL : op->len, op->y, op->tag ? op->len : 0, NULL);
    default: return cdag_rank_reduce_local(g, op->rank, op->x, op->y, op->len / 4, CDAG_INT32, (cdag_reduce_op)op->rop, NULL);
  }
}

/* Adds the ops in generation order, or rank by rank with the ranks in a random order
   (program order is kept either way; the graph is the same, only op ids differ). */
static int add_ops(cdag_graph *g, const gen_op *ops, int n, int p, int rank_by_rank, uint64_t seed) {
  int rc = CDAG_OK;
  if (!rank_by_rank) {
    for (int i = 0; i < n && rc == CDAG_OK; i++) rc = add_op(g, &ops[i]);
    return rc;
  }
  int *perm = malloc((size_t)p * sizeof *perm);
  if (!perm) return CDAG_ERR_NOMEM;
  uint64_t s = seed ^ 0x5851f42d4c957f2dULL;
  for (int r = 0; r < p; r++) perm[r] = r;
  for (int r = p - 1; r > 0; r--) {
    int k = (int)pick(&s, (uint64_t)r + 1), t = perm[r];
    perm[r] = perm[k];
    perm[k] = t;
  }
  for (int r = 0; r < p; r++)
    for (int i = 0; i < n && rc == CDAG_OK; i++)
      if (ops[i].rank == perm[r]) rc = add_op(g, &ops[i]);
  free(perm);
  return rc;
}

int gen_random_graph(uint64_t seed, const gen_random_opts *o, cdag_graph **out) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 12345;
  int p = o && o->nprocs ? o->nprocs : 1 + (int)pick(&s, 8);
  int nsteps = o && o->steps ? o->steps : 4 + (int)pick(&s, 40);
  int reduce_mode = o && o->reduce_mode >= 0 ? o->reduce_mode : (int)pick(&s, 2);
  int unit = reduce_mode ? 4 : 1;
  static const int rops[] = {CDAG_SUM, CDAG_BXOR, CDAG_MAX, CDAG_MIN};
  int rop = rops[pick(&s, 4)];
  gen_op *ops = malloc((size_t)(2 * nsteps + 1) * sizeof *ops);
  cdag_graph *g = NULL;
  int rc = ops ? cdag_graph_create_global(p, &g) : CDAG_ERR_NOMEM, n = 0;
  for (int r = 0; r < p && rc == CDAG_OK; r++) rc = cdag_rank_scratch(g, r, BUF_S, BUF_LEN);
  for (int i = 0; i < nsteps && rc == CDAG_OK; i++) {
    int what = (int)pick(&s, 10), a = (int)pick(&s, (uint64_t)p);
    uint64_t len = (uint64_t)unit * (1 + pick(&s, 24 / (uint64_t)unit)), x, y;
    if (o && o->computes && pick(&s, 4) == 0) {   /* peer: reads all; tag: writes; rlen: cost */
      range(&s, unit, len, 1, &x);
      range(&s, unit, len, 1, &y);
      ops[n++] = (gen_op){.kind = IR_CALC, .rank = a, .peer = pick(&s, 2) == 0, .tag = pick(&s, 5) != 0, .x = x,
                          .y = y, .len = len, .rlen = pick(&s, 1000)};
    } else if (what < 7) { /* a message, sometimes to self, sometimes zero bytes */
      int b = pick(&s, 8) == 0 ? a : (int)pick(&s, (uint64_t)p);
      int tag = (int)pick(&s, 3);
      if (pick(&s, 16) == 0) len = 0;
      range(&s, unit, len, 1, &x);
      range(&s, unit, len, 1, &y);
      if (a == b && x < y + len && y < x + len) continue; /* a self send that overwrites its own source */
      ops[n++] = (gen_op){.kind = IR_SEND, .rank = a, .peer = b, .tag = tag, .x = x, .len = len};
      ops[n++] = (gen_op){.kind = IR_RECV, .rank = b, .peer = a, .tag = tag, .y = y, .rop = o && o->computes,
                          .rlen = len + (pick(&s, 4) == 0 ? (uint64_t)unit : 0)};
    } else if (what < 9 || !reduce_mode) {
      range(&s, unit, len, 1, &x);
      range(&s, unit, len, 1, &y);
      if (x < y + len && y < x + len) continue;
      ops[n++] = (gen_op){.kind = IR_COPY, .rank = a, .x = x, .y = y, .len = len};
    } else {
      range(&s, unit, len, 1, &x);
      range(&s, unit, len, 0, &y);
      if (x < y + len && y < x + len) continue;
      ops[n++] = (gen_op){.kind = IR_REDUCE, .rank = a, .x = x, .y = y, .len = len, .rop = rop};
    }
  }
  if (rc == CDAG_OK) rc = add_ops(g, ops, n, p, o && o->rank_by_rank, seed);
  free(ops);
  if (rc) {
    cdag_graph_free(&g);
    return rc;
  }
  *out = g;
  return CDAG_OK;
}

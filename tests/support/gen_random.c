/* cdag tests — tests/support/gen_random.c: random graphs that are always valid.
 *
 * Ops are added in one global sequence in which every message's send and receive are added
 * together; dependencies only ever point from earlier to later ops, so the graph is
 * matchable and deadlock-free by construction. Each rank has two data buffers and one
 * scratch buffer; messages go between any of them (forwarding through other ranks and
 * through scratch happens naturally), with local copies and, in "reduce mode", int32
 * local reduces with one op per graph (everything 4-byte aligned so no element splits). */
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

int gen_random_graph(uint64_t seed, const gen_random_opts *o, cdag_graph **out) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 12345;
  int p = o && o->nprocs ? o->nprocs : 1 + (int)pick(&s, 8);
  int nsteps = o && o->steps ? o->steps : 4 + (int)pick(&s, 40);
  int reduce_mode = o && o->reduce_mode >= 0 ? o->reduce_mode : (int)pick(&s, 2);
  int unit = reduce_mode ? 4 : 1;
  static const int rops[] = {CDAG_SUM, CDAG_BXOR, CDAG_MAX, CDAG_MIN};
  int rop = rops[pick(&s, 4)];
  cdag_graph *g;
  int rc = cdag_graph_create_global(p, &g);
  if (rc) return rc;
  for (int r = 0; r < p && rc == CDAG_OK; r++) rc = cdag_rank_scratch(g, r, BUF_S, BUF_LEN);
  for (int i = 0; i < nsteps && rc == CDAG_OK; i++) {
    int what = (int)pick(&s, 10), a = (int)pick(&s, (uint64_t)p);
    uint64_t len = (uint64_t)unit * (1 + pick(&s, 24 / (uint64_t)unit)), x, y;
    if (what < 7) { /* a message, sometimes to self, sometimes zero bytes */
      int b = pick(&s, 8) == 0 ? a : (int)pick(&s, (uint64_t)p);
      int tag = (int)pick(&s, 3);
      if (pick(&s, 16) == 0) len = 0;
      range(&s, unit, len, 1, &x);
      range(&s, unit, len, 1, &y);
      if (a == b && x < y + len && y < x + len) continue; /* a self send that overwrites its own source */
      rc = cdag_rank_send(g, a, x, len, b, tag, NULL);
      if (rc == CDAG_OK) rc = cdag_rank_recv(g, b, y, len + (pick(&s, 4) == 0 ? (uint64_t)unit : 0), a, tag, NULL);
    } else if (what < 9 || !reduce_mode) {
      range(&s, unit, len, 1, &x);
      range(&s, unit, len, 1, &y);
      if (x < y + len && y < x + len) continue;
      rc = cdag_rank_copy_local(g, a, x, y, len, NULL);
    } else {
      range(&s, unit, len, 1, &x);
      range(&s, unit, len, 0, &y);
      if (x < y + len && y < x + len) continue;
      rc = cdag_rank_reduce_local(g, a, x, y, len / 4, CDAG_INT32, (cdag_reduce_op)rop, NULL);
    }
  }
  if (rc) {
    cdag_graph_free(&g);
    return rc;
  }
  *out = g;
  return CDAG_OK;
}

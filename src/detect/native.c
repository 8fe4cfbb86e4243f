/* cdag — src/detect/native.c: which parts of a plan the program had written as native
 * collectives (a recording's MPI_Bcast, MPI_Allreduce, ...; ir/collective.c).
 *
 * A native call enters the graph as the messages of a flat algorithm, so detection finds
 * it again from the SST like any other pattern, and runs it as one collective. The report
 * must still tell a collective the program called from one it wrote by hand: a collective
 * of the plan is native when the bytes it delivers were last written, in the graph, by a
 * native call's messages. Per rank, one walk in program order keeps an interval map from
 * address ranges to the op that wrote them last (base/imap.h); then every
 * receiving piece of every collective, and every residual transfer, looks its writer up.
 * A local copy of bytes a native call wrote passes the call on as their writer: a call on a
 * derived datatype is recorded as the call on a packed buffer and copies in and out of it
 * (the recorder's), and its result reaches the program's buffer through such a copy.
 * Cost: O(n log n) for n ops, plus O(log n) per piece, transfer and copied block. Runs only
 * for graphs with calls. */
#include <stdlib.h>

#include "base/imap.h"
#include "detect/detect_int.h"

/* Last writer of each byte of one rank: ranges [start, end) -> op, disjoint. */
typedef struct {
  base_imap map;          /* start -> index into end/op */
  uint64_t *end;
  int32_t *op;
  int64_t n, cap;
} writer_map;

static int wm_new(writer_map *w, uint64_t lo, uint64_t hi, int32_t op) {
  if (w->n == w->cap) {
    int64_t cap = base_grown_cap(w->cap, 1);
    if (base_resize((void **)&w->end, w->n, cap, sizeof *w->end, "writer map") ||
        base_resize((void **)&w->op, w->n, cap, sizeof *w->op, "writer map"))
      return CDAG_ERR_NOMEM;
    w->cap = cap;
  }
  int rc = base_imap_put(&w->map, lo, w->n);
  if (rc) return rc;
  w->end[w->n] = hi;
  w->op[w->n++] = op;
  return CDAG_OK;
}

/* Op writes [lo, hi): trims or removes the ranges it covers, then records it. */
static int wm_write(writer_map *w, uint64_t lo, uint64_t hi, int32_t op) {
  if (lo >= hi) return CDAG_OK;
  uint64_t k = lo;
  int64_t i = base_imap_find(&w->map, &k, BASE_IMAP_AT_OR_BELOW);
  if (i >= 0 && w->end[i] > lo) {   /* a range starting before lo and reaching into it */
    uint64_t e = w->end[i];
    int32_t o = w->op[i];
    w->end[i] = lo;
    if (e > hi) {
      int rc = wm_new(w, hi, e, o);
      if (rc) return rc;
    }
  }
  k = lo;
  for (i = base_imap_find(&w->map, &k, BASE_IMAP_AT_OR_ABOVE); i >= 0 && k < hi;
       i = base_imap_find(&w->map, &k, BASE_IMAP_ABOVE)) {
    uint64_t e = w->end[i];
    int32_t o = w->op[i];
    int rc = base_imap_del(&w->map, k);
    if (rc || (e > hi && (rc = wm_new(w, hi, e, o)))) return rc;
  }
  return wm_new(w, lo, hi, op);
}

static int32_t wm_find(const writer_map *w, uint64_t addr) {
  uint64_t k = addr;
  int64_t i = base_imap_find(&w->map, &k, BASE_IMAP_AT_OR_BELOW);
  return i >= 0 && w->end[i] > addr ? w->op[i] : -1;
}

static void wm_free(writer_map *w) {
  base_imap_clear(&w->map);
  free(w->end);
  free(w->op);
}

/* The range op writes, if any. */
static int written_range(const cdag_graph *g, int32_t op, uint64_t *lo, uint64_t *hi) {
  int k = g->kind[op];
  if (k != IR_RECV && k != IR_REDUCE && k != IR_COPY) return 0;
  ir_blocks b = k == IR_COPY ? ir_copy_blocks(g, op) : ir_one_block(g->bytes[op]);
  *lo = g->addr[op];
  *hi = g->addr[op] + b.to_last + b.len;   /* a strided copy: its hull (no call's result under it is final) */
  return 1;
}

static int is_native_writer(const cdag_graph *g, const writer_map *w, uint64_t addr) {
  int32_t op = wm_find(w, addr);
  return op >= 0 && g->os[op] == IR_OS_COLL_PART;
}

/* The writer a copy leaves: the native call's op that wrote every block it reads (first and
   last byte of each, as pieces are asked), else the copy itself. */
static int32_t copy_writer(const cdag_graph *g, const writer_map *w, int32_t op) {
  ir_blocks b = ir_copy_blocks(g, op);
  int32_t from = wm_find(w, g->addr2[op]);
  if (from < 0 || g->os[from] != IR_OS_COLL_PART) return op;
  for (uint64_t j = 0; j < b.n; j++) {
    uint64_t a = g->addr2[op] + ir_block_from(&b, j);
    if (!is_native_writer(g, w, a) || !is_native_writer(g, w, a + b.len - 1)) return op;
  }
  return from;
}

/* Every receiving piece of collective c on member rank r: written by a native call? */
static int coll_native_on(const cdag_graph *g, const cdag_plan *p, const det_coll *c, int32_t m, const writer_map *w) {
  if (det_side_rooted(c, 0) && m != det_root_member(p, c)) return 1;   /* receives nothing */
  for (int32_t s = 0; s < c->nrecv_slots; s++) {
    const det_iov *v = det_slot(p, c, 0, m, s);
    for (int32_t k = 0; k < v->n; k++) {
      const det_piece *pc = &p->pieces[v->first + (uint32_t)k];
      if (pc->len && (!is_native_writer(g, w, pc->addr) || !is_native_writer(g, w, pc->addr + pc->len - 1))) return 0;
    }
  }
  return 1;
}

/* What rank r receives: (collective, member index) pairs, residual transfers and residual
   reductions, by rank. */
typedef struct {
  int64_t *cstart, *xstart, *rstart;   /* nprocs + 1 offsets */
  int64_t *cl;                         /* collective << 32 | member index */
  int64_t *xl, *rl;                    /* residual transfer and reduction indices */
} by_rank;

static int by_rank_build(const cdag_plan *p, by_rank *b) {
  int64_t nm = 0;
  for (int64_t i = 0; i < p->ncolls; i++) nm += p->colls[i].nranks;
  b->cstart = calloc((size_t)p->nprocs + 1, sizeof *b->cstart);
  b->xstart = calloc((size_t)p->nprocs + 1, sizeof *b->xstart);
  b->cl = malloc((size_t)(nm ? nm : 1) * sizeof *b->cl);
  b->xl = malloc((size_t)(p->nxfers ? p->nxfers : 1) * sizeof *b->xl);
  b->rstart = calloc((size_t)p->nprocs + 1, sizeof *b->rstart);
  b->rl = malloc((size_t)(p->nreds ? p->nreds : 1) * sizeof *b->rl);
  if (!b->cstart || !b->xstart || !b->cl || !b->xl || !b->rstart || !b->rl) return CDAG_NOMEM("native collectives");
  for (int64_t i = 0; i < p->ncolls; i++)
    for (int32_t m = 0; m < p->colls[i].nranks; m++) b->cstart[p->ranks[p->colls[i].ranks_first + m] + 1]++;
  for (int64_t x = 0; x < p->nxfers; x++) b->xstart[p->xfers[x].dst + 1]++;
  for (int64_t x = 0; x < p->nreds; x++) b->rstart[p->reds[x].dst + 1]++;
  for (int32_t r = 0; r < p->nprocs; r++) {
    b->cstart[r + 1] += b->cstart[r];
    b->xstart[r + 1] += b->xstart[r];
    b->rstart[r + 1] += b->rstart[r];
  }
  for (int64_t i = 0; i < p->ncolls; i++)
    for (int32_t m = 0; m < p->colls[i].nranks; m++) b->cl[b->cstart[p->ranks[p->colls[i].ranks_first + m]]++] = i << 32 | m;
  for (int64_t x = 0; x < p->nxfers; x++) b->xl[b->xstart[p->xfers[x].dst]++] = x;
  for (int64_t x = 0; x < p->nreds; x++) b->rl[b->rstart[p->reds[x].dst]++] = x;
  for (int32_t r = p->nprocs; r > 0; r--) {   /* the fill moved each start to the next's */
    b->cstart[r] = b->cstart[r - 1];
    b->xstart[r] = b->xstart[r - 1];
    b->rstart[r] = b->rstart[r - 1];
  }
  b->cstart[0] = b->xstart[0] = b->rstart[0] = 0;
  return CDAG_OK;
}

static void by_rank_free(by_rank *b) {
  free(b->cstart);
  free(b->xstart);
  free(b->rstart);
  free(b->cl);
  free(b->xl);
  free(b->rl);
}

static void mark_rank(const cdag_graph *g, cdag_plan *p, int32_t r, const writer_map *w, const by_rank *b) {
  for (int64_t k = b->cstart[r]; k < b->cstart[r + 1]; k++) {
    int64_t i = b->cl[k] >> 32;
    const det_coll *c = &p->colls[i];
    if (c->kind != DET_BARRIER && !coll_native_on(g, p, c, (int32_t)(b->cl[k] & 0xffffffff), w)) p->native[i] = 0;
  }
  for (int64_t k = b->xstart[r]; k < b->xstart[r + 1]; k++) {
    const df_xfer *t = &p->xfers[b->xl[k]];
    if (is_native_writer(g, w, t->dst_addr)) {
      p->native_residual++;
      p->native_residual_bytes += df_xfer_bytes(t);
    }
  }
  for (int64_t k = b->rstart[r]; k < b->rstart[r + 1]; k++)
    p->native_residual_reds += is_native_writer(g, w, p->reds[b->rl[k]].dst_addr);
}

static void count_calls(const cdag_graph *g, cdag_plan *p) {
  for (int64_t c = 0; c < g->ncalls; c++) {   /* one per call: counted at its first member */
    const ir_call *k = &g->calls[c];
    const int32_t *ranks;
    int32_t n = ir_comm_members(g, k->comm, &ranks);
    if (n > 0 && g->rank[k->op] == (ranks ? ranks[0] : 0)) p->native_calls[k->kind]++;
  }
}

int det_mark_native(const cdag_graph *g, cdag_plan *p) {
  if (!g->ncalls) return CDAG_OK;
  by_rank b = {0};
  p->native = malloc((size_t)(p->ncolls ? p->ncolls : 1));
  int rc = p->native ? by_rank_build(p, &b) : CDAG_NOMEM("native collectives");
  count_calls(g, p);
  for (int64_t i = 0; i < p->ncolls && p->native; i++)   /* a barrier leaves no bytes: native if one was called */
    p->native[i] = p->colls[i].kind != DET_BARRIER || p->native_calls[IR_COLL_BARRIER] > 0;
  for (int32_t r = 0; r < g->nprocs && rc == CDAG_OK; r++) {
    writer_map w = {0};
    for (int32_t k = g->rank_start[r]; k < g->rank_start[r + 1] && rc == CDAG_OK; k++) {
      uint64_t lo, hi;
      int32_t op = g->rank_ops[k];
      if (written_range(g, op, &lo, &hi)) rc = wm_write(&w, lo, hi, g->kind[op] == IR_COPY ? copy_writer(g, &w, op) : op);
    }
    if (rc == CDAG_OK) mark_rank(g, p, r, &w, &b);
    wm_free(&w);
  }
  by_rank_free(&b);
  return rc;
}

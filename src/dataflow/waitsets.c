/* cdag — src/dataflow/waitsets.c: which ranks each rank waits for.
 *
 * W(op) = {rank(op)} ∪ W(its dependency predecessors) ∪ W(matched send) for a receive,
 * computed once per op in match order; W_i is the union over rank i's last ops (those no op
 * of the rank depends on: the others' sets lie inside their dependents').
 * A set is held in one of two forms. While it is one circular interval of ranks (lo up to
 * hi, modulo p), as in rings, chains and barriers, it is a value in the op's own slot: a
 * union of two such sets is a few comparisons and touches no other memory (the partner's
 * slot is the one far access a receive makes). Otherwise it is a persistent list of
 * disjoint, non-touching rank intervals in descending order (head = highest interval),
 * nodes in one pool: a union shares the unchanged tail of its operands, and a union that
 * equals an operand reuses it, so adding a rank above, or inside the head interval of, a
 * list costs O(1) time and at most one node; a general union costs O(|A| + |B|) and creates
 * nodes only for the part above the first shared tail (plus, for an operand still held as
 * an interval, the one or two nodes that spell it out; a single rank's node is made once).
 * Worst case: O(p) intervals per set (alternating ranks), O(n p) time and nodes in total;
 * trees, rings, butterflies and barriers stay far below (a binomial tree: O(1) nodes per op).
 * The output (sorted intervals per rank) is O(sum of |W_i|): O(p log p) for a binomial
 * tree, O(p) for rings and barriers; a rank's list is written by copying the part already
 * written for another rank (a tree parent's list) and walking only the nodes above it. */
#include <stdlib.h>
#include <string.h>

#include "dataflow/dataflow_int.h"

typedef struct {
  int32_t lo, hi, next;      /* interval, next lower node (-1: end) */
  int32_t len;               /* intervals in the list this node heads */
} ws_nd;                     /* one cache access per node visited */

typedef struct {
  ws_nd *nd;                 /* node pool; a set is the index of its head node */
  int64_t n, cap;
  int32_t *single;           /* rank -> its one-node list, -1 not made yet */
} ws_pool;

static int ws_node(ws_pool *w, int32_t lo, int32_t hi, int32_t next, int32_t *id) {
  BASE_GROW(w->nd, w->n, w->cap, 1, "wait sets");
  w->nd[w->n] = (ws_nd){lo, hi, next, 1 + (next >= 0 ? w->nd[next].len : 0)};
  *id = (int32_t)w->n++;
  return CDAG_OK;
}

/* Is a ⊆ b? Walks both lists from the top; a shared tail is a subset of itself. */
static int ws_subset(const ws_pool *w, int32_t a, int32_t b) {
  for (; a >= 0; a = w->nd[a].next) {
    while (b >= 0 && b != a && w->nd[b].lo > w->nd[a].hi) b = w->nd[b].next;
    if (b == a) return 1;
    if (b < 0 || w->nd[b].lo > w->nd[a].lo || w->nd[b].hi < w->nd[a].hi) return 0;
  }
  return 1;
}

/* Builds the union of a and b (neither a subset of the other) as new nodes down to the
   first point where the rest is one shared tail. `pend` is the interval being grown; it is
   flushed as a node when the next interval neither overlaps nor touches it. */
typedef struct {
  ws_pool *w;
  int32_t head, last;   /* new list so far: first and last node, -1 none */
  int32_t plo, phi;     /* pending interval; phi < plo: none */
} ws_builder;

static int ws_flush(ws_builder *b, int32_t tail) {
  int32_t id = -1;
  int rc = ws_node(b->w, b->plo, b->phi, tail, &id);
  if (rc) return rc;
  if (b->last >= 0) b->w->nd[b->last].next = id;
  else b->head = id;
  b->last = id;
  return CDAG_OK;
}

/* Adds [lo, hi] (no higher than anything added before). */
static int ws_add(ws_builder *b, int32_t lo, int32_t hi) {
  if (b->phi >= b->plo && hi + 1 >= b->plo) {
    if (lo < b->plo) b->plo = lo;
    return CDAG_OK;
  }
  if (b->phi >= b->plo) {
    int rc = ws_flush(b, -1);
    if (rc) return rc;
  }
  b->plo = lo;
  b->phi = hi;
  return CDAG_OK;
}

/* Ends the list with the shared tail t: absorbs its intervals that touch the pending one,
   then links the rest. */
static int ws_finish(ws_builder *b, int32_t t) {
  const ws_pool *w = b->w;
  while (t >= 0 && b->phi >= b->plo && w->nd[t].hi + 1 >= b->plo) {
    if (w->nd[t].lo < b->plo) b->plo = w->nd[t].lo;
    t = w->nd[t].next;
  }
  if (b->phi >= b->plo) return ws_flush(b, t);
  if (b->last >= 0) b->w->nd[b->last].next = t;
  else b->head = t;
  return CDAG_OK;
}

static int ws_list_union(ws_pool *w, int32_t a, int32_t b, int32_t *out) {
  if (a < 0 || a == b || (b >= 0 && ws_subset(w, a, b))) { *out = b; return CDAG_OK; }
  if (b < 0 || ws_subset(w, b, a)) { *out = a; return CDAG_OK; }
  ws_builder bl = {.w = w, .head = -1, .last = -1, .plo = 1, .phi = 0};
  int64_t first = w->n;
  int rc = CDAG_OK;
  while (rc == CDAG_OK && a >= 0 && b >= 0 && a != b) {
    int take_a = w->nd[a].hi >= w->nd[b].hi;
    int32_t *k = take_a ? &a : &b;
    rc = ws_add(&bl, w->nd[*k].lo, w->nd[*k].hi);
    *k = w->nd[*k].next;
  }
  if (rc == CDAG_OK) rc = ws_finish(&bl, a >= 0 ? a : b);
  for (int64_t k = w->n - 1; k >= first; k--) /* new nodes form one chain, linked after creation */
    w->nd[k].len = 1 + (w->nd[k].next >= 0 ? w->nd[w->nd[k].next].len : 0);
  *out = bl.head;
  return rc;
}

/* A set as an op holds it: a pool list head (>= 0), or WS_ARC | lo << 31 | hi for the
   circular interval lo, lo+1, ..., hi (mod p); all p ranks are the arc 0..p-1. */
typedef int64_t ws_set;
#define WS_ARC ((int64_t)1 << 62)
#define WS_LO(s) ((int32_t)(((s) >> 31) & 0x7fffffff))
#define WS_HI(s) ((int32_t)((s) & 0x7fffffff))

static ws_set ws_arc(int32_t lo, int32_t hi) { return WS_ARC | (int64_t)lo << 31 | hi; }

/* The union of arcs a and b if it is an arc. Positions are taken relative to a's start:
   a covers 0..la-1, b starts at b0 and ends at b1 (which may pass p: b wraps past a). */
static int ws_arc_union(int64_t p, ws_set a, ws_set b, ws_set *out) {
  int64_t a0 = WS_LO(a), la = (WS_HI(a) - a0 + p) % p + 1;
  int64_t b0 = (WS_LO(b) - a0 + p) % p, b1 = b0 + (WS_HI(b) - WS_LO(b) + p) % p;
  int64_t lo, hi; /* relative; hi - lo + 1 ranks */
  if (b0 <= la) lo = 0, hi = b1 > la - 1 ? b1 : la - 1;            /* b starts in or right after a */
  else if (b1 >= p - 1) lo = b0, hi = p + (b1 - p > la - 1 ? b1 - p : la - 1); /* b reaches a's start */
  else return 0;                                                     /* a gap on both sides */
  *out = hi - lo + 1 >= p ? ws_arc(0, (int32_t)p - 1) : ws_arc((int32_t)((a0 + lo) % p), (int32_t)((a0 + hi) % p));
  return 1;
}

/* The pool list of set s: an arc is spelled out as one or two nodes. */
static int ws_as_list(ws_pool *w, int32_t p, ws_set s, int32_t *out) {
  if (!(s & WS_ARC)) { *out = (int32_t)s; return CDAG_OK; }
  int32_t lo = WS_LO(s), hi = WS_HI(s), low = -1;
  if (lo == hi) { /* the common case, a rank's own set, spelled out once per rank */
    if (w->single[lo] < 0) CDAG_TRY(ws_node(w, lo, lo, -1, &w->single[lo]));
    *out = w->single[lo];
    return CDAG_OK;
  }
  if (lo < hi) return ws_node(w, lo, hi, -1, out);
  CDAG_TRY(ws_node(w, 0, hi, -1, &low));
  return ws_node(w, lo, p - 1, low, out);
}

static int ws_union(ws_pool *w, int32_t p, ws_set a, ws_set b, ws_set *out) {
  if (a == b) { *out = a; return CDAG_OK; }
  if ((a & WS_ARC) && (b & WS_ARC) && ws_arc_union(p, a, b, out)) return CDAG_OK;
  int32_t la, lb, u;
  CDAG_TRY(ws_as_list(w, p, a, &la));
  CDAG_TRY(ws_as_list(w, p, b, &lb));
  CDAG_TRY(ws_list_union(w, la, lb, &u));
  *out = u;
  return CDAG_OK;
}

static int ws_of_op(const cdag_graph *g, const match_result *m, ws_pool *w, ws_set *opset, int32_t op) {
  ws_set cur = -1; /* a predecessor is of the same rank: its set holds rank(op) already */
  int rc = CDAG_OK;
  for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1] && rc == CDAG_OK; k++)
    if (g->pred[k] != m->partner[op]) {
      if (cur < 0) cur = opset[g->pred[k]];
      else rc = ws_union(w, g->nprocs, cur, opset[g->pred[k]], &cur);
    }
  if (cur < 0) cur = ws_arc(g->rank[op], g->rank[op]);
  if (rc == CDAG_OK && g->kind[op] == IR_RECV) rc = ws_union(w, g->nprocs, cur, opset[m->partner[op]], &cur);
  opset[op] = cur;
  return rc;
}

/* Appends rank r's list, ascending, to the result. The walk down the list stops at a node
   that heads the list of a rank already written (its parent in a tree, usually): that
   tail is copied from the result, so the walk is short and the copy sequential. */
typedef struct {
  int32_t *head_of;           /* node -> a rank whose list it heads, -1 none */
  int32_t *above;  int64_t nabove, abovecap;   /* nodes above the copied tail */
  int64_t cap;                /* capacity of s->wait_lo/hi */
} ws_writer;

/* Room for `need` intervals in the result (both arrays grow together, by doubling). */
static int ws_reserve(ws_writer *wr, df_sst *s, int64_t need) {
  if (need <= wr->cap) return CDAG_OK;
  int64_t cap = base_grown_cap(wr->cap, need - wr->cap), used = wr->cap;
  if (base_resize((void **)&s->wait_lo, used, cap, sizeof *s->wait_lo, "wait sets") ||
      base_resize((void **)&s->wait_hi, used, cap, sizeof *s->wait_hi, "wait sets"))
    return CDAG_ERR_NOMEM;
  wr->cap = cap;
  return CDAG_OK;
}

static int ws_write_rank(const ws_pool *w, ws_writer *wr, int32_t head, int r, df_sst *s) {
  int64_t end = s->wait_start[r];
  int32_t k = head;
  wr->nabove = 0;
  for (; k >= 0 && wr->head_of[k] < 0; k = w->nd[k].next) {
    BASE_GROW(wr->above, wr->nabove, wr->abovecap, 1, "wait sets");
    wr->above[wr->nabove++] = k;
  }
  int64_t from = k >= 0 ? s->wait_start[wr->head_of[k]] : 0, n = k >= 0 ? s->wait_start[wr->head_of[k] + 1] - from : 0;
  int rc = ws_reserve(wr, s, end + n + wr->nabove);
  if (rc) return rc;
  memcpy(s->wait_lo + end, s->wait_lo + from, (size_t)n * sizeof *s->wait_lo);
  memcpy(s->wait_hi + end, s->wait_hi + from, (size_t)n * sizeof *s->wait_hi);
  end += n;
  for (int64_t i = wr->nabove - 1; i >= 0; i--) {
    s->wait_lo[end] = w->nd[wr->above[i]].lo;
    s->wait_hi[end++] = w->nd[wr->above[i]].hi;
  }
  s->wait_start[r + 1] = end;
  if (head >= 0 && wr->head_of[head] < 0) wr->head_of[head] = r;
  return CDAG_OK;
}

static int ws_write_arc(ws_writer *wr, ws_set a, int r, int32_t p, df_sst *s) {
  int64_t end = s->wait_start[r];
  CDAG_TRY(ws_reserve(wr, s, end + 2));
  int32_t lo = WS_LO(a), hi = WS_HI(a);
  if (lo > hi) { /* wraps: 0..hi, then lo..p-1 */
    s->wait_lo[end] = 0;
    s->wait_hi[end++] = hi;
    hi = p - 1;
  }
  s->wait_lo[end] = lo;
  s->wait_hi[end++] = hi;
  s->wait_start[r + 1] = end;
  return CDAG_OK;
}

static int ws_output(const cdag_graph *g, const ws_pool *w, const ws_set *rankset, df_sst *s) {
  ws_writer wr = {.head_of = malloc((size_t)(w->n ? w->n : 1) * sizeof *wr.head_of)};
  s->wait_start = malloc(((size_t)g->nprocs + 1) * sizeof *s->wait_start);
  int64_t total = 1;
  for (int r = 0; r < g->nprocs; r++) total += rankset[r] & WS_ARC ? 2 : w->nd[rankset[r]].len;
  int rc = wr.head_of && s->wait_start ? ws_reserve(&wr, s, total) : CDAG_NOMEM("wait sets");
  if (rc == CDAG_OK) {
    memset(wr.head_of, 0xff, (size_t)w->n * sizeof *wr.head_of);
    s->wait_start[0] = 0;
  }
  for (int r = 0; r < g->nprocs && rc == CDAG_OK; r++)
    rc = rankset[r] & WS_ARC ? ws_write_arc(&wr, rankset[r], r, g->nprocs, s)
                             : ws_write_rank(w, &wr, (int32_t)rankset[r], r, s);
  free(wr.head_of);
  free(wr.above);
  return rc;
}

static int df_waitsets_deps(const cdag_graph *g, const match_result *m, df_sst *s) {
  ws_pool w = {0};
  ws_set *opset = malloc((size_t)(g->nops ? g->nops : 1) * sizeof *opset);
  ws_set *rankset = malloc((size_t)g->nprocs * sizeof *rankset);
  w.single = malloc((size_t)g->nprocs * sizeof *w.single);
  int rc = CDAG_OK;
  if (!opset || !rankset || !w.single) rc = CDAG_NOMEM("wait sets");
  else memset(w.single, 0xff, (size_t)g->nprocs * sizeof *w.single);
  for (int64_t i = 0; i < g->nops && rc == CDAG_OK; i++) {
    if (i + IR_AHEAD < g->nops && g->kind[m->order[i + IR_AHEAD]] == IR_RECV)
      IR_PREFETCH(&opset[m->partner[m->order[i + IR_AHEAD]]]);
    rc = ws_of_op(g, m, &w, opset, m->order[i]);
  }
  /* W_i: the union over rank i's last ops (no dependent op): every other op's set is
     contained in the set of an op that depends on it, of the same rank */
  for (int r = 0; r < g->nprocs && rc == CDAG_OK; r++) {
    rankset[r] = ws_arc(r, r);
    for (int32_t k = g->rank_start[r]; k < g->rank_start[r + 1] && rc == CDAG_OK; k++) {
      int32_t op = g->rank_ops[k];
      if (g->succ_start[op] == g->succ_start[op + 1]) rc = ws_union(&w, g->nprocs, rankset[r], opset[op], &rankset[r]);
    }
  }
  if (rc == CDAG_OK) rc = ws_output(g, &w, rankset, s);
  free(opset); free(rankset);
  free(w.nd); free(w.single);
  return rc;
}

int df_waitsets(const cdag_graph *g, const match_result *m, df_sst *s) {
  ir_deps_view v;
  int rc = ir_deps_view_open(g, &v);
  if (rc == CDAG_OK) rc = df_waitsets_deps(v.g, m, s);
  ir_deps_view_close(&v);
  return rc;
}

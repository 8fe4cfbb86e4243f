/* cdag — src/dataflow/waitsets.c: which ranks each rank waits for.
 *
 * W(op) = {rank(op)} ∪ W(its dependency predecessors) ∪ W(matched send) for a receive,
 * computed once per op in match order; W_i is the union over rank i's ops. Sets are sorted
 * disjoint rank intervals in one pool; a union whose result equals an operand reuses it
 * (the usual case along chains and trees), so only genuinely new sets are stored. Cost per
 * union O(|A| + |B|); for trees, rings and butterflies the sets stay O(log p) intervals.
 * Worst case (alternating ranks) O(p) intervals per set. */
#include <stdlib.h>
#include <string.h>

#include "dataflow/dataflow_int.h"

typedef struct {
  int32_t *lo, *hi;  int64_t n, cap;        /* interval pool */
  int64_t *first;    int32_t *len;          /* per set */
  int64_t nsets, setcap;
} ws_pool;

static int ws_new_set(ws_pool *w, int32_t *id) {
  if (w->nsets == w->setcap) {
    int64_t cap = w->setcap ? w->setcap * 2 : 256;
    int64_t *f = realloc(w->first, (size_t)cap * sizeof *f);
    if (!f) return CDAG_NOMEM("wait sets");
    w->first = f;
    int32_t *l = realloc(w->len, (size_t)cap * sizeof *l);
    if (!l) return CDAG_NOMEM("wait sets");
    w->len = l;
    w->setcap = cap;
  }
  *id = (int32_t)w->nsets;
  w->first[w->nsets] = w->n;
  w->len[w->nsets++] = 0;
  return CDAG_OK;
}

/* Appends [lo, hi] to the newest set, merging with its last interval when they touch. */
static int ws_push(ws_pool *w, int32_t lo, int32_t hi) {
  int32_t s = (int32_t)w->nsets - 1;
  if (w->len[s] > 0 && w->hi[w->n - 1] + 1 >= lo) {
    if (hi > w->hi[w->n - 1]) w->hi[w->n - 1] = hi;
    return CDAG_OK;
  }
  if (w->n == w->cap) {
    int64_t cap = w->cap ? w->cap * 2 : 1024;
    int32_t *a = realloc(w->lo, (size_t)cap * sizeof *a);
    if (!a) return CDAG_NOMEM("wait sets");
    w->lo = a;
    int32_t *b = realloc(w->hi, (size_t)cap * sizeof *b);
    if (!b) return CDAG_NOMEM("wait sets");
    w->hi = b;
    w->cap = cap;
  }
  w->lo[w->n] = lo;
  w->hi[w->n++] = hi;
  w->len[s]++;
  return CDAG_OK;
}

/* Is set a a subset of set b? (both sorted, disjoint, non-touching) */
static int ws_subset(const ws_pool *w, int32_t a, int32_t b) {
  int64_t j = w->first[b], jend = j + w->len[b];
  for (int64_t i = w->first[a]; i < w->first[a] + w->len[a]; i++) {
    while (j < jend && w->hi[j] < w->lo[i]) j++;
    if (j == jend || w->lo[j] > w->lo[i] || w->hi[j] < w->hi[i]) return 0;
  }
  return 1;
}

static int ws_union(ws_pool *w, int32_t a, int32_t b, int32_t *out) {
  if (a < 0 || a == b || (b >= 0 && ws_subset(w, a, b))) { *out = b; return CDAG_OK; }
  if (b < 0 || ws_subset(w, b, a)) { *out = a; return CDAG_OK; }
  int rc = ws_new_set(w, out);
  int64_t i = w->first[a], iend = i + w->len[a], j = w->first[b], jend = j + w->len[b];
  while (rc == CDAG_OK && (i < iend || j < jend)) {
    int take_a = j == jend || (i < iend && w->lo[i] <= w->lo[j]);
    int64_t k = take_a ? i++ : j++;
    rc = ws_push(w, w->lo[k], w->hi[k]); /* pool may move: index, never pointers */
  }
  return rc;
}

static int ws_singleton(ws_pool *w, int32_t *cache, int rank, int32_t *out) {
  if (cache[rank] >= 0) { *out = cache[rank]; return CDAG_OK; }
  int rc = ws_new_set(w, out);
  if (rc == CDAG_OK) rc = ws_push(w, rank, rank);
  cache[rank] = *out;
  return rc;
}

static int ws_of_op(const cdag_graph *g, const match_result *m, ws_pool *w, int32_t *cache, int32_t *opset, int32_t op) {
  int32_t cur;
  int rc = ws_singleton(w, cache, g->rank[op], &cur);
  for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1] && rc == CDAG_OK; k++)
    if (g->pred[k] != m->partner[op]) rc = ws_union(w, cur, opset[g->pred[k]], &cur);
  if (rc == CDAG_OK && g->kind[op] == IR_RECV) rc = ws_union(w, cur, opset[m->partner[op]], &cur);
  opset[op] = cur;
  return rc;
}

static int ws_output(const cdag_graph *g, ws_pool *w, const int32_t *rankset, df_sst *s) {
  int64_t total = 0;
  for (int r = 0; r < g->nprocs; r++) total += w->len[rankset[r]];
  s->wait_start = malloc(((size_t)g->nprocs + 1) * sizeof *s->wait_start);
  s->wait_lo = malloc((size_t)(total ? total : 1) * sizeof *s->wait_lo);
  s->wait_hi = malloc((size_t)(total ? total : 1) * sizeof *s->wait_hi);
  if (!s->wait_start || !s->wait_lo || !s->wait_hi) return CDAG_NOMEM("wait sets");
  int64_t at = 0;
  for (int r = 0; r < g->nprocs; r++) {
    s->wait_start[r] = at;
    int32_t id = rankset[r];
    memcpy(s->wait_lo + at, w->lo + w->first[id], (size_t)w->len[id] * sizeof *s->wait_lo);
    memcpy(s->wait_hi + at, w->hi + w->first[id], (size_t)w->len[id] * sizeof *s->wait_hi);
    at += w->len[id];
  }
  s->wait_start[g->nprocs] = at;
  return CDAG_OK;
}

int df_waitsets(const cdag_graph *g, const match_result *m, df_sst *s) {
  ws_pool w = {0};
  int32_t *opset = malloc((size_t)(g->nops ? g->nops : 1) * sizeof *opset);
  int32_t *cache = malloc((size_t)g->nprocs * sizeof *cache);
  int32_t *rankset = malloc((size_t)g->nprocs * sizeof *rankset);
  int rc = CDAG_OK;
  if (!opset || !cache || !rankset) rc = CDAG_NOMEM("wait sets");
  if (rc == CDAG_OK) {
    memset(cache, 0xff, (size_t)g->nprocs * sizeof *cache);
    for (int64_t i = 0; i < g->nops && rc == CDAG_OK; i++) rc = ws_of_op(g, m, &w, cache, opset, m->order[i]);
    for (int r = 0; r < g->nprocs && rc == CDAG_OK; r++) {
      rc = ws_singleton(&w, cache, r, &rankset[r]);
      for (int32_t k = g->rank_start[r]; k < g->rank_start[r + 1] && rc == CDAG_OK; k++)
        rc = ws_union(&w, rankset[r], opset[g->rank_ops[k]], &rankset[r]);
    }
  }
  if (rc == CDAG_OK) rc = ws_output(g, &w, rankset, s);
  free(opset); free(cache); free(rankset);
  free(w.lo); free(w.hi); free(w.first); free(w.len);
  return rc;
}

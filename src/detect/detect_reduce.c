/* cdag — src/detect/detect_reduce.c: allreduce and reduce from reduction tuples.
 *
 * Algorithm (SEEDS-NOTES 2.7): reduction tuples with the same interned source set, count,
 * type and op describe one value computed at several places. If every contributor of the
 * set contributes once (or the op is idempotent) and every contributor receives the value,
 * it is an allreduce over the contributors; if exactly one contributor receives it, a
 * reduce rooted there. Floating-point values are rewritten only when exact_float is off
 * (MPI may reassociate). Cost: O(n log n) for the sort. */
#include <stdlib.h>

#include "detect/detect_int.h"

static const df_red *sr;

static int by_value(const void *a, const void *b) {
  const df_red *x = &sr[*(const int64_t *)a], *y = &sr[*(const int64_t *)b];
  if (x->set != y->set) return x->set < y->set ? -1 : 1;
  if (x->count != y->count) return x->count < y->count ? -1 : 1;
  if (x->type != y->type) return x->type < y->type ? -1 : 1;
  if (x->op != y->op) return x->op < y->op ? -1 : 1;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  return (x->dst_addr > y->dst_addr) - (x->dst_addr < y->dst_addr);
}

static int same_value(const df_red *a, const df_red *b) {
  return a->set == b->set && a->count == b->count && a->type == b->type && a->op == b->op;
}

/* Contributor ranks of a set in order, or -1 if some rank contributes twice to a
   non-idempotent op (or from two addresses). */
static int32_t contributors(const df_sst *s, const df_red *d, int32_t *out, uint8_t *seen) {
  const df_set *e = &s->sets[d->set];
  int32_t n = 0, bad = 0;
  for (int32_t i = 0; i < e->nruns && !bad; i++) {
    const df_run *r = &s->runs[e->first + i];
    if (r->mult > 1 && !ir_rop_idempotent(d->op)) bad = 1;
    for (int32_t k = r->lo; k <= r->hi && !bad; k++) {
      if (seen[k]) bad = 1;
      else seen[k] = 1, out[n++] = k;
    }
  }
  for (int32_t i = 0; i < n; i++) seen[out[i]] = 0;
  return bad ? -1 : n;
}

static int int32_cmp(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* One group t[0..n) of tuples of the same value; dsts sorted. */
static int classify(det_state *st, const int64_t *t, int64_t n, int32_t *members, int64_t *pick, uint8_t *seen) {
  const df_red *r = st->sst->reds;
  const df_red *d = &r[t[0]];
  char rb[128];
  int32_t m = contributors(st->sst, d, members, seen);
  if (m < 0) return det_note(st, "reduction of %llu %s at rank %d has repeated contributions: left as is",
                             (unsigned long long)d->count, ir_type_name(d->type), d->dst);
  ir_sort(members, (size_t)m, sizeof *members, int32_cmp);
  if (!det_group_ok(st, m)) return CDAG_OK;
  if (st->opts.exact_float && (d->type == CDAG_FLOAT || d->type == CDAG_DOUBLE))
    return det_note(st, "%s reduction over %s not rewritten: exact_float keeps the original order",
                    ir_type_name(d->type), det_ranks_text(members, m, st->g->nprocs, rb, sizeof rb));
  int64_t np = 0; /* one tuple per receiving contributor */
  for (int64_t i = 0; i < n; i++) {
    int32_t dst = r[t[i]].dst;
    if ((np > 0 && r[pick[np - 1]].dst == dst) || !bsearch(&dst, members, (size_t)m, sizeof *members, int32_cmp)) continue;
    pick[np++] = t[i];
  }
  if (np == m) return det_add_proto(st, DET_ALLREDUCE, -1, members, m, pick, np, 1);
  if (np == 1) return det_add_proto(st, DET_REDUCE, r[pick[0]].dst, members, m, pick, 1, 1);
  return np > 1 ? det_note(st, "reduction over %s delivered to %lld of them: left as is",
                           det_ranks_text(members, m, st->g->nprocs, rb, sizeof rb), (long long)np)
                : CDAG_OK;
}

int det_reductions(det_state *st) {
  int64_t n = 0, cap = st->sst->nreds ? st->sst->nreds : 1;
  int64_t *t = malloc((size_t)cap * sizeof *t), *pick = malloc((size_t)cap * sizeof *pick);
  int32_t *members = malloc((size_t)st->g->nprocs * sizeof *members);
  uint8_t *seen = calloc((size_t)st->g->nprocs, 1);
  int rc = t && pick && members && seen ? CDAG_OK : CDAG_NOMEM("detection");
  for (int64_t i = 0; i < st->sst->nreds && rc == CDAG_OK; i++)
    if (!st->rused[i]) t[n++] = i;
  sr = st->sst->reds;
  if (rc == CDAG_OK) ir_sort(t, (size_t)n, sizeof *t, by_value);
  for (int64_t i = 0; i < n && rc == CDAG_OK;) {
    int64_t j = i + 1;
    while (j < n && same_value(&sr[t[i]], &sr[t[j]])) j++;
    rc = classify(st, t + i, j - i, members, pick, seen);
    i = j;
  }
  free(t); free(pick); free(members); free(seen);
  return rc;
}

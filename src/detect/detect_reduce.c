/* cdag — src/detect/detect_reduce.c: allreduce and reduce from reduction tuples.
 *
 * Algorithm (after Hoefler and Schneider, PACT 2012, Algorithm 5): reduction tuples with the
 * same interned source set, count, type and op describe one value computed at several places. If every contributor of the
 * set contributes once (or the op is idempotent) and every contributor receives the value,
 * it is an allreduce over the contributors. Tuples whose sets are one set shifted by k*l for
 * the k-th contributor (member k gets block k of everybody's contribution) form a
 * reduce_scatter_block. What is left, received by exactly one rank, a contributor, is a
 * reduce rooted there; a value several ranks but not all contributors receive is replicate.c's.
 * Floating-point values are rewritten only when exact_float is off (MPI may reassociate).
 * Cost: O(n log n) for the sorts plus O(runs) per tuple. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect_int.h"

/* Reduction tuples by (value: set, count, type, op; then dst, dst_addr). */
static int sort_by_value(const df_red *r, int64_t *t, int64_t n) {
  base_key k[] = {BASE_KEY(r, set), BASE_KEY(r, count), BASE_KEY(r, type), BASE_KEY(r, op), BASE_KEY(r, dst), BASE_KEY(r, dst_addr)};
  return base_sort_fields(t, n, k, 6);
}

static int same_value(const df_red *a, const df_red *b) {
  return a->set == b->set && a->count == b->count && a->type == b->type && a->op == b->op;
}

/* Contributor ranks of a set in order, or -1 if some rank contributes twice to a
   non-idempotent op (or from two addresses). */
int32_t det_contributors(const df_sst *s, const df_red *d, int32_t *out, uint8_t *seen) {
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

/* Does every contribution of d come from its own rank (a local reduction, nothing to detect)? */
static int local_only(const df_sst *s, const df_red *d) {
  const df_set *e = &s->sets[d->set];
  for (int32_t i = 0; i < e->nruns; i++)
    if (s->runs[e->first + i].lo != d->dst || s->runs[e->first + i].hi != d->dst) return 0;
  return 1;
}

static int int32_cmp(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Why det_contributors refused d, for the report: a rank whose value counts twice, or that
   contributes from two addresses (an accumulator set from one buffer, then summed with others:
   no collective call reduces two buffers of one rank). O(ranks of the set), seen left zero. */
static void clash_text(const df_sst *s, const df_red *d, uint8_t *seen, char *buf, size_t len) {
  const df_set *e = &s->sets[d->set];
  int32_t at = -1, last = e->nruns - 1, k = -1;   /* the run where rank k comes again */
  snprintf(buf, len, "has repeated contributions");
  for (int32_t i = 0; i < e->nruns && at < 0; i++) {
    const df_run *r = &s->runs[e->first + i];
    if (r->mult > 1 && !ir_rop_idempotent(d->op)) {
      snprintf(buf, len, "counts rank %d's value at 0x%llx %u times", r->lo, (unsigned long long)r->addr, r->mult);
      last = i;
      break;
    }
    for (int32_t q = r->lo; q <= r->hi && at < 0; q++)
      if (seen[q]) at = last = i, k = q;
      else seen[q] = 1;
  }
  for (int32_t i = 0; i <= last; i++)
    for (int32_t q = s->runs[e->first + i].lo; q <= s->runs[e->first + i].hi; q++) seen[q] = 0;
  for (int32_t j = 0; j < at; j++) {
    const df_run *q = &s->runs[e->first + j];
    if (q->lo > k || q->hi < k) continue;
    uint64_t a = q->addr, b = s->runs[e->first + at].addr;
    snprintf(buf, len, "takes rank %d's values from two addresses (0x%llx and 0x%llx)", k,
             (unsigned long long)(a < b ? a : b), (unsigned long long)(a < b ? b : a));
    return;
  }
}

/* One group t[0..n) of tuples of the same value; dsts sorted. Pass 0 takes allreduces,
   pass 1 reduces (and notes what stays). */
static int classify(det_state *st, const int64_t *t, int64_t n, int32_t *members, int64_t *pick, uint8_t *seen,
                    int pass) {
  const df_red *r = st->sst->reds;
  const df_red *d = &r[t[0]];
  char rb[128];
  int32_t m = det_contributors(st->sst, d, members, seen);
  if (m < 0) {
    if (pass == 0 || local_only(st->sst, d)) return CDAG_OK;
    clash_text(st->sst, d, seen, rb, sizeof rb);
    return det_note(st, "reduction of %llu %s at rank %d %s: left as is", (unsigned long long)d->count,
                    ir_type_name(d->type), d->dst, rb);
  }
  if (det_sort_ranks(members, m, st->g->nprocs)) return CDAG_NOMEM("detection");
  if (!det_group_ok(st, m)) return CDAG_OK;
  if (st->opts.exact_float && ir_type_is_float(d->type))
    return pass == 0 ? CDAG_OK : det_note(st, "%s reduction over %s not rewritten: exact_float keeps the original order",
                    ir_type_name(d->type), det_ranks_text(members, m, st->g->nprocs, rb, sizeof rb));
  int64_t np = 0; /* one tuple per receiving contributor */
  for (int64_t i = 0; i < n; i++) {
    int32_t dst = r[t[i]].dst;
    if ((np > 0 && r[pick[np - 1]].dst == dst) || !bsearch(&dst, members, (size_t)m, sizeof *members, int32_cmp)) continue;
    pick[np++] = t[i];
  }
  if (np == m && pass == 0) return det_add_proto(st, DET_ALLREDUCE, -1, members, m, pick, np, 1);
  if (pass == 0) return CDAG_OK;
  int64_t nd = 0;   /* ranks that receive it, contributors or not (tuples are by dst) */
  for (int64_t i = 0; i < n; i++) nd += i == 0 || r[t[i]].dst != r[t[i - 1]].dst;
  if (np == 1 && nd == 1) return det_add_proto(st, DET_REDUCE, r[pick[0]].dst, members, m, pick, 1, 1);
  return CDAG_OK; /* kept by several ranks but not all contributors: the replication pass's (replicate.c) */
}

/* ---- reduce_scatter_block ---- */

/* Index of rank among the contributors of a set (ranks below it), O(runs). */
static int64_t rank_index(const df_sst *s, const df_set *e, int32_t rank) {
  int64_t k = 0;
  for (int32_t i = 0; i < e->nruns; i++) {
    const df_run *r = &s->runs[e->first + i];
    if (r->lo < rank) k += (r->hi < rank ? r->hi : rank - 1) - r->lo + 1;
  }
  return k;
}

/* Hash of the set shifted back by k blocks, with count, type and op. */
static uint64_t shifted_key(const df_sst *s, const df_red *d, int64_t k) {
  const df_set *e = &s->sets[d->set];
  uint64_t l = d->count * (uint64_t)ir_type_size(d->type), h = d->count * 31 + (uint64_t)(d->type << 8 | d->op);
  for (int32_t i = 0; i < e->nruns; i++) {
    const df_run *r = &s->runs[e->first + i];
    uint64_t v[3] = {(uint64_t)(uint32_t)r->lo << 32 | (uint32_t)r->hi, r->mult, r->addr - (uint64_t)k * l};
    for (int j = 0; j < 3; j++) h = (h ^ v[j]) * 0x100000001b3ULL + (h >> 29);
  }
  return h;
}

/* Do tuples a (block ka) and b (block kb) hold the same set shifted by their blocks? */
static int same_shifted(const df_sst *s, const df_red *a, int64_t ka, const df_red *b, int64_t kb) {
  const df_set *x = &s->sets[a->set], *y = &s->sets[b->set];
  if (a->count != b->count || a->type != b->type || a->op != b->op || x->nruns != y->nruns) return 0;
  uint64_t l = a->count * (uint64_t)ir_type_size(a->type);
  for (int32_t i = 0; i < x->nruns; i++) {
    const df_run *p = &s->runs[x->first + i], *q = &s->runs[y->first + i];
    if (p->lo != q->lo || p->hi != q->hi || p->mult != q->mult || p->addr - (uint64_t)ka * l != q->addr - (uint64_t)kb * l)
      return 0;
  }
  return 1;
}

/* Group g[0..n) (same key, sorted by block; rs_k: each tuple's block): member k must hold
   block k, for every k. */
static int try_reduce_scatter(det_state *st, const int64_t *rs_k, const int64_t *g, int64_t n, int32_t *members,
                              uint8_t *seen) {
  const df_sst *s = st->sst;
  const df_red *d = &s->reds[g[0]];
  int32_t m = det_contributors(s, d, members, seen);
  if (m < 2 || n != m || !det_group_ok(st, m)) return CDAG_OK;
  if (st->opts.exact_float && ir_type_is_float(d->type)) return CDAG_OK;
  if (det_sort_ranks(members, m, st->g->nprocs)) return CDAG_NOMEM("detection");
  for (int64_t i = 0; i < n; i++)
    if (rs_k[g[i]] != i || s->reds[g[i]].dst != members[i] || !same_shifted(s, d, 0, &s->reds[g[i]], i)) return CDAG_OK;
  return det_add_proto(st, DET_REDUCE_SCATTER_BLOCK, -1, members, m, g, n, 1);
}

static int reduce_scatter_pass(det_state *st, int64_t *t, int32_t *members, uint8_t *seen) {
  const df_sst *s = st->sst;
  int64_t n = 0, cap = s->nreds ? s->nreds : 1;
  uint64_t *rs_key = malloc((size_t)cap * sizeof *rs_key);  /* per call: analysis is reentrant */
  int64_t *rs_k = malloc((size_t)cap * sizeof *rs_k);
  int64_t *g = malloc((size_t)cap * sizeof *g);
  int rc = rs_key && rs_k && g ? CDAG_OK : CDAG_NOMEM("detection");
  for (int64_t i = 0; i < s->nreds && rc == CDAG_OK; i++) {
    if (st->rused[i]) continue;
    rs_k[i] = rank_index(s, &s->sets[s->reds[i].set], s->reds[i].dst);
    rs_key[i] = shifted_key(s, &s->reds[i], rs_k[i]);
    t[n++] = i;
  }
  if (rc == CDAG_OK) { /* by (shifted key, block) */
    base_key k[] = {{rs_key, sizeof *rs_key, 0, 8, 0, NULL}, {rs_k, sizeof *rs_k, 0, 8, 1, NULL}};
    rc = base_sort_fields(t, n, k, 2);
  }
  for (int64_t i = 0; i < n && rc == CDAG_OK;) {
    int64_t j = i + 1;
    while (j < n && rs_key[t[j]] == rs_key[t[i]]) j++;
    if (j - i > 1) {
      memcpy(g, t + i, (size_t)(j - i) * sizeof *g);
      rc = try_reduce_scatter(st, rs_k, g, j - i, members, seen);
    }
    i = j;
  }
  free(rs_key); free(rs_k); free(g);
  return rc;
}

/* Allreduces (pass 0) or reduces (pass 1) among the tuples not taken yet. */
static int value_pass(det_state *st, int64_t *t, int64_t *pick, int32_t *members, uint8_t *seen, int pass) {
  int64_t n = 0;
  int rc = CDAG_OK;
  for (int64_t i = 0; i < st->sst->nreds; i++)
    if (!st->rused[i]) t[n++] = i;
  const df_red *r = st->sst->reds;
  if (n && (rc = sort_by_value(r, t, n))) return rc;
  for (int64_t i = 0; i < n && rc == CDAG_OK;) {
    int64_t j = i + 1;
    while (j < n && same_value(&r[t[i]], &r[t[j]])) j++;
    rc = classify(st, t + i, j - i, members, pick, seen, pass);
    i = j;
  }
  return rc;
}

int det_reductions(det_state *st) {
  int64_t cap = st->sst->nreds ? st->sst->nreds : 1;
  int64_t *t = malloc((size_t)cap * sizeof *t), *pick = malloc((size_t)cap * sizeof *pick);
  int32_t *members = malloc((size_t)st->g->nprocs * sizeof *members);
  uint8_t *seen = calloc((size_t)st->g->nprocs, 1);
  int rc = t && pick && members && seen ? CDAG_OK : CDAG_NOMEM("detection");
  if (rc == CDAG_OK && st->sst->nreds) {
    rc = value_pass(st, t, pick, members, seen, 0);
    if (rc == CDAG_OK) rc = reduce_scatter_pass(st, t, members, seen);
    if (rc == CDAG_OK) rc = value_pass(st, t, pick, members, seen, 1);
  }
  free(t); free(pick); free(members); free(seen);
  return rc;
}

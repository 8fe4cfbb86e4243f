/* cdag — src/detect/replicate.c: replication as a placement step after detection.
 *
 * Rule: a reduced value (reduction tuples of one interned set, count, type and op) that
 * several, but not all, of its contributors keep is a reduce plus a broadcast to the ranks
 * that keep it. A rank keeps the value when a non-scratch byte of it ends the phase holding
 * it, which is exactly when the SST has a reduction tuple of that value at the rank: a copy
 * that lands in scratch, or that the rank overwrites before the phase ends, is no tuple.
 * detect_reduce.c takes the value when every contributor keeps it (allreduce) or one does
 * (reduce); the groups left with two or more keepers (readers) come here. The plan gets a
 * reduce over the contributors rooted at the smallest reader that contributes, then a bcast
 * over the readers from that root whose send slot is the reduce's result (det_proto.after,
 * det_coll.after: it runs after the reduce). Instead of one residual reduction per reader
 * (every contributor sending to every reader), the value is reduced once and replicated.
 * The bcast needs no min_group: the alternative is not a few messages but whole residual
 * reductions. Readers that contribute nothing are fine (they only receive). When every
 * contributor keeps the value (detect_reduce.c made an allreduce of it) and other ranks keep
 * it too, they get it by a bcast after the allreduce from its smallest member. A value no
 * contributor keeps has no root to reduce into and stays residual (noted). A reader that
 * keeps the value at two addresses gets the first by the bcast; the other stays a residual
 * reduction (a member of an allreduce gets its second address by the bcast after it). Cost: O(n log n) for the sort of n reduction tuples, O(runs + tuples) per value. */
#include <stdlib.h>

#include "detect/detect_int.h"

/* Per call: work arrays sized once. */
typedef struct {
  int64_t *t;          /* unused reduction tuples, by (value, dst, dst_addr) */
  int64_t *readers;    /* one tuple per reading rank of the value at hand */
  int32_t *members;    /* contributors, then reader ranks */
  int32_t *ranks;
  uint8_t *seen;       /* nprocs zeros between uses */
  int64_t *allr;       /* the allreduce protos, by value (their first tuple's) */
  int64_t nallr;
} repl_work;

static int same_value(const df_red *a, const df_red *b) {
  return a->set == b->set && a->count == b->count && a->type == b->type && a->op == b->op;
}

/* Values (set, count, type, op) in one order: -1, 0, 1. */
static int value_cmp(const df_red *a, const df_red *b) {
  if (a->set != b->set) return a->set < b->set ? -1 : 1;
  if (a->count != b->count) return a->count < b->count ? -1 : 1;
  if (a->type != b->type) return a->type < b->type ? -1 : 1;
  return (a->op > b->op) - (a->op < b->op);
}

static const df_red *proto_value(const det_state *st, int64_t proto) {
  return &st->sst->reds[st->tuples[st->protos[proto].tuples_first]];
}

static int allr_cmp(const void *a, const void *b, void *ctx) {
  const det_state *st = ctx;
  return value_cmp(proto_value(st, *(const int64_t *)a), proto_value(st, *(const int64_t *)b));
}

/* The allreduces detect_reduce.c made, sorted by value, so that ranks outside the
   contributors that keep an allreduce's result can get it by a bcast after it. */
static int index_allreduces(det_state *st, repl_work *w) {
  w->allr = malloc((size_t)(st->nprotos ? st->nprotos : 1) * sizeof *w->allr);
  if (!w->allr) return CDAG_NOMEM("replication");
  for (int64_t i = 0; i < st->nprotos; i++)
    if (st->protos[i].kind == DET_ALLREDUCE && st->protos[i].ntuples) w->allr[w->nallr++] = i;
  base_sort_r(w->allr, w->nallr, sizeof *w->allr, allr_cmp, st);
  return CDAG_OK;
}

/* The allreduce proto of value d, or -1. O(log n). */
static int64_t allreduce_of(const det_state *st, const repl_work *w, const df_red *d) {
  int64_t lo = 0, hi = w->nallr;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (value_cmp(proto_value(st, w->allr[mid]), d) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < w->nallr && value_cmp(proto_value(st, w->allr[lo]), d) == 0 ? w->allr[lo] : -1;
}

/* Ranks keep the result of allreduce proto a at addresses it does not write (w->ranks[0..nr),
   w->readers their tuples): ranks outside the contributors, or members at a second address.
   A bcast from its smallest member, which has the result, after it (the root's own second
   address stays residual: a bcast's root receives nothing). */
static int replicate_allreduce(det_state *st, repl_work *w, int64_t a, int32_t nr) {
  int32_t root = proto_value(st, a)->dst, k = 0;   /* its tuples are by dst: the smallest member */
  for (int32_t i = 0; i < nr; i++)
    if (w->ranks[i] != root) w->ranks[k] = w->ranks[i], w->readers[k++] = w->readers[i];
  if (!(nr = k)) return CDAG_OK;
  while (k > 0 && w->ranks[k - 1] > root) w->ranks[k] = w->ranks[k - 1], k--;   /* insert the root */
  w->ranks[k] = root;
  int rc = det_add_proto(st, DET_BCAST, root, w->ranks, nr + 1, w->readers, nr, 1);
  if (rc == CDAG_OK) st->protos[st->nprotos - 1].after = a + 1;
  return rc;
}

static int is_member(const int32_t *sorted, int32_t n, int32_t rank) {
  int32_t lo = 0, hi = n;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (sorted[mid] < rank) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && sorted[lo] == rank;
}

/* One value: tuples t[0..n), sorted by (dst, dst_addr). */
static int replicate_value(det_state *st, repl_work *w, const int64_t *t, int64_t n) {
  const df_red *r = st->sst->reds, *d = &r[t[0]];
  int32_t m = det_contributors(st->sst, d, w->members, w->seen);
  if (m < 0 || !det_group_ok(st, m)) return CDAG_OK;        /* detect_reduce.c noted it */
  if (st->opts.exact_float && ir_type_is_float(d->type)) return CDAG_OK;   /* likewise */
  if (det_sort_ranks(w->members, m, st->g->nprocs)) return CDAG_NOMEM("replication");
  int32_t nr = 0, root = -1;
  for (int64_t i = 0; i < n; i++) {
    if (nr && w->ranks[nr - 1] == r[t[i]].dst) continue;    /* the rank's first address only */
    w->readers[nr] = t[i];
    w->ranks[nr++] = r[t[i]].dst;
    if (root < 0 && is_member(w->members, m, r[t[i]].dst)) root = r[t[i]].dst;
  }
  int64_t a = allreduce_of(st, w, d);   /* its result is at every contributor already */
  if (a >= 0) return replicate_allreduce(st, w, a, nr);
  if (nr < 2) return CDAG_OK;
  char rb[128];
  if (root < 0)
    return det_note(st, "%d ranks that do not contribute keep the %s %s reduction over %s: left as residual "
                    "reductions (a reduce needs a root among the contributors)", nr, ir_type_name(d->type),
                    ir_rop_name(d->op), det_ranks_text(w->members, m, st->g->nprocs, rb, sizeof rb));
  int64_t rootpick = -1, k = 0;
  for (int32_t i = 0; i < nr; i++) {   /* the root's tuple goes to the reduce, the rest to the bcast */
    if (w->ranks[i] == root) rootpick = w->readers[i];
    else w->readers[k++] = w->readers[i];
  }
  int rc = det_add_proto(st, DET_REDUCE, root, w->members, m, &rootpick, 1, 1);
  if (rc) return rc;
  int64_t reduce = st->nprotos - 1;
  if ((rc = det_add_proto(st, DET_BCAST, root, w->ranks, nr, w->readers, k, 1))) return rc;
  st->protos[st->nprotos - 1].after = reduce + 1;
  return CDAG_OK;
}

int det_replication(det_state *st) {
  const df_sst *s = st->sst;
  int64_t cap = s->nreds ? s->nreds : 1, n = 0;
  int32_t p = st->g->nprocs;
  repl_work w = {.t = malloc((size_t)cap * sizeof *w.t), .readers = malloc((size_t)cap * sizeof *w.readers),
                 .members = malloc((size_t)p * sizeof *w.members), .ranks = malloc(((size_t)p + 1) * sizeof *w.ranks),
                 .seen = calloc((size_t)p, 1)};
  int rc = w.t && w.readers && w.members && w.ranks && w.seen ? CDAG_OK : CDAG_NOMEM("replication");
  if (rc == CDAG_OK) rc = index_allreduces(st, &w);
  for (int64_t i = 0; i < s->nreds && rc == CDAG_OK; i++)
    if (!st->rused[i]) w.t[n++] = i;
  if (rc == CDAG_OK && n) {
    base_key k[] = {BASE_KEY(s->reds, set), BASE_KEY(s->reds, count), BASE_KEY(s->reds, type), BASE_KEY(s->reds, op),
                  BASE_KEY(s->reds, dst), BASE_KEY(s->reds, dst_addr)};
    rc = base_sort_fields(w.t, n, k, 6);
  }
  for (int64_t i = 0; i < n && rc == CDAG_OK;) {
    int64_t j = i + 1;
    while (j < n && same_value(&s->reds[w.t[i]], &s->reds[w.t[j]])) j++;
    rc = replicate_value(st, &w, w.t + i, j - i);
    i = j;
  }
  free(w.t); free(w.readers); free(w.members); free(w.ranks); free(w.seen); free(w.allr);
  return rc;
}

/* cdag — src/ir/onesided.c: one-sided gets and puts become message pairs; races are errors.
 *
 * A get or put names both ends, so it needs no matching: expansion gives the target the
 * side it did not write. Fences cut each rank's ops (in the order they were added) into
 * epochs 0..F, F the number of fences, equal on every rank. A get of epoch E reads the
 * target's bytes as they are when E starts there: the target sends them right after its
 * E-th fence (at its start for E = 0) and the origin's get becomes the receive. A put of
 * epoch E is in the target's memory when E ends: the origin's put becomes the send, and the
 * target receives right before its (E+1)-th fence (at its end for the last epoch). Fences
 * become calcs of cost 0: they order nothing by themselves; what orders the target's later
 * reads after a put is the receive's place in its program order, so a fence no transfer
 * needs costs nothing. The target's sides of one epoch edge keep the order of their origins'
 * ops, and gets and puts have tags of their own, so MPI's pairing rule pairs them as made.
 *
 * Program order: every op has a key (os_key) and a rank's ops are sorted by it (finalize.c):
 * 4i + 2 for op i as written, 4f + 3 right after fence f, 4f + 1 right before it, 0 at the
 * rank's start, 4n + 4 at its end.
 *
 * Races (ir_onesided_races), per target and epoch, with the accesses sorted by address and
 * swept once: a put against any overlapping access but another one-sided access of its own
 * origin ordered with it by a dependency path; a get against overlapping puts (same
 * exception) and the target's own writes. The target's own accesses are those of its ops in
 * the epoch, one-sided ones included (a get writes its dst). */
#include "ir/ir.h"

/* ---- epochs ---- */

typedef struct {
  int32_t *epoch;       /* per op as written */
  int32_t *fstart;      /* nprocs+1: offsets into fid */
  int32_t *fid;         /* each rank's fences, in order */
  int32_t nfences;      /* per rank (equal on all) */
} epochs;

static void epochs_free(epochs *e) {
  free(e->epoch);
  free(e->fstart);
  free(e->fid);
}

/* count[r + 1]: the fences of rank r. */
static int fence_count_error(const cdag_graph *g, const int32_t *count) {
  for (int r = 1; r < g->nprocs; r++)
    if (count[r + 1] != count[1])
      return cdag__error(CDAG_ERR_ARG, "rank 0 fences %d times but rank %d %d times (every rank must call "
                         "cdag_fence equally often)", count[1], r, count[r + 1]);
  return CDAG_OK;
}

/* Epochs of the first n ops; is_fence tells fences (as written, or after expansion). */
static int epochs_of(const cdag_graph *g, int64_t n, int after, epochs *e) {
  *e = (epochs){0};
  e->epoch = malloc((size_t)(n ? n : 1) * sizeof *e->epoch);
  e->fstart = calloc((size_t)g->nprocs + 1, sizeof *e->fstart);
  if (!e->epoch || !e->fstart) return CDAG_NOMEM("epochs");
  int64_t nf = 0;
  for (int64_t i = 0; i < n; i++) {
    int fence = after ? g->os[i] == IR_OS_FENCE : g->kind[i] == IR_FENCE;
    e->epoch[i] = e->fstart[g->rank[i] + 1];
    if (fence) e->fstart[g->rank[i] + 1]++, nf++;
  }
  int rc = fence_count_error(g, e->fstart);
  if (rc) return rc;
  e->nfences = e->fstart[1];
  for (int r = 0; r < g->nprocs; r++) e->fstart[r + 1] += e->fstart[r];
  e->fid = malloc((size_t)(nf ? nf : 1) * sizeof *e->fid);
  if (!e->fid) return CDAG_NOMEM("epochs");
  for (int64_t i = 0; i < n; i++)
    if (after ? g->os[i] == IR_OS_FENCE : g->kind[i] == IR_FENCE)
      e->fid[e->fstart[g->rank[i]] + e->epoch[i]] = (int32_t)i;
  return CDAG_OK;
}

/* ---- expansion ---- */

/* The target address of one-sided op i: its segment's base plus the offset, bounds checked. */
static int target_addr(const cdag_graph *g, int64_t i, const int32_t *sstart, const int64_t *sidx, uint64_t *a) {
  int t = g->peer[i], seg = g->tag[i];
  const char *what = g->kind[i] == IR_GET ? "get" : "put";
  char d[160];
  if (seg < 0) {
    *a = g->addr2[i];
    return CDAG_OK;
  }
  if (seg >= sstart[t + 1] - sstart[t])
    return cdag__error(CDAG_ERR_ARG, "%s: %s from rank %d segment %d, which rank %d never registered (it has %d)",
                       ir_describe(g, (int32_t)i, d, sizeof d), what, t, seg, t, sstart[t + 1] - sstart[t]);
  int64_t k = sidx[sstart[t] + seg];
  uint64_t off = g->addr2[i], len = g->seg_len[k];
  if (off > len || g->bytes[i] > len - off)
    return cdag__error(CDAG_ERR_ARG, "%s: %s of %llu bytes at offset %llu of rank %d segment %d, which has %llu bytes",
                       ir_describe(g, (int32_t)i, d, sizeof d), what, (unsigned long long)g->bytes[i],
                       (unsigned long long)off, t, seg, (unsigned long long)len);
  *a = g->seg_base[k] + off;
  return CDAG_OK;
}

/* Each rank's segments in registration order: sidx[sstart[r] + k] is segment k of rank r. */
static int segment_index(const cdag_graph *g, int32_t **sstart, int64_t **sidx) {
  *sstart = calloc((size_t)g->nprocs + 1, sizeof **sstart);
  *sidx = malloc((size_t)(g->nseg ? g->nseg : 1) * sizeof **sidx);
  int32_t *fill = malloc((size_t)g->nprocs * sizeof *fill);
  if (!*sstart || !*sidx || !fill) {
    free(fill);
    return CDAG_NOMEM("segments");
  }
  for (int64_t k = 0; k < g->nseg; k++) (*sstart)[g->seg_rank[k] + 1]++;
  for (int r = 0; r < g->nprocs; r++) (*sstart)[r + 1] += (*sstart)[r];
  memcpy(fill, *sstart, (size_t)g->nprocs * sizeof *fill);
  for (int64_t k = 0; k < g->nseg; k++) (*sidx)[fill[g->seg_rank[k]]++] = k;
  free(fill);
  return CDAG_OK;
}

/* The program-order key of the target's side of one-sided op i (at an edge of its epoch). */
static int64_t partner_key(const cdag_graph *g, int64_t i, const epochs *e, int64_t n) {
  int t = g->peer[i], E = e->epoch[i];
  if (g->kind[i] == IR_GET) return E == 0 ? 0 : 4 * (int64_t)e->fid[e->fstart[t] + E - 1] + 3;
  return E == e->nfences ? 4 * n + 4 : 4 * (int64_t)e->fid[e->fstart[t] + E] + 1;
}

/* Op i as its origin's side, and the target's side appended (a: the target address). */
static int expand_op(cdag_graph *g, int64_t i, uint64_t a, int64_t key) {
  if (g->kind[i] == IR_FENCE) {
    g->kind[i] = IR_CALC;
    g->bytes[i] = 0;
    g->os[i] = IR_OS_FENCE;
    return CDAG_OK;
  }
  int get = g->kind[i] == IR_GET, tag = get ? IR_TAG_GET : IR_TAG_PUT;
  int32_t id;
  int rc = ir_append(g, get ? IR_SEND : IR_RECV, g->peer[i], g->rank[i], tag, a, 0, g->bytes[i], &id);
  if (rc) return rc;
  g->os[id] = IR_OS_PARTNER;
  g->os_key[id] = key;
  if (g->line && g->line[i]) g->line[id] = g->line[i];
  g->kind[i] = get ? IR_RECV : IR_SEND;
  g->tag[i] = tag;
  g->addr2[i] = a;
  g->os[i] = get ? IR_OS_GET : IR_OS_PUT;
  return CDAG_OK;
}

/* Every one-sided op's target address, checked, before anything changes (an error leaves
   the graph as written). */
static int resolve_all(const cdag_graph *g, int64_t n, uint64_t *ta) {
  int32_t *sstart = NULL;
  int64_t *sidx = NULL;
  int rc = segment_index(g, &sstart, &sidx);
  for (int64_t i = 0; !rc && i < n; i++) {
    if (g->kind[i] != IR_GET && g->kind[i] != IR_PUT) continue;
    rc = target_addr(g, i, sstart, sidx, &ta[i]);
    if (!rc && ta[i] + g->bytes[i] < ta[i])
      rc = cdag__error(CDAG_ERR_ARG, "rank %d: one-sided target range wraps around", g->rank[i]);
  }
  free(sstart);
  free(sidx);
  return rc;
}

int ir_onesided_expand(cdag_graph *g) {
  int64_t n = g->nops, m = 0, f = 0;
  if (g->nwritten) return CDAG_OK;   /* expanded before */
  for (int64_t i = 0; i < n; i++) {
    m += g->kind[i] == IR_GET || g->kind[i] == IR_PUT;
    f += g->kind[i] == IR_FENCE;
  }
  if (!m && !f) return CDAG_OK;
  if (g->myrank >= 0)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: a distributed graph's one-sided operations are expanded when "
                       "it is compiled (with every rank's segments), not on one process", g->myrank);
  epochs e = {0};
  uint64_t *ta = malloc((size_t)(n ? n : 1) * sizeof *ta);
  int rc = ta ? epochs_of(g, n, 0, &e) : CDAG_NOMEM("one-sided");
  if (!rc) rc = resolve_all(g, n, ta);
  if (!rc) rc = ir_reserve(g, m);
  if (!rc && !g->os && !(g->os = calloc((size_t)g->cap, 1))) rc = CDAG_NOMEM("one-sided");
  if (!rc && !(g->os_key = malloc((size_t)(n + m) * sizeof *g->os_key))) rc = CDAG_NOMEM("one-sided");
  for (int64_t i = 0; !rc && i < n; i++) {
    g->os_key[i] = 4 * i + 2;
    if (g->kind[i] == IR_GET || g->kind[i] == IR_PUT || g->kind[i] == IR_FENCE)
      rc = expand_op(g, i, ta[i], g->kind[i] == IR_FENCE ? 0 : partner_key(g, i, &e, n));
  }
  if (!rc) g->nwritten = n;
  epochs_free(&e);
  free(ta);
  return rc;
}

/* ---- races ---- */

enum { A_GET, A_PUT, A_READ, A_WRITE };   /* remote read, remote write, the target's own */

typedef struct {
  int32_t target, epoch;
  uint64_t lo, hi;
  int32_t op;
  int32_t type;
} access;

typedef struct {
  const cdag_graph *g;
  access *a;
  int64_t n, cap;
  int32_t *stamp, *stack;   /* path search */
  int32_t mark;
} race_ctx;

static int add_access(race_ctx *x, int32_t target, int32_t epoch, uint64_t lo, uint64_t len, int32_t op, int type) {
  if (!len) return CDAG_OK;
  BASE_GROW(x->a, x->n, x->cap, 1, "race check");
  x->a[x->n++] = (access){target, epoch, lo, lo + len, op, type};
  return CDAG_OK;
}

/* What op i does to memory, as accesses of its own rank (and of its target, one-sided). */
static int accesses_of(race_ctx *x, int32_t i, int32_t epoch) {
  const cdag_graph *g = x->g;
  int r = g->rank[i], rc = CDAG_OK;
  uint64_t b = g->bytes[i];
  switch (g->kind[i]) {
  case IR_SEND:
    rc = add_access(x, r, epoch, g->addr[i], b, i, A_READ);
    break;
  case IR_RECV:
    rc = add_access(x, r, epoch, g->addr[i], b, i, A_WRITE);
    break;
  case IR_REDUCE:
  case IR_COPY: {   /* a strided copy's blocks, exactly */
    ir_blocks k = ir_copy_blocks(g, i);
    for (uint64_t j = 0; j < k.n && !rc; j++) {
      rc = add_access(x, r, epoch, g->addr2[i] + j * k.from, k.len, i, A_READ);
      if (!rc) rc = add_access(x, r, epoch, g->addr[i] + j * k.to, k.len, i, A_WRITE);
    }
    break;
  }
  default:
    break;
  }
  if (!rc && (g->os[i] == IR_OS_GET || g->os[i] == IR_OS_PUT))
    rc = add_access(x, g->peer[i], epoch, g->addr2[i], b, i, g->os[i] == IR_OS_GET ? A_GET : A_PUT);
  return rc;
}

static int access_cmp(const void *pa, const void *pb) {
  const access *a = pa, *b = pb;
  if (a->target != b->target) return a->target < b->target ? -1 : 1;
  if (a->epoch != b->epoch) return a->epoch < b->epoch ? -1 : 1;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  return (a->op > b->op) - (a->op < b->op);
}

/* Is there a dependency path between ops a and b of one rank? Searched back from the later
   one over ops no earlier than the other. */
static int ordered(race_ctx *x, int32_t a, int32_t b) {
  const cdag_graph *g = x->g;
  if (g->pos[a] > g->pos[b]) {
    int32_t t = a;
    a = b;
    b = t;
  }
  int32_t n = 0, mark = ++x->mark;
  x->stack[n++] = b;
  x->stamp[b] = mark;
  while (n > 0) {
    int32_t op = x->stack[--n];
    for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1]; k++) {
      int32_t p = g->pred[k];
      if (p == a) return 1;
      if (x->stamp[p] == mark || g->pos[p] < g->pos[a]) continue;
      x->stamp[p] = mark;
      x->stack[n++] = p;
    }
  }
  return 0;
}

static int is_remote(int type) { return type == A_GET || type == A_PUT; }

/* Do accesses p (earlier in the sweep) and q race? */
static int races(race_ctx *x, const access *p, const access *q) {
  int rp = is_remote(p->type), rq = is_remote(q->type);
  if (p->type != A_PUT && q->type != A_PUT) {   /* no put: a get against the target's write */
    return (p->type == A_GET && q->type == A_WRITE) || (p->type == A_WRITE && q->type == A_GET);
  }
  if (!rp || !rq) return 1;   /* a put against the target's own access */
  const cdag_graph *g = x->g;
  return g->rank[p->op] != g->rank[q->op] || (p->op != q->op && !ordered(x, p->op, q->op));
}

/* The bytes [lo, hi) of rank as the user wrote them: offsets in a segment when one holds
   them (the k-th of the rank is its segment k), else addresses. Error path only: O(segments). */
static void where(const cdag_graph *g, int rank, uint64_t lo, uint64_t hi, char *buf, size_t n) {
  for (int64_t i = 0, k = 0; i < g->nseg; i++) {
    if (g->seg_rank[i] != rank) continue;
    if (lo >= g->seg_base[i] && hi <= g->seg_base[i] + g->seg_len[i]) {
      snprintf(buf, n, "segment %lld offsets [%llu, %llu) (addresses [0x%llx, 0x%llx))", (long long)k,
               (unsigned long long)(lo - g->seg_base[i]), (unsigned long long)(hi - g->seg_base[i]),
               (unsigned long long)lo, (unsigned long long)hi);
      return;
    }
    k++;
  }
  snprintf(buf, n, "bytes [0x%llx, 0x%llx)", (unsigned long long)lo, (unsigned long long)hi);
}

static int race_error(race_ctx *x, const access *p, const access *q) {
  static const char *const what[] = {"gets", "puts", "reads", "writes"};
  char d1[160], d2[160], at[160];
  uint64_t lo = p->lo > q->lo ? p->lo : q->lo, hi = p->hi < q->hi ? p->hi : q->hi;
  where(x->g, p->target, lo, hi, at, sizeof at);
  return cdag__error(CDAG_ERR_RACE, "race in epoch %d on rank %d %s: %s %s them and %s %s them, "
                     "with no order between the two", p->epoch, p->target, at,
                     ir_describe(x->g, p->op, d1, sizeof d1), what[p->type],
                     ir_describe(x->g, q->op, d2, sizeof d2), what[q->type]);
}

/* Which kinds of earlier access can race with one of type t (bit per type). */
static unsigned rivals(int t) {
  switch (t) {
  case A_GET: return 1u << A_PUT | 1u << A_WRITE;
  case A_PUT: return 0xfu;
  case A_READ: return 1u << A_PUT;
  default: return 1u << A_GET | 1u << A_PUT;
  }
}

/* One target's epoch, a[0..n) sorted by lo: each access against the earlier ones of the
   kinds it can race with that still overlap it (one active list per kind, pruned as the
   sweep passes their ends). A list holds only accesses overlapping the current one, so a
   scan stops at a race, except for one origin's ordered accesses. */
static int sweep(race_ctx *x, const access *a, int64_t n, int64_t **active) {
  int64_t na[4] = {0};
  for (int64_t k = 0; k < n; k++) {
    for (int t = 0; t < 4; t++) {
      if (!(rivals(a[k].type) >> t & 1)) continue;
      for (int64_t j = 0; j < na[t];) {
        const access *p = &a[active[t][j]];
        if (p->hi <= a[k].lo) {
          active[t][j] = active[t][--na[t]];
          continue;
        }
        if (races(x, p, &a[k])) return race_error(x, p, &a[k]);
        j++;
      }
    }
    active[a[k].type][na[a[k].type]++] = k;
  }
  return CDAG_OK;
}

int ir_onesided_races(const cdag_graph *g) {
  if (!g->os) return CDAG_OK;
  epochs e = {0};
  race_ctx x = {.g = g};
  int64_t *active[4] = {NULL, NULL, NULL, NULL};
  int rc = epochs_of(g, g->nwritten, 1, &e);
  for (int32_t i = 0; !rc && i < g->nwritten; i++) rc = accesses_of(&x, i, e.epoch[i]);
  if (!rc) {
    x.stamp = calloc((size_t)g->nops, sizeof *x.stamp);
    x.stack = malloc((size_t)g->nops * sizeof *x.stack);
    for (int t = 0; t < 4; t++) active[t] = malloc((size_t)(x.n ? x.n : 1) * sizeof *active[t]);
    if (!x.stamp || !x.stack || !active[0] || !active[1] || !active[2] || !active[3]) rc = CDAG_NOMEM("race check");
  }
  if (!rc && x.n > 1) qsort(x.a, (size_t)x.n, sizeof *x.a, access_cmp);
  for (int64_t s = 0, t; !rc && s < x.n; s = t) {
    for (t = s + 1; t < x.n && x.a[t].target == x.a[s].target && x.a[t].epoch == x.a[s].epoch; t++) {
    }
    int any = 0;   /* only epochs with a one-sided access can race */
    for (int64_t k = s; k < t && !any; k++) any = is_remote(x.a[k].type);
    if (any) rc = sweep(&x, x.a + s, t - s, active);
  }
  epochs_free(&e);
  free(x.a);
  free(x.stamp);
  free(x.stack);
  for (int t = 0; t < 4; t++) free(active[t]);
  return rc;
}

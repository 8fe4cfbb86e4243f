/* cdag — src/detect/detect_all.c: allgather and alltoall, regular and vector.
 *
 * Algorithm (paper's Alg. 5, labels corrected): transfers of one size l are split into
 * layers (the k-th tuple of each ordered pair, for noncontiguous blocks), and each layer
 * into connected components of ranks (union-find). A component C whose |C|(|C|-1) ordered
 * pairs all carry a tuple is an all-collective: an allgather if every source reads one
 * offset for all its peers, else an alltoall. The vector pass does the same on what is left
 * over regardless of size, accepting density >= tau. Components are exact for disjoint
 * groups (grid rows/columns); the general maximum subset is NP-hard (Section 4).
 * Cost: O(n log n) for the sorts, O(n α(p)) for union-find. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect_int.h"

/* Sorts of candidate tuple indices (stable radix sorts by xfer fields). */
static int sort_len_pair(const df_xfer *x, int64_t *t, int64_t n) { /* (len, src, dst, src_addr, dst_addr) */
  base_key k[] = {BASE_KEY(x, len), BASE_KEY(x, src), BASE_KEY(x, dst), BASE_KEY(x, src_addr), BASE_KEY(x, dst_addr)};
  return base_sort_fields(t, n, k, 5);
}

/* sort_pair's order (BASE_KEY compares the ranks unsigned). */
static int pair_less(const df_xfer *a, const df_xfer *b) {
  if (a->src != b->src) return (uint32_t)a->src < (uint32_t)b->src;
  if (a->dst != b->dst) return (uint32_t)a->dst < (uint32_t)b->dst;
  if (a->src_addr != b->src_addr) return a->src_addr < b->src_addr;
  return a->dst_addr < b->dst_addr;
}

/* (src, dst, src_addr, dst_addr): any size. Most calls get tuples already in that order (a
   component cut from a sorted group, a collective's tuples with no own block added), which
   a stable sort would leave as they are: one pass that finds them sorted replaces the
   radix sort's passes over a million tuples. */
static int sort_pair(const df_xfer *x, int64_t *t, int64_t n) {
  int64_t i = 1;
  while (i < n && !pair_less(&x[t[i]], &x[t[i - 1]])) i++;
  if (i >= n) return CDAG_OK;
  base_key k[] = {BASE_KEY(x, src), BASE_KEY(x, dst), BASE_KEY(x, src_addr), BASE_KEY(x, dst_addr)};
  return base_sort_fields(t, n, k, 4);
}

typedef struct {
  int32_t *parent;     /* union-find over ranks, -1 = untouched */
  int32_t *touched;    int64_t ntouched;
  int32_t *layer;      /* per candidate: index among the tuples of its (size, pair) */
  int32_t *members;
  int64_t *self;       /* self-copies (src == dst), sorted by (rank, size, source address) */
  int64_t nself;
  int32_t *cover;      /* per rank: size of the complete vector group it is in, 0 if none */
  int32_t *csize;      /* per component root: members (test_components) */
  int64_t *ctuples;    /* per component root: tuples */
  uint8_t *role;       /* per rank: 1 sends, 2 receives (may_redistribute's scratch, left zero) */
  uint8_t *rd;         /* per rank: its det_rd (det_redistributions) */
  int64_t *lstart;     /* regular pass: per layer, counting-sort offsets */
  int64_t lstartcap;
  const int64_t *all;  /* regular pass: the candidates sorted by (size, pair, offsets) */
  int64_t nall;
  const int64_t *pairs; /* vector pass: every candidate sorted by (pair, offsets) */
  int64_t npairs;
} uf_state;

static int32_t uf_find(uf_state *u, int32_t r) {
  if (u->parent[r] < 0) {
    u->parent[r] = r;
    u->touched[u->ntouched++] = r;
  }
  while (u->parent[r] != r) {
    u->parent[r] = u->parent[u->parent[r]];
    r = u->parent[r];
  }
  return r;
}

/* By component (the union-find root of src); stable, and each component is sorted by pair
   afterwards anyway. */
static int sort_component(const df_xfer *x, const int32_t *root, int64_t *t, int64_t n) {
  base_key k = BASE_KEY(x, src);
  k.map = root;
  return base_sort_fields(t, n, &k, 1);
}

static int int32_cmp(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Sorted distinct ranks touched by tuples t[0..n) into out; returns the count (-1: out of memory). */
static int32_t member_list(const det_state *st, const int64_t *t, int64_t n, int32_t *out, uint8_t *seen) {
  const df_xfer *x = st->sst->xfers;
  int32_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    int32_t e[2] = {x[t[i]].src, x[t[i]].dst};
    for (int k = 0; k < 2; k++)
      if (!seen[e[k]]) seen[e[k]] = 1, out[m++] = e[k];
  }
  for (int32_t i = 0; i < m; i++) seen[out[i]] = 0;
  return det_sort_ranks(out, m, st->g->nprocs) == CDAG_OK ? m : -1;
}

/* allgather if every source reads one offset (and, for v, one size) for all its peers */
static int one_block_per_source(const df_xfer *x, const int64_t *t, int64_t n) {
  int64_t first = 0; /* t is sorted by source: compare each tuple with its source's first */
  for (int64_t i = 1; i < n; i++) {
    if (x[t[i]].src != x[t[first]].src) { first = i; continue; }
    if (x[t[i]].src_addr != x[t[first]].src_addr || x[t[i]].len != x[t[first]].len) return 0;
  }
  return 1;
}

/* (src, len, src_addr) */
static int sort_src_len(const df_xfer *x, int64_t *t, int64_t n) { /* (src, len, src_addr) */
  base_key k[] = {BASE_KEY(x, src), BASE_KEY(x, len), BASE_KEY(x, src_addr)};
  return base_sort_fields(t, n, k, 3);
}

/* An unused self-copy of rank r with size len (and, if addr != UINT64_MAX, reading addr):
   a member's own block, which MPI's allgather/alltoall move too. -1 if none. */
static int64_t own_block(const det_state *st, const uf_state *u, int32_t r, uint64_t len, uint64_t addr) {
  const df_xfer *x = st->sst->xfers;
  int64_t lo = 0, hi = u->nself;
  while (lo < hi) { /* first self-copy at (r, len) or after */
    int64_t mid = lo + (hi - lo) / 2;
    const df_xfer *m = &x[u->self[mid]];
    if (m->src < r || (m->src == r && m->len < len)) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < u->nself && x[u->self[lo]].src == r && x[u->self[lo]].len == len; lo++)
    if (!st->xused[u->self[lo]] && (addr == UINT64_MAX || x[u->self[lo]].src_addr == addr)) return u->self[lo];
  return -1;
}

/* The unused, non-empty self copies of members u->members[0..m) into out; the count. */
static int64_t own_copies(const det_state *st, const uf_state *u, int32_t m, int64_t *out) {
  const df_xfer *x = st->sst->xfers;
  int64_t n = 0;
  for (int32_t i = 0; i < m; i++) {
    int32_t r = u->members[i];
    int64_t lo = 0, hi = u->nself;
    while (lo < hi) { /* first self copy of r */
      int64_t mid = lo + (hi - lo) / 2;
      if (x[u->self[mid]].src < r) lo = mid + 1;
      else hi = mid;
    }
    for (; lo < u->nself && x[u->self[lo]].src == r; lo++)
      if (!st->xused[u->self[lo]] && x[u->self[lo]].len) out[n++] = u->self[lo];
  }
  return n;
}

/* Adds an all-collective over t[0..n) (sorted by pair), with the members' own blocks for
   the regular kinds, so a rank's own block moves inside the collective, not beside it, and
   for an alltoallv all their own copies (its own slot holds any number of pieces, as every
   other slot: a redistribution's local pieces go with the rest). */
static int add_all(det_state *st, const uf_state *u, det_kind k, int32_t m, const int64_t *t, int64_t n) {
  const df_xfer *x = st->sst->xfers;
  int64_t *all = malloc((size_t)(n + m + u->nself) * sizeof *all), na = n;
  if (!all) return CDAG_NOMEM("detection");
  memcpy(all, t, (size_t)n * sizeof *all);
  if (k == DET_ALLTOALLV) na += own_copies(st, u, m, all + n);
  for (int64_t i = 0; (k == DET_ALLGATHER || k == DET_ALLTOALL) && i < n; i++) {
    if (i > 0 && x[t[i]].src == x[t[i - 1]].src) continue; /* once per member */
    int64_t own = own_block(st, u, x[t[i]].src, x[t[i]].len, k == DET_ALLGATHER ? x[t[i]].src_addr : UINT64_MAX);
    if (own >= 0) all[na++] = own;
  }
  int rc = sort_pair(x, all, na);
  if (rc == CDAG_OK) rc = det_add_proto(st, k, -1, u->members, m, all, na, 0);
  free(all);
  return rc;
}

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The unused tuple of (len, src, dst) reading src_addr in u->all, or -1. */
static int64_t find_tuple(const det_state *st, const uf_state *u, const df_xfer *k) {
  const df_xfer *x = st->sst->xfers;
  int64_t lo = 0, hi = u->nall;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    const df_xfer *m = &x[u->all[mid]];
    int less = m->len != k->len ? m->len < k->len : m->src != k->src ? m->src < k->src
             : m->dst != k->dst ? m->dst < k->dst : m->src_addr < k->src_addr;
    if (less) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < u->nall; lo++) {
    const df_xfer *m = &x[u->all[lo]];
    if (m->len != k->len || m->src != k->src || m->dst != k->dst || m->src_addr != k->src_addr) return -1;
    if (!st->xused[u->all[lo]]) return u->all[lo];
  }
  return -1;
}

/* A complete group (t sorted by pair) that is an allgather but for a few pairs whose layer
   holds other traffic of the same size: if every source reads one offset for more of its
   peers than any other offset, and each other pair has an unused tuple reading that offset,
   swap those in (the others stay residual). Returns 1 if t is now an allgather, 0 if not, -1
   out of memory (the error recorded). A true alltoall reads a distinct offset per peer, so it
   is never repaired. O(n log n). */
static int repair_allgather(const det_state *st, const uf_state *u, int64_t *t, int64_t n) {
  const df_xfer *x = st->sst->xfers;
  uint64_t *addr = malloc((size_t)n * sizeof *addr);
  int64_t *swap = malloc((size_t)n * sizeof *swap);
  if (!addr || !swap) {
    free(addr), free(swap);
    CDAG_NOMEM("allgather repair");
    return -1;
  }
  int ok = u->all != NULL;
  for (int64_t i = 0; ok && i < n;) {
    int64_t j = i;
    while (j < n && x[t[j]].src == x[t[i]].src) addr[j - i] = x[t[j]].src_addr, j++;
    base_sort(addr, (size_t)(j - i), sizeof *addr, u64_cmp);
    uint64_t mode = addr[0];
    int64_t best = 0, second = 0;
    for (int64_t a = 0, b; a < j - i; a = b) {
      for (b = a; b < j - i && addr[b] == addr[a]; b++) {}
      if (b - a > best) second = best, best = b - a, mode = addr[a];
      else if (b - a > second) second = b - a;
    }
    ok = best >= 2 && best > second; /* one offset clearly the source's block */
    for (int64_t k = i; ok && k < j; k++) {
      df_xfer key = x[t[k]];
      key.src_addr = mode;
      swap[k] = key.src_addr == x[t[k]].src_addr ? t[k] : find_tuple(st, u, &key);
      ok = swap[k] >= 0;
    }
    i = j;
  }
  if (ok) memcpy(t, swap, (size_t)n * sizeof *t);
  free(addr); free(swap);
  return ok;
}

/* An alltoallv moves whole pairs: each pair's unused tuples of u->pairs (a pair whose data
   lies in several pieces, as when a block-cyclic matrix changes layout, sends them all in
   its slot, in offset order), from the representatives t[0..n) (one per pair, sorted by
   pair). *out (allocated) gets them sorted by pair. O(n log N + tuples taken). */
static int whole_pairs(const det_state *st, const uf_state *u, const int64_t *t, int64_t n, int64_t **out,
                       int64_t *nout) {
  const df_xfer *x = st->sst->xfers;
  int64_t cap = n, m = 0, *v = malloc((size_t)(cap ? cap : 1) * sizeof *v);
  if (!v) return CDAG_NOMEM("detection");
  for (int64_t i = 0; i < n; i++) {
    int32_t s = x[t[i]].src, d = x[t[i]].dst;
    int64_t lo = 0, hi = u->npairs;
    while (lo < hi) { /* first tuple of the pair (s, d) */
      int64_t mid = lo + (hi - lo) / 2;
      const df_xfer *e = &x[u->pairs[mid]];
      if (e->src < s || (e->src == s && e->dst < d)) lo = mid + 1;
      else hi = mid;
    }
    for (; lo < u->npairs && x[u->pairs[lo]].src == s && x[u->pairs[lo]].dst == d; lo++) {
      if (st->xused[u->pairs[lo]]) continue;
      if (m == cap && base_resize((void **)&v, m, cap = base_grown_cap(cap, 1), sizeof *v, "detection")) {
        free(v);
        return CDAG_ERR_NOMEM;
      }
      v[m++] = u->pairs[lo];
    }
  }
  *out = v;
  *nout = m;
  return CDAG_OK;
}

static int32_t member_at(const int32_t *m, int32_t n, int32_t rank) {
  const int32_t *x = bsearch(&rank, m, (size_t)n, sizeof *m, int32_cmp);
  return x ? (int32_t)(x - m) : -1;
}

/* A component made incomplete by a few stray tuples (random traffic joining a collective):
   peel the member with the fewest tuples until the rest is complete. At most 8 peels, so a
   component costs O(8 n). Returns the core's tuple count (moved to the front of t) and its
   members in `members` / *m, 0 if no complete core of an acceptable size remains, or -1 out
   of memory (the error recorded). */
static int64_t peel_core(det_state *st, const df_xfer *x, int64_t *t, int64_t n, int32_t *members, int32_t *m) {
  int64_t *deg = calloc((size_t)*m, sizeof *deg);
  if (!deg) {
    CDAG_NOMEM("detection");
    return -1;
  }
  for (int64_t i = 0; i < n; i++) deg[member_at(members, *m, x[t[i]].src)]++, deg[member_at(members, *m, x[t[i]].dst)]++;
  for (int peels = 0; peels < 8 && n != (int64_t)*m * (*m - 1); peels++) {
    int32_t worst = 0;
    for (int32_t k = 1; k < *m; k++)
      if (deg[k] < deg[worst]) worst = k;
    int32_t gone = members[worst];
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) {
      if (x[t[i]].src != gone && x[t[i]].dst != gone) { t[kept++] = t[i]; continue; }
      int32_t other = member_at(members, *m, x[t[i]].src == gone ? x[t[i]].dst : x[t[i]].src);
      deg[other]--;
    }
    n = kept;
    memmove(members + worst, members + worst + 1, (size_t)(*m - worst - 1) * sizeof *members);
    memmove(deg + worst, deg + worst + 1, (size_t)(*m - worst - 1) * sizeof *deg);
    (*m)--;
    if (!det_group_ok(st, *m)) break;
  }
  free(deg);
  return n == (int64_t)*m * (*m - 1) && det_group_ok(st, *m) ? n : 0;
}

/* Components of the ranks tuples t[0..n) connect: afterwards every touched rank's parent is
   its root, with csize[root] members and ctuples[root] tuples. */
static void union_all(uf_state *u, const df_xfer *x, const int64_t *t, int64_t n) {
  u->ntouched = 0;
  for (int64_t i = 0; i < n; i++) {
    int32_t a = uf_find(u, x[t[i]].src), b = uf_find(u, x[t[i]].dst);
    if (a != b) u->parent[a] = b;
  }
  for (int64_t i = 0; i < u->ntouched; i++) { /* path halving alone leaves paths */
    int32_t r = u->touched[i];
    u->parent[r] = uf_find(u, r);
    u->csize[u->parent[r]] = 0, u->ctuples[r] = 0;
  }
  for (int64_t i = 0; i < u->ntouched; i++) u->csize[u->parent[u->touched[i]]]++;
  for (int64_t i = 0; i < n; i++) u->ctuples[u->parent[x[t[i]].src]]++;
}

/* Could tuples t[0..n), the last union_all's, hold a redistribution (det_redistributions)?
   Two ranks must send and two receive (the SST of a tree fails), and some component c of m
   ranks must have m^2 - 1 tuples or more: the union of components needs pieces beyond one
   per pair at least (sum of m)(sum of m - 1), above the sum of m(m - 1), and a component's
   pairs, m - 1 at least, leave it at most tuples - (m - 1) of them. A halo, a ring or a
   tree of a million ranks (one component of few pieces per rank) stops here, unsorted.
   DET_RD_YES (it may), or the test that fails. O(n + touched ranks). */
static det_rd may_redistribute(uf_state *u, const df_xfer *x, const int64_t *t, int64_t n) {
  int64_t senders = 0, receivers = 0;
  int enough = 0;
  for (int64_t i = 0; i < n; i++) u->role[x[t[i]].src] |= 1, u->role[x[t[i]].dst] |= 2;
  for (int64_t i = 0; i < u->ntouched; i++) {
    int32_t r = u->touched[i];
    double m = u->csize[r];
    senders += u->role[r] & 1, receivers += u->role[r] >> 1;
    u->role[r] = 0;
    enough |= u->parent[r] == r && (double)u->ctuples[r] >= m * m - 1;
  }
  return senders < 2 || receivers < 2 ? DET_RD_ROOTED : enough ? DET_RD_YES : DET_RD_FEW_PIECES;
}

/* Can the component rooted at c (one tuple per ordered pair) hold a collective or deserve a
   note? A complete core needs m'(m'-1) tuples on m' >= m - 8 members (8 peels at most); a
   vector group, or its note, density min(tau, 1/2). Most components of trees fail here,
   before any sort. */
static int component_hopeless(const det_state *st, const uf_state *u, int32_t c, int vector) {
  double m = u->csize[c], tuples = (double)u->ctuples[c];
  if (vector) {
    double tau = st->opts.density < 0.5 ? st->opts.density : 0.5;
    return m < 3 || tuples < tau * m * (m - 1);
  }
  return m > 9 && tuples < (m - 8) * (m - 9);
}

/* Tests each component of group t[0..n) (one tuple per ordered pair). */
/* Do tuples t[0..n) (sorted by source) all leave one rank, or all reach one? Then they are a
   broadcast, scatter or gather, which the rooted tests find: not a v-collective of all. */
static int one_end(const df_xfer *x, const int64_t *t, int64_t n) {
  int same_dst = 1;
  for (int64_t k = 1; k < n && same_dst; k++) same_dst = x[t[k]].dst == x[t[0]].dst;
  return same_dst || x[t[0]].src == x[t[n - 1]].src;
}

static int test_components(det_state *st, uf_state *u, int64_t *t, int64_t n, int vector, uint8_t *seen) {
  const df_xfer *x = st->sst->xfers;
  union_all(u, x, t, n);
  int rc = CDAG_OK, any = 0;
  for (int64_t i = 0; i < u->ntouched && !any; i++)
    any = u->parent[u->touched[i]] == u->touched[i] && !component_hopeless(st, u, u->touched[i], vector);
  if (any) rc = sort_component(x, u->parent, t, n);
  for (int64_t i = 0; any && i < n && rc == CDAG_OK;) {
    int64_t j = i;
    while (j < n && u->parent[x[t[j]].src] == u->parent[x[t[i]].src]) j++;
    if (component_hopeless(st, u, u->parent[x[t[i]].src], vector)) {
      i = j;
      continue;
    }
    rc = sort_pair(x, t + i, j - i); /* by source, for the allgather test */
    if (rc != CDAG_OK) break;
    if (vector && one_end(x, t + i, j - i)) { /* one source or one destination: a rooted kind's */
      i = j;
      continue;
    }
    int32_t m = member_list(st, t + i, j - i, u->members, seen);
    if (m < 0) {
      rc = CDAG_NOMEM("detection");
      break;
    }
    double pairs = (double)m * (m - 1), density = (double)(j - i) / pairs;
    int complete = j - i == (int64_t)m * (m - 1);
    if (!vector && u->cover[u->members[0]] > m) { /* part of a larger v-collective: leave it */
      i = j;
      continue;
    }
    if (!complete && !vector) { /* stray tuples may hide a complete core (at most 8 peels) */
      int64_t *core = malloc((size_t)(j - i) * sizeof *core);
      if (!core) return CDAG_NOMEM("detection");
      memcpy(core, t + i, (size_t)(j - i) * sizeof *core);
      int32_t cm = m;
      int64_t nc = peel_core(st, x, core, j - i, u->members, &cm);
      if (nc < 0) {
        free(core);
        return CDAG_ERR_NOMEM;
      }
      if (nc && u->cover[u->members[0]] <= cm && (rc = sort_pair(x, core, nc)) == CDAG_OK) {
        int ag = one_block_per_source(x, core, nc) ? 1 : repair_allgather(st, u, core, nc);
        rc = ag < 0 ? CDAG_ERR_NOMEM : add_all(st, u, ag ? DET_ALLGATHER : DET_ALLTOALL, cm, core, nc);
      }
      free(core);
      i = j;
      continue;
    }
    if (det_group_ok(st, m) && (complete || (vector && density >= st->opts.density))) {
      int ag = one_block_per_source(x, t + i, j - i) ? 1 : vector ? 0 : repair_allgather(st, u, t + i, j - i);
      if (ag < 0) {
        rc = CDAG_ERR_NOMEM;
        break;
      }
      det_kind k = vector ? (ag ? DET_ALLGATHERV : DET_ALLTOALLV) : (ag ? DET_ALLGATHER : DET_ALLTOALL);
      if (k == DET_ALLTOALLV && u->pairs) {
        int64_t *w = NULL, nw = 0;
        rc = whole_pairs(st, u, t + i, j - i, &w, &nw);
        if (rc == CDAG_OK) rc = add_all(st, u, k, m, w, nw);
        free(w);
      } else {
        rc = add_all(st, u, k, m, t + i, j - i);
      }
    } else if (vector && m >= 3 && density >= 0.5 && det_group_ok(st, m)) {
      char rb[128];
      rc = det_note(st, "all-to-all pattern on %s incomplete: %lld of %.0f pairs, density %.2f < %.2f "
                        "(options.density, --density=%.2f, would take it as a vector collective); %s",
                    det_ranks_text(u->members, m, st->g->nprocs, rb, sizeof rb), (long long)(j - i), pairs,
                    density, st->opts.density, floor(density * 100) / 100, det_rd_text(u->rd[u->members[0]]));
    } else if (complete && m >= 3 && !det_group_ok(st, m) && m < st->g->nprocs) {
      if (!st->small_groups++) {
        st->small_size = m;
        det_ranks_text(u->members, m, st->g->nprocs, st->small_ranks, sizeof st->small_ranks);
      }
    }
    i = j;
  }
  for (int64_t i = 0; i < u->ntouched; i++) u->parent[u->touched[i]] = -1;
  return rc;
}

/* The redistribution among the transfers no collective covers yet (det_redistributions),
   before the regular pass takes any of it: u->rd marks its ranks, or says why not; *sum
   its figures (members 0: none). */
static int find_redistribution(det_state *st, uf_state *u, int64_t *t, det_rd_sum *sum) {
  const df_xfer *x = st->sst->xfers;
  int64_t n = det_candidates(st, t);
  int rc = CDAG_OK;
  *sum = (det_rd_sum){0};
  union_all(u, x, t, n);
  det_rd may = may_redistribute(u, x, t, n);
  for (int64_t i = 0; i < u->ntouched; i++) u->rd[u->touched[i]] = (uint8_t)may;
  if (may == DET_RD_YES && (rc = sort_pair(x, t, n)) == CDAG_OK)
    rc = det_redistributions(st, u->parent, t, n, u->self, u->nself, u->rd, sum);
  for (int64_t i = 0; i < u->ntouched; i++) u->parent[u->touched[i]] = -1;
  return rc;
}

/* Proto i now covers the redistribution's ranks members[0..m) as an alltoallv, to merge
   with the one take_redistribution adds (plan.c merges protos of one shape). */
static int fold_into(det_state *st, int64_t i, const int32_t *members, int32_t m) {
  BASE_GROW(st->members, st->nmembers, st->membercap, m, "collectives");
  memcpy(st->members + st->nmembers, members, (size_t)m * sizeof *members);
  st->protos[i].kind = DET_ALLTOALLV;
  st->protos[i].members_first = st->nmembers;
  st->protos[i].nmembers = m;
  st->nmembers += m;
  return CDAG_OK;
}

/* Are all members of proto i ranks of the redistribution? */
static int inside(const det_state *st, const uf_state *u, int64_t i) {
  const det_proto *q = &st->protos[i];
  for (int32_t k = 0; k < q->nmembers; k++)
    if (u->rd[st->members[q->members_first + k]] != DET_RD_YES) return 0;
  return 1;
}

/* The redistribution (u->rd, sum: find_redistribution) as one alltoallv over its ranks:
   what the regular pass left of it (taken from t[0..n), which keeps the other tuples), the
   ranks' own copies, and the alltoalls the regular pass found among its ranks (complete
   layers of equal pieces), folded in. When the regular pass took all of it, it stays the
   alltoall it is. */
static int take_redistribution(det_state *st, uf_state *u, int64_t *t, int64_t *n, const det_rd_sum *sum) {
  const df_xfer *x = st->sst->xfers;
  int64_t *w = malloc((size_t)(*n ? *n : 1) * sizeof *w), k = 0, kept = 0;
  if (!w) return CDAG_NOMEM("detection");
  for (int64_t i = 0; i < *n; i++) {
    if (u->rd[x[t[i]].src] == DET_RD_YES) w[k++] = t[i];
    else t[kept++] = t[i];
  }
  *n = kept;
  int32_t m = 0;
  for (int32_t r = 0; r < st->g->nprocs; r++)
    if (u->rd[r] == DET_RD_YES) u->members[m++] = r;
  int rc = k ? sort_pair(x, w, k) : CDAG_OK;
  for (int64_t i = 0, np = st->nprotos; k && rc == CDAG_OK && i < np; i++)
    if (st->protos[i].kind == DET_ALLTOALL && inside(st, u, i)) rc = fold_into(st, i, u->members, m);
  if (k && rc == CDAG_OK) rc = add_all(st, u, DET_ALLTOALLV, m, w, k);
  if (k && rc == CDAG_OK) {
    st->protos[st->nprotos - 1].rd_pairs = sum->pairs;
    st->protos[st->nprotos - 1].rd_pieces = sum->pieces;
  }
  free(w);
  return rc;
}

/* Vector groups (components of all remaining pairs, any size) dense enough for a v-kind:
   cover[r] = the group's size. A regular group inside a larger one (an allgatherv whose
   sources partly share a size) is left to the vector pass, which takes the whole group. */
static int mark_vector_groups(det_state *st, uf_state *u, int64_t *t) {
  const df_xfer *x = st->sst->xfers;
  int64_t n = det_candidates(st, t), m = 0;
  memset(u->cover, 0, (size_t)st->g->nprocs * sizeof *u->cover);
  union_all(u, x, t, n);
  int any = 0; /* tuples bound the distinct pairs: most components fail before the sort */
  for (int64_t i = 0; i < u->ntouched && !any; i++) {
    int32_t c = u->touched[i];
    double full = (double)u->csize[c] * (u->csize[c] - 1);
    any = u->parent[c] == c && det_group_ok(st, u->csize[c]) && (double)u->ctuples[c] >= st->opts.density * full;
  }
  int rc = any ? sort_pair(x, t, n) : CDAG_OK;
  for (int64_t i = 0; any && i < n; i++)
    if (i == 0 || x[t[i]].src != x[t[i - 1]].src || x[t[i]].dst != x[t[i - 1]].dst) t[m++] = t[i];
  for (int64_t i = 0; i < u->ntouched; i++) u->ctuples[u->touched[i]] = 0;
  for (int64_t i = 0; i < m; i++) u->ctuples[u->parent[x[t[i]].src]]++; /* distinct pairs now */
  for (int64_t i = 0; any && i < u->ntouched; i++) {
    int32_t r = u->touched[i], c = u->parent[r];
    double full = (double)u->csize[c] * (u->csize[c] - 1);
    u->cover[r] = det_group_ok(st, u->csize[c]) && (double)u->ctuples[c] >= st->opts.density * full ? u->csize[c] : 0;
  }
  for (int64_t i = 0; i < u->ntouched; i++) u->parent[u->touched[i]] = -1;
  return rc;
}

/* Regular pass: groups of one (size, layer). */
static int regular_pass(det_state *st, uf_state *u, int64_t *t, int64_t *g, uint8_t *seen) {
  const df_xfer *x = st->sst->xfers;
  int32_t d = det_min_group(st) - 1; /* every member of a complete group sends and receives d+ */
  int64_t n = det_filter_degree(st, t, det_candidates(st, t), d, d);
  if (n < 0) return CDAG_ERR_NOMEM;
  int rc = sort_len_pair(x, t, n);
  if (rc != CDAG_OK) return rc;
  /* layer of each tuple: its index among the tuples of the same (size, src, dst) */
  int32_t *layer = u->layer;
  u->all = t, u->nall = n;
  for (int64_t i = 0; i < n; i++)
    layer[i] = i > 0 && x[t[i]].len == x[t[i - 1]].len && x[t[i]].src == x[t[i - 1]].src &&
                       x[t[i]].dst == x[t[i - 1]].dst ? layer[i - 1] + 1 : 0;
  for (int64_t i = 0; i < n && rc == CDAG_OK;) {
    int64_t j = i;
    while (j < n && x[t[j]].len == x[t[i]].len) j++;
    int32_t nlayers = 0;
    for (int64_t k = i; k < j; k++) nlayers = layer[k] >= nlayers ? layer[k] + 1 : nlayers;
    /* counting sort of this size's tuples by layer into g[i..j): O(j - i + layers) */
    BASE_GROW(u->lstart, 0, u->lstartcap, nlayers + 1, "detection");
    int64_t *at = u->lstart;
    memset(at, 0, ((size_t)nlayers + 1) * sizeof *at);
    for (int64_t k = i; k < j; k++) at[layer[k] + 1]++;
    for (int32_t l = 0; l < nlayers; l++) at[l + 1] += at[l];
    for (int64_t k = i; k < j; k++) g[i + at[layer[k]]++] = t[k];
    int64_t from = 0;
    for (int32_t l = 0; l < nlayers && rc == CDAG_OK; l++) { /* each layer of this size */
      int64_t ng = 0, *gl = g + i + from; /* at[l] is now the end of layer l */
      for (int64_t k = 0; k < at[l] - from; k++)
        if (!st->xused[gl[k]]) gl[ng++] = gl[k]; /* a repair may have taken a later layer's tuple */
      from = at[l];
      if (ng) rc = test_components(st, u, gl, ng, 0, seen);
    }
    i = j;
  }
  return rc;
}

/* Vector pass: the redistribution first, if any (find_redistribution), as one alltoallv;
   then the first tuple of every remaining pair, any size, decides the groups dense enough
   for a v-kind; an alltoallv then takes all of its pairs' tuples. */
static int vector_pass(det_state *st, uf_state *u, int64_t *t, uint8_t *seen, const det_rd_sum *sum) {
  const df_xfer *x = st->sst->xfers;
  int64_t n = det_candidates(st, t), m = 0;
  union_all(u, x, t, n); /* tuples bound the pairs: nothing to sort if no component could do */
  int any = 0;
  for (int64_t i = 0; i < u->ntouched && !any; i++)
    any = u->parent[u->touched[i]] == u->touched[i] && !component_hopeless(st, u, u->touched[i], 1);
  for (int64_t i = 0; i < u->ntouched; i++) u->parent[u->touched[i]] = -1;
  int rc = sum->members ? take_redistribution(st, u, t, &n, sum) : CDAG_OK;
  if (any && rc == CDAG_OK) rc = sort_pair(x, t, n);
  if (!any || rc != CDAG_OK) return rc;
  int64_t *all = malloc((size_t)(n ? n : 1) * sizeof *all);
  if (!all) return CDAG_NOMEM("detection");
  memcpy(all, t, (size_t)n * sizeof *all);
  for (int64_t i = 0; i < n; i++)
    if (i == 0 || x[t[i]].src != x[t[i - 1]].src || x[t[i]].dst != x[t[i - 1]].dst) t[m++] = t[i];
  u->pairs = all, u->npairs = n;
  rc = test_components(st, u, t, m, 1, seen);
  u->pairs = NULL, u->npairs = 0;
  free(all);
  return rc;
}

int det_all_collectives(det_state *st) {
  int64_t n = st->sst->nxfers ? st->sst->nxfers : 1;
  int32_t p = st->g->nprocs;
  uf_state u = {0};
  int64_t *t = malloc((size_t)n * sizeof *t), *g = malloc((size_t)n * sizeof *g);
  uint8_t *seen = calloc((size_t)p, 1);
  u.parent = malloc((size_t)p * sizeof *u.parent);
  u.touched = malloc((size_t)p * sizeof *u.touched);
  u.layer = malloc((size_t)n * sizeof *u.layer);
  u.members = malloc((size_t)p * sizeof *u.members);
  u.cover = calloc((size_t)p, sizeof *u.cover);
  u.csize = malloc((size_t)p * sizeof *u.csize);
  u.ctuples = malloc((size_t)p * sizeof *u.ctuples);
  u.role = calloc((size_t)p, 1);
  u.rd = malloc((size_t)p);
  int rc = t && g && seen && u.parent && u.touched && u.layer && u.members && u.cover && u.csize && u.ctuples &&
           u.role && u.rd ? CDAG_OK : CDAG_NOMEM("detection");
  int64_t nself = 0;
  for (int64_t i = 0; i < st->sst->nxfers; i++) nself += st->sst->xfers[i].src == st->sst->xfers[i].dst && !st->xused[i];
  u.self = malloc((size_t)(nself ? nself : 1) * sizeof *u.self);
  if (!u.self) rc = CDAG_NOMEM("detection");
  for (int64_t i = 0; rc == CDAG_OK && i < st->sst->nxfers; i++)
    if (st->sst->xfers[i].src == st->sst->xfers[i].dst && !st->xused[i]) u.self[u.nself++] = i;
  if (rc == CDAG_OK) rc = sort_src_len(st->sst->xfers, u.self, u.nself);
  if (rc == CDAG_OK) memset(u.parent, 0xff, (size_t)p * sizeof *u.parent);
  if (rc == CDAG_OK) memset(u.rd, DET_RD_ROOTED, (size_t)p);   /* a rank without transfers is in none */
  det_rd_sum sum = {0};
  if (rc == CDAG_OK) rc = find_redistribution(st, &u, t, &sum);
  /* Regular groups taken may leave smaller vector groups whose members are regular groups
     themselves (row alltoalls under a global allgather): repeat while something is found. */
  for (int round = 0, found = 1; rc == CDAG_OK && found && round < 4; round++) {
    int64_t before = st->nprotos;
    rc = mark_vector_groups(st, &u, t);
    if (rc == CDAG_OK) rc = regular_pass(st, &u, t, g, seen);
    found = st->nprotos > before;
  }
  u.all = NULL;
  if (rc == CDAG_OK) rc = vector_pass(st, &u, t, seen, &sum);
  free(t); free(g); free(seen); free(u.parent); free(u.touched); free(u.layer); free(u.members); free(u.self); free(u.cover); free(u.lstart);
  free(u.csize); free(u.ctuples); free(u.role); free(u.rd);
  return rc;
}

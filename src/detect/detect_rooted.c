/* cdag — src/detect/detect_rooted.c: bcast, scatter and gather, largest groups first.
 *
 * Algorithm (Section 4.2 of the paper): the tuples out of a root r of one size l (split into
 * layers: the k-th tuple of each pair) form a candidate bcast (one source offset) or scatter
 * (several); the tuples into r form a candidate gather. Candidates are taken largest first,
 * out-groups before in-groups on ties (bcast > gather, scatter); a candidate that lost tuples
 * to an earlier one is re-counted. Proper subsets need min_group ranks. The vector kinds
 * (scatterv, gatherv) take, over the whole communicator only, what is left from one root with
 * any sizes when at least tau*(p-1) peers take part. Neighbourhood exchanges (2D/3D halos)
 * look like overlapping scatters or gathers, one per rank: subset groups rooted at a and b
 * with b in a's group, a in b's group, different member sets and sizes within 3/4
 * are left residual (grid rows and columns never overlap that way); the test runs on the
 * candidate groups before any is taken. Cost: O(n log n) for the sorts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect_int.h"

typedef struct {
  int64_t first, n;   /* into the sorted tuple array of its direction */
  int32_t root;
  int out;            /* 1: tuples out of root (bcast/scatter); 0: into root (gather) */
  int arr;            /* tuple array: 0 in, 1 out (by layer), 2 out by source offset (bcast) */
} candidate;

/* Tuples of one direction by (root, size, [layer,] peer, address): root and address are
   the source's for out-groups (out = 1), the destination's for in-groups. */
static int sort_by_root(const df_xfer *x, const int32_t *layer, int out, int64_t *t, int64_t n) {
  base_key k[5] = {out ? BASE_KEY(x, src) : BASE_KEY(x, dst), BASE_KEY(x, len)};
  int nk = 2;
  if (layer) k[nk++] = (base_key){layer, sizeof *layer, 0, sizeof *layer, 0, NULL};
  k[nk++] = out ? BASE_KEY(x, dst) : BASE_KEY(x, src);
  k[nk++] = out ? BASE_KEY(x, src_addr) : BASE_KEY(x, dst_addr);
  return base_sort_fields(t, n, k, nk);
}

/* (peer, address) within one root */
static int sort_by_peer(const df_xfer *x, int out, int64_t *t, int64_t n) {
  base_key k[2] = {out ? BASE_KEY(x, dst) : BASE_KEY(x, src), out ? BASE_KEY(x, src_addr) : BASE_KEY(x, dst_addr)};
  return base_sort_fields(t, n, k, 2);
}

/* Broadcast groups first (bcast > gather, scatter), then largest first, then out-groups,
   then by root; stable. A radix sort of packed keys: halo exchanges give two candidates
   per rank, and qsort's callbacks cost more than the rest of detection. */
typedef struct {
  uint64_t order;   /* not bcast << 48 | (2^40 - 1 - n) << 8 | (1 - out) << 2 | (2 - arr) */
  int32_t root;
} cand_key;

static int sort_candidates(candidate **c, int64_t nc, int64_t cap) { /* cap: the array's capacity, kept */
  int64_t *idx = malloc((size_t)(nc ? nc : 1) * sizeof *idx);
  cand_key *k = malloc((size_t)(nc ? nc : 1) * sizeof *k);
  candidate *out = malloc((size_t)(cap > nc ? cap : nc ? nc : 1) * sizeof *out);
  int rc = idx && k && out ? CDAG_OK : CDAG_NOMEM("detection");
  for (int64_t i = 0; rc == CDAG_OK && i < nc; i++) {
    const candidate *x = &(*c)[i];
    uint64_t n = (uint64_t)x->n < (1ULL << 40) ? (uint64_t)x->n : (1ULL << 40) - 1;
    k[i] = (cand_key){(uint64_t)(x->arr != 2) << 48 | ((1ULL << 40) - 1 - n) << 8 | (uint64_t)(1 - x->out) << 2 |
                          (uint64_t)(2 - x->arr), x->root};
    idx[i] = i;
  }
  base_key keys[2] = {BASE_KEY(k, order), BASE_KEY(k, root)};
  if (rc == CDAG_OK) rc = base_sort_fields(idx, nc, keys, 2);
  for (int64_t i = 0; rc == CDAG_OK && i < nc; i++) out[i] = (*c)[idx[i]];
  if (rc == CDAG_OK) {
    free(*c);
    *c = out;
    out = NULL;
  }
  free(idx); free(k); free(out);
  return rc;
}

typedef struct {
  int64_t *t[3];        /* candidate tuples sorted for in (0), out (1) and bcast (2) groups */
  int64_t nt;
  int32_t *layer;       /* per transfer index */
  candidate *c;         int64_t nc, ccap;
  int64_t *pick;        /* the unused tuples of the candidate being taken */
  int32_t *members;
  int64_t *self;        /* self-copies (src == dst), sorted by (rank, size) */
  int64_t nself;
} rooted_state;

/* (rank, size, index) */
static int sort_rank_len(const df_xfer *x, int64_t *t, int64_t n) { /* (src, len, index) */
  base_key k[] = {BASE_KEY(x, src), BASE_KEY(x, len), BASE_KEY_INDEX};
  return base_sort_fields(t, n, k, 3);
}

/* An unused self-copy of the root with the block size: the root's own block, which MPI's
   scatter and gather move too. -1 if none. O(log n). */
static int64_t root_block(const det_state *st, const rooted_state *rs, int32_t root, uint64_t len) {
  const df_xfer *x = st->sst->xfers;
  int64_t lo = 0, hi = rs->nself;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    const df_xfer *m = &x[rs->self[mid]];
    if (m->src < root || (m->src == root && m->len < len)) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < rs->nself && x[rs->self[lo]].src == root && x[rs->self[lo]].len == len; lo++)
    if (!st->xused[rs->self[lo]]) return rs->self[lo];
  return -1;
}

/* Could a group of n tuples (n + 1 ranks) be taken, or matter to a neighbourhood test of a
   group that can (at least 3/4 of its size)? Smaller ones are never listed: a binomial tree
   has a million one-tuple in-groups. */
static int useful(const det_state *st, int64_t n) {
  return 4 * (n + 1) >= 3 * (int64_t)det_min_group(st);
}

/* Fewest tuples of a useful group: what a root must send (receive) to root one. */
static int32_t useful_min(const det_state *st) {
  int32_t n = 0;
  while (!useful(st, n)) n++;
  return n;
}

/* n, or 0 when no root of this direction reaches enough peers for a group to be taken: then
   its small groups matter to no neighbourhood test either (1D halos: two peers per rank).
   -1 out of memory (n < 0 too: det_filter_degree's). */
static int64_t takeable_roots(const det_state *st, const int64_t *t, int64_t n, int out) {
  int32_t most = n < 0 ? -1 : det_max_degree(st, t, n, out);
  return most < 0 ? -1 : (int64_t)most + 1 >= det_min_group(st) ? n : 0;
}

/* Peers a vector group over the whole communicator needs: all, or the density's share. */
static int32_t vector_min(const det_state *st) {
  int32_t p = st->g->nprocs, need = (int32_t)ceil(st->opts.density * (double)(p - 1));
  return need < p - 1 ? need : p - 1;
}

static int push_candidate(rooted_state *rs, candidate c) {
  BASE_GROW(rs->c, rs->nc, rs->ccap, 1, "detection");
  rs->c[rs->nc++] = c;
  return CDAG_OK;
}

/* Sorts one direction, assigns layers, and lists (root, size, layer) groups. */
static int collect(det_state *st, rooted_state *rs, int out) {
  const df_xfer *x = st->sst->xfers;
  int64_t *t = rs->t[out];
  int rc = sort_by_root(x, NULL, out, t, rs->nt), layered = 0;
  if (rc) return rc;
  for (int64_t i = 0; i < rs->nt; i++) {
    const df_xfer *a = &x[t[i]], *b = i ? &x[t[i - 1]] : NULL;
    int same = b && a->src == b->src && a->dst == b->dst && a->len == b->len;
    rs->layer[t[i]] = same ? rs->layer[t[i - 1]] + 1 : 0;
    layered |= rs->layer[t[i]] != 0;
  }
  if (layered && (rc = sort_by_root(x, rs->layer, out, t, rs->nt))) return rc; /* all layer 0: sorted */
  for (int64_t i = 0; i < rs->nt;) {
    int64_t j = i;
    int32_t root = out ? x[t[i]].src : x[t[i]].dst;
    while (j < rs->nt && (out ? x[t[j]].src : x[t[j]].dst) == root && x[t[j]].len == x[t[i]].len &&
           rs->layer[t[j]] == rs->layer[t[i]])
      j++;
    if (useful(st, j - i) && (rc = push_candidate(rs, (candidate){.first = i, .n = j - i, .root = root, .out = out, .arr = out})))
      return rc;
    i = j;
  }
  return CDAG_OK;
}


/* Broadcast groups: the tuples reading one (root, size, offset), so that other traffic of
   the same size from the root (a lower layer) does not hide a broadcast. */
static int collect_bcast(det_state *st, rooted_state *rs) {
  const df_xfer *x = st->sst->xfers;
  int64_t *t = rs->t[2];
  /* (root, size, source offset, peer, destination offset) */
  base_key k[] = {BASE_KEY(x, src), BASE_KEY(x, len), BASE_KEY(x, src_addr), BASE_KEY(x, dst), BASE_KEY(x, dst_addr)};
  int rc = base_sort_fields(t, rs->nt, k, 5);
  if (rc) return rc;
  for (int64_t i = 0; i < rs->nt;) {
    int64_t j = i + 1;
    while (j < rs->nt && x[t[j]].src == x[t[i]].src && x[t[j]].len == x[t[i]].len && x[t[j]].src_addr == x[t[i]].src_addr) j++;
    if (j - i > 1 && useful(st, j - i) &&
        (rc = push_candidate(rs, (candidate){.first = i, .n = j - i, .root = x[t[i]].src, .out = 1, .arr = 2})))
      return rc;
    i = j;
  }
  return CDAG_OK;
}

/* Takes the candidate's still-unused tuples if they form a large enough group. */
static int take(det_state *st, rooted_state *rs, const candidate *c, int vector) {
  const df_xfer *x = st->sst->xfers;
  const int64_t *t = rs->t[c->arr] + c->first;
  int64_t n = 0;
  int32_t m = 0, last_peer = -1;
  for (int64_t i = 0; i < c->n; i++) {
    if (st->xused[t[i]]) continue;
    int32_t peer = c->out ? x[t[i]].dst : x[t[i]].src;
    if (peer == last_peer) continue; /* one tuple per peer (vector pass: the first) */
    last_peer = peer;
    rs->pick[n++] = t[i];
    rs->members[m++] = peer;
  }
  rs->members[m++] = c->root;
  int ok = vector ? m == st->g->nprocs || (double)(m - 1) >= st->opts.density * (st->g->nprocs - 1)
                  : det_group_ok(st, m);
  if (!ok || (vector && st->g->nprocs < 3)) return CDAG_OK;
  if (vector) m = st->g->nprocs; /* vector kinds run on the whole communicator */
  if (vector)
    for (int32_t r = 0; r < m; r++) rs->members[r] = r;
  else
    if (det_sort_ranks(rs->members, m, st->g->nprocs)) return CDAG_NOMEM("detection");
  det_kind k = DET_GATHER;
  if (c->out) {
    int one = 1;
    for (int64_t i = 1; i < n && one; i++) one = x[rs->pick[i]].src_addr == x[rs->pick[0]].src_addr;
    k = one && !vector ? DET_BCAST : vector ? DET_SCATTERV : DET_SCATTER;
  } else if (vector) {
    k = DET_GATHERV;
  }
  if ((k == DET_SCATTER || k == DET_GATHER) && n > 0) { /* the root's own block moves inside it */
    int64_t own = root_block(st, rs, c->root, x[rs->pick[0]].len);
    if (own >= 0) rs->pick[n++] = own;
  }
  return det_add_proto(st, k, c->root, rs->members, m, rs->pick, n, 0);
}

/* ---- neighbourhood exchanges ----
   A candidate's members are its root and its tuples' peers (one per peer, sorted: the tuples
   are sorted by peer within a candidate). */
static int32_t cand_peer(const det_state *st, const rooted_state *rs, const candidate *c, int64_t i) {
  const df_xfer *x = &st->sst->xfers[rs->t[c->arr][c->first + i]];
  return c->out ? x->dst : x->src;
}

static uint64_t cand_len(const det_state *st, const rooted_state *rs, const candidate *c) {
  return st->sst->xfers[rs->t[c->arr][c->first]].len;
}

static int cand_has_peer(const det_state *st, const rooted_state *rs, const candidate *c, int32_t r) {
  int64_t lo = 0, hi = c->n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (cand_peer(st, rs, c, mid) < r) lo = mid + 1;
    else hi = mid;
  }
  return lo < c->n && cand_peer(st, rs, c, lo) == r;
}

/* {a.root} + a's peers == {b.root} + b's peers, knowing b.root is a peer of a and a.root a
   peer of b: then a's peers without b.root equal b's peers without a.root. */
static int cand_same_members(const det_state *st, const rooted_state *rs, const candidate *a, const candidate *b) {
  if (a->n != b->n) return 0;
  for (int64_t i = 0, j = 0; i < a->n || j < b->n;) {
    int32_t pa = i < a->n ? cand_peer(st, rs, a, i) : INT32_MAX, pb = j < b->n ? cand_peer(st, rs, b, j) : INT32_MAX;
    if (pa == b->root) i++;
    else if (pb == a->root) j++;
    else if (pa != pb) return 0;
    else i++, j++;
  }
  return 1;
}

/* Flags the takeable proper-subset candidates of a neighbourhood exchange: candidate a has a
   peer b rooting a proper-subset candidate of the same direction and size (traffic both
   ways between a and b) that has a among its peers, a different member set and at least 3/4 of a's
   size (halo groups of neighbouring ranks differ by one; a 16-rank broadcast beside 5-rank
   halo groups, or a scatter beside a few stray messages, stays). */
static int flag_neighbourhoods(det_state *st, rooted_state *rs, uint8_t *bad) {
  int32_t p = st->g->nprocs;
  int64_t *idx = malloc((size_t)(rs->nc ? rs->nc : 1) * sizeof *idx), m = 0;
  if (!idx) return CDAG_NOMEM("detection");
  for (int64_t k = 0; k < rs->nc; k++)
    if (rs->c[k].n + 1 < p) idx[m++] = k;
  base_key by_root[2] = {BASE_KEY(rs->c, root), BASE_KEY(rs->c, out)}; /* then by index (stable) */
  int rc = base_sort_fields(idx, m, by_root, 2);
  if (rc) {
    free(idx);
    return rc;
  }
  for (int64_t i = 0; i < m; i++) {
    const candidate *a = &rs->c[idx[i]];
    if (!det_group_ok(st, (int32_t)a->n + 1)) continue;
    for (int64_t k = 0; k < a->n && !bad[idx[i]]; k++) {
      int32_t b = cand_peer(st, rs, a, k);
      int64_t lo = 0, hi = m;
      while (lo < hi) { /* first candidate rooted at b in a's direction */
        const candidate *q = &rs->c[idx[lo + (hi - lo) / 2]];
        if (q->root < b || (q->root == b && q->out < a->out)) lo = lo + (hi - lo) / 2 + 1;
        else hi = lo + (hi - lo) / 2;
      }
      for (; lo < m && rs->c[idx[lo]].root == b && rs->c[idx[lo]].out == a->out && !bad[idx[i]]; lo++) {
        const candidate *q = &rs->c[idx[lo]];
        if (4 * (q->n + 1) >= 3 * (a->n + 1) && cand_len(st, rs, q) == cand_len(st, rs, a) && cand_has_peer(st, rs, q, a->root) && !cand_same_members(st, rs, a, q))
          bad[idx[i]] = 1;
      }
    }
  }
  free(idx);
  return CDAG_OK;
}

/* Takes the candidates largest first, except a neighbourhood exchange's (noted). */
static int take_regular(det_state *st, rooted_state *rs) {
  uint8_t *bad = calloc((size_t)(rs->nc ? rs->nc : 1), 1);
  if (!bad) return CDAG_NOMEM("detection");
  int rc = sort_candidates(&rs->c, rs->nc, rs->ccap);
  if (rc == CDAG_OK) rc = flag_neighbourhoods(st, rs, bad);
  int64_t nbad = 0, example = -1;
  for (int64_t i = 0; i < rs->nc && rc == CDAG_OK; i++) {
    if (!bad[i]) rc = take(st, rs, &rs->c[i], 0);
    else if (nbad++ == 0) example = i;
  }
  free(bad);
  if (rc || !nbad) return rc;
  const candidate *c = &rs->c[example];
  return det_note(st, "neighbourhood exchange, not a collective: %lld overlapping groups (e.g. %s %d with %lld peers of %llu B) left residual",
                  (long long)nbad, c->out ? "out of" : "into", c->root, (long long)c->n,
                  (unsigned long long)st->sst->xfers[rs->t[c->arr][c->first]].len);
}

/* Vector groups: per root and direction, any size, largest first. */
static int vector_pass(det_state *st, rooted_state *rs) {
  const df_xfer *x = st->sst->xfers;
  int rc = CDAG_OK;
  rs->nc = 0;
  for (int out = 1; out >= 0 && rc == CDAG_OK; out--) {
    rs->nt = det_filter_degree(st, rs->t[out], det_candidates(st, rs->t[out]), out ? vector_min(st) : 0, out ? 0 : vector_min(st));
    if (rs->nt < 0) {
      rs->nt = 0;
      return CDAG_ERR_NOMEM;
    }
    rc = sort_by_root(x, NULL, out, rs->t[out], rs->nt);
    for (int64_t i = 0; i < rs->nt && rc == CDAG_OK;) {
      int64_t j = i;
      int32_t root = out ? x[rs->t[out][i]].src : x[rs->t[out][i]].dst;
      while (j < rs->nt && (out ? x[rs->t[out][j]].src : x[rs->t[out][j]].dst) == root) j++;
      rc = push_candidate(rs, (candidate){.first = i, .n = j - i, .root = root, .out = out, .arr = out});
      i = j;
    }
  }
  if (rc == CDAG_OK) rc = sort_candidates(&rs->c, rs->nc, rs->ccap);
  for (int64_t i = 0; i < rs->nc && rc == CDAG_OK; i++) {
    /* the vector tuples of one root must be re-sorted by peer (sizes differ) */
    candidate *c = &rs->c[i];
    rc = sort_by_peer(x, c->out, rs->t[c->out] + c->first, c->n);
    if (rc == CDAG_OK) rc = take(st, rs, c, 1);
  }
  return rc;
}

int det_rooted_collectives(det_state *st) {
  int64_t n = st->sst->nxfers ? st->sst->nxfers : 1;
  rooted_state rs = {0};
  rs.t[0] = malloc((size_t)n * sizeof(int64_t));
  rs.t[1] = malloc((size_t)n * sizeof(int64_t));
  rs.t[2] = malloc((size_t)n * sizeof(int64_t));
  rs.layer = malloc((size_t)n * sizeof *rs.layer);
  rs.pick = malloc((size_t)n * sizeof *rs.pick);
  rs.members = malloc(((size_t)st->g->nprocs + 1) * sizeof *rs.members);
  rs.self = malloc((size_t)n * sizeof *rs.self);
  int rc = rs.t[0] && rs.t[1] && rs.t[2] && rs.layer && rs.pick && rs.members && rs.self ? CDAG_OK : CDAG_NOMEM("detection");
  for (int64_t i = 0; rc == CDAG_OK && i < st->sst->nxfers; i++)
    if (st->sst->xfers[i].src == st->sst->xfers[i].dst && st->sst->xfers[i].len && !st->xused[i]) rs.self[rs.nself++] = i;
  if (rc == CDAG_OK) rc = sort_rank_len(st->sst->xfers, rs.self, rs.nself);
  if (rc == CDAG_OK) {
    int64_t all = det_candidates(st, rs.t[0]);
    memcpy(rs.t[1], rs.t[0], (size_t)all * sizeof(int64_t));
    rs.nt = takeable_roots(st, rs.t[1], det_filter_degree(st, rs.t[1], all, useful_min(st), 0), 1); /* out-groups */
    if (rs.nt < 0) rs.nt = 0, rc = CDAG_ERR_NOMEM;
    if (rc == CDAG_OK) memcpy(rs.t[2], rs.t[1], (size_t)rs.nt * sizeof(int64_t));
    if (rc == CDAG_OK) rc = collect_bcast(st, &rs);
    if (rc == CDAG_OK) rc = collect(st, &rs, 1);
    if (rc == CDAG_OK) rs.nt = takeable_roots(st, rs.t[0], det_filter_degree(st, rs.t[0], all, 0, useful_min(st)), 0); /* in-groups */
    if (rs.nt < 0) rs.nt = 0, rc = CDAG_ERR_NOMEM;
    if (rc == CDAG_OK) rc = collect(st, &rs, 0);
  }
  if (rc == CDAG_OK) rc = take_regular(st, &rs);
  if (rc == CDAG_OK) rc = vector_pass(st, &rs);
  free(rs.t[0]); free(rs.t[1]); free(rs.t[2]); free(rs.layer); free(rs.pick); free(rs.members); free(rs.c); free(rs.self);
  return rc;
}

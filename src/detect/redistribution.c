/* cdag — src/detect/redistribution.c: are the transfers between ranks a redistribution?
 *
 * The vector pass takes an all-to-all pattern as one alltoallv when it covers the fraction
 * `density` of its group's pairs. Whatever its density, the transfers between ranks are one
 * alltoallv over all the ranks they connect when they have the shape of a redistribution
 * (a block-cyclic matrix changing layout; docs/semantics.md says why these tests), judged
 * before the regular pass takes anything (detect_all.c folds the alltoalls it finds among
 * those ranks into the alltoallv):
 *  - per rank: it sends or keeps each byte it reads once (data changes owner; a halo sends
 *    its corners to two neighbours), and the address range of what it reads and that of
 *    what it writes are disjoint (one array to another; a halo writes ghost cells inside
 *    the array whose edges it sends). A connected component whose ranks all pass is
 *    eligible; the others are left alone.
 *  - together, the eligible components: two or more ranks send and two or more receive
 *    (one sender is a scatter, one receiver a gather), they are a group det_group_ok takes,
 *    and the pieces their pairs move beyond the first of each pair are at least as many as
 *    the n(n - 1) ordered pairs of their n ranks. Point-to-point sends a pair's one piece
 *    from where it lies but packs several (a copy at each end for each piece); one
 *    alltoallw sends every pair as one message described by a datatype, but each member
 *    walks all its n - 1 peers, empty or not. So a ring, a shift or a halo of contiguous
 *    edges (one piece per pair: nothing to save), a complete pattern with a stray message
 *    sharing a pair, or a sparse exchange of a few pieces among many ranks (the walk costs
 *    more than the copies it saves) stays as it is.
 * A layout change often splits into several components (each source grid column feeding
 * its own destination columns): taken together they are the one exchange of the phase.
 * Cost: one radix sort of the transfers and the own copies, O(n + p) besides. */
#include <stdlib.h>
#include <string.h>

#include "detect/detect_int.h"

const char *det_rd_text(det_rd why) {
  switch (why) {
    case DET_RD_YES: return "a redistribution";
    case DET_RD_ROOTED: return "not a redistribution: one rank sends or one receives everything";
    case DET_RD_SMALL: return "not a redistribution: too few ranks for a collective";
    case DET_RD_FEW_PIECES: return "not a redistribution: fewer pieces beyond one per pair than the group has pairs";
    case DET_RD_TWICE: return "not a redistribution: a rank sends some bytes twice";
    default: return "not a redistribution: a rank writes inside the range it reads";
  }
}

typedef struct {
  uint64_t *lo, *hi;      /* per rank: read range [lo[r], hi[r]), write range at p + r */
  uint8_t *twice;         /* per rank: reads a byte for two pieces */
  uint8_t *seen;          /* per rank: sends (r), receives (p + r), member (2p + r) */
  uint8_t *why;           /* per component id: DET_RD_YES (eligible) or a rank test it fails */
  int64_t senders, receivers, members, pieces, pairs;   /* of the eligible components */
} rd_scan;

static void widen(rd_scan *s, int64_t at, uint64_t addr, uint64_t len) {
  if (addr < s->lo[at]) s->lo[at] = addr;
  if (addr + len > s->hi[at]) s->hi[at] = addr + len;
}

/* Read and write ranges, and bytes read twice, of every rank, over a[0..na) sorted by
   (src, src_addr). */
static void scan_ranks(const df_xfer *x, const int64_t *a, int64_t na, int32_t p, rd_scan *s) {
  for (int64_t k = 0; k < na; k++) {
    const df_xfer *e = &x[a[k]];
    if (k > 0 && x[a[k - 1]].src == e->src && s->hi[e->src] > e->src_addr) s->twice[e->src] = 1;
    widen(s, e->src, e->src_addr, e->len);
    widen(s, (int64_t)p + e->dst, e->dst_addr, e->len);
  }
}

static det_rd rank_verdict(const rd_scan *s, int32_t p, int32_t r) {
  if (s->twice[r]) return DET_RD_TWICE;
  int64_t w = (int64_t)p + r;   /* an empty range (lo > hi) meets nothing */
  return s->lo[r] < s->hi[w] && s->lo[w] < s->hi[r] ? DET_RD_SAME_ARRAY : DET_RD_YES;
}

/* Which components are eligible (every rank passes), then what the eligible ones add up to,
   over t[0..n) (sorted by pair). */
static void count_eligible(const df_xfer *x, const int32_t *comp, const int64_t *t, int64_t n, int32_t p, rd_scan *s) {
  for (int64_t k = 0; k < n; k++) {
    int32_t e[2] = {x[t[k]].src, x[t[k]].dst}, c = comp[e[0]];
    for (int i = 0; i < 2; i++) {
      det_rd v = rank_verdict(s, p, e[i]);
      if (v != DET_RD_YES && s->why[c] == DET_RD_YES) s->why[c] = (uint8_t)v;
    }
  }
  for (int64_t k = 0; k < n; k++) {
    const df_xfer *e = &x[t[k]];
    if (s->why[comp[e->src]] != DET_RD_YES) continue;
    s->pieces++;
    s->pairs += k == 0 || x[t[k - 1]].src != e->src || x[t[k - 1]].dst != e->dst;
    if (!s->seen[e->src]) s->seen[e->src] = 1, s->senders++;
    if (!s->seen[p + e->dst]) s->seen[p + e->dst] = 1, s->receivers++;
    for (int32_t r = e->src, i = 0; i < 2; r = e->dst, i++)
      if (!s->seen[2 * (int64_t)p + r]) s->seen[2 * (int64_t)p + r] = 1, s->members++;
  }
}

static det_rd group_verdict(const det_state *st, const rd_scan *s) {
  if (s->senders < 2 || s->receivers < 2) return DET_RD_ROOTED;
  if (!det_group_ok(st, (int32_t)s->members)) return DET_RD_SMALL;
  return s->pieces - s->pairs >= s->members * (s->members - 1) ? DET_RD_YES : DET_RD_FEW_PIECES;
}

static int scan_alloc(rd_scan *s, int32_t p) {
  s->lo = malloc(4 * (size_t)p * sizeof *s->lo);
  s->twice = calloc(5 * (size_t)p, 1);   /* twice, seen (3p), why */
  if (!s->lo || !s->twice) return CDAG_NOMEM("detection");
  s->hi = s->lo + 2 * (size_t)p;
  for (int64_t i = 0; i < 2 * (int64_t)p; i++) s->lo[i] = UINT64_MAX, s->hi[i] = 0;
  s->seen = s->twice + p;
  s->why = s->twice + 4 * (size_t)p;
  return CDAG_OK;
}

int det_redistributions(const det_state *st, const int32_t *comp, const int64_t *t, int64_t n, const int64_t *self,
                        int64_t nself, uint8_t *verdict, det_rd_sum *sum) {
  const df_xfer *x = st->sst->xfers;
  int32_t p = st->g->nprocs;
  rd_scan s = {0};
  int64_t na = 0, *a = malloc((size_t)(n + nself + 1) * sizeof *a);
  int rc = a ? scan_alloc(&s, p) : CDAG_NOMEM("detection");
  if (rc == CDAG_OK) {
    memcpy(a, t, (size_t)n * sizeof *a);
    na = n;
    for (int64_t k = 0; k < nself; k++)
      if (!st->xused[self[k]] && x[self[k]].len) a[na++] = self[k];
    base_key keys[] = {BASE_KEY(x, src), BASE_KEY(x, src_addr)};
    rc = base_sort_fields(a, na, keys, 2);
  }
  if (rc == CDAG_OK) {
    scan_ranks(x, a, na, p, &s);
    count_eligible(x, comp, t, n, p, &s);
    det_rd all = group_verdict(st, &s);
    *sum = all == DET_RD_YES ? (det_rd_sum){(int32_t)s.members, s.pairs, s.pieces} : (det_rd_sum){0};
    for (int64_t k = 0; k < n; k++) {
      det_rd c = (det_rd)s.why[comp[x[t[k]].src]];
      verdict[x[t[k]].src] = verdict[x[t[k]].dst] = (uint8_t)(c == DET_RD_YES ? all : c);
    }
  }
  free(a); free(s.lo); free(s.twice);
  return rc;
}

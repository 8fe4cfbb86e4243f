/* cdag — src/record/phases.c: where a run without MPI_Pcontrol repeats itself.
 *
 * Input: each rank's operations in program order, each reduced to a symbol of its structure
 * (what it is, its size, its peer relative to the rank, its tag, which operations its wait
 * names relative to it; never an address or a measured time), the operation at the other
 * end of each message or the next member's instance of each native collective, and the
 * wait that completes it. Output: cuts, one index per rank each, at which every rank agrees
 * an iteration ends.
 *
 * Algorithm, O(n log n) for n operations:
 *  1. per rank, candidate periods: the most frequent distances between consecutive
 *     occurrences of a symbol (counted through a hash table of each symbol's latest);
 *  2. per rank and candidate p, the longest stretch where symbol i equals symbol i + p (a
 *     linear scan): the best candidate covers most operations, then is shortest;
 *  3. the rank with the most repeats sets the iteration; for a few rotations of its unit
 *     (positions where an intercepted call starts and no request is in flight), each target
 *     position is closed into a valid cut: every rank's prefix must hold the other end of
 *     each message and collective it holds, and every wait of a request it holds (the
 *     closure is monotone from one cut to the next, so a rotation costs O(n));
 *  4. the rotation whose pieces repeat most (pieces compared by a rolling hash of their
 *     symbols on every rank) wins; when the pieces alternate (a unit of two or more of the
 *     reference rank's), consecutive pieces are joined by the period of the piece sequence.
 * A cut never separates a message from its match, a collective's members, or a request
 * from its completion. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "record/record.h"

/* A unit must repeat at least this often for a run to be cut (a run of a handful of
   iterations is analysed best whole). */
enum { PH_MIN_REPEATS = 4, PH_CANDIDATES = 6, PH_ROTATIONS = 16, PH_MAX_JOIN = 8 };

typedef struct {
  int nprocs;
  rec_pop *const *ops;
  const int64_t *nops;
  int64_t **pm;      /* per rank, pm[c]: the last wait index of a request before c (-1 none) */
  int64_t **okn;     /* per rank, okn[c]: the first index >= c where a cut may come (n: the end) */
  uint64_t **h;      /* per rank, prefix rolling hash of the symbols */
  uint64_t *pw;      /* powers of the hash base */
  int64_t *cur, *scan;   /* a closure's cut and how far each rank's prefix was scanned */
  int *work; int nwork;
  int loose;         /* symbols without sizes and tags (rec_pop.lsym) */
} ph_state;

static uint64_t sym_of(const rec_pop *o, int loose) { return loose ? o->lsym : o->sym; }

typedef struct { int64_t p, a, e; } ph_region;   /* period, region [a, e) */

/* The longest stretch [a, e) of s where s[i] == s[i + p]; e - a >= p when there is one. */
static ph_region stretch(const uint64_t *s, int64_t n, int64_t stride, int64_t p) {
  ph_region best = {p, 0, 0};
  int64_t run = 0;
  for (int64_t i = 0; i + p < n; i++) {
    run = s[i * stride] == s[(i + p) * stride] ? run + 1 : 0;
    if (run && run + p > best.e - best.a) best = (ph_region){p, i + 1 - run, i + 1 + p};
  }
  return best;
}

/* Open addressing from a symbol to 1 + the index of its latest occurrence (0: empty). */
typedef struct { uint64_t sym; int64_t at; } ph_last;

static ph_last *last_slot(ph_last *t, int bits, uint64_t sym) {
  uint64_t mask = ((uint64_t)1 << bits) - 1, h = (sym * 0x9e3779b97f4a7c15u) >> (64 - bits);
  for (;; h++)
    if (!t[h & mask].at || t[h & mask].sym == sym) return &t[h & mask];
}

/* gap[d], 0 < d < n: how many times a symbol of s recurs d operations after its previous
   occurrence. O(n): the sort of (symbol, index) pairs this replaces was most of the
   merge's phase search (MPICH's coll/nonblocking3: 670 M of 1.3 G instructions). */
static int count_gaps(const uint64_t *s, int64_t n, int64_t *gap) {
  int bits = 1;   /* a table at most half full */
  while (((uint64_t)1 << bits) < 2 * (uint64_t)n) bits++;
  ph_last *t = calloc((size_t)1 << bits, sizeof *t);
  if (!t) return CDAG_NOMEM("phases: symbols");
  for (int64_t i = 0; i < n; i++) {
    ph_last *e = last_slot(t, bits, s[i]);
    if (e->at) gap[i - (e->at - 1)]++;
    *e = (ph_last){s[i], i + 1};
  }
  free(t);
  return CDAG_OK;
}

/* Step 1 and 2 for one rank: the period covering most of its operations. */
static int rank_period(const rec_pop *o, int64_t n, int loose, ph_region *out) {
  *out = (ph_region){0, 0, 0};
  if (n < 2 * PH_MIN_REPEATS) return CDAG_OK;
  int64_t *gap = calloc((size_t)n, sizeof *gap);
  uint64_t *s = malloc((size_t)n * sizeof *s);
  int rc = gap && s ? CDAG_OK : CDAG_NOMEM("phases: symbols");
  for (int64_t i = 0; rc == CDAG_OK && i < n; i++) s[i] = sym_of(&o[i], loose);
  if (rc == CDAG_OK) rc = count_gaps(s, n, gap);
  /* the PH_CANDIDATES most frequent gaps (of equal counts, the shortest) */
  int64_t cand[PH_CANDIDATES], cnt[PH_CANDIDATES];
  int nc = 0;
  for (int64_t d = 1; rc == CDAG_OK && d < n; d++) {
    int64_t c = gap[d];
    if (!c || (nc == PH_CANDIDATES && cnt[nc - 1] >= c)) continue;
    int at = nc < PH_CANDIDATES ? nc++ : nc - 1;   /* replaces the least frequent */
    for (; at > 0 && cnt[at - 1] < c; at--) cand[at] = cand[at - 1], cnt[at] = cnt[at - 1];
    cand[at] = d, cnt[at] = c;
  }
  for (int k = 0; k < nc; k++) {
    if (cand[k] * PH_MIN_REPEATS > n) continue;
    ph_region r = stretch(s, n, 1, cand[k]);
    int64_t cov = (r.e - r.a) / r.p * r.p, bcov = out->p ? (out->e - out->a) / out->p * out->p : 0;
    if ((r.e - r.a) / r.p >= PH_MIN_REPEATS && (cov > bcov || (cov == bcov && r.p < out->p))) *out = r;
  }
  free(gap), free(s);
  return rc;
}

/* The least valid cut position >= c on rank q by the rank's own rules: a cut comes where
   an intercepted call starts, and after the wait of every request issued before it. */
static int64_t settle(const ph_state *st, int q, int64_t c) {
  int64_t n = st->nops[q];
  for (;;) {
    if (c >= n) return n;
    int64_t d = st->okn[q][c];
    if (d < n && st->pm[q][d] >= d) d = st->pm[q][d] + 1;
    if (d == c) return c;
    c = d;
  }
}

/* Extends st->cur (the previous cut) to the least valid cut with rank `ref` at `target` or
   beyond: every operation's other end inside too. Monotone: scans each operation once over
   all the cuts of one pass. */
static void closure(ph_state *st, int ref, int64_t target) {
  st->nwork = 0;
  int64_t c = settle(st, ref, target > st->cur[ref] ? target : st->cur[ref]);
  if (c > st->cur[ref]) st->cur[ref] = c;
  for (int q = 0; q < st->nprocs; q++)
    if (st->scan[q] < st->cur[q]) st->work[st->nwork++] = q;
  while (st->nwork) {
    int q = st->work[--st->nwork];
    for (; st->scan[q] < st->cur[q]; st->scan[q]++) {
      const rec_pop *o = &st->ops[q][st->scan[q]];
      if (o->pidx < 0 || o->pidx < st->cur[o->prank]) continue;
      int pr = o->prank;
      int64_t was = st->cur[pr];
      st->cur[pr] = settle(st, pr, o->pidx + 1);
      if (was <= st->scan[pr] && st->cur[pr] > st->scan[pr] && pr != q) st->work[st->nwork++] = pr;
    }
  }
}

static uint64_t seg_hash(const ph_state *st, int q, int64_t a, int64_t b) {
  return st->h[q][b] - st->h[q][a] * st->pw[b - a];
}

/* Cuts of the reference rank's unit from position a + t, each closed, into cuts (nprocs
   each; a cut equal to the one before is left out); their number. */
static int64_t pass(ph_state *st, int ref, ph_region reg, int64_t t, int64_t *cuts) {
  memset(st->cur, 0, (size_t)st->nprocs * sizeof *st->cur);
  memset(st->scan, 0, (size_t)st->nprocs * sizeof *st->scan);
  int64_t k = 0;
  for (int64_t target = reg.a + t; target <= reg.e; target += reg.p) {
    closure(st, ref, target);
    if (k && !memcmp(cuts + (k - 1) * st->nprocs, st->cur, (size_t)st->nprocs * sizeof *cuts)) continue;
    memcpy(cuts + k * st->nprocs, st->cur, (size_t)st->nprocs * sizeof *cuts);
    k++;
  }
  return k;
}

/* Piece signatures of the cuts (k - 1 pieces between k cuts). */
static void piece_sigs(const ph_state *st, const int64_t *cuts, int64_t k, uint64_t *g) {
  for (int64_t j = 0; j + 1 < k; j++) {
    uint64_t x = 1469598103934665603ull;
    for (int q = 0; q < st->nprocs; q++) {
      int64_t a = cuts[j * st->nprocs + q], b = cuts[(j + 1) * st->nprocs + q];
      x = (x ^ seg_hash(st, q, a, b)) * 1099511628211ull;
      x = (x ^ (uint64_t)(b - a)) * 1099511628211ull;
    }
    g[j] = x;
  }
}

/* How many pieces between the cuts equal the one before. */
static int64_t score(const ph_state *st, const int64_t *cuts, int64_t k, uint64_t *g) {
  if (k < 3) return 0;
  piece_sigs(st, cuts, k, g);
  int64_t n = 0;
  for (int64_t j = 1; j + 1 < k; j++) n += g[j] == g[j - 1];
  return n;
}

/* Step 4's join: when the pieces repeat with a period q > 1, keeps every q-th cut from
   where the repetition starts. */
static int64_t join_pieces(const ph_state *st, int64_t *cuts, int64_t k) {
  if (k < 3) return k;
  uint64_t *g = malloc((size_t)(k - 1) * sizeof *g);
  if (!g) return -1;
  piece_sigs(st, cuts, k, g);
  ph_region best = stretch(g, k - 1, 1, 1);
  for (int64_t q = 2; q <= PH_MAX_JOIN && q * PH_MIN_REPEATS <= k - 1; q++) {
    ph_region r = stretch(g, k - 1, 1, q);
    if ((r.e - r.a) / q > 0 && (r.e - r.a) > 2 * (best.e - best.a) + q) best = r;
  }
  free(g);
  if (best.p <= 1 || best.e - best.a < best.p * PH_MIN_REPEATS) return k;
  /* keep cuts 0..a, then every p-th up to e, then the rest */
  int64_t w = 0;
  for (int64_t j = 0; j < k; j++) {
    int64_t end = best.a + (best.e - best.a) / best.p * best.p;
    int keep = j <= best.a || j >= end || (j - best.a) % best.p == 0;
    if (keep) memmove(cuts + w++ * st->nprocs, cuts + j * st->nprocs, (size_t)st->nprocs * sizeof *cuts);
  }
  return w;
}

static void state_free(ph_state *st) {
  for (int q = 0; q < st->nprocs; q++) {
    if (st->pm) free(st->pm[q]);
    if (st->okn) free(st->okn[q]);
    if (st->h) free(st->h[q]);
  }
  free(st->pm), free(st->okn), free(st->h), free(st->pw), free(st->cur), free(st->scan), free(st->work);
}

static int state_init(ph_state *st) {
  int P = st->nprocs;
  int64_t maxn = 0;
  st->pm = calloc((size_t)P, sizeof *st->pm);
  st->okn = calloc((size_t)P, sizeof *st->okn);
  st->h = calloc((size_t)P, sizeof *st->h);
  st->cur = calloc((size_t)P, sizeof *st->cur);
  st->scan = calloc((size_t)P, sizeof *st->scan);
  st->work = malloc((size_t)P * 2 * sizeof *st->work);
  if (!st->pm || !st->okn || !st->h || !st->cur || !st->scan || !st->work) return CDAG_NOMEM("phases");
  for (int q = 0; q < P; q++) {
    int64_t n = st->nops[q];
    const rec_pop *o = st->ops[q];
    if (n > maxn) maxn = n;
    st->pm[q] = malloc((size_t)(n + 1) * sizeof **st->pm);
    st->okn[q] = malloc((size_t)(n + 1) * sizeof **st->okn);
    st->h[q] = malloc((size_t)(n + 1) * sizeof **st->h);
    if (!st->pm[q] || !st->okn[q] || !st->h[q]) return CDAG_NOMEM("phases");
    st->pm[q][0] = -1;
    st->h[q][0] = 0;
    for (int64_t i = 0; i < n; i++) {
      st->pm[q][i + 1] = o[i].waited > st->pm[q][i] ? o[i].waited : st->pm[q][i];
      st->h[q][i + 1] = st->h[q][i] * 0x100000001b3ull + (sym_of(&o[i], st->loose) ^ 0x9e3779b97f4a7c15ull);
    }
    st->okn[q][n] = n;
    for (int64_t i = n - 1; i >= 0; i--) st->okn[q][i] = o[i].start || i == 0 ? i : st->okn[q][i + 1];
  }
  st->pw = malloc((size_t)(maxn + 1) * sizeof *st->pw);
  if (!st->pw) return CDAG_NOMEM("phases");
  st->pw[0] = 1;
  for (int64_t i = 1; i <= maxn; i++) st->pw[i] = st->pw[i - 1] * 0x100000001b3ull;
  return CDAG_OK;
}

/* The operations (all ranks) in pieces equal to the piece before or after them. */
static int64_t coverage(const ph_state *st, const int64_t *cuts, int64_t k, uint64_t *g) {
  if (k < 3) return 0;
  piece_sigs(st, cuts, k, g);
  int64_t n = 0;
  for (int64_t j = 0; j + 1 < k; j++)
    if ((j && g[j] == g[j - 1]) || (j + 2 < k && g[j] == g[j + 1]))
      for (int q = 0; q < st->nprocs; q++) n += cuts[(j + 1) * st->nprocs + q] - cuts[j * st->nprocs + q];
  return n;
}

/* The cuts by symbols (loose: rec_pop.lsym), and the operations their repeats cover. */
static int find_cuts(int nprocs, rec_pop *const *ops, const int64_t *nops, int loose, int64_t **cuts, int64_t *ncuts,
                     int64_t *cover) {
  *cover = 0;
  ph_state st = {.nprocs = nprocs, .ops = ops, .nops = nops, .loose = loose};
  int rc = state_init(&st);
  int ref = -1;
  ph_region reg = {0, 0, 0};
  for (int q = 0; q < nprocs && !rc; q++) {
    ph_region r;
    rc = rank_period(ops[q], nops[q], loose, &r);
    if (!rc && r.p && (ref < 0 || (r.e - r.a) / r.p > (reg.e - reg.a) / reg.p)) ref = q, reg = r;
  }
  /* steps 3 and 4: rotations of the unit where a cut may come on the reference rank, the
     pieces joined where they alternate; the rotation whose pieces repeat most wins */
  int64_t maxk = ref >= 0 ? (reg.e - reg.a) / reg.p + 2 : 0, bestk = 0, bests = -1;
  int64_t *c = rc || ref < 0 ? NULL : malloc((size_t)maxk * (size_t)nprocs * sizeof *c);
  int64_t *best = rc || ref < 0 ? NULL : malloc((size_t)maxk * (size_t)nprocs * sizeof *best);
  uint64_t *g = rc || ref < 0 ? NULL : malloc((size_t)maxk * sizeof *g);
  if (!rc && ref >= 0 && (!c || !best || !g)) rc = CDAG_NOMEM("phases: cuts");
  for (int64_t t = 0, tried = 0; !rc && ref >= 0 && t < reg.p && tried < PH_ROTATIONS; t++) {
    int64_t i = reg.a + t;
    if (st.okn[ref][i] != i || st.pm[ref][i] >= i) continue;
    tried++;
    int64_t k = join_pieces(&st, c, pass(&st, ref, reg, t, c));
    if (k < 0) { rc = CDAG_NOMEM("phases: cuts"); break; }
    int64_t sc = score(&st, c, k, g);
    if (sc > bests) {
      int64_t *x = best; best = c; c = x;
      bests = sc, bestk = k;
    }
  }
  if (!rc && bests + 1 >= PH_MIN_REPEATS) {
    *cover = coverage(&st, best, bestk, g);
    *cuts = best;
    *ncuts = bestk;
    best = NULL;
  }
  free(c), free(best), free(g);
  state_free(&st);
  return rc;
}

int rec_find_cuts(int nprocs, rec_pop *const *ops, const int64_t *nops, int64_t **cuts, int64_t *ncuts) {
  *cuts = NULL;
  *ncuts = 0;
  int64_t *lc = NULL, nl = 0, cover, lcover;
  int rc = find_cuts(nprocs, ops, nops, 0, cuts, ncuts, &cover);
  if (!rc) rc = find_cuts(nprocs, ops, nops, 1, &lc, &nl, &lcover);
  if (!rc && lcover > cover) {   /* the loop whose sizes or tags change explains more of the run */
    free(*cuts);
    *cuts = lc, *ncuts = nl;
    lc = NULL;
  }
  free(lc);
  return rc;
}

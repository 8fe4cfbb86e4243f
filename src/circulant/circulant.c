/* cdag — src/circulant/circulant.c: skips, baseblocks, receive/send schedules and the simulated
 * broadcast, allgather and reduction on Träff's circulant graph (CLUSTER 2022; arXiv 2407.18004).
 *
 * Algorithm. skip[q] = p, skip[k] = ceil(skip[k+1]/2). Every rank x in 1..p-1 is a unique
 * sum of skips with strictly decreasing indices (subtract greedily); the last index is its
 * baseblock. Those sums form a tree: the children of a node are node + skip[e] for smaller
 * e, and the subtree of a node reached by skip[e] spans skip[e+1] - skip[e] positions (cut
 * to the parent's span). Receive schedule of rank r (the greedy of 1.4): in round k it takes
 * the largest unused baseblock among the ranks that could have sent to its from-rank, the
 * window (r - skip[k+1], r - skip[k]]. Instead of scanning windows, we walk the tree on the
 * doubled ring 0..2p (position p is the root again, block q), right to left: windows move
 * left as k grows, and within a window a node beats its whole subtree (larger baseblock),
 * so a node left of the current window is opened first, and a walk inside a subtree stops
 * as soon as its own root falls into the window. An opened node whose subtree gave nothing
 * is taken itself: that is the greedy's widening of an exhausted window by one rank. Each
 * step accepts, skips or opens one node: at most 3q steps per rank measured (32 for every
 * rank of p <= 4200, 82 for sampled ranks of p up to 2^30), so O(log p) in practice; no
 * proof. Tests compare the walk with a plain greedy (every rank for p <= 600, sampled ranks
 * up to CIRC_MAXP) and check every rank of p <= 4096 against the oracle of 1.7.
 * Send schedule (1.5): S_r[k] = R_t[k], t = r + skip[k]. Most entries follow from where
 * the largest baseblock of t's window lies (circ_sendsched, send_reduce); the rest (about a
 * quarter for p <= 4096) walk t's receive schedule up to round k: O(log^2 p) per rank
 * (q send_reduce calls of O(q) each; at most 1.5 q^2 walk steps measured).
 * The broadcast and reduction tabulate every rank's R once (p x q ints, O(p log p)), then
 * visit every rank in every round: O(p (n - 1 + q)). */
#include "circulant/circulant.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

int circ_init(circ_graph *c, int p) {
  if (p < 1 || p > CIRC_MAXP) return -1;
  int q = 0;
  while ((1L << q) < p) q++;
  c->p = p;
  c->q = q;
  c->skip[q] = p;
  for (int k = q - 1; k >= 0; k--) c->skip[k] = (c->skip[k + 1] + 1) / 2;
  return 0;
}

int circ_baseblock(const circ_graph *c, int r) {
  if (r == 0) return c->q;
  /* Subtracting the largest skip that fits never needs the same index twice, since
   * skip[k+1] <= 2 skip[k]; the index that empties r is the last edge into r. */
  for (int k = c->q - 1; k >= 0; k--) {
    if (c->skip[k] <= r) r -= c->skip[k];
    if (r == 0) return k;
  }
  return c->q; /* not reached for 0 < r < p */
}

/* ---- receive schedule: the tree walk ---------------------------------------------------- */

typedef struct {
  const int *skip;
  int p, q;
  int top;          /* r + p: rank r's own position on the doubled ring */
  int b;            /* r's baseblock, what block q (the root) stands for */
  int k, kend;      /* next round to fill; stop once rounds 0..kend-1 are filled */
  int hi, hi_next;  /* round k's window is (hi_next, hi] = (top - skip[k+1], top - skip[k]] */
  int last;         /* position accepted last: later ones must lie left of it */
  uint64_t unused;  /* blocks 0..q not received yet in this phase */
  int *R;
} circ_walk;

static int highest_below(uint64_t set, int e) {
  uint64_t m = set & ((1ULL << e) - 1);
  return m ? 63 - __builtin_clzll(m) : -1;
}

/* Round k takes block e at position pos. */
static void walk_accept(circ_walk *w, int e, int pos) {
  w->R[w->k++] = e == w->q ? w->b : e - w->q;
  w->unused &= ~(1ULL << e);
  w->last = pos;
  w->hi = w->hi_next;
  if (w->k < w->kend) w->hi_next = w->top - w->skip[w->k + 1];
}

/* Visits the children of `base` (subtree [base, base+span), child indices < emax) right to
 * left. Returns as soon as base is no longer left of the window: base then beats all of
 * its subtree, and the caller decides on it. */
static void walk_node(circ_walk *w, int base, int span, int emax) {
  const int *skip = w->skip;
  for (int e = highest_below(w->unused, emax); e >= 0; e = highest_below(w->unused, e)) {
    if (w->k >= w->kend || base > w->hi_next) return;
    if (skip[e] >= span) continue; /* base + skip[e] would leave base's subtree */
    int pos = base + skip[e];
    if (pos > w->hi) continue;     /* right of the window: those rounds are filled */
    if (pos <= w->hi_next) {       /* left of it: walk its subtree first */
      int up = (e < w->q ? skip[e + 1] : 2 * w->p) - skip[e], rest = span - skip[e];
      walk_node(w, pos, up < rest ? up : rest, e);
      if (w->k >= w->kend || base > w->hi_next) return;
    }
    if (pos <= w->hi && pos < w->last) walk_accept(w, e, pos);
  }
}

/* Rounds 0..kend-1 (kend <= q) of r's receive schedule. */
static void recv_upto(const circ_graph *c, int r, int *R, int kend) {
  if (kend <= 0) return;
  circ_walk w;
  w.skip = c->skip;
  w.p = c->p;
  w.q = c->q;
  w.top = r + c->p;
  w.b = circ_baseblock(c, r);
  w.k = 0;
  w.kend = kend;
  w.hi = w.top - c->skip[0];
  w.hi_next = w.top - c->skip[1];
  w.last = w.top;
  w.unused = ((2ULL << c->q) - 1) & ~(1ULL << w.b);
  w.R = R;
  walk_node(&w, 0, 2 * c->p, c->q + 1);
  assert(w.k == kend); /* the walk fills every round: see the tests */
}

void circ_recvsched(const circ_graph *c, int r, int *R) { recv_upto(c, r, R, c->q); }

/* Largest e with skip[e] <= x, for 1 <= x < p. */
static int top_index(const circ_graph *c, int x) {
  int e = c->q - 1;
  while (c->skip[e] > x) e--;
  return e;
}

/* Moves r to a smaller rank with the same send block in round k. Rank t = r + skip[k]
 * decides R_t[k] from the baseblocks of positions [r - len, t], len = skip[k+1] - skip[k]:
 * its windows and their one-rank widenings. Let r = skip[e] + x with e > k the leading
 * index, and x > len, so that the range starts right of skip[e]. Rank x sees the same:
 * - if t < skip[e+1], the range lies inside skip[e]'s subtree, whose baseblocks repeat
 *   those of (0, skip[e+1] - skip[e]);
 * - if t >= skip[e+1] = 2 skip[e], the range differs from x's only in holding skip[e+1]
 *   (baseblock e+1, or the root) where x's holds skip[e] (baseblock e). Every other block
 *   in either range is below e, so the greedy takes the same decisions; and round k's
 *   window (r - len, r] holds neither, so the block of round k is the same. */
static int send_reduce(const circ_graph *c, int r, int k) {
  int len = c->skip[k + 1] - c->skip[k];
  for (int e = c->q - 1; e > k && r > 0; e--) {
    if (c->skip[e] > r) continue;
    int x = r - c->skip[e], span = c->skip[e + 1] - c->skip[e];
    if (x <= len || (x + c->skip[k] >= span && span != c->skip[e])) break;
    r = x;
  }
  return r;
}

/* S_r[k] = R_t[k] with t = r + skip[k] (r after send_reduce). t's window for round k is
 * (r - len, r], and t has used only blocks of positions [r, t] before. No walk of t is
 * needed when the window holds a block that t surely takes:
 * - r = 0: the window ends at the root, block q, which stands for t's baseblock k;
 * - t < skip[k+1] (the lower part): the window holds the root again, and t's baseblock
 *   equals r's since the ranks in (skip[k], skip[k+1]) repeat those in (0, len);
 * - k = 0: the window is r alone, and consecutive ranks never share a baseblock (the
 *   seed's Lemma 2), so t takes r's: b - q;
 * - r = skip[e] + y with e >= k its leading index and 0 < y < len (the upper part): the
 *   window holds skip[e], whose baseblock e beats every other rank in the window, and no
 *   rank in [r, t] has baseblock e (the next one is skip[e] + skip[e+1] > t): e - q.
 * Otherwise walk t's receive schedule up to round k. Tests check every case against it. */
void circ_sendsched(const circ_graph *c, int r, int *S) {
  int R[64], q = c->q;
  for (int k = 0; k < q; k++) {
    int e, x = send_reduce(c, r, k);
    if (x == 0) {
      S[k] = k;
    } else if (x + c->skip[k] < c->skip[k + 1]) {
      S[k] = circ_baseblock(c, x);
    } else if (k == 0) {
      S[k] = circ_baseblock(c, x) - q;
    } else if ((e = top_index(c, x)) >= k && x - c->skip[e] > 0 &&
               x - c->skip[e] < c->skip[k + 1] - c->skip[k]) {
      S[k] = e - q;
    } else {
      recv_upto(c, (x + c->skip[k]) % c->p, R, k + 1);
      S[k] = R[k];
    }
  }
}

/* ---- simulations ------------------------------------------------------------------------ */

/* Every rank's receive schedule, rank-major (p x q), or NULL. */
static int *recv_table(const circ_graph *c) {
  int *T = malloc(sizeof *T * (size_t)c->p * (size_t)(c->q ? c->q : 1));
  if (T)
    for (int r = 0; r < c->p; r++) circ_recvsched(c, r, T + (size_t)r * (size_t)c->q);
  return T;
}

/* Dummy rounds that make n-1+q+x a multiple of q (1.8). */
static int dummy_rounds(int q, int n) { return (q - (n - 1) % q) % q; }

int circ_bcast_rounds(const circ_graph *c, int n, circ_block_fn emit, void *ctx) {
  int p = c->p, q = c->q;
  if (n < 1) return -1;
  if (q == 0) return 0;
  int *T = recv_table(c);
  if (!T) return -1;
  int x = dummy_rounds(q, n), off = -x;
  for (int i = x; i <= n - 2 + q + x; i++) {
    int k = i % q;
    for (int r = 0; r < p; r++) {
      int to = (r + c->skip[k]) % p;
      int blk = T[(size_t)to * (size_t)q + (size_t)k] + off; /* S_r[k] = R_to[k] */
      if (blk >= 0 && to != 0) emit(ctx, i - x, r, to, blk < n - 1 ? blk : n - 1);
    }
    if (k == q - 1) off += q;
  }
  free(T);
  return n - 1 + q;
}

int circ_reduce_rounds(const circ_graph *c, int n, circ_block_fn emit, void *ctx) {
  int p = c->p, q = c->q;
  if (n < 1) return -1;
  if (q == 0) return 0;
  int *T = recv_table(c);
  if (!T) return -1;
  /* Replay the broadcast backwards: each of its receives becomes a send of the partial
   * result to the parent, after every child has sent (children received later). */
  int x = dummy_rounds(q, n), off = n - 1, last = n - 2 + q + x;
  for (int i = last; i >= x; i--) {
    int k = i % q;
    for (int r = 1; r < p; r++) {
      int blk = T[(size_t)r * (size_t)q + (size_t)k] + off;
      if (blk >= 0) emit(ctx, last - i, r, (r - c->skip[k] + p) % p, blk < n - 1 ? blk : n - 1);
    }
    if (k == 0) off -= q;
  }
  free(T);
  return n - 1 + q;
}

int circ_allgather_rounds(const circ_graph *c, circ_slots_fn emit, void *ctx) {
  int p = c->p;
  /* Edges reversed: after round k a rank holds slots [0, skip[k+1]). The sender holds
   * [0, skip[k]) and skip[k+1] - skip[k] <= skip[k], so it owns everything it sends. */
  for (int k = 0; k < c->q; k++)
    for (int r = 0; r < p; r++)
      emit(ctx, k, r, (r - c->skip[k] + p) % p, c->skip[k], c->skip[k + 1] - c->skip[k]);
  return c->q;
}

int circ_blocks_for(double alpha, double beta, uint64_t bytes, int q) {
  if (q <= 1 || bytes == 0 || !(beta > 0)) return 1;
  double cap = bytes < (uint64_t)INT_MAX ? (double)bytes : (double)INT_MAX;
  if (!(alpha > 0)) return (int)cap; /* no latency: as many blocks as possible */
  double n = round(sqrt((q - 1) * beta * (double)bytes / alpha));
  if (!(n >= 1)) return 1;
  return n > cap ? (int)cap : (int)n;
}

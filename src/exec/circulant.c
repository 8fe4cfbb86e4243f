/* cdag — src/exec/circulant.c: skips, baseblocks, receive and send schedules.
 *
 * Algorithm (SEEDS-NOTES 1.1-1.5): skip[q] = p, skip[k] = ceil(skip[k+1] / 2). A rank's
 * baseblock is found by subtracting skips greedily. The receive schedule is the greedy of
 * 1.4: in round k a rank receives the largest block not used yet among the baseblocks of
 * the ranks that could have sent to it (rangeblocks, 1.3), widening the window by one rank
 * when that set is empty. The send schedule of r in round k is the receive schedule of
 * (r + skip[k]) mod p in round k. Block sets are bitmasks (q <= 32). */
#include "exec/circulant.h"

int circ_init(circ_graph *c, int p) {
  if (p < 1) return -1;
  int q = 0;
  while ((1LL << q) < p) q++;
  c->p = p;
  c->q = q;
  c->skip[q] = p;
  for (int k = q - 1; k >= 0; k--) c->skip[k] = (c->skip[k + 1] + 1) / 2;
  return 0;
}

int circ_baseblock(const circ_graph *c, int r) {
  if (r == 0) return c->q;
  for (int k = c->q - 1; k >= 0; k--) {
    if (c->skip[k] <= r) r -= c->skip[k];
    if (r == 0) return k;
  }
  return c->q; /* unreachable for 0 < r < p */
}

/* Largest j with skip[j] <= x (x >= 1). */
static int top_skip(const circ_graph *c, int x) {
  int j = 0;
  while (j + 1 <= c->q && c->skip[j + 1] <= x) j++;
  return j;
}

/* Baseblocks of ranks a..b, 1 <= a <= b < p, as a bitmask (1.3). */
static uint64_t rangeblocks(const circ_graph *c, int a, int b) {
  uint64_t out = 0;
  while (a <= b) {
    int e = top_skip(c, b);
    if (a > c->skip[e]) {
      a -= c->skip[e];
      b -= c->skip[e];
      continue;
    }
    out |= 1ULL << e;
    int m = b - c->skip[e];
    if (m >= 1) out |= (2ULL << top_skip(c, m)) - 1;
    b = c->skip[e] - 1;
  }
  return out;
}

/* Baseblocks of the ranks at positions from..from+len-1 (mod p); position 0 gives q. */
static uint64_t window(const circ_graph *c, int from, int len) {
  int p = c->p;
  uint64_t out = 0;
  from = ((from % p) + p) % p;
  while (len > 0) {
    int end = from + len - 1 < p - 1 ? from + len - 1 : p - 1, a = from;
    if (a == 0) {
      out |= 1ULL << c->q;
      a = 1;
    }
    if (a <= end) out |= rangeblocks(c, a, end);
    len -= end - from + 1;
    from = 0;
  }
  return out;
}

static int highest(uint64_t m) { return 63 - __builtin_clzll(m); }

void circ_recvsched(const circ_graph *c, int r, int *R) {
  int b = circ_baseblock(c, r);
  uint64_t used = 1ULL << b;
  for (int k = 0; k < c->q; k++) {
    int lo = c->skip[k], hi = c->skip[k + 1];
    uint64_t cand = window(c, r - hi + 1, hi - lo) & ~used;
    if (!cand) cand = window(c, r - hi, hi - lo + 1) & ~used;
    int e = cand ? highest(cand) : b;
    used |= 1ULL << e;
    R[k] = e == c->q ? b : e - c->q;
  }
}

void circ_sendsched(const circ_graph *c, int r, int *S) {
  int R[CIRC_MAXQ];
  for (int k = 0; k < c->q; k++) {
    circ_recvsched(c, (r + c->skip[k]) % c->p, R);
    S[k] = R[k];
  }
}

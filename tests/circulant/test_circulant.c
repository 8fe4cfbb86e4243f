/* cdag tests — tests/circulant/test_circulant.c: round-optimal circulant schedules.
 *
 * Checks src/circulant/circulant.c against Träff's construction (CLUSTER 2022): the skips and baseblocks of
 * 1.1-1.2; the reference tables of 1.9 (p = 9, 17, 20) and the p = 5 trace of 1.8; the
 * oracle of 1.7 exhaustively for every p up to 4096, every rank and round: (a)-(c) on the
 * schedules and (d)-(e) by simulating the broadcast for three block counts per p (issue #7);
 * the tree walk against a plain greedy (1.4: window scans for p <= 600, rangeblocks of 1.3
 * for sampled ranks of p up to CIRC_MAXP); more block counts for p <= 300; the regular
 * allgather and the reduction by simulation. Default run: about 12 s of CPU at -O2; under
 * valgrind (CDAG_TEST_SCALE=0.02) the exhaustive ranges shrink with cdag_test_iterations. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "circulant/circulant.h"

/* check's ck_assert* record their location on every check that PASSES (a write to check's
 * message file: a system call), which made this test's inner loops take minutes of system
 * time. These call into check only on failure. */
#define REQUIRE(cond, ...)                    \
  do {                                        \
    if (!(cond)) ck_abort_msg(__VA_ARGS__);   \
  } while (0)
#define REQUIRE_INT(x, op, y)                                                              \
  do {                                                                                     \
    intmax_t req_x_ = (x), req_y_ = (y);                                                   \
    if (!(req_x_ op req_y_))                                                               \
      ck_abort_msg("'%s %s %s' failed: %jd vs %jd", #x, #op, #y, req_x_, req_y_);          \
  } while (0)

static circ_graph graph(int p) {
  circ_graph c;
  REQUIRE_INT(circ_init(&c, p), ==, 0);
  return c;
}

/* Every rank's receive schedule, rank-major (p x q). */
static int *recv_table(const circ_graph *c) {
  int *T = malloc(sizeof *T * (size_t)c->p * (size_t)(c->q + 1));
  REQUIRE(T != NULL, "out of memory");
  for (int r = 0; r < c->p; r++) circ_recvsched(c, r, T + (size_t)r * (size_t)c->q);
  return T;
}

static int rq(const circ_graph *c, const int *T, int r, int k) { return T[(size_t)r * (size_t)c->q + (size_t)k]; }

/* ---- 1.1, 1.2 ---------------------------------------------------------------------------- */

START_TEST(skip_examples) {
  static const int s9[] = {1, 2, 3, 5, 9}, s20[] = {1, 2, 3, 5, 10, 20};
  circ_graph c = graph(9);
  REQUIRE_INT(c.q, ==, 4);
  for (int k = 0; k <= 4; k++) REQUIRE_INT(c.skip[k], ==, s9[k]);
  c = graph(20);
  REQUIRE_INT(c.q, ==, 5);
  for (int k = 0; k <= 5; k++) REQUIRE_INT(c.skip[k], ==, s20[k]);
  c = graph(1);
  REQUIRE_INT(c.q, ==, 0);
  REQUIRE_INT(c.skip[0], ==, 1);
  c = graph(2);
  REQUIRE_INT(c.q, ==, 1);
  REQUIRE_INT(c.skip[0], ==, 1);
  REQUIRE_INT(c.skip[1], ==, 2);
  for (int m = 0; m <= 29; m++) {
    c = graph(1 << m);
    REQUIRE_INT(c.q, ==, m);
    for (int k = 0; k <= m; k++) REQUIRE_INT(c.skip[k], ==, 1 << k);
  }
  c = graph(CIRC_MAXP);
  REQUIRE_INT(c.q, ==, 30);
  circ_graph d = c;
  REQUIRE_INT(circ_init(&d, 0), ==, -1);
  REQUIRE_INT(circ_init(&d, -5), ==, -1);
  REQUIRE_INT(circ_init(&d, CIRC_MAXP + 1), ==, -1);
  /* untouched on error (compare the set fields: skip[q+1..] is uninitialised, and a memcmp
   * of the whole struct is an uninitialised read under valgrind) */
  REQUIRE(d.p == c.p && d.q == c.q && !memcmp(d.skip, c.skip, sizeof c.skip[0] * (size_t)(c.q + 1)), "changed");
}
END_TEST

START_TEST(skip_properties) {
  for (int p = 2; p <= 5000; p++) {
    circ_graph c = graph(p);
    REQUIRE_INT(1 << (c.q - 1), <, p);
    REQUIRE_INT(p, <=, 1 << c.q);
    REQUIRE_INT(c.skip[0], ==, 1);
    if (p > 2) REQUIRE_INT(c.skip[1], ==, 2);
    int sum = 0;
    for (int k = 0; k < c.q; k++) {
      REQUIRE_INT(c.skip[k], <, c.skip[k + 1]);
      REQUIRE_INT(c.skip[k + 1], <=, 2 * c.skip[k]);
      REQUIRE_INT(sum, >=, c.skip[k] - 1);
      sum += c.skip[k];
    }
  }
}
END_TEST

START_TEST(baseblock_examples) {
  static const int bb9[] = {4, 0, 1, 2, 0, 3, 0, 1, 2};
  static const int bb20[] = {5, 0, 1, 2, 0, 3, 0, 1, 2, 0, 4, 0, 1, 2, 0, 3, 0, 1, 2, 0};
  circ_graph c = graph(9);
  for (int r = 0; r < 9; r++) REQUIRE_INT(circ_baseblock(&c, r), ==, bb9[r]);
  c = graph(20);
  for (int r = 0; r < 20; r++) REQUIRE_INT(circ_baseblock(&c, r), ==, bb20[r]);
  c = graph(1);
  REQUIRE_INT(circ_baseblock(&c, 0), ==, 0);
}
END_TEST

/* 1.2 as the first phase defines it: bb(skip[k]) = k, bb(x) = bb(x - skip[k]) inside the tail. */
START_TEST(baseblock_first_phase) {
  int *bb = malloc(sizeof *bb * 4097);
  REQUIRE(bb != NULL, "out of memory");
  long hi = cdag_test_iterations(4097);
  for (int p = 2; p <= hi; p++) {
    circ_graph c = graph(p);
    bb[0] = c.q;
    for (int k = 0; k < c.q; k++) {
      bb[c.skip[k]] = k;
      for (int x = c.skip[k] + 1; x < c.skip[k + 1]; x++) bb[x] = bb[x - c.skip[k]];
    }
    for (int r = 0; r < p; r++) REQUIRE(circ_baseblock(&c, r) == bb[r], "p=%d bb(%d)", p, r);
  }
  free(bb);
}
END_TEST

/* ---- 1.9 reference tables ---------------------------------------------------------------- */

static void check_rows(int p, const int *rows, int send) {
  circ_graph c = graph(p);
  for (int r = 0; r < p; r++) {
    int X[64];
    if (send) circ_sendsched(&c, r, X);
    else circ_recvsched(&c, r, X);
    for (int k = 0; k < c.q; k++)
      REQUIRE(X[k] == rows[k * p + r], "p=%d %s%d of rank %d is %d, the table says %d", p, send ? "S" : "R", k,
                    r, X[k], rows[k * p + r]);
  }
}

START_TEST(reference_tables) {
  static const int r9[] = {-2, 0,  -4, -3, -2, -4, -1, -4, -3, /* R0 */
                           -3, -2, 1,  -4, -3, -2, -2, -1, -4, /* R1 */
                           -1, -3, -2, 2,  0,  -3, -3, -2, -1, /* R2 */
                           -4, -1, -1, -1, -1, 3,  0,  1,  2};
  static const int s9[] = {0, -4, -3, -2, -4, -1, -4, -3, -2, /* S0 */
                           1, -4, -3, -2, -2, -1, -4, -3, -2, /* S1 */
                           2, 0,  -3, -3, -2, -1, -1, -3, -2, /* S2 */
                           3, 0,  1,  2,  -4, -1, -1, -1, -1};
  static const int r17[] = {-4, 0,  -5, -4, -3, -5, -2, -5, -4, -3, -1, -5, -4, -3, -5, -2, -5,
                            -5, -4, 1,  -5, -4, -3, -3, -2, -5, -4, -3, -1, -5, -4, -3, -3, -2,
                            -2, -2, -2, 2,  0,  -4, -4, -3, -2, -2, -4, -3, -1, -1, -4, -4, -3,
                            -1, -3, -3, -2, -2, 3,  0,  1,  2,  -5, -2, -2, -2, -2, -1, -1, -1,
                            -3, -1, -1, -1, -1, -1, -1, -1, -1, 4,  0,  1,  2,  0,  3,  0,  1};
  static const int r20[] = {-5, 0,  -5, -4, -3, -5, -2, -5, -4, -3, -5, -1, -5, -4, -3, -5, -2, -5, -4, -3,
                            -3, -3, 1,  -5, -4, -3, -3, -2, -5, -4, -3, -3, -1, -5, -4, -3, -3, -2, -5, -4,
                            -4, -4, -3, 2,  0,  -4, -4, -3, -2, -2, -4, -4, -3, -1, -1, -4, -4, -3, -2, -2,
                            -2, -2, -2, -2, -2, 3,  0,  1,  2,  0,  -2, -2, -2, -2, -2, -1, -1, -1, -1, -1,
                            -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 4,  0,  1,  2,  0,  3,  0,  1,  2,  0};
  /* p = 5, from the trace of 1.8. */
  static const int r5[] = {-3, 0, -3, -2, -1, -1, -1, 1, -3, -2, -2, -2, -1, 2, 0};
  static const int s5[] = {0, -3, -2, -1, -3, 1, -3, -2, -1, -1, 2, 0, -2, -2, -1};
  check_rows(9, r9, 0);
  check_rows(9, s9, 1);
  check_rows(17, r17, 0);
  check_rows(20, r20, 0);
  check_rows(5, r5, 0);
  check_rows(5, s5, 1);
}
END_TEST

/* ---- 1.7 (a)-(c) ------------------------------------------------------------------------- */

/* (b) and (c) for rank r, given its R and S. */
static void check_rank(const circ_graph *c, int r, const int *R, const int *S) {
  int q = c->q, b = circ_baseblock(c, r);
  uint64_t seen = 0;
  for (int k = 0; k < q; k++) {
    int v = R[k] + q; /* blocks -q..-1 -> 0..q-1, the baseblock b -> q + b */
    REQUIRE(v >= 0 && v < 2 * q && !(seen >> v & 1), "p=%d r=%d R[%d]=%d repeats or is out of range", c->p, r,
                  k, R[k]);
    int w = S[k] + q; /* seen holds R[0..k) here */
    int ok = r == 0 || S[k] == b - q || (w >= 0 && w < 2 * q && (seen >> w & 1)); /* the root holds every block */
    REQUIRE(ok, "p=%d r=%d S[%d]=%d is neither b-q nor received before", c->p, r, k, S[k]);
    seen |= 1ULL << v;
  }
  uint64_t all = (1ULL << q) - 1;
  uint64_t want = r == 0 ? all : (all & ~(1ULL << b)) | (1ULL << (q + b));
  REQUIRE(seen == want, "p=%d r=%d receives the wrong set of blocks", c->p, r);
}

static void bcast_sim_table(const circ_graph *c, const int *T, int n);

/* Issue #7: 1.7 (a)-(c) for every rank and round of every p in lo..hi, and (d) by simulating
 * the broadcast of every rank and round for three block counts: 1, 2 + p mod 11 (so every
 * count 2..12 and every number of dummy rounds occurs), and 20 (several phases with capping,
 * since q <= 12). */
static void oracle(int lo, int hi) {
  for (int p = lo; p <= hi; p++) {
    circ_graph c = graph(p);
    int *T = recv_table(&c);
    for (int r = 0; r < p; r++) {
      int S[64];
      circ_sendsched(&c, r, S);
      for (int k = 0; k < c.q; k++) { /* (a) */
        int t = (r + c.skip[k]) % p;
        REQUIRE(S[k] == rq(&c, T, t, k), "p=%d S_%d[%d]=%d but R_%d[%d]=%d", p, r, k, S[k], t, k,
                      rq(&c, T, t, k));
      }
      check_rank(&c, r, T + (size_t)r * (size_t)c.q, S);
    }
    int ns[] = {1, 2 + p % 11, 20};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) bcast_sim_table(&c, T, ns[i]);
    free(T);
  }
}

/* The exhaustive range: p <= 4096 (issue #7). Sanitizer builds (-O0, several times slower)
 * stop at 2048, so that the test stays under a minute there; they are for memory errors, and
 * the default build covers the rest. Valgrind runs scale it down through CDAG_TEST_SCALE. */
#if defined(__SANITIZE_ADDRESS__)
#define ORACLE_MAXP 2048
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ORACLE_MAXP 2048
#endif
#endif
#ifndef ORACLE_MAXP
#define ORACLE_MAXP 4096
#endif

START_TEST(oracle_small_p) { oracle(1, (int)cdag_test_iterations(ORACLE_MAXP / 2)); }
END_TEST

START_TEST(oracle_large_p) {
  long hi = cdag_test_iterations(ORACLE_MAXP);
  if (hi > ORACLE_MAXP / 2) oracle(ORACLE_MAXP / 2 + 1, (int)hi);
}
END_TEST

/* ---- the walk against the greedy of 1.4 -------------------------------------------------- */

/* 1.4 by scanning windows rank by rank; bb[] holds every rank's baseblock (root: q). */
static void greedy_scan(const circ_graph *c, const int *bb, int r, int *R) {
  int p = c->p, q = c->q;
  uint64_t used = 1ULL << bb[r];
  for (int k = 0; k < q; k++) {
    uint64_t cand = 0;
    for (int y = r - c->skip[k + 1] + 1; y <= r - c->skip[k]; y++) cand |= 1ULL << bb[(y + p) % p];
    cand &= ~used;
    if (!cand) cand = (1ULL << bb[(r - c->skip[k + 1] + p) % p]) & ~used;
    REQUIRE(cand != 0, "p=%d r=%d: the greedy finds nothing in round %d", p, r, k);
    int e = 63 - __builtin_clzll(cand);
    used |= 1ULL << e;
    R[k] = e == q ? bb[r] : e - q;
  }
}

START_TEST(walk_is_greedy) {
  long hi = cdag_test_iterations(600);
  int *bb = malloc(sizeof *bb * (size_t)(hi + 1));
  REQUIRE(bb != NULL, "out of memory");
  for (int p = 1; p <= hi; p++) {
    circ_graph c = graph(p);
    for (int r = 0; r < p; r++) bb[r] = circ_baseblock(&c, r);
    for (int r = 0; r < p; r++) {
      int A[64], B[64];
      greedy_scan(&c, bb, r, A);
      circ_recvsched(&c, r, B);
      for (int k = 0; k < c.q; k++) REQUIRE(A[k] == B[k], "p=%d r=%d R[%d]: greedy %d, walk %d", p, r, k, A[k], B[k]);
    }
  }
  free(bb);
}
END_TEST

/* Largest j with skip[j] <= x (x >= 1). */
static int top_skip(const circ_graph *c, int x) {
  int j = 0;
  while (j < c->q && c->skip[j + 1] <= x) j++;
  return j;
}

/* 1.3: baseblocks of ranks a..b, 1 <= a <= b < p, as a bit set. */
static uint64_t rangeblocks(const circ_graph *c, int a, int b) {
  uint64_t out = 0;
  while (a <= b) {
    int e = top_skip(c, b);
    if (a > c->skip[e]) { /* inside the tail of skip[e], which repeats (0, ...) */
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

/* Baseblocks of positions from..from+len-1 (mod p), the root counting as q. */
static uint64_t window(const circ_graph *c, long from, long len) {
  long p = c->p;
  uint64_t out = 0;
  from = ((from % p) + p) % p;
  while (len > 0) {
    long end = from + len - 1 < p - 1 ? from + len - 1 : p - 1, a = from;
    if (a == 0) out |= 1ULL << c->q, a = 1;
    if (a <= end) out |= rangeblocks(c, (int)a, (int)end);
    len -= end - from + 1;
    from = 0;
  }
  return out;
}

/* 1.4 with rangeblocks: O(log^2 p), for large p. */
static void greedy_ranges(const circ_graph *c, int r, int *R) {
  int q = c->q, b = circ_baseblock(c, r);
  uint64_t used = 1ULL << b;
  for (int k = 0; k < q; k++) {
    long lo = c->skip[k], hi = c->skip[k + 1];
    uint64_t cand = window(c, (long)r - hi + 1, hi - lo) & ~used;
    if (!cand) cand = window(c, (long)r - hi, 1) & ~used;
    REQUIRE(cand != 0, "p=%d r=%d: the greedy finds nothing in round %d", c->p, r, k);
    int e = 63 - __builtin_clzll(cand);
    used |= 1ULL << e;
    R[k] = e == q ? b : e - q;
  }
}

START_TEST(rangeblocks_is_scan) {
  int bb[301];
  long hi = cdag_test_iterations(300);
  for (int p = 2; p <= (hi < 40 ? 40 : hi); p++) {
    circ_graph c = graph(p);
    for (int r = 0; r < p; r++) bb[r] = circ_baseblock(&c, r);
    for (int a = 1; a < p; a++) {
      uint64_t brute = 0;
      for (int b = a; b < p; b++) {
        brute |= 1ULL << bb[b];
        REQUIRE(rangeblocks(&c, a, b) == brute, "p=%d rangeblocks(%d,%d)", p, a, b);
      }
    }
  }
}
END_TEST

/* Ranks worth a look in a large graph: the ends, around every skip, and a pseudo-random few. */
static int sample_rank(const circ_graph *c, int i, uint64_t *seed) {
  int p = c->p, nfix = 3 + 3 * c->q;
  if (i < 3) return i == 0 ? 0 : i == 1 ? p / 2 : p - 1; /* (p * i / 2 gave the invalid rank p) */
  if (i < nfix) {
    int k = (i - 3) / 3;
    return (c->skip[k] + (i - 3) % 3 - 1 + p) % p;
  }
  *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((*seed >> 33) % (uint64_t)p);
}

START_TEST(walk_large_p) {
  static const int ps[] = {4097, 5001, 65535, 65536, 65537, 99991, 1000003, (1 << 24) + 1, (1 << 29) + 12345, CIRC_MAXP};
  uint64_t seed = 42;
  long per_p = cdag_test_iterations(400);
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    circ_graph c = graph(ps[i]);
    int nfix = 3 + 3 * c.q;
    for (int j = 0; j < nfix + per_p; j++) {
      int r = sample_rank(&c, j, &seed), A[64], B[64], S[64], Rt[64];
      greedy_ranges(&c, r, A);
      circ_recvsched(&c, r, B);
      for (int k = 0; k < c.q; k++)
        REQUIRE(A[k] == B[k], "p=%d r=%d R[%d]: greedy %d, walk %d", c.p, r, k, A[k], B[k]);
      circ_sendsched(&c, r, S);
      for (int k = 0; k < c.q; k++) {
        int t = (int)(((long)r + c.skip[k]) % c.p);
        circ_recvsched(&c, t, Rt);
        REQUIRE(S[k] == Rt[k], "p=%d S_%d[%d]=%d but R_%d[%d]=%d", c.p, r, k, S[k], t, k, Rt[k]);
      }
      check_rank(&c, r, B, S);
    }
  }
}
END_TEST

/* ---- 1.8 broadcast ----------------------------------------------------------------------- */

typedef struct {
  int round, from, to, block;
} msg;

/* Collects messages, and hands each complete round to `flush`. */
typedef struct sim sim;
struct sim {
  const circ_graph *c;
  int n, x;        /* blocks; dummy rounds */
  const int *T;    /* receive table */
  int *own;        /* T when sim_init made it */
  uint64_t *have;  /* bcast: blocks held; reduce: blocks already sent */
  unsigned char *got, *sent; /* bcast: per rank, within the current round (all 0 between rounds) */
  long *acc;       /* reduce: partial sums, p x n */
  msg *buf;
  int nbuf, cap, cur, rounds_seen;
  long total;
  void (*flush)(sim *s);
};

static void sim_emit(void *ctx, int round, int from, int to, int block) {
  sim *s = ctx;
  if (round != s->cur) {
    REQUIRE_INT(round, >, s->cur); /* rounds come in order */
    if (s->nbuf) s->flush(s);
    s->cur = round;
    s->rounds_seen++;
  }
  REQUIRE_INT(s->nbuf, <, s->cap); /* at most one message per sender and round */
  s->buf[s->nbuf++] = (msg){round, from, to, block};
}

/* T: the receive table of c, or NULL to make one. */
static void sim_init(sim *s, const circ_graph *c, const int *T, int n, void (*flush)(sim *)) {
  memset(s, 0, sizeof *s);
  s->c = c;
  s->n = n;
  s->x = c->q ? (c->q - (n - 1) % c->q) % c->q : 0;
  s->T = T ? T : (s->own = recv_table(c));
  s->have = calloc((size_t)c->p, sizeof *s->have);
  s->cap = c->p;
  s->buf = malloc(sizeof *s->buf * (size_t)c->p);
  s->got = calloc((size_t)c->p, 1);
  s->sent = calloc((size_t)c->p, 1);
  REQUIRE(s->got && s->sent, "out of memory");
  s->cur = -1;
  s->flush = flush;
  REQUIRE(s->have != NULL, "out of memory");
  REQUIRE(s->buf != NULL, "out of memory");
}

static void sim_free(sim *s) {
  free(s->own);
  free(s->have);
  free(s->acc);
  free(s->buf);
  free(s->got);
  free(s->sent);
}

/* Round t of the broadcast: the phase round k and the block offset of 1.8. */
static void round_of(const sim *s, int t, int *k, int *off) {
  int q = s->c->q, i = t + s->x;
  *k = i % q;
  *off = -s->x + q * (i / q);
}

static void bcast_flush(sim *s) {
  const circ_graph *c = s->c;
  int p = c->p, n = s->n, k, off, expected = 0;
  round_of(s, s->cur, &k, &off);
  unsigned char *got = s->got, *sent = s->sent;
  for (int i = 0; i < s->nbuf; i++) {
    msg m = s->buf[i];
    REQUIRE_INT(m.to, ==, (m.from + c->skip[k]) % p);
    REQUIRE(!sent[m.from]++, "p=%d n=%d round %d: rank %d sends twice", p, n, m.round, m.from);
    REQUIRE(!got[m.to]++, "p=%d n=%d round %d: rank %d receives twice", p, n, m.round, m.to);
    REQUIRE(m.to != 0, "p=%d n=%d: the root receives", p, n);
    REQUIRE(m.block >= 0 && m.block < n, "p=%d n=%d: block %d", p, n, m.block);
    REQUIRE(s->have[m.from] >> m.block & 1, "p=%d n=%d round %d: rank %d sends block %d it lacks", p, n,
                  m.round, m.from, m.block);
    REQUIRE(!(s->have[m.to] >> m.block & 1), "p=%d n=%d round %d: rank %d gets block %d again", p, n, m.round,
                  m.to, m.block);
    int rb = rq(c, s->T, m.to, k) + off; /* what the receiver's own schedule expects */
    REQUIRE(rb >= 0 && (rb < n - 1 ? rb : n - 1) == m.block, "p=%d n=%d round %d: rank %d expects %d, gets %d",
                  p, n, m.round, m.to, rb, m.block);
  }
  for (int r = 1; r < p; r++) expected += rq(c, s->T, r, k) + off >= 0;
  REQUIRE_INT(expected, ==, s->nbuf); /* every receive the schedules expect happens */
  for (int i = 0; i < s->nbuf; i++) {
    s->have[s->buf[i].to] |= 1ULL << s->buf[i].block;
    got[s->buf[i].to] = sent[s->buf[i].from] = 0;
  }
  s->total += s->nbuf;
  s->nbuf = 0;
}

static void bcast_sim_table(const circ_graph *cp, const int *T, int n) {
  circ_graph c = *cp;
  int p = c.p;
  sim s;
  sim_init(&s, &c, T, n, bcast_flush);
  uint64_t all = n == 64 ? ~0ULL : (1ULL << n) - 1;
  s.have[0] = all;
  int rounds = circ_bcast_rounds(&c, n, sim_emit, &s);
  if (s.nbuf) s.flush(&s);
  REQUIRE_INT(rounds, ==, c.q ? n - 1 + c.q : 0);
  REQUIRE_INT(s.rounds_seen, <=, rounds);
  for (int r = 0; r < p; r++) REQUIRE(s.have[r] == all, "p=%d n=%d: rank %d misses blocks", p, n, r);
  REQUIRE_INT(s.total, ==, (long)(p - 1) * n); /* each block reaches each rank once */
  sim_free(&s);
}

static void bcast_sim(int p, int n) {
  circ_graph c = graph(p);
  bcast_sim_table(&c, NULL, n);
}

typedef struct {
  msg m[64];
  int n;
} msg_list;

static void collect(void *ctx, int round, int from, int to, int block) {
  msg_list *l = ctx;
  REQUIRE_INT(l->n, <, 64);
  l->m[l->n++] = (msg){round, from, to, block};
}

/* The worked trace of 1.8: p = 5, n = 3, one dummy round. */
START_TEST(bcast_trace_p5) {
  static const msg want[] = {{0, 0, 2, 0}, {1, 0, 3, 1}, {2, 0, 1, 2}, {2, 2, 3, 0}, {2, 3, 4, 1},
                             {3, 0, 2, 2}, {3, 2, 4, 0}, {3, 4, 1, 1}, {4, 0, 3, 2}, {4, 1, 4, 2},
                             {4, 3, 1, 0}, {4, 4, 2, 1}};
  int nwant = (int)(sizeof want / sizeof want[0]);
  circ_graph c = graph(5);
  msg_list got = {.n = 0};
  REQUIRE_INT(circ_bcast_rounds(&c, 3, collect, &got), ==, 5);
  REQUIRE_INT(got.n, ==, nwant);
  for (int i = 0; i < nwant; i++)
    REQUIRE(got.m[i].round == want[i].round && got.m[i].from == want[i].from && got.m[i].to == want[i].to &&
                      got.m[i].block == want[i].block,
                  "message %d: round %d %d->%d block %d, the trace says round %d %d->%d block %d", i, got.m[i].round,
                  got.m[i].from, got.m[i].to, got.m[i].block, want[i].round, want[i].from, want[i].to, want[i].block);
}
END_TEST

START_TEST(bcast_all_small_p) {
  static const int ns[] = {1, 2, 3, 5, 8, 11};
  long hi = cdag_test_iterations(300);
  for (int p = 1; p <= hi; p++)
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) bcast_sim(p, ns[i]);
}
END_TEST

START_TEST(bcast_large_p) {
  static const int ps[] = {1000, 1023, 1024, 1025, 4097};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) bcast_sim(ps[i], 4);
  bcast_sim(33, 9); /* where a flawed port of 1.6 sends a block it lacks */
  bcast_sim(2, 64);
}
END_TEST

START_TEST(bcast_bad_n) {
  circ_graph c = graph(8);
  REQUIRE_INT(circ_bcast_rounds(&c, 0, sim_emit, NULL), ==, -1);
  REQUIRE_INT(circ_reduce_rounds(&c, -1, sim_emit, NULL), ==, -1);
}
END_TEST

/* ---- 1.10 allgather ---------------------------------------------------------------------- */

typedef struct {
  const circ_graph *c;
  int *slot; /* p x p: slot j of rank v holds the block of rank (v + j) mod p, or -1 */
  int cur;
  long received;
} ag;

static void ag_emit(void *ctx, int round, int from, int to, int first, int count) {
  ag *a = ctx;
  const circ_graph *c = a->c;
  int p = c->p;
  REQUIRE_INT(round, >=, a->cur);
  a->cur = round;
  REQUIRE_INT(round, <, c->q);
  REQUIRE_INT(to, ==, (from - c->skip[round] + p) % p);
  REQUIRE_INT(count, >=, 1);
  REQUIRE_INT(first + count, <=, p);
  /* The sender's slots [0, count) are older than this round; the receiver's target slots
   * start at skip[round] >= count, so reading and writing in rank order is safe. */
  for (int j = 0; j < count; j++) {
    int v = a->slot[(size_t)from * (size_t)p + (size_t)j];
    REQUIRE(v >= 0, "p=%d round %d: rank %d sends slot %d it lacks", p, round, from, j);
    int *dst = &a->slot[(size_t)to * (size_t)p + (size_t)(first + j)];
    REQUIRE(*dst < 0, "p=%d round %d: rank %d gets slot %d twice", p, round, to, first + j);
    REQUIRE_INT(v, ==, (to + first + j) % p); /* lands where its owner belongs */
    *dst = v;
  }
  a->received += count;
}

START_TEST(allgather_all_small_p) {
  long hi = cdag_test_iterations(300);
  for (int p = 1; p <= hi; p++) {
    circ_graph c = graph(p);
    ag a = {&c, malloc(sizeof(int) * (size_t)p * (size_t)p), 0, 0};
    REQUIRE(a.slot != NULL, "out of memory");
    for (size_t i = 0; i < (size_t)p * (size_t)p; i++) a.slot[i] = -1;
    for (int r = 0; r < p; r++) a.slot[(size_t)r * (size_t)p] = r;
    REQUIRE_INT(circ_allgather_rounds(&c, ag_emit, &a), ==, c.q);
    for (int r = 0; r < p; r++)
      for (int j = 0; j < p; j++) REQUIRE_INT(a.slot[(size_t)r * (size_t)p + (size_t)j], ==, (r + j) % p);
    REQUIRE_INT(a.received, ==, (long)p * (p - 1));
    free(a.slot);
  }
}
END_TEST

/* ---- 1.11 reduction ---------------------------------------------------------------------- */

static long value(int r, int j) { return 1000L * r + 7L * j + 1; }

static void reduce_flush(sim *s) {
  const circ_graph *c = s->c;
  int p = c->p, n = s->n;
  for (int i = 0; i < s->nbuf; i++) { /* a rank sends each block once, to its tree parent */
    msg m = s->buf[i];
    REQUIRE(m.from != 0, "p=%d n=%d: the root sends", p, n);
    REQUIRE(m.block >= 0 && m.block < n, "p=%d n=%d: block %d", p, n, m.block);
    REQUIRE(!(s->have[m.from] >> m.block & 1), "p=%d n=%d: rank %d sends block %d twice", p, n, m.from,
                  m.block);
    s->have[m.from] |= 1ULL << m.block;
  }
  for (int i = 0; i < s->nbuf; i++) { /* ... and only once every contribution is in */
    msg m = s->buf[i];
    REQUIRE(!(s->have[m.to] >> m.block & 1), "p=%d n=%d round %d: rank %d gets block %d after sending it", p,
                  n, m.round, m.to, m.block);
    s->acc[(size_t)m.to * (size_t)n + (size_t)m.block] += s->acc[(size_t)m.from * (size_t)n + (size_t)m.block];
  }
  s->total += s->nbuf;
  s->nbuf = 0;
}

START_TEST(reduce_small_p) {
  for (int p = 1; p < 80; p++)
    for (int n = 1; n < 10; n++) {
      circ_graph c = graph(p);
      sim s;
      sim_init(&s, &c, NULL, n, reduce_flush);
      s.acc = malloc(sizeof *s.acc * (size_t)p * (size_t)n);
      REQUIRE(s.acc != NULL, "out of memory");
      for (int r = 0; r < p; r++)
        for (int j = 0; j < n; j++) s.acc[(size_t)r * (size_t)n + (size_t)j] = value(r, j);
      int rounds = circ_reduce_rounds(&c, n, sim_emit, &s);
      if (s.nbuf) s.flush(&s);
      REQUIRE_INT(rounds, ==, c.q ? n - 1 + c.q : 0);
      for (int j = 0; j < n; j++) {
        long want = 0;
        for (int r = 0; r < p; r++) want += value(r, j);
        REQUIRE(s.acc[j] == want, "p=%d n=%d: block %d sums to %ld, not %ld", p, n, j, s.acc[j], want);
      }
      REQUIRE_INT(s.total, ==, (long)(p - 1) * n);
      sim_free(&s);
    }
}
END_TEST

/* ---- block count ------------------------------------------------------------------------- */

START_TEST(blocks_for) {
  REQUIRE_INT(circ_blocks_for(1e-6, 1e-9, 1000000, 1), ==, 1);
  REQUIRE_INT(circ_blocks_for(1e-6, 1e-9, 1000000, 0), ==, 1);
  REQUIRE_INT(circ_blocks_for(1e-6, 1e-9, 0, 10), ==, 1);
  REQUIRE_INT(circ_blocks_for(1e-6, 1e-9, 1000000, 5), ==, 63);  /* sqrt(4000) = 63.2 */
  REQUIRE_INT(circ_blocks_for(1e-6, 1e-9, 1000000, 17), ==, 126); /* sqrt(16000) = 126.5 */
  REQUIRE_INT(circ_blocks_for(1e-6, 1e-9, 100, 5), ==, 1);        /* sqrt(0.4) rounds to 0 */
  REQUIRE_INT(circ_blocks_for(1e-9, 1e-9, 10, 30), ==, 10);       /* sqrt(290) capped at bytes */
  REQUIRE_INT(circ_blocks_for(0, 1e-9, 12345, 8), ==, 12345);     /* no latency */
  REQUIRE_INT(circ_blocks_for(1e-6, 0, 12345, 8), ==, 1);         /* no bandwidth cost */
  REQUIRE_INT(circ_blocks_for(1e-30, 1, UINT64_MAX, 30), ==, INT_MAX);
}
END_TEST

Suite *cdag_circulant_suite(void) {
  Suite *s = suite_create("circulant");
  TCase *t = tcase_create("schedules");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, skip_examples);
  tcase_add_test(t, skip_properties);
  tcase_add_test(t, baseblock_examples);
  tcase_add_test(t, baseblock_first_phase);
  tcase_add_test(t, reference_tables);
  tcase_add_test(t, oracle_small_p);
  tcase_add_test(t, oracle_large_p);
  tcase_add_test(t, walk_is_greedy);
  tcase_add_test(t, rangeblocks_is_scan);
  tcase_add_test(t, walk_large_p);
  suite_add_tcase(s, t);
  TCase *u = tcase_create("collectives");
  tcase_set_timeout(u, 600);
  tcase_add_test(u, bcast_trace_p5);
  tcase_add_test(u, bcast_all_small_p);
  tcase_add_test(u, bcast_large_p);
  tcase_add_test(u, bcast_bad_n);
  tcase_add_test(u, allgather_all_small_p);
  tcase_add_test(u, reduce_small_p);
  tcase_add_test(u, blocks_for);
  suite_add_tcase(s, u);
  return s;
}

CDAG_CHECK_MAIN(cdag_circulant_suite)

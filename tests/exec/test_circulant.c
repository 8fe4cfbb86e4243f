/* cdag tests — tests/exec/test_circulant.c: round-optimal broadcast schedules.
 *
 * The reference tables of SEEDS-NOTES 1.9 (p = 9, 17, 20) and the trace of 1.8 (p = 5);
 * the oracle of 1.7 (a)-(c) for every p up to 400; and (d): the simulated n-block
 * broadcast delivers every block to every rank in n-1+q rounds, each rank sending only
 * blocks it holds and each receive matching what its neighbour sends. */
#include "check_main.h"
#include "exec/circulant.h"

static void check_rows(int p, const int *rows, int nrows, int send) {
  circ_graph c;
  ck_assert_int_eq(circ_init(&c, p), 0);
  ck_assert_int_eq(c.q, nrows);
  for (int r = 0; r < p; r++) {
    int X[CIRC_MAXQ];
    if (send) circ_sendsched(&c, r, X);
    else circ_recvsched(&c, r, X);
    for (int k = 0; k < c.q; k++)
      ck_assert_msg(X[k] == rows[k * p + r], "p=%d %s[%d] of rank %d is %d, table says %d", p, send ? "S" : "R", k, r,
                    X[k], rows[k * p + r]);
  }
}

START_TEST(skips_and_baseblocks) {
  circ_graph c;
  circ_init(&c, 9);
  int s9[] = {1, 2, 3, 5, 9};
  for (int k = 0; k <= 4; k++) ck_assert_int_eq(c.skip[k], s9[k]);
  circ_init(&c, 20);
  int s20[] = {1, 2, 3, 5, 10, 20};
  for (int k = 0; k <= 5; k++) ck_assert_int_eq(c.skip[k], s20[k]);
  circ_init(&c, 9);
  int bb[] = {4, 0, 1, 2, 0, 3, 0, 1, 2};
  for (int r = 0; r < 9; r++) ck_assert_int_eq(circ_baseblock(&c, r), bb[r]);
  ck_assert_int_eq(circ_init(&c, 0), -1);
  ck_assert_int_eq(circ_init(&c, 1), 0);
  ck_assert_int_eq(c.q, 0);
}
END_TEST

START_TEST(tables) {
  static const int r9[] = {-2, 0, -4, -3, -2, -4, -1, -4, -3, -3, -2, 1, -4, -3, -2, -2, -1, -4,
                           -1, -3, -2, 2, 0, -3, -3, -2, -1, -4, -1, -1, -1, -1, 3, 0, 1, 2};
  static const int s9[] = {0, -4, -3, -2, -4, -1, -4, -3, -2, 1, -4, -3, -2, -2, -1, -4, -3, -2,
                           2, 0, -3, -3, -2, -1, -1, -3, -2, 3, 0, 1, 2, -4, -1, -1, -1, -1};
  check_rows(9, r9, 4, 0);
  check_rows(9, s9, 4, 1);
  static const int r17[] = {
      -4, 0, -5, -4, -3, -5, -2, -5, -4, -3, -1, -5, -4, -3, -5, -2, -5,
      -5, -4, 1, -5, -4, -3, -3, -2, -5, -4, -3, -1, -5, -4, -3, -3, -2,
      -2, -2, -2, 2, 0, -4, -4, -3, -2, -2, -4, -3, -1, -1, -4, -4, -3,
      -1, -3, -3, -2, -2, 3, 0, 1, 2, -5, -2, -2, -2, -2, -1, -1, -1,
      -3, -1, -1, -1, -1, -1, -1, -1, -1, 4, 0, 1, 2, 0, 3, 0, 1};
  check_rows(17, r17, 5, 0);
  static const int r20[] = {
      -5, 0, -5, -4, -3, -5, -2, -5, -4, -3, -5, -1, -5, -4, -3, -5, -2, -5, -4, -3,
      -3, -3, 1, -5, -4, -3, -3, -2, -5, -4, -3, -3, -1, -5, -4, -3, -3, -2, -5, -4,
      -4, -4, -3, 2, 0, -4, -4, -3, -2, -2, -4, -4, -3, -1, -1, -4, -4, -3, -2, -2,
      -2, -2, -2, -2, -2, 3, 0, 1, 2, 0, -2, -2, -2, -2, -2, -1, -1, -1, -1, -1,
      -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 4, 0, 1, 2, 0, 3, 0, 1, 2, 0};
  check_rows(20, r20, 5, 0);
  static const int r5[] = {-3, 0, -3, -2, -1, -1, -1, 1, -3, -2, -2, -2, -1, 2, 0};
  static const int s5[] = {0, -3, -2, -1, -3, 1, -3, -2, -1, -1, 2, 0, -2, -2, -1};
  check_rows(5, r5, 3, 0);
  check_rows(5, s5, 3, 1);
}
END_TEST

/* 1.7 (a)-(c) for one p. */
static void oracle(int p) {
  circ_graph c;
  circ_init(&c, p);
  int q = c.q;
  for (int r = 0; r < p; r++) {
    int R[CIRC_MAXQ], S[CIRC_MAXQ], Rn[CIRC_MAXQ], b = circ_baseblock(&c, r);
    circ_recvsched(&c, r, R);
    circ_sendsched(&c, r, S);
    uint64_t seen = 0;
    for (int k = 0; k < q; k++) {
      circ_recvsched(&c, (r + c.skip[k]) % p, Rn);
      ck_assert_int_eq(S[k], Rn[k]);                                  /* (a) */
      int v = R[k] + q;                                                /* (b): distinct, the right set */
      ck_assert_msg(v >= 0 && v < 2 * q && !(seen >> v & 1), "p=%d r=%d R[%d]=%d", p, r, k, R[k]);
      seen |= 1ULL << v;
      int ok = r == 0 || S[k] == b - q;                 /* (c); the root holds every block */
      for (int j = 0; j < k && !ok; j++) ok = S[k] == R[j];
      ck_assert_msg(ok, "p=%d r=%d S[%d]=%d is neither b-q nor received before", p, r, k, S[k]);
    }
    uint64_t want = r == 0 ? (1ULL << q) - 1 : (((1ULL << q) - 1) & ~(1ULL << b)) | (1ULL << (b + q));
    ck_assert_msg(seen == want, "p=%d r=%d receives the wrong set of blocks", p, r);
  }
}

START_TEST(oracle_all_p) {
  long hi = cdag_test_iterations(400);
  for (int p = 1; p <= hi; p++) oracle(p);
}
END_TEST

/* 1.8: simulate the n-block broadcast from rank 0. */
static void simulate(int p, int n) {
  circ_graph c;
  circ_init(&c, p);
  int q = c.q, x = q ? (q - (n - 1) % q) % q : 0, off = -x;
  int (*R)[CIRC_MAXQ] = malloc(sizeof *R * (size_t)p), (*S)[CIRC_MAXQ] = malloc(sizeof *S * (size_t)p);
  uint64_t *have = calloc((size_t)p, sizeof *have), *next = calloc((size_t)p, sizeof *next);
  int *sent = malloc(sizeof *sent * (size_t)p);
  for (int r = 0; r < p; r++) circ_recvsched(&c, r, R[r]), circ_sendsched(&c, r, S[r]);
  have[0] = n == 64 ? ~0ULL : (1ULL << n) - 1;
  int rounds = 0;
  for (int i = x; q > 0 && i <= n - 2 + q + x; i++) {
    int k = i % q;
    rounds++;
    for (int r = 0; r < p; r++) {
      int sb = S[r][k] + off, to = (r + c.skip[k]) % p;
      sent[r] = sb >= 0 && to != 0 ? (sb < n - 1 ? sb : n - 1) : -1;
      if (sent[r] >= 0) ck_assert_msg(have[r] >> sent[r] & 1, "p=%d n=%d rank %d sends block %d it lacks", p, n, r, sent[r]);
    }
    for (int r = 0; r < p; r++) {
      next[r] = have[r];
      int rb = R[r][k] + off, from = (r - c.skip[k] + p) % p;
      if (rb < 0 || r == 0) continue;
      rb = rb < n - 1 ? rb : n - 1;
      ck_assert_msg(sent[from] == rb, "p=%d n=%d rank %d expects %d from %d, which sends %d", p, n, r, rb, from, sent[from]);
      next[r] |= 1ULL << rb;
    }
    for (int r = 0; r < p; r++) have[r] = next[r];
    if (k == q - 1) off += q;
  }
  for (int r = 0; r < p; r++) ck_assert_msg(have[r] == have[0], "p=%d n=%d rank %d misses blocks", p, n, r);
  ck_assert_int_eq(rounds, q ? n - 1 + q : 0);
  free(R); free(S); free(have); free(next); free(sent);
}

START_TEST(broadcast_simulation) {
  int ns[] = {1, 2, 3, 5, 8, 11};
  long hi = cdag_test_iterations(100);
  for (int p = 1; p <= hi; p++)
    for (int i = 0; i < 6; i++) simulate(p, ns[i]);
  simulate(1000, 4);
  simulate(1024, 4);
  simulate(1025, 4);
}
END_TEST

Suite *cdag_circulant_suite(void) {
  Suite *s = suite_create("circulant");
  TCase *t = tcase_create("schedules");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, skips_and_baseblocks);
  tcase_add_test(t, tables);
  tcase_add_test(t, oracle_all_p);
  tcase_add_test(t, broadcast_simulation);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_circulant_suite)

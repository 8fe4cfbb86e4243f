/* cdag tests — tests/detect/test_replicate.c: the replication pass (src/detect/replicate.c).
 *
 * A reduced value that several, but not all, contributors keep (the rest let their copy land
 * in scratch, or overwrite it) must become a reduce rooted at the first keeper that
 * contributes plus a bcast from it to the keepers, the bcast marked as reading the reduce's
 * result; one that every contributor and some other ranks keep, an allreduce plus a bcast
 * after it to those ranks. Hand-written cases check the plan's collectives, the strided descriptor and the
 * notes; every plan is verified in the simulator (cdag_plan_verify) and, lowered to
 * messages, verified again. A randomized differential test draws contributors, keepers,
 * algorithms and ways of not keeping, and checks the plan against an oracle computed here
 * from the sets alone. */
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "support/graphs.h"
#include "detect/detect.h"
#include "model/lower.h"
#include "choose/choose.h"
#include "exec/sim/sim.h"
#include "support/support.h"

enum { DATA = 0x1000, OUT = 0x2000, OTHER = 0x3000, TMP = 0x8000 };

/* How the ranks that do not keep the value lose it. */
enum { LOSE_SCRATCH, LOSE_OVERWRITE };

typedef struct {
  int p;                  /* ranks */
  int m;  int c[64];      /* contributors, sorted */
  uint8_t keep[64];       /* per rank: its OUT is final */
  int alg;                /* 0: linear through c[root]; 1: recursive doubling (m a power of two) */
  int root;               /* alg 0: index into c */
  int lose;               /* LOSE_* */
  uint64_t base;          /* buffer offset: a second value uses other buffers */
  int tag;
} dot;

static void msg(cdag_graph *g, int from, uint64_t sa, int to, uint64_t ra, uint64_t len, int tag) {
  CK_OK(cdag_rank_send(g, from, sa, len, to, tag, NULL));
  CK_OK(cdag_rank_recv(g, to, ra, len, from, tag, NULL));
}

static int contributes(const dot *d, int r) {
  for (int i = 0; i < d->m; i++)
    if (d->c[i] == r) return 1;
  return 0;
}

/* A dot product's allreduce (int32 sum of 2 elements) over d->c; then every keeper that does
   not contribute gets the value from c[0]; ranks that do not keep it lose it. */
static void gen_dot(cdag_graph *g, const dot *d) {
  uint64_t len = 8, data = DATA + d->base, out = OUT + d->base, tmp = TMP + d->base;
  for (int i = 0; i < d->m; i++) {
    CK_OK(cdag_rank_scratch(g, d->c[i], tmp, 8 * len));
    CK_OK(cdag_rank_copy_local(g, d->c[i], data, out, len, NULL));
  }
  if (d->alg == 0) {
    int r = d->c[d->root];
    for (int i = 0; i < d->m; i++)
      if (i != d->root) {
        msg(g, d->c[i], data, r, tmp + len * (uint64_t)(i % 8), len, d->tag);
        CK_OK(cdag_rank_reduce_local(g, r, tmp + len * (uint64_t)(i % 8), out, 2, CDAG_INT32, CDAG_SUM, NULL));
      }
    for (int i = 0; i < d->m; i++)
      if (i != d->root) msg(g, r, out, d->c[i], out, len, d->tag + 1);
  } else {
    for (int k = 1, t = d->tag; k < d->m; k <<= 1, t++) {
      for (int i = 0; i < d->m; i++) msg(g, d->c[i], out, d->c[i ^ k], tmp, len, t);
      for (int i = 0; i < d->m; i++) CK_OK(cdag_rank_reduce_local(g, d->c[i], tmp, out, 2, CDAG_INT32, CDAG_SUM, NULL));
    }
  }
  for (int r = 0; r < d->p; r++)
    if (d->keep[r] && !contributes(d, r)) msg(g, d->c[0], out, r, out, len, d->tag + 7);
  for (int r = 0; r < d->p; r++) {
    if (d->keep[r] || !contributes(d, r)) continue;
    if (d->lose == LOSE_SCRATCH) CK_OK(cdag_rank_scratch(g, r, out, len));
    else CK_OK(cdag_rank_copy_local(g, r, OTHER + d->base, out, len, NULL));   /* overwritten */
  }
}

/* Analyse, verify in the simulator, lower to messages and verify that too. */
static cdag_plan *analyse(cdag_graph *g, const cdag_options *o) {
  cdag_plan *p = NULL, *chosen = NULL;
  ck_assert_msg(cdag_analyze(g, o, &p) == CDAG_OK, "analyze: %s", cdag_error_message());
  ck_assert_msg(cdag_plan_verify(g, p) == CDAG_OK, "verify: %s", cdag_error_message());
  ck_assert_msg(cdag_analyze(g, o, &chosen) == CDAG_OK, "analyze: %s", cdag_error_message());
  kern_model m = kern_model_default();
  cdag_graph *low = NULL;
  CK_OK(kern_choose_plan(chosen, &m, KERN_POLICY_AUTO));
  ck_assert_msg(exec_lower_plan(chosen, NULL, &m, KERN_POLICY_AUTO, &low) == CDAG_OK, "lower: %s", cdag_error_message());
  ck_assert_msg(exec_verify(low, chosen, 77, 1) == CDAG_OK, "lowered plan: %s", cdag_error_message());
  cdag_graph_free(&low);
  cdag_plan_free(&chosen);
  return p;
}

static dot all_contribute(int p, int stride, int first) {
  dot d = {.p = p, .m = p, .alg = 1, .lose = LOSE_SCRATCH, .tag = 10};
  for (int r = 0; r < p; r++) d.c[r] = r, d.keep[r] = r >= first && (r - first) % stride == 0;
  return d;
}

/* Members of collective c equal the ranks with keep set. */
static void expect_members(const cdag_plan *p, const det_coll *c, const uint8_t *keep) {
  int32_t n = 0;
  for (int r = 0; r < p->nprocs; r++)
    if (keep[r]) {
      ck_assert_int_lt(n, c->nranks);
      ck_assert_int_eq(p->ranks[c->ranks_first + n], r);
      n++;
    }
  ck_assert_int_eq(n, c->nranks);
}

/* The plan is exactly: reduce over all ranks rooted at root, bcast over the keepers after it. */
static void expect_replication(const cdag_plan *p, const dot *d, int root, int64_t residual_xfers) {
  if (p->ncolls != 2) cdag_plan_report(p, stderr, 0);
  ck_assert_int_eq(p->ncolls, 2);
  const det_coll *r = &p->colls[0], *b = &p->colls[1];
  ck_assert_int_eq(r->kind, DET_REDUCE);
  ck_assert_int_eq(r->root, root);
  ck_assert_int_eq(r->nranks, d->m);
  ck_assert_int_eq(r->after, 0);
  ck_assert_int_eq(b->kind, DET_BCAST);
  ck_assert_int_eq(b->root, root);
  ck_assert_int_eq(b->after, 1);
  expect_members(p, b, d->keep);
  ck_assert_int_eq(p->nreds, 0);
  ck_assert_int_eq(p->nxfers, residual_xfers);
}

/* colls[1] is a bcast after the allreduce colls[0], from its smallest member to the keepers
   outside it. */
static void expect_after_allreduce(const cdag_plan *p, const dot *d) {
  const det_coll *b = &p->colls[1];
  ck_assert_int_eq(b->kind, DET_BCAST);
  ck_assert_int_eq(b->after, 1);
  ck_assert_int_eq(b->root, d->c[0]);
  uint8_t want[64];
  for (int r = 0; r < d->p; r++) want[r] = (d->keep[r] && !contributes(d, r)) || r == d->c[0];
  expect_members(p, b, want);
}

START_TEST(strided_keepers) {
  dot d = all_contribute(8, 2, 0);   /* ranks 0, 2, 4, 6 keep the value */
  cdag_graph *g = cdag_test_graph(8);
  gen_dot(g, &d);
  cdag_plan *p = analyse(g, NULL);
  expect_replication(p, &d, 0, 0);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  d = all_contribute(16, 4, 3);      /* 3, 7, 11, 15: the root is the first keeper */
  g = cdag_test_graph(16);
  gen_dot(g, &d);
  p = analyse(g, NULL);
  expect_replication(p, &d, 3, 0);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(overwritten_copies) {
  dot d = all_contribute(8, 3, 1);   /* 1, 4, 7 keep it; the others overwrite theirs */
  d.lose = LOSE_OVERWRITE;
  d.alg = 0;
  d.root = 5;                        /* reduced at a rank that does not keep it */
  cdag_graph *g = cdag_test_graph(8);
  gen_dot(g, &d);
  cdag_plan *p = analyse(g, NULL);
  expect_replication(p, &d, 1, 5);   /* the five overwrites are local copies */
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* Keepers that contribute nothing receive the value too. */
START_TEST(keepers_outside) {
  dot d = {.p = 8, .m = 5, .c = {0, 1, 2, 3, 4}, .alg = 0, .root = 2, .lose = LOSE_SCRATCH, .tag = 10};
  d.keep[1] = d.keep[6] = d.keep[7] = 1;
  cdag_graph *g = cdag_test_graph(8);
  gen_dot(g, &d);
  cdag_plan *p = analyse(g, NULL);
  expect_replication(p, &d, 1, 0);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* Every contributor keeps the value and two ranks outside them too: allreduce, then a bcast. */
START_TEST(allreduce_and_outside) {
  dot d = {.p = 8, .m = 4, .c = {2, 3, 4, 5}, .alg = 1, .lose = LOSE_SCRATCH, .tag = 10};
  d.keep[2] = d.keep[3] = d.keep[4] = d.keep[5] = d.keep[0] = d.keep[7] = 1;
  cdag_graph *g = cdag_test_graph(8);
  gen_dot(g, &d);
  cdag_plan *p = analyse(g, NULL);
  ck_assert_int_eq(p->ncolls, 2);
  ck_assert_int_eq(p->colls[0].kind, DET_ALLREDUCE);
  expect_after_allreduce(p, &d);
  ck_assert_int_eq(p->nreds, 0);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* Two dot products with the same keepers: one reduce and one bcast, two blocks each. */
START_TEST(two_values_merge) {
  dot d = all_contribute(8, 4, 0), e = d;
  e.base = 0x100;
  e.tag = 30;
  cdag_graph *g = cdag_test_graph(8);
  gen_dot(g, &d);
  gen_dot(g, &e);
  cdag_plan *p = analyse(g, NULL);
  expect_replication(p, &d, 0, 0);
  ck_assert_int_eq(p->colls[0].ntransfers, 2);
  ck_assert_int_eq(p->colls[1].ntransfers, 2);
  ck_assert_uint_eq(p->colls[1].bytes, 16);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* Where the pass does not apply: every contributor keeps it (allreduce), one does
   (reduce), only non-contributors do (noted, residual), exact_float on doubles. */
START_TEST(not_replicated) {
  dot d = all_contribute(8, 1, 0);
  cdag_graph *g = cdag_test_graph(8);
  gen_dot(g, &d);
  cdag_plan *p = analyse(g, NULL);
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert_int_eq(p->colls[0].kind, DET_ALLREDUCE);
  cdag_plan_free(&p);
  cdag_graph_free(&g);

  d = all_contribute(8, 8, 5);
  g = cdag_test_graph(8);
  gen_dot(g, &d);
  p = analyse(g, NULL);
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert_int_eq(p->colls[0].kind, DET_REDUCE);
  ck_assert_int_eq(p->colls[0].root, 5);
  cdag_plan_free(&p);
  cdag_graph_free(&g);

  d = (dot){.p = 8, .m = 4, .c = {0, 1, 2, 3}, .alg = 1, .lose = LOSE_SCRATCH, .tag = 10};
  d.keep[5] = d.keep[6] = 1;
  g = cdag_test_graph(8);
  gen_dot(g, &d);
  p = analyse(g, NULL);
  ck_assert_int_eq(p->ncolls, 0);
  ck_assert_int_eq(p->nreds, 2);
  ck_assert_msg(cdag_test_noted(p, "ranks that do not contribute keep"), "no note on keepers outside the contributors");
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(exact_float_keeps_order) {
  cdag_graph *g = cdag_test_graph(8);
  for (int r = 0; r < 8; r++) {   /* a double dot product kept by even ranks */
    CK_OK(cdag_rank_scratch(g, r, TMP, 8));
    if (r % 2) CK_OK(cdag_rank_scratch(g, r, OUT, 8));
    CK_OK(cdag_rank_copy_local(g, r, DATA, OUT, 8, NULL));
  }
  for (int k = 1, t = 0; k < 8; k <<= 1, t++) {
    for (int r = 0; r < 8; r++) msg(g, r, OUT, r ^ k, TMP, 8, t);
    for (int r = 0; r < 8; r++) CK_OK(cdag_rank_reduce_local(g, r, TMP, OUT, 1, CDAG_DOUBLE, CDAG_SUM, NULL));
  }
  cdag_options o;
  cdag_options_init(&o);
  o.exact_float = 1;
  cdag_plan *p = analyse(g, &o);
  ck_assert_int_eq(p->ncolls, 0);
  cdag_plan_free(&p);
  p = analyse(g, NULL);
  ck_assert_int_eq(p->ncolls, 2);
  ck_assert_int_eq(p->colls[1].after, 1);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(strided_ranges) {
  det_stride v[16];
  int32_t col[] = {3, 7, 11, 15};
  ck_assert_int_eq(det_strided_ranges(col, 4, v, 16), 1);
  ck_assert_int_eq(v[0].first, 3);
  ck_assert_int_eq(v[0].count, 4);
  ck_assert_int_eq(v[0].stride, 4);
  int32_t blocks[] = {0, 1, 2, 3, 8, 9, 10, 11, 20};   /* two rows and one rank */
  ck_assert_int_eq(det_strided_ranges(blocks, 9, v, 16), 3);
  ck_assert_int_eq(v[1].first, 8);
  ck_assert_int_eq(v[1].count, 4);
  ck_assert_int_eq(v[2].first, 20);
  ck_assert_int_eq(v[2].count, 1);
  int32_t two[] = {2, 9};
  ck_assert_int_eq(det_strided_ranges(two, 2, v, 16), 1);
  ck_assert_int_eq(v[0].stride, 7);
  int32_t scattered[] = {0, 1, 3, 7, 12, 13};      /* no progression of three */
  ck_assert_int_eq(det_strided_ranges(scattered, 6, v, 16), 0);
  int32_t skip[] = {0, 2, 3, 4, 5};                /* 0 alone, then 2..5 */
  ck_assert_int_eq(det_strided_ranges(skip, 5, v, 16), 0);   /* 2 ranges > 5/3 */
  ck_assert_int_eq(det_strided_ranges(skip, 5, v, 1), 0);
}
END_TEST

/* The report's descriptor and the replication's sentence. */
START_TEST(report_descriptor) {
  dot d = all_contribute(16, 4, 0);
  cdag_graph *g = cdag_test_graph(16);
  gen_dot(g, &d);
  cdag_plan *p = analyse(g, NULL);
  char *text = NULL, *json = NULL;
  size_t nt = 0, nj = 0;
  FILE *f = open_memstream(&text, &nt);
  CK_OK(cdag_plan_report(p, f, 0));
  fclose(f);
  f = open_memstream(&json, &nj);
  CK_OK(cdag_plan_report(p, f, 1));
  fclose(f);
  ck_assert_msg(strstr(text, "replication: rank 0's block on 4 ranks in 1 strided range: 0 to 12 step 4"), "%s", text);
  ck_assert_msg(strstr(text, "replicates the int32 sum of the reduce rooted at 0 over all 16 ranks"), "%s", text);
  ck_assert_msg(strstr(json, "\"after\": 0, \"replication\": {\"root\": 0, \"ranges\": [{\"first\": 0, \"count\": 4, "
                             "\"stride\": 4}]}"), "%s", json);
  free(text);
  free(json);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* ---- randomized: contributors, keepers, algorithm and ways of losing drawn at random ---- */

static uint64_t rnd(uint64_t *s, uint64_t n) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s % n;
}

/* What the plan must be, from the sets alone. */
static void check_random(const cdag_plan *p, const dot *d, uint64_t seed) {
  int nk = 0, nkc = 0, root = -1;
  for (int r = 0; r < d->p; r++)
    if (d->keep[r]) {
      nk++;
      if (contributes(d, r)) {
        nkc++;
        if (root < 0) root = r;
      }
    }
  int64_t overwrites = d->lose == LOSE_OVERWRITE ? d->m - nkc : 0;
  char what[64];
  snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
  if (nkc == d->m) {   /* every contributor keeps it: allreduce, then a bcast to the outsiders */
    ck_assert_msg(p->ncolls == 1 + (nk > nkc) && p->colls[0].kind == DET_ALLREDUCE, "%s: allreduce expected", what);
    if (nk > nkc) expect_after_allreduce(p, d);
    ck_assert_int_eq(p->nreds, 0);
  } else if (nk == 1 && nkc == 1) {
    ck_assert_msg(p->ncolls == 1 && p->colls[0].kind == DET_REDUCE && p->colls[0].root == root, "%s: reduce", what);
  } else if (nk >= 2 && nkc >= 1) {
    expect_replication(p, d, root, overwrites);
  } else {             /* nobody, or only outsiders, keep it */
    ck_assert_msg(p->ncolls == 0, "%s: no collective expected", what);
    ck_assert_int_eq(p->nreds, nk);
  }
  if (nkc < d->m) ck_assert_int_eq(p->nxfers, overwrites);
}

static void random_dot(uint64_t seed) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
  dot d = {.p = 4 + (int)rnd(&s, 13), .alg = (int)rnd(&s, 2), .lose = (int)rnd(&s, 2), .tag = 10};
  int m = d.alg ? 4 << rnd(&s, 2) : 4 + (int)rnd(&s, (uint64_t)d.p - 3);
  if (m > d.p) m = 4;
  uint8_t in[64] = {0};
  for (int k = 0; k < m;) {   /* m distinct contributors */
    int r = (int)rnd(&s, (uint64_t)d.p);
    if (!in[r]) in[r] = 1, k++;
  }
  for (int r = 0; r < d.p; r++)
    if (in[r]) d.c[d.m++] = r;
  d.root = (int)rnd(&s, (uint64_t)d.m);
  int stride = 1 + (int)rnd(&s, 4), first = (int)rnd(&s, 4);   /* strided keepers or random ones */
  for (int r = 0; r < d.p; r++)
    d.keep[r] = rnd(&s, 2) ? r >= first && (r - first) % stride == 0 : rnd(&s, 3) == 0;
  cdag_graph *g = cdag_test_graph(d.p);
  gen_dot(g, &d);
  cdag_plan *p = analyse(g, NULL);
  check_random(p, &d, seed);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}

START_TEST(random_keepers) {
  long n = cdag_test_iterations(600);
  for (long i = 0; i < n; i++) random_dot((uint64_t)i + 1);
}
END_TEST

Suite *cdag_replicate_suite(void) {
  Suite *s = suite_create("replicate");
  TCase *t = tcase_create("cases");
  tcase_add_test(t, strided_keepers);
  tcase_add_test(t, overwritten_copies);
  tcase_add_test(t, keepers_outside);
  tcase_add_test(t, allreduce_and_outside);
  tcase_add_test(t, two_values_merge);
  tcase_add_test(t, not_replicated);
  tcase_add_test(t, exact_float_keeps_order);
  tcase_add_test(t, strided_ranges);
  tcase_add_test(t, report_descriptor);
  suite_add_tcase(s, t);
  TCase *r = tcase_create("randomized");
  tcase_set_timeout(r, 300);
  tcase_add_test(r, random_keepers);
  suite_add_tcase(s, r);
  return s;
}

CDAG_CHECK_MAIN(cdag_replicate_suite)

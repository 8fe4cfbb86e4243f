/* cdag tests — tests/exec/sim/test_verify_inputs.c: verify's exact inputs for one
 * floating-point reduction never break another's.
 *
 * verify gives the inputs of floating-point sums and products values every order combines
 * exactly, so a plan that reassociates them compares equal. When the same bytes feed a
 * double sum and a float product, values chosen for one type read as garbage in the other,
 * and a correct plan was reported as different (issue #35: 70 of 100 seeds of a 6-rank
 * graph). Here 6 ranks reduce the same 16 bytes as a double sum at rank 3 and as a float
 * product at rank 1, contributions in descending rank order (a collective combines them in
 * ascending order): the plan must verify for each of 100 seeds, and with exact_float too.
 *
 * A staged plan's later sums read values an earlier stage (or a computation) made, which no
 * seed makes exact: verify then checks stage by stage (verify_by_stages). The staged cases
 * below failed for most seeds before; a plan with a stage's reductions dropped must still
 * fail, naming the stage. A sum of 65,536 terms gets inputs small enough that its partial
 * sums stay exact floats. */
#include "check_main.h"
#include "detect/detect.h"
#include "exec/sim/sim.h"

enum { NP = 6, DATA = 0x1000, TMP = 0x8000, SUM_OUT = 0x2000, PROD_OUT = 0x3000, LEN = 16 };

/* Every rank but root sends [DATA, +len) to root, highest rank first, which reduces each
   into out (seeded with its own DATA) as type/op; temporaries are scratch. */
static void reduce_len(cdag_graph *g, int root, uint64_t out, int type, int op, int tag, uint64_t len) {
  CK_OK(cdag_rank_copy_local(g, root, DATA, out, len, NULL));
  for (int r = NP - 1; r >= 0; r--) {
    if (r == root) continue;
    uint64_t tmp = TMP + 0x100 * (uint64_t)tag + len * (uint64_t)r;
    CK_OK(cdag_rank_scratch(g, root, tmp, len));
    CK_OK(cdag_rank_send(g, r, DATA, len, root, tag, NULL));
    CK_OK(cdag_rank_recv(g, root, tmp, len, r, tag, NULL));
    CK_OK(cdag_rank_reduce_local(g, root, tmp, out, len / (uint64_t)ir_type_size(type), type, op, NULL));
  }
}

static void reduce_to(cdag_graph *g, int root, uint64_t out, int type, int op, int tag) {
  reduce_len(g, root, out, type, op, tag, LEN);
}

static cdag_graph *sum_and_product(void) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(NP, &g));
  reduce_to(g, 3, SUM_OUT, CDAG_DOUBLE, CDAG_SUM, 1);
  reduce_to(g, 1, PROD_OUT, CDAG_FLOAT, CDAG_PROD, 2);
  return g;
}

START_TEST(double_sum_and_float_product_of_one_buffer) {
  for (int exact = 0; exact < 2; exact++) {
    cdag_graph *g = sum_and_product();
    cdag_options o;
    cdag_options_init(&o);
    o.exact_float = exact;
    cdag_plan *p = NULL;
    ck_assert_msg(cdag_analyze(g, &o, &p) == CDAG_OK, "analyze: %s", cdag_error_message());
    int reduces = 0;
    for (int64_t c = 0; c < p->ncolls; c++) reduces += ir_coll_get(p->colls[c].kind)->reduces;
    if (!exact) ck_assert_int_eq(reduces, 2); /* both are collectives, combined in member order */
    for (uint64_t seed = 1; seed <= 100; seed++) {
      int rc = exec_verify(g, p, seed, 3);
      ck_assert_msg(rc == CDAG_OK, "exact_float %d, seed %llu: %s", exact, (unsigned long long)seed, cdag_error_message());
    }
    cdag_plan_free(&p);
    cdag_graph_free(&g);
  }
}
END_TEST

/* Complex products reduced to rank 1 in descending rank order, which a collective or a
   residual reduction combines in another: the factors verify gives are real or imaginary, so
   the products are exact, but their zero parts come out -0.0 in one order and +0.0 in the
   other (i * i = -1). A native MPI_Allreduce of complex_float products recorded by MPICH's
   coll/allred failed verify so once the price left it as residual reductions. */
static void complex_products(int type, uint64_t shift) {
  for (int price = 0; price < 2; price++) {
    cdag_graph *g;
    CK_OK(cdag_graph_create_global(NP, &g));
    reduce_len(g, 1, PROD_OUT + shift, type, CDAG_PROD, 1, 2 * (uint64_t)ir_type_size(type));
    cdag_options o;
    cdag_options_init(&o);
    o.price = price;
    cdag_plan *p = NULL;
    ck_assert_msg(cdag_analyze(g, &o, &p) == CDAG_OK, "analyze: %s", cdag_error_message());
    for (uint64_t seed = 1; seed <= 25; seed++) {
      int rc = exec_verify(g, p, seed, 3);
      ck_assert_msg(rc == CDAG_OK, "type %d at +%llu, price %d, seed %llu: %s", type, (unsigned long long)shift, price,
                    (unsigned long long)seed, cdag_error_message());
    }
    cdag_plan_free(&p);
    cdag_graph_free(&g);
  }
}

START_TEST(complex_products_in_another_order) {   /* at their alignment and off it (the format allows it) */
  static const int types[] = {CDAG_COMPLEX_FLOAT, CDAG_COMPLEX_DOUBLE, CDAG_COMPLEX_LONG_DOUBLE};
  static const uint64_t shifts[] = {0, 1, 2, 8};
  for (size_t t = 0; t < sizeof types / sizeof *types; t++)
    for (size_t k = 0; k < sizeof shifts / sizeof *shifts; k++) complex_products(types[t], shifts[k]);
}
END_TEST

/* The fuzzer's graph (issue #35's class): a bor mixes ops on rank 0's 0x80, so the double sums
   of 0x80 that follow start a stage and read the bor's bits; the graph doubles x four times,
   a plan adds its 16 copies one by one. */
static cdag_graph *sums_after_bor(void) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(8, &g));
  CK_OK(cdag_rank_reduce_local(g, 0, 0x60, 0x80, 8, CDAG_INT32, CDAG_BOR, NULL));
  CK_OK(cdag_rank_reduce_local(g, 0, 0x80, 0x80, 1, CDAG_DOUBLE, CDAG_SUM, NULL));
  CK_OK(cdag_rank_reduce_local(g, 0, 0x48, 0x0, 1, CDAG_DOUBLE, CDAG_SUM, NULL));
  for (int k = 0; k < 3; k++) CK_OK(cdag_rank_reduce_local(g, 0, 0x80, 0x80, 1, CDAG_DOUBLE, CDAG_SUM, NULL));
  return g;
}

/* Rank 1 computes 4 doubles x and sends them to rank 0, which doubles them four times and
   adds its own computed y: 16 x + y, which a plan adds up one copy of x at a time. */
static cdag_graph *sum_of_computed(void) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(2, &g));
  CK_OK(cdag_rank_compute(g, 1, 0, 0, DATA, 32, 100, NULL));
  CK_OK(cdag_rank_send(g, 1, DATA, 32, 0, 1, NULL));
  CK_OK(cdag_rank_compute(g, 0, 0, 0, DATA, 32, 100, NULL));
  CK_OK(cdag_rank_recv(g, 0, SUM_OUT, 32, 1, 1, NULL));
  for (int k = 0; k < 4; k++) CK_OK(cdag_rank_reduce_local(g, 0, SUM_OUT, SUM_OUT, 4, CDAG_DOUBLE, CDAG_SUM, NULL));
  CK_OK(cdag_rank_reduce_local(g, 0, DATA, SUM_OUT, 4, CDAG_DOUBLE, CDAG_SUM, NULL));
  return g;
}

/* fuzz_api's: x = y + x, doubled 20 times, added into z. The sum counts each of x and y
   2^20 times, past the 65,536 a set keeps (a stage starts), and stage 0's plan adds 65,536
   copies one by one: integers up to 512 would pass 2^24 there, where a float rounds. */
static cdag_graph *doubled_floats(void) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(1, &g));
  CK_OK(cdag_rank_reduce_local(g, 0, 0x20, 0x90, 6, CDAG_FLOAT, CDAG_SUM, NULL));
  for (int k = 0; k < 20; k++) CK_OK(cdag_rank_reduce_local(g, 0, 0x90, 0x90, 6, CDAG_FLOAT, CDAG_SUM, NULL));
  CK_OK(cdag_rank_reduce_local(g, 0, 0x90, 0xa8, 6, CDAG_FLOAT, CDAG_SUM, NULL));
  return g;
}

static void verify_seeds(cdag_graph *(*make)(void), const char *what) {
  cdag_graph *g = make();
  cdag_plan *p = NULL;
  ck_assert_msg(cdag_analyze(g, NULL, &p) == CDAG_OK, "%s: analyze: %s", what, cdag_error_message());
  ck_assert_msg(p->steps != NULL, "%s: the plan is staged", what);
  for (uint64_t seed = 1; seed <= 40; seed++) {
    int rc = exec_verify(g, p, seed, 3);
    ck_assert_msg(rc == CDAG_OK, "%s, seed %llu: %s", what, (unsigned long long)seed, cdag_error_message());
  }
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}

START_TEST(staged_sums_of_computed_values) {
  verify_seeds(sums_after_bor, "sums after a bor");
  verify_seeds(sum_of_computed, "a sum of computed values");
  verify_seeds(doubled_floats, "floats doubled 20 times");
}
END_TEST

/* Verifying stage by stage still finds a wrong stage: stage 1 of the bor graph without its
   reductions leaves rank 0's 0x80 and 0x0 as they were. */
START_TEST(staged_plan_missing_reductions_fails) {
  cdag_graph *g = sums_after_bor();
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  ck_assert_ptr_nonnull(p->next);
  int64_t n = p->next->nreds;
  ck_assert_int_gt(n, 0);
  p->next->nreds = 0;
  int rc = exec_verify(g, p, 3, 3);
  ck_assert_int_eq(rc, CDAG_ERR_MISMATCH);
  ck_assert_msg(strstr(cdag_error_message(), "stage 1:"), "names the stage: %s", cdag_error_message());
  p->next->nreds = n;
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

Suite *cdag_verify_inputs_suite(void) {
  Suite *s = suite_create("verify_inputs");
  TCase *t = tcase_create("exact inputs");
  tcase_add_test(t, double_sum_and_float_product_of_one_buffer);
  tcase_add_test(t, staged_sums_of_computed_values);
  tcase_add_test(t, staged_plan_missing_reductions_fails);
  tcase_add_test(t, complex_products_in_another_order);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_verify_inputs_suite)

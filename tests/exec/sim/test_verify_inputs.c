/* cdag tests — tests/exec/sim/test_verify_inputs.c: verify's exact inputs for one
 * floating-point reduction never break another's.
 *
 * verify gives the inputs of floating-point sums and products values every order combines
 * exactly, so a plan that reassociates them compares equal. When the same bytes feed a
 * double sum and a float product, values chosen for one type read as garbage in the other,
 * and a correct plan was reported as different (issue #35: 70 of 100 seeds of a 6-rank
 * graph). Here 6 ranks reduce the same 16 bytes as a double sum at rank 3 and as a float
 * product at rank 1, contributions in descending rank order (a collective combines them in
 * ascending order): the plan must verify for each of 100 seeds, and with exact_float too. */
#include "check_main.h"
#include "detect/detect.h"
#include "exec/sim/sim.h"

enum { NP = 6, DATA = 0x1000, TMP = 0x8000, SUM_OUT = 0x2000, PROD_OUT = 0x3000, LEN = 16 };

/* Every rank but root sends [DATA, +LEN) to root, highest rank first, which reduces each
   into out (seeded with its own DATA) as type/op; temporaries are scratch. */
static void reduce_to(cdag_graph *g, int root, uint64_t out, int type, int op, int tag) {
  CK_OK(cdag_rank_copy_local(g, root, DATA, out, LEN, NULL));
  for (int r = NP - 1; r >= 0; r--) {
    if (r == root) continue;
    uint64_t tmp = TMP + 0x100 * (uint64_t)tag + LEN * (uint64_t)r;
    CK_OK(cdag_rank_scratch(g, root, tmp, LEN));
    CK_OK(cdag_rank_send(g, r, DATA, LEN, root, tag, NULL));
    CK_OK(cdag_rank_recv(g, root, tmp, LEN, r, tag, NULL));
    CK_OK(cdag_rank_reduce_local(g, root, tmp, out, LEN / (uint64_t)(type == CDAG_DOUBLE ? 8 : 4), type, op, NULL));
  }
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

Suite *cdag_verify_inputs_suite(void) {
  Suite *s = suite_create("verify_inputs");
  TCase *t = tcase_create("exact inputs");
  tcase_add_test(t, double_sum_and_float_product_of_one_buffer);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_verify_inputs_suite)

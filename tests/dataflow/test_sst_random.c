/* cdag tests — tests/dataflow/test_sst_random.c: SST against the simulator, randomly.
 *
 * For thousands of random valid graphs (messages, forwarding, scratch, self sends, copies,
 * int32 reduces): running the graph in the simulator and applying its SST tuples to the
 * same initial memory give the same bytes everywhere outside scratch; and the graph gives
 * the same memory in several random valid orders. */
#include "check_main.h"
#include "dataflow/dataflow.h"
#include "exec/sim.h"
#include "support/support.h"

static void check_seed(uint64_t seed, int reduce_mode) {
  cdag_graph *g;
  gen_random_opts o = {.reduce_mode = reduce_mode};
  ck_assert_int_eq(gen_random_graph(seed, &o, &g), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  match_result m;
  int rc = match_run(g, &m);
  ck_assert_msg(rc == CDAG_OK, "seed %llu: match: %s", (unsigned long long)seed, cdag_error_message());
  df_sst *s;
  rc = dataflow_run(g, &m, &s);
  ck_assert_msg(rc == CDAG_OK, "seed %llu: dataflow: %s", (unsigned long long)seed, cdag_error_message());
  sim_mem *init, *ran, *applied, *other;
  ck_assert_int_eq(sim_mem_create(g, &init), CDAG_OK);
  sim_mem_fill_random(init, seed);
  ck_assert_int_eq(sim_mem_clone(init, &ran), CDAG_OK);
  ck_assert_int_eq(sim_mem_clone(init, &applied), CDAG_OK);
  ck_assert_int_eq(sim_mem_clone(init, &other), CDAG_OK);
  rc = sim_run_graph(g, ran, 0);
  ck_assert_msg(rc == CDAG_OK, "seed %llu: simulate: %s", (unsigned long long)seed, cdag_error_message());
  ck_assert_int_eq(sim_run_graph(g, other, seed + 1), CDAG_OK);
  ck_assert_msg(sim_mem_compare(ran, other, g, 1) == CDAG_OK, "seed %llu: orders differ: %s",
                (unsigned long long)seed, cdag_error_message());
  ck_assert_int_eq(sim_apply_sst(s, applied), CDAG_OK);
  ck_assert_msg(sim_mem_compare(ran, applied, g, 1) == CDAG_OK, "seed %llu (reduce mode %d): SST differs: %s",
                (unsigned long long)seed, reduce_mode, cdag_error_message());
  sim_mem_free(init); sim_mem_free(ran); sim_mem_free(applied); sim_mem_free(other);
  dataflow_free(s);
  match_free(&m);
  cdag_graph_free(&g);
}

START_TEST(random_byte_graphs) {
  long n = cdag_test_iterations(2000);
  for (long i = 0; i < n; i++) check_seed((uint64_t)i + 1, 0);
}
END_TEST

START_TEST(random_reduce_graphs) {
  long n = cdag_test_iterations(2000);
  for (long i = 0; i < n; i++) check_seed((uint64_t)i + 100001, 1);
}
END_TEST

Suite *cdag_sst_random_suite(void) {
  Suite *s = suite_create("sst_random");
  TCase *t = tcase_create("differential");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, random_byte_graphs);
  tcase_add_test(t, random_reduce_graphs);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_sst_random_suite)

/* cdag tests — tests/dataflow/test_sst_random.c: SST against the simulator, randomly.
 *
 * For thousands of random valid graphs (messages, forwarding, scratch, self sends, copies,
 * int32 reduces): running the graph in the simulator and applying its SST tuples to the
 * same initial memory give the same bytes everywhere outside scratch; and the graph gives
 * the same memory in several random valid orders. Wait sets equal the ranks found by a
 * plain backward search from each rank's ops. One rank receiving hundreds of pieces in
 * ascending, descending, wrapped and scattered address order (the dataflow's per-rank map in
 * each of its forms) gets the same bytes as the simulator too. */
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dataflow/dataflow.h"
#include "exec/sim/sim.h"
#include "support/support.h"

/* W_i by brute force: every rank with an op that reaches an op of rank i. */
static void check_waitsets(const cdag_graph *g, const match_result *m, const df_sst *s, uint64_t seed) {
  int32_t *stack = malloc((size_t)(g->nops + 1) * sizeof *stack);
  char *seen = malloc((size_t)g->nops + 1), *waits = malloc((size_t)g->nprocs);
  ck_assert(stack && seen && waits);
  for (int i = 0; i < g->nprocs; i++) {
    memset(seen, 0, (size_t)g->nops + 1);
    memset(waits, 0, (size_t)g->nprocs);
    waits[i] = 1;
    int64_t n = 0;
    for (int32_t k = g->rank_start[i]; k < g->rank_start[i + 1]; k++) {
      stack[n++] = g->rank_ops[k];
      seen[g->rank_ops[k]] = 1;
    }
    while (n > 0) {
      int32_t op = stack[--n];
      waits[g->rank[op]] = 1;
      for (int32_t k = g->pred_start[op]; k <= g->pred_start[op + 1]; k++) {
        int32_t u = k < g->pred_start[op + 1] ? g->pred[k] : g->kind[op] == IR_RECV ? m->partner[op] : -1;
        if (u >= 0 && !seen[u]) {
          seen[u] = 1;
          stack[n++] = u;
        }
      }
    }
    for (int j = 0; j < g->nprocs; j++)
      ck_assert_msg(dataflow_waits_for(s, i, j) == waits[j], "seed %llu: rank %d waits for %d: %d, expected %d",
                    (unsigned long long)seed, i, j, dataflow_waits_for(s, i, j), waits[j]);
    for (int64_t k = s->wait_start[i]; k < s->wait_start[i + 1]; k++) { /* sorted, disjoint, maximal */
      ck_assert_int_le(s->wait_lo[k], s->wait_hi[k]);
      if (k > s->wait_start[i]) ck_assert_int_gt(s->wait_lo[k], s->wait_hi[k - 1] + 1);
    }
  }
  free(stack); free(seen); free(waits);
}

/* Checks the SST of g (seed names it in messages, and seeds memory and orders); returns the
   scans the match order took. Frees g. */
static int check_built(cdag_graph *g, uint64_t seed, int reduce_mode) {
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
  check_waitsets(g, &m, s, seed);
  sim_mem_free(init); sim_mem_free(ran); sim_mem_free(applied); sim_mem_free(other);
  dataflow_free(s);
  int passes = m.passes;
  match_free(&m);
  cdag_graph_free(&g);
  return passes;
}

static int check_graph(uint64_t seed, const gen_random_opts *o) {
  cdag_graph *g;
  ck_assert_int_eq(gen_random_graph(seed, o, &g), CDAG_OK);
  return check_built(g, seed, o->reduce_mode);
}

static void check_seed(uint64_t seed, int reduce_mode, int rank_by_rank) {
  (void)check_graph(seed, &(gen_random_opts){.reduce_mode = reduce_mode, .rank_by_rank = rank_by_rank});
}

START_TEST(random_byte_graphs) {
  long n = cdag_test_iterations(2000);
  for (long i = 0; i < n; i++) check_seed((uint64_t)i + 1, 0, 0);
}
END_TEST

START_TEST(random_reduce_graphs) {
  long n = cdag_test_iterations(2000);
  for (long i = 0; i < n; i++) check_seed((uint64_t)i + 100001, 1, 0);
}
END_TEST

/* Op ids that do not follow dependencies: the match order runs ops behind its scan and
   receives apart from their sends. */
START_TEST(random_graphs_added_rank_by_rank) {
  long n = cdag_test_iterations(2000);
  for (long i = 0; i < n; i++) check_seed((uint64_t)i + 200001, (int)(i & 1), 1);
}
END_TEST

/* Ranks' ops far apart in id: the match order leaves ops freed far behind its scan for a
   later scan. */
START_TEST(large_random_graphs_added_rank_by_rank) {
  long n = cdag_test_iterations(100), later = 0;
  for (long i = 0; i < n; i++)
    later += check_graph((uint64_t)i + 300001, &(gen_random_opts){.nprocs = 12, .steps = 600,
                                                                  .reduce_mode = (int)(i & 1), .rank_by_rank = 1}) > 1;
  ck_assert_int_gt(later, 0);
}
END_TEST

/* Rank 0 receives NBLK blocks in the order `order` names (each receive depends on the one
   before, so the match order keeps it), then writes straddling them (splits), a copy, and
   its own bytes coming back (pieces removed): its map outgrows its slot into the sorted
   list, whose gap moves, and for the scattered order on into a JudyL. */
enum { NBLK = 400, BLK = 16 };

static uint64_t block_at(int order, int k) {
  switch (order) {
    case 0: return (uint64_t)k;                                    /* ascending */
    case 1: return (uint64_t)(NBLK - 1 - k);                       /* descending */
    case 2: return (uint64_t)(k < NBLK / 3 ? NBLK / 3 - 1 - k : NBLK - 1 - (k - NBLK / 3)); /* two descending runs */
    case 3: return (uint64_t)((k + NBLK / 2) % NBLK);              /* two ascending runs */
    default: return (uint64_t)k * 7919 % NBLK;                     /* scattered (7919 is prime) */
  }
}

static cdag_graph *many_pieces(int order) {
  cdag_graph *g;
  cdag_op prev = CDAG_OP_NULL, op;
  const uint64_t base = 0x10000, away = 0x20000;
  ck_assert_int_eq(cdag_graph_create_global(3, &g), CDAG_OK);
  for (int k = 0; k < NBLK / 8; k++) { /* rank 0's own bytes, to come back at the end */
    CK_OK(cdag_rank_send(g, 0, base + (uint64_t)(8 * k + 1) * BLK, 2 * BLK, 1, 2 * NBLK + k, NULL));
    CK_OK(cdag_rank_recv(g, 1, away + (uint64_t)k * 2 * BLK, 2 * BLK, 0, 2 * NBLK + k, NULL));
  }
  for (int k = 0; k < NBLK; k++) {
    int from = 1 + k % 2;
    CK_OK(cdag_rank_send(g, from, (uint64_t)k * BLK, BLK, 0, k, NULL));
    CK_OK(cdag_rank_recv(g, 0, base + block_at(order, k) * BLK, BLK, from, k, &op));
    CK_OK(cdag_depend(g, prev, op));
    prev = op;
  }
  for (int k = 0; k < NBLK / 4; k++) { /* straddling writes, from the top down */
    CK_OK(cdag_rank_send(g, 2, 0x8000 + (uint64_t)k * BLK, BLK, 0, NBLK + k, NULL));
    CK_OK(cdag_rank_recv(g, 0, base + (uint64_t)(NBLK - 1 - 4 * k) * BLK - BLK / 2, BLK, 2, NBLK + k, &op));
    CK_OK(cdag_depend(g, prev, op));
    prev = op;
  }
  CK_OK(cdag_rank_copy_local(g, 0, base + 3 * BLK / 2, base + 200 * BLK + 4, 5 * BLK, &op));
  CK_OK(cdag_depend(g, prev, op));
  prev = op;
  for (int k = 0; k < NBLK / 8; k++) {
    CK_OK(cdag_rank_send(g, 1, away + (uint64_t)k * 2 * BLK, 2 * BLK, 0, 3 * NBLK + k, NULL));
    CK_OK(cdag_rank_recv(g, 0, base + (uint64_t)(8 * k + 1) * BLK, 2 * BLK, 1, 3 * NBLK + k, &op));
    CK_OK(cdag_depend(g, prev, op));
    prev = op;
  }
  return g;
}

START_TEST(many_pieces_in_any_order) {
  for (int order = 0; order < 5; order++) (void)check_built(many_pieces(order), (uint64_t)order + 1, 0);
}
END_TEST

Suite *cdag_sst_random_suite(void) {
  Suite *s = suite_create("sst_random");
  TCase *t = tcase_create("differential");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, random_byte_graphs);
  tcase_add_test(t, random_reduce_graphs);
  tcase_add_test(t, random_graphs_added_rank_by_rank);
  tcase_add_test(t, large_random_graphs_added_rank_by_rank);
  tcase_add_test(t, many_pieces_in_any_order);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_sst_random_suite)

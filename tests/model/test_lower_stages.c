/* cdag tests — tests/model/test_lower_stages.c: plans in stages lowered for the LogGOPS model.
 *
 * A graph that computes compiles to a chain of stage plans with computations between
 * (src/stage). Lowered, every stage must give its stage plan's bytes in the simulator (each
 * stage alone: the lowered graph's computations are calcs without memory, so the whole
 * cannot be compared byte for byte), its messages must pair as match_run pairs them, and its
 * modelled time must keep the computations and their causality: never below the longest
 * chain of one rank's computations (the stage order runs them one after another), nor below
 * the graph's own critical path of computation (exec_calc_path) unless that path runs
 * through a transfer the plan drops as dead (an overwrite is no causality). The 8-rank panel pipeline
 * (tests/data/compute/panel_pipeline8.cdag) runs its 8 computations of 200 us in a chain;
 * the same panels computed before any receive run in parallel; random graphs with
 * computations keep both bounds under every policy. Mutation: a plan whose computations are
 * hoisted before the first stage models below the graph's critical path, which the bound
 * catches. And the staging memory of a lowering never overlaps an address of the plan,
 * however high (recordings' opaque and packing areas, stage buffers). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "exec/pipeline.h"
#include "exec/sim/sim.h"
#include "match/match.h"
#include "model/goal_grammar.h"
#include "model/lower.h"
#include "support/graphs.h"
#include "support/support.h"

static void grammar_ok(const cdag_graph *g, const char *what) {
  char *text = NULL, err[256];
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(exec_goal_write(g, f, 0.1), CDAG_OK);
  fclose(f);
  ck_assert_msg(goal_check(text, len, err, sizeof err) == 0, "%s: GOAL grammar: %s", what, err);
  free(text);
}

/* Each stage of chosen plan p lowered alone gives the stage plan's bytes. */
static void stages_verify(const cdag_plan *p, kern_policy pol, const char *what) {
  for (const cdag_plan *q = p; q; q = q->next) {
    cdag_plan one = *q;   /* the stage alone: no chain, no computations */
    one.next = NULL;
    one.steps = NULL;
    cdag_graph *low = NULL;
    kern_model m = kern_model_default();
    ck_assert_msg(exec_lower_plan(&one, NULL, &m, pol, &low) == CDAG_OK, "%s stage %d: %s", what, q->stage,
                  cdag_error_message());
    ck_assert_msg(exec_verify(low, &one, 11, 1) == CDAG_OK, "%s stage %d: %s", what, q->stage, cdag_error_message());
    ir_graph_free(low);
  }
}

/* The most computation one rank runs (its computations chain in stage order), in us. */
static double rank_chain(const cdag_plan *p) {
  double *sum = calloc((size_t)p->nprocs, sizeof *sum), most = 0;
  ck_assert_ptr_nonnull(sum);
  for (int64_t i = 0; p->steps && i < p->steps->ncomputes; i++) {
    const stage_compute *c = &p->steps->computes[i];
    sum[c->rank] += (double)c->cost * 1e-3;
    if (sum[c->rank] > most) most = sum[c->rank];
  }
  free(sum);
  return most;
}

typedef struct {
  double graph, plan;      /* modelled times, us */
  double calc, calc_plan;  /* computation on the critical path of the graph, of the lowered plan */
  double chain;            /* the most one rank computes */
  int64_t ncalc;           /* calcs of the lowered plan with a cost */
} times;

/* Is b reachable from a along successor lists (start, succ) (DFS; seen is a per-op stamp)? */
static int reaches(const int32_t *start, const int32_t *succ, int32_t a, int32_t b, int32_t *seen, int32_t *stack,
                   int32_t stamp) {
  int32_t n = 0;
  stack[n++] = a;
  seen[a] = stamp;
  while (n) {
    int32_t x = stack[--n];
    if (x == b) return 1;
    for (int32_t e = start[x]; e < start[x + 1]; e++)
      if (seen[succ[e]] != stamp) seen[succ[e]] = stamp, stack[n++] = succ[e];
  }
  return 0;
}

/* The lowering's conflict scopes (ir.h) drop only dependencies the stages' chain implies: the
   lowered plan's dependencies found without them are reachable with them (small plans), and
   the model's time is the same. */
static void scopes_kept_order(cdag_graph *low, const int32_t *pairs, const loggp_params *lp, double plan, const char *what) {
  if (!low->scope) return;
  int64_t n = low->nops;
  int32_t *starts = low->succ_start, *succ = low->succ;
  low->succ_start = low->succ = NULL;   /* the scoped lists, kept for the walk */
  ir_drop_deps(low);
  uint32_t *scope = low->scope;
  low->scope = NULL;
  CK_OK(ir_need_deps(low));
  double unscoped;
  CK_OK(exec_loggp_paired(low, pairs, lp, &unscoped, NULL));
  ck_assert_msg(unscoped == plan, "%s: %.6f us with conflict scopes, %.6f us without", what, plan, unscoped);
  if (n <= 5000) {   /* edges within a scope are found alike; those across it must be implied */
    int32_t *seen = malloc((size_t)n * sizeof *seen), *stack = malloc((size_t)(n + 1) * sizeof *stack), stamp = 0;
    ck_assert(seen && stack);
    for (int64_t i = 0; i < n; i++) seen[i] = -1;
    for (int32_t b = 0; b < n; b++)
      for (int32_t e = low->pred_start[b]; e < low->pred_start[b + 1]; e++)
        if (scope[low->pred[e]] != scope[b])
          ck_assert_msg(reaches(starts, succ, low->pred[e], b, seen, stack, stamp++), "%s: op %d after op %d only without "
                        "conflict scopes", what, b, low->pred[e]);
    free(seen);
    free(stack);
  }
  low->scope = scope;
  free(starts);
  free(succ);
}

/* g (finalized) analysed, chosen with pol, lowered with its plain calcs kept, modelled. */
static times model_of(cdag_graph *g, kern_policy pol, const char *what, int verify) {
  times t = {0};
  loggp_params lp = loggp_defaults();
  match_result mr = {0};
  CK_OK(ir_finalize(g));
  CK_OK(match_run(g, &mr));
  CK_OK(exec_loggp_paired(g, mr.partner, &lp, &t.graph, NULL));
  CK_OK(exec_calc_path(g, mr.partner, &t.calc));
  match_free(&mr);
  cdag_plan *p = NULL;
  kern_model m = kern_model_default();
  ck_assert_msg(pipeline_plan(g, NULL, (pipeline_tune[]){pipeline_tune_of(&m, pol)}, &p) == CDAG_OK, "%s: %s", what, cdag_error_message());
  if (verify) stages_verify(p, pol, what);
  t.chain = rank_chain(p);
  cdag_graph *low = NULL;
  int32_t *pairs = NULL;
  ck_assert_msg(exec_lower_plan(p, g, &m, pol, &low) == CDAG_OK, "%s: %s", what, cdag_error_message());
  CK_OK(exec_lower_pairs(low, &pairs));
  ck_assert_int_eq(match_run(low, &mr), CDAG_OK);   /* lowering's pairing is match_run's */
  for (int64_t i = 0; i < low->nops; i++)
    ck_assert_msg(pairs[i] == mr.partner[i], "%s: op %lld paired with %d, matched with %d", what, (long long)i, pairs[i],
                  mr.partner[i]);
  match_free(&mr);
  CK_OK(exec_loggp_paired(low, pairs, &lp, &t.plan, NULL));
  scopes_kept_order(low, pairs, &lp, t.plan, what);
  CK_OK(exec_calc_path(low, pairs, &t.calc_plan));
  for (int64_t i = 0; i < low->nops; i++) t.ncalc += low->kind[i] == IR_CALC && low->bytes[i] > 0;
  if (low->nprocs <= 16) grammar_ok(low, what);
  free(pairs);
  ir_graph_free(low);
  cdag_plan_free(&p);
  return t;
}

static cdag_graph *load_data(const char *name) {
  char path[1024];
  cdag_graph *g = NULL;
  snprintf(path, sizeof path, "%s/tests/data/%s", CDAG_SOURCE_DIR, name);
  ck_assert_msg(cdag_graph_load(path, &g) == CDAG_OK, "%s: %s", path, cdag_error_message());
  return g;
}

/* The pipeline: 8 computations of 200 us in a chain, each a stage's broadcast apart. */
START_TEST(pipeline_in_stages) {
  for (int pol = KERN_POLICY_AUTO; pol <= KERN_POLICY_CDAG; pol++) {
    cdag_graph *g = load_data("compute/panel_pipeline8.cdag");
    times t = model_of(g, (kern_policy)pol, "pipeline", 1);
    ck_assert_int_eq(t.ncalc, 8);
    ck_assert_double_eq_tol(t.calc, 1600, 1e-9);
    ck_assert_double_eq_tol(t.calc_plan, 1600, 1e-9);
    ck_assert_msg(t.plan >= 1600 && t.plan < 1600 + 8 * 10, "policy %d: plan %.3f us", pol, t.plan);
    ck_assert_msg(t.graph >= 1600 && t.graph < 1600 + 8 * 10, "policy %d: graph %.3f us", pol, t.graph);
    cdag_graph_free(&g);
  }
}
END_TEST

/* The same panels, each computed from initial data before any is sent: one stage, an
   allgather, the 8 computations in parallel before it. */
START_TEST(computed_first_in_parallel) {
  char text[8192];
  size_t n = (size_t)snprintf(text, sizeof text, "num_ranks 8\n");
  for (int r = 0; r < 8; r++) {
    n += (size_t)snprintf(text + n, sizeof text - n, "rank %d {\n  compute 200000 reads 64b at 0x100 writes 64b at 0x%x\n",
                          r, 0x10000 + 64 * r);
    for (int d = 0; d < 8; d++)
      if (d != r) n += (size_t)snprintf(text + n, sizeof text - n, "  send 64b to %d tag %d addr 0x%x\n", d, r, 0x10000 + 64 * r);
    for (int s = 0; s < 8; s++)
      if (s != r) n += (size_t)snprintf(text + n, sizeof text - n, "  recv 64b from %d tag %d addr 0x%x\n", s, s, 0x10000 + 64 * s);
    n += (size_t)snprintf(text + n, sizeof text - n, "}\n");
  }
  cdag_graph *g = cdag_test_text_graph(text);
  times t = model_of(g, KERN_POLICY_AUTO, "computed first", 1);
  ck_assert_int_eq(t.ncalc, 8);
  ck_assert_double_eq_tol(t.calc, 200, 1e-9);
  ck_assert_msg(t.plan >= 200 && t.plan < 250, "plan %.3f us", t.plan);
  cdag_graph_free(&g);
}
END_TEST

/* Random graphs with computations: every stage verifies, and the modelled plan never runs
   below either bound. (The second may rightly fail where a chain of the graph runs through
   a transfer the plan drops as dead, or through a dependency of storage alone:
   dead_transfer_is_no_causality and returned_bytes_are_no_causality below. These seeds, and
   2,400 of them at CDAG_TEST_SCALE=20, have none.) */
START_TEST(random_graphs_keep_the_bounds) {
  long n = cdag_test_iterations(120);
  int64_t staged = 0;
  for (long i = 0; i < n; i++) {
    gen_random_opts o = {.reduce_mode = -1, .computes = 1};
    cdag_graph *g = NULL;
    char what[64];
    snprintf(what, sizeof what, "random graph %ld", i);
    CK_OK(gen_random_graph(0x5ca1e + (uint64_t)i, &o, &g));
    kern_policy pol = (kern_policy)(KERN_POLICY_AUTO + i % 3);
    times t = model_of(g, pol, what, 1);
    ck_assert_msg(t.plan + 1e-9 >= t.chain, "%s: plan %.6f us below one rank's computations %.6f us", what, t.plan, t.chain);
    ck_assert_msg(t.plan + 1e-9 >= t.calc, "%s: plan %.6f us below the graph's critical path %.6f us", what, t.plan, t.calc);
    ck_assert_msg(t.graph + 1e-9 >= t.calc, "%s: graph %.6f us below its critical path %.6f us", what, t.graph, t.calc);
    staged += t.chain > 0;
    cdag_graph_free(&g);
  }
  ck_assert_msg(staged > n / 2, "only %lld of %ld graphs compute", (long long)staged, n);
}
END_TEST

/* Mutation: the pipeline's computations hoisted before the first stage model in parallel,
   below the graph's critical path: the bound above would catch a lowering that hoists. */
START_TEST(hoist_breaks_the_bound) {
  cdag_graph *g = load_data("compute/panel_pipeline8.cdag");
  cdag_plan *p = NULL;
  kern_model m = kern_model_default();
  CK_OK(pipeline_plan(g, NULL, (pipeline_tune[]){pipeline_tune_of(&m, KERN_POLICY_AUTO)}, &p));
  for (int64_t i = 0; i < p->steps->ncomputes; i++) p->steps->computes[i].after = -1;   /* still sorted: rank i */
  cdag_graph *low = NULL;
  double t;
  loggp_params lp = loggp_defaults();
  CK_OK(exec_lower_plan(p, NULL, &m, KERN_POLICY_AUTO, &low));
  CK_OK(exec_loggp(low, &lp, &t, NULL));
  ck_assert_msg(t < 1600 && t >= 200, "hoisted: %.3f us", t);
  ir_graph_free(low);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* g's plan leaves the graph's bytes in the simulator; then g is freed. */
static void verified_and_freed(cdag_graph **g) {
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(*g, NULL, &p));
  ck_assert_msg(exec_verify(*g, p, 5, 2) == CDAG_OK, "%s", cdag_error_message());
  cdag_plan_free(&p);
  cdag_graph_free(g);
}

/* The exception to the second bound: the graph's critical path counts every dependency,
   also an overwrite. Rank 0 receives rank 1's computed bytes, overwrites them with rank 2's
   and computes on those: as written its computation waits for rank 1's (200 us in a
   chain), but rank 1's transfer is dead, the plan drops it, and both computations run at
   once (100 us). No causality is lost: the plan gives the graph's bytes. */
START_TEST(dead_transfer_is_no_causality) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 3\n"
                                       "rank 0 {\n recv 8b from 1 addr 0x100\n recv 8b from 2 addr 0x100\n"
                                       " compute 100000 reads 8b at 0x100 writes 8b at 0x200\n}\n"
                                       "rank 1 {\n compute 100000 reads 8b at 0x10 writes 8b at 0x20\n send 8b to 0 addr 0x20\n}\n"
                                       "rank 2 {\n send 8b to 0 addr 0x30\n}\n");
  times t = model_of(g, KERN_POLICY_AUTO, "dead transfer", 1);
  ck_assert_double_eq_tol(t.calc, 200, 1e-9);
  ck_assert_double_eq_tol(t.calc_plan, 100, 1e-9);
  ck_assert_msg(t.plan >= 100 && t.plan < 110, "plan %.3f us", t.plan);
  verified_and_freed(&g);
}
END_TEST

/* The other exception: a chain through a dependency of storage alone. Rank 1 reads 0x10,
   then receives rank 0's bytes into it (the receive waits for the read) and sends them back.
   As written rank 0's second computation waits for rank 1's (300 us of computation on the
   path); the plan gives rank 0 its own bytes locally, so the two overlap, and the bytes are
   still right. A recording meets this where a computation reads a buffer before a
   collective's result lands in it and that result goes back to the rank it came from
   (tests/record/rec_nbvcoll.c at 2 processes). */
START_TEST(returned_bytes_are_no_causality) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 2\n"
                                       "rank 0 {\n compute 100000 reads all writes 8b at 0x100\n send 8b to 1 addr 0x100\n"
                                       " recv 8b from 1 addr 0x200\n compute 100000 reads all writes 8b at 0x300\n}\n"
                                       "rank 1 {\n compute 200000 reads 8b at 0x10\n recv 8b from 0 addr 0x10\n send 8b to 0 addr 0x10\n}\n");
  times t = model_of(g, KERN_POLICY_AUTO, "returned bytes", 1);
  ck_assert_double_eq_tol(t.calc, 300, 1e-9);
  ck_assert_msg(t.plan + 1e-9 >= t.chain && t.plan < 210, "plan %.3f us, chain %.3f us, graph's path %.3f us", t.plan,
                t.chain, t.calc);
  verified_and_freed(&g);
}
END_TEST

/* The graph as written: a computation is a calc of its cost on its rank's CPU. Rank 0
   computes 1 us, then sends 8 B (o 0.2, L 1, 7 G: handled at rank 1 until 2.4014 us);
   rank 1 computes 3 us on all it received: 5.4014 us. */
START_TEST(graph_as_written_computes) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 2\n"
                                       "rank 0 {\n compute 1000 reads 8b at 0x0 writes 8b at 0x10\n send 8b to 1 addr 0x10\n}\n"
                                       "rank 1 {\n recv 8b from 0 addr 0x10\n compute 3000 reads all writes 8b at 0x20\n}\n");
  CK_OK(ir_finalize(g));
  double t, c;
  int last;
  loggp_params lp = loggp_defaults();
  CK_OK(exec_loggp(g, &lp, &t, &last));
  ck_assert_double_eq_tol(t, 5.4014, 1e-9);
  ck_assert_int_eq(last, 1);
  match_result mr = {0};
  CK_OK(match_run(g, &mr));
  CK_OK(exec_calc_path(g, mr.partner, &c));
  ck_assert_double_eq_tol(c, 4.0, 1e-12);
  match_free(&mr);
  cdag_graph_free(&g);
}
END_TEST

/* The computation on the critical path by hand: 100 ns on rank 0, sent on, 50 ns on rank 1
   after the receive; 120 ns on rank 1 beside it; a chain of 30 + 40 ns on rank 2. */
START_TEST(calc_path_by_hand) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 3\n"
                                       "rank 0 {\n compute 100 writes 8b at 0x10\n send 8b to 1 addr 0x10\n}\n"
                                       "rank 1 {\n compute 120 writes 8b at 0x40\n recv 8b from 0 addr 0x10\n"
                                       " compute 50 reads 8b at 0x10 writes 8b at 0x20\n}\n"
                                       "rank 2 {\n a: calc 30\n b: calc 40\n b requires a\n}\n");
  match_result mr = {0};
  CK_OK(ir_finalize(g));
  CK_OK(match_run(g, &mr));
  double us;
  CK_OK(exec_calc_path(g, mr.partner, &us));
  ck_assert_double_eq_tol(us, 0.150, 1e-12);
  ck_assert_int_eq(exec_calc_path(g, NULL, &us), CDAG_ERR_ARG);
  match_free(&mr);
  cdag_graph_free(&g);
}
END_TEST

/* Addresses near the top of the address space, as recordings and stages use them
   (tests/data/compute/recorded_areas3.cdag): an opaque write (a copy from 0x7ffe...), a
   packing area at 0x7ffd... declared scratch, and a computation before a receive that lands
   a stage late (a staging buffer at STAGE_TEMP_BASE). The lowering stages above them all,
   and each stage verifies. */
START_TEST(staging_above_high_addresses) {
  cdag_graph *g = load_data("compute/recorded_areas3.cdag");
  CK_OK(ir_finalize(g));
  cdag_plan *p = NULL;
  kern_model m = kern_model_default();
  CK_OK(pipeline_plan(g, NULL, (pipeline_tune[]){pipeline_tune_of(&m, KERN_POLICY_AUTO)}, &p));
  ck_assert_ptr_nonnull(p->steps);
  stages_verify(p, KERN_POLICY_AUTO, "high addresses");
  cdag_graph *low = NULL;
  CK_OK(exec_lower_plan(p, NULL, &m, KERN_POLICY_AUTO, &low));
  ck_assert_int_gt(low->nscratch, 0);   /* the lowering's staging only: above every plan address */
  for (int64_t k = 0; k < low->nscratch; k++)
    ck_assert_msg(low->scr_addr[k] >= 0x7ffe000000000040ull, "staging at 0x%llx", (unsigned long long)low->scr_addr[k]);
  double t;
  loggp_params lp = loggp_defaults();
  CK_OK(exec_loggp(low, &lp, &t, NULL));
  ck_assert_msg(t >= 0.7, "%.3f us", t);
  ir_graph_free(low);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* A buffer reused for reductions of two ops: the second reduce starts a stage (stage.h), so
   the plan has stages and no computation; lowered, each stage verifies and the whole models. */
START_TEST(mixed_reductions_in_stages) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 3\n"
                                       "rank 0 { send 8b to 1 addr 0x10\n send 8b to 2 addr 0x10 }\n"
                                       "rank 1 {\n recv 8b from 0 addr 0x100\n reduce 2 int32 sum in 0x100 inout 0x200\n"
                                       " reduce 2 int32 max in 0x300 inout 0x200\n send 8b to 2 addr 0x200\n}\n"
                                       "rank 2 { recv 8b from 0 addr 0x100\n recv 8b from 1 addr 0x10 }\n");
  times t = model_of(g, KERN_POLICY_AUTO, "mixed reductions", 1);
  ck_assert_int_eq(t.ncalc, 0);
  ck_assert(t.plan > 0);
  cdag_graph_free(&g);
}
END_TEST

Suite *cdag_lower_stages_suite(void) {
  Suite *s = suite_create("lower_stages");
  TCase *t = tcase_create("lower_stages");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, pipeline_in_stages);
  tcase_add_test(t, computed_first_in_parallel);
  tcase_add_test(t, random_graphs_keep_the_bounds);
  tcase_add_test(t, hoist_breaks_the_bound);
  tcase_add_test(t, dead_transfer_is_no_causality);
  tcase_add_test(t, returned_bytes_are_no_causality);
  tcase_add_test(t, graph_as_written_computes);
  tcase_add_test(t, calc_path_by_hand);
  tcase_add_test(t, staging_above_high_addresses);
  tcase_add_test(t, mixed_reductions_in_stages);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_lower_stages_suite)

/* cdag tests — tests/model/test_lower.c: the self-test of lowering, GOAL export and LogGP.
 *
 * Each collective, written with point-to-point messages, is analyzed into a one-collective
 * plan; the plan is lowered with the circulant kernels (CDAG_KERNEL=cdag), the census and MPI's
 * algorithms; the lowered graph must give the plan's bytes in the simulator and go back
 * through cdag's own detector as the same collective (kind, members, root) with nothing
 * residual. Every lowered graph is written as GOAL and checked against LogGOPSim's grammar
 * (goal_grammar.h), as is `cdag goal` of each shipped example with and without --plan. A
 * local message of regular pieces lowers per run, not per piece. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "detect/detect.h"
#include "model/lower.h"
#include "exec/sim/sim.h"
#include "match/match.h"
#include "model/goal_grammar.h"
#include "format/format.h"
#include "support/support.h"

typedef enum { K_BCAST, K_ALLGATHER, K_ALLGATHERV, K_REDUCE, K_ALLREDUCE, K_GATHER, K_SCATTER, K_ALLTOALL, K_BARRIER } kcase;

static void grammar_ok(const cdag_graph *g) {
  char *text = NULL, err[256];
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(exec_goal_write(g, f, 0.1), CDAG_OK);
  fclose(f);
  ck_assert_msg(goal_check(text, len, err, sizeof err) == 0, "GOAL grammar: %s", err);
  free(text);
}

/* The original: member set s, root member index root, block/count size. */
static cdag_graph *original(kcase k, int nprocs, const gen_set *s, int root, uint64_t bytes) {
  cdag_graph *g;
  ck_assert_int_eq(cdag_graph_create_global(nprocs, &g), CDAG_OK);
  gen_bufs b = {.data = 0x10000, .out = 0x100000, .scratch = 0x1000000, .tag = 5};
  int rc = CDAG_OK;
#define RK(i) (s->first + (i) * s->stride)
  switch (k) {
    case K_BCAST: rc = gen_bcast_linear(g, s, root, bytes, &b); break;
    case K_ALLGATHER: rc = gen_allgather_ring(g, s, bytes, &b); break;
    case K_ALLGATHERV: {
      uint64_t off[1024];
      off[0] = 0;
      for (int i = 0; i < s->n; i++) off[i + 1] = off[i] + bytes * (uint64_t)(i % 3 + 1);
      for (int i = 0; i < s->n && rc == CDAG_OK; i++)
        for (int j = 0; j < s->n && rc == CDAG_OK; j++) {
          if (i == j) continue;
          uint64_t len = off[i + 1] - off[i];
          if ((rc = cdag_rank_send(g, RK(i), b.data, len, RK(j), 1, NULL)) == CDAG_OK)
            rc = cdag_rank_recv(g, RK(j), b.out + off[i], len, RK(i), 1, NULL);
        }
      break;
    }
    case K_REDUCE:
      rc = cdag_rank_copy_local(g, RK(root), b.data, b.out, bytes * 4, NULL);
      for (int i = 0; i < s->n && rc == CDAG_OK; i++) {
        if (i == root) continue;
        uint64_t tmp = b.scratch + (uint64_t)i * bytes * 4;
        rc = cdag_rank_scratch(g, RK(root), tmp, bytes * 4);
        if (rc == CDAG_OK) rc = cdag_rank_send(g, RK(i), b.data, bytes * 4, RK(root), 1, NULL);
        if (rc == CDAG_OK) rc = cdag_rank_recv(g, RK(root), tmp, bytes * 4, RK(i), 1, NULL);
        if (rc == CDAG_OK) rc = cdag_rank_reduce_local(g, RK(root), tmp, b.out, bytes, CDAG_INT32, CDAG_SUM, NULL);
      }
      break;
    case K_ALLREDUCE: rc = gen_allreduce_linear(g, s, root, bytes, CDAG_SUM, &b); break;
    case K_GATHER: rc = gen_gather_linear(g, s, root, bytes, &b); break;
    case K_SCATTER: rc = gen_scatter_linear(g, s, root, bytes, &b); break;
    case K_ALLTOALL: rc = gen_alltoall_linear(g, s, bytes, &b); break;
    case K_BARRIER: rc = gen_barrier_dissemination(g, s, &b); break;
  }
#undef RK
  ck_assert_msg(rc == CDAG_OK, "generator: %s", cdag_error_message());
  return g;
}

static const det_kind want_kind[] = {DET_BCAST, DET_ALLGATHER, DET_ALLGATHERV, DET_REDUCE, DET_ALLREDUCE,
                                     DET_GATHER, DET_SCATTER, DET_ALLTOALL, DET_BARRIER};

/* The one collective of p, its members and root as expected. */
static void one_coll(const cdag_plan *p, kcase k, const gen_set *s, int root, const char *what) {
  ck_assert_msg(p->ncolls == 1, "%s: %lld collectives", what, (long long)p->ncolls);
  const det_coll *c = &p->colls[0];
  ck_assert_msg(c->kind == want_kind[k], "%s: found %s", what, det_kind_name(c->kind));
  ck_assert_int_eq(c->nranks, s->n);
  for (int i = 0; i < s->n; i++) ck_assert_int_eq(p->ranks[c->ranks_first + i], s->first + i * s->stride);
  if (c->root >= 0 || k == K_BCAST || k == K_REDUCE || k == K_GATHER || k == K_SCATTER)
    ck_assert_int_eq(c->root, s->first + root * s->stride);
  ck_assert_msg(p->nmsgs == 0 && p->nreds == 0, "%s: residual %lld messages, %lld reductions", what, (long long)p->nmsgs,
                (long long)p->nreds);
}

/* Lowering pairs its messages itself (exec_lower_pairs): the pairs are match_run's, and the
   model with them is the model that matches. */
static void pairs_are_matched(const cdag_graph *low, const char *what) {
  int32_t *pairs = NULL;
  match_result m = {0};
  ck_assert_msg(exec_lower_pairs(low, &pairs) == CDAG_OK, "%s: %s", what, cdag_error_message());
  ck_assert_msg(match_run(low, &m) == CDAG_OK, "%s: %s", what, cdag_error_message());
  for (int64_t i = 0; i < low->nops; i++)
    ck_assert_msg(pairs[i] == m.partner[i], "%s: op %lld paired with %d, matched with %d", what, (long long)i, pairs[i],
                  m.partner[i]);
  double t, tp;
  loggp_params lp = loggp_defaults();
  ck_assert_int_eq(exec_loggp(low, &lp, &t, NULL), CDAG_OK);
  ck_assert_int_eq(exec_loggp_paired(low, pairs, &lp, &tp, NULL), CDAG_OK);
  ck_assert_msg(t == tp, "%s: %.6f us matched, %.6f us paired", what, t, tp);
  match_free(&m);
  free(pairs);
}

/* Original -> plan -> lowered (policy, forced algorithm) -> same bytes, same collective. */
static void roundtrip(kcase k, int nprocs, gen_set s, int root, uint64_t bytes, kern_policy policy, int force_alg) {
  char what[160];
  snprintf(what, sizeof what, "kind %d p=%d members %d+%d*%d root %d size %llu policy %d alg %d", (int)k, nprocs, s.first,
           s.stride, s.n, root, (unsigned long long)bytes, (int)policy, force_alg);
  cdag_graph *g = original(k, nprocs, &s, root, bytes), *low = NULL;
  cdag_plan *p = NULL, *p2 = NULL;
  ck_assert_msg(cdag_analyze(g, NULL, &p) == CDAG_OK, "%s: %s", what, cdag_error_message());
  one_coll(p, k, &s, root, what);
  kern_model m = kern_model_default();
  ck_assert_int_eq(kern_choose_plan(p, &m, policy), CDAG_OK);
  if (force_alg) p->chosen->coll[0].alg = force_alg;
  ck_assert_msg(exec_lower_plan(p, NULL, &m, policy, &low) == CDAG_OK, "%s: %s", what, cdag_error_message());
  ck_assert_msg(exec_verify(low, p, 0x1234 + (uint64_t)nprocs, 1) == CDAG_OK, "%s (%s): %s", what, p->chosen->coll[0].name,
                cdag_error_message());
  ck_assert_msg(cdag_analyze(low, NULL, &p2) == CDAG_OK, "%s: %s", what, cdag_error_message());
  snprintf(what + strlen(what), sizeof what - strlen(what), " lowered by %d", p->chosen->coll[0].alg);
  one_coll(p2, k, &s, root, what);
  double t;
  loggp_params lp = loggp_defaults();
  ck_assert_int_eq(exec_loggp(low, &lp, &t, NULL), CDAG_OK);
  ck_assert(t > 0);
  if (s.n <= 12) grammar_ok(low);
  cdag_plan_free(&p2);
  cdag_plan_free(&p);
  ir_graph_free(low);
  cdag_graph_free(&g);
}

/* Member counts: 4..40 in a scaled random subset, plus 2, 3 and a few larger. */
static int sizes(int *out) {
  int n = 0;
  static const int fixed[] = {3, 4, 5, 7, 8, 13, 16, 33, 40, 64, 100};
  size_t nfixed = sizeof fixed / sizeof *fixed - (cdag_test_thorough() ? 0 : 2);   /* 64, 100: 90% of valgrind's time */
  for (size_t i = 0; i < nfixed; i++) out[n++] = fixed[i];
  long extra = cdag_test_iterations(6);
  for (long i = 0; i < extra; i++) out[n++] = 4 + (int)((i * 7919 + 13) % 37);
  return n;
}

START_TEST(circulant_kernels_detected) {
  int ps[64], np = sizes(ps);
  for (int t = 0; t < np; t++) {
    int p = ps[t];
    gen_set all = {0, 1, p};
    roundtrip(K_BCAST, p, all, p / 3, 1000 + (uint64_t)p, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
    roundtrip(K_BCAST, p, all, 0, 5, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
    roundtrip(K_ALLGATHER, p, all, 0, 24, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
    roundtrip(K_ALLGATHERV, p, all, 0, 8, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
    roundtrip(K_REDUCE, p, all, p - 1, 300, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
    roundtrip(K_ALLREDUCE, p, all, 0, 300, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
    roundtrip(K_ALLREDUCE, p, all, 0, 16, KERN_POLICY_CDAG, KERN_ALG_CENSUS);
  }
}
END_TEST

START_TEST(circulant_on_subsets) {
  /* every third rank of 3n + 2, and a block of ranks: proper subsets of >= 4 members */
  for (int n = 4; n <= 12; n += 3) {
    gen_set strided = {1, 3, n}, block = {2, 1, n};
    roundtrip(K_BCAST, 3 * n + 2, strided, 1, 777, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
    roundtrip(K_REDUCE, 3 * n + 2, strided, n - 1, 64, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
    roundtrip(K_ALLGATHER, n + 5, block, 0, 16, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
    roundtrip(K_ALLREDUCE, n + 5, block, 0, 40, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
  }
}
END_TEST

START_TEST(mpi_algorithms_detected) {
  static const int ps[] = {3, 4, 5, 6, 7, 8, 11, 16, 21};
  for (size_t t = 0; t < sizeof ps / sizeof *ps; t++) {
    int p = ps[t];
    gen_set all = {0, 1, p};
    roundtrip(K_BCAST, p, all, p / 2, 100, KERN_POLICY_MPI, 0);
    roundtrip(K_ALLGATHER, p, all, 0, 16, KERN_POLICY_MPI, 0);
    roundtrip(K_ALLGATHERV, p, all, 0, 8, KERN_POLICY_MPI, 0);
    roundtrip(K_REDUCE, p, all, 1, 20, KERN_POLICY_MPI, 0);
    roundtrip(K_ALLREDUCE, p, all, 0, 20, KERN_POLICY_MPI, 0);
    roundtrip(K_GATHER, p, all, p - 1, 16, KERN_POLICY_MPI, 0);
    roundtrip(K_SCATTER, p, all, 1, 16, KERN_POLICY_MPI, 0);
    roundtrip(K_ALLTOALL, p, all, 0, 8, KERN_POLICY_MPI, 0);
    roundtrip(K_BARRIER, p, all, 0, 0, KERN_POLICY_MPI, 0);
  }
}
END_TEST

/* Forced block counts (CDAG_BLOCKS, as the kernels read it): multi-block schedules, where a
   reduction that counted a block twice would show. */
START_TEST(circulant_block_counts) {
  static const int nbs[] = {1, 2, 3, 5, 8, 13};
  static const int ps[] = {3, 5, 6, 9, 17, 24};
  char v[16];
  for (size_t b = 0; b < sizeof nbs / sizeof *nbs; b += cdag_test_thorough() ? 1 : 2) {   /* 1, 3, 8 */
    snprintf(v, sizeof v, "%d", nbs[b]);
    setenv("CDAG_BLOCKS", v, 1);
    for (size_t t = 0; t < sizeof ps / sizeof *ps; t++) {
      gen_set all = {0, 1, ps[t]};
      roundtrip(K_BCAST, ps[t], all, 1, 97, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
      roundtrip(K_REDUCE, ps[t], all, ps[t] / 2, 50, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
      roundtrip(K_ALLREDUCE, ps[t], all, 0, 31, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT);
      roundtrip(K_ALLGATHERV, ps[t], all, 0, 11, KERN_POLICY_CDAG, KERN_ALG_CIRCULANT); /* 11..33 B each */
    }
  }
  unsetenv("CDAG_BLOCKS");
}
END_TEST

/* Whole plans (collectives, residual messages and reductions, syncs) of the shipped graphs
   and of random graphs: the lowered graph gives the plan's bytes under every policy. */
static void lower_whole(cdag_graph *g, const char *what) {
  cdag_plan *p = NULL;
  ck_assert_msg(cdag_analyze(g, NULL, &p) == CDAG_OK, "%s: %s", what, cdag_error_message());
  for (int pol = KERN_POLICY_AUTO; pol <= KERN_POLICY_CDAG; pol++) {
    cdag_graph *low = NULL;
    kern_model m = kern_model_default();
    ck_assert_int_eq(kern_choose_plan(p, &m, (kern_policy)pol), CDAG_OK);
    ck_assert_msg(exec_lower_plan(p, NULL, &m, (kern_policy)pol, &low) == CDAG_OK, "%s: %s", what, cdag_error_message());
    ck_assert_msg(exec_verify(low, p, 99, 1) == CDAG_OK, "%s policy %d: %s", what, pol, cdag_error_message());
    double t;
    loggp_params lp = loggp_defaults();
    ck_assert_msg(exec_loggp(low, &lp, &t, NULL) == CDAG_OK, "%s: %s", what,
                  cdag_error_message());
    pairs_are_matched(low, what);
    grammar_ok(low);
    ir_graph_free(low);
  }
  grammar_ok(g);
  cdag_plan_free(&p);
}

START_TEST(whole_plans_of_files) {
  static const char *files[] = {"examples/graphs/allreduce_ring4.cdag", "examples/graphs/alltoall_butterfly4.cdag",
                                "examples/graphs/bcast_binomial8.cdag", "examples/graphs/halo1d8.cdag",
                                "tests/data/mixed.cdag", "tests/data/detect/allgather_bruck6.cdag",
                                "tests/data/detect/barrier_dissemination5.cdag", "tests/data/detect/grid_bcast4x4.cdag",
                                "tests/data/detect/halo2d_torus3x3.cdag", "tests/data/goal/binomial_reduce8.goal",
                                "tests/data/goal/dissemination8.goal", "tests/data/goal/calc_cpu_nic.goal"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    char path[1024];
    cdag_graph *g = NULL;
    snprintf(path, sizeof path, "%s/%s", CDAG_SOURCE_DIR, files[i]);
    ck_assert_msg(cdag_graph_load(path, &g) == CDAG_OK, "%s: %s", path, cdag_error_message());
    lower_whole(g, files[i]);
    cdag_graph_free(&g);
  }
}
END_TEST

START_TEST(whole_plans_of_random_graphs) {
  long n = cdag_test_iterations(150);
  for (long i = 0; i < n; i++) {
    cdag_graph *g = NULL;
    char what[64];
    snprintf(what, sizeof what, "random graph %ld", i);
    ck_assert_int_eq(gen_random_graph(0x10e4 + (uint64_t)i, NULL, &g), CDAG_OK);
    ck_assert_int_eq(ir_finalize(g), CDAG_OK);
    lower_whole(g, what);
    cdag_graph_free(&g);
  }
}
END_TEST

/* LogGP by hand: one message of s bytes costs o + L + (s-1) G + o. */
START_TEST(loggp_by_hand) {
  cdag_graph *g;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 0, 0, 101, 1, 0, NULL), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 1, 0, 101, 0, 0, NULL), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 0, 0, 101, 1, 0, NULL), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 1, 0, 101, 0, 0, NULL), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  loggp_params lp = {.L = 10, .o = 1, .g = 5, .G = 0.5, .S = 1000};
  double t;
  int last;
  ck_assert_int_eq(exec_loggp(g, &lp, &t, &last), CDAG_OK);
  /* first message: sent at 0 (NIC busy until 5 + 100 * 0.5 = 55), arrives at 1 + 10 = 11, its
     receive holds the CPU until 11 + 1 + 50 = 62 and the NIC until 66; second: sent at 55,
     arrives 66, received until 66 + 1 + 50 = 117 */
  ck_assert_double_eq_tol(t, 117, 1e-9);
  ck_assert_int_eq(last, 1);
  cdag_graph_free(&g);
}
END_TEST

/* Computation stays in the plan: a binomial bcast on 8 ranks where the root computes 100 us
   before sending and every other rank 100 us on what it received before forwarding. As
   written the computations chain (4 x 100 us); in the plan the root's runs before the
   bcast and the others' after it, in parallel (2 x 100 us), not dropped. */
START_TEST(calc_kept_in_the_plan) {
  char text[4096];
  size_t n = (size_t)snprintf(text, sizeof text, "num_ranks 8\n");
  for (int r = 0; r < 8; r++) {
    n += (size_t)snprintf(text + n, sizeof text - n, "rank %d {\n", r);
    int mask = 1, i = 0, last = -1;
    for (; mask < 8; mask <<= 1)
      if (r & mask) {
        n += (size_t)snprintf(text + n, sizeof text - n, "l%d: recv 64b from %d tag 0\nl%d: calc 100000\nl%d requires l%d\n",
                              i, r - mask, i + 1, i + 1, i);
        last = i + 1;
        i += 2;
        break;
      }
    if (mask >= 8) {
      n += (size_t)snprintf(text + n, sizeof text - n, "l%d: calc 100000\n", i);
      last = i++;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
      if (r + mask < 8) {
        n += (size_t)snprintf(text + n, sizeof text - n, "l%d: send 64b to %d tag 0\nl%d requires l%d\n", i, r + mask, i, last);
        i++;
      }
    n += (size_t)snprintf(text + n, sizeof text - n, "}\n");
  }
  cdag_graph *g = NULL, *low = NULL;
  ck_assert_msg(ir_load_mem(text, n, "bcast_calc.goal", NULL, &g) == CDAG_OK, "%s", cdag_error_message());
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  kern_model m = kern_model_default();
  CK_OK(kern_choose_plan(p, &m, KERN_POLICY_MPI));
  CK_OK(exec_lower_plan(p, NULL, &m, KERN_POLICY_MPI, &low));
  double before, graph, plan;
  loggp_params lp = loggp_defaults();
  CK_OK(exec_loggp(low, &lp, &before, NULL));
  ir_graph_free(low);
  CK_OK(exec_lower_plan(p, g, &m, KERN_POLICY_MPI, &low));
  CK_OK(exec_loggp(low, &lp, &plan, NULL));
  pairs_are_matched(low, "bcast with calc");
  CK_OK(exec_loggp(g, &lp, &graph, NULL));
  int64_t calcs = 0;
  for (int64_t i = 0; i < low->nops; i++) calcs += low->kind[i] == IR_CALC && low->bytes[i] == 100000;
  ck_assert_int_eq(calcs, 8);
  ck_assert(before < 10);                                  /* communication alone */
  ck_assert_msg(fabs(graph - 404.2378) < 1e-6, "graph %.9f", graph);   /* four computations in a chain */
  ck_assert_double_eq_tol(plan, 200 + before, 1e-6);       /* root's, bcast, everyone's */
  cdag_plan_free(&p);
  ir_graph_free(low);
  cdag_graph_free(&g);
}
END_TEST

/* The graph of `text` (file name `name`), analysed, its algorithms chosen (policy auto) and
   its plan lowered (*low). */
static cdag_plan *lowered_text(const char *text, size_t n, const char *name, cdag_graph **g, cdag_graph **low) {
  ck_assert_msg(ir_load_mem(text, n, name, NULL, g) == CDAG_OK, "%s", cdag_error_message());
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(*g, NULL, &p));
  kern_model m = kern_model_default();
  CK_OK(kern_choose_plan(p, &m, KERN_POLICY_AUTO));
  CK_OK(exec_lower_plan(p, NULL, &m, KERN_POLICY_AUTO, low));
  return p;
}

/* The lowered plan low of p (graph g) sends one message and sums twice, and verifies; all
   three freed. */
static void one_send_two_sums(cdag_plan *p, cdag_graph *g, cdag_graph *low) {
  int64_t sends = 0, reduces = 0;
  for (int64_t i = 0; i < low->nops; i++) sends += low->kind[i] == IR_SEND, reduces += low->kind[i] == IR_REDUCE;
  ck_assert_int_eq(sends, 1);
  ck_assert_int_eq(reduces, 2);
  CK_OK(exec_verify(low, p, 0x5eed, 1));
  cdag_plan_free(&p);
  ir_graph_free(low);
  cdag_graph_free(&g);
}

/* A remote contribution counted twice travels once: rank 1 sends x to rank 0 twice, and
   rank 0 adds both copies to its own y (out = y + x + x, x a contribution of multiplicity 2).
   The runtime sends x once into its reduction buffer and adds it twice; the lowering the
   price models must do the same: one message, two sums, and the lowered plan verifies. */
START_TEST(repeated_contribution_sent_once) {
  static const char text[] = "num_ranks 2\n"
                             "rank 0 {\n  scratch 0x1000 8\n  scratch 0x2000 8\n"
                             "  recv 8b from 1 tag 1 addr 0x1000\n  recv 8b from 1 tag 2 addr 0x2000\n"
                             "  reduce 1 int64 sum in 0x1000 inout 0x3000\n  reduce 1 int64 sum in 0x2000 inout 0x3000\n}\n"
                             "rank 1 {\n  send 8b to 0 tag 1 addr 0x100\n  send 8b to 0 tag 2 addr 0x100\n}\n";
  cdag_graph *g = NULL, *low = NULL;
  cdag_plan *p = lowered_text(text, sizeof text - 1, "twice.cdag", &g, &low);
  ck_assert_int_eq(p->nreds, 1);
  const df_set *set = &p->sst->sets[p->reds[0].set];
  uint32_t twice = 0;
  for (int32_t u = 0; u < set->nruns; u++)
    if (p->sst->runs[set->first + u].lo == 1) twice = p->sst->runs[set->first + u].mult;
  ck_assert_uint_eq(twice, 2);
  one_send_two_sums(p, g, low);
}
END_TEST

/* A rank's contributions to another's reductions travel in one message, as the runtime packs
   them: rank 1 adds its x into rank 0's y and its z into rank 0's w at 64 addresses apart (no
   tuple extends the other). Two reductions, one message, and the lowered plan verifies. */
START_TEST(contributions_of_a_pair_packed) {
  static const char text[] = "num_ranks 2\n"
                             "rank 0 {\n  scratch 0x1000 8\n  scratch 0x2000 8\n"
                             "  recv 8b from 1 tag 1 addr 0x1000\n  recv 8b from 1 tag 2 addr 0x2000\n"
                             "  reduce 1 int64 sum in 0x1000 inout 0x3000\n  reduce 1 int64 sum in 0x2000 inout 0x3040\n}\n"
                             "rank 1 {\n  send 8b to 0 tag 1 addr 0x100\n  send 8b to 0 tag 2 addr 0x180\n}\n";
  cdag_graph *g = NULL, *low = NULL;
  cdag_plan *p = lowered_text(text, sizeof text - 1, "pair.cdag", &g, &low);
  ck_assert_int_eq(p->nreds, 2);
  one_send_two_sums(p, g, low);
}
END_TEST

/* A datatype's blocks lower per run, not per block: two vector unpacks of one origin (256
   blocks of 16 B each, written every 32 B), a local message of two strided transfers whose
   origins interleave, lower to one strided copy into staging and one out of it per unpack,
   not 1,024 copies, with the plan's bytes and the cost of its bytes. */
START_TEST(regular_pieces_lower_as_runs) {
  static const char text[] = "num_ranks 1\nrank 0 {\n"
                             "copy 4096b from 0x10000 to 0x100000 blocks 256 to_stride 32\n"
                             "copy 4096b from 0x10000 to 0x200000 blocks 256 to_stride 32\n}\n";
  cdag_graph *g = NULL, *low = NULL;
  cdag_plan *p = lowered_text(text, sizeof text - 1, "unpack.cdag", &g, &low);
  ck_assert_int_eq(p->nmsgs, 1);
  ck_assert_int_eq(p->msgs[0].n, 2);
  ck_assert_int_eq(p->xfers[0].blocks, 256);
  ck_assert_int_eq(p->xfers[1].blocks, 256);
  ck_assert_int_eq(low->nops, 4);
  for (int64_t i = 0; i < low->nops; i++) {
    ir_blocks b = ir_copy_blocks(low, i);
    ck_assert_int_eq(low->kind[i], IR_COPY);
    ck_assert_int_eq(b.n, 256);
    ck_assert_int_eq(b.len, 16);
  }
  CK_OK(exec_verify(low, p, 0x5eed, 1));
  double t;
  loggp_params lp = loggp_defaults();
  CK_OK(exec_loggp(low, &lp, &t, NULL));
  ck_assert_double_eq_tol(t, 4 * 4096 * lp.copy, 1e-9);   /* every byte into staging and out */
  cdag_plan_free(&p);
  ir_graph_free(low);
  cdag_graph_free(&g);
}
END_TEST

/* The plan of text (price off: the plan itself, whatever it costs) lowered twice: for the
   simulator (*low) and as the price lowers it (*wide, exec_lower_plan_modelled). */
static cdag_plan *lowered_both(const char *text, const char *name, cdag_graph **g, cdag_graph **low, cdag_graph **wide) {
  ck_assert_msg(ir_load_mem(text, strlen(text), name, NULL, g) == CDAG_OK, "%s", cdag_error_message());
  cdag_options o;
  cdag_options_init(&o);
  o.price = 0;
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(*g, &o, &p));
  kern_model m = kern_model_default();
  CK_OK(kern_choose_plan(p, &m, KERN_POLICY_AUTO));
  CK_OK(exec_lower_plan(p, NULL, &m, KERN_POLICY_AUTO, low));
  CK_OK(exec_lower_plan_modelled(p, NULL, &m, KERN_POLICY_AUTO, wide));
  return p;
}

/* Both lowerings of p leave the plan's bytes and model the same time; all freed. */
static void same_bytes_same_time(cdag_plan *p, cdag_graph *g, cdag_graph *low, cdag_graph *wide) {
  CK_OK(exec_verify(low, p, 0x5eed, 1));
  int rc = exec_verify(wide, p, 0x5eed, 1);
  ck_assert_msg(rc == CDAG_OK, "%s", cdag_error_message());
  double t_low, t_wide;
  loggp_params lp = loggp_defaults();
  CK_OK(exec_loggp(low, &lp, &t_low, NULL));
  CK_OK(exec_loggp(wide, &lp, &t_wide, NULL));
  ck_assert_double_eq_tol(t_wide, t_low, 1e-9 * t_low);
  cdag_plan_free(&p);
  ir_graph_free(low);
  ir_graph_free(wide);
  cdag_graph_free(&g);
}

/* A column of a wide grid (512 doubles, 8 KiB apart) sent to the other rank and unpacked
   into its ghost column: the price's lowering (exec_lower_plan_modelled) keeps each side of a
   message's pieces one strided copy at that stride, where the simulated one makes a copy per
   element (its runs stay within 8 times their length); both model the same time. */
START_TEST(wide_strides_lower_as_runs_when_modelled) {
  static const char text[] = "num_ranks 2\n"
                             "rank 0 {\n  copy 4096b from 0x100000000 to 0x1000 blocks 512 from_stride 8192\n"
                             "  send 4096b to 1 addr 0x1000\n}\n"
                             "rank 1 {\n  recv 4096b from 0 addr 0x2000\n"
                             "  copy 4096b from 0x2000 to 0x100000008 blocks 512 to_stride 8192\n}\n";
  cdag_graph *g = NULL, *low = NULL, *wide = NULL;
  cdag_plan *p = lowered_both(text, "column.cdag", &g, &low, &wide);
  ck_assert_int_ge(low->nops, 512);
  ck_assert_int_le(wide->nops, 8);
  int64_t strided = 0;
  for (int64_t i = 0; i < wide->nops; i++) strided += ir_is_strided(wide, i);
  ck_assert_int_ge(strided, 1);
  same_bytes_same_time(p, g, low, wide);   /* its hulls are 4 MiB here */
}
END_TEST

/* Blocks at no one stride (a struct datatype's elements: 16 B blocks at 0, 48, 16 and 80 of
   each 128 B record, 64 records) sent to the other rank and unpacked there the same way, and
   one origin packed twice into a local message: the price's lowering makes a listed copy of
   each side's blocks (the local message's overlapping origins split in halves until each part
   is disjoint), where the simulated one makes a copy per block; both verify and model the
   same time. */
START_TEST(irregular_pieces_lower_as_listed_copies_when_modelled) {
  enum { RECORDS = 64, BLOCKS = 4 * RECORDS };
  static const int64_t at[4] = {0, 48, 16, 80};
  char steps[BLOCKS * 8], text[4 * sizeof steps + 1024];
  size_t k = 0;
  for (int i = 1; i < BLOCKS; i++)
    k += (size_t)snprintf(steps + k, sizeof steps - k, " %lld",
                          (long long)((i / 4) * 128 + at[i % 4] - ((i - 1) / 4) * 128 - at[(i - 1) % 4]));
  snprintf(text, sizeof text,
           "num_ranks 2\n"
           "rank 0 {\n  copy %d from 0x100000 to 0x1000 blocks %d from_steps%s\n  send %d to 1 addr 0x1000\n"
           "  copy %d from 0x200000 to 0x300000 blocks %d to_steps%s\n"
           "  copy %d from 0x200000 to 0x400000 blocks %d to_steps%s\n}\n"
           "rank 1 {\n  recv %d from 0 addr 0x2000\n  copy %d from 0x2000 to 0x100000 blocks %d to_steps%s\n}\n",
           16 * BLOCKS, BLOCKS, steps, 16 * BLOCKS, 16 * BLOCKS, BLOCKS, steps, 16 * BLOCKS, BLOCKS, steps,
           16 * BLOCKS, 16 * BLOCKS, BLOCKS, steps);
  cdag_graph *g = NULL, *low = NULL, *wide = NULL;
  cdag_plan *p = lowered_both(text, "records.cdag", &g, &low, &wide);
  ck_assert_int_ge(low->nops, 2 * BLOCKS);
  ck_assert_int_le(wide->nops, 16);
  int64_t listed = 0;
  for (int64_t i = 0; i < wide->nops; i++) listed += ir_is_listed(wide, i);
  ck_assert_int_ge(listed, 3);
  same_bytes_same_time(p, g, low, wide);
}
END_TEST

START_TEST(grammar_checker_rejects) {
  static const char *bad[] = {
      "rank 0 {\n}\n",                                            /* no num_ranks */
      "num_ranks 2\nrank 0 {\n}\n",                               /* rank 1 missing */
      "num_ranks 1\nrank 0 {\nl1: send 8b to 0 addr 0x10\n}\n",   /* cdag extension */
      "num_ranks 1\nrank 0 {\nl1: copy 8b from 0 to 8\n}\n",      /* cdag op */
      "num_ranks 1\nrank 0 {\nl2 requires l1\nl1: calc 5\nl2: calc 4\n}\n", /* label used before defined */
      "num_ranks 1\n# comment\nrank 0 {\n}\n",                    /* '#' comments are cdag's */
      "num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\nrank 1 {\n}\n", /* size without b */
      "num_ranks 1\nrank 0 {\nl1: calc 5 nic 1\n}\n",             /* calc takes no nic */
  };
  static const char *good =
      "num_ranks 2\n// c\nrank 0 {\n  l1: send 8b to 1 tag 3 cpu 0 nic 0\n  /* x */ calc 7\n  l2: calc 4 cpu 1\n"
      "  l2 requires l1\n}\nrank 1 {\nl1: recv 8 b from -1 tag -1\n}\n";
  char err[256];
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    ck_assert_msg(goal_check(bad[i], strlen(bad[i]), err, sizeof err) != 0, "accepted bad input %zu", i);
  ck_assert_msg(goal_check(good, strlen(good), err, sizeof err) == 0, "%s", err);
}
END_TEST

/* `cdag goal` of every shipped example, with and without --plan, passes the grammar. */
START_TEST(tool_goal_of_examples) {
  static const char *ex[] = {"allreduce_ring4", "alltoall_butterfly4", "bcast_binomial8", "halo1d8"};
  for (size_t i = 0; i < sizeof ex / sizeof *ex; i++)
    for (int plan = 0; plan < 2; plan++) {
      char cmd[1024], err[256];
      snprintf(cmd, sizeof cmd, "'%s' goal %s '%s/examples/graphs/%s.cdag'", CDAG_TOOL, plan ? "--plan" : "",
               CDAG_SOURCE_DIR, ex[i]);
      FILE *f = popen(cmd, "r");
      ck_assert_ptr_nonnull(f);
      char *text = NULL;
      size_t cap = 0, len = 0, n;
      char buf[4096];
      while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + n > cap) text = realloc(text, cap = 2 * (len + n));
        memcpy(text + len, buf, n);
        len += n;
      }
      ck_assert_int_eq(pclose(f), 0);
      ck_assert_msg(len > 0 && goal_check(text, len, err, sizeof err) == 0, "%s: %s", cmd, err);
      free(text);
    }
}
END_TEST

Suite *cdag_lower_suite(void) {
  Suite *s = suite_create("lower");
  TCase *t = tcase_create("lower");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, circulant_kernels_detected);
  tcase_add_test(t, circulant_on_subsets);
  tcase_add_test(t, mpi_algorithms_detected);
  tcase_add_test(t, circulant_block_counts);
  tcase_add_test(t, whole_plans_of_files);
  tcase_add_test(t, whole_plans_of_random_graphs);
  tcase_add_test(t, loggp_by_hand);
  tcase_add_test(t, calc_kept_in_the_plan);
  tcase_add_test(t, repeated_contribution_sent_once);
  tcase_add_test(t, contributions_of_a_pair_packed);
  tcase_add_test(t, regular_pieces_lower_as_runs);
  tcase_add_test(t, wide_strides_lower_as_runs_when_modelled);
  tcase_add_test(t, irregular_pieces_lower_as_listed_copies_when_modelled);
  tcase_add_test(t, grammar_checker_rejects);
  tcase_add_test(t, tool_goal_of_examples);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_lower_suite)

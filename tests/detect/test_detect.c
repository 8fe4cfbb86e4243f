/* cdag tests — tests/detect/test_detect.c: every signature, found where it should be.
 *
 * Hand-written patterns (tests/support/gen_patterns.c) with the exact collectives expected:
 * kind, root, member set, transfers replaced, and what must stay residual; each plan is also
 * verified in the simulator (graph and plan from the same memory, byte for byte). Then
 * randomized differential tests: thousands of random instances (sizes, roots, subsets,
 * addresses, extra random traffic) must be detected and must verify. */
#include <string.h>

#include "check_main.h"
#include "support/graphs.h"
#include "detect/detect.h"
#include "exec/pipeline.h"
#include "exec/sim/sim.h"
#include "support/support.h"

typedef struct {
  det_kind kind;
  int root;        /* -1 non-rooted */
  int nranks;      /* 0: all ranks */
  int first;       /* first member (subsets) */
} want;

static const gen_bufs B = {.data = 0x10000, .out = 0x20000, .scratch = 0x40000, .tag = 0};
static const gen_bufs B2 = {.data = 0x50000, .out = 0x60000, .scratch = 0x70000, .tag = 50};

static void expect(cdag_graph *g, const cdag_options *o, const want *w, int nw, int64_t residual) {
  cdag_plan *p = cdag_test_analyse(g, o);
  if (p->ncolls != nw) cdag_plan_report(p, stderr, 0);
  ck_assert_int_eq(p->ncolls, nw);
  for (int i = 0; i < nw; i++) {
    const det_coll *c = &p->colls[i];
    ck_assert_msg(c->kind == w[i].kind, "collective %d is %s, expected %s", i, det_kind_name(c->kind), det_kind_name(w[i].kind));
    if (w[i].root >= 0) ck_assert_int_eq(c->root, w[i].root);
    ck_assert_int_eq(c->nranks, w[i].nranks ? w[i].nranks : p->nprocs);
    if (w[i].nranks) ck_assert_int_eq(p->ranks[c->ranks_first], w[i].first);
  }
  if (residual >= 0) ck_assert_int_eq(p->nxfers + p->nreds, residual);
  cdag_plan_free(&p);
}

START_TEST(bcasts) {
  cdag_graph *g = cdag_test_graph(13);
  gen_set all = {0, 1, 13};
  ck_assert_int_eq(gen_bcast_binomial(g, &all, 5, 100, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_BCAST, 5, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(6);
  gen_set six = {0, 1, 6};
  ck_assert_int_eq(gen_bcast_linear(g, &six, 0, 64, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_BCAST, 0, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(7);
  gen_set seven = {0, 1, 7};
  ck_assert_int_eq(gen_bcast_chain(g, &seven, 2, 1000, 4, &B), CDAG_OK); /* pipelined, 4 segments */
  expect(g, NULL, (want[]){{DET_BCAST, 2, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(11);
  gen_set eleven = {0, 1, 11};
  ck_assert_int_eq(gen_bcast_scatter_allgather(g, &eleven, 4, 1000, &B), CDAG_OK); /* MPICH long bcast */
  expect(g, NULL, (want[]){{DET_BCAST, 4, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(9);
  gen_set nine = {0, 1, 9};
  ck_assert_int_eq(gen_bcast_scatter_allgather(g, &nine, 0, 5, &B), CDAG_OK); /* chunks of 1 byte, some empty */
  expect(g, NULL, (want[]){{DET_BCAST, 0, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(all_collectives) {
  cdag_graph *g = cdag_test_graph(5);
  gen_set s5 = {0, 1, 5};
  ck_assert_int_eq(gen_allgather_ring(g, &s5, 24, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_ALLGATHER, -1, 0, 0}}, 1, 0); /* own blocks move inside it */
  cdag_graph_free(&g);
  g = cdag_test_graph(6);
  gen_set s6 = {0, 1, 6};
  ck_assert_int_eq(gen_alltoall_linear(g, &s6, 16, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_ALLTOALL, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(8);
  gen_set s8 = {0, 1, 8};
  ck_assert_int_eq(gen_alltoall_butterfly(g, &s8, 8, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_ALLTOALL, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  for (int n = 3; n <= 9; n += 3) { /* Bruck with packing, any n */
    g = cdag_test_graph(n);
    gen_set s = {0, 1, n};
    ck_assert_int_eq(gen_alltoall_bruck(g, &s, 12, &B), CDAG_OK);
    expect(g, NULL, (want[]){{DET_ALLTOALL, -1, 0, 0}}, 1, 0);
    cdag_graph_free(&g);
    g = cdag_test_graph(n);
    ck_assert_int_eq(gen_allgather_bruck(g, &s, 20, &B), CDAG_OK);
    expect(g, NULL, (want[]){{DET_ALLGATHER, -1, 0, 0}}, 1, 0);
    cdag_graph_free(&g);
  }
}
END_TEST

START_TEST(gathers_and_scatters) {
  cdag_graph *g = cdag_test_graph(7);
  gen_set s7 = {0, 1, 7};
  ck_assert_int_eq(gen_gather_linear(g, &s7, 3, 40, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_GATHER, 3, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(5);
  gen_set s5 = {0, 1, 5};
  ck_assert_int_eq(gen_scatter_linear(g, &s5, 2, 12, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_SCATTER, 2, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(6);
  gen_set s6 = {0, 1, 6};
  ck_assert_int_eq(gen_gather_binomial(g, &s6, 32, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_GATHER, 0, 0, 0}}, 1, 0); /* the root's own block moves inside it */
  cdag_graph_free(&g);
  g = cdag_test_graph(7);
  ck_assert_int_eq(gen_scatter_binomial(g, &s7, 5, 24, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_SCATTER, 5, 0, 0}}, 1, 0); /* the root's own block too */
  cdag_graph_free(&g);
}
END_TEST

/* A gather's or scatter's plan holds the root's slots of its side with a slot per member,
   not one per member and member (detect.h): over 20,000 ranks (400 M slots, 6.4 GB, the
   other way) both are found, verify, and hold 2 slots a member. */
START_TEST(gathers_and_scatters_at_scale) {
  enum { N = 20000 };
  for (int scatter = 0; scatter < 2; scatter++) {
    cdag_graph *g = cdag_test_graph(N);
    gen_set big = {0, 1, N};
    ck_assert_int_eq((scatter ? gen_scatter_linear : gen_gather_linear)(g, &big, 7, 8, &B), CDAG_OK);
    cdag_plan *p = cdag_test_analyse(g, NULL);
    ck_assert_int_eq(p->ncolls, 1);
    ck_assert_int_eq(p->colls[0].kind, scatter ? DET_SCATTER : DET_GATHER);
    ck_assert_int_eq(p->colls[0].root, 7);
    ck_assert_int_eq(p->nxfers, 0);
    ck_assert_int_le(p->niovs, 2 * (int64_t)N);
    cdag_plan_free(&p);
    cdag_graph_free(&g);
  }
}
END_TEST

START_TEST(allreduces) {
  cdag_graph *g = cdag_test_graph(8);
  gen_set s8 = {0, 1, 8};
  ck_assert_int_eq(gen_allreduce_recursive_doubling(g, &s8, 3, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_ALLREDUCE, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(8);
  ck_assert_int_eq(gen_allreduce_recursive_doubling_by_rank(g, &s8, 3, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_ALLREDUCE, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(5);
  gen_set s5 = {0, 1, 5};
  ck_assert_int_eq(gen_allreduce_linear(g, &s5, 1, 4, CDAG_MAX, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_ALLREDUCE, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(6);
  gen_set s6 = {0, 1, 6};
  ck_assert_int_eq(gen_allreduce_ring(g, &s6, 2, &B), CDAG_OK); /* reduce-scatter + allgather */
  expect(g, NULL, (want[]){{DET_ALLREDUCE, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
}
END_TEST

/* Sums a rule cannot take say why: each rank adds its own value at 0x1000 into an
   accumulator that holds another of its values (0x2000), then the others' (two addresses of
   one rank: no collective call reduces two buffers of a rank); rank 0 adding rank 1's value
   twice counts it twice. The notes name the rank and the addresses. */
START_TEST(reductions_left_say_why) {
  int n = 3;
  cdag_graph *g = cdag_test_graph(n);
  for (int r = 0; r < n; r++) {
    for (int q = 0; q < n; q++)
      if (q != r) {
        CK_OK(cdag_rank_send(g, q, 0x1000, 16, r, 0, NULL));
        CK_OK(cdag_rank_recv(g, r, 0x4000 + 16 * (uint64_t)q, 16, q, 0, NULL));
      }
    CK_OK(cdag_rank_reduce_local(g, r, 0x1000, 0x2000, 4, CDAG_INT32, CDAG_SUM, NULL));
    for (int q = 0; q < n; q++)
      if (q != r) CK_OK(cdag_rank_reduce_local(g, r, 0x4000 + 16 * (uint64_t)q, 0x2000, 4, CDAG_INT32, CDAG_SUM, NULL));
  }
  cdag_plan *p = cdag_test_analyse(g, NULL);
  ck_assert_int_ge(p->nnotes, 1);
  ck_assert_msg(strstr(p->notes[0], "takes rank 0's values from two addresses (0x1000 and 0x2000)"), "note: %s", p->notes[0]);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 1, 0x1000, 16, 0, 0, NULL));
  CK_OK(cdag_rank_recv(g, 0, 0x4000, 16, 1, 0, NULL));
  for (int k = 0; k < 2; k++) CK_OK(cdag_rank_reduce_local(g, 0, 0x4000, 0x2000, 4, CDAG_INT32, CDAG_SUM, NULL));
  p = cdag_test_analyse(g, NULL);
  int found = 0;
  for (int64_t i = 0; i < p->nnotes; i++) found |= strstr(p->notes[i], "counts rank 1's value at 0x1000 2 times") != NULL;
  ck_assert_msg(found, "notes: %lld, first: %s", (long long)p->nnotes, p->nnotes ? p->notes[0] : "");
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(grid_rows_and_columns) {
  cdag_graph *g = cdag_test_graph(16);
  for (int r = 0; r < 4; r++) { /* row broadcasts from column 0, then column broadcasts from row 0 */
    gen_set row = {4 * r, 1, 4};
    ck_assert_int_eq(gen_bcast_binomial(g, &row, 0, 48, &B), CDAG_OK);
  }
  for (int c = 0; c < 4; c++) {
    gen_set col = {c, 4, 4};
    ck_assert_int_eq(gen_bcast_linear(g, &col, 0, 16, &B2), CDAG_OK);
  }
  cdag_plan *p = cdag_test_analyse(g, NULL);
  ck_assert_int_eq(p->ncolls, 8);
  for (int i = 0; i < 8; i++) {
    ck_assert_int_eq(p->colls[i].kind, DET_BCAST);
    ck_assert_int_eq(p->colls[i].nranks, 4);
  }
  ck_assert_int_eq(p->nxfers, 0);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  /* SUMMA step k = 2 on a 4x5 grid: row bcasts from column 2, column bcasts from row 2 */
  g = cdag_test_graph(20);
  for (int r = 0; r < 4; r++) {
    gen_set row = {5 * r, 1, 5};
    ck_assert_int_eq(gen_bcast_binomial(g, &row, 2, 40, &B), CDAG_OK);
  }
  for (int c = 0; c < 5; c++) {
    gen_set col = {c, 5, 4};
    ck_assert_int_eq(gen_bcast_binomial(g, &col, 2, 56, &B2), CDAG_OK);
  }
  p = cdag_test_analyse(g, NULL);
  ck_assert_int_eq(p->ncolls, 9);
  for (int i = 0; i < 9; i++) ck_assert_int_eq(p->colls[i].kind, DET_BCAST);
  ck_assert_int_eq(p->nxfers, 0);
  ck_assert_int_eq(p->nnotes, 0);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  /* a 3x3 grid: groups of 3 < min_group stay residual */
  g = cdag_test_graph(9);
  for (int r = 0; r < 3; r++) {
    gen_set row = {3 * r, 1, 3};
    ck_assert_int_eq(gen_bcast_linear(g, &row, 0, 8, &B), CDAG_OK);
  }
  expect(g, NULL, NULL, 0, 6);
  cdag_options o;
  cdag_options_init(&o);
  o.min_group = 3;
  expect(g, &o, (want[]){{DET_BCAST, 0, 3, 0}, {DET_BCAST, 3, 3, 3}, {DET_BCAST, 6, 3, 6}}, 3, 0);
  cdag_graph_free(&g);
}
END_TEST

/* Row alltoalls of a 4x4 grid under an allgather of all 16 ranks: both regular kinds. */
START_TEST(rows_under_global_allgather) {
  cdag_graph *g = cdag_test_graph(16);
  gen_set all = {0, 1, 16};
  ck_assert_int_eq(gen_allgather_ring(g, &all, 16, &B), CDAG_OK);
  for (int r = 0; r < 4; r++) {
    gen_set row = {4 * r, 1, 4};
    ck_assert_int_eq(gen_alltoall_linear(g, &row, 8, &B2), CDAG_OK);
  }
  cdag_plan *p = cdag_test_analyse(g, NULL);
  ck_assert_int_eq(p->ncolls, 5);
  int rows = 0, global = 0;
  for (int64_t i = 0; i < p->ncolls; i++) {
    rows += p->colls[i].kind == DET_ALLTOALL && p->colls[i].nranks == 4;
    global += p->colls[i].kind == DET_ALLGATHER && p->colls[i].nranks == 16;
  }
  ck_assert_int_eq(rows, 4);
  ck_assert_int_eq(global, 1);
  ck_assert_int_eq(p->nxfers, 0);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* An allgatherv whose sources partly share a size is one allgatherv, not an allgather of
   the equal-size sources plus broadcasts. */
START_TEST(allgatherv_with_equal_sizes) {
  int n = 6;
  cdag_graph *g = cdag_test_graph(n);
  uint64_t len[6] = {4, 9, 4, 4, 7, 4};
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j) {
        CK_OK(cdag_rank_send(g, i, B.data, len[i], j, 0, NULL));
        CK_OK(cdag_rank_recv(g, j, B.out + 64 * (uint64_t)i, len[i], i, 0, NULL));
      }
  expect(g, NULL, (want[]){{DET_ALLGATHERV, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(all_but_one_and_halo) {
  cdag_graph *g = cdag_test_graph(8);
  gen_set s = {1, 1, 7};
  ck_assert_int_eq(gen_bcast_binomial(g, &s, 0, 32, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_BCAST, 1, 7, 1}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(8);
  gen_set all = {0, 1, 8};
  ck_assert_int_eq(gen_halo1d(g, &all, 16, &B), CDAG_OK);
  expect(g, NULL, NULL, 0, 14);
  cdag_graph_free(&g);
  /* 2D halos look like one scatter of 5 ranks per rank; they overlap, so they stay residual */
  int dims[][2] = {{4, 4}, {3, 5}, {6, 4}};
  for (int d = 0; d < 3; d++) {
    g = cdag_test_graph(dims[d][0] * dims[d][1]);
    ck_assert_int_eq(gen_halo2d(g, dims[d][0], dims[d][1], 32, &B), CDAG_OK);
    cdag_plan *p = cdag_test_analyse(g, NULL);
    ck_assert_int_eq(p->ncolls, 0);
    ck_assert_int_eq(p->nxfers, 4 * dims[d][0] * dims[d][1]);
    ck_assert_int_eq(p->nnotes, 1);
    ck_assert_msg(strstr(p->notes[0], "neighbourhood exchange"), "note: %s", p->notes[0]);
    cdag_plan_free(&p);
    cdag_graph_free(&g);
  }
  /* ... while a bcast on all ranks but one next to a halo is still found */
  g = cdag_test_graph(17);
  ck_assert_int_eq(gen_halo2d(g, 4, 4, 32, &B), CDAG_OK);
  gen_set but_one = {1, 1, 16};
  ck_assert_int_eq(gen_bcast_binomial(g, &but_one, 3, 100, &B2), CDAG_OK);
  expect(g, NULL, (want[]){{DET_BCAST, 4, 16, 1}}, 1, 64);
  cdag_graph_free(&g);
}
END_TEST

/* A barrier ported call for call: rank 0 receives an empty message from every rank, then
   sends one to each. Without dependencies its receives order nothing (program order does not
   order operations on different buffers): no barrier, and a note says why and what to add;
   with each send depending on the receives, it is a barrier. */
START_TEST(barrier_ported_call_for_call) {
  enum { N = 4 };
  for (int depend = 0; depend < 2; depend++) {
    cdag_graph *g = cdag_test_graph(N);
    cdag_op r[N], s;
    for (int k = 1; k < N; k++) ck_assert_int_eq(cdag_rank_recv(g, 0, 0x1000, 0, k, 0, &r[k]), CDAG_OK);
    for (int k = 1; k < N; k++) {
      ck_assert_int_eq(cdag_rank_send(g, 0, 0x1000, 0, k, 0, &s), CDAG_OK);
      for (int j = 1; depend && j < N; j++) ck_assert_int_eq(cdag_depend(g, r[j], s), CDAG_OK);
      ck_assert_int_eq(cdag_rank_send(g, k, 0x1000, 0, 0, 0, NULL), CDAG_OK);
      ck_assert_int_eq(cdag_rank_recv(g, k, 0x1000, 0, 0, 0, NULL), CDAG_OK);
    }
    cdag_plan *p = cdag_test_analyse(g, NULL);
    ck_assert_int_eq(p->barrier, depend);
    ck_assert_int_eq(cdag_test_noted(p, "3 zero-byte receives order nothing"), !depend);
    cdag_plan_free(&p);
    cdag_graph_free(&g);
  }
}
END_TEST

START_TEST(barrier) {
  cdag_graph *g = cdag_test_graph(6);
  gen_set all = {0, 1, 6};
  ck_assert_int_eq(gen_barrier_dissemination(g, &all, &B), CDAG_OK);
  cdag_plan *p = cdag_test_analyse(g, NULL);
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert_int_eq(p->colls[0].kind, DET_BARRIER);
  ck_assert_int_eq(p->barrier, 1);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* An alltoallv takes every piece of its pairs, not only the first: pairs that exchange
   several noncontiguous pieces (a block-cyclic matrix changing layout) are one collective. */
START_TEST(alltoallv_whole_pairs) {
  int n = 4;
  cdag_graph *g = cdag_test_graph(n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (uint64_t k = 0; i != j && k < 3; k++) {   /* three pieces per pair, sizes per pair */
        uint64_t len = 8 * (uint64_t)(i + 2 * j + k + 1), at = 256 * (uint64_t)j + 80 * k;
        CK_OK(cdag_rank_send(g, i, B.data + at, len, j, 0, NULL));
        CK_OK(cdag_rank_recv(g, j, B.out + 256 * (uint64_t)i + 96 * (2 - k), len, i, 0, NULL));
      }
  expect(g, NULL, (want[]){{DET_ALLTOALLV, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  /* 32 x 32 doubles, 8 x 8 blocks on a 2 x 2 grid to 4 x 4 blocks on 1 x 4: each rank sends
     to two of the others (density 0.5), 16 pieces per pair; its own pieces are copies. A
     redistribution, one alltoallv under the default density (test_detect_redistribution.c) */
  cdag_layout from = {32, 32, 8, 8, 2, 2, 0, 0}, to = {32, 32, 4, 4, 1, 4, 0, 0};
  g = cdag_test_graph(4);
  for (int r = 0; r < 4; r++) CK_OK(cdag_rank_redistribute(g, r, &from, 0, &to, 1 << 20, 8));
  expect(g, NULL, (want[]){{DET_ALLTOALLV, -1, 0, 0}}, 1, 0);   /* the 32 self copies move in it too */
  cdag_graph_free(&g);
  /* 3 : 5 overlapping groups: 1 x 3 from rank 0, 1 x 5 from rank 1: whole columns, 13
     pieces on 9 pairs, too few for a redistribution, but density 0.3 takes it */
  cdag_layout a = {30, 30, 4, 4, 1, 3, 0, 0}, b = {30, 30, 3, 3, 1, 5, 1, 0};
  g = cdag_test_graph(6);
  for (int r = 0; r < 6; r++) CK_OK(cdag_rank_redistribute(g, r, &a, 0, &b, 1 << 20, 8));
  cdag_options o;
  cdag_options_init(&o);
  o.density = 0.3;
  expect(g, &o, (want[]){{DET_ALLTOALLV, -1, 0, 0}}, 1, -1);
  cdag_graph_free(&g);
}
END_TEST

/* alltoall with per-pair sizes, allgather with per-source sizes, and density */
START_TEST(vector_variants) {
  int n = 5;
  cdag_graph *g = cdag_test_graph(n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j) {
        CK_OK(cdag_rank_send(g, i, B.data + 64 * (uint64_t)j, 4 * (uint64_t)(i + j + 1), j, 0, NULL));
        CK_OK(cdag_rank_recv(g, j, B.out + 64 * (uint64_t)i, 4 * (uint64_t)(i + j + 1), i, 0, NULL));
      }
  expect(g, NULL, (want[]){{DET_ALLTOALLV, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j) {
        CK_OK(cdag_rank_send(g, i, B.data, 8 * (uint64_t)(i + 1), j, 0, NULL));
        CK_OK(cdag_rank_recv(g, j, B.out + 64 * (uint64_t)i, 8 * (uint64_t)(i + 1), i, 0, NULL));
      }
  expect(g, NULL, (want[]){{DET_ALLGATHERV, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  /* 18 of 20 pairs: not complete; a note says so; density 0.9 accepts it */
  g = cdag_test_graph(n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j && !(i == 0 && j == 1) && !(i == 3 && j == 2)) {
        CK_OK(cdag_rank_send(g, i, B.data + 64 * (uint64_t)j, 16, j, 0, NULL));
        CK_OK(cdag_rank_recv(g, j, B.out + 64 * (uint64_t)i, 16, i, 0, NULL));
      }
  cdag_plan *p = cdag_test_analyse(g, NULL);
  for (int64_t i = 0; i < p->ncolls; i++) ck_assert_int_ne(p->colls[i].kind, DET_ALLTOALL); /* scatters may remain */
  ck_assert_int_ge(p->nnotes, 1);
  ck_assert_msg(strstr(p->notes[0], "18 of 20 pairs") && strstr(p->notes[0], "density 0.9"), "note: %s", p->notes[0]);
  cdag_plan_free(&p);
  cdag_options o;
  cdag_options_init(&o);
  o.density = 0.9;
  expect(g, &o, (want[]){{DET_ALLTOALLV, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
}
END_TEST

/* Linear reduce-scatter: member j collects block j of everybody's vector and reduces it. */
static int gen_reduce_scatter(cdag_graph *g, const gen_set *set, uint64_t count, const gen_bufs *b) {
  uint64_t l = 4 * count;
  int rc = CDAG_OK;
  for (int j = 0; j < set->n && rc == CDAG_OK; j++) {
    int rj = set->first + j;
    rc = cdag_rank_copy_local(g, rj, b->data + (uint64_t)j * l, b->out, l, NULL);
    for (int i = 0; i < set->n && rc == CDAG_OK; i++) {
      if (i == j) continue;
      uint64_t tmp = b->scratch + (uint64_t)i * l;
      rc = cdag_rank_scratch(g, rj, tmp, l);
      if (rc == CDAG_OK) rc = cdag_rank_send(g, set->first + i, b->data + (uint64_t)j * l, l, rj, 3, NULL);
      if (rc == CDAG_OK) rc = cdag_rank_recv(g, rj, tmp, l, set->first + i, 3, NULL);
      if (rc == CDAG_OK) rc = cdag_rank_reduce_local(g, rj, tmp, b->out, count, CDAG_INT32, CDAG_SUM, NULL);
    }
  }
  return rc;
}

START_TEST(reduce_scatter_block) {
  cdag_graph *g = cdag_test_graph(5);
  gen_set all = {0, 1, 5};
  ck_assert_int_eq(gen_reduce_scatter(g, &all, 3, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_REDUCE_SCATTER_BLOCK, -1, 0, 0}}, 1, 0);
  cdag_graph_free(&g);
  g = cdag_test_graph(7); /* on ranks 2..6 */
  gen_set sub = {2, 1, 5};
  ck_assert_int_eq(gen_reduce_scatter(g, &sub, 2, &B), CDAG_OK);
  expect(g, NULL, (want[]){{DET_REDUCE_SCATTER_BLOCK, -1, 5, 2}}, 1, 0);
  cdag_graph_free(&g);
}
END_TEST

/* Two broadcasts of separate buffers from one root merge into one with two pieces per slot. */
START_TEST(merge_same_shape) {
  cdag_graph *g = cdag_test_graph(6);
  gen_set all = {0, 1, 6};
  ck_assert_int_eq(gen_bcast_linear(g, &all, 2, 24, &B), CDAG_OK);
  ck_assert_int_eq(gen_bcast_binomial(g, &all, 2, 24, &B2), CDAG_OK);
  cdag_plan *p = cdag_test_analyse(g, NULL);
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert_int_eq(p->colls[0].ntransfers, 10);
  ck_assert_uint_eq(p->colls[0].bytes, 48);
  const det_iov *root_send = &p->iovs[p->colls[0].send_first + 2];
  ck_assert_int_eq(root_send->n, 2);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(report_fields) {
  cdag_graph *g = cdag_test_graph(4);
  gen_set all = {0, 1, 4};
  ck_assert_int_eq(gen_alltoall_linear(g, &all, 8, &B), CDAG_OK);
  cdag_plan *p = cdag_test_analyse(g, NULL);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_int_eq(cdag_plan_report(p, f, 1), CDAG_OK);
  fclose(f);
  const char *keys[] = {"\"cdag_report\": 1", "\"nprocs\": 4", "\"ops\": {\"send\": 12, \"recv\": 12", "\"sst\":",
                        "\"kind\": \"alltoall\"", "\"root\": null", "\"ranks\": \"all\"", "\"bytes\": 8",
                        "\"transfers\": 16", "\"barrier\": false", "\"residual\": {\"transfers\": 0", "\"seconds\":"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) ck_assert_msg(strstr(buf, keys[i]), "missing %s in %s", keys[i], buf);
  free(buf);
  f = open_memstream(&buf, &len);
  ck_assert_int_eq(cdag_plan_report(p, f, 0), CDAG_OK);
  fclose(f);
  ck_assert_msg(strncmp(buf, "alltoall over all 4 ranks, 8 B per block (16 transfers)", 55) == 0, "text: %s", buf);
  free(buf);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* A column (N blocks of 8 B, one per row of 4 doubles) that rank 0 packs and sends to ranks
   1..3, each unpacking it into its own column: the SST ends with one strided transfer per
   receiver. Detection searches their blocks (a bcast of the column's blocks); where the
   price leaves the bcast, each transfer is residual whole again, as the SST made it. */
static cdag_graph *column_bcast(int n) {
  enum { ROW = 32, COL = 0x1000, PK = 0x100000 };
  cdag_graph *g = cdag_test_graph(4);
  for (int r = 0; r < 4; r++) CK_OK(cdag_rank_scratch(g, r, PK, 8 * (uint64_t)n));
  CK_OK(ir_add_copy_strided(g, 0, COL, PK, (uint64_t)n, 8, ROW, 8, NULL));
  for (int r = 1; r < 4; r++) {
    CK_OK(cdag_rank_send(g, 0, PK, 8 * (uint64_t)n, r, 0, NULL));
    CK_OK(cdag_rank_recv(g, r, PK, 8 * (uint64_t)n, 0, 0, NULL));
    CK_OK(ir_add_copy_strided(g, r, PK, COL, (uint64_t)n, 8, 8, ROW, NULL));
  }
  return g;
}

START_TEST(strided_transfers_searched_by_blocks) {
  cdag_graph *g = column_bcast(64);
  cdag_plan *p = cdag_test_analyse(g, NULL);   /* unpriced: every collective found is taken */
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert_int_eq(p->colls[0].kind, DET_BCAST);
  ck_assert_int_eq(p->colls[0].ntransfers, 3 * 64);
  ck_assert_int_eq(p->nxfers, 0);
  cdag_plan_free(&p);
  cdag_options o;   /* priced: a bcast of 8-byte blocks costs more than 3 messages */
  cdag_options_init(&o);
  pipeline_tune t = pipeline_tune_of(NULL, KERN_POLICY_AUTO);
  CK_OK(pipeline_plan(g, &o, &t, &p));
  CK_OK(cdag_plan_verify(g, p));
  ck_assert_int_eq(p->ncolls, 0);
  ck_assert_int_eq(p->nleft, 1);
  ck_assert_int_eq(p->nxfers, 3);
  for (int i = 0; i < 3; i++) {
    const df_xfer *x = &p->xfers[i];
    ck_assert(x->src == 0 && x->dst == i + 1 && x->blocks == 64 && x->len == 8 && x->src_stride == 32 && x->dst_stride == 32);
    ck_assert_int_eq(p->msgs[i].bytes, 64 * 8);
  }
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* A rank's transfer to itself runs as a local copy: the report counts it as one, not as a
   message (issue #35: two self copies and a message were "3 messages"). */
START_TEST(report_counts_self_copies) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0x100, 8, 0, 0, NULL));
  CK_OK(cdag_rank_recv(g, 0, 0x200, 8, 0, 0, NULL));
  CK_OK(cdag_rank_send(g, 1, 0x100, 16, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0x300, 16, 1, 0, NULL));
  CK_OK(cdag_rank_send(g, 0, 0x100, 4, 1, 1, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0x400, 4, 0, 1, NULL));
  cdag_plan *p = cdag_test_analyse(g, NULL);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_int_eq(cdag_plan_report(p, f, 0), CDAG_OK);
  fclose(f);
  ck_assert_msg(strstr(buf, "residual: 3 transfers (28 B) in 1 messages and 2 local copies (24 B), 0 reductions"),
                "text: %s", buf);
  free(buf);
  f = open_memstream(&buf, &len);
  ck_assert_int_eq(cdag_plan_report(p, f, 1), CDAG_OK);
  fclose(f);
  ck_assert_msg(strstr(buf, "\"messages\": 1,") && strstr(buf, "\"local_copies\": {\"transfers\": 2, \"bytes\": 24}"),
                "json: %s", buf);
  free(buf);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* ---- randomized differential tests ---- */

static uint64_t rnd(uint64_t *s, uint64_t n) {
  *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
  return *s % n;
}

/* Random messages between random ranks on buffers no pattern uses, odd sizes. */
/* Random messages between random ranks: odd sizes no pattern uses, or (same_size) the
   pattern's block size read from addresses below every pattern buffer. Returns how many. */
static int noise(cdag_graph *g, int p, uint64_t *s, uint64_t same_size) {
  int k = (int)rnd(s, 4), n = 0;
  for (int i = 0; i < k; i++) {
    int a = (int)rnd(s, (uint64_t)p), b = (int)rnd(s, (uint64_t)p);
    if (a == b) continue;
    uint64_t len = same_size ? same_size : 1001 + 2 * rnd(s, 10);
    uint64_t at = same_size ? 0x100 * (uint64_t)i : 0x90000 + 0x1000 * (uint64_t)i;
    CK_OK(cdag_rank_send(g, a, at, len, b, 99, NULL));
    CK_OK(cdag_rank_recv(g, b, 0xa0000 + 0x1000 * (uint64_t)i, len, a, 99, NULL)); /* disjoint finals */
    n++;
  }
  return n;
}

/* Vector patterns and a linear reduce, on members set->first.. (sizes from the seed). */
static int gen_vector(cdag_graph *g, const gen_set *set, int allgather, uint64_t *s, const gen_bufs *b) {
  uint64_t len[16];
  for (int i = 0; i < set->n; i++) len[i] = 1 + rnd(s, 30);
  for (int i = 0; i < set->n; i++)
    for (int j = 0; j < set->n; j++) {
      if (i == j) continue;
      uint64_t n = allgather ? len[i] : 1 + rnd(s, 30), sa = allgather ? b->data : b->data + 64 * (uint64_t)j;
      int rc = cdag_rank_send(g, set->first + i, sa, n, set->first + j, 0, NULL);
      if (rc == CDAG_OK) rc = cdag_rank_recv(g, set->first + j, b->out + 64 * (uint64_t)i, n, set->first + i, 0, NULL);
      if (rc) return rc;
    }
  return CDAG_OK;
}

static int gen_reduce(cdag_graph *g, const gen_set *set, int root, uint64_t count, const gen_bufs *b) {
  int r = set->first + root, rc = cdag_rank_copy_local(g, r, b->data, b->out, 4 * count, NULL);
  for (int i = 0; i < set->n && rc == CDAG_OK; i++) {
    if (i == root) continue;
    uint64_t tmp = b->scratch + 4 * count * (uint64_t)i;
    rc = cdag_rank_scratch(g, r, tmp, 4 * count);
    if (rc == CDAG_OK) rc = cdag_rank_send(g, set->first + i, b->data, 4 * count, r, 0, NULL);
    if (rc == CDAG_OK) rc = cdag_rank_recv(g, r, tmp, 4 * count, set->first + i, 0, NULL);
    if (rc == CDAG_OK) rc = cdag_rank_reduce_local(g, r, tmp, b->out, count, CDAG_INT32, CDAG_BXOR, NULL);
  }
  return rc;
}

static int rank_cmp(const void *a, const void *b) {
  return (*(const int32_t *)a > *(const int32_t *)b) - (*(const int32_t *)a < *(const int32_t *)b);
}

static void random_instance(uint64_t seed) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 7;
  int kind = (int)rnd(&s, 19), pow2 = kind == 5 || kind == 8;
  int n = pow2 ? 4 << rnd(&s, 2) : 4 + (int)rnd(&s, 9);
  int vector = kind == 9 || kind == 10 || kind == 12;
  int extra = vector ? 0 : (int)rnd(&s, 3), p = n + extra;  /* a subset when extra > 0 */
  gen_set set = {extra ? (int)rnd(&s, (uint64_t)extra + 1) : 0, 1, n};
  gen_bufs b = {.data = 0x1000 * (1 + rnd(&s, 8)), .out = 0x20000 + 0x800 * rnd(&s, 4), .scratch = 0x40000, .tag = (int)rnd(&s, 3)};
  int root = (int)rnd(&s, (uint64_t)n);
  uint64_t block = 1 + rnd(&s, 40);
  det_kind expected[] = {DET_BCAST,     DET_BCAST,     DET_ALLGATHER, DET_ALLTOALL,   DET_GATHER,
                         DET_ALLTOALL,  DET_SCATTER,   DET_ALLREDUCE, DET_ALLREDUCE, DET_ALLTOALLV,
                         DET_ALLGATHERV, DET_REDUCE,   DET_BARRIER,   DET_REDUCE_SCATTER_BLOCK,
                         DET_BCAST,     DET_SCATTER,   DET_ALLTOALL,  DET_ALLGATHER, DET_ALLREDUCE};
  cdag_graph *g = cdag_test_graph(p);
  int rc = CDAG_OK;
  switch (kind) {
    case 0: rc = gen_bcast_binomial(g, &set, root, block, &b); break;
    case 1: rc = gen_bcast_chain(g, &set, root, block * 8, 1 + (int)rnd(&s, 4), &b); break;
    case 2: rc = gen_allgather_ring(g, &set, block, &b); break;
    case 3: rc = gen_alltoall_linear(g, &set, block, &b); break;
    case 4: rc = gen_gather_linear(g, &set, root, block, &b); break;
    case 5: rc = gen_alltoall_butterfly(g, &set, block, &b); break;
    case 6: rc = gen_scatter_linear(g, &set, root, block, &b); break;
    case 7: rc = gen_allreduce_linear(g, &set, root, 1 + rnd(&s, 4), CDAG_SUM, &b); break;
    case 8: rc = gen_allreduce_recursive_doubling(g, &set, 1 + rnd(&s, 4), &b); break;
    case 9: rc = gen_vector(g, &set, 0, &s, &b); break;
    case 10: rc = gen_vector(g, &set, 1, &s, &b); break;
    case 11: rc = gen_reduce(g, &set, root, 1 + rnd(&s, 4), &b); break;
    case 12: rc = gen_barrier_dissemination(g, &set, &b); break;
    case 13: rc = gen_reduce_scatter(g, &set, 1 + rnd(&s, 3), &b); break;
    case 14: rc = gen_bcast_scatter_allgather(g, &set, root, block * 8, &b); break;
    case 15: rc = gen_scatter_binomial(g, &set, root, block, &b); break;
    case 16: rc = gen_alltoall_bruck(g, &set, block, &b); break;
    case 17: rc = gen_allgather_bruck(g, &set, block, &b); break;
    default: rc = gen_allreduce_ring(g, &set, 1 + rnd(&s, 3), &b); break;
  }
  ck_assert_int_eq(rc, CDAG_OK);
  /* Stray messages of the block size too, with 6 members or more (with fewer, three of them
     can form a group as large as the pattern's own). The pipelined and scatter-allgather
     broadcasts send other sizes than `block`. */
  int same = !vector && kind != 12 && kind != 1 && kind != 14 && n >= 6 && rnd(&s, 2);
  int nnoise = kind != 12 ? noise(g, p, &s, same ? block : 0) : 0; /* a barrier needs every rank to wait for every rank */
  cdag_plan *pl = cdag_test_analyse(g, NULL);
  int found = 0;
  for (int64_t i = 0; i < pl->ncolls; i++) {
    const det_coll *c = &pl->colls[i];
    if (c->kind == expected[kind] && c->nranks == n && pl->ranks[c->ranks_first] == set.first) found = 1;
    /* a stray message of the block size out of a scatter's root (into a gather's) is one
       more block of it: the collective may grow by its peer */
    int grows = same && (kind == 4 || kind == 6 || kind == 15) && c->kind == expected[kind] && c->nranks > n;
    for (int m = 0; grows && m < n; m++)
      grows = bsearch(&(int32_t){set.first + m}, pl->ranks + c->ranks_first, (size_t)c->nranks, sizeof(int32_t), rank_cmp) != NULL;
    found |= grows;
  }
  if (!found) cdag_plan_report(pl, stderr, 0);
  ck_assert_msg(found, "seed %llu: %s over %d of %d ranks not found", (unsigned long long)seed,
                det_kind_name(expected[kind]), n, p);
  /* exactly the noise stays residual; on 4 ranks three
     stray messages from one rank may be a scatterv of their own. An alltoallv moves whole
     pairs: stray messages between its members (all ranks here) travel in it. */
  for (int64_t i = 0; kind == 9 && i < pl->ncolls; i++)
    if (pl->colls[i].kind == DET_ALLTOALLV) ck_assert_int_eq(pl->colls[i].ntransfers, n * (n - 1) + nnoise);
  if (kind == 9) ck_assert_int_eq(pl->nxfers + pl->nreds, 0);
  else if (!same && kind != 12 && p >= 5)
    ck_assert_msg(pl->nxfers + pl->nreds == nnoise, "seed %llu: residual %lld, noise %d", (unsigned long long)seed,
                  (long long)(pl->nxfers + pl->nreds), nnoise);
  cdag_plan_free(&pl);
  cdag_graph_free(&g);
}

START_TEST(random_patterns) {
  long n = cdag_test_iterations(3000);
  for (long i = 0; i < n; i++) random_instance((uint64_t)i + 1);
}
END_TEST

/* Random graphs of any kind: whatever is detected, the plan must do what the graph does. */
START_TEST(random_graphs_verify) {
  long n = cdag_test_iterations(3000);
  for (long i = 0; i < n; i++) {
    cdag_graph *g;
    ck_assert_int_eq(gen_random_graph((uint64_t)i + 7, NULL, &g), CDAG_OK);
    cdag_plan *p = cdag_test_analyse(g, NULL);
    cdag_plan_free(&p);
    cdag_graph_free(&g);
  }
}
END_TEST

Suite *cdag_detect_suite(void) {
  Suite *s = suite_create("detect");
  TCase *t = tcase_create("signatures");
  tcase_add_test(t, bcasts);
  tcase_add_test(t, alltoallv_whole_pairs);
  tcase_add_test(t, all_collectives);
  tcase_add_test(t, gathers_and_scatters);
  tcase_add_test(t, gathers_and_scatters_at_scale);
  tcase_add_test(t, allreduces);
  tcase_add_test(t, reductions_left_say_why);
  tcase_add_test(t, grid_rows_and_columns);
  tcase_add_test(t, rows_under_global_allgather);
  tcase_add_test(t, allgatherv_with_equal_sizes);
  tcase_add_test(t, all_but_one_and_halo);
  tcase_add_test(t, barrier);
  tcase_add_test(t, barrier_ported_call_for_call);
  tcase_add_test(t, vector_variants);
  tcase_add_test(t, reduce_scatter_block);
  tcase_add_test(t, merge_same_shape);
  tcase_add_test(t, report_fields);
  tcase_add_test(t, report_counts_self_copies);
  tcase_add_test(t, strided_transfers_searched_by_blocks);
  suite_add_tcase(s, t);
  TCase *r = tcase_create("randomized");
  tcase_set_timeout(r, 300);
  tcase_add_test(r, random_patterns);
  tcase_add_test(r, random_graphs_verify);
  suite_add_tcase(s, r);
  return s;
}

CDAG_CHECK_MAIN(cdag_detect_suite)

/* cdag tests — tests/exec/sim/test_sim.c: the simulator, the oracle of every other test.
 *
 * Small hand-made graphs with known final memory (ping-pong, broadcast, forwarding through
 * scratch, copies, reductions, sends to self, larger receives), every error (unmatched,
 * truncation, deadlock naming its cycle), order independence on random graphs, a graph of
 * 100,000 ops, SST tuples applied by hand, and plans run by collective semantics (more
 * plan tests in test_sim_plan.c). */
#include <string.h>

#include "check_main.h"
#include "support/graphs.h"
#include "exec/sim/sim.h"
#include "support/support.h"

static sim_mem *memory(cdag_graph *g) {
  sim_mem *m;
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert_int_eq(sim_mem_create(g, &m), CDAG_OK);
  return m;
}

static void put(sim_mem *m, int rank, uint64_t addr, const void *v, uint64_t len) {
  uint8_t *p = sim_mem_at(m, rank, addr, len);
  ck_assert_ptr_nonnull(p);
  memcpy(p, v, len);
}

static void expect_bytes(sim_mem *m, int rank, uint64_t addr, const void *v, uint64_t len) {
  uint8_t *p = sim_mem_at(m, rank, addr, len);
  ck_assert_ptr_nonnull(p);
  ck_assert_msg(memcmp(p, v, len) == 0, "rank %d 0x%llx differs", rank, (unsigned long long)addr);
}

START_TEST(ping_pong) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0x10, 4, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0x20, 4, 0, 0, NULL));
  CK_OK(cdag_rank_send(g, 1, 0x20, 4, 0, 1, NULL));   /* returns what it got */
  CK_OK(cdag_rank_recv(g, 0, 0x30, 4, 1, 1, NULL));
  sim_mem *m = memory(g);
  put(m, 0, 0x10, "abcd", 4);
  put(m, 1, 0x20, "zzzz", 4);
  ck_assert_int_eq(sim_run_graph(g, m, 0), CDAG_OK);
  expect_bytes(m, 1, 0x20, "abcd", 4);
  expect_bytes(m, 0, 0x30, "abcd", 4);
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(binomial_broadcast_five) {
  cdag_graph *g = cdag_test_graph(5);
  int parent[5] = {-1, 0, 0, 1, 0};
  for (int r = 1; r < 5; r++) CK_OK(cdag_rank_recv(g, r, 0x100, 8, parent[r], 0, NULL));
  for (int r = 0; r < 5; r++)
    for (int c = 1; c < 5; c++)
      if (parent[c] == r) CK_OK(cdag_rank_send(g, r, 0x100, 8, c, 0, NULL));
  sim_mem *m = memory(g);
  put(m, 0, 0x100, "BROADCST", 8);
  ck_assert_int_eq(sim_run_graph(g, m, 0), CDAG_OK);
  for (int r = 0; r < 5; r++) expect_bytes(m, r, 0x100, "BROADCST", 8);
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(scratch_copy_reduce_self) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_scratch(g, 1, 0x800, 16));
  CK_OK(cdag_rank_send(g, 0, 0x0, 8, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0x800, 8, 0, 0, NULL));                  /* through scratch */
  CK_OK(cdag_rank_copy_local(g, 1, 0x800, 0x40, 8, NULL));
  CK_OK(cdag_rank_reduce_local(g, 1, 0x40, 0x60, 2, CDAG_INT32, CDAG_SUM, NULL));
  CK_OK(cdag_rank_send(g, 1, 0x60, 8, 1, 5, NULL));                   /* to self */
  CK_OK(cdag_rank_recv(g, 1, 0x70, 16, 1, 5, NULL));                  /* larger: gets 8 bytes */
  sim_mem *m = memory(g);
  int32_t a[2] = {5, -7}, b[2] = {100, 200}, sum[2] = {105, 193}, old[4] = {9, 9, 9, 9};
  put(m, 0, 0x0, a, 8);
  put(m, 1, 0x60, b, 8);
  put(m, 1, 0x70, old, 16);
  ck_assert_int_eq(sim_run_graph(g, m, 0), CDAG_OK);
  expect_bytes(m, 1, 0x40, a, 8);
  expect_bytes(m, 1, 0x60, sum, 8);
  expect_bytes(m, 1, 0x70, sum, 8);
  expect_bytes(m, 1, 0x78, old + 2, 8);   /* the larger receive's tail is untouched */
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

/* A send's data is taken when it runs, even if the sender overwrites the buffer before the
   receive runs. */
START_TEST(send_takes_data_when_it_runs) {
  cdag_graph *g = cdag_test_graph(2);
  cdag_op s, w;
  CK_OK(cdag_rank_send(g, 0, 0x0, 4, 1, 0, &s));
  CK_OK(cdag_rank_recv(g, 0, 0x0, 4, 1, 1, &w));      /* overwrites the send buffer afterwards */
  CK_OK(cdag_rank_send(g, 1, 0x10, 4, 0, 1, NULL));
  cdag_op r;
  CK_OK(cdag_rank_recv(g, 1, 0x20, 4, 0, 0, &r));
  sim_mem *m = memory(g);
  put(m, 0, 0x0, "old!", 4);
  put(m, 1, 0x10, "new!", 4);
  for (uint64_t seed = 0; seed < 20; seed++) {
    ck_assert_int_eq(sim_run_graph(g, m, seed), CDAG_OK);
    put(m, 0, 0x0, "old!", 4);
    expect_bytes(m, 1, 0x20, "old!", 4);
  }
  (void)s; (void)w; (void)r;
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

static int run_error(cdag_graph *g) {
  sim_mem *m = memory(g);
  int rc = sim_run_graph(g, m, 0);
  sim_mem_free(m);
  return rc;
}

START_TEST(errors) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 3, NULL));
  ck_assert_int_eq(run_error(g), CDAG_ERR_UNMATCHED);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 0 op 0 (send"));
  cdag_graph_free(&g);
  g = cdag_test_graph(2);
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 0, 3, NULL));
  ck_assert_int_eq(run_error(g), CDAG_ERR_UNMATCHED);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 1 op 0 (recv"));
  cdag_graph_free(&g);
  g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0, 4, 0, 0, NULL));
  ck_assert_int_eq(run_error(g), CDAG_ERR_TRUNCATE);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 1 op 0 (recv) receives 4 bytes but its matched send rank 0 op 0 (send) sends 8"));
  cdag_graph_free(&g);
  g = cdag_test_graph(3); /* the second receive of a channel has no send (the first one matched) */
  CK_OK(cdag_rank_send(g, 2, 0, 8, 1, 4, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 2, 4, NULL));
  CK_OK(cdag_rank_recv(g, 1, 8, 8, 2, 4, NULL));
  ck_assert_int_eq(run_error(g), CDAG_ERR_UNMATCHED);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 1 op 1 (recv"));
  cdag_graph_free(&g);
  g = cdag_test_graph(2); /* each rank receives into the buffer it then sends: deadlock */
  CK_OK(cdag_rank_recv(g, 0, 0, 8, 1, 0, NULL));
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 0, 0, NULL));
  CK_OK(cdag_rank_send(g, 1, 0, 8, 0, 0, NULL));
  ck_assert_int_eq(run_error(g), CDAG_ERR_CYCLE);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "deadlock"));
  cdag_graph_free(&g);
}
END_TEST

/* Each rank receives, then (by an explicit dependency) sends: a cycle of four ops. Rank 2
   waits on the cycle without being on it; the message names the cycle only. */
START_TEST(deadlock_names_the_cycle) {
  cdag_graph *g = cdag_test_graph(3);
  cdag_op r0, s0, r1, s1;
  CK_OK(cdag_rank_recv(g, 2, 0x0, 8, 0, 9, NULL));      /* id 0: stuck behind the cycle */
  CK_OK(cdag_rank_recv(g, 0, 0x0, 8, 1, 0, &r0));
  CK_OK(cdag_rank_send(g, 0, 0x10, 8, 1, 0, &s0));
  CK_OK(cdag_rank_send(g, 0, 0x20, 8, 2, 9, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0x0, 8, 0, 0, &r1));
  CK_OK(cdag_rank_send(g, 1, 0x10, 8, 0, 0, &s1));
  ck_assert_int_eq(cdag_depend(g, r0, s0), CDAG_OK);
  ck_assert_int_eq(cdag_depend(g, s0, 3), CDAG_OK);
  ck_assert_int_eq(cdag_depend(g, r1, s1), CDAG_OK);
  ck_assert_int_eq(run_error(g), CDAG_ERR_CYCLE);
  const char *msg = cdag_error_message();
  ck_assert_ptr_nonnull(strstr(msg, "deadlock, 6 ops can never run"));
  ck_assert_ptr_nonnull(strstr(msg, "rank 0 op 0 (recv)"));
  ck_assert_ptr_nonnull(strstr(msg, "rank 0 op 1 (send)"));
  ck_assert_ptr_nonnull(strstr(msg, "rank 1 op 0 (recv)"));
  ck_assert_ptr_nonnull(strstr(msg, "rank 1 op 1 (send)"));
  ck_assert_ptr_null(strstr(msg, "rank 2"));
  ck_assert_ptr_null(strstr(msg, "rank 0 op 2"));
  cdag_graph_free(&g);
}
END_TEST

/* Random graphs (forwarding, scratch, copies, reductions): every order gives the same memory. */
START_TEST(orders_agree) {
  for (uint64_t seed = 1; seed <= (uint64_t)cdag_test_iterations(40); seed++) {
    cdag_graph *g;
    ck_assert_int_eq(gen_random_graph(seed, &(gen_random_opts){.reduce_mode = -1}, &g), CDAG_OK);
    sim_mem *init = memory(g), *first, *other;
    sim_mem_fill_random(init, seed);
    ck_assert_int_eq(sim_mem_clone(init, &first), CDAG_OK);
    ck_assert_int_eq(sim_run_graph(g, first, 0), CDAG_OK);
    for (uint64_t order = 1; order <= 6; order++) {
      ck_assert_int_eq(sim_mem_clone(init, &other), CDAG_OK);
      ck_assert_int_eq(sim_run_graph(g, other, order * 7919 + seed), CDAG_OK);
      ck_assert_msg(sim_mem_compare(first, other, g, 1) == CDAG_OK, "seed %llu order %llu: %s",
                    (unsigned long long)seed, (unsigned long long)order, cdag_error_message());
      sim_mem_free(other);
    }
    sim_mem_free(first);
    sim_mem_free(init);
    cdag_graph_free(&g);
  }
}
END_TEST

/* 100,000 ops: a token passed around a ring of 10 ranks 2,500 times, each hop adding 1. */
START_TEST(long_ring) {
  enum { RANKS = 10, LAPS = 2500 };
  cdag_graph *g = cdag_test_graph(RANKS);
  for (int lap = 0; lap < LAPS; lap++)
    for (int r = 0; r < RANKS; r++) {
      int next = (r + 1) % RANKS;
      CK_OK(cdag_rank_send(g, r, 0x0, 4, next, 0, NULL));
      CK_OK(cdag_rank_recv(g, next, 0x8, 4, r, 0, NULL));
      CK_OK(cdag_rank_reduce_local(g, next, 0x10, 0x8, 1, CDAG_INT32, CDAG_SUM, NULL)); /* +1 */
      CK_OK(cdag_rank_copy_local(g, next, 0x8, 0x0, 4, NULL));
    }
  sim_mem *m = memory(g);
  int32_t zero = 0, one = 1;
  for (int r = 0; r < RANKS; r++) {
    put(m, r, 0x0, &zero, 4);
    put(m, r, 0x10, &one, 4);
  }
  ck_assert_int_eq(sim_run_graph(g, m, 0), CDAG_OK);
  int32_t last = RANKS * LAPS;
  expect_bytes(m, 0, 0x0, &last, 4);
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

/* ---- SST tuples ---- */

START_TEST(apply_sst) {
  cdag_graph *g = cdag_test_graph(3);
  for (int r = 0; r < 3; r++) CK_OK(cdag_rank_copy_local(g, r, 0x0, 0x40, 0x40, NULL));
  sim_mem *m = memory(g);
  for (int r = 0; r < 3; r++)
    for (int e = 0; e < 4; e++) {
      int32_t v = 100 * r + e;
      put(m, r, 0x20 + 4 * (uint64_t)e, &v, 4);
    }
  put(m, 0, 0x0, "abcdefgh", 8);
  put(m, 1, 0x0, "ABCDEFGH", 8);
  df_xfer xfers[] = {{.src = 0, .dst = 0, .src_addr = 0x0, .dst_addr = 0x4, .len = 4},  /* a swap: */
                     {.src = 0, .dst = 0, .src_addr = 0x4, .dst_addr = 0x0, .len = 4},  /* origins are read */
                     {.src = 1, .dst = 2, .src_addr = 0x2, .dst_addr = 0x41, .len = 5}};
  df_run runs[] = {{.lo = 0, .hi = 2, .mult = 1, .addr = 0x20}, {.lo = 1, .hi = 1, .mult = 3, .addr = 0x28}};
  df_set sets[] = {{.first = 0, .nruns = 2, .ncontrib = 6}};
  df_red reds[] = {{.dst = 1, .set = 0, .dst_addr = 0x50, .count = 2, .type = CDAG_INT32, .op = CDAG_SUM}};
  df_sst sst = {.nprocs = 3, .nxfers = 3, .xfers = xfers, .nreds = 1, .reds = reds, .nsets = 1, .sets = sets,
                .nruns = 2, .runs = runs};
  ck_assert_int_eq(sim_apply_sst(&sst, m), CDAG_OK);
  expect_bytes(m, 0, 0x0, "efghabcd", 8);
  expect_bytes(m, 2, 0x41, "CDEFG", 5);
  /* element e: ranks 0..2 at 0x20 once each, rank 1 at 0x28 three times */
  int32_t want[2] = {(0 + 100 + 200) + 3 * (100 + 2), (1 + 101 + 201) + 3 * (100 + 3)};
  expect_bytes(m, 1, 0x50, want, 8);
  xfers[2].dst_addr = 0x7e; /* past rank 2's memory */
  ck_assert_int_eq(sim_apply_sst(&sst, m), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 1 0x2 -> rank 2 0x7e (5 bytes) is outside memory"));
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

/* ---- plans ---- */

/* A 3-rank plan built by hand: a bcast from rank 1 and an int32 allreduce. */
START_TEST(plan_semantics) {
  cdag_graph *g = cdag_test_graph(3);
  for (int r = 0; r < 3; r++) { /* the graph only provides the memory here */
    CK_OK(cdag_rank_copy_local(g, r, 0x0, 0x100, 16, NULL));
    CK_OK(cdag_rank_copy_local(g, r, 0x200, 0x300, 8, NULL));
  }
  sim_mem *m = memory(g);
  int32_t v[3][2] = {{1, 2}, {10, 20}, {100, 200}}, sum[2] = {111, 222};
  for (int r = 0; r < 3; r++) {
    put(m, r, 0x0, r == 1 ? "sixteen bytes!!" : "...............", 16);
    put(m, r, 0x200, v[r], 8);
  }
  cdag_plan p = {.nprocs = 3};
  int32_t ranks[3] = {0, 1, 2};
  det_piece pieces[] = {{0x0, 10}, {0x0 + 10, 6}, {0x100, 16}, {0x100, 16}, {0x200, 8}, {0x200, 8}, {0x200, 8},
                        {0x300, 8}, {0x300, 8}, {0x300, 8}};
  det_iov iovs[] = {
      /* bcast: send slots (root = member 1 has two pieces), then recv slots (root's empty) */
      {0, 0, 0}, {0, 2, 16}, {0, 0, 0}, {2, 1, 16}, {0, 0, 0}, {3, 1, 16},
      /* allreduce: send slots, recv slots */
      {4, 1, 8}, {5, 1, 8}, {6, 1, 8}, {7, 1, 8}, {8, 1, 8}, {9, 1, 8}};
  det_coll colls[2] = {
      {.kind = DET_BCAST, .root = 1, .nranks = 3, .ranks_first = 0, .nsend_slots = 1, .nrecv_slots = 1, .send_first = 0, .recv_first = 3},
      {.kind = DET_ALLREDUCE, .root = -1, .nranks = 3, .ranks_first = 0, .nsend_slots = 1, .nrecv_slots = 1, .send_first = 6, .recv_first = 9, .type = CDAG_INT32, .op = CDAG_SUM}};
  p.colls = colls, p.ncolls = 2, p.ranks = ranks, p.nranks = 3, p.iovs = iovs, p.niovs = 12, p.pieces = pieces, p.npieces = 10;
  ck_assert_int_eq(sim_run_plan(&p, m), CDAG_OK);
  expect_bytes(m, 0, 0x100, "sixteen bytes!!", 16);
  expect_bytes(m, 2, 0x100, "sixteen bytes!!", 16);
  for (int r = 0; r < 3; r++) expect_bytes(m, r, 0x300, sum, 8);
  iovs[3].bytes = 12, pieces[2].len = 12; /* a receive slot of the wrong size is reported */
  ck_assert_int_eq(sim_run_plan(&p, m), CDAG_ERR_PLAN);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "bcast rooted at 1"));
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

/* sim_mem_compare_zeros takes -0.0 and +0.0 as one inside its spans only, each scalar at the
   span's start plus a multiple of its width: floats, doubles, x87 long doubles (sign in byte
   9), doubles at an odd address; not outside a span, not a nonzero value's sign, not a byte
   that is not a scalar's sign. */
START_TEST(compare_zero_signs) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0x100, 96, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0x100, 96, 0, 0, NULL));
  sim_mem *m = memory(g), *c;
  memset(sim_mem_at(m, 1, 0x100, 96), 0, 96);
  CK_OK(sim_mem_clone(m, &c));
  static const sim_zeros z[] = {{1, 4, 0x100, 0x110}, {1, 8, 0x110, 0x120}, {1, 16, 0x120, 0x140}, {1, 8, 0x141, 0x151}};
  static const struct { uint64_t at; uint8_t mine, theirs; int same; } cases[] = {
      {0x103, 0x00, 0x80, 1},   /* float -0.0 */
      {0x117, 0x80, 0x00, 1},   /* double -0.0 in the reference */
      {0x129, 0x80, 0x00, 1},   /* long double: sign and exponent in byte 9 */
      {0x148, 0x00, 0x80, 1},   /* a double at 0x141 */
      {0x147, 0x00, 0x80, 0},   /* the sign byte of an aligned double, not of this span's */
      {0x157, 0x00, 0x80, 0},   /* outside every span */
      {0x105, 0x00, 0x80, 0},   /* not a sign byte */
      {0x103, 0x00, 0x81, 0},   /* more than the sign bit */
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    sim_mem_at(m, 1, cases[k].at, 1)[0] = cases[k].mine;
    sim_mem_at(c, 1, cases[k].at, 1)[0] = cases[k].theirs;
    ck_assert_int_eq(sim_mem_compare(m, c, g, 1), CDAG_ERR_MISMATCH);
    ck_assert_msg(sim_mem_compare_zeros(m, c, g, 1, z, 4) == (cases[k].same ? CDAG_OK : CDAG_ERR_MISMATCH), "case %zu", k);
    sim_mem_at(m, 1, cases[k].at, 1)[0] = sim_mem_at(c, 1, cases[k].at, 1)[0] = 0;
  }
  uint8_t *one = sim_mem_at(m, 1, 0x108, 4), *minus = sim_mem_at(c, 1, 0x108, 4);   /* 1.0f against -1.0f */
  one[2] = minus[2] = 0x80, one[3] = 0x3f, minus[3] = 0xbf;
  ck_assert_int_eq(sim_mem_compare_zeros(m, c, g, 1, z, 4), CDAG_ERR_MISMATCH);
  sim_mem_free(c);
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

/* A view shares its image's bytes until sim_mem_keep copies the regions about to change: it
   then keeps them as they were, while the regions not kept follow the image. */
START_TEST(view_keeps_what_changes) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0x100, 16, 1, 0, NULL));
  CK_OK(cdag_rank_send(g, 0, 0x200, 16, 1, 1, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0x100, 16, 0, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0x200, 16, 0, 1, NULL));
  sim_mem *m = memory(g), *v;
  sim_mem_fill_random(m, 5);
  CK_OK(sim_mem_view(m, &v));
  ck_assert_ptr_eq(sim_mem_at(v, 0, 0x100, 16), sim_mem_at(m, 0, 0x100, 16));   /* no copy */
  uint8_t was = sim_mem_at(m, 0, 0x104, 1)[0];
  CK_OK(sim_mem_keep(v, m, 0, 0x104, 1));
  CK_OK(sim_mem_keep(v, m, 0, 0x108, 2));   /* kept already: the copy stays the first */
  sim_mem_at(m, 0, 0x104, 1)[0] = (uint8_t)(was + 1);
  sim_mem_at(m, 0, 0x200, 1)[0] ^= 0xff;     /* not kept: the view follows */
  ck_assert_int_eq(sim_mem_at(v, 0, 0x104, 1)[0], was);
  ck_assert_int_eq(sim_mem_at(v, 0, 0x200, 1)[0], sim_mem_at(m, 0, 0x200, 1)[0]);
  ck_assert_int_eq(sim_mem_at(v, 1, 0x100, 1)[0], sim_mem_at(m, 1, 0x100, 1)[0]);
  CK_OK(sim_mem_keep(v, m, 1, 0x0, 0x300));   /* a range over both of rank 1's regions */
  sim_mem_at(m, 1, 0x100, 1)[0] ^= 0xff;
  sim_mem_at(m, 1, 0x20f, 1)[0] ^= 0xff;
  ck_assert_int_ne(sim_mem_at(v, 1, 0x100, 1)[0], sim_mem_at(m, 1, 0x100, 1)[0]);
  ck_assert_int_ne(sim_mem_at(v, 1, 0x20f, 1)[0], sim_mem_at(m, 1, 0x20f, 1)[0]);
  sim_mem_free(v);   /* frees its own copies only: m stays whole */
  ck_assert_int_eq(sim_mem_at(m, 0, 0x104, 1)[0], (uint8_t)(was + 1));
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(memory_bounds) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0x100, 16, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0x100, 16, 0, 0, NULL));
  CK_OK(cdag_rank_scratch(g, 1, 0x108, 64));
  sim_mem *m = memory(g);
  ck_assert_ptr_nonnull(sim_mem_at(m, 1, 0x100, 16));   /* the recv; declared scratch no op touches has no bytes */
  ck_assert_ptr_null(sim_mem_at(m, 1, 0x100, 17));
  ck_assert_ptr_null(sim_mem_at(m, 0, 0x0, 1));
  ck_assert_ptr_null(sim_mem_at(m, 2, 0x100, 1));
  sim_mem *c;
  sim_mem_fill_random(m, 3);
  ck_assert_int_eq(sim_mem_clone(m, &c), CDAG_OK);
  ck_assert_int_eq(sim_mem_compare(m, c, g, 0), CDAG_OK);
  sim_mem_at(c, 1, 0x10a, 1)[0] ^= 1;                     /* received into scratch */
  ck_assert_int_eq(sim_mem_compare(m, c, g, 1), CDAG_OK);
  ck_assert_int_eq(sim_mem_compare(m, c, g, 0), CDAG_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 1 byte 0x10a"));
  sim_mem_free(c);
  sim_mem_free(m);
  cdag_graph_free(&g);
}
END_TEST

/* Declared scratch no op touches takes no memory: a fuzzer's 87 MB declaration made verify
   take seconds, a gigabyte would have met the simulator's limit. */
START_TEST(untouched_scratch_takes_no_memory) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_scratch(g, 0, 0x0, (size_t)1 << 30));
  CK_OK(cdag_rank_scratch(g, 0, 0x40000000 + 0x100, 16));
  CK_OK(cdag_rank_send(g, 1, 0x100, 64, 0, 0, NULL));
  CK_OK(cdag_rank_recv(g, 0, 0x8000, 64, 1, 0, NULL));
  sim_mem *m = memory(g);
  ck_assert_uint_eq(sim_mem_bytes(m), 128);
  ck_assert_uint_eq(sim_mem_bytes_outside_scratch(m, g), 64);   /* rank 0's receive lies in its scratch */
  sim_mem_free(m);
  cdag_plan *p = NULL;
  uint64_t compared = 0;
  CK_OK(cdag_analyze(g, NULL, &p));
  CK_OK(exec_verify_bytes(g, p, 1, 2, &compared));
  ck_assert_uint_eq(compared, 64);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(verify_catches_wrong_plans) {
  cdag_graph *g = cdag_test_graph(4);
  for (int r = 1; r < 4; r++) {
    CK_OK(cdag_rank_send(g, 0, 0x0, 8, r, 0, NULL));
    CK_OK(cdag_rank_recv(g, r, 0x40, 8, 0, 0, NULL));
  }
  cdag_plan *p;
  ck_assert_int_eq(cdag_analyze(g, NULL, &p), CDAG_OK);
  ck_assert_ptr_null(g->pred_start); /* the analysis released the dependency lists ... */
  ck_assert_int_eq(cdag_plan_verify(g, p), CDAG_OK);
  ck_assert_ptr_null(g->pred_start); /* ... and verifying, which reads a const graph, wrote none back */
  for (int64_t i = 0; i < p->npieces; i++) p->pieces[i].len = 4; /* moves only half the bytes */
  for (int64_t i = 0; i < p->niovs; i++) p->iovs[i].bytes = p->iovs[i].n ? 4 : 0;
  ck_assert_int_eq(cdag_plan_verify(g, p), CDAG_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "plan differs"));
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

Suite *cdag_sim_suite(void) {
  Suite *s = suite_create("sim");
  TCase *t = tcase_create("graphs");
  tcase_add_test(t, ping_pong);
  tcase_add_test(t, binomial_broadcast_five);
  tcase_add_test(t, scratch_copy_reduce_self);
  tcase_add_test(t, send_takes_data_when_it_runs);
  tcase_add_test(t, errors);
  tcase_add_test(t, memory_bounds);
  tcase_add_test(t, compare_zero_signs);
  tcase_add_test(t, view_keeps_what_changes);
  tcase_add_test(t, untouched_scratch_takes_no_memory);
  tcase_add_test(t, deadlock_names_the_cycle);
  tcase_add_test(t, orders_agree);
  tcase_add_test(t, long_ring);
  tcase_add_test(t, apply_sst);
  suite_add_tcase(s, t);
  TCase *p = tcase_create("plans");
  tcase_add_test(p, plan_semantics);
  tcase_add_test(p, verify_catches_wrong_plans);
  suite_add_tcase(s, p);
  return s;
}

CDAG_CHECK_MAIN(cdag_sim_suite)

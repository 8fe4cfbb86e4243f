/* cdag tests — tests/exec/sim/test_sim_plan.c: plans in the simulator, and plan verification.
 *
 * Plans are built by hand (a small builder lays out slots and pieces as detect.h says) and
 * run on a known memory; the expected memory is written out directly from the meaning of
 * each kind (block of member i's slot lands in member j's slot). Every kind, slots of
 * several pieces split differently on the two sides, residual messages and reductions, the
 * consistency checks of a plan, and cdag_plan_verify on right and wrong hand-made plans. */
#include <string.h>

#include "check_main.h"
#include "exec/sim/sim.h"

enum { P = 4, IN = 0x0, INT = 0x200, OUT = 0x400, MEM = 0x800 };

/* ---- memory: every rank has bytes [0, MEM); IN holds r*64+i, INT holds int32 r*10+e ---- */

static cdag_graph *memory_graph(int p) {
  cdag_graph *g;
  ck_assert_int_eq(cdag_graph_create_global(p, &g), CDAG_OK);
  for (int r = 0; r < p; r++) ck_assert_int_eq(cdag_rank_copy_local(g, r, 0, MEM / 2, MEM / 2, NULL), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  return g;
}

static sim_mem *initial(const cdag_graph *g) {
  sim_mem *m;
  ck_assert_int_eq(sim_mem_create(g, &m), CDAG_OK);
  ck_assert_ptr_nonnull(sim_mem_at(m, g->nprocs - 1, 0, MEM));
  for (int r = 0; r < g->nprocs; r++) {
    uint8_t *b = sim_mem_at(m, r, 0, MEM);
    memset(b, 0, MEM);
    for (int i = 0; i < 64; i++) b[IN + i] = (uint8_t)(r * 64 + i);
    for (int e = 0; e < 16; e++) {
      int32_t v = r * 10 + e;
      memcpy(b + INT + 4 * e, &v, 4);
    }
  }
  return m;
}

static uint8_t *at(sim_mem *m, int rank, uint64_t addr) { return sim_mem_at(m, rank, addr, 1); }

static int32_t int_at(sim_mem *m, int rank, int e) {
  int32_t v;
  memcpy(&v, at(m, rank, INT + 4 * (uint64_t)e), 4);
  return v;
}

static void set_int(sim_mem *m, int rank, uint64_t addr, int32_t v) { memcpy(at(m, rank, addr), &v, 4); }

static void same(sim_mem *got, sim_mem *want, const cdag_graph *g) {
  ck_assert_msg(sim_mem_compare(want, got, g, 0) == CDAG_OK, "%s", cdag_error_message());
}

/* ---- a hand-made plan ---- */

typedef struct {
  cdag_plan p;
  det_coll colls[4];
  int32_t ranks[16];
  det_iov iovs[128];
  det_piece pieces[128];
  int64_t piece_iov[128];   /* which iov each piece (as added) belongs to */
  det_piece added[128];
  int64_t nadded;
  df_xfer xfers[8];
  det_msg msgs[8];
} hand_plan;

static void hp_init(hand_plan *h, int nprocs) {
  memset(h, 0, sizeof *h);
  h->p.nprocs = nprocs;
  h->p.colls = h->colls, h->p.ranks = h->ranks, h->p.iovs = h->iovs, h->p.pieces = h->pieces;
  h->p.xfers = h->xfers, h->p.msgs = h->msgs;
}

/* A collective of kind k over the listed members, slots as the table of kinds, all empty. */
static det_coll *hp_coll(hand_plan *h, det_kind k, int root, int n, const int32_t *members) {
  det_coll *c = &h->colls[h->p.ncolls++];
  int many_send = k == DET_SCATTER || k == DET_SCATTERV || k == DET_ALLTOALL || k == DET_ALLTOALLV ||
                  k == DET_REDUCE_SCATTER || k == DET_REDUCE_SCATTER_BLOCK;
  int many_recv = k == DET_GATHER || k == DET_GATHERV || k == DET_ALLGATHER || k == DET_ALLGATHERV ||
                  k == DET_ALLTOALL || k == DET_ALLTOALLV;
  *c = (det_coll){.kind = k, .root = root, .nranks = n, .ranks_first = h->p.nranks,
                  .nsend_slots = many_send ? n : 1, .nrecv_slots = many_recv ? n : 1, .type = CDAG_INT32, .op = CDAG_SUM};
  if (k == DET_BARRIER) c->nsend_slots = c->nrecv_slots = 0;
  memcpy(h->ranks + h->p.nranks, members, (size_t)n * sizeof *members);
  h->p.nranks += n;
  c->send_first = h->p.niovs;
  c->recv_first = c->send_first + det_side_iovs(c, 1);   /* a gather's receives, a scatter's sends: the root's only */
  h->p.niovs = c->recv_first + det_side_iovs(c, 0);
  ck_assert_int_le(h->p.niovs, 128);
  return c;
}

/* Appends piece (addr, len) to slot s of member m (send side if send). */
static void hp_piece(hand_plan *h, const det_coll *c, int send, int m, int s, uint64_t addr, uint64_t len) {
  int64_t iov = send ? c->send_first + (int64_t)m * c->nsend_slots + s : c->recv_first + (int64_t)m * c->nrecv_slots + s;
  if (det_side_rooted(c, send)) {
    ck_assert_int_eq(h->ranks[c->ranks_first + m], c->root);
    iov = (send ? c->send_first : c->recv_first) + s;
  }
  h->piece_iov[h->nadded] = iov;
  h->added[h->nadded++] = (det_piece){addr, len};
}

/* Lays the added pieces out iov by iov (in the order added) and sets each iov. */
static cdag_plan *hp_done(hand_plan *h) {
  h->p.npieces = 0;
  for (int64_t v = 0; v < h->p.niovs; v++) {
    h->iovs[v] = (det_iov){.first = h->p.npieces};
    for (int64_t i = 0; i < h->nadded; i++)
      if (h->piece_iov[i] == v) {
        h->pieces[h->p.npieces++] = h->added[i];
        h->iovs[v].n++;
        h->iovs[v].bytes += h->added[i].len;
      }
  }
  return &h->p;
}

static void hp_xfer(hand_plan *h, int src, uint64_t sa, int dst, uint64_t da, uint64_t len) {
  det_msg *last = h->p.nmsgs ? &h->msgs[h->p.nmsgs - 1] : NULL;
  if (!last || last->src != src || last->dst != dst)
    h->msgs[h->p.nmsgs++] = (det_msg){.src = src, .dst = dst, .first = h->p.nxfers};
  last = &h->msgs[h->p.nmsgs - 1];
  last->n++;
  last->bytes += len;
  h->xfers[h->p.nxfers++] = (df_xfer){.src = src, .dst = dst, .src_addr = sa, .dst_addr = da, .len = len};
}

static const int32_t all[P] = {0, 1, 2, 3};

/* Runs plan p on a fresh initial memory and compares with want (built by the caller). */
static void expect_plan(const cdag_graph *g, const cdag_plan *p, sim_mem *want) {
  sim_mem *m = initial(g);
  ck_assert_msg(sim_run_plan(p, m) == CDAG_OK, "%s", cdag_error_message());
  same(m, want, g);
  sim_mem_free(m);
}

/* ---- rooted kinds ---- */

START_TEST(plan_bcast_pieces_split_differently) {
  cdag_graph *g = memory_graph(P);
  hand_plan h;
  hp_init(&h, P);
  det_coll *c = hp_coll(&h, DET_BCAST, 2, P, all);
  hp_piece(&h, c, 1, 2, 0, IN + 8, 4);     /* root's message: IN[8..12) ++ IN[0..4) */
  hp_piece(&h, c, 1, 2, 0, IN + 0, 4);
  for (int j = 0; j < P; j++)
    if (j != 2) {
      hp_piece(&h, c, 0, j, 0, OUT + 0, 6);  /* received as 6 + 2 bytes */
      hp_piece(&h, c, 0, j, 0, OUT + 16, 2);
    }
  sim_mem *want = initial(g);
  for (int j = 0; j < P; j++)
    if (j != 2) {
      uint8_t msg[8] = {2 * 64 + 8, 2 * 64 + 9, 2 * 64 + 10, 2 * 64 + 11, 2 * 64 + 0, 2 * 64 + 1, 2 * 64 + 2, 2 * 64 + 3};
      memcpy(at(want, j, OUT), msg, 6);
      memcpy(at(want, j, OUT + 16), msg + 6, 2);
    }
  expect_plan(g, hp_done(&h), want);
  sim_mem_free(want);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(plan_scatterv_gather) {
  cdag_graph *g = memory_graph(P);
  hand_plan h;
  hp_init(&h, P);
  const int32_t sub[3] = {0, 1, 3};
  det_coll *c = hp_coll(&h, DET_SCATTERV, 1, 3, sub);   /* member j gets j+1 bytes from IN[8j..) */
  for (int j = 0; j < 3; j++) {
    hp_piece(&h, c, 1, 1, j, IN + 8 * (uint64_t)j, (uint64_t)j + 1);
    hp_piece(&h, c, 0, j, 0, OUT + 0x80, (uint64_t)j + 1);
  }
  det_coll *d = hp_coll(&h, DET_GATHER, 0, P, all);     /* root gets IN[4..8) of member i at OUT[4i] */
  for (int i = 0; i < P; i++) {
    hp_piece(&h, d, 1, i, 0, IN + 4, 4);
    hp_piece(&h, d, 0, 0, i, OUT + 4 * (uint64_t)i, 4);
  }
  sim_mem *want = initial(g);
  for (int j = 0; j < 3; j++)
    for (int b = 0; b <= j; b++) *at(want, sub[j], OUT + 0x80 + (uint64_t)b) = (uint8_t)(1 * 64 + 8 * j + b);
  for (int i = 0; i < P; i++)
    for (int b = 0; b < 4; b++) *at(want, 0, OUT + 4 * (uint64_t)i + (uint64_t)b) = (uint8_t)(i * 64 + 4 + b);
  expect_plan(g, hp_done(&h), want);
  sim_mem_free(want);
  cdag_graph_free(&g);
}
END_TEST

/* ---- all-to-all kinds ---- */

START_TEST(plan_allgather) {
  cdag_graph *g = memory_graph(P);
  hand_plan h;
  hp_init(&h, P);
  det_coll *c = hp_coll(&h, DET_ALLGATHER, -1, P, all);
  for (int i = 0; i < P; i++) {
    hp_piece(&h, c, 1, i, 0, IN, 4);
    for (int j = 0; j < P; j++) hp_piece(&h, c, 0, j, i, OUT + 4 * (uint64_t)i, 4);
  }
  sim_mem *want = initial(g);
  for (int j = 0; j < P; j++)
    for (int i = 0; i < P; i++)
      for (int b = 0; b < 4; b++) *at(want, j, OUT + 4 * (uint64_t)i + (uint64_t)b) = (uint8_t)(i * 64 + b);
  expect_plan(g, hp_done(&h), want);
  sim_mem_free(want);
  cdag_graph_free(&g);
}
END_TEST

/* Member i sends IN[4j..4j+4) to j as two 2-byte pieces listed high half first; j receives
   it at OUT[4i] as one piece; a member's own block stays (its slots are empty). */
START_TEST(plan_alltoall_per_slot_pieces) {
  cdag_graph *g = memory_graph(P);
  hand_plan h;
  hp_init(&h, P);
  det_coll *c = hp_coll(&h, DET_ALLTOALL, -1, P, all);
  for (int i = 0; i < P; i++)
    for (int j = 0; j < P; j++)
      if (i != j) {
        hp_piece(&h, c, 1, i, j, IN + 4 * (uint64_t)j + 2, 2);
        hp_piece(&h, c, 1, i, j, IN + 4 * (uint64_t)j, 2);
        hp_piece(&h, c, 0, j, i, OUT + 4 * (uint64_t)i, 4);
      }
  sim_mem *want = initial(g);
  static const int order[4] = {2, 3, 0, 1};
  for (int i = 0; i < P; i++)
    for (int j = 0; j < P; j++)
      if (i != j)
        for (int b = 0; b < 4; b++) *at(want, j, OUT + 4 * (uint64_t)i + (uint64_t)b) = (uint8_t)(i * 64 + 4 * j + order[b]);
  expect_plan(g, hp_done(&h), want);
  sim_mem_free(want);
  cdag_graph_free(&g);
}
END_TEST

/* ---- reductions ---- */

START_TEST(plan_reductions) {
  cdag_graph *g = memory_graph(P);
  hand_plan h;
  hp_init(&h, P);
  det_coll *c = hp_coll(&h, DET_REDUCE, 3, P, all);               /* INT[0..2) summed at root 3 */
  for (int i = 0; i < P; i++) hp_piece(&h, c, 1, i, 0, INT, 8);
  hp_piece(&h, c, 0, 3, 0, OUT, 8);
  const int32_t sub[3] = {1, 2, 3};
  det_coll *a = hp_coll(&h, DET_ALLREDUCE, -1, 3, sub);           /* max of INT[2..4), two pieces */
  a->op = CDAG_MAX;
  for (int i = 0; i < 3; i++) {
    hp_piece(&h, a, 1, i, 0, INT + 8, 4);
    hp_piece(&h, a, 1, i, 0, INT + 12, 4);
    hp_piece(&h, a, 0, i, 0, OUT + 0x10, 8);
  }
  det_coll *s = hp_coll(&h, DET_REDUCE_SCATTER_BLOCK, -1, P, all); /* member j: sum of INT[4+j] */
  for (int i = 0; i < P; i++)
    for (int j = 0; j < P; j++) hp_piece(&h, s, 1, i, j, INT + 16 + 4 * (uint64_t)j, 4);
  for (int j = 0; j < P; j++) hp_piece(&h, s, 0, j, 0, OUT + 0x20, 4);
  sim_mem *want = initial(g);
  for (int e = 0; e < 2; e++) set_int(want, 3, OUT + 4 * (uint64_t)e, (0 + 10 + 20 + 30) + 4 * e);
  for (int i = 1; i < P; i++)
    for (int e = 0; e < 2; e++) set_int(want, i, OUT + 0x10 + 4 * (uint64_t)e, 30 + 2 + e);
  for (int j = 0; j < P; j++) set_int(want, j, OUT + 0x20, 60 + 4 * (4 + j));
  ck_assert_int_eq(int_at(want, 2, 3), 23);
  expect_plan(g, hp_done(&h), want);
  sim_mem_free(want);
  cdag_graph_free(&g);
}
END_TEST

/* ---- residual parts: messages (one of them a local copy) and a reduction with a multiset ---- */

START_TEST(plan_residual) {
  cdag_graph *g = memory_graph(P);
  hand_plan h;
  hp_init(&h, P);
  hp_xfer(&h, 0, IN, 1, OUT, 3);
  hp_xfer(&h, 0, IN + 10, 1, OUT + 5, 2);
  hp_xfer(&h, 2, IN, 2, OUT, 4);
  hp_xfer(&h, 3, OUT, 3, IN, 4);         /* reads the origin of OUT (zeros) */
  hp_xfer(&h, 3, IN, 3, OUT, 4);         /* ... while this writes OUT: origins are read */
  df_run runs[2] = {{.lo = 0, .hi = 1, .mult = 1, .addr = INT}, {.lo = 3, .hi = 3, .mult = 2, .addr = INT}};
  df_set set = {.first = 0, .nruns = 2, .ncontrib = 4};
  df_sst sst = {.nprocs = P, .nsets = 1, .sets = &set, .nruns = 2, .runs = runs};
  df_red red = {.dst = 2, .set = 0, .dst_addr = OUT + 0x40, .count = 2, .type = CDAG_INT32, .op = CDAG_SUM};
  h.p.sst = &sst, h.p.reds = &red, h.p.nreds = 1;
  sim_mem *want = initial(g);
  memcpy(at(want, 1, OUT), (uint8_t[]){0, 1, 2}, 3);
  memcpy(at(want, 1, OUT + 5), (uint8_t[]){10, 11}, 2);
  memcpy(at(want, 2, OUT), (uint8_t[]){128, 129, 130, 131}, 4);
  memcpy(at(want, 3, IN), (uint8_t[]){0, 0, 0, 0}, 4);
  memcpy(at(want, 3, OUT), (uint8_t[]){192, 193, 194, 195}, 4);
  for (int e = 0; e < 2; e++) set_int(want, 2, OUT + 0x40 + 4 * (uint64_t)e, (0 + e) + (10 + e) + 2 * (30 + e));
  expect_plan(g, hp_done(&h), want);
  sim_mem_free(want);
  cdag_graph_free(&g);
}
END_TEST

/* ---- inconsistent plans are reported, naming the collective ---- */

static int run_on_fresh(const cdag_graph *g, const cdag_plan *p) {
  sim_mem *m = initial(g);
  int rc = sim_run_plan(p, m);
  sim_mem_free(m);
  return rc;
}

static void expect_error(const cdag_graph *g, const cdag_plan *p, int code, const char *text) {
  ck_assert_int_eq(run_on_fresh(g, p), code);
  ck_assert_msg(strstr(cdag_error_message(), text), "message '%s' lacks '%s'", cdag_error_message(), text);
}

/* A correct bcast from rank 1: IN[0..8) to OUT[0..8) of the others. */
static det_coll *bcast_plan(hand_plan *h) {
  hp_init(h, P);
  det_coll *c = hp_coll(h, DET_BCAST, 1, P, all);
  hp_piece(h, c, 1, 1, 0, IN, 8);
  for (int j = 0; j < P; j++)
    if (j != 1) hp_piece(h, c, 0, j, 0, OUT, 8);
  hp_done(h);
  return c;
}

START_TEST(plan_inconsistencies) {
  cdag_graph *g = memory_graph(P);
  hand_plan h;
  det_coll *c = bcast_plan(&h);
  ck_assert_int_eq(run_on_fresh(g, &h.p), CDAG_OK);
  h.pieces[1].len = 6, h.iovs[c->recv_first].bytes = 6;            /* member 0 receives 6 of 8 */
  expect_error(g, &h.p, CDAG_ERR_PLAN, "bcast rooted at 1: rank 1 sends 8 bytes but rank 0's slot holds 6");
  c = bcast_plan(&h);
  h.iovs[c->recv_first].bytes = 7;                                  /* bytes disagree with pieces */
  expect_error(g, &h.p, CDAG_ERR_PLAN, "bytes differ from the sum of its pieces (rank 0)");
  c = bcast_plan(&h);
  c->root = 5;
  expect_error(g, &h.p, CDAG_ERR_PLAN, "the root is not a member");
  c = bcast_plan(&h);
  h.iovs[c->send_first] = h.iovs[c->recv_first];                    /* a non-root sends */
  expect_error(g, &h.p, CDAG_ERR_PLAN, "only the root may fill holds data (rank 0)");
  c = bcast_plan(&h);
  c->nsend_slots = 2;
  expect_error(g, &h.p, CDAG_ERR_PLAN, "slot counts differ");
  c = bcast_plan(&h);
  h.pieces[2].addr = MEM - 4;                                       /* past rank 2's memory */
  expect_error(g, &h.p, CDAG_ERR_ARG, "rank 2 address 0x7fc is outside memory");
  c = bcast_plan(&h);
  h.ranks[3] = 1;
  expect_error(g, &h.p, CDAG_ERR_PLAN, "not distinct sorted ranks");
  hp_init(&h, P);
  hp_xfer(&h, 0, IN, 1, OUT, 3);
  h.xfers[0].dst = 2;                                               /* message says 0 -> 1 */
  expect_error(g, &h.p, CDAG_ERR_PLAN, "residual message 0 (rank 0 -> 1) holds a transfer of rank 0 -> 2");
  h.msgs[0].dst = 2, h.xfers[0].dst_addr = MEM;
  expect_error(g, &h.p, CDAG_ERR_ARG, "residual transfer rank 0 0x0 -> rank 2 0x800 (3 bytes) is outside memory");
  c = bcast_plan(&h);                                               /* a residual message also */
  hp_xfer(&h, 3, IN, 2, OUT + 7, 2);                                /* writes OUT[7] of rank 2 */
  expect_error(g, &h.p, CDAG_ERR_PLAN, "the plan writes rank 2 byte 0x407 twice");
  hp_init(&h, 3);
  expect_error(g, &h.p, CDAG_ERR_ARG, "plan is for 3 ranks");
  cdag_graph_free(&g);
}
END_TEST

/* ---- cdag_plan_verify on hand-made plans ---- */

START_TEST(verify_hand_plans) {
  cdag_graph *g; /* rank 1 broadcasts IN[0..8) to OUT of the others, linearly */
  ck_assert_int_eq(cdag_graph_create_global(P, &g), CDAG_OK);
  for (int j = 0; j < P; j++)
    if (j != 1) {
      CK_OK(cdag_rank_send(g, 1, IN, 8, j, 0, NULL));
      CK_OK(cdag_rank_recv(g, j, OUT, 8, 1, 0, NULL));
    }
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  hand_plan h;
  hp_init(&h, P);
  det_coll *c = hp_coll(&h, DET_BCAST, 1, P, all);
  hp_piece(&h, c, 1, 1, 0, IN, 8);
  for (int j = 0; j < P; j++)
    if (j != 1) hp_piece(&h, c, 0, j, 0, OUT, 8);
  ck_assert_int_eq(cdag_plan_verify(g, hp_done(&h)), CDAG_OK);
  uint64_t compared = 0;
  ck_assert_int_eq(exec_verify_bytes(g, &h.p, 7, 5, &compared), CDAG_OK);
  ck_assert_uint_eq(compared, 4 * 8);
  hp_init(&h, P); /* the same as residual messages, but rank 3 gets its block 4 bytes too far */
  for (int j = 0; j < P; j++)
    if (j != 1) hp_xfer(&h, 1, IN, j, OUT + (j == 3 ? 4 : 0), j == 3 ? 4 : 8);
  ck_assert_int_eq(cdag_plan_verify(g, &h.p), CDAG_ERR_MISMATCH);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "plan differs from the graph"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 3 byte 0x400 differs"));
  cdag_graph_free(&g);
}
END_TEST

Suite *cdag_sim_plan_suite(void) {
  Suite *s = suite_create("sim_plan");
  TCase *t = tcase_create("kinds");
  tcase_add_test(t, plan_bcast_pieces_split_differently);
  tcase_add_test(t, plan_scatterv_gather);
  tcase_add_test(t, plan_allgather);
  tcase_add_test(t, plan_alltoall_per_slot_pieces);
  tcase_add_test(t, plan_reductions);
  tcase_add_test(t, plan_residual);
  suite_add_tcase(s, t);
  TCase *e = tcase_create("checks");
  tcase_add_test(e, plan_inconsistencies);
  tcase_add_test(e, verify_hand_plans);
  suite_add_tcase(s, e);
  return s;
}

CDAG_CHECK_MAIN(cdag_sim_plan_suite)

/* cdag tests — tests/ir/test_ir.c: building graphs, program order and dependencies.
 *
 * The dependency rules of docs/semantics.md: RAW, WAR and WAW on overlapping bytes of one rank make
 * the later op depend on the earlier; disjoint buffers and reads after reads stay
 * concurrent; explicit dependencies are kept; a file's backward `requires` reorders program
 * order; scratch regions merge. Plus every argument error of the global-graph API. */
#include <math.h>
#include <string.h>

#include "check_main.h"
#include "ir/ir.h"

/* Does `after` list `before` among its predecessors? */
static int depends(const cdag_graph *g, cdag_op before, cdag_op after) {
  for (int32_t k = g->pred_start[after]; k < g->pred_start[after + 1]; k++)
    if (g->pred[k] == before) return 1;
  return 0;
}

static int npred(const cdag_graph *g, cdag_op op) { return g->pred_start[op + 1] - g->pred_start[op]; }

/* A reduce whose input and inout overlap partially names its count, type and both ranges
   (a byte count passed where elements are meant makes them overlap). */
START_TEST(reduce_overlap_named) {
  cdag_graph *g = NULL;
  ck_assert_int_eq(ir_graph_new(1, -1, &g), CDAG_OK);
  ck_assert_int_eq(ir_add_reduce(g, 0, 0x1000, 0x1010, 4, CDAG_INT64, CDAG_SUM, NULL), CDAG_ERR_ARG);
  const char *m = cdag_error_message();
  ck_assert_msg(strstr(m, "reduce of 4 int64 (32 bytes)") && strstr(m, "[0x1000, +32)") && strstr(m, "[0x1010, +32)"), "%s", m);
  ir_graph_free(g);
}
END_TEST

START_TEST(raw_recv_then_send) {
  cdag_graph *g;
  cdag_op r, s;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 1, 0x100, 64, 0, 0, &r), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 1, 0x120, 8, 0, 0, &s), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert(depends(g, r, s));
  ck_assert_int_eq(npred(g, s), 1);
  ck_assert_int_eq(g->succ_start[r + 1] - g->succ_start[r], 1);
  cdag_graph_free(&g);
  ck_assert_ptr_null(g);
}
END_TEST

START_TEST(war_send_then_recv) {
  cdag_graph *g;
  cdag_op s, r;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 0, 0x100, 64, 1, 0, &s), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0x13f, 1, 1, 0, &r), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert(depends(g, s, r));
  cdag_graph_free(&g);
}
END_TEST

START_TEST(waw_two_recvs) {
  cdag_graph *g;
  cdag_op a, b;
  ck_assert_int_eq(cdag_graph_create_global(3, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0x100, 64, 1, 0, &a), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0x0f0, 17, 2, 0, &b), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert(depends(g, a, b));
  cdag_graph_free(&g);
}
END_TEST

START_TEST(disjoint_and_read_read_concurrent) {
  cdag_graph *g;
  cdag_op a, b, c, d;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0x100, 64, 1, 0, &a), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0x140, 64, 1, 0, &b), CDAG_OK); /* adjacent, not overlapping */
  ck_assert_int_eq(cdag_rank_send(g, 0, 0x200, 64, 1, 0, &c), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 0, 0x200, 64, 1, 1, &d), CDAG_OK); /* read after read */
  ck_assert_int_eq(cdag_rank_send(g, 1, 0x100, 64, 0, 0, NULL), CDAG_OK); /* other rank, same address */
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert_int_eq(g->nedges, 0);
  (void)a; (void)b; (void)c; (void)d;
  cdag_graph_free(&g);
}
END_TEST

START_TEST(write_after_many_reads) {
  cdag_graph *g;
  cdag_op s[4], w;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(cdag_rank_send(g, 0, 0x100 + 16 * (uint64_t)i, 16, 1, 0, &s[i]), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0x108, 50, 1, 0, &w), CDAG_OK);  /* overlaps s[0..3] */
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  for (int i = 0; i < 4; i++) ck_assert(depends(g, s[i], w));
  ck_assert_int_eq(npred(g, w), 4);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(split_pieces_keep_their_writers) {
  cdag_graph *g;
  cdag_op w1, w2, r;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0, 100, 1, 0, &w1), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 40, 20, 1, 0, &w2), CDAG_OK);  /* middle overwritten */
  ck_assert_int_eq(cdag_rank_send(g, 0, 70, 10, 1, 0, &r), CDAG_OK);   /* reads only w1's tail */
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert(depends(g, w1, w2));
  ck_assert(depends(g, w1, r));
  ck_assert(!depends(g, w2, r));
  cdag_graph_free(&g);
}
END_TEST

START_TEST(reduce_and_copy_footprints) {
  cdag_graph *g;
  cdag_op rin, rio, red, cp, snd;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0x1000, 16, 1, 0, &rin), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0x2000, 16, 1, 1, &rio), CDAG_OK);
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0x1000, 0x2000, 4, CDAG_INT32, CDAG_SUM, &red), CDAG_OK);
  ck_assert_int_eq(cdag_rank_copy_local(g, 0, 0x2000, 0x3000, 16, &cp), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 0, 0x3000, 16, 1, 0, &snd), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert(depends(g, rin, red));
  ck_assert(depends(g, rio, red));
  ck_assert(depends(g, red, cp));
  ck_assert(depends(g, cp, snd));
  ck_assert(!depends(g, rin, cp));
  cdag_graph_free(&g);
}
END_TEST

START_TEST(explicit_dependencies) {
  cdag_graph *g;
  cdag_op a, b;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0, 0, 1, 0, &a), CDAG_OK);  /* zero bytes: no footprint */
  ck_assert_int_eq(cdag_rank_send(g, 0, 64, 8, 1, 0, &b), CDAG_OK);
  ck_assert_int_eq(cdag_depend(g, a, b), CDAG_OK);
  ck_assert_int_eq(cdag_depend(g, a, b), CDAG_OK);  /* duplicate is harmless */
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert(depends(g, a, b));
  ck_assert_int_eq(npred(g, b), 1);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(backward_requires_reorders) {
  cdag_graph *g;
  int32_t s, r;
  ck_assert_int_eq(ir_graph_new(2, -1, &g), CDAG_OK);
  /* A GOAL file may write the send first and say `send requires recv` afterwards. */
  ck_assert_int_eq(ir_add_send(g, 1, 0, 8, 0, 0, &s), CDAG_OK);
  ck_assert_int_eq(ir_add_recv(g, 1, 0, 8, 0, 0, &r), CDAG_OK);
  ck_assert_int_eq(ir_add_dep(g, r, s, 0), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert_int_eq(g->pos[r], 0);
  ck_assert_int_eq(g->pos[s], 1);
  ck_assert(depends(g, r, s));
  ck_assert(!depends(g, s, r));
  ir_graph_free(g);
}
END_TEST

START_TEST(explicit_cycle_is_reported) {
  cdag_graph *g;
  int32_t a, b;
  ck_assert_int_eq(ir_graph_new(2, -1, &g), CDAG_OK);
  ck_assert_int_eq(ir_add_calc(g, 1, 5, &a), CDAG_OK);
  ck_assert_int_eq(ir_add_calc(g, 1, 5, &b), CDAG_OK);
  ck_assert_int_eq(ir_add_dep(g, a, b, 0), CDAG_OK);
  ck_assert_int_eq(ir_add_dep(g, b, a, 0), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_ERR_CYCLE);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 1"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "cycle"));
  ir_graph_free(g);
}
END_TEST

START_TEST(program_order_per_rank) {
  cdag_graph *g;
  ck_assert_int_eq(cdag_graph_create_global(3, &g), CDAG_OK);
  int ranks[] = {2, 0, 2, 1, 0, 2};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(cdag_rank_send(g, ranks[i], 0, 8, (ranks[i] + 1) % 3, 0, NULL), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert_int_eq(g->rank_start[0], 0);
  ck_assert_int_eq(g->rank_start[1], 2);
  ck_assert_int_eq(g->rank_start[2], 3);
  ck_assert_int_eq(g->rank_start[3], 6);
  int expect[] = {1, 4, 3, 0, 2, 5};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(g->rank_ops[i], expect[i]);
  ck_assert_int_eq(g->pos[5], 2);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(adding_after_finalize_recomputes) {
  cdag_graph *g;
  cdag_op a, b;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0, 8, 1, 0, &a), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 0, 0, 8, 1, 0, &b), CDAG_OK);
  ck_assert_int_eq(g->state, IR_BUILDING);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert(depends(g, a, b));
  cdag_graph_free(&g);
}
END_TEST

/* The pipeline drops the dependency lists after their last reader; a later reader rebuilds
   exactly the same lists (memory conflicts, explicit and reordering dependencies). */
START_TEST(dropped_dependencies_are_rebuilt) {
  cdag_graph *g;
  int32_t s, r, c, x;
  ck_assert_int_eq(ir_graph_new(2, -1, &g), CDAG_OK);
  ck_assert_int_eq(ir_add_send(g, 1, 0, 8, 0, 0, &s), CDAG_OK);
  ck_assert_int_eq(ir_add_recv(g, 1, 0, 8, 0, 0, &r), CDAG_OK);
  ck_assert_int_eq(ir_add_copy(g, 1, 0, 16, 8, &c), CDAG_OK);
  ck_assert_int_eq(ir_add_calc(g, 0, 3, &x), CDAG_OK);
  ck_assert_int_eq(ir_add_dep(g, r, s, 0), CDAG_OK); /* backward: reorders rank 1 */
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  int64_t n = g->nedges;
  int32_t start[5], pred[16], succ_start[5], succ[16];
  ck_assert_int_le(n, 16);
  memcpy(start, g->pred_start, sizeof start);
  memcpy(pred, g->pred, (size_t)n * sizeof *pred);
  memcpy(succ_start, g->succ_start, sizeof succ_start);
  memcpy(succ, g->succ, (size_t)n * sizeof *succ);
  ir_drop_deps(g);
  ck_assert_ptr_null(g->pred_start);
  ck_assert_int_eq(g->state, IR_FINAL);
  ck_assert_int_eq(ir_need_deps(g), CDAG_OK);
  ck_assert_int_eq(g->nedges, n);
  ck_assert_mem_eq(g->pred_start, start, sizeof start);
  ck_assert_mem_eq(g->pred, pred, (size_t)n * sizeof *pred);
  ck_assert_mem_eq(g->succ_start, succ_start, sizeof succ_start);
  ck_assert_mem_eq(g->succ, succ, (size_t)n * sizeof *succ);
  ir_drop_deps(g);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK); /* ir_finalize rebuilds them too */
  ck_assert_mem_eq(g->pred, pred, (size_t)n * sizeof *pred);
  ck_assert(depends(g, r, s) && depends(g, r, c));
  ir_graph_free(g);
}
END_TEST

/* Sends and receives carry no second address: the array exists from the first copy on. */
START_TEST(second_address_only_with_copies) {
  cdag_graph *g;
  int32_t s, c;
  ck_assert_int_eq(ir_graph_new(2, -1, &g), CDAG_OK);
  ck_assert_int_eq(ir_add_send(g, 0, 0, 8, 1, 0, &s), CDAG_OK);
  ck_assert_ptr_null(g->addr2);
  ck_assert_int_eq(ir_add_copy(g, 0, 0x40, 0x80, 8, &c), CDAG_OK);
  ck_assert_ptr_nonnull(g->addr2);
  ck_assert_uint_eq(g->addr2[c], 0x40);
  for (int i = 0; i < 200; i++) ck_assert_int_eq(ir_add_copy(g, 1, (uint64_t)i, 0x1000, 1, NULL), CDAG_OK); /* regrowth */
  ck_assert_uint_eq(g->addr2[c], 0x40);
  ck_assert_uint_eq(g->addr2[g->nops - 1], 199);
  ir_graph_free(g);
}
END_TEST

START_TEST(scratch_merges) {
  cdag_graph *g;
  ck_assert_int_eq(cdag_graph_create_global(3, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_scratch(g, 1, 0x200, 0x100), CDAG_OK);
  ck_assert_int_eq(cdag_rank_scratch(g, 1, 0x100, 0x100), CDAG_OK);  /* adjacent: merges */
  ck_assert_int_eq(cdag_rank_scratch(g, 1, 0x1000, 8), CDAG_OK);
  ck_assert_int_eq(cdag_rank_scratch(g, 2, 0x100, 8), CDAG_OK);
  ck_assert_int_eq(cdag_rank_scratch(g, 2, 0x500, 0), CDAG_OK);       /* empty: ignored */
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert_int_eq(g->nscr_merged, 3);
  ck_assert(ir_is_scratch(g, 1, 0x100, 0x200));
  ck_assert(!ir_is_scratch(g, 1, 0x100, 0x201));
  ck_assert(ir_is_scratch(g, 1, 0x1000, 8));
  ck_assert(!ir_is_scratch(g, 0, 0x100, 1));
  ck_assert(ir_is_scratch(g, 2, 0x104, 4));
  ck_assert(!ir_is_scratch(g, 2, 0x0ff, 2));
  cdag_graph_free(&g);
}
END_TEST

START_TEST(argument_errors) {
  cdag_graph *g;
  cdag_op a, b;
  ck_assert_int_eq(cdag_graph_create_global(0, &g), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_graph_create_global(2, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(NULL, 0, 0, 8, 1, 0, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_send(g, 2, 0, 8, 1, 0, NULL), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 2 out of range"));
  ck_assert_int_eq(cdag_rank_send(g, 0, 0, 8, -1, 0, NULL), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "destination rank -1"));
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0, 8, 1, -1, NULL), CDAG_ERR_UNSUPPORTED);
  ck_assert_int_eq(cdag_rank_send(g, 0, UINT64_MAX - 3, 8, 1, 0, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0, 64, 4, CDAG_FLOAT, CDAG_BXOR, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0, 64, 4, (cdag_type)99, CDAG_SUM, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0, 8, 4, CDAG_INT32, CDAG_SUM, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_copy_local(g, 0, 0, 4, 8, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_send(g, 0, 0, 8, 1, 0, &a), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 1, 0, 8, 0, 0, &b), CDAG_OK);
  ck_assert_int_eq(cdag_depend(g, a, b), CDAG_ERR_ARG);    /* different ranks */
  ck_assert_int_eq(cdag_depend(g, a, 99), CDAG_ERR_ARG);   /* no such op */
  ck_assert_int_eq(cdag_rank_send(g, 0, 8, 8, 1, 0, &b), CDAG_OK);
  ck_assert_int_eq(cdag_depend(g, b, a), CDAG_ERR_ARG);    /* later first */
  ck_assert_int_eq(cdag_depend(g, a, b), CDAG_OK);
  int n;
  int64_t nops;
  ck_assert_int_eq(cdag_graph_info(g, &n, &nops), CDAG_OK);
  ck_assert_int_eq(n, 2);
  ck_assert_int_eq(nops, 3);
  cdag_graph_free(&g);
  ck_assert_int_eq(cdag_graph_free(NULL), CDAG_OK);
  ck_assert_int_eq(cdag_graph_free(&g), CDAG_OK);
}
END_TEST

START_TEST(error_strings) {
  ck_assert_str_eq(cdag_strerror(CDAG_OK), "success");
  ck_assert_ptr_nonnull(strstr(cdag_strerror(CDAG_ERR_CYCLE), "cycle"));
  ck_assert_ptr_nonnull(strstr(cdag_strerror(CDAG_ERR_TRUNCATE), "truncation"));
  ck_assert_str_eq(cdag_strerror(1234), "unknown error code");
  ck_assert_ptr_eq(cdag_strerror(1234), cdag_strerror(-1));   /* static text, not a buffer of the last call */
  for (int c = CDAG_OK; c <= CDAG_ERR_PLAN; c++) ck_assert_ptr_null(strstr(cdag_strerror(c), "unknown"));
  /* misuse, a failed verification and a broken plan are told apart */
  ck_assert_ptr_nonnull(strstr(cdag_strerror(CDAG_ERR_MISMATCH), "verification failed"));
  ck_assert_ptr_nonnull(strstr(cdag_strerror(CDAG_ERR_PLAN), "internal"));
  ck_assert_int_ne(CDAG_ERR_MISMATCH, CDAG_ERR_STATE);
  ck_assert_int_ne(CDAG_ERR_PLAN, CDAG_ERR_STATE);
}
END_TEST

/* Bits of one double / float. */
static uint64_t dbits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static double dof(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* min/max of floating point are IEEE 754-2019 minimum/maximum: NaN in, canonical NaN out;
   -0 < +0. Every order of every triple gives the same bits (commutative and associative). */
START_TEST(float_min_max_are_order_free) {
  const double v[] = {1.0, -2.5, 0.0, -0.0, dof(0x7ff8000000000001ull) /* NaN, payload */,
                      dof(0xfff8000000000000ull) /* -NaN */, INFINITY, -INFINITY};
  const int n = (int)(sizeof v / sizeof *v);
  for (int op = CDAG_MIN; op <= CDAG_MAX; op++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double ab = v[j], ba = v[i];
        ir_reduce_apply(CDAG_DOUBLE, op, &v[i], &ab, 1);   /* ab = op(v[j], v[i]) */
        ir_reduce_apply(CDAG_DOUBLE, op, &v[j], &ba, 1);
        ck_assert_uint_eq(dbits(ab), dbits(ba));
        if (isnan(v[i]) || isnan(v[j])) ck_assert_uint_eq(dbits(ab), 0x7ff8000000000000ull);
        for (int k = 0; k < n; k++) {
          double l = v[i], r = v[j];
          ir_reduce_apply(CDAG_DOUBLE, op, &v[j], &l, 1);
          ir_reduce_apply(CDAG_DOUBLE, op, &v[k], &l, 1);   /* (i op j) op k */
          ir_reduce_apply(CDAG_DOUBLE, op, &v[k], &r, 1);   /* j op k */
          double i2 = v[i];
          ir_reduce_apply(CDAG_DOUBLE, op, &r, &i2, 1);     /* i op (j op k) */
          ck_assert_uint_eq(dbits(l), dbits(i2));
        }
      }
  double pz = 0.0, nz = -0.0;
  ir_reduce_apply(CDAG_DOUBLE, CDAG_MAX, &nz, &pz, 1);
  ck_assert(!signbit(pz));
  pz = 0.0;
  ir_reduce_apply(CDAG_DOUBLE, CDAG_MIN, &nz, &pz, 1);
  ck_assert(signbit(pz));
  float fn = NAN, f1 = 1.0f;
  ir_reduce_apply(CDAG_FLOAT, CDAG_MAX, &fn, &f1, 1);
  uint32_t fb;
  memcpy(&fb, &f1, sizeof fb);
  ck_assert_uint_eq(fb, 0x7fc00000u);
}
END_TEST

/* 16-bit products wrap like the others (52937^2 overflowed int after promotion). */
START_TEST(narrow_products_wrap) {
  uint16_t a = 52937, b = 52937;
  ir_reduce_apply(CDAG_UINT16, CDAG_PROD, &a, &b, 1);
  ck_assert_uint_eq(b, (uint16_t)(52937u * 52937u));
  int16_t c = -32768, d = -32768;
  ir_reduce_apply(CDAG_INT16, CDAG_PROD, &c, &d, 1);
  ck_assert_int_eq(d, 0);
  int8_t e = 127, f = 127;
  ir_reduce_apply(CDAG_INT8, CDAG_SUM, &e, &f, 1);
  ck_assert_int_eq(f, -2);
}
END_TEST

START_TEST(reduce_apply_types) {
  int32_t a[3] = {1, -5, 7}, b[3] = {10, 3, -7};
  ir_reduce_apply(CDAG_INT32, CDAG_SUM, a, b, 3);
  ck_assert_int_eq(b[0], 11);
  ck_assert_int_eq(b[1], -2);
  ck_assert_int_eq(b[2], 0);
  ir_reduce_apply(CDAG_INT32, CDAG_MIN, a, b, 3);
  ck_assert_int_eq(b[1], -5);
  int32_t big[1] = {INT32_MAX}, one[1] = {1};
  ir_reduce_apply(CDAG_INT32, CDAG_SUM, one, big, 1);  /* wraps, no UB */
  ck_assert_int_eq(big[0], INT32_MIN);
  double x[2] = {1.5, 2.0}, y[2] = {2.0, 4.0};
  ir_reduce_apply(CDAG_DOUBLE, CDAG_PROD, x, y, 2);
  ck_assert(y[0] == 3.0 && y[1] == 8.0);
  uint8_t u[2] = {0x0f, 0}, v[2] = {0xf0, 5};
  ir_reduce_apply(CDAG_UINT8, CDAG_BXOR, u, v, 2);
  ck_assert_int_eq(v[0], 0xff);
  ir_reduce_apply(CDAG_UINT8, CDAG_LAND, u, v, 2);
  ck_assert_int_eq(v[0], 1);
  ck_assert_int_eq(v[1], 0);
  ck_assert_int_eq(ir_type_parse("uint16", 6), CDAG_UINT16);
  ck_assert_int_eq(ir_rop_parse("lxor", 4), CDAG_LXOR);
  ck_assert_int_eq(ir_type_parse("int128", 6), -1);
}
END_TEST

/* A long chain of forwarding through one buffer: dependencies stay linear. */
START_TEST(many_ops_linear_edges) {
  cdag_graph *g;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  for (int i = 0; i < 20000; i++) {
    CK_OK(cdag_rank_recv(g, 1, 0, 64, 0, 0, NULL));
    CK_OK(cdag_rank_send(g, 1, 0, 64, 0, 0, NULL));
    CK_OK(cdag_rank_send(g, 1, 32, 64, 0, 0, NULL));
  }
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert_int_le(g->nedges, 4 * 60000);
  cdag_graph_free(&g);
}
END_TEST

/* The same random local ops (copies and reduces over a few overlapping buffers) added rank
   by rank and round robin across the ranks: the dependency lists are the same, entry for
   entry, under the id maps. More ranks than a block of finalize's CSR, of uneven lengths. */
START_TEST(dependencies_independent_of_id_layout) {
  enum { P = 150, MAXOPS = 40 };
  static int nops[P], src[P][MAXOPS], dst[P][MAXOPS], len[P][MAXOPS], red[P][MAXOPS];
  static int32_t id_a[P][MAXOPS], id_b[P][MAXOPS];
  uint64_t x = 12345;
  for (int r = 0; r < P; r++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    nops[r] = (int)(x >> 33) % MAXOPS;
    for (int t = 0; t < nops[r]; t++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      int swap = (x >> 60) & 1; /* read one half of 128 bytes, write the other */
      src[r][t] = (int)(x >> 40) % 6 * 8 + 64 * swap, dst[r][t] = (int)(x >> 50) % 6 * 8 + 64 * !swap;
      len[r][t] = 8 * (1 + (int)((x >> 20) % 3)), red[r][t] = (x >> 30) & 1;
    }
  }
  cdag_graph *a, *b;
  ck_assert_int_eq(cdag_graph_create_global(P, &a), CDAG_OK);
  ck_assert_int_eq(cdag_graph_create_global(P, &b), CDAG_OK);
  for (int r = 0; r < P; r++)
    for (int t = 0; t < nops[r]; t++)
      ck_assert_int_eq(red[r][t] ? ir_add_reduce(a, r, src[r][t], dst[r][t], len[r][t] / 8, CDAG_INT64, CDAG_SUM, &id_a[r][t])
                                 : ir_add_copy(a, r, src[r][t], dst[r][t], len[r][t], &id_a[r][t]), CDAG_OK);
  for (int t = 0; t < MAXOPS; t++)
    for (int r = 0; r < P; r++)
      if (t < nops[r])
        ck_assert_int_eq(red[r][t] ? ir_add_reduce(b, r, src[r][t], dst[r][t], len[r][t] / 8, CDAG_INT64, CDAG_SUM, &id_b[r][t])
                                   : ir_add_copy(b, r, src[r][t], dst[r][t], len[r][t], &id_b[r][t]), CDAG_OK);
  ck_assert_int_eq(ir_finalize(a), CDAG_OK);
  ck_assert_int_eq(ir_finalize(b), CDAG_OK);
  ck_assert_int_eq(a->nedges, b->nedges);
  ck_assert_int_gt(a->nedges, P);
  for (int r = 0; r < P; r++)
    for (int t = 0; t < nops[r]; t++) {
      int32_t oa = id_a[r][t], ob = id_b[r][t];
      ck_assert_int_eq(npred(a, oa), npred(b, ob));
      for (int k = 0; k < npred(a, oa); k++)
        ck_assert_int_eq(b->rank_ops[b->rank_start[r] + a->pos[a->pred[a->pred_start[oa] + k]]], b->pred[b->pred_start[ob] + k]);
      ck_assert_int_eq(a->succ_start[oa + 1] - a->succ_start[oa], b->succ_start[ob + 1] - b->succ_start[ob]);
      for (int k = 0; k < a->succ_start[oa + 1] - a->succ_start[oa]; k++)
        ck_assert_int_eq(b->rank_ops[b->rank_start[r] + a->pos[a->succ[a->succ_start[oa] + k]]], b->succ[b->succ_start[ob] + k]);
    }
  cdag_graph_free(&a);
  cdag_graph_free(&b);
}
END_TEST

/* Random sends, receives, copies and reduces of each rank over a small address range,
   against the rules applied byte by byte: a read depends on the byte's last writer; a
   write on the byte's readers since that write, or on the writer if there were none.
   Ranks 0 and 2 write spans anywhere in 2 KiB (their interval maps outgrow finalize's
   16-entry index many times over and move to a JudyL midway); rank 1, between them, uses
   four whole buffers (its index must start empty after rank 0's JudyL). The predecessor
   and successor lists must be exactly the oracle's sets, each pair once. Six seeds, scaled
   (one under valgrind, where the oracle took 40 s). */
enum { ORACLE_OPS = 400, ORACLE_BYTES = 2048, ORACLE_WORDS = (ORACLE_OPS + 63) / 64, ORACLE_RANKS = 3 };

/* A computation that reads all (no receive completes late here: the graphs have no waits)
   depends on the latest one before it and on every op that wrote since; a later write into
   a byte written before the latest one depends on that one. */
typedef struct {
  int32_t last;                  /* the latest one, -1 none */
  uint8_t ever[ORACLE_BYTES];    /* bytes written so far */
  uint8_t held[ORACLE_BYTES];    /* bytes the latest one read */
  uint8_t since[ORACLE_OPS];     /* ops that wrote since it */
} oracle_all;

static void oracle_reads_all(oracle_all *ra, uint8_t (*dep)[ORACLE_OPS], int32_t i) {
  if (ra->last >= 0) dep[ra->last][i] = 1;
  for (int32_t j = 0; j < i; j++)
    if (ra->since[j]) dep[j][i] = 1, ra->since[j] = 0;
  memcpy(ra->held, ra->ever, sizeof ra->held);
  ra->last = i;
}

static void oracle_write_all(oracle_all *ra, uint8_t (*dep)[ORACLE_OPS], int32_t i, uint64_t b) {
  if (ra->last >= 0 && ra->last != i && ra->held[b]) dep[ra->last][i] = 1;
  ra->ever[b] = 1;
  ra->since[i] = 1;
}

static void oracle_deps(const cdag_graph *g, int rank, uint8_t (*dep)[ORACLE_OPS]) {
  static int32_t writer[ORACLE_BYTES];
  static uint64_t readers[ORACLE_BYTES][ORACLE_WORDS];
  static oracle_all ra;
  memset(writer, 0xff, sizeof writer);
  memset(readers, 0, sizeof readers);
  memset(&ra, 0, sizeof ra);
  ra.last = -1;
  int32_t n = g->rank_start[rank + 1] - g->rank_start[rank];
  for (int32_t i = 0; i < n; i++) {
    int32_t op = g->rank_ops[g->rank_start[rank] + i];
    uint64_t len = g->bytes[op], rd = UINT64_MAX, wr = UINT64_MAX;
    if (g->kind[op] == IR_SEND) rd = g->addr[op];
    if (g->kind[op] == IR_RECV) wr = g->addr[op];
    if (g->kind[op] == IR_COPY || g->kind[op] == IR_REDUCE) rd = g->addr2[op], wr = g->addr[op];
    ir_blocks k = g->kind[op] == IR_COPY ? ir_copy_blocks(g, op) : ir_one_block(len), r = k;
    if (ir_is_compute(g, op)) {   /* reads one range (or all), writes its blocks */
      int all = g->cr_len[op] == IR_READS_ALL;
      if (all) oracle_reads_all(&ra, dep, i);
      rd = g->cr_len[op] && !all ? g->addr2[op] : UINT64_MAX, wr = g->cw_len[op] ? g->addr[op] : UINT64_MAX;
      r = ir_one_block(all ? 0 : g->cr_len[op]), k = ir_write_blocks(g, op);
    }
    for (uint64_t blk = 0; rd != UINT64_MAX && blk < r.n; blk++)   /* a strided copy's blocks, byte by byte */
      for (uint64_t b = rd + ir_block_from(&r, blk); b < rd + ir_block_from(&r, blk) + r.len; b++) {
        if (writer[b] >= 0 && writer[b] != i) dep[writer[b]][i] = 1;
        readers[b][i / 64] |= 1ull << (i % 64);
      }
    for (uint64_t blk = 0; wr != UINT64_MAX && blk < k.n; blk++)
    for (uint64_t b = wr + ir_block_to(&k, blk); b < wr + ir_block_to(&k, blk) + k.len; b++) {
      int any = 0;
      for (int32_t j = 0; j < n; j++)
        if (readers[b][j / 64] >> (j % 64) & 1) {
          any = 1;
          if (j != i) dep[j][i] = 1;
        }
      if (!any && writer[b] >= 0 && writer[b] != i) dep[writer[b]][i] = 1;
      oracle_write_all(&ra, dep, i, b);
      writer[b] = i;
      memset(readers[b], 0, sizeof readers[b]);
    }
  }
}

/* got[j][i]: op j (position) is listed before op i in the lists of `which` (0: pred of i,
   1: succ of j); a pair listed twice fails. */
static void listed_pairs(const cdag_graph *g, int rank, int which, uint8_t (*got)[ORACLE_OPS]) {
  const int32_t *start = which ? g->succ_start : g->pred_start, *list = which ? g->succ : g->pred;
  for (int32_t i = 0; i < ORACLE_OPS; i++) {
    int32_t op = g->rank_ops[g->rank_start[rank] + i];
    for (int32_t k = start[op]; k < start[op + 1]; k++) {
      int32_t other = g->pos[list[k]], before = which ? i : other, after = which ? other : i;
      CK_HOT(g->rank[list[k]] == rank);
      if (got[before][after]) ck_abort_msg("rank %d: pair (%d, %d) listed twice", rank, before, after);
      got[before][after] = 1;
    }
  }
}

/* The oracle's check of every rank's lists. */
static void check_against_oracle(const cdag_graph *g, int seed) {
  static uint8_t dep[ORACLE_OPS][ORACLE_OPS], got[ORACLE_OPS][ORACLE_OPS];
  for (int rank = 0; rank < ORACLE_RANKS; rank++) {
    memset(dep, 0, sizeof dep);
    oracle_deps(g, rank, dep);
    for (int which = 0; which < 2; which++) {
      memset(got, 0, sizeof got);
      listed_pairs(g, rank, which, got);
      for (int32_t j = 0; j < ORACLE_OPS; j++)
        for (int32_t i = 0; i < ORACLE_OPS; i++)
          if (got[j][i] != dep[j][i])
            ck_abort_msg("seed %d rank %d: op %d %s op %d in the %s lists", seed, rank, i,
                         dep[j][i] ? "misses" : "wrongly has", j, which ? "successor" : "predecessor");
    }
  }
}

/* The same with strided copies among the ops (2 to 5 blocks of 8 to 24 bytes, strides up to
   32 bytes past the length, either side or both strided), and copies whose blocks are listed
   (at irregular gaps, in a shuffled order, on one side or both) and computations writing
   such blocks: their dependencies are those
   of their exact blocks, never of their hulls, byte for byte. */
START_TEST(strided_dependencies_match_byte_oracle) {
  for (int seed = 1; seed <= cdag_test_iterations(6); seed++) {
    uint64_t x = 0x2545f4914f6cdd1dULL * (uint64_t)seed;
    cdag_graph *g;
    int nstrided = 0, nlisted = 0, ncomputes = 0;
    ck_assert_int_eq(cdag_graph_create_global(ORACLE_RANKS, &g), CDAG_OK);
    for (int i = 0; i < ORACLE_RANKS * ORACLE_OPS; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      int rank = i % ORACLE_RANKS, kind = (int)(x >> 61) % 4, peer = (rank + 1) % ORACLE_RANKS, rc = -1;
      uint64_t len = 8 * (1 + (x >> 20) % 3), n = 2 + (x >> 23) % 4;
      uint64_t sf = (x >> 26) & 1 ? len + 8 * ((x >> 27) % 5) : len, st = (x >> 30) & 1 ? len + 8 * ((x >> 31) % 5) : len;
      uint64_t a = 8 * ((x >> 34) % ((ORACLE_BYTES - 256) / 8)), b = 8 * ((x >> 44) % ((ORACLE_BYTES - 256) / 8));
      if (kind == 2) {   /* a strided copy; blocks that meet are refused: then a send */
        rc = ir_add_copy_strided(g, rank, b, a, n, len, sf, st, NULL);
        nstrided += rc == CDAG_OK && (sf != len || st != len);
      } else if (kind == 3) {   /* listed: the strided places shuffled, on a side or both */
        uint64_t off[2][5];
        int list = 1 + (int)((x >> 54) % 3);
        for (uint64_t j = 0; j < n; j++)   /* irregular gaps: no stride gives these places */
          off[0][j] = j ? off[0][j - 1] + len + 8 * ((x >> (40 + j)) % 3) : 0,
          off[1][j] = j ? off[1][j - 1] + len + 8 * ((x >> (45 + j)) % 3) : 0;
        for (uint64_t j = n - 1; j > 0; j--) {
          uint64_t k = (x >> (j * 3)) % (j + 1), t = off[0][j];
          off[0][j] = off[0][k], off[0][k] = t;
          t = off[1][j], off[1][j] = off[1][n - 1 - k], off[1][n - 1 - k] = t;
        }
        if ((x >> 57) & 1) {   /* a computation reading a range and writing those blocks */
          int32_t id;
          rc = ir_add_compute(g, rank, 1, b, len, a, n * len, &id);
          if (rc == CDAG_OK) ck_assert_int_eq(ir_set_write_blocks(g, id, n, st, list & 2 ? off[1] : NULL), CDAG_OK);
          ncomputes += rc == CDAG_OK;
        } else {
          rc = ir_add_copy_listed(g, rank, b, a, n, len, list & 1 ? off[0] : NULL, sf, list & 2 ? off[1] : NULL, st, NULL);
          nlisted += rc == CDAG_OK;
        }
      }
      if (rc != CDAG_OK) rc = kind == 1 ? ir_add_recv(g, rank, a, n * len, peer, 0, NULL) : ir_add_send(g, rank, a, n * len, peer, 0, NULL);
      ck_assert_int_eq(rc, CDAG_OK);
    }
    ck_assert_int_gt(nstrided, ORACLE_OPS / 4);
    ck_assert_int_gt(nlisted, ORACLE_OPS / 8);
    ck_assert_int_gt(ncomputes, ORACLE_OPS / 8);
    ck_assert_int_eq(ir_finalize(g), CDAG_OK);
    check_against_oracle(g, seed);
    cdag_graph_free(&g);
  }
}
END_TEST

/* A few strided patterns used again and again (a datatype's buffer packed and unpacked each
   iteration: finalize takes a cluster of one pattern side by side, not block by block),
   computations that read all among them (a pattern the read set holds is not folded again),
   and contiguous ops that on even seeds write into the patterns' buffers too (then the
   cluster is taken block by block): against the byte oracle. */
START_TEST(repeated_patterns_match_byte_oracle) {
  static const uint64_t listed[4] = {48, 0, 96, 24}, near[4] = {48, 8, 96, 24};
  static const struct { uint64_t at, n, len, stride; const uint64_t *off; } pat[5] = {
    {1024, 4, 16, 32, NULL}, {1280, 4, 16, 0, listed}, {1536, 3, 8, 24, NULL},
    {1056, 4, 16, 32, NULL}, {1280, 4, 16, 0, near}};   /* on seeds 3 mod 4: the first two's shapes, other blocks */
  for (int seed = 1; seed <= cdag_test_iterations(8); seed++) {
    uint64_t x = 0x51afd7ed558ccd6bULL * (uint64_t)seed;
    cdag_graph *g;
    int nall = 0, npat = 0;
    ck_assert_int_eq(cdag_graph_create_global(ORACLE_RANKS, &g), CDAG_OK);
    for (int i = 0; i < ORACLE_RANKS * ORACLE_OPS; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      int rank = i % ORACLE_RANKS, kind = (int)((x >> 58) % 7), peer = (rank + 1) % ORACLE_RANKS, rc;
      int p = (int)((x >> 40) % (seed % 4 == 3 ? 5 : 3));
      uint64_t n = pat[p].n, len = pat[p].len, bytes = n * len, c = 1792 + 8 * ((x >> 20) % 24);
      uint64_t span = seed % 2 ? 960 : 1600, a = 8 * ((x >> 30) % (span / 8)), l = 8 * (1 + (x >> 50) % 8);
      int32_t id;
      switch (kind) {
        case 0: rc = ir_add_copy_listed(g, rank, c, pat[p].at, n, len, NULL, len, pat[p].off, pat[p].stride, NULL); break;
        case 1: rc = ir_add_copy_listed(g, rank, pat[p].at, c, n, len, pat[p].off, pat[p].stride, NULL, len, NULL); break;
        case 2:
          rc = ir_add_compute(g, rank, 1, c, 8, pat[p].at, bytes, &id);
          if (rc == CDAG_OK) rc = ir_set_write_blocks(g, id, n, pat[p].stride, pat[p].off);
          break;
        case 3: rc = ir_add_compute(g, rank, 1, 0, IR_READS_ALL, 0, (x >> 57) & 1 ? 0 : 8, NULL), nall++; break;
        case 4: rc = ir_add_send(g, rank, a, l, peer, 0, NULL); break;
        case 5: rc = ir_add_recv(g, rank, a, l, peer, 0, NULL); break;
        default: rc = ir_add_copy(g, rank, a, c, l, NULL); break;
      }
      npat += kind < 3;
      ck_assert_int_eq(rc, CDAG_OK);
    }
    ck_assert_int_gt(nall, ORACLE_OPS / 8);
    ck_assert_int_gt(npat, ORACLE_OPS);
    ck_assert_int_eq(ir_finalize(g), CDAG_OK);
    check_against_oracle(g, seed);
    cdag_graph_free(&g);
  }
}
END_TEST

/* Clusters whose strided sides share one stride, 32 bytes (blocks of 8 to 24 bytes at columns
   0 to 24, some running into the next row, 10 to 28 of them: a column packed with one count and
   unpacked with another), among contiguous ops of any length over them: finalize takes them as
   a lattice of columns. Against the byte oracle; and its look-ups are per column, not per
   block (fewer than a third of the blocks, where block by block they are more than all). */
START_TEST(lattice_clusters_match_byte_oracle) {
  for (int seed = 1; seed <= cdag_test_iterations(8); seed++) {
    uint64_t x = 0x7a3c1f0e5d2b4968ULL * (uint64_t)seed, blocks = 0;
    cdag_graph *g;
    ck_assert_int_eq(cdag_graph_create_global(ORACLE_RANKS, &g), CDAG_OK);
    for (int i = 0; i < ORACLE_RANKS * ORACLE_OPS; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      int rank = i % ORACLE_RANKS, kind = (int)((x >> 58) % 6), peer = (rank + 1) % ORACLE_RANKS, rc;
      uint64_t len = 8 * (1 + (x >> 20) % 3), n = 10 + (x >> 23) % 19, a = 1024 + 32 * ((x >> 28) % 2) + 8 * ((x >> 32) % 4);
      uint64_t c = 8 * ((x >> 40) % 44), lo = 1024 + 8 * ((x >> 48) % 100), l = 8 * (1 + (x >> 34) % 16);
      int32_t id;
      switch (kind) {
        case 0: rc = ir_add_copy_strided(g, rank, a, c, n, len, 32, len, NULL); break;   /* pack */
        case 1: rc = ir_add_copy_strided(g, rank, c, a, n, len, len, 32, NULL); break;   /* unpack */
        case 2:
          rc = ir_add_compute(g, rank, 1, c, 8, a, n * len, &id);
          if (rc == CDAG_OK) rc = ir_set_write_blocks(g, id, n, 32, NULL);
          break;
        case 3: rc = ir_add_send(g, rank, lo, l, peer, 0, NULL), n = 1; break;
        case 4: rc = ir_add_recv(g, rank, lo, l, peer, 0, NULL), n = 1; break;
        default: rc = ir_add_copy(g, rank, a, c, len, NULL), n = 1; break;   /* one block alone */
      }
      blocks += n;
      ck_assert_int_eq(rc, CDAG_OK);
    }
    ck_assert_int_eq(ir_finalize(g), CDAG_OK);
    check_against_oracle(g, seed);
    ck_assert_msg(g->dep_lookups * 3 < (int64_t)blocks, "seed %d: %lld look-ups for %llu blocks", seed,
                  (long long)g->dep_lookups, (unsigned long long)blocks);
    cdag_graph_free(&g);
  }
}
END_TEST

/* A lattice whose stride is near 2^63: a range far above its base, that nothing wrote, has
   its rows rounded up without passing 2^64 and meets none of the lattice's cells (a reader's
   case: it had two predecessors). And 64 sides of 2^58 blocks each, whose counts add up past
   2^64, are still taken as a lattice (block by block, the walk would never end). */
START_TEST(lattice_near_two_to_the_64) {
  const uint64_t S = (1ull << 63) - 1024;
  cdag_graph *g;
  int32_t id, send;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  for (int i = 0; i < 5; i++) {   /* four write [0, 8) and [S, S + 8), the fifth [S, S + 8) and [2S, 2S + 8) */
    ck_assert_int_eq(ir_add_compute(g, 0, 1, 0, 0, i < 4 ? 0 : S, 16, &id), CDAG_OK);
    ck_assert_int_eq(ir_set_write_blocks(g, id, 2, S, NULL), CDAG_OK);
  }
  ck_assert_int_eq(ir_add_send(g, 0, S + (1ull << 62), 8, 1, 0, &send), CDAG_OK);
  ck_assert_int_eq(ir_add_recv(g, 1, 0, 8, 0, 0, NULL), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert_int_eq(npred(g, send), 0);
  cdag_graph_free(&g);

  ck_assert_int_eq(cdag_graph_create_global(1, &g), CDAG_OK);
  ck_assert_int_eq(ir_add_copy(g, 0, 0, 0x7000000000000000ull, 8, NULL), CDAG_OK);
  for (int i = 0; i < 64; i++)
    ck_assert_int_eq(ir_add_copy_strided(g, 0, 0, 1ull << 62, 1ull << 58, 8, 8, 16, NULL), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert_int_lt(g->dep_lookups, 64 * 16);
  cdag_graph_free(&g);
}
END_TEST

/* Strided ops of 2^40 blocks cost no walk over their blocks: a copy whose one side is
   consecutive is checked against it in O(1) (the first meets it at block 2^42 / 24, which
   the merge of both sides took hours to reach), one whose two strided sides interleave past
   2^28 blocks is refused, and two reads of one buffer at two strides (2^41 blocks to order
   one by one) are refused by finalize, naming the op; at one stride (2^40 and 2^39 blocks)
   they are a lattice. A computation that reads all after a write of 2^40 blocks is refused
   too (it would read them one by one). */
START_TEST(huge_strided_ops_are_bounded) {
  const uint64_t n = 1ull << 40;
  cdag_graph *g;
  ck_assert_int_eq(cdag_graph_create_global(1, &g), CDAG_OK);
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0, 1ull << 42, n, 8, 24, 8, NULL), CDAG_ERR_ARG);   /* block 2^42 / 24 meets */
  ck_assert(strstr(cdag_error_message(), "overlap"));
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0, 1ull << 46, n, 8, 24, 8, NULL), CDAG_OK);
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 1ull << 50, 8, n, 8, 8, 24, NULL), CDAG_OK);   /* above the other side */
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0, 8, n, 8, 24, 32, NULL), CDAG_ERR_UNSUPPORTED);
  ck_assert(strstr(cdag_error_message(), "interleave"));
  cdag_graph_free(&g);

  for (int two = 0; two < 2; two++) {
    ck_assert_int_eq(cdag_graph_create_global(1, &g), CDAG_OK);
    ck_assert_int_eq(ir_add_copy_strided(g, 0, 0, 1ull << 50, n, 8, 16, 8, NULL), CDAG_OK);
    ck_assert_int_eq(ir_add_copy_strided(g, 0, 0, 1ull << 51, two ? n : n / 2, 8, two ? 24 : 16, 8, NULL), CDAG_OK);
    ck_assert_int_eq(ir_add_recv(g, 0, 64, 8, 0, 0, NULL), CDAG_OK);
    ck_assert_int_eq(ir_add_send(g, 0, 64, 8, 0, 0, NULL), CDAG_OK);
    int rc = ir_finalize(g);
    if (two) {
      ck_assert_int_eq(rc, CDAG_ERR_UNSUPPORTED);
      ck_assert_msg(strstr(cdag_error_message(), "one by one") && strstr(cdag_error_message(), "op 0 (copy"), "%s",
                    cdag_error_message());
    } else {
      ck_assert_int_eq(rc, CDAG_OK);
    }
    cdag_graph_free(&g);
  }
  ck_assert_int_eq(cdag_graph_create_global(1, &g), CDAG_OK);   /* read all after: each block read too */
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0, 1ull << 50, n, 8, 8, 16, NULL), CDAG_OK);
  ck_assert_int_eq(ir_add_compute(g, 0, 5, 0, IR_READS_ALL, 0, 0, NULL), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(cdag_error_message(), "reading all") && strstr(cdag_error_message(), "op 0 (copy"), "%s",
                cdag_error_message());
  cdag_graph_free(&g);
}
END_TEST

/* A datatype's buffer of 1,000 listed blocks written once, and small ops that meet it at a few
   blocks (a send of the last block, receives into block 200 and into a gap): the cluster is
   taken block by block, but a block that no other side's hull reaches meets nothing and is not
   looked up (one that a receive meets in its last byte is). Eight such buffers: 88 look-ups
   (7 a buffer, the rest for the other ops), where block by block they would be over 8,000. */
START_TEST(lone_blocks_are_not_looked_up) {
  enum { N = 1000, BUFS = 8 };
  static uint64_t off[N];
  uint64_t at = 0;
  for (int j = 0; j < N; j++) off[j] = at, at += 4 + 4 * (uint64_t)(j % 3);   /* gaps of 0, 4 and 8 bytes */
  cdag_graph *g;
  int32_t w[BUFS];
  cdag_op last[BUFS], into[BUFS], gap[BUFS], edge[BUFS];
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  for (int k = 0; k < BUFS; k++) {
    uint64_t base = 0x100000 * (uint64_t)(k + 1);
    ck_assert_int_eq(ir_add_compute(g, 0, 1, 0x10, 8, base, N * 4, &w[k]), CDAG_OK);
    ck_assert_int_eq(ir_set_write_blocks(g, w[k], N, 4, off), CDAG_OK);
    ck_assert_int_eq(cdag_rank_send(g, 0, base + off[N - 1], 4, 1, 3 * k, &last[k]), CDAG_OK);
    ck_assert_int_eq(cdag_rank_recv(g, 0, base + off[200], 4, 1, 3 * k + 1, &into[k]), CDAG_OK);
    ck_assert_int_eq(cdag_rank_recv(g, 0, base + off[302] + 4, 4, 1, 3 * k + 2, &gap[k]), CDAG_OK);   /* block 302 is followed by 8 free bytes */
    ck_assert_int_eq(cdag_rank_recv(g, 0, base + off[600] + 3, 1, 1, 3 * BUFS + k, &edge[k]), CDAG_OK);
  }
  for (int k = 0; k < BUFS; k++) {
    ck_assert_int_eq(cdag_rank_recv(g, 1, 0x1000 + 8 * (uint64_t)k, 4, 0, 3 * k, NULL), CDAG_OK);
    ck_assert_int_eq(cdag_rank_send(g, 1, 0x2000, 4, 0, 3 * k + 1, NULL), CDAG_OK);
    ck_assert_int_eq(cdag_rank_send(g, 1, 0x2000, 4, 0, 3 * k + 2, NULL), CDAG_OK);
  }
  for (int k = 0; k < BUFS; k++) ck_assert_int_eq(cdag_rank_send(g, 1, 0x2000, 1, 0, 3 * BUFS + k, NULL), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  for (int k = 0; k < BUFS; k++) {
    ck_assert(depends(g, w[k], last[k]));
    ck_assert(depends(g, w[k], into[k]));
    ck_assert_int_eq(npred(g, gap[k]), 0);
    ck_assert(depends(g, w[k], edge[k]));
  }
  ck_assert_msg(g->dep_lookups <= 11 * BUFS, "%lld look-ups", (long long)g->dep_lookups);   /* 7 a buffer, 32 for the rest */
  cdag_graph_free(&g);
}
END_TEST

/* A halo's column exchange: the receive's unpacking into the ghost column and the packing
   of the boundary column beside it interleave in memory. On exact blocks the pack does not
   wait for the unpack (on the hull it would, and two ranks doing this would deadlock); a
   contiguous op inside a gap is free, one touching a block is ordered. */
START_TEST(strided_copies_use_exact_blocks) {
  cdag_graph *g;
  cdag_op r, s, gap, hit;
  int32_t u, p, other;
  ck_assert_int_eq(cdag_graph_create_global(2, &g), CDAG_OK);
  /* 4 rows of 32 bytes at 0x1000: ghost column at +24, boundary column at +16 */
  ck_assert_int_eq(cdag_rank_recv(g, 0, 0x2000, 32, 1, 0, &r), CDAG_OK);
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0x2000, 0x1018, 4, 8, 8, 32, &u), CDAG_OK);
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0x1010, 0x3000, 4, 8, 32, 8, &p), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 0, 0x3000, 32, 1, 0, &s), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 0, 0x1020, 24, 1, 1, &gap), CDAG_OK);     /* row 1, columns 0..2 */
  ck_assert_int_eq(cdag_rank_send(g, 0, 0x1020, 32, 1, 2, &hit), CDAG_OK);     /* row 1 whole */
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0x1000, 0x4000, 4, 8, 32, 8, &other), CDAG_OK);   /* column 0 */
  ck_assert_int_eq(cdag_rank_recv(g, 1, 0x3000, 32, 0, 0, NULL), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 1, 0x5000, 24, 0, 1, NULL), CDAG_OK);
  ck_assert_int_eq(cdag_rank_recv(g, 1, 0x6000, 32, 0, 2, NULL), CDAG_OK);
  ck_assert_int_eq(cdag_rank_send(g, 1, 0x7000, 32, 0, 0, NULL), CDAG_OK);
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  ck_assert(depends(g, r, u));
  ck_assert_int_eq(npred(g, p), 0);     /* not after u: the columns interleave */
  ck_assert(depends(g, p, s));
  ck_assert_int_eq(npred(g, s), 1);
  ck_assert_int_eq(npred(g, gap), 0);   /* row 1 without the ghost column */
  ck_assert(depends(g, u, hit));
  ck_assert_int_eq(npred(g, hit), 1);
  ck_assert_int_eq(npred(g, other), 0);
  cdag_graph_free(&g);
}
END_TEST

/* Strided copies' arguments: strides below the length, 0 blocks, wrapping spans, source
   and destination blocks that meet are refused; blocks that interleave without meeting,
   one block and strides equal to the length (an ordinary copy) are taken. */
START_TEST(strided_copy_arguments) {
  cdag_graph *g;
  int32_t id;
  ck_assert_int_eq(cdag_graph_create_global(1, &g), CDAG_OK);
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0x1000, 0x2000, 4, 8, 4, 8, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0x1000, 0x2000, 0, 8, 8, 8, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_add_copy_strided(g, 0, UINT64_MAX - 64, 0x2000, 4, 8, 32, 8, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0x1000, 0x2000, UINT64_MAX / 4, 8, 32, 8, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0x1000, 0x1008, 4, 8, 32, 8, NULL), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "blocks overlap"));
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0x1000, 0x1008, 4, 8, 16, 16, &id), CDAG_OK);   /* interleaved */
  ck_assert(ir_is_strided(g, id));
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0x3000, 0x4000, 1, 8, 64, 8, &id), CDAG_OK);
  ck_assert(!ir_is_strided(g, id));
  ck_assert_uint_eq(g->bytes[id], 8);
  ck_assert_int_eq(ir_add_copy_strided(g, 0, 0x3000, 0x4000, 4, 8, 8, 8, &id), CDAG_OK);
  ck_assert(!ir_is_strided(g, id));
  ck_assert_uint_eq(g->bytes[id], 32);
  cdag_graph_free(&g);
}
END_TEST

/* Listed blocks' arguments: blocks of a side that overlap, offsets past 2^64, source and
   destination blocks that meet (but each block onto itself), one block are refused; blocks in
   any order are taken, and so are a computation's; its blocks that overlap are refused. */
START_TEST(listed_copy_arguments) {
  cdag_graph *g;
  int32_t id, c;
  ck_assert_int_eq(cdag_graph_create_global(1, &g), CDAG_OK);
  const uint64_t ok[3] = {32, 0, 16}, overlap[3] = {0, 4, 32}, far[3] = {0, UINT64_MAX - 8, 16};
  ck_assert_int_eq(ir_add_copy_listed(g, 0, 0x1000, 0x2000, 3, 8, overlap, 8, NULL, 8, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_add_copy_listed(g, 0, 0x1000, 0x2000, 3, 8, far, 8, NULL, 8, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_add_copy_listed(g, 0, 0x1000, 0x1008, 3, 8, ok, 8, NULL, 8, NULL), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "blocks overlap"));
  ck_assert_int_eq(ir_add_copy_listed(g, 0, 0x1000, 0x2000, 1, 8, ok, 8, NULL, 8, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(g->nops, 0);
  /* every block onto itself, as a strided copy onto itself may be (its expansion); one not */
  ck_assert_int_eq(ir_add_copy_listed(g, 0, 0x1000, 0x1000, 3, 8, ok, 8, ok, 8, NULL), CDAG_OK);
  ck_assert_int_eq(ir_add_copy_listed(g, 0, 0x1000, 0x1000, 3, 8, ok, 8, (const uint64_t[]){32, 16, 0}, 8, NULL),
                   CDAG_ERR_ARG);
  ck_assert_int_eq(g->nops, 1);
  ck_assert_int_eq(ir_add_copy_listed(g, 0, 0x1000, 0x2000, 3, 8, ok, 8, ok, 8, &id), CDAG_OK);
  ir_blocks k = ir_copy_blocks(g, id);
  ck_assert(ir_is_listed(g, id) && k.n == 3 && k.from_last == 32 && k.to_last == 32 && ir_block_to(&k, 0) == 32);
  ck_assert_int_eq(ir_add_compute(g, 0, 1, 0, IR_READS_ALL, 0x5000, 24, &c), CDAG_OK);
  ck_assert_int_eq(ir_set_write_blocks(g, c, 3, 8, overlap), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_set_write_blocks(g, c, 3, 0, ok), CDAG_OK);
  ir_blocks w = ir_write_blocks(g, c);
  ck_assert(w.n == 3 && w.len == 8 && w.to_last == 32 && ir_block_to(&w, 1) == 0);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(dependencies_match_byte_oracle) {
  static uint8_t dep[ORACLE_OPS][ORACLE_OPS], got[ORACLE_OPS][ORACLE_OPS];
  for (int seed = 1; seed <= cdag_test_iterations(6); seed++) {
    uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)seed;
    cdag_graph *g;
    ck_assert_int_eq(cdag_graph_create_global(ORACLE_RANKS, &g), CDAG_OK);
    for (int i = 0; i < ORACLE_RANKS * ORACLE_OPS; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      int rank = i % ORACLE_RANKS, spans = rank != 1, kind = (int)(x >> 61) % 4;
      uint64_t len = spans ? 8 * (1 + (x >> 20) % 8) : 32;
      uint64_t a = spans ? 8 * ((x >> 30) % ((ORACLE_BYTES - len) / 8 + 1)) : 32 * ((x >> 30) % 4);
      uint64_t b = spans ? 8 * ((x >> 40) % ((ORACLE_BYTES - len) / 8 + 1)) : 32 * ((x >> 40) % 4);
      if (b != a && b < a + len && a < b + len) b = a; /* partial overlap is refused */
      int peer = (rank + 1) % ORACLE_RANKS;
      int rc = kind == 0   ? ir_add_send(g, rank, a, len, peer, 0, NULL)
               : kind == 1 ? ir_add_recv(g, rank, a, len, peer, 0, NULL)
               : kind == 2 ? ir_add_copy(g, rank, b, a, len, NULL)
                           : ir_add_reduce(g, rank, b, a, len / 8, CDAG_INT64, CDAG_SUM, NULL);
      ck_assert_int_eq(rc, CDAG_OK);
    }
    ck_assert_int_eq(ir_finalize(g), CDAG_OK);
    for (int rank = 0; rank < ORACLE_RANKS; rank++) {
      memset(dep, 0, sizeof dep);
      oracle_deps(g, rank, dep);
      for (int which = 0; which < 2; which++) {
        memset(got, 0, sizeof got);
        listed_pairs(g, rank, which, got);
        for (int32_t j = 0; j < ORACLE_OPS; j++)
          for (int32_t i = 0; i < ORACLE_OPS; i++)
            if (got[j][i] != dep[j][i])
              ck_abort_msg("seed %d rank %d: op %d %s op %d in the %s lists", seed, rank, i,
                           dep[j][i] ? "misses" : "wrongly has", j, which ? "successor" : "predecessor");
      }
    }
    cdag_graph_free(&g);
  }
}
END_TEST

/* Arrays past BASE_HUGE_MIN take the advised path: zeroed, and contents kept across growth
   from small to large and from large to larger. */
START_TEST(large_arrays_keep_contents) {
  size_t big = BASE_HUGE_MIN + 12345, n = big / sizeof(uint32_t);
  uint32_t *z = base_calloc(n, sizeof *z);
  ck_assert_ptr_nonnull(z);
  ck_assert_uint_eq((uintptr_t)z % 64, 0);
  for (size_t i = 0; i < n; i++)
    if (z[i]) ck_abort_msg("base_calloc: word %zu is %u", i, z[i]);
  free(z);
  uint32_t *a = base_realloc(NULL, 0, 1000 * sizeof *a);
  ck_assert_ptr_nonnull(a);
  for (uint32_t i = 0; i < 1000; i++) a[i] = i * 2654435761u;
  a = base_realloc(a, 1000 * sizeof *a, big);
  ck_assert_ptr_nonnull(a);
  for (size_t i = 1000; i < n; i++) a[i] = (uint32_t)i;
  a = base_realloc(a, n * sizeof *a, 2 * big);
  ck_assert_ptr_nonnull(a);
  for (size_t i = 0; i < n; i++)
    if (a[i] != (i < 1000 ? (uint32_t)i * 2654435761u : (uint32_t)i)) ck_abort_msg("base_realloc lost word %zu", i);
  free(a);
  void *m = base_malloc(0), *c = base_calloc(3, 40);
  ck_assert_ptr_nonnull(m);
  ck_assert_ptr_nonnull(c);
  ck_assert_uint_eq((uintptr_t)c % 64, 0);
  free(m);
  free(c);
}
END_TEST

/* CDAG_REDISTRIBUTE_TAG belongs to cdag_rank_redistribute: refused in the program's own
   messages, naming the call, the rank and the peer; every other tag is the program's. */
START_TEST(redistribute_tag_is_reserved) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(2, &g));
  ck_assert_int_eq(cdag_rank_send(g, 0, 0x100, 8, 1, CDAG_REDISTRIBUTE_TAG, NULL), CDAG_ERR_ARG);
  ck_assert_str_eq(cdag_error_message(), "rank 0: cdag_rank_send to rank 1: tag 32767 is reserved "
                   "(CDAG_REDISTRIBUTE_TAG, the tag of cdag_redistribute's messages); use another tag");
  ck_assert_int_eq(cdag_rank_recv(g, 1, 0x100, 8, 0, CDAG_REDISTRIBUTE_TAG, NULL), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 1: cdag_rank_recv from rank 0: tag 32767 is reserved"));
  CK_OK(cdag_rank_send(g, 0, 0x100, 8, 1, CDAG_REDISTRIBUTE_TAG - 1, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0x100, 8, 0, CDAG_REDISTRIBUTE_TAG - 1, NULL));
  cdag_layout l = {.m = 4, .n = 4, .mb = 2, .nb = 2, .pr = 1, .pc = 2};   /* its own messages carry the tag */
  CK_OK(cdag_rank_redistribute(g, 0, &l, 0x1000, &(cdag_layout){.m = 4, .n = 4, .mb = 4, .nb = 4, .pr = 1, .pc = 2,
                                                                  .first = 0}, 0x2000, 8));
  cdag_graph_free(&g);
}
END_TEST

Suite *cdag_ir_suite(void) {
  Suite *s = suite_create("ir");
  TCase *t = tcase_create("dependencies");
  tcase_add_test(t, reduce_overlap_named);
  tcase_add_test(t, raw_recv_then_send);
  tcase_add_test(t, war_send_then_recv);
  tcase_add_test(t, waw_two_recvs);
  tcase_add_test(t, disjoint_and_read_read_concurrent);
  tcase_add_test(t, write_after_many_reads);
  tcase_add_test(t, split_pieces_keep_their_writers);
  tcase_add_test(t, reduce_and_copy_footprints);
  tcase_add_test(t, explicit_dependencies);
  tcase_add_test(t, backward_requires_reorders);
  tcase_add_test(t, explicit_cycle_is_reported);
  tcase_add_test(t, program_order_per_rank);
  tcase_add_test(t, adding_after_finalize_recomputes);
  tcase_add_test(t, scratch_merges);
  tcase_add_test(t, dropped_dependencies_are_rebuilt);
  tcase_add_test(t, second_address_only_with_copies);
  tcase_add_test(t, many_ops_linear_edges);
  tcase_add_test(t, large_arrays_keep_contents);
  tcase_add_test(t, dependencies_independent_of_id_layout);
  tcase_add_test(t, dependencies_match_byte_oracle);
  suite_add_tcase(s, t);
  TCase *e = tcase_create("api");
  tcase_add_test(e, argument_errors);
  tcase_add_test(e, error_strings);
  tcase_add_test(e, reduce_apply_types);
  tcase_add_test(e, float_min_max_are_order_free);
  tcase_add_test(e, narrow_products_wrap);
  tcase_add_test(e, redistribute_tag_is_reserved);
  tcase_add_test(e, strided_dependencies_match_byte_oracle);
  tcase_add_test(e, repeated_patterns_match_byte_oracle);
  tcase_add_test(e, lattice_clusters_match_byte_oracle);
  tcase_add_test(e, lone_blocks_are_not_looked_up);
  tcase_add_test(e, lattice_near_two_to_the_64);
  tcase_add_test(e, huge_strided_ops_are_bounded);
  tcase_add_test(e, strided_copies_use_exact_blocks);
  tcase_add_test(e, strided_copy_arguments);
  tcase_add_test(e, listed_copy_arguments);
  suite_add_tcase(s, e);
  return s;
}

CDAG_CHECK_MAIN(cdag_ir_suite)

/* cdag tests — tests/wire/test_wire.c: the wire encoding of one rank's graph (no MPI).
 *
 * Round trip: every kind of op, explicit dependencies and scratch, encoded from "distributed"
 * graphs of each rank and decoded into one global graph, field for field; addresses far
 * apart and backwards (negative deltas). Robustness: every truncation and a sweep of
 * corrupted bytes of an encoding give CDAG_ERR_FORMAT or another clean error, never a crash.
 * Fingerprints: equal encodings hash equal, a one-byte change (a different buffer) does not;
 * varints round-trip at their edges. */
#include <string.h>

#include "check_main.h"
#include "wire/wire.h"

/* Rank r's graph: a send, a receive, a reduce, a copy, a calc, a dependency, scratch, and two
   computations (one reads a range, one reads all). */
static cdag_graph *rank_graph(int nprocs, int r, uint64_t base) {
  cdag_graph *g;
  int32_t id[5];
  ck_assert_int_eq(ir_graph_new(nprocs, r, &g), CDAG_OK);
  ck_assert_int_eq(ir_add_send(g, r, base + 0x1000, 64, (r + 1) % nprocs, 3, &id[0]), CDAG_OK);
  ck_assert_int_eq(ir_add_recv(g, r, base + 0x10, 64, (r + nprocs - 1) % nprocs, 3, &id[1]), CDAG_OK);
  ck_assert_int_eq(ir_add_reduce(g, r, base + 0x10, base + 0x7fff0000, 8, CDAG_INT64, CDAG_MAX, &id[2]), CDAG_OK);
  ck_assert_int_eq(ir_add_copy(g, r, base + 0x7fff0000, base + 0x20, 64, &id[3]), CDAG_OK);
  ck_assert_int_eq(ir_add_calc(g, r, 12345, &id[4]), CDAG_OK);
  ck_assert_int_eq(ir_add_dep(g, id[0], id[4], 1), CDAG_OK);
  ck_assert_int_eq(ir_add_scratch(g, r, base + 0x5000, 4096), CDAG_OK);
  if (r == 1) ck_assert_int_eq(cdag_label(g, id[1], "halo north"), CDAG_OK);   /* labels travel too */
  if (r == 2) ck_assert_int_eq(ir_set_part_of(g, id[1], id[3], id[3]), CDAG_OK);   /* a typed message's ops too */
  ck_assert_int_eq(ir_add_compute(g, r, 200000, base + 0x10, 64, base + 0x6000, 32, NULL), CDAG_OK);
  ck_assert_int_eq(ir_add_compute(g, r, 5, 0, IR_READS_ALL, base + 0x20, 8, NULL), CDAG_OK);
  ck_assert_int_eq(ir_add_copy_strided(g, r, base + 0x8000, base + 0x9000, 16, 8, 32, 8, NULL), CDAG_OK);   /* a column */
  ck_assert_int_eq(ir_add_copy_listed(g, r, base + 0xa000, base + 0xb000, 4, 8, (const uint64_t[]){24, 0, 48, 8}, 8, NULL,
                                      16, NULL), CDAG_OK);   /* an indexed type's blocks */
  return g;
}

/* cdag_label: checked arguments, CDAG_OP_NULL ignored, the label shows in errors. */
START_TEST(labels) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(2, &g));
  cdag_op s;
  CK_OK(cdag_rank_send(g, 0, 0x10, 8, 1, 0, &s));
  CK_OK(cdag_label(g, s, "to the east"));
  ck_assert_int_eq(cdag_label(g, 7, "x"), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_label(g, s, NULL), CDAG_ERR_ARG);
  CK_OK(cdag_label(g, CDAG_OP_NULL, "nothing"));
  cdag_plan *p = NULL;
  ck_assert_int_eq(cdag_analyze(g, NULL, &p), CDAG_ERR_UNMATCHED);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "to the east"));
  cdag_graph_free(&g);
}
END_TEST

START_TEST(round_trip) {
  enum { P = 3 };
  cdag_graph *global;
  ck_assert_int_eq(ir_graph_new(P, -1, &global), CDAG_OK);
  for (int r = 0; r < P; r++) {
    cdag_graph *g = rank_graph(P, r, 0x7f0000000000ull + (uint64_t)r * 0x100000);
    wire_buf w = {0};
    int sender = -1;
    ck_assert_int_eq(wire_encode_rank(g, &w), CDAG_OK);
    ck_assert_int_le(w.len, 140);  /* compact: a few bytes per op, one per count of segments, joins, communicators, calls, their messages */
    int64_t base = global->nops;
    ck_assert_int_eq(wire_decode_rank(global, w.buf, w.len, &sender), CDAG_OK);
    ck_assert_int_eq(sender, r);
    ck_assert_int_eq(global->nops - base, g->nops);
    for (int64_t i = 0; i < g->nops; i++) {
      ck_assert_int_eq(global->kind[base + i], g->kind[i]);
      ck_assert_int_eq(global->rank[base + i], r);
      ck_assert_int_eq(global->bytes[base + i], g->bytes[i]);
      if (g->kind[i] != IR_CALC || ir_is_compute(g, i)) ck_assert_uint_eq(global->addr[base + i], g->addr[i]);
      ck_assert_int_eq(ir_is_compute(global, base + i), ir_is_compute(g, i));
      if (ir_is_compute(g, i)) {
        ck_assert_uint_eq(global->cw_len[base + i], g->cw_len[i]);
        ck_assert_uint_eq(global->cr_len[base + i], g->cr_len[i]);
        if (g->cr_len[i] != IR_READS_ALL) ck_assert_uint_eq(global->addr2[base + i], g->addr2[i]);
      }
      if (g->kind[i] == IR_REDUCE || g->kind[i] == IR_COPY) ck_assert_uint_eq(global->addr2[base + i], g->addr2[i]);
      ir_blocks x = ir_copy_blocks(global, base + i), y = ir_copy_blocks(g, i);   /* a strided copy's pattern */
      ck_assert(x.n == y.n && x.len == y.len && !x.from_at == !y.from_at && !x.to_at == !y.to_at);
      for (uint64_t j = 0; j < x.n; j++) ck_assert(ir_block_from(&x, j) == ir_block_from(&y, j) && ir_block_to(&x, j) == ir_block_to(&y, j));
      if (g->kind[i] != IR_COPY && g->kind[i] != IR_CALC) {
        ck_assert_int_eq(global->peer[base + i], g->peer[i]);
        ck_assert_int_eq(global->tag[base + i], g->tag[i]);
      }
    }
    wire_free(&w);
    ir_graph_free(g);
  }
  ck_assert_int_eq(global->ndeps, P);
  ck_assert_int_eq(global->dep[0], 0);
  ck_assert_int_eq(global->dep[1], 4);
  ck_assert_int_eq(global->dep[2 * (P - 1)], 9 * (P - 1));   /* 9 ops per rank */
  ck_assert_int_eq(global->nscratch, P);
  ck_assert_str_eq(ir_label(global, 9 + 1), "halo north");
  ck_assert_ptr_null(ir_label(global, 1));
  for (int32_t i = 0; i < 9 * P; i++)   /* rank 2's receive and reduce belong to its copy */
    ck_assert_int_eq(global->part_of[i], i == 18 + 1 || i == 18 + 2 ? 18 + 3 : -1);
  ck_assert_uint_eq(global->scr_len[P - 1], 4096);
  ck_assert_int_eq(ir_finalize(global), CDAG_OK);
  ir_graph_free(global);
}
END_TEST

/* Rank r's encoding (1: a label; 2: a typed message's ops): every truncation fails, every
   corrupted byte decodes or fails. */
static void corrupt_rank(int r) {
  cdag_graph *g = rank_graph(4, r, 0x1000000);
  wire_buf w = {0};
  ck_assert_int_eq(wire_encode_rank(g, &w), CDAG_OK);
  for (int64_t n = 0; n < w.len; n++) {  /* every truncation */
    cdag_graph *global;
    ck_assert_int_eq(ir_graph_new(4, -1, &global), CDAG_OK);
    ck_assert_int_ne(wire_decode_rank(global, w.buf, n, NULL), CDAG_OK);
    ir_graph_free(global);
  }
  for (int64_t i = 0; i < w.len; i++)  /* every byte, a few values */
    for (int v = 0; v < 256; v += 51) {
      uint8_t *copy = malloc((size_t)w.len);
      memcpy(copy, w.buf, (size_t)w.len);
      copy[i] = (uint8_t)v;
      cdag_graph *global;
      ck_assert_int_eq(ir_graph_new(4, -1, &global), CDAG_OK);
      (void)wire_decode_rank(global, copy, w.len, NULL);  /* any code, no crash, no leak */
      ir_graph_free(global);
      free(copy);
    }
  cdag_graph *wrong;
  ck_assert_int_eq(ir_graph_new(5, -1, &wrong), CDAG_OK);  /* other number of ranks */
  ck_assert_int_eq(wire_decode_rank(wrong, w.buf, w.len, NULL), CDAG_ERR_FORMAT);
  ir_graph_free(wrong);
  wire_free(&w);
  ir_graph_free(g);
}

START_TEST(corrupt_never_crashes) {
  corrupt_rank(1);
  corrupt_rank(2);
}
END_TEST

/* A vector call's lists: every truncation fails, every corrupted byte decodes or fails, never
   a crash or a leak (valgrind's run says so). */
START_TEST(corrupt_lists_never_crash) {
  cdag_graph *g;
  ck_assert_int_eq(ir_graph_new(3, 1, &g), CDAG_OK);
  uint64_t v[12] = {4, 8, 0, 0, 4, 12, 4, 8, 4, 0, 4, 12};
  ck_assert_int_eq(ir_add_collv(g, 1, IR_COLL_ALLTOALLV, 0, -1, 0x1000, 0x2000, 12, 0, 0, v, NULL), CDAG_OK);
  wire_buf w = {0};
  ck_assert_int_eq(wire_encode_rank(g, &w), CDAG_OK);
  for (int64_t n = 0; n < w.len; n++) {
    cdag_graph *global;
    ck_assert_int_eq(ir_graph_new(3, -1, &global), CDAG_OK);
    ck_assert_int_ne(wire_decode_rank(global, w.buf, n, NULL), CDAG_OK);
    ir_graph_free(global);
  }
  for (int64_t i = 0; i < w.len; i++)
    for (int b = 0; b < 256; b += 17) {
      uint8_t *copy = malloc((size_t)w.len);
      memcpy(copy, w.buf, (size_t)w.len);
      copy[i] = (uint8_t)b;
      cdag_graph *global;
      ck_assert_int_eq(ir_graph_new(3, -1, &global), CDAG_OK);
      (void)wire_decode_rank(global, copy, w.len, NULL);
      ir_graph_free(global);
      free(copy);
    }
  wire_free(&w);
  ir_graph_free(g);
}
END_TEST

START_TEST(fingerprints) {
  cdag_graph *a = rank_graph(4, 2, 0x1000), *b = rank_graph(4, 2, 0x1000), *c = rank_graph(4, 2, 0x1008);
  wire_buf wa = {0}, wb = {0}, wc = {0};
  ck_assert_int_eq(wire_encode_rank(a, &wa), CDAG_OK);
  ck_assert_int_eq(wire_encode_rank(b, &wb), CDAG_OK);
  ck_assert_int_eq(wire_encode_rank(c, &wc), CDAG_OK);
  ck_assert_uint_eq(wire_hash(wa.buf, wa.len, 0), wire_hash(wb.buf, wb.len, 0));
  ck_assert_uint_ne(wire_hash(wa.buf, wa.len, 0), wire_hash(wc.buf, wc.len, 0));
  ck_assert_uint_ne(wire_hash(wa.buf, wa.len, 0), wire_hash(wa.buf, wa.len, 1));
  ck_assert_uint_ne(wire_hash(wa.buf, wa.len - 1, 0), wire_hash(wa.buf, wa.len, 0));
  wire_free(&wa); wire_free(&wb); wire_free(&wc);
  ir_graph_free(a); ir_graph_free(b); ir_graph_free(c);
}
END_TEST

START_TEST(varints) {
  static const uint64_t u[] = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX};
  static const int64_t s[] = {0, -1, 1, -64, 64, INT64_MIN, INT64_MAX};
  wire_buf w = {0};
  for (size_t i = 0; i < sizeof u / sizeof *u; i++) wire_put_u(&w, u[i]);
  for (size_t i = 0; i < sizeof s / sizeof *s; i++) wire_put_s(&w, s[i]);
  ck_assert_int_eq(wire_done(&w), CDAG_OK);
  wire_reader r;
  wire_reader_init(&r, w.buf, w.len);
  for (size_t i = 0; i < sizeof u / sizeof *u; i++) ck_assert_uint_eq(wire_get_u(&r), u[i]);
  for (size_t i = 0; i < sizeof s / sizeof *s; i++) ck_assert_int_eq(wire_get_s(&r), s[i]);
  ck_assert_int_eq(r.failed, 0);
  ck_assert_ptr_eq(r.p, r.end);
  (void)wire_get_u(&r);
  ck_assert_int_eq(r.failed, 1);
  ck_assert_ptr_null(wire_get_bytes(&r, 1));
  wire_free(&w);
}
END_TEST

Suite *cdag_wire_suite(void) {
  Suite *s = suite_create("wire");
  TCase *tc = tcase_create("wire");
  tcase_add_test(tc, round_trip);
  tcase_add_test(tc, labels);
  tcase_add_test(tc, corrupt_never_crashes);
  tcase_add_test(tc, corrupt_lists_never_crash);
  tcase_add_test(tc, fingerprints);
  tcase_add_test(tc, varints);
  suite_add_tcase(s, tc);
  return s;
}

CDAG_CHECK_MAIN(cdag_wire_suite)

/* cdag tests — tests/exec/mpi/test_replay.c: a global graph's rank as a distributed graph.
 *
 * The map of exec/mpi/replay.h packs ranges as documented (touching ones merged, each at its
 * address modulo 64, scratch included, idle ranks empty) and answers offsets only inside a
 * range. The copy (no MPI needed: a graph of ir_graph_new with a rank is distributed) keeps,
 * on random graphs of 1..8 ranks, every op's kind, size, peer and tag in program order, the
 * explicit dependencies, and every overlap between two footprints of a rank, adding none
 * (so the copy has the file's dependencies). One-sided ops become the messages the file's
 * expansion made of them, both sides in its places, and fences nothing. Native
 * collective calls and waits are added again (tests/data/replay/native4.cdag), which writes
 * each rank's calls out as the same ops the file's were written out as. An op kind
 * the copy does not know, or a message with an internal tag, is CDAG_ERR_UNSUPPORTED naming
 * the op and its line. */
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "support/graphs.h"
#include "exec/mpi/replay.h"
#include "format/format.h"
#include "support/support.h"

static uint64_t offset_of(const replay_map *m, int r, uint64_t addr, uint64_t len) {
  uint64_t off = 0;
  ck_assert_msg(replay_map_offset(m, r, addr, len, &off) == CDAG_OK, "%s", cdag_error_message());
  return off;
}

START_TEST(map_packs_ranges) {
  cdag_graph *gg = cdag_test_text_graph("num_ranks 2\nrank 0 {\n  send 64b to 0 addr 0x1000\n  recv 64b from 0 addr 0x1040\n"
                                        "  copy 5b from 0x2003 to 0x5000\n  scratch 0x9000 16b\n}\n");
  replay_map m;
  CK_OK(replay_map_build(gg, &m));
  ck_assert_int_eq(m.start[1] - m.start[0], 4);   /* 0x1000 and 0x1040 touch: one range */
  ck_assert_uint_eq(offset_of(&m, 0, 0x1000, 128), 0);
  ck_assert_uint_eq(offset_of(&m, 0, 0x2003, 5), 131);    /* 3 modulo 64, after 128 bytes */
  ck_assert_uint_eq(offset_of(&m, 0, 0x5000, 5), 192);
  ck_assert_uint_eq(offset_of(&m, 0, 0x9008, 8), 264);    /* scratch has room too */
  ck_assert_uint_eq(m.size[0], 272);
  ck_assert_uint_eq(m.size[1], 0);                       /* an idle rank */
  uint64_t off = 7;
  ck_assert_int_eq(replay_map_offset(&m, 0, 0x1070, 32, &off), CDAG_ERR_ARG);   /* past the range's end */
  ck_assert_int_eq(replay_map_offset(&m, 0, 0x3000, 1, &off), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 0 bytes [0x3000, +1) are not in its map"));
  CK_OK(replay_map_offset(&m, 1, 0x3000, 0, &off));     /* zero bytes touch nothing */
  ck_assert_uint_eq(off, 0);
  for (int64_t k = m.start[0]; k < m.start[1]; k++) ck_assert_uint_eq(m.off[k] % 64, m.lo[k] % 64);
  replay_map_free(&m);
  cdag_graph_free(&gg);
}
END_TEST

/* Op i's footprints: n of them (as replay.c's, written apart). */
static int spans_of(const cdag_graph *g, int32_t i, uint64_t lo[2], uint64_t len[2]) {
  switch (g->kind[i]) {
  case IR_SEND:
  case IR_RECV:
  case IR_GET:
  case IR_PUT:
    lo[0] = g->addr[i], len[0] = g->bytes[i];
    return 1;
  case IR_REDUCE:
  case IR_COPY:
    lo[0] = g->addr[i], lo[1] = g->addr2[i], len[0] = len[1] = g->bytes[i];
    return 2;
  default:
    return 0;
  }
}

static int overlap(uint64_t a, uint64_t n, uint64_t b, uint64_t m) { return n && m && a < b + m && b < a + n; }

/* Every pair of footprints of the copy overlaps exactly when the file's pair does. */
static void check_overlaps(const cdag_graph *gg, const int32_t *ops, const cdag_graph *g, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) {
      uint64_t a[2], al[2], b[2], bl[2], c[2], cl[2], d[2], dl[2];
      int na = spans_of(gg, ops[i], a, al), nb = spans_of(gg, ops[j], b, bl);
      spans_of(g, (int32_t)i, c, cl);
      spans_of(g, (int32_t)j, d, dl);
      for (int x = 0; x < na; x++)
        for (int y = 0; y < nb; y++)
          ck_assert_int_eq(overlap(a[x], al[x], b[y], bl[y]), overlap(c[x], cl[x], d[y], dl[y]));
    }
}

/* Rank r of gg copied: the same ops in program order, the same dependencies and overlaps. */
static void check_rank(const cdag_graph *gg, const replay_map *m, int r) {
  cdag_graph *g = NULL;
  uint8_t *block = malloc(m->size[r] + 1);
  CK_OK(ir_graph_new(gg->nprocs, r, &g));
  CK_OK(replay_copy_rank(gg, m, block, g, 1));
  const int32_t *ops = gg->rank_ops + gg->rank_start[r];
  int64_t n = gg->rank_start[r + 1] - gg->rank_start[r], deps = 0;
  ck_assert_int_eq(g->nops, n);
  for (int64_t k = 0; k < n; k++) {
    int32_t i = ops[k];
    ck_assert_int_eq(g->kind[k], gg->kind[i]);
    ck_assert_uint_eq(g->bytes[k], gg->bytes[i]);
    if (gg->kind[i] == IR_SEND || gg->kind[i] == IR_RECV) {
      ck_assert_int_eq(g->peer[k], gg->peer[i]);
      ck_assert_int_eq(g->tag[k], gg->tag[i]);
      ck_assert_uint_eq(g->addr[k], (uint64_t)(uintptr_t)block + offset_of(m, r, gg->addr[i], gg->bytes[i]));
    }
  }
  for (int64_t k = 0; k < gg->ndeps; k++) deps += gg->rank[gg->dep[2 * k]] == r;
  ck_assert_int_eq(g->ndeps, deps);
  check_overlaps(gg, ops, g, n);
  cdag_graph_free(&g);
  free(block);
}

START_TEST(copy_keeps_ops_and_overlaps) {
  long n = cdag_test_iterations(150);
  for (long seed = 1; seed <= n; seed++) {
    gen_random_opts o = {.reduce_mode = -1};
    cdag_graph *gg = NULL;
    replay_map m;
    CK_OK(gen_random_graph((uint64_t)seed, &o, &gg));
    CK_OK(ir_finalize(gg));
    CK_OK(replay_map_build(gg, &m));
    for (int r = 0; r < gg->nprocs; r++) check_rank(gg, &m, r);
    replay_map_free(&m);
    cdag_graph_free(&gg);
  }
}
END_TEST

START_TEST(labels_scratch_and_requires) {
  cdag_graph *gg = cdag_test_text_graph("num_ranks 1\nrank 0 {\n  scratch 0x8000 64b\n  a: copy 8b from 0x10 to 0x8000\n"
                                        "  b: calc 50\n  c: copy 8b from 0x8000 to 0x20\n  c requires b\n}\n");
  replay_map m;
  cdag_graph *g = NULL;
  CK_OK(replay_map_build(gg, &m));
  uint8_t *block = malloc(m.size[0]);
  CK_OK(ir_graph_new(1, 0, &g));
  CK_OK(replay_copy_rank(gg, &m, block, g, 1));
  ck_assert_int_eq(g->nops, 3);
  ck_assert_str_eq(ir_label(g, 0), "a");
  ck_assert_str_eq(ir_label(g, 2), "c");
  ck_assert_int_eq(g->kind[1], IR_CALC);
  ck_assert_uint_eq(g->bytes[1], 50);
  ck_assert_int_eq(g->ndeps, 1);
  ck_assert_int_eq(g->dep[0], 1);
  ck_assert_int_eq(g->dep[1], 2);
  ck_assert_int_eq(g->nscratch, 1);
  ck_assert_uint_eq(g->scr_addr[0], (uint64_t)(uintptr_t)block + offset_of(&m, 0, 0x8000, 64));
  CK_OK(ir_finalize(g));   /* the copy is a graph ir accepts */
  cdag_graph_free(&g);
  free(block);
  replay_map_free(&m);
  cdag_graph_free(&gg);
}
END_TEST

/* One-sided accesses run as the messages the file's expansion made, both sides in the
   file's places, on the tag above the file's; fences are nothing (calcs of 0). */
START_TEST(onesided_ops_as_messages) {
  cdag_graph *gg = cdag_test_text_graph("num_ranks 2\nrank 0 {\n  segment 0x1000 256b\n  p: put 64b to 1 seg 0 at 0x20 addr 0x2000\n"
                                        "  fence\n  g: get 16b from 1 at 0x1100 addr 0x3000\n}\n"
                                        "rank 1 {\n  segment 0x1000 512b\n  fence\n  copy 8b from 0x10 to 0x18\n}\n");
  replay_map m;
  cdag_graph *g = NULL;
  CK_OK(replay_map_build(gg, &m));
  uint8_t *block = malloc(m.size[0]);
  CK_OK(ir_graph_new(2, 0, &g));
  CK_OK(replay_copy_rank(gg, &m, block, g, 1));
  ck_assert_int_eq(g->nops, 3);
  ck_assert_int_eq(g->kind[0], IR_SEND);   /* the put's origin side */
  ck_assert_int_eq(g->kind[1], IR_CALC);
  ck_assert_uint_eq(g->bytes[1], 0);
  ck_assert_int_eq(g->kind[2], IR_RECV);   /* the get's */
  ck_assert_int_eq(g->tag[0], 0);          /* the file has no message: tag 0 is above its tags */
  ck_assert_int_eq(g->tag[2], 0);
  ck_assert_uint_eq(g->addr[2], (uint64_t)(uintptr_t)block + offset_of(&m, 0, 0x3000, 16));
  ck_assert_int_eq(g->nseg, 0);
  cdag_graph_free(&g);
  CK_OK(ir_graph_new(2, 1, &g));   /* the target: the put's receive before the fence, the get's send after */
  uint8_t *block1 = malloc(m.size[1]);
  CK_OK(replay_copy_rank(gg, &m, block1, g, 1));
  ck_assert_int_eq(g->nops, 4);
  ck_assert_int_eq(g->kind[0], IR_RECV);
  ck_assert_uint_eq(g->addr[0], (uint64_t)(uintptr_t)block1 + offset_of(&m, 1, 0x1020, 64));
  ck_assert_int_eq(g->kind[1], IR_CALC);
  ck_assert_int_eq(g->kind[2], IR_SEND);
  ck_assert_uint_eq(g->addr[2], (uint64_t)(uintptr_t)block1 + offset_of(&m, 1, 0x1100, 16));
  ck_assert_int_eq(g->kind[3], IR_COPY);
  cdag_graph_free(&g);
  free(block);
  free(block1);
  replay_map_free(&m);
  cdag_graph_free(&gg);
}
END_TEST

/* Native collectives and waits: each rank's copy re-adds the communicator and its calls,
   which it writes out again as the same ops (kinds, joins, marks) in the same order. */
START_TEST(native_calls_and_waits) {
  cdag_graph *gg = NULL;
  CK_OK(ir_load_file(CDAG_TEST_DATA "/replay/native4.cdag", NULL, &gg));
  replay_map m;
  CK_OK(replay_map_build(gg, &m));
  for (int r = 0; r < 4; r++) {
    cdag_graph *g = NULL;
    uint8_t *block = malloc(m.size[r]);
    CK_OK(ir_graph_new(4, r, &g));
    CK_OK(replay_copy_rank(gg, &m, block, g, 1));
    const int32_t *ops = gg->rank_ops + gg->rank_start[r];
    int64_t n = gg->rank_start[r + 1] - gg->rank_start[r], calls = 0;
    ck_assert_int_eq(g->nops, n);
    for (int64_t k = 0; k < n; k++) {
      ck_assert_int_eq(g->kind[k], gg->kind[ops[k]]);
      ck_assert_int_eq(g->os[k], gg->os[ops[k]]);
      ck_assert_int_eq(g->join[k], gg->join[ops[k]]);
      calls += gg->os[ops[k]] == IR_OS_COLL;
    }
    ck_assert_int_eq(g->ncalls, calls);
    ck_assert_int_eq(calls, r == 1 || r == 3 ? 11 : 9);
    ck_assert_int_eq(g->ncomms, 1);
    for (int64_t k = 0; k < g->ncalls; k++) {   /* buffers in the block, scratch the graph's own */
      ck_assert_uint_ge(g->calls[k].out, (uint64_t)(uintptr_t)block);
      ck_assert_uint_le(g->calls[k].out, (uint64_t)(uintptr_t)block + m.size[r]);
    }
    CK_OK(ir_finalize(g));
    cdag_graph_free(&g);
    free(block);
  }
  replay_map_free(&m);
  cdag_graph_free(&gg);
}
END_TEST

START_TEST(unknown_ops_are_refused) {
  cdag_graph *gg = cdag_test_text_graph("num_ranks 1\nrank 0 {\n  send 8b to 0 addr 0x0\n  x: recv 8b from 0 addr 0x8\n}\n");
  replay_map m;
  cdag_graph *g = NULL;
  CK_OK(replay_map_build(gg, &m));
  uint8_t *block = malloc(m.size[0]);
  int32_t op = gg->rank_ops[1];
  gg->tag[op] = -9;   /* as a message cdag made itself would have */
  CK_OK(ir_graph_new(1, 0, &g));
  ck_assert_int_eq(replay_copy_rank(gg, &m, block, g, 1), CDAG_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "rank 0 op 1 (recv, line 4, label x): a message with cdag's internal tag -9"));
  cdag_graph_free(&g);
  gg->kind[op] = IR_NKINDS + 9;   /* a kind this copy does not know */
  CK_OK(ir_graph_new(1, 0, &g));
  ck_assert_int_eq(replay_copy_rank(gg, &m, block, g, 1), CDAG_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "line 4, label x): an operation of kind 14, which replay cannot copy"));
  replay_map_free(&m);
  ck_assert_int_eq(replay_map_build(gg, &m), CDAG_ERR_UNSUPPORTED);   /* nor map */
  cdag_graph_free(&g);
  free(block);
  replay_map_free(&m);
  cdag_graph_free(&gg);
}
END_TEST

Suite *cdag_replay_suite(void) {
  Suite *s = suite_create("replay");
  TCase *t = tcase_create("copy");
  tcase_add_test(t, map_packs_ranges);
  tcase_add_test(t, copy_keeps_ops_and_overlaps);
  tcase_add_test(t, labels_scratch_and_requires);
  tcase_add_test(t, onesided_ops_as_messages);
  tcase_add_test(t, native_calls_and_waits);
  tcase_add_test(t, unknown_ops_are_refused);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_replay_suite)

/* cdag tests — size arithmetic at its limits: src/base/checked.h's helpers, and every entry point
 * that multiplies or adds a user's counts, sizes and addresses (reductions: count * element
 * size; native collectives: count * element size times blocks; sends, copies, scratch and
 * segments: address + bytes; one-sided offsets: offset + bytes within a segment; the loader's
 * reduce counts; a redistribution's padded arrays) gets CDAG_ERR_ARG (CDAG_ERR_FORMAT from a
 * file) just past the limit and succeeds just below it: counts near 2^63 / size, sizes and
 * addresses near UINT64_MAX and SIZE_MAX. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "base/checked.h"
#include "format/format.h"
#include "ir/ir.h"

START_TEST(helpers_at_the_limits) {
  uint64_t u;
  size_t z;
  int64_t s;
  ck_assert_int_eq(ckd_mul(&u, UINT64_MAX / 8, (uint64_t)8), 0);
  ck_assert_uint_eq(u, UINT64_MAX / 8 * 8);
  ck_assert_int_eq(ckd_mul(&u, UINT64_MAX / 8 + 1, (uint64_t)8), 1);
  ck_assert_int_eq(ckd_add(&u, UINT64_MAX - 1, (uint64_t)1), 0);
  ck_assert_int_eq(ckd_add(&u, UINT64_MAX, (uint64_t)1), 1);
  ck_assert_int_eq(ckd_mul(&z, SIZE_MAX / 16, (size_t)16), 0);
  ck_assert_int_eq(ckd_mul(&z, SIZE_MAX / 16 + 1, (size_t)16), 1);
  ck_assert_int_eq(ckd_add(&z, SIZE_MAX, (size_t)1), 1);
  ck_assert_int_eq(ckd_mul(&s, INT64_MAX / 2, (int64_t)2), 0);
  ck_assert_int_eq(ckd_mul(&s, INT64_MAX / 2 + 1, (int64_t)2), 1);
  ck_assert_int_eq(ckd_mul(&s, (int64_t)-1, INT64_MIN), 1);
  ck_assert_int_eq(ckd_sub(&s, INT64_MIN, (int64_t)1), 1);
  ck_assert_int_eq(ckd_mul(&s, (uint64_t)INT64_MAX + 1, (uint64_t)1), 1);   /* into a narrower signed type */
}
END_TEST

/* count elements of 8 bytes: 2^63 - 8 bytes is fine, 2^63 and a wrapped product are not. */
START_TEST(reduce_counts) {
  cdag_graph *g = NULL;
  CK_OK(cdag_graph_create_global(2, &g));
  uint64_t most = (uint64_t)INT64_MAX / 8;
  CK_OK(cdag_rank_reduce_local(g, 0, 0, most * 8, most, CDAG_DOUBLE, CDAG_SUM, NULL));
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0, 0, most + 1, CDAG_DOUBLE, CDAG_SUM, NULL), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "too large"));
  /* 2^61 doubles are 2^64 bytes: the product wraps to 0, which must not pass as 0 bytes */
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0, 0x1000, (uint64_t)1 << 61, CDAG_DOUBLE, CDAG_SUM, NULL),
                   CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0, 0x1000, UINT64_MAX, CDAG_INT8, CDAG_SUM, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0, 0x1000, UINT64_MAX / 16 + 1, CDAG_COMPLEX_DOUBLE, CDAG_SUM, NULL),
                   CDAG_ERR_ARG);
  int64_t nops;
  CK_OK(cdag_graph_info(g, NULL, &nops));
  ck_assert_int_eq(nops, 1);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(ranges_near_the_top) {
  cdag_graph *g = NULL;
  CK_OK(cdag_graph_create_global(2, &g));
  CK_OK(cdag_rank_send(g, 0, 0, (uint64_t)INT64_MAX, 1, 0, NULL));
  ck_assert_int_eq(cdag_rank_send(g, 0, 0, (uint64_t)INT64_MAX + 1, 1, 0, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_recv(g, 1, UINT64_MAX, 1, 0, 0, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_copy_local(g, 0, 0, 0x100, UINT64_MAX, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_copy_local(g, 0, UINT64_MAX - 7, 0, 16, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_scratch(g, 0, UINT64_MAX - 7, 16), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_get(g, 0, 0, 16, 1, UINT64_MAX - 7, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_put(g, 0, UINT64_MAX - 7, 16, 1, 0x1000, NULL), CDAG_ERR_ARG);
  cdag_graph_free(&g);
}
END_TEST

/* One-sided offsets: offset + bytes past a segment's end, offset near SIZE_MAX. */
START_TEST(segment_offsets) {
  cdag_graph *g = NULL;
  int seg;
  CK_OK(cdag_graph_create_global(2, &g));
  CK_OK(ir_add_segment(g, 1, 0x1000, 64, &seg));
  CK_OK(ir_add_segment(g, 0, 0x1000, 64, &seg));
  CK_OK(ir_add_fence(g, 0, NULL));
  CK_OK(ir_add_fence(g, 1, NULL));
  CK_OK(ir_add_get(g, 0, 0x9000, 8, 1, 0, (uint64_t)SIZE_MAX - 3, NULL));   /* checked when expanded */
  CK_OK(ir_add_fence(g, 0, NULL));
  CK_OK(ir_add_fence(g, 1, NULL));
  ck_assert_int_eq(ir_finalize(g), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "offset"));
  cdag_graph_free(&g);
}
END_TEST

/* A native allreduce: count * 8 bytes per block must fit, and the buffer must stay below cdag's
   scratch addresses. */
START_TEST(native_collective_counts) {
  cdag_graph *g = NULL;
  CK_OK(cdag_graph_create_global(2, &g));
  ck_assert_int_eq(ir_add_coll(g, 0, IR_COLL_ALLREDUCE, 0, -1, 0x1000, 0x1000, (uint64_t)1 << 61, CDAG_DOUBLE,
                               CDAG_SUM, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_add_coll(g, 0, IR_COLL_ALLREDUCE, 0, -1, 0x1000, 0x1000, UINT64_MAX / 8 + 1, CDAG_DOUBLE,
                               CDAG_SUM, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(ir_add_coll(g, 0, IR_COLL_ALLGATHER, 0, -1, 0x1000, 0x2000, UINT64_MAX / 2 + 1, 0, 0, NULL),
                   CDAG_ERR_ARG);
  CK_OK(ir_add_coll(g, 0, IR_COLL_ALLREDUCE, 0, -1, 0x1000, 0x1000, 4, CDAG_DOUBLE, CDAG_SUM, NULL));
  cdag_graph_free(&g);
}
END_TEST

/* The loader: a reduce count whose bytes pass 2^63 - 1 is a located format error. */
START_TEST(file_reduce_count) {
  const char *text = "num_ranks 1\nrank 0 {\n  reduce 1152921504606846976 double sum in 0x0 inout 0x10\n}\n";
  cdag_graph *g = NULL;
  ck_assert_int_eq(ir_load_mem(text, strlen(text), "limits.cdag", NULL, &g), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "more than 2^63-1 bytes"));
  cdag_graph_free(&g);
}
END_TEST

/* A redistribution whose padded local arrays (columns * lld * element size) pass 2^62 bytes. */
START_TEST(redistribution_sizes) {
  cdag_graph *g = NULL;
  CK_OK(cdag_graph_create_global(1, &g));
  cdag_layout a = {1 << 20, 1 << 20, 64, 64, 1, 1, 0, 0}, b = a;
  b.lld = (int64_t)1 << 45;   /* 2^20 columns of 2^45 elements of 8 bytes: 2^68 bytes */
  ck_assert_int_eq(cdag_rank_redistribute(g, 0, &a, 0x1000, &b, 0x10000000, 8), CDAG_ERR_ARG);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "2^62 bytes"));
  b.lld = INT64_MAX;
  ck_assert_int_eq(cdag_rank_redistribute(g, 0, &a, 0x1000, &b, 0x10000000, 8), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_redistribute(g, 0, &a, 0x1000, &a, 0x10000000, SIZE_MAX), CDAG_ERR_ARG);
  cdag_graph_free(&g);
}
END_TEST

static Suite *cdag_checked_suite(void) {
  Suite *s = suite_create("checked");
  TCase *t = tcase_create("limits");
  tcase_add_test(t, helpers_at_the_limits);
  tcase_add_test(t, reduce_counts);
  tcase_add_test(t, ranges_near_the_top);
  tcase_add_test(t, segment_offsets);
  tcase_add_test(t, native_collective_counts);
  tcase_add_test(t, file_reduce_count);
  tcase_add_test(t, redistribution_sizes);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_checked_suite)

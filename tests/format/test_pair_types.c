/* cdag tests — MAXLOC / MINLOC on (value, index) pairs, complex sums and products, long
 * doubles.
 *
 * Hand cases of MPI's rule (larger/smaller value, then smaller index) and of cdag's
 * additions (whole element copied, padding included; ties broken by bytes; floats by IEEE
 * totalOrder); randomized checks that both ops are commutative and associative bit for bit
 * on random bytes of every pair type (NaNs, signed zeros, equal values and indices); which
 * ops MPI allows on which types; the graph format's names; and hand-written allreduces of
 * pairs, complex numbers and long doubles found by detection, with the simulator's
 * plan-equals-graph check on random contents. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "check_main.h"
#include "format/format.h"
#include "ir/ir.h"

static const int pair_types[] = {CDAG_FLOAT_INT, CDAG_DOUBLE_INT, CDAG_LONG_INT, CDAG_2INT,
                                 CDAG_SHORT_INT, CDAG_2FLOAT,     CDAG_2DOUBLE};
#define NPAIRS ((int)(sizeof pair_types / sizeof *pair_types))

typedef struct { double v; int32_t i; int32_t pad; } dbl_int;   /* MPI_DOUBLE_INT's layout */

START_TEST(maxloc_follows_mpi) {
  dbl_int in[4] = {{3.0, 7, 0}, {2.0, 1, 0}, {5.0, 9, 0}, {5.0, 2, 0}};
  dbl_int io[4] = {{1.0, 4, 0}, {2.0, 8, 0}, {5.0, 3, 0}, {5.0, 2, 0}};
  in[3].pad = 1;   /* full tie but for the padding: the smaller bytes win, whichever side */
  io[3].pad = 2;
  ir_reduce_apply(CDAG_DOUBLE_INT, CDAG_MAXLOC, in, io, 4);
  ck_assert(io[0].v == 3.0 && io[0].i == 7);     /* larger value */
  ck_assert(io[1].v == 2.0 && io[1].i == 1);     /* equal values: smaller index */
  ck_assert(io[2].v == 5.0 && io[2].i == 3);
  ck_assert_int_eq(io[3].pad, 1);
  dbl_int a = {-0.0, 5, 0}, b = {0.0, 1, 0};
  ir_reduce_apply(CDAG_DOUBLE_INT, CDAG_MINLOC, &a, &b, 1);
  ck_assert(signbit(b.v) && b.i == 5);           /* totalOrder: -0 < +0 */
  int32_t p[2] = {4, 10}, q[2] = {4, 3};         /* MPI_2INT minloc */
  ir_reduce_apply(CDAG_2INT, CDAG_MINLOC, p, q, 1);
  ck_assert(q[0] == 4 && q[1] == 3);
}
END_TEST

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Random elements from a small pool of values and indices (ties are common), padding random;
   a float value is one of a few bit patterns including NaNs and signed zeros. */
static void random_pair(int type, uint8_t *e, uint64_t *s) {
  int size = ir_type_size(type);
  for (int k = 0; k < size; k++) e[k] = (uint8_t)next(s);
  static const uint64_t dpool[] = {0, 0x8000000000000000ull, 0x3ff0000000000000ull, 0x7ff8000000000001ull,
                                   0xfff0000000000000ull, 0xbff0000000000000ull};
  static const uint32_t fpool[] = {0, 0x80000000u, 0x3f800000u, 0x7fc00001u, 0xff800000u, 0xbf800000u};
  uint64_t r = next(s) % 6, ri = next(s) % 3;
  switch (type) {
  case CDAG_FLOAT_INT: memcpy(e, &fpool[r], 4); memcpy(e + 4, &ri, 4); break;
  case CDAG_DOUBLE_INT: memcpy(e, &dpool[r], 8); memcpy(e + 8, &ri, 4); break;
  case CDAG_LONG_INT: { int64_t v = (int64_t)r - 3; memcpy(e, &v, 8); memcpy(e + 8, &ri, 4); break; }
  case CDAG_2INT: { int32_t v = (int32_t)r - 3; memcpy(e, &v, 4); memcpy(e + 4, &ri, 4); break; }
  case CDAG_SHORT_INT: { int16_t v = (int16_t)(r - 3); memcpy(e, &v, 2); memcpy(e + 4, &ri, 4); break; }
  case CDAG_2FLOAT: memcpy(e, &fpool[r], 4); memcpy(e + 4, &fpool[ri], 4); break;
  default: memcpy(e, &dpool[r], 8); memcpy(e + 8, &dpool[ri], 8); break;
  }
}

START_TEST(loc_ops_are_order_free) {
  uint64_t s = 0x1234567;
  long iters = cdag_test_iterations(3000);
  for (int t = 0; t < NPAIRS; t++)
    for (int rop = CDAG_MAXLOC; rop <= CDAG_MINLOC; rop++)
      for (long it = 0; it < iters; it++) {
        int type = pair_types[t];
        size_t size = (size_t)ir_type_size(type);
        uint8_t a[16], b[16], c[16], ab[16], ba[16], l[16], r[16];
        random_pair(type, a, &s);
        random_pair(type, b, &s);
        random_pair(type, c, &s);
        memcpy(ab, b, size);
        ir_reduce_apply(type, rop, a, ab, 1);
        memcpy(ba, a, size);
        ir_reduce_apply(type, rop, b, ba, 1);
        ck_assert(memcmp(ab, ba, size) == 0);
        ck_assert(memcmp(ab, a, size) == 0 || memcmp(ab, b, size) == 0);   /* a whole element wins */
        memcpy(l, ab, size);
        ir_reduce_apply(type, rop, c, l, 1);     /* (b op a) op c */
        memcpy(r, c, size);
        ir_reduce_apply(type, rop, b, r, 1);     /* c op b */
        ir_reduce_apply(type, rop, a, r, 1);     /* (c op b) op a */
        ck_assert(memcmp(l, r, size) == 0);
      }
}
END_TEST

START_TEST(complex_sum_and_prod) {
  double a[2] = {1.5, -2.0}, b[2] = {0.5, 4.0};
  ir_reduce_apply(CDAG_COMPLEX_DOUBLE, CDAG_PROD, a, b, 1);   /* (0.5 + 4i)(1.5 - 2i) = 8.75 + 5i */
  ck_assert(b[0] == 8.75 && b[1] == 5.0);
  float c[4] = {1, 2, 3, 4}, d[4] = {10, 20, 30, 40};
  ir_reduce_apply(CDAG_COMPLEX_FLOAT, CDAG_SUM, c, d, 2);
  ck_assert(d[0] == 11 && d[1] == 22 && d[2] == 33 && d[3] == 44);
  uint64_t s = 99;
  for (long it = 0; it < cdag_test_iterations(2000); it++) {     /* commutative bit for bit */
    double x[2], y[2], xy[2], yx[2];
    for (int k = 0; k < 2; k++) {
      x[k] = (double)(int64_t)(next(&s) % 2001 - 1000) / 7.0;
      y[k] = (double)(int64_t)(next(&s) % 2001 - 1000) / 3.0;
    }
    for (int rop = CDAG_SUM; rop <= CDAG_PROD; rop++) {
      memcpy(xy, y, sizeof xy);
      ir_reduce_apply(CDAG_COMPLEX_DOUBLE, rop, x, xy, 1);
      memcpy(yx, x, sizeof yx);
      ir_reduce_apply(CDAG_COMPLEX_DOUBLE, rop, y, yx, 1);
      ck_assert(memcmp(xy, yx, sizeof xy) == 0);
    }
  }
}
END_TEST

/* A long double reduce writes the value and zeros the padding (x87: 10 of 16 bytes), so the
   bytes do not depend on which operand's padding came first; min and max as for doubles. */
START_TEST(long_double_ops) {
  ck_assert_int_eq(ir_type_size(CDAG_LONG_DOUBLE), (int)sizeof(long double));
  ck_assert(ir_type_is_float(CDAG_LONG_DOUBLE) && !ir_rop_valid_for(CDAG_BAND, CDAG_LONG_DOUBLE));
  long double a[3], b[3];
  memset(a, 0xa5, sizeof a);
  memset(b, 0x5a, sizeof b);
  a[0] = 1.25L, a[1] = -0.0L, a[2] = __builtin_nanl("");
  b[0] = 2.5L, b[1] = 0.0L, b[2] = 3.0L;
  long double mn[3], mx[3];
  memcpy(mn, b, sizeof b);
  memcpy(mx, b, sizeof b);
  ir_reduce_apply(CDAG_LONG_DOUBLE, CDAG_MIN, a, mn, 3);
  ir_reduce_apply(CDAG_LONG_DOUBLE, CDAG_MAX, a, mx, 3);
  ck_assert(mn[0] == 1.25L && mx[0] == 2.5L && signbit(mn[1]) && !signbit(mx[1]) && isnan(mn[2]) && isnan(mx[2]));
  ir_reduce_apply(CDAG_LONG_DOUBLE, CDAG_SUM, a, b, 1);
  ck_assert(b[0] == 3.75L && b[1] == 0.0L && !signbit(b[1]) && b[2] == 3.0L);   /* beyond count: untouched */
  if (LDBL_MANT_DIG == 64 && sizeof(long double) == 16) {   /* x87: bytes 10..15 are padding */
    const unsigned char *p = (const unsigned char *)b;
    for (int k = 10; k < 16; k++) ck_assert_int_eq(p[k], 0);
  }
}
END_TEST

/* MPI_LONG_DOUBLE_INT's pairs: the larger (smaller) x87 value wins, then the smaller index;
   -0 below +0 and a NaN beyond the infinities (totalOrder); the winner copied whole. */
START_TEST(long_double_int_loc) {
  typedef struct { long double v; int i; } ldi;
  ck_assert_int_eq(ir_type_size(CDAG_LONG_DOUBLE_INT), (int)sizeof(ldi));
  ck_assert(ir_rop_valid_for(CDAG_MAXLOC, CDAG_LONG_DOUBLE_INT) && !ir_rop_valid_for(CDAG_SUM, CDAG_LONG_DOUBLE_INT));
  ldi a[4], b[4];
  memset(a, 0xa5, sizeof a);
  memset(b, 0x5a, sizeof b);
  a[0].v = 1.5L, a[0].i = 7;   b[0].v = -2.0L, b[0].i = 1;
  a[1].v = 3.0L, a[1].i = 2;   b[1].v = 3.0L, b[1].i = 9;
  a[2].v = -0.0L, a[2].i = 1;  b[2].v = 0.0L, b[2].i = 1;
  a[3].v = __builtin_nanl(""), a[3].i = 4;  b[3].v = __builtin_infl(), b[3].i = 0;
  ldi mx[4], mn[4];
  memcpy(mx, b, sizeof b);
  memcpy(mn, b, sizeof b);
  ir_reduce_apply(CDAG_LONG_DOUBLE_INT, CDAG_MAXLOC, a, mx, 4);
  ir_reduce_apply(CDAG_LONG_DOUBLE_INT, CDAG_MINLOC, a, mn, 4);
  /* fields by value (valgrind takes x87 stores' bytes past the 10th for undefined), the
     padding after the index by byte: the winner is copied whole */
  const unsigned char *pmx = (const unsigned char *)mx, *pmn = (const unsigned char *)mn;
  size_t pad = sizeof(long double) + sizeof(int);
  ck_assert(mx[0].v == 1.5L && mx[0].i == 7 && pmx[pad] == 0xa5 && mn[0].v == -2.0L && mn[0].i == 1 && pmn[pad] == 0x5a);
  ck_assert(mx[1].i == 2 && mn[1].i == 2);   /* equal values: the smaller index */
  ck_assert(!signbit(mx[2].v) && signbit(mn[2].v) && pmx[sizeof(ldi) * 2 + pad] == 0x5a);   /* -0 < +0 */
  ck_assert(mx[3].i == 4 && isnan(mx[3].v) && mn[3].i == 0);
}
END_TEST

/* MPI_C_LONG_DOUBLE_COMPLEX: sum and prod as C's complex long double computes them without
   special cases, each part's padding zeroed; no other op. */
START_TEST(complex_long_double_ops) {
  ck_assert_int_eq(ir_type_size(CDAG_COMPLEX_LONG_DOUBLE), (int)sizeof(long double _Complex));
  ck_assert(ir_type_is_float(CDAG_COMPLEX_LONG_DOUBLE));
  for (int rop = CDAG_SUM; rop <= CDAG_MINLOC; rop++)
    ck_assert_int_eq(ir_rop_valid_for(rop, CDAG_COMPLEX_LONG_DOUBLE), rop == CDAG_SUM || rop == CDAG_PROD);
  long double a[4] = {1.5L, -2.0L, 0.25L, 3.0L}, s[4], p[4];
  long double b[4] = {0.5L, 4.0L, -1.0L, 0.125L};
  unsigned char *bs = (unsigned char *)s, *bp = (unsigned char *)p;
  memset(s, 0xa5, sizeof s);
  memset(p, 0xa5, sizeof p);
  for (int k = 0; k < 4; k++) memcpy(&s[k], &b[k], 10), memcpy(&p[k], &b[k], 10);
  ir_reduce_apply(CDAG_COMPLEX_LONG_DOUBLE, CDAG_SUM, a, s, 2);
  ir_reduce_apply(CDAG_COMPLEX_LONG_DOUBLE, CDAG_PROD, a, p, 2);
  ck_assert(s[0] == 2.0L && s[1] == 2.0L && s[2] == -0.75L && s[3] == 3.125L);
  ck_assert(p[0] == 0.5L * 1.5L - 4.0L * -2.0L && p[1] == 0.5L * -2.0L + 4.0L * 1.5L);   /* (b0 + b1 i)(a0 + a1 i) */
  ck_assert(p[2] == -1.0L * 0.25L - 0.125L * 3.0L && p[3] == -1.0L * 3.0L + 0.125L * 0.25L);
  for (int k = 0; k < 4; k++)
    for (size_t j = 10; j < sizeof(long double); j++)
      ck_assert(bs[k * sizeof(long double) + j] == 0 && bp[k * sizeof(long double) + j] == 0);
}
END_TEST

START_TEST(ops_allowed_as_in_mpi) {
  for (int t = 0; t < NPAIRS; t++)
    for (int rop = CDAG_SUM; rop <= CDAG_MINLOC; rop++)
      ck_assert_int_eq(ir_rop_valid_for(rop, pair_types[t]), rop == CDAG_MAXLOC || rop == CDAG_MINLOC);
  for (int rop = CDAG_SUM; rop <= CDAG_MINLOC; rop++) {
    ck_assert_int_eq(ir_rop_valid_for(rop, CDAG_COMPLEX_FLOAT), rop == CDAG_SUM || rop == CDAG_PROD);
    ck_assert_int_eq(ir_rop_valid_for(rop, CDAG_INT32), rop <= CDAG_LXOR);
  }
  ck_assert(ir_type_is_float(CDAG_COMPLEX_DOUBLE) && !ir_type_is_float(CDAG_DOUBLE_INT));
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(2, &g));
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0, 64, 2, CDAG_DOUBLE_INT, CDAG_SUM, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0, 64, 2, CDAG_DOUBLE, CDAG_MAXLOC, NULL), CDAG_ERR_ARG);
  ck_assert_int_eq(cdag_rank_reduce_local(g, 0, 0, 64, 2, (cdag_type)(IR_TYPE_USER + 8),
                                          (cdag_reduce_op)(IR_ROP_USER + 1), NULL), CDAG_ERR_ARG);
  CK_OK(cdag_rank_reduce_local(g, 0, 0, 64, 2, CDAG_DOUBLE_INT, CDAG_MAXLOC, NULL));
  cdag_graph_free(&g);
}
END_TEST

START_TEST(format_names) {
  const char *text = "num_ranks 1\nrank 0 {\n  a: reduce 2 double_int maxloc in 0x0 inout 0x40\n"
                     "  b: reduce 3 complex_double prod in 0x100 inout 0x200\n  c: reduce 1 short_int minloc in 0x300 inout 0x400\n}\n";
  char path[] = "/tmp/cdag_pairs_XXXXXX";
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  cdag_graph *g = NULL;
  CK_OK(cdag_graph_load(path, &g));
  char *out = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&out, &len);
  CK_OK(ir_save_file(g, m));
  fclose(m);
  ck_assert(strstr(out, "reduce 2 double_int maxloc") && strstr(out, "reduce 3 complex_double prod") &&
            strstr(out, "reduce 1 short_int minloc"));
  free(out);
  cdag_graph_free(&g);
  remove(path);
}
END_TEST

/* A hand-written allreduce (every rank sends its vector to every other and reduces what it
   receives, through scratch) of count elements of type with rop, on p ranks. */
static cdag_graph *all_to_all_reduce(int p, int type, int rop, uint64_t count) {
  uint64_t bytes = count * (uint64_t)ir_type_size(type), x = 0, r = 0x1000, tmp = 0x2000;
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(p, &g));
  for (int a = 0; a < p; a++) {
    CK_OK(cdag_rank_scratch(g, a, tmp, bytes * (uint64_t)p));
    CK_OK(cdag_rank_copy_local(g, a, x, r, bytes, NULL));
    for (int b = 0; b < p; b++)
      if (b != a) {
        CK_OK(cdag_rank_send(g, a, x, bytes, b, 0, NULL));
        CK_OK(cdag_rank_recv(g, a, tmp + (uint64_t)b * bytes, bytes, b, 0, NULL));
      }
    for (int b = 0; b < p; b++)
      if (b != a)
        CK_OK(cdag_rank_reduce_local(g, a, tmp + (uint64_t)b * bytes, r, count, (cdag_type)type, (cdag_reduce_op)rop, NULL));
  }
  return g;
}

START_TEST(detected_and_verified) {
  const struct { int type, rop; } cases[] = {{CDAG_DOUBLE_INT, CDAG_MAXLOC}, {CDAG_2INT, CDAG_MINLOC},
                                             {CDAG_SHORT_INT, CDAG_MAXLOC},  {CDAG_2DOUBLE, CDAG_MINLOC},
                                             {CDAG_COMPLEX_FLOAT, CDAG_SUM}, {CDAG_COMPLEX_DOUBLE, CDAG_PROD},
                                             {CDAG_LONG_DOUBLE, CDAG_SUM},   {CDAG_LONG_DOUBLE, CDAG_MAX},
                                             {CDAG_LONG_DOUBLE_INT, CDAG_MAXLOC}, {CDAG_COMPLEX_LONG_DOUBLE, CDAG_SUM}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    for (int p = 3; p <= 6; p += 3) {
      cdag_graph *g = all_to_all_reduce(p, cases[k].type, cases[k].rop, 5);
      cdag_plan *plan = NULL;
      CK_OK(cdag_analyze(g, NULL, &plan));
      char *out = NULL;
      size_t len = 0;
      FILE *m = open_memstream(&out, &len);
      CK_OK(cdag_plan_report(plan, m, 0));
      fclose(m);
      ck_assert_msg(strstr(out, "allreduce") && strstr(out, ir_type_name(cases[k].type)), "%s", out);
      free(out);
      /* complex products reassociate: bytes may differ, as for double sums (exact_float) */
      if (!(cases[k].type == CDAG_COMPLEX_DOUBLE && cases[k].rop == CDAG_PROD)) CK_OK(cdag_plan_verify(g, plan));
      cdag_plan_free(&plan);
      cdag_graph_free(&g);
    }
}
END_TEST

/* Every type the writer knows, with every op valid for it, as a local reduce and as a native
   allreduce: saved, then loaded back with the same type and op (2int, 2float and 2double
   start with a digit, which the tokenizer reads as a number). */
START_TEST(every_type_round_trips) {
  int ntypes = 0;
  while (ir_type_name(ntypes)) ntypes++;
  ck_assert_int_eq(ntypes, CDAG_COMPLEX_LONG_DOUBLE + 1);
  for (int type = 0; type < ntypes; type++)
    for (int rop = 0; ir_rop_name(rop); rop++) {
      if (!ir_rop_valid_for(rop, type)) continue;
      cdag_graph *g;
      CK_OK(cdag_graph_create_global(2, &g));
      CK_OK(cdag_rank_reduce_local(g, 0, 0, 256, 3, (cdag_type)type, (cdag_reduce_op)rop, NULL));
      for (int r = 0; r < 2; r++) CK_OK(ir_add_coll(g, r, IR_COLL_ALLREDUCE, 0, -1, 0x1000, 0x2000, 2, type, rop, NULL));
      char *out = NULL;
      size_t len = 0;
      FILE *m = open_memstream(&out, &len);
      CK_OK(ir_save_file(g, m));
      fclose(m);
      cdag_graph *back = NULL;
      ck_assert_msg(ir_load_mem(out, len, "round trip", NULL, &back) == CDAG_OK, "%s %s: %s\n%s", ir_type_name(type),
                    ir_rop_name(rop), cdag_error_message(), out);
      int reduces = 0, calls = 0;
      for (int64_t i = 0; i < back->nops; i++)
        if (back->kind[i] == IR_REDUCE && back->rank[i] == 0 && back->addr[i] == 256 && !(back->os && back->os[i])) {
          ck_assert_int_eq(back->peer[i], type);
          ck_assert_int_eq(back->tag[i], rop);
          ck_assert_uint_eq(back->bytes[i], 3u * (unsigned)ir_type_size(type));
          reduces++;
        }
      for (int64_t c = 0; c < back->ncalls; c++) {
        ck_assert_int_eq(back->calls[c].type, type);
        ck_assert_int_eq(back->calls[c].rop, rop);
        calls++;
      }
      ck_assert_int_eq(reduces, 1);
      ck_assert_int_eq(calls, 2);
      free(out);
      cdag_graph_free(&back);
      cdag_graph_free(&g);
    }
}
END_TEST

/* The line the issue quoted: a pair type first in a reduce. */
START_TEST(pair_type_loads) {
  const char *text = "num_ranks 1\nrank 0 {\n  reduce 1 2int maxloc in 0x100 inout 0x200\n"
                     "  reduce 1 2float minloc in 0x300 inout 0x400\n  reduce 1 2double maxloc in 0x500 inout 0x600\n}\n";
  cdag_graph *g = NULL;
  ck_assert_msg(ir_load_mem(text, strlen(text), "pairs", NULL, &g) == CDAG_OK, "%s", cdag_error_message());
  ck_assert_int_eq(g->peer[0], CDAG_2INT);
  ck_assert_int_eq(g->peer[1], CDAG_2FLOAT);
  ck_assert_int_eq(g->peer[2], CDAG_2DOUBLE);
  cdag_graph_free(&g);
  const char *bad = "num_ranks 1\nrank 0 {\n  reduce 1 2long maxloc in 0x100 inout 0x200\n}\n";
  ck_assert_int_eq(ir_load_mem(bad, strlen(bad), "pairs", NULL, &g), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "found '2long'"));
}
END_TEST

Suite *cdag_pair_types_suite(void) {
  Suite *s = suite_create("pair_types");
  TCase *t = tcase_create("semantics");
  tcase_add_test(t, maxloc_follows_mpi);
  tcase_add_test(t, loc_ops_are_order_free);
  tcase_add_test(t, complex_sum_and_prod);
  tcase_add_test(t, long_double_ops);
  tcase_add_test(t, long_double_int_loc);
  tcase_add_test(t, complex_long_double_ops);
  tcase_add_test(t, ops_allowed_as_in_mpi);
  tcase_add_test(t, format_names);
  tcase_add_test(t, every_type_round_trips);
  tcase_add_test(t, pair_type_loads);
  tcase_add_test(t, detected_and_verified);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_pair_types_suite)

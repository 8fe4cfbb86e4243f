/* cdag MPI test — cdag_reduce_local with pair types, complex types and user ops (mpiexec -n 1..8).
 *
 * Each case is an allreduce written by hand (every rank sends its vector to every other and
 * reduces what it receives, in rank order, through scratch), compiled with detection on and
 * off, run three times with fresh values, and compared with MPI_Allreduce of the same
 * datatype and op: MPI_DOUBLE_INT / MPI_MAXLOC and MPI_2INT / MPI_MINLOC (value and index
 * compared; values drawn so that MPI's rule decides), MPI_C_DOUBLE_COMPLEX and
 * MPI_LONG_DOUBLE sums of small integers (exact; long doubles compared by value), a commutative user op on a contiguous derived datatype, and a non-commutative one (2x2 matrix products mod a prime, applied along a
 * chain in rank order, then sent back) equal to MPI's rank-order result: graphs with user
 * ops run as written, and the report says so. Errors: ops MPI does not define on a type, a
 * predefined op on a derived type, a user op on a datatype with holes; ranks meeting two
 * user ops in different orders still compute right. Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { N = 7 };

static int R, P;

typedef struct { double v; int i; } dbl_int;
typedef struct { int v, i; } two_int;

/* ---- the user ops ---- */

/* On pairs of int64: (sum, max), commutative. */
static void sum_max(void *in, void *inout, int *len, MPI_Datatype *t) {
  const int64_t *a = in;
  int64_t *b = inout;
  for (int k = 0; k < *len; k++) {
    b[2 * k] += a[2 * k];
    if (a[2 * k + 1] > b[2 * k + 1]) b[2 * k + 1] = a[2 * k + 1];
  }
}

/* 2x2 matrices mod 10007 (four int64): inout = in * inout. Associative, not commutative. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *t) {
  const int64_t *a = in;
  int64_t *b = inout;
  for (int k = 0; k < *len; k++, a += 4, b += 4) {
    int64_t r[4] = {(a[0] * b[0] + a[1] * b[2]) % 10007, (a[0] * b[1] + a[1] * b[3]) % 10007,
                    (a[2] * b[0] + a[3] * b[2]) % 10007, (a[2] * b[1] + a[3] * b[3]) % 10007};
    memcpy(b, r, sizeof r);
  }
}

static void nop_fn(void *in, void *inout, int *len, MPI_Datatype *t) {}

/* ---- the hand-written allreduce ---- */

typedef struct {
  MPI_Datatype type;
  MPI_Op op;
  size_t esize;                 /* bytes per element */
  uint8_t *x, *r, *tmp;         /* own vector, result, received vectors (P of them) */
} red_case;

static cdag_graph *all_to_all(const red_case *c) {
  size_t bytes = N * c->esize;
  cdag_graph *g = NULL;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  MT_OK(cdag_scratch(g, c->tmp, bytes * (size_t)P));
  MT_OK(cdag_copy_local(g, c->x, c->r, bytes, NULL));
  for (int b = 0; b < P; b++)
    if (b != R) {
      MT_OK(cdag_send(g, c->x, bytes, b, 0, NULL));
      MT_OK(cdag_recv(g, c->tmp + (size_t)b * bytes, bytes, b, 0, NULL));
    }
  for (int b = 0; b < P; b++)
    if (b != R) MT_OK(cdag_reduce_local(g, c->tmp + (size_t)b * bytes, c->r, N, c->type, c->op, NULL));
  return g;
}

/* The non-commutative chain: rank r receives the product of ranks 0..r-1, multiplies its own
   matrix on the right (MPI_Reduce_local(in = received, inout = own)), passes it on; the last
   rank sends the result back to every rank. */
static cdag_graph *chain(const red_case *c) {
  size_t bytes = N * c->esize;
  cdag_graph *g = NULL;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  MT_OK(cdag_scratch(g, c->tmp, bytes));
  MT_OK(cdag_copy_local(g, c->x, c->r, bytes, NULL));
  if (R > 0) {
    MT_OK(cdag_recv(g, c->tmp, bytes, R - 1, 0, NULL));
    MT_OK(cdag_reduce_local(g, c->tmp, c->r, N, c->type, c->op, NULL));
  }
  if (R < P - 1) {
    MT_OK(cdag_send(g, c->r, bytes, R + 1, 0, NULL));
    MT_OK(cdag_recv(g, c->r, bytes, P - 1, 1, NULL));
  } else {
    for (int b = 0; b < P - 1; b++) MT_OK(cdag_send(g, c->r, bytes, b, 1, NULL));
  }
  return g;
}

static char *report_of(cdag_schedule *s) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  MT_OK(cdag_schedule_report(s, f, 0));
  fclose(f);
  return text;
}

/* Runs c three times (fill it, run, compare with MPI_Allreduce under cmp) for both modes. */
static void run_case(const char *name, red_case *c, cdag_graph *(*build)(const red_case *),
                     void (*fill)(red_case *, int), int (*same)(const void *, const void *, size_t),
                     const char *must_report) {
  size_t bytes = N * c->esize;
  uint8_t *want = malloc(bytes);
  for (int detect = 0; detect < 2; detect++) {
    cdag_graph *g = build(c);
    cdag_options o;
    cdag_options_init(&o);
    o.detect = detect;
    cdag_schedule *s = NULL;
    MT_EXPECT_MSG(cdag_compile(g, &o, &s) == CDAG_OK, "%s: %s", name, cdag_error_message());
    cdag_graph_free(&g);
    if (!s) continue;
    if (detect && P >= 3) {
      char *text = report_of(s);
      MT_EXPECT_STR(text, must_report);
      free(text);
    }
    for (int it = 0; it < 3; it++) {
      fill(c, it);
      MPI_Allreduce(c->x, want, N, c->type, c->op, MPI_COMM_WORLD);
      memset(c->r, 0x5a, bytes);
      MT_OK(cdag_run(s));
      MT_EXPECT_MSG(same(c->r, want, bytes), "%s: detect=%d it=%d differs from MPI", name, detect, it);
    }
    cdag_schedule_free(&s);
  }
  free(want);
}

static void alloc_case(red_case *c, MPI_Datatype t, MPI_Op op, size_t esize) {
  c->type = t;
  c->op = op;
  c->esize = esize;
  c->x = calloc(N, esize);
  c->r = calloc(N, esize);
  c->tmp = calloc((size_t)N * (size_t)P, esize);
}

static void free_case(red_case *c) {
  free(c->x); free(c->r); free(c->tmp);
}

/* ---- fills and comparisons ---- */

static void fill_dbl_int(red_case *c, int it) {
  dbl_int *x = (dbl_int *)c->x;
  for (int k = 0; k < N; k++) x[k] = (dbl_int){(double)((R * 7 + k * 3 + it) % 5), R};   /* ties: index decides */
}
static int same_dbl_int(const void *a, const void *b, size_t bytes) {
  const dbl_int *x = a, *y = b;
  for (size_t k = 0; k < bytes / sizeof *x; k++)
    if (x[k].v != y[k].v || x[k].i != y[k].i) return 0;
  return 1;
}

static void fill_two_int(red_case *c, int it) {
  two_int *x = (two_int *)c->x;
  for (int k = 0; k < N; k++) x[k] = (two_int){(R * 5 + k + it) % 4, 100 - R};
}

static void fill_complex(red_case *c, int it) {
  double *x = (double *)c->x;
  for (int k = 0; k < 2 * N; k++) x[k] = (double)(R * 11 + k - 3 * it);
}

static void fill_ldbl(red_case *c, int it) {
  long double *x = (long double *)c->x;
  for (int k = 0; k < N; k++) x[k] = (long double)(R * 11 + k - 3 * it);
}

static void fill_sum_max(red_case *c, int it) {
  int64_t *x = (int64_t *)c->x;
  for (int k = 0; k < N; k++) {
    x[2 * k] = R * 1000 + k + it;
    x[2 * k + 1] = (R * 37 + k * 11 + it) % 23;
  }
}

static void fill_matrix(red_case *c, int it) {
  int64_t *x = (int64_t *)c->x;
  for (int k = 0; k < 4 * N; k++) x[k] = (R * 31 + k * 7 + it * 3 + 1) % 10007;
}

static int same_bytes(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

/* Long doubles by value: MPI's sum leaves the padding after each 80-bit value as it was,
   cdag's zeros it. */
static int same_ldbl(const void *a, const void *b, size_t bytes) {
  for (size_t k = 0; k < bytes / sizeof(long double); k++) {
    long double x, y;
    memcpy(&x, (const char *)a + k * sizeof x, sizeof x);
    memcpy(&y, (const char *)b + k * sizeof y, sizeof y);
    if (x != y) return 0;
  }
  return 1;
}

/* ---- errors ---- */

static void errors(void) {
  double d[2] = {0};
  dbl_int p[2] = {{0}};
  cdag_graph *g = NULL;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  MT_EXPECT_RC(cdag_reduce_local(g, d, d + 1, 1, MPI_DOUBLE, MPI_MAXLOC, NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_reduce_local(g, p, p + 1, 1, MPI_DOUBLE_INT, MPI_SUM, NULL), CDAG_ERR_ARG);
  MPI_Datatype two, holes;
  MPI_Type_contiguous(2, MPI_DOUBLE, &two);
  MPI_Type_commit(&two);
  MT_EXPECT_RC(cdag_reduce_local(g, d, d, 1, two, MPI_SUM, NULL), CDAG_ERR_UNSUPPORTED);
  MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &holes);
  MPI_Type_commit(&holes);
  MPI_Op nop;
  MPI_Op_create(nop_fn, 1, &nop);
  MT_EXPECT_RC(cdag_reduce_local(g, d, d, 1, holes, nop, NULL), CDAG_ERR_UNSUPPORTED);
  MT_EXPECT_STR(cdag_error_message(), "contiguous");
  cdag_graph_free(&g);
  if (P >= 2) {  /* two fresh ops, first used in different orders on different ranks: each
                    rank's slots are its own, and the graph runs as written */
    MPI_Op a, b;
    MPI_Op_create(sum_max, 1, &a);
    MPI_Op_create(sum_max, 1, &b);
    int64_t v[4] = {R, R, 0, 0}, w[2] = {0, 0};
    MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
    int to = (R + 1) % P, from = (R + P - 1) % P;
    MT_OK(cdag_send(g, v, 2 * sizeof *v, to, 0, NULL));
    MT_OK(cdag_recv(g, w, 2 * sizeof *w, from, 0, NULL));
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT64_T, &pair);
    MPI_Type_commit(&pair);
    MT_OK(cdag_reduce_local(g, w, v + 2, 1, pair, R == 0 ? a : b, NULL));
    MT_OK(cdag_reduce_local(g, w, v + 2, 1, pair, R == 0 ? b : a, NULL));
    MPI_Type_free(&pair);   /* cdag keeps its own reference */
    cdag_schedule *s = NULL;
    MT_OK(cdag_compile(g, NULL, &s));
    cdag_graph_free(&g);
    MT_EXPECT(s != NULL);
    if (s) MT_OK(cdag_run(s));
    MT_EXPECT_INT(v[2], ==, 2 * from);
    MT_EXPECT_INT(v[3], ==, from);
    cdag_schedule_free(&s);
    MPI_Op_free(&a);
    MPI_Op_free(&b);
  }
  MPI_Op_free(&nop);
  MPI_Type_free(&two);
  MPI_Type_free(&holes);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  red_case c;

  alloc_case(&c, MPI_DOUBLE_INT, MPI_MAXLOC, sizeof(dbl_int));
  run_case("double_int maxloc", &c, all_to_all, fill_dbl_int, same_dbl_int, "double_int maxloc");
  free_case(&c);
  alloc_case(&c, MPI_2INT, MPI_MINLOC, sizeof(two_int));
  run_case("2int minloc", &c, all_to_all, fill_two_int, same_bytes, "2int minloc");
  free_case(&c);
  alloc_case(&c, MPI_C_DOUBLE_COMPLEX, MPI_SUM, 2 * sizeof(double));
  run_case("complex sum", &c, all_to_all, fill_complex, same_bytes, "complex_double sum");
  free_case(&c);
  alloc_case(&c, MPI_LONG_DOUBLE, MPI_SUM, sizeof(long double));
  run_case("long double sum", &c, all_to_all, fill_ldbl, same_ldbl, "long_double sum");
  free_case(&c);

  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT64_T, &pair);
  MPI_Type_commit(&pair);
  MPI_Op op_sum_max, op_matmul;
  MPI_Op_create(sum_max, 1, &op_sum_max);
  alloc_case(&c, pair, op_sum_max, 2 * sizeof(int64_t));
  run_case("user sum_max", &c, all_to_all, fill_sum_max, same_bytes, "user-defined MPI_Op");
  free_case(&c);
  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_INT64_T, &mat);
  MPI_Type_commit(&mat);
  MPI_Op_create(matmul, 0, &op_matmul);
  alloc_case(&c, mat, op_matmul, 4 * sizeof(int64_t));
  run_case("user matmul", &c, chain, fill_matrix, same_bytes, "user-defined MPI_Op");
  free_case(&c);

  errors();
  MPI_Op_free(&op_sum_max);
  MPI_Op_free(&op_matmul);
  MPI_Type_free(&pair);
  MPI_Type_free(&mat);
  return mt_finish("mpi_reduce_types");
}

/* cdag MPI test — floating-point min and max keep the graph's bytes when rewritten (run with
 * mpiexec -n 1..8).
 *
 * Every rank sends its block of doubles and floats (NaNs with payloads and signs, signed
 * zeros, infinities, ordinary values) to every rank, then folds the received blocks with
 * cdag_reduce_local(MPI_MAX) and (MPI_MIN) in rank order: an allgather plus local
 * reductions, which cdag rewrites into an allreduce. The compiled run (detect = 1, MPI's
 * collective with cdag's own min/max ops, and cdag's kernels under CDAG_KERNEL=cdag) must
 * write the same bytes as the graph run as written (detect = 0) on every rank, and both
 * the bytes of IEEE 754-2019 minimum/maximum (a NaN gives the canonical quiet NaN; -0 < +0).
 * Before cdag defined them, MPI_MAX's order made ranks 0, 2 and 3 of 4 differ. Then an
 * exact_float sum written left to right keeps its order (exact_sum). Exit 0 on success. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { N = 8 };   /* elements per block */

static int R, P;

static double dof(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* Rank r's block: special values placed so each element meets others across ranks. */
static void fill(int r, double *d, float *f) {
  const double special[] = {dof(0x7ff8000000000001ull), -0.0, 0.0, dof(0xfff8000000000000ull), INFINITY,
                            -INFINITY, 1.5, -1.5};
  for (int i = 0; i < N; i++) {
    d[i] = special[(i + r) % N];
    if ((i * 7 + r) % 5 == 0) d[i] = (double)(r - i);
    f[i] = (float)d[i];
  }
}

typedef struct {
  double dsend[N], drecv[64][N], dmax[N], dmin[N];
  float fsend[N], frecv[64][N], fmax[N], fmin[N];
} bufs;

static int build(bufs *b, int detect, cdag_schedule **s) {
  cdag_graph *g = NULL;
  int rc = cdag_graph_create(MPI_COMM_WORLD, &g);
  for (int j = 0; j < P && !rc; j++) {
    rc = cdag_send(g, b->dsend, sizeof b->dsend, j, 1, NULL);
    if (!rc) rc = cdag_send(g, b->fsend, sizeof b->fsend, j, 2, NULL);
    if (!rc) rc = cdag_recv(g, b->drecv[j], sizeof b->drecv[j], j, 1, NULL);
    if (!rc) rc = cdag_recv(g, b->frecv[j], sizeof b->frecv[j], j, 2, NULL);
  }
  if (!rc) rc = cdag_copy_local(g, b->drecv[0], b->dmax, sizeof b->dmax, NULL);
  if (!rc) rc = cdag_copy_local(g, b->drecv[0], b->dmin, sizeof b->dmin, NULL);
  if (!rc) rc = cdag_copy_local(g, b->frecv[0], b->fmax, sizeof b->fmax, NULL);
  if (!rc) rc = cdag_copy_local(g, b->frecv[0], b->fmin, sizeof b->fmin, NULL);
  for (int j = 1; j < P && !rc; j++) {   /* x = op(x, block j), in rank order */
    rc = cdag_reduce_local(g, b->drecv[j], b->dmax, N, MPI_DOUBLE, MPI_MAX, NULL);
    if (!rc) rc = cdag_reduce_local(g, b->drecv[j], b->dmin, N, MPI_DOUBLE, MPI_MIN, NULL);
    if (!rc) rc = cdag_reduce_local(g, b->frecv[j], b->fmax, N, MPI_FLOAT, MPI_MAX, NULL);
    if (!rc) rc = cdag_reduce_local(g, b->frecv[j], b->fmin, N, MPI_FLOAT, MPI_MIN, NULL);
  }
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  if (!rc) rc = cdag_compile(g, &o, s);
  cdag_graph_free(&g);
  return rc;
}

static void run(bufs *b, cdag_schedule *s) {
  memset(b, 0x5a, sizeof *b);
  fill(R, b->dsend, b->fsend);
  MT_OK(cdag_run(s));
}

/* The expected bytes: the fold in rank order with ir_reduce_apply (the defined rules). */
static void expected(double *dmax, double *dmin, float *fmax, float *fmin) {
  double d[N];
  float f[N];
  for (int j = 0; j < P; j++) {
    fill(j, d, f);
    if (j == 0) {
      memcpy(dmax, d, sizeof d); memcpy(dmin, d, sizeof d);
      memcpy(fmax, f, sizeof f); memcpy(fmin, f, sizeof f);
      continue;
    }
    ir_reduce_apply(CDAG_DOUBLE, CDAG_MAX, d, dmax, N);
    ir_reduce_apply(CDAG_DOUBLE, CDAG_MIN, d, dmin, N);
    ir_reduce_apply(CDAG_FLOAT, CDAG_MAX, f, fmax, N);
    ir_reduce_apply(CDAG_FLOAT, CDAG_MIN, f, fmin, N);
  }
}

static void compare(const char *what, const void *got, const void *want, size_t n) {
  MT_EXPECT_MSG(memcmp(got, want, n) == 0, "%s differs", what);
}

/* exact_float: rank 0 sums x0 + x1 + ... left to right (recv + reduce_local), x = 1e16, 1,
   -1e16, 1, ...: the written order gives 1 (1e16 + 1 rounds to 1e16). The compiled result was
   0, 1 or 2 from run to run (contributions combined in buffer-address order); now the graph
   runs as written, and the report says so. Buffers are allocated anew for each of 6 runs so
   their address order changes. */
static void exact_sum(void) {
  for (int trial = 0; trial < 6; trial++) {
    double *x = malloc((size_t)P * sizeof *x), *spare = malloc((size_t)(trial * 64 + 8));
    double *acc = malloc(sizeof *acc);
    double mine = R % 2 ? 1.0 : (R % 4 == 0 ? 1e16 : -1e16);
    cdag_graph *g = NULL;
    cdag_schedule *s = NULL;
    int rc = cdag_graph_create(MPI_COMM_WORLD, &g);
    if (!rc && R != 0) rc = cdag_send(g, &mine, sizeof mine, 0, 5, NULL);
    if (!rc && R == 0) {
      rc = cdag_copy_local(g, &mine, acc, sizeof mine, NULL);
      for (int j = 1; j < P && !rc; j++) {
        rc = cdag_recv(g, &x[(j * 5 + trial) % P], sizeof *x, j, 5, NULL);   /* scattered addresses */
        if (!rc) rc = cdag_reduce_local(g, &x[(j * 5 + trial) % P], acc, 1, MPI_DOUBLE, MPI_SUM, NULL);
      }
    }
    cdag_options o;
    cdag_options_init(&o);
    o.exact_float = 1;
    if (!rc) rc = cdag_compile(g, &o, &s);
    cdag_graph_free(&g);
    if (!rc) rc = cdag_run(s);
    MT_EXPECT_MSG(rc == CDAG_OK, "exact sum: %s", cdag_error_message());
    if (!rc && R == 0) {
      double want = 0;
      for (int j = 0; j < P; j++) want += j % 2 ? 1.0 : (j % 4 == 0 ? 1e16 : -1e16);   /* left to right */
      MT_EXPECT_MSG(memcmp(acc, &want, sizeof want) == 0, "exact_float sum, trial %d: %.17g, written order gives %.17g",
                    trial, *acc, want);
      char *text = NULL;
      size_t len = 0;
      FILE *f = open_memstream(&text, &len);
      cdag_schedule_report(s, f, 0);
      fclose(f);
      if (P >= 4) MT_EXPECT_STR(text, "runs as written");   /* exact_float: the report says so */
      free(text);
    }
    cdag_schedule_free(&s);
    free(x); free(spare); free(acc);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P > 64) MPI_Abort(MPI_COMM_WORLD, 2);
  bufs *a = calloc(1, sizeof *a), *w = calloc(1, sizeof *w);
  cdag_schedule *sa = NULL, *sw = NULL;
  MT_EXPECT_MSG(build(a, 1, &sa) == CDAG_OK && build(w, 0, &sw) == CDAG_OK, "compile: %s", cdag_error_message());
  if (sa && sw) {
    run(a, sa);
    run(w, sw);
    double dmax[N], dmin[N];
    float fmax[N], fmin[N];
    expected(dmax, dmin, fmax, fmin);
    compare("double max (compiled vs as written)", a->dmax, w->dmax, sizeof dmax);
    compare("double min (compiled vs as written)", a->dmin, w->dmin, sizeof dmin);
    compare("float max (compiled vs as written)", a->fmax, w->fmax, sizeof fmax);
    compare("float min (compiled vs as written)", a->fmin, w->fmin, sizeof fmin);
    compare("double max", a->dmax, dmax, sizeof dmax);
    compare("double min", a->dmin, dmin, sizeof dmin);
    compare("float max", a->fmax, fmax, sizeof fmax);
    compare("float min", a->fmin, fmin, sizeof fmin);
    if (R == 0 && P >= 3) {   /* the rewrite happened: the report names a collective */
      char *text = NULL;
      size_t len = 0;
      FILE *f = open_memstream(&text, &len);
      cdag_schedule_report(sa, f, 0);
      fclose(f);
      MT_EXPECT_MSG(strstr(text, "allreduce") || strstr(text, "allgather"), "no collective found:\n%s", text);
      free(text);
    }
  }
  cdag_schedule_free(&sa);
  cdag_schedule_free(&sw);
  free(a);
  free(w);
  exact_sum();
  return mt_finish("mpi_float_rules");
}

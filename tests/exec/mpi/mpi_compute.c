/* cdag MPI test — a graph that computes (cdag_compute), run with mpiexec -n 2..4.
 *
 * One iteration of a small solver is one graph: a 1-D halo exchange (non-periodic), a
 * three-point stencil over the halo (a function that really computes), a local dot product
 * of its result, an allreduce of the dots written as point-to-point (every rank sends its
 * dot to every other, then a computation that reads all it received sums them in rank
 * order) and an update that scales the result into the next iteration's vector. The
 * compiled schedule runs in stages (each computation after the messages it reads); the
 * same graph compiled with detect = 0 runs as written; each is driven by cdag_run, or by
 * cdag_start and cdag_test, or cdag_start and cdag_wait, in turn.
 * After every iteration, both must hold exactly the numbers of the same iteration written
 * in plain MPI (the same arithmetic in the same order), and every function must have run
 * once per iteration; dumped, the graph analyses in stages with its 4 computations on each rank.
 * Then the arguments of cdag_compute and cdag_rank_compute are checked
 * one by one, and a rebind of the schedule is refused. The same graph built again with another
 * function for the dot product compiles to the cached schedule, which calls the new
 * function. Exit 0 on success. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { N = 16, ITERS = 5, MAXP = 64 };

typedef struct {
  double u[N + 2];      /* u[0], u[N+1]: halos */
  double v[N + 1];      /* the stencil's result, then the global sum (v[N]): one range for update */
  double dot;           /* this rank's dot product */
  double part[MAXP];    /* every rank's dot, by rank */
  int P, R;
  int calls[4];         /* stencil, dot, sum, update */
  int alt_calls;        /* dot_alt */
} solver;

static void stencil(void *arg) {
  solver *s = arg;
  for (int i = 1; i <= N; i++) s->v[i - 1] = 0.25 * s->u[i - 1] + 0.5 * s->u[i] + 0.25 * s->u[i + 1];
  s->calls[0]++;
}

static void dot(void *arg) {
  solver *s = arg;
  double d = 0;
  for (int i = 0; i < N; i++) d += s->v[i] * s->v[i];
  s->dot = d;
  s->calls[1]++;
}

static void dot_alt(void *arg) {
  dot(arg);
  ((solver *)arg)->alt_calls++;
}

static void sum(void *arg) {
  solver *s = arg;
  double t = 0;
  for (int r = 0; r < s->P; r++) t += s->part[r];
  s->v[N] = t;
  s->calls[2]++;
}

static void update(void *arg) {
  solver *s = arg;
  double scale = 1.0 / sqrt(s->v[N]);
  for (int i = 0; i < N; i++) s->u[i + 1] = s->v[i] * scale + 1.0;
  s->calls[3]++;
}

static void init(solver *s, int P, int R) {
  memset(s, 0, sizeof *s);
  s->P = P;
  s->R = R;
  for (int i = 0; i < N + 2; i++) s->u[i] = (i == 0 || i == N + 1) ? 0.0 : 1.0 + R * N + i;
}

/* The iteration as a graph on s's buffers (dot_fn: the dot product's function). */
static void build(cdag_graph *g, solver *s, int left, int right, cdag_compute_fn dot_fn) {
  int P = s->P, R = s->R;
  MT_OK(cdag_send(g, &s->u[1], sizeof(double), left, 0, NULL));
  MT_OK(cdag_send(g, &s->u[N], sizeof(double), right, 1, NULL));
  MT_OK(cdag_recv(g, &s->u[0], sizeof(double), left, 1, NULL));
  MT_OK(cdag_recv(g, &s->u[N + 1], sizeof(double), right, 0, NULL));
  cdag_op op = -1;
  MT_OK(cdag_compute(g, s->u, sizeof s->u, s->v, N * sizeof(double), 2000, stencil, s, &op));
  MT_OK(cdag_label(g, op, "stencil"));
  MT_OK(cdag_compute(g, s->v, N * sizeof(double), &s->dot, sizeof s->dot, 500, dot_fn, s, NULL));
  for (int r = 0; r < P; r++)
    if (r != R) MT_OK(cdag_send(g, &s->dot, sizeof s->dot, r, 2, NULL));
  for (int r = 0; r < P; r++)
    if (r != R) MT_OK(cdag_recv(g, &s->part[r], sizeof(double), r, 2, NULL));
  MT_OK(cdag_copy_local(g, &s->dot, &s->part[R], sizeof s->dot, NULL));
  MT_OK(cdag_compute(g, NULL, CDAG_READS_ALL, &s->v[N], sizeof(double), 100, sum, s, NULL));
  MT_OK(cdag_compute(g, s->v, sizeof s->v, &s->u[1], N * sizeof(double), 1000, update, s, NULL));
}

/* The same iteration in plain MPI, on s (calls not counted). */
static void reference(solver *s, int left, int right, MPI_Comm comm) {
  MPI_Sendrecv(&s->u[1], 1, MPI_DOUBLE, left, 0, &s->u[N + 1], 1, MPI_DOUBLE, right, 0, comm, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&s->u[N], 1, MPI_DOUBLE, right, 1, &s->u[0], 1, MPI_DOUBLE, left, 1, comm, MPI_STATUS_IGNORE);
  stencil(s);
  dot(s);
  MPI_Allgather(&s->dot, 1, MPI_DOUBLE, s->part, 1, MPI_DOUBLE, comm);
  sum(s);
  update(s);
}

static void same(const solver *got, const solver *want, const char *how, int iter) {
  MT_EXPECT_MSG(!memcmp(got->u, want->u, sizeof got->u), "%s: iteration %d: u differs from plain MPI", how, iter);
  MT_EXPECT_MSG(got->v[N] == want->v[N], "%s: iteration %d: sum %.17g, plain MPI %.17g", how, iter, got->v[N],
                want->v[N]);
  for (int k = 0; k < 4; k++)
    MT_EXPECT_MSG(got->calls[k] == iter, "%s: computation %d ran %d times after %d iterations", how, k, got->calls[k],
                  iter);
}

/* The compiled schedule (cdag_run) and the one as written (cdag_start, then cdag_test until
   done), each iteration against plain MPI. */
static void run_iterations(MPI_Comm cart, int P, int R, int left, int right) {
  static solver a, b, ref;
  init(&a, P, R);
  init(&b, P, R);
  init(&ref, P, R);
  cdag_graph *ga = NULL, *gb = NULL;
  cdag_schedule *sa = NULL, *sb = NULL;
  cdag_options o;
  MT_OK(cdag_graph_create(cart, &ga));
  MT_OK(cdag_graph_create(cart, &gb));
  build(ga, &a, left, right, dot);
  build(gb, &b, left, right, dot);
  cdag_options_init(&o);
  MT_OK(cdag_compile(ga, &o, &sa));
  o.detect = 0;
  MT_OK(cdag_compile(gb, &o, &sb));
  MT_REQUIRE(sa && sb);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  MT_OK(cdag_schedule_report(sa, f, 0));
  fclose(f);
  MT_EXPECT_STR(text, "stages: ");   /* a plan in stages, not one phase */
  free(text);
  /* dumped, the graph's computations are compute lines a global graph analyses alike */
  char path[64];
  snprintf(path, sizeof path, "mpi_compute_np%d.cdag", P);
  MT_OK(cdag_graph_dump(ga, path));
  if (R == 0) {
    cdag_graph *gl = NULL;
    cdag_plan *pl = NULL;
    MT_OK(cdag_graph_load(path, &gl));
    MT_OK(cdag_analyze(gl, NULL, &pl));
    f = open_memstream(&text, &len);
    MT_OK(cdag_plan_report(pl, f, 0));
    fclose(f);
    char want[64];
    snprintf(want, sizeof want, "between them %d computations", 4 * P);
    MT_EXPECT_STR(text, want);
    free(text);
    cdag_plan_free(&pl);
    cdag_graph_free(&gl);
    remove(path);
  }
  for (int it = 1; it <= ITERS; it++) {
    reference(&ref, left, right, cart);
    int done = 0;
    if (it % 2) {   /* compiled: cdag_run, then cdag_start and cdag_test; as written the other way */
      MT_OK(cdag_run(sa));
      MT_OK(cdag_start(sb));
      while (!done) MT_OK(cdag_test(sb, &done));
    } else {
      MT_OK(cdag_start(sa));
      while (!done) MT_OK(cdag_test(sa, &done));
      MT_OK(cdag_wait(sa));   /* after cdag_test finished the run: returns at once */
      MT_OK(cdag_start(sb));
      MT_OK(cdag_wait(sb));
    }
    same(&a, &ref, "compiled", it);
    same(&b, &ref, "as written", it);
  }
  /* the same graph again, another function: the cached schedule calls it */
  int64_t compiles0, hits0, compiles1, hits1;
  exec_compile_stats(&compiles0, &hits0);
  cdag_graph *gc = NULL;
  cdag_schedule *sc = NULL;
  MT_OK(cdag_graph_create(cart, &gc));
  build(gc, &a, left, right, dot_alt);
  o.detect = 1;
  MT_OK(cdag_compile(gc, &o, &sc));
  exec_compile_stats(&compiles1, &hits1);
  MT_EXPECT_INT(hits1 - hits0, ==, 1);
  MT_EXPECT_INT(compiles1, ==, compiles0);
  reference(&ref, left, right, cart);
  MT_OK(cdag_run(sc));
  same(&a, &ref, "cached", ITERS + 1);
  MT_EXPECT_INT(a.alt_calls, ==, 1);
  MT_OK(cdag_schedule_free(&sc));
  MT_OK(cdag_graph_free(&gc));
  cdag_schedule *copy = NULL;
  cdag_rebind mv = {a.u, b.u, sizeof a.u};
  MT_EXPECT_RC(cdag_schedule_rebind(sa, 1, &mv, &copy), CDAG_ERR_UNSUPPORTED);
  MT_EXPECT_STR(cdag_error_message(), "computes");
  MT_OK(cdag_schedule_free(&sa));
  MT_OK(cdag_schedule_free(&sb));
  MT_OK(cdag_graph_free(&ga));
  MT_OK(cdag_graph_free(&gb));
}

static void noop(void *arg) { (void)arg; }

/* Every argument of cdag_compute and cdag_rank_compute, each wrong once. */
static void bad_arguments(int R) {
  double x[4] = {0};
  cdag_graph *g = NULL, *gl = NULL;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  MT_EXPECT_RC(cdag_compute(NULL, x, 8, x + 1, 8, 0, noop, NULL, NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_compute(g, x, 8, x + 1, 8, 0, NULL, NULL, NULL), CDAG_ERR_ARG);
  MT_EXPECT_STR(cdag_error_message(), "fn is NULL");
  MT_EXPECT_RC(cdag_compute(g, NULL, 8, x + 1, 8, 0, noop, NULL, NULL), CDAG_ERR_ARG);
  MT_EXPECT_STR(cdag_error_message(), "reads 8 bytes from NULL");
  MT_EXPECT_RC(cdag_compute(g, x, CDAG_READS_ALL, x + 1, 8, 0, noop, NULL, NULL), CDAG_ERR_ARG);
  MT_EXPECT_STR(cdag_error_message(), "pass NULL");
  MT_EXPECT_RC(cdag_compute(g, x, 8, NULL, 8, 0, noop, NULL, NULL), CDAG_ERR_ARG);
  MT_EXPECT_STR(cdag_error_message(), "writes 8 bytes to NULL");
  MT_EXPECT_RC(cdag_compute(g, x, 0, x + 1, 0, 0, noop, NULL, NULL), CDAG_ERR_ARG);
  MT_EXPECT_STR(cdag_error_message(), "reads and writes nothing");
  char want[32];
  snprintf(want, sizeof want, "rank %d: cdag_compute", R);
  MT_EXPECT_STR(cdag_error_message(), want);
  MT_EXPECT_RC(cdag_rank_compute(g, 0, 0, 8, 16, 8, 0, NULL), CDAG_ERR_ARG);   /* a distributed graph */
  cdag_op op = -1;
  MT_OK(cdag_compute(g, x, 8, x + 1, 8, 0, noop, NULL, &op));
  MT_EXPECT_INT(op, ==, 0);
  MT_OK(cdag_graph_create_global(2, &gl));
  MT_EXPECT_RC(cdag_compute(gl, x, 8, x + 1, 8, 0, noop, NULL, NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_rank_compute(gl, 2, 0, 8, 16, 8, 0, NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_rank_compute(gl, 0, 8, CDAG_READS_ALL, 16, 8, 0, NULL), CDAG_ERR_ARG);
  MT_EXPECT_STR(cdag_error_message(), "rank 0: cdag_rank_compute reads all");
  MT_EXPECT_RC(cdag_rank_compute(gl, 1, 8, 0, 16, 0, 0, NULL), CDAG_ERR_ARG);
  MT_EXPECT_STR(cdag_error_message(), "rank 1: cdag_rank_compute reads and writes nothing");
  MT_OK(cdag_rank_compute(gl, 0, 0, CDAG_READS_ALL, 16, 8, 7, &op));
  MT_OK(cdag_rank_compute(gl, 1, 0, 8, 16, 8, 7, &op));
  MT_EXPECT_INT(op, ==, 1);
  MT_OK(cdag_graph_free(&gl));
  MT_OK(cdag_graph_free(&g));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P, R, dims[1] = {0}, periods[1] = {0}, left, right;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MT_REQUIRE(P <= MAXP);
  MPI_Dims_create(P, 1, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  MPI_Comm_rank(cart, &R);
  MPI_Cart_shift(cart, 0, 1, &left, &right);
  run_iterations(cart, P, R, left, right);
  bad_arguments(R);
  MPI_Comm_free(&cart);
  return mt_finish("mpi_compute");
}

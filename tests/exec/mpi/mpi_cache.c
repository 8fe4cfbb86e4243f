/* cdag MPI test — a cache hit returns a handle of its own (run with mpiexec -n 1..8):
 * the same graph compiled twice gives two different handles (one compilation, one hit)
 * sharing one compiled core: each has its own run state (starting one leaves the other
 * idle: cdag_wait on it is CDAG_ERR_STATE), both run right, either may be freed first and
 * the other still runs, the cache still hits after both are gone, and a hit handle can be
 * rebound. With detect = 1 (plan) and 0 (the graph as written). A zeroed cdag_options and
 * an older program's smaller one (struct_size) compile with the defaults. A handle the
 * program freed is kept and returned by the next hit (spares): in a rebuild loop every hit
 * after the first reuses it; ranks that freed two handles in different orders build a new
 * one instead (never run each other's requests) and reuse from then on; a reused handle
 * calls the computations of the graph it was compiled from now, not the old graph's; a graph
 * that differs on one rank only misses on every rank; graphs whose communicator the program
 * freed still compile (they share cdag's duplicate of it); an evicted schedule drops its
 * spare; the options cdag_compile remembers follow a changed field or variable; a
 * schedule in flight while another graph compiles is not disturbed by its agreement; a graph
 * that reuses the arrays of one freed before means what it would with fresh ones; a typed
 * exchange (cdag's packing buffers, new at each rebuild) rebuilt hits; after a graph that
 * differed on one rank, the ranks agree again on the next one compiled alike (evicted_drops_
 * spare's first two compiles, the second a hit, after it). Run it under valgrind or
 * ASan to see that no freed core is touched. Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

static int R, P;

enum { N = 4 };  /* int32 per block */
static int32_t src[64 * N], dst[64 * N], src2[64 * N], dst2[64 * N];

/* An alltoall from src to dst, compiled with options o. */
static cdag_schedule *compile_with(const cdag_options *o) {
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
  for (int i = 0; i < P; i++) {
    MT_EXPECT(cdag_send(g, src + N * i, N * sizeof *src, i, 0, NULL) == CDAG_OK);
    MT_EXPECT(cdag_recv(g, dst + N * i, N * sizeof *dst, i, 0, NULL) == CDAG_OK);
  }
  int rc = cdag_compile(g, o, &s);
  if (rc) fprintf(stderr, "rank %d: %s\n", R, cdag_error_message());
  MT_EXPECT(rc == CDAG_OK);
  cdag_graph_free(&g);
  return s;
}

static cdag_schedule *compile(int detect) {
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  return compile_with(&o);
}

/* Runs s (start/wait when nonblocking) and checks the alltoall on (s_buf, d_buf). */
static void run_check(cdag_schedule *s, int32_t *s_buf, int32_t *d_buf, int it, int nonblocking) {
  for (int i = 0; i < P * N; i++) {
    s_buf[i] = it * 100000 + R * 1000 + i;
    d_buf[i] = -1;
  }
  if (!s) return;
  if (nonblocking) {
    MT_EXPECT(cdag_start(s) == CDAG_OK);
    MT_EXPECT(cdag_wait(s) == CDAG_OK);
  } else {
    MT_EXPECT(cdag_run(s) == CDAG_OK);
  }
  for (int i = 0; i < P; i++)
    for (int k = 0; k < N; k++) MT_EXPECT(d_buf[N * i + k] == it * 100000 + i * 1000 + R * N + k);
}

static void counts(int64_t *c, int64_t *h) { exec_compile_stats(c, h); }

static void handles(int detect) {
  int64_t c0, h0, c, h;
  counts(&c0, &h0);
  cdag_schedule *a = compile(detect), *b = compile(detect);
  counts(&c, &h);
  MT_EXPECT(c - c0 == 1 && h - h0 == 1);   /* the second was a cache hit ... */
  MT_EXPECT(a && b && a != b);             /* ... with a handle of its own */
  if (!a || !b) return;
  MT_EXPECT(a->core == b->core);           /* sharing the compiled core */
  run_check(a, src, dst, 1, 0);
  run_check(b, src, dst, 2, 1);
  /* run state is per handle: a started a leaves b idle */
  MT_EXPECT(cdag_start(a) == CDAG_OK);
  MT_EXPECT(cdag_wait(b) == CDAG_ERR_STATE);
  int done = 0;
  MT_EXPECT(cdag_test(b, &done) == CDAG_OK && done);   /* b is not running: nothing to wait for */
  MT_EXPECT(cdag_wait(a) == CDAG_OK);
  MT_EXPECT(cdag_start(b) == CDAG_OK);   /* and the other way round */
  MT_EXPECT(cdag_wait(a) == CDAG_ERR_STATE);
  MT_EXPECT(cdag_wait(b) == CDAG_OK);
  /* free the first, the second still runs; then the cache still hits */
  MT_EXPECT(cdag_schedule_free(&a) == CDAG_OK && a == NULL);
  run_check(b, src, dst, 3, 0);
  FILE *null = fopen("/dev/null", "w");
  MT_EXPECT(null && cdag_schedule_report(b, null, 0) == CDAG_OK);   /* the report lives in the core */
  if (null) fclose(null);
  cdag_schedule *cc = compile(detect);
  counts(&c, &h);
  MT_EXPECT(c - c0 == 1 && h - h0 == 2);
  MT_EXPECT(cc && cc != b);
  run_check(cc, src, dst, 4, 1);
  /* the other order: the later handle freed first */
  MT_EXPECT(cdag_schedule_free(&cc) == CDAG_OK);
  run_check(b, src, dst, 5, 1);
  /* a hit handle rebound to other buffers: a schedule of its own */
  cdag_schedule *r = NULL;
  cdag_rebind moves[2] = {{src, src2, sizeof src}, {dst, dst2, sizeof dst}};
  MT_EXPECT(cdag_schedule_rebind(b, 2, moves, &r) == CDAG_OK);
  MT_EXPECT(cdag_schedule_free(&b) == CDAG_OK);
  run_check(r, src2, dst2, 6, 0);
  MT_EXPECT(cdag_schedule_free(&r) == CDAG_OK);
  /* every handle gone: the cache still holds the core */
  cdag_schedule *d = compile(detect);
  counts(&c, &h);
  MT_EXPECT(c - c0 == 1 && h - h0 == 3);
  run_check(d, src, dst, 7, 0);
  MT_EXPECT(cdag_schedule_free(&d) == CDAG_OK);
}

/* A zeroed struct means the defaults, and so does an older program's smaller struct (the
   fields beyond its struct_size are never read): both find the defaults' schedule. */
static void zeroed_and_older_options(void) {
  int64_t c0, h0, c, h;
  counts(&c0, &h0);
  cdag_options z;
  memset(&z, 0, sizeof z);
  cdag_schedule *s = compile_with(&z);
  run_check(s, src, dst, 9, 0);
  cdag_schedule_free(&s);
  cdag_options old;
  cdag_options_init(&old);
  old.struct_size = offsetof(cdag_options, kernel);
  old.kernel = (cdag_kernel_policy)99;   /* past the old size: garbage an old program never wrote */
  old.blocks = -7;
  s = compile_with(&old);
  run_check(s, src, dst, 10, 0);
  cdag_schedule_free(&s);
  counts(&c, &h);
  MT_EXPECT(c - c0 == 0 && h - h0 == 2);
}

/* Spares reused since the last call (< 0: only start counting). */
static void expect_spares(int64_t n, int line) {
  static int64_t s0;
  int64_t s = exec_spare_stats();
  if (n >= 0 && s - s0 != n) mt_fail_int(__FILE__, line, "handles reused since the last count", s - s0, n);
  s0 = s;
}

/* A rebuild loop: the first hit may build a handle, every later one reuses the freed one. */
static void spares_in_a_loop(int detect) {
  cdag_schedule *s = compile(detect);
  run_check(s, src, dst, 20, 0);
  cdag_schedule_free(&s);
  expect_spares(-1, __LINE__);
  for (int it = 0; it < 4; it++) {
    s = compile(detect);
    run_check(s, src, dst, 21 + it, it % 2);
    cdag_schedule_free(&s);
  }
  expect_spares(4, __LINE__);
}

/* Two handles freed in different orders on different ranks: each rank keeps another one, so
   the next hit builds a new handle (on every rank alike); freed, it is the spare of all. */
static void spares_that_differ(void) {
  cdag_schedule *a = compile(1), *b = compile(1);
  expect_spares(-1, __LINE__);
  if (R % 2) {
    cdag_schedule_free(&b);
    cdag_schedule_free(&a);
  } else {
    cdag_schedule_free(&a);
    cdag_schedule_free(&b);
  }
  cdag_schedule *s = compile(1);
  run_check(s, src, dst, 30, 0);
  cdag_schedule_free(&s);
  expect_spares(P > 1 ? 0 : 1, __LINE__);
  s = compile(1);
  run_check(s, src, dst, 31, 0);
  cdag_schedule_free(&s);
  expect_spares(1, __LINE__);
}

typedef struct { int32_t *out; int base; } fill_arg;

static void fill(void *arg) {
  const fill_arg *a = arg;
  for (int k = 0; k < N; k++) a->out[k] = a->base + k;
}

/* The same graph built with another argument to its computation: the reused handle calls the
   new graph's, and the neighbour receives what it wrote. */
static void spares_call_the_new_computation(void) {
  static int32_t out[N], in[N];
  fill_arg args[2] = {{out, 100 + R}, {out, 200 + R}};
  expect_spares(-1, __LINE__);
  for (int it = 0; it < 3; it++) {
    cdag_graph *g = NULL;
    cdag_schedule *s = NULL;
    MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
    MT_EXPECT(cdag_compute(g, NULL, 0, out, sizeof out, 0, fill, &args[it % 2], NULL) == CDAG_OK);
    MT_EXPECT(cdag_send(g, out, sizeof out, (R + 1) % P, 5, NULL) == CDAG_OK);
    MT_EXPECT(cdag_recv(g, in, sizeof in, (R + P - 1) % P, 5, NULL) == CDAG_OK);
    MT_EXPECT(cdag_compile(g, NULL, &s) == CDAG_OK);
    cdag_graph_free(&g);
    memset(in, 0, sizeof in);
    MT_EXPECT(s && cdag_run(s) == CDAG_OK);
    int from = (R + P - 1) % P, base = (it % 2 ? 200 : 100) + from;
    for (int k = 0; k < N; k++) MT_EXPECT_INT(in[k], ==, base + k);
    cdag_schedule_free(&s);
  }
  expect_spares(2, __LINE__);
}

/* A new graph reuses the op arrays of the one freed before it on its communicator: a graph
   of copies leaves stale second addresses that a graph of messages then carries, and a
   graph of more ops grows them; neither changes what the graph means (the messages' graph
   still hits the schedule compiled from fresh arrays) nor its result. */
static void reused_arrays_change_nothing(void) {
  int64_t c0, h0, c, h;
  cdag_schedule *s = compile(1);   /* the alltoall, fresh or not: compiled once here */
  cdag_schedule_free(&s);
  static int32_t a[64 * N], b[64 * N];
  cdag_graph *g = NULL;
  MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
  for (int i = 0; i < 2 * P + 3; i++)
    MT_EXPECT(cdag_copy_local(g, a + (i % 64) * N, b + (i % 64) * N, N * sizeof *a, NULL) == CDAG_OK);
  cdag_graph_free(&g);   /* its arrays, second addresses set, wait for the next graph */
  counts(&c0, &h0);
  s = compile(1);
  counts(&c, &h);
  MT_EXPECT_INT(c - c0, ==, 0);
  MT_EXPECT_INT(h - h0, ==, 1);
  run_check(s, src, dst, 50, 0);
  cdag_schedule_free(&s);
  MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);   /* more ops than they hold */
  for (int i = 0; i < 5000; i++) MT_EXPECT(cdag_copy_local(g, a, b, sizeof *a, NULL) == CDAG_OK);
  for (int i = 0; i < P; i++) {
    MT_EXPECT(cdag_send(g, src + N * i, N * sizeof *src, i, 9, NULL) == CDAG_OK);
    MT_EXPECT(cdag_recv(g, dst + N * i, N * sizeof *dst, i, 9, NULL) == CDAG_OK);
  }
  MT_EXPECT(cdag_compile(g, NULL, &s) == CDAG_OK);
  cdag_graph_free(&g);
  run_check(s, src, dst, 51, 0);
  cdag_schedule_free(&s);
}

/* A ring exchange of a column (an MPI_Type_vector: packed through cdag's own buffers, new at
   each rebuild) rebuilt `iters` times: the rebuilds after the first are cache hits, and each
   moves that iteration's values, planned (detect 1) and as written through the first graph's
   buffers (detect 0); another column is another graph. */
static void typed_rebuilt_hits(int detect) {
  enum { ROWS = 8, COLS = 5 };
  static double u[ROWS][COLS], v[ROWS][COLS];
  MPI_Datatype col;
  MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  int to = (R + 1) % P, from = (R + P - 1) % P;
  int64_t c0, h0, c, h;
  counts(&c0, &h0);
  for (int it = 0; it < 4; it++) {
    int j = it < 3 ? 1 : 2;   /* the last graph sends another column */
    for (int i = 0; i < ROWS; i++)
      for (int k = 0; k < COLS; k++) u[i][k] = 1000 * R + 10 * i + k + 0.5 * it, v[i][k] = -1;
    cdag_graph *g = NULL;
    cdag_schedule *s = NULL;
    MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
    MT_EXPECT(cdag_send_type(g, &u[0][j], 1, col, to, 3, NULL) == CDAG_OK);
    MT_EXPECT(cdag_recv_type(g, &v[0][j], 1, col, from, 3, NULL) == CDAG_OK);
    MT_EXPECT(cdag_compile(g, &o, &s) == CDAG_OK);
    cdag_graph_free(&g);
    MT_EXPECT(cdag_run(s) == CDAG_OK);
    for (int i = 0; i < ROWS; i++)
      for (int k = 0; k < COLS; k++)
        MT_EXPECT(v[i][k] == (k == j ? 1000 * from + 10 * i + k + 0.5 * it : -1));
    cdag_schedule_free(&s);
  }
  counts(&c, &h);
  MT_EXPECT_INT(c - c0, ==, 2);   /* the first column's graph once, the second's once */
  MT_EXPECT_INT(h - h0, ==, 2);
  MPI_Type_free(&col);
}

/* One rank's graph differs (another receive buffer): no rank takes the cached schedule. */
static void one_rank_differs(void) {
  int64_t c0, h0, c, h;
  cdag_schedule *s = compile(1);
  cdag_schedule_free(&s);
  counts(&c0, &h0);
  cdag_graph *g = NULL;
  int32_t *d = R == P - 1 ? dst2 : dst;
  MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
  for (int i = 0; i < P; i++) {
    MT_EXPECT(cdag_send(g, src + N * i, N * sizeof *src, i, 0, NULL) == CDAG_OK);
    MT_EXPECT(cdag_recv(g, d + N * i, N * sizeof *d, i, 0, NULL) == CDAG_OK);
  }
  MT_EXPECT(cdag_compile(g, NULL, &s) == CDAG_OK);
  cdag_graph_free(&g);
  counts(&c, &h);
  MT_EXPECT_INT(c - c0, ==, 1);
  MT_EXPECT_INT(h - h0, ==, 0);
  run_check(s, src, d, 40, 0);
  cdag_schedule_free(&s);
}

/* Graphs outlive the communicator they were created on, and two graphs of one communicator
   compile one after the other, each its own schedule. */
static void graphs_outlive_their_communicator(void) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  cdag_graph *g[2] = {NULL, NULL};
  int32_t *d[2] = {dst, dst2};
  for (int k = 0; k < 2; k++) {
    MT_EXPECT(cdag_graph_create(c, &g[k]) == CDAG_OK);
    for (int i = 0; i < P; i++) {
      MT_EXPECT(cdag_send(g[k], src + N * i, N * sizeof *src, i, 0, NULL) == CDAG_OK);
      MT_EXPECT(cdag_recv(g[k], d[k] + N * i, N * sizeof *dst, i, 0, NULL) == CDAG_OK);
    }
  }
  MPI_Comm_free(&c);
  for (int k = 0; k < 2; k++) {
    cdag_schedule *s = NULL;
    MT_EXPECT(cdag_compile(g[k], NULL, &s) == CDAG_OK);
    cdag_graph_free(&g[k]);
    run_check(s, src, d[k], 50 + k, 0);
    cdag_schedule_free(&s);
  }
}

/* A schedule evicted from the cache (eight newer ones) drops its spare at once; the handle the
   program holds keeps the core and still runs. */
static void evicted_drops_spare(void) {
  cdag_schedule *a = compile(1), *b = compile(1);
  cdag_schedule_free(&b);
  MT_EXPECT(a && a->core->spare != NULL);
  cdag_options o;
  cdag_options_init(&o);
  for (int k = 0; k < 8; k++) {
    o.min_group = 5 + k;
    cdag_schedule *t = compile_with(&o);
    cdag_schedule_free(&t);
  }
  MT_EXPECT(a && a->core->spare == NULL);
  run_check(a, src, dst, 60, 0);
  cdag_schedule_free(&a);
}

/* Does s's report say the graph runs as written because detect = 0? */
static int runs_as_written(cdag_schedule *s) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  MT_EXPECT(f && s && cdag_schedule_report(s, f, 0) == CDAG_OK);
  if (f) fclose(f);
  int yes = text && strstr(text, "detect = 0") != NULL;
  free(text);
  return yes;
}

/* cdag_compile remembers the options it derived last (from the program's options and the
   CDAG_* variables): a change of either, at the same address or in the environment, is
   seen by the next compile, and a bad variable is refused even right after a good compile. */
static void remembered_options_follow_changes(void) {
  cdag_options o;
  cdag_options_init(&o);
  cdag_schedule *s = compile_with(&o);
  MT_EXPECT(!runs_as_written(s));
  cdag_schedule_free(&s);
  o.detect = 0;   /* the same struct, one field changed */
  s = compile_with(&o);
  MT_EXPECT(runs_as_written(s));
  run_check(s, src, dst, 11, 0);
  cdag_schedule_free(&s);
  o.detect = 1;
  setenv("CDAG_DETECT", "0", 1);   /* a default field: the variable sets it */
  s = compile_with(&o);
  MT_EXPECT(runs_as_written(s));
  cdag_schedule_free(&s);
  setenv("CDAG_DETECT", "2", 1);
  cdag_graph *g = NULL;
  MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
  MT_EXPECT(cdag_compile(g, &o, &s) == CDAG_ERR_ARG && !s);
  MT_EXPECT(strstr(cdag_error_message(), "CDAG_DETECT=2") != NULL);
  cdag_graph_free(&g);
  unsetenv("CDAG_DETECT");
  s = compile_with(&o);
  MT_EXPECT(!runs_as_written(s));
  run_check(s, src, dst, 12, 0);
  cdag_schedule_free(&s);
}

/* cdag_compile agrees over point-to-point messages on the communicator the schedules use:
   a graph as written (its messages tagged from 0 on every pair) still in flight while the
   same graph compiles again gets its own bytes, and the compile its own agreement. */
static void compile_while_running(void) {
  for (int round = 0; round < 2; round++) {
    cdag_schedule *a = compile(0), *b = NULL;
    run_check(a, src, dst, 13, 0);
    for (int i = 0; i < P * N; i++) src[i] = 14 * 100000 + R * 1000 + i, dst[i] = -1;
    MT_EXPECT(cdag_start(a) == CDAG_OK);
    b = round ? compile(1) : compile(0);   /* a miss, then a hit */
    MT_EXPECT(cdag_wait(a) == CDAG_OK);
    for (int i = 0; i < P; i++)
      for (int k = 0; k < N; k++) MT_EXPECT(dst[N * i + k] == 14 * 100000 + i * 1000 + R * N + k);
    run_check(b, src, dst, 15, 0);
    cdag_schedule_free(&a);
    cdag_schedule_free(&b);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P > 64) MPI_Abort(MPI_COMM_WORLD, 2);
  handles(1);
  handles(0);
  zeroed_and_older_options();
  remembered_options_follow_changes();
  compile_while_running();
  reused_arrays_change_nothing();
  spares_in_a_loop(1);
  spares_in_a_loop(0);
  spares_that_differ();
  spares_call_the_new_computation();
  one_rank_differs();
  typed_rebuilt_hits(1);   /* after a graph that differed on one rank: the next ones agree */
  typed_rebuilt_hits(0);
  graphs_outlive_their_communicator();
  evicted_drops_spare();
  cdag_schedule *kept = compile(1);   /* a handle still held at MPI_Finalize (the cache is cleared there) */
  run_check(kept, src, dst, 8, 0);
  cdag_schedule_free(&kept);
  return mt_finish("mpi_cache");
}

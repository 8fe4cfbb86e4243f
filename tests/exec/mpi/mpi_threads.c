/* cdag MPI test — different graphs compiled and run from several threads at once under
 * MPI_THREAD_MULTIPLE (run with mpiexec -n 1..4).
 *
 * Each of T threads owns a duplicate of MPI_COMM_WORLD (MPI forbids two threads in
 * collectives on one communicator) and, 20 times (scaled by CDAG_TEST_SCALE), builds a graph on it (an alltoall of its
 * own buffers, then an allgather folded with a local max), compiles it (the first time for
 * real, then from the shared cache), runs it and checks every byte; another thread
 * analyses global graphs meanwhile. With the argument "funneled" the program asks for
 * MPI_THREAD_FUNNELED instead: a thread that is not the main one calling cdag_graph_create,
 * cdag_compile or cdag_run gets CDAG_ERR_STATE (MPI forbids its MPI calls), and the main
 * thread still compiles and runs.
 *
 * Then the overlaps a program must not make, each forced deterministically, end in cdag's
 * CDAG_ERR_STATE with its message, not in MPI's: a second thread's cdag_start/cdag_run on a
 * schedule another thread started; a second thread's call (cdag_test, cdag_start,
 * cdag_schedule_free: nothing freed) while another is inside cdag_run (the run held open by
 * rank P-1, np >= 2); a second handle of one cached core started
 * while the first runs; a second thread's cdag_compile of a graph whose compile is under
 * way (held open in the analysis by a test hook until every rank's second thread tried).
 * Exit 0 on success. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { T = 3, N = 16 };

/* Iterations per thread: 20, scaled by CDAG_TEST_SCALE (at least 4): 3 processes of 4 threads
   on CI's 2 cores spend seconds per iteration's collectives. */
static int iters = 20;

static int R, P;

typedef struct {
  int id;
  MPI_Comm comm;
} worker;

/* One iteration on w's communicator: alltoall src -> dst, then x = max over all ranks' v. */
static void iteration(worker *w, int it, int32_t *src, int32_t *dst, int32_t *v, int32_t *all, int32_t *x) {
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  int rc = cdag_graph_create(w->comm, &g);
  for (int j = 0; j < P && !rc; j++) {
    rc = cdag_send(g, src + N * j, N * sizeof *src, j, 0, NULL);
    if (!rc) rc = cdag_recv(g, dst + N * j, N * sizeof *dst, j, 0, NULL);
    if (!rc) rc = cdag_send(g, v, N * sizeof *v, j, 1, NULL);
    if (!rc) rc = cdag_recv(g, all + N * j, N * sizeof *all, j, 1, NULL);
  }
  if (!rc) rc = cdag_copy_local(g, all, x, N * sizeof *x, NULL);
  for (int j = 1; j < P && !rc; j++) rc = cdag_reduce_local(g, all + N * j, x, N, MPI_INT32_T, MPI_MAX, NULL);
  if (!rc) rc = cdag_compile(g, NULL, &s);
  cdag_graph_free(&g);
  if (rc) {
    MT_FAIL("thread %d iteration %d: compile", w->id, it);
    return;
  }
  for (int i = 0; i < P * N; i++) src[i] = ((w->id * 100 + it) * 100 + R) * 1000 + i;
  for (int i = 0; i < N; i++) v[i] = (R * 7 + i * 3 + it + w->id) % (P + 5);
  if (cdag_run(s)) MT_FAIL("thread %d iteration %d: run", w->id, it);
  for (int j = 0; j < P; j++)
    for (int k = 0; k < N; k++)
      if (dst[N * j + k] != ((w->id * 100 + it) * 100 + j) * 1000 + R * N + k) {
        MT_FAIL("thread %d iteration %d: alltoall bytes", w->id, it);
        j = P;
        break;
      }
  for (int i = 0; i < N; i++) {
    int32_t m = 0;
    for (int j = 0; j < P; j++) {
      int32_t e = (j * 7 + i * 3 + it + w->id) % (P + 5);
      m = e > m ? e : m;
    }
    if (x[i] != m) {
      MT_FAIL("thread %d iteration %d: max bytes", w->id, it);
      break;
    }
  }
  cdag_schedule_free(&s);
}

static void *work(void *arg) {
  worker *w = arg;
  int32_t *src = calloc((size_t)P * N, sizeof *src), *dst = calloc((size_t)P * N, sizeof *dst);
  int32_t *v = calloc(N, sizeof *v), *all = calloc((size_t)P * N, sizeof *all), *x = calloc(N, sizeof *x);
  for (int it = 0; it < iters; it++) iteration(w, it, src, dst, v, all, x);
  free(src); free(dst); free(v); free(all); free(x);
  return NULL;
}

/* Analysis of global graphs beside the compiles (no MPI). */
static void *analyse(void *arg) {
  worker *w = arg;
  for (int it = 0; it < iters; it++) {
    cdag_graph *g = NULL;
    cdag_plan *p = NULL;
    int rc = cdag_graph_create_global(6, &g);
    for (int r = 1; r < 6 && !rc; r++) {
      rc = cdag_rank_send(g, 0, 0, 64, r, 0, NULL);
      if (!rc) rc = cdag_rank_recv(g, r, 0, 64, 0, 0, NULL);
    }
    if (!rc) rc = cdag_analyze(g, NULL, &p);
    if (rc || p->ncolls != 1) MT_FAIL("thread %d iteration %d: analyze", w->id, it);
    cdag_plan_free(&p);
    cdag_graph_free(&g);
  }
  return NULL;
}

/* Under FUNNELED: every MPI-calling entry point refuses a thread that is not the main one. */
typedef struct {
  cdag_schedule *s;
} funneled_arg;

static void *not_main(void *arg) {
  funneled_arg *a = arg;
  cdag_graph *g = NULL;
  int rc1 = cdag_graph_create(MPI_COMM_WORLD, &g);
  int rc2 = cdag_run(a->s);
  MT_EXPECT_RC(rc1, CDAG_ERR_STATE);
  MT_EXPECT_RC(rc2, CDAG_ERR_STATE);
  MT_EXPECT(g == NULL);
  MT_EXPECT_STR(cdag_error_message(), "MPI_THREAD_FUNNELED");
  return NULL;
}

static void funneled(void) {
  worker w = {0, MPI_COMM_WORLD};
  int32_t *src = calloc((size_t)P * N, sizeof *src), *dst = calloc((size_t)P * N, sizeof *dst);
  int32_t *v = calloc(N, sizeof *v), *all = calloc((size_t)P * N, sizeof *all), *x = calloc(N, sizeof *x);
  iteration(&w, 0, src, dst, v, all, x);   /* the main thread works */
  cdag_graph *g = NULL;
  funneled_arg a = {NULL};
  int rc = cdag_graph_create(MPI_COMM_WORLD, &g);
  if (!rc) rc = cdag_compile(g, NULL, &a.s);
  cdag_graph_free(&g);
  pthread_t th;
  pthread_create(&th, NULL, not_main, &a);
  pthread_join(th, NULL);
  if (!rc) rc = cdag_run(a.s);   /* still fine from the main thread */
  MT_OK(rc);
  cdag_schedule_free(&a.s);
  free(src); free(dst); free(v); free(all); free(x);
}

/* ---- overlaps ---- */

/* A ring on comm: send N ints to the right, receive from the left (rank 0's run cannot
   complete before rank P-1 starts). elems sets the message size (distinct graphs). */
static int ring(MPI_Comm comm, int32_t *out, int32_t *in, int elems, cdag_schedule **s) {
  cdag_graph *g = NULL;
  int rc = cdag_graph_create(comm, &g);
  if (!rc) rc = cdag_send(g, out, elems * sizeof *out, (R + 1) % P, 5, NULL);
  if (!rc) rc = cdag_recv(g, in, elems * sizeof *in, (R + P - 1) % P, 5, NULL);
  if (!rc) rc = cdag_compile(g, NULL, s);
  cdag_graph_free(&g);
  return rc;
}

static int ring_ok(const int32_t *in, int elems, int salt) {
  for (int i = 0; i < elems; i++)
    if (in[i] != ((R + P - 1) % P) * 1000 + i + salt) return 0;
  return 1;
}

static void ring_fill(int32_t *out, int elems, int salt) {
  for (int i = 0; i < elems; i++) out[i] = R * 1000 + i + salt;
}

static void *start_it(void *arg) {
  MT_OK(cdag_start(arg));
  return NULL;
}

static void *wait_it(void *arg) {
  MT_OK(cdag_wait(arg));
  return NULL;
}

/* Runs the schedule; while the main thread's cdag_test is inside a call on it (inside_run
   polls), cdag_run is refused: try again until this thread is the one inside. */
static void *run_it(void *arg) {
  int rc;
  while ((rc = cdag_run(arg)) == CDAG_ERR_STATE && strstr(cdag_error_message(), "another thread is inside"))
    sched_yield();
  MT_OK(rc);
  return NULL;
}

/* Thread A starts, the main thread's start and run fail, thread C waits; then two handles
   of one core (a cache hit): the second's start fails while the first runs. */
static void started_elsewhere(MPI_Comm comm) {
  int32_t out[N], in[N];
  cdag_schedule *s = NULL, *s2 = NULL;
  MT_OK(ring(comm, out, in, N, &s));
  MT_REQUIRE(s != NULL);
  pthread_t th;
  ring_fill(out, N, 1);
  pthread_create(&th, NULL, start_it, s);
  pthread_join(th, NULL);
  MT_EXPECT_RC(cdag_start(s), CDAG_ERR_STATE);
  MT_EXPECT_STR(cdag_error_message(), "cdag_start: the schedule is already running");
  MT_EXPECT_RC(cdag_run(s), CDAG_ERR_STATE);
  MT_EXPECT_STR(cdag_error_message(), "cdag_run: the schedule is already running");
  pthread_create(&th, NULL, wait_it, s);
  pthread_join(th, NULL);
  MT_EXPECT(ring_ok(in, N, 1));

  int64_t h0 = 0, h1 = 0;
  exec_compile_stats(NULL, &h0);
  MT_OK(ring(comm, out, in, N, &s2));   /* the same graph: a handle of the same core */
  exec_compile_stats(NULL, &h1);
  MT_EXPECT_INT(h1 - h0, ==, 1);
  MT_REQUIRE(s2 != NULL && s2->core == s->core);
  ring_fill(out, N, 2);
  pthread_create(&th, NULL, start_it, s);
  pthread_join(th, NULL);
  MT_EXPECT_RC(cdag_start(s2), CDAG_ERR_STATE);
  MT_EXPECT_STR(cdag_error_message(), "cdag_start: another handle of this compiled schedule");
  MT_EXPECT_RC(cdag_run(s2), CDAG_ERR_STATE);
  MT_EXPECT_STR(cdag_error_message(), "cdag_run: another handle of this compiled schedule");
  MT_OK(cdag_wait(s));
  MT_EXPECT(ring_ok(in, N, 2));
  ring_fill(out, N, 3);
  MT_OK(cdag_run(s2));   /* the core is free again */
  MT_EXPECT(ring_ok(in, N, 3));
  cdag_schedule_free(&s2);
  cdag_schedule_free(&s);
}

/* np >= 2: rank 0's thread A is inside cdag_run (rank P-1 has not started); the main thread
   polls until its cdag_test fails, then lets the other ranks run. */
static void inside_run(MPI_Comm comm, MPI_Comm sig) {
  enum { E = N + 1 };
  int32_t out[E], in[E];
  cdag_schedule *s = NULL;
  MT_OK(ring(comm, out, in, E, &s));
  MT_REQUIRE(s != NULL);
  ring_fill(out, E, 4);
  int go = 1;
  if (R == 0) {
    pthread_t th;
    pthread_create(&th, NULL, run_it, s);
    int rc = CDAG_OK, done = 0;
    double t0 = MPI_Wtime();   /* thread A enters cdag_run soon and stays: a bound, not a wait */
    while (MPI_Wtime() - t0 < 30 && (rc = cdag_test(s, &done)) == CDAG_OK) continue;
    MT_EXPECT_RC(rc, CDAG_ERR_STATE);
    MT_EXPECT_STR(cdag_error_message(), "cdag_test: another thread is inside a call on this schedule");
    MT_EXPECT_RC(cdag_start(s), CDAG_ERR_STATE);
    MT_EXPECT_STR(cdag_error_message(), "cdag_start: another thread is inside a call on this schedule");
    cdag_schedule *held = s;   /* freeing it now would pull it from under thread A: refused */
    MT_EXPECT_RC(cdag_schedule_free(&s), CDAG_ERR_STATE);
    MT_EXPECT_STR(cdag_error_message(), "cdag_schedule_free: another thread is inside a call on this schedule");
    MT_REQUIRE(s == held);
    for (int r = 1; r < P; r++) MPI_Send(&go, 1, MPI_INT, r, 7, sig);
    pthread_join(th, NULL);
  } else {
    MPI_Recv(&go, 1, MPI_INT, 0, 7, sig, MPI_STATUS_IGNORE);
    MT_OK(cdag_run(s));
  }
  MT_EXPECT(ring_ok(in, E, 4));
  cdag_schedule_free(&s);
}

/* The compile hook: at the compiling rank, with every rank's thread A inside cdag_compile
   (the gather is done), lets every rank's second thread try its compile and waits for them. */
static MPI_Comm hook_sig;
static atomic_int hook_go, hook_ack;   /* rank 0's own second thread: no messages to itself
                                          (MPICH can stall two threads on a self-message) */

static void spin_until(atomic_int *flag) {
  double t0 = MPI_Wtime();
  while (!atomic_load(flag) && MPI_Wtime() - t0 < 60) continue;
  MT_EXPECT(atomic_load(flag));
}

static int hold_analysis(cdag_graph *gg, const cdag_options *o, cdag_plan **p) {
  int token = 1, ack = 0;
  MPI_Request *rq = malloc((size_t)P * sizeof *rq);
  for (int r = 1; r < P; r++) MPI_Isend(&token, 1, MPI_INT, r, 8, hook_sig, &rq[r]);
  atomic_store(&hook_go, 1);
  spin_until(&hook_ack);
  for (int r = 1; r < P; r++) MPI_Recv(&ack, 1, MPI_INT, MPI_ANY_SOURCE, 9, hook_sig, MPI_STATUS_IGNORE);
  for (int r = 1; r < P; r++) MPI_Wait(&rq[r], MPI_STATUS_IGNORE);
  free(rq);
  return cdag_analyze(gg, o, p);
}

static void plan_free(cdag_plan *p) { cdag_plan_free(&p); }

typedef struct {
  cdag_graph *g;
  cdag_schedule *s;
  int rc;
} compile_arg;

static void *compile_it(void *arg) {
  compile_arg *a = arg;
  a->rc = cdag_compile(a->g, NULL, &a->s);
  return NULL;
}

static void compile_twice(MPI_Comm comm, MPI_Comm sig) {
  enum { E = N + 2 };   /* a graph not in the cache: the analysis runs */
  int32_t out[E], in[E];
  compile_arg a = {NULL, NULL, -1};
  int rc = cdag_graph_create(comm, &a.g);
  if (!rc) rc = cdag_send(a.g, out, sizeof out, (R + 1) % P, 5, NULL);
  if (!rc) rc = cdag_recv(a.g, in, sizeof in, (R + P - 1) % P, 5, NULL);
  MT_OK(rc);
  MT_REQUIRE(!rc);
  hook_sig = sig;
  exec_set_analyzer(hold_analysis, plan_free);
  pthread_t th;
  pthread_create(&th, NULL, compile_it, &a);
  int token = 0;
  if (R == 0) spin_until(&hook_go);
  else MPI_Recv(&token, 1, MPI_INT, 0, 8, sig, MPI_STATUS_IGNORE);
  cdag_schedule *s2 = NULL;
  MT_EXPECT_RC(cdag_compile(a.g, NULL, &s2), CDAG_ERR_STATE);
  MT_EXPECT_STR(cdag_error_message(), "cdag_compile: another thread is in cdag_compile or cdag_graph_dump");
  MT_EXPECT(s2 == NULL);
  if (R == 0) atomic_store(&hook_ack, 1);
  else MPI_Send(&token, 1, MPI_INT, 0, 9, sig);
  pthread_join(th, NULL);
  exec_set_analyzer(NULL, NULL);
  MT_OK(a.rc);
  if (a.s) {
    ring_fill(out, E, 5);
    MT_OK(cdag_run(a.s));
    MT_EXPECT(ring_ok(in, E, 5));
  }
  cdag_schedule_free(&a.s);
  cdag_graph_free(&a.g);
}

static void overlaps(void) {
  MPI_Comm comm, sig;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &sig);
  started_elsewhere(comm);
  if (P >= 2) inside_run(comm, sig);
  compile_twice(comm, sig);
  MPI_Comm_free(&sig);
  MPI_Comm_free(&comm);
}

int main(int argc, char **argv) {
  int level = 0, fun = argc > 1 && !strcmp(argv[1], "funneled");
  MPI_Init_thread(&argc, &argv, fun ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &level);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (fun) {
    funneled();
    return mt_finish("mpi_threads funneled");
  }
  MT_EXPECT_INT(level, >=, MPI_THREAD_MULTIPLE);   /* MPI must give it */
  if (level < MPI_THREAD_MULTIPLE) return mt_finish("mpi_threads");
  worker w[T + 1];
  pthread_t th[T + 1];
  for (int t = 0; t <= T; t++) {
    w[t] = (worker){t, MPI_COMM_NULL};
    if (t < T) MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm);
  }
  const char *scale = getenv("CDAG_TEST_SCALE");
  if (scale && atof(scale) > 0 && atof(scale) < 1) iters = 4 + (int)(16 * atof(scale));
  for (int t = 0; t <= T; t++) pthread_create(&th[t], NULL, t < T ? work : analyse, &w[t]);
  for (int t = 0; t <= T; t++) {
    pthread_join(th[t], NULL);
    if (t < T) MPI_Comm_free(&w[t].comm);
  }
  int64_t compiles = 0, hits = 0;
  exec_compile_stats(&compiles, &hits);
  MT_EXPECT_INT(compiles, ==, T);
  MT_EXPECT_INT(hits, ==, T * (iters - 1));
  overlaps();
  return mt_finish("mpi_threads");
}

/* cdag MPI test — different graphs compiled and run from several threads at once under
 * MPI_THREAD_MULTIPLE (run with mpiexec -n 1..4).
 *
 * Each of T threads owns a duplicate of MPI_COMM_WORLD (MPI forbids two threads in
 * collectives on one communicator) and, 20 times, builds a graph on it (an alltoall of its
 * own buffers, then an allgather folded with a local max), compiles it (the first time for
 * real, then from the shared cache), runs it and checks every byte; another thread
 * analyses global graphs meanwhile. With the argument "funneled" the program asks for
 * MPI_THREAD_FUNNELED instead: a thread that is not the main one calling cdag_graph_create,
 * cdag_compile or cdag_run gets CDAG_ERR_STATE (MPI forbids its MPI calls), and the main
 * thread still compiles and runs. Exit 0 on success. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { T = 3, ITERS = 20, N = 16 };

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
  for (int it = 0; it < ITERS; it++) iteration(w, it, src, dst, v, all, x);
  free(src); free(dst); free(v); free(all); free(x);
  return NULL;
}

/* Analysis of global graphs beside the compiles (no MPI). */
static void *analyse(void *arg) {
  worker *w = arg;
  for (int it = 0; it < ITERS; it++) {
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
  for (int t = 0; t <= T; t++) pthread_create(&th[t], NULL, t < T ? work : analyse, &w[t]);
  for (int t = 0; t <= T; t++) {
    pthread_join(th[t], NULL);
    if (t < T) MPI_Comm_free(&w[t].comm);
  }
  int64_t compiles = 0, hits = 0;
  exec_compile_stats(&compiles, &hits);
  MT_EXPECT_INT(compiles, ==, T);
  MT_EXPECT_INT(hits, ==, T * (ITERS - 1));
  return mt_finish("mpi_threads");
}

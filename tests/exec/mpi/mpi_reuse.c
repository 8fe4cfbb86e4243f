/* cdag MPI test — schedules are reused (run with mpiexec -n 1..8):
 *  - a graph rebuilt N times in a loop (the usual way to annotate an iteration; N = argv[1],
 *    default 100) is gathered and compiled once: the other N - 1 cdag_compile calls are cache
 *    hits, each a handle on the cached schedule (exec_compile_stats counts both on every
 *    rank; mpi_cache.c tests the handles), and each iteration's result is right;
 *  - the same for detect = 0 (30 times);
 *  - a graph that differs (other buffers) is compiled anew;
 *  - the cache's rules (cache_rules): options are part of the key, a duplicated
 *    communicator finds the schedule, 8 entries with the oldest evicted;
 *  - CDAG_REPORT=FILE.json receives one report per real compilation, not per call.
 * Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

static int R, P;

enum { N = 4 };  /* int32 per block */

/* One iteration: build the FT-style alltoall from src to dst on comm, compile with o (its
   detect replaced), run, check. */
static void iteration_on(MPI_Comm comm, const cdag_options *opts, int32_t *src, int32_t *dst, int detect, int it) {
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  cdag_options o;
  cdag_options_init(&o);
  if (opts) o = *opts;
  o.detect = detect;
  MT_OK(cdag_graph_create(comm, &g));
  for (int i = 0; i < P; i++) {
    MT_OK(cdag_send(g, src + N * i, N * sizeof *src, i, 0, NULL));
    MT_OK(cdag_recv(g, dst + N * i, N * sizeof *dst, i, 0, NULL));
  }
  MT_OK(cdag_compile(g, &o, &s));
  cdag_graph_free(&g);
  for (int i = 0; i < P * N; i++) {
    src[i] = it * 100000 + R * 1000 + i;
    dst[i] = -1;
  }
  if (s) MT_OK(cdag_run(s));
  for (int i = 0; i < P; i++)
    for (int k = 0; k < N; k++) MT_EXPECT_INT(dst[N * i + k], ==, it * 100000 + i * 1000 + R * N + k);
  cdag_schedule_free(&s);
}

static void iteration(int32_t *src, int32_t *dst, int detect, int it) {
  iteration_on(MPI_COMM_WORLD, NULL, src, dst, detect, it);
}

/* Compilations and cache hits since the last call (compiles < 0: only start counting). */
static void expect_counts(int64_t compiles, int64_t hits, int line) {
  static int64_t c0, h0;
  int64_t c, h;
  exec_compile_stats(&c, &h);
  if (compiles >= 0 && c - c0 != compiles) mt_fail_int(__FILE__, line, "compilations since the last count", c - c0, compiles);
  if (compiles >= 0 && h - h0 != hits) mt_fail_int(__FILE__, line, "cache hits since the last count", h - h0, hits);
  c0 = c;
  h0 = h;
}

/* The cache's rules: options are part of the key; a congruent communicator (a duplicate)
   finds the schedule; the cache holds 8 schedules and evicts the oldest; a schedule the
   user freed stays usable from the cache. */
static void cache_rules(int32_t *src, int32_t *dst) {
  cdag_options o;
  cdag_options_init(&o);
  expect_counts(-1, 0, __LINE__);
  iteration_on(MPI_COMM_WORLD, &o, src, dst, 1, 1);   /* the graph of main's first loop */
  expect_counts(0, 1, __LINE__);
  o.min_group = 3;   /* other options: another schedule */
  iteration_on(MPI_COMM_WORLD, &o, src, dst, 1, 2);
  expect_counts(1, 0, __LINE__);
  o.kernel = CDAG_KERNEL_MPI;
  iteration_on(MPI_COMM_WORLD, &o, src, dst, 1, 3);
  expect_counts(1, 0, __LINE__);
  cdag_options_init(&o);   /* back to the first options: cached */
  iteration_on(MPI_COMM_WORLD, &o, src, dst, 1, 4);
  expect_counts(0, 1, __LINE__);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  iteration_on(dup, &o, src, dst, 1, 5);
  expect_counts(0, 1, __LINE__);
  MPI_Comm_free(&dup);
  for (int k = 0; k < 8; k++) {   /* eight other schedules push the first out */
    o.min_group = 5 + k;
    iteration_on(MPI_COMM_WORLD, &o, src, dst, 1, 6 + k);
  }
  expect_counts(8, 0, __LINE__);
  cdag_options_init(&o);
  iteration_on(MPI_COMM_WORLD, &o, src, dst, 1, 20);
  expect_counts(1, 0, __LINE__);
  o.min_group = 12;   /* the newest of the eight is still there */
  iteration_on(MPI_COMM_WORLD, &o, src, dst, 1, 21);
  expect_counts(0, 1, __LINE__);
}

static int count_reports(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = 0;
  char line[4096];
  while (fgets(line, sizeof line, f))
    for (char *p = line; (p = strstr(p, "\"cdag_report\"")); p++) n++;
  fclose(f);
  return n;
}

int main(int argc, char **argv) {
  char path[256];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);  /* one file name for the job */
  snprintf(path, sizeof path, "cdag_reuse_report_%d.json", pid);
  setenv("CDAG_REPORT", path, 1);
  int32_t *src = calloc((size_t)P * N, sizeof *src), *dst = calloc((size_t)P * N, sizeof *dst);
  int32_t *src2 = calloc((size_t)P * N, sizeof *src2), *dst2 = calloc((size_t)P * N, sizeof *dst2);
  int64_t compiles, hits, n = argc > 1 ? atoi(argv[1]) : 100;
  if (n < 2) n = 2;
  for (int it = 0; it < n; it++) iteration(src, dst, 1, it);
  exec_compile_stats(&compiles, &hits);
  MT_EXPECT_INT(compiles, ==, 1);
  MT_EXPECT_INT(hits, ==, n - 1);
  for (int it = 0; it < 30; it++) iteration(src, dst, 0, it);
  exec_compile_stats(&compiles, &hits);
  MT_EXPECT_INT(compiles, ==, 2);
  MT_EXPECT_INT(hits, ==, n + 28);
  iteration(src2, dst2, 1, 7);  /* other buffers: a new graph */
  exec_compile_stats(&compiles, &hits);
  MT_EXPECT_INT(compiles, ==, 3);
  MT_EXPECT_INT(hits, ==, n + 28);
  if (P <= 4) cache_rules(src, dst);   /* the cache's logic; larger runs only cost time */
  exec_compile_stats(&compiles, &hits);
  MPI_Barrier(MPI_COMM_WORLD);
  if (R == 0) {
    MT_EXPECT_INT(count_reports(path), ==, compiles);   /* reports in CDAG_REPORT's file */
    remove(path);
  }
  if (R == 0) printf("mpi_reuse: %lld compilations, %lld cache hits\n", (long long)compiles, (long long)hits);
  free(src); free(dst); free(src2); free(dst2);
  return mt_finish("mpi_reuse");
}

/* cdag MPI test — cdag_test: a started run advances without blocking (mpiexec -n 1..8).
 *
 * Three phases written point-to-point (an allgather as a linear exchange, a linear bcast
 * from the last rank, a linear sum to rank 0 sent back: an allreduce) and a fourth (a
 * second sum sent back to every rank, kept by the even ones only: with 3 ranks or more a
 * reduce plus a bcast that starts once the reduce completed) are compiled with detection
 * and as written. Each run is cdag_start, then cdag_test in a loop with a little
 * computation between calls until *done, and the results are checked against their direct
 * values; a cdag_wait after done returns CDAG_OK at once. With CDAG_KERNEL=cdag the bcast,
 * allgather and allreduce run as cdag's kernels, which cdag_test advances round by round.
 * cdag_test before cdag_start sets done = 1 (nothing runs); a NULL done is CDAG_ERR_ARG. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdag.h>
#include <mpi.h>

#include "mpi_test.h"

enum { N = 512 };   /* int64 elements per block */

static int R, P;
static volatile double work;   /* the computation between cdag_test calls */

static int64_t *mine, *all, *bc, *sum, *tmp, *part, *dot, *tmp2;

static int build(cdag_graph *g) {
  size_t b = N * sizeof(int64_t);
  int rc = cdag_scratch(g, tmp, b);
  for (int j = 0; j < P && !rc; j++) {   /* allgather */
    rc = cdag_send(g, mine, b, j, 1, NULL);
    if (!rc) rc = cdag_recv(g, all + (size_t)j * N, b, j, 1, NULL);
  }
  if (R == P - 1)                         /* bcast from the last rank */
    for (int j = 0; j < P - 1 && !rc; j++) rc = cdag_send(g, bc, b, j, 2, NULL);
  else if (!rc) rc = cdag_recv(g, bc, b, P - 1, 2, NULL);
  if (!rc && R % 2) rc = cdag_scratch(g, dot, b);   /* the odd ranks do not keep the second sum */
  if (R != 0) {                           /* allreduce: sum at 0, sent back */
    if (!rc) rc = cdag_send(g, mine, b, 0, 3, NULL);
    if (!rc) rc = cdag_recv(g, sum, b, 0, 4, NULL);
    if (!rc) rc = cdag_send(g, part, b, 0, 5, NULL);
    if (!rc) rc = cdag_recv(g, dot, b, 0, 6, NULL);
    return rc;
  }
  if (!rc) rc = cdag_copy_local(g, mine, sum, b, NULL);
  for (int j = 1; j < P && !rc; j++) {
    rc = cdag_recv(g, tmp, b, j, 3, NULL);
    if (!rc) rc = cdag_reduce_local(g, tmp, sum, N, MPI_INT64_T, MPI_SUM, NULL);
  }
  for (int j = 1; j < P && !rc; j++) rc = cdag_send(g, sum, b, j, 4, NULL);
  if (!rc) rc = cdag_scratch(g, tmp2, b);
  if (!rc) rc = cdag_copy_local(g, part, dot, b, NULL);
  for (int j = 1; j < P && !rc; j++) {
    rc = cdag_recv(g, tmp2, b, j, 5, NULL);
    if (!rc) rc = cdag_reduce_local(g, tmp2, dot, N, MPI_INT64_T, MPI_SUM, NULL);
  }
  for (int j = 1; j < P && !rc; j++) rc = cdag_send(g, dot, b, j, 6, NULL);
  return rc;
}

static int64_t value(int r, int k, int it) { return (int64_t)r * 100003 + k * 7 + it; }

static void check(int it) {
  for (int k = 0; k < N; k++) {
    int64_t s = 0;
    for (int r = 0; r < P; r++) {
      s += value(r, k, it);
      if (all[(size_t)r * N + k] != value(r, k, it)) {
        MT_FAIL("iteration %d: allgather block %d element %d", it, r, k);
        return;
      }
    }
    if (R % 2 == 0 && dot[k] != 2 * s) {
      MT_FAIL("iteration %d: element %d: second sum %lld (want %lld)", it, k, (long long)dot[k], (long long)(2 * s));
      return;
    }
    if (sum[k] != s || bc[k] != value(P - 1, k, it) + 1) {
      MT_FAIL("iteration %d: element %d: sum %lld (want %lld), bcast %lld", it, k, (long long)sum[k], (long long)s,
            (long long)bc[k]);
      return;
    }
  }
}

static void run(int detect) {
  cdag_graph *g;
  cdag_schedule *s = NULL;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  int rc = cdag_graph_create(MPI_COMM_WORLD, &g), done = 0;
  if (!rc) rc = build(g);
  if (!rc) rc = cdag_compile(g, &o, &s);
  cdag_graph_free(&g);
  if (!rc) {
    /* not running: nothing to wait for, done = 1 (MPI_Test on an inactive request) */
    MT_EXPECT_MSG(cdag_test(s, &done) == CDAG_OK && done == 1, "cdag_test before cdag_start: %s", cdag_error_message());
  }
  for (int it = 0; it < 5 && !rc; it++) {
    for (int k = 0; k < N; k++) {
      mine[k] = value(R, k, it);
      part[k] = 2 * value(R, k, it);
      if (R == P - 1) bc[k] = value(R, k, it) + 1;
    }
    memset(all, 0, (size_t)P * N * sizeof *all);
    rc = cdag_start(s);
    int64_t calls = 0;
    for (done = 0; !rc && !done; calls++) {
      for (int k = 0; k < 200; k++) work += k * 0.5;   /* computation between calls */
      rc = cdag_test(s, &done);
    }
    if (!rc) rc = cdag_wait(s);   /* after done: returns at once */
    if (!rc) check(it);
    MT_EXPECT_MSG(calls >= 1, "no cdag_test call");
  }
  if (!rc) {
    MT_EXPECT_MSG(cdag_test(s, NULL) == CDAG_ERR_ARG, "cdag_test with NULL done accepted");
    MT_EXPECT_MSG(cdag_wait(s) == CDAG_ERR_STATE, "a second cdag_wait was accepted");
  }
  MT_EXPECT_MSG(!rc, "detect %d: %s", detect, cdag_error_message());
  cdag_schedule_free(&s);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  mine = malloc(N * sizeof *mine);
  all = malloc((size_t)P * N * sizeof *all);
  bc = malloc(N * sizeof *bc);
  sum = malloc(N * sizeof *sum);
  tmp = malloc(N * sizeof *tmp);
  part = malloc(N * sizeof *part);
  dot = malloc(N * sizeof *dot);
  tmp2 = malloc(N * sizeof *tmp2);
  run(1);
  run(0);
  free(mine); free(all); free(bc); free(sum); free(tmp); free(part); free(dot); free(tmp2);
  return mt_finish("mpi_test_progress");
}

/* cdag tests — tests/exec/mpi/mpi_many.c: a graph run as written with more messages per
 * rank than MPICH has requests (run with mpiexec -n 1..8).
 *
 * MPICH 4.0 draws requests from a pool of about 262,000 per process and aborts when it is
 * empty. The baseline (detect = 0, what `cdag replay` runs as written) once created one
 * persistent request per message at compile time, so a recording of 10^5 nonblocking
 * collectives (MPICH's coll/nonblocking3 at 4 processes) could not be replayed. Here every
 * rank relays a token around the ring 140,000 times (280,000 messages, one at a time: each
 * send waits for the receive before it, each receive for the send that read its buffer),
 * after a column of a matrix sent with a vector datatype (the baseline sends its blocks
 * without packing). Three runs of one schedule must each leave the right bytes (the second
 * started and polled with cdag_test), and so must a copy rebound to other buffers. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "mpi_test.h"

enum { LINKS = 140000, ROWS = 16, COLS = 8 };

/* The graph: the column, then the relay (a to the right, b from the left, b to the right, a
   from the left ...). After LINKS links rank r holds in a the token of rank r - LINKS. */
static int build(cdag_graph *g, int rank, int p, double *m, double *col, uint64_t *a, uint64_t *b) {
  int right = (rank + 1) % p, left = (rank + p - 1) % p, rc;
  MPI_Datatype column;
  MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);
  rc = cdag_send_type(g, m + 3, 1, column, right, 1, NULL);
  if (!rc) rc = cdag_recv(g, col, ROWS * sizeof *col, left, 1, NULL);
  MPI_Type_free(&column);
  for (int i = 0; i < LINKS && !rc; i++) {
    uint64_t *out = i % 2 ? b : a, *in = i % 2 ? a : b;
    rc = cdag_send(g, out, sizeof *out, right, 2, NULL);
    if (!rc) rc = cdag_recv(g, in, sizeof *in, left, 2, NULL);
  }
  return rc;
}

int main(int argc, char **argv) {
  int rank, p;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  static double m[ROWS * COLS], col[ROWS];
  static uint64_t a, b;
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = 0;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  MT_OK(build(g, rank, p, m, col, &a, &b));
  MT_OK(cdag_compile(g, &o, &s));
  int left = (rank + p - 1) % p, from = (int)(((int64_t)rank - LINKS % p + p) % p);
  for (int it = 0; it < 3 && s; it++) {
    for (int k = 0; k < ROWS * COLS; k++) m[k] = 1000.0 * rank + 10 * it + k;
    a = (uint64_t)rank << 32 | (uint64_t)it, b = 0;
    if (it == 1) {   /* started, then polled: MPI_Testsome on the requests in flight */
      int done = 0;
      MT_OK(cdag_start(s));
      while (!done && cdag_test(s, &done) == CDAG_OK) {}
      MT_EXPECT(done);
    } else {
      MT_OK(cdag_run(s));
    }
    for (int k = 0; k < ROWS; k++) MT_EXPECT_DBL(col[k], ==, 1000.0 * left + 10 * it + k * COLS + 3);
    MT_EXPECT_INT(a, ==, (uint64_t)from << 32 | (uint64_t)it);   /* LINKS is even: the token ends in a */
  }
  static double m2[ROWS * COLS], col2[ROWS];   /* the same graph on other buffers */
  static uint64_t a2, b2;
  cdag_rebind moves[4] = {{m, m2, sizeof m}, {col, col2, sizeof col}, {&a, &a2, sizeof a}, {&b, &b2, sizeof b}};
  cdag_schedule *t = NULL;
  MT_OK(cdag_schedule_rebind(s, 4, moves, &t));
  for (int k = 0; k < ROWS * COLS; k++) m2[k] = 7.0 * rank + k;
  a2 = (uint64_t)rank << 32 | 99u;
  if (t) MT_OK(cdag_run(t));
  for (int k = 0; k < ROWS; k++) MT_EXPECT_DBL(col2[k], ==, 7.0 * left + k * COLS + 3);
  MT_EXPECT_INT(a2, ==, (uint64_t)from << 32 | 99u);
  cdag_schedule_free(&t);
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  return mt_finish("mpi_many");
}

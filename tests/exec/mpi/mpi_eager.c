/* cdag tests — tests/exec/mpi/mpi_eager.c: a ring where every rank sends, then receives into the
 * buffer it sent from. Sends take their data when they run (match.h), so this is a valid
 * graph; run as written (detect = 0) with 1 MiB messages it must not hang on MPI's rendezvous
 * protocol, and compiled it must give the same bytes: rank r ends with rank r-1's data. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi_test.h"

#define N (1 << 20)

static int run(int detect, int rank, int p, unsigned char *buf) {
  cdag_graph *g;
  cdag_schedule *s;
  cdag_options o;
  cdag_op snd, rcv;
  cdag_options_init(&o);
  o.detect = detect;
  int rc = cdag_graph_create(MPI_COMM_WORLD, &g);
  if (!rc) rc = cdag_send(g, buf, N, (rank + 1) % p, 0, &snd);
  if (!rc) rc = cdag_recv(g, buf, N, (rank + p - 1) % p, 0, &rcv);
  if (!rc) rc = cdag_depend(g, snd, rcv);
  if (!rc) rc = cdag_compile(g, &o, &s);
  for (int it = 0; it < 3 && !rc; it++) {
    for (int i = 0; i < N; i++) buf[i] = (unsigned char)(rank * 7 + i);
    rc = cdag_run(s);
    int from = (rank + p - 1) % p;
    for (int i = 0; i < N && !rc; i++)
      if (buf[i] != (unsigned char)(from * 7 + i)) {
        MT_FAIL("detect %d: byte %d is %d, expected %d", detect, i, buf[i], (unsigned char)(from * 7 + i));
        rc = -1;
      }
  }
  if (rc > 0) MT_FAIL("detect %d: %s: %s", detect, cdag_strerror(rc), cdag_error_message());
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  return rc;
}

int main(int argc, char **argv) {
  int rank, p;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  unsigned char *buf = malloc(N);
  MT_REQUIRE(buf != NULL);
  if (run(0, rank, p, buf) == 0) run(1, rank, p, buf);   /* run's failures are counted */
  free(buf);
  return mt_finish("mpi_eager");
}

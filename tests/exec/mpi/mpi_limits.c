/* cdag MPI test — the typed API's size arithmetic at its limits (run with mpiexec -n 1..8).
 *
 * cdag_send_type / cdag_recv_type multiply the count by the datatype's size and extent: a
 * product past 2^63-1 bytes is CDAG_ERR_ARG naming the count (it once wrapped, and 2^62
 * doubles became a message of 0 bytes); a span past 4 GiB is CDAG_ERR_UNSUPPORTED; counts
 * just inside still build. cdag_reduce_local's count * element size and cdag_send's
 * address + bytes likewise. Nothing is added by a refused call. Exit 0 on success. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cdag.h>

#include "mpi_test.h"


int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int R;
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  static double buf[64];
  cdag_graph *g = NULL;
  MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
  MPI_Count big = (MPI_Count)1 << 62;   /* 2^62 doubles: 2^65 bytes */
  MT_EXPECT(cdag_send_type(g, buf, big, MPI_DOUBLE, R, 0, NULL) == CDAG_ERR_ARG);
  MT_EXPECT(strstr(cdag_error_message(), "more than 2^63-1 bytes") != NULL);
  MT_EXPECT(cdag_recv_type(g, buf, INT64_MAX, MPI_INT, R, 0, NULL) == CDAG_ERR_ARG);
  MPI_Datatype vec;   /* 2 doubles 2^40 doubles apart: a span past 4 GiB */
  MPI_Type_vector(2, 1, (int)(1 << 30), MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  MT_EXPECT(cdag_send_type(g, buf, 1 << 20, vec, R, 0, NULL) == CDAG_ERR_UNSUPPORTED);
  MT_EXPECT(cdag_send_type(g, buf, big, vec, R, 0, NULL) == CDAG_ERR_ARG);
  MPI_Type_free(&vec);
  MT_EXPECT(cdag_reduce_local(g, buf, buf + 32, SIZE_MAX / 4, MPI_DOUBLE, MPI_SUM, NULL) == CDAG_ERR_ARG);
  MT_EXPECT(cdag_send(g, buf, SIZE_MAX, R, 0, NULL) == CDAG_ERR_ARG);
  int64_t nops = -1;
  MT_EXPECT(cdag_graph_info(g, NULL, &nops) == CDAG_OK && nops == 0);
  /* just inside: the whole buffer, as 8 doubles and as 64 bytes */
  MT_EXPECT(cdag_send_type(g, buf, 8, MPI_DOUBLE, R, 1, NULL) == CDAG_OK);
  MT_EXPECT(cdag_recv_type(g, buf + 8, 64, MPI_BYTE, R, 1, NULL) == CDAG_OK);
  cdag_schedule *s = NULL;
  MT_EXPECT(cdag_compile(g, NULL, &s) == CDAG_OK);
  for (int i = 0; i < 8; i++) buf[i] = i + 0.5;
  MT_EXPECT(s && cdag_run(s) == CDAG_OK);
  MT_EXPECT(memcmp(buf, buf + 8, 8 * sizeof *buf) == 0);
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  return mt_finish("mpi_limits");
}

/* cdag tests — tests/record/rec_resized.c: a message of more byte ranges than copies fit.
 *
 * 16400 ints each resized to 8 bytes (as MPICH's datatype/tresized, which has 32768 of
 * extent 12) sent to the right neighbour and received with the same type: 16400 byte
 * ranges of one length at one stride, one strided copy each way (the recording was refused
 * beyond 16383 ranges, one copy each). Then a column of a row-major matrix (a vector): one
 * copy each way too. The recording's replay must leave every element where MPI put it. */
#include <stdlib.h>

#include "rec_test.h"

enum { NRES = 16400, ROWS = 64, COLS = 5 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size;
  int *rs = malloc(2 * NRES * sizeof *rs), *rr = malloc(2 * NRES * sizeof *rr);
  MT_REQUIRE(rs && rr);
  rt_fill(rs, 2 * NRES * sizeof *rs);
  rt_fill(rr, 2 * NRES * sizeof *rr);
  MPI_Datatype res, col;
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &res);
  MPI_Type_commit(&res);
  MPI_Sendrecv(rs, NRES, res, right, 4, rr, NRES, res, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Type_free(&res);
  double m[ROWS][COLS], mr[ROWS][COLS];
  rt_fill(m, sizeof m);
  rt_fill(mr, sizeof mr);
  MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);
  MPI_Sendrecv(&m[0][1], 1, col, right, 5, &mr[0][3], 1, col, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Type_free(&col);
  rt_keep(rr, 2 * NRES * sizeof *rr);
  rt_keep(mr, sizeof mr);
  free(rs);
  free(rr);
  return rt_finish();
}

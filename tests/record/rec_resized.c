/* cdag tests — tests/record/rec_resized.c: a message of more byte ranges than copies fit.
 *
 * 16400 ints each resized to 8 bytes (as MPICH's datatype/tresized, which has 32768 of
 * extent 12) sent to the right neighbour and received with the same type: 16400 byte
 * ranges of one length at one stride, one strided copy each way (the recording was refused
 * beyond 16383 ranges, one copy each). Then a column of a row-major matrix (a vector): one
 * copy each way too. Then 512 elements of an indexed type (a double, a gap of two, two
 * doubles) resized to 8 doubles: 1,024 ranges of two lengths in turn, a period of two that
 * repeats, so two strided copies each way, not one per range. The recording's replay must
 * leave every element where MPI put it. */
#include <stdlib.h>

#include "rec_test.h"

enum { NRES = 16400, ROWS = 64, COLS = 5, NIDX = 512 };

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
  double *is = malloc(8 * NIDX * sizeof *is), *ir = malloc(8 * NIDX * sizeof *ir);
  MT_REQUIRE(is && ir);
  rt_fill(is, 8 * NIDX * sizeof *is);
  rt_fill(ir, 8 * NIDX * sizeof *ir);
  int bl[2] = {1, 2}, dis[2] = {0, 3};
  MPI_Datatype ind, elem;
  MPI_Type_indexed(2, bl, dis, MPI_DOUBLE, &ind);
  MPI_Type_create_resized(ind, 0, 8 * sizeof(double), &elem);
  MPI_Type_commit(&elem);
  MPI_Sendrecv(is, NIDX, elem, right, 6, ir, NIDX, elem, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Type_free(&elem);
  MPI_Type_free(&ind);
  rt_keep(rr, 2 * NRES * sizeof *rr);
  rt_keep(mr, sizeof mr);
  rt_keep(ir, 8 * NIDX * sizeof *ir);
  free(rs);
  free(rr);
  free(is);
  free(ir);
  return rt_finish();
}

/* cdag tests — tests/record/rec_types.c: derived datatypes.
 *
 * A column of a row-major matrix (MPI_Type_vector) sent to the right neighbour and
 * received into a column of its matrix, an indexed type received into a contiguous buffer
 * and a struct of two blocks; each becomes the byte ranges it touches, moved through a
 * packing area. Then a receive and a persistent send whose column type the program frees
 * before they complete or start (MPI allows it; the recorder crashed on it), with a new
 * datatype created meanwhile, which MPI may give the freed handle. The recording's replay
 * must leave every element where MPI put it. */
#include <string.h>

#include "rec_test.h"

enum { R = 6, C = 5 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size;
  double m[R][C], mr[R][C], flat[4];
  int idx[3];
  rt_fill(m, sizeof m); rt_fill(mr, sizeof mr); rt_fill(flat, sizeof flat); rt_fill(idx, sizeof idx);
  MPI_Datatype col, ind, st;
  MPI_Type_vector(R, 1, C, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);
  int bl[2] = {1, 3}, dis[2] = {4, 0};
  MPI_Type_indexed(2, bl, dis, MPI_DOUBLE, &ind);
  MPI_Type_commit(&ind);
  int sbl[2] = {1, 2};
  MPI_Aint sdis[2] = {0, 2 * sizeof(int)};
  MPI_Datatype stypes[2] = {MPI_INT, MPI_BYTE};
  MPI_Type_create_struct(2, sbl, sdis, stypes, &st);
  MPI_Type_commit(&st);
  MPI_Sendrecv(&m[0][1], 1, col, right, 0, &mr[0][3], 1, col, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&m[1][0], 1, ind, right, 1, flat, 4, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int is[3];
  rt_fill(is, sizeof is);
  MPI_Sendrecv(idx, 1, st, right, 2, is, 1, st, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Type_free(&col);
  MPI_Type_free(&ind);
  MPI_Type_free(&st);

  double late[R][C];
  rt_fill(late, sizeof late);
  MPI_Datatype col2, other;
  MPI_Type_vector(R, 1, C, MPI_DOUBLE, &col2);
  MPI_Type_commit(&col2);
  MPI_Request q[2];
  MPI_Irecv(&late[0][2], 1, col2, left, 3, MPI_COMM_WORLD, &q[0]);
  MPI_Send_init(&m[0][4], 1, col2, right, 3, MPI_COMM_WORLD, &q[1]);
  MPI_Type_free(&col2);
  MPI_Type_contiguous(3, MPI_INT, &other);
  MPI_Type_commit(&other);
  MPI_Start(&q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  MPI_Request_free(&q[1]);
  MPI_Type_free(&other);
  rt_keep(late, sizeof late);
  rt_keep(mr, sizeof mr);
  rt_keep(flat, sizeof flat);
  rt_keep(is, sizeof is);
  return rt_finish();
}

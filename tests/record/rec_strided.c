/* cdag tests — tests/record/rec_strided.c: datatypes whose blocks a recording cannot list
 * one by one, and a buffer refilled block by block.
 *
 * As MPICH's pt2pt/sendself does with its datatype pools: 1,024 blocks of two doubles at a
 * negative stride (an hvector whose blocks run backwards), then 1,024 blocks of one length
 * at irregular displacements (an indexed type), each sent to the right neighbour and
 * received with the same type: one copy each way, the first at a negative stride, the
 * second at listed steps (one copy per block before); the indexed bytes are sent again,
 * unchanged, from the first send's packing area (check_strided.py); the replay must leave
 * every element of them where MPI put it. Then, three times, the program refills the vector's blocks of
 * another buffer one by one (and only them) and sends them: one computation of 1,024
 * blocks at one stride each time (one per block before); and once the indexed type's
 * blocks: one computation at their listed steps. */
#include <stdlib.h>

#include "rec_test.h"

enum { NB = 1024, ROUNDS = 3 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size;
  size_t vn = 3 * NB, in = 8 * NB;   /* doubles: the vector's extent, room for the indexed type */
  double *vs = malloc(vn * sizeof *vs), *vr = malloc(vn * sizeof *vr);
  double *is = malloc(in * sizeof *is), *ir = malloc(in * sizeof *ir);
  int *bl = malloc(NB * sizeof *bl), *dis = malloc(NB * sizeof *dis);
  MT_REQUIRE(vs && vr && is && ir && bl && dis);
  rt_fill(vs, vn * sizeof *vs);
  rt_fill(vr, vn * sizeof *vr);
  rt_fill(is, in * sizeof *is);
  rt_fill(ir, in * sizeof *ir);

  /* blocks of two doubles, three doubles apart, from the last block of the buffer down;
     blocks of three doubles at gaps of 1 to 4 doubles, in no pattern (a linear congruential
     sequence). Both sent before anything is received: the bytes are the rank's own. */
  MPI_Datatype back, ind;
  MPI_Type_create_hvector(NB, 2, -3 * (MPI_Aint)sizeof(double), MPI_DOUBLE, &back);
  MPI_Type_commit(&back);
  unsigned x = 12345;
  for (int i = 0, d = 0; i < NB; i++) {
    x = x * 1103515245u + 12345u;
    bl[i] = 3;
    dis[i] = d;
    d += 3 + 1 + (int)((x >> 16) % 4);
  }
  MPI_Type_indexed(NB, bl, dis, MPI_DOUBLE, &ind);
  MPI_Type_commit(&ind);
  MPI_Request rq[4];
  MPI_Isend(vs + 3 * (NB - 1), 1, back, right, 1, MPI_COMM_WORLD, &rq[0]);
  MPI_Isend(is, 1, ind, right, 2, MPI_COMM_WORLD, &rq[1]);
  MPI_Irecv(vr + 3 * (NB - 1), 1, back, left, 1, MPI_COMM_WORLD, &rq[2]);
  MPI_Irecv(ir, 1, ind, left, 2, MPI_COMM_WORLD, &rq[3]);
  MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
  /* the indexed type's bytes sent again, unchanged: from the packing area of the first */
  MPI_Sendrecv(is, 1, ind, right, 8, ir, 1, ind, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

  /* the rank has received: what it writes now and sends is computed here (the replay
     writes bytes of its own there, so these buffers are not compared) */
  double *ws = malloc(vn * sizeof *ws), *wr = malloc(vn * sizeof *wr);
  MT_REQUIRE(ws && wr);
  for (int round = 0; round < ROUNDS; round++) {
    for (int b = 0; b < NB; b++) {
      ws[3 * b] = (double)(rt_rank * 100000 + round * 10000 + b);
      ws[3 * b + 1] = -ws[3 * b];
    }
    MPI_Sendrecv(ws + 3 * (NB - 1), 1, back, right, 3 + round, wr + 3 * (NB - 1), 1, back, left, 3 + round,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int b = 0; b < NB; b++)
      MT_REQUIRE(wr[3 * b] == (double)(left * 100000 + round * 10000 + b) && wr[3 * b + 1] == -wr[3 * b]);
  }
  /* the indexed type's blocks refilled: one computation at the blocks' listed steps */
  for (int i = 0; i < NB; i++)
    for (int k = 0; k < 3; k++) is[dis[i] + k] = (double)(rt_rank + i + k);
  MPI_Sendrecv(is, 1, ind, right, 9, ws, 3 * NB, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < NB; i++) MT_REQUIRE(ws[3 * i] == (double)(left + i));
  free(ws);
  free(wr);
  MPI_Type_free(&back);
  MPI_Type_free(&ind);
  rt_keep(vr, vn * sizeof *vr);
  rt_keep(ir, in * sizeof *ir);
  free(vs);
  free(vr);
  free(is);
  free(ir);
  free(bl);
  free(dis);
  return rt_finish();
}

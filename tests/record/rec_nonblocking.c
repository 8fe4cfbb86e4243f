/* cdag tests — tests/record/rec_nonblocking.c: nonblocking calls and every completion call.
 *
 * Isend, Issend, Irsend, Ibsend and Irecv (one from MPI_ANY_SOURCE), completed by Wait, Waitall
 * (with MPI_STATUSES_IGNORE), Waitany, Waitsome, Test (polled), Testall, Testany and
 * Testsome. Rank r sends block r of its buffer to every rank (an alltoall written by hand,
 * which the report must find), one round per completion style. */
#include <string.h>

#include "rec_test.h"

enum { B = 24, ROUNDS = 4 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int n = rt_size;
  uint8_t *src = malloc((size_t)(ROUNDS * n * B)), *dst = malloc((size_t)(ROUNDS * n * B));
  MPI_Request *rq = malloc((size_t)(2 * n) * sizeof *rq);
  MPI_Status *st = malloc((size_t)(2 * n) * sizeof *st);
  int *idx = malloc((size_t)(2 * n) * sizeof *idx);
  char *bspace = malloc((size_t)(n * (B + MPI_BSEND_OVERHEAD)));
  MT_REQUIRE(src && dst && rq && st && idx && bspace);
  rt_fill(src, (size_t)(ROUNDS * n * B));
  rt_fill(dst, (size_t)(ROUNDS * n * B));
  MPI_Buffer_attach(bspace, n * (B + MPI_BSEND_OVERHEAD));
  for (int round = 0; round < ROUNDS; round++) {
    uint8_t *s = src + round * n * B, *d = dst + round * n * B;
    for (int p = 0; p < n; p++) {
      if (round == 1 && p == 0)   /* rank 0's message of this round has a tag of its own */
        MPI_Irecv(d + p * B, B, MPI_BYTE, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &rq[p]);
      else
        MPI_Irecv(d + p * B, B, MPI_BYTE, p, round, MPI_COMM_WORLD, &rq[p]);
    }
    MPI_Barrier(MPI_COMM_WORLD);   /* every receive is posted: Irsend is legal */
    for (int p = 0; p < n; p++) {
      int to = (rt_rank + p) % n, tag = round == 1 && rt_rank == 0 ? 77 : round;
      uint8_t *blk = s + to * B;
      switch (p % 4) {
      case 0: MPI_Isend(blk, B, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[n + p]); break;
      case 1: MPI_Issend(blk, B, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[n + p]); break;
      case 2: MPI_Irsend(blk, B, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[n + p]); break;
      default: MPI_Ibsend(blk, B, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq[n + p]); break;
      }
    }
    int left = 2 * n, done = 0, flag = 0;
    switch (round) {
    case 0:   /* Waitall, then Wait on nothing left */
      MPI_Waitall(2 * n, rq, MPI_STATUSES_IGNORE);
      MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
      break;
    case 1:   /* Waitany and Testany */
      while (left) {
        int i;
        if (left % 2) MPI_Waitany(2 * n, rq, &i, &st[0]);
        else {
          MPI_Testany(2 * n, rq, &i, &flag, &st[0]);
          if (!flag) continue;
        }
        if (i == MPI_UNDEFINED) break;
        if (i == 0) MT_REQUIRE(st[0].MPI_SOURCE == 0 && st[0].MPI_TAG == 77);
        left--;
      }
      break;
    case 2:   /* Waitsome and Testsome */
      while (done < 2 * n) {
        int k;
        if (done % 2) MPI_Testsome(2 * n, rq, &k, idx, st);
        else MPI_Waitsome(2 * n, rq, &k, idx, MPI_STATUSES_IGNORE);
        if (k == MPI_UNDEFINED) break;
        done += k;
      }
      break;
    default:   /* Test one by one, then Testall */
      for (int i = 0; i < n; i++)
        for (flag = 0; !flag;) MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE);
      for (flag = 0; !flag;) MPI_Testall(n, rq + n, &flag, st);
      break;
    }
  }
  void *bb;
  int bs;
  MPI_Buffer_detach(&bb, &bs);
  rt_keep(dst, (size_t)(ROUNDS * n * B));
  free(src); free(dst); free(rq); free(st); free(idx); free(bspace);
  return rt_finish();
}

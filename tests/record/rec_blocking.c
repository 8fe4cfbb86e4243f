/* cdag tests — tests/record/rec_blocking.c: the blocking point-to-point calls, recorded.
 *
 * Send, Ssend, Rsend and Bsend; Recv with MPI_ANY_SOURCE and MPI_ANY_TAG; a message to
 * MPI_PROC_NULL (records nothing). The data: a ring that forwards what it received
 * unchanged (the recording shows the forwarding: a broadcast from rank 0), then a
 * hand-written allreduce of int64 sums (each rank adds what arrives to its own vector and
 * passes the sum on along a chain, and the last rank sends the total back to every rank):
 * the recording must infer the local reductions from content. */
#include <string.h>

#include "rec_test.h"

enum { N = 16 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size;
  uint8_t ring[64];
  int64_t acc[N], tmp[N], total[N];
  char bsend_space[MPI_BSEND_OVERHEAD + 1024];
  rt_fill(ring, sizeof ring);
  rt_fill(acc, sizeof acc);
  rt_fill(tmp, sizeof tmp);
  rt_fill(total, sizeof total);
  MPI_Buffer_attach(bsend_space, sizeof bsend_space);

  /* a ring broadcast of rank 0's bytes: receive from the left (any source, any tag), send on */
  if (rt_size > 1) {
    if (rt_rank == 0) {
      MPI_Ssend(ring, sizeof ring, MPI_BYTE, right, 1, MPI_COMM_WORLD);
    } else {
      MPI_Status st;
      MPI_Recv(ring, sizeof ring, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      MT_REQUIRE(st.MPI_SOURCE == left && st.MPI_TAG == 1);
      if (right != 0) MPI_Send(ring, sizeof ring, MPI_BYTE, right, 1, MPI_COMM_WORLD);
    }
  }
  MPI_Send(ring, 8, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);

  /* a chain reduction: acc += what the left neighbour passes on, then pass acc on */
  /* acc goes to the rank itself first, so the recording has seen what it held before the
     sum (a buffer never seen counts as the rank's own: nothing proves a sum into it) */
  MPI_Bsend(acc, N, MPI_INT64_T, rt_rank, 9, MPI_COMM_WORLD);
  MPI_Recv(tmp, N, MPI_INT64_T, rt_rank, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rt_rank > 0) {
    MPI_Recv(tmp, N, MPI_INT64_T, rt_rank - 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++) acc[i] = (int64_t)((uint64_t)acc[i] + (uint64_t)tmp[i]);   /* wraps, as MPI_SUM does */
  }
  if (rt_rank < rt_size - 1) {
    MPI_Send(acc, N, MPI_INT64_T, rt_rank + 1, 2, MPI_COMM_WORLD);
  } else {   /* the last rank holds the total: back to everyone (Rsend: receives are posted) */
    memcpy(total, acc, sizeof acc);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < rt_size - 1; r++) MPI_Rsend(acc, N, MPI_INT64_T, r, 3, MPI_COMM_WORLD);
  }
  if (rt_rank < rt_size - 1) {
    MPI_Request q;
    MPI_Irecv(total, N, MPI_INT64_T, rt_size - 1, 3, MPI_COMM_WORLD, &q);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  }
  /* every rank holds the same total */
  int64_t t0[N];
  memcpy(t0, total, sizeof t0);
  MPI_Bcast(t0, N, MPI_INT64_T, 0, MPI_COMM_WORLD);
  MT_REQUIRE(memcmp(t0, total, sizeof t0) == 0);
  void *b;
  int bs;
  MPI_Buffer_detach(&b, &bs);
  rt_keep(ring, sizeof ring);
  if (rt_rank < rt_size - 1) rt_keep(total, sizeof total);
  rt_keep(t0, sizeof t0);
  return rt_finish();
}

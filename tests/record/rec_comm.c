/* cdag tests — tests/record/rec_comm.c: communicators and native collectives.
 *
 * The ranks form two halves (Comm_split) and a duplicate of the world (Comm_dup). The same
 * tag is used on all three and on MPI_COMM_WORLD at once, so only communicators keep the
 * messages apart; ranks are the sub-communicator's and the recording must give world
 * ranks. Then every native collective cdag knows, on the world, on a half, and in place:
 * barrier, bcast, gather, scatter, allgather, alltoall, reduce, allreduce,
 * reduce_scatter_block, and a gatherv. */
#include <string.h>

#include "rec_test.h"

enum { B = 8 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int n = rt_size, me = rt_rank;
  MPI_Comm half, dup;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, n - me, &half);   /* reversed order inside */
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int hr, hn;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hn);
  uint8_t a[B], b[B], c[B], d[B], ra[B], rb[B], rc[B], rd[B];
  rt_fill(a, B); rt_fill(b, B); rt_fill(c, B); rt_fill(d, B);
  rt_fill(ra, B); rt_fill(rb, B); rt_fill(rc, B); rt_fill(rd, B);
  MPI_Request rq[8];
  int right = (me + 1) % n, left = (me + n - 1) % n;
  int hright = (hr + 1) % hn, hleft = (hr + hn - 1) % hn;
  MPI_Irecv(ra, B, MPI_BYTE, left, 0, MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(rb, B, MPI_BYTE, hleft, 0, half, &rq[1]);
  MPI_Irecv(rc, B, MPI_BYTE, right, 0, dup, &rq[2]);
  MPI_Irecv(rd, B, MPI_BYTE, MPI_ANY_SOURCE, 0, half, &rq[3]);
  MPI_Isend(a, B, MPI_BYTE, right, 0, MPI_COMM_WORLD, &rq[4]);
  MPI_Isend(b, B, MPI_BYTE, hright, 0, half, &rq[5]);
  MPI_Isend(c, B, MPI_BYTE, left, 0, dup, &rq[6]);
  MPI_Isend(d, B, MPI_BYTE, hleft, 0, half, &rq[7]);
  MPI_Waitall(8, rq, MPI_STATUSES_IGNORE);

  /* native collectives */
  int64_t v[B], w[64 * B], x[B], y[64 * B];
  MT_REQUIRE(n <= 64);
  rt_fill(v, sizeof v); rt_fill(w, sizeof w); rt_fill(x, sizeof x); rt_fill(y, sizeof y);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(v, B, MPI_INT64_T, n - 1, MPI_COMM_WORLD);
  MPI_Gather(v, 2, MPI_INT64_T, w, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Scatter(w, 1, MPI_INT64_T, x, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y, 1, MPI_INT64_T, half);
  MPI_Alltoall(y, 1, MPI_INT64_T, w, 1, MPI_INT64_T, MPI_COMM_WORLD);
  MPI_Reduce(x, v, 2, MPI_INT64_T, MPI_SUM, 0, half);
  MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(w, y, 1, MPI_INT64_T, MPI_SUM, dup);
  int counts[64], displs[64];
  for (int i = 0; i < n; i++) counts[i] = 1, displs[i] = i;
  int64_t g[64];
  MPI_Gatherv(x, 1, MPI_INT64_T, g, counts, displs, MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  rt_keep(ra, B); rt_keep(rb, B); rt_keep(rc, B); rt_keep(rd, B);
  rt_keep(x, 3 * sizeof *x);
  rt_keep(y, sizeof *y);
  if (hr == 0) rt_keep(v, 2 * sizeof *v);
  return rt_finish();
}

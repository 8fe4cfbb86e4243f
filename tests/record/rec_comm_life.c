/* cdag tests — tests/record/rec_comm_life.c: communicators freed while their messages are
 * pending, and duplicates made without a blocking call.
 *
 * A ring message on a duplicate of the world is posted, the duplicate freed, and new
 * communicators split off (MPICH hands the freed handle to the next one) before the
 * message completes: it must be recorded on the communicator it was posted on. Then
 * MPI_Comm_dup_with_info, MPI_Comm_idup of the world and an MPI_Comm_idup of that duplicate
 * (a duplicate of a duplicate), each carrying a ring message and a collective: nothing here
 * is unsupported, and every message is matched. */
#include <string.h>

#include "rec_test.h"

enum { B = 16 };

/* A ring Sendrecv of B bytes on comm, tag t, and an allreduce of one int; checks both. */
static void ring(MPI_Comm comm, int t, uint8_t *out, uint8_t *in) {
  int r, n, sum = 0, one = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &n);
  MPI_Sendrecv(out, B, MPI_BYTE, (r + 1) % n, t, in, B, MPI_BYTE, (r + n - 1) % n, t, comm, MPI_STATUS_IGNORE);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
  MT_REQUIRE(sum == n);
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int me = rt_rank, n = rt_size, right = (me + 1) % n, left = (me + n - 1) % n;
  static uint8_t out[4][B], in[4][B];
  rt_fill(out, sizeof out);
  rt_fill(in, sizeof in);

  /* posted on a duplicate, completed after it was freed and its handle given again */
  MPI_Comm dup, split[3];
  MPI_Request rq[2];
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Irecv(in[0], B, MPI_BYTE, left, 7, dup, &rq[0]);
  MPI_Isend(out[0], B, MPI_BYTE, right, 7, dup, &rq[1]);
  MPI_Comm_free(&dup);
  for (int k = 0; k < 3; k++) MPI_Comm_split(MPI_COMM_WORLD, 0, me, &split[k]);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  ring(split[2], 7, out[1], in[1]);
  for (int k = 0; k < 3; k++) MPI_Comm_free(&split[k]);

  /* duplicates with info, and without a blocking call (one of another) */
  MPI_Comm winfo, i1, i2;
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &winfo);
  ring(winfo, 8, out[2], in[2]);
  MPI_Request r1, r2;
  MPI_Comm_idup(MPI_COMM_WORLD, &i1, &r1);
  MPI_Wait(&r1, MPI_STATUS_IGNORE);
  MPI_Comm_idup(i1, &i2, &r2);
  MPI_Wait(&r2, MPI_STATUS_IGNORE);
  ring(i1, 9, out[3], in[3]);
  MPI_Barrier(i2);
  ring(i2, 9, in[3], out[3]);
  MPI_Comm_free(&winfo);
  MPI_Comm_free(&i1);
  MPI_Comm_free(&i2);

  rt_keep(in, sizeof in);
  rt_keep(out, sizeof out);
  return rt_finish();
}

/* cdag tests — tests/record/rec_mpi4.c: MPI-4 calls the recorder does not record are counted.
 *
 * A ring exchange by MPI_Send_c and MPI_Recv_c (large-count forms), an MPI_Allreduce_c and an
 * MPI_Isendrecv, then an ordinary MPI_Sendrecv. The results are checked; the recording must
 * hold the MPI_Sendrecv and list the other four calls under `unsupported`, each with its
 * reason (CMakeLists.txt), where before they were missing without a word. */
#include "rec_test.h"

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int n = rt_size, me = rt_rank, right = (me + 1) % n, left = (me + n - 1) % n;
  int32_t v = me, got = -1, sum = 0, again = -1, last = -1;
  if (me % 2 == 0) {
    MPI_Send_c(&v, 1, MPI_INT32_T, right, 1, MPI_COMM_WORLD);
    MPI_Recv_c(&got, 1, MPI_INT32_T, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv_c(&got, 1, MPI_INT32_T, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send_c(&v, 1, MPI_INT32_T, right, 1, MPI_COMM_WORLD);
  }
  MT_REQUIRE(got == left);
  MPI_Allreduce_c(&v, &sum, 1, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  MT_REQUIRE(sum == n * (n - 1) / 2);
  MPI_Request rq;
  MPI_Isendrecv(&v, 1, MPI_INT32_T, right, 2, &again, 1, MPI_INT32_T, left, 2, MPI_COMM_WORLD, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MT_REQUIRE(again == left);
  MPI_Sendrecv(&v, 1, MPI_INT32_T, right, 3, &last, 1, MPI_INT32_T, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MT_REQUIRE(last == left);
  return rt_finish();
}

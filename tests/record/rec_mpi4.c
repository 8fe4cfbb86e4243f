/* cdag tests — tests/record/rec_mpi4.c: MPI-4's large-count and nonblocking sendrecv calls.
 *
 * A ring exchange by MPI_Send_c and MPI_Recv_c, an MPI_Allreduce_c, MPI_Ibcast_c and
 * MPI_Allgatherv_c (large-count forms of counts that fit an int: recorded as their int
 * forms), a persistent MPI_Allreduce_init_c (passed on to MPI, counted as unsupported with its
 * reason), an MPI_Isendrecv and an MPI_Isendrecv_replace (recorded: a send and a receive the
 * completion names), then an ordinary MPI_Sendrecv. The results are checked against the int
 * forms; the replay of the recording must leave what the recorded messages delivered
 * (CMakeLists.txt). */
#include "rec_test.h"

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int n = rt_size, me = rt_rank, right = (me + 1) % n, left = (me + n - 1) % n;
  int32_t v, got, check, sum, want = 0, again, twice, last, root_v, all[64];
  rt_fill(&v, sizeof v), rt_fill(&got, sizeof got), rt_fill(&again, sizeof again), rt_fill(&last, sizeof last);
  rt_fill(&sum, sizeof sum), rt_fill(&root_v, sizeof root_v);
  MT_REQUIRE(n <= 64);
  if (me % 2 == 0) {
    MPI_Send_c(&v, 1, MPI_INT32_T, right, 1, MPI_COMM_WORLD);
    MPI_Recv_c(&got, 1, MPI_INT32_T, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv_c(&got, 1, MPI_INT32_T, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send_c(&v, 1, MPI_INT32_T, right, 1, MPI_COMM_WORLD);
  }
  MPI_Sendrecv(&v, 1, MPI_INT32_T, right, 3, &check, 1, MPI_INT32_T, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MT_REQUIRE(got == check);
  MPI_Allreduce_c(&v, &sum, 1, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &want, 1, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  MT_REQUIRE(sum == want);
  MPI_Request bq;
  MPI_Ibcast_c(&root_v, 1, MPI_INT32_T, n - 1, MPI_COMM_WORLD, &bq);
  MPI_Wait(&bq, MPI_STATUS_IGNORE);
  MPI_Count ones[64], at[64];
  for (int j = 0; j < n; j++) ones[j] = 1, at[j] = j;
  MPI_Allgatherv_c(&v, 1, MPI_INT32_T, all, ones, at, MPI_INT32_T, MPI_COMM_WORLD);
  MT_REQUIRE(all[me] == v);
  int32_t psum = 0;
  MPI_Request pr;
  MPI_Allreduce_init_c(&v, &psum, 1, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pr);
  MPI_Start(&pr);
  MPI_Wait(&pr, MPI_STATUS_IGNORE);
  MPI_Request_free(&pr);
  MT_REQUIRE(psum == want);
  MPI_Request rq;
  MPI_Isendrecv(&v, 1, MPI_INT32_T, right, 2, &again, 1, MPI_INT32_T, left, 2, MPI_COMM_WORLD, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MT_REQUIRE(again == check);
  twice = again;   /* passed on once more, in place */
  MPI_Isendrecv_replace(&twice, 1, MPI_INT32_T, right, 5, left, 5, MPI_COMM_WORLD, &rq);
  int done = 0;
  while (!done) MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
  MPI_Sendrecv(&got, 1, MPI_INT32_T, right, 4, &last, 1, MPI_INT32_T, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  rt_keep(&got, sizeof got), rt_keep(&again, sizeof again), rt_keep(&twice, sizeof twice), rt_keep(&last, sizeof last);
  rt_keep(&sum, sizeof sum), rt_keep(&root_v, sizeof root_v), rt_keep(all, (size_t)n * sizeof *all);
  return rt_finish();
}

/* cdag tests — tests/record/rec_two_windows.c: atomics on two windows of one target, one of
 * them inside an exclusive epoch of the other window (3 processes; fewer: nothing to do).
 *
 * Rank 1 locks window A on rank 0 exclusively and makes its put complete there, then tells
 * rank 2, which locks A shared and makes a fetch-and-add on it, while rank 1, still inside
 * its exclusive epoch, makes a fetch-and-add on window B at rank 0 under a shared lock. The
 * recorder runs each of those atomics alone, under a lock word at rank 0: each window has
 * its own (a slot its members agree on), so rank 1's atomic on B never waits for a word
 * rank 2 might hold while rank 2 waits for rank 1's exclusive epoch on A. MPICH 4.0.2 grants
 * a lock inside MPI_Win_lock, before any atomic, so with one word for both windows this run
 * ends too: the test checks that the words per window work (the recording ends, both
 * fetch-and-adds recorded, the replay ends with the bytes MPI left). Rank 1's epochs of the
 * two windows on rank 0 are open at once: each window's are epochs of a communicator of its
 * own (record.h), so nothing is left out. */
#define _POSIX_C_SOURCE 200809L   /* nanosleep */
#include <time.h>

#include "rec_test.h"

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  uint64_t *a = malloc(2 * sizeof *a), *b = malloc(2 * sizeof *b), one, put, got_a, got_b, go = 1;
  MT_REQUIRE(a && b);
  rt_fill(a, 2 * sizeof *a); rt_fill(b, 2 * sizeof *b); rt_fill(&one, sizeof one); rt_fill(&put, sizeof put);
  rt_fill(&got_a, sizeof got_a); rt_fill(&got_b, sizeof got_b);
  MPI_Win wa, wb;
  MPI_Win_create(a, 2 * sizeof *a, sizeof *a, MPI_INFO_NULL, MPI_COMM_WORLD, &wa);
  MPI_Win_create(b, 2 * sizeof *b, sizeof *b, MPI_INFO_NULL, MPI_COMM_WORLD, &wb);
  if (rt_size >= 3 && rt_rank == 1) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, wa);
    MPI_Put(&put, 1, MPI_UINT64_T, 0, 1, 1, MPI_UINT64_T, wa);
    MPI_Win_flush(0, wa);
    MPI_Send(&go, 1, MPI_UINT64_T, 2, 0, MPI_COMM_WORLD);
    nanosleep(&(struct timespec){0, 500000000}, NULL);   /* rank 2's atomic on A waits for this epoch by now */
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wb);
    MPI_Fetch_and_op(&one, &got_b, MPI_UINT64_T, 0, 0, MPI_SUM, wb);
    MPI_Win_unlock(0, wb);
    MPI_Win_unlock(0, wa);
  } else if (rt_size >= 3 && rt_rank == 2) {
    MPI_Recv(&go, 1, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wa);
    MPI_Fetch_and_op(&one, &got_a, MPI_UINT64_T, 0, 0, MPI_SUM, wa);
    MPI_Win_unlock(0, wa);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&wa);
  MPI_Win_free(&wb);
  rt_keep(a, 2 * sizeof *a);
  rt_keep(b, 2 * sizeof *b);
  rt_keep(&got_a, sizeof got_a);
  rt_keep(&got_b, sizeof got_b);
  free(a);
  free(b);
  return rt_finish();
}

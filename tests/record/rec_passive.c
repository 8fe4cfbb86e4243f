/* cdag tests — tests/record/rec_passive.c: passive-target one-sided communication.
 *
 * A window of doubles from MPI_Win_create over every rank. In turn:
 *  1. MPI_Win_lock (exclusive) on the right neighbour, a put, MPI_Win_unlock, a barrier;
 *  2. MPI_Win_lock_all, a get of what the left neighbour's window now holds (the put of
 *     step 1, from its own left), MPI_Win_flush, a barrier, MPI_Win_unlock_all;
 *  3. an MPI_Rput to the right neighbour completed by MPI_Wait, then the unlock, a barrier;
 *  4. every rank accumulates (sum, unsigned) into rank 0's block under MPI_LOCK_SHARED, a
 *     barrier;
 *  5. rank 0 puts into the last rank's block and tells it with a message only: the target's
 *     fence goes where the last rank was when rank 0 read it at the unlock (before it
 *     received the message), not at a collective. A barrier ends it;
 *  6. rank 0 and another (the last rank at 2 processes, else the one before it) put into one
 *     block of the last rank under exclusive locks, then a barrier: the order of the two
 *     epochs is the locks', which the recording takes from their tickets (rank 0 waits 50 ms
 *     first, so that it usually locks second, against the order of the origins): the replay
 *     must leave the put that landed last;
 *  7. four epochs on the right neighbour, each reading its counter (a get, flushed),
 *     adding one and putting it back, then swapping two more counters for the next value with
 *     an MPI_Get_accumulate of a vector (MPI_REPLACE: two ranges, each fetched before it is
 *     put), while the
 *     left neighbour does the same here, then a barrier: nothing but where each rank was when
 *     the other read it orders the two ranks' epochs (placed at the barriers, they made the
 *     graph a cycle);
 *  8. a put to the right neighbour that only MPI_Win_free orders (it synchronises the
 *     window's members like a barrier).
 * The program checks what MPI did; the recording must pass check, analyze and verify, and
 * its replay must leave every byte of the window and of the get where MPI left them. */
#include <string.h>

#include "rec_test.h"

enum { N = 24 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size, last = rt_size - 1;
  double *w = malloc(N * sizeof *w), src[4], src3[4], got[4], note[2], src7[2], lsrc7[2];
  unsigned one[4];   /* integers: their sum is the same in any order */
  MT_REQUIRE(w != NULL);
  rt_fill(w, N * sizeof *w); rt_fill(src, sizeof src); rt_fill(src3, sizeof src3); rt_fill(got, sizeof got);
  rt_fill(note, sizeof note); rt_fill(one, sizeof one); rt_fill(src7, sizeof src7);
  unsigned acc0[4];   /* the accumulates' block (w[16], w[17] as 4 unsigned), as it starts */
  memcpy(acc0, &w[16], sizeof acc0);
  MPI_Win win;
  MPI_Win_create(w, N * sizeof *w, sizeof *w, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Barrier(MPI_COMM_WORLD);
  /* 1: lock, put, unlock; the barrier orders it at the target */
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
  MPI_Put(src, 4, MPI_DOUBLE, right, 0, 4, MPI_DOUBLE, win);
  MPI_Win_unlock(right, win);
  MPI_Barrier(MPI_COMM_WORLD);
  /* 2: lock_all, get, flush, barrier */
  MPI_Win_lock_all(0, win);
  MPI_Get(got, 4, MPI_DOUBLE, left, 0, 4, MPI_DOUBLE, win);
  MPI_Win_flush(left, win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_unlock_all(win);
  /* 3: a request-based put completed by MPI_Wait, then the unlock */
  MPI_Request rq;
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  MPI_Rput(src3, 4, MPI_DOUBLE, right, 8, 4, MPI_DOUBLE, win, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_Win_unlock(right, win);
  MPI_Barrier(MPI_COMM_WORLD);
  /* 4: accumulates from every rank under a shared lock */
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Accumulate(one, 4, MPI_UNSIGNED, 0, 16, 4, MPI_UNSIGNED, MPI_SUM, win);
  MPI_Win_unlock(0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  /* 5: ordered by a message only */
  int flag = 1;
  if (rt_rank == 0 && rt_size > 1) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, win);
    MPI_Put(note, 2, MPI_DOUBLE, last, 20, 2, MPI_DOUBLE, win);
    MPI_Win_unlock(last, win);
    MPI_Send(&flag, 1, MPI_INT, last, 7, MPI_COMM_WORLD);
  } else if (rt_rank == last && rt_size > 1) {
    MPI_Recv(&flag, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* 6: rank 0 and `other` put into the same bytes of the last rank under exclusive
     locks: the lock decides which lands last, and the tickets tell the recording */
  int other = rt_size > 2 ? last - 1 : last;
  if (rt_size > 1 && (rt_rank == 0 || rt_rank == other)) {
    double t0 = MPI_Wtime();
    while (rt_rank == 0 && MPI_Wtime() - t0 < 0.05) continue;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, win);
    MPI_Put(rt_rank ? &note[0] : &note[1], 1, MPI_DOUBLE, last, 22, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(last, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* 7: read, add one, write back, on the right neighbour's counter, four times */
  w[12] = w[13] = w[15] = 0;
  MPI_Datatype pair;   /* w[13] and w[15] */
  MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &pair);
  MPI_Type_commit(&pair);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 4 && rt_size > 1; i++) {
    double c, next[2] = {i + 1, i + 1}, was[2];
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Get(&c, 1, MPI_DOUBLE, right, 12, 1, MPI_DOUBLE, win);
    MPI_Win_flush(right, win);
    c += 1;
    MPI_Put(&c, 1, MPI_DOUBLE, right, 12, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(right, win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Get_accumulate(next, 2, MPI_DOUBLE, was, 2, MPI_DOUBLE, right, 13, 1, pair, MPI_REPLACE, win);
    MPI_Win_unlock(right, win);
    MT_REQUIRE(was[0] == i && was[1] == i);
  }
  MPI_Type_free(&pair);
  MPI_Barrier(MPI_COMM_WORLD);
  /* 8: a put ordered by MPI_Win_free alone (a barrier of the window's members) */
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  MPI_Put(src7, 2, MPI_DOUBLE, right, 18, 2, MPI_DOUBLE, win);
  MPI_Win_unlock(right, win);
  MPI_Win_free(&win);
  /* what MPI did: the left neighbour's src and src3, and its left's src, by message */
  double lsrc[4], lsrc3[4], llsrc[4];
  MPI_Sendrecv(src, 4, MPI_DOUBLE, right, 1, lsrc, 4, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(src3, 4, MPI_DOUBLE, right, 2, lsrc3, 4, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(lsrc, 4, MPI_DOUBLE, right, 3, llsrc, 4, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(src7, 2, MPI_DOUBLE, right, 4, lsrc7, 2, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MT_REQUIRE(memcmp(&w[18], lsrc7, sizeof lsrc7) == 0);  /* 8 */
  MT_REQUIRE(rt_size == 1 || (w[12] == 4 && w[13] == 4 && w[15] == 4));   /* 7 */
  MT_REQUIRE(memcmp(w, lsrc, sizeof lsrc) == 0);        /* 1 */
  MT_REQUIRE(memcmp(got, llsrc, sizeof got) == 0);      /* 2: the left's window held its left's put */
  MT_REQUIRE(memcmp(&w[8], lsrc3, sizeof lsrc3) == 0);  /* 3 */
  unsigned *all = malloc((size_t)rt_size * sizeof one), sum[4];   /* 4: every rank's one, summed */
  MT_REQUIRE(all != NULL);
  MPI_Allgather(one, 4, MPI_UNSIGNED, all, 4, MPI_UNSIGNED, MPI_COMM_WORLD);
  memcpy(sum, acc0, sizeof sum);
  for (int r = 0; r < rt_size; r++)
    for (int k = 0; k < 4; k++) sum[k] += all[4 * r + k];
  if (rt_rank == 0) MT_REQUIRE(memcmp(&w[16], sum, sizeof sum) == 0);
  free(all);
  rt_keep(w, 12 * sizeof *w);   /* 12 .. 15: the counters of 7, computed (the replay writes its own bytes there) */
  rt_keep(&w[16], 7 * sizeof *w);
  rt_keep(got, sizeof got);
  free(w);
  return rt_finish();
}

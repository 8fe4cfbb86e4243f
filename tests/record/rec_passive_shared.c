/* cdag tests — tests/record/rec_passive_shared.c: shared-lock epochs whose accesses to the
 * same bytes are ordered by messages inside the epochs (MPICH's rma/flush and rma/reqops).
 *
 * Every rank holds a shared lock on rank 0 for the whole loop. Four times, a token goes
 * around the ranks; each, holding it, swaps its rank into rank 0's w[0]
 * (MPI_Get_accumulate, MPI_REPLACE) and flushes, then passes the token on. Then the same
 * four times with MPI_Rget_accumulate completed by MPI_Wait, into w[1], no flush. Each rank
 * checks it fetched the rank before it. No lock, ticket or collective orders two ranks'
 * swaps: only the tokens do, so the recording must cut each epoch into pieces at the
 * flushes and completions (and before an access that follows a message), and order the
 * pieces by the tickets their ends took. The recording must list nothing unsupported,
 * pass check, analyze and verify, and replay to the bytes MPI left. */
#include "rec_test.h"

enum { N = 4, ITER = 4 };

/* Four swaps of this rank's token tok[slot] into rank 0's w[slot], in token order; got[i]:
   what each fetched (the token of the rank before, once rank 0's first has run). */
static void swaps(MPI_Win win, int slot, int requests, const double *tok, const double *all, double *got) {
  int prev = (rt_rank + rt_size - 1) % rt_size;
  for (int i = 0; i < ITER; i++) {
    if (rt_rank > 0) MPI_Recv(NULL, 0, MPI_BYTE, rt_rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (requests) {
      MPI_Request rq;
      MPI_Rget_accumulate(&tok[slot], 1, MPI_DOUBLE, &got[i], 1, MPI_DOUBLE, 0, slot, 1, MPI_DOUBLE, MPI_REPLACE, win,
                          &rq);
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else {
      MPI_Get_accumulate(&tok[slot], 1, MPI_DOUBLE, &got[i], 1, MPI_DOUBLE, 0, slot, 1, MPI_DOUBLE, MPI_REPLACE, win);
      MPI_Win_flush(0, win);
    }
    if (i > 0 || rt_rank > 0) MT_REQUIRE(got[i] == all[2 * prev + slot]);
    if (rt_rank < rt_size - 1) MPI_Send(NULL, 0, MPI_BYTE, rt_rank + 1, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  double *w = malloc(N * sizeof *w), *all = malloc(2 * (size_t)rt_size * sizeof *all), tok[2], got[2][ITER];
  MT_REQUIRE(w != NULL && all != NULL);
  rt_fill(w, N * sizeof *w); rt_fill(tok, sizeof tok); rt_fill(got, sizeof got);
  MPI_Allgather(tok, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Win win;
  MPI_Win_create(w, N * sizeof *w, sizeof *w, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  swaps(win, 0, 0, tok, all, got[0]);
  swaps(win, 1, 1, tok, all, got[1]);
  MPI_Win_unlock(0, win);
  MPI_Win_free(&win);
  if (rt_rank == 0) MT_REQUIRE(w[0] == all[2 * (rt_size - 1)] && w[1] == all[2 * (rt_size - 1) + 1]);
  rt_keep(w, N * sizeof *w);
  rt_keep(got, sizeof got);
  free(w);
  free(all);
  return rt_finish();
}

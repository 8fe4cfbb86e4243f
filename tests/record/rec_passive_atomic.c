/* cdag tests — tests/record/rec_passive_atomic.c: atomics racing under shared locks (the
 * shape of MPICH's rma/linked_list_lockall and rma/linked_list_fop).
 *
 * Nothing orders the ranks' atomics on rank 0's words but MPI, which runs them one at a
 * time in an order of its choosing:
 *  1. under lock_all, ITER fetch-and-adds on w[0], each flushed: w[0] ends ITER times the
 *     sum of the ranks' addends above where it began, and what each fetched is MPI's order;
 *  2. under lock_all, a compare-and-swap of each rank's number into w[1] from its first
 *     value: one rank wins; an accumulate replacing w[2] by the rank's token, and a
 *     get_accumulate (no-op) reading it (a list's tail written, and polled);
 *  3. ITER times a shared lock, a fetch-and-op replacing w[3] by the rank's token, unlock.
 * The recording must keep the order MPI chose (the recorder runs each atomic alone on its
 * target, its ticket taken before and after): nothing unsupported, check, analyze and
 * verify pass, and the replay ends with the bytes MPI left, the fetched values included. */
#include "rec_test.h"

enum { N = 4, ITER = 5 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  /* every value sent starts as the replay's bytes do (rt_fill): a recording takes the bytes
     it first sees for the program's input */
  uint64_t *w = malloc(N * sizeof *w), first[N], add, me, tok, added[ITER], cas, seen, swapped[ITER], sum = 0;
  MT_REQUIRE(w != NULL);
  rt_fill(w, N * sizeof *w); rt_fill(&add, sizeof add); rt_fill(&me, sizeof me); rt_fill(&tok, sizeof tok);
  rt_fill(added, sizeof added); rt_fill(&cas, sizeof cas); rt_fill(&seen, sizeof seen);
  rt_fill(swapped, sizeof swapped);
  memcpy(first, w, sizeof first);
  MPI_Bcast(first, N, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  MPI_Allreduce(&add, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Win win;
  MPI_Win_create(w, N * sizeof *w, sizeof *w, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < ITER; i++) {
    MPI_Fetch_and_op(&add, &added[i], MPI_UINT64_T, 0, 0, MPI_SUM, win);
    MPI_Win_flush(0, win);
  }
  MPI_Compare_and_swap(&me, &first[1], &cas, MPI_UINT64_T, 0, 1, win);
  MPI_Win_flush(0, win);
  MPI_Accumulate(&tok, 1, MPI_UINT64_T, 0, 2, 1, MPI_UINT64_T, MPI_REPLACE, win);
  MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &seen, 1, MPI_UINT64_T, 0, 2, 1, MPI_UINT64_T, MPI_NO_OP, win);
  MPI_Win_unlock_all(win);
  for (int i = 0; i < ITER; i++) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Fetch_and_op(&tok, &swapped[i], MPI_UINT64_T, 0, 3, MPI_REPLACE, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int won = cas == first[1], winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MT_REQUIRE(winners == 1);
  if (rt_rank == 0) MT_REQUIRE(w[0] == first[0] + ITER * sum);
  MPI_Win_free(&win);
  rt_keep(w, N * sizeof *w);
  rt_keep(added, sizeof added);
  rt_keep(&cas, sizeof cas);
  rt_keep(&seen, sizeof seen);
  rt_keep(swapped, sizeof swapped);
  free(w);
  return rt_finish();
}

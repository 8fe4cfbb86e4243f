/* cdag tests — tests/record/rec_alias_windows.c: two windows over one buffer, one origin's
 * epochs of both on one target open at once (2 processes; fewer: nothing to do).
 *
 * Rank 1 puts into rank 0's buffer through window A in an exclusive epoch, flushes (the put
 * is complete at rank 0), then, still inside that epoch, gets the same bytes through window B
 * under a shared lock: MPI (the unified model) gives it the put's value. Each window's
 * epochs are a communicator of their own, and their fences at rank 0 go by tickets: the
 * exclusive epoch's all by its closing ticket, so the nested epoch could land before it
 * opens and its get read the bytes before the put. The merger leaves both epochs out,
 * counted with their reason, rather than record that; the replay then holds none of the
 * get's bytes from the recording, and the rest as MPI left it. Built with SAME_SLOT
 * (rec_alias_slot), 61 windows come between the two, so both are one slot's: one
 * communicator, on which the merger meets a lock while an epoch is open, and leaves both
 * epochs out too (before, it kept the nested one, with the get's stale bytes). */
#include "rec_test.h"

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  uint64_t *a = malloc(2 * sizeof *a), put, got;
  MT_REQUIRE(a);
  rt_fill(a, 2 * sizeof *a);
  rt_fill(&put, sizeof put);
  rt_fill(&got, sizeof got);
  MPI_Win wa, wb;
  MPI_Win_create(a, 2 * sizeof *a, sizeof *a, MPI_INFO_NULL, MPI_COMM_WORLD, &wa);
#ifdef SAME_SLOT   /* 61 windows between: wb is the 63rd, in wa's slot (62 slots at 2 processes) */
  for (int k = 0; k < 61; k++) {
    MPI_Win w;
    MPI_Win_create(a, 2 * sizeof *a, sizeof *a, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    MPI_Win_free(&w);
  }
#endif
  MPI_Win_create(a, 2 * sizeof *a, sizeof *a, MPI_INFO_NULL, MPI_COMM_WORLD, &wb);
  if (rt_size >= 2 && rt_rank == 1) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, wa);
    MPI_Put(&put, 1, MPI_UINT64_T, 0, 1, 1, MPI_UINT64_T, wa);
    MPI_Win_flush(0, wa);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, wb);
    MPI_Get(&got, 1, MPI_UINT64_T, 0, 1, 1, MPI_UINT64_T, wb);
    MPI_Win_unlock(0, wb);
    MPI_Win_unlock(0, wa);
    MT_REQUIRE(got == put);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&wa);
  MPI_Win_free(&wb);
  rt_keep(a, 2 * sizeof *a);
  rt_keep(&got, sizeof got);
  free(a);
  return rt_finish();
}

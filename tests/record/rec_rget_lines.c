/* cdag tests — tests/record/rec_rget_lines.c: a request-based get whose target datatype is
 * two runs (two lines), then a put of the same bytes once the get completed.
 *
 * In an exclusive epoch every rank Rgets three ints of its right neighbour through an indexed type
 * (one int, then two ints after a gap: two runs of one length each, so two get lines), waits
 * for it, and puts three ints back through the same type. The wait must name both lines (the
 * get's bytes are the program's after both), and the put, which follows a completed get of
 * its bytes (defined in MPI), must be recorded, not left out as a conflict; the replay leaves
 * the window and the fetched ints as MPI did. */
#include "rec_test.h"

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size;
  int *w = malloc(16 * sizeof *w), *got = malloc(3 * sizeof *got), *v = malloc(3 * sizeof *v);
  MT_REQUIRE(w && got && v);
  rt_fill(w, 16 * sizeof *w); rt_fill(got, 3 * sizeof *got); rt_fill(v, 3 * sizeof *v);
  MPI_Win win;
  MPI_Win_create(w, 16 * sizeof *w, sizeof *w, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int len[2] = {1, 2}, at[2] = {0, 4};
  MPI_Datatype t;
  MPI_Type_indexed(2, len, at, MPI_INT, &t);
  MPI_Type_commit(&t);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
  MPI_Request rq;
  MPI_Rget(got, 3, MPI_INT, right, 0, 1, t, win, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_Put(v, 3, MPI_INT, right, 0, 1, t, win);
  MPI_Win_unlock(right, win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Type_free(&t);
  MPI_Win_free(&win);
  rt_keep(w, 16 * sizeof *w);
  rt_keep(got, 3 * sizeof *got);
  free(w); free(got); free(v);
  return rt_finish();
}

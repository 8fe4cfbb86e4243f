/* cdag tests — tests/record/rec_passive_reads.c: a target's bytes read again after it
 * computed them, with no call of its own in between.
 *
 * Each rank's window holds one double, which it recomputes every iteration (no MPI call
 * touches it: a local store). After a barrier, each rank reads its left neighbour's value
 * twice under one shared lock_all: into a double, then through a vector of two 4-byte
 * blocks (the same bytes at the target, cut otherwise at the origin), flushing after each.
 * The target makes no call for the reads, so only what each get fetched says that the
 * value changed: the recording must give each target a computation of its value before
 * each read after its first (ITERS - 1 per rank, index.json's target_computes), none
 * between the two reads of one iteration (the same bytes) (CMakeLists.txt). The values read
 * are computed, which a replay does not reproduce: it runs, compared with nothing. */
#include <string.h>

#include "rec_test.h"

enum { ITERS = 4 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  double *mine, got[ITERS], twice[ITERS];
  MPI_Win win;
  /* 64 bytes, not 8: Debian's MPICH 4.0.2 (ch4:ucx) serves a get from rank 1's 8-byte window
     out of rank 0's */
  MPI_Win_allocate(64, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
  rt_fill(mine, 64);
  rt_fill(got, sizeof got);
  rt_fill(twice, sizeof twice);
  MPI_Datatype halves;   /* 8 bytes as two blocks of 4, 8 apart: the origin's ranges differ */
  MPI_Type_vector(2, 4, 8, MPI_BYTE, &halves);
  MPI_Type_commit(&halves);
  unsigned char split[ITERS][16];
  int left = (rt_rank + rt_size - 1) % rt_size;
  MPI_Win_lock_all(0, win);
  for (int it = 0; it < ITERS; it++) {
    *mine = 1000.0 * rt_rank + it;   /* computed: no MPI call writes it */
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Get(&got[it], 1, MPI_DOUBLE, left, 0, 1, MPI_DOUBLE, win);
    MPI_Win_flush(left, win);
    MPI_Get(split[it], 1, halves, left, 0, 8, MPI_BYTE, win);
    MPI_Win_flush(left, win);
    memcpy(&twice[it], split[it], 4);
    memcpy((char *)&twice[it] + 4, split[it] + 8, 4);
    MT_REQUIRE(got[it] == 1000.0 * left + it && twice[it] == got[it]);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Win_unlock_all(win);
  MPI_Type_free(&halves);
  MPI_Win_free(&win);
  return rt_finish();
}

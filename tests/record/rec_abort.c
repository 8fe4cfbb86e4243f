/* cdag tests — tests/record/rec_abort.c: a process stops while the others wait in a barrier.
 *
 * Every rank exchanges a message with its neighbours and passes a barrier; then rank 0 calls
 * MPI_Abort while the others wait in a second barrier (what OpenCoarrays does when one image
 * executes `stop`). The recorder wrote the others' barrier as they entered it: cdag record
 * must leave it out (index.json's "interrupted"), so that the phase loads, analyses and
 * verifies, and exit with the command's status. */
#define _POSIX_C_SOURCE 200809L   /* nanosleep */
#include <time.h>

#include "rec_test.h"

enum { B = 16 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  uint8_t a[B], b[B];
  rt_ring(a, b, B);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rt_rank == 0) {
    nanosleep(&(struct timespec){0, 300000000}, NULL);   /* the others are in the barrier by then */
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Barrier(MPI_COMM_WORLD);   /* never completes */
  return rt_finish();
}

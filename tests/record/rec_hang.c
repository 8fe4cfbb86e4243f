/* cdag tests — tests/record/rec_hang.c: a program that is stopped from outside.
 *
 * Every rank exchanges a message with its neighbours, writes "exchanged" once (rank 0), then
 * waits up to 60 s for a message that never comes, as a long run does when a user presses
 * Ctrl-C or a batch system's time limit sends SIGTERM. tests/record/record_interrupt.sh
 * stops `cdag record` then, which must stop the program and merge what it wrote. */
#include <time.h>

#include "rec_test.h"

enum { B = 16 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  uint8_t a[B], b[B];
  rt_ring(a, b, B);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rt_rank == 0) {
    printf("exchanged\n");
    fflush(stdout);
  }
  int flag = 0;
  MPI_Request r;
  MPI_Irecv(b, B, MPI_BYTE, (rt_rank + rt_size - 1) % rt_size, 1, MPI_COMM_WORLD, &r);   /* never comes */
  for (int i = 0; i < 6000 && !flag; i++) {
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  return rt_finish();
}

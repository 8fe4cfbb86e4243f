/* cdag tests — tests/record/rec_crash.c: a program that crashes in the middle.
 *
 * Every rank exchanges a message with its neighbours, then rank 1 (rank 0 with one
 * process) dies of SIGSEGV before MPI_Finalize; mpiexec then ends the others. cdag record
 * must still merge what every process wrote, say that the run is incomplete, and exit
 * with the command's failure. */
#include <signal.h>

#include "rec_test.h"

enum { B = 16 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size;
  uint8_t a[B], b[B];
  rt_fill(a, B);
  rt_fill(b, B);
  MPI_Sendrecv(a, B, MPI_BYTE, right, 0, b, B, MPI_BYTE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rt_rank == (rt_size > 1)) raise(SIGSEGV);
  MPI_Recv(b, B, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);   /* never comes */
  return rt_finish();
}

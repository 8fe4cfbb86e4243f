/* cdag tests — tests/record/rec_crash.c: a program that crashes in the middle.
 *
 * Every rank exchanges a message with its neighbours, then rank 1 (rank 0 with one
 * process) dies of SIGSEGV before MPI_Finalize; mpiexec then ends the others. cdag record
 * must still merge what every process wrote, say that the run is incomplete, and exit
 * with the command's failure. Before the crash each rank computes on the bytes it sent and
 * sends them again (a computation) and calls MPI_Bcast of a float described by
 * MPI_Type_create_darray (which the recorder does not decode: not recorded); the rank that
 * crashes then computes and sends to itself 15 times more (15 computations, 17 calls of
 * MPI_Sendrecv: a count line carried past 9) and calls MPI_Bcast of that type on
 * MPI_COMM_SELF (not recorded). index.json must count all of it, calls included, though no process reached
 * MPI_Finalize, and name the three processes as unfinished. */
#include <signal.h>

#include "rec_test.h"

enum { B = 16 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int right = (rt_rank + 1) % rt_size, left = (rt_rank + rt_size - 1) % rt_size;
  uint8_t a[B], b[B];
  rt_fill(b, B);
  rt_ring(a, b, B);
  for (int i = 0; i < B; i++) a[i] = (uint8_t)(a[i] * 7 + i + 1);   /* computed: a computation */
  MPI_Sendrecv(a, B, MPI_BYTE, right, 2, b, B, MPI_BYTE, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  float one = (float)rt_rank;
  MPI_Datatype da;   /* one float: a distributed array over one process */
  int gsize = 1, distrib = MPI_DISTRIBUTE_BLOCK, darg = MPI_DISTRIBUTE_DFLT_DARG, psize = 1;
  MPI_Type_create_darray(1, 0, 1, &gsize, &distrib, &darg, &psize, MPI_ORDER_C, MPI_FLOAT, &da);
  MPI_Type_commit(&da);
  MPI_Bcast(&one, 1, da, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rt_rank == (rt_size > 1)) {
    for (int k = 0; k < 15; k++) {
      for (int i = 0; i < B; i++) a[i] = (uint8_t)(a[i] * 3 + k);   /* a computation each */
      MPI_Sendrecv(a, B, MPI_BYTE, 0, 3, b, B, MPI_BYTE, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    }
    MPI_Bcast(&one, 1, da, 0, MPI_COMM_SELF);
    raise(SIGSEGV);
  }
  MPI_Recv(b, B, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);   /* never comes */
  return rt_finish();
}

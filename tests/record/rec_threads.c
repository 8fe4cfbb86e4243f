/* cdag tests — tests/record/rec_threads.c: a process that asks for MPI_THREAD_MULTIPLE.
 *
 * Its threads may call MPI at once, which the recorder cannot order, so nothing of it is
 * recorded and index.json counts it as unsupported; the program still runs as it would.
 * With the argument `funneled` it asks for MPI_THREAD_FUNNELED only, and is recorded even
 * when MPI provides MULTIPLE (MPICH's MPIR_CVAR_ASYNC_PROGRESS=1 does). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  int provided, rank, size;
  int funneled = argc > 1 && !strcmp(argv[1], "funneled");
  MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int out = rank, in = -1;
  MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, 0, &in, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  if (in != (rank + size - 1) % size) {
    fprintf(stderr, "rank %d got %d\n", rank, in);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}

/* cdag tests — tests/record/rec_threads.c: a process that gets MPI_THREAD_MULTIPLE.
 *
 * Its threads may call MPI at once, which the recorder cannot order, so nothing of it is
 * recorded and index.json counts it as unsupported; the program still runs as it would. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
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

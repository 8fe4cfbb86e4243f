/* cdag example — examples/record/solver_step.c: an MPI program written without cdag, to be
 * recorded with `cdag record` (examples/record/README.md walks through it).
 *
 * Each of ITERS steps of a toy solver does what many codes do by hand:
 *   1. a dot product summed over all ranks by recursive doubling (MPI_Sendrecv, then the
 *      sum in the program), the classic hand-written allreduce;
 *   2. rank 0's new parameters sent down a binomial tree (each rank receives them and sends
 *      the same bytes on);
 *   3. every rank's residual sent to rank 0 (MPI_Irecv for each, MPI_Waitall): a gather;
 *   4. the parameters scaled by the dot product (local computation on received data).
 * Only the steps between MPI_Pcontrol(1) and MPI_Pcontrol(0) are recorded, one phase each.
 * Usage: mpiexec -n P solver_step [iterations]. It prints the final dot product. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 64, PARAMS = 16 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, iters = argc > 1 ? atoi(argv[1]) : 2;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double x[N], dot[1], tmp[1], params[PARAMS], residual[1], *all = malloc((size_t)size * sizeof *all);
  for (int i = 0; i < N; i++) x[i] = 1.0 / (1 + rank + i);
  for (int i = 0; i < PARAMS; i++) params[i] = rank == 0 ? i : 0;
  int p2 = 1;
  while (2 * p2 <= size) p2 *= 2;
  for (int it = 0; it < iters; it++) {
    MPI_Pcontrol(1);
    /* 1. dot product: local part, then recursive doubling (ranks beyond p2 fold in first) */
    dot[0] = 0;
    for (int i = 0; i < N; i++) dot[0] += x[i] * x[i];
    if (rank >= p2) {
      MPI_Send(dot, 1, MPI_DOUBLE, rank - p2, 1, MPI_COMM_WORLD);
      MPI_Recv(dot, 1, MPI_DOUBLE, rank - p2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      if (rank + p2 < size) {
        MPI_Recv(tmp, 1, MPI_DOUBLE, rank + p2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        dot[0] += tmp[0];
      }
      for (int d = 1; d < p2; d <<= 1) {
        MPI_Sendrecv(dot, 1, MPI_DOUBLE, rank ^ d, 0, tmp, 1, MPI_DOUBLE, rank ^ d, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        dot[0] += tmp[0];
      }
      if (rank + p2 < size) MPI_Send(dot, 1, MPI_DOUBLE, rank + p2, 2, MPI_COMM_WORLD);
    }
    /* 2. binomial tree broadcast of rank 0's parameters */
    int mask = 1;
    while (mask < size && !(rank & mask)) mask <<= 1;
    if (rank) MPI_Recv(params, PARAMS, MPI_DOUBLE, rank - mask, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (mask >>= 1; mask > 0; mask >>= 1)
      if (rank + mask < size) MPI_Send(params, PARAMS, MPI_DOUBLE, rank + mask, 3, MPI_COMM_WORLD);
    /* 3. residuals gathered to rank 0 */
    residual[0] = dot[0] / (rank + 1);
    if (rank == 0) {
      MPI_Request *rq = malloc((size_t)size * sizeof *rq);
      MPI_Status *st = malloc((size_t)size * sizeof *st);
      for (int r = 1; r < size; r++) MPI_Irecv(&all[r], 1, MPI_DOUBLE, r, 4, MPI_COMM_WORLD, &rq[r - 1]);
      MPI_Waitall(size - 1, rq, st);
      free(rq);
      free(st);
    } else {
      MPI_Send(residual, 1, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD);
    }
    MPI_Pcontrol(0);
    /* 4. computation between steps */
    for (int i = 0; i < PARAMS; i++) params[i] = params[i] * 0.5 + dot[0];
    for (int i = 0; i < N; i++) x[i] *= 0.9;
  }
  if (rank == 0) printf("dot = %.6f\n", dot[0]);
  free(all);
  MPI_Finalize();
  return 0;
}

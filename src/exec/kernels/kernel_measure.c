/* cdag — src/exec/kernels/kernel_measure.c: the cost model's alpha and beta, measured.
 *
 * A short ping-pong between ranks 0 and 1 of a communicator (8 B for alpha, 256 KiB for
 * beta), its result broadcast so every rank chooses alike; the environment (CDAG_ALPHA,
 * CDAG_BETA) still wins. Used at compile time when CDAG_MEASURE=1. */
#include <stdlib.h>

#include "exec/kernels/kernel_int.h"

/* Mean round-trip time of `iters` ping-pongs of `bytes` between ranks 0 and 1. */
static double pingpong(MPI_Comm comm, int rank, unsigned char *buf, int bytes, int iters) {
  int tag = KERN_TAG + 7;
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (rank == 0) {
      MPI_Send(buf, bytes, MPI_BYTE, 1, tag, comm);
      MPI_Recv(buf, bytes, MPI_BYTE, 1, tag, comm, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, bytes, MPI_BYTE, 0, tag, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, 0, tag, comm);
    }
  }
  return (MPI_Wtime() - t0) / iters;
}

int kern_model_measure(MPI_Comm comm, kern_model *m) {
  enum { SMALL = 8, LARGE = 1 << 18 };
  int rank = 0, size = 1;
  if (!m) return cdag__error(CDAG_ERR_ARG, "kern_model_measure: NULL model");
  *m = kern_model_builtin();
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "kern_model_measure: bad communicator");
  if (size > 1) {
    unsigned char *buf = calloc(1, LARGE);
    double v[2] = {0, 0};
    int ok = buf != NULL, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
      free(buf);
      return CDAG_NOMEM("model ping-pong buffer");
    }
    pingpong(comm, rank, buf, SMALL, 10);   /* warm-up */
    double small = pingpong(comm, rank, buf, SMALL, 200) / 2;
    pingpong(comm, rank, buf, LARGE, 2);
    double large = pingpong(comm, rank, buf, LARGE, 20) / 2;
    free(buf);
    v[0] = small;
    v[1] = (large - small) / (LARGE - SMALL);
    if (MPI_Bcast(v, 2, MPI_DOUBLE, 0, comm) != MPI_SUCCESS)
      return cdag__error(CDAG_ERR_MPI, "rank %d: kern_model_measure: MPI_Bcast failed", rank);
    if (v[0] > 0) m->alpha = v[0];
    if (v[1] > 0) m->beta = v[1];
  }
  kern__model_env(m);
  return CDAG_OK;
}


/* cdag — src/exec/kernels/kernel_measure.c: the cost model, measured.
 *
 * Between ranks 0 and 1 of a communicator: a short ping-pong (8 B for alpha, 256 KiB for
 * beta), and an exchange of 64 KiB each way as one message, as 32 messages of 2 KiB (their
 * difference: the overhead of each further message to the same peer) and packed from 32
 * pieces (gamma: packing and unpacking as they happen in a message, with the peer busy
 * too, not an idle memcpy). Rank 0's
 * result is broadcast so every rank chooses alike; the environment (CDAG_ALPHA, ...) still
 * wins. Used at compile time when CDAG_MEASURE=1 or options.measure = 1. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/kernels/kernel_int.h"

/* A barrier the ranks that do not measure wait in politely: sleeping between tests, so on
   an oversubscribed node they leave the cores to ranks 0 and 1 (spinning in MPI_Barrier,
   7 idle ranks on 2 cores made the measurement take 25 s instead of 2). */
static void sync_point(MPI_Comm comm, int rank) {
  MPI_Request r;
  MPI_Ibarrier(comm, &r);
  if (rank < 2) {
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    return;
  }
  int done = 0;
  struct timespec nap = {0, 500000};
  for (MPI_Test(&r, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&r, &done, MPI_STATUS_IGNORE)) nanosleep(&nap, NULL);
}

/* Mean round-trip time of `iters` ping-pongs of `bytes` between ranks 0 and 1. */
static double pingpong(MPI_Comm comm, int rank, unsigned char *buf, int bytes, int iters) {
  int tag = KERN_TAG_MEASURE;
  sync_point(comm, rank);
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

/* One exchange between ranks 0 and 1 of n pieces of `piece` bytes each way, as a residual
   message runs: SEP sends every piece as its own message, PACKED packs them by memcpy (from
   every other piece-sized slot of buf) into one message and unpacks it at the other end,
   PLAIN sends the same bytes as one contiguous message. The best of 5 batches of `iters`. */
enum { PLAIN, SEP, PACKED };
static double exchange(MPI_Comm comm, int rank, unsigned char *buf, int n, int piece, int how, int iters) {
  enum { MAXN = 64 };
  int tag = KERN_TAG_MEASURE, bytes = n * piece, peer = 1 - rank;
  unsigned char *out = buf + 2 * bytes, *in = out + bytes;
  MPI_Request rq[2 * MAXN];
  MPI_Status st[2 * MAXN];
  double best = 1e30;
  for (int batch = 0; batch < 5; batch++) {
    sync_point(comm, rank);   /* every rank: the others wait here while 0 and 1 exchange */
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters && rank < 2; i++) {
      int k = 0;
      if (how == SEP)
        for (int j = 0; j < n; j++) {
          MPI_Irecv(in + j * piece, piece, MPI_BYTE, peer, tag, comm, &rq[k++]);
          MPI_Isend(buf + 2 * j * piece, piece, MPI_BYTE, peer, tag, comm, &rq[k++]);
        }
      else {
        for (int j = 0; j < n && how == PACKED; j++) memcpy(out + j * piece, buf + 2 * j * piece, (size_t)piece);
        MPI_Irecv(in, bytes, MPI_BYTE, peer, tag, comm, &rq[k++]);
        MPI_Isend(out, bytes, MPI_BYTE, peer, tag, comm, &rq[k++]);
      }
      MPI_Waitall(k, rq, st);
      for (int j = 0; j < n && how == PACKED; j++) memcpy(buf + (2 * j + 1) * piece, in + j * piece, (size_t)piece);
    }
    double t = (MPI_Wtime() - t0) / iters;
    if (t < best) best = t;
  }
  return best;
}

int kern_model_measure(MPI_Comm comm, kern_model *m) {
  enum { SMALL = 8, LARGE = 1 << 18, PIECE = 2048, PIECES = 32 };
  int rank = 0, size = 1;
  if (!m) return cdag__error(CDAG_ERR_ARG, "kern_model_measure: NULL model");
  *m = kern_model_builtin();
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "kern_model_measure: bad communicator");
  if (size > 1) {
    unsigned char *buf = calloc(1, LARGE);
    double v[4] = {0, 0, 0, 0};
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
    exchange(comm, rank, buf, PIECES, PIECE, PACKED, 10);   /* warm-up */
    double plain = exchange(comm, rank, buf, PIECES, PIECE, PLAIN, 50);
    double sep = exchange(comm, rank, buf, PIECES, PIECE, SEP, 50);
    double packed = exchange(comm, rank, buf, PIECES, PIECE, PACKED, 50);
    v[0] = small;
    v[1] = (large - small) / (LARGE - SMALL);
    v[2] = (sep - plain) / (PIECES - 1);
    v[3] = (packed - plain) / (2.0 * PIECES * PIECE);
    free(buf);
    if (MPI_Bcast(v, 4, MPI_DOUBLE, 0, comm) != MPI_SUCCESS)
      return cdag__error(CDAG_ERR_MPI, "rank %d: kern_model_measure: MPI_Bcast failed", rank);
    if (v[0] > 0) m->alpha = v[0];
    if (v[1] > 0) m->beta = v[1];
    if (v[2] > 0) m->overhead = v[2];
    if (v[3] > 0) m->gamma = v[3];
  }
  kern__model_env(m);
  return CDAG_OK;
}

/* cdag — src/exec/kernels/kernel_measure.c: the cost model, measured.
 *
 * Between ranks 0 and 1 of a communicator: a short ping-pong (8 B for alpha, 256 KiB for
 * beta), and an exchange of 64 KiB each way as one message, as 32 messages of 2 KiB (their
 * difference: the overhead of each further message to the same peer) and packed from 32
 * pieces (gamma: packing and unpacking as they happen in a message, with the peer busy
 * too, not an idle memcpy). Rank 0's
 * result is broadcast so every rank chooses alike; the environment (CDAG_ALPHA, ...) still
 * wins. Every MPI call's return code is checked: a failure on any rank makes every rank
 * return CDAG_ERR_MPI naming the call, and no figure is used. Used at compile time when
 * CDAG_MEASURE=1 or options.measure = 1. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/kernels/kernel_int.h"

/* The measurement's state: every MPI call's return code is checked; the first failure is
   kept and the pattern goes on (a rank that stopped would leave its peer waiting), then
   all ranks agree on the outcome before using any figure. */
typedef struct {
  MPI_Comm comm;
  int rank;
  const char *failed;   /* the first MPI call that failed on this rank, NULL none */
} meas;

static void check(meas *x, int mpi_rc, const char *call) {
  if (mpi_rc != MPI_SUCCESS && !x->failed) x->failed = call;
}

/* A barrier the ranks that do not measure wait in politely: sleeping between tests, so on
   an oversubscribed node they leave the cores to ranks 0 and 1 (spinning in MPI_Barrier,
   7 idle ranks on 2 cores made the measurement take 25 s instead of 2). */
static void sync_point(meas *x) {
  MPI_Request r = MPI_REQUEST_NULL;
  check(x, MPI_Ibarrier(x->comm, &r), "MPI_Ibarrier");
  if (x->rank < 2) {
    check(x, MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
    return;
  }
  int done = 0, rc;
  struct timespec nap = {0, 500000};
  while ((rc = MPI_Test(&r, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done) nanosleep(&nap, NULL);
  check(x, rc, "MPI_Test");
}

/* Mean round-trip time of `iters` ping-pongs of `bytes` between ranks 0 and 1. */
static double pingpong(meas *x, unsigned char *buf, int bytes, int iters) {
  int tag = KERN_TAG_MEASURE;
  sync_point(x);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (x->rank == 0) {
      check(x, MPI_Send(buf, bytes, MPI_BYTE, 1, tag, x->comm), "MPI_Send");
      check(x, MPI_Recv(buf, bytes, MPI_BYTE, 1, tag, x->comm, MPI_STATUS_IGNORE), "MPI_Recv");
    } else if (x->rank == 1) {
      check(x, MPI_Recv(buf, bytes, MPI_BYTE, 0, tag, x->comm, MPI_STATUS_IGNORE), "MPI_Recv");
      check(x, MPI_Send(buf, bytes, MPI_BYTE, 0, tag, x->comm), "MPI_Send");
    }
  }
  return (MPI_Wtime() - t0) / iters;
}

/* One exchange between ranks 0 and 1 of n pieces of `piece` bytes each way, as a residual
   message runs: SEP sends every piece as its own message, PACKED packs them by memcpy (from
   every other piece-sized slot of buf) into one message and unpacks it at the other end,
   PLAIN sends the same bytes as one contiguous message. The best of 5 batches of `iters`. */
enum { PLAIN, SEP, PACKED };
static double exchange(meas *x, unsigned char *buf, int n, int piece, int how, int iters) {
  enum { MAXN = 64 };
  int tag = KERN_TAG_MEASURE, bytes = n * piece, peer = 1 - x->rank;
  unsigned char *out = buf + 2 * bytes, *in = out + bytes;
  MPI_Request rq[2 * MAXN];
  MPI_Status st[2 * MAXN];
  double best = 1e30;
  for (int batch = 0; batch < 5; batch++) {
    sync_point(x);   /* every rank: the others wait here while 0 and 1 exchange */
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters && x->rank < 2; i++) {
      int k = 0;
      if (how == SEP)
        for (int j = 0; j < n; j++) {
          check(x, MPI_Irecv(in + j * piece, piece, MPI_BYTE, peer, tag, x->comm, &rq[k++]), "MPI_Irecv");
          check(x, MPI_Isend(buf + 2 * j * piece, piece, MPI_BYTE, peer, tag, x->comm, &rq[k++]), "MPI_Isend");
        }
      else {
        for (int j = 0; j < n && how == PACKED; j++) memcpy(out + j * piece, buf + 2 * j * piece, (size_t)piece);
        check(x, MPI_Irecv(in, bytes, MPI_BYTE, peer, tag, x->comm, &rq[k++]), "MPI_Irecv");
        check(x, MPI_Isend(out, bytes, MPI_BYTE, peer, tag, x->comm, &rq[k++]), "MPI_Isend");
      }
      check(x, MPI_Waitall(k, rq, st), "MPI_Waitall");
      for (int j = 0; j < n && how == PACKED; j++) memcpy(buf + (2 * j + 1) * piece, in + j * piece, (size_t)piece);
    }
    double t = (MPI_Wtime() - t0) / iters;
    if (t < best) best = t;
  }
  return best;
}

/* Every rank's outcome, agreed: CDAG_OK everywhere, or CDAG_ERR_MPI everywhere. */
static int agree_outcome(meas *x) {
  int bad = x->failed != NULL, any = 1;
  if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, x->comm) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "rank %d: kern_model_measure: MPI_Allreduce failed", x->rank);
  if (bad) return cdag__error(CDAG_ERR_MPI, "rank %d: kern_model_measure: %s failed", x->rank, x->failed);
  if (any) return cdag__error(CDAG_ERR_MPI, "rank %d: kern_model_measure: an MPI call failed on another rank", x->rank);
  return CDAG_OK;
}

int kern_model_measure(MPI_Comm comm, kern_model *m) {
  enum { SMALL = 8, LARGE = 1 << 18, PIECE = 2048, PIECES = 32 };
  int rank = 0, size = 1;
  if (!m) return cdag__error(CDAG_ERR_ARG, "kern_model_measure: NULL model");
  *m = kern_model_builtin();
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "kern_model_measure: bad communicator");
  if (size > 1) {
    meas x = {comm, rank, NULL};
    unsigned char *buf = calloc(1, LARGE);
    double v[4] = {0, 0, 0, 0};
    int ok = buf != NULL, all_ok = 0;
    if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
      free(buf);
      return cdag__error(CDAG_ERR_MPI, "rank %d: kern_model_measure: MPI_Allreduce failed", rank);
    }
    if (!all_ok) {
      free(buf);
      return CDAG_NOMEM("model ping-pong buffer");
    }
    pingpong(&x, buf, SMALL, 10);   /* warm-up */
    double small = pingpong(&x, buf, SMALL, 200) / 2;
    pingpong(&x, buf, LARGE, 2);
    double large = pingpong(&x, buf, LARGE, 20) / 2;
    exchange(&x, buf, PIECES, PIECE, PACKED, 10);   /* warm-up */
    double plain = exchange(&x, buf, PIECES, PIECE, PLAIN, 50);
    double sep = exchange(&x, buf, PIECES, PIECE, SEP, 50);
    double packed = exchange(&x, buf, PIECES, PIECE, PACKED, 50);
    v[0] = small;
    v[1] = (large - small) / (LARGE - SMALL);
    v[2] = (sep - plain) / (PIECES - 1);
    v[3] = (packed - plain) / (2.0 * PIECES * PIECE);
    free(buf);
    int rc = agree_outcome(&x);
    if (rc) return rc;
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

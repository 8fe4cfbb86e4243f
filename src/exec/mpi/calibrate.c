/* cdag — src/exec/mpi/calibrate.c: measuring L, o, g, G, S, copy, rcopy, queue and the costs
 * by size on the MPI it runs on.
 *
 * What is measured and how the parameters follow is in calibrate.h. Each LogGOPS figure is
 * the median of repeated batches (a busy machine slows some batches, not most); the table
 * and queue take the best batch, as the benchmarks the model is checked against do. Every
 * batch starts from a handshake so both ranks begin together. Every MPI call's return code
 * is checked: the first failure is kept, the pattern goes on (a rank that stopped would leave
 * its peer waiting), and all ranks agree on the outcome before any figure is used; the
 * streams run by cdag's engine agree after each batch. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/mpi/calibrate.h"
#include "exec/mpi/schedule.h"

enum { TAG = 0x6364, BURST = 64, MAXBYTES = 1 << 18, TABLE_MAX = 1 << 20, BUFBYTES = 8 * TABLE_MAX };

typedef struct {
  int rank, peer, batches;
  const char *failed;    /* the first MPI call that failed on this rank, NULL none */
  unsigned char *buf;    /* BUFBYTES */
} cal;

static void check(cal *x, int mpi_rc, const char *call) {
  if (mpi_rc != MPI_SUCCESS && !x->failed) x->failed = call;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double least(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
  return m;
}

static void cal_send(cal *x, const void *b, int n) { check(x, MPI_Send(b, n, MPI_BYTE, x->peer, TAG, MPI_COMM_WORLD), "MPI_Send"); }
static void cal_recv(cal *x, void *b, int n) {
  check(x, MPI_Recv(b, n, MPI_BYTE, x->peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
}

/* One round trip of `bytes`, rank 0 first. */
static void round_trip(cal *x, int bytes) {
  if (x->rank == 0) cal_send(x, x->buf, bytes), cal_recv(x, x->buf, bytes);
  else cal_recv(x, x->buf, bytes), cal_send(x, x->buf, bytes);
}

/* One-way time of `bytes` (us): half the round trip, the median of the batches. */
static double oneway(cal *x, int bytes) {
  int iters = bytes >= 65536 ? 8 : bytes >= 4096 ? 40 : 100;
  double t[64];
  for (int b = 0; b < x->batches; b++) {
    round_trip(x, bytes);   /* both ranks start together, the buffers warm */
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) round_trip(x, bytes);
    t[b] = (MPI_Wtime() - t0) / iters / 2 * 1e6;
  }
  return median(t, x->batches);
}

/* Per round of an exchange of `bytes` each way, both ranks at once with nonblocking calls
   (receive posted, send, wait for both), as a phase of neighbour messages runs (us, median
   of the batches). */
static double exchange(cal *x, int bytes, int k) {
  enum { ITERS = 100, MAXK = 16 };
  unsigned char *out = x->buf, *in = x->buf + (size_t)bytes * MAXK;
  MPI_Request rq[2 * MAXK];
  MPI_Status st[2 * MAXK];
  double t[64];
  for (int b = 0; b < x->batches; b++) {
    round_trip(x, 0);   /* both ranks start together */
    double t0 = MPI_Wtime();
    for (int i = 0; i < ITERS; i++) {
      for (int j = 0; j < k; j++)
        check(x, MPI_Irecv(in + j * bytes, bytes, MPI_BYTE, x->peer, TAG + 2, MPI_COMM_WORLD, &rq[j]), "MPI_Irecv");
      for (int j = 0; j < k; j++)
        check(x, MPI_Isend(out + j * bytes, bytes, MPI_BYTE, x->peer, TAG + 2, MPI_COMM_WORLD, &rq[k + j]), "MPI_Isend");
      check(x, MPI_Waitall(2 * k, rq, st), "MPI_Waitall");
    }
    t[b] = (MPI_Wtime() - t0) / ITERS * 1e6;
  }
  return median(t, x->batches);
}

/* g (built on communicator two; rc: how building went) compiled as written and run iters
   times a batch, as cdag runs a graph as written (detect = 0): the model prices such runs,
   the engine's own cost per operation included (us per run, the best batch: the benchmarks
   the model is checked against take their best batch too). Frees g. */
static double run_as_written(cal *x, MPI_Comm two, cdag_graph *g, int rc, int iters) {
  cdag_schedule *s = NULL;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = 0;
  o.price = 0;
  rc = exec_agree(two, x->rank, 2, rc);   /* both ranks compile, or neither */
  if (!rc) rc = cdag_compile(g, &o, &s);   /* collective: the same code on both */
  cdag_graph_free(&g);
  if (rc) {
    if (!x->failed) x->failed = "cdag_compile of a graph of exchanges";
    return 0;
  }
  double t[64] = {0};
  for (int b = 0; b < x->batches && !rc; b++) {
    round_trip(x, 0);   /* both ranks start together */
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters && !rc; i++) rc = cdag_run(s);
    t[b] = (MPI_Wtime() - t0) / iters * 1e6;
    rc = exec_agree(two, x->rank, 2, rc);   /* a failure stops both ranks' batches */
  }
  if (rc && !x->failed) x->failed = "cdag_run of a graph of exchanges";
  cdag_schedule_free(&s);
  return least(t, x->batches);
}

/* A round of k messages of `bytes` each way between ranks 0 and 1, each receive just before
   its send, as a graph written one message at a time runs. */
static double stream(cal *x, MPI_Comm two, int bytes, int k) {
  cdag_graph *g = NULL;
  int rc = cdag_graph_create(two, &g);
  for (int j = 0; j < k && !rc; j++) {
    rc = cdag_recv(g, x->buf + (size_t)(k + j) * bytes, (size_t)bytes, x->peer, TAG + 3, NULL);
    if (!rc) rc = cdag_send(g, x->buf + (size_t)j * bytes, (size_t)bytes, x->peer, TAG + 3, NULL);
  }
  return run_as_written(x, two, g, rc, bytes > 65536 ? 2 : bytes > 1024 ? 10 : k > 16 ? 4 : 50);
}

/* One exchange of PACKED bytes each way, packed before from PIECES blocks at twice their
   length apart and unpacked after alike (a plan's residual message, or a program's face): the
   copies next to a message above S (rcopy). Buffer: the blocks read at 0, the packing area at
   2 PACKED, the receive at 3 PACKED, the blocks written at 4 PACKED (6 PACKED in all). */
enum { PACKED = 262144, PIECES = 32 };
static double packed_exchange(cal *x, MPI_Comm two) {
  unsigned char *from = x->buf, *out = x->buf + 2 * PACKED, *in = x->buf + 3 * PACKED, *to = x->buf + 4 * PACKED;
  size_t len = PACKED / PIECES;
  cdag_graph *g = NULL;
  int rc = cdag_graph_create(two, &g);
  for (int j = 0; j < PIECES && !rc; j++) rc = cdag_copy_local(g, from + 2 * j * len, out + j * len, len, NULL);
  if (!rc) rc = cdag_recv(g, in, PACKED, x->peer, TAG + 4, NULL);
  if (!rc) rc = cdag_send(g, out, PACKED, x->peer, TAG + 4, NULL);
  for (int j = 0; j < PIECES && !rc; j++) rc = cdag_copy_local(g, in + j * len, to + 2 * j * len, len, NULL);
  return run_as_written(x, two, g, rc, 2);
}

/* The table's sizes: every power of 2 from 8 B to 64 KiB (shared memory's costs step
   between neighbours: 64 to 128 B, 8 to 16 KiB), then 256 KiB and 1 MiB. */
static int table_sizes(double *v) {
  int n = 0;
  for (double s = 8; s <= 65536; s *= 2) v[n++] = s;
  v[n++] = 262144;
  v[n++] = TABLE_MAX;
  return n;
}

/* queue, then the table of costs by size (choose.h), as the model's inverse gives them
   (loggp_fit_queue, loggp_fit_row): queue from streams of 16 and 512 exchanges of 8 B, then
   per size one exchange E_1 and a stream of k = 16 (4 from 256 KiB: the buffer). */
static void table(cal *x, MPI_Comm two, exec_calibration *c) {
  loggp_params *lp = &c->lp;
  c->stream_first_us = stream(x, two, 8, 16);
  lp->queue = loggp_fit_queue(c->stream_first_us, stream(x, two, 8, 512));
  lp->ntab = table_sizes(lp->tab_size);
  for (int i = 0; i < lp->ntab; i++) {
    int bytes = (int)lp->tab_size[i], k = bytes < 262144 ? 16 : 4;
    double one = stream(x, two, bytes, 1);
    loggp_fit_row(one, stream(x, two, bytes, k), k, lp->queue, &lp->tab_pair[i], &lp->tab_round[i]);
  }
  /* rcopy: what packing and unpacking add to that exchange alone, per byte copied (at least copy) */
  double per_byte = (packed_exchange(x, two) - stream(x, two, PACKED, 1)) / (2.0 * PACKED);
  lp->rcopy = per_byte > lp->copy ? per_byte : lp->copy;
  c->stream_last_us = stream(x, two, 8, 16);   /* the first stream again: did the machine keep its speed? */
}

/* Bursts of BURST messages of 8 B into receives posted ahead (a token says they are):
   *post the time to post one send, *per the time per message of the burst once the first
   one's one-way time t1 and the acknowledgement's are taken off (us, medians). */
static void burst(cal *x, double t1, double *post, double *per) {
  MPI_Request rq[BURST];
  MPI_Status st[BURST];
  double tp[64], tg[64];
  char token = 0;
  for (int b = 0; b < x->batches; b++) {
    if (x->rank == 1) {
      for (int i = 0; i < BURST; i++)
        check(x, MPI_Irecv(x->buf + 8 * i, 8, MPI_BYTE, 0, TAG + 1, MPI_COMM_WORLD, &rq[i]), "MPI_Irecv");
      cal_send(x, &token, 1);
      check(x, MPI_Waitall(BURST, rq, st), "MPI_Waitall");
      cal_send(x, &token, 1);
      continue;
    }
    cal_recv(x, &token, 1);
    double t0 = MPI_Wtime();
    for (int i = 0; i < BURST; i++)
      check(x, MPI_Isend(x->buf + 8 * i, 8, MPI_BYTE, 1, TAG + 1, MPI_COMM_WORLD, &rq[i]), "MPI_Isend");
    double t_post = MPI_Wtime();
    check(x, MPI_Waitall(BURST, rq, st), "MPI_Waitall");
    cal_recv(x, &token, 1);
    double t_end = MPI_Wtime();
    tp[b] = (t_post - t0) / BURST * 1e6;
    tg[b] = ((t_end - t0) * 1e6 - 2 * t1) / (BURST - 1);
  }
  if (x->rank == 1) return;
  *post = median(tp, x->batches);
  *per = median(tg, x->batches);
  if (*per < 0) *per = 0;
}

/* memcpy of 64 KiB, us/B (median of the batches); the copies are read back, so none is
   left out by the compiler. */
static double copy_cost(cal *x) {
  enum { N = 65536, REPS = 16 };
  unsigned char *a = x->buf, *b = x->buf + N;
  double t[64];
  volatile unsigned char sink = 0;
  for (int k = 0; k < x->batches; k++) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < REPS; i++) {
      memcpy(i % 2 ? a : b, i % 2 ? b : a, N);
      sink ^= a[i];
    }
    t[k] = (MPI_Wtime() - t0) / REPS / N * 1e6;
  }
  (void)sink;
  return median(t, x->batches);
}

/* Least squares line through (s[i], y[i]), i in [lo, hi]: *a + *b s. */
static void fit(const double *s, const double *y, int lo, int hi, double *a, double *b) {
  double n = hi - lo + 1, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = lo; i <= hi; i++) sx += s[i], sy += y[i], sxx += s[i] * s[i], sxy += s[i] * y[i];
  double d = n * sxx - sx * sx;
  *b = d > 0 ? (n * sxy - sx * sy) / d : 0;
  *a = (sy - *b * sx) / n;
}

/* Squared relative distance of (s[i], y[i]), i in [lo, hi], from their line. */
static double misfit(const double *s, const double *y, int lo, int hi) {
  double a, b, e = 0;
  fit(s, y, lo, hi, &a, &b);
  for (int i = lo; i <= hi; i++) e += (y[i] - a - b * s[i]) * (y[i] - a - b * s[i]) / (y[i] * y[i]);
  return e;
}

/* S and G from the ping-pong (512 B on): two lines, split where they fit best; when the
   second starts above the first by more than half the smallest message's time (the extra
   handshake of a rendezvous), S is the last size of the first line. G is the first
   line's slope (the sizes up to S, those residual messages have). */
static void threshold(exec_calibration *c) {
  const double *s = c->size, *y = c->oneway;
  int first = 2, last = CAL_NSIZES - 1, split = -1;
  double jump = 0.5 * y[0] > 0.1 ? 0.5 * y[0] : 0.1, best = misfit(s, y, first, last), a, b, a2, b2;
  for (int k = first + 1; k + 2 <= last; k++) {
    double e = misfit(s, y, first, k) + misfit(s, y, k + 1, last);
    if (e >= 0.5 * best) continue;   /* two lines must fit much better than one */
    fit(s, y, first, k, &a, &b);
    fit(s, y, k + 1, last, &a2, &b2);
    if (a2 + b2 * s[k + 1] - (a + b * s[k + 1]) > jump) best = e, split = k;
  }
  c->s_seen = split >= 0;
  c->lp.S = c->s_seen ? (uint64_t)s[split] : 65535;
  fit(s, y, first, c->s_seen ? split : last, &a, &b);
  c->lp.G = b > 0 ? b : 0;
}

static const int sizes[CAL_NSIZES] = {8, 64, 512, 1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768, 65536,
                                      131072, MAXBYTES};

/* Ranks 0 and 1 measure; the figures are rank 0's. */
static void measure(cal *x, MPI_Comm two, exec_calibration *c) {
  for (int i = 0; i < CAL_NSIZES; i++) {
    c->size[i] = sizes[i];
    c->oneway[i] = oneway(x, sizes[i]);
  }
  /* the latency the burst's time is taken from: a stall in the 8 B batches (3 ms once, under
     a sanitizer on a busy machine) must not leave g at 0; 64 B takes no less */
  burst(x, c->oneway[0] < c->oneway[1] ? c->oneway[0] : c->oneway[1], &c->post_us, &c->burst_us);
  c->lp.copy = copy_cost(x);
  threshold(c);
  c->lp.g = c->burst_us;
  c->exchange_us = exchange(x, 8, 1);
  c->exchange4k_us = exchange(x, 4096, 1);
  c->exchange16_us = exchange(x, 8, 16);
  /* o: what each further message each way adds to a round, a send and a receive on each
     CPU (LogGOPS: 2o per message pair); the time to post a send when that is not seen. */
  double o = (c->exchange16_us - c->exchange_us) / 30;
  c->lp.o = o > c->post_us ? o : c->post_us;
  /* LogGOPS: a round of an exchange of s bytes both ways is 2o + max(L, (s-1)O) + (s-1)G
     when O <= G (each CPU copies its own send out, then takes the other's in): 2o + L + 7G
     at 8 B, 2o + 4095(O + G) at 4 KiB where copying outlasts the latency. */
  double O = (c->exchange4k_us - 2 * c->lp.o) / 4095 - c->lp.G;
  c->lp.O = O < 0 ? 0 : O > c->lp.G ? c->lp.G : O;
  double L = c->exchange_us - 2 * c->lp.o - 7 * c->lp.G;
  c->lp.L = L > 0 ? L : 0;
  table(x, two, c);
}

/* Ranks beyond 1 wait for 0 and 1 sleeping between tests, leaving them the cores. */
static void wait_politely(cal *x, int nprocs) {
  MPI_Request r = MPI_REQUEST_NULL;
  check(x, MPI_Ibarrier(MPI_COMM_WORLD, &r), "MPI_Ibarrier");
  int done = 0, rc = MPI_SUCCESS;
  struct timespec nap = {0, 1000000};
  while (x->rank >= 2 && nprocs > 2 && (rc = MPI_Test(&r, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
    nanosleep(&nap, NULL);
  check(x, rc, "MPI_Test");
  if (!done) check(x, MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
}

int exec_calibrate(int quick, exec_calibration *c) {
  int rank = 0, nprocs = 0, len = 0;
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  memset(c, 0, sizeof *c);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  c->nprocs = nprocs;
  if (nprocs < 2) return cdag__error(CDAG_ERR_ARG, "calibrate: needs 2 processes or more (mpiexec -n 2), has %d", nprocs);
  cal x = {rank, 1 - rank, quick ? 5 : 31, NULL, malloc(BUFBYTES)};
  int rc = x.buf ? CDAG_OK : CDAG_NOMEM("calibrate: 8 MiB buffer");
  if ((rc = exec_agree(MPI_COMM_WORLD, rank, nprocs, rc))) {
    free(x.buf);
    return rc;
  }
  memset(x.buf, 1, BUFBYTES);
  MPI_Comm two = MPI_COMM_NULL;   /* ranks 0 and 1, for the streams run by cdag's engine */
  int mrc = MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &two);
  rc = mrc == MPI_SUCCESS ? CDAG_OK : sched_mpi_error(mrc, "MPI_Comm_split", rank);
  if ((rc = exec_agree(MPI_COMM_WORLD, rank, nprocs, rc))) {
    free(x.buf);
    return rc;
  }
  double t0 = MPI_Wtime();
  if (rank < 2) measure(&x, two, c);
  wait_politely(&x, nprocs);
  if (two != MPI_COMM_NULL) MPI_Comm_free(&two);
  c->seconds = MPI_Wtime() - t0;
  check(&x, MPI_Get_library_version(lib, &len), "MPI_Get_library_version");
  lib[strcspn(lib, "\r\n")] = '\0';
  size_t n = strlen(lib) < sizeof c->library ? strlen(lib) : sizeof c->library - 1;   /* its first line, cut */
  memcpy(c->library, lib, n);
  c->library[n] = '\0';
  rc = x.failed ? cdag__error(CDAG_ERR_MPI, "calibrate: rank %d: %s failed", rank, x.failed) : CDAG_OK;
  free(x.buf);
  if ((rc = exec_agree(MPI_COMM_WORLD, rank, nprocs, rc))) return rc;
  int brc = MPI_Bcast(c, (int)sizeof *c, MPI_BYTE, 0, MPI_COMM_WORLD);   /* every rank reports rank 0's */
  return exec_agree(MPI_COMM_WORLD, rank, nprocs, brc == MPI_SUCCESS ? CDAG_OK
                                                  : cdag__error(CDAG_ERR_MPI, "calibrate: rank %d: MPI_Bcast failed", rank));
}

/* cdag benchmark — cdag_run against hand-written MPI (a benchmark, not a test).
 *
 * For each pattern (alltoall, allgather, bcast, allreduce) and message size, on every rank
 * of MPI_COMM_WORLD, it times one run of:
 *   p2p:   the hand-written point-to-point loop (Isend/Irecv + Waitall; allreduce: the
 *          linear reduce-to-0-and-send-back loop with local reductions);
 *   mpi:   the MPI collective called directly (MPI_Alltoall, MPI_Allgather, MPI_Bcast,
 *          MPI_Allreduce);
 *   cdag:  cdag_run of the schedule compiled from the same point-to-point graph;
 * and reports the compile time and the break-even number of iterations (compile time over
 * the time cdag saves per run against the p2p loop; "-" when it saves nothing).
 * Times are per run: the mean of a timed batch (started after a barrier, maximum over
 * ranks), the best of 9 batches per variant, the variants taking turns. Usage:
 *   mpiexec -n 2 mpi_bench [max_bytes (default 1 MiB)] [pattern] */
#include <cdag.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int R, P;
enum { REPS = 9 };             /* timed batches per variant */
static size_t MAXB = 1 << 20;
static unsigned char *sbuf, *rbuf, *tmp;

#define TRY(call)                                                                              \
  do {                                                                                         \
    int rc_ = (call);                                                                          \
    if (rc_) {                                                                                 \
      fprintf(stderr, "rank %d: %s: %s\n", R, #call, cdag_error_message());                    \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                            \
    }                                                                                          \
  } while (0)

typedef enum { ALLTOALL, ALLGATHER, BCAST, ALLREDUCE, NPAT } pattern;
static const char *pat_name[NPAT] = {"alltoall", "allgather", "bcast", "allreduce"};

/* ---- the three ways to run a pattern ---- */

static void run_p2p(pattern pt, size_t n) {
  static MPI_Request rq[2 * 1024];
  static MPI_Status st[2 * 1024];
  int k = 0;
  switch (pt) {
  case ALLTOALL:
  case ALLGATHER:
    for (int i = 0; i < P; i++) {
      MPI_Irecv(rbuf + n * i, (int)n, MPI_BYTE, i, 0, MPI_COMM_WORLD, &rq[k++]);
      MPI_Isend(sbuf + (pt == ALLTOALL ? n * i : 0), (int)n, MPI_BYTE, i, 0, MPI_COMM_WORLD, &rq[k++]);
    }
    break;
  case BCAST:
    if (R == 0)
      for (int i = 1; i < P; i++) MPI_Isend(sbuf, (int)n, MPI_BYTE, i, 0, MPI_COMM_WORLD, &rq[k++]);
    else
      MPI_Irecv(sbuf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &rq[k++]);
    break;
  case ALLREDUCE: {
    size_t cnt = n / sizeof(double);
    double *x = (double *)sbuf, *r = (double *)rbuf, *t = (double *)tmp;
    if (R != 0) {
      MPI_Send(x, (int)cnt, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
      MPI_Recv(r, (int)cnt, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      return;
    }
    memcpy(r, x, n);
    for (int i = 1; i < P; i++) {
      MPI_Recv(t, (int)cnt, MPI_DOUBLE, i, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (size_t e = 0; e < cnt; e++) r[e] += t[e];
    }
    for (int i = 1; i < P; i++) MPI_Isend(r, (int)cnt, MPI_DOUBLE, i, 2, MPI_COMM_WORLD, &rq[k++]);
    break;
  }
  default:
    break;
  }
  MPI_Waitall(k, rq, st);
}

static void run_mpi(pattern pt, size_t n) {
  switch (pt) {
  case ALLTOALL: MPI_Alltoall(sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE, MPI_COMM_WORLD); break;
  case ALLGATHER: MPI_Allgather(sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE, MPI_COMM_WORLD); break;
  case BCAST: MPI_Bcast(sbuf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD); break;
  case ALLREDUCE:
    MPI_Allreduce(sbuf, rbuf, (int)(n / sizeof(double)), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    break;
  default: break;
  }
}

/* The p2p loop as a cdag graph. */
static void build(cdag_graph *g, pattern pt, size_t n) {
  switch (pt) {
  case ALLTOALL:
  case ALLGATHER:
    for (int i = 0; i < P; i++) {
      TRY(cdag_send(g, sbuf + (pt == ALLTOALL ? n * i : 0), n, i, 0, NULL));
      TRY(cdag_recv(g, rbuf + n * i, n, i, 0, NULL));
    }
    break;
  case BCAST:
    if (R == 0)
      for (int i = 1; i < P; i++) TRY(cdag_send(g, sbuf, n, i, 0, NULL));
    else
      TRY(cdag_recv(g, sbuf, n, 0, 0, NULL));
    break;
  case ALLREDUCE:
    TRY(cdag_scratch(g, tmp, n));
    if (R != 0) {
      TRY(cdag_send(g, sbuf, n, 0, 1, NULL));
      TRY(cdag_recv(g, rbuf, n, 0, 2, NULL));
      break;
    }
    TRY(cdag_copy_local(g, sbuf, rbuf, n, NULL));
    for (int i = 1; i < P; i++) {
      TRY(cdag_recv(g, tmp, n, i, 1, NULL));
      TRY(cdag_reduce_local(g, tmp, rbuf, n / sizeof(double), MPI_DOUBLE, MPI_SUM, NULL));
    }
    for (int i = 1; i < P; i++) TRY(cdag_send(g, rbuf, n, i, 2, NULL));
    break;
  default:
    break;
  }
}

/* ---- timing ---- */

typedef struct { pattern pt; size_t n; cdag_schedule *s; int how; } job;

static void once(const job *j) {
  if (j->how == 0) run_p2p(j->pt, j->n);
  else if (j->how == 1) run_mpi(j->pt, j->n);
  else TRY(cdag_run(j->s));
}

/* One timed batch of iters runs after a barrier; seconds per run, maximum over ranks. */
static double batch(const job *j, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int it = 0; it < iters; it++) once(j);
  double t = (MPI_Wtime() - t0) / iters, tmax;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

static void bench(pattern pt, size_t n) {
  cdag_graph *g;
  cdag_schedule *s;
  int iters = n <= 4096 ? 2000 : n <= 65536 ? 400 : 40;
  TRY(cdag_graph_create(MPI_COMM_WORLD, &g));
  build(g, pt, n);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  TRY(cdag_compile(g, NULL, &s));
  double tc = MPI_Wtime() - t0, tcmax;
  MPI_Allreduce(&tc, &tcmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  TRY(cdag_graph_free(&g));
  /* the three variants take turns, so a busy machine slows them alike; best batch wins */
  job j[3] = {{pt, n, s, 0}, {pt, n, s, 1}, {pt, n, s, 2}};
  double best[3] = {1e30, 1e30, 1e30};
  for (int v = 0; v < 3; v++)
    for (int k = 0; k < 3; k++) once(&j[v]);
  for (int rep = 0; rep < REPS; rep++)
    for (int v = 0; v < 3; v++) {
      double t = batch(&j[v], iters);
      if (t < best[v]) best[v] = t;
    }
  TRY(cdag_schedule_free(&s));
  if (R != 0) return;
  double t_p2p = best[0], t_mpi = best[1], t_cdag = best[2];
  char be[32] = "-";
  if (t_cdag < t_p2p) snprintf(be, sizeof be, "%.0f", tcmax / (t_p2p - t_cdag));
  printf("%-10s %9zu %11.2f %11.2f %11.2f %+8.1f%% %+9.2f %11.3f %10s\n", pat_name[pt], n, t_p2p * 1e6, t_mpi * 1e6,
         t_cdag * 1e6, (t_cdag / t_mpi - 1) * 100, (t_cdag - t_mpi) * 1e6, tcmax * 1e3, be);
  fflush(stdout);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (argc > 1) MAXB = (size_t)atol(argv[1]);
  if (P > 1024 || MAXB < 8) {
    if (R == 0) fprintf(stderr, "mpi_bench: at most 1024 ranks, sizes of at least 8 bytes\n");
    MPI_Finalize();
    return 1;
  }
  sbuf = calloc((size_t)P, MAXB);
  rbuf = calloc((size_t)P, MAXB);
  tmp = calloc(1, MAXB);
  for (size_t k = 0; k < (size_t)P * MAXB; k++) sbuf[k] = (unsigned char)(k * 7 + R);
  if (R == 0) {
    printf("cdag mpi_bench: %d ranks; microseconds per run (best of %d batches, max over ranks)\n", P, REPS);
    printf("%-10s %9s %11s %11s %11s %9s %9s %11s %10s\n", "pattern", "bytes", "p2p_us", "mpi_us", "cdag_us",
           "vs_mpi", "diff_us", "compile_ms", "break_even");
  }
  for (int pt = 0; pt < NPAT; pt++) {
    if (argc > 2 && strcmp(argv[2], pat_name[pt]) != 0) continue;
    static const size_t sizes[] = {8, 64, 1024, 16384, 131072, 1048576, 8388608};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes && sizes[k] <= MAXB; k++) bench((pattern)pt, sizes[k]);
  }
  free(sbuf);
  free(rbuf);
  free(tmp);
  MPI_Finalize();
  return 0;
}

/* cdag benchmark — computation overlapped with a compiled phase (a benchmark, not a test).
 *
 * A 1 MiB allgather and a 1 MiB bcast written point-to-point are compiled; then, per
 * computation time T (0, half, once and twice the phase's own time C), a run is cdag_start,
 * T microseconds of computation that calls cdag_test every `every` microseconds (as users
 * call MPI_Test), then cdag_wait. It prints the time per run against max(T, C): 1.00 is
 * perfect overlap, T + C none. MPI's own MPI_Iallgather / MPI_Ibcast, driven by MPI_Test
 * the same way, is the reference (mpi_ratio: against max(T, MPI's own time)). Times: best
 * of 9 batches, maximum over ranks.
 * Usage: mpiexec -n 2 overlap_bench [bytes (default 1 MiB)] [test interval us (default 20)] */
#include <cdag.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int R, P;
static volatile double sink;   /* the computation's result, so it is not optimised away */

#define TRY(call)                                                                \
  do {                                                                           \
    if ((call) != CDAG_OK) {                                                     \
      fprintf(stderr, "rank %d: %s: %s\n", R, #call, cdag_error_message());      \
      MPI_Abort(MPI_COMM_WORLD, 2);                                              \
    }                                                                            \
  } while (0)

/* MPI's own nonblocking collective of the same pattern (the reference for overlap). */
typedef struct {
  int pat;                 /* 0 allgather, 1 bcast */
  unsigned char *a, *all;
  size_t bytes;
  MPI_Request req;
} mpi_coll;

/* Busy computation for `us` microseconds, calling cdag_test (s) or MPI_Test (m) every
   `every` microseconds. */
static void compute(double us, double every, cdag_schedule *s, mpi_coll *m) {
  double t0 = MPI_Wtime(), next = t0 + every * 1e-6;
  int done = 0;
  while (MPI_Wtime() - t0 < us * 1e-6) {
    for (int k = 0; k < 50; k++) sink += k * 0.5;
    if (!done && MPI_Wtime() >= next) {
      if (s) TRY(cdag_test(s, &done));
      else MPI_Test(&m->req, &done, MPI_STATUS_IGNORE);
      next = MPI_Wtime() + every * 1e-6;
    }
  }
}

static double timed(cdag_schedule *s, mpi_coll *m, double us, double every, int iters) {
  double best = 1e30;
  for (int rep = 0; rep < 9; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
      if (s) TRY(cdag_start(s));
      else if (m->pat == 0) MPI_Iallgather(m->a, (int)m->bytes, MPI_BYTE, m->all, (int)m->bytes, MPI_BYTE, MPI_COMM_WORLD, &m->req);
      else MPI_Ibcast(m->a, (int)m->bytes, MPI_BYTE, 0, MPI_COMM_WORLD, &m->req);
      compute(us, every, s, m);
      if (s) TRY(cdag_wait(s));
      else MPI_Wait(&m->req, MPI_STATUS_IGNORE);
    }
    double t = (MPI_Wtime() - t0) / iters, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (tmax < best) best = tmax;
  }
  return best;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  size_t bytes = argc > 1 ? (size_t)atol(argv[1]) : 1 << 20;
  double every = argc > 2 ? atof(argv[2]) : 20;
  unsigned char *a = calloc(1, bytes), *all = calloc((size_t)P, bytes);
  const char *names[2] = {"allgather", "bcast"};
  if (R == 0) {
    printf("cdag overlap_bench: %d ranks, %zu B, cdag_test every %.0f us; microseconds per run\n", P, bytes, every);
    printf("%-10s %9s %9s %11s %11s %9s %11s %9s\n", "pattern", "comm_us", "T_us", "run_us", "max(T,C)", "ratio",
           "mpi_run_us", "mpi_ratio");
  }
  for (int pat = 0; pat < 2; pat++) {
    cdag_graph *g;
    cdag_schedule *s;
    TRY(cdag_graph_create(MPI_COMM_WORLD, &g));
    for (int j = 0; j < P; j++)
      if (pat == 0) {
        TRY(cdag_send(g, a, bytes, j, 0, NULL));
        TRY(cdag_recv(g, all + (size_t)j * bytes, bytes, j, 0, NULL));
      } else if (R == 0 && j) {
        TRY(cdag_send(g, a, bytes, j, 0, NULL));
      } else if (R != 0 && j == 0) {
        TRY(cdag_recv(g, a, bytes, 0, 0, NULL));
      }
    TRY(cdag_compile(g, NULL, &s));
    TRY(cdag_graph_free(&g));
    mpi_coll m = {pat, a, all, bytes, MPI_REQUEST_NULL};
    double c = timed(s, NULL, 0, every, 20) * 1e6;   /* microseconds */
    double cm = timed(NULL, &m, 0, every, 20) * 1e6;
    double fractions[4] = {0, 0.5, 1, 2};
    for (int k = 0; k < 4; k++) {  /* MPI's own at the same T, against its own max(T, C_mpi) */
      double t = fractions[k] * c, run = timed(s, NULL, t, every, 20) * 1e6, bound = t > c ? t : c;
      double mrun = timed(NULL, &m, t, every, 20) * 1e6, mbound = t > cm ? t : cm;
      if (R == 0)
        printf("%-10s %9.1f %9.1f %11.1f %11.1f %9.2f %11.1f %9.2f\n", names[pat], c, t, run, bound, run / bound, mrun,
               mrun / mbound);
    }
    TRY(cdag_schedule_free(&s));
  }
  free(a);
  free(all);
  MPI_Finalize();
  return 0;
}

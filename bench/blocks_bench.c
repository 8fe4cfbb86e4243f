/* cdag benchmark — blocks at one stride: packed by cdag or sent as MPI's hvector (a
 * benchmark, not a test).
 *
 * Two ranks exchange N blocks of LEN bytes at a stride of 2 LEN (a matrix's column or rows,
 * a vector datatype's blocks), built with cdag_send_type / cdag_recv_type from an
 * MPI_Type_create_hvector. For each (LEN, N) it times one exchange three ways:
 *   mpi:      MPI_Irecv + MPI_Isend with that hvector, MPI_Waitall;
 *   written:  cdag_run of the graph as written (detect = 0);
 *   compiled: cdag_run of what cdag_compile chose (detect = 1);
 * best of 7 batches, maximum over ranks, and the ratios to mpi. A schedule packs blocks
 * shorter than SCHED_VECTOR_MIN_BLOCK (src/exec/mpi/schedule.h) by memcpy and sends longer
 * ones as an hvector: this table is where that threshold comes from.
 * Usage: mpiexec -n 2 blocks_bench */
#include <cdag.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int R;

#define TRY(call)                                                                              \
  do {                                                                                         \
    if (call) {                                                                                \
      fprintf(stderr, "rank %d: %s: %s\n", R, #call, cdag_error_message());                    \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                            \
    }                                                                                          \
  } while (0)

/* Microseconds per exchange, the maximum over ranks: MPI's (s NULL) or schedule s's. */
static double timed(cdag_schedule *s, char *a, char *b, MPI_Datatype t, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (s) {
      TRY(cdag_run(s));
    } else {
      MPI_Request q[2];
      MPI_Status st[2];   /* (GCC misreads MPI_STATUSES_IGNORE as an array) */
      MPI_Irecv(b, 1, t, 1 - R, 1, MPI_COMM_WORLD, &q[0]);
      MPI_Isend(a, 1, t, 1 - R, 1, MPI_COMM_WORLD, &q[1]);
      MPI_Waitall(2, q, st);
    }
  }
  double dt = (MPI_Wtime() - t0) / iters, most;
  MPI_Allreduce(&dt, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return most * 1e6;
}

static cdag_schedule *compile(char *a, char *b, MPI_Datatype t, int detect) {
  cdag_graph *g;
  cdag_schedule *s;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  TRY(cdag_graph_create(MPI_COMM_WORLD, &g));
  TRY(cdag_recv_type(g, b, 1, t, 1 - R, 0, NULL));
  TRY(cdag_send_type(g, a, 1, t, 1 - R, 0, NULL));
  TRY(cdag_compile(g, &o, &s));
  TRY(cdag_graph_free(&g));
  return s;
}

int main(int argc, char **argv) {
  static const int cases[][2] = {{8, 256},    {8, 1024},  {8, 4096},   {8, 16384},   {64, 128},
                                 {64, 1024},  {512, 16},  {512, 256},  {512, 2048},  {2048, 64},
                                 {4096, 64},  {4096, 512}, {32768, 16}};
  int p;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (p != 2) {
    if (!R) fprintf(stderr, "blocks_bench: run with mpiexec -n 2\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (!R) printf("%7s %6s %9s %10s %11s %6s %11s %6s\n", "len", "n", "bytes", "mpi_us", "written_us", "w/mpi",
                 "compiled_us", "c/mpi");
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int len = cases[c][0], n = cases[c][1];
    size_t span = (size_t)n * 2 * (size_t)len;
    char *a = malloc(span), *b = malloc(span);
    if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(a, R + 1, span);
    memset(b, 0, span);
    MPI_Datatype t;
    MPI_Type_create_hvector(n, len / 8, 2 * (MPI_Aint)len, MPI_UINT64_T, &t);
    MPI_Type_commit(&t);
    cdag_schedule *s[2] = {compile(a, b, t, 0), compile(a, b, t, 1)};
    int iters = (int)(2e7 / (double)(span + 1000));
    iters = iters < 20 ? 20 : iters > 5000 ? 5000 : iters;
    double best[3] = {1e30, 1e30, 1e30};
    for (int rep = 0; rep < 7; rep++)
      for (int how = 0; how < 3; how++) {
        double x = timed(how ? s[how - 1] : NULL, a, b, t, iters);
        if (x < best[how]) best[how] = x;
      }
    if (!R)
      printf("%7d %6d %9zu %10.2f %11.2f %6.2f %11.2f %6.2f\n", len, n, (size_t)n * (size_t)len, best[0], best[1],
             best[1] / best[0], best[2], best[2] / best[0]);
    TRY(cdag_schedule_free(&s[0]));
    TRY(cdag_schedule_free(&s[1]));
    MPI_Type_free(&t);
    free(a);
    free(b);
  }
  MPI_Finalize();
  return 0;
}

/* cdag benchmark — a halo of columns sent as a vector datatype (a benchmark, not a test).
 *
 * Two ranks hold the halves of an N x N grid of doubles (N rows of N/2 + 2 columns: their
 * own and a ghost column on each side). Each sends its boundary column to the other as one
 * MPI_Type_vector (N blocks of one double) and receives the other's into its ghost column.
 * The graph is built with cdag_send_type / cdag_recv_type; it prints the graph's and the
 * plan's size (operations, residual messages), then times one exchange:
 *   mpi:      MPI_Irecv + MPI_Isend with the same vector datatype, MPI_Waitall;
 *   written:  cdag_run of the graph as written (detect = 0);
 *   compiled: cdag_run of what cdag_compile chose (detect = 1);
 * as the mean of a batch after a barrier, maximum over ranks, median and best of REPS
 * batches, the variants taking turns, and the ratios to mpi. Usage: mpiexec -n 2
 * strided_bench [N] [ITERATIONS]. */
#include <cdag.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int R, P;
enum { REPS = 11 };

#define TRY(call)                                                                              \
  do {                                                                                         \
    int rc_ = (call);                                                                          \
    if (rc_) {                                                                                 \
      fprintf(stderr, "rank %d: %s: %s\n", R, #call, cdag_error_message());                    \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                            \
    }                                                                                          \
  } while (0)

static int dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P != 2) {
    if (!R) fprintf(stderr, "strided_bench: run with mpiexec -n 2\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int n = argc > 1 ? atoi(argv[1]) : 1024, iters = argc > 2 ? atoi(argv[2]) : 2000;
  int w = n / 2 + 2, peer = 1 - R;
  if (n < 2 || n > 1 << 16 || iters < 1) {
    if (!R) fprintf(stderr, "strided_bench: N from 2 to 65536 (a grid of N x N doubles), ITERATIONS at least 1\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double *grid = malloc((size_t)n * (size_t)w * sizeof *grid);
  if (!grid) {
    fprintf(stderr, "rank %d: no memory for a grid of %d x %d doubles\n", R, n, w);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (size_t i = 0; i < (size_t)n * (size_t)w; i++) grid[i] = (double)i + R * 1e7;
  /* rank 0: sends column w-2, receives into column w-1; rank 1: sends column 1, receives into 0 */
  double *sendc = grid + (R ? 1 : w - 2), *recvc = grid + (R ? 0 : w - 1);
  MPI_Datatype col;
  MPI_Type_vector(n, 1, w, MPI_DOUBLE, &col);
  MPI_Type_commit(&col);

  cdag_schedule *s[2];
  int64_t nops = 0;
  for (int detect = 0; detect < 2; detect++) {
    cdag_graph *g;
    cdag_options o;
    cdag_options_init(&o);
    o.detect = detect;
    TRY(cdag_graph_create(MPI_COMM_WORLD, &g));
    TRY(cdag_recv_type(g, recvc, 1, col, peer, 0, NULL));
    TRY(cdag_send_type(g, sendc, 1, col, peer, 0, NULL));
    TRY(cdag_graph_info(g, NULL, &nops));
    TRY(cdag_compile(g, &o, &s[detect]));
    cdag_graph_free(&g);
  }
  if (!R) printf("grid %d x %d doubles, 2 ranks: graph of %lld operations per rank (2 faces)\n", n, n, (long long)nops);

  double t[3][REPS];
  for (int rep = 0; rep < REPS; rep++)
    for (int v = 0; v < 3; v++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int it = 0; it < iters; it++) {
        if (v == 0) {
          MPI_Request q[2];
          MPI_Irecv(recvc, 1, col, peer, 0, MPI_COMM_WORLD, &q[0]);
          MPI_Isend(sendc, 1, col, peer, 0, MPI_COMM_WORLD, &q[1]);
          MPI_Status st[2];
          MPI_Waitall(2, q, st);
        } else {
          TRY(cdag_run(s[v - 1]));
        }
      }
      double dt = (MPI_Wtime() - t0) / iters, mx;
      MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      t[v][rep] = mx;
    }
  if (!R) {
    const char *name[3] = {"mpi", "written", "compiled"};
    double med[3];
    for (int v = 0; v < 3; v++) {
      qsort(t[v], REPS, sizeof **t, dcmp);
      med[v] = t[v][REPS / 2];
      printf("%-9s median %8.2f us  best %8.2f us\n", name[v], med[v] * 1e6, t[v][0] * 1e6);
    }
    printf("compiled/mpi %.3f (median), %.3f (best); written/mpi %.3f (median)\n", med[2] / med[0], t[2][0] / t[0][0],
           med[1] / med[0]);
  }
  for (int v = 0; v < 2; v++) cdag_schedule_free(&s[v]);
  MPI_Type_free(&col);
  free(grid);
  MPI_Finalize();
  return 0;
}

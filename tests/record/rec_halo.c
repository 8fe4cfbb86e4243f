/* cdag tests — tests/record/rec_halo.c: an iterative solver's communication, for phases
 * found without MPI_Pcontrol.
 *
 * ITERS iterations (argv[2], default 40) of a 2-D halo exchange on a periodic grid of the
 * processes (Irecv, Isend, Waitall with four neighbours), a local update and an Allreduce
 * of the residual into the next slot of a history array: the iterations have one structure,
 * and one address moves by 8 bytes from each to the next (docs/recording.md, Phases). With
 * argv[3] = still, the residual goes to one slot: the iterations' lines repeat exactly, and
 * the recorder folds them (src/record/fold.c). */
#include <string.h>

#include "rec_test.h"

enum { N = 32 };

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int iters = argc > 2 ? atoi(argv[2]) : 40, still = argc > 3 && !strcmp(argv[3], "still"), dims[2] = {0, 0};
  MPI_Dims_create(rt_size, 2, dims);
  int px = rt_rank % dims[0], py = rt_rank / dims[0];
  int nb[4] = {(px + 1) % dims[0] + py * dims[0], (px + dims[0] - 1) % dims[0] + py * dims[0],
               px + (py + 1) % dims[1] * dims[0], px + (py + dims[1] - 1) % dims[1] * dims[0]};
  double *u = malloc(6 * N * sizeof *u), *hist = malloc((size_t)(iters > 0 ? iters : 1) * sizeof *hist), r = 0;
  MT_REQUIRE(u && hist);
  rt_fill(u, 6 * N * sizeof *u);
  for (int i = 0; i < N; i++) u[i] = rt_rank + i;
  for (int it = 0; it < iters; it++) {
    MPI_Request q[8];
    for (int d = 0; d < 4; d++) MPI_Irecv(u + (2 + d) * N, N, MPI_DOUBLE, nb[d ^ 1], d, MPI_COMM_WORLD, &q[d]);
    for (int d = 0; d < 4; d++) MPI_Isend(u, N, MPI_DOUBLE, nb[d], d, MPI_COMM_WORLD, &q[4 + d]);
    MPI_Waitall(8, q, MPI_STATUSES_IGNORE);
    r = 0;
    for (int i = 0; i < N; i++) r += u[2 * N + i] - u[3 * N + i] + u[4 * N + i] - u[5 * N + i];
    MPI_Allreduce(&r, &hist[still ? 0 : it], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  for (int it = 1; it < iters && !still; it++) MT_REQUIRE(hist[it] == hist[0]);
  free(u);
  free(hist);
  return rt_finish();
}

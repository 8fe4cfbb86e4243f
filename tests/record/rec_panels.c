/* cdag tests — tests/record/rec_panels.c: an LU factorization's panel loop, as HPL runs it,
 * for phases found without MPI_Pcontrol.
 *
 * PANELS panels (argv[2], default 24) of a matrix whose column blocks are dealt to the
 * processes in turn: panel k is factored by rank k mod P from panel k - 1 and passed along
 * the ring of the processes (MPI_Send, MPI_Recv; each forwards it until the rank before its
 * owner), with HPL's look-ahead of depth 1: the owner of panel k + 1 factors and sends it as
 * soon as it has panel k, before its update of the trailing matrix with panel k. As in HPL,
 * every panel is NB columns shorter than the one before (the trailing matrix shrinks, so each
 * message is smaller), its tag counts the panels, it lies NB columns further into the matrix,
 * and it is received into one of two buffers in turn. No two iterations are alike, and the
 * repeats are found all the same: sizes, tags and addresses change between them by a constant
 * step (docs/recording.md, Phases). */
#include "rec_test.h"

enum { NB = 4, TAG = 100 };

/* Panel k: (panels - k) * NB rows of NB columns, from what was received of panel k - 1. */
static void factor(double *p, const double *from, int rows, int k) {
  for (int i = 0; i < rows * NB; i++) p[i] = from[i + NB * NB] * 0.5 + k + i;
}

int main(int argc, char **argv) {
  rt_init(&argc, &argv);
  int panels = argc > 2 ? atoi(argv[2]) : 24, P = rt_size, next = (rt_rank + 1) % P, prev = (rt_rank + P - 1) % P;
  MT_REQUIRE(panels >= 2);
  size_t len = (size_t)(panels + 1) * (size_t)panels * NB * NB;
  double *a = malloc(len * sizeof *a), *w[2], *trail = malloc((size_t)panels * NB * NB * sizeof *trail);
  w[0] = malloc((size_t)(panels + 1) * NB * NB * sizeof *w[0]);
  w[1] = malloc((size_t)(panels + 1) * NB * NB * sizeof *w[1]);
  MT_REQUIRE(a && w[0] && w[1] && trail);
  rt_fill(a, len * sizeof *a);
  rt_fill(w[0], (size_t)(panels + 1) * NB * NB * sizeof *w[0]);
  rt_fill(w[1], (size_t)(panels + 1) * NB * NB * sizeof *w[1]);
  rt_fill(trail, (size_t)panels * NB * NB * sizeof *trail);
  /* panel k's rows and where its owner keeps it: NB columns further each panel */
#define ROWS(k) ((panels - (k)) * NB)
#define PANEL(k) (a + (size_t)(k) * (panels + 1) * NB * NB)
  if (rt_rank == 0 && P > 1) {   /* panel 0, from the rank's own data */
    MPI_Send(PANEL(0), ROWS(0) * NB, MPI_DOUBLE, next, TAG, MPI_COMM_WORLD);
  }
  for (int k = 0; k < panels; k++) {
    int owner = k % P, mine = owner == rt_rank;
    double *have = mine ? PANEL(k) : w[k % 2];
    if (!mine) {   /* panel k along the ring */
      MPI_Recv(have, ROWS(k) * NB, MPI_DOUBLE, prev, TAG + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (next != owner) MPI_Send(have, ROWS(k) * NB, MPI_DOUBLE, next, TAG + k, MPI_COMM_WORLD);
    }
    if ((k + 1) % P == rt_rank && k + 1 < panels) {   /* look-ahead: panel k + 1 out before the update */
      factor(PANEL(k + 1), have, ROWS(k + 1), k + 1);
      if (P > 1) MPI_Send(PANEL(k + 1), ROWS(k + 1) * NB, MPI_DOUBLE, next, TAG + k + 1, MPI_COMM_WORLD);
    }
    for (int i = 0; i < ROWS(k) * NB && i < panels * NB * NB; i++) trail[i] += have[i] * 0.25;   /* the update */
  }
  free(a), free(w[0]), free(w[1]), free(trail);
  return rt_finish();
}

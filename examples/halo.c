/* cdag example — a 1D periodic halo exchange: each rank owns n cells plus one ghost cell
 * block on each side, sends its first block to the left neighbour and its last block to
 * the right one, and receives both ghosts. Nothing here is a collective (neighbourhood
 * traffic); cdag keeps it as one message per neighbour, and the result must not change.
 * Usage: halo [iterations] [double cells per halo]. */
#include "example.h"

typedef struct {
  int rank, nprocs;
  size_t n;        /* halo width; the interior is 4 * n cells */
  double *u;       /* [ghost left n][interior 4n][ghost right n] */
} halo_ctx;

static int halo_build(cdag_graph *g, void *arg) {
  halo_ctx *c = arg;
  int p = c->nprocs, left = (c->rank - 1 + p) % p, right = (c->rank + 1) % p;
  size_t n = c->n, bytes = n * sizeof(double);
  double *first = c->u + n, *last = c->u + 4 * n, *gl = c->u, *gr = c->u + 5 * n;
  int rc = cdag_send(g, first, bytes, left, 0, NULL);
  if (!rc) rc = cdag_send(g, last, bytes, right, 1, NULL);
  if (!rc) rc = cdag_recv(g, gr, bytes, right, 0, NULL);
  if (!rc) rc = cdag_recv(g, gl, bytes, left, 1, NULL);
  return rc;
}

static double cell(int rank, size_t i) { return rank * 10000.0 + (double)i; }

static void halo_reset(void *arg) {
  halo_ctx *c = arg;
  for (size_t i = 0; i < 6 * c->n; i++) c->u[i] = i < c->n || i >= 5 * c->n ? -1.0 : cell(c->rank, i);
}

static int halo_check(void *arg) {
  halo_ctx *c = arg;
  int p = c->nprocs, left = (c->rank - 1 + p) % p, right = (c->rank + 1) % p;
  for (size_t i = 0; i < c->n; i++)
    if (c->u[i] != cell(left, 4 * c->n + i) || c->u[5 * c->n + i] != cell(right, c->n + i)) return 0;
  for (size_t i = c->n; i < 5 * c->n; i++)
    if (c->u[i] != cell(c->rank, i)) return 0;
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "halo", 256);
  halo_ctx c = {p.rank, p.nprocs, p.n, ex_alloc(6 * p.n * sizeof(double))};
  p.ctx = &c;
  p.build = halo_build;
  p.reset = halo_reset;
  p.check = halo_check;
  p.nout = 1;
  p.out[0].ptr = c.u;
  p.out[0].bytes = 6 * p.n * sizeof(double);
  int rc = ex_main(&p);
  free(c.u);
  MPI_Finalize();
  return rc;
}

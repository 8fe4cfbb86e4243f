/* cdag example — a periodic 1-D halo exchange written with one-sided puts, as a PGAS code
 * writes it: each rank puts its first and last HALO cells into the ghost cells of its left
 * and right neighbour, then fences. u (interior and ghosts) is each rank's segment. Nothing
 * collective hides here: cdag keeps the puts as messages (one per neighbour and direction).
 * The same phase in MPI RMA (MPI_Put between two MPI_Win_fence) gives the reference result
 * and time. Usage: halo_puts [iterations] [doubles per halo]. */
#include "example.h"

typedef struct {
  int rank, nprocs;
  size_t n, interior;   /* halo width, interior cells (4 halos) */
  double *u;            /* [n ghosts | interior | n ghosts] */
  MPI_Win win;
} halo_ctx;

static size_t cells(const halo_ctx *c) { return c->interior + 2 * c->n; }
static int left_of(const halo_ctx *c) { return (c->rank + c->nprocs - 1) % c->nprocs; }
static int right_of(const halo_ctx *c) { return (c->rank + 1) % c->nprocs; }

static int halo_build(cdag_graph *g, void *arg) {
  halo_ctx *c = arg;
  size_t halo = c->n * sizeof(double);
  int seg, rc = cdag_segment(g, c->u, cells(c) * sizeof(double), &seg);
  if (!rc) rc = cdag_fence(g);   /* the ghosts are read after the previous phase's fence */
  if (!rc) rc = cdag_put(g, c->u + c->n, halo, left_of(c), seg, (c->n + c->interior) * sizeof(double), NULL);
  if (!rc) rc = cdag_put(g, c->u + c->interior, halo, right_of(c), seg, 0, NULL);
  return rc ? rc : cdag_fence(g);
}

static void halo_rma(void *arg) {
  halo_ctx *c = arg;
  int n = (int)c->n;
  MPI_Win_fence(0, c->win);
  MPI_Put(c->u + c->n, n, MPI_DOUBLE, left_of(c), (MPI_Aint)(c->n + c->interior), n, MPI_DOUBLE, c->win);
  MPI_Put(c->u + c->interior, n, MPI_DOUBLE, right_of(c), 0, n, MPI_DOUBLE, c->win);
  MPI_Win_fence(0, c->win);
}

static void halo_reset(void *arg) {
  halo_ctx *c = arg;
  for (size_t k = 0; k < cells(c); k++) c->u[k] = k < c->n || k >= c->n + c->interior ? -1 : c->rank * 1e6 + (double)k;
}

static int halo_check(void *arg) {
  halo_ctx *c = arg;
  double l = left_of(c) * 1e6, r = right_of(c) * 1e6;
  for (size_t k = 0; k < c->n; k++)
    if (c->u[k] != l + (double)(c->interior + k) || c->u[c->n + c->interior + k] != r + (double)(c->n + k)) return 0;
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "halo_puts", 1024);
  halo_ctx c = {p.rank, p.nprocs, p.n, 4 * p.n, NULL, MPI_WIN_NULL};
  c.u = ex_alloc(cells(&c) * sizeof(double));
  MPI_Win_create(c.u, (MPI_Aint)(cells(&c) * sizeof(double)), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &c.win);
  p.ctx = &c;
  p.build = halo_build;
  p.reset = halo_reset;
  p.check = halo_check;
  p.rma = halo_rma;
  p.nout = 1;
  p.out[0].ptr = c.u;
  p.out[0].bytes = cells(&c) * sizeof(double);
  int rc = ex_main(&p);
  MPI_Win_free(&c.win);
  free(c.u);
  MPI_Finalize();
  return rc;
}

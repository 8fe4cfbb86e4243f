/* cdag example — UPC's FT transpose, written with one-sided gets (the paper's loop):
 *
 *   upc_barrier;
 *   for (i = 0; i < THREADS; i++)
 *     upc_memget(&dst[MYTHREAD].cell[chunk * i], &src[i].cell[chunk * MYTHREAD], chunk);
 *   upc_barrier;
 *
 * src is each rank's registered segment; every get names its target and offset, so no rank
 * needs to know who reads from it. cdag finds the alltoall. The same phase in MPI RMA
 * (MPI_Get between two MPI_Win_fence) gives the reference result and time.
 * Usage: upc_ft [iterations] [doubles per chunk]. */
#include "example.h"

typedef struct {
  int rank, nprocs;
  size_t n;
  double *src, *dst;
  MPI_Win win;   /* on src, for the MPI RMA form */
} ft_ctx;

static int ft_build(cdag_graph *g, void *arg) {
  ft_ctx *c = arg;
  size_t chunk = c->n * sizeof(double);
  int seg, rc = cdag_segment(g, c->src, chunk * (size_t)c->nprocs, &seg);
  if (!rc) rc = cdag_fence(g);
  for (int i = 0; !rc && i < c->nprocs; i++) rc = cdag_get(g, &c->dst[c->n * i], chunk, i, seg, chunk * (size_t)c->rank, NULL);
  return rc ? rc : cdag_fence(g);
}

static void ft_rma(void *arg) {
  ft_ctx *c = arg;
  MPI_Win_fence(0, c->win);
  for (int i = 0; i < c->nprocs; i++)
    MPI_Get(&c->dst[c->n * i], (int)c->n, MPI_DOUBLE, i, (MPI_Aint)(c->n * (size_t)c->rank), (int)c->n, MPI_DOUBLE, c->win);
  MPI_Win_fence(0, c->win);
}

static void ft_reset(void *arg) {
  ft_ctx *c = arg;
  for (size_t k = 0; k < c->n * (size_t)c->nprocs; k++) {
    c->src[k] = c->rank * 1e6 + (double)k;
    c->dst[k] = -1;
  }
}

static int ft_check(void *arg) {
  ft_ctx *c = arg;
  for (int i = 0; i < c->nprocs; i++)
    for (size_t k = 0; k < c->n; k++)
      if (c->dst[c->n * i + k] != i * 1e6 + (double)(c->n * (size_t)c->rank + k)) return 0;
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "upc_ft", 1024);
  ft_ctx c = {p.rank, p.nprocs, p.n, NULL, NULL, MPI_WIN_NULL};
  size_t bytes = p.n * (size_t)p.nprocs * sizeof(double);
  c.src = ex_alloc(bytes);
  c.dst = ex_alloc(bytes);
  MPI_Win_create(c.src, (MPI_Aint)bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &c.win);
  p.ctx = &c;
  p.build = ft_build;
  p.reset = ft_reset;
  p.check = ft_check;
  p.rma = ft_rma;
  p.nout = 1;
  p.out[0].ptr = c.dst;
  p.out[0].bytes = bytes;
  int rc = ex_main(&p);
  MPI_Win_free(&c.win);
  free(c.src);
  free(c.dst);
  MPI_Finalize();
  return rc;
}

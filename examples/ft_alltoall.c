/* cdag example — the NAS FT transpose: every rank sends block i of its array to rank i.
 *
 * Written as the paper's FT loop (one send and one receive per peer, self included); cdag
 * finds the alltoall. Blocks are n complex numbers (two doubles with exact integer values).
 * Usage: ft_alltoall [iterations] [complex numbers per block]. */
#include "example.h"

typedef struct { double re, im; } dcomplex;
typedef struct {
  int rank, nprocs;
  size_t n;
  dcomplex *src, *dst;
} ft_ctx;

static int ft_build(cdag_graph *g, void *arg) {
  ft_ctx *c = arg;
  size_t chunk = c->n * sizeof(dcomplex);
  for (int i = 0; i < c->nprocs; i++) {
    int rc = cdag_send(g, &c->src[c->n * i], chunk, i, 0, NULL);
    if (!rc) rc = cdag_recv(g, &c->dst[c->n * i], chunk, i, 0, NULL);
    if (rc) return rc;
  }
  return CDAG_OK;
}

static void ft_reset(void *arg) {
  ft_ctx *c = arg;
  for (int i = 0; i < c->nprocs; i++)
    for (size_t k = 0; k < c->n; k++) {
      c->src[c->n * i + k] = (dcomplex){c->rank * 1000.0 + i, (double)k};
      c->dst[c->n * i + k] = (dcomplex){-1, -1};
    }
}

static int ft_check(void *arg) {
  ft_ctx *c = arg;
  for (int i = 0; i < c->nprocs; i++)
    for (size_t k = 0; k < c->n; k++) {
      dcomplex v = c->dst[c->n * i + k];
      if (v.re != i * 1000.0 + c->rank || v.im != (double)k) return 0;
    }
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "ft_alltoall", 1024);
  ft_ctx c = {p.rank, p.nprocs, p.n, NULL, NULL};
  c.src = ex_alloc(p.n * p.nprocs * sizeof(dcomplex));
  c.dst = ex_alloc(p.n * p.nprocs * sizeof(dcomplex));
  p.ctx = &c;
  p.build = ft_build;
  p.reset = ft_reset;
  p.check = ft_check;
  p.nout = 1;
  p.out[0].ptr = c.dst;
  p.out[0].bytes = p.n * p.nprocs * sizeof(dcomplex);
  int rc = ex_main(&p);
  free(c.src);
  free(c.dst);
  MPI_Finalize();
  return rc;
}

/* cdag example — an alltoall by Bruck's algorithm through scratch buffers, as a library
 * would write it for small blocks on any number of ranks:
 *   rotate: tmp[i] = src[(rank + i) % p];
 *   for k = 1, 2, 4, ... < p: pack the blocks i with bit k set, send them to rank + k,
 *     receive the same block positions from rank - k, unpack;
 *   unrotate: dst[(rank - i) % p] = tmp[i].
 * tmp and the pack buffers are scratch; the dataflow through them (with its splits) is an
 * alltoall, which cdag finds. Usage: butterfly_alltoall [iterations] [int32 per block]. */
#include "example.h"

typedef struct {
  int rank, nprocs;
  size_t n;
  int32_t *src, *dst, *tmp, *sbuf, *rbuf;
} bf_ctx;

/* One exchange step of distance k: pack, send, receive, unpack. */
static int bf_step(cdag_graph *g, bf_ctx *c, int k, size_t block) {
  int p = c->nprocs, rc = CDAG_OK;
  size_t m = 0;
  for (int i = 0; i < p && !rc; i++)
    if (i & k) rc = cdag_copy_local(g, c->tmp + c->n * i, c->sbuf + c->n * m++, block, NULL);
  if (!rc) rc = cdag_send(g, c->sbuf, m * block, (c->rank + k) % p, k, NULL);
  if (!rc) rc = cdag_recv(g, c->rbuf, m * block, (c->rank - k + p) % p, k, NULL);
  m = 0;
  for (int i = 0; i < p && !rc; i++)
    if (i & k) rc = cdag_copy_local(g, c->rbuf + c->n * m++, c->tmp + c->n * i, block, NULL);
  return rc;
}

static int bf_build(cdag_graph *g, void *arg) {
  bf_ctx *c = arg;
  int p = c->nprocs, rc;
  size_t block = c->n * sizeof(int32_t);
  rc = cdag_scratch(g, c->tmp, block * p);
  if (!rc) rc = cdag_scratch(g, c->sbuf, block * p);
  if (!rc) rc = cdag_scratch(g, c->rbuf, block * p);
  for (int i = 0; i < p && !rc; i++) rc = cdag_copy_local(g, c->src + c->n * ((c->rank + i) % p), c->tmp + c->n * i, block, NULL);
  for (int k = 1; k < p && !rc; k <<= 1) rc = bf_step(g, c, k, block);
  for (int i = 0; i < p && !rc; i++) rc = cdag_copy_local(g, c->tmp + c->n * i, c->dst + c->n * ((c->rank - i + p) % p), block, NULL);
  return rc;
}

static void bf_reset(void *arg) {
  bf_ctx *c = arg;
  for (int i = 0; i < c->nprocs; i++)
    for (size_t k = 0; k < c->n; k++) {
      c->src[c->n * i + k] = c->rank * 1000000 + i * 1000 + (int32_t)k;
      c->dst[c->n * i + k] = -1;
    }
}

static int bf_check(void *arg) {
  bf_ctx *c = arg;
  for (int i = 0; i < c->nprocs; i++)
    for (size_t k = 0; k < c->n; k++)
      if (c->dst[c->n * i + k] != i * 1000000 + c->rank * 1000 + (int32_t)k) return 0;
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "butterfly_alltoall", 64);
  size_t all = p.n * p.nprocs * sizeof(int32_t);
  bf_ctx c = {p.rank, p.nprocs, p.n, ex_alloc(all), ex_alloc(all), ex_alloc(all), ex_alloc(all), ex_alloc(all)};
  p.ctx = &c;
  p.build = bf_build;
  p.reset = bf_reset;
  p.check = bf_check;
  p.nout = 1;
  p.out[0].ptr = c.dst;
  p.out[0].bytes = all;
  int rc = ex_main(&p);
  free(c.src); free(c.dst); free(c.tmp); free(c.sbuf); free(c.rbuf);
  MPI_Finalize();
  return rc;
}

/* cdag example — the paper's Coarray Fortran co_sum variants, written with point-to-point
 * messages and local reductions:
 *   reflin: every image sends x to image 0, which adds them one by one into r (through a
 *           scratch buffer) and sends r back to every image (linear);
 *   reflog: a binomial-tree reduction to image 0 followed by a binomial-tree broadcast
 *           (logarithmic; any number of images).
 * Both compute r = sum over images of x; cdag recognises the allreduce in either.
 * Usage: caf_allreduce [iterations] [int64 elements]. */
#include "example.h"

typedef struct {
  int rank, nprocs, log;
  size_t n;
  int64_t *x, *r, *tmp;  /* tmp: scratch */
} caf_ctx;

static int caf_reflin(cdag_graph *g, caf_ctx *c, size_t bytes) {
  int rc = cdag_scratch(g, c->tmp, bytes);
  if (c->rank != 0) {
    if (!rc) rc = cdag_send(g, c->x, bytes, 0, 1, NULL);
    if (!rc) rc = cdag_recv(g, c->r, bytes, 0, 2, NULL);
    return rc;
  }
  if (!rc) rc = cdag_copy_local(g, c->x, c->r, bytes, NULL);
  for (int i = 1; !rc && i < c->nprocs; i++) {
    rc = cdag_recv(g, c->tmp, bytes, i, 1, NULL);
    if (!rc) rc = cdag_reduce_local(g, c->tmp, c->r, c->n, MPI_INT64_T, MPI_SUM, NULL);
  }
  for (int i = 1; !rc && i < c->nprocs; i++) rc = cdag_send(g, c->r, bytes, i, 2, NULL);
  return rc;
}

static int caf_reflog(cdag_graph *g, caf_ctx *c, size_t bytes) {
  int rank = c->rank, p = c->nprocs, mask;
  int rc = cdag_scratch(g, c->tmp, bytes);
  if (!rc) rc = cdag_copy_local(g, c->x, c->r, bytes, NULL);
  for (mask = 1; !rc && mask < p; mask <<= 1) {  /* reduce up the binomial tree */
    if (rank & mask) {
      rc = cdag_send(g, c->r, bytes, rank - mask, 1, NULL);
      break;
    }
    if (rank + mask < p) {
      rc = cdag_recv(g, c->tmp, bytes, rank + mask, 1, NULL);
      if (!rc) rc = cdag_reduce_local(g, c->tmp, c->r, c->n, MPI_INT64_T, MPI_SUM, NULL);
    }
  }
  for (mask = 1; !rc && mask < p; mask <<= 1)  /* broadcast down it */
    if (rank & mask) {
      rc = cdag_recv(g, c->r, bytes, rank - mask, 2, NULL);
      break;
    }
  for (mask >>= 1; !rc && mask > 0; mask >>= 1)
    if (rank + mask < p) rc = cdag_send(g, c->r, bytes, rank + mask, 2, NULL);
  return rc;
}

static int caf_build(cdag_graph *g, void *arg) {
  caf_ctx *c = arg;
  size_t bytes = c->n * sizeof(int64_t);
  return c->log ? caf_reflog(g, c, bytes) : caf_reflin(g, c, bytes);
}

static void caf_reset(void *arg) {
  caf_ctx *c = arg;
  for (size_t k = 0; k < c->n; k++) {
    c->x[k] = (int64_t)(c->rank + 1) * 1000 + (int64_t)k;
    c->r[k] = -1;
  }
}

static int caf_check(void *arg) {
  caf_ctx *c = arg;
  int64_t p = c->nprocs;
  for (size_t k = 0; k < c->n; k++)
    if (c->r[k] != 1000 * p * (p + 1) / 2 + p * (int64_t)k) return 0;
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "caf_allreduce reflin", 1024);
  caf_ctx c = {p.rank, p.nprocs, 0, p.n, NULL, NULL, NULL};
  c.x = ex_alloc(p.n * sizeof(int64_t));
  c.r = ex_alloc(p.n * sizeof(int64_t));
  c.tmp = ex_alloc(p.n * sizeof(int64_t));
  p.ctx = &c;
  p.build = caf_build;
  p.reset = caf_reset;
  p.check = caf_check;
  p.nout = 1;
  p.out[0].ptr = c.r;
  p.out[0].bytes = p.n * sizeof(int64_t);
  int rc = ex_main(&p);
  c.log = 1;
  p.name = "caf_allreduce reflog";
  rc |= ex_main(&p);
  free(c.x);
  free(c.r);
  free(c.tmp);
  MPI_Finalize();
  return rc;
}

/* cdag example — Coarray Fortran's co_sum as the paper writes it, with one-sided gets, local
 * sums and fences between the steps (`sync all`):
 *   reflin: every image gets x from every other image (one epoch), then adds them up;
 *   reflog: r = x, then for k = 1, 2, 4, ...: get r from image me xor k (one epoch), add it
 *           to r (the next epoch: the get must read r before anyone adds to it); for a
 *           power-of-two number of images.
 * Both compute r = sum over images of x; cdag finds the allreduce. The same phases in MPI
 * RMA (MPI_Get between MPI_Win_fence) give the reference results and times. The Fortran
 * program examples/caf_cosum.f90 writes reflog with messages through the module cdag.
 * Usage: caf_cosum_c [iterations] [int64 elements]. */
#include "example.h"

typedef struct {
  int rank, nprocs, log;
  size_t n;
  int64_t *x, *r, *tmp;   /* tmp: nprocs * n, scratch */
  MPI_Win win_x, win_r;
} caf_ctx;

static void add(int64_t *r, const int64_t *v, size_t n) {
  for (size_t k = 0; k < n; k++) r[k] += v[k];
}

static int reflin(cdag_graph *g, caf_ctx *c, size_t bytes) {
  int seg, rc = cdag_segment(g, c->x, bytes, &seg);
  if (!rc) rc = cdag_fence(g);
  for (int i = 0; !rc && i < c->nprocs; i++)
    if (i != c->rank) rc = cdag_get(g, c->tmp + c->n * (size_t)i, bytes, i, seg, 0, NULL);
  if (!rc) rc = cdag_fence(g);
  if (!rc) rc = cdag_copy_local(g, c->x, c->r, bytes, NULL);
  for (int i = 0; !rc && i < c->nprocs; i++)
    if (i != c->rank) rc = cdag_reduce_local(g, c->tmp + c->n * (size_t)i, c->r, c->n, MPI_INT64_T, MPI_SUM, NULL);
  return rc;
}

static int reflog(cdag_graph *g, caf_ctx *c, size_t bytes) {
  int seg, rc = cdag_segment(g, c->r, bytes, &seg);
  if (!rc) rc = cdag_copy_local(g, c->x, c->r, bytes, NULL);
  for (int k = 1; !rc && k < c->nprocs; k <<= 1) {
    rc = cdag_fence(g);
    if (!rc) rc = cdag_get(g, c->tmp, bytes, c->rank ^ k, seg, 0, NULL);
    if (!rc) rc = cdag_fence(g);
    if (!rc) rc = cdag_reduce_local(g, c->tmp, c->r, c->n, MPI_INT64_T, MPI_SUM, NULL);
  }
  return rc;
}

static int caf_build(cdag_graph *g, void *arg) {
  caf_ctx *c = arg;
  size_t bytes = c->n * sizeof(int64_t);
  int rc = cdag_scratch(g, c->tmp, bytes * (size_t)c->nprocs);
  return rc ? rc : c->log ? reflog(g, c, bytes) : reflin(g, c, bytes);
}

static void caf_rma(void *arg) {
  caf_ctx *c = arg;
  int n = (int)c->n;
  if (!c->log) {
    MPI_Win_fence(0, c->win_x);
    for (int i = 0; i < c->nprocs; i++)
      if (i != c->rank) MPI_Get(c->tmp + c->n * (size_t)i, n, MPI_INT64_T, i, 0, n, MPI_INT64_T, c->win_x);
    MPI_Win_fence(0, c->win_x);
    memcpy(c->r, c->x, c->n * sizeof *c->r);
    for (int i = 0; i < c->nprocs; i++)
      if (i != c->rank) add(c->r, c->tmp + c->n * (size_t)i, c->n);
    return;
  }
  memcpy(c->r, c->x, c->n * sizeof *c->r);
  for (int k = 1; k < c->nprocs; k <<= 1) {
    MPI_Win_fence(0, c->win_r);
    MPI_Get(c->tmp, n, MPI_INT64_T, c->rank ^ k, 0, n, MPI_INT64_T, c->win_r);
    MPI_Win_fence(0, c->win_r);
    add(c->r, c->tmp, c->n);
  }
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
  ex_init(&argc, &argv, &p, "caf_cosum reflin (gets)", 1024);
  caf_ctx c = {p.rank, p.nprocs, 0, p.n, NULL, NULL, NULL, MPI_WIN_NULL, MPI_WIN_NULL};
  size_t bytes = p.n * sizeof(int64_t);
  c.x = ex_alloc(bytes);
  c.r = ex_alloc(bytes);
  c.tmp = ex_alloc(bytes * (size_t)p.nprocs);
  MPI_Win_create(c.x, (MPI_Aint)bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &c.win_x);
  MPI_Win_create(c.r, (MPI_Aint)bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &c.win_r);
  p.ctx = &c;
  p.build = caf_build;
  p.reset = caf_reset;
  p.check = caf_check;
  p.rma = caf_rma;
  p.nout = 1;
  p.out[0].ptr = c.r;
  p.out[0].bytes = bytes;
  int rc = ex_main(&p);
  if ((p.nprocs & (p.nprocs - 1)) == 0) {   /* reflog pairs images by xor */
    c.log = 1;
    p.name = "caf_cosum reflog (gets)";
    rc |= ex_main(&p);
  } else if (p.rank == 0) {
    printf("caf_cosum reflog (gets): skipped (%d images is not a power of two)\n", p.nprocs);
  }
  MPI_Win_free(&c.win_x);
  MPI_Win_free(&c.win_r);
  free(c.x);
  free(c.r);
  free(c.tmp);
  MPI_Finalize();
  return rc;
}

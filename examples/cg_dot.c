/* cdag example — the two dot products of a conjugate-gradient step on a process grid with
 * two columns (one when there are fewer than 3 ranks): every rank holds a piece of the
 * matrix and contributes partial sums of r.r and p.Ap, but only the ranks of grid column 0
 * (ranks 0, 2, 4, ...: they hold the vectors) use the results in this phase. The program
 * computes both sums as a usual allreduce (a binomial-tree reduction to rank 0, then a
 * binomial-tree broadcast) and marks the results scratch on the other column. cdag sees
 * that only the even ranks keep them and compiles a reduce to rank 0 plus a broadcast to
 * the even ranks (one of each for both sums), described in the report as a replication
 * "0 to 2k step 2". Usage: cg_dot [iterations] [int64 elements per sum]. */
#include "example.h"

typedef struct {
  int rank, nprocs, keeps;
  size_t n;
  int64_t *part, *res, *tmp;  /* part: 2n partial sums (r.r, p.Ap); res: the sums; tmp: scratch */
} cg_ctx;

/* The allreduce as written: binomial reduction to rank 0, binomial broadcast back. */
static int cg_build(cdag_graph *g, void *arg) {
  cg_ctx *c = arg;
  int rank = c->rank, p = c->nprocs, mask;
  size_t bytes = 2 * c->n * sizeof(int64_t);
  int rc = cdag_scratch(g, c->tmp, bytes);
  if (!rc && !c->keeps) rc = cdag_scratch(g, c->res, bytes);   /* column 1 does not use them */
  if (!rc) rc = cdag_copy_local(g, c->part, c->res, bytes, NULL);
  for (mask = 1; !rc && mask < p; mask <<= 1) {
    if (rank & mask) {
      rc = cdag_send(g, c->res, bytes, rank - mask, 1, NULL);
      break;
    }
    if (rank + mask < p) {
      rc = cdag_recv(g, c->tmp, bytes, rank + mask, 1, NULL);
      if (!rc) rc = cdag_reduce_local(g, c->tmp, c->res, 2 * c->n, MPI_INT64_T, MPI_SUM, NULL);
    }
  }
  for (mask = 1; !rc && mask < p; mask <<= 1)
    if (rank & mask) {
      rc = cdag_recv(g, c->res, bytes, rank - mask, 2, NULL);
      break;
    }
  for (mask >>= 1; !rc && mask > 0; mask >>= 1)
    if (rank + mask < p) rc = cdag_send(g, c->res, bytes, rank + mask, 2, NULL);
  return rc;
}

static void cg_reset(void *arg) {
  cg_ctx *c = arg;
  for (size_t k = 0; k < 2 * c->n; k++) {
    c->part[k] = (int64_t)(c->rank + 1) * 1000 + (int64_t)k;
    c->res[k] = -1;
  }
}

static int cg_check(void *arg) {
  cg_ctx *c = arg;
  int64_t p = c->nprocs;
  for (size_t k = 0; c->keeps && k < 2 * c->n; k++)
    if (c->res[k] != 1000 * p * (p + 1) / 2 + p * (int64_t)k) return 0;
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "cg_dot", 1);
  int cols = p.nprocs >= 3 ? 2 : 1;
  cg_ctx c = {p.rank, p.nprocs, p.rank % cols == 0, p.n, NULL, NULL, NULL};
  c.part = ex_alloc(2 * p.n * sizeof(int64_t));
  c.res = ex_alloc(2 * p.n * sizeof(int64_t));
  c.tmp = ex_alloc(2 * p.n * sizeof(int64_t));
  p.ctx = &c;
  p.build = cg_build;
  p.reset = cg_reset;
  p.check = cg_check;
  p.nout = c.keeps;   /* the other column's results are scratch: not compared */
  p.out[0].ptr = c.res;
  p.out[0].bytes = 2 * p.n * sizeof(int64_t);
  int rc = ex_main(&p);
  free(c.part);
  free(c.res);
  free(c.tmp);
  MPI_Finalize();
  return rc;
}

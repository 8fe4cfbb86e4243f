/* cdag example — a hand-written reduce-scatter: every rank sends block j of its vector to
 * rank j, which adds the blocks it receives to its own (the first half of a ring or linear
 * allreduce, and the core of many domain-decomposition updates).
 *
 * cdag finds the reduce_scatter_block (at 3 or more ranks) and runs it as one MPI call.
 * Usage: reduce_scatter [iterations] [int64 elements per block]. */
#include "example.h"

typedef struct {
  int rank, nprocs;
  size_t n;
  int64_t *vec;   /* nprocs blocks of n: this rank's contribution */
  int64_t *out;   /* block `rank` of the sum over all ranks */
  int64_t *tmp;   /* nprocs blocks: what arrives from each rank */
} rs_ctx;

static int rs_build(cdag_graph *g, void *arg) {
  rs_ctx *c = arg;
  size_t bytes = c->n * sizeof(int64_t);
  int rc = cdag_copy_local(g, c->vec + (size_t)c->rank * c->n, c->out, bytes, NULL);
  for (int i = 0; i < c->nprocs && !rc; i++)
    if (i != c->rank) rc = cdag_send(g, c->vec + (size_t)i * c->n, bytes, i, 5, NULL);
  if (!rc) rc = cdag_scratch(g, c->tmp, bytes * (size_t)c->nprocs);
  for (int i = 0; i < c->nprocs && !rc; i++) {
    if (i == c->rank) continue;
    int64_t *t = c->tmp + (size_t)i * c->n;
    rc = cdag_recv(g, t, bytes, i, 5, NULL);
    if (!rc) rc = cdag_reduce_local(g, t, c->out, c->n, MPI_INT64_T, MPI_SUM, NULL);
  }
  return rc;
}

static int64_t value(int rank, int block, size_t k) { return (int64_t)(rank + 1) * 1000 + block * 37 + (int64_t)k; }

static void rs_reset(void *arg) {
  rs_ctx *c = arg;
  for (int j = 0; j < c->nprocs; j++)
    for (size_t k = 0; k < c->n; k++) c->vec[(size_t)j * c->n + k] = value(c->rank, j, k);
  for (size_t k = 0; k < c->n; k++) c->out[k] = -1;
}

static int rs_check(void *arg) {
  rs_ctx *c = arg;
  for (size_t k = 0; k < c->n; k++) {
    int64_t want = 0;
    for (int i = 0; i < c->nprocs; i++) want += value(i, c->rank, k);
    if (c->out[k] != want) return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "reduce_scatter", 1024);
  rs_ctx c = {p.rank, p.nprocs, p.n, ex_alloc(p.n * sizeof(int64_t) * (size_t)p.nprocs),
              ex_alloc(p.n * sizeof(int64_t)), ex_alloc(p.n * sizeof(int64_t) * (size_t)p.nprocs)};
  p.ctx = &c;
  p.build = rs_build;
  p.reset = rs_reset;
  p.check = rs_check;
  p.nout = 1;
  p.out[0].ptr = c.out;
  p.out[0].bytes = p.n * sizeof(int64_t);
  int rc = ex_main(&p);
  free(c.vec);
  free(c.out);
  free(c.tmp);
  MPI_Finalize();
  return rc;
}

/* cdag example — an SPhot-style tally gather: every rank sends its tally array to rank 0,
 * which receives each into its slot of a result table (and copies its own).
 *
 * Written as SPhot's point-to-point loop; cdag finds the gather.
 * Usage: sphot_gather [iterations] [int64 tallies per rank]. */
#include "example.h"

typedef struct {
  int rank, nprocs;
  size_t n;
  int64_t *tally, *table;  /* table: nprocs * n at rank 0 */
} sp_ctx;

static int sp_build(cdag_graph *g, void *arg) {
  sp_ctx *c = arg;
  size_t bytes = c->n * sizeof(int64_t);
  if (c->rank != 0) return cdag_send(g, c->tally, bytes, 0, 3, NULL);
  int rc = cdag_copy_local(g, c->tally, c->table, bytes, NULL);
  for (int i = 1; !rc && i < c->nprocs; i++) rc = cdag_recv(g, c->table + c->n * i, bytes, i, 3, NULL);
  return rc;
}

static void sp_reset(void *arg) {
  sp_ctx *c = arg;
  for (size_t k = 0; k < c->n; k++) c->tally[k] = (int64_t)c->rank * 100000 + (int64_t)k;
  for (size_t k = 0; k < c->n * c->nprocs; k++) c->table[k] = -1;
}

static int sp_check(void *arg) {
  sp_ctx *c = arg;
  if (c->rank != 0) return 1;
  for (int i = 0; i < c->nprocs; i++)
    for (size_t k = 0; k < c->n; k++)
      if (c->table[c->n * i + k] != (int64_t)i * 100000 + (int64_t)k) return 0;
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "sphot_gather", 2048);
  sp_ctx c = {p.rank, p.nprocs, p.n, ex_alloc(p.n * sizeof(int64_t)), ex_alloc(p.n * p.nprocs * sizeof(int64_t))};
  p.ctx = &c;
  p.build = sp_build;
  p.reset = sp_reset;
  p.check = sp_check;
  p.nout = 1;
  p.out[0].ptr = c.table;
  p.out[0].bytes = p.n * p.nprocs * sizeof(int64_t);
  int rc = ex_main(&p);
  free(c.tally);
  free(c.table);
  MPI_Finalize();
  return rc;
}

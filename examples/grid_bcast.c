/* cdag example — row and column broadcasts on a 2D process grid (as in SUMMA or LU):
 * ranks form an R x C grid (R the largest divisor of p not above sqrt(p)); the first rank
 * of each row sends its row panel to the rest of the row, and each rank of the first row
 * sends its column panel down its column, both as linear loops of sends.
 * cdag finds broadcasts on process subsets (rows and columns of at least min_group ranks)
 * and runs them on cached sub-communicators; smaller groups stay point-to-point.
 * Usage: grid_bcast [iterations] [int64 elements per panel]. */
#include "example.h"

typedef struct {
  int rank, nprocs, rows, cols;
  size_t n;
  int64_t *row, *col;
} grid_ctx;

static int grid_build(cdag_graph *g, void *arg) {
  grid_ctx *c = arg;
  int r = c->rank / c->cols, q = c->rank % c->cols, rc = CDAG_OK;
  size_t bytes = c->n * sizeof(int64_t);
  if (q == 0)
    for (int j = 1; j < c->cols && !rc; j++) rc = cdag_send(g, c->row, bytes, r * c->cols + j, 1, NULL);
  else
    rc = cdag_recv(g, c->row, bytes, r * c->cols, 1, NULL);
  if (rc) return rc;
  if (r == 0)
    for (int i = 1; i < c->rows && !rc; i++) rc = cdag_send(g, c->col, bytes, i * c->cols + q, 2, NULL);
  else
    rc = cdag_recv(g, c->col, bytes, q, 2, NULL);
  return rc;
}

static void grid_reset(void *arg) {
  grid_ctx *c = arg;
  int r = c->rank / c->cols, q = c->rank % c->cols;
  for (size_t k = 0; k < c->n; k++) {
    c->row[k] = q == 0 ? (int64_t)r * 1000000 + (int64_t)k : -1;
    c->col[k] = r == 0 ? (int64_t)q * 1000000 + 500000 + (int64_t)k : -1;
  }
}

static int grid_check(void *arg) {
  grid_ctx *c = arg;
  int r = c->rank / c->cols, q = c->rank % c->cols;
  for (size_t k = 0; k < c->n; k++)
    if (c->row[k] != (int64_t)r * 1000000 + (int64_t)k || c->col[k] != (int64_t)q * 1000000 + 500000 + (int64_t)k)
      return 0;
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "grid_bcast", 1024);
  grid_ctx c = {p.rank, p.nprocs, 1, p.nprocs, p.n, ex_alloc(p.n * sizeof(int64_t)), ex_alloc(p.n * sizeof(int64_t))};
  for (int d = 1; d * d <= p.nprocs; d++)
    if (p.nprocs % d == 0) c.rows = d;
  c.cols = p.nprocs / c.rows;
  p.ctx = &c;
  p.build = grid_build;
  p.reset = grid_reset;
  p.check = grid_check;
  p.nout = 2;
  p.out[0].ptr = c.row;
  p.out[0].bytes = p.n * sizeof(int64_t);
  p.out[1].ptr = c.col;
  p.out[1].bytes = p.n * sizeof(int64_t);
  int rc = ex_main(&p);
  free(c.row);
  free(c.col);
  MPI_Finalize();
  return rc;
}

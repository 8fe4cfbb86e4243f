/* cdag example — a linear broadcast: rank 0 sends its buffer to every other rank in turn.
 *
 * cdag finds the broadcast (at 3 or more ranks) and runs it as one MPI_Bcast.
 * Usage: linear_bcast [iterations] [int64 elements]. */
#include "example.h"

typedef struct {
  int rank, nprocs;
  size_t n;
  int64_t *buf;
} bc_ctx;

static int bc_build(cdag_graph *g, void *arg) {
  bc_ctx *c = arg;
  size_t bytes = c->n * sizeof(int64_t);
  if (c->rank != 0) return cdag_recv(g, c->buf, bytes, 0, 7, NULL);
  for (int i = 1; i < c->nprocs; i++) {
    int rc = cdag_send(g, c->buf, bytes, i, 7, NULL);
    if (rc) return rc;
  }
  return CDAG_OK;
}

static void bc_reset(void *arg) {
  bc_ctx *c = arg;
  for (size_t k = 0; k < c->n; k++) c->buf[k] = c->rank == 0 ? (int64_t)(k * 31 + 5) : -1;
}

static int bc_check(void *arg) {
  bc_ctx *c = arg;
  for (size_t k = 0; k < c->n; k++)
    if (c->buf[k] != (int64_t)(k * 31 + 5)) return 0;
  return 1;
}

int main(int argc, char **argv) {
  ex_pattern p;
  ex_init(&argc, &argv, &p, "linear_bcast", 4096);
  bc_ctx c = {p.rank, p.nprocs, p.n, ex_alloc(p.n * sizeof(int64_t))};
  p.ctx = &c;
  p.build = bc_build;
  p.reset = bc_reset;
  p.check = bc_check;
  p.nout = 1;
  p.out[0].ptr = c.buf;
  p.out[0].bytes = p.n * sizeof(int64_t);
  int rc = ex_main(&p);
  free(c.buf);
  MPI_Finalize();
  return rc;
}

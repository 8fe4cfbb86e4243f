/* cdag — fuzz/fuzz_saved.h: the fuzz targets' check that a graph saved loads again.
 *
 * Whatever graph a target holds (loaded, built through the API, analysed) is saved with
 * ir_save_file and loaded again, which must succeed: the writer's output is always a valid
 * file. With `same` (a graph just loaded), the result must also have the same ops in the
 * same program order (a strided copy's blocks and strides too) and the same counts of
 * explicit and derived dependencies and of scratch regions. A failure aborts, naming the target. */
#ifndef CDAG_FUZZ_SAVED_H
#define CDAG_FUZZ_SAVED_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/format.h"

static void fuzz_fail(const char *target, const char *what) {
  fprintf(stderr, "%s: %s: %s\n", target, what, cdag_error_message());
  abort();
}

static void fuzz_saved_loads(const char *target, const cdag_graph *g, int same) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return;
  if (ir_save_file(g, f) != CDAG_OK) fuzz_fail(target, "save");
  fclose(f);
  ir_load_opts o = {0, IR_MAX_RANKS, 0};   /* saved flat: no blocks to expand */
  cdag_graph *h = NULL;
  if (ir_load_mem(buf, len, "saved", &o, &h) != CDAG_OK) {
    fprintf(stderr, "%.*s\n", (int)len, buf);
    fuzz_fail(target, "the saved graph does not load");
  }
  if (!same) {
    ir_graph_free(h);
    free(buf);
    return;
  }
  if (h->nops != g->nops || h->ndeps != g->ndeps || h->nscratch != g->nscratch || h->nprocs != g->nprocs)
    fuzz_fail(target, "the saved graph differs");
  for (int64_t i = 0; i < g->nops; i++) { /* same ops in the same program order */
    int32_t x = g->rank_ops[i], y = h->rank_ops[i];
    if (g->kind[x] != h->kind[y] || g->rank[x] != h->rank[y] || g->peer[x] != h->peer[y] ||
        g->tag[x] != h->tag[y] || g->addr[x] != h->addr[y] || (g->addr2 ? g->addr2[x] : 0) != (h->addr2 ? h->addr2[y] : 0) ||
        g->bytes[x] != h->bytes[y])
      fuzz_fail(target, "an op of the saved graph differs");
    ir_blocks a = ir_copy_blocks(g, x), b = ir_copy_blocks(h, y);
    if (a.n != b.n || a.len != b.len || a.from != b.from || a.to != b.to || !a.from_at != !b.from_at || !a.to_at != !b.to_at)
      fuzz_fail(target, "a strided copy of the saved graph differs");
    for (uint64_t j = 0; j < a.n; j++)
      if (ir_block_from(&a, j) != ir_block_from(&b, j) || ir_block_to(&a, j) != ir_block_to(&b, j))
        fuzz_fail(target, "a listed copy of the saved graph differs");
  }
  if (g->nedges != h->nedges) fuzz_fail(target, "the saved graph has other dependencies");
  ir_graph_free(h);
  free(buf);
}

#endif

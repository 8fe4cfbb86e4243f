/* cdag — fuzz/fuzz_load.c: libFuzzer target for the graph-file loader (ir_load_mem).
 *
 * Each input is loaded twice (shared GOAL buffers and --goal-buffers=fresh). A load must
 * either succeed or fail with a message and no graph; whatever loads is saved and loaded
 * again, which must succeed with the same ops in the same program order, the same counts of
 * explicit and derived dependencies and of scratch regions (the writer's output is always a
 * valid file describing the same graph). Any crash, sanitizer report, leak or abort is a finding. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/format.h"

static void fail(const char *what) {
  fprintf(stderr, "fuzz_load: %s: %s\n", what, cdag_error_message());
  abort();
}

static void round_trip(const cdag_graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return;
  if (ir_save_file(g, f) != CDAG_OK) fail("save");
  fclose(f);
  ir_load_opts o = {0, IR_MAX_RANKS};
  cdag_graph *h = NULL;
  if (ir_load_mem(buf, len, "saved", &o, &h) != CDAG_OK) {
    fprintf(stderr, "%.*s\n", (int)len, buf);
    fail("the saved graph does not load");
  }
  if (h->nops != g->nops || h->ndeps != g->ndeps || h->nscratch != g->nscratch || h->nprocs != g->nprocs)
    fail("the saved graph differs");
  for (int64_t i = 0; i < g->nops; i++) { /* same ops in the same program order */
    int32_t x = g->rank_ops[i], y = h->rank_ops[i];
    if (g->kind[x] != h->kind[y] || g->rank[x] != h->rank[y] || g->peer[x] != h->peer[y] ||
        g->tag[x] != h->tag[y] || g->addr[x] != h->addr[y] || (g->addr2 ? g->addr2[x] : 0) != (h->addr2 ? h->addr2[y] : 0) ||
        g->bytes[x] != h->bytes[y])
      fail("an op of the saved graph differs");
  }
  if (g->nedges != h->nedges) fail("the saved graph has other dependencies");
  ir_graph_free(h);
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int fresh = 0; fresh < 2; fresh++) {
    ir_load_opts o = {fresh, IR_MAX_RANKS}; /* finalize refuses rank counts the ops do not use */
    cdag_graph *g = NULL;
    cdag__error_clear();
    int rc = ir_load_mem((const char *)data, size, "fuzz", &o, &g);
    if (rc != CDAG_OK) {
      if (g) fail("a failed load returned a graph");
      if (!cdag_error_message()[0]) fail("a failed load set no message");
      continue;
    }
    round_trip(g);
    ir_graph_free(g);
  }
  return 0;
}

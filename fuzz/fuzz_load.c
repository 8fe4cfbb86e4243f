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

#include "fuzz_saved.h"

static void fail(const char *what) { fuzz_fail("fuzz_load", what); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int fresh = 0; fresh < 2; fresh++) {
    /* up to 2^18 ranks: a file's rank count costs memory per rank before its first op (a
       tiny input declaring 9 million ranks took 6.5 s instrumented, a timeout) */
    ir_load_opts o = {fresh, 1 << 18, 4096};
    cdag_graph *g = NULL;
    cdag__error_clear();
    int rc = ir_load_mem((const char *)data, size, "fuzz", &o, &g);
    if (rc != CDAG_OK) {
      if (g) fail("a failed load returned a graph");
      if (!cdag_error_message()[0]) fail("a failed load set no message");
      continue;
    }
    fuzz_saved_loads("fuzz_load", g, 1);
    ir_graph_free(g);
  }
  return 0;
}

/* cdag — fuzz/fuzz_check.c: libFuzzer target for the whole `cdag check` path.
 *
 * Load (which finalizes: program order, memory-conflict dependencies, cycles among
 * `requires`), then match messages with match_run: unmatched operations, truncation and
 * deadlocks must come back as errors with a message, never as crashes; after a successful
 * match every send and receive has a partner of the opposite kind. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/format.h"
#include "match/match.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* a leading '#' comment selects fresh buffers; at most 2^18 ranks, as fuzz_load */
  ir_load_opts o = {size > 0 && data[0] == '#', 1 << 18, 4096};   /* memory per rank: as fuzz_load */
  cdag_graph *g = NULL;
  if (ir_load_mem((const char *)data, size, "fuzz", &o, &g) != CDAG_OK) return 0;
  match_result m = {0};
  cdag__error_clear();
  int rc = match_run(g, &m);
  if (rc == CDAG_OK) {
    for (int64_t i = 0; i < g->nops; i++)
      if ((g->kind[i] == IR_SEND || g->kind[i] == IR_RECV) &&
          (m.partner[i] < 0 || m.partner[i] >= g->nops || g->kind[m.partner[i]] != 1 - g->kind[i])) {
        fprintf(stderr, "fuzz_check: op %lld has no valid partner after a successful match\n", (long long)i);
        abort();
      }
  } else if (!cdag_error_message()[0]) {
    abort();
  }
  match_free(&m);
  ir_graph_free(g);
  return 0;
}

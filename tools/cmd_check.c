/* cdag — tools/cmd_check.c: `cdag check FILE`.
 *
 * Loads and finalizes a graph file, matches its messages (unmatched operations, truncation
 * and deadlocks are errors) and prints a one-line summary:
 *   ok: 16 ranks, 30 ops (15 send, 15 recv, 0 reduce, 0 copy, 0 calc), 15 messages, 11 dependencies
 * where dependencies counts the edges of the finalized graph (explicit and memory conflicts).
 * Exit status: 0 valid, 1 invalid (the located message on stderr), 2 usage. */
#include <string.h>

#include "cmd.h"
#include "ir/ir.h"
#include "match/match.h"

static void summary(const cdag_graph *g, int64_t messages) {
  int64_t n[IR_NKINDS] = {0};
  for (int64_t i = 0; i < g->nops; i++) n[g->kind[i]]++;
  printf("ok: %d ranks, %lld ops (%lld send, %lld recv, %lld reduce, %lld copy, %lld calc), %lld messages, "
         "%lld dependencies\n",
         g->nprocs, (long long)g->nops, (long long)n[IR_SEND], (long long)n[IR_RECV], (long long)n[IR_REDUCE],
         (long long)n[IR_COPY], (long long)n[IR_CALC], (long long)messages, (long long)g->nedges);
}

int cmd_check(int argc, char **argv) {
  int buffers = cmd_goal_buffers(&argc, argv);
  if (buffers < 0 || argc != 1 || (argv[0][0] == '-' && argv[0][1])) return cmd_usage("check");
  cdag_graph *g = NULL;
  if (cmd_load("check", argv[0], buffers, &g)) return 1;
  int64_t messages = 0;
  match_result m = {0};
  int rc = match_run(g, &m);
  if (rc) {
    cmd_fail("check", rc);
    ir_graph_free(g);
    return 1;
  }
  for (int64_t i = 0; i < g->nops; i++) messages += g->kind[i] == IR_SEND && m.partner[i] >= 0;
  match_free(&m);
  summary(g, messages);
  ir_graph_free(g);
  return 0;
}

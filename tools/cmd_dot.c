/* cdag — tools/cmd_dot.c: `cdag dot FILE`, the graph as Graphviz DOT.
 *
 * One `subgraph cluster_rank<N>` per rank that has ops, a box per op (kind, bytes, peer, and
 * the file label), solid edges for messages (send -> the receive it matches, from match_run),
 * dashed edges for dependencies (the finalized graph's pred lists: explicit `requires` and
 * memory conflicts). Nodes are named o<id>. `--plan` (the optimized plan) is not built yet.
 * Exit status: 0 written, 1 bad input, 2 usage. */
#include <string.h>

#include "cmd.h"
#include "ir/ir.h"
#include "match/match.h"

/* --goal-buffers=fresh|shared; -1 for a bad value. */
static int goal_buffers(int *argc, char **argv) {
  const char *v = cmd_flag_value(argc, argv, "--goal-buffers=");
  if (!v || strcmp(v, "shared") == 0) return 0;
  return strcmp(v, "fresh") == 0 ? 1 : -1;
}

/* Writes s inside a DOT double-quoted string. */
static void dot_escape(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if ((unsigned char)*s >= 0x20) fputc(*s, f);
  }
}

static void dot_node(FILE *f, const cdag_graph *g, int32_t op) {
  unsigned long long b = g->bytes[op];
  fprintf(f, "    o%d [label=\"", op);
  switch (g->kind[op]) {
    case IR_SEND: fprintf(f, "send %lluB to %d", b, g->peer[op]); break;
    case IR_RECV: fprintf(f, "recv %lluB from %d", b, g->peer[op]); break;
    case IR_REDUCE: {
      int size = ir_type_size(g->peer[op]);
      fprintf(f, "reduce %llu %s %s", size ? b / (unsigned)size : 0ULL, ir_type_name(g->peer[op]),
              ir_rop_name(g->tag[op]));
      break;
    }
    case IR_COPY: fprintf(f, "copy %lluB", b); break;
    default: fprintf(f, "calc %llu", b); break;
  }
  const char *l = ir_label(g, op);
  if (l) {
    fputs("\\n", f);
    dot_escape(f, l);
  }
  fputs("\"];\n", f);
}

static void dot_write(FILE *f, const cdag_graph *g, const int32_t *partner) {
  fprintf(f, "digraph cdag {\n  node [shape=box, fontsize=10];\n");
  for (int r = 0; r < g->nprocs; r++) {
    if (g->rank_start[r] == g->rank_start[r + 1]) continue;
    fprintf(f, "  subgraph cluster_rank%d {\n    label=\"rank %d\";\n", r, r);
    for (int32_t i = g->rank_start[r]; i < g->rank_start[r + 1]; i++) dot_node(f, g, g->rank_ops[i]);
    fprintf(f, "  }\n");
  }
  for (int64_t i = 0; i < g->nops; i++)
    if (g->kind[i] == IR_SEND && partner[i] >= 0) fprintf(f, "  o%lld -> o%d;\n", (long long)i, partner[i]);
  for (int64_t i = 0; i < g->nops; i++)
    for (int32_t k = g->pred_start[i]; k < g->pred_start[i + 1]; k++)
      fprintf(f, "  o%d -> o%lld [style=dashed];\n", g->pred[k], (long long)i);
  fprintf(f, "}\n");
}

int cmd_dot(int argc, char **argv) {
  int fresh = goal_buffers(&argc, argv);
  int plan = cmd_has_flag(&argc, argv, "--plan");
  if (fresh < 0 || argc != 1 || (argv[0][0] == '-' && argv[0][1])) return cmd_usage("dot");
  if (plan) {
    fprintf(stderr, "cdag dot: --plan is not built yet\n");
    return 1;
  }
  cdag_graph *g = NULL;
  if (cmd_load("dot", argv[0], fresh, &g)) return 1;
  match_result m = {0};
  int rc = match_run(g, &m);
  if (rc) {
    cmd_fail("dot", rc);
    ir_graph_free(g);
    return 1;
  }
  dot_write(stdout, g, m.partner);
  match_free(&m);
  ir_graph_free(g);
  return fflush(stdout) == 0 ? 0 : 1;
}

/* cdag — tools/cmd_dot.c: `cdag dot FILE`, the graph as Graphviz DOT.
 *
 * One `subgraph cluster_rank<N>` per rank that has ops, a box per op (kind, bytes, peer, and
 * the file label; a computation is a hexagon with its cost and what it reads and writes),
 * solid edges for messages (send -> the receive it matches, from match_run), dashed edges
 * for dependencies (the finalized graph's pred lists: explicit `requires` and memory
 * conflicts). Nodes are named o<id>. With `--plan`, the compiled plan is drawn beside it
 * (Figure 6 of the paper): per rank, one node per collective it takes part in (rooted
 * kinds: bold edges from the root; the others: one shared ellipse) and one per residual
 * message end. A plan in stages (a graph that computes) has a `cluster_stage<K>` per stage
 * holding those, its nodes prefixed s<K>_, and a hexagon per computation (k<i>) between
 * them: dotted edges from the anchor point of the stage it follows (s<K>) to it and from it
 * to the next stage's. Exit status: 0 written, 1 bad input, 2 usage. */
#include <string.h>

#include "cmd.h"
#include "exec/pipeline.h"
#include "ir/ir.h"
#include "detect/detect.h"
#include "match/match.h"

/* Writes s inside a DOT double-quoted string. */
static void dot_escape(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if ((unsigned char)*s >= 0x20) fputc(*s, f);
  }
}

/* A computation's label: its cost, what it reads and writes. */
static void dot_compute(FILE *f, const cdag_graph *g, int32_t op) {
  fprintf(f, "compute %llu ns", (unsigned long long)g->bytes[op]);
  if (g->cr_len[op] == IR_READS_ALL) fprintf(f, "\\nreads all");
  else if (g->cr_len[op]) fprintf(f, "\\nreads %lluB at 0x%llx", (unsigned long long)g->cr_len[op], (unsigned long long)g->addr2[op]);
  if (!g->cw_len[op]) return;
  ir_blocks w = ir_write_blocks(g, op);   /* at its first block, as the file writes it */
  fprintf(f, "\\nwrites %lluB at 0x%llx", (unsigned long long)g->cw_len[op],
          (unsigned long long)(g->addr[op] + ir_block_to(&w, 0)));
  if (w.n > 1) fprintf(f, " in %llu blocks", (unsigned long long)w.n);
}

static void dot_node(FILE *f, const cdag_graph *g, int32_t op) {
  unsigned long long b = g->bytes[op];
  fprintf(f, "    o%d [label=\"", op);
  switch (g->kind[op]) {
    case IR_SEND: fprintf(f, "send %lluB to %d tag %d", b, g->peer[op], g->tag[op]); break;
    case IR_RECV: fprintf(f, "recv %lluB from %d tag %d", b, g->peer[op], g->tag[op]); break;
    case IR_REDUCE: {
      int size = ir_type_size(g->peer[op]);
      fprintf(f, "reduce %llu %s %s", size ? b / (unsigned)size : 0ULL, ir_type_name(g->peer[op]),
              ir_rop_name(g->tag[op]));
      break;
    }
    case IR_COPY:
      fprintf(f, "copy %lluB", b);
      if (ir_is_strided(g, op)) fprintf(f, " in %llu blocks", (unsigned long long)ir_copy_blocks(g, op).n);
      break;
    default:
      if (ir_is_compute(g, op)) dot_compute(f, g, op);
      else fprintf(f, "calc %llu", b);
      break;
  }
  const char *l = ir_label(g, op);
  if (l) {
    fputs("\\n", f);
    dot_escape(f, l);
  }
  fputs(ir_is_compute(g, op) ? "\", shape=hexagon];\n" : "\"];\n", f);
}

static void dot_original(FILE *f, const cdag_graph *g, const int32_t *partner) {
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
}

static int member_of(const cdag_plan *p, const det_coll *c, int r) {
  for (int32_t i = 0; i < c->nranks; i++)
    if (p->ranks[c->ranks_first + i] == r) return 1;
  return 0;
}

static int rooted(det_kind k) { return ir_coll_get(k)->rooted; }

/* The plan's nodes of rank r: its collectives and its residual message ends; names start
   with pre (a stage's "s<K>_", or nothing). */
static void dot_plan_rank(FILE *f, const cdag_plan *p, int r, const char *pre) {
  fprintf(f, "    subgraph cluster_plan_%srank%d {\n      label=\"rank %d\";\n", pre, r, r);
  for (int64_t k = 0; k < p->ncolls; k++) {
    const det_coll *c = &p->colls[k];
    if (!member_of(p, c, r)) continue;
    fprintf(f, "      %sc%lld_r%d [label=\"%s", pre, (long long)k, r, det_kind_name(c->kind));
    if (rooted(c->kind)) fprintf(f, " (root %d)", c->root);
    fprintf(f, "\\n%llu B\", style=filled, fillcolor=lightblue];\n", (unsigned long long)c->bytes);
  }
  for (int64_t k = 0; k < p->nmsgs; k++) {
    const det_msg *m = &p->msgs[k];
    unsigned long long b = m->bytes;
    if (m->src == r && m->dst == r) fprintf(f, "      %sm%lld_s [label=\"copy %llu B\"];\n", pre, (long long)k, b);
    else if (m->src == r) fprintf(f, "      %sm%lld_s [label=\"send %llu B to %d\"];\n", pre, (long long)k, b, m->dst);
    else if (m->dst == r) fprintf(f, "      %sm%lld_r [label=\"recv %llu B from %d\"];\n", pre, (long long)k, b, m->src);
  }
  fprintf(f, "    }\n");
}

/* Edges of one stage plan's collectives and messages. */
static void dot_plan_edges(FILE *f, const cdag_plan *p, const char *pre) {
  for (int64_t k = 0; k < p->ncolls; k++) {
    const det_coll *c = &p->colls[k];
    long long K = (long long)k;
    if (!rooted(c->kind)) fprintf(f, "  %sc%lld [shape=ellipse, label=\"%s\"];\n", pre, K, det_kind_name(c->kind));
    for (int32_t i = 0; i < c->nranks; i++) {
      int r = p->ranks[c->ranks_first + i];
      if (!rooted(c->kind)) fprintf(f, "  %sc%lld -> %sc%lld_r%d [dir=none];\n", pre, K, pre, K, r);
      else if (r != c->root) fprintf(f, "  %sc%lld_r%d -> %sc%lld_r%d [style=bold];\n", pre, K, c->root, pre, K, r);
    }
  }
  for (int64_t k = 0; k < p->nmsgs; k++)
    if (p->msgs[k].src != p->msgs[k].dst) fprintf(f, "  %sm%lld_s -> %sm%lld_r;\n", pre, (long long)k, pre, (long long)k);
}

/* A plan in stages: a cluster per stage (an anchor point s<K> and the ranks' nodes), the
   computations between them, dotted edges in the order they run. */
static void dot_stages(FILE *f, const cdag_plan *p) {
  const stage_steps *st = p->steps;
  char pre[32];
  for (const cdag_plan *q = p; q; q = q->next) {
    snprintf(pre, sizeof pre, "s%d_", q->stage);
    fprintf(f, "    subgraph cluster_stage%d {\n    label=\"stage %d\";\n    s%d [shape=point];\n", q->stage,
            q->stage, q->stage);
    for (int r = 0; r < q->nprocs; r++) dot_plan_rank(f, q, r, pre);
    fprintf(f, "    }\n");
  }
  fprintf(f, "  }\n");
  for (const cdag_plan *q = p; q; q = q->next) {
    snprintf(pre, sizeof pre, "s%d_", q->stage);
    dot_plan_edges(f, q, pre);
    if (q->next) fprintf(f, "  s%d -> s%d [style=invis];\n", q->stage, q->next->stage);   /* stages in order */
  }
  for (int64_t i = 0; i < st->ncomputes; i++) {
    const stage_compute *c = &st->computes[i];
    fprintf(f, "  k%lld [shape=hexagon, label=\"compute %llu ns\\nrank %d\"];\n", (long long)i,
            (unsigned long long)c->cost, c->rank);
    if (c->after >= 0) fprintf(f, "  s%d -> k%lld [style=dotted];\n", c->after, (long long)i);
    if (c->after + 1 < st->nstages) fprintf(f, "  k%lld -> s%d [style=dotted];\n", (long long)i, c->after + 1);
  }
}

static void dot_plan(FILE *f, const cdag_plan *p) {
  /* the plan the price set aside is drawn all the same, and says so */
  fprintf(f, "  subgraph cluster_plan {\n    label=\"compiled plan%s\";\n",
          p->as_written == DET_WRITTEN_COST ? " (not used: no faster than the graph as written)" : "");
  if (p->steps) {
    dot_stages(f, p);
    return;
  }
  for (int r = 0; r < p->nprocs; r++) dot_plan_rank(f, p, r, "");
  fprintf(f, "  }\n");
  dot_plan_edges(f, p, "");
}

int cmd_dot(int argc, char **argv) {
  int buffers = cmd_goal_buffers(&argc, argv);
  int with_plan = cmd_has_flag(&argc, argv, "--plan");
  cdag_options o;
  pipeline_tune t;
  if (buffers < 0 || cmd_options(&argc, argv, &o) || argc != 1 || (argv[0][0] == '-' && argv[0][1]))
    return cmd_usage("dot");
  cdag__error_clear();
  if (with_plan && pipeline_tuning(&o, NULL, &t)) return cmd_fail("dot", CDAG_ERR_ARG);
  cdag_graph *g = NULL;
  cdag_plan *p = NULL;
  if (cmd_load("dot", argv[0], buffers, &g)) return 1;
  match_result m = {0};
  int rc = match_run(g, &m);
  if (rc == CDAG_OK && with_plan) rc = pipeline_plan(g, &o, &t, &p);   /* as priced, as `cdag analyze` */
  if (rc == CDAG_OK) rc = ir_need_deps(g); /* the analysis released them */
  if (rc == CDAG_OK) {
    printf("digraph cdag {\n  node [shape=box, fontsize=10];\n");
    if (p) printf("  subgraph cluster_original {\n  label=\"original graph\";\n");
    dot_original(stdout, g, m.partner);
    if (p) printf("  }\n");
    if (p) dot_plan(stdout, p);
    printf("}\n");
  }
  int status = rc ? cmd_fail("dot", rc) : 0;   /* main() checks standard output */
  cdag_plan_free(&p);
  match_free(&m);
  ir_graph_free(g);
  return status;
}

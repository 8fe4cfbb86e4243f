/* cdag — src/model/goal.c: a graph written as the plain GOAL that LogGOPSim reads (lower.h).
 *
 * The grammar is that of LogGOPSim's txt2bin (spcl/LogGOPSim, src/LogGOPSim/txt2bin.re): a
 * line-based scanner that takes `num_ranks N`, then `rank R {` ... `}` blocks; inside, one
 * item per line: `LABEL: send Nb to R [tag T] [cpu C] [nic N]`, `recv Nb from R ...`,
 * `calc N [cpu C]`, and `LABEL requires LABEL` (`irequires` for start dependencies) whose labels must be defined on earlier
 * lines. Labels are [a-zA-Z][a-zA-Z0-9_]*. txt2bin stops after the block of rank N-1, so
 * every rank gets a block, in order. cdag's extensions (addr, copy, reduce, scratch) have
 * no place there: copies and reduces become calc, memory conflicts become requires. */
#include <inttypes.h>
#include <math.h>

#include "model/lower.h"
#include "match/match.h"

static int write_blocks(const cdag_graph *g, FILE *f, double copy_ns_per_byte, const int64_t *sfirst,
                        const int64_t *sorder);

static int64_t calc_cost(const cdag_graph *g, int32_t op, double ns_per_byte) {
  if (g->kind[op] == IR_CALC) return (int64_t)g->bytes[op];
  double c = ceil((double)g->bytes[op] * ns_per_byte);
  return c < 1 ? 1 : (int64_t)c;
}

/* Start dependencies grouped by rank (counting sort): sorder[sfirst[r] .. sfirst[r+1]). */
static int start_deps_by_rank(const cdag_graph *g, int64_t **sfirst, int64_t **sorder) {
  *sfirst = calloc((size_t)g->nprocs + 2, sizeof **sfirst);
  *sorder = malloc((size_t)(g->nsdeps ? g->nsdeps : 1) * sizeof **sorder);
  if (!*sfirst || !*sorder) return CDAG_NOMEM("GOAL export");
  for (int64_t d = 0; d < g->nsdeps; d++) (*sfirst)[g->rank[g->sdep[2 * d]] + 2]++;
  for (int32_t r = 0; r < g->nprocs; r++) (*sfirst)[r + 2] += (*sfirst)[r + 1];
  for (int64_t d = 0; d < g->nsdeps; d++) (*sorder)[(*sfirst)[g->rank[g->sdep[2 * d]] + 1]++] = d;
  return CDAG_OK;
}

static int exec_goal_write_deps(const cdag_graph *g, FILE *f, double copy_ns_per_byte) {
  int64_t *sfirst = NULL, *sorder = NULL;
  int rc = start_deps_by_rank(g, &sfirst, &sorder);
  if (!rc) rc = write_blocks(g, f, copy_ns_per_byte, sfirst, sorder);
  free(sfirst);
  free(sorder);
  return rc;
}

static int write_blocks(const cdag_graph *g, FILE *f, double copy_ns_per_byte, const int64_t *sfirst,
                        const int64_t *sorder) {
  int32_t top = 0;   /* the tags of gets' and puts' messages (negative) follow the graph's own */
  for (int64_t i = 0; i < g->nops; i++)
    if ((g->kind[i] == IR_SEND || g->kind[i] == IR_RECV) && g->tag[i] > top) top = g->tag[i];
  fprintf(f, "num_ranks %d\n", g->nprocs);
  for (int32_t r = 0; r < g->nprocs; r++) {
    fprintf(f, "\nrank %d {\n", r);
    for (int32_t k = g->rank_start[r]; k < g->rank_start[r + 1]; k++) {
      int32_t op = g->rank_ops[k], i = k - g->rank_start[r];
      int kind = g->kind[op];
      int32_t cpu = g->cpu ? g->cpu[op] : -1, nic = g->nic ? g->nic[op] : -1;
      if (kind == IR_SEND || kind == IR_RECV) {
        int64_t tag = g->tag[op] < 0 ? (int64_t)top - g->tag[op] : g->tag[op];
        if (g->peer[op] < 0 || tag > INT32_MAX)
          return cdag__error(CDAG_ERR_UNSUPPORTED, "GOAL export: rank %d op %d has a negative peer or no tag left", r, i);
        fprintf(f, "l%d: %s %" PRIu64 "b %s %d tag %lld", i, kind == IR_SEND ? "send" : "recv", g->bytes[op],
                kind == IR_SEND ? "to" : "from", g->peer[op], (long long)tag);
        if (cpu >= 0) fprintf(f, " cpu %d", cpu);
        if (nic >= 0) fprintf(f, " nic %d", nic);
      } else {
        fprintf(f, "l%d: calc %" PRId64, i, calc_cost(g, op, copy_ns_per_byte));
        if (cpu >= 0) fprintf(f, " cpu %d", cpu);
      }
      fputc('\n', f);
    }
    for (int32_t k = g->rank_start[r]; k < g->rank_start[r + 1]; k++) {
      int32_t op = g->rank_ops[k];
      for (int32_t e = g->pred_start[op]; e < g->pred_start[op + 1]; e++)
        fprintf(f, "l%d requires l%d\n", k - g->rank_start[r], g->pos[g->pred[e]]);
    }
    for (int64_t k = sfirst[r]; k < sfirst[r + 1]; k++)
      fprintf(f, "l%d irequires l%d\n", g->pos[g->sdep[2 * sorder[k] + 1]], g->pos[g->sdep[2 * sorder[k]]]);
    fprintf(f, "}\n");
  }
  if (fflush(f) != 0 || ferror(f)) return cdag__error(CDAG_ERR_IO, "GOAL export: write failed");
  return CDAG_OK;
}

int exec_goal_write(const cdag_graph *g, FILE *f, double copy_ns_per_byte) {
  if (!g || !f) return cdag__error(CDAG_ERR_ARG, "exec_goal_write: NULL argument");
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "exec_goal_write: the graph is not finalized");
  match_result m = {0};   /* a graph whose messages do not match is no program: refuse it */
  int rc = match_run(g, &m);
  match_free(&m);
  if (rc) return rc;
  ir_deps_view v;
  rc = ir_deps_view_open(g, &v);
  if (rc == CDAG_OK) rc = exec_goal_write_deps(v.g, f, copy_ns_per_byte);
  ir_deps_view_close(&v);
  return rc;
}

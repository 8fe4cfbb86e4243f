/* cdag — src/model/calc_path.c: the computation on a graph's critical path (lower.h).
 *
 * The longest chain of calcs (computations and GOAL's plain calcs, each weighing its cost
 * in ns) along the graph's dependencies (explicit and memory conflicts) and its messages
 * (a send before the receive it is paired with): the graph as written, however fast its
 * messages, finishes no sooner. A plan may: a dependency of storage alone (a write after a
 * read or after a write of the same bytes) orders the graph but moves no byte, and the plan,
 * which moves each byte from where it was made, need not wait for it. `cdag model` takes the
 * rest of the modelled time as the time communication costs. Kahn's order over both kinds of edges: O(n + m). */
#include <stdlib.h>

#include "model/lower.h"

/* In-degrees, then a queue in topological order; dist[op]: the heaviest chain ending at op
   (op's own cost included), in ns. */
static int longest(const cdag_graph *g, const int32_t *partner, uint64_t *best) {
  int64_t n = g->nops;
  int32_t *need = calloc((size_t)n + 1, sizeof *need), *queue = malloc(((size_t)n + 1) * sizeof *queue);
  uint64_t *dist = calloc((size_t)n + 1, sizeof *dist);
  if (!need || !queue || !dist) {
    free(need);
    free(queue);
    free(dist);
    return CDAG_NOMEM("critical path");
  }
  for (int64_t i = 0; i < n; i++) need[i] = g->pred_start[i + 1] - g->pred_start[i] + (g->kind[i] == IR_RECV && partner[i] >= 0);
  int64_t head = 0, tail = 0;
  for (int64_t i = 0; i < n; i++)
    if (!need[i]) queue[tail++] = (int32_t)i;
  *best = 0;
  while (head < tail) {
    int32_t op = queue[head++];
    uint64_t d = dist[op] + (g->kind[op] == IR_CALC ? g->bytes[op] : 0);
    if (d > *best) *best = d;
    for (int32_t k = g->succ_start[op]; k <= g->succ_start[op + 1]; k++) {
      int32_t s = k < g->succ_start[op + 1] ? g->succ[k] : g->kind[op] == IR_SEND ? partner[op] : -1;
      if (s < 0) continue;
      if (d > dist[s]) dist[s] = d;
      if (--need[s] == 0) queue[tail++] = s;
    }
  }
  int rc = tail == n ? CDAG_OK : cdag__error(CDAG_ERR_CYCLE, "critical path: %lld of %lld ops wait for each other",
                                             (long long)(n - tail), (long long)n);
  free(need);
  free(queue);
  free(dist);
  return rc;
}

int exec_calc_path(const cdag_graph *g, const int32_t *partner, double *us) {
  if (!g || !partner || !us || g->state == IR_BUILDING)
    return cdag__error(CDAG_ERR_ARG, "exec_calc_path: a finalized graph and its pairing expected");
  ir_deps_view v;
  uint64_t ns = 0;
  int rc = ir_deps_view_open(g, &v);
  if (rc == CDAG_OK) rc = longest(v.g, partner, &ns);
  ir_deps_view_close(&v);
  *us = (double)ns * 1e-3;
  return rc;
}

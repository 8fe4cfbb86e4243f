/* cdag benchmark — the LogGOPS model's speed (a benchmark, not a test).
 *
 * Loads a graph file (GOAL ops without addresses get fresh buffers) and times the load and
 * exec_loggp, the model `cdag model` runs on the graph as written, on one core.
 * Usage: model_bench FILE (scripts/bench-model.sh writes a linear alltoall on 1024 ranks). */
#include <stdio.h>
#include <time.h>

#include "exec/model/lower.h"
#include "ir/format.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: model_bench FILE\n");
    return 2;
  }
  ir_load_opts o = {.goal_buffers = IR_GOAL_FRESH};
  cdag_graph *g = NULL;
  double t0 = now();
  if (ir_load_file(argv[1], &o, &g)) {
    fprintf(stderr, "model_bench: %s\n", cdag_error_message());
    return 1;
  }
  double t1 = now(), us = 0;
  loggp_params lp = loggp_defaults();
  int last = 0;
  if (exec_loggp(g, &lp, &us, &last)) {
    fprintf(stderr, "model_bench: %s\n", cdag_error_message());
    return 1;
  }
  double t2 = now();
  printf("%lld ops on %d ranks: load %.2f s, model %.2f s (%.0f ns per op); modelled time %.3f us\n",
         (long long)g->nops, g->nprocs, t1 - t0, t2 - t1, (t2 - t1) * 1e9 / (double)(g->nops ? g->nops : 1), us);
  ir_graph_free(g);
  return 0;
}

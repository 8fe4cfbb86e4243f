/* cdag benchmark — the LogGOPS model's speed (a benchmark, not a test).
 *
 * Loads a graph file (GOAL ops without addresses get fresh buffers) and times each step of
 * `cdag model` on one core: the load, the model of the graph as written, the analysis, the
 * lowering of the plan to point-to-point, the computation kept in it, and its model.
 * Usage: model_bench FILE (scripts/bench-model.sh writes a linear alltoall on 1024 ranks);
 * CDAG_BENCH_CPU=1 times CPU seconds instead of wall clock. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "exec/model/lower.h"
#include "exec/pipeline.h"
#include "ir/format.h"

/* Wall-clock seconds; CDAG_BENCH_CPU=1: this process's CPU seconds, user + sys (for a busy
   machine, as scale_bench). */
static double now(void) {
  static int cpu = -1;
  if (cpu < 0) cpu = getenv("CDAG_BENCH_CPU") && atoi(getenv("CDAG_BENCH_CPU")) == 1;
  struct timespec t;
  clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void fail(const char *what) {
  fprintf(stderr, "model_bench: %s: %s\n", what, cdag_error_message());
  exit(1);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: model_bench FILE\n");
    return 2;
  }
  ir_load_opts o = {.goal_buffers = IR_GOAL_FRESH};
  cdag_graph *g = NULL, *low = NULL;
  cdag_plan *p = NULL;
  loggp_params lp = loggp_defaults();
  cdag_options opts;
  pipeline_tune tune;   /* as cdag model has them */
  cdag_options_init(&opts);
  if (pipeline_tuning(&opts, NULL, &tune)) fail("CDAG_* settings");
  kern_model km = {(lp.L + 2 * lp.o) * 1e-6, lp.G * 1e-6, tune.model.blocks, (lp.o > lp.g ? lp.o : lp.g) * 1e-6,
                   lp.copy * 1e-6};
  ir_keep_heap();   /* as cdag model */
  double t[7], us = 0, pus = 0;
  int last = 0;
  t[0] = now();
  if (ir_load_file(argv[1], &o, &g)) fail("load");
  t[1] = now();
  if (exec_loggp(g, &lp, &us, &last)) fail("model");
  t[2] = now();
  if (pipeline_plan(g, NULL, &km, tune.policy, &p)) fail("plan");
  t[3] = now();
  if (exec_lower_plan(p, &km, tune.policy, &low)) fail("lower");
  t[4] = now();
  if (exec_lower_keep_calc(g, low)) fail("calc");
  t[5] = now();
  if (exec_loggp(low, &lp, &pus, &last)) fail("model of the plan");
  t[6] = now();
  printf("%lld ops on %d ranks: load %.2f s, model %.2f s (%.0f ns per op); modelled time %.3f us\n",
         (long long)g->nops, g->nprocs, t[1] - t[0], t[2] - t[1], (t[2] - t[1]) * 1e9 / (double)(g->nops ? g->nops : 1), us);
  printf("plan: analysis %.2f s, lowering %.2f s (%lld ops), calc kept %.2f s, model %.2f s (modelled time %.3f us); "
         "total %.2f s\n",
         t[3] - t[2], t[4] - t[3], (long long)low->nops, t[5] - t[4], t[6] - t[5], pus, t[6] - t[0]);
  ir_graph_free(low);
  cdag_plan_free(&p);
  ir_graph_free(g);
  return 0;
}

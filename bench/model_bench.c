/* cdag benchmark — the LogGOPS model's speed (a benchmark, not a test).
 *
 * Loads a graph file (GOAL ops without addresses get fresh buffers) and times each step of
 * `cdag model` on one core: the load, the match (shared by the graph's model and its
 * analysis), the model of the graph as written, the analysis, the lowering of the plan to
 * point-to-point, the computation kept in it, and its model (messages paired by lowering).
 * Usage: model_bench FILE (scripts/bench-model.sh writes a linear alltoall on 1024 ranks);
 * CDAG_BENCH_CPU=1 times CPU seconds instead of wall clock. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "model/lower.h"
#include "exec/pipeline.h"
#include "format/format.h"

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
  double t[8], us = 0, pus = 0;
  int last = 0;
  match_result m = {0};
  int32_t *pairs = NULL;
  int64_t nops;
  int nprocs;
  t[0] = now();   /* the steps of cdag model (tools/cmd_model.c) */
  if (ir_load_file(argv[1], &o, &g)) fail("load");
  t[1] = now();
  if (match_run(g, &m)) fail("match");
  t[2] = now();
  if (exec_loggp_paired(g, m.partner, &lp, &us, &last)) fail("model");
  t[3] = now();
  pipeline_tune pt = {km, tune.policy, 0, 1, lp, "options"};
  if (pipeline_plan_matched(g, &m, NULL, &pt, &p)) fail("plan");
  t[4] = now();
  if (exec_lower_plan(p, g, &km, tune.policy, &low)) fail("lower");
  t[5] = now();
  nops = g->nops, nprocs = g->nprocs;
  cdag_graph_free(&g);
  t[6] = now();
  if (exec_lower_pairs(low, &pairs) || exec_loggp_paired(low, pairs, &lp, &pus, &last)) fail("model of the plan");
  t[7] = now();
  printf("%lld ops on %d ranks: load %.2f s, match %.2f s, model %.2f s (%.0f ns per op); modelled time %.3f us\n",
         (long long)nops, nprocs, t[1] - t[0], t[2] - t[1], t[3] - t[2], (t[3] - t[2]) * 1e9 / (double)(nops ? nops : 1),
         us);
  printf("plan: analysis %.2f s, lowering with the calcs kept %.2f s (%lld ops), freeing the graph %.2f s, model %.2f s "
         "(modelled time %.3f us); "
         "total %.2f s\n",
         t[4] - t[3], t[5] - t[4], (long long)low->nops, t[6] - t[5], t[7] - t[6], pus, t[7] - t[0]);
  free(pairs);
  ir_graph_free(low);
  cdag_plan_free(&p);
  return 0;
}

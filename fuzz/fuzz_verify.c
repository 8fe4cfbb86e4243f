/* cdag — fuzz/fuzz_verify.c: libFuzzer target for the whole compiler, checked by simulation.
 *
 * Load, analyse (match, SST, detection, the choice of algorithm) with options the input's
 * first bytes choose (min_group, density, exact_float, kernel policy), then simulate the
 * graph and the plan from the same memory and compare byte for byte (cdag_plan_verify); the
 * plan lowered to messages must verify too, both must run under the LogGOPS model and write
 * as GOAL, and the graph saved must load again. Errors must come with a message; a graph
 * that races with itself is the input's fault; any other difference between graph and plan
 * is a bug in cdag and aborts. Inputs that move (or whose blocks span) more than 1 MiB are
 * skipped, so memory stays small. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/pipeline.h"
#include "exec/sim/sim.h"
#include "format/format.h"
#include "fuzz_saved.h"
#include "model/lower.h"

/* The bytes ops move, a strided copy's or a computation's by the hull of its blocks (what
   the simulator maps: blocks far apart span megabytes). */
static uint64_t moved_bytes(const cdag_graph *g) {
  uint64_t n = 0;
  for (int64_t i = 0; i < g->nops; i++) {
    ir_blocks k = ir_op_blocks(g, i);
    uint64_t hull = (k.from_last > k.to_last ? k.from_last : k.to_last) + k.len;
    uint64_t b = g->kind[i] == IR_REDUCE ? g->bytes[i] * 8 : k.n > 1 ? hull : g->bytes[i];
    n = b > (1u << 20) || n + b > (1u << 20) ? (1u << 20) + 1 : n + b;
  }
  return n;
}

/* Each stage of p lowered alone verifies against the stage's plan (a plan in stages lowers
   its computations to calcs without memory, so the whole is compared stage by stage). */
static int stages_lowered(const cdag_plan *p, const kern_model *m, kern_policy policy) {
  int rc = CDAG_OK;
  for (const cdag_plan *q = p; q && rc == CDAG_OK; q = q->next) {
    cdag_plan one = *q;
    one.next = NULL;
    one.steps = NULL;
    cdag_graph *low = NULL;
    rc = exec_lower_plan(&one, NULL, m, policy, &low);
    if (rc == CDAG_OK && exec_verify(low, &one, 7, 1) == CDAG_ERR_MISMATCH) {
      fprintf(stderr, "fuzz_verify: stage %d lowered differs from its plan: %s\n", q->stage, cdag_error_message());
      abort();
    }
    ir_graph_free(low);
  }
  return rc;
}

/* The plan lowered to messages verifies against it, and graph and lowered plan run under the
   LogGOPS model and write as GOAL. */
static int lowered(const cdag_graph *g, const cdag_plan *p, const kern_model *m, kern_policy policy) {
  cdag_graph *low = NULL;
  int rc = p->steps ? stages_lowered(p, m, policy) : CDAG_OK;
  if (rc == CDAG_OK) rc = exec_lower_plan(p, g, m, policy, &low);   /* with its plain calcs */
  if (rc == CDAG_OK && !p->steps && exec_verify(low, p, 7, 1) == CDAG_ERR_MISMATCH) {
    fprintf(stderr, "fuzz_verify: the lowered plan differs from the plan: %s\n", cdag_error_message());
    abort();
  }
  loggp_params lp = loggp_defaults();
  double t;
  if (rc == CDAG_OK) rc = exec_loggp(g, &lp, &t, NULL);
  if (rc == CDAG_OK) rc = exec_loggp(low, &lp, &t, NULL);
  FILE *f = fopen("/dev/null", "w");
  if (rc == CDAG_OK && f) rc = exec_goal_write(low, f, 0.1);
  if (f) fclose(f);
  ir_graph_free(low);
  low = NULL;
  /* as the price lowers it (runs at any stride: modelled, not simulated, whose hulls may be vast) */
  if (rc == CDAG_OK) rc = exec_lower_plan_modelled(p, g, m, policy, &low);
  if (rc == CDAG_OK) rc = exec_loggp(low, &lp, &t, NULL);
  ir_graph_free(low);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ir_load_opts o = {size > 0 && data[0] == '#', 64, 4096};
  cdag_graph *g = NULL;
  if (ir_load_mem((const char *)data, size, "fuzz", &o, &g) != CDAG_OK) return 0;
  if (moved_bytes(g) > (1u << 20)) {
    ir_graph_free(g);
    return 0;
  }
  cdag_options opts;
  cdag_options_init(&opts);
  opts.min_group = size > 1 && (data[1] & 1) ? 3 : 4;
  opts.density = size > 2 && (data[2] & 1) ? 0.5 : 1.0;
  opts.exact_float = size > 3 && (data[3] & 1);
  kern_policy policy = size > 4 ? (kern_policy)(data[4] % 3) : KERN_POLICY_AUTO;
  opts.price = size > 5 && (data[5] & 1);   /* unpriced: the plan itself is simulated */
  kern_model m = kern_model_builtin();
  pipeline_tune tune = pipeline_tune_of(&m, policy);
  cdag_plan *p = NULL;
  cdag__error_clear();
  int rc = pipeline_plan(g, &opts, &tune, &p);
  if (rc == CDAG_OK) {
    rc = cdag_plan_verify(g, p);
    const char *msg = cdag_error_message();
    if (rc == CDAG_ERR_MISMATCH && !strstr(msg, "the graph itself")) {
      fprintf(stderr, "fuzz_verify: the plan differs from the graph: %s\n", msg);
      abort();
    }
    if (rc == CDAG_OK && !p->as_written) rc = lowered(g, p, &m, policy);
    if (rc == CDAG_OK) fuzz_saved_loads("fuzz_verify", g, 0);
  }
  if (rc != CDAG_OK && !cdag_error_message()[0]) abort();
  cdag_plan_free(&p);
  ir_graph_free(g);
  return 0;
}

/* cdag — src/exec/sim/verify.c: does a plan do what its graph does?
 *
 * Fills memory for every byte the graph touches from a seed, runs the original graph in the
 * simulator (in several random valid orders, which must agree: otherwise the graph itself
 * has a race) and the plan by its collective semantics, and compares every non-scratch
 * byte. This is rules 1 and 2 of docs/semantics.md, checked; the public cdag_plan_verify uses it.
 * Cost: O(n log n) per order for n ops, plus the memory touched (a few copies of it). */
#include <stdio.h>

#include "exec/sim/sim.h"

/* Non-scratch bytes of m: scratch intervals are merged and lie inside the memory. */
static uint64_t compared_bytes(const sim_mem *m, const cdag_graph *g) {
  uint64_t n = sim_mem_bytes(m);
  for (int64_t i = 0; i < g->nscr_merged; i++) n -= g->scr_hi[i] - g->scr_lo[i];
  return n;
}

/* Re-labels the comparison error (a difference) with what the difference means. */
static int difference(const char *meaning) {
  char first[512];
  snprintf(first, sizeof first, "%s", cdag_error_message());
  return cdag__error(CDAG_ERR_MISMATCH, "%s: %s", meaning, first);
}

/* Runs g from init in `orders` orders (seed 0 first, then random); ref gets the result. */
static int run_orders(const cdag_graph *g, const sim_mem *init, uint64_t seed, int orders, sim_mem **ref) {
  sim_mem *other = NULL;
  int rc = sim_mem_clone(init, ref);
  if (rc == CDAG_OK) rc = sim_run_graph(g, *ref, 0);
  for (int k = 1; k < orders && rc == CDAG_OK; k++) {
    if ((rc = sim_mem_clone(init, &other)) == CDAG_OK && (rc = sim_run_graph(g, other, seed + (uint64_t)k)) == CDAG_OK &&
        sim_mem_compare(*ref, other, g, 1) != CDAG_OK)
      rc = difference("the graph itself gives different results in different valid orders (a race; first order's value first)");
    sim_mem_free(other);
    other = NULL;
  }
  return rc;
}

int exec_verify_bytes(const cdag_graph *g, const cdag_plan *p, uint64_t seed, int orders, uint64_t *compared) {
  sim_mem *init = NULL, *ref = NULL, *planned = NULL;
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "verify: the graph is not finalized");
  int rc = sim_mem_create(g, &init);
  if (rc) return rc;
  sim_mem_fill_random(init, seed);
  if ((rc = run_orders(g, init, seed, orders, &ref))) goto out;
  if ((rc = sim_mem_clone(init, &planned))) goto out;
  if ((rc = p->as_written ? sim_run_graph(g, planned, 0) : sim_run_plan(p, planned))) goto out;  /* detect.h */
  if (sim_mem_compare(ref, planned, g, 1) != CDAG_OK) rc = difference("plan differs from the graph (graph value first)");
  if (compared) *compared = compared_bytes(init, g);
out:
  sim_mem_free(init);
  sim_mem_free(ref);
  sim_mem_free(planned);
  return rc;
}

int exec_verify(const cdag_graph *g, const cdag_plan *p, uint64_t seed, int orders) {
  return exec_verify_bytes(g, p, seed, orders, NULL);
}

int cdag_plan_verify(const cdag_graph *g, const cdag_plan *p) {
  if (!g || !p) return cdag__error(CDAG_ERR_ARG, "cdag_plan_verify: NULL argument");
  if (g->state == IR_BUILDING)
    return cdag__error(CDAG_ERR_STATE, "cdag_plan_verify: the graph was changed after cdag_analyze");
  if (g->nprocs != p->nprocs) return cdag__error(CDAG_ERR_ARG, "cdag_plan_verify: plan is for %d ranks, graph has %d", p->nprocs, g->nprocs);
  return exec_verify(g, p, 0x5eed, 3);
}

/* cdag — src/exec/verify.c: does a plan do what its graph does?
 *
 * Fills memory for every byte the graph touches from a seed, runs the original graph in the
 * simulator (in several random valid orders, which must agree: otherwise the graph itself
 * has a race) and the plan by its collective semantics, and compares every non-scratch
 * byte. This is rule 1 and 2 of DESIGN.md, checked; the public cdag_plan_verify uses it. */
#include "exec/sim.h"

int exec_verify(const cdag_graph *g, const cdag_plan *p, uint64_t seed, int orders) {
  sim_mem *init = NULL, *ref = NULL, *other = NULL;
  int rc = sim_mem_create(g, &init);
  if (rc) return rc;
  sim_mem_fill_random(init, seed);
  if ((rc = sim_mem_clone(init, &ref)) || (rc = sim_run_graph(g, ref, 0))) goto out;
  for (int k = 1; k < orders && rc == CDAG_OK; k++) {
    sim_mem_free(other);
    other = NULL;
    if ((rc = sim_mem_clone(init, &other)) || (rc = sim_run_graph(g, other, seed + (uint64_t)k))) break;
    if (sim_mem_compare(ref, other, g, 1) != CDAG_OK) {
      char first[512];
      snprintf(first, sizeof first, "%s", cdag_error_message());
      rc = cdag__error(CDAG_ERR_STATE, "the graph itself gives different results in different valid orders (a race): %s", first);
    }
  }
  if (rc) goto out;
  sim_mem_free(other);
  other = NULL;
  if ((rc = sim_mem_clone(init, &other)) || (rc = sim_run_plan(p, other))) goto out;
  if (sim_mem_compare(ref, other, g, 1) != CDAG_OK) {
    char first[512];
    snprintf(first, sizeof first, "%s", cdag_error_message());
    rc = cdag__error(CDAG_ERR_STATE, "plan differs from the graph: %s (graph value first)", first);
  }
out:
  sim_mem_free(init);
  sim_mem_free(ref);
  sim_mem_free(other);
  return rc;
}

int cdag_plan_verify(const cdag_graph *g, const cdag_plan *p) {
  if (!g || !p) return cdag__error(CDAG_ERR_ARG, "cdag_plan_verify: NULL argument");
  if (g->state == IR_BUILDING)
    return cdag__error(CDAG_ERR_STATE, "cdag_plan_verify: the graph was changed after cdag_analyze");
  if (g->nprocs != p->nprocs) return cdag__error(CDAG_ERR_ARG, "cdag_plan_verify: plan is for %d ranks, graph has %d", p->nprocs, g->nprocs);
  return exec_verify(g, p, 0x5eed, 3);
}

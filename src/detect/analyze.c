/* cdag — src/detect/analyze.c: the whole compiler pipeline on a global graph, without MPI.
 *
 * cdag_analyze: finalize (program order, dependencies), match, dataflow (SST, wait sets),
 * detect (collectives, plan), timing each phase. The same pipeline runs inside
 * cdag_compile on the compiling rank. */
#include <stdlib.h>
#include <time.h>

#include "detect/detect.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int cdag_analyze(cdag_graph *g, const cdag_options *o, cdag_plan **p) {
  if (!g || !p) return cdag__error(CDAG_ERR_ARG, "cdag_analyze: NULL argument");
  *p = NULL;
  cdag_options opts;
  cdag_options_init(&opts);
  if (o) opts = *o;
  if (opts.density <= 0 || opts.density > 1)
    return cdag__error(CDAG_ERR_ARG, "cdag_analyze: density %g is not in (0, 1]", opts.density);
  match_result m = {0};
  df_sst *sst = NULL;
  double t0 = now();
  int rc = ir_finalize(g);
  if (rc == CDAG_OK) rc = match_run(g, &m);
  double t1 = now();
  if (rc == CDAG_OK) rc = dataflow_run_opt(g, &m, DF_WAITSETS_IF_NEEDED | DF_RELEASE_INPUTS, &sst);
  double t2 = now();
  if (rc == CDAG_OK) rc = detect_run(g, sst, &opts, p);
  double t3 = now();
  match_free(&m);
  if (rc) return rc;
  (*p)->sec_match = t1 - t0;
  (*p)->sec_dataflow = t2 - t1;
  (*p)->sec_detect = t3 - t2;
  for (int64_t i = 0; i < g->nops; i++) (*p)->nops_kind[g->kind[i]]++;
  return CDAG_OK;
}

int cdag_plan_free(cdag_plan **p) {
  if (!p) return CDAG_OK;
  detect_plan_free(*p);
  *p = NULL;
  return CDAG_OK;
}

/* cdag — src/detect/plan_stub.c: analysis and plans, not built yet (CDAG_ERR_UNSUPPORTED).
 * This file disappears when src/detect/plan.c lands. */
#include "ir/ir.h"

#define NOT_YET(fn) cdag__error(CDAG_ERR_UNSUPPORTED, "%s: collective detection is not built yet", fn)

int cdag_analyze(cdag_graph *g, const cdag_options *o, cdag_plan **p) {
  if (p) *p = NULL;
  return NOT_YET("cdag_analyze");
}
int cdag_plan_report(const cdag_plan *p, FILE *out, int json) { return NOT_YET("cdag_plan_report"); }
int cdag_plan_free(cdag_plan **p) {
  if (p) *p = NULL;
  return CDAG_OK;
}

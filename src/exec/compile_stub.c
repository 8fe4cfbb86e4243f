/* cdag — src/exec/compile_stub.c: compile/run over MPI, not built yet.
 * Each function answers CDAG_ERR_UNSUPPORTED with a message saying so (never a fake result).
 * This file disappears when src/exec/compile.c lands. */
#include "exec/exec.h"

#define NOT_YET(fn) cdag__error(CDAG_ERR_UNSUPPORTED, "%s: compiling and running over MPI is not built yet", fn)

void cdag_options_init(cdag_options *o) {
  if (!o) return;
  o->detect = 1;
  o->density = 1.0;
  o->exact_float = 0;
  o->root = 0;
  o->min_group = 4;
}
int cdag_compile(cdag_graph *g, const cdag_options *o, cdag_schedule **s) {
  if (s) *s = NULL;
  return NOT_YET("cdag_compile");
}
int cdag_run(cdag_schedule *s) { return NOT_YET("cdag_run"); }
int cdag_start(cdag_schedule *s) { return NOT_YET("cdag_start"); }
int cdag_wait(cdag_schedule *s) { return NOT_YET("cdag_wait"); }
int cdag_schedule_report(const cdag_schedule *s, FILE *out, int json) { return NOT_YET("cdag_schedule_report"); }
int cdag_schedule_free(cdag_schedule **s) {
  if (s) *s = NULL;
  return CDAG_OK;
}
int cdag_graph_dump(cdag_graph *g, const char *path) { return NOT_YET("cdag_graph_dump"); }

/* cdag — tools/cmd_analyze.c: `cdag analyze FILE [--json]`: the report of docs/format.md.
 *
 * Loads the graph, runs the whole pipeline (exec/pipeline.h: analysis, then the algorithm
 * each collective would run, as the executor chooses: CDAG_KERNEL=mpi|cdag|auto, the default
 * model with CDAG_ALPHA/CDAG_BETA) and prints the report: which collectives were found, how
 * each would run and why, what remained and why notable patterns were not rewritten. */
#include "cmd.h"
#include "exec/pipeline.h"

int cmd_analyze(int argc, char **argv) {
  cdag_options o;
  int buffers = cmd_goal_buffers(&argc, argv), json = cmd_has_flag(&argc, argv, "--json");
  if (buffers < 0 || cmd_options(&argc, argv, &o) || argc != 1) return cmd_usage("analyze");
  cdag_graph *g = NULL;
  cdag_plan *p = NULL;
  pipeline_tune t;
  if (pipeline_tuning(&o, NULL, &t)) return cmd_fail("analyze", CDAG_ERR_ARG);
  if (cmd_load("analyze", argv[0], buffers, &g)) return 1;
  int rc = pipeline_plan(g, &o, &t, &p);
  if (rc == CDAG_OK) rc = cdag_plan_report(p, stdout, json);
  int status = rc ? cmd_fail("analyze", rc) : 0;
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  return status;
}

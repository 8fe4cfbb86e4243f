/* cdag — tools/cmd_goal.c: `cdag goal FILE [--plan] [-o OUT]`, plain GOAL for LogGOPSim.
 *
 * Without --plan: the graph as loaded. With --plan: the graph is analyzed, each collective
 * gets the algorithm the executor would run (kern_choose_plan with the default model and
 * the kernel policy: --kernel=, CDAG_KERNEL), and the plan is lowered to point-to-point (src/model/lower.h) before it is
 * written (a plan in stages: stage after stage, each computation a `calc` of its cost between
 * them). The output uses only what LogGOPSim's txt2bin accepts (lower.h lists it): local
 * copies and reduces become `calc` of 0.1 ns per byte, a computation `calc` of its cost.
 * Exit 0 written, 1 bad input, 2 usage. */
#include <string.h>

#include "cmd.h"
#include "model/lower.h"
#include "exec/pipeline.h"

#define GOAL_COPY_NS_PER_BYTE 0.1

int cmd_goal(int argc, char **argv) {
  int buffers = cmd_goal_buffers(&argc, argv), plan = cmd_has_flag(&argc, argv, "--plan");
  const char *out = NULL;
  cdag_options o;
  if (cmd_options(&argc, argv, &o)) return cmd_usage("goal");
  for (int i = 0; i < argc; i++)
    if (strcmp(argv[i], "-o") == 0) {
      if (i + 1 >= argc) return cmd_usage("goal");
      out = argv[i + 1];
      memmove(argv + i, argv + i + 2, (size_t)(argc - i - 2) * sizeof *argv);
      argc -= 2;
      break;
    }
  if (buffers < 0 || argc != 1 || (argv[0][0] == '-' && argv[0][1])) return cmd_usage("goal");
  pipeline_tune t;
  cdag__error_clear();
  if (plan && pipeline_tuning(&o, NULL, &t)) return cmd_fail("goal", CDAG_ERR_ARG);
  cdag_graph *g = NULL, *low = NULL;
  cdag_plan *p = NULL;
  if (cmd_load("goal", argv[0], buffers, &g)) return 1;
  int rc = CDAG_OK;
  if (plan) {
    rc = pipeline_plan(g, &o, &t, &p);
    if (rc == CDAG_OK && p->as_written) plan = 0;   /* the graph runs as written: it is what the plan sends */
    if (rc == CDAG_OK && plan) rc = exec_lower_plan(p, g, &t.model, t.policy, &low);
  }
  FILE *f = stdout;
  if (rc == CDAG_OK && out && !(f = fopen(out, "w"))) rc = cdag__error(CDAG_ERR_IO, "cannot open %s for writing", out);
  if (rc == CDAG_OK) rc = exec_goal_write(plan ? low : g, f, GOAL_COPY_NS_PER_BYTE);
  if (f && f != stdout && fclose(f) != 0 && rc == CDAG_OK) rc = cdag__error(CDAG_ERR_IO, "cannot write %s", out);
  int status = rc ? cmd_fail("goal", rc) : 0;
  ir_graph_free(low);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  return status;
}

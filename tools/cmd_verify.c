/* cdag — tools/cmd_verify.c: `cdag verify FILE`: does the plan do what the graph does?
 *
 * Runs the original graph (in several random valid orders) and the compiled plan (as `cdag
 * analyze` prints it: candidates the price left as messages are messages; a plan the price set
 * aside for the graph as written is verified all the same; stage after
 * stage, with the computations between, for a graph that computes) in the
 * simulator from the same pseudo-random memory and compares every non-scratch byte.
 * Exit 0 only if they are equal; otherwise the message names the first differing rank, address
 * and both values (or the error that stopped the graph or the plan). */
#include <stdlib.h>

#include "cmd.h"
#include "exec/sim/sim.h"
#include "exec/pipeline.h"

int cmd_verify(int argc, char **argv) {
  cdag_options o;
  int buffers = cmd_goal_buffers(&argc, argv);
  const char *seed_text = cmd_flag_value(&argc, argv, "--seed=");
  uint64_t seed = 1;
  if (seed_text && cmd_num_u64(seed_text, 0, UINT64_MAX, &seed)) {
    fprintf(stderr, "cdag verify: --seed=%s: expected an integer from 0 to 2^64 - 1\n", seed_text);
    return cmd_usage("verify");
  }
  if (buffers < 0 || cmd_options(&argc, argv, &o) || argc != 1) return cmd_usage("verify");
  pipeline_tune t;
  cdag__error_clear();
  if (pipeline_tuning(&o, NULL, &t)) return cmd_fail("verify", CDAG_ERR_ARG);
  cdag_graph *g = NULL;
  cdag_plan *p = NULL;
  if (cmd_load("verify", argv[0], buffers, &g)) return 1;
  uint64_t compared = 0;
  int rc = sim_mem_check_size(g);   /* before the analysis, which takes long on such graphs */
  if (rc == CDAG_OK) rc = pipeline_plan(g, &o, &t, &p);   /* the plan as priced: candidates left as messages are messages */
  if (rc == CDAG_OK) rc = exec_verify_bytes(g, p, seed, 4, &compared);
  int status = rc ? cmd_fail("verify", rc) : 0;
  int64_t colls = 0, msgs = 0, copies = 0;   /* a rank's transfers to itself are local copies, not messages */
  for (const cdag_plan *q = p; !rc && q; q = q->next) {
    colls += q->ncolls;
    for (int64_t i = 0; i < q->nmsgs; i++) q->msgs[i].src == q->msgs[i].dst ? copies++ : msgs++;
  }
  char what[160] = "", local[64] = "";
  if (copies) snprintf(local, sizeof local, ", %lld local copies", (long long)copies);
  if (!rc && p->steps)
    snprintf(what, sizeof what, "%d stages, %lld computations, ", p->steps->nstages, (long long)p->steps->ncomputes);
  if (!rc && det_written_unpriced(p->as_written))   /* exec_verify ran the graph */
    printf("verify: the graph runs as written (%s), and its runs in several orders agree on all %d ranks (%llu bytes "
           "compared)\n", det_written_why(p->as_written), p->nprocs, (unsigned long long)compared);
  else if (!rc)
    printf("verify: plan (%s%lld collectives, %lld residual messages%s) matches the graph on all %d ranks (%llu bytes "
           "compared)\n", what, (long long)colls, (long long)msgs, local, p->nprocs,
           (unsigned long long)compared);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  return status;
}

/* cdag — tools/cmd_model.c: `cdag model FILE [-L us] [-o us] [-g us] [-G us/B] [-O us/B] [-S B]
 * [-c us/B] [-p P]`.
 *
 * The LogGOPS estimate (src/model/lower.h: exec_loggp, LogGOPSim's rules) of the graph
 * as written and of its plan lowered to point-to-point with the algorithm each collective
 * would run. The choice uses the alpha-beta model the parameters imply (alpha = L + 2o,
 * beta = G) and CDAG_KERNEL. LogGOPSim's option names; defaults: L 1 us, o 0.2 us, g 0.2 us,
 * G 0.0002 us/B (5 GB/s), O 0, S 65535 B (rendezvous above), c (local copy or reduce)
 * 0.0001 us/B; GOAL `calc N` costs N ns. -p P states the process count the estimate is for:
 * it must be the file's. Exit 0 printed, 1 bad input, 2 usage. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "model/lower.h"
#include "exec/pipeline.h"

/* "-X value" options; returns -1 on a bad value or a missing one. */
static int model_args(int *argc, char **argv, loggp_params *lp, long *procs) {
  for (int i = 0; i < *argc;) {
    const char *a = argv[i];
    double *d = NULL;
    if (strcmp(a, "-L") == 0) d = &lp->L;
    else if (strcmp(a, "-o") == 0) d = &lp->o;
    else if (strcmp(a, "-g") == 0) d = &lp->g;
    else if (strcmp(a, "-G") == 0) d = &lp->G;
    else if (strcmp(a, "-O") == 0) d = &lp->O;
    else if (strcmp(a, "-c") == 0) d = &lp->copy;
    else if (strcmp(a, "-p") != 0 && strcmp(a, "-S") != 0) {
      i++;
      continue;
    }
    if (i + 1 >= *argc) return -1;
    const char *v = argv[i + 1];
    uint64_t u;
    int64_t p;
    if (d) {
      if (cmd_num_double(v, 0, 1e12, d)) return -1;
    } else if (a[1] == 'S') {
      if (cmd_num_u64(v, 0, UINT64_MAX, &u)) return -1;
      lp->S = u;
    } else {
      if (cmd_num_i64(v, 1, INT32_MAX, &p)) return -1;
      *procs = (long)p;
    }
    memmove(argv + i, argv + i + 2, (size_t)(*argc - i - 2) * sizeof *argv);
    *argc -= 2;
  }
  return 0;
}

/* The model of *g, its plan, the plan lowered (calc kept) and its model. The graph is
   matched once for its model and its analysis, the lowered plan not at all (lowering pairs
   its messages), and *g is freed (NULL) once the plan no longer needs it, so that the
   lowered plan's model reuses its memory; *nops keeps its op count. */
static int model_graph_and_plan(cdag_graph **g, const loggp_params *lp, const kern_model *km, kern_policy policy,
                                double *t, int *last, int64_t *nops, cdag_plan **p, cdag_graph **low, double *tp,
                                int *plast) {
  match_result m = {0};
  int32_t *pairs = NULL;
  int rc = ir_finalize(*g);
  if (rc == CDAG_OK) rc = match_run(*g, &m);
  if (rc == CDAG_OK) rc = exec_loggp_paired(*g, m.partner, lp, t, last);
  if (rc == CDAG_OK) rc = pipeline_plan_matched(*g, &m, NULL, km, policy, p);
  match_free(&m);   /* freed already, unless an error came first */
  if (rc == CDAG_OK) rc = exec_lower_plan(*p, km, policy, low);
  if (rc == CDAG_OK) rc = exec_lower_keep_calc(*g, *low);
  *nops = (*g)->nops;
  cdag_graph_free(g);
  if (rc == CDAG_OK) rc = exec_lower_pairs(*low, &pairs);
  if (rc == CDAG_OK) rc = exec_loggp_paired(*low, pairs, lp, tp, plast);
  free(pairs);
  return rc;
}

int cmd_model(int argc, char **argv) {
  loggp_params lp = loggp_defaults();
  long procs = 0;
  int buffers = cmd_goal_buffers(&argc, argv);
  if (buffers < 0 || model_args(&argc, argv, &lp, &procs) || argc != 1 || (argv[0][0] == '-' && argv[0][1]))
    return cmd_usage("model");
  cdag_options o;
  cdag_options_init(&o);
  pipeline_tune tune;   /* the policy; the model is the LogGP parameters' */
  cdag__error_clear();
  if (pipeline_tuning(&o, NULL, &tune)) return cmd_fail("model", CDAG_ERR_ARG);
  kern_policy policy = tune.policy;
  cdag_graph *g = NULL, *low = NULL;
  cdag_plan *p = NULL;
  ir_keep_heap();   /* each stage reuses the memory the last one freed */
  if (cmd_load("model", argv[0], buffers, &g)) return 1;
  int rc = CDAG_OK, last = 0, plast = 0, nprocs = g->nprocs;
  int64_t nops = 0;
  double t = 0, tp = 0;
  if (procs && procs != g->nprocs)
    rc = cdag__error(CDAG_ERR_ARG, "-p %ld, but %s has %d ranks (the estimate is for the file's ranks)", procs, argv[0], g->nprocs);
  kern_model km = {(lp.L + 2 * lp.o) * 1e-6, lp.G * 1e-6, tune.model.blocks, (lp.o > lp.g ? lp.o : lp.g) * 1e-6, lp.copy * 1e-6};
  if (rc == CDAG_OK) rc = model_graph_and_plan(&g, &lp, &km, policy, &t, &last, &nops, &p, &low, &tp, &plast);
  if (rc == CDAG_OK) {
    printf("LogGOPS: L=%g us o=%g us g=%g us G=%g us/B O=%g us/B S=%llu B copy=%g us/B, p=%d\n", lp.L, lp.o, lp.g,
           lp.G, lp.O, (unsigned long long)lp.S, lp.copy, nprocs);
    printf("graph: %.3f us (rank %d finishes last, %lld ops)\n", t, last, (long long)nops);
    printf("plan:  %.3f us (rank %d finishes last, %lld ops after lowering)\n", tp, plast, (long long)low->nops);
    for (int64_t c = 0; c < p->ncolls; c++) {
      const det_coll *dc = &p->colls[c];
      printf("  %s over %d ranks: %s (%s)\n", det_kind_name(dc->kind), dc->nranks, p->chosen->coll[c].name, p->chosen->coll[c].why);
    }
    if (p->nmsgs || p->nreds || p->nsyncs)
      printf("  residual: %lld messages, %lld reductions, %lld syncs\n", (long long)p->chosen->msgs_sent, (long long)p->nreds,
             (long long)p->nsyncs);
    if (t > 0 && tp > 0) printf("speedup: %.2fx\n", t / tp);
    else if (t > 0) printf("speedup: none to state (the plan does nothing that takes time)\n");
  }
  int status = rc ? cmd_fail("model", rc) : 0;
  ir_graph_free(low);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  return status;
}

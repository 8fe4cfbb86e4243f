/* cdag — tools/cmd_model.c: `cdag model FILE [-L us] [-o us] [-g us] [-G us/B] [-O us/B] [-S B]
 * [-c us/B] [-p P]`.
 *
 * The LogGOPS estimate (src/model/lower.h: exec_loggp, LogGOPSim's rules) of the graph
 * as written and of its plan lowered to point-to-point with the algorithm each collective
 * would run. The choice uses the alpha-beta model the parameters imply (alpha = L + 2o,
 * beta = G) and CDAG_KERNEL. LogGOPSim's option names; defaults: L 1 us, o 0.2 us, g 0.2 us,
 * G 0.0002 us/B (5 GB/s), O 0, S 65535 B (rendezvous above), c (local copy or reduce)
 * 0.0001 us/B; GOAL `calc N` costs N ns, and so does `compute N`. -p P states the process
 * count the estimate is for: it must be the file's. Without any of -L -o -g -G -O -S -c, the
 * machine file (src/exec/machine.h: CDAG_MACHINE, else the default path, as `cdag calibrate`
 * writes it) gives the parameters when there is one; the first line names the source.
 * A graph that computes (its calcs take time) gets, under each time, the computation on its
 * critical path (exec_calc_path) and the rest as communication's share; its plan in stages
 * is listed stage by stage with the computations between (their count, the most one rank
 * spends) and each stage's communication modelled alone, as written (the stage's graph,
 * stage_cut) and planned (the stage plan lowered alone); the saving (graph time minus plan
 * time) closes. Exit 0 printed, 1 bad input,
 * 2 usage. */
#include <stdlib.h>
#include <string.h>

#include "base/runs.h"
#include "cmd.h"
#include "model/lower.h"
#include "exec/pipeline.h"

/* "-X value" options; returns -1 on a bad value or a missing one. */
static int model_args(int *argc, char **argv, loggp_params *lp, long *procs, int *given) {
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
    if (i + 1 >= *argc) return fprintf(stderr, "cdag model: %s needs a value\n", a), -1;
    const char *v = argv[i + 1];
    uint64_t u;
    int64_t p;
    *given |= a[1] != 'p';
    if (d) {
      if (cmd_num_double(v, 0, 1e12, d)) return fprintf(stderr, "cdag model: %s %s: expected a number from 0 to 1e12\n", a, v), -1;
    } else if (a[1] == 'S') {
      if (cmd_num_u64(v, 0, UINT64_MAX, &u))
        return fprintf(stderr, "cdag model: -S %s: expected an integer from 0 to 2^64 - 1\n", v), -1;
      lp->S = u;
    } else {
      if (cmd_num_i64(v, 1, INT32_MAX, &p)) return fprintf(stderr, "cdag model: -p %s: expected an integer from 1 to 2^31 - 1\n", v), -1;
      *procs = (long)p;
    }
    memmove(argv + i, argv + i + 2, (size_t)(*argc - i - 2) * sizeof *argv);
    *argc -= 2;
  }
  return 0;
}

/* What cmd_model prints: times of the graph and of its lowered plan, the computation on
   each one's critical path (exec_calc_path), who finishes last, op counts; for a plan in
   stages, each stage's communication modelled alone, as written and planned. */
typedef struct {
  double t, tp, calc, calcp;
  int last, plast;
  int64_t nops, nlow;
  int32_t nstages;
  double *written, *planned;   /* per stage, us */
} model_times;

/* Stage plan q lowered alone (its communication, no computations) and modelled. */
static int model_stage_plan(const cdag_plan *q, const loggp_params *lp, const kern_model *km, kern_policy policy,
                            double *t) {
  cdag_plan one = *q;
  one.next = NULL;
  one.steps = NULL;
  cdag_graph *low = NULL;
  int32_t *pairs = NULL;
  int rc = exec_lower_plan_modelled(&one, NULL, km, policy, &low);
  if (rc == CDAG_OK) rc = exec_lower_pairs(low, &pairs);
  if (rc == CDAG_OK) rc = exec_loggp_paired(low, pairs, lp, t, NULL);
  free(pairs);
  ir_graph_free(low);
  return rc;
}

/* Per stage of plan p of finalized g: its graph as written (stage_cut of g, as the pipeline
   cut it) and its plan, each modelled alone. Another match and cut of g: O(n log n). */
static int model_stages(cdag_graph *g, const cdag_plan *p, const loggp_params *lp, const kern_model *km,
                        kern_policy policy, model_times *mt) {
  match_result m = {0};
  stage_split s = {0};
  int rc = match_run(g, &m);
  if (rc == CDAG_OK) rc = stage_cut(g, &m, &s);
  match_free(&m);
  if (rc == CDAG_OK && s.nstages != p->steps->nstages)
    rc = cdag__error(CDAG_ERR_PLAN, "model: the graph cuts into %d stages, its plan has %d", s.nstages,
                     p->steps->nstages);
  if (rc == CDAG_OK) {
    mt->written = calloc((size_t)s.nstages, sizeof *mt->written);
    mt->planned = calloc((size_t)s.nstages, sizeof *mt->planned);
    rc = mt->written && mt->planned ? CDAG_OK : CDAG_NOMEM("model");
    mt->nstages = s.nstages;
  }
  for (int32_t k = 0; k < s.nstages && rc == CDAG_OK; k++) {
    if ((rc = ir_finalize(s.graph[k])) == CDAG_OK) rc = exec_loggp(s.graph[k], lp, &mt->written[k], NULL);
    ir_graph_free(s.graph[k]);
    s.graph[k] = NULL;
  }
  stage_split_free(&s);
  for (const cdag_plan *q = p; q && rc == CDAG_OK; q = q->next)
    rc = q->stage < mt->nstages ? model_stage_plan(q, lp, km, policy, &mt->planned[q->stage])
                                : cdag__error(CDAG_ERR_PLAN, "model: plan stage %d of %d", q->stage, mt->nstages);
  return rc;
}

/* The model of *g, its plan, the plan lowered (calc kept) and its model. The graph is
   matched once for its model and its analysis, the lowered plan not at all (lowering pairs
   its messages), and *g is freed (NULL) once the plan no longer needs it, so that the
   lowered plan's model reuses its memory. */
static int model_graph_and_plan(cdag_graph **g, const pipeline_tune *t, model_times *mt, cdag_plan **p) {
  match_result m = {0};
  int32_t *pairs = NULL;
  cdag_graph *low = NULL;
  const loggp_params *lp = &t->lp;
  int rc = ir_finalize(*g);
  if (rc == CDAG_OK) rc = match_run(*g, &m);
  if (rc == CDAG_OK) rc = exec_loggp_paired(*g, m.partner, lp, &mt->t, &mt->last);
  if (rc == CDAG_OK) rc = exec_calc_path(*g, m.partner, &mt->calc);
  if (rc == CDAG_OK) rc = pipeline_plan_matched(*g, &m, NULL, t, p);
  match_free(&m);   /* freed already, unless an error came first */
  if (rc == CDAG_OK && (*p)->steps) rc = model_stages(*g, *p, lp, &t->model, t->policy, mt);
  mt->nops = (*g)->nops;
  if (rc == CDAG_OK && (*p)->as_written) {   /* what runs is the graph: its model is the plan's */
    mt->tp = mt->t, mt->plast = mt->last, mt->calcp = mt->calc, mt->nlow = mt->nops;
    return rc;
  }
  if (rc == CDAG_OK) rc = exec_lower_plan_modelled(*p, *g, &t->model, t->policy, &low);
  cdag_graph_free(g);
  if (rc == CDAG_OK) rc = exec_lower_pairs(low, &pairs);
  if (rc == CDAG_OK) rc = exec_loggp_paired(low, pairs, lp, &mt->tp, &mt->plast);
  if (rc == CDAG_OK) rc = exec_calc_path(low, pairs, &mt->calcp);
  if (low) mt->nlow = low->nops;
  free(pairs);
  ir_graph_free(low);
  return rc;
}

/* Why the graph runs as written, under the plan's line. */
static void print_as_written(const cdag_plan *p) {
  const kern_price *pr = p->chosen ? p->chosen->price : NULL;
  if (p->as_written == DET_WRITTEN_COST && pr && pr->priced)
    printf("  runs as written: the plan would take %.3f us, not less than the graph's %.3f us\n", pr->plan_us,
           pr->written_us);
  else if (p->as_written)
    printf("  runs as written (%s)\n", det_written_why(p->as_written));
}

/* Time t of which calc on the critical path: the rest is communication's. */
static void print_share(double t, double calc) {
  double comm = t > calc ? t - calc : 0;
  printf("  computation on the critical path: %.3f us; communication: %.3f us (%.1f%%)\n", calc, comm,
         t > 0 ? 100 * comm / t : 0.0);
}

/* The collectives and residual parts of one stage plan, indented by ind. */
static void print_parts(FILE *f, const cdag_plan *p, const char *ind) {
  for (int64_t c = 0; c < p->ncolls; c++) {
    const det_coll *dc = &p->colls[c];
    fprintf(f, "%s%s over %d ranks: %s (%s)\n", ind, det_kind_name(dc->kind), dc->nranks, p->chosen->coll[c].name,
            p->chosen->coll[c].why);
  }
  if (p->nmsgs || p->nreds || p->nsyncs)
    fprintf(f, "%sresidual: %lld messages, %lld reductions, %lld syncs\n", ind, (long long)p->chosen->msgs_sent,
            (long long)p->nreds, (long long)p->nsyncs);
  for (int64_t i = 0; i < p->nnotes; i++)   /* the candidates the price left as they were */
    if (strncmp(p->notes[i], "left as ", 8) == 0) fprintf(f, "%s%s\n", ind, p->notes[i]);
}

/* The computations steps[from..to) of one place between stages (all after the same stage, sorted
   by rank): how many, and the most one rank spends on them. */
static void print_computes(FILE *f, const stage_steps *st, int64_t from, int64_t to, const char *where) {
  uint64_t most = 0, rank_sum = 0;
  for (int64_t k = from; k < to; k++) {
    if (k == from || st->computes[k].rank != st->computes[k - 1].rank) rank_sum = 0;
    rank_sum += st->computes[k].cost;
    if (rank_sum > most) most = rank_sum;
  }
  int64_t n = to - from;
  if (n > 0)
    fprintf(f, "  %s: %lld computation%s, %.3f us on one rank at most\n", where, (long long)n, n == 1 ? "" : "s",
            (double)most * 1e-3);
}

/* What print_stages renders per stage: the times, and where each stage's computations after it
   start among the steps (after[s] .. after[s + 1]; steps are sorted by after, then rank). */
typedef struct {
  const model_times *mt;
  const stage_steps *st;
  int64_t *after;   /* nstages + 1 */
} stage_listing;

static void render_stage(FILE *f, const void *stage, const char *label, void *ctx) {
  const cdag_plan *q = stage;
  const stage_listing *l = ctx;
  double w = l->mt->written[q->stage], t = l->mt->planned[q->stage];
  char after[128];
  fprintf(f, "  %s: communication alone %.3f us as written, %.3f us planned (saving %.3f us)\n", label, w, t, w - t);
  print_parts(f, q, "    ");
  snprintf(after, sizeof after, "after %s", label);
  print_computes(f, l->st, l->after[q->stage], l->after[q->stage + 1], after);
}

/* A plan in stages: per stage its communication alone (as written, planned), its parts,
   the computations between the stages; runs of alike stages once (base/runs.h). */
static int print_stages(const cdag_plan *p, const model_times *mt) {
  const stage_steps *st = p->steps;
  stage_listing l = {mt, st, malloc(((size_t)st->nstages + 1) * sizeof *l.after)};
  if (!l.after) return CDAG_NOMEM("the listing of stages");
  int64_t k = 0;
  while (k < st->ncomputes && st->computes[k].after < 0) k++;
  printf("  %d stages, %lld computations\n", st->nstages, (long long)st->ncomputes);
  print_computes(stdout, st, 0, k, "before stage 0");
  for (int32_t s = 0; s <= st->nstages; s++) {
    l.after[s] = k;
    while (s < st->nstages && k < st->ncomputes && st->computes[k].after == s) k++;
  }
  base_runs runs;
  base_runs_begin(&runs, stdout, "stage", "stages", render_stage, &l);
  for (const cdag_plan *q = p; q; q = q->next) base_runs_add(&runs, q, q->stage);
  base_runs_end(&runs);
  free(l.after);
  return CDAG_OK;
}

int cmd_model(int argc, char **argv) {
  loggp_params lp = loggp_defaults();
  long procs = 0;
  int buffers = cmd_goal_buffers(&argc, argv), given = 0;
  if (buffers < 0 || model_args(&argc, argv, &lp, &procs, &given) || argc != 1 || (argv[0][0] == '-' && argv[0][1]))
    return cmd_usage("model");
  cdag_options o;
  cdag_options_init(&o);
  pipeline_tune tune;   /* the policy; the model is the LogGP parameters' */
  cdag_settings set;
  machine_params mach;
  cdag__error_clear();
  if (pipeline_tuning(&o, NULL, &tune) || cdag__settings_read(&set) || machine_find(&set, &mach))
    return cmd_fail("model", CDAG_ERR_ARG);
  const char *source = given ? "options" : "cdag model's defaults";
  if (!given && mach.kind == MACHINE_FILE) lp = mach.lp, source = mach.source;   /* no flag: the machine file */
  kern_policy policy = tune.policy;
  cdag_graph *g = NULL;
  cdag_plan *p = NULL;
  ir_keep_heap();   /* each stage reuses the memory the last one freed */
  if (cmd_load("model", argv[0], buffers, &g)) return 1;
  int rc = CDAG_OK, nprocs = g->nprocs;
  model_times mt = {0};
  if (procs && procs != g->nprocs)
    rc = cdag__error(CDAG_ERR_ARG, "-p %ld, but %s has %d ranks (the estimate is for the file's ranks)", procs, argv[0], g->nprocs);
  kern_model km = {(lp.L + 2 * lp.o) * 1e-6, lp.G * 1e-6, tune.model.blocks, (lp.o > lp.g ? lp.o : lp.g) * 1e-6, lp.copy * 1e-6};
  pipeline_tune priced = {km, policy, 0, tune.price, lp, ""};   /* the plan is weighed with these parameters */
  snprintf(priced.source, sizeof priced.source, "%s", source);
  if (rc == CDAG_OK) rc = model_graph_and_plan(&g, &priced, &mt, &p);
  if (rc == CDAG_OK) {
    int computes = mt.calc > 0;   /* the graph spends time computing: say how much */
    char table[120] = "";   /* a calibrated machine's costs by size replace L, G and O */
    int n = lp.rcopy > 0 ? snprintf(table, sizeof table, " rcopy=%g us/B", lp.rcopy) : 0;
    n += lp.queue > 0 ? snprintf(table + n, sizeof table - (size_t)n, "%s queue=%g us", n ? "," : "", lp.queue) : 0;
    if (lp.ntab) snprintf(table + n, sizeof table - (size_t)n, "%s costs of %d sizes", n ? "," : "", lp.ntab);
    printf("LogGOPS: L=%g us o=%g us g=%g us G=%g us/B O=%g us/B S=%llu B copy=%g us/B%s, p=%d (%s)\n", lp.L, lp.o,
           lp.g, lp.G, lp.O, (unsigned long long)lp.S, lp.copy, table, nprocs, source);
    printf("graph: %.3f us (rank %d finishes last, %lld ops)\n", mt.t, mt.last, (long long)mt.nops);
    if (computes) print_share(mt.t, mt.calc);
    printf("plan:  %.3f us (rank %d finishes last, %lld ops after lowering)\n", mt.tp, mt.plast, (long long)mt.nlow);
    if (computes) print_share(mt.tp, mt.calcp);
    print_as_written(p);
    if (p->steps) rc = print_stages(p, &mt);
    else print_parts(stdout, p, "  ");
    if (computes) printf("saving: %.3f us (%.1f%% of the graph's time)\n", mt.t - mt.tp, mt.t > 0 ? 100 * (mt.t - mt.tp) / mt.t : 0.0);
    if (mt.t > 0 && mt.tp > 0) printf("speedup: %.2fx\n", mt.t / mt.tp);
    else if (mt.t > 0) printf("speedup: none to state (the plan does nothing that takes time)\n");
  }
  int status = rc ? cmd_fail("model", rc) : 0;
  free(mt.written);
  free(mt.planned);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  return status;
}

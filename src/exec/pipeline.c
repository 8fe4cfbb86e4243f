/* cdag — src/exec/pipeline.c: the whole compiler pipeline on a global graph, without MPI.
 *
 * cdag_analyze: finalize (program order, dependencies), match, dataflow (SST, wait sets),
 * detect (collectives, plan), timing each phase; pipeline_plan adds the choice of algorithm.
 * The same pipeline runs inside cdag_compile on the compiling rank. The options of a compile
 * are initialised and validated here, once for every caller. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/pipeline.h"
#include "base/settings.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The options (cdag.h): every default comes from the table in base/settings.h. */
void cdag_options_init_size(cdag_options *o, size_t size) {
  if (!o || size < sizeof o->struct_size) return;
  cdag_options d;
  cdag__options_defaults(&d);
  d.struct_size = size;
  memcpy(o, &d, size < sizeof d ? size : sizeof d);
  if (size > sizeof d) memset((char *)o + sizeof d, 0, size - sizeof d);
}

void(cdag_options_init)(cdag_options *o) { cdag_options_init_size(o, sizeof *o); }

const char *cdag_version(void) { return CDAG_VERSION; }
int cdag_version_number(void) { return CDAG_VERSION_NUMBER; }

static kern_policy policy_of(int kernel) {
  return kernel == CDAG_KERNEL_MPI ? KERN_POLICY_MPI : kernel == CDAG_KERNEL_CDAG ? KERN_POLICY_CDAG : KERN_POLICY_AUTO;
}

int pipeline_tuning(const cdag_options *o, const kern_model *base, pipeline_tune *t) {
  cdag_settings s;
  int rc = cdag__settings_read(&s);
  cdag_options e = *o;
  cdag__options_env(&e, &s);   /* variables only where o holds a default */
  t->model = base ? *base : kern_model_builtin();
  if (e.alpha > 0) t->model.alpha = e.alpha;
  if (e.beta > 0) t->model.beta = e.beta;
  if (e.overhead > 0) t->model.overhead = e.overhead;
  if (e.gamma > 0) t->model.gamma = e.gamma;
  if (e.blocks > 0) t->model.blocks = e.blocks;
  t->policy = policy_of((int)e.kernel);
  t->measure = e.measure;
  return rc;
}

int pipeline_check_options(const cdag_options *o, int nprocs, int rank) {
  char who[32] = "";
  if (rank >= 0) snprintf(who, sizeof who, "rank %d: ", rank);
  return cdag__options_check(o, nprocs, who);
}

/* Bytes each rank receives from other ranks in the graph as written: what communication
   lower bounds count. CDAG_OK or CDAG_ERR_NOMEM (never a report with a zero figure). */
static int volume_of(const cdag_graph *g, cdag_plan *p) {
  uint64_t *v = calloc((size_t)g->nprocs, sizeof *v), total = 0;
  p->bound = g->bound;
  if (!v) return CDAG_NOMEM("volume per rank");
  for (int64_t i = 0; i < g->nops; i++)
    if (g->kind[i] == IR_RECV && g->peer[i] != g->rank[i]) v[g->rank[i]] += g->bytes[i];
  for (int32_t r = 0; r < g->nprocs; r++) {
    total += v[r];
    if (v[r] > p->volume_max) p->volume_max = v[r];
  }
  p->volume_mean = (double)total / g->nprocs;
  free(v);
  return CDAG_OK;
}

/* o, or the defaults, as an offline analysis of g takes them; CDAG_OK or the options' error. */
static int offline_options(const cdag_graph *g, const cdag_options *o, cdag_options *opts) {
  int rc = cdag__options_take(o, opts, NULL);
  if (rc) return rc;
  if (opts->root >= g->nprocs) opts->root = 0;  /* the compiling rank means nothing offline */
  return pipeline_check_options(opts, g->nprocs, -1);
}

/* The whole graph's figures on a plan: ops by kind, one-sided ops, volume. */
static int whole_figures(const cdag_graph *g, cdag_plan *p) {
  memset(p->nops_kind, 0, sizeof p->nops_kind);
  memset(p->nonesided, 0, sizeof p->nonesided);
  p->volume_max = 0;
  for (int64_t i = 0; i < g->nops; i++) {
    p->nops_kind[g->kind[i]]++;
    int os = g->os ? g->os[i] : IR_OS_NONE;
    if (os >= IR_OS_GET && os <= IR_OS_FENCE) p->nonesided[os - IR_OS_GET]++;
  }
  return volume_of(g, p);
}

static int analyze_stages(cdag_graph *g, match_result *m, const cdag_options *opts, double t0, cdag_plan **p);

/* Local reduces that combine values of different reductions (a chain of ops, as a buffer
   reused for reductions of several ops makes) start a stage: what they combine is then
   origins of their stage. Marked, and g analysed in stages from a new match. */
static int restage_mixed(cdag_graph *g, const df_sst *sst, const cdag_options *opts, double t0, cdag_plan **p) {
  match_result m = {0};
  int rc = ir_ensure_opt(g, (void **)&g->cut, sizeof *g->cut, 0);
  for (int64_t i = 0; rc == CDAG_OK && i < sst->nmixed; i++) g->cut[sst->mixed[i]] = 1;
  if (rc == CDAG_OK) rc = match_run(g, &m);
  if (rc == CDAG_OK) return analyze_stages(g, &m, opts, t0, p);
  match_free(&m);
  return rc;
}

/* cdag_analyze of a phase without computation from the match of finalized g, which it frees
   (the dataflow releases it as soon as it is done with it), with opts as offline_options
   made them. stages: the phase is one stage of a graph that computes (a chain of ops within
   one is a bug: it was cut there). */
static int analyze_phase(cdag_graph *g, match_result *m, const cdag_options *opts, double t0, int stage, cdag_plan **p) {
  *p = NULL;
  df_sst *sst = NULL;
  double t1 = now();
  int flags = DF_WAITSETS_IF_NEEDED | (stage ? 0 : DF_RELEASE_INPUTS | DF_COLLECT_MIXED);   /* stages are small */
  int rc = dataflow_run_opt(g, m, flags, &sst);
  match_free(m);
  if (rc == CDAG_OK && sst->nmixed) {
    rc = restage_mixed(g, sst, opts, t0, p);
    dataflow_free(sst);
    return rc;
  }
  double t2 = now();
  if (rc == CDAG_OK) rc = detect_run(g, sst, opts, p);
  double t3 = now();
  if (rc) return rc;
  (*p)->sec_match = t1 - t0;
  (*p)->sec_dataflow = t2 - t1;
  (*p)->sec_detect = t3 - t2;
  if ((rc = whole_figures(g, *p)) != CDAG_OK) cdag_plan_free(p);
  return rc;
}

/* One stage's graph, from its ops to its plan. */
static int analyze_stage(cdag_graph *s, const cdag_options *opts, cdag_plan **p) {
  match_result m = {0};
  double t0 = now();
  int rc = ir_finalize(s);
  if (rc == CDAG_OK) rc = match_run(s, &m);
  if (rc == CDAG_OK) return analyze_phase(s, &m, opts, t0, 1, p);
  match_free(&m);
  return rc;
}

/* A graph that computes: its stages (src/stage), each a graph of pure communication,
   analysed one by one and chained behind the first plan, which takes the computations and
   the whole graph's figures. */
static int analyze_stages(cdag_graph *g, match_result *m, const cdag_options *opts, double t0, cdag_plan **p) {
  stage_split s;
  *p = NULL;
  int rc = stage_cut(g, m, &s);
  match_free(m);
  cdag_plan **tail = p;
  double sec[3] = {now() - t0, 0, 0};
  for (int32_t k = 0; rc == CDAG_OK && k < s.nstages; k++) {
    rc = analyze_stage(s.graph[k], opts, tail);
    ir_graph_free(s.graph[k]);   /* a plan never points into its graph */
    s.graph[k] = NULL;
    if (rc) break;
    sec[0] += (*tail)->sec_match, sec[1] += (*tail)->sec_dataflow, sec[2] += (*tail)->sec_detect;
    (*tail)->stage = k;
    (*p)->as_written |= (*tail)->as_written;   /* exact_float: one stage as written, all as written */
    tail = &(*tail)->next;
  }
  if (rc == CDAG_OK && !((*p)->steps = malloc(sizeof *(*p)->steps))) rc = CDAG_NOMEM("stages");
  if (rc == CDAG_OK) {
    *(*p)->steps = s.steps;
    s.steps = (stage_steps){0};
    (*p)->sec_match = sec[0], (*p)->sec_dataflow = sec[1], (*p)->sec_detect = sec[2];
    rc = whole_figures(g, *p);
  }
  stage_split_free(&s);
  if (rc) cdag_plan_free(p);
  return rc;
}

static int analyze_matched(cdag_graph *g, match_result *m, const cdag_options *opts, double t0, cdag_plan **p) {
  return stage_has_computes(g) ? analyze_stages(g, m, opts, t0, p) : analyze_phase(g, m, opts, t0, 0, p);
}

int cdag_analyze(cdag_graph *g, const cdag_options *o, cdag_plan **p) {
  if (!g || !p) return cdag__error(CDAG_ERR_ARG, "cdag_analyze: NULL argument");
  *p = NULL;
  cdag_options opts;
  int vrc = offline_options(g, o, &opts);
  if (vrc) return vrc;
  match_result m = {0};
  double t0 = now();
  int rc = ir_finalize(g);
  if (rc == CDAG_OK) rc = match_run(g, &m);
  if (rc == CDAG_OK) return analyze_matched(g, &m, &opts, t0, p);
  match_free(&m);
  return rc;
}

int cdag_plan_free(cdag_plan **p) {
  if (!p) return CDAG_OK;
  for (cdag_plan *q = *p, *next; q; q = next) {
    next = q->next;
    kern_choices_free(q);   /* the choice stage's results beside the plan */
    detect_plan_free(q);
  }
  *p = NULL;
  return CDAG_OK;
}

/* The algorithm of every collective of every stage. */
static int choose_stages(cdag_plan *p, const kern_model *m, kern_policy policy) {
  int rc = CDAG_OK;
  for (cdag_plan *q = p; q && rc == CDAG_OK; q = q->next) rc = kern_choose_plan(q, m, policy);
  return rc;
}

int pipeline_plan(cdag_graph *g, const cdag_options *o, const kern_model *m, kern_policy policy, cdag_plan **p) {
  int rc = cdag_analyze(g, o, p);
  if (rc == CDAG_OK) rc = choose_stages(*p, m, policy);
  if (rc != CDAG_OK) cdag_plan_free(p);
  return rc;
}

int pipeline_plan_matched(cdag_graph *g, match_result *mr, const cdag_options *o, const kern_model *m,
                          kern_policy policy, cdag_plan **p) {
  if (!g || !mr || !p || g->state == IR_BUILDING || mr->nops != g->nops) {
    match_free(mr);
    return cdag__error(CDAG_ERR_ARG, "pipeline_plan_matched: a finalized graph and its match expected");
  }
  cdag_options opts;
  int rc = offline_options(g, o, &opts);
  if (rc == CDAG_OK) rc = analyze_matched(g, mr, &opts, now(), p);
  else match_free(mr);
  if (rc == CDAG_OK) rc = choose_stages(*p, m, policy);
  if (rc != CDAG_OK) cdag_plan_free(p);
  return rc;
}

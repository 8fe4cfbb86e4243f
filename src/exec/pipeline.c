/* cdag — src/exec/pipeline.c: the whole compiler pipeline on a global graph, without MPI.
 *
 * cdag_analyze: finalize (program order, dependencies), match, dataflow (SST, wait sets),
 * detect (collectives, plan), timing each phase; pipeline_plan adds the choice of algorithm.
 * The same pipeline runs inside cdag_compile on the compiling rank. The options of a compile
 * are initialised and validated here, once for every caller. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "exec/pipeline.h"
#include "ir/settings.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void cdag_options_init(cdag_options *o) {
  if (!o) return;
  o->detect = 1;
  o->density = 1.0;
  o->exact_float = 0;
  o->root = 0;
  o->min_group = 4;
  o->kernel = CDAG_KERNEL_AUTO;
  o->alpha = o->beta = 0;
  o->overhead = o->gamma = 0;
  o->blocks = 0;
  o->measure = 0;
}

static kern_policy policy_of(int kernel) {
  return kernel == CDAG_KERNEL_MPI ? KERN_POLICY_MPI : kernel == CDAG_KERNEL_CDAG ? KERN_POLICY_CDAG : KERN_POLICY_AUTO;
}

int pipeline_tuning(const cdag_options *o, const kern_model *base, pipeline_tune *t) {
  cdag_settings s;
  int rc = cdag__settings_read(&s);
  t->model = base ? *base : kern_model_builtin();
  if (o->alpha > 0) t->model.alpha = o->alpha;
  if (o->beta > 0) t->model.beta = o->beta;
  if (o->overhead > 0) t->model.overhead = o->overhead;
  if (o->gamma > 0) t->model.gamma = o->gamma;
  if (o->blocks > 0) t->model.blocks = o->blocks;
  kern__model_env(&t->model);
  t->policy = policy_of(s.kernel != CDAG_SET_UNSET ? (int)s.kernel : (int)o->kernel);
  t->measure = s.measure >= 0 ? s.measure : o->measure;
  return rc;
}

/* 0 (not set) or seconds in (0, 1000], as CDAG_ALPHA / CDAG_BETA. */
static int seconds_ok(double d) { return d == 0 || (d > 0 && d <= 1e3); }

int pipeline_check_options(const cdag_options *o, int nprocs, int rank) {
  char who[32] = "";
  if (rank >= 0) snprintf(who, sizeof who, "rank %d: ", rank);
  if (o->root < 0 || o->root >= nprocs)
    return cdag__error(CDAG_ERR_ARG, "%soptions.root %d out of range 0..%d", who, o->root, nprocs - 1);
  if (!(o->density > 0.0 && o->density <= 1.0))
    return cdag__error(CDAG_ERR_ARG, "%soptions.density %g is not in (0, 1]", who, o->density);
  if (o->min_group < 1) return cdag__error(CDAG_ERR_ARG, "%soptions.min_group %d < 1", who, o->min_group);
  if (o->detect != 0 && o->detect != 1)
    return cdag__error(CDAG_ERR_ARG, "%soptions.detect %d is neither 0 nor 1", who, o->detect);
  if (o->exact_float != 0 && o->exact_float != 1)
    return cdag__error(CDAG_ERR_ARG, "%soptions.exact_float %d is neither 0 nor 1", who, o->exact_float);
  if (o->kernel != CDAG_KERNEL_AUTO && o->kernel != CDAG_KERNEL_MPI && o->kernel != CDAG_KERNEL_CDAG)
    return cdag__error(CDAG_ERR_ARG, "%soptions.kernel %d is not a cdag_kernel_policy", who, (int)o->kernel);
  if (!seconds_ok(o->alpha)) return cdag__error(CDAG_ERR_ARG, "%soptions.alpha %g is not 0 or in (0, 1000]", who, o->alpha);
  if (!seconds_ok(o->beta)) return cdag__error(CDAG_ERR_ARG, "%soptions.beta %g is not 0 or in (0, 1000]", who, o->beta);
  if (!seconds_ok(o->overhead))
    return cdag__error(CDAG_ERR_ARG, "%soptions.overhead %g is not 0 or in (0, 1000]", who, o->overhead);
  if (!seconds_ok(o->gamma)) return cdag__error(CDAG_ERR_ARG, "%soptions.gamma %g is not 0 or in (0, 1000]", who, o->gamma);
  if (o->blocks < 0 || o->blocks > (1 << 30))
    return cdag__error(CDAG_ERR_ARG, "%soptions.blocks %d is not in 0..2^30", who, o->blocks);
  if (o->measure != 0 && o->measure != 1)
    return cdag__error(CDAG_ERR_ARG, "%soptions.measure %d is neither 0 nor 1", who, o->measure);
  return CDAG_OK;
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
  cdag_options_init(opts);
  if (o) *opts = *o;
  if (opts->root >= g->nprocs) opts->root = 0;  /* the compiling rank means nothing offline */
  return pipeline_check_options(opts, g->nprocs, -1);
}

/* cdag_analyze from the match of finalized g, which it frees (the dataflow releases it as
   soon as it is done with it), with opts as offline_options made them. */
static int analyze_matched(cdag_graph *g, match_result *m, const cdag_options *opts, double t0, cdag_plan **p) {
  *p = NULL;
  df_sst *sst = NULL;
  double t1 = now();
  int rc = dataflow_run_opt(g, m, DF_WAITSETS_IF_NEEDED | DF_RELEASE_INPUTS, &sst);
  double t2 = now();
  if (rc == CDAG_OK) rc = detect_run(g, sst, opts, p);
  double t3 = now();
  match_free(m);
  if (rc) return rc;
  (*p)->sec_match = t1 - t0;
  (*p)->sec_dataflow = t2 - t1;
  (*p)->sec_detect = t3 - t2;
  if ((rc = volume_of(g, *p)) != CDAG_OK) {
    cdag_plan_free(p);
    return rc;
  }
  for (int64_t i = 0; i < g->nops; i++) {
    (*p)->nops_kind[g->kind[i]]++;
    int os = g->os ? g->os[i] : IR_OS_NONE;
    if (os >= IR_OS_GET && os <= IR_OS_FENCE) (*p)->nonesided[os - IR_OS_GET]++;
  }
  return CDAG_OK;
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
  detect_plan_free(*p);
  *p = NULL;
  return CDAG_OK;
}

int pipeline_plan(cdag_graph *g, const cdag_options *o, const kern_model *m, kern_policy policy, cdag_plan **p) {
  int rc = cdag_analyze(g, o, p);
  if (rc == CDAG_OK) rc = kern_choose_plan(*p, m, policy);
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
  if (rc == CDAG_OK) rc = kern_choose_plan(*p, m, policy);
  if (rc != CDAG_OK) cdag_plan_free(p);
  return rc;
}

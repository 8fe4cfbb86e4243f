/* cdag — src/exec/pipeline.c: the whole compiler pipeline on a global graph, without MPI.
 *
 * cdag_analyze: finalize (program order, dependencies), match, dataflow (SST, wait sets),
 * detect (collectives, plan), timing each phase; pipeline_plan adds the choice of algorithm
 * and the price (the plan against the graph as written, src/model/price.c).
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

/* o with the variables of s over its default fields, onto machine m. */
static void tune_on(const cdag_options *o, const cdag_settings *s, const machine_params *m, pipeline_tune *t) {
  cdag_options e = *o;
  cdag__options_env(&e, s);   /* variables only where o holds a default */
  t->model = m->model;
  if (e.alpha > 0) t->model.alpha = e.alpha;
  if (e.beta > 0) t->model.beta = e.beta;
  if (e.overhead > 0) t->model.overhead = e.overhead;
  if (e.gamma > 0) t->model.gamma = e.gamma;
  if (e.blocks > 0) t->model.blocks = e.blocks;
  t->policy = policy_of((int)e.kernel);
  t->measure = e.measure;
  t->price = e.price;
  t->lp = m->lp;
  snprintf(t->source, sizeof t->source, "%s", m->source);
  if (e.alpha > 0 || e.beta > 0 || e.overhead > 0 || e.gamma > 0) {   /* explicit wins, as in the choice */
    t->lp = kern_model_loggp(&t->model);
    t->lp.O = m->lp.O, t->lp.S = m->lp.S;
    snprintf(t->source, sizeof t->source, "options");
  }
}

void pipeline_tuning_on(const cdag_options *o, const cdag_settings *s, const machine_params *m, pipeline_tune *t) {
  tune_on(o, s, m, t);
}

int pipeline_tuning(const cdag_options *o, const kern_model *base, pipeline_tune *t) {
  cdag_settings s;
  machine_params m;
  int rc = cdag__settings_read(&s);
  if (base) m = machine_measured(base);
  else if (rc == CDAG_OK) rc = machine_find(&s, &m);
  else m = machine_builtin();
  tune_on(o, &s, &m, t);
  return rc;
}

pipeline_tune pipeline_tune_of(const kern_model *m, kern_policy policy) {
  cdag_options o;
  pipeline_tune t;
  cdag_options_init(&o);
  pipeline_tuning(&o, m, &t);   /* a bad variable was reported by the entry point */
  t.policy = policy;
  return t;
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
    if (os == IR_OS_ACC) p->nonesided[3]++;
  }
  return volume_of(g, p);
}

/* Local reduces that combine values of different reductions (a chain of ops, as a buffer
   reused for reductions of several ops makes) start a stage: what they combine is then
   origins of their stage (src/stage). Marks the ops mixed[0..n) of g, through map (a
   stage's op -> g's op; NULL: g's own); 1 when one was not marked yet. */
static int mark_cuts(cdag_graph *g, const int32_t *mixed, int64_t n, const int32_t *map, int *added) {
  int rc = ir_ensure_opt(g, (void **)&g->cut, sizeof *g->cut, 0);
  for (int64_t i = 0; rc == CDAG_OK && i < n; i++) {
    int32_t op = map ? map[mixed[i]] : mixed[i];
    *added |= g->cut[op] != IR_CUT_MIXED;
    g->cut[op] = IR_CUT_MIXED;
  }
  return rc;
}

/* The dataflow and detection of a phase without computation, from the match of finalized
   g, which it frees (the dataflow releases it as soon as it is done with it), with opts as
   offline_options made them. When reduces mix reductions, no plan: *mixed gets the SST that
   lists them (the caller cuts there and frees it). */
static int analyze_phase(cdag_graph *g, match_result *m, const cdag_options *opts, const det_pricer *pr, double t0,
                         int stage, cdag_plan **p, df_sst **mixed) {
  *p = NULL;
  *mixed = NULL;
  df_sst *sst = NULL;
  double t1 = now();
  int flags = DF_WAITSETS_IF_NEEDED | DF_COLLECT_MIXED | (stage ? 0 : DF_RELEASE_INPUTS);   /* stages are small */
  int rc = dataflow_run_opt(g, m, flags, &sst);
  match_free(m);
  if (rc == CDAG_OK && sst->nmixed) {
    *mixed = sst;
    return CDAG_OK;
  }
  double t2 = now();
  if (rc == CDAG_OK) rc = detect_run(g, sst, opts, pr, p);
  double t3 = now();
  if (rc) return rc;
  (*p)->sec_match = t1 - t0;
  (*p)->sec_dataflow = t2 - t1;
  (*p)->sec_detect = t3 - t2;
  if ((rc = whole_figures(g, *p)) != CDAG_OK) cdag_plan_free(p);
  return rc;
}

/* Only the reduces of g that mix reductions (*mixed, none: NULL), from its match, freed. */
static int mixed_only(cdag_graph *g, match_result *m, df_sst **mixed) {
  df_sst *sst = NULL;
  int rc = dataflow_run_opt(g, m, DF_WAITSETS_IF_NEEDED | DF_COLLECT_MIXED, &sst);
  match_free(m);
  if (rc == CDAG_OK && sst->nmixed) *mixed = sst;
  else dataflow_free(sst);
  return rc;
}

/* One stage's graph, from its ops to its plan (or *mixed, as analyze_phase); p NULL: only
   *mixed. */
static int analyze_stage(cdag_graph *s, const cdag_options *opts, const det_pricer *pr, cdag_plan **p, df_sst **mixed) {
  match_result m = {0};
  double t0 = now();
  int rc = ir_finalize(s);
  *mixed = NULL;
  if (rc == CDAG_OK) rc = match_run(s, &m);
  if (rc == CDAG_OK) return p ? analyze_phase(s, &m, opts, pr, t0, 1, p, mixed) : mixed_only(s, &m, mixed);
  match_free(&m);
  return rc;
}

/* The stages of s analysed one by one and chained behind *p. When a stage's reduces mix
   reductions, they are marked cuts of g (*cut set) and no plan is made: the later stages
   are only searched for more such reduces, so that one more cut of g finds them all (a
   recording of thousands of nonblocking reductions would otherwise be cut once per stage
   that needs it). */
static int plan_stages(cdag_graph *g, stage_split *s, const cdag_options *opts, const det_pricer *pr, cdag_plan **p,
                       double *sec, int *cut) {
  cdag_plan **tail = p;
  int rc = CDAG_OK;
  for (int32_t k = 0; rc == CDAG_OK && k < s->nstages; k++) {
    df_sst *mixed = NULL;
    rc = analyze_stage(s->graph[k], opts, pr, *cut ? NULL : tail, &mixed);
    if (rc == CDAG_OK && mixed) {
      int added = 0;
      rc = mark_cuts(g, mixed->mixed, mixed->nmixed, s->orig[k], &added);
      if (rc == CDAG_OK && !added)
        rc = cdag__error(CDAG_ERR_UNSUPPORTED, "stages: a reduce mixes reductions in stage %d after a cut there", k);
      *cut = 1;
    }
    dataflow_free(mixed);
    ir_graph_free(s->graph[k]);   /* a plan never points into its graph */
    s->graph[k] = NULL;
    if (rc) break;
    if (*cut) continue;
    sec[0] += (*tail)->sec_match, sec[1] += (*tail)->sec_dataflow, sec[2] += (*tail)->sec_detect;
    (*tail)->stage = k;
    if (!(*p)->as_written) (*p)->as_written = (*tail)->as_written;   /* exact_float: one stage as written, all */
    tail = &(*tail)->next;
  }
  return rc;
}

/* A staged plan whose messages that land a stage late need more staging memory on one rank
   than DET_STAGING_MAX runs as written, saying so: a program that makes 100,000 MPI_Gets of
   128 KiB into one buffer within an epoch that computes would otherwise get 13 GB of staging
   buffers (MPICH's rma/manyget), more than the node has. The rule reads only the graph, so
   every rank decides alike. */
static int staging_fits(cdag_plan *p) {
  const stage_steps *st = p->steps;
  uint64_t most = 0;
  int32_t rank = 0;
  for (int64_t i = 0; i < st->ntemps; i++) {   /* a rank's buffers follow each other from STAGE_TEMP_BASE */
    uint64_t end = st->temps[i].addr + st->temps[i].len - STAGE_TEMP_BASE;
    if (end > most) most = end, rank = st->temps[i].rank;
  }
  if (most <= DET_STAGING_MAX || p->as_written) return CDAG_OK;
  p->as_written = DET_WRITTEN_MEMORY;
  return detect_plan_note(p, "runs as written: %lld messages land a stage late, and their staging buffers would take "
                          "%llu B on rank %d, more than cdag's limit of %llu B per rank", (long long)st->ntemps,
                          (unsigned long long)most, rank, (unsigned long long)DET_STAGING_MAX);
}

/* Adds one to the count of every rank that ends a pair (src, dst) of another rank. */
static void count_pair(int64_t *cnt, int32_t src, int32_t dst) {
  if (src == dst) return;
  cnt[src]++;
  cnt[dst]++;
}

/* The most persistent requests a rank's schedule of p would hold, and that rank: every
   stage's messages, kept synchronisations, reduction contributions (a pair each) and
   collective memberships (a request each). An upper bound (a stage sends one message per
   pair of ranks). O(plan size + nprocs). */
static int64_t most_requests(const cdag_plan *p, int32_t *rank) {
  int64_t *cnt = calloc((size_t)p->nprocs + 1, sizeof *cnt), most = -1;
  if (!cnt) return -1;
  for (const cdag_plan *q = p; q; q = q->next) {
    for (int64_t i = 0; i < q->nmsgs; i++) count_pair(cnt, q->msgs[i].src, q->msgs[i].dst);
    for (int64_t i = 0; i < q->nsyncs; i++) count_pair(cnt, q->syncs[2 * i], q->syncs[2 * i + 1]);
    for (int64_t i = 0; i < q->ncolls; i++)
      for (int32_t k = 0; k < q->colls[i].nranks; k++) cnt[q->ranks[q->colls[i].ranks_first + k]]++;
    for (int64_t i = 0; i < q->nreds; i++) {
      const df_set *st = &q->sst->sets[q->reds[i].set];
      for (int32_t k = 0; k < st->nruns; k++) {
        const df_run *u = &q->sst->runs[st->first + k];
        for (int32_t r = u->lo; r >= 0 && r <= u->hi; r++) count_pair(cnt, r, q->reds[i].dst);
      }
    }
  }
  for (int32_t r = 0; r < p->nprocs; r++)
    if (cnt[r] > most) most = cnt[r], *rank = r;
  free(cnt);
  return most;
}

/* A plan whose schedule would hold more than DET_REQUESTS_MAX persistent requests on one
   rank runs as written, saying so: MPICH 4.0 draws requests from a pool of 2^18 per process
   and aborts past it (an assertion, no error code), and a recording that computes between 2.4
   million one-sided updates is a plan of as many stages, each with its message (MPICH's
   rma/atomic_get_*). As written, a rank with many messages starts each as it becomes ready
   (baseline.c). The rule reads only the plan, so every rank decides alike. */
static int requests_fit(cdag_plan *p) {
  int32_t rank = 0;
  int64_t most = p->as_written ? 0 : most_requests(p, &rank);
  if (most < 0) return CDAG_NOMEM("request count");
  if (most <= DET_REQUESTS_MAX) return CDAG_OK;
  p->as_written = DET_WRITTEN_REQUESTS;
  return detect_plan_note(p, "runs as written: its schedule would hold %lld MPI requests on rank %d, more than cdag's "
                          "limit of %d per rank (MPI's pool of requests is finite)", (long long)most, rank, DET_REQUESTS_MAX);
}

/* A graph that computes (or whose reduces mix reductions): its stages (src/stage), each a
   graph of pure communication, analysed one by one and chained behind the first plan,
   which takes the computations and the whole graph's figures. A stage whose reduces mix
   reductions adds cuts and the graph is cut again, from a new match. */
static int analyze_stages(cdag_graph *g, match_result *m, const cdag_options *opts, const det_pricer *pr, double t0,
                          cdag_plan **p) {
  stage_split s = {0};
  double sec[3] = {0, 0, 0};
  int rc = CDAG_OK, cut = 1;
  *p = NULL;
  for (int round = 0; rc == CDAG_OK && cut; round++) {
    cut = 0;
    if (round && (rc = match_run(g, m))) break;
    rc = stage_cut(g, m, &s);
    match_free(m);
    sec[0] = now() - t0, sec[1] = sec[2] = 0;
    if (rc == CDAG_OK) rc = plan_stages(g, &s, opts, pr, p, sec, &cut);
    if (cut || rc) {
      cdag_plan_free(p);
      stage_split_free(&s);
    }
  }
  if (rc == CDAG_OK && !((*p)->steps = malloc(sizeof *(*p)->steps))) rc = CDAG_NOMEM("stages");
  if (rc == CDAG_OK) {
    *(*p)->steps = s.steps;
    s.steps = (stage_steps){0};
    (*p)->sec_match = sec[0], (*p)->sec_dataflow = sec[1], (*p)->sec_detect = sec[2];
    rc = whole_figures(g, *p);
  }
  if (rc == CDAG_OK) rc = staging_fits(*p);
  if (rc == CDAG_OK) rc = requests_fit(*p);
  stage_split_free(&s);
  if (rc) cdag_plan_free(p);
  match_free(m);
  return rc;
}

/* The mixed reduces of g's stages (of g whole, when it does not compute) marked as cuts of
   g, from m, its match, which it frees; *added: some were new. */
static int mark_round(cdag_graph *g, match_result *m, int *added) {
  df_sst *mixed = NULL;
  int rc = CDAG_OK;
  if (!stage_has_computes(g)) {
    rc = mixed_only(g, m, &mixed);
    if (rc == CDAG_OK && mixed) rc = mark_cuts(g, mixed->mixed, mixed->nmixed, NULL, added);
    dataflow_free(mixed);
    return rc;
  }
  stage_split s = {0};
  rc = stage_cut(g, m, &s);
  match_free(m);
  for (int32_t k = 0; rc == CDAG_OK && k < s.nstages; k++) {
    int here = 0;
    rc = analyze_stage(s.graph[k], NULL, NULL, NULL, &mixed);
    if (rc == CDAG_OK && mixed) rc = mark_cuts(g, mixed->mixed, mixed->nmixed, s.orig[k], &here);
    if (rc == CDAG_OK && mixed && !here)
      rc = cdag__error(CDAG_ERR_UNSUPPORTED, "stages: a reduce mixes reductions in stage %d after a cut there", k);
    *added |= here;
    dataflow_free(mixed);
    mixed = NULL;
  }
  stage_split_free(&s);
  return rc;
}

int pipeline_mark_mixed(cdag_graph *g) {
  int rc = CDAG_OK, added = 1;
  while (rc == CDAG_OK && added) {
    match_result m = {0};
    added = 0;
    rc = match_run(g, &m);
    if (rc == CDAG_OK) rc = mark_round(g, &m, &added);
    else match_free(&m);
  }
  return rc;
}

/* A phase without computation, unless its reduces mix reductions: then in stages. */
static int analyze_matched(cdag_graph *g, match_result *m, const cdag_options *opts, const det_pricer *pr, double t0,
                           cdag_plan **p) {
  if (stage_has_computes(g)) return analyze_stages(g, m, opts, pr, t0, p);
  df_sst *mixed = NULL;
  int rc = analyze_phase(g, m, opts, pr, t0, 0, p, &mixed), added = 0;
  if (rc == CDAG_OK && mixed) {
    rc = mark_cuts(g, mixed->mixed, mixed->nmixed, NULL, &added);
    dataflow_free(mixed);
    if (rc == CDAG_OK) rc = match_run(g, m);
    if (rc == CDAG_OK) return analyze_stages(g, m, opts, pr, t0, p);
    match_free(m);
  }
  if (rc == CDAG_OK && !mixed && (rc = requests_fit(*p))) cdag_plan_free(p);
  return rc;
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
  if (rc == CDAG_OK) return analyze_matched(g, &m, &opts, NULL, t0, p);
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

/* What a priced plan costs as it runs: the plan, or the graph as written. */
static double runs_us(const cdag_plan *p) {
  const kern_price *pr = p->chosen->price;
  return p->as_written ? pr->written_us : pr->plan_us;
}

/* The plan of g with marks already set, from a new match, chosen and priced. */
static int plan_again(cdag_graph *g, const cdag_options *opts, const pipeline_tune *t, const det_pricer *pr,
                      double written, cdag_plan **p) {
  match_result m = {0};
  int rc = match_run(g, &m);
  if (rc != CDAG_OK) {
    match_free(&m);
    return rc;
  }
  if ((rc = analyze_matched(g, &m, opts, pr, now(), p)) == CDAG_OK) rc = choose_stages(*p, &t->model, t->policy);
  if (rc == CDAG_OK) rc = model_price_plan(g, written, *p, &t->model, t->policy, &t->lp);
  if (rc != CDAG_OK) cdag_plan_free(p);
  return rc;
}

/* g's stage marks as they were before the second planning (saved: a copy, or NULL when g had
   none), put back when that planning is not kept: its own cuts (mixed reductions it met)
   must not outlive it. */
static void restore_cuts(cdag_graph *g, uint8_t *saved) {
  if (saved && g->cut) memcpy(g->cut, saved, (size_t)g->nops);
  else if (!saved) {
    free(g->cut);
    g->cut = NULL;
  }
  free(saved);
}

/* Local reduces and copies reading bytes that messages deliver into memory the phase leaves
   behind make the plan send those bytes twice (stage_mark_delivered). The graph is planned
   again with those ops a stage after the messages, reading the bytes where they landed; the
   cheaper plan runs (a tie keeps *p), and a note gives both prices. */
static int try_delivered(cdag_graph *g, const cdag_options *opts, const pipeline_tune *t, const det_pricer *pr,
                         double written, cdag_plan **p) {
  int64_t n = 0;
  if (!(*p)->chosen->price->priced || det_written_unpriced((*p)->as_written)) return CDAG_OK;
  uint8_t *saved = g->cut ? malloc((size_t)(g->nops ? g->nops : 1)) : NULL;
  if (g->cut && !saved) return CDAG_NOMEM("stages");
  if (saved) memcpy(saved, g->cut, (size_t)g->nops);
  int rc = stage_mark_delivered(g, &n);
  if (rc != CDAG_OK || !n) {
    restore_cuts(g, saved);
    return rc;
  }
  cdag_plan *alt = NULL;
  rc = plan_again(g, opts, t, pr, written, &alt);
  if (rc == CDAG_ERR_NOMEM) {
    restore_cuts(g, saved);
    return rc;
  }
  const char *what = n > 1 ? "local reductions and copies read" : "local reduction or copy reads";
  if (rc == CDAG_OK && alt->chosen->price->priced && runs_us(alt) < runs_us(*p)) {
    rc = detect_plan_note(alt, "%lld %s bytes messages deliver where they land, a stage after them: %.3f us, against %.3f us "
                   "otherwise (those bytes sent again as their inputs)", (long long)n, what, runs_us(alt), runs_us(*p));
    cdag_plan_free(p);
    *p = alt;
    free(saved);   /* the marks now describe the plan that runs (cdag model cuts g again by them) */
    return rc;
  }
  restore_cuts(g, saved);
  if (rc == CDAG_OK && alt->chosen->price->priced)
    rc = detect_plan_note(*p, "%lld %s bytes messages deliver: reading them where they land, a stage after the messages, "
                   "would cost %.3f us, against %.3f us as planned", (long long)n, what, runs_us(alt),
                   runs_us(*p));
  else {
    rc = detect_plan_note(*p, "%lld %s bytes messages deliver: reading them where they land was not weighed: %s",
                   (long long)n, what, rc ? cdag_error_message() : alt->chosen->price->why);
    cdag__error_clear();
  }
  cdag_plan_free(&alt);
  return rc;
}

/* Candidates the pricer left as messages, in every stage of p. */
static int64_t left_in(const cdag_plan *p) {
  int64_t n = 0;
  for (const cdag_plan *q = p; q; q = q->next) n += q->nleft;
  return n;
}

/* Each candidate is priced alone, against its transfers as messages; the whole plan then pays
   what that estimate leaves out (the copies that place each piece, messages packed with
   others). So where candidates were left as messages, the graph is planned again keeping
   every one (detection's rules alone), and the cheaper plan runs (a tie keeps *p): a native
   gather of 4 ranks priced at 2.905 us against 1.905 us as messages made a plan slower than
   the graph, where keeping it gives 2.905 us. A note gives both prices. */
static int try_kept(cdag_graph *g, const cdag_options *opts, const pipeline_tune *t, double written, cdag_plan **p) {
  int64_t n = left_in(*p);
  if (!n || !(*p)->chosen->price->priced || det_written_unpriced((*p)->as_written)) return CDAG_OK;
  cdag_plan *alt = NULL;
  int rc = plan_again(g, opts, t, NULL, written, &alt);
  if (rc == CDAG_ERR_NOMEM) return rc;
  const char *what = n > 1 ? "collectives the price set aside" : "collective the price set aside";
  if (rc == CDAG_OK && alt->chosen->price->priced && runs_us(alt) < runs_us(*p)) {
    rc = detect_plan_note(alt, "the %lld %s, kept: %.3f us, against %.3f us otherwise", (long long)n, what,
                          runs_us(alt), runs_us(*p));
    cdag_plan_free(p);
    *p = alt;
    return rc;
  }
  if (rc == CDAG_OK && alt->chosen->price->priced)   /* the plans' own prices: either may run as written */
    rc = detect_plan_note(*p, "the %lld %s, kept, would make a plan of %.3f us, against %.3f us with %s left", (long long)n,
                          what, alt->chosen->price->plan_us, (*p)->chosen->price->plan_us, n > 1 ? "them" : "it");
  else if (rc != CDAG_OK)   /* the plan that runs stands; only the alternative was not made */
    rc = detect_plan_note(*p, "keeping the %lld %s was not tried: %s", (long long)n, what, cdag_error_message());
  cdag__error_clear();
  cdag_plan_free(&alt);
  return rc;
}

/* The plan of finalized g from its match m (freed), chosen and priced as t and opts say. The
   graph as written is modelled first, while its match exists. */
static int plan_matched(cdag_graph *g, match_result *m, const cdag_options *opts, const pipeline_tune *t, double t0,
                        cdag_plan **p) {
  int price = t->price && opts->price;
  double written = 0;
  char why[200] = "options.price = 0 (or CDAG_PRICE=0): the plan runs without being weighed";
  int rc = price ? exec_loggp_paired(g, m->partner, &t->lp, &written, NULL) : CDAG_OK;
  if (rc != CDAG_OK && rc != CDAG_ERR_NOMEM) {   /* the plan still runs, unweighed: the report says why */
    snprintf(why, sizeof why, "not priced: the graph as written could not be modelled: %s", cdag_error_message());
    cdag__error_clear();
    price = 0, rc = CDAG_OK;
  }
  model_price_ctx ctx;
  det_pricer pricer = model_pricer(&ctx, &t->model, t->policy, &t->lp);
  if (rc == CDAG_OK) rc = analyze_matched(g, m, opts, price ? &pricer : NULL, t0, p);
  else match_free(m);
  if (rc == CDAG_OK) rc = choose_stages(*p, &t->model, t->policy);
  if (rc == CDAG_OK && price) rc = model_price_plan(g, written, *p, &t->model, t->policy, &t->lp);
  else if (rc == CDAG_OK) snprintf((*p)->chosen->price->why, sizeof (*p)->chosen->price->why, "%s", why);
  if (rc == CDAG_OK && price) rc = try_delivered(g, opts, t, &pricer, written, p);
  if (rc == CDAG_OK && price) rc = try_kept(g, opts, t, written, p);
  if (rc == CDAG_OK) snprintf((*p)->chosen->price->source, sizeof (*p)->chosen->price->source, "%s", t->source);
  if (rc != CDAG_OK) cdag_plan_free(p);
  return rc;
}

int pipeline_plan(cdag_graph *g, const cdag_options *o, const pipeline_tune *t, cdag_plan **p) {
  if (!g || !t || !p) return cdag__error(CDAG_ERR_ARG, "pipeline_plan: NULL argument");
  *p = NULL;
  cdag_options opts;
  int rc = offline_options(g, o, &opts);
  if (rc) return rc;
  match_result m = {0};
  double t0 = now();
  if ((rc = ir_finalize(g)) == CDAG_OK) rc = match_run(g, &m);
  if (rc == CDAG_OK) return plan_matched(g, &m, &opts, t, t0, p);
  match_free(&m);
  return rc;
}

int pipeline_plan_matched(cdag_graph *g, match_result *mr, const cdag_options *o, const pipeline_tune *t,
                          cdag_plan **p) {
  if (!g || !mr || !t || !p || g->state == IR_BUILDING || mr->nops != g->nops) {
    match_free(mr);
    return cdag__error(CDAG_ERR_ARG, "pipeline_plan_matched: a finalized graph and its match expected");
  }
  *p = NULL;
  cdag_options opts;
  int rc = offline_options(g, o, &opts);
  if (rc == CDAG_OK) return plan_matched(g, mr, &opts, t, now(), p);
  match_free(mr);
  return rc;
}

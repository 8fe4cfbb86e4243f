/* cdag — src/model/price.c: what pays, by the LogGOPS model: each candidate collective against
 * its transfers as messages, then the plan against the graph as written.
 *
 * Candidates (model_pricer, detect's det_pricer): detection asks for each collective that moves
 * blocks, as soon as it is built, and for each reduction (with the bcasts that replicate its
 * result) once all are, what it costs alone (lowered with the algorithm it would run) and what
 * it replaces costs as residual parts (transfers as messages packed per pair of ranks as the
 * runtime packs them; reductions as residual reductions), both lowered and run through the
 * model; it keeps the collective only when it is faster. Each costs O(its pieces log) to
 * lower and model.
 *
 * The plan (model_price_plan), after each collective's algorithm: the plan lowered to the
 * messages it would send (lower.c: its algorithms, residual messages packed as the runtime
 * packs them, its computations between stages, the graph's plain calcs where they ran) and the
 * graph as written are both run through the LogGOPS model (loggp.c) with the same parameters.
 * The plan is used only when it is strictly faster: a tie keeps what the program wrote. A graph
 * with native collective calls (a recording) is no exception: as written, each call runs as
 * the flat messages the graph holds it as (ir/collective.c), which is what the model prices;
 * the plan runs it as its algorithm. So a compiled phase never models slower than the graph as
 * written, and the report gives both times. The plan that lost stays in the report (its
 * collectives are not used), which says why. Cost: one lowering and one LogGOPS run of the plan, O(n log n) in its ops; the graph's
 * run is the caller's (exec_loggp_paired), made while it still has the graph's match.
 *
 * Residual reductions lower to a message per pair of ranks that contribute, which can be far
 * more than the graph sends (a recursive-doubling allreduce whose partial sums land in memory
 * the phase leaves behind: P^2 contributions, from P - 1 senders to each rank). A lower bound
 * comes first: every such message costs its receiver o. Where that bound already loses (to the
 * collective, or to the graph as written), nothing is lowered, and the bound is what the report
 * gives. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/lower.h"

/* Plan (or part of a plan) q lowered under km and policy, with g's plain calcs when g is given,
   run under lp: *us. */
static int lowered_time(const cdag_graph *g, const cdag_plan *q, const kern_model *km, kern_policy policy,
                        const loggp_params *lp, double *us) {
  cdag_graph *low = NULL;
  int32_t *pairs = NULL;
  int rc = exec_lower_plan_modelled(q, g, km, policy, &low);
  if (rc == CDAG_OK) rc = exec_lower_pairs(low, &pairs);
  if (rc == CDAG_OK) rc = exec_loggp_paired(low, pairs, lp, us, NULL);
  free(pairs);
  ir_graph_free(low);
  return rc;
}

/* A part of a plan under the pricer's model. */
static int part_time(const model_price_ctx *x, const cdag_plan *q, double *us) {
  return lowered_time(NULL, q, &x->km, x->policy, &x->lp, us);
}

static int xfer_order(const void *a, const void *b) {
  const df_xfer *x = a, *y = b;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  return x->src_addr < y->src_addr ? -1 : x->src_addr > y->src_addr;
}

/* Transfers xs[0..n) as the residual messages of a plan of nprocs ranks: one per pair of
   ranks, as detect's plan groups them. */
static int messages_time(const model_price_ctx *x, int32_t nprocs, const df_xfer *xs, int64_t n, double *us) {
  cdag_plan m = {.nprocs = nprocs};
  kern_choices ch = {.pack_limit = kern_model_pack_limit(&x->km)};
  m.xfers = malloc((size_t)(n ? n : 1) * sizeof *m.xfers);
  m.msgs = malloc((size_t)(n ? n : 1) * sizeof *m.msgs);
  if (!m.xfers || !m.msgs) {
    free(m.xfers);
    free(m.msgs);
    return CDAG_NOMEM("pricing");
  }
  memcpy(m.xfers, xs, (size_t)n * sizeof *xs);
  qsort(m.xfers, (size_t)n, sizeof *m.xfers, xfer_order);
  for (int64_t i = 0; i < n; i++) {
    const df_xfer *t = &m.xfers[i];
    if (!m.nmsgs || m.msgs[m.nmsgs - 1].src != t->src || m.msgs[m.nmsgs - 1].dst != t->dst)
      m.msgs[m.nmsgs++] = (det_msg){.src = t->src, .dst = t->dst, .first = i};
    m.msgs[m.nmsgs - 1].n++;
    m.msgs[m.nmsgs - 1].bytes += df_xfer_bytes(t);
  }
  m.nxfers = n;
  m.chosen = &ch;
  int rc = part_time(x, &m, us);
  free(m.xfers);
  free(m.msgs);
  return rc;
}

/* Residual reductions rs[0..n) (their sets in p->sst) as a plan of their own. */
static int reductions_time(const model_price_ctx *x, const cdag_plan *p, const df_red *rs, int64_t n, double *us) {
  cdag_plan m = {.nprocs = p->nprocs, .nreds = n, .reds = (df_red *)rs, .sst = p->sst};
  kern_choices ch = {.pack_limit = kern_model_pack_limit(&x->km)};
  m.chosen = &ch;
  return part_time(x, &m, us);
}

/* A lower bound of the modelled time of residual reductions: in each stage every other rank
   that contributes to a rank's reductions sends it one message (lower.c packs a pair's
   contributions together), and each receive takes o of that rank's CPU. The senders are
   counted per destination as the union of the contributions' rank ranges, over sorted
   (destination, stage, first rank) ranges, not an array of every rank: a candidate reduction
   is judged without O(ranks) work. */
typedef struct {
  int32_t dst, stage, lo, hi;   /* ranks lo..hi contribute to dst's reductions in that stage */
} recv_src;

static int by_dst(const void *a, const void *b) {
  const recv_src *x = a, *y = b;
  if (x->dst != y->dst) return (x->dst > y->dst) - (x->dst < y->dst);
  if (x->stage != y->stage) return (x->stage > y->stage) - (x->stage < y->stage);
  return (x->lo > y->lo) - (x->lo < y->lo);
}

static int64_t runs_of(const df_sst *s, const df_red *rs, int64_t n) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) k += s->sets[rs[i].set].nruns;
  return k;
}

/* Appends to v[*nv ..] the contributing ranks of each reduction of rs[0..n) (sets in s). */
static void add_sources(const df_sst *s, const df_red *rs, int64_t n, int32_t stage, recv_src *v, int64_t *nv) {
  for (int64_t k = 0; k < n; k++) {
    const df_set *e = &s->sets[rs[k].set];
    for (int32_t u = 0; u < e->nruns; u++) {
      const df_run *r = &s->runs[e->first + u];
      if (r->lo >= 0) v[(*nv)++] = (recv_src){rs[k].dst, stage, r->lo, r->hi};   /* rank -1: a capped set's count */
    }
  }
}

/* The most receives of one rank, times o (v sorted here): per (destination, stage) the
   union of its ranges but the destination itself. */
static double busiest(const loggp_params *lp, recv_src *v, int64_t n) {
  base_sort(v, n, sizeof *v, by_dst);
  double most = 0, sum = 0;
  for (int64_t i = 0; i < n;) {
    int32_t dst = v[i].dst, stage = v[i].stage, lo = v[i].lo, hi = v[i].hi;
    int64_t senders = 0;
    if (i == 0 || v[i - 1].dst != dst) sum = 0;
    for (i++; i < n && v[i].dst == dst && v[i].stage == stage; i++) {
      if (v[i].lo > hi + 1) {   /* a new stretch of ranks */
        senders += hi - lo + 1 - (dst >= lo && dst <= hi);
        lo = v[i].lo, hi = v[i].hi;
      } else if (v[i].hi > hi) {
        hi = v[i].hi;
      }
    }
    senders += hi - lo + 1 - (dst >= lo && dst <= hi);
    sum += (double)senders * lp->o;
    if (sum > most) most = sum;
  }
  return most;
}

/* The floor of the residual reductions rs[0..n) of p, or of every stage of p when rs is NULL. */
static int receive_floor(const loggp_params *lp, const cdag_plan *p, const df_red *rs, int64_t n, double *us) {
  int64_t total = rs ? runs_of(p->sst, rs, n) : 0, nv = 0;
  for (const cdag_plan *q = p; !rs && q; q = q->next) total += runs_of(q->sst, q->reds, q->nreds);
  recv_src *v = malloc((size_t)(total ? total : 1) * sizeof *v);
  if (!v) return CDAG_NOMEM("pricing");
  if (rs) add_sources(p->sst, rs, n, 0, v, &nv);
  int32_t stage = 0;
  for (const cdag_plan *q = p; !rs && q; q = q->next) add_sources(q->sst, q->reds, q->nreds, stage++, v, &nv);
  *us = busiest(lp, v, nv);
  free(v);
  return CDAG_OK;
}

/* Collectives colls[0..nc) of p as a plan of their own (sharing p's slots), a replication
   following its reduce there. */
static int collectives_time(const model_price_ctx *x, const cdag_plan *p, const int64_t *colls, int64_t nc,
                            double *us) {
  det_coll *sub = malloc((size_t)nc * sizeof *sub);
  if (!sub) return CDAG_NOMEM("pricing");
  int rc = CDAG_OK;
  for (int64_t k = 0; k < nc; k++) {
    sub[k] = p->colls[colls[k]];
    int64_t after = sub[k].after;
    sub[k].after = 0;
    for (int64_t j = 0; j < k && after > 0; j++)
      if (colls[j] == after - 1) sub[k].after = j + 1;
    if (after > 0 && sub[k].after == 0)
      rc = cdag__error(CDAG_ERR_ARG, "pricing: a replication without its reduce");
  }
  cdag_plan one = {.nprocs = p->nprocs, .opts = p->opts, .ncolls = nc, .colls = sub, .nranks = p->nranks,
                   .ranks = p->ranks, .niovs = p->niovs, .iovs = p->iovs, .npieces = p->npieces, .pieces = p->pieces,
                   .sst = p->sst};
  if (rc == CDAG_OK) rc = part_time(x, &one, us);
  free(sub);
  return rc;
}

/* det_pricer's judge: the collectives alone, and what they replace as residual parts. A part
   the model cannot lower is not priced (-1, -1): the rules decide. */
static int judge(void *ctx, const cdag_plan *p, const int64_t *colls, int64_t nc, const df_xfer *xs, int64_t nx,
                 const df_red *rs, int64_t nr, double *coll_us, double *msgs_us) {
  const model_price_ctx *x = ctx;
  int rc = collectives_time(x, p, colls, nc, coll_us);
  double floor = 0;
  if (rc == CDAG_OK && nr) rc = receive_floor(&x->lp, p, rs, nr, &floor);
  if (rc == CDAG_OK && nr && floor > *coll_us) *msgs_us = floor;   /* lowering them cannot make them win */
  else if (rc == CDAG_OK)
    rc = nr ? reductions_time(x, p, rs, nr, msgs_us) : messages_time(x, p->nprocs, xs, nx, msgs_us);
  if (rc == CDAG_ERR_NOMEM) return rc;
  if (rc != CDAG_OK) {
    *coll_us = *msgs_us = -1;
    cdag__error_clear();
  }
  return CDAG_OK;
}

det_pricer model_pricer(model_price_ctx *x, const kern_model *km, kern_policy policy, const loggp_params *lp) {
  x->km = *km;
  x->policy = policy;
  x->lp = *lp;
  return (det_pricer){x, judge};
}

int model_price_plan(const cdag_graph *g, double written_us, cdag_plan *p, const kern_model *km, kern_policy policy,
                     const loggp_params *lp) {
  if (!g || !p || !p->chosen || !lp) return cdag__error(CDAG_ERR_ARG, "model_price_plan: a chosen plan expected");
  kern_price *pr = p->chosen->price;
  pr->params = *lp;
  pr->written_us = written_us;
  if (p->as_written) {   /* exact_float, the staging memory or the requests decided already: nothing to weigh */
    snprintf(pr->why, sizeof pr->why, "the graph runs as written (%s)", det_written_why(p->as_written));
    return CDAG_OK;
  }
  double floor = 0;
  int rc = receive_floor(lp, p, NULL, 0, &floor);
  if (rc != CDAG_OK) return rc;
  if (floor >= written_us) {   /* residual reductions alone lose: not worth lowering */
    pr->priced = pr->bound = 1;
    pr->plan_us = floor;
    p->as_written = DET_WRITTEN_COST;
    return CDAG_OK;
  }
  rc = lowered_time(g, p, km, policy, lp, &pr->plan_us);
  if (rc == CDAG_ERR_NOMEM) return rc;
  if (rc != CDAG_OK) {   /* a plan the model cannot lower still runs: the report says it was not weighed */
    snprintf(pr->why, sizeof pr->why, "not priced: %s", cdag_error_message());
    cdag__error_clear();
    return CDAG_OK;
  }
  pr->priced = 1;
  if (pr->plan_us < written_us) return CDAG_OK;
  p->as_written = DET_WRITTEN_COST;
  return CDAG_OK;
}

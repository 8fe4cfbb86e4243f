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
 * with native collective calls (a recording) keeps its plan: there the plan keeps the program's
 * calls, and the graph as written would run them as their flat messages. So a
 * compiled phase never models slower than the program's own messages, and the report gives
 * both times. The plan that lost stays in the report (its collectives are not used), which says
 * why. Cost: one lowering and one LogGOPS run of the plan, O(n log n) in its ops; the graph's
 * run is the caller's (exec_loggp_paired), made while it still has the graph's match.
 *
 * Residual reductions lower to a message per contribution, which can be far more than the
 * graph sends (a recursive-doubling allreduce whose partial sums land in memory the phase
 * leaves behind: P^2 contributions). A lower bound comes first: every such message costs its
 * receiver o. Where that bound already loses (to the collective, or to the graph as written),
 * nothing is lowered, and the bound is what the report gives. */
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
    m.msgs[m.nmsgs - 1].bytes += t->len;
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

/* A lower bound of the modelled time of residual reductions: each contribution from another
   rank is a message its destination receives, and each receive takes o of that rank's CPU.
   The receives are summed per destination over sorted (rank, time) pairs, not an array of
   every rank: a candidate reduction is judged without O(ranks) work. */
typedef struct {
  int32_t dst;
  double us;
} recv_cost;

static int by_dst(const void *a, const void *b) {
  const recv_cost *x = a, *y = b;
  return (x->dst > y->dst) - (x->dst < y->dst);
}

/* Appends to v[*nv ..] the receive time of each reduction of rs[0..n) (sets in s) at its rank. */
static void add_receives(const loggp_params *lp, const df_sst *s, const df_red *rs, int64_t n, recv_cost *v,
                         int64_t *nv) {
  for (int64_t k = 0; k < n; k++) {
    const df_set *e = &s->sets[rs[k].set];
    double msgs = 0;
    for (int32_t u = 0; u < e->nruns; u++) {
      const df_run *r = &s->runs[e->first + u];
      int own = rs[k].dst >= r->lo && rs[k].dst <= r->hi;
      msgs += (double)(r->hi - r->lo + 1 - own) * r->mult;
    }
    v[(*nv)++] = (recv_cost){rs[k].dst, msgs * lp->o};
  }
}

/* The largest sum of v[0..n) over one rank (v sorted here). */
static double busiest(recv_cost *v, int64_t n) {
  base_sort(v, n, sizeof *v, by_dst);
  double most = 0, sum = 0;
  for (int64_t i = 0; i < n; i++) {
    sum = i > 0 && v[i].dst == v[i - 1].dst ? sum + v[i].us : v[i].us;
    if (sum > most) most = sum;
  }
  return most;
}

/* The floor of the residual reductions rs[0..n) of p, or of every stage of p when rs is NULL. */
static int receive_floor(const loggp_params *lp, const cdag_plan *p, const df_red *rs, int64_t n, double *us) {
  int64_t total = rs ? n : 0, nv = 0;
  for (const cdag_plan *q = p; !rs && q; q = q->next) total += q->nreds;
  recv_cost *v = malloc((size_t)(total ? total : 1) * sizeof *v);
  if (!v) return CDAG_NOMEM("pricing");
  if (rs) add_receives(lp, p->sst, rs, n, v, &nv);
  for (const cdag_plan *q = p; !rs && q; q = q->next) add_receives(lp, q->sst, q->reds, q->nreds, v, &nv);
  *us = busiest(v, nv);
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
  kern_price *pr = &p->chosen->price;
  pr->params = *lp;
  pr->written_us = written_us;
  if (p->as_written) {   /* exact_float decided already: nothing to weigh */
    snprintf(pr->why, sizeof pr->why, "the graph runs as written (exact_float)");
    return CDAG_OK;
  }
  double floor = 0;
  int rc = receive_floor(lp, p, NULL, 0, &floor);
  if (rc != CDAG_OK) return rc;
  if (floor >= written_us && !g->ncalls) {   /* residual reductions alone lose: not worth lowering */
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
  if (g->ncalls) {   /* as written, the program's collective calls would run as their flat messages */
    snprintf(pr->why, sizeof pr->why, "the plan runs: the graph calls collectives, which the plan keeps (as written "
             "they would run as the flat messages they were recorded as)");
    return CDAG_OK;
  }
  p->as_written = DET_WRITTEN_COST;
  return CDAG_OK;
}

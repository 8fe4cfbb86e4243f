/* cdag — src/choose/kernel_choice.c: which algorithm each collective of a plan runs with.
 *
 * MPI's own collective or one of cdag's kernels (kernel.h), per collective: the cost model
 * decides unless the kernel policy (options.kernel, CDAG_KERNEL) forces a side. Pure: the same choice is made by `cdag analyze`
 * offline, by `cdag goal --plan` and by the MPI executor, so what the report says is what
 * runs. kern_choose_plan adds what the model does not see: whether the plan's slots fit a
 * kernel at all; where they do not, the collective runs as MPI's and the reason says so. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect.h"
#include "choose/choose.h"
#include "base/error.h"
#include "base/settings.h"

/* Census sums in each rank's own order: only where the order cannot change the bytes. */
static int order_free(const det_coll *c) {
  return ir_rop_idempotent(c->op) || !ir_type_is_float(c->type);
}

/* The model's best time for kind over p members: MPI's algorithms or cdag's kernels (the
   census allreduce only where it may: census_ok). */
static double best_time(const kern_model *d, int kind, int p, uint64_t bytes, int census_ok) {
  double t = kern_model_binomial(d, kind, p, bytes), u = kern_model_scatter_allgather(d, kind, p, bytes);
  double v = kern_model_circulant(d, kind, p, bytes);
  if (u < t) t = u;
  if (v < t) t = v;
  if (kind == DET_ALLREDUCE && census_ok && kern_model_census(d, p, bytes) < t) t = kern_model_census(d, p, bytes);
  return t;
}

/* A replication (c->after) runs as MPI_Bcast after its reduce. Its reason gives the model's
   view of the pair against an allreduce over the contributors (whose results the ranks that
   do not keep them would drop): the pass does not choose by it, the reader can. */
static void replication_reason(const cdag_plan *pl, const det_coll *c, const kern_model *m, char *reason, size_t len) {
  const det_coll *r = &pl->colls[c->after - 1];
  if (r->kind != DET_REDUCE) {   /* after an allreduce, to ranks outside it: nothing to set against */
    snprintf(reason, len, "%s: MPI (a replication: it sends the result of collective %lld, after it)",
             det_kind_name(c->kind), (long long)c->after - 1);
    return;
  }
  kern_model d = m ? *m : kern_model_default();
  double pair = best_time(&d, DET_REDUCE, r->nranks, r->bytes, 0) + best_time(&d, DET_BCAST, c->nranks, c->bytes, 0);
  double all = best_time(&d, DET_ALLREDUCE, r->nranks, r->bytes, order_free(r));
  snprintf(reason, len, "%s: MPI (a replication: it sends the result of collective %lld, after it); model: "
           "reduce + bcast %.3g us, allreduce over the %d contributors %.3g us", det_kind_name(c->kind),
           (long long)c->after - 1, pair * 1e6, r->nranks, all * 1e6);
}

kern_alg kern_choose_coll(const struct cdag_plan *pl, int64_t ci, const kern_model *m, kern_policy policy,
                          char *reason, size_t len) {
  const det_coll *c = &pl->colls[ci];
  char why[160];
  if (!reason || !len) reason = why, len = sizeof why;
  if (!ir_coll_get(c->kind)->kernel) {
    snprintf(reason, len, "%s: MPI (no cdag kernel for this kind)", det_kind_name(c->kind));
    return KERN_ALG_MPI;
  }
  if (c->nranks < 2) {
    snprintf(reason, len, "%s: MPI (one member)", det_kind_name(c->kind));
    return KERN_ALG_MPI;
  }
  if (c->after > 0) {   /* the executor starts it once the rest completed (run.c): MPI_Bcast */
    replication_reason(pl, c, m, reason, len);
    return KERN_ALG_MPI;
  }
  if (policy == KERN_POLICY_MPI) {
    snprintf(reason, len, "%s: MPI (kernel policy mpi)", det_kind_name(c->kind));
    return KERN_ALG_MPI;
  }
  kern_model d = m ? *m : kern_model_default();
  kern_alg alg = kern_model_choose(&d, c->kind, c->nranks, c->bytes, reason, len);
  if (alg == KERN_ALG_CENSUS && !order_free(c)) {
    alg = KERN_ALG_CIRCULANT;
    snprintf(reason, len, "%s: circulant (census would reorder a floating-point %s)", det_kind_name(c->kind),
             c->op == CDAG_SUM ? "sum" : "product");
    if (policy == KERN_POLICY_AUTO && kern_model_circulant(&d, DET_ALLREDUCE, c->nranks, c->bytes) >=
                                          0.9 * kern_model_binomial(&d, DET_ALLREDUCE, c->nranks, c->bytes)) {
      snprintf(reason, len, "%s: MPI (census would reorder a floating-point sum; circulant no faster)",
               det_kind_name(c->kind));
      return KERN_ALG_MPI;
    }
  }
  if (policy == KERN_POLICY_CDAG && alg == KERN_ALG_MPI) {
    alg = KERN_ALG_CIRCULANT;
    size_t n = strlen(reason);
    snprintf(reason + n, len - n, "; circulant forced (kernel policy cdag)");
  }
  return alg;
}

const char *kern_alg_name(kern_alg alg) {
  switch (alg) {
  case KERN_ALG_CIRCULANT: return "circulant";
  case KERN_ALG_CENSUS: return "census";
  case KERN_ALG_AUTO: return "auto";
  default: return "mpi";
  }
}

static uint64_t slot_bytes(const cdag_plan *p, const det_coll *c, int m, int send, int s) {
  return det_slot(p, c, send, m, s)->bytes;
}

/* Why cdag's kernel cannot run collective c of p as planned, or NULL when it can. A recv
   slot may be empty where the kernel delivers bytes (the member does not keep them: the
   executor gives the kernel scratch there), but never of another size. */
static const char *kernel_misfit(const cdag_plan *p, const det_coll *c) {
  int n = c->nranks, rootm = det_root_member(p, c);
  if (c->kind == DET_REDUCE || c->kind == DET_ALLREDUCE) {
    int tsize = ir_type_size(c->type);
    if (tsize <= 0 || !ir_rop_name(c->op) || !ir_rop_valid_for(c->op, c->type)) return "no kernel for this type and op";
    if (c->nsend_slots != 1 || c->nrecv_slots != 1) return "slot layout";
    uint64_t b = slot_bytes(p, c, 0, 1, 0);
    if (b % (uint64_t)tsize) return "a partial element";
    for (int m = 0; m < n; m++) {
      uint64_t r = slot_bytes(p, c, m, 0, 0);
      if (slot_bytes(p, c, m, 1, 0) != b) return "members contribute different sizes";
      if (r && (r != b || (c->kind == DET_REDUCE && m != rootm))) return "a result slot of another size";
    }
    if (c->kind == DET_REDUCE && rootm < 0) return "root is not a member";
    return NULL;
  }
  if (c->kind == DET_BCAST) {
    if (rootm < 0 || c->nsend_slots != 1 || c->nrecv_slots != 1) return "slot layout";
    uint64_t b = slot_bytes(p, c, rootm, 1, 0);
    for (int m = 0; m < n; m++) {
      uint64_t r = slot_bytes(p, c, m, 0, 0);
      if (m != rootm && slot_bytes(p, c, m, 1, 0)) return "a non-root member sends";
      if (r && (r != b || m == rootm)) return "a member receives another size";
    }
    return NULL;
  }
  if (c->nsend_slots != 1 || c->nrecv_slots != n) return "slot layout";
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      uint64_t r = slot_bytes(p, c, i, 0, j);
      if (r && r != slot_bytes(p, c, j, 1, 0)) return "a block lands in a slot of another size";
    }
  return NULL;
}

/* How the residual transfers travel: each plan message (one pair of ranks) splits into its
   packed pieces and those that travel alone (kern_travels_alone, as schedule.c writes them). */
static void choose_messages(const cdag_plan *p, const kern_model *m, kern_choices *out) {
  kern_model d = m ? *m : kern_model_default();
  uint64_t limit = kern_model_pack_limit(&d);
  int64_t sent = 0, alone = 0;
  for (int64_t k = 0; k < p->nmsgs; k++) {
    const det_msg *g = &p->msgs[k];
    int64_t nalone = 0, npacked = 0;
    if (g->src == g->dst) continue;   /* a rank's transfers to itself are local copies, not messages */
    for (int64_t x = g->first; x < g->first + g->n; x++) {   /* a strided transfer's blocks are pieces each */
      uint64_t len = p->xfers[x].len, nb = df_xfer_blocks(&p->xfers[x]);
      npacked += len && nb > kern_alone_of(len, nb, limit, &nalone);
    }
    sent += nalone + (npacked || !nalone);
    alone += nalone;
  }
  out->pack_limit = limit;
  out->msgs_sent = sent;
  out->msgs_alone = alone;
  out->msgs_overhead = d.overhead, out->msgs_gamma = d.gamma;
}

void kern_msgs_why(const kern_choices *c, char *buf, size_t n) {
  snprintf(buf, n, "per pair of ranks, pieces up to %llu B packed into one message, %lld larger ones alone "
           "(overhead %.3g us per message, copying %.3g ns/B)", (unsigned long long)c->pack_limit,
           (long long)c->msgs_alone, c->msgs_overhead * 1e6, c->msgs_gamma * 1e9);
}

int kern_choose_plan(cdag_plan *p, const kern_model *m, kern_policy policy) {
  kern_choices *out = calloc(1, sizeof *out);
  kern_choice *ch = p->ncolls ? calloc((size_t)p->ncolls, sizeof *ch) : NULL;   /* a stage has none, mostly */
  kern_price *price = p->stage == 0 ? calloc(1, sizeof *price) : NULL;
  if (!out || (p->ncolls && !ch) || (p->stage == 0 && !price)) {
    free(out);
    free(ch);
    free(price);
    return CDAG_NOMEM("kernel choices");
  }
  for (int64_t i = 0; i < p->ncolls; i++) {
    const det_coll *c = &p->colls[i];
    kern_alg alg = kern_choose_coll(p, i, m, policy, ch[i].why, sizeof ch[i].why);
    const char *misfit = alg == KERN_ALG_MPI ? NULL : kernel_misfit(p, c);
    if (misfit) {
      size_t len = strlen(ch[i].why);
      snprintf(ch[i].why + len, sizeof ch[i].why - len, "; runs as MPI: %s cannot (%s)", kern_alg_name(alg), misfit);
      alg = KERN_ALG_MPI;
    }
    ch[i].alg = (int)alg;
    snprintf(ch[i].name, sizeof ch[i].name, "%s", kern_alg_name(alg));
  }
  out->coll = ch;
  out->price = price;
  choose_messages(p, m, out);
  kern_choices_free(p);
  p->chosen = out;
  return CDAG_OK;
}

void kern_choices_free(cdag_plan *p) {
  if (!p || !p->chosen) return;
  free(p->chosen->coll);
  free(p->chosen->price);
  free(p->chosen);
  p->chosen = NULL;
}

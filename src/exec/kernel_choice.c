/* cdag — src/exec/kernel_choice.c: which algorithm each collective of a plan runs with.
 *
 * MPI's own collective or one of cdag's kernels (kernel.h), per collective: the cost model
 * decides unless CDAG_KERNEL forces a side. Pure: the same choice is made by `cdag analyze`
 * offline, by `cdag goal --plan` and by the MPI executor, so what the report says is what
 * runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect.h"
#include "exec/kernel.h"
#include "ir/error.h"

int kern_policy_env(kern_policy *policy) {
  const char *v = getenv("CDAG_KERNEL");
  *policy = KERN_POLICY_AUTO;
  if (!v || !*v || !strcmp(v, "auto")) return CDAG_OK;
  if (!strcmp(v, "mpi")) *policy = KERN_POLICY_MPI;
  else if (!strcmp(v, "cdag")) *policy = KERN_POLICY_CDAG;
  else return cdag__error(CDAG_ERR_ARG, "CDAG_KERNEL=%s: expected mpi, cdag or auto", v);
  return CDAG_OK;
}

/* The kernel kind of a plan collective, or -1 when cdag has none for it. */
static int kernel_kind(const det_coll *c) {
  switch (c->kind) {
  case DET_BCAST: return KERN_BCAST;
  case DET_ALLGATHER: return KERN_ALLGATHER;
  case DET_ALLGATHERV: return KERN_ALLGATHERV;
  case DET_REDUCE: return KERN_REDUCE;
  case DET_ALLREDUCE: return KERN_ALLREDUCE;
  default: return -1;
  }
}

/* Census sums in each rank's own order: only where the order cannot change the bytes. */
static int order_free(const det_coll *c) {
  return ir_rop_idempotent(c->op) || (c->type != CDAG_FLOAT && c->type != CDAG_DOUBLE);
}

kern_alg kern_choose_coll(const struct cdag_plan *pl, int64_t ci, const kern_model *m, kern_policy policy,
                          char *reason, size_t len) {
  const det_coll *c = &pl->colls[ci];
  int kind = kernel_kind(c);
  char why[160];
  if (!reason || !len) reason = why, len = sizeof why;
  if (kind < 0) {
    snprintf(reason, len, "%s: MPI (no cdag kernel for this kind)", det_kind_name(c->kind));
    return KERN_ALG_MPI;
  }
  if (c->nranks < 2) {
    snprintf(reason, len, "%s: MPI (one member)", det_kind_name(c->kind));
    return KERN_ALG_MPI;
  }
  if (policy == KERN_POLICY_MPI) {
    snprintf(reason, len, "%s: MPI (CDAG_KERNEL=mpi)", det_kind_name(c->kind));
    return KERN_ALG_MPI;
  }
  kern_model d = m ? *m : kern_model_default();
  kern_alg alg = kern_model_choose(&d, (kern_kind)kind, c->nranks, c->bytes, reason, len);
  if (alg == KERN_ALG_CENSUS && !order_free(c)) {
    alg = KERN_ALG_CIRCULANT;
    snprintf(reason, len, "%s: circulant (census would reorder a floating-point %s)", det_kind_name(c->kind),
             c->op == CDAG_SUM ? "sum" : "product");
    if (policy == KERN_POLICY_AUTO && kern_model_circulant(&d, KERN_ALLREDUCE, c->nranks, c->bytes) >=
                                          0.9 * kern_model_binomial(&d, KERN_ALLREDUCE, c->nranks, c->bytes)) {
      snprintf(reason, len, "%s: MPI (census would reorder a floating-point sum; circulant no faster)",
               det_kind_name(c->kind));
      return KERN_ALG_MPI;
    }
  }
  if (policy == KERN_POLICY_CDAG && alg == KERN_ALG_MPI) {
    alg = KERN_ALG_CIRCULANT;
    size_t n = strlen(reason);
    snprintf(reason + n, len - n, "; circulant forced (CDAG_KERNEL=cdag)");
  }
  return alg;
}

/* cdag — src/exec/model/loggp.c: the LogGP completion time of a graph (lower.h).
 *
 * A list scheduler over the dependency graph, in the spirit of LogGOPSim with eager
 * messages: ops become ready when their dependencies have completed (a receive also needs
 * its message's arrival) and are started in order of readiness from a binary heap; each
 * rank has one CPU (o per message, calc, copies and reduces) and one NIC (g + (s-1) G per
 * message sent). Cost O(n log n + m) for n ops and m dependencies. */
#include <math.h>
#include <stdlib.h>

#include "exec/model/lower.h"

loggp_params loggp_defaults(void) { return (loggp_params){1.0, 0.2, 0.2, 0.0002, 0.0001}; }

typedef struct {
  double t;
  int32_t op;
} lg_ev;

static int ev_less(const lg_ev *a, const lg_ev *b) { return a->t < b->t || (a->t == b->t && a->op < b->op); }

static void heap_push(lg_ev *h, int64_t *n, lg_ev e) {
  int64_t i = (*n)++;
  while (i > 0 && ev_less(&e, &h[(i - 1) / 2])) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = e;
}

static lg_ev heap_pop(lg_ev *h, int64_t *n) {
  lg_ev top = h[0], last = h[--(*n)];
  int64_t i = 0;
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && ev_less(&h[c + 1], &h[c])) c++;
    if (!ev_less(&h[c], &last)) break;
    h[i] = h[c];
    i = c;
  }
  if (*n > 0) h[i] = last;
  return top;
}

static int exec_loggp_deps(const cdag_graph *g, const loggp_params *lp, double *time, int *rank_max) {
  match_result m = {0};
  int rc = match_run(g, &m);
  if (rc) return rc;
  int64_t n = g->nops, nh = 0, done_ops = 0;
  double *ready = calloc((size_t)n + 1, sizeof *ready), *arrive = malloc(sizeof *arrive * ((size_t)n + 1));
  double *cpu = calloc((size_t)g->nprocs + 1, sizeof *cpu), *nic = calloc((size_t)g->nprocs + 1, sizeof *nic);
  double *fin = calloc((size_t)g->nprocs + 1, sizeof *fin);
  int32_t *left = malloc(sizeof *left * ((size_t)n + 1));
  lg_ev *h = malloc(sizeof *h * ((size_t)n + 1));
  if (!ready || !arrive || !cpu || !nic || !fin || !left || !h) {
    rc = CDAG_NOMEM("LogGP model");
    goto out;
  }
  for (int64_t i = 0; i < n; i++) {
    arrive[i] = -1;
    left[i] = g->pred_start[i + 1] - g->pred_start[i];
    if (left[i] == 0 && g->kind[i] != IR_RECV) heap_push(h, &nh, (lg_ev){0, (int32_t)i});
  }
  /* receives without dependencies wait for their message: pushed when it is sent */
  while (nh > 0) {
    lg_ev e = heap_pop(h, &nh);
    int32_t op = e.op, r = g->rank[op];
    double start = e.t > cpu[r] ? e.t : cpu[r], end;
    uint64_t s = g->bytes[op];
    double ser = s ? (double)(s - 1) * lp->G : 0;
    switch (g->kind[op]) {
      case IR_SEND: {
        double inj = start + lp->o > nic[r] ? start + lp->o : nic[r];
        nic[r] = inj + lp->g + ser;
        end = cpu[r] = start + lp->o;
        int32_t q = m.partner[op];
        arrive[q] = inj + ser + lp->L;
        if (left[q] == 0) heap_push(h, &nh, (lg_ev){ready[q] > arrive[q] ? ready[q] : arrive[q], q});
        break;
      }
      case IR_RECV: end = cpu[r] = start + lp->o; break;
      case IR_CALC: end = cpu[r] = start + (double)s / 1000.0; break;
      default: end = cpu[r] = start + (double)s * lp->copy; break;
    }
    if (end > fin[r]) fin[r] = end;
    done_ops++;
    for (int32_t k = g->succ_start[op]; k < g->succ_start[op + 1]; k++) {
      int32_t q = g->succ[k];
      if (end > ready[q]) ready[q] = end;
      if (--left[q] == 0 && (g->kind[q] != IR_RECV || arrive[q] >= 0))
        heap_push(h, &nh, (lg_ev){g->kind[q] == IR_RECV && arrive[q] > ready[q] ? arrive[q] : ready[q], q});
    }
  }
  if (done_ops != n) {
    rc = cdag__error(CDAG_ERR_CYCLE, "LogGP model: %lld of %lld ops never became ready", (long long)(n - done_ops), (long long)n);
    goto out;
  }
  *time = 0;
  if (rank_max) *rank_max = 0;
  for (int32_t r = 0; r < g->nprocs; r++)
    if (fin[r] > *time) {
      *time = fin[r];
      if (rank_max) *rank_max = r;
    }
out:
  match_free(&m);
  free(ready);
  free(arrive);
  free(cpu);
  free(nic);
  free(fin);
  free(left);
  free(h);
  return rc;
}

int exec_loggp(const cdag_graph *g, const loggp_params *lp, double *time, int *rank_max) {
  if (!g || !lp || !time) return cdag__error(CDAG_ERR_ARG, "exec_loggp: NULL argument");
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "exec_loggp: the graph is not finalized");
  ir_deps_view v;
  int rc = ir_deps_view_open(g, &v);
  if (rc == CDAG_OK) rc = exec_loggp_deps(v.g, lp, time, rank_max);
  ir_deps_view_close(&v);
  return rc;
}

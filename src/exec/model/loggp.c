/* cdag — src/exec/model/loggp.c: the LogGOPS completion time of a graph, as LogGOPSim has it.
 *
 * An event simulation with LogGOPSim's rules (spcl/LogGOPSim, LogGOPSim.cpp), so that a
 * graph exported with `cdag goal` models as LogGOPSim runs it. Each rank has CPUs (`cpu N`)
 * with a clock nexto and NICs (`nic N`) with a send clock nextgs and a receive clock
 * nextgr; the counts are the largest used anywhere, as in LogGOPSim.
 *  - An op becomes executable when every op it requires is done and every op it irequires
 *    has started; it is queued at nexto of its CPU (a send: the later of nexto and nextgs).
 *  - A local op (calc, copy, reduce) starts when its CPU is free and holds it for its cost
 *    (calc: GOAL's ns; copy and reduce: bytes * copy); it is done at once for its
 *    successors, which are queued at their CPU's clock.
 *  - A send starts when CPU and NIC are free: nexto += o + (s-1) O, nextgs = t + g + (s-1) G,
 *    and its message reaches the receiver's NIC at t + o + L. An eager send (s <= S) is done
 *    when it starts; a rendezvous send (s > S) when its receive has been matched.
 *  - The receiver handles a message when the CPU and NIC of the send's numbers are free there
 *    (LogGOPSim's rule): nexto = t + o + max((s-1) O, (s-1) G), nextgr = t + g + (s-1) G. If
 *    the receive is posted it is done; otherwise the message waits, and the receive is done
 *    as soon as it is posted (it costs nothing then: o was charged on arrival).
 *  - A receive needs no free CPU to be posted. Matching is cdag's (match.h), the pairing
 *    LogGOPSim's queues give when messages of a channel do not overtake.
 * The time is the latest CPU clock of any rank. Ties: events by time, then by the order they
 * were first queued; ops that become executable together are queued rank by rank, sends,
 * then receives, then local ops, each in op order (LogGOPSim sorts by type with an unstable
 * sort). Times are integers (picoseconds) so equal sums compare equal. (s-1) is 0 for empty
 * messages. Cost: O((n + m) log n) for n ops and m dependencies. */
#include <math.h>
#include <stdlib.h>

#include "exec/model/lower.h"

loggp_params loggp_defaults(void) { return (loggp_params){1.0, 0.2, 0.2, 0.0002, 0.0, 65535, 0.0001}; }

typedef int64_t ps_t;   /* picoseconds */

typedef struct {
  ps_t t;
  uint64_t ts;          /* first-queued order */
  int32_t op;
  uint8_t msg;          /* 1: the message of send op arriving at its receiver */
} ev;

static int ev_less(const ev *a, const ev *b) { return a->t < b->t || (a->t == b->t && a->ts < b->ts); }

static void heap_push(ev *h, int64_t *n, ev e) {
  int64_t i = (*n)++;
  while (i > 0 && ev_less(&e, &h[(i - 1) / 2])) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = e;
}

static ev heap_pop(ev *h, int64_t *n) {
  ev top = h[0], last = h[--(*n)];
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

enum { ST_STARTED = 1, ST_DONE = 2, ST_QUEUED = 4, ST_ARRIVED = 8, ST_POSTED = 16 };

typedef struct {
  const cdag_graph *g;
  const int32_t *partner;
  ps_t L, o, g_, G, O, copy;
  uint64_t S;
  int ncpu, nnic;
  ps_t *nexto, *nextgs, *nextgr;      /* per rank * ncpu / nnic */
  int32_t *need_done, *need_start;    /* unmet requires / irequires per op */
  int32_t *ss_start, *ss;             /* CSR: ops that irequire each op */
  uint8_t *st;
  ev *h;
  int64_t nh, ndone;
  uint64_t ts;
  int32_t *ready;                     /* ops executable in this event */
  int64_t nready;
} sim;

static int cpu_of(const sim *s, int32_t op) {
  return s->g->cpu && s->g->cpu[op] >= 0 ? s->g->cpu[op] : 0;
}

static int nic_of(const sim *s, int32_t op) {
  return s->g->nic && s->g->nic[op] >= 0 ? s->g->nic[op] : 0;
}

static ps_t *clock_o(sim *s, int32_t rank, int cpu) { return &s->nexto[(int64_t)rank * s->ncpu + cpu]; }
static ps_t *clock_gs(sim *s, int32_t rank, int nic) { return &s->nextgs[(int64_t)rank * s->nnic + nic]; }
static ps_t *clock_gr(sim *s, int32_t rank, int nic) { return &s->nextgr[(int64_t)rank * s->nnic + nic]; }

static ps_t bytes_less_one(uint64_t s, ps_t per_byte) { return s ? (ps_t)(s - 1) * per_byte : 0; }

static void maybe_ready(sim *s, int32_t op) {
  if (s->need_done[op] || s->need_start[op] || (s->st[op] & ST_QUEUED)) return;
  s->st[op] |= ST_QUEUED;
  s->ready[s->nready++] = op;
}

static void mark_started(sim *s, int32_t op) {
  if (s->st[op] & ST_STARTED) return;
  s->st[op] |= ST_STARTED;
  for (int32_t k = s->ss_start[op]; k < s->ss_start[op + 1]; k++) {
    s->need_start[s->ss[k]]--;
    maybe_ready(s, s->ss[k]);
  }
}

static void mark_done(sim *s, int32_t op) {
  mark_started(s, op);
  if (s->st[op] & ST_DONE) return;
  s->st[op] |= ST_DONE;
  s->ndone++;
  const cdag_graph *g = s->g;
  for (int32_t k = g->succ_start[op]; k < g->succ_start[op + 1]; k++) {
    s->need_done[g->succ[k]]--;
    maybe_ready(s, g->succ[k]);
  }
}

/* Rank, then sends, receives, local ops, then op id. */
static int type_rank(int kind) { return kind == IR_SEND ? 0 : kind == IR_RECV ? 1 : 2; }

static int ready_cmp(const void *pa, const void *pb, void *ctx) {
  const cdag_graph *g = ctx;
  int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
  if (g->rank[a] != g->rank[b]) return g->rank[a] < g->rank[b] ? -1 : 1;
  int ta = type_rank(g->kind[a]), tb = type_rank(g->kind[b]);
  if (ta != tb) return ta - tb;
  return (a > b) - (a < b);
}

static void queue_ready(sim *s) {
  if (s->nready > 1) ir_sort_r(s->ready, (size_t)s->nready, sizeof *s->ready, ready_cmp, (void *)s->g);
  for (int64_t i = 0; i < s->nready; i++) {
    int32_t op = s->ready[i], r = s->g->rank[op];
    ps_t t = *clock_o(s, r, cpu_of(s, op));
    if (s->g->kind[op] == IR_SEND && *clock_gs(s, r, nic_of(s, op)) > t) t = *clock_gs(s, r, nic_of(s, op));
    heap_push(s->h, &s->nh, (ev){t, s->ts++, op, 0});
  }
  s->nready = 0;
}

static ps_t local_cost(const sim *s, int32_t op) {
  uint64_t b = s->g->bytes[op];
  if (s->g->kind[op] == IR_CALC) return (ps_t)b * 1000;   /* GOAL calc: ns */
  return (ps_t)b * s->copy;
}

/* A rendezvous send is done when its receive matches, at time t of the receiver. */
static void rendezvous_done(sim *s, int32_t send, ps_t t, int cpu, int nic) {
  int32_t src = s->g->rank[send];
  if (*clock_o(s, src, cpu) < t) *clock_o(s, src, cpu) = t;
  if (*clock_gs(s, src, nic) < t) *clock_gs(s, src, nic) = t;
  mark_done(s, send);
}

static void step(sim *s, ev e) {
  const cdag_graph *g = s->g;
  int32_t op = e.op, r = g->rank[op];
  int cpu = cpu_of(s, op), nic = nic_of(s, op);
  uint64_t size = g->bytes[op];
  if (e.msg) {  /* op is the send; the receiver handles its message */
    int32_t q = s->partner[op], rr = g->rank[q];
    ps_t *o = clock_o(s, rr, cpu), *gr = clock_gr(s, rr, nic), busy = *o > *gr ? *o : *gr;
    if (busy > e.t) {
      e.t = busy;
      heap_push(s->h, &s->nh, e);
      return;
    }
    ps_t wire = bytes_less_one(size, s->G), cpu_bytes = bytes_less_one(size, s->O);
    *o = e.t + s->o + (cpu_bytes > wire ? cpu_bytes : wire);
    *gr = e.t + s->g_ + wire;
    if (!(s->st[q] & ST_POSTED)) {
      s->st[q] |= ST_ARRIVED;
      return;
    }
    if (size > s->S) rendezvous_done(s, op, e.t, cpu, nic);
    mark_done(s, q);
    return;
  }
  switch (g->kind[op]) {
  case IR_SEND: {
    ps_t *o = clock_o(s, r, cpu), *gs = clock_gs(s, r, nic), busy = *o > *gs ? *o : *gs;
    if (busy > e.t) {
      e.t = busy;
      heap_push(s->h, &s->nh, e);
      return;
    }
    mark_started(s, op);
    *o = e.t + s->o + bytes_less_one(size, s->O);
    *gs = e.t + s->g_ + bytes_less_one(size, s->G);
    heap_push(s->h, &s->nh, (ev){e.t + s->o + s->L, s->ts++, op, 1});
    if (size <= s->S) mark_done(s, op);
    return;
  }
  case IR_RECV:
    mark_started(s, op);
    if (!(s->st[op] & ST_ARRIVED)) {
      s->st[op] |= ST_POSTED;
      return;
    }
    if (size > s->S) rendezvous_done(s, s->partner[op], e.t, cpu, nic);
    mark_done(s, op);
    return;
  default: {
    ps_t *o = clock_o(s, r, cpu);
    if (*o > e.t) {
      e.t = *o;
      heap_push(s->h, &s->nh, e);
      return;
    }
    *o = e.t + local_cost(s, op);
    mark_done(s, op);
    return;
  }
  }
}

static ps_t to_ps(double us) { return (ps_t)llround(us * 1e6); }

/* Counters, the CSR of start successors, the clocks. */
static int sim_init(sim *s, const cdag_graph *g, const match_result *m, const loggp_params *lp) {
  int64_t n = g->nops;
  *s = (sim){.g = g, .partner = m->partner, .L = to_ps(lp->L), .o = to_ps(lp->o), .g_ = to_ps(lp->g),
             .G = to_ps(lp->G), .O = to_ps(lp->O), .copy = to_ps(lp->copy), .S = lp->S, .ncpu = 1, .nnic = 1};
  for (int64_t i = 0; i < n; i++) {
    if (g->cpu && g->cpu[i] >= s->ncpu) s->ncpu = g->cpu[i] + 1;
    if (g->nic && g->nic[i] >= s->nnic) s->nnic = g->nic[i] + 1;
  }
  size_t m1 = (size_t)n + 1;
  s->need_done = malloc(m1 * sizeof *s->need_done);
  s->need_start = calloc(m1, sizeof *s->need_start);
  s->ss_start = calloc(m1 + 1, sizeof *s->ss_start);
  s->ss = malloc((size_t)(g->nsdeps + 1) * sizeof *s->ss);
  s->st = calloc(m1, 1);
  s->h = malloc(2 * m1 * sizeof *s->h);   /* at most one op event and one message per op */
  s->ready = malloc(m1 * sizeof *s->ready);
  s->nexto = calloc((size_t)g->nprocs * (size_t)s->ncpu + 1, sizeof *s->nexto);
  s->nextgs = calloc((size_t)g->nprocs * (size_t)s->nnic + 1, sizeof *s->nextgs);
  s->nextgr = calloc((size_t)g->nprocs * (size_t)s->nnic + 1, sizeof *s->nextgr);
  if (!s->need_done || !s->need_start || !s->ss_start || !s->ss || !s->st || !s->h || !s->ready || !s->nexto ||
      !s->nextgs || !s->nextgr)
    return CDAG_NOMEM("LogGP model");
  for (int64_t i = 0; i < n; i++) s->need_done[i] = g->pred_start[i + 1] - g->pred_start[i];
  for (int64_t d = 0; d < g->nsdeps; d++) {
    s->need_start[g->sdep[2 * d + 1]]++;
    s->ss_start[g->sdep[2 * d] + 2]++;
  }
  for (int64_t i = 0; i < n; i++) s->ss_start[i + 2] += s->ss_start[i + 1];
  for (int64_t d = 0; d < g->nsdeps; d++) s->ss[s->ss_start[g->sdep[2 * d] + 1]++] = g->sdep[2 * d + 1];
  return CDAG_OK;
}

static void sim_free(sim *s) {
  free(s->need_done); free(s->need_start); free(s->ss_start); free(s->ss); free(s->st); free(s->h);
  free(s->ready); free(s->nexto); free(s->nextgs); free(s->nextgr);
}

static int run(const cdag_graph *g, const loggp_params *lp, double *time, int *rank_max) {
  match_result m = {0};
  sim s;
  int rc = match_run(g, &m);
  if (!rc) rc = sim_init(&s, g, &m, lp);
  else memset(&s, 0, sizeof s);
  if (!rc) {
    for (int64_t i = 0; i < g->nops; i++) maybe_ready(&s, (int32_t)i);
    queue_ready(&s);
    while (s.nh > 0) {
      step(&s, heap_pop(s.h, &s.nh));
      queue_ready(&s);
    }
    if (s.ndone != g->nops)
      rc = cdag__error(CDAG_ERR_CYCLE, "LogGP model: %lld of %lld ops never complete (their requires and irequires "
                       "wait for each other)", (long long)(g->nops - s.ndone), (long long)g->nops);
  }
  if (!rc) {
    ps_t best = 0;
    int who = 0;
    for (int32_t r = 0; r < g->nprocs; r++)
      for (int c = 0; c < s.ncpu; c++)
        if (*clock_o(&s, r, c) > best) best = *clock_o(&s, r, c), who = r;
    *time = (double)best * 1e-6;
    if (rank_max) *rank_max = who;
  }
  sim_free(&s);
  match_free(&m);
  return rc;
}

int exec_loggp(const cdag_graph *g, const loggp_params *lp, double *time, int *rank_max) {
  if (!g || !lp || !time) return cdag__error(CDAG_ERR_ARG, "exec_loggp: NULL argument");
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "exec_loggp: the graph is not finalized");
  if (!(lp->L >= 0 && lp->o >= 0 && lp->g >= 0 && lp->G >= 0 && lp->O >= 0 && lp->copy >= 0) ||
      lp->L > 1e9 || lp->o > 1e9 || lp->g > 1e9 || lp->G > 1e9 || lp->O > 1e9 || lp->copy > 1e9)
    return cdag__error(CDAG_ERR_ARG, "exec_loggp: LogGP parameters must lie in [0, 1e9] us");
  ir_deps_view v;
  int rc = ir_deps_view_open(g, &v);
  if (rc == CDAG_OK) rc = run(v.g, lp, time, rank_max);
  ir_deps_view_close(&v);
  return rc;
}

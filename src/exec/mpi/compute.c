/* cdag — src/exec/mpi/compute.c: computations in schedules (a graph that computes).
 *
 * The compiling rank lists every rank's computations in its part (part.h: comp), keyed by
 * the op in the rank's own graph, and the staging buffers of a plan in stages. Each rank
 * resolves a computation's function from its graph once, when the schedule is built, and a
 * run calls it at its place: the engine at the op (graph mode, baseline.c), or between the
 * stages (run.c). A graph from a file (`cdag replay`) has no function: the computation
 * writes the simulator's hash of the bytes it read (exec/sim/sim_compute.c, the same code),
 * so a schedule that runs it before a message it reads ends with other bytes, and spends
 * its cost by spinning, so that "as written" and "compiled" keep the program's time. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/mpi/schedule.h"
#include "exec/sim/sim.h"

static int temp_cmp(const void *x, const void *y) {
  const stage_range *a = x, *b = y;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return (a->addr > b->addr) - (a->addr < b->addr);
}

int sched_steps_put(const stage_steps *st, int32_t nprocs, const int64_t *base, part_steps *w) {
  for (int64_t i = 0; i < st->ncomputes; i++) {
    const stage_compute *c = &st->computes[i];
    if (c->rank < 0 || c->rank >= nprocs || c->op < base[c->rank] || c->op >= base[c->rank + 1])
      return cdag__error(CDAG_ERR_PLAN, "plan computation %lld: op %d is not one of rank %d's own (the plan is "
                         "inconsistent)", (long long)i, c->op, c->rank);
    part_compute_put(&w[c->rank], st, i, c->op - base[c->rank]);
  }
  stage_range *t = st->ntemps ? malloc((size_t)st->ntemps * sizeof *t) : NULL;
  if (st->ntemps && !t) return CDAG_NOMEM("staging buffers");
  if (t) memcpy(t, st->temps, (size_t)st->ntemps * sizeof *t);
  if (t) base_sort(t, (size_t)st->ntemps, sizeof *t, temp_cmp);
  int rc = CDAG_OK;
  for (int64_t k = 0; k < st->ntemps && !rc; k++) {
    if (t[k].rank < 0 || t[k].rank >= nprocs)
      rc = cdag__error(CDAG_ERR_PLAN, "plan staging buffer of rank %d", t[k].rank);
    else part_temp_put(&w[t[k].rank], t[k].addr, t[k].len);
  }
  free(t);
  return rc;
}

/* ---- staging buffers ---- */

/* Buffer offsets of the temps (sorted, disjoint): touching ones stay touching, so a piece
   that spans two still maps to one range. */
typedef struct {
  const uint64_t *t;    /* pairs */
  int64_t n;
  const uint64_t *off;
  uint8_t *buf;
} temp_map;

static void remap(const temp_map *m, uint64_t *addr) {
  int64_t lo = 0, hi = m->n;
  while (lo < hi) {   /* the last temp starting at or before addr */
    int64_t mid = lo + (hi - lo) / 2;
    if (m->t[2 * mid] <= *addr) lo = mid + 1;
    else hi = mid;
  }
  if (lo && *addr < m->t[2 * (lo - 1)] + m->t[2 * (lo - 1) + 1])
    *addr = (uint64_t)(uintptr_t)(m->buf + m->off[lo - 1] + (*addr - m->t[2 * (lo - 1)]));
}

static void remap_part(const temp_map *m, sched_part *p) {
  for (int64_t k = 0; k < p->npieces; k++)
    if (p->pieces[k].space == SP_USER) remap(m, &p->pieces[k].addr);
  for (int64_t k = 0; k < p->ncopies; k++) {
    remap(m, &p->copies[k].src);
    if (p->copies[k].dst_space == SP_USER) remap(m, &p->copies[k].dst);
  }
  for (int64_t k = 0; k < p->nreds; k++) remap(m, &p->reds[k].dst);
}

int sched_temps_bind(sched_core *c) {
  sched_part *p = &c->part;
  if (p->mode != PART_STAGES || !p->ntemps) return CDAG_OK;
  uint64_t *off = malloc((size_t)p->ntemps * sizeof *off), total = 0;
  if (!off) return CDAG_NOMEM("staging buffers");
  for (int64_t k = 0; k < p->ntemps; k++) {
    int touch = k && p->temps[2 * k] == p->temps[2 * k - 2] + p->temps[2 * k - 1];
    total = (touch ? total : (total + 63) & ~(uint64_t)63);   /* each run of temps cache-aligned */
    off[k] = total;
    total += p->temps[2 * k + 1];
  }
  int rc = (c->temps = calloc(1, total ? total : 1)) ? CDAG_OK : CDAG_NOMEM("staging buffers");
  temp_map m = {p->temps, p->ntemps, off, c->temps};
  for (int64_t s = 0; !rc && s < p->nstages; s++) remap_part(&m, &p->stages[s]);
  free(off);
  return rc;
}

/* ---- computations ---- */

/* s->unhashed: a copy of g's (on failure s keeps its own). */
static int take_unhashed(cdag_schedule *s, const cdag_graph *g) {
  int64_t n = g ? g->nunhashed : 0;
  uint64_t *u = n ? malloc((size_t)n * 2 * sizeof *u) : NULL;
  if (n && !u) return CDAG_NOMEM("computations");
  if (n) memcpy(u, g->unhashed, (size_t)n * 2 * sizeof *u);
  free(s->unhashed);
  s->unhashed = u, s->nunhashed = n;
  return CDAG_OK;
}

int sched_comps_build(cdag_schedule *s, cdag_graph *g, const sched_part *pt) {
  if (!pt->ncomps) return CDAG_OK;
  if (take_unhashed(s, g)) return CDAG_ERR_NOMEM;
  if (!(s->comps = calloc((size_t)pt->ncomps, sizeof *s->comps))) return CDAG_NOMEM("computations");
  s->ncomps = pt->ncomps;
  s->since = pt->since;
  for (int64_t k = 0; k < pt->ncomps; k++) {
    const part_compute *c = &pt->comps[k];
    sched_comp *x = &s->comps[k];
    if (!g || !exec_compute_fn(g, c->key, &x->fn, &x->arg)) x->fn = NULL;
    x->key = c->key;
    x->after = c->after;
    x->r = (const uint8_t *)(uintptr_t)c->raddr;
    x->rlen = c->rlen;
    x->since_first = c->since_first;
    x->nsince = c->nsince;
    x->w = (uint8_t *)(uintptr_t)c->waddr;
    x->wlen = c->wlen;
    x->wfirst = c->wfirst;
    x->nw = c->nw;
    x->cost = c->cost;
  }
  return CDAG_OK;
}

void sched_comps_rebind(cdag_schedule *s, const cdag_graph *g) {
  if (take_unhashed(s, g)) cdag__error_clear();   /* no room for g's: the handle keeps its own */
  for (int64_t k = 0; k < s->ncomps; k++) {
    sched_comp *x = &s->comps[k];
    if (!exec_compute_fn(g, x->key, &x->fn, &x->arg)) x->fn = NULL;
  }
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spinning, not sleeping: a sleep's wake-up costs tens of microseconds the program's
   computation did not. */
static void spend(uint64_t ns) {
  uint64_t end = now_ns() + ns;
  while (now_ns() < end) continue;
}

/* The bytes and their length, not where they lie: a replay's memory is mapped anew each run,
   and its computed bytes are then the same every run (a failing replay fails alike). */
static uint64_t hash_at(uint64_t h, const uint8_t *p, uint64_t len) { return sim_hash_bytes(h, p, len); }

/* hash_at of the pieces of [p, p + len) outside s->unhashed (each piece as a range). */
static uint64_t hash_kept(const cdag_schedule *s, uint64_t h, const uint8_t *p, uint64_t len) {
  if (!s->nunhashed) return hash_at(h, p, len);
  uint64_t a = (uint64_t)(uintptr_t)p, e = a + len;
  int64_t lo = 0, hi = s->nunhashed;
  while (lo < hi) {   /* the first unhashed range ending above a */
    int64_t mid = lo + (hi - lo) / 2;
    if (s->unhashed[2 * mid] + s->unhashed[2 * mid + 1] <= a) lo = mid + 1;
    else hi = mid;
  }
  for (int64_t k = lo; a < e; k++) {
    uint64_t ua = k < s->nunhashed ? s->unhashed[2 * k] : e, ue = k < s->nunhashed ? ua + s->unhashed[2 * k + 1] : e;
    if (ua > a) h = hash_at(h, (const uint8_t *)(uintptr_t)a, (ua < e ? ua : e) - a);
    a = ue > a ? ue : a;
  }
  return h;
}

void sched_comp_run(cdag_schedule *s, const sched_comp *c) {
  if (c->fn) {
    c->fn(c->arg);
    return;
  }
  uint64_t h = sim_hash_seed(c->key);
  if (c->rlen == UINT64_MAX) {
    h = sim_hash_mix(h, s->chain);
    for (int64_t k = c->since_first; k < c->since_first + c->nsince; k++)
      h = hash_kept(s, h, (const uint8_t *)(uintptr_t)s->since[2 * k], s->since[2 * k + 1]);
    s->chain = h;
  } else if (c->rlen) {
    h = hash_kept(s, h, c->r, c->rlen);
  }
  if (c->wlen && !c->nw) sim_hash_spread(h, c->w, c->wlen);
  for (int64_t j = 0; j < c->nw; j++)   /* its blocks, each its own part of the hash (sim_compute) */
    sim_hash_spread(j ? sim_hash_mix(h, (uint64_t)j) : h, (uint8_t *)(uintptr_t)s->since[2 * (c->wfirst + j)],
                    s->since[2 * (c->wfirst + j) + 1]);
  if (c->cost) spend(c->cost);
}

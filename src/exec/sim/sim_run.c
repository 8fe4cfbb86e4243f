/* cdag — src/exec/sim/sim_run.c: running graphs, SST tuples and plans in the simulator.
 *
 * sim_run_graph matches messages on its own (sort by channel and program position: the
 * plain FIFO rule, independent of src/match) and runs an event loop: an op is ready when
 * its dependencies are done (a receive also needs its send done); a send copies its data
 * out when it runs and the receive copies it in when it runs (match.h's semantics). The
 * ready op to run next is drawn with a seeded PRNG (seed 0: always the first), so tests can
 * try many valid orders. sim_apply_sst and sim_run_plan read a snapshot of the memory
 * taken before anything is written, as the plan semantics of detect.h say. */
#include <stdlib.h>
#include <string.h>

#include "exec/sim/sim.h"

/* ---- matching: sort p2p ops by (src, dst, tag, kind, program position) ---- */

typedef struct {
  int32_t src, dst, tag, kind, pos, op;  /* channel, sends before receives, program order */
} p2p_key;

static p2p_key key_of(const cdag_graph *g, int32_t op) {
  int send = g->kind[op] == IR_SEND;
  return (p2p_key){send ? g->rank[op] : g->peer[op], send ? g->peer[op] : g->rank[op], g->tag[op],
                   g->kind[op], g->pos[op], op};
}

static int same_channel(const p2p_key *a, const p2p_key *b) {
  return a->src == b->src && a->dst == b->dst && a->tag == b->tag;
}

static int cmp_i32(int32_t a, int32_t b) { return (a > b) - (a < b); }

static int p2p_cmp(const void *x, const void *y) {
  const p2p_key *a = x, *b = y;
  int c = cmp_i32(a->src, b->src);
  if (!c) c = cmp_i32(a->dst, b->dst);
  if (!c) c = cmp_i32(a->tag, b->tag);
  if (!c) c = cmp_i32(a->kind, b->kind);
  if (!c) c = cmp_i32(a->pos, b->pos);
  return c;
}

static int sim_error(int code, const cdag_graph *g, int32_t op, const char *what) {
  char d[200];
  return cdag__error(code, "simulator: %s %s", ir_describe(g, op, d, sizeof d), what);
}

static int truncated(const cdag_graph *g, int32_t snd, int32_t rcv) {
  char a[200], b[200];
  return cdag__error(CDAG_ERR_TRUNCATE, "simulator: %s receives %llu bytes but its matched send %s sends %llu",
                     ir_describe(g, rcv, a, sizeof a), (unsigned long long)g->bytes[rcv],
                     ir_describe(g, snd, b, sizeof b), (unsigned long long)g->bytes[snd]);
}

/* Pairs the k-th send of each channel with its k-th receive; partner[op] = -1 otherwise. */
static int sim_match(const cdag_graph *g, int32_t *partner) {
  p2p_key *p2p = malloc((size_t)(g->nops ? g->nops : 1) * sizeof *p2p);
  if (!p2p) return CDAG_NOMEM("simulator");
  int64_t n = 0;
  for (int64_t i = 0; i < g->nops; i++) {
    partner[i] = -1;
    if (g->kind[i] == IR_SEND || g->kind[i] == IR_RECV) p2p[n++] = key_of(g, (int32_t)i);
  }
  base_sort(p2p, n, sizeof *p2p, p2p_cmp);
  int rc = CDAG_OK;
  for (int64_t i = 0; i < n && rc == CDAG_OK;) { /* one channel: its sends, then its receives */
    int64_t ns = 0, nr = 0, j = i;
    for (; j < n && same_channel(&p2p[i], &p2p[j]); j++) {
      if (p2p[j].kind == IR_SEND) ns++;
      else nr++;
    }
    for (int64_t k = 0; k < ns && k < nr; k++) {
      int32_t s = p2p[i + k].op, r = p2p[i + ns + k].op;
      if (g->bytes[r] < g->bytes[s]) { rc = truncated(g, s, r); break; }
      partner[s] = r;
      partner[r] = s;
    }
    if (rc == CDAG_OK && ns != nr)
      rc = sim_error(CDAG_ERR_UNMATCHED, g, ns > nr ? p2p[i + nr].op : p2p[i + ns + ns].op, "has no partner");
    i = j;
  }
  free(p2p);
  return rc;
}

/* ---- running a graph ---- */

typedef struct {
  const cdag_graph *g;
  sim_mem *m;
  int32_t *partner, *indeg, *ready;
  uint8_t **inflight;        /* per send: its data, taken when it ran, until the receive runs */
  int64_t nready, done;
  uint64_t rng;
  stage_steps steps;         /* the graph's computations (none: ncomputes 0) */
  int32_t *compute;          /* per op: its index in steps.computes, -1 */
  uint64_t *chain;           /* per rank: the hash of its latest computation that read all */
} sim_run;

static void make_ready(sim_run *s, int32_t op) { s->ready[s->nready++] = op; }

static int access(sim_run *s, int rank, uint64_t addr, uint64_t len, int32_t op, uint8_t **p) {
  *p = sim_mem_at(s->m, rank, addr, len);
  return *p ? CDAG_OK : sim_error(CDAG_ERR_ARG, s->g, op, "touches memory outside the graph's buffers");
}

static int execute(sim_run *s, int32_t op) {
  const cdag_graph *g = s->g;
  uint8_t *a, *b;
  int rc;
  switch (g->kind[op]) {
    case IR_SEND: /* the data leaves now */
      if ((rc = access(s, g->rank[op], g->addr[op], g->bytes[op], op, &a))) return rc;
      s->inflight[op] = malloc((size_t)g->bytes[op] + 1);
      if (!s->inflight[op]) return CDAG_NOMEM("simulator");
      memcpy(s->inflight[op], a, (size_t)g->bytes[op]);
      return CDAG_OK;
    case IR_RECV: { /* only the sent bytes arrive */
      int32_t snd = s->partner[op];
      if ((rc = access(s, g->rank[op], g->addr[op], g->bytes[snd], op, &b))) return rc;
      memcpy(b, s->inflight[snd], (size_t)g->bytes[snd]);
      free(s->inflight[snd]);
      s->inflight[snd] = NULL;
      return CDAG_OK;
    }
    case IR_COPY: {   /* block by block: a strided copy's sides span their hulls */
      ir_blocks k = ir_copy_blocks(g, op);
      if ((rc = access(s, g->rank[op], g->addr2[op], k.from_last + k.len, op, &a)) ||
          (rc = access(s, g->rank[op], g->addr[op], k.to_last + k.len, op, &b)))
        return rc;
      for (uint64_t j = 0; j < k.n; j++) memmove(b + ir_block_to(&k, j), a + ir_block_from(&k, j), (size_t)k.len);
      return CDAG_OK;
    }
    case IR_REDUCE:
      if ((rc = access(s, g->rank[op], g->addr2[op], g->bytes[op], op, &a)) ||
          (rc = access(s, g->rank[op], g->addr[op], g->bytes[op], op, &b)))
        return rc;
      if (ir_rop_is_user(g->tag[op]))   /* its op is a process's MPI_Op: only MPI can run it */
        return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d op %lld: a reduction with a user-defined MPI_Op cannot be "
                           "simulated", g->rank[op], (long long)op);
      ir_reduce_apply(g->peer[op], g->tag[op], a, b, g->bytes[op] / (uint64_t)ir_type_size(g->peer[op]));
      return CDAG_OK;
    case IR_CALC:
      return s->compute && s->compute[op] >= 0 ? sim_compute(&s->steps, s->compute[op], s->m, s->chain) : CDAG_OK;
    default:
      return CDAG_OK;
  }
}

static void complete(sim_run *s, int32_t op) {
  const cdag_graph *g = s->g;
  s->done++;
  for (int32_t k = g->succ_start[op]; k < g->succ_start[op + 1]; k++)
    if (--s->indeg[g->succ[k]] == 0) make_ready(s, g->succ[k]);
  if (g->kind[op] == IR_SEND && --s->indeg[s->partner[op]] == 0) make_ready(s, s->partner[op]);
}

static int32_t pick(sim_run *s, uint64_t seed) {
  int64_t i = 0;
  if (seed) {
    s->rng ^= s->rng << 13; s->rng ^= s->rng >> 7; s->rng ^= s->rng << 17;
    i = (int64_t)(s->rng % (uint64_t)s->nready);
  }
  int32_t op = s->ready[i];
  s->ready[i] = s->ready[--s->nready];
  return op;
}

/* A not-yet-run op that op waits for (its send, or a dependency); every stuck op has one. */
static int32_t blocker(const sim_run *s, int32_t op) {
  const cdag_graph *g = s->g;
  if (g->kind[op] == IR_RECV && s->indeg[s->partner[op]] > 0) return s->partner[op];
  for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1]; k++)
    if (s->indeg[g->pred[k]] > 0) return g->pred[k];
  return -1;
}

/* Deadlock: following blockers from any stuck op must come back to an op seen before;
   the ops from there on form a cycle, which the message names (the first few of them). */
static int stuck(const sim_run *s) {
  const cdag_graph *g = s->g;
  int64_t *seen = calloc((size_t)g->nops, sizeof *seen); /* 1 + step at which op was seen */
  int32_t *path = malloc((size_t)g->nops * sizeof *path);
  if (!seen || !path) { free(seen); free(path); return CDAG_NOMEM("simulator"); }
  int32_t op = 0;
  while (s->indeg[op] == 0) op++;
  int64_t steps = 0;
  while (op >= 0 && !seen[op]) {
    seen[op] = ++steps;
    path[steps - 1] = op;
    op = blocker(s, op);
  }
  char msg[900], d[200];
  int n = snprintf(msg, sizeof msg, "simulator: deadlock, %lld ops can never run; a cycle of ops each waiting for the next:",
                   (long long)(g->nops - s->done));
  int64_t first = op >= 0 ? seen[op] - 1 : 0, shown = steps - first < 4 ? steps - first : 4;
  for (int64_t i = first; i < first + shown && n < (int)sizeof msg; i++)
    n += snprintf(msg + n, sizeof msg - (size_t)n, "%s %s", i > first ? " ->" : "", ir_describe(g, path[i], d, sizeof d));
  if (first + shown < steps && n < (int)sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, " -> ...");
  free(seen);
  free(path);
  return cdag__error(CDAG_ERR_CYCLE, "%s", msg);
}

static int event_loop(sim_run *s, uint64_t seed) {
  const cdag_graph *g = s->g;
  for (int64_t op = 0; op < g->nops; op++) {
    s->indeg[op] = g->pred_start[op + 1] - g->pred_start[op] + (g->kind[op] == IR_RECV); /* + its send */
    if (s->indeg[op] == 0) make_ready(s, (int32_t)op);
  }
  while (s->nready > 0) {
    int32_t op = pick(s, seed);
    int rc = execute(s, op);
    if (rc) return rc;
    complete(s, op);
  }
  return s->done == g->nops ? CDAG_OK : stuck(s);
}

/* The computations, when g has some: their list and each op's index in it. */
static int computes_of(sim_run *s) {
  const cdag_graph *g = s->g;
  if (!stage_has_computes(g)) return CDAG_OK;
  int rc = stage_list_computes(g, &s->steps);
  if (rc) return rc;
  s->compute = malloc((size_t)g->nops * sizeof *s->compute);
  s->chain = calloc((size_t)g->nprocs, sizeof *s->chain);
  if (!s->compute || !s->chain) return CDAG_NOMEM("simulator");
  for (int64_t i = 0; i < g->nops; i++) s->compute[i] = -1;
  for (int64_t k = 0; k < s->steps.ncomputes; k++) s->compute[s->steps.computes[k].op] = (int32_t)k;
  return CDAG_OK;
}

static int sim_run_graph_deps(const cdag_graph *g, sim_mem *m, uint64_t order_seed) {
  size_t n = (size_t)(g->nops ? g->nops : 1);
  sim_run s = {.g = g, .m = m, .rng = order_seed * 0x9e3779b97f4a7c15ULL | 1};
  s.partner = malloc(n * sizeof *s.partner);
  s.indeg = malloc(n * sizeof *s.indeg);
  s.ready = malloc(n * sizeof *s.ready);
  s.inflight = calloc(n, sizeof *s.inflight);
  int rc = s.partner && s.indeg && s.ready && s.inflight ? CDAG_OK : CDAG_NOMEM("simulator");
  if (rc == CDAG_OK) rc = sim_match(g, s.partner);
  if (rc == CDAG_OK) rc = computes_of(&s);
  if (rc == CDAG_OK) rc = event_loop(&s, order_seed);
  for (size_t i = 0; s.inflight && i < (size_t)g->nops; i++) free(s.inflight[i]);
  free(s.partner); free(s.indeg); free(s.ready); free(s.inflight);
  stage_steps_free(&s.steps);
  free(s.compute); free(s.chain);
  return rc;
}

int sim_run_graph(const cdag_graph *g, sim_mem *m, uint64_t order_seed) {
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "simulator: graph is not finalized");
  ir_deps_view v;
  int rc = ir_deps_view_open(g, &v);
  if (rc == CDAG_OK) rc = sim_run_graph_deps(v.g, m, order_seed);
  ir_deps_view_close(&v);
  return rc;
}

/* ---- SST tuples ---- */

static int copy_bytes(sim_mem *dst, const sim_mem *snap, int sr, uint64_t sa, int dr, uint64_t da, uint64_t len) {
  uint8_t *from = sim_mem_at((sim_mem *)snap, sr, sa, len), *to = sim_mem_at(dst, dr, da, len);
  if (!from || !to)
    return cdag__error(CDAG_ERR_ARG, "simulator: transfer rank %d 0x%llx -> rank %d 0x%llx (%llu bytes) is outside memory",
                       sr, (unsigned long long)sa, dr, (unsigned long long)da, (unsigned long long)len);
  memcpy(to, from, (size_t)len);
  return CDAG_OK;
}

/* Computes a reduction tuple from the snapshot into m. */
int sim_reduce_tuple(const df_sst *sst, const df_red *d, sim_mem *m, const sim_mem *snap) {
  uint64_t size = (uint64_t)ir_type_size(d->type), len = d->count * size;
  if (!sst || d->set < 0 || d->set >= sst->nsets || !size || !ir_rop_name(d->op) ||
      sst->sets[d->set].first < 0 || sst->sets[d->set].first + sst->sets[d->set].nruns > sst->nruns)
    return cdag__error(CDAG_ERR_PLAN, "simulator: reduction into rank %d 0x%llx has no valid set, type or op", d->dst,
                       (unsigned long long)d->dst_addr);
  uint8_t *acc = malloc((size_t)(len ? len : 1)), *to = sim_mem_at(m, d->dst, d->dst_addr, len);
  int first = 1, rc = CDAG_OK;
  if (!acc) return CDAG_NOMEM("simulator");
  const df_set *set = &sst->sets[d->set];
  for (int32_t i = 0; i < set->nruns && rc == CDAG_OK; i++) {
    const df_run *run = &sst->runs[set->first + i];
    for (int32_t r = run->lo; r <= run->hi && rc == CDAG_OK; r++)
      for (uint32_t k = 0; k < run->mult; k++) {
        const uint8_t *c = sim_mem_at((sim_mem *)snap, r, run->addr, len);
        if (!c) { rc = cdag__error(CDAG_ERR_ARG, "simulator: reduction source rank %d 0x%llx outside memory", r, (unsigned long long)run->addr); break; }
        if (first) memcpy(acc, c, (size_t)len);
        else ir_reduce_apply(d->type, d->op, c, acc, d->count);
        first = 0;
      }
  }
  if (rc == CDAG_OK && first) rc = cdag__error(CDAG_ERR_PLAN, "simulator: reduction into rank %d 0x%llx has no contributions", d->dst, (unsigned long long)d->dst_addr);
  if (rc == CDAG_OK && !to) rc = cdag__error(CDAG_ERR_ARG, "simulator: reduction target rank %d 0x%llx outside memory", d->dst, (unsigned long long)d->dst_addr);
  if (rc == CDAG_OK) memcpy(to, acc, (size_t)len);
  free(acc);
  return rc;
}

int sim_apply_sst(const df_sst *s, sim_mem *m) {
  sim_mem *snap;
  int rc = sim_mem_clone(m, &snap);
  for (int64_t i = 0; i < s->nxfers && rc == CDAG_OK; i++)   /* a strided transfer's blocks, each */
    for (uint64_t j = 0; j < df_xfer_blocks(&s->xfers[i]) && rc == CDAG_OK; j++) {
      df_xfer x = df_xfer_block(&s->xfers[i], j);
      rc = copy_bytes(m, snap, x.src, x.src_addr, x.dst, x.dst_addr, x.len);
    }
  for (int64_t i = 0; i < s->nreds && rc == CDAG_OK; i++) rc = sim_reduce_tuple(s, &s->reds[i], m, snap);
  sim_mem_free(snap);
  return rc;
}

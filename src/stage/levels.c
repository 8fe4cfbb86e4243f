/* cdag — src/stage/levels.c: the stage of every op of a graph that computes (stage.h's rules).
 *
 * The rules are constraints: lvl[op] >= lvl[p] + w for each dependency p -> op (w = 1 where a
 * stage must come between them: after a computation, or before an op where a stage starts;
 * else 0), lvl[recv] >= lvl[send], lvl[op] >= 0 for communication and -1 for a computation,
 * and the parts of one native collective at one level. The levels are the least solution.
 * Each collective's parts are contracted into one node (its first part stands for it); the
 * strongly connected components of what remains (Tarjan's, iteratively) are taken in
 * topological order, and each gets the largest of its members' floors and of its incoming
 * edges' source level + w. Components of several nodes occur where nonblocking collectives
 * on different communicators start in different orders on different ranks; an edge of
 * weight 1 inside one has no solution: collectives and computations that order each other
 * in a cycle (CDAG_ERR_UNSUPPORTED, naming an op of it). A fixed number of sweeps in the
 * match's order did this before and gave up on recordings of thousands of nonblocking
 * collectives (MPICH's coll/nonblocking3), each sweep raising one more collective.
 * Cost O(n + m + c log c) for n ops, m dependencies and c collective calls. */
#include <stdlib.h>

#include "stage/stage.h"

/* The k-th call of a rank on a communicator, for every member, is one collective: each
   call part gets the index of its collective's first part (coll[part]). O(c log c). */
typedef struct { int32_t comm, rank, k, part; } call_key;

static int by_comm_k(const void *x, const void *y) {
  const call_key *a = x, *b = y;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  if (a->k != b->k) return a->k < b->k ? -1 : 1;
  return (a->rank > b->rank) - (a->rank < b->rank);
}

static int by_comm_rank(const void *x, const void *y) {
  const call_key *a = x, *b = y;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return (a->k > b->k) - (a->k < b->k);   /* k: the part's position in program order */
}

static int collectives_of(const cdag_graph *g, int32_t *coll) {
  call_key *k = malloc((size_t)(g->ncalls ? g->ncalls : 1) * sizeof *k);
  if (!k) return CDAG_NOMEM("stages");
  for (int64_t c = 0; c < g->ncalls; c++) {
    int32_t op = g->calls[c].op;
    k[c] = (call_key){g->calls[c].comm, g->rank[op], g->pos[op], (int32_t)c};
  }
  base_sort(k, g->ncalls, sizeof *k, by_comm_rank);
  for (int64_t c = 0; c < g->ncalls; c++)   /* position -> the call's rank among the rank's calls */
    k[c].k = c > 0 && k[c - 1].comm == k[c].comm && k[c - 1].rank == k[c].rank ? k[c - 1].k + 1 : 0;
  base_sort(k, g->ncalls, sizeof *k, by_comm_k);
  for (int64_t c = 0, first = 0; c < g->ncalls; c++) {
    if (c == 0 || k[c].comm != k[c - 1].comm || k[c].k != k[c - 1].k) first = k[c].part;
    coll[k[c].part] = (int32_t)first;
  }
  free(k);
  return CDAG_OK;
}

/* The contracted graph: node = an op standing for itself or for its collective (rep), its
   out-edges in CSR with their weights. */
typedef struct {
  const cdag_graph *g;
  const match_result *m;
  int32_t *coll;          /* call -> its collective's first call; NULL without calls */
  uint8_t *cut;           /* per collective: a stage starts at it */
  int32_t *rep;           /* op -> the node it belongs to */
  int32_t *floor;         /* node -> the least level of its members */
  int64_t *head;          /* node -> first out-edge (n + 1) */
  int32_t *dst;
  uint8_t *w;
  int64_t nedges;
} cgraph;

static int32_t coll_of(const cgraph *c, int32_t op) {
  return c->coll && c->g->call[op] >= 0 ? c->coll[c->g->call[op]] : -1;
}

/* The weight of dependency p -> op (stage.h: a stage after a computation, or after every
   predecessor outside its own collective where one must start; a computation after its
   predecessors' stage). */
static uint8_t weight(const cgraph *c, int32_t p, int32_t op) {
  const cdag_graph *g = c->g;
  if (ir_is_compute(g, op)) return 0;
  if (ir_is_compute(g, p)) return 1;
  int32_t mine = coll_of(c, op);
  if (ir_cuts(g, op) == IR_CUT_DELIVERED && mine < 0)   /* local work reading delivered bytes stays together */
    return g->kind[p] != IR_REDUCE && g->kind[p] != IR_COPY;
  int cut = ir_cuts(g, op) || (mine >= 0 && c->cut[mine]);
  return cut && (mine < 0 || coll_of(c, p) != mine);
}

/* Calls f(c, from, to, w) for every edge of the contracted graph (self-loops included). */
#define FOR_EDGES(c, BODY)                                                                  \
  for (int32_t op_ = 0; op_ < (c)->g->nops; op_++) {                                       \
    int32_t to = (c)->rep[op_];                                                            \
    for (int32_t e_ = (c)->g->pred_start[op_]; e_ < (c)->g->pred_start[op_ + 1]; e_++) {   \
      int32_t p_ = (c)->g->pred[e_], from = (c)->rep[p_];                                  \
      uint8_t w = weight((c), p_, op_);                                                    \
      BODY                                                                                 \
    }                                                                                      \
    int32_t s_ = (c)->g->kind[op_] == IR_RECV ? (c)->m->partner[op_] : -1;                 \
    if (s_ >= 0) {                                                                         \
      int32_t from = (c)->rep[s_];                                                         \
      uint8_t w = 0;                                                                       \
      BODY                                                                                 \
    }                                                                                      \
  }

static int build(cgraph *c) {
  const cdag_graph *g = c->g;
  int32_t n = (int32_t)g->nops;
  size_t sz = (size_t)(n ? n : 1);
  c->rep = malloc(sz * sizeof *c->rep);
  c->floor = malloc(sz * sizeof *c->floor);
  c->head = calloc(sz + 1, sizeof *c->head);
  if (!c->rep || !c->floor || !c->head) return CDAG_NOMEM("stages");
  for (int32_t op = 0; op < n; op++) {
    int32_t k = coll_of(c, op);
    c->rep[op] = k >= 0 ? g->calls[k].op : op;
    c->floor[op] = -1;
  }
  for (int32_t op = 0; op < n; op++) {
    int32_t f = ir_is_compute(g, op) ? -1 : 0;
    if (f > c->floor[c->rep[op]]) c->floor[c->rep[op]] = f;
  }
  FOR_EDGES(c, { (void)w; (void)to; c->head[from + 1]++; })
  for (int32_t v = 0; v < n; v++) c->head[v + 1] += c->head[v];
  c->nedges = c->head[n];
  c->dst = malloc((size_t)(c->nedges ? c->nedges : 1) * sizeof *c->dst);
  c->w = malloc((size_t)(c->nedges ? c->nedges : 1));
  int64_t *at = malloc(sz * sizeof *at);
  if (!c->dst || !c->w || !at) {
    free(at);
    return CDAG_NOMEM("stages");
  }
  for (int32_t v = 0; v < n; v++) at[v] = c->head[v];
  FOR_EDGES(c, {
    c->dst[at[from]] = to;
    c->w[at[from]++] = w;
  })
  free(at);
  return CDAG_OK;
}

/* Tarjan's components, iteratively: comp[v] for every node (rep[v] == v), numbered in the
   order they complete (sinks first); members[] lists the nodes component by component,
   cstart[k] .. cstart[k + 1]. */
typedef struct {
  int32_t *comp, *members, *cstart, ncomps;
} comps;

static int tarjan(const cgraph *c, comps *out) {
  int32_t n = (int32_t)c->g->nops;
  size_t sz = (size_t)(n ? n : 1);
  int32_t *index = malloc(sz * sizeof *index), *low = malloc(sz * sizeof *low), *stack = malloc(sz * sizeof *stack);
  int32_t *call = malloc(sz * sizeof *call);
  int64_t *edge = malloc(sz * sizeof *edge);
  uint8_t *on = calloc(sz, 1);
  out->comp = malloc(sz * sizeof *out->comp);
  out->members = malloc(sz * sizeof *out->members);
  out->cstart = malloc((sz + 1) * sizeof *out->cstart);
  int rc = index && low && stack && call && edge && on && out->comp && out->members && out->cstart ? CDAG_OK
                                                                                                    : CDAG_NOMEM("stages");
  int32_t next = 0, sp = 0, nm = 0;
  out->ncomps = 0;
  for (int32_t v = 0; v < n && rc == CDAG_OK; v++) index[v] = -1;
  for (int32_t root = 0; root < n && rc == CDAG_OK; root++) {
    if (c->rep[root] != root || index[root] >= 0) continue;
    int32_t depth = 0;
    call[0] = root;
    index[root] = low[root] = next++;
    edge[root] = c->head[root];
    stack[sp++] = root, on[root] = 1;
    while (depth >= 0) {
      int32_t v = call[depth];
      if (edge[v] < c->head[v + 1]) {
        int32_t u = c->dst[edge[v]++];
        if (index[u] < 0) {
          index[u] = low[u] = next++;
          edge[u] = c->head[u];
          stack[sp++] = u, on[u] = 1;
          call[++depth] = u;
        } else if (on[u] && index[u] < low[v]) {
          low[v] = index[u];
        }
        continue;
      }
      if (low[v] == index[v]) {   /* v roots a component: pop it */
        out->cstart[out->ncomps] = nm;
        int32_t u;
        do {
          u = stack[--sp];
          on[u] = 0;
          out->comp[u] = out->ncomps;
          out->members[nm++] = u;
        } while (u != v);
        out->ncomps++;
      }
      if (--depth >= 0 && low[v] < low[call[depth]]) low[call[depth]] = low[v];
    }
  }
  if (rc == CDAG_OK) out->cstart[out->ncomps] = nm;
  free(index); free(low); free(stack); free(call); free(edge); free(on);
  return rc;
}

/* Levels of the components in topological order (the reverse of their completion). */
static int assign(const cgraph *c, const comps *k, int32_t *lvl) {
  int32_t *level = malloc((size_t)(k->ncomps ? k->ncomps : 1) * sizeof *level);
  if (!level) return CDAG_NOMEM("stages");
  for (int32_t i = 0; i < k->ncomps; i++) level[i] = INT32_MIN;
  int rc = CDAG_OK;
  for (int32_t i = k->ncomps - 1; i >= 0 && rc == CDAG_OK; i--) {
    for (int32_t j = k->cstart[i]; j < k->cstart[i + 1]; j++)
      if (c->floor[k->members[j]] > level[i]) level[i] = c->floor[k->members[j]];
    for (int32_t j = k->cstart[i]; j < k->cstart[i + 1] && rc == CDAG_OK; j++) {
      int32_t v = k->members[j];
      for (int64_t e = c->head[v]; e < c->head[v + 1]; e++) {
        int32_t t = k->comp[c->dst[e]];
        if (t != i) {
          if (level[i] + c->w[e] > level[t]) level[t] = level[i] + c->w[e];
        } else if (c->w[e]) {
          char at[96];
          rc = cdag__error(CDAG_ERR_UNSUPPORTED, "stages: native collectives and computations order each other in a "
                           "cycle (a stage must come between them both ways), e.g. at %s",
                           ir_describe(c->g, v, at, (int)sizeof at));
          break;
        }
      }
    }
  }
  for (int32_t op = 0; op < c->g->nops && rc == CDAG_OK; op++) lvl[op] = level[k->comp[c->rep[op]]];
  free(level);
  return rc;
}

int stage_levels(const cdag_graph *g, const match_result *m, int32_t *lvl) {
  cgraph c = {.g = g, .m = m};
  comps k = {0};
  int rc = CDAG_OK;
  if (g->call && g->ncalls > 0) {
    c.coll = malloc((size_t)g->ncalls * sizeof *c.coll);
    c.cut = calloc((size_t)g->ncalls, 1);
    rc = c.coll && c.cut ? collectives_of(g, c.coll) : CDAG_NOMEM("stages");
    for (int64_t op = 0; rc == CDAG_OK && op < g->nops; op++)
      if (ir_cuts(g, op) && g->call[op] >= 0) c.cut[c.coll[g->call[op]]] = 1;
  }
  if (rc == CDAG_OK) rc = build(&c);
  if (rc == CDAG_OK) rc = tarjan(&c, &k);
  if (rc == CDAG_OK) rc = assign(&c, &k, lvl);
  free(c.coll); free(c.cut); free(c.rep); free(c.floor); free(c.head); free(c.dst); free(c.w);
  free(k.comp); free(k.members); free(k.cstart);
  return rc;
}

/* cdag — src/match/match.c: pairing sends with receives, and deadlock detection.
 *
 * Matching: every send and receive joins the queue of its channel (source, dest, tag),
 * found through three nested JudyL maps, in its rank's program order; the k-th send of a
 * channel pairs with its k-th receive (MPI's non-overtaking rule). O(n log n).
 * Ordering: a matched pair completes as one event (both ops must be ready), so the pair is
 * contracted into one node and Kahn's algorithm orders the nodes; what is left over lies on
 * or behind a cycle, which is then walked backwards to name its ops. O(n + m). */
#include <Judy.h>
#include <stdlib.h>
#include <string.h>

#include "match/match.h"

/* Channel queues as linked lists through next[] (no per-op allocation). */
typedef struct {
  int32_t *shead, *stail, *rhead, *rtail;
  int64_t n, cap;
} channels;

static int channel_new(channels *c, int32_t *id) {
  if (c->n == c->cap) {
    int64_t cap = c->cap ? c->cap * 2 : 1024;
    int32_t **arrs[4] = {&c->shead, &c->stail, &c->rhead, &c->rtail};
    for (int i = 0; i < 4; i++) {
      int32_t *p = realloc(*arrs[i], (size_t)cap * sizeof **arrs[i]);
      if (!p) return CDAG_NOMEM("channels");
      *arrs[i] = p;
    }
    c->cap = cap;
  }
  *id = (int32_t)c->n;
  c->shead[c->n] = c->stail[c->n] = c->rhead[c->n] = c->rtail[c->n] = -1;
  c->n++;
  return CDAG_OK;
}

/* Finds or creates the channel (src, dst, tag) in the nested maps. */
static int channel_of(Pvoid_t *map, channels *c, int32_t src, int32_t dst, int32_t tag, int32_t *id) {
  PWord_t l1 = (PWord_t)JudyLIns(map, (Word_t)src, PJE0);
  if (l1 == PJERR) return CDAG_NOMEM("channels");
  PWord_t l2 = (PWord_t)JudyLIns((PPvoid_t)l1, (Word_t)dst, PJE0);
  if (l2 == PJERR) return CDAG_NOMEM("channels");
  PWord_t l3 = (PWord_t)JudyLIns((PPvoid_t)l2, (Word_t)tag, PJE0);
  if (l3 == PJERR) return CDAG_NOMEM("channels");
  if (*l3 == 0) {
    int rc = channel_new(c, id);
    if (rc) return rc;
    *l3 = (Word_t)*id + 1;
  }
  *id = (int32_t)(*l3 - 1);
  return CDAG_OK;
}

static void free_maps(Pvoid_t map) {
  Word_t src = 0, dst, freed;
  PWord_t l1 = (PWord_t)JudyLFirst(map, &src, PJE0);
  while (l1) {
    dst = 0;
    PWord_t l2 = (PWord_t)JudyLFirst((Pvoid_t)*l1, &dst, PJE0);
    while (l2) {
      JLFA(freed, *(PPvoid_t)l2);
      l2 = (PWord_t)JudyLNext((Pvoid_t)*l1, &dst, PJE0);
    }
    JLFA(freed, *(PPvoid_t)l1);
    l1 = (PWord_t)JudyLNext(map, &src, PJE0);
  }
  JLFA(freed, map);
  (void)freed;
}

static void enqueue(int32_t *head, int32_t *tail, int32_t *next, int32_t op) {
  next[op] = -1;
  if (*tail >= 0) next[*tail] = op;
  else *head = op;
  *tail = op;
}

static int unmatched(const cdag_graph *g, int32_t op) {
  char d[200];
  int send = g->kind[op] == IR_SEND;
  return cdag__error(CDAG_ERR_UNMATCHED, "%s: %s %llu bytes %s rank %d tag %d has no matching %s",
                     ir_describe(g, op, d, sizeof d), send ? "send of" : "receive of",
                     (unsigned long long)g->bytes[op], send ? "to" : "from", g->peer[op], g->tag[op],
                     send ? "receive" : "send");
}

/* Pairs the queues of every channel; reports the first leftover or truncation. */
static int pair_channels(const cdag_graph *g, const channels *c, const int32_t *next, int32_t *partner) {
  for (int64_t ch = 0; ch < c->n; ch++) {
    int32_t s = c->shead[ch], r = c->rhead[ch];
    for (; s >= 0 && r >= 0; s = next[s], r = next[r]) {
      if (g->bytes[r] < g->bytes[s]) {
        char ds[200], dr[200];
        return cdag__error(CDAG_ERR_TRUNCATE, "%s receives %llu bytes but its matched send %s sends %llu",
                           ir_describe(g, r, dr, sizeof dr), (unsigned long long)g->bytes[r],
                           ir_describe(g, s, ds, sizeof ds), (unsigned long long)g->bytes[s]);
      }
      partner[s] = r;
      partner[r] = s;
    }
    if (s >= 0) return unmatched(g, s);
    if (r >= 0) return unmatched(g, r);
  }
  return CDAG_OK;
}

static int match_pairs(const cdag_graph *g, int32_t *partner, int32_t *next) {
  Pvoid_t map = NULL;
  channels c = {0};
  int rc = CDAG_OK;
  for (int64_t i = 0; i < g->nops && rc == CDAG_OK; i++) {
    int32_t op = g->rank_ops[i], id;
    partner[op] = -1;
    if (g->kind[op] == IR_SEND) {
      if ((rc = channel_of(&map, &c, g->rank[op], g->peer[op], g->tag[op], &id))) break;
      enqueue(&c.shead[id], &c.stail[id], next, op);
    } else if (g->kind[op] == IR_RECV) {
      if ((rc = channel_of(&map, &c, g->peer[op], g->rank[op], g->tag[op], &id))) break;
      enqueue(&c.rhead[id], &c.rtail[id], next, op);
    }
  }
  if (rc == CDAG_OK) rc = pair_channels(g, &c, next, partner);
  free_maps(map);
  free(c.shead); free(c.stail); free(c.rhead); free(c.rtail);
  return rc;
}

/* The node of an op: a matched pair is represented by its send. */
static int32_t node_of(const cdag_graph *g, const int32_t *partner, int32_t op) {
  return g->kind[op] == IR_RECV ? partner[op] : op;
}

/* Counts each node's predecessors outside the node. A send that depends on its own
   receive (a send to self whose buffer the receive writes first) can never proceed. */
static int count_indegrees(const cdag_graph *g, const int32_t *partner, int32_t *indeg) {
  memset(indeg, 0, (size_t)g->nops * sizeof *indeg);
  for (int64_t op = 0; op < g->nops; op++) {
    int32_t node = node_of(g, partner, (int32_t)op);
    for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1]; k++) {
      int32_t p = g->pred[k];
      if (p == partner[op]) {
        if (g->kind[op] == IR_SEND) {
          char d[200];
          return cdag__error(CDAG_ERR_CYCLE, "deadlock: %s to itself depends on its own matching receive",
                             ir_describe(g, (int32_t)op, d, sizeof d));
        }
        continue;
      }
      indeg[node]++;
    }
  }
  return CDAG_OK;
}

static void release_succs(const cdag_graph *g, const int32_t *partner, int32_t op, int32_t *indeg,
                          int32_t *queue, int64_t *qtail) {
  for (int32_t k = g->succ_start[op]; k < g->succ_start[op + 1]; k++) {
    int32_t x = g->succ[k];
    if (x == partner[op]) continue;
    int32_t node = node_of(g, partner, x);
    if (--indeg[node] == 0) queue[(*qtail)++] = node;
  }
}

/* Walks predecessors of unfinished nodes until one repeats, and names the ops of that
   cycle (the path is recorded, so this is O(n + m)). */
static int report_cycle(const cdag_graph *g, const int32_t *partner, const int32_t *indeg, int32_t *mark) {
  int32_t *path = malloc((size_t)g->nops * sizeof *path);
  if (!path) return CDAG_NOMEM("cycle report");
  int32_t v = -1, step = 0;
  for (int64_t op = 0; op < g->nops && v < 0; op++)
    if (indeg[node_of(g, partner, (int32_t)op)] > 0) v = node_of(g, partner, (int32_t)op);
  memset(mark, 0xff, (size_t)g->nops * sizeof *mark);
  while (mark[v] < 0) {
    mark[v] = step;
    path[step++] = v;
    int32_t next = -1;
    for (int side = 0; side < 2 && next < 0; side++) {
      int32_t op = side == 0 ? v : partner[v];
      if (op < 0) continue;
      for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1] && next < 0; k++) {
        int32_t p = g->pred[k];
        if (p != partner[op] && indeg[node_of(g, partner, p)] > 0) next = node_of(g, partner, p);
      }
    }
    v = next;
  }
  char msg[900], d[200];
  int n = snprintf(msg, sizeof msg, "deadlock: dependencies and matches form a cycle:");
  int32_t len = step - mark[v];
  for (int32_t i = 0; i < len && i < 6 && n < (int)sizeof msg; i++) {
    int32_t u = path[mark[v] + i];
    n += snprintf(msg + n, sizeof msg - (size_t)n, "%s %s", i ? " waits for" : "", ir_describe(g, u, d, sizeof d));
    if (partner[u] >= 0 && n < (int)sizeof msg)
      n += snprintf(msg + n, sizeof msg - (size_t)n, " matched with %s", ir_describe(g, partner[u], d, sizeof d));
  }
  if (len > 6 && n < (int)sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, " ... (%d ops on the cycle)", len);
  free(path);
  return cdag__error(CDAG_ERR_CYCLE, "%s", msg);
}

static int order_nodes(const cdag_graph *g, const int32_t *partner, int32_t *order, int32_t *indeg) {
  int rc = count_indegrees(g, partner, indeg);
  if (rc) return rc;
  int32_t *queue = malloc((size_t)(g->nops ? g->nops : 1) * sizeof *queue);
  if (!queue) return CDAG_NOMEM("match order");
  int64_t qhead = 0, qtail = 0, nout = 0;
  for (int64_t op = 0; op < g->nops; op++)
    if (node_of(g, partner, (int32_t)op) == op && indeg[op] == 0) queue[qtail++] = (int32_t)op;
  while (qhead < qtail) {
    int32_t v = queue[qhead++];
    order[nout++] = v;
    if (partner[v] >= 0) order[nout++] = partner[v];
    release_succs(g, partner, v, indeg, queue, &qtail);
    if (partner[v] >= 0) release_succs(g, partner, partner[v], indeg, queue, &qtail);
  }
  if (nout < g->nops) rc = report_cycle(g, partner, indeg, queue);
  free(queue);
  return rc;
}

int match_run(const cdag_graph *g, match_result *m) {
  if (!g || !m) return cdag__error(CDAG_ERR_ARG, "match_run: NULL argument");
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "match_run: graph is not finalized");
  memset(m, 0, sizeof *m);
  int64_t n = g->nops ? g->nops : 1;
  m->nops = g->nops;
  m->partner = malloc((size_t)n * sizeof *m->partner);
  m->order = malloc((size_t)n * sizeof *m->order);
  int32_t *scratch = malloc((size_t)n * sizeof *scratch);
  int rc;
  if (!m->partner || !m->order || !scratch) {
    rc = CDAG_NOMEM("matching");
  } else {
    rc = match_pairs(g, m->partner, scratch);
    if (rc == CDAG_OK) rc = order_nodes(g, m->partner, m->order, scratch);
  }
  free(scratch);
  if (rc) match_free(m);
  return rc;
}

void match_free(match_result *m) {
  if (!m) return;
  free(m->partner);
  free(m->order);
  m->partner = m->order = NULL;
}

/* cdag — src/match/match.c: pairing sends with receives, and deadlock detection.
 *
 * Matching: every send and receive joins the queue of its channel (source, dest, tag),
 * found in one JudyL keyed by the packed triple, in its rank's program order; the k-th
 * send of a channel pairs with its k-th receive (MPI's non-overtaking rule). O(n log n).
 * Ordering: Kahn's algorithm over dependencies plus one edge from each send to its receive
 * (a send completes when its own dependencies are met, its data taken at that moment, as
 * with MPI's buffered sends and GOAL's eager messages), scanning ops by id so the order
 * stays close to id order; what is left over lies on or behind a cycle, which is then
 * walked backwards to name its ops. O(n + m). */
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

/* Channel keys: src * nprocs + dst, times (max tag + 1) plus the tag when that fits in a
   word (one JudyL, the usual case); otherwise a second JudyL level per (src, dst) keyed
   by tag. */
typedef struct {
  Pvoid_t map;
  uint64_t nprocs, ntags;   /* ntags 0: two levels */
} chan_map;

static void chan_map_init(chan_map *cm, const cdag_graph *g) {
  uint64_t maxtag = 0;
  for (int64_t op = 0; op < g->nops; op++)
    if ((g->kind[op] == IR_SEND || g->kind[op] == IR_RECV) && (uint64_t)g->tag[op] > maxtag) maxtag = (uint64_t)g->tag[op];
  cm->map = NULL;
  cm->nprocs = (uint64_t)g->nprocs;
  uint64_t pairs = cm->nprocs * cm->nprocs;   /* < 2^62 */
  cm->ntags = maxtag + 1 <= UINT64_MAX / (pairs ? pairs : 1) ? maxtag + 1 : 0;
}

/* Finds or creates the channel (src, dst, tag). */
static int channel_of(chan_map *cm, channels *c, int32_t src, int32_t dst, int32_t tag, int32_t *id) {
  Word_t key = (Word_t)src * cm->nprocs + (Word_t)dst;
  PWord_t slot;
  if (cm->ntags) {
    slot = (PWord_t)JudyLIns(&cm->map, key * cm->ntags + (Word_t)tag, PJE0);
  } else {
    PWord_t l1 = (PWord_t)JudyLIns(&cm->map, key, PJE0);
    slot = l1 == PJERR ? l1 : (PWord_t)JudyLIns((PPvoid_t)l1, (Word_t)tag, PJE0);
  }
  if (slot == PJERR) return CDAG_NOMEM("channels");
  if (*slot == 0) {
    int rc = channel_new(c, id);
    if (rc) return rc;
    *slot = (Word_t)*id + 1;
  }
  *id = (int32_t)(*slot - 1);
  return CDAG_OK;
}

static void chan_map_free(chan_map *cm) {
  Word_t key = 0, freed;
  if (!cm->ntags)
    for (PWord_t l1 = (PWord_t)JudyLFirst(cm->map, &key, PJE0); l1; l1 = (PWord_t)JudyLNext(cm->map, &key, PJE0))
      JLFA(freed, *(PPvoid_t)l1);
  JLFA(freed, cm->map);
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
  chan_map cm;
  chan_map_init(&cm, g);
  channels c = {0};
  int rc = CDAG_OK;
  for (int64_t i = 0; i < g->nops && rc == CDAG_OK; i++) {
    int32_t op = g->rank_ops[i], id;
    partner[op] = -1;
    if (g->kind[op] == IR_SEND) {
      if ((rc = channel_of(&cm, &c, g->rank[op], g->peer[op], g->tag[op], &id))) break;
      enqueue(&c.shead[id], &c.stail[id], next, op);
    } else if (g->kind[op] == IR_RECV) {
      if ((rc = channel_of(&cm, &c, g->peer[op], g->rank[op], g->tag[op], &id))) break;
      enqueue(&c.rhead[id], &c.rtail[id], next, op);
    }
  }
  if (rc == CDAG_OK) rc = pair_channels(g, &c, next, partner);
  chan_map_free(&cm);
  free(c.shead); free(c.stail); free(c.rhead); free(c.rtail);
  return rc;
}

/* Predecessors of op in D ∪ M: its dependencies, and for a receive its matched send. */
static int32_t npreds(const cdag_graph *g, const int32_t *partner, int32_t op) {
  return g->pred_start[op + 1] - g->pred_start[op] + (g->kind[op] == IR_RECV);
}

static int32_t pred_at(const cdag_graph *g, const int32_t *partner, int32_t op, int32_t k) {
  int32_t nd = g->pred_start[op + 1] - g->pred_start[op];
  return k < nd ? g->pred[g->pred_start[op] + k] : partner[op];
}

/* Walks predecessors of ops that never ran until one repeats, and names the ops of that
   cycle (the path is recorded, so this is O(n + m)). */
static int report_cycle(const cdag_graph *g, const int32_t *partner, const int32_t *indeg, int32_t *mark) {
  int32_t *path = malloc((size_t)g->nops * sizeof *path);
  if (!path) return CDAG_NOMEM("cycle report");
  int32_t v = -1, step = 0;
  for (int64_t op = 0; op < g->nops && v < 0; op++)
    if (indeg[op] > 0) v = (int32_t)op;
  memset(mark, 0xff, (size_t)g->nops * sizeof *mark);
  while (mark[v] < 0) {
    mark[v] = step;
    path[step++] = v;
    int32_t next = -1;
    for (int32_t k = 0; k < npreds(g, partner, v) && next < 0; k++) {
      int32_t u = pred_at(g, partner, v, k);
      if (indeg[u] > 0) next = u;
    }
    v = next;
  }
  char msg[900], d[200];
  int n = snprintf(msg, sizeof msg, "deadlock: dependencies and matches form a cycle:");
  int32_t len = step - mark[v];
  for (int32_t i = 0; i < len && i < 8 && n < (int)sizeof msg; i++) {
    int32_t u = path[mark[v] + i];
    const char *how = g->kind[u] == IR_RECV && i + 1 < len && path[mark[v] + i + 1] == partner[u] ? " matches" : " waits for";
    n += snprintf(msg + n, sizeof msg - (size_t)n, " %s%s", ir_describe(g, u, d, sizeof d), i + 1 < len ? how : "");
  }
  if (len > 8 && n < (int)sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, " ... (%d ops on the cycle)", len);
  free(path);
  return cdag__error(CDAG_ERR_CYCLE, "%s", msg);
}

/* Marks v run: appends it to the order and releases its successors. A successor that
   becomes ready and lies behind the scan position `scan` goes on the stack (kept at the
   back of order: ran + stacked ops never exceed n); one ahead is left for the scan. */
typedef struct {
  const cdag_graph *g;
  const int32_t *partner;
  int32_t *order, *indeg;
  int64_t n, ran, stacked, scan;
} orderer;

static void push_ready(orderer *o, int32_t w) {
  if (w < o->scan) o->order[o->n - 1 - o->stacked++] = w;
}

static void run_op(orderer *o, int32_t v) {
  const cdag_graph *g = o->g;
  o->order[o->ran++] = v;
  o->indeg[v] = -1;
  for (int32_t k = g->succ_start[v]; k < g->succ_start[v + 1]; k++)
    if (--o->indeg[g->succ[k]] == 0) push_ready(o, g->succ[k]);
}

/* Runs v and everything that becomes ready behind the scan because of it. A receive runs
   right after its send when it can: dataflow then needs no buffer for the message. */
static void run_from(orderer *o, int32_t v) {
  o->order[o->n - 1 - o->stacked++] = v;
  while (o->stacked > 0) {
    int32_t u = o->order[o->n - o->stacked--];
    if (o->indeg[u] != 0) continue; /* already run (pushed, then run as a receive) */
    run_op(o, u);
    if (o->g->kind[u] != IR_SEND) continue;
    int32_t r = o->partner[u];
    if (--o->indeg[r] == 0) run_op(o, r);
  }
}

/* Kahn's algorithm over D ∪ M (a send precedes its receive), scanning ops by id and
   running each as soon as it is ready: graphs are built roughly in dependency order, so
   the order mostly follows op ids and the passes that walk it touch memory nearly
   sequentially (a FIFO queue would hop across the whole graph level by level). O(n + m).
   Ops left over lie on or behind a cycle. */
static int order_ops(const cdag_graph *g, const int32_t *partner, int32_t *order, int32_t *indeg) {
  orderer o = {.g = g, .partner = partner, .order = order, .indeg = indeg, .n = g->nops};
  for (int64_t op = 0; op < g->nops; op++) indeg[op] = npreds(g, partner, (int32_t)op);
  for (o.scan = 0; o.scan < g->nops; o.scan++)
    if (indeg[o.scan] == 0) run_from(&o, (int32_t)o.scan);
  if (o.ran == g->nops) return CDAG_OK;
  return report_cycle(g, partner, indeg, order);
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
    if (rc == CDAG_OK) rc = order_ops(g, m->partner, m->order, scratch);
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

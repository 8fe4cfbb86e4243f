/* cdag — src/match/match.c: pairing sends with receives, and deadlock detection.
 *
 * Matching: sends and receives are bucketed by the receiving rank (a counting sort that
 * keeps program order), each bucket sorted by (source, tag); the k-th send of a channel
 * (source, dest, tag) pairs with its k-th receive (MPI's non-overtaking rule). O(n log n).
 * The sort and the rule (match_sort_ends, match_pair_ends) are the recorder's merger's too.
 * Ordering: Kahn's algorithm over dependencies plus one edge from each send to its receive
 * (a send completes when its own dependencies are met, its data taken at that moment, as
 * with MPI's buffered sends and GOAL's eager messages), scanning ops by id so the order
 * stays close to id order (an op freed behind the scan, far from the op that freed it,
 * waits for a later scan), and holding a send back until its receive can follow it; what
 * is left over lies on or behind a cycle, which is then walked backwards to name its ops.
 * O(n + m). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match/match.h"

/* Matching by destination buckets: a counting sort puts a record of every send and receive
   in the bucket of the rank that receives; each bucket is then sorted by (source, tag, send
   before receive, position in program order), so a channel's sends and receives lie side by
   side in program order, and the k-th of each pair up. Buckets are small for the patterns
   that occur (2 log2 p for recursive doubling; a gather's root holds p) and nearly sorted
   already (base_sort: insertion sort up to 96 entries). O(n log n) worst case, 16 bytes
   per send or receive and 4 per rank, and O(1) random accesses per op (a JudyL of channels
   cost several). */
typedef match_end chan_entry;   /* op: the entry's id */

static int entry_cmp(const void *x, const void *y) {
  const chan_entry *a = x, *b = y;
  if (a->src != b->src) return a->src < b->src ? -1 : 1;
  if (a->tag != b->tag) return a->tag < b->tag ? -1 : 1;
  return (a->key > b->key) - (a->key < b->key);
}

static int entry_less(const chan_entry *a, const chan_entry *b) {
  if (a->src != b->src) return a->src < b->src;
  if (a->tag != b->tag) return a->tag < b->tag;
  return a->key < b->key;
}

/* Merges the sorted runs e[at[k] .. at[k + 1]) pairwise into out; returns the new number
   of runs, at[] updated. */
static int64_t merge_runs(const chan_entry *e, chan_entry *out, int64_t *at, int64_t nruns) {
  int64_t m = 0;
  for (int64_t k = 0; k < nruns; k += 2) {
    int64_t i = at[k], mid = at[k + 1], j = mid, hi = k + 2 <= nruns ? at[k + 2] : mid, o = i;
    while (i < mid && j < hi) out[o++] = entry_less(&e[j], &e[i]) ? e[j++] : e[i++];
    while (i < mid) out[o++] = e[i++];
    while (j < hi) out[o++] = e[j++];
    at[m++] = at[k];
  }
  at[m] = at[nruns];
  return m;
}

/* Sorts a bucket by entry_cmp (its entries differ: a rank's program positions do). A large
   bucket is a few runs, as its records were written in id order: the sends of each source
   in program order, source after source, and the receiving rank's receives in its own
   order, runs that ascend or descend by source. Runs are found (descending ones reversed)
   and merged pairwise, ping-ponging with tmp: O(n log runs), no comparator calls (qsort's
   were 4% of cdag model on an alltoall of 1024 ranks, whose buckets hold 2046 records). */
void match_sort_ends(match_end *e, int64_t n, match_end *tmp, int64_t *at) {
  if (n <= 96) {
    base_sort(e, n, sizeof *e, entry_cmp);
    return;
  }
  int64_t nruns = 0;
  for (int64_t i = 0, j; i < n; i = j) {
    j = i + 1;
    if (j < n && entry_less(&e[j], &e[i])) {   /* descending: reversed in place */
      while (j + 1 < n && entry_less(&e[j + 1], &e[j])) j++;
      for (int64_t a = i, b = j; a < b; a++, b--) {
        chan_entry x = e[a];
        e[a] = e[b];
        e[b] = x;
      }
      j++;
    } else {
      while (j < n && !entry_less(&e[j], &e[j - 1])) j++;
    }
    at[nruns++] = i;
  }
  at[nruns] = n;
  chan_entry *from = e, *to = tmp;
  while (nruns > 1) {
    nruns = merge_runs(from, to, at, nruns);
    chan_entry *x = from;
    from = to;
    to = x;
  }
  if (from != e) memcpy(e, from, (size_t)n * sizeof *e);
}

/* A near miss for an unmatched op x of channel (src, tag) in the bucket e[0..n) of the
   receiving rank, into hint: an op of the other kind between the same ranks, unmatched
   under another tag; or, for a send, the channel's own receives, taken by earlier sends,
   the last smaller than x; else an op of the other kind with x's tag, unmatched, of another
   peer (a wrong source or destination). Empty if none. Error path only: O(bucket). */
static void near_miss(const cdag_graph *g, const chan_entry *e, int64_t n, int32_t x, char *hint, size_t size) {
  int send = g->kind[x] == IR_SEND;
  int32_t src = send ? g->rank[x] : g->peer[x];
  char d[200];
  int32_t alt = -1;   /* the other kind, x's tag, another peer, unmatched */
  hint[0] = 0;
  for (int64_t i = 0, j; i < n; i = j) {
    int64_t ns = 0, nr = 0;
    for (j = i; j < n && e[j].src == e[i].src && e[j].tag == e[i].tag; j++)
      if (e[j].key >> 31) nr++;
      else ns++;
    if (e[i].src != src && e[i].tag == g->tag[x] && alt < 0 && (send ? nr > ns : ns > nr))
      alt = e[i + (send ? 2 * ns : nr)].op;
    if (e[i].src != src) continue;
    if (e[i].tag != g->tag[x] && (send ? nr > ns : ns > nr)) {
      int32_t other = e[i + (send ? 2 * ns : nr)].op;
      snprintf(hint, size, " (near miss: %s, %s %s rank %d with tag %d, has no match either)",
               ir_describe(g, other, d, sizeof d), send ? "a receive" : "a send", send ? "from" : "to",
               send ? src : g->rank[x], e[i].tag);
      return;
    }
    if (send && e[i].tag == g->tag[x] && nr > 0 && g->bytes[e[i + ns + nr - 1].op] < g->bytes[x])
      snprintf(hint, size, " (near miss: %s receives %llu bytes with this tag, and matches an earlier send)",
               ir_describe(g, e[i + ns + nr - 1].op, d, sizeof d), (unsigned long long)g->bytes[e[i + ns + nr - 1].op]);
  }
  if (!hint[0] && alt >= 0)
    snprintf(hint, size, " (near miss: %s, %s %s rank %d with this tag, has no match either)", ir_describe(g, alt, d, sizeof d),
             send ? "a receive" : "a send", send ? "from" : "to", send ? g->peer[alt] : g->rank[x]);
}

static int unmatched(const cdag_graph *g, const chan_entry *e, int64_t n, int32_t op) {
  char d[200], hint[480];
  int send = g->kind[op] == IR_SEND;
  near_miss(g, e, n, op, hint, sizeof hint);
  return cdag__error(CDAG_ERR_UNMATCHED, "%s: %s %llu bytes %s rank %d tag %d has no matching %s%s",
                     ir_describe(g, op, d, sizeof d), send ? "send of" : "receive of",
                     (unsigned long long)g->bytes[op], send ? "to" : "from", g->peer[op], g->tag[op],
                     send ? "receive" : "send", hint);
}

static int truncated(const cdag_graph *g, int32_t s, int32_t r) {
  char ds[200], dr[200];
  return cdag__error(CDAG_ERR_TRUNCATE, "%s receives %llu bytes but its matched send %s sends %llu",
                     ir_describe(g, r, dr, sizeof dr), (unsigned long long)g->bytes[r],
                     ir_describe(g, s, ds, sizeof ds), (unsigned long long)g->bytes[s]);
}

/* The rule: channel by channel, the k-th send pairs with the k-th receive; the ends beyond
   the shorter side have no partner. */
int match_pair_ends(const match_end *e, int64_t n, match_pair_fn fn, void *ctx) {
  int rc = 0;
  for (int64_t i = 0; i < n && !rc;) {
    int64_t ns = 0, nr = 0, j = i;
    for (; j < n && e[j].src == e[i].src && e[j].tag == e[i].tag; j++)
      if (e[j].key >> 31) nr++;
      else ns++;
    for (int64_t k = 0; k < ns && k < nr && !rc; k++) rc = fn(ctx, e[i + k].op, e[i + ns + k].op);
    for (int64_t k = nr; k < ns && !rc; k++) rc = fn(ctx, e[i + k].op, -1);
    for (int64_t k = ns; k < nr && !rc; k++) rc = fn(ctx, -1, e[i + ns + k].op);
    i = j;
  }
  return rc;
}

/* e[0..n): the receiving rank's bucket, where an unmatched end's near miss is sought */
typedef struct { const cdag_graph *g; int32_t *partner; const chan_entry *e; int64_t n; } pairing;

static int pair_op(void *ctx, int32_t s, int32_t r) {
  pairing *x = ctx;
  if (s < 0 || r < 0) return unmatched(x->g, x->e, x->n, s < 0 ? r : s);
  if (x->g->bytes[r] < x->g->bytes[s]) return truncated(x->g, s, r);
  x->partner[s] = r;
  x->partner[r] = s;
  return CDAG_OK;
}

static int32_t dest_of(const cdag_graph *g, int32_t op) {
  return g->kind[op] == IR_SEND ? g->peer[op] : g->rank[op];
}

/* The bucket records are written as ops are read in id order, so each op's fields are
   read once, sequentially whatever the layout (a graph built round by round has one rank's
   ops far apart), and only the record's write lands at random. A channel's sends come
   from one rank and its receives go to one, so their program positions order them. */
static int match_pairs(const cdag_graph *g, int32_t *partner) {
  int32_t *start = calloc((size_t)g->nprocs + 1, sizeof *start);
  if (!start) return CDAG_NOMEM("matching");
  int64_t ncomm = 0;
  for (int64_t op = 0; op < g->nops; op++) {
    partner[op] = -1;
    if (g->kind[op] == IR_SEND || g->kind[op] == IR_RECV) start[dest_of(g, (int32_t)op) + 1]++, ncomm++;
  }
  for (int r = 0; r < g->nprocs; r++) start[r + 1] += start[r];
  chan_entry *e = base_malloc((size_t)ncomm * sizeof *e);
  if (!e) {
    free(start);
    return CDAG_NOMEM("matching");
  }
  for (int32_t op = 0; op < g->nops; op++) {
    if (op + IR_AHEAD < g->nops && g->kind[op + IR_AHEAD] <= IR_RECV)
      IR_PREFETCH_W(&e[start[dest_of(g, op + IR_AHEAD)]]);
    if (g->kind[op] != IR_SEND && g->kind[op] != IR_RECV) continue;
    int recv = g->kind[op] == IR_RECV;
    e[start[dest_of(g, op)]++] =
        (chan_entry){recv ? g->peer[op] : g->rank[op], g->tag[op], (uint32_t)recv << 31 | (uint32_t)g->pos[op], op};
  }
  int32_t largest = 0;
  for (int r = 0, lo = 0; r < g->nprocs; lo = start[r++])
    if (start[r] - lo > largest) largest = start[r] - lo;
  chan_entry *tmp = malloc((size_t)(largest + 1) * sizeof *tmp);
  int64_t *at = malloc((size_t)(largest + 2) * sizeof *at);
  int rc = tmp && at ? CDAG_OK : CDAG_NOMEM("matching");
  for (int r = 0, lo = 0; r < g->nprocs && rc == CDAG_OK; lo = start[r++]) {
    int32_t next_end = r + 1 < g->nprocs ? start[r + 1] : start[r]; /* the next bucket's first sends */
    for (int32_t k = start[r]; k < next_end && k < start[r] + 64; k++)
      if (!(e[k].key >> 31)) IR_PREFETCH(&g->bytes[e[k].op]), IR_PREFETCH_W(&partner[e[k].op]);
    match_sort_ends(e + lo, start[r] - lo, tmp, at);
    rc = match_pair_ends(e + lo, start[r] - lo, pair_op, &(pairing){g, partner, e + lo, start[r] - lo});
  }
  free(tmp);
  free(at);
  free(e);
  free(start);
  return rc;
}

/* Predecessors of op in D ∪ M: its dependencies, and for a receive its matched send. */
static int32_t npreds(const cdag_graph *g, const int32_t *partner, int32_t op) {
  return g->pred_start[op + 1] - g->pred_start[op] + (g->kind[op] == IR_RECV);
}

/* What an op waits for in the order: its predecessors, a receive's send counted once. */
static int32_t count_preds(const cdag_graph *g, const int32_t *partner, int32_t op) {
  int32_t n = npreds(g, partner, op);
  if (g->kind[op] == IR_RECV && g->peer[op] == g->rank[op])
    for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1]; k++) n -= g->pred[k] == partner[op];
  return n;
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
  /* not "deadlock": the code's text (cdag_strerror) says that already, and the tool prints both */
  int n = snprintf(msg, sizeof msg, "ops on the cycle:");
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

/* The order under construction. indeg: > 0 predecessors still to run (a receive counts its
   send), 0 ready, -1 run, HELD a ready send waiting for its receive's other predecessors.
   An op that becomes ready ahead of the scan position `scan` is left for the scan; one
   behind it waits on a stack kept at the back of order (ran + stacked never exceeds n),
   unless it lies far from the op that freed it and passes defer: then it is left for the
   next pass. */
enum { HELD = -2 };
typedef struct {
  const cdag_graph *g;
  const int32_t *partner;
  int32_t *order, *indeg;
  int64_t n, ran, stacked, scan;
  int hold;         /* hold sends for their receives */
  int defer;        /* leave ops ready far behind the scan for the next pass */
  int64_t deferred; /* ops left for the next pass by the current one */
  int passes;       /* scans begun */
} orderer;

static void push(orderer *o, int32_t w) { o->order[o->n - 1 - o->stacked++] = w; }

enum { NEAR = 64 };  /* ops apart that share a few cache lines of each per-op array */

static int far_apart(int32_t v, int32_t w) { return v - w > NEAR || w - v > NEAR; }

/* w has become ready by running v. */
static void push_ready(orderer *o, int32_t v, int32_t w) {
  if (w >= o->scan) return;
  if (o->defer && far_apart(v, w)) o->deferred++;
  else push(o, w);
}

/* Marks v run: appends it to the order and releases its successors, and the held send of a
   receive that now waits for nothing else (a receive is never smaller than its send, so a
   receive of no bytes has no held send). A send's own edges to its receive (a send to self
   whose receive overwrites its buffer) are not counted: the message orders the two. */
static void run_op(orderer *o, int32_t v) {
  const cdag_graph *g = o->g;
  int32_t mine = g->kind[v] == IR_SEND ? o->partner[v] : -1;
  o->order[o->ran++] = v;
  o->indeg[v] = -1;
  for (int32_t k = g->succ_start[v]; k < g->succ_start[v + 1]; k++) {
    int32_t w = g->succ[k], left;
    if (w == mine) continue;
    left = --o->indeg[w];
    if (left == 0) {
      push_ready(o, v, w);
    } else if (left == 1 && g->kind[w] == IR_RECV && g->bytes[w] && o->indeg[o->partner[w]] == HELD) {
      o->indeg[o->partner[w]] = 0;
      push(o, o->partner[w]);
    }
  }
}

/* Runs u and, if it is a send, its receive once that waits for nothing else. The receive
   of a send of no bytes (nothing to carry, as in a synchronisation) is an ordinary
   successor while passes defer. */
static void run_pair(orderer *o, int32_t u) {
  run_op(o, u);
  if (o->g->kind[u] != IR_SEND) return;
  int32_t r = o->partner[u];
  if (--o->indeg[r] != 0) return;
  if (o->g->bytes[u] || !o->defer) run_op(o, r);
  else push_ready(o, u, r);
}

/* Runs the stack and everything that becomes ready behind the scan because of it. A send
   whose receive still waits for other predecessors is held until they have run, so that
   the receive runs right after it: dataflow then carries the message without buffering it
   (graphs added rank by rank would otherwise buffer nearly every message). A message of no
   bytes has nothing to buffer and is never held. */
static void drain(orderer *o) {
  while (o->stacked > 0) {
    int32_t u = o->order[o->n - o->stacked--];
    if (o->hold && o->g->kind[u] == IR_SEND && o->g->bytes[u] && o->indeg[o->partner[u]] > 1) {
      o->indeg[u] = HELD;
      continue;
    }
    run_pair(o, u);
  }
}

/* Runs v, ready, and everything that becomes ready behind the scan because of it. */
static void run_ready(orderer *o, int32_t v) {
  push(o, v);
  drain(o);
}

/* One pass over the ops in ids (ascending; NULL: all ops): runs each that is ready when
   reached, and with it what it frees on the way. */
static void scan_pass(orderer *o, const int32_t *ids, int64_t nids) {
  const cdag_graph *g = o->g;
  o->passes++;
  o->deferred = 0;
  for (int64_t i = 0; i < nids; i++) {
    if (i + IR_AHEAD < nids) {
      int64_t f = ids ? ids[i + IR_AHEAD] : i + IR_AHEAD;
      if (g->kind[f] == IR_SEND) IR_PREFETCH_W(&o->indeg[o->partner[f]]);
    }
    o->scan = ids ? ids[i] : i;
    if (o->indeg[o->scan] == 0) run_ready(o, (int32_t)o->scan);
  }
}

/* Passes after the first, over the ops not run yet, while the last one left some ops for
   the next (nothing else can become ready: the rest is held or on a cycle) and ran at
   least an eighth of those it scanned (so all passes together cost O(n + m)). Returns
   CDAG_ERR_NOMEM or CDAG_OK. */
static int later_passes(orderer *o) {
  int64_t nleft = o->n - o->ran;
  if (nleft == 0 || o->deferred == 0) return CDAG_OK;
  int32_t *left = malloc((size_t)nleft * sizeof *left);
  if (!left) return CDAG_NOMEM("ordering");
  nleft = 0;
  for (int64_t op = 0; op < o->n; op++)
    if (o->indeg[op] != -1) left[nleft++] = (int32_t)op;
  for (;;) {
    int64_t before = o->ran, k = 0;
    scan_pass(o, left, nleft);
    if (o->ran == o->n || o->deferred == 0 || 8 * (o->ran - before) < nleft) break;
    for (int64_t i = 0; i < nleft; i++)
      if (o->indeg[left[i]] != -1) left[k++] = left[i];
    nleft = k;
  }
  free(left);
  return CDAG_OK;
}

/* Kahn's algorithm over D ∪ M (a send precedes its receive), scanning ops by id and
   running each as soon as it is ready: graphs are built roughly in dependency order, so
   the order mostly follows op ids and the passes that walk it touch memory nearly
   sequentially (a FIFO queue would hop across the whole graph level by level). An op freed
   behind the scan and far from the op that freed it (a barrier's first ranks, freed by
   the last ranks' messages) waits for the next pass over the ops left, in id order too:
   run at once, each would start a chain of hops far back, one cache miss per op once the
   graph outgrows the cache. When a pass does too little, the rest runs with a stack.
   Holds that cannot end by themselves (receives waiting on each other's held sends, as in
   an exchange in place) are broken last, when everything that becomes ready goes on the
   stack: the held sends run in id order, each followed by what it frees, still holding
   others; then, holding nothing, whatever is left held. O(n + m). Ops left over lie on or
   behind a cycle. */
static int order_ops(const cdag_graph *g, const int32_t *partner, int32_t *order, int32_t *indeg, int *passes) {
  orderer o = {.g = g, .partner = partner, .order = order, .indeg = indeg, .n = g->nops, .hold = 1, .defer = 1};
  for (int64_t op = 0; op < g->nops; op++) indeg[op] = count_preds(g, partner, (int32_t)op);
  scan_pass(&o, NULL, g->nops);
  CDAG_TRY(later_passes(&o));
  *passes = o.passes;
  o.defer = 0;
  o.scan = g->nops;
  for (int64_t op = 0; op < g->nops; op++)
    if (indeg[op] == 0) run_ready(&o, (int32_t)op);
  for (o.hold = 1; o.hold >= 0; o.hold--)
    for (int64_t op = 0; op < g->nops; op++)
      if (indeg[op] == HELD) {
        indeg[op] = 0;
        run_pair(&o, (int32_t)op);
        drain(&o);
      }
  if (o.ran == g->nops) return CDAG_OK;
  return report_cycle(g, partner, indeg, order);
}

static int match_run_deps(const cdag_graph *g, match_result *m) {
  memset(m, 0, sizeof *m);
  int64_t n = g->nops ? g->nops : 1;
  m->nops = g->nops;
  m->partner = base_malloc((size_t)n * sizeof *m->partner);
  m->order = base_malloc((size_t)n * sizeof *m->order);
  int32_t *scratch = base_malloc((size_t)n * sizeof *scratch);
  int rc;
  if (!m->partner || !m->order || !scratch) {
    rc = CDAG_NOMEM("matching");
  } else {
    rc = match_pairs(g, m->partner);
    if (rc == CDAG_OK) rc = order_ops(g, m->partner, m->order, scratch, &m->passes);
  }
  free(scratch);
  ir_trim_heap(g);
  if (rc) match_free(m);
  return rc;
}

int match_run(const cdag_graph *g, match_result *m) {
  if (!g || !m) return cdag__error(CDAG_ERR_ARG, "match_run: NULL argument");
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "match_run: graph is not finalized");
  ir_deps_view v;
  int rc = ir_deps_view_open(g, &v);
  if (rc == CDAG_OK) rc = match_run_deps(v.g, m);
  ir_deps_view_close(&v);
  return rc;
}

void match_free(match_result *m) {
  if (!m) return;
  free(m->partner);
  free(m->order);
  m->partner = m->order = NULL;
}

/* cdag — src/model/loggp.c: the LogGOPS completion time of a graph, as LogGOPSim has it.
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
 * Beyond LogGOPSim, for a machine `cdag calibrate` measured (choose.h, loggp_params): a
 * table of costs by size replaces (s-1)G and (s-1)O by B(s) = (pair(s) - 2o) / 2 on each side
 * and L by what one exchange takes beyond 2o + B(s), and makes a message to self a local
 * copy (no NIC, no latency), as cdag's engines run it; queue charges the receiver's CPU per
 * receive posted and waiting on its rank when it handles a message (its MPI searches them);
 * rcopy prices the copies that fill or empty the buffer of a message above S.
 * Without them (the built-in parameters, `cdag goal`) the rules are LogGOPSim's.
 * The time is the latest CPU clock of any rank. Ties: events by time, then by the order they
 * were first queued; ops that become executable together are queued rank by rank, sends,
 * then receives, then local ops, each kind in the order the ops became executable (that of
 * the dependency lists, as the file wrote them): LogGOPSim's order when its sort by kind is
 * made stable (it uses std::sort, which is not). Times are integers (picoseconds) so equal
 * sums compare equal. (s-1) is 0 for empty messages.
 * LogGOPSim puts an event that finds its CPU or NIC busy back into its queue at the time the
 * resource frees; k events waiting for one resource cost O(k^2) retries (a linear alltoall
 * on 1024 ranks: 5e8). Here a blocked event waits in the queue of what it needs (a CPU; a
 * CPU and a send NIC; a CPU and a receive NIC), ordered by first-queued order, and only the
 * first of each queue counts, at the time all it needs is free: the queues of one CPU share
 * one wake in the event heap, keyed by the earliest of their first events. Events of one
 * queue need the same resources, so a later one could never run before the first: the same
 * events run at the same times in the same order, without the retries. Ops queued together
 * with one time (a rank's sends, say) enter the heap as one run: their ts are consecutive, so
 * no other event falls between them. Messages in flight, which mostly come due in the order
 * sent while sends start in time order, wait in a FIFO beside the heap (one that comes
 * before the FIFO's last goes into the heap: under a table latency varies with size), and
 * wakes in four FIFOs (CPUs working in step arm theirs in a few ascending sequences). So the heap holds runs
 * and the few messages and wakes out of order: a 4-ary heap of 16-byte events that stays
 * in the first-level cache. The pairing of sends
 * and receives is match_run's, or one the caller already has (exec_loggp_paired).
 * Cost: O((n + m) log n) for n ops and m dependencies. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/lower.h"

loggp_params loggp_defaults(void) { return (loggp_params){.L = 1.0, .o = 0.2, .g = 0.2, .G = 0.0002, .S = 65535, .copy = 0.0001}; }

typedef int64_t ps_t;   /* picoseconds */

enum { EV_OP, EV_MSG, EV_WAKE, EV_RUN };

/* An event in 16 bytes, so that the heap's 2,000 entries stay in the first-level cache:
   w = ts << 33 | kind << 31 | id, where ts is the first-queued order (a wake: that of the
   first waiting event) and id the op (EV_OP; EV_MSG: the send), CPU (EV_WAKE) or run
   (EV_RUN). ts counts queued ops and messages, under 2n, and ids lie below n + 1, both
   under 2^31 (sim_init bounds n). Comparing w compares ts: events differ in ts, except a
   wake and its stale copies, which are the same wake. */
typedef struct {
  ps_t t;
  uint64_t w;
} ev;

static ev ev_make(ps_t t, uint64_t ts, int kind, int64_t id) { return (ev){t, ts << 33 | (uint64_t)kind << 31 | (uint64_t)id}; }
static uint64_t ev_ts(const ev *e) { return e->w >> 33; }
static int ev_kind(const ev *e) { return (int)(e->w >> 31 & 3); }
static int32_t ev_id(const ev *e) { return (int32_t)(e->w & 0x7fffffff); }

/* Without short-circuits, so that choosing a child compiles to a conditional move. */
static int ev_less(const ev *a, const ev *b) { return (a->t < b->t) | ((a->t == b->t) & (a->w < b->w)); }

/* The heap is 4-ary: half the levels of a binary one (about 1,400 events: 5 instead of 10
   dependent loads a sift), and an entry's four children fill one cache line (sim keeps
   h[1] on a 64-byte boundary). */
static int64_t parent(int64_t i) { return (i - 1) / 4; }

/* The least of the children of i, all four present. */
static int64_t least_of_four(const ev *h, int64_t c) {
  int64_t a = c + ev_less(&h[c + 1], &h[c]), b = c + 2 + ev_less(&h[c + 3], &h[c + 2]);
  return ev_less(&h[b], &h[a]) ? b : a;
}

/* The least child of i among the n events, or -1 if it has none. */
static int64_t least_child(const ev *h, int64_t i, int64_t n) {
  int64_t c = 4 * i + 1;
  if (c + 3 < n) return least_of_four(h, c);
  if (c >= n) return -1;
  int64_t best = c;
  for (int64_t k = c + 1; k < n; k++) best = ev_less(&h[k], &h[best]) ? k : best;
  return best;
}

static void heap_push(ev *h, int64_t *n, ev e) {
  int64_t i = (*n)++;
  while (i > 0 && ev_less(&e, &h[parent(i)])) {
    h[i] = h[parent(i)];
    i = parent(i);
  }
  h[i] = e;
}

/* h[0] moved down to its place among the n events of h. */
static void heap_sift(ev *h, int64_t n) {
  ev x = h[0];
  int64_t i = 0, c;
  while ((c = least_child(h, i, n)) >= 0 && ev_less(&h[c], &x)) {
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

/* The first event, removed. The last event, which takes its place, is mostly among the
   latest, so rather than sift it down from the root (a compare against it at every level),
   the hole goes down along the least children to a leaf and the last event rises from
   there, mostly a level or so (Floyd's variant). Keys (t, ts) differ, so the order popped
   is the same. */
static ev heap_pop(ev *h, int64_t *n) {
  ev top = h[0], x = h[--(*n)];
  int64_t m = *n, i = 0, c;
  if (m == 0) return top;
  while ((c = least_child(h, i, m)) >= 0) {
    h[i] = h[c];
    i = c;
  }
  while (i > 0 && ev_less(&x, &h[parent(i)])) {
    h[i] = h[parent(i)];
    i = parent(i);
  }
  h[i] = x;
  return top;
}

/* A waiting event: what it needs is its kind and op; its time is set when it runs. */
typedef struct {
  uint64_t ts;
  int32_t id;
  uint8_t kind;
} waiter;

/* A resource's waiting events, earliest ts first. They mostly arrive in ts order, and while
   they do the queue is a FIFO, w[head .. n) ascending: a push appends, a pop takes w[head]
   (a binary heap of a thousand waiters would sift its last entry through every level, a
   cache miss each). The first push out of order moves the entries to w[0 ..), which, being
   sorted, is already a binary min-heap by ts, and the queue stays a heap until it empties.
   A move copies only entries pushed since the queue was last empty: O(1) amortised. The ts
   differ, so both forms pop the same order. */
typedef struct {
  waiter *w;
  int64_t head, n, cap; /* entries w[head .. n); head is 0 in heap form */
  int heap;             /* a binary heap by ts, not a FIFO */
  int64_t a, b;         /* the clocks its events need (b -1: a CPU alone) */
  uint64_t first;       /* ts of the first entry, if any (cpu_next reads it without w) */
} wait_queue;

/* The queues of one CPU (its own, and per NIC its sends' and its messages') share one wake
   in the heap, keyed by the earliest of their first events: (when all it needs is free, its
   ts). The queues of a CPU contend for it (a rank's sends and the messages it handles take
   turns), and with a wake each, every event of one made the other's wake find the CPU
   taken and sink through the heap again; with one wake, the CPU's next event is chosen
   among its queues in a few compares. A wake's key never exceeds the true one (clocks only
   advance), and one that finds its key grown moves to the new key: events run in the
   order of their true keys, as LogGOPSim's retries have it. */
typedef struct {
  int armed;            /* a wake with this key is in the heap (some queue waits); one with
                           another key is stale (re-armed since) */
  ps_t t;               /* its key */
  uint64_t ts;
} cpu_wake;

static void waiter_push(wait_queue *q, waiter x) {
  if (!q->heap && q->n > q->head && x.ts < q->w[q->n - 1].ts) {   /* out of order: a heap from now */
    memmove(q->w, q->w + q->head, (size_t)(q->n - q->head) * sizeof *q->w);
    q->n -= q->head;
    q->head = 0;
    q->heap = 1;
  }
  int64_t i = q->n++;
  while (q->heap && i > 0 && x.ts < q->w[(i - 1) / 2].ts) {
    q->w[i] = q->w[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  q->w[i] = x;
  if (q->n - q->head == 1 || x.ts < q->first) q->first = x.ts;
}

static waiter waiter_pop(wait_queue *q) {
  if (!q->heap) {
    waiter top = q->w[q->head++];
    if (q->head == q->n) q->head = q->n = 0;
    else q->first = q->w[q->head].ts;
    return top;
  }
  waiter top = q->w[0], x = q->w[--q->n];
  int64_t i = 0, n = q->n;
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && q->w[c + 1].ts < q->w[c].ts) c++;
    if (q->w[c].ts >= x.ts) break;
    q->w[i] = q->w[c];
    i = c;
  }
  if (n > 0) q->w[i] = x, q->first = q->w[0].ts;
  else q->heap = 0;
  return top;
}

/* Room for one more waiter: a FIFO whose free front is at least half its array moves down
   (paid for by the pops that freed it), otherwise the array doubles. */
static int waiter_room(wait_queue *q) {
  if (q->n < q->cap) return CDAG_OK;
  if (!q->heap && q->head >= q->cap / 2 && q->head > 0) {
    memmove(q->w, q->w + q->head, (size_t)(q->n - q->head) * sizeof *q->w);
    q->n -= q->head;
    q->head = 0;
    return CDAG_OK;
  }
  /* most queues (one per CPU and NIC of every rank) hold a few waiters: start small */
  int64_t cap = q->cap ? 2 * q->cap : 4;
  int rc = base_resize((void **)&q->w, q->n, cap, sizeof *q->w, "LogGP wait queue");
  if (rc == CDAG_OK) q->cap = cap;
  return rc;
}

enum { WAKE_FIFOS = 4 };

/* Events that mostly come in key order wait in FIFOs, e[head .. n), outside the heap, and
   go into the heap only when one comes before its FIFO's last. Messages in flight: each
   comes due o + L after its send starts (under a table: a latency by size; a copy to self
   when the copy ends), and sends start in time order (nearly always).
   Wakes: a CPU's next wake is mostly a fixed cost after the one that ran, so while CPUs
   work in step (an alltoall's 1024) the wakes they arm come in order; in the heap each
   sank through every level. The next event is the least of the two FIFOs' firsts and the
   heap's root. */
typedef struct {
  ev *e;
  int64_t head, n, cap;
} ev_fifo;

enum { ST_STARTED = 1, ST_DONE = 2, ST_QUEUED = 4, ST_ARRIVED = 8, ST_POSTED = 16 };

typedef struct {
  const cdag_graph *g;
  const int32_t *partner;
  ps_t L, o, g_, G, O, copy, rcopy, queue;
  uint64_t S;
  int64_t *posted;                    /* per rank: receives posted, their message not yet handled */
  uint64_t *rdv_bytes;                /* per copy: its bytes next to rendezvous messages (rcopy), or NULL */
  const loggp_params *lp;             /* its table of costs by size, when it has one */
  int ncpu, nnic;
  ps_t *clock;                        /* CPUs, then send NICs, then receive NICs */
  int64_t nres;
  wait_queue *q;                      /* per CPU, per (CPU, send NIC), per (CPU, receive NIC) */
  int64_t nq;
  cpu_wake *wk;                       /* per CPU (rank * ncpu + cpu) */
  int32_t *need_done, *need_start;    /* unmet requires / irequires per op */
  int32_t *ss_start, *ss;             /* CSR: ops that irequire each op */
  uint8_t *st;
  ev *h, *hbase;                      /* the heap, inside its allocation (heap_alloc) */
  int64_t nh, hcap, ndone;
  ev_fifo msgs;                       /* messages in key order */
  ev_fifo wakes[WAKE_FIFOS];          /* wakes: each FIFO in key order */
  int nomem;
  uint64_t ts;
  int32_t *ready;                     /* ops executable in this event, in that order */
  uint64_t *key;                      /* their queueing order (queue_ready) */
  uint64_t *key2;                     /* the counting sort's output (sort_keys) */
  int64_t *bucket;                    /* its counts: 3 per rank, + 1 */
  int64_t nready;
  int32_t (*runs)[2];                 /* EV_RUN: ops queued together, [next, end) of runops */
  int32_t *runops;
  int64_t nruns, nrunops;
} sim;

/* Room for cap events, h[1] on a 64-byte boundary (the first child group), the nh events
   kept. */
static int heap_alloc(sim *s, int64_t cap) {
  ev *base = malloc(((size_t)cap + 4) * sizeof *base);
  if (!base) return CDAG_NOMEM("LogGP events");
  ev *h = base + (4 - ((uintptr_t)(base + 1) / sizeof *base) % 4) % 4;
  if (s->nh) memcpy(h, s->h, (size_t)s->nh * sizeof *h);
  free(s->hbase);
  s->hbase = base;
  s->h = h;
  s->hcap = cap;
  return CDAG_OK;
}

/* heap_push with room made (stale wakes can pile up past any fixed bound). */
static void push(sim *s, ev e) {
  if (s->nh == s->hcap && heap_alloc(s, 2 * s->hcap)) {
    s->nomem = 1;
    return;
  }
  heap_push(s->h, &s->nh, e);
}

/* e enters FIFO f if it comes at or after f's last, else the heap. A full FIFO whose free
   front is at least half its array moves down, otherwise it doubles. */
static void push_sorted(sim *s, ev_fifo *f, ev e) {
  if (f->n > f->head && ev_less(&e, &f->e[f->n - 1])) {
    push(s, e);
    return;
  }
  if (f->n == f->cap && f->head > 0 && f->head >= f->cap / 2) {
    memmove(f->e, f->e + f->head, (size_t)(f->n - f->head) * sizeof *f->e);
    f->n -= f->head;
    f->head = 0;
  }
  if (f->n == f->cap && base_grow((void **)&f->e, f->n, &f->cap, 1, sizeof *f->e, "LogGP events")) {
    s->nomem = 1;
    return;
  }
  f->e[f->n++] = e;
}

static void push_msg(sim *s, ev e) { push_sorted(s, &s->msgs, e); }
static int fifo_has(const ev_fifo *f) { return f->n > f->head; }

/* A wake goes to the first FIFO it does not come before, else the heap: CPUs in step arm
   their next wakes in a few interleaved ascending sequences (patience sorting's piles). */
static void push_wake(sim *s, ev e) {
  for (int k = 0; k < WAKE_FIFOS; k++) {
    ev_fifo *f = &s->wakes[k];
    if (!fifo_has(f) || !ev_less(&e, &f->e[f->n - 1])) {
      push_sorted(s, f, e);
      return;
    }
  }
  push(s, e);
}

/* Where the next event is: the heap, the FIFO of messages, or a FIFO of wakes (SRC_WAKE + k). */
enum { SRC_HEAP, SRC_MSG, SRC_WAKE };
static int next_source(const sim *s) {
  const ev *best = s->nh ? &s->h[0] : NULL;
  int src = SRC_HEAP;
  if (fifo_has(&s->msgs) && (!best || ev_less(&s->msgs.e[s->msgs.head], best)))
    best = &s->msgs.e[s->msgs.head], src = SRC_MSG;
  for (int k = 0; k < WAKE_FIFOS; k++) {
    const ev_fifo *f = &s->wakes[k];
    if (fifo_has(f) && (!best || ev_less(&f->e[f->head], best))) best = &f->e[f->head], src = SRC_WAKE + k;
  }
  return src;
}

static ev fifo_pop(ev_fifo *f) {
  ev e = f->e[f->head++];
  if (f->head == f->n) f->head = f->n = 0;
  return e;
}

static int cpu_of(const sim *s, int32_t op) {
  return s->g->cpu && s->g->cpu[op] >= 0 ? s->g->cpu[op] : 0;
}

static int nic_of(const sim *s, int32_t op) {
  return s->g->nic && s->g->nic[op] >= 0 ? s->g->nic[op] : 0;
}

/* CPU and NIC numbers the model takes (queues are kept per rank, CPU and NIC). */
#define LOGGP_MAX_UNITS 1024

static int64_t res_cpu(const sim *s, int32_t rank, int cpu) { return (int64_t)rank * s->ncpu + cpu; }
static int64_t res_gs(const sim *s, int32_t rank, int nic) {
  return (int64_t)s->g->nprocs * s->ncpu + (int64_t)rank * s->nnic + nic;
}
static int64_t res_gr(const sim *s, int32_t rank, int nic) {
  return (int64_t)s->g->nprocs * (s->ncpu + s->nnic) + (int64_t)rank * s->nnic + nic;
}
static ps_t *clock_o(sim *s, int32_t rank, int cpu) { return &s->clock[res_cpu(s, rank, cpu)]; }
static ps_t *clock_gs(sim *s, int32_t rank, int nic) { return &s->clock[res_gs(s, rank, nic)]; }

/* The queues, CPU by CPU (rank * ncpu + cpu), so that cpu_next finds a CPU's side by side:
   the CPU's own, then per NIC its sends', then per NIC its messages'. */
enum { Q_CPU, Q_SEND, Q_MSG };
static int64_t queue_id(const sim *s, int kind, int32_t rank, int cpu, int nic) {
  int64_t base = ((int64_t)rank * s->ncpu + cpu) * (1 + 2 * s->nnic);
  return kind == Q_CPU ? base : kind == Q_SEND ? base + 1 + nic : base + 1 + s->nnic + nic;
}

/* A message a rank sends itself (send or receive op), under a table: a local copy, as cdag's
   engines run it. The send is a local op (its CPU copies, for copy per byte; no NIC, no
   latency, no rendezvous); its message needs nothing to be handled. */
static int self_priced(const sim *s, int32_t op) {
  int32_t p = s->partner[op];
  return s->lp->ntab && p >= 0 && s->g->rank[op] == s->g->rank[p];
}

/* The queue of what e needs (CPU; CPU and send NIC; CPU and receive NIC). A message is
   handled at the receiver with the send's CPU and NIC numbers. A message to self never
   waits (step). */
static int64_t queue_of(const sim *s, const ev *e) {
  int32_t op = ev_id(e);
  if (ev_kind(e) == EV_MSG) return queue_id(s, Q_MSG, s->g->rank[s->partner[op]], cpu_of(s, op), nic_of(s, op));
  int kind = s->g->kind[op] == IR_SEND && !self_priced(s, op) ? Q_SEND : Q_CPU;
  return queue_id(s, kind, s->g->rank[op], cpu_of(s, op), nic_of(s, op));
}

static ps_t free_at(const sim *s, const wait_queue *w) {
  return w->b >= 0 && s->clock[w->b] > s->clock[w->a] ? s->clock[w->b] : s->clock[w->a];
}

/* The CPU whose queues x is one of (queue_id's layout). */
static int64_t cpu_of_queue(const sim *s, int64_t x) { return x / (1 + 2 * s->nnic); }

static int key_less(ps_t t, uint64_t ts, ps_t u, uint64_t us) { return t < u || (t == u && ts < us); }

/* The queue of CPU c whose first event comes first: the least (free_at, ts) among its
   queues', in *t, *ts; -1 if none waits. */
static int64_t cpu_next(const sim *s, int64_t c, ps_t *t, uint64_t *ts) {
  int64_t first = c * (1 + 2 * s->nnic), best = -1;
  for (int64_t x = first; x <= first + 2 * s->nnic; x++) {
    const wait_queue *w = &s->q[x];
    if (w->n == 0) continue;
    ps_t ft = free_at(s, w);
    if (best < 0 || key_less(ft, w->first, *t, *ts)) best = x, *t = ft, *ts = w->first;
  }
  return best;
}

/* A new wake of CPU c with key (t, ts); the one in the heap, if any, is stale from now. */
static ev wake_event(sim *s, int64_t c, ps_t t, uint64_t ts) {
  cpu_wake *k = &s->wk[c];
  k->armed = 1;
  k->t = t;
  k->ts = ts;
  return ev_make(t, ts, EV_WAKE, c);
}

/* e found what it needs busy: it waits in its queue (LogGOPSim would retry it then). Its
   CPU's wake comes earlier if e is now the CPU's first event. */
static void park(sim *s, ev e) {
  int64_t x = queue_of(s, &e), c = cpu_of_queue(s, x);
  wait_queue *w = &s->q[x];
  if (waiter_room(w)) {
    s->nomem = 1;
    return;
  }
  waiter_push(w, (waiter){ev_ts(&e), ev_id(&e), (uint8_t)ev_kind(&e)});
  ps_t t = free_at(s, w);
  if (!s->wk[c].armed || key_less(t, ev_ts(&e), s->wk[c].t, s->wk[c].ts)) push_wake(s, wake_event(s, c, t, ev_ts(&e)));
}

/* The first event waiting in x, removed. */
static ev unpark(sim *s, int64_t x) {
  waiter k = waiter_pop(&s->q[x]);
  return ev_make(0, k.ts, k.kind, k.id);
}

static ps_t bytes_less_one(uint64_t s, ps_t per_byte) { return s ? (ps_t)(s - 1) * per_byte : 0; }

/* Column y of lp's table at x bytes (us): linear between its sizes, its first value below
   them, the last two sizes' slope (at least 0) above them. */
static double tab_at(const loggp_params *lp, const double *y, double x) {
  const double *sz = lp->tab_size;
  int n = lp->ntab, lo = 0, hi = n - 1;
  if (x <= sz[0] || n == 1) return y[x <= sz[0] ? 0 : n - 1];
  if (x >= sz[n - 1]) {
    double slope = (y[n - 1] - y[n - 2]) / (sz[n - 1] - sz[n - 2]);
    return y[n - 1] + (slope > 0 ? slope : 0) * (x - sz[n - 1]);
  }
  while (hi - lo > 1) {   /* sz[lo] <= x < sz[hi] */
    int mid = (lo + hi) / 2;
    if (sz[mid] <= x) lo = mid;
    else hi = mid;
  }
  return y[lo] + (y[hi] - y[lo]) * (x - sz[lo]) / (sz[hi] - sz[lo]);
}

static ps_t to_ps(double us) { return (ps_t)llround(us * 1e6); }

/* What a message's bytes cost each side, its CPU and its NIC alike, under the table: half
   of what a pair of them adds to 2o in a stream. */
static ps_t tab_bytes(const sim *s, uint64_t size) {
  ps_t pair = to_ps(tab_at(s->lp, s->lp->tab_pair, (double)size));
  return pair > 2 * s->o ? (pair - 2 * s->o) / 2 : 0;
}

/* A message's latency: L, or under the table what one exchange alone takes beyond its
   overheads, bytes (B, the table's tab_bytes, a side) and queue (one exchange is
   2o + B + max(L, B) + queue, its own receive the one waiting). */
static ps_t latency(const sim *s, uint64_t size, ps_t bytes) {
  if (!s->lp->ntab) return s->L;
  ps_t round = to_ps(tab_at(s->lp, s->lp->tab_round, (double)size));
  ps_t rest = round - 2 * s->o - bytes - s->queue;
  return rest > 0 ? rest : 0;
}

/* A message's byte terms, its NIC's and its CPU's: (s-1)G and (s-1)O, or the table's. */
static void byte_terms(const sim *s, uint64_t size, ps_t *wire, ps_t *cpu) {
  if (s->lp->ntab) *wire = *cpu = tab_bytes(s, size);
  else *wire = bytes_less_one(size, s->G), *cpu = bytes_less_one(size, s->O);
}

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

static void insertion_sort(uint64_t *k, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    uint64_t x = k[i];
    int64_t j = i;
    for (; j > 0 && k[j - 1] > x; j--) k[j] = k[j - 1];
    k[j] = x;
  }
}

/* Bottom-up merge sort of k[0 .. n) (blocks of 16 sorted by insertion first), tmp as the
   other buffer; returns the one that holds the result. No comparator calls (qsort's were
   most of its cost here). */
static uint64_t *merge_sort(uint64_t *k, uint64_t *tmp, int64_t n) {
  for (int64_t lo = 0; lo < n; lo += 16) insertion_sort(k + lo, n - lo < 16 ? n - lo : 16);
  for (int64_t w = 16; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, o = lo;
      while (i < mid && j < hi) tmp[o++] = k[i] < k[j] ? k[i++] : k[j++];
      while (i < mid) tmp[o++] = k[i++];
      while (j < hi) tmp[o++] = k[j++];
    }
    uint64_t *x = k;
    k = tmp;
    tmp = x;
  }
  return k;
}

/* Sorts the n = nready keys (they differ: the low bits are the position) into s->key (the
   two buffers may swap). A few, the usual case, by insertion; as many as ranks or more (the
   start, when every op may be executable) by counting on (rank, kind), stable in position,
   in O(n + ranks); a merge sort between. */
static void sort_keys(sim *s) {
  int64_t n = s->nready;
  uint64_t *k = s->key, *sorted = s->key2;
  if (n <= 16) {
    insertion_sort(k, n);
    return;
  }
  if (n < s->g->nprocs) {
    sorted = merge_sort(k, sorted, n);
  } else {
    int64_t nb = 3 * (int64_t)s->g->nprocs, *at = s->bucket;
    memset(at, 0, (size_t)(nb + 1) * sizeof *at);
    for (int64_t i = 0; i < n; i++) at[(k[i] >> 34) * 3 + (k[i] >> 32 & 3) + 1]++;
    for (int64_t b = 0; b < nb; b++) at[b + 1] += at[b];
    for (int64_t i = 0; i < n; i++) sorted[at[(k[i] >> 34) * 3 + (k[i] >> 32 & 3)]++] = k[i];
  }
  if (sorted != k) {
    s->key2 = k;
    s->key = sorted;
  }
}

/* The time an executable op is queued at: its CPU's clock (a send: and its NIC's). */
static ps_t queued_at(sim *s, int32_t op) {
  int32_t r = s->g->rank[op];
  ps_t t = *clock_o(s, r, cpu_of(s, op));
  if (s->g->kind[op] == IR_SEND && !self_priced(s, op) && *clock_gs(s, r, nic_of(s, op)) > t)
    t = *clock_gs(s, r, nic_of(s, op));
  return t;
}

/* The first op of the run at the top of the heap, as its event; the run stays in the heap
   with its next op's ts while it has ops (their ts are consecutive: none falls between). */
static ev run_next(sim *s) {
  ev *top = &s->h[0];
  int32_t *run = s->runs[ev_id(top)];
  ev e = ev_make(top->t, ev_ts(top), EV_OP, s->runops[run[0]++]);
  if (run[0] < run[1]) {
    top->w += UINT64_C(1) << 33;   /* the next op's ts */
    heap_sift(s->h, s->nh);
  } else {
    heap_pop(s->h, &s->nh);
  }
  return e;
}

/* Queues the ops that became executable, rank by rank, sends, receives, local ops, each
   kind in the order the ops became executable (LogGOPSim's order with a stable sort). */
static void queue_ready(sim *s) {
  for (int64_t i = 0; i < s->nready; i++) {
    int32_t op = s->ready[i];
    s->key[i] = (uint64_t)s->g->rank[op] << 34 | (uint64_t)type_rank(s->g->kind[op]) << 32 | (uint64_t)i;
  }
  sort_keys(s);
  for (int64_t i = 0, j; i < s->nready; i = j) {
    ps_t t = queued_at(s, s->ready[s->key[i] & 0xffffffffu]);
    int32_t *run = s->runs[s->nruns];
    run[0] = (int32_t)s->nrunops;
    for (j = i; j < s->nready && s->key[j] >> 32 == s->key[i] >> 32; j++) {
      int32_t op = s->ready[s->key[j] & 0xffffffffu];
      if (j > i && queued_at(s, op) != t) break;
      s->runops[s->nrunops++] = op;
    }
    run[1] = (int32_t)s->nrunops;
    push(s, ev_make(t, s->ts, EV_RUN, s->nruns++));
    s->ts += (uint64_t)(j - i);
  }
  s->nready = 0;
}

static ps_t local_cost(const sim *s, int32_t op) {
  uint64_t b = s->g->bytes[op];
  if (s->g->kind[op] == IR_CALC) return (ps_t)b * 1000;   /* GOAL calc: ns */
  uint64_t r = s->rdv_bytes ? s->rdv_bytes[op] : 0;   /* its bytes next to rendezvous messages */
  if (r > b) r = b;
  return (ps_t)r * s->rcopy + (ps_t)(b - r) * s->copy;
}

/* How many bytes copy c writes (w) or reads (!w) within [a, a + n): by the hull of its blocks
   on that side (a strided copy's blocks between the message's count too). */
static uint64_t copy_overlap(const cdag_graph *g, int32_t c, int w, uint64_t a, uint64_t n) {
  ir_blocks b = ir_copy_blocks(g, c);
  uint64_t lo = w ? g->addr[c] : g->addr2[c], hi = lo + (w ? b.to_last : b.from_last) + b.len;
  uint64_t from = lo > a ? lo : a, to = hi < a + n ? hi : a + n;
  return to > from ? to - from : 0;
}

/* Under rcopy, the bytes each copy moves next to a message above S that MPI moves (not one to
   self): those a copy the send depends on writes within its buffer (filling it), and those a
   copy that depends on the receive reads within its buffer (emptying it); a copy merely
   ordered after a receive (a blocking receive orders every later op) moves none. A copy the
   lowering merged from several unpacks counts each message's part. O(n + dependencies). */
static int mark_rdv_copies(sim *s) {
  const cdag_graph *g = s->g;
  if (!(s->rcopy > 0)) return CDAG_OK;
  s->rdv_bytes = calloc((size_t)g->nops + 1, sizeof *s->rdv_bytes);
  if (!s->rdv_bytes) return CDAG_NOMEM("LogGP model");
  for (int32_t op = 0; op < g->nops; op++) {
    int send = g->kind[op] == IR_SEND, recv = g->kind[op] == IR_RECV;
    if ((!send && !recv) || g->bytes[op] <= s->S || s->partner[op] < 0 || g->rank[s->partner[op]] == g->rank[op]) continue;
    const int32_t *at = send ? g->pred : g->succ, *start = send ? g->pred_start : g->succ_start;
    for (int32_t k = start[op]; k < start[op + 1]; k++)
      if (g->kind[at[k]] == IR_COPY) s->rdv_bytes[at[k]] += copy_overlap(g, at[k], send, g->addr[op], g->bytes[op]);
  }
  return CDAG_OK;
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
  int32_t op = ev_id(&e), r = g->rank[op];
  int cpu = cpu_of(s, op), nic = nic_of(s, op);
  uint64_t size = g->bytes[op];
  if (ev_kind(&e) == EV_MSG) {  /* op is the send; the receiver handles its message */
    int32_t q = s->partner[op], rr = g->rank[q];
    int64_t xo = res_cpu(s, rr, cpu), xg = res_gr(s, rr, nic);
    int self = self_priced(s, op);
    if (!self && (s->clock[xo] > e.t || s->clock[xg] > e.t)) {
      park(s, e);
      return;
    }
    if (!self) {
      ps_t wire, cpu_bytes;
      byte_terms(s, size, &wire, &cpu_bytes);
      s->clock[xo] = e.t + s->o + (cpu_bytes > wire ? cpu_bytes : wire) + s->queue * s->posted[rr];
      s->clock[xg] = e.t + s->g_ + wire;
    }
    if (!(s->st[q] & ST_POSTED)) {
      s->st[q] |= ST_ARRIVED;
      return;
    }
    if (size > s->S && !self) rendezvous_done(s, op, e.t, cpu, nic);
    s->posted[rr] -= !self;
    mark_done(s, q);
    return;
  }
  switch (g->kind[op]) {
  case IR_SEND: {
    int64_t xo = res_cpu(s, r, cpu), xg = res_gs(s, r, nic);
    int self = self_priced(s, op);
    if (s->clock[xo] > e.t || (!self && s->clock[xg] > e.t)) {
      park(s, e);
      return;
    }
    mark_started(s, op);
    if (self) {
      ps_t copied = (ps_t)size * s->copy;
      s->clock[xo] = e.t + copied;
      push_msg(s, ev_make(e.t + copied, s->ts++, EV_MSG, op));
      mark_done(s, op);
      return;
    }
    ps_t wire, cpu_bytes;
    byte_terms(s, size, &wire, &cpu_bytes);
    s->clock[xo] = e.t + s->o + cpu_bytes;
    s->clock[xg] = e.t + s->g_ + wire;
    push_msg(s, ev_make(e.t + s->o + latency(s, size, wire), s->ts++, EV_MSG, op));
    if (size <= s->S) mark_done(s, op);
    return;
  }
  case IR_RECV:
    mark_started(s, op);
    if (!(s->st[op] & ST_ARRIVED)) {
      s->st[op] |= ST_POSTED;
      s->posted[r] += !self_priced(s, op);   /* a local copy waits in no MPI queue */
      return;
    }
    if (size > s->S && !self_priced(s, op)) rendezvous_done(s, s->partner[op], e.t, cpu, nic);
    mark_done(s, op);
    return;
  default: {
    int64_t xo = res_cpu(s, r, cpu);
    if (s->clock[xo] > e.t) {
      park(s, e);
      return;
    }
    s->clock[xo] = e.t + local_cost(s, op);
    mark_done(s, op);
    return;
  }
  }
}

/* A wake, taken from the heap or its FIFO: its CPU's first event runs now if all it needs
   is free, as LogGOPSim's retry of it would, and the CPU's next wake is armed after that;
   if what it needs was taken meanwhile, the wake moves to the CPU's true next key. */
static void wake(sim *s, ev w) {
  int64_t c = ev_id(&w);
  cpu_wake *k = &s->wk[c];
  if (!k->armed || w.t != k->t || ev_ts(&w) != k->ts) return;   /* stale: re-armed since */
  ps_t t = 0;
  uint64_t ts = 0;
  int64_t x = cpu_next(s, c, &t, &ts);
  assert(x >= 0 && !key_less(t, ts, w.t, ev_ts(&w)));
  if (key_less(w.t, ev_ts(&w), t, ts)) {
    push_wake(s, wake_event(s, c, t, ts));
    return;
  }
  k->armed = 0;
  ev e = unpark(s, x);
  e.t = t;
  step(s, e);   /* parks nothing: what e needs is free */
  if (cpu_next(s, c, &t, &ts) >= 0) push_wake(s, wake_event(s, c, t, ts));
}

static int events_left(const sim *s) {
  int any = s->nh > 0 || fifo_has(&s->msgs);
  for (int k = 0; k < WAKE_FIFOS && !any; k++) any = fifo_has(&s->wakes[k]);
  return any;
}

/* The next event, from wherever it waits. */
static void next_event(sim *s) {
  int src = next_source(s);
  if (src == SRC_MSG) step(s, fifo_pop(&s->msgs));
  else if (src >= SRC_WAKE) wake(s, fifo_pop(&s->wakes[src - SRC_WAKE]));
  else if (ev_kind(&s->h[0]) == EV_WAKE) wake(s, heap_pop(s->h, &s->nh));
  else step(s, ev_kind(&s->h[0]) == EV_RUN ? run_next(s) : heap_pop(s->h, &s->nh));
}

/* Counters, the CSR of start successors, the clocks. */
static int sim_init(sim *s, const cdag_graph *g, const match_result *m, const loggp_params *lp) {
  int64_t n = g->nops;
  *s = (sim){.g = g, .partner = m->partner, .L = to_ps(lp->L), .o = to_ps(lp->o), .g_ = to_ps(lp->g),
             .G = to_ps(lp->G), .O = to_ps(lp->O), .copy = to_ps(lp->copy), .rcopy = to_ps(lp->rcopy), .queue = to_ps(lp->queue), .S = lp->S, .lp = lp, .ncpu = 1, .nnic = 1};
  /* Bounds: clocks in int64 picoseconds, wait-queue nodes in int32, queues per rank, CPU and
     NIC. The sum of every op's longest cost bounds every clock; a message's queue charge is at
     most queue times its rank's receives (counted in posted, zeroed after). */
  s->posted = calloc((size_t)g->nprocs + 1, sizeof *s->posted);
  if (!s->posted) return CDAG_NOMEM("LogGP model");
  double bound = 0, per_byte = (double)(s->G > s->O ? s->G : s->O);
  if ((double)s->copy > per_byte) per_byte = (double)s->copy;
  if ((double)s->rcopy > per_byte) per_byte = (double)s->rcopy;
  for (int64_t i = 0; i < n; i++) {
    int32_t cpu = g->cpu ? g->cpu[i] : -1, nic = g->nic ? g->nic[i] : -1;
    if (cpu >= LOGGP_MAX_UNITS || nic >= LOGGP_MAX_UNITS)
      return cdag__error(CDAG_ERR_UNSUPPORTED, "LogGP model: rank %d op %lld names cpu %d / nic %d; the model takes "
                         "numbers below %d", g->rank[i], (long long)i, cpu, nic, LOGGP_MAX_UNITS);
    if (cpu >= s->ncpu) s->ncpu = cpu + 1;
    if (nic >= s->nnic) s->nnic = nic + 1;
    bound += (double)g->bytes[i] * (g->kind[i] == IR_CALC ? 1000.0 : per_byte) + (double)(s->L + s->o + s->g_) * 2;
    if (lp->ntab && g->kind[i] != IR_CALC)
      bound += 1e6 * (tab_at(lp, lp->tab_pair, (double)g->bytes[i]) + tab_at(lp, lp->tab_round, (double)g->bytes[i]));
    s->posted[g->rank[i]] += g->kind[i] == IR_RECV;
  }
  for (int32_t r = 0; r < g->nprocs; r++) bound += (double)s->queue * (double)s->posted[r] * (double)s->posted[r];
  memset(s->posted, 0, ((size_t)g->nprocs + 1) * sizeof *s->posted);
  if (bound > 4e18)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "LogGP model: the graph's costs add up to %.3g s, beyond the model's "
                       "picosecond clock (about 4.6e6 s)", bound * 1e-12);
  if (2 * (n + 1) > INT32_MAX || (double)g->nprocs * s->ncpu * (1 + 2 * s->nnic) > 1e9)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "LogGP model: %lld ops on %d ranks with %d CPUs and %d NICs each is too "
                       "large", (long long)n, g->nprocs, s->ncpu, s->nnic);
  size_t m1 = (size_t)n + 1;
  s->need_done = malloc(m1 * sizeof *s->need_done);
  s->need_start = calloc(m1, sizeof *s->need_start);
  s->ss_start = calloc(m1 + 1, sizeof *s->ss_start);
  s->ss = malloc((size_t)(g->nsdeps + 1) * sizeof *s->ss);
  s->st = calloc(m1, 1);
  int hrc = heap_alloc(s, (int64_t)m1);   /* runs, messages in flight, wakes; grows if needed */
  s->ready = malloc(m1 * sizeof *s->ready);
  s->key = malloc(m1 * sizeof *s->key);
  s->key2 = malloc(m1 * sizeof *s->key2);
  s->bucket = malloc((3 * (size_t)g->nprocs + 1) * sizeof *s->bucket);
  s->nres = (int64_t)g->nprocs * (s->ncpu + 2 * s->nnic);
  s->clock = calloc((size_t)s->nres + 1, sizeof *s->clock);
  s->nq = (int64_t)g->nprocs * s->ncpu * (1 + 2 * (int64_t)s->nnic);
  s->q = calloc((size_t)s->nq + 1, sizeof *s->q);
  s->wk = calloc((size_t)g->nprocs * (size_t)s->ncpu, sizeof *s->wk);
  s->runs = malloc(m1 * sizeof *s->runs);   /* every op is queued once, a run at least one */
  s->runops = malloc(m1 * sizeof *s->runops);
  if (hrc || !s->need_done || !s->need_start || !s->ss_start || !s->ss || !s->st || !s->ready || !s->key ||
      !s->key2 || !s->bucket || !s->clock || !s->q || !s->wk || !s->runs || !s->runops)
    return CDAG_NOMEM("LogGP model");
  for (int32_t r = 0; r < g->nprocs; r++)   /* the clocks each queue's events need */
    for (int c = 0; c < s->ncpu; c++) {
      s->q[queue_id(s, Q_CPU, r, c, 0)] = (wait_queue){.a = res_cpu(s, r, c), .b = -1};
      for (int k = 0; k < s->nnic; k++) {
        s->q[queue_id(s, Q_SEND, r, c, k)] = (wait_queue){.a = res_cpu(s, r, c), .b = res_gs(s, r, k)};
        s->q[queue_id(s, Q_MSG, r, c, k)] = (wait_queue){.a = res_cpu(s, r, c), .b = res_gr(s, r, k)};
      }
    }
  for (int64_t i = 0; i < n; i++) s->need_done[i] = g->pred_start[i + 1] - g->pred_start[i];
  for (int64_t d = 0; d < g->nsdeps; d++) {
    s->need_start[g->sdep[2 * d + 1]]++;
    s->ss_start[g->sdep[2 * d] + 2]++;
  }
  for (int64_t i = 0; i < n; i++) s->ss_start[i + 2] += s->ss_start[i + 1];
  for (int64_t d = 0; d < g->nsdeps; d++) s->ss[s->ss_start[g->sdep[2 * d] + 1]++] = g->sdep[2 * d + 1];
  return mark_rdv_copies(s);
}

static void sim_free(sim *s) {
  free(s->need_done); free(s->need_start); free(s->ss_start); free(s->ss); free(s->st); free(s->posted); free(s->rdv_bytes);
  free(s->hbase);
  for (int64_t x = 0; s->q && x < s->nq; x++) free(s->q[x].w);
  free(s->msgs.e);
  for (int k = 0; k < WAKE_FIFOS; k++) free(s->wakes[k].e);
  free(s->ready); free(s->key); free(s->key2); free(s->bucket); free(s->clock); free(s->q);
  free(s->wk); free(s->runs); free(s->runops);
}

static int run(const cdag_graph *g, const int32_t *partner, const loggp_params *lp, double *time, int *rank_max) {
  sim s;
  match_result m = {.nops = g->nops, .partner = (int32_t *)partner};
  int rc = sim_init(&s, g, &m, lp);
  if (!rc) {
    for (int64_t i = 0; i < g->nops; i++) maybe_ready(&s, (int32_t)i);
    queue_ready(&s);
    while (events_left(&s) && !s.nomem) {
      next_event(&s);
      queue_ready(&s);
    }
    if (s.nomem) rc = CDAG_NOMEM("LogGP events");
    else if (s.ndone != g->nops)
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
  return rc;
}

const char *loggp_table_check(const loggp_params *lp) {
  if (lp->ntab < 0 || lp->ntab > LOGGP_TAB_MAX) return "a table of costs by size holds 0 to " LOGGP_TAB_STR " sizes";
  for (int i = 0; i < lp->ntab; i++) {
    if (!(lp->tab_size[i] >= 1 && lp->tab_size[i] <= 0x1p62) || (i && lp->tab_size[i] <= lp->tab_size[i - 1]))
      return "the table's sizes must rise from 1 byte, each above the last";
    if (!(lp->tab_pair[i] >= 0 && lp->tab_pair[i] <= 1e9 && lp->tab_round[i] >= 0 && lp->tab_round[i] <= 1e9))
      return "the table's times must lie in [0, 1e9] us";
  }
  return NULL;
}

double loggp_fit_queue(double e16, double e512) {
  double q = (e512 / 512 - e16 / 16) / ((513.0 - 17.0) / 2);
  return q > 0 ? q : 0;
}

void loggp_fit_row(double e1, double ek, int k, double queue, double *pair, double *round) {
  double p = (ek - queue * k * (k + 1) / 2) / k;
  *pair = p > 0 ? p : 0;
  *round = e1 > 0 ? e1 : 0;
}

static int check_args(const cdag_graph *g, const loggp_params *lp, const double *time) {
  if (!g || !lp || !time) return cdag__error(CDAG_ERR_ARG, "exec_loggp: NULL argument");
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "exec_loggp: the graph is not finalized");
  if (!(lp->L >= 0 && lp->o >= 0 && lp->g >= 0 && lp->G >= 0 && lp->O >= 0 && lp->copy >= 0 && lp->queue >= 0 &&
        lp->rcopy >= 0) ||
      lp->L > 1e9 || lp->o > 1e9 || lp->g > 1e9 || lp->G > 1e9 || lp->O > 1e9 || lp->copy > 1e9 || lp->queue > 1e9 ||
      lp->rcopy > 1e9)
    return cdag__error(CDAG_ERR_ARG, "exec_loggp: LogGP parameters must lie in [0, 1e9] us");
  const char *why = loggp_table_check(lp);
  return why ? cdag__error(CDAG_ERR_ARG, "exec_loggp: %s", why) : CDAG_OK;
}

/* partner NULL: matched here, on the graph with its dependency lists. */
static int model(const cdag_graph *g, const int32_t *partner, const loggp_params *lp, double *time, int *rank_max) {
  int rc = check_args(g, lp, time);
  if (rc) return rc;
  ir_deps_view v;
  match_result m = {0};
  rc = ir_deps_view_open(g, &v);
  if (rc == CDAG_OK && !partner && (rc = match_run(v.g, &m)) == CDAG_OK) partner = m.partner;
  if (rc == CDAG_OK) rc = run(v.g, partner, lp, time, rank_max);
  match_free(&m);
  ir_deps_view_close(&v);
  return rc;
}

int exec_loggp_paired(const cdag_graph *g, const int32_t *partner, const loggp_params *lp, double *time,
                      int *rank_max) {
  if (!partner) return cdag__error(CDAG_ERR_ARG, "exec_loggp_paired: NULL partner");
  return model(g, partner, lp, time, rank_max);
}

int exec_loggp(const cdag_graph *g, const loggp_params *lp, double *time, int *rank_max) {
  return model(g, NULL, lp, time, rank_max);
}

/* cdag — src/stage/stage.c: levels of a graph that computes, and its stage graphs.
 *
 * Three steps (stage.h has the rules): levels (levels.c); the computations listed with what each
 * reads; then one pass over every rank's program order appends each communication op to its
 * stage's graph (a native call as a call, which writes its messages again; a message that
 * lands late as a receive into a staging buffer and a copy out of it). */
#include <stdlib.h>
#include <string.h>

#include "base/imap.h"
#include "stage/stage.h"
#include "stage/stage_int.h"

int stage_has_computes(const cdag_graph *g) {
  for (int64_t i = 0; (g->cw_len || g->cut) && i < g->nops; i++)
    if (ir_is_compute(g, i) || ir_cuts(g, i)) return 1;
  return 0;
}

void stage_steps_free(stage_steps *st) {
  free(st->computes);
  free(st->since);
  free(st->temps);
  free(st->woff);
  *st = (stage_steps){0};
}

void stage_split_free(stage_split *s) {
  for (int32_t k = 0; s->graph && k < s->nstages; k++) ir_graph_free(s->graph[k]);
  for (int32_t k = 0; s->orig && k < s->nstages; k++) free(s->orig[k]);
  free(s->graph);
  free(s->orig);
  stage_steps_free(&s->steps);
  *s = (stage_split){0};
}

/* ---- computations ---- */

static int cmp_compute(const void *x, const void *y) {
  const stage_compute *a = x, *b = y;
  if (a->after != b->after) return a->after < b->after ? -1 : 1;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return (a->pos > b->pos) - (a->pos < b->pos);
}

/* The range op writes, if any. */
static int written(const cdag_graph *g, int32_t op, uint64_t *addr, uint64_t *len) {
  *addr = g->addr[op];
  switch (g->kind[op]) {
    case IR_RECV: case IR_REDUCE: case IR_COPY: *len = g->bytes[op]; break;
    case IR_CALC: *len = ir_is_compute(g, op) ? g->cw_len[op] : 0; break;
    default: *len = 0;
  }
  return *len > 0;
}

static int add_range(stage_range **r, int64_t *n, int64_t *cap, int32_t rank, uint64_t addr, uint64_t len) {
  int rc = base_grow((void **)r, *n, cap, 1, sizeof **r, "stages");
  if (rc == CDAG_OK) (*r)[(*n)++] = (stage_range){rank, addr, len};
  return rc;
}

/* Computation op as plans run it, its listed blocks' offsets copied to st->woff. */
static int compute_of(const cdag_graph *g, int32_t op, int32_t after, int32_t pos, stage_steps *st, stage_compute *c) {
  ir_blocks b = ir_write_blocks(g, op);
  *c = (stage_compute){.op = op, .rank = g->rank[op], .after = after, .pos = pos, .cost = g->bytes[op],
                       .waddr = g->addr[op], .raddr = g->addr2[op], .rlen = g->cr_len[op], .wlen = g->cw_len[op],
                       .wn = b.n, .wstride = b.to, .wat = -1};
  if (c->rlen == IR_READS_ALL) c->raddr = 0;
  if (!b.to_at) return CDAG_OK;
  int rc = base_grow((void **)&st->woff, st->nwoff, &st->woffcap, (int64_t)b.n, sizeof *st->woff, "stages");
  if (rc) return rc;
  memcpy(st->woff + st->nwoff, b.to_at, (size_t)b.n * sizeof *st->woff);
  c->wat = st->nwoff;
  st->nwoff += (int64_t)b.n;
  return CDAG_OK;
}

typedef struct { stage_steps *st; int64_t *cap; int32_t rank; } read_into;

static int add_read_part(void *ctx, uint64_t lo, uint64_t hi) {
  read_into *x = ctx;
  return add_range(&x->st->since, &x->st->nsince, x->cap, x->rank, lo, hi - lo);
}

/* A range a computation reading all reads: its bytes outside scratch (finalize.c's rule). */
static int add_read(const cdag_graph *g, stage_steps *st, int64_t *cap, int32_t rank, uint64_t addr, uint64_t len) {
  read_into x = {st, cap, rank};
  uint64_t hi = addr + len < addr ? UINT64_MAX : addr + len;
  return ir_each_outside_scratch(g, rank, addr, hi, add_read_part, &x);
}

/* Marks (AWAITED) the receives of rank r that a later join completes: finalize.c's rule for
   when a computation reading all reads a receive (at that join, else at its place), and
   every op of a nonblocking call (read from the wait naming it on, if one does). */
enum { AWAITED = 1, PENDING = 2 };

static void mark_awaited(const cdag_graph *g, int32_t r, uint8_t *state) {
  for (int32_t i = g->rank_start[r]; i < g->rank_start[r + 1]; i++) {
    int32_t op = g->rank_ops[i];
    if (ir_is_nb_call(g, op)) {   /* its ops are its predecessors of its call; no wait naming it: never read */
      for (int32_t e = g->pred_start[op]; e < g->pred_start[op + 1]; e++)
        if (g->call[g->pred[e]] == g->call[op]) state[g->pred[e]] |= AWAITED;
      continue;
    }
    if (!ir_is_calc_join(g, op)) continue;
    for (int32_t e = g->pred_start[op]; e < g->pred_start[op + 1]; e++) {
      int32_t p = g->pred[e];
      if (g->kind[p] == IR_RECV && !g->join[p] && g->rank[p] == r && g->pos[p] < g->pos[op])
        state[p] |= AWAITED;   /* not a blocking one: that completes at its place */
    }
  }
}

/* The bytes pending writes cover (receives and nonblocking calls' writes not completed yet):
   a computation reading all reads none of them, even where a completed op wrote them before
   (MPI lets the program read nothing a pending operation writes; reading them would make the
   computation race with the write). Disjoint pieces, each with the number of pending writes
   over it (one, unless the program wrote one buffer twice at once); no piece has none. */
typedef struct {
  stage_pieces p;        /* value: the pending writes over the piece */
  stage_range *out; int64_t outcap;   /* since_outside's ranges, kept for the next one */
} cover;

/* One more (d = 1) or one fewer (d = -1) pending write over [lo, hi). */
static int cover_add(cover *c, uint64_t lo, uint64_t hi, int d) {
  int rc = lo < hi ? stage_piece_split(&c->p, lo) : CDAG_OK;
  if (rc == CDAG_OK && lo < hi) rc = stage_piece_split(&c->p, hi);
  for (uint64_t at = lo; rc == CDAG_OK && at < hi;) {
    uint64_t k = at;
    int64_t i = base_imap_find(&c->p.at, &k, BASE_IMAP_AT_OR_ABOVE);
    uint64_t next = i < 0 || k > hi ? hi : k;
    if (next > at && d > 0) rc = stage_piece_add(&c->p, at, next, 1);   /* a gap */
    if (rc || i < 0 || k >= hi) break;
    if ((c->p.v[i] += d) == 0) rc = base_imap_del(&c->p.at, k);
    at = c->p.hi[i];
  }
  return rc;
}

/* The parts of [lo, hi) no pending write covers, appended to *out. */
static int cover_outside(const cover *c, int32_t rank, uint64_t lo, uint64_t hi, stage_range **out, int64_t *n,
                         int64_t *cap) {
  uint64_t k = lo;
  int64_t i = base_imap_find(&c->p.at, &k, BASE_IMAP_AT_OR_BELOW);
  if (i >= 0 && c->p.hi[i] > lo) lo = c->p.hi[i];
  int rc = CDAG_OK;
  while (rc == CDAG_OK && lo < hi) {
    k = lo;
    i = base_imap_find(&c->p.at, &k, BASE_IMAP_AT_OR_ABOVE);
    uint64_t stop = i < 0 || k > hi ? hi : k;
    if (stop > lo) rc = add_range(out, n, cap, rank, lo, stop - lo);
    if (i < 0) break;
    lo = c->p.hi[i];
  }
  return rc;
}

/* The span of bytes op writes (a strided copy's, blocks and gaps). */
static void write_span(const cdag_graph *g, int32_t op, uint64_t *lo, uint64_t *hi) {
  uint64_t a, len;
  if (!written(g, op, &a, &len)) len = 0;
  ir_blocks b = ir_op_blocks(g, op);   /* written: len is its bytes (a computation's, its blocks') */
  *lo = a;
  *hi = len ? a + b.to_last + b.len : a;
}

/* The ranges a computation reading all reads anew, st->since[from ..], less what pending
   writes cover. */
static int since_outside(cover *c, stage_steps *st, int64_t from, int64_t *scap) {
  int64_t k = 0;
  int rc = CDAG_OK;
  if (st->nsince == from || base_imap_empty(&c->p.at)) return CDAG_OK;
  for (int64_t i = from; i < st->nsince && rc == CDAG_OK; i++)
    rc = cover_outside(c, st->since[i].rank, st->since[i].addr, st->since[i].addr + st->since[i].len, &c->out, &k,
                       &c->outcap);
  st->nsince = from;
  for (int64_t i = 0; i < k && rc == CDAG_OK; i++)
    rc = add_range(&st->since, &st->nsince, scap, c->out[i].rank, c->out[i].addr, c->out[i].len);
  return rc;
}

/* A pending write completed: its range is read from then on. */
static int complete_one(const cdag_graph *g, int32_t p, uint8_t *state, stage_steps *st, int64_t *scap, cover *c) {
  uint64_t a, len, lo, hi;
  if (!(state[p] & PENDING)) return CDAG_OK;
  state[p] = 0;
  write_span(g, p, &lo, &hi);
  int rc = cover_add(c, lo, hi, -1);
  return rc == CDAG_OK && written(g, p, &a, &len) ? add_read(g, st, scap, g->rank[p], a, len) : rc;
}

/* The pending writes the join op completes: their ranges are read from then on. */
static int complete_recvs(const cdag_graph *g, int32_t op, uint8_t *state, stage_steps *st, int64_t *scap, cover *c) {
  int rc = CDAG_OK;
  if (!ir_is_calc_join(g, op)) return CDAG_OK;
  for (int32_t e = g->pred_start[op]; e < g->pred_start[op + 1] && rc == CDAG_OK; e++) {
    int32_t p = g->pred[e];
    for (int32_t e2 = g->pred_start[p]; ir_is_nb_call(g, p) && e2 < g->pred_start[p + 1] && rc == CDAG_OK; e2++)
      if (g->call[g->pred[e2]] == g->call[p]) rc = complete_one(g, g->pred[e2], state, st, scap, c);
    if (rc == CDAG_OK) rc = complete_one(g, p, state, st, scap, c);
  }
  return rc;
}

/* The computations of g with `after` from lvl (NULL: -1), and the ranges each that reads
   all reads anew: what the rank's ops wrote since its previous one (a receive a later join
   completes, from that join on), less what pending writes cover then. */
static int list_computes(const cdag_graph *g, const int32_t *lvl, stage_steps *st) {
  int64_t ccap = 0, scap = 0;
  uint8_t *state = calloc((size_t)(g->nops ? g->nops : 1), 1);
  cover pending = {0};
  int rc = state ? CDAG_OK : CDAG_NOMEM("stages");
  for (int32_t r = 0; r < g->nprocs && rc == CDAG_OK; r++) {
    int64_t mark = st->nsince;
    mark_awaited(g, r, state);
    stage_pieces_clear(&pending.p);
    for (int32_t i = g->rank_start[r]; i < g->rank_start[r + 1] && rc == CDAG_OK; i++) {
      int32_t op = g->rank_ops[i];
      uint64_t a, len;
      if ((rc = complete_recvs(g, op, state, st, &scap, &pending))) break;
      if (ir_reads_all(g, op) && (rc = since_outside(&pending, st, mark, &scap))) break;
      if (ir_is_compute(g, op)) {
        rc = base_grow((void **)&st->computes, st->ncomputes, &ccap, 1, sizeof *st->computes, "stages");
        if (rc) break;
        stage_compute *c = &st->computes[st->ncomputes++];
        if ((rc = compute_of(g, op, lvl ? lvl[op] : -1, i - g->rank_start[r], st, c))) break;
        if (ir_reads_all(g, op)) {
          c->since_first = mark, c->nsince = st->nsince - mark;
          mark = st->nsince;
        }
      }
      if (!written(g, op, &a, &len)) continue;
      if (state[op] & AWAITED) {   /* a receive, a nonblocking call's write */
        uint64_t lo, hi;
        state[op] |= PENDING;
        write_span(g, op, &lo, &hi);
        if ((rc = cover_add(&pending, lo, hi, 1))) break;
        continue;
      }
      ir_blocks b = ir_op_blocks(g, op);
      for (uint64_t k = 0; k < b.n && rc == CDAG_OK; k++) rc = add_read(g, st, &scap, r, a + ir_block_to(&b, k), b.len);
    }
  }
  free(state);
  stage_pieces_free(&pending.p);
  free(pending.out);
  if (rc == CDAG_OK) base_sort(st->computes, st->ncomputes, sizeof *st->computes, cmp_compute);
  return rc;
}

int stage_list_computes(const cdag_graph *g, stage_steps *st) {
  *st = (stage_steps){0};
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "stages: graph is not finalized");
  int rc = list_computes(g, NULL, st);
  if (rc) stage_steps_free(st);
  return rc;
}

/* ---- stage graphs ---- */

typedef struct {
  const cdag_graph *g;
  const match_result *m;
  const int32_t *lvl;
  stage_split *out;
  int32_t *id;           /* the graph's op -> its op in its stage's graph, -1 none */
  int64_t *ocap;         /* per stage: capacity of out->orig[k] */
  int64_t tcap;
  uint64_t temp_top;     /* next staging address of the rank being emitted */
} emitter;

static int copy_facts(const emitter *e, cdag_graph *s, int32_t op, int32_t to) {
  const cdag_graph *g = e->g;
  int rc = CDAG_OK;
  if (g->line && g->line[op]) rc = ir_set_line(s, to, g->line[op]);
  if (rc == CDAG_OK && g->label && g->label[op]) {
    const char *l = ir_label(g, op);
    rc = ir_set_label(s, to, l, (int64_t)strlen(l));
  }
  if (rc == CDAG_OK && g->join && g->join[op] == IR_JOIN_AFTER) rc = ir_set_join(s, to, IR_JOIN_AFTER);
  return rc;
}

/* Stage k's ops appended since it had `from` stand for the graph's op. */
static int note_orig(emitter *e, int32_t k, int64_t from, int32_t op) {
  int64_t n = e->out->graph[k]->nops;
  int rc = base_grow((void **)&e->out->orig[k], from, &e->ocap[k], n - from, sizeof **e->out->orig, "stages");
  for (int64_t i = from; i < n && rc == CDAG_OK; i++) e->out->orig[k][i] = op;
  return rc;
}

/* A receive whose send left stages earlier: into a staging buffer then, copied out now. */
static int emit_late_recv(emitter *e, int32_t op) {
  const cdag_graph *g = e->g;
  int32_t snd = e->m->partner[op], r = g->rank[op], a, b, ks = e->lvl[snd], kr = e->lvl[op];
  uint64_t n = g->bytes[snd], at = e->temp_top;
  int64_t from_s = e->out->graph[ks]->nops, from_r = e->out->graph[kr]->nops;
  e->temp_top += (n + 7) & ~7ull;
  int rc = add_range(&e->out->steps.temps, &e->out->steps.ntemps, &e->tcap, r, at, n);
  /* appended as it is (a one-sided op's message pair has a tag below 0, which ir_add_recv refuses) */
  if (rc == CDAG_OK) rc = ir_append(e->out->graph[ks], IR_RECV, r, g->peer[op], g->tag[op], at, 0, n, &a);
  if (rc == CDAG_OK) rc = copy_facts(e, e->out->graph[ks], op, a);
  if (rc == CDAG_OK) rc = ir_add_copy(e->out->graph[kr], r, at, g->addr[op], n, &b);
  if (rc == CDAG_OK) rc = copy_facts(e, e->out->graph[kr], op, b);
  if (rc == CDAG_OK) rc = note_orig(e, ks, from_s, op);
  if (rc == CDAG_OK) rc = note_orig(e, kr, from_r, op);
  if (rc == CDAG_OK) e->id[op] = b;
  return rc;
}

static int emit_op(emitter *e, int32_t op) {
  const cdag_graph *g = e->g;
  cdag_graph *s = e->out->graph[e->lvl[op]];
  int os = g->os ? g->os[op] : IR_OS_NONE, rc;
  int32_t to;
  int64_t from = s->nops;
  if (os == IR_OS_COLL_PART) return CDAG_OK;   /* its call writes it again */
  if (os == IR_OS_COLL) {
    const ir_call *c = &g->calls[g->call[op]];
    rc = ir_add_coll_call(s, g->rank[op], c, ir_call_lists(g, c), &to);
  } else if (g->kind[op] == IR_RECV && e->lvl[e->m->partner[op]] < e->lvl[op]) {
    return emit_late_recv(e, op);
  } else {
    rc = ir_append(s, g->kind[op], g->rank[op], g->peer[op], g->tag[op], g->addr[op], g->addr2 ? g->addr2[op] : 0,
                   g->bytes[op], &to);
    if (rc == CDAG_OK && ir_is_strided(g, op)) rc = ir_set_blocks(s, to, ir_copy_blocks(g, op));
  }
  if (rc == CDAG_OK) rc = copy_facts(e, s, op, to);
  if (rc == CDAG_OK) rc = note_orig(e, e->lvl[op], from, op);
  if (rc == CDAG_OK) e->id[op] = to;
  return rc;
}

static int new_stage_graphs(const cdag_graph *g, stage_split *out) {
  out->graph = calloc((size_t)out->nstages, sizeof *out->graph);
  out->orig = calloc((size_t)out->nstages, sizeof *out->orig);
  if (!out->graph || !out->orig) return CDAG_NOMEM("stages");
  int rc = CDAG_OK;
  for (int32_t k = 0; k < out->nstages && rc == CDAG_OK; k++) {
    rc = ir_graph_new(g->nprocs, -1, &out->graph[k]);
    for (int64_t c = 0; c < g->ncomms && rc == CDAG_OK; c++)
      rc = ir_add_comm(out->graph[k], g->comm_id[c], g->members + g->comm_first[c], g->comm_n[c]);
  }
  return rc;
}

/* The stage of the last op touching each scratch area of one-sided accesses (*at: per
   scratch region of g, -1 none or another kind). An access's area is its own, touched only by
   its target's side: after that stage nothing reads it. A rank's areas were added in
   ascending order (onesided.c), so each op finds its area by binary search: O(n log n). */
static int acc_scratch_stages(const emitter *e, int32_t **at) {
  const cdag_graph *g = e->g;
  int64_t *first = calloc((size_t)g->nprocs + 1, sizeof *first), *idx = malloc((size_t)(g->nscratch ? g->nscratch : 1) * sizeof *idx);
  int32_t *last = malloc((size_t)(g->nscratch ? g->nscratch : 1) * sizeof *last);
  if (!first || !idx || !last) {
    free(first); free(idx); free(last);
    return CDAG_NOMEM("stages");
  }
  for (int64_t k = 0; k < g->nscratch; k++) {
    last[k] = -1;
    if (ir_in_acc_scratch(g->scr_addr[k])) first[g->scr_rank[k] + 1]++;
  }
  for (int r = 0; r < g->nprocs; r++) first[r + 1] += first[r];
  int64_t *fill = calloc((size_t)g->nprocs, sizeof *fill);
  for (int64_t k = 0; fill && k < g->nscratch; k++)
    if (ir_in_acc_scratch(g->scr_addr[k])) idx[first[g->scr_rank[k]] + fill[g->scr_rank[k]]++] = k;
  for (int64_t op = 0; fill && g->os && op < g->nops; op++) {
    if (g->os[op] != IR_OS_PARTNER) continue;
    for (int side = 0; side < 2; side++) {
      uint64_t a = side ? (g->addr2 ? g->addr2[op] : 0) : g->addr[op];
      if (!ir_in_acc_scratch(a) || (side && g->kind[op] != IR_COPY && g->kind[op] != IR_REDUCE)) continue;
      int64_t lo = first[g->rank[op]], hi = first[g->rank[op] + 1];   /* the last area starting at or below a */
      while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (g->scr_addr[idx[mid]] <= a) lo = mid;
        else hi = mid;
      }
      if (lo == first[g->rank[op] + 1]) continue;
      int64_t k = idx[lo];
      if (g->scr_addr[k] <= a && a - g->scr_addr[k] < g->scr_len[k] && e->lvl[op] > last[k]) last[k] = e->lvl[op];
    }
  }
  int rc = fill ? CDAG_OK : CDAG_NOMEM("stages");
  free(fill); free(first); free(idx);
  if (rc) free(last);
  *at = rc ? NULL : last;
  return rc;
}

/* Explicit dependencies between ops of one stage; the program's scratch where it is dead
   (scratch.c); the scratch of one-sided accesses (cdag's own: no computation reads it) in the
   stage that touches it last; native collectives' in the last stage, when no computation
   runs after it. */
static int carry_deps_scratch(const emitter *e, int scratch) {
  const cdag_graph *g = e->g;
  int rc = CDAG_OK;
  for (int64_t d = 0; d < g->ndeps && rc == CDAG_OK; d++) {
    int32_t a = g->dep[2 * d], b = g->dep[2 * d + 1];
    if (ir_is_compute(g, a) || ir_is_compute(g, b) || e->lvl[a] != e->lvl[b] || e->id[a] < 0 || e->id[b] < 0) continue;
    if (g->os && (g->os[a] == IR_OS_COLL_PART || g->os[b] == IR_OS_COLL_PART)) continue;
    rc = ir_add_dep(e->out->graph[e->lvl[a]], e->id[a], e->id[b], 0);
  }
  int32_t *acc = NULL;
  if (rc == CDAG_OK) rc = acc_scratch_stages(e, &acc);
  for (int64_t k = 0; k < g->nscratch && rc == CDAG_OK; k++) {
    if (g->scr_addr[k] < IR_COLL_SCRATCH && !ir_in_acc_scratch(g->scr_addr[k])) continue;   /* scratch.c's */
    int at = ir_in_acc_scratch(g->scr_addr[k]) && acc[k] >= 0 ? acc[k] : e->out->nstages - 1;
    if (scratch || ir_in_acc_scratch(g->scr_addr[k]))
      rc = ir_add_scratch(e->out->graph[at], g->scr_rank[k], g->scr_addr[k], g->scr_len[k]);
  }
  free(acc);
  return rc == CDAG_OK ? stage_place_scratch(g, e->m, e->lvl, e->out) : rc;
}

static int emit_all(const cdag_graph *g, const match_result *m, const int32_t *lvl, stage_split *out) {
  emitter e = {g, m, lvl, out, malloc((size_t)(g->nops ? g->nops : 1) * sizeof *e.id),
               calloc((size_t)out->nstages, sizeof *e.ocap), 0, 0};
  int rc = e.id && e.ocap ? new_stage_graphs(g, out) : CDAG_NOMEM("stages");
  for (int64_t i = 0; e.id && i < g->nops; i++) e.id[i] = -1;
  for (int32_t r = 0; r < g->nprocs && rc == CDAG_OK; r++) {
    e.temp_top = STAGE_TEMP_BASE;
    for (int32_t i = g->rank_start[r]; i < g->rank_start[r + 1] && rc == CDAG_OK; i++)
      if (!ir_is_compute(g, g->rank_ops[i])) rc = emit_op(&e, g->rank_ops[i]);
  }
  int late = 0;
  for (int64_t c = 0; c < out->steps.ncomputes; c++) late |= out->steps.computes[c].after == out->nstages - 1;
  if (rc == CDAG_OK) rc = carry_deps_scratch(&e, !late);
  free(e.id);
  free(e.ocap);
  return rc;
}

int stage_cut(cdag_graph *g, const match_result *m, stage_split *out) {
  *out = (stage_split){0};
  if (g->state == IR_BUILDING || !m || m->nops != g->nops)
    return cdag__error(CDAG_ERR_STATE, "stages: a finalized graph and its match expected");
  int rc = ir_need_deps(g);
  int32_t *lvl = malloc((size_t)(g->nops ? g->nops : 1) * sizeof *lvl);
  if (rc == CDAG_OK && !lvl) rc = CDAG_NOMEM("stages");
  if (rc == CDAG_OK) rc = stage_levels(g, m, lvl);
  out->nstages = 1;
  for (int64_t op = 0; rc == CDAG_OK && op < g->nops; op++)
    if (!ir_is_compute(g, op) && lvl[op] + 1 > out->nstages) out->nstages = lvl[op] + 1;
  if (rc == CDAG_OK) rc = list_computes(g, lvl, &out->steps);
  out->steps.nstages = out->nstages;
  for (int64_t op = 0; rc == CDAG_OK && op < g->nops; op++) {   /* why, besides computations */
    out->steps.cut_mixed += ir_cuts(g, op) == IR_CUT_MIXED;
    out->steps.cut_delivered += ir_cuts(g, op) == IR_CUT_DELIVERED;
  }
  if (rc == CDAG_OK) rc = emit_all(g, m, lvl, out);
  free(lvl);
  if (rc) stage_split_free(out);
  return rc;
}

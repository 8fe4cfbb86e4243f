/* cdag — src/stage/scratch.c: the program's scratch, stage by stage.
 *
 * Scratch means "its last contents need not be delivered". In a graph cut into stages, the
 * last contents of a stage are the next stages' origins, so a scratch byte is scratch in a
 * stage only when no later op reads it before writing it again: a typed message's packing
 * area or a reduction's temporary, written and read again every iteration, is dead between
 * the iterations, and a stage that delivered it would send its bytes twice (as the area's
 * contents and as the message's). One walk per rank in program order, with an interval map
 * over the rank's scratch from each piece to the stage that wrote it last: a communication
 * op of a later stage reading it, or a computation after that stage, makes it live in that
 * stage. Each stage graph then declares the scratch bytes it writes that stay dead.
 * The scratch of native collectives (cdag's own, in calls a stage runs whole) is placed by
 * stage.c, as is one-sided accesses' (in the stage that touches it last: dead after it, as
 * this walk finds too).
 * Cost: O(n log n) for n ops (a strided side in scratch: one step per block). */
#include <stdlib.h>

#include "base/sort.h"
#include "stage/stage.h"
#include "stage/stage_int.h"

enum { NO_STAGE = -1 };   /* a piece no stage's result holds (untouched, computed, or live already) */

typedef struct { int32_t stage, rank; uint64_t lo, hi; } span;

typedef struct {
  const cdag_graph *g;
  const match_result *m;
  int32_t rank;
  stage_pieces p;         /* value: the stage whose write the piece holds, or NO_STAGE */
  span *written, *live;   /* what stages wrote into scratch; what later ops read of it */
  int64_t nwritten, wcap, nlive, lcap;
} walk;

static int push_span(span **v, int64_t *n, int64_t *cap, span s) {
  int rc = base_grow((void **)v, *n, cap, 1, sizeof **v, "stages");
  if (rc == CDAG_OK) (*v)[(*n)++] = s;
  return rc;
}

/* [lo, hi) (inside scratch) now holds what stage w wrote (NO_STAGE: a computation). */
static int write_piece(walk *k, uint64_t lo, uint64_t hi, int32_t w) {
  int rc = stage_piece_split(&k->p, lo);
  if (rc == CDAG_OK) rc = stage_piece_split(&k->p, hi);
  for (uint64_t s = lo; rc == CDAG_OK;) {
    int64_t i = base_imap_find(&k->p.at, &s, BASE_IMAP_AT_OR_ABOVE);
    if (i < 0 || s >= hi) break;
    rc = base_imap_del(&k->p.at, s);
    s = k->p.hi[i];
  }
  if (rc == CDAG_OK) rc = stage_piece_add(&k->p, lo, hi, w);
  if (rc == CDAG_OK && w != NO_STAGE) rc = push_span(&k->written, &k->nwritten, &k->wcap, (span){w, k->rank, lo, hi});
  return rc;
}

/* [lo, hi) (inside scratch) read by an op that sees the results of stages below `limit`:
   the pieces those stages wrote are live there, whole (a piece holds part of one write, and a
   stage must not leave part of a reduced element dead); once said, they need not be again. */
static int read_piece(walk *k, uint64_t lo, uint64_t hi, int32_t limit) {
  uint64_t s = lo;
  int64_t i = base_imap_find(&k->p.at, &s, BASE_IMAP_AT_OR_BELOW);
  if (i < 0 || k->p.hi[i] <= lo) s = lo, i = base_imap_find(&k->p.at, &s, BASE_IMAP_AT_OR_ABOVE);
  int rc = CDAG_OK;
  while (rc == CDAG_OK && i >= 0 && s < hi) {
    if (k->p.v[i] != NO_STAGE && k->p.v[i] < limit) {
      rc = push_span(&k->live, &k->nlive, &k->lcap, (span){k->p.v[i], k->rank, s, k->p.hi[i]});
      k->p.v[i] = NO_STAGE;
    }
    s = k->p.hi[i];
    if (s >= hi) break;   /* the piece reaches past the range: no look-up for the next one */
    i = base_imap_find(&k->p.at, &s, BASE_IMAP_AT_OR_ABOVE);
  }
  return rc;
}

/* The scratch of the rank (merged intervals, below native calls' areas) that [lo, hi) meets,
   each part handed to read_piece (write 0) or write_piece. */
static int touch(walk *k, uint64_t lo, uint64_t hi, int write, int32_t stage) {
  const cdag_graph *g = k->g;
  int32_t a = g->scr_start[k->rank], z = g->scr_start[k->rank + 1];
  if (hi > IR_COLL_SCRATCH) hi = IR_COLL_SCRATCH;   /* native calls' own: their parts are not the stage's */
  while (a < z) {   /* the first interval ending above lo */
    int32_t m = a + (z - a) / 2;
    if (g->scr_hi[m] <= lo) a = m + 1;
    else z = m;
  }
  int rc = CDAG_OK;
  for (; rc == CDAG_OK && a < g->scr_start[k->rank + 1] && g->scr_lo[a] < hi; a++) {
    uint64_t x = g->scr_lo[a] > lo ? g->scr_lo[a] : lo, y = g->scr_hi[a] < hi ? g->scr_hi[a] : hi;
    if (x < y) rc = write ? write_piece(k, x, y, stage) : read_piece(k, x, y, stage);
  }
  return rc;
}

/* Every block of one side (at `base`, b's from side or to side). */
static int touch_blocks(walk *k, uint64_t base, const ir_blocks *b, int to, int write, int32_t stage) {
  uint64_t last = to ? b->to_last : b->from_last, stride = to ? b->to : b->from;
  const uint64_t *at = to ? b->to_at : b->from_at;
  if (!at && stride == b->len) return touch(k, base, base + last + b->len, write, stage);   /* back to back */
  int32_t a = k->g->scr_start[k->rank], z = k->g->scr_start[k->rank + 1];
  if (!at && (base + last + b->len <= k->g->scr_lo[a] || base >= k->g->scr_hi[z - 1])) return CDAG_OK;   /* hull outside */
  int rc = CDAG_OK;
  for (uint64_t j = 0; j < b->n && rc == CDAG_OK; j++) {
    uint64_t x = base + (at ? at[j] : j * stride);
    rc = touch(k, x, x + b->len, write, stage);
  }
  return rc;
}

/* A communication op of stage s: its reads see stages below s, its writes are stage s's. */
static int walk_op(walk *k, int32_t op, int32_t s) {
  const cdag_graph *g = k->g;
  uint64_t a = g->addr[op], n = g->bytes[op];
  int rc = CDAG_OK;
  switch (g->kind[op]) {
    case IR_SEND: return touch(k, a, a + n, 0, s);
    case IR_RECV:   /* the bytes its send sends: a shorter message leaves the rest as it was */
      if (k->m->partner[op] >= 0 && g->bytes[k->m->partner[op]] < n) n = g->bytes[k->m->partner[op]];
      return touch(k, a, a + n, 1, s);
    case IR_REDUCE:
      rc = touch(k, g->addr2[op], g->addr2[op] + n, 0, s);
      if (rc == CDAG_OK) rc = touch(k, a, a + n, 0, s);
      return rc == CDAG_OK ? touch(k, a, a + n, 1, s) : rc;
    case IR_COPY: {
      ir_blocks b = ir_copy_blocks(g, op);
      rc = touch_blocks(k, g->addr2[op], &b, 0, 0, s);
      return rc == CDAG_OK ? touch_blocks(k, a, &b, 1, 1, s) : rc;
    }
    default: return CDAG_OK;
  }
}

/* A computation running after stage `after` (c: its entry in steps): it sees every stage up to
   it; what it writes no stage delivers. */
static int walk_compute(walk *k, const stage_steps *st, const stage_compute *c) {
  int rc = CDAG_OK;
  if (c->rlen == IR_READS_ALL)
    for (int64_t i = c->since_first; i < c->since_first + c->nsince && rc == CDAG_OK; i++)
      rc = touch(k, st->since[i].addr, st->since[i].addr + st->since[i].len, 0, c->after + 1);
  else if (c->rlen)
    rc = touch(k, c->raddr, c->raddr + c->rlen, 0, c->after + 1);
  ir_blocks b = ir_write_blocks(k->g, c->op);
  return rc == CDAG_OK && c->wlen ? touch_blocks(k, c->waddr, &b, 1, 1, NO_STAGE) : rc;
}

static int span_cmp(const void *x, const void *y) {
  const span *a = x, *b = y;
  if (a->stage != b->stage) return a->stage < b->stage ? -1 : 1;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return (a->lo > b->lo) - (a->lo < b->lo);
}

static int same_place(const span *a, const span *b) { return a->stage == b->stage && a->rank == b->rank; }

/* Is any byte of written span w live after its stage? live: sorted by (stage, rank, lo), each
   end raised to the largest end before it at its place, so the last span starting below w's
   end decides. O(log n). */
static int meets_live(const walk *k, const span *w) {
  int64_t a = 0, z = k->nlive;
  span end = {w->stage, w->rank, w->hi, w->hi};
  while (a < z) {   /* the first live span not before (stage, rank, w's end) */
    int64_t m = a + (z - a) / 2;
    if (span_cmp(&k->live[m], &end) < 0) a = m + 1;
    else z = m;
  }
  return a > 0 && same_place(&k->live[a - 1], w) && k->live[a - 1].hi > w->lo;
}

/* Declares in each stage graph the writes of its stage into scratch that are dead after it,
   each whole or not at all (a write that is live in part is delivered: its elements stay
   whole). O(n log n). */
static int declare(walk *k, stage_split *out) {
  base_sort(k->live, k->nlive, sizeof *k->live, span_cmp);
  for (int64_t i = 1; i < k->nlive; i++)
    if (same_place(&k->live[i - 1], &k->live[i]) && k->live[i - 1].hi > k->live[i].hi) k->live[i].hi = k->live[i - 1].hi;
  int rc = CDAG_OK;
  for (int64_t i = 0; i < k->nwritten && rc == CDAG_OK; i++) {
    const span *w = &k->written[i];
    if (!meets_live(k, w)) rc = ir_add_scratch(out->graph[w->stage], w->rank, w->lo, w->hi - w->lo);
  }
  return rc;
}

int stage_place_scratch(const cdag_graph *g, const match_result *m, const int32_t *lvl, stage_split *out) {
  walk k = {.g = g, .m = m};
  int32_t *comp = malloc((size_t)(g->nops ? g->nops : 1) * sizeof *comp);   /* op -> its entry in steps */
  int rc = comp ? CDAG_OK : CDAG_NOMEM("stages");
  for (int64_t c = 0; comp && c < out->steps.ncomputes; c++) comp[out->steps.computes[c].op] = (int32_t)c;
  for (int32_t r = 0; r < g->nprocs && rc == CDAG_OK; r++) {
    if (g->scr_start[r] == g->scr_start[r + 1]) continue;
    k.rank = r;
    stage_pieces_clear(&k.p);
    for (int32_t i = g->rank_start[r]; i < g->rank_start[r + 1] && rc == CDAG_OK; i++) {
      int32_t op = g->rank_ops[i];
      rc = ir_is_compute(g, op) ? walk_compute(&k, &out->steps, &out->steps.computes[comp[op]]) : walk_op(&k, op, lvl[op]);
    }
  }
  if (rc == CDAG_OK) rc = declare(&k, out);
  stage_pieces_free(&k.p);
  free(k.written); free(k.live); free(comp);
  return rc;
}

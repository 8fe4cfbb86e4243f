/* cdag — src/exec/mpi/rebind.c: other buffers, same schedule (cdag_schedule_rebind).
 *
 * A double-buffered code builds its graph on buffer set A and wants to run the same
 * communication on B. The analysis does not depend on where the buffers are, only on how
 * they overlap, so the copy reuses the compiled part: every user address in it (plan mode:
 * slot and message pieces, copies, reduction results; graph mode: the engine's ops) is
 * moved by the caller's table, and the schedule is built again from the moved part, which
 * creates fresh MPI requests and cdag kernels on the new addresses.
 *
 * Moving must not change which bytes alias, or the plan (computed for A's overlaps) would
 * be wrong for B: each range lies inside one `from` buffer or outside all; `from` buffers
 * are pairwise disjoint, so are `to` buffers; a range left in place overlaps no `to` buffer.
 * Then two ranges overlap after the move exactly when they overlapped before. Cost:
 * O((ranges + moves) log moves); no graph, no gather, no analysis. */
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"

typedef struct {
  uint64_t from, to, len;
  int index;               /* in the caller's array, for messages */
} move;

typedef struct {
  move *by_from, *by_to;   /* the same moves sorted two ways */
  int n, rank;
} move_table;

static int cmp_from(const void *a, const void *b) {
  uint64_t x = ((const move *)a)->from, y = ((const move *)b)->from;
  return (x > y) - (x < y);
}

static int cmp_to(const void *a, const void *b) {
  uint64_t x = ((const move *)a)->to, y = ((const move *)b)->to;
  return (x > y) - (x < y);
}

/* Sorted copies of the moves, checked: non-empty, non-NULL, no wrap-around, disjoint. */
static int table_init(move_table *t, int n, const cdag_rebind *moves, int rank) {
  t->n = 0;
  t->rank = rank;
  t->by_from = malloc((size_t)(n ? n : 1) * sizeof *t->by_from);
  t->by_to = malloc((size_t)(n ? n : 1) * sizeof *t->by_to);
  if (!t->by_from || !t->by_to) return CDAG_NOMEM("rebind table");
  for (int i = 0; i < n; i++) {
    uint64_t from = (uint64_t)(uintptr_t)moves[i].from, to = (uint64_t)(uintptr_t)moves[i].to, len = moves[i].bytes;
    if (!len) continue;   /* an empty share (malloc(0) may give NULL): nothing to move */
    if (!from || !to || from + len < from || to + len < to)
      return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_schedule_rebind: move %d (from %p to %p, %zu bytes) is NULL or "
                         "wraps around", rank, i, moves[i].from, moves[i].to, moves[i].bytes);
    t->by_from[t->n] = t->by_to[t->n] = (move){from, to, len, i};
    t->n++;
  }
  n = t->n;
  qsort(t->by_from, (size_t)n, sizeof *t->by_from, cmp_from);
  qsort(t->by_to, (size_t)n, sizeof *t->by_to, cmp_to);
  for (int i = 1; i < n; i++) {
    const move *a = &t->by_from[i - 1], *b = &t->by_from[i];
    if (a->from + a->len > b->from)
      return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_schedule_rebind: the from buffers of moves %d and %d overlap",
                         rank, a->index, b->index);
    a = &t->by_to[i - 1], b = &t->by_to[i];
    if (a->to + a->len > b->to)
      return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_schedule_rebind: the to buffers of moves %d and %d overlap",
                         rank, a->index, b->index);
  }
  return CDAG_OK;
}

/* The last move whose key (from or to) is <= addr, or -1. */
static int last_at_or_below(const move *m, int n, uint64_t addr, int by_to) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if ((by_to ? m[mid].to : m[mid].from) <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/* Does [addr, addr+len) overlap the buffer of some move (keyed by from or to)? */
static const move *overlapping(const move *m, int n, uint64_t addr, uint64_t len, int by_to) {
  int k = last_at_or_below(m, n, addr + len - 1, by_to);
  if (k < 0) return NULL;
  uint64_t lo = by_to ? m[k].to : m[k].from;
  return lo + m[k].len > addr ? &m[k] : NULL;
}

/* Moves one range the schedule touches, or says why it cannot be moved. */
static int move_range(const move_table *t, uint64_t *addr, uint64_t len, const char *what) {
  if (!len || !t->n) return CDAG_OK;
  const move *m = overlapping(t->by_from, t->n, *addr, len, 0);
  if (m) {
    if (*addr < m->from || *addr + len > m->from + m->len)
      return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_schedule_rebind: %s [%#llx, +%llu) is partly inside the from "
                         "buffer of move %d: a buffer must hold every range it overlaps", t->rank, what,
                         (unsigned long long)*addr, (unsigned long long)len, m->index);
    *addr = m->to + (*addr - m->from);
    return CDAG_OK;
  }
  if ((m = overlapping(t->by_to, t->n, *addr, len, 1)))
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_schedule_rebind: %s [%#llx, +%llu) stays where it is but "
                       "overlaps the to buffer of move %d: the copy's buffers would alias differently", t->rank,
                       what, (unsigned long long)*addr, (unsigned long long)len, m->index);
  return CDAG_OK;
}

static int move_part(const move_table *t, sched_part *p) {
  int rc = CDAG_OK;
  for (int64_t k = 0; !rc && k < p->npieces; k++)
    if (p->pieces[k].space == SP_USER)   /* a strided piece by its hull: its blocks move together */
      rc = move_range(t, &p->pieces[k].addr, part_piece_span(&p->pieces[k]), "a message piece");
  for (int64_t k = 0; !rc && k < p->ncopies; k++) {
    part_copy *c = &p->copies[k];
    rc = move_range(t, &c->src, part_copy_span(c, c->src_stride), "a copy's source");
    if (!rc && c->dst_space == SP_USER) rc = move_range(t, &c->dst, part_copy_span(c, c->dst_stride), "a copy's destination");
  }
  for (int64_t k = 0; !rc && k < p->nreds; k++) {
    part_red *r = &p->reds[k];
    rc = move_range(t, &r->dst, r->count * (uint64_t)ir_type_size(r->type), "a reduction's result");
  }
  return rc;
}

static int move_engine(const move_table *t, sched_engine *e) {
  int rc = CDAG_OK;
  for (int64_t i = 0; !rc && i < e->nops; i++) {
    if (e->kind[i] == IR_CALC) continue;
    /* a strided copy moves whole: the hull of each side (a move cuts no pattern apart) */
    uint64_t n = e->stride ? ir_stride_n(&e->stride[i]) : 0;
    ir_blocks b = n > 1 ? ir_stride_blocks(&e->stride[i], e->blkoff, e->bytes[i]) : ir_one_block(e->bytes[i]);
    uint64_t wlen = b.to_last + b.len, rlen = b.from_last + b.len;
    rc = move_range(t, &e->addr[i], wlen, ir_kind_name(e->kind[i]));
    if (!rc && (e->kind[i] == IR_REDUCE || e->kind[i] == IR_COPY))
      rc = move_range(t, &e->addr2[i], rlen, e->kind[i] == IR_COPY ? "a copy's source" : "a reduction's input");
  }
  return rc;
}

/* The moved description of s in t (nothing built yet). */
static int prepare(const cdag_schedule *s, int n, const cdag_rebind *moves, cdag_schedule *t) {
  move_table mt = {0};
  int rc = n < 0 || (n > 0 && !moves)
               ? cdag__error(CDAG_ERR_ARG, "rank %d: cdag_schedule_rebind: %d moves at %p", s->rank, n, (const void *)moves)
               : table_init(&mt, n, moves, s->rank);
  if (!rc && (s->mode == PART_STAGES || s->ncomps))   /* a computation's function works on the old buffers */
    rc = cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: cdag_schedule_rebind of a graph that computes (cdag_compute): "
                     "its functions work on the buffers the graph was built on; build the graph on the new ones",
                     s->rank);
  if (!rc) rc = part_clone(&s->core->part, &t->core->part);
  if (!rc && s->mode == PART_PLAN) rc = move_part(&mt, &t->core->part);
  if (!rc && s->mode == PART_GRAPH && !(rc = engine_clone(&t->eng, &s->eng))) rc = move_engine(&mt, &t->eng);
  free(mt.by_from);
  free(mt.by_to);
  return rc;
}

static char *dup_text(const char *s, int *ok) {
  char *c = s ? strdup(s) : NULL;
  if (s && !c) *ok = 0;
  return c;
}

int cdag_schedule_rebind(const cdag_schedule *s, int n, const cdag_rebind *moves, cdag_schedule **copy) {
  if (!s || !copy) return cdag__error(CDAG_ERR_ARG, "cdag_schedule_rebind: schedule or copy is NULL");
  *copy = NULL;
  cdag_schedule *t = calloc(1, sizeof *t);
  if (t && !(t->core = sched_core_new())) {
    free(t);
    t = NULL;
  }
  int rc = t ? prepare(s, n, moves, t) : CDAG_NOMEM("schedule");
  if (t) {   /* a core of its own: the moved part */
    t->comm = MPI_COMM_NULL;
    t->rank = s->rank;
    t->nprocs = s->nprocs;
    int ok = 1;
    t->core->report_text = dup_text(s->core->report_text, &ok);
    t->core->report_json = dup_text(s->core->report_json, &ok);
    if (!rc && !ok) rc = CDAG_NOMEM("report");
  }
  if ((rc = exec_agree(s->comm, s->rank, s->nprocs, rc))) goto fail;
  int mrc = MPI_Comm_dup(s->comm, &t->core->comm);   /* a core of its own runs on a communicator of its own */
  if (mrc != MPI_SUCCESS) {
    t->core->comm = MPI_COMM_NULL;
    rc = sched_mpi_error(mrc, "MPI_Comm_dup", s->rank);
  } else {
    MPI_Comm_set_errhandler(t->core->comm, MPI_ERRORS_RETURN);
    t->comm = t->core->comm;
    rc = sched_build_part(t, NULL);
  }
  if ((rc = exec_agree(s->comm, s->rank, s->nprocs, rc))) goto fail;
  t->core->arena = exec_arena_share(s->core->arena);
  *copy = t;
  return CDAG_OK;
fail:
  if (t) sched_destroy(t);
  return rc;
}

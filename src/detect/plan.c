/* cdag — src/detect/plan.c: from detected collectives to the plan.
 *
 * 1. Merge: protos of the same kind, root, member set (and type/op for reductions) become
 *    one collective, placed where the first of them was found; its slots then hold several
 *    pieces (noncontiguous blocks, an hindexed datatype at execution time). A merged
 *    collective must still be one MPI call: every filled receive slot as large as the send
 *    slot feeding it, reductions' slots of one size (coll_consistent). Protos that fill
 *    different slots (an allgather that moves a member's own block, one that does not) can
 *    break that; such a group is split by which slots each proto fills, and protos that
 *    fill the same slots always merge consistently.
 * 2. Slots: every covered tuple contributes a send piece and a receive piece to the slots
 *    the kind's columns (ir/coll_kinds.h) name; a counting pass sizes every slot, a second pass
 *    places the pieces in found order (no sort), adjacent pieces are joined.
 * 3. Residual: uncovered transfers grouped into one message per (src, dst); residual
 *    reductions; kept syncs.
 * 4. Snapshots: per rank, the bytes the plan reads as origins that it also writes (a
 *    replication's send slot reads a result, not an origin): the rank's read and write
 *    spans, bucketed by rank and side, each sorted by a natural merge sort (they come in
 *    runs), merged and intersected.
 * Cost: O(n log n) for n tuples (radix sorts of the residual; merging sorts protos). */
#include <stdlib.h>
#include <string.h>

#include "detect/detect_int.h"

/* Where a collective's pieces go: two passes over its tuples, the first counting pieces per
   slot iov (iovs[].n), the second writing each at the end of its slot's range. Tuples are
   visited in found order both times, so merged blocks stay aligned across slots. */
typedef struct {
  cdag_plan *p;
  const det_coll *c;
  int fill;
} piece_buf;

static int piece_push(piece_buf *b, int side, int32_t member, int32_t slot, uint64_t addr, uint64_t len) {
  const det_coll *c = b->c;
  det_iov *v = det_slot(b->p, c, side, member, slot);
  if (v == &det_no_iov)
    return cdag__error(CDAG_ERR_PLAN, "plan: a %s piece of member %d of a %s, whose %s slots are the root's only",
                       side ? "send" : "receive", member, det_kind_name(c->kind), side ? "send" : "receive");
  if (b->fill) {
    b->p->pieces[v->first + v->n] = (det_piece){addr, len};
    v->bytes += len;
  }
  v->n++;
  return CDAG_OK;
}

/* ---- 1. merging ---- */

static int shape_cmp(const void *a, const void *b, void *ctx) {
  const det_state *st = ctx;
  const det_proto *x = &st->protos[*(const int64_t *)a], *y = &st->protos[*(const int64_t *)b];
  if ((x->after > 0) != (y->after > 0)) return x->after > 0 ? 1 : -1;
  if (x->after > 0) { /* replications merge when the reduces they follow do */
    int64_t xa = x->after - 1, ya = y->after - 1;
    int c = shape_cmp(&xa, &ya, ctx);
    if (c) return c;
  }
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  if (x->root != y->root) return x->root < y->root ? -1 : 1;
  if (x->nmembers != y->nmembers) return x->nmembers < y->nmembers ? -1 : 1;
  int c = memcmp(st->members + x->members_first, st->members + y->members_first, (size_t)x->nmembers * sizeof(int32_t));
  if (c) return c;
  if (x->reduction && x->ntuples && y->ntuples) {
    const df_red *rx = &st->sst->reds[st->tuples[x->tuples_first]], *ry = &st->sst->reds[st->tuples[y->tuples_first]];
    if (rx->type != ry->type) return rx->type < ry->type ? -1 : 1;
    if (rx->op != ry->op) return rx->op < ry->op ? -1 : 1;
  }
  return 0;
}

static int shape_cmp_stable(const void *a, const void *b, void *ctx) {
  int c = shape_cmp(a, b, ctx);
  if (c) return c;
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int int64_cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* ---- 2. slots ---- */

/* Index of rank among sorted members: O(1) for a contiguous range (whole communicators,
   the common case at scale), else binary search. */
static int32_t member_index(const int32_t *members, int32_t n, int32_t rank) {
  if (n > 0 && members[n - 1] - members[0] == n - 1) return rank - members[0];
  int32_t lo = 0, hi = n;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (members[mid] < rank) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Send and receive pieces of one transfer tuple of a proto, in the slots the kind's columns
   name (ir/coll_kinds.h): on a side with a slot per member, the peer's slot, else slot 0.
   One send block that every receiver reads (bcast, allgather) gets its pieces once per source. */
static int xfer_pieces(piece_buf *b, const det_proto *pr, const df_xfer *x, const int32_t *mem, int32_t n,
                       int first_of_source) {
  const ir_coll_info *in = ir_coll_get(pr->kind);
  int32_t mi = member_index(mem, n, x->src), mj = member_index(mem, n, x->dst);
  int32_t ss = in->send == IR_SLOTS_MEMBER ? mj : 0, rs = in->recv == IR_SLOTS_MEMBER ? mi : 0;
  int shared = in->send == IR_SLOTS_ONE && !in->recv_root;
  int rc = shared && !first_of_source ? CDAG_OK : piece_push(b, 1, mi, ss, x->src_addr, x->len);
  return rc ? rc : piece_push(b, 0, mj, rs, x->dst_addr, x->len);
}

static int proto_pieces(const det_state *st, piece_buf *b, const det_proto *pr, const int32_t *mem, int32_t n,
                        uint64_t *bytes) {
  int rc = CDAG_OK;
  if (ir_coll_get(pr->kind)->reduces && ir_coll_get(pr->kind)->send == IR_SLOTS_MEMBER) {
    /* block j of every member's contribution (slot j) reduces into member j */
    for (int64_t t = 0; t < pr->ntuples && rc == CDAG_OK; t++) {
      const df_red *d = &st->sst->reds[st->tuples[pr->tuples_first + t]];
      uint64_t len = d->count * (uint64_t)ir_type_size(d->type);
      int32_t j = member_index(mem, n, d->dst);
      const df_set *e = &st->sst->sets[d->set];
      for (int32_t i = 0; i < e->nruns && rc == CDAG_OK; i++) {
        const df_run *r = &st->sst->runs[e->first + i];
        for (int32_t k = r->lo; k <= r->hi && rc == CDAG_OK; k++)
          rc = piece_push(b, 1, member_index(mem, n, k), j, r->addr, len);
      }
      if (rc == CDAG_OK) rc = piece_push(b, 0, j, 0, d->dst_addr, len);
      if (t == 0) *bytes += len;
    }
    return rc;
  }
  if (pr->after > 0) { /* replication: the root sends the reduce's result, the readers receive */
    const det_proto *from = &st->protos[pr->after - 1];
    const df_red *d0 = &st->sst->reds[st->tuples[from->tuples_first]];
    uint64_t len = d0->count * (uint64_t)ir_type_size(d0->type);
    rc = piece_push(b, 1, member_index(mem, n, d0->dst), 0, d0->dst_addr, len);
    for (int64_t t = 0; t < pr->ntuples && rc == CDAG_OK; t++) {
      const df_red *d = &st->sst->reds[st->tuples[pr->tuples_first + t]];
      rc = piece_push(b, 0, member_index(mem, n, d->dst), 0, d->dst_addr, len);
    }
    *bytes += len;
    return rc;
  }
  if (pr->reduction) {
    const df_red *d0 = &st->sst->reds[st->tuples[pr->tuples_first]];
    uint64_t len = d0->count * (uint64_t)ir_type_size(d0->type);
    const df_set *e = &st->sst->sets[d0->set];
    for (int32_t i = 0; i < e->nruns && rc == CDAG_OK; i++) {
      const df_run *r = &st->sst->runs[e->first + i];
      for (int32_t k = r->lo; k <= r->hi && rc == CDAG_OK; k++)
        rc = piece_push(b, 1, member_index(mem, n, k), 0, r->addr, len);
    }
    for (int64_t t = 0; t < pr->ntuples && rc == CDAG_OK; t++) {
      const df_red *d = &st->sst->reds[st->tuples[pr->tuples_first + t]];
      rc = piece_push(b, 0, member_index(mem, n, d->dst), 0, d->dst_addr, len);
    }
    *bytes += len;
    return rc;
  }
  int is_v = ir_coll_get(pr->kind)->vector;   /* bytes: the total, not one block's */
  for (int64_t t = 0; t < pr->ntuples && rc == CDAG_OK; t++) {
    const df_xfer *x = &st->sst->xfers[st->tuples[pr->tuples_first + t]];
    const df_xfer *prev = t ? &st->sst->xfers[st->tuples[pr->tuples_first + t - 1]] : NULL;
    int first_of_source = !prev || prev->src != x->src;
    rc = xfer_pieces(b, pr, x, mem, n, first_of_source);
    if (is_v) *bytes += x->len;
  }
  if (!is_v && pr->ntuples) *bytes += st->sst->xfers[st->tuples[pr->tuples_first]].len;
  return rc;
}

/* The collective's slot iovs, all empty. */
static int reserve_iovs(cdag_plan *p, det_coll *c) {
  int64_t nslots = det_side_iovs(c, 1) + det_side_iovs(c, 0);
  int rc = base_grow((void **)&p->iovs, p->niovs, &p->cap_iovs, nslots, sizeof *p->iovs, "plan");
  if (rc) return rc;
  c->send_first = p->niovs;
  c->recv_first = p->niovs + det_side_iovs(c, 1);
  for (int64_t i = 0; i < nslots; i++) p->iovs[p->niovs + i] = (det_iov){.first = 0, .n = 0, .bytes = 0};
  p->niovs += nslots;
  return CDAG_OK;
}

/* Counted slots -> ranges of p->pieces (n back to 0 for the fill). */
static int reserve_pieces(cdag_plan *p, const det_coll *c) {
  int64_t end = p->niovs, at = p->npieces;
  for (int64_t i = c->send_first; i < end; i++) {
    p->iovs[i].first = (uint32_t)at;
    at += p->iovs[i].n;
    p->iovs[i].n = 0;
  }
  if (at > UINT32_MAX) return cdag__error(CDAG_ERR_UNSUPPORTED, "plan: more than 2^32 pieces in collectives");
  return base_grow((void **)&p->pieces, p->npieces, &p->cap_pieces, at - p->npieces, sizeof *p->pieces, "plan");
}

/* Joins adjacent pieces of each slot (a block sent in parts is one piece), compacting. */
static void join_pieces(cdag_plan *p, const det_coll *c) {
  int64_t w = p->npieces;
  for (int64_t i = c->send_first; i < p->niovs; i++) {
    det_iov *v = &p->iovs[i];
    int64_t first = w;
    for (int64_t k = 0; k < v->n; k++) {
      det_piece e = p->pieces[v->first + k];
      if (w > first && p->pieces[w - 1].addr + p->pieces[w - 1].len == e.addr) p->pieces[w - 1].len += e.len;
      else p->pieces[w++] = e;
    }
    v->first = (uint32_t)first;
    v->n = (int32_t)(w - first);
  }
  p->npieces = w;
}

/* coll_of: per proto, the collective it went into (-1: not built yet). */
static int build_collective(det_state *st, cdag_plan *p, const int64_t *group, int64_t ng, int64_t *coll_of) {
  const det_proto *pr = &st->protos[group[0]];
  const int32_t *mem = st->members + pr->members_first;
  int32_t n = pr->nmembers;
  BASE_GROW(p->colls, p->ncolls, p->cap_colls, 1, "plan");
  BASE_GROW(p->ranks, p->nranks, p->cap_ranks, n, "plan");
  det_coll *c = &p->colls[p->ncolls];
  *c = (det_coll){.kind = pr->kind, .root = pr->root, .nranks = n, .ranks_first = p->nranks, .type = -1, .op = -1};
  if (pr->after > 0) { /* its reduce was found first, so it was built first */
    if (coll_of[pr->after - 1] < 0) return cdag__error(CDAG_ERR_PLAN, "plan: a replication precedes its reduce");
    c->after = coll_of[pr->after - 1] + 1;
  }
  memcpy(p->ranks + p->nranks, mem, (size_t)n * sizeof *mem);
  p->nranks += n;
  det_kind_slots(pr->kind, n, &c->nsend_slots, &c->nrecv_slots);
  int rc = reserve_iovs(p, c);
  piece_buf b = {p, c, 0};
  for (b.fill = 0; b.fill < 2 && rc == CDAG_OK; b.fill++) {
    uint64_t bytes = 0;
    if (b.fill) rc = reserve_pieces(p, c);
    for (int64_t i = 0; i < ng && rc == CDAG_OK; i++) rc = proto_pieces(st, &b, &st->protos[group[i]], mem, n, &bytes);
    c->bytes = bytes;
  }
  for (int64_t i = 0; i < ng && rc == CDAG_OK; i++) {
    const det_proto *q = &st->protos[group[i]];
    c->ntransfers += q->ntuples;
    c->rd_pairs += q->rd_pairs;
    c->rd_pieces += q->rd_pieces;
    coll_of[group[i]] = p->ncolls;
    if (q->reduction && q->ntuples && ir_coll_get(q->kind)->reduces) {
      const df_red *d = &st->sst->reds[st->tuples[q->tuples_first]];
      c->type = d->type;
      c->op = d->op;
    }
  }
  if (rc) return rc;
  join_pieces(p, c);
  p->ncolls++;
  return CDAG_OK;
}

/* Does collective c keep detect.h's rules (the ones the simulator and the runtime check)?
   A block kind: every non-empty receive slot holds as many bytes as the send slot that
   feeds it. A reduction: each send slot the same size on every member, each receive slot
   empty or that size. O(slots): nranks^2 only for the kinds with a slot per member. */
static int coll_consistent(const cdag_plan *p, const det_coll *c) {
  const ir_coll_info *in = ir_coll_get(c->kind);
  if (in->reduces) {
    for (int32_t s = 0; s < c->nsend_slots; s++) {
      uint64_t b = det_slot(p, c, 1, 0, s)->bytes;
      for (int32_t m = 1; m < c->nranks; m++)
        if (det_slot(p, c, 1, m, s)->bytes != b) return 0;
    }
    for (int32_t j = 0; j < c->nranks; j++) {
      uint64_t rb = det_slot(p, c, 0, j, 0)->bytes, b = det_slot(p, c, 1, 0, c->nsend_slots > 1 ? j : 0)->bytes;
      if (rb && rb != b) return 0;
    }
    return 1;
  }
  int32_t rootm = det_root_member(p, c);
  if (in->rooted && rootm < 0) return 0;
  /* rooted kinds: only the root's side fans out, so O(nranks) pairs, not nranks^2 */
  int32_t i0 = in->send_root ? rootm : 0, i1 = in->send_root ? rootm + 1 : c->nranks;
  for (int32_t i = i0; i < i1; i++)
    for (int32_t j = in->recv_root ? rootm : 0; j < (in->recv_root ? rootm + 1 : c->nranks); j++) {
      int ss, rs;
      det_slot_pair(c->kind, i, j, rootm, &ss, &rs);
      if (ss < 0 || rs < 0 || ss >= c->nsend_slots || rs >= c->nrecv_slots) continue;
      uint64_t rb = det_slot(p, c, 0, j, rs)->bytes;
      if (rb && rb != det_slot(p, c, 1, i, ss)->bytes) return 0;
    }
  return 1;
}

/* Plan sizes before a collective is built, to take it back. */
typedef struct {
  int64_t ncolls, nranks, niovs, npieces;
} plan_mark;

static plan_mark plan_mark_now(const cdag_plan *p) { return (plan_mark){p->ncolls, p->nranks, p->niovs, p->npieces}; }

static void plan_rollback(cdag_plan *p, plan_mark m) {
  p->ncolls = m.ncolls;
  p->nranks = m.nranks;
  p->niovs = m.niovs;
  p->npieces = m.npieces;
}

/* Which slots proto q fills, as one byte per slot of the group's layout into bits (nslots),
   preceded by the collective a replication follows (its reduces may have split). Counts
   pieces into a scratch collective that is then taken back. */
static int proto_occupancy(det_state *st, cdag_plan *p, int64_t q, const int64_t *coll_of, uint8_t *bits,
                           int64_t nslots) {
  const det_proto *pr = &st->protos[q];
  plan_mark mk = plan_mark_now(p);
  det_coll c = {.kind = pr->kind, .root = pr->root, .nranks = pr->nmembers, .ranks_first = p->nranks};
  det_kind_slots(pr->kind, pr->nmembers, &c.nsend_slots, &c.nrecv_slots);
  BASE_GROW(p->ranks, p->nranks, p->cap_ranks, pr->nmembers, "plan");   /* det_slot finds the root there */
  memcpy(p->ranks + p->nranks, st->members + pr->members_first, (size_t)pr->nmembers * sizeof *p->ranks);
  p->nranks += pr->nmembers;
  int rc = reserve_iovs(p, &c);
  piece_buf b = {p, &c, 0};
  uint64_t bytes = 0;
  if (rc == CDAG_OK) rc = proto_pieces(st, &b, pr, st->members + pr->members_first, pr->nmembers, &bytes);
  int64_t after = pr->after > 0 ? coll_of[pr->after - 1] : -1;
  memcpy(bits, &after, sizeof after);
  for (int64_t k = 0; k < nslots && rc == CDAG_OK; k++) bits[sizeof after + k] = p->iovs[c.send_first + k].n > 0;
  plan_rollback(p, mk);
  return rc;
}

typedef struct {
  const uint8_t *bits;
  size_t size;
} occ_ctx;

static int occ_cmp(const void *a, const void *b, void *ctx) {
  const occ_ctx *o = ctx;
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  int c = memcmp(o->bits + (size_t)x * o->size, o->bits + (size_t)y * o->size, o->size);
  return c ? c : (x > y) - (x < y);
}

/* A group whose merge broke the rules: its protos grouped by the slots they fill (stable,
   so each part keeps found order), each part one collective. O(k s log k) for k protos of
   s slots, on this rare path only. */
static int build_split(det_state *st, cdag_plan *p, const int64_t *group, int64_t ng, int64_t *coll_of) {
  const det_proto *pr = &st->protos[group[0]];
  det_coll shape = {.kind = pr->kind, .nranks = pr->nmembers};
  det_kind_slots(pr->kind, pr->nmembers, &shape.nsend_slots, &shape.nrecv_slots);
  size_t size = sizeof(int64_t) + (size_t)(det_side_iovs(&shape, 1) + det_side_iovs(&shape, 0));
  uint8_t *bits = malloc((size_t)ng * size);
  int64_t *ord = malloc((size_t)ng * sizeof *ord), *part = malloc((size_t)ng * sizeof *part);
  int rc = bits && ord && part ? CDAG_OK : CDAG_NOMEM("plan");
  for (int64_t i = 0; i < ng && rc == CDAG_OK; i++) {
    ord[i] = i;
    rc = proto_occupancy(st, p, group[i], coll_of, bits + (size_t)i * size, (int64_t)(size - sizeof(int64_t)));
  }
  occ_ctx o = {bits, size};
  if (rc == CDAG_OK) base_sort_r(ord, ng, sizeof *ord, occ_cmp, &o);
  for (int64_t i = 0, j; i < ng && rc == CDAG_OK; i = j) {
    int64_t k = 0;
    for (j = i; j < ng && memcmp(bits + (size_t)ord[i] * size, bits + (size_t)ord[j] * size, size) == 0; j++)
      part[k++] = group[ord[j]];
    rc = build_collective(st, p, part, k, coll_of);
    if (rc == CDAG_OK && !coll_consistent(p, &p->colls[p->ncolls - 1]))
      rc = cdag__error(CDAG_ERR_PLAN, "plan: %s over %d ranks: a receive slot does not match its send slot",
                       det_kind_name(pr->kind), pr->nmembers);
  }
  free(bits); free(ord); free(part);
  return rc;
}

/* The transfers of protos group[0..ng) into a new array *xs (*n of them). */
static int group_xfers(const det_state *st, const int64_t *group, int64_t ng, df_xfer **xs, int64_t *n) {
  int64_t k = 0;
  for (int64_t i = 0; i < ng; i++) k += st->protos[group[i]].ntuples;
  if (!(*xs = malloc((size_t)(k ? k : 1) * sizeof **xs))) return CDAG_NOMEM("pricing");
  *n = 0;
  for (int64_t i = 0; i < ng; i++) {
    const det_proto *q = &st->protos[group[i]];
    for (int64_t t = 0; t < q->ntuples; t++) (*xs)[(*n)++] = st->sst->xfers[st->tuples[q->tuples_first + t]];
  }
  return CDAG_OK;
}

/* The pricer weighs the collective just built from group[0..ng) (det_pricer); when its
   transfers cost no more as messages, it is taken back (to mk) and they stay residual. */
static int price_last(det_state *st, cdag_plan *p, const int64_t *group, int64_t ng, int64_t *coll_of,
                      plan_mark mk) {
  det_coll *c = &p->colls[p->ncolls - 1];
  const ir_coll_info *in = ir_coll_get(c->kind);
  if (!st->pricer || in->reduces || in->send == IR_SLOTS_NONE || c->after > 0) return CDAG_OK;
  df_xfer *xs = NULL;
  int64_t n = 0;
  double coll_us = -1, msgs_us = -1;
  int rc = group_xfers(st, group, ng, &xs, &n);
  int64_t c0 = p->ncolls - 1;
  if (rc == CDAG_OK) rc = st->pricer->judge(st->pricer->ctx, p, &c0, 1, xs, n, NULL, 0, &coll_us, &msgs_us);
  free(xs);
  if (rc || coll_us < 0 || msgs_us < 0) return rc;
  c->price_coll_us = coll_us, c->price_msgs_us = msgs_us;
  if (msgs_us > coll_us) return CDAG_OK;
  char ranks[96];
  const char *kind = det_kind_name(c->kind);
  det_ranks_text(p->ranks + c->ranks_first, c->nranks, p->nprocs, ranks, sizeof ranks);
  rc = det_note(st, "left as messages: %s over %s would cost %.3f us, its %lld transfers as messages %.3f us",
                kind, ranks, coll_us, (long long)c->ntransfers, msgs_us);
  plan_rollback(p, mk);
  p->nleft++;
  for (int64_t i = 0; i < ng; i++) {
    const det_proto *q = &st->protos[group[i]];
    coll_of[group[i]] = -1;
    for (int64_t t = 0; t < q->ntuples; t++) st->xused[st->tuples[q->tuples_first + t]] = 0;
  }
  return rc;
}

/* One group of protos of one shape: merged, or split when merging breaks the rules; then
   priced (price_last). */
static int build_group(det_state *st, cdag_plan *p, const int64_t *group, int64_t ng, int64_t *coll_of) {
  plan_mark mk = plan_mark_now(p);
  int rc = build_collective(st, p, group, ng, coll_of);
  if (rc) return rc;
  /* replications follow one collective: their reduces must not have split */
  int same_after = 1;
  for (int64_t i = 1; i < ng && st->protos[group[0]].after > 0; i++)
    same_after &= coll_of[st->protos[group[i]].after - 1] == coll_of[st->protos[group[0]].after - 1];
  if (same_after && coll_consistent(p, &p->colls[p->ncolls - 1])) return price_last(st, p, group, ng, coll_of, mk);
  plan_rollback(p, mk);
  return build_split(st, p, group, ng, coll_of);
}

/* The collectives of the protos; coll_of[q]: the collective proto q went into (-1: none). */
static int build_collectives(det_state *st, cdag_plan *p, int64_t *coll_of) {
  int64_t n = st->nprotos;
  int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx), *first = malloc((size_t)(n ? n : 1) * 2 * sizeof *first);
  int rc = idx && first ? CDAG_OK : CDAG_NOMEM("plan");
  for (int64_t i = 0; i < n && rc == CDAG_OK; i++) idx[i] = i, coll_of[i] = -1;
  if (rc == CDAG_OK) base_sort_r(idx, n, sizeof *idx, shape_cmp_stable, st);
  /* groups of equal shape, ordered by where their first member was found */
  int64_t ng = 0;
  for (int64_t i = 0; i < n && rc == CDAG_OK;) {
    int64_t j = i + 1;
    while (j < n && shape_cmp(&idx[i], &idx[j], st) == 0) j++;
    first[2 * ng] = idx[i];   /* smallest index of the group (stable sort) */
    first[2 * ng + 1] = i;
    ng++;
    i = j;
  }
  base_sort(first, (size_t)ng, 2 * sizeof *first, int64_cmp);
  for (int64_t g = 0; g < ng && rc == CDAG_OK; g++) {
    int64_t i = first[2 * g + 1], j = i + 1;
    while (j < n && shape_cmp(&idx[i], &idx[j], st) == 0) j++;
    rc = build_group(st, p, idx + i, j - i, coll_of);
  }
  free(idx); free(first);
  return rc;
}

/* ---- 2b. reductions priced ----
 * A reduction (with the replications that send its result on) is weighed once every
 * collective is built: against its reduction tuples as residual reductions (each reducer
 * receiving every contribution). Those that cost no less as residual reductions are taken
 * out of the plan, and the later collectives renumbered. */

/* A group to price: a reduction with its replications, colls[0..ncolls) (the reduction first,
   in plan order), and the protos built into them, protos[0..nprotos). */
typedef struct {
  const int64_t *colls, *protos;
  int64_t ncolls, nprotos;
} red_group;

/* The reduction tuples of the group's protos into *rs. */
static int group_reds(const det_state *st, const red_group *gr, df_red **rs, int64_t *n) {
  int64_t k = 0;
  for (int64_t i = 0; i < gr->nprotos; i++) k += st->protos[gr->protos[i]].reduction ? st->protos[gr->protos[i]].ntuples : 0;
  if (!(*rs = malloc((size_t)(k ? k : 1) * sizeof **rs))) return CDAG_NOMEM("pricing");
  *n = 0;
  for (int64_t i = 0; i < gr->nprotos; i++) {
    const det_proto *pr = &st->protos[gr->protos[i]];
    for (int64_t t = 0; pr->reduction && t < pr->ntuples; t++) (*rs)[(*n)++] = st->sst->reds[st->tuples[pr->tuples_first + t]];
  }
  return CDAG_OK;
}

/* The group kept, or marked in drop with a note and its tuples residual again. */
static int price_reduction(det_state *st, cdag_plan *p, const red_group *gr, uint8_t *drop) {
  df_red *rs = NULL;
  int64_t n = 0;
  double coll_us = -1, msgs_us = -1;
  int rc = group_reds(st, gr, &rs, &n);
  if (rc == CDAG_OK) rc = st->pricer->judge(st->pricer->ctx, p, gr->colls, gr->ncolls, NULL, 0, rs, n, &coll_us, &msgs_us);
  free(rs);
  if (rc || coll_us < 0 || msgs_us < 0) return rc;
  det_coll *c = &p->colls[gr->colls[0]];
  c->price_coll_us = coll_us, c->price_msgs_us = msgs_us;
  if (msgs_us > coll_us) return CDAG_OK;
  char ranks[96];
  det_ranks_text(p->ranks + c->ranks_first, c->nranks, p->nprocs, ranks, sizeof ranks);
  rc = det_note(st, "left as residual reductions: %s over %s%s would cost %.3f us, its %lld reductions as "
                "messages %.3f us", det_kind_name(c->kind), ranks, gr->ncolls > 1 ? " with the bcast of its result" : "",
                coll_us, (long long)n, msgs_us);
  p->nleft++;
  for (int64_t i = 0; i < gr->ncolls; i++) drop[gr->colls[i]] = 1;
  for (int64_t i = 0; i < gr->nprotos; i++) {
    const det_proto *pr = &st->protos[gr->protos[i]];
    for (int64_t t = 0; t < pr->ntuples; t++) st->rused[st->tuples[pr->tuples_first + t]] = 0;
  }
  return rc;
}

/* Removes the collectives marked in drop, renumbering what replications follow. */
static void drop_collectives(cdag_plan *p, const uint8_t *drop, int64_t *newidx) {
  int64_t k = 0;
  for (int64_t c = 0; c < p->ncolls; c++) {
    newidx[c] = k;
    if (drop[c]) continue;
    p->colls[k] = p->colls[c];
    if (p->colls[k].after > 0) p->colls[k].after = newidx[p->colls[k].after - 1] + 1;
    k++;
  }
  p->ncolls = k;
}

/* The reduction collective c belongs to (itself, or the one it replicates), or -1. */
static int64_t group_of(const cdag_plan *p, int64_t c) {
  int64_t h = p->colls[c].after > 0 ? p->colls[c].after - 1 : c;
  return ir_coll_get(p->colls[h].kind)->reduces && p->colls[h].after == 0 ? h : -1;
}

/* items[0..n) (collectives, or protos through coll_of) bucketed by group into out, in order;
   start (nc + 1 entries) gets each group's first. O(n + nc). */
static void bucket(const cdag_plan *p, const int64_t *coll_of, int64_t n, int64_t nc, int64_t *start, int64_t *out) {
  memset(start, 0, (size_t)(nc + 1) * sizeof *start);
  for (int64_t i = 0; i < n; i++) {
    int64_t c = coll_of ? coll_of[i] : i, h = c >= 0 ? group_of(p, c) : -1;
    if (h >= 0) start[h + 1]++;
  }
  for (int64_t h = 0; h < nc; h++) start[h + 1] += start[h];
  int64_t *at = out + n;   /* the fill position per group: nc entries after the n of out */
  memcpy(at, start, (size_t)nc * sizeof *at);
  for (int64_t i = 0; i < n; i++) {
    int64_t c = coll_of ? coll_of[i] : i, h = c >= 0 ? group_of(p, c) : -1;
    if (h >= 0) out[at[h]++] = i;
  }
}

static int price_reductions(det_state *st, cdag_plan *p, const int64_t *coll_of) {
  int64_t nc = p->ncolls, np = st->nprotos;
  if (!st->pricer || !nc) return CDAG_OK;
  uint8_t *drop = calloc((size_t)nc, 1);
  int64_t *cs = malloc((size_t)(nc + 1) * sizeof *cs), *cl = malloc((size_t)(2 * nc + 1) * sizeof *cl);
  int64_t *ps = malloc((size_t)(nc + 1) * sizeof *ps), *pl = malloc((size_t)(np + nc + 1) * sizeof *pl);
  int rc = drop && cs && cl && ps && pl ? CDAG_OK : CDAG_NOMEM("pricing");
  if (rc == CDAG_OK) {
    bucket(p, NULL, nc, nc, cs, cl);        /* a replication comes after its reduce: plan order keeps it second */
    bucket(p, coll_of, np, nc, ps, pl);
  }
  for (int64_t h = 0; h < nc && rc == CDAG_OK; h++)
    if (cs[h + 1] > cs[h]) {
      red_group gr = {cl + cs[h], pl + ps[h], cs[h + 1] - cs[h], ps[h + 1] - ps[h]};
      rc = price_reduction(st, p, &gr, drop);
    }
  if (rc == CDAG_OK) drop_collectives(p, drop, cl);
  free(drop);
  free(cs);
  free(cl);
  free(ps);
  free(pl);
  return rc;
}

/* ---- 3. residual ---- */

/* The transfers no collective took, into *out (*n of them). Detection searched a view
   whose strided transfers were split into blocks (det_view_open): a strided transfer none
   of whose blocks a collective took is residual whole again; of one that lost some, the
   others are residual one by one. */
static int uncovered(const det_state *st, df_xfer **out, int64_t *n) {
  const df_sst *s = st->sst, *w = st->whole;
  int64_t *taken = w ? calloc((size_t)(w->nxfers ? w->nxfers : 1), sizeof *taken) : NULL;
  if (w && !taken) return CDAG_NOMEM("plan");
  for (int64_t i = 0; w && i < s->nxfers; i++) taken[st->origin[i]] += st->xused[i];
  int64_t m = 0;
  for (int64_t i = 0; i < s->nxfers; i++) m += !st->xused[i];
  *out = malloc((size_t)(m ? m : 1) * sizeof **out);
  if (!*out) {
    free(taken);
    return CDAG_NOMEM("plan");
  }
  *n = 0;
  for (int64_t i = 0; w && i < w->nxfers; i++)   /* whole: strided ones none of whose blocks went */
    if (w->xfers[i].blocks > 1 && !taken[i]) (*out)[(*n)++] = w->xfers[i];
  for (int64_t i = 0; i < s->nxfers; i++)
    if (!st->xused[i] && !(w && w->xfers[st->origin[i]].blocks > 1 && !taken[st->origin[i]])) (*out)[(*n)++] = s->xfers[i];
  free(taken);
  return CDAG_OK;
}

/* Uncovered transfers, one message per (src, dst) in (src, dst, src_addr) order; arrays
   sized to what is left, not to all transfers. */
static int build_residual(det_state *st, cdag_plan *p) {
  const df_sst *s = st->sst;
  df_xfer *left = NULL;
  int64_t n = 0, nr = 0;
  int rc = uncovered(st, &left, &n);
  if (rc) return rc;
  for (int64_t i = 0; i < s->nreds; i++) nr += !st->rused[i];
  int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
  p->xfers = malloc((size_t)(n ? n : 1) * sizeof *p->xfers);
  p->reds = malloc((size_t)(nr ? nr : 1) * sizeof *p->reds);
  if (!idx || !p->xfers || !p->reds) {
    free(idx);
    free(left);
    return CDAG_NOMEM("plan");
  }
  for (int64_t i = 0; i < n; i++) idx[i] = i;
  base_key k[] = {BASE_KEY(left, src), BASE_KEY(left, dst), BASE_KEY(left, src_addr)};
  rc = base_sort_fields(idx, n, k, 3);
  int64_t nmsgs = 0;
  for (int64_t i = 0; i < n; i++)
    nmsgs += i == 0 || left[idx[i]].src != left[idx[i - 1]].src || left[idx[i]].dst != left[idx[i - 1]].dst;
  p->msgs = malloc((size_t)(nmsgs ? nmsgs : 1) * sizeof *p->msgs);
  if (!p->msgs) rc = CDAG_NOMEM("plan");
  for (int64_t i = 0; i < n && rc == CDAG_OK; i++) {
    const df_xfer *x = &left[idx[i]];
    det_msg *last = p->nmsgs ? &p->msgs[p->nmsgs - 1] : NULL;
    if (!last || last->src != x->src || last->dst != x->dst)
      p->msgs[p->nmsgs++] = (det_msg){.src = x->src, .dst = x->dst, .first = i, .n = 0, .bytes = 0};
    p->msgs[p->nmsgs - 1].n++;
    p->msgs[p->nmsgs - 1].bytes += df_xfer_bytes(x);
    p->xfers[p->nxfers++] = *x;
  }
  free(idx);
  free(left);
  for (int64_t i = 0; i < s->nreds && rc == CDAG_OK; i++)
    if (!st->rused[i]) p->reds[p->nreds++] = s->reds[i];
  p->syncs = st->syncs;
  p->nsyncs = st->nsyncs;
  st->syncs = NULL;
  st->nsyncs = 0;
  return rc;
}

/* ---- 4. snapshots ---- */

typedef struct {
  uint64_t lo, hi;
} span;

/* Spans bucketed by rank and side (bucket 2 rank for reads, 2 rank + 1 for writes) in two
   passes over the plan: the first counts (at[bucket + 1]++), the second fills
   e[at[bucket]++]; no growth, no global sort. */
typedef struct {
  span *e;
  int64_t *at;   /* 2 nprocs + 1 */
  int fill;
} span_buf;

static int span_push(span_buf *b, int32_t rank, int write, uint64_t addr, uint64_t len) {
  if (len == 0) return CDAG_OK;
  int64_t k = 2 * (int64_t)rank + write;
  if (!b->fill) b->at[k + 1]++;
  else b->e[b->at[k]++] = (span){addr, addr + len};
  return CDAG_OK;
}

/* End of the run of e[0..n) ascending by start that begins at i. */
static int64_t run_end(const span *e, int64_t i, int64_t n) {
  while (++i < n && e[i].lo >= e[i - 1].lo) {}
  return i;
}

/* Merges the ascending runs e[i..m) and e[m..j) into out[i..j). */
static void merge_spans(const span *e, int64_t i, int64_t m, int64_t j, span *out) {
  int64_t a = i, b = m, o = i;
  while (a < m && b < j) out[o++] = e[b].lo < e[a].lo ? e[b++] : e[a++];
  while (a < m) out[o++] = e[a++];
  while (b < j) out[o++] = e[b++];
}

/* Reverses each strictly descending run of e[0..n) in place. */
static void reverse_descents(span *e, int64_t n) {
  for (int64_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && e[j].lo < e[j - 1].lo; j++) {}
    for (int64_t a = i, b = j - 1; a < b; a++, b--) {
      span t = e[a];
      e[a] = e[b];
      e[b] = t;
    }
  }
}

/* Sorts the spans e[0..n) of one bucket by start with tmp (n spans) as scratch; returns
   the buffer that holds them sorted. A natural merge sort: descending runs reversed, then
   runs merged pairwise, back and forth, no comparator calls. Spans come in runs (a
   collective's slots in member order: an alltoall's receives descend in address, its
   sends ascend), so this is O(n log runs); qsort's callbacks were most of the plan's time
   on an alltoall. */
static span *sort_spans(span *e, span *tmp, int64_t n) {
  reverse_descents(e, n);
  for (int64_t m = run_end(e, 0, n); m < n; m = run_end(e, 0, n)) {
    for (int64_t i = 0; i < n; m = i < n ? run_end(e, i, n) : n) {
      int64_t j = m < n ? run_end(e, m, n) : n;
      merge_spans(e, i, m, j, tmp);
      i = j;
    }
    span *t = e; e = tmp; tmp = t;
  }
  return e;
}

static int coll_spans(const cdag_plan *p, span_buf *b) {
  int rc = CDAG_OK;
  for (int64_t c = 0; c < p->ncolls && rc == CDAG_OK; c++) {
    const det_coll *k = &p->colls[c];
    for (int32_t m = 0; m < k->nranks && rc == CDAG_OK; m++) {
      int32_t rank = p->ranks[k->ranks_first + m];
      for (int side = 0; side < 2 - (k->after > 0); side++) {   /* side 1 (reads): a replication reads no origin */
        int32_t per = side ? k->nsend_slots : k->nrecv_slots;
        if (det_side_rooted(k, side) && m != det_root_member(p, k)) continue;
        for (int32_t s = 0; s < per && rc == CDAG_OK; s++) {
          const det_iov *v = det_slot(p, k, side, m, s);
          for (int32_t i = 0; i < v->n && rc == CDAG_OK; i++) {
            const det_piece *pc = &p->pieces[v->first + i];
            rc = span_push(b, rank, !side, pc->addr, pc->len);
          }
        }
      }
    }
  }
  return rc;
}

static int residual_spans(const cdag_plan *p, span_buf *b) {
  int rc = CDAG_OK;
  for (int64_t i = 0; i < p->nxfers && rc == CDAG_OK; i++)   /* a strided transfer's blocks, each */
    for (uint64_t j = 0; j < df_xfer_blocks(&p->xfers[i]) && rc == CDAG_OK; j++) {
      df_xfer x = df_xfer_block(&p->xfers[i], j);
      if ((rc = span_push(b, x.src, 0, x.src_addr, x.len))) break;
      rc = span_push(b, x.dst, 1, x.dst_addr, x.len);
    }
  for (int64_t i = 0; i < p->nreds && rc == CDAG_OK; i++) {
    const df_red *d = &p->reds[i];
    uint64_t len = d->count * (uint64_t)ir_type_size(d->type);
    const df_set *e = &p->sst->sets[d->set];
    for (int32_t k = 0; k < e->nruns && rc == CDAG_OK; k++) {
      const df_run *r = &p->sst->runs[e->first + k];
      for (int32_t q = r->lo; q <= r->hi && rc == CDAG_OK; q++) rc = span_push(b, q, 0, r->addr, len);
    }
    if (rc == CDAG_OK) rc = span_push(b, d->dst, 1, d->dst_addr, len);
  }
  return rc;
}

/* Merges sorted, possibly overlapping spans e[0..n) in place; returns how many are left. */
static int64_t merge_overlaps(span *e, int64_t n) {
  if (n == 0) return 0;
  int64_t out = 0;
  for (int64_t k = 1; k < n; k++) {
    if (e[k].lo <= e[out].hi) {
      if (e[k].hi > e[out].hi) e[out].hi = e[k].hi;
    } else {
      e[++out] = e[k];
    }
  }
  return out + 1;
}

static int push_snap(cdag_plan *p, int64_t *cap, int32_t rank, uint64_t lo, uint64_t hi) {
  int rc = base_grow((void **)&p->snaps, p->nsnaps, cap, 1, sizeof *p->snaps, "snapshots");
  if (rc) return rc;
  p->snaps[p->nsnaps++] = (det_range){rank, lo, hi - lo};
  return CDAG_OK;
}

/* Intersects rank's reads rd[0..nr) with its writes wr[0..nw), each sorted and merged
   first, with tmp (as many spans as the larger) as scratch. */
static int rank_snapshots(cdag_plan *p, int64_t *cap, int32_t rank, span *rd, int64_t nr, span *wr, int64_t nw,
                          span *tmp) {
  span *r = sort_spans(rd, tmp, nr);
  nr = merge_overlaps(r, nr);
  if (r != rd) memcpy(rd, r, (size_t)nr * sizeof *rd); /* tmp is for the writes now */
  span *w = sort_spans(wr, tmp, nw);
  nw = merge_overlaps(w, nw);
  int rc = CDAG_OK;
  for (int64_t i = 0, j = 0; i < nr && j < nw && rc == CDAG_OK;) {
    uint64_t lo = rd[i].lo > w[j].lo ? rd[i].lo : w[j].lo;
    uint64_t hi = rd[i].hi < w[j].hi ? rd[i].hi : w[j].hi;
    if (lo < hi) rc = push_snap(p, cap, rank, lo, hi);
    if (rd[i].hi < w[j].hi) i++;
    else j++;
  }
  return rc;
}

static int build_snapshots(cdag_plan *p) {
  int64_t nb = 2 * (int64_t)p->nprocs, cap = 0, most = 0;
  span_buf b = {.at = calloc((size_t)nb + 1, sizeof *b.at)};
  int rc = b.at ? CDAG_OK : CDAG_NOMEM("snapshots");
  for (b.fill = 0; b.fill < 2 && rc == CDAG_OK; b.fill++) {
    if (b.fill) {
      for (int64_t k = 0; k < nb; k++) {
        if (b.at[k + 1] > most) most = b.at[k + 1];
        b.at[k + 1] += b.at[k];
      }
      b.e = malloc((size_t)(b.at[nb] ? b.at[nb] : 1) * sizeof *b.e);
      if (!b.e) rc = CDAG_NOMEM("snapshots");
    }
    if (rc == CDAG_OK) rc = coll_spans(p, &b);
    if (rc == CDAG_OK) rc = residual_spans(p, &b);
  }
  span *tmp = rc == CDAG_OK ? malloc((size_t)(most ? most : 1) * sizeof *tmp) : NULL;
  if (rc == CDAG_OK && !tmp) rc = CDAG_NOMEM("snapshots");
  /* after filling, at[k] is the end of bucket k and at[k - 1] its start */
  for (int32_t r = 0; r < p->nprocs && rc == CDAG_OK; r++) {
    int64_t rd = r ? b.at[2 * r - 1] : 0, wr = b.at[2 * r], end = b.at[2 * r + 1];
    if (rd < wr && wr < end) rc = rank_snapshots(p, &cap, r, b.e + rd, wr - rd, b.e + wr, end - wr, tmp);
  }
  free(tmp);
  free(b.e);
  free(b.at);
  return rc;
}

/* exact_float: a residual reduction combines its contributions in the order of its SST set
   (by address), not in the graph's order; for a floating-point sum or product of 3 or more
   values that changes the bits. Such a graph runs as written (the runtime's baseline, the
   simulator's graph run), and the report says why. */
static int keep_written_order(det_state *st, cdag_plan *p) {
  if (!st->opts.exact_float) return CDAG_OK;
  int64_t n = 0;
  for (int64_t k = 0; k < p->nreds; k++) {
    const df_red *rd = &p->reds[k];
    if (!ir_type_is_float(rd->type) || (rd->op != CDAG_SUM && rd->op != CDAG_PROD)) continue;
    const df_set *set = &p->sst->sets[rd->set];
    uint64_t terms = 0;
    for (int32_t u = 0; u < set->nruns; u++) {
      const df_run *run = &p->sst->runs[set->first + u];
      terms += (uint64_t)(run->hi - run->lo + 1) * run->mult;
    }
    n += terms >= 3;
  }
  if (!n) return CDAG_OK;
  p->as_written = DET_WRITTEN_EXACT;
  return det_note(st, "exact_float: %lld floating-point reductions combine 3 or more values, and a plan would combine "
                      "them in another order than the graph: the graph runs as written%s", (long long)n,
                  p->ncolls ? " (the collectives above are not used)" : "");
}

int det_build_plan(det_state *st, cdag_plan *p) {
  int64_t *coll_of = malloc((size_t)(st->nprotos ? st->nprotos : 1) * sizeof *coll_of);
  int rc = coll_of ? build_collectives(st, p, coll_of) : CDAG_NOMEM("plan");
  if (rc == CDAG_OK) rc = price_reductions(st, p, coll_of);
  free(coll_of);
  if (rc == CDAG_OK) rc = build_residual(st, p);
  if (rc == CDAG_OK) rc = keep_written_order(st, p);
  if (rc == CDAG_OK) { /* the plan has its own copies now (the count stays for the report) */
    free(p->sst->xfers);
    p->sst->xfers = NULL;
  }
  if (rc == CDAG_OK) rc = build_snapshots(p);
  p->barrier = st->barrier;
  p->notes = st->notes;
  p->nnotes = st->nnotes;
  st->notes = NULL;
  st->nnotes = 0;
  return rc;
}

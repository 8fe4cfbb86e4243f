/* cdag — src/exec/mpi/schedule.c: a plan cut into one part per rank (runs at the compiling rank).
 *
 * sched_parts_from_plan() writes, for every rank, only what that rank does (the bytes are
 * part.h's; each rank reads its part back in run.c):
 *   colls:  per collective the rank is a member of, in plan order: how it runs (method),
 *           whether it is a replication (after: it reads an earlier collective's result),
 *           kind, type, op, root member, member-set id (-1: whole communicator) and members,
 *           the rank's own send and recv slots as pieces, and for the Alltoallw method, per
 *           peer, which of its slots goes to / comes from that peer; for a cdag kernel
 *           (plan->chosen, kernel_choice.c) the algorithm and every member's send bytes;
 *   pairs:  one message per (src, dst, direction): residual transfers, reduction
 *           contributions (received into the reduction buffer) and kept synchronisation, in
 *           one order both sides agree on (sorted by (src, dst, plan order));
 *   copies: residual transfers to self, and a rank's own reduction contributions;
 *   reds:   residual reductions at the rank (contributions by offset in its buffer).
 * Slot sizes of both sides of every pair are checked here, so a rank never builds an MPI
 * call whose partner disagrees. A plan in stages (a graph that computes) gives every rank
 * each stage's part so written, its computations and its staging buffers (part.h: stages).
 * Cost: O(plan size + sum over collectives of nranks^2) plus a sort of the residual items (a
 * member of a collective MPI runs as MPI_Alltoallw gets a count per member). */
#include <Judy.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"

int sched_grow(void **arr, int64_t n, int64_t *cap, size_t elem) { return base_grow(arr, n, cap, 1, elem, "schedule"); }

/* ---- collectives ---- */

static int plan_bad(int64_t c, const char *what) {
  return cdag__error(CDAG_ERR_PLAN, "plan collective %lld: %s (the plan is inconsistent)", (long long)c, what);
}

/* Pair i -> j: 1 if it moves bytes, 0 if not, <0 (error code) if the slot sizes disagree. */
static int w_active(const cdag_plan *p, int64_t ci, int i, int j, int rootm, int *ss, int *rs) {
  const det_coll *c = &p->colls[ci];
  det_slot_pair(c->kind, i, j, rootm, ss, rs);
  if (*ss < 0 || *ss >= c->nsend_slots || *rs < 0 || *rs >= c->nrecv_slots) return 0;
  uint64_t sb = det_slot(p, c, 1, i, *ss)->bytes, rb = det_slot(p, c, 0, j, *rs)->bytes;
  if (rb == 0) return 0;
  if (sb != rb) return -plan_bad(ci, "a receive slot does not match its send slot");
  return 1;
}

/* Checks that every member's slot has `bytes` (or 0 where allowed). */
static int all_slots(const cdag_plan *p, const det_coll *c, int send, int s, uint64_t bytes, int zero_ok) {
  for (int m = 0; m < c->nranks; m++) {
    uint64_t b = det_slot(p, c, send, m, s)->bytes;
    if (b != bytes && !(zero_ok && b == 0)) return 0;
  }
  return 1;
}

/* MPI_Allgatherv fits when every member receives block j as one piece of exactly the bytes
   member j sends (a member's own block may be missing: it runs in place). */
static int allgatherv_fits(const cdag_plan *p, const det_coll *c) {
  if (c->nsend_slots != 1 || c->nrecv_slots != c->nranks) return 0;
  for (int j = 0; j < c->nranks; j++) {
    uint64_t b = det_slot(p, c, 1, j, 0)->bytes;
    for (int i = 0; i < c->nranks; i++) {
      const det_iov *v = det_slot(p, c, 0, i, j);
      if (i == j && v->n == 0) continue;
      if (v->bytes != b || v->n != (b ? 1 : 0)) return 0;
    }
  }
  return 1;
}

/* The method of each kind when its slots fit: the `exec` column of ir/coll_kinds.h. */
#define SM_OF_KIND_(ID, NAME, MPI, EXEC, ...) [IR_COLL_##ID] = SM_##EXEC,
static const uint8_t kind_method[IR_COLL_NKINDS] = {CDAG_COLL_KINDS(SM_OF_KIND_)};
#undef SM_OF_KIND_

/* How collective ci runs; CDAG_OK with *method set, or an error if its slots disagree. */
static int coll_method(const cdag_plan *p, int64_t ci, int rootm, int *method) {
  const det_coll *c = &p->colls[ci];
  int tsize = ir_type_size(c->type);
  uint64_t b0 = c->nsend_slots ? det_slot(p, c, 1, 0, 0)->bytes : 0;
  *method = kind_method[c->kind];
  switch (*method) {
  case SM_BCAST: {
    uint64_t b = det_slot(p, c, 1, rootm, 0)->bytes;
    int ok = det_slot(p, c, 0, rootm, 0)->bytes == 0;
    for (int m = 0; ok && m < c->nranks; m++)
      if (m != rootm && det_slot(p, c, 0, m, 0)->bytes != b) ok = 0;
    if (!ok) *method = SM_ALLTOALLW;
    return CDAG_OK;
  }
  case SM_ALLREDUCE:
  case SM_REDUCE:
    if (!tsize || b0 % (uint64_t)tsize || !all_slots(p, c, 1, 0, b0, 0) || !all_slots(p, c, 0, 0, b0, 1))
      return plan_bad(ci, "reduction slots differ in size");
    return CDAG_OK;
  case SM_REDSCAT:
    if (!tsize) return plan_bad(ci, "reduction type");
    for (int j = 0; j < c->nranks; j++) {
      uint64_t b = det_slot(p, c, 1, 0, j)->bytes, rb = det_slot(p, c, 0, j, 0)->bytes;
      if (b % (uint64_t)tsize || !all_slots(p, c, 1, j, b, 0) || (rb && rb != b))
        return plan_bad(ci, "reduce_scatter slots differ in size");
    }
    return CDAG_OK;
  case SM_ALLGATHERV:
    if (!allgatherv_fits(p, c)) *method = SM_ALLTOALLW;
    return CDAG_OK;
  case SM_NONE:
    return plan_bad(ci, "a kind detection never proposes");
  default:   /* SM_BARRIER, SM_ALLTOALLW: nothing to fit */
    return CDAG_OK;
  }
}

/* Writes member m's view of collective ci; counts: every member's send bytes (kernels). */
static int put_coll(part_writer *w, const cdag_plan *p, int64_t ci, int m, const part_coll *hdr,
                    const uint64_t *counts) {
  const det_coll *c = &p->colls[ci];
  part_coll pc = *hdr;
  pc.me = m;
  part_coll_put(w, &pc, p->ranks + c->ranks_first);
  for (int s = 0; s < c->nsend_slots; s++) {
    const det_iov *v = det_slot(p, c, 1, m, s);
    part_slot_put(w, p->pieces + v->first, v->n);
  }
  for (int s = 0; s < c->nrecv_slots; s++) {
    const det_iov *v = det_slot(p, c, 0, m, s);
    part_slot_put(w, p->pieces + v->first, v->n);
  }
  if (pc.method == SM_KERNEL) {
    part_kernel_put(w, p->chosen->coll[ci].alg, counts, c->nranks);
    return CDAG_OK;
  }
  if (pc.method != SM_ALLTOALLW) return CDAG_OK;
  for (int j = 0; j < c->nranks; j++) {
    int ss, rs, a, b;
    if ((a = w_active(p, ci, m, j, pc.rootm, &ss, &rs)) < 0) return -a;
    int send1 = a ? ss + 1 : 0;
    if ((b = w_active(p, ci, j, m, pc.rootm, &ss, &rs)) < 0) return -b;
    part_map_put(w, send1, b ? rs + 1 : 0);
  }
  return CDAG_OK;
}

/* The id of the member set of a collective on a proper subset (JudyHS on the rank list). */
static int set_id(Pvoid_t *sets, int64_t *nsets, const int32_t *mem, int n, int64_t *id) {
  PWord_t v = (PWord_t)JudyHSIns(sets, (void *)mem, (Word_t)n * sizeof *mem, PJE0);
  if (v == PJERR) return CDAG_NOMEM("member sets");
  if (*v == 0) *v = (Word_t)++*nsets;
  *id = (int64_t)*v - 1;
  return CDAG_OK;
}

/* Every member's send bytes, for a kernel collective (NULL otherwise). */
static int kernel_counts(const cdag_plan *p, const det_coll *c, int method, uint64_t **counts) {
  *counts = NULL;
  if (method != SM_KERNEL) return CDAG_OK;
  if (!(*counts = malloc((size_t)c->nranks * sizeof **counts))) return CDAG_NOMEM("kernel counts");
  for (int j = 0; j < c->nranks; j++) (*counts)[j] = c->nsend_slots ? det_slot(p, c, 1, j, 0)->bytes : 0;
  return CDAG_OK;
}

static int put_colls(const cdag_plan *p, part_writer *sec) {
  Pvoid_t sets = NULL;
  int64_t nsets = 0;
  int rc = CDAG_OK;
  for (int64_t ci = 0; ci < p->ncolls && !rc; ci++) {
    const det_coll *c = &p->colls[ci];
    const int32_t *mem = p->ranks + c->ranks_first;
    int rootm = det_root_member(p, c), method;
    if (c->root >= 0 && rootm < 0) {
      rc = plan_bad(ci, "root is not a member");
      break;
    }
    if ((rc = coll_method(p, ci, rootm, &method))) break;
    if (p->chosen && p->chosen->coll[ci].alg != KERN_ALG_MPI) method = SM_KERNEL;
    if (c->after > 0 && method != SM_BCAST) {   /* run.c starts it as MPI_Bcast after the rest */
      rc = plan_bad(ci, "a replication that is not an MPI broadcast");
      break;
    }
    int64_t setid = -1;
    if (c->nranks != p->nprocs && (rc = set_id(&sets, &nsets, mem, c->nranks, &setid))) break;
    part_coll hdr = {.method = method, .after = c->after > 0, .kind = c->kind, .type = c->type, .op = c->op, .rootm = rootm,
                     .n = c->nranks, .nsend = c->nsend_slots, .nrecv = c->nrecv_slots, .setid = setid};
    uint64_t *counts;
    if ((rc = kernel_counts(p, c, method, &counts))) break;
    for (int m = 0; m < c->nranks && !rc; m++) {
      if (mem[m] < 0 || mem[m] >= p->nprocs) rc = plan_bad(ci, "member out of range");
      else rc = put_coll(&sec[mem[m]], p, ci, m, &hdr, counts);
    }
    free(counts);
  }
  JudyHSFreeArray(&sets, PJE0);
  return rc;
}

/* ---- residual: items grouped into one message per (src, dst) ---- */

typedef struct {
  int32_t src, dst;
  int64_t seq;            /* plan order within the pair */
  uint8_t space;          /* where dst_addr lives at dst: SP_USER or SP_RED */
  uint64_t src_addr, dst_addr, len;
  uint64_t n, src_stride, dst_stride;   /* n >= 1 blocks of len (a strided transfer's) */
} sched_item;

static int item_cmp(const void *x, const void *y) {
  const sched_item *a = x, *b = y;
  if (a->src != b->src) return a->src < b->src ? -1 : 1;
  if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

typedef struct {
  sched_item *v;
  int64_t n, cap;
} item_list;

static int add_item(item_list *l, int src, int dst, int space, uint64_t sa, uint64_t da, uint64_t len) {
  int rc = sched_grow((void **)&l->v, l->n, &l->cap, sizeof *l->v);
  if (rc) return rc;
  l->v[l->n] = (sched_item){src, dst, l->n, (uint8_t)space, sa, da, len, 1, len, len};
  l->n++;
  return CDAG_OK;
}

/* Residual transfer x as one item, or one per block: a strided one stays whole when its
   blocks travel packed (up to `limit` bytes each, as kern_travels_alone counts them) and lie
   below the stages' staging buffers (the rank remaps pieces there by their first byte). */
static int below_temps(uint64_t addr, uint64_t len, uint64_t n, uint64_t stride) {
  uint64_t top = STAGE_TEMP_BASE;
  return stride && addr < top && len <= top - addr && (top - addr - len) / stride >= n - 1;
}

static int add_xfer(item_list *l, const df_xfer *x, uint64_t limit) {
  uint64_t nb = df_xfer_blocks(x);
  int whole = nb > 1 && x->len <= limit && below_temps(x->src_addr, x->len, nb, x->src_stride) &&
              below_temps(x->dst_addr, x->len, nb, x->dst_stride);
  int rc = CDAG_OK;
  if (whole) {
    rc = add_item(l, x->src, x->dst, SP_USER, x->src_addr, x->dst_addr, x->len);
    if (!rc) l->v[l->n - 1].n = nb, l->v[l->n - 1].src_stride = x->src_stride, l->v[l->n - 1].dst_stride = x->dst_stride;
    return rc;
  }
  for (uint64_t j = 0; j < nb && !rc; j++) {
    df_xfer b = df_xfer_block(x, j);
    rc = add_item(l, b.src, b.dst, SP_USER, b.src_addr, b.dst_addr, b.len);
  }
  return rc;
}

/* Residual reductions: contributions become items into dst's reduction buffer. */
static int put_reds(const cdag_plan *p, item_list *items, part_writer *sec) {
  int rc;
  for (int64_t k = 0; k < p->nreds; k++) {
    const df_red *rd = &p->reds[k];
    const df_set *set = &p->sst->sets[rd->set];
    uint64_t size = rd->count * (uint64_t)ir_type_size(rd->type);
    part_writer *d = &sec[rd->dst];
    int64_t ndistinct = 0;
    for (int32_t u = 0; u < set->nruns; u++)
      ndistinct += p->sst->runs[set->first + u].hi - p->sst->runs[set->first + u].lo + 1;
    part_red_put(d, &(part_red){.dst = rd->dst_addr, .count = rd->count, .type = rd->type, .op = rd->op,
                                .n = ndistinct});
    for (int32_t u = 0; u < set->nruns; u++) {
      const df_run *run = &p->sst->runs[set->first + u];
      for (int32_t r = run->lo; r <= run->hi; r++) {
        if ((rc = add_item(items, r, rd->dst, SP_RED, run->addr, d->redsize, size))) return rc;
        part_contrib_put(d, d->redsize, run->mult);
        d->redsize += size;
      }
    }
  }
  return CDAG_OK;
}

/* One message from v->src to v->dst with tag `tag`: the items of v[0..n) that carry bytes
   and travel `alone` (kern_travels_alone, counted from the pair's first item) or not. */
static void put_message(part_writer *sec, const sched_item *v, int64_t n, uint64_t limit, int alone, int64_t tag) {
  int64_t npieces = 0, nalone = 0;
  for (int64_t k = 0; k < n; k++) npieces += v[k].len && kern_travels_alone(v[k].len, limit, &nalone) == alone;
  part_pair_put(&sec[v->src], 1, v->dst, tag, npieces);
  part_pair_put(&sec[v->dst], 0, v->src, tag, npieces);
  nalone = 0;
  for (int64_t k = 0; k < n; k++)
    if (v[k].len && kern_travels_alone(v[k].len, limit, &nalone) == alone) {
      part_pair_piece(&sec[v->src], 1, &(part_piece){SP_USER, v[k].src_addr, v[k].len, v[k].n, v[k].src_stride});
      part_pair_piece(&sec[v->dst], 0, &(part_piece){v[k].space, v[k].dst_addr, v[k].len, v[k].n, v[k].dst_stride});
    }
}

/* The messages from src to dst (items v[0..n), in plan order), as the cost model splits them
   (model.h: kern_model_pack_limit): pieces up to `limit` bytes packed into message 0, each
   larger one alone, as the graph wrote it, tags 1, 2, ... A pair with no bytes still gets
   one empty message: it keeps a synchronisation. */
static void put_pair_messages(part_writer *sec, const sched_item *v, int64_t n, uint64_t limit) {
  int64_t nalone = 0, npacked = 0, tag = 0;
  for (int64_t k = 0; k < n; k++) npacked += !kern_travels_alone(v[k].len, limit, &nalone) && v[k].len;
  if (npacked || !nalone) put_message(sec, v, n, limit, 0, tag++);
  nalone = 0;
  for (int64_t k = 0; k < n; k++)
    if (kern_travels_alone(v[k].len, limit, &nalone)) put_message(sec, v + k, 1, limit, 1, tag++);
}

/* Sorts the items and writes each (src, dst) group as messages out of src and into dst
   (put_pair_messages), or as local copies when src == dst. */
static void put_pairs(item_list *items, uint64_t limit, part_writer *sec) {
  if (!items->n) return;
  base_sort(items->v, (size_t)items->n, sizeof *items->v, item_cmp);
  for (int64_t a = 0, b; a < items->n; a = b) {
    const sched_item *x = &items->v[a];
    for (b = a; b < items->n && items->v[b].src == x->src && items->v[b].dst == x->dst; b++) continue;
    if (x->src != x->dst) {
      put_pair_messages(sec, x, b - a, limit);
      continue;
    }
    for (int64_t k = a; k < b; k++) {
      const sched_item *it = &items->v[k];
      if (it->len)
        part_copy_put(&sec[x->src], &(part_copy){it->space, it->dst_addr, it->src_addr, it->len, it->n, it->src_stride,
                                                  it->dst_stride});
    }
  }
}

static int put_residual(const cdag_plan *p, uint64_t limit, part_writer *sec) {
  item_list items = {0};
  int rc = CDAG_OK;
  for (int64_t k = 0; k < p->nxfers && !rc; k++) rc = add_xfer(&items, &p->xfers[k], limit);
  if (!rc) rc = put_reds(p, &items, sec);
  for (int64_t k = 0; k < p->nsyncs && !rc; k++)
    if (p->syncs[2 * k] != p->syncs[2 * k + 1])
      rc = add_item(&items, p->syncs[2 * k], p->syncs[2 * k + 1], SP_USER, 0, 0, 0);
  if (!rc) put_pairs(&items, limit, sec);
  free(items.v);
  return rc;
}

/* ---- assembling the parts ---- */

/* One stage's parts (a plan without computations: the whole schedule as always). */
static int plan_parts(const cdag_plan *p, const kern_model *m, wire_buf *parts) {
  part_writer *sec = calloc((size_t)p->nprocs, sizeof *sec);
  if (!sec) return CDAG_NOMEM("schedule parts");
  int rc = put_colls(p, sec);
  if (!rc) rc = put_residual(p, kern_model_pack_limit(m), sec);
  for (int r = 0; r < p->nprocs && !rc; r++) rc = part_assemble(&sec[r], m, &parts[r]);
  for (int r = 0; r < p->nprocs; r++) part_writer_free(&sec[r]);
  free(sec);
  return rc;
}

/* A plan in stages: per rank, every stage's part, then its computations and staging buffers. */
static int staged_parts(const cdag_plan *p, const kern_model *m, const int64_t *base, wire_buf *parts) {
  int32_t ns = 0, np = p->nprocs;
  for (const cdag_plan *q = p; q; q = q->next) ns++;
  if (ns != p->steps->nstages)
    return cdag__error(CDAG_ERR_PLAN, "plan of %d stages chains %d (the plan is inconsistent)", p->steps->nstages, ns);
  wire_buf *sp = calloc((size_t)np * (size_t)(ns ? ns : 1), sizeof *sp);
  part_steps *w = calloc((size_t)np, sizeof *w);
  int rc = sp && w ? CDAG_OK : CDAG_NOMEM("schedule parts");
  int32_t k = 0;
  for (const cdag_plan *q = p; q && !rc; q = q->next, k++) {
    if (q->nprocs != np) rc = cdag__error(CDAG_ERR_PLAN, "stage %d has %d ranks, not %d", k, q->nprocs, np);
    else rc = plan_parts(q, m, sp + (size_t)k * (size_t)np);
  }
  if (!rc) rc = sched_steps_put(p->steps, np, base, w);
  wire_buf *row = rc ? NULL : malloc((size_t)(ns ? ns : 1) * sizeof *row);
  if (!rc && !row) rc = CDAG_NOMEM("schedule parts");
  for (int r = 0; r < np && !rc; r++) {
    for (int32_t j = 0; j < ns; j++) row[j] = sp[(size_t)j * (size_t)np + (size_t)r];
    rc = part_stages_write(&parts[r], row, ns, &w[r]);
  }
  free(row);
  for (size_t j = 0; sp && j < (size_t)np * (size_t)ns; j++) wire_free(&sp[j]);
  for (int r = 0; w && r < np; r++) part_steps_free(&w[r]);
  free(sp);
  free(w);
  return rc;
}

int sched_parts_from_plan(const cdag_plan *p, const kern_model *m, const int64_t *base, wire_buf *parts) {
  return p->steps ? staged_parts(p, m, base, parts) : plan_parts(p, m, parts);
}

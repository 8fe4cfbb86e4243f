/* cdag — src/exec/sim/sim_plan.c: running a plan in the simulator.
 *
 * Each collective is executed by the meaning of its kind (detect.h), not by the SST tuples
 * it replaced, so a wrong detection shows up as different memory: a slot's pieces are read
 * from the origin snapshot (a replication's from memory, after the collective it follows
 * ran: detect.h) and concatenated into one message, which is scattered over the
 * receiving slot's pieces. Reductions combine members' messages in member order. Residual
 * messages and reductions follow. Snapshots and syncs are execution details: ignored.
 * Before a collective runs it is checked against its kind's row of ir/coll_kinds.h (slot counts, members,
 * root, slot bytes, addresses); after the plan ran, no byte may have been written twice,
 * since MPI runs all parts at once. Cost O(B + w log w): B bytes moved, w pieces written. */
#include <stdlib.h>
#include <string.h>

#include "exec/sim/sim.h"

typedef struct {
  const cdag_plan *p;
  sim_mem *m;
  sim_mem *snap;           /* m as the stage found it: a view that copies what the stage writes */
  uint8_t *buf, *acc;
  uint64_t cap;
  det_range *writes;       /* every range the plan writes: parts must write disjoint bytes */
  int64_t nwrites, wcap;
} plan_run;

/* Every write to memory comes here first: the snapshot keeps those bytes as they were. */
static int log_write(plan_run *r, int rank, uint64_t addr, uint64_t len) {
  if (len == 0) return CDAG_OK;
  int rc = sim_mem_keep(r->snap, r->m, rank, addr, len);
  if (rc) return rc;
  BASE_GROW(r->writes, r->nwrites, r->wcap, 1, "simulator");
  r->writes[r->nwrites++] = (det_range){rank, addr, len};
  return CDAG_OK;
}

static int range_cmp(const void *x, const void *y) {
  const det_range *a = x, *b = y;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return (a->addr > b->addr) - (a->addr < b->addr);
}

/* The parts of a plan run concurrently in MPI, so no byte may be written twice. */
static int check_disjoint_writes(plan_run *r) {
  base_sort(r->writes, r->nwrites, sizeof *r->writes, range_cmp);
  for (int64_t i = 1; i < r->nwrites; i++) {
    const det_range *a = &r->writes[i - 1], *b = &r->writes[i];
    if (a->rank == b->rank && b->addr < a->addr + a->len)
      return cdag__error(CDAG_ERR_PLAN, "simulator: the plan writes rank %d byte 0x%llx twice (its parts must write disjoint bytes)",
                         b->rank, (unsigned long long)b->addr);
  }
  return CDAG_OK;
}

static int reserve(plan_run *r, uint64_t n) {
  if (n <= r->cap) return CDAG_OK;
  uint8_t *b = realloc(r->buf, (size_t)n), *a;
  if (!b) return CDAG_NOMEM("simulator");
  r->buf = b;
  a = realloc(r->acc, (size_t)n);
  if (!a) return CDAG_NOMEM("simulator");
  r->acc = a;
  r->cap = n;
  return CDAG_OK;
}

static int outside(const det_coll *c, int rank, uint64_t addr) {
  return cdag__error(CDAG_ERR_ARG, "simulator: %s rooted at %d: rank %d address 0x%llx is outside memory",
                     det_kind_name(c->kind), c->root, rank, (unsigned long long)addr);
}

/* Concatenates the slot's pieces (read from the snapshot: origins) into out. A replication
   (c->after) reads what the collective it follows wrote: the memory as it is now. */
static int gather_slot(plan_run *r, const det_coll *c, int rank, const det_iov *v, uint8_t *out) {
  uint64_t at = 0;
  sim_mem *from = c->after > 0 ? r->m : r->snap;
  for (int32_t i = 0; i < v->n; i++) {
    const det_piece *pc = &r->p->pieces[v->first + i];
    const uint8_t *src = sim_mem_at(from, rank, pc->addr, pc->len);
    if (!src) return outside(c, rank, pc->addr);
    memcpy(out + at, src, (size_t)pc->len);
    at += pc->len;
  }
  return CDAG_OK;
}

static int scatter_slot(plan_run *r, const det_coll *c, int rank, const det_iov *v, const uint8_t *in) {
  uint64_t at = 0;
  for (int32_t i = 0; i < v->n; i++) {
    const det_piece *pc = &r->p->pieces[v->first + i];
    uint8_t *dst = sim_mem_at(r->m, rank, pc->addr, pc->len);
    if (!dst) return outside(c, rank, pc->addr);
    int rc = log_write(r, rank, pc->addr, pc->len);
    if (rc) return rc;
    memcpy(dst, in + at, (size_t)pc->len);
    at += pc->len;
  }
  return CDAG_OK;
}

static uint64_t iov_bytes(const cdag_plan *p, const det_iov *v) {
  uint64_t n = 0;
  for (int32_t i = 0; i < v->n; i++) n += p->pieces[v->first + i].len;
  return n;
}

/* Moves send slot (i, si) into recv slot (j, rj); an empty side means nothing moves. */
static int move(plan_run *r, const det_coll *c, int32_t i, int32_t si, int32_t j, int32_t rj) {
  const int32_t *ranks = r->p->ranks + c->ranks_first;
  const det_iov *s = det_slot(r->p, c, 1, i, si), *d = det_slot(r->p, c, 0, j, rj);
  uint64_t n = iov_bytes(r->p, s), nd = iov_bytes(r->p, d);
  if (n == 0 || nd == 0) return CDAG_OK;
  if (n != nd)
    return cdag__error(CDAG_ERR_PLAN, "simulator: %s rooted at %d: rank %d sends %llu bytes but rank %d's slot holds %llu",
                       det_kind_name(c->kind), c->root, ranks[i], (unsigned long long)n, ranks[j], (unsigned long long)nd);
  int rc = reserve(r, n);
  if (rc == CDAG_OK) rc = gather_slot(r, c, ranks[i], s, r->buf);
  if (rc == CDAG_OK) rc = scatter_slot(r, c, ranks[j], d, r->buf);
  return rc;
}

/* Reduces send slot s of every member, in member order, into acc; *n gets the size. */
static int combine(plan_run *r, const det_coll *c, int32_t s, uint64_t *n) {
  const int32_t *ranks = r->p->ranks + c->ranks_first;
  *n = iov_bytes(r->p, det_slot(r->p, c, 1, 0, s));
  int rc = reserve(r, *n);
  uint64_t size = (uint64_t)ir_type_size(c->type);
  for (int32_t i = 0; i < c->nranks && rc == CDAG_OK; i++) {
    const det_iov *v = det_slot(r->p, c, 1, i, s);
    if (iov_bytes(r->p, v) != *n)
      return cdag__error(CDAG_ERR_PLAN, "simulator: %s: members contribute different sizes", det_kind_name(c->kind));
    rc = gather_slot(r, c, ranks[i], v, i == 0 ? r->acc : r->buf);
    if (rc == CDAG_OK && i > 0) ir_reduce_apply(c->type, c->op, r->buf, r->acc, *n / size);
  }
  return rc;
}

static int put_result(plan_run *r, const det_coll *c, int32_t j, uint64_t n) {
  const det_iov *d = det_slot(r->p, c, 0, j, 0);
  uint64_t nd = iov_bytes(r->p, d);
  if (nd == 0) return CDAG_OK;
  if (nd != n) return cdag__error(CDAG_ERR_PLAN, "simulator: %s: result of %llu bytes into a slot of %llu",
                                  det_kind_name(c->kind), (unsigned long long)n, (unsigned long long)nd);
  return scatter_slot(r, c, r->p->ranks[c->ranks_first + j], d, r->acc);
}

/* ---- checking a collective against the table of kinds (ir/coll_kinds.h) before running it ---- */

/* Slot counts of kind k over n members; *_root: only the root's slots on that side carry data. */
static void slot_table(det_kind k, int32_t n, int32_t *ns, int32_t *nr, int *send_root, int *recv_root) {
  const ir_coll_info *in = ir_coll_get(k);
  det_kind_slots(k, n, ns, nr);
  *send_root = in->send_root;
  *recv_root = in->recv_root;
}

static int is_reduction(det_kind k) { return ir_coll_get(k)->reduces; }

static int bad(int64_t ci, const det_coll *c, const char *what, int rank) {
  return cdag__error(CDAG_ERR_PLAN, "simulator: plan collective %lld (%s rooted at %d, %d members): %s (rank %d)",
                     (long long)ci, det_kind_name(c->kind), c->root, c->nranks, what, rank);
}

/* One slot: its pieces exist, add up to its bytes and lie in the member's memory. */
static int check_slot(const plan_run *r, int64_t ci, const det_coll *c, const det_iov *v, int rank, int must_be_empty) {
  uint64_t sum = 0;
  if (v->n < 0 || (int64_t)v->first + v->n > r->p->npieces) return bad(ci, c, "a slot's pieces are out of range", rank);
  for (int32_t i = 0; i < v->n; i++) {
    const det_piece *pc = &r->p->pieces[v->first + i];
    if (!sim_mem_at(r->m, rank, pc->addr, pc->len)) return outside(c, rank, pc->addr);
    sum += pc->len;
  }
  if (sum != v->bytes) return bad(ci, c, "a slot's bytes differ from the sum of its pieces", rank);
  if (must_be_empty && sum) return bad(ci, c, "a slot that only the root may fill holds data", rank);
  if (is_reduction(c->kind) && sum % (uint64_t)ir_type_size(c->type))
    return bad(ci, c, "a slot is not a whole number of elements", rank);
  return CDAG_OK;
}

static int check_slots(const plan_run *r, int64_t ci, const det_coll *c, int send, int root_only, int32_t root) {
  int32_t per = send ? c->nsend_slots : c->nrecv_slots;
  for (int32_t m = 0; m < c->nranks; m++)
    for (int32_t s = 0; s < per && !(det_side_rooted(c, send) && m != root); s++) {   /* the others': det_no_iov */
      int rc = check_slot(r, ci, c, det_slot(r->p, c, send, m, s), r->p->ranks[c->ranks_first + m], root_only && m != root);
      if (rc) return rc;
    }
  return CDAG_OK;
}

static int check_coll(const plan_run *r, int64_t ci) {
  const cdag_plan *p = r->p;
  const det_coll *c = &p->colls[ci];
  if ((unsigned)c->kind >= DET_NKINDS) return cdag__error(CDAG_ERR_PLAN, "simulator: plan collective %lld has no kind", (long long)ci);
  if (c->nranks < 0 || c->ranks_first < 0 || c->ranks_first + c->nranks > p->nranks) return bad(ci, c, "members out of range", -1);
  for (int32_t m = 0; m < c->nranks; m++) {
    int32_t rank = p->ranks[c->ranks_first + m];
    if (rank < 0 || rank >= p->nprocs || (m > 0 && rank <= p->ranks[c->ranks_first + m - 1]))
      return bad(ci, c, "members are not distinct sorted ranks", rank);
  }
  int32_t root = det_root_member(p, c), ns, nr;
  int send_root, recv_root;
  if (ir_coll_get(c->kind)->rooted && root < 0) return bad(ci, c, "the root is not a member", c->root);
  if (c->after < 0 || c->after > ci || (c->after > 0 && c->kind != DET_BCAST))
    return bad(ci, c, "a replication must be a bcast after an earlier collective", c->root);
  if (is_reduction(c->kind) && (!ir_type_size(c->type) || !ir_rop_name(c->op) || !ir_rop_valid_for(c->op, c->type)))
    return bad(ci, c, "no valid type and op", -1);
  slot_table(c->kind, c->nranks, &ns, &nr, &send_root, &recv_root);
  if (c->nsend_slots != ns || c->nrecv_slots != nr) return bad(ci, c, "slot counts differ from its kind's", -1);
  if (c->send_first < 0 || c->recv_first < 0 || c->send_first + det_side_iovs(c, 1) > p->niovs ||
      c->recv_first + det_side_iovs(c, 0) > p->niovs)
    return bad(ci, c, "slots out of range", -1);
  int rc = check_slots(r, ci, c, 1, send_root, root);
  return rc ? rc : check_slots(r, ci, c, 0, recv_root, root);
}

/* Runs collective c by its kind's columns (ir/coll_kinds.h, detect.h's slot semantics): a
   block kind moves every (send slot -> recv slot) pair det_slot_pair names, in member order;
   a reduction combines every member's slot s (s = 0, or each member's own block j where the
   send side has a slot per member) and puts the result where the recv side has its slots. */
static int run_coll(plan_run *r, const det_coll *c) {
  const ir_coll_info *in = ir_coll_get(c->kind);
  int32_t n = c->nranks, root = det_root_member(r->p, c);  /* checked: a member for rooted kinds */
  int rc = CDAG_OK;
  uint64_t bytes;
  if (!in->reduces) {   /* a barrier has no slots: synchronisation only; a rooted side, the root's pairs only */
    for (int32_t i = in->send_root ? root : 0; i < (in->send_root ? root + 1 : n); i++)
      for (int32_t j = in->recv_root ? root : 0; j < (in->recv_root ? root + 1 : n) && rc == CDAG_OK; j++) {
        int ss, rs;
        det_slot_pair(c->kind, i, j, root, &ss, &rs);
        if (ss >= 0) rc = move(r, c, i, ss, j, rs);
      }
    return rc;
  }
  if (in->send == IR_SLOTS_MEMBER) {   /* reduce_scatter(_block): member j gets block j */
    for (int32_t j = 0; j < n && rc == CDAG_OK; j++)
      if ((rc = combine(r, c, j, &bytes)) == CDAG_OK) rc = put_result(r, c, j, bytes);
    return rc;
  }
  if ((rc = combine(r, c, 0, &bytes))) return rc;
  for (int32_t j = 0; j < n && rc == CDAG_OK; j++)
    if (!in->recv_root || j == root) rc = put_result(r, c, j, bytes);
  return rc;
}

/* Residual messages must group the transfers as they say (the report counts them). */
static int check_msgs(const cdag_plan *p) {
  int64_t next = 0;
  for (int64_t k = 0; k < p->nmsgs; k++) {
    const det_msg *g = &p->msgs[k];
    uint64_t bytes = 0;
    if (g->first != next || g->n < 0 || g->first + g->n > p->nxfers)
      return cdag__error(CDAG_ERR_PLAN, "simulator: residual message %lld does not follow the previous one", (long long)k);
    for (int64_t i = g->first; i < g->first + g->n; i++) {
      if (p->xfers[i].src != g->src || p->xfers[i].dst != g->dst)
        return cdag__error(CDAG_ERR_PLAN, "simulator: residual message %lld (rank %d -> %d) holds a transfer of rank %d -> %d",
                           (long long)k, g->src, g->dst, p->xfers[i].src, p->xfers[i].dst);
      bytes += df_xfer_bytes(&p->xfers[i]);
    }
    if (bytes != g->bytes) return cdag__error(CDAG_ERR_PLAN, "simulator: residual message %lld: bytes differ from its transfers", (long long)k);
    next += g->n;
  }
  if (next != p->nxfers) return cdag__error(CDAG_ERR_PLAN, "simulator: %lld residual transfers are in no message", (long long)(p->nxfers - next));
  return CDAG_OK;
}

/* Snapshots and syncs are not run, but they must name real memory and ranks. */
static int check_extras(const cdag_plan *p, sim_mem *m) {
  for (int64_t i = 0; i < p->nsnaps; i++)
    if (!sim_mem_at(m, p->snaps[i].rank, p->snaps[i].addr, p->snaps[i].len))
      return cdag__error(CDAG_ERR_ARG, "simulator: snapshot of rank %d 0x%llx (%llu bytes) is outside memory", p->snaps[i].rank,
                         (unsigned long long)p->snaps[i].addr, (unsigned long long)p->snaps[i].len);
  for (int64_t i = 0; i < 2 * p->nsyncs; i++)
    if (p->syncs[i] < 0 || p->syncs[i] >= p->nprocs) return cdag__error(CDAG_ERR_PLAN, "simulator: a kept sync names rank %d", p->syncs[i]);
  return CDAG_OK;
}

/* Block j of residual transfer x (a strided one's blocks in turn). */
static int run_block(plan_run *r, const df_xfer *x, uint64_t j) {
  uint64_t src = x->src_addr + j * x->src_stride, dst = x->dst_addr + j * x->dst_stride;
  int rc = log_write(r, x->dst, dst, x->len);   /* first: the snapshot keeps what it overwrites */
  if (rc) return rc;
  uint8_t *from = sim_mem_at(r->snap, x->src, src, x->len), *to = sim_mem_at(r->m, x->dst, dst, x->len);
  if (!from || !to)
    return cdag__error(CDAG_ERR_ARG, "simulator: residual transfer rank %d 0x%llx -> rank %d 0x%llx (%llu bytes) is outside memory",
                       x->src, (unsigned long long)src, x->dst, (unsigned long long)dst, (unsigned long long)x->len);
  memcpy(to, from, (size_t)x->len);
  return CDAG_OK;
}

static int run_xfers(plan_run *r) {
  const cdag_plan *p = r->p;
  for (int64_t i = 0; i < p->nxfers; i++)
    for (uint64_t j = 0; j < df_xfer_blocks(&p->xfers[i]); j++) {
      int rc = run_block(r, &p->xfers[i], j);
      if (rc) return rc;
    }
  return CDAG_OK;
}

/* One stage's plan (the whole plan of a graph without computation). */
static int run_stage(const cdag_plan *p, sim_mem *m) {
  sim_mem *snap;
  int rc = sim_mem_view(m, &snap);
  if (rc) return rc;
  plan_run r = {.p = p, .m = m, .snap = snap};
  if (rc == CDAG_OK) rc = check_msgs(p);
  if (rc == CDAG_OK) rc = check_extras(p, m);
  for (int64_t i = 0; i < p->ncolls && rc == CDAG_OK; i++)
    if ((rc = check_coll(&r, i)) == CDAG_OK) rc = run_coll(&r, &p->colls[i]);
  if (rc == CDAG_OK) rc = run_xfers(&r);
  for (int64_t i = 0; i < p->nreds && rc == CDAG_OK; i++) {
    const df_red *d = &p->reds[i];
    if ((rc = log_write(&r, d->dst, d->dst_addr, d->count * (uint64_t)ir_type_size(d->type))) == CDAG_OK)
      rc = sim_reduce_tuple(p->sst, d, m, snap);
  }
  if (rc == CDAG_OK) rc = check_disjoint_writes(&r);
  free(r.writes);
  free(r.buf);
  free(r.acc);
  sim_mem_free(snap);
  return rc;
}

/* The computations that run after stage `after`, from *next on (steps are sorted by it). */
static int run_computes(const stage_steps *st, int32_t after, int64_t *next, sim_mem *m, uint64_t *chain) {
  int rc = CDAG_OK;
  for (; *next < st->ncomputes && st->computes[*next].after == after && rc == CDAG_OK; ++*next)
    rc = sim_compute(st, *next, m, chain);
  return rc;
}

int sim_run_plan(const cdag_plan *p, sim_mem *m) {
  if (p->nprocs != sim_mem_nprocs(m))
    return cdag__error(CDAG_ERR_ARG, "simulator: the plan is for %d ranks, the memory has %d", p->nprocs, sim_mem_nprocs(m));
  if (!p->steps) return run_stage(p, m);
  uint64_t *chain = calloc((size_t)p->nprocs, sizeof *chain);
  int64_t next = 0;
  int rc = chain ? run_computes(p->steps, -1, &next, m, chain) : CDAG_NOMEM("simulator");
  for (const cdag_plan *q = p; q && rc == CDAG_OK; q = q->next)
    if ((rc = run_stage(q, m)) == CDAG_OK) rc = run_computes(p->steps, q->stage, &next, m, chain);
  if (rc == CDAG_OK && next != p->steps->ncomputes)
    rc = cdag__error(CDAG_ERR_PLAN, "simulator: %lld computations of the plan belong to no stage",
                     (long long)(p->steps->ncomputes - next));
  free(chain);
  return rc;
}

int sim_run_stages(cdag_graph *const *stage, int32_t nstages, const stage_steps *st, sim_mem *m) {
  uint64_t *chain = calloc((size_t)sim_mem_nprocs(m) + 1, sizeof *chain);
  int64_t next = 0;
  int rc = chain ? run_computes(st, -1, &next, m, chain) : CDAG_NOMEM("simulator");
  for (int32_t k = 0; k < nstages && rc == CDAG_OK; k++)
    if ((rc = sim_run_graph(stage[k], m, 0)) == CDAG_OK) rc = run_computes(st, k, &next, m, chain);
  if (rc == CDAG_OK && next != st->ncomputes)
    rc = cdag__error(CDAG_ERR_PLAN, "simulator: %lld computations belong to no stage", (long long)(st->ncomputes - next));
  free(chain);
  return rc;
}

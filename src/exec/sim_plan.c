/* cdag — src/exec/sim_plan.c: running a plan in the simulator.
 *
 * Each collective is executed by the meaning of its kind (detect.h), not by the SST tuples
 * it replaced, so a wrong detection shows up as different memory: a slot's pieces are read
 * from the origin snapshot and concatenated into one message, which is scattered over the
 * receiving slot's pieces. Reductions combine members' messages in member order. Residual
 * messages and reductions follow. Snapshots and syncs are execution details: ignored. */
#include <stdlib.h>
#include <string.h>

#include "exec/sim.h"

typedef struct {
  const cdag_plan *p;
  sim_mem *m;
  const sim_mem *snap;
  uint8_t *buf, *acc;
  uint64_t cap;
} plan_run;

static const det_iov *slot(const cdag_plan *p, const det_coll *c, int send, int32_t member, int32_t s) {
  int64_t base = send ? c->send_first : c->recv_first;
  int32_t per = send ? c->nsend_slots : c->nrecv_slots;
  return &p->iovs[base + (int64_t)member * per + s];
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

/* Concatenates the slot's pieces (read from the snapshot) into out. */
static int gather_slot(plan_run *r, const det_coll *c, int rank, const det_iov *v, uint8_t *out) {
  uint64_t at = 0;
  for (int32_t i = 0; i < v->n; i++) {
    const det_piece *pc = &r->p->pieces[v->first + i];
    const uint8_t *src = sim_mem_at((sim_mem *)r->snap, rank, pc->addr, pc->len);
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
  const det_iov *s = slot(r->p, c, 1, i, si), *d = slot(r->p, c, 0, j, rj);
  uint64_t n = iov_bytes(r->p, s), nd = iov_bytes(r->p, d);
  if (n == 0 || nd == 0) return CDAG_OK;
  if (n != nd)
    return cdag__error(CDAG_ERR_STATE, "simulator: %s rooted at %d: rank %d sends %llu bytes but rank %d's slot holds %llu",
                       det_kind_name(c->kind), c->root, ranks[i], (unsigned long long)n, ranks[j], (unsigned long long)nd);
  int rc = reserve(r, n);
  if (rc == CDAG_OK) rc = gather_slot(r, c, ranks[i], s, r->buf);
  if (rc == CDAG_OK) rc = scatter_slot(r, c, ranks[j], d, r->buf);
  return rc;
}

/* Reduces send slot s of every member, in member order, into acc; *n gets the size. */
static int combine(plan_run *r, const det_coll *c, int32_t s, uint64_t *n) {
  const int32_t *ranks = r->p->ranks + c->ranks_first;
  *n = iov_bytes(r->p, slot(r->p, c, 1, 0, s));
  int rc = reserve(r, *n);
  uint64_t size = (uint64_t)ir_type_size(c->type);
  for (int32_t i = 0; i < c->nranks && rc == CDAG_OK; i++) {
    const det_iov *v = slot(r->p, c, 1, i, s);
    if (iov_bytes(r->p, v) != *n)
      return cdag__error(CDAG_ERR_STATE, "simulator: %s: members contribute different sizes", det_kind_name(c->kind));
    rc = gather_slot(r, c, ranks[i], v, i == 0 ? r->acc : r->buf);
    if (rc == CDAG_OK && i > 0) ir_reduce_apply(c->type, c->op, r->buf, r->acc, *n / size);
  }
  return rc;
}

static int put_result(plan_run *r, const det_coll *c, int32_t j, uint64_t n) {
  const det_iov *d = slot(r->p, c, 0, j, 0);
  uint64_t nd = iov_bytes(r->p, d);
  if (nd == 0) return CDAG_OK;
  if (nd != n) return cdag__error(CDAG_ERR_STATE, "simulator: %s: result of %llu bytes into a slot of %llu",
                                  det_kind_name(c->kind), (unsigned long long)n, (unsigned long long)nd);
  return scatter_slot(r, c, r->p->ranks[c->ranks_first + j], d, r->acc);
}

static int32_t root_index(const cdag_plan *p, const det_coll *c) {
  for (int32_t i = 0; i < c->nranks; i++)
    if (p->ranks[c->ranks_first + i] == c->root) return i;
  return 0;
}

static int run_coll(plan_run *r, const det_coll *c) {
  int32_t n = c->nranks, root = root_index(r->p, c);
  int rc = CDAG_OK;
  uint64_t bytes;
  switch (c->kind) {
    case DET_BCAST:
      for (int32_t j = 0; j < n && rc == CDAG_OK; j++) if (j != root) rc = move(r, c, root, 0, j, 0);
      return rc;
    case DET_SCATTER: case DET_SCATTERV:
      for (int32_t j = 0; j < n && rc == CDAG_OK; j++) rc = move(r, c, root, j, j, 0);
      return rc;
    case DET_GATHER: case DET_GATHERV:
      for (int32_t i = 0; i < n && rc == CDAG_OK; i++) rc = move(r, c, i, 0, root, i);
      return rc;
    case DET_ALLGATHER: case DET_ALLGATHERV:
      for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n && rc == CDAG_OK; j++) rc = move(r, c, i, 0, j, i);
      return rc;
    case DET_ALLTOALL: case DET_ALLTOALLV:
      for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < n && rc == CDAG_OK; j++) rc = move(r, c, i, j, j, i);
      return rc;
    case DET_REDUCE:
      if ((rc = combine(r, c, 0, &bytes))) return rc;
      return put_result(r, c, root, bytes);
    case DET_ALLREDUCE:
      if ((rc = combine(r, c, 0, &bytes))) return rc;
      for (int32_t j = 0; j < n && rc == CDAG_OK; j++) rc = put_result(r, c, j, bytes);
      return rc;
    case DET_REDUCE_SCATTER: case DET_REDUCE_SCATTER_BLOCK:
      for (int32_t j = 0; j < n && rc == CDAG_OK; j++)
        if ((rc = combine(r, c, j, &bytes)) == CDAG_OK) rc = put_result(r, c, j, bytes);
      return rc;
    default:
      return CDAG_OK; /* barrier: synchronisation only */
  }
}

int sim_run_plan(const cdag_plan *p, sim_mem *m) {
  sim_mem *snap;
  int rc = sim_mem_clone(m, &snap);
  if (rc) return rc;
  plan_run r = {.p = p, .m = m, .snap = snap};
  for (int64_t i = 0; i < p->ncolls && rc == CDAG_OK; i++) rc = run_coll(&r, &p->colls[i]);
  for (int64_t i = 0; i < p->nxfers && rc == CDAG_OK; i++) {
    const df_xfer *x = &p->xfers[i];
    uint8_t *from = sim_mem_at(snap, x->src, x->src_addr, x->len), *to = sim_mem_at(m, x->dst, x->dst_addr, x->len);
    if (!from || !to) rc = cdag__error(CDAG_ERR_ARG, "simulator: residual transfer rank %d -> %d outside memory", x->src, x->dst);
    else memcpy(to, from, (size_t)x->len);
  }
  for (int64_t i = 0; i < p->nreds && rc == CDAG_OK; i++) rc = sim_reduce_tuple(p->sst, &p->reds[i], m, snap);
  free(r.buf);
  free(r.acc);
  sim_mem_free(snap);
  return rc;
}

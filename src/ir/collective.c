/* cdag — src/ir/collective.c: completions and native collectives, as recordings write them.
 *
 * A recorded program waits for requests and calls MPI's collectives itself. Both become
 * ordinary graph operations here, so every later stage (matching, SST, detection, the
 * simulator, the runtime, the model) needs nothing new:
 *  - a join (ir_set_join, ir_add_wait) orders every later op of its rank after it, which is
 *    what "the rank saw this complete before it went on" means; ir_finalize adds one edge
 *    per op, to the latest join before it;
 *  - a native collective call becomes, as it is added, the messages of a flat algorithm on
 *    its communicator (the root sends to or receives from every member; allreduce is reduce
 *    then bcast; allgather and alltoall send to every member), with tags of its own
 *    (IR_TAG_COLL) that no file tag can take, then its own op: a zero-cost join that waits
 *    for those messages. The expansion of one rank needs only that rank's call and the
 *    member list, so a distributed graph expands on its own process, before gathering.
 * The calls' agreement across members (same kind, root, size, type and op for the k-th
 * call on a communicator) is checked by ir_coll_check on global graphs.
 * Cost: O(n) ops and edges for a call over n members at the root, O(1) elsewhere (O(n) for
 * allgather and alltoall); ir_coll_check is O(c log c) for c calls. */
#include <Judy.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "ir/ir.h"

static int is_reduction(int kind) { return ir_coll_get(kind)->reduces; }

static int is_rooted(int kind) { return ir_coll_get(kind)->rooted; }

/* ---- joins ---- */

int ir_set_join(cdag_graph *g, int32_t op, int join) {
  if (op < 0 || op >= g->nops || join < IR_JOIN_NONE || join > IR_JOIN_ALL)
    return cdag__error(CDAG_ERR_ARG, "ir_set_join: op %d or join %d out of range", op, join);
  int rc = ir_ensure_opt(g, (void **)&g->join, sizeof *g->join, 0);
  if (rc) return rc;
  if (g->state != IR_BUILDING) ir_drop_derived(g);
  g->join[op] = (uint8_t)join;
  return CDAG_OK;
}

static int mark_os(cdag_graph *g, int32_t op, int os) {
  if (!g->os && !(g->os = calloc((size_t)g->cap, 1))) return CDAG_NOMEM("operations");
  g->os[op] = (uint8_t)os;
  return CDAG_OK;
}

int ir_add_wait(cdag_graph *g, int rank, const int32_t *ops, int n, int32_t *id) {
  int32_t w;
  int rc = ir_add_calc(g, rank, 0, &w);
  if (rc) return rc;
  for (int k = 0; k < n && !rc; k++) rc = ir_add_dep(g, ops[k], w, 1);
  if (!rc) rc = ir_set_join(g, w, IR_JOIN_AFTER);
  if (!rc) rc = mark_os(g, w, IR_OS_WAIT);
  if (rc) return rc;   /* the calc stays, as a failed ir_add_* leaves what it added; the caller fails */
  if (id) *id = w;
  return CDAG_OK;
}

/* ---- communicators ---- */

static int key_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int64_t comm_index(const cdag_graph *g, int comm) {
  for (int64_t k = 0; k < g->ncomms; k++)
    if (g->comm_id[k] == comm) return k;
  return -1;
}

int ir_comm_members(const cdag_graph *g, int comm, const int32_t **ranks) {
  *ranks = NULL;
  if (comm == 0) return g->nprocs;
  int64_t k = comm_index(g, comm);
  if (k < 0) return -1;
  *ranks = g->members + g->comm_first[k];
  return g->comm_n[k];
}

/* Member index of rank in communicator comm (0: the rank itself), -1 if not a member. */
static int32_t member_of(const cdag_graph *g, int comm, int rank) {
  if (comm == 0) return rank;
  int64_t k = comm_index(g, comm);
  const uint64_t *key = g->member_key + g->comm_first[k];
  int64_t lo = 0, hi = g->comm_n[k];
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    if ((key[mid] >> 32) < (uint64_t)rank) lo = mid + 1;
    else hi = mid;
  }
  return lo < g->comm_n[k] && (key[lo] >> 32) == (uint64_t)rank ? (int32_t)(key[lo] & 0xffffffffu) : -1;
}

static int grow_comms(cdag_graph *g, int n) {
  if (g->ncomms == g->commcap) {
    int64_t cap = base_grown_cap(g->commcap, 1);
    if (base_resize((void **)&g->comm_id, g->ncomms, cap, sizeof *g->comm_id, "communicators") ||
        base_resize((void **)&g->comm_n, g->ncomms, cap, sizeof *g->comm_n, "communicators") ||
        base_resize((void **)&g->comm_first, g->ncomms, cap, sizeof *g->comm_first, "communicators"))
      return CDAG_ERR_NOMEM;
    g->commcap = cap;
  }
  if (g->nmembers + n > g->membercap) {
    int64_t cap = base_grown_cap(g->membercap, n);
    if (base_resize((void **)&g->members, g->nmembers, cap, sizeof *g->members, "communicators") ||
        base_resize((void **)&g->member_key, g->nmembers, cap, sizeof *g->member_key, "communicators"))
      return CDAG_ERR_NOMEM;
    g->membercap = cap;
  }
  return CDAG_OK;
}

int ir_add_comm(cdag_graph *g, int comm, const int32_t *ranks, int n) {
  if (comm < 1 || comm > IR_MAX_COMM)
    return cdag__error(CDAG_ERR_ARG, "communicator %d out of range 1..%d (0 is every rank)", comm, IR_MAX_COMM);
  if (comm_index(g, comm) >= 0) return cdag__error(CDAG_ERR_ARG, "communicator %d is declared twice", comm);
  if (n < 1 || n > g->nprocs)
    return cdag__error(CDAG_ERR_ARG, "communicator %d has %d members (the graph has %d ranks)", comm, n, g->nprocs);
  int rc = grow_comms(g, n);
  if (rc) return rc;
  int64_t first = g->nmembers;
  uint64_t *key = g->member_key + first;
  for (int i = 0; i < n; i++) {
    if (ranks[i] < 0 || ranks[i] >= g->nprocs)
      return cdag__error(CDAG_ERR_ARG, "communicator %d: rank %d out of range 0..%d", comm, ranks[i], g->nprocs - 1);
    g->members[first + i] = ranks[i];
    key[i] = (uint64_t)(uint32_t)ranks[i] << 32 | (uint32_t)i;
  }
  qsort(key, (size_t)n, sizeof *key, key_cmp);
  for (int i = 1; i < n; i++)
    if (key[i] >> 32 == key[i - 1] >> 32)
      return cdag__error(CDAG_ERR_ARG, "communicator %d lists rank %d twice", comm, (int)(key[i] >> 32));
  g->comm_id[g->ncomms] = comm;
  g->comm_first[g->ncomms] = first;
  g->comm_n[g->ncomms++] = n;
  g->nmembers += n;
  return CDAG_OK;
}

/* ---- one call, written out ---- */

typedef struct {
  cdag_graph *g;
  int32_t rank, call, n, me, rootm;   /* me, rootm: member indices */
  int tag;
  const int32_t *ranks;               /* members (NULL: comm 0) */
  uint64_t block;                     /* bytes per block */
  uint64_t scratch;                   /* reductions: (n-1) blocks */
} expansion;

static int32_t rank_of(const expansion *x, int32_t m) { return x->ranks ? x->ranks[m] : m; }

static int part(expansion *x, int kind, int peer, int tag, uint64_t addr, uint64_t addr2, uint64_t bytes) {
  int32_t id;
  int rc = ir_append(x->g, kind, x->rank, peer, tag, addr, addr2, bytes, &id);
  if (!rc) rc = mark_os(x->g, id, IR_OS_COLL_PART);
  if (!rc) x->g->call[id] = x->call;
  return rc;
}

static int send_to(expansion *x, int32_t m, uint64_t addr) {
  return part(x, IR_SEND, rank_of(x, m), x->tag, addr, 0, x->block);
}

static int recv_from(expansion *x, int32_t m, uint64_t addr) {
  return part(x, IR_RECV, rank_of(x, m), x->tag, addr, 0, x->block);
}

static int copy_block(expansion *x, uint64_t src, uint64_t dst) {
  return src == dst || !x->block ? CDAG_OK : part(x, IR_COPY, 0, 0, dst, src, x->block);
}

/* A join inside the expansion (the barrier's root: its sends wait for every receive). */
static int inner_join(expansion *x) {
  int32_t id;
  int rc = ir_append(x->g, IR_CALC, x->rank, 0, 0, 0, 0, 0, &id);
  if (!rc) rc = mark_os(x->g, id, IR_OS_COLL_PART);
  if (!rc) rc = ir_set_join(x->g, id, IR_JOIN_ALL);
  if (!rc) x->g->call[id] = x->call;
  return rc;
}

/* Scratch for n-1 received blocks: above every user address in a global graph, memory of
   the graph's own in a distributed one (the runtime reads and writes it there). */
static int reserve_scratch(expansion *x) {
  cdag_graph *g = x->g;
  uint64_t bytes = (uint64_t)(x->n - 1) * x->block;
  if (!bytes) return CDAG_OK;
  if (g->myrank < 0) {
    x->scratch = IR_COLL_SCRATCH;
    return ir_add_scratch(g, x->rank, x->scratch, bytes);
  }
  void *p;
  if (g->host_ops && g->host_ops->alloc) {   /* the owner's: what it builds from the graph may outlive it */
    if (!(p = g->host_ops->alloc(g, (size_t)bytes))) return CDAG_NOMEM("collective scratch");
  } else {
    BASE_GROW(g->coll_mem, g->ncoll_mem, g->coll_memcap, 1, "collective scratch");
    if (!(p = malloc((size_t)bytes))) return CDAG_NOMEM("collective scratch");
    g->coll_mem[g->ncoll_mem++] = p;
  }
  x->scratch = (uint64_t)(uintptr_t)p;
  return ir_add_scratch(g, x->rank, x->scratch, bytes);
}

/* Receives every other member's block into scratch and folds them into out, member order. */
static int reduce_into(expansion *x, const ir_call *c, uint64_t out) {
  int rc = reserve_scratch(x);
  for (int32_t m = 0, k = 0; m < x->n && !rc; m++)
    if (m != x->me) rc = recv_from(x, m, x->scratch + (uint64_t)k++ * x->block);
  for (int32_t m = 0, k = 0; m < x->n && !rc; m++)
    if (m != x->me)
      rc = part(x, IR_REDUCE, c->type, c->rop, out, x->scratch + (uint64_t)k++ * x->block, x->block);
  return rc;
}

/* A kind the table marks native without a flat algorithm here: a missing row of this file. */
static int no_expansion(const expansion *x, const ir_call *c) {
  return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: %s has no expansion (ir/collective.c)", x->rank,
                     ir_coll_name(c->kind));
}

static int expand_rooted(expansion *x, const ir_call *c) {
  int rc = CDAG_OK, root = x->me == x->rootm;
  uint64_t S = x->block;
  switch (c->kind) {
    case IR_COLL_BCAST:
      for (int32_t m = 0; m < x->n && !rc; m++)
        if (m != x->me) rc = root ? send_to(x, m, c->out) : CDAG_OK;
      return root ? rc : recv_from(x, x->rootm, c->out);
    case IR_COLL_GATHER:
      if (!root) return send_to(x, x->rootm, c->in);
      for (int32_t m = 0; m < x->n && !rc; m++)
        rc = m == x->me ? copy_block(x, c->in, c->out + (uint64_t)m * S) : recv_from(x, m, c->out + (uint64_t)m * S);
      return rc;
    case IR_COLL_SCATTER:
      if (!root) return recv_from(x, x->rootm, c->out);
      for (int32_t m = 0; m < x->n && !rc; m++)
        rc = m == x->me ? CDAG_OK : send_to(x, m, c->in + (uint64_t)m * S);
      return rc ? rc : copy_block(x, c->in + (uint64_t)x->me * S, c->out);
    case IR_COLL_REDUCE:
      if (!root) return send_to(x, x->rootm, c->in);
      if ((rc = copy_block(x, c->in, c->out))) return rc;
      return reduce_into(x, c, c->out);
    default:
      return no_expansion(x, c);
  }
}

static int expand_all(expansion *x, const ir_call *c) {
  int rc = CDAG_OK;
  uint64_t S = x->block;
  switch (c->kind) {
    case IR_COLL_BARRIER:
      if (x->me != 0) return (rc = send_to(x, 0, 0)) ? rc : recv_from(x, 0, 0);
      for (int32_t m = 1; m < x->n && !rc; m++) rc = recv_from(x, m, 0);
      if (!rc && x->n > 1) rc = inner_join(x);
      for (int32_t m = 1; m < x->n && !rc; m++) rc = send_to(x, m, 0);
      return rc;
    case IR_COLL_ALLGATHER:   /* sends first: an in-place block is read before anything lands */
      for (int32_t m = 0; m < x->n && !rc; m++)
        if (m != x->me) rc = send_to(x, m, c->in);
      for (int32_t m = 0; m < x->n && !rc; m++)
        rc = m == x->me ? copy_block(x, c->in, c->out + (uint64_t)m * S) : recv_from(x, m, c->out + (uint64_t)m * S);
      return rc;
    case IR_COLL_ALLTOALL:
      for (int32_t m = 0; m < x->n && !rc; m++)
        if (m != x->me) rc = send_to(x, m, c->in + (uint64_t)m * S);
      for (int32_t m = 0; m < x->n && !rc; m++)
        rc = m == x->me ? copy_block(x, c->in + (uint64_t)m * S, c->out + (uint64_t)m * S)
                        : recv_from(x, m, c->out + (uint64_t)m * S);
      return rc;
    case IR_COLL_ALLREDUCE:   /* reduce at member 0, then its result to every member */
      if (x->me != 0) return (rc = send_to(x, 0, c->in)) ? rc : recv_from(x, 0, c->out);
      if ((rc = copy_block(x, c->in, c->out)) || (rc = reduce_into(x, c, c->out))) return rc;
      for (int32_t m = 1; m < x->n && !rc; m++) rc = send_to(x, m, c->out);
      return rc;
    case IR_COLL_REDUCE_SCATTER_BLOCK:   /* member j reduces every member's block j */
      for (int32_t m = 0; m < x->n && !rc; m++)
        if (m != x->me) rc = send_to(x, m, c->in + (uint64_t)m * S);
      if (!rc) rc = copy_block(x, c->in + (uint64_t)x->me * S, c->out);
      return rc ? rc : reduce_into(x, c, c->out);
    default:
      return no_expansion(x, c);
  }
}

/* ---- adding a call ---- */

static int check_call(const cdag_graph *g, int rank, int kind, int comm, int root, int type, int rop, int32_t *me,
                      int32_t *rootm) {
  if (!ir_coll_get(kind) || !ir_coll_get(kind)->native)
    return cdag__error(CDAG_ERR_ARG, "rank %d: unknown collective %d", rank, kind);
  if (comm != 0 && comm_index(g, comm) < 0)
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s on communicator %d, which is not declared", rank, ir_coll_name(kind), comm);
  if ((*me = member_of(g, comm, rank)) < 0)
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s on communicator %d, which does not contain rank %d", rank,
                       ir_coll_name(kind), comm, rank);
  *rootm = -1;
  if (is_rooted(kind) && (root < 0 || root >= g->nprocs || (*rootm = member_of(g, comm, root)) < 0))
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s rooted at %d, which is not a member of communicator %d", rank,
                       ir_coll_name(kind), root, comm);
  if (is_reduction(kind) && (ir_type_size(type) <= 0 || ir_rop_is_user(rop) || !ir_rop_valid_for(rop, type)))
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s with type %d and op %d, which cdag cannot combine", rank,
                       ir_coll_name(kind), type, rop);
  return CDAG_OK;
}

static int check_extent(int rank, const char *kind, uint64_t addr, uint64_t blocks, uint64_t block) {
  if (block && (blocks > UINT64_MAX / block || addr + blocks * block < addr || addr + blocks * block > IR_COLL_SCRATCH))
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s buffer at 0x%llx of %llu blocks of %llu bytes leaves the address "
                       "space (addresses from 0x%llx up are cdag's)", rank, kind, (unsigned long long)addr,
                       (unsigned long long)blocks, (unsigned long long)block, (unsigned long long)IR_COLL_SCRATCH);
  return CDAG_OK;
}

static int record_call(cdag_graph *g, const ir_call *c, int64_t *index) {
  BASE_GROW(g->calls, g->ncalls, g->callcap, 1, "collective calls");
  int rc = ir_ensure_opt(g, (void **)&g->call, sizeof *g->call, 1);
  if (rc) return rc;
  *index = g->ncalls;
  g->calls[g->ncalls++] = *c;
  return CDAG_OK;
}

int ir_add_coll(cdag_graph *g, int rank, int kind, int comm, int root, uint64_t in, uint64_t out, uint64_t count,
                int type, int rop, int32_t *id) {
  int32_t me = -1, rootm = -1;
  int rc;
  if (rank < 0 || rank >= g->nprocs || (g->myrank >= 0 && rank != g->myrank))
    return cdag__error(CDAG_ERR_ARG, "rank %d out of range or not this process", rank);
  if ((rc = check_call(g, rank, kind, comm, root, type, rop, &me, &rootm))) return rc;
  const int32_t *ranks;
  int32_t n = ir_comm_members(g, comm, &ranks);
  uint64_t block = count, inb, outb;
  if (is_reduction(kind) && ckd_mul(&block, count, (uint64_t)ir_type_size(type)))
    return cdag__error(CDAG_ERR_ARG, "rank %d: count %llu of %s too large", rank, (unsigned long long)count,
                       ir_type_name(type));
  ir_coll_spans(kind, me == rootm, n, &inb, &outb);
  if (kind == IR_COLL_BARRIER) block = 0;
  if ((rc = check_extent(rank, ir_coll_name(kind), in, inb, block)) || (rc = check_extent(rank, ir_coll_name(kind), out, outb, block)))
    return rc;
  ir_call c = {-1, (uint8_t)kind, comm, is_rooted(kind) ? root : -1, type, rop, in, out, count};
  int64_t ci;
  if ((rc = record_call(g, &c, &ci))) return rc;
  expansion x = {g, rank, (int32_t)ci, n, me, rootm, IR_TAG_COLL(comm), ranks, block, 0};
  rc = is_rooted(kind) ? expand_rooted(&x, &c) : expand_all(&x, &c);
  int32_t own;
  if (!rc) rc = ir_append(g, IR_CALC, rank, 0, 0, 0, 0, 0, &own);
  if (!rc) rc = mark_os(g, own, IR_OS_COLL);
  if (!rc) rc = ir_set_join(g, own, IR_JOIN_ALL);
  if (rc) return rc;
  g->call[own] = (int32_t)ci;
  g->calls[ci].op = own;
  if (id) *id = own;
  return CDAG_OK;
}

int ir_append_call(cdag_graph *g, const ir_call *c) {
  int64_t index;
  return record_call(g, c, &index);
}

int ir_mark_call(cdag_graph *g, int32_t op, int64_t call, int os) {
  int rc = ir_ensure_opt(g, (void **)&g->call, sizeof *g->call, 1);
  if (!rc) rc = mark_os(g, op, os);
  if (!rc) g->call[op] = (int32_t)call;
  return rc;
}

/* ---- agreement across members ---- */

typedef struct {
  int32_t comm, seq, member;
  int64_t call;
} call_key;

static int call_key_cmp(const void *a, const void *b) {
  const call_key *x = a, *y = b;
  if (x->comm != y->comm) return x->comm < y->comm ? -1 : 1;
  if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
  return (x->member > y->member) - (x->member < y->member);
}

static int disagree(const cdag_graph *g, const ir_call *a, const ir_call *b, const char *what) {
  char da[160], db[160];
  return cdag__error(CDAG_ERR_FORMAT, "native collectives on communicator %d disagree (%s): %s is a %s, %s a %s",
                     a->comm, what, ir_describe(g, a->op, da, sizeof da), ir_coll_name(a->kind),
                     ir_describe(g, b->op, db, sizeof db), ir_coll_name(b->kind));
}

static int same_call(const cdag_graph *g, const ir_call *a, const ir_call *b) {
  if (a->kind != b->kind) return disagree(g, a, b, "kind");
  if (a->root != b->root) return disagree(g, a, b, "root");
  if (a->count != b->count) return disagree(g, a, b, "size");
  if (is_reduction(a->kind) && (a->type != b->type || a->rop != b->rop)) return disagree(g, a, b, "type or op");
  return CDAG_OK;
}

/* The first member of a group that made no k-th call on its communicator. */
static int missing_call(const cdag_graph *g, const call_key *k, int64_t have) {
  const int32_t *ranks;
  int32_t n = ir_comm_members(g, k->comm, &ranks), m = 0;
  for (int64_t i = 0; i < have && k[i].member == m; i++) m++;
  char d[160];
  return cdag__error(CDAG_ERR_FORMAT, "native collective %d on communicator %d (%s) is not called by rank %d: "
                     "every member must make the same collective calls on a communicator, in the same order",
                     k->seq + 1, k->comm, ir_describe(g, g->calls[k->call].op, d, sizeof d),
                     m < n ? (ranks ? ranks[m] : m) : -1);
}

static int seq_of(Pvoid_t *seq, int32_t comm, int32_t rank, int32_t *out) {
  PWord_t v = (PWord_t)JudyLIns(seq, (Word_t)(uint32_t)comm << 32 | (uint32_t)rank, PJE0);
  if (v == PJERR) return CDAG_NOMEM("collective calls");
  *out = (int32_t)(*v)++;
  return CDAG_OK;
}

/* The calls' scratch sits at IR_COLL_SCRATCH and up: no op of the file may touch it. */
static int reserved_check(const cdag_graph *g) {
  for (int64_t i = 0; i < g->nops; i++) {
    if (g->os && g->os[i] == IR_OS_COLL_PART) continue;
    ir_blocks b = ir_copy_blocks(g, i);   /* a strided copy: the ends of its last blocks */
    uint64_t hi = g->addr[i] + (b.n - 1) * b.to + b.len, hi2 = g->addr2 ? g->addr2[i] + (b.n - 1) * b.from + b.len : 0;
    int touches = g->kind[i] == IR_SEND || g->kind[i] == IR_RECV || g->kind[i] == IR_REDUCE || g->kind[i] == IR_COPY;
    if (touches && (hi > IR_COLL_SCRATCH || ((g->kind[i] == IR_REDUCE || g->kind[i] == IR_COPY) && hi2 > IR_COLL_SCRATCH))) {
      char d[160];
      return cdag__error(CDAG_ERR_ARG, "%s touches addresses from 0x%llx up, which hold the scratch of native "
                         "collectives", ir_describe(g, (int32_t)i, d, sizeof d), (unsigned long long)IR_COLL_SCRATCH);
    }
  }
  return CDAG_OK;
}

int ir_coll_check(const cdag_graph *g) {
  if (!g->ncalls || g->myrank >= 0) return CDAG_OK;
  int rrc = reserved_check(g);
  if (rrc) return rrc;
  call_key *k = malloc((size_t)g->ncalls * sizeof *k);
  Pvoid_t seq = NULL;
  int rc = k ? CDAG_OK : CDAG_NOMEM("collective calls");
  for (int64_t i = 0; i < g->ncalls && !rc; i++) {   /* calls of a rank are added in its program order */
    const ir_call *c = &g->calls[i];
    k[i] = (call_key){c->comm, 0, member_of(g, c->comm, g->rank[c->op]), i};
    rc = seq_of(&seq, c->comm, g->rank[c->op], &k[i].seq);
  }
  JudyLFreeArray(&seq, PJE0);
  if (!rc) qsort(k, (size_t)g->ncalls, sizeof *k, call_key_cmp);
  for (int64_t i = 0; i < g->ncalls && !rc;) {
    const int32_t *ranks;
    int32_t n = ir_comm_members(g, k[i].comm, &ranks);
    int64_t j = i;
    while (j < g->ncalls && k[j].comm == k[i].comm && k[j].seq == k[i].seq) j++;
    if (j - i != n) rc = missing_call(g, k + i, j - i);
    for (int64_t m = i + 1; m < j && !rc; m++) rc = same_call(g, &g->calls[k[i].call], &g->calls[k[m].call]);
    i = j;
  }
  free(k);
  return rc;
}

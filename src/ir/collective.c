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
 *    member list, so a distributed graph expands on its own process, before gathering;
 *  - a nonblocking call (MPI_Ibcast, ...) is written out alike where it starts, but its own
 *    op (and the barrier root's inner one) is a JOIN_CALL: it waits for the call's messages
 *    and orders nothing outside the call, so the rank's ops between the start and the wait
 *    naming it stay concurrent with the call, and only that wait orders the rest after it.
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
  if (op < 0 || op >= g->nops || join < IR_JOIN_NONE || join > IR_JOIN_CALL)
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

/* A map, not a scan: a graph of C communicators looks one up per fence and access (a scan
   made 32,000 two-rank communicators take 14 s to load). */
static int64_t comm_index(const cdag_graph *g, int comm) {
  const Word_t *k = (const Word_t *)JudyLGet((Pcvoid_t)g->comm_map, (Word_t)comm, PJE0);
  return k ? (int64_t)*k : -1;
}

void ir_comms_free(cdag_graph *g) { JudyLFreeArray((PPvoid_t)&g->comm_map, PJE0); }

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
  if (k < 0) return -1;
  const uint64_t *key = g->member_key + g->comm_first[k];
  int64_t lo = 0, hi = g->comm_n[k];
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    if ((key[mid] >> 32) < (uint64_t)rank) lo = mid + 1;
    else hi = mid;
  }
  return lo < g->comm_n[k] && (key[lo] >> 32) == (uint64_t)rank ? (int32_t)(key[lo] & 0xffffffffu) : -1;
}

int32_t ir_comm_member(const cdag_graph *g, int comm, int rank) { return member_of(g, comm, rank); }

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
  Word_t *at = (Word_t *)JudyLIns((PPvoid_t)&g->comm_map, (Word_t)comm, PJE0);
  if (at == PJERR) return CDAG_NOMEM("communicators");
  *at = (Word_t)g->ncomms;
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
  const uint64_t *v;                  /* vector kinds: the member's lists (ir_coll_lists) */
  int join;                           /* the call's joins: IR_JOIN_ALL, IR_JOIN_CALL (nonblocking) */
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
  if (!rc) rc = ir_set_join(x->g, id, x->join);
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

/* Scan (inclusive) and exscan: in goes to every later member first (in place, it is read
   before anything lands), then the earlier members' blocks fold into out, member order. */
static int expand_prefix(expansion *x, const ir_call *c, int inclusive) {
  int rc = reserve_scratch(x);
  for (int32_t m = x->me + 1; m < x->n && !rc; m++) rc = send_to(x, m, c->in);
  if (rc || (!inclusive && x->me == 0)) return rc;
  int32_t first = 0;   /* the block out starts from: its own (scan), member 0's (exscan) */
  if (inclusive) rc = copy_block(x, c->in, c->out);
  else rc = recv_from(x, first++, c->out);
  for (int32_t m = first; m < x->me && !rc; m++) rc = recv_from(x, m, x->scratch + (uint64_t)m * x->block);
  for (int32_t m = first; m < x->me && !rc; m++)
    rc = part(x, IR_REDUCE, c->type, c->rop, c->out, x->scratch + (uint64_t)m * x->block, x->block);
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
    case IR_COLL_SCAN:     /* member j folds members 0..j (itself included) */
    case IR_COLL_EXSCAN:   /* member j folds members 0..j-1; member 0's out is left as it was */
      return expand_prefix(x, c, c->kind == IR_COLL_SCAN);
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

/* ---- vector kinds: blocks of their own size ---- */

int ir_coll_lists(int kind, int is_root) {
  switch (kind) {
    case IR_COLL_GATHERV:
    case IR_COLL_SCATTERV: return is_root ? 2 : 0;
    case IR_COLL_ALLGATHERV: return 2;
    case IR_COLL_REDUCE_SCATTER: return 1;
    default: return ir_coll_get(kind) && ir_coll_get(kind)->vector ? 4 : 0;   /* alltoallv, the neighbourhood kinds */
  }
}

/* A message of `bytes` to or from member m; none for an empty block (both ends know its size). */
static int move(expansion *x, int kind, int32_t m, uint64_t addr, uint64_t bytes) {
  return bytes ? part(x, kind, rank_of(x, m), x->tag, addr, 0, bytes) : CDAG_OK;
}

static int copy_bytes(expansion *x, uint64_t src, uint64_t dst, uint64_t bytes) {
  return src == dst || !bytes ? CDAG_OK : part(x, IR_COPY, 0, 0, dst, src, bytes);
}

/* The flat algorithms of the kinds without expand_rooted/expand_all: their blocks at
   displacements, of each member's size (the lists: counts, displs, recvcounts, recvdispls). */
static int expand_vector(expansion *x, const ir_call *c) {
  int32_t n = x->n, me = x->me;
  const uint64_t *cnt = x->v, *dsp = NULL, *rcnt = NULL, *rdsp = NULL;   /* a gatherv member has none */
  if (cnt) dsp = cnt + n, rcnt = cnt + 2 * (int64_t)n, rdsp = cnt + 3 * (int64_t)n;
  int rc = CDAG_OK, root = me == x->rootm;
  switch (c->kind) {
    case IR_COLL_GATHERV:
      if (!root) return move(x, IR_SEND, x->rootm, c->in, c->count);
      for (int32_t m = 0; m < n && !rc; m++)
        rc = m == me ? copy_bytes(x, c->in, c->out + dsp[m], cnt[m]) : move(x, IR_RECV, m, c->out + dsp[m], cnt[m]);
      return rc;
    case IR_COLL_SCATTERV:
      if (!root) return move(x, IR_RECV, x->rootm, c->out, c->count);
      for (int32_t m = 0; m < n && !rc; m++)
        if (m != me) rc = move(x, IR_SEND, m, c->in + dsp[m], cnt[m]);
      return rc ? rc : copy_bytes(x, c->in + dsp[me], c->out, cnt[me]);
    case IR_COLL_ALLGATHERV:   /* sends first: an in-place block is read before anything lands */
      for (int32_t m = 0; m < n && !rc; m++)
        if (m != me) rc = move(x, IR_SEND, m, c->in, c->count);
      for (int32_t m = 0; m < n && !rc; m++)
        rc = m == me ? copy_bytes(x, c->in, c->out + dsp[m], cnt[m]) : move(x, IR_RECV, m, c->out + dsp[m], cnt[m]);
      return rc;
    case IR_COLL_ALLTOALLV:
    case IR_COLL_ALLTOALLW:
    case IR_COLL_NEIGHBOR_ALLGATHER:
    case IR_COLL_NEIGHBOR_ALLGATHERV:
    case IR_COLL_NEIGHBOR_ALLTOALL:
    case IR_COLL_NEIGHBOR_ALLTOALLV:
    case IR_COLL_NEIGHBOR_ALLTOALLW:   /* each member's blocks to a member are one block here */
      for (int32_t m = 0; m < n && !rc; m++)
        if (m != me) rc = move(x, IR_SEND, m, c->in + dsp[m], cnt[m]);
      for (int32_t m = 0; m < n && !rc; m++)
        rc = m == me ? copy_bytes(x, c->in + dsp[m], c->out + rdsp[m], cnt[m])
                     : move(x, IR_RECV, m, c->out + rdsp[m], rcnt[m]);
      return rc;
    case IR_COLL_REDUCE_SCATTER: {   /* member j reduces every member's block j, counts[j] elements */
      uint64_t es = (uint64_t)ir_type_size(c->type), off = 0, mine = 0;
      for (int32_t m = 0; m < n && !rc; off += cnt[m] * es, m++)
        if (m != me) rc = move(x, IR_SEND, m, c->in + off, cnt[m] * es);
        else mine = off;
      x->block = cnt[me] * es;
      if (rc || !x->block) return rc;
      if ((rc = copy_block(x, c->in + mine, c->out))) return rc;
      return reduce_into(x, c, c->out);
    }
    default:
      return no_expansion(x, c);
  }
}

/* The bytes past in and out a member's call spans: the ends of its blocks (lists checked by
   check_lists, so no sum overflows). */
static void vector_extent(int kind, int32_t n, int32_t me, int root, const uint64_t *v, uint64_t count, int type,
                          uint64_t *in_len, uint64_t *out_len) {
  uint64_t a = 0, b = 0, sum = 0;
  int lists = ir_coll_lists(kind, root);
  for (int32_t m = 0; m < n && lists >= 2; m++) {
    if (v[m] && v[n + m] + v[m] > a) a = v[n + m] + v[m];
    if (lists == 4 && v[2 * n + m] && v[3 * n + m] + v[2 * n + m] > b) b = v[3 * n + m] + v[2 * n + m];
  }
  for (int32_t m = 0; m < n && lists == 1; m++) sum += v[m];
  switch (kind) {
    case IR_COLL_GATHERV: *in_len = count, *out_len = root ? a : 0; return;
    case IR_COLL_SCATTERV: *in_len = root ? a : 0, *out_len = count; return;
    case IR_COLL_ALLGATHERV: *in_len = count, *out_len = a; return;
    case IR_COLL_REDUCE_SCATTER:
      *in_len = sum * (uint64_t)ir_type_size(type), *out_len = v[me] * (uint64_t)ir_type_size(type);
      return;
    default: *in_len = a, *out_len = b; return;   /* alltoallv, the neighbourhood kinds */
  }
}

/* A member's lists: every block inside the address space, its own block the size it says. */
static int check_lists(int rank, int kind, int32_t n, int32_t me, int root, const uint64_t *v,
                       uint64_t in, uint64_t out, uint64_t count, int type) {
  int lists = ir_coll_lists(kind, root);
  const char *name = ir_coll_name(kind);
  if (lists && !v) return cdag__error(CDAG_ERR_ARG, "rank %d: %s without its counts", rank, name);
  uint64_t es = kind == IR_COLL_REDUCE_SCATTER ? (uint64_t)ir_type_size(type) : 1, sum = 0, end;
  for (int l = 0; l < lists; l += 2)
    for (int32_t m = 0; m < n; m++) {
      uint64_t c = v[l * (int64_t)n + m], d = lists > 1 ? v[(l + 1) * (int64_t)n + m] : 0;
      uint64_t base = l == 2 || kind == IR_COLL_GATHERV || kind == IR_COLL_ALLGATHERV ? out : in;
      if (ckd_mul(&end, c, es) || ckd_add(&sum, sum, end) || ckd_add(&end, end, d) || ckd_add(&end, end, base) ||
          end > IR_COLL_SCRATCH)
        return cdag__error(CDAG_ERR_ARG, "rank %d: %s block of member %d (%llu at +%llu) leaves the address space "
                           "(addresses from 0x%llx up are cdag's)", rank, name, m, (unsigned long long)c,
                           (unsigned long long)d, (unsigned long long)IR_COLL_SCRATCH);
    }
  uint64_t own = lists ? v[me] : count;
  if (lists == 4) {   /* alltoallv, the neighbourhood kinds */
    uint64_t sent = 0;
    for (int32_t m = 0; m < n; m++) sent += v[m];
    if (sent != count || v[me] != v[2 * (int64_t)n + me])
      return cdag__error(CDAG_ERR_ARG, "rank %d: %s of %llu bytes whose counts sum to %llu, or whose own "
                         "block is %llu bytes sent and %llu received", rank, name, (unsigned long long)count,
                         (unsigned long long)sent, (unsigned long long)v[me], (unsigned long long)v[2 * (int64_t)n + me]);
  } else if (own != count) {
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s of %llu, but its counts give member %d (itself) %llu", rank, name,
                       (unsigned long long)count, me, (unsigned long long)own);
  }
  if (kind == IR_COLL_REDUCE_SCATTER) {   /* the own block is copied to out before the others fold in */
    uint64_t mine = 0, b = v[me] * es;
    for (int32_t m = 0; m < me; m++) mine += v[m] * es;
    if (b && in + mine != out && in + mine < out + b && out < in + mine + b)
      return cdag__error(CDAG_ERR_ARG, "rank %d: reduce_scatter whose own block of in (0x%llx) overlaps out (0x%llx) "
                         "elsewhere: in place, in and out must be one buffer whose own block is first, or apart",
                         rank, (unsigned long long)(in + mine), (unsigned long long)out);
  }
  uint64_t in_len, out_len;
  vector_extent(kind, n, me, root, v, count, type, &in_len, &out_len);
  int rc = check_extent(rank, name, in, 1, in_len);
  return rc ? rc : check_extent(rank, name, out, 1, out_len);
}

/* Appends call c, and its nv list values (vector kinds) to g->cvec. */
static int record_call(cdag_graph *g, const ir_call *c, const uint64_t *lists, int64_t nv, int64_t *index) {
  BASE_GROW(g->calls, g->ncalls, g->callcap, 1, "collective calls");
  int rc = ir_ensure_opt(g, (void **)&g->call, sizeof *g->call, 1);
  if (rc) return rc;
  if (nv) BASE_GROW(g->cvec, g->ncvec, g->cveccap, nv, "collective counts");
  *index = g->ncalls;
  g->calls[g->ncalls] = *c;
  g->calls[g->ncalls++].vec = nv ? 1 + g->ncvec : 0;
  if (nv) memcpy(g->cvec + g->ncvec, lists, (size_t)nv * sizeof *lists);
  g->ncvec += nv;
  return CDAG_OK;
}

/* lists NULL for the kinds without (ir_coll_lists). */
int ir_add_coll_call(cdag_graph *g, int rank, const ir_call *call, const uint64_t *lists, int32_t *id) {
  int32_t me = -1, rootm = -1;
  int rc, kind = call->kind;
  if (rank < 0 || rank >= g->nprocs || (g->myrank >= 0 && rank != g->myrank))
    return cdag__error(CDAG_ERR_ARG, "rank %d out of range or not this process", rank);
  if ((rc = check_call(g, rank, kind, call->comm, call->root, call->type, call->rop, &me, &rootm))) return rc;
  const int32_t *ranks;
  int32_t n = ir_comm_members(g, call->comm, &ranks);
  uint64_t block = call->count, inb, outb;
  if (is_reduction(kind) && ckd_mul(&block, call->count, (uint64_t)ir_type_size(call->type)))
    return cdag__error(CDAG_ERR_ARG, "rank %d: count %llu of %s too large", rank, (unsigned long long)call->count,
                       ir_type_name(call->type));
  ir_coll_spans(kind, me == rootm, n, &inb, &outb);
  if (kind == IR_COLL_BARRIER) block = 0;
  int vector = ir_coll_get(kind)->vector;
  if (vector) rc = check_lists(rank, kind, n, me, me == rootm, lists, call->in, call->out, call->count, call->type);
  else if ((rc = check_extent(rank, ir_coll_name(kind), call->in, inb, block)) == CDAG_OK)
    rc = check_extent(rank, ir_coll_name(kind), call->out, outb, block);
  if (rc) return rc;
  ir_call c = *call;
  c.op = -1;
  c.root = is_rooted(kind) ? call->root : -1;
  c.nonblocking = call->nonblocking != 0;
  c.vec = 0;
  int64_t ci, nv = vector ? ir_coll_lists(kind, me == rootm) * (int64_t)n : 0;
  if ((rc = record_call(g, &c, lists, nv, &ci))) return rc;
  expansion x = {g, rank, (int32_t)ci, n, me, rootm, IR_TAG_COLL(c.comm), ranks, block, 0,
                 ir_call_lists(g, &g->calls[ci]), c.nonblocking ? IR_JOIN_CALL : IR_JOIN_ALL};
  rc = vector ? expand_vector(&x, &c) : is_rooted(kind) ? expand_rooted(&x, &c) : expand_all(&x, &c);
  int32_t own;
  if (!rc) rc = ir_append(g, IR_CALC, rank, 0, 0, 0, 0, 0, &own);
  if (!rc) rc = mark_os(g, own, IR_OS_COLL);
  if (!rc) rc = ir_set_join(g, own, x.join);
  if (rc) return rc;
  g->call[own] = (int32_t)ci;
  g->calls[ci].op = own;
  if (id) *id = own;
  return CDAG_OK;
}

int ir_add_coll(cdag_graph *g, int rank, int kind, int comm, int root, uint64_t in, uint64_t out, uint64_t count,
                int type, int rop, int32_t *id) {
  ir_call c = {.op = -1, .kind = (uint8_t)kind, .comm = comm, .root = root, .type = type, .rop = rop, .in = in,
               .out = out, .count = count};
  if (!ir_coll_get(kind)) return cdag__error(CDAG_ERR_ARG, "rank %d: unknown collective %d", rank, kind);
  return ir_add_coll_call(g, rank, &c, NULL, id);
}

int ir_add_collv(cdag_graph *g, int rank, int kind, int comm, int root, uint64_t in, uint64_t out, uint64_t count,
                 int type, int rop, const uint64_t *lists, int32_t *id) {
  ir_call c = {.op = -1, .kind = (uint8_t)kind, .comm = comm, .root = root, .type = type, .rop = rop, .in = in,
               .out = out, .count = count};
  if (!ir_coll_get(kind)) return cdag__error(CDAG_ERR_ARG, "rank %d: unknown collective %d", rank, kind);
  return ir_add_coll_call(g, rank, &c, lists, id);
}

const uint64_t *ir_call_lists(const cdag_graph *g, const ir_call *c) { return c->vec ? g->cvec + c->vec - 1 : NULL; }

void ir_call_extent(const cdag_graph *g, const ir_call *c, uint64_t *in_len, uint64_t *out_len) {
  const int32_t *ranks;
  int32_t n = ir_comm_members(g, c->comm, &ranks);
  const ir_coll_info *k = ir_coll_get(c->kind);
  int root = c->root == g->rank[c->op];
  if (k->vector) {
    vector_extent(c->kind, n, member_of(g, c->comm, g->rank[c->op]), root, ir_call_lists(g, c), c->count, c->type,
                  in_len, out_len);
    return;
  }
  uint64_t block = k->reduces ? c->count * (uint64_t)ir_type_size(c->type) : c->count, in, out;
  ir_coll_spans(c->kind, root, n, &in, &out);
  if (k->send == IR_SLOTS_NONE) block = 0;   /* a barrier */
  *in_len = in * block;
  *out_len = out * block;
}

int64_t ir_call_nvalues(const cdag_graph *g, const ir_call *c) {
  const int32_t *ranks;
  int32_t n = ir_comm_members(g, c->comm, &ranks);
  return c->vec && n > 0 ? ir_coll_lists(c->kind, c->root == g->rank[c->op]) * (int64_t)n : 0;
}

int ir_append_call(cdag_graph *g, const ir_call *c, const uint64_t *lists, int64_t nvalues) {
  int64_t index;
  return record_call(g, c, lists, lists ? nvalues : 0, &index);
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

/* Members a and b of one call differ in `what`; the message gives each one's value (va, vb). */
static int disagree(const cdag_graph *g, const ir_call *a, const ir_call *b, const char *what, const char *va,
                    const char *vb) {
  char da[160], db[160];
  return cdag__error(CDAG_ERR_FORMAT, "native collectives on communicator %d disagree on the %s: %s has %s, %s has %s",
                     a->comm, what, ir_describe(g, a->op, da, sizeof da), va, ir_describe(g, b->op, db, sizeof db), vb);
}

static const char *call_kind(const ir_call *c, char *buf, size_t len) {
  snprintf(buf, len, "%s%s", c->nonblocking ? "nonblocking " : "", ir_coll_name(c->kind));
  return buf;
}

static const char *call_size(const ir_call *c, char *buf, size_t len) {
  if (is_reduction(c->kind)) snprintf(buf, len, "%llu elements", (unsigned long long)c->count);
  else snprintf(buf, len, "%llu bytes per member", (unsigned long long)c->count);
  return buf;
}

static const char *call_root(const ir_call *c, char *buf, size_t len) {
  snprintf(buf, len, "root %d", c->root);
  return buf;
}

static int same_call(const cdag_graph *g, const ir_call *a, const ir_call *b) {
  char va[64], vb[64];
  if (a->kind != b->kind || a->nonblocking != b->nonblocking)
    return disagree(g, a, b, "call", call_kind(a, va, sizeof va), call_kind(b, vb, sizeof vb));
  if (a->root != b->root) return disagree(g, a, b, "root", call_root(a, va, sizeof va), call_root(b, vb, sizeof vb));
  if (a->count != b->count && !ir_coll_get(a->kind)->vector)
    return disagree(g, a, b, "size", call_size(a, va, sizeof va), call_size(b, vb, sizeof vb));
  if (is_reduction(a->kind) && a->type != b->type)
    return disagree(g, a, b, "type", ir_type_name(a->type), ir_type_name(b->type));
  if (is_reduction(a->kind) && a->rop != b->rop)
    return disagree(g, a, b, "op", ir_rop_name(a->rop) ? ir_rop_name(a->rop) : "a user op",
                    ir_rop_name(b->rop) ? ir_rop_name(b->rop) : "a user op");
  return CDAG_OK;
}

static int count_disagrees(const cdag_graph *g, const ir_call *a, int32_t m, uint64_t says, const ir_call *b,
                           uint64_t has) {
  char da[160], db[160];
  return cdag__error(CDAG_ERR_FORMAT, "native %s on communicator %d disagree (counts): %s gives member %d %llu, "
                     "%s has %llu", ir_coll_name(a->kind), a->comm, ir_describe(g, a->op, da, sizeof da), m,
                     (unsigned long long)says, ir_describe(g, b->op, db, sizeof db), (unsigned long long)has);
}

/* One vector call's members (k[m]: member m's part, all n there): every member's counts of
   member m are m's own size; alltoallv: what i sends j is what j receives from i. O(n^2),
   the size of the lists. */
static int lists_agree(const cdag_graph *g, const call_key *k, int32_t n) {
  for (int32_t j = 0; j < n; j++) {
    const ir_call *cj = &g->calls[k[j].call];
    const uint64_t *v = ir_call_lists(g, cj);
    if (!v) continue;   /* gatherv and scatterv members but the root */
    for (int32_t m = 0; m < n; m++) {
      const ir_call *cm = &g->calls[k[m].call];
      if (ir_coll_lists(cj->kind, 0) == 4) {
        uint64_t got = ir_call_lists(g, cm)[2 * (int64_t)n + j];
        if (v[m] != got) return count_disagrees(g, cj, m, v[m], cm, got);
      } else if (v[m] != cm->count) {
        return count_disagrees(g, cj, m, v[m], cm, cm->count);
      }
    }
  }
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
    uint64_t hi = g->addr[i] + b.to_last + b.len, hi2 = g->addr2 ? g->addr2[i] + b.from_last + b.len : 0;
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
    if (!rc && ir_coll_get(g->calls[k[i].call].kind)->vector) rc = lists_agree(g, k + i, n);
    i = j;
  }
  free(k);
  return rc;
}

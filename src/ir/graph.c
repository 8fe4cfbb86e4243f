/* cdag — src/ir/graph.c: building graphs.
 *
 * Creating graphs, appending ops to the flat arrays (amortised doubling, no per-op malloc),
 * explicit dependencies, scratch regions, per-op file facts, and the public API of global
 * graphs (cdag_graph_create_global, cdag_rank_*, cdag_depend, cdag_graph_free). Every entry
 * point validates its arguments and answers CDAG_ERR_ARG / CDAG_ERR_STATE with a message. */
#include <limits.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include "base/checked.h"
#include "ir/ir.h"

static void *grow(void *p, int64_t used, int64_t n, size_t elem) {
  return base_realloc(p, (size_t)used * elem, (size_t)n * elem);
}

/* Drops the derived view so the next ir_finalize() recomputes it. */
static void free_all(void *const *p, size_t n);

void ir_drop_derived(cdag_graph *g) {
  void *const derived[] = {g->rank_start, g->rank_ops, g->pos, g->pred_start, g->pred, g->succ_start,
                           g->succ, g->scr_start, g->scr_lo, g->scr_hi};
  free_all(derived, sizeof derived / sizeof *derived);
  g->rank_start = g->rank_ops = g->pos = NULL;
  g->pred_start = g->pred = g->succ_start = g->succ = NULL;
  g->scr_start = NULL;
  g->scr_lo = g->scr_hi = NULL;
  g->nedges = g->nscr_merged = 0;
  g->state = IR_BUILDING;
}

static int heap_kept;   /* ir_keep_heap was called: no trimming */

void ir_trim_heap(const cdag_graph *g) {
#ifdef __GLIBC__
  if (!heap_kept && g->nops >= IR_TRIM_MIN_OPS) malloc_trim(0);
#else
  (void)g;
#endif
}

void ir_keep_heap(void) {
#ifdef __GLIBC__
  heap_kept = 1;
  (void)mallopt(M_MMAP_MAX, 0);
  (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

int ir_graph_new(int nprocs, int myrank, cdag_graph **g) {
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph pointer is NULL");
  *g = NULL;
  if (nprocs < 1 || nprocs > IR_MAX_RANKS)
    return cdag__error(CDAG_ERR_ARG, "number of ranks %d out of range 1..%d", nprocs, IR_MAX_RANKS);
  cdag_graph *n = malloc(sizeof *n);   /* not calloc: see cdag_graph_create */
  if (!n) return CDAG_NOMEM("graph");
  *n = (cdag_graph){0};
  n->nprocs = nprocs;
  n->myrank = myrank;
  *g = n;
  return CDAG_OK;
}

/* Most of a graph's arrays are NULL (a graph of messages has seven): a free call each cost a
   rebuilt graph more than its operations did. */
static void free_all(void *const *p, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (p[k]) free(p[k]);
}

void ir_graph_free(cdag_graph *g) {
  if (!g) return;
  ir_drop_derived(g);
  ir_comms_free(g);
  if (g->host_ops && g->host_ops->free) g->host_ops->free(g->host, g);
  for (int64_t k = 0; k < g->ncoll_mem; k++) free(g->coll_mem[k]);
  void *const arrays[] = {
      g->kind, g->rank, g->peer, g->tag, g->addr, g->addr2, g->bytes, g->cw_len, g->cr_len, g->cut, g->scope,
      g->unhashed, g->acc, g->oscomm, g->stride, g->blkoff, g->line, g->part_of, g->label, g->cpu, g->nic, g->labels, g->dep,
      g->sdep, g->scr_rank, g->scr_addr, g->scr_len, g->seg_rank, g->seg_base, g->seg_len, g->os, g->os_key,
      g->join, g->call, g->calls, g->cvec, g->comm_id, g->comm_n, g->comm_first, g->members, g->member_key,
      g->coll_mem};
  free_all(arrays, sizeof arrays / sizeof *arrays);
  free(g);
}

void ir_op_arrays_free(ir_op_arrays *k) {
  free(k->kind); free(k->rank); free(k->peer); free(k->tag); free(k->addr); free(k->addr2); free(k->bytes);
  *k = (ir_op_arrays){0};
}

void ir_op_arrays_keep(cdag_graph *g, ir_op_arrays *k) {
  if (!g->kind || g->cap > IR_KEEP_OPS) return;
  ir_op_arrays_free(k);
  *k = (ir_op_arrays){g->cap, g->kind, g->rank, g->peer, g->tag, g->addr, g->addr2, g->bytes};
  g->kind = NULL, g->rank = g->peer = g->tag = NULL, g->addr = g->addr2 = g->bytes = NULL;
  g->cap = 0;
}

void ir_op_arrays_reuse(cdag_graph *g, ir_op_arrays *k) {
  if (!k->kind || g->kind || g->nops) return;
  g->cap = k->cap, g->kind = k->kind, g->rank = k->rank, g->peer = k->peer, g->tag = k->tag;
  g->addr = k->addr, g->addr2 = k->addr2, g->bytes = k->bytes;   /* append writes addr2 of every op then */
  *k = (ir_op_arrays){0};
}

/* Grows the optional arrays too, so their length always equals cap. */
static int resize_ops(cdag_graph *g, int64_t cap) {
#define GROW(f)                                         \
  do {                                                  \
    void *p_ = grow(g->f, g->cap, cap, sizeof *g->f);   \
    if (!p_) return CDAG_NOMEM("operations");           \
    g->f = p_;                                          \
  } while (0)
#define GROW_OPT(f, fill)                                               \
  do {                                                                  \
    if (g->f) {                                                         \
      GROW(f);                                                          \
      for (int64_t i_ = g->cap; i_ < cap; i_++) g->f[i_] = (fill);      \
    }                                                                   \
  } while (0)
  GROW(kind); GROW(rank); GROW(peer); GROW(tag); GROW(addr); GROW(bytes);
  GROW_OPT(addr2, 0); GROW_OPT(os, 0); GROW_OPT(line, 0); GROW_OPT(part_of, -1); GROW_OPT(label, 0); GROW_OPT(cpu, -1); GROW_OPT(nic, -1);
  GROW_OPT(join, 0); GROW_OPT(call, -1); GROW_OPT(cw_len, 0); GROW_OPT(cr_len, 0); GROW_OPT(cut, 0); GROW_OPT(scope, 0); GROW_OPT(acc, 0); GROW_OPT(oscomm, 0);
  GROW_OPT(stride, (ir_stride){0});
#undef GROW_OPT
#undef GROW
  g->cap = cap;
  return CDAG_OK;
}

/* Orders by the first uint64_t of each element (pairs, offsets). */
static int u64_cmp(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

int ir_set_unhashed(cdag_graph *g, const uint64_t *pairs, int64_t n) {
  if (!g || n < 0 || (n && !pairs)) return cdag__error(CDAG_ERR_ARG, "ir_set_unhashed: bad arguments");
  uint64_t *u = malloc((size_t)(n ? n : 1) * 2 * sizeof *u);
  if (!u) return CDAG_NOMEM("unhashed ranges");
  memcpy(u, pairs, (size_t)n * 2 * sizeof *u);
  qsort(u, (size_t)n, 2 * sizeof *u, u64_cmp);
  int64_t m = 0;
  for (int64_t k = 0; k < n; k++) {
    uint64_t lo = u[2 * k], hi = lo + u[2 * k + 1];
    if (hi == lo) continue;
    if (m && u[2 * m - 2] + u[2 * m - 1] >= lo) {   /* touching or overlapping the last: one range */
      if (hi > u[2 * m - 2] + u[2 * m - 1]) u[2 * m - 1] = hi - u[2 * m - 2];
      continue;
    }
    u[2 * m] = lo, u[2 * m + 1] = hi - lo, m++;
  }
  free(g->unhashed);
  g->unhashed = u, g->nunhashed = m;
  return CDAG_OK;
}

int ir_reserve(cdag_graph *g, int64_t n) {
  if (n < 0 || g->nops + n > IR_MAX_OPS)
    return cdag__error(CDAG_ERR_ARG, "graph would exceed %d operations", IR_MAX_OPS);
  if (g->nops + n <= g->cap) return CDAG_OK;
  /* a graph that has room already grows by half at least: a plan of many stages reserves
     per stage, and exact growth copied every array once a stage */
  int64_t want = g->nops + n, more = g->cap + g->cap / 2;
  if (more > IR_MAX_OPS) more = IR_MAX_OPS;
  return resize_ops(g, g->cap && want < more ? more : want);
}

static int check_rank(const cdag_graph *g, int rank, const char *what) {
  if (rank < 0 || rank >= g->nprocs)
    return cdag__error(CDAG_ERR_ARG, "%s %d out of range 0..%d", what, rank, g->nprocs - 1);
  if (g->myrank >= 0 && strcmp(what, "rank") == 0 && rank != g->myrank)
    return cdag__error(CDAG_ERR_ARG, "rank %d is not this process (%d)", rank, g->myrank);
  return CDAG_OK;
}

static int check_range(uint64_t addr, uint64_t bytes, const char *what) {
  if (bytes > (uint64_t)INT64_MAX || addr + bytes < addr)
    return cdag__error(CDAG_ERR_ARG, "%s [0x%llx, +%llu) wraps around the address space", what,
                       (unsigned long long)addr, (unsigned long long)bytes);
  return CDAG_OK;
}

/* Appends one op; the caller has validated every field. */
static int append(cdag_graph *g, int kind, int rank, int peer, int tag, uint64_t addr,
                  uint64_t addr2, uint64_t bytes, int32_t *id) {
  if (g->state == IR_COMPILED)
    return cdag__error(CDAG_ERR_STATE, "graph was compiled: no operations can be added");
  if (g->nwritten)
    return cdag__error(CDAG_ERR_STATE, "the graph's one-sided operations were turned into messages when it was "
                       "finalized: no operations can be added");
  if (g->nops >= IR_MAX_OPS)
    return cdag__error(CDAG_ERR_ARG, "graph would exceed %d operations", IR_MAX_OPS);
  if (g->nops == g->cap) {
    int rc = resize_ops(g, g->cap ? g->cap * 2 : 4);
    if (rc) return rc;
  }
  if (!g->addr2 && (kind == IR_REDUCE || kind == IR_COPY || kind == IR_GET || kind == IR_PUT || kind == IR_ACC)) { /* sends and receives need no second address */
    g->addr2 = base_calloc((size_t)g->cap, sizeof *g->addr2);
    if (!g->addr2) return CDAG_NOMEM("operations");
  }
  if (g->state != IR_BUILDING) ir_drop_derived(g);
  int64_t i = g->nops++;
  g->kind[i] = (uint8_t)kind;
  g->rank[i] = rank;
  g->peer[i] = peer;
  g->tag[i] = tag;
  g->addr[i] = addr;
  if (g->addr2) g->addr2[i] = addr2;
  g->bytes[i] = bytes;
  if (g->os) g->os[i] = IR_OS_NONE;
  if (g->join) g->join[i] = IR_JOIN_NONE;
  if (g->call) g->call[i] = -1;
  if (g->stride) g->stride[i] = (ir_stride){0};
  if (id) *id = (int32_t)i;
  return CDAG_OK;
}

int ir_append(cdag_graph *g, int kind, int rank, int peer, int tag, uint64_t addr, uint64_t addr2, uint64_t bytes,
              int32_t *id) {
  return append(g, kind, rank, peer, tag, addr, addr2, bytes, id);
}

static int add_p2p(cdag_graph *g, ir_kind kind, int rank, uint64_t addr, uint64_t bytes, int peer,
                   int tag, int32_t *id) {
  int rc;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  if ((rc = check_rank(g, peer, kind == IR_SEND ? "destination rank" : "source rank"))) return rc;
  if (tag < 0)
    return cdag__error(tag == -1 && kind == IR_RECV ? CDAG_ERR_UNSUPPORTED : CDAG_ERR_ARG,
                       "rank %d: tag %d (tags are >= 0; wildcards are not supported)", rank, tag);
  if ((rc = check_range(addr, bytes, kind == IR_SEND ? "send buffer" : "receive buffer"))) return rc;
  return append(g, kind, rank, peer, tag, addr, 0, bytes, id);
}

int ir_user_tag(const char *fn, int rank, int peer, int tag) {
  if (tag != CDAG_REDISTRIBUTE_TAG) return CDAG_OK;
  int send = strstr(fn, "send") != NULL;
  return cdag__error(CDAG_ERR_ARG, "rank %d: %s %s rank %d: tag %d is reserved (CDAG_REDISTRIBUTE_TAG, the tag of "
                     "cdag_redistribute's messages); use another tag", rank, fn, send ? "to" : "from", peer, tag);
}

int ir_add_send(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes, int dest, int tag, int32_t *id) {
  return add_p2p(g, IR_SEND, rank, addr, bytes, dest, tag, id);
}

int ir_add_recv(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes, int source, int tag, int32_t *id) {
  return add_p2p(g, IR_RECV, rank, addr, bytes, source, tag, id);
}

int ir_add_reduce(cdag_graph *g, int rank, uint64_t in, uint64_t inout, uint64_t count, int type,
                  int rop, int32_t *id) {
  int rc;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  int size = ir_type_size(type);
  if (!size) return cdag__error(CDAG_ERR_ARG, "rank %d: unknown element type %d", rank, type);
  if (!ir_rop_name(rop)) return cdag__error(CDAG_ERR_ARG, "rank %d: unknown reduction op %d", rank, rop);
  if (!ir_rop_valid_for(rop, type))
    return cdag__error(CDAG_ERR_ARG, "rank %d: reduction op %s is not defined for %s", rank,
                       ir_rop_name(rop), ir_type_name(type));
  uint64_t bytes;
  if (ckd_mul(&bytes, count, (uint64_t)size) || bytes > (uint64_t)INT64_MAX)
    return cdag__error(CDAG_ERR_ARG, "rank %d: reduce count %llu too large", rank, (unsigned long long)count);
  if ((rc = check_range(in, bytes, "reduce input")) || (rc = check_range(inout, bytes, "reduce inout")))
    return rc;
  if (in != inout && in < inout + bytes && inout < in + bytes)
    return cdag__error(CDAG_ERR_ARG, "rank %d: reduce of %llu %s (%llu bytes): input [0x%llx, +%llu) and inout "
                       "[0x%llx, +%llu) overlap partially (a count in bytes where elements are meant?)", rank,
                       (unsigned long long)count, ir_type_name(type), (unsigned long long)bytes,
                       (unsigned long long)in, (unsigned long long)bytes, (unsigned long long)inout,
                       (unsigned long long)bytes);
  return append(g, IR_REDUCE, rank, type, rop, inout, in, bytes, id);
}

int ir_add_copy(cdag_graph *g, int rank, uint64_t src, uint64_t dst, uint64_t bytes, int32_t *id) {
  int rc;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  if ((rc = check_range(src, bytes, "copy source")) || (rc = check_range(dst, bytes, "copy destination")))
    return rc;
  if (src != dst && src < dst + bytes && dst < src + bytes)
    return cdag__error(CDAG_ERR_ARG, "rank %d: copy source and destination overlap", rank);
  return append(g, IR_COPY, rank, 0, 0, dst, src, bytes, id);
}

/* Does a block of len bytes at a + i * sa (i < n) meet [b, b + span)? O(1). */
static int range_meets_blocks(uint64_t a, uint64_t sa, uint64_t n, uint64_t len, uint64_t b, uint64_t span) {
  uint64_t i = a + len > b ? 0 : (b - a - len) / sa + 1;   /* the first block ending above b */
  return i < n && a + i * sa < b + span;
}

/* Do blocks i * sa + [0, len) of a and j * sb + [0, len) of b (n each) meet? One side of
   consecutive blocks is one range: O(1). Otherwise one merge of both sequences, O(n): more than
   STRIDED_CHECK_MAX blocks that interleave are not checked (-1). */
#define STRIDED_CHECK_MAX (1ull << 28)
static int blocks_meet(uint64_t a, uint64_t sa, uint64_t b, uint64_t sb, uint64_t n, uint64_t len) {
  if (sb == len) return range_meets_blocks(a, sa, n, len, b, n * len);
  if (sa == len) return range_meets_blocks(b, sb, n, len, a, n * len);
  if (n > STRIDED_CHECK_MAX) return -1;
  for (uint64_t i = 0, j = 0; i < n && j < n;) {
    uint64_t x = a + i * sa, y = b + j * sb;
    if (x < y + len && y < x + len) return 1;
    if (x < y) i++;
    else j++;
  }
  return 0;
}

int ir_add_copy_strided(cdag_graph *g, int rank, uint64_t src, uint64_t dst, uint64_t n, uint64_t len,
                        uint64_t from_stride, uint64_t to_stride, int32_t *id) {
  int rc;
  uint64_t bytes, span_from, span_to;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  if (n == 0) return cdag__error(CDAG_ERR_ARG, "rank %d: a strided copy of 0 blocks", rank);
  if (from_stride < len || to_stride < len)
    return cdag__error(CDAG_ERR_ARG, "rank %d: copy strides %llu and %llu must be at least the block length %llu", rank,
                       (unsigned long long)from_stride, (unsigned long long)to_stride, (unsigned long long)len);
  if (ckd_mul(&bytes, n, len) || ckd_mul(&span_from, n - 1, from_stride) || ckd_add(&span_from, span_from, len) ||
      ckd_mul(&span_to, n - 1, to_stride) || ckd_add(&span_to, span_to, len))
    return cdag__error(CDAG_ERR_ARG, "rank %d: strided copy of %llu blocks of %llu bytes overflows", rank,
                       (unsigned long long)n, (unsigned long long)len);
  if ((rc = check_range(src, span_from, "copy source")) || (rc = check_range(dst, span_to, "copy destination")))
    return rc;
  if (n == 1 || !len || (from_stride == len && to_stride == len)) return ir_add_copy(g, rank, src, dst, bytes, id);
  int meet = !(src == dst && from_stride == to_stride) && src < dst + span_to && dst < src + span_from
                 ? blocks_meet(src, from_stride, dst, to_stride, n, len) : 0;
  if (meet > 0) return cdag__error(CDAG_ERR_ARG, "rank %d: copy source and destination blocks overlap", rank);
  if (meet < 0)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: a strided copy of %llu blocks whose source and destination "
                       "interleave (strides %llu and %llu): cdag checks such blocks one by one, at most %llu", rank,
                       (unsigned long long)n, (unsigned long long)from_stride, (unsigned long long)to_stride,
                       STRIDED_CHECK_MAX);
  int32_t op;
  if ((rc = append(g, IR_COPY, rank, 0, 0, dst, src, bytes, &op))) return rc;
  if ((rc = ir_set_blocks(g, op, (ir_blocks){.n = n, .len = len, .from = from_stride, .to = to_stride}))) return rc;
  if (id) *id = op;
  return CDAG_OK;
}

/* Appends the farthest of the n offsets at `at` (possibly g's own), then them, to g->blkoff;
   *where: the farthest's index. */
static int put_offsets(cdag_graph *g, const uint64_t *at, uint64_t n, uint64_t *where) {
  int own = g->blkoff && at >= g->blkoff && at < g->blkoff + g->nblkoff;
  int64_t from = own ? at - g->blkoff : 0;
  int rc = base_grow((void **)&g->blkoff, g->nblkoff, &g->blkoffcap, (int64_t)n + 1, sizeof *g->blkoff, "block offsets");
  if (rc) return rc;
  if (own) at = g->blkoff + from;   /* the pool may have moved */
  uint64_t *o = g->blkoff + g->nblkoff, last = 0;
  for (uint64_t i = 0; i < n; i++) {
    o[i + 1] = at[i];
    if (at[i] > last) last = at[i];
  }
  o[0] = last;
  *where = (uint64_t)g->nblkoff;
  g->nblkoff += (int64_t)n + 1;
  return CDAG_OK;
}

int ir_set_blocks(cdag_graph *g, int32_t op, ir_blocks b) {
  if (b.n <= 1) return CDAG_OK;
  if (b.n & IR_LISTED)   /* the count shares its word with the listed flags */
    return cdag__error(CDAG_ERR_ARG, "rank %d: %llu blocks: at most 2^62 - 1", g->rank[op], (unsigned long long)b.n);
  int rc = ir_ensure_opt(g, (void **)&g->stride, sizeof *g->stride, 0);
  ir_stride s = {b.n, b.from, b.to};
  if (rc == CDAG_OK && b.from_at && (rc = put_offsets(g, b.from_at, b.n, &s.from)) == CDAG_OK) s.n |= IR_LISTED_FROM;
  if (rc == CDAG_OK && b.to_at && (rc = put_offsets(g, b.to_at, b.n, &s.to)) == CDAG_OK) s.n |= IR_LISTED_TO;
  if (rc == CDAG_OK) g->stride[op] = s;
  return rc;
}

/* The n blocks of a side, base + off[i] (off NULL: i * stride), sorted by address into v;
   CDAG_ERR_ARG when two overlap or one wraps. */
static int side_sorted(uint64_t base, const uint64_t *off, uint64_t stride, uint64_t n, uint64_t len, uint64_t *v) {
  for (uint64_t i = 0; i < n; i++) {
    v[i] = base + (off ? off[i] : i * stride);
    if (v[i] < base || (!off && i && stride > (UINT64_MAX - base) / i)) return CDAG_ERR_ARG;   /* past 2^64 */
  }
  int ascending = 1, descending = 1;   /* most lists are (a datatype's blocks, a plan's pieces): no sort */
  for (uint64_t i = 1; off && ascending && i < n; i++) ascending = v[i] > v[i - 1];
  for (uint64_t i = 1; off && !ascending && descending && i < n; i++) descending = v[i] < v[i - 1];
  for (uint64_t i = 0; off && !ascending && descending && i < n / 2; i++) {
    uint64_t t = v[i];
    v[i] = v[n - 1 - i], v[n - 1 - i] = t;
  }
  if (!ascending && !descending) qsort(v, (size_t)n, sizeof *v, u64_cmp);
  for (uint64_t i = 0; i < n; i++)
    if (v[i] + len < v[i] || (i && v[i] < v[i - 1] + len)) return CDAG_ERR_ARG;
  return CDAG_OK;
}

int ir_check_blocks(uint64_t base, const uint64_t *off, uint64_t stride, uint64_t n, uint64_t len) {
  if (!off && stride < len) return CDAG_ERR_ARG;
  uint64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  int rc = v ? side_sorted(base, off, stride, n, len, v) : CDAG_NOMEM("blocks");
  free(v);
  return rc;
}

/* Offsets that are one stride (at least len) apart from 0 on: that stride in *stride, and
   NULL; else off. So a side is listed only where no stride describes it (the writer writes a
   stride where it can, and the loader reads it back as one). */
static const uint64_t *as_stride(const uint64_t *off, uint64_t n, uint64_t len, uint64_t *stride) {
  if (!off || n < 2 || off[0] || off[1] < len) return off;
  for (uint64_t i = 2; i < n; i++)
    if (off[i] - off[i - 1] != off[1]) return off;
  *stride = off[1];
  return NULL;
}

int ir_set_write_blocks(cdag_graph *g, int32_t op, uint64_t n, uint64_t stride, const uint64_t *off) {
  if (!g || op < 0 || op >= g->nops || !ir_is_compute(g, op) || n < 1 || g->cw_len[op] % n)
    return cdag__error(CDAG_ERR_ARG, "ir_set_write_blocks: not a computation writing %llu blocks", (unsigned long long)n);
  uint64_t len = g->cw_len[op] / n;
  off = as_stride(off, n, len, &stride);
  if (n == 1 || (!off && stride == len)) return CDAG_OK;   /* one range */
  int rc = ir_check_blocks(g->addr[op], off, stride, n, len);
  if (rc == CDAG_ERR_ARG)
    return cdag__error(CDAG_ERR_ARG, "rank %d: a computation's blocks overlap each other, wrap, or lie closer than their "
                       "length", g->rank[op]);
  if (rc) return rc;
  return ir_set_blocks(g, op, (ir_blocks){.n = n, .len = len, .from = len, .to = stride, .to_at = off});
}

int ir_add_copy_listed(cdag_graph *g, int rank, uint64_t src, uint64_t dst, uint64_t n, uint64_t len,
                       const uint64_t *from_off, uint64_t from_stride, const uint64_t *to_off, uint64_t to_stride,
                       int32_t *id) {
  int rc;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  from_off = as_stride(from_off, n, len, &from_stride);
  to_off = as_stride(to_off, n, len, &to_stride);
  if (!from_off && !to_off) return ir_add_copy_strided(g, rank, src, dst, n, len, from_stride, to_stride, id);
  uint64_t bytes;
  if (n < 2 || !len || ckd_mul(&bytes, n, len) || bytes > (uint64_t)INT64_MAX || (from_off ? 0 : from_stride < len) ||
      (to_off ? 0 : to_stride < len))
    return cdag__error(CDAG_ERR_ARG, "rank %d: a copy of listed blocks needs 2 blocks or more of a length, strides at "
                       "least that length", rank);
  uint64_t *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
  rc = a && b ? CDAG_OK : CDAG_NOMEM("listed blocks");
  int onto_itself = 1;   /* every block copied onto itself: allowed, as a plain or strided copy onto itself is */
  for (uint64_t j = 0; onto_itself && j < n; j++)
    onto_itself = src + (from_off ? from_off[j] : j * from_stride) == dst + (to_off ? to_off[j] : j * to_stride);
  if (rc == CDAG_OK && (side_sorted(src, from_off, from_stride, n, len, a) || side_sorted(dst, to_off, to_stride, n, len, b)))
    rc = cdag__error(CDAG_ERR_ARG, "rank %d: a copy's listed blocks overlap each other or wrap", rank);
  for (uint64_t i = 0, j = 0; rc == CDAG_OK && !onto_itself && i < n && j < n;) {   /* sources against destinations */
    if (a[i] < b[j] + len && b[j] < a[i] + len)
      rc = cdag__error(CDAG_ERR_ARG, "rank %d: copy source and destination blocks overlap", rank);
    else if (a[i] < b[j]) i++;
    else j++;
  }
  free(a);
  free(b);
  int32_t op;
  if (rc == CDAG_OK) rc = append(g, IR_COPY, rank, 0, 0, dst, src, bytes, &op);
  if (rc == CDAG_OK)
    rc = ir_set_blocks(g, op, (ir_blocks){.n = n, .len = len, .from = from_stride, .to = to_stride, .from_at = from_off,
                                          .to_at = to_off});
  if (rc == CDAG_OK && id) *id = op;
  return rc;
}

int ir_add_calc(cdag_graph *g, int rank, uint64_t cost, int32_t *id) {
  int rc;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  return append(g, IR_CALC, rank, 0, 0, 0, 0, cost, id);
}

int ir_add_compute(cdag_graph *g, int rank, uint64_t cost, uint64_t raddr, uint64_t rlen, uint64_t waddr,
                   uint64_t wlen, int32_t *id) {
  int rc;
  int32_t op;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  if ((rlen != IR_READS_ALL && (rc = check_range(raddr, rlen, "computation input"))) ||
      (rc = check_range(waddr, wlen, "computation output")))
    return rc;
  if ((rc = ir_ensure_opt(g, (void **)&g->cw_len, sizeof *g->cw_len, 0)) ||
      (rc = ir_ensure_opt(g, (void **)&g->cr_len, sizeof *g->cr_len, 0)))
    return rc;
  if (!g->addr2 && !(g->addr2 = base_calloc((size_t)(g->cap ? g->cap : 1), sizeof *g->addr2)))
    return CDAG_NOMEM("operations");
  if ((rc = append(g, IR_CALC, rank, 0, 0, waddr, rlen == IR_READS_ALL ? 0 : raddr, cost, &op))) return rc;
  g->cw_len[op] = wlen;
  g->cr_len[op] = rlen;
  if (id) *id = op;
  return CDAG_OK;
}

/* Room for one more (rank, address, length) region in three arrays of n used, capacity *cap. */
static int grow_regions(int32_t **rank, uint64_t **addr, uint64_t **len, int64_t n, int64_t *cap, const char *what) {
  if (n < *cap) return CDAG_OK;
  int64_t c = *cap ? *cap * 2 : 16;
  int32_t *r = grow(*rank, n, c, sizeof *r);
  if (r) *rank = r;
  uint64_t *a = r ? grow(*addr, n, c, sizeof *a) : NULL;
  if (a) *addr = a;
  uint64_t *l = a ? grow(*len, n, c, sizeof *l) : NULL;
  if (!l) return CDAG_NOMEM(what);
  *len = l;
  *cap = c;
  return CDAG_OK;
}

int ir_add_scratch(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes) {
  int rc;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if (g->state == IR_COMPILED)
    return cdag__error(CDAG_ERR_STATE, "graph was compiled: no scratch can be added");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  if ((rc = check_range(addr, bytes, "scratch region"))) return rc;
  if ((rc = grow_regions(&g->scr_rank, &g->scr_addr, &g->scr_len, g->nscratch, &g->scratchcap, "scratch")))
    return rc;
  if (g->state != IR_BUILDING) ir_drop_derived(g);
  g->scr_rank[g->nscratch] = rank;
  g->scr_addr[g->nscratch] = addr;
  g->scr_len[g->nscratch] = bytes;
  g->nscratch++;
  return CDAG_OK;
}

static int add_onesided(cdag_graph *g, int kind, int rank, uint64_t buf, uint64_t bytes, int target, int seg,
                        uint64_t taddr, int32_t *id) {
  int rc;
  const char *what = ir_kind_name(kind);
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  if ((rc = check_rank(g, target, "target rank"))) return rc;
  if (seg < -1) return cdag__error(CDAG_ERR_ARG, "rank %d: %s from segment %d (segments are numbered from 0)", rank, what, seg);
  if ((rc = check_range(buf, bytes, kind == IR_GET ? "get destination" : "put source"))) return rc;
  if (seg < 0 && (rc = check_range(taddr, bytes, "target range"))) return rc;
  return append(g, kind, rank, target, seg, buf, taddr, bytes, id);
}

int ir_add_get(cdag_graph *g, int rank, uint64_t dst, uint64_t bytes, int target, int seg, uint64_t taddr,
               int32_t *id) {
  return add_onesided(g, IR_GET, rank, dst, bytes, target, seg, taddr, id);
}

int ir_add_put(cdag_graph *g, int rank, uint64_t src, uint64_t bytes, int target, int seg, uint64_t taddr,
               int32_t *id) {
  return add_onesided(g, IR_PUT, rank, src, bytes, target, seg, taddr, id);
}

int ir_add_accumulate(cdag_graph *g, int rank, uint64_t src, uint64_t count, int type, int rop, int target, int seg,
                      uint64_t taddr, int32_t *id) {
  int rc;
  int32_t op;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  int size = ir_type_size(type);
  if (!size) return cdag__error(CDAG_ERR_ARG, "rank %d: accumulate of unknown element type %d", rank, type);
  if (!ir_rop_name(rop)) return cdag__error(CDAG_ERR_ARG, "rank %d: accumulate with unknown reduction op %d", rank, rop);
  if (!ir_rop_valid_for(rop, type))
    return cdag__error(CDAG_ERR_ARG, "rank %d: accumulate: reduction op %s is not defined for %s", rank,
                       ir_rop_name(rop), ir_type_name(type));
  uint64_t bytes;
  if (ckd_mul(&bytes, count, (uint64_t)size) || bytes > (uint64_t)INT64_MAX)
    return cdag__error(CDAG_ERR_ARG, "rank %d: accumulate count %llu too large", rank, (unsigned long long)count);
  if ((rc = ir_ensure_opt(g, (void **)&g->acc, sizeof *g->acc, 0))) return rc;
  if ((rc = add_onesided(g, IR_ACC, rank, src, bytes, target, seg, taddr, &op))) return rc;
  g->acc[op] = type << 8 | rop;
  if (id) *id = op;
  return CDAG_OK;
}

int ir_set_access_blocks(cdag_graph *g, int32_t op, uint64_t n, uint64_t stride) {
  if (!g || op < 0 || op >= g->nops || !ir_is_access(g, op) || g->nwritten || n < 1 || g->bytes[op] % n)
    return cdag__error(CDAG_ERR_ARG, "ir_set_access_blocks: not a one-sided access of %llu blocks", (unsigned long long)n);
  if (g->myrank >= 0 && n > 1)   /* the wire carries no blocks of an access (and replay runs them as messages) */
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: a distributed graph's one-sided access in blocks", g->myrank);
  uint64_t len = g->bytes[op] / n, hull;
  if (n == 1 || stride == len) return CDAG_OK;   /* one range */
  if (stride < len || ckd_mul(&hull, n - 1, stride) || ckd_add(&hull, hull, len) || hull > (uint64_t)INT64_MAX ||
      (g->tag[op] < 0 && hull > UINT64_MAX - g->addr2[op]))
    return cdag__error(CDAG_ERR_ARG, "rank %d: a one-sided access's blocks of %llu bytes at stride %llu overlap or reach "
                       "past 2^64", g->rank[op], (unsigned long long)len, (unsigned long long)stride);
  if (g->kind[op] == IR_ACC && len % (uint64_t)ir_type_size(g->acc[op] >> 8))
    return cdag__error(CDAG_ERR_ARG, "rank %d: an accumulate's blocks of %llu bytes split its %s elements", g->rank[op],
                       (unsigned long long)len, ir_type_name(g->acc[op] >> 8));
  return ir_set_blocks(g, op, (ir_blocks){.n = n, .len = len, .from = len, .to = stride});
}

int ir_set_onesided_comm(cdag_graph *g, int32_t op, int comm) {
  int rc;
  if (!g || op < 0 || op >= g->nops) return cdag__error(CDAG_ERR_ARG, "no operation %d", op);
  int k = g->kind[op];
  if (k != IR_GET && k != IR_PUT && k != IR_ACC && k != IR_FENCE)
    return cdag__error(CDAG_ERR_ARG, "rank %d: only fences and one-sided accesses name a communicator", g->rank[op]);
  if (comm < 0 || comm > IR_MAX_COMM)
    return cdag__error(CDAG_ERR_ARG, "rank %d: communicator %d out of range 0..%d", g->rank[op], comm, IR_MAX_COMM);
  if (!comm && !g->oscomm) return CDAG_OK;
  if ((rc = ir_ensure_opt(g, (void **)&g->oscomm, sizeof *g->oscomm, 0))) return rc;
  g->oscomm[op] = comm;
  return CDAG_OK;
}

int ir_add_fence(cdag_graph *g, int rank, int32_t *id) {
  int rc;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  return append(g, IR_FENCE, rank, 0, 0, 0, 0, 0, id);
}

int ir_add_segment(cdag_graph *g, int rank, uint64_t base, uint64_t bytes, int *seg) {
  int rc;
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if (g->state == IR_COMPILED || g->nwritten)
    return cdag__error(CDAG_ERR_STATE, "graph was compiled: no segment can be added");
  if ((rc = check_rank(g, rank, "rank"))) return rc;
  if ((rc = check_range(base, bytes, "segment"))) return rc;
  if (base + bytes > (uint64_t)INT64_MAX + 1)   /* an access into it is saved at its address, a number below 2^63 */
    return cdag__error(CDAG_ERR_ARG, "segment [0x%llx, +%llu) reaches past 2^63", (unsigned long long)base,
                       (unsigned long long)bytes);
  if ((rc = grow_regions(&g->seg_rank, &g->seg_base, &g->seg_len, g->nseg, &g->segcap, "segments"))) return rc;
  int k = 0;
  for (int64_t i = 0; i < g->nseg; i++) k += g->seg_rank[i] == rank;
  if (g->state != IR_BUILDING) ir_drop_derived(g);
  g->seg_rank[g->nseg] = rank;
  g->seg_base[g->nseg] = base;
  g->seg_len[g->nseg] = bytes;
  g->nseg++;
  if (seg) *seg = k;
  return CDAG_OK;
}

/* Appends the pair (before, after) to a dependency list; the derived view is dropped (both
   kinds order program order). */
static int append_dep(int32_t **list, int64_t *n, int64_t *cap, cdag_graph *g, int64_t before, int64_t after,
                      const char *what) {
  if (*n == *cap) {
    int64_t c = *cap ? *cap * 2 : 64;
    int32_t *d = grow(*list, 2 * *n, 2 * c, sizeof *d);
    if (!d) return CDAG_NOMEM(what);
    *list = d;
    *cap = c;
  }
  if (g->state != IR_BUILDING) ir_drop_derived(g);
  (*list)[2 * *n] = (int32_t)before;
  (*list)[2 * *n + 1] = (int32_t)after;
  (*n)++;
  return CDAG_OK;
}

/* Both ops exist, belong to one rank, the graph is not compiled (and, if ordered, before
   comes first). */
static int check_dep(const cdag_graph *g, int64_t before, int64_t after, int ordered) {
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if (g->state == IR_COMPILED)
    return cdag__error(CDAG_ERR_STATE, "graph was compiled: no dependency can be added");
  if (before < 0 || before >= g->nops || after < 0 || after >= g->nops)
    return cdag__error(CDAG_ERR_ARG, "dependency %lld -> %lld names an operation not in the graph (0..%lld)",
                       (long long)before, (long long)after, (long long)g->nops - 1);
  if (g->rank[before] != g->rank[after])
    return cdag__error(CDAG_ERR_ARG, "dependency %lld -> %lld joins ops of ranks %d and %d (must be one rank)",
                       (long long)before, (long long)after, g->rank[before], g->rank[after]);
  if (ordered && before >= after)
    return cdag__error(CDAG_ERR_ARG, "dependency %lld -> %lld: the earlier operation must come first",
                       (long long)before, (long long)after);
  return CDAG_OK;
}

int ir_add_dep(cdag_graph *g, int64_t before, int64_t after, int ordered) {
  int rc = check_dep(g, before, after, ordered);
  if (rc) return rc;
  return append_dep(&g->dep, &g->ndeps, &g->depcap, g, before, after, "dependencies");
}

int ir_add_start_dep(cdag_graph *g, int64_t before, int64_t after) {
  int rc = check_dep(g, before, after, 0);
  return rc ? rc : append_dep(&g->sdep, &g->nsdeps, &g->sdepcap, g, before, after, "start dependencies");
}

/* Allocates an optional per-op array on first use, filled with `fill`. */
int ir_ensure_opt(cdag_graph *g, void **arr, size_t elem, int fill_minus_one) {
  if (*arr) return CDAG_OK;
  int64_t n = g->cap ? g->cap : 1;
  *arr = malloc((size_t)n * elem);
  if (!*arr) return CDAG_NOMEM("operation facts");
  memset(*arr, fill_minus_one ? 0xff : 0, (size_t)n * elem);
  return CDAG_OK;
}

int ir_set_line(cdag_graph *g, int32_t op, uint32_t line) {
  int rc = ir_ensure_opt(g, (void **)&g->line, sizeof *g->line, 0);
  if (rc) return rc;
  g->line[op] = line;
  return CDAG_OK;
}

int ir_set_part_of(cdag_graph *g, int32_t first, int32_t last, int32_t owner) {
  if (first < 0 || last >= g->nops || owner < 0 || owner >= g->nops)
    return cdag__error(CDAG_ERR_ARG, "ir_set_part_of: ops %d..%d or %d out of range", first, last, owner);
  int rc = ir_ensure_opt(g, (void **)&g->part_of, sizeof *g->part_of, 1);
  for (int32_t op = first; !rc && op <= last; op++)
    if (op != owner) g->part_of[op] = owner;
  return rc;
}

int ir_set_label(cdag_graph *g, int32_t op, const char *label, int64_t len) {
  int rc = ir_ensure_opt(g, (void **)&g->label, sizeof *g->label, 0);
  if (rc) return rc;
  if (g->labels_len + len + 1 > UINT32_MAX - 1) return cdag__error(CDAG_ERR_ARG, "too many labels");
  if ((rc = base_grow((void **)&g->labels, g->labels_len, &g->labels_cap, (int64_t)len + 1, 1, "labels"))) return rc;
  memcpy(g->labels + g->labels_len, label, (size_t)len);
  g->labels[g->labels_len + len] = '\0';
  g->label[op] = (uint32_t)(g->labels_len + 1);
  g->labels_len += len + 1;
  return CDAG_OK;
}

int ir_set_goal(cdag_graph *g, int32_t op, int32_t cpu, int32_t nic) {
  int rc;
  if ((rc = ir_ensure_opt(g, (void **)&g->cpu, sizeof *g->cpu, 1))) return rc;
  if ((rc = ir_ensure_opt(g, (void **)&g->nic, sizeof *g->nic, 1))) return rc;
  g->cpu[op] = cpu;
  g->nic[op] = nic;
  return CDAG_OK;
}

const char *ir_label(const cdag_graph *g, int32_t op) {
  if (!g->label || !g->label[op]) return NULL;
  return g->labels + g->label[op] - 1;
}

/* Op's number among its rank's ops as the graph wrote them (not counting what expanding
   one-sided ops added before it); an op expansion added: its position. Error paths only:
   O(ops). */
static int64_t written_index(const cdag_graph *g, int32_t op) {
  if (!g->nwritten || op >= g->nwritten) return g->pos ? g->pos[op] : op;
  int64_t k = 0;
  for (int32_t i = 0; i < op; i++) k += g->rank[i] == g->rank[op];
  return k;
}

const char *ir_describe(const cdag_graph *g, int32_t op, char *buf, int size) {
  static const char *const os_names[] = {NULL, "get", "put", "fence", NULL, NULL, NULL, "wait", "accumulate"};
  const char *kind = g->os && os_names[g->os[op]] ? os_names[g->os[op]] : ir_kind_name(g->kind[op]);
  char what[64];
  if (g->os && g->os[op] == IR_OS_PARTNER)
    kind = g->tag[op] == IR_TAG_GET ? "target side of a get"
           : g->tag[op] == IR_TAG_PUT ? "target side of a put" : "target side of an accumulate";
  if (g->os && (g->os[op] == IR_OS_COLL || g->os[op] == IR_OS_COLL_PART)) {
    snprintf(what, sizeof what, "%s%s", g->os[op] == IR_OS_COLL ? "" : "a message of ",
             ir_coll_name(g->calls[g->call[op]].kind));
    kind = what;
  }
  int n = snprintf(buf, (size_t)size, "rank %d op %lld (%s", g->rank[op], (long long)written_index(g, op), kind);
  const char *l = ir_label(g, op);
  if (n < size && g->line && g->line[op]) n += snprintf(buf + n, (size_t)(size - n), ", line %u", g->line[op]);
  if (n < size && g->part_of && g->part_of[op] >= 0)   /* a typed message's: the op the program holds */
    n += snprintf(buf + n, (size_t)(size - n), ", part of the typed message returned as op %lld",
                  (long long)written_index(g, g->part_of[op]));
  if (n < size && l) n += snprintf(buf + n, (size_t)(size - n), ", label %s", l);
  if (n < size) snprintf(buf + n, (size_t)(size - n), ")");
  return buf;
}

/* ---- public API of global graphs ---- */

static int to_id(int32_t id, cdag_op *op) {
  if (op) *op = id;
  return CDAG_OK;
}

int cdag_graph_create_global(int nprocs, cdag_graph **g) { return ir_graph_new(nprocs, -1, g); }

/* The cdag_rank_* calls describe other ranks' operations: only global graphs have them (a
   distributed graph's ops are this process's, with real addresses). */
static int global_only(const cdag_graph *g, const char *fn) {
  if (g && g->myrank >= 0)
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s on a distributed graph (use the calls without _rank_, or "
                       "cdag_graph_create_global)", g->myrank, fn);
  return CDAG_OK;
}

int cdag_rank_send(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes, int dest, int tag, cdag_op *op) {
  int32_t id;
  int rc = global_only(g, "cdag_rank_send");
  if (!rc) rc = ir_user_tag("cdag_rank_send", rank, dest, tag);
  if (!rc) rc = ir_add_send(g, rank, addr, bytes, dest, tag, &id);
  return rc ? rc : to_id(id, op);
}

int cdag_rank_recv(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes, int source, int tag, cdag_op *op) {
  int32_t id;
  int rc = global_only(g, "cdag_rank_recv");
  if (!rc) rc = ir_user_tag("cdag_rank_recv", rank, source, tag);
  if (!rc) rc = ir_add_recv(g, rank, addr, bytes, source, tag, &id);
  return rc ? rc : to_id(id, op);
}

int cdag_rank_reduce_local(cdag_graph *g, int rank, uint64_t in, uint64_t inout, uint64_t count,
                           cdag_type type, cdag_reduce_op rop, cdag_op *op) {
  int32_t id;
  int rc = global_only(g, "cdag_rank_reduce_local");
  if (!rc && ((unsigned)type > CDAG_COMPLEX_LONG_DOUBLE || (unsigned)rop > CDAG_MINLOC))  /* ir's user encodings */
    rc = cdag__error(CDAG_ERR_ARG, "rank %d: unknown element type %d or reduction op %d", rank, (int)type, (int)rop);
  if (!rc) rc = ir_add_reduce(g, rank, in, inout, count, (int)type, (int)rop, &id);
  return rc ? rc : to_id(id, op);
}

int cdag_rank_copy_local(cdag_graph *g, int rank, uint64_t src, uint64_t dst, uint64_t bytes, cdag_op *op) {
  int32_t id;
  int rc = global_only(g, "cdag_rank_copy_local");
  if (!rc) rc = ir_add_copy(g, rank, src, dst, bytes, &id);
  return rc ? rc : to_id(id, op);
}

int cdag_rank_compute(cdag_graph *g, int rank, uint64_t raddr, uint64_t rlen, uint64_t waddr, uint64_t wlen,
                      uint64_t cost_ns, cdag_op *op) {
  int32_t id;
  int rc = global_only(g, "cdag_rank_compute");
  uint64_t rl = rlen == (uint64_t)CDAG_READS_ALL ? IR_READS_ALL : rlen;
  if (!rc && rl == IR_READS_ALL && raddr)
    rc = cdag__error(CDAG_ERR_ARG, "rank %d: cdag_rank_compute reads all (CDAG_READS_ALL) from address 0x%llx: "
                     "pass 0", rank, (unsigned long long)raddr);
  if (!rc && !rl && !wlen)
    rc = cdag__error(CDAG_ERR_ARG, "rank %d: cdag_rank_compute reads and writes nothing (a computation is placed by "
                     "the memory it touches)", rank);
  if (!rc) rc = ir_add_compute(g, rank, cost_ns, raddr, rl, waddr, wlen, &id);
  return rc ? rc : to_id(id, op);
}

int cdag_rank_scratch(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes) {
  int rc = global_only(g, "cdag_rank_scratch");
  return rc ? rc : ir_add_scratch(g, rank, addr, bytes);
}

int cdag_rank_get(cdag_graph *g, int rank, uint64_t dst, uint64_t bytes, int target, uint64_t target_addr,
                  cdag_op *op) {
  int32_t id = -1;
  int rc = global_only(g, "cdag_rank_get");
  if (!rc) rc = ir_add_get(g, rank, dst, bytes, target, -1, target_addr, &id);
  return rc ? rc : to_id(id, op);
}

int cdag_rank_put(cdag_graph *g, int rank, uint64_t src, uint64_t bytes, int target, uint64_t target_addr,
                  cdag_op *op) {
  int32_t id = -1;
  int rc = global_only(g, "cdag_rank_put");
  if (!rc) rc = ir_add_put(g, rank, src, bytes, target, -1, target_addr, &id);
  return rc ? rc : to_id(id, op);
}

int cdag_rank_fence(cdag_graph *g, int rank) {
  int rc = global_only(g, "cdag_rank_fence");
  return rc ? rc : ir_add_fence(g, rank, NULL);
}

int cdag_label(cdag_graph *g, cdag_op op, const char *label) {
  if (!g || !label) return cdag__error(CDAG_ERR_ARG, "cdag_label: NULL argument");
  if (op == CDAG_OP_NULL) return CDAG_OK;   /* an MPI_PROC_NULL peer's op */
  if (op < 0 || op >= g->nops)
    return cdag__error(CDAG_ERR_ARG, "cdag_label: operation %lld is not in the graph (0..%lld)", (long long)op,
                       (long long)g->nops - 1);
  if (g->state == IR_COMPILED) return cdag__error(CDAG_ERR_STATE, "cdag_label: the graph was compiled");
  size_t n = strlen(label);
  if (n > 4096) return cdag__error(CDAG_ERR_ARG, "cdag_label: a label of %zu bytes (at most 4096)", n);
  return ir_set_label(g, (int32_t)op, label, (int64_t)n);
}

int cdag_depend(cdag_graph *g, cdag_op before, cdag_op after) {
  if (g && (before == CDAG_OP_NULL || after == CDAG_OP_NULL)) return CDAG_OK;   /* an MPI_PROC_NULL peer's op */
  int rc = ir_add_dep(g, before, after, 1);
  return g && g->myrank >= 0 ? cdag__error_named(rc, g->myrank, "cdag_depend") : rc;
}

int cdag_graph_free(cdag_graph **g) {
  if (!g) return CDAG_OK;
  ir_graph_free(*g);
  *g = NULL;
  return CDAG_OK;
}

int cdag_graph_info(const cdag_graph *g, int *nprocs, int64_t *nops) {
  if (!g) return cdag__error(CDAG_ERR_ARG, "graph is NULL");
  if (nprocs) *nprocs = g->nprocs;
  if (nops) *nops = g->nops;
  return CDAG_OK;
}

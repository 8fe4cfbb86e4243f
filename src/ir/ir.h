/* cdag — src/ir: the graph intermediate representation (contract of the ir stage).
 *
 * A graph is a flat struct of arrays indexed by op id (0..nops-1, int32 internally; at most
 * IR_MAX_OPS ops). Ops are sends, receives, local reduces, local copies and GOAL compute
 * steps (calc, no memory effect); scratch regions are per-rank address ranges whose final
 * contents do not matter. A global graph describes every rank; a distributed graph holds
 * one process's ops (rank == myrank) with real pointers as addresses.
 *
 * ir_finalize() derives, in O(n log n) for n ops:
 *   - program order per rank (rank_start/rank_ops, pos): the order ops were added, except
 *     that a file's `requires` pointing forward reorders the rank stably (topological);
 *   - dependencies (pred/succ, CSR): explicit ones plus memory conflicts between ops of one
 *     rank (RAW, WAR, WAW on overlapping bytes; disjoint buffers stay concurrent), found with
 *     a per-rank address-interval map (Judy). Redundant edges are not all removed, but each
 *     (pred, op) pair appears once. Worst case of edges: O(n * k) where k is the largest
 *     number of pieces one op overlaps; O(n) for the patterns that occur.
 *   - merged, sorted scratch intervals per rank.
 * Adding after ir_finalize() drops the derived view; the next ir_finalize() recomputes it.
 * Field encoding by kind (addr / addr2 / bytes / peer / tag):
 *   SEND, RECV: buffer / - / bytes / partner rank / tag
 *   REDUCE:     inout / in / count*typesize / cdag_type / cdag_reduce_op
 *   COPY:       dst / src / bytes / - / -
 *               a strided copy (g->stride, ir_add_copy_strided) moves bytes in n blocks of
 *               bytes / n: block i from src + i * from-stride to dst + i * to-stride, or
 *               at listed offsets on a side (ir_add_copy_listed: an indexed datatype)
 *   CALC:       - / - / cost / - / -
 *   computation (a CALC with a memory effect, ir_add_compute): writes cw_len bytes at addr,
 *               reads cr_len at addr2 (IR_READS_ALL: every byte an earlier op of the rank
 *               wrote, as a recording must assume) / cost / - / -
 * One-sided ops (onesided.c) are added as GET / PUT / FENCE and exist only until
 * ir_finalize, which makes each get or put a message pair (see ir_onesided_expand):
 *   GET, PUT:   local dst (src) / target address, or offset in the segment / bytes / target
 *               / segment (-1: addr2 is an address of the target)
 *   FENCE:      - / - / - / - / -
 *   ACC:        as PUT; acc[op] = cdag_type << 8 | cdag_reduce_op (bytes: count*typesize) */
#ifndef CDAG_IR_H
#define CDAG_IR_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cdag.h"
#include "base/alloc.h"
#include "base/error.h"
#include "base/sort.h"
#include "ir/coll_kinds.h"

#define IR_MAX_OPS 0x7ffffff0
#define IR_MAX_RANKS (1 << 30)
/* Graphs of up to IR_DENSE_RANKS ranks may leave any number of them idle; larger ones need
   an operation per IR_RANKS_PER_OP ranks (ir_finalize refuses others before allocating). */
#define IR_DENSE_RANKS (1 << 20)
#define IR_RANKS_PER_OP 64

typedef enum { IR_SEND, IR_RECV, IR_REDUCE, IR_COPY, IR_CALC, IR_NKINDS } ir_kind;
/* One-sided kinds, before expansion (never seen by the passes after ir_finalize). */
enum { IR_GET = IR_NKINDS + 1, IR_PUT, IR_FENCE, IR_ACC };
/* What expansion made of an op (g->os): the origin side of a get (now a receive) or of a
   put (now a send), a fence (now a calc of 0), or the target side it added. */
enum { IR_OS_NONE, IR_OS_GET, IR_OS_PUT, IR_OS_FENCE, IR_OS_PARTNER,
       IR_OS_COLL, IR_OS_COLL_PART, IR_OS_WAIT, IR_OS_ACC };
/* Joins (g->join): JOIN_AFTER: every later op of the rank depends on the op (a blocking call,
   a wait); JOIN_ALL: besides, the op depends on every op of the rank since the previous join
   (a collective call completing its messages). JOIN_CALL, in a nonblocking native call
   only: the op depends on the ops of its call before it (since the previous join) and the
   later ops of its call depend on it, but no other op does: the call's end, which a `wait`
   naming it completes, and the barrier root's wait for every member inside the call. */
enum { IR_JOIN_NONE, IR_JOIN_AFTER, IR_JOIN_ALL, IR_JOIN_CALL };
/* Native collectives' messages use tags IR_TAG_COLL(comm); their reductions' scratch in a
   global graph sits at IR_COLL_SCRATCH and up, which no other op may touch. */
#define IR_TAG_COLL(comm) (-16 - (comm))
#define IR_MAX_COMM (1 << 24)
#define IR_COLL_SCRATCH 0x7fff000000000000ull
/* Tags of the message pairs of gets and puts: users' tags are >= 0, so these never match
   a message the graph wrote. */
#define IR_TAG_GET (-2)
/* cr_len of a computation that reads every byte the rank's earlier ops wrote. */
#define IR_READS_ALL UINT64_MAX
#define IR_TAG_PUT (-3)
/* ... and of accumulates, whose target side receives into IR_ACC_SCRATCH and up (no other
   op may touch it) and reduces from there into the target's bytes. */
#define IR_TAG_ACC (-4)
#define IR_ACC_SCRATCH 0x7ffc000000000000ull
#define IR_ACC_SCRATCH_LEN (1ull << 48)
/* Is address a in the one-sided accesses' scratch (cdag's own, added by expansion)? */
static inline int ir_in_acc_scratch(uint64_t a) { return a >= IR_ACC_SCRATCH && a - IR_ACC_SCRATCH < IR_ACC_SCRATCH_LEN; }
enum { IR_BUILDING = 0, IR_FINAL = 1, IR_COMPILED = 2 };

/* A native collective call of one rank (ir_add_coll). */
typedef struct {
  int32_t op;            /* the call's own op: a join (calc of 0) after its messages */
  uint8_t kind;          /* IR_COLL_* */
  int32_t comm, root;    /* root: a rank of the graph, -1 unrooted */
  int32_t type, rop;     /* reductions */
  uint64_t in, out, count;
  int64_t vec;           /* vector kinds: 1 + where its lists start in g->cvec (ir_call_lists), 0 none */
  uint8_t nonblocking;   /* MPI_I<kind>: started here, completed by a wait naming `op` */
} ir_call;

/* The pattern of a strided copy (g->stride): n >= 2 blocks of the op's bytes / n each, the
   i-th read at addr2 + i * from and written at addr + i * to (from, to >= the block length:
   blocks of one side never overlap). n 0: an ordinary copy. A side whose flag is set in n
   (IR_LISTED_FROM, IR_LISTED_TO) is listed: its field is where in g->blkoff its farthest
   block's offset sits, the n offsets of its blocks following it (block i at the base plus the
   i-th). Read it through ir_copy_blocks / ir_stride_blocks; 24 bytes per op either way. */
typedef struct {
  uint64_t n, from, to;
} ir_stride;
#define IR_LISTED_FROM (1ull << 63)
#define IR_LISTED_TO (1ull << 62)
#define IR_LISTED (IR_LISTED_FROM | IR_LISTED_TO)

/* A layer above that owns a graph (for a distributed graph, the MPI runtime) attaches its
   data to it; ir carries the data, frees it with the graph, and asks the owner for memory
   that must outlive the graph. ir never looks inside. */
typedef struct {
  void (*free)(void *data, cdag_graph *g);      /* called with the graph's free, before ir frees
                                                   g's arrays (it may keep them: ir_op_arrays) */
  void *(*alloc)(cdag_graph *g, size_t bytes);  /* memory as long-lived as the graph and what is
                                                   built from it (NULL: the graph's own) */
} ir_host_ops;

/* A graph's op arrays, kept by an owner between graphs: a program that rebuilds its graph
   every iteration reuses the memory of the one it freed. ir_op_arrays_keep moves g's into k
   (g being freed; k's own are freed first; arrays of more than IR_KEEP_OPS ops are not kept),
   ir_op_arrays_reuse moves k's into g (a new graph, no ops yet; k empty after). */
#define IR_KEEP_OPS 4096
typedef struct {
  int64_t cap;
  uint8_t *kind;
  int32_t *rank, *peer, *tag;
  uint64_t *addr, *addr2, *bytes;   /* addr2 may be NULL */
} ir_op_arrays;
void ir_op_arrays_keep(cdag_graph *g, ir_op_arrays *k);
void ir_op_arrays_reuse(cdag_graph *g, ir_op_arrays *k);
void ir_op_arrays_free(ir_op_arrays *k);

struct cdag_graph {
  int32_t nprocs;        /* ranks of the graph */
  int32_t myrank;        /* distributed graph: this process's rank; global graph: -1 */
  int32_t state;         /* IR_BUILDING, IR_FINAL (derived view valid), IR_COMPILED */
  void *host;            /* the owner's data (ir_host_ops), NULL: none */
  const ir_host_ops *host_ops;   /* the owner's callbacks, NULL: none */

  /* ops (struct of arrays, capacity cap) */
  int64_t nops, cap;
  uint8_t *kind;         /* ir_kind */
  int32_t *rank;         /* owner */
  int32_t *peer;         /* send/recv: partner; reduce: cdag_type */
  int32_t *tag;          /* send/recv: tag; reduce: cdag_reduce_op */
  uint64_t *addr;        /* send/recv buffer, reduce inout, copy dst */
  uint64_t *addr2;       /* reduce in, copy src; NULL until the first reduce or copy */
  uint64_t *bytes;       /* bytes moved or reduced; calc: cost */
  uint64_t *cw_len, *cr_len; /* computations: bytes written at addr, read at addr2 (0: none;
                            cr_len IR_READS_ALL: all); NULL until the first computation */
  int32_t *acc;          /* accumulates: cdag_type << 8 | cdag_reduce_op; NULL until the first */
  int32_t *oscomm;       /* fences and one-sided accesses: their communicator (0: every rank);
                            NULL until one names another */
  ir_stride *stride;     /* per copy: its blocks and strides ({0}: one contiguous block);
                            NULL until the first strided copy */
  uint64_t *blkoff;      /* listed sides of copies (ir_stride): each the farthest offset, then
                            the offsets of its blocks */
  int64_t nblkoff, blkoffcap;
  uint64_t *unhashed;    /* distributed graph: (addr, len) pairs, sorted and disjoint, whose exact
                            bits two schedules may leave different (floating-point sums and
                            products they reassociate): a computation without a function (its
                            output a hash of what it reads: `cdag replay`) does not read them;
                            NULL: none (ir_set_unhashed) */
  int64_t nunhashed;
  uint32_t *scope;       /* per op: its conflict scope, a promise of the builder (lowering): ops of one
                            rank in different scopes are already ordered, in scope order, by
                            explicit dependencies, so ir_finalize looks for memory conflicts
                            only within a scope; NULL until set (one scope) */
  uint8_t *cut;          /* per op: where a stage starts (IR_CUT_*, set by the analysis, not
                            a file's); NULL until the first */
  uint32_t *line;        /* file line per op; NULL until a line is set */
  int32_t *part_of;      /* per op of a distributed graph: the op a typed message's call returned,
                            for the other ops it added (packing copies, its message), else -1;
                            NULL until a typed message adds any: errors name the op the
                            program holds */
  uint32_t *label;       /* 1 + offset of the op's label in labels; 0 none; NULL until set */
  int32_t *cpu, *nic;    /* GOAL `cpu N` / `nic N`, -1 absent; NULL until set */
  char *labels;          /* label strings, NUL-terminated, back to back */
  int64_t labels_len, labels_cap;

  /* explicit dependencies, as added: dep[2i] before dep[2i+1] */
  int64_t ndeps, depcap;
  int32_t *dep;
  /* start dependencies (GOAL's irequires), as added: sdep[2i+1] starts once sdep[2i] has
     started. They order no memory effect, so only the LogGP model reads them (lower.h). */
  int64_t nsdeps, sdepcap;
  int32_t *sdep;

  /* one-sided segments, as registered: the k-th of a rank is its segment k */
  int64_t nseg, segcap;
  int32_t *seg_rank;
  uint64_t *seg_base, *seg_len;
  /* set by one-sided expansion (NULL / 0 before, and in graphs without one-sided ops) */
  uint8_t *os;           /* IR_OS_* per op */
  int64_t *os_key;       /* program-order key per op: the targets' sides sit at epoch edges */
  int64_t nwritten;      /* ops before expansion (the added ones follow) */
  uint8_t race_pairs;    /* tests: ir_onesided_races checks every pair of an epoch by the
                            rules, O(n^2), the oracle of its sweep */
  int64_t dep_lookups;   /* tests: ranges the last dependency walk (finalize.c) looked up */

  /* completions and native collectives (collective.c) */
  uint8_t *join;         /* per op: IR_JOIN_* (later ops of the rank depend on it); NULL until set */
  int32_t *call;         /* per op: the native call it belongs to (its messages, its join), -1;
                            NULL until the first call */
  int64_t ncalls, callcap;
  ir_call *calls;        /* native collective calls, as added */
  uint64_t *cvec;        /* the lists of vector calls (counts, displacements), back to back */
  int64_t ncvec, cveccap;
  int64_t ncomms, commcap;
  int32_t *comm_id, *comm_n;   /* communicators as declared: id, members */
  int64_t *comm_first;         /* into members / member_key */
  int64_t nmembers, membercap;
  int32_t *members;            /* ranks in communicator-rank order */
  uint64_t *member_key;        /* per communicator, sorted rank << 32 | index (rank lookup) */
  void *comm_map;              /* JudyL: communicator id -> its index (ir_comms_free frees it) */
  void **coll_mem;             /* distributed graphs: the calls' scratch memory */
  int64_t ncoll_mem, coll_memcap;

  /* A lower bound on the bytes any process must receive, stated by the generator that wrote
     the graph (`bound` in files; 0: none); reports put it beside the measured volume. */
  uint64_t bound;

  /* scratch regions, as added */
  int64_t nscratch, scratchcap;
  int32_t *scr_rank;
  uint64_t *scr_addr, *scr_len;

  /* ---- derived by ir_finalize() ---- */
  int32_t *rank_start;   /* nprocs+1 offsets into rank_ops */
  int32_t *rank_ops;     /* ops of each rank in program order */
  int32_t *pos;          /* op -> index within its rank's program order */
  int32_t *pred_start;   /* nops+1 offsets into pred */
  int32_t *pred;         /* ops each op depends on */
  int32_t *succ_start;   /* nops+1 offsets into succ */
  int32_t *succ;         /* ops that depend on each op */
  int64_t nedges;        /* entries of pred (and of succ) */
  int32_t *scr_start;    /* nprocs+1 offsets into scr_lo/scr_hi (merged, sorted) */
  uint64_t *scr_lo, *scr_hi;
  int64_t nscr_merged;
};

/* Creation and destruction. myrank = -1 for a global graph. */
int ir_graph_new(int nprocs, int myrank, cdag_graph **g);
void ir_graph_free(cdag_graph *g);

/* Adding ops: validate, append, return the new id in *id (id may be NULL). */
/* The public calls that add a program's own message (cdag_send, cdag_recv, their _type forms,
   cdag_rank_send / _recv) check its tag first: CDAG_REDISTRIBUTE_TAG is reserved for
   cdag_redistribute's messages (cdag.h), so CDAG_ERR_ARG naming the call, rank and peer.
   Loaded files and recordings keep their tags (ir_add_send / _recv do not check). */
int ir_user_tag(const char *fn, int rank, int peer, int tag);
int ir_add_send(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes, int dest, int tag, int32_t *id);
int ir_add_recv(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes, int source, int tag, int32_t *id);
int ir_add_reduce(cdag_graph *g, int rank, uint64_t in, uint64_t inout, uint64_t count, int type,
                  int rop, int32_t *id);
int ir_add_copy(cdag_graph *g, int rank, uint64_t src, uint64_t dst, uint64_t bytes, int32_t *id);
/* A copy of n blocks of len bytes, block i from src + i * from_stride to dst + i * to_stride
   (strides >= len; the op's bytes are n * len). One block, or strides equal to len on both
   sides, is an ordinary copy. Source and destination blocks must not overlap (checked
   exactly, O(n) when the hulls meet). */
int ir_add_copy_strided(cdag_graph *g, int rank, uint64_t src, uint64_t dst, uint64_t n, uint64_t len,
                        uint64_t from_stride, uint64_t to_stride, int32_t *id);
int ir_add_calc(cdag_graph *g, int rank, uint64_t cost, int32_t *id);
/* A computation of `cost` ns that reads rlen bytes at raddr (IR_READS_ALL: every byte the
   rank's earlier ops wrote) and writes wlen bytes at waddr, computed from what it read. Its
   place in the rank's order is kept by every plan (docs/semantics.md). */
int ir_add_compute(cdag_graph *g, int rank, uint64_t cost, uint64_t raddr, uint64_t rlen, uint64_t waddr,
                   uint64_t wlen, int32_t *id);
/* Computation op (just added, its wlen = n * len) writes n blocks of len bytes instead: block
   i at waddr + off[i] (off NULL: i * stride, at least len). The blocks must be disjoint
   (checked, O(n log n)). Read them through ir_write_blocks (their `to` side). */
int ir_set_write_blocks(cdag_graph *g, int32_t op, uint64_t n, uint64_t stride, const uint64_t *off);
/* Are n blocks of len bytes at base + off[i] (off NULL: i * stride) disjoint, none wrapping?
   CDAG_OK, CDAG_ERR_ARG (no; no message set), or CDAG_ERR_NOMEM. */
int ir_check_blocks(uint64_t base, const uint64_t *off, uint64_t stride, uint64_t n, uint64_t len);
/* The blocks of a copy as every stage reads them: n blocks of len bytes, block i read at
   addr2 + ir_block_from(&b, i) and written at addr + ir_block_to(&b, i): i * from and i * to,
   or the i-th listed offset of a side with from_at (to_at). from_last, to_last: the farthest
   block's offset on each side (the hull is it plus len). An ordinary copy (and any other op)
   is one block of its bytes, strides equal to its length. */
typedef struct {
  uint64_t n, len, from, to;
  const uint64_t *from_at, *to_at;   /* NULL: at the stride */
  uint64_t from_last, to_last;
} ir_blocks;
static inline ir_blocks ir_one_block(uint64_t len) { return (ir_blocks){1, len, len, len, NULL, NULL, 0, 0}; }
static inline uint64_t ir_stride_n(const ir_stride *s) { return s->n & ~IR_LISTED; }
/* A pattern of a copy or a computation; a one-sided access's (ir_access_blocks) is read apart. */
static inline int ir_is_strided(const cdag_graph *g, int64_t op) {
  return g->stride && ir_stride_n(&g->stride[op]) > 1 && (g->kind[op] == IR_COPY || g->kind[op] == IR_CALC);
}
static inline int ir_is_listed(const cdag_graph *g, int64_t op) { return ir_is_strided(g, op) && (g->stride[op].n & IR_LISTED); }
/* The blocks of a copy of `bytes` with pattern s (n >= 2), its listed offsets in pool; a listed
   side's stride reads as the block length. */
static inline ir_blocks ir_stride_blocks(const ir_stride *s, const uint64_t *pool, uint64_t bytes) {
  uint64_t n = ir_stride_n(s), len = bytes / n;
  ir_blocks b = {n, len, s->from, s->to, NULL, NULL, (n - 1) * s->from, (n - 1) * s->to};
  if (s->n & IR_LISTED_FROM) b.from = len, b.from_last = pool[s->from], b.from_at = pool + s->from + 1;
  if (s->n & IR_LISTED_TO) b.to = len, b.to_last = pool[s->to], b.to_at = pool + s->to + 1;
  return b;
}
static inline ir_blocks ir_copy_blocks(const cdag_graph *g, int64_t op) {
  if (!ir_is_strided(g, op)) return ir_one_block(g->bytes[op]);
  return ir_stride_blocks(&g->stride[op], g->blkoff, g->bytes[op]);
}
/* The blocks a computation writes (ir_set_write_blocks): the `to` side; one block of cw_len
   bytes unless set. */
static inline ir_blocks ir_write_blocks(const cdag_graph *g, int64_t op) {
  if (!ir_is_strided(g, op)) return ir_one_block(g->cw_len[op]);
  return ir_stride_blocks(&g->stride[op], g->blkoff, g->cw_len[op]);
}
static inline uint64_t ir_block_from(const ir_blocks *b, uint64_t i) { return b->from_at ? b->from_at[i] : i * b->from; }
static inline uint64_t ir_block_to(const ir_blocks *b, uint64_t i) { return b->to_at ? b->to_at[i] : i * b->to; }
/* Gives op (an ordinary copy just appended by ir_append, whose bytes are b.n * b.len) the
   pattern b, which its adder validated (stage graphs, decoders); listed offsets are copied
   (from any graph, this one's included), the farthest blocks found. */
int ir_set_blocks(cdag_graph *g, int32_t op, ir_blocks b);
/* A copy of n blocks of len bytes, block i from src + from_off[i] to dst + to_off[i] (a side's
   offsets NULL: i * its stride, at least len): an indexed datatype's blocks as one op. Each
   side's blocks must be disjoint and no source block may meet a destination block (checked,
   O(n log n)). */
int ir_add_copy_listed(cdag_graph *g, int rank, uint64_t src, uint64_t dst, uint64_t n, uint64_t len,
                       const uint64_t *from_off, uint64_t from_stride, const uint64_t *to_off, uint64_t to_stride,
                       int32_t *id);
/* Is op a computation (a calc that reads or writes memory)? */
static inline int ir_is_compute(const cdag_graph *g, int64_t op) {
  return g->cw_len && g->kind[op] == IR_CALC && (g->cw_len[op] || g->cr_len[op]);
}
/* Does op read every byte its rank's earlier ops wrote? */
static inline int ir_reads_all(const cdag_graph *g, int64_t op) {
  return ir_is_compute(g, op) && g->cr_len[op] == IR_READS_ALL;
}
/* The blocks op moves (a copy) or writes (a computation); one block of its bytes otherwise. */
static inline ir_blocks ir_op_blocks(const cdag_graph *g, int64_t op) {
  if (g->kind[op] == IR_COPY) return ir_copy_blocks(g, op);
  return ir_is_compute(g, op) ? ir_write_blocks(g, op) : ir_one_block(g->bytes[op]);
}
/* Is op a join that is a calc (a wait, a blocking native call's end)? A computation reading
   all reads a receive that such a join depends on from that join on (finalize.c, src/stage).
   A nonblocking call's end is none: what the call wrote is read from the wait naming it on. */
static inline int ir_is_calc_join(const cdag_graph *g, int64_t op) {
  return g->join && g->join[op] && g->join[op] != IR_JOIN_CALL && g->kind[op] == IR_CALC;
}
/* Is op the end of a nonblocking native call (its own op, a JOIN_CALL that is no part)? */
static inline int ir_is_nb_call(const cdag_graph *g, int64_t op) {
  return g->join && g->join[op] == IR_JOIN_CALL && g->os && g->os[op] == IR_OS_COLL;
}
/* Where a stage starts (g->cut): IR_CUT_MIXED, at a local reduce the analysis found to
   combine values of different reductions, which the SST of one stage cannot hold (a stage
   after every predecessor); IR_CUT_DELIVERED, at a local reduce or copy reading bytes a message
   delivered, which then reads them where they landed instead of receiving them again (a stage
   after every predecessor but local reduces and copies: src/stage/delivered.c). */
enum { IR_CUT_NONE = 0, IR_CUT_MIXED = 1, IR_CUT_DELIVERED = 2 };
static inline int ir_cuts(const cdag_graph *g, int64_t op) { return g->cut ? g->cut[op] : IR_CUT_NONE; }
int ir_add_scratch(cdag_graph *g, int rank, uint64_t addr, uint64_t bytes);
/* One-sided: seg >= 0 names segment seg of target and taddr is an offset in it; seg -1:
   taddr is an address of target. *seg of ir_add_segment: the rank's count before. */
int ir_add_get(cdag_graph *g, int rank, uint64_t dst, uint64_t bytes, int target, int seg, uint64_t taddr,
               int32_t *id);
int ir_add_put(cdag_graph *g, int rank, uint64_t src, uint64_t bytes, int target, int seg, uint64_t taddr,
               int32_t *id);
int ir_add_fence(cdag_graph *g, int rank, int32_t *id);
/* One-sided access op (a get, put or accumulate just added, of n * len bytes) reaches n blocks
   of len bytes at the target instead: block i at its target address + i * stride (stride at
   least len); its local side stays contiguous (an MPI target datatype's strided run). Read
   them through ir_access_blocks (their `to` side); expansion moves them through a scratch
   area of the target with one strided copy. */
int ir_set_access_blocks(cdag_graph *g, int32_t op, uint64_t n, uint64_t stride);
/* Is op a one-sided access, as added (get, put, accumulate) or expanded (its origin's side)? */
static inline int ir_is_access(const cdag_graph *g, int64_t op) {
  int k = g->kind[op];
  if (k == IR_GET || k == IR_PUT || k == IR_ACC) return 1;
  return g->os && (g->os[op] == IR_OS_GET || g->os[op] == IR_OS_PUT || g->os[op] == IR_OS_ACC);
}
/* The target blocks of one-sided access op: one block of its bytes unless set. */
static inline ir_blocks ir_access_blocks(const cdag_graph *g, int64_t op) {
  if (!g->stride || ir_stride_n(&g->stride[op]) < 2 || !ir_is_access(g, op)) return ir_one_block(g->bytes[op]);
  return ir_stride_blocks(&g->stride[op], g->blkoff, g->bytes[op]);
}
/* An accumulate: count elements of type at src combined with op into the target's bytes
   (as ir_add_put names them) at the end of the epoch, as MPI_Accumulate does. */
int ir_add_accumulate(cdag_graph *g, int rank, uint64_t src, uint64_t count, int type, int rop, int target, int seg,
                      uint64_t taddr, int32_t *id);
int ir_add_segment(cdag_graph *g, int rank, uint64_t base, uint64_t bytes, int *seg);
/* A fence or one-sided access of communicator comm (1..IR_MAX_COMM, declared by ir_add_comm
   before ir_finalize): the fences of comm cut only its members' ops into its epochs, and an
   access of comm belongs to them (docs/semantics.md). */
int ir_set_onesided_comm(cdag_graph *g, int32_t op, int comm);
/* Member index of rank in communicator comm (0: the rank itself), -1 if not a member or
   comm is undeclared. */
int32_t ir_comm_member(const cdag_graph *g, int comm, int rank);
/* Appends an op whose fields the caller has validated (passes that build ops). */
int ir_append(cdag_graph *g, int kind, int rank, int peer, int tag, uint64_t addr, uint64_t addr2, uint64_t bytes,
              int32_t *id);

/* One-sided expansion (onesided.c), run by ir_finalize before program order: epochs from the
   fences (every rank must fence equally often), segment offsets resolved and bounds checked
   (CDAG_ERR_ARG naming origin, target, segment and offset), then each get becomes a receive at
   the origin and a send from the target at the start of the get's epoch there, each put a
   send at the origin and a receive at the target at the end of its epoch, fences calcs of 0.
   The added ops sit in their ranks' program order by os_key. Adding ops afterwards is
   CDAG_ERR_STATE. O(n log n). */
int ir_onesided_expand(cdag_graph *g);
/* Races of an expanded graph (after its dependency lists): in one epoch, a put overlapping
   another put or a get of the same target bytes (unless both come from one origin with a
   dependency path between them), or an op of the target writing bytes a get reads or
   touching bytes a put writes: CDAG_ERR_RACE naming both ops. O(n log n) for graphs
   without races, plus the path searches between one origin's overlapping accesses that
   neither its waits nor its chains of latest predecessors order (one per neighbours of a kind
   in program order, and a few for each access of another kind or run: onesided.c's
   entry_races). */
int ir_onesided_races(const cdag_graph *g);
/* Completions (the `wait` field and statement): a join op orders every later op of its rank
   after it (ir_finalize adds one edge per op, to the latest join before it). ir_add_wait
   appends a zero-cost join (a calc of 0, os IR_OS_WAIT) that requires ops[0..n), all of
   `rank`. */
int ir_set_join(cdag_graph *g, int32_t op, int join);
int ir_add_wait(cdag_graph *g, int rank, const int32_t *ops, int n, int32_t *id);

/* Native collectives (collective.c), as a recording writes them. Communicator `comm` >= 1
   lists its members in communicator-rank order (ranks of the graph, distinct); 0 is every
   rank. ir_add_coll appends rank's part of one call: kind IR_COLL_*, root a rank of the graph
   (-1 for unrooted kinds), in/out addresses (in == out: in place; bcast's buffer is out),
   count bytes per block
   (block kinds) or elements (reductions, of cdag_type type and cdag_reduce_op rop). The k-th
   call on a communicator of every member is one collective. ir_finalize checks the members
   agree (kind, root, count, type, op; CDAG_ERR_FORMAT naming both ops otherwise) and writes
   each call out, as it is added, as the messages of a flat algorithm (os IR_OS_COLL_PART,
   g->call), then the call's own op (os IR_OS_COLL), a join of kind IR_JOIN_ALL. Reductions
   use scratch: at IR_COLL_SCRATCH in a global graph, memory the graph owns in a distributed
   one. The kinds and their names are coll_kinds.h's; only those it marks native are calls.
   ir_add_coll_call adds the call c describes (c->op ignored); with c->nonblocking (MPI's
   I-collectives) the call's own op is a JOIN_CALL, not a join: the messages are issued where
   the call is (its inputs are read from there on), later ops of the rank are not ordered
   after them, and a wait naming the call's op (ir_add_wait) completes it: ops after that
   wait are ordered after the whole call, and what the call wrote is read from there on.
   The members' k-th calls on a communicator must agree on nonblocking too (MPI never
   matches a blocking collective with a nonblocking one). */
int ir_add_comm(cdag_graph *g, int comm, const int32_t *ranks, int n);
void ir_comms_free(cdag_graph *g);   /* the communicators' index (ir_graph_free calls it) */
int ir_add_coll(cdag_graph *g, int rank, int kind, int comm, int root, uint64_t in, uint64_t out,
                uint64_t count, int type, int rop, int32_t *id);
/* The vector kinds (coll_kinds.h's `vector` column) take per-member lists: `lists` values
   per member of comm (n), ir_coll_lists(kind, rank is root) lists of n back to back, in this
   order: counts (bytes per member; reduce_scatter: elements), displs (byte offsets of the
   blocks from out; scatterv: from in), and for alltoallv and the neighbourhood kinds
   recvcounts, recvdispls (counts and displs are then the send side, from in). `count` is
   the member's own block (bytes; reduce_scatter: elements; alltoallv and the neighbourhood
   kinds: the bytes it sends in all). gatherv and scatterv
   members other than the root have no lists (lists may be NULL). ir_finalize checks the
   members agree (the root's counts[i] is member i's count; alltoallv: member i's counts[j]
   is member j's recvcounts[i], as for the neighbourhood kinds, which are expanded as alltoallv;
   reduce_scatter: equal counts). Zero-byte blocks move no
   message. */
int ir_coll_lists(int kind, int is_root);
int ir_add_collv(cdag_graph *g, int rank, int kind, int comm, int root, uint64_t in, uint64_t out, uint64_t count,
                 int type, int rop, const uint64_t *lists, int32_t *id);
/* The same from a call as ir_call holds it (its `nonblocking` too; op and vec are ignored). */
int ir_add_coll_call(cdag_graph *g, int rank, const ir_call *c, const uint64_t *lists, int32_t *id);
/* The lists of call c (NULL when it has none), and how many values they hold. */
const uint64_t *ir_call_lists(const cdag_graph *g, const ir_call *c);
int64_t ir_call_nvalues(const cdag_graph *g, const ir_call *c);
/* The bytes call c reads at in and writes at out on its rank, as collective.c expands it. */
void ir_call_extent(const cdag_graph *g, const ir_call *c, uint64_t *in_len, uint64_t *out_len);
/* For decoders (wire.c) that rebuild an expanded call: the call as recorded (its lists, when
   it has some, are the nvalues of `lists`), and op's mark (IR_OS_COLL or IR_OS_COLL_PART)
   and call index. */
int ir_append_call(cdag_graph *g, const ir_call *c, const uint64_t *lists, int64_t nvalues);
int ir_mark_call(cdag_graph *g, int32_t op, int64_t call, int os);
/* The checks across members (global graphs; run by ir_finalize). O(c log c) for c calls. */
int ir_coll_check(const cdag_graph *g);
/* Members of communicator comm (0: NULL and nprocs); -1 if undeclared. */
int ir_comm_members(const cdag_graph *g, int comm, const int32_t **ranks);
/* An explicit dependency; both ops of one rank. ordered=1 also requires before to precede
   after in program order (the API's rule); files pass 0. */
int ir_add_dep(cdag_graph *g, int64_t before, int64_t after, int ordered);
/* after starts once before has started (one rank; CDAG_ERR_ARG otherwise). */
int ir_add_start_dep(cdag_graph *g, int64_t before, int64_t after);
/* Allocates an optional per-op array (line, label, join, ...) on first use, filled with
   zeros or (fill_minus_one) with -1 bytes; resize_ops keeps its length equal to cap. */
int ir_ensure_opt(cdag_graph *g, void **arr, size_t elem, int fill_minus_one);
/* Optional per-op facts from files. */
int ir_set_line(cdag_graph *g, int32_t op, uint32_t line);
/* Ops first .. last of g, but owner, belong to the call that returned owner (a typed message). */
int ir_set_part_of(cdag_graph *g, int32_t first, int32_t last, int32_t owner);
int ir_set_label(cdag_graph *g, int32_t op, const char *label, int64_t len);
int ir_set_goal(cdag_graph *g, int32_t op, int32_t cpu, int32_t nic);
/* g->unhashed: the n (addr, len) pairs at pairs, sorted and merged (replacing any before). */
int ir_set_unhashed(cdag_graph *g, const uint64_t *pairs, int64_t n);
/* Reserve room for n more ops (optional; avoids regrowth when the count is known). A graph
   that has room already grows by half at least, so reserving as it goes stays linear. */
int ir_reserve(cdag_graph *g, int64_t n);

/* Derive program order, dependencies and scratch intervals (see the header comment).
   Errors: CDAG_ERR_CYCLE if explicit dependencies within a rank form a cycle. */
int ir_finalize(cdag_graph *g);
/* Frees the derived view (state back to IR_BUILDING). */
void ir_drop_derived(cdag_graph *g);
/* Frees only the dependency lists (pred/succ), the largest part of the view, once the
   pipeline has read them (they cost more memory than the analysis that follows); program
   order stays. ir_need_deps() rebuilds them in place when missing; a reader that holds a
   const graph opens an ir_deps_view instead, which never writes the graph. */
void ir_drop_deps(cdag_graph *g);
int ir_need_deps(cdag_graph *g);
/* The graph to read dependency lists from: g itself when it has them, else a shallow copy
   of g with lists of its own (released by ir_deps_view_close). g is never written, so
   threads may read one const graph at once. */
typedef struct {
  cdag_graph copy;        /* g's fields, with dependency lists of the view's own */
  const cdag_graph *g;    /* what to read: the caller's graph or &copy */
} ir_deps_view;
int ir_deps_view_open(const cdag_graph *g, ir_deps_view *v);
void ir_deps_view_close(ir_deps_view *v);
/* Returns the free pages of the C heap to the system (glibc's malloc_trim; nothing
   elsewhere). Stages call it after freeing large temporaries: glibc keeps up to 64 MB of
   freed memory resident at the top of its heap, which would count in the peak of the next.
   g is the graph the stage ran on: below IR_TRIM_MIN_OPS ops its temporaries are small, and
   a trim (a walk of the heap and madvise calls) would cost more than it frees: a graph in
   thousands of small stages spent most of its analysis there. */
#define IR_TRIM_MIN_OPS 65536
void ir_trim_heap(const cdag_graph *g);
/* For a one-shot command that runs stage after stage in one process (cdag model): large
   blocks come from the C heap instead of fresh mappings, and freed memory stays there, so
   that each stage reuses what the last one freed instead of having the kernel clear new
   pages (half a second of sys time in cdag model of a 2-million-op graph); ir_trim_heap
   does nothing from then on. The peak grows a little, as freed blocks are reused only
   where they fit (that model: 501 -> 565 MB). glibc only; elsewhere nothing. */
void ir_keep_heap(void);

/* The op's label, or NULL. */
const char *ir_label(const cdag_graph *g, int32_t op);
/* "rank R op K (line L, label X)" for messages; K is the program index (after finalize) or
   the id. Returns buf. */
const char *ir_describe(const cdag_graph *g, int32_t op, char *buf, int size);
/* Is [addr, addr+len) entirely inside scratch of rank? (after finalize) */
int ir_is_scratch(const cdag_graph *g, int rank, uint64_t addr, uint64_t len);
/* The parts of [lo, hi) of rank outside its scratch, in order: fn(ctx, part lo, part hi) for
   each, until one returns non-zero (returned). O(log n + parts). (after finalize) */
int ir_each_outside_scratch(const cdag_graph *g, int rank, uint64_t lo, uint64_t hi,
                            int (*fn)(void *ctx, uint64_t lo, uint64_t hi), void *ctx);

/* Passes that walk ops in one order but touch, per op, a slot far away in another (a
   message's other end, a rank's map, a rank's next program slot) ask for that slot IR_AHEAD
   ops early, so its cache miss overlaps the work between: once the arrays outgrow the
   last-level cache (p around 2^18), these misses, not the work, set the pass's speed.
   A pass doing only a few instructions per op looks further ahead. */
#define IR_AHEAD 16
#define IR_PREFETCH(addr) __builtin_prefetch((addr), 0)
#define IR_PREFETCH_W(addr) __builtin_prefetch((addr), 1)

/* Element types and reduction ops. Besides cdag_type and cdag_reduce_op, reductions with a
   user-defined op of MPI (distributed graphs only; never in files) are encoded as type IR_TYPE_USER +
   element size and op IR_ROP_USER + slot, the slot naming the op in its process's table
   (exec/mpi), which computes them: ir_reduce_apply does not. Slots are local to a process, so
   such graphs run as written (exec/mpi/compile.c). The dataflow packs type << 8 | op into
   an int32 and ops into a byte (dataflow.h): user types stay below 2^17, ops below 256. */
#define IR_TYPE_USER 0x100
#define IR_USER_MAX_SIZE 0xffff
#define IR_ROP_USER 0x40
#define IR_USER_MAX_OPS 64
int ir_rop_is_user(int rop);
int ir_type_is_float(int type);               /* float, double and the complex types */
int ir_type_size(int type);                  /* bytes, 0 if unknown */
int ir_type_value_bytes(int type);           /* of them, those a reduction writes (x87's long double: 10 of 16) */
const char *ir_type_name(int type);          /* "int32", ..., NULL if unknown */
const char *ir_rop_name(int rop);            /* "sum", ..., NULL if unknown */
int ir_type_parse(const char *s, int64_t len);  /* -1 if unknown */
int ir_rop_parse(const char *s, int64_t len);   /* -1 if unknown */
int ir_rop_valid_for(int rop, int type);     /* as MPI allows (bitwise on integers, ...) */
int ir_rop_idempotent(int rop);              /* min, max, band, bor, land, lor, maxloc, minloc */
/* inout[i] = inout[i] op in[i] for count elements (unaligned buffers are fine). */
void ir_reduce_apply(int type, int rop, const void *in, void *inout, uint64_t count);  /* not user ops */
const char *ir_kind_name(int kind);          /* "send", "recv", "reduce", "copy", "calc" */

#endif

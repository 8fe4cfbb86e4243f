/* cdag — src/dataflow: Static Single Transfer form and wait sets (stage contract).
 *
 * Input: a finalized global graph and its match_result. dataflow_run walks ops in
 * match order with, per rank, an address-interval map from ranges to provenance: either an
 * origin (rank, addr: the value that address held before the phase) or a reduction (type,
 * op, interned source set). A send reads the pieces of its range (the split of Algorithm 4),
 * the matched receive writes them; copies move pieces; local reduces combine them
 * element-wise (pieces must align to elements; mixed ops on one value are reported, not
 * guessed). Output, for every final byte (written by the graph, not in scratch):
 *  - transfers (src, src_addr, len, dst, dst_addr): maximal (adjacent bytes with adjacent
 *    origins merged), sorted by (dst, dst_addr). Self-copies (src == dst, data moved to
 *    another address of its origin rank) are transfers too; a byte whose final value is its
 *    own original value at the same address is not a transfer. A strided transfer (blocks
 *    >= 2) is a strided piece that reached the end of the phase whole (a column packed,
 *    sent and unpacked): block j, len bytes, comes from src_addr + j*src_stride and lands
 *    at dst_addr + j*dst_stride; its blocks meet no other transfer's bytes, none holds its
 *    own value at its own address, and none is joined with a neighbouring tuple (maximal
 *    apart from that: dataflow_block_xfers gives the one-block tuples). Sorted by its first
 *    block's dst_addr.
 *  - reductions (dst, dst_addr, count, type, op, set): element e of the tuple is op over the
 *    set's contributions (rank, addr + e*size). Sets are interned: equal multisets have one
 *    id. A set is a sorted list of runs: ranks lo..hi (inclusive) each contributing the
 *    element at the same addr, mult times (mult > 1 only where a contribution counts twice).
 *    Runs are maximal and sorted by (lo, hi, addr), so equal multisets have equal run lists,
 *    and a reader that combines the set in its order combines by rank, whatever the ranks'
 *    addresses. Sorted by (dst, dst_addr).
 *    Maximal too: a tuple whose next element's set is its set shifted by one element is
 *    extended, so a vector reduced in blocks (ring allreduce) gives the same tuples as one
 *    reduced at once (recursive doubling, linear, binomial).
 *  - wait sets: W_i = ranks whose ops are ancestors (through dependencies and matches) of
 *    some op of rank i, i included. Stored per rank as sorted disjoint, non-touching rank
 *    intervals. Computed in one pass over the match order with persistent interval lists
 *    that share tails: O(1) per op for trees, chains and rings. Worst case (sets of
 *    alternating ranks merged at every op) O(n p) time and O(p^2) output intervals; the
 *    patterns that occur give O(p log p) (binomial trees) or O(p) output.
 *  - statistics: number of splits (sends whose source range held several pieces).
 * Errors: CDAG_ERR_UNSUPPORTED for a local reduce over pieces that do not align with its
 * elements, or that combines values of different ops/types (message names rank and op;
 * with DF_COLLECT_MIXED such reduces are listed instead).
 * Cost: O(n log n) time for n ops, every op visited once. */
#ifndef CDAG_DATAFLOW_H
#define CDAG_DATAFLOW_H

#include "ir/ir.h"
#include "match/match.h"

typedef struct {
  int32_t src, dst;
  uint64_t src_addr, dst_addr, len;
  /* 0 or 1: len bytes in one block; n >= 2: n blocks of len bytes, block j at
     src_addr + j*src_stride and dst_addr + j*dst_stride (strides wrap: a negative one runs
     backwards) */
  uint64_t blocks, src_stride, dst_stride;
} df_xfer;

static inline uint64_t df_xfer_blocks(const df_xfer *x) { return x->blocks > 1 ? x->blocks : 1; }
static inline uint64_t df_xfer_bytes(const df_xfer *x) { return df_xfer_blocks(x) * x->len; }
/* From the first block's start to the last block's end on the side of `stride` (src_stride
   or dst_stride; strides of the SST's transfers are positive). */
static inline uint64_t df_xfer_span(const df_xfer *x, uint64_t stride) { return (df_xfer_blocks(x) - 1) * stride + x->len; }
/* Block j of x as a transfer of its own. */
static inline df_xfer df_xfer_block(const df_xfer *x, uint64_t j) {
  return (df_xfer){.src = x->src, .dst = x->dst, .src_addr = x->src_addr + j * x->src_stride,
                   .dst_addr = x->dst_addr + j * x->dst_stride, .len = x->len};
}

typedef struct {
  int32_t dst;
  int32_t set;          /* interned source set id */
  uint64_t dst_addr, count;
  uint32_t type;        /* cdag_type, or ir.h's user type (< 2^17: src packs type << 8 | op) */
  uint8_t op;           /* cdag_reduce_op, or ir.h's user op (< 256) */
} df_red;

typedef struct {
  int32_t lo, hi;       /* ranks lo..hi inclusive */
  uint32_t mult;        /* contributions per rank (1 unless repeated) */
  uint64_t addr;        /* same address on every rank of the run */
} df_run;

typedef struct {
  int64_t first;        /* runs[first .. first+nruns) */
  int32_t nruns;
  int64_t ncontrib;     /* total contributions: sum over runs of (hi-lo+1)*mult */
  uint64_t hash;
} df_set;

typedef struct {
  int32_t nprocs;
  int64_t nxfers;   df_xfer *xfers;
  int64_t nreds;    df_red *reds;
  int64_t nsets;    df_set *sets;
  int64_t nruns;    df_run *runs;
  int64_t splits;
  /* strided moves: copies and messages that moved a strided piece's blocks whole, and the
     blocks such pieces had to be followed by one by one after all (an access that met part
     of them, or the end of the phase outside scratch) */
  int64_t strided_whole, strided_expanded;
  /* wait sets: rank i's intervals are wait[wait_start[i] .. wait_start[i+1]), each [lo, hi] */
  int64_t *wait_start;   /* nprocs+1 */
  int32_t *wait_lo, *wait_hi;
  /* DF_COLLECT_MIXED: the local reduces that combine values of different reductions (a
     chain of ops: a computation, not a reduction tuple) and the ops that would leave part of
     a reduced element, in the order met; each one's result was taken as a new value, so the
     tuples are not the graph's meaning then */
  int64_t nmixed, mixedcap;
  int32_t *mixed;
  /* DF_COLLECT_REASSOC: every range written with floating-point sums or products (a
     reduction's result, or a message or copy moving one), at any time of the phase: what a
     schedule may leave with other last bits, as it reassociates, while the phase runs */
  int64_t nreassoc, reassoccap;
  struct df_written { int32_t rank; uint64_t addr, len; } *reassoc;
  /* DF_COLLECT_REASSOC with DF_COLLECT_MIXED: the sets of the results of reduces listed in
     `mixed` whose operands held floating-point reductions (a max over sums: co_sum then
     co_max of one variable), wherever those results went (in the order met; a set may
     repeat). Such a value inherits the last bits of the sums it was computed from, which a
     schedule may leave otherwise; n: the most values a floating-point operand combined. */
  int64_t nderived, derivedcap;
  struct df_derived { int32_t set; int64_t n; } *derived;
} df_sst;

int dataflow_run(const cdag_graph *g, const match_result *m, df_sst **out);
/* The same with flags:
   - DF_WAITSETS_IF_NEEDED computes the wait sets only when the graph has a zero-byte message
     between two ranks (the only traffic detection asks them about: rule 3), else
     wait_start/lo/hi stay NULL. They cost O(p log p) memory on trees.
   - DF_RELEASE_INPUTS frees m (match_free) and g's dependency lists (ir_drop_deps) as soon
     as they have been read, before the final tuples are collected: the pipeline's peak
     memory is lower by their size. A later reader of the lists rebuilds them.
   - DF_COLLECT_MIXED lists local reduces that mix ops or types, or whose operands hold pieces
     of other provenance inside an element, ops whose write would cover part of a reduced
     element, and the ops that read part of one to move it (a message's send, a copy: bytes
     moved off element boundaries, as MPI_DOUBLE_INT without its padding), in `mixed` instead
     of failing with CDAG_ERR_UNSUPPORTED (the pipeline starts a stage at each: src/stage).
     Scratch that covers part of a reduced element is delivered with the element. */
/* - DF_CAP_SETS keeps, of a reduction combining sets of more than DF_SET_CAP runs, only how
     many values it combines (ncontrib): one run of rank -1 whose mult is that count (later
     runs join it up to the cap again, so no set exceeds DF_SET_CAP runs). Its
     tuples are then not the graph's meaning: for readers of counts only (the replay's
     tolerance of floating-point sums), not detection. Bounds the sets of a long recording
     whose buffers accumulate reductions, which otherwise grow quadratically. */
/* - DF_COLLECT_REASSOC lists in `reassoc` every write of floating-point sums or products, and
     with DF_COLLECT_MIXED in `derived` the mixed reduces' results over floating-point
     reductions. */
enum { DF_WAITSETS_ALWAYS = 0, DF_WAITSETS_IF_NEEDED = 1, DF_RELEASE_INPUTS = 2, DF_COLLECT_MIXED = 4, DF_CAP_SETS = 8,
       DF_COLLECT_REASSOC = 16 };
enum { DF_SET_CAP = 64 };
int dataflow_run_opt(cdag_graph *g, match_result *m, int flags, df_sst **out);
void dataflow_free(df_sst *s);          /* NULL is fine */
/* s's transfers as one-block tuples, maximal and sorted by (dst, dst_addr), as they were
   before strided ones were kept whole (a strided transfer's blocks are not joined with the
   neighbours they may have): into *out (malloc'd, *n of them). O(blocks log blocks). For
   listings and tests; the pipeline reads strided transfers whole. */
int dataflow_block_xfers(const df_sst *s, df_xfer **out, int64_t *n);
/* Drops the wait sets once detection has used them. */
void dataflow_free_waitsets(df_sst *s);
/* Does rank i wait for rank j (j in W_i)? O(log) */
int dataflow_waits_for(const df_sst *s, int i, int j);

#endif

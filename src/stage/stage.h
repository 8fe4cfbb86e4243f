/* cdag — src/stage: graphs that compute, cut into stages of pure communication (contract).
 *
 * The SST describes a phase without computation: every origin exists when it starts and
 * only final memory counts. A computation (ir.h: a calc that reads and writes memory) breaks
 * that: what it reads must have arrived when it runs, and what it writes exists only after.
 * stage_split cuts a finalized graph with computations into stages that every rank runs in
 * the same order; each stage is a graph of pure communication that the usual pipeline
 * (dataflow, detect) analyses on its own, its origins being the memory at the stage's start.
 *
 * Levels (levels.c: the least levels that keep these rules, a longest path over the graph with
 * each native collective's parts as one node):
 *  - a communication op (send, receive, reduce, copy, plain calc) is in stage
 *    s = max(0, s of each preceding communication op, k + 1 of each preceding computation,
 *    and for a receive s of its send);
 *  - a computation runs after stage k = max(-1, s of each preceding communication op, k of
 *    each preceding computation): -1 is before the first stage, so a computation that reads
 *    nothing received delays nothing;
 *  - an op where a stage must start (ir_cuts: a local reduce that combines values of
 *    different reductions, found by the dataflow) comes a stage after all its predecessors,
 *    so that what it combines are origins of its stage; a local reduce or copy marked as
 *    reading delivered bytes (stage_mark_delivered) comes a stage after its predecessors but
 *    the local reduces and copies, so that it reads what messages delivered where they landed;
 *  - the parts of one native collective share the largest of their stages (collectives and
 *    computations that order each other in a cycle, a stage between them both ways, are
 *    CDAG_ERR_UNSUPPORTED);
 *  - a message whose receive must wait for a later stage than its send (its buffer is read
 *    by a computation in between) lands at the send's stage in a staging buffer of the
 *    receiving rank (addresses from STAGE_TEMP_BASE, listed in temps) and is copied to its
 *    buffer at the receive's stage.
 * So no transfer moves ahead of a computation it depends on, no computation ahead of a
 * transfer it reads, and no collective of one stage joins transfers of two. A byte a
 * computation may read is final in the stage before it, hence live. The program's scratch is
 * declared in a stage where it is dead after it: no later op reads it before writing it.
 * Cost: O(n log n + m) for n ops and m dependencies; O(K * P) for K stages of P ranks (each
 * stage graph has per-rank arrays). */
#ifndef CDAG_STAGE_H
#define CDAG_STAGE_H

#include "match/match.h"

#define STAGE_TEMP_BASE 0x7ffb000000000000ull

typedef struct {
  int32_t rank;
  uint64_t addr, len;
} stage_range;

/* One computation of the graph, as plans and the simulator run it. */
typedef struct {
  int32_t op, rank;      /* the graph's op */
  int32_t after;         /* runs after stage `after`'s communication (-1: before the first) */
  int32_t pos;           /* its position in the rank's program order */
  uint64_t cost;         /* ns */
  uint64_t raddr, rlen;  /* what it reads (rlen IR_READS_ALL: all the rank wrote before it) */
  uint64_t waddr, wlen;  /* what it writes: wlen bytes, in wn blocks (stage_block) */
  uint64_t wn, wstride;  /* wn 1: one range; else blocks of wlen / wn bytes, block j at waddr +
                            j * wstride, or at the j-th offset from woff[wat] on (wat >= 0) */
  int64_t wat;
  int64_t since_first, nsince; /* reading all: since[since_first .. +nsince), the ranges the
                                  rank's ops wrote (in program order) since its previous
                                  computation that read all, less the bytes pending
                                  receives and nonblocking calls write at its place */
} stage_compute;

typedef struct stage_steps {
  int32_t nstages;
  int64_t cut_mixed, cut_delivered;   /* stage starts besides computations (IR_CUT_*): local
                                         reduces combining different reductions, local reduces
                                         or copies reading bytes a message delivered */
  int64_t ncomputes;
  stage_compute *computes;   /* sorted by (after, rank, program position) */
  int64_t nsince;
  stage_range *since;
  int64_t ntemps;
  stage_range *temps;        /* staging buffers of messages that land a stage after they leave */
  uint64_t *woff;            /* the offsets of computations' listed blocks */
  int64_t nwoff, woffcap;
} stage_steps;

/* Where block j of computation c's output starts. */
static inline uint64_t stage_block(const stage_steps *st, const stage_compute *c, uint64_t j) {
  return c->waddr + (c->wat >= 0 ? st->woff[c->wat + (int64_t)j] : j * c->wstride);
}

typedef struct {
  int32_t nstages;
  cdag_graph **graph;        /* per stage: a global graph of its communication (not finalized) */
  int32_t **orig;            /* per stage: its op -> the graph's op it stands for (a native call's
                                ops: the call's own op; a late message's: its receive) */
  stage_steps steps;
} stage_split;

/* Does g (finalized or not) hold a computation? O(n). */
int stage_has_computes(const cdag_graph *g);
/* Cuts finalized g with match m into stages (see above). out->graph[s] and out->steps are
   the caller's (stage_split_free; move steps out first to keep them). */
int stage_cut(cdag_graph *g, const match_result *m, stage_split *out);
void stage_split_free(stage_split *s);
/* Every computation of finalized g, `after` -1, with what each that reads all reads: the
   simulator's list when it runs the graph as written. */
int stage_list_computes(const cdag_graph *g, stage_steps *st);
void stage_steps_free(stage_steps *st);

/* Marks IR_CUT_DELIVERED (ir.h) every local reduce and copy of finalized g (not part of a
   native call, not cut yet) that reads bytes an earlier receive from another rank wrote, outside
   scratch: bytes the plan delivers as results anyway, which the SST would otherwise trace to
   their origin and send a second time as the op's input (delivered.c). *n: how many were
   marked (the caller saves g->cut to take them back). O(n log n). */
int stage_mark_delivered(cdag_graph *g, int64_t *n);

/* Declares in each of out's stage graphs the scratch (below IR_COLL_SCRATCH) that its stage
   writes and no later op reads before writing it again (scratch.c). m: g's match,
   lvl: levels. O(n log n). */
int stage_place_scratch(const cdag_graph *g, const match_result *m, const int32_t *lvl, stage_split *out);

/* The level of every op of finalized g (levels.c; the rules above): lvl[op] is the stage of a
   communication op, the stage a computation runs after (-1: before the first). */
int stage_levels(const cdag_graph *g, const match_result *m, int32_t *lvl);

#endif

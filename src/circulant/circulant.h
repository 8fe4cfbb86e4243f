/* cdag — src/circulant/circulant.h: round-optimal n-block schedules on a circulant graph.
 *
 * Träff's broadcast schedules (CLUSTER 2022, arXiv 2407.18004), computed per rank without
 * communication, plus pure simulations of the collectives built on them. Pure C, no MPI.
 *
 * Graph: p ranks, q = ceil(log2 p) rounds per phase. In round k (0 <= k < q) rank r sends to
 * (r + skip[k]) mod p and receives from (r - skip[k]) mod p; ranks are relative to the root 0.
 * Schedules: R[k] / S[k] name the block rank r receives / sends in round k of a phase. A
 * negative block -j is block q-j of the previous phase (virtual in the first phase); a
 * non-negative one is the rank's baseblock of the current phase.
 * Cost per rank, no allocation: circ_baseblock O(log p). circ_recvsched: a walk of the skip
 * tree (equal to Träff's greedy construction), O(log p) as measured, not proven: at most
 * 3q walk steps, e.g. 29 for p <= 4096 and 82 for sampled ranks of p ~ 2^29. circ_sendsched:
 * O(log^2 p), q rounds of O(q) closed forms, a quarter of them falling back to a partial
 * walk of the to-rank (at most 1.5 q^2 walk steps measured). Tested: every rank of every
 * p <= 4096 against the oracle of 1.7 (and the broadcast simulation); sampled ranks of
 * p up to CIRC_MAXP against the greedy of 1.4. circ_bcast_rounds / circ_reduce_rounds
 * allocate a p x q table of receive schedules (4 p q bytes: meant for moderate p) and take
 * O(p log p) plus O(p) per round; circ_allgather_rounds allocates nothing, O(p q). */
#ifndef CDAG_CIRCULANT_CIRCULANT_H
#define CDAG_CIRCULANT_CIRCULANT_H

#include <limits.h>
#include <stdint.h>

/* Largest supported p: positions on the doubled ring (0..2p) must fit an int. */
#define CIRC_MAXP (INT_MAX / 2)

typedef struct {
  int p;         /* number of ranks, 1..CIRC_MAXP */
  int q;         /* rounds per phase, ceil(log2 p); 0 for p = 1 */
  int skip[64];  /* skip[0..q]: skip[0] = 1 (for p > 1), skip[q] = p, skip[k] = ceil(skip[k+1]/2) */
} circ_graph;

/* Message callbacks of the simulations. Ranks are relative to the root 0 (bcast, reduce) or
 * absolute (allgather); rounds count from 0 in execution order. */
typedef void (*circ_block_fn)(void *ctx, int round, int from, int to, int block);
/* Allgather: `to` stores the sender's slots [0, count) into its slots [first, first+count);
 * slot j of rank v holds the block of rank (v + j) mod p. */
typedef void (*circ_slots_fn)(void *ctx, int round, int from, int to, int first, int count);

/* Fills c for p ranks. Returns 0, or -1 when p is outside 1..CIRC_MAXP (c untouched). */
int circ_init(circ_graph *c, int p);

/* The first block rank r (0 <= r < p) receives; the root's is q. O(log p). */
int circ_baseblock(const circ_graph *c, int r);

/* R[0..q) of rank r: its own baseblock once, and every previous-phase block -q..-1 except
 * baseblock-q, all distinct (the root gets exactly -q..-1). */
void circ_recvsched(const circ_graph *c, int r, int *R);

/* S[0..q) of rank r: S[k] = R[k] of rank (r + skip[k]) mod p. */
void circ_sendsched(const circ_graph *c, int r, int *S);

/* Every message of the n-block broadcast from rank 0 (n >= 1), round by round, senders in
 * rank order: n-1+q rounds. Returns the number of rounds, or -1 (bad n, out of memory). */
int circ_bcast_rounds(const circ_graph *c, int n, circ_block_fn emit, void *ctx);

/* Every message of the regular allgather: q rounds. Returns q. */
int circ_allgather_rounds(const circ_graph *c, circ_slots_fn emit, void *ctx);

/* Every message of the n-block reduction to rank 0 (the broadcast run backwards): the
 * receiver combines the block into its partial result. Returns the number of rounds, or -1. */
int circ_reduce_rounds(const circ_graph *c, int n, circ_block_fn emit, void *ctx);

/* Block count minimising (n-1+q)(alpha + beta*bytes/n): round(sqrt((q-1)*beta*bytes/alpha))
 * clamped to 1..bytes (and to INT_MAX); 1 when q <= 1 or bytes == 0. */
int circ_blocks_for(double alpha, double beta, uint64_t bytes, int q);

#endif

/* cdag — src/exec/circulant.h: round-optimal n-block schedules on a circulant graph.
 *
 * Träff's broadcast schedules (seed 004, SEEDS-NOTES Section 1), computed per rank without
 * communication. In round k (0 <= k < q = ceil(log2 p)) rank r sends to (r + skip[k]) mod p
 * and receives from (r - skip[k]) mod p, ranks relative to the root (0). recv[k] / send[k]
 * name the block of round k in phase terms: negative blocks belong to the previous phase
 * (virtual in the first), a non-negative one is the rank's baseblock.
 * Cost per rank: skips O(log p), baseblock O(log p), receive schedule O(log^2 p) (greedy of
 * SEEDS-NOTES 1.4), send schedule O(log^3 p) (1.5: the to-neighbour's receive schedule).
 * Pure C, no MPI: the kernels that run these schedules over MPI are not built yet. */
#ifndef CDAG_EXEC_CIRCULANT_H
#define CDAG_EXEC_CIRCULANT_H

#include <stdint.h>

#define CIRC_MAXQ 32

typedef struct {
  int p, q;
  int skip[CIRC_MAXQ + 1];   /* skip[q] = p */
} circ_graph;

/* p >= 1; returns 0, or -1 for p out of range. */
int circ_init(circ_graph *c, int p);
/* The first block rank r receives; the root (r = 0) has block q. */
int circ_baseblock(const circ_graph *c, int r);
/* R[0..q) and S[0..q) of rank r (relative to the root). */
void circ_recvsched(const circ_graph *c, int r, int *R);
void circ_sendsched(const circ_graph *c, int r, int *S);

#endif

/* cdag — src/match: pairing sends with receives; deadlock detection (stage contract).
 *
 * Input: a finalized global graph (ir_finalize). Output: match_result, with
 *  - partner[op]: the matched op of every send/recv (-1 for other kinds). The k-th send from
 *    i to j with tag t, in i's program order, matches the k-th receive at j from i with tag t
 *    (MPI's non-overtaking rule). A send to self matches a receive of the same rank.
 *  - order[0..nops): every op once, in an order that respects dependencies and in which
 *    each matched send comes before its receive. A send completes once its own
 *    dependencies are met and its data is taken at that moment (buffered/eager semantics:
 *    MPI_Bsend, GOAL's small messages); the receive completes once the send has and its
 *    own dependencies are met. So a deadlock is a cycle in D ∪ {send -> receive}.
 *    The receive of a send with bytes comes right after the send unless they wait on each
 *    other through other ops (the send is held back until the receive's other predecessors
 *    have run; an exchange in place cannot be), and the order follows op ids where
 *    dependencies allow (passes over it stay cache-friendly): an op freed behind the scan
 *    and far from the op that freed it (a barrier's first ranks, freed by its last ones)
 *    runs in a later scan in id order, not at once.
 * Errors (message names rank, op, label/line, peer, tag):
 *  - CDAG_ERR_UNMATCHED: a send or receive without a partner (the first one found);
 *  - CDAG_ERR_TRUNCATE: a receive smaller than its matched send (a larger one is fine);
 *  - CDAG_ERR_CYCLE: dependencies and matches form a cycle; the message lists the ops on it.
 * Cost: O(n log n + m) for n ops and m dependency edges; memory 8 bytes per op for the
 * result, 16 per send or receive while pairing, 4 per op while ordering and 4 per op not
 * run by the first scan. */
#ifndef CDAG_MATCH_H
#define CDAG_MATCH_H

#include "ir/ir.h"

typedef struct {
  int64_t nops;
  int32_t *partner;   /* nops entries */
  int32_t *order;     /* nops entries */
  int passes;         /* scans in id order the ordering made: 1 unless ops freed far behind
                         the scan were left for a later one */
} match_result;

int match_run(const cdag_graph *g, match_result *m);   /* g must be finalized */
void match_free(match_result *m);                       /* frees the arrays; m itself is the caller's */

#endif

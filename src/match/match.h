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

/* MPI's non-overtaking rule, written once: match_run applies it, and so does the recorder's
   merger (src/record/merge.c) to the part files of a run. The ends are the sends and
   receives one rank receives. */
typedef struct {
  int32_t src, tag;   /* the sending rank, the tag */
  uint32_t key;       /* is_recv << 31 | position in its rank's program order (< 2^31) */
  int32_t op;         /* the caller's id of the send or receive */
} match_end;
/* Sorts e[0..n) by (src, tag, sends first, position); tmp: n entries, at: n + 1. */
void match_sort_ends(match_end *e, int64_t n, match_end *tmp, int64_t *at);
/* Pairs sorted ends channel by channel: fn(ctx, send, recv) for the k-th send and k-th
   receive of each channel, fn(ctx, send, -1) / fn(ctx, -1, recv) for an end without a
   partner; stops at fn's first non-zero return, which it returns. O(n). */
typedef int (*match_pair_fn)(void *ctx, int32_t send, int32_t recv);
int match_pair_ends(const match_end *e, int64_t n, match_pair_fn fn, void *ctx);
void match_free(match_result *m);                       /* frees the arrays; m itself is the caller's */

#endif

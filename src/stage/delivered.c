/* cdag — src/stage/delivered.c: local work that reads what messages delivered.
 *
 * A rank that receives a block into memory the phase leaves behind (a segment, a halo) and
 * then reduces or copies it locally makes the SST trace the reduce's input to its origin on
 * the sender: the plan sends the block twice, once as the receive's result and once as the
 * reduction's input (a one-sided histogram: an alltoall beside a reduce_scatter). Starting a
 * stage at such a reduce or copy makes it read the block where it landed. Whether that pays
 * (one more stage against the bytes sent again) is the price's to say: the pipeline plans the
 * graph both ways. A receive counts for the reduces and copies after it in its rank's program
 * order. O(n log n): one pass per rank with an interval map of the bytes delivered so far. */
#include "base/imap.h"
#include "stage/stage.h"

/* The interval starting at or below / at or above *k (dir): 1 with its end in *end, else 0.
   Intervals keep their length, so ends above 2^63 (an address near the top) are kept too. */
static int find_end(const base_imap *m, uint64_t *k, int dir, uint64_t *end) {
  int64_t len = base_imap_find(m, k, dir);
  if (len < 0) return 0;
  *end = *k + (uint64_t)len;
  return 1;
}

/* The bytes receives delivered so far on one rank: disjoint intervals, start -> length. */
static int deliver(base_imap *m, uint64_t lo, uint64_t hi) {
  uint64_t k = lo, end = 0;
  int rc = CDAG_OK;
  if (find_end(m, &k, BASE_IMAP_AT_OR_BELOW, &end) && end >= lo) {   /* touches the interval below: grow it */
    lo = k;
    if (end > hi) hi = end;
  }
  for (k = lo; rc == CDAG_OK && find_end(m, &k, BASE_IMAP_AT_OR_ABOVE, &end) && k <= hi; k = lo) {
    if (end > hi) hi = end;
    rc = base_imap_del(m, k);
  }
  uint64_t len = hi - lo;
  return rc == CDAG_OK ? base_imap_put(m, lo, len > INT64_MAX ? INT64_MAX : (int64_t)len) : rc;
}

static int delivered(const base_imap *m, uint64_t lo, uint64_t hi) {
  uint64_t k = hi - 1, end = 0;
  return find_end(m, &k, BASE_IMAP_AT_OR_BELOW, &end) && end > lo;
}

/* Does local reduce or copy op read bytes of m? (a reduce reads `in` and `inout`) */
static int reads_delivered(const cdag_graph *g, int64_t op, const base_imap *m) {
  if (g->kind[op] == IR_REDUCE)
    return delivered(m, g->addr2[op], g->addr2[op] + g->bytes[op]) || delivered(m, g->addr[op], g->addr[op] + g->bytes[op]);
  ir_blocks b = ir_copy_blocks(g, op);
  for (uint64_t k = 0; k < b.n; k++)
    if (delivered(m, g->addr2[op] + ir_block_from(&b, k), g->addr2[op] + ir_block_from(&b, k) + b.len)) return 1;
  return 0;
}

/* Marks the ops of rank r that read what an earlier receive of r delivered (program order). */
static int mark_rank(cdag_graph *g, int32_t r, base_imap *m, int64_t *n) {
  int rc = CDAG_OK;
  for (int32_t k = g->rank_start[r]; rc == CDAG_OK && k < g->rank_start[r + 1]; k++) {
    int32_t op = g->rank_ops[k];
    if (!g->bytes[op]) continue;
    if (g->kind[op] == IR_RECV && g->peer[op] != r && !ir_is_scratch(g, r, g->addr[op], g->bytes[op]))
      rc = deliver(m, g->addr[op], g->addr[op] + g->bytes[op]);
    if ((g->kind[op] != IR_REDUCE && g->kind[op] != IR_COPY) || ir_cuts(g, op) || (g->call && g->call[op] >= 0))
      continue;
    if (base_imap_empty(m) || !reads_delivered(g, op, m)) continue;
    if (!g->cut && (rc = ir_ensure_opt(g, (void **)&g->cut, sizeof *g->cut, 0))) break;
    g->cut[op] = IR_CUT_DELIVERED;
    ++*n;
  }
  base_imap_clear(m);
  return rc;
}

int stage_mark_delivered(cdag_graph *g, int64_t *n) {
  base_imap m = {0};
  int rc = CDAG_OK;
  *n = 0;
  for (int32_t r = 0; rc == CDAG_OK && r < g->nprocs; r++) rc = mark_rank(g, r, &m, n);
  base_imap_clear(&m);
  return rc;
}

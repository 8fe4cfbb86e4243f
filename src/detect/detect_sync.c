/* cdag — src/detect/detect_sync.c: the synchronisation a plan must keep (rule 3 of
 * docs/semantics.md, "What a compiled schedule keeps").
 *
 * Zero-byte messages carry no data, only "wait for me". If every rank's wait set is
 * complete and there are at least as many such messages as ranks, the graph contains a
 * barrier: a barrier over all ranks replaces them, unless a collective over all ranks that
 * makes everybody wait for everybody (allgather, alltoall, allreduce and their v-forms) was
 * already found. Otherwise each zero-byte message is kept as a sync pair (src, dst).
 * Messages whose bytes only pass through scratch are treated as data (they stay as
 * residual transfers or collectives).
 * Kept ones whose receives order nothing get a note (a barrier ported call for call).
 * Cost: O(n + p log p) for the wait-set check. */
#include <stdlib.h>

#include "detect/detect_int.h"

static int all_wait_for_all(const df_sst *s) {
  if (!s->wait_start) return 0; /* not computed: no zero-byte message (dataflow.h) */
  for (int i = 0; i < s->nprocs; i++)
    if (s->wait_start[i + 1] - s->wait_start[i] != 1 || s->wait_lo[s->wait_start[i]] != 0 ||
        s->wait_hi[s->wait_start[i]] != s->nprocs - 1)
      return 0;
  return 1;
}

static int full_sync_found(const det_state *st) {
  for (int64_t i = 0; i < st->nprotos; i++) {
    det_kind k = st->protos[i].kind;
    int all = k == DET_ALLGATHER || k == DET_ALLTOALL || k == DET_ALLGATHERV || k == DET_ALLTOALLV ||
              k == DET_ALLREDUCE || k == DET_BARRIER;
    if (all && st->protos[i].nmembers == st->g->nprocs) return 1;
  }
  return 0;
}

static int keep_sync(det_state *st, int32_t src, int32_t dst) {
  for (int64_t i = st->nsyncs; i > 0 && i > st->nsyncs - 8; i--) /* cheap dedupe of repeats */
    if (st->syncs[2 * (i - 1)] == src && st->syncs[2 * (i - 1) + 1] == dst) return CDAG_OK;
  int rc = base_grow((void **)&st->syncs, st->nsyncs, &st->synccap, 1, 2 * sizeof *st->syncs, "syncs");
  if (rc) return rc;
  st->syncs[2 * st->nsyncs] = src;
  st->syncs[2 * st->nsyncs + 1] = dst;
  st->nsyncs++;
  return CDAG_OK;
}

/* Zero-byte receives that order nothing though operations of their rank follow them: no
   dependency starts at one and no later operation waits for it (a join). Program order alone
   does not order operations on different buffers, so such a receive only delays itself: -1
   when out of memory. O(n). */
static int64_t unordered_zero_recvs(const cdag_graph *g) {
  uint8_t *before = calloc((size_t)(g->nops ? g->nops : 1), 1);
  if (!before) return -1;
  for (int64_t k = 0; k < g->ndeps; k++) before[g->dep[2 * k]] = 1;
  for (int32_t r = 0; r < g->nprocs; r++)   /* a rank's last operation has nothing to order */
    if (g->rank_start[r + 1] > g->rank_start[r]) before[g->rank_ops[g->rank_start[r + 1] - 1]] = 1;
  int64_t n = 0;
  for (int64_t i = 0; i < g->nops; i++)
    n += g->kind[i] == IR_RECV && g->bytes[i] == 0 && g->peer[i] != g->rank[i] && !before[i] &&
         (!g->join || g->join[i] == IR_JOIN_NONE) && (!g->call || g->call[i] < 0);
  free(before);
  return n;
}

/* The kept zero-byte messages make no barrier: say so when some of their receives order
   nothing, the trap of a barrier or handshake ported call for call. */
static int note_unordered(det_state *st) {
  int64_t n = unordered_zero_recvs(st->g);
  if (n < 0) return CDAG_NOMEM("syncs");
  if (n == 0) return CDAG_OK;
  return det_note(st, "%lld zero-byte receive%s order%s nothing (no later operation depends on %s, and program order alone "
                  "does not order operations on different buffers), so %lld zero-byte message%s stay%s as "
                  "synchronization pairs and make%s no barrier; for a barrier or a handshake, make what follows "
                  "depend on the receives (cdag_depend, or `requires` in a file)",
                  (long long)n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "it" : "them", (long long)st->nsyncs,
                  st->nsyncs == 1 ? "" : "s", st->nsyncs == 1 ? "s" : "", st->nsyncs == 1 ? "s" : "");
}

int det_synchronization(det_state *st) {
  const cdag_graph *g = st->g;
  int64_t zero = 0;
  for (int64_t i = 0; i < g->nops; i++) zero += g->kind[i] == IR_SEND && g->bytes[i] == 0 && g->peer[i] != g->rank[i];
  if (zero == 0) return CDAG_OK;
  /* A barrier takes log p rounds on every rank; fewer zero-byte messages than ranks (one
     left in an alltoallv ported call for call, the rest data) cost less kept as they are */
  if (all_wait_for_all(st->sst) && g->nprocs >= 2 && zero >= g->nprocs) {
    if (full_sync_found(st)) return CDAG_OK;
    int32_t *all = malloc((size_t)g->nprocs * sizeof *all);
    if (!all) return CDAG_NOMEM("barrier");
    for (int32_t r = 0; r < g->nprocs; r++) all[r] = r;
    int rc = det_add_proto(st, DET_BARRIER, -1, all, g->nprocs, NULL, 0, 0);
    free(all);
    st->barrier = 1;
    return rc;
  }
  int rc = CDAG_OK;
  for (int64_t i = 0; i < g->nops && rc == CDAG_OK; i++)
    if (g->kind[i] == IR_SEND && g->bytes[i] == 0 && g->peer[i] != g->rank[i]) rc = keep_sync(st, g->rank[i], g->peer[i]);
  return rc ? rc : note_unordered(st);
}

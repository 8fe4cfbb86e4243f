/* cdag — src/exec/mpi/baseline.c: running a graph as written (detect = 0), the baseline.
 *
 * Root side: after matching, every matched pair gets a tag unique within its (src, dst)
 * channel (pairs numbered in the sender's program order), so MPI pairs exactly the messages
 * the graph's non-overtaking rule pairs, whatever order the engine posts them in.
 * Rank side: a dependency-counter engine over the rank's own ops. Each send/recv owns a
 * persistent request created at compile time (up to ENGINE_PERSISTENT_MAX of them; a rank
 * with more gets each request from MPI_Isend/MPI_Irecv as the message starts, since MPICH
 * draws requests from a pool of a few hundred thousand per process, which a recording of
 * 10^5 nonblocking collectives exhausts); an op is started (or, if local, executed)
 * when its last predecessor completes; MPI_Waitsome reports completions. A send that other
 * ops of its rank wait for (they overwrite its buffer, or depend on it explicitly) sends a
 * staging copy and counts as complete when it starts: sends take their data when they run
 * (match.h), so a graph the compiler accepts cannot hang on MPI's rendezvous protocol, and
 * sends nothing waits for pay no copy. A computation (compute.c) runs when its op is ready.
 * cdag_start posts
 * what is ready without blocking; cdag_wait drives the rest. Cost per run: O(n + edges)
 * plus one Waitsome per completion batch, over the requests in flight. */
#include <stdlib.h>
#include <string.h>

#include "base/copy.h"
#include "base/sort.h"
#include "exec/mpi/schedule.h"

/* The part of rank r whose ops are its own graph's (ids base[r].., in its program order):
   their tags, packed at the rank's start of tag. */
static int own_part(const cdag_graph *gg, const int64_t *base, int r, int32_t *tag, const part_steps *comps,
                    wire_buf *part) {
  int64_t ntags = 0;
  for (int64_t op = base[r]; op < base[r + 1]; op++)
    if (gg->kind[op] == IR_SEND || gg->kind[op] == IR_RECV) tag[base[r] + ntags++] = tag[op];
  return part_graph_write(part, base[r + 1] - base[r], tag + base[r], ntags, NULL, comps);
}

/* Op k of the part is op `op` of gg, a native call's message or the call itself: the part
   gets the call (once) and the mark, so the call's join waits for its messages there too. */
static int copy_call_mark(const cdag_graph *gg, int32_t op, cdag_graph *tg, int32_t k, int64_t *callmap) {
  int32_t c = gg->call[op];
  int rc = CDAG_OK;
  if (callmap[c] < 0) {
    callmap[c] = tg->ncalls;
    rc = ir_append_call(tg, &gg->calls[c], ir_call_lists(gg, &gg->calls[c]), ir_call_nvalues(gg, &gg->calls[c]));
  }
  if (!rc && gg->os[op] == IR_OS_COLL) tg->calls[callmap[c]].op = k;
  return rc ? rc : ir_mark_call(tg, k, callmap[c], gg->os[op]);
}

/* The part of rank r of a graph whose one-sided ops were expanded: the rank also runs the
   targets' sides its own graph lacks, so the part carries its ops, in program order (tags
   0: the part's own tags pair them), with its explicit dependencies and joins. */
static int expanded_part(const cdag_graph *gg, int r, const int32_t *tag, const part_steps *comps, wire_buf *part) {
  int32_t lo = gg->rank_start[r], n = gg->rank_start[r + 1] - lo, *tags = malloc((size_t)(n ? n : 1) * sizeof *tags);
  cdag_graph *tg = NULL;
  wire_buf ops = {0};
  int64_t ntags = 0;
  int64_t *callmap = malloc((size_t)(gg->ncalls ? gg->ncalls : 1) * sizeof *callmap);
  int rc = tags && callmap ? ir_graph_new(gg->nprocs, r, &tg) : CDAG_NOMEM("baseline part");
  for (int64_t c = 0; c < gg->ncalls; c++) callmap[c] = -1;
  for (int32_t k = 0; !rc && k < n; k++) {
    int32_t op = gg->rank_ops[lo + k];
    int p2p = gg->kind[op] == IR_SEND || gg->kind[op] == IR_RECV;
    if (p2p) tags[ntags++] = tag[op];
    if (ir_is_compute(gg, op))
      rc = ir_add_compute(tg, r, gg->bytes[op], gg->addr2[op], gg->cr_len[op], gg->addr[op], gg->cw_len[op], NULL);
    else
      rc = ir_append(tg, gg->kind[op], r, gg->peer[op], p2p ? 0 : gg->tag[op], gg->addr[op],
                     gg->addr2 ? gg->addr2[op] : 0, gg->bytes[op], NULL);
    if (!rc && ir_is_strided(gg, op)) rc = ir_set_blocks(tg, k, ir_op_blocks(gg, op));   /* a copy's or a computation's */
    if (!rc && gg->join && gg->join[op]) rc = ir_set_join(tg, k, gg->join[op]);   /* waits, collectives */
    if (!rc && gg->call && gg->call[op] >= 0) rc = copy_call_mark(gg, op, tg, k, callmap);
  }
  for (int64_t d = 0; !rc && d < gg->ndeps; d++)
    if (gg->rank[gg->dep[2 * d]] == r) rc = ir_add_dep(tg, gg->pos[gg->dep[2 * d]], gg->pos[gg->dep[2 * d + 1]], 0);
  if (!rc) rc = wire_encode_rank(tg, &ops);
  if (!rc) rc = part_graph_write(part, n, tags, ntags, &ops, comps);
  wire_free(&ops);
  ir_graph_free(tg);
  free(tags);
  free(callmap);
  return rc;
}

int sched_parts_from_graph(const cdag_graph *gg, const match_result *m, const int64_t *base, int64_t tag_ub,
                           wire_buf *parts) {
  int64_t *next = calloc((size_t)gg->nprocs, sizeof *next);
  int32_t *tag = malloc((size_t)(gg->nops ? gg->nops : 1) * sizeof *tag);
  int rc = CDAG_OK;
  if (!next || !tag) rc = CDAG_NOMEM("baseline tags");
  for (int r = 0; !rc && r < gg->nprocs; r++) {
    for (int32_t k = gg->rank_start[r]; k < gg->rank_start[r + 1]; k++) {
      int32_t op = gg->rank_ops[k];
      if (gg->kind[op] != IR_SEND) continue;
      int64_t t = next[gg->peer[op]]++;
      if (t > tag_ub) {
        rc = cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d sends more than %lld messages to rank %d (MPI_TAG_UB)",
                         r, (long long)tag_ub, gg->peer[op]);
        break;
      }
      tag[op] = (int32_t)t;
      tag[m->partner[op]] = (int32_t)t;
    }
    for (int32_t k = gg->rank_start[r]; k < gg->rank_start[r + 1]; k++)
      if (gg->kind[gg->rank_ops[k]] == IR_SEND) next[gg->peer[gg->rank_ops[k]]] = 0;
  }
  /* computations: each rank's, run by its engine at their op */
  stage_steps st = {0};
  part_steps *w = rc ? NULL : calloc((size_t)gg->nprocs, sizeof *w);
  if (!rc && !w) rc = CDAG_NOMEM("baseline computations");
  if (!rc && stage_has_computes(gg) && !(rc = stage_list_computes(gg, &st))) rc = sched_steps_put(&st, gg->nprocs, base, w);
  for (int r = 0; !rc && r < gg->nprocs; r++)
    rc = gg->nwritten ? expanded_part(gg, r, tag, &w[r], &parts[r]) : own_part(gg, base, r, tag, &w[r], &parts[r]);
  for (int r = 0; w && r < gg->nprocs; r++) part_steps_free(&w[r]);
  free(w);
  stage_steps_free(&st);
  free(next);
  free(tag);
  return rc;
}

/* ---- the engine ---- */

void engine_free(sched_engine *e) {
  free(e->comp_of);
  free(e->kind); free(e->addr); free(e->addr2); free(e->bytes); free(e->stride); free(e->blkoff); free(e->peer); free(e->tag);
  free(e->npred); free(e->succ_start); free(e->succ); free(e->req_of); free(e->op_of_req);
  free(e->count); free(e->ready); free(e->idx); free(e->stage_off); free(e->stage); free(e->fused); free(e->msg);
  free(e->local); free(e->local_off); free(e->local_stage); free(e->local_state); free(e->act); free(e->act_req);
  memset(e, 0, sizeof *e);
}

static int engine_alloc(sched_engine *e, int64_t n, int64_t nedges) {
  size_t m = (size_t)(n ? n : 1);
  e->nops = n;
  e->kind = malloc(m);
  e->addr = malloc(m * sizeof *e->addr);
  e->addr2 = malloc(m * sizeof *e->addr2);
  e->bytes = malloc(m * sizeof *e->bytes);
  e->peer = malloc(m * sizeof *e->peer);
  e->tag = malloc(m * sizeof *e->tag);
  e->npred = malloc(m * sizeof *e->npred);
  e->succ_start = malloc((m + 1) * sizeof *e->succ_start);
  e->succ = malloc((size_t)(nedges ? nedges : 1) * sizeof *e->succ);
  e->req_of = malloc(m * sizeof *e->req_of);
  e->op_of_req = malloc(m * sizeof *e->op_of_req);
  e->count = malloc(m * sizeof *e->count);
  e->ready = malloc(m * sizeof *e->ready);
  e->idx = malloc(m * sizeof *e->idx);
  e->act = malloc(m * sizeof *e->act);
  e->act_req = malloc(m * sizeof *e->act_req);
  e->stage_off = malloc(m * sizeof *e->stage_off);
  e->comp_of = malloc(m * sizeof *e->comp_of);
  if (e->comp_of)
    for (int64_t i = 0; i < n; i++) e->comp_of[i] = -1;
  if (!e->comp_of || !e->stage_off || !e->kind || !e->addr || !e->addr2 || !e->bytes || !e->peer || !e->tag || !e->npred || !e->succ_start ||
      !e->succ || !e->req_of || !e->op_of_req || !e->count || !e->ready || !e->idx || !e->act || !e->act_req)
    return CDAG_NOMEM("baseline engine");
  return CDAG_OK;
}

/* Copies the rank's ops and dependencies from its graph (finalized here if needed). */
static int engine_copy_graph(sched_engine *e, cdag_graph *g) {
  int rc;
  if (!g->pred_start && g->rank_ops) { /* finalized, its dependency lists dropped */
    if ((rc = ir_need_deps(g))) return rc;
  } else if (!g->pred_start) {
    int state = g->state;
    g->state = IR_BUILDING;
    rc = ir_finalize(g);
    if (rc) return rc;
    if (state == IR_COMPILED) g->state = IR_COMPILED;
  }
  if ((rc = engine_alloc(e, g->nops, g->nedges))) return rc;
  int64_t n = g->nops;
  if (!n) return CDAG_OK;  /* (memcpy from the NULL arrays of an empty graph is undefined) */
  memcpy(e->kind, g->kind, (size_t)n);
  memcpy(e->addr, g->addr, (size_t)n * sizeof *e->addr);
  if (g->addr2) memcpy(e->addr2, g->addr2, (size_t)n * sizeof *e->addr2);
  memcpy(e->bytes, g->bytes, (size_t)n * sizeof *e->bytes);
  if (g->stride && !(e->stride = malloc((size_t)n * sizeof *e->stride))) return CDAG_NOMEM("baseline engine");
  if (g->stride) memcpy(e->stride, g->stride, (size_t)n * sizeof *e->stride);
  if (g->nblkoff && !(e->blkoff = malloc((size_t)g->nblkoff * sizeof *e->blkoff))) return CDAG_NOMEM("baseline engine");
  if (g->nblkoff) memcpy(e->blkoff, g->blkoff, (size_t)g->nblkoff * sizeof *e->blkoff);
  e->nblkoff = g->nblkoff;
  memcpy(e->peer, g->peer, (size_t)n * sizeof *e->peer);
  memcpy(e->tag, g->tag, (size_t)n * sizeof *e->tag);
  memcpy(e->succ_start, g->succ_start, (size_t)(n + 1) * sizeof *e->succ_start);
  if (g->nedges) memcpy(e->succ, g->succ, (size_t)g->nedges * sizeof *e->succ);
  for (int64_t i = 0; i < n; i++) e->npred[i] = g->pred_start[i + 1] - g->pred_start[i];
  return CDAG_OK;
}

int engine_clone(sched_engine *e, const sched_engine *from) {
  int64_t n = from->nops, nedges = n ? from->succ_start[n] : 0;
  int rc = engine_alloc(e, n, nedges);
  if (rc || !n) return rc;
  memcpy(e->kind, from->kind, (size_t)n);
  memcpy(e->addr, from->addr, (size_t)n * sizeof *e->addr);
  memcpy(e->addr2, from->addr2, (size_t)n * sizeof *e->addr2);
  memcpy(e->bytes, from->bytes, (size_t)n * sizeof *e->bytes);
  if (from->stride && !(e->stride = malloc((size_t)n * sizeof *e->stride))) return CDAG_NOMEM("baseline engine");
  if (from->stride) memcpy(e->stride, from->stride, (size_t)n * sizeof *e->stride);
  if (from->nblkoff && !(e->blkoff = malloc((size_t)from->nblkoff * sizeof *e->blkoff))) return CDAG_NOMEM("baseline engine");
  if (from->nblkoff) memcpy(e->blkoff, from->blkoff, (size_t)from->nblkoff * sizeof *e->blkoff);
  e->nblkoff = from->nblkoff;
  memcpy(e->peer, from->peer, (size_t)n * sizeof *e->peer);
  memcpy(e->tag, from->tag, (size_t)n * sizeof *e->tag);
  memcpy(e->npred, from->npred, (size_t)n * sizeof *e->npred);
  memcpy(e->comp_of, from->comp_of, (size_t)n * sizeof *e->comp_of);
  memcpy(e->succ_start, from->succ_start, (size_t)(n + 1) * sizeof *e->succ_start);
  if (nedges) memcpy(e->succ, from->succ, (size_t)nedges * sizeof *e->succ);
  if (from->fused && !(e->fused = malloc((size_t)n * sizeof *e->fused))) return CDAG_NOMEM("baseline engine");
  if (from->fused) memcpy(e->fused, from->fused, (size_t)n * sizeof *e->fused);
  return CDAG_OK;
}

/* The rank's ops as the part carries them (a graph of their own, under this rank). */
static int part_ops_graph(const cdag_schedule *s, const sched_part *part, cdag_graph **g) {
  int sender = -1, rc = ir_graph_new(s->nprocs, s->rank, g);   /* one rank's: its calls are not checked against the others' */
  if (!rc) rc = wire_decode_rank(*g, part->ops, part->ops_len, &sender);
  if (!rc && sender != s->rank)
    rc = cdag__error(CDAG_ERR_FORMAT, "rank %d: baseline schedule carries the ops of rank %d", s->rank, sender);
  return rc;
}

/* A typed message as cdag_send_type/cdag_recv_type and the recorder write it: a strided copy
   packing into scratch that one send sends, or one receive into scratch that a strided copy
   unpacks. MPI moves long blocks with a vector datatype as it sends, one copy fewer than
   packing first, so the message takes the copy's blocks and the copy does nothing (short
   blocks are packed: sched_vector_pays). Only when
   nothing else sees the difference: the scratch's contents are unspecified, the pack's one
   successor is the send and nothing waits for the send (no later op writes the blocks it
   reads while in flight), the unpack's one predecessor is the receive and the receive's one
   successor the unpack (nothing touches the blocks it writes early). */
/* Blocks at one stride (not listed) that travel as a vector: long enough, and not to or from
   the rank itself (a local copy: pair_local). */
static int at_strides(const sched_engine *e, int32_t c, int32_t m, int rank) {
  const ir_stride *k = &e->stride[c];
  return k->n >= 2 && !(k->n & IR_LISTED) && sched_vector_pays(e->bytes[c] / ir_stride_n(k)) && e->peer[m] != rank;
}

static int fuse_typed(sched_engine *e, const cdag_graph *g, int rank) {
  int64_t n = e->nops, nfused = 0;
  if (!e->stride || !n) return CDAG_OK;
  if (!(e->fused = malloc((size_t)n * sizeof *e->fused))) return CDAG_NOMEM("baseline engine");
  for (int64_t i = 0; i < n; i++) e->fused[i] = -1;
  for (int32_t c = 0; c < n; c++) {
    if (e->kind[c] != IR_COPY || e->succ_start[c + 1] - e->succ_start[c] != 1) continue;
    int32_t m = e->succ[e->succ_start[c]];
    if (e->kind[m] == IR_SEND && at_strides(e, c, m, rank) && e->succ_start[m + 1] == e->succ_start[m] && e->addr[m] == e->addr[c] &&
        e->bytes[m] == e->bytes[c] && e->stride[c].to == e->bytes[c] / e->stride[c].n &&
        ir_is_scratch(g, rank, e->addr[c], e->bytes[c]))
      e->fused[c] = m, e->fused[m] = c, nfused++;
  }
  for (int32_t m = 0; m < n; m++) {
    if (e->kind[m] != IR_RECV || e->succ_start[m + 1] - e->succ_start[m] != 1) continue;
    int32_t c = e->succ[e->succ_start[m]];
    if (e->kind[c] == IR_COPY && at_strides(e, c, m, rank) && e->npred[c] == 1 && e->addr2[c] == e->addr[m] &&
        e->bytes[c] == e->bytes[m] && e->stride[c].from == e->bytes[c] / e->stride[c].n &&
        ir_is_scratch(g, rank, e->addr[m], e->bytes[m]))
      e->fused[c] = m, e->fused[m] = c, nfused++;
  }
  if (!nfused) {
    free(e->fused);
    e->fused = NULL;
  }
  return CDAG_OK;
}

/* The message of send or receive i: from its buffer as bytes, or the blocks of the strided
   copy it was fused with as a vector. */
static int engine_message(cdag_schedule *s, int64_t i, void *buf, int tag, sched_msg *m) {
  sched_engine *e = &s->eng;
  *m = (sched_msg){buf, (MPI_Count)e->bytes[i], MPI_BYTE, tag, e->kind[i] == IR_SEND};
  int32_t c = e->fused ? e->fused[i] : -1;
  if (c < 0) return CDAG_OK;
  const ir_stride *k = &e->stride[c];
  m->buf = (void *)(uintptr_t)(m->send ? e->addr2[c] : e->addr[c]);
  m->count = 1;
  return sched_vector_type(s, (MPI_Count)k->n, (MPI_Count)(e->bytes[c] / k->n), (MPI_Count)(m->send ? k->from : k->to),
                           m->buf, &m->type);
}

/* Message m of op i as a persistent request (at compile time) or started at once. */
static int engine_request(cdag_schedule *s, int64_t i, const sched_msg *m, int now, MPI_Request *req) {
  int peer = s->eng.peer[i], mrc;
  if (now && m->send) mrc = MPI_Isend_c(m->buf, m->count, m->type, peer, m->tag, s->comm, req);
  else if (now) mrc = MPI_Irecv_c(m->buf, m->count, m->type, peer, m->tag, s->comm, req);
  else if (m->send) mrc = MPI_Send_init_c(m->buf, m->count, m->type, peer, m->tag, s->comm, req);
  else mrc = MPI_Recv_init_c(m->buf, m->count, m->type, peer, m->tag, s->comm, req);
  if (mrc == MPI_SUCCESS) return CDAG_OK;
  *req = MPI_REQUEST_NULL;
  static const char *const calls[2][2] = {{"MPI_Recv_init_c", "MPI_Send_init_c"}, {"MPI_Irecv_c", "MPI_Isend_c"}};
  return sched_mpi_error(mrc, calls[now][m->send], s->rank);
}

/* The rank's messages that start at once (no predecessor): at most ENGINE_READY_MAX. */
static int ready_fits(const cdag_schedule *s) {
  const sched_engine *e = &s->eng;
  int64_t ready = 0;
  for (int64_t i = 0; i < e->nops; i++) ready += (e->kind[i] == IR_SEND || e->kind[i] == IR_RECV) && !e->npred[i];
  if (ready <= ENGINE_READY_MAX) return CDAG_OK;
  return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: %lld messages of the graph as written start at once (no operation "
                     "orders them), more MPI requests in flight than cdag's limit of %d (MPICH aborts past about "
                     "262,000 per process)", s->rank, (long long)ready, ENGINE_READY_MAX);
}

/* A message of the rank to itself, by its tag (the root's matching gave a send and its
   receive one tag: own_part). */
typedef struct { int32_t tag, op; } tag_op;

static int tag_op_cmp(const void *x, const void *y) {
  const tag_op *a = x, *b = y;
  return a->tag != b->tag ? (a->tag > b->tag) - (a->tag < b->tag) : (a->op > b->op) - (a->op < b->op);
}

/* Pairs the rank's messages to itself (self[0..n), sorted here): each runs as a local copy
   (local_message), no MPI. MPICH moves a message to the sending process itself through its
   own path, slower than a copy (8 KiB: 4 to 6.6 us). */
static int pair_local(sched_engine *e, tag_op *self, int64_t n, int rank) {
  if (!n) return CDAG_OK;
  base_sort(self, n, sizeof *self, tag_op_cmp);
  size_t m = (size_t)e->nops;
  e->local = malloc(m * sizeof *e->local);
  e->local_off = malloc(m * sizeof *e->local_off);
  e->local_state = calloc(m, 1);
  if (!e->local || !e->local_off || !e->local_state) return CDAG_NOMEM("baseline engine");
  for (size_t i = 0; i < m; i++) e->local[i] = -1;
  uint64_t staged = 0;
  for (int64_t i = 0; i < n; i += 2) {
    int32_t a = self[i].op, b = i + 1 < n && self[i + 1].tag == self[i].tag ? self[i + 1].op : -1;
    if (b < 0 || e->kind[a] == e->kind[b])
      return cdag__error(CDAG_ERR_FORMAT, "rank %d: baseline schedule: message %d to itself has no partner", rank, a);
    e->local[a] = b, e->local[b] = a;
    int32_t snd = e->kind[a] == IR_SEND ? a : b;
    e->local_off[snd] = staged;
    staged += e->bytes[snd];
  }
  return (e->local_stage = malloc((size_t)staged + 1)) ? CDAG_OK : CDAG_NOMEM("messages to itself");
}

int engine_build(cdag_schedule *s, cdag_graph *g, const sched_part *part) {
  sched_engine *e = &s->eng;
  int64_t n = part->nops, ntags = 0;
  cdag_graph *carried = NULL;
  /* A rebound schedule arrives with its engine cloned and moved (rebind.c): the part's ops
     would bring back the old addresses (and leak the clone). */
  int cloned = e->kind != NULL;
  int rc = part->ops && !cloned ? part_ops_graph(s, part, &carried) : CDAG_OK;
  if (carried) g = carried;
  if (!rc && g && !cloned && n != g->nops)
    rc = cdag__error(CDAG_ERR_FORMAT, "rank %d: baseline schedule names %lld ops, graph has %lld", s->rank,
                     (long long)n, (long long)g->nops);
  if (!rc && g && !cloned) rc = engine_copy_graph(e, g);
  if (!rc && g && !cloned) rc = fuse_typed(e, g, s->rank);
  ir_graph_free(carried);
  if (!rc) rc = ready_fits(s);
  if (rc) return rc;
  s->reqs = malloc((size_t)(n ? n : 1) * sizeof *s->reqs);
  if (!s->reqs) return CDAG_NOMEM("requests");
  uint64_t staged = 0;
  for (int64_t i = 0; i < e->nops; i++) {
    int waited_for = e->kind[i] == IR_SEND && e->succ_start[i + 1] > e->succ_start[i];
    e->stage_off[i] = waited_for ? staged : UINT64_MAX;
    staged += waited_for ? e->bytes[i] : 0;
  }
  e->stage = malloc((size_t)staged + 1);
  if (!e->stage) return CDAG_NOMEM("staged sends");
  if (part->ntags > ENGINE_PERSISTENT_MAX && !(e->msg = malloc((size_t)part->ntags * sizeof *e->msg)))
    return CDAG_NOMEM("messages");
  tag_op *self = malloc((size_t)(n ? n : 1) * sizeof *self);
  int64_t nself = 0;
  if (!self) return CDAG_NOMEM("baseline engine");
  for (int64_t i = 0; i < e->nops && !rc; i++) {
    e->req_of[i] = -1;
    if (e->kind[i] != IR_SEND && e->kind[i] != IR_RECV) continue;
    if (ntags == part->ntags) rc = cdag__error(CDAG_ERR_FORMAT, "rank %d: baseline schedule lacks tags", s->rank);
    if (rc) break;
    int32_t t = part->tags[ntags++];
    if (e->peer[i] == s->rank) {
      self[nself++] = (tag_op){t, (int32_t)i};
      continue;
    }
    void *buf = e->stage_off[i] != UINT64_MAX ? (void *)(e->stage + e->stage_off[i]) : (void *)(uintptr_t)e->addr[i];
    int k = s->nreqs++;
    sched_msg m;
    e->req_of[i] = k;
    e->op_of_req[k] = (int32_t)i;
    s->reqs[k] = MPI_REQUEST_NULL;
    if ((rc = engine_message(s, i, buf, (int)t, e->msg ? &e->msg[k] : &m))) break;
    if (!e->msg && (rc = engine_request(s, i, &m, 0, &s->reqs[k]))) break;
  }
  if (!rc) rc = pair_local(e, self, nself, s->rank);
  free(self);
  if (rc) return rc;
  return ntags == part->ntags ? CDAG_OK : cdag__error(CDAG_ERR_FORMAT, "rank %d: baseline schedule has extra tags", s->rank);
}

/* Marks op complete and queues the successors it releases. */
static void engine_complete(sched_engine *e, int32_t op) {
  e->ndone++;
  for (int32_t k = e->succ_start[op]; k < e->succ_start[op + 1]; k++)
    if (--e->count[e->succ[k]] == 0) e->ready[e->nready++] = e->succ[k];
}

/* A local copy as written: its blocks, or nothing when its message moves them (fused). */
static void copy_op(const sched_engine *e, int32_t op) {
  uint8_t *dst = (uint8_t *)(uintptr_t)e->addr[op];
  const uint8_t *src = (const uint8_t *)(uintptr_t)e->addr2[op];
  if (e->fused && e->fused[op] >= 0) return;
  const ir_stride *k = e->stride && ir_stride_n(&e->stride[op]) > 1 ? &e->stride[op] : NULL;
  if (k && (k->n & IR_LISTED)) {   /* listed offsets on a side */
    ir_blocks b = ir_stride_blocks(k, e->blkoff, e->bytes[op]);
    for (uint64_t j = 0; j < b.n; j++) memcpy(dst + ir_block_to(&b, j), src + ir_block_from(&b, j), b.len);
  } else if (k) {
    base_copy_blocks(dst, k->to, src, k->from, k->n, e->bytes[op] / k->n);
  } else {
    memcpy(dst, src, e->bytes[op]);
  }
}

enum { LOCAL_SENT = 1, LOCAL_WAITING = 2 };

/* Op, a message to or from the rank itself, as a local copy: the send takes its data when it
   runs (straight into the receive's buffer if the receive is ready, else into its staging),
   the receive completes once both have run. */
static void local_message(sched_engine *e, int32_t op) {
  int send = e->kind[op] == IR_SEND;
  int32_t snd = send ? op : e->local[op], rcv = send ? e->local[op] : op;
  uint64_t bytes = e->bytes[snd];
  void *src = (void *)(uintptr_t)e->addr[snd], *dst = (void *)(uintptr_t)e->addr[rcv];
  uint8_t *staged = e->local_stage + e->local_off[snd];
  if (send && e->local_state[rcv] == LOCAL_WAITING) {
    if (bytes) memmove(dst, src, bytes);
    engine_complete(e, snd);
    engine_complete(e, rcv);
  } else if (send) {
    if (bytes) memcpy(staged, src, bytes);
    e->local_state[snd] = LOCAL_SENT;
    engine_complete(e, snd);
  } else if (e->local_state[snd] == LOCAL_SENT) {
    if (bytes) memcpy(dst, staged, bytes);
    engine_complete(e, rcv);
  } else {
    e->local_state[rcv] = LOCAL_WAITING;
  }
}

/* Starts ready communication and executes ready local ops until nothing is ready. */
static int engine_drain(cdag_schedule *s) {
  sched_engine *e = &s->eng;
  while (e->rhead < e->nready) {
    int32_t op = e->ready[e->rhead++];
    switch (e->kind[op]) {
    case IR_SEND:
    case IR_RECV: {
      if (e->local && e->local[op] >= 0) {
        local_message(e, op);
        break;
      }
      int staged = e->stage_off[op] != UINT64_MAX;
      if (staged && e->bytes[op])   /* a native barrier's messages have no buffer (NULL) */
        memcpy(e->stage + e->stage_off[op], (const void *)(uintptr_t)e->addr[op], e->bytes[op]);
      int k = e->req_of[op], mrc = e->msg ? MPI_SUCCESS : MPI_Start(&s->reqs[k]), rc;
      if (mrc != MPI_SUCCESS) return sched_mpi_error(mrc, "MPI_Start", s->rank);
      if (e->msg) {   /* a request of its own, at the end of those in flight */
        if ((rc = engine_request(s, op, &e->msg[k], 1, &s->reqs[e->nlive]))) return rc;
        e->op_of_req[e->nlive++] = op;
      } else {
        e->act[e->nact] = s->reqs[k];
        e->act_req[e->nact++] = k;
      }
      if (staged) {
        e->pending++;
        engine_complete(e, op);
      }
      break;
    }
    case IR_COPY:
      copy_op(e, op);
      engine_complete(e, op);
      break;
    case IR_REDUCE: {
      const void *in = (const void *)(uintptr_t)e->addr2[op];
      void *inout = (void *)(uintptr_t)e->addr[op];
      uint64_t count = e->bytes[op] / (uint64_t)ir_type_size(e->peer[op]);
      if (ir_rop_is_user(e->tag[op])) exec_user_reduce(e->tag[op], in, inout, count);
      else ir_reduce_apply(e->peer[op], e->tag[op], in, inout, count);
      engine_complete(e, op);
      break;
    }
    case IR_CALC:   /* a computation runs here (compute.c); a plain calc is nothing */
      if (e->comp_of[op] >= 0) sched_comp_run(s, &s->comps[e->comp_of[op]]);
      engine_complete(e, op);
      break;
    default:
      engine_complete(e, op);
      break;
    }
  }
  return CDAG_OK;
}

int engine_start(cdag_schedule *s) {
  sched_engine *e = &s->eng;
  if (e->nlive)   /* a run that failed left them: a new run's messages could match theirs */
    return cdag__error(CDAG_ERR_STATE, "rank %d: a failed run left %lld messages in flight; free the schedule",
                       s->rank, (long long)e->nlive);
  e->rhead = e->nready = e->ndone = e->pending = e->nact = 0;
  if (e->local) memset(e->local_state, 0, (size_t)e->nops);
  for (int64_t i = 0; i < e->nops; i++) {
    e->count[i] = e->npred[i];
    if (!e->count[i]) e->ready[e->nready++] = (int32_t)i;
  }
  return engine_drain(s);
}

/* Requests of their own: those MPI completed (and freed) leave the ones in flight, so the next
   Waitsome looks at these alone. O(in flight). */
static void drop_completed(cdag_schedule *s) {
  sched_engine *e = &s->eng;
  int64_t m = 0;
  for (int64_t j = 0; j < e->nlive; j++)
    if (s->reqs[j] != MPI_REQUEST_NULL) s->reqs[m] = s->reqs[j], e->op_of_req[m++] = e->op_of_req[j];
  for (int64_t j = m; j < e->nlive; j++) s->reqs[j] = MPI_REQUEST_NULL;
  e->nlive = m;
}

/* Persistent requests the last Waitsome completed (idx[0 .. n)) leave those in flight. O(in flight). */
static void drop_inactive(sched_engine *e, int n) {
  for (int k = 0; k < n; k++) e->act_req[e->idx[k]] = -1;
  int64_t m = 0;
  for (int64_t j = 0; j < e->nact; j++)
    if (e->act_req[j] >= 0) e->act[m] = e->act[j], e->act_req[m++] = e->act_req[j];
  e->nact = m;
}

/* Runs what is ready, then takes completions: waiting for some (block) or only those that
   are there; *done once every op has completed, *moved when anything completed. */
static int engine_advance(cdag_schedule *s, int block, int *done, int *moved) {
  sched_engine *e = &s->eng;
  int rc = engine_drain(s), outcount = 0, mrc;
  *done = *moved = 0;
  if (rc) return rc;
  if (e->ndone == e->nops && e->pending == 0) {
    *done = 1;
    return CDAG_OK;
  }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow" /* GCC misreads MPI_STATUSES_IGNORE as an array */
#endif
  int nreqs = (int)(e->msg ? e->nlive : e->nact);
  MPI_Request *reqs = e->msg ? s->reqs : e->act;
  if (block) mrc = MPI_Waitsome(nreqs, reqs, &outcount, e->idx, MPI_STATUSES_IGNORE);
  else mrc = MPI_Testsome(nreqs, reqs, &outcount, e->idx, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  if (mrc != MPI_SUCCESS) return sched_mpi_error(mrc, block ? "MPI_Waitsome" : "MPI_Testsome", s->rank);
  if (outcount == MPI_UNDEFINED)
    return cdag__error(CDAG_ERR_STATE, "rank %d: baseline run stalled with %lld of %lld ops done", s->rank,
                       (long long)e->ndone, (long long)e->nops);
  for (int k = 0; k < outcount; k++) {
    int32_t op = e->op_of_req[e->msg ? e->idx[k] : e->act_req[e->idx[k]]];
    if (e->stage_off[op] != UINT64_MAX) e->pending--; /* completed when it started */
    else engine_complete(e, op);
  }
  if (e->msg) drop_completed(s);
  else drop_inactive(e, outcount);
  *moved = outcount > 0;
  return CDAG_OK;
}

int engine_wait(cdag_schedule *s) {
  int done = 0, moved, rc = CDAG_OK;
  while (!done && !rc) rc = engine_advance(s, 1, &done, &moved);
  return rc;
}

int engine_test(cdag_schedule *s, int *done) {
  int moved = 1, rc = CDAG_OK;
  *done = 0;
  while (!*done && moved && !rc) rc = engine_advance(s, 0, done, &moved);
  return rc;
}

/* cdag — src/exec/mpi/replay.c: one rank of a global graph as a distributed graph (replay.h).
 *
 * The map: every footprint of every op, the in and out buffers of every native collective
 * call, and every scratch region become spans (rank, lo, hi) (not what a call was written
 * out as: its scratch is a distributed graph's own memory, and it writes itself out again);
 * the spans are sorted by rank and address and merged where they overlap or touch, and
 * each rank's merged ranges are packed into its block in address order, each moved up to
 * the next offset congruent to its address modulo 64. Merging touching ranges keeps every
 * overlap the file had and adds none, so the copy has the file's memory conflicts, hence
 * its dependencies, exactly.
 * The copy walks the rank's ops in the global graph's program order, so the explicit
 * dependencies (forward in that order) are accepted as cdag_depend accepts them, and the
 * distributed graph's program order is the file's. Ops are added with the ir calls the API
 * uses (the file's element types and ops are cdag's, not MPI's); one-sided accesses are
 * copied as the messages, copies and reduces the file's expansion made of them, in its
 * places, on tags above the file's, and fences as nothing (the file's race check and
 * placement stand; a distributed graph has no accumulates, and its own expansion would
 * meet an accumulate's reduce as the target's write). Its last part holds the few MPI calls
 * of the `cdag replay` command. */
#include <stdlib.h>

#include "exec/mpi/replay.h"
#include "exec/mpi/schedule.h"

/* ---- the map ---- */

typedef struct {
  int32_t rank;
  uint64_t lo, hi;
} span;

static int os_of(const cdag_graph *gg, int64_t i) { return gg->os ? gg->os[i] : IR_OS_NONE; }

/* The byte ranges op i touches: *n of them in lo/len; CDAG_ERR_UNSUPPORTED for a kind the
   replay does not know (the caller names the op). The messages, copies and reductions a
   native call was written out as touch nothing here: the call's in and out do (collect_spans),
   and its scratch is the distributed graph's own. */
static int footprint(const cdag_graph *gg, int64_t i, uint64_t lo[2], uint64_t len[2], int *n) {
  *n = 0;
  if (os_of(gg, i) == IR_OS_COLL_PART) return CDAG_OK;
  switch (gg->kind[i]) {
  case IR_SEND:
  case IR_RECV:
    lo[0] = gg->addr[i], len[0] = gg->bytes[i], *n = 1;
    return CDAG_OK;
  case IR_REDUCE:
    lo[0] = gg->addr[i], lo[1] = gg->addr2[i], len[0] = len[1] = gg->bytes[i], *n = 2;
    return CDAG_OK;
  case IR_COPY: {   /* a strided copy: the hull of each side (its gaps are the program's memory too) */
    ir_blocks b = ir_copy_blocks(gg, i);
    lo[0] = gg->addr[i], lo[1] = gg->addr2[i], len[0] = b.to_last + b.len, len[1] = b.from_last + b.len;
    *n = 2;
    return CDAG_OK;
  }
  case IR_CALC:   /* a computation touches what it writes and what it reads (reading all: what
                    the rank's other ops wrote, in the map already) */
    if (!ir_is_compute(gg, i)) return CDAG_OK;
    ir_blocks w = ir_write_blocks(gg, i);   /* its blocks' hull */
    lo[0] = gg->addr[i], len[0] = w.to_last + w.len, *n = 1;
    if (gg->cr_len[i] != IR_READS_ALL) lo[1] = gg->addr2[i], len[1] = gg->cr_len[i], *n = 2;
    return CDAG_OK;
  default:
    return CDAG_ERR_UNSUPPORTED;
  }
}

static int unknown_op(const cdag_graph *gg, int64_t i) {
  char d[200];
  return cdag__error(CDAG_ERR_UNSUPPORTED, "%s: an operation of kind %d, which replay cannot copy into a distributed "
                     "graph yet", ir_describe(gg, (int32_t)i, d, sizeof d), gg->kind[i]);
}

static int push_span(span **a, int64_t *n, int64_t *cap, int32_t rank, uint64_t lo, uint64_t len) {
  if (!len) return CDAG_OK;
  BASE_GROW(*a, *n, *cap, 1, "replay map");
  (*a)[(*n)++] = (span){rank, lo, lo + len};
  return CDAG_OK;
}

static int span_cmp(const void *pa, const void *pb) {
  const span *a = pa, *b = pb;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Every footprint, native call buffer and scratch region (but the calls' own scratch, at
   IR_COLL_SCRATCH and up), unsorted. */
static int collect_spans(const cdag_graph *gg, span **a, int64_t *n) {
  int64_t cap = 0;
  int rc = CDAG_OK;
  for (int64_t i = 0; !rc && i < gg->nops; i++) {
    uint64_t lo[2], len[2];
    int k;
    if (footprint(gg, i, lo, len, &k)) return unknown_op(gg, i);
    for (int j = 0; !rc && j < k; j++) rc = push_span(a, n, &cap, gg->rank[i], lo[j], len[j]);
  }
  for (int64_t k = 0; !rc && k < gg->ncalls; k++) {
    const ir_call *c = &gg->calls[k];
    uint64_t in, out;
    ir_call_extent(gg, c, &in, &out);
    rc = push_span(a, n, &cap, gg->rank[c->op], c->in, in);
    if (!rc) rc = push_span(a, n, &cap, gg->rank[c->op], c->out, out);
  }
  for (int64_t s = 0; !rc && s < gg->nscratch; s++)
    if (gg->scr_addr[s] < IR_COLL_SCRATCH) rc = push_span(a, n, &cap, gg->scr_rank[s], gg->scr_addr[s], gg->scr_len[s]);
  return rc;
}

/* The smallest offset >= end that is congruent to lo modulo 64. */
static uint64_t place(uint64_t end, uint64_t lo) { return end + ((lo - end) & 63); }

/* Merges the sorted spans a[0..n) into m's ranges and packs each rank's block. */
static int pack(const span *a, int64_t n, replay_map *m) {
  int64_t k = 0;
  for (int64_t s = 0; s < n; k++) {
    int32_t r = a[s].rank;
    uint64_t lo = a[s].lo, hi = a[s].hi;
    for (s++; s < n && a[s].rank == r && a[s].lo <= hi; s++)
      if (a[s].hi > hi) hi = a[s].hi;
    uint64_t off = place(m->size[r], lo);
    if (off < m->size[r] || off + (hi - lo) < off)
      return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d touches more memory than one block can hold", r);
    m->lo[k] = lo, m->len[k] = hi - lo, m->off[k] = off;
    m->size[r] = off + (hi - lo);
    m->start[r + 1] = k + 1;
  }
  for (int r = 0; r < m->nprocs; r++)   /* ranks without ranges end where the previous did */
    if (m->start[r + 1] < m->start[r]) m->start[r + 1] = m->start[r];
  return CDAG_OK;
}

uint8_t replay_fill_byte(int rank, uint64_t addr) {
  uint64_t z = addr * 0x9e3779b97f4a7c15ull ^ ((uint64_t)rank + 1) * 0xbf58476d1ce4e5b9ull;
  z ^= z >> 31;
  z *= 0x94d049bb133111ebull;
  z ^= z >> 29;
  return (uint8_t)(0x38 + (z & 15));
}

int replay_map_build(const cdag_graph *gg, replay_map *m) {
  *m = (replay_map){0};
  if (!gg || !gg->rank_ops) return cdag__error(CDAG_ERR_STATE, "replay: the global graph is not finalized");
  span *a = NULL;
  int64_t n = 0;
  int rc = collect_spans(gg, &a, &n);
  m->nprocs = gg->nprocs;
  size_t cells = (size_t)(n ? n : 1);
  m->start = calloc((size_t)gg->nprocs + 1, sizeof *m->start);
  m->size = calloc((size_t)gg->nprocs, sizeof *m->size);
  m->lo = malloc(cells * sizeof *m->lo);
  m->len = malloc(cells * sizeof *m->len);
  m->off = malloc(cells * sizeof *m->off);
  if (!rc && (!m->start || !m->size || !m->lo || !m->len || !m->off)) rc = CDAG_NOMEM("replay map");
  if (!rc) {
    if (n > 1) qsort(a, (size_t)n, sizeof *a, span_cmp);
    rc = pack(a, n, m);
  }
  free(a);
  return rc;
}

void replay_map_free(replay_map *m) {
  free(m->start);
  free(m->lo);
  free(m->len);
  free(m->off);
  free(m->size);
  *m = (replay_map){0};
}

int replay_map_offset(const replay_map *m, int r, uint64_t addr, uint64_t len, uint64_t *off) {
  int64_t lo = m->start[r], hi = m->start[r + 1];   /* the last range starting at or below addr */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (m->lo[mid] <= addr) lo = mid;
    else hi = mid;
  }
  int found = lo < m->start[r + 1] && m->lo[lo] <= addr && addr - m->lo[lo] <= m->len[lo];
  if (found && len <= m->len[lo] - (addr - m->lo[lo])) {
    *off = m->off[lo] + (addr - m->lo[lo]);
    return CDAG_OK;
  }
  if (!len) {   /* touches nothing: any valid pointer will do */
    *off = 0;
    return CDAG_OK;
  }
  return cdag__error(CDAG_ERR_ARG, "replay: rank %d bytes [0x%llx, +%llu) are not in its map", r,
                     (unsigned long long)addr, (unsigned long long)len);
}

/* ---- the copy ---- */

typedef struct {
  const cdag_graph *gg;
  const replay_map *m;
  uint8_t *block;
  cdag_graph *g;
  int me;
  int compute_time;   /* computations keep their cost (0: they cost nothing; -1: left out) */
  int acc_tag;        /* the tag of one-sided accesses' messages: above every tag of the file */
} copier;

/* The pointer in this rank's block for its file address [addr, addr + len). */
static int local_ptr(const copier *c, uint64_t addr, uint64_t len, uint64_t *p) {
  uint64_t off;
  int rc = replay_map_offset(c->m, c->me, addr, len, &off);
  if (!rc) *p = (uint64_t)(uintptr_t)(c->block + off);
  return rc;
}

/* Is op i of the file a one-sided access or a target's side of one (after expansion: a
   message)? Those run as the messages the file's expansion made, in its places: the file
   was checked for races when it loaded, and a distributed graph built again from its
   accesses would place an accumulate's reduce, which it does not have, where its own race
   check takes it for the target's write (an accumulate followed by a put of its bytes). */
static int as_message(const cdag_graph *gg, int64_t i) {
  int os = os_of(gg, i);
  if (os == IR_OS_GET || os == IR_OS_PUT || os == IR_OS_ACC) return 1;
  return os == IR_OS_PARTNER && (gg->kind[i] == IR_SEND || gg->kind[i] == IR_RECV);
}

/* A native collective call (its own op): added again, so g writes it out itself. */
static int copy_call(const copier *c, int64_t i, int32_t *id) {
  const cdag_graph *gg = c->gg;
  const ir_call *call = &gg->calls[gg->call[i]];
  uint64_t in_len, out_len, pin, pout;
  ir_call_extent(gg, call, &in_len, &out_len);
  int rc = local_ptr(c, call->in, in_len, &pin);
  if (!rc) rc = local_ptr(c, call->out, out_len, &pout);
  if (rc) return rc;
  ir_call here = *call;   /* nonblocking ones stay so: the wait naming it is copied with the dependencies */
  here.in = pin;
  here.out = pout;
  return ir_add_coll_call(c->g, c->me, &here, ir_call_lists(gg, call), id);   /* the lists' displacements are relative: they move along */
}

/* A send or receive of the file. */
static int copy_message(const copier *c, int64_t i, int32_t *id) {
  const cdag_graph *gg = c->gg;
  if (gg->tag[i] < 0) {   /* a message cdag made itself (tags below 0 are never the file's) */
    char d[200];
    return cdag__error(CDAG_ERR_UNSUPPORTED, "%s: a message with cdag's internal tag %d, which replay cannot copy "
                       "into a distributed graph yet", ir_describe(gg, (int32_t)i, d, sizeof d), gg->tag[i]);
  }
  uint64_t p;
  int rc = local_ptr(c, gg->addr[i], gg->bytes[i], &p);
  if (rc) return rc;
  return gg->kind[i] == IR_SEND ? ir_add_send(c->g, c->me, p, gg->bytes[i], gg->peer[i], gg->tag[i], id)
                                : ir_add_recv(c->g, c->me, p, gg->bytes[i], gg->peer[i], gg->tag[i], id);
}

/* A fence or a message of a one-sided access (its side on this rank, after expansion): the
   epochs run as the messages the expansion placed, on a tag of the communicator's own above
   the file's (the world's: acc_tag; the k-th message of a pair on it meets the k-th, as the
   expansion ordered them); a fence is nothing. */
static int copy_onesided(const copier *c, int64_t i, int32_t *id) {
  const cdag_graph *gg = c->gg;
  int comm = gg->oscomm ? gg->oscomm[i] : 0;
  if (gg->kind[i] == IR_CALC) return ir_add_calc(c->g, c->me, 0, id);
  if ((int64_t)c->acc_tag + comm > INT32_MAX)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "replay: no tag is left for the one-sided accesses of communicator %d",
                       comm);
  uint64_t p;
  int rc = local_ptr(c, gg->addr[i], gg->bytes[i], &p), tag = c->acc_tag + comm;
  if (rc) return rc;
  return gg->kind[i] == IR_SEND ? ir_add_send(c->g, c->me, p, gg->bytes[i], gg->peer[i], tag, id)
                                : ir_add_recv(c->g, c->me, p, gg->bytes[i], gg->peer[i], tag, id);
}

/* Op i of the global graph into g by its kind; *id stays -1 for ops g makes itself (the
   messages of native calls). */
static int copy_kind(const copier *c, int64_t i, int32_t *id) {
  const cdag_graph *gg = c->gg;
  uint64_t p, q;
  int rc;
  if (as_message(gg, i) || os_of(gg, i) == IR_OS_FENCE) return copy_onesided(c, i, id);
  switch (os_of(gg, i)) {
  case IR_OS_PARTNER:   /* a target's reduce or strided copy: a local op as any other */
    break;
  case IR_OS_COLL_PART:
    return CDAG_OK;
  case IR_OS_COLL:
    return copy_call(c, i, id);
  case IR_OS_WAIT:   /* its dependencies are explicit ones (copy_facts) */
    return ir_add_wait(c->g, c->me, NULL, 0, id);
  default:
    break;
  }
  switch (gg->kind[i]) {
  case IR_SEND:
  case IR_RECV:
    return copy_message(c, i, id);
  case IR_REDUCE: {
    uint64_t count = gg->bytes[i] / (uint64_t)ir_type_size(gg->peer[i]);
    if ((rc = local_ptr(c, gg->addr2[i], gg->bytes[i], &p)) || (rc = local_ptr(c, gg->addr[i], gg->bytes[i], &q)))
      return rc;
    return ir_add_reduce(c->g, c->me, p, q, count, gg->peer[i], gg->tag[i], id);
  }
  case IR_COPY: {   /* strided: the pattern whole, its hulls mapped */
    ir_blocks b = ir_copy_blocks(gg, i);
    if ((rc = local_ptr(c, gg->addr2[i], b.from_last + b.len, &p)) || (rc = local_ptr(c, gg->addr[i], b.to_last + b.len, &q)))
      return rc;
    return ir_add_copy_listed(c->g, c->me, p, q, b.n, b.len, b.from_at, b.from, b.to_at, b.to, id);
  }
  case IR_CALC:
    if (ir_is_compute(gg, i) && c->compute_time < 0) return ir_add_calc(c->g, c->me, 0, id);   /* skip */
    if (ir_is_compute(gg, i)) {
      int all = gg->cr_len[i] == IR_READS_ALL;
      ir_blocks w = ir_write_blocks(gg, i);
      if ((rc = local_ptr(c, gg->addr[i], w.to_last + w.len, &q)) ||
          (!all && (rc = local_ptr(c, gg->addr2[i], gg->cr_len[i], &p))))
        return rc;
      rc = ir_add_compute(c->g, c->me, c->compute_time ? gg->bytes[i] : 0, all ? 0 : p, gg->cr_len[i], q,
                          gg->cw_len[i], id);
      return rc == CDAG_OK && w.n > 1 ? ir_set_write_blocks(c->g, *id, w.n, w.to, w.to_at) : rc;
    }
    return ir_add_calc(c->g, c->me, gg->bytes[i], id);
  default:
    return unknown_op(gg, i);
  }
}

/* Op i into g, with its `wait` (a join: later ops of the rank depend on it). Calls and wait
   statements are joins of their own making. */
static int copy_op(const copier *c, int64_t i, int32_t *id) {
  int rc = copy_kind(c, i, id), os = os_of(c->gg, i);
  if (!rc && *id >= 0 && c->gg->join && c->gg->join[i] && os != IR_OS_COLL && os != IR_OS_WAIT)
    rc = ir_set_join(c->g, *id, c->gg->join[i]);
  return rc;
}

/* The rank's ops lo .. hi of the file into g, in order. */
static int copy_rank_ops(const copier *c, int32_t lo, int32_t hi, int32_t *local) {
  int rc = CDAG_OK;
  for (int32_t k = lo; !rc && k < hi; k++) rc = copy_op(c, c->gg->rank_ops[k], &local[c->gg->rank_ops[k]]);
  return rc;
}

/* The communicators, before any call names one. */
static int copy_comms(const copier *c) {
  const cdag_graph *gg = c->gg;
  int rc = CDAG_OK;
  for (int64_t k = 0; !rc && k < gg->ncomms; k++)
    rc = ir_add_comm(c->g, gg->comm_id[k], gg->members + gg->comm_first[k], gg->comm_n[k]);
  return rc;
}

/* The rank's explicit dependencies and labels, between the copies (local: global id -> id in g). */
static int copy_facts(const copier *c, const int32_t *local) {
  const cdag_graph *gg = c->gg;
  int rc = CDAG_OK;
  for (int64_t k = 0; !rc && k < gg->ndeps; k++) {
    int32_t a = gg->dep[2 * k], b = gg->dep[2 * k + 1];
    if (gg->rank[a] == c->me && local[a] >= 0 && local[b] >= 0) rc = ir_add_dep(c->g, local[a], local[b], 1);
  }
  for (int32_t k = gg->rank_start[c->me]; !rc && k < gg->rank_start[c->me + 1]; k++) {
    int32_t op = gg->rank_ops[k];
    const char *l = ir_label(gg, op);
    if (l && local[op] >= 0) rc = ir_set_label(c->g, local[op], l, (int64_t)strlen(l));
  }
  return rc;
}

static int copy_scratch(const copier *c) {
  const cdag_graph *gg = c->gg;
  int rc = CDAG_OK;
  for (int64_t s = 0; !rc && s < gg->nscratch; s++) {
    uint64_t p;
    if (gg->scr_rank[s] != c->me || !gg->scr_len[s] || gg->scr_addr[s] >= IR_COLL_SCRATCH) continue;   /* not a call's */
    if (!(rc = local_ptr(c, gg->scr_addr[s], gg->scr_len[s], &p))) rc = ir_add_scratch(c->g, c->me, p, gg->scr_len[s]);
  }
  return rc;
}

int replay_copy_rank(const cdag_graph *gg, const replay_map *m, uint8_t *block, cdag_graph *g, int compute_time) {
  if (!gg || !m || !g || !block) return cdag__error(CDAG_ERR_ARG, "replay_copy_rank: NULL argument");
  if (!gg->rank_ops) return cdag__error(CDAG_ERR_STATE, "replay: the global graph is not finalized");
  if (g->myrank < 0 || g->nprocs != gg->nprocs || g->nops || m->nprocs != gg->nprocs)
    return cdag__error(CDAG_ERR_ARG, "replay: a distributed graph of %d ranks with no operations is needed for a "
                       "file of %d ranks", g->nprocs, gg->nprocs);
  int64_t top = 0;   /* the same on every rank: the file's highest tag + 1 */
  for (int64_t i = 0; i < gg->nops; i++)
    if ((gg->kind[i] == IR_SEND || gg->kind[i] == IR_RECV) && gg->tag[i] >= top) top = (int64_t)gg->tag[i] + 1;
  if (top > INT32_MAX) return cdag__error(CDAG_ERR_UNSUPPORTED, "replay: the file uses tag 2^31-1: no tag is left for "
                                          "its one-sided accesses");
  copier c = {gg, m, block, g, g->myrank, compute_time, (int)top};
  int32_t lo = gg->rank_start[c.me], hi = gg->rank_start[c.me + 1];
  int32_t *local = malloc((size_t)(gg->nops ? gg->nops : 1) * sizeof *local);
  if (!local) return CDAG_NOMEM("replay");
  memset(local, 0xff, (size_t)gg->nops * sizeof *local);
  int rc = ir_reserve(g, hi - lo);
  if (!rc) rc = copy_comms(&c);
  rc = rc ? rc : copy_rank_ops(&c, lo, hi, local);
  if (!rc) rc = copy_facts(&c, local);
  if (!rc) rc = copy_scratch(&c);
  free(local);
  return rc;
}

/* ---- the MPI side of `cdag replay` ---- */

int replay_mpi_init(int *started, int *rank, int *nprocs) {
  int up = 0;
  *started = 0;
  MPI_Initialized(&up);
  if (!up) {
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) return cdag__error(CDAG_ERR_MPI, "replay: MPI_Init failed");
    *started = 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, nprocs);
  return CDAG_OK;
}

void replay_mpi_finalize(int started) {
  if (started) MPI_Finalize();
}

int replay_graph_create(cdag_graph **g) { return cdag_graph_create(MPI_COMM_WORLD, g); }

int replay_agree(int rc) {
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  return exec_agree(MPI_COMM_WORLD, rank, nprocs, rc);
}

int replay_node_size(void) {
  MPI_Comm node;
  int n = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
  }
  return n;
}

static double slowest(double t) {
  double max = t;
  MPI_Allreduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

int replay_compile(cdag_graph *g, const cdag_options *o, cdag_schedule **s, double *seconds) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  int rc = cdag_compile(g, o, s);   /* collective: every rank returns the same code */
  *seconds = slowest(MPI_Wtime() - t0);
  return rc;
}

int replay_time_runs(cdag_schedule *s, int iters, double *seconds) {
  int rc = CDAG_OK;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int it = 0; !rc && it < iters; it++) rc = cdag_run(s);
  *seconds = slowest((MPI_Wtime() - t0) / (iters > 0 ? iters : 1));
  return replay_agree(rc);
}

static int double_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int replay_time_modes(cdag_schedule *const *s, int nmodes, int iters, int repeat, replay_timing *out) {
  double *t = malloc((size_t)nmodes * (size_t)(repeat > 0 ? repeat : 1) * sizeof *t);
  int rc = replay_agree(t ? CDAG_OK : CDAG_NOMEM("replay timings"));
  for (int r = 0; !rc && r < repeat; r++)   /* modes in turn: a busy spell hits each alike */
    for (int k = 0; !rc && k < nmodes; k++) rc = replay_time_runs(s[k], iters, &t[(size_t)k * (size_t)repeat + (size_t)r]);
  for (int k = 0; !rc && k < nmodes; k++) {   /* every rank has the same samples (slowest) */
    double *v = t + (size_t)k * (size_t)repeat;
    qsort(v, (size_t)repeat, sizeof *v, double_cmp);
    out[k].best = v[0];
    out[k].median = repeat % 2 ? v[repeat / 2] : (v[repeat / 2 - 1] + v[repeat / 2]) / 2;
  }
  free(t);
  return rc;
}

uint64_t replay_sum(uint64_t v) {
  uint64_t sum = v;
  MPI_Allreduce(&v, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

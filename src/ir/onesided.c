/* cdag — src/ir/onesided.c: one-sided gets and puts become message pairs; races are errors.
 *
 * A get or put names both ends, so it needs no matching: expansion gives the target the
 * side it did not write. Fences cut each rank's ops (in the order they were added) into
 * epochs 0..F, F the number of fences, equal on every rank. A get of epoch E reads the
 * target's bytes as they are when E starts there: the target sends them right after its
 * E-th fence (at its start for E = 0) and the origin's get becomes the receive. A put of
 * epoch E is in the target's memory when E ends: the origin's put becomes the send, and the
 * target receives right before its (E+1)-th fence (at its end for the last epoch). Fences
 * become calcs of cost 0: they order nothing by themselves; what orders the target's later
 * reads after a put is the receive's place in its program order, so a fence no transfer
 * needs costs nothing. The target's sides of one epoch edge keep the order of their origins'
 * ops, and gets and puts have tags of their own, so MPI's pairing rule pairs them as made.
 * An accumulate is a put whose target side receives into a scratch area of its own (at
 * IR_ACC_SCRATCH, per target) and reduces from there into the target's bytes, both at the
 * put's place: MPI's accumulate is a remote reduce, which the graph runs at the target.
 *
 * Program order: every op has a key (os_key) and a rank's ops are sorted by it (finalize.c):
 * 4i + 2 for op i as written, 4f + 3 right after fence f, 4f + 1 right before it, 0 at the
 * rank's start, 4n + 4 at its end.
 *
 * Races (ir_onesided_races), per target and epoch, with the accesses sorted by address and
 * swept once: a put against any overlapping access but another one-sided access of its own
 * origin ordered with it by a dependency path; a get against overlapping puts (same
 * exception) and the target's own writes. The target's own accesses are those of its ops in
 * the epoch, one-sided ones included (a get writes its dst). Accumulates race with puts
 * and the target's own accesses as a put does, and with each other only when their type or
 * op differ (MPI makes accumulates of one op atomic per element); an accumulate and a get
 * do not race: the get reads the epoch's start, as a fetch before the accumulate would. */
#include "base/checked.h"
#include "ir/ir.h"

/* ---- epochs ----
 * A fence or access names a communicator (g->oscomm, 0: every rank). The fences of a
 * communicator cut its members' ops, in the order they were added, into its epochs 0..F,
 * F equal on every member; an access belongs to the epochs of its communicator, and its
 * target must be a member. Each (communicator, member) has a slot: its fence count. */

typedef struct {
  int32_t nk;           /* communicators used (k = 0 is communicator 0, always there) */
  int32_t *id;          /* their ids, sorted */
  int64_t *slot;        /* nk+1: the first slot of each one's members */
  int32_t *nf;          /* per communicator: its fences on each member */
  int64_t *fbase;       /* per communicator: where its members' fences start in fid */
  int32_t *fid;         /* fence ops: fid[fbase[k] + member * nf[k] + f] */
  int32_t *kof;         /* per op as written: its communicator's index (fences, accesses) */
  int32_t *epoch;       /* per op as written: its epoch there (fences: the fences before it) */
  int32_t *tmem;        /* per access: its target's member index */
  int64_t *mstart;      /* nprocs+1: each rank's memberships in mk / mslot */
  int32_t *mk;          /* the communicators of each rank */
  int64_t *mslot;       /* and its slot in each */
} epochs;

static void epochs_free(epochs *e) {
  free(e->id); free(e->slot); free(e->nf); free(e->fbase); free(e->fid);
  free(e->kof); free(e->epoch); free(e->tmem); free(e->mstart); free(e->mk); free(e->mslot);
}

static int comm_of(const cdag_graph *g, int64_t i) { return g->oscomm ? g->oscomm[i] : 0; }

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Is op i (of the first n, as written or after expansion) a fence, an access? */
static int fence_at(const cdag_graph *g, int64_t i, int after) {
  return after ? g->os[i] == IR_OS_FENCE : g->kind[i] == IR_FENCE;
}
static int access_at(const cdag_graph *g, int64_t i, int after) {
  return after ? g->os[i] == IR_OS_GET || g->os[i] == IR_OS_PUT || g->os[i] == IR_OS_ACC
               : g->kind[i] == IR_GET || g->kind[i] == IR_PUT || g->kind[i] == IR_ACC;
}

/* The communicators fences and accesses name, sorted, with their slots and each rank's
   memberships. */
static int comms_used(const cdag_graph *g, int64_t n, int after, epochs *e) {
  int64_t m = 1, cap = 1;
  e->id = malloc(sizeof *e->id);
  if (!e->id) return CDAG_NOMEM("epochs");
  e->id[0] = 0;
  for (int64_t i = 0; g->oscomm && i < n; i++) {
    if (!comm_of(g, i) || !(fence_at(g, i, after) || access_at(g, i, after))) continue;
    BASE_GROW(e->id, m, cap, 1, "epochs");
    e->id[m++] = comm_of(g, i);
  }
  qsort(e->id, (size_t)m, sizeof *e->id, cmp_i32);
  int32_t k = 0;
  for (int64_t i = 0; i < m; i++)
    if (!k || e->id[i] != e->id[k - 1]) e->id[k++] = e->id[i];
  e->nk = k;
  e->slot = malloc((size_t)(k + 1) * sizeof *e->slot);
  e->mstart = calloc((size_t)g->nprocs + 1, sizeof *e->mstart);
  if (!e->slot || !e->mstart) return CDAG_NOMEM("epochs");
  e->slot[0] = 0;
  for (int32_t c = 0; c < k; c++) {
    const int32_t *ranks;
    int size = ir_comm_members(g, e->id[c], &ranks);
    if (size < 0) {
      for (int64_t i = 0; i < n; i++)
        if (comm_of(g, i) == e->id[c] && (fence_at(g, i, after) || access_at(g, i, after))) {
          char d[160];
          return cdag__error(CDAG_ERR_ARG, "%s: %s on communicator %d, which the graph never declared",
                             ir_describe(g, (int32_t)i, d, sizeof d), fence_at(g, i, after) ? "a fence" : "an access",
                             e->id[c]);
        }
    }
    e->slot[c + 1] = e->slot[c] + size;
    for (int j = 0; j < size; j++) e->mstart[(c ? ranks[j] : j) + 1]++;
  }
  for (int r = 0; r < g->nprocs; r++) e->mstart[r + 1] += e->mstart[r];
  int64_t nm = e->mstart[g->nprocs];
  int64_t *fill = malloc((size_t)(g->nprocs ? g->nprocs : 1) * sizeof *fill);
  e->mk = malloc((size_t)nm * sizeof *e->mk);
  e->mslot = malloc((size_t)nm * sizeof *e->mslot);
  if (!fill || !e->mk || !e->mslot) {
    free(fill);
    return CDAG_NOMEM("epochs");
  }
  memcpy(fill, e->mstart, (size_t)g->nprocs * sizeof *fill);
  for (int32_t c = 0; c < k; c++) {
    const int32_t *ranks;
    int size = ir_comm_members(g, e->id[c], &ranks);
    for (int j = 0; j < size; j++) {
      int r = c ? ranks[j] : j;
      e->mk[fill[r]] = c;
      e->mslot[fill[r]++] = e->slot[c] + j;
    }
  }
  free(fill);
  return CDAG_OK;
}

/* The index of communicator comm among those used. */
static int32_t k_of(const epochs *e, int comm) {
  const int32_t *p = bsearch(&comm, e->id, (size_t)e->nk, sizeof comm, cmp_i32);
  return (int32_t)(p - e->id);
}

/* cnt[slot]: the fences of each (communicator, member); equal over each one's members. */
static int fence_count_error(const cdag_graph *g, const epochs *e, const int32_t *cnt) {
  for (int32_t c = 0; c < e->nk; c++) {
    const int32_t *ranks;
    int size = ir_comm_members(g, e->id[c], &ranks);
    for (int j = 1; j < size; j++) {
      int64_t a = e->slot[c], b = e->slot[c] + j;
      if (cnt[b] == cnt[a]) continue;
      if (!c)
        return cdag__error(CDAG_ERR_ARG, "rank 0 fences %d times but rank %d %d times (every rank must call "
                           "cdag_fence equally often)", cnt[a], j, cnt[b]);
      return cdag__error(CDAG_ERR_ARG, "on communicator %d, rank %d fences %d times but rank %d %d times (every "
                         "member fences on it equally often)", e->id[c], ranks[0], cnt[a], ranks[j], cnt[b]);
    }
  }
  return CDAG_OK;
}

/* Epochs of the first n ops (as written, or after expansion). */
static int epochs_of(const cdag_graph *g, int64_t n, int after, epochs *e) {
  *e = (epochs){0};
  int rc = comms_used(g, n, after, e);
  if (rc) return rc;
  int64_t slots = e->slot[e->nk];
  int32_t *cnt = calloc((size_t)(slots ? slots : 1), sizeof *cnt);
  e->kof = malloc((size_t)(n ? n : 1) * sizeof *e->kof);
  e->epoch = malloc((size_t)(n ? n : 1) * sizeof *e->epoch);
  e->tmem = malloc((size_t)(n ? n : 1) * sizeof *e->tmem);
  e->nf = malloc((size_t)e->nk * sizeof *e->nf);
  e->fbase = malloc((size_t)(e->nk + 1) * sizeof *e->fbase);
  if (!cnt || !e->kof || !e->epoch || !e->tmem || !e->nf || !e->fbase) rc = CDAG_NOMEM("epochs");
  for (int64_t i = 0; !rc && i < n; i++) {
    int fence = fence_at(g, i, after), acc = access_at(g, i, after);
    e->kof[i] = e->epoch[i] = e->tmem[i] = -1;
    if (!fence && !acc) continue;
    int comm = comm_of(g, i);
    int32_t k = k_of(e, comm), me = ir_comm_member(g, comm, g->rank[i]);
    char d[160];
    if (me < 0)
      rc = cdag__error(CDAG_ERR_ARG, "%s: %s on communicator %d, of which rank %d is not a member",
                       ir_describe(g, (int32_t)i, d, sizeof d), fence ? "a fence" : "an access", comm, g->rank[i]);
    else if (acc && (e->tmem[i] = ir_comm_member(g, comm, g->peer[i])) < 0)
      rc = cdag__error(CDAG_ERR_ARG, "%s: an access to rank %d, which is not a member of communicator %d",
                       ir_describe(g, (int32_t)i, d, sizeof d), g->peer[i], comm);
    if (rc) break;
    e->kof[i] = k;
    e->epoch[i] = cnt[e->slot[k] + me];
    if (fence) cnt[e->slot[k] + me]++;
  }
  if (!rc) rc = fence_count_error(g, e, cnt);
  int64_t nf = 0;
  for (int32_t c = 0; !rc && c < e->nk; c++) {
    e->nf[c] = e->slot[c + 1] > e->slot[c] ? cnt[e->slot[c]] : 0;
    e->fbase[c] = nf;
    nf += (e->slot[c + 1] - e->slot[c]) * (int64_t)e->nf[c];
  }
  if (!rc) e->fbase[e->nk] = nf;
  if (!rc && !(e->fid = malloc((size_t)(nf ? nf : 1) * sizeof *e->fid))) rc = CDAG_NOMEM("epochs");
  for (int64_t i = 0; !rc && i < n; i++)
    if (fence_at(g, i, after)) {
      int32_t k = e->kof[i];
      e->fid[e->fbase[k] + ir_comm_member(g, e->id[k], g->rank[i]) * (int64_t)e->nf[k] + e->epoch[i]] = (int32_t)i;
    }
  free(cnt);
  return rc;
}

/* ---- expansion ---- */

/* The bytes from an access's target address to the end of its last block. */
static uint64_t target_hull(const cdag_graph *g, int64_t i) {
  ir_blocks b = ir_access_blocks(g, i);
  return b.to_last + b.len;
}

/* The target address of one-sided op i: its segment's base plus the offset, bounds checked. */
static int target_addr(const cdag_graph *g, int64_t i, const int32_t *sstart, const int64_t *sidx, uint64_t *a) {
  int t = g->peer[i], seg = g->tag[i];
  const char *what = ir_kind_name(g->kind[i]);
  char d[160];
  if (seg < 0) {
    *a = g->addr2[i];
    return CDAG_OK;
  }
  if (seg >= sstart[t + 1] - sstart[t])
    return cdag__error(CDAG_ERR_ARG, "%s: %s %s rank %d segment %d, which rank %d never registered (it has %d)",
                       ir_describe(g, (int32_t)i, d, sizeof d), what, g->kind[i] == IR_PUT ? "into" : "from", t, seg,
                       t, sstart[t + 1] - sstart[t]);
  int64_t k = sidx[sstart[t] + seg];
  uint64_t off = g->addr2[i], len = g->seg_len[k];
  if (off > len || target_hull(g, i) > len - off)
    return cdag__error(CDAG_ERR_ARG, "%s: %s of %llu bytes at offset %llu of rank %d segment %d, which has %llu bytes",
                       ir_describe(g, (int32_t)i, d, sizeof d), what, (unsigned long long)target_hull(g, i),
                       (unsigned long long)off, t, seg, (unsigned long long)len);
  *a = g->seg_base[k] + off;
  return CDAG_OK;
}

/* Each rank's segments in registration order: sidx[sstart[r] + k] is segment k of rank r. */
static int segment_index(const cdag_graph *g, int32_t **sstart, int64_t **sidx) {
  *sstart = calloc((size_t)g->nprocs + 1, sizeof **sstart);
  *sidx = malloc((size_t)(g->nseg ? g->nseg : 1) * sizeof **sidx);
  int32_t *fill = malloc((size_t)g->nprocs * sizeof *fill);
  if (!*sstart || !*sidx || !fill) {
    free(fill);
    return CDAG_NOMEM("segments");
  }
  for (int64_t k = 0; k < g->nseg; k++) (*sstart)[g->seg_rank[k] + 1]++;
  for (int r = 0; r < g->nprocs; r++) (*sstart)[r + 1] += (*sstart)[r];
  memcpy(fill, *sstart, (size_t)g->nprocs * sizeof *fill);
  for (int64_t k = 0; k < g->nseg; k++) (*sidx)[fill[g->seg_rank[k]]++] = k;
  free(fill);
  return CDAG_OK;
}

/* The program-order key of the target's side of one-sided op i (at an edge of its epoch). */
static int64_t partner_key(const cdag_graph *g, int64_t i, const epochs *e, int64_t n) {
  int32_t k = e->kof[i], E = e->epoch[i], F = e->nf[k];
  const int32_t *fid = e->fid + e->fbase[k] + (int64_t)e->tmem[i] * F;   /* the target's fences */
  if (g->kind[i] == IR_GET) return E == 0 ? 0 : 4 * (int64_t)fid[E - 1] + 3;
  return E == F ? 4 * n + 4 : 4 * (int64_t)fid[E] + 1;
}

static int is_access(int kind) { return kind == IR_GET || kind == IR_PUT || kind == IR_ACC; }

/* The next scratch area of b bytes of target t (*scr: what its accesses took so far). */
static int take_scratch(cdag_graph *g, int t, uint64_t b, uint64_t *scr, uint64_t *at) {
  if (b > IR_ACC_SCRATCH_LEN - *scr)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: one-sided accesses to it move more than 2^48 bytes through its "
                       "scratch", t);
  *at = IR_ACC_SCRATCH + *scr;
  *scr += (b + 63) & ~63ull;
  return ir_add_scratch(g, t, *at, b);
}

/* Appends an op of target t's side of access i, at key. */
static int partner(cdag_graph *g, int64_t i, int64_t key, int kind, int peer, int tag, uint64_t addr, uint64_t addr2,
                   int32_t *id) {
  int rc = ir_append(g, kind, g->peer[i], peer, tag, addr, addr2, g->bytes[i], id);
  if (rc) return rc;
  if (g->oscomm) g->oscomm[*id] = g->oscomm[i];   /* the target's side names the epoch's communicator too */
  g->os[*id] = IR_OS_PARTNER;
  g->os_key[*id] = key;
  if (g->line && g->line[i]) g->line[*id] = g->line[i];
  return CDAG_OK;
}

/* A strided copy on the target between its blocks b at a and contiguous bytes at s (to the
   blocks, or from them). Its tag names the access's kind (IR_TAG_*: a copy has no tag
   otherwise), for readers that take a target's side apart (cdag replay). */
static int partner_copy(cdag_graph *g, int64_t i, int64_t key, const ir_blocks *b, uint64_t a, uint64_t s, int to_blocks) {
  int32_t id;
  int kind = g->kind[i], tag = kind == IR_GET ? IR_TAG_GET : kind == IR_PUT ? IR_TAG_PUT : IR_TAG_ACC;
  ir_blocks k = {.n = b->n, .len = b->len, .from = to_blocks ? b->len : b->to, .to = to_blocks ? b->to : b->len};
  int rc = partner(g, i, key, IR_COPY, 0, tag, to_blocks ? a : s, to_blocks ? s : a, &id);
  return rc ? rc : ir_set_blocks(g, id, k);
}

/* The target's side of access i at key (a: its target address, *scr its scratch used): a put
   is received there, a get sent from there, an accumulate received into scratch and reduced
   into the target's bytes (MPI's accumulate is a remote reduce, which the graph runs at the
   target). Blocks at a stride pass through scratch: a strided copy after the receive; before
   the send; around the reduce (to scratch and back), since a reduce is contiguous. */
static int expand_target(cdag_graph *g, int64_t i, uint64_t a, int64_t key, uint64_t *scr) {
  int kind = g->kind[i], t = g->peer[i], o = g->rank[i], rc = CDAG_OK;
  ir_blocks b = ir_access_blocks(g, i);
  uint64_t s = a, s2 = a;
  int32_t id;
  if (kind == IR_ACC) rc = take_scratch(g, t, g->bytes[i], scr, &s);
  if (!rc && b.n > 1 && kind == IR_ACC) rc = take_scratch(g, t, g->bytes[i], scr, &s2);
  else if (!rc && b.n > 1) rc = take_scratch(g, t, g->bytes[i], scr, &s);
  if (rc) return rc;
  if (kind == IR_GET) {
    if (b.n > 1 && (rc = partner_copy(g, i, key, &b, a, s, 0))) return rc;
    return partner(g, i, key, IR_SEND, o, IR_TAG_GET, s, 0, &id);
  }
  rc = partner(g, i, key, IR_RECV, o, kind == IR_ACC ? IR_TAG_ACC : IR_TAG_PUT, s, 0, &id);
  if (!rc && kind == IR_PUT) return b.n > 1 ? partner_copy(g, i, key, &b, a, s, 1) : CDAG_OK;
  if (!rc && b.n > 1) rc = partner_copy(g, i, key, &b, a, s2, 0);
  if (!rc) rc = partner(g, i, key, IR_REDUCE, g->acc[i] >> 8, g->acc[i] & 0xff, s2, s, &id);
  if (!rc && b.n > 1) rc = partner_copy(g, i, key, &b, a, s2, 1);
  return rc;
}

/* Op i as its origin's side, and the target's side appended (a: the target address). */
static int expand_op(cdag_graph *g, int64_t i, uint64_t a, int64_t key, uint64_t *scr) {
  if (g->kind[i] == IR_FENCE) {
    g->kind[i] = IR_CALC;
    g->bytes[i] = 0;
    g->os[i] = IR_OS_FENCE;
    return CDAG_OK;
  }
  int kind = g->kind[i], rc = expand_target(g, i, a, key, scr);
  if (rc) return rc;
  g->kind[i] = kind == IR_GET ? IR_RECV : IR_SEND;
  g->tag[i] = kind == IR_GET ? IR_TAG_GET : kind == IR_PUT ? IR_TAG_PUT : IR_TAG_ACC;
  g->addr2[i] = a;
  g->os[i] = kind == IR_GET ? IR_OS_GET : kind == IR_PUT ? IR_OS_PUT : IR_OS_ACC;
  return CDAG_OK;
}

/* Ops expansion appends for access i. */
static int64_t partners_of(const cdag_graph *g, int64_t i) {
  int strided = ir_access_blocks(g, i).n > 1;
  return g->kind[i] == IR_ACC ? 2 + 2 * strided : 1 + strided;
}

/* Every one-sided op's target address, checked, before anything changes (an error leaves
   the graph as written). */
static int resolve_all(const cdag_graph *g, int64_t n, uint64_t *ta) {
  int32_t *sstart = NULL;
  int64_t *sidx = NULL;
  int rc = segment_index(g, &sstart, &sidx);
  for (int64_t i = 0; !rc && i < n; i++) {
    if (!is_access(g->kind[i])) continue;
    rc = target_addr(g, i, sstart, sidx, &ta[i]);
    if (!rc && ta[i] + target_hull(g, i) < ta[i])
      rc = cdag__error(CDAG_ERR_ARG, "rank %d: one-sided target range wraps around", g->rank[i]);
  }
  free(sstart);
  free(sidx);
  return rc;
}

/* Does [a, a + len) meet the accumulates' scratch? */
static int meets_acc_scratch(uint64_t a, uint64_t len) {
  return len && a < IR_ACC_SCRATCH + IR_ACC_SCRATCH_LEN && (a + len < a || a + len > IR_ACC_SCRATCH);
}

/* Before expansion, no op of the graph may touch the scratch the target sides receive into:
   a receive there would be taken for expansion's own bytes (its transfer gone from the SST),
   a copy from there would read another access's data. */
static int acc_scratch_free(const cdag_graph *g, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    int k = g->kind[i], compute = ir_is_compute(g, i);
    ir_blocks b = k == IR_CALC ? (compute ? ir_write_blocks(g, i) : ir_one_block(0)) : ir_copy_blocks(g, i);
    uint64_t wlen = b.to_last + b.len;   /* the hull of what it writes (a send's: what it reads) */
    uint64_t rlen = k == IR_COPY ? b.from_last + b.len : k == IR_REDUCE ? g->bytes[i]
                    : compute && g->cr_len[i] != IR_READS_ALL ? g->cr_len[i] : 0;
    int local = k == IR_SEND || k == IR_RECV || k == IR_COPY || k == IR_REDUCE || k == IR_CALC || is_access(k);
    if (!local || !(meets_acc_scratch(g->addr[i], wlen) || (g->addr2 && meets_acc_scratch(g->addr2[i], rlen))))
      continue;
    char d[160];
    return cdag__error(CDAG_ERR_ARG, "%s touches [0x%llx, 0x%llx), where cdag keeps the data of one-sided accesses "
                       "at their targets", ir_describe(g, (int32_t)i, d, sizeof d), (unsigned long long)IR_ACC_SCRATCH,
                       (unsigned long long)(IR_ACC_SCRATCH + IR_ACC_SCRATCH_LEN));
  }
  return CDAG_OK;
}

int ir_onesided_expand(cdag_graph *g) {
  int64_t n = g->nops, m = 0, f = 0;
  if (g->nwritten) return CDAG_OK;   /* expanded before */
  for (int64_t i = 0; i < n; i++) {
    if (is_access(g->kind[i])) m += partners_of(g, i);
    f += g->kind[i] == IR_FENCE;
  }
  if (!m && !f) return CDAG_OK;
  if (g->myrank >= 0)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: a distributed graph's one-sided operations are expanded when "
                       "it is compiled (with every rank's segments), not on one process", g->myrank);
  int rc0 = m ? acc_scratch_free(g, n) : CDAG_OK;
  if (rc0) return rc0;
  epochs e = {0};
  uint64_t *ta = malloc((size_t)(n ? n : 1) * sizeof *ta);
  uint64_t *scr = calloc((size_t)g->nprocs, sizeof *scr);   /* per target: scratch used */
  int rc = ta && scr ? epochs_of(g, n, 0, &e) : CDAG_NOMEM("one-sided");
  if (!rc) rc = resolve_all(g, n, ta);
  if (!rc) rc = ir_reserve(g, m);
  if (!rc && !g->os && !(g->os = calloc((size_t)g->cap, 1))) rc = CDAG_NOMEM("one-sided");
  if (!rc && !(g->os_key = malloc((size_t)(n + m) * sizeof *g->os_key))) rc = CDAG_NOMEM("one-sided");
  for (int64_t i = 0; !rc && i < n; i++) {
    g->os_key[i] = 4 * i + 2;
    if (is_access(g->kind[i]) || g->kind[i] == IR_FENCE)
      rc = expand_op(g, i, ta[i], g->kind[i] == IR_FENCE ? 0 : partner_key(g, i, &e, n), &scr[g->peer[i]]);
  }
  if (!rc) g->nwritten = n;
  epochs_free(&e);
  free(ta);
  free(scr);
  return rc;
}

/* ---- races ---- */

enum { A_GET, A_PUT, A_READ, A_WRITE, A_ACC, NACCESS };   /* remote read, remote write, the target's
                                                            own, remote reduce */

typedef struct {
  int32_t target, k, epoch;   /* k: the communicator's index (epochs) */
  uint64_t lo, hi;
  uint64_t reach;             /* the sweep: the end of the accesses it stands for (absorb) */
  int32_t op;
  int32_t type;
  int32_t chain;              /* the sweep: its chained component (mark_chains), from 1; 0 none */
} access;

typedef struct { int32_t target, k, epoch; } ekey;

/* An entry of the sweep: an access, and the later ones it stands for (absorbs). */
typedef struct entry {
  int64_t next;       /* the next access it stands for, -1 none */
  int64_t count;      /* how many it stands for */
  int64_t ok_count;   /* `count` when ok_op was found after each of them (entry_races) */
  int32_t ok_op;      /* that access of their origin, -1 none */
  /* Of those of the head's origin: */
  int32_t first, last;   /* their ops first and last in program order (read while they are one run) */
  uint8_t mixed;      /* they are of more than one run */
  int32_t maxej, minlj;   /* the latest of their ej, the earliest of their lj (join_order) */
  int32_t min_tin, max_tin, min_tout, max_tout;   /* the bounds of their tree numbers (tree_order) */
  int64_t others;     /* those of other origins (gets, or accumulates of one op) still listed */
} entry;

typedef struct {
  const cdag_graph *g;
  const epochs *e;
  access *a;
  int64_t n, cap;
  int32_t *stamp, *stack;   /* path search */
  int32_t mark;
  ekey *keys; int64_t nkeys;   /* the epochs a one-sided access touches (remote_epochs) */
  int64_t *act, *pos, *nact;   /* per rank, its memberships m (e->mk) whose current epoch is
                                  one of them: act[mstart[r] .. +nact[r]), pos[m] there or -1 */
  struct member { int64_t comp, at; int32_t op, type; } *mem;   /* mark_chains: room for an epoch */
  int64_t *ocomp;              /* per rank: its component being swept, -1 none */
  uint64_t *oend;              /* and that component's end */
  struct entry *ent;           /* the sweep: per access of the epoch, the entry it heads */
  int32_t *stamp2;             /* mark_around: the forward search's marks */
  int32_t *ej, *lj;            /* per op: join_order */
  int32_t *tin, *tout;         /* per op: tree_order */
} race_ctx;

/* Accesses the race check lists, a block each (about 50 bytes and a microsecond apiece): beyond
   2^26, some 3 GB, the graph is refused, naming the op (a get of 2^40 blocks ran for ever).
   The one-sided ops' own blocks are counted first (blocks_bounded), so that such a graph is
   refused at once; what the ops of the ranks' epochs add is counted as it is listed. */
#define RACE_ACCESSES_MAX (1 << 26)
static int too_many_blocks(const cdag_graph *g, const char *which, int32_t op, uint64_t n) {
  char d[160];
  return cdag__error(CDAG_ERR_UNSUPPORTED, "the race check of one-sided accesses takes %s one by one, at most %d in all: "
                     "%s has %llu", which, RACE_ACCESSES_MAX, ir_describe(g, op, d, sizeof d), (unsigned long long)n);
}

static int blocks_bounded(const cdag_graph *g) {
  uint64_t total = 0;
  for (int32_t i = 0; i < g->nwritten; i++) {
    if (!(g->os[i] == IR_OS_GET || g->os[i] == IR_OS_PUT || g->os[i] == IR_OS_ACC)) continue;
    uint64_t n = ir_access_blocks(g, i).n;
    total = sat_add_u64(total, n);
    if (total > RACE_ACCESSES_MAX) return too_many_blocks(g, "their blocks", i, n);
  }
  return CDAG_OK;
}

static int add_access(race_ctx *x, int32_t target, int32_t k, int32_t epoch, uint64_t lo, uint64_t len, int32_t op,
                      int type) {
  if (!len) return CDAG_OK;
  if (x->n == RACE_ACCESSES_MAX) {
    char d[160];
    return cdag__error(CDAG_ERR_UNSUPPORTED, "the race check of one-sided accesses takes their blocks one by one, at most "
                       "%d in all: %s adds more", RACE_ACCESSES_MAX, ir_describe(x->g, op, d, sizeof d));
  }
  BASE_GROW(x->a, x->n, x->cap, 1, "race check");
  x->a[x->n++] = (access){target, k, epoch, lo, lo + len, lo + len, op, type, 0};
  return CDAG_OK;
}

/* An access of op i to its own rank's bytes, in the current epoch of each communicator the
   rank fences on that a one-sided access touches (cnt: the fences so far per slot): an epoch
   without one cannot race, and a rank in many communicators (a window per coarray, epochs
   per pair) would otherwise add its every access once per communicator. */
static int own_access(race_ctx *x, const int32_t *cnt, int32_t i, uint64_t lo, uint64_t len, int type) {
  const epochs *e = x->e;
  int r = x->g->rank[i], rc = CDAG_OK;
  for (int64_t j = e->mstart[r]; !rc && j < e->mstart[r] + x->nact[r]; j++) {
    int64_t m = x->act[j];
    rc = add_access(x, r, e->mk[m], cnt[e->mslot[m]], lo, len, i, type);
  }
  return rc;
}

static int ekey_cmp(const void *pa, const void *pb) {
  const ekey *a = pa, *b = pb;
  if (a->target != b->target) return a->target < b->target ? -1 : 1;
  if (a->k != b->k) return a->k < b->k ? -1 : 1;
  return (a->epoch > b->epoch) - (a->epoch < b->epoch);
}

/* The epochs (target, communicator, epoch) one-sided accesses touch, sorted, once each. */
static int remote_epochs(race_ctx *x) {
  const cdag_graph *g = x->g;
  int64_t cap = 0;
  for (int32_t i = 0; i < g->nwritten; i++) {
    if (!(g->os[i] == IR_OS_GET || g->os[i] == IR_OS_PUT || g->os[i] == IR_OS_ACC)) continue;
    BASE_GROW(x->keys, x->nkeys, cap, 1, "race check");
    x->keys[x->nkeys++] = (ekey){g->peer[i], x->e->kof[i], x->e->epoch[i]};
  }
  if (x->nkeys > 1) qsort(x->keys, (size_t)x->nkeys, sizeof *x->keys, ekey_cmp);
  int64_t n = 0;
  for (int64_t i = 0; i < x->nkeys; i++)
    if (!n || ekey_cmp(&x->keys[n - 1], &x->keys[i])) x->keys[n++] = x->keys[i];
  x->nkeys = n;
  return CDAG_OK;
}

/* Membership m of rank r is now in epoch `epoch` of its communicator: in r's active list or
   not, as a one-sided access touches that epoch. */
static void set_active(race_ctx *x, int r, int64_t m, int32_t epoch) {
  ekey k = {r, x->e->mk[m], epoch};
  int on = x->nkeys && bsearch(&k, x->keys, (size_t)x->nkeys, sizeof k, ekey_cmp) != NULL;
  int64_t base = x->e->mstart[r];
  if (on && x->pos[m] < 0) {
    x->pos[m] = base + x->nact[r];
    x->act[base + x->nact[r]++] = m;
  } else if (!on && x->pos[m] >= 0) {
    int64_t last = x->act[base + --x->nact[r]];
    x->act[x->pos[m]] = last;
    x->pos[last] = x->pos[m];
    x->pos[m] = -1;
  }
}

static int active_init(race_ctx *x) {
  const epochs *e = x->e;
  int64_t n = e->mstart[x->g->nprocs];
  x->act = malloc((size_t)(n ? n : 1) * sizeof *x->act);
  x->pos = malloc((size_t)(n ? n : 1) * sizeof *x->pos);
  x->nact = calloc((size_t)x->g->nprocs, sizeof *x->nact);
  if (!x->act || !x->pos || !x->nact) return CDAG_NOMEM("race check");
  for (int64_t m = 0; m < n; m++) x->pos[m] = -1;
  for (int r = 0; r < x->g->nprocs; r++)
    for (int64_t m = e->mstart[r]; m < e->mstart[r + 1]; m++) set_active(x, r, m, 0);
  return CDAG_OK;
}

/* Rank r fenced in slot `slot` (now in epoch `epoch` there): its membership there follows.
   A rank's memberships are in ascending slots (epochs_of): a binary search, where a scan made
   a rank in 50,000 communicators cost seconds. */
static void fenced(race_ctx *x, int r, int64_t slot, int32_t epoch) {
  int64_t lo = x->e->mstart[r], hi = x->e->mstart[r + 1];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (x->e->mslot[mid] < slot) lo = mid + 1;
    else hi = mid;
  }
  if (lo < x->e->mstart[r + 1] && x->e->mslot[lo] == slot) set_active(x, r, lo, epoch);
}

/* What op i does to memory, as accesses of its own rank (and of its target, one-sided). */
static int accesses_of(race_ctx *x, int32_t i, const int32_t *cnt) {
  const cdag_graph *g = x->g;
  int rc = CDAG_OK;
  uint64_t b = g->bytes[i];
  switch (g->kind[i]) {
  case IR_SEND:
    rc = own_access(x, cnt, i, g->addr[i], b, A_READ);
    break;
  case IR_RECV:
    rc = own_access(x, cnt, i, g->addr[i], b, A_WRITE);
    break;
  case IR_REDUCE:
  case IR_COPY: {   /* a strided copy's blocks, exactly */
    ir_blocks k = ir_copy_blocks(g, i);
    uint64_t room = RACE_ACCESSES_MAX - (uint64_t)x->n, per = 2 * (uint64_t)x->nact[g->rank[i]];
    if (!per) break;   /* no epoch of its rank is accessed: nothing to list */
    if (k.n > room / per) return too_many_blocks(g, "the blocks of ops in epochs", i, k.n);   /* before listing them */
    for (uint64_t j = 0; j < k.n && !rc; j++) {
      rc = own_access(x, cnt, i, g->addr2[i] + ir_block_from(&k, j), k.len, A_READ);
      if (!rc) rc = own_access(x, cnt, i, g->addr[i] + ir_block_to(&k, j), k.len, A_WRITE);
    }
    break;
  }
  default:
    break;
  }
  if (rc || !(g->os[i] == IR_OS_GET || g->os[i] == IR_OS_PUT || g->os[i] == IR_OS_ACC)) return rc;
  ir_blocks k = ir_access_blocks(g, i);   /* the target's blocks, exactly */
  for (uint64_t j = 0; j < k.n && !rc; j++)
    rc = add_access(x, g->peer[i], x->e->kof[i], x->e->epoch[i], g->addr2[i] + ir_block_to(&k, j), k.len, i,
                    g->os[i] == IR_OS_GET ? A_GET : g->os[i] == IR_OS_PUT ? A_PUT : A_ACC);
  return rc;
}

static int access_cmp(const void *pa, const void *pb) {
  const access *a = pa, *b = pb;
  if (a->target != b->target) return a->target < b->target ? -1 : 1;
  if (a->k != b->k) return a->k < b->k ? -1 : 1;
  if (a->epoch != b->epoch) return a->epoch < b->epoch ? -1 : 1;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  return (a->op > b->op) - (a->op < b->op);
}

/* A mark no op's stamp holds: the stamps start again from 0 before the count would wrap
   (two billion searches: a quadratic number of them is possible in a graph of 50,000). */
static int32_t next_mark(race_ctx *x) {
  if (x->mark == INT32_MAX) {
    memset(x->stamp, 0, (size_t)x->g->nops * sizeof *x->stamp);
    memset(x->stamp2, 0, (size_t)x->g->nops * sizeof *x->stamp2);
    x->mark = 0;
  }
  return ++x->mark;
}

/* Joins prove order without a search. finalize.c makes every op depend on its rank's latest
   join before it (a wait, a blocking call's end), so the joins are a chain and op a is before
   op b when a reaches a join no later than the latest join before b: ej[a], the position of
   the earliest join a reaches (a itself if a join), at most lj[b], the position of the
   latest join before b. (A thousand puts each waited for, then a thousand sums: each put is
   before every sum in O(1), where a search walked the chain of waits.) A rank whose
   dependencies do not show that chain gets no proof: ej INT32_MAX, lj -1. O(ops + edges). */
static int is_chain_join(const cdag_graph *g, int32_t op) { return g->join && g->join[op] && g->join[op] != IR_JOIN_CALL; }

static int depends_on(const cdag_graph *g, int32_t op, int32_t before) {
  for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1]; k++)
    if (g->pred[k] == before) return 1;
  return 0;
}

static void join_order_rank(race_ctx *x, int r) {
  const cdag_graph *g = x->g;
  const int32_t *ops = g->rank_ops + g->rank_start[r];
  int32_t n = g->rank_start[r + 1] - g->rank_start[r], last = -1;
  int chain = 1;
  for (int32_t i = 0; i < n && chain; i++) {
    x->lj[ops[i]] = last;
    chain = last < 0 || depends_on(g, ops[i], ops[last]);
    if (is_chain_join(g, ops[i])) last = i;
  }
  for (int32_t i = n - 1; i >= 0; i--) {
    int32_t op = ops[i], e = is_chain_join(g, op) ? i : INT32_MAX;
    for (int32_t k = g->succ_start[op]; e > i && k < g->succ_start[op + 1]; k++) {
      int32_t s = g->succ[k];
      if (g->rank[s] == r && g->pos[s] > i && x->ej[s] < e) e = x->ej[s];
    }
    x->ej[op] = chain ? e : INT32_MAX;
    if (!chain) x->lj[op] = -1;
  }
}

static int join_order(race_ctx *x) {
  x->ej = malloc((size_t)x->g->nops * sizeof *x->ej);
  x->lj = malloc((size_t)x->g->nops * sizeof *x->lj);
  if (!x->ej || !x->lj) return CDAG_NOMEM("race check");
  for (int r = 0; r < x->g->nprocs; r++) join_order_rank(x, r);
  if (x->g->race_pairs)   /* the tests' oracle proves order by searching alone */
    for (int64_t i = 0; i < x->g->nops; i++) x->ej[i] = INT32_MAX, x->lj[i] = -1;
  return CDAG_OK;
}

/* Where no join orders two ops (a graph ordered by `requires` alone), a tree may: each op's
   parent is its latest direct predecessor of its rank, so its ancestors in that forest are
   before it (n puts each requiring the one before, then n sums each requiring the last put:
   every put is an ancestor of every sum). One depth-first numbering (tin when entered, tout
   when left) answers "is a an ancestor of b" in O(1). O(ops + edges); the tests' pair-by-pair
   oracle gets no tree (tin = tout = -1 proves nothing but a == b, which no caller asks). */
static int32_t latest_pred(const cdag_graph *g, int32_t v) {
  int32_t best = -1;
  for (int32_t k = g->pred_start[v]; k < g->pred_start[v + 1]; k++) {
    int32_t p = g->pred[k];
    if (g->rank[p] == g->rank[v] && g->pos[p] < g->pos[v] && (best < 0 || g->pos[p] > g->pos[best])) best = p;
  }
  return best;
}

static void number_tree(race_ctx *x, const int32_t *start, const int32_t *child, int32_t *next, int32_t *stack, int32_t root,
                        int32_t *t) {
  int32_t top = 0;
  x->tin[root] = (*t)++;
  next[root] = start[root];
  stack[top++] = root;
  while (top > 0) {
    int32_t v = stack[top - 1];
    if (next[v] == start[v + 1]) {
      x->tout[v] = (*t)++;
      top--;
      continue;
    }
    int32_t c = child[next[v]++];
    x->tin[c] = (*t)++;
    next[c] = start[c];
    stack[top++] = c;
  }
}

static int tree_order(race_ctx *x) {
  const cdag_graph *g = x->g;
  size_t n = (size_t)g->nops;
  int32_t *parent = malloc(n * sizeof *parent), *start = calloc(n + 2, sizeof *start);
  int32_t *child = malloc(n * sizeof *child), *next = malloc(n * sizeof *next), *stack = malloc(n * sizeof *stack);
  x->tin = malloc(n * sizeof *x->tin);
  x->tout = malloc(n * sizeof *x->tout);
  int rc = parent && start && child && next && stack && x->tin && x->tout ? CDAG_OK : CDAG_NOMEM("race check");
  for (size_t v = 0; !rc && v < n; v++) {
    parent[v] = latest_pred(g, (int32_t)v);
    if (parent[v] >= 0) start[parent[v] + 2]++;
  }
  for (size_t v = 0; !rc && v < n; v++) start[v + 2] += start[v + 1];
  for (size_t v = 0; !rc && v < n; v++)
    if (parent[v] >= 0) child[start[parent[v] + 1]++] = (int32_t)v;   /* start[p + 1] runs over p's children */
  int32_t t = 0, none = g->race_pairs || n > INT32_MAX / 2;   /* the oracle; numbers past int32 */
  for (size_t v = 0; !rc && v < n; v++)
    if (none) x->tin[v] = x->tout[v] = -1;
    else if (parent[v] < 0) number_tree(x, start, child, next, stack, (int32_t)v, &t);
  free(parent); free(start); free(child); free(next); free(stack);
  return rc;
}

static int tree_before(const race_ctx *x, int32_t a, int32_t b) { return x->tin[a] < x->tin[b] && x->tout[b] < x->tout[a]; }

/* Do joins or the tree prove op a (of b's rank, earlier) before b, or the tree from one of
   a's first successors (a computation requiring many sums, then puts each requiring the one
   before and it: each sum's one successor is above every put)? */
enum { HOP_SUCCS = 8 };
static int proved_before(const race_ctx *x, int32_t a, int32_t b) {
  if (x->ej[a] <= x->lj[b] || tree_before(x, a, b)) return 1;
  const cdag_graph *g = x->g;
  for (int32_t k = g->succ_start[a]; k < g->succ_start[a + 1] && k < g->succ_start[a] + HOP_SUCCS; k++)
    if (g->succ[k] == b || tree_before(x, g->succ[k], b)) return 1;
  return 0;
}

/* Is there a dependency path between ops a and b of one rank? Proved by joins or the tree
   first, else searched back from the later one over ops no earlier than the other. */
static int ordered(race_ctx *x, int32_t a, int32_t b) {
  const cdag_graph *g = x->g;
  if (g->rank[a] != g->rank[b]) return 0;
  if (g->pos[a] > g->pos[b]) {
    int32_t t = a;
    a = b;
    b = t;
  }
  if (proved_before(x, a, b)) return 1;
  int32_t n = 0, mark = next_mark(x);
  x->stack[n++] = b;
  x->stamp[b] = mark;
  while (n > 0) {
    int32_t op = x->stack[--n];
    for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1]; k++) {
      int32_t p = g->pred[k];
      if (p == a) return 1;
      if (x->stamp[p] == mark || g->pos[p] < g->pos[a]) continue;
      x->stamp[p] = mark;
      x->stack[n++] = p;
    }
  }
  return 0;
}

static int is_remote(int type) { return type == A_GET || type == A_PUT || type == A_ACC; }

/* Do accesses p (earlier in the sweep) and q race? (Only pairs rivals() names meet here.) */
static int races(race_ctx *x, const access *p, const access *q) {
  int rp = is_remote(p->type), rq = is_remote(q->type);
  if (p->type == A_ACC && q->type == A_ACC && x->g->acc[p->op] == x->g->acc[q->op]) return 0;
  int writes = p->type == A_PUT || q->type == A_PUT || p->type == A_ACC || q->type == A_ACC;
  if (!writes) {   /* no put: a get against the target's write */
    return (p->type == A_GET && q->type == A_WRITE) || (p->type == A_WRITE && q->type == A_GET);
  }
  if (!rp || !rq) return 1;   /* a put or accumulate against the target's own access */
  const cdag_graph *g = x->g;
  if (g->rank[p->op] != g->rank[q->op]) return 1;
  return p->op != q->op && !(p->chain && p->chain == q->chain) && !ordered(x, p->op, q->op);
}

/* The bytes [lo, hi) of rank as the user wrote them: offsets in a segment when one holds
   them (the k-th of the rank is its segment k), else addresses. Error path only: O(segments). */
static void where(const cdag_graph *g, int rank, uint64_t lo, uint64_t hi, char *buf, size_t n) {
  for (int64_t i = 0, k = 0; i < g->nseg; i++) {
    if (g->seg_rank[i] != rank) continue;
    if (lo >= g->seg_base[i] && hi <= g->seg_base[i] + g->seg_len[i]) {
      snprintf(buf, n, "segment %lld offsets [%llu, %llu) (addresses [0x%llx, 0x%llx))", (long long)k,
               (unsigned long long)(lo - g->seg_base[i]), (unsigned long long)(hi - g->seg_base[i]),
               (unsigned long long)lo, (unsigned long long)hi);
      return;
    }
    k++;
  }
  snprintf(buf, n, "bytes [0x%llx, 0x%llx)", (unsigned long long)lo, (unsigned long long)hi);
}

static int race_error(race_ctx *x, const access *p, const access *q) {
  static const char *const what[] = {"gets", "puts", "reads", "writes", "accumulates into"};
  char d1[160], d2[160], at[160];
  uint64_t lo = p->lo > q->lo ? p->lo : q->lo, hi = p->hi < q->hi ? p->hi : q->hi;
  where(x->g, p->target, lo, hi, at, sizeof at);
  char comm[48] = "";
  if (x->e->id[p->k]) snprintf(comm, sizeof comm, " of communicator %d", x->e->id[p->k]);
  return cdag__error(CDAG_ERR_RACE, "race in epoch %d%s on rank %d %s: %s %s them and %s %s them, "
                     "with no order between the two", p->epoch, comm, p->target, at,
                     ir_describe(x->g, p->op, d1, sizeof d1), what[p->type],
                     ir_describe(x->g, q->op, d2, sizeof d2), what[q->type]);
}

/* Which kinds of earlier access can race with one of type t (bit per type). */
static unsigned rivals(int t) {
  switch (t) {
  case A_GET: return 1u << A_PUT | 1u << A_WRITE;
  case A_PUT: return (1u << NACCESS) - 1;
  case A_READ: return 1u << A_PUT | 1u << A_ACC;
  case A_WRITE: return 1u << A_GET | 1u << A_PUT | 1u << A_ACC;
  default: return 1u << A_PUT | 1u << A_READ | 1u << A_WRITE | 1u << A_ACC;
  }
}

/* Would one origin's accesses p and q race if nothing ordered them: they overlap, and their
   kinds are rivals (two accumulates with one op are not)? As races() decides. */
static int conflict(const cdag_graph *g, const access *p, const access *q) {
  if (p->lo >= q->hi || q->lo >= p->hi || !(rivals(q->type) >> p->type & 1)) return 0;
  return !(p->type == A_ACC && q->type == A_ACC && g->acc[p->op] == g->acc[q->op]);
}

/* By component, kind, then program order. */
static int cmp_member(const void *pa, const void *pb, void *ctx) {
  const cdag_graph *g = ctx;
  const struct member *a = pa, *b = pb;
  if (a->comp != b->comp) return a->comp < b->comp ? -1 : 1;
  if (a->type != b->type) return a->type < b->type ? -1 : 1;
  return (g->pos[a->op] > g->pos[b->op]) - (g->pos[a->op] < g->pos[b->op]);
}

/* An origin's remote accesses of the epoch a[0..n) (sorted by lo) fall into components of
   overlapping ranges: only two of one component can race. A component's accesses of one kind
   (get, put, accumulate), in program order, fall into runs (chain = the run's number, from
   1), each after the one before it (one path search per pair of neighbours, over the ops
   between them): two of a run never race, so the sweep may let one stand for both (one
   origin's ordered replacing accumulates to one word: MPICH's rma/atomic_get_*). Runs are per
   kind, so a get between two ordered puts does not cut theirs (a put and a get in turn took
   the sweep a path search per pair of puts, cubic). Two neighbours that are not ordered and
   conflict are a race, said here: the sweep would compare each access of the component with
   every earlier one, a path search each (a single missing wait among 2,000 ordered puts took
   0.7 s, cubic). O(n log n) and the searches. */
static int mark_chains(race_ctx *x, access *a, int64_t n) {
  const cdag_graph *g = x->g;
  int64_t m = 0;
  for (int64_t k = 0; k < n; k++) {   /* each access's component */
    a[k].chain = 0;
    if (!is_remote(a[k].type)) continue;
    int r = g->rank[a[k].op];
    if (x->ocomp[r] < 0 || x->oend[r] <= a[k].lo) x->ocomp[r] = k, x->oend[r] = a[k].hi;
    else if (x->oend[r] < a[k].hi) x->oend[r] = a[k].hi;
    x->mem[m++] = (struct member){x->ocomp[r], k, a[k].op, a[k].type};
  }
  for (int64_t k = 0; k < n; k++)
    if (is_remote(a[k].type)) x->ocomp[g->rank[a[k].op]] = -1;
  if (m > 1) base_sort_r(x->mem, m, sizeof *x->mem, cmp_member, (void *)g);
  int32_t run = 0;
  for (int64_t k = 0; k < m; k++) {
    const struct member *p = k ? &x->mem[k - 1] : NULL, *q = &x->mem[k];
    if (!p || p->comp != q->comp || p->type != q->type || (p->op != q->op && !ordered(x, p->op, q->op))) {
      if (p && p->comp == q->comp && p->type == q->type && conflict(x->g, &a[p->at], &a[q->at]))
        return race_error(x, &a[p->at], &a[q->at]);
      run++;
    }
    a[q->at].chain = run;
  }
  return CDAG_OK;
}

/* Can q be absorbed into the earlier entry p (whose accesses reach p->reach): of one kind (and
   op), overlapping, and either of one run (anything that races with q then races with p the
   same way), or the target's own (chain 0: they race by kind and bytes alone), or gets or
   accumulates (of one op), of any origins, ordered or not: they never race with each other.
   An access of another origin than theirs races with all of them alike; one of their own
   origin's is checked against each of its own (entry_races). So a thousand origins' sums to
   one word are one entry, which each later access meets once, not a thousand times. */
static int absorbs(const cdag_graph *g, const access *p, const access *q) {
  if (p->type != q->type || p->reach <= q->lo || (p->type == A_ACC && g->acc[p->op] != g->acc[q->op])) return 0;
  return p->chain == q->chain || p->type == A_ACC || p->type == A_GET;
}

/* Marks what orders op q among its rank's ops in program positions [lo, hi]: those it
   depends on (stamp) and those that depend on it (stamp2), one search each way (a
   dependency goes forward in program order, so a path back from q stays above lo, one
   forward below hi). */
static void mark_around(race_ctx *x, int32_t q, int32_t lo, int32_t hi) {
  const cdag_graph *g = x->g;
  int32_t mark = next_mark(x);
  for (int dir = 0; dir < 2; dir++) {
    const int32_t *start = dir ? g->succ_start : g->pred_start, *adj = dir ? g->succ : g->pred;
    int32_t *stamp = dir ? x->stamp2 : x->stamp, n = 0;
    x->stack[n++] = q;
    while (n > 0) {
      int32_t op = x->stack[--n];
      for (int32_t k = start[op]; k < start[op + 1]; k++) {
        int32_t p = adj[k];
        if (stamp[p] == mark || (dir ? g->pos[p] > hi : g->pos[p] < lo)) continue;
        stamp[p] = mark;
        x->stack[n++] = p;
      }
    }
  }
}

/* The access of entry p's (a[pi]'s) that races with q, or NULL. One test stands for all of an
   entry's accesses, but for their own origin's access of another run, which may be ordered
   with some of them and not others: those q overlaps are each checked, with one search each
   way from q for all of them (n accumulates, then a put after a wait for all: one search,
   where a search per accumulate was quadratic). Accesses of one run are a chain: q after
   the last is after each (n ordered puts, then n gets: one short search each). An access
   found after all of them is kept: a later one after it is after them too (n sums, then n
   ordered puts: one search each from the put before, where a search back to the sums each
   was quadratic). */
static const access *entry_races(race_ctx *x, const access *a, entry *ent, int64_t pi, const access *q) {
  const cdag_graph *g = x->g;
  const access *p = &a[pi];
  entry *e = &ent[pi];
  /* of their origin (of one of them: each checked, and another's is never found ordered), and
     not of their one run */
  int own = e->next >= 0 && is_remote(p->type) && is_remote(q->type) &&
            (e->others || (g->rank[p->op] == g->rank[q->op] && (e->mixed || p->chain != q->chain)));
  if (!own) {
    if (!races(x, p, q)) return NULL;
    for (int64_t i = pi; i >= 0; i = ent[i].next)   /* name one it overlaps */
      if (a[i].hi > q->lo) return &a[i];
    return p;
  }
  if (p->type == A_ACC && q->type == A_ACC && g->acc[q->op] == g->acc[p->op]) return NULL;   /* one op: no order */
  if (!e->others && g->rank[p->op] == g->rank[q->op] && (e->maxej <= x->lj[q->op] || x->ej[q->op] <= e->minlj))
    return NULL;   /* joins show q after each of them, or before each */
  if (!e->others && ((x->tin[q->op] < e->min_tin && e->max_tout < x->tout[q->op]) ||
                     (e->max_tin < x->tin[q->op] && x->tout[q->op] < e->min_tout)))
    return NULL;   /* the tree shows each of them below q, or above it */
  int32_t qat = g->pos[q->op];
  if (!e->others && !e->mixed && ((qat > g->pos[e->last] && ordered(x, e->last, q->op)) ||
                    (qat < g->pos[e->first] && ordered(x, q->op, e->first))))
    return NULL;   /* one run is a chain: after its last, after each of them */
  if (e->ok_op >= 0 && e->ok_count == e->count && g->pos[e->ok_op] < qat && ordered(x, e->ok_op, q->op)) {
    e->ok_op = q->op;   /* what q overlaps, the kept access overlapped (the sweep goes up in lo) */
    return NULL;
  }
  int32_t lo = INT32_MAX, hi = -1, latest = -1;
  for (int64_t i = pi, prev = -1; i >= 0; prev = i, i = ent[i].next) {
    while (i != pi && a[i].hi <= q->lo) {   /* below q: no later access meets it (the sweep goes up in lo) */
      e->others -= g->rank[a[i].op] != g->rank[p->op];
      i = ent[prev].next = ent[i].next;
      if (i < 0) break;
    }
    if (i < 0) break;
    if (a[i].hi <= q->lo || a[i].op == q->op) continue;
    int32_t at = g->pos[a[i].op];
    if (g->rank[a[i].op] != g->rank[q->op]) return &a[i];   /* another origin's: no order */
    if (at > latest) latest = at;
    if (at < qat ? proved_before(x, a[i].op, q->op) : proved_before(x, q->op, a[i].op)) continue;
    if (at < lo) lo = at;
    if (at > hi) hi = at;
  }
  if (hi >= 0) mark_around(x, q->op, lo, hi);
  for (int64_t i = pi; hi >= 0 && i >= 0; i = ent[i].next) {
    if (a[i].hi <= q->lo || a[i].op == q->op) continue;
    int32_t at = g->pos[a[i].op];
    if (at < qat ? proved_before(x, a[i].op, q->op) : proved_before(x, q->op, a[i].op)) continue;
    if ((at < qat ? x->stamp : x->stamp2)[a[i].op] != x->mark) return &a[i];
  }
  if (latest >= 0 && latest < qat) e->ok_op = q->op, e->ok_count = e->count;
  return NULL;
}

/* One target's epoch, a[0..n) sorted by lo: each access against the earlier ones of the
   kinds it can race with that still overlap it (one active list per kind, pruned as the
   sweep passes their reach). A list holds only accesses overlapping the current one, so a
   scan stops at a race, except for accesses that cannot race with each other: a run of one
   origin's overlapping accesses of one kind, an origin's gets, its accumulates of one op,
   and the target's own accesses of one kind, are one entry each (absorbs; ent lists what an
   entry stands for), so a thousand ordered puts to one word cost a thousand steps, not a
   million, and so do a thousand unordered sums or gets. */
static int sweep(race_ctx *x, access *a, int64_t n, int64_t **active) {
  int64_t na[NACCESS] = {0};
  entry *ent = x->ent;
  int rc = mark_chains(x, a, n);
  if (rc) return rc;
  for (int64_t k = 0; k < n; k++) {
    int64_t into = -1;
    int32_t op = a[k].op;
    ent[k] = (entry){.next = -1, .count = 1, .ok_op = -1, .first = op, .last = op, .maxej = x->ej[op], .minlj = x->lj[op],
                     .min_tin = x->tin[op], .max_tin = x->tin[op], .min_tout = x->tout[op], .max_tout = x->tout[op]};
    for (int t = 0; t < NACCESS; t++) {
      if (!(rivals(a[k].type) >> t & 1) && t != a[k].type) continue;
      for (int64_t j = 0; j < na[t];) {
        access *p = &a[active[t][j]];
        if (p->reach <= a[k].lo) {
          active[t][j] = active[t][--na[t]];
          continue;
        }
        if (into < 0 && absorbs(x->g, p, &a[k])) into = active[t][j];
        const access *c = rivals(a[k].type) >> t & 1 ? entry_races(x, a, ent, active[t][j], &a[k]) : NULL;
        if (c) return race_error(x, c, &a[k]);
        j++;
      }
    }
    if (into >= 0) {
      entry *e = &ent[into];
      if (a[into].reach < a[k].hi) a[into].reach = a[k].hi;
      e->count++;
      ent[k].next = e->next;
      e->next = k;
      if (x->g->rank[op] != x->g->rank[a[into].op]) {
        e->others++;
        continue;
      }
      e->mixed |= a[k].chain != a[into].chain;
      if (x->ej[op] > e->maxej) e->maxej = x->ej[op];
      if (x->lj[op] < e->minlj) e->minlj = x->lj[op];
      if (x->tin[op] < e->min_tin) e->min_tin = x->tin[op];
      if (x->tin[op] > e->max_tin) e->max_tin = x->tin[op];
      if (x->tout[op] < e->min_tout) e->min_tout = x->tout[op];
      if (x->tout[op] > e->max_tout) e->max_tout = x->tout[op];
      if (x->g->pos[op] < x->g->pos[e->first]) e->first = op;
      if (x->g->pos[op] > x->g->pos[e->last]) e->last = op;
    } else {
      active[a[k].type][na[a[k].type]++] = k;
    }
  }
  return CDAG_OK;
}

/* The rules pair by pair, without the sweep's entries (cdag_graph.race_pairs: the tests'
   oracle for the sweep). O(n^2) per epoch. */
static int pairs(race_ctx *x, access *a, int64_t n) {
  for (int64_t k = 0; k < n; k++)
    for (int64_t j = 0; j < k; j++)
      if (a[j].hi > a[k].lo && (rivals(a[k].type) >> a[j].type & 1) && races(x, &a[j], &a[k]))
        return race_error(x, &a[j], &a[k]);
  return CDAG_OK;
}

/* The end of the target's epoch that starts at access s (sorted). */
static int64_t epoch_end(const race_ctx *x, int64_t s) {
  int64_t t = s + 1;
  while (t < x->n && x->a[t].target == x->a[s].target && x->a[t].k == x->a[s].k && x->a[t].epoch == x->a[s].epoch) t++;
  return t;
}

int ir_onesided_races(const cdag_graph *g) {
  if (!g->os) return CDAG_OK;
  epochs e = {0};
  race_ctx x = {.g = g, .e = &e};
  int64_t *active[NACCESS] = {NULL};
  int32_t *cnt = NULL;
  int rc = blocks_bounded(g);
  if (!rc) rc = epochs_of(g, g->nwritten, 1, &e);
  if (!rc && !(cnt = calloc((size_t)(e.slot[e.nk] ? e.slot[e.nk] : 1), sizeof *cnt))) rc = CDAG_NOMEM("race check");
  if (!rc) rc = remote_epochs(&x);
  if (!rc) rc = active_init(&x);
  for (int32_t i = 0; !rc && i < g->nwritten; i++) {
    rc = accesses_of(&x, i, cnt);
    if (!fence_at(g, i, 1)) continue;
    int64_t slot = e.slot[e.kof[i]] + ir_comm_member(g, e.id[e.kof[i]], g->rank[i]);
    fenced(&x, g->rank[i], slot, ++cnt[slot]);
  }
  free(cnt);
  free(x.keys); free(x.act); free(x.pos); free(x.nact);
  if (!rc && x.n > 1) qsort(x.a, (size_t)x.n, sizeof *x.a, access_cmp);
  int64_t most = 1;   /* the sweep's arrays hold one epoch of one target: the longest */
  for (int64_t s = 0, t; s < x.n; s = t) {
    t = epoch_end(&x, s);
    if (t - s > most) most = t - s;
  }
  if (!rc) {
    x.stamp = calloc((size_t)g->nops, sizeof *x.stamp);
    x.stamp2 = calloc((size_t)g->nops, sizeof *x.stamp2);
    x.stack = malloc((size_t)g->nops * sizeof *x.stack);
    x.ent = malloc((size_t)most * sizeof *x.ent);
    for (int t = 0; t < NACCESS; t++)
      if (!(active[t] = malloc((size_t)most * sizeof *active[t]))) rc = CDAG_NOMEM("race check");
    x.mem = malloc((size_t)most * sizeof *x.mem);
    x.ocomp = malloc((size_t)g->nprocs * sizeof *x.ocomp);
    x.oend = malloc((size_t)g->nprocs * sizeof *x.oend);
    if (!x.stamp || !x.stamp2 || !x.stack || !x.ent || !x.mem || !x.ocomp || !x.oend) rc = CDAG_NOMEM("race check");
    for (int r = 0; !rc && r < g->nprocs; r++) x.ocomp[r] = -1;
    if (!rc) rc = join_order(&x);
    if (!rc) rc = tree_order(&x);
  }
  for (int64_t s = 0, t; !rc && s < x.n; s = t) {
    t = epoch_end(&x, s);
    int any = 0;   /* only epochs with a one-sided access can race */
    for (int64_t k = s; k < t && !any; k++) any = is_remote(x.a[k].type);
    if (any) rc = g->race_pairs ? pairs(&x, x.a + s, t - s) : sweep(&x, x.a + s, t - s, active);
  }
  epochs_free(&e);
  free(x.a);
  free(x.stamp), free(x.stamp2);
  free(x.stack), free(x.ent);
  free(x.mem), free(x.ocomp), free(x.oend);
  free(x.ej), free(x.lj), free(x.tin), free(x.tout);
  for (int t = 0; t < NACCESS; t++) free(active[t]);
  return rc;
}

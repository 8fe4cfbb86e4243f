/* cdag — src/model/lower.c: a plan expanded back into point-to-point messages (lower.h).
 *
 * Each part of the plan becomes sends, receives, copies and local reduces added to a new
 * global graph, part after part. Reads of origins happen where the part is emitted; every
 * write of a final value is a copy from staging memory collected in `late` and emitted
 * after everything else (but a residual piece that travels alone where no snapshot says a
 * part still reads the origin: it is received in place, as the runtime receives it), so program order puts all origin reads first (the plan reads
 * origins only, but for a replication, which sends from the staging memory of the result
 * it replicates) and memory-conflict dependencies order the rounds of each algorithm. Each
 * algorithm emits its ops so that every rank's own ops come in the order the algorithm runs
 * them (a rank receives a block before it forwards it). */
#include <Judy.h>
#include <stdlib.h>
#include <string.h>

#include "base/imap.h"
#include "circulant/circulant.h"
#include "model/lower.h"

/* MPICH's allgather(v) uses Bruck's algorithm (or recursive doubling) below this many bytes
   in all (MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE), the ring above. */
#define LOWER_ALLGATHER_SHORT 81920

typedef struct {
  int32_t rank;
  uint64_t src, dst, len;
  uint64_t n, to;        /* blocks (0 or 1: one), and where each next one is written: a residual
                            strided transfer's unpack from contiguous staging */
} lw_copy;

typedef struct {
  const cdag_plan *p;
  cdag_graph *g;
  uint64_t *next;        /* per rank: next free staging address */
  lw_copy *late;         /* final writes, emitted last */
  int64_t nlate, clate;
  int tag;               /* tag of the part being emitted */
  kern_model model;
  kern_policy policy;    /* where the plan has no choices */
  int64_t *late_at;      /* per collective of the stage being lowered: its final writes are
                            late[late_at[c] .. late_at[c + 1]) */
  int rc;                /* first error inside a callback */
  uint64_t base;         /* first staging address */
  int full;              /* staging ran past the end of the address space */
  int any_stride;        /* runs at any stride (a graph only modelled: exec_lower_plan_modelled) */
  uint64_t *run_src, *run_dst;   /* with any_stride: the blocks of the open run */
  int64_t run_cap;
} lw;

/* ---- emitting ---- */

static uint64_t stage(lw *w, int rank, uint64_t bytes) {
  uint64_t a = w->next[rank];
  if (bytes > UINT64_MAX - 63 || ((bytes + 63) & ~(uint64_t)63) > UINT64_MAX - a) {
    w->full = 1;   /* reported once lowering ends; meanwhile a harmless address */
    return w->base;
  }
  w->next[rank] += (bytes + 63) & ~(uint64_t)63;
  return a;
}

/* Every send is added right before its receive (here, in coll_barrier and in lower_syncs):
   exec_lower_pairs relies on it. */
static int msg(lw *w, int from, uint64_t saddr, int to, uint64_t raddr, uint64_t bytes) {
  if (bytes == 0) return CDAG_OK;
  int rc = ir_add_send(w->g, from, saddr, bytes, to, w->tag, NULL);
  return rc ? rc : ir_add_recv(w->g, to, raddr, bytes, from, w->tag, NULL);
}

static int copy(lw *w, int rank, uint64_t src, uint64_t dst, uint64_t len) {
  return len ? ir_add_copy(w->g, rank, src, dst, len, NULL) : CDAG_OK;
}

/* Copies emitted back to back that form a run (one length, one stride on each side, at least
   the length) become one strided copy, as the runtime moves a message's regular pieces (an
   hvector): a datatype's thousands of blocks are one op, not one each. The cost is the same
   (bytes times the copy rate) and the dependencies those of its blocks. */
typedef struct {
  int32_t rank;
  uint64_t src, dst, len, n, from, to;   /* n blocks; n 0: no run open */
  int origins;           /* with any_stride, the sources are origins, which may repeat: */
  base_imap read;        /* the run's source blocks, start -> length, once `mapped` */
  int mapped;            /* read holds every block: built when a piece first falls inside the
                            sources' hull (one outside reads nothing the run read; runs that
                            ascend or descend never need it) */
  int listed;            /* with any_stride: 1 once the blocks are in w's arrays; 0 while they
                            lie at one stride on each side (sstep, dstep from the first) */
  uint64_t sstep, dstep;
} lw_run;

/* n blocks of len bytes at strides from and to (at least len) as one copy. */
static int strided_copy(lw *w, int32_t rank, uint64_t src, uint64_t dst, uint64_t n, uint64_t len, uint64_t from,
                        uint64_t to) {
  int32_t id;
  int rc = ir_add_copy(w->g, rank, src, dst, n * len, &id);
  if (rc == CDAG_OK && n > 1) rc = ir_set_blocks(w->g, id, (ir_blocks){.n = n, .len = len, .from = from, .to = to});
  return rc;
}

/* With any_stride (a graph only modelled), blocks of one length on one rank emitted back to
   back are one copy at any addresses: a listed copy (ir_add_copy_listed) where they keep no one
   stride. The elements of a struct datatype then pack as one op, not one op each (MPICH's
   pt2pt/sendself at 2 processes lowered to 806,689 ops). Blocks a listed copy cannot take
   (one origin packed twice: sources that overlap) are split in halves until each part can. */
static int listed_range(lw *w, int32_t rank, uint64_t len, const uint64_t *s, const uint64_t *d, uint64_t n) {
  if (n == 1) return ir_add_copy(w->g, rank, s[0], d[0], len, NULL);
  uint64_t sb = UINT64_MAX, db = UINT64_MAX, *so = w->run_src + w->run_cap, *dso = w->run_dst + w->run_cap;
  for (uint64_t i = 0; i < n; i++) {
    if (s[i] < sb) sb = s[i];
    if (d[i] < db) db = d[i];
  }
  for (uint64_t i = 0; i < n; i++) so[i] = s[i] - sb, dso[i] = d[i] - db;
  int rc = ir_add_copy_listed(w->g, rank, sb, db, n, len, so, 0, dso, 0, NULL);
  if (rc != CDAG_ERR_ARG) return rc;
  cdag__error_clear();
  rc = listed_range(w, rank, len, s, d, n / 2);
  return rc ? rc : listed_range(w, rank, len, s + n / 2, d + n / 2, n - n / 2);
}

static int listed_flush(lw *w, lw_run *r) {
  uint64_t n = r->n;
  int listed = r->listed;
  r->n = 0, r->listed = 0, r->mapped = 0;
  base_imap_clear(&r->read);
  if (listed) return listed_range(w, r->rank, r->len, w->run_src, w->run_dst, n);
  return strided_copy(w, r->rank, r->src, r->dst, n, r->len, r->sstep, r->dstep);
}

/* Room for n blocks in the open run (each array: the blocks, then as many offsets). */
static int listed_room(lw *w, uint64_t n) {
  if ((int64_t)n <= w->run_cap) return CDAG_OK;
  int64_t cap = w->run_cap ? w->run_cap : 1024;
  while (cap < (int64_t)n) cap *= 2;
  uint64_t *a = realloc(w->run_src, 2 * (size_t)cap * sizeof *a);
  if (a) w->run_src = a;
  uint64_t *b = a ? realloc(w->run_dst, 2 * (size_t)cap * sizeof *b) : NULL;
  if (!b) return CDAG_NOMEM("lowering");
  w->run_dst = b, w->run_cap = cap;
  return CDAG_OK;
}

/* A run whose blocks lay at one stride, listed: its blocks in w's arrays (its first at the
   hull's start). The implicit form costs a column nothing per block; most runs of a
   datatype's pieces are listed after a few. */
static int listed_materialize(lw *w, lw_run *r) {
  int rc = r->listed ? CDAG_OK : listed_room(w, r->n);
  for (uint64_t i = 0; rc == CDAG_OK && !r->listed && i < r->n; i++)
    w->run_src[i] = r->src + i * r->sstep, w->run_dst[i] = r->dst + i * r->dstep;
  if (rc == CDAG_OK) r->listed = 1;
  return rc;
}

/* The open run's blocks cut into blocks of g bytes (g divides their length). */
static int listed_regrain(lw *w, lw_run *r, uint64_t g) {
  uint64_t k = r->len / g, n = r->n;
  if (k == 1) return CDAG_OK;
  int rc = listed_materialize(w, r);
  if (rc == CDAG_OK) rc = listed_room(w, n * k);
  for (uint64_t i = n; rc == CDAG_OK && i-- > 0;) {
    uint64_t s = w->run_src[i], d = w->run_dst[i];
    for (uint64_t j = 0; j < k; j++) w->run_src[i * k + j] = s + j * g, w->run_dst[i * k + j] = d + j * g;
  }
  if (rc == CDAG_OK) r->n = n * k, r->len = g;
  return rc;
}

/* Does a piece of len bytes at (src, dst), in blocks of grain, join run r, keeping its hull on
   each side within 8 times its bytes, or 16 MiB? A graph only modelled is not simulated, but
   tests verify it, and the simulator keeps a copy's hull (run_extends). */
static int listed_extends(const lw_run *r, int32_t rank, uint64_t src, uint64_t dst, uint64_t len, uint64_t grain) {
  if (r->n == 0 || r->rank != rank || r->len != grain) return 0;
  uint64_t room = 8 * (r->n * r->len + len) > (1u << 24) ? 8 * (r->n * r->len + len) : 1u << 24;
  uint64_t slo = src < r->src ? src : r->src, shi = src + len > r->from ? src + len : r->from;
  uint64_t dlo = dst < r->dst ? dst : r->dst, dhi = dst + len > r->to ? dst + len : r->to;
  return shi - slo <= room && dhi - dlo <= room;
}

/* Does block (src, dst) continue the run's one stride on each side (unlisted)? */
static int listed_strided(lw_run *r, uint64_t src, uint64_t dst, uint64_t len) {
  if (r->listed || src <= r->src || dst <= r->dst) return 0;
  if (r->n == 1 && src - r->src >= len && dst - r->dst >= len) {
    r->sstep = src - r->src, r->dstep = dst - r->dst;
    return 1;
  }
  return r->n > 1 && src - r->src == r->n * r->sstep && dst - r->dst == r->n * r->dstep;
}

static int listed_push(lw *w, lw_run *r, int32_t rank, uint64_t src, uint64_t dst, uint64_t len) {
  if (r->n == 0) {
    r->rank = rank, r->len = len, r->src = src, r->from = src + len, r->dst = dst, r->to = dst + len;
    r->n = 1, r->listed = 0;
    return CDAG_OK;
  }
  if (listed_strided(r, src, dst, len)) {
    r->n++;
    if (src + len > r->from) r->from = src + len;
    if (dst + len > r->to) r->to = dst + len;
    return CDAG_OK;
  }
  int rc = listed_materialize(w, r);
  if (rc == CDAG_OK) rc = listed_room(w, r->n + 1);
  if (rc) return rc;
  w->run_src[r->n] = src, w->run_dst[r->n] = dst;
  r->n++;
  if (src < r->src) r->src = src;   /* the hulls: [src, from) and [dst, to) */
  if (src + len > r->from) r->from = src + len;
  if (dst < r->dst) r->dst = dst;
  if (dst + len > r->to) r->to = dst + len;
  return CDAG_OK;
}

static uint64_t gcd(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* Does the run read [src, src + len) already (an origin packed twice, which a copy's blocks
   cannot be)? Only runs of origins are asked: staging and finals are never read twice. */
static int read_again(lw *w, lw_run *r, uint64_t src, uint64_t len, int *again) {
  uint64_t at = src + len - 1;
  *again = 0;
  if (!r->origins || !r->n || src >= r->from || at < r->src) return CDAG_OK;   /* outside the hull */
  if (!r->listed) {   /* blocks at one stride: the last that starts at or below at */
    uint64_t i = r->n > 1 ? (at - r->src) / r->sstep : 0;
    if (i >= r->n) i = r->n - 1;
    *again = r->src + i * r->sstep + r->len > src;
    return CDAG_OK;
  }
  int rc = CDAG_OK;
  for (uint64_t i = 0; !r->mapped && i < r->n && rc == CDAG_OK; i++)
    rc = base_imap_put(&r->read, w->run_src[i], (int64_t)r->len);
  r->mapped = 1;
  int64_t had = rc ? -1 : base_imap_find(&r->read, &at, BASE_IMAP_AT_OR_BELOW);
  *again = had >= 0 && at + (uint64_t)had > src;
  return rc;
}

/* Pieces of two lengths (a datatype's blocks, some merged with their neighbours by the SST)
   join one run in blocks of their common divisor, when that is at most 8 times finer. */
static int listed_copy(lw *w, lw_run *r, int32_t rank, uint64_t src, uint64_t dst, uint64_t len) {
  int rc = CDAG_OK;
  uint64_t grain = len;
  if (r->n && r->rank == rank && len != r->len) {
    uint64_t g = gcd(len, r->len);
    if (r->len / g <= 8 && len / g <= 8 && listed_extends(r, rank, src, dst, len, r->len)) rc = listed_regrain(w, r, g);
    if (rc == CDAG_OK && r->len == g) grain = g;
  }
  int joins = rc == CDAG_OK && r->n && listed_extends(r, rank, src, dst, len, grain), again = 0;
  if (joins) rc = read_again(w, r, src, len, &again);
  if (rc == CDAG_OK && r->n && (!joins || again))
    rc = listed_flush(w, r), grain = len;
  for (uint64_t o = 0; rc == CDAG_OK && o < len; o += grain) rc = listed_push(w, r, rank, src + o, dst + o, grain);
  if (rc == CDAG_OK && r->mapped) rc = base_imap_put(&r->read, src, (int64_t)len);
  return rc;
}

static int run_flush(lw *w, lw_run *r) {
  if (r->n == 0) return CDAG_OK;
  if (w->any_stride) return listed_flush(w, r);
  uint64_t n = r->n;
  r->n = 0;
  return strided_copy(w, r->rank, r->src, r->dst, n, r->len, r->from, r->to);
}

/* Does block (src, dst) continue run r? Strides of the run's first two blocks, then kept;
   at most 8 times the length, since a strided copy stands for the hull of each side in the
   simulator's memory (sim_mem.c): two pieces a gigabyte apart stay two copies in a graph
   that is simulated. */
static int run_extends(const lw_run *r, int32_t rank, uint64_t src, uint64_t dst, uint64_t len) {
  if (r->n == 0 || r->rank != rank || r->len != len || src <= r->src || dst <= r->dst) return 0;
  if (r->n == 1)
    return src - r->src >= len && dst - r->dst >= len && src - r->src <= 8 * len && dst - r->dst <= 8 * len;
  return src - r->src == r->n * r->from && dst - r->dst == r->n * r->to;
}

static int run_copy(lw *w, lw_run *r, int32_t rank, uint64_t src, uint64_t dst, uint64_t len) {
  if (len == 0) return CDAG_OK;
  if (w->any_stride) return listed_copy(w, r, rank, src, dst, len);
  if (run_extends(r, rank, src, dst, len)) {
    if (r->n == 1) {
      r->from = src - r->src;
      r->to = dst - r->dst;
    }
    r->n++;
    return CDAG_OK;
  }
  int rc = run_flush(w, r);
  *r = (lw_run){.rank = rank, .src = src, .dst = dst, .len = len, .n = 1, .from = len, .to = len, .origins = r->origins};
  return rc;
}

/* The run's last copy, after the copies before it succeeded (rc); its index freed either way. */
static int run_end(lw *w, lw_run *r, int rc) {
  if (rc == CDAG_OK) rc = run_flush(w, r);
  base_imap_clear(&r->read);
  return rc;
}

static int reduce(lw *w, int rank, uint64_t in, uint64_t inout, uint64_t bytes, int type, int op) {
  uint64_t es = (uint64_t)ir_type_size(type);
  return bytes ? ir_add_reduce(w->g, rank, in, inout, bytes / es, type, op, NULL) : CDAG_OK;
}

static int late(lw *w, int rank, uint64_t src, uint64_t dst, uint64_t len) {
  if (len == 0) return CDAG_OK;
  BASE_GROW(w->late, w->nlate, w->clate, 1, "lowering");
  w->late[w->nlate++] = (lw_copy){rank, src, dst, len, 1, len};
  return CDAG_OK;
}

/* A late copy of n blocks of len bytes from contiguous src to dst + j*to. */
static int late_blocks(lw *w, int rank, uint64_t src, uint64_t dst, uint64_t len, uint64_t n, uint64_t to) {
  int rc = late(w, rank, src, dst, len);
  if (rc == CDAG_OK && len) w->late[w->nlate - 1].n = n, w->late[w->nlate - 1].to = to;
  return rc;
}

/* Copies the pieces of v (origins) into contiguous dst. */
static int pack_into(lw *w, int rank, const det_iov *v, uint64_t dst) {
  int rc = CDAG_OK;
  lw_run run = {.origins = 1};
  for (int32_t i = 0; i < v->n && rc == CDAG_OK; i++) {
    const det_piece *pc = &w->p->pieces[v->first + i];
    rc = run_copy(w, &run, rank, pc->addr, dst, pc->len);
    dst += pc->len;
  }
  return run_end(w, &run, rc);
}

/* A contiguous view of v's origin bytes: its one piece, or a packed staging copy. */
static int read_view(lw *w, int rank, const det_iov *v, uint64_t *addr) {
  if (v->n == 1) {
    *addr = w->p->pieces[v->first].addr;
    return CDAG_OK;
  }
  *addr = stage(w, rank, v->bytes);
  return pack_into(w, rank, v, *addr);
}

/* A replication's send slot v at rank: the result collective `from` wrote there is still in
   its staging memory (its final writes are late), so the view is that staging memory. */
static int result_view(lw *w, int64_t from, int rank, const det_iov *v, uint64_t *addr) {
  uint64_t at = 0;
  int rc = CDAG_OK;
  if (v->n != 1) at = *addr = stage(w, rank, v->bytes);
  for (int32_t i = 0; i < v->n && rc == CDAG_OK; i++) {
    const det_piece *pc = &w->p->pieces[v->first + i];
    int64_t k = w->late_at[from];
    while (k < w->late_at[from + 1] && !(w->late[k].rank == rank && w->late[k].dst <= pc->addr &&
                                         pc->addr + pc->len <= w->late[k].dst + w->late[k].len))
      k++;
    if (k == w->late_at[from + 1])
      return cdag__error(CDAG_ERR_PLAN, "lowering: rank %d 0x%llx: a replication sends bytes collective %lld did not write",
                         rank, (unsigned long long)pc->addr, (long long)from);
    uint64_t src = w->late[k].src + (pc->addr - w->late[k].dst);
    if (v->n == 1) *addr = src;
    else rc = copy(w, rank, src, at, pc->len);
    at += pc->len;
  }
  return rc;
}

/* The final pieces of v get the contiguous bytes at src (late). */
static int write_late(lw *w, int rank, const det_iov *v, uint64_t src) {
  int rc = CDAG_OK;
  for (int32_t i = 0; i < v->n && rc == CDAG_OK; i++) {
    const det_piece *pc = &w->p->pieces[v->first + i];
    rc = late(w, rank, src, pc->addr, pc->len);
    src += pc->len;
  }
  return rc;
}

static int lowbit(int x) { return x & -x; }

/* ---- MPI's algorithms ---- */

/* Binomial broadcast of m bytes from member ri; buf[i]: member i's buffer. Parents send to
   the largest subtree first (MPICH). */
static int binomial_bcast(lw *w, const int32_t *R, int n, int ri, const uint64_t *buf, uint64_t m) {
  int top = 1, rc = CDAG_OK;
  while (top < n) top <<= 1;
  for (int rel = 0; rel < n && rc == CDAG_OK; rel++) {
    int lim = rel ? lowbit(rel) : top, i = (rel + ri) % n;
    for (int mask = lim >> 1; mask >= 1 && rc == CDAG_OK; mask >>= 1)
      if (rel + mask < n) {
        int j = (rel + mask + ri) % n;
        rc = msg(w, R[i], buf[i], R[j], buf[j], m);
      }
  }
  return rc;
}

/* Binomial reduction into acc[ri]; tmp[i]: member i's receive buffer. */
static int binomial_reduce(lw *w, const det_coll *c, const int32_t *R, int n, int ri, const uint64_t *acc,
                           const uint64_t *tmp, uint64_t m) {
  int top = 1, rc = CDAG_OK;
  while (top < n) top <<= 1;
  for (int rel = n - 1; rel >= 0 && rc == CDAG_OK; rel--) {
    int lim = rel ? lowbit(rel) : top, i = (rel + ri) % n;
    for (int mask = 1; mask < lim && rc == CDAG_OK; mask <<= 1)
      if (rel + mask < n) {
        int j = (rel + mask + ri) % n;
        if ((rc = msg(w, R[j], acc[j], R[i], tmp[i], m)) == CDAG_OK) rc = reduce(w, R[i], tmp[i], acc[i], m, c->type, c->op);
      }
  }
  return rc;
}

/* Recursive doubling allreduce on acc (MPICH): the first 2 rem members fold pairwise, the
   power-of-two rest exchange and reduce, the folded members get the result back. */
static int rd_allreduce(lw *w, const det_coll *c, const int32_t *R, int n, const uint64_t *acc, const uint64_t *tmp,
                        uint64_t m) {
  int pof2 = 1, rc = CDAG_OK;
  while (pof2 * 2 <= n) pof2 *= 2;
  int rem = n - pof2;
  for (int i = 0; i < 2 * rem && rc == CDAG_OK; i += 2)
    if ((rc = msg(w, R[i], acc[i], R[i + 1], tmp[i + 1], m)) == CDAG_OK)
      rc = reduce(w, R[i + 1], tmp[i + 1], acc[i + 1], m, c->type, c->op);
  for (int mask = 1; mask < pof2 && rc == CDAG_OK; mask <<= 1)
    for (int a = 0; a < pof2 && rc == CDAG_OK; a++) {
      int b = a ^ mask;
      if (b < a) continue;
      int ia = a < rem ? 2 * a + 1 : a + rem, ib = b < rem ? 2 * b + 1 : b + rem;
      if ((rc = msg(w, R[ia], acc[ia], R[ib], tmp[ib], m))) break;
      if ((rc = msg(w, R[ib], acc[ib], R[ia], tmp[ia], m))) break;
      if ((rc = reduce(w, R[ia], tmp[ia], acc[ia], m, c->type, c->op))) break;
      rc = reduce(w, R[ib], tmp[ib], acc[ib], m, c->type, c->op);
    }
  for (int i = 0; i < 2 * rem && rc == CDAG_OK; i += 2) rc = msg(w, R[i + 1], acc[i + 1], R[i], acc[i], m);
  return rc;
}

/* ---- cdag's circulant kernels (circulant.h) ----
 * The rounds are circulant.h's simulations (circ_bcast_rounds, circ_reduce_rounds,
 * circ_allgather_rounds), the same as the kernels' (kernel_bcast.c, kern__circulant_steps):
 * in round i (k = i mod q) relative rank r sends block S_r[k] (shifted by q per phase, capped
 * to n-1) to r + skip[k]; negative blocks are virtual. The reduction runs the rounds
 * backwards with the edges reversed; as in the kernel, a round's messages go out before its
 * combines. */

typedef struct {
  lw *w;
  const det_coll *c;
  const int32_t *R;
  int n, ri, nb;
  uint64_t units, unit;
  const uint64_t *buf, *tmp;   /* per member index */
  int round, npend;            /* reduction: the round being emitted, its pending combines */
  int *pend_to, *pend_blk;
} circ_ctx;

static int circ_setup(lw *w, circ_ctx *x, int n, uint64_t units, uint64_t unit, circ_graph *cg) {
  if (circ_init(cg, n) != 0) return cdag__error(CDAG_ERR_ARG, "lowering: circulant graph of %d members", n);
  x->nb = kern_model_nblocks(&w->model, 0, n, units, unit);
  x->units = units;
  x->unit = unit;
  return CDAG_OK;
}

static int member_of(const circ_ctx *x, int rel) { return (rel + x->ri) % x->n; }

/* circ_bcast_rounds' messages: block b of the sender's buffer into the receiver's. */
static void bcast_msg(void *ctx, int round, int from, int to, int b) {
  circ_ctx *x = ctx;
  uint64_t bo, bl;
  (void)round;
  if (x->w->rc) return;
  kern_block(x->units, x->unit, x->nb, b, &bo, &bl);
  int f = member_of(x, from), t = member_of(x, to);
  x->w->rc = msg(x->w, x->R[f], x->buf[f] + bo, x->R[t], x->buf[t] + bo, bl);
}

/* The combines of the reduction's current round, after all of its messages. */
static void flush_combines(circ_ctx *x) {
  for (int i = 0; i < x->npend && !x->w->rc; i++) {
    uint64_t bo, bl;
    int t = member_of(x, x->pend_to[i]);
    kern_block(x->units, x->unit, x->nb, x->pend_blk[i], &bo, &bl);
    x->w->rc = reduce(x->w, x->R[t], x->tmp[t], x->buf[t] + bo, bl, x->c->type, x->c->op);
  }
  x->npend = 0;
}

/* circ_reduce_rounds' messages: the partial block into the receiver's tmp, combined later. */
static void reduce_msg(void *ctx, int round, int from, int to, int b) {
  circ_ctx *x = ctx;
  uint64_t bo, bl;
  if (round != x->round) flush_combines(x), x->round = round;
  if (x->w->rc) return;
  kern_block(x->units, x->unit, x->nb, b, &bo, &bl);
  int f = member_of(x, from), t = member_of(x, to);
  x->w->rc = msg(x->w, x->R[f], x->buf[f] + bo, x->R[t], x->tmp[t], bl);
  x->pend_to[x->npend] = to, x->pend_blk[x->npend++] = b;
}

/* Broadcast (reverse = 0) from relative rank 0, or reduction (reverse = 1) to it, of the
   x->nb blocks of x->buf, by circulant.h's own rounds; member index of relative rank r:
   (r + x->ri) mod n. */
static int circ_blocks(circ_ctx *x, const circ_graph *cg, int reverse) {
  if (cg->q == 0 || x->units == 0) return CDAG_OK;
  x->w->rc = CDAG_OK;
  if (!reverse) {
    if (circ_bcast_rounds(cg, x->nb, bcast_msg, x) < 0 && !x->w->rc) x->w->rc = CDAG_NOMEM("lowering");
    return x->w->rc;
  }
  x->pend_to = malloc(2 * sizeof *x->pend_to * (size_t)cg->p); /* one message into each rank per round */
  if (!x->pend_to) return CDAG_NOMEM("lowering");
  x->pend_blk = x->pend_to + cg->p;
  x->round = 0, x->npend = 0;
  if (circ_reduce_rounds(cg, x->nb, reduce_msg, x) < 0 && !x->w->rc) x->w->rc = CDAG_NOMEM("lowering");
  flush_combines(x);
  free(x->pend_to);
  return x->w->rc;
}

/* Allgather (kernel_allgather.c, circ_allgather_rounds): in round k member r sends its slots
   [first, first + count) = [0, skip[k+1]-skip[k]) to r - skip[k], which stores them from
   slot skip[k]; slot j of member v holds the block of member (v + j) mod n, at P[v + j] - P[v]
   (P: prefix sums over the doubled ring). */
typedef struct {
  lw *w;
  const int32_t *R;
  const uint64_t *buf, *P;
} ag_ctx;

static void allgather_msg(void *ctx, int round, int from, int to, int first, int count) {
  ag_ctx *a = ctx;
  (void)round;
  if (!a->w->rc)
    a->w->rc = msg(a->w, a->R[from], a->buf[from], a->R[to], a->buf[to] + a->P[to + first] - a->P[to],
                   a->P[from + count] - a->P[from]);
}

static int circ_allgather(lw *w, const int32_t *R, int n, const uint64_t *buf, const uint64_t *P) {
  circ_graph cg;
  if (circ_init(&cg, n)) return cdag__error(CDAG_ERR_ARG, "lowering: circulant graph of %d members", n);
  ag_ctx a = {w, R, buf, P};
  w->rc = CDAG_OK;
  circ_allgather_rounds(&cg, allgather_msg, &a);
  return w->rc;
}

/* Irregular allgather (kernel_allgatherv.c): every member broadcasts its own bytes as nb
   blocks, all n broadcasts in the same rounds; in round i relative rank v = r - j of root j
   sends block R_{v + skip[k]}[k] (shifted per phase) to r + skip[k]. A round's blocks to one
   neighbour are one message, packed and unpacked through staging copies where the kernel
   uses a datatype. buf[r]: member r's working buffer, root j's bytes at P[j]. */
typedef struct {
  lw *w;
  const int32_t *R;
  int n, nb, q;
  const int *T;            /* T[v * q + k]: receive schedule of relative rank v */
  const uint64_t *buf, *P;
  uint64_t *bo, *bl;       /* n each: the pieces of one message */
} agv_ctx;

/* Member r's message of round k (skip s, phase offset off) to r + s. */
static int agv_message(agv_ctx *a, int r, int k, int s, int64_t off) {
  int n = a->n, to = (r + s) % n, np = 0, rc = CDAG_OK;
  uint64_t total = 0;
  for (int j = 0; j < n; j++) { /* root j's block, if any: the same at sender and receiver */
    int tv = ((r - j + n) % n + s) % n;
    int64_t b = a->T[(size_t)tv * a->q + k] + off;
    uint64_t o, l;
    if (tv == 0 || b < 0) continue;
    kern_block(a->P[j + 1] - a->P[j], 1, a->nb, b < a->nb - 1 ? b : a->nb - 1, &o, &l);
    if (l) a->bo[np] = a->P[j] + o, a->bl[np++] = l, total += l;
  }
  if (np <= 1) return np ? msg(a->w, a->R[r], a->buf[r] + a->bo[0], a->R[to], a->buf[to] + a->bo[0], a->bl[0]) : CDAG_OK;
  uint64_t out = stage(a->w, a->R[r], total), in = stage(a->w, a->R[to], total), at = 0;
  for (int e = 0; e < np && rc == CDAG_OK; at += a->bl[e], e++) rc = copy(a->w, a->R[r], a->buf[r] + a->bo[e], out + at, a->bl[e]);
  if (rc == CDAG_OK) rc = msg(a->w, a->R[r], out, a->R[to], in, total);
  at = 0;
  for (int e = 0; e < np && rc == CDAG_OK; at += a->bl[e], e++) rc = copy(a->w, a->R[to], in + at, a->buf[to] + a->bo[e], a->bl[e]);
  return rc;
}

static int circ_allgatherv(lw *w, const int32_t *R, int n, const uint64_t *buf, const uint64_t *P) {
  circ_graph cg;
  if (circ_init(&cg, n) != 0) return cdag__error(CDAG_ERR_ARG, "lowering: circulant graph of %d members", n);
  uint64_t maxc = 0;
  for (int j = 0; j < n; j++)
    if (P[j + 1] - P[j] > maxc) maxc = P[j + 1] - P[j];
  if (cg.q == 0 || P[n] == 0) return CDAG_OK;
  int nb = kern_model_nblocks(&w->model, 0, n, P[n], 1), q = cg.q, rc = CDAG_OK;
  if ((uint64_t)nb > maxc) nb = (int)maxc;
  int *T = malloc(sizeof *T * (size_t)n * (size_t)q);
  uint64_t *pieces = malloc(sizeof *pieces * 2 * (size_t)n);
  if (!T || !pieces) rc = CDAG_NOMEM("lowering");
  for (int v = 0; v < n && rc == CDAG_OK; v++) circ_recvsched(&cg, v, T + (size_t)v * q);
  agv_ctx a = {w, R, n, nb, q, T, buf, P, pieces, pieces + n};
  int64_t x = (q - (nb - 1) % q) % q, last = nb - 2 + q + x;
  for (int64_t i = x; i <= last && rc == CDAG_OK; i++)
    for (int r = 0; r < n && rc == CDAG_OK; r++) rc = agv_message(&a, r, (int)(i % q), cg.skip[i % q], -x + q * (i / q));
  free(T);
  free(pieces);
  return rc;
}

/* ---- one collective ---- */

static int coll_bcast(lw *w, const det_coll *c, const int32_t *R, int n, int ri, int alg, uint64_t *buf) {
  const det_iov *s = det_slot(w->p, c, 1, ri, 0);
  uint64_t m = s->bytes;
  int rc = c->after > 0 ? result_view(w, c->after - 1, R[ri], s, &buf[ri]) : read_view(w, R[ri], s, &buf[ri]);
  for (int i = 0; i < n; i++)
    if (i != ri) buf[i] = stage(w, R[i], m);
  if (rc == CDAG_OK && alg == KERN_ALG_MPI) rc = binomial_bcast(w, R, n, ri, buf, m);
  if (rc == CDAG_OK && alg != KERN_ALG_MPI) {
    circ_ctx x = {.w = w, .c = c, .R = R, .n = n, .ri = ri, .buf = buf};
    circ_graph cg;
    if ((rc = circ_setup(w, &x, n, m, 1, &cg)) == CDAG_OK) rc = circ_blocks(&x, &cg, 0);
  }
  for (int i = 0; i < n && rc == CDAG_OK; i++)
    if (i != ri) rc = write_late(w, R[i], det_slot(w->p, c, 0, i, 0), buf[i]);
  return rc;
}

/* Reduce (all = 0) or allreduce (all = 1): accumulators initialised from the send slots. */
static int coll_reduce(lw *w, const det_coll *c, const int32_t *R, int n, int ri, int alg, int all, uint64_t *acc,
                       uint64_t *tmp) {
  uint64_t m = det_slot(w->p, c, 1, 0, 0)->bytes, es = (uint64_t)ir_type_size(c->type);
  int rc = CDAG_OK;
  for (int i = 0; i < n && rc == CDAG_OK; i++) {
    acc[i] = stage(w, R[i], m);
    rc = pack_into(w, R[i], det_slot(w->p, c, 1, i, 0), acc[i]);
  }
  if (rc) return rc;
  if (alg == KERN_ALG_CENSUS) {
    /* census (kernel_allreduce.c): W grows by the next skip[k+1]-1 members' inputs */
    circ_graph cg;
    if (circ_init(&cg, n) != 0) return cdag__error(CDAG_ERR_ARG, "lowering: census over %d members", n);
    uint64_t *W = tmp, *T = malloc(sizeof *T * (size_t)n * 2), *Rv;
    if (!T) return CDAG_NOMEM("lowering");
    Rv = T + n;
    for (int i = 0; i < n; i++) W[i] = stage(w, R[i], m), T[i] = stage(w, R[i], m), Rv[i] = stage(w, R[i], m);
    for (int k = 0; k < cg.q && m && rc == CDAG_OK; k++) {
      int s = cg.skip[k], dbl = cg.skip[k + 1] == 2 * s, d = dbl ? s : s - 1;
      for (int i = 0; i < n && rc == CDAG_OK && dbl && k > 0; i++)
        if ((rc = copy(w, R[i], acc[i], T[i], m)) == CDAG_OK) rc = reduce(w, R[i], W[i], T[i], m, c->type, c->op);
      for (int i = 0; i < n && rc == CDAG_OK; i++) {
        int to = (i - d + n) % n;
        uint64_t out = dbl ? (k == 0 ? acc[i] : T[i]) : W[i];
        rc = msg(w, R[i], out, R[to], k == 0 ? W[to] : Rv[to], m);
      }
      for (int i = 0; i < n && rc == CDAG_OK && k > 0; i++) rc = reduce(w, R[i], Rv[i], W[i], m, c->type, c->op);
    }
    for (int i = 0; i < n && rc == CDAG_OK && cg.q > 0 && m; i++) rc = reduce(w, R[i], W[i], acc[i], m, c->type, c->op);
    free(T);
  } else if (alg == KERN_ALG_MPI) {
    for (int i = 0; i < n; i++) tmp[i] = stage(w, R[i], m);
    if (all) rc = rd_allreduce(w, c, R, n, acc, tmp, m);
    else rc = binomial_reduce(w, c, R, n, ri, acc, tmp, m);
  } else {
    circ_ctx x = {.w = w, .c = c, .R = R, .n = n, .ri = all ? 0 : ri, .buf = acc, .tmp = tmp};
    circ_graph cg;
    rc = circ_setup(w, &x, n, m / es, es, &cg);
    uint64_t blk = x.nb ? (m / es / (uint64_t)x.nb + 1) * es : m;
    for (int i = 0; i < n; i++) tmp[i] = stage(w, R[i], blk);
    if (rc == CDAG_OK) rc = circ_blocks(&x, &cg, 1);
    if (rc == CDAG_OK && all) rc = circ_blocks(&x, &cg, 0);
  }
  for (int i = 0; i < n && rc == CDAG_OK; i++)
    if (all || i == ri) rc = write_late(w, R[i], det_slot(w->p, c, 0, i, 0), acc[i]);
  return rc;
}

/* Allgather(v): buf[i] holds every block; ring (MPI) in member order, circulant rotated. */
/* Bruck's allgather, MPICH's for short messages: ceil(log2 n) rounds; each rank's buffer holds
   the blocks from its own on, rotated (block i + k at P[i + k] - P[i]), and in the round of
   distance d it receives the first min(d, n - d) blocks of rank i + d's buffer after its own d. */
static int bruck_allgather(lw *w, const int32_t *R, int n, const uint64_t *buf, const uint64_t *P) {
  int rc = CDAG_OK;
  for (int d = 1; d < n && rc == CDAG_OK; d <<= 1) {
    int cnt = d < n - d ? d : n - d;
    for (int i = 0; i < n && rc == CDAG_OK; i++) {
      int j = (i + d) % n;
      rc = msg(w, R[j], buf[j], R[i], buf[i] + P[i + d] - P[i], P[j + cnt] - P[j]);
    }
  }
  return rc;
}

static int coll_allgather(lw *w, const det_coll *c, const int32_t *R, int n, int alg, uint64_t *buf, uint64_t *P) {
  int rc = CDAG_OK;
  P[0] = 0;
  for (int k = 0; k < 2 * n; k++) P[k + 1] = P[k] + det_slot(w->p, c, 1, k % n, 0)->bytes;
  uint64_t total = P[n];
  int bruck = alg == KERN_ALG_MPI && total < LOWER_ALLGATHER_SHORT;
  /* root j's bytes at P[j] (the ring, circulant allgatherv), else rotated from the rank's own */
  int absolute = !bruck && (alg == KERN_ALG_MPI || ir_coll_get(c->kind)->vector);
  for (int i = 0; i < n && rc == CDAG_OK; i++) {
    buf[i] = stage(w, R[i], total);
    rc = pack_into(w, R[i], det_slot(w->p, c, 1, i, 0), buf[i] + (absolute ? P[i] : 0));
  }
  if (rc == CDAG_OK && bruck) {
    rc = bruck_allgather(w, R, n, buf, P);
  } else if (rc == CDAG_OK && alg == KERN_ALG_MPI) {
    for (int s = 0; s < n - 1 && rc == CDAG_OK; s++)
      for (int i = 0; i < n && rc == CDAG_OK; i++) {
        int b = ((i - s) % n + n) % n, j = (i + 1) % n;
        rc = msg(w, R[i], buf[i] + P[b], R[j], buf[j] + P[b], P[b + 1] - P[b]);
      }
  } else if (rc == CDAG_OK) {
    rc = ir_coll_get(c->kind)->vector ? circ_allgatherv(w, R, n, buf, P) : circ_allgather(w, R, n, buf, P);
  }
  for (int i = 0; i < n && rc == CDAG_OK; i++)
    for (int j = 0; j < n && rc == CDAG_OK; j++) {
      uint64_t off = absolute ? P[j] : P[i + (j - i + n) % n] - P[i];
      rc = write_late(w, R[i], det_slot(w->p, c, 0, i, j), buf[i] + off);
    }
  return rc;
}

/* Size of block (i -> j) of a rooted or all-to-all kind: min of both slots (one may be empty). */
static uint64_t pair_bytes(const cdag_plan *p, const det_coll *c, int i, int si, int j, int rj) {
  uint64_t a = det_slot(p, c, 1, i, si)->bytes, b = det_slot(p, c, 0, j, rj)->bytes;
  return a < b ? a : b;
}

/* Gather / scatter: binomial over relative ranks (regular), linear (v-forms, as MPICH). */
static int coll_rooted(lw *w, const det_coll *c, const int32_t *R, int n, int ri, uint64_t *buf, uint64_t *P) {
  int gather = ir_coll_get(c->kind)->recv_root, rc = CDAG_OK;   /* else a scatter */
  int linear = ir_coll_get(c->kind)->vector;
  /* P over relative ranks: block of relative rank k at P[k] in the root's buffer */
  P[0] = 0;
  for (int k = 0; k < n; k++) {
    int j = (k + ri) % n;
    P[k + 1] = P[k] + (gather ? pair_bytes(w->p, c, j, 0, ri, j) : pair_bytes(w->p, c, ri, j, j, 0));
  }
  int top = 1;
  while (top < n) top <<= 1;
  for (int rel = 0; rel < n; rel++) {    /* buffer of rel: relative blocks [rel, rel + size) */
    int i = (rel + ri) % n, size = linear ? 1 : rel ? lowbit(rel) : top;
    if (rel == 0) size = n;
    if (rel + size > n) size = n - rel;
    buf[i] = stage(w, R[i], P[rel + size] - P[rel]);
  }
  if (gather) {
    for (int rel = 0; rel < n && rc == CDAG_OK; rel++) {
      int i = (rel + ri) % n;
      const det_iov *s = det_slot(w->p, c, 1, i, 0);
      if (P[rel + 1] - P[rel] == s->bytes) rc = pack_into(w, R[i], s, buf[i]);
    }
    for (int rel = n - 1; rel >= 0 && rc == CDAG_OK; rel--) {
      int i = (rel + ri) % n, lim = linear ? (rel ? 1 : n) : rel ? lowbit(rel) : top;
      for (int mask = 1; mask < lim && rc == CDAG_OK; mask = linear ? mask + 1 : mask << 1) {
        int ch = rel + mask, j = (ch + ri) % n;
        if (ch >= n) break;
        int csize = linear ? 1 : lowbit(ch);
        if (ch + csize > n) csize = n - ch;
        rc = msg(w, R[j], buf[j], R[i], buf[i] + P[ch] - P[rel], P[ch + csize] - P[ch]);
      }
    }
    for (int k = 0; k < n && rc == CDAG_OK; k++) {
      int j = (k + ri) % n;
      if (P[k + 1] > P[k]) rc = write_late(w, R[ri], det_slot(w->p, c, 0, ri, j), buf[ri] + P[k]);
    }
  } else {
    for (int k = 0; k < n && rc == CDAG_OK; k++) {
      int j = (k + ri) % n;
      if (P[k + 1] > P[k]) rc = pack_into(w, R[ri], det_slot(w->p, c, 1, ri, j), buf[ri] + P[k]);
    }
    for (int rel = 0; rel < n && rc == CDAG_OK; rel++) {
      int i = (rel + ri) % n, lim = linear ? (rel ? 1 : n) : rel ? lowbit(rel) : top;
      for (int mask = linear ? 1 : lim >> 1; mask >= 1 && mask < lim && rc == CDAG_OK;
           mask = linear ? mask + 1 : mask >> 1) {
        int ch = rel + mask, j = (ch + ri) % n;
        if (ch >= n) {
          if (linear) break;
          continue;
        }
        int csize = linear ? 1 : lowbit(ch);
        if (ch + csize > n) csize = n - ch;
        rc = msg(w, R[i], buf[i] + P[ch] - P[rel], R[j], buf[j], P[ch + csize] - P[ch]);
      }
    }
    for (int rel = 0; rel < n && rc == CDAG_OK; rel++) {
      int i = (rel + ri) % n;
      if (P[rel + 1] > P[rel]) rc = write_late(w, R[i], det_slot(w->p, c, 0, i, 0), buf[i]);
    }
  }
  return rc;
}

/* Alltoall(v) by pairwise exchange; reduce_scatter pairwise, each member reducing its block. */
static int coll_pairwise(lw *w, const det_coll *c, const int32_t *R, int n, uint64_t *acc, uint64_t *tmp) {
  int rs = ir_coll_get(c->kind)->reduces, rc = CDAG_OK;
  if (rs)
    for (int j = 0; j < n && rc == CDAG_OK; j++) {
      const det_iov *own = det_slot(w->p, c, 1, j, j);
      acc[j] = stage(w, R[j], own->bytes);
      tmp[j] = stage(w, R[j], own->bytes);
      rc = pack_into(w, R[j], own, acc[j]);
    }
  for (int s = rs ? 1 : 0; s < n && rc == CDAG_OK; s++)
    for (int i = 0; i < n && rc == CDAG_OK; i++) {
      int j = (i + s) % n;
      uint64_t m = rs ? det_slot(w->p, c, 1, i, j)->bytes : pair_bytes(w->p, c, i, j, j, i), src, dst;
      if (m == 0) continue;
      if ((rc = read_view(w, R[i], det_slot(w->p, c, 1, i, j), &src))) break;
      if (rs) {
        if ((rc = msg(w, R[i], src, R[j], tmp[j], m)) == CDAG_OK) rc = reduce(w, R[j], tmp[j], acc[j], m, c->type, c->op);
        continue;
      }
      dst = stage(w, R[j], m);
      rc = s == 0 ? copy(w, R[i], src, dst, m) : msg(w, R[i], src, R[j], dst, m);
      if (rc == CDAG_OK) rc = write_late(w, R[j], det_slot(w->p, c, 0, j, i), dst);
    }
  for (int j = 0; j < n && rc == CDAG_OK && rs; j++) rc = write_late(w, R[j], det_slot(w->p, c, 0, j, 0), acc[j]);
  return rc;
}

/* Dissemination barrier: zero-byte messages, each round after the previous one's receive. */
static int coll_barrier(lw *w, const int32_t *R, int n, int32_t *last) {
  int rc = CDAG_OK;
  for (int i = 0; i < n; i++) last[i] = -1;
  for (int d = 1; d < n && rc == CDAG_OK; d <<= 1) {
    int32_t *got = last + n;
    for (int i = 0; i < n && rc == CDAG_OK; i++) {
      int j = (i + d) % n;
      int32_t s, r;
      uint64_t a = w->next[R[i]], b = w->next[R[j]];
      if ((rc = ir_add_send(w->g, R[i], a, 0, R[j], w->tag, &s))) break;
      if ((rc = ir_add_recv(w->g, R[j], b, 0, R[i], w->tag, &r))) break;
      if (last[i] >= 0) rc = ir_add_dep(w->g, last[i], s, 1);
      got[j] = r;
    }
    for (int j = 0; j < n && rc == CDAG_OK; j++)   /* receives in round order, as MPI_Sendrecv */
      if (last[j] >= 0) rc = ir_add_dep(w->g, last[j], got[j], 1);
    memcpy(last, got, sizeof *last * (size_t)n);
  }
  return rc;
}

/* How each kind expands: the `lower` column of ir/coll_kinds.h names one of these. */
enum { LOWER_BCAST, LOWER_REDUCE, LOWER_ALLREDUCE, LOWER_ALLGATHER, LOWER_ROOTED, LOWER_PAIRWISE, LOWER_BARRIER,
       LOWER_NONE /* a native-only kind (coll_kinds.h): never in a plan, an error below */ };
#define LOWER_OF_KIND_(ID, NAME, MPI, EXEC, LOWER, ...) [IR_COLL_##ID] = LOWER_##LOWER,
static const uint8_t lowering[IR_COLL_NKINDS] = {CDAG_COLL_KINDS(LOWER_OF_KIND_)};
#undef LOWER_OF_KIND_

static int lower_coll(lw *w, int64_t ci) {
  const cdag_plan *p = w->p;
  const det_coll *c = &p->colls[ci];
  const int32_t *R = p->ranks + c->ranks_first;
  int n = c->nranks, ri = det_root_member(p, c), rc;
  if (ri < 0) ri = 0;   /* no root: unused */
  int alg = p->chosen ? p->chosen->coll[ci].alg : (int)kern_choose_coll(p, ci, &w->model, w->policy, NULL, 0);
  uint64_t *a = malloc(sizeof *a * (size_t)(6 * n + 2));
  if (!a) return CDAG_NOMEM("lowering");
  uint64_t *b = a + n, *P = a + 2 * n;   /* P: 2n + 1 entries */
  switch (c->kind >= 0 && c->kind < DET_NKINDS ? lowering[c->kind] : -1) {
    case LOWER_BCAST: rc = coll_bcast(w, c, R, n, ri, alg, a); break;
    case LOWER_REDUCE: rc = coll_reduce(w, c, R, n, ri, alg, 0, a, b); break;
    case LOWER_ALLREDUCE: rc = coll_reduce(w, c, R, n, ri, alg, 1, a, b); break;
    case LOWER_ALLGATHER: rc = coll_allgather(w, c, R, n, alg, a, P); break;
    case LOWER_ROOTED: rc = coll_rooted(w, c, R, n, ri, a, P); break;
    case LOWER_PAIRWISE: rc = coll_pairwise(w, c, R, n, a, b); break;
    case LOWER_BARRIER: rc = coll_barrier(w, R, n, (int32_t *)P); break;
    default: rc = cdag__error(CDAG_ERR_ARG, "lowering: plan collective %lld has no kind", (long long)ci);
  }
  free(a);
  return rc;
}

/* ---- residual parts ---- */

/* Does [addr, addr + len) of rank overlap a snapshot of plan p (an origin some part reads that
   a final write overwrites)? p->snaps is sorted by (rank, addr) and disjoint. O(log snaps). */
static int snapshot_overlaps(const cdag_plan *p, int32_t rank, uint64_t addr, uint64_t len) {
  int64_t lo = 0, hi = p->nsnaps;   /* the first snapshot after (rank, addr) */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    const det_range *s = &p->snaps[mid];
    if (s->rank < rank || (s->rank == rank && s->addr <= addr)) lo = mid + 1;
    else hi = mid;
  }
  const det_range *before = lo > 0 ? &p->snaps[lo - 1] : NULL, *after = lo < p->nsnaps ? &p->snaps[lo] : NULL;
  return (before && before->rank == rank && before->addr + before->len > addr) ||
         (after && after->rank == rank && after->addr < addr + len);
}

/* The pieces of plan message m that travel alone, each its own message from and into the
   user's memory as the runtime sends them (into staging and copied late where a snapshot
   says some part still reads the origin there). */
static int lower_alone(lw *w, const det_msg *m, uint64_t limit) {
  int64_t nalone = 0;
  int rc = CDAG_OK;
  for (int32_t i = 0; i < m->n && rc == CDAG_OK; i++) {   /* a strided transfer's first blocks, alone each */
    const df_xfer *t = &w->p->xfers[m->first + i];
    uint64_t k = kern_alone_of(t->len, df_xfer_blocks(t), limit, &nalone);
    for (uint64_t j = 0; j < k && rc == CDAG_OK; j++) {
      df_xfer x = df_xfer_block(t, j);
      int direct = !snapshot_overlaps(w->p, m->dst, x.dst_addr, x.len);
      uint64_t dst = direct ? x.dst_addr : stage(w, m->dst, x.len);
      rc = msg(w, m->src, x.src_addr, m->dst, dst, x.len);
      if (rc == CDAG_OK && !direct) rc = late(w, m->dst, dst, x.dst_addr, x.len);
    }
  }
  return rc;
}

/* The pieces of message m a staging buffer carries (nonempty; with `alone`, those that do not
   travel alone under kern_travels_alone over limit), as indices into its transfers in the order
   of their finals (the SST's, as dataflow made them): a datatype's blocks then form runs on
   both sides, and a column delivered to two places (a receive buffer and the ghost column it is
   copied to) is two runs, where the order of their origins interleaves them. The pieces and
   bytes are the same in any order. *n and *bytes: how many, and their bytes. A strided
   transfer is one piece of its blocks that stay: the first KERN_MAX_ALONE pieces over the
   limit travel alone, so (*skip)[i] of transfer i's first blocks may. */
static int staged_pieces(const lw *w, const det_msg *m, int alone, uint64_t limit, int64_t **idx, int64_t *n,
                         uint64_t *bytes, uint64_t **skip) {
  const df_xfer *x = w->p->xfers + m->first;
  int64_t nalone = 0;
  *n = 0, *bytes = 0;
  *idx = malloc((size_t)(m->n ? m->n : 1) * sizeof **idx);
  *skip = calloc((size_t)(m->n ? m->n : 1), sizeof **skip);
  if (!*idx || !*skip) return CDAG_NOMEM("lowering");
  for (int32_t i = 0; i < m->n; i++) {
    uint64_t nb = df_xfer_blocks(&x[i]), k = alone ? kern_alone_of(x[i].len, nb, limit, &nalone) : 0;
    (*skip)[i] = k;
    if (x[i].len && k < nb) (*idx)[(*n)++] = i, *bytes += (nb - k) * x[i].len;
  }
  base_key key[] = {BASE_KEY(x, dst_addr)};
  return *n > 1 ? base_sort_fields(*idx, *n, key, 1) : CDAG_OK;
}

/* The pieces idx[0..n) of m copied from their origins to contiguous `at` on m->src (a
   strided one's blocks in turn: run_copy joins them into one strided copy). */
static int pack_pieces(lw *w, const det_msg *m, const int64_t *idx, int64_t n, const uint64_t *skip, uint64_t at) {
  const df_xfer *x = w->p->xfers + m->first;
  lw_run run = {.origins = 1};
  int rc = CDAG_OK;
  for (int64_t i = 0; i < n && rc == CDAG_OK; i++)
    for (uint64_t j = skip[idx[i]]; j < df_xfer_blocks(&x[idx[i]]) && rc == CDAG_OK; j++, at += x[idx[i]].len)
      rc = run_copy(w, &run, m->src, x[idx[i]].src_addr + j * x[idx[i]].src_stride, at, x[idx[i]].len);
  return run_end(w, &run, rc);
}

/* The pieces idx[0..n) of m copied late from contiguous `at` on m->dst to their finals. */
static int unpack_late(lw *w, const det_msg *m, const int64_t *idx, int64_t n, const uint64_t *skip, uint64_t at) {
  const df_xfer *x = w->p->xfers + m->first;
  int rc = CDAG_OK;
  for (int64_t i = 0; i < n && rc == CDAG_OK; i++) {
    const df_xfer *t = &x[idx[i]];
    uint64_t k = skip[idx[i]], nb = df_xfer_blocks(t) - k;
    rc = late_blocks(w, m->dst, at, t->dst_addr + k * t->dst_stride, t->len, nb, t->dst_stride);
    at += nb * t->len;
  }
  return rc;
}

/* The pieces of plan message m that travel packed, as the runtime splits them
   (kern_travels_alone over pack_limit), as one message from m->src to m->dst: one piece from
   where it is, several packed into staging first. */
static int lower_group(lw *w, const det_msg *m, uint64_t limit) {
  int64_t *idx = NULL, n = 0;
  uint64_t bytes = 0, *skip = NULL;
  int rc = staged_pieces(w, m, 1, limit, &idx, &n, &bytes, &skip);
  if (rc == CDAG_OK && n) {
    const df_xfer *one = &w->p->xfers[m->first + idx[0]];
    int direct = n == 1 && df_xfer_blocks(one) == 1;   /* one piece sent from where it is */
    uint64_t src = direct ? one->src_addr : stage(w, m->src, bytes);
    uint64_t dst = stage(w, m->dst, bytes);
    if (!direct) rc = pack_pieces(w, m, idx, n, skip, src);
    if (rc == CDAG_OK) rc = msg(w, m->src, src, m->dst, dst, bytes);
    if (rc == CDAG_OK) rc = unpack_late(w, m, idx, n, skip, dst);
  }
  free(idx);
  free(skip);
  return rc;
}

/* A local message (m->src == m->dst) packs straight into its staging and is copied out late. */
static int lower_local(lw *w, const det_msg *m) {
  int64_t *idx = NULL, n = 0;
  uint64_t bytes = 0, *skip = NULL;
  int rc = staged_pieces(w, m, 0, 0, &idx, &n, &bytes, &skip);
  if (rc == CDAG_OK && n) {
    uint64_t dst = stage(w, m->dst, bytes);
    rc = pack_pieces(w, m, idx, n, skip, dst);
    if (rc == CDAG_OK) rc = unpack_late(w, m, idx, n, skip, dst);
  }
  free(idx);
  free(skip);
  return rc;
}

static int lower_msgs(lw *w) {
  const cdag_plan *p = w->p;
  uint64_t limit = p->chosen ? p->chosen->pack_limit : UINT64_MAX;   /* unchosen: one message per pair */
  int rc = CDAG_OK;
  for (int64_t k = 0; k < p->nmsgs && rc == CDAG_OK; k++) {
    const det_msg *m = &p->msgs[k];
    if (m->src == m->dst) rc = lower_local(w, m);
    else if ((rc = lower_group(w, m, limit)) == CDAG_OK) rc = lower_alone(w, m, limit);
  }
  return rc;
}

/* A pair of ranks' reduction contributions: one message from src's packing buffer to dst's
   reduction buffer; fill: bytes placed so far. */
typedef struct {
  int32_t src, dst;
  uint64_t bytes, sbuf, dbuf, fill;
} red_pair;

/* The pair (src, dst) of *pairs (a JudyL of src * nprocs + dst -> 1 + index), added if new. */
static int red_pair_of(lw *w, Pvoid_t *pairs, red_pair **pr, int64_t *n, int64_t *cap, int src, int dst, int64_t *k) {
  PWord_t v = (PWord_t)JudyLIns(pairs, (Word_t)src * (Word_t)w->g->nprocs + (Word_t)dst, PJE0);
  if (v == PJERR) return CDAG_NOMEM("lowering");
  if (!*v) {
    BASE_GROW(*pr, *n, *cap, 1, "lowering");
    (*pr)[*n] = (red_pair){src, dst, 0, 0, 0, 0};
    *v = (Word_t)++*n;
  }
  *k = (int64_t)*v - 1;
  return CDAG_OK;
}

/* Walks every remote contribution of the plan's reductions once, in plan order and each
   reduction's runs in its set's order (by rank, whatever the ranks' addresses: a price that
   does not change from run to run), with its pair's index: pass 0 sizes
   the pairs, pass 1 packs at the sources, pass 2 combines at the destinations (the buffers'
   offsets are the same walk's). */
static int red_walk(lw *w, int pass, Pvoid_t *pairs, red_pair **pr, int64_t *n, int64_t *cap) {
  const cdag_plan *p = w->p;
  int rc = CDAG_OK;
  for (int64_t k = 0; k < p->nreds && rc == CDAG_OK; k++) {
    const df_red *d = &p->reds[k];
    const df_set *s = &p->sst->sets[d->set];
    uint64_t m = d->count * (uint64_t)ir_type_size(d->type), acc = pass == 2 ? stage(w, d->dst, m) : 0;
    int first = 1;
    for (int32_t u = 0; u < s->nruns && rc == CDAG_OK; u++) {
      const df_run *run = &p->sst->runs[s->first + u];
      for (int32_t r = run->lo; r <= run->hi && rc == CDAG_OK; r++) {
        uint64_t in = run->addr;
        if (r != d->dst) {   /* sent once, however often it counts (the runtime's reduction buffer) */
          int64_t j = 0;
          if ((rc = red_pair_of(w, pairs, pr, n, cap, r, d->dst, &j))) break;
          red_pair *q = &(*pr)[j];
          if (pass == 0) q->bytes += m;
          if (pass == 1) rc = copy(w, r, run->addr, q->sbuf + q->fill, m);
          in = q->dbuf + q->fill;
          q->fill += m;
          if (pass < 2) continue;
        } else if (pass < 2) {
          continue;
        }
        for (uint32_t t = 0; t < run->mult && rc == CDAG_OK; t++) {
          rc = first ? copy(w, d->dst, in, acc, m) : reduce(w, d->dst, in, acc, m, d->type, d->op);
          first = 0;
        }
      }
    }
    if (rc == CDAG_OK && pass == 2) rc = late(w, d->dst, acc, d->dst_addr, m);
  }
  return rc;
}

/* Residual reductions as the runtime runs them: each remote contribution travels once, all of
   a pair of ranks' in one message (packed at the source, into the destination's reduction
   buffer), and each reduction is combined at its destination from there. */
static int lower_reds(lw *w) {
  Pvoid_t pairs = NULL;
  red_pair *pr = NULL;
  int64_t n = 0, cap = 0;
  int rc = red_walk(w, 0, &pairs, &pr, &n, &cap);
  for (int64_t j = 0; j < n && rc == CDAG_OK; j++) {
    pr[j].sbuf = stage(w, pr[j].src, pr[j].bytes);
    pr[j].dbuf = stage(w, pr[j].dst, pr[j].bytes);
  }
  for (int64_t j = 0; j < n; j++) pr[j].fill = 0;
  if (rc == CDAG_OK) rc = red_walk(w, 1, &pairs, &pr, &n, &cap);
  for (int64_t j = 0; j < n && rc == CDAG_OK; j++) rc = msg(w, pr[j].src, pr[j].sbuf, pr[j].dst, pr[j].dbuf, pr[j].bytes);
  for (int64_t j = 0; j < n; j++) pr[j].fill = 0;
  if (rc == CDAG_OK) rc = red_walk(w, 2, &pairs, &pr, &n, &cap);
  Word_t freed;
  freed = JudyLFreeArray(&pairs, PJE0);
  (void)freed;
  free(pr);
  return rc;
}

static int lower_syncs(lw *w) {
  int rc = CDAG_OK;
  for (int64_t k = 0; k < w->p->nsyncs && rc == CDAG_OK; k++) {
    int s = w->p->syncs[2 * k], d = w->p->syncs[2 * k + 1];
    if ((rc = ir_add_send(w->g, s, w->next[s], 0, d, w->tag, NULL)) == CDAG_OK)
      rc = ir_add_recv(w->g, d, w->next[d], 0, s, w->tag, NULL);
  }
  return rc;
}

/* The highest address stage plan p uses, at least top. */
static uint64_t plan_top(const cdag_plan *p, uint64_t top) {
  for (int64_t c = 0; c < p->ncolls; c++) {   /* the collectives' own pieces: a part of a plan (price.c) shares them */
    const det_coll *k = &p->colls[c];
    int64_t first[2] = {k->send_first, k->recv_first}, n[2] = {det_side_iovs(k, 1), det_side_iovs(k, 0)};
    for (int side = 0; side < 2; side++)
      for (int64_t v = first[side]; v < first[side] + n[side]; v++)
        for (int32_t i = 0; i < p->iovs[v].n; i++) {
          const det_piece *pc = &p->pieces[p->iovs[v].first + (uint32_t)i];
          if (pc->addr + pc->len > top) top = pc->addr + pc->len;
        }
  }
  for (int64_t i = 0; i < p->nxfers; i++) {   /* a strided transfer's last blocks */
    const df_xfer *x = &p->xfers[i];
    if (x->src_addr + df_xfer_span(x, x->src_stride) > top) top = x->src_addr + df_xfer_span(x, x->src_stride);
    if (x->dst_addr + df_xfer_span(x, x->dst_stride) > top) top = x->dst_addr + df_xfer_span(x, x->dst_stride);
  }
  for (int64_t i = 0; i < p->nreds; i++) {
    uint64_t m = p->reds[i].count * (uint64_t)ir_type_size(p->reds[i].type);
    const df_set *s = &p->sst->sets[p->reds[i].set];
    if (p->reds[i].dst_addr + m > top) top = p->reds[i].dst_addr + m;
    for (int32_t u = 0; u < s->nruns; u++)
      if (p->sst->runs[s->first + u].addr + m > top) top = p->sst->runs[s->first + u].addr + m;
  }
  return top;
}

/* Where the staging memory starts: LOWER_STAGING_BASE, or the first page boundary above the
   plan's highest address when the plan uses addresses above it (a stage plan's staging
   buffers at STAGE_TEMP_BASE, a recording's packing areas, native collectives' scratch). */
static int staging_base(const cdag_plan *pl, uint64_t *base) {
  uint64_t top = 0;
  for (const cdag_plan *q = pl; q; q = q->next) top = plan_top(q, top);
  if (top <= LOWER_STAGING_BASE) {
    *base = LOWER_STAGING_BASE;
    return CDAG_OK;
  }
  if (top > UINT64_MAX - 2 * LOWER_STAGING_PAGE)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "lowering: the plan uses address 0x%llx, which leaves no room for "
                       "staging memory above it", (unsigned long long)top);
  *base = (top + LOWER_STAGING_PAGE - 1) & ~(LOWER_STAGING_PAGE - 1);
  return CDAG_OK;
}

/* Room for the ops most plans lower to (a residual message is a send, a receive and a late
   copy per transfer; a collective's slots a few ops each), so that the op arrays and the
   late copies are not doubled and copied on the way to millions; more are added as needed. */
static int reserve(lw *w) {
  const cdag_plan *p = w->p;
  int64_t pieces = 0;   /* the collectives' own: a part of a plan (price.c) shares the array */
  for (int64_t c = 0; c < p->ncolls; c++) {
    const det_coll *k = &p->colls[c];
    int64_t nv = det_side_iovs(k, 1) + det_side_iovs(k, 0);
    pieces += nv;   /* a piece or so per slot: a hint, not a bound */
  }
  int64_t late = p->nxfers + pieces, ops = 2 * p->nmsgs + 2 * p->nsyncs + late + pieces;
  if (ops > IR_MAX_OPS / 2) ops = IR_MAX_OPS / 2;
  if (late > IR_MAX_OPS / 2) late = IR_MAX_OPS / 2;
  BASE_GROW(w->late, w->nlate, w->clate, late, "lowering");
  return ir_reserve(w->g, ops);
}

/* One stage plan (the whole plan of a graph without computation), its tags from tag0 + 1:
   collectives in plan order, residual messages and reductions, syncs, then the late copies. */
static int lower_one(lw *w, const cdag_plan *q, int tag0) {
  w->p = q;
  w->nlate = 0;
  int rc = reserve(w);
  for (int64_t c = 0; c < q->ncolls && rc == CDAG_OK; c++) {
    w->tag = tag0 + (int)c + 1;
    w->late_at[c] = w->nlate;
    rc = lower_coll(w, c);
    w->late_at[c + 1] = w->nlate;
  }
  w->tag = tag0 + (int)q->ncolls + 1;
  if (rc == CDAG_OK) rc = lower_msgs(w);
  if (rc == CDAG_OK) rc = lower_reds(w);
  w->tag = tag0 + (int)q->ncolls + 2;
  if (rc == CDAG_OK) rc = lower_syncs(w);
  lw_run run = {0};
  for (int64_t i = 0; i < w->nlate && rc == CDAG_OK; i++) {
    const lw_copy *c = &w->late[i];
    for (uint64_t j = 0; j < c->n && rc == CDAG_OK; j++) rc = run_copy(w, &run, c->rank, c->src + j * c->len, c->dst + j * c->to, c->len);
  }
  return run_end(w, &run, rc);
}

/* ---- plans in stages ----
 * Every rank runs the stages in order, its computations between them: each op of stage k
 * of rank r requires tail[r], the last thing r did before the stage (its last computation,
 * or a calc of 0 joining its ops of stage k - 1); the first computation after stage k
 * requires every op of r in stage k, each next computation the one before it. So stage k + 1
 * of a rank starts after its computations after stage k, and a collective of stage k + 1
 * sends from a rank once that rank's producers of its bytes have run. Two dependencies per
 * op at most, a join per rank and stage: O(ops + P K). */

typedef struct {
  int32_t *tail;     /* per rank: what its next stage requires (-1: nothing) */
  int32_t *head;     /* per rank: the first node after the stage being closed (-1: none) */
  int32_t *last;     /* per rank: the last such node */
  uint8_t *busy;     /* per rank: has ops in the stage being closed */
} lw_chain;

/* Stage ops [lo, hi) of w->g each require their rank's tail. */
static int open_stage(lw *w, const lw_chain *ch, int32_t lo, int32_t hi) {
  int rc = CDAG_OK;
  for (int32_t i = lo; i < hi && rc == CDAG_OK; i++) {
    int32_t r = w->g->rank[i];
    ch->busy[r] = 1;
    if (ch->tail[r] >= 0) rc = ir_add_dep(w->g, ch->tail[r], i, 0);
  }
  return rc;
}

/* After stage k's ops [lo, hi): the computations that run after it (from *next on in
   steps), or a join where a rank has none and a stage follows; then the new tails. */
static int close_stage(lw *w, const stage_steps *st, int32_t k, int64_t *next, const lw_chain *ch, int32_t lo,
                       int32_t hi) {
  int32_t n = w->g->nprocs, id;
  int rc = CDAG_OK;
  for (int32_t r = 0; r < n; r++) ch->head[r] = ch->last[r] = -1;
  for (; *next < st->ncomputes && st->computes[*next].after == k && rc == CDAG_OK; ++*next) {
    const stage_compute *c = &st->computes[*next];
    if ((rc = ir_add_calc(w->g, c->rank, c->cost, &id))) break;
    int32_t before = ch->last[c->rank] >= 0 ? ch->last[c->rank] : ch->tail[c->rank];
    if (before >= 0) rc = ir_add_dep(w->g, before, id, 0);
    if (ch->head[c->rank] < 0) ch->head[c->rank] = id;
    ch->last[c->rank] = id;
  }
  for (int32_t r = 0; r < n && rc == CDAG_OK; r++)
    if (ch->head[r] < 0 && ch->busy[r] && k + 1 < st->nstages && (rc = ir_add_calc(w->g, r, 0, &id)) == CDAG_OK)
      ch->head[r] = ch->last[r] = id;
  for (int32_t i = lo; i < hi && rc == CDAG_OK; i++)
    if (ch->head[w->g->rank[i]] >= 0) rc = ir_add_dep(w->g, i, ch->head[w->g->rank[i]], 0);
  for (int32_t r = 0; r < n; r++) {
    if (ch->last[r] >= 0) ch->tail[r] = ch->last[r];
    ch->busy[r] = 0;
  }
  return rc;
}

/* Ops [lo, hi) of w->g are in conflict scope k (ir.h): the chain orders a rank's stages, so
   finalizing looks for memory conflicts within a stage only. */
static int set_scope(cdag_graph *g, int64_t lo, int64_t hi, uint32_t k) {
  int rc = ir_ensure_opt(g, (void **)&g->scope, sizeof *g->scope, 0);
  for (int64_t i = lo; i < hi && rc == CDAG_OK; i++) g->scope[i] = k;
  return rc;
}

/* The chain of stage plans pl, pl->next, ... with pl->steps' computations, as above. */
static int lower_stages(lw *w, const cdag_plan *pl) {
  const stage_steps *st = pl->steps;
  int32_t n = pl->nprocs;
  lw_chain ch = {malloc(sizeof *ch.tail * (size_t)n), malloc(sizeof *ch.head * (size_t)n),
                 malloc(sizeof *ch.last * (size_t)n), calloc((size_t)n, 1)};
  int rc = ch.tail && ch.head && ch.last && ch.busy ? CDAG_OK : CDAG_NOMEM("lowering");
  for (int32_t r = 0; r < n && rc == CDAG_OK; r++) ch.tail[r] = -1;
  int64_t next = 0;
  int tag0 = 0;
  uint32_t scope = 0;
  if (rc == CDAG_OK) rc = close_stage(w, st, -1, &next, &ch, 0, 0);
  for (const cdag_plan *q = pl; q && rc == CDAG_OK; q = q->next) {
    int32_t lo = (int32_t)w->g->nops;
    if (q->nprocs != n || (q != pl && q->steps))
      rc = cdag__error(CDAG_ERR_ARG, "lowering: stage %d of the plan is not part of its chain", q->stage);
    else if (q->ncolls > INT32_MAX - 3 - (int64_t)tag0)
      rc = cdag__error(CDAG_ERR_UNSUPPORTED, "lowering: the stages' collectives need more message tags than a graph "
                       "holds (stage %d)", q->stage);
    if (rc == CDAG_OK) rc = lower_one(w, q, tag0);
    if (rc == CDAG_OK) rc = open_stage(w, &ch, lo, (int32_t)w->g->nops);
    if (rc == CDAG_OK) rc = close_stage(w, st, q->stage, &next, &ch, lo, (int32_t)w->g->nops);
    if (rc == CDAG_OK) rc = set_scope(w->g, lo, w->g->nops, ++scope);
    tag0 += (int)q->ncolls + 2;
  }
  if (rc == CDAG_OK && next != st->ncomputes)
    rc = cdag__error(CDAG_ERR_PLAN, "lowering: %lld computations of the plan run after no stage of its %d",
                     (long long)(st->ncomputes - next), st->nstages);
  free(ch.tail);
  free(ch.head);
  free(ch.last);
  free(ch.busy);
  return rc;
}

/* ---- computation kept in the plan ---- */

/* A plain calc: computations are lowered with the plan's stages, as communication is. */
static int plain_calc(const cdag_graph *g, int32_t op) { return g->kind[op] == IR_CALC && !ir_is_compute(g, op); }

/* Per op of g: 1 if it follows communication (a send, receive, copy, reduce or computation
   comes before it through dependencies), 2 if communication follows it, 3 both. O(n + m). */
static uint8_t *comm_sides(const cdag_graph *g) {
  uint8_t *side = calloc((size_t)g->nops + 1, 1);
  if (!side) return NULL;
  for (int32_t r = 0; r < g->nprocs; r++) {   /* program order is topological per rank */
    for (int32_t k = g->rank_start[r]; k < g->rank_start[r + 1]; k++) {
      int32_t op = g->rank_ops[k];
      for (int32_t e = g->pred_start[op]; e < g->pred_start[op + 1] && !(side[op] & 1); e++)
        if (!plain_calc(g, g->pred[e]) || (side[g->pred[e]] & 1)) side[op] |= 1;
    }
    for (int32_t k = g->rank_start[r + 1] - 1; k >= g->rank_start[r]; k--) {
      int32_t op = g->rank_ops[k];
      for (int32_t e = g->succ_start[op]; e < g->succ_start[op + 1] && !(side[op] & 2); e++)
        if (!plain_calc(g, g->succ[e]) || (side[g->succ[e]] & 2)) side[op] |= 2;
    }
  }
  return side;
}

/* Adds calc op of g to low on its rank and CPU; *id its id in low. */
static int add_calc_like(cdag_graph *low, const cdag_graph *g, int32_t op, int32_t *id) {
  int rc = ir_add_calc(low, g->rank[op], g->bytes[op], id);
  if (!rc && g->cpu && g->cpu[op] >= 0) rc = ir_set_goal(low, *id, g->cpu[op], -1);
  return rc;
}

/* g's plain calcs as they go into its lowered plan: which side of communication each is on
   (comm_sides), its id in low (as), and per rank the calc of 0 that comes before every lowered
   op of the rank (before) and the one after them all (after), -1 where no calc needs it. A
   join linked to every op of a rank orders as one linked to its ends would, and needs no
   dependencies of low: so the calcs go in while lowering, and low is finalized once. */
typedef struct {
  ir_deps_view v;
  const cdag_graph *g;     /* g with its dependencies */
  uint8_t *side;
  int32_t *as, *before, *after;
} kept_calcs;

static void kept_close(kept_calcs *k) {
  free(k->side);
  free(k->as);
  free(k->before);
  free(k->after);
  if (k->g) ir_deps_view_close(&k->v);
}

static int kept_open(kept_calcs *k, const cdag_graph *g) {
  *k = (kept_calcs){0};
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_ARG, "exec_lower_plan: the graph is not finalized");
  int rc = ir_deps_view_open(g, &k->v);
  if (rc) return rc;
  k->g = k->v.g;
  k->side = comm_sides(k->g);
  k->as = malloc(((size_t)g->nops + 1) * sizeof *k->as);
  k->before = malloc(((size_t)g->nprocs + 1) * sizeof *k->before);
  k->after = malloc(((size_t)g->nprocs + 1) * sizeof *k->after);
  if (!k->side || !k->as || !k->before || !k->after) return CDAG_NOMEM("calc in the plan");
  for (int32_t r = 0; r < g->nprocs; r++) k->before[r] = k->after[r] = -1;
  return CDAG_OK;
}

/* Adds g's plain calcs that communication follows (side 2, early = 1: before lowering, each
   rank's followed by its `before` join) or all others (early = 0: after lowering, behind the
   rank's `after` join when communication precedes them), with their dependencies on each
   other: a side-2 calc's predecessors are side 2, so every dependency points backwards. */
static int add_kept(cdag_graph *low, kept_calcs *k, int early) {
  const cdag_graph *g = k->g;
  int rc = CDAG_OK;
  for (int32_t r = 0; !rc && r < g->nprocs; r++) {
    int64_t first = low->nops;
    for (int32_t j = g->rank_start[r]; !rc && j < g->rank_start[r + 1]; j++) {
      int32_t op = g->rank_ops[j], c;
      if (!plain_calc(g, op) || (k->side[op] == 2) != early) continue;
      if ((rc = add_calc_like(low, g, op, &c))) break;
      k->as[op] = c;
      if (!early && (k->side[op] & 1)) rc = ir_add_dep(low, k->after[r], c, 0);
      for (int32_t e = g->pred_start[op]; !rc && e < g->pred_start[op + 1]; e++)
        if (plain_calc(g, g->pred[e])) rc = ir_add_dep(low, k->as[g->pred[e]], c, 0);
    }
    if (!rc && early && low->nops > first) {
      int64_t last = low->nops;
      rc = ir_add_calc(low, r, 0, &k->before[r]);
      for (int64_t c = first; !rc && c < last; c++) rc = ir_add_dep(low, c, k->before[r], 0);
    }
  }
  return rc;
}

/* The `after` joins of the ranks that need one, then every lowered op (ids first ..) linked
   to its rank's joins. */
static int join_lowered(cdag_graph *low, kept_calcs *k, int64_t first) {
  const cdag_graph *g = k->g;
  int rc = CDAG_OK;
  int64_t last = low->nops;
  for (int32_t op = 0; !rc && op < g->nops; op++)
    if (plain_calc(g, op) && (k->side[op] & 1) && k->after[g->rank[op]] < 0)
      rc = ir_add_calc(low, g->rank[op], 0, &k->after[g->rank[op]]);
  for (int64_t i = first; !rc && i < last; i++) {
    int32_t r = low->rank[i];
    if (k->before[r] >= 0) rc = ir_add_dep(low, k->before[r], i, 0);
    if (!rc && k->after[r] >= 0) rc = ir_add_dep(low, i, k->after[r], 0);
  }
  return rc;
}

/* Does g have a plain calc? */
static int has_plain_calc(const cdag_graph *g) {
  for (int64_t i = 0; g && i < g->nops; i++)
    if (plain_calc(g, (int32_t)i)) return 1;
  return 0;
}

static int lower_plan(const cdag_plan *pl, const cdag_graph *g, const kern_model *m, kern_policy policy,
                      int any_stride, cdag_graph **out) {
  if (!pl || !out) return cdag__error(CDAG_ERR_ARG, "exec_lower_plan: NULL argument");
  *out = NULL;
  uint64_t base = LOWER_STAGING_BASE;
  int rc = staging_base(pl, &base);
  if (rc) return rc;
  int64_t ncolls = 0;
  for (const cdag_plan *q = pl; q; q = q->next) ncolls = q->ncolls > ncolls ? q->ncolls : ncolls;
  lw w = {.p = pl, .model = m ? *m : kern_model_default(), .policy = policy, .base = base, .any_stride = any_stride};
  w.next = malloc(sizeof *w.next * (size_t)(pl->nprocs ? pl->nprocs : 1));
  w.late_at = calloc((size_t)ncolls + 1, sizeof *w.late_at);
  if (!w.next || !w.late_at) {
    free(w.next);
    free(w.late_at);
    return CDAG_NOMEM("lowering");
  }
  for (int r = 0; r < pl->nprocs; r++) w.next[r] = base;
  kept_calcs kc = {0};
  int keep = has_plain_calc(g);
  if (keep && g->nprocs != pl->nprocs)
    rc = cdag__error(CDAG_ERR_ARG, "exec_lower_plan: the graph has %d ranks, the plan %d", g->nprocs, pl->nprocs);
  if (rc == CDAG_OK && keep) rc = kept_open(&kc, g);
  if (rc == CDAG_OK) rc = ir_graph_new(pl->nprocs, -1, &w.g);
  if (rc == CDAG_OK && keep) rc = add_kept(w.g, &kc, 1);
  int64_t first = w.g ? w.g->nops : 0;
  if (rc == CDAG_OK) rc = pl->steps ? lower_stages(&w, pl) : lower_one(&w, pl, 0);
  if (rc == CDAG_OK && keep) rc = join_lowered(w.g, &kc, first);
  if (rc == CDAG_OK && keep) rc = add_kept(w.g, &kc, 0);
  if (keep) kept_close(&kc);
  if (rc == CDAG_OK && w.full)
    rc = cdag__error(CDAG_ERR_UNSUPPORTED, "lowering: the staging memory above 0x%llx runs past the end of the "
                     "address space", (unsigned long long)base);
  for (int r = 0; r < pl->nprocs && rc == CDAG_OK; r++)
    if (w.next[r] > base) rc = ir_add_scratch(w.g, r, base, w.next[r] - base);
  if (rc == CDAG_OK) rc = ir_finalize(w.g);
  free(w.next);
  free(w.late_at);
  free(w.late);
  free(w.run_src);
  free(w.run_dst);
  if (rc != CDAG_OK) {
    ir_graph_free(w.g);
    return rc;
  }
  *out = w.g;
  return CDAG_OK;
}

int exec_lower_plan(const cdag_plan *pl, const cdag_graph *g, const kern_model *m, kern_policy policy,
                    cdag_graph **out) {
  return lower_plan(pl, g, m, policy, 0, out);
}

int exec_lower_plan_modelled(const cdag_plan *pl, const cdag_graph *g, const kern_model *m, kern_policy policy,
                             cdag_graph **out) {
  return lower_plan(pl, g, m, policy, 1, out);
}

/* The k-th send from i to j with tag t is the k-th such call to msg (or its like), and so is
   its receive: ids, and so program order, follow the calls, so pairing each send with the
   op after it is what match_run finds (tests/model/test_lower.c compares them). */
int exec_lower_pairs(const cdag_graph *low, int32_t **partner) {
  if (!low || !partner || low->state == IR_BUILDING)
    return cdag__error(CDAG_ERR_ARG, "exec_lower_pairs: a finalized lowered graph expected");
  int32_t *p = malloc(((size_t)low->nops + 1) * sizeof *p);
  if (!p) return CDAG_NOMEM("lowered pairs");
  for (int64_t i = 0; i < low->nops; i++) p[i] = -1;
  for (int64_t i = 0; i < low->nops; i++) {
    if (low->kind[i] != IR_SEND) continue;
    if (i + 1 == low->nops || low->kind[i + 1] != IR_RECV || low->rank[i + 1] != low->peer[i]) {
      free(p);
      return cdag__error(CDAG_ERR_ARG, "exec_lower_pairs: op %lld is a send not followed by its receive: not a "
                         "lowered plan", (long long)i);
    }
    p[i] = (int32_t)i + 1;
    p[i + 1] = (int32_t)i;
  }
  *partner = p;
  return CDAG_OK;
}

/* cdag — src/workload/redistribute.c: the operations of an M:N block-cyclic redistribution.
 *
 * A matrix in ScaLAPACK's layout (cdag_layout, cdag.h) moves to another layout: other
 * blocks, another grid, other (possibly shared) ranks. Each dimension is independent: a
 * process's piece of the matrix is the product of its rows and its columns, so the pieces
 * one process sends another are (rows in common) x (columns in common), computed per
 * dimension and crossed.
 *
 * Algorithm (ASPEN, adjacent shifting of periodic node data): in one dimension of extent E,
 * the own layout (block b, P processes) and the other (block b', P') repeat with period
 * S = lcm(b P, b' P'): x is a boundary of a piece iff x + S is. So only the own process's
 * blocks inside [0, min(S, E)) are examined. Block [g0, g1) starts in other block g0 div b',
 * owned by (g0 div b') mod P'; its first b' - (g0 mod b') elements go there, each further
 * b' elements to the next owner (mod P'), the last chunk clipped at g1. Each chunk becomes
 * a periodic family (start, length, count of replicas at stride S, the last one clipped at
 * E), never a list of elements. No remote process is examined: the other grid enters only
 * through the owner of each chunk. Families are expanded into segments (global start,
 * length, local index on both sides; a replica moves the local index by S / P) only when the
 * operations are written, and pieces are contiguous column runs (column-major local arrays):
 * for each common column, one run per common row segment, merged with the previous run when
 * both sides continue it (whole columns merge when a pair shares all local rows).
 *
 * Cost: per dimension O(min(S, E) / (b P) + pieces in one period) to find the families
 * (ASPEN's D * N_loc-hat, no term in the remote grid size), then O(runs) to write them;
 * memory O(segments + runs). The receiving side computes its receives the same way with the
 * roles swapped, so sender and receiver list a pair's runs in one order (column-major
 * global order) without talking to each other. */
#include "workload/redistribute.h"

/* One dimension of the two layouts, seen from the side being built ("own": the layout of
   the process whose runs these are; "other": where its pieces go or come from). */
typedef struct {
  int64_t extent;          /* M or N */
  int64_t ob, op;          /* own block size and grid extent */
  int64_t tb, tp;          /* the other layout's */
  int64_t obp, tbp;        /* b * P of each, saturated at 2^62 (beyond the extent, 2^40) */
  int64_t lim;             /* min(period, extent): the part examined */
} rd_dim;

/* A periodic family of pieces: replicas g + t * lim for t < count. */
typedef struct {
  int32_t other;           /* coordinate of the piece's owner in the other grid */
  int64_t g, len;          /* the first replica: global start and length */
  int64_t count;           /* replicas (the period repeats until the extent) */
  int64_t last;            /* length of the last replica, clipped at the extent */
} rd_family;

/* One replica with its local indices: where a group of a pair's rows or columns sits. */
typedef struct {
  int32_t other;
  int64_t g, len;
  int64_t own, oth;        /* local index of g on the own and on the other process */
} rd_seg;

typedef struct {
  rd_family *f;
  int64_t nf, fcap;
  rd_seg *s;
  int64_t ns, scap;
  int64_t steps;           /* chunks examined */
} rd_side;

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Local index of global index g in a layout of block b, b * P = bp. */
static int64_t g2l(int64_t g, int64_t b, int64_t bp) { return g / bp * b + g % b; }

static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) || r > (INT64_C(1) << 62) ? INT64_C(1) << 62 : r;
}

/* Elements of the dimension that coordinate c of p holds (ScaLAPACK's NUMROC). */
static int64_t numroc(int64_t extent, int64_t b, int64_t c, int64_t p) {
  int64_t blocks = extent / b, n = blocks / p * b, extra = blocks % p;
  if (c < extra) n += b;
  else if (c == extra) n += extent % b;
  return n;
}

static rd_dim make_dim(int64_t extent, int64_t ob, int64_t op, int64_t tb, int64_t tp) {
  rd_dim d = {extent, ob, op, tb, tp, sat_mul(ob, op), sat_mul(tb, tp), extent};
  int64_t s;
  if (!__builtin_mul_overflow(d.obp / gcd64(d.obp, d.tbp), d.tbp, &s) && s < extent) d.lim = s;
  return d;
}

static int add_family(rd_side *x, const rd_dim *d, int64_t other, int64_t g, int64_t len) {
  BASE_GROW(x->f, x->nf, x->fcap, 1, "redistribution families");
  int64_t count = (d->extent - 1 - g) / d->lim + 1, at = g + (count - 1) * d->lim;
  int64_t last = d->extent - at < len ? d->extent - at : len;
  x->f[x->nf++] = (rd_family){(int32_t)other, g, len, count, last};
  return CDAG_OK;
}

/* The families of own coordinate c: its blocks in [0, lim), each split by adjacent shifting. */
static int find_families(rd_side *x, const rd_dim *d, int64_t c) {
  x->nf = 0;
  for (int64_t g0 = c * d->ob; g0 < d->lim; g0 += d->obp) {
    int64_t g1 = g0 + d->ob < d->lim ? g0 + d->ob : d->lim;
    for (int64_t a = g0; a < g1;) {   /* a remote boundary inside the block: next owner */
      int64_t b = (a / d->tb + 1) * d->tb;
      if (b > g1) b = g1;
      x->steps++;
      CDAG_TRY(add_family(x, d, (a / d->tb) % d->tp, a, b - a));
      a = b;
    }
  }
  return CDAG_OK;
}

static int family_cmp(const void *p, const void *q) {
  const rd_family *a = p, *b = q;
  if (a->other != b->other) return a->other < b->other ? -1 : 1;
  return (a->g > b->g) - (a->g < b->g);
}

/* Families to segments, grouped by other coordinate, each group in global order: replica
   t of every family precedes replica t + 1 of any (their starts lie in [0, lim)). */
static int expand(rd_side *x, const rd_dim *d) {
  base_sort(x->f, x->nf, sizeof *x->f, family_cmp);
  x->ns = 0;
  for (int64_t lo = 0, hi; lo < x->nf; lo = hi) {
    int64_t rounds = 0;
    for (hi = lo; hi < x->nf && x->f[hi].other == x->f[lo].other; hi++)
      if (x->f[hi].count > rounds) rounds = x->f[hi].count;
    for (int64_t t = 0; t < rounds; t++)
      for (int64_t k = lo; k < hi; k++) {
        const rd_family *f = &x->f[k];
        if (t >= f->count) continue;
        int64_t g = f->g + t * d->lim;
        BASE_GROW(x->s, x->ns, x->scap, 1, "redistribution segments");
        x->s[x->ns++] = (rd_seg){f->other, g, t + 1 == f->count ? f->last : f->len,
                                 g2l(g, d->ob, d->obp), g2l(g, d->tb, d->tbp)};
      }
  }
  return CDAG_OK;
}

static int side_build(rd_side *x, const rd_dim *d, int64_t c) {
  CDAG_TRY(find_families(x, d, c));
  return expand(x, d);
}

static void side_free(rd_side *x) {
  free(x->f);
  free(x->s);
}

/* Appends a run, or extends the last one when it continues it on both sides. */
static int push_run(rd_runs *r, int32_t peer, uint64_t src, uint64_t dst, uint64_t bytes) {
  int64_t n = r->n;
  if (n && r->peer[n - 1] == peer && r->src[n - 1] + r->bytes[n - 1] == src && r->dst[n - 1] + r->bytes[n - 1] == dst) {
    r->bytes[n - 1] += bytes;
    return CDAG_OK;
  }
  if (n == r->cap) {
    int64_t c = base_grown_cap(r->cap, 1);
    if (base_resize((void **)&r->peer, n, c, sizeof *r->peer, "redistribution runs") ||
        base_resize((void **)&r->src, n, c, sizeof *r->src, "redistribution runs") ||
        base_resize((void **)&r->dst, n, c, sizeof *r->dst, "redistribution runs") ||
        base_resize((void **)&r->bytes, n, c, sizeof *r->bytes, "redistribution runs"))
      return CDAG_ERR_NOMEM;
    r->cap = c;
  }
  r->peer[n] = peer;
  r->src[n] = src;
  r->dst[n] = dst;
  r->bytes[n] = bytes;
  r->n++;
  return CDAG_OK;
}

void rd_runs_free(rd_runs *r) {
  free(r->peer);
  free(r->src);
  free(r->dst);
  free(r->bytes);
  memset(r, 0, sizeof *r);
}

void rd_local_shape(const cdag_layout *l, int i, int j, int64_t *rows, int64_t *cols, int64_t *lld) {
  *rows = numroc(l->m, l->mb, i, l->pr);
  *cols = numroc(l->n, l->nb, j, l->pc);
  *lld = l->lld ? l->lld : *rows;
}

int rd_coords(const cdag_layout *l, int rank, int *i, int *j) {
  int64_t k = (int64_t)rank - l->first;
  if (k < 0 || k >= (int64_t)l->pr * l->pc) return 0;
  *i = (int)(k / l->pc);
  *j = (int)(k % l->pc);
  return 1;
}

/* What one side of a pair needs to write its runs. */
typedef struct {
  const cdag_layout *own, *oth;
  uint64_t elem;
  int64_t own_lld;
  int sending;             /* 1: own is the source (runs' src are own offsets) */
  int32_t rank;
} rd_pair;

/* The runs between the own process and peer (other coordinates qi, qj): rows r[0..nr) x
   columns c[0..nc), column-major. */
static int pair_runs(const rd_pair *p, int qi, int qj, const rd_seg *r, int64_t nr, const rd_seg *c, int64_t nc,
                     rd_runs *out) {
  int64_t rows, cols, oth_lld;
  rd_local_shape(p->oth, qi, qj, &rows, &cols, &oth_lld);
  int32_t peer = p->oth->first + qi * p->oth->pc + qj;
  if (!p->sending && peer == p->rank) return CDAG_OK;   /* the sending side copies */
  for (int64_t a = 0; a < nc; a++)
    for (int64_t k = 0; k < c[a].len; k++)
      for (int64_t b = 0; b < nr; b++) {
        uint64_t own = ((uint64_t)(c[a].own + k) * (uint64_t)p->own_lld + (uint64_t)r[b].own) * p->elem;
        uint64_t oth = ((uint64_t)(c[a].oth + k) * (uint64_t)oth_lld + (uint64_t)r[b].oth) * p->elem;
        uint64_t len = (uint64_t)r[b].len * p->elem;
        CDAG_TRY(p->sending ? push_run(out, peer, own, oth, len) : push_run(out, peer, oth, own, len));
      }
  return CDAG_OK;
}

/* Every pair of a row group and a column group, in increasing peer rank. */
static int cross(const rd_pair *p, const rd_side *rows, const rd_side *cols, rd_runs *out) {
  for (int64_t ra = 0, rb; ra < rows->ns; ra = rb) {
    for (rb = ra; rb < rows->ns && rows->s[rb].other == rows->s[ra].other; rb++) {}
    for (int64_t ca = 0, cb; ca < cols->ns; ca = cb) {
      for (cb = ca; cb < cols->ns && cols->s[cb].other == cols->s[ca].other; cb++) {}
      CDAG_TRY(pair_runs(p, rows->s[ra].other, cols->s[ca].other, rows->s + ra, rb - ra, cols->s + ca, cb - ca, out));
    }
  }
  return CDAG_OK;
}

/* The runs of rank as a process of own, to or from the processes of oth. */
static int build_side(const cdag_layout *own, const cdag_layout *oth, uint64_t elem, int rank, int sending,
                      rd_runs *out) {
  int i, j;
  if (!rd_coords(own, rank, &i, &j)) return CDAG_OK;
  rd_pair p = {own, oth, elem, 0, sending, rank};
  int64_t lrows, lcols;
  rd_local_shape(own, i, j, &lrows, &lcols, &p.own_lld);
  rd_dim dr = make_dim(own->m, own->mb, own->pr, oth->mb, oth->pr);
  rd_dim dc = make_dim(own->n, own->nb, own->pc, oth->nb, oth->pc);
  rd_side rows = {0}, cols = {0};
  int rc = side_build(&rows, &dr, i);
  if (!rc) rc = side_build(&cols, &dc, j);
  if (!rc) rc = cross(&p, &rows, &cols, out);
  out->steps += rows.steps + cols.steps;
  side_free(&rows);
  side_free(&cols);
  return rc;
}

int rd_steps(const cdag_layout *own, const cdag_layout *oth, int rank, int64_t *steps) {
  int i, j, rc = CDAG_OK;
  *steps = 0;
  if (!rd_coords(own, rank, &i, &j)) return CDAG_OK;
  rd_dim d[2] = {make_dim(own->m, own->mb, own->pr, oth->mb, oth->pr), make_dim(own->n, own->nb, own->pc, oth->nb, oth->pc)};
  for (int k = 0; k < 2 && !rc; k++) {
    rd_side x = {0};
    rc = find_families(&x, &d[k], k ? j : i);
    *steps += x.steps;
    side_free(&x);
  }
  return rc;
}

int rd_build(const cdag_layout *from, const cdag_layout *to, uint64_t elem, int rank, rd_runs *send, rd_runs *recv) {
  int rc = build_side(from, to, elem, rank, 1, send);
  if (!rc) rc = build_side(to, from, elem, rank, 0, recv);
  if (rc) {
    rd_runs_free(send);
    rd_runs_free(recv);
  }
  return rc;
}

static int bad(const char *fn, const char *which, const char *what, long long v, const char *rule) {
  return cdag__error(CDAG_ERR_ARG, "%s: layout '%s': %s is %lld (%s)", fn, which, what, v, rule);
}

int rd_check_layout(const cdag_layout *l, int nprocs, const char *fn, const char *which) {
  if (!l) return cdag__error(CDAG_ERR_ARG, "%s: layout '%s' is NULL", fn, which);
  if (l->m < 1 || l->n < 1) return bad(fn, which, l->m < 1 ? "M" : "N", l->m < 1 ? l->m : l->n, "the matrix needs >= 1 row and column");
  if (l->mb < 1 || l->nb < 1) return bad(fn, which, l->mb < 1 ? "MB" : "NB", l->mb < 1 ? l->mb : l->nb, "block sizes are >= 1");
  if (l->pr < 1 || l->pc < 1) return bad(fn, which, l->pr < 1 ? "PR" : "PC", l->pr < 1 ? l->pr : l->pc, "the grid needs >= 1 row and column");
  if (l->first < 0) return bad(fn, which, "first", l->first, "ranks are >= 0");
  if ((int64_t)l->first + (int64_t)l->pr * l->pc > nprocs)
    return cdag__error(CDAG_ERR_ARG, "%s: layout '%s': a %dx%d grid from rank %d needs %lld ranks, the graph has %d",
                       fn, which, l->pr, l->pc, l->first, (long long)l->first + (long long)l->pr * l->pc, nprocs);
  if (l->m > (INT64_C(1) << 40) || l->n > (INT64_C(1) << 40))
    return cdag__error(CDAG_ERR_ARG, "%s: layout '%s': %lldx%lld elements (at most 2^40 per dimension)", fn, which,
                       (long long)l->m, (long long)l->n);
  int64_t rows = numroc(l->m, l->mb, 0, l->pr);   /* coordinate 0 holds the most rows */
  if (l->lld && l->lld < rows) return bad(fn, which, "lld", l->lld, "smaller than the local rows");
  return CDAG_OK;
}

/* Bytes of rank's local array in l (0 if the rank is not in the grid). */
static uint64_t local_bytes(const cdag_layout *l, int rank, uint64_t elem) {
  int i, j;
  int64_t rows, cols, lld;
  if (!rd_coords(l, rank, &i, &j)) return 0;
  rd_local_shape(l, i, j, &rows, &cols, &lld);
  return cols ? ((uint64_t)(cols - 1) * (uint64_t)lld + (uint64_t)rows) * elem : 0;
}

static int check_call(const cdag_graph *g, const char *fn, int rank, const cdag_layout *from, uint64_t src,
                      const cdag_layout *to, uint64_t dst, uint64_t elem) {
  if (!g) return cdag__error(CDAG_ERR_ARG, "%s: graph is NULL", fn);
  if (rank < 0 || rank >= g->nprocs) return cdag__error(CDAG_ERR_ARG, "%s: rank %d out of range 0..%d", fn, rank, g->nprocs - 1);
  CDAG_TRY(rd_check_layout(from, g->nprocs, fn, "from"));
  CDAG_TRY(rd_check_layout(to, g->nprocs, fn, "to"));
  if (from->m != to->m || from->n != to->n)
    return cdag__error(CDAG_ERR_ARG, "%s: layout 'from' is %lldx%lld, 'to' %lldx%lld (one matrix, one size)", fn,
                       (long long)from->m, (long long)from->n, (long long)to->m, (long long)to->n);
  if (elem == 0 || elem > (1u << 20))
    return cdag__error(CDAG_ERR_ARG, "%s: elem_bytes is %llu (1 .. 2^20)", fn, (unsigned long long)elem);
  uint64_t total, padded;   /* every offset of a local array lies below these */
  uint64_t lld = (uint64_t)(from->lld > to->lld ? from->lld : to->lld);
  if (__builtin_mul_overflow((uint64_t)from->m, (uint64_t)from->n, &total) || total > UINT64_MAX / 4 / elem ||
      __builtin_mul_overflow((uint64_t)from->n, lld, &padded) || padded > UINT64_MAX / 4 / elem)
    return cdag__error(CDAG_ERR_ARG, "%s: the matrix (or a padded local array) has more than 2^62 bytes", fn);
  uint64_t sb = local_bytes(from, rank, elem), db = local_bytes(to, rank, elem);
  if (g->myrank >= 0 && ((sb && !src) || (db && !dst)))   /* global graphs may use address 0 */
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s: %s is NULL on a process that holds part of the matrix in '%s'",
                       rank, fn, sb && !src ? "src" : "dst", sb && !src ? "from" : "to");
  if (sb && db && src < dst + db && dst < src + sb)
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s: the source array [0x%llx, +%llu) and the destination array "
                       "[0x%llx, +%llu) overlap", rank, fn, (unsigned long long)src, (unsigned long long)sb,
                       (unsigned long long)dst, (unsigned long long)db);
  return CDAG_OK;
}

/* Sends (and self copies), then receives: a rank's sends read only src and its receives
   write only dst, so no order between them is needed and none is added. */
static int emit(cdag_graph *g, int rank, uint64_t src, uint64_t dst, const rd_runs *s, const rd_runs *r) {
  int rc = ir_reserve(g, s->n + r->n);
  for (int64_t k = 0; k < s->n && !rc; k++)
    rc = s->peer[k] == rank ? ir_add_copy(g, rank, src + s->src[k], dst + s->dst[k], s->bytes[k], NULL)
                            : ir_add_send(g, rank, src + s->src[k], s->bytes[k], s->peer[k], CDAG_REDISTRIBUTE_TAG, NULL);
  for (int64_t k = 0; k < r->n && !rc; k++)
    rc = ir_add_recv(g, rank, dst + r->dst[k], r->bytes[k], r->peer[k], CDAG_REDISTRIBUTE_TAG, NULL);
  return rc;
}

int ir_add_redistribute(cdag_graph *g, const char *fn, int rank, const cdag_layout *from, uint64_t src,
                        const cdag_layout *to, uint64_t dst, uint64_t elem) {
  CDAG_TRY(check_call(g, fn, rank, from, src, to, dst, elem));
  rd_runs s = {0}, r = {0};
  int rc = rd_build(from, to, elem, rank, &s, &r);
  if (!rc) rc = emit(g, rank, src, dst, &s, &r);
  rd_runs_free(&s);
  rd_runs_free(&r);
  return rc;
}

int cdag_rank_redistribute(cdag_graph *g, int rank, const cdag_layout *from, uint64_t src, const cdag_layout *to,
                           uint64_t dst, size_t elem_bytes) {
  const char *fn = "cdag_rank_redistribute";
  if (g && g->myrank >= 0)
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s on a distributed graph (use cdag_redistribute)", g->myrank, fn);
  return ir_add_redistribute(g, fn, rank, from, src, to, dst, elem_bytes);
}

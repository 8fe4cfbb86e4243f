/* cdag — src/format/folded.c: the ranks of a graph file folded where they differ only by
 * rank-relative peers, and unfolded back (the loader reads folded files: ir_load_mem).
 *
 * A rank block of a phase file (`rank R {` ... `}`) whose lines are those of an earlier
 * block's, rank M's (its *model*), but for the peer of every send and receive, which is at
 * the same distance from the rank modulo num_ranks, and for variable tokens (ir_variable_token:
 * addresses, sizes, costs, tags), is stored as one line
 *
 *   rank R like M [a LO HI D]... [t T D]...
 *
 * `a LO HI D`: every address of M's block whose value lies in [LO, HI] (hex) is D more in
 * R's (modulo 2^64; a process's buffers move together with its heap or its stack, so a few
 * ranges say where another process has them); `t T D`: variable token T of M's block
 * (counted from 0) is D more (it wins over a range); any other token is as in M's block.
 * Ranges and tokens come in ascending order, ranges disjoint. A model is always written in
 * full, so a 1,000-process stencil stores the few blocks that differ by more than this
 * (a grid's edges) and a line per other rank. Cost: linear in the text, and a sort of each
 * folded rank's addresses. */
#include <Judy.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "format/format.h"

/* ---- the tokens of a line that may vary (format.h) ---- */

static int digits(const char *p, const char *e) {
  if (p == e) return 0;
  for (; p < e; p++)
    if (*p < '0' || *p > '9') return 0;
  return 1;
}

int ir_number_word(const char *w, const char *e, const char *q, const char *pw, size_t pl, int tags) {
  if (q == w + 8 && e - w > 8 && !memcmp(w, "compute ", 8)) return tags ? 2 : 1;
  return tags && pw && pl == 3 && !memcmp(pw, "tag", 3) ? 2 : 0;
}

/* The value of the digits [p, e) in base 16 or 10, when they are how printf writes it (no
   sign, no leading zero, lower case, no overflow): a merge reads every token of every line
   (strtoull and snprintf to check were a seventh of it). */
static int canonical(const char *p, const char *e, int base, uint64_t *v) {
  if (p == e || (*p == '0' && e - p > 1)) return 0;
  uint64_t x = 0;
  for (; p < e; p++) {
    unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0') : base == 16 && *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10) : 99;
    if (d >= (unsigned)base || x > (UINT64_MAX - d) / (uint64_t)base) return 0;
    x = x * (uint64_t)base + d;
  }
  *v = x;
  return 1;
}

int ir_variable_token(const char *p, const char *e, int number, uint64_t *v) {
  size_t n = (size_t)(e - p);
  if (n < (number == 2 ? 1u : 2u) || n >= 32) return 0;
  if (n >= 2 && p[0] == '0' && p[1] == 'x') return canonical(p + 2, e, 16, v);
  if (number && digits(p, e)) return canonical(p, e, 10, v);
  if (e[-1] == 'b' && digits(p, e - 1)) return canonical(p, e - 1, 10, v);
  return 0;
}

const char *ir_line_words(const char *p, const char *e) {
  const char *lab = memchr(p, ':', (size_t)(e - p));
  return lab && lab + 1 < e && lab[1] == ' ' && !memchr(p, ' ', (size_t)(lab - p)) ? lab + 2 : p;
}


typedef struct {
  const char *p, *e;       /* the line, without its newline */
  int commented;           /* it starts inside a block comment: never a rank's line */
} rline;

typedef struct {
  int rank;
  int64_t first, last;     /* its lines first..last: `rank R {` and `}` */
  char *skel; size_t nskel;
  uint64_t hash;
  uint64_t *val; uint8_t *addr; int64_t ntok;
  int model;               /* index of its model block, -1: written in full */
} rblock;

typedef struct {
  rline *l; int64_t nl, lcap;
  rblock *b; int64_t nb, bcap;
  int nprocs;
} rtext;

static void rtext_free(rtext *t) {
  for (int64_t i = 0; i < t->nb; i++) free(t->b[i].skel), free(t->b[i].val), free(t->b[i].addr);
  free(t->l), free(t->b);
}

/* A canonical decimal number below `limit`, or -1. */
static int64_t decimal(const char *p, const char *e, int64_t limit) {
  if (p == e || e - p > 18 || (*p == '0' && e - p > 1)) return -1;
  int64_t v = 0;
  for (; p < e; p++) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
  }
  return v < limit ? v : -1;
}

static int word_is(const char *p, size_t n, const char *w) { return n == strlen(w) && !memcmp(p, w, n); }

/* The line without its indentation and trailing blanks (a file written by hand, CRLF lines). */
static rline trimmed(const rline *l) {
  rline t = *l;
  while (t.p < t.e && (*t.p == ' ' || *t.p == '\t')) t.p++;
  while (t.e > t.p && (t.e[-1] == ' ' || t.e[-1] == '\t' || t.e[-1] == '\r')) t.e--;
  return t;
}

/* The rank of a line `rank R {`, or -1. */
static int block_open(const rline *line, int nprocs) {
  if (line->commented) return -1;
  rline t = trimmed(line);
  const rline *l = &t;
  size_t n = (size_t)(l->e - l->p);
  if (n < 8 || memcmp(l->p, "rank ", 5) || memcmp(l->e - 2, " {", 2)) return -1;
  return (int)decimal(l->p + 5, l->e - 2, nprocs);
}

typedef struct {
  char *s; size_t n, cap;
} sbuf;

static int put(sbuf *b, const void *p, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) return CDAG_NOMEM("ranks of a phase");
    b->s = s, b->cap = cap;
  }
  memcpy(b->s + b->n, p, n);
  b->n += n;
  return CDAG_OK;
}

/* Calls fn for each word of a block's line: its kind (0 literal, 1 peer, 2 variable token)
   and value (the peer relative to `rank`, or the token's). */
typedef int (*word_fn)(void *ctx, const char *q, const char *qe, int kind, uint64_t v, int last);

static int each_word(const rline *line, int rank, int nprocs, word_fn fn, void *ctx) {
  rline whole = {line->p, trimmed(line).e, line->commented};   /* a CRLF line's last word without its CR */
  const rline *l = &whole;
  const char *s = l->p;
  while (s < l->e && (*s == ' ' || *s == '\t')) s++;   /* a file written by hand indents its ops */
  const char *w = ir_line_words(s, l->e), *pw = NULL;
  size_t pl = 0;
  const char *we = memchr(w, ' ', (size_t)(l->e - w));
  size_t wl = (size_t)((we ? we : l->e) - w);
  int send = word_is(w, wl, "send"), recv = word_is(w, wl, "recv");
  for (const char *q = l->p, *qe; q <= l->e; pw = q, pl = (size_t)(qe - q), q = qe + 1) {
    if (!(qe = memchr(q, ' ', (size_t)(l->e - q)))) qe = l->e;
    uint64_t v = 0;
    int kind = 0;
    int64_t peer = (send && pw && word_is(pw, pl, "to")) || (recv && pw && word_is(pw, pl, "from")) ? decimal(q, qe, nprocs) : -1;
    if (peer >= 0) kind = 1, v = (uint64_t)((peer - rank + nprocs) % nprocs);
    else if (ir_variable_token(q, qe, ir_number_word(w, l->e, q, pw, pl, 1), &v)) kind = 2;
    int rc = fn(ctx, q, qe, kind, v, qe == l->e);
    if (rc) return rc;
    if (qe == l->e) break;
  }
  return CDAG_OK;
}

static int is_hex(const char *q, const char *qe) { return qe - q > 2 && q[0] == '0' && q[1] == 'x'; }

typedef struct {
  sbuf s;
  rblock *b;
  int64_t cap, acap;
} skel_ctx;

static int skel_word(void *ctx, const char *q, const char *qe, int kind, uint64_t v, int last) {
  skel_ctx *c = ctx;
  int rc = CDAG_OK;
  if (kind == 1) {
    char num[24];
    int n = snprintf(num, sizeof num, "\x02%" PRIu64, v);
    rc = put(&c->s, num, (size_t)n);
  } else if (kind == 2) {
    if (base_grow((void **)&c->b->val, c->b->ntok, &c->cap, 1, sizeof *c->b->val, "ranks of a phase") ||
        base_grow((void **)&c->b->addr, c->b->ntok, &c->acap, 1, sizeof *c->b->addr, "ranks of a phase"))
      return CDAG_NOMEM("ranks of a phase");
    c->b->val[c->b->ntok] = v;
    c->b->addr[c->b->ntok++] = (uint8_t)is_hex(q, qe);
    rc = put(&c->s, "\x01", 1);
  } else {
    rc = put(&c->s, q, (size_t)(qe - q));
  }
  return rc ? rc : put(&c->s, last ? "\n" : " ", 1);
}

static uint64_t hash_bytes(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
  return h;
}

/* The lines of text, its num_ranks and its rank blocks (with skeletons when `skel`). */
static int is_close(const rline *l) {
  if (l->commented) return 0;
  rline t = trimmed(l);
  return t.e - t.p == 1 && t.p[0] == '}';
}

/* Whether a block comment is open at the end of line [p, e), given whether one was at its
   start, as the loader reads comments: a comment to the end of the line hides the marks. */
static int comment_open_after(const char *p, const char *e, int open) {
  for (; p < e; p++) {
    if (open) {
      if (*p == '*' && p + 1 < e && p[1] == '/') open = 0, p++;
    } else if (*p == '#' || (*p == '/' && p + 1 < e && p[1] == '/')) {
      return 0;
    } else if (*p == '/' && p + 1 < e && p[1] == '*') {
      open = 1, p++;
    }
  }
  return open;
}

static int parse(const char *text, size_t len, int skel, rtext *t) {
  memset(t, 0, sizeof *t);
  int open = 0;
  for (const char *p = text, *end = text + len, *e; p < end; p = e + 1) {
    if (!(e = memchr(p, '\n', (size_t)(end - p)))) e = end;
    if (base_grow((void **)&t->l, t->nl, &t->lcap, 1, sizeof *t->l, "ranks of a phase")) return CDAG_NOMEM("ranks of a phase");
    t->l[t->nl++] = (rline){p, e, open};
    open = comment_open_after(p, e, open);
    rline w = trimmed(&t->l[t->nl - 1]);
    if (!t->l[t->nl - 1].commented && !t->nprocs && w.e - w.p > 10 && !memcmp(w.p, "num_ranks ", 10)) t->nprocs = (int)decimal(w.p + 10, w.e, INT32_MAX);
  }
  if (t->nprocs <= 0) return t->nprocs = 0, CDAG_OK;   /* no ranks to fold */
  for (int64_t i = 0; i < t->nl; i++) {
    int r = block_open(&t->l[i], t->nprocs);
    if (r < 0) continue;
    int64_t j = i + 1;
    while (j < t->nl && !is_close(&t->l[j])) j++;
    if (j == t->nl) break;
    if (base_grow((void **)&t->b, t->nb, &t->bcap, 1, sizeof *t->b, "ranks of a phase")) return CDAG_NOMEM("ranks of a phase");
    rblock *b = &t->b[t->nb++];
    *b = (rblock){.rank = r, .first = i, .last = j, .model = -1};
    if (skel) {
      skel_ctx c = {.b = b};
      for (int64_t k = i + 1; k < j; k++) {
        int rc = each_word(&t->l[k], r, t->nprocs, skel_word, &c);
        if (rc) return free(c.s.s), rc;
      }
      b->skel = c.s.s, b->nskel = c.s.n;
      b->hash = hash_bytes(b->skel ? b->skel : "", b->nskel);
    }
    i = j;
  }
  return CDAG_OK;
}

typedef struct { uint64_t v; int64_t t; } vt;

static int cmp_vt(const void *a, const void *b) {
  const vt *x = a, *y = b;
  if (x->v != y->v) return x->v < y->v ? -1 : 1;
  return (x->t > y->t) - (x->t < y->t);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* `rank R like M ...`: R's tokens against M's. */
static int like_line(sbuf *o, const rblock *m, const rblock *r) {
  int64_t n = m->ntok, na = 0, nt = 0;
  vt *a = malloc(((size_t)n + 1) * sizeof *a);
  int64_t *t = malloc(((size_t)n + 1) * sizeof *t);
  if (!a || !t) return free(a), free(t), CDAG_NOMEM("ranks of a phase");
  for (int64_t i = 0; i < n; i++) {
    if (m->addr[i]) a[na++] = (vt){m->val[i], i};
    else if (r->val[i] != m->val[i]) t[nt++] = i;
  }
  qsort(a, (size_t)na, sizeof *a, cmp_vt);
  char buf[96];
  int rc = put(o, buf, (size_t)snprintf(buf, sizeof buf, "rank %d like %d", r->rank, m->rank));
  for (int64_t i = 0, j; i < na && !rc; i = j) {   /* runs of one difference, in order of value */
    uint64_t d = r->val[a[i].t] - m->val[a[i].t];
    for (j = i + 1; j < na; j++) {
      uint64_t dj = r->val[a[j].t] - m->val[a[j].t];
      if (dj == d) continue;
      if (a[j].v != a[j - 1].v) break;
      t[nt++] = a[j].t;   /* the same address moved apart: a token of its own */
    }
    if (d) rc = put(o, buf, (size_t)snprintf(buf, sizeof buf, " a 0x%" PRIx64 " 0x%" PRIx64 " %" PRId64, a[i].v, a[j - 1].v, (int64_t)d));
  }
  qsort(t, (size_t)nt, sizeof *t, cmp_i64);
  for (int64_t i = 0; i < nt && !rc; i++)
    rc = put(o, buf, (size_t)snprintf(buf, sizeof buf, " t %" PRId64 " %" PRId64, t[i], (int64_t)(r->val[t[i]] - m->val[t[i]])));
  free(a), free(t);
  return rc;
}

int ir_ranks_fold(const char *text, size_t len, char **out, size_t *outlen) {
  *out = NULL, *outlen = 0;
  rtext t;
  int rc = parse(text, len, 1, &t);
  int64_t nslot = 1;
  while (nslot < 2 * t.nb + 2) nslot *= 2;
  int64_t *slot = rc ? NULL : calloc((size_t)nslot, sizeof *slot);   /* model block + 1 by skeleton hash */
  if (!rc && !slot) rc = CDAG_NOMEM("ranks of a phase");
  for (int64_t i = 0; i < t.nb && !rc; i++) {
    rblock *b = &t.b[i];
    int64_t s = (int64_t)(b->hash & (uint64_t)(nslot - 1));
    for (; slot[s]; s = (s + 1) & (nslot - 1)) {
      const rblock *m = &t.b[slot[s] - 1];
      if (m->hash == b->hash && m->nskel == b->nskel && m->ntok == b->ntok && !memcmp(m->skel, b->skel, b->nskel)) {
        b->model = slot[s] - 1;
        break;
      }
    }
    if (b->model < 0) slot[s] = i + 1;
  }
  sbuf o = {0};
  for (int64_t i = 0, k = 0; i < t.nl && !rc; i++) {   /* lines as they were, folded blocks as one */
    if (k < t.nb && i == t.b[k].first && t.b[k].model >= 0) {
      rc = like_line(&o, &t.b[t.b[k].model], &t.b[k]);
      i = t.b[k++].last;
      if (!rc && t.l[i].e < text + len) rc = put(&o, "\n", 1);
      continue;
    }
    if (k < t.nb && i == t.b[k].last) k++;
    rc = put(&o, t.l[i].p, (size_t)(t.l[i].e - t.l[i].p));
    if (!rc && (t.l[i].e < text + len)) rc = put(&o, "\n", 1);
  }
  free(slot);
  rtext_free(&t);
  if (rc) return free(o.s), rc;
  if (!o.s && !(o.s = calloc(1, 1))) return CDAG_NOMEM("ranks of a phase");
  *out = o.s, *outlen = o.n;
  return CDAG_OK;
}

/* ---- unfolding ---- */

typedef struct {
  sbuf *o;
  int rank, nprocs;
  const uint64_t *lo, *hi; const int64_t *d; int64_t nr;   /* address ranges */
  const int64_t *tt, *td; int64_t nt, ti;                   /* tokens */
  int64_t tok;
  int64_t line;     /* the like line's number, 1-based (errors) */
} unfold_ctx;

static int unfold_word(void *ctx, const char *q, const char *qe, int kind, uint64_t v, int last) {
  unfold_ctx *c = ctx;
  char buf[40];
  int rc;
  if (kind == 1) {
    rc = put(c->o, buf, (size_t)snprintf(buf, sizeof buf, "%" PRIu64, (uint64_t)(c->rank + (int64_t)v) % (uint64_t)c->nprocs));
  } else if (kind == 2) {
    uint64_t d = 0;
    if (c->ti < c->nt && c->tt[c->ti] == c->tok) d = (uint64_t)c->td[c->ti++];
    else if (is_hex(q, qe)) {
      int64_t a = 0, b = c->nr;   /* the last range starting at or below v */
      while (a < b) {
        int64_t mid = (a + b) / 2;
        if (c->lo[mid] <= v) a = mid + 1;
        else b = mid;
      }
      if (a > 0 && v <= c->hi[a - 1]) d = (uint64_t)c->d[a - 1];
    }
    c->tok++;
    if (v + d > (uint64_t)INT64_MAX)   /* modulo 2^64, but a number of the format is below 2^63 */
      return cdag__error(CDAG_ERR_FORMAT, "line %lld: `rank %d like ...` moves %.*s %s", (long long)c->line, c->rank,
                         (int)(qe - q), q, (int64_t)d < 0 && v < -d ? "below 0" : "past 2^63-1");
    v += d;
    if (is_hex(q, qe)) rc = put(c->o, buf, (size_t)snprintf(buf, sizeof buf, "0x%" PRIx64, v));
    else if (qe[-1] == 'b') rc = put(c->o, buf, (size_t)snprintf(buf, sizeof buf, "%" PRIu64 "b", v));
    else rc = put(c->o, buf, (size_t)snprintf(buf, sizeof buf, "%" PRIu64, v));
  } else {
    rc = put(c->o, q, (size_t)(qe - q));
  }
  return rc ? rc : put(c->o, last ? "\n" : " ", 1);
}

/* The model of a line `rank R like M ...`: R and M, and where its changes start; 0 when the
   line is not one. */
static int like_of(const rline *line, long *r, long *m, const char **rest) {
  if (line->commented) return 0;
  rline t = trimmed(line);
  const rline *l = &t;
  if (l->e - l->p < 13 || memcmp(l->p, "rank ", 5)) return 0;
  const char *q = l->p + 5, *x = q;
  while (x < l->e && *x >= '0' && *x <= '9') x++;
  if (x == q || l->e - x < 7 || memcmp(x, " like ", 6)) return 0;
  *r = (long)decimal(q, x, INT32_MAX);
  q = x += 6;
  while (x < l->e && *x >= '0' && *x <= '9') x++;
  *m = (long)decimal(q, x, INT32_MAX);
  *rest = x;
  return 1;
}

/* A signed or unsigned decimal, or hex after 0x, ending at a blank or the line's end. */
static int number(const char **q, const char *e, int hex, int sign, uint64_t *v) {
  const char *p = *q;
  int neg = sign && p < e && *p == '-';
  if (neg) p++;
  if (hex && (e - p < 3 || p[0] != '0' || p[1] != 'x')) return 0;
  if (hex) p += 2;
  const char *a = p;
  uint64_t x = 0;
  for (; p < e && *p != ' '; p++) {
    int dgt = *p >= '0' && *p <= '9' ? *p - '0' : hex && *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
    if (dgt < 0 || p - a >= (hex ? 16 : 19)) return 0;
    x = x * (hex ? 16u : 10u) + (uint64_t)dgt;
  }
  if (p == a) return 0;
  *v = neg ? 0 - x : x;
  *q = p;
  return 1;
}

/* One `rank R like M ...` line (l, its number ln) unfolded from M's block. */
/* Rank -> its block (>= 0), -2 given by a `like` line, -1 not yet: sparse, so a file naming
   2^31 ranks and giving three costs three entries. */
static int64_t blk_get(Pvoid_t blk, long r) {
  PWord_t pv = (PWord_t)JudyLGet(blk, (Word_t)r, PJE0);
  return pv ? (int64_t)*pv : -1;
}

static int blk_put(Pvoid_t *blk, long r, int64_t v) {
  PWord_t pv = (PWord_t)JudyLIns(blk, (Word_t)r, PJE0);
  if (pv == PJERR) return CDAG_NOMEM("ranks of a phase");
  *pv = (Word_t)v;
  return CDAG_OK;
}

/* The most text a folded file of len bytes may unfold to: 1024 times its size and 64 MiB
   more, and never above IR_UNFOLD_MAX (a like line copies a whole block: a small file could
   otherwise ask for gigabytes). */
static size_t unfold_limit(size_t len) {
  size_t lim = (size_t)64 << 20;
  if (len < (IR_UNFOLD_MAX - lim) / 1024) lim += 1024 * len;
  else lim = IR_UNFOLD_MAX;
  return lim < IR_UNFOLD_MAX ? lim : IR_UNFOLD_MAX;
}

/* The end of [q, e) before a comment that ends the line (two slashes, `#`, or a slash and a
   star) and the blanks before it: a hand-written `rank R like M` may say what it is. */
static const char *before_comment(const char *q, const char *e) {
  const char *c = q;
  while (c < e && *c != '#' && !(*c == '/' && c + 1 < e && (c[1] == '/' || c[1] == '*'))) c++;
  while (c > q && (c[-1] == ' ' || c[-1] == '\t')) c--;
  return c;
}

static int unfold_like(sbuf *o, const rtext *t, const rline *l, int64_t ln, Pvoid_t blk, size_t limit, int newline) {
  long r = -1, m = -1;
  const char *q = NULL, *e = trimmed(l).e;
  like_of(l, &r, &m, &q);
  e = before_comment(q, e);
  if (r < 0 || r >= t->nprocs || m < 0 || m >= t->nprocs || blk_get(blk, m) < 0)
    return cdag__error(CDAG_ERR_FORMAT, "line %lld: `rank R like M` of no rank written in full before it", (long long)ln + 1);
  int64_t n = 0;
  for (const char *x = q; x < e; x++) n += *x == ' ';
  uint64_t *lo = malloc(((size_t)n + 1) * sizeof *lo), *hi = malloc(((size_t)n + 1) * sizeof *hi);
  int64_t *d = malloc(((size_t)n + 1) * sizeof *d), *tt = malloc(((size_t)n + 1) * sizeof *tt), *td = malloc(((size_t)n + 1) * sizeof *td);
  int rc = lo && hi && d && tt && td ? CDAG_OK : CDAG_NOMEM("ranks of a phase");
  int64_t nr = 0, nt = 0;
  while (!rc && q < e) {
    uint64_t x, y, z;
    int ok = 0;
    if (e - q > 3 && !memcmp(q, " a ", 3)) {
      q += 3;
      ok = number(&q, e, 1, 0, &x) && q < e && *q++ == ' ' && number(&q, e, 1, 0, &y) && q < e && *q++ == ' ' &&
           number(&q, e, 0, 1, &z) && x <= y && (!nr || x > hi[nr - 1]);
      if (ok) lo[nr] = x, hi[nr] = y, d[nr++] = (int64_t)z;
    } else if (e - q > 3 && !memcmp(q, " t ", 3)) {
      q += 3;
      ok = number(&q, e, 0, 0, &x) && q < e && *q++ == ' ' && number(&q, e, 0, 1, &z) && x < INT64_MAX &&
           (!nt || (int64_t)x > tt[nt - 1]);
      if (ok) tt[nt] = (int64_t)x, td[nt++] = (int64_t)z;
    }
    if (!ok) rc = cdag__error(CDAG_ERR_FORMAT, "line %lld: `rank %ld like %ld`: not ` a LO HI D` ranges in order, then ` t T D` tokens in order",
                              (long long)ln + 1, r, m);
  }
  const rblock *mb = &t->b[blk_get(blk, m)];
  if (!rc && o->n + (size_t)(t->l[mb->last].e - t->l[mb->first].p) + 64 > limit)
    rc = cdag__error(CDAG_ERR_FORMAT, "line %lld: the folded ranks unfold to more than %llu MiB of text (1024 times "
                     "the file and 64 MiB)", (long long)ln + 1, (unsigned long long)(limit >> 20));
  unfold_ctx c = {o, (int)r, t->nprocs, lo, hi, d, nr, tt, td, nt, 0, 0, ln + 1};
  char head[48];
  if (!rc) rc = put(o, head, (size_t)snprintf(head, sizeof head, "rank %ld {\n", r));
  for (int64_t k = mb->first + 1; k < mb->last && !rc; k++) rc = each_word(&t->l[k], (int)m, t->nprocs, unfold_word, &c);
  if (!rc) rc = put(o, "}\n", newline ? 2 : 1);
  if (!rc && c.ti != nt)
    rc = cdag__error(CDAG_ERR_FORMAT, "line %lld: `rank %ld like %ld` changes token %lld, of %lld", (long long)ln + 1, r, m,
                     (long long)tt[c.ti], (long long)c.tok);
  free(lo), free(hi), free(d), free(tt), free(td);
  return rc;
}

int ir_ranks_unfold(const char *text, size_t len, char **out, size_t *outlen) {
  *out = NULL, *outlen = 0;
  rtext t;
  int rc = parse(text, len, 0, &t);
  Pvoid_t blk = NULL;
  size_t limit = unfold_limit(len);
  int folded = 0;
  long r, m;
  const char *rest;
  for (int64_t i = 0; !rc && t.nprocs && i < t.nl; i++) folded |= like_of(&t.l[i], &r, &m, &rest);
  sbuf o = {0};
  for (int64_t i = 0, k = 0; !rc && folded && i < t.nl; i++) {
    const rline *l = &t.l[i];
    if (k < t.nb && i == t.b[k].first) {   /* a block in full: as it is, and a model */
      if (blk_get(blk, t.b[k].rank) == -1) rc = blk_put(&blk, t.b[k].rank, k);
      for (; i <= t.b[k].last && !rc; i++) {
        rc = put(&o, t.l[i].p, (size_t)(t.l[i].e - t.l[i].p));
        if (!rc && t.l[i].e < text + len) rc = put(&o, "\n", 1);
      }
      i--, k++;
      continue;
    }
    if (like_of(l, &r, &m, &rest)) {
      if (r >= 0 && r < t.nprocs && blk_get(blk, r) != -1)   /* each rank once */
        rc = cdag__error(CDAG_ERR_FORMAT, "line %lld: rank %ld was given before", (long long)i + 1, r);
      else rc = unfold_like(&o, &t, l, i, blk, limit, l->e < text + len);
      if (!rc && o.n > limit)   /* tokens grow on the way out (0x0 + D): the text as written */
        rc = cdag__error(CDAG_ERR_FORMAT, "line %lld: the folded ranks unfold to more than %llu MiB of text (1024 "
                         "times the file and 64 MiB)", (long long)i + 1, (unsigned long long)(limit >> 20));
      if (!rc) rc = blk_put(&blk, r, -2);   /* given, not a model */
      continue;
    }
    rc = put(&o, l->p, (size_t)(l->e - l->p));
    if (!rc && l->e < text + len) rc = put(&o, "\n", 1);
  }
  Word_t freed = JudyLFreeArray(&blk, PJE0);
  (void)freed;
  rtext_free(&t);
  if (rc || !folded) return free(o.s), rc;
  *out = o.s, *outlen = o.n;
  return CDAG_OK;
}

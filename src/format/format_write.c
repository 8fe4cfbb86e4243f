/* cdag — src/format/format_write.c: saving graphs in the text format (docs/format.md).
 *
 * Writes `num_ranks` and the communicators, then one block per rank that has ops,
 * dependencies or scratch: its ops in program order (rank_ops when the graph is finalized,
 * else the order of ids), every field but a tag of 0 explicitly (addr included, so
 * reloading never invents buffers), the GOAL cpu/nic when set, `wait` on joins; native
 * collectives and waits as their own lines (not the messages they became); then its
 * explicit dependencies as `requires` lines and its scratch regions as added. Labels: the
 * op's own when it is an identifier not yet used in the rank; an op a dependency names and
 * that has none gets a generated `l<id>` (made unique with a `_<k>` suffix); other ops go
 * unlabelled, which keeps recordings small. Loading the output gives the same graph. Cost:
 * O(n log n) (ops, dependencies and scratch are sorted by rank). */
#include <Judy.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "format/format.h"

typedef struct {
  const cdag_graph *g;
  FILE *f;
  uint8_t *referenced;    /* op -> named by a dependency (its generated label is written) */
  int64_t *wait_head;     /* wait op -> its first dependency (then dep_next), -1 */
  int64_t *dep_next;
  int64_t *name_off;      /* op -> offset of its label in names (valid for the current rank) */
  char *names;            /* labels of the current rank, NUL-terminated */
  int64_t names_len, names_cap;
  Pvoid_t used;           /* JudyHS: labels used in the current rank */
  const char **waits;     /* the labels of the wait being written */
  int64_t waits_cap;
} writer;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorted keys rank << 32 | index, for n items whose rank is rank_of[i]. */
static uint64_t *by_rank(const int32_t *rank_of, int64_t n) {
  uint64_t *k = malloc((size_t)(n ? n : 1) * sizeof *k);
  if (!k) return NULL;
  for (int64_t i = 0; i < n; i++) k[i] = (uint64_t)(uint32_t)rank_of[i] << 32 | (uint64_t)i;
  qsort(k, (size_t)n, sizeof *k, cmp_u64);
  return k;
}

static int is_identifier(const char *s) {
  if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
  return 1;
}

/* Claims name for op if no other op of the rank has it; 1 if claimed, 0 if taken. */
static int claim(writer *w, int32_t op, const char *name, int *rc) {
  int64_t len = (int64_t)strlen(name);
  PPvoid_t pv = JudyHSIns(&w->used, (void *)name, (Word_t)len, PJE0);
  if (pv == PJERR) {
    *rc = CDAG_NOMEM("labels");
    return 0;
  }
  if (*pv) return 0;
  *pv = (void *)1;
  if ((*rc = base_grow((void **)&w->names, w->names_len, &w->names_cap, (int64_t)len + 1, 1, "labels"))) return 0;
  memcpy(w->names + w->names_len, name, (size_t)len + 1);
  w->name_off[op] = w->names_len;
  w->names_len += len + 1;
  return 1;
}

/* Claims label l, which is no identifier, as one: every byte outside [A-Za-z0-9_] becomes
   '_', a leading digit gets a '_' before it, and a name taken gets _2, _3, ... ("halo north"
   is saved as halo_north). */
static int claim_spelled(writer *w, int32_t op, const char *l) {
  char name[80], base[64];
  size_t n = 0;
  if (*l >= '0' && *l <= '9') base[n++] = '_';
  for (; *l && n + 1 < sizeof base; l++) {
    int ok = (*l >= 'a' && *l <= 'z') || (*l >= 'A' && *l <= 'Z') || (*l >= '0' && *l <= '9') || *l == '_';
    base[n++] = ok ? *l : '_';
  }
  base[n] = 0;
  int rc = CDAG_OK;
  snprintf(name, sizeof name, "%s", base);
  for (int k = 2; !claim(w, op, name, &rc); k++) {
    if (rc) return rc;
    snprintf(name, sizeof name, "%s_%d", base, k);
  }
  return rc;
}

/* Gives every op of the rank (ops[0..n)) a unique label. */
static int name_ops(writer *w, const int32_t *ops, int64_t n) {
  int rc = CDAG_OK;
  JudyHSFreeArray(&w->used, PJE0);
  w->names_len = 0;
  for (int64_t i = 0; i < n; i++) {
    const char *l = ir_label(w->g, ops[i]);
    w->name_off[ops[i]] = -1;
    if (is_identifier(l)) claim(w, ops[i], l, &rc);
    if (rc) return rc;
  }
  for (int64_t i = 0; i < n && !rc; i++) {   /* labels that are no identifiers, made one */
    const char *l = ir_label(w->g, ops[i]);
    if (w->name_off[ops[i]] < 0 && l && *l) rc = claim_spelled(w, ops[i], l);
  }
  if (rc) return rc;
  for (int64_t i = 0; i < n; i++) {
    if (w->name_off[ops[i]] >= 0 || !w->referenced[ops[i]]) continue;   /* unnamed: nothing refers to it */
    char name[48];
    snprintf(name, sizeof name, "l%d", ops[i]);
    for (int k = 1; !claim(w, ops[i], name, &rc); k++) {
      if (rc) return rc;
      snprintf(name, sizeof name, "l%d_%d", ops[i], k);
    }
  }
  return CDAG_OK;
}

static const char *name_of(const writer *w, int32_t op) { return w->names + w->name_off[op]; }


/* ---- the one writer of operation lines ---- */

/* Appends to a buffer snprintf-style: len counts what the line needs, the buffer holds what fits. */
typedef struct { char *p; size_t cap, len; } line_buf;

/* n bytes at s, kept NUL-terminated as long as they fit (as snprintf). */
static void put_s(line_buf *b, const char *s, size_t n) {
  if (b->len + n < b->cap) {
    memcpy(b->p + b->len, s, n);
    b->p[b->len + n] = 0;
  } else {
    for (size_t i = 0; i < n; i++)
      if (b->len + i + 1 < b->cap) b->p[b->len + i] = s[i], b->p[b->len + i + 1] = 0;
  }
  b->len += n;
}

static void put_u(line_buf *b, unsigned long long v, unsigned base) {
  char d[24];
  int n = 24;
  do d[--n] = "0123456789abcdef"[v % base]; while ((v /= base));
  put_s(b, d + n, (size_t)(24 - n));
}

/* Appends to a buffer as snprintf would, for the directives the lines use (%s, %d, %lld,
   %llu, %llx): a recorder writes a line per MPI call, and vsnprintf was a quarter of its
   cost per call. */
__attribute__((format(printf, 2, 3))) static void ap(line_buf *b, const char *fmt, ...) {
  va_list va;
  va_start(va, fmt);
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') {   /* the text up to the next directive */
      const char *q = p;
      while (*q && *q != '%') q++;
      put_s(b, p, (size_t)(q - p));
      p = q - 1;
      continue;
    }
    int ll = p[1] == 'l' && p[2] == 'l';
    p += ll ? 3 : 1;
    if (*p == 's') {
      const char *q = va_arg(va, const char *);
      put_s(b, q, strlen(q));
    } else if (*p == 'd') {
      long long v = ll ? va_arg(va, long long) : va_arg(va, int);
      if (v < 0) put_s(b, "-", 1);
      put_u(b, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, 10);
    } else {   /* %llu, %llx */
      put_u(b, ll ? va_arg(va, unsigned long long) : va_arg(va, unsigned), *p == 'x' ? 16 : 10);
    }
  }
  va_end(va);
}

/* Step i of blocks at addresses at[] (i >= 1): the distance from block i - 1. */
static int64_t step_at(const uint64_t *at, uint64_t i) { return (int64_t)(at[i] - at[i - 1]); }

/* `name s1 .. s(n-1)`: the steps between n blocks at addresses at[], either way, a run of
   equal steps as `S*N` and of steps that grow by one amount as `S+D*N` (at least 3): an
   indexed type's thousands of displacements are then a few words. */
static void ap_steps(line_buf *b, const char *name, const uint64_t *at, uint64_t n) {
  ap(b, "%s", name);
  for (uint64_t i = 1, j; i < n; i = j) {
    int64_t s = step_at(at, i), d = 0, e;
    if (i + 1 < n && ckd_sub(&d, step_at(at, i + 1), s)) d = 0;   /* D does not fit: no run that grows */
    for (j = i + 1; j < n && !ckd_sub(&e, step_at(at, j), step_at(at, j - 1)) && e == d; j++) {}
    if (j - i >= (d ? 3u : 2u)) {
      if (d) ap(b, " %lld+%lld*%llu", (long long)s, (long long)d, (unsigned long long)(j - i));
      else ap(b, " %lld*%llu", (long long)s, (unsigned long long)(j - i));
    } else {
      ap(b, " %lld", (long long)s);
      j = i + 1;
    }
  }
}

/* Blocks at addresses at[0..n) that lie one stride apart, at least len bytes (either sign
   when signed): *stride, and 1. A list the recorder made of such blocks is written as the
   stride, which the loader keeps as one strided copy. */
static int at_stride(const uint64_t *at, uint64_t n, uint64_t len, int sign, uint64_t *stride) {
  int64_t s = step_at(at, 1);
  for (uint64_t i = 2; i < n; i++)
    if (step_at(at, i) != s) return 0;
  if (s == INT64_MIN || (uint64_t)(s < 0 ? -s : s) < len || (s < 0 && !sign)) return 0;
  *stride = (uint64_t)s;
  return 1;
}

/* A native collective call (collective.c), as docs/format.md spells it. */
static void line_call(line_buf *b, const ir_call *c, int rank, const uint64_t *lists, int32_t members) {
  unsigned long long in = c->in, out = c->out, n = c->count;
  const ir_coll_info *k = ir_coll_get(c->kind);
  int root = c->root == rank;
  ap(b, "%s", k->name);
  if (k->reduces) ap(b, " %llu %s %s", n, ir_type_name(c->type), ir_rop_name(c->rop));
  else if (k->send != IR_SLOTS_NONE) ap(b, " %llub", n);
  if (c->root >= 0) ap(b, " root %d", c->root);
  if (c->kind == IR_COLL_BCAST) ap(b, " addr 0x%llx", out);   /* MPI_Bcast's one buffer */
  else if (k->send != IR_SLOTS_NONE) {                         /* root-only sides as the kind's slots */
    if (!k->send_root || root) ap(b, " in 0x%llx", in);
    if (!k->recv_root || root) ap(b, " out 0x%llx", out);
  }
  static const char *const list_names[] = {"counts", "displs", "recvcounts", "recvdispls"};
  for (int l = 0; lists && l < ir_coll_lists(c->kind, root); l++) {   /* vector kinds */
    ap(b, " %s", list_names[l]);
    for (int32_t m = 0; m < members; m++) ap(b, " %llu", (unsigned long long)lists[(int64_t)l * members + m]);
  }
  if (c->comm) ap(b, " comm %d", c->comm);
  if (c->nonblocking) ap(b, " nonblocking");
}

static void line_message(line_buf *b, const ir_line *l) {
  int send = l->kind == IR_SEND;
  ap(b, "%s %llub %s %d", send ? "send" : "recv", (unsigned long long)l->bytes, send ? "to" : "from", l->peer);
  if (l->tag) ap(b, " tag %d", l->tag);
  if (l->comm >= 0) ap(b, " comm %d", l->comm);
  ap(b, " addr 0x%llx", (unsigned long long)l->addr);
}

/* ` blocks N stride T` of a one-sided access whose target side is in blocks. */
static void access_blocks(line_buf *b, const ir_line *l) {
  if (l->blocks < 2) return;
  ap(b, " blocks %llu", (unsigned long long)l->blocks);
  if (l->to_stride != l->bytes / l->blocks) ap(b, " stride %llu", (unsigned long long)l->to_stride);
}

size_t ir_format_line(char *buf, size_t cap, const char *label, const ir_line *l) {
  line_buf b = {buf, cap, 0};
  unsigned long long bytes = l->bytes, a = l->addr, a2 = l->addr2;
  if (cap) buf[0] = 0;
  if (label) ap(&b, "%s: ", label);
  switch (l->kind) {
    case IR_LINE_COLL: line_call(&b, l->call, l->rank, l->lists, l->members); return b.len;
    case IR_LINE_WAIT:
      ap(&b, "wait");
      for (int64_t k = 0; k < l->nwaits; k++) ap(&b, " %s", l->waits[k]);
      return b.len;
    case IR_GET:
    case IR_PUT:
      ap(&b, "%s %llub %s %d", l->kind == IR_GET ? "get" : "put", bytes, l->kind == IR_GET ? "from" : "to", l->peer);
      if (l->seg >= 0) ap(&b, " seg %d", l->seg);   /* not expanded yet: addr2 is an offset */
      ap(&b, " at 0x%llx addr 0x%llx", a2, a);
      access_blocks(&b, l);
      if (l->comm > 0) ap(&b, " comm %d", l->comm);
      if (l->wait) ap(&b, " wait");
      return b.len;
    case IR_ACC: {
      int size = ir_type_size(l->peer >> 8);
      ap(&b, "accumulate %llu %s %s to %d", size ? bytes / (unsigned)size : 0ULL, ir_type_name(l->peer >> 8),
         ir_rop_name(l->peer & 0xff), l->tag);
      if (l->seg >= 0) ap(&b, " seg %d", l->seg);
      ap(&b, " at 0x%llx addr 0x%llx", a2, a);
      access_blocks(&b, l);
      if (l->comm > 0) ap(&b, " comm %d", l->comm);
      if (l->wait) ap(&b, " wait");
      return b.len;
    }
    case IR_FENCE:
      ap(&b, "fence");
      if (l->comm > 0) ap(&b, " comm %d", l->comm);
      if (l->wait) ap(&b, " wait");
      return b.len;
    case IR_SEND:
    case IR_RECV: line_message(&b, l); break;
    case IR_REDUCE: {
      int size = ir_type_size(l->peer);
      ap(&b, "reduce %llu %s %s in 0x%llx inout 0x%llx", size ? bytes / (unsigned)size : 0ULL, ir_type_name(l->peer),
         ir_rop_name(l->tag), a2, a);
      break;
    }
    case IR_COPY:
      ap(&b, "copy %llub from 0x%llx to 0x%llx", bytes, a2, a);
      if (l->blocks > 1) {   /* strided: a stride equal to the block length is the default */
        unsigned long long len = bytes / l->blocks;
        uint64_t from = l->from_stride, to = l->to_stride;
        int from_listed = l->from_at && !at_stride(l->from_at, l->blocks, len, 1, &from);
        int to_listed = l->to_at && !at_stride(l->to_at, l->blocks, len, 1, &to);
        ap(&b, " blocks %llu", (unsigned long long)l->blocks);
        if (from_listed) ap_steps(&b, " from_steps", l->from_at, l->blocks);
        else if (from != len) ap(&b, " from_stride %lld", (long long)(int64_t)from);
        if (to_listed) ap_steps(&b, " to_steps", l->to_at, l->blocks);
        else if (to != len) ap(&b, " to_stride %lld", (long long)(int64_t)to);
      }
      break;
    default:
      if (!l->rlen && !l->wlen) {
        ap(&b, "calc %llu", bytes);
        break;
      }
      ap(&b, "compute %llu", bytes);
      if (l->rlen == IR_READS_ALL) ap(&b, " reads all");
      else if (l->rlen) ap(&b, " reads %llub at 0x%llx", (unsigned long long)l->rlen, a2);
      if (l->wlen) ap(&b, " writes %llub at 0x%llx", (unsigned long long)l->wlen, a);
      if (l->wlen && l->blocks > 1) {   /* blocks of a computation: a stride equal to their length is the default */
        uint64_t to = l->to_stride;
        int listed = l->to_at && !at_stride(l->to_at, l->blocks, l->wlen / l->blocks, 0, &to);
        ap(&b, " blocks %llu", (unsigned long long)l->blocks);
        if (listed) ap_steps(&b, " steps", l->to_at, l->blocks);
        else if (to != l->wlen / l->blocks) ap(&b, " stride %llu", (unsigned long long)to);
      }
      break;
  }
  if (l->cpu >= 0) ap(&b, " cpu %d", l->cpu);
  if (l->nic >= 0) ap(&b, " nic %d", l->nic);
  if (l->wait) ap(&b, " wait");
  return b.len;
}

int ir_write_line(FILE *f, const char *label, const ir_line *l) {
  char small[256];
  size_t n = ir_format_line(small, sizeof small, label, l);
  char *buf = n < sizeof small ? small : malloc(n + 1);
  if (!buf) return CDAG_NOMEM("a graph line");
  if (buf != small) ir_format_line(buf, n + 1, label, l);
  fwrite(buf, 1, n, f);
  fputc('\n', f);
  if (buf != small) free(buf);
  return CDAG_OK;
}

const char *ir_compact_label(uint32_t n, char buf[IR_COMPACT_LABEL]) {
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  char rev[8];
  int k = 0, i = 0;
  do rev[k++] = digits[n % 62]; while ((n /= 62) && k < 7);
  buf[i++] = 'o';
  while (k) buf[i++] = rev[--k];
  buf[i] = 0;
  return buf;
}

/* An op of the graph as its line says it: what expansion made of it is written as it was
   (a native collective or wait as its own line, a get/put/fence as such). */
static int write_op(writer *w, int32_t op) {
  const cdag_graph *g = w->g;
  int os = g->os ? g->os[op] : IR_OS_NONE, kind = g->kind[op];
  ir_line l = {.kind = kind, .bytes = g->bytes[op], .peer = g->peer[op], .tag = g->tag[op], .addr = g->addr[op],
               .addr2 = g->addr2 ? g->addr2[op] : 0, .seg = -1, .cpu = g->cpu ? g->cpu[op] : -1,
               .nic = g->nic ? g->nic[op] : -1, .comm = -1, .rank = g->rank[op]};
  if (ir_is_strided(g, op)) {   /* a copy's blocks, or a computation's (their `to` side) */
    ir_blocks k = ir_op_blocks(g, op);
    l.blocks = k.n, l.from_stride = k.from, l.to_stride = k.to;
    l.from_at = k.from_at, l.to_at = k.to_at;   /* offsets: their steps are the addresses' */
    if (k.from_at) l.addr2 += k.from_at[0];     /* a line names block 0's address, the lowest's in the graph */
    if (k.to_at) l.addr += k.to_at[0];
  }
  if (ir_is_access(g, op)) {   /* the target side's blocks */
    ir_blocks k = ir_access_blocks(g, op);
    l.blocks = k.n, l.to_stride = k.to;
  }
  if (ir_is_compute(g, op)) {
    l.rlen = g->cr_len[op];
    l.wlen = g->cw_len[op];
  }
  l.wait = g->join && g->join[op] == IR_JOIN_AFTER && os != IR_OS_WAIT;
  if (os == IR_OS_COLL) {
    l.kind = IR_LINE_COLL;
    l.call = &g->calls[g->call[op]];
    l.lists = ir_call_lists(g, l.call);
    l.members = ir_comm_members(g, l.call->comm, &(const int32_t *){NULL});
  } else if (os == IR_OS_WAIT) {
    int64_t n = 0;
    for (int64_t d = w->wait_head[op]; d >= 0; d = w->dep_next[d]) n++;
    int rc = base_grow((void **)&w->waits, 0, &w->waits_cap, n, sizeof *w->waits, "wait labels");
    if (rc) return rc;
    n = 0;
    for (int64_t d = w->wait_head[op]; d >= 0; d = w->dep_next[d]) w->waits[n++] = name_of(w, g->dep[2 * d]);
    l.kind = IR_LINE_WAIT;
    l.waits = w->waits;
    l.nwaits = n;
  } else if (os == IR_OS_GET || os == IR_OS_PUT || kind == IR_GET || kind == IR_PUT) {
    l.kind = os == IR_OS_GET || kind == IR_GET ? IR_GET : IR_PUT;
    l.addr2 = g->addr2 ? g->addr2[op] : 0;
    if (!os && g->tag[op] >= 0) l.seg = g->tag[op];
  } else if (os == IR_OS_ACC || kind == IR_ACC) {
    l.kind = IR_ACC;
    l.peer = g->acc[op];
    l.tag = g->peer[op];
    if (!os && g->tag[op] >= 0) l.seg = g->tag[op];
  } else if (os == IR_OS_FENCE || kind == IR_FENCE) {
    l.kind = IR_FENCE;
  }
  if (g->oscomm && (l.kind == IR_GET || l.kind == IR_PUT || l.kind == IR_ACC || l.kind == IR_FENCE))
    l.comm = g->oscomm[op];
  fputs("  ", w->f);
  return ir_write_line(w->f, w->name_off[op] >= 0 ? name_of(w, op) : NULL, &l);
}

/* Sorted views of what belongs to each rank. */
typedef struct {
  int32_t *ops;       /* all ops grouped by rank, program order within a rank */
  uint64_t *deps;     /* rank << 32 | dependency index */
  uint64_t *scr;      /* rank << 32 | scratch index */
  uint64_t *sdeps;    /* rank << 32 | start dependency index */
  uint64_t *seg;      /* rank << 32 | segment index */
  int32_t *dep_rank;
} rank_views;

static int make_views(const cdag_graph *g, rank_views *v) {
  memset(v, 0, sizeof *v);
  v->ops = malloc((size_t)(g->nops ? g->nops : 1) * sizeof *v->ops);
  int64_t nd = g->ndeps > g->nsdeps ? g->ndeps : g->nsdeps;
  v->dep_rank = malloc((size_t)(nd ? nd : 1) * sizeof *v->dep_rank);
  if (!v->ops || !v->dep_rank) return CDAG_NOMEM("writer");
  if (g->state != IR_BUILDING && g->rank_ops) {
    memcpy(v->ops, g->rank_ops, (size_t)g->nops * sizeof *v->ops);
  } else {
    uint64_t *k = by_rank(g->rank, g->nops);
    if (!k) return CDAG_NOMEM("writer");
    for (int64_t i = 0; i < g->nops; i++) v->ops[i] = (int32_t)(k[i] & 0xffffffffu);
    free(k);
  }
  for (int64_t i = 0; i < g->ndeps; i++) v->dep_rank[i] = g->rank[g->dep[2 * i + 1]];
  v->deps = by_rank(v->dep_rank, g->ndeps);
  v->scr = by_rank(g->scr_rank, g->nscratch);
  for (int64_t i = 0; i < g->nsdeps; i++) v->dep_rank[i] = g->rank[g->sdep[2 * i + 1]];
  v->sdeps = by_rank(v->dep_rank, g->nsdeps);
  v->seg = by_rank(g->seg_rank, g->nseg);
  if (!v->deps || !v->scr || !v->sdeps || !v->seg) return CDAG_NOMEM("writer");
  return CDAG_OK;
}

static void free_views(rank_views *v) {
  free(v->ops);
  free(v->deps);
  free(v->scr);
  free(v->sdeps);
  free(v->seg);
  free(v->dep_rank);
}

static int write_ranks(writer *w, const rank_views *v) {
  const cdag_graph *g = w->g;
  int64_t io = 0, id = 0, is = 0, isd = 0, ig = 0;
  int rc;
  while (io < g->nops || id < g->ndeps || is < g->nscratch || isd < g->nsdeps || ig < g->nseg) {
    int32_t r = INT32_MAX;
    if (ig < g->nseg && (int32_t)(v->seg[ig] >> 32) < r) r = (int32_t)(v->seg[ig] >> 32);
    if (io < g->nops && g->rank[v->ops[io]] < r) r = g->rank[v->ops[io]];
    if (id < g->ndeps && (int32_t)(v->deps[id] >> 32) < r) r = (int32_t)(v->deps[id] >> 32);
    if (is < g->nscratch && (int32_t)(v->scr[is] >> 32) < r) r = (int32_t)(v->scr[is] >> 32);
    if (isd < g->nsdeps && (int32_t)(v->sdeps[isd] >> 32) < r) r = (int32_t)(v->sdeps[isd] >> 32);
    int64_t o0 = io;
    while (io < g->nops && g->rank[v->ops[io]] == r) io++;
    if ((rc = name_ops(w, v->ops + o0, io - o0))) return rc;
    fprintf(w->f, "\nrank %d {\n", r);
    for (int64_t i = o0; i < io; i++)   /* what expansions added is not written */
      if (!g->os || (g->os[v->ops[i]] != IR_OS_PARTNER && g->os[v->ops[i]] != IR_OS_COLL_PART))
        if ((rc = write_op(w, v->ops[i]))) return rc;
    for (; ig < g->nseg && (int32_t)(v->seg[ig] >> 32) == r; ig++) {
      int64_t k = (int64_t)(v->seg[ig] & 0xffffffffu);
      fprintf(w->f, "  segment 0x%llx %llub\n", (unsigned long long)g->seg_base[k], (unsigned long long)g->seg_len[k]);
    }
    for (; id < g->ndeps && (int32_t)(v->deps[id] >> 32) == r; id++) {
      int64_t d = (int64_t)(v->deps[id] & 0xffffffffu);
      if (g->os && g->os[g->dep[2 * d + 1]] == IR_OS_WAIT) continue;   /* written by its wait */
      fprintf(w->f, "  %s requires %s\n", name_of(w, g->dep[2 * d + 1]), name_of(w, g->dep[2 * d]));
    }
    for (; isd < g->nsdeps && (int32_t)(v->sdeps[isd] >> 32) == r; isd++) {
      int64_t d = (int64_t)(v->sdeps[isd] & 0xffffffffu);
      fprintf(w->f, "  %s irequires %s\n", name_of(w, g->sdep[2 * d + 1]), name_of(w, g->sdep[2 * d]));
    }
    for (; is < g->nscratch && (int32_t)(v->scr[is] >> 32) == r; is++) {
      int64_t s = (int64_t)(v->scr[is] & 0xffffffffu);
      if (g->ncalls && g->scr_addr[s] >= IR_COLL_SCRATCH) continue;   /* the native collectives' own */
      if (g->nwritten && ir_in_acc_scratch(g->scr_addr[s]))
        continue;   /* one-sided expansion's own (loading adds them again) */
      fprintf(w->f, "  scratch 0x%llx %llub\n", (unsigned long long)g->scr_addr[s], (unsigned long long)g->scr_len[s]);
    }
    fprintf(w->f, "}\n");
  }
  return CDAG_OK;
}

/* A user's MPI_Op exists only in its process: the format has no name for it. */
static int user_op_check(const cdag_graph *g) {
  for (int64_t i = 0; i < g->nops; i++)
    if (g->kind[i] == IR_REDUCE && ir_rop_is_user(g->tag[i]))
      return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: a reduction with a user-defined MPI_Op cannot be written to a "
                         "graph file", g->rank[i]);
  return CDAG_OK;
}

/* Which ops a dependency names, and each wait's dependencies in order. */
static int index_deps(writer *w) {
  const cdag_graph *g = w->g;
  w->referenced = calloc((size_t)(g->nops ? g->nops : 1), 1);
  w->wait_head = malloc((size_t)(g->nops ? g->nops : 1) * sizeof *w->wait_head);
  w->dep_next = malloc((size_t)(g->ndeps ? g->ndeps : 1) * sizeof *w->dep_next);
  if (!w->referenced || !w->wait_head || !w->dep_next) return CDAG_NOMEM("writer");
  memset(w->wait_head, 0xff, (size_t)(g->nops ? g->nops : 1) * sizeof *w->wait_head);
  for (int64_t d = g->ndeps - 1; d >= 0; d--) {
    int32_t before = g->dep[2 * d], after = g->dep[2 * d + 1];
    w->referenced[before] = 1;
    if (g->os && g->os[after] == IR_OS_WAIT) {
      w->dep_next[d] = w->wait_head[after];
      w->wait_head[after] = d;
    } else {
      w->referenced[after] = 1;
    }
  }
  for (int64_t d = 0; d < 2 * g->nsdeps; d++) w->referenced[g->sdep[d]] = 1;
  return CDAG_OK;
}

static void write_comms(const cdag_graph *g, FILE *f) {
  for (int64_t k = 0; k < g->ncomms; k++) {
    fprintf(f, "comm %d ranks", g->comm_id[k]);
    for (int32_t i = 0; i < g->comm_n[k]; i++) fprintf(f, " %d", g->members[g->comm_first[k] + i]);
    fputc('\n', f);
  }
}

int ir_save_file(const cdag_graph *g, FILE *f) {
  if (!g || !f) return cdag__error(CDAG_ERR_ARG, "ir_save_file: graph or stream is NULL");
  int urc = user_op_check(g);
  if (urc) return urc;
  writer w = {g, f, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, 0};
  rank_views v;
  int rc = make_views(g, &v);
  if (rc == CDAG_OK) rc = index_deps(&w);
  w.name_off = malloc((size_t)(g->nops ? g->nops : 1) * sizeof *w.name_off);
  if (rc == CDAG_OK && !w.name_off) rc = CDAG_NOMEM("writer");
  if (rc == CDAG_OK) {
    fprintf(f, "// cdag graph: %lld operations\nnum_ranks %d\n", (long long)g->nops, g->nprocs);
    write_comms(g, f);
    if (g->bound) fprintf(f, "bound %llub\n", (unsigned long long)g->bound);
    rc = write_ranks(&w, &v);
  }
  free_views(&v);
  free(w.name_off);
  free(w.names);
  free(w.referenced);
  free(w.wait_head);
  free(w.dep_next);
  free(w.waits);
  JudyHSFreeArray(&w.used, PJE0);
  if (rc == CDAG_OK && (fflush(f) != 0 || ferror(f))) rc = cdag__error(CDAG_ERR_IO, "cannot write the graph file");
  return rc;
}

int cdag_graph_save(const cdag_graph *g, const char *path) {
  if (!g || !path) return cdag__error(CDAG_ERR_ARG, "cdag_graph_save: graph or path is NULL");
  /* a distributed graph holds one rank's operations: every rank would write its own part
     to the one path (it wrote an empty file) */
  if (g->myrank >= 0)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_graph_save: a distributed graph (each rank holds only its own "
                       "operations); cdag_graph_dump, called on every rank, writes the whole graph to one file",
                       g->myrank);
  int is_stdout = strcmp(path, "-") == 0;
  FILE *f = is_stdout ? stdout : fopen(path, "w");
  if (!f && errno == ENOMEM) return cdag__error(CDAG_ERR_NOMEM, "%s: out of memory opening the file", path);
  if (!f) return cdag__error(CDAG_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
  int rc = ir_save_file(g, f);
  if (!is_stdout && fclose(f) != 0 && rc == CDAG_OK) rc = cdag__error(CDAG_ERR_IO, "%s: cannot write", path);
  if (rc == CDAG_ERR_IO) cdag__error(rc, "%s: cannot write the graph file", path);
  return rc;
}

void ir_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

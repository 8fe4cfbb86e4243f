/* cdag — src/exec/mpi/part.c: writing and reading the schedule part (schema in part.h).
 *
 * Each record's writer is followed by its reader, so a change to one shows in the other.
 * Readers check counts against the bytes left before allocating, and every field against
 * what the runtime will index with it. */
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/part.h"

static int bad(const char *what) { return cdag__error(CDAG_ERR_FORMAT, "schedule part: %s", what); }

/* A count of records of at least one byte each cannot exceed the bytes left. */
static int count_ok(const wire_reader *r, uint64_t n) { return !r->failed && n <= (uint64_t)(r->end - r->p); }

static uint64_t bits_of(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static double double_of(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

static int grow(void **arr, int64_t n, int64_t *cap, size_t elem) { return base_grow(arr, n, cap, 1, elem, "schedule part"); }

/* ---- pieces and slots ---- */

static int add_piece(sched_part *p, int space, uint64_t addr, uint64_t len) {
  int rc = grow((void **)&p->pieces, p->npieces, &p->cap_pieces, sizeof *p->pieces);
  if (!rc) p->pieces[p->npieces++] = (part_piece){space, addr, len, 1, len};
  return rc;
}

void part_slot_put(part_writer *w, const det_piece *pieces, int32_t n) {
  wire_put_u(&w->colls, (uint64_t)n);
  uint64_t prev = 0;
  for (int32_t k = 0; k < n; k++) {
    wire_put_s(&w->colls, (int64_t)(pieces[k].addr - prev));
    wire_put_u(&w->colls, pieces[k].len);
    prev = pieces[k].addr + pieces[k].len;
  }
}

static int read_slot(sched_part *p, wire_reader *r) {
  int rc = grow((void **)&p->slots, p->nslots, &p->cap_slots, sizeof *p->slots);
  if (rc) return rc;
  uint64_t n = wire_get_u(r), prev = 0, bytes = 0;
  if (!count_ok(r, n)) return bad("slot");
  part_slot *sl = &p->slots[p->nslots++];
  sl->first = p->npieces;
  sl->n = (int64_t)n;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t a = prev + (uint64_t)wire_get_s(r), len = wire_get_u(r);
    if ((rc = add_piece(p, SP_USER, a, len))) return rc;
    prev = a + len;
    bytes += len;
  }
  sl->bytes = bytes;
  return r->failed ? bad("slot") : CDAG_OK;
}

static int push_i32(int32_t **arr, int64_t *n, int64_t *cap, int32_t v) {
  int rc = grow((void **)arr, *n, cap, sizeof **arr);
  if (!rc) (*arr)[(*n)++] = v;
  return rc;
}

/* ---- collectives ---- */

void part_coll_put(part_writer *w, const part_coll *c, const int32_t *members) {
  wire_buf *b = &w->colls;
  wire_put_u(b, (uint64_t)c->method);
  wire_put_u(b, (uint64_t)c->after);
  wire_put_u(b, (uint64_t)c->kind);
  wire_put_u(b, (uint64_t)(c->type < 0 ? 0 : c->type));
  wire_put_u(b, (uint64_t)(c->op < 0 ? 0 : c->op));
  wire_put_s(b, c->rootm);
  wire_put_s(b, c->setid);
  wire_put_u(b, (uint64_t)c->n);
  if (c->setid >= 0)
    for (int j = 0; j < c->n; j++) wire_put_u(b, (uint64_t)members[j]);
  wire_put_u(b, (uint64_t)c->me);
  wire_put_u(b, (uint64_t)c->nsend);
  wire_put_u(b, (uint64_t)c->nrecv);
  w->ncolls++;
}

void part_kernel_put(part_writer *w, int alg, const uint64_t *counts, int n) {
  wire_put_u(&w->colls, (uint64_t)alg);
  for (int j = 0; j < n; j++) wire_put_u(&w->colls, counts[j]);
}

void part_map_put(part_writer *w, int send_slot1, int recv_slot1) {
  wire_put_u(&w->colls, (uint64_t)send_slot1);
  wire_put_u(&w->colls, (uint64_t)recv_slot1);
}

/* The kernel kinds and algorithms the runtime builds (kernel.h). */
static int read_kernel(sched_part *p, wire_reader *r, part_coll *c) {
  c->alg = (int)wire_get_u(r);
  c->counts_first = p->ncounts;
  int kind_ok = ir_coll_get(c->kind)->kernel;
  int32_t ns = -1, nr = -1;
  if (kind_ok) det_kind_slots(c->kind, c->n, &ns, &nr);
  if (r->failed || !kind_ok || c->nsend != ns || c->nrecv != nr ||
      (c->alg != KERN_ALG_CIRCULANT && c->alg != KERN_ALG_CENSUS) ||
      (c->kind != DET_ALLREDUCE && c->alg != KERN_ALG_CIRCULANT) || (ir_coll_get(c->kind)->rooted && c->rootm < 0))
    return bad("kernel collective");
  for (int j = 0; j < c->n; j++) {
    int rc = grow((void **)&p->counts, p->ncounts, &p->cap_counts, sizeof *p->counts);
    if (rc) return rc;
    p->counts[p->ncounts++] = wire_get_u(r);
  }
  return r->failed ? bad("kernel collective") : CDAG_OK;
}

static int read_map(sched_part *p, wire_reader *r, const part_coll *c) {
  for (int j = 0; j < 2 * c->n; j++) {
    uint64_t v = wire_get_u(r);
    if (r->failed || v > (uint64_t)(j % 2 ? c->nrecv : c->nsend)) return bad("slot map");
    int rc = push_i32(&p->map, &p->nmap, &p->cap_map, (int32_t)v);
    if (rc) return rc;
  }
  return CDAG_OK;
}

static int read_coll(sched_part *p, wire_reader *r, part_coll *c, int nprocs) {
  int rc;
  c->method = (int)wire_get_u(r);
  uint64_t after = wire_get_u(r);
  c->kind = (int)wire_get_u(r);
  c->type = (int)wire_get_u(r);
  c->op = (int)wire_get_u(r);
  c->rootm = (int)wire_get_s(r);
  c->setid = wire_get_s(r);
  uint64_t n = wire_get_u(r);
  if (r->failed || n < 1 || n > (uint64_t)nprocs || c->method < SM_BARRIER || c->method > SM_KERNEL ||
      !ir_coll_get(c->kind) || c->setid < -1 || after > 1 || (after && c->method != SM_BCAST))
    return bad("collective");
  c->after = (int)after;
  c->n = (int)n;
  c->members_first = p->nmembers;
  for (int j = 0; c->setid >= 0 && j < c->n; j++) {
    uint64_t m = wire_get_u(r);
    if (r->failed || m >= (uint64_t)nprocs) return bad("collective member");
    if ((rc = push_i32(&p->members, &p->nmembers, &p->cap_members, (int32_t)m))) return rc;
  }
  uint64_t me = wire_get_u(r), ns = wire_get_u(r), nr = wire_get_u(r);
  if (r->failed || ns > n || nr > n || me >= n || c->rootm < -1 || c->rootm >= c->n) return bad("collective fields");
  c->me = (int)me;
  c->nsend = (int)ns;
  c->nrecv = (int)nr;
  c->slot_first = p->nslots;
  for (int k = 0; k < c->nsend + c->nrecv; k++)
    if ((rc = read_slot(p, r))) return rc;
  c->map_first = p->nmap;
  if (c->method == SM_KERNEL) return read_kernel(p, r, c);
  if (c->method == SM_ALLTOALLW) return read_map(p, r, c);
  return CDAG_OK;
}

/* ---- messages, copies, reductions ---- */

void part_pair_put(part_writer *w, int out, int peer, int64_t tag, int64_t npieces) {
  wire_buf *b = out ? &w->out : &w->in;
  wire_put_u(b, (uint64_t)peer);
  wire_put_u(b, (uint64_t)tag);
  wire_put_u(b, (uint64_t)npieces);
  if (out) w->nout++;
  else w->nin++;
}

void part_pair_piece(part_writer *w, int out, const part_piece *pc) {
  wire_buf *b = out ? &w->out : &w->in;
  wire_put_u(b, (uint64_t)pc->space);
  wire_put_u(b, pc->addr);
  wire_put_u(b, pc->len);
  wire_put_u(b, pc->n);
  if (pc->n > 1) wire_put_u(b, pc->stride);
}

/* Counts n more blocks of strided pieces and copies: at most PART_MAX_BLOCKS in a part, as
   a process walks them one by one where snapshots or datatypes need it. */
static int count_blocks(sched_part *p, uint64_t n) {
  if (n <= 1) return 1;
  if (n > PART_MAX_BLOCKS - p->nblocks) return 0;
  p->nblocks += n;
  return 1;
}

/* Do n blocks of len bytes at a stride fit the address space (n >= 1; n > 1: stride >= len)? */
static int blocks_ok(uint64_t addr, uint64_t len, uint64_t n, uint64_t stride) {
  if (n == 0) return 0;
  if (n == 1) return 1;
  if (stride == 0 || stride < len || n - 1 > (UINT64_MAX - len) / stride) return 0;
  return (n - 1) * stride + len <= UINT64_MAX - addr && len <= UINT64_MAX / n;
}

static int read_pairs(sched_part *p, wire_reader *r, int nprocs, part_pair **pairs, int64_t *npairs) {
  uint64_t n = wire_get_u(r);
  if (!count_ok(r, n)) return bad("messages");
  *pairs = calloc(n ? n : 1, sizeof **pairs);
  if (!*pairs) return CDAG_NOMEM("schedule messages");
  *npairs = (int64_t)n;
  for (uint64_t k = 0; k < n; k++) {
    part_pair *q = &(*pairs)[k];
    uint64_t peer = wire_get_u(r), tag = wire_get_u(r), np = wire_get_u(r);
    if (!count_ok(r, np) || peer >= (uint64_t)nprocs || tag >= PART_TAGS) return bad("message");
    q->peer = (int)peer;
    q->tag = (int)tag;
    q->n = (int64_t)np;
    q->first = p->npieces;
    for (int64_t e = 0; e < q->n; e++) {
      uint64_t space = wire_get_u(r), a = wire_get_u(r), len = wire_get_u(r), nb = wire_get_u(r);
      uint64_t stride = nb > 1 ? wire_get_u(r) : len;
      if (r->failed || space > SP_RED || !blocks_ok(a, len, nb, stride) || (nb > 1 && space != SP_USER) ||
          !count_blocks(p, nb))
        return bad("message piece");
      int rc = add_piece(p, (int)space, a, len);
      if (rc) return rc;
      p->pieces[p->npieces - 1].n = nb, p->pieces[p->npieces - 1].stride = stride;
    }
  }
  return CDAG_OK;
}

void part_copy_put(part_writer *w, const part_copy *c) {
  wire_put_u(&w->copies, (uint64_t)c->dst_space);
  wire_put_u(&w->copies, c->dst);
  wire_put_u(&w->copies, c->len);
  wire_put_u(&w->copies, c->src);
  wire_put_u(&w->copies, c->n);
  if (c->n > 1) {
    wire_put_u(&w->copies, c->src_stride);
    wire_put_u(&w->copies, c->dst_stride);
  }
  w->ncopies++;
}

static int read_copies(sched_part *p, wire_reader *r) {
  uint64_t n = wire_get_u(r);
  if (!count_ok(r, n)) return bad("copies");
  p->copies = calloc(n ? n : 1, sizeof *p->copies);
  if (!p->copies) return CDAG_NOMEM("schedule copies");
  p->ncopies = (int64_t)n;
  for (uint64_t k = 0; k < n; k++) {
    part_copy *c = &p->copies[k];
    c->dst_space = (int)wire_get_u(r);
    c->dst = wire_get_u(r);
    c->len = wire_get_u(r);
    c->src = wire_get_u(r);
    c->n = wire_get_u(r);
    c->src_stride = c->n > 1 ? wire_get_u(r) : c->len;
    c->dst_stride = c->n > 1 ? wire_get_u(r) : c->len;
    if (r->failed || c->dst_space < SP_USER || c->dst_space > SP_RED || !blocks_ok(c->src, c->len, c->n, c->src_stride) ||
        !blocks_ok(c->dst, c->len, c->n, c->dst_stride) || (c->n > 1 && c->dst_space != SP_USER) || !count_blocks(p, c->n))
      return bad("copy");
  }
  return CDAG_OK;
}

void part_red_put(part_writer *w, const part_red *rd) {
  wire_put_u(&w->reds, rd->dst);
  wire_put_u(&w->reds, rd->count);
  wire_put_u(&w->reds, (uint64_t)rd->type);
  wire_put_u(&w->reds, (uint64_t)rd->op);
  wire_put_u(&w->reds, (uint64_t)rd->n);
  w->nreds++;
}

void part_contrib_put(part_writer *w, uint64_t off, uint32_t mult) {
  wire_put_u(&w->reds, off);
  wire_put_u(&w->reds, mult);
}

/* Every contribution lies inside the reduction buffer (p->redsize, read before). */
static int read_red(sched_part *p, wire_reader *r, part_red *rd) {
  rd->dst = wire_get_u(r);
  rd->count = wire_get_u(r);
  uint64_t type = wire_get_u(r), op = wire_get_u(r), n = wire_get_u(r);
  if (!count_ok(r, n) || n < 1 || type > INT32_MAX || op > INT32_MAX || !ir_type_size((int)type) ||
      !ir_rop_valid_for((int)op, (int)type))
    return bad("reduction");
  rd->type = (int)type;
  rd->op = (int)op;
  rd->n = (int64_t)n;
  rd->first = p->ncontribs;
  uint64_t size = rd->count * (uint64_t)ir_type_size(rd->type);
  if (rd->count && size / rd->count != (uint64_t)ir_type_size(rd->type)) return bad("reduction size");
  for (uint64_t q = 0; q < n; q++) {
    int rc = grow((void **)&p->contribs, p->ncontribs, &p->cap_contribs, sizeof *p->contribs);
    if (rc) return rc;
    uint64_t off = wire_get_u(r), mult = wire_get_u(r);
    if (r->failed || off > p->redsize || size > p->redsize - off || mult > UINT32_MAX)
      return bad("reduction contribution");
    p->contribs[p->ncontribs++] = (part_contrib){off, (uint32_t)mult};
  }
  return CDAG_OK;
}

static int read_reds(sched_part *p, wire_reader *r) {
  uint64_t n = wire_get_u(r);
  if (!count_ok(r, n)) return bad("reductions");
  p->reds = calloc(n ? n : 1, sizeof *p->reds);
  if (!p->reds) return CDAG_NOMEM("schedule reductions");
  p->nreds = (int64_t)n;
  int rc = CDAG_OK;
  for (uint64_t k = 0; k < n && !rc; k++) rc = read_red(p, r, &p->reds[k]);
  return rc;
}

/* ---- whole parts ---- */

static void put_header(wire_buf *out, int mode) {
  wire_put_u(out, PART_MAGIC);
  wire_put_u(out, PART_VERSION);
  wire_put_u(out, (uint64_t)mode);
}

static void put_section(wire_buf *out, int64_t n, const wire_buf *sec) {
  wire_put_u(out, (uint64_t)n);
  wire_put_bytes(out, sec->buf, sec->len);
}

int part_assemble(const part_writer *w, const kern_model *m, wire_buf *out) {
  put_header(out, PART_PLAN);
  wire_put_u(out, bits_of(m->alpha));
  wire_put_u(out, bits_of(m->beta));
  wire_put_u(out, (uint64_t)(m->blocks > 0 ? m->blocks : 0));
  put_section(out, w->ncolls, &w->colls);
  put_section(out, w->nout, &w->out);
  put_section(out, w->nin, &w->in);
  put_section(out, w->ncopies, &w->copies);
  wire_put_u(out, w->redsize);
  put_section(out, w->nreds, &w->reds);
  int rc = wire_done(&w->colls);
  if (!rc) rc = wire_done(&w->out);
  if (!rc) rc = wire_done(&w->in);
  if (!rc) rc = wire_done(&w->copies);
  if (!rc) rc = wire_done(&w->reds);
  return rc ? rc : wire_done(out);
}

void part_writer_free(part_writer *w) {
  wire_free(&w->colls);
  wire_free(&w->out);
  wire_free(&w->in);
  wire_free(&w->copies);
  wire_free(&w->reds);
}

/* ---- computations and staging buffers ---- */

void part_compute_put(part_steps *w, const stage_steps *st, int64_t i, int64_t key) {
  const stage_compute *c = &st->computes[i];
  wire_buf *b = &w->comps;
  wire_put_u(b, (uint64_t)key);
  wire_put_u(b, (uint64_t)c->pos);
  wire_put_u(b, (uint64_t)(c->after + 1));
  wire_put_u(b, c->cost);
  wire_put_u(b, c->raddr);
  wire_put_u(b, c->rlen);
  wire_put_u(b, c->waddr);
  wire_put_u(b, c->wlen);
  wire_put_u(b, (uint64_t)c->nsince);
  for (int64_t k = c->since_first; k < c->since_first + c->nsince; k++) {
    wire_put_u(b, st->since[k].addr);
    wire_put_u(b, st->since[k].len);
  }
  uint64_t nw = c->wlen && c->wn > 1 ? c->wn : 0;   /* its blocks, when it writes blocks */
  wire_put_u(b, nw);
  for (uint64_t j = 0; j < nw; j++) {
    wire_put_u(b, stage_block(st, c, j));
    wire_put_u(b, c->wlen / c->wn);
  }
  w->ncomps++;
}

void part_temp_put(part_steps *w, uint64_t addr, uint64_t len) {
  wire_put_u(&w->temps, addr);
  wire_put_u(&w->temps, len);
  w->ntemps++;
}

void part_steps_free(part_steps *w) {
  wire_free(&w->comps);
  wire_free(&w->temps);
}

/* nstages: the stages a computation may follow (graph parts: 0, every `after` is -1). */
static int read_comps(sched_part *p, wire_reader *r, int64_t nstages) {
  uint64_t n = wire_get_u(r);
  if (!count_ok(r, n)) return bad("computations");
  if (!(p->comps = calloc(n ? n : 1, sizeof *p->comps))) return CDAG_NOMEM("schedule computations");
  p->ncomps = (int64_t)n;
  int64_t cap = 0;
  for (uint64_t k = 0; k < n; k++) {
    part_compute *c = &p->comps[k];
    uint64_t key = wire_get_u(r), pos = wire_get_u(r), after = wire_get_u(r);
    c->cost = wire_get_u(r);
    c->raddr = wire_get_u(r);
    c->rlen = wire_get_u(r);
    c->waddr = wire_get_u(r);
    c->wlen = wire_get_u(r);
    uint64_t ns = wire_get_u(r);
    if (!count_ok(r, ns) || key > INT32_MAX || pos > INT32_MAX || after > (uint64_t)nstages ||
        (ns && c->rlen != UINT64_MAX) || (k && after < (uint64_t)(c[-1].after + 1)) || (!c->rlen && !c->wlen))
      return bad("computation");
    c->key = (int64_t)key;
    c->pos = (int64_t)pos;
    c->after = (int)after - 1;
    c->since_first = p->nsince;
    c->nsince = (int64_t)ns;
    for (uint64_t q = 0; q < ns; q++) {
      int rc = base_grow((void **)&p->since, 2 * p->nsince, &cap, 2, sizeof *p->since, "schedule computations");
      if (rc) return rc;
      p->since[2 * p->nsince] = wire_get_u(r);
      p->since[2 * p->nsince + 1] = wire_get_u(r);
      p->nsince++;
    }
    uint64_t nw = wire_get_u(r);   /* the blocks it writes, pairs in since too */
    if (!count_ok(r, nw) || (nw && !c->wlen)) return bad("computation blocks");
    c->wfirst = p->nsince;
    c->nw = (int64_t)nw;
    for (uint64_t q = 0; q < nw; q++) {
      int rc = base_grow((void **)&p->since, 2 * p->nsince, &cap, 2, sizeof *p->since, "schedule computations");
      if (rc) return rc;
      p->since[2 * p->nsince] = wire_get_u(r);
      p->since[2 * p->nsince + 1] = wire_get_u(r);
      p->nsince++;
    }
  }
  return r->failed ? bad("computation") : CDAG_OK;
}

static void put_steps(wire_buf *out, const part_steps *w) {
  wire_put_u(out, (uint64_t)(w ? w->ncomps : 0));
  if (w) wire_put_bytes(out, w->comps.buf, w->comps.len);
}

int part_graph_write(wire_buf *out, int64_t nops, const int32_t *tags, int64_t ntags, const wire_buf *ops,
                     const part_steps *comps) {
  put_header(out, PART_GRAPH);
  wire_put_u(out, (uint64_t)nops);
  wire_put_u(out, (uint64_t)ntags);
  for (int64_t k = 0; k < ntags; k++) wire_put_u(out, (uint64_t)tags[k]);
  wire_put_u(out, ops ? (uint64_t)ops->len : 0);
  if (ops) wire_put_bytes(out, ops->buf, ops->len);
  put_steps(out, comps);
  int rc = comps ? wire_done(&comps->comps) : CDAG_OK;
  return rc ? rc : wire_done(out);
}

int part_stages_write(wire_buf *out, const wire_buf *stages, int32_t nstages, const part_steps *w) {
  put_header(out, PART_STAGES);
  wire_put_u(out, (uint64_t)nstages);
  for (int32_t k = 0; k < nstages; k++) {
    wire_put_u(out, (uint64_t)stages[k].len);
    wire_put_bytes(out, stages[k].buf, stages[k].len);
  }
  put_steps(out, w);
  wire_put_u(out, (uint64_t)w->ntemps);
  wire_put_bytes(out, w->temps.buf, w->temps.len);
  int rc = wire_done(&w->comps);
  if (!rc) rc = wire_done(&w->temps);
  return rc ? rc : wire_done(out);
}

/* Every stage a whole plan part; staging buffers sorted and disjoint. */
static int read_stages(sched_part *p, wire_reader *r, int nprocs) {
  uint64_t n = wire_get_u(r);
  if (!count_ok(r, n)) return bad("stages");
  if (!(p->stages = calloc(n ? n : 1, sizeof *p->stages))) return CDAG_NOMEM("schedule stages");
  p->nstages = (int64_t)n;
  int rc = CDAG_OK;
  for (uint64_t k = 0; k < n && !rc; k++) {
    uint64_t len = wire_get_u(r);
    const uint8_t *b = r->failed || len > (uint64_t)(r->end - r->p) ? NULL : wire_get_bytes(r, (int64_t)len);
    if (!b) return bad("stage");
    rc = part_read(b, (int64_t)len, nprocs, &p->stages[k]);
    if (!rc && p->stages[k].mode != PART_PLAN) rc = bad("stage mode");
  }
  if (!rc) rc = read_comps(p, r, p->nstages);
  uint64_t nt = rc ? 0 : wire_get_u(r);
  if (!rc && !count_ok(r, nt)) rc = bad("staging buffers");
  if (!rc && !(p->temps = malloc((size_t)(nt ? 2 * nt : 1) * sizeof *p->temps))) rc = CDAG_NOMEM("staging buffers");
  for (uint64_t k = 0; k < nt && !rc; k++) {
    uint64_t a = wire_get_u(r), len = wire_get_u(r);
    if (r->failed || a + len < a || (k && a < p->temps[2 * k - 2] + p->temps[2 * k - 1])) rc = bad("staging buffer");
    p->temps[2 * k] = a;
    p->temps[2 * k + 1] = len;
    p->ntemps = (int64_t)k + 1;
  }
  return rc;
}

/* A fresh copy of n elements (NULL when n is 0); *ok cleared when out of memory. */
static void *dup_array(const void *a, int64_t n, size_t elem, int *ok) {
  if (!n) return NULL;
  void *c = malloc((size_t)n * elem);
  if (c) memcpy(c, a, (size_t)n * elem);
  else *ok = 0;
  return c;
}

static int read_graph(sched_part *p, wire_reader *r) {
  p->nops = (int64_t)wire_get_u(r);
  uint64_t n = wire_get_u(r);
  if (!count_ok(r, n) || p->nops < 0) return bad("graph header");
  p->tags = malloc((size_t)(n ? n : 1) * sizeof *p->tags);
  if (!p->tags) return CDAG_NOMEM("schedule tags");
  p->ntags = (int64_t)n;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t t = wire_get_u(r);
    if (r->failed || t > INT32_MAX) return bad("tag");
    p->tags[k] = (int32_t)t;
  }
  uint64_t len = wire_get_u(r);
  const uint8_t *ops = r->failed || len > (uint64_t)(r->end - r->p) ? NULL : wire_get_bytes(r, (int64_t)len);
  if (!ops) return bad("graph ops");
  int ok = 1;
  p->ops_len = (int64_t)len;
  p->ops = dup_array(ops, p->ops_len, 1, &ok);
  return ok ? read_comps(p, r, 0) : CDAG_NOMEM("schedule ops");
}

static int read_model(sched_part *p, wire_reader *r) {
  p->model.alpha = double_of(wire_get_u(r));
  p->model.beta = double_of(wire_get_u(r));
  uint64_t blocks = wire_get_u(r);
  if (r->failed || !(p->model.alpha > 0) || !(p->model.beta > 0) || blocks > INT32_MAX) return bad("cost model");
  p->model.blocks = (int)blocks;
  return CDAG_OK;
}

static int read_plan(sched_part *p, wire_reader *r, int nprocs) {
  int rc = read_model(p, r);
  uint64_t nc = rc ? 0 : wire_get_u(r);
  if (!rc && !count_ok(r, nc)) rc = bad("collectives");
  if (!rc && !(p->colls = calloc(nc ? nc : 1, sizeof *p->colls))) rc = CDAG_NOMEM("schedule collectives");
  if (!rc) p->ncolls = (int64_t)nc;
  for (uint64_t k = 0; k < nc && !rc; k++) rc = read_coll(p, r, &p->colls[k], nprocs);
  if (!rc) rc = read_pairs(p, r, nprocs, &p->out, &p->nout);
  if (!rc) rc = read_pairs(p, r, nprocs, &p->in, &p->nin);
  if (!rc) rc = read_copies(p, r);
  if (!rc) {
    p->redsize = wire_get_u(r);
    rc = r->failed ? bad("reduction buffer") : read_reds(p, r);
  }
  return rc;
}

int part_read(const uint8_t *buf, int64_t len, int nprocs, sched_part *p) {
  memset(p, 0, sizeof *p);
  wire_reader r;
  wire_reader_init(&r, buf, len);
  uint64_t magic = wire_get_u(&r), version = wire_get_u(&r), mode = wire_get_u(&r);
  if (r.failed || magic != PART_MAGIC) return bad("not a schedule part");
  if (version != PART_VERSION)
    return cdag__error(CDAG_ERR_FORMAT, "schedule part: version %llu, this library reads version %u (ranks run "
                       "different builds of cdag?)", (unsigned long long)version, PART_VERSION);
  if (mode > PART_STAGES) return bad("mode");
  p->mode = (int)mode;
  int rc = p->mode == PART_PLAN ? read_plan(p, &r, nprocs) : p->mode == PART_GRAPH ? read_graph(p, &r)
                                                                                 : read_stages(p, &r, nprocs);
  if (!rc && r.failed) rc = bad("truncated");
  if (!rc && r.p != r.end) rc = bad("trailing bytes");
  return rc;
}

int part_clone(const sched_part *from, sched_part *to) {
  int ok = 1;
  *to = *from;
  to->tags = dup_array(from->tags, from->ntags, sizeof *from->tags, &ok);
  to->ops = dup_array(from->ops, from->ops_len, 1, &ok);
  to->pieces = dup_array(from->pieces, from->npieces, sizeof *from->pieces, &ok);
  to->slots = dup_array(from->slots, from->nslots, sizeof *from->slots, &ok);
  to->colls = dup_array(from->colls, from->ncolls, sizeof *from->colls, &ok);
  to->members = dup_array(from->members, from->nmembers, sizeof *from->members, &ok);
  to->map = dup_array(from->map, from->nmap, sizeof *from->map, &ok);
  to->counts = dup_array(from->counts, from->ncounts, sizeof *from->counts, &ok);
  to->out = dup_array(from->out, from->nout, sizeof *from->out, &ok);
  to->in = dup_array(from->in, from->nin, sizeof *from->in, &ok);
  to->copies = dup_array(from->copies, from->ncopies, sizeof *from->copies, &ok);
  to->reds = dup_array(from->reds, from->nreds, sizeof *from->reds, &ok);
  to->contribs = dup_array(from->contribs, from->ncontribs, sizeof *from->contribs, &ok);
  to->comps = dup_array(from->comps, from->ncomps, sizeof *from->comps, &ok);
  to->since = dup_array(from->since, 2 * from->nsince, sizeof *from->since, &ok);
  to->temps = dup_array(from->temps, 2 * from->ntemps, sizeof *from->temps, &ok);
  to->stages = from->nstages ? calloc((size_t)from->nstages, sizeof *to->stages) : NULL;
  if (from->nstages && !to->stages) ok = 0;
  for (int64_t k = 0; to->stages && k < from->nstages; k++)
    if (part_clone(&from->stages[k], &to->stages[k])) ok = 0;
  to->cap_pieces = to->npieces; to->cap_slots = to->nslots; to->cap_members = to->nmembers;
  to->cap_map = to->nmap; to->cap_counts = to->ncounts; to->cap_contribs = to->ncontribs;
  if (ok) return CDAG_OK;
  part_free(to);
  return CDAG_NOMEM("schedule part copy");
}

void part_free(sched_part *p) {
  free(p->tags); free(p->ops); free(p->pieces); free(p->slots); free(p->colls); free(p->members); free(p->map);
  free(p->counts); free(p->out); free(p->in); free(p->copies); free(p->reds); free(p->contribs);
  free(p->comps); free(p->since); free(p->temps);
  for (int64_t k = 0; p->stages && k < p->nstages; k++) part_free(&p->stages[k]);
  free(p->stages);
  memset(p, 0, sizeof *p);
}

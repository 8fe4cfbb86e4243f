/* cdag — src/wire/wire.c: varint byte buffers, one rank's graph on the wire, fingerprints.
 *
 * Layout of a rank encoding: magic, version, nprocs, rank, nops, ndeps, nscratch; then per
 * op its kind byte and fields (see wire_encode_op); then dependencies as (before, after -
 * before); then scratch regions, labels and one-sided segments. Addresses are zigzag deltas from the end of the previous
 * buffer, so arrays walked in order cost one byte per address. Decoding re-validates through
 * ir_add_*, so a decoded graph obeys every rule a built one does. O(n) either way. */
#include <stdlib.h>
#include <string.h>

#include "wire/wire.h"

#define WIRE_MAGIC 0xcd47u
#define WIRE_VERSION 7u   /* 2: labels; 3: one-sided ops and segments; 4: joins, native collectives;
                             5: computations (a calc's read and written ranges); 6: vector calls' lists,
                             nonblocking native collectives (a flag per call, joins of kind
                             IR_JOIN_CALL), strided copies; 7: the ops of typed messages (part_of) */

static int wire_reserve(wire_buf *w, int64_t n) {
  if (w->failed) return 0;
  if (w->cap - w->len >= n) return 1;
  if (base_grow((void **)&w->buf, w->len, &w->cap, n, 1, "wire buffer")) w->failed = 1;
  return !w->failed;
}

/* Unchecked varints at p (the caller reserved room: 10 bytes each); the byte after them. */
static inline uint8_t *put_u(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

static inline uint8_t *put_s(uint8_t *p, int64_t v) { return put_u(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }

void wire_put_u(wire_buf *w, uint64_t v) {
  if (wire_reserve(w, 10)) w->len = put_u(w->buf + w->len, v) - w->buf;
}

void wire_put_s(wire_buf *w, int64_t v) { wire_put_u(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }

void wire_put_bytes(wire_buf *w, const void *p, int64_t n) {
  if (n <= 0 || !wire_reserve(w, n)) return;
  memcpy(w->buf + w->len, p, (size_t)n);
  w->len += n;
}

int wire_done(const wire_buf *w) { return w->failed ? CDAG_NOMEM("wire buffer") : CDAG_OK; }

void wire_free(wire_buf *w) {
  free(w->buf);
  memset(w, 0, sizeof *w);
}

void wire_reader_init(wire_reader *r, const void *p, int64_t len) {
  r->p = p;
  r->end = r->p + (len > 0 ? len : 0);
  r->failed = 0;
}

uint64_t wire_get_u(wire_reader *r) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) break;
    uint8_t b = *r->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  r->failed = 1;
  return 0;
}

int64_t wire_get_s(wire_reader *r) {
  uint64_t u = wire_get_u(r);
  return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

const uint8_t *wire_get_bytes(wire_reader *r, int64_t n) {
  if (n < 0 || r->end - r->p < n) {
    r->failed = 1;
    return NULL;
  }
  const uint8_t *p = r->p;
  r->p += n;
  return p;
}

/* ---- one rank's graph ---- */

/* One op's fields; *prev is the end of the previous buffer (the delta base). Written in
   place after one reservation (a kind byte and at most 7 varints, and a listed copy's
   offsets): a graph compiled every iteration is encoded every iteration to be fingerprinted. */
static void wire_encode_op(const cdag_graph *g, int64_t i, wire_buf *w, uint64_t *prev) {
  int64_t varints = 7;
  if (ir_is_listed(g, i)) varints += 2 * (int64_t)ir_stride_n(&g->stride[i]);   /* a copy's or a computation's */
  if (!wire_reserve(w, 1 + varints * 10)) return;
  uint8_t kind = g->kind[i], *p = w->buf + w->len;
  *p++ = kind;
  switch (kind) {
  case IR_SEND:
  case IR_RECV:
    p = put_u(p, (uint64_t)g->peer[i]);
    p = put_s(p, g->tag[i]);   /* a native collective's messages have tags below 0 */
    p = put_s(p, (int64_t)(g->addr[i] - *prev));
    p = put_u(p, g->bytes[i]);
    *prev = g->addr[i] + g->bytes[i];
    break;
  case IR_REDUCE:
    p = put_u(p, (uint64_t)g->peer[i]);
    p = put_u(p, (uint64_t)g->tag[i]);
    p = put_s(p, (int64_t)(g->addr[i] - *prev));
    p = put_s(p, (int64_t)(g->addr2[i] - g->addr[i]));
    p = put_u(p, g->bytes[i] / (uint64_t)ir_type_size(g->peer[i]));
    *prev = g->addr[i] + g->bytes[i];
    break;
  case IR_COPY: {   /* bytes * 2 + 1 for a strided copy, then its blocks, which sides are
                       listed (bit 0 the source, bit 1 the destination) and each side's stride
                       or offsets */
    ir_blocks b = ir_copy_blocks(g, i);
    int strided = ir_is_strided(g, i);
    p = put_s(p, (int64_t)(g->addr[i] - *prev));
    p = put_s(p, (int64_t)(g->addr2[i] - g->addr[i]));
    p = put_u(p, g->bytes[i] << 1 | (uint64_t)strided);
    if (strided) {
      p = put_u(p, b.n);
      p = put_u(p, (uint64_t)!!b.from_at | (uint64_t)!!b.to_at << 1);
      if (b.from_at) for (uint64_t k = 0; k < b.n; k++) p = put_u(p, b.from_at[k]);
      else p = put_u(p, b.from);
      if (b.to_at) for (uint64_t k = 0; k < b.n; k++) p = put_u(p, b.to_at[k]);
      else p = put_u(p, b.to);
    }
    *prev = g->addr[i] + b.to_last + b.len;
    break;
  }
  case IR_GET:
  case IR_PUT:
    p = put_u(p, (uint64_t)g->peer[i]);
    p = put_s(p, g->tag[i]);
    p = put_s(p, (int64_t)(g->addr[i] - *prev));
    p = put_u(p, g->addr2[i]);
    p = put_u(p, g->bytes[i]);
    *prev = g->addr[i] + g->bytes[i];
    break;
  case IR_FENCE:
    break;
  case IR_CALC: {   /* cost * 2 + 1 for a computation, then its written length * 2 (+ 1: in
                       blocks, whose count, whether listed and stride or offsets follow), read
                       length and addresses; a plain calc: cost * 2 (as compact as before) */
    int comp = ir_is_compute(g, i);
    uint64_t wl = comp ? g->cw_len[i] : 0, rl = comp ? g->cr_len[i] : 0;
    p = put_u(p, g->bytes[i] << 1 | (uint64_t)comp);
    if (!comp) break;
    ir_blocks wb = ir_write_blocks(g, i);
    p = put_u(p, wl << 1 | (uint64_t)(wb.n > 1));
    if (wb.n > 1) {
      p = put_u(p, wb.n);
      p = put_u(p, (uint64_t)!!wb.to_at);
      if (wb.to_at) for (uint64_t k = 0; k < wb.n; k++) p = put_u(p, wb.to_at[k]);
      else p = put_u(p, wb.to);
    }
    p = put_u(p, rl);
    if (wl) p = put_s(p, (int64_t)(g->addr[i] - *prev));
    if (rl && rl != IR_READS_ALL) p = put_s(p, (int64_t)(g->addr2[i] - *prev));
    break;
  }
  default:
    p = put_u(p, g->bytes[i]);
    break;
  }
  w->len = p - w->buf;
}

/* Joins, communicators, native calls and which ops are their messages (collective.c). */
static void wire_encode_natives(const cdag_graph *g, wire_buf *w) {
  int64_t njoin = 0, nparts = 0;
  for (int64_t i = 0; g->join && i < g->nops; i++) njoin += g->join[i] != IR_JOIN_NONE;
  wire_put_u(w, (uint64_t)njoin);
  for (int64_t i = 0; g->join && i < g->nops; i++)
    if (g->join[i]) {
      wire_put_u(w, (uint64_t)i);
      wire_put_u(w, g->join[i]);
    }
  wire_put_u(w, (uint64_t)g->ncomms);
  for (int64_t k = 0; k < g->ncomms; k++) {
    wire_put_u(w, (uint64_t)g->comm_id[k]);
    wire_put_u(w, (uint64_t)g->comm_n[k]);
    for (int32_t m = 0; m < g->comm_n[k]; m++) wire_put_u(w, (uint64_t)g->members[g->comm_first[k] + m]);
  }
  wire_put_u(w, (uint64_t)g->ncalls);
  for (int64_t c = 0; c < g->ncalls; c++) {
    const ir_call *k = &g->calls[c];
    wire_put_u(w, (uint64_t)k->op);
    wire_put_u(w, k->kind);
    wire_put_u(w, (uint64_t)k->comm);
    wire_put_s(w, k->root);
    wire_put_u(w, (uint64_t)k->type);
    wire_put_u(w, (uint64_t)k->rop);
    wire_put_u(w, k->in);
    wire_put_u(w, k->out);
    wire_put_u(w, k->count);
    wire_put_u(w, k->nonblocking);
    const uint64_t *v = ir_call_lists(g, k);
    int64_t nv = ir_call_nvalues(g, k);
    wire_put_u(w, (uint64_t)nv);
    for (int64_t i = 0; i < nv; i++) wire_put_u(w, v[i]);
  }
  for (int64_t i = 0; g->call && i < g->nops; i++) nparts += g->call[i] >= 0;
  wire_put_u(w, (uint64_t)nparts);
  for (int64_t i = 0; g->call && i < g->nops; i++)
    if (g->call[i] >= 0) {
      wire_put_u(w, (uint64_t)i);
      wire_put_u(w, (uint64_t)g->call[i]);
      wire_put_u(w, g->os[i]);
    }
}

int wire_encode_rank(const cdag_graph *g, wire_buf *w) {
  if (!g || g->myrank < 0) return cdag__error(CDAG_ERR_ARG, "wire_encode_rank: not a distributed graph");
  wire_reserve(w, 64 + 12 * g->nops);   /* most ops take 6 to 10 bytes: one allocation */
  wire_put_u(w, WIRE_MAGIC);
  wire_put_u(w, WIRE_VERSION);
  wire_put_u(w, (uint64_t)g->nprocs);
  wire_put_u(w, (uint64_t)g->myrank);
  wire_put_u(w, (uint64_t)g->nops);
  wire_put_u(w, (uint64_t)g->ndeps);
  wire_put_u(w, (uint64_t)g->nscratch);
  uint64_t prev = 0;
  for (int64_t i = 0; i < g->nops; i++) wire_encode_op(g, i, w, &prev);
  for (int64_t d = 0; d < g->ndeps; d++) {
    wire_put_u(w, (uint64_t)g->dep[2 * d]);
    wire_put_s(w, (int64_t)g->dep[2 * d + 1] - g->dep[2 * d]);
  }
  prev = 0;
  for (int64_t s = 0; s < g->nscratch; s++) {
    wire_put_s(w, (int64_t)(g->scr_addr[s] - prev));
    wire_put_u(w, g->scr_len[s]);
    prev = g->scr_addr[s] + g->scr_len[s];
  }
  int64_t nlabels = 0;   /* labels: count, then (op, length, bytes); none: no walk */
  for (int64_t i = 0; g->label && i < g->nops; i++) nlabels += ir_label(g, (int32_t)i) != NULL;
  wire_put_u(w, (uint64_t)nlabels);
  for (int64_t i = 0; i < g->nops && nlabels; i++) {
    const char *l = ir_label(g, (int32_t)i);
    if (!l) continue;
    size_t n = strlen(l);
    wire_put_u(w, (uint64_t)i);
    wire_put_u(w, (uint64_t)n);
    wire_put_bytes(w, l, (int64_t)n);
  }
  int64_t nparts = 0;   /* typed messages' ops: count, then (op, the op their call returned) */
  for (int64_t i = 0; g->part_of && i < g->nops; i++) nparts += g->part_of[i] >= 0;
  wire_put_u(w, (uint64_t)nparts);
  for (int64_t i = 0; i < g->nops && nparts; i++)
    if (g->part_of[i] >= 0) {
      wire_put_u(w, (uint64_t)i);
      wire_put_u(w, (uint64_t)g->part_of[i]);
    }
  wire_put_u(w, (uint64_t)g->nseg);   /* segments: (base, bytes) in registration order */
  for (int64_t k = 0; k < g->nseg; k++) {
    wire_put_u(w, g->seg_base[k]);
    wire_put_u(w, g->seg_len[k]);
  }
  wire_encode_natives(g, w);
  return wire_done(w);
}

static int wire_bad(int rank, const char *what) {
  return cdag__error(CDAG_ERR_FORMAT, "graph encoding of rank %d is corrupt (%s)", rank, what);
}

/* A copy of nb blocks of len bytes from b to a: each side its stride, or (bit 0 of listed the
   source, bit 1 the destination) its nb offsets. */
/* One side of nb blocks: its stride, or (listed) its nb offsets, malloc'd into *off; *last the
   farthest block's offset. */
static int decode_side(wire_reader *r, uint64_t nb, int listed, uint64_t *stride, uint64_t **off, uint64_t *last) {
  *off = NULL;
  if (!listed) {
    *stride = wire_get_u(r);
    *last = (nb - 1) * *stride;
    return CDAG_OK;
  }
  if (!(*off = malloc((size_t)nb * sizeof **off))) return CDAG_NOMEM("wire");
  *last = 0;
  for (uint64_t k = 0; k < nb; k++)
    if (((*off)[k] = wire_get_u(r)) > *last) *last = (*off)[k];
  return CDAG_OK;
}

static int decode_copy_blocks(cdag_graph *g, wire_reader *r, int rank, uint64_t a, uint64_t b, uint64_t len, uint64_t nb,
                              uint64_t listed, uint64_t *prev) {
  uint64_t *off[2] = {NULL, NULL}, stride[2] = {len, len}, last[2] = {0, 0};
  int rc = CDAG_OK;
  for (int side = 0; side < 2 && rc == CDAG_OK && nb > 1; side++)
    rc = decode_side(r, nb, (int)(listed >> side & 1), &stride[side], &off[side], &last[side]);
  if (rc == CDAG_OK && r->failed) rc = wire_bad(rank, "copy blocks");
  *prev = a + last[1] + len;
  if (rc == CDAG_OK) rc = ir_add_copy_listed(g, rank, b, a, nb, len, off[0], stride[0], off[1], stride[1], NULL);
  free(off[0]);
  free(off[1]);
  return rc;
}

static int wire_decode_op(cdag_graph *g, int rank, wire_reader *r, uint64_t *prev) {
  const uint8_t *k = wire_get_bytes(r, 1);
  if (!k) return wire_bad(rank, "truncated op");
  uint64_t a, b, n, peer, tag;
  switch (*k) {
  case IR_SEND:
  case IR_RECV: {
    peer = wire_get_u(r);
    int64_t stag = wire_get_s(r);
    a = *prev + (uint64_t)wire_get_s(r);
    n = wire_get_u(r);
    if (r->failed || peer > INT32_MAX || stag > INT32_MAX || stag < IR_TAG_COLL(IR_MAX_COMM))
      return wire_bad(rank, "send/recv fields");
    *prev = a + n;
    if (stag < 0)   /* a native collective's message: the marks follow (wire_decode_natives) */
      return peer < (uint64_t)g->nprocs && a + n >= a ? ir_append(g, *k, rank, (int)peer, (int)stag, a, 0, n, NULL)
                                                       : wire_bad(rank, "collective message");
    return *k == IR_SEND ? ir_add_send(g, rank, a, n, (int)peer, (int)stag, NULL)
                         : ir_add_recv(g, rank, a, n, (int)peer, (int)stag, NULL);
  }
  case IR_REDUCE:
    peer = wire_get_u(r);
    tag = wire_get_u(r);
    a = *prev + (uint64_t)wire_get_s(r);
    b = a + (uint64_t)wire_get_s(r);
    n = wire_get_u(r);
    if (r->failed || peer > INT32_MAX || tag > INT32_MAX) return wire_bad(rank, "reduce fields");
    *prev = a + n * (uint64_t)ir_type_size((int)peer);
    return ir_add_reduce(g, rank, b, a, n, (int)peer, (int)tag, NULL);
  case IR_COPY: {
    a = *prev + (uint64_t)wire_get_s(r);
    b = a + (uint64_t)wire_get_s(r);
    n = wire_get_u(r);
    uint64_t nb = n & 1 ? wire_get_u(r) : 1, listed = n & 1 ? wire_get_u(r) : 0;
    n >>= 1;
    if (r->failed || !nb || n % nb || listed > 3 || (listed && (nb < 2 || nb > (uint64_t)(r->end - r->p)))) return wire_bad(rank, "copy fields");
    return decode_copy_blocks(g, r, rank, a, b, n / nb, nb, listed, prev);
  }
  case IR_CALC: {
    n = wire_get_u(r);
    if (r->failed) return wire_bad(rank, "calc fields");
    if (!(n & 1)) return ir_add_calc(g, rank, n >> 1, NULL);
    uint64_t wl = wire_get_u(r), nb = wl & 1 ? wire_get_u(r) : 1, listed = wl & 1 ? wire_get_u(r) : 0, stride = 0, last;
    uint64_t *off = NULL;
    wl >>= 1;
    if (r->failed || !nb || listed > 1 || (nb > 1 && listed && nb > (uint64_t)(r->end - r->p)))
      return wire_bad(rank, "computation blocks");
    if (nb > 1 && decode_side(r, nb, (int)listed, &stride, &off, &last)) return CDAG_ERR_NOMEM;
    uint64_t rl = wire_get_u(r);
    a = wl ? *prev + (uint64_t)wire_get_s(r) : 0;
    b = rl && rl != IR_READS_ALL ? *prev + (uint64_t)wire_get_s(r) : 0;
    int32_t id = -1;
    int rc = r->failed || (!wl && !rl) ? wire_bad(rank, "computation fields") : ir_add_compute(g, rank, n >> 1, b, rl, a, wl, &id);
    if (rc == CDAG_OK && nb > 1) rc = ir_set_write_blocks(g, id, nb, stride, off);
    free(off);
    return rc;
  }
  case IR_GET:
  case IR_PUT: {
    peer = wire_get_u(r);
    int64_t seg = wire_get_s(r);
    a = *prev + (uint64_t)wire_get_s(r);
    b = wire_get_u(r);
    n = wire_get_u(r);
    if (r->failed || peer > INT32_MAX || seg < -1 || seg > INT32_MAX) return wire_bad(rank, "get/put fields");
    *prev = a + n;
    return *k == IR_GET ? ir_add_get(g, rank, a, n, (int)peer, (int)seg, b, NULL)
                        : ir_add_put(g, rank, a, n, (int)peer, (int)seg, b, NULL);
  }
  case IR_FENCE:
    return ir_add_fence(g, rank, NULL);
  default:
    return wire_bad(rank, "unknown op kind");
  }
}

static int decode_comms(cdag_graph *g, wire_reader *r, int rank) {
  uint64_t ncomms = wire_get_u(r);
  if (r->failed || ncomms > (uint64_t)(r->end - r->p)) return wire_bad(rank, "communicators");
  for (uint64_t k = 0; k < ncomms; k++) {
    uint64_t id = wire_get_u(r), n = wire_get_u(r);
    if (r->failed || n > (uint64_t)g->nprocs || n > (uint64_t)(r->end - r->p)) return wire_bad(rank, "communicator");
    int32_t *m = malloc((size_t)(n ? n : 1) * sizeof *m);
    if (!m) return CDAG_NOMEM("communicators");
    for (uint64_t i = 0; i < n; i++) m[i] = (int32_t)wire_get_u(r);
    const int32_t *have;
    int rc = r->failed ? wire_bad(rank, "communicator") : CDAG_OK;
    if (!rc && id <= IR_MAX_COMM && ir_comm_members(g, (int)id, &have) < 0) rc = ir_add_comm(g, (int)id, m, (int)n);
    free(m);   /* a communicator every member sends is added once */
    if (rc) return rc;
  }
  return CDAG_OK;
}

/* The marks wire_encode_natives wrote, applied to the ops just decoded (ids base ..). */
static int wire_decode_natives(cdag_graph *g, wire_reader *r, int rank, int64_t base, int64_t nops) {
  uint64_t njoin = wire_get_u(r);
  int rc;
  if (r->failed || njoin > (uint64_t)nops) return wire_bad(rank, "joins");
  for (uint64_t k = 0; k < njoin; k++) {
    uint64_t op = wire_get_u(r), j = wire_get_u(r);
    if (r->failed || op >= (uint64_t)nops || j > IR_JOIN_CALL) return wire_bad(rank, "join");
    if ((rc = ir_set_join(g, (int32_t)(base + (int64_t)op), (int)j))) return rc;
  }
  if ((rc = decode_comms(g, r, rank))) return rc;
  uint64_t ncalls = wire_get_u(r);
  if (r->failed || ncalls > (uint64_t)nops) return wire_bad(rank, "native calls");
  int64_t call0 = g->ncalls;
  uint64_t *v = NULL;   /* a call's lists, before ir_append_call copies them */
  int64_t vcap = 0;
  for (uint64_t c = 0; c < ncalls; c++) {
    ir_call k;
    uint64_t op = wire_get_u(r), kind = wire_get_u(r), comm = wire_get_u(r);
    k.root = (int32_t)wire_get_s(r);
    uint64_t type = wire_get_u(r), rop = wire_get_u(r);
    k.in = wire_get_u(r);
    k.out = wire_get_u(r);
    k.count = wire_get_u(r);
    uint64_t nb = wire_get_u(r);
    uint64_t nv = wire_get_u(r);
    int fits = !r->failed && nv <= 4 * (uint64_t)g->nprocs;
    if (fits && nv && base_grow((void **)&v, 0, &vcap, (int64_t)nv, sizeof *v, "native calls")) {
      free(v);
      return CDAG_ERR_NOMEM;
    }
    for (uint64_t i = 0; fits && i < nv; i++) v[i] = wire_get_u(r);
    if (!fits || r->failed) {
      free(v);
      return wire_bad(rank, "native call lists");
    }
    if (r->failed || nb > 1 || op >= (uint64_t)nops || kind >= IR_COLL_NKINDS || !ir_coll_get((int)kind)->native ||
        comm > IR_MAX_COMM || type > INT32_MAX || rop > INT32_MAX)
      return free(v), wire_bad(rank, "native call");
    k.op = (int32_t)(base + (int64_t)op);
    k.kind = (uint8_t)kind;
    k.comm = (int32_t)comm;
    k.type = (int32_t)type;
    k.rop = (int32_t)rop;
    k.vec = 0;
    k.nonblocking = (uint8_t)nb;
    if ((rc = ir_append_call(g, &k, v, (int64_t)nv))) return free(v), rc;
  }
  free(v);
  uint64_t nparts = wire_get_u(r);
  if (r->failed || nparts > (uint64_t)nops) return wire_bad(rank, "collective messages");
  for (uint64_t k = 0; k < nparts; k++) {
    uint64_t op = wire_get_u(r), c = wire_get_u(r), os = wire_get_u(r);
    if (r->failed || op >= (uint64_t)nops || c >= ncalls || (os != IR_OS_COLL && os != IR_OS_COLL_PART))
      return wire_bad(rank, "collective message");
    if ((rc = ir_mark_call(g, (int32_t)(base + (int64_t)op), call0 + (int64_t)c, (int)os))) return rc;
  }
  return CDAG_OK;
}

int wire_decode_rank(cdag_graph *g, const uint8_t *p, int64_t len, int *rank) {
  wire_reader r;
  wire_reader_init(&r, p, len);
  int rc;
  uint64_t magic = wire_get_u(&r), version = wire_get_u(&r), nprocs = wire_get_u(&r);
  uint64_t rk = wire_get_u(&r), nops = wire_get_u(&r), ndeps = wire_get_u(&r), nscr = wire_get_u(&r);
  if (r.failed || magic != WIRE_MAGIC || version != WIRE_VERSION) return wire_bad(-1, "header");
  if (nprocs != (uint64_t)g->nprocs || rk >= nprocs)
    return cdag__error(CDAG_ERR_FORMAT, "graph encoding names %llu ranks (rank %llu); expected %d",
                       (unsigned long long)nprocs, (unsigned long long)rk, g->nprocs);
  int rank_ = (int)rk;
  if (nops > (uint64_t)len || ndeps > (uint64_t)len || nscr > (uint64_t)len) return wire_bad(rank_, "counts");
  if ((rc = ir_reserve(g, (int64_t)nops))) return rc;
  int64_t base = g->nops;
  uint64_t prev = 0;
  for (uint64_t i = 0; i < nops; i++)
    if ((rc = wire_decode_op(g, rank_, &r, &prev))) return rc;
  for (uint64_t d = 0; d < ndeps; d++) {
    uint64_t before = wire_get_u(&r);
    int64_t delta = wire_get_s(&r);
    if (r.failed || before >= nops || (int64_t)before + delta < 0 || (uint64_t)((int64_t)before + delta) >= nops)
      return wire_bad(rank_, "dependency");
    if ((rc = ir_add_dep(g, base + (int64_t)before, base + (int64_t)before + delta, 1))) return rc;
  }
  prev = 0;
  for (uint64_t s = 0; s < nscr; s++) {
    uint64_t a = prev + (uint64_t)wire_get_s(&r), n = wire_get_u(&r);
    if (r.failed) return wire_bad(rank_, "scratch");
    if ((rc = ir_add_scratch(g, rank_, a, n))) return rc;
    prev = a + n;
  }
  uint64_t nlabels = wire_get_u(&r);
  if (r.failed || nlabels > nops) return wire_bad(rank_, "labels");
  for (uint64_t k = 0; k < nlabels; k++) {
    uint64_t op = wire_get_u(&r), n = wire_get_u(&r);
    const uint8_t *s = r.failed || op >= nops || n > (uint64_t)(r.end - r.p) ? NULL : wire_get_bytes(&r, (int64_t)n);
    if (!s) return wire_bad(rank_, "label");
    if ((rc = ir_set_label(g, (int32_t)(base + (int64_t)op), (const char *)s, (int64_t)n))) return rc;
  }
  uint64_t nparts = wire_get_u(&r);
  if (r.failed || nparts > nops) return wire_bad(rank_, "typed messages");
  for (uint64_t k = 0; k < nparts; k++) {
    uint64_t op = wire_get_u(&r), owner = wire_get_u(&r);
    if (r.failed || op >= nops || owner >= nops) return wire_bad(rank_, "typed message");
    int32_t at = (int32_t)(base + (int64_t)op);
    if ((rc = ir_set_part_of(g, at, at, (int32_t)(base + (int64_t)owner)))) return rc;
  }
  uint64_t nseg = wire_get_u(&r);
  if (r.failed || nseg > (uint64_t)len) return wire_bad(rank_, "segments");
  for (uint64_t k = 0; k < nseg; k++) {
    uint64_t a = wire_get_u(&r), n = wire_get_u(&r);
    if (r.failed) return wire_bad(rank_, "segment");
    if ((rc = ir_add_segment(g, rank_, a, n, NULL))) return rc;
  }
  if ((rc = wire_decode_natives(g, &r, rank_, base, (int64_t)nops))) return rc;
  if (r.p != r.end) return wire_bad(rank_, "trailing bytes");
  if (rank) *rank = rank_;
  return CDAG_OK;
}

/* ---- fingerprint ---- */

static uint64_t wire_mix(uint64_t h) {
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  return h;
}

uint64_t wire_hash(const void *p, int64_t len, uint64_t seed) {
  const uint8_t *b = p;
  uint64_t h = seed ^ 0x9e3779b97f4a7c15ull ^ (uint64_t)len;
  int64_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t v;
    memcpy(&v, b + i, 8);
    h = (h ^ wire_mix(v + 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
  }
  uint64_t tail = 0;
  for (int64_t j = 0; i + j < len; j++) tail |= (uint64_t)b[i + j] << (8 * j);
  h = (h ^ wire_mix(tail + (uint64_t)len)) * 0xc4ceb9fe1a85ec53ull;
  return wire_mix(h);
}

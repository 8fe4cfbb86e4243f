/* cdag — src/exec/mpi/graph_typed.c: sends and receives of any MPI datatype.
 *
 * cdag_send_type / cdag_recv_type take (buf, count, datatype) as MPI does. The datatype is
 * decoded by mpi_glue (the one decoder, which the recorder uses too) into the byte runs it
 * touches, in the order MPI packs them (its type map); adjacent runs merge. An uncommitted
 * datatype is CDAG_ERR_ARG, as MPI would refuse it (check_committed).
 *
 * One range is a plain send or receive. Several become what MPI itself does: a send packs
 * them into a buffer of the graph's own (local copies, then one contiguous send), a
 * receive unpacks (one receive, then local copies). The buffer is scratch, so the dataflow
 * sees through the copies: a compiled schedule moves the bytes from where they start to
 * where they end and never touches it; run as written, the copies happen. A message is at
 * most MPIG_MAX_BYTES, and its elements span at most as much (message_size). Runs of one
 * length at one stride (a vector's blocks, a column) are one strided copy (strided_run), so a
 * vector message is two operations, not one per block; runs of one length at no one stride
 * (an indexed type's blocks) are one copy of listed blocks (listed_runs). Cost: the
 * datatype's runs per element, per call; the graph holds one operation per stretch of runs
 * of one length. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/graph_mpi.h"
#include "base/checked.h"
#include "mpi_glue/mpi_glue.h"

typedef struct { MPI_Aint off; uint64_t len; } trange;   /* off: relative to buf */
typedef struct { trange *v; int64_t n, cap; } tranges;

static int add_range(void *ctx, int64_t off, uint64_t len) {
  tranges *t = ctx;
  int rc = base_grow((void **)&t->v, t->n, &t->cap, 1, sizeof *t->v, "datatype ranges");
  if (!rc) t->v[t->n++] = (trange){(MPI_Aint)off, len};
  return rc;
}

/* The bytes of count elements of f: more than 2^63-1 is CDAG_ERR_ARG (the count cannot be
   meant); more than MPIG_MAX_BYTES, or elements spanning more (a vector of far-apart
   blocks), is CDAG_ERR_UNSUPPORTED. Every product and sum is checked. */
static int message_size(const mpig_flat *f, MPI_Count count, uint64_t *size) {
  uint64_t bytes, stride, span, absext = (uint64_t)(f->extent < 0 ? -f->extent : f->extent);
  if (ckd_mul(&bytes, f->size, (uint64_t)count) || bytes > (uint64_t)INT64_MAX)
    return cdag__error(CDAG_ERR_ARG, "count %lld of a %llu-byte datatype is more than 2^63-1 bytes", (long long)count,
                       (unsigned long long)f->size);
  *size = bytes;
  if (!bytes) return CDAG_OK;
  int64_t lo = INT64_MAX, hi = INT64_MIN;   /* one element's true bounds */
  for (int64_t k = 0; k < f->n; k++) {
    if (f->off[k] < lo) lo = f->off[k];
    if (f->off[k] + (int64_t)f->len[k] > hi) hi = f->off[k] + (int64_t)f->len[k];
  }
  if (bytes > MPIG_MAX_BYTES || ckd_mul(&stride, (uint64_t)count - 1, absext) ||
      ckd_add(&span, stride, (uint64_t)(hi - lo)) || span > MPIG_MAX_BYTES)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "a datatype spanning more than 4 GiB (%lld elements of %llu bytes, "
                       "extent %lld)", (long long)count, (unsigned long long)f->size, (long long)f->extent);
  return CDAG_OK;
}

/* The ranges (count, t) touches, relative to buf, in pack order; *size = bytes of the message. */
static int flatten(const cdag_graph *g, const char *fn, MPI_Count count, MPI_Datatype t, trange **out, int64_t *n,
                   uint64_t *size) {
  mpig_flat f;
  tranges r = {NULL, 0, 0};
  *out = NULL;
  *n = 0;
  *size = 0;
  int rc = mpig_flatten(t, &f);
  if (!rc) rc = message_size(&f, count, size);
  if (!rc && *size) rc = mpig_runs(&f, (uint64_t)count, *size, add_range, &r);
  mpig_flat_free(&f);
  if (rc) {
    char why[256];
    snprintf(why, sizeof why, "%s", cdag__error_text());
    free(r.v);
    return cdag__error(rc, "rank %d: %s: %s", g->myrank, fn, why);
  }
  *out = r.v;
  *n = r.n;
  return CDAG_OK;
}

static int off_cmp(const void *x, const void *y) {
  const trange *a = x, *b = y;
  return (a->off > b->off) - (a->off < b->off);
}

/* A receive must not write a byte twice (MPI calls that erroneous): the first such byte. */
static int overlapping(const trange *v, int64_t n, MPI_Aint *at) {
  trange *s = malloc((size_t)n * sizeof *s);
  if (!s) return -1;
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, off_cmp);
  int found = 0;
  for (int64_t k = 1; k < n && !found; k++)
    if (s[k].off < s[k - 1].off + (MPI_Aint)s[k - 1].len) found = 1, *at = s[k].off;
  free(s);
  return found;
}

/* Is t committed? MPI has no query for it, and decoding (envelope and contents) works on
   any datatype, while communicating with an uncommitted one is erroneous (MPI_Pack of the
   former probe aborted the process on it). A zero-count MPI_Pack checks it as MPI's own
   calls do, with errors returned on MPI_COMM_SELF (where MPI raises MPI_Pack's), whose
   handler is restored after. An implementation without error checks accepts it. */
static int check_committed(const cdag_graph *g, const char *fn, MPI_Datatype t) {
  MPI_Errhandler was;
  if (MPI_Comm_get_errhandler(MPI_COMM_SELF, &was) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "rank %d: %s: MPI_Comm_get_errhandler failed", g->myrank, fn);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  char in = 0, out = 0;
  MPI_Count pos = 0;
  int mrc = MPI_Pack_c(&in, 0, t, &out, 0, &pos, MPI_COMM_SELF);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, was);
  MPI_Errhandler_free(&was);
  if (mrc == MPI_SUCCESS) return CDAG_OK;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0, cls = mrc;   /* the class's text: MPICH's code's ends in "error stack:" and its stack */
  if (MPI_Error_class(mrc, &cls) != MPI_SUCCESS || MPI_Error_string(cls, text, &len) != MPI_SUCCESS) text[0] = 0;
  text[strcspn(text, "\n")] = 0;
  return cdag__error(CDAG_ERR_ARG, "rank %d: %s: MPI_Pack refuses the datatype (%s): is it committed (MPI_Type_commit)?",
                     g->myrank, fn, text);
}

static int check_args(const cdag_graph *g, const char *fn, const void *buf, MPI_Count count, MPI_Datatype t) {
  int rc = exec_check_distributed(g, fn);
  if (rc) return rc;
  if (count < 0) return cdag__error(CDAG_ERR_ARG, "rank %d: %s: count %lld < 0", g->myrank, fn, (long long)count);
  if (t == MPI_DATATYPE_NULL) return cdag__error(CDAG_ERR_ARG, "rank %d: %s: datatype is MPI_DATATYPE_NULL", g->myrank, fn);
  return check_committed(g, fn, t);
}

/* A NULL buffer is MPI_BOTTOM (MPICH's): the datatype's displacements are then absolute
   addresses (MPI_Get_address), none of them in the first page, where no buffer lives. */
static int check_bottom(const cdag_graph *g, const char *fn, const void *buf, const trange *v, int64_t n) {
  enum { FIRST_PAGE = 4096 };
  for (int64_t k = 0; !buf && k < n; k++)
    if (v[k].len && (v[k].off < FIRST_PAGE || (uint64_t)v[k].off > UINT64_MAX - v[k].len))
      return cdag__error(CDAG_ERR_ARG, "rank %d: %s: buffer is NULL or MPI_BOTTOM, and the datatype's displacement %lld "
                         "is not an address (with MPI_BOTTOM, build the datatype from MPI_Get_address)", g->myrank, fn,
                         (long long)v[k].off);
  return CDAG_OK;
}

/* The runs v[k ..) of one length at one stride (at least the length, > 0): their number. */
static int64_t strided_run(const trange *v, int64_t k, int64_t n) {
  if (k + 1 >= n || v[k + 1].len != v[k].len || v[k + 1].off <= v[k].off ||
      (uint64_t)(v[k + 1].off - v[k].off) < v[k].len)
    return 1;
  MPI_Aint d = v[k + 1].off - v[k].off;
  int64_t j = k + 1;
  while (j + 1 < n && v[j + 1].len == v[k].len && v[j + 1].off - v[j].off == d) j++;
  return j - k + 1;
}

/* The runs v[k ..) of one length: their number. */
static int64_t same_length(const trange *v, int64_t k, int64_t n) {
  int64_t j = k + 1;
  while (j < n && v[j].len == v[k].len) j++;
  return j - k;
}

/* The runs v[k .. k+m) of one length at no one stride (an indexed type's blocks) as one copy
   of listed blocks, the packing area's side contiguous; -1 when their blocks meet (a send
   may read a byte twice): then strided runs instead. */
static int listed_runs(cdag_graph *g, const trange *v, int64_t k, int64_t m, uint8_t *base, uint8_t *pack, int to_pack,
                       cdag_op *op) {
  MPI_Aint lo = v[k].off;
  for (int64_t j = k + 1; j < k + m; j++)
    if (v[j].off < lo) lo = v[j].off;
  uint64_t *off = malloc((size_t)m * sizeof *off), len = v[k].len;
  if (!off) return CDAG_NOMEM("datatype ranges");
  for (int64_t j = 0; j < m; j++) off[j] = (uint64_t)(v[k + j].off - lo);
  uint64_t user = (uint64_t)(uintptr_t)base + (uint64_t)lo, area = (uint64_t)(uintptr_t)pack;   /* base: maybe MPI_BOTTOM */
  int32_t id = -1;
  int rc = to_pack ? ir_add_copy_listed(g, g->myrank, user, area, (uint64_t)m, len, off, len, NULL, len, &id)
                   : ir_add_copy_listed(g, g->myrank, area, user, (uint64_t)m, len, NULL, len, off, len, &id);
  free(off);
  if (rc == CDAG_ERR_ARG) {
    cdag__error_clear();
    return -1;
  }
  return exec_to_op(g, to_pack ? "cdag_send_type" : "cdag_recv_type", rc, &id, op);
}

/* The runs v[k .. k+m) between the user's buffer (base) and the packing area at pack: one
   copy, strided when m > 1 (pack side contiguous). */
static int copy_runs(cdag_graph *g, const trange *v, int64_t k, int64_t m, uint8_t *base, uint8_t *pack, int to_pack,
                     cdag_op *op) {
  int32_t id = -1;
  uint64_t len = v[k].len, d = m > 1 ? (uint64_t)(v[k + 1].off - v[k].off) : len;
  uint64_t user = (uint64_t)(uintptr_t)base + (uint64_t)v[k].off, area = (uint64_t)(uintptr_t)pack;
  int added = to_pack ? ir_add_copy_strided(g, g->myrank, user, area, (uint64_t)m, len, d, len, &id)
                      : ir_add_copy_strided(g, g->myrank, area, user, (uint64_t)m, len, len, d, &id);
  return exec_to_op(g, to_pack ? "cdag_send_type" : "cdag_recv_type", added, &id, op);
}

int cdag_send_type(cdag_graph *g, const void *buf, MPI_Count count, MPI_Datatype t, int dest, int tag, cdag_op *op) {
  const char *fn = "cdag_send_type";
  int rc = check_args(g, fn, buf, count, t);
  if (rc || dest == MPI_PROC_NULL) return rc ? rc : exec_proc_null(op);
  if ((rc = exec_user_tag(g, fn, dest, tag))) return rc;
  trange *v;
  int64_t n;
  uint64_t size;
  const uint8_t *base = buf;
  if ((rc = flatten(g, fn, count, t, &v, &n, &size))) return rc;
  if ((rc = check_bottom(g, fn, buf, v, n))) {
    free(v);
    return rc;
  }
  if (n <= 1) {
    rc = cdag_send(g, n ? (const void *)((uintptr_t)base + (uintptr_t)v[0].off) : buf, size, dest, tag, op);
    free(v);
    return rc;
  }
  uint8_t *pack = exec_arena_alloc(g, size);
  int32_t first = (int32_t)g->nops;
  cdag_op sent = CDAG_OP_NULL;
  if (!pack) rc = CDAG_NOMEM("send buffer");
  if (!rc) rc = cdag_scratch(g, pack, size);
  for (int64_t k = 0, at = 0, m; k < n && !rc; at += (int64_t)(v[k].len * (uint64_t)m), k += m) {
    int64_t same = same_length(v, k, n);
    m = strided_run(v, k, n);
    if (same > m && (rc = listed_runs(g, v, k, same, (uint8_t *)(uintptr_t)base, pack + at, 1, NULL)) != -1) m = same;
    else rc = copy_runs(g, v, k, m, (uint8_t *)(uintptr_t)base, pack + at, 1, NULL);
  }
  free(v);
  if (!rc) rc = cdag_send(g, pack, size, dest, tag, &sent);
  if (!rc) rc = ir_set_part_of(g, first, (int32_t)sent, (int32_t)sent);   /* its packing copies */
  if (!rc && op) *op = sent;
  return rc;
}

int cdag_recv_type(cdag_graph *g, void *buf, MPI_Count count, MPI_Datatype t, int source, int tag, cdag_op *op) {
  const char *fn = "cdag_recv_type";
  int rc = check_args(g, fn, buf, count, t);
  if (rc || source == MPI_PROC_NULL) return rc ? rc : exec_proc_null(op);
  if ((rc = exec_user_tag(g, fn, source, tag))) return rc;
  trange *v;
  int64_t n;
  uint64_t size;
  MPI_Aint at = 0;
  uint8_t *base = buf;
  if ((rc = flatten(g, fn, count, t, &v, &n, &size))) return rc;
  if ((rc = check_bottom(g, fn, buf, v, n))) {
    free(v);
    return rc;
  }
  int twice = n > 1 ? overlapping(v, n, &at) : 0;
  if (twice) {
    free(v);
    return twice < 0 ? CDAG_NOMEM("datatype ranges")
                     : cdag__error(CDAG_ERR_ARG, "rank %d: %s: the datatype writes the byte at offset %lld more than once",
                                   g->myrank, fn, (long long)at);
  }
  if (n <= 1) {
    rc = cdag_recv(g, n ? (void *)((uintptr_t)base + (uintptr_t)v[0].off) : buf, size, source, tag, op);
    free(v);
    return rc;
  }
  uint8_t *pack = exec_arena_alloc(g, size);
  cdag_op r = CDAG_OP_NULL, c = CDAG_OP_NULL, prev = CDAG_OP_NULL;
  if (!pack) rc = CDAG_NOMEM("receive buffer");
  if (!rc) rc = cdag_scratch(g, pack, size);
  if (!rc) rc = cdag_recv(g, pack, size, source, tag, &r);
  /* the copies are chained, so what depends on the last (the op returned) follows them all */
  for (int64_t k = 0, off = 0, m; k < n && !rc; off += (int64_t)(v[k].len * (uint64_t)m), k += m) {
    int64_t same = same_length(v, k, n);
    m = strided_run(v, k, n);
    if (same > m && (rc = listed_runs(g, v, k, same, base, pack + off, 0, &c)) != -1) m = same;
    else rc = copy_runs(g, v, k, m, base, pack + off, 0, &c);
    if (!rc && prev != CDAG_OP_NULL) rc = cdag_depend(g, prev, c);
    prev = c;
  }
  free(v);
  if (!rc) rc = ir_set_part_of(g, (int32_t)r, (int32_t)c, (int32_t)c);   /* its message, its other copies */
  if (!rc && op) *op = c;
  return rc;
}

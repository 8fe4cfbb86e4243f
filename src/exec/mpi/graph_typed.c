/* cdag — src/exec/mpi/graph_typed.c: sends and receives of any MPI datatype.
 *
 * cdag_send_type / cdag_recv_type take (buf, count, datatype) as MPI does. The datatype is
 * flattened to the byte ranges it touches, in the order MPI packs them (its type map), by
 * packing probe buffers: MPI_Pack of a buffer whose every byte holds one byte of its own
 * offset tells, for each byte of the message, where it comes from; a few passes give whole
 * offsets. That works for every datatype MPI can pack (vector, indexed, struct, subarray,
 * darray, resized, ...) without walking their constructors. Adjacent ranges merge.
 *
 * One range is a plain send or receive. Several become what MPI itself does: a send packs
 * them into a buffer of the graph's own (local copies, then one contiguous send), a
 * receive unpacks (one receive, then local copies). The buffer is scratch, so the dataflow
 * sees through the copies: a compiled schedule moves the bytes from where they start to
 * where they end and never touches it; run as written, the copies happen. Cost: the extent
 * spanned by the datatype and the message size, per call (probe buffers are freed at once);
 * the graph holds one operation per range. */
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/graph_mpi.h"
#include "ir/checked.h"

typedef struct { MPI_Aint off; uint64_t len; } trange;   /* off: relative to buf */

static int mpi_fail(const cdag_graph *g, const char *fn, const char *call) {
  return cdag__error(CDAG_ERR_ARG, "rank %d: %s: %s failed (is the datatype valid and committed?)", g->myrank, fn, call);
}

/* Appends [off, off+1) to the ranges, merging with the last when adjacent. */
static int add_byte(trange **v, int64_t *n, int64_t *cap, MPI_Aint off) {
  if (*n && (*v)[*n - 1].off + (MPI_Aint)(*v)[*n - 1].len == off) {
    (*v)[*n - 1].len++;
    return CDAG_OK;
  }
  int rc = ir_grow((void **)v, *n, cap, 1, sizeof **v, "datatype ranges");
  if (!rc) (*v)[(*n)++] = (trange){off, 1};
  return rc;
}

/* The ranges (count, t) touches, relative to buf, in pack order; *size = bytes of the message. */
static int flatten(const cdag_graph *g, const char *fn, MPI_Count count, MPI_Datatype t, trange **out, int64_t *n,
                   uint64_t *size) {
  MPI_Count tsize, lb, extent, tlb, textent;
  *out = NULL;
  *n = 0;
  if (MPI_Type_size_c(t, &tsize) != MPI_SUCCESS || MPI_Type_get_extent_c(t, &lb, &extent) != MPI_SUCCESS ||
      MPI_Type_get_true_extent_c(t, &tlb, &textent) != MPI_SUCCESS)
    return mpi_fail(g, fn, "MPI_Type_size");
  MPI_Count bytes, stride, lo, hi, span;   /* count elements: bytes, (count - 1) extents, bounds */
  if (ckd_mul(&bytes, tsize, count))
    return cdag__error(CDAG_ERR_ARG, "rank %d: %s: count %lld of a %lld-byte datatype is more than 2^63-1 bytes",
                       g->myrank, fn, (long long)count, (long long)tsize);
  *size = (uint64_t)bytes;
  if (!*size) return CDAG_OK;
  if (ckd_mul(&stride, count - 1, extent) || ckd_add(&lo, tlb, extent < 0 ? stride : 0) ||
      ckd_add(&hi, tlb, textent) || ckd_add(&hi, hi, extent > 0 ? stride : 0) || ckd_sub(&span, hi, lo) ||
      span > ((MPI_Count)1 << 32) || *size > ((uint64_t)1 << 32))
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: %s: a datatype spanning more than 4 GiB", g->myrank, fn);
  uint8_t *probe = malloc((size_t)span), *packed = malloc((size_t)*size);
  uint32_t *from = calloc((size_t)*size, sizeof *from);
  int rc = probe && packed && from ? CDAG_OK : CDAG_NOMEM("datatype probe");
  for (int pass = 0; pass < 4 && !rc; pass++) {   /* byte `pass` of every offset */
    for (MPI_Count k = 0; k < span; k++) probe[k] = (uint8_t)((uint64_t)k >> (8 * pass));
    MPI_Count pos = 0;
    if (MPI_Pack_c(probe - lo, count, t, packed, (MPI_Count)*size, &pos, MPI_COMM_SELF) != MPI_SUCCESS)
      rc = mpi_fail(g, fn, "MPI_Pack");
    for (uint64_t s = 0; s < *size && !rc; s++) from[s] |= (uint32_t)packed[s] << (8 * pass);
  }
  int64_t cap = 0;
  for (uint64_t s = 0; s < *size && !rc; s++) rc = add_byte(out, n, &cap, (MPI_Aint)from[s] + (MPI_Aint)lo);
  free(probe);
  free(packed);
  free(from);
  return rc;
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

static int check_args(const cdag_graph *g, const char *fn, const void *buf, MPI_Count count, MPI_Datatype t) {
  int rc = exec_check_distributed(g, fn);
  if (rc) return rc;
  if (count < 0) return cdag__error(CDAG_ERR_ARG, "rank %d: %s: count %lld < 0", g->myrank, fn, (long long)count);
  if (t == MPI_DATATYPE_NULL) return cdag__error(CDAG_ERR_ARG, "rank %d: %s: datatype is MPI_DATATYPE_NULL", g->myrank, fn);
  if (!buf && count) return cdag__error(CDAG_ERR_ARG, "rank %d: %s: buffer is NULL", g->myrank, fn);
  return CDAG_OK;
}

int cdag_send_type(cdag_graph *g, const void *buf, MPI_Count count, MPI_Datatype t, int dest, int tag, cdag_op *op) {
  const char *fn = "cdag_send_type";
  int rc = check_args(g, fn, buf, count, t);
  if (rc || dest == MPI_PROC_NULL) return rc ? rc : exec_proc_null(op);
  trange *v;
  int64_t n;
  uint64_t size;
  const uint8_t *base = buf;
  if ((rc = flatten(g, fn, count, t, &v, &n, &size))) return rc;
  if (n <= 1) {
    rc = cdag_send(g, n ? base + v[0].off : buf, size, dest, tag, op);
    free(v);
    return rc;
  }
  uint8_t *pack = exec_arena_alloc(g, size);
  if (!pack) rc = CDAG_NOMEM("send buffer");
  if (!rc) rc = cdag_scratch(g, pack, size);
  for (int64_t k = 0, at = 0; k < n && !rc; at += (int64_t)v[k].len, k++)
    rc = cdag_copy_local(g, base + v[k].off, pack + at, v[k].len, NULL);
  free(v);
  return rc ? rc : cdag_send(g, pack, size, dest, tag, op);
}

int cdag_recv_type(cdag_graph *g, void *buf, MPI_Count count, MPI_Datatype t, int source, int tag, cdag_op *op) {
  const char *fn = "cdag_recv_type";
  int rc = check_args(g, fn, buf, count, t);
  if (rc || source == MPI_PROC_NULL) return rc ? rc : exec_proc_null(op);
  trange *v;
  int64_t n;
  uint64_t size;
  MPI_Aint at = 0;
  uint8_t *base = buf;
  if ((rc = flatten(g, fn, count, t, &v, &n, &size))) return rc;
  int twice = n > 1 ? overlapping(v, n, &at) : 0;
  if (twice) {
    free(v);
    return twice < 0 ? CDAG_NOMEM("datatype ranges")
                     : cdag__error(CDAG_ERR_ARG, "rank %d: %s: the datatype writes the byte at offset %lld more than once",
                                   g->myrank, fn, (long long)at);
  }
  if (n <= 1) {
    rc = cdag_recv(g, n ? base + v[0].off : buf, size, source, tag, op);
    free(v);
    return rc;
  }
  uint8_t *pack = exec_arena_alloc(g, size);
  cdag_op r = CDAG_OP_NULL, c = CDAG_OP_NULL, prev = CDAG_OP_NULL;
  if (!pack) rc = CDAG_NOMEM("receive buffer");
  if (!rc) rc = cdag_scratch(g, pack, size);
  if (!rc) rc = cdag_recv(g, pack, size, source, tag, &r);
  /* the copies are chained, so what depends on the last (the op returned) follows them all */
  for (int64_t k = 0, off = 0; k < n && !rc; off += (int64_t)v[k].len, k++) {
    rc = cdag_copy_local(g, pack + off, base + v[k].off, v[k].len, &c);
    if (!rc && prev != CDAG_OP_NULL) rc = cdag_depend(g, prev, c);
    prev = c;
  }
  free(v);
  if (!rc && op) *op = c;
  return rc;
}

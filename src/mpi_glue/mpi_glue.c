/* cdag — src/mpi_glue/mpi_glue.c: the tables MPI datatype <-> cdag type and MPI_Op <-> cdag
 * op, and the one datatype decoder (mpi_glue.h).
 *
 * The decoder walks a datatype's constructors with MPI_Type_get_envelope/get_contents and
 * replicates the runs of each constructor's old type (decoded once per constructor) at the
 * displacements the constructor gives; a block of elements of a dense old type (one run as
 * long as its extent) is one run. Cost: O(runs produced), bounded by MPIG_MAX_RUNS. It never packs bytes through the datatype: packing interprets them (MPICH packs
 * MPI_LONG_DOUBLE as an x87 value), which a probe of offsets cannot survive. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_glue/mpi_glue.h"

/* The recorder is a profiling layer: it reaches MPI through PMPI_ names. */
#ifdef MPIG_PMPI
#define MPIG(name) PMPI_##name
#else
#define MPIG(name) MPI_##name
#endif

/* ---- the type table ----
   Each cdag type's canonical datatype comes first (mpig_mpi_type reads the table from the
   top); INT_BY_SIZE / REAL_BY_SIZE / COMPLEX_BY_SIZE: Fortran's types, whose size the
   compiler chose (a LOGICAL is an integer: gfortran's .true. is 1, what land/lor give). */
enum { INT_BY_SIZE = -2, REAL_BY_SIZE = -3, COMPLEX_BY_SIZE = -4 };
typedef struct { MPI_Datatype mpi; int cdag; } type_entry;

static const type_entry type_table[] = {
  {MPI_INT8_T, CDAG_INT8}, {MPI_INT16_T, CDAG_INT16}, {MPI_INT32_T, CDAG_INT32}, {MPI_INT64_T, CDAG_INT64},
  {MPI_UINT8_T, CDAG_UINT8}, {MPI_UINT16_T, CDAG_UINT16}, {MPI_UINT32_T, CDAG_UINT32}, {MPI_UINT64_T, CDAG_UINT64},
  {MPI_FLOAT, CDAG_FLOAT}, {MPI_DOUBLE, CDAG_DOUBLE},
  {MPI_FLOAT_INT, CDAG_FLOAT_INT}, {MPI_DOUBLE_INT, CDAG_DOUBLE_INT}, {MPI_LONG_INT, CDAG_LONG_INT},
  {MPI_2INT, CDAG_2INT}, {MPI_SHORT_INT, CDAG_SHORT_INT}, {MPI_2REAL, CDAG_2FLOAT},
  {MPI_2DOUBLE_PRECISION, CDAG_2DOUBLE}, {MPI_C_FLOAT_COMPLEX, CDAG_COMPLEX_FLOAT},
  {MPI_C_DOUBLE_COMPLEX, CDAG_COMPLEX_DOUBLE}, {MPI_LONG_DOUBLE, CDAG_LONG_DOUBLE},
  {MPI_LONG_DOUBLE_INT, CDAG_LONG_DOUBLE_INT}, {MPI_C_LONG_DOUBLE_COMPLEX, CDAG_COMPLEX_LONG_DOUBLE},
  {MPI_CXX_LONG_DOUBLE_COMPLEX, CDAG_COMPLEX_LONG_DOUBLE},
  /* C's other names */
  {MPI_CHAR, CDAG_INT8}, {MPI_SIGNED_CHAR, CDAG_INT8}, {MPI_UNSIGNED_CHAR, CDAG_UINT8}, {MPI_BYTE, CDAG_UINT8},
  {MPI_SHORT, CDAG_INT16}, {MPI_UNSIGNED_SHORT, CDAG_UINT16}, {MPI_INT, CDAG_INT32}, {MPI_UNSIGNED, CDAG_UINT32},
  {MPI_LONG, INT_BY_SIZE}, {MPI_UNSIGNED_LONG, CDAG_UINT64}, {MPI_LONG_LONG, CDAG_INT64},
  {MPI_LONG_LONG_INT, CDAG_INT64}, {MPI_UNSIGNED_LONG_LONG, CDAG_UINT64}, {MPI_AINT, CDAG_INT64},
  {MPI_OFFSET, CDAG_INT64}, {MPI_COUNT, CDAG_INT64}, {MPI_C_COMPLEX, CDAG_COMPLEX_FLOAT},
  {MPI_CXX_FLOAT_COMPLEX, CDAG_COMPLEX_FLOAT}, {MPI_CXX_DOUBLE_COMPLEX, CDAG_COMPLEX_DOUBLE},
  /* Fortran's */
  {MPI_2INTEGER, CDAG_2INT}, {MPI_INTEGER, INT_BY_SIZE}, {MPI_LOGICAL, INT_BY_SIZE},
  {MPI_INTEGER1, CDAG_INT8}, {MPI_INTEGER2, CDAG_INT16}, {MPI_INTEGER4, CDAG_INT32}, {MPI_INTEGER8, CDAG_INT64},
  {MPI_REAL, REAL_BY_SIZE}, {MPI_DOUBLE_PRECISION, REAL_BY_SIZE}, {MPI_REAL4, CDAG_FLOAT}, {MPI_REAL8, CDAG_DOUBLE},
  {MPI_COMPLEX, COMPLEX_BY_SIZE}, {MPI_DOUBLE_COMPLEX, COMPLEX_BY_SIZE}, {MPI_COMPLEX8, CDAG_COMPLEX_FLOAT},
  {MPI_COMPLEX16, CDAG_COMPLEX_DOUBLE},
};
#define NTYPE_ENTRIES (sizeof type_table / sizeof *type_table)

static int by_size(int cls, int size) {
  switch (cls) {
  case INT_BY_SIZE: return size == 1 ? CDAG_INT8 : size == 2 ? CDAG_INT16 : size == 4 ? CDAG_INT32 : size == 8 ? CDAG_INT64 : -1;
  case REAL_BY_SIZE: return size == 4 ? CDAG_FLOAT : size == 8 ? CDAG_DOUBLE : -1;
  default: return size == 8 ? CDAG_COMPLEX_FLOAT : size == 16 ? CDAG_COMPLEX_DOUBLE : -1;
  }
}

int mpig_type_of(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return -1;
  for (size_t i = 0; i < NTYPE_ENTRIES; i++) {
    if (type_table[i].mpi != t) continue;
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    if (MPIG(Type_size)(t, &size) != MPI_SUCCESS || MPIG(Type_get_extent)(t, &lb, &extent) != MPI_SUCCESS) return -1;
    int type = type_table[i].cdag >= 0 ? type_table[i].cdag : by_size(type_table[i].cdag, size);
    /* MPI's layout must be cdag's: a pair's padding is part of cdag's element */
    return type >= 0 && lb == 0 && extent == ir_type_size(type) ? type : -1;
  }
  return -1;
}

MPI_Datatype mpig_mpi_type(int type) {
  for (size_t i = 0; i < NTYPE_ENTRIES; i++)
    if (type_table[i].cdag == type && type_table[i].mpi != MPI_DATATYPE_NULL) return type_table[i].mpi;
  return MPI_DATATYPE_NULL;
}

/* ---- the op table ---- */

static const struct { MPI_Op mpi; int cdag; } op_table[] = {
  {MPI_SUM, CDAG_SUM},   {MPI_PROD, CDAG_PROD}, {MPI_MIN, CDAG_MIN},   {MPI_MAX, CDAG_MAX},
  {MPI_BAND, CDAG_BAND}, {MPI_BOR, CDAG_BOR},   {MPI_BXOR, CDAG_BXOR}, {MPI_LAND, CDAG_LAND},
  {MPI_LOR, CDAG_LOR},   {MPI_LXOR, CDAG_LXOR}, {MPI_MAXLOC, CDAG_MAXLOC}, {MPI_MINLOC, CDAG_MINLOC},
};
#define NOP_ENTRIES (sizeof op_table / sizeof *op_table)

int mpig_op_of(MPI_Op o) {
  for (size_t i = 0; i < NOP_ENTRIES; i++)
    if (op_table[i].mpi == o) return op_table[i].cdag;
  return -1;
}

MPI_Op mpig_mpi_op(int rop) {
  for (size_t i = 0; i < NOP_ENTRIES; i++)
    if (op_table[i].cdag == rop) return op_table[i].mpi;
  return MPI_OP_NULL;
}

int mpig_reduction(MPI_Datatype t, MPI_Op o, int *type, int *rop, char *why, size_t whylen) {
  *rop = mpig_op_of(o);
  *type = mpig_type_of(t);
  if (*rop < 0) {
    snprintf(why, whylen, "not a predefined op");
    return MPIG_REDUCTION_NOOP;
  }
  if (*type < 0) {
    snprintf(why, whylen, "op %s on a datatype cdag has no type for", ir_rop_name(*rop));
    return MPIG_REDUCTION_NOTYPE;
  }
  if (!ir_rop_valid_for(*rop, *type)) {
    snprintf(why, whylen, "op %s is not defined for %s", ir_rop_name(*rop), ir_type_name(*type));
    return MPIG_REDUCTION_INVALID;
  }
  return MPIG_REDUCTION_OK;
}

/* ---- decoding datatypes ---- */

typedef struct {
  int64_t n, cap, appended;   /* appended: runs produced, merged or not (the limit) */
  int64_t *off;
  uint64_t *len;
} runs;

static int runs_add(runs *r, int64_t off, uint64_t len) {
  if (!len) return CDAG_OK;
  if (++r->appended > MPIG_MAX_RUNS)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "a datatype of more than %lld pieces per element", (long long)MPIG_MAX_RUNS);
  if (r->n && r->off[r->n - 1] + (int64_t)r->len[r->n - 1] == off) {
    r->len[r->n - 1] += len;
    return CDAG_OK;
  }
  if (r->n == r->cap) {
    int64_t c = r->cap ? 2 * r->cap : 8;
    int64_t *o = realloc(r->off, (size_t)c * sizeof *o);
    if (o) r->off = o;
    uint64_t *l = o ? realloc(r->len, (size_t)c * sizeof *l) : NULL;
    if (!l) return CDAG_NOMEM("datatype runs");
    r->len = l;
    r->cap = c;
  }
  r->off[r->n] = off;
  r->len[r->n++] = len;
  return CDAG_OK;
}

/* A predefined type: one run, or a C pair whose value and index leave a hole between them
   (MPI_DOUBLE_INT is 12 bytes of data in an extent of 16). */
typedef struct { double v; int i; } pair_double;
typedef struct { long v; int i; } pair_long;
typedef struct { short v; int i; } pair_short;
typedef struct { long double v; int i; } pair_long_double;
typedef struct { float v; int i; } pair_float;
#define PAIR(S) {sizeof(((S *)0)->v), offsetof(S, i)}
static int named_runs(MPI_Datatype t, int64_t at, runs *r) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  if (MPIG(Type_size)(t, &size) != MPI_SUCCESS || MPIG(Type_get_extent)(t, &lb, &extent) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "MPI_Type_size of a predefined datatype failed");
  if (lb == 0 && extent == size) return runs_add(r, at, (uint64_t)size);
  static const struct { size_t vsize, ioff; } pairs[] = {PAIR(pair_double), PAIR(pair_long), PAIR(pair_short),
                                                         PAIR(pair_long_double), PAIR(pair_float)};
  const MPI_Datatype which[] = {MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_FLOAT_INT};
  for (size_t k = 0; k < sizeof which / sizeof *which; k++)
    if (which[k] == t && pairs[k].vsize + sizeof(int) == (size_t)size) {
      int rc = runs_add(r, at, pairs[k].vsize);
      return rc ? rc : runs_add(r, at + (int64_t)pairs[k].ioff, sizeof(int));
    }
  return cdag__error(CDAG_ERR_UNSUPPORTED, "a predefined datatype of %d bytes in an extent of %lld that cdag cannot lay out",
                     size, (long long)extent);
}

static int decode(MPI_Datatype t, int64_t at, runs *r, int depth);


/* One element of a constructor's old type, decoded once: its runs from 0 and its extent. */
typedef struct { runs one; int64_t ext; } elem;

static int elem_decode(MPI_Datatype old, elem *e, runs *r, int depth) {
  MPI_Aint lb = 0, ext = 0;
  memset(e, 0, sizeof *e);
  if (MPIG(Type_get_extent)(old, &lb, &ext) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "MPI_Type_get_extent failed while decoding a datatype");
  e->ext = (int64_t)ext;
  int rc = decode(old, 0, &e->one, depth + 1);
  r->appended += e->one.appended;   /* the limit counts what decoding produced */
  return rc;
}

static void elem_free(elem *e) {
  free(e->one.off);
  free(e->one.len);
}

/* `blocks` consecutive elements at `at`: one run when the element is dense (one run as
   long as its extent), else its runs once per element. */
static int place(const elem *e, int64_t at, int64_t blocks, runs *r) {
  int rc = CDAG_OK;
  if (blocks <= 0) return CDAG_OK;
  if (e->one.n == 1 && (int64_t)e->one.len[0] == e->ext && e->ext > 0) {
    int64_t len;
    if (__builtin_mul_overflow(e->ext, blocks, &len)) return cdag__error(CDAG_ERR_UNSUPPORTED, "a datatype larger than 2^63 bytes");
    return runs_add(r, at + e->one.off[0], (uint64_t)len);
  }
  for (int64_t k = 0; k < blocks && !rc; k++)
    for (int64_t i = 0; i < e->one.n && !rc; i++) rc = runs_add(r, at + k * e->ext + e->one.off[i], e->one.len[i]);
  return rc;
}

/* A subarray: the elements of the subsizes box at `starts` in the sizes box, in C or
   Fortran order; each innermost row is one block. */
static int subarray(const int *ints, const elem *e, int64_t at, runs *r) {
  int nd = ints[0];
  const int *sizes = ints + 1, *sub = ints + 1 + nd, *starts = ints + 1 + 2 * nd, order = ints[1 + 3 * nd];
  int64_t idx[32] = {0}, stride[32];
  if (nd < 1 || nd > 32) return cdag__error(CDAG_ERR_UNSUPPORTED, "a subarray of %d dimensions", nd);
  int c = order == MPI_ORDER_C;   /* the fastest dimension: the last in C, the first in Fortran */
  int64_t s = e->ext;
  for (int k = 0; k < nd; k++) {
    int d = c ? nd - 1 - k : k;
    stride[d] = s;
    s *= sizes[d];
  }
  int fast = c ? nd - 1 : 0, rc = CDAG_OK;
  for (int k = 0; k < nd; k++)
    if (sub[k] <= 0) return CDAG_OK;
  for (;;) {
    int64_t off = at + (int64_t)starts[fast] * stride[fast];
    for (int k = 0; k < nd; k++)
      if (k != fast) off += (starts[k] + idx[k]) * stride[k];
    if ((rc = place(e, off, sub[fast], r))) return rc;
    int k = c ? nd - 2 : 1;   /* next row: odometer over the other dimensions */
    for (; c ? k >= 0 : k < nd; k += c ? -1 : 1) {
      if (++idx[k] < sub[k]) break;
      idx[k] = 0;
    }
    if (c ? k < 0 : k >= nd) return CDAG_OK;
  }
}

/* The constructor's pieces: blocks of its old type (decoded once; a struct's per entry) at
   the displacements it gives, in type-map order. */
static int constructor(int comb, const int *ints, const MPI_Aint *aints, const MPI_Datatype *types, int64_t at, runs *r,
                       int depth) {
  elem e;
  int rc = CDAG_OK;
  switch (comb) {
  case MPI_COMBINER_DUP:
  case MPI_COMBINER_RESIZED: return decode(types[0], at, r, depth + 1);   /* resized: the same type map */
  case MPI_COMBINER_STRUCT:
    for (int i = 0; i < ints[0] && !rc; i++) {
      if (!(rc = elem_decode(types[i], &e, r, depth))) rc = place(&e, at + (int64_t)aints[i], ints[1 + i], r);
      elem_free(&e);
    }
    return rc;
  case MPI_COMBINER_CONTIGUOUS:
  case MPI_COMBINER_VECTOR:
  case MPI_COMBINER_HVECTOR:
  case MPI_COMBINER_INDEXED:
  case MPI_COMBINER_HINDEXED:
  case MPI_COMBINER_INDEXED_BLOCK:
  case MPI_COMBINER_HINDEXED_BLOCK:
  case MPI_COMBINER_SUBARRAY: break;
  default: return cdag__error(CDAG_ERR_UNSUPPORTED, "a datatype built by a constructor cdag does not decode (combiner %d)", comb);
  }
  if ((rc = elem_decode(types[0], &e, r, depth))) {
    elem_free(&e);
    return rc;
  }
  switch (comb) {
  case MPI_COMBINER_CONTIGUOUS: rc = place(&e, at, ints[0], r); break;
  case MPI_COMBINER_VECTOR:
  case MPI_COMBINER_HVECTOR: {
    int64_t stride = comb == MPI_COMBINER_VECTOR ? (int64_t)ints[2] * e.ext : (int64_t)aints[0];
    for (int i = 0; i < ints[0] && !rc; i++) rc = place(&e, at + i * stride, ints[1], r);
    break;
  }
  case MPI_COMBINER_INDEXED:
    for (int i = 0; i < ints[0] && !rc; i++) rc = place(&e, at + (int64_t)ints[1 + ints[0] + i] * e.ext, ints[1 + i], r);
    break;
  case MPI_COMBINER_HINDEXED:
    for (int i = 0; i < ints[0] && !rc; i++) rc = place(&e, at + (int64_t)aints[i], ints[1 + i], r);
    break;
  case MPI_COMBINER_INDEXED_BLOCK:
    for (int i = 0; i < ints[0] && !rc; i++) rc = place(&e, at + (int64_t)ints[2 + i] * e.ext, ints[1], r);
    break;
  case MPI_COMBINER_HINDEXED_BLOCK:
    for (int i = 0; i < ints[0] && !rc; i++) rc = place(&e, at + (int64_t)aints[i], ints[1], r);
    break;
  default: rc = subarray(ints, &e, at, r); break;
  }
  elem_free(&e);
  return rc;
}

/* Appends the runs of one element of t placed at `at`. */
static int decode(MPI_Datatype t, int64_t at, runs *r, int depth) {
  int ni = 0, na = 0, nd = 0, comb = 0;
  if (depth > 64) return cdag__error(CDAG_ERR_UNSUPPORTED, "a datatype nested more than 64 constructors deep");
  if (MPIG(Type_get_envelope)(t, &ni, &na, &nd, &comb) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_ARG, "MPI_Type_get_envelope failed (is the datatype valid?)");
  if (comb == MPI_COMBINER_NAMED) return named_runs(t, at, r);
  if (comb == MPI_COMBINER_F90_REAL || comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER) {
    int size = 0;   /* a parameterised predefined type: contiguous */
    if (MPIG(Type_size)(t, &size) != MPI_SUCCESS) return cdag__error(CDAG_ERR_MPI, "MPI_Type_size failed");
    return runs_add(r, at, (uint64_t)size);
  }
  if (comb == MPI_COMBINER_DARRAY)
    return cdag__error(CDAG_ERR_UNSUPPORTED, "a distributed-array datatype (MPI_Type_create_darray) is not decoded");
  int *ints = malloc((size_t)(ni ? ni : 1) * sizeof *ints);
  MPI_Aint *aints = malloc((size_t)(na ? na : 1) * sizeof *aints);
  MPI_Datatype *types = malloc((size_t)(nd ? nd : 1) * sizeof *types);
  int rc = ints && aints && types ? CDAG_OK : CDAG_NOMEM("datatype contents");
  int got = 0;
  if (!rc && MPIG(Type_get_contents)(t, ni, na, nd, ints, aints, types) != MPI_SUCCESS)
    rc = cdag__error(CDAG_ERR_MPI, "MPI_Type_get_contents failed");
  else if (!rc) got = 1;
  if (!rc) rc = constructor(comb, ints, aints, types, at, r, depth);
  for (int i = 0; got && i < nd; i++) {   /* derived handles get_contents returned are ours to free */
    int a, b, c, k;
    if (MPIG(Type_get_envelope)(types[i], &a, &b, &c, &k) == MPI_SUCCESS && k != MPI_COMBINER_NAMED)
      MPIG(Type_free)(&types[i]);
  }
  free(ints);
  free(aints);
  free(types);
  return rc;
}

int mpig_flatten(MPI_Datatype t, mpig_flat *f) {
  memset(f, 0, sizeof *f);
  if (t == MPI_DATATYPE_NULL) return cdag__error(CDAG_ERR_ARG, "the datatype is MPI_DATATYPE_NULL");
  MPI_Count size = 0, lb = 0, extent = 0;
  if (MPIG(Type_size_x)(t, &size) != MPI_SUCCESS || MPIG(Type_get_extent_x)(t, &lb, &extent) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_ARG, "MPI_Type_size failed (is the datatype valid and committed?)");
  if (size < 0) return cdag__error(CDAG_ERR_UNSUPPORTED, "a datatype whose size MPI cannot tell");
  runs r = {0};
  int rc = size ? decode(t, 0, &r, 0) : CDAG_OK;
  uint64_t total = 0;
  for (int64_t i = 0; !rc && i < r.n; i++) total += r.len[i];
  if (!rc && total != (uint64_t)size)
    rc = cdag__error(CDAG_ERR_UNSUPPORTED, "decoding a datatype gave %llu bytes, MPI_Type_size says %lld",
                     (unsigned long long)total, (long long)size);
  if (rc) {
    free(r.off);
    free(r.len);
    return rc;
  }
  *f = (mpig_flat){r.n, r.off, r.len, (uint64_t)size, (int64_t)lb, (int64_t)extent};
  return CDAG_OK;
}

void mpig_flat_free(mpig_flat *f) {
  if (!f) return;
  free(f->off);
  free(f->len);
  memset(f, 0, sizeof *f);
}

int mpig_runs(const mpig_flat *f, uint64_t count, uint64_t limit, mpig_emit emit, void *ctx) {
  int64_t off = 0;
  uint64_t len = 0, left = limit;
  int rc = 0;
  if (f->n == 1 && (int64_t)f->len[0] == f->extent && count) {   /* dense: one run whatever the count */
    uint64_t all;
    if (__builtin_mul_overflow(f->len[0], count, &all)) all = UINT64_MAX;
    return emit(ctx, f->off[0], all < left ? all : left);
  }
  for (uint64_t k = 0; k < count && left && !rc; k++)
    for (int64_t i = 0; i < f->n && left && !rc; i++) {
      int64_t o = (int64_t)k * f->extent + f->off[i];
      uint64_t l = f->len[i] < left ? f->len[i] : left;
      left -= l;
      if (len && off + (int64_t)len == o) {
        len += l;
        continue;
      }
      if (len) rc = emit(ctx, off, len);
      off = o;
      len = l;
    }
  if (!rc && len) rc = emit(ctx, off, len);
  return rc;
}

/* cdag — src/mpi_glue: MPI's datatypes and ops in cdag's terms (contract of the glue module).
 *
 * One module, compiled into libcdag (exec/mpi) and into libcdag-record (record/pmpi.c), so
 * the executor and the recorder read the same tables and decode datatypes the same way. In
 * the recorder it is built with MPIG_PMPI defined and calls MPI through PMPI_ names, as a
 * profiling layer must.
 *  - Types: mpig_type_of() maps every predefined MPI datatype cdag can represent (the C
 *    integer, floating-point and complex types, MPI_LONG_DOUBLE and its complex, the pair types MPI_2INT,
 *    MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
 *    MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER, Fortran's INTEGER/LOGICAL/REAL/COMPLEX
 *    of every size) to a cdag_type, and checks MPI's layout is cdag's (lower bound 0,
 *    extent = ir_type_size()). What cdag has no type for (bool, wchar, REAL16,
 *    derived types) is -1: the caller reports it as unsupported. mpig_mpi_type() is the way back,
 *    to the predefined datatype of the same layout.
 *  - Ops: mpig_op_of() / mpig_mpi_op() map MPI's predefined reduction ops (not MPI_REPLACE
 *    or MPI_NO_OP) to cdag_reduce_op and back. Which (op, type) pairs are valid is
 *    ir_rop_valid_for() (src/ir/types.c), the loader's rule; mpig_reduction() applies it.
 *  - Datatypes: mpig_flatten() decodes any datatype into the (offset, length) runs of one
 *    element in type-map (pack) order, by MPI_Type_get_envelope / MPI_Type_get_contents,
 *    freeing every derived handle get_contents returns. Adjacent runs merge. One limit:
 *    MPIG_MAX_RUNS runs produced while decoding an element. MPI_COMBINER_DARRAY is not
 *    decoded (CDAG_ERR_UNSUPPORTED). mpig_runs() lays out `count` elements.
 * Errors: CDAG_OK or a CDAG_ERR_* code with cdag__error()'s message (NOMEM, MPI,
 * UNSUPPORTED, ARG). Cost: table look-ups are O(table); decoding is O(runs) per element. */
#ifndef CDAG_MPI_GLUE_H
#define CDAG_MPI_GLUE_H

#include <mpi.h>
#include <stdint.h>

#include "ir/ir.h"

/* The decoder's one limit: runs produced (before merging) for one element of a datatype. */
#define MPIG_MAX_RUNS ((int64_t)1 << 22)
/* The largest message (count * element size) cdag lays out from a datatype: 4 GiB. */
#define MPIG_MAX_BYTES ((uint64_t)1 << 32)

/* ---- types and ops ---- */

/* The cdag_type of predefined datatype t, or -1 (not predefined, or no cdag type has its
   layout). */
int mpig_type_of(MPI_Datatype t);
/* The predefined datatype with cdag type `type`'s layout, MPI_DATATYPE_NULL if none. */
MPI_Datatype mpig_mpi_type(int type);
/* The cdag_reduce_op of a predefined op, or -1 (user ops, MPI_REPLACE, MPI_NO_OP). */
int mpig_op_of(MPI_Op o);
/* MPI's predefined op for cdag op rop, MPI_OP_NULL if none. */
MPI_Op mpig_mpi_op(int rop);

/* A reduction (t, o) as cdag's (type, rop): MPIG_REDUCTION_OK, or why not, with `why` a
   static sentence for reports ("op lxor is not defined for float"). */
enum { MPIG_REDUCTION_OK, MPIG_REDUCTION_NOOP, MPIG_REDUCTION_NOTYPE, MPIG_REDUCTION_INVALID };
int mpig_reduction(MPI_Datatype t, MPI_Op o, int *type, int *rop, char *why, size_t whylen);

/* ---- datatype layout ---- */

typedef struct {
  int64_t n;          /* runs of one element */
  int64_t *off;       /* their offsets from the buffer (type-map order; may be negative) */
  uint64_t *len;      /* their lengths in bytes */
  uint64_t size;      /* bytes of one element (MPI_Type_size) */
  int64_t lb, extent; /* of one element (MPI_Type_get_extent) */
} mpig_flat;

/* Decodes one element of t. On error *f is empty (nothing to free). */
int mpig_flatten(MPI_Datatype t, mpig_flat *f);
void mpig_flat_free(mpig_flat *f);
/* Calls emit for the runs of `count` elements of f laid out from offset 0, adjacent ones
   merged, the first `limit` bytes only (in pack order); stops at emit's first non-zero
   return, which it returns. */
typedef int (*mpig_emit)(void *ctx, int64_t off, uint64_t len);
int mpig_runs(const mpig_flat *f, uint64_t count, uint64_t limit, mpig_emit emit, void *ctx);

#endif

/* cdag — fortran/cdag_f.c: the C half of the Fortran binding (module cdag, fortran/cdag.f90).
 *
 * Built into libcdag when a Fortran compiler is found. Fortran passes buffers as C
 * descriptors (assumed-rank `type(*), dimension(..)` dummies, ISO_Fortran_binding.h): the
 * descriptor gives the array's own address and size, and whether it is contiguous. A
 * graph records addresses, so a non-contiguous section is refused here (CDAG_ERR_ARG): a
 * compiler's copy-in temporary would be recorded instead of the array. Handles arrive as
 * Fortran integers (mpi_f08's MPI_VAL) and are converted with MPI_*_f2c. Only module cdag
 * calls these functions: they are not API (cdag.h). */
#include <ISO_Fortran_binding.h>
#include <stdio.h>

#include "base/checked.h"
#include "base/settings.h"
#include "exec/mpi/graph_mpi.h"
#include "workload/redistribute.h"

#define FAPI __attribute__((visibility("default")))

/* The array's address and size in bytes, if it is contiguous (Fortran's definition:
   each dimension's stride is the size of the ones before it). */
static int buffer_of(const CFI_cdesc_t *d, void **p, size_t *bytes, const char *fn) {
  size_t n = d->elem_len;
  for (int r = 0; r < d->rank; r++) {
    if (d->dim[r].extent > 1 && (size_t)d->dim[r].sm != n)
      return cdag__error(CDAG_ERR_ARG, "%s (Fortran): the buffer is not contiguous (dimension %d has stride %lld "
                         "bytes, %zu expected): cdag records addresses and needs the array itself, not a copy",
                         fn, r + 1, (long long)d->dim[r].sm, n);
    n *= (size_t)(d->dim[r].extent > 0 ? d->dim[r].extent : 0);
  }
  *p = d->base_addr;
  *bytes = n;
  return CDAG_OK;
}

FAPI int cdag_f_graph_create(MPI_Fint comm, cdag_graph **g) { return cdag_graph_create(MPI_Comm_f2c(comm), g); }

/* A message of the whole buffer (typed: count elements of type, from the buffer's start). */
static int message(cdag_graph *g, CFI_cdesc_t *buf, MPI_Count count, MPI_Fint type, int typed, int send, int peer,
                   int tag, cdag_op *op) {
  const char *fn = typed ? (send ? "cdag_send_type" : "cdag_recv_type") : (send ? "cdag_send" : "cdag_recv");
  void *p = NULL;
  size_t n = 0;
  int rc = buffer_of(buf, &p, &n, fn);
  if (rc) return rc;
  if (typed)
    return send ? cdag_send_type(g, p, count, MPI_Type_f2c(type), peer, tag, op)
                : cdag_recv_type(g, p, count, MPI_Type_f2c(type), peer, tag, op);
  return send ? cdag_send(g, p, n, peer, tag, op) : cdag_recv(g, p, n, peer, tag, op);
}

FAPI int cdag_f_send(cdag_graph *g, CFI_cdesc_t *buf, int dest, int tag, cdag_op *op) {
  return message(g, buf, 0, 0, 0, 1, dest, tag, op);
}

FAPI int cdag_f_recv(cdag_graph *g, CFI_cdesc_t *buf, int source, int tag, cdag_op *op) {
  return message(g, buf, 0, 0, 0, 0, source, tag, op);
}

FAPI int cdag_f_send_type(cdag_graph *g, CFI_cdesc_t *buf, MPI_Count count, MPI_Fint type, int dest, int tag,
                          cdag_op *op) {
  return message(g, buf, count, type, 1, 1, dest, tag, op);
}

FAPI int cdag_f_recv_type(cdag_graph *g, CFI_cdesc_t *buf, MPI_Count count, MPI_Fint type, int source, int tag,
                          cdag_op *op) {
  return message(g, buf, count, type, 1, 0, source, tag, op);
}

/* count: the elements of inout (in must be as large). */
FAPI int cdag_f_reduce_local(cdag_graph *g, CFI_cdesc_t *in, CFI_cdesc_t *inout, MPI_Fint type, MPI_Fint mop,
                             cdag_op *op) {
  void *pi = NULL, *po = NULL;
  size_t ni = 0, no = 0;
  int rc = buffer_of(in, &pi, &ni, "cdag_reduce_local");
  if (!rc) rc = buffer_of(inout, &po, &no, "cdag_reduce_local");
  if (rc) return rc;
  MPI_Datatype t = MPI_Type_f2c(type);
  int size = 0;
  if (t == MPI_DATATYPE_NULL || MPI_Type_size(t, &size) != MPI_SUCCESS || size <= 0)
    return cdag__error(CDAG_ERR_ARG, "cdag_reduce_local (Fortran): not a datatype of positive size");
  if (ni != no || no % (size_t)size)
    return cdag__error(CDAG_ERR_ARG, "cdag_reduce_local (Fortran): in has %zu bytes, inout %zu: both must hold the "
                       "same whole number of %d-byte elements", ni, no, size);
  return cdag_reduce_local(g, pi, po, no / (size_t)size, t, MPI_Op_f2c(mop), op);
}

FAPI int cdag_f_copy_local(cdag_graph *g, CFI_cdesc_t *src, CFI_cdesc_t *dst, cdag_op *op) {
  void *ps = NULL, *pd = NULL;
  size_t ns = 0, nd = 0;
  int rc = buffer_of(src, &ps, &ns, "cdag_copy_local");
  if (!rc) rc = buffer_of(dst, &pd, &nd, "cdag_copy_local");
  if (rc) return rc;
  if (ns != nd)
    return cdag__error(CDAG_ERR_ARG, "cdag_copy_local (Fortran): src has %zu bytes, dst %zu", ns, nd);
  return cdag_copy_local(g, ps, pd, ns, op);
}

/* reads_all: read is not looked at (module cdag passes write twice). */
FAPI int cdag_f_compute(cdag_graph *g, CFI_cdesc_t *read, CFI_cdesc_t *write, int64_t cost_ns, cdag_compute_fn fn,
                        void *arg, int reads_all, cdag_op *op) {
  void *pr = NULL, *pw = NULL;
  size_t nr = CDAG_READS_ALL, nw = 0;
  int rc = reads_all ? CDAG_OK : buffer_of(read, &pr, &nr, "cdag_compute");
  if (!rc) rc = buffer_of(write, &pw, &nw, "cdag_compute");
  if (!rc && cost_ns < 0)
    rc = cdag__error(CDAG_ERR_ARG, "cdag_compute (Fortran): cost_ns %lld is negative", (long long)cost_ns);
  return rc ? rc : cdag_compute(g, pr, nr, pw, nw, (uint64_t)cost_ns, fn, arg, op);
}

FAPI int cdag_f_scratch(cdag_graph *g, CFI_cdesc_t *buf) {
  void *p = NULL;
  size_t n = 0;
  int rc = buffer_of(buf, &p, &n, "cdag_scratch");
  return rc ? rc : cdag_scratch(g, p, n);
}

FAPI int cdag_f_segment(cdag_graph *g, CFI_cdesc_t *base, int *seg) {
  void *p = NULL;
  size_t n = 0;
  int rc = buffer_of(base, &p, &n, "cdag_segment");
  return rc ? rc : cdag_segment(g, p, n, seg);
}

/* cdag_get (put = 0: buf is dst) or cdag_put (put = 1: buf is src) of the whole buffer.
   The offset arrives signed (Fortran has no unsigned integers): a negative one is refused
   here rather than wrapped into a huge size_t. */
FAPI int cdag_f_onesided(cdag_graph *g, CFI_cdesc_t *buf, int put, int target, int seg, int64_t offset, cdag_op *op) {
  const char *fn = put ? "cdag_put" : "cdag_get";
  void *p = NULL;
  size_t n = 0;
  int rc = buffer_of(buf, &p, &n, fn);
  if (rc) return rc;
  if (offset < 0) return cdag__error(CDAG_ERR_ARG, "%s (Fortran): offset %lld is negative", fn, (long long)offset);
  return put ? cdag_put(g, p, n, target, seg, (size_t)offset, op) : cdag_get(g, p, n, target, seg, (size_t)offset, op);
}

/* A local array of `bytes` bytes holds this rank's part of layout l, if the rank is in l's
   grid: ((cols - 1) * lld + rows) elements. Fortran knows its arrays' sizes, so a too small
   one is refused here instead of being overrun at run time. A layout or element size that
   cdag_redistribute refuses is left to it (its message names the field). */
static int array_fits(const cdag_graph *g, const cdag_layout *l, size_t bytes, size_t elem, const char *name) {
  int i = 0, j = 0;
  if (!g || g->myrank < 0 || !l || elem == 0 || elem > ((size_t)1 << 20) ||
      rd_check_layout(l, g->nprocs, "cdag_redistribute", name) || !rd_coords(l, g->myrank, &i, &j))
    return CDAG_OK;
  int64_t rows = 0, cols = 0, lld = 0, elems = 0;
  rd_local_shape(l, i, j, &rows, &cols, &lld);
  if (rows == 0 || cols == 0) return CDAG_OK;
  uint64_t need = 0;
  if (ckd_mul(&elems, cols - 1, lld) || ckd_add(&elems, elems, rows) ||
      ckd_mul(&need, (uint64_t)elems, (uint64_t)elem) ||
      need > bytes)
    return cdag__error(CDAG_ERR_ARG, "rank %d: cdag_redistribute (Fortran): the %s array has %zu bytes; "
                       "its part of the matrix (%lld x %lld elements of %zu bytes, lld %lld) needs %llu", g->myrank,
                       name, bytes, (long long)rows, (long long)cols, elem, (long long)lld, (unsigned long long)need);
  return CDAG_OK;
}

/* src or dst absent (a NULL descriptor: an absent optional argument) passes NULL, as C allows
   on processes outside that layout's grid. elem_bytes arrives signed, as Fortran has it. */
FAPI int cdag_f_redistribute(cdag_graph *g, const cdag_layout *from, CFI_cdesc_t *src, const cdag_layout *to,
                             CFI_cdesc_t *dst, int64_t elem) {
  if (elem < 0)
    return cdag__error(CDAG_ERR_ARG, "cdag_redistribute (Fortran): elem_bytes %lld is negative", (long long)elem);
  size_t elem_bytes = (size_t)elem;
  void *ps = NULL, *pd = NULL;
  size_t ns = 0, nd = 0;
  int rc = src ? buffer_of(src, &ps, &ns, "cdag_redistribute") : CDAG_OK;
  if (!rc && dst) rc = buffer_of(dst, &pd, &nd, "cdag_redistribute");
  if (!rc && src) rc = array_fits(g, from, ns, elem_bytes, "src");
  if (!rc && dst) rc = array_fits(g, to, nd, elem_bytes, "dst");
  return rc ? rc : cdag_redistribute(g, from, ps, to, pd, elem_bytes);
}

/* cdag_schedule_rebind with n given (C's form) over an array of `have` moves: n > have is
   refused, but only after taking part in the collective call (with n = -1, which every rank
   then fails on together), so no rank is left waiting. */
FAPI int cdag_f_schedule_rebind(const cdag_schedule *s, int n, int have, const cdag_rebind *moves,
                                cdag_schedule **copy) {
  if (n <= have) return cdag_schedule_rebind(s, n, moves, copy);
  (void)cdag_schedule_rebind(s, -1, moves, copy);   /* fails on every rank: our message follows */
  return cdag__error(CDAG_ERR_ARG, "cdag_schedule_rebind (Fortran): n = %d, but moves has %d elements", n, have);
}

/* Fortran has no FILE *: the report goes to standard output, flushed (Fortran's own unit
   buffer is separate: flush(output_unit) before, if both write). */
FAPI int cdag_f_schedule_report(const cdag_schedule *s, int json) {
  int rc = cdag_schedule_report(s, stdout, json);
  fflush(stdout);
  return rc;
}

/* Tests only (tests/exec/mpi/mpi_fortran.f90): module cdag's type cdag_options, as the Fortran
   compiler laid it out (n fields: struct_size, then the options table's, in order; each
   one's byte offset and size, and the type's size), against the C struct. CDAG_OK, or
   CDAG_ERR_ARG naming the first field that differs. */
FAPI int cdag_f_options_layout(int n, const int64_t *offset, const int64_t *size, int64_t total) {
  if (n != CDAG_NOPTS + 1)
    return cdag__error(CDAG_ERR_ARG, "type(cdag_options) has %d fields, cdag_options %d", n, CDAG_NOPTS + 1);
  if (offset[0] != 0 || size[0] != (int64_t)sizeof(size_t))
    return cdag__error(CDAG_ERR_ARG, "type(cdag_options): struct_size at %lld, %lld bytes", (long long)offset[0],
                       (long long)size[0]);
  for (int id = 0; id < CDAG_NOPTS; id++) {
    const cdag_opt_row *r = &cdag__opt_rows[id];
    if (offset[id + 1] != (int64_t)r->offset || size[id + 1] != (int64_t)r->size)
      return cdag__error(CDAG_ERR_ARG, "type(cdag_options): %s at byte %lld, %lld bytes; in C at %zu, %zu bytes",
                         r->field, (long long)offset[id + 1], (long long)size[id + 1], r->offset, r->size);
  }
  if (total != (int64_t)sizeof(cdag_options))
    return cdag__error(CDAG_ERR_ARG, "type(cdag_options) has %lld bytes, cdag_options %zu", (long long)total,
                       sizeof(cdag_options));
  return CDAG_OK;
}

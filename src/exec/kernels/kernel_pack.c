/* cdag — src/exec/kernels/kernel_pack.c: buffers described as lists of pieces (kern_iov).
 *
 * A kernel works on one contiguous buffer. A caller's buffer of several pieces is packed
 * into an owned contiguous buffer before the rounds and unpacked after them; these helpers
 * copy any byte range of a piece list to or from contiguous memory, walking the pieces
 * once (O(pieces + bytes)). The op keeps its own copy of each piece list, so the caller's
 * arrays need not outlive init. A message of several pieces of one working buffer is an
 * hindexed datatype, built once. */
#include <stdlib.h>
#include <string.h>

#include "exec/kernels/kernel_int.h"

uint64_t kern__iov_bytes(kern_iov v) {
  uint64_t s = 0;
  for (int i = 0; i < v.n; i++) s += v.len[i];
  return s;
}

unsigned char *kern__iov_contig(kern_iov v) {
  return v.n == 1 ? (unsigned char *)(uintptr_t)v.addr[0] : NULL;
}

int kern__keep_iov(kern_op *op, kern_iov v) {
  if (op->niovs == (int)(sizeof op->iovs / sizeof op->iovs[0])) {
    cdag__error(CDAG_ERR_ARG, "rank %d: kernel %s: too many buffers (internal)", op->rank, op->name);
    return -1;
  }
  uint64_t *mem = v.n > 0 ? (uint64_t *)kern__alloc(op, 2 * (uint64_t)v.n * sizeof *mem) : NULL;
  if (v.n > 0 && !mem) {
    CDAG_NOMEM("kernel buffer pieces");
    return -1;
  }
  if (v.n > 0) {
    memcpy(mem, v.addr, (size_t)v.n * sizeof *mem);
    memcpy(mem + v.n, v.len, (size_t)v.n * sizeof *mem);
  }
  op->iovs[op->niovs] = (kern_iov){mem, mem ? mem + v.n : NULL, v.n};
  return op->niovs++;
}

void kern__iov_transfer(kern_iov v, uint64_t off, unsigned char *buf, uint64_t len, int to_iov) {
  for (int i = 0; i < v.n && len > 0; i++) {
    if (off >= v.len[i]) {
      off -= v.len[i];
      continue;
    }
    uint64_t take = v.len[i] - off < len ? v.len[i] - off : len;
    unsigned char *piece = (unsigned char *)(uintptr_t)v.addr[i] + off;
    if (to_iov)
      memmove(piece, buf, take);
    else
      memmove(buf, piece, take);
    buf += take;
    len -= take;
    off = 0;
  }
}

void kern__piece_add(kern_pieces *ps, uint64_t displ, uint64_t len) {
  if (len == 0) return;
  if (ps->n > 0 && (uint64_t)(ps->displ[ps->n - 1] + ps->len[ps->n - 1]) == displ) {
    ps->len[ps->n - 1] += (MPI_Count)len;
    return;
  }
  ps->displ[ps->n] = (MPI_Count)displ;
  ps->len[ps->n++] = (MPI_Count)len;
}

int kern__piece_message(kern_op *op, const kern_pieces *ps, unsigned char *work, void **buf, MPI_Count *count,
                        MPI_Datatype *type) {
  if (ps->n == 1) {
    *buf = work + ps->displ[0];
    *count = ps->len[0];
    return CDAG_OK;
  }
  MPI_Datatype t;
  int mrc = MPI_Type_create_hindexed_c(ps->n, ps->len, ps->displ, MPI_BYTE, &t);
  if (mrc == MPI_SUCCESS) mrc = MPI_Type_commit(&t);
  if (mrc != MPI_SUCCESS) return kern__mpi_error(op, mrc, "MPI_Type_create_hindexed_c");
  *buf = work;
  *count = 1;
  *type = t;
  return kern__keep_type(op, t);
}

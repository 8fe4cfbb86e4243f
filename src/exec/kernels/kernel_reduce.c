/* cdag — src/exec/kernels/kernel_reduce.c: reduce as the n-block circulant broadcast run backwards.
 *
 * Algorithm (Träff, arXiv 2407.18004, reduction): take the rounds of the
 * broadcast from the root (kernel_bcast.c) in reverse order with every edge reversed. Where
 * the broadcast received block b from r - skip[k], the reduction sends r's partial sum of b
 * there; where it sent b to r + skip[k], the reduction receives that rank's partial sum of b
 * and combines it. In the broadcast each block reaches each rank once, along a spanning tree;
 * reversed, a rank forwards a block only after all its children in that tree have added
 * theirs, so the root ends with every contribution combined once. Same cost as the broadcast
 * plus the combines: T(n) = (n - 1 + q)(alpha + beta m / n) + gamma m. Blocks are whole
 * elements. The operator must be commutative (all predefined ones are); floating-point sums
 * are reassociated, as with MPI_Reduce. */
#include <stdio.h>

#include "exec/kernels/kernel_int.h"

int kern__check_reduction(const char *name, uint64_t count, cdag_type type, cdag_reduce_op rop) {
  if (ir_type_size((int)type) <= 0) return cdag__error(CDAG_ERR_ARG, "kernel %s: unknown type %d", name, (int)type);
  if (!ir_rop_name((int)rop) || !ir_rop_valid_for((int)rop, (int)type))
    return cdag__error(CDAG_ERR_ARG, "kernel %s: op %d does not apply to %s", name, (int)rop, ir_type_name((int)type));
  if (count > UINT64_MAX / 16) return cdag__error(CDAG_ERR_ARG, "kernel %s: count %llu too large", name,
                                                 (unsigned long long)count);
  return CDAG_OK;
}

int kern__accumulator(kern_op *op, kern_iov send, kern_iov recv, uint64_t bytes, int want_result,
                      unsigned char **acc) {
  kern_iov in = send.n ? send : recv;
  uint64_t have = kern__iov_bytes(in);
  if (have != bytes || (want_result && kern__iov_bytes(recv) != bytes))
    return cdag__error(CDAG_ERR_ARG, "rank %d: kernel %s: buffers of %llu and %llu bytes for %llu", op->rank,
                       op->name, (unsigned long long)have, (unsigned long long)kern__iov_bytes(recv),
                       (unsigned long long)bytes);
  *acc = want_result ? kern__iov_contig(recv) : NULL;
  if (!*acc && !(*acc = kern__alloc(op, bytes))) return CDAG_NOMEM("reduction buffer");
  int rc = CDAG_OK;
  if (kern__iov_contig(in) != *acc) {
    int v = kern__keep_iov(op, in);
    rc = v < 0 ? CDAG_ERR_NOMEM : kern__copy(op, 1, v, 0, *acc, bytes, 0);
  }
  if (rc == CDAG_OK && want_result && *acc != kern__iov_contig(recv)) {
    int v = kern__keep_iov(op, recv);
    rc = v < 0 ? CDAG_ERR_NOMEM : kern__copy(op, 0, v, 0, *acc, bytes, 1);
  }
  return rc;
}

static int reduce_build(kern_op *op, const kern_group *g, int root, kern_iov send, kern_iov recv, uint64_t count) {
  if (root < 0 || root >= op->p)
    return cdag__error(CDAG_ERR_ARG, "rank %d: kernel reduce: root %d not among %d members", op->rank, root, op->p);
  uint64_t es = (uint64_t)ir_type_size(op->type), bytes = count * es;
  unsigned char *acc;
  int rc = kern__accumulator(op, send, recv, bytes, op->me == root, &acc);
  if (rc != CDAG_OK) return rc;
  int n = kern__nblocks(g, op->p, count, es);
  unsigned char *scratch = kern__alloc(op, (count / (uint64_t)n + 1) * es);
  if (!scratch) return CDAG_NOMEM("reduce block");
  op->bytes = bytes;
  op->nblocks = n;
  if ((rc = kern__circulant_steps(op, root, n, count, es, acc, scratch, 1)) != CDAG_OK) return rc;
  snprintf(op->desc, sizeof op->desc, "reduce circulant p=%d n=%d steps=%lld", op->p, n, (long long)op->nsteps);
  return kern__finish(op);
}

int kern_reduce_init(const kern_group *g, int root, kern_iov send, kern_iov recv, uint64_t count, cdag_type type,
                     cdag_reduce_op rop, kern_op **out) {
  int rc = kern__check_reduction(ir_coll_name(IR_COLL_REDUCE), count, type, rop);
  if (rc != CDAG_OK) return rc;
  kern_op *op;
  if ((rc = kern__open(g, ir_coll_name(IR_COLL_REDUCE), KERN_TAG + IR_COLL_REDUCE, &op)) != CDAG_OK) return rc;
  op->type = (int)type;
  op->rop = (int)rop;
  if ((rc = reduce_build(op, g, root, send, recv, count)) != CDAG_OK) {
    kern_free(&op);
    return rc;
  }
  *out = op;
  return CDAG_OK;
}

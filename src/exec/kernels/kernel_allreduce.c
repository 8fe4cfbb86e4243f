/* cdag — src/exec/kernels/kernel_allreduce.c: allreduce, by reduce + broadcast or by census.
 *
 * Algorithm 1, large data (Träff, as MPICH's circ_graph allreduce): the
 * circulant reduce to member 0 (kernel_reduce.c) followed by the circulant broadcast from
 * it (kernel_bcast.c), in place in the result buffer:
 *   T = 2 (n - 1 + q)(alpha + beta m / n), every member gets bit-identical results.
 * Algorithm 2, small data (Träff, census, Alg. 8): W_r, the sum over the next
 * skip[k+1] - 1 ranks, grows each round: if skip[k+1] = 2 s (s = skip[k]), r receives
 * x ⊕ W of r + s; otherwise (skip[k+1] = 2 s - 1) it receives W of r + s - 1. After q rounds
 * the result is W_r ⊕ x_r:
 *   T = q (alpha + beta m).
 * Each rank sums in its own order, so the census is chosen automatically only where order
 * cannot matter (integer types, min/max and the bitwise/logical ops); floating-point sums go
 * through reduce + broadcast. The choice compares the two model times (kernel_model.c). */
#include <stdio.h>
#include <string.h>

#include "exec/kernels/kernel_int.h"

int kern__census_run(kern_op *op) {
  kern_census *c = op->census;
  for (int k = 0; k < c->rounds; k++) {
    unsigned char *out = c->doubling[k] ? c->t : c->w, *in = k == 0 ? c->w : c->r;
    if (c->doubling[k] && k == 0) out = c->x;
    if (c->doubling[k] && k > 0) {
      memcpy(c->t, c->x, c->bytes);
      ir_reduce_apply(op->type, op->rop, c->w, c->t, c->count);
    }
    int mrc = MPI_Sendrecv_c(out, (MPI_Count)c->bytes, MPI_BYTE, c->speer[k], op->tag, in, (MPI_Count)c->bytes,
                             MPI_BYTE, c->rpeer[k], op->tag, op->comm, MPI_STATUS_IGNORE);
    if (mrc != MPI_SUCCESS) return kern__mpi_error(op, mrc, "MPI_Sendrecv_c");
    if (k > 0) ir_reduce_apply(op->type, op->rop, c->r, c->w, c->count);
  }
  if (c->res != c->x) memcpy(c->res, c->x, c->bytes);
  if (c->rounds > 0) ir_reduce_apply(op->type, op->rop, c->w, c->res, c->count);
  return CDAG_OK;
}

static int census_build(kern_op *op, kern_iov send, kern_iov recv, uint64_t count) {
  uint64_t bytes = op->bytes;
  kern_census *c = calloc(1, sizeof *c);
  if (!c) return CDAG_NOMEM("census");
  op->census = c;
  kern_iov in = send.n ? send : recv;
  if (kern__iov_bytes(in) != bytes || kern__iov_bytes(recv) != bytes)
    return cdag__error(CDAG_ERR_ARG, "rank %d: kernel allreduce: buffers of %llu and %llu bytes for %llu", op->rank,
                       (unsigned long long)kern__iov_bytes(in), (unsigned long long)kern__iov_bytes(recv),
                       (unsigned long long)bytes);
  c->count = count;
  c->bytes = bytes;
  c->w = kern__alloc(op, bytes);
  c->t = kern__alloc(op, bytes);
  c->r = kern__alloc(op, bytes);
  c->res = kern__iov_contig(recv);
  c->x = kern__iov_contig(in);
  if (!c->w || !c->t || !c->r) return CDAG_NOMEM("census buffers");
  int rc = CDAG_OK;
  if (!c->x) {   /* pieces: pack the input */
    int v = kern__keep_iov(op, in);
    if (v < 0 || !(c->x = kern__alloc(op, bytes))) return CDAG_NOMEM("census input");
    rc = kern__copy(op, 1, v, 0, c->x, bytes, 0);
  }
  if (rc == CDAG_OK && !c->res) {
    int v = kern__keep_iov(op, recv);
    if (v < 0 || !(c->res = kern__alloc(op, bytes))) return CDAG_NOMEM("census result");
    rc = kern__copy(op, 0, v, 0, c->res, bytes, 1);
  }
  circ_graph g;
  if (rc == CDAG_OK && circ_init(&g, op->p) != 0) rc = cdag__error(CDAG_ERR_ARG, "rank %d: census: p = %d", op->rank, op->p);
  if (rc != CDAG_OK) return rc;
  c->rounds = bytes > 0 ? g.q : 0;
  for (int k = 0; k < c->rounds; k++) {
    int s = g.skip[k], d = g.skip[k + 1] == 2 * s ? s : s - 1;
    c->doubling[k] = g.skip[k + 1] == 2 * s;
    c->speer[k] = op->members[(op->me - d + op->p) % op->p];
    c->rpeer[k] = op->members[(op->me + d) % op->p];
  }
  snprintf(op->desc, sizeof op->desc, "allreduce census p=%d rounds=%d", op->p, c->rounds);
  return CDAG_OK;
}

static int reduce_bcast_build(kern_op *op, const kern_group *g, kern_iov send, kern_iov recv, uint64_t count) {
  uint64_t es = (uint64_t)ir_type_size(op->type);
  unsigned char *acc;
  int rc = kern__accumulator(op, send, recv, op->bytes, 1, &acc);
  if (rc != CDAG_OK) return rc;
  int n = kern__nblocks(g, op->p, count, es);
  unsigned char *scratch = kern__alloc(op, (count / (uint64_t)n + 1) * es);
  if (!scratch) return CDAG_NOMEM("allreduce block");
  op->nblocks = n;
  rc = kern__circulant_steps(op, 0, n, count, es, acc, scratch, 1);
  if (rc == CDAG_OK) rc = kern__circulant_steps(op, 0, n, count, es, acc, NULL, 0);
  if (rc != CDAG_OK) return rc;
  snprintf(op->desc, sizeof op->desc, "allreduce reduce+bcast p=%d n=%d steps=%lld", op->p, n, (long long)op->nsteps);
  return kern__finish(op);
}

/* Census where the model prefers it and the op's result cannot depend on the order. */
static kern_alg allreduce_alg(const kern_group *g, int p, uint64_t bytes, cdag_type type, cdag_reduce_op rop) {
  if (g->alg == KERN_ALG_CENSUS || g->alg == KERN_ALG_CIRCULANT) return g->alg;
  int exact = ir_rop_idempotent((int)rop) || !ir_type_is_float((int)type);
  kern_model m = g->model ? *g->model : kern_model_default();
  if (exact && kern_model_census(&m, p, bytes) <= kern_model_circulant(&m, IR_COLL_ALLREDUCE, p, bytes))
    return KERN_ALG_CENSUS;
  return KERN_ALG_CIRCULANT;
}

int kern_allreduce_init(const kern_group *g, kern_iov send, kern_iov recv, uint64_t count, cdag_type type,
                        cdag_reduce_op rop, kern_op **out) {
  int rc = kern__check_reduction(ir_coll_name(IR_COLL_ALLREDUCE), count, type, rop);
  if (rc != CDAG_OK) return rc;
  kern_op *op;
  if ((rc = kern__open(g, ir_coll_name(IR_COLL_ALLREDUCE), KERN_TAG + IR_COLL_ALLREDUCE, &op)) != CDAG_OK) return rc;
  op->type = (int)type;
  op->rop = (int)rop;
  op->bytes = count * (uint64_t)ir_type_size((int)type);
  if (allreduce_alg(g, op->p, op->bytes, type, rop) == KERN_ALG_CENSUS)
    rc = census_build(op, send, recv, count);
  else
    rc = reduce_bcast_build(op, g, send, recv, count);
  if (rc != CDAG_OK) {
    kern_free(&op);
    return rc;
  }
  *out = op;
  return CDAG_OK;
}

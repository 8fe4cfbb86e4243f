/* cdag — src/exec/kernels/kernel_run.c: the life of a built kernel (open, steps, run, free).
 *
 * Every kernel is built into the same shape (kernel_int.h): pack copies, a list of rounds
 * with at most one send and one receive each, unpack copies. Building creates one persistent
 * request per message, so a run is: pack, then per round MPI_Startall + MPI_Waitall (+ the
 * combine of a reduction), then unpack. A run allocates nothing. The one-shot forms and the
 * block-count choice live here too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/kernels/kernel_int.h"

int kern__mpi_error(const kern_op *op, int mpi_rc, const char *call) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(mpi_rc, text, &len);
  return cdag__error(CDAG_ERR_MPI, "rank %d: kernel %s: %s failed: %s", op->rank, op->name, call, text);
}

/* Checks members (sorted, distinct, ranks of comm) and finds the caller among them. */
static int open_members(kern_op *op, const kern_group *g, int size) {
  int p = g->members ? g->nmembers : size;
  if (p < 1) return cdag__error(CDAG_ERR_ARG, "rank %d: kernel %s: %d members", op->rank, op->name, p);
  op->members = malloc((size_t)p * sizeof *op->members);
  if (!op->members) return CDAG_NOMEM("kernel members");
  op->p = p;
  op->me = -1;
  for (int i = 0; i < p; i++) {
    int r = g->members ? g->members[i] : i;
    if (r < 0 || r >= size || (i > 0 && r <= op->members[i - 1]))
      return cdag__error(CDAG_ERR_ARG, "rank %d: kernel %s: member %d is rank %d (need sorted distinct ranks < %d)",
                         op->rank, op->name, i, r, size);
    op->members[i] = r;
    if (r == op->rank) op->me = i;
  }
  if (op->me < 0)
    return cdag__error(CDAG_ERR_ARG, "rank %d: kernel %s: the caller is not a member", op->rank, op->name);
  return CDAG_OK;
}

int kern__open(const kern_group *g, const char *name, int tag, kern_op **out) {
  if (!out) return cdag__error(CDAG_ERR_ARG, "kernel %s: NULL result pointer", name);
  *out = NULL;
  if (!g || g->comm == MPI_COMM_NULL) return cdag__error(CDAG_ERR_ARG, "kernel %s: no group or communicator", name);
  kern_op *op = calloc(1, sizeof *op);
  if (!op) return CDAG_NOMEM("kernel");
  op->comm = g->comm;
  op->name = name;
  op->tag = tag;
  int size = 0, mrc = MPI_Comm_rank(g->comm, &op->rank);
  if (mrc == MPI_SUCCESS) mrc = MPI_Comm_size(g->comm, &size);
  int rc = mrc != MPI_SUCCESS ? kern__mpi_error(op, mrc, "MPI_Comm_rank/size") : open_members(op, g, size);
  if (rc != CDAG_OK) {
    kern_free(&op);
    return rc;
  }
  *out = op;
  return CDAG_OK;
}

unsigned char *kern__alloc(kern_op *op, uint64_t bytes) {
  if (base_grow((void **)&op->owned, op->nowned, &op->capowned, 1, sizeof *op->owned, "kernel buffers")) return NULL;
  unsigned char *m = calloc(1, bytes ? (size_t)bytes : 1);
  if (m) op->owned[op->nowned++] = m;
  return m;
}

kern_step *kern__step(kern_op *op) {
  if (base_grow((void **)&op->steps, op->nsteps, &op->capsteps, 1, sizeof *op->steps, "kernel rounds")) return NULL;
  kern_step *s = &op->steps[op->nsteps++];
  memset(s, 0, sizeof *s);
  s->speer = s->rpeer = -1;
  s->stype = s->rtype = MPI_BYTE;
  return s;
}

int kern__keep_type(kern_op *op, MPI_Datatype t) {
  if (base_grow((void **)&op->types, op->ntypes, &op->captypes, 1, sizeof *op->types, "kernel datatypes")) {
    MPI_Type_free(&t);
    return CDAG_ERR_NOMEM;
  }
  op->types[op->ntypes++] = t;
  return CDAG_OK;
}

int kern__finish(kern_op *op) {
  op->reqs = malloc((size_t)(2 * op->nsteps + 1) * sizeof *op->reqs);
  if (!op->reqs) return CDAG_NOMEM("kernel requests");
  for (int64_t i = 0; i < op->nsteps; i++) {
    kern_step *s = &op->steps[i];
    s->req = op->nreqs;
    if (s->rpeer >= 0) {
      int mrc = MPI_Recv_init_c(s->rbuf, s->rcount, s->rtype, s->rpeer, op->tag, op->comm, &op->reqs[op->nreqs]);
      if (mrc != MPI_SUCCESS) return kern__mpi_error(op, mrc, "MPI_Recv_init_c");
      op->nreqs++;
    }
    if (s->speer >= 0) {
      int mrc = MPI_Send_init_c(s->sbuf, s->scount, s->stype, s->speer, op->tag, op->comm, &op->reqs[op->nreqs]);
      if (mrc != MPI_SUCCESS) return kern__mpi_error(op, mrc, "MPI_Send_init_c");
      op->nreqs++;
    }
    s->nreq = op->nreqs - s->req;
  }
  return CDAG_OK;
}

/* Runs the pack (pre = 1) or unpack copies. */
static void run_copies(kern_op *op, const kern_copy *c, int n);

/* Starts the round op->cur (when it has messages). */
static int start_round(kern_op *op) {
  if (op->cur >= op->nsteps || !op->steps[op->cur].nreq) return CDAG_OK;
  kern_step *s = &op->steps[op->cur];
  int mrc = MPI_Startall(s->nreq, &op->reqs[s->req]);
  return mrc == MPI_SUCCESS ? CDAG_OK : kern__mpi_error(op, mrc, "round MPI_Startall");
}

/* Completes the round in flight (block: waiting for it; else only if it is done, *done
   telling) and starts the next; after the last round, the unpack copies. */
static int finish_round(kern_op *op, int block, int *done) {
  kern_step *s = &op->steps[op->cur];
  MPI_Status st[2];   /* not MPI_STATUSES_IGNORE: gcc's access attribute check rejects it */
  int flag = 1, mrc = MPI_SUCCESS;
  if (s->nreq && block) mrc = MPI_Waitall(s->nreq, &op->reqs[s->req], st);
  else if (s->nreq) mrc = MPI_Testall(s->nreq, &op->reqs[s->req], &flag, st);
  if (mrc != MPI_SUCCESS) return kern__mpi_error(op, mrc, block ? "round MPI_Waitall" : "round MPI_Testall");
  *done = flag;
  if (!flag) return CDAG_OK;
  if (s->cdst) ir_reduce_apply(op->type, op->rop, s->rbuf, s->cdst, s->ccount);
  op->cur++;
  if (op->cur == op->nsteps) run_copies(op, op->post, op->npost);
  return start_round(op);
}

int kern_start(kern_op *op) {
  if (!op) return cdag__error(CDAG_ERR_ARG, "kern_start: NULL kernel");
  run_copies(op, op->pre, op->npre);
  op->cur = 0;
  if (op->census) {   /* its rounds depend on each other's data: it runs at once */
    int rc = kern__census_run(op);
    if (rc != CDAG_OK) return rc;
  }
  if (!op->nsteps) run_copies(op, op->post, op->npost);
  return start_round(op);
}

int kern_test(kern_op *op, int *done) {
  int rc = CDAG_OK, round = 1;
  while (!rc && round && op->cur < op->nsteps) rc = finish_round(op, 0, &round);
  *done = op->cur == op->nsteps;
  return rc;
}

int kern_complete(kern_op *op) {
  int rc = CDAG_OK, round;
  while (!rc && op->cur < op->nsteps) rc = finish_round(op, 1, &round);
  return rc;
}

int kern_run(kern_op *op) {
  int rc = kern_start(op);
  return rc ? rc : kern_complete(op);
}

int kern_free(kern_op **pop) {
  if (!pop || !*pop) return CDAG_OK;
  kern_op *op = *pop;
  for (int i = 0; i < op->nreqs; i++)
    if (op->reqs[i] != MPI_REQUEST_NULL) MPI_Request_free(&op->reqs[i]);
  for (int64_t i = 0; i < op->ntypes; i++) MPI_Type_free(&op->types[i]);
  for (int64_t i = 0; i < op->nowned; i++) free(op->owned[i]);
  free(op->owned);
  free(op->reqs);
  free(op->types);
  free(op->steps);
  free(op->members);
  free(op->census);
  free(op);
  *pop = NULL;
  return CDAG_OK;
}

const char *kern_describe(const kern_op *op) { return op ? op->desc : ""; }

/* ---- block counts ---- */

int kern__nblocks(const kern_group *g, int p, uint64_t units, uint64_t unit) {
  return kern_model_nblocks(g->model, g->nblocks, p, units, unit);
}

/* ---- one-shot forms ---- */

/* Runs and frees a kernel just built (rc: the init's result; op is read only after it). */
static int once(int rc, kern_op **op) {
  if (rc == CDAG_OK) rc = kern_run(*op);
  kern_free(op);
  return rc;
}

int kern_bcast(const kern_group *g, int root, kern_iov buf) {
  kern_op *op = NULL;
  return once(kern_bcast_init(g, root, buf, &op), &op);
}

int kern_allgather(const kern_group *g, kern_iov send, kern_iov recv) {
  kern_op *op = NULL;
  return once(kern_allgather_init(g, send, recv, &op), &op);
}

int kern_allgatherv(const kern_group *g, kern_iov send, kern_iov recv, const uint64_t *counts) {
  kern_op *op = NULL;
  return once(kern_allgatherv_init(g, send, recv, counts, &op), &op);
}

int kern_reduce(const kern_group *g, int root, kern_iov send, kern_iov recv, uint64_t count, cdag_type type,
                cdag_reduce_op rop) {
  kern_op *op = NULL;
  return once(kern_reduce_init(g, root, send, recv, count, type, rop, &op), &op);
}

int kern_allreduce(const kern_group *g, kern_iov send, kern_iov recv, uint64_t count, cdag_type type,
                   cdag_reduce_op rop) {
  kern_op *op = NULL;
  return once(kern_allreduce_init(g, send, recv, count, type, rop, &op), &op);
}

/* ---- copies (the iov helpers are in kernel_pack.c) ---- */

int kern__copy(kern_op *op, int pre, int iov, uint64_t off, unsigned char *buf, uint64_t len, int to_iov) {
  kern_copy *c = pre ? op->pre : op->post;
  int *n = pre ? &op->npre : &op->npost;
  if (len == 0) return CDAG_OK;
  if (*n == 4) return cdag__error(CDAG_ERR_ARG, "rank %d: kernel %s: too many copies (internal)", op->rank, op->name);
  c[(*n)++] = (kern_copy){iov, off, buf, len, to_iov};
  return CDAG_OK;
}

static void run_copies(kern_op *op, const kern_copy *c, int n) {
  for (int i = 0; i < n; i++) kern__iov_transfer(op->iovs[c[i].iov], c[i].off, c[i].buf, c[i].len, c[i].to_iov);
}

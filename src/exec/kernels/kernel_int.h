/* cdag — src/exec/kernels/kernel_int.h: internals shared by the kernel files (not a contract).
 *
 * A built kernel is a list of rounds ("steps"): in each, at most one message out and one in
 * (each a buffer, count and datatype fixed at build time, started as persistent requests),
 * and for reductions a combine of the received block into the accumulator. Copies before
 * the rounds pack the inputs into the working buffer; copies after unpack the result. The
 * census allreduce has its own loop (kernel_allreduce.c). */
#ifndef CDAG_EXEC_KERNEL_INT_H
#define CDAG_EXEC_KERNEL_INT_H

#include "circulant/circulant.h"
#include "exec/kernels/kernel.h"
#include "base/error.h"

#define KERN_MAXQ 64  /* rounds per phase, as circ_graph.skip allows */

/* One round. */
typedef struct {
  int speer, rpeer;           /* comm ranks, -1: no message */
  void *sbuf, *rbuf;          /* message buffers */
  MPI_Count scount, rcount;   /* in stype / rtype units */
  MPI_Datatype stype, rtype;  /* MPI_BYTE or a datatype owned by the op */
  unsigned char *cdst;        /* reductions: rbuf is combined into cdst (NULL: none) */
  uint64_t ccount;            /* elements to combine */
  int req;                    /* first of this step's persistent requests in op->reqs */
  int nreq;                   /* 0, 1 or 2 */
} kern_step;

/* A copy between an iov (at a byte offset of its sequence) and a contiguous buffer. */
typedef struct {
  int iov;         /* index into op->iovs */
  uint64_t off;    /* offset in the iov's byte sequence */
  unsigned char *buf;
  uint64_t len;
  int to_iov;      /* 0: iov -> buf (pack), 1: buf -> iov (unpack) */
} kern_copy;

/* The census allreduce's buffers and peers (kernel_allreduce.c). */
typedef struct {
  unsigned char *x, *w, *t, *r;  /* own input, running sum, outgoing, incoming: bytes each */
  unsigned char *res;            /* result: x combined with w */
  uint64_t count, bytes;
  int rounds;
  int speer[KERN_MAXQ], rpeer[KERN_MAXQ];
  int doubling[KERN_MAXQ];       /* skip[k+1] == 2 skip[k]: send x+W, else send W */
} kern_census;

struct kern_op {
  MPI_Comm comm;
  int rank;                  /* comm rank (for messages) */
  int p, me;                 /* members, own member index */
  const char *name;          /* "bcast", ... */
  int tag;                   /* KERN_TAG + kind: every message of the op */
  int type, rop;             /* reductions: cdag_type, cdag_reduce_op */
  uint64_t bytes;            /* result bytes (reductions: the vector) */
  int nblocks;               /* block count of n-block schedules */
  char desc[96];             /* kern_describe() */
  int *members;              /* comm rank of each member */
  void **owned;              /* memory released with the op (work, scratch, copies) */
  int64_t nowned, capowned;
  kern_iov iovs[4];          /* copies of the caller's iovs (pieces owned) */
  int niovs;
  kern_copy pre[4], post[4]; /* packs before the rounds, unpacks after them */
  int npre, npost;
  kern_step *steps;          /* the rounds that have messages, in order */
  int64_t nsteps, capsteps;
  MPI_Datatype *types;       /* derived datatypes to free */
  int64_t ntypes, captypes;
  MPI_Request *reqs;         /* persistent: each step's receive, then its send */
  int nreqs;
  kern_census *census;       /* census allreduce, else NULL */
  int64_t cur;               /* run state: the round in flight (kern_start .. kern_test) */
};

/* Validates the group, allocates *op with comm, rank, p, me, tag. CDAG_ERR_ARG for a
   caller that is not a member, unsorted or out-of-range members. */
int kern__open(const kern_group *g, const char *name, int tag, kern_op **op);
/* Total bytes of an iov. */
uint64_t kern__iov_bytes(kern_iov v);
/* Stores a copy of v in the op; returns its index (or -1 with an error recorded). */
int kern__keep_iov(kern_op *op, kern_iov v);
/* Copies len bytes between v's byte sequence at off and buf (to_iov: buf -> v). */
void kern__iov_transfer(kern_iov v, uint64_t off, unsigned char *buf, uint64_t len, int to_iov);
/* Pieces of one message: (displacement in a working buffer, length). */
typedef struct {
  MPI_Count *displ, *len;
  int n;
} kern_pieces;
/* Appends a piece, merged with the previous one when adjacent; empty pieces are dropped. */
void kern__piece_add(kern_pieces *ps, uint64_t displ, uint64_t len);
/* One side of a step from ps->n >= 1 pieces over work: a pointer and a byte count for one
   piece, else an hindexed datatype (owned by the op) over work with count 1. */
int kern__piece_message(kern_op *op, const kern_pieces *ps, unsigned char *work, void **buf, MPI_Count *count,
                        MPI_Datatype *type);
/* Contiguous address of v when it is one piece, else NULL. */
unsigned char *kern__iov_contig(kern_iov v);
/* Owned memory of `bytes` (zeroed), released with the op. */
unsigned char *kern__alloc(kern_op *op, uint64_t bytes);
/* Registers a pack (to_iov 0) or unpack (1) copy to run before (pre 1) or after the rounds. */
int kern__copy(kern_op *op, int pre, int iov, uint64_t off, unsigned char *buf, uint64_t len, int to_iov);
/* Appends a step; returns it (zeroed: no messages) or NULL with an error recorded. */
kern_step *kern__step(kern_op *op);
/* Takes ownership of a committed datatype. */
int kern__keep_type(kern_op *op, MPI_Datatype t);
/* Creates the persistent requests of every step; call last in init. */
int kern__finish(kern_op *op);
/* The MPI error of call, as CDAG_ERR_MPI naming the op's rank and kernel. */
int kern__mpi_error(const kern_op *op, int mpi_rc, const char *call);
/* Block count: forced (g->nblocks, else the model's blocks) or the model's choice, within [1, max(units,1)]. */
int kern__nblocks(const kern_group *g, int p, uint64_t units, uint64_t unit);
/* Appends the rounds of an n-block circulant broadcast of work[0 .. units*unit) from member
   root. reverse = 1: the reduction (rounds backwards, received blocks go to scratch and are
   combined into work with op->type/op->rop; unit is then the element size). */
int kern__circulant_steps(kern_op *op, int root, int n, uint64_t units, uint64_t unit,
                          unsigned char *work, unsigned char *scratch, int reverse);
/* A reduction's accumulator of `bytes`: recv itself when contiguous and want_result, else
   owned; packs the input (send, or recv when send.n == 0) into it before the rounds and, when
   want_result and owned, unpacks it into recv after them. Checks the buffer sizes. */
int kern__accumulator(kern_op *op, kern_iov send, kern_iov recv, uint64_t bytes, int want_result,
                      unsigned char **acc);
/* The census allreduce's rounds, between the op's pack and unpack (kernel_allreduce.c). */
int kern__census_run(kern_op *op);
/* Validates a reduction's type and op. */
int kern__check_reduction(const char *name, uint64_t count, cdag_type type, cdag_reduce_op rop);

#endif

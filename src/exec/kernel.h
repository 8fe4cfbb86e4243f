/* cdag — src/exec/kernel.h: cdag's own collective kernels over MPI point-to-point.
 *
 * Träff's round-optimal n-block schedules on a circulant graph (seed 004, SEEDS-NOTES 1):
 * broadcast, regular and irregular allgather, reduce (the broadcast run backwards) and
 * allreduce (reduce + broadcast, or the q-round census for small data). A kernel runs on any
 * set of ranks of a communicator (no sub-communicator needed) and on contiguous or
 * noncontiguous buffers. Each kernel is built once (schedule, persistent requests, datatypes:
 * kern_*_init), run any number of times (kern_run) and freed (kern_free); the one-shot forms
 * (kern_bcast, ...) do the three in one call. The block count comes from the alpha-beta
 * model (kernel_model.c) unless forced.
 *
 * Group: a kernel runs on members[0..nmembers) (sorted ranks of comm; kernel rank i is
 * members[i]; a root is an index into members). Every member must call the same kernel with
 * the same arguments (sizes, counts, root, block count); non-members must not call it.
 * comm is the graph's private duplicate: kernels use the tags from KERN_TAG on.
 *
 * Buffers: a kern_iov is an ordered list of (address, length) pieces read or written as one
 * byte sequence; contiguous = one piece. With several pieces the kernel packs into (or
 * unpacks from) an internal contiguous buffer. Buffers must stay valid and at the same
 * addresses from init to free; each run moves the bytes they hold when it starts.
 *
 * Errors: CDAG_OK, or CDAG_ERR_ARG (bad group, root, sizes, type/op), CDAG_ERR_NOMEM,
 * CDAG_ERR_MPI, with a message naming the rank and the kernel. */
#ifndef CDAG_EXEC_KERNEL_H
#define CDAG_EXEC_KERNEL_H

#include <stdint.h>

#include "ir/ir.h"

#define KERN_TAG 0x6b00  /* tags KERN_TAG .. KERN_TAG + 7 (one per kernel kind) */

/* A buffer: n pieces (addr[i], len[i]); n == 0 is empty (or "in place" where stated). */
typedef struct {
  const uint64_t *addr;  /* absolute addresses ((uint64_t)(uintptr_t)ptr) */
  const uint64_t *len;   /* bytes per piece */
  int n;                 /* number of pieces */
} kern_iov;

/* The linear cost model: a message of m bytes costs alpha + beta * m seconds. */
typedef struct {
  double alpha;  /* latency, s */
  double beta;   /* time per byte, s/B */
} kern_model;

typedef enum { KERN_BCAST, KERN_ALLGATHER, KERN_ALLGATHERV, KERN_REDUCE, KERN_ALLREDUCE } kern_kind;
typedef enum {
  KERN_ALG_AUTO = 0,    /* let the model choose */
  KERN_ALG_MPI,         /* MPI's own collective (kern_model_choose only) */
  KERN_ALG_CIRCULANT,   /* n-block circulant schedule (allreduce: reduce + bcast) */
  KERN_ALG_CENSUS       /* allreduce: q rounds of whole-vector exchanges (integers, min/max) */
} kern_alg;

/* Where and how a kernel runs. */
typedef struct {
  MPI_Comm comm;            /* private communicator */
  const int *members;       /* sorted ranks of comm; NULL: all ranks of comm */
  int nmembers;             /* ignored when members is NULL */
  const kern_model *model;  /* NULL: kern_model_default() */
  int nblocks;              /* > 0 forces the block count (capped by the units to move);
                               0: the model's, unless the environment sets CDAG_BLOCKS */
  kern_alg alg;             /* allreduce: KERN_ALG_AUTO, _CIRCULANT or _CENSUS */
} kern_group;

typedef struct kern_op kern_op;  /* a built kernel: schedule, buffers, persistent requests */

/* Broadcast buf (same byte count everywhere) from members[root]. */
int kern_bcast_init(const kern_group *g, int root, kern_iov buf, kern_op **op);
/* Regular allgather: send holds b bytes, recv p*b bytes in member order.
   send.n == 0: in place (member i's block is already at offset i*b of recv). */
int kern_allgather_init(const kern_group *g, kern_iov send, kern_iov recv, kern_op **op);
/* Irregular allgather: member i contributes counts[i] bytes; recv holds them back to back
   in member order (any layout is an iov). send.n == 0: in place. */
int kern_allgatherv_init(const kern_group *g, kern_iov send, kern_iov recv, const uint64_t *counts,
                         kern_op **op);
/* Reduce count elements of type with rop (commutative, predefined) to members[root]'s recv
   (recv is ignored elsewhere). send.n == 0: in place (the input is in recv). */
int kern_reduce_init(const kern_group *g, int root, kern_iov send, kern_iov recv, uint64_t count,
                     cdag_type type, cdag_reduce_op rop, kern_op **op);
/* Allreduce: every member's recv gets the reduction. send.n == 0: in place. */
int kern_allreduce_init(const kern_group *g, kern_iov send, kern_iov recv, uint64_t count,
                        cdag_type type, cdag_reduce_op rop, kern_op **op);
/* Runs a built kernel (blocking; collective over its members). */
int kern_run(kern_op *op);
/* Frees a kernel; sets *op = NULL; NULL is fine. */
int kern_free(kern_op **op);
/* What was built: "bcast circulant p=8 n=12 steps=14", for reports. */
const char *kern_describe(const kern_op *op);

/* One-shot forms: init, run, free. */
int kern_bcast(const kern_group *g, int root, kern_iov buf);
int kern_allgather(const kern_group *g, kern_iov send, kern_iov recv);
int kern_allgatherv(const kern_group *g, kern_iov send, kern_iov recv, const uint64_t *counts);
int kern_reduce(const kern_group *g, int root, kern_iov send, kern_iov recv, uint64_t count,
                cdag_type type, cdag_reduce_op rop);
int kern_allreduce(const kern_group *g, kern_iov send, kern_iov recv, uint64_t count, cdag_type type,
                   cdag_reduce_op rop);

/* ---- The cost model (kernel_model.c) ---- */

/* Defaults (alpha 1e-6 s, beta 2e-10 s/B: shared-memory MPICH), then the environment
   CDAG_ALPHA / CDAG_BETA (seconds, seconds per byte) where set. */
kern_model kern_model_default(void);
/* Ping-pong between comm ranks 0 and 1 (8 B and 256 KiB), result on every rank; the
   environment still wins. Collective over comm; with one rank it gives the defaults. */
int kern_model_measure(MPI_Comm comm, kern_model *m);
/* Block count of an n-block circulant broadcast of `units` units of `unit` bytes over p
   ranks: n* = sqrt((q-1) beta m / alpha), in [1, units]. */
int kern_model_blocks(const kern_model *m, int p, uint64_t units, uint64_t unit);
/* Predicted seconds (bytes: the message of a bcast/reduce/allreduce, one member's block of
   an allgather, the total of an allgatherv). */
double kern_model_circulant(const kern_model *m, kern_kind kind, int p, uint64_t bytes);
double kern_model_census(const kern_model *m, int p, uint64_t bytes);
double kern_model_binomial(const kern_model *m, kern_kind kind, int p, uint64_t bytes);
double kern_model_scatter_allgather(const kern_model *m, kern_kind kind, int p, uint64_t bytes);
/* MPI's collective or cdag's kernel (KERN_ALG_MPI, _CIRCULANT or _CENSUS), with a one-line
   reason ("circulant 12.1 us < MPI binomial 15.0 us (p=8, 1048576 B)") in reason[len]. The
   kernel must win by 10%. KERN_ALG_CENSUS assumes an order-free op: kern_allreduce_init
   never picks it by itself for floating-point sums. */
kern_alg kern_model_choose(const kern_model *m, kern_kind kind, int p, uint64_t bytes, char *reason,
                           size_t len);

/* ---- Choosing for a plan's collectives (pure: no MPI call) ---- */

typedef enum { KERN_POLICY_AUTO, KERN_POLICY_MPI, KERN_POLICY_CDAG } kern_policy;
/* CDAG_KERNEL=mpi|cdag|auto (unset or empty: auto). Returns CDAG_OK, or CDAG_ERR_ARG naming
   the bad value. */
int kern_policy_env(kern_policy *policy);
/* The algorithm collective c of pl runs with, and why (one line in reason[len]). Kinds
   without a cdag kernel (scatter, gather, alltoall(v), scatterv, gatherv, reduce_scatter,
   barrier) and reductions the kernels cannot do always run as MPI's collective.
   KERN_POLICY_MPI / _CDAG force the choice where a kernel exists; _AUTO asks the model.
   Census is chosen only for order-free reductions (integers, or min/max). */
struct cdag_plan;
kern_alg kern_choose_coll(const struct cdag_plan *pl, int64_t c, const kern_model *m, kern_policy policy,
                          char *reason, size_t len);
/* Chooses for every collective of pl (kern_choose_coll), then checks that a kernel can run
   the plan's slots as they are (reductions: a type/op the kernels do; every recv slot empty
   or of the size the kernel delivers there); where not, MPI's collective, and the reason
   says why. Fills pl->choices (detect.h; replaced if set). Pure: the same on every rank.
   CDAG_OK or CDAG_ERR_NOMEM. */
int kern_choose_plan(struct cdag_plan *pl, const kern_model *m, kern_policy policy);
/* "mpi", "circulant", "census" ("auto" for KERN_ALG_AUTO). */
const char *kern_alg_name(kern_alg alg);

#endif

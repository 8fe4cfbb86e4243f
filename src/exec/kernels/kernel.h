/* cdag — src/exec/kernels/kernel.h: cdag's own collective kernels over MPI point-to-point.
 *
 * Träff's round-optimal n-block schedules on a circulant graph (CLUSTER 2022, arXiv 2407.18004):
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
#ifndef CDAG_EXEC_KERNELS_KERNEL_H
#define CDAG_EXEC_KERNELS_KERNEL_H

#include <stdint.h>

#include "choose/choose.h"
#include "ir/ir.h"

#define KERN_TAG 0x6b00  /* tags KERN_TAG + kind (IR_COLL_*: one per kernel kind), then: */
#define KERN_TAG_MEASURE (KERN_TAG + IR_COLL_NKINDS)  /* kern_measure's ping-pongs */

/* A buffer: n pieces (addr[i], len[i]); n == 0 is empty (or "in place" where stated). */
typedef struct {
  const uint64_t *addr;  /* absolute addresses ((uint64_t)(uintptr_t)ptr) */
  const uint64_t *len;   /* bytes per piece */
  int n;                 /* number of pieces */
} kern_iov;

/* Where and how a kernel runs. */
typedef struct {
  MPI_Comm comm;            /* private communicator */
  const int *members;       /* sorted ranks of comm; NULL: all ranks of comm */
  int nmembers;             /* ignored when members is NULL */
  const kern_model *model;  /* NULL: kern_model_default() */
  int nblocks;              /* > 0 forces the block count (capped by the units to move);
                               0: the model's (its blocks field, else its choice) */
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
/* kern_run in parts, so a run advances while the caller computes: kern_start (packs, first
   round started), kern_test (completes the rounds that are done and starts the next; *done
   at the end, after the unpacks), kern_complete (blocks for the rest). Members must run
   their kernels in one order, as with kern_run. */
int kern_start(kern_op *op);
int kern_test(kern_op *op, int *done);
int kern_complete(kern_op *op);
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

/* Ping-pong between comm ranks 0 and 1 (8 B and 256 KiB), result on every rank; the
   CDAG_* variables still replace what they set (explicit options replace both: pipeline.h). Collective over comm; with one rank it gives the defaults
   (kernel_measure.c). */
int kern_model_measure(MPI_Comm comm, kern_model *m);

#endif

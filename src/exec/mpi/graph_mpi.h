/* cdag — src/exec: running graphs and plans (contract of the exec stage).
 *
 * The only stage that calls MPI. It owns distributed graphs (the communicator of
 * cdag_graph_create), gathering graphs to the compiling rank, scattering per-process
 * schedules, running them with persistent MPI requests or cdag's own kernels, and the
 * in-process simulator (sim.h) that runs any global graph or plan without MPI. */
#ifndef CDAG_EXEC_H
#define CDAG_EXEC_H

#include "ir/ir.h"
#include "wire/wire.h"

/* The communicator of a distributed graph (MPI_COMM_NULL for a global graph). */
MPI_Comm exec_graph_comm(const cdag_graph *g);
/* Its MPI_TAG_UB (of a distributed graph): the tag of cdag_compile's agreement, which the
   schedules of the graph as written stay below. */
int exec_graph_tag_ub(const cdag_graph *g);
/* Memory cdag allocates for a distributed graph (typed sends' and receives' packing
   buffers): freed with the graph and the last schedule compiled from it (exec_arena_ref /
   _unref; NULL: none). exec_arena_alloc returns NULL when out of memory. */
typedef struct exec_arena exec_arena;
void *exec_arena_alloc(cdag_graph *g, size_t bytes);
exec_arena *exec_arena_ref(const cdag_graph *g);
exec_arena *exec_arena_share(exec_arena *a);   /* one more reference to a (NULL: none) */
void exec_arena_unref(exec_arena *a);
/* This rank's encoding of g (wire_encode_rank, appended to w) as the compile cache
   fingerprints it: addresses in g's own packing buffers taken as their place among them, so
   that a graph rebuilt with new buffers fingerprints alike. Not for sending: the compiling
   rank needs the real addresses (wire_encode_rank). exec_has_arena: g has such buffers (the
   two encodings differ). */
int exec_encode_canonical(cdag_graph *g, wire_buf *w);
int exec_has_arena(const cdag_graph *g);
/* Shared by the API entry points of distributed graphs (graph_mpi.c, graph_typed.c):
   CDAG_ERR_ARG unless g is a distributed graph; *op = id when rc is CDAG_OK; MPI_PROC_NULL
   as a peer (*op = CDAG_OP_NULL, CDAG_OK). */
int exec_check_distributed(const cdag_graph *g, const char *fn);
/* A program's tag for fn (cdag_send, cdag_recv, their _type forms) to or from peer: within
   the communicator's MPI_TAG_UB and not CDAG_REDISTRIBUTE_TAG (ir_user_tag), else
   CDAG_ERR_ARG naming the call, rank and peer. */
int exec_user_tag(const cdag_graph *g, const char *fn, int peer, int tag);
int exec_to_op(const cdag_graph *g, const char *fn, int rc, const int32_t *id, cdag_op *op);
/* rc, with its message prefixed "rank R: fn: " unless it names a rank already. */
int exec_named(const cdag_graph *g, const char *fn, int rc);
int exec_proc_null(cdag_op *op);
/* The function of computation op (a local op id) of distributed graph g, as cdag_compute
   gave it: 1 and *fn, *arg; 0 when op has none (a replayed file's computation). O(log n). */
int exec_compute_fn(const cdag_graph *g, int64_t op, cdag_compute_fn *fn, void **arg);
/* MPI predefined types and ops to cdag's; -1 when not one cdag supports. */
/* cdag_reduce_local's datatype and op as a cdag type and op (ops.c): predefined ones, or a
   user op (registered in this process's table of user ops). CDAG_ERR_UNSUPPORTED or
   CDAG_ERR_ARG naming rank and reason otherwise. */
int exec_reduction_from_mpi(MPI_Datatype t, MPI_Op o, int rank, int *type, int *rop);
/* CDAG_OK, or CDAG_ERR_STATE when MPI's thread level (SINGLE, FUNNELED) forbids this thread
   MPI calls: the entry points that call MPI (fn) check it first. */
int exec_thread_check(const char *fn);
/* The collective entry points on a distributed graph's communicator (cdag_compile,
   cdag_graph_dump) hold its busy mark: CDAG_ERR_STATE naming fn if another thread holds it
   (a local check: on other ranks that thread may be the one that wins); release after. */
int exec_comm_take(cdag_graph *g, const char *fn);
void exec_comm_release(cdag_graph *g);

#endif

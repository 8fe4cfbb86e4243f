/* cdag — src/exec: running graphs and plans (contract of the exec stage).
 *
 * The only stage that calls MPI. It owns distributed graphs (the communicator of
 * cdag_graph_create), gathering graphs to the compiling rank, scattering per-process
 * schedules, running them with persistent MPI requests or cdag's own kernels, and the
 * in-process simulator (sim.h) that runs any global graph or plan without MPI. */
#ifndef CDAG_EXEC_H
#define CDAG_EXEC_H

#include "ir/ir.h"

/* The communicator of a distributed graph (MPI_COMM_NULL for a global graph). */
MPI_Comm exec_graph_comm(const cdag_graph *g);
/* MPI predefined types and ops to cdag's; -1 when not one cdag supports. */
int exec_type_from_mpi(MPI_Datatype t);
int exec_rop_from_mpi(MPI_Op o);
/* CDAG_OK, or CDAG_ERR_STATE when MPI's thread level (SINGLE, FUNNELED) forbids this thread
   MPI calls: the entry points that call MPI (fn) check it first. */
int exec_thread_check(const char *fn);

#endif

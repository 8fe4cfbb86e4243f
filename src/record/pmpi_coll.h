/* cdag — src/record/pmpi_coll.h: what the collectives' wrapper files share (private to
 * libcdag-record; hidden like pmpi.h).
 *
 * pmpi_coll.c describes each regular native kind's call once: the sides it reads and writes (a
 * derived datatype's ranges, through a packing area), the shadow's check of what it reads,
 * and its line. The blocking wrappers there give the written side to the shadow when MPI
 * returns; the nonblocking ones (pmpi_nbcoll.c) keep it until the completion call that
 * observes the request complete. The v- and w-forms, scans and neighbourhood collectives
 * are described in pmpi_vcoll.c the same way, from the steps below. */
#ifndef CDAG_RECORD_PMPI_COLL_H
#define CDAG_RECORD_PMPI_COLL_H

#include "record/pmpi.h"

/* One buffer of a call: its byte ranges, what the graph names. */
typedef struct {
  ranges r;
  uint64_t addr, bytes;     /* what the graph names; 0 bytes: no such side on this rank */
  const char *type;         /* the element type, for the shadow's reductions */
} side;

typedef struct intercoll intercoll;   /* an intercommunicator's call (pmpi_intercoll.c) */
/* One collective call being recorded (x NULL: it is not). */
typedef struct {
  rcomm *x;
  intercoll *ic;            /* on an intercommunicator: its messages (NULL: a native line);
                               x->n is then the other group's size */
  int me;
  int call;                 /* C_* of the MPI function, for the counts */
  int nonblocking;          /* MPI_I<kind>: its line says so, its output waits for a completion */
  uint64_t seq;             /* its position */
  side in, out;
  uint64_t calc_at, calc_len;   /* a reduction cdag cannot combine: the computation at completion
                                   reads calc_len bytes at calc_at and writes out (0: none) */
} coll;

/* Each kind's call, described: when it can be recorded (1), its input checked by the shadow
   at its position, its line written; c->x NULL otherwise (counted as not recorded). The
   arguments are MPI's. */
int coll_barrier(coll *c, int call, int nonblocking, MPI_Comm comm);
int coll_bcast(coll *c, int call, int nonblocking, void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm);
int coll_gather(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
int coll_scatter(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                 int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
/* allgather and alltoall (kind IR_COLL_ALLGATHER or IR_COLL_ALLTOALL). */
int coll_blocks(coll *c, int call, int nonblocking, int kind, const void *sbuf, int scount, MPI_Datatype stype,
                void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm);
/* reduce (root >= 0), allreduce (root -1) and reduce_scatter_block (kind). */
int coll_reduction(coll *c, int call, int nonblocking, int kind, const void *sbuf, void *rbuf, int count,
                   MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm);

/* A reduction cdag cannot combine (mpig_reduction: not a predefined op, or a datatype cdag
   has no type for, derived ones included): 1 if so. */
int reduction_computed(MPI_Datatype t, MPI_Op o);
/* Such a reduction (kind IR_COLL_REDUCE with root >= 0, ALLREDUCE, REDUCE_SCATTER_BLOCK,
   SCAN or EXSCAN) recorded as its data movement, a native collective into a scratch area,
   and a computation of each output from the area at completion (coll_finish). 1 when
   recorded, 0 when not (counted). */
int coll_combined(coll *c, int call, int kind, const void *sbuf, void *rbuf, int count, MPI_Datatype t, int root);

/* pmpi_vcoll.c: the v- and w-forms, reduce_scatter, scan and exscan (kind IR_COLL_SCAN or
   EXSCAN), the neighbourhood collectives; as above. Every array argument (counts,
   displacements, datatypes) is read during the call, none kept. coll_alltoallvw: the w-form
   when sts and rts are given (displacements in bytes), else st and rt (in their extents). */
int coll_gatherv(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                 const int *rcounts, const int *displs, MPI_Datatype rtype, int root, MPI_Comm comm);
int coll_scatterv(coll *c, int call, int nonblocking, const void *sbuf, const int *scounts, const int *displs,
                  MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
int coll_allgatherv(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm);
int coll_alltoallvw(coll *c, int call, int nonblocking, const void *sbuf, const int *scounts, const int *sdispls,
                    MPI_Datatype st, const MPI_Datatype *sts, void *rbuf, const int *rcounts, const int *rdispls,
                    MPI_Datatype rt, const MPI_Datatype *rts, MPI_Comm comm);
int coll_reduce_scatter(coll *c, int call, int nonblocking, const void *sbuf, void *rbuf, const int *rcounts,
                        MPI_Datatype t, MPI_Op o, MPI_Comm comm);
int coll_prefix(coll *c, int call, int nonblocking, int kind, const void *sbuf, void *rbuf, int count, MPI_Datatype t,
                MPI_Op o, MPI_Comm comm);
int coll_neighbor_allgather(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype,
                            void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm);
int coll_neighbor_allgatherv(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype,
                             void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm);
int coll_neighbor_alltoall(coll *c, int call, int nonblocking, const void *sbuf, int scount, MPI_Datatype stype,
                           void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm);
int coll_neighbor_alltoallv(coll *c, int call, int nonblocking, const void *sbuf, const int *scounts,
                            const int *sdispls, MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
                            MPI_Datatype rtype, MPI_Comm comm);
int coll_neighbor_alltoallw(coll *c, int call, int nonblocking, const void *sbuf, const int *scounts,
                            const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                            const MPI_Aint *rdispls, const MPI_Datatype *rtypes, MPI_Comm comm);

/* pmpi_intercoll.c: a call on an intercommunicator, recorded as the messages it moves
   between the groups. coll_start calls ic_start (0: not recordable, counted); each kind's
   description above hands its arguments to its ic_ form (roots as MPI gives them: MPI_ROOT,
   MPI_PROC_NULL or a rank of the other group; NULL counts: the regular form); coll_finish
   calls ic_finish (a blocking call's position *done is taken there), coll_drop ic_free. */
int ic_start(coll *c, MPI_Comm comm);
int ic_barrier(coll *c);
int ic_bcast(coll *c, void *buf, int count, MPI_Datatype t, int root);
int ic_gatherv(coll *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, const int *rcounts,
               const int *displs, MPI_Datatype rtype, int root);
int ic_scatterv(coll *c, const void *sbuf, int scount, const int *scounts, const int *displs, MPI_Datatype stype,
                void *rbuf, int rcount, MPI_Datatype rtype, int root);
int ic_allgatherv(coll *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  const int *rcounts, const int *displs, MPI_Datatype rtype);
int ic_alltoallvw(coll *c, const void *sbuf, int scount, const int *scounts, const int *sdispls, MPI_Datatype st,
                  const MPI_Datatype *sts, void *rbuf, int rcount, const int *rcounts, const int *rdispls,
                  MPI_Datatype rt, const MPI_Datatype *rts);
/* kind IR_COLL_REDUCE, ALLREDUCE, REDUCE_SCATTER_BLOCK (count: recvcount) or
   REDUCE_SCATTER (rcounts). */
int ic_reduction(coll *c, int kind, const void *sbuf, void *rbuf, int count, const int *rcounts, MPI_Datatype t,
                 int root);
/* A kind MPI does not define on intercommunicators (scan, exscan, neighbourhood): counted. */
int ic_undefined(coll *c);
void ic_finish(coll *c, uint64_t *done);
void ic_free(coll *c);
/* The steps. `count` elements of t at buf: 0, or -1 (unrecordable). */
int side_of(side *sd, const void *buf, int64_t count, MPI_Datatype t);
void side_free(side *sd);
/* Starts recording a call on comm: 0 (c->x NULL) when it is not recorded. */
int coll_start(coll *c, MPI_Comm comm, int call, int nonblocking);
/* The sides are set (ok: both recordable): 0 and the call's position, or -1 (counted). */
int coll_ready(coll *c, int call, int ok);
/* A reduction's sides on MPI's predefined types and ops (in_count elements read at sbuf,
   out_count written at rbuf when has_out): 1 when ready, 0 when not recorded (counted). */
int reduction(coll *c, int call, const void *sbuf, void *rbuf, int64_t in_count, int64_t out_count, int has_out,
              MPI_Datatype t, MPI_Op o, int *type, int *rop);
/* After MPI's blocking call: what it wrote, to the shadow; its memory freed. */
void coll_done(coll *c);
/* The same when MPI returned rc: a call MPI refused (an error returned) wrote nothing, so
   nothing goes to the shadow and an intercommunicator's receives are not written. */
void coll_returned(coll *c, int rc);

/* The call's input is no longer needed (its ranges freed). */
void coll_started(coll *c);
/* The call completed, observed at position done: its output goes to the shadow (packing
   copies out of the area right after done), and its memory is freed. */
void coll_finish(coll *c, uint64_t done);
/* Frees what the call holds, its output not given to the shadow. */
void coll_drop(coll *c);
/* pmpi_nbcoll.c: a nonblocking call started that no completion will name (its request not
   kept): completed now, as a blocking call would. */
void nbcoll_complete_now(coll *c);
/* pmpi_nbcoll.c: the call just handed to MPI (rc its return) with request *rq: its request
   kept until a completion call sees it complete (none: completed now). */
void nbcoll_started(coll *c, int rc, MPI_Request *rq);

#endif

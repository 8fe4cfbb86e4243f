/* cdag — src/record/pmpi_coll.h: what the collective wrapper files share (pmpi_coll.c, the
 * blocking native kinds; pmpi_vcoll.c, the v- and w-forms): a call's sides and its steps.
 * Private to libcdag-record, hidden as pmpi.h is. */
#ifndef CDAG_RECORD_PMPI_COLL_H
#define CDAG_RECORD_PMPI_COLL_H

#include "record/pmpi.h"

/* One buffer of a call: its byte ranges, moved through a packing area when more than one. */
typedef struct {
  ranges r;
  uint64_t addr, bytes;     /* what the graph names; 0 bytes: no such side on this rank */
  const char *type;         /* the element type, for the shadow's reductions */
} side;

/* One collective call being recorded. */
typedef struct {
  rcomm *x;
  int me;
  uint64_t seq;
  side in, out;
} coll;

/* `count` elements of t at buf: 0, or -1 (unrecordable). */
int side_of(side *sd, const void *buf, int64_t count, MPI_Datatype t);
void side_free(side *sd);
/* Starts recording a call on comm: 0 (c->x NULL) when it is not recorded. */
int coll_start(coll *c, MPI_Comm comm, int call);
/* The sides are set (ok: both recordable): 0 and the call's position, or -1 (counted). */
int coll_ready(coll *c, int call, int ok);
/* After MPI's call: what it wrote, to the shadow. */
void coll_done(coll *c);
/* A reduction's sides on MPI's predefined types and ops (in_count elements read at sbuf,
   out_count written at rbuf when has_out): 1 when ready, 0 when not recorded (counted). */
int reduction(coll *c, int call, const void *sbuf, void *rbuf, int64_t in_count, int64_t out_count, int has_out,
              MPI_Datatype t, MPI_Op o, int *type, int *rop);

#endif

/* cdag — src/detect/detect_int.h: private structures of the detection stage.
 *
 * Detectors do not build plan slots themselves: each finds "protos" (a kind, a root, a
 * member set and the SST tuples it covers) and marks those tuples used. plan.c then merges
 * protos of one shape and builds the slots, residual messages and snapshots. */
#ifndef CDAG_DETECT_INT_H
#define CDAG_DETECT_INT_H

#include "detect/detect.h"

typedef struct {
  det_kind kind;
  int32_t root;           /* rank, -1 for non-rooted kinds */
  int64_t members_first;  /* into det_state.members, sorted ranks */
  int32_t nmembers;
  int64_t tuples_first;   /* into det_state.tuples: transfer or reduction indices */
  int64_t ntuples;
  int reduction;          /* tuples index sst->reds rather than sst->xfers */
  int64_t after;          /* 0, or 1 + the proto (a reduce) whose result this bcast replicates:
                             its send slot is that reduce's result at the root (replicate.c) */
  int64_t rd_pairs, rd_pieces;  /* an alltoallv taken as a redistribution: its pairs and the
                                   pieces they move; 0 otherwise */
} det_proto;

typedef struct {
  const cdag_graph *g;
  const df_sst *sst;       /* what the detectors read: the SST, or view (det_view_open) */
  /* A graph with strided transfers is searched block by block (a column sent to every rank
     is a bcast of its blocks): view is the SST with each strided transfer's blocks as
     transfers of their own, sorted as the SST; whole is the SST itself, and origin[i] the
     transfer of whole that view's tuple i belongs to. The residual joins a strided
     transfer's blocks again when no collective took any of them (plan.c). whole = NULL:
     the detectors read the SST itself. */
  df_sst view;
  const df_sst *whole;
  int64_t *origin;
  cdag_options opts;
  const det_pricer *pricer;   /* NULL: every candidate that keeps the rules is taken */
  uint8_t *xused;         /* per transfer: covered by a collective */
  uint8_t *rused;         /* per reduction */
  det_proto *protos;  int64_t nprotos, protocap;
  int32_t *members;   int64_t nmembers, membercap;
  int64_t *tuples;    int64_t ntuples, tuplecap;
  char **notes;       int64_t nnotes, notecap;
  int barrier;            /* a barrier over all ranks replaces zero-byte messages */
  int32_t *syncs;     int64_t nsyncs, synccap;  /* kept zero-byte messages (src, dst) */
  /* complete all-to-all patterns on proper subsets smaller than min_group (one note) */
  int64_t small_groups;  int32_t small_size;  char small_ranks[96];
} det_state;

/* One detector: finds protos among the tuples not yet used. */
typedef int (*det_fn)(det_state *st);
int det_all_collectives(det_state *st);      /* detect_all.c: allgather(v), alltoall(v) */
int det_rooted_collectives(det_state *st);   /* detect_rooted.c: bcast, scatter(v), gather(v) */
int det_reductions(det_state *st);           /* detect_reduce.c */
int det_replication(det_state *st);          /* replicate.c: reduce + bcast to the readers */
int det_synchronization(det_state *st);      /* detect_sync.c: barrier, kept syncs */

/* Helpers (detect.c). */
int det_add_proto(det_state *st, det_kind kind, int32_t root, const int32_t *members, int32_t n,
                  const int64_t *tuples, int64_t nt, int reduction);
int det_note(det_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Contributor ranks of reduction d's set in set order into out (seen: nprocs zeros, left
   zero), or -1 if a rank contributes twice to a non-idempotent op (detect_reduce.c). */
int32_t det_contributors(const df_sst *s, const df_red *d, int32_t *out, uint8_t *seen);
/* Smallest group a collective needs: whole communicator >= 3 ranks, a proper subset
   >= opts.min_group. */
int det_group_ok(const det_state *st, int32_t nmembers);
/* Transfers no collective covers yet, between two ranks, non-empty, into out; the count. */
int64_t det_candidates(const det_state *st, int64_t *out);
/* Smallest member count det_group_ok accepts. */
int32_t det_min_group(const det_state *st);
/* Keeps (in order) the tuples of t[0..n) whose source sends at least out_min of them and
   whose destination receives at least in_min; returns the new count, or -1 out of memory
   (the error recorded). A rank in a group of m members sends or receives m - 1 tuples, so a
   cheap O(n + p) filter drops what no group can use before anything is sorted (a tree's
   SST: every rank receives once). */
int64_t det_filter_degree(const det_state *st, int64_t *t, int64_t n, int32_t out_min, int32_t in_min);
/* The most tuples of t[0..n) one rank sends (out = 1) or receives (out = 0), or -1 out of
   memory (the error recorded). O(n + p). */
int32_t det_max_degree(const det_state *st, const int64_t *t, int64_t n, int out);
/* Sorts m distinct ranks (< nprocs): a bitmap scan when they are many, else qsort. */
int det_sort_ranks(int32_t *r, int32_t m, int32_t nprocs);
/* "all" or "0-4,7" style description of sorted ranks into buf. */
const char *det_ranks_text(const int32_t *ranks, int32_t n, int32_t nprocs, char *buf, int size);

/* Is the traffic a redistribution (redistribution.c)? DET_RD_YES, or a test it fails: a
   rank's (TWICE, SAME_ARRAY) or the group's (ROOTED, SMALL, FEW_PIECES). */
typedef enum { DET_RD_YES, DET_RD_ROOTED, DET_RD_SMALL, DET_RD_FEW_PIECES, DET_RD_TWICE, DET_RD_SAME_ARRAY } det_rd;
const char *det_rd_text(det_rd why);   /* "not a redistribution: a rank sends some bytes twice" */
/* A redistribution's ranks, and the pairs among them that move data and their pieces. */
typedef struct {
  int32_t members;
  int64_t pairs, pieces;
} det_rd_sum;
/* Verdicts over transfers t[0..n) (no self copies; sorted by pair), into verdict[r] for
   every rank r they touch: DET_RD_YES for the ranks of the components that together form a
   redistribution (one alltoallv; its figures in *sum, else all 0), else why not. comp[r]:
   r's component id (a rank). self[0..nself): self copies, of which the unused ones count as
   what their rank keeps. O(n log n + p). */
int det_redistributions(const det_state *st, const int32_t *comp, const int64_t *t, int64_t n, const int64_t *self,
                        int64_t nself, uint8_t *verdict, det_rd_sum *sum);

/* Opens st's view of its SST when the SST has strided transfers and the graph 3 ranks or
   more (with fewer, no detector reads transfers); O(blocks). Closed by det_view_close. */
int det_view_open(det_state *st);
void det_view_close(det_state *st);

/* plan.c: merge protos and build the plan. */
int det_build_plan(det_state *st, cdag_plan *p);
/* Marks the plan's collectives the program called natively (native.c; plan fields native*). */
int det_mark_native(const cdag_graph *g, cdag_plan *p);

#endif

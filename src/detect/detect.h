/* cdag — src/detect: collective signatures and the plan (stage contract).
 *
 * Input: a finalized global graph, its SST (df_sst) and options. detect_run groups SST
 * tuples (sorting / Judy keys) and tests the signatures in the order allgather > alltoall >
 * bcast > gather, scatter, then allreduce > reduce_scatter(_block) > reduce, on the whole
 * rank set and on subsets (rooted kinds largest first; all-kinds among connected
 * components), vector variants with density tau, barriers from complete wait sets of
 * zero-byte / scratch-only traffic, and merges collectives of one shape and root. Traffic
 * with the shape of a redistribution is one alltoallv whatever its density. A
 * reduction several ranks but not all contributors keep becomes a reduce plus a bcast of its
 * result to them (replicate.c). What is left is residual. Cost O(n log n) for n SST tuples.
 *
 * The plan is the whole meaning of the compiled phase, per rank:
 *  1. snapshots: origin ranges a final write would overwrite before they are read;
 *  2. collectives, in plan order. Collective c has members ranks[c.ranks_first ..
 *     +c.nranks) (sorted) and per member m a fixed number of send and recv slots; slot s of
 *     member m is iov iovs[c.send_first + m*c.nsend_slots + s] (likewise recv): an ordered
 *     list of (addr, len) pieces on that member (an hindexed datatype). Slots by kind are
 *     the send/recv columns of ir/coll_kinds.h (none, one, or one per member; "root only":
 *     other members' slots are empty; a bcast root's recv slot is empty), e.g.
 *       bcast: send 1 (root only), recv 1      gather(v): send 1, recv nranks (root only)
 *       alltoall(v): send nranks, recv nranks  reduce_scatter(_block): send nranks, recv 1
 *     Semantics (as MPI's, reading the origin values): block of member i's send slot (slot
 *     j where the send side has one per member) lands in member j's recv slot (slot i where
 *     the recv side has one per member): det_slot_pair. A slot may be empty (e.g. a member's
 *     own block). Where the send side has a slot per member and the kind reduces, member j
 *     gets the reduction of every member's slot j.
 *     Reductions combine element-wise over all members, in member order, type/op as given.
 *     One exception to "reads origins": a collective with after = k > 0 (a bcast made by the
 *     replication pass) sends what collective k - 1 wrote at its root, and runs after it.
 *  3. residual transfers coalesced into messages: message k moves pieces
 *     xfers[msgs[k].first .. +n) from rank src to rank dst (src == dst: a local copy); a
 *     strided transfer (blocks >= 2, as the SST left it) is one piece of its blocks;
 *  4. residual reductions (df_red with their sets), computed at dst from the origins;
 *  5. kept synchronization: zero-byte messages (src, dst) that rule 3 of docs/semantics.md needs.
 * Everything else reads origin values (taken before anything is written) and writes final
 * values, so all parts but the replications are independent. sim.h can run a plan; exec runs it over MPI. */
#ifndef CDAG_DETECT_H
#define CDAG_DETECT_H

#include "dataflow/dataflow.h"
#include "stage/stage.h"

/* The kinds of plan collectives: ir/coll_kinds.h's table, whose IR_COLL_* they equal. */
#define DET_KIND_ENUM_(ID, ...) DET_##ID = IR_COLL_##ID,
typedef enum { CDAG_COLL_KINDS(DET_KIND_ENUM_) DET_NKINDS = IR_COLL_NKINDS } det_kind;
#undef DET_KIND_ENUM_

/* Why a plan's graph runs as written (cdag_plan.as_written). MEMORY: its stages' staging
   buffers would take more than DET_STAGING_MAX bytes on some rank; REQUESTS: its schedule
   more than DET_REQUESTS_MAX persistent MPI requests on one (the pipeline's rules). */
enum { DET_WRITTEN_NO = 0, DET_WRITTEN_EXACT = 1, DET_WRITTEN_COST = 2, DET_WRITTEN_MEMORY = 3, DET_WRITTEN_REQUESTS = 4 };
#define DET_STAGING_MAX (1ull << 30)
#define DET_REQUESTS_MAX 100000

typedef struct { uint64_t addr, len; } det_piece;
/* pieces[first..+n); 16 bytes, there are two per member and collective (plans hold at most
   2^32 pieces, checked where they are reserved) */
typedef struct { uint32_t first; int32_t n; uint64_t bytes; } det_iov;

typedef struct {
  det_kind kind;
  int32_t root;            /* rank for rooted kinds, -1 otherwise */
  int32_t nranks;          /* members: ranks[ranks_first .. +nranks), sorted */
  int64_t ranks_first;
  int32_t nsend_slots, nrecv_slots;  /* per member, by kind (table above) */
  int64_t send_first, recv_first;    /* into iovs */
  uint64_t bytes;          /* per-block bytes (v-kinds: total bytes), as reported */
  int64_t ntransfers;      /* SST tuples (transfers or reductions) it replaced */
  int type, op;            /* reductions: cdag_type, cdag_reduce_op */
  int64_t after;           /* 0: reads origins, as every other part; k > 0: a replication
                              (replicate.c): its send slots read what collective k - 1 (an
                              earlier one) wrote, so it runs after that one completes */
  int64_t rd_pairs, rd_pieces;  /* an alltoallv taken as a redistribution (redistribution.c):
                                   the pairs of ranks that move data and their pieces (own
                                   copies not counted); 0 otherwise */
  double price_coll_us, price_msgs_us;  /* the pricer's times (det_pricer): the collective alone,
                                           and its transfers as residual messages; 0, 0: not priced */
} det_coll;

typedef struct {
  int32_t src, dst;
  int64_t first;           /* xfers[first .. +n) */
  int32_t n;
  uint64_t bytes;
} det_msg;

typedef struct {
  int32_t rank;
  uint64_t addr, len;
} det_range;

struct cdag_plan {
  int32_t nprocs;
  cdag_options opts;
  /* collectives */
  int64_t ncolls;   det_coll *colls;
  int64_t nranks;   int32_t *ranks;
  int64_t niovs;    det_iov *iovs;
  int64_t npieces;  det_piece *pieces;
  int64_t cap_colls, cap_ranks, cap_iovs, cap_pieces;   /* room while plan.c appends */
  /* residual */
  int64_t nxfers;   df_xfer *xfers;     /* residual transfers, grouped by message */
  int64_t nmsgs;    det_msg *msgs;
  int64_t nreds;    df_red *reds;       /* residual reductions */
  df_sst *sst;                          /* owns the sets/runs the reductions refer to
                                           (its transfers and wait sets are dropped after
                                           detection: nxfers keeps the count) */
  int64_t nsyncs;   int32_t *syncs;     /* zero-byte messages kept: pairs (src, dst) */
  int64_t nsnaps;   det_range *snaps;   /* snapshots, sorted by (rank, addr) */
  /* report */
  int64_t nops_kind[IR_NKINDS];
  uint64_t volume_max;                  /* bytes received per process by the graph's receives */
  double volume_mean;                   /* (from other ranks), largest and mean; and the graph's */
  uint64_t bound;                       /* stated lower bound (0: none) */
  int64_t nonesided[4];                 /* gets, puts, fences, accumulates as written (their messages and
                                           calcs of 0 count in nops_kind too) */
  double sec_match, sec_dataflow, sec_detect;
  int barrier;                          /* a barrier over all ranks was detected */
  int as_written;                       /* the graph runs as written, this plan does not
                                           (DET_WRITTEN_*): a floating-point reduction combines 3
                                           or more values, whose order the plan cannot keep
                                           (exact_float, a note says so), the plan models
                                           slower than the graph (the price, src/model), or
                                           its staging buffers would not fit (a note) */
  char **notes;   int64_t nnotes;       /* why notable patterns were not rewritten */
  int64_t nleft;                        /* candidates the pricer left as messages (a note each) */
  /* native collectives (graphs with calls, native.c): per collective, 1 when the program
     called it (its bytes were written by a native call's messages), else NULL; calls by
     kind (IR_COLL_*); residual transfers that native calls delivered, and residual reductions
     whose results native calls delivered (a native allreduce the price left as reductions) */
  uint8_t *native;
  int64_t native_calls[IR_COLL_NKINDS];
  int64_t native_residual;
  uint64_t native_residual_bytes;
  int64_t native_residual_reds;
  /* How the plan runs, decided by the choice stage above detect (src/choose/choose.h:
     kern_choose_plan) and kept beside the plan: detect never reads or frees it. NULL until
     chosen (then not reported). */
  struct kern_choices *chosen;
  /* A graph that computes (src/stage): this plan is stage `stage` of a chain, next the
     following stage's plan; the first one (stage 0) owns steps, the computations that run
     between the stages and the staging buffers. next and steps are NULL for a graph without
     computation, whose plan is one stage as always. The figures of the report (ops, volume,
     times) are the whole graph's on the first plan, each stage's own on the others. */
  int32_t stage;
  struct cdag_plan *next;
  stage_steps *steps;
};

/* Slots by kind, from the columns of ir/coll_kinds.h (kinds.c). */
const char *det_kind_name(det_kind k);           /* "unknown" out of range */
/* Send and recv slots per member of kind k over n members. */
void det_kind_slots(det_kind k, int32_t n, int32_t *nsend, int32_t *nrecv);
/* For a kind that moves blocks (not reductions or barriers): the send slot of member i and
   the recv slot of member j through which i's block reaches j (-1, -1: none). rootm is the
   root's member index. */
void det_slot_pair(det_kind k, int32_t i, int32_t j, int32_t rootm, int *ss, int *rs);

/* Ranks first, first + stride, ..., count of them (strided.c). */
typedef struct { int32_t first, count, stride; } det_stride;
/* The sorted ranks r[0..n) as strided ranges, greedily: the number of ranges (the first cap
   written to out), or 0 when they do not form strided ranges (more than one range per three
   ranks, and more than one range). O(n). */
int64_t det_strided_ranges(const int32_t *r, int32_t n, det_stride *out, int64_t cap);

/* Does side `send` of c keep the root's slots only? A side with a slot per member that only
   the root's slots carry (a gather's receives, a scatter's sends) holds nranks iovs, the
   root's, not nranks^2: the other members' read as det_no_iov. */
static inline int det_side_rooted(const det_coll *c, int send) {
  const ir_coll_info *in = ir_coll_get(c->kind);
  return in && (send ? in->send == IR_SLOTS_MEMBER && in->send_root : in->recv == IR_SLOTS_MEMBER && in->recv_root);
}
/* The iovs side `send` of c holds: from send_first (recv_first) on. */
static inline int64_t det_side_iovs(const det_coll *c, int send) {
  int32_t per = send ? c->nsend_slots : c->nrecv_slots;
  return det_side_rooted(c, send) ? per : (int64_t)c->nranks * per;
}
/* The empty slot every member but the root reads on a det_side_rooted side (read only). */
extern const det_iov det_no_iov;
/* The member index of c's root among its ranks, -1 when it has none. O(log nranks). */
int32_t det_root_member(const cdag_plan *p, const det_coll *c);

/* Slot s of member m (member index) of collective c: a send slot (send = 1) or a recv slot.
   On a det_side_rooted side, a member other than the root gets det_no_iov (never written). */
static inline det_iov *det_slot(const cdag_plan *p, const det_coll *c, int send, int32_t m, int32_t s) {
  if (det_side_rooted(c, send))
    return m == det_root_member(p, c) ? &p->iovs[(send ? c->send_first : c->recv_first) + s] : (det_iov *)&det_no_iov;
  return &p->iovs[(send ? c->send_first + (int64_t)m * c->nsend_slots : c->recv_first + (int64_t)m * c->nrecv_slots) + s];
}


/* The price of a candidate, from the layer that has the cost model (src/model/price.c; detect
   cannot see it). judge prices collectives colls[0..ncolls) of p, built (a collective, or a
   reduction and the replications that send its result on), alone, against what they replace as
   residual parts: transfers xs[0..nx) as messages, or reductions rs[0..nr) (their sets in
   p->sst) as residual reductions: *coll_us and *msgs_us, microseconds, or both -1 when it
   cannot (the collectives stay). The residual parts are used when they are not slower (a tie
   keeps what the program wrote): the collectives are taken back and a note gives both prices.
   Collectives that move blocks are weighed as they are built, reductions once all are;
   barriers are not weighed. A native call's collective is weighed like any other: its
   messages are the flat ones the graph holds (ir/collective.c). */
typedef struct {
  void *ctx;
  int (*judge)(void *ctx, const cdag_plan *p, const int64_t *colls, int64_t ncolls, const df_xfer *xs, int64_t nx,
               const df_red *rs, int64_t nr, double *coll_us, double *msgs_us);
} det_pricer;

/* Detects collectives in sst and builds the plan (takes ownership of sst). pricer: NULL, or
   the candidates' judge (above). */
int detect_run(const cdag_graph *g, df_sst *sst, const cdag_options *o, const det_pricer *pricer, cdag_plan **p);
/* Appends a note to plan p (a later stage's word on it, e.g. the pipeline's second planning). */
int detect_plan_note(cdag_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Why a plan's graph runs as written, for reports: a phrase per DET_WRITTEN_* ("" for NO). */
const char *det_written_why(int as_written);
/* Does the graph run as written for a reason decided before the price (exact_float, staging
   memory, requests), so that no plan is weighed, reported as the plan or verified? */
static inline int det_written_unpriced(int as_written) { return as_written && as_written != DET_WRITTEN_COST; }
void detect_plan_free(cdag_plan *p);   /* this plan only: not next, nor choices */

#endif

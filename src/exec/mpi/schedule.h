/* cdag — src/exec/mpi/schedule.h: what one process runs (private to src/exec).
 *
 * The compiling rank turns a plan (detect.h) or, with detect = 0, the matched graph into
 * one "part" per rank holding only what that rank does (part.h: the schema, writer, reader).
 * Parts are scattered with MPI_Scatterv; each rank builds its cdag_schedule from its part:
 *  - plan mode: collectives (persistent MPI-4 collectives on the schedule's communicator or
 *    on cached sub-communicators, with MPI_BOTTOM and hindexed datatypes over absolute
 *    addresses), one persistent message per peer and direction for the residual transfers,
 *    reduction contributions and kept synchronisation, local copies, residual reductions
 *    computed after the wait, and snapshots of the origin bytes the run both reads and
 *    writes (reads of those bytes are redirected to the snapshot buffer);
 *  - graph mode (the detect = 0 baseline, baseline.c): the rank's own ops with their
 *    dependencies, one persistent request per send/recv with a tag the root made unique per
 *    (src, dst) channel, run by a dependency-counter engine.
 * A run is: snapshot, pack, start all, local copies, wait all, unpack, reduce.
 *  - stages mode (a graph that computes): one plan-mode schedule per stage, run in order,
 *    with the rank's computations (compute.c) before the first stage and after each. */
#ifndef CDAG_EXEC_SCHEDULE_H
#define CDAG_EXEC_SCHEDULE_H

#include "detect/detect.h"
#include "exec/mpi/graph_mpi.h"
#include "exec/pipeline.h"
#include "exec/kernels/kernel.h"
#include "match/match.h"
#include "exec/mpi/part.h"
#include "wire/wire.h"

/* A local byte move between raw pointers (already redirected through the snapshot): n >= 1
   blocks of len bytes, block j from src + j*src_stride to dst + j*dst_stride (a strided
   transfer packed into its message or unpacked from it, as one move). */
typedef struct {
  const uint8_t *src;
  uint8_t *dst;
  uint64_t len, n, src_stride, dst_stride;
} sched_copy;

/* A residual reduction at this rank: dst = op over contribs[first .. +n) in order. */
typedef struct {
  uint8_t *dst;
  uint64_t count;
  int type, op;
  int64_t first, n;
} sched_red;

typedef struct {
  const uint8_t *buf;    /* count*size bytes in the reduction buffer */
  uint32_t mult;         /* times it counts */
} sched_contrib;

/* A computation as a run executes it (compute.c). */
typedef struct {
  cdag_compute_fn fn;         /* the program's (cdag_compute), or NULL: a graph from a file, */
  void *arg;                  /* whose output is the simulator's hash of what it read */
  int64_t key;                /* its op in the rank's own graph: the hash's seed */
  int after;                  /* stages mode: the stage it follows (-1: before the first) */
  const uint8_t *r;           /* reads rlen bytes at r; rlen UINT64_MAX: reads all, the */
  uint64_t rlen;              /* ranges since[since_first ..] (pairs in the core's part) */
  int64_t since_first, nsince;
  uint8_t *w;                 /* writes wlen bytes at w, or (nw > 0) the blocks */
  uint64_t wlen;              /* since[wfirst ..] (pairs) */
  int64_t wfirst, nw;
  uint64_t cost;              /* ns spent by spinning when there is no fn */
} sched_comp;

/* A message of the baseline that gets its request only when it starts: a rank's baseline
   with more messages than ENGINE_PERSISTENT_MAX keeps no persistent requests (baseline.c). */
enum { ENGINE_PERSISTENT_MAX = 1 << 14 };
/* More messages than this ready at a rank's start (nothing orders them) are refused when the
   baseline is built: started together they would hold as many requests, and MPICH 4.0 aborts
   past about 262,000 (an assertion, no error code), on every rank, mid-run. */
enum { ENGINE_READY_MAX = 200000 };
typedef struct {
  void *buf;
  MPI_Count count;
  MPI_Datatype type;
  int tag, send;
} sched_msg;

/* The detect = 0 engine (baseline.c). */
typedef struct {
  int64_t nops;
  int32_t *comp_of;           /* op -> index in the schedule's computations, -1 */
  uint8_t *kind;
  uint64_t *addr, *addr2, *bytes;
  ir_stride *stride;          /* strided copies' patterns (the graph's g->stride), NULL: none */
  uint64_t *blkoff;           /* their listed offsets (the graph's g->blkoff), NULL: none */
  int64_t nblkoff;
  int32_t *peer, *tag;        /* reduce: cdag_type / cdag_reduce_op */
  int32_t *npred;             /* predecessors per op */
  int32_t *succ_start, *succ; /* CSR of successors */
  int32_t *req_of;            /* op -> index in the schedule's requests, -1 */
  int32_t *op_of_req;         /* request index -> op */
  int32_t *count;             /* run state: predecessors not yet complete */
  int32_t *ready;             /* run state: ready ops, a queue: ready[rhead .. nready) (each op
                                 enters once a run); first ready, first posted, so messages are
                                 posted in program order, the order MPI's queues search best */
  int64_t rhead, nready, ndone;
  int *idx;                   /* Waitsome indices */
  uint64_t *stage_off;        /* send with local successors -> its staging copy in stage, or UINT64_MAX */
  uint8_t *stage;             /* such sends take their data when they start (match.h's semantics) */
  int64_t pending;            /* run state: staged sends still in flight */
  int32_t *fused;             /* op -> the strided copy its message does instead (a pack into
                                 scratch it sends, an unpack of scratch it received), and that
                                 copy -> its message; -1: none. NULL: none at all */
  sched_msg *msg;             /* request index -> its message, when the rank has more than
                                 ENGINE_PERSISTENT_MAX (baseline.c); NULL: persistent requests.
                                 Then the schedule's requests [0, nlive) are those in flight,
                                 op_of_req their ops */
  int64_t nlive;
  MPI_Request *act;           /* persistent requests: those started and not complete, copied
                                 (a Waitsome over every request scanned the inactive ones too:
                                 quadratic in a long graph run as written) */
  int32_t *act_req;           /* their indices in the schedule's requests */
  int64_t nact;
  int32_t *local;             /* a message to or from the rank itself -> its partner (the receive
                                 of a send, the send of a receive): a local copy, no MPI; -1
                                 none. NULL: none at all */
  uint64_t *local_off;        /* such a send -> its data's place in local_stage */
  uint8_t *local_stage;       /* a send's data until its receive is ready (sends take their
                                 data when they run) */
  uint8_t *local_state;       /* run state: a send's data staged, a receive waiting */
} sched_engine;

/* What a compile produced on this rank, immutable once built: every handle of one compiled
   schedule (cdag_compile's, each cache hit's) and its cache entry share it, and the last
   reference frees it (atomic count: handles are freed from any thread). What a run changes
   (requests, kernels, snapshots, run flags) belongs to the handle, so two handles of one
   core never share mutable state. */
typedef struct {
  int refs;                   /* atomic: handles + the cache entry */
  uint8_t *temps;             /* stages mode: the staging buffers (the part's addresses point
                                 into it), shared by the handles, which never run at once */
  int running;                /* atomic: a handle of this core is between its start and its
                                 completion (another handle's start then fails, run.c) */
  MPI_Comm comm;              /* private duplicate of the graph's communicator: every handle's
                                 traffic runs on it (handles of one core work on the same
                                 buffers, so they never run at the same time) */
  sched_part part;            /* this rank's decoded part: what every handle is built from */
  char *report_text, *report_json;  /* the root's report, on every rank */
  exec_arena *arena;          /* the graph's own buffers a graph-mode run uses (graph_mpi.h) */
  struct cdag_schedule *spare;  /* atomic: a handle the program freed, idle, kept for the
                                 next cache hit (sched_spare_take); holds no reference */
  int64_t nbuilt;             /* atomic: handles built on this core (each one's serial) */
} sched_core;

struct cdag_schedule {
  sched_core *core;           /* shared, immutable: part, reports, arena (NULL: a stage) */
  int mode;                   /* PART_GRAPH, PART_PLAN or PART_STAGES */
  int started;                /* between cdag_start and cdag_wait (or cdag_test's done) */
  int completed;              /* cdag_test finished the run: a cdag_wait returns at once */
  int busy;                   /* atomic: a thread is inside cdag_start/test/wait/run/schedule_free on this
                                 handle (a second thread's call fails instead of racing) */
  int failed;                 /* a call on it failed: never kept as a spare */
  int64_t serial;             /* the order in which it was built on its core: handles of one
                                 compile have the same serial on every rank */
  MPI_Comm comm;              /* the core's */
  int rank, nprocs;
  char *report_text, *report_json;  /* the root's report, on every rank */

  /* snapshots: sorted disjoint [lo, hi) copied to snapbuf + off before a run */
  int64_t nsnaps;
  uint64_t *snap_lo, *snap_hi, *snap_off;
  uint8_t *snapbuf;

  int64_t npre, nmid, npost;  /* copies before start (packs), after start, after wait */
  sched_copy *pre, *mid, *post;
  int64_t nreds;  sched_red *reds;
  int64_t ncontribs;  sched_contrib *contribs;
  uint8_t *redbuf;            /* reduction contributions and collective temporaries */

  int nreqs;  MPI_Request *reqs;     /* persistent requests, started together ... */
  int nlate;                         /* ... but the last nlate: replications (part_coll.after),
                                        started once the others completed and were unpacked */
  int late_started;                  /* run state: cdag_test started the replications */
  int64_t ntypes, cap_types; MPI_Datatype *types;  /* derived datatypes to free */
  int ncomms; MPI_Comm *comms;       /* sub-communicators (MPI_COMM_NULL where not member) */
  int64_t nkeep, cap_keep; void **keep;  /* argument arrays the persistent calls refer to */

  int nkerns;  kern_op **kerns;      /* cdag's kernels, in plan order, one after the other */
  int kcur;                          /* run state: the kernel in flight */
  int tested;                        /* run state: requests cdag_test found complete */

  sched_engine eng;           /* graph mode */

  /* computations (graph and stages modes) */
  int64_t ncomps;  sched_comp *comps;   /* stages: in the order they run */
  const uint64_t *since;      /* the part's (addr, len) pairs that computations reading all read */
  int64_t nunhashed;          /* the rank's graph's g->unhashed (a copy): what no hash reads */
  uint64_t *unhashed;
  uint64_t chain;             /* run state: the hash of the last computation that read all */
  /* stages mode: one plan-mode schedule per stage (no core of their own) */
  int nsub;  cdag_schedule **sub;
  int cur;                    /* run state: the stage in flight (nsub: done) */
  int64_t cnext;              /* run state: the next computation to run */
};

/* Root side: one part per rank (parts[r] filled; the caller frees them). m: the cost model
   cdag's kernels split their blocks with, sent to every rank. base[r]: the first op id of
   rank r in the graph analysed (nprocs+1 entries): a computation's key in its rank's graph. */
int sched_parts_from_plan(const cdag_plan *p, const kern_model *m, const int64_t *base, wire_buf *parts);
/* detect = 0: gg finalized and matched (m); base[r] = first op id of rank r (nprocs+1 entries).
   Each part holds, per send/recv of the rank, a tag unique within its (src, dst) channel. */
int sched_parts_from_graph(const cdag_graph *gg, const match_result *m, const int64_t *base, int64_t tag_ub,
                           wire_buf *parts);

/* Rank side: builds the schedule of this rank from its part (a new core). g is this rank's
   distributed graph (graph mode reads its ops). On error nothing is left allocated. */
int sched_build(const uint8_t *part, int64_t len, cdag_graph *g, MPI_Comm comm, cdag_schedule **s);
/* A new handle on core (one more reference): its own requests, kernels, sub-communicators
   and buffers on the core's communicator, built from core's part (graph mode: g's ops, or
   those the part carries). Collective over the communicator, as building is. */
int sched_from_core(sched_core *core, cdag_graph *g, cdag_schedule **s);
/* Frees the handle (requests, datatypes, sub-communicators, buffers) and drops its
   reference to the core. */
void sched_destroy(cdag_schedule *s);
/* A freed handle kept for reuse: sched_spare_put keeps s, idle, as its core's spare, its
   busy flag cleared (or destroys it: the core has one, s is running or failed, s is a stage); sched_spare_take
   returns the spare of c with one more reference to c, or NULL. A cache hit reuses a spare
   only when every rank holds the spare of the same serial (compile.c agrees on it), so the
   persistent collectives of its requests are the same ones on every rank. */
void sched_spare_put(cdag_schedule *s);
cdag_schedule *sched_spare_take(sched_core *c);

sched_core *sched_core_new(void);         /* one reference, no communicator; NULL when out of memory */
sched_core *sched_core_ref(sched_core *c);
void sched_core_unref(sched_core *c);     /* the last reference frees it; NULL is fine */

/* Builds s (comm, rank and nprocs set) from the decoded part s->core->part: plan or graph mode. */
int sched_build_part(cdag_schedule *s, cdag_graph *g);

/* ---- computations (compute.c) ---- */

/* s->comps from the part's computations, each with its function from g (the rank's graph;
   NULL: none has one). */
int sched_comps_build(cdag_schedule *s, cdag_graph *g, const sched_part *pt);
/* A spare handle reused for graph g (the same ops, maybe other functions): each
   computation's function and argument taken from g again. */
void sched_comps_rebind(cdag_schedule *s, const cdag_graph *g);
/* Runs computation c: fn(arg), or the hash of what it reads (s->unhashed left out) written
   over what it writes (sim.h) and its cost spent spinning. */
void sched_comp_run(cdag_schedule *s, const sched_comp *c);
/* Root side: every rank's computations of st in w[rank] (key: op - base[rank]) and, for
   a plan in stages, its staging buffers. */
int sched_steps_put(const stage_steps *st, int32_t nprocs, const int64_t *base, part_steps *w);
/* Core side (stages): allocates the staging buffers and points the stages' addresses in them
   to it (part.h: temps). */
int sched_temps_bind(sched_core *c);

/* Graph mode (baseline.c): build from the part's tags (the ops: g's, or with g NULL those
   already in s->eng, by engine_clone); start / wait the engine. */
int engine_build(cdag_schedule *s, cdag_graph *g, const sched_part *part);
/* The ops and dependencies of from in e, with fresh run state (no requests). */
int engine_clone(sched_engine *e, const sched_engine *from);
int engine_start(cdag_schedule *s);
int engine_wait(cdag_schedule *s);
int engine_test(cdag_schedule *s, int *done);   /* nonblocking: *done once the run completed */
void engine_free(sched_engine *e);

/* Every rank returns the error of the lowest failing rank (one allreduce; compile.c). */
int exec_agree(MPI_Comm comm, int rank, int nprocs, int rc);

/* Counters for tests (compile.c): real compilations (gather + analysis) and cache hits
   (the same graph rebuilt and recognised by its fingerprint) in this process. */
void exec_compile_stats(int64_t *compiles, int64_t *cache_hits);
/* Cache hits that returned the handle the program had freed (its core's spare). */
int64_t exec_spare_stats(void);

/* Tests only: replaces the analysis at the compiling rank with analyze (its plans are freed
   with free_plan and reported as hand-made); NULL restores cdag_analyze. */
typedef int (*exec_analyzer)(cdag_graph *gg, const cdag_options *o, cdag_plan **p);
void exec_set_analyzer(exec_analyzer analyze, void (*free_plan)(cdag_plan *));

/* ---- cdag's kernels in schedules (compile_kernel.c) ---- */

/* A byte sequence of (address, length) pieces, already redirected through snapshots. */
typedef struct {
  uint64_t *addr, *len;
  int n;
} sched_iov;

/* One collective that runs as a cdag kernel, as this rank sees it. */
typedef struct {
  int kind;                 /* det_kind: bcast, allgather(v), reduce, allreduce */
  int alg;                  /* kern_alg: KERN_ALG_CIRCULANT or KERN_ALG_CENSUS */
  int n, me, rootm;         /* members, own member index, root member (-1) */
  const int32_t *members;   /* comm ranks of the members; NULL: every rank */
  int type, op;             /* reductions */
  int inplace;              /* a reduction whose input is its recv slot */
  const uint64_t *counts;   /* per member: bytes of its send slot */
  sched_iov send;           /* the rank's send slot (reads) */
  const sched_iov *recv;    /* its recv slots (1, or n for allgather(v)); empty: scratch */
  const kern_model *model;  /* the compiling rank's, from the part: every member splits alike */
} sched_kcoll;

/* Measures the model on comm (collective) and keeps it for this process. */
int exec_kernel_measure(MPI_Comm comm);
/* 1 and *m = the measured model if this process measured one, else 0. */
int exec_kernel_measured(kern_model *m);
/* The machine a compile starts from: the measured model if any, else the machine file s
   names (exec/machine.h), read once per process for each value of CDAG_MACHINE, else the
   built-in model.
   CDAG_OK, or machine_load's CDAG_ERR_ARG. */
int exec_machine(const cdag_settings *s, machine_params *m);
/* Builds the kernel of k on s->comm (temporaries for empty recv slots kept by s). */
int sched_kernel_build(cdag_schedule *s, const sched_kcoll *k, kern_op **op);
/* Zeroed memory owned by the schedule (freed with it); NULL when out of memory. */
void *sched_keep_alloc(cdag_schedule *s, size_t n);

/* Growable array helper for schedule building: ensures room for one more element. */
int sched_grow(void **arr, int64_t n, int64_t *cap, size_t elem);
/* Records an MPI failure as CDAG_ERR_MPI naming the call and MPI's error string. */
int sched_mpi_error(int mpi_rc, const char *call, int rank);
/* Blocks travel as an MPI datatype (an hvector at one stride, an hindexed otherwise) only
   from this length on (on average); shorter ones are packed by memcpy into a contiguous
   message. MPICH 4.0 over UCX sends an hvector of short blocks past its eager size up to 12
   times slower than packing them (8 B blocks: 32 KiB in 190 us against 19.5 us, 2 ranks of
   one node: bench/blocks_bench), and slower at every size up to 4 KiB blocks (0.85 to 0.96
   of the hvector's time packed); from 16 KiB blocks on, the datatype is faster (it moves them
   without the copies: packing takes 1.3 to 1.4 times as long), an hindexed as an hvector. */
enum { SCHED_VECTOR_MIN_BLOCK = 8192 };
static inline int sched_vector_pays(uint64_t block_len) { return block_len >= SCHED_VECTOR_MIN_BLOCK; }
/* n blocks of len bytes, stride bytes apart from `first` on, as one committed hvector (of
   the widest word that divides them), kept in s->types and freed with s. */
int sched_vector_type(cdag_schedule *s, MPI_Count n, MPI_Count len, MPI_Count stride, const void *first,
                      MPI_Datatype *t);
/* inout = inout op in for a user op's reduction (ir_rop_is_user(rop)), count elements, by
   MPI_Reduce_local with the user's op and datatype (ops.c). */
void exec_user_reduce(int rop, const void *in, void *inout, uint64_t count);
/* The MPI datatype and op a collective of cdag's (type, rop) passes to MPI (ops.c): MPI's
   own where MPI computes what cdag computes, else cdag's own ops (ir_reduce_apply) on
   contiguous byte types. CDAG_ERR_FORMAT if unknown (user ops never reach a plan). */
int sched_mpi_reduction(int type, int rop, MPI_Datatype *t, MPI_Op *op);
void sched_ops_free(void);               /* frees cdag's own ops and types (at MPI_Finalize) */
/* The process-wide state of exec/mpi (the schedule cache, its counters, the measured model,
   cdag's own MPI ops) is guarded by one mutex, so different graphs may be compiled, run and
   freed from different threads under MPI_THREAD_MULTIPLE (not taken under MPI_THREAD_SINGLE,
   where the process has one thread). exec_at_finalize registers, once,
   the MPI_Finalize hook that frees that state (call it with the lock held). */
void exec_lock(void);
void exec_unlock(void);
void exec_at_finalize(void);

#endif

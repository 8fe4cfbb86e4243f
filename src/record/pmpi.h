/* cdag — src/record/pmpi.h: what the recorder's wrapper files share (private to libcdag-record).
 *
 * libcdag-record is one PMPI layer split by call family, each file its wrappers:
 *  - pmpi.c: the recorder's state and its services (the part file, counts, communicators,
 *    datatypes, positions, requests, phases), MPI_Init/Finalize/Pcontrol, the communicators
 *    and datatypes the program creates, the calls counted as unsupported;
 *  - pmpi_p2p.c: point-to-point, persistent requests, completions, probes;
 *  - pmpi_coll.c: the blocking collectives of regular blocks (pmpi_coll.h: what the
 *    collective files share);
 *  - pmpi_vcoll.c: the v- and w-collectives, Reduce_scatter, Scan, Exscan, the
 *    neighbourhood collectives;
 *  - pmpi_nbcoll.c: the nonblocking collectives (MPI_Ibcast, ..., MPI_Ialltoallw,
 *    MPI_Ineighbor_*), completed as requests;
 *  - pmpi_rma.c: one-sided communication (windows, fences, accesses);
 *  - pmpi_mem.c: free, realloc and munmap, noting the memory the program gives back, which
 *    the shadow forgets.
 * The state is one per process (one interposed MPI library per process), reached through
 * R. Everything here has hidden visibility (the library is built with it); only the MPI_
 * wrappers, after `#pragma GCC visibility push(default)` in each file, replace MPI's. */
#ifndef CDAG_RECORD_PMPI_H
#define CDAG_RECORD_PMPI_H

#define JUDYERROR_NOTEST 1   /* Judy's out-of-memory is PJERR / JERR here, not exit(1) in the program */
#include <Judy.h>
#include <mpi.h>
#include <stdint.h>

#include "format/format.h"
#include "ir/coll_kinds.h"
#include "mpi_glue/mpi_glue.h"
#include "record/record.h"

/* Declared hidden here, so that a function defined after a file's push(default) stays hidden. */
#pragma GCC visibility push(hidden)

#define MAP_FIRST (1 << 20)
#define SELF_COMM_ID (1 << 30)

/* Every call the recorder counts, supported or not: point-to-point and completion calls,
   then MPI's function of every collective kind of ir/coll_kinds.h (its `mpi` column; the
   kinds it marks native are recorded, the others counted as unsupported), then the
   nonblocking forms of the native kinds, then the rest. */
#define REC_P2P_CALLS(X)                                                                          \
  X(Send) X(Ssend) X(Rsend) X(Bsend) X(Isend) X(Issend) X(Irsend) X(Ibsend) X(Recv) X(Irecv)      \
  X(Sendrecv) X(Sendrecv_replace) X(Send_init) X(Ssend_init) X(Rsend_init) X(Bsend_init)          \
  X(Recv_init) X(Start) X(Startall) X(Request_free) X(Wait) X(Waitall) X(Waitany) X(Waitsome)     \
  X(Test) X(Testall) X(Testany) X(Testsome) X(Probe) X(Iprobe) X(Mprobe) X(Improbe) X(Mrecv)      \
  X(Imrecv) X(Cancel)
#define REC_OTHER_CALLS(X)                                                                        \
  X(Comm_dup) X(Comm_split) X(Comm_create) X(Comm_split_type) X(Cart_create) X(Cart_sub)          \
  X(Graph_create) X(Dist_graph_create) X(Dist_graph_create_adjacent)                              \
  X(Comm_free) X(Pcontrol) X(Comm_spawn) X(Intercomm_create) X(Intercomm_merge)                   \
  X(Comm_create_group) X(Comm_idup) X(Init_thread_multiple) X(Comm_dup_with_info) X(Comm_idup_with_info)  \
  X(Comm_create_from_group) X(Intercomm_create_from_groups)
#define REC_NBCOLL_CALLS(X)                                                                       \
  X(Ibarrier) X(Ibcast) X(Igather) X(Iscatter) X(Iallgather) X(Ialltoall) X(Ireduce) X(Iallreduce)  \
  X(Ireduce_scatter_block) X(Ireduce_scatter) X(Iscan) X(Iexscan) X(Igatherv) X(Iscatterv)          \
  X(Iallgatherv) X(Ialltoallv) X(Ialltoallw) X(Ineighbor_allgather) X(Ineighbor_allgatherv)          \
  X(Ineighbor_alltoall) X(Ineighbor_alltoallv) X(Ineighbor_alltoallw)
/* One-sided communication (pmpi_rma.c). */
#define REC_RMA_CALLS(X)                                                                          \
  X(Win_create) X(Win_allocate) X(Win_allocate_shared) X(Win_create_dynamic) X(Win_attach)         \
  X(Win_detach) X(Win_free) X(Win_fence) X(Put) X(Get) X(Accumulate) X(Get_accumulate)            \
  X(Fetch_and_op) X(Compare_and_swap) X(Rput) X(Rget) X(Raccumulate) X(Rget_accumulate)           \
  X(Win_lock) X(Win_unlock) X(Win_lock_all) X(Win_unlock_all) X(Win_flush) X(Win_flush_all)       \
  X(Win_flush_local) X(Win_flush_local_all) X(Win_sync) X(Win_post) X(Win_start)                  \
  X(Win_complete) X(Win_wait) X(Win_test)
/* MPI-4's persistent collectives (pmpi_pcoll.c). */
#define REC_PCOLL_CALLS(X)                                                                        \
  X(Barrier_init) X(Bcast_init) X(Gather_init) X(Scatter_init) X(Allgather_init) X(Alltoall_init)  \
  X(Reduce_init) X(Allreduce_init) X(Reduce_scatter_block_init) X(Reduce_scatter_init) X(Scan_init) \
  X(Exscan_init) X(Gatherv_init) X(Scatterv_init) X(Allgatherv_init) X(Alltoallv_init)             \
  X(Alltoallw_init) X(Neighbor_allgather_init) X(Neighbor_allgatherv_init)                         \
  X(Neighbor_alltoall_init) X(Neighbor_alltoallv_init) X(Neighbor_alltoallw_init)
/* MPI-4's large-count forms and the calls counted, not recorded (pmpi_mpi4.c; the
   point-to-point large-count forms are recorded: pmpi_p2p.c). */
#define REC_MPI4_CALLS(X) \
  X(Send_c) X(Ssend_c) X(Rsend_c) X(Bsend_c) X(Recv_c) X(Mrecv_c) X(Imrecv_c) X(Sendrecv_c) \
  X(Sendrecv_replace_c) X(Isend_c) X(Issend_c) X(Irsend_c) X(Ibsend_c) X(Irecv_c) X(Send_init_c) \
  X(Ssend_init_c) X(Rsend_init_c) X(Bsend_init_c) X(Recv_init_c) X(Put_c) X(Get_c) \
  X(Accumulate_c) X(Get_accumulate_c) X(Rput_c) X(Rget_c) X(Raccumulate_c) X(Rget_accumulate_c) \
  X(Win_create_c) X(Win_allocate_c) X(Win_allocate_shared_c) X(Bcast_c) X(Ibcast_c) \
  X(Bcast_init_c) X(Gather_c) X(Igather_c) X(Gather_init_c) X(Gatherv_c) X(Igatherv_c) \
  X(Gatherv_init_c) X(Scatter_c) X(Iscatter_c) X(Scatter_init_c) X(Scatterv_c) X(Iscatterv_c) \
  X(Scatterv_init_c) X(Allgather_c) X(Iallgather_c) X(Allgather_init_c) X(Allgatherv_c) \
  X(Iallgatherv_c) X(Allgatherv_init_c) X(Alltoall_c) X(Ialltoall_c) X(Alltoall_init_c) \
  X(Alltoallv_c) X(Ialltoallv_c) X(Alltoallv_init_c) X(Alltoallw_c) X(Ialltoallw_c) \
  X(Alltoallw_init_c) X(Reduce_c) X(Ireduce_c) X(Reduce_init_c) X(Allreduce_c) X(Iallreduce_c) \
  X(Allreduce_init_c) X(Reduce_scatter_c) X(Ireduce_scatter_c) X(Reduce_scatter_init_c) \
  X(Reduce_scatter_block_c) X(Ireduce_scatter_block_c) X(Reduce_scatter_block_init_c) X(Scan_c) \
  X(Iscan_c) X(Scan_init_c) X(Exscan_c) X(Iexscan_c) X(Exscan_init_c) X(Neighbor_allgather_c) \
  X(Ineighbor_allgather_c) X(Neighbor_allgather_init_c) X(Neighbor_allgatherv_c) \
  X(Ineighbor_allgatherv_c) X(Neighbor_allgatherv_init_c) X(Neighbor_alltoall_c) \
  X(Ineighbor_alltoall_c) X(Neighbor_alltoall_init_c) X(Neighbor_alltoallv_c) \
  X(Ineighbor_alltoallv_c) X(Neighbor_alltoallv_init_c) X(Neighbor_alltoallw_c) \
  X(Ineighbor_alltoallw_c) X(Neighbor_alltoallw_init_c) X(Isendrecv) X(Isendrecv_replace) \
  X(Isendrecv_c) X(Isendrecv_replace_c) X(Psend_init) X(Precv_init)
#define X_ENUM(n) C_##n,
#define X_KIND_ENUM(ID, NAME, MPI, ...) C_##MPI,
enum { REC_P2P_CALLS(X_ENUM) CDAG_COLL_KINDS(X_KIND_ENUM) REC_NBCOLL_CALLS(X_ENUM) REC_OTHER_CALLS(X_ENUM)
       REC_RMA_CALLS(X_ENUM) REC_PCOLL_CALLS(X_ENUM) REC_MPI4_CALLS(X_ENUM) NCALLS };
extern const char *const call_names[NCALLS];

/* What running out of memory lost (index.json's "out_of_memory"). */
enum { OOM_CALLS, OOM_COMMS, OOM_TYPES, OOM_REQUESTS, OOM_TICKETS, NOOM };
extern const char *const oom_names[NOOM];

/* A decoded datatype, counted: the cache of its handle holds one reference until
   MPI_Type_free, each pending operation that will lay it out later one more (MPI lets a
   program free a datatype while an operation on it is pending). */
typedef struct { mpig_flat f; int64_t refs; } held_type;

/* A communicator: its agreed id and the world ranks of the n ranks a message names (an
   intercommunicator's remote group); oom: the world ranks were lost to memory. */
typedef struct { int id, n, inter, oom, refs, nidup; int *world; } rcomm;   /* nidup: MPI_Comm_idup's made of it */
/* Ids of communicators MPI_Comm_idup makes (pmpi.c, comm_iduped), above SELF_COMM_ID and so
   above every id members agree on at other creations: the k-th of parent p is
   IDUP_FIRST + p * IDUP_PER_PARENT + k while p < IDUP_PARENTS and k < IDUP_PER_PARENT, else
   (a duplicate of such a duplicate) a hash of (p, k) from IDUP_HASHED on. */
#define IDUP_FIRST (SELF_COMM_ID + 1)
#define IDUP_PER_PARENT 2048
#define IDUP_PARENTS (1 << 18)
#define IDUP_HASHED (IDUP_FIRST + IDUP_PARENTS * IDUP_PER_PARENT)

enum { P_SEND, P_RECV, P_COLL, P_RMA };   /* P_COLL: a nonblocking collective (pmpi_nbcoll.c); P_RMA:
                                              a request-based one-sided access (pmpi_rma.c) */
typedef struct {
  uint8_t kind, persistent, active, live;
  int64_t newer;             /* the next newer operation with the same handle, -1 none */
  int64_t oldest;            /* kept by the newest of a handle: the oldest, completed first */
  int phase;                 /* phase of the active operation */
  uint64_t seq;              /* its position */
  const void *buf;
  int count, peer, tag;      /* peer and tag as given (communicator ranks, maybe wildcards) */
  MPI_Datatype type;
  MPI_Comm comm;
  held_type *held;               /* type, held for a receive (written when it completes) and a
                                persistent operation (laid out at each start); NULL none */
  rcomm *xc;                 /* a send's or receive's communicator, held from its post to its
                                completion (comm_hold): the program may free comm meanwhile,
                                and MPI hand its handle to the next communicator */
  struct pcoll *pc;          /* a persistent collective's arguments (pmpi_pcoll.c), NULL none */
  uint64_t also;             /* a receive of MPI_Isendrecv: its send's position, which the
                                completion names too (0 none) */
  uint8_t given;             /* a receive whose source and tag are the ones given where not
                                wildcards: MPICH's MPI_Isendrecv reports its own tag in the
                                status */
} pend;   /* P_COLL: buf is the call's coll (pmpi_coll.h), its output waiting for completion */


/* The byte ranges of one message, coalesced; ncopies: the strided copies that pack them
   (runs of one length at one stride are one copy; layout sets it). */
typedef struct { int64_t n, cap; uint64_t *a, *l; int64_t ncopies; } ranges;

typedef struct rec_fold rec_fold;   /* fold.c: repeats of the last calls folded in place */
typedef struct {
  int rank, nprocs, fd;
  char *map;                          /* the part file, mapped */
  size_t len, size;                   /* bytes written, bytes mapped */
  int phase, active, implicit;
  uint64_t seq;
  uint64_t others;                    /* positions taken by anything but a passive-target access
                                         (quiet 0 when next_seq took it; pmpi_rma.c) */
  int quiet;
  int reclose;                        /* a request completed a get of a shared passive-target epoch */
  uint64_t t_exit;                    /* when the last intercepted call returned (ns) */
  uint64_t gap;                       /* ns computed since the last position was taken */
  rec_shadow *sh;
  Pvoid_t comms, reqs, msgs, types;   /* JudyL: handle -> rcomm*, pend index + 1, the probe that matched (pmpi_p2p.c), mpig_flat* */
  Pvoid_t probed;            /* JudyL: an Imrecv's position -> its probe's (pmpi_p2p.c) */
  Pvoid_t wins;                       /* JudyL: window -> its members (pmpi_rma.c) */
  Pvoid_t pairs;                      /* Judy1: the pair communicators declared (pmpi_rma.c) */
  Pvoid_t idups;                      /* Judy1: the ids comm_iduped gave (pmpi.c) */
  rcomm *coll_as;                     /* while pmpi_pcoll.c describes a start: the communicator
                                         its line names, not the call's own */
  MPI_Win tickets;                    /* a ticket counter per process, and where it is (MPI_WIN_NULL: none; pmpi_rma.c) */
  uint64_t *counter;                  /* this process's: [0] its ticket counter, [1] where it is (record.h,
                                         tpos), [2 ..] the locks of the atomics on it, one per
                                         window slot (pmpi_rma.c) */
  int win_slots;                      /* the window slots this process has seen taken (pmpi_rma.c) */
  ranges trs;                         /* a one-sided access's target ranges */
  pend *p; int64_t np, pcap, *pfree, nfree, freecap;
  int next_comm_id;
  uint64_t pack_next;
  struct { uint64_t hash, bytes, area, seq; int64_t n; } packed;   /* the last send packed (record_send):
                                         its ranges' hash and count, bytes, area, position; n 0 none */
  size_t call_at[NCALLS];              /* where each call's count line ends (tally), 0 none */
  size_t unsup_at[NCALLS];             /* the same for `unsupported NAME N` */
  size_t oom_at[NOOM];                 /* and `out_of_memory KIND N` */
  uint64_t lost_said[2];               /* the shadow's out-of-memory counts written so far */
  char layout_why[96];                /* why the last layout failed ("" none) */
  MPI_Status *st; int stcap;          /* statuses when the caller ignores them */
  MPI_Request *rq; int rqcap;         /* request handles saved before completion calls */
  ranges rs;                          /* the message being recorded */
  uint64_t *wait; int nwait, waitcap; /* the operations one completion call completed */
  int64_t access_lines;               /* lines the last one-sided access wrote (pmpi_rma.c) */
  uint64_t oom[NOOM];                 /* what out of memory lost, by kind (its lines: oom_at) */
  int oom_now;                        /* set by nomem(): the call being recorded hit it */
  rec_fold *fold;                     /* NULL: out of memory, nothing folded */
} recorder;

extern recorder *R;

/* the part file */
void out(const char *fmt, ...);
void out_op(int phase, uint64_t seq, const ir_line *l);
ir_line line_of(int kind);

/* counts and what is lost */
void unsupported(int call);
void unsupported_because(int call, const char *text);
void nomem(int kind);
void not_recorded(int call);
#if MPI_VERSION >= 4
/* A large-count form's count fits an int (what a line holds): 1; else counted under `call`
   (in a phase; a persistent request's init, init 1, whenever the recorder writes: its starts
   may come in one) and 0. */
int count_fits(MPI_Count n, int call, int init);
#endif

/* communicators */
rcomm *comm_persistent(MPI_Comm parent, int call);
void comm_drop(MPI_Comm c);
void comm_created(MPI_Comm c);
rcomm *usable(MPI_Comm c, int call);
int world_of(const rcomm *x, int r);

/* datatypes */
held_type *type_hold(MPI_Datatype t);
void type_release(held_type *x);
int ranges_add(ranges *r, uint64_t a, uint64_t l);
int layout(const void *buf, int count, MPI_Datatype t, const held_type *held, uint64_t limit, ranges *r);
/* The same ranges, without counting the copies that would pack them (a one-sided target's
   side, which is written as blocks, not packed). */
int layout_ranges(const void *buf, int count, MPI_Datatype t, const held_type *held, uint64_t limit, ranges *r);
/* r->ncopies, for ranges gathered from several layouts (a side of blocks): 0, or -1 when
   they are too many to copy (R->layout_why says why). layout sets it itself. */
int ranges_copies(ranges *r);
MPI_Aint type_extent(MPI_Datatype t);
uint64_t type_bytes(int count, MPI_Datatype t);
const char *type_name(MPI_Datatype t);

/* recording */
int recording(void);
uint64_t next_seq(void);
void check_sent(const ranges *r, uint64_t seq, const char *type);
/* The n ranges a message posted at `posted` (0: not known) wrote, complete at `done`, held
   by the recording (rec_shadow_recv_ranges). */
void noted_recv(const uint64_t *a, const uint64_t *l, int64_t n, uint64_t done, uint64_t posted, const char *type);
uint64_t pack_area(uint64_t total);
void pack_copies(const ranges *r, uint64_t area, uint64_t first_seq, int to_area);
/* comm's recorded communicator: xc when not NULL (a pending operation's, held), else the
   one comm names now. */
uint64_t record_send(const void *buf, int count, MPI_Datatype t, const held_type *held, int dest, int tag, MPI_Comm comm,
                     rcomm *xc, int call, int blocking);
int record_recv(int phase, uint64_t seq, void *buf, int count, MPI_Datatype t, const held_type *held, MPI_Comm comm,
                rcomm *xc, const MPI_Status *st, uint64_t done, int blocking, int call);
/* Does the recorder know comm (a communicator whose calls it can record)? */
int comm_known(MPI_Comm comm);
/* The recorded communicator comm names, one more reference (NULL: none); comm_release. */
rcomm *comm_hold(MPI_Comm comm);
void comm_release(rcomm *x);
/* After receive p was written: its `probed` line, if a probe matched its message (Imrecv). */
void probed_written(const pend *p);

/* requests */
int pend_put(MPI_Request rq, pend x);   /* 0, or -1 when it could not be kept (counted) */
int64_t pend_find(MPI_Request rq);
void pend_drop(MPI_Request rq);
void forget_requests(const MPI_Request *rq, int n);
MPI_Request *save_requests(const MPI_Request *rq, int n);
MPI_Status *statuses(MPI_Status *user, int n);
void completed(const MPI_Request *rq, const int *which, int n, const MPI_Status *st, int call);
/* The wait line of a completion: wait_note adds an operation it names (0: no memory, counted),
   wait_line writes it at position done and empties it. */
int wait_note(uint64_t seq);
void wait_line(uint64_t done);
/* pmpi_nbcoll.c: a nonblocking collective's request completed, observed at position done
   (its output is the shadow's from there on); its request dropped (active: before any
   completion, by MPI_Request_free, counted). Both free the coll (p->buf). nbcoll_completed
   returns 1 when the wait names the call's line (p->seq), 0 when it named the call's lines
   itself (an intercommunicator's messages) or there is nothing to name. */
int nbcoll_completed(pend *p, uint64_t done);
void nbcoll_dropped(pend *p);
/* pmpi_pcoll.c: the starts of requests rq[0..n) that begin persistent collectives, described
   before MPI starts them (NULL: none, or no memory: counted); after MPI returned rc, their
   requests hold the calls until completed (frees s). pcoll_forget frees an operation's
   arguments (its request freed). */
struct pcoll_starts;
struct pcoll_starts *pcoll_describe(const MPI_Request *rq, int n);
void pcoll_started(struct pcoll_starts *s, int rc);
void pcoll_forget(pend *p);
/* pmpi_rma.c: a request-based access's request completed at position done (an Rget's bytes
   are the shadow's from there). */
void rma_completed(pend *p, uint64_t done);
void rma_completions_done(void);   /* after a completion's wait line: the pieces of shared epochs it closed */

/* folding repeats (fold.c): around each intercepted call */
rec_fold *fold_new(void);
void fold_free(rec_fold *f);
void fold_enter(rec_fold *f);
void fold_exit(rec_fold *f);
/* memory given back (pmpi_mem.c): noted while watching (a phase is active), forgotten by
   the shadow at the drain, as given back after position seq (the last taken) */
void rec_mem_watch(int on);
void rec_mem_mark(uint64_t addr, uint64_t len);   /* the shadow's rec_shadow_on_note */
void rec_mem_drain(rec_shadow *sh, uint64_t seq);
/* phases, start and end, time */
void phase_start(void);
void phase_end(int at_exit);
void rec_start(void);
void rec_finish(void);
void rec_free(void);
void rma_free(void);
/* The passive-target tickets' window over MPI_COMM_WORLD: made after MPI_Init (collective),
   freed before MPI_Finalize. */
void rma_tickets_open(void);
void rma_tickets_close(void);
void time_to_now(void);
int call_enter(int c);
void call_exit(const int *entered);

/* First in every intercepted call: counts it, ends the time computed before it, and, as
   the call returns (whichever return: a cleanup runs after the return value is computed),
   starts the next. Two clock reads per call (vDSO, tens of ns). */
#define COUNT(c) int rec_call_ __attribute__((cleanup(call_exit), unused)) = call_enter(c)

#pragma GCC visibility pop

#endif

/* cdag — src/record: recording unmodified MPI programs (contract of the recorder).
 *
 * Its parts, each in its own file:
 *  - pmpi.c, pmpi_p2p.c, pmpi_coll.c, pmpi_vcoll.c, pmpi_nbcoll.c, pmpi_rma.c, fold.c (libcdag-record.so,
 *    MPI; pmpi.h): the PMPI interposition layer. Loaded with LD_PRELOAD
 *    by `cdag record`, or linked before libmpi, it records every process of the program into
 *    DIR/rank-R.part (R its rank in MPI_COMM_WORLD; DIR from CDAG_RECORD_DIR, default
 *    ./cdag-recording). Point-to-point calls become sends and receives in world ranks, the
 *    native collectives cdag knows become collective operations (nonblocking ones too,
 *    completed by the wait that sees their request complete), completions become waits,
 *    one-sided accesses in fence epochs gets, puts, accumulates and fences.
 *    Nothing the program computes or prints changes: every call is passed on unchanged.
 *  - fold.c (part of the PMPI layer): a repeat of the last calls' lines folded in place
 *    (`fold` below), so that a part grows with the run's distinct units, not its iterations.
 *  - shadow.c (plain C): what the recording says each rank's memory holds. PMPI never sees
 *    local computation, so before a send the bytes sent are compared with what the
 *    recording holds there; where they differ the recording gets a local operation: a
 *    reduction or copy of received bytes when the content proves one, otherwise a
 *    computation that reads all the rank holds and writes them. Bytes never seen that a
 *    rank sends after its first completed receive are computed too. So a recording never
 *    claims that bytes travelled where they did not, nor that computed bytes existed at
 *    the start. The time a process spends between its MPI calls is the cost of the
 *    computation written there, or of one that writes nothing (`compute T reads all`),
 *    when it is at least REC_COMPUTE_MIN_NS (CDAG_RECORD_MIN_GAP sets another).
 *  - merge.c (plain C): the part files of one run to one global graph file per phase
 *    (DIR/phase-NNNN.cdag) and DIR/index.json; sends nobody received are counted and left
 *    out, receives whose send lies outside the phase become computations that read
 *    nothing and write the bytes (`compute 0 writes S at A`). Without MPI_Pcontrol,
 *    phases.c finds where the run repeats and the merger cuts it there; distinct.c stores
 *    each distinct phase once and the run as their sequence; expand.c reads that index
 *    back and writes the flat recording.
 *
 * Part files (private to this directory; a line each, read back only by merge.c):
 *   cdag-record-part 1 / rank R nprocs P         header
 *   comm ID N r0 .. rN-1                         a communicator the rank used: the id its
 *                                                members agreed on and its members (world)
 *   phase K | discard K | end K                  a phase starts (Pcontrol(1), or MPI_Init),
 *                                                is dropped (Pcontrol after an implicit
 *                                                phase), ends
 *   K SEQ OP                                     operation OP of phase K at program position
 *                                                SEQ (graph-file syntax, by the format's one
 *                                                writer, ir_format_line; send and recv carry
 *                                                `comm ID`, tags are the communicator's;
 *                                                local ops: reduce, copy (strides of either
 *                                                sign, or listed steps), `compute COST
 *                                                reads all [writes S at A [blocks N stride
 *                                                D | blocks N steps ..]]`)
 *   K SEQ lock|flush|unlock comm C               a passive-target epoch of this rank (origin o)
 *                                                on rank t, C its pair's (rec_passive_id):
 *                                                opened (MPI_Win_lock, or lock_all at its first
 *                                                access to t), completed and going on
 *                                                (MPI_Win_flush), closed (MPI_Win_unlock); the
 *                                                merger writes each as `fence comm C` and adds
 *                                                t's fence where a collective orders it;
 *                                                `unlock comm C ticket N`: the N-th ticket
 *                                                taken on t, while holding its lock (the
 *                                                order MPI granted t's lock in); `tpos W`
 *                                                (any marker): where t was when the origin
 *                                                read it (before a lock, after the accesses
 *                                                completed at a flush or unlock), W = its
 *                                                position << 2 | REC_TPOS_* (below); the
 *                                                merger places t's fence there; `lock comm
 *                                                C shared`: MPI_LOCK_SHARED or lock_all,
 *                                                `seen V`: t's ticket counter read with W;
 *                                                under a shared lock a flush takes a ticket
 *                                                too (`flush comm C ticket N`), and the
 *                                                recorder writes a flush of its own before an
 *                                                access that follows another call and after
 *                                                the completion of a request-based get
 *   K SEQ winfree comm C                         MPI_Win_free of a window over communicator C
 *                                                (0: every process), a barrier of its members
 *                                                where the merger may place those fences; not
 *                                                written in the graph
 *   K SEQ wait SEQ1 SEQ2 ..                      a completion the rank observed
 *   K scratch ADDR BYTES                         packing area of a derived datatype
 *   K drop SEQ                                   operation SEQ did not happen (cancelled)
 *   K probed SEQ PSEQ                            receive SEQ (an Mrecv/Imrecv) got the message
 *                                                an Mprobe/Improbe at position PSEQ matched:
 *                                                it is paired as if it stood at PSEQ, with a
 *                                                tag of its own in the graph
 *   K got SEQ HASH                               the get at SEQ (of one line, in a
 *                                                passive-target epoch) fetched bytes whose
 *                                                hash is HASH (decimal): the merger compares
 *                                                two reads of the same bytes of a target
 *   K fold OFF1 OFF2 D N                         the operation lines in bytes [OFF1, OFF2) of
 *                                                the part (before this line), less time-only
 *                                                computations, repeated N times, the i-th
 *                                                with every position (a wait's too) i * D
 *                                                further: fold.c cuts repeats of the last
 *                                                calls this way, N 20 digits wide, kept
 *                                                current in place
 *   call NAME N                                  calls made: written at the first, N 20
 *                                                digits wide, kept current in place (the
 *                                                merger sums the lines), so that a process
 *                                                that crashes has them
 *   unsupported NAME N                           N calls NAME not recorded, the same way
 *   unsupported_why NAME N TEXT                  N of the unsupported calls NAME, for reason TEXT
 *   out_of_memory KIND N                         what running out of memory lost (calls,
 *                                                communicators, datatypes, requests: in
 *                                                place as `call`; shadow_content,
 *                                                shadow_ranges: what was lost since the last
 *                                                phase end, at each phase end)
 *   fixes COMPUTE REDUCE COPY                    local operations added (COMPUTE: computations
 *                                                that write), at MPI_Finalize
 *                                                (without it the merger counts the lines)
 *   finalized                                    the process reached MPI_Finalize
 * The merger checks every field against its bounds before it allocates (docs/recording.md).
 * Positions: every intercepted operation takes the next multiple of REC_SEQ_STEP; local
 * operations added after a completion (unpacking, inferred reductions and copies) take the
 * completion's position + 1 .. + STEP/2 - 1. Before an operation at position P, in the gap
 * since the previous call: the time-only computation of the gap at P - STEP/2, the
 * computations that write what the call sends P - STEP/2 + 1 .. - STEP/4 - 1 (the first of
 * them carries the gap's time if there is one), packing copies P - STEP/4 .. - 1. So the
 * time sits after what the previous call's completion added and before what the gap
 * computed. The merger sorts by position, so lines may be written in any order.
 *
 * Addresses: the process's own virtual addresses, as the program passed them (a derived
 * datatype's bytes as the ranges it touches, moved through a packing area at
 * REC_PACK_BASE, which no program address reaches: user space ends below 2^47). */
#ifndef CDAG_RECORD_H
#define CDAG_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REC_SEQ_STEP 65536u
/* Where a process is, as it publishes it for passive-target origins (`tpos`): between calls,
   after its last position (OUT); in a call that has taken no position yet (ENTERED); in the
   call at its last position (IN). */
enum { REC_TPOS_OUT, REC_TPOS_ENTERED, REC_TPOS_IN };
/* The communicator ids of passive-target epochs (origin o, target t, P processes, window
   slot k): REC_PASSIVE_BASE + o * P + t for k = 0, REC_PASSIVE_EXTRA + ((k - 1) * P + o) *
   P + t for the others, declared by o (`comm ID 2 o t`, or `comm ID 1 o` when o = t). A
   window's slot is its number among the windows modulo rec_passive_slots(P), so epochs of two
   windows on one target, open at once, are epochs of two communicators. P is at most 16384,
   so the first ids stay below the recorder's MPI_COMM_SELF (2^30), the others above
   REC_PASSIVE_EXTRA and below 2^31. */
#define REC_PASSIVE_BASE ((1 << 29) + (1 << 28))
#define REC_PAIR_MAX_PROCS 16384   /* the most processes pair communicators are made for:
                                      REC_PASSIVE_BASE + P^2 stays below 2^30 */
#define REC_PAIR_MAX_PROCS_TEXT "16384"
#define REC_PASSIVE_EXTRA ((1 << 30) + (1 << 29))
static inline int rec_passive_slots(int64_t P) {
  int64_t room = (INT32_MAX - (int64_t)REC_PASSIVE_EXTRA) / (P * P);
  return 1 + (int)(room < 61 ? room : 61);
}
static inline int rec_passive_id(int64_t P, int k, int o, int t) {
  return (int)(k ? REC_PASSIVE_EXTRA + ((k - 1) * P + o) * P + t : REC_PASSIVE_BASE + o * P + t);
}
/* Is id a passive-target epoch's of P processes? Then its origin, target and slot. */
static inline int rec_passive_of(int64_t id, int64_t P, int *o, int *t, int *k) {
  if (P > REC_PAIR_MAX_PROCS) return 0;   /* beyond it, no id is a pair's (the first ones reach 2^30) */
  int64_t c = id - REC_PASSIVE_BASE;
  if (c >= 0 && c < P * P) return *k = 0, *o = (int)(c / P), *t = (int)(c % P), 1;
  c = id - REC_PASSIVE_EXTRA;
  if (c < 0 || c >= (rec_passive_slots(P) - 1) * P * P) return 0;
  *k = 1 + (int)(c / (P * P)), *o = (int)(c / P % P), *t = (int)(c % P);
  return 1;
}
#define REC_PACK_BASE 0x7ffd000000000000ull
/* The most processes the merger accepts (docs/recording.md): it allocates per process
   before it reads the parts. */
#define REC_MAX_PROCS (1 << 16)
/* The least time between two MPI calls written as a computation of its own, in ns: the
   gaps of back-to-back calls are no computation. On a shared 2-core machine, calls with a
   few arithmetic operations between them show gaps of 1 to 2 us (clock reads, steal), so
   1 us would add operations, and orderings through `reads all`, where nothing was computed.
   No least gap tells computation from a process waiting for a CPU (an oversubscribed or
   loaded node deschedules a process for milliseconds, and a virtual machine's context switch
   leaves tens of microseconds of CPU time): CDAG_RECORD_MIN_GAP raises it. */
#define REC_COMPUTE_MIN_NS 10000u

/* ---- shadow.c ---- */

typedef struct rec_shadow rec_shadow;

/* A local operation the recording must add so that it says what the memory holds. */
enum { REC_FIX_COMPUTE, REC_FIX_REDUCE, REC_FIX_COPY };
typedef struct {
  int kind;               /* REC_FIX_* */
  uint64_t seq;           /* its program position */
  uint64_t addr, bytes;   /* what it writes (COMPUTE: bytes 0 writes nothing; it reads all) */
  uint64_t src;           /* REDUCE: the `in` range (a received buffer); COPY: the source */
  const char *type, *op;  /* REDUCE: the element type and op, format names */
  uint64_t count;         /* REDUCE: elements */
  uint64_t cost;          /* COMPUTE: ns */
  uint64_t blocks, stride;   /* COMPUTE: bytes is `blocks` blocks at `stride` (> their length) from
                                addr, or at the addresses `at`; blocks 1: one range */
  const uint64_t *at;        /* COMPUTE: the blocks' addresses when at no one stride, else NULL */
} rec_fix;
typedef void (*rec_fix_fn)(void *ctx, const rec_fix *fix);

/* budget: bytes of content the shadow may keep (beyond it, ranges keep a hash only);
   min_gap: the least time between two calls (ns) written as a computation of its own. */
rec_shadow *rec_shadow_new(uint64_t budget, uint64_t min_gap);
void rec_shadow_free(rec_shadow *sh);
/* A receive's run of at least `blocks` blocks of one length at one stride (64 unless set;
   below 2: none) where the shadow holds nothing but tombstones is kept as the run until a
   look-up meets it (tests compare the recording with and without). */
void rec_shadow_pend_min(rec_shadow *sh, int64_t blocks);
/* fn(addr, len) is called for every range the shadow comes to hold (before it holds it). */
void rec_shadow_on_note(rec_shadow *sh, void (*fn)(uint64_t addr, uint64_t len));
/* Forgets everything: a new phase starts. */
void rec_shadow_reset(rec_shadow *sh);
/* The program gave the `len` bytes at `addr` back (free, realloc, munmap) after position
   seq: whatever they hold from now on is not what the recording saw, so the shadow forgets
   them; a send of them later is computed or copied from receives completed after seq, and
   the phase's end does not compare them. O(log e + entries of the range). */
void rec_shadow_forget(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t seq);
/* rec_shadow_forget of n ranges r[i], which it sorts by address: a range inside a tombstone
   that an earlier range of the same address and length fell in costs no look-up. */
typedef struct { uint64_t addr, len; } rec_range;
void rec_shadow_forget_ranges(rec_shadow *sh, rec_range *r, int64_t n, uint64_t seq);
/* The rank sends (or gives a collective) the `len` bytes at `addr` at position `seq`, as
   elements of `type` (a format name: the message's MPI datatype; NULL: unknown): calls
   `fix` for each local operation the recording needs before it, then notes the bytes as
   what the recording holds there. A reduction is only inferred into bytes last moved as
   the same type as the receives it folds, element-aligned. */
void rec_shadow_send(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t seq, const char *type, rec_fix_fn fix,
                     void *ctx);
/* Are the `len` bytes at `addr` all held as a send at position `seq` noted them, none
   noted since (by a receive, a later send, a local operation)? Then a send that finds
   them unchanged sends what that one did. O(log e + entries of the range). */
int rec_shadow_held_since(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t seq);
/* A receive (or a collective's output) wrote `len` bytes at `addr`, observed complete at
   position `done`: the recording holds these bytes there, and they may feed a reduction of
   elements of `type` (a format name: the message's MPI datatype; NULL: unknown). `posted`:
   where it was posted (0: not known). Bytes it overwrites that an earlier receive wrote and
   nothing has read since (no send, no computation, no copy or reduction the shadow proves
   by the phase's end) were read by the program before it was posted, however short the
   gap: that gap is then written as a computation (`fix`), so the earlier message is live. */
void rec_shadow_recv(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t done, uint64_t posted, const char *type,
                     rec_fix_fn fix, void *ctx);
/* rec_shadow_recv of the n ranges a[i], l[i] one message wrote (a datatype's blocks; type
   applies when n is 1; ranges of packing areas are skipped). Every range is noted, but only
   the last 1,024 are offered as candidates, as rec_shadow_recv of each would leave no more
   of them: the same recording, without the candidate bookkeeping of every block. */
void rec_shadow_recv_ranges(rec_shadow *sh, const uint64_t *a, const uint64_t *l, int64_t n, uint64_t done,
                            uint64_t posted, const char *type, rec_fix_fn fix, void *ctx);
/* The phase ends at position seq: every range the recording holds whose bytes changed
   since (computation after the last send) gets its reductions, copies or computations, so
   the recording's memory ends as the program's did, then the last gap's time is written.
   Ranges unmapped meanwhile are skipped, and ranges the program freed are no longer held
   (rec_shadow_forget); with proven_only, so are changes no reduction or copy explains (at
   MPI_Finalize, for buffers the program lost track of without freeing them). */
void rec_shadow_settle(rec_shadow *sh, uint64_t seq, int proven_only, rec_fix_fn fix, void *ctx);
/* The rank spent ns computing between its previous MPI call and the one at position seq
   (the first position that call takes): the first computation the shadow writes before seq
   carries it; if none does, rec_shadow_time_flush writes a computation of it that writes
   nothing, when it is at least the shadow's min_gap. Flushes the previous gap's first. */
void rec_shadow_time(rec_shadow *sh, uint64_t seq, uint64_t ns, rec_fix_fn fix, void *ctx);
void rec_shadow_time_flush(rec_shadow *sh, rec_fix_fn fix, void *ctx);
/* Writes the computation gathered from the blocks of one length that the sends at one
   position found computed (a buffer refilled block by block): the caller of
   rec_shadow_send calls it once the message's ranges are all checked. */
void rec_shadow_flush(rec_shadow *sh, rec_fix_fn fix, void *ctx);
/* n consecutive positions right after the completion at `done`, for local operations
   that must come before any the shadow adds there (unpacking a derived datatype); 0 if
   the completion has no room left. */
uint64_t rec_shadow_reserve(rec_shadow *sh, uint64_t done, uint32_t n);
/* Statistics: fixes of each kind so far. */
void rec_shadow_counts(const rec_shadow *sh, uint64_t counts[3]);
/* Out of memory so far: lost[0] content not kept (fewer inferences), lost[1] ranges
   forgotten (computation on them may go unrecorded). */
void rec_shadow_oom(const rec_shadow *sh, uint64_t lost[2]);
/* Bytes the arena's compactions copied so far (what keeping copies costs beyond taking them). */
uint64_t rec_shadow_moved(const rec_shadow *sh);
/* Bytes of memory the arena holds for copies, its spare chunks included. */
uint64_t rec_shadow_footprint(const rec_shadow *sh);

/* ---- merge.c ---- */

typedef struct {
  int nprocs;
  int nphases;            /* phase files written: distinct phases, or every phase (flat) */
  int flat_phases;        /* phases of the run (repeats counted) */
  int complete;           /* every process reached MPI_Finalize */
  uint64_t ops;           /* operations written, all phases */
  uint64_t unreceived;    /* sends no receive matched, left out */
  uint64_t unsent;        /* receives no send matched, written as computations */
  uint64_t computes;      /* computations written, all phases */
  uint64_t compute_ns;    /* their costs summed: the time recorded between MPI calls */
  uint64_t out_of_memory; /* what the processes lost to out of memory, every kind summed */
  uint64_t passive;       /* passive-target epochs of one rank on another placed at their targets */
  uint64_t target_computes; /* computations added at targets of passive-target gets: bytes the
                               target computed between two reads of them (merge.c) */
  uint64_t min_gap_ns;    /* the least gap between calls written as a computation (the
                             largest the parts name; 0: they name none) */
  int node_procs, node_cpus; /* the node with the most processes per CPU: its processes, the
                                CPUs they could run on (0 0: the parts name none) */
} rec_summary;

/* Merges DIR/rank-*.part into DIR/phase-NNNN.cdag and DIR/index.json. `command` (may be
   NULL) is recorded in the index. Progress and problems go to `log`. Returns CDAG_OK or a
   CDAG_ERR_* code with cdag_error_message() set. */
int rec_merge(const char *dir, const char *command, FILE *log, rec_summary *sum);
/* rec_merge with flags: REC_MERGE_WHOLE keeps a run without MPI_Pcontrol one phase (no
   phases found); REC_MERGE_FLAT writes every phase of the run to a file of its own, the
   repeats too (the flat recording, docs/recording.md), instead of each distinct phase once;
   REC_MERGE_FOLD_RANKS stores the ranks of a distinct phase folded (format.h: ir_ranks_fold)
   in runs of at least REC_RANKS_FOLD_MIN processes;
   REC_MERGE_NO_PASSIVE leaves out every passive-target epoch of one rank on another
   (counted with the reason), for a recording whose graph their targets' fences made a
   dependency cycle. */
enum { REC_MERGE_WHOLE = 1, REC_MERGE_FLAT = 2, REC_MERGE_FOLD_RANKS = 4, REC_MERGE_NO_PASSIVE = 8 };
int rec_merge_as(const char *dir, const char *command, FILE *log, int flags, rec_summary *sum);

/* ---- distinct.c: each distinct phase stored once, the run as their sequence ---- */

typedef struct { uint64_t ops, computes, ns; } rec_phase_sum;   /* operations, computations, their ns */
typedef struct rec_distinct rec_distinct;
/* Stores into dir; NULL when out of memory. */
rec_distinct *rec_distinct_new(const char *dir, const char *command, int nprocs, int fold_ranks);
void rec_distinct_free(rec_distinct *x);
int64_t rec_distinct_count(const rec_distinct *x);   /* distinct phases so far */
/* The run's next phase, as the text of its flat phase file: written as phase-NNNN.cdag if no
   earlier phase has its structure, else a repeat of the one that has. */
int rec_distinct_add(rec_distinct *x, const char *text, size_t len, const rec_phase_sum *sum);
/* index.json's "phases" array (the distinct phases), then its "flat_phases" and "sequence". */
int rec_distinct_json(rec_distinct *x, FILE *f);
/* index.json's "cdag_recording": 2 since tags vary between repeats. */
enum { REC_INDEX_VERSION = 2 };
/* A line [p, e) that is `compute COST reads all` (a gap's time alone); its cost. */
int rec_time_only_line(const char *p, const char *e, uint64_t *cost);

/* ---- expand.c: the index read back, the flat recording written ---- */

typedef struct {
  int64_t nphases;        /* distinct phases ... */
  const char **files;     /* ... their files (in DIR) */
  int64_t *ns;            /* ... the computation recorded in all their repeats, ns */
  int64_t nruns;          /* entries of the sequence: ... */
  int64_t *phase;         /* ... the distinct phase repeated ... */
  int64_t *repeats;       /* ... this many times */
  char *names;
} rec_index;
int rec_index_read(const char *dir, rec_index *ix);
void rec_index_free(rec_index *ix);
/* The command DIR/index.json names (malloc'd, the caller frees it), NULL when there is no
   index, it names none, or it cannot be read: a recording merged again keeps its command. */
char *rec_index_command(const char *dir);
/* Writes the flat recording of DIR into OUT (an existing directory): phase-NNNN.cdag for
   every phase of the run in order, as `cdag record --merge --flat` writes them; *nwritten
   files. */
int rec_expand(const char *dir, const char *out, int64_t *nwritten);

/* Distinct phases of runs of at least this many processes are stored folded (smaller runs'
   stay plain graph files, to read as they are). */
enum { REC_RANKS_FOLD_MIN = 16 };

/* ---- phases.c ---- */

/* One operation of a rank's stream, as phases.c sees it. */
typedef struct {
  uint64_t sym;      /* its structure: kind, size, peer relative to the rank, tag, what its wait
                        names relative to it; no address, no measured time */
  uint64_t lsym;     /* the same without sizes and a message's tag (a loop whose messages
                        shrink, or whose tag counts its iterations) */
  int64_t waited;    /* the index of the last wait that completes it, -1 none */
  int64_t pidx;      /* the operation that must stay in its phase (a message's other end, the
                        next member's instance of a collective), -1 none ... */
  int32_t prank;     /* ... on this rank */
  uint8_t start;     /* an intercepted call's first operation: a phase may start here */
} rec_pop;

/* Where the run repeats: *ncuts cuts of nprocs stream indices each (cuts[j * nprocs + r]:
   rank r's phase j + 1 starts at its operation of that index), non-decreasing; none when no
   unit repeats at least 4 times. No cut separates an operation from its pidx or from its
   wait. Units are found by sym and by lsym; lsym wins when its repeats cover more
   operations. *cuts is the caller's to free.
   O(n log n) for n operations. */
int rec_find_cuts(int nprocs, rec_pop *const *ops, const int64_t *nops, int64_t **cuts, int64_t *ncuts);

#endif

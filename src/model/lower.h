/* cdag — src/model/lower.h: a plan lowered back to point-to-point, plain GOAL, LogGP times.
 *
 * Lowering (lower.c): exec_lower_plan turns a plan (detect.h) into a global graph of sends,
 * receives, local copies and local reduces over the same ranks, in which every collective is
 * expanded by the algorithm the executor runs it with (pl->chosen if set, else
 * kern_choose_coll with the given model and policy):
 *   MPI's collective, as MPICH's usual choice: bcast, reduce, gather, scatter (and v-forms):
 *     binomial trees; allgather(v): Bruck's algorithm below 80 KiB in all, the ring above; alltoall(v): pairwise exchange; allreduce:
 *     recursive doubling (ranks beyond the largest power of two fold in first and get the
 *     result last); reduce_scatter(_block): pairwise (each member reduces its own block);
 *     barrier: dissemination (zero-byte messages);
 *   cdag's circulant kernels, round for round as the executor's (kernel_*.c, from the
 *     per-rank schedules of circulant.h): n-block bcast, reduce (the bcast's rounds
 *     backwards), allgather (q rounds of slot ranges), allgatherv (every member's bytes as n
 *     blocks, all broadcasts in the same rounds; a round's blocks to one neighbour are one
 *     message, packed and unpacked by staging copies where the kernel uses a datatype),
 *     allreduce as reduce + bcast from the first member, census allreduce (q rounds of whole
 *     vectors); the block count is the kernel's (the model's formula, or CDAG_BLOCKS).
 * Residual messages, residual reductions (contributions sent to the destination and
 * reduced there) and kept zero-byte syncs are kept. The result has the plan's meaning: every
 * read of an origin (a send from a single-piece slot, a pack copy of a slot in pieces) comes
 * before, in each rank's program order, every write of a final value: messages land in
 * staging memory (declared scratch, above every address of the plan: LOWER_STAGING_BASE
 * below) and one copy per final piece, emitted after everything else, moves the result
 * into place. Dependencies are those
 * of memory conflicts, so rounds order themselves through their buffers; each collective
 * uses its own tag (residual messages and syncs the next two).
 * A plan in stages (a graph that computes, src/stage) is lowered stage after stage, each as
 * above with tags of its own, and each computation becomes a calc of its cost on its rank
 * after the stage it follows (stage_compute.after, -1: before the first), in the steps'
 * order. Every rank runs the stages in order: an op of stage k + 1 requires the rank's last
 * computation after stage k, or a calc of 0 that requires every op of the rank in stage k;
 * the first computation after stage k requires those ops, each next one its predecessor.
 * Each stage is a conflict scope of its own (ir.h): that chain already orders a rank's
 * stages, so finalizing looks for memory conflicts within each stage only (the 299 stages of
 * a recording of 416,000 operations: 0.75 s less). So the lowered plan keeps causality, and its time includes the computations: never below
 * the longest chain of computations of one rank. Errors: CDAG_ERR_NOMEM, CDAG_ERR_ARG (a
 * kind/algorithm it cannot expand, a chain whose stages disagree), CDAG_ERR_UNSUPPORTED (no
 * room for staging memory above the plan's addresses). Cost O(output ops + p log p per
 * circulant collective + P per stage).
 *
 * The price (price.c): each candidate collective against its transfers as messages (for
 * detect), then the plan against the graph as written, all under the LogGOPS model; the plan
 * runs only when it is strictly faster (a tie keeps the program's messages).
 *
 * Critical path (calc_path.c): exec_calc_path, the heaviest chain of calcs along a graph's
 * dependencies and messages: the computation the graph as written waits for (a plan only
 * where no dependency of storage alone lies on that chain).
 *
 * GOAL export (goal.c): exec_goal_write writes a finalized graph as the plain GOAL that
 * LogGOPSim's txt2bin accepts: `num_ranks N`, one `rank R {` block per rank 0..N-1 in
 * order (empty ones too: txt2bin stops after rank N-1), labelled ops `lK: send Sb to D tag T`,
 * `recv Sb from S tag T`, `calc C` (a local copy or reduce is `calc` of its bytes times
 * copy_ns_per_byte, at least 1), then `lA requires lB` for every dependency (explicit or
 * from memory conflicts), after every op of the block so each label is defined. No
 * addresses, no cdag extensions.
 *
 * LogGOPS estimate (loggp.c): exec_loggp runs a finalized graph under LogGOPSim's rules
 * (loggp.c says which): separate send and receive gaps per NIC, o charged when a send
 * starts and when its message arrives, rendezvous above S bytes, several CPUs and NICs per
 * rank (`cpu N`, `nic N`), requires and irequires (start dependencies), calc in ns, a local
 * copy or reduce for bytes * copy. Times in microseconds, computed in integer picoseconds.
 * Event-driven with a heap: O((n + m) log n). */
#ifndef CDAG_MODEL_LOWER_H
#define CDAG_MODEL_LOWER_H

#include <stdio.h>

#include "detect/detect.h"
#include "choose/choose.h"

/* Staging memory of a lowered graph starts at LOWER_STAGING_BASE or, when the plan uses
   addresses above it (STAGE_TEMP_BASE, IR_COLL_SCRATCH, a recording's packing and opaque
   areas near 0x7ffd...), at the first LOWER_STAGING_PAGE boundary above the plan's highest
   address: it never overlaps an address of the plan, whatever the graph used. */
#define LOWER_STAGING_BASE (UINT64_C(1) << 60)
#define LOWER_STAGING_PAGE UINT64_C(4096)

/* Lowers pl into a new global graph *out (finalized). m: the model for choices and block
   counts (NULL: kern_model_default()); policy as kern_choose_coll. g: the graph pl was
   compiled from (finalized), whose plain calcs go into *out where they were relative to
   communication: a calc that depended on a send, receive, copy, reduce or computation
   (directly or through other calcs) runs after every op of its rank in *out; one that
   communication depended on, before them all; one with neither, unordered; dependencies
   between plain calcs are kept (a zero-cost calc per rank joins the rank's lowered ops). g's
   computations are not added: they are lowered with the plan's stages. Without them the plan
   would drop the plain calcs and model faster than it runs. NULL: no calcs. */
int exec_lower_plan(const cdag_plan *pl, const cdag_graph *g, const kern_model *m, kern_policy policy,
                    cdag_graph **out);
/* The same for a graph that is only modelled, never simulated (the price): a message's pieces
   that form a run at any stride are one strided copy. exec_lower_plan keeps a run's strides
   within 8 times its block length, since the simulator holds a strided copy's hull; a matrix
   column of a wide grid (8 B blocks 8 KiB apart) is then a copy per element. The bytes are the
   same; the modelled time may differ a little (the copies of a run are one operation, each
   CPU's copies in another order): the price and `cdag model` use this one throughout. */
int exec_lower_plan_modelled(const cdag_plan *pl, const cdag_graph *g, const kern_model *m, kern_policy policy,
                             cdag_graph **out);

/* The receive of every send of low, a graph exec_lower_plan made (calc ops added or not),
   as match_run pairs them, in *partner (low->nops entries, -1 for other ops; the caller
   frees it): lowering adds each send right before its receive, so no matching is needed.
   CDAG_ERR_ARG for a graph lowering did not make. O(ops). */
int exec_lower_pairs(const cdag_graph *low, int32_t **partner);

/* The candidates' judge for detect (det_pricer, price.c), pricing with km, policy and lp
   (copied into *x, which must outlive the pricer). */
typedef struct {
  kern_model km;
  kern_policy policy;
  loggp_params lp;
} model_price_ctx;
det_pricer model_pricer(model_price_ctx *x, const kern_model *km, kern_policy policy, const loggp_params *lp);

/* Weighs chosen plan p of g (the graph it was analysed from, finalized; written_us its time as
   written, exec_loggp_paired) under lp: p->chosen->price gets both times, and p->as_written becomes
   DET_WRITTEN_COST when the plan is not faster. A plan the model cannot lower keeps running and
   price.why says so (price.priced = 0). km and policy as exec_lower_plan. CDAG_OK, or
   CDAG_ERR_NOMEM, CDAG_ERR_ARG. O(n log n) in the plan's lowered ops. */
int model_price_plan(const cdag_graph *g, double written_us, cdag_plan *p, const kern_model *km, kern_policy policy,
                     const loggp_params *lp);

/* Writes finalized g as plain GOAL (see above). CDAG_ERR_IO if f fails, CDAG_ERR_NOMEM. */
int exec_goal_write(const cdag_graph *g, FILE *f, double copy_ns_per_byte);

/* loggp_params: choose.h. */

/* L 1.0, o 0.2, g 0.2, G 0.0002 (5 GB/s), O 0, S 65535 (LogGOPSim's), copy 0.0001 (10 GB/s). */
loggp_params loggp_defaults(void);
/* Why lp's table of costs by size is unusable (sizes not rising, times out of range), or
   NULL when it is fine or absent. */
const char *loggp_table_check(const loggp_params *lp);
/* The table and queue from measured streams of exchanges between two ranks (`cdag
   calibrate`), by inverting the model: in a stream of k exchanges of one size, all k
   receives posted at once and the latency hidden behind the k sends, each rank's CPU takes
   k pairs and the j-th message handled sees k - j + 1 receives waiting, so the stream takes
   E_k = k PAIR + queue k(k+1)/2; one exchange takes E_1 = ROUND. queue from streams of 16 and
   512 (E16, E512), a row from E_1 and E_k; each at least 0. */
double loggp_fit_queue(double e16, double e512);
void loggp_fit_row(double e1, double ek, int k, double queue, double *pair, double *round);
/* Completion time (max over ranks, us) of finalized g; *rank_max (may be NULL) gets the
   rank that finishes last. Errors of matching (CDAG_ERR_UNMATCHED, ...) as match.h. */
int exec_loggp(const cdag_graph *g, const loggp_params *p, double *time, int *rank_max);

/* exec_loggp with the pairing of sends and receives given (match_run's partner, or
   exec_lower_pairs'), not computed: for callers that have it already. */
int exec_loggp_paired(const cdag_graph *g, const int32_t *partner, const loggp_params *p, double *time,
                      int *rank_max);

/* The computation on g's critical path (calc_path.c): the heaviest chain of calcs (their
   costs in ns) along finalized g's dependencies and the messages of partner (match_run's
   or exec_lower_pairs'), in *us (microseconds). A lower bound of the graph's modelled time;
   a plan's time falls below it only where the chain runs through a dependency of storage
   alone (a write after a read or after a write), which moves no byte.
   CDAG_ERR_CYCLE if the edges form a cycle, CDAG_ERR_NOMEM. O(ops + dependencies). */
int exec_calc_path(const cdag_graph *g, const int32_t *partner, double *us);

#endif

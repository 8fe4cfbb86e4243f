/* cdag — src/exec/sim: the in-process simulator, the oracle of every correctness test.
 *
 * Runs a global graph in one process with one memory image per rank, in any order that
 * respects dependencies and matches (chosen by a seed), moving real bytes and applying real
 * reductions. It also runs a plan (detect.h) and applies SST tuples, so tests compare the
 * three byte for byte. It is deliberately simple: its own plain per-channel FIFO matching,
 * no Judy, no cleverness. Memory: per rank, the union of every address range the graph
 * touches, merged into regions; addresses outside them are not memory (an error).
 * Errors: CDAG_ERR_CYCLE (deadlock: ops remain but none can proceed; the message names
 * some of them), CDAG_ERR_UNMATCHED, CDAG_ERR_TRUNCATE, each naming rank and op. */
#ifndef CDAG_EXEC_SIM_H
#define CDAG_EXEC_SIM_H

#include "detect/detect.h"

typedef struct sim_mem sim_mem;

/* Memory covering every footprint of g (finalized or not). At most SIM_MAX_BYTES in all
   (CDAG_ERR_UNSUPPORTED, before anything is allocated): verify holds the initial image, the
   graph's, each order's and the plan's, and snapshots, several times the graph's bytes. */
#define SIM_MAX_BYTES ((uint64_t)1 << 30)
int sim_mem_create(const cdag_graph *g, sim_mem **m);
/* The same, covering the n ranges of extra too (a staged plan's staging buffers). */
int sim_mem_create_plus(const cdag_graph *g, const stage_range *extra, int64_t n, sim_mem **m);
/* CDAG_OK when g's memory fits the simulator (what sim_mem_create checks), without allocating
   it: a caller refuses a graph before analysing it. O(n log n). */
int sim_mem_check_size(const cdag_graph *g);
int sim_mem_clone(const sim_mem *m, sim_mem **copy);
void sim_mem_free(sim_mem *m);
int sim_mem_nprocs(const sim_mem *m);
/* Total bytes of all regions (scratch included). */
uint64_t sim_mem_bytes(const sim_mem *m);
/* The bytes of m outside g's scratch (finalized g: its merged scratch intervals). */
uint64_t sim_mem_bytes_outside_scratch(const sim_mem *m, const cdag_graph *g);
/* A view of m: the same regions, sharing m's bytes (no copy). Before m's bytes [addr, +len) of
   rank change, sim_mem_keep gives the view's regions holding them copies of their bytes as
   they are then, so the view keeps m as it was when made: a plan's stage reads its origins
   from such a snapshot and copies only the regions it writes (the whole memory at every
   stage of a 120-stage recording was 82 % of verify's time). Free the view before m. */
int sim_mem_view(const sim_mem *m, sim_mem **view);
int sim_mem_keep(sim_mem *view, const sim_mem *m, int rank, uint64_t addr, uint64_t len);
/* Deterministic pseudo-random contents. */
void sim_mem_fill_random(sim_mem *m, uint64_t seed);
/* Pointer to rank's bytes [addr, addr+len) if they lie in one region, else NULL. */
uint8_t *sim_mem_at(sim_mem *m, int rank, uint64_t addr, uint64_t len);
/* CDAG_OK if a and b are equal everywhere except scratch of g (skip_scratch=1); otherwise
   CDAG_ERR_MISMATCH with a message naming the first differing rank and address (and both
   values, a's first). skip_scratch needs a finalized g. */
int sim_mem_compare(const sim_mem *a, const sim_mem *b, const cdag_graph *g, int skip_scratch);
/* Bytes where a plan may leave -0.0 for +0.0: the results of complex products (rank, [lo, hi),
   scalars of `width` bytes from lo: 4, 8, or 16 for an x87 long double). */
typedef struct {
  int32_t rank;
  uint32_t width;
  uint64_t lo, hi;
} sim_zeros;
/* sim_mem_compare, but a byte inside one of z[0..nz) (sorted by rank and lo, disjoint) that is
   the sign of a scalar zero, -0.0 in one image and +0.0 in the other, counts as equal. */
int sim_mem_compare_zeros(const sim_mem *a, const sim_mem *b, const cdag_graph *g, int skip_scratch, const sim_zeros *z,
                          int64_t nz);

/* Computation i of st on m (sim_compute.c): its output is a hash of the bytes it reads, as
   they are when it runs (reading all: the ranges since the rank's previous such computation,
   chained through chain[rank] to every earlier one), so that a plan that runs it before a
   transfer it reads, or drops such a transfer, leaves other bytes. */
int sim_compute(const stage_steps *st, int64_t i, sim_mem *m, uint64_t *chain);
/* The hash sim_compute is made of, for the MPI runtime (exec/mpi) to compute alike on real
   memory: h = seed(op); per range read h = bytes(mix(h, addr), bytes, len); a computation
   that reads all mixes the rank's chain first and leaves h as the new chain; spread(h)
   fills the bytes written from splitmix64's stream from h, 4 bits a byte: 0x38 + a nibble,
   so that a float or double read from them is a positive number of moderate size, as in
   `cdag replay`'s initial content (tools/replay_mem.c): sums and products of such values
   neither overflow nor cancel, whatever their order. */
uint64_t sim_hash_seed(int64_t op);
uint64_t sim_hash_mix(uint64_t h, uint64_t v);
uint64_t sim_hash_bytes(uint64_t h, const uint8_t *b, uint64_t len);
void sim_hash_spread(uint64_t h, uint8_t *b, uint64_t len);

/* Runs g on m; g must be finalized (ir_finalize; CDAG_ERR_STATE otherwise). Matching is its
   own per-channel FIFO (independent of src/match); a send takes its data when it runs and
   its receive, once it may run, gets those bytes (match.h's buffered semantics; a larger
   receive gets only the sent bytes, a send to self is a copy). order_seed 0: always the
   first ready op; other seeds: random valid orders. A deadlock names the ops of one cycle.
   Cost O(n log n + m) for n ops and m dependencies, plus the bytes moved. */
int sim_run_graph(const cdag_graph *g, sim_mem *m, uint64_t order_seed);
/* Applies the SST to m (reads a snapshot of m, writes finals). */
int sim_apply_sst(const df_sst *s, sim_mem *m);
/* Runs the plan on m with its collective semantics (detect.h), from a snapshot of m; a
   plan in stages runs stage after stage, each from its own snapshot, with its computations
   (sim_compute) before the first stage and after each.
   CDAG_ERR_PLAN names the collective (or message) if the plan breaks detect.h's rules:
   slot counts of its kind, sorted distinct members, root a member, slot bytes equal to
   their pieces and send/recv slots of equal size, root-only slots empty elsewhere, messages
   grouping their transfers, no byte written twice; CDAG_ERR_ARG for an address outside m. */
int sim_run_plan(const cdag_plan *p, sim_mem *m);
/* Runs the graphs of a graph's stages (stage_cut; each finalized) on m, stage after stage in
   the first order, with the computations of st before the first stage and after each: what
   the graph does, cut as its staged plan is. */
int sim_run_stages(cdag_graph *const *stage, int32_t nstages, const stage_steps *st, sim_mem *m);
/* Computes one reduction tuple (sets of sst) from the snapshot snap into m. */
int sim_reduce_tuple(const df_sst *sst, const df_red *d, sim_mem *m, const sim_mem *snap);
/* Verifies a plan: memory for g filled from seed; the graph is run in `orders` random
   orders (all must agree, else the graph has a race) and the plan once; every non-scratch
   byte must be equal. CDAG_ERR_MISMATCH with the first difference otherwise (also when the
   graph's own orders disagree); CDAG_ERR_PLAN for a plan that breaks its rules. g finalized. */
int exec_verify(const cdag_graph *g, const cdag_plan *p, uint64_t seed, int orders);
/* The same; *compared (may be NULL) gets the number of non-scratch bytes compared. */
int exec_verify_bytes(const cdag_graph *g, const cdag_plan *p, uint64_t seed, int orders, uint64_t *compared);

#endif

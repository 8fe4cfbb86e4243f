/* cdag — src/exec/mpi/replay.h: running one rank of a global graph as a distributed graph.
 *
 * A global graph (a file: cdag's own, GOAL, a recording) names addresses of every rank's
 * own address space, as plain integers. To run it with MPI, each process takes its rank's
 * operations and gives them real memory: one block per rank holding, packed, every address
 * range the rank's operations touch (overlapping and touching ranges merged, each placed at
 * its file address modulo 64, so element alignment is what the file had). Every process
 * computes every rank's map from the same file.
 *
 * replay_map_build: every rank's map, from a finalized global graph. O(n log n) for n ops.
 * replay_copy_rank: rank g->myrank's operations of the global graph, in its program order,
 *   added to the distributed graph g with pointers into that rank's block: sends, receives,
 *   local reduces and copies, calcs, scratch regions, explicit dependencies, labels, waits
 *   (the `wait` field and statement), the communicators and native collective calls (g
 *   writes each call out again, with scratch of its own), and the one-sided accesses as the
 *   messages, copies and reduces finalizing the file expanded them to, on both sides, in the
 *   file's places (fences: nothing). Start dependencies (`irequires`) are not
 *   copied: they order no memory effect and a distributed graph cannot hold them. An
 *   operation of a kind it does not know is CDAG_ERR_UNSUPPORTED naming it
 *   (ir_describe), never skipped. O(n) for the rank's n ops.
 * The replay_mpi_* functions are the MPI calls of the `cdag replay` command (tools may not
 * call MPI themselves: scripts/check-layout.sh). */
#ifndef CDAG_EXEC_MPI_REPLAY_H
#define CDAG_EXEC_MPI_REPLAY_H

#include "ir/ir.h"

/* Rank r's ranges are [start[r], start[r + 1]): [lo, lo + len) of the file lies at
   [off, off + len) of r's block (off % 64 == lo % 64), sorted by lo, disjoint, not touching. */
typedef struct {
  int32_t nprocs;
  int64_t *start;       /* nprocs + 1 */
  uint64_t *lo, *len, *off;
  uint64_t *size;       /* nprocs: bytes of each rank's block */
} replay_map;

/* Every rank's map from gg (finalized): the footprints of all its ops, the target sides of
   one-sided ops included, the in and out buffers of its native collective calls (a gather
   root's out holds a block per member, ...) and its scratch regions. CDAG_ERR_NOMEM, CDAG_ERR_STATE (gg not
   finalized); *m is zeroed first (replay_map_free it, also on error). */
int replay_map_build(const cdag_graph *gg, replay_map *m);
void replay_map_free(replay_map *m);
/* The offset in rank r's block of file address [addr, addr + len): CDAG_OK, or CDAG_ERR_ARG
   if the range is not inside one range of the map. A range of 0 bytes anywhere is fine
   (offset 0 when no range holds it: it touches nothing). */
int replay_map_offset(const replay_map *m, int r, uint64_t addr, uint64_t len, uint64_t *off);

/* Copies rank g->myrank of gg (finalized, g->nprocs ranks) into g (a distributed graph of no
   ops yet) with block as that rank's memory (m->size[g->myrank] bytes). Computations have
   no function there: a schedule writes the simulator's hash of what they read and spends
   their cost (compute_time 1, `--compute=recorded`) or nothing (0, `--compute=none`), or are
   left out (-1, `--compute=skip`: calcs of 0, no memory effect). */
int replay_copy_rank(const cdag_graph *gg, const replay_map *m, uint8_t *block, cdag_graph *g, int compute_time);

/* The byte every replay starts from at `addr` of `rank` (small values, so integer sums of
   many stay exact). A program that fills its buffers with it before a recorded phase ends
   with the bytes the recording's replay computes (tests/record). */
uint8_t replay_fill_byte(int rank, uint64_t addr);

/* ---- the MPI side of `cdag replay` ---- */

/* MPI_Init unless MPI is up already (*started: whether this call started it); this
   process's rank and the world's size. */
int replay_mpi_init(int *started, int *rank, int *nprocs);
/* MPI_Finalize when started (replay_mpi_init's *started). */
void replay_mpi_finalize(int started);
/* An empty distributed graph on MPI_COMM_WORLD. */
int replay_graph_create(cdag_graph **g);
/* Every rank returns the error of the lowest failing rank, with its message. */
int replay_agree(int rc);
/* The processes of this run on this node (MPI_COMM_TYPE_SHARED); collective. */
int replay_node_size(void);
/* cdag_compile behind a barrier: *seconds is the slowest rank's time. */
int replay_compile(cdag_graph *g, const cdag_options *o, cdag_schedule **s, double *seconds);
/* iters runs of s behind a barrier: *seconds is the slowest rank's time per run. */
int replay_time_runs(cdag_schedule *s, int iters, double *seconds);
/* Timing that a busy machine cannot swing: `repeat` rounds, each timing every schedule
   s[0..nmodes) in turn with replay_time_runs (iters runs); per schedule the best and the
   median of its rounds' seconds per run, in out[k] (the same on every rank). */
typedef struct {
  double best, median;
} replay_timing;
int replay_time_modes(cdag_schedule *const *s, int nmodes, int iters, int repeat, replay_timing *out);
/* The sum over ranks of v (counts for the summary). */
uint64_t replay_sum(uint64_t v);

#endif

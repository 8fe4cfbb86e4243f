/* cdag — tools/replay_mem.h: the memory `cdag replay` runs a graph on, fills and compares.
 *
 * One rank's block (exec/mpi/replay.h: the file's touched ranges, packed) gets content that
 * depends only on (rank, file address), so every run starts from the same bytes. After the
 * run as written and the compiled run, every byte of the file's ranges must be equal, except
 * scratch and the elements a floating-point sum or product ends in (the SST's reductions of
 * the rank): a compiled schedule may combine those in another order, as MPI's collectives
 * do, so they are compared as values within a relative tolerance that grows with the number
 * of values combined. Plain C: the tool's MPI calls are in exec/mpi/replay.c. */
#ifndef CDAG_TOOLS_REPLAY_MEM_H
#define CDAG_TOOLS_REPLAY_MEM_H

#include <stdio.h>

#include "exec/mpi/replay.h"

/* What the comparison does with each byte of the block. */
enum { RM_SKIP = 0, RM_BYTE = 1, RM_VALUE = 2 };

/* A floating-point element that is the final value of a reduction. */
typedef struct {
  uint64_t off, addr;    /* in the block; in the file */
  int type;              /* CDAG_FLOAT, CDAG_DOUBLE, CDAG_COMPLEX_*, CDAG_LONG_DOUBLE (compared as a double) */
  int op;                /* CDAG_SUM or CDAG_PROD; another op: a value computed from such (a max over sums) */
  int64_t n;             /* values it combines */
} rm_value;

typedef struct {
  int rank;
  const replay_map *map;
  uint64_t size;         /* bytes of the block */
  uint8_t *mask;         /* per byte of the block: RM_* */
  rm_value *vals;
  int64_t nvals, cap_vals;
  int64_t noverflow;     /* of them, overflowed in one order or both at the last compare: not compared */
  uint64_t nbytes;       /* bytes compared exactly */
  uint64_t *unh;         /* (off, len) pairs of the block: floating-point sums and products
                            written before the end too (native calls' outputs, local reduces) */
  int64_t nunh, cap_unh;
} replay_mem;

/* What to compare on `rank`: its ranges, less scratch, less floating-point reduction results
   (matching and SST of gg, finalized: their errors name op and line). Zeroes *rm first;
   rm_free it, also on error. */
int rm_build(const cdag_graph *gg, const replay_map *map, int rank, replay_mem *rm);
void rm_free(replay_mem *rm);
/* The floating-point reduction results, in block (the memory of g, the rank's distributed
   graph), made g's unhashed ranges (ir.h): their last bits depend on the order a schedule
   reduces in, so the computations that read them hash the rest, and a difference within the
   tolerance does not spread through every later computation's output. */
int rm_unhashed(const replay_mem *rm, const uint8_t *block, cdag_graph *g);
/* The content every run starts from (the bytes between ranges are zero). */
void rm_fill(const replay_mem *rm, uint8_t *block);
/* CDAG_OK, or CDAG_ERR_MISMATCH: the first differences (rank, file address, both values)
   are printed to err, the message counts them; rm->noverflow counts the values not compared. */
int rm_compare(replay_mem *rm, const uint8_t *written, const uint8_t *compiled, FILE *err);
/* The test hook (CDAG_REPLAY_CORRUPT): flips a bit of the last compared byte (the top byte
   of an element, where there are elements). 0 if nothing is compared on this rank. */
int rm_corrupt(const replay_mem *rm, uint8_t *block);

#endif

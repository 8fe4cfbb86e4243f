/* cdag — src/workload/redistribute.h: M:N block-cyclic redistribution as graph operations.
 *
 * Input: two cdag_layouts of one M x N matrix (cdag.h), the element size and a rank.
 * Output: the rank's runs (contiguous pieces, byte offsets into its local arrays) to send
 * (peer = destination; peer == rank: a local copy) and to receive (peer = source, never the
 * rank itself), grouped by peer in increasing rank order and, within a peer, in column-major
 * global order, so a sender's k-th run to d is d's k-th run from it. ir_add_redistribute
 * turns them into sends, receives and copies (tag CDAG_REDISTRIBUTE_TAG). Cost: linear in
 * the runs produced plus O(local blocks of one period) per dimension (redistribute.c).
 * Errors: CDAG_ERR_ARG for a bad layout or element size, CDAG_ERR_NOMEM. */
#ifndef CDAG_WORKLOAD_REDISTRIBUTE_H
#define CDAG_WORKLOAD_REDISTRIBUTE_H

#include "ir/ir.h"

/* Runs of one side, struct of arrays: run k moves bytes[k] bytes between byte src[k] of the
   source rank's local array and byte dst[k] of the destination rank's. */
typedef struct {
  int64_t n, cap;
  int32_t *peer;
  uint64_t *src, *dst, *bytes;
  int64_t steps;           /* ASPEN's operation count: block pieces examined, one period */
} rd_runs;

/* Checks one layout against a graph of nprocs ranks; `fn` and `which` name it in messages. */
int rd_check_layout(const cdag_layout *l, int nprocs, const char *fn, const char *which);
/* Local rows and columns of grid process (i, j); the leading dimension in *lld. */
void rd_local_shape(const cdag_layout *l, int i, int j, int64_t *rows, int64_t *cols, int64_t *lld);
/* Grid coordinates of rank in l; 0 if the rank is not in the grid. */
int rd_coords(const cdag_layout *l, int rank, int *i, int *j);
/* Fills *send (rank as source) and *recv (rank as destination); both start zeroed and are
   freed with rd_runs_free. The layouts must have passed rd_check_layout. */
int rd_build(const cdag_layout *from, const cdag_layout *to, uint64_t elem, int rank, rd_runs *send, rd_runs *recv);
void rd_runs_free(rd_runs *r);
/* ASPEN's work alone: the chunks examined to find rank's families in both dimensions, as a
   process of own towards oth (0 outside the grid), without writing any run (benchmarks). */
int rd_steps(const cdag_layout *own, const cdag_layout *oth, int rank, int64_t *steps);
/* Adds rank's operations to g (global or distributed): src and dst are its arrays'
   addresses. `fn` names the public call in messages. */
int ir_add_redistribute(cdag_graph *g, const char *fn, int rank, const cdag_layout *from, uint64_t src,
                        const cdag_layout *to, uint64_t dst, uint64_t elem);

#endif

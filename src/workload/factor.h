/* cdag — src/workload/factor.h: the communication of a 2.5D LU or Cholesky factorisation.
 *
 * wl_factor25d builds the global graph of one factorisation of an N x N matrix of doubles on
 * P = s*s*c processes (c layers of an s x s grid, blocks of v x v), as COnfLUX / COnfCHOX
 * write it by hand: messages and local reductions (factor.c says which, step by step), and
 * states the seed's lower bound on bytes received per process (the graph's `bound`).
 * c = 0: the largest c <= P^(1/3) with P / c a square; v = 0: about 8 s steps. Cost: O(P)
 * operations per step, N / v steps, bounded by WL_FACTOR_MAX_OPS. Errors: CDAG_ERR_ARG naming
 * the shape that does not fit (N, P, C, v), CDAG_ERR_NOMEM. */
#ifndef CDAG_WORKLOAD_FACTOR_H
#define CDAG_WORKLOAD_FACTOR_H

#include "ir/ir.h"

#define WL_FACTOR_MAX_N ((int64_t)1 << 40)   /* matrix order */
#define WL_FACTOR_MAX_P (1 << 24)            /* processes */
#define WL_FACTOR_MAX_OPS ((int64_t)1 << 22) /* steps times processes (the graph has 8 to 50 ops per
                                                 such pair: at most about 200 M ops, 10 GB) */

int wl_factor25d(int cholesky, int64_t n, int64_t p, int64_t c, int64_t v, cdag_graph **out);

#endif

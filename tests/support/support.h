/* cdag tests — tests/support/support.h: graph generators and helpers shared by the tests
 * and bench/. Each generator file (gen_<what>.c) declares its functions here. */
#ifndef CDAG_TESTS_SUPPORT_H
#define CDAG_TESTS_SUPPORT_H
#include "ir/ir.h"


/* ---- support.c ---- */
/* Does a note of plan p's report contain text? */
int cdag_test_noted(const cdag_plan *p, const char *text);

/* ---- gen_random.c ---- */
typedef struct {
  int nprocs;        /* 0: random 1..8 */
  int steps;         /* 0: random 4..43 */
  int reduce_mode;   /* -1: random; 1: int32 reduces, everything 4-byte aligned; 0: bytes */
  int rank_by_rank;  /* 1: add each rank's ops together, ranks in random order, so op ids
                        do not follow dependencies (same graph, other ids) */
  int computes;      /* 1: about one step in four is a computation (reading all or a range,
                        writing a range or nothing) */
} gen_random_opts;
/* A random valid (matchable, deadlock-free) global graph; same seed, same graph. */
int gen_random_graph(uint64_t seed, const gen_random_opts *o, cdag_graph **g);

/* ---- gen_patterns.c: collectives written with point-to-point messages ---- */
typedef struct {
  int first, stride, n;   /* members: ranks first, first+stride, ... (n of them) */
} gen_set;
typedef struct {
  uint64_t data, out, scratch;  /* per-rank buffers: input, output, scratch area */
  int tag;
} gen_bufs;
int gen_bcast_binomial(cdag_graph *g, const gen_set *s, int root, uint64_t bytes, const gen_bufs *b);
int gen_bcast_linear(cdag_graph *g, const gen_set *s, int root, uint64_t bytes, const gen_bufs *b);
int gen_bcast_chain(cdag_graph *g, const gen_set *s, int root, uint64_t bytes, int k, const gen_bufs *b);
int gen_allgather_ring(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b);
int gen_alltoall_linear(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b);
int gen_alltoall_butterfly(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b); /* n = 2^k */
int gen_gather_linear(cdag_graph *g, const gen_set *s, int root, uint64_t block, const gen_bufs *b);
int gen_scatter_linear(cdag_graph *g, const gen_set *s, int root, uint64_t block, const gen_bufs *b);
int gen_gather_binomial(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b);  /* root member 0 */
int gen_allreduce_recursive_doubling(cdag_graph *g, const gen_set *s, uint64_t count, const gen_bufs *b); /* n = 2^k */
int gen_allreduce_recursive_doubling_by_rank(cdag_graph *g, const gen_set *s, uint64_t count, const gen_bufs *b); /* n = 2^k */
int gen_allreduce_linear(cdag_graph *g, const gen_set *s, int root, uint64_t count, int op, const gen_bufs *b);
int gen_halo1d(cdag_graph *g, const gen_set *s, uint64_t bytes, const gen_bufs *b);
int gen_barrier_dissemination(cdag_graph *g, const gen_set *s, const gen_bufs *b);
int gen_bcast_scatter_allgather(cdag_graph *g, const gen_set *s, int root, uint64_t bytes, const gen_bufs *b);
int gen_scatter_binomial(cdag_graph *g, const gen_set *s, int root, uint64_t block, const gen_bufs *b);
int gen_alltoall_bruck(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b);
int gen_allgather_bruck(cdag_graph *g, const gen_set *s, uint64_t block, const gen_bufs *b);
int gen_allreduce_ring(cdag_graph *g, const gen_set *s, uint64_t count, const gen_bufs *b); /* n*count int32 */
int gen_halo2d(cdag_graph *g, int rows, int cols, uint64_t bytes, const gen_bufs *b); /* periodic torus */

#endif

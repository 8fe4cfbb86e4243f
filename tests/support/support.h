/* cdag tests — tests/support/support.h: graph generators and helpers shared by the tests
 * and bench/. Each generator file (gen_<what>.c) declares its functions here. */
#ifndef CDAG_TESTS_SUPPORT_H
#define CDAG_TESTS_SUPPORT_H
#include "ir/ir.h"


/* ---- gen_random.c ---- */
typedef struct {
  int nprocs;        /* 0: random 1..8 */
  int steps;         /* 0: random 4..43 */
  int reduce_mode;   /* -1: random; 1: int32 reduces, everything 4-byte aligned; 0: bytes */
} gen_random_opts;
/* A random valid (matchable, deadlock-free) global graph; same seed, same graph. */
int gen_random_graph(uint64_t seed, const gen_random_opts *o, cdag_graph **g);

#endif

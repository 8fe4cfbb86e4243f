/* cdag — src/dataflow/dataflow_int.h: private structures of the dataflow stage. */
#ifndef CDAG_DATAFLOW_INT_H
#define CDAG_DATAFLOW_INT_H

#include <Judy.h>

#include "dataflow/dataflow.h"

/* Interned reduction source sets (sets.c). */
typedef struct {
  df_set *sets;     int64_t nsets, setcap;
  int32_t *chain;   /* next set with the same hash, -1 none */
  df_run *runs;     int64_t nruns, runcap;
  Pvoid_t by_hash;  /* JudyL: hash -> 1 + first set id with that hash */
  df_run *tmp_in, *tmp_out;
  int64_t ntmp_in, tmp_in_cap, ntmp_out, tmp_out_cap;
  struct df_event *ev;  int64_t evcap;  /* the sweep's events, kept between unions */
  int32_t cap_runs;     /* DF_CAP_SETS: a union of more runs is one opaque run (0: no cap) */
} df_sets;

/* One operand of a combination: a single origin (set < 0: rank, addr) or an interned set
   whose every run address is shifted by addr. */
typedef struct {
  int32_t set, rank;
  uint64_t addr;
} df_operand;

/* The set of a reduction with op rop (cdag_reduce_op, or a user op) of a and b. A value that
   would count more than DF_MULT_MAX times (a buffer reduced onto itself, again and again)
   fails with CDAG_ERR_UNSUPPORTED; ops whose repeats collapse (min, max, the bitwise and
   logical ones: x op x op x is x op x; xor: x xor x is nothing) never do. */
enum { DF_MULT_MAX = 1 << 16 };
int df_sets_union(df_sets *s, const df_operand *a, const df_operand *b, int rop, int32_t *id);
/* The set equal to `set` with every address shifted by `shift`. */
int df_sets_shift(df_sets *s, int32_t set, uint64_t shift, int32_t *id);
void df_sets_free(df_sets *s);

/* Wait sets (waitsets.c): fills s->wait_* from the graph and its matching. */
int df_waitsets(const cdag_graph *g, const match_result *m, df_sst *s);

#endif

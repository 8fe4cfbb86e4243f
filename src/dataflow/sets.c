/* cdag — src/dataflow/sets.c: interned reduction source sets.
 *
 * A set is a canonical, sorted list of runs (ranks lo..hi each contributing the element at
 * addr, mult times): overlapping runs of one addr have their multiplicities added, adjacent
 * runs with equal addr and mult are merged, and the runs are then sorted by (lo, hi, addr),
 * so equal multisets have equal run lists. Rank order, not address order, because every
 * reader that combines a set (the runtime, the simulator, the price) takes its values in
 * the set's order: by address, a floating-point sum of the same graph changed its last bits
 * from run to run, as the ranks' address spaces happened to fall. Sets are interned by a 64-bit hash (JudyL from hash to
 * the first set with that hash, chained), so each distinct set is stored once and compared
 * by id. Building a set from k runs costs O(k log k). With a cap (DF_CAP_SETS), a set of
 * more runs is only its count of values (opaque). */
#include <stdlib.h>
#include <string.h>

#include "dataflow/dataflow_int.h"

/* Runs by address (the sweep's grouping), and by rank (the stored order). */
static int run_cmp(const void *x, const void *y) {
  const df_run *a = x, *b = y;
  if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  return (a->hi > b->hi) - (a->hi < b->hi);
}
static int rank_cmp(const void *x, const void *y) {
  const df_run *a = x, *b = y;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
  return (a->addr > b->addr) - (a->addr < b->addr);
}

/* The swept runs in rank order (one addr's runs are disjoint, so the order is total). */
static void by_rank(df_sets *s) {
  for (int64_t i = 1; i < s->ntmp_out; i++)
    if (rank_cmp(&s->tmp_out[i - 1], &s->tmp_out[i]) > 0) {
      base_sort(s->tmp_out, (size_t)s->ntmp_out, sizeof *s->tmp_out, rank_cmp);
      return;
    }
}

/* Multiplicity change points of one addr's runs, swept in rank order. */
typedef struct df_event {
  int64_t rank;
  int64_t delta;
} df_event;

static int event_cmp(const void *x, const void *y) {
  const df_event *a = x, *b = y;
  return (a->rank > b->rank) - (a->rank < b->rank);
}

static int push_run(df_sets *s, int32_t lo, int32_t hi, uint32_t mult, uint64_t addr) {
  BASE_GROW(s->tmp_out, s->ntmp_out, s->tmp_out_cap, 1, "reduction sets");
  df_run *last = s->ntmp_out ? &s->tmp_out[s->ntmp_out - 1] : NULL;
  if (last && last->addr == addr && last->mult == mult && last->hi + 1 == lo) {
    last->hi = hi;
    return CDAG_OK;
  }
  s->tmp_out[s->ntmp_out++] = (df_run){.lo = lo, .hi = hi, .mult = mult, .addr = addr};
  return CDAG_OK;
}

/* How many times a value counted m times (m > 0) counts in a reduction with op rop, the
   bytes unchanged: an idempotent op's repeats collapse to two (x op x is a fixed point, but
   not always x: a logical and gives 0 or 1, a long double loses its padding), a bitwise
   exclusive or's to their parity (two for an even count: the value cancels, its dependency
   stays), a logical one's to two or three (x lxor x lxor x is 0 or 1, not x). Else m (0:
   more than DF_MULT_MAX). */
static int64_t repeats(int rop, int64_t m) {
  if (rop >= 0 && ir_rop_idempotent(rop)) return m < 2 ? m : 2;
  if (rop == CDAG_BXOR) return 2 - (m & 1);
  if (rop == CDAG_LXOR) return m <= 3 ? m : 3 - (m & 1);
  return m > DF_MULT_MAX ? 0 : m;
}

/* Canonicalises runs[0..n) (of one addr) into tmp_out using a sweep over events; rop < 0:
   multiplicities as they are (a shift). */
static int sweep_addr(df_sets *s, const df_run *runs, int64_t n, int rop, df_event *ev) {
  for (int64_t i = 0; i < n; i++) {
    ev[2 * i] = (df_event){runs[i].lo, (int64_t)runs[i].mult};
    ev[2 * i + 1] = (df_event){(int64_t)runs[i].hi + 1, -(int64_t)runs[i].mult};
  }
  base_sort(ev, (size_t)(2 * n), sizeof *ev, event_cmp);
  int64_t mult = 0;
  for (int64_t i = 0; i < 2 * n;) {
    int64_t at = ev[i].rank;
    while (i < 2 * n && ev[i].rank == at) mult += ev[i++].delta;
    if (mult > 0 && i < 2 * n) {
      int64_t m = rop < 0 ? mult : repeats(rop, mult);
      if (!m)
        return cdag__error(CDAG_ERR_UNSUPPORTED, "a reduction (%s) would count a value of rank %lld more than %d "
                           "times (a buffer reduced onto itself again and again)",
                           ir_rop_name(rop) ? ir_rop_name(rop) : "a user op", (long long)at, DF_MULT_MAX);
      int rc = push_run(s, (int32_t)at, (int32_t)(ev[i].rank - 1), (uint32_t)m, runs[0].addr);
      if (rc) return rc;
    }
  }
  return CDAG_OK;
}

static uint64_t hash_runs(const df_run *r, int64_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n;
  for (int64_t i = 0; i < n; i++) {
    uint64_t v[3] = {(uint64_t)(uint32_t)r[i].lo << 32 | (uint32_t)r[i].hi, r[i].addr, r[i].mult};
    for (int k = 0; k < 3; k++) {
      h ^= v[k] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      h *= 0xff51afd7ed558ccdULL;
    }
  }
  return h ^ (h >> 33);
}

/* Field by field: df_run has padding, which memcmp would read. */
static int runs_equal(const df_run *a, const df_run *b, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (a[i].lo != b[i].lo || a[i].hi != b[i].hi || a[i].mult != b[i].mult || a[i].addr != b[i].addr) return 0;
  return 1;
}

/* Finds the interned set equal to tmp_out, or adds it. */
static int intern(df_sets *s, int32_t *id) {
  uint64_t h = hash_runs(s->tmp_out, s->ntmp_out);
  PWord_t pv = (PWord_t)JudyLIns(&s->by_hash, (Word_t)h, PJE0);
  if (pv == PJERR) return CDAG_NOMEM("reduction sets");
  for (int32_t k = (int32_t)*pv - 1; k >= 0; k = s->chain[k]) {
    const df_set *e = &s->sets[k];
    if (e->nruns == s->ntmp_out && runs_equal(s->runs + e->first, s->tmp_out, e->nruns)) {
      *id = k;
      return CDAG_OK;
    }
  }
  if (s->nsets == s->setcap) {
    int64_t cap = base_grown_cap(s->setcap, 1);
    if (base_resize((void **)&s->sets, s->nsets, cap, sizeof *s->sets, "reduction sets") ||
        base_resize((void **)&s->chain, s->nsets, cap, sizeof *s->chain, "reduction sets"))
      return CDAG_ERR_NOMEM;
    s->setcap = cap;
  }
  BASE_GROW(s->runs, s->nruns, s->runcap, s->ntmp_out, "reduction sets");
  int64_t contrib = 0;
  for (int64_t i = 0; i < s->ntmp_out; i++)
    contrib += (int64_t)(s->tmp_out[i].hi - s->tmp_out[i].lo + 1) * s->tmp_out[i].mult;
  memcpy(s->runs + s->nruns, s->tmp_out, (size_t)s->ntmp_out * sizeof(df_run));
  *id = (int32_t)s->nsets;
  s->sets[s->nsets] = (df_set){.first = s->nruns, .nruns = (int32_t)s->ntmp_out, .ncontrib = contrib, .hash = h};
  s->chain[s->nsets] = (int32_t)*pv - 1;
  *pv = (Word_t)s->nsets + 1;
  s->nruns += s->ntmp_out;
  s->nsets++;
  return CDAG_OK;
}

/* Canonicalises and interns the runs in tmp_in[0..ntmp_in) (rop: as sweep_addr). */
static int finish(df_sets *s, int rop, int32_t *id) {
  int64_t n = s->ntmp_in;
  base_sort(s->tmp_in, (size_t)n, sizeof *s->tmp_in, run_cmp);
  BASE_GROW(s->ev, 0, s->evcap, 2 * n + 1, "reduction sets");
  df_event *ev = s->ev;
  s->ntmp_out = 0;
  int rc = CDAG_OK;
  for (int64_t i = 0; i < n && rc == CDAG_OK;) {
    int64_t j = i;
    while (j < n && s->tmp_in[j].addr == s->tmp_in[i].addr) j++;
    rc = sweep_addr(s, s->tmp_in + i, j - i, rop, ev);
    i = j;
  }
  if (rc == CDAG_OK) by_rank(s);
  return rc ? rc : intern(s, id);
}

static int add_in(df_sets *s, df_run r) {
  BASE_GROW(s->tmp_in, s->ntmp_in, s->tmp_in_cap, 1, "reduction sets");
  s->tmp_in[s->ntmp_in++] = r;
  return CDAG_OK;
}

/* Adds the runs of set id, every addr shifted by shift (or one origin when id < 0). */
static int add_operand(df_sets *s, const df_operand *x) {
  if (x->set < 0) return add_in(s, (df_run){.lo = x->rank, .hi = x->rank, .mult = 1, .addr = x->addr});
  const df_set *e = &s->sets[x->set];
  for (int32_t i = 0; i < e->nruns; i++) {
    df_run r = s->runs[e->first + i];
    r.addr += x->addr;
    int rc = add_in(s, r);
    if (rc) return rc;
  }
  return CDAG_OK;
}

static int64_t operand_runs(const df_sets *s, const df_operand *x) { return x->set < 0 ? 1 : s->sets[x->set].nruns; }
static int64_t operand_contrib(const df_sets *s, const df_operand *x) { return x->set < 0 ? 1 : s->sets[x->set].ncontrib; }

/* DF_CAP_SETS: a union of more than cap_runs runs keeps only how many values it combines, as
   one run of no rank (lo = hi = -1) whose multiplicity is that count: chains of reductions into
   one buffer would otherwise grow a set by a run per step, quadratic in the chain. */
static int opaque(df_sets *s, const df_operand *a, const df_operand *b, int32_t *id) {
  int64_t n = operand_contrib(s, a) + operand_contrib(s, b);
  BASE_GROW(s->tmp_out, 0, s->tmp_out_cap, 1, "reduction sets");
  s->tmp_out[0] = (df_run){.lo = -1, .hi = -1, .mult = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n, .addr = 0};
  s->ntmp_out = 1;
  return intern(s, id);
}

int df_sets_union(df_sets *s, const df_operand *a, const df_operand *b, int rop, int32_t *id) {
  if (s->cap_runs && operand_runs(s, a) + operand_runs(s, b) > s->cap_runs) return opaque(s, a, b, id);
  s->ntmp_in = 0;
  int rc = add_operand(s, a);
  if (rc == CDAG_OK) rc = add_operand(s, b);
  return rc ? rc : finish(s, rop, id);
}

int df_sets_shift(df_sets *s, int32_t set, uint64_t shift, int32_t *id) {
  if (shift == 0) {
    *id = set;
    return CDAG_OK;
  }
  df_operand x = {.set = set, .addr = shift};
  s->ntmp_in = 0;
  int rc = add_operand(s, &x);
  return rc ? rc : finish(s, -1, id);
}

void df_sets_free(df_sets *s) {
  Word_t freed;
  freed = JudyLFreeArray(&s->by_hash, PJE0);
  (void)freed;
  free(s->sets); free(s->chain); free(s->runs); free(s->tmp_in); free(s->tmp_out); free(s->ev);
  memset(s, 0, sizeof *s);
}

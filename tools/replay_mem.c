/* cdag — tools/replay_mem.c: filling and comparing the memory of `cdag replay` (replay_mem.h).
 *
 * The content: every byte is 0x38 + a 4-bit hash of (rank, file address). So any float or
 * double read from it is a positive number of moderate size (2^-15 .. 2^16 for float,
 * 2^-124 .. 2^118 for double): sums and products of the values a graph combines neither
 * cancel nor overflow, and the relative tolerance of a reassociated result holds. Sixteen
 * values per byte still tell a misplaced byte from the right one 15 times in 16, and a
 * misplaced run of bytes almost surely.
 * The tolerance: a sum or product of n positive values, combined in any order, is within
 * (n - 1) eps of the exact one, relative, so two orders are within 2 (n - 1) eps of each
 * other; 4 n eps leaves room. Complex elements: per component, relative to the largest.
 * A recording can feed a product its own earlier results (a buffer reduced again and again
 * with only part of it recomputed), far from the fill's range: there a part-product may
 * overflow in one order and not in another, and no tolerance bounds the two. A pair where
 * one result is not finite and the other is not finite either, or beyond the square root of
 * the type's largest value, is counted as overflowed, not compared. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "dataflow/dataflow.h"
#include "match/match.h"
#include "replay_mem.h"

enum { RM_SHOWN = 5 };   /* differences printed per rank */

/* ---- what to compare ---- */

static int push_value(replay_mem *rm, const rm_value *v) {
  BASE_GROW(rm->vals, rm->nvals, rm->cap_vals, 1, "replay values");
  rm->vals[rm->nvals++] = *v;
  return CDAG_OK;
}

/* n > 0 if set s is listed as derived from floating-point sums (sst->derived, sorted by set
   in *by_set: its largest n), else 0. */
static int64_t derived_n(const df_sst *sst, const int64_t *by_set, int32_t s) {
  int64_t lo = 0, hi = sst->nderived, n = 0;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (sst->derived[by_set[mid]].set < s) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < sst->nderived && sst->derived[by_set[lo]].set == s; lo++)
    if (sst->derived[by_set[lo]].n > n) n = sst->derived[by_set[lo]].n;
  return n;
}

/* The elements of reduction d (the rank's) whose order a compiled schedule may change: a
   floating-point sum or product, or a value computed from such (a max over sums, whose set
   by_set lists as derived), compared with the sums' tolerance. */
static int mark_reduction(replay_mem *rm, const df_sst *sst, const int64_t *by_set, const df_red *d) {
  if (!ir_type_is_float((int)d->type)) return CDAG_OK;
  int64_t n = d->op == CDAG_SUM || d->op == CDAG_PROD ? sst->sets[d->set].ncontrib : derived_n(sst, by_set, d->set);
  if (!n) return CDAG_OK;
  int size = ir_type_size((int)d->type);
  for (uint64_t e = 0; e < d->count; e++) {
    rm_value v = {0, d->dst_addr + e * (uint64_t)size, (int)d->type, d->op, n};
    int rc = replay_map_offset(rm->map, rm->rank, v.addr, (uint64_t)size, &v.off);
    if (!rc) rc = push_value(rm, &v);
    if (rc) return rc;
    memset(rm->mask + v.off, RM_VALUE, (size_t)size);
  }
  return CDAG_OK;
}

/* [addr, addr + len) of the file, when the block holds it, among rm->unh. */
static int push_unhashed(replay_mem *rm, uint64_t addr, uint64_t len) {
  uint64_t off;
  if (!len || replay_map_offset(rm->map, rm->rank, addr, len, &off)) {
    cdag__error_clear();   /* a native call's own scratch: not in the block, hashed by no computation */
    return CDAG_OK;
  }
  BASE_GROW(rm->unh, 2 * rm->nunh, rm->cap_unh, 2, "replay values");
  rm->unh[2 * rm->nunh] = off, rm->unh[2 * rm->nunh + 1] = len, rm->nunh++;
  return CDAG_OK;
}

/* The floating-point reduction results of the rank, from gg's SST. */
static int mark_values(replay_mem *rm, const cdag_graph *gg) {
  match_result m = {0};
  df_sst *sst = NULL;
  int rc = match_run(gg, &m);
  /* a reduce that mixes ops starts a stage (src/stage), it is no reduction to tolerate: listed,
     not refused (without DF_RELEASE_INPUTS, gg is only read); only the count of values a
     reduction combines is read, so long chains of reductions keep just that (DF_CAP_SETS) */
  if (!rc)
    rc = dataflow_run_opt((cdag_graph *)gg, &m, DF_COLLECT_MIXED | DF_WAITSETS_IF_NEEDED | DF_CAP_SETS | DF_COLLECT_REASSOC,
                          &sst);
  int64_t *by_set = !rc && sst ? malloc((size_t)(sst->nderived ? sst->nderived : 1) * sizeof *by_set) : NULL;
  if (!rc && sst && !by_set) rc = CDAG_NOMEM("replay values");
  for (int64_t k = 0; !rc && k < sst->nderived; k++) by_set[k] = k;
  base_key key[] = {BASE_KEY(sst ? sst->derived : NULL, set)};
  if (!rc && sst->nderived > 1) rc = base_sort_fields(by_set, sst->nderived, key, 1);
  for (int64_t k = 0; !rc && k < sst->nreds; k++)
    if (sst->reds[k].dst == rm->rank) rc = mark_reduction(rm, sst, by_set, &sst->reds[k]);
  for (int64_t k = 0; !rc && sst && k < sst->nreassoc; k++)   /* sums met before the end too */
    if (sst->reassoc[k].rank == rm->rank) rc = push_unhashed(rm, sst->reassoc[k].addr, sst->reassoc[k].len);
  free(by_set);
  dataflow_free(sst);
  match_free(&m);
  return rc;
}

/* The rank's ranges compared byte for byte, less its scratch (merged: each lies in one range;
   native calls' scratch, at IR_COLL_SCRATCH and up, is not in the block). */
static int mark_bytes(replay_mem *rm, const cdag_graph *gg) {
  const replay_map *m = rm->map;
  for (int64_t k = m->start[rm->rank]; k < m->start[rm->rank + 1]; k++) memset(rm->mask + m->off[k], RM_BYTE, m->len[k]);
  for (int64_t s = gg->scr_start[rm->rank]; s < gg->scr_start[rm->rank + 1] && gg->scr_lo[s] < IR_COLL_SCRATCH; s++) {
    uint64_t off, len = gg->scr_hi[s] - gg->scr_lo[s];
    int rc = replay_map_offset(m, rm->rank, gg->scr_lo[s], len, &off);
    if (rc) return rc;
    memset(rm->mask + off, RM_SKIP, len);
  }
  return CDAG_OK;
}

int rm_build(const cdag_graph *gg, const replay_map *map, int rank, replay_mem *rm) {
  *rm = (replay_mem){.rank = rank, .map = map, .size = map->size[rank]};
  rm->mask = calloc(rm->size ? rm->size : 1, 1);
  if (!rm->mask) return CDAG_NOMEM("replay comparison");
  int rc = mark_bytes(rm, gg);
  if (!rc) rc = mark_values(rm, gg);
  for (uint64_t b = 0; !rc && b < rm->size; b++) rm->nbytes += rm->mask[b] == RM_BYTE;
  return rc;
}

void rm_free(replay_mem *rm) {
  free(rm->mask);
  free(rm->vals);
  free(rm->unh);
  *rm = (replay_mem){0};
}

void rm_fill(const replay_mem *rm, uint8_t *block) {
  const replay_map *m = rm->map;
  memset(block, 0, rm->size);
  for (int64_t k = m->start[rm->rank]; k < m->start[rm->rank + 1]; k++)
    for (uint64_t i = 0; i < m->len[k]; i++) block[m->off[k] + i] = replay_fill_byte(rm->rank, m->lo[k] + i);
}

/* ---- comparing ---- */

/* Component c of element v in block p, as a double. */
static double component(const rm_value *v, const uint8_t *p, int c) {
  if (v->type == CDAG_FLOAT || v->type == CDAG_COMPLEX_FLOAT) {
    float f;
    memcpy(&f, p + v->off + (size_t)c * sizeof f, sizeof f);
    return f;
  }
  if (v->type == CDAG_LONG_DOUBLE || v->type == CDAG_COMPLEX_LONG_DOUBLE) {
    long double l;
    memcpy(&l, p + v->off + (size_t)c * sizeof l, sizeof l);
    return (double)l;
  }
  double d;
  memcpy(&d, p + v->off + (size_t)c * sizeof d, sizeof d);
  return d;
}

static int ncomponents(int type) {
  return type == CDAG_COMPLEX_FLOAT || type == CDAG_COMPLEX_DOUBLE || type == CDAG_COMPLEX_LONG_DOUBLE ? 2 : 1;
}

/* Not finite, or so large that a part-product in another order may not have been. */
static int overflowing(const rm_value *v, const uint8_t *p) {
  int single = v->type == CDAG_FLOAT || v->type == CDAG_COMPLEX_FLOAT;
  for (int c = 0; c < ncomponents(v->type); c++) {
    double x = component(v, p, c);
    if (!isfinite(x) || fabs(x) >= sqrt(single ? FLT_MAX : DBL_MAX)) return 1;
  }
  return 0;
}

/* 1: equal bytes, or equal values within the tolerance of a reassociated sum or product;
   2: overflowed (not compared); 0: different. */
static int value_equal(const rm_value *v, const uint8_t *a, const uint8_t *b) {
  int size = ir_type_size(v->type), nc = ncomponents(v->type);
  if (!memcmp(a + v->off, b + v->off, (size_t)size)) return 1;
  double eps = v->type == CDAG_FLOAT || v->type == CDAG_COMPLEX_FLOAT ? FLT_EPSILON : DBL_EPSILON;
  double scale = 0, tol = 4.0 * (double)(v->n > 1 ? v->n : 1) * eps;
  for (int c = 0; c < nc; c++) {
    double x = component(v, a, c), y = component(v, b, c);
    if (isnan(x) && isnan(y)) continue;
    if (!isfinite(x) || !isfinite(y)) return 2 * (overflowing(v, a) && overflowing(v, b));
    scale = fmax(scale, fmax(fabs(x), fabs(y)));
  }
  for (int c = 0; c < nc; c++)
    if (fabs(component(v, a, c) - component(v, b, c)) > tol * scale) return 0;
  return 1;
}

static void show_value(const replay_mem *rm, const rm_value *v, const uint8_t *a, const uint8_t *b, FILE *err) {
  fprintf(err, "cdag replay: rank %d, file address 0x%llx (%s, a %s of %lld values): as written %.17g", rm->rank,
          (unsigned long long)v->addr, ir_type_name(v->type), ir_rop_name(v->op), (long long)v->n, component(v, a, 0));
  if (ncomponents(v->type) == 2) fprintf(err, "%+.17gi", component(v, a, 1));
  fprintf(err, ", compiled %.17g", component(v, b, 0));
  if (ncomponents(v->type) == 2) fprintf(err, "%+.17gi", component(v, b, 1));
  fprintf(err, "\n");
}

/* Differing bytes of range k; the first RM_SHOWN - *shown of them printed. */
static uint64_t compare_range(const replay_mem *rm, int64_t k, const uint8_t *a, const uint8_t *b, int64_t *shown,
                              uint64_t *first, FILE *err) {
  const replay_map *m = rm->map;
  uint64_t diffs = 0;
  for (uint64_t i = 0, o = m->off[k]; i < m->len[k]; i++, o++) {
    if (rm->mask[o] != RM_BYTE || a[o] == b[o]) continue;
    if (!diffs++ && *first == UINT64_MAX) *first = m->lo[k] + i;
    if ((*shown)++ < RM_SHOWN)
      fprintf(err, "cdag replay: rank %d, file address 0x%llx: as written 0x%02x, compiled 0x%02x\n", rm->rank,
              (unsigned long long)(m->lo[k] + i), a[o], b[o]);
  }
  return diffs;
}

int rm_compare(replay_mem *rm, const uint8_t *written, const uint8_t *compiled, FILE *err) {
  const replay_map *m = rm->map;
  uint64_t bytes = 0, first = UINT64_MAX;
  int64_t values = 0, shown = 0;
  for (int64_t k = m->start[rm->rank]; k < m->start[rm->rank + 1]; k++)
    bytes += compare_range(rm, k, written, compiled, &shown, &first, err);
  rm->noverflow = 0;
  for (int64_t k = 0; k < rm->nvals; k++) {
    int eq = value_equal(&rm->vals[k], written, compiled);
    rm->noverflow += eq == 2;
    if (eq) continue;
    if (!values++ && first == UINT64_MAX) first = rm->vals[k].addr;
    if (shown++ < RM_SHOWN) show_value(rm, &rm->vals[k], written, compiled, err);
  }
  if (!bytes && !values) return CDAG_OK;
  return cdag__error(CDAG_ERR_MISMATCH, "rank %d: the compiled run and the run as written leave different memory: "
                     "%llu of %llu bytes and %lld of %lld floating-point values differ (first at file address 0x%llx)",
                     rm->rank, (unsigned long long)bytes, (unsigned long long)rm->nbytes, (long long)values,
                     (long long)rm->nvals, (unsigned long long)first);
}

int rm_unhashed(const replay_mem *rm, const uint8_t *block, cdag_graph *g) {
  int64_t n = rm->nvals + rm->nunh;
  uint64_t *p = malloc((size_t)(n ? n : 1) * 2 * sizeof *p);
  if (!p) return CDAG_NOMEM("replay values");
  for (int64_t k = 0; k < rm->nvals; k++) {
    p[2 * k] = (uint64_t)(uintptr_t)(block + rm->vals[k].off);
    p[2 * k + 1] = (uint64_t)ir_type_size(rm->vals[k].type);
  }
  for (int64_t k = 0; k < rm->nunh; k++) {
    p[2 * (rm->nvals + k)] = (uint64_t)(uintptr_t)(block + rm->unh[2 * k]);
    p[2 * (rm->nvals + k) + 1] = rm->unh[2 * k + 1];
  }
  int rc = ir_set_unhashed(g, p, n);
  free(p);
  return rc;
}

int rm_corrupt(const replay_mem *rm, uint8_t *block) {
  for (uint64_t b = rm->size; b-- > 0;)
    if (rm->mask[b] != RM_SKIP) {
      block[b] ^= 0x40;   /* an exponent bit where b is the top byte of an element */
      return 1;
    }
  return 0;
}

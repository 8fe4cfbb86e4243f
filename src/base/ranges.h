/* cdag — src/base/ranges.h: does a range of rank r overlap any range of a fixed set?
 *
 * The set is an array of (rank, lo, hi) triples, sorted once by (rank, lo) with each end
 * raised to the largest end so far within its rank: the last triple of the rank starting
 * before hi then decides. Build O(n log n), question O(log n). Header-only. */
#ifndef CDAG_BASE_RANGES_H
#define CDAG_BASE_RANGES_H

#include <stdint.h>

#include "base/sort.h"

static inline int base_triple_cmp(const void *x, const void *y) {
  const uint64_t *a = x, *b = y;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

/* Sorts triples v[0 .. 3n) and raises their ends to the running maximum per rank. */
static inline void base_ranges_index(uint64_t *v, int64_t n) {
  base_sort(v, n, 3 * sizeof *v, base_triple_cmp);
  for (int64_t k = 1; k < n; k++)
    if (v[3 * k] == v[3 * k - 3] && v[3 * k - 1] > v[3 * k + 2]) v[3 * k + 2] = v[3 * k - 1];
}

/* Does [lo, hi) of rank r overlap a range of v (indexed by base_ranges_index)? */
static inline int base_ranges_overlap(const uint64_t *v, int64_t n, uint64_t r, uint64_t lo, uint64_t hi) {
  int64_t a = 0, z = n;
  while (a < z) {   /* first triple not before (r, hi) */
    int64_t m = a + (z - a) / 2;
    if (v[3 * m] < r || (v[3 * m] == r && v[3 * m + 1] < hi)) a = m + 1;
    else z = m;
  }
  return a > 0 && v[3 * (a - 1)] == r && v[3 * (a - 1) + 2] > lo;
}

#endif

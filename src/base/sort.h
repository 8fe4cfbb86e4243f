/* cdag — src/base/sort.h: sorting for every layer: a small-array sort that takes empty
 * arrays, a comparison sort with a context (reentrant), and a stable radix sort of index
 * arrays by record fields (sort.c says why it beats qsort on the pipeline's tuples). */
#ifndef CDAG_BASE_SORT_H
#define CDAG_BASE_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Sort that accepts an empty (possibly NULL) array: insertion sort (stable) up to 96 small
   elements (most calls, often nearly sorted: glibc's qsort allocates and recurses even for
   two), qsort beyond, unless the array is in order already (one pass: a recording's
   operations sorted by position mostly are, and glibc's merge sort takes n log n
   comparisons whatever the order). */
static inline void base_sort(void *base, int64_t n, size_t size, int (*cmp)(const void *, const void *)) {
  if (n <= 1) return;
  if (n > 96 || size > 64) {
    const char *b = base;
    int64_t i = 1;
    while (i < n && cmp(b + (size_t)(i - 1) * size, b + (size_t)i * size) <= 0) i++;
    if (i < n) qsort(base, (size_t)n, size, cmp);
    return;
  }
  char tmp[64], *b = base;
  for (int64_t i = 1; i < n; i++) {
    int64_t j = i;
    memcpy(tmp, b + (size_t)i * size, size);
    for (; j > 0 && cmp(b + (size_t)(j - 1) * size, tmp) > 0; j--) memcpy(b + (size_t)j * size, b + (size_t)(j - 1) * size, size);
    memcpy(b + (size_t)j * size, tmp, size);
  }
}

/* base_sort with a context handed to cmp (sort.c): comparisons that need more than the two
   elements get it per call, never through a file-scope variable (analysis is reentrant). */
void base_sort_r(void *base, int64_t n, size_t size, int (*cmp)(const void *, const void *, void *), void *ctx);

/* One sort key of base_sort_fields: the unsigned field of `width` bytes (4 or 8) at byte offset
   `off` of record base + i * stride, for index i; base == NULL: the index i itself. With map,
   the key is map[field] (a 32-bit field indexing map). is_signed: the field is two's
   complement (sorted as signed). */
typedef struct {
  const void *base;
  size_t stride, off;
  int width, is_signed;
  const int32_t *map;
} base_key;
#define BASE_KEY(arr, field) \
  ((base_key){(arr), sizeof *(arr), offsetof(__typeof__(*(arr)), field), (int)sizeof((arr)->field), 0, NULL})
#define BASE_KEY_SIGNED(arr, field) \
  ((base_key){(arr), sizeof *(arr), offsetof(__typeof__(*(arr)), field), (int)sizeof((arr)->field), 1, NULL})
#define BASE_KEY_INDEX ((base_key){NULL, 0, 0, 8, 0, NULL})

/* Stable sort of idx[0..n) by keys[0] (most significant) .. keys[nkeys-1]: the bits that vary
   in the leading keys are packed into a 64-bit word, sorted by LSD radix passes of at most
   11 bits over (key, index) pairs, and runs of equal words by the keys left, in turn
   (sort.c). O(n) per pass, 3n words of scratch per level, no comparison callbacks.
   At most BASE_SORT_MAX_KEYS keys.
   Returns CDAG_OK, CDAG_ERR_NOMEM or CDAG_ERR_ARG (too many keys). */
#define BASE_SORT_MAX_KEYS 16
int base_sort_fields(int64_t *idx, int64_t n, const base_key *keys, int nkeys);

#endif

/* cdag — src/ir/sort.c: stable radix sort of index arrays by record fields.
 *
 * Detection and planning sort millions of tuple indices by several fields of the records
 * they name (source, destination, length, addresses). qsort with a comparator pays
 * n log n callbacks, each two cache misses into the records. Here each key byte that varies
 * costs one counting pass (all byte histograms come from one scan, as counts do not depend
 * on order), and bytes that are the same everywhere (high bytes of ranks, one address for
 * every transfer) cost nothing. LSD order makes the sort stable, like glibc's merge sort
 * that qsort used before, so results are unchanged. */
#include <string.h>

#include "ir/ir.h"

static inline uint64_t key_of(const ir_key *k, int64_t i) {
  if (!k->base) return (uint64_t)i;
  const unsigned char *r = (const unsigned char *)k->base + (size_t)i * k->stride + k->off;
  uint64_t v;
  switch (k->width) {
  case 1: v = r[0]; if (k->is_signed) v ^= 0x80; break;
  case 2: { uint16_t u; memcpy(&u, r, 2); v = u; if (k->is_signed) v ^= 0x8000; } break;
  case 4: {
    uint32_t u;
    memcpy(&u, r, 4);
    if (k->map) u = (uint32_t)k->map[u];
    v = k->is_signed ? (uint32_t)(u ^ 0x80000000u) : u;
  } break;
  default: memcpy(&v, r, 8); if (k->is_signed) v ^= 1ULL << 63; break;
  }
  return v;
}

static int cmp_keys(const ir_key *keys, int nkeys, int64_t a, int64_t b) {
  for (int k = 0; k < nkeys; k++) {
    uint64_t x = key_of(&keys[k], a), y = key_of(&keys[k], b);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/* Small arrays: insertion sort (stable). */
static void insertion(int64_t *idx, int64_t n, const ir_key *keys, int nkeys) {
  for (int64_t i = 1; i < n; i++) {
    int64_t v = idx[i], j = i;
    while (j > 0 && cmp_keys(keys, nkeys, idx[j - 1], v) > 0) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = v;
  }
}

/* Stable sort of idx by one key, a pass per varying byte (alternating between idx and
   tmp); returns the array that holds the result. */
static int64_t *sort_one_key(int64_t *idx, int64_t *tmp, int64_t n, const ir_key *k) {
  int64_t count[8][256];
  memset(count, 0, sizeof count);
  uint64_t first = key_of(k, idx[0]), diff = 0;
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = key_of(k, idx[i]);
    diff |= v ^ first;
    for (int b = 0; b < 8; b++) count[b][(v >> (8 * b)) & 0xff]++;
  }
  for (int b = 0; b < 8; b++) {
    if (!((diff >> (8 * b)) & 0xff)) continue;
    int64_t pos = 0;
    for (int c = 0; c < 256; c++) {
      int64_t n_c = count[b][c];
      count[b][c] = pos;
      pos += n_c;
    }
    for (int64_t i = 0; i < n; i++) tmp[count[b][(key_of(k, idx[i]) >> (8 * b)) & 0xff]++] = idx[i];
    int64_t *t = idx;
    idx = tmp;
    tmp = t;
  }
  return idx;
}

int ir_sort_fields(int64_t *idx, int64_t n, const ir_key *keys, int nkeys) {
  if (n < 2 || nkeys < 1) return CDAG_OK;
  if (n < 48) {
    insertion(idx, n, keys, nkeys);
    return CDAG_OK;
  }
  int64_t *tmp = malloc((size_t)n * sizeof *tmp);
  if (!tmp) return CDAG_NOMEM("sort scratch");
  int64_t *a = idx, *b = tmp;
  for (int k = nkeys - 1; k >= 0; k--) {
    int64_t *r = sort_one_key(a, b, n, &keys[k]);
    if (r != a) {
      b = a;
      a = r;
    }
  }
  if (a != idx) memcpy(idx, a, (size_t)n * sizeof *idx);
  free(tmp);
  return CDAG_OK;
}

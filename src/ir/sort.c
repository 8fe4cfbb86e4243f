/* cdag — src/ir/sort.c: stable radix sort of index arrays by record fields.
 *
 * Detection and planning sort millions of tuple indices by several fields of the records
 * they name (source, destination, length, addresses). qsort with a comparator pays
 * n log n callbacks, each two cache misses into the records. Here the fields are packed
 * into 64-bit words holding only the bits that vary (ranks need 20 bits at a million
 * processes; an address shared by every transfer needs none), and each word is sorted by
 * 11-bit passes over compact (key, index) pairs: the records are read twice per word, not
 * log n times. LSD order makes the sort stable, like glibc's merge sort that qsort used
 * before, so results are unchanged. O(n) per 11 bits of a word; 3n words of scratch. */
#define _GNU_SOURCE   /* qsort_r */
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

/* Stable LSD radix sort of (key, idx) pairs by the low `bits` bits of key, in passes of at
   most 11 bits (20-bit ranks: two passes); returns which buffer pair holds the result
   (0: key/idx, 1: tkey/tidx). */
static int radix_pairs(uint64_t *key, int64_t *idx, uint64_t *tkey, int64_t *tidx, int64_t n, int bits) {
  int which = 0, passes = (bits + 10) / 11, width = (bits + passes - 1) / passes;
  uint64_t mask = (1ULL << width) - 1;
  for (int shift = 0; shift < bits; shift += width) {
    int64_t count[1 << 11] = {0};
    for (int64_t i = 0; i < n; i++) count[(key[i] >> shift) & mask]++;
    int64_t pos = 0;
    for (uint64_t c = 0; c <= mask; c++) {
      int64_t k = count[c];
      count[c] = pos;
      pos += k;
    }
    for (int64_t i = 0; i < n; i++) {
      int64_t at = count[(key[i] >> shift) & mask]++;
      tkey[at] = key[i];
      tidx[at] = idx[i];
    }
    uint64_t *k = key; key = tkey; tkey = k;
    int64_t *x = idx; idx = tidx; tidx = x;
    which ^= 1;
  }
  return which;
}

static int range_bits(uint64_t span) { return span ? 64 - __builtin_clzll(span) : 0; }

/* Keys are ranged first (bits each field needs above its minimum), then packed into 64-bit
   words, least significant fields first, and each word sorted as one radix key: the records
   are read once per word, the passes run over compact (key, index) pairs. */
int ir_sort_fields(int64_t *idx, int64_t n, const ir_key *keys, int nkeys) {
  if (n < 2 || nkeys < 1) return CDAG_OK;
  if (nkeys > IR_SORT_MAX_KEYS) return cdag__error(CDAG_ERR_ARG, "ir_sort_fields: %d keys (at most %d)", nkeys, IR_SORT_MAX_KEYS);
  if (n < 48) {
    insertion(idx, n, keys, nkeys);
    return CDAG_OK;
  }
  uint64_t lo[IR_SORT_MAX_KEYS], hi[IR_SORT_MAX_KEYS];
  int bits[IR_SORT_MAX_KEYS];
  for (int k = 0; k < nkeys; k++) lo[k] = UINT64_MAX, hi[k] = 0;
  for (int64_t i = 0; i < n; i++)
    for (int k = 0; k < nkeys; k++) {
      uint64_t v = key_of(&keys[k], idx[i]);
      if (v < lo[k]) lo[k] = v;
      if (v > hi[k]) hi[k] = v;
    }
  for (int k = 0; k < nkeys; k++) bits[k] = range_bits(hi[k] - lo[k]);
  uint64_t *key = malloc((size_t)n * sizeof *key), *tkey = malloc((size_t)n * sizeof *tkey);
  int64_t *tidx = malloc((size_t)n * sizeof *tidx);
  if (!key || !tkey || !tidx) {
    free(key); free(tkey); free(tidx);
    return CDAG_NOMEM("sort scratch");
  }
  for (int k = nkeys - 1; k >= 0;) {
    int end = k, total = 0;
    while (k >= 0 && total + bits[k] <= 64) total += bits[k--];
    if (total == 0) continue;
    for (int64_t i = 0; i < n; i++) {
      uint64_t w = 0;
      for (int f = k + 1; f <= end; f++)
        if (bits[f]) w = (bits[f] == 64 ? 0 : w << bits[f]) | (key_of(&keys[f], idx[i]) - lo[f]);
      key[i] = w;
    }
    if (radix_pairs(key, idx, tkey, tidx, n, total)) memcpy(idx, tidx, (size_t)n * sizeof *idx);
  }
  free(key); free(tkey); free(tidx);
  return CDAG_OK;
}

void ir_sort_r(void *base, int64_t n, size_t size, int (*cmp)(const void *, const void *, void *), void *ctx) {
  if (n <= 1) return;
  if (n > 96 || size > 64) {
    qsort_r(base, (size_t)n, size, cmp, ctx);
    return;
  }
  char tmp[64], *b = base;
  for (int64_t i = 1; i < n; i++) {
    int64_t j = i;
    memcpy(tmp, b + (size_t)i * size, size);
    for (; j > 0 && cmp(b + (size_t)(j - 1) * size, tmp, ctx) > 0; j--) memcpy(b + (size_t)j * size, b + (size_t)(j - 1) * size, size);
    memcpy(b + (size_t)j * size, tmp, size);
  }
}

/* cdag — src/ir/sort.c: stable radix sort of index arrays by record fields.
 *
 * Detection and planning sort millions of tuple indices by several fields of the records
 * they name (source, destination, length, addresses). qsort with a comparator pays
 * n log n callbacks, each two cache misses into the records. Here the leading fields are
 * packed into a 64-bit word holding only the bits that vary (ranks need 20 bits at a
 * million processes; an address shared by every transfer needs none), and the word is
 * sorted by passes of up to 11 bits over compact (key, index) pairs: the records are read
 * twice per field, not log n times. The fields that did not fit sort each run of equal
 * words, in turn; as the first word mostly decides (ranks and sizes lead, addresses
 * break ties), the later ones cost little. LSD passes and sorting within runs keep the
 * sort stable, like glibc's merge sort that qsort used before, so results are unchanged.
 * O(n) per pass; 3n words of scratch per level of runs. */
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

/* The values of key k for records idx[0..n) into out: one loop per field width, so the
   loop reads one kind of field (key_of's checks, per element, cost more than the load). */
static void gather(const ir_key *k, const int64_t *idx, int64_t n, uint64_t *out) {
  if (!k->base) {
    for (int64_t i = 0; i < n; i++) out[i] = (uint64_t)idx[i];
    return;
  }
  const unsigned char *b = (const unsigned char *)k->base + k->off;
  size_t st = k->stride;
  switch (k->width) {
  case 1: for (int64_t i = 0; i < n; i++) out[i] = (uint64_t)(b[(size_t)idx[i] * st] ^ (k->is_signed ? 0x80 : 0)); break;
  case 2: {
    uint16_t flip = k->is_signed ? 0x8000 : 0, u;
    for (int64_t i = 0; i < n; i++) memcpy(&u, b + (size_t)idx[i] * st, 2), out[i] = (uint16_t)(u ^ flip);
  } break;
  case 4: {
    uint32_t flip = k->is_signed ? 0x80000000u : 0, u;
    if (k->map)
      for (int64_t i = 0; i < n; i++) memcpy(&u, b + (size_t)idx[i] * st, 4), out[i] = (uint32_t)k->map[u] ^ flip;
    else
      for (int64_t i = 0; i < n; i++) memcpy(&u, b + (size_t)idx[i] * st, 4), out[i] = u ^ flip;
  } break;
  default: {
    uint64_t flip = k->is_signed ? 1ULL << 63 : 0, u;
    for (int64_t i = 0; i < n; i++) memcpy(&u, b + (size_t)idx[i] * st, 8), out[i] = u ^ flip;
  }
  }
}

/* Stable LSD radix sort of (key, idx) pairs by the low `bits` bits of key, in passes of at
   most 11 bits (20-bit ranks: two passes), fewer for fewer pairs than 2^11 (the sorts of
   tied runs are small, and clearing 2^11 counters would cost them more than their pairs);
   a pass whose digit is the same for all is skipped. Returns which buffer pair holds the
   result (0: key/idx, 1: tkey/tidx). */
static int radix_pairs(uint64_t *key, int64_t *idx, uint64_t *tkey, int64_t *tidx, int64_t n, int bits) {
  int most = 11;
  while (most > 4 && ((int64_t)1 << most) > n) most--;
  int which = 0, passes = (bits + most - 1) / most, width = (bits + passes - 1) / passes;
  uint64_t mask = (1ULL << width) - 1;
  for (int shift = 0; shift < bits; shift += width) {
    int64_t count[1 << 11];
    memset(count, 0, (mask + 1) * sizeof *count);
    for (int64_t i = 0; i < n; i++) count[(key[i] >> shift) & mask]++;
    if (count[(key[0] >> shift) & mask] == n) continue;
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

static int sort_from(int64_t *idx, int64_t n, const ir_key *keys, int nkeys);

/* Each run of equal words w (sorted, aligned with idx) sorted by the keys that follow. */
static int sort_ties(int64_t *idx, const uint64_t *w, int64_t n, const ir_key *keys, int nkeys) {
  for (int64_t a = 0, b; a < n; a = b) {
    for (b = a + 1; b < n && w[b] == w[a]; b++) {}
    int rc = b - a > 1 ? sort_from(idx + a, b - a, keys, nkeys) : CDAG_OK;
    if (rc) return rc;
  }
  return CDAG_OK;
}

/* The leading keys that fit one 64-bit word (bits each needs above its minimum) are packed
   into it, most significant first, and the pairs (word, index) sorted by radix passes over
   the bits that vary (none if the words already ascend); runs of equal words, if keys are
   left, are sorted by those recursively. The first word usually decides (the sorts here
   lead with ranks and sizes, and addresses break the few ties): the records are read
   twice per key, the passes run over compact pairs, and a sort of pairs already in order
   makes no pass. */
static int sort_from(int64_t *idx, int64_t n, const ir_key *keys, int nkeys) {
  if (n < 48) {
    insertion(idx, n, keys, nkeys);
    return CDAG_OK;
  }
  uint64_t *key = malloc((size_t)n * sizeof *key), *tkey = malloc((size_t)n * sizeof *tkey);
  int64_t *tidx = malloc((size_t)n * sizeof *tidx);
  if (!key || !tkey || !tidx) {
    free(key); free(tkey); free(tidx);
    return CDAG_NOMEM("sort scratch");
  }
  int m = 0, total = 0;
  memset(key, 0, (size_t)n * sizeof *key);
  for (; m < nkeys; m++) {
    gather(&keys[m], idx, n, tkey);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int64_t i = 0; i < n; i++) {
      if (tkey[i] < lo) lo = tkey[i];
      if (tkey[i] > hi) hi = tkey[i];
    }
    int bits = range_bits(hi - lo);
    if (total + bits > 64) break;
    if (bits) /* bits < 64 here unless the word holds this key alone */
      for (int64_t i = 0; i < n; i++) key[i] = (bits == 64 ? 0 : key[i] << bits) | (tkey[i] - lo);
    total += bits;
  }
  int64_t i = 1;
  while (i < n && key[i] >= key[i - 1]) i++;
  const uint64_t *w = key;
  if (i < n && radix_pairs(key, idx, tkey, tidx, n, total)) {
    memcpy(idx, tidx, (size_t)n * sizeof *idx);
    w = tkey;
  }
  free(tidx);
  free(w == key ? tkey : key); /* only w is needed now, and sort_ties allocates again */
  int rc = m < nkeys ? sort_ties(idx, w, n, keys + m, nkeys - m) : CDAG_OK;
  free((void *)w);
  return rc;
}

int ir_sort_fields(int64_t *idx, int64_t n, const ir_key *keys, int nkeys) {
  if (n < 2 || nkeys < 1) return CDAG_OK;
  if (nkeys > IR_SORT_MAX_KEYS) return cdag__error(CDAG_ERR_ARG, "ir_sort_fields: %d keys (at most %d)", nkeys, IR_SORT_MAX_KEYS);
  return sort_from(idx, n, keys, nkeys);
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

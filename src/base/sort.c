/* cdag — src/base/sort.c: stable radix sort of index arrays by record fields.
 *
 * Detection and planning sort millions of tuple indices by several fields of the records
 * they name (source, destination, length, addresses). qsort with a comparator pays
 * n log n callbacks, each two cache misses into the records. Here the leading fields are
 * packed into a 64-bit word holding only the bits that vary (ranks need 20 bits at a
 * million processes; an address shared by every transfer needs none), up to the bits
 * that can tell the records apart, and the word is sorted by passes of up to 11 bits over
 * compact (key, index) pairs: the records are read twice per field packed, not log n
 * times. Runs of equal words are sorted by the fields left, in turn; when the word
 * repeats often, it first takes every field that still fits and is sorted again. LSD
 * passes and sorting within runs keep the sort stable, like glibc's merge sort that qsort
 * used before, so results are unchanged. O(n) per pass; 3n words of scratch per level of
 * runs. */
#define _GNU_SOURCE   /* qsort_r */
#include <string.h>

#include "base/error.h"
#include "base/sort.h"

static inline uint64_t key_of(const base_key *k, int64_t i) {
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

static int cmp_keys(const base_key *keys, int nkeys, int64_t a, int64_t b) {
  for (int k = 0; k < nkeys; k++) {
    uint64_t x = key_of(&keys[k], a), y = key_of(&keys[k], b);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/* Small arrays: insertion sort (stable). */
static void insertion(int64_t *idx, int64_t n, const base_key *keys, int nkeys) {
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
static void gather(const base_key *k, const int64_t *idx, int64_t n, uint64_t *out) {
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

static int sort_from(int64_t *idx, int64_t n, const base_key *keys, int nkeys);

/* Each run of equal words w (sorted, aligned with idx) sorted by the keys that follow. */
static int sort_ties(int64_t *idx, const uint64_t *w, int64_t n, const base_key *keys, int nkeys) {
  for (int64_t a = 0, b; a < n; a = b) {
    for (b = a + 1; b < n && w[b] == w[a]; b++) {}
    int rc = b - a > 1 ? sort_from(idx + a, b - a, keys, nkeys) : CDAG_OK;
    if (rc) return rc;
  }
  return CDAG_OK;
}

/* Packs keys[m..] into the words w below the bits already there (*total of them), each
   key in the bits it needs above its minimum, while they fit in 64 bits and, with want >
   0, until the words have want bits; scratch: n words. Returns the first key left out. */
static int pack(const base_key *keys, int nkeys, int m, const int64_t *idx, int64_t n, uint64_t *w, uint64_t *scratch,
                int *total, int want) {
  for (; m < nkeys && (!want || *total < want); m++) {
    gather(&keys[m], idx, n, scratch);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int64_t i = 0; i < n; i++) {
      if (scratch[i] < lo) lo = scratch[i];
      if (scratch[i] > hi) hi = scratch[i];
    }
    int bits = range_bits(hi - lo);
    if (*total + bits > 64) break;
    if (bits) /* bits < 64 here unless the word holds this key alone */
      for (int64_t i = 0; i < n; i++) w[i] = (bits == 64 ? 0 : w[i] << bits) | (scratch[i] - lo);
    *total += bits;
  }
  return m;
}

/* Sorts idx by the words *w (bits of them vary), unless they already ascend; *w then
   holds the sorted words (swapped with *scratch if the passes left them there). */
static void sort_words(uint64_t **w, uint64_t **scratch, int64_t *idx, int64_t *tidx, int64_t n, int bits) {
  int64_t i = 1;
  while (i < n && (*w)[i] >= (*w)[i - 1]) i++;
  if (i < n && radix_pairs(*w, idx, *scratch, tidx, n, bits)) {
    memcpy(idx, tidx, (size_t)n * sizeof *idx);
    uint64_t *t = *w;
    *w = *scratch;
    *scratch = t;
  }
}

/* How many of the sorted words w repeat the one before. */
static int64_t repeats(const uint64_t *w, int64_t n) {
  int64_t r = 0;
  for (int64_t i = 1; i < n; i++) r += w[i] == w[i - 1];
  return r;
}

/* The leading keys are packed into a 64-bit word, most significant first, until it has
   the bits to tell n records apart, and the pairs (word, index) sorted by radix passes
   over the bits that vary; runs of equal words are sorted by the keys left, recursively.
   The sorts here lead with ranks and sizes, whose word mostly decides: the addresses
   after them, 20 to 40 bits each, would only add passes. When the word repeats for more
   than an eighth of the records, it takes every key that still fits and the pairs are
   sorted again (from the order by the shorter word, which that stable sort keeps among
   equal words): a few passes more, never many small runs. The records are read twice per
   key packed; words already in order make no pass. */
static int sort_from(int64_t *idx, int64_t n, const base_key *keys, int nkeys) {
  if (n < 48) {
    insertion(idx, n, keys, nkeys);
    return CDAG_OK;
  }
  uint64_t *w = calloc((size_t)n, sizeof *w), *scratch = malloc((size_t)n * sizeof *scratch);
  int64_t *tidx = malloc((size_t)n * sizeof *tidx);
  if (!w || !scratch || !tidx) {
    free(w); free(scratch); free(tidx);
    return CDAG_NOMEM("sort scratch");
  }
  int total = 0, m = pack(keys, nkeys, 0, idx, n, w, scratch, &total, range_bits((uint64_t)n));
  sort_words(&w, &scratch, idx, tidx, n, total);
  if (m < nkeys && repeats(w, n) > n / 8) {
    int more = pack(keys, nkeys, m, idx, n, w, scratch, &total, 0);
    if (more > m) sort_words(&w, &scratch, idx, tidx, n, total);
    m = more;
  }
  free(tidx);
  free(scratch); /* only w is needed now, and sort_ties allocates again */
  int rc = m < nkeys ? sort_ties(idx, w, n, keys + m, nkeys - m) : CDAG_OK;
  free(w);
  return rc;
}

int base_sort_fields(int64_t *idx, int64_t n, const base_key *keys, int nkeys) {
  if (n < 2 || nkeys < 1) return CDAG_OK;
  if (nkeys > BASE_SORT_MAX_KEYS) return cdag__error(CDAG_ERR_ARG, "base_sort_fields: %d keys (at most %d)", nkeys, BASE_SORT_MAX_KEYS);
  return sort_from(idx, n, keys, nkeys);
}

void base_sort_r(void *base, int64_t n, size_t size, int (*cmp)(const void *, const void *, void *), void *ctx) {
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

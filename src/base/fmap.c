/* cdag — src/base/fmap.c: chunks of sorted keys under a JudyL, and a finger (fmap.h).
 *
 * Every key belongs to the chunk whose range [lo, hi) holds it; the first chunk's lo is 0
 * and the last one's range is open (top), so every key has one. A chunk is never empty
 * unless it is the map's only one. A full chunk splits where its insert goes (split). A
 * chunk that a delete leaves with fewer than FMAP_CHUNK / 4 keys joins a neighbour they fit
 * in, and an emptied one is dropped, its range joined to its neighbour's: a map whose keys
 * were deleted in a scattered way holds no long row of nearly empty chunks (each 1 KiB).
 * Each call costs a binary search in one or two chunks, a JudyL look-up only when the key
 * lies outside the chunk used last (or a delete thins a chunk), and a move of at most
 * FMAP_CHUNK entries. */
#include "base/fmap.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/imap.h"

struct fmap_chunk {
  uint64_t lo, hi;   /* the keys it holds lie in [lo, hi), or [lo, 2^64) when top */
  int top, n;
  uint64_t key[FMAP_CHUNK];
  int64_t idx[FMAP_CHUNK];
};

/* The chunk key k belongs to: the finger's, else the JudyL's (which becomes the finger).
   NULL when the map has no chunk. */
static fmap_chunk *owner(base_fmap *m, uint64_t k) {
  fmap_chunk *c = m->last;
  if (c && c->lo <= k && (c->top || k < c->hi)) return c;
  if (!m->dir) return NULL;
  Word_t w = (Word_t)k;
  PWord_t pv;
  if (w == ~(Word_t)0) pv = (PWord_t)JudyLLast(m->dir, &w, PJE0);
  else w++, pv = (PWord_t)JudyLPrev(m->dir, &w, PJE0);   /* the first chunk's lo is 0: one is found */
  return m->last = pv ? (fmap_chunk *)*pv : NULL;
}

/* The first position of c whose key is at least k (c->n: none). */
static int lower(const fmap_chunk *c, uint64_t k) {
  int lo = 0, hi = c->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (c->key[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int64_t at(const fmap_chunk *c, int i, uint64_t *k) {
  *k = c->key[i];
  return c->idx[i];
}

int64_t base_fmap_find(base_fmap *m, uint64_t *k, int dir) {
  fmap_chunk *c = owner(m, *k);
  if (!c) return -1;
  int i = lower(c, *k);
  if (dir == BASE_IMAP_AT_OR_BELOW) {
    if (i < c->n && c->key[i] == *k) return at(c, i, k);
    if (i > 0) return at(c, i - 1, k);
    while (c->lo > 0) {   /* none in c at or below k: the last key of the chunk before */
      c = owner(m, c->lo - 1);
      if (c->n) return at(c, c->n - 1, k);
    }
    return -1;
  }
  if (dir == BASE_IMAP_ABOVE && i < c->n && c->key[i] == *k) i++;
  if (i < c->n) return at(c, i, k);
  while (!c->top) {   /* none in c: the first key of the chunk after */
    c = owner(m, c->hi);
    if (c->n) return at(c, 0, k);
  }
  return -1;
}

static void insert_at(fmap_chunk *c, int i, uint64_t key, int64_t idx) {
  memmove(&c->key[i + 1], &c->key[i], (size_t)(c->n - i) * sizeof *c->key);
  memmove(&c->idx[i + 1], &c->idx[i], (size_t)(c->n - i) * sizeof *c->idx);
  c->key[i] = key;
  c->idx[i] = idx;
  c->n++;
}

/* The first chunk, holding every key. */
static int first_chunk(base_fmap *m) {
  fmap_chunk *c = malloc(sizeof *c);
  PWord_t pv = c ? (PWord_t)JudyLIns(&m->dir, 0, PJE0) : NULL;
  if (!pv || pv == PJERR) {
    free(c);
    return CDAG_NOMEM("ordered map");
  }
  *c = (fmap_chunk){.lo = 0, .top = 1};
  *pv = (Word_t)c;
  m->last = c;
  m->chunks = 1;
  return CDAG_OK;
}

/* Splits full chunk c for an insert at position i: the keys from s on move to a new chunk
   after it, which takes c's upper bound. The chunk the insert goes to, NULL out of memory (c
   unchanged). Above all keys of the last chunk a new chunk starts at the key, and below all
   keys of any chunk the keys move up and the key stays: runs that way fill chunks whole.
   Above all keys of another chunk it splits in the middle: a new chunk of the key alone
   there would get nothing from a run downwards, which goes to c (a chunk a key). */
static fmap_chunk *split(base_fmap *m, fmap_chunk *c, int i, uint64_t key) {
  int s = (i == c->n && c->top) || i == 0 ? i : c->n / 2;
  uint64_t lo = s == c->n ? key : c->key[s];   /* above c->lo: key is in c's range */
  fmap_chunk *d = malloc(sizeof *d);
  PWord_t pv = d ? (PWord_t)JudyLIns(&m->dir, (Word_t)lo, PJE0) : NULL;
  if (!pv || pv == PJERR) {
    free(d);
    return NULL;
  }
  *pv = (Word_t)d;
  d->lo = lo, d->hi = c->hi, d->top = c->top, d->n = c->n - s;
  memcpy(d->key, &c->key[s], (size_t)d->n * sizeof *d->key);
  memcpy(d->idx, &c->idx[s], (size_t)d->n * sizeof *d->idx);
  c->hi = lo, c->top = 0, c->n = s;
  m->chunks++;
  return m->last = key >= lo ? d : c;
}

int base_fmap_put(base_fmap *m, uint64_t key, int64_t idx) {
  fmap_chunk *c = owner(m, key);
  if (!c) {
    int rc = first_chunk(m);
    if (rc) return rc;
    c = m->last;
  }
  int i = lower(c, key);
  if (i < c->n && c->key[i] == key) {
    c->idx[i] = idx;
    return CDAG_OK;
  }
  if (c->n == FMAP_CHUNK) {
    fmap_chunk *d = split(m, c, i, key);
    if (!d) return CDAG_NOMEM("ordered map");
    if (d != c) i -= c->n;
    c = d;
  }
  insert_at(c, i, key, idx);
  m->n++;
  return CDAG_OK;
}

/* Drops chunk c, emptied, joining its range to a neighbour's: the one before, or for the
   first chunk the one after, whose range then starts at 0. */
static int drop_chunk(base_fmap *m, fmap_chunk *c) {
  if (c->lo > 0) {
    fmap_chunk *p = owner(m, c->lo - 1);
    if (JudyLDel(&m->dir, (Word_t)c->lo, PJE0) == JERR) return CDAG_NOMEM("ordered map");
    p->hi = c->hi, p->top = c->top;
    m->last = p;
  } else {
    fmap_chunk *d = owner(m, c->hi);
    if (JudyLDel(&m->dir, (Word_t)d->lo, PJE0) == JERR) return CDAG_NOMEM("ordered map");
    *(PWord_t)JudyLGet(m->dir, 0, PJE0) = (Word_t)d;
    d->lo = 0;
    m->last = d;
  }
  free(c);
  m->chunks--;
  return CDAG_OK;
}

/* Moves the keys of chunk d, the one after c, into c and drops d, when they fit in
   3/4 of a chunk (so that the next inserts do not split it again at once). 1 if it did. */
static int join(base_fmap *m, fmap_chunk *c, fmap_chunk *d) {
  if (c->n + d->n > FMAP_CHUNK * 3 / 4 || JudyLDel(&m->dir, (Word_t)d->lo, PJE0) == JERR) return 0;
  memcpy(&c->key[c->n], d->key, (size_t)d->n * sizeof *d->key);
  memcpy(&c->idx[c->n], d->idx, (size_t)d->n * sizeof *d->idx);
  c->n += d->n;
  c->hi = d->hi, c->top = d->top;
  free(d);
  m->chunks--;
  m->last = c;
  return 1;
}

/* Chunk c has just gone below FMAP_CHUNK / 4 keys: it joins the chunk after it or the one
   before, if either can take it. */
static void thinned(base_fmap *m, fmap_chunk *c) {
  if (!c->top && join(m, c, owner(m, c->hi))) return;
  if (c->lo > 0) join(m, owner(m, c->lo - 1), c);
}

int base_fmap_del(base_fmap *m, uint64_t key) {
  fmap_chunk *c = owner(m, key);
  if (!c) return CDAG_OK;
  int i = lower(c, key);
  if (i == c->n || c->key[i] != key) return CDAG_OK;
  if (c->n == 1 && (c->lo > 0 || !c->top)) {
    int rc = drop_chunk(m, c);
    if (rc) return rc;
    m->n--;
    return CDAG_OK;
  }
  memmove(&c->key[i], &c->key[i + 1], (size_t)(c->n - i - 1) * sizeof *c->key);
  memmove(&c->idx[i], &c->idx[i + 1], (size_t)(c->n - i - 1) * sizeof *c->idx);
  c->n--;
  m->n--;
  if (c->n == FMAP_CHUNK / 4 - 1) thinned(m, c);
  return CDAG_OK;
}

void base_fmap_clear(base_fmap *m) {
  Word_t w = 0;
  for (PWord_t pv = (PWord_t)JudyLFirst(m->dir, &w, PJE0); pv; pv = (PWord_t)JudyLNext(m->dir, &w, PJE0))
    free((void *)*pv);
  Word_t freed = JudyLFreeArray(&m->dir, PJE0);
  (void)freed;
  m->last = NULL;
  m->n = m->chunks = 0;
}

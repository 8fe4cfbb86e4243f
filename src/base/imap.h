/* cdag — src/base/imap.h: the one index of address intervals.
 *
 * Every pass that maps address ranges to facts (the dataflow's provenance, finalize's last
 * writers and readers, native.c's writers; through fmap.h, the same answers from chunks of
 * keys for a caller that goes through them in order: the recorder's shadow memory, and
 * finalize's big clusters and what a computation reading all read) keeps disjoint
 * intervals in arrays of its own and finds them here: a JudyL from an interval's start to
 * the caller's index of it. The interval covering an address is the one starting at or
 * below it (a predecessor search), if it reaches that far; the intervals overlapping a
 * range follow it in start order. O(log n) per call, no allocation but Judy's own.
 * Header-only: the dataflow calls it per piece on millions of operations. */
#ifndef CDAG_BASE_IMAP_H
#define CDAG_BASE_IMAP_H

#include <Judy.h>
#include <stdint.h>

#include "base/error.h"

typedef struct {
  Pvoid_t judy;   /* interval start -> the caller's index; NULL when empty */
} base_imap;

/* Directions of base_imap_find. */
enum { BASE_IMAP_AT_OR_BELOW = -1, BASE_IMAP_AT_OR_ABOVE = 0, BASE_IMAP_ABOVE = 1 };

static inline int base_imap_empty(const base_imap *m) { return m->judy == NULL; }

/* Records (or replaces) the interval starting at `start` as idx. CDAG_OK or CDAG_ERR_NOMEM. */
static inline int base_imap_put(base_imap *m, uint64_t start, int64_t idx) {
  PWord_t pv = (PWord_t)JudyLIns(&m->judy, (Word_t)start, PJE0);
  if (pv == PJERR) return CDAG_NOMEM("interval index");
  *pv = (Word_t)idx;
  return CDAG_OK;
}

/* Forgets the interval starting at `start` (none there: nothing). CDAG_OK, or
   CDAG_ERR_NOMEM when Judy could not shrink a node (the entry then stays). */
static inline int base_imap_del(base_imap *m, uint64_t start) {
  return JudyLDel(&m->judy, (Word_t)start, PJE0) == JERR ? CDAG_NOMEM("interval index") : CDAG_OK;
}

/* The interval starting at or below *k, at or above it, or strictly above it (dir): its index,
   with its start in *k; -1 if there is none. */
static inline int64_t base_imap_find(const base_imap *m, uint64_t *k, int dir) {
  Word_t w = (Word_t)*k;
  PWord_t pv;
  /* JudyLLast/First try the key itself first (a JudyLGet): a strict search from the
     neighbouring key is one call instead of two. */
  if (dir == BASE_IMAP_AT_OR_BELOW && w != ~(Word_t)0) w++, pv = (PWord_t)JudyLPrev(m->judy, &w, PJE0);
  else if (dir == BASE_IMAP_AT_OR_ABOVE && w != 0) w--, pv = (PWord_t)JudyLNext(m->judy, &w, PJE0);
  else if (dir == BASE_IMAP_AT_OR_BELOW) pv = (PWord_t)JudyLLast(m->judy, &w, PJE0);
  else if (dir == BASE_IMAP_AT_OR_ABOVE) pv = (PWord_t)JudyLFirst(m->judy, &w, PJE0);
  else pv = (PWord_t)JudyLNext(m->judy, &w, PJE0);
  if (!pv) return -1;
  *k = (uint64_t)w;
  return (int64_t)*pv;
}

/* Forgets every interval. */
static inline void base_imap_clear(base_imap *m) {
  Word_t freed = JudyLFreeArray(&m->judy, PJE0);
  (void)freed;
}

#endif

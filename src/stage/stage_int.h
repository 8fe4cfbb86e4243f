/* cdag — src/stage/stage_int.h: what the stage files share inside the directory.
 *
 * Disjoint address pieces, each with an int32 value: stage.c's pending writes (how many
 * cover a piece), scratch.c's writers (the stage whose write a piece holds). A JudyL from a
 * piece's start (base_imap) to its index in arrays of ends and values. Header-only. */
#ifndef CDAG_STAGE_INT_H
#define CDAG_STAGE_INT_H

#include "base/alloc.h"
#include "base/imap.h"

typedef struct {
  base_imap at;   /* piece start -> index */
  uint64_t *hi;   /* its end */
  int32_t *v;     /* its value */
  int64_t len, cap;
} stage_pieces;

/* A new piece [lo, hi) with value v (the caller keeps pieces disjoint). */
static inline int stage_piece_add(stage_pieces *m, uint64_t lo, uint64_t hi, int32_t v) {
  if (m->len == m->cap) {
    int64_t cap = base_grown_cap(m->cap, 1);
    int rc = base_resize((void **)&m->hi, m->len, cap, sizeof *m->hi, "stages");
    if (rc == CDAG_OK) rc = base_resize((void **)&m->v, m->len, cap, sizeof *m->v, "stages");
    if (rc) return rc;
    m->cap = cap;
  }
  m->hi[m->len] = hi;
  m->v[m->len] = v;
  return base_imap_put(&m->at, lo, m->len++);
}

/* A piece boundary at x: the piece holding x split there, both parts with its value. */
static inline int stage_piece_split(stage_pieces *m, uint64_t x) {
  uint64_t s = x;
  int64_t i = base_imap_find(&m->at, &s, BASE_IMAP_AT_OR_BELOW);
  if (i < 0 || s == x || m->hi[i] <= x) return CDAG_OK;
  uint64_t hi = m->hi[i];
  m->hi[i] = x;
  return stage_piece_add(m, x, hi, m->v[i]);
}

static inline void stage_pieces_clear(stage_pieces *m) {
  base_imap_clear(&m->at);
  m->len = 0;
}

static inline void stage_pieces_free(stage_pieces *m) {
  stage_pieces_clear(m);
  free(m->hi);
  free(m->v);
}

#endif

/* cdag — src/dataflow/sst.c: Static Single Transfer form by interval propagation.
 *
 * The simpler equivalent of the paper's Algorithms 3-4 (Hoefler and Schneider, Runtime Detection and Optimization of Collective Communication Patterns, PACT 2012): each rank keeps
 * an interval map (piece start -> piece) from its addresses to their provenance, an origin
 * (rank, addr) or a reduction (type, op, interned set, shift). An address with no piece
 * holds its own original value. A map of up to two pieces lives in the rank's 64-byte slot:
 * one cache line at a known address, which the walk fetches ahead (trees, recursive
 * doubling and rings never need more). A third piece moves the rank's map to a sorted array
 * of its own with a movable gap, where pieces arriving in ascending or descending runs (a
 * rank receiving its blocks of an alltoall or gather) cost O(1) each; a map whose inserts
 * scatter moves on to a JudyL (see df_list). Ops are visited once, in match order:
 *  - a send reads the pieces of its range (several pieces: a split) when it runs, and the
 *    matched receive writes them at its address when it runs (only the sent bytes);
 *  - a copy moves pieces within a rank;
 *  - a local reduce cuts both operands at every piece boundary (which must fall on element
 *    boundaries) and writes the union of the operands' source sets.
 * At the end every piece outside scratch that is not the byte's own original value is a
 * final tuple; adjacent tuples with adjacent origins merge. Each op touches O(1 + pieces it
 * overlaps) pieces at O(log n) each: O(n log n) overall. */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/imap.h"
#include "dataflow/dataflow_int.h"

/* A piece of provenance: origin (set < 0: rank src, address addr at the piece start) or
   reduction (set >= 0: contributions at run.addr + addr for the piece start; typeop). */
typedef struct {
  uint64_t hi;
  uint64_t addr;
  int32_t set;
  int32_t src;      /* origin rank, or (type << 8 | op) for reductions */
} df_piece;

/* A provenance segment read from a range: offset within the range, length, provenance. */
typedef struct {
  uint64_t off, len;
  df_piece p;       /* p.hi unused; p.addr is the provenance at the segment start */
} df_seg;

typedef struct {
  int64_t first, n;
} df_span;

/* A rank's map while it has at most INLINE pieces: entries sorted by start, live ones first
   (p.hi == 0: empty, as a live piece ends above its start). */
enum { INLINE = 2 };
typedef struct {
  uint64_t lo;
  df_piece p;
} df_entry;
typedef struct {
  df_entry e[INLINE];
} df_slot;
_Static_assert(sizeof(df_slot) == 64, "a slot is one cache line (base_calloc aligns to 64)");

/* A rank's map from its third piece on: entries sorted by start in an array of the
   rank's own, with a gap (a gap buffer): entries e[0 .. gs) and e[ge .. cap) in order. An
   insert goes into the gap, which first moves to where the piece belongs; the piece takes
   the side of the gap that leaves the gap where the next insert of an ascending or
   descending run goes. Pieces arrive in such runs (a rank receiving its blocks in address
   order, or from the other end, as in a linear alltoall's match order: two descending
   runs), so an insert mostly moves nothing, and a look-up mostly finds its place at the
   gap, checked first; else a binary search. Moving the gap costs the entries it passes:
   each insert earns MOVE_CREDIT entry moves, and a move the list cannot pay for moves the
   rank's map to a JudyL instead. So an insert costs O(log n + MOVE_CREDIT) amortized
   whatever the pattern, O(1) in runs; a JudyL insert is several hundred instructions (a
   64-entry move, 2 KiB of memmove, is less) and its look-ups chains of dependent loads. */
enum { MOVE_CREDIT = 64, LIST_MIN = 4 };
typedef struct {
  df_entry *e;
  int64_t n, cap, gs, ge;  /* n = gs + cap - ge entries, around the gap [gs, ge) */
  int64_t budget;          /* entry moves the gap may still make */
  uint64_t last;           /* start of the last piece inserted: a lower one continues a descent */
} df_list;

/* A piece found in a map: its start and where it is (NULL: none). Valid until the map
   changes. */
typedef struct {
  uint64_t lo;
  df_piece *p;
} df_at;

typedef struct {
  const cdag_graph *g;
  df_slot *slots;       /* per rank: its map while it has at most INLINE pieces */
  df_list *lists;       /* per rank: its map beyond that (allocated when a first rank needs it) */
  base_imap *maps;      /* per rank whose list's inserts scattered: JudyL piece start -> index
                           into pieces (allocated when a first rank needs it) */
  df_piece *pieces;  int64_t npieces, piececap;
  df_seg *segs;      int64_t nsegs, segcap;     /* read buffer */
  df_seg *segs2;     int64_t nsegs2, segcap2;   /* second operand of a reduce */
  df_seg *out;       int64_t nout, outcap;      /* combined result of a reduce */
  int64_t xfercap, redcap;                      /* capacities of sst->xfers, sst->reds */
  Pvoid_t inflight;  /* JudyL: send whose receive runs later -> 1 + index into stash */
  df_seg *stash;     int64_t nstash, stashcap;  /* segments of such sends */
  df_span *stash_at; int64_t nstash_at, stash_atcap; /* per stashed send: its segments */
  df_sets sets;
  int32_t *sp_head;  /* per rank: its first strided piece, -1 none (NULL until a first one) */
  struct df_spiece *sp; int64_t nsp, spcap; int32_t sp_free;  /* strided pieces; free list */
  struct df_spiece *gstash; int64_t ngstash, gstashcap;        /* strided pieces in flight */
  df_xfer *whole;    int64_t nwhole, wholecap;  /* strided pieces left at the end: transfers
                                                   whole, by rank, each rank's by address */
  df_sst *sst;
  int collect_mixed;     /* DF_COLLECT_MIXED */
  int collect_reassoc;   /* DF_COLLECT_REASSOC */
  volatile uint64_t fetched; /* what fetch_block loaded, kept so the loads are made */
} df_state;

static int judy_insert(df_state *st, int rank, uint64_t lo, df_piece p) {
  BASE_GROW(st->pieces, st->npieces, st->piececap, 1, "provenance map");
  st->pieces[st->npieces] = p;
  int rc = base_imap_put(&st->maps[rank], lo, st->npieces);
  if (!rc) st->npieces++;
  return rc;
}

/* Is rank's map in the JudyL? In its list? (Else in its slot.) */
static int in_judy(const df_state *st, int rank) { return st->maps && !base_imap_empty(&st->maps[rank]); }
static int in_list(const df_state *st, int rank) { return st->lists && st->lists[rank].n; }

/* The piece of rank's JudyL starting at or below x (dir < 0), at or above (0), above (1). */
static df_at judy_find(df_state *st, int rank, uint64_t x, int dir) {
  int64_t i = base_imap_find(&st->maps[rank], &x, dir < 0 ? BASE_IMAP_AT_OR_BELOW : dir ? BASE_IMAP_ABOVE : BASE_IMAP_AT_OR_ABOVE);
  return i >= 0 ? (df_at){x, &st->pieces[i]} : (df_at){0, NULL};
}

/* Logical index i of a list (0 .. n) -> physical index into e. */
static int64_t list_phys(const df_list *l, int64_t i) { return i < l->gs ? i : i + (l->ge - l->gs); }

/* Logical index of the first entry of a list starting above x (n: none). */
static int64_t list_above(const df_list *l, uint64_t x) {
  const df_entry *e = l->e;
  int64_t lo, hi;  /* physical: the first entry of e[lo .. hi) above x, else hi */
  if (l->gs && e[l->gs - 1].lo > x) lo = 0, hi = l->gs - 1;
  else if (l->ge == l->cap || e[l->ge].lo > x) return l->gs;  /* at the gap, where inserts go */
  else lo = l->ge + 1, hi = l->cap;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (e[mid].lo <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo < l->gs ? lo : lo - (l->ge - l->gs);
}

/* Logical index of the first entry starting at or above x. */
static int64_t list_from(const df_list *l, uint64_t x) { return x ? list_above(l, x - 1) : 0; }

static df_at entry_at(df_entry *e) { return (df_at){e->lo, &e->p}; }

/* The entry holding a found piece (slot and list pieces are entries). */
static df_entry *entry_of(df_at at) { return (df_entry *)((char *)at.p - offsetof(df_entry, p)); }

/* The piece of rank's map starting at or below x. */
static df_at map_last(df_state *st, int rank, uint64_t x) {
  if (in_judy(st, rank)) return judy_find(st, rank, x, -1);
  if (in_list(st, rank)) {
    df_list *l = &st->lists[rank];
    int64_t i = list_above(l, x);
    return i ? entry_at(&l->e[list_phys(l, i - 1)]) : (df_at){0, NULL};
  }
  df_slot *s = &st->slots[rank];
  for (int i = INLINE - 1; i >= 0; i--)
    if (s->e[i].p.hi && s->e[i].lo <= x) return entry_at(&s->e[i]);
  return (df_at){0, NULL};
}

/* The piece of rank's map starting at or above x (after: strictly above). */
static df_at map_first(df_state *st, int rank, uint64_t x, int after) {
  if (in_judy(st, rank)) return judy_find(st, rank, x, after);
  if (in_list(st, rank)) {
    df_list *l = &st->lists[rank];
    int64_t i = after ? list_above(l, x) : list_from(l, x);
    return i < l->n ? entry_at(&l->e[list_phys(l, i)]) : (df_at){0, NULL};
  }
  df_slot *s = &st->slots[rank];
  for (int i = 0; i < INLINE && s->e[i].p.hi; i++)
    if (s->e[i].lo > x || (!after && s->e[i].lo == x)) return entry_at(&s->e[i]);
  return (df_at){0, NULL};
}

/* The piece after `at` (found in rank's map, unchanged since): in a slot or list, the next
   entry (across the gap), with no search. */
static df_at map_next(df_state *st, int rank, df_at at) {
  if (in_judy(st, rank)) return judy_find(st, rank, at.lo, 1);
  df_entry *e = entry_of(at) + 1, *end = st->slots[rank].e + INLINE;
  if (in_list(st, rank)) {
    const df_list *l = &st->lists[rank];
    if (e == l->e + l->gs) e = l->e + l->ge;
    end = l->e + l->cap;
  }
  return e < end && e->p.hi ? entry_at(e) : (df_at){0, NULL};
}

/* The first piece of rank's map that ends above x (the first an access from x may meet). */
static df_at map_from(df_state *st, int rank, uint64_t x) {
  df_at at = map_last(st, rank, x);
  if (!at.p) return map_first(st, rank, x, 0);
  return at.p->hi <= x ? map_next(st, rank, at) : at;
}

/* Moves rank's list into its JudyL (the gap could not pay for a move). The list keeps its
   array for when the JudyL empties and the map grows again. */
static int list_to_judy(df_state *st, int rank) {
  df_list *l = &st->lists[rank];
  if (!st->maps && !(st->maps = base_calloc((size_t)st->g->nprocs, sizeof *st->maps)))
    return CDAG_NOMEM("provenance map");
  for (int64_t i = 0; i < l->n; i++) {
    const df_entry *e = &l->e[list_phys(l, i)];
    int rc = judy_insert(st, rank, e->lo, e->p);
    if (rc) return rc;
  }
  l->n = 0;
  return CDAG_OK;
}

/* A full list doubles, from LIST_MIN (many ranks may hold a few pieces: 64 entries, the
   usual first size, would be 2 KiB each); the entries after the gap move to the end. */
static int list_grow(df_list *l) {
  int64_t cap = l->cap ? 2 * l->cap : LIST_MIN, tail = l->cap - l->ge;
  df_entry *e = realloc(l->e, (size_t)cap * sizeof *e);
  if (!e) return CDAG_NOMEM("provenance map");
  memmove(e + cap - tail, e + l->ge, (size_t)tail * sizeof *e);
  l->e = e;
  l->ge = cap - tail;
  l->cap = cap;
  return CDAG_OK;
}

/* Moves the full slot of rank into its list (a third piece is coming). */
static int slot_to_list(df_state *st, int rank) {
  if (!st->lists && !(st->lists = base_calloc((size_t)st->g->nprocs, sizeof *st->lists)))
    return CDAG_NOMEM("provenance map");
  df_list *l = &st->lists[rank];
  int rc;
  while (l->cap <= INLINE)
    if ((rc = list_grow(l))) return rc;
  df_slot *s = &st->slots[rank];
  memcpy(l->e, s->e, sizeof s->e);
  *l = (df_list){.e = l->e, .n = INLINE, .cap = l->cap, .gs = INLINE, .ge = l->cap, .budget = MOVE_CREDIT,
                 .last = s->e[INLINE - 1].lo};
  memset(s->e, 0, sizeof s->e);
  return CDAG_OK;
}

/* Moves the gap of a list to logical index i. */
static void gap_move(df_list *l, int64_t i) {
  if (i < l->gs) memmove(l->e + l->ge - (l->gs - i), l->e + i, (size_t)(l->gs - i) * sizeof *l->e);
  else memmove(l->e + l->gs, l->e + l->ge, (size_t)(i - l->gs) * sizeof *l->e);
  l->ge += i - l->gs;
  l->gs = i;
}

static int replace_pieces(df_state *st, int rank, uint64_t x, uint64_t y, const df_piece *p);

/* Replaces entries [i, j) of rank's list (logical indices: the pieces starting in [lo, hi))
   by the piece p starting at lo (p == NULL: by nothing), in the JudyL instead if the gap
   cannot pay for its move. */
static int list_splice(df_state *st, int rank, int64_t i, int64_t j, uint64_t lo, uint64_t hi, const df_piece *p) {
  df_list *l = &st->lists[rank];
  if (p && j - i == 1) { /* overwrites one piece: in place */
    l->e[list_phys(l, i)] = (df_entry){lo, *p};
    return CDAG_OK;
  }
  if (!p && i == j) return CDAG_OK; /* nothing to remove */
  int64_t to = llabs(i - l->gs) <= llabs(j - l->gs) ? i : j, cost = llabs(to - l->gs);
  if (cost > l->budget) {
    int rc = list_to_judy(st, rank);
    return rc ? rc : replace_pieces(st, rank, lo, hi, p);
  }
  l->budget += MOVE_CREDIT - cost;
  if (cost) gap_move(l, to);
  if (to == i) l->ge += j - i; /* the gap swallows [i, j) */
  else l->gs -= j - i;
  l->n -= j - i;
  if (!p) return CDAG_OK;
  int rc = l->gs == l->ge ? list_grow(l) : CDAG_OK;
  if (rc) return rc;
  if (lo < l->last) l->e[--l->ge] = (df_entry){lo, *p};  /* descending: the gap stays below it */
  else l->e[l->gs++] = (df_entry){lo, *p};
  l->last = lo;
  l->n++;
  return CDAG_OK;
}

/* Adds a piece starting at lo to rank's list (no piece starts there). */
static int list_insert(df_state *st, int rank, uint64_t lo, df_piece p) {
  int64_t i = list_above(&st->lists[rank], lo);
  return list_splice(st, rank, i, i, lo, lo, &p);
}

/* Adds a piece starting at lo (no piece starts there). */
static int piece_insert(df_state *st, int rank, uint64_t lo, df_piece p) {
  if (in_judy(st, rank)) return judy_insert(st, rank, lo, p);
  if (in_list(st, rank)) return list_insert(st, rank, lo, p);
  df_slot *s = &st->slots[rank];
  if (s->e[INLINE - 1].p.hi) { /* full: the map moves to the list, until that empties */
    int rc = slot_to_list(st, rank);
    return rc ? rc : list_insert(st, rank, lo, p);
  }
  int i = INLINE - 1;
  for (; i > 0 && (!s->e[i - 1].p.hi || s->e[i - 1].lo > lo); i--) s->e[i] = s->e[i - 1];
  s->e[i] = (df_entry){lo, p};
  return CDAG_OK;
}

/* Removes the piece starting at lo from rank's slot or JudyL (whose delete may allocate:
   CDAG_ERR_NOMEM). */
static int piece_delete(df_state *st, int rank, uint64_t lo) {
  if (in_judy(st, rank)) return base_imap_del(&st->maps[rank], lo);
  df_slot *s = &st->slots[rank];
  int i = 0;
  while (i < INLINE && s->e[i].lo != lo) i++;
  for (; i + 1 < INLINE; i++) s->e[i] = s->e[i + 1];
  s->e[INLINE - 1] = (df_entry){0};
  return CDAG_OK;
}

/* Makes x a piece boundary of rank's map. */
static int split_at(df_state *st, int rank, uint64_t x) {
  df_at at = map_last(st, rank, x);
  if (!at.p || at.lo == x || at.p->hi <= x) return CDAG_OK;
  df_piece tail = *at.p;
  tail.addr += x - at.lo;
  at.p->hi = x;
  return piece_insert(st, rank, x, tail);
}

static int sp_touch(df_state *st, int rank, uint64_t lo, uint64_t hi);
static int32_t first_scratch_above(const cdag_graph *g, int rank, uint64_t lo);

static int push_seg(df_seg **arr, int64_t *n, int64_t *cap, df_seg s) {
  BASE_GROW(*arr, *n, *cap, 1, "provenance segments");
  (*arr)[(*n)++] = s;
  return CDAG_OK;
}

/* Reads the provenance of rank's [a, a+len) into segments (gaps are original values). */
static int read_range(df_state *st, int rank, uint64_t a, uint64_t len, df_seg **segs, int64_t *n, int64_t *cap) {
  uint64_t b = a + len, cur = a;
  *n = 0;
  int rc0 = sp_touch(st, rank, a, b);
  if (rc0) return rc0;
  df_at at = map_from(st, rank, a);
  while (cur < b) {
    int rc;
    if (!at.p || at.lo >= b || at.lo > cur) { /* original bytes up to the next piece */
      uint64_t end = (!at.p || at.lo >= b) ? b : at.lo;
      df_seg s = {.off = cur - a, .len = end - cur, .p = {.addr = cur, .set = -1, .src = rank}};
      if ((rc = push_seg(segs, n, cap, s))) return rc;
      cur = end;
      continue;
    }
    uint64_t end = at.p->hi < b ? at.p->hi : b;
    df_seg s = {.off = cur - a, .len = end - cur, .p = *at.p};
    s.p.addr += cur - at.lo;
    if ((rc = push_seg(segs, n, cap, s))) return rc;
    cur = end;
    at = map_next(st, rank, at);
  }
  return CDAG_OK;
}

/* Replaces the pieces of [x, y) of rank's slot or JudyL (boundaries at x and y) by p
   (NULL: by nothing). */
static int replace_pieces(df_state *st, int rank, uint64_t x, uint64_t y, const df_piece *p) {
  int rc;
  for (df_at at = map_first(st, rank, x, 0); at.p && at.lo < y; at = map_first(st, rank, x, 0))
    if ((rc = piece_delete(st, rank, at.lo)) != CDAG_OK) return rc;
  return p ? piece_insert(st, rank, x, *p) : CDAG_OK;
}

/* Replaces rank's [x, x+len) with provenance p (p.addr at x). */
/* A write of a floating-point sum or product, listed (DF_COLLECT_REASSOC). */
static int note_reassoc(df_state *st, int rank, uint64_t x, uint64_t len, const df_piece *p) {
  int type = p->src >> 8, op = p->src & 0xff;
  if (p->set < 0 || !ir_type_is_float(type) || (op != CDAG_SUM && op != CDAG_PROD)) return CDAG_OK;
  df_sst *s = st->sst;
  BASE_GROW(s->reassoc, s->nreassoc, s->reassoccap, 1, "reassociated values");
  s->reassoc[s->nreassoc++] = (struct df_written){rank, x, len};
  return CDAG_OK;
}

static int write_piece(df_state *st, int rank, uint64_t x, uint64_t len, df_piece p) {
  int rc;
  uint64_t y = x + len;
  if ((rc = sp_touch(st, rank, x, y))) return rc;
  if (st->collect_reassoc && (rc = note_reassoc(st, rank, x, len, &p))) return rc;
  if ((rc = split_at(st, rank, x)) || (rc = split_at(st, rank, y))) return rc;
  p.hi = y;
  const df_piece *q = p.set < 0 && p.src == rank && p.addr == x ? NULL : &p; /* NULL: back to its own value */
  if (!in_list(st, rank)) return replace_pieces(st, rank, x, y, q);
  const df_list *l = &st->lists[rank];
  return list_splice(st, rank, list_from(l, x), list_from(l, y), x, y, q);
}

/* Lists op where a stage must start (DF_COLLECT_MIXED): it reduces values of different
   reductions, or its write leaves part of a reduced element. */
static int list_cut(df_state *st, int32_t op) {
  df_sst *s = st->sst;
  BASE_GROW(s->mixed, s->nmixed, s->mixedcap, 1, "mixed reductions");
  s->mixed[s->nmixed++] = op;
  return CDAG_OK;
}

/* Is byte x of rank inside a reduced element (not at its first byte)? */
static int inside_element(df_state *st, int rank, uint64_t x) {
  df_at at = map_last(st, rank, x);
  if (!at.p || at.lo == x || at.p->hi <= x || at.p->set < 0) return 0;
  return (at.p->addr + (x - at.lo)) % (uint64_t)ir_type_size(at.p->src >> 8) != 0;
}

enum { SPLIT_NONE, SPLIT_READ, SPLIT_WRITE };

/* Would writing segs at base leave part of a reduced element: a segment that holds part of
   one (SPLIT_READ: a message or copy moved bytes off element boundaries, as a datatype with
   holes does), or a write that covers part of one (SPLIT_WRITE)? */
static int splits_element(df_state *st, int rank, uint64_t base, const df_seg *segs, int64_t n) {
  uint64_t len = 0;
  for (int64_t i = 0; i < n; i++) {
    const df_piece *p = &segs[i].p;
    uint64_t size = p->set >= 0 ? (uint64_t)ir_type_size(p->src >> 8) : 1;
    if (p->addr % size || (p->addr + segs[i].len) % size) return SPLIT_READ;
    len = segs[i].off + segs[i].len;
  }
  return inside_element(st, rank, base) || inside_element(st, rank, base + len) ? SPLIT_WRITE : SPLIT_NONE;
}

/* Writes segs at base on rank, for op; reader: the op that read them (a message's send, or
   op). A write that would leave part of a reduced element is listed as a cut
   (DF_COLLECT_MIXED): the reader when it took part of one (a stage that starts at the send
   reads the element as plain bytes; a stage starting at the receive would still get the
   part its send took in the stage before), else op: in its stage the value is whole, and a
   stage that starts at it sees plain bytes. What this pass then computes is not used (the
   caller cuts and starts over), so the bytes become the rank's own. */
static int write_segs(df_state *st, int32_t op, int32_t reader, int rank, uint64_t base, const df_seg *segs, int64_t n) {
  int split = st->collect_mixed && n ? splits_element(st, rank, base, segs, n) : SPLIT_NONE;
  if (split != SPLIT_NONE) {
    int rc = list_cut(st, split == SPLIT_READ ? reader : op);
    uint64_t len = segs[n - 1].off + segs[n - 1].len;
    return rc ? rc : write_piece(st, rank, base, len, (df_piece){.set = -1, .src = rank, .addr = base});
  }
  for (int64_t i = 0; i < n; i++) {
    int rc = write_piece(st, rank, base + segs[i].off, segs[i].len, segs[i].p);
    if (rc) return rc;
  }
  return CDAG_OK;
}

/* ---- strided pieces ----
 * A strided copy, and a message or copy of what one left, keeps its blocks as one piece
 * while nothing reads or writes part of them: block j of the piece (n >= 2 blocks of len
 * bytes at d + j*ds) holds the origin (src, o + j*os). Packing a matrix column into a
 * buffer, sending the buffer and unpacking it at the other end are then a piece each, where
 * block by block they were a piece per block each. Any other access that meets a piece's
 * blocks first writes them into the map one by one (expands it), as they were before, so
 * the map answers as always and the result is the same as block by block. Kept: a piece's
 * blocks meet no piece of the map and no other strided piece of the rank (whole ones are
 * placed only where that holds; see sp_place); a rank keeps at most SP_MAX (then its oldest
 * expands). At the end a piece inside scratch is dropped, one whose blocks meet scratch
 * expands (the scratch bytes are then left out byte-exactly), the others are transfers
 * whole. */
enum { SP_MAX = 8, SP_SCAN = 64 };

typedef struct {
  uint64_t d, ds, len, n;   /* n blocks of len bytes, block j at d + j*ds (ds >= len) */
} df_blocks;

typedef struct df_spiece {
  df_blocks b;              /* where the blocks are (in flight: b.d unused, contiguous) */
  int32_t src;              /* block j's origin: rank src at o + j*os */
  int32_t next;             /* the rank's next strided piece, -1 none */
  uint64_t o, os;
} df_spiece;

static int contiguous(const df_blocks *b) { return b->n == 1 || b->ds == b->len; }
static int same_blocks(const df_blocks *a, const df_blocks *b) {
  return a->d == b->d && a->ds == b->ds && a->len == b->len && a->n == b->n;
}
static uint64_t hull_end(const df_blocks *b) { return b->d + (b->n - 1) * b->ds + b->len; }
static int sp_any(const df_state *st, int rank) { return st->sp_head && st->sp_head[rank] >= 0; }

/* Does a block of b meet [lo, hi)? */
static int blocks_meet_range(const df_blocks *b, uint64_t lo, uint64_t hi) {
  if (lo >= hi || hi <= b->d || lo >= hull_end(b)) return 0;
  if (contiguous(b) || lo <= b->d) return 1;
  uint64_t j = (lo - b->d) / b->ds;        /* the block starting at or below lo */
  if (lo < b->d + j * b->ds + b->len) return 1;
  return ++j < b->n && b->d + j * b->ds < hi;
}

static __int128 floor_div(__int128 a, __int128 b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* Do blocks of a and b meet? Exact when one is contiguous or both have one stride; else
   whether their hulls meet (a caller then takes the block by block way). */
static int blocks_meet(const df_blocks *a, const df_blocks *b) {
  if (contiguous(b)) return blocks_meet_range(a, b->d, hull_end(b));
  if (contiguous(a)) return blocks_meet_range(b, a->d, hull_end(a));
  if (a->d >= hull_end(b) || b->d >= hull_end(a)) return 0;
  if (a->ds != b->ds) return 1;
  /* block i of a meets block i + m of b when -delta - b.len < m*S < a.len - delta */
  __int128 S = a->ds, delta = (__int128)b->d - (__int128)a->d;
  __int128 m_lo = floor_div(-delta - (__int128)b->len, S) + 1, m_hi = -floor_div(-((__int128)a->len - delta), S) - 1;
  for (__int128 m = m_lo; m <= m_hi; m++) {
    __int128 i_lo = m < 0 ? -m : 0, i_hi = (__int128)b->n - m < (__int128)a->n ? (__int128)b->n - m : (__int128)a->n;
    if (i_lo < i_hi) return 1;
  }
  return 0;
}

/* Does a piece of rank's map meet the blocks b (or are there too many in their hull to
   look at each: SP_SCAN)? */
static int map_meets(df_state *st, int rank, const df_blocks *b) {
  uint64_t end = hull_end(b);
  int k = 0;
  for (df_at at = map_from(st, rank, b->d); at.p && at.lo < end; k++, at = map_next(st, rank, at))
    if (k == SP_SCAN || blocks_meet_range(b, at.lo, at.p->hi)) return 1;
  return 0;
}

static void sp_unlink(df_state *st, int rank, int32_t id) {
  int32_t *at = &st->sp_head[rank];
  while (*at != id) at = &st->sp[*at].next;
  *at = st->sp[id].next;
  st->sp[id].next = st->sp_free;
  st->sp_free = id;
}

/* Writes strided piece id's blocks into rank's map one by one and forgets it. */
static int sp_expand(df_state *st, int rank, int32_t id) {
  df_spiece s = st->sp[id];
  sp_unlink(st, rank, id);
  st->sst->strided_expanded += s.b.n;
  for (uint64_t j = 0; j < s.b.n; j++) {
    df_piece p = {.set = -1, .src = s.src, .addr = s.o + j * s.os};
    int rc = write_piece(st, rank, s.b.d + j * s.b.ds, s.b.len, p);
    if (rc) return rc;
  }
  return CDAG_OK;
}

/* Expands rank's strided pieces that meet [lo, hi): an access is about to read or write
   part of them through the map. */
static int sp_touch(df_state *st, int rank, uint64_t lo, uint64_t hi) {
  if (!sp_any(st, rank)) return CDAG_OK;
  for (int32_t id = st->sp_head[rank], next; id >= 0; id = next) {
    next = st->sp[id].next;
    int rc = blocks_meet_range(&st->sp[id].b, lo, hi) ? sp_expand(st, rank, id) : CDAG_OK;
    if (rc) return rc;
  }
  return CDAG_OK;
}

/* Rank's strided piece whose blocks are b's bytes in b's order (the same blocks, or both
   contiguous over the same bytes), -1 none. */
static int32_t sp_exact(const df_state *st, int rank, const df_blocks *b) {
  if (!sp_any(st, rank)) return -1;
  for (int32_t id = st->sp_head[rank]; id >= 0; id = st->sp[id].next) {
    const df_blocks *s = &st->sp[id].b;
    if (contiguous(s) && contiguous(b) ? s->d == b->d && s->n * s->len == b->n * b->len : same_blocks(s, b))
      return id;
  }
  return -1;
}

/* Are the bytes of blocks b of rank its own values (met by no piece, strided or not)? */
static int own_bytes(df_state *st, int rank, const df_blocks *b) {
  for (int32_t id = sp_any(st, rank) ? st->sp_head[rank] : -1; id >= 0; id = st->sp[id].next)
    if (blocks_meet(&st->sp[id].b, b)) return 0;
  return !map_meets(st, rank, b);
}

/* Can blocks d of rank take a strided piece whole: do they meet no piece of the map (when
   contiguous: no reduced element they would cut, DF_COLLECT_MIXED) and no strided piece
   but ones at exactly d (which they replace)? */
static int placeable(df_state *st, int rank, const df_blocks *d) {
  for (int32_t id = sp_any(st, rank) ? st->sp_head[rank] : -1; id >= 0; id = st->sp[id].next) {
    const df_blocks *s = &st->sp[id].b;
    if (blocks_meet(s, d) && !same_blocks(s, d)) return 0;
  }
  if (!contiguous(d)) return !map_meets(st, rank, d);
  return !st->collect_mixed || (!inside_element(st, rank, d->d) && !inside_element(st, rank, hull_end(d)));
}

/* Would a strided copy into contiguous d cut a reduced element at one of its blocks' inner
   edges (d + j len, 0 < j < n; DF_COLLECT_MIXED)? Block by block, each block's write checks
   its own ends; written whole, only d's ends are. Looks at most SP_SCAN pieces, and at one
   edge per piece when len is a whole number of its elements (all its edges then align
   alike); otherwise it answers yes, and the copy goes block by block. */
static int cuts_inner_edge(df_state *st, int rank, const df_blocks *d) {
  uint64_t end = hull_end(d);
  int k = 0;
  for (df_at at = map_from(st, rank, d->d); at.p && at.lo < end; k++, at = map_next(st, rank, at)) {
    if (k == SP_SCAN) return 1;
    if (at.p->set < 0) continue;
    uint64_t size = (uint64_t)ir_type_size(at.p->src >> 8), lo = (at.lo > d->d ? at.lo : d->d) + 1;
    uint64_t e = d->d + ((lo - d->d) + d->len - 1) / d->len * d->len;   /* the first edge at or above lo */
    if (e >= at.p->hi || e >= end) continue;
    if (d->len % size || (at.p->addr + (e - at.lo)) % size) return 1;
  }
  return 0;
}

static int sp_count(const df_state *st, int rank, int32_t *oldest) {
  int n = 0;
  for (int32_t id = st->sp_head[rank]; id >= 0; id = st->sp[id].next) n++, *oldest = id;
  return n;
}

static int sp_link(df_state *st, int rank, const df_spiece *s) {
  if (!st->sp_head) {
    if (!(st->sp_head = malloc((size_t)st->g->nprocs * sizeof *st->sp_head))) return CDAG_NOMEM("strided pieces");
    memset(st->sp_head, 0xff, (size_t)st->g->nprocs * sizeof *st->sp_head);
    st->sp_free = -1;
  }
  int32_t oldest = -1;
  if (sp_count(st, rank, &oldest) == SP_MAX) {
    int rc = sp_expand(st, rank, oldest);
    if (rc) return rc;
  }
  int32_t id = st->sp_free;
  if (id >= 0) {
    st->sp_free = st->sp[id].next;
  } else {
    BASE_GROW(st->sp, st->nsp, st->spcap, 1, "strided pieces");
    id = (int32_t)st->nsp++;
  }
  st->sp[id] = *s;
  st->sp[id].next = st->sp_head[rank];
  st->sp_head[rank] = id;
  return CDAG_OK;
}

/* Places s (its origin) at blocks d of rank whole, when placeable: the strided pieces at d
   go, the map's pieces under contiguous d go, and a piece that is the bytes' own value is
   not kept. *done = 0: nothing changed (the caller goes block by block). */
static int sp_place(df_state *st, int rank, df_blocks d, const df_spiece *s, int *done) {
  *done = placeable(st, rank, &d);
  if (!*done) return CDAG_OK;
  int32_t same = sp_exact(st, rank, &d);
  if (same >= 0 && st->sp[same].b.ds == d.ds) sp_unlink(st, rank, same);
  int rc = contiguous(&d) ? write_piece(st, rank, d.d, d.n * d.len, (df_piece){.set = -1, .src = rank, .addr = d.d})
                          : CDAG_OK;
  st->sst->strided_whole++;
  if (rc || (s->src == rank && s->o == d.d && s->os == d.ds)) return rc;
  df_spiece p = *s;
  p.b = d;
  return sp_link(st, rank, &p);
}

/* The blocks of a copy (its sides' strides; listed sides: -1). */
static int copy_sides(const cdag_graph *g, int32_t op, df_blocks *from, df_blocks *to) {
  ir_blocks k = ir_copy_blocks(g, op);
  if (k.from_at || k.to_at) return -1;
  *from = (df_blocks){g->addr2[op], k.from, k.len, k.n};
  *to = (df_blocks){g->addr[op], k.to, k.len, k.n};
  return 0;
}

/* A copy whose source is one strided origin (a strided copy of the rank's own bytes, or a
   copy of exactly a strided piece's bytes) places it at its destination whole when it can;
   *done = 0: not this way. */
static int copy_whole(df_state *st, int32_t op, int *done) {
  const cdag_graph *g = st->g;
  int rank = g->rank[op];
  df_blocks from, to;
  *done = 0;
  if ((!ir_is_strided(g, op) && !sp_any(st, rank)) || copy_sides(g, op, &from, &to)) return CDAG_OK;
  df_spiece s;
  int32_t id = sp_exact(st, rank, &from);
  if (id >= 0) s = st->sp[id];
  else if (ir_is_strided(g, op) && own_bytes(st, rank, &from)) s = (df_spiece){.b = from, .src = rank, .o = from.d, .os = from.ds};
  else return CDAG_OK;
  if ((s.b.len != to.len || s.b.n != to.n) && !contiguous(&to)) return CDAG_OK;
  if (s.b.len != to.len || s.b.n != to.n) to = (df_blocks){to.d, s.b.len, s.b.len, s.b.n};
  if (st->collect_mixed && ir_is_strided(g, op) && contiguous(&to) && cuts_inner_edge(st, rank, &to)) return CDAG_OK;
  return sp_place(st, rank, to, &s, done);
}

/* A message of s's blocks received at addr of rank (whole, or its blocks one by one). */
static int recv_whole(df_state *st, int32_t r, int32_t send, const df_spiece *s) {
  int rank = st->g->rank[r], done;
  df_blocks at = {st->g->addr[r], s->b.len, s->b.len, s->b.n};
  int rc = sp_place(st, rank, at, s, &done);
  if (rc || done) return rc;
  st->nsegs = 0;
  for (uint64_t j = 0; j < s->b.n && rc == CDAG_OK; j++) {
    df_seg seg = {.off = j * s->b.len, .len = s->b.len, .p = {.set = -1, .src = s->src, .addr = s->o + j * s->os}};
    rc = push_seg(&st->segs, &st->nsegs, &st->segcap, seg);
  }
  return rc ? rc : write_segs(st, r, send, rank, at.d, st->segs, st->nsegs);
}

/* A send of exactly a strided piece's bytes carries the piece: its index (-1: not so). */
static int32_t send_whole(const df_state *st, int32_t s) {
  const cdag_graph *g = st->g;
  df_blocks b = {g->addr[s], g->bytes[s], g->bytes[s], 1};
  return sp_exact(st, g->rank[s], &b);
}

enum { SCRATCH_NONE, SCRATCH_MEETS, SCRATCH_HOLDS };
/* Where rank's scratch is against blocks b: holding them all (one interval over their
   hull), meeting some (or too many intervals in their hull to look at each: SP_SCAN), or
   none. */
static int scratch_at(const cdag_graph *g, int rank, const df_blocks *b) {
  uint64_t end = hull_end(b);
  int32_t k = first_scratch_above(g, rank, b->d), last = g->scr_start[rank + 1];
  if (k < last && g->scr_lo[k] <= b->d && g->scr_hi[k] >= end) return SCRATCH_HOLDS;
  for (int n = 0; k < last && g->scr_lo[k] < end; k++, n++)
    if (n == SP_SCAN || blocks_meet_range(b, g->scr_lo[k], g->scr_hi[k])) return SCRATCH_MEETS;
  return SCRATCH_NONE;
}

/* Strided piece id of rank as a transfer whole, kept for collect in rank's address order
   (a rank keeps at most SP_MAX pieces: an insertion). */
static int sp_keep_whole(df_state *st, int rank, int32_t id) {
  const df_spiece *p = &st->sp[id];
  df_xfer x = {.src = p->src, .dst = rank, .src_addr = p->o, .dst_addr = p->b.d, .len = p->b.len, .blocks = p->b.n,
               .src_stride = p->os, .dst_stride = p->b.ds};
  if (contiguous(&p->b) && p->os == p->b.len) x.len *= x.blocks, x.blocks = 0, x.src_stride = x.dst_stride = 0;
  BASE_GROW(st->whole, st->nwhole, st->wholecap, 1, "SST transfers");
  int64_t i = st->nwhole++;
  for (; i > 0 && st->whole[i - 1].dst == rank && st->whole[i - 1].dst_addr > x.dst_addr; i--) st->whole[i] = st->whole[i - 1];
  st->whole[i] = x;
  sp_unlink(st, rank, id);
  return CDAG_OK;
}

/* Does a block of rank's piece p hold its own value at its own address (block j from
   o + j*os to d + j*ds with both equal)? Such bytes are no transfer: the piece expands, and
   the map drops them. At most one j, as the strides differ (equal ones: every block, and
   sp_place keeps no such piece). */
static int own_block(const df_spiece *p, int rank) {
  if (p->src != rank || p->os == p->b.ds) return 0;
  __int128 gap = (__int128)p->b.d - (__int128)p->o, step = (__int128)p->os - (__int128)p->b.ds;
  return gap % step == 0 && gap / step >= 0 && gap / step < (__int128)p->b.n;
}

/* The strided pieces that are left: dropped inside scratch, expanded into the map where
   their blocks meet scratch or one holds its own value, else kept whole. */
static int sp_finish(df_state *st) {
  const cdag_graph *g = st->g;
  for (int r = 0; st->sp_head && r < g->nprocs; r++)
    while (st->sp_head[r] >= 0) {
      int32_t id = st->sp_head[r];
      int at = scratch_at(g, r, &st->sp[id].b), rc = CDAG_OK;
      if (at == SCRATCH_HOLDS) sp_unlink(st, r, id);
      else rc = at == SCRATCH_MEETS || own_block(&st->sp[id], r) ? sp_expand(st, r, id) : sp_keep_whole(st, r, id);
      if (rc) return rc;
    }
  return CDAG_OK;
}

/* In-flight values of strided pieces (else of segments). */
#define GSTASHED ((Word_t)1 << 62)

/* A send of strided piece id whole: to its receive now, or in flight until it runs. */
static int send_strided(df_state *st, int32_t s, int32_t r, int recv_is_next, int32_t id) {
  df_spiece p = st->sp[id];
  st->sst->splits++; /* its blocks are pieces of their own */
  if (recv_is_next) return recv_whole(st, r, s, &p);
  BASE_GROW(st->gstash, st->ngstash, st->gstashcap, 1, "in-flight messages");
  st->gstash[st->ngstash++] = p;
  PWord_t pv = (PWord_t)JudyLIns(&st->inflight, (Word_t)s, PJE0);
  if (pv == PJERR) return CDAG_NOMEM("in-flight messages");
  *pv = GSTASHED | (Word_t)st->ngstash;
  return CDAG_OK;
}

/* A send takes its data when it runs; the receive writes it when it runs. When the
   receive is not next in the order, the segments wait in the stash. */
static int do_send(df_state *st, int32_t s, int32_t r, int recv_is_next) {
  const cdag_graph *g = st->g;
  if (g->bytes[s] == 0) return CDAG_OK; /* a pure synchronisation moves nothing */
  int32_t whole = send_whole(st, s);
  if (whole >= 0) return send_strided(st, s, r, recv_is_next, whole);
  int rc = read_range(st, g->rank[s], g->addr[s], g->bytes[s], &st->segs, &st->nsegs, &st->segcap);
  if (rc) return rc;
  if (st->nsegs > 1) st->sst->splits++;
  if (recv_is_next) return write_segs(st, r, s, g->rank[r], g->addr[r], st->segs, st->nsegs);
  BASE_GROW(st->stash_at, st->nstash_at, st->stash_atcap, 1, "in-flight messages");
  st->stash_at[st->nstash_at++] = (df_span){st->nstash, st->nsegs};
  for (int64_t i = 0; i < st->nsegs; i++)
    if ((rc = push_seg(&st->stash, &st->nstash, &st->stashcap, st->segs[i]))) return rc;
  PWord_t pv = (PWord_t)JudyLIns(&st->inflight, (Word_t)s, PJE0);
  if (pv == PJERR) return CDAG_NOMEM("in-flight messages");
  *pv = (Word_t)st->nstash_at;
  return CDAG_OK;
}

/* Only stashed sends are in flight: an empty map (a synchronisation, or a receive that ran
   right after its send) answers without touching the send, which may lie far away. */
static int do_recv(df_state *st, int32_t r, int32_t s) {
  if (!st->inflight) return CDAG_OK;
  PWord_t pv = (PWord_t)JudyLGet(st->inflight, (Word_t)s, PJE0);
  if (!pv) return CDAG_OK; /* written together with its send */
  int rc;
  if (*pv & GSTASHED) {
    rc = recv_whole(st, r, s, &st->gstash[(*pv & ~GSTASHED) - 1]);
  } else {
    int64_t k = (int64_t)*pv - 1;
    rc = write_segs(st, r, s, st->g->rank[r], st->g->addr[r], st->stash + st->stash_at[k].first, st->stash_at[k].n);
  }
  if (JudyLDel(&st->inflight, (Word_t)s, PJE0) == JERR && rc == CDAG_OK) rc = CDAG_NOMEM("in-flight messages");
  if (!st->inflight) st->nstash = st->nstash_at = st->ngstash = 0; /* nothing in flight: reuse the stashes */
  return rc;
}

/* A copy of one strided origin moves it whole (copy_whole); else a strided copy moves its
   blocks one by one: its sources and destinations never overlap (ir_add_copy_strided), so
   no block reads what another wrote. */
static int do_copy(df_state *st, int32_t op) {
  const cdag_graph *g = st->g;
  if (g->addr[op] == g->addr2[op]) return CDAG_OK;
  int done, rc = copy_whole(st, op, &done);
  if (rc || done) return rc;
  ir_blocks k = ir_copy_blocks(g, op);
  for (uint64_t j = 0; j < k.n && rc == CDAG_OK; j++) {
    rc = read_range(st, g->rank[op], g->addr2[op] + ir_block_from(&k, j), k.len, &st->segs, &st->nsegs, &st->segcap);
    if (rc == CDAG_OK) rc = write_segs(st, op, op, g->rank[op], g->addr[op] + ir_block_to(&k, j), st->segs, st->nsegs);
  }
  return rc;
}

/* One operand of a reduce at byte offset o of segment s. */
static int operand_at(df_state *st, int32_t op, const df_seg *s, uint64_t o, df_operand *x) {
  int typeop = st->g->peer[op] << 8 | st->g->tag[op];
  if (s->p.set >= 0 && s->p.src != typeop) {
    char d[200];
    return cdag__error(CDAG_ERR_UNSUPPORTED, "%s combines a value reduced with %s/%s using %s/%s (mixed ops are not supported)",
                       ir_describe(st->g, op, d, sizeof d), ir_rop_name(s->p.src & 0xff), ir_type_name(s->p.src >> 8),
                       ir_rop_name(st->g->tag[op]), ir_type_name(st->g->peer[op]));
  }
  *x = (df_operand){.set = s->p.set, .rank = s->p.src, .addr = s->p.addr + (o - s->off)};
  if (s->p.set >= 0 && x->addr % (uint64_t)ir_type_size(st->g->peer[op])) {
    char d[200];
    return cdag__error(CDAG_ERR_UNSUPPORTED, "%s: byte %llu of its operands holds a reduced value moved off its "
                       "element boundaries (partial-element overlap is not supported)",
                       ir_describe(st->g, op, d, sizeof d), (unsigned long long)o);
  }
  return CDAG_OK;
}

static int misaligned(df_state *st, int32_t op, uint64_t o) {
  char d[200];
  return cdag__error(CDAG_ERR_UNSUPPORTED, "%s: byte %llu of its operands starts a piece of other provenance "
                     "inside an element of %d bytes (partial-element overlap is not supported)",
                     ir_describe(st->g, op, d, sizeof d), (unsigned long long)o, ir_type_size(st->g->peer[op]));
}

/* Does a segment of either operand hold a value reduced with another op or type, or start
   inside an element (pieces of other provenance, as reductions of a smaller type leave)? */
static int mixes_in(const df_seg *seg, int64_t n, int typeop, uint64_t size) {
  for (int64_t i = 0; i < n; i++)
    if ((seg[i].p.set >= 0 && (seg[i].p.src != typeop || seg[i].p.addr % size)) || seg[i].off % size) return 1;
  return 0;
}

static int mixes(const df_state *st, int32_t op) {
  int typeop = st->g->peer[op] << 8 | st->g->tag[op];
  uint64_t size = (uint64_t)ir_type_size(st->g->peer[op]);
  return mixes_in(st->segs, st->nsegs, typeop, size) || mixes_in(st->segs2, st->nsegs2, typeop, size);
}

/* DF_COLLECT_MIXED: the reduce is listed, and combines what its operands hold as values of
   their own (origins), as it will once a stage starts at it (src/stage). */
static int collect_mixed(df_state *st, int32_t op) {
  const cdag_graph *g = st->g;
  int rc = list_cut(st, op);
  if (rc) return rc;
  df_piece own = {.set = -1, .src = g->rank[op]};
  st->segs[0] = (df_seg){.off = 0, .len = g->bytes[op], .p = own};
  st->segs[0].p.addr = g->addr2[op];
  st->segs2[0] = (df_seg){.off = 0, .len = g->bytes[op], .p = own};
  st->segs2[0].p.addr = g->addr[op];
  st->nsegs = st->nsegs2 = 1;
  return CDAG_OK;
}

/* The sets of reduce op's result, segment by segment (into st->out), from its operands'
   segments (segs, segs2). */
static int combine(df_state *st, int32_t op) {
  const cdag_graph *g = st->g;
  uint64_t size = (uint64_t)ir_type_size(g->peer[op]), len = g->bytes[op];
  int rc;
  st->nout = 0;
  int64_t i = 0, j = 0;
  for (uint64_t o = 0; o < len;) {
    const df_seg *a = &st->segs[i], *b = &st->segs2[j];
    uint64_t end = a->off + a->len < b->off + b->len ? a->off + a->len : b->off + b->len;
    if (o % size || end % size) return misaligned(st, op, o % size ? o : end);
    df_operand x, y;
    if ((rc = operand_at(st, op, a, o, &x)) || (rc = operand_at(st, op, b, o, &y))) return rc;
    df_seg s = {.off = o, .len = end - o, .p = {.addr = 0, .src = g->peer[op] << 8 | g->tag[op]}};
    if ((rc = df_sets_union(&st->sets, &x, &y, g->tag[op], &s.p.set))) return rc;
    if ((rc = push_seg(&st->out, &st->nout, &st->outcap, s))) return rc;
    o = end;
    if (o == a->off + a->len) i++;
    if (o == b->off + b->len) j++;
  }
  return CDAG_OK;
}

/* Sets that outgrow the graph: more runs interned than RUNS_PER_OP per op and rank, and an
   operand of more than DF_SET_CAP runs. A chain of reduces onto one buffer whose operands
   shift (MPICH's rma/rma_contig: exclusive ors of a window onto itself at moving offsets)
   makes each set a run longer than the last, quadratic in the chain (1,000 iterations: 1.4
   million runs, 670 in one set; 10,000: out of memory); trees and rings stay far below. */
enum { RUNS_PER_OP = 4 };
static int outgrown(const df_state *st) {
  if (st->sets.nruns <= RUNS_PER_OP * (st->g->nops + st->g->nprocs)) return 0;
  for (int64_t i = 0; i < st->nsegs + st->nsegs2; i++) {
    const df_seg *x = i < st->nsegs ? &st->segs[i] : &st->segs2[i - st->nsegs];
    if (x->p.set >= 0 && st->sets.sets[x->p.set].nruns > DF_SET_CAP) return 1;
  }
  return 0;
}

/* The most values a floating-point reduction among the reduce's operands combines (0: none). */
static int64_t float_operands(const df_state *st) {
  int64_t n = 0;
  for (int64_t i = 0; i < st->nsegs + st->nsegs2; i++) {
    const df_seg *x = i < st->nsegs ? &st->segs[i] : &st->segs2[i - st->nsegs];
    if (x->p.set >= 0 && ir_type_is_float(x->p.src >> 8) && st->sets.sets[x->p.set].ncontrib > n)
      n = st->sets.sets[x->p.set].ncontrib;
  }
  return n;
}

/* The sets of a mixed reduce's result over floating-point reductions (DF_COLLECT_REASSOC),
   listed: the result moves on with them. */
static int note_derived(df_state *st, int64_t n) {
  df_sst *s = st->sst;
  for (int64_t i = 0; n && st->collect_reassoc && i < st->nout; i++) {
    BASE_GROW(s->derived, s->nderived, s->derivedcap, 1, "derived values");
    s->derived[s->nderived++] = (struct df_derived){st->out[i].p.set, n};
  }
  return CDAG_OK;
}

/* DF_COLLECT_MIXED for reduce op: listed, its operands taken as values of their own; *n the
   most values a floating-point reduction among them combined. */
static int reduce_mixed(df_state *st, int32_t op, int64_t *n) {
  *n = float_operands(st);
  return collect_mixed(st, op);
}

/* A reduce whose operands mix ops or types, whose sets outgrow the graph, or whose result
   would count a value too often (DF_MULT_MAX), is listed with DF_COLLECT_MIXED: it combines
   its operands as values of their own (a stage starts there). */
static int do_reduce(df_state *st, int32_t op) {
  const cdag_graph *g = st->g;
  int rank = g->rank[op], rc;
  uint64_t len = g->bytes[op];
  if ((rc = read_range(st, rank, g->addr2[op], len, &st->segs, &st->nsegs, &st->segcap))) return rc;
  if ((rc = read_range(st, rank, g->addr[op], len, &st->segs2, &st->nsegs2, &st->segcap2))) return rc;
  int64_t derived = 0;
  int own = st->collect_mixed && (mixes(st, op) || outgrown(st));
  if (own && (rc = reduce_mixed(st, op, &derived))) return rc;
  rc = combine(st, op);
  if (rc == CDAG_ERR_UNSUPPORTED && st->collect_mixed && !own) {
    cdag__error_clear();
    if ((rc = reduce_mixed(st, op, &derived)) == CDAG_OK) rc = combine(st, op);
  }
  if (rc == CDAG_OK) rc = note_derived(st, derived);
  return rc ? rc : write_segs(st, op, op, rank, g->addr[op], st->out, st->nout);
}

/* The match order of a graph added rank by rank jumps across the op arrays at every step
   (a wavefront over the ranks). Prefetching each op's fields a few ops ahead did not hide
   those misses on this kind of machine (no distance tried changed anything, presumably
   as the prefetches miss the TLB), but loading a block's fields in one tight loop before
   the block runs lets the misses overlap: propagation of the rank-by-rank allreduce at
   p = 2^20 took 9.4 s before, 6.8 s after. A block whose ids lie close together (a graph
   added round by round) is read nearly in order, which the hardware prefetches: the
   loop would cost more than it saves there. */
enum { FETCH_BLOCK = 128 };

/* Do more than a quarter of the steps between the ids jump past a cache line of an
   8-byte field? */
static int scattered(const int32_t *ids, int64_t n) {
  int64_t far = 0;
  for (int64_t j = 1; j < n; j++) far += (uint32_t)(ids[j] - ids[j - 1] + 8) > 16;
  return 4 * far > n;
}

static void fetch_block(df_state *st, const match_result *m, const int32_t *ids, int64_t n) {
  const cdag_graph *g = st->g;
  uint64_t sum = 0;
  for (int64_t j = 0; j < n; j++) {
    int32_t op = ids[j];
    sum += g->kind[op] + (uint64_t)g->rank[op] + g->addr[op] + g->bytes[op] + (uint64_t)g->peer[op] +
           (uint64_t)g->tag[op] + (uint64_t)m->partner[op] + (g->addr2 ? g->addr2[op] : 0);
  }
  for (int64_t j = 0; j < n; j++) sum += st->slots[g->rank[ids[j]]].e[0].lo; /* now in cache */
  st->fetched = sum;
}

static int propagate(df_state *st, const match_result *m) {
  const cdag_graph *g = st->g;
  for (int64_t i = 0; i < g->nops; i++) {
    int32_t op = m->order[i];
    int rc = CDAG_OK;
    if (i % FETCH_BLOCK == 0 && i + FETCH_BLOCK < g->nops) { /* the next block */
      const int32_t *next = m->order + i + FETCH_BLOCK;
      int64_t n = g->nops - i - FETCH_BLOCK < FETCH_BLOCK ? g->nops - i - FETCH_BLOCK : FETCH_BLOCK;
      if (scattered(next, n)) fetch_block(st, m, next, n);
    }
    if (i + IR_AHEAD < g->nops) { /* the rank's slot, the entry before its list's gap, or the root
                                     node of its JudyL (tag bits aside) */
      int32_t r = g->rank[m->order[i + IR_AHEAD]];
      IR_PREFETCH(&st->slots[r]);
      if (in_list(st, r)) IR_PREFETCH(&st->lists[r].e[st->lists[r].gs ? st->lists[r].gs - 1 : st->lists[r].ge]);
      else if (in_judy(st, r)) IR_PREFETCH((const void *)((uintptr_t)st->maps[r].judy & ~(uintptr_t)7));
    }
    switch (g->kind[op]) {
      case IR_SEND: rc = do_send(st, op, m->partner[op], i + 1 < g->nops && m->order[i + 1] == m->partner[op]); break;
      case IR_RECV: rc = do_recv(st, op, m->partner[op]); break;
      case IR_COPY: rc = do_copy(st, op); break;
      case IR_REDUCE: rc = do_reduce(st, op); break;
      default: break; /* calc moves nothing */
    }
    if (rc) return rc;
  }
  return CDAG_OK;
}

/* ---- collecting the final tuples ---- */

/* Do x's bytes follow last's, from origins that follow last's (both one block)? */
static int xfer_continues(const df_xfer *last, const df_xfer *x) {
  return last->blocks <= 1 && x->blocks <= 1 && last->dst == x->dst && last->dst_addr + last->len == x->dst_addr &&
         last->src == x->src && last->src_addr + last->len == x->src_addr;
}

/* Appends x, or extends the last transfer when x continues it. */
static int push_xfer(df_state *st, const df_xfer *x) {
  df_sst *s = st->sst;
  if (s->nxfers > 0 && xfer_continues(&s->xfers[s->nxfers - 1], x)) {
    s->xfers[s->nxfers - 1].len += x->len;
    return CDAG_OK;
  }
  BASE_GROW(s->xfers, s->nxfers, st->xfercap, 1, "SST transfers");
  s->xfers[s->nxfers++] = *x;
  return CDAG_OK;
}

static int emit_xfer(df_state *st, int rank, uint64_t lo, uint64_t hi, const df_piece *p, uint64_t plo) {
  df_xfer x = {.src = p->src, .dst = rank, .src_addr = p->addr + (lo - plo), .dst_addr = lo, .len = hi - lo};
  return push_xfer(st, &x);
}

/* Does a reduction piece at [lo, ...) of rank, with p's set shifted by shift, continue the
   tuple `last` element for element (same op and type, the next address, and the set of
   the next element)? Then the two are one tuple, as when the value was computed in one
   piece: ring and recursive-doubling allreduces give the same tuples. */
static int red_continues(const df_state *st, const df_red *last, int rank, uint64_t lo, const df_piece *p,
                         uint64_t shift) {
  int type = p->src >> 8;
  uint64_t size = (uint64_t)ir_type_size(type), ext = last->count * size;
  if (last->dst != rank || last->dst_addr + ext != lo || last->type != (uint32_t)type || last->op != (p->src & 0xff)) return 0;
  const df_set *a = &st->sets.sets[last->set], *b = &st->sets.sets[p->set];
  if (a->nruns != b->nruns || a->ncontrib != b->ncontrib) return 0;
  const df_run *x = st->sets.runs + a->first, *y = st->sets.runs + b->first;
  for (int32_t i = 0; i < a->nruns; i++)
    if (x[i].lo != y[i].lo || x[i].hi != y[i].hi || x[i].mult != y[i].mult || x[i].addr + ext != y[i].addr + shift)
      return 0;
  return 1;
}

static int emit_red(df_state *st, int rank, uint64_t lo, uint64_t hi, const df_piece *p, uint64_t plo) {
  df_sst *s = st->sst;
  int type = p->src >> 8, size = ir_type_size(type);
  uint64_t shift = p->addr + (lo - plo);
  if ((shift % (uint64_t)size || (hi - lo) % (uint64_t)size) && s->nmixed) return CDAG_OK;   /* cut and done again */
  if (shift % (uint64_t)size || (hi - lo) % (uint64_t)size) {
    return cdag__error(CDAG_ERR_UNSUPPORTED, "rank %d: bytes [0x%llx, 0x%llx) end with part of a reduced %s element "
                       "(a later write or scratch covers part of an element, or a message moved bytes off element "
                       "boundaries; partial-element overlap is not supported)", rank, (unsigned long long)lo,
                       (unsigned long long)hi, ir_type_name(type));
  }
  if (s->nreds > 0 && red_continues(st, &s->reds[s->nreds - 1], rank, lo, p, shift)) {
    s->reds[s->nreds - 1].count += (hi - lo) / (uint64_t)size;
    return CDAG_OK;
  }
  int32_t set;
  int rc = df_sets_shift(&st->sets, p->set, shift, &set);
  if (rc) return rc;
  BASE_GROW(s->reds, s->nreds, st->redcap, 1, "SST reductions");
  s->reds[s->nreds++] = (df_red){.dst = rank, .set = set, .dst_addr = lo, .count = (hi - lo) / (uint64_t)size,
                                 .type = (uint32_t)type, .op = (uint8_t)(p->src & 0xff)};
  return CDAG_OK;
}

/* The rank's first scratch interval that ends above lo (they are sorted and disjoint, so
   their ends ascend): O(log) per piece, where a scan from the first was O(intervals) and a
   recording with 10^5 packing areas spent minutes here. */
static int32_t first_scratch_above(const cdag_graph *g, int rank, uint64_t lo) {
  int32_t a = g->scr_start[rank], b = g->scr_start[rank + 1];
  while (a < b) {
    int32_t mid = a + (b - a) / 2;
    if (g->scr_hi[mid] <= lo) a = mid + 1;
    else b = mid;
  }
  return a;
}

/* Where x falls in piece p (starting at plo) rounded to its elements (dir 1: up, 0: down):
   scratch that covers part of a reduced element is delivered with it (its contents are
   anyone's), where cutting the element would leave part of one. Bytes of origin: x. */
static uint64_t element_edge(const df_piece *p, uint64_t plo, uint64_t x, int up) {
  if (p->set < 0) return x;
  uint64_t size = (uint64_t)ir_type_size(p->src >> 8), off = (p->addr + (x - plo)) % size;
  return !off ? x : up ? x + (size - off) : x - off;
}

/* Emits [lo, hi) of piece p (starting at plo) minus the rank's scratch intervals. */
static int emit_piece(df_state *st, int rank, uint64_t lo, uint64_t hi, const df_piece *p) {
  const cdag_graph *g = st->g;
  uint64_t plo = lo, cur = lo;
  for (int32_t k = first_scratch_above(g, rank, lo); k < g->scr_start[rank + 1] && cur < hi; k++) {
    if (g->scr_hi[k] <= cur) continue;
    if (g->scr_lo[k] >= hi) break;
    uint64_t slo = g->scr_lo[k] > cur ? element_edge(p, plo, g->scr_lo[k], 1) : cur;
    uint64_t shi = g->scr_hi[k] < hi ? element_edge(p, plo, g->scr_hi[k], 0) : hi;
    if (slo >= shi) continue;   /* within one element: delivered with it */
    if (slo > cur) {
      int rc = p->set < 0 ? emit_xfer(st, rank, cur, slo, p, plo) : emit_red(st, rank, cur, slo, p, plo);
      if (rc) return rc;
    }
    cur = shi;
  }
  if (cur >= hi) return CDAG_OK;
  return p->set < 0 ? emit_xfer(st, rank, cur, hi, p, plo) : emit_red(st, rank, cur, hi, p, plo);
}

/* Reserves one output tuple per live piece of origin (most pieces become one tuple), so the
   output does not grow by doubling: a doubling copies, and the copy is this stage's peak. */
static int reserve_xfers(df_state *st) {
  int64_t n = 0;
  for (int r = 0; r < st->g->nprocs; r++)
    for (df_at at = map_first(st, r, 0, 0); at.p; at = map_next(st, r, at)) n += at.p->set < 0;
  BASE_GROW(st->sst->xfers, 0, st->xfercap, n, "SST transfers");
  return CDAG_OK;
}

/* Emits the strided transfers kept whole for rank that start below lo (from *next on). */
static int emit_whole(df_state *st, int rank, uint64_t lo, int64_t *next) {
  int rc = CDAG_OK;
  for (; *next < st->nwhole && st->whole[*next].dst == rank && st->whole[*next].dst_addr < lo && !rc; ++*next)
    rc = push_xfer(st, &st->whole[*next]);
  return rc;
}

static int collect(df_state *st) {
  int rc = sp_finish(st);
  if (rc == CDAG_OK) rc = reserve_xfers(st);
  int64_t next = 0;
  for (int r = 0; r < st->g->nprocs && rc == CDAG_OK; r++) {
    for (df_at at = map_first(st, r, 0, 0); at.p && rc == CDAG_OK; at = map_next(st, r, at)) {
      df_piece p = *at.p;
      rc = emit_whole(st, r, at.lo, &next);
      if (rc == CDAG_OK) rc = emit_piece(st, r, at.lo, p.hi, &p);
    }
    if (rc == CDAG_OK) rc = emit_whole(st, r, UINT64_MAX, &next);
  }
  return rc;
}

static void free_state(df_state *st) {
  if (st->lists)
    for (int r = 0; r < st->g->nprocs; r++) free(st->lists[r].e);
  free(st->lists);
  if (st->maps)
    for (int r = 0; r < st->g->nprocs; r++) base_imap_clear(&st->maps[r]);
  free(st->maps); free(st->slots); free(st->pieces); free(st->segs); free(st->segs2); free(st->out);
  free(st->stash); free(st->stash_at);
  free(st->sp_head); free(st->sp); free(st->gstash); free(st->whole);
  Word_t freed;
  freed = JudyLFreeArray(&st->inflight, PJE0);
  (void)freed;
  ir_trim_heap(st->g); /* the maps' many small nodes */
}

/* Hands the interned sets over to the result. */
static void move_sets(df_state *st) {
  df_sst *s = st->sst;
  if (!s) {
    df_sets_free(&st->sets);
    return;
  }
  s->sets = st->sets.sets;
  s->nsets = st->sets.nsets;
  s->runs = st->sets.runs;
  s->nruns = st->sets.nruns;
  st->sets.sets = NULL;
  st->sets.runs = NULL;
  df_sets_free(&st->sets);
}

static int has_zero_byte_message(const cdag_graph *g) {
  for (int64_t i = 0; i < g->nops; i++)
    if (g->kind[i] == IR_SEND && g->bytes[i] == 0 && g->peer[i] != g->rank[i]) return 1;
  return 0;
}

/* The SST follows a strided op block by block (each block its own pieces and transfers: about
   a microsecond and 100 bytes each, end to end), so a graph's strided blocks are bounded:
   2^26 of them are a minute and some 7 GB. Beyond, the graph is refused, naming the op with
   the most (a 2-line file of a copy of 2^40 blocks ran for ever). */
#define DF_BLOCKS_MAX (1ull << 26)
static int blocks_bounded(const cdag_graph *g) {
  uint64_t total = 0, most = 0;
  int32_t at = 0;
  for (int32_t i = 0; i < g->nops; i++) {
    if (!ir_is_strided(g, i)) continue;
    uint64_t n = ir_op_blocks(g, i).n;
    total = sat_add_u64(total, n);
    if (n > most) most = n, at = i;
  }
  if (total <= DF_BLOCKS_MAX) return CDAG_OK;
  char d[160];
  return cdag__error(CDAG_ERR_UNSUPPORTED, "the graph's strided ops have %llu blocks, which the analysis follows one by "
                     "one (at most %llu); the largest, %s, has %llu", (unsigned long long)total, DF_BLOCKS_MAX,
                     ir_describe(g, at, d, sizeof d), (unsigned long long)most);
}

/* The wait sets (the last reader of the dependency lists), propagation (the last reader of
   the match), then the final tuples. With release_g/release_m, each input is freed after
   its last reader: the maps of propagation and the output of collection are this stage's
   peak, and the inputs need not be part of it. */
static int run(const cdag_graph *g, const match_result *m, int flags, cdag_graph *release_g, match_result *release_m,
               df_sst **out) {
  if (!g || !m || !out) return cdag__error(CDAG_ERR_ARG, "dataflow_run: NULL argument");
  *out = NULL;
  if (g->state == IR_BUILDING) return cdag__error(CDAG_ERR_STATE, "dataflow_run: graph is not finalized");
  int brc = blocks_bounded(g);
  if (brc) return brc;
  df_state st = {.g = g, .collect_mixed = !!(flags & DF_COLLECT_MIXED), .collect_reassoc = !!(flags & DF_COLLECT_REASSOC)};
  st.sets.cap_runs = flags & DF_CAP_SETS ? DF_SET_CAP : 0;
  st.sst = calloc(1, sizeof *st.sst);
  st.slots = base_calloc((size_t)g->nprocs, sizeof *st.slots);
  int rc;
  if (!st.sst || !st.slots) {
    rc = CDAG_NOMEM("dataflow");
  } else {
    st.sst->nprocs = g->nprocs;
    if (!(flags & DF_WAITSETS_IF_NEEDED) || has_zero_byte_message(g)) rc = df_waitsets(g, m, st.sst);
    else rc = CDAG_OK;
    if (release_g) ir_drop_deps(release_g);
    ir_trim_heap(g);
    if (rc == CDAG_OK) rc = propagate(&st, m);
    if (release_m) match_free(release_m);
    ir_trim_heap(g);
    if (rc == CDAG_OK) rc = collect(&st);
  }
  move_sets(&st);
  free_state(&st);
  if (rc) {
    dataflow_free(st.sst);
    return rc;
  }
  *out = st.sst;
  return CDAG_OK;
}

int dataflow_run(const cdag_graph *g, const match_result *m, df_sst **out) {
  return run(g, m, DF_WAITSETS_ALWAYS, NULL, NULL, out);
}

int dataflow_run_opt(cdag_graph *g, match_result *m, int flags, df_sst **out) {
  int release = flags & DF_RELEASE_INPUTS;
  return run(g, m, flags, release ? g : NULL, release ? m : NULL, out);
}

void dataflow_free(df_sst *s) {
  if (!s) return;
  free(s->xfers); free(s->reds); free(s->sets); free(s->runs);
  free(s->wait_start); free(s->wait_lo); free(s->wait_hi);
  free(s->mixed);
  free(s->reassoc);
  free(s->derived);
  free(s);
}

static int xfer_cmp(const void *x, const void *y) {
  const df_xfer *a = x, *b = y;
  if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
  return (a->dst_addr > b->dst_addr) - (a->dst_addr < b->dst_addr);
}

int dataflow_block_xfers(const df_sst *s, df_xfer **out, int64_t *n) {
  int64_t m = 0;
  for (int64_t i = 0; i < s->nxfers; i++) m += (int64_t)df_xfer_blocks(&s->xfers[i]);
  df_xfer *v = malloc((size_t)(m ? m : 1) * sizeof *v);
  if (!v) return CDAG_NOMEM("SST transfers");
  m = 0;
  int strided = 0;
  for (int64_t i = 0; i < s->nxfers; i++) {
    strided |= s->xfers[i].blocks > 1;
    for (uint64_t j = 0; j < df_xfer_blocks(&s->xfers[i]); j++) v[m++] = df_xfer_block(&s->xfers[i], j);
  }
  if (strided) base_sort(v, (size_t)m, sizeof *v, xfer_cmp);
  *n = 0;
  for (int64_t i = 0; i < m; i++) {
    if (*n && xfer_continues(&v[*n - 1], &v[i])) v[*n - 1].len += v[i].len;
    else v[(*n)++] = v[i];
  }
  *out = v;
  return CDAG_OK;
}

void dataflow_free_waitsets(df_sst *s) {
  free(s->wait_start); free(s->wait_lo); free(s->wait_hi);
  s->wait_start = NULL;
  s->wait_lo = s->wait_hi = NULL;
}

int dataflow_waits_for(const df_sst *s, int i, int j) {
  int64_t lo = s->wait_start[i], hi = s->wait_start[i + 1];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (s->wait_hi[mid] < j) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->wait_start[i + 1] && s->wait_lo[lo] <= j;
}

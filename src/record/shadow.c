/* cdag — src/record/shadow.c: what the recording says a rank's memory holds.
 *
 * PMPI sees messages, never the computation between them. The shadow keeps, for every
 * range a recorded send read or a recorded receive wrote, a copy of the bytes as the
 * recording last saw them (within a budget; beyond it a hash). Before a send:
 *  - bytes never seen are the rank's own data until it has completed a receive in the
 *    phase; after that they were computed there (a computation that read nothing received
 *    could have run at the start, so only then does it order anything);
 *  - bytes equal to what the recording holds travel as recorded (real forwarding);
 *  - bytes that differ were computed locally. If they equal the recorded bytes combined
 *    elementwise (sum, prod, min, max, band, bor, bxor over the element type the receives'
 *    MPI datatype names) with receives completed since, folded in completion order, the
 *    recording gets those reductions, each right after its receive completed; if they
 *    equal one such receive, a copy; else a computation just before the send that reads
 *    all the rank holds (PMPI cannot see what it read) and writes them.
 * A range never seen whose bytes equal a receive completed in this phase is taken as a copy
 * of it (a tree broadcast that memcpy's what it received), unless every byte is the same.
 * Adjacent bytes a send needs computed are one computation; so are the blocks of one length
 * that the ranges of one message need computed (a datatype's blocks the program refilled):
 * at their stride, else at listed addresses, up to REC_CLASSES lengths gathered at once,
 * written when the caller says the message is checked (rec_shadow_flush). The time the
 * rank spent since its previous MPI call (rec_shadow_time) is the cost of the first
 * computation written before the call, or of a computation of its own that writes nothing,
 * if it is at least the shadow's min_gap (REC_COMPUTE_MIN_NS unless CDAG_RECORD_MIN_GAP says).
 * At a phase's end (rec_shadow_settle) the ranges held are compared once more. Ranges the
 * program freed are forgotten when it frees them (rec_shadow_forget, from pmpi_mem.c), as the
 * memory may be handed out again, to the recorder too; ranges of buffers it unmapped in other
 * ways are skipped when unreadable. The memory the
 * shadow writes the rank's bytes into while comparing (the fold accumulator, the settle's
 * reads) is mapped apart from the heap and never read as the program's: its bytes, copies
 * and folds of the very receives they are compared with, would prove copies and reductions
 * the program never did.
 * A receive's blocks of one length at one stride, beyond the last 1,024 (which are candidates),
 * over memory the shadow holds nothing of but tombstones, are kept as one pending run (their
 * copies side by side) and become entries only when a look-up meets the run: a datatype's
 * blocks received into a buffer the program frees unread cost one copy, not an entry each.
 * The copies live in an arena of chunks. A receive's copy is a candidate for the proofs above
 * for the next 1024 receives and 1/64 of the budget of received bytes (8 MiB by default);
 * once the arena reaches twice what is live (at least that much), the next send or receive
 * compacts it (compact): the copies of the ranges held and of the candidates are moved into
 * chunks of their own, the rest given up and its chunks reused, so the recorder's memory
 * follows what the program holds, not what it received.
 * Cost per send of n bytes: O(log e + n) for e ranges held, plus, only when bytes differ,
 * O(c * k * n) for k candidate receives (at most REC_CANDIDATES) and c type/op pairs.
 * Out of memory is counted (rec_shadow_oom), never silent: content not kept (a range known
 * by its hash only, a receive not offered as a candidate: fewer inferences, more
 * computations) and ranges forgotten (a receive or send the shadow could not note: the
 * recording may miss computation on those bytes). */
#define _GNU_SOURCE   /* process_vm_readv, MAP_ANONYMOUS */
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/fmap.h"
#include "base/imap.h"
#include "base/sort.h"
#include "record/record.h"

/* REC_CLASSES: block lengths gathered at once (an indexed type's blocks alternate lengths). */
enum { PENDING_MAX = 16, PENDING_MIN = 64, PENDING_STONES = 8, GIVEN_SLOTS = 4096, REC_CLASSES = 4, REC_CANDIDATES = 64, RECENT = 16 * REC_CANDIDATES, ARENA_CHUNK = BASE_HUGE_MIN, MAX_INSERT = REC_SEQ_STEP / 2 - 1, MAX_BEFORE = REC_SEQ_STEP / 4 - 1 };

typedef struct {
  uint64_t start, len;
  uint64_t origin, olen;   /* the range as noted, before trimming */
  const uint8_t *content;  /* NULL: over budget, only `hash` of the whole entry is known */
  uint64_t hash;           /* of the bytes when the entry was made (whole entry) */
  uint64_t seq;            /* when the recording last saw these bytes */
  const char *type;        /* the element type of the message that moved them, NULL unknown */
  uint8_t from_recv;       /* a receive wrote them (else a send read them) */
  uint8_t gone;            /* the program gave these bytes back at seq (rec_shadow_forget):
                              what they hold now was never seen, and only receives completed
                              after seq may explain it */
  uint8_t sent;            /* a send read some of them since they were noted */
  uint32_t cand;           /* 1 + the candidate the receive that wrote them was, 0 none */
} entry;

typedef struct {
  uint64_t addr, len;
  const uint8_t *content;
  const char *type;        /* its element type, if MPI's datatype says (format name), else NULL */
  int32_t point;           /* its completion point (index into points) */
  int64_t prev;            /* the candidate of the same length before it, -1 none */
  uint64_t rbytes;         /* the bytes received in the phase before it (compact) */
} candidate;

typedef struct { uint64_t seq; uint32_t used; } point;

/* A computation of blocks of one length, gathered while a message's ranges are checked
   one by one (a datatype's blocks the program refilled), written as one: at one stride
   when they have one, else at the addresses listed. */
typedef struct {
  uint64_t len, cost, seq;   /* the blocks' length, the cost, the position it was given */
  uint64_t *at;              /* the blocks' addresses, n of them (n 0: none gathered) */
  int64_t n, cap;
} cblocks;

typedef struct chunk { struct chunk *next; size_t used, cap; uint8_t data[]; } chunk;

/* A run of n blocks of len bytes at one stride, from a, that one receive wrote where the
   shadow held nothing but tombstones, its blocks' copies one after the other at content:
   the entries note() would make, made when a look-up first meets the run's hull
   (pend_meet). A datatype's blocks received into a buffer that is freed before anything
   else looks there (MPICH's datatype/tresized: 32,768 blocks of 4 bytes) then cost no entry
   each. */
typedef struct { uint64_t a, len, stride, n, seq; const uint8_t *content; } pending;

/* Working memory of the shadow's own mapping, not the heap's: a chunk the program freed is
   never where the shadow writes the rank's bytes, and a mapping it gave up is unreadable. */
typedef struct { uint8_t *p; uint64_t cap; } scratch;

struct rec_shadow {
  base_fmap map;           /* entry start -> index (entries are noted, walked and forgotten in address runs) */
  entry *e; int64_t ne, ecap;
  int64_t *freed; int64_t nfreed, freedcap;
  candidate *c;            /* the last RECENT receives, receive i at c[i % RECENT]: older ones
                              are never candidates, and a datatype's blocks are millions */
  int64_t nc;
  Pvoid_t by_len;          /* JudyL: length -> the last candidate of that length */
  point *p; int64_t np, pcap;
  chunk *arena; uint64_t arena_bytes, budget;
  chunk *spare;            /* chunks of ARENA_CHUNK bytes the arena gave up, taken first */
  uint64_t compact_at;     /* arena_bytes at which the next call compacts (maybe_compact) */
  uint64_t moved;          /* bytes compactions copied (rec_shadow_moved) */
  uint64_t rbytes;         /* bytes received in the phase so far */
  scratch acc;             /* fold accumulator */
  int received;            /* a receive completed in this phase */
  uint64_t tseq, tns;      /* the time computed before position tseq, not yet written */
  uint64_t min_gap;        /* the least tns written as a computation of its own (rec_shadow_new) */
  int tforce;              /* written whatever its time: the program read a receive there */
  uint64_t last_all;       /* position of the latest computation written (each reads all) */
  Pvoid_t timed;           /* Judy1: positions of the time-only computations written in the
                              phase (one per gap: time_only) */
  uint64_t posting;        /* while a receive's ranges are noted: the position it was posted
                              at (the bytes it overwrites must have been read before) */
  uint32_t noting;         /* while one is noted: 1 + its candidate, 0 none */
  int forgetting;          /* the bytes are given back (rec_shadow_forget), not received */
  int unread;              /* it overwrites bytes a receive wrote that nothing read since */
  uint8_t *cread;          /* bit per candidate of the phase: a copy or reduction read it */
  int64_t creadcap;        /* bytes of cread */
  struct overwrite { uint64_t posted, wrote; uint32_t cand; } *ow;   /* receives that overwrote a
                              candidate's bytes before any read them: the program read them,
                              unless a copy or reduction the shadow proves later does */
  int64_t now, owcap;
  uint64_t bseq; uint32_t bn;   /* computations written before position bseq so far (a
                                   message of several ranges is several sends at one) */
  cblocks cb[REC_CLASSES]; /* the computations being gathered, one per block length, not yet
                              written (n 0: none) */
  uint64_t counts[3];
  uint64_t oom[2];         /* out of memory: content not kept, ranges forgotten */
  void (*on_note)(uint64_t addr, uint64_t len);   /* rec_shadow_on_note */
  pending pend[PENDING_MAX];   /* runs received whole, their blocks not noted yet (pend_take) */
  int npend;
  uint64_t pend_lo, pend_hi;   /* the runs' hulls lie in [pend_lo, pend_hi) (npend > 0) */
  int64_t pend_min;        /* the fewest blocks a run defers (rec_shadow_pend_min) */
  struct given { uint64_t addr, len; int64_t q; } given[GIVEN_SLOTS];   /* ranges freed inside
                              tombstone q, by address (rec_shadow_forget_ranges); e[q] is
                              checked before one is trusted, so one left from before only misses */
};

static uint64_t hash_bytes(const uint8_t *b, uint64_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  for (; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

static void scratch_free(scratch *s) {
  if (s->p) munmap(s->p, s->cap);
  *s = (scratch){NULL, 0};
}

/* Room for n bytes at s->p (its content not kept): 0, or -1 (out of memory). */
static int scratch_room(scratch *s, uint64_t n) {
  if (n <= s->cap) return 0;
  uint64_t cap = s->cap * 2 > n ? s->cap * 2 : n;
  cap = (cap + 4095) & ~(uint64_t)4095;
  void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return -1;
  scratch_free(s);
  *s = (scratch){p, cap};
  return 0;
}

/* The least arena a compaction waits for, and the received bytes a candidate's copy is kept
   for: 1/64 of the budget, 8 MiB by default. The recorder's footprint is the program's cost:
   MPICH's coll/allgatherv4 at 4 processes on 2 cores recorded in 4.3 s with every copy kept
   (218 MB a process; 0.9 s plain), 2.2 to 4.3 s with copies of the last 64 MiB received, 1.7
   s with 32, 1.4 s with 16, 1.2 s with 8. The arena peaks near twice what is live, so a
   window of 16 MiB held about 56 MiB a process in pt2pt/probe_unexp, and on virtual machines
   that hand freed memory back to their host a page first touched costs 1.5 ms a MiB even in
   huge pages (0.08 ms touched again): 8 MiB took its recording from 2.1 to 1.5 times plain
   (median of 9), allgatherv4's from 2.0 to 1.5; 4 MiB gained nothing more. */
static uint64_t compact_min(const rec_shadow *sh) { return sh->budget / 64 > 64 ? sh->budget / 64 : 64; }

rec_shadow *rec_shadow_new(uint64_t budget, uint64_t min_gap) {
  rec_shadow *sh = calloc(1, sizeof *sh);
  if (sh) sh->budget = budget, sh->min_gap = min_gap, sh->compact_at = compact_min(sh), sh->pend_min = PENDING_MIN;
  return sh;
}

void rec_shadow_pend_min(rec_shadow *sh, int64_t blocks) { sh->pend_min = blocks > 1 ? blocks : INT64_MAX; }

void rec_shadow_on_note(rec_shadow *sh, void (*fn)(uint64_t addr, uint64_t len)) { sh->on_note = fn; }

/* Chunks to the spare list (those of ARENA_CHUNK bytes, up to `keep` bytes in all) or freed. */
static void give_up(rec_shadow *sh, chunk *c, uint64_t keep) {
  uint64_t kept = 0;
  for (chunk *s = sh->spare; s; s = s->next) kept += s->cap;
  while (c) {
    chunk *n = c->next;
    if (c->cap == ARENA_CHUNK && kept + c->cap <= keep) {
      c->next = sh->spare, sh->spare = c;
      kept += c->cap;
    } else {
      free(c);
    }
    c = n;
  }
}

void rec_shadow_reset(rec_shadow *sh) {
  base_fmap_clear(&sh->map);
  give_up(sh, sh->arena, compact_min(sh));   /* the next phase's first copies need no fresh pages */
  sh->arena = NULL;
  sh->compact_at = compact_min(sh);
  sh->rbytes = 0;
  sh->ne = sh->nfreed = sh->nc = sh->np = sh->npend = 0;
  if (sh->c) memset(sh->c, 0, RECENT * sizeof *sh->c);   /* their copies were in the arena given up */
  JudyLFreeArray(&sh->by_len, PJE0);
  Judy1FreeArray(&sh->timed, PJE0);
  sh->arena_bytes = 0;
  sh->received = 0;
  sh->tseq = sh->tns = 0;
  sh->tforce = 0, sh->last_all = 0, sh->now = 0;
  if (sh->cread) memset(sh->cread, 0, (size_t)sh->creadcap);
  sh->bseq = sh->bn = 0;
  for (int k = 0; k < REC_CLASSES; k++) sh->cb[k].n = 0;
}

void rec_shadow_free(rec_shadow *sh) {
  if (!sh) return;
  rec_shadow_reset(sh);
  give_up(sh, sh->spare, 0);
  sh->spare = NULL;
  free(sh->e);
  free(sh->freed);
  free(sh->c);
  free(sh->p);
  free(sh->cread);
  free(sh->ow);
  for (int k = 0; k < REC_CLASSES; k++) free(sh->cb[k].at);
  scratch_free(&sh->acc);
  free(sh);
}

void rec_shadow_counts(const rec_shadow *sh, uint64_t counts[3]) { memcpy(counts, sh->counts, sizeof sh->counts); }

void rec_shadow_oom(const rec_shadow *sh, uint64_t lost[2]) { memcpy(lost, sh->oom, sizeof sh->oom); }

uint64_t rec_shadow_moved(const rec_shadow *sh) { return sh->moved; }

uint64_t rec_shadow_footprint(const rec_shadow *sh) {
  uint64_t n = 0;
  for (const chunk *c = sh->arena; c; c = c->next) n += c->cap;
  for (const chunk *c = sh->spare; c; c = c->next) n += c->cap;
  return n;
}

/* Room for n bytes in the arena *a (NULL: out of memory). Chunks are at least BASE_HUGE_MIN,
   advised for huge pages (base_malloc): a first touch faults once per 2 MiB, and these copies
   are most of what the recorder writes. Spare chunks come first: fresh pages are zeroed by
   the kernel, which cost MPICH's coll/allgatherv4 more than its run. */
static uint8_t *room_for(rec_shadow *sh, chunk **a, uint64_t n) {
  if (!*a || (*a)->cap - (*a)->used < n) {
    size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
    chunk *c = cap == ARENA_CHUNK && sh->spare ? sh->spare : base_malloc(sizeof *c + cap);
    if (!c) return NULL;
    if (c == sh->spare) sh->spare = c->next;
    c->next = *a;
    c->used = 0;
    c->cap = cap;
    *a = c;
  }
  uint8_t *d = (*a)->data + (*a)->used;
  (*a)->used += n;
  return d;
}

/* A copy of n bytes at addr in the arena, or NULL over budget (or out of memory). */
static const uint8_t *keep(rec_shadow *sh, uint64_t addr, uint64_t n) {
  if (n == 0 || sh->arena_bytes + n > sh->budget) return NULL;
  uint8_t *d = room_for(sh, &sh->arena, n);
  if (!d) return sh->oom[0]++, NULL;
  memcpy(d, (const void *)(uintptr_t)addr, n);
  sh->arena_bytes += n;
  return d;
}

/* Copies of n blocks of len bytes at stride from addr, one after the other, or NULL as keep. */
static const uint8_t *keep_blocks(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t stride, uint64_t n) {
  if (sh->arena_bytes + n * len > sh->budget) return NULL;
  uint8_t *d = room_for(sh, &sh->arena, n * len);
  if (!d) return sh->oom[0]++, NULL;
  for (uint64_t b = 0; b < n; b++) memcpy(d + b * len, (const void *)(uintptr_t)(addr + b * stride), len);
  sh->arena_bytes += n * len;
  return d;
}

/* ---- compaction ---- */

static candidate *recent(const rec_shadow *sh, int64_t i);

/* A pointer into the arena and what holds it: entry `who`, or candidate -1 - who. */
typedef struct { const uint8_t *p; uint64_t len; int64_t who; } ref;

static int by_ptr(const void *a, const void *b) {
  const ref *x = a, *y = b;
  return (x->p > y->p) - (x->p < y->p);
}

static const uint8_t **ref_slot(rec_shadow *sh, const ref *r) {
  return r->who >= 0 ? &sh->e[r->who].content : &recent(sh, -1 - r->who)->content;
}

/* What the arena must keep: the copies of the ranges held, and of the candidates received
   within the last compact_min bytes (older ones lose theirs: a copy or sum of bytes received
   that long ago is not proven, and computed instead). NULL: no memory for the list. */
static ref *live_refs(rec_shadow *sh, int64_t *n) {
  int64_t cap = sh->ne + RECENT, k = 0;
  ref *r = malloc((size_t)cap * sizeof *r);
  if (!r) return NULL;
  for (int64_t i = 0; i < sh->ne; i++)
    if (sh->e[i].len && sh->e[i].content) r[k++] = (ref){sh->e[i].content, sh->e[i].len, i};
  for (int64_t i = sh->nc > RECENT ? sh->nc - RECENT : 0; sh->c && i < sh->nc; i++) {
    candidate *c = recent(sh, i);
    if (!c->content) continue;
    if (sh->rbytes - c->rbytes > compact_min(sh)) c->content = NULL;
    else r[k++] = (ref){c->content, c->len, -1 - i};
  }
  *n = k;
  return r;
}

static int by_data(const void *a, const void *b) {
  const chunk *x = *(chunk *const *)a, *y = *(chunk *const *)b;
  return (x->data > y->data) - (x->data < y->data);
}

/* The arena's chunks in address order (n of them), or NULL (no memory). */
static chunk **chunks_by_address(const rec_shadow *sh, int64_t *n) {
  int64_t k = 0;
  for (const chunk *c = sh->arena; c; c = c->next) k++;
  chunk **v = malloc((size_t)(k ? k : 1) * sizeof *v);
  if (!v) return NULL;
  k = 0;
  for (chunk *c = sh->arena; c; c = c->next) v[k++] = c;
  base_sort(v, (size_t)k, sizeof *v, by_data);
  *n = k;
  return v;
}

/* The end of the run of overlapping copies from r[i] (sorted by pointer): r[i .. *j) share
   bytes [r[i].p, return). */
static const uint8_t *run_end(const ref *r, int64_t n, int64_t i, int64_t *j) {
  const uint8_t *hi = r[i].p + r[i].len;
  for (*j = i + 1; *j < n && r[*j].p < hi; ++*j)
    if (r[*j].p + r[*j].len > hi) hi = r[*j].p + r[*j].len;
  return hi;
}

/* Which of the chunks v[0..nv) a compaction leaves where they are: those at least 3/4 live
   (keep[k] 1), measured against what they can hold, not what they hold: a chunk stays whole
   and nothing fills its free tail again (room_for fills the newest chunk only), so a small
   live copy must not keep an 8 MiB chunk, one per compaction. A run of copies lies in one
   chunk (each copy was taken whole from one). */
static void chunks_to_keep(chunk *const *v, int64_t nv, const ref *r, int64_t n, uint8_t *keep) {
  uint64_t live = 0;
  for (int64_t i = 0, j, k = 0; k < nv; k++, live = 0) {
    for (; i < n && r[i].p < v[k]->data + v[k]->cap; i = j) live += (uint64_t)(run_end(r, n, i, &j) - r[i].p);
    keep[k] = 4 * live >= 3 * v[k]->cap;
  }
}

/* The arena at which the next compaction runs: twice what it holds, at least compact_min; when
   that is past the budget (copies stop at the budget, so it would never come) halfway to the
   budget, while that is compact_min/2 away at least: compactions then keep making room
   for copies until what is live nearly fills the budget, each after at least compact_min/2
   bytes copied, never one per call. */
static uint64_t next_compaction(const rec_shadow *sh) {
  uint64_t held = sh->arena_bytes, min = compact_min(sh), at = 2 * held > min ? 2 * held : min;
  if (at > sh->budget && held < sh->budget && sh->budget - held >= min) at = held + (sh->budget - held) / 2;
  return at;
}

/* Moves what the arena must keep out of chunks mostly given up into chunks of their own,
   each run of overlapping copies once (a candidate's copy is its entry's; a trimmed entry
   points inside one), and gives those chunks up; chunks at least 3/4 live stay as they are
   (the copies of the last receives: moving them would double what a large receive costs).
   The arena then holds at most 4/3 of what is live, not every copy the phase made. O(k log k
   + bytes moved) for k copies held. */
static void compact(rec_shadow *sh) {
  int64_t n, nv;
  ref *r = live_refs(sh, &n);
  chunk **v = r ? chunks_by_address(sh, &nv) : NULL;
  uint8_t *stays = v ? calloc((size_t)(nv ? nv : 1), 1) : NULL;
  if (!stays) {
    free(r), free(v);
    return;
  }
  base_sort(r, (size_t)n, sizeof *r, by_ptr);
  chunks_to_keep(v, nv, r, n, stays);
  chunk *fresh = NULL;
  uint64_t held = 0;
  int ok = 1;
  for (int64_t i = 0, j, k = 0; ok && i < n; i = j) {
    const uint8_t *lo = r[i].p, *hi = run_end(r, n, i, &j);
    while (k + 1 < nv && lo >= v[k]->data + v[k]->cap) k++;
    if (stays[k]) continue;
    uint8_t *d = room_for(sh, &fresh, (uint64_t)(hi - lo));
    if (!(ok = d != NULL)) break;
    memcpy(d, lo, (size_t)(hi - lo));
    for (int64_t q = i; q < j; q++) *ref_slot(sh, &r[q]) = d + (r[q].p - lo);
    held += (uint64_t)(hi - lo);
    sh->moved += (uint64_t)(hi - lo);
  }
  if (ok) {
    chunk *gone = NULL, **tail = &fresh;
    while (*tail) tail = &(*tail)->next;
    for (int64_t k = 0; k < nv; k++) {
      chunk **to = stays[k] ? tail : &gone;
      v[k]->next = *to, *to = v[k];
      if (stays[k]) v[k]->used = v[k]->cap, held += v[k]->cap;   /* its tail is not filled again */
    }
    give_up(sh, gone, sh->budget);   /* spare: what the arena grows by until the next */
    sh->arena = fresh;
    sh->arena_bytes = held;
  } else {   /* no memory: the old copies stay, the new ones go (none is pointed at yet) */
    give_up(sh, fresh, 0);
    for (int64_t i = 0; i < n; i++) *ref_slot(sh, &r[i]) = r[i].p;
  }
  sh->compact_at = next_compaction(sh);
  free(r), free(v), free(stays);
}

static void pend_expand_all(rec_shadow *sh);

/* At the start of a call that notes ranges (no copy is pointed at from the stack then). */
static void maybe_compact(rec_shadow *sh) {
  if (sh->arena_bytes < sh->compact_at) return;
  pend_expand_all(sh);   /* their copies are then the entries' (live_refs) */
  compact(sh);
}

/* ---- the interval map ---- */

static void drop_entry(rec_shadow *sh, int64_t i) {
  if (base_fmap_del(&sh->map, sh->e[i].start)) {   /* the key stays: its entry, emptied, overlaps nothing */
    sh->e[i].len = 0;
    sh->e[i].content = NULL;
    sh->e[i].hash = 0;
    sh->oom[0]++;
    return;
  }
  sh->e[i].len = 0;   /* out of the map: no tombstone a free may find in `given` */
  if (base_grow((void **)&sh->freed, sh->nfreed, &sh->freedcap, 1, sizeof *sh->freed, "shadow") == 0) sh->freed[sh->nfreed++] = i;
  else sh->oom[0]++;   /* the slot is not reused */
}

static void put_entry(rec_shadow *sh, entry x) {
  int64_t i;
  if (sh->nfreed) i = sh->freed[--sh->nfreed];
  else if (base_grow((void **)&sh->e, sh->ne, &sh->ecap, 1, sizeof *sh->e, "shadow")) {
    sh->oom[1]++;
    return;
  } else i = sh->ne++;
  sh->e[i] = x;
  if (base_fmap_put(&sh->map, x.start, i)) {
    sh->oom[1]++;
    sh->e[i].len = 0;   /* not in the map: no tombstone a free may find in `given` */
    if (base_grow((void **)&sh->freed, sh->nfreed, &sh->freedcap, 1, sizeof *sh->freed, "shadow") == 0) sh->freed[sh->nfreed++] = i;
    return;
  }
}

/* The first entry that may overlap [a, ...): the one starting at or before a, else the next. */
static int64_t first_overlap(rec_shadow *sh, uint64_t a) {
  uint64_t k = a;
  int64_t i = base_fmap_find(&sh->map, &k, BASE_IMAP_AT_OR_BELOW);
  if (i >= 0 && sh->e[i].start + sh->e[i].len > a) return i;
  k = a;
  return base_fmap_find(&sh->map, &k, BASE_IMAP_AT_OR_ABOVE);
}

/* The last entry starting before the end of [a, a+n) (n > 0), if it overlaps it; else -1. */
static int64_t last_in(rec_shadow *sh, uint64_t a, uint64_t n) {
  uint64_t k = a + n - 1;
  int64_t q = base_fmap_find(&sh->map, &k, BASE_IMAP_AT_OR_BELOW);
  return q < 0 || k + sh->e[q].len <= a ? -1 : q;
}

/* The first entry overlapping [a, a+n), -1 if none. One look-up where the range lies inside
   one entry or overlaps none (a block seen whole before, or never: a datatype's blocks), two
   where entries start inside it. */
static int64_t first_in(rec_shadow *sh, uint64_t a, uint64_t n) {
  int64_t q = last_in(sh, a, n);
  return q < 0 || sh->e[q].start <= a ? q : first_overlap(sh, a);
}

static int64_t next_entry(rec_shadow *sh, int64_t i) {
  uint64_t k = sh->e[i].start;
  return base_fmap_find(&sh->map, &k, BASE_IMAP_ABOVE);
}

/* The entry after i if one may start before end, else -1: entries are disjoint, so none
   does once i reaches end (a walk's last step would be a look-up as deep as any other). A
   key a failed delete left (an emptied entry, inside another) is skipped: it holds nothing. */
static int64_t next_in(rec_shadow *sh, int64_t i, uint64_t end) {
  return sh->e[i].start + sh->e[i].len < end ? next_entry(sh, i) : -1;
}

/* The least cost of a computation written for bytes the program read: two digits, so the
   phases take its line as time (distinct.c), present in one iteration and not the next. */
enum { READ_NS = 10 };

/* Is a computation written or pending at a position after s (every one reads all)? */
static int consumed_after(const rec_shadow *sh, uint64_t s) {
  if (sh->last_all > s) return 1;
  if ((sh->tns >= sh->min_gap || sh->tforce) && sh->tseq - REC_SEQ_STEP / 2 > s) return 1;
  for (int k = 0; k < REC_CLASSES; k++)
    if (sh->cb[k].n && sh->cb[k].seq > s) return 1;
  return 0;
}

/* A receive being noted (sh->posting) overwrites entry x: bytes an earlier receive wrote
   that no send and no computation has read since? The program read them, in a gap too
   short to be written as a computation (under min_gap), or a copy or reduction
   the shadow proves only at a later send read them (a sum into an accumulator, sent when
   complete). Bytes of a candidate wait for that (sh->ow, decided when the phase settles);
   others cannot be proven read: the gap is a computation now (sh->unread). Without it the
   earlier message would look dead. */
enum { NO_CAND = UINT32_MAX };

static void check_unread(rec_shadow *sh, const entry *x) {
  if (!sh->posting || !x->from_recv || x->sent || x->gone || x->seq >= sh->posting || consumed_after(sh, x->seq)) return;
  if (!x->cand && !sh->forgetting) {
    sh->unread = 1;
    return;
  }
  if (base_grow((void **)&sh->ow, sh->now, &sh->owcap, 1, sizeof *sh->ow, "shadow")) {
    sh->unread = !sh->forgetting;   /* no room to wait: read, as far as the recording can tell */
    return;
  }
  sh->ow[sh->now++] = (struct overwrite){sh->posting, x->seq, x->cand ? x->cand - 1 : NO_CAND};
}

/* Candidate c was read by a copy or reduction the shadow wrote. */
static void cand_read(rec_shadow *sh, int64_t c) {
  int64_t byte = c / 8;
  if (byte >= sh->creadcap) {
    int64_t cap = sh->creadcap ? sh->creadcap : 64;
    while (cap <= byte) cap *= 2;
    uint8_t *b = realloc(sh->cread, (size_t)cap);
    if (!b) return;   /* not marked: a computation too many, never a message lost */
    memset(b + sh->creadcap, 0, (size_t)(cap - sh->creadcap));
    sh->cread = b, sh->creadcap = cap;
  }
  sh->cread[byte] |= (uint8_t)(1u << (c % 8));
}

static int cand_was_read(const rec_shadow *sh, int64_t c) {
  return c != NO_CAND && c / 8 < sh->creadcap && (sh->cread[c / 8] >> (c % 8) & 1);
}

/* Removes [a, a+n) from the map, trimming entries that stick out; i is the first entry that
   overlaps it (first_in). An entry that sticks out before keeps its place and its key,
   shortened: a datatype's blocks received into a buffer noted whole cost one insert each,
   not a delete and two inserts. */
static void clear_range(rec_shadow *sh, uint64_t a, uint64_t n, int64_t i) {
  uint64_t end = a + n, k;
  while (i >= 0 && sh->e[i].start < end) {
    entry x = sh->e[i];
    check_unread(sh, &x);
    if (x.start < a) {   /* the part before stays */
      sh->e[i].len = a - x.start;
      sh->e[i].hash = 0;
    } else {
      drop_entry(sh, i);
    }
    if (x.start + x.len > end) {   /* the part after stays */
      entry r = x;
      r.hash = 0;
      r.start = end;
      r.len = x.start + x.len - end;
      r.content = x.content ? x.content + (end - x.start) : NULL;
      put_entry(sh, r);
    }
    if (x.start + x.len >= end) break;   /* entries after x start at or after end */
    k = x.start;
    i = base_fmap_find(&sh->map, &k, BASE_IMAP_ABOVE);
  }
}

/* ---- runs received whole ---- */

static uint64_t pend_end(const pending *r) { return r->a + (r->n - 1) * r->stride + r->len; }
static int run_meets(const pending *r, uint64_t a, uint64_t n) { return a < pend_end(r) && a + n > r->a; }

/* Block b of run r as the entry note() made of it. */
static entry run_block(const pending *r, uint64_t b) {
  uint64_t a = r->a + b * r->stride;
  return (entry){a, r->len, a, r->len, r->content + b * r->len, 0, r->seq, NULL, 1, 0, 0, 0};
}

static void pend_bounds(rec_shadow *sh) {
  sh->pend_lo = UINT64_MAX, sh->pend_hi = 0;
  for (int k = 0; k < sh->npend; k++) {
    if (sh->pend[k].a < sh->pend_lo) sh->pend_lo = sh->pend[k].a;
    if (pend_end(&sh->pend[k]) > sh->pend_hi) sh->pend_hi = pend_end(&sh->pend[k]);
  }
}

/* Does the hull of a run meet [a, a+n)? */
static int pend_meets(const rec_shadow *sh, uint64_t a, uint64_t n) {
  if (!sh->npend || a >= sh->pend_hi || a + n <= sh->pend_lo) return 0;
  for (int k = 0; k < sh->npend; k++)
    if (run_meets(&sh->pend[k], a, n)) return 1;
  return 0;
}

/* Run k's entries, as note() made them when it was received (the tombstones it lay over
   trimmed, which only a look-up could tell apart); the run goes. */
static void pend_expand(rec_shadow *sh, int k) {
  pending r = sh->pend[k];
  sh->pend[k] = sh->pend[--sh->npend];
  for (uint64_t b = 0; b < r.n; b++) {
    entry x = run_block(&r, b);
    int64_t i = first_in(sh, x.start, x.len);
    if (i >= 0) clear_range(sh, x.start, x.len, i);
    put_entry(sh, x);
  }
  pend_bounds(sh);
}

static void pend_expand_all(rec_shadow *sh) {
  while (sh->npend) pend_expand(sh, sh->npend - 1);
}

/* Before a look-up of [a, a+n): the runs whose hull it meets become entries. */
static void pend_meet(rec_shadow *sh, uint64_t a, uint64_t n) {
  if (!pend_meets(sh, a, n)) return;
  for (int k = sh->npend - 1; k >= 0; k--)   /* pend_expand moves the last run to k: seen already */
    if (run_meets(&sh->pend[k], a, n)) pend_expand(sh, k);
}

/* [a, a+n) is given back (rec_shadow_forget, posting and forgetting set): a run inside it
   goes as clear_range would take its blocks, each a receive nothing has read (check_unread,
   the same for every block: once); a run it cuts becomes entries. The runs that went. */
static int pend_given(rec_shadow *sh, uint64_t a, uint64_t n) {
  int went = 0;
  if (!pend_meets(sh, a, n)) return 0;
  for (int k = sh->npend - 1; k >= 0; k--) {
    pending *r = &sh->pend[k];
    if (!run_meets(r, a, n)) continue;
    if (a > r->a || a + n < pend_end(r)) {
      pend_expand(sh, k);
      continue;
    }
    entry x = run_block(r, 0);
    check_unread(sh, &x);
    sh->pend[k] = sh->pend[--sh->npend];
    went++;
  }
  pend_bounds(sh);
  return went;
}

/* Where the shadow held bytes, a tombstone: a copy or reduction the shadow infers is written
   right after the receive it reads, so one from a receive completed before the free would
   write this memory while it was still the old buffer (MPICH's pt2pt/sendself: a copy onto
   the very receive it copied). Where it held nothing, or only tombstones (the small chunks
   a freed buffer's memory is cut into, freed in turn), nothing to remember. */
void rec_shadow_forget(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t seq) {
  /* received bytes given back unread were read first (a temporary freed after its use):
     in the gap before the next position, as an overwrite's (check_unread) */
  sh->posting = seq + REC_SEQ_STEP, sh->forgetting = 1;
  int went = len ? pend_given(sh, addr, len) : 0;
  int64_t i = len ? first_in(sh, addr, len) : -1, j = i, stones = 0;
  for (; j >= 0 && sh->e[j].start < addr + len && sh->e[j].gone; stones++) j = next_in(sh, j, addr + len);
  /* nothing held since it was last given back; tombstones of smaller chunks given back before
     become one (the allocator joins chunks, and each free of the joined one would walk them) */
  if (!went && (j < 0 || sh->e[j].start >= addr + len) && stones < 2) {
    sh->posting = 0, sh->forgetting = 0;
    return;
  }
  clear_range(sh, addr, len, i);
  sh->posting = 0, sh->forgetting = 0;
  put_entry(sh, (entry){addr, len, addr, 0, NULL, 0, seq, NULL, 0, 1, 0, 0});
}

/* Is [a, a+len) inside e[q], a tombstone? Then it was given back already, and nothing was
   held there since: entries are disjoint, and a slot out of the map has length 0. */
static int inside_tombstone(const rec_shadow *sh, int64_t q, uint64_t a, uint64_t len) {
  const entry *x = &sh->e[q];
  return x->gone && x->len && x->start <= a && x->start + x->len >= a + len;
}

/* Most frees fall inside a tombstone: the allocator hands such memory out again to MPI's and
   the program's temporaries, and takes the same chunks back again and again (MPICH's
   coll/nonblocking3 notes 1.9 million frees). The tombstone each one fell in is remembered by
   address (`given`), so a chunk freed again costs no look-up while that tombstone stands; a
   look-up in a map of many entries costs hundreds of instructions. In address order: a range
   over several tombstones joins them into one over the whole range, so the order decides
   which bytes the tombstones cover, and with it which copies the phase's end may prove. */
static int by_addr(const void *x, const void *y) {
  uint64_t a = ((const rec_range *)x)->addr, b = ((const rec_range *)y)->addr;
  return (a > b) - (a < b);
}

static void reverse(rec_range *r, int64_t n) {
  for (int64_t i = 0, j = n - 1; i < j; i++, j--) {
    rec_range t = r[i];
    r[i] = r[j], r[j] = t;
  }
}

/* The first of r[0 .. n) whose address is above a (or at least a: at_least), n none. */
static int64_t bound(const rec_range *r, int64_t n, uint64_t a, int at_least) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (at_least ? r[mid].addr < a : r[mid].addr <= a) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Merges the sorted r[0 .. m) and r[m .. n) in place, stably: the larger half is cut in two,
   the other at the same address, and the middle pieces swapped by rotation. O(n log n) moves
   per merge, no memory. */
static void merge_in_place(rec_range *r, int64_t m, int64_t n) {
  if (m == 0 || m == n) return;
  if (n == 2) {   /* the cut below would leave it as it is */
    if (r[1].addr < r[0].addr) reverse(r, 2);
    return;
  }
  int64_t i, j;   /* r[i .. m) and r[m .. j) trade places */
  if (m >= n - m) i = m / 2, j = m + bound(r + m, n - m, r[i].addr, 1);
  else j = m + (n - m) / 2, i = bound(r, m, r[j].addr, 0);
  reverse(r + i, m - i), reverse(r + m, j - m), reverse(r + i, j - i);
  int64_t k = i + (j - m);
  merge_in_place(r, i, k);
  merge_in_place(r + k, j - k, n - k);
}

/* r[0 .. n) in address order, stably (two frees of one address keep their order): runs of
   16 by insertion, then merged in place. Frees come in any order, up to 65,536 a drain,
   where one insertion sort of 96 cost more than forgetting them, and qsort is stable only
   while it can allocate. */
static void sort_ranges(rec_range *r, int64_t n) {
  enum { RUN = 16 };
  for (int64_t i = 0; i < n; i += RUN) base_sort(r + i, n - i < RUN ? n - i : RUN, sizeof *r, by_addr);
  for (int64_t w = RUN; w < n; w *= 2)
    for (int64_t lo = 0; lo + w < n; lo += 2 * w) merge_in_place(r + lo, w, lo + 2 * w < n ? 2 * w : n - lo);
}

void rec_shadow_forget_ranges(rec_shadow *sh, rec_range *r, int64_t n, uint64_t seq) {
  sort_ranges(r, n);
  for (int64_t k = 0; k < n; k++) {
    uint64_t a = r[k].addr, len = r[k].len;
    struct given *g = &sh->given[((a * 0x9e3779b97f4a7c15ull) >> 32) % GIVEN_SLOTS];
    int run = len && pend_meets(sh, a, len);   /* a run received there since */
    if (!run && g->len == len && g->addr == a && len && g->q < sh->ne && inside_tombstone(sh, g->q, a, len)) continue;
    int64_t q = len ? last_in(sh, a, len) : -1;
    if (q < 0 && !run) continue;   /* nothing held there */
    if (q >= 0 && !run && inside_tombstone(sh, q, a, len)) {
      *g = (struct given){a, len, q};
      continue;
    }
    rec_shadow_forget(sh, a, len, seq);
  }
}

/* Notes [a, a+n) as seen at seq; its kept copy (NULL: only its hash). */
static const uint8_t *note(rec_shadow *sh, uint64_t a, uint64_t n, uint64_t seq, const char *type, int from_recv) {
  if (n == 0) return NULL;
  pend_meet(sh, a, n);
  if (sh->on_note) sh->on_note(a, n);
  if (from_recv) sh->rbytes += n;
  int64_t i = first_in(sh, a, n);
  int again = i >= 0 && sh->e[i].start == a && sh->e[i].len == n;   /* the range of an entry (a buffer used again) */
  if (again) check_unread(sh, &sh->e[i]);
  if (!again && i >= 0) clear_range(sh, a, n, i);
  const uint8_t *c = keep(sh, a, n);
  entry x = {a, n, a, n, c, c ? 0 : hash_bytes((const uint8_t *)(uintptr_t)a, n), seq, type, (uint8_t)from_recv, 0, 0,
             from_recv ? sh->noting : 0};
  if (again) sh->e[i] = x;   /* replaced where it is: no look-ups to clear it and put it back */
  else put_entry(sh, x);
  return c;
}

/* ---- inference ---- */

/* The types and ops a fold is tried with: the receives' own MPI datatype decides the type
   (int32 and int64 sums agree whenever no carry crosses 32 bits, and elements must not be
   split), so bytes received as MPI_BYTE or a derived type prove no reduction. */
typedef struct { const char *type; int size; } ftype;
static const ftype ftypes[] = {{"int32", 4}, {"int64", 8}, {"double", 8}, {"float", 4}, {"uint32", 4}, {"uint64", 8}};
static const char *const fops[] = {"sum", "max", "min", "prod", "bxor", "bor", "band"};
typedef struct { const char *type; int size; const char *op; } combo;

#define FOLD(T, EXPR)                                                  \
  for (uint64_t i = 0; i < n; i += sizeof(T)) {                       \
    T a, b;                                                           \
    memcpy(&a, acc + i, sizeof a);                                    \
    memcpy(&b, in + i, sizeof b);                                     \
    a = (T)(EXPR);                                                    \
    memcpy(acc + i, &a, sizeof a);                                    \
  }
#define FOLD_OPS(T)                                         \
  if (op[0] == 's') { FOLD(T, a + b) }                      \
  else if (op[0] == 'p') { FOLD(T, a * b) }                 \
  else if (op[1] == 'a') { FOLD(T, a > b ? a : b) }         \
  else { FOLD(T, a < b ? a : b) }

/* acc = acc OP in, elementwise. Integer sums and products wrap, as MPI's do. */
static void fold(const combo *c, uint8_t *acc, const uint8_t *in, uint64_t n) {
  const char *t = c->type, *op = c->op;
  if (op[0] == 'b') {
    for (uint64_t i = 0; i < n; i++)
      acc[i] = op[1] == 'x' ? acc[i] ^ in[i] : op[1] == 'o' ? acc[i] | in[i] : acc[i] & in[i];
  } else if (!strcmp(t, "int32")) {
    if (op[0] == 's') { FOLD(uint32_t, a + b) }
    else if (op[0] == 'p') { FOLD(uint32_t, a * b) }
    else { FOLD_OPS(int32_t) }
  } else if (!strcmp(t, "int64")) {
    if (op[0] == 's') { FOLD(uint64_t, a + b) }
    else if (op[0] == 'p') { FOLD(uint64_t, a * b) }
    else { FOLD_OPS(int64_t) }
  } else if (!strcmp(t, "uint32")) { FOLD_OPS(uint32_t) }
  else if (!strcmp(t, "uint64")) { FOLD_OPS(uint64_t) }
  else if (!strcmp(t, "float")) { FOLD_OPS(float) }
  else { FOLD_OPS(double) }
}

static uint64_t insert_seq(rec_shadow *sh, int32_t pt) {
  return sh->p[pt].seq + ++sh->p[pt].used;
}

/* The piece of a range being explained: n bytes at offset `off` of a range of `full` bytes
   as the recording noted it (a buffer reduced whole and read in part). */
typedef struct {
  uint64_t addr, n, off, full;
  const char *type;        /* the element type the bytes were last moved as (NULL unknown) */
} piece;

static candidate *recent(const rec_shadow *sh, int64_t i) { return &sh->c[i % RECENT]; }   /* (compact too) */

static int64_t last_of_len(const rec_shadow *sh, uint64_t len) {
  PWord_t pv = (PWord_t)JudyLGet(sh->by_len, (Word_t)len, PJE0);
  return pv ? (int64_t)*pv - 1 : -1;   /* stored as index + 1 */
}

/* Candidates: receives among the last 16 * REC_CANDIDATES completed after position `after`
   of the piece's size (used from their start) or of its whole range's size (used at the
   piece's offset); oldest first. The two lengths' chains are walked, newest first, so a
   datatype's blocks do not scan the receives of other lengths each. */
static int64_t candidates(rec_shadow *sh, uint64_t after, const piece *pc, int64_t *out, uint64_t *at) {
  int64_t k = 0, oldest = sh->nc - RECENT;
  int64_t a = last_of_len(sh, pc->n), b = pc->full && pc->full != pc->n ? last_of_len(sh, pc->full) : -1;
  while (k < REC_CANDIDATES) {
    int64_t i = a > b ? a : b;
    if (i < 0 || i < oldest) break;
    candidate *c = recent(sh, i);
    int whole = i == b;
    *(whole ? &b : &a) = c->prev;
    if (sh->p[c->point].seq <= after) break;   /* completions come in order */
    if (c->content) at[k] = whole ? pc->off : 0, out[k++] = i;
  }
  for (int64_t i = 0; i < k / 2; i++) {
    int64_t t = out[i];
    uint64_t u = at[i];
    out[i] = out[k - 1 - i], at[i] = at[k - 1 - i];
    out[k - 1 - i] = t, at[k - 1 - i] = u;
  }
  return k;
}

static int room(rec_shadow *sh, const int64_t *set, int64_t k) {
  for (int64_t i = 0; i < k; i++)
    if (sh->p[recent(sh, set[i])->point].used + 1 > MAX_INSERT) return 0;
  return 1;
}

/* Does `cur` equal `old` folded with the candidates of `set` (used at offsets `at`)?
   Emits the reductions if so. */
static int try_fold(rec_shadow *sh, const piece *pc, const uint8_t *old, const uint8_t *cur, const int64_t *set,
                    const uint64_t *at, int64_t k, rec_fix_fn fix, void *ctx) {
  uint64_t n = pc->n;
  if (!room(sh, set, k)) return 0;
  const char *hint = recent(sh, set[0])->type;
  for (int64_t i = 1; i < k; i++)
    if (!hint || !recent(sh, set[i])->type || strcmp(hint, recent(sh, set[i])->type)) hint = NULL;
  /* bytes alone, or an accumulator last moved as something else: a reduction could split
     elements whose bytes have different origins */
  if (!hint || !pc->type || strcmp(hint, pc->type)) return 0;
  /* Small integers coincide: 1 ^ 3 == 2. A fold is taken only when exactly one op explains
     the bytes, and integers need two elements at least. */
  combo found = {NULL, 0, NULL};
  int matches = 0;
  for (size_t j = 0; j < sizeof fops / sizeof *fops * (sizeof ftypes / sizeof *ftypes); j++) {
    const ftype *ft = &ftypes[j % (sizeof ftypes / sizeof *ftypes)];
    combo cj = {ft->type, ft->size, fops[j / (sizeof ftypes / sizeof *ftypes)]}, *c = &cj;
    if (strcmp(hint, ft->type) || n % (uint64_t)c->size || pc->off % (uint64_t)c->size) continue;
    int real = !strcmp(ft->type, "float") || !strcmp(ft->type, "double");
    if ((c->op[0] == 'b' && real) || (!real && n < 2 * (uint64_t)c->size)) continue;
    memcpy(sh->acc.p, old, n);
    for (int64_t i = 0; i < k; i++) fold(c, sh->acc.p, recent(sh, set[i])->content + at[i], n);
    if (memcmp(sh->acc.p, cur, n) == 0 && !matches++) found = cj;
  }
  if (matches != 1) return 0;
  for (int64_t i = 0; i < k; i++) {
    candidate *r = recent(sh, set[i]);
    rec_fix f = {REC_FIX_REDUCE, insert_seq(sh, r->point), pc->addr, n, r->addr + at[i], found.type, found.op,
                 n / (uint64_t)found.size, 0, 0, 0, NULL};
    cand_read(sh, set[i]);
    fix(ctx, &f);
  }
  sh->counts[REC_FIX_REDUCE] += (uint64_t)k;
  return 1;
}

/* Every byte equals the next: memcmp's vector loop, not a byte loop (MPICH's huge_* tests
   send 16 MiB). */
static int all_same(const uint8_t *b, uint64_t n) { return n < 2 || memcmp(b, b + 1, n - 1) == 0; }

static int try_copy(rec_shadow *sh, const piece *pc, const uint8_t *cur, const int64_t *cand, const uint64_t *at,
                    int64_t k, rec_fix_fn fix, void *ctx) {
  uint64_t n = pc->n;
  if (all_same(cur, n)) return 0;   /* zeros equal any zeros: no proof of a copy */
  for (int64_t i = k - 1; i >= 0; i--) {
    candidate *r = recent(sh, cand[i]);
    /* memcmp stops at the first difference: no hash of every receive (allgatherv4 moves
       megabytes), and none of the bytes sent. A receive longer than the piece is taken only
       at an offset (the hash this replaced held its length, so the start of a longer one
       was never taken: kept so, for now) */
    if ((at[i] == 0 && r->len != n) || memcmp(r->content + at[i], cur, n) != 0 || !room(sh, &cand[i], 1)) continue;
    rec_fix f = {REC_FIX_COPY, insert_seq(sh, r->point), pc->addr, n, r->addr + at[i], NULL, NULL, 0, 0, 0, 0, NULL};
    cand_read(sh, cand[i]);
    fix(ctx, &f);
    sh->counts[REC_FIX_COPY]++;
    return 1;
  }
  return 0;
}

/* The bytes of piece pc are `cur`, not `old` (NULL: unknown), noted at position `after`. */
static int explain(rec_shadow *sh, const piece *pc, const uint8_t *cur, const uint8_t *old, uint64_t after,
                   rec_fix_fn fix, void *ctx) {
  int64_t cand[REC_CANDIDATES], same[REC_CANDIDATES];
  uint64_t at[REC_CANDIDATES], same_at[REC_CANDIDATES];
  int64_t k = candidates(sh, after, pc, cand, at);
  if (k == 0) return 0;
  if (try_copy(sh, pc, cur, cand, at, k, fix, ctx)) return 1;
  if (!old || !pc->type) return 0;   /* a fold needs the element type the bytes last moved as */
  if (scratch_room(&sh->acc, pc->n)) return sh->oom[0]++, 0;
  if (try_fold(sh, pc, old, cur, cand, at, k, fix, ctx)) return 1;
  /* receives into one buffer (a root folding what arrives in its temporary), then one alone;
     a group with a member moved as another type cannot fold (try_fold), so the O(k) search
     for i's group is skipped for such an i (a datatype's blocks: every candidate) */
  for (int64_t i = 0; i < k; i++) {
    if (!recent(sh, cand[i])->type || strcmp(recent(sh, cand[i])->type, pc->type)) continue;
    int64_t m = 0;
    for (int64_t j = 0; j < k; j++)
      if (recent(sh, cand[j])->addr == recent(sh, cand[i])->addr && at[j] == at[i]) same_at[m] = at[j], same[m++] = cand[j];
    if (m > 1 && m < k && same[0] == cand[i] && try_fold(sh, pc, old, cur, same, same_at, m, fix, ctx)) return 1;
  }
  for (int64_t i = k - 1; i >= 0; i--)
    if (k > 1 && try_fold(sh, pc, old, cur, &cand[i], &at[i], 1, fix, ctx)) return 1;
  return 0;
}

/* ---- computations ---- */

/* Writes the computation gathered in c: at one stride (either sign; forwards from the lowest
   block: the order of a computation's writes is no part of it, and adjacent blocks are one
   range), else at the addresses listed. */
static void flush_one(rec_shadow *sh, cblocks *c, rec_fix_fn fix, void *ctx) {
  if (!c->n) return;
  uint64_t n = (uint64_t)c->n, d = n > 1 ? c->at[1] - c->at[0] : 0, a = c->at[0];
  int regular = 1;
  for (uint64_t i = 2; i < n && regular; i++) regular = c->at[i] - c->at[i - 1] == d;
  if (regular && n > 1 && (int64_t)d < 0) a = c->at[n - 1], d = 0 - d;
  regular &= d >= c->len;   /* n 1: d 0 */
  rec_fix f = {REC_FIX_COMPUTE, c->seq, a, n * c->len, 0, NULL, NULL, 0, c->cost, n, d, NULL};
  if (n == 1 || (regular && d == c->len)) f.blocks = 1, f.stride = 0;   /* one range */
  else if (!regular) f.addr = c->at[0], f.at = c->at, f.stride = 0;
  c->n = 0;
  sh->counts[REC_FIX_COMPUTE]++;
  if (c->seq > sh->last_all) sh->last_all = c->seq;
  fix(ctx, &f);
}

void rec_shadow_flush(rec_shadow *sh, rec_fix_fn fix, void *ctx) {
  for (int k = 0; k < REC_CLASSES; k++) flush_one(sh, &sh->cb[k], fix, ctx);
}

/* A computation that writes n bytes at addr before the send (or phase end) at `seq`: the
   first of the gap carries the gap's time. Blocks before one position are gathered by
   their length, up to REC_CLASSES lengths at once (a new one writes the oldest), into a
   computation each (sh->cb); out of memory, they are written as they come. */
static void computed(rec_shadow *sh, uint64_t addr, uint64_t n, uint64_t seq, rec_fix_fn fix, void *ctx) {
  uint64_t cost = 0;
  if (sh->tseq == seq) cost = sh->tns, sh->tns = 0;
  cblocks *c = NULL, *unused = NULL, *oldest = NULL;
  for (int k = 0; k < REC_CLASSES; k++) {
    cblocks *x = &sh->cb[k];
    if (x->n && !(x->seq + REC_SEQ_STEP / 2 > seq && x->seq < seq)) flush_one(sh, x, fix, ctx);   /* another position */
    if (!x->n) {
      if (!unused) unused = x;
      continue;
    }
    if (x->len == n && !cost) c = x;
    if (!oldest || x->seq < oldest->seq) oldest = x;
  }
  if (!c) {   /* a length not gathered: an unused class, else the oldest, written first */
    c = unused ? unused : oldest;
    flush_one(sh, c, fix, ctx);
    if (sh->bseq != seq) sh->bseq = seq, sh->bn = 0;
    c->len = n, c->cost = cost, c->seq = seq - REC_SEQ_STEP / 2 + ++sh->bn;
  }
  if (base_grow((void **)&c->at, c->n, &c->cap, 1, sizeof *c->at, "shadow")) {
    uint64_t pos = c->seq;
    flush_one(sh, c, fix, ctx);   /* its room is free again */
    if (!c->cap) {   /* not even one: the computation alone */
      rec_fix f = {REC_FIX_COMPUTE, pos, addr, n, 0, NULL, NULL, 0, cost, 1, 0, NULL};
      sh->counts[REC_FIX_COMPUTE]++;
      if (pos > sh->last_all) sh->last_all = pos;
      fix(ctx, &f);
      return;
    }
    if (sh->bseq != seq) sh->bseq = seq, sh->bn = 0;
    c->len = n, c->cost = 0, c->seq = seq - REC_SEQ_STEP / 2 + ++sh->bn;
  }
  c->at[c->n++] = addr;
}

/* A computation that writes nothing before position seq, of `cost` ns; none when the gap has
   one already. A gap's time is written when the next call starts, and a receive completed
   later may show that the program read bytes in that same gap (gap_read, from the phase's
   settle too): its computation, reading all, is there already, and a second line at one
   position is a malformed part file (the merge refuses it). */
static void time_only(rec_shadow *sh, uint64_t seq, uint64_t cost, rec_fix_fn fix, void *ctx) {
  if (cost < READ_NS) cost = READ_NS;
  rec_fix f = {REC_FIX_COMPUTE, seq - REC_SEQ_STEP / 2, 0, 0, 0, NULL, NULL, 0, cost, 0, 0, NULL};
  if (Judy1Set(&sh->timed, (Word_t)f.seq, PJE0) == 0) return;   /* JERR (no memory): written unnoted, and a
                                                                  second one here is the merge's error */
  if (f.seq > sh->last_all) sh->last_all = f.seq;
  fix(ctx, &f);
}

void rec_shadow_time_flush(rec_shadow *sh, rec_fix_fn fix, void *ctx) {
  if (sh->tns >= sh->min_gap || sh->tforce) {
    time_only(sh, sh->tseq, sh->tns, fix, ctx);
    while (sh->now && sh->ow[sh->now - 1].posted == sh->tseq) sh->now--;   /* waiting there: read now */
  }
  sh->tns = 0;
  sh->tforce = 0;
}

/* The gap before position `posted` is a computation, whatever its time: the gap's own,
   written at the flush, while it is still pending; else one of READ_NS. */
static void gap_read(rec_shadow *sh, uint64_t posted, rec_fix_fn fix, void *ctx) {
  if (sh->tseq == posted) sh->tforce = 1;
  else time_only(sh, posted, 0, fix, ctx);
}

/* The receive posted at `posted` overwrote bytes nothing read (gap_read). Overwrites
   waiting at that position are settled by it. */
static void read_before(rec_shadow *sh, uint64_t posted, rec_fix_fn fix, void *ctx) {
  sh->unread = 0;
  int64_t k = 0;
  for (int64_t i = 0; i < sh->now; i++)
    if (sh->ow[i].posted != posted) sh->ow[k++] = sh->ow[i];
  sh->now = k;
  gap_read(sh, posted, fix, ctx);
}

static int by_posted(const void *a, const void *b) {
  const struct overwrite *x = a, *y = b;
  return (x->posted > y->posted) - (x->posted < y->posted);
}

/* The phase settles: overwrites whose bytes no copy or reduction read were read by the
   program in the gap before their receive (gap_read), unless one
   written for an earlier overwrite already lies between (a computation reads all: one
   before four halo receives posted in a row serves them all). */
static void overwrites_settle(rec_shadow *sh, rec_fix_fn fix, void *ctx) {
  uint64_t last = 0;
  base_sort(sh->ow, (size_t)sh->now, sizeof *sh->ow, by_posted);
  for (int64_t i = 0; i < sh->now; i++) {
    const struct overwrite *o = &sh->ow[i];
    if (cand_was_read(sh, o->cand) || (last && last - REC_SEQ_STEP / 2 > o->wrote)) continue;
    gap_read(sh, o->posted, fix, ctx);
    last = o->posted;
  }
  sh->now = 0;
}

void rec_shadow_time(rec_shadow *sh, uint64_t seq, uint64_t ns, rec_fix_fn fix, void *ctx) {
  rec_shadow_time_flush(sh, fix, ctx);
  sh->tseq = seq;
  sh->tns = ns;
}

/* Bytes to be written by one computation: consecutive pieces that need one are joined. */
typedef struct { uint64_t a, b; } run;

/* Room for one computation only before `seq`: it must cover the rest. */
static int last_room(const rec_shadow *sh, uint64_t seq) { return sh->bseq == seq && sh->bn >= MAX_BEFORE - 1; }

static void run_flush(rec_shadow *sh, run *r, uint64_t seq, rec_fix_fn fix, void *ctx) {
  if (r->b > r->a) computed(sh, r->a, r->b - r->a, seq, fix, ctx);
  r->a = r->b = 0;
}

/* [a, b) was computed; 1 when no room is left before the send: the run then covers up to
   `end`, and the caller stops. */
static int run_add(rec_shadow *sh, run *r, uint64_t a, uint64_t b, uint64_t end, uint64_t seq, rec_fix_fn fix,
                   void *ctx) {
  if (r->b > r->a && r->b != a) run_flush(sh, r, seq, fix, ctx);
  if (r->b == r->a) r->a = a;
  r->b = b;
  if (!last_room(sh, seq)) return 0;
  r->b = end;   /* no room for more: one computation covers the rest */
  return 1;
}

void rec_shadow_send(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t seq, const char *type, rec_fix_fn fix,
                     void *ctx) {
  if (len == 0) return;
  maybe_compact(sh);
  pend_meet(sh, addr, len);
  const uint8_t *cur = (const uint8_t *)(uintptr_t)addr;
  uint64_t end = addr + len, pos = addr;   /* bytes before pos are dealt with */
  int changed = 0;
  run r = {0, 0};
  int64_t i = first_in(sh, addr, len), whole = i;
  if (i < 0) {   /* never seen: a copy of a receive? */
    piece pc = {addr, len, 0, 0, type};
    if (explain(sh, &pc, cur, NULL, 0, fix, ctx)) pos = end;   /* none when nothing was received */
  }
  /* bytes never seen are the rank's own data, or, once it has received, computed here */
  for (; pos < end && i >= 0 && sh->e[i].start < end; i = next_in(sh, i, end)) {
    entry *x = &sh->e[i];
    uint64_t a = x->start > addr ? x->start : addr;
    uint64_t b = x->start + x->len < end ? x->start + x->len : end;
    x->sent = 1;
    if (a > pos && sh->received && run_add(sh, &r, pos, a, end, seq, fix, ctx)) break;
    pos = b;
    const uint8_t *old = x->content ? x->content + (a - x->start) : NULL;
    /* without a copy only a hash of the whole entry tells: anything else counts as changed */
    int same = old ? memcmp(old, cur + (a - addr), b - a) == 0
                   : x->hash && a == x->start && b - a == x->len && hash_bytes(cur + (a - addr), b - a) == x->hash;
    if (same) continue;
    changed = 1;
    piece pc = {a, b - a, a - x->origin, x->olen, x->type};
    if (explain(sh, &pc, cur + (a - addr), old, x->seq, fix, ctx)) continue;
    if (run_add(sh, &r, a, b, end, seq, fix, ctx)) break;
  }
  if (r.b < end && pos < end && sh->received) run_add(sh, &r, pos, end, end, seq, fix, ctx);
  run_flush(sh, &r, seq, fix, ctx);
  if (!changed && whole >= 0 && sh->e[whole].start == addr && sh->e[whole].len == len) {
    sh->e[whole].seq = seq;   /* the same bytes seen again: no second copy */
    sh->e[whole].type = type;
    return;
  }
  note(sh, addr, len, seq, type, 0);
}

int rec_shadow_held_since(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t seq) {
  uint64_t pos = addr, end = addr + len;
  pend_meet(sh, addr, len);
  for (int64_t i = first_overlap(sh, addr); pos < end && i >= 0 && sh->e[i].start <= pos; i = next_in(sh, i, end)) {
    const entry *x = &sh->e[i];
    if (x->seq != seq || x->from_recv || x->gone || x->start + x->len <= pos) return 0;
    pos = x->start + x->len;
  }
  return pos >= end;
}

/* The entries the phase's end compares, read together: up to SETTLE_BATCH of them and
   SETTLE_BYTES (or one larger entry) in one system call. */
enum { SETTLE_BATCH = 256, SETTLE_BYTES = 1 << 20 };

/* Reads the bytes of entries x[0..n) of this process into buf, one after the other, without
   faulting if some are gone (a buffer freed since the recording saw it): ok[j] 1 for those
   read whole, 0 for the others and for those skip[j] names. A read stops at the first
   entry it cannot read, and goes on after it: one system call for a batch that reads
   (MPICH's pt2pt/sendself ends its phase with 236,000 entries). */
static void read_own(const entry *x, int n, const uint8_t *skip, uint8_t *buf, uint8_t *ok) {
  memset(ok, 0, (size_t)n);
#ifdef __linux__
  struct iovec local[SETTLE_BATCH], remote[SETTLE_BATCH];
  uint64_t off = 0;
  for (int j = 0; j < n; j++) {
    uint64_t len = skip[j] ? 0 : x[j].len;
    local[j] = (struct iovec){buf + off, len};
    remote[j] = (struct iovec){(void *)(uintptr_t)x[j].start, len};
    off += x[j].len;
  }
  pid_t me = getpid();
  for (int j = 0; j < n;) {
    ssize_t r = process_vm_readv(me, local + j, (unsigned long)(n - j), remote + j, (unsigned long)(n - j), 0);
    uint64_t got = r > 0 ? (uint64_t)r : 0;
    for (; j < n && got >= remote[j].iov_len; j++) got -= remote[j].iov_len, ok[j] = !skip[j];
    j++;   /* entry j could not be read */
  }
#else
  (void)x, (void)skip, (void)buf;
#endif
}

/* Do n bytes at a overlap s? */
static int in_scratch(const scratch *s, uint64_t a, uint64_t n) {
  uint64_t p = (uint64_t)(uintptr_t)s->p;
  return s->p && p < a + n && a < p + s->cap;
}

/* The readable ranges of this process now (/proc/self/maps), sorted and joined where they
   touch, as (start, end) pairs: n of them, or NULL when unknown. One read of a file instead
   of a failing system call per entry whose buffer the program freed (sendself: 58,000). */
static uint64_t *readable_ranges(int64_t *n) {
  *n = 0;
  FILE *f = fopen("/proc/self/maps", "r");
  uint64_t *r = NULL;
  int64_t cap = 0;
  char line[512], perm[8];
  unsigned long long lo, hi;
  while (f && fgets(line, sizeof line, f)) {
    if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perm) != 3 || perm[0] != 'r') continue;
    if (*n && r[2 * *n - 1] == lo) {   /* touches the last: one range */
      r[2 * *n - 1] = hi;
      continue;
    }
    if (base_grow((void **)&r, 2 * *n, &cap, 2, sizeof *r, "shadow")) {
      free(r), r = NULL, *n = 0;
      break;
    }
    r[2 * *n] = lo, r[2 * *n + 1] = hi, ++*n;
  }
  if (f) fclose(f);
  return r;
}

/* Are bytes [a, a + len) inside one range of r (readable_ranges, n of them; NULL: unknown,
   so maybe)? O(log n). */
static int maybe_readable(const uint64_t *r, int64_t n, uint64_t a, uint64_t len) {
  if (!r) return 1;
  int64_t lo = 0, hi = n;   /* the first range ending after a */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (r[2 * mid + 1] <= a) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && r[2 * lo] <= a && a + len <= r[2 * lo + 1];
}

/* Entry x, whose bytes now are cur, compared with what the recording holds: 1 when the phase
   has no room for another computation (stop). */
static int settle_one(rec_shadow *sh, const entry *x, const uint8_t *cur, uint64_t seq, int proven_only,
                      rec_fix_fn fix, void *ctx) {
  if (x->content ? !memcmp(cur, x->content, x->len) : x->hash && hash_bytes(cur, x->len) == x->hash) return 0;
  piece pc = {x->start, x->len, x->start - x->origin, x->olen, x->type};
  if ((x->content && explain(sh, &pc, cur, x->content, x->seq, fix, ctx)) || proven_only) return 0;
  if (last_room(sh, seq)) return 1;
  computed(sh, x->start, x->len, seq, fix, ctx);
  return 0;
}

void rec_shadow_settle(rec_shadow *sh, uint64_t seq, int proven_only, rec_fix_fn fix, void *ctx) {
  scratch rd = {NULL, 0};   /* the bytes compared, read apart from the program's memory */
  entry bx[SETTLE_BATCH];   /* a batch of entries, copied (settling one changes no other) */
  uint8_t ok[SETTLE_BATCH], skip[SETTLE_BATCH];
  uint64_t k = 0;
  int stop = 0;
  int64_t nr = 0;
  pend_expand_all(sh);
  uint64_t *readable = sh->ne ? readable_ranges(&nr) : NULL;   /* before the scratch: it is ours */
  for (int64_t i = base_fmap_find(&sh->map, &k, BASE_IMAP_AT_OR_ABOVE); i >= 0 && !stop;) {
    int n = 0;
    uint64_t bytes = 0;
    for (; i >= 0 && n < SETTLE_BATCH; i = base_fmap_find(&sh->map, &k, BASE_IMAP_ABOVE)) {
      if (!sh->e[i].len || sh->e[i].gone) continue;   /* len 0: emptied (its key could not be deleted) */
      if (n && bytes + sh->e[i].len > SETTLE_BYTES) break;   /* the next batch's first */
      bx[n] = sh->e[i], bytes += bx[n++].len;
    }
    if (scratch_room(&rd, bytes)) {   /* cannot compare: computed, as far as the recording can tell */
      for (int j = 0; j < n; j++) {
        sh->oom[0]++;
        if (!proven_only && !last_room(sh, seq)) computed(sh, bx[j].start, bx[j].len, seq, fix, ctx);
      }
      continue;
    }
    /* the shadow's own mapping now (the program unmapped the buffer): it proves nothing */
    for (int j = 0; j < n; j++)
      skip[j] = in_scratch(&rd, bx[j].start, bx[j].len) || in_scratch(&sh->acc, bx[j].start, bx[j].len) ||
                !maybe_readable(readable, nr, bx[j].start, bx[j].len);
    read_own(bx, n, skip, rd.p, ok);
    uint64_t off = 0;
    for (int j = 0; j < n && !stop; off += bx[j++].len)
      if (ok[j] && !in_scratch(&sh->acc, bx[j].start, bx[j].len))
        stop = settle_one(sh, &bx[j], (const uint8_t *)rd.p + off, seq, proven_only, fix, ctx);
  }
  scratch_free(&rd);
  free(readable);
  rec_shadow_flush(sh, fix, ctx);
  overwrites_settle(sh, fix, ctx);
  rec_shadow_time_flush(sh, fix, ctx);   /* the phase ends: its last gap's time */
}

/* The completion point at `done` (the latest, as completions come in order); -1 no memory. */
static int64_t point_at(rec_shadow *sh, uint64_t done) {
  if (!sh->np || sh->p[sh->np - 1].seq != done) {
    if (base_grow((void **)&sh->p, sh->np, &sh->pcap, 1, sizeof *sh->p, "shadow")) return sh->oom[1]++, -1;
    sh->p[sh->np++] = (point){done, 0};
  }
  return sh->np - 1;
}

uint64_t rec_shadow_reserve(rec_shadow *sh, uint64_t done, uint32_t n) {
  int64_t pt = point_at(sh, done);
  if (pt < 0 || sh->p[pt].used + n > MAX_INSERT) return 0;
  uint64_t first = sh->p[pt].seq + sh->p[pt].used + 1;
  sh->p[pt].used += n;
  return first;
}

static void recv_one(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t done, const char *type);

/* Ranges i .. of a[], l[] (before end, none in a packing area) of one length at one
   stride, ascending and apart: how many (1 at least). */
static int64_t run_from(const uint64_t *a, const uint64_t *l, int64_t i, int64_t end) {
  if (i + 1 >= end || l[i + 1] != l[i] || a[i + 1] < a[i] + l[i] || a[i + 1] >= REC_PACK_BASE) return 1;
  uint64_t d = a[i + 1] - a[i];
  int64_t j = i + 2;
  while (j < end && l[j] == l[i] && a[j] > a[j - 1] && a[j] - a[j - 1] == d && a[j] < REC_PACK_BASE) j++;
  return j - i;
}

/* The m ranges from i (a run_from) as a pending run: how many it took, cut before the first
   entry its hull meets that is not a tombstone (or past PENDING_STONES of them); 0 when
   block i is to be noted alone, and then *retry is the first worth trying again. */
static int64_t pend_take(rec_shadow *sh, const uint64_t *a, const uint64_t *l, int64_t i, int64_t m, uint64_t done,
                         int64_t *retry) {
  *retry = i + m;
  if (m < sh->pend_min) return 0;
  uint64_t len = l[i], d = a[i + 1] - a[i], end = a[i + m - 1] + len;
  if (pend_meets(sh, a[i], end - a[i])) return 0;
  int stones = 0;
  for (int64_t q = first_in(sh, a[i], end - a[i]); q >= 0 && sh->e[q].start < end; q = next_in(sh, q, end)) {
    const entry *x = &sh->e[q];
    if (x->gone && ++stones <= PENDING_STONES) continue;
    uint64_t k = x->start >= a[i] + len ? (x->start - a[i] - len) / d + 1 : 0;   /* blocks wholly before x */
    if (k < (uint64_t)sh->pend_min) {
      uint64_t past = x->start + x->len > a[i] ? (x->start + x->len - a[i] + d - 1) / d : 1;
      *retry = i + (past < (uint64_t)m ? (int64_t)(past ? past : 1) : m);
      return 0;
    }
    m = (int64_t)k;
    break;
  }
  end = a[i + m - 1] + len;
  const uint8_t *c = keep_blocks(sh, a[i], len, d, (uint64_t)m);
  if (!c) return 0;
  if (sh->npend == PENDING_MAX) pend_expand(sh, 0);
  sh->pend[sh->npend++] = (pending){a[i], len, d, (uint64_t)m, done, c};
  pend_bounds(sh);
  if (sh->on_note) sh->on_note(a[i], end - a[i]);
  sh->rbytes += (uint64_t)m * len;
  for (int64_t b = 0; sh->c && b < m && b < RECENT; b++) *recent(sh, sh->nc + b) = (candidate){.prev = -1};
  sh->nc += m;   /* their indexes, out of reach as the ring's oldest (candidates) */
  return m;
}

void rec_shadow_recv_ranges(rec_shadow *sh, const uint64_t *a, const uint64_t *l, int64_t n, uint64_t done,
                            uint64_t posted, const char *type, rec_fix_fn fix, void *ctx) {
  int64_t skip = n - RECENT;   /* these would leave the ring before this call returns */
  int64_t run_end = 0, retry = 0;
  maybe_compact(sh);
  sh->posting = posted;
  for (int64_t i = 0; i < n; i++) {
    if (!l[i] || a[i] >= REC_PACK_BASE) continue;
    if (i >= skip) {
      recv_one(sh, a[i], l[i], done, n == 1 ? type : NULL);
      continue;
    }
    sh->received = 1;
    if (point_at(sh, done) < 0) break;
    if (i >= run_end) run_end = i + run_from(a, l, i, skip);
    int64_t m = i >= retry ? pend_take(sh, a, l, i, run_end - i, done, &retry) : 0;
    if (m) {
      i += m - 1;
      continue;
    }
    note(sh, a[i], l[i], done, NULL, 1);
    if (sh->c) *recent(sh, sh->nc) = (candidate){.prev = -1};   /* no copy: what the slot held is gone */
    sh->nc++;   /* its index, out of reach as the ring's oldest (candidates) */
  }
  sh->posting = 0;
  if (sh->unread) read_before(sh, posted, fix, ctx);
}

void rec_shadow_recv(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t done, uint64_t posted, const char *type,
                     rec_fix_fn fix, void *ctx) {
  rec_shadow_recv_ranges(sh, &addr, &len, 1, done, posted, type, fix, ctx);
}

static void recv_one(rec_shadow *sh, uint64_t addr, uint64_t len, uint64_t done, const char *type) {
  if (len == 0) return;
  sh->received = 1;
  if (point_at(sh, done) < 0) return;
  sh->noting = (uint32_t)sh->nc + 1;
  const uint8_t *content = note(sh, addr, len, done, type, 1);
  sh->noting = 0;
  if (!sh->c && !(sh->c = malloc(RECENT * sizeof *sh->c))) {
    sh->oom[0]++;
    return;
  }
  PWord_t last = (PWord_t)JudyLIns(&sh->by_len, (Word_t)len, PJE0);
  if (last == PJERR) {
    sh->oom[0]++;
    return;
  }
  int64_t prev = *last ? (int64_t)*last - 1 : -1;
  *last = (Word_t)sh->nc + 1;
  *recent(sh, sh->nc++) = (candidate){addr, len, content, type, (int32_t)(sh->np - 1), prev, sh->rbytes};
}

/* cdag — src/record/fold.c: the recorder folds a repeat of the calls before it in place, so
 * that a part file grows with the run's distinct units, not its iterations.
 *
 * Each intercepted call writes a few lines of the part file. At its end the call's lines,
 * with every position made relative to the call's first (a `wait`'s too) and without the
 * time-only computations `K SEQ compute T reads all` (a 10 us gap is in one iteration and
 * not the next), are hashed. When the last p calls hash as the p before them, with positions
 * a constant D further on, the second copy is cut from the file (its time-only computations
 * kept) and replaced by one line
 *     K fold OFF1 OFF2 D N
 * : the operation lines of phase K in bytes [OFF1, OFF2) of the part (the first copy, the
 * template), less its time-only computations, are repeated N times, the i-th time with
 * every position i * D further (record.h). Every later copy of the unit is cut the same
 * way and adds one to N, in place (20 digits, as the call counts). A call that differs ends
 * the fold; the history starts again. Bytes cut are zeroed, so a process killed at any time
 * leaves a part the merger reads (what follows the last line is NULs). Cost: the bytes a
 * call wrote, hashed once (tens of ns for a message's line), and O(p) when a candidate unit
 * of p calls is checked, p at most FOLD_MAXP; memory: the last FOLD_RING calls. */
#include <string.h>

#include "record/pmpi.h"

enum { FOLD_RING = 1024, FOLD_MAXP = 256, FOLD_TABLE = 2048 };
/* The hash of a call that wrote no operation line (an Irecv, a Test that found nothing, only
   a time-only computation): such calls alone are no template. */
#define FOLD_EMPTY 2u

typedef struct {
  size_t off;        /* where its lines start */
  uint64_t base;     /* its position when it began */
  uint64_t hash;     /* its lines, positions relative to base; 0: never folded (a count line, scratch) */
} fcall;

struct rec_fold {
  fcall ring[FOLD_RING];             /* the calls since the history started, the last FOLD_RING */
  int64_t n;                         /* calls in the history */
  int64_t last[FOLD_TABLE];          /* per hash bucket: the last call with that hash, + 1 */
  uint64_t lasth[FOLD_TABLE];
  size_t off; uint64_t base;         /* the call in progress */
  /* the fold in progress: a template of p calls and the copy being matched */
  int active;
  int64_t p, k;                      /* calls per unit; calls of the current copy matched */
  uint64_t thash[FOLD_MAXP];         /* the template's hashes ... */
  uint64_t trel[FOLD_MAXP];          /* ... and positions relative to its first call */
  uint64_t d;                        /* positions from one copy to the next */
  uint64_t next_base;                /* where the next copy's first call must begin */
  size_t unit_off;                   /* where the copy being matched starts in the file */
  size_t count_at;                   /* the last digit of N in the fold line */
};

rec_fold *fold_new(void) { return calloc(1, sizeof(rec_fold)); }
void fold_free(rec_fold *f) { free(f); }

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

/* An unsigned decimal at *p (advanced past it); 0 digits: *ok = 0. */
static uint64_t num(const char **p, const char *e, int *ok) {
  uint64_t v = 0;
  const char *s = *p;
  while (*p < e && **p >= '0' && **p <= '9') v = v * 10 + (uint64_t)(*(*p)++ - '0');
  *ok = *p > s;
  return v;
}

/* `compute T reads all` from p to the end of the line e. */
static int time_only(const char *p, const char *e) {
  static const char tail[] = " reads all";
  int ok;
  if (e - p < 9 || memcmp(p, "compute ", 8)) return 0;
  p += 8;
  num(&p, e, &ok);
  return ok && (size_t)(e - p) == sizeof tail - 1 && !memcmp(p, tail, sizeof tail - 1);
}

/* The hash of the lines in [s, e), positions relative to base; 0 if they must not fold. */
static uint64_t hash_lines(const char *s, const char *e, uint64_t base) {
  uint64_t h = 0xcbf29ce484222325ull;
  int lines = 0;
  for (const char *l = s, *le; l < e; l = le + 1) {
    if (!(le = memchr(l, '\n', (size_t)(e - l)))) le = e;
    const char *p = l;
    int ok, ok2;
    uint64_t k = num(&p, le, &ok);
    if (!ok || p >= le || *p != ' ') {   /* a count, phase or end line: written once */
      return 0;
    }
    p++;
    uint64_t seq = num(&p, le, &ok2);
    if (!ok2 || p >= le || *p != ' ') return 0;   /* scratch, drop, fold: never folded */
    p++;
    if (time_only(p, le)) continue;
    lines++;
    h = mix(mix(h, k), seq - base);
    if (le - p > 5 && !memcmp(p, "wait ", 5)) {   /* what it completes, relative */
      for (p += 5; p < le; p++) {
        uint64_t w = num(&p, le, &ok);
        if (!ok) return 0;
        h = mix(h, w - base);
      }
      continue;
    }
    for (; p < le; p++) h = mix(h, (uint8_t)*p);
  }
  return !lines ? FOLD_EMPTY : h > FOLD_EMPTY ? h : FOLD_EMPTY + 1;
}

/* Cuts [from, R->len) from the file but its time-only computations, which move to from. */
static void cut(size_t from) {
  size_t w = from;
  for (size_t l = from, le; l < R->len; l = le + 1) {
    const char *e = memchr(R->map + l, '\n', R->len - l);
    le = e ? (size_t)(e - R->map) : R->len;
    const char *p = R->map + l;
    int ok;
    num(&p, R->map + le, &ok);
    if (ok && p < R->map + le) p++;
    num(&p, R->map + le, &ok);
    if (ok && p < R->map + le && time_only(p + 1, R->map + le)) {
      memmove(R->map + w, R->map + l, le + 1 - l);
      w += le + 1 - l;
    }
  }
  memset(R->map + w, 0, R->len - w);
  R->len = w;
}

/* No count line lies in [from, R->len): cutting there loses nothing counted in place. */
static int no_counts(size_t from) {
  for (int c = 0; c < NCALLS; c++)
    if (R->call_at[c] >= from || R->unsup_at[c] >= from) return 0;
  for (int k = 0; k < NOOM; k++)
    if (R->oom_at[k] >= from) return 0;
  return 1;
}

static void restart(rec_fold *f) {
  f->n = 0;
  f->active = 0;
  memset(f->last, 0, sizeof f->last);
}

void fold_enter(rec_fold *f) {
  if (!f || !R || R->fd < 0) return;
  f->off = R->len;
  f->base = R->seq;
}

/* A fold of the last p calls onto the p before them, if they repeat them. */
static void try_fold(rec_fold *f, int64_t p) {
  int64_t i = f->n - 1;
  if (p < 1 || p > FOLD_MAXP || 2 * p > f->n || 2 * p > FOLD_RING) return;
  const fcall *a = &f->ring[(i - 2 * p + 1) % FOLD_RING], *b = &f->ring[(i - p + 1) % FOLD_RING];
  uint64_t d = b->base - a->base;
  int lines = 0;
  for (int64_t j = 0; j < p; j++) {
    const fcall *x = &f->ring[(i - 2 * p + 1 + j) % FOLD_RING], *y = &f->ring[(i - p + 1 + j) % FOLD_RING];
    if (!x->hash || x->hash != y->hash || y->base - x->base != d) return;
    lines |= x->hash != FOLD_EMPTY;
  }
  if (!d || !lines || !no_counts(a->off)) return;   /* a template of no lines folds nothing */
  for (int64_t j = 0; j < p; j++) {
    const fcall *x = &f->ring[(i - 2 * p + 1 + j) % FOLD_RING];
    f->thash[j] = x->hash;
    f->trel[j] = x->base - a->base;
  }
  size_t off1 = a->off, off2 = b->off;
  cut(off2);
  size_t before = R->len;
  out("%d fold %zu %zu %llu %020d\n", R->phase, off1, off2, (unsigned long long)d, 1);
  if (R->len <= before) {   /* no room: the file stops growing, as any line */
    restart(f);
    return;
  }
  f->active = 1;
  f->p = p;
  f->k = 0;
  f->d = d;
  f->next_base = b->base + d;
  f->count_at = R->len - 2;
  f->unit_off = R->len;
}

void fold_exit(rec_fold *f) {
  if (!f || !R || R->fd < 0 || R->len < f->off) return;
  uint64_t h = hash_lines(R->map + f->off, R->map + R->len, f->base);
  if (f->active) {   /* the next call of the copy being matched */
    uint64_t first = f->next_base;
    if (h && h == f->thash[f->k] && f->base - first == f->trel[f->k]) {
      if (++f->k == f->p) {   /* a whole copy: cut, counted */
        if (!no_counts(f->unit_off)) {
          restart(f);
          return;
        }
        cut(f->unit_off);
        char *d = R->map + f->count_at;
        while (*d == '9') *d-- = '0';
        ++*d;
        f->k = 0;
        f->next_base += f->d;
        f->unit_off = R->len;
      }
      return;
    }
    restart(f);   /* it differs: the copy so far stays as written */
  }
  fcall *c = &f->ring[f->n % FOLD_RING];
  *c = (fcall){f->off, f->base, h};
  f->n++;
  if (!h) return;
  size_t b = (size_t)(h % FOLD_TABLE);
  int64_t prev = f->lasth[b] == h ? f->last[b] - 1 : -1;
  f->last[b] = f->n;
  f->lasth[b] = h;
  if (prev >= 0 && f->n - 1 - prev <= FOLD_MAXP) try_fold(f, f->n - 1 - prev);
}

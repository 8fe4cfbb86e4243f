/* cdag — src/record/distinct.c: each distinct phase of a run stored once, and the run as
 * their sequence (index.json "sequence"); the flat recording expanded back from it.
 *
 * The merger hands every phase of the run, in order, as the text of its flat phase file
 * (the file it would write for it alone). Two phases are the same distinct phase when their
 * texts are equal but for variable tokens: addresses (0x...), sizes (`512b`), computation
 * costs (the number after `compute`), tags (the number after `tag`: a loop that counts its
 * iterations in its tags), and time-only computations (`compute T reads all`,
 * present in one iteration, absent in the next). The first occurrence of each distinct phase
 * is written as DIR/phase-NNNN.cdag (NNNN its number among distinct phases); consecutive
 * occurrences of one distinct phase are one entry of the sequence, which keeps, exactly,
 * what each repeat changes against the stored file: per variable token its difference,
 * as `first + repeat * step` where it is one (a buffer that moves by a constant offset, or
 * does not move: then nothing is written), else one value per repeat; and the time-only
 * computations of each repeat (skeleton line, cost). rec_expand writes the flat files back
 * from the stored ones and the index. Cost: linear in the text of the phases. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/error.h"
#include "format/format.h"
#include "record/record.h"

static const char HEADER[] = "// recorded by cdag record: phase ";

/* A phase file's text cut into what expansion keeps and what it substitutes. */
typedef struct {
  const char *text; size_t len;
  size_t body;              /* offset of the line after the header */
  char *skel; size_t nskel; /* the body without time-only lines, variable tokens as \x01 */
  uint64_t *val;            /* per variable token, in order: its value */
  int64_t ntok, tokcap;
  int64_t *times;           /* time-only computations: (skeleton line, cost) pairs */
  int64_t ntimes, timecap;
  int64_t nlines;           /* skeleton lines */
} ptext;

typedef struct {
  char *skel; size_t nskel; uint64_t hash;
  uint64_t *val; int64_t ntok;   /* the stored file's variable tokens */
  int64_t repeats;               /* occurrences in the run */
  rec_phase_sum sum;             /* the stored file's */
  rec_phase_sum total;           /* over its occurrences */
} distinct;

struct rec_distinct {
  const char *dir, *command;
  int nprocs;
  int fold_ranks;          /* store the ranks of each phase folded (format.h: ir_ranks_fold) */
  distinct *d; int64_t nd, dcap;
  int64_t *slot; int64_t nslot;                   /* open addressing by skeleton hash: distinct + 1, 0 free */
  /* the open run: distinct phase k repeated n times */
  int64_t k, n;
  int64_t *delta; int64_t ndelta, deltacap;       /* n rows of the distinct's ntok differences */
  int64_t *times; int64_t ntimes, timecap;        /* (repeat, line, cost) triples */
  char *seq; size_t seqlen; FILE *seqf;           /* the sequence's JSON so far */
  int64_t occurrences;
};

static int grow(void *arr, int64_t n, int64_t *cap, int64_t more, size_t size) {
  return base_grow((void **)arr, n, cap, more, size, "distinct phases");
}

static int digits(const char *p, const char *e) {
  if (p == e) return 0;
  for (; p < e; p++)
    if (*p < '0' || *p > '9') return 0;
  return 1;
}

int rec_time_only_line(const char *p, const char *e, uint64_t *cost) {
  static const char tail[] = " reads all";
  size_t tl = sizeof tail - 1;
  if ((size_t)(e - p) <= 8 + tl || strncmp(p, "compute ", 8) || memcmp(e - tl, tail, tl) || !digits(p + 8, e - tl)) return 0;
  return ir_variable_token(p + 8, e - tl, 1, cost);
}

static void ptext_free(ptext *t) {
  free(t->skel), free(t->val), free(t->times);
  memset(t, 0, sizeof *t);
}

static int parse_text(const char *text, size_t len, ptext *t) {
  memset(t, 0, sizeof *t);
  t->text = text;
  t->len = len;
  const char *nl = memchr(text, '\n', len);
  if (len < sizeof HEADER || memcmp(text, HEADER, sizeof HEADER - 1) || !nl)
    return cdag__error(CDAG_ERR_FORMAT, "a phase file without the header of cdag record");
  t->body = (size_t)(nl - text) + 1;
  if (!(t->skel = malloc(len + 1))) return CDAG_NOMEM("distinct phases");
  for (const char *p = text + t->body, *end = text + len, *e; p < end; p = e + 1) {
    if (!(e = memchr(p, '\n', (size_t)(end - p)))) e = end;
    uint64_t cost;
    if (rec_time_only_line(p, e, &cost)) {
      if (grow(&t->times, t->ntimes, &t->timecap, 2, sizeof *t->times)) return CDAG_NOMEM("distinct phases");
      t->times[t->ntimes++] = t->nlines;
      t->times[t->ntimes++] = (int64_t)cost;
      continue;
    }
    const char *w = ir_line_words(p, e), *pw = NULL;
    size_t pl = 0;
    for (const char *q = p, *qe; q < e; pw = q, pl = (size_t)(qe - q), q = qe + 1) {
      if (!(qe = memchr(q, ' ', (size_t)(e - q)))) qe = e;
      uint64_t v;
      if (ir_variable_token(q, qe, ir_number_word(w, e, q, pw, pl, 1), &v)) {
        if (grow(&t->val, t->ntok, &t->tokcap, 1, sizeof *t->val)) return CDAG_NOMEM("distinct phases");
        t->val[t->ntok++] = v;
        t->skel[t->nskel++] = '\x01';
      } else {
        memcpy(t->skel + t->nskel, q, (size_t)(qe - q));
        t->nskel += (size_t)(qe - q);
      }
      t->skel[t->nskel++] = qe < e ? ' ' : '\n';
      if (qe == e) break;
    }
    if (p == e) t->skel[t->nskel++] = '\n';
    t->nlines++;
  }
  return CDAG_OK;
}

static uint64_t hash_bytes(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
  return h;
}

rec_distinct *rec_distinct_new(const char *dir, const char *command, int nprocs, int fold_ranks) {
  rec_distinct *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  x->dir = dir;
  x->command = command;
  x->nprocs = nprocs;
  x->fold_ranks = fold_ranks && nprocs >= REC_RANKS_FOLD_MIN;
  x->k = -1;
  if (!(x->seqf = open_memstream(&x->seq, &x->seqlen))) {
    free(x);
    return NULL;
  }
  return x;
}

int64_t rec_distinct_count(const rec_distinct *x) { return x->nd; }

void rec_distinct_free(rec_distinct *x) {
  if (!x) return;
  for (int64_t i = 0; i < x->nd; i++) free(x->d[i].skel), free(x->d[i].val);
  free(x->d), free(x->delta), free(x->times), free(x->slot);
  if (x->seqf) fclose(x->seqf);
  free(x->seq);
  free(x);
}

/* Whether column t of the open run's differences is first + j * step (wrapping, as
   addresses do not). */
static int arithmetic(const rec_distinct *x, int64_t V, int64_t t, int64_t *first, int64_t *step) {
  uint64_t a = (uint64_t)x->delta[t], s = x->n > 1 ? (uint64_t)x->delta[V + t] - a : 0;
  for (int64_t j = 2; j < x->n; j++)
    if ((uint64_t)x->delta[j * V + t] != a + (uint64_t)j * s) return 0;
  if (first) *first = (int64_t)a, *step = (int64_t)s;
  return 1;
}

/* The open run as one entry of the sequence. */
static void close_run(rec_distinct *x) {
  if (x->k < 0) return;
  const distinct *d = &x->d[x->k];
  FILE *f = x->seqf;
  fprintf(f, "%s\n    {\"phase\": %" PRId64 ", \"repeats\": %" PRId64, x->occurrences > x->n ? "," : "", x->k, x->n);
  int64_t V = d->ntok, n = x->n, nshift = 0, nvalues = 0;
  /* values: columns whose differences are no arithmetic sequence, one per repeat */
  for (int64_t t = 0; t < V; t++) {
    if (arithmetic(x, V, t, NULL, NULL)) continue;
    fprintf(f, "%s%" PRId64, nvalues++ ? "], [" : ", \"values\": [[", t);
    for (int64_t j = 0; j < n; j++) fprintf(f, ", %" PRId64, x->delta[j * V + t]);
  }
  if (nvalues) fprintf(f, "]]");
  /* shift: runs of columns whose differences are the same first + j * step, not all 0 */
  for (int64_t t = 0, u; t < V; t = u) {
    int64_t first, step;
    u = t + 1;
    if (!arithmetic(x, V, t, &first, &step) || (!first && !step)) continue;
    for (; u < V; u++) {
      int same = 1;
      for (int64_t j = 0; j < n && same; j++) same = x->delta[j * V + u] == x->delta[j * V + t];
      if (!same) break;
    }
    fprintf(f, "%s[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]", nshift++ ? ", " : ", \"shift\": [", t, u - 1, first, step);
  }
  if (nshift) fprintf(f, "]");
  for (int64_t i = 0; i < x->ntimes; i += 3)
    fprintf(f, "%s[%" PRId64 ", %" PRId64 ", %" PRId64 "]", i ? ", " : ", \"times\": [", x->times[i], x->times[i + 1], x->times[i + 2]);
  if (x->ntimes) fprintf(f, "]");
  fprintf(f, "}");
  x->k = -1;
  x->n = x->ndelta = x->ntimes = 0;
}

static int write_file(const rec_distinct *x, int64_t k, const ptext *t) {
  char path[4096];
  snprintf(path, sizeof path, "%s/phase-%04" PRId64 ".cdag", x->dir, k);
  FILE *f = fopen(path, "w");
  if (!f) return cdag__error(errno == ENOMEM ? CDAG_ERR_NOMEM : CDAG_ERR_IO, "%s: %s", path, strerror(errno));
  const char *rest = t->text + sizeof HEADER - 1;
  while (*rest >= '0' && *rest <= '9') rest++;
  fprintf(f, "%s%" PRId64, HEADER, k);
  char *folded = NULL;
  size_t len = t->len - (size_t)(rest - t->text);
  int rc = x->fold_ranks ? ir_ranks_fold(rest, len, &folded, &len) : CDAG_OK;
  if (!rc) fwrite(folded ? folded : rest, 1, len, f);
  free(folded);
  if (fclose(f) && !rc) rc = cdag__error(CDAG_ERR_IO, "%s: %s", path, strerror(errno));
  return rc;
}

/* Doubles the table of distinct phases by skeleton hash (at most half full). */
static int rehash(rec_distinct *x) {
  int64_t n = x->nslot ? 2 * x->nslot : 64;
  int64_t *slot = calloc((size_t)n, sizeof *slot);
  if (!slot) return CDAG_NOMEM("distinct phases");
  for (int64_t k = 0; k < x->nd; k++) {
    int64_t s = (int64_t)(x->d[k].hash % (uint64_t)n);
    while (slot[s]) s = (s + 1) % n;
    slot[s] = k + 1;
  }
  free(x->slot);
  x->slot = slot;
  x->nslot = n;
  return CDAG_OK;
}

int rec_distinct_add(rec_distinct *x, const char *text, size_t len, const rec_phase_sum *sum) {
  ptext t;
  int rc = parse_text(text, len, &t);
  uint64_t h = rc ? 0 : hash_bytes(t.skel, t.nskel);
  int64_t k = x->nd, s = 0;
  if (!rc && 2 * (x->nd + 1) > x->nslot) rc = rehash(x);
  for (s = (int64_t)(h % (uint64_t)(x->nslot ? x->nslot : 1)); !rc && x->slot[s]; s = (s + 1) % x->nslot) {
    const distinct *d = &x->d[x->slot[s] - 1];
    if (d->hash == h && d->nskel == t.nskel && !memcmp(d->skel, t.skel, t.nskel)) {
      k = x->slot[s] - 1;
      break;
    }
  }
  if (!rc && k == x->nd) {   /* a new distinct phase: stored */
    if (grow(&x->d, x->nd, &x->dcap, 1, sizeof *x->d)) rc = CDAG_NOMEM("distinct phases");
    else {
      x->slot[s] = k + 1;
      x->d[k] = (distinct){.skel = t.skel, .nskel = t.nskel, .hash = h, .val = t.val, .ntok = t.ntok, .sum = *sum};
      t.skel = NULL;
      t.val = NULL;
      x->nd++;
      rc = write_file(x, k, &t);
    }
  }
  if (!rc && k != x->k) {
    close_run(x);
    x->k = k;
  }
  distinct *d = rc ? NULL : &x->d[k];
  if (!rc && grow(&x->delta, x->ndelta, &x->deltacap, d->ntok, sizeof *x->delta)) rc = CDAG_NOMEM("distinct phases");
  for (int64_t i = 0; !rc && i < d->ntok; i++)
    x->delta[x->ndelta++] = (int64_t)((t.val ? t.val[i] : d->val[i]) - d->val[i]);
  for (int64_t i = 0; !rc && i < t.ntimes; i += 2) {
    if (grow(&x->times, x->ntimes, &x->timecap, 3, sizeof *x->times)) { rc = CDAG_NOMEM("distinct phases"); break; }
    x->times[x->ntimes++] = x->n;
    x->times[x->ntimes++] = t.times[i];
    x->times[x->ntimes++] = t.times[i + 1];
  }
  if (!rc) {
    x->n++;
    x->occurrences++;
    d->repeats++;
    d->total.ops += sum->ops;
    d->total.computes += sum->computes;
    d->total.ns = d->total.ns > UINT64_MAX - sum->ns ? UINT64_MAX : d->total.ns + sum->ns;
  }
  ptext_free(&t);
  return rc;
}

int rec_distinct_json(rec_distinct *x, FILE *f) {
  close_run(x);
  if (fflush(x->seqf) || ferror(x->seqf) || (!x->seq && x->occurrences)) return CDAG_NOMEM("the sequence of phases");
  fprintf(f, "[");
  for (int64_t k = 0; k < x->nd; k++) {
    const distinct *d = &x->d[k];
    fprintf(f, "%s{\"file\": \"phase-%04" PRId64 ".cdag\", \"ops\": %" PRIu64 ", \"computes\": %" PRIu64 ", \"compute_ns\": %" PRIu64
               ", \"repeats\": %" PRId64 ", \"total\": {\"ops\": %" PRIu64 ", \"computes\": %" PRIu64 ", \"compute_ns\": %" PRIu64 "}}",
            k ? ", " : "", k, d->sum.ops, d->sum.computes, d->sum.ns, d->repeats, d->total.ops, d->total.computes, d->total.ns);
  }
  fprintf(f, "],\n  \"flat_phases\": %" PRId64 ",\n  \"sequence\": [", x->occurrences);
  fwrite(x->seq, 1, x->seqlen, f);
  fprintf(f, "%s]", x->occurrences ? "\n  " : "");
  return CDAG_OK;
}

/* cdag — src/record/merge.c: a recorded run's part files to one graph file per phase.
 *
 * Each process wrote its own operations (record.h, `rank-R.part`); a graph file holds every
 * rank. Per phase the merger
 *  - keeps each rank's operations of the phase, in recorded position order, less those
 *    cancelled and those an implicit phase dropped (`discard`);
 *  - numbers the communicators (an agreed id and a member list name one) and gives the
 *    messages of each communicator other than MPI_COMM_WORLD tags of their own above every
 *    tag the program used on MPI_COMM_WORLD, so matching cannot mix communicators;
 *  - matches messages by the loader's own rule (match_sort_ends / match_pair_ends of
 *    src/match: the k-th send from i to j with a tag meets the k-th receive), leaves out
 *    sends nobody received (counted) and turns receives whose send is not in the phase
 *    into computations that read nothing and write the bytes (counted): the bytes come
 *    from outside the phase;
 *  - writes `phase-NNNN.cdag`: the communicators native collectives use, each rank's
 *    operations with labels where a `wait` names them (the format's compact labels: o and a
 *    base-62 number, and no indentation, since recordings are large), the packing areas
 *    as scratch. Every operation line comes from the format's one writer (ir_write_line),
 *    here or in the recorder, which wrote the collectives and local ops passed through.
 * Then `index.json` sums it up, with the computations written and their recorded time. A part file without `finalized` is from a process that
 * did not reach MPI_Finalize: what it holds is merged, the index says the run is incomplete,
 * names the process (`unfinished`, or `missing` without a part) and says that the counts may
 * lack some of what it did (`counts_partial`). Cost: O(n log n) for n recorded operations. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/sort.h"
#include "format/format.h"
#include "match/match.h"
#include "record/record.h"

enum { K_SEND, K_RECV, K_WAIT, K_OTHER };

typedef struct mop {
  int phase;
  uint8_t kind, dropped, unmatched, labelled;
  uint8_t hashed;          /* a passive-target get whose fetched bytes' hash is known (`got`) */
  uint8_t added;           /* placed by the merger (a target's fence, computed_reads' computation) */
  uint8_t races;           /* a passive-target access that races with another origin's (epoch_conflicts: why) */
  uint32_t label;          /* its label's number, when a wait names it */
  uint32_t sub;            /* a target's fence: its place among fences at its position (spread) */
  struct mop *partner;     /* the whole run's other end of a message (finding phases) */
  int64_t idx;             /* its index in the rank's stream of rec_pop (finding phases), -1 none */
  int peer, tag, comm;     /* send/recv: world peer, tag, local comm id; collectives: comm id */
  int ptag;                /* a probed pair's tag of its own in the graph (both ends), -1 none */
  uint64_t seq;
  uint64_t mseq;           /* the position it is matched at: seq, or for a probed receive the
                              probe's (`probed` line) */
  int64_t line;            /* in its part file */
  char *text;              /* the operation as written, after its position */
} mop;

typedef struct { int id, n; int *members; int global; } mcomm;
typedef struct { int phase; char *text; } mline;
typedef struct { char name[160]; uint64_t n; } mcount;
typedef struct { uint64_t seq; int64_t line; } mdrop;
/* `K probed SEQ PSEQ`: receive SEQ is matched at position PSEQ. `K got SEQ HASH`: the get at
   SEQ fetched bytes of that hash. */
typedef struct { uint64_t seq, hash; int64_t line; int phase; } mgot;
typedef struct { uint64_t seq, pseq; int64_t line; } mprobe;
/* `K fold OFF1 OFF2 D N` (record.h): the operation lines in bytes [OFF1, OFF2) of the part
   repeated N times, the i-th i * D positions further. */
typedef struct { int phase; uint64_t off1, off2, d, n; int64_t line; } mfold;

/* Malformed lines: the first MERGE_BAD_KEPT go to index.json, MERGE_BAD_LOGGED to the log. */
enum { MERGE_BAD_KEPT = 8, MERGE_BAD_LOGGED = 20 };

typedef struct {
  char *file;              /* the part file's text, lines NUL-terminated in place */
  mop *ops; int64_t nops, cap;
  mcomm *comms; int ncomms, commcap;
  int *byid;               /* comms' indices by id, then index (number_comms): global_comm */
  mline *scratch; int64_t nscratch, scratchcap;
  mdrop *drops; int64_t ndrops, dropcap;   /* `drop` lines, applied once every operation is read */
  mprobe *probes; int64_t nprobes, probecap;   /* `probed` lines, the same way */
  mgot *gots; int64_t ngots, gotcap;           /* `got` lines, the same way */
  mfold *folds; int64_t nfolds, foldcap;   /* `fold` lines, expanded once every operation is read */
  char **texts; int64_t ntexts, textcap;   /* wait lines the folds wrote, shifted */
  int discard_phase; uint64_t discard_seq;
  int finalized, maxphase;
  int declared;            /* phases the file started (`phase K` lines): 0..declared-1 */
  int present;             /* the part file exists */
  int has_fixes;           /* a `fixes` line (written at MPI_Finalize) */
  uint64_t fixes[3];
} mrank;

typedef struct {
  const char *dir;
  FILE *log;
  int nprocs;
  mrank *r;
  mcomm **global; int nglobal;     /* distinct communicators other than MPI_COMM_WORLD */
  uint64_t *tagkey; int64_t ntags; /* sorted (global comm << 32 | tag) of non-world messages */
  int tag_base;                    /* first tag given to them */
  int64_t nprobed;                 /* probed pairs of the phase given a tag of their own, after those */
  mcount *calls, *unsup; int ncalls, nunsup, callcap, unsupcap;
  mcount *why; int nwhy, whycap;   /* "CALL: reason" -> calls left out for it */
  mcount *intr; int nintr, intrcap; /* blocking collectives a stopped process never made, left out */
  mcount *unord; int nunord, unordcap; /* fetches whose bytes MPI's order decided: bytes from outside */
  mcount *oom; int noom, oomcap;   /* out_of_memory lines, summed over ranks by kind */
  char (*waitlab)[IR_COMPACT_LABEL];  /* the labels of the wait line being written */
  const char **waitptr;
  int64_t waitcap;
  int64_t nbad;                    /* malformed lines, all parts */
  uint64_t min_gap;                /* `timing` lines: the largest least gap */
  int node_procs, node_cpus;       /* and the node with the most processes per CPU */
  int cut;                         /* the one implicit phase was cut where the run repeats */
  struct mread *reads; int64_t nreads, readcap;   /* passive-target gets placed at their targets */
  char bad[MERGE_BAD_KEPT][240];   /* the first of them, FILE:LINE: reason */
} merger;

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *b = malloc(cap + 1);
  while (b) {
    size_t k = fread(b + n, 1, cap - n, f);
    n += k;
    if (n < cap) break;
    char *nb = realloc(b, 2 * cap + 1);
    if (!nb) { free(b); b = NULL; break; }
    b = nb;
    cap *= 2;
  }
  fclose(f);
  if (b) b[n] = 0;
  else errno = ENOMEM;   /* not a file the process failed to leave */
  return b;
}

static int add_count(mcount **a, int *n, int *cap, const char *name, uint64_t k) {
  for (int i = 0; i < *n; i++)
    if (!strcmp((*a)[i].name, name)) { (*a)[i].n += k; return 0; }
  int64_t c = *cap;
  if (base_grow((void **)a, *n, &c, 1, sizeof **a, "merger")) return -1;
  *cap = (int)c;
  snprintf((*a)[*n].name, sizeof (*a)[*n].name, "%s", name);
  (*a)[(*n)++].n = k;
  return 0;
}

/* Reads `field VALUE` from an operation's text; 0 if absent. */
static int field(const char *text, const char *name, long long *v) {
  size_t n = strlen(name);
  for (const char *p = strstr(text, name); p; p = strstr(p + 1, name))
    if ((p == text || p[-1] == ' ') && p[n] == ' ') {
      *v = strtoll(p + n + 1, NULL, 0);
      return 1;
    }
  return 0;
}

/* ---- reading part files: every field checked against its bounds before it is used ---- */

/* A malformed line: reported as FILE:LINE: reason (the first few in the log and the index,
   all counted); the merge then fails, since the part cannot be trusted. */
static void bad_line(merger *m, int rank, int64_t line, const char *fmt, ...) {
  char why[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  if (m->nbad < MERGE_BAD_KEPT)
    snprintf(m->bad[m->nbad], sizeof m->bad[0], "rank-%d.part:%lld: %s", rank, (long long)line, why);
  if (m->log && m->nbad < MERGE_BAD_LOGGED)
    fprintf(m->log, "cdag record: %s/rank-%d.part:%lld: %s\n", m->dir, rank, (long long)line, why);
  m->nbad++;
}

/* An unsigned decimal (digits only: no sign, no blank) at *p, at most max; advances *p past
   it and one blank. 0 if there is none or it is out of range. */
static int unum(char **p, uint64_t max, uint64_t *v) {
  char *s = *p, *e;
  if (*s < '0' || *s > '9') return 0;
  errno = 0;
  unsigned long long x = strtoull(s, &e, 10);
  if (errno || x > max || (*e && *e != ' ')) return 0;
  *v = x;
  *p = *e ? e + 1 : e;
  return 1;
}

/* A count written as NAME N [TEXT]: NAME one word of at most 63 characters, N unsigned. */
static int count_line(char *l, char name[64], uint64_t *n, char **rest) {
  char *sp = strchr(l, ' ');
  if (!sp || sp == l || sp - l > 63) return 0;
  memcpy(name, l, (size_t)(sp - l));
  name[sp - l] = 0;
  char *p = sp + 1;
  if (!unum(&p, UINT64_MAX, n)) return 0;
  if (rest) *rest = p;
  return rest ? *p != 0 : *p == 0;
}

static int parse_op(merger *m, mrank *r, int rank, int64_t line, int phase, uint64_t seq, char *text) {
  long long v = 0;
  int send = !strncmp(text, "send ", 5), recv = !strncmp(text, "recv ", 5);
  int kind = send ? K_SEND : recv ? K_RECV : !strncmp(text, "wait ", 5) ? K_WAIT : K_OTHER;
  int peer = -1, tag = 0, comm = 0;
  if (send || recv) {
    char *e;
    long long bytes = strtoll(text + 5, &e, 10);
    if (e == text + 5 || bytes < 0) return bad_line(m, rank, line, "%s of %s bytes", send ? "a send" : "a receive", text + 5), 0;
    if (!field(text, send ? "to" : "from", &v) || v < 0 || v >= m->nprocs)
      return bad_line(m, rank, line, "%s: the peer is not a rank of the %d processes", text, m->nprocs), 0;
    peer = (int)v;
    if (field(text, "tag", &v) && (v < 0 || v > INT32_MAX)) return bad_line(m, rank, line, "%s: tag %lld", text, v), 0;
    tag = field(text, "tag", &v) ? (int)v : 0;
  }
  uint64_t cost;
  char *c = text + 8;
  if (!strncmp(text, "compute ", 8) && !unum(&c, INT64_MAX, &cost))   /* index.json sums them */
    return bad_line(m, rank, line, "%s: the cost is not a number of ns (digits, at most 2^63 - 1)", text), 0;
  if (field(text, "comm", &v)) {
    if (v < 0 || v > INT32_MAX) return bad_line(m, rank, line, "%s: communicator %lld", text, v), 0;
    comm = (int)v;
  }
  if (base_grow((void **)&r->ops, r->nops, &r->cap, 1, sizeof *r->ops, "merger")) return CDAG_NOMEM("recorded operations");
  mop *o = &r->ops[r->nops++];
  *o = (mop){.phase = phase, .kind = (uint8_t)kind, .peer = peer, .tag = tag, .ptag = -1, .comm = comm, .seq = seq,
             .mseq = seq, .line = line, .text = text};
  if (phase > r->maxphase) r->maxphase = phase;
  return CDAG_OK;
}

/* comm ID N r0 .. rN-1: N members, each a rank of the run, the size at most the run's. */
static int parse_comm(merger *m, mrank *r, int rank, int64_t line, char *p) {
  uint64_t id, n, w;
  const char *text = p;
  if (!unum(&p, INT32_MAX, &id) || id == 0 || !unum(&p, INT32_MAX, &n) || n == 0 || n > (uint64_t)m->nprocs)
    return bad_line(m, rank, line, "comm %.40s: the id must be a positive number and the size 1 to %d (the run's processes)",
                    text, m->nprocs), 0;
  int64_t cap = r->commcap;
  if (base_grow((void **)&r->comms, r->ncomms, &cap, 1, sizeof *r->comms, "merger")) return CDAG_NOMEM("communicators");
  r->commcap = (int)cap;
  int *members = malloc((size_t)n * sizeof *members);
  if (!members) return CDAG_NOMEM("communicators");
  for (uint64_t i = 0; i < n; i++) {
    if (!unum(&p, (uint64_t)m->nprocs - 1, &w)) {
      free(members);
      return bad_line(m, rank, line, "communicator %llu: member %llu of %llu is missing or not a rank of the %d processes",
                      (unsigned long long)id, (unsigned long long)i, (unsigned long long)n, m->nprocs), 0;
    }
    members[i] = (int)w;
  }
  if (*p) {
    free(members);
    return bad_line(m, rank, line, "communicator %llu: more than its %llu members", (unsigned long long)id,
                    (unsigned long long)n), 0;
  }
  r->comms[r->ncomms++] = (mcomm){(int)id, (int)n, members, -1};
  return CDAG_OK;
}

static int not_a_line(merger *m, int rank, int64_t line, const char *l) {
  bad_line(m, rank, line, "not a line of a part file: \"%.60s\"", l);
  return 0;
}

/* A line of phase a (the number it starts with, p after it): an operation at its position
   or what the recorder says of one (drop, probed, got, fold, scratch). */
static int parse_numbered(merger *m, mrank *r, int rank, int64_t line, char *l, uint64_t a, char *p) {
  uint64_t b, c;
  if (a >= (uint64_t)r->declared) return bad_line(m, rank, line, "an operation of phase %llu, which the part never started", (unsigned long long)a), 0;
  if (!strncmp(p, "drop ", 5) && (p += 5, unum(&p, UINT64_MAX, &b) && !*p)) {
    int64_t cap = r->dropcap;
    if (base_grow((void **)&r->drops, r->ndrops, &cap, 1, sizeof *r->drops, "merger")) return CDAG_NOMEM("recorded operations");
    r->dropcap = cap;
    r->drops[r->ndrops++] = (mdrop){b, line};
    return 0;
  }
  if (!strncmp(p, "probed ", 7)) {
    char *q = p + 7;
    if (!unum(&q, UINT64_MAX, &b) || !unum(&q, UINT64_MAX, &c) || *q || c >= b)
      return bad_line(m, rank, line, "probed %.60s: not a receive's position and an earlier probe's", p + 7), 0;
    int64_t cap = r->probecap;
    if (base_grow((void **)&r->probes, r->nprobes, &cap, 1, sizeof *r->probes, "merger")) return CDAG_NOMEM("recorded operations");
    r->probecap = cap;
    r->probes[r->nprobes++] = (mprobe){b, c, line};
    return 0;
  }
  if (!strncmp(p, "got ", 4)) {
    char *q = p + 4;
    if (!unum(&q, UINT64_MAX, &b) || !unum(&q, UINT64_MAX, &c) || *q)
      return bad_line(m, rank, line, "got %.60s: not a get's position and a hash", p + 4), 0;
    int64_t cap = r->gotcap;
    if (base_grow((void **)&r->gots, r->ngots, &cap, 1, sizeof *r->gots, "merger")) return CDAG_NOMEM("recorded operations");
    r->gotcap = cap;
    r->gots[r->ngots++] = (mgot){b, c, line, (int)a};
    return 0;
  }
  if (!strncmp(p, "fold ", 5)) {
    uint64_t o1, o2, d, n;
    char *q = p + 5;
    if (!unum(&q, UINT64_MAX, &o1) || !unum(&q, UINT64_MAX, &o2) || !unum(&q, UINT64_MAX / 2, &d) ||
        !unum(&q, UINT64_MAX, &n) || *q || o1 >= o2 || o2 > (uint64_t)(l - r->file) || !d || !n)
      return bad_line(m, rank, line, "fold %.60s: not two offsets before the line, a step and a count", p + 5), 0;
    int64_t cap = r->foldcap;
    if (base_grow((void **)&r->folds, r->nfolds, &cap, 1, sizeof *r->folds, "merger")) return CDAG_NOMEM("folds");
    r->foldcap = cap;
    r->folds[r->nfolds++] = (mfold){(int)a, o1, o2, d, n, line};
    return 0;
  }
  if (!strncmp(p, "scratch ", 8)) {
    char *q = p + 8, *e;
    errno = 0;
    strtoull(q, &e, 16);
    if (e == q || *e != ' ' || errno || (q = e + 1, !unum(&q, UINT64_MAX, &b)) || *q)
      return bad_line(m, rank, line, "scratch %s: not an address and a size", p + 8), 0;
    if (base_grow((void **)&r->scratch, r->nscratch, &r->scratchcap, 1, sizeof *r->scratch, "merger")) return CDAG_NOMEM("scratch");
    r->scratch[r->nscratch++] = (mline){(int)a, p + 8};
    return 0;
  }
  if (unum(&p, UINT64_MAX, &b) && *p) return parse_op(m, r, rank, line, (int)a, b, p);
  return not_a_line(m, rank, line, l);
}

/* Operations (numbered lines) are most of a part: they are tried first, and no keyword line
   starts with a digit. */
static int parse_line(merger *m, mrank *r, int rank, int64_t line, char *l) {
  char name[64], *rest, *p = l;
  uint64_t a, b, c;
  if (*l >= '0' && *l <= '9')
    return unum(&p, INT32_MAX, &a) && *p ? parse_numbered(m, r, rank, line, l, a, p) : not_a_line(m, rank, line, l);
  if (!strncmp(l, "call ", 5) && count_line(l + 5, name, &a, NULL))
    return add_count(&m->calls, &m->ncalls, &m->callcap, name, a) ? CDAG_NOMEM("counts") : 0;
  if (!strncmp(l, "unsupported_why ", 16) && count_line(l + 16, name, &a, &rest)) {
    char key[160];
    snprintf(key, sizeof key, "%s: %s", name, rest);
    return add_count(&m->why, &m->nwhy, &m->whycap, key, a) ? CDAG_NOMEM("counts") : 0;
  }
  if (!strncmp(l, "unsupported ", 12) && count_line(l + 12, name, &a, NULL))
    return add_count(&m->unsup, &m->nunsup, &m->unsupcap, name, a) ? CDAG_NOMEM("counts") : 0;
  if (!strncmp(l, "out_of_memory ", 14) && count_line(l + 14, name, &a, NULL))
    return add_count(&m->oom, &m->noom, &m->oomcap, name, a) ? CDAG_NOMEM("counts") : 0;
  static const char *const counts[] = {"call ", "unsupported_why ", "unsupported ", "out_of_memory "};
  for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
    if (!strncmp(l, counts[i], strlen(counts[i])))
      return bad_line(m, rank, line, "%.60s: not a name and a count (digits, no sign)", l), 0;
  if (!strncmp(l, "comm ", 5)) return parse_comm(m, r, rank, line, l + 5);
  if (!strcmp(l, "finalized")) { r->finalized = 1; return 0; }
  if (!strncmp(l, "fixes ", 6) && (p = l + 6, unum(&p, UINT64_MAX, &a) && unum(&p, UINT64_MAX, &b) &&
                                   unum(&p, UINT64_MAX, &c) && !*p)) {
    r->fixes[0] = a; r->fixes[1] = b; r->fixes[2] = c;
    r->has_fixes = 1;
    return 0;
  }
  if (!strncmp(l, "timing ", 7) && (p = l + 7, unum(&p, INT32_MAX, &a) && unum(&p, INT32_MAX, &b) &&
                                    unum(&p, UINT64_MAX, &c) && !*p)) {
    uint64_t cpus = b ? b : 1, had = m->node_cpus ? (uint64_t)m->node_cpus : 1;   /* 0: unknown */
    if (!m->node_procs || a * had > (uint64_t)m->node_procs * cpus) m->node_procs = (int)a, m->node_cpus = (int)b;
    if (c > m->min_gap) m->min_gap = c;
    return 0;
  }
  if (!strncmp(l, "discard ", 8) && (p = l + 8, unum(&p, INT32_MAX, &a) && unum(&p, UINT64_MAX, &b) && !*p)) {
    r->discard_phase = (int)a;
    r->discard_seq = b;
    return 0;
  }
  if (!strncmp(l, "phase ", 6) && (p = l + 6, unum(&p, INT32_MAX, &a) && !*p)) {
    if (r->declared && a == (uint64_t)r->declared - 1 && a == (uint64_t)r->discard_phase) return 0;   /* restarted after `discard` */
    if (a != (uint64_t)r->declared) return bad_line(m, rank, line, "phase %llu after %d phases", (unsigned long long)a, r->declared), 0;
    r->declared++;
    return 0;
  }
  if (!strncmp(l, "end ", 4) && (p = l + 4, unum(&p, INT32_MAX, &a) && !*p)) return 0;
  return not_a_line(m, rank, line, l);
}

/* The header: `cdag-record-part 1` then `rank R nprocs P`, R the file's rank, P the run's. */
static int check_header(merger *m, int rank, char *l1, char *l2) {
  uint64_t v, r, n;
  char *p = l1;
  if (!l1 || strncmp(l1, "cdag-record-part ", 17)) return bad_line(m, rank, 1, "no header: not a part file of cdag record"), 0;
  p = l1 + 17;
  if (!unum(&p, UINT64_MAX, &v) || *p || v != 1)
    return bad_line(m, rank, 1, "part file format version %s, this merger reads version 1", l1 + 17), 0;
  p = l2 ? l2 + 5 : NULL;
  if (!l2 || strncmp(l2, "rank ", 5) || !unum(&p, INT32_MAX, &r) || strncmp(p, "nprocs ", 7) || (p += 7, !unum(&p, INT32_MAX, &n)) || *p)
    return bad_line(m, rank, 2, "no `rank R nprocs P` line"), 0;
  if (r != (uint64_t)rank || n != (uint64_t)m->nprocs)
    return bad_line(m, rank, 2, "rank %llu of %llu processes in the part of rank %d of %d", (unsigned long long)r,
                    (unsigned long long)n, rank, m->nprocs), 0;
  return 1;
}

static int cmp_seq(const void *a, const void *b);

static int cmp_got(const void *a, const void *b) {
  const mgot *x = a, *y = b;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* What the get at seq of r fetched (its `got` line; r->gots sorted by check_rank). */
static uint64_t got_hash(const mrank *r, uint64_t seq) {
  mgot key = {.seq = seq};
  if (!r->ngots) return 0;
  const mgot *g = bsearch(&key, r->gots, (size_t)r->ngots, sizeof *r->gots, cmp_got);
  return g ? g->hash : 0;
}

/* Whether the rank declared communicator id (0, MPI_COMM_WORLD, always). */
static int declared_comm(const mrank *r, int id) {
  for (int i = 0; i < r->ncomms && id; i++)
    if (r->comms[i].id == id) return 1;
  return id == 0;
}

static int time_only(const mop *o);

/* A wait's text with every position d further, kept with the rank. */
static char *shifted_wait(mrank *r, const char *text, uint64_t d) {
  size_t cap = strlen(text) * 2 + 32, n = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  n += (size_t)snprintf(t, cap, "wait");
  for (const char *p = text + 5, *e; *p; p = e) {
    unsigned long long v = strtoull(p, (char **)&e, 10);
    if (e == p) break;
    if (cap - n < 24) {
      char *nt = realloc(t, cap *= 2);
      if (!nt) { free(t); return NULL; }
      t = nt;
    }
    n += (size_t)snprintf(t + n, cap - n, " %llu", v + (unsigned long long)d);
  }
  if (base_grow((void **)&r->texts, r->ntexts, &r->textcap, 1, sizeof *r->texts, "merger")) { free(t); return NULL; }
  return r->texts[r->ntexts++] = t;
}

/* The folds of a part (record.h, `fold`): the operations of each template, less time-only
   computations, repeated with their positions shifted. At most 2^31 operations in all. */
static int expand_folds(merger *m, mrank *r, int rank) {
  int64_t read = r->nops;   /* the operations read, in file order: a template is a range of them */
  for (int64_t f = 0; f < r->nfolds; f++) {
    const mfold *x = &r->folds[f];
    int64_t lo = 0, hi = read;
    while (lo < hi) {
      int64_t mid = (lo + hi) / 2;
      if ((uint64_t)(r->ops[mid].text - r->file) < x->off1) lo = mid + 1;
      else hi = mid;
    }
    int64_t a = lo;
    for (hi = a; hi < read && (uint64_t)(r->ops[hi].text - r->file) < x->off2; hi++) {}
    int64_t n = 0;
    for (int64_t i = a; i < hi; i++) n += !time_only(&r->ops[i]) && r->ops[i].phase == x->phase;
    if (n && x->n > (uint64_t)(INT32_MAX - r->nops) / (uint64_t)n)
      return bad_line(m, rank, x->line, "fold: %llu repeats of %lld operations, more than a part holds",
                      (unsigned long long)x->n, (long long)n), 0;
    if (base_grow((void **)&r->ops, r->nops, &r->cap, (int64_t)x->n * n, sizeof *r->ops, "merger")) return CDAG_NOMEM("folds");
    for (uint64_t i = 1; i <= x->n; i++)
      for (int64_t j = a; j < hi; j++) {
        mop o = r->ops[j];
        if (time_only(&o) || o.phase != x->phase) continue;
        o.seq += i * x->d;
        o.mseq += i * x->d;
        o.line = x->line;
        if (o.kind == K_WAIT && !(o.text = shifted_wait(r, o.text, i * x->d))) return CDAG_NOMEM("folds");
        r->ops[r->nops++] = o;
      }
  }
  return CDAG_OK;
}

/* After the whole part is read: sequence numbers unique, every one a wait or drop names
   known (a wait naming an unknown one would reorder the rank, a duplicate drop a
   dependency), every communicator an operation names declared. O(n log n). */
static int check_rank(merger *m, mrank *r, int rank) {
  if (!r->nops) {
    for (int64_t i = 0; i < r->ndrops; i++) bad_line(m, rank, r->drops[i].line, "drop of sequence number %llu, which no operation has", (unsigned long long)r->drops[i].seq);
    for (int64_t i = 0; i < r->nprobes; i++) bad_line(m, rank, r->probes[i].line, "probed: the part has no operations");
    for (int64_t i = 0; i < r->ngots; i++) bad_line(m, rank, r->gots[i].line, "got: the part has no operations");
    return CDAG_OK;
  }
  mop **s = malloc((size_t)r->nops * sizeof *s);
  if (!s) return CDAG_NOMEM("recorded operations");
  for (int64_t i = 0; i < r->nops; i++) s[i] = &r->ops[i];
  base_sort(s, r->nops, sizeof *s, cmp_seq);
  for (int64_t i = 1; i < r->nops; i++)
    if (s[i]->seq == s[i - 1]->seq)
      bad_line(m, rank, s[i]->line, "sequence number %llu again (line %lld has it)", (unsigned long long)s[i]->seq,
               (long long)s[i - 1]->line);
  for (int64_t i = 0; i < r->nops; i++) {
    mop *o = &r->ops[i];
    if (!declared_comm(r, o->comm))
      bad_line(m, rank, o->line, "communicator %d, which the part never declared", o->comm);
    if (o->kind != K_WAIT) continue;
    char *p = o->text + 5;
    uint64_t seq;
    while (*p) {
      if (!unum(&p, UINT64_MAX, &seq)) { bad_line(m, rank, o->line, "wait: \"%.40s\" is not a sequence number", p); break; }
      mop key = {.seq = seq}, *kp = &key;
      if (!bsearch(&kp, s, (size_t)r->nops, sizeof *s, cmp_seq))
        bad_line(m, rank, o->line, "wait names sequence number %llu, which no operation has", (unsigned long long)seq);
    }
  }
  for (int64_t i = 0; i < r->ndrops; i++) {
    mop key = {.seq = r->drops[i].seq}, *kp = &key, **f = bsearch(&kp, s, (size_t)r->nops, sizeof *s, cmp_seq);
    if (!f) bad_line(m, rank, r->drops[i].line, "drop of sequence number %llu, which no operation has", (unsigned long long)r->drops[i].seq);
    else (*f)->dropped = 1;
  }
  for (int64_t i = 0; i < r->nprobes; i++) {   /* the probe's position is its own: no operation has it */
    const mprobe *x = &r->probes[i];
    mop key = {.seq = x->seq}, *kp = &key, **f = bsearch(&kp, s, (size_t)r->nops, sizeof *s, cmp_seq), **g;
    key.seq = x->pseq;
    g = bsearch(&kp, s, (size_t)r->nops, sizeof *s, cmp_seq);
    if (!f || (*f)->kind != K_RECV || (*f)->mseq != (*f)->seq || g)
      bad_line(m, rank, x->line, "probed %llu %llu: not a receive probed once at a position of its own",
               (unsigned long long)x->seq, (unsigned long long)x->pseq);
    else (*f)->mseq = x->pseq;
  }
  for (int64_t i = 0; i < r->ngots; i++) {
    mop key = {.seq = r->gots[i].seq}, *kp = &key, **f = bsearch(&kp, s, (size_t)r->nops, sizeof *s, cmp_seq);
    if (!f || (*f)->kind != K_OTHER || strncmp((*f)->text, "get ", 4) || (*f)->hashed || (*f)->phase != r->gots[i].phase)
      bad_line(m, rank, r->gots[i].line, "got %llu: not the position of a get of its phase told once",
               (unsigned long long)r->gots[i].seq);
    else (*f)->hashed = 1;
  }
  base_sort(r->gots, r->ngots, sizeof *r->gots, cmp_got);   /* got_hash looks them up */
  free(s);
  return CDAG_OK;
}

static int load_rank(merger *m, int rank) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rank-%d.part", m->dir, rank);
  mrank *r = &m->r[rank];
  if (!(r->file = read_all(path))) {   /* it died before MPI_Init returned, or could not write */
    if (errno == ENOMEM) return cdag__error(CDAG_ERR_NOMEM, "%s: out of memory reading it", path);
    return CDAG_OK;
  }
  r->present = 1;
  r->discard_phase = -1;   /* written for parts present only: a missing one costs no page */
  int rc = 0;
  int64_t line = 0, bad0 = m->nbad;
  char *first[2] = {NULL, NULL};
  for (char *l = r->file, *e; l && *l && !rc; l = e ? e + 1 : NULL) {
    if ((e = strchr(l, '\n'))) *e = 0;
    else break;   /* the last line of a process that crashed may be cut short */
    if (++line <= 2) {
      first[line - 1] = l;
      if (line == 2 && !check_header(m, rank, first[0], first[1])) break;
      continue;
    }
    rc = parse_line(m, r, rank, line, l);
  }
  if (!rc && line < 2 && m->nbad == bad0) check_header(m, rank, first[0], first[1]);
  if (!rc) rc = expand_folds(m, r, rank);
  if (!rc) rc = check_rank(m, r, rank);
  if (!r->finalized && m->log)
    fprintf(m->log, "cdag record: rank %d did not reach MPI_Finalize; its recording ends early\n", rank);
  return rc;
}

/* ---- communicators and tags ---- */

static int same_comm(const mcomm *a, const mcomm *b) {
  return a->id == b->id && a->n == b->n && !memcmp(a->members, b->members, (size_t)a->n * sizeof *a->members);
}

typedef struct { int rank, i; } cref;

static const mcomm *cref_comm(const merger *m, cref c) { return &m->r[c.rank].comms[c.i]; }

/* Communicators by id, member count, members, then where they were declared. */
static int cmp_cref(const void *pa, const void *pb, void *ctx) {
  const merger *m = ctx;
  cref x = *(const cref *)pa, y = *(const cref *)pb;
  const mcomm *a = cref_comm(m, x), *b = cref_comm(m, y);
  if (a->id != b->id) return (a->id > b->id) - (a->id < b->id);
  if (a->n != b->n) return (a->n > b->n) - (a->n < b->n);
  int c = a->n ? memcmp(a->members, b->members, (size_t)a->n * sizeof *a->members) : 0;
  if (c) return c;
  if (x.rank != y.rank) return (x.rank > y.rank) - (x.rank < y.rank);
  return (x.i > y.i) - (x.i < y.i);
}

static int cmp_byid(const void *pa, const void *pb, void *ctx) {
  const mcomm *c = ctx, *a = &c[*(const int *)pa], *b = &c[*(const int *)pb];
  if (a->id != b->id) return (a->id > b->id) - (a->id < b->id);
  return (*(const int *)pa > *(const int *)pb) - (*(const int *)pa < *(const int *)pb);
}

/* Every declared communicator's graph number (its global: 1, 2, ... in order of first
   declaration, rank by rank), equal communicators (id and members) one number; and each
   rank's ids sorted for global_comm. A sort, not a search of the numbered ones per
   declaration: passive-target epochs declare up to a communicator per pair of processes and
   window slot. O(C log C) for C declarations. */
static int number_comms(merger *m) {
  int64_t n = 0, cap = 0;
  for (int r = 0; r < m->nprocs; r++) n += m->r[r].ncomms;
  cref *all = malloc((size_t)(n ? n : 1) * sizeof *all);
  int ngroups = 0;
  int64_t *first = malloc((size_t)(n ? n : 1) * sizeof *first);   /* per group: its first declaration */
  int rc = all && first ? CDAG_OK : CDAG_NOMEM("communicators");
  for (int r = 0, k = 0; !rc && r < m->nprocs; r++)
    for (int i = 0; i < m->r[r].ncomms; i++) all[k++] = (cref){r, i};
  if (!rc) base_sort_r(all, n, sizeof *all, cmp_cref, m);
  for (int64_t k = 0; !rc && k < n; k++) {   /* equal neighbours: one group, first declaration first */
    if (!k || !same_comm(cref_comm(m, all[k - 1]), cref_comm(m, all[k]))) first[ngroups++] = k;
    m->r[all[k].rank].comms[all[k].i].global = -(ngroups);   /* -(group + 1) until numbered */
  }
  for (int r = 0; !rc && r < m->nprocs; r++)   /* numbered in order of first declaration */
    for (int i = 0; !rc && i < m->r[r].ncomms; i++) {
      mcomm *c = &m->r[r].comms[i];
      if (c->global > 0) continue;
      int gi = -c->global - 1;
      if (base_grow((void **)&m->global, m->nglobal, &cap, 1, sizeof *m->global, "merger")) {
        rc = CDAG_NOMEM("communicators");
        break;
      }
      m->global[m->nglobal++] = c;
      for (int64_t k = first[gi]; k < n && (k == first[gi] || -cref_comm(m, all[k])->global - 1 == gi); k++)
        m->r[all[k].rank].comms[all[k].i].global = m->nglobal;
    }
  for (int r = 0; !rc && r < m->nprocs; r++) {
    mrank *R = &m->r[r];
    if (!R->ncomms) continue;
    if (!(R->byid = malloc((size_t)R->ncomms * sizeof *R->byid))) rc = CDAG_NOMEM("communicators");
    for (int i = 0; !rc && i < R->ncomms; i++) R->byid[i] = i;
    if (!rc) base_sort_r(R->byid, R->ncomms, sizeof *R->byid, cmp_byid, R->comms);
  }
  free(all), free(first);
  return rc;
}

/* The graph's number of a rank's communicator id: 0 for MPI_COMM_WORLD, -1 unknown (the
   first declaration of the id). O(log C). */
static int global_comm(const mrank *r, int id) {
  if (id == 0) return 0;
  int lo = 0, hi = r->byid ? r->ncomms : 0;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (r->comms[r->byid[mid]].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < (r->byid ? r->ncomms : 0) && r->comms[r->byid[lo]].id == id ? r->comms[r->byid[lo]].global : -1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int assign_tags(merger *m) {
  int64_t cap = 0;
  int maxtag = -1;
  for (int r = 0; r < m->nprocs; r++)
    for (int64_t i = 0; i < m->r[r].nops; i++) {
      mop *o = &m->r[r].ops[i];
      if (o->kind != K_SEND && o->kind != K_RECV) continue;
      int g = global_comm(&m->r[r], o->comm);
      if (g < 0) return cdag__error(CDAG_ERR_FORMAT, "rank %d: a message on communicator %d, which it never declared", r, o->comm);
      if (g == 0) { if (o->tag > maxtag) maxtag = o->tag; continue; }
      if (base_grow((void **)&m->tagkey, m->ntags, &cap, 1, sizeof *m->tagkey, "merger")) return CDAG_NOMEM("tags");
      m->tagkey[m->ntags++] = (uint64_t)g << 32 | (uint32_t)o->tag;
    }
  if (m->ntags) base_sort(m->tagkey, m->ntags, sizeof *m->tagkey, cmp_u64);
  int64_t k = 0;
  for (int64_t i = 0; i < m->ntags; i++)
    if (!k || m->tagkey[i] != m->tagkey[k - 1]) m->tagkey[k++] = m->tagkey[i];
  m->ntags = k;
  m->tag_base = maxtag + 1;
  if ((int64_t)m->tag_base + k > 0x7fffffff) return cdag__error(CDAG_ERR_UNSUPPORTED, "more message tags than a graph holds");
  return CDAG_OK;
}

static int graph_tag(const merger *m, const mrank *r, const mop *o) {
  int g = global_comm(r, o->comm);
  if (g == 0) return o->tag;
  uint64_t key = (uint64_t)g << 32 | (uint32_t)o->tag;
  const uint64_t *p = bsearch(&key, m->tagkey, (size_t)m->ntags, sizeof key, cmp_u64);
  return m->tag_base + (int)(p - m->tagkey);
}

/* ---- matching ----
   The loader's rule (match/match.h, match_pair_ends): per receiving rank, the k-th send of a
   channel meets its k-th receive; positions are each rank's recorded order. */

static int cmp_seq(const void *a, const void *b) {
  const mop *x = *(const mop *const *)a, *y = *(const mop *const *)b;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Program order as written: by position, and fences that share one (spread) in the order
   spread gave them there. */
static int cmp_written(const void *a, const void *b) {
  const mop *x = *(const mop *const *)a, *y = *(const mop *const *)b;
  if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
  return (x->sub > y->sub) - (x->sub < y->sub);
}

/* MPI's matching order: a probed receive where its probe was. */
static int cmp_mseq(const void *a, const void *b) {
  const mop *x = *(const mop *const *)a, *y = *(const mop *const *)b;
  return (x->mseq > y->mseq) - (x->mseq < y->mseq);
}

static int kept(const mrank *r, const mop *o, int phase) {
  return o->phase == phase && !o->dropped && !(o->phase == r->discard_phase && o->seq < r->discard_seq);
}

/* The rank's operations of the phase are r->ops[lo .. hi): the array is sorted by phase,
   then position (sort_ops), so that each phase costs its own operations only. */
static void phase_range(const mrank *r, int phase, int64_t *lo, int64_t *hi) {
  int64_t a = 0, b = r->nops;
  while (a < b) {
    int64_t mid = (a + b) / 2;
    if (r->ops[mid].phase < phase) a = mid + 1;
    else b = mid;
  }
  *lo = a;
  for (b = r->nops; a < b;) {
    int64_t mid = (a + b) / 2;
    if (r->ops[mid].phase <= phase) a = mid + 1;
    else b = mid;
  }
  *hi = a;
}

static int cmp_phase_seq(const void *a, const void *b) {
  const mop *x = a, *y = b;
  if (x->phase != y->phase) return (x->phase > y->phase) - (x->phase < y->phase);
  if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
  return (x->sub > y->sub) - (x->sub < y->sub);   /* fences sharing a position (spread) */
}

static void sort_ops(merger *m) {
  for (int r = 0; r < m->nprocs; r++)
    if (m->r[r].nops) base_sort(m->r[r].ops, m->r[r].nops, sizeof *m->r[r].ops, cmp_phase_seq);
}

typedef struct { merger *m; mop **ops; rec_summary *sum; int partners; int rc; } unpaired;

/* A probed pair gets a tag no other message has: in the graph its receive stands where the
   program made it (where it writes its buffer), and the loader, pairing in program order
   per tag, must still pair it with the send the probe matched. */
static void probed_pair(unpaired *x, mop *s, mop *r) {
  if (r->mseq == r->seq || r->ptag >= 0) return;
  int64_t t = (int64_t)x->m->tag_base + x->m->ntags + x->m->nprobed++;
  if (t > INT32_MAX) {
    x->rc = cdag__error(CDAG_ERR_UNSUPPORTED, "more message tags than a graph holds (probed receives)");
    return;
  }
  s->ptag = r->ptag = (int)t;
}

/* Marks an unpaired end (counted), or with x->partners notes each pair's two ends. */
static int mark_unpaired(void *ctx, int32_t s, int32_t r) {
  unpaired *x = ctx;
  if (x->partners) {
    if (s >= 0 && r >= 0) x->ops[s]->partner = x->ops[r], x->ops[r]->partner = x->ops[s];
    return 0;
  }
  if (s >= 0 && r >= 0) {
    probed_pair(x, x->ops[s], x->ops[r]);
    return 0;
  }
  x->ops[s >= 0 ? s : r]->unmatched = 1;
  if (s >= 0) x->sum->unreceived++;
  else x->sum->unsent++;
  return 0;
}

/* Marks sends and receives of the phase that have no partner, or with `partners` links
   each one to its partner instead. O(n log n). */
static int match_phase(merger *m, int phase, rec_summary *sum, int partners) {
  int64_t n = 0, lo, hi;
  for (int r = 0; r < m->nprocs; r++) {
    phase_range(&m->r[r], phase, &lo, &hi);
    for (int64_t i = lo; i < hi; i++) {
      mop *o = &m->r[r].ops[i];
      n += kept(&m->r[r], o, phase) && (o->kind == K_SEND || o->kind == K_RECV);
    }
  }
  if (n >= INT32_MAX) return cdag__error(CDAG_ERR_UNSUPPORTED, "phase %d: more than 2^31 messages", phase);
  mop **ops = malloc((size_t)(n + 1) * sizeof *ops);
  match_end *e = malloc((size_t)(n + 1) * sizeof *e), *tmp = malloc((size_t)(n + 1) * sizeof *tmp);
  int64_t *start = calloc((size_t)m->nprocs + 2, sizeof *start), *at = malloc((size_t)(n + 2) * sizeof *at);
  int32_t *dst = malloc((size_t)(n + 1) * sizeof *dst);   /* receiving rank; nprocs: a peer out of range */
  int rc = ops && e && tmp && start && at && dst ? CDAG_OK : CDAG_NOMEM("matching");
  unpaired x = {m, ops, sum, partners, CDAG_OK};
  if (!partners) m->nprobed = 0;   /* per phase: repeats of one phase get the same tags */
  int64_t k = 0;
  for (int r = 0; r < m->nprocs && !rc; r++) {   /* each rank's messages in recorded order */
    int64_t first = k;
    phase_range(&m->r[r], phase, &lo, &hi);
    for (int64_t i = lo; i < hi; i++) {
      mop *o = &m->r[r].ops[i];
      if (kept(&m->r[r], o, phase) && (o->kind == K_SEND || o->kind == K_RECV)) ops[k++] = o;
    }
    if (k > first) base_sort(ops + first, (k - first), sizeof *ops, cmp_mseq);
    for (int64_t i = first; i < k; i++) {
      int send = ops[i]->kind == K_SEND, d = send ? ops[i]->peer : r;
      dst[i] = d >= 0 && d < m->nprocs ? d : m->nprocs;
      e[i] = (match_end){send ? r : ops[i]->peer, graph_tag(m, &m->r[r], ops[i]),
                         (uint32_t)!send << 31 | (uint32_t)(i - first), (int32_t)i};
      start[dst[i] + 1]++;
    }
  }
  for (int d = 0; d <= m->nprocs && !rc; d++) start[d + 1] += start[d];
  for (int64_t i = 0; i < n && !rc; i++) tmp[start[dst[i]]++] = e[i];   /* counting sort: buckets in order */
  for (int d = m->nprocs + 1; d > 0 && !rc; d--) start[d] = start[d - 1];
  if (!rc) start[0] = 0;
  for (int d = 0; d < m->nprocs && !rc; d++) {
    match_sort_ends(tmp + start[d], start[d + 1] - start[d], e, at);
    match_pair_ends(tmp + start[d], start[d + 1] - start[d], mark_unpaired, &x);
  }
  for (int64_t i = rc ? n : start[m->nprocs]; i < n; i++)   /* a peer out of range: no partner */
    mark_unpaired(&x, tmp[i].key >> 31 ? -1 : tmp[i].op, tmp[i].key >> 31 ? tmp[i].op : -1);
  free(dst);
  free(ops);
  free(e);
  free(tmp);
  free(start);
  free(at);
  return rc ? rc : x.rc;
}

/* ---- writing ---- */

/* The recorded op at position seq among ops (by position), NULL if none: the merger's fences
   and computations may share its position (spread, computed_reads). */
static mop *find_seq(mop **ops, int64_t n, uint64_t seq) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (ops[mid]->seq < seq) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < n && ops[lo]->seq == seq; lo++)
    if (!ops[lo]->added) return ops[lo];
  return NULL;
}

static int cmp_i64_pair(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* ---- phases found without MPI_Pcontrol: phases.c finds the cuts ---- */

/* `compute COST reads all` alone: a gap's time, no structure (an iteration that computed
   10 us longer than the next has it, the next not). */
static int time_only(const mop *o) {
  if (o->kind != K_OTHER || strncmp(o->text, "compute ", 8)) return 0;
  const char *p = o->text + 8;
  while (*p >= '0' && *p <= '9') p++;
  return !strcmp(p, " reads all");
}

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static int size_word(const char *p, const char *e) {
  if (e - p < 2 || e[-1] != 'b') return 0;
  for (const char *c = p; c < e - 1; c++)
    if (*c < '0' || *c > '9') return 0;
  return 1;
}

/* An operation's text less what differs between iterations: addresses (0x...) and a
   computation's cost; with `loose`, sizes (`512b`) too. */
static uint64_t text_sym(const char *t, uint64_t h, int loose) {
  int compute = !strncmp(t, "compute ", 8);
  for (const char *p = t, *e; *p; p = *e ? e + 1 : e) {
    if (!(e = strchr(p, ' '))) e = p + strlen(p);
    int skip = (e - p > 2 && p[0] == '0' && p[1] == 'x') || (compute && p == t + 8) || (loose && size_word(p, e));
    for (const char *c = p; c < e && !skip; c++) h = mix(h, (uint8_t)*c);
    h = mix(h, ' ');
  }
  return h;
}

/* A native collective (not a local operation): its members must stay in one phase. */
/* A native collective's line (any kind the table marks native, nonblocking or not; a
   reduce with a root, not the local one). */
static int is_collective(const char *t) {
  size_t len = strcspn(t, " ");
  int kind = ir_coll_kind(t, len);
  if (kind < 0 || !ir_coll_get(kind)->native) return 0;
  return kind != IR_COLL_REDUCE || strstr(t, " root ") != NULL;
}

/* ---- collectives a crash interrupted ---- */

static int blocking_collective(const mop *o) {
  return o->kind == K_OTHER && is_collective(o->text) && !strstr(o->text, " nonblocking");
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* Rank r's last blocking collective calls on communicator g beyond the first `keep`, left
   out, counted (`interrupted`), by: a member that made only `keep`. */
static int drop_calls_beyond(merger *m, int r, int g, int64_t have, int64_t keep, int by) {
  mrank *R = &m->r[r];
  for (int64_t i = R->nops - 1; i >= 0 && have > keep; i--) {
    mop *o = &R->ops[i];
    if (o->dropped || !blocking_collective(o) || global_comm(R, o->comm) != g) continue;
    o->dropped = 1;
    have--;
    const ir_coll_info *c = ir_coll_get(ir_coll_kind(o->text, strcspn(o->text, " ")));
    if (add_count(&m->intr, &m->nintr, &m->intrcap, c->mpi, 1)) return CDAG_NOMEM("counts");
    if (m->log)
      fprintf(m->log, "cdag record: rank %d's %s on communicator %d (line %lld of its part) left out: rank %d did not "
              "make it before it stopped\n", r, c->mpi, g, (long long)o->line, by);
  }
  return CDAG_OK;
}

/* A process that did not reach MPI_Finalize may have stopped while others were inside a
   collective it never made (an OpenCoarrays `stop` on one image: MPI_Abort while the others
   wait in a barrier), and the recorder writes a call as it starts: a phase whose members made
   different numbers of calls does not load. On the communicator of each such process's last
   blocking collective, every member keeps as many calls as the member that made the fewest;
   the others' last ones are left out, counted. O(n log n). */
static int drop_interrupted(merger *m) {
  int *sus = malloc((size_t)m->nprocs * sizeof *sus), ns = 0;
  int rc = sus ? CDAG_OK : CDAG_NOMEM("merger");
  for (int r = 0; !rc && r < m->nprocs; r++) {
    const mrank *R = &m->r[r];
    for (int64_t i = R->nops - 1; R->present && !R->finalized && i >= 0; i--)
      if (blocking_collective(&R->ops[i])) {
        int g = global_comm(R, R->ops[i].comm);
        if (g >= 0) sus[ns++] = g;
        break;
      }
  }
  if (!rc) base_sort(sus, ns, sizeof *sus, cmp_int);
  int nu = 0;
  for (int i = 0; i < ns; i++)
    if (!nu || sus[nu - 1] != sus[i]) sus[nu++] = sus[i];
  int64_t *cnt = nu && !rc ? calloc((size_t)nu * (size_t)m->nprocs, sizeof *cnt) : NULL;
  if (nu && !cnt) rc = CDAG_NOMEM("merger");
  for (int r = 0; cnt && r < m->nprocs; r++)
    for (int64_t i = 0; i < m->r[r].nops; i++) {
      if (!blocking_collective(&m->r[r].ops[i])) continue;
      int g = global_comm(&m->r[r], m->r[r].ops[i].comm);
      int *at = bsearch(&g, sus, (size_t)nu, sizeof *sus, cmp_int);
      if (at) cnt[(int64_t)(at - sus) * m->nprocs + r]++;
    }
  for (int j = 0; cnt && !rc && j < nu; j++) {
    int g = sus[j], n = g ? m->global[g - 1]->n : m->nprocs, least = -1;
    const int *mem = g ? m->global[g - 1]->members : NULL;
    int64_t *c = cnt + (int64_t)j * m->nprocs;
    for (int k = 0; k < n; k++)
      if (least < 0 || c[mem ? mem[k] : k] < c[least]) least = mem ? mem[k] : k;
    for (int k = 0; k < n && !rc; k++) {
      int r = mem ? mem[k] : k;
      if (c[r] > c[least]) rc = drop_calls_beyond(m, r, g, c[r], c[least], least);
    }
  }
  free(cnt);
  free(sus);
  return rc;
}

/* A one-sided line (its epochs are the fences of every rank in between: a run that has
   them is not cut, a cut could split an epoch). */
static int is_onesided(const char *t) {
  static const char *const kinds[] = {"fence", "get ", "put ", "accumulate ", "lock comm ", "flush comm ", "unlock comm "};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (!strncmp(t, kinds[i], strlen(kinds[i]))) return 1;
  return 0;
}

/* The call an operation belongs to (record.h, Positions): its own position, or the call
   whose gap (before it) or completion (after it) it is in. */
static uint64_t call_of(uint64_t seq) { return (seq + REC_SEQ_STEP / 2) / REC_SEQ_STEP; }

typedef struct {
  mop ***ops; int64_t *nops;   /* per rank: its kept operations by position */
  rec_pop **pop; int64_t *npop;   /* per rank: the stream phases.c reads */
} mstreams;

static void streams_free(mstreams *x, int nprocs) {
  for (int r = 0; r < nprocs; r++) {
    if (x->ops) free(x->ops[r]);
    if (x->pop) free(x->pop[r]);
  }
  free(x->ops), free(x->nops), free(x->pop), free(x->npop);
}

/* One rank's stream: every kept operation but time-only computations, with its symbol and
   the wait that completes it. */
static int rank_stream(merger *m, int r, mstreams *x) {
  mrank *R = &m->r[r];
  int64_t n = 0;
  for (int64_t i = 0; i < R->nops; i++) n += kept(R, &R->ops[i], 0);
  mop **ops = x->ops[r] = malloc((size_t)(n + 1) * sizeof *ops);
  rec_pop *pop = x->pop[r] = malloc((size_t)(n + 1) * sizeof *pop);
  if (!ops || !pop) return CDAG_NOMEM("phases: streams");
  x->nops[r] = n;
  n = 0;
  for (int64_t i = 0; i < R->nops; i++)
    if (kept(R, &R->ops[i], 0)) ops[n++] = &R->ops[i];
  base_sort(ops, n, sizeof *ops, cmp_written);
  int64_t k = 0;
  uint64_t call = 0;
  for (int64_t i = 0; i < n; i++) {
    mop *o = ops[i];
    o->idx = -1;
    if (time_only(o)) continue;
    o->idx = k;
    pop[k] = (rec_pop){.waited = -1, .pidx = -1, .prank = -1, .start = !k || call_of(o->seq) != call};
    call = call_of(o->seq);
    k++;
  }
  x->npop[r] = k;
  for (int64_t i = 0; i < n; i++) {
    mop *o = ops[i];
    if (o->idx < 0) continue;
    rec_pop *p = &pop[o->idx];
    uint64_t h = mix(0xcbf29ce484222325ull, o->kind), lh = h;
    if (o->kind == K_SEND || o->kind == K_RECV) {
      lh = mix(mix(mix(h, (uint64_t)((o->peer - r + m->nprocs) % m->nprocs)), (uint64_t)global_comm(R, o->comm)),
               strstr(o->text, " wait") != NULL);
      h = mix(mix(h, strtoull(o->text + 5, NULL, 10)), (uint64_t)((o->peer - r + m->nprocs) % m->nprocs));
      h = mix(mix(mix(h, (uint64_t)graph_tag(m, R, o)), (uint64_t)global_comm(R, o->comm)), strstr(o->text, " wait") != NULL);
    } else if (o->kind == K_WAIT) {
      for (char *q = o->text + 5, *e; *q; q = e) {   /* what it completes, relative to it */
        uint64_t seq = strtoull(q, &e, 10);
        if (e == q) break;
        mop *w = find_seq(ops, n, seq);
        h = mix(h, w && w->idx >= 0 ? (uint64_t)(o->idx - w->idx) : UINT64_MAX);
        if (w && w->idx >= 0 && pop[w->idx].waited < o->idx) pop[w->idx].waited = o->idx;
      }
      lh = h;
    } else {
      lh = text_sym(o->text, h, 1);
      h = text_sym(o->text, h, 0);
    }
    p->sym = mix(h, p->start);
    p->lsym = mix(lh, p->start);
  }
  return CDAG_OK;
}

/* Links each message to its partner and each native collective to the same instance on its
   communicator's next member (a ring: a cut keeps all its members or none). */
static int link_partners(merger *m, mstreams *x) {
  rec_summary none = {0};
  int rc = match_phase(m, 0, &none, 1);
  for (int r = 0; r < m->nprocs && !rc; r++)
    for (int64_t i = 0; i < x->nops[r]; i++) {
      mop *o = x->ops[r][i];
      if (o->idx >= 0 && o->partner && o->partner->idx >= 0) {
        x->pop[r][o->idx].pidx = o->partner->idx;
        x->pop[r][o->idx].prank = o->peer;   /* the other end is on the peer */
      }
    }
  if (rc) return rc;
  /* collectives: per rank (communicator, index) sorted, so that each member's k-th on a
     communicator is found by a binary search and a walk */
  typedef struct { int64_t g, i; } gi;
  gi **c = calloc((size_t)m->nprocs, sizeof *c);
  int64_t *nc = calloc((size_t)m->nprocs, sizeof *nc);
  if (!c || !nc) rc = CDAG_NOMEM("phases: collectives");
  for (int r = 0; r < m->nprocs && !rc; r++) {
    if (!(c[r] = malloc((size_t)(x->nops[r] + 1) * sizeof **c))) { rc = CDAG_NOMEM("phases: collectives"); break; }
    for (int64_t i = 0; i < x->nops[r]; i++) {
      mop *o = x->ops[r][i];
      if (o->idx >= 0 && o->kind == K_OTHER && is_collective(o->text))
        c[r][nc[r]++] = (gi){global_comm(&m->r[r], o->comm), o->idx};
    }
    base_sort(c[r], nc[r], sizeof **c, cmp_i64_pair);
  }
  for (int r = 0; r < m->nprocs && !rc; r++)
    for (int64_t a = 0, e; a < nc[r]; a = e) {
      int64_t g = c[r][a].g;
      for (e = a; e < nc[r] && c[r][e].g == g; e++) {}
      if (g < 0 || g > m->nglobal) continue;
      const mcomm *cm = g ? m->global[g - 1] : NULL;
      int n = cm ? cm->n : m->nprocs, j = 0;
      while (j < n && (cm ? cm->members[j] : j) != r) j++;
      if (j == n || n == 1) continue;
      int nx = cm ? cm->members[(j + 1) % n] : (j + 1) % n;
      gi key = {g, -1};
      int64_t b = 0, hi = nc[nx];
      while (b < hi) {   /* the first of communicator g on the next member */
        int64_t mid = (b + hi) / 2;
        if (cmp_i64_pair(&c[nx][mid], &key) < 0) b = mid + 1;
        else hi = mid;
      }
      for (int64_t k = a; k < e && b < nc[nx] && c[nx][b].g == g; k++, b++) {
        x->pop[r][c[r][k].i].pidx = c[nx][b].i;
        x->pop[r][c[r][k].i].prank = nx;
      }
    }
  for (int r = 0; c && r < m->nprocs; r++) free(c[r]);
  free(c), free(nc);
  return rc;
}

/* Where the run repeats (phases.c), each rank's operations are given to the phase of the
   piece they fall in: a piece starts at the gap before the call a cut names (its
   time-only computation, the computations and packing of what it sends). Only runs without
   MPI_Pcontrol, one implicit phase with nothing discarded, and without one-sided operations are
   cut. Sets *nphases. */
static int find_phases(merger *m, int *nphases) {
  for (int r = 0; r < m->nprocs; r++) {
    if (m->r[r].declared > 1 || m->r[r].discard_phase >= 0) return CDAG_OK;
    for (int64_t i = 0; i < m->r[r].nops; i++)
      if (m->r[r].ops[i].kind == K_OTHER && is_onesided(m->r[r].ops[i].text)) return CDAG_OK;
  }
  mstreams x = {0};
  int64_t *cuts = NULL, ncuts = 0, *piece_ops = NULL, *renum = NULL;
  size_t P = (size_t)(unsigned)m->nprocs;
  x.ops = calloc(P, sizeof *x.ops);
  x.pop = calloc(P, sizeof *x.pop);
  x.nops = calloc(P, sizeof *x.nops);
  x.npop = calloc(P, sizeof *x.npop);
  int rc = x.ops && x.pop && x.nops && x.npop ? CDAG_OK : CDAG_NOMEM("phases");
  for (int r = 0; r < m->nprocs && !rc; r++) rc = rank_stream(m, r, &x);
  if (!rc) rc = link_partners(m, &x);
  if (!rc) rc = rec_find_cuts(m->nprocs, x.pop, x.npop, &cuts, &ncuts);
  if (!rc && ncuts) {
    piece_ops = calloc((size_t)ncuts + 1, sizeof *piece_ops);
    renum = malloc(((size_t)ncuts + 1) * sizeof *renum);
    if (!piece_ops || !renum) rc = CDAG_NOMEM("phases");
  }
  for (int r = 0; r < m->nprocs && !rc && ncuts; r++) {   /* the piece of each operation, by position */
    uint64_t *pseq = malloc(((size_t)x.npop[r] + 1) * sizeof *pseq), *bound = malloc((size_t)ncuts * sizeof *bound);
    if (!pseq || !bound) rc = CDAG_NOMEM("phases");
    for (int64_t i = 0; i < x.nops[r] && !rc; i++)
      if (x.ops[r][i]->idx >= 0) pseq[x.ops[r][i]->idx] = x.ops[r][i]->seq;
    for (int64_t j = 0; j < ncuts && !rc; j++) {
      int64_t c = cuts[j * m->nprocs + r];
      uint64_t at = c < x.npop[r] ? call_of(pseq[c]) * REC_SEQ_STEP : UINT64_MAX;
      bound[j] = at == UINT64_MAX ? at : at >= REC_SEQ_STEP / 2 ? at - REC_SEQ_STEP / 2 : 0;
    }
    for (int64_t i = 0, j = 0; i < x.nops[r] && !rc; i++) {
      while (j < ncuts && bound[j] <= x.ops[r][i]->seq) j++;
      x.ops[r][i]->phase = (int)j;
      piece_ops[j]++;
    }
    free(pseq), free(bound);
  }
  if (!rc && ncuts) {   /* pieces no rank has an operation in (before the first cut) go */
    int n = 0;
    for (int64_t j = 0; j <= ncuts; j++) renum[j] = piece_ops[j] ? n++ : -1;
    for (int r = 0; r < m->nprocs; r++)
      for (int64_t i = 0; i < x.nops[r]; i++) x.ops[r][i]->phase = (int)renum[x.ops[r][i]->phase];
    *nphases = n;
    m->cut = 1;
  }
  streams_free(&x, m->nprocs);
  free(cuts), free(piece_ops), free(renum);
  return rc;
}

/* ---- passive-target epochs: the target's fences ----
 * The origin o of an epoch on t wrote `lock`, `flush` and `unlock` lines of communicator
 * C, the pair's for the window's slot (record.h: two windows' epochs on t open at once are
 * two communicators', each its own sequence of epochs); t made no call. Each becomes `fence comm C`
 * on o, and t gets its fence where t was when o read it (`tpos`): after the calls t had
 * completed; around a call t was in, before it when it may wait for others (a receive, a
 * completion, a collective, its own epoch's marker, a fetch: it may wait for what o does after
 * the marker), after it when it only sends (o may have received that before the marker).
 * Those places keep the order the run had, whatever ordered the epoch in MPI (a message
 * through a third rank, or nothing: two ranks locking each other epoch after epoch between
 * two barriers). A marker without `tpos` (an older recorder's, or t could not be read)
 * places t's fence where MPI orders the epoch there by a collective: an opening (`lock`) just
 * after t's instance of the last collective o made before it, a closing (`flush`,
 * `unlock`) just before t's instance of the first collective o makes after it, both on a
 * communicator of o and t where t's call waits for o's (closing) or o's for t's (opening):
 * barrier, allreduce, allgather, alltoall and their v/w forms, reduce_scatter, MPI_Win_free
 * (a barrier of the window's members, MPI-3.1 11.2.5), or a rooted one whose data flows
 * from o to t (closing: a reduce or gather rooted at t, a bcast or scatter rooted at o) or
 * from t to o (opening: the other way). The
 * collective must be o's nearest synchronisation on that side: before an opening, no
 * receive, completion, collective that brings another rank's order in, nonblocking
 * collective or fence lies between it and the `lock`; after a closing, no send, collective
 * that takes o's order out, nonblocking collective or fence. (A flag polled with gets is no
 * order here: the bytes t stores without a call are not in the graph wherever its fence
 * goes, and another origin's put of it conflicts, below.) With none in the phase before an opening, t's fence
 * opens its phase. An epoch that opens before the last one of its communicator closed at t
 * (an unlock, then a lock, with no collective between) opens where that one closed: t
 * touches neither one's bytes in between, since nothing orders them there. An epoch any of whose fences has no such place (ordered by messages
 * only, or by nothing) is left out whole, its accesses counted unsupported with the reason
 * (never guessed). O(n log n) for n operations. */

enum { S_IN = 1, S_OUT = 2, S_COLL = 4 };   /* an op as synchronisation of its rank: it may bring
                                              another rank's order in, take its own out; a
                                              collective a fence may be placed at */
enum { M_NONE, M_LOCK, M_FLUSH, M_UNLOCK };

static int passive_marker(const mop *o) {
  if (o->kind != K_OTHER) return M_NONE;
  if (!strncmp(o->text, "lock comm ", 10)) return M_LOCK;
  if (!strncmp(o->text, "flush comm ", 11)) return M_FLUSH;
  if (!strncmp(o->text, "unlock comm ", 12)) return M_UNLOCK;
  return M_NONE;
}

/* `winfree comm C` (record.h): MPI_Win_free, which synchronises the window's members like
   a barrier; not written in the graph. */
static int win_free_mark(const mop *o) { return o->kind == K_OTHER && !strncmp(o->text, "winfree comm ", 13); }

/* An access of a passive epoch's communicator (`get`, `put`, `accumulate` ... comm C). */
static int passive_access(const mop *o) {
  return o->kind == K_OTHER && o->comm >= REC_PASSIVE_BASE && is_onesided(o->text) && strncmp(o->text, "fence", 5) &&
         !passive_marker(o);
}

/* The root of a rooted collective whose data flows to its root (reduce, gather), or from it
   (bcast, scatter) (*to_root 1 / 0); -1 for any other line. */
static int rooted(const char *t, int *to_root) {
  int k = ir_coll_kind(t, strcspn(t, " "));
  long long root = -1;
  *to_root = k == IR_COLL_REDUCE || k == IR_COLL_GATHER || k == IR_COLL_GATHERV;
  if (!*to_root && k != IR_COLL_BCAST && k != IR_COLL_SCATTER && k != IR_COLL_SCATTERV) return -1;
  return field(t, "root", &root) ? (int)root : -1;
}

/* A blocking collective whose every member waits for every other, or MPI_Win_free. */
static int waits_for_all(const mop *o) {
  if (win_free_mark(o)) return 1;
  int k = ir_coll_kind(o->text, strcspn(o->text, " "));
  return k == IR_COLL_BARRIER || k == IR_COLL_ALLREDUCE || k == IR_COLL_ALLGATHER || k == IR_COLL_ALLGATHERV ||
         k == IR_COLL_ALLTOALL || k == IR_COLL_ALLTOALLV || k == IR_COLL_ALLTOALLW || k == IR_COLL_REDUCE_SCATTER ||
         k == IR_COLL_REDUCE_SCATTER_BLOCK;
}

/* What op o of rank r is as synchronisation (S_*). */
static int sync_kind(const mop *o, int r) {
  if (o->kind == K_SEND) return S_OUT;
  if (o->kind == K_RECV || o->kind == K_WAIT) return S_IN;
  if (o->kind != K_OTHER) return 0;
  if (win_free_mark(o)) return S_IN | S_OUT | S_COLL;
  if (is_collective(o->text) && !strstr(o->text, " nonblocking")) {
    int to_root, root = rooted(o->text, &to_root);
    if (waits_for_all(o)) return S_IN | S_OUT | S_COLL;
    if (root < 0) return S_IN | S_OUT;   /* scans, neighbourhoods: no place for a fence */
    return S_COLL | ((root == r) == to_root ? S_IN : S_OUT);   /* the root of a reduce receives */
  }
  if (is_collective(o->text) || !strncmp(o->text, "fence", 5)) return S_IN | S_OUT;
  return 0;   /* a get of another passive epoch too: what t stored without a call, the graph never has */
}

/* A rank's kept operations of the phase, by position, with what placement needs. */
typedef struct {
  mop **ops; int64_t n;
  int64_t *prev, *next;       /* the nearest synchronisation before / after each op, -1 none */
  int64_t *inst;              /* per op: its collective's instance on its communicator, -1 none */
  int64_t (*coll)[3];         /* (communicator, instance, op index) of its collectives, sorted */
  int64_t ncoll;
} pside;

/* A fence to add on a target: between its ops a - 1 and a, after (`after` 1) or before the
   call there, in its origin's order. */
typedef struct { int rank, after, phase; int64_t a; int origin; uint64_t oseq, seq; int comm; int64_t epoch; uint64_t ticket;
                 uint32_t sub; } pins;
/* An epoch placed in the phase: its target, origin, first and last fence on t (keys 2a +
   !after), its ops (markers and accesses) in pctx's pool, and its ticket (the order MPI
   granted t's lock in, from its `unlock` line; 0: none, a recording of an older recorder),
   whether its opening is where t was when o asked for the lock (`tpos`): before MPI
   granted it, and whether the lock was shared (`lock comm C shared`). Fine: a shared epoch
   whose lock saw the counter and every flush and unlock took a ticket (or one of t's on
   itself): its pieces between markers are checked against other origins' alone; fin: the
   index of its first fence in ins. */
typedef struct { int t, o, bad, fine; int64_t open, close, first, n, fin; uint64_t ticket; int read_open, shared, comm; } pepoch;

typedef struct {
  merger *m;
  int phase, none;            /* none: every epoch on another rank is dropped (REC_MERGE_NO_PASSIVE) */
  uint64_t placed;            /* epochs on another rank placed */
  pside *s;                   /* per rank */
  pins *ins; int64_t nins, inscap;     /* all phases' */
  pepoch *ep; int64_t nep, epcap;      /* this phase's placed epochs ... */
  mop **pool; int64_t npool, poolcap;  /* ... and their ops */
  int64_t *pidx, pidxcap;              /* and each one's op index on its rank */
} pctx;

static void pside_free(pside *s) {
  free(s->ops), free(s->prev), free(s->next), free(s->inst), free(s->coll);
  *s = (pside){0};
}

static int cmp_coll3(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  for (int i = 0; i < 2; i++)
    if (x[i] != y[i]) return (x[i] > y[i]) - (x[i] < y[i]);
  return 0;
}

static int pside_build(merger *m, int r, int phase, pside *s) {
  mrank *R = &m->r[r];
  int64_t lo, hi, n = 0;
  phase_range(R, phase, &lo, &hi);
  for (int64_t i = lo; i < hi; i++) n += kept(R, &R->ops[i], phase);
  size_t z = (size_t)(n ? n : 1);
  s->ops = malloc(z * sizeof *s->ops);
  s->prev = malloc(z * sizeof *s->prev);
  s->next = malloc(z * sizeof *s->next);
  s->inst = malloc(z * sizeof *s->inst);
  s->coll = malloc(z * sizeof *s->coll);
  int64_t *count = calloc(2 * ((size_t)m->nglobal + 1), sizeof *count);   /* collectives, Win_frees */
  if (!s->ops || !s->prev || !s->next || !s->inst || !s->coll || !count) {
    free(count);
    return CDAG_NOMEM("passive-target epochs");
  }
  s->n = 0;
  for (int64_t i = lo; i < hi; i++)
    if (kept(R, &R->ops[i], phase)) s->ops[s->n++] = &R->ops[i];   /* sorted by position already */
  int64_t last = -1;
  for (int64_t i = 0; i < n; i++) {
    const mop *o = s->ops[i];
    s->prev[i] = last;
    s->inst[i] = -1;
    if (o->kind == K_OTHER && (is_collective(o->text) || win_free_mark(o))) {   /* its instance: Win_free's apart */
      int g = global_comm(R, o->comm);
      if (g >= 0 && g <= m->nglobal) {
        s->inst[i] = count[win_free_mark(o) ? m->nglobal + 1 + g : g]++;
        s->coll[s->ncoll][0] = win_free_mark(o) ? -1 - g : g, s->coll[s->ncoll][1] = s->inst[i];
        s->coll[s->ncoll++][2] = i;
      }
    }
    if (sync_kind(o, r) & S_IN) last = i;
  }
  last = -1;
  for (int64_t i = n - 1; i >= 0; i--) {
    s->next[i] = last;
    if (sync_kind(s->ops[i], r) & S_OUT) last = i;
  }
  free(count);
  if (s->ncoll > 1) base_sort(s->coll, s->ncoll, sizeof *s->coll, cmp_coll3);
  return CDAG_OK;
}

static int member_of(const merger *m, int g, int r) {
  if (g == 0) return 1;
  const mcomm *c = m->global[g - 1];
  for (int i = 0; i < c->n; i++)
    if (c->members[i] == r) return 1;
  return 0;
}

/* t's op index of o's collective at index j (-1: none). */
static int64_t instance_on(const pctx *x, int o, int64_t j, int t) {
  const pside *so = &x->s[o], *st = &x->s[t];
  int g = global_comm(&x->m->r[o], so->ops[j]->comm);
  if (g < 0 || !member_of(x->m, g, t)) return -1;
  int64_t key[3] = {win_free_mark(so->ops[j]) ? -1 - g : g, so->inst[j], 0};
  const int64_t(*f)[3] = bsearch(key, st->coll, (size_t)st->ncoll, sizeof *st->coll, cmp_coll3);
  return f ? (*f)[2] : -1;
}

/* Where t's fence for marker i of origin o goes (*a, *after); NULL, or why it has none. */
static const char *place(const pctx *x, int o, int64_t i, int t, int kind, int64_t *a, int *after) {
  const pside *so = &x->s[o], *st = &x->s[t];
  int64_t j = kind == M_LOCK ? so->prev[i] : so->next[i];
  if (j < 0 && kind != M_LOCK) return "no collective of origin and target orders the end of the epoch";
  if (j < 0) {   /* nothing before it in the phase: t's phase start */
    *a = 0, *after = 1;
    return NULL;
  }
  const mop *c = so->ops[j];
  if (!(sync_kind(c, o) & S_COLL))
    return "the epoch is ordered at its target by messages or calls other than a collective of both";
  int to_root, root = win_free_mark(c) || waits_for_all(c) ? -1 : rooted(c->text, &to_root);
  if (root >= 0 && root != o && root != t)   /* o's order reaches the root only, or o hears the root only */
    return "the rooted collective that orders the epoch does not order it at its target";
  int64_t y = instance_on(x, o, j, t);
  if (y < 0) return "the collective that orders the epoch does not include its target";
  uint64_t call = call_of(st->ops[y]->seq);
  if (kind == M_LOCK) {   /* after the call and what its completion added */
    for (*a = y + 1; *a < st->n && call_of(st->ops[*a]->seq) == call; (*a)++) {}
    *after = 1;
  } else {   /* before the call's gap */
    for (*a = y; *a > 0 && call_of(st->ops[*a - 1]->seq) == call; (*a)--) {}
    *after = 0;
  }
  return NULL;
}

/* May op o of rank r wait for another rank: a receive, a completion, a collective, a passive
   marker (a fence with its target) or a one-sided fetch the rank waits for? */
static int waits_for_another(const mop *o, int r) {
  if ((sync_kind(o, r) & S_IN) || passive_marker(o)) return 1;
  size_t n = strlen(o->text);
  return o->kind == K_OTHER && is_onesided(o->text) && n > 5 && !strcmp(o->text + n - 5, " wait");
}

/* Where t was when o read it (W, `tpos`: record.h): t's fence between its ops *a - 1 and *a
   (tpos_place's rule: the comment above). O(log n). */
static void tpos_place(const pctx *x, int t, uint64_t w, int64_t *a, int *after) {
  const pside *st = &x->s[t];
  uint64_t c = call_of(w >> 2);
  int state = (int)(w & 3);
  if (state == REC_TPOS_IN && c > 0) c--;   /* the call it was in: the one at its position */
  int64_t lo = 0, hi = st->n;   /* the first op of a call after c */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (call_of(st->ops[mid]->seq) > c) hi = mid;
    else lo = mid + 1;
  }
  *a = lo, *after = 1;
  if (state == REC_TPOS_OUT || lo == st->n) return;
  uint64_t in = call_of(st->ops[lo]->seq);   /* the call t was in (ENTERED: its first ops, if any) */
  if (state == REC_TPOS_IN && in != c + 1) return;   /* it wrote nothing: what follows came later */
  int64_t end = lo;
  int waits = 0;
  for (; end < st->n && call_of(st->ops[end]->seq) == in; end++) waits |= waits_for_another(st->ops[end], t);
  if (waits) *after = 0;
  else *a = end;
}

static const char *access_call(const mop *o) {
  return !strncmp(o->text, "get ", 4) ? "MPI_Get" : !strncmp(o->text, "put ", 4) ? "MPI_Put" : "MPI_Accumulate";
}

/* One-sided access o left out, counted unsupported with the reason. */
static int left_out(merger *m, mop *o, const char *why) {
  char key[200];
  o->dropped = 1;
  snprintf(key, sizeof key, "%s: %s", access_call(o), why);
  if (add_count(&m->unsup, &m->nunsup, &m->unsupcap, access_call(o), 1) ||
      add_count(&m->why, &m->nwhy, &m->whycap, key, 1))
    return CDAG_NOMEM("counts");
  return CDAG_OK;
}

/* An epoch of o (its ops ep[0..n): markers and accesses, by position) left out, its
   accesses counted with the reason. */
static int drop_epoch(pctx *x, mop **ep, int64_t n, const char *why) {
  for (int64_t k = 0; k < n; k++) {
    ep[k]->dropped = 1;
    if (!passive_access(ep[k])) continue;   /* a marker (made a fence already, or not) */
    if (left_out(x->m, ep[k], why)) return CDAG_NOMEM("counts");
  }
  return CDAG_OK;
}

/* A marker's own ticket (`flush` or `unlock` ... `ticket N`), 0: none. */
static uint64_t marker_ticket(const mop *o) {
  long long tk = 0;
  return field(o->text, "ticket", &tk) && tk > 0 ? (uint64_t)tk : 0;
}

/* Did every marker of the epoch ep[0..n) but its lock take a ticket? */
static int own_tickets(mop **ep, int64_t n) {
  for (int64_t k = 1; k < n; k++)
    if (passive_marker(ep[k]) && !marker_ticket(ep[k])) return 0;
  return 1;
}

/* Stamps: where a fence goes among the others of its gap (cmp_pins; 0 none). A fence
   that closed with ticket k goes after those that saw the counter below k and before those
   that saw k or more: 2k + 1; a shared lock that saw the counter at v: 2v + 2. An exclusive
   epoch's fences all go by its ticket (MPI granted the lock in that order). */
static uint64_t closed_stamp(uint64_t ticket) { return ticket ? 2 * ticket + 1 : 0; }

/* The last of the ops of s in the call of its op i (what the call's completion added after
   it): a target's own epoch closes after them, so that another origin's epoch opening there
   does not fall between a completion and what the recording adds to it. */
static int64_t call_end(const pside *s, int64_t i) {
  uint64_t c = call_of(s->ops[i]->seq);
  while (i + 1 < s->n && call_of(s->ops[i + 1]->seq) == c) i++;
  return i;
}

/* An epoch of o on t complete in the phase (ep[0] its `lock`, ep[n-1] its `unlock`, idx
   their op indices): its fences placed on t, or the epoch dropped. *last: the key of t's
   last fence on this communicator (its fences keep their order). */
static int close_epoch(pctx *x, int o, int t, mop **ep, const int64_t *idx, int64_t n, int64_t *last) {
  int64_t first = x->nins, was = *last;
  uint64_t ticket = marker_ticket(ep[n - 1]);
  if (x->none && t != o)
    return drop_epoch(x, ep, n, "with its target's fences the phase did not load (a dependency cycle or a race: cdag record said which)");
  int read_open = 0, shared = strstr(ep[0]->text, " shared") != NULL;   /* read_open: the lock's fence placed by `tpos` */
  long long seen = -1;
  int fine = shared && (t == o || (own_tickets(ep, n) && field(ep[0]->text, "seen", &seen) && seen >= 0));
  uint64_t stamp = closed_stamp(ticket);   /* the fence's place among others in its gap (cmp_pins) */
  for (int64_t k = 0; k < n && t != o; k++) {
    int kind = passive_marker(ep[k]);
    if (!kind) continue;
    if (fine) stamp = kind == M_LOCK ? 2 * (uint64_t)seen + 2 : closed_stamp(marker_ticket(ep[k]));
    int64_t a;
    int after;
    long long w = 0;
    const char *why = NULL;
    if (field(ep[k]->text, "tpos", &w) && w >= 0) {
      tpos_place(x, t, (uint64_t)w, &a, &after);
      read_open |= kind == M_LOCK;
    } else {
      why = place(x, o, idx[k], t, kind, &a, &after);
    }
    if (!why && kind == M_LOCK && 2 * a + !after < *last)   /* the last epoch closes later at t: this one opens there */
      a = *last / 2, after = !(*last & 1);
    if (!why && 2 * a + !after == *last - 1 && (*last & 1))   /* read later, in the gap of the last: with it */
      after = 0;
    if (!why && 2 * a + !after < *last) why = "its target's collectives are ordered otherwise than its origin's";
    if (why) {
      x->nins = first;
      *last = was;
      return drop_epoch(x, ep, n, why);
    }
    *last = 2 * a + !after;
    if (base_grow((void **)&x->ins, x->nins, &x->inscap, 1, sizeof *x->ins, "merger")) return CDAG_NOMEM("fences");
    x->ins[x->nins++] = (pins){t, after, x->phase, a, o, ep[k]->seq, 0, ep[k]->comm, x->nep, stamp, 0};
  }
  if (base_grow((void **)&x->ep, x->nep, &x->epcap, 1, sizeof *x->ep, "merger") ||
      base_grow((void **)&x->pool, x->npool, &x->poolcap, n, sizeof *x->pool, "merger") ||
      base_grow((void **)&x->pidx, x->npool, &x->pidxcap, n, sizeof *x->pidx, "merger"))
    return CDAG_NOMEM("passive-target epochs");
  x->ep[x->nep++] = (pepoch){t, o, 0, fine, t == o ? 2 * idx[0] : x->ins[first].a * 2 + !x->ins[first].after,   /* o = t: its own ops */
                             t == o ? 2 * call_end(&x->s[t], idx[n - 1]) + 2 : x->ins[x->nins - 1].a * 2 + !x->ins[x->nins - 1].after,
                             x->npool, n, first, ticket, read_open, shared, ep[0]->comm};
  memcpy(x->pool + x->npool, ep, (size_t)n * sizeof *ep);
  memcpy(x->pidx + x->npool, idx, (size_t)n * sizeof *idx);
  x->npool += n;
  x->placed += t != o;
  for (int64_t k = 0; k < n; k++)
    if (passive_marker(ep[k])) ep[k]->text = "fence comm 0";   /* write_other puts its communicator in */
  return CDAG_OK;
}

typedef struct { int t, comm; int64_t i; } pitem;

static int cmp_pitem(const void *a, const void *b) {
  const pitem *x = a, *y = b;
  if (x->t != y->t) return (x->t > y->t) - (x->t < y->t);
  if (x->comm != y->comm) return (x->comm > y->comm) - (x->comm < y->comm);
  return (x->i > y->i) - (x->i < y->i);
}

#define NESTED_SLOT "its epoch and another window's of the same slot were open at once on the target"

/* Rank o's passive-target markers and accesses of the phase, by target, cut into epochs. */
static int origin_epochs(pctx *x, int o) {
  const pside *s = &x->s[o];
  int P = x->m->nprocs, rc = CDAG_OK;
  int64_t n = 0;
  pitem *it = malloc((size_t)(s->n ? s->n : 1) * sizeof *it);
  mop **ep = malloc((size_t)(s->n ? s->n : 1) * sizeof *ep);
  int64_t *idx = malloc((size_t)(s->n ? s->n : 1) * sizeof *idx);
  if (!it || !ep || !idx) rc = CDAG_NOMEM("passive-target epochs");
  for (int64_t i = 0; !rc && i < s->n; i++) {
    const mop *op = s->ops[i];
    if (!passive_marker(op) && !passive_access(op)) continue;
    int po, pt, pk;
    if (!rec_passive_of(op->comm, P, &po, &pt, &pk) || po != o)
      rc = cdag__error(CDAG_ERR_FORMAT, "rank-%d.part:%lld: a passive-target epoch of communicator %d, which is not "
                       "one of rank %d's", o, (long long)op->line, op->comm, o);
    else
      it[n++] = (pitem){pt, op->comm, i};
  }
  if (!rc && n > 1) base_sort(it, n, sizeof *it, cmp_pitem);
  for (int64_t a = 0, e; !rc && a < n; a = e) {
    int t = it[a].t, comm = it[a].comm;   /* one communicator's epochs: a window slot's */
    int64_t k = 0, last = -1, nested = 0;   /* nested: unlocks still to come of epochs open at once */
    for (e = a; e < n && it[e].t == t && it[e].comm == comm && !rc; e++) {
      mop *op = s->ops[it[e].i];
      int kind = passive_marker(op);
      if (kind == M_LOCK && k) {   /* two windows of one slot, open at once on t: their order there is unknown */
        rc = drop_epoch(x, ep, k, NESTED_SLOT), k = 0;
        nested = 1;
      }
      if (!rc && nested) {
        nested += kind == M_LOCK ? 1 : kind == M_UNLOCK ? -1 : 0;
        rc = drop_epoch(x, &op, 1, NESTED_SLOT);
        continue;
      }
      if (rc) break;
      if (kind != M_LOCK && !k) {   /* no epoch open: its lock is in another phase */
        rc = drop_epoch(x, &op, 1, "its epoch is not opened in the phase");
        continue;
      }
      ep[k] = op, idx[k++] = it[e].i;
      if (kind == M_UNLOCK) rc = close_epoch(x, o, t, ep, idx, k, &last), k = 0;
    }
    if (!rc && k) rc = drop_epoch(x, ep, k, "its epoch is not closed in the phase");
  }
  free(it), free(ep), free(idx);
  return rc;
}

/* ---- two origins' epochs on one target ----
 * Epochs of two origins on t whose fences at t overlap may run in either order (exclusive
 * locks serialise them as MPI grants them; shared ones let them overlap, and their tickets
 * order nothing unless one held the lock exclusively): when they touch
 * the same bytes of t and not both only read them or both accumulate with one type and op,
 * the result depends on that order. The recorder writes it as each epoch's ticket (pmpi_rma.c):
 * the later epoch's fences then follow the earlier's at t, where the later one opens no
 * sooner than between the two target operations the earlier one closes between (the fences
 * there are ordered by ticket: cmp_pins). Otherwise (or without tickets) the accesses of
 * both that touch the same bytes are dropped, counted with the reason; the rest of each
 * epoch commutes with the other and stays. */

/* An access's bytes at its target: nb blocks of len bytes from lo at stride (nb 1: one range),
   hi the end of the last; op its line (epoch_units). */
typedef struct { uint64_t lo, hi, nb, len, stride; int64_t epoch; int get; const char *acc; size_t acclen; mop *op; } pacc;

/* What an access line does to its target: bytes, address (and `blocks N stride T`: its
   blocks), and for an accumulate its "TYPE OP" (acc, acclen); 0 if the line does not say. */
static int access_range(const mop *o, pacc *a) {
  long long at = 0;
  const char *t = o->text;
  uint64_t bytes = 0;
  a->get = !strncmp(t, "get ", 4);
  a->acc = NULL;
  if (!strncmp(t, "accumulate ", 11)) {
    char *e;
    unsigned long long k = strtoull(t + 11, &e, 10);
    const char *ty = e + 1, *op = strchr(ty, ' ');
    int type = op ? ir_type_parse(ty, op - ty) : -1;
    if (type < 0 || !(op = strchr(op + 1, ' '))) return 0;
    bytes = k * (uint64_t)ir_type_size(type);
    a->acc = ty, a->acclen = (size_t)(op - ty);
  } else {
    bytes = strtoull(t + 4, NULL, 10);
  }
  long long nb = 1, stride = 0;
  if (!field(t, "at", &at) || (field(t, "blocks", &nb) && (nb < 1 || bytes % (uint64_t)nb))) return 0;
  a->nb = (uint64_t)nb, a->len = bytes / (uint64_t)nb;
  if (!field(t, "stride", &stride)) stride = (long long)a->len;
  if (stride < 0 || (uint64_t)stride < a->len) return 0;
  a->stride = (uint64_t)stride;
  a->lo = (uint64_t)at, a->hi = (uint64_t)at + (a->nb - 1) * a->stride + a->len;
  return 1;
}

/* Block k of a. */
static pacc block_of(const pacc *a, uint64_t k) {
  pacc b = *a;
  b.lo = a->lo + k * a->stride, b.hi = b.lo + a->len, b.nb = 1, b.stride = a->len;
  return b;
}

/* Do a block of a and a block of b share a byte? Each block of the one with fewer is looked
   up among the other's by division: O(min(blocks)). */
static int blocks_meet(const pacc *a, const pacc *b) {
  if (a->hi <= b->lo || b->hi <= a->lo) return 0;
  if (a->nb > b->nb) return blocks_meet(b, a);
  for (uint64_t k = 0; k < a->nb; k++) {
    uint64_t x = a->lo + k * a->stride, y = x + a->len;   /* the blocks of b starting below y, ending above x */
    if (y <= b->lo || x >= b->hi) continue;
    uint64_t last = (y - 1 - b->lo) / b->stride;   /* the last block of b starting below y */
    if (last >= b->nb) last = b->nb - 1;
    if (b->lo + last * b->stride + b->len > x) return 1;
  }
  return 0;
}

static int conflict(const pacc *a, const pacc *b) {
  if (a->get && b->get) return 0;
  if (a->acc && b->acc) return a->acclen != b->acclen || memcmp(a->acc, b->acc, a->acclen);
  return 1;
}

/* ---- fence epochs: accesses that race ----
 * Two origins' accesses to the same bytes of a target in one fence epoch (one writing, not
 * two accumulates of one type and op) run in an order MPI decides: MPICH's rma/atomic_get_*
 * race replacing accumulates against no-op fetches, atomic in MPI but unordered. The loader
 * rejects such a pair as a race, which lost the whole phase. An epoch is the accesses of a
 * communicator between two of its fences (the k-th fence of every member is the same one).
 * The accesses of a target's epoch are swept by address in clusters of overlapping ranges.
 * In a cluster where two origins' accesses may conflict (a few more than the racing pairs,
 * never fewer): when the writes agree, the order decided only what the gets read, and those
 * become bytes from outside the phase (settle_cluster); else the cluster is left out whole,
 * counted.
 * Cost O(n log n) for n one-sided lines. */
typedef struct { int comm, t, o; int64_t epoch; uint64_t seq; pacc a; mop *op; } facc;

static int cmp_facc_seq(const void *pa, const void *pb) {
  const facc *a = pa, *b = pb;
  if (a->comm != b->comm) return (a->comm > b->comm) - (a->comm < b->comm);
  return (a->seq > b->seq) - (a->seq < b->seq);
}

static int cmp_facc_range(const void *pa, const void *pb) {
  const facc *a = pa, *b = pb;
  int64_t ka[4] = {a->comm, a->epoch, a->t, (int64_t)a->a.lo}, kb[4] = {b->comm, b->epoch, b->t, (int64_t)b->a.lo};
  for (int i = 0; i < 4; i++)
    if (ka[i] != kb[i]) return (ka[i] > kb[i]) - (ka[i] < kb[i]);
  return 0;
}

/* Could two origins' accesses among the cluster f[0..n) conflict? Up to 64 accesses, pair
   by pair; a larger cluster of two origins by its kinds: a put, a get beside an accumulate,
   or accumulates of two types or ops (accumulates of one type and op commute). With
   writes_only, gets are left out of the question. */
static int cluster_races(const facc *f, int64_t n, int writes_only) {
  int two = 0, put = 0, get = 0, mixed = 0, first = -1;
  const pacc *acc = NULL;
  for (int64_t i = 0; i < n; i++) {
    const pacc *a = &f[i].a;
    if (writes_only && a->get) continue;
    if (first < 0) first = f[i].o;
    two |= f[i].o != first;
    if (a->get) get = 1;
    else if (!a->acc) put = 1;
    else if (!acc) acc = a;
    else mixed |= a->acclen != acc->acclen || memcmp(a->acc, acc->acc, a->acclen);
  }
  if (!two) return 0;
  if (n > 64) return put || (get && acc) || mixed;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++)
      if (f[i].o != f[j].o && !(writes_only && (f[i].a.get || f[j].a.get)) && f[i].a.lo < f[j].a.hi &&
          f[j].a.lo < f[i].a.hi && conflict(&f[i].a, &f[j].a))
        return 1;
  return 0;
}

/* Does get g of the cluster f[0..n) read bytes another origin writes there? Up to 64
   accesses, range by range; a larger cluster: any other origin's write in it. */
static int get_races(const facc *f, int64_t n, const facc *g) {
  for (int64_t i = 0; i < n; i++)
    if (f[i].o != g->o && !f[i].a.get && (n > 64 || (f[i].a.lo < g->a.hi && g->a.lo < f[i].a.hi))) return 1;
  return 0;
}

/* Rank r's fences (epoch -1) and fence-epoch accesses appended to *f. */
static int fence_lines(merger *m, int r, facc **f, int64_t *n, int64_t *cap) {
  for (int64_t i = 0; i < m->r[r].nops; i++) {
    mop *o = &m->r[r].ops[i];
    if (o->dropped || o->kind != K_OTHER || o->comm >= REC_PASSIVE_BASE || !is_onesided(o->text)) continue;
    facc x = {.comm = o->comm, .o = r, .epoch = -1, .seq = o->seq, .op = o};
    long long t = -1;
    if (strncmp(o->text, "fence", 5)) {
      if (strncmp(o->text, "get ", 4) && strncmp(o->text, "put ", 4) && strncmp(o->text, "accumulate ", 11)) continue;
      if (!access_range(o, &x.a) || !(field(o->text, "from", &t) || field(o->text, "to", &t))) continue;
      x.t = (int)t, x.epoch = 0;
    }
    uint64_t nb = x.epoch < 0 ? 1 : x.a.nb;   /* a line of blocks: a range each, swept exactly */
    if (base_grow((void **)f, *n, cap, (int64_t)nb, sizeof **f, "merger")) return CDAG_NOMEM("fence epochs");
    for (uint64_t k = 0; k < nb; k++) {
      (*f)[*n] = x;
      if (nb > 1) (*f)[*n].a = block_of(&x.a, k);
      (*n)++;
    }
  }
  return CDAG_OK;
}

/* Left out, counted: the accesses of a cluster that races (a line of blocks once). */
static int drop_cluster(merger *m, facc *f, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (!f[i].op->dropped && left_out(m, f[i].op, "another origin's access to the same bytes of its target in the same fence epoch, in an "
                             "order MPI decided"))
      return CDAG_NOMEM("counts");
  return CDAG_OK;
}

/* Get o, whose bytes another origin's write in the epoch may have preceded or followed as
   MPI chose, made `compute 0 writes S at D`: what it read is bytes from outside the phase,
   written where the get wrote them (its origin may not read them before the epoch closes),
   counted "unordered". A wait naming it still orders the fetch's update after it. */
static int unordered_get(merger *m, mrank *r, mop *o) {
  long long d = 0;
  uint64_t bytes = strtoull(o->text + 4, NULL, 10);
  if (!field(o->text, "addr", &d)) return CDAG_OK;   /* access_range read it: never */
  if (base_grow((void **)&r->texts, r->ntexts, &r->textcap, 1, sizeof *r->texts, "merger")) return CDAG_NOMEM("texts");
  char *t = malloc(64);
  if (!t) return CDAG_NOMEM("texts");
  snprintf(t, 64, "compute 0 writes %" PRIu64 " at 0x%llx", bytes, (unsigned long long)d);
  o->text = r->texts[r->ntexts++] = t;
  o->comm = 0;
  return add_count(&m->unord, &m->nunord, &m->unordcap, "MPI_Get", 1) ? CDAG_NOMEM("counts") : CDAG_OK;
}

/* A cluster that races. When no two origins' writes in it conflict, MPI's order decided
   only what the other origins' gets read: those gets become bytes from outside the phase
   and the writes stay (MPICH's rma/atomic_get_*: one origin's replacing accumulates against
   another's no-op fetches). Otherwise it is left out whole. A line of blocks is one get:
   made whole bytes from outside if any of its blocks races. */
static int settle_cluster(merger *m, facc *f, int64_t n) {
  if (cluster_races(f, n, 1)) return drop_cluster(m, f, n);
  for (int64_t i = 0; i < n; i++)
    if (f[i].a.get && !strncmp(f[i].op->text, "get ", 4) && get_races(f, n, &f[i])) {
      int rc = unordered_get(m, &m->r[f[i].o], f[i].op);
      if (rc) return rc;
    }
  return CDAG_OK;
}

static int drop_fence_races(merger *m) {
  facc *f = NULL;
  int64_t n = 0, cap = 0;
  int rc = CDAG_OK;
  for (int r = 0; r < m->nprocs && !rc; r++) {
    int64_t first = n, w = n, k = 0;
    if ((rc = fence_lines(m, r, &f, &n, &cap))) break;
    if (n > first) base_sort(f + first, (n - first), sizeof *f, cmp_facc_seq);
    for (int64_t i = first; i < n; i++) {   /* epochs counted per communicator; fences dropped */
      if (i > first && f[i].comm != f[i - 1].comm) k = 0;
      if (f[i].epoch < 0) k++;
      else f[i].epoch = k, f[w++] = f[i];
    }
    n = w;
  }
  if (!rc && n > 1) base_sort(f, n, sizeof *f, cmp_facc_range);
  for (int64_t a = 0, e; !rc && a < n; a = e) {
    uint64_t hi = f[a].a.hi;
    for (e = a + 1; e < n && f[e].comm == f[a].comm && f[e].epoch == f[a].epoch && f[e].t == f[a].t && f[e].a.lo < hi;
         e++)
      if (f[e].a.hi > hi) hi = f[e].a.hi;
    if (cluster_races(f + a, e - a, 0)) rc = settle_cluster(m, f + a, e - a);
  }
  free(f);
  return rc;
}

/* Is op i of target t a step of its own only (no synchronisation with another rank: a local
   operation, an access of a passive epoch, a marker of its own epochs on itself, made a
   fence or not yet)? */
static int local_step(const pctx *x, int t, int64_t i) {
  const mop *o = x->s[t].ops[i];
  int po, pt, pk;
  if (o->kind == K_OTHER && rec_passive_of(o->comm, x->m->nprocs, &po, &pt, &pk) && po == t && pt == t) return 1;
  return !passive_marker(o) && sync_kind(o, t) == 0;
}

/* Do only steps of target t's own lie between its gaps a and b (its ops a .. b - 1)? */
static int only_local(const pctx *x, int t, int64_t a, int64_t b) {
  for (int64_t i = a; i < b; i++)
    if (!local_step(x, t, i)) return 0;
  return 1;
}

/* Epoch k's fences on the far side of `gap` (before it: later 1; after it: 0) moved into it. */
static void move_fences(pctx *x, int64_t from, int64_t k, int64_t gap, int later) {
  for (int64_t i = from; i < x->nins; i++)
    if (x->ins[i].epoch == k && (later ? x->ins[i].a < gap : x->ins[i].a > gap)) x->ins[i].a = gap;
}

/* Epoch il's fences in gaps before `gap` moved into it (it must close there or later, and be
   another rank's: a target's own epoch is its own ops). An opening placed where the target
   was when the origin asked for the lock moves across anything: its accesses ran once MPI
   granted it, after the earlier epoch. */
static int later_moves(pctx *x, int64_t from, int64_t il, int64_t gap) {
  pepoch *l = &x->ep[il];
  if (l->t == l->o || l->close / 2 < gap || (!l->read_open && !only_local(x, l->t, l->open / 2, gap))) return 0;
  move_fences(x, from, il, gap, 1);
  l->open = 2 * gap;
  return 1;
}

/* Epoch ie's fences in gaps after `gap` moved into it (it must open there or sooner). */
static int earlier_moves(pctx *x, int64_t from, int64_t ie, int64_t gap) {
  pepoch *e = &x->ep[ie];
  if (e->t == e->o || e->open / 2 > gap || !only_local(x, e->t, gap, e->close / 2)) return 0;
  move_fences(x, from, ie, gap, 0);
  e->close = 2 * gap + 1;
  return 1;
}

/* Epochs p and q (indices ip, iq) of two origins on one target, conflicting: ordered by their
   tickets: the later one's fences that are in gaps before the earlier one's last moved into
   that gap, or else the earlier one's that are in gaps after the later one's first moved into
   that one, when only steps of the target's own lie between (an origin then waits at its
   fence while the target does them, as it waited for the lock; the target waits for nothing
   the origin does after it). Already in order: the later one opens in the gap the earlier
   one closes in (cmp_pins orders them there) or after it. The fences of this phase are
   ins[from..). */
static int ordered(pctx *x, int64_t from, int64_t ip, int64_t iq) {
  if (!x->ep[ip].ticket || !x->ep[iq].ticket) return 0;
  if (x->ep[ip].shared && x->ep[iq].shared) return 0;   /* both may hold the lock at once: tickets order nothing */
  int64_t il = x->ep[ip].ticket < x->ep[iq].ticket ? iq : ip, ie = il == ip ? iq : ip;
  int64_t open = x->ep[il].open / 2, close = x->ep[ie].close / 2;   /* gaps: the keys' a */
  return open >= close || later_moves(x, from, il, close) || earlier_moves(x, from, ie, open);
}

/* ---- the pieces the check compares ----
 * A unit is an epoch whole, or a piece of a fine one (pepoch): the accesses between two of
 * its markers, bounded by their fences at the target (on the target itself, by the markers'
 * ops: a get of the piece reads at its opening, a put lands at its closing). Places at the
 * target are keys: a fence in gap a is (3a, its stamp), op i is (3i + 1, 0); in one gap the
 * fences go by stamp (cmp_pins), so a key is before another there only when both have one
 * (a whole shared epoch has none: its ticket orders nothing). */
typedef struct { int64_t major; uint64_t stamp; } pkey;
typedef struct { int64_t e, a0, a1; pkey open, close; int fine; } punit;

static int before(pkey x, pkey y) {
  return x.major < y.major || (x.major == y.major && x.stamp && y.stamp && x.stamp < y.stamp);
}

static pkey fence_key(const pins *f) { return (pkey){3 * f->a, f->ticket}; }

/* A whole epoch's opening or closing place (its fences move when tickets order it). */
static pkey unit_key(const pctx *x, const punit *u, int close) {
  if (u->fine) return close ? u->close : u->open;
  const pepoch *e = &x->ep[u->e];
  int64_t k = close ? e->close : e->open;
  return (pkey){3 * (k / 2), e->t == e->o || e->shared ? 0 : closed_stamp(e->ticket)};   /* shared: tickets order nothing */
}

/* Do units p and q touch the same bytes, one at least writing (their accesses' ranges
   a[p.a0 .. p.a1))? With why, every access of such a pair is marked (op->races). */
static int units_conflict(const pacc *a, const punit *p, const punit *q, uint8_t why) {
  int any = 0;
  for (int64_t i = p->a0; i < p->a1; i++)
    for (int64_t j = q->a0; j < q->a1; j++)
      if (blocks_meet(&a[i], &a[j]) && conflict(&a[i], &a[j])) {
        if (!why) return 1;
        any = 1;
        if (!a[i].op->races) a[i].op->races = why;
        if (!a[j].op->races) a[j].op->races = why;
      }
  return any;
}

typedef struct { const pctx *x; const punit *u; } psort;

static int cmp_unit_open(const void *pa, const void *pb, void *ctx) {
  const psort *c = ctx;
  const punit *p = &c->u[*(const int64_t *)pa], *q = &c->u[*(const int64_t *)pb];
  int tp = c->x->ep[p->e].t, tq = c->x->ep[q->e].t;
  if (tp != tq) return (tp > tq) - (tp < tq);
  pkey kp = unit_key(c->x, p, 0), kq = unit_key(c->x, q, 0);
  if (kp.major != kq.major) return (kp.major > kq.major) - (kp.major < kq.major);
  return (kp.stamp > kq.stamp) - (kp.stamp < kq.stamp);
}

/* Epoch e's accesses (into a from *m) and its units (into u from *nu). */
static void epoch_units(const pctx *x, int64_t e, pacc *a, int64_t *m, punit *u, int64_t *nu) {
  const pepoch *ep = &x->ep[e];
  int self = ep->t == ep->o;
  punit cur = {e, *m, *m, {0, 0}, {0, 0}, ep->fine};
  int64_t f = ep->fin;      /* the fence of the last marker */
  pkey at = {0, 0};         /* the last marker's place: its fence, or on t itself its op */
  for (int64_t k = 0; k < ep->n; k++) {
    const mop *o = x->pool[ep->first + k];
    if (ep->fine && !passive_access(o)) {   /* a marker (a fence now) */
      if (k > 0) f += !self;
      pkey here = self ? (pkey){3 * x->pidx[ep->first + k] + 1, 0} : fence_key(&x->ins[f]);
      if (k > 0) {
        cur.open = at, cur.close = here, cur.a1 = *m;
        u[(*nu)++] = cur;
        cur.a0 = *m;
      }
      at = here;
      continue;
    }
    if (passive_access(o) && access_range(o, &a[*m]) && a[*m].hi > a[*m].lo) a[*m].op = x->pool[ep->first + k], a[(*m)++].epoch = e;
  }
  if (!ep->fine) cur.a1 = *m, u[(*nu)++] = cur;
}

/* Pieces are compared by stamps only among shared epochs: on a target that another origin
   locked exclusively (or whose epoch took no tickets), its fine epochs are whole, their
   fences in their gaps by ticket as an exclusive epoch's (a lock MPI grants late saw the
   counter before the exclusive epoch it waited for). 0, or CDAG_ERR_NOMEM. */
static int coarsen(pctx *x) {
  uint8_t *coarse = calloc((size_t)x->m->nprocs, 1);
  if (!coarse) return CDAG_NOMEM("passive-target epochs");
  for (int64_t e = 0; e < x->nep; e++)
    if (x->ep[e].t != x->ep[e].o && !x->ep[e].fine) coarse[x->ep[e].t] = 1;
  for (int64_t e = 0; e < x->nep; e++) {
    pepoch *ep = &x->ep[e];
    if (ep->t == ep->o || !ep->fine || !coarse[ep->t]) continue;
    ep->fine = 0;
    for (int64_t i = ep->fin; i < x->nins && x->ins[i].epoch == e; i++) x->ins[i].ticket = closed_stamp(ep->ticket);
  }
  free(coarse);
  return CDAG_OK;
}

typedef struct { const pctx *x; } nsort;

/* Epochs on another rank by origin, target, then where they open at the origin. */
static int cmp_epoch_origin(const void *pa, const void *pb, void *ctx) {
  const pctx *x = ((const nsort *)ctx)->x;
  const pepoch *p = &x->ep[*(const int64_t *)pa], *q = &x->ep[*(const int64_t *)pb];
  int64_t kp[3] = {p->o, p->t, x->pidx[p->first]}, kq[3] = {q->o, q->t, x->pidx[q->first]};
  for (int i = 0; i < 3; i++)
    if (kp[i] != kq[i]) return (kp[i] > kq[i]) - (kp[i] < kq[i]);
  return 0;
}

static int cmp_acc_lo(const void *pa, const void *pb, void *ctx) {
  const pacc *a = ctx, *x = &a[*(const int64_t *)pa], *y = &a[*(const int64_t *)pb];
  return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Each epoch's accesses by address: by[ea[2e] .. ea[2e+1]) indexes a, and top[k] is the
   highest end among by[ea[2e] .. k] (so a search can stop where nothing before reaches). */
typedef struct { const pacc *a; const int64_t *ea; int64_t *by; uint64_t *top; } pby;

static void sort_epoch(pby *s, int64_t e) {
  int64_t lo = s->ea[2 * e], hi = s->ea[2 * e + 1];
  for (int64_t k = lo; k < hi; k++) s->by[k] = k;
  base_sort_r(s->by + lo, hi - lo, sizeof *s->by, cmp_acc_lo, (void *)s->a);
  for (int64_t k = lo; k < hi; k++) s->top[k] = k > lo && s->top[k - 1] > s->a[s->by[k]].hi ? s->top[k - 1] : s->a[s->by[k]].hi;
}

/* Does an access of epoch p conflict with one of epoch q? Each access of the smaller is
   looked up among the other's by address: a binary search, then back while an access
   there may still reach it. O(m log M + the pairs that overlap), m and M their counts. */
static int epochs_conflict(const pby *s, int64_t p, int64_t q) {
  if (s->ea[2 * p + 1] - s->ea[2 * p] > s->ea[2 * q + 1] - s->ea[2 * q]) {
    int64_t t = p;
    p = q, q = t;
  }
  int64_t q0 = s->ea[2 * q], q1 = s->ea[2 * q + 1];
  for (int64_t i = s->ea[2 * p]; i < s->ea[2 * p + 1]; i++) {
    const pacc *x = &s->a[i];
    int64_t lo = q0, hi = q1;   /* the first of q's starting at or above x's end */
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (s->a[s->by[mid]].lo < x->hi) lo = mid + 1;
      else hi = mid;
    }
    for (int64_t k = lo - 1; k >= q0 && s->top[k] > x->lo; k--)
      if (blocks_meet(x, &s->a[s->by[k]]) && conflict(x, &s->a[s->by[k]])) return 1;
  }
  return 0;
}

/* One origin's epochs on one target through two windows (two communicators), open at once at
   the origin, that touch the same bytes (windows over one buffer): their fences at the target
   go by tickets, and an exclusive epoch's all go by its closing ticket, so the one nested in
   it can land at the target before it opens, the origin's order reversed. Both are marked
   (bad 5; two windows of one slot, one communicator: origin_epochs). Epochs open at once at
   one origin on one target are at most one per window slot: O(E log E + A log A) for E
   epochs and A accesses, and the pairs of accesses that overlap. */
static int nested_conflicts(pctx *x, const pacc *a, const int64_t *ea, int64_t na, int64_t *order) {
  int64_t n = 0;
  pby s = {a, ea, malloc((size_t)(na ? na : 1) * sizeof *s.by), malloc((size_t)(na ? na : 1) * sizeof *s.top)};
  if (!s.by || !s.top) return free(s.by), free(s.top), CDAG_NOMEM("passive-target epochs");
  for (int64_t e = 0; e < x->nep; e++) {
    sort_epoch(&s, e);
    if (x->ep[e].t != x->ep[e].o) order[n++] = e;
  }
  base_sort_r(order, n, sizeof *order, cmp_epoch_origin, &(nsort){x});
  for (int64_t i = 0; i < n; i++) {
    pepoch *p = &x->ep[order[i]];
    int64_t close = x->pidx[p->first + p->n - 1];
    for (int64_t j = i + 1; j < n; j++) {
      pepoch *q = &x->ep[order[j]];
      if (q->o != p->o || q->t != p->t || x->pidx[q->first] > close) break;
      if (q->comm == p->comm || !epochs_conflict(&s, order[i], order[j])) continue;
      if (!p->bad) p->bad = 5;
      if (!q->bad) q->bad = 5;
    }
  }
  free(s.by), free(s.top);
  return CDAG_OK;
}

/* Marks the accesses of the phase that conflict with another origin's on their target, unless
   their tickets order them (ordered; two pieces of fine epochs are never reordered: both
   ran under shared locks, and overlap at the target only if neither completed before the
   other began). Units by target and opening, swept: each against the earlier ones still
   open at the target when it opens. O(U log U + the accesses of the pairs that overlap at
   their target), for U units. */
static int epoch_conflicts(pctx *x, int64_t from) {
  int64_t n = 0, m = 0, nu = 0;
  if (coarsen(x)) return CDAG_NOMEM("passive-target epochs");
  for (int64_t e = 0; e < x->nep; e++) n += x->ep[e].n;
  pacc *a = malloc((size_t)(n ? n : 1) * sizeof *a);
  punit *u = malloc((size_t)(n + x->nep + 1) * sizeof *u);
  int64_t *order = malloc((size_t)(n + x->nep + 1) * sizeof *order), *open = malloc((size_t)(n + x->nep + 1) * sizeof *open);
  if (!a || !u || !order || !open) {
    free(a), free(u), free(order), free(open);
    return CDAG_NOMEM("passive-target epochs");
  }
  int64_t *ea = malloc((size_t)(2 * x->nep + 1) * sizeof *ea);
  if (!ea) {
    free(a), free(u), free(order), free(open);
    return CDAG_NOMEM("passive-target epochs");
  }
  for (int64_t e = 0; e < x->nep; e++) {
    ea[2 * e] = m;
    epoch_units(x, e, a, &m, u, &nu);
    ea[2 * e + 1] = m;
  }
  int nrc = nested_conflicts(x, a, ea, m, order);
  free(ea);
  if (nrc) {
    free(a), free(u), free(order), free(open);
    return nrc;
  }
  for (int64_t k = 0; k < nu; k++) order[k] = k;
  base_sort_r(order, nu, sizeof *order, cmp_unit_open, &(psort){x, u});
  int64_t nopen = 0;
  for (int64_t k = 0; k < nu; k++) {
    const punit *q = &u[order[k]];
    pepoch *eq = &x->ep[q->e];
    pkey qopen = unit_key(x, q, 0), qclose = unit_key(x, q, 1);
    int64_t kept = 0;
    for (int64_t i = 0; i < nopen; i++)   /* those of its target still open when q opens */
      if (x->ep[u[open[i]].e].t == eq->t && !before(unit_key(x, &u[open[i]], 1), qopen)) open[kept++] = open[i];
    nopen = kept;
    for (int64_t i = 0; i < nopen; i++) {
      const punit *p = &u[open[i]];
      pepoch *ep = &x->ep[p->e];
      if (ep->o == eq->o || before(qclose, unit_key(x, p, 0)) || !units_conflict(a, p, q, 0)) continue;
      int why = p->fine && q->fine ? 2 : !ordered(x, from, p->e, q->e);   /* 2: at once, under shared locks */
      if (why) units_conflict(a, p, q, (uint8_t)why);
    }
    if (q->a1 > q->a0) open[nopen++] = order[k];
  }
  free(a), free(u), free(order), free(open);
  return CDAG_OK;
}

/* Why an access or epoch was left out (pepoch's bad, mop's races). */
static const char *conflict_reason(int bad) {
  return bad == 2   ? "another origin's access to the same bytes of its target may have run at the same time, both under "
                      "shared locks, in an order MPI decided"
         : bad == 5 ? "its origin's epoch on another window of the target, open at once, touches the same bytes: their "
                      "order there is unknown"
                    : "another origin's epoch on its target touches the same bytes, in an order the lock decides";
}

/* Are g and a the two lines of one fetching atomic (Fetch_and_op, Get_accumulate: a get with
   `wait`, then an accumulate of the same bytes, pmpi_rma.c)? */
static int atomic_halves(const mop *g, const mop *a) {
  pacc x, y;
  return !strncmp(g->text, "get ", 4) && !strncmp(a->text, "accumulate ", 11) && strstr(g->text, " wait") &&
         access_range(g, &x) && access_range(a, &y) && x.lo == y.lo && x.hi == y.hi;
}

/* What conflicts left out: an epoch nested in another on the same bytes whole, its fences at
   the targets (ins[from..)) with it; of two origins' epochs whose order is unknown, only the
   accesses that touch the same bytes (the rest of each epoch commutes with the other), an
   atomic's two lines together. */
static int drop_conflicts(pctx *x, int64_t from) {
  int rc = epoch_conflicts(x, from);
  for (int64_t e = 0; !rc && e < x->nep; e++)
    if (x->ep[e].bad) rc = drop_epoch(x, x->pool + x->ep[e].first, x->ep[e].n, conflict_reason(x->ep[e].bad));
  for (int64_t e = 0; !rc && e < x->nep; e++) {
    mop **ep = x->pool + x->ep[e].first;
    for (int64_t k = 0; k + 1 < x->ep[e].n; k++)
      if ((ep[k]->races || ep[k + 1]->races) && atomic_halves(ep[k], ep[k + 1]))
        ep[k]->races = ep[k + 1]->races = ep[k]->races ? ep[k]->races : ep[k + 1]->races;
    for (int64_t k = 0; !rc && k < x->ep[e].n; k++)
      if (ep[k]->races && !ep[k]->dropped) rc = left_out(x->m, ep[k], conflict_reason(ep[k]->races));
  }
  int64_t k = from;
  for (int64_t i = from; i < x->nins; i++)
    if (!x->ep[x->ins[i].epoch].bad) x->ins[k++] = x->ins[i];
  x->nins = k;
  return rc;
}

/* A target's fences by gap; in a gap, those without a ticket first (after the call before
   the gap, then before the call after it), then by ticket: no operation of the target lies
   between them, and an origin's tickets on one target grow with its program order on one
   window (across two windows they need not: nested_conflicts). */
static int cmp_pins(const void *a, const void *b) {
  const pins *x = a, *y = b;
  int64_t kx[6] = {x->rank, x->a, (int64_t)x->ticket, x->ticket ? 0 : !x->after, x->origin, (int64_t)x->oseq},
          ky[6] = {y->rank, y->a, (int64_t)y->ticket, y->ticket ? 0 : !y->after, y->origin, (int64_t)y->oseq};
  for (int i = 0; i < 6; i++)
    if (kx[i] != ky[i]) return (kx[i] > ky[i]) - (kx[i] < ky[i]);
  return 0;
}

/* Positions for this phase's fences ins[from..) in one gap, in their order there (cmp_pins:
   by ticket, which orders two origins' conflicting epochs). When the gap has fewer
   positions than fences (a target that sat in one call while its origins flushed thousands
   of times), several fences share one, and each keeps its place among them (sub), which the
   writer sorts equal positions by (odd: a computation computed_reads adds before a fence
   takes the even one below it). Between two ops at adjacent positions (a completion and what
   the recording adds right after it), the fences share the first op's position, after it
   (sub from 3: ops have 0). 1 when the gap has no position at all (before an op at 0),
   whose epochs are then marked (bad 3). */
static int spread(pctx *x, pins *p, int64_t a, int64_t e) {
  const pside *s = &x->s[p[a].rank];
  int64_t at = p[a].a;
  uint64_t hi = at < s->n ? s->ops[at]->seq : s->n ? s->ops[s->n - 1]->seq + REC_SEQ_STEP : REC_SEQ_STEP;
  uint64_t lo = at > 0 ? s->ops[at - 1]->seq : hi > 4096 ? hi - 4096 : 0, n = (uint64_t)(e - a);
  if (hi <= lo) {
    for (int64_t k = a; k < e; k++) x->ep[p[k].epoch].bad = 3;
    return 1;
  }
  for (int64_t k = a; k < e; k++) {
    if (hi - lo == 1) {
      p[k].seq = lo, p[k].sub = 2 * (uint32_t)(k - a + 1) + 1;
      continue;
    }
    p[k].seq = hi - lo > n ? lo + (uint64_t)(k - a + 1) * ((hi - lo) / (n + 1))
                           : lo + 1 + (uint64_t)(k - a) * (hi - lo - 1) / n;   /* (k - a) * gap < n * n */
    p[k].sub = 2 * (uint32_t)(k - a) + 1;
  }
  return 0;
}

/* Positions for this phase's fences ins[from..): spread between the ops they fall between;
   the epochs with a fence in a gap too full are left out, counted, and the rest placed
   again. */
static int position_fences(pctx *x, int64_t from) {
  for (int full = 1; full;) {
    int64_t n = x->nins - from;
    if (n <= 0) return CDAG_OK;
    pins *p = x->ins + from;
    if (n > 1) base_sort(p, n, sizeof *p, cmp_pins);
    full = 0;
    for (int64_t a = 0, e; a < n; a = e) {
      for (e = a; e < n && p[e].rank == p[a].rank && p[e].a == p[a].a; e++) {}
      full |= spread(x, p, a, e);
    }
    for (int64_t e = 0; full && e < x->nep; e++)
      if (x->ep[e].bad == 3) {
        x->ep[e].bad = 4;
        int rc = drop_epoch(x, x->pool + x->ep[e].first, x->ep[e].n,
                            "its target had no position free for its fences: they fall before the target's first "
                            "operation, at position 0");
        if (rc) return rc;
      }
    int64_t k = from;
    for (int64_t i = from; full && i < x->nins; i++)
      if (!x->ep[x->ins[i].epoch].bad) x->ins[k++] = x->ins[i];
    if (full) x->nins = k;
  }
  return CDAG_OK;
}

/* ---- bytes a target computed between two reads of them ----
 * A passive-target epoch's get reads its target's bytes where its piece of the epoch opens
 * there (semantics.md), and the target makes no call for it: bytes the target computes
 * between two such reads would be, to the graph, the older ones (a coarray halo read every
 * iteration would read the first iteration's values every time, and its plan would move all
 * the reads to the start). Each such get of one line says what it fetched (`got`). Two reads
 * of the same bytes of a target, one after the other at the target, that fetched different
 * bytes, mean that the target computed them in between, when nothing else of the phase
 * touches those bytes there (no put or accumulate of any origin, no other kind of access, no
 * operation of the target's own that writes them or sends them: own_touch), no read of other
 * bytes meets them, and the earlier reads closed: the target gets a computation that reads
 * all it holds and writes them, just before the later read's fence. Bytes a target computes
 * before the first read of them stay its own data (as for sends: docs/recording.md). Cost:
 * O(r log r + n log r) for r such reads and n operations. */

typedef struct mread {
  int phase, t;
  uint64_t hash;             /* what it fetched */
  uint64_t open, close;      /* its piece's fences at the target: positions ... */
  uint32_t osub, csub;       /* ... and places there (spread) */
  pacc a;
} mread;

static int cmp_pos(uint64_t a, uint32_t as, uint64_t b, uint32_t bs) {
  return a != b ? (a > b) - (a < b) : (as > bs) - (as < bs);
}

static int cmp_ins_origin(const void *a, const void *b, void *ctx) {
  const pins *ins = ctx, *x = &ins[*(const int64_t *)a], *y = &ins[*(const int64_t *)b];
  if (x->origin != y->origin) return (x->origin > y->origin) - (x->origin < y->origin);
  return (x->oseq > y->oseq) - (x->oseq < y->oseq);
}

/* The fence at the target of origin o's marker at position seq (by[0..n): ins sorted by
   origin and position), NULL if its epoch was left out. */
static const pins *marker_fence(const pins *ins, const int64_t *by, int64_t n, int o, uint64_t seq) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    const pins *p = &ins[by[mid]];
    if (p->origin < o || (p->origin == o && p->oseq < seq)) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && ins[by[lo]].origin == o && ins[by[lo]].oseq == seq ? &ins[by[lo]] : NULL;
}

static int add_read(merger *m, const mread *r) {
  if (base_grow((void **)&m->reads, m->nreads, &m->readcap, 1, sizeof *m->reads, "merger")) return CDAG_NOMEM("reads");
  m->reads[m->nreads++] = *r;
  return CDAG_OK;
}

/* The phase's placed gets that said what they fetched, with their pieces' fences at their
   targets (ins[from..): positioned). */
static int note_reads(pctx *x, int64_t from) {
  int64_t n = x->nins - from;
  int64_t *by = n > 0 ? malloc((size_t)n * sizeof *by) : NULL;
  if (n > 0 && !by) return CDAG_NOMEM("reads");
  for (int64_t k = 0; k < n; k++) by[k] = from + k;
  if (n > 1) base_sort_r(by, n, sizeof *by, cmp_ins_origin, x->ins);
  int rc = CDAG_OK;
  for (int64_t e = 0; e < x->nep && !rc && n > 0; e++) {
    const pepoch *ep = &x->ep[e];
    if (ep->bad || ep->t == ep->o) continue;
    mop **pool = x->pool + ep->first;
    const pins *open = NULL;
    int64_t pending = x->m->nreads;   /* reads of the piece, waiting for its closing fence */
    for (int64_t k = 0; k < ep->n && !rc; k++) {
      mop *o = pool[k];
      if (!passive_access(o)) {   /* a marker (a fence now): closes a piece, opens the next */
        const pins *f = marker_fence(x->ins, by, n, ep->o, o->seq);
        for (int64_t i = pending; i < x->m->nreads && f; i++) x->m->reads[i].close = f->seq, x->m->reads[i].csub = f->sub;
        if (!f) x->m->nreads = pending;
        pending = x->m->nreads;
        open = f;
        continue;
      }
      mread r = {x->phase, ep->t, 0, 0, UINT64_MAX, 0, 0, {0}};
      if (!o->hashed || o->dropped || !open || !access_range(o, &r.a)) continue;
      r.hash = got_hash(&x->m->r[ep->o], o->seq), r.open = open->seq, r.osub = open->sub;
      o->hashed = 2;   /* compared: not a write of its target's (written_hulls) */
      rc = add_read(x->m, &r);
    }
    x->m->nreads = pending;   /* a piece never closed */
  }
  free(by);
  return rc;
}

/* A hull of bytes written on a rank in a phase (hi UINT64_MAX: not known how far). */
typedef struct { int phase, rank; uint64_t lo, hi; } mhull;

static int cmp_hull(const void *a, const void *b) {
  const mhull *x = a, *y = b;
  int64_t kx[3] = {x->phase, x->rank, 0}, ky[3] = {y->phase, y->rank, 0};
  for (int i = 0; i < 2; i++)
    if (kx[i] != ky[i]) return (kx[i] > ky[i]) - (kx[i] < ky[i]);
  return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Do x and y name the same bytes (the same blocks)? */
static int same_range(const pacc *x, const pacc *y) {
  return x->lo == y->lo && x->hi == y->hi && x->nb == y->nb && x->stride == y->stride && x->len == y->len;
}

static int cmp_read(const void *a, const void *b) {
  const mread *x = a, *y = b;
  uint64_t kx[7] = {(uint64_t)x->phase, (uint64_t)x->t, x->a.lo, x->a.hi, x->a.nb, x->a.stride, x->a.len},
           ky[7] = {(uint64_t)y->phase, (uint64_t)y->t, y->a.lo, y->a.hi, y->a.nb, y->a.stride, y->a.len};
  for (int i = 0; i < 7; i++)
    if (kx[i] != ky[i]) return (kx[i] > ky[i]) - (kx[i] < ky[i]);
  return cmp_pos(x->open, x->osub, y->open, y->osub);
}

/* The number after ` NAME ` in text from `from` on, 0 if none (*ok). */
static uint64_t num_after(const char *from, const char *name, int *ok) {
  const char *p = strstr(from, name);
  *ok = p != NULL;
  return p ? strtoull(p + strlen(name), NULL, 0) : 0;
}

/* The blocks of `bytes` at `at` that text's side names (` blocks N` with `stride` as the
   stride's name): their hull; every address when steps or a negative stride make it other. */
static void blocks_hull(const char *text, const char *stride, uint64_t at, uint64_t bytes, uint64_t *lo, uint64_t *hi) {
  int ok, oks;
  uint64_t nb = num_after(text, " blocks ", &ok);
  long long d = (long long)num_after(text, stride, &oks);
  *lo = at, *hi = at + bytes;
  if (!ok || nb < 2) return;
  if (strstr(text, "steps ") || (oks && d < 0)) *lo = 0, *hi = UINT64_MAX;
  else if (oks) *hi = at + (nb - 1) * (uint64_t)d + bytes / nb;
}

/* The bytes of its own rank a native call's line reads or writes (the hull of its `in` and
   its `out`, `inout` or `addr` side), 0 if it names none (a member with no part there). */
static int call_touches(const merger *m, const char *t, uint64_t *lo, uint64_t *hi) {
  size_t klen = strcspn(t, " ");
  int kind = ir_coll_kind(t, klen), ok_in, ok_out;
  const char *p = t + klen;
  const ir_coll_info *c = kind >= 0 ? ir_coll_get(kind) : NULL;
  uint64_t in = num_after(p, " in ", &ok_in), out = num_after(p, " inout ", &ok_out);
  if (!ok_out) out = num_after(p, " out ", &ok_out);
  if (!ok_out) out = num_after(p, " addr ", &ok_out);
  if (!ok_in && !ok_out) return 0;
  *lo = ok_in && (!ok_out || in < out) ? in : out, *hi = UINT64_MAX;   /* how far: below, when the line says */
  char *e;
  uint64_t k = strtoull(p, &e, 10);
  if (!c || c->vector) return 1;
  if (*e != 'b') {   /* K TYPE: elements of a reduction */
    int type = ir_type_parse(e + 1, strcspn(e + 1, " "));
    if (type < 0) return 1;
    k *= (uint64_t)ir_type_size(type);
  }
  uint64_t in_blocks = 1, out_blocks = 1;
  ir_coll_spans(kind, 1, m->nprocs, &in_blocks, &out_blocks);   /* a root's, the most */
  uint64_t in_end = ok_in ? in + k * in_blocks : 0, out_end = ok_out ? out + k * out_blocks : 0;
  *hi = in_end > out_end ? in_end : out_end;
  return 1;
}

/* The bytes of its own rank op o touches so that a computation there would change what the
   phase says (1 with [*lo, *hi), 0 if none): what it writes (a receive, a get's origin side, a
   copy, a computation, a native call, a local reduce), and what a send, a put's or
   accumulate's origin side or a native call reads (it may still be reading them). A line it
   cannot read touches every address. One-sided accesses' target sides are their targets' (written_hulls). */
static int own_touch(const merger *m, const mop *o, uint64_t *lo, uint64_t *hi) {
  const char *t = o->text;
  int ok;
  uint64_t bytes = strtoull(t + strcspn(t, " "), NULL, 10), at;
  *lo = 0, *hi = UINT64_MAX;
  if (o->kind == K_WAIT) return 0;
  if (o->kind == K_SEND || o->kind == K_RECV || !strncmp(t, "get ", 4) || !strncmp(t, "put ", 4)) {
    at = num_after(t, " addr ", &ok);
    if (ok) *lo = at, *hi = at + bytes;
    return 1;
  }
  if (!strncmp(t, "accumulate ", 11)) {
    pacc a;
    at = num_after(t, " addr ", &ok);
    if (ok && access_range(o, &a)) *lo = at, *hi = at + a.nb * a.len;
    return 1;
  }
  if (!strncmp(t, "fence", 5) || !strncmp(t, "winfree", 7) || !strncmp(t, "barrier", 7)) return 0;
  if (!strncmp(t, "compute ", 8)) {
    const char *w = strstr(t, " writes ");
    if (!w) return 0;
    at = num_after(w, " at ", &ok);
    if (ok) blocks_hull(w, " stride ", at, strtoull(w + 8, NULL, 10), lo, hi);
    return 1;
  }
  if (!strncmp(t, "copy ", 5)) {
    at = num_after(t, " to ", &ok);
    if (ok) blocks_hull(t, " to_stride ", at, bytes, lo, hi);
    if (strstr(t, " to_steps ")) *lo = 0, *hi = UINT64_MAX;
    return 1;
  }
  if (ir_coll_kind(t, strcspn(t, " ")) >= 0 || !strncmp(t, "reduce ", 7)) return call_touches(m, t, lo, hi);
  return 1;
}

/* Is a byte of [lo, hi) in one of the hulls h[0..n) (sorted by lo; top[i]: the largest hi
   of h[0..i])? O(log n). */
static int hull_meets(const mhull *h, const uint64_t *top, int64_t n, uint64_t lo, uint64_t hi) {
  int64_t a = 0, b = n;   /* the hulls starting below hi: h[0..a) */
  while (a < b) {
    int64_t mid = a + (b - a) / 2;
    if (h[mid].lo < hi) a = mid + 1;
    else b = mid;
  }
  return a > 0 && top[a - 1] > lo;
}

/* Is (phase, t) among the reads (sorted by cmp_read)? */
static int has_reads(const merger *m, int phase, int t) {
  int64_t lo = 0, hi = m->nreads;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    const mread *r = &m->reads[mid];
    if (r->phase < phase || (r->phase == phase && r->t < t)) lo = mid + 1;
    else hi = mid;
  }
  return lo < m->nreads && m->reads[lo].phase == phase && m->reads[lo].t == t;
}

static int add_hull(mhull **h, int64_t *n, int64_t *cap, mhull x) {
  if (base_grow((void **)h, *n, cap, 1, sizeof **h, "merger")) return CDAG_NOMEM("reads");
  (*h)[(*n)++] = x;
  return CDAG_OK;
}

/* What the phases of the reads' targets touch there: one-sided accesses other than the reads
   compared (a put, an accumulate, or a get MPI orders otherwise), and the targets' own
   operations (own_touch). */
static int written_hulls(merger *m, mhull **h, int64_t *nh) {
  int64_t cap = 0;
  for (int r = 0; r < m->nprocs; r++)
    for (int64_t i = 0; i < m->r[r].nops; i++) {
      const mop *o = &m->r[r].ops[i];
      uint64_t lo, hi;
      long long t = -1;
      int rc = CDAG_OK;
      if (o->dropped || o->added) continue;
      if (o->kind == K_OTHER && is_onesided(o->text) && strncmp(o->text, "fence", 5) && !passive_marker(o) &&
          o->hashed != 2 && (field(o->text, "from", &t) || field(o->text, "to", &t)) && has_reads(m, o->phase, (int)t)) {
        pacc a;
        if (!access_range(o, &a)) a.lo = 0, a.hi = UINT64_MAX;
        rc = add_hull(h, nh, &cap, (mhull){o->phase, (int)t, a.lo, a.hi});
      }
      if (!rc && has_reads(m, o->phase, r) && own_touch(m, o, &lo, &hi)) rc = add_hull(h, nh, &cap, (mhull){o->phase, r, lo, hi});
      if (rc) return rc;
    }
  if (*nh > 1) base_sort(*h, *nh, sizeof **h, cmp_hull);
  return CDAG_OK;
}

/* A computation of r's bytes at its target just before r's fence there. */
static int add_computation(merger *m, const mread *r) {
  mrank *t = &m->r[r->t];
  char *text = malloc(128);
  if (!text) return CDAG_NOMEM("reads");
  int n = snprintf(text, 128, "compute 0 reads all writes %" PRIu64 " at 0x%" PRIx64, r->a.nb * r->a.len, r->a.lo);
  if (r->a.nb > 1) snprintf(text + n, (size_t)(128 - n), " blocks %" PRIu64 " stride %" PRIu64, r->a.nb, r->a.stride);
  if (base_grow((void **)&t->texts, t->ntexts, &t->textcap, 1, sizeof *t->texts, "merger") ||
      base_grow((void **)&t->ops, t->nops, &t->cap, 1, sizeof *t->ops, "merger")) {
    free(text);
    return CDAG_NOMEM("reads");
  }
  t->texts[t->ntexts++] = text;
  t->ops[t->nops++] = (mop){.phase = r->phase, .kind = K_OTHER, .added = 1, .idx = -1, .peer = -1, .ptag = -1, .seq = r->open,
                            .mseq = r->open, .sub = r->osub - 1, .text = text};
  return CDAG_OK;
}

/* Computations of bytes targets computed between two reads (the comment above), every
   phase; *added: how many. */
static int computed_reads(merger *m, uint64_t *added) {
  *added = 0;
  if (!m->nreads) return CDAG_OK;
  base_sort(m->reads, m->nreads, sizeof *m->reads, cmp_read);
  mhull *h = NULL;
  int64_t nh = 0, nq = 0;
  mread *q = malloc((size_t)m->nreads * sizeof *q);   /* the reads before which a computation goes */
  uint64_t *top = NULL;
  int rc = q ? written_hulls(m, &h, &nh) : CDAG_NOMEM("reads");
  if (!rc && !(top = malloc((size_t)(nh ? nh : 1) * sizeof *top))) rc = CDAG_NOMEM("reads");
  for (int64_t i = 0; i < nh && !rc; i++)
    top[i] = i && h[i - 1].phase == h[i].phase && h[i - 1].rank == h[i].rank && top[i - 1] > h[i].hi ? top[i - 1] : h[i].hi;
  const mread *r = m->reads;
  for (int64_t s = 0, se, ha = 0, hb; s < m->nreads && !rc; s = se) {   /* the reads of one phase and target */
    for (se = s; se < m->nreads && r[se].phase == r[s].phase && r[se].t == r[s].t; se++) {}
    while (ha < nh && (h[ha].phase < r[s].phase || (h[ha].phase == r[s].phase && h[ha].rank < r[s].t))) ha++;
    for (hb = ha; hb < nh && h[hb].phase == r[s].phase && h[hb].rank == r[s].t; hb++) {}
    uint64_t before = 0;   /* the largest end of the ranges before this one */
    for (int64_t a = s, b; a < se; a = b) {   /* one range of the target, its reads by place */
      for (b = a + 1; b < se && same_range(&r[b].a, &r[a].a); b++) {}
      int alone = before <= r[a].a.lo && (b == se || r[b].a.lo >= r[a].a.hi);   /* no other range meets it */
      if (r[a].a.hi > before) before = r[a].a.hi;
      if (!alone || (hb > ha && hull_meets(h + ha, top + ha, hb - ha, r[a].a.lo, r[a].a.hi))) continue;
      const mread *last = &r[a];   /* of the reads before, the one that closes last */
      for (int64_t i = a + 1; i < b; i++) {
        if (r[i].hash != r[i - 1].hash && cmp_pos(r[i - 1].open, r[i - 1].osub, r[i].open, r[i].osub) < 0 &&
            cmp_pos(last->close, last->csub, r[i].open, r[i].osub) <= 0)
          q[nq++] = r[i];
        if (cmp_pos(r[i].close, r[i].csub, last->close, last->csub) > 0) last = &r[i];
      }
    }
  }
  for (int64_t i = 0; i < nq && !rc; i++) rc = add_computation(m, &q[i]);
  if (!rc && nq) sort_ops(m);
  *added = (uint64_t)nq;
  free(q), free(h), free(top);
  return rc;
}

/* MPI_Win_free's lines are places for fences only: never written. */
static void drop_win_frees(merger *m) {
  for (int r = 0; r < m->nprocs; r++)
    for (int64_t i = 0; i < m->r[r].nops; i++) m->r[r].ops[i].dropped |= win_free_mark(&m->r[r].ops[i]);
}

/* Every phase's passive-target epochs: markers made fences, the targets' fences added (as
   operations of theirs), the epochs that cannot be placed dropped. */
static int place_passive(merger *m, int nphases, int none, uint64_t *placed) {
  int any = 0;
  for (int r = 0; r < m->nprocs; r++)
    for (int64_t i = 0; i < m->r[r].nops; i++) any |= passive_marker(&m->r[r].ops[i]) || passive_access(&m->r[r].ops[i]);
  if (!any) return drop_win_frees(m), CDAG_OK;
  pctx x = {.m = m, .none = none};
  int rc = (x.s = calloc((size_t)m->nprocs, sizeof *x.s)) ? CDAG_OK : CDAG_NOMEM("passive-target epochs");
  for (int p = 0; p < nphases && !rc; p++) {
    x.phase = p;
    int64_t from = x.nins;
    x.nep = x.npool = 0;
    for (int r = 0; r < m->nprocs && !rc; r++) rc = pside_build(m, r, p, &x.s[r]);
    for (int r = 0; r < m->nprocs && !rc; r++) rc = origin_epochs(&x, r);
    if (!rc) rc = drop_conflicts(&x, from);
    if (!rc) rc = position_fences(&x, from);
    if (!rc) rc = note_reads(&x, from);
    for (int r = 0; r < m->nprocs; r++) pside_free(&x.s[r]);
  }
  drop_win_frees(m);
  for (int64_t k = 0; k < x.nins && !rc; k++) {   /* the targets' fences, as their operations */
    mrank *t = &m->r[x.ins[k].rank];
    if (base_grow((void **)&t->ops, t->nops, &t->cap, 1, sizeof *t->ops, "merger")) {
      rc = CDAG_NOMEM("fences");
      break;
    }
    t->ops[t->nops++] = (mop){.phase = x.ins[k].phase, .kind = K_OTHER, .added = 1, .idx = -1, .peer = -1,
                              .comm = x.ins[k].comm, .seq = x.ins[k].seq, .sub = x.ins[k].sub, .text = "fence comm 0"};
    if (x.ins[k].phase > t->maxphase) t->maxphase = x.ins[k].phase;
  }
  free(x.s);
  free(x.ins);
  free(x.ep);
  free(x.pool);
  free(x.pidx);
  *placed = x.placed;
  if (!rc) sort_ops(m);
  return rc;
}

/* Labels are short (recordings are large): the format's compact labels. */
static const char *label_of(const mop *o, char buf[IR_COMPACT_LABEL]) {
  return o->labelled ? ir_compact_label(o->label, buf) : NULL;
}

/* A wait line with the operations it names that are still there; 0 if none is. */
static int write_wait(FILE *f, merger *m, mop **ops, int64_t n, const mop *w, int mark) {
  int64_t k = 0;
  for (char *p = w->text + 5, *e; *p; p = e) {
    uint64_t seq = strtoull(p, &e, 10);
    if (e == p) break;
    mop *o = find_seq(ops, n, seq);
    if (!o || (o->kind == K_SEND && o->unmatched)) continue;
    if (mark) o->labelled = 1;
    else {
      if (k == m->waitcap) {
        int64_t c = m->waitcap ? 2 * m->waitcap : 16;
        char (*nl)[IR_COMPACT_LABEL] = realloc(m->waitlab, (size_t)c * sizeof *nl);
        if (nl) m->waitlab = nl;
        const char **np = nl ? realloc(m->waitptr, (size_t)c * sizeof *np) : NULL;
        if (!np) return -1;
        m->waitptr = np;
        m->waitcap = c;
      }
      ir_compact_label(o->label, m->waitlab[k]);
    }
    k++;
  }
  for (int64_t i = 0; i < k && !mark; i++) m->waitptr[i] = m->waitlab[i];   /* the array may have moved */
  if (k && !mark) {
    ir_line l = {.kind = IR_LINE_WAIT, .seg = -1, .cpu = -1, .nic = -1, .comm = -1, .waits = m->waitptr, .nwaits = k};
    if (ir_write_line(f, NULL, &l)) return -1;
  }
  return (int)(k > 0);
}

/* What a phase file holds: operations, computations among them and their costs (ns). */
typedef rec_phase_sum phase_sum;

/* A send or receive as the graph file says it: world peer, the graph's tag, no comm. */
static int write_message(FILE *f, merger *m, const mrank *r, const mop *o, phase_sum *ps) {
  long long bytes = strtoll(o->text + 5, NULL, 10), addr = 0;
  field(o->text, "addr", &addr);
  char lab[IR_COMPACT_LABEL];
  ir_line l = {.kind = o->kind == K_SEND ? IR_SEND : IR_RECV, .bytes = (uint64_t)bytes, .peer = o->peer,
               .tag = o->ptag >= 0 ? o->ptag : graph_tag(m, r, o), .addr = (uint64_t)addr, .seg = -1, .cpu = -1, .nic = -1, .comm = -1,
               .wait = strstr(o->text, " wait") != NULL};
  if (o->kind == K_RECV && o->unmatched) {   /* its send is not in the phase: bytes from outside */
    l.kind = IR_CALC;
    l.bytes = 0;
    l.wlen = (uint64_t)bytes;
    ps->computes += bytes > 0;
  }
  return ir_write_line(f, label_of(o, lab), &l);
}

/* The graph's number of communicator id named by an op of rank r: a target's fences of a
   passive-target epoch name the communicator its origin declared. */
static int op_global(const merger *m, const mrank *r, int id) {
  int g = global_comm(r, id), o, t, k;
  if (g < 0 && rec_passive_of(id, m->nprocs, &o, &t, &k)) g = global_comm(&m->r[o], id);
  return g;
}

/* Any other operation: as the recorder wrote it with the format's writer, its communicator
   renumbered. */
static void write_other(FILE *f, const merger *m, const mrank *r, const mop *o) {
  char lab[IR_COMPACT_LABEL];
  if (label_of(o, lab)) fprintf(f, "%s: ", lab);
  const char *c = strstr(o->text, " comm ");
  if (!c) { fprintf(f, "%s\n", o->text); return; }
  fprintf(f, "%.*s comm %d%s\n", (int)(c - o->text), o->text, op_global(m, r, o->comm), strchr(c + 6, ' ') ? strchr(c + 6, ' ') : "");
}

static int write_rank(FILE *f, merger *m, int rank, int phase, phase_sum *ps) {
  mrank *r = &m->r[rank];
  int64_t n = 0, lo, hi;
  phase_range(r, phase, &lo, &hi);
  for (int64_t i = lo; i < hi; i++) n += kept(r, &r->ops[i], phase);
  if (!n) return CDAG_OK;
  mop **ops = malloc((size_t)n * sizeof *ops);
  if (!ops) return CDAG_NOMEM("operations");
  n = 0;
  for (int64_t i = lo; i < hi; i++)
    if (kept(r, &r->ops[i], phase)) ops[n++] = &r->ops[i];
  base_sort(ops, n, sizeof *ops, cmp_written);
  for (int64_t i = 0; i < n; i++) ops[i]->labelled = 0;
  for (int64_t i = 0; i < n; i++)
    if (ops[i]->kind == K_WAIT) write_wait(f, m, ops, n, ops[i], 1);
  uint32_t labels = 0;
  for (int64_t i = 0; i < n; i++)
    if (ops[i]->labelled) ops[i]->label = labels++;
  fprintf(f, "rank %d {\n", rank);
  int rc = CDAG_OK;
  for (int64_t i = 0; i < n && !rc; i++) {
    mop *o = ops[i];
    if (o->kind == K_WAIT) {
      int w = write_wait(f, m, ops, n, o, 0);
      if (w < 0) rc = CDAG_NOMEM("wait labels");
      else ps->ops += (uint64_t)w;
    } else if (o->kind == K_SEND && o->unmatched) {
      continue;
    } else {
      if (o->kind == K_OTHER) write_other(f, m, r, o);
      else rc = write_message(f, m, r, o, ps);
      if (o->kind == K_OTHER && !strncmp(o->text, "compute ", 8)) {   /* its cost checked when read */
        uint64_t cost = strtoull(o->text + 8, NULL, 10);
        ps->computes++;
        ps->ns = ps->ns > UINT64_MAX - cost ? UINT64_MAX : ps->ns + cost;
      }
      ps->ops++;
    }
  }
  for (int64_t i = 0; i < r->nscratch; i++)
    if (r->scratch[i].phase == phase || m->cut) fprintf(f, "scratch %s\n", r->scratch[i].text);
  fprintf(f, "}\n");
  free(ops);
  return rc;
}

/* The communicators the phase's native collectives use. */
static int write_comms(FILE *f, merger *m, int phase) {
  if (!m->nglobal) return CDAG_OK;
  uint8_t *used = calloc((size_t)m->nglobal, 1);
  if (!used) return CDAG_NOMEM("communicators");
  for (int r = 0; r < m->nprocs; r++) {
    int64_t lo, hi;
    phase_range(&m->r[r], phase, &lo, &hi);
    for (int64_t i = lo; i < hi; i++) {
      mop *o = &m->r[r].ops[i];
      int g = o->kind == K_OTHER && o->comm && kept(&m->r[r], o, phase) ? op_global(m, &m->r[r], o->comm) : 0;
      if (g > 0 && g <= m->nglobal) used[g - 1] = 1;
    }
  }
  for (int g = 0; g < m->nglobal; g++) {
    if (!used[g]) continue;
    fprintf(f, "comm %d ranks", g + 1);
    for (int i = 0; i < m->global[g]->n; i++) fprintf(f, " %d", m->global[g]->members[i]);
    fprintf(f, "\n");
  }
  free(used);
  return CDAG_OK;
}

static int write_phase_to(FILE *f, merger *m, int phase, const char *command, phase_sum *ps) {
  fprintf(f, "// recorded by cdag record: phase %d of %d processes%s%s\n", phase, m->nprocs, command ? " running: " : "",
          command ? command : "");
  fprintf(f, "num_ranks %d\n", m->nprocs);
  int rc = write_comms(f, m, phase);
  for (int r = 0; r < m->nprocs && !rc; r++) rc = write_rank(f, m, r, phase, ps);
  return rc;
}

/* The phase as a file of its own (the flat recording), or handed to the distinct phases. */
static int write_phase(merger *m, int phase, const char *command, phase_sum *ps, rec_distinct *dx) {
  if (dx) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return CDAG_NOMEM("a phase's text");
    int rc = write_phase_to(f, m, phase, command, ps), bad = ferror(f);   /* a memory stream fails writing only for memory */
    if ((fclose(f) || bad || !buf) && !rc) rc = CDAG_NOMEM("a phase's text");
    if (!rc) rc = rec_distinct_add(dx, buf, len, ps);
    free(buf);
    return rc;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/phase-%04d.cdag", m->dir, phase);
  FILE *f = fopen(path, "w");
  if (!f) return cdag__error(errno == ENOMEM ? CDAG_ERR_NOMEM : CDAG_ERR_IO, "%s: %s", path,
                             errno == ENOMEM ? "out of memory opening it" : strerror(errno));
  int rc = write_phase_to(f, m, phase, command, ps);
  if (fclose(f) && !rc) rc = cdag__error(CDAG_ERR_IO, "%s: %s", path, strerror(errno));
  return rc;
}

static void json_counts(FILE *f, const char *name, const mcount *c, int n) {
  fprintf(f, ",\n  \"%s\": {", name);
  for (int i = 0; i < n; i++) {
    fprintf(f, "%s", i ? ", " : "");
    ir_json_string(f, c[i].name);
    fprintf(f, ": %" PRIu64, c[i].n);
  }
  fprintf(f, "}");
}

/* "NAME": [ranks], those whose part is there but did not reach MPI_Finalize, "unfinished", or
   is not there (present 0); 1 if there is one. */
static int json_ranks(FILE *f, const merger *m, const char *name, int present) {
  int n = 0;
  fprintf(f, "  \"%s\": [", name);
  for (int r = 0; r < m->nprocs; r++)
    if (m->r[r].present == present && !m->r[r].finalized) fprintf(f, "%s%d", n++ ? ", " : "", r);
  fprintf(f, "],%s", present ? "\n" : "");
  return n > 0;
}

static int write_index(merger *m, const char *command, const rec_summary *sum, const phase_sum *ps, rec_distinct *dx) {
  char path[4096];
  snprintf(path, sizeof path, "%s/index.json", m->dir);
  FILE *f = fopen(path, "w");
  if (!f) return cdag__error(errno == ENOMEM ? CDAG_ERR_NOMEM : CDAG_ERR_IO, "%s: %s", path,
                             errno == ENOMEM ? "out of memory opening it" : strerror(errno));
  uint64_t fixes[3] = {0, 0, 0};
  for (int r = 0; r < m->nprocs; r++)
    for (int k = 0; k < 3; k++) fixes[k] += m->r[r].fixes[k];
  fprintf(f, "{\"cdag_recording\": %d, \"nprocs\": %d,\n  \"command\": ", REC_INDEX_VERSION, m->nprocs);
  if (command) ir_json_string(f, command);
  else fprintf(f, "null");
  fprintf(f, ",\n  \"complete\": %s,\n", sum->complete ? "true" : "false");
  int partial = json_ranks(f, m, "unfinished", 1);
  partial |= json_ranks(f, m, "missing", 0);
  fprintf(f, " \"counts_partial\": %s,\n  \"phases\": ", partial ? "true" : "false");
  int rc = dx ? rec_distinct_json(dx, f) : CDAG_OK;
  if (!dx) fprintf(f, "[");
  for (int p = 0; p < sum->nphases && !dx; p++)
    fprintf(f, "%s{\"file\": \"phase-%04d.cdag\", \"ops\": %" PRIu64 ", \"computes\": %" PRIu64 ", \"compute_ns\": %" PRIu64 "}",
            p ? ", " : "", p, ps[p].ops, ps[p].computes, ps[p].ns);
  if (!dx) fprintf(f, "]");
  json_counts(f, "calls", m->calls, m->ncalls);
  json_counts(f, "unsupported", m->unsup, m->nunsup);
  json_counts(f, "unsupported_why", m->why, m->nwhy);
  json_counts(f, "out_of_memory", m->oom, m->noom);
  json_counts(f, "interrupted", m->intr, m->nintr);
  json_counts(f, "unordered", m->unord, m->nunord);
  fprintf(f, ",\n  \"malformed\": {\"lines\": %lld, \"first\": [", (long long)m->nbad);
  for (int64_t i = 0; i < m->nbad && i < MERGE_BAD_KEPT; i++) {
    fprintf(f, "%s", i ? ", " : "");
    ir_json_string(f, m->bad[i]);
  }
  fprintf(f, "]}");
  fprintf(f, ",\n  \"unreceived\": %" PRIu64 ", \"unsent\": %" PRIu64 ",\n", sum->unreceived, sum->unsent);
  fprintf(f, "  \"compute\": {\"ops\": %" PRIu64 ", \"ns\": %" PRIu64 "},\n", sum->computes, sum->compute_ns);
  fprintf(f, "  \"target_computes\": %" PRIu64 ",\n", sum->target_computes);
  fprintf(f, "  \"timing\": {\"min_gap_ns\": %" PRIu64 ", \"node_procs\": %d, \"node_cpus\": %d},\n", m->min_gap,
          m->node_procs, m->node_cpus);
  fprintf(f, "  \"local\": {\"compute\": %" PRIu64 ", \"reduce\": %" PRIu64 ", \"copy\": %" PRIu64 "}}\n",
          fixes[REC_FIX_COMPUTE], fixes[REC_FIX_REDUCE], fixes[REC_FIX_COPY]);
  if (fclose(f) && !rc) rc = cdag__error(CDAG_ERR_IO, "%s: %s", path, strerror(errno));
  return rc;
}

/* The number of processes, from rank 0's header, at most REC_MAX_PROCS (each has a part
   file; the merger allocates per process before it reads them). */
static int count_procs(const char *dir, int *nprocs) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rank-0.part", dir);
  FILE *f = fopen(path, "r");
  if (!f && errno == ENOMEM) return cdag__error(CDAG_ERR_NOMEM, "%s: out of memory opening it", path);
  if (!f) return cdag__error(CDAG_ERR_IO, "%s: %s (no process was recorded: did the command run an MPI program that calls MPI_Init or MPI_Init_thread? one that only uses MPI sessions is not recorded)",
                             path, strerror(errno));
  char head[128] = "";
  size_t k = fread(head, 1, sizeof head - 1, f);
  head[k] = 0;
  fclose(f);
  char *p = head;
  uint64_t v = 0, r = 0, n = 0;
  if (strncmp(p, "cdag-record-part ", 17)) return cdag__error(CDAG_ERR_FORMAT, "%s:1: not a part file of cdag record", path);
  p += 17;
  char *nl = strchr(p, '\n');
  if (nl) *nl = 0;
  if (!nl || !unum(&p, UINT64_MAX, &v) || *p || v != 1)
    return cdag__error(CDAG_ERR_FORMAT, "%s:1: part file format version %.20s, this merger reads version 1", path, head + 17);
  p = nl + 1;
  if ((nl = strchr(p, '\n'))) *nl = 0;
  if (!nl || strncmp(p, "rank ", 5) || (p += 5, !unum(&p, INT32_MAX, &r)) || r != 0 || strncmp(p, "nprocs ", 7) ||
      (p += 7, !unum(&p, INT32_MAX, &n)) || *p || n == 0)
    return cdag__error(CDAG_ERR_FORMAT, "%s:2: not `rank 0 nprocs P` with P > 0", path);
  if (n > REC_MAX_PROCS)
    return cdag__error(CDAG_ERR_FORMAT, "%s:2: nprocs %llu: more processes than cdag record merges (%d)", path,
                       (unsigned long long)n, REC_MAX_PROCS);
  *nprocs = (int)n;
  return CDAG_OK;
}

/* For a process that did not finalize MPI (no `fixes` line): the local operations the
   recorder added, counted from the lines it left. Computations that write are the
   shadow's (a time-only one writes nothing); inferred copies touch no packing area; every
   local `reduce` is inferred. */
static void count_fixes(mrank *r) {
  for (int64_t i = 0; i < r->nops; i++) {
    const char *t = r->ops[i].text;
    unsigned long long bytes, from, to;
    if (!strncmp(t, "reduce ", 7)) r->fixes[REC_FIX_REDUCE]++;
    else if (!strncmp(t, "compute ", 8) && strstr(t, " writes ")) r->fixes[REC_FIX_COMPUTE]++;
    else if (sscanf(t, "copy %llub from %llx to %llx", &bytes, &from, &to) == 3 && from < REC_PACK_BASE &&
             to < REC_PACK_BASE)
      r->fixes[REC_FIX_COPY]++;
  }
}

/* One log line for the processes that left no part, as ranges. */
static void say_missing(merger *m) {
  int n = 0;
  for (int r = 0; r < m->nprocs; r++) n += !m->r[r].present;
  if (!n || !m->log) return;
  fprintf(m->log, "cdag record: %d of %d processes left no recording (died before MPI_Init returned, or could not write): ranks",
          n, m->nprocs);
  int said = 0;
  for (int r = 0; r < m->nprocs && said < 16; r++) {
    if (m->r[r].present || (r && !m->r[r - 1].present)) continue;
    int e = r;
    while (e + 1 < m->nprocs && !m->r[e + 1].present) e++;
    if (e > r) fprintf(m->log, " %d-%d", r, e);
    else fprintf(m->log, " %d", r);
    said++;
  }
  fprintf(m->log, "%s\n", said == 16 ? " ..." : "");
}

static void merger_free(merger *m) {
  for (int r = 0; m->r && r < m->nprocs; r++) {
    for (int i = 0; i < m->r[r].ncomms; i++) free(m->r[r].comms[i].members);
    free(m->r[r].comms);
    free(m->r[r].byid);
    free(m->r[r].ops);
    free(m->r[r].scratch);
    free(m->r[r].drops);
    free(m->r[r].probes);
    free(m->r[r].gots);
    free(m->r[r].folds);
    for (int64_t i = 0; i < m->r[r].ntexts; i++) free(m->r[r].texts[i]);
    free(m->r[r].texts);
    free(m->r[r].file);
  }
  free(m->r);
  free(m->reads);
  free(m->global);
  free(m->tagkey);
  free(m->calls);
  free(m->unsup);
  free(m->why);
  free(m->intr);
  free(m->unord);
  free(m->waitlab);
  free(m->waitptr);
  free(m->oom);
}

int rec_merge(const char *dir, const char *command, FILE *log, rec_summary *sum) {
  return rec_merge_as(dir, command, log, 0, sum);
}

int rec_merge_as(const char *dir, const char *command, FILE *log, int flags, rec_summary *sum) {
  merger m = {.dir = dir, .log = log};
  memset(sum, 0, sizeof *sum);
  phase_sum *ps = NULL;
  int rc = count_procs(dir, &m.nprocs);
  if (!rc && !(m.r = calloc((size_t)m.nprocs, sizeof *m.r))) rc = CDAG_NOMEM("ranks");
  sum->complete = 1;
  for (int r = 0; r < m.nprocs && !rc; r++) {
    rc = load_rank(&m, r);
    sum->complete &= m.r[r].finalized;
    if (!m.r[r].has_fixes) count_fixes(&m.r[r]);
    if (m.r[r].maxphase + 1 > sum->nphases && m.r[r].nops) sum->nphases = m.r[r].maxphase + 1;
  }
  if (!rc) say_missing(&m);
  if (!rc && m.nbad) {   /* a part that cannot be trusted: no phase file from it */
    sum->nphases = 0;
    rc = write_index(&m, command, sum, NULL, NULL);
    if (!rc)
      rc = cdag__error(CDAG_ERR_FORMAT, "%lld malformed line%s in the part files (first: %s); no phase written",
                       (long long)m.nbad, m.nbad == 1 ? "" : "s", m.bad[0]);
    merger_free(&m);
    return rc;
  }
  if (!rc) rc = number_comms(&m);
  if (!rc) rc = assign_tags(&m);
  if (!rc) sort_ops(&m);
  if (!rc && !sum->complete) rc = drop_interrupted(&m);
  if (!rc && sum->nphases == 1 && !(flags & REC_MERGE_WHOLE)) rc = find_phases(&m, &sum->nphases);
  if (!rc && m.cut) sort_ops(&m);
  if (!rc) rc = drop_fence_races(&m);
  if (!rc) rc = place_passive(&m, sum->nphases, !!(flags & REC_MERGE_NO_PASSIVE), &sum->passive);
  if (!rc) rc = computed_reads(&m, &sum->target_computes);
  if (!rc && sum->nphases && !(ps = calloc((size_t)sum->nphases, sizeof *ps))) rc = CDAG_NOMEM("phases");
  rec_distinct *dx = NULL;
  if (!rc && !(flags & REC_MERGE_FLAT) && !(dx = rec_distinct_new(dir, command, m.nprocs, !!(flags & REC_MERGE_FOLD_RANKS)))) rc = CDAG_NOMEM("distinct phases");
  for (int p = 0; p < sum->nphases && !rc; p++) {
    rc = match_phase(&m, p, sum, 0);
    if (!rc) rc = write_phase(&m, p, command, &ps[p], dx);
    sum->ops += ps[p].ops;
    sum->computes += ps[p].computes;
    sum->compute_ns = sum->compute_ns > UINT64_MAX - ps[p].ns ? UINT64_MAX : sum->compute_ns + ps[p].ns;
  }
  sum->nprocs = m.nprocs;
  sum->flat_phases = sum->nphases;
  sum->min_gap_ns = m.min_gap;
  sum->node_procs = m.node_procs;
  sum->node_cpus = m.node_cpus;
  for (int i = 0; i < m.noom; i++) sum->out_of_memory += m.oom[i].n;
  if (!rc) rc = write_index(&m, command, sum, ps, dx);
  if (dx) sum->nphases = (int)rec_distinct_count(dx);
  rec_distinct_free(dx);
  for (int p = sum->nphases; !rc; p++) {   /* an earlier merge's phase files beyond these go */
    char path[4096];
    snprintf(path, sizeof path, "%s/phase-%04d.cdag", dir, p);
    if (unlink(path)) break;
  }
  free(ps);
  merger_free(&m);
  return rc;
}

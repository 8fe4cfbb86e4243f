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
 *    into opaque writes (counted);
 *  - writes `phase-NNNN.cdag`: the communicators native collectives use, each rank's
 *    operations with labels where a `wait` names them (the format's compact labels: o and a
 *    base-62 number, and no indentation, since recordings are large), the packing areas
 *    as scratch. Every operation line comes from the format's one writer (ir_write_line),
 *    here or in the recorder, which wrote the collectives and local ops passed through.
 * Then `index.json` sums it up. A part file without `finalized` is from a process that
 * did not reach MPI_Finalize: what it holds is merged and the index says the run is
 * incomplete. Cost: O(n log n) for n recorded operations. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/format.h"
#include "match/match.h"
#include "record/record.h"

enum { K_SEND, K_RECV, K_WAIT, K_OTHER };

typedef struct {
  int phase;
  uint8_t kind, dropped, unmatched, labelled;
  uint32_t label;          /* its label's number, when a wait names it */
  int peer, tag, comm;     /* send/recv: world peer, tag, local comm id; collectives: comm id */
  uint64_t seq;
  char *text;              /* the operation as written, after its position */
} mop;

typedef struct { int id, n; int *members; int global; } mcomm;
typedef struct { int phase; char *text; } mline;
typedef struct { char name[160]; uint64_t n; } mcount;

typedef struct {
  char *file;              /* the part file's text, lines NUL-terminated in place */
  mop *ops; int64_t nops, cap;
  mcomm *comms; int ncomms, commcap;
  mline *scratch; int64_t nscratch, scratchcap;
  int discard_phase; uint64_t discard_seq;
  int finalized, maxphase;
  int declared;            /* phases the file started (`phase K` lines): 0..declared-1 */
  int64_t malformed;       /* lines that are none of the above */
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
  mcount *calls, *unsup; int ncalls, nunsup, callcap, unsupcap;
  mcount *why; int nwhy, whycap;   /* "CALL: reason" -> calls left out for it */
  mcount *oom; int noom, oomcap;   /* out_of_memory lines, summed over ranks by kind */
  uint64_t opaque_next;
  char (*waitlab)[IR_COMPACT_LABEL];  /* the labels of the wait line being written */
  const char **waitptr;
  int64_t waitcap;
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

static int parse_op(mrank *r, int phase, uint64_t seq, char *text) {
  if (base_grow((void **)&r->ops, r->nops, &r->cap, 1, sizeof *r->ops, "merger")) return CDAG_NOMEM("recorded operations");
  mop *o = &r->ops[r->nops++];
  memset(o, 0, sizeof *o);
  o->phase = phase;
  o->seq = seq;
  o->text = text;
  long long v = 0;
  int send = !strncmp(text, "send ", 5), recv = !strncmp(text, "recv ", 5);
  o->kind = send ? K_SEND : recv ? K_RECV : !strncmp(text, "wait ", 5) ? K_WAIT : K_OTHER;
  if (send || recv) {
    o->peer = field(text, send ? "to" : "from", &v) ? (int)v : -1;
    o->tag = field(text, "tag", &v) ? (int)v : 0;
  }
  o->comm = field(text, "comm", &v) ? (int)v : 0;
  if (phase > r->maxphase) r->maxphase = phase;
  return CDAG_OK;
}

static int parse_comm(mrank *r, char *p) {
  int id = (int)strtol(p, &p, 10), n = (int)strtol(p, &p, 10);
  int64_t cap = r->commcap;
  if (n <= 0 || base_grow((void **)&r->comms, r->ncomms, &cap, 1, sizeof *r->comms, "merger")) return CDAG_NOMEM("communicators");
  r->commcap = (int)cap;
  mcomm *c = &r->comms[r->ncomms++];
  c->id = id;
  c->n = n;
  c->global = -1;
  if (!(c->members = malloc((size_t)n * sizeof *c->members))) return CDAG_NOMEM("communicators");
  for (int i = 0; i < n; i++) c->members[i] = (int)strtol(p, &p, 10);
  return CDAG_OK;
}

static int parse_line(merger *m, mrank *r, char *l) {
  char name[64];
  unsigned long long a, b, c;
  int k;
  if (sscanf(l, "call %63s %llu", name, &a) == 2) return add_count(&m->calls, &m->ncalls, &m->callcap, name, a) ? CDAG_NOMEM("counts") : 0;
  int at = 0;
  if (sscanf(l, "unsupported_why %63s %llu %n", name, &a, &at) == 2 && at > 0) {
    char key[160];
    snprintf(key, sizeof key, "%s: %s", name, l + at);
    return add_count(&m->why, &m->nwhy, &m->whycap, key, a) ? CDAG_NOMEM("counts") : 0;
  }
  if (sscanf(l, "unsupported %63s %llu", name, &a) == 2)
    return add_count(&m->unsup, &m->nunsup, &m->unsupcap, name, a) ? CDAG_NOMEM("counts") : 0;
  if (sscanf(l, "out_of_memory %63s %llu", name, &a) == 2)
    return add_count(&m->oom, &m->noom, &m->oomcap, name, a) ? CDAG_NOMEM("counts") : 0;
  if (!strncmp(l, "comm ", 5)) return parse_comm(r, l + 5);
  if (!strcmp(l, "finalized")) { r->finalized = 1; return 0; }
  if (sscanf(l, "fixes %llu %llu %llu", &a, &b, &c) == 3) { r->fixes[0] = a; r->fixes[1] = b; r->fixes[2] = c; return 0; }
  if (sscanf(l, "discard %d %llu", &k, &a) == 2) { r->discard_phase = k; r->discard_seq = a; return 0; }
  if (sscanf(l, "%d drop %llu", &k, &a) == 2) {
    for (int64_t i = r->nops - 1; i >= 0; i--)
      if (r->ops[i].seq == a) { r->ops[i].dropped = 1; break; }
    return 0;
  }
  int off = 0;
  if (sscanf(l, "%d scratch %llx %llu", &k, &a, &b) == 3) {
    if (base_grow((void **)&r->scratch, r->nscratch, &r->scratchcap, 1, sizeof *r->scratch, "merger")) return CDAG_NOMEM("scratch");
    r->scratch[r->nscratch++] = (mline){k, strstr(l, "scratch") + 8};
    return 0;
  }
  if (sscanf(l, "phase %d", &k) == 1) {
    if (k == r->declared) r->declared++;
    return 0;
  }
  if (sscanf(l, "%d %llu %n", &k, &a, &off) == 2 && off > 0 && l[off] && k >= 0 && k < r->declared)
    return parse_op(r, k, a, l + off);
  if (strncmp(l, "end ", 4) && strncmp(l, "cdag-record-part", 16) && strncmp(l, "rank ", 5)) r->malformed++;
  return 0;
}

static int load_rank(merger *m, int rank) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rank-%d.part", m->dir, rank);
  mrank *r = &m->r[rank];
  r->discard_phase = -1;
  if (!(r->file = read_all(path))) {   /* it died before MPI_Init returned, or could not write */
    if (errno == ENOMEM) return cdag__error(CDAG_ERR_NOMEM, "%s: out of memory reading it", path);
    if (m->log) fprintf(m->log, "cdag record: %s: %s: process %d of %d left no recording\n", path, strerror(errno), rank, m->nprocs);
    return CDAG_OK;
  }
  int rc = 0;
  for (char *l = r->file, *e; l && *l && !rc; l = e ? e + 1 : NULL) {
    if ((e = strchr(l, '\n'))) *e = 0;
    else break;   /* the last line of a process that crashed may be cut short */
    rc = parse_line(m, r, l);
  }
  if (!r->finalized && m->log)
    fprintf(m->log, "cdag record: rank %d did not reach MPI_Finalize; its recording ends early\n", rank);
  if (r->malformed && m->log)
    fprintf(m->log, "cdag record: %s: %lld lines not understood, left out\n", path, (long long)r->malformed);
  return rc;
}

/* ---- communicators and tags ---- */

static int same_comm(const mcomm *a, const mcomm *b) {
  return a->id == b->id && a->n == b->n && !memcmp(a->members, b->members, (size_t)a->n * sizeof *a->members);
}

static int number_comms(merger *m) {
  int64_t cap = 0;
  for (int r = 0; r < m->nprocs; r++)
    for (int i = 0; i < m->r[r].ncomms; i++) {
      mcomm *c = &m->r[r].comms[i];
      for (int g = 0; g < m->nglobal && c->global < 0; g++)
        if (same_comm(c, m->global[g])) c->global = g + 1;
      if (c->global >= 0) continue;
      if (base_grow((void **)&m->global, m->nglobal, &cap, 1, sizeof *m->global, "merger")) return CDAG_NOMEM("communicators");
      m->global[m->nglobal++] = c;
      c->global = m->nglobal;
    }
  return CDAG_OK;
}

/* The graph's number of a rank's communicator id: 0 for MPI_COMM_WORLD, -1 unknown. */
static int global_comm(const mrank *r, int id) {
  if (id == 0) return 0;
  for (int i = 0; i < r->ncomms; i++)
    if (r->comms[i].id == id) return r->comms[i].global;
  return -1;
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
  if (m->ntags) qsort(m->tagkey, (size_t)m->ntags, sizeof *m->tagkey, cmp_u64);
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

static int kept(const mrank *r, const mop *o, int phase) {
  return o->phase == phase && !o->dropped && !(o->phase == r->discard_phase && o->seq < r->discard_seq);
}

typedef struct { mop **ops; rec_summary *sum; } unpaired;

static int mark_unpaired(void *ctx, int32_t s, int32_t r) {
  unpaired *x = ctx;
  if (s >= 0 && r >= 0) return 0;
  x->ops[s >= 0 ? s : r]->unmatched = 1;
  if (s >= 0) x->sum->unreceived++;
  else x->sum->unsent++;
  return 0;
}

/* Marks sends and receives of the phase that have no partner. O(n log n). */
static int match_phase(merger *m, int phase, rec_summary *sum) {
  int64_t n = 0;
  for (int r = 0; r < m->nprocs; r++)
    for (int64_t i = 0; i < m->r[r].nops; i++) {
      mop *o = &m->r[r].ops[i];
      n += kept(&m->r[r], o, phase) && (o->kind == K_SEND || o->kind == K_RECV);
    }
  if (n >= INT32_MAX) return cdag__error(CDAG_ERR_UNSUPPORTED, "phase %d: more than 2^31 messages", phase);
  mop **ops = malloc((size_t)(n + 1) * sizeof *ops);
  match_end *e = malloc((size_t)(n + 1) * sizeof *e), *tmp = malloc((size_t)(n + 1) * sizeof *tmp);
  int64_t *start = calloc((size_t)m->nprocs + 2, sizeof *start), *at = malloc((size_t)(n + 2) * sizeof *at);
  int32_t *dst = malloc((size_t)(n + 1) * sizeof *dst);   /* receiving rank; nprocs: a peer out of range */
  int rc = ops && e && tmp && start && at && dst ? CDAG_OK : CDAG_NOMEM("matching");
  unpaired x = {ops, sum};
  int64_t k = 0;
  for (int r = 0; r < m->nprocs && !rc; r++) {   /* each rank's messages in recorded order */
    int64_t first = k;
    for (int64_t i = 0; i < m->r[r].nops; i++) {
      mop *o = &m->r[r].ops[i];
      if (kept(&m->r[r], o, phase) && (o->kind == K_SEND || o->kind == K_RECV)) ops[k++] = o;
    }
    if (k > first) qsort(ops + first, (size_t)(k - first), sizeof *ops, cmp_seq);
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
  return rc;
}

/* ---- writing ---- */

static mop *find_seq(mop **ops, int64_t n, uint64_t seq) {
  int64_t lo = 0, hi = n - 1;
  while (lo <= hi) {
    int64_t mid = (lo + hi) / 2;
    if (ops[mid]->seq == seq) return ops[mid];
    if (ops[mid]->seq < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
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

/* A send or receive as the graph file says it: world peer, the graph's tag, no comm. */
static int write_message(FILE *f, merger *m, const mrank *r, const mop *o) {
  long long bytes = strtoll(o->text + 5, NULL, 10), addr = 0;
  field(o->text, "addr", &addr);
  char lab[IR_COMPACT_LABEL];
  ir_line l = {.kind = o->kind == K_SEND ? IR_SEND : IR_RECV, .bytes = (uint64_t)bytes, .peer = o->peer,
               .tag = graph_tag(m, r, o), .addr = (uint64_t)addr, .seg = -1, .cpu = -1, .nic = -1, .comm = -1,
               .wait = strstr(o->text, " wait") != NULL};
  if (o->kind == K_RECV && o->unmatched) {   /* its send is not in the phase: opaque bytes */
    l.kind = IR_COPY;
    l.addr2 = REC_OPAQUE_BASE + (1ull << 44) + m->opaque_next;
    m->opaque_next += ((uint64_t)bytes + 63) & ~63ull;
  }
  return ir_write_line(f, label_of(o, lab), &l);
}

/* Any other operation: as the recorder wrote it with the format's writer, its communicator
   renumbered. */
static void write_other(FILE *f, const mrank *r, const mop *o) {
  char lab[IR_COMPACT_LABEL];
  if (label_of(o, lab)) fprintf(f, "%s: ", lab);
  const char *c = strstr(o->text, " comm ");
  if (!c) { fprintf(f, "%s\n", o->text); return; }
  fprintf(f, "%.*s comm %d%s\n", (int)(c - o->text), o->text, global_comm(r, o->comm), strchr(c + 6, ' ') ? strchr(c + 6, ' ') : "");
}

static int write_rank(FILE *f, merger *m, int rank, int phase, uint64_t *nops) {
  mrank *r = &m->r[rank];
  int64_t n = 0;
  for (int64_t i = 0; i < r->nops; i++) n += kept(r, &r->ops[i], phase);
  if (!n) return CDAG_OK;
  mop **ops = malloc((size_t)n * sizeof *ops);
  if (!ops) return CDAG_NOMEM("operations");
  n = 0;
  for (int64_t i = 0; i < r->nops; i++)
    if (kept(r, &r->ops[i], phase)) ops[n++] = &r->ops[i];
  qsort(ops, (size_t)n, sizeof *ops, cmp_seq);
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
      else *nops += (uint64_t)w;
    } else if (o->kind == K_SEND && o->unmatched) {
      continue;
    } else {
      if (o->kind == K_OTHER) write_other(f, r, o);
      else rc = write_message(f, m, r, o);
      (*nops)++;
    }
  }
  for (int64_t i = 0; i < r->nscratch; i++)
    if (r->scratch[i].phase == phase) fprintf(f, "scratch %s\n", r->scratch[i].text);
  fprintf(f, "}\n");
  free(ops);
  return rc;
}

/* The communicators the phase's native collectives use. */
static void write_comms(FILE *f, merger *m, int phase) {
  for (int g = 0; g < m->nglobal; g++) {
    int used = 0;
    for (int r = 0; r < m->nprocs && !used; r++)
      for (int64_t i = 0; i < m->r[r].nops && !used; i++) {
        mop *o = &m->r[r].ops[i];
        used = o->kind == K_OTHER && kept(&m->r[r], o, phase) && o->comm && global_comm(&m->r[r], o->comm) == g + 1;
      }
    if (!used) continue;
    fprintf(f, "comm %d ranks", g + 1);
    for (int i = 0; i < m->global[g]->n; i++) fprintf(f, " %d", m->global[g]->members[i]);
    fprintf(f, "\n");
  }
}

static int write_phase(merger *m, int phase, const char *command, uint64_t *nops) {
  char path[4096];
  snprintf(path, sizeof path, "%s/phase-%04d.cdag", m->dir, phase);
  FILE *f = fopen(path, "w");
  if (!f) return cdag__error(errno == ENOMEM ? CDAG_ERR_NOMEM : CDAG_ERR_IO, "%s: %s", path,
                             errno == ENOMEM ? "out of memory opening it" : strerror(errno));
  fprintf(f, "// recorded by cdag record: phase %d of %d processes%s%s\n", phase, m->nprocs, command ? " running: " : "",
          command ? command : "");
  fprintf(f, "num_ranks %d\n", m->nprocs);
  write_comms(f, m, phase);
  int rc = CDAG_OK;
  for (int r = 0; r < m->nprocs && !rc; r++) rc = write_rank(f, m, r, phase, nops);
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

static int write_index(merger *m, const char *command, const rec_summary *sum, const uint64_t *phase_ops) {
  char path[4096];
  snprintf(path, sizeof path, "%s/index.json", m->dir);
  FILE *f = fopen(path, "w");
  if (!f) return cdag__error(errno == ENOMEM ? CDAG_ERR_NOMEM : CDAG_ERR_IO, "%s: %s", path,
                             errno == ENOMEM ? "out of memory opening it" : strerror(errno));
  uint64_t fixes[3] = {0, 0, 0};
  for (int r = 0; r < m->nprocs; r++)
    for (int k = 0; k < 3; k++) fixes[k] += m->r[r].fixes[k];
  fprintf(f, "{\"cdag_recording\": 1, \"nprocs\": %d,\n  \"command\": ", m->nprocs);
  if (command) ir_json_string(f, command);
  else fprintf(f, "null");
  fprintf(f, ",\n  \"complete\": %s,\n  \"phases\": [", sum->complete ? "true" : "false");
  for (int p = 0; p < sum->nphases; p++)
    fprintf(f, "%s{\"file\": \"phase-%04d.cdag\", \"ops\": %" PRIu64 "}", p ? ", " : "", p, phase_ops[p]);
  fprintf(f, "]");
  json_counts(f, "calls", m->calls, m->ncalls);
  json_counts(f, "unsupported", m->unsup, m->nunsup);
  json_counts(f, "unsupported_why", m->why, m->nwhy);
  json_counts(f, "out_of_memory", m->oom, m->noom);
  fprintf(f, ",\n  \"unreceived\": %" PRIu64 ", \"unsent\": %" PRIu64 ",\n", sum->unreceived, sum->unsent);
  fprintf(f, "  \"local\": {\"opaque\": %" PRIu64 ", \"reduce\": %" PRIu64 ", \"copy\": %" PRIu64 "}}\n",
          fixes[REC_FIX_OPAQUE], fixes[REC_FIX_REDUCE], fixes[REC_FIX_COPY]);
  return fclose(f) ? cdag__error(CDAG_ERR_IO, "%s: %s", path, strerror(errno)) : CDAG_OK;
}

/* The number of processes, from rank 0's part. */
static int count_procs(const char *dir, int *nprocs) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rank-0.part", dir);
  FILE *f = fopen(path, "r");
  if (!f && errno == ENOMEM) return cdag__error(CDAG_ERR_NOMEM, "%s: out of memory opening it", path);
  if (!f) return cdag__error(CDAG_ERR_IO, "%s: %s (no process was recorded: did the command run an MPI program?)",
                             path, strerror(errno));
  int rank = -1, n = 0;
  int ok = fscanf(f, "cdag-record-part 1 rank %d nprocs %d", &rank, &n) == 2 && rank == 0 && n > 0;
  fclose(f);
  if (!ok) return cdag__error(CDAG_ERR_FORMAT, "%s: not a part file of cdag record", path);
  *nprocs = n;
  return CDAG_OK;
}

static void merger_free(merger *m) {
  for (int r = 0; m->r && r < m->nprocs; r++) {
    for (int i = 0; i < m->r[r].ncomms; i++) free(m->r[r].comms[i].members);
    free(m->r[r].comms);
    free(m->r[r].ops);
    free(m->r[r].scratch);
    free(m->r[r].file);
  }
  free(m->r);
  free(m->global);
  free(m->tagkey);
  free(m->calls);
  free(m->unsup);
  free(m->why);
  free(m->waitlab);
  free(m->waitptr);
  free(m->oom);
}

int rec_merge(const char *dir, const char *command, FILE *log, rec_summary *sum) {
  merger m = {.dir = dir, .log = log};
  memset(sum, 0, sizeof *sum);
  uint64_t *phase_ops = NULL;
  int rc = count_procs(dir, &m.nprocs);
  if (!rc && !(m.r = calloc((size_t)m.nprocs, sizeof *m.r))) rc = CDAG_NOMEM("ranks");
  sum->complete = 1;
  for (int r = 0; r < m.nprocs && !rc; r++) {
    rc = load_rank(&m, r);
    sum->complete &= m.r[r].finalized;
    if (m.r[r].maxphase + 1 > sum->nphases && m.r[r].nops) sum->nphases = m.r[r].maxphase + 1;
  }
  if (!rc) rc = number_comms(&m);
  if (!rc) rc = assign_tags(&m);
  if (!rc && sum->nphases && !(phase_ops = calloc((size_t)sum->nphases, sizeof *phase_ops))) rc = CDAG_NOMEM("phases");
  for (int p = 0; p < sum->nphases && !rc; p++) {
    rc = match_phase(&m, p, sum);
    if (!rc) rc = write_phase(&m, p, command, &phase_ops[p]);
    sum->ops += phase_ops ? phase_ops[p] : 0;
  }
  sum->nprocs = m.nprocs;
  for (int i = 0; i < m.noom; i++) sum->out_of_memory += m.oom[i].n;
  if (!rc) rc = write_index(&m, command, sum, phase_ops);
  free(phase_ops);
  merger_free(&m);
  return rc;
}

/* cdag — src/record/pmpi.c: libcdag-record, the PMPI layer that records an MPI program: its
 * state and services, initialisation and phases (the wrappers of each call family are in
 * pmpi_*.c; pmpi.h says what they share).
 *
 * Every wrapper passes its call on to PMPI unchanged and, while a phase is recorded, writes
 * what the call did to the process's part file (record.h gives the lines):
 *  - sends (every mode) when issued, receives when complete (a wildcard's source and tag,
 *    and the bytes that arrived, come from the status), both in MPI_COMM_WORLD ranks, with
 *    the communicator's agreed id so the merger keeps tags of communicators apart;
 *  - blocking calls carry `wait`; Wait/Test and their -all/-any/-some forms write the
 *    completions they observed as one `wait` line; persistent requests record an operation
 *    at every Start; matched probes carry their communicator to Mrecv/Imrecv; a cancelled
 *    operation is dropped;
 *  - the collectives cdag knows (ir/coll_kinds.h's native kinds: the blocking ones, the v-
 *    and w-forms, reduce_scatter, scan, exscan, the neighbourhood collectives, and the
 *    nonblocking forms of the regular ones; reductions on contiguous predefined types) as
 *    collective operations; other calls are passed on and counted as unsupported;
 *  - sent bytes go through the shadow (shadow.c), which adds the local operations PMPI
 *    cannot see; received bytes are given to it;
 *  - the time from the return of one intercepted call to the entry of the next
 *    (CLOCK_MONOTONIC, summed over calls that record nothing) goes to the shadow with the
 *    next position taken: the cost of the computation written there.
 * A derived datatype is decoded once (mpi_glue's decoder, the executor's too) into the
 * byte ranges it touches; a message of several ranges is packed through a scratch area
 * with local copies, so one message stays one message: runs of one length at one stride
 * (a vector's blocks, a resized type's elements) are one strided copy. Types and ops are named by
 * mpi_glue's tables; a reduction the loader would refuse (lxor on float) or cdag has no
 * type for is passed on, counted as unsupported with its reason, and not written.
 * A communicator's id is agreed by its members when it is created (one PMPI_Allreduce on
 * the new communicator), so every member names it alike.
 * The recorder's state is per process (one interposed MPI library per process), reached
 * through one pointer; it is not thread-safe, so a process that gets MPI_THREAD_MULTIPLE is
 * not recorded (index.json counts it as unsupported) rather than recorded wrongly.
 * Lines go straight into a shared mapping of the part file, which the kernel keeps when
 * the process dies however it dies (even SIGKILL from mpiexec after another rank crashed):
 * a crash leaves every line written so far, then zero bytes. Counts (calls, unsupported calls,
 * what memory lost) are lines kept current in place (tally), so a crash leaves them too.
 * Out of memory never stops the program and never goes unsaid: what could not be kept is
 * counted by kind (oom_names) and written as `out_of_memory KIND N` lines, which index.json
 * sums up; the first time, the process says so on stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/settings.h"
#include "record/pmpi.h"

#define X_NAME(n) "MPI_" #n,
#define X_KIND_NAME(ID, NAME, MPI, ...) "MPI_" #MPI,
const char *const call_names[NCALLS] = {REC_P2P_CALLS(X_NAME) CDAG_COLL_KINDS(X_KIND_NAME) REC_NBCOLL_CALLS(X_NAME)
                                        REC_OTHER_CALLS(X_NAME) REC_RMA_CALLS(X_NAME) REC_PCOLL_CALLS(X_NAME)
                                        REC_MPI4_CALLS(X_NAME)};
const char *const oom_names[NOOM] = {"calls", "communicators", "datatypes", "requests", "tickets"};
recorder *R;


/* ---- the part file ---- */

/* Maps `size` bytes of the part file; 0 or -1 (the recording stops, the program goes on). */
static int map_file(size_t size) {
  /* blocks reserved now: a full disk is an error here, not a SIGBUS at a later write */
  int e = posix_fallocate(R->fd, (off_t)R->size, (off_t)(size - R->size));
  if (e) {   /* it returns its error, errno is not set (a stale EEXIST read "File exists") */
    errno = e;
    return -1;
  }
  char *m = R->map ? mremap(R->map, R->size, size, MREMAP_MAYMOVE) : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, R->fd, 0);
  if (m == MAP_FAILED) return -1;
  R->map = m;
  R->size = size;
  return 0;
}

static void stop_recording(void) {
  if (R->map) munmap(R->map, R->size);
  if (ftruncate(R->fd, (off_t)R->len)) {}
  close(R->fd);
  R->fd = -1;
  R->map = NULL;
  R->active = 0;
  rec_mem_watch(0);
}

/* At least `need` bytes free in the mapping; 0, or -1 when the recording had to stop. */
static int room(size_t need) {
  size_t size = R->size;
  while (size - R->len < need) size *= 2;
  if (size != R->size && map_file(size)) {
    fprintf(stderr, "cdag record: rank %d: the part file cannot grow: %s; recording stops\n", R->rank, strerror(errno));
    stop_recording();
    return -1;
  }
  return 0;
}

void out(const char *fmt, ...) {
  if (!R || R->fd < 0) return;
  if (room(1024)) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(R->map + R->len, R->size - R->len, fmt, ap);
  va_end(ap);
  if (n > 0 && (size_t)n < R->size - R->len) R->len += (size_t)n;
}

/* An operation at position seq of phase `phase`: graph-file syntax by the format's one
   writer (ir_format_line), after the position. */
/* v in decimal, then c, at the end of the part file (its room checked). */
static void put_dec(uint64_t v, char c) {
  char d[24];
  int n = 0;
  do d[n++] = (char)('0' + v % 10); while ((v /= 10));
  while (n) R->map[R->len++] = d[--n];
  R->map[R->len++] = c;
}

void out_op(int phase, uint64_t seq, const ir_line *l) {
  if (!R || R->fd < 0 || room(1024)) return;
  if (phase < 0) R->map[R->len++] = '-';
  put_dec(phase < 0 ? 0u - (uint64_t)phase : (uint64_t)phase, ' ');
  put_dec(seq, ' ');
  size_t n = ir_format_line(R->map + R->len, R->size - R->len, NULL, l);   /* formatted once where it fits */
  if (n + 2 > R->size - R->len) {   /* a long line (a collective's lists): room, then again */
    if (room(n + 2)) return;
    ir_format_line(R->map + R->len, R->size - R->len, NULL, l);
  }
  R->len += n;
  R->map[R->len++] = '\n';
}

/* A line of kind `kind` with nothing set: fill in what the op has. */
ir_line line_of(int kind) { return (ir_line){.kind = kind, .seg = -1, .cpu = -1, .nic = -1, .comm = -1}; }

static void out_copy(int phase, uint64_t seq, uint64_t bytes, uint64_t from, uint64_t to) {
  ir_line l = line_of(IR_COPY);
  l.bytes = bytes;
  l.addr2 = from;
  l.addr = to;
  out_op(phase, seq, &l);
}

/* A count kept exact in the part file whenever the process dies: its line `WHAT NAME N` is
   written the first time, N 20 digits wide, and each later count adds one to those digits in
   the mapping (*at: the offset of the last digit, 0 before the line is written), the cost of
   an increment, where counts written at MPI_Finalize were lost with a crashed process. A
   carry that SIGKILL interrupts leaves the count low, never malformed. */
static void tally(size_t *at, const char *what, const char *name) {
  if (!R || R->fd < 0) return;
  if (*at) {
    char *d = R->map + *at;
    while (*d == '9') *d-- = '0';
    ++*d;
    return;
  }
  size_t before = R->len;
  out("%s %s %020d\n", what, name, 1);
  if (R->len > before) *at = R->len - 2;
}

/* Something lost to memory, counted. */
static void oom_count(int kind) {
  R->oom[kind]++;
  tally(&R->oom_at[kind], "out_of_memory", oom_names[kind]);
}

/* Out of memory while recording: counted (and said once), never silent. */
void nomem(int kind) {
  uint64_t total = 0;
  for (int i = 0; i < NOOM; i++) total += R->oom[i];
  if (!total)
    fprintf(stderr, "cdag record: rank %d: out of memory (%s); what is lost is counted in index.json\n", R->rank,
            oom_names[kind]);
  oom_count(kind);
  R->oom_now = 1;
}

/* What the shadow lost to memory since it was last written (at each phase end, and at
   MPI_Finalize): a process that dies lacks only what its last phase lost. */
static void say_shadow_oom(void) {
  static const char *const kind[2] = {"shadow_content", "shadow_ranges"};
  uint64_t lost[2];
  rec_shadow_oom(R->sh, lost);
  for (int k = 0; k < 2; k++)
    if (lost[k] > R->lost_said[k]) {
      out("out_of_memory %s %llu\n", kind[k], (unsigned long long)(lost[k] - R->lost_said[k]));
      R->lost_said[k] = lost[k];
    }
}

/* ---- communicators ---- */

static rcomm *comm_of(MPI_Comm c) {
  Word_t *v;
  JLG(v, R->comms, (Word_t)c);
  return v ? (rcomm *)*v : NULL;
}

/* The world ranks of group g's n members, in group order; NULL out of memory. */
static int *world_ranks(MPI_Group g, int n) {
  MPI_Group wg;
  int *w = malloc((size_t)(n ? n : 1) * sizeof *w), *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
  if (w && idx) {
    for (int i = 0; i < n; i++) idx[i] = i;
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, n, idx, wg, w);
    PMPI_Group_free(&wg);
  } else {
    free(w), w = NULL;
  }
  free(idx);
  return w;
}

static int by_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* Declares communicator id to the merger: its members' world ranks (an intercommunicator's
   two groups, sorted: both groups declare it alike). */
static void comm_declare(MPI_Comm c, const rcomm *x) {
  if (x->id == 0 || !x->world) return;
  int nl = 0, n = x->n;
  int *m = NULL;
  if (x->inter) {
    MPI_Group lg;
    PMPI_Comm_size(c, &nl);
    PMPI_Comm_group(c, &lg);
    int *local = world_ranks(lg, nl);
    PMPI_Group_free(&lg);
    if (local && (m = malloc((size_t)(nl + n) * sizeof *m))) {
      memcpy(m, local, (size_t)nl * sizeof *m);
      memcpy(m + nl, x->world, (size_t)n * sizeof *m);
      qsort(m, (size_t)(nl + n), sizeof *m, by_int);
    }
    free(local);
    if (!m) { nomem(OOM_COMMS); return; }
    n += nl;
  }
  out("comm %d %d", x->id, n);
  for (int i = 0; i < n; i++) out(" %d", m ? m[i] : x->world[i]);
  out("\n");
  free(m);
}

/* c as communicator id of n members (world: their world ranks, taken; NULL: lost to memory,
   and its calls count as such), declared to the merger; `like` has c's local group (an
   intercommunicator's other group is in world). */
static rcomm *comm_put(MPI_Comm c, MPI_Comm like, int id, int n, int inter, int *world) {
  rcomm *x = calloc(1, sizeof *x);
  if (!x) return free(world), nomem(OOM_COMMS), NULL;
  *x = (rcomm){.id = id, .n = n, .inter = inter, .refs = 1 /* the map's: comm_drop */, .world = world};
  if (!x->world) nomem(OOM_COMMS);
  x->oom = !x->world;
  Word_t *v;
  JLI(v, R->comms, (Word_t)c);
  if (v == PJERR) {
    nomem(OOM_COMMS);
    free(x->world);
    free(x);
    return NULL;
  }
  *v = (Word_t)x;
  comm_declare(like, x);
  return x;
}

/* c with its agreed id: world holds the world ranks of the ranks a message names (an
   intercommunicator's remote group). */
static rcomm *comm_add(MPI_Comm c, int id) {
  int inter = 0, n = 0;
  MPI_Group g;
  PMPI_Comm_test_inter(c, &inter);
  if (inter) PMPI_Comm_remote_size(c, &n), PMPI_Comm_remote_group(c, &g);
  else PMPI_Comm_size(c, &n), PMPI_Comm_group(c, &g);
  int *world = world_ranks(g, n);
  PMPI_Group_free(&g);
  return comm_put(c, c, id, n, inter, world);
}

void comm_drop(MPI_Comm c) {
  rcomm *x = comm_of(c);
  int rc;
  if (!x) return;
  JLD(rc, R->comms, (Word_t)c);
  if (rc == JERR) {   /* the entry stays, valid, for comm_add to replace */
    nomem(OOM_COMMS);
    return;
  }
  comm_release(x);   /* pending operations may hold it still */
}

int comm_known(MPI_Comm c) { return R && comm_of(c) != NULL; }

rcomm *comm_hold(MPI_Comm c) {
  rcomm *x = R ? comm_of(c) : NULL;
  if (x) x->refs++;
  return x;
}

void comm_release(rcomm *x) {
  if (!x || --x->refs) return;
  free(x->world);
  free(x);
}

/* A communicator the program just created: its members agree on an id. */
void comm_created(MPI_Comm c) {
  if (!R || c == MPI_COMM_NULL) return;
  int inter = 0, id = R->next_comm_id;
  PMPI_Comm_test_inter(c, &inter);
  if (inter) {   /* both groups agree, over the intercommunicator merged for the moment */
    MPI_Comm both;
    PMPI_Intercomm_merge(c, 0, &both);
    PMPI_Allreduce(&R->next_comm_id, &id, 1, MPI_INT, MPI_MAX, both);
    PMPI_Comm_free(&both);
  } else {
    PMPI_Allreduce(&R->next_comm_id, &id, 1, MPI_INT, MPI_MAX, c);
  }
  R->next_comm_id = id + 1;
  comm_drop(c);   /* a handle MPI reused */
  comm_add(c, id);
}

/* The communicator's world ranks, if it can be recorded. */
rcomm *usable(MPI_Comm c, int call) {
  rcomm *x = comm_of(c);
  if (x && x->oom) { oom_count(OOM_CALLS); return NULL; }
  if (!x || !x->world) {
    unsupported_because(call, "a communicator created by a call the recorder does not know");
    return NULL;
  }
  return x;
}

/* usable, of a pending operation's held communicator when it has one. */
static rcomm *usable_held(rcomm *xc, MPI_Comm c, int call) {
  if (!xc) return usable(c, call);
  if (xc->oom) { oom_count(OOM_CALLS); return NULL; }
  return xc;
}

int world_of(const rcomm *x, int r) { return r >= 0 && r < x->n ? x->world[r] : -1; }

/* A call not recorded, counted when it happens (not at MPI_Finalize), so that the counts of
   a process that crashes are in its part. */
void unsupported(int call) { tally(&R->unsup_at[call], "unsupported", call_names[call]); }

/* The same, with its reason. */
void unsupported_because(int call, const char *text) {
  char t[96];
  snprintf(t, sizeof t, "%s", text);
  for (char *p = t; *p; p++)   /* one line of the part file */
    if ((unsigned char)*p < 0x20) *p = ' ';
  unsupported(call);
  out("unsupported_why %s 1 %s\n", call_names[call], t);
}

#if MPI_VERSION >= 4
int count_fits(MPI_Count n, int call, int init) {
  if (n >= 0 && n <= INT32_MAX) return 1;
  if (init ? R && R->fd >= 0 : recording()) unsupported_because(call, "a count beyond 2^31 - 1 elements: not recorded");
  return 0;
}
#endif

/* A call not recorded: for lack of memory (counted as such), or unsupported, with the
   reason a layout gave if it gave one. */
void not_recorded(int call) {
  if (R->oom_now) oom_count(OOM_CALLS);
  else if (R->layout_why[0]) unsupported_because(call, R->layout_why);
  else unsupported(call);
  R->layout_why[0] = 0;
}

/* ---- datatypes ---- */

void type_release(held_type *x) {
  if (x && --x->refs == 0) {
    mpig_flat_free(&x->f);
    free(x);
  }
}

/* The decoded datatype t, cached per handle until MPI_Type_free; NULL if it cannot be
   (unsupported, or out of memory: counted), with the reason in R->layout_why. */
static held_type *type_of(MPI_Datatype t) {
  Word_t *v;
  JLG(v, R->types, (Word_t)t);
  if (v && *v) return (held_type *)*v;
  held_type *x = calloc(1, sizeof *x);
  if (!x) return nomem(OOM_TYPES), NULL;
  int rc = mpig_flatten(t, &x->f);
  if (rc) {
    if (rc == CDAG_ERR_NOMEM) nomem(OOM_TYPES);
    snprintf(R->layout_why, sizeof R->layout_why, "%s", cdag__error_text());
    free(x);
    return NULL;
  }
  x->refs = 1;
  JLI(v, R->types, (Word_t)t);
  if (v == PJERR) {
    nomem(OOM_TYPES);
    type_release(x);
    return NULL;
  }
  *v = (Word_t)x;
  return x;
}

/* t decoded and held for a later layout (type_release); NULL as type_of. */
held_type *type_hold(MPI_Datatype t) {
  R->layout_why[0] = 0;
  held_type *x = type_of(t);
  if (x) x->refs++;
  return x;
}

/* Ranges of `count` elements at buf, the first `limit` bytes only. A message's ranges are
   bounded by REC_MAX_RANGES (their memory); its copies, by the positions before a call. */
enum { REC_MAX_RANGES = 1 << 22, REC_MAX_COPIES = REC_SEQ_STEP / 4 - 1 };

int ranges_add(ranges *r, uint64_t a, uint64_t l) {
  if (l == 0) return 0;
  if (r->n && r->a[r->n - 1] + r->l[r->n - 1] == a) { r->l[r->n - 1] += l; return 0; }
  if (r->n >= REC_MAX_RANGES) return -1;
  if (r->n == r->cap) {
    int64_t c = r->cap ? 2 * r->cap : 8;
    uint64_t *na = realloc(r->a, (size_t)c * 8), *nl = na ? realloc(r->l, (size_t)c * 8) : NULL;
    if (na) r->a = na;
    if (!nl) return nomem(OOM_CALLS), -1;
    r->l = nl;
    r->cap = c;
  }
  r->a[r->n] = a;
  r->l[r->n++] = l;
  return 0;
}

/* The distance from range i to range j, signed: blocks may run backwards (a datatype of
   negative stride). */
static int64_t dist(const ranges *r, int64_t i, int64_t j) { return (int64_t)(r->a[j] - r->a[i]); }
static uint64_t mag(int64_t d) { return d < 0 ? 0 - (uint64_t)d : (uint64_t)d; }

/* The ranges r[i ..] of one length at one stride, either way, at least the length: their
   number, the blocks of one strided copy. */
static int64_t run_at(const ranges *r, int64_t i) {
  if (i + 1 >= r->n || r->l[i + 1] != r->l[i] || mag(dist(r, i, i + 1)) < r->l[i]) return 1;
  int64_t d = dist(r, i, i + 1), j = i + 1;
  while (j + 1 < r->n && r->l[j + 1] == r->l[i] && dist(r, j, j + 1) == d) j++;
  return j - i + 1;
}

/* The lowest byte of run r[i .. i + m) (a run_at) and its span to the end of the highest. */
static uint64_t run_hull(const ranges *r, int64_t i, int64_t m, uint64_t *span) {
  uint64_t lo = r->a[i] < r->a[i + m - 1] ? r->a[i] : r->a[i + m - 1];
  uint64_t hi = r->a[i] < r->a[i + m - 1] ? r->a[i + m - 1] : r->a[i];
  *span = hi - lo + r->l[i];
  return lo;
}

/* The copies that pack ranges r[i ..]: their first *period ranges repeated K times (returned),
   range j of each repeat the same length as in the one before and D bytes after it (D at
   least every length, either way), so that range j of every repeat is one strided copy of K blocks: a
   vector of a struct, of an indexed type, of a vector (a datatype nested twice) packs with
   as many copies as the inner type has ranges, not one per range. Periods up to
   REC_MAX_PERIOD are tried, O(REC_MAX_PERIOD) per range; the one covering the most ranges
   per copy wins, period 1 (run_at) on ties; period 1, K 1 when nothing repeats. */
enum { REC_MAX_PERIOD = 16 };
static int64_t repeats_at(const ranges *r, int64_t i, int64_t p) {
  if (i + p >= r->n) return 1;
  int64_t d = dist(r, i, i + p), j = i;
  while (j + p < r->n && r->l[j + p] == r->l[j] && dist(r, j, j + p) == d) j++;
  int64_t k = (j - i + p) / p;
  if (k < 2) return 1;   /* most tries end at the first step: before the lengths, which cost p */
  for (int64_t m = i; m < i + p; m++)
    if (r->l[m] > mag(d)) return 1;
  return k;
}

/* A period p shorter than the run of period 1 at i (m ranges) never wins: its repeats match
   inside the run and break where the run does (range i + m is not p strides after i + m - p),
   covering at most m - p ranges past its first period. So periods from m on are tried (a
   vector of vectors repeats a run of m): a long vector's blocks try none. */
static int64_t period_at(const ranges *r, int64_t i, int64_t *period) {
  int64_t best = run_at(r, i);
  *period = 1;
  for (int64_t p = best < 2 ? 2 : best; p <= REC_MAX_PERIOD && i + p < r->n; p++) {
    int64_t k = repeats_at(r, i, p);
    if (k >= 2 && k * p - p > best * *period - *period) {
      best = k;
      *period = p;
    }
  }
  return best;
}

/* The copies that pack ranges r[i ..], one group of them: K repeats of a period of P ranges
   (period_at) when they repeat REC_MIN_REPEATS times at least (a strided copy's line costs
   what a dozen listed steps do); else, when the ranges of
   r[i]'s length that follow it repeat no more, all of them up to the next that does, as one
   copy of blocks at listed addresses (*listed 1, K blocks, P 1): an indexed datatype of
   irregular displacements packs with a copy per run of one block length, not per block.
   Returns the ranges the group covers. O(n * REC_MAX_PERIOD) for a message of n ranges. */
enum { REC_MIN_REPEATS = 16 };
static int64_t group_at(const ranges *r, int64_t i, int64_t *k, int64_t *p, int *listed) {
  int64_t q, j = i + 1;
  *k = period_at(r, i, p);
  *listed = 0;
  if (*k >= REC_MIN_REPEATS) return *k * *p;
  while (j < r->n && r->l[j] == r->l[i] && period_at(r, j, &q) < REC_MIN_REPEATS) j++;
  if (j - i < 2) return *k * *p;
  *k = j - i, *p = 1, *listed = 1;
  return *k;
}

typedef struct { ranges *r; uint64_t base; } layout_ctx;
static int layout_run(void *ctx, int64_t off, uint64_t len) {
  layout_ctx *x = ctx;
  return ranges_add(x->r, x->base + (uint64_t)off, len);
}

/* Ranges of `count` elements at buf, the first `limit` bytes only, of datatype t or, when
   given, of its decoding held since the operation was posted (t may be freed since). */
int layout(const void *buf, int count, MPI_Datatype t, const held_type *held, uint64_t limit, ranges *r) {
  return layout_ranges(buf, count, t, held, limit, r) || ranges_copies(r);
}

int layout_ranges(const void *buf, int count, MPI_Datatype t, const held_type *held, uint64_t limit, ranges *r) {
  r->n = 0;
  R->layout_why[0] = 0;
  const held_type *x = held ? held : type_of(t);
  if (!x) return -1;
  layout_ctx c = {r, (uint64_t)(uintptr_t)buf};
  if (count > 0 && limit && mpig_runs(&x->f, (uint64_t)count, limit, layout_run, &c)) {
    snprintf(R->layout_why, sizeof R->layout_why, "a message of more than %d separate byte ranges", REC_MAX_RANGES);
    return -1;
  }
  return 0;
}

int ranges_copies(ranges *r) {
  r->ncopies = 0;
  int sparse = 0;
  for (int64_t i = 0, m; i < r->n; i += m) {
    uint64_t span;
    m = run_at(r, i);
    run_hull(r, i, m, &span);
    sparse |= m > 1 && span > 8 * r->l[i] * (uint64_t)m;
  }
  for (int64_t i = 0, k, p; i < r->n; r->ncopies += p) {
    int listed;
    i += group_at(r, i, &k, &p, &listed);
  }
  if (r->n > 1 && r->ncopies > REC_MAX_COPIES) {
    snprintf(R->layout_why, sizeof R->layout_why, "a message packed by more than %d copies (runs of one length at "
             "one stride are one)", REC_MAX_COPIES);
    return -1;
  }
  if (r->n > REC_MAX_COPIES && sparse) {   /* check_sent would check its runs' hulls */
    snprintf(R->layout_why, sizeof R->layout_why, "a message of more than %d byte ranges whose runs span more than "
             "8 times their bytes", REC_MAX_COPIES);
    return -1;
  }
  return 0;
}

MPI_Aint type_extent(MPI_Datatype t) {
  MPI_Aint lb = 0, ext = 0;
  PMPI_Type_get_extent(t, &lb, &ext);
  return ext;
}

uint64_t type_bytes(int count, MPI_Datatype t) {
  MPI_Count size = 0;
  PMPI_Type_size_x(t, &size);
  return count > 0 && size > 0 ? (uint64_t)count * (uint64_t)size : 0;
}

/* The format name of predefined datatype t (mpi_glue's table), NULL if cdag has none. */
const char *type_name(MPI_Datatype t) { return ir_type_name(mpig_type_of(t)); }

/* ---- recording ---- */

int recording(void) { return R && R->active && R->fd >= 0; }

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void on_fix(void *ctx, const rec_fix *f) {
  int phase = *(int *)ctx;
  if (f->kind == REC_FIX_COMPUTE) {   /* PMPI cannot see what it read: all */
    ir_line l = line_of(IR_CALC);
    l.bytes = f->cost;
    l.rlen = IR_READS_ALL;
    l.wlen = f->bytes;
    l.addr = f->addr;
    l.blocks = f->blocks;
    l.to_stride = f->stride;
    l.to_at = f->at;
    out_op(phase, f->seq, &l);
  } else if (f->kind == REC_FIX_REDUCE) {
    ir_line l = line_of(IR_REDUCE);
    l.peer = ir_type_parse(f->type, (int64_t)strlen(f->type));
    l.tag = ir_rop_parse(f->op, (int64_t)strlen(f->op));
    l.bytes = f->count * (uint64_t)ir_type_size(l.peer);
    l.addr2 = f->src;
    l.addr = f->addr;
    out_op(phase, f->seq, &l);
  } else {
    out_copy(phase, f->seq, f->bytes, f->src, f->addr);
  }
}

/* Where this process is, for the passive-target origins that read it (rma_tickets_open). */
static void publish(int state) {
  if (R->counter) __atomic_store_n(&R->counter[1], R->seq << 2 | (uint64_t)state, __ATOMIC_RELEASE);
}

/* The next position; the first a call takes gets the time computed since the last. */
uint64_t next_seq(void) {
  if (R->active) rec_mem_drain(R->sh, R->seq);   /* what the program freed since, before any look at memory */
  R->seq += REC_SEQ_STEP;
  R->others += !R->quiet;
  publish(REC_TPOS_IN);
  if (R->gap) {
    if (R->active) rec_shadow_time(R->sh, R->seq, R->gap, on_fix, &R->phase);
    R->gap = 0;
  }
  return R->seq;
}

void noted_recv(const uint64_t *a, const uint64_t *l, int64_t n, uint64_t done, uint64_t posted, const char *type) {
  rec_shadow_recv_ranges(R->sh, a, l, n, done, posted, type, on_fix, &R->phase);
}

/* The bytes of ranges r (elements of `type` if one range) as the recording must hold them
   before position seq. */
/* A message of more ranges than a position has room for fixes before it (each range
   could need a computation of its own) is checked by its runs' hulls, which layout
   allows only when they span at most 8 times their bytes: bytes between the blocks that
   changed count as computed too. */
void check_sent(const ranges *r, uint64_t seq, const char *type) {
  if (r->n <= REC_MAX_COPIES) {
    for (int64_t i = 0; i < r->n; i++)
      rec_shadow_send(R->sh, r->a[i], r->l[i], seq, r->n == 1 ? type : NULL, on_fix, &R->phase);
  } else {
    for (int64_t i = 0, m; i < r->n; i += m) {
      uint64_t span, lo;
      m = run_at(r, i);
      lo = run_hull(r, i, m, &span);
      rec_shadow_send(R->sh, lo, span, seq, NULL, on_fix, &R->phase);
    }
  }
  rec_shadow_flush(R->sh, on_fix, &R->phase);
}

/* A message of several ranges travels through a packing area: copies before a send,
   after a receive (from `at` on). Returns the area. */
uint64_t pack_area(uint64_t total) {
  uint64_t p = REC_PACK_BASE + R->pack_next;
  R->pack_next += (total + 63) & ~63ull;
  out("%d scratch 0x%llx %llu\n", R->phase, (unsigned long long)p, (unsigned long long)total);
  return p;
}

/* The copies of group_at, strided where a period repeats: range j of a period goes to the
   same place of each repeat's contiguous bytes in the packing area, so its copy strides by
   the period's bytes there; listed blocks go to the area one after the other. */
void pack_copies(const ranges *r, uint64_t area, uint64_t first_seq, int to_area) {
  uint64_t off = 0, k = 0;
  for (int64_t i = 0, m, p, n; i < r->n; i += n) {
    int listed;
    n = group_at(r, i, &m, &p, &listed);
    uint64_t span = 0, d = m > 1 ? r->a[i + p] - r->a[i] : 0;   /* negative: two's complement */
    for (int64_t j = i; j < i + p; j++) span += r->l[j];
    for (int64_t j = i, at = 0; j < i + p; at += (int64_t)r->l[j], j++, k++) {
      uint64_t len = r->l[j], packed = m > 1 ? span : len;
      ir_line l = line_of(IR_COPY);
      l.bytes = len * (uint64_t)m;
      l.addr2 = to_area ? r->a[j] : area + off + (uint64_t)at;
      l.addr = to_area ? area + off + (uint64_t)at : r->a[j];
      l.blocks = (uint64_t)m;
      l.from_stride = to_area ? (m > 1 ? d : len) : packed;
      l.to_stride = to_area ? packed : (m > 1 ? d : len);
      if (listed) *(to_area ? &l.from_at : &l.to_at) = &r->a[i];
      out_op(R->phase, first_seq + k, &l);
    }
    off += span * (uint64_t)m;
  }
}

/* A hash of ranges r (their addresses and lengths). */
static uint64_t ranges_hash(const ranges *r) {
  uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)r->n;
  for (int64_t i = 0; i < r->n; i++) h = ((h ^ r->a[i]) * 0x100000001b3ull ^ r->l[i]) * 0x100000001b3ull;
  return h;
}

/* Is the message of ranges r (bytes, hash h) the last one packed, each of its bytes held
   as that send noted them? Then its packing area still holds them (nothing else writes a
   packing area), unless the program changed them since, which check_sent then finds. */
static int packed_again(const ranges *r, uint64_t bytes, uint64_t h) {
  if (!R->packed.n || R->packed.n != r->n || R->packed.hash != h || R->packed.bytes != bytes) return 0;
  for (int64_t i = 0; i < r->n; i++)
    if (!rec_shadow_held_since(R->sh, r->a[i], r->l[i], R->packed.seq)) return 0;
  return 1;
}

/* Records a send issued now; returns its position, 0 when nothing was recorded. A message
   that sends again, unchanged, what the last one packed sends from that one's packing
   area, without copies (MPICH's pt2pt/sendself sends each buffer three times). */
uint64_t record_send(const void *buf, int count, MPI_Datatype t, const held_type *held, int dest, int tag, MPI_Comm comm,
                     rcomm *xc, int call, int blocking) {
  if (!recording() || dest == MPI_PROC_NULL) return 0;
  R->oom_now = 0;
  rcomm *x = usable_held(xc, comm, call);
  ranges *r = &R->rs;
  uint64_t bytes = type_bytes(count, t);
  if (!x) return 0;
  if (layout(buf, count, t, held, bytes, r)) {
    not_recorded(call);
    return 0;
  }
  uint64_t seq = next_seq(), addr = r->n ? r->a[0] : (uint64_t)(uintptr_t)buf;
  uint64_t h = r->n > 1 ? ranges_hash(r) : 0, before[3], after[3];
  int again = r->n > 1 && packed_again(r, bytes, h);
  rec_shadow_counts(R->sh, before);
  check_sent(r, seq, type_name(t));
  rec_shadow_counts(R->sh, after);
  again &= !memcmp(before, after, sizeof before);   /* nothing computed, reduced or copied into them */
  if (r->n > 1 && again) {
    addr = R->packed.area;
    R->packed.seq = seq;
  } else if (r->n > 1) {
    addr = pack_area(bytes);
    pack_copies(r, addr, seq - REC_SEQ_STEP / 4, 1);
    R->packed.hash = h, R->packed.n = r->n, R->packed.bytes = bytes, R->packed.area = addr, R->packed.seq = seq;
  }
  ir_line l = line_of(IR_SEND);
  l.bytes = bytes;
  l.peer = world_of(x, dest);
  l.tag = tag;
  l.comm = x->id;
  l.addr = addr;
  l.wait = blocking;
  out_op(R->phase, seq, &l);
  return seq;
}

/* Writes a completed receive of `seq` (phase `phase`); `done` is where the rank saw it.
   1 if it wrote it: a wait names only operations the part holds (the merger refuses others). */
int record_recv(int phase, uint64_t seq, void *buf, int count, MPI_Datatype t, const held_type *held, MPI_Comm comm,
                rcomm *xc, const MPI_Status *st, uint64_t done, int blocking, int call) {
  if (st->MPI_SOURCE == MPI_PROC_NULL) return 0;
  int cancelled = 0;
  MPI_Count bytes = 0;
  PMPI_Test_cancelled(st, &cancelled);
  if (cancelled) return 0;
  R->oom_now = 0;
  rcomm *x = usable_held(xc, comm, call);
  if (!x) return 0;
  PMPI_Get_count_c(st, MPI_BYTE, &bytes);
  if (bytes < 0) bytes = 0;
  ranges *r = &R->rs;
  int now = phase == R->phase && R->active;
  uint64_t unpack = 0;
  if (layout(buf, count, t, held, (uint64_t)bytes, r) ||
      (r->n > 1 && !(now && (unpack = rec_shadow_reserve(R->sh, done, (uint32_t)r->ncopies))))) {
    not_recorded(call);
    return 0;
  }
  uint64_t addr = r->n ? r->a[0] : (uint64_t)(uintptr_t)buf;
  if (r->n > 1) addr = pack_area((uint64_t)bytes);
  ir_line l = line_of(IR_RECV);
  l.bytes = (uint64_t)bytes;
  l.peer = world_of(x, st->MPI_SOURCE);
  l.tag = st->MPI_TAG;
  l.comm = x->id;
  l.addr = addr;
  l.wait = blocking;
  out_op(phase, seq, &l);
  if (r->n > 1) pack_copies(r, addr, unpack, 0);
  if (now) noted_recv(r->a, r->l, r->n, done, seq, type_name(t));
  return 1;
}

/* ---- requests ---- */

static int64_t pend_new(void) {
  if (R->nfree) return R->pfree[--R->nfree];
  if (R->np == R->pcap) {
    int64_t c = R->pcap ? 2 * R->pcap : 64;
    pend *q = realloc(R->p, (size_t)c * sizeof *q);
    if (!q) return nomem(OOM_REQUESTS), -1;
    R->p = q;
    R->pcap = c;
  }
  return R->np++;
}

/* A handle MPI hands out again while operations under it are pending is one it shares only
   among requests that completed at once (MPICH's preallocated completed request), so those
   operations are complete: they are completed here, before the new one queues behind them.
   Left queued, a completion of the handle completes the oldest, which may be another than
   the program's: MPICH's coll/nonblocking3 (collectives on one process) completed the newer
   of two under one handle, freed its buffers, then completed the older, and the recorder
   read the freed buffers as the newer's output. Only collectives: their completion reads
   their output; a send's names it in a wait line, which one of several complete sends it
   names changes nothing, and MPICH shares a handle among eager sends all the time (a wait
   line each would grow every halo's graph). */
static void complete_shared(MPI_Request rq) {
  for (int64_t i, was = -1; R->fd >= 0 && (i = pend_find(rq)) >= 0 && i != was; was = i) {
    const pend *p = &R->p[i];
    if (p->persistent || !p->active || p->kind != P_COLL) return;
    MPI_Status none;
    memset(&none, 0, sizeof none);
    completed(&rq, NULL, 1, &none, C_Wait);
  }
}

/* MPI may hand out one handle for several requests (complete_shared), so a handle keeps a
   queue of operations: completing the handle completes the oldest. The map holds the newest;
   the newest holds the oldest; each holds the next newer one. */
int pend_put(MPI_Request rq, pend x) {
  Word_t *v;
  if (rq != MPI_REQUEST_NULL && !x.persistent) complete_shared(rq);
  int64_t i = pend_new();
  if (i < 0) {
    type_release(x.held);
    return -1;
  }
  JLI(v, R->reqs, (Word_t)rq);
  if (v == PJERR) {   /* the request's completion will not be recorded; the slot goes back */
    if (R->nfree < R->freecap) R->pfree[R->nfree++] = i;
    type_release(x.held);
    nomem(OOM_REQUESTS);
    return -1;
  }
  x.live = 1;
  x.newer = -1;
  x.oldest = i;
  x.xc = x.kind == P_SEND || x.kind == P_RECV ? comm_hold(x.comm) : NULL;
  if (*v) {   /* behind the newest of the handle */
    int64_t last = (int64_t)*v - 1;
    x.oldest = R->p[last].oldest;
    R->p[last].newer = i;
  }
  R->p[i] = x;
  *v = (Word_t)i + 1;
  return 0;
}

/* The oldest operation under the handle, -1 none. */
int64_t pend_find(MPI_Request rq) {
  Word_t *v;
  if (rq == MPI_REQUEST_NULL) return -1;
  JLG(v, R->reqs, (Word_t)rq);
  return v && *v ? R->p[*v - 1].oldest : -1;
}

void pend_drop(MPI_Request rq) {
  Word_t *v;
  int rc;
  if (rq == MPI_REQUEST_NULL) return;
  JLG(v, R->reqs, (Word_t)rq);
  if (!v || !*v) return;
  int64_t last = (int64_t)*v - 1, i = R->p[last].oldest;
  if (R->p[i].kind == P_COLL) nbcoll_dropped(&R->p[i]);
  if (i == last) {
    JLD(rc, R->reqs, (Word_t)rq);
    if (rc == JERR) {   /* the key stays, naming no operation (0), and the slot is not reused */
      *v = 0;
      R->p[i].live = 0;
      nomem(OOM_REQUESTS);
      return;
    }
  } else {
    R->p[last].oldest = R->p[i].newer;
  }
  R->p[i].live = 0;
  type_release(R->p[i].held);
  R->p[i].held = NULL;
  comm_release(R->p[i].xc);
  R->p[i].xc = NULL;
  if (R->nfree == R->freecap) {
    int64_t c = R->freecap ? 2 * R->freecap : 64;
    int64_t *q = realloc(R->pfree, (size_t)c * sizeof *q);
    if (!q) {   /* the slot is not reused: nothing recorded is lost, but it is counted */
      nomem(OOM_REQUESTS);
      return;
    }
    R->pfree = q;
    R->freecap = c;
  }
  R->pfree[R->nfree++] = i;
}

/* Completions that cannot be recorded (no memory to note them): the requests' operations
   are forgotten, so that a handle MPI hands out again never completes them later. */
void forget_requests(const MPI_Request *rq, int n) {
  for (int k = 0; k < n; k++)
    for (int64_t i; (i = pend_find(rq[k])) >= 0;) {
      R->p[i].active = 0;
      pend_drop(rq[k]);
    }
}

/* Saves `n` request handles before a completion call overwrites them. */
MPI_Request *save_requests(const MPI_Request *rq, int n) {
  if (n > R->rqcap) {
    MPI_Request *q = realloc(R->rq, (size_t)n * sizeof *q);
    if (!q) return nomem(OOM_CALLS), NULL;
    R->rq = q;
    R->rqcap = n;
  }
  memcpy(R->rq, rq, (size_t)n * sizeof *rq);
  return R->rq;
}

/* Statuses to complete n requests into: the caller's, or ours when it ignores them; NULL
   when there is no memory for ours (the call then goes unrecorded). */
MPI_Status *statuses(MPI_Status *user, int n) {
  if (user != MPI_STATUSES_IGNORE) return user;
  if (n > R->stcap) {
    MPI_Status *q = realloc(R->st, (size_t)n * sizeof *q);
    if (!q) return nomem(OOM_CALLS), NULL;
    R->st = q;
    R->stcap = n;
  }
  return R->st;
}

/* The wait line being gathered (R->wait): one more operation it names. 0 when there is no
   memory for it (counted; the operation still completes, unnamed). */
int wait_note(uint64_t seq) {
  if (R->nwait == R->waitcap) {
    int c = R->waitcap ? 2 * R->waitcap : 16;
    uint64_t *w = realloc(R->wait, (size_t)c * sizeof *w);
    if (!w) return nomem(OOM_CALLS), 0;
    R->wait = w, R->waitcap = c;
  }
  R->wait[R->nwait++] = seq;
  return 1;
}

/* Writes the wait line gathered, at position done (nothing when it names nothing). */
void wait_line(uint64_t done) {
  if (!R->nwait) return;
  out("%d %llu wait", R->phase, (unsigned long long)done);
  for (int k = 0; k < R->nwait; k++) out(" %llu", (unsigned long long)R->wait[k]);
  out("\n");
  R->nwait = 0;
}

/* Completions observed together: `n` requests (handles as before the call) with statuses.
   Writes their receives, then one wait line naming every operation of the phase. */
void completed(const MPI_Request *rq, const int *which, int n, const MPI_Status *st, int call) {
  if (!R || R->fd < 0 || n <= 0) return;
  uint64_t done = 0;
  R->nwait = 0;
  for (int k = 0; k < n; k++) {
    int64_t i = pend_find(rq[which ? which[k] : k]);
    if (i < 0 || !R->p[i].active) continue;
    pend *p = &R->p[i];
    if (!done) done = next_seq();   /* a position, even between phases: receives are written late */
    int named = 1;   /* the wait names p->seq (and an access's further lines) */
    if (p->kind == P_RECV) {
      MPI_Status posted;
      const MPI_Status *s = &st[k];
      if (p->given) {   /* MPI_Isendrecv: what was posted (no wildcards: pmpi_p2p.c) */
        posted = st[k], posted.MPI_SOURCE = p->peer, posted.MPI_TAG = p->tag, s = &posted;
        PMPI_Status_set_elements_x(&posted, MPI_BYTE, (MPI_Count)type_bytes(p->count, p->type));
      }
      named = record_recv(p->phase, p->seq, (void *)p->buf, p->count, p->type, p->held, p->comm, p->xc, s, done, 0,
                          call);
      if (named) probed_written(p);
    } else if (p->kind == P_COLL)
      named = nbcoll_completed(p, done);
    else if (p->kind == P_RMA)
      rma_completed(p, done);
    else {
      int cancelled = 0;
      PMPI_Test_cancelled(&st[k], &cancelled);
      if (cancelled) out("%d drop %llu\n", p->phase, (unsigned long long)p->seq);
    }
    int lines = p->kind == P_RMA && p->count > 1 ? p->count : 1;   /* an access of several lines: each */
    for (int j = 0; named && p->phase == R->phase && R->active && j < lines; j++)
      if (!wait_note(p->seq + (uint64_t)j)) break;
    if (p->also && p->phase == R->phase && R->active) wait_note(p->also);
    p->active = 0;
    if (!p->persistent) pend_drop(rq[which ? which[k] : k]);
  }
  wait_line(done);
  rma_completions_done();
}

/* ---- phases ---- */

void phase_start(void) {
  R->active = 1;
  R->pack_next = 0;
  R->packed.n = 0;
  rec_shadow_reset(R->sh);
  rec_mem_drain(R->sh, R->seq);   /* what was given back before the phase: nothing held there */
  rec_mem_watch(1);
  out("phase %d\n", R->phase);
}

/* The phase ends: what the program computed since its last send is stated, then `end`.
   At MPI_Finalize (at_exit) only what content proves: buffers may have been freed. */
void phase_end(int at_exit) {
  rec_shadow_settle(R->sh, next_seq(), at_exit, on_fix, &R->phase);
  say_shadow_oom();
  out("end %d\n", R->phase);
  R->active = 0;
  rec_mem_watch(0);
}

/* How many of the job's processes run on this node, and on how many CPUs (the union of their
   affinity masks: a process bound to one core is not a node of one). Collective over
   MPI_COMM_WORLD, inside MPI_Init, before anything that may fail on one process only. */
static void node_share(int *procs, int *cpus) {
  MPI_Comm node;
  cpu_set_t mine, all;
  *procs = 1;
  *cpus = 0;
  if (sched_getaffinity(0, sizeof mine, &mine)) CPU_ZERO(&mine);
  all = mine;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return;
  PMPI_Comm_size(node, procs);
  if (PMPI_Allreduce(&mine, &all, (int)sizeof mine, MPI_BYTE, MPI_BOR, node) != MPI_SUCCESS) all = mine;
  PMPI_Comm_free(&node);
  *cpus = CPU_COUNT(&all);
}

void rec_start(void) {
  if (R) return;
  cdag_settings set;
  int bad = cdag__settings_read(&set);
  const char *dir = set.record_dir ? set.record_dir : "cdag-recording";
  int node_procs, node_cpus;
  node_share(&node_procs, &node_cpus);
  uint64_t min_gap = set.record_min_gap > 0 ? (uint64_t)set.record_min_gap * 1000u : REC_COMPUTE_MIN_NS;
  R = calloc(1, sizeof *R);
  if (!R) {
    fprintf(stderr, "cdag record: out of memory at MPI_Init; this process is not recorded\n");
    return;
  }
  R->fd = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &R->rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &R->nprocs);
  if (bad) {
    fprintf(stderr, "cdag record: rank %d: %s; this process is not recorded\n", R->rank, cdag_error_message());
    return;
  }
  R->sh = rec_shadow_new((uint64_t)(set.record_memory >= 0 ? set.record_memory : 512) << 20, min_gap);
  if (R->sh) rec_shadow_on_note(R->sh, rec_mem_mark);
  R->fold = fold_new();
  mkdir(dir, 0777);
  char path[4096];
  snprintf(path, sizeof path, "%s/rank-%d.part", dir, R->rank);
  R->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (R->fd >= 0 && map_file(MAP_FIRST)) {
    close(R->fd);
    R->fd = -1;
  }
  if (R->fd < 0 || !R->sh) {
    if (!R->sh) fprintf(stderr, "cdag record: rank %d: out of memory at MPI_Init; this process is not recorded\n", R->rank);
    else fprintf(stderr, "cdag record: rank %d cannot write %s: %s; this process is not recorded\n", R->rank, path,
                 strerror(errno));
    if (R->fd >= 0) close(R->fd);
    R->fd = -1;
    return;
  }
  R->next_comm_id = 1;
  out("cdag-record-part 1\nrank %d nprocs %d\n", R->rank, R->nprocs);
  out("timing %d %d %llu\n", node_procs, node_cpus, (unsigned long long)min_gap);
  comm_add(MPI_COMM_WORLD, 0);
  comm_add(MPI_COMM_SELF, SELF_COMM_ID);
  R->implicit = 1;
  phase_start();
  R->t_exit = now_ns();
}

void rec_finish(void) {
  if (!R || R->fd < 0) return;
  if (R->active) phase_end(1);
  say_shadow_oom();   /* the counts of calls and of what was lost are in their lines (tally) */
  uint64_t fixes[3];
  rec_shadow_counts(R->sh, fixes);
  out("fixes %llu %llu %llu\nfinalized\n", (unsigned long long)fixes[0], (unsigned long long)fixes[1],
      (unsigned long long)fixes[2]);
  stop_recording();
}

/* The recorder's memory (its state when a process is not recorded after all). */
void rec_free(void) {
  if (!R) return;
  fold_free(R->fold);
  Word_t *v, k = 0;
  JLF(v, R->comms, k);
  while (v) {
    comm_release((rcomm *)*v);   /* the map's reference; pending operations' go below */
    JLN(v, R->comms, k);
  }
  k = 0;
  JLF(v, R->types, k);
  while (v) {
    type_release((held_type *)*v);
    JLN(v, R->types, k);
  }
  for (int64_t i = 0; i < R->np; i++) {   /* operations still pending at the end */
    if (!R->p[i].live) continue;
    type_release(R->p[i].held);
    comm_release(R->p[i].xc);
    R->p[i].active = 0;   /* a collective never completed: its memory, nothing counted */
    if (R->p[i].kind == P_COLL) nbcoll_dropped(&R->p[i]);
  }
  k = 0;
  JLF(v, R->msgs, k);
  while (v) {   /* probes whose message was never received */
    free((void *)*v);
    JLN(v, R->msgs, k);
  }
  JudyLFreeArray(&R->comms, PJE0);
  Judy1FreeArray(&R->idups, PJE0);
  JudyLFreeArray(&R->types, PJE0);
  JudyLFreeArray(&R->reqs, PJE0);
  JudyLFreeArray(&R->msgs, PJE0);
  JudyLFreeArray(&R->probed, PJE0);
  rma_free();
  rec_shadow_free(R->sh);
  free(R->p); free(R->pfree); free(R->st); free(R->rq); free(R->rs.a); free(R->rs.l); free(R->wait);
  free(R);
  R = NULL;
}

/* ---- time: what the process computes between its MPI calls ---- */

/* The program is in MPI again: the time since it last left counts, if recorded. */
void time_to_now(void) {
  if (R->active && R->t_exit) R->gap += now_ns() - R->t_exit;
}

int call_enter(int c) {
  if (!R) return 0;
  fold_enter(R->fold);
  tally(&R->call_at[c], "call", call_names[c]);
  time_to_now();
  publish(REC_TPOS_ENTERED);
  return 1;
}

void call_exit(const int *entered) {
  if (!*entered || !R) return;
  publish(REC_TPOS_OUT);
  fold_exit(R->fold);
  R->t_exit = now_ns();
}



/* The MPI functions below replace MPI's; everything above stays inside the library. */
#pragma GCC visibility push(default)

/* ---- initialisation ---- */

/* The passive-target tickets' window, made inside MPI_Init: its time is MPI's, not the
   program's computation. */
static void tickets_open(void) {
  rma_tickets_open();
  if (R) R->t_exit = now_ns();
}

int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) rec_start();
  if (rc == MPI_SUCCESS) tickets_open();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) rec_start();
  /* A program that asked for MPI_THREAD_MULTIPLE may call MPI from threads at once, which
     the recorder cannot order: nothing is recorded. One that asked for less calls MPI from
     one thread at a time even when MPI gives more (MPICH's asynchronous progress thread
     makes it MULTIPLE, and calls nothing through PMPI). */
  if (R && required == MPI_THREAD_MULTIPLE && *provided == MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "cdag record: rank %d runs MPI_THREAD_MULTIPLE: its calls are not recorded\n", R->rank);
    R->active = 0;
    rec_mem_watch(0);
    unsupported(C_Init_thread_multiple);
    rec_finish();   /* the part says so; every wrapper passes straight through from now on */
    rec_free();
  }
  if (rc == MPI_SUCCESS) tickets_open();
  return rc;
}

int MPI_Finalize(void) {
  if (R) time_to_now();
  rec_finish();
  rma_tickets_close();
  return PMPI_Finalize();
}

int MPI_Pcontrol(const int level, ...) {
  COUNT(C_Pcontrol);
  if (!R || R->fd < 0) return PMPI_Pcontrol(level);
  if (R->implicit) {   /* the program brackets its phases: what came before is not one */
    out("discard %d %llu\n", R->phase, (unsigned long long)next_seq());
    R->implicit = 0;
    R->active = 0;
    rec_mem_watch(0);
    if (level >= 1) phase_start();
  } else if (level >= 1 && !R->active) {
    R->phase++;
    phase_start();
  } else if (level == 0 && R->active) {
    phase_end(0);
  }
  return PMPI_Pcontrol(level);   /* a profiler behind this one sees it too */
}

/* ---- communicators and datatypes the program creates or frees ---- */

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *nc) {
  COUNT(C_Comm_dup);
  int rc = PMPI_Comm_dup(comm, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *nc) {
  COUNT(C_Comm_dup_with_info);
  int rc = PMPI_Comm_dup_with_info(comm, info, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

/* MPI_Comm_idup(_with_info): the new communicator has its parent's members, and its id is
   fixed without a collective (the program may not use it before the request completes, and
   an agreement inside the call could wait for a rank that first waits for this one): the k-th
   idup of parent p gets IDUP_FIRST + p * IDUP_PER_PARENT + k on every member, since members
   call a communicator's nonblocking collectives in the same order. */
static int idup_id(const rcomm *p, int k) {
  if (p->id < IDUP_PARENTS && k < IDUP_PER_PARENT) return IDUP_FIRST + p->id * IDUP_PER_PARENT + k;
  uint64_t h = ((uint64_t)(uint32_t)p->id << 32 | (uint32_t)k) * 0x9e3779b97f4a7c15ull;   /* Fibonacci hashing */
  h ^= h >> 29;
  return IDUP_HASHED + (int)(h % (uint64_t)(INT32_MAX - IDUP_HASHED));
}

static void comm_iduped(MPI_Comm parent, MPI_Comm nc, int call) {
  if (!R || nc == MPI_COMM_NULL) return;
  rcomm *p = comm_of(parent);
  comm_drop(nc);   /* a handle MPI reused */
  int id = p && p->world ? idup_id(p, p->nidup++) : 0, taken = 0;
  if (id) J1S(taken, R->idups, (Word_t)id);
  if (!id || taken != 1) {   /* unknown, or a hashed id this rank gave before (or no memory): not guessed */
    if (R->active)
      unsupported_because(call, !id ? "of a communicator the recorder does not know"
                                    : "whose id (made without a collective) this process gave another communicator");
    return;
  }
  int *world = malloc((size_t)p->n * sizeof *world);
  if (world) memcpy(world, p->world, (size_t)p->n * sizeof *world);
  comm_put(nc, parent, id, p->n, p->inter, world);   /* an intercommunicator's groups: its parent's */
}

/* A persistent collective's own communicator (pmpi_pcoll.c): MPI-4 matches the starts of
   persistent collectives by their inits, which may be started in another order on each
   member (MPICH's coll/p_order), where the graph matches a communicator's collectives in the
   order of their lines. So each init's starts go on a communicator of their own: the
   parent's members, an id made as an idup's (an init is a collective call, made in the same
   order on every member), held by the caller. NULL: the parent's own (an intercommunicator,
   or one the recorder does not know, whose calls are counted; an id this process gave before,
   or no memory: counted under `call`). */
rcomm *comm_persistent(MPI_Comm parent, int call) {
  rcomm *p = R ? comm_of(parent) : NULL;
  if (!p || !p->world || p->inter) return NULL;
  int id = idup_id(p, p->nidup++), taken = 0;
  J1S(taken, R->idups, (Word_t)id);
  rcomm *x = taken == 1 ? calloc(1, sizeof *x) : NULL;
  int *world = x ? malloc((size_t)p->n * sizeof *world) : NULL;
  if (!world) {
    free(x);
    if (R->fd >= 0)
      unsupported_because(call, taken != 1 ? "its own communicator's id was given before: starts go on the parent"
                                           : "no memory for its own communicator: starts go on the parent");
    return NULL;
  }
  memcpy(world, p->world, (size_t)p->n * sizeof *world);
  *x = (rcomm){.id = id, .n = p->n, .refs = 1, .world = world};
  comm_declare(parent, x);
  return x;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *nc, MPI_Request *rq) {
  COUNT(C_Comm_idup);
  int rc = PMPI_Comm_idup(comm, nc, rq);
  if (rc == MPI_SUCCESS) comm_iduped(comm, *nc, C_Comm_idup);
  return rc;
}

#if MPI_VERSION >= 4
int MPI_Comm_create_from_group(MPI_Group g, const char *tag, MPI_Info info, MPI_Errhandler eh, MPI_Comm *nc) {
  COUNT(C_Comm_create_from_group);
  int rc = PMPI_Comm_create_from_group(g, tag, info, eh, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Intercomm_create_from_groups(MPI_Group local, int local_leader, MPI_Group remote, int remote_leader,
                                     const char *tag, MPI_Info info, MPI_Errhandler eh, MPI_Comm *nc) {
  COUNT(C_Intercomm_create_from_groups);
  int rc = PMPI_Intercomm_create_from_groups(local, local_leader, remote, remote_leader, tag, info, eh, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *nc, MPI_Request *rq) {
  COUNT(C_Comm_idup_with_info);
  int rc = PMPI_Comm_idup_with_info(comm, info, nc, rq);
  if (rc == MPI_SUCCESS) comm_iduped(comm, *nc, C_Comm_idup_with_info);
  return rc;
}
#endif

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *nc) {
  COUNT(C_Comm_split);
  int rc = PMPI_Comm_split(comm, color, key, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *nc) {
  COUNT(C_Comm_split_type);
  int rc = PMPI_Comm_split_type(comm, type, key, info, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group g, MPI_Comm *nc) {
  COUNT(C_Comm_create);
  int rc = PMPI_Comm_create(comm, g, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group g, int tag, MPI_Comm *nc) {
  COUNT(C_Comm_create_group);
  int rc = PMPI_Comm_create_group(comm, g, tag, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader, int tag, MPI_Comm *nc) {
  COUNT(C_Intercomm_create);
  int rc = PMPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Intercomm_merge(MPI_Comm inter, int high, MPI_Comm *nc) {
  COUNT(C_Intercomm_merge);
  int rc = PMPI_Intercomm_merge(inter, high, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Cart_create(MPI_Comm comm, int nd, const int dims[], const int periods[], int reorder, MPI_Comm *nc) {
  COUNT(C_Cart_create);
  int rc = PMPI_Cart_create(comm, nd, dims, periods, reorder, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *nc) {
  COUNT(C_Cart_sub);
  int rc = PMPI_Cart_sub(comm, remain, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

/* The graph topologies: members as any communicator's (neighbourhood collectives: pmpi_vcoll.c). */
int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *nc) {
  COUNT(C_Graph_create);
  int rc = PMPI_Graph_create(comm, nnodes, index, edges, reorder, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int dests[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm *nc) {
  COUNT(C_Dist_graph_create);
  int rc = PMPI_Dist_graph_create(comm, n, sources, degrees, dests, weights, info, reorder, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int dests[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *nc) {
  COUNT(C_Dist_graph_create_adjacent);
  int rc = PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, dests, destweights, info,
                                           reorder, nc);
  if (rc == MPI_SUCCESS) comm_created(*nc);
  return rc;
}

int MPI_Comm_free(MPI_Comm *comm) {
  COUNT(C_Comm_free);
  if (R) comm_drop(*comm);
  return PMPI_Comm_free(comm);
}

int MPI_Type_free(MPI_Datatype *t) {
  if (R) {
    Word_t *v;
    int rc;
    JLG(v, R->types, (Word_t)*t);
    if (v) {   /* a handle MPI hands out again is decoded again; pending operations keep theirs */
      held_type *x = (held_type *)*v;
      *v = 0;   /* if the delete fails, the key stays naming no decoding */
      JLD(rc, R->types, (Word_t)*t);
      if (rc == JERR) nomem(OOM_TYPES);
      type_release(x);
    }
  }
  return PMPI_Type_free(t);
}

/* ---- calls passed on and counted as unsupported ---- */

#define UNSUPPORTED(NAME, PARAMS, ARGS)      \
  int MPI_##NAME PARAMS {                    \
    COUNT(C_##NAME);                         \
    if (R && R->active) unsupported(C_##NAME); \
    return PMPI_##NAME ARGS;                 \
  }
UNSUPPORTED(Comm_spawn, (const char *a, char *b[], int c, MPI_Info d, int e, MPI_Comm f, MPI_Comm *g, int h[]),
            (a, b, c, d, e, f, g, h))

/* cdag — src/exec/mpi/compile.c: cdag_compile over MPI (gather, analyse, scatter), the cache of
 * compiled schedules, error agreement, reports and cdag_graph_dump.
 *
 * cdag_compile, on every rank of the graph's communicator:
 *  1. takes the options as the last compile derived them, or reads and checks them; encodes
 *     its ops (wire/wire.h) and fingerprints them; one agreement of 8 integers (agree)
 *     agrees on local errors, on the options (by a digest of every field, after the
 *     environment; an allreduce names the field only when they differ), on whether
 *     every rank finds the same cached schedule (the same graph rebuilt, e.g. every
 *     iteration of a loop) and on whether every rank holds the same idle handle of it (the
 *     one the program freed: schedule.h, spares): if so, that handle is returned as it is
 *     (nothing built, no further agreement); else a new handle is built on the cached core
 *     (its own requests, kernels and run state; no gather, no analysis) and agreed on;
 *  2. MPI_Gatherv of the encodings to the compiling rank, which decodes the global graph and
 *     runs the analysis (cdag_analyze; with detect = 0 only matching, for the baseline), cuts
 *     the result into per-rank parts (schedule.c, baseline.c) and writes the report; each
 *     collective runs as MPI's or as a cdag kernel, as kern_choose_plan decides with the
 *     policy and model of pipeline_tuning (options, then CDAG_* variables: a bad value fails
 *     here, on every rank; measure = 1: measured once, compile_kernel.c);
 *  3. the compiling rank broadcasts its status (and message), MPI_Scatterv hands out the
 *     parts, and each rank builds its persistent requests (run.c); a last allreduce agrees.
 * Every error reaches every rank as the same code and message (the lowest failing rank's),
 * so no rank hangs in a collective the others skipped. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "base/settings.h"

/* ---- options ---- */

/* Every option, as the environment leaves it, by its bits (equal bits, equal values): what
   every rank must pass alike (the options table, base/settings.h). */
static void opt_values(const cdag_options *o, int64_t *v) {
  for (int id = 0; id < CDAG_NOPTS; id++) {
    double d = cdag__opt_get(o, id);
    memcpy(&v[id], &d, sizeof d);
  }
}

/* The options' bits hashed (> 0): the agreement compares this; only when ranks differ does a
   second allreduce compare every option, to name the one that differs. */
static int64_t opt_digest(const cdag_options *o) {
  int64_t v[CDAG_NOPTS];
  opt_values(o, v);
  return (int64_t)((wire_hash(v, sizeof v, 0x0b7) >> 2) | 1);
}

/* Options (by their digest), kernel policy and model: what a compiled schedule depends on
   besides the graph. */
static uint64_t options_hash(int64_t digest, const pipeline_tune *t) {
  const loggp_params *l = &t->lp;   /* a machine file's prices too */
  double v[16] = {t->policy, t->model.blocks, t->model.alpha, t->model.beta, t->model.overhead, t->model.gamma,
                  l->L, l->o, l->g, l->G, l->O, (double)l->S, l->copy, l->rcopy, l->queue, l->ntab};
  uint64_t h = wire_hash(v, sizeof v, (uint64_t)digest);
  for (int i = 0; i < l->ntab; i++) {   /* its costs by size */
    double row[3] = {l->tab_size[i], l->tab_pair[i], l->tab_round[i]};
    h = wire_hash(row, sizeof row, h);
  }
  return h;
}

/* v: CDAG_NOPTS maxima, then CDAG_NOPTS negated minima. */
static int opt_mismatch(const int64_t *v) {
  for (int id = 0; id < CDAG_NOPTS; id++) {
    if (v[id] == -v[CDAG_NOPTS + id]) continue;
    int64_t lo = -v[CDAG_NOPTS + id], hi = v[id];
    double x, y;
    memcpy(&x, &lo, sizeof x);
    memcpy(&y, &hi, sizeof y);
    return cdag__error(CDAG_ERR_ARG, "cdag_compile: ranks passed different options.%s (%g and %g; a CDAG_* "
                       "variable set on some ranks only changes it too)", cdag__opt_rows[id].field, x, y);
  }
  return CDAG_OK;
}

/* ---- error agreement ---- */

/* The rank `from` broadcasts its code and message; every rank returns them. */
static int share_error(MPI_Comm comm, int rank, int from, int rc) {
  int64_t hdr[2] = {rc, 0};
  const char *text = cdag__error_text();
  if (rank == from) hdr[1] = (int64_t)strlen(text);
  if (MPI_Bcast(hdr, 2, MPI_INT64_T, from, comm) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "rank %d: MPI_Bcast of an error failed", rank);
  char *msg = malloc((size_t)hdr[1] + 1);
  if (!msg) return CDAG_NOMEM("error message");
  if (rank == from) memcpy(msg, text, (size_t)hdr[1]);
  int mrc = MPI_Bcast(msg, (int)hdr[1], MPI_CHAR, from, comm);
  msg[hdr[1]] = '\0';
  rc = mrc == MPI_SUCCESS ? cdag__error((int)hdr[0], "%s", msg)
                          : cdag__error(CDAG_ERR_MPI, "rank %d: MPI_Bcast of an error failed", rank);
  free(msg);
  return rc;
}

/* v[0..n) (n <= 8) agreed as their maximum, v[0] carrying failure: nprocs - rank of the
   failing rank, so the maximum names the lowest one. Returns its error on every rank. With a
   tag (>= 0) over point-to-point rounds k = 1, 2, 4, .. < nprocs, each sending v to rank + k
   and taking the maximum with what rank - k sent (MAX is idempotent, so the overlaps of this
   dissemination do not matter): a third of MPI_Allreduce's time at 2 ranks with MPICH, what
   every compile that hits the cache pays, on the graph's duplicate with a tag no schedule
   uses. Without one (tag < 0), one MPI_Allreduce. */
static int agree(MPI_Comm comm, int tag, int rank, int nprocs, int rc, int64_t *v, int n) {
  int64_t in[8];
  v[0] = rc ? nprocs - rank : 0;
  if (tag < 0) {
    int mrc = MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_MAX, comm);
    if (mrc != MPI_SUCCESS) return sched_mpi_error(mrc, "MPI_Allreduce", rank);
  }
  for (int k = 1; tag >= 0 && k < nprocs; k <<= 1) {
    int mrc = MPI_Sendrecv(v, n, MPI_INT64_T, (rank + k) % nprocs, tag, in, n, MPI_INT64_T,
                           (rank - k + nprocs) % nprocs, tag, comm, MPI_STATUS_IGNORE);
    if (mrc != MPI_SUCCESS) return sched_mpi_error(mrc, "MPI_Sendrecv", rank);
    for (int i = 0; i < n; i++)
      if (in[i] > v[i]) v[i] = in[i];
  }
  if (v[0]) return share_error(comm, rank, nprocs - (int)v[0], rc);
  return CDAG_OK;
}

int exec_agree(MPI_Comm comm, int rank, int nprocs, int rc) {
  int64_t v[1];
  return agree(comm, -1, rank, nprocs, rc, v, 1);
}

/* ---- the cache of compiled schedules ---- */

#define CACHE_SIZE 8
typedef struct {
  uint64_t local;       /* fingerprint of this rank's encoding and options */
  int64_t global;       /* the compiling rank's fingerprint of the whole graph (> 0) */
  sched_core *core;     /* one reference: a hit builds a new handle on it */
  MPI_Group group;      /* the communicator's: a congruent one (a duplicate) finds the entry */
} cache_entry;
static cache_entry cache[CACHE_SIZE];
static int cache_n, cache_keyval = MPI_KEYVAL_INVALID;
static int64_t stat_compiles, stat_hits, stat_spares;

void exec_compile_stats(int64_t *compiles, int64_t *cache_hits) {
  exec_lock();
  if (compiles) *compiles = stat_compiles;
  if (cache_hits) *cache_hits = stat_hits;
  exec_unlock();
}

int64_t exec_spare_stats(void) {
  exec_lock();
  int64_t n = stat_spares;
  exec_unlock();
  return n;
}

static pthread_mutex_t exec_mutex = PTHREAD_MUTEX_INITIALIZER;
static int exec_single = -1;   /* MPI_THREAD_SINGLE (1), another level (0), not known yet (-1) */

/* Under MPI_THREAD_SINGLE the process runs one thread (the program promised MPI so): the
   lock is not taken. Known once MPI is initialised, when the level can no longer change;
   before, locked. A lock and its unlock see the same answer: MPI is not initialised between
   them. */
static int single_thread(void) {
  int s = __atomic_load_n(&exec_single, __ATOMIC_RELAXED), init = 0, level = MPI_THREAD_MULTIPLE;
  if (s >= 0) return s;
  MPI_Initialized(&init);
  if (!init) return 0;
  MPI_Query_thread(&level);
  s = level == MPI_THREAD_SINGLE;
  __atomic_store_n(&exec_single, s, __ATOMIC_RELAXED);
  return s;
}

void exec_lock(void) {
  if (!single_thread()) pthread_mutex_lock(&exec_mutex);
}

void exec_unlock(void) {
  if (!single_thread()) pthread_mutex_unlock(&exec_mutex);
}

/* Evicted, or MPI is finalizing: the core can no longer be hit, so its spare goes now (handles
   the program holds keep the core). */
static void entry_free(cache_entry *e) {
  cdag_schedule *spare = sched_spare_take(e->core);
  if (spare) sched_destroy(spare);
  sched_core_unref(e->core);
  if (e->group != MPI_GROUP_NULL) MPI_Group_free(&e->group);
}

/* Runs at MPI_Finalize (an attribute of MPI_COMM_SELF): frees the cached cores and cdag's
   own MPI ops (handles the program still holds keep their cores). */
static int cache_clear(MPI_Comm comm, int keyval, void *attr, void *extra) {
  exec_lock();
  for (int k = 0; k < cache_n; k++) entry_free(&cache[k]);
  cache_n = 0;
  sched_ops_free();
  exec_unlock();
  return MPI_SUCCESS;
}

void exec_at_finalize(void) {
  if (cache_keyval != MPI_KEYVAL_INVALID) return;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cache_clear, &cache_keyval, NULL) != MPI_SUCCESS) return;
  MPI_Comm_set_attr(MPI_COMM_SELF, cache_keyval, NULL);
}

/* The index of the entry for (local, group), -1 if there is none (lock held). */
static int cache_index(uint64_t local, MPI_Group group) {
  for (int k = 0; k < cache_n; k++) {
    int same = MPI_UNEQUAL;
    if (cache[k].local != local) continue;
    MPI_Group_compare(cache[k].group, group, &same);
    if (same == MPI_IDENT) return k;
  }
  return -1;
}

/* The entry for (local, comm's group): its global fingerprint, and *core a new reference
   to its core; 0 and NULL if there is none (lock held). */
static int64_t cache_find(uint64_t local, MPI_Comm comm, sched_core **core) {
  *core = NULL;
  MPI_Group group;
  if (MPI_Comm_group(comm, &group) != MPI_SUCCESS) return 0;
  int k = cache_index(local, group);
  MPI_Group_free(&group);
  if (k < 0) return 0;
  *core = sched_core_ref(cache[k].core);
  return cache[k].global;
}

/* Drops entry k (its core lives on in the handles that hold it). Lock held. */
static void cache_drop(int k) {
  entry_free(&cache[k]);
  memmove(cache + k, cache + k + 1, (size_t)(cache_n - k - 1) * sizeof *cache);
  cache_n--;
}

/* A compile stores its schedule under this rank's fingerprint, replacing the one stored
   under it before: that one was not taken, so some rank held another schedule under its own
   (a graph that differed on one rank, then on none), and kept, the first found, it would
   disagree with the other ranks' at every compile after, until evicted. */
static void cache_put(uint64_t local, int64_t global, sched_core *core, MPI_Comm comm) {
  MPI_Group group;
  if (MPI_Comm_group(comm, &group) != MPI_SUCCESS) return;   /* not cached: the next compile is a real one */
  exec_lock();
  exec_at_finalize();
  int k = cache_index(local, group);
  if (k >= 0) cache_drop(k);
  if (cache_n == CACHE_SIZE) cache_drop(0);   /* evict the oldest */
  cache[cache_n++] = (cache_entry){local, global, sched_core_ref(core), group};
  exec_unlock();
}

/* What one compile agrees on besides errors: the cache look-up and the spare handle. */
typedef struct {
  int64_t hit;                /* the cached schedule's global fingerprint (0: none) */
  sched_core *core;           /* its core (one reference), NULL unless every rank hit */
  cdag_schedule *spare;       /* its idle handle (sched_spare_take), NULL unless every rank
                                 holds the one of the same serial */
} compile_look;

/* A cache hit (every rank found the same core: agreed): a handle of its own on it, the spare
   if every rank holds the same one (nothing to build, nothing that can fail: no further
   agreement), else a new one. */
static int compile_hit(compile_look *l, cdag_graph *g, MPI_Comm comm, int rank, int nprocs, cdag_schedule **s) {
  exec_lock();
  stat_hits++;
  stat_spares += l->spare != NULL;
  exec_unlock();
  if (l->spare) {
    sched_comps_rebind(l->spare, g);
    *s = l->spare;
    l->spare = NULL;
    return CDAG_OK;
  }
  int rc = sched_from_core(l->core, g, s);
  if ((rc = exec_agree(comm, rank, nprocs, rc)) && *s) {
    sched_destroy(*s);
    *s = NULL;
  }
  return rc;
}

/* ---- the compiling rank ---- */

typedef struct {
  int rank, nprocs, root;
  MPI_Comm comm;
  cdag_options opts;
  pipeline_tune tune;         /* kernel policy and cost model */
  int64_t digest;             /* of the options (opt_digest) */
  uint64_t seed;              /* options_hash of digest and tune: what every fingerprint starts from */
  int64_t global;             /* fingerprint of the gathered graph */
  int agree_tag;              /* the communicator's MPI_TAG_UB: agree's, no schedule's */
  wire_buf *parts;            /* nprocs parts */
  char *text, *json;          /* report */
} compile_ctx;

static int mem_report(char **out, int (*write)(const void *, FILE *, int), const void *obj, int json) {
  size_t len = 0;
  FILE *f = open_memstream(out, &len);
  if (!f) return CDAG_NOMEM("report");
  int rc = write(obj, f, json);
  fclose(f);
  return rc;
}

static int plan_report_cb(const void *p, FILE *f, int json) { return cdag_plan_report(p, f, json); }

/* The first rank whose graph reduces with a user op, or -1. */
static int user_op_rank(const cdag_graph *g) {
  for (int64_t i = 0; i < g->nops; i++)
    if (g->kind[i] == IR_REDUCE && ir_rop_is_user(g->tag[i])) return g->rank[i];
  return -1;
}

/* The report of a schedule that runs the graph as written: detect = 0, or user ops. */
static int graph_report_cb(const void *obj, FILE *f, int json) {
  const cdag_graph *g = obj;
  int user = user_op_rank(g);
  char why[160] = "detect = 0";
  if (user >= 0)
    snprintf(why, sizeof why, "rank %d reduces with a user-defined MPI_Op, which cdag runs where written and does "
                              "not rewrite", user);
  return det_report_as_written(g, why, f, json);
}

/* The parts of the graph run as written (baseline.c). */
static int graph_parts(compile_ctx *x, cdag_graph *gg, const int64_t *base) {
  match_result m = {0};
  int flag = 0, *ub = NULL, rc;
  MPI_Comm_get_attr(x->comm, MPI_TAG_UB, &ub, &flag);
  if ((rc = ir_finalize(gg)) || (rc = match_run(gg, &m))) return rc;
  rc = sched_parts_from_graph(gg, &m, base, (flag && ub ? *ub : 32767) - 1, x->parts);  /* the last: agree's */
  match_free(&m);
  return rc;
}

static int compile_graph_mode(compile_ctx *x, cdag_graph *gg, const int64_t *base) {
  int rc = graph_parts(x, gg, base);
  if (!rc) rc = mem_report(&x->text, graph_report_cb, gg, 0);
  if (!rc) rc = mem_report(&x->json, graph_report_cb, gg, 1);
  return rc;
}

static exec_analyzer test_analyze;
static void (*test_free_plan)(cdag_plan *);

void exec_set_analyzer(exec_analyzer analyze, void (*free_plan)(cdag_plan *)) {
  test_analyze = analyze;
  test_free_plan = free_plan;
}

static int hand_report_cb(const void *p, FILE *f, int json) { return det_report_hand_made(p, f, json); }

static int compile_plan_mode(compile_ctx *x, cdag_graph *gg, const int64_t *base) {
  cdag_plan *plan = NULL;
  const kern_model *model = &x->tune.model;
  int rc = test_analyze ? test_analyze(gg, &x->opts, &plan) : pipeline_plan(gg, &x->opts, &x->tune, &plan);
  if (!rc && test_analyze) rc = kern_choose_plan(plan, model, x->tune.policy);
  int (*report)(const void *, FILE *, int) = test_analyze ? hand_report_cb : plan_report_cb;
  if (!rc) rc = plan->as_written ? graph_parts(x, gg, base) : sched_parts_from_plan(plan, model, base, x->parts);
  if (!rc) rc = mem_report(&x->text, report, plan, 0);
  if (!rc) rc = mem_report(&x->json, report, plan, 1);
  kern_choices_free(plan);  /* the test hook's free does not know the choices */
  if (test_analyze) test_free_plan(plan);
  else cdag_plan_free(&plan);
  return rc;
}

/* Decodes the gathered encodings (lens per rank, back to back in buf) into a global graph. */
static int decode_all(int nprocs, const uint8_t *buf, const int64_t *lens, cdag_graph **gg, int64_t *base) {
  int rc = ir_graph_new(nprocs, -1, gg);
  int64_t off = 0;
  for (int r = 0; !rc && r < nprocs; r++) {
    int sender = -1;
    base[r] = (*gg)->nops;
    rc = wire_decode_rank(*gg, buf + off, lens[r], &sender);
    if (!rc && sender != r) rc = cdag__error(CDAG_ERR_FORMAT, "encoding at position %d names rank %d", r, sender);
    off += lens[r];
  }
  if (!rc) base[nprocs] = (*gg)->nops;
  return rc;
}

/* CDAG_REPORT=stderr|FILE: the compiling rank writes each new schedule's report, before it
   tells the others the compile succeeded: a report that cannot be written (no such
   directory, a full disk) fails the compile on every rank, never silently. */
static int env_report(const compile_ctx *x) {
  static int written;   /* the file was started by this process (guarded by exec_lock) */
  cdag_settings set;
  cdag__settings_read(&set);  /* validated by cdag_compile */
  const char *where = set.report;
  if (!where) return CDAG_OK;
  size_t n = strlen(where);
  int json = n > 5 && strcmp(where + n - 5, ".json") == 0, to_stderr = strcmp(where, "stderr") == 0;
  exec_lock();
  FILE *f = to_stderr ? stderr : fopen(where, written ? "a" : "w");
  int rc = CDAG_OK;
  if (!f) {
    rc = cdag__error(CDAG_ERR_IO, "rank %d: CDAG_REPORT=%s: cannot open: %s", x->rank, where, strerror(errno));
  } else {
    int bad = fputs(json ? x->json : x->text, f) < 0;
    bad |= to_stderr ? fflush(f) != 0 : fclose(f) != 0;
    if (bad) rc = cdag__error(CDAG_ERR_IO, "rank %d: CDAG_REPORT=%s: write failed: %s", x->rank, where, strerror(errno));
    else written = 1;
  }
  exec_unlock();
  return rc;
}

static int root_compile(compile_ctx *x, const uint8_t *buf, const int64_t *lens, int64_t total) {
  cdag_graph *gg = NULL;
  int64_t *base = malloc(((size_t)x->nprocs + 1) * sizeof *base);
  x->parts = calloc((size_t)x->nprocs, sizeof *x->parts);
  int rc = base && x->parts ? CDAG_OK : CDAG_NOMEM("compile");
  if (!rc) rc = decode_all(x->nprocs, buf, lens, &gg, base);
  if (!rc) rc = x->opts.detect && user_op_rank(gg) < 0 ? compile_plan_mode(x, gg, base) : compile_graph_mode(x, gg, base);
  if (!rc) rc = env_report(x);
  x->global = (int64_t)((wire_hash(buf, total, x->seed) >> 2) | 1);
  ir_graph_free(gg);
  free(base);
  return rc;
}

/* ---- moving bytes ---- */

/* Every step below that allocates before a collective call agrees first (agree: one
   allreduce), so a rank that ran out of memory fails with the others instead of leaving
   them in the collective it skipped. */
static int agree_rc(compile_ctx *x, int rc) { return exec_agree(x->comm, x->rank, x->nprocs, rc); }

static int gather_graph(compile_ctx *x, const wire_buf *w, int rc, uint8_t **buf, int64_t **lens, int64_t *total) {
  int64_t mine = w->len;
  MPI_Count *counts = NULL;
  MPI_Aint *displs = NULL;
  int mrc;
  if (x->rank == x->root && !rc) {
    *lens = malloc((size_t)x->nprocs * sizeof **lens);
    counts = malloc((size_t)x->nprocs * sizeof *counts);
    displs = malloc((size_t)x->nprocs * sizeof *displs);
    if (!*lens || !counts || !displs) rc = CDAG_NOMEM("gather");
  }
  if (!(rc = agree_rc(x, rc))) {
    mrc = MPI_Gather(&mine, 1, MPI_INT64_T, *lens, 1, MPI_INT64_T, x->root, x->comm);
    if (mrc != MPI_SUCCESS) rc = sched_mpi_error(mrc, "MPI_Gather", x->rank);
  }
  if (x->rank == x->root && !rc) {
    *total = 0;
    for (int r = 0; r < x->nprocs; r++) {
      counts[r] = (*lens)[r];
      displs[r] = (MPI_Aint)*total;
      *total += (*lens)[r];
    }
    if (!(*buf = malloc((size_t)(*total ? *total : 1)))) rc = CDAG_NOMEM("gathered graph");
  }
  if (!(rc = agree_rc(x, rc))) {
    mrc = MPI_Gatherv_c(w->buf, mine, MPI_BYTE, *buf, counts, displs, MPI_BYTE, x->root, x->comm);
    if (mrc != MPI_SUCCESS) rc = sched_mpi_error(mrc, "MPI_Gatherv_c", x->rank);
  }
  free(counts);
  free(displs);
  return rc;
}

/* The root's send side of the scatter: every part back to back. */
static int pack_parts(compile_ctx *x, int64_t **lens, MPI_Count **counts, MPI_Aint **displs, uint8_t **all) {
  int64_t total = 0;
  *lens = malloc((size_t)x->nprocs * sizeof **lens);
  *counts = malloc((size_t)x->nprocs * sizeof **counts);
  *displs = malloc((size_t)x->nprocs * sizeof **displs);
  if (!*lens || !*counts || !*displs) return CDAG_NOMEM("scatter");
  for (int r = 0; r < x->nprocs; r++) {
    (*lens)[r] = (*counts)[r] = x->parts[r].len;
    (*displs)[r] = (MPI_Aint)total;
    total += x->parts[r].len;
  }
  if (!(*all = malloc((size_t)(total ? total : 1)))) return CDAG_NOMEM("scatter");
  for (int r = 0; r < x->nprocs; r++)
    if (x->parts[r].len) memcpy(*all + (*displs)[r], x->parts[r].buf, (size_t)x->parts[r].len);
  return CDAG_OK;
}

/* Hands out the parts; *part receives this rank's (malloc'd). */
static int scatter_parts(compile_ctx *x, uint8_t **part, int64_t *len) {
  int64_t *lens = NULL;
  MPI_Count *counts = NULL;
  MPI_Aint *displs = NULL;
  uint8_t *all = NULL;
  int rc = x->rank == x->root ? pack_parts(x, &lens, &counts, &displs, &all) : CDAG_OK, mrc;
  if (!(rc = agree_rc(x, rc))) {
    mrc = MPI_Scatter(lens, 1, MPI_INT64_T, len, 1, MPI_INT64_T, x->root, x->comm);
    if (mrc != MPI_SUCCESS) rc = sched_mpi_error(mrc, "MPI_Scatter", x->rank);
    else if (!(*part = malloc((size_t)(*len ? *len : 1)))) rc = CDAG_NOMEM("schedule part");
  }
  if (!(rc = agree_rc(x, rc))) {
    mrc = MPI_Scatterv_c(all, counts, displs, MPI_BYTE, *part, *len, MPI_BYTE, x->root, x->comm);
    if (mrc != MPI_SUCCESS) rc = sched_mpi_error(mrc, "MPI_Scatterv_c", x->rank);
  }
  free(lens); free(counts); free(displs); free(all);
  return rc;
}

/* The root's text and JSON reports, to every rank (lens: their lengths). */
static int bcast_reports(compile_ctx *x, const int64_t *lens) {
  char **text[2] = {&x->text, &x->json};
  int rc = CDAG_OK;
  for (int i = 0; i < 2 && !rc && x->rank != x->root; i++)
    if (!(*text[i] = malloc((size_t)lens[i] + 1))) rc = CDAG_NOMEM("report");
  if ((rc = agree_rc(x, rc))) return rc;
  for (int i = 0; i < 2; i++) {
    int mrc = MPI_Bcast_c(*text[i], (MPI_Count)lens[i], MPI_CHAR, x->root, x->comm);
    (*text[i])[lens[i]] = '\0';
    if (mrc != MPI_SUCCESS) return sched_mpi_error(mrc, "MPI_Bcast", x->rank);
  }
  return CDAG_OK;
}

/* Steps 2 and 3: gather, compile at the root, scatter, build. w: the fingerprinted encoding,
   which a graph with packing buffers encodes again with their real addresses. */
static int compile_new(compile_ctx *x, cdag_graph *g, const wire_buf *w, uint64_t local, cdag_schedule **out) {
  uint8_t *buf = NULL, *part = NULL;
  int64_t *lens = NULL, total = 0, len = 0;
  wire_buf real = {0};
  int canon = exec_has_arena(g), rc = canon ? wire_encode_rank(g, &real) : CDAG_OK;
  rc = gather_graph(x, canon ? &real : w, rc, &buf, &lens, &total);
  wire_free(&real);
  exec_lock();
  stat_compiles++;
  exec_unlock();
  if (!rc && x->rank == x->root) rc = root_compile(x, buf, lens, total);
  int64_t hdr[4] = {rc, x->global, x->text ? (int64_t)strlen(x->text) : 0, x->json ? (int64_t)strlen(x->json) : 0};
  free(buf);
  free(lens);
  int mrc = MPI_Bcast(hdr, 4, MPI_INT64_T, x->root, x->comm);
  if (mrc != MPI_SUCCESS) return sched_mpi_error(mrc, "MPI_Bcast", x->rank);
  if (hdr[0]) return share_error(x->comm, x->rank, x->root, rc);
  x->global = hdr[1];
  rc = scatter_parts(x, &part, &len);
  if (!rc) rc = bcast_reports(x, &hdr[2]);
  cdag_schedule *s = NULL;
  if (!rc) rc = sched_build(part, len, g, x->comm, &s);
  free(part);
  if ((rc = agree_rc(x, rc))) {
    if (s) sched_destroy(s);
    return rc;
  }
  s->core->report_text = x->text;
  s->core->report_json = x->json;
  s->core->arena = exec_arena_ref(g);
  x->text = x->json = NULL;
  cache_put(local, x->global, s->core, x->comm);
  *out = s;
  return CDAG_OK;
}

static void ctx_free(compile_ctx *x) {
  if (x->parts)
    for (int r = 0; r < x->nprocs; r++) wire_free(&x->parts[r]);
  free(x->parts);
  free(x->text);
  free(x->json);
}

/* The policy and model of this compile: options and environment (set) over the measured
   model (if any), else the machine file (read once per process), else the built-in one. A
   graph run as written (detect = 0) is neither priced nor planned: no file is read (`cdag
   calibrate` runs such graphs before the file it writes exists). */
static int tune(compile_ctx *x, const cdag_settings *set) {
  machine_params m = machine_builtin();
  int rc = x->opts.detect ? exec_machine(set, &m) : CDAG_OK;
  if (rc == CDAG_OK) pipeline_tuning_on(&x->opts, set, &m, &x->tune);
  return rc;
}

/* measure = 1: the model is measured once per process, on the first communicator where
   some rank asks (every rank measures then, so all hold the same model); a new model
   changes the fingerprint, so the cache is consulted again after it. */
static int measured;
static int measure_model(compile_ctx *x, uint64_t *local, const wire_buf *w) {
  int rc = exec_kernel_measure(x->comm);
  if ((rc = agree_rc(x, rc))) return rc;
  exec_lock();
  measured = 1;
  exec_unlock();
  cdag_settings set;
  if ((rc = cdag__settings_read(&set)) || (rc = tune(x, &set))) return rc;
  x->seed = options_hash(x->digest, &x->tune);
  *local = wire_hash(w->buf, w->len, x->seed);
  return CDAG_OK;
}

/* The options of every rank, compared one by one (the digests differed: every rank is here). */
static int opt_compare(compile_ctx *x) {
  int64_t v[2 * CDAG_NOPTS];
  opt_values(&x->opts, v);
  for (int k = 0; k < CDAG_NOPTS; k++) v[CDAG_NOPTS + k] = -v[k];
  int mrc = MPI_Allreduce(MPI_IN_PLACE, v, 2 * CDAG_NOPTS, MPI_INT64_T, MPI_MAX, x->comm);
  if (mrc != MPI_SUCCESS) return sched_mpi_error(mrc, "MPI_Allreduce", x->rank);
  int rc = opt_mismatch(v);
  return rc ? rc : cdag__error(CDAG_ERR_ARG, "cdag_compile: ranks passed different options");
}

/* The caller's options with the environment's variables, checked. Their messages name the
   rank; "rank N: " is written only for a message (these are pure: the second call fails as
   the first did), not at every compile. */
static int take_options(compile_ctx *x, const cdag_options *o, const cdag_settings *set) {
  int rc = cdag__options_take(o, &x->opts, "");
  cdag__options_env(&x->opts, set);   /* explicit fields win over the variables */
  if (!rc) rc = cdag__options_check(&x->opts, x->nprocs, "");
  if (!rc) return CDAG_OK;
  char who[32];
  snprintf(who, sizeof who, "rank %d: ", x->rank);
  rc = cdag__options_take(o, &x->opts, who);
  cdag__options_env(&x->opts, set);
  return rc ? rc : cdag__options_check(&x->opts, x->nprocs, who);
}

/* ---- the options of the last compile, remembered ---- */

/* A program that rebuilds its graph every iteration passes the same options under the same
   CDAG_* variables each time: the settings, options and tuning the last successful compile
   of this process derived from them are taken as they are when the program's option bytes,
   the variables' text, the communicator's size and whether a model was measured are the
   same (0.35 of the 0.6 µs a cache hit spends on its own rank, at 12 ops). */
typedef struct {
  int valid, measured, nprocs, given;
  size_t in_size;                        /* bytes of the program's options kept in `in` */
  unsigned char in[sizeof(cdag_options)];
  long envlen;                           /* the CDAG_* variables' text (settings.h) */
  char env[1024];
  cdag_options opts;
  pipeline_tune tune;
  int64_t digest;
  uint64_t seed;
} opts_memo;
static opts_memo memo;   /* under exec_lock */

/* k's key from what this compile was given; 0 when it cannot be kept (options larger than
   this library's, variables longer than the key). */
static int memo_key(opts_memo *k, const cdag_options *o, int nprocs) {
  kern_model km;
  k->valid = 0;
  k->nprocs = nprocs;
  k->measured = exec_kernel_measured(&km);
  k->given = o != NULL;
  k->in_size = !o ? 0 : o->struct_size ? o->struct_size : sizeof *o;   /* 0: every field read (settings.c) */
  if (k->in_size > sizeof *o) return 0;
  if (o) memcpy(k->in, o, k->in_size);
  k->envlen = cdag__settings_env_text(k->env, sizeof k->env);
  return k->envlen >= 0;
}

static int memo_same(const opts_memo *m, const opts_memo *k) {
  return m->valid && m->nprocs == k->nprocs && m->measured == k->measured && m->given == k->given &&
         m->in_size == k->in_size && memcmp(m->in, k->in, k->in_size) == 0 && m->envlen == k->envlen &&
         memcmp(m->env, k->env, (size_t)k->envlen) == 0;
}

/* x's options, tuning and digest: remembered, or read, checked and remembered. */
static int compile_options(compile_ctx *x, const cdag_options *o) {
  opts_memo key;
  int keep = memo_key(&key, o, x->nprocs), same;
  exec_lock();
  if ((same = keep && memo_same(&memo, &key)))
    x->opts = memo.opts, x->tune = memo.tune, x->digest = memo.digest, x->seed = memo.seed;
  exec_unlock();
  if (same) return CDAG_OK;
  cdag_settings set;
  int rc = cdag__settings_read(&set);  /* every variable validated, on every rank */
  if (!rc) rc = take_options(x, o, &set);
  if (!rc) rc = tune(x, &set);
  x->digest = rc ? 0 : opt_digest(&x->opts);
  x->seed = rc ? 0 : options_hash(x->digest, &x->tune);
  if (rc || !keep) return rc;
  key.opts = x->opts, key.tune = x->tune, key.digest = x->digest, key.seed = x->seed, key.valid = 1;
  exec_lock();
  memo = key;
  exec_unlock();
  return CDAG_OK;
}

/* Local checks, then one agreement of 8 integers: errors, the cache look-up, the spare
   handle, measuring, equal options (by digest). Each pair is (max, -min) of one value. */
static int compile_agree(compile_ctx *x, const cdag_options *o, cdag_graph *g, wire_buf *w, compile_look *l,
                         uint64_t *local) {
  int rc = compile_options(x, o);
  if (!rc) rc = exec_encode_canonical(g, w);
  *local = rc ? 0 : wire_hash(w->buf, w->len, x->seed);
  exec_lock();
  l->hit = rc ? 0 : cache_find(*local, x->comm, &l->core);   /* held: another thread cannot evict it now */
  int need_measure = !rc && x->tune.measure && !measured;
  exec_unlock();
  l->spare = l->core ? sched_spare_take(l->core) : NULL;
  int64_t serial = l->spare ? l->spare->serial + 1 : 0;
  int64_t v[8] = {0, l->hit, -l->hit, need_measure, x->digest, -x->digest, serial, -serial};
  if ((rc = agree(x->comm, x->agree_tag, x->rank, x->nprocs, rc, v, 8))) return rc;
  if (v[4] != -v[5]) return opt_compare(x);
  if (v[3] && (rc = measure_model(x, local, w))) return rc;
  if (v[3] || v[1] != l->hit || -v[2] != l->hit) l->hit = 0;   /* not every rank found the same schedule */
  if (l->hit && l->spare && (v[6] != serial || -v[7] != serial)) {
    /* the ranks kept different handles (freed in different orders): drop them, so the
       handle built now, freed on every rank, becomes the spare every rank holds */
    sched_destroy(l->spare);
    l->spare = NULL;
  }
  return CDAG_OK;
}

/* compile_agree, and the core of a hit dropped unless every rank hit. */
static int compile_agree_core(compile_ctx *x, const cdag_options *o, cdag_graph *g, wire_buf *w, compile_look *l,
                              uint64_t *local) {
  int rc = compile_agree(x, o, g, w, l, local);
  if (rc || l->hit <= 0) {
    if (l->spare) sched_spare_put(l->spare);
    l->spare = NULL;
    sched_core_unref(l->core);
    l->core = NULL;
  }
  return rc;
}

int cdag_compile(cdag_graph *g, const cdag_options *o, cdag_schedule **s) {
  if (!s) return cdag__error(CDAG_ERR_ARG, "cdag_compile: schedule pointer is NULL");
  *s = NULL;
  if (!g) return cdag__error(CDAG_ERR_ARG, "cdag_compile: graph is NULL");
  if (g->myrank < 0 || !g->host)
    return cdag__error(CDAG_ERR_ARG, "cdag_compile: graph is global (use cdag_analyze, or cdag_graph_create)");
  int trc = exec_thread_check("cdag_compile");
  if (!trc) trc = exec_comm_take(g, "cdag_compile");   /* before any MPI call */
  if (trc) return trc;
  compile_ctx x = {.rank = g->myrank, .nprocs = g->nprocs, .comm = exec_graph_comm(g), .agree_tag = exec_graph_tag_ub(g)};
  MPI_Comm_set_errhandler(x.comm, MPI_ERRORS_RETURN);
  wire_buf w = {0};
  compile_look look = {0};
  uint64_t local = 0;
  int rc = compile_agree_core(&x, o, g, &w, &look, &local);
  x.root = x.opts.root;
  if (!rc && look.core) {  /* every rank found the same schedule */
    rc = compile_hit(&look, g, x.comm, x.rank, x.nprocs, s);
    sched_core_unref(look.core);
  } else if (!rc) {
    rc = compile_new(&x, g, &w, local, s);
  }
  if (!rc) g->state = IR_COMPILED;
  exec_comm_release(g);
  wire_free(&w);
  ctx_free(&x);
  return rc;
}

/* ---- schedules: report (run.c frees them) ---- */

int cdag_schedule_report(const cdag_schedule *s, FILE *out, int json) {
  if (!s || !out) return cdag__error(CDAG_ERR_ARG, "cdag_schedule_report: %s is NULL", s ? "out" : "schedule");
  const char *t = json ? s->core->report_json : s->core->report_text;
  if (t && fputs(t, out) < 0) return cdag__error(CDAG_ERR_IO, "cdag_schedule_report: write failed");
  return CDAG_OK;
}

/* ---- cdag_graph_dump: gather to rank 0 and save one global file ---- */

static int dump(cdag_graph *g, const char *path);

int cdag_graph_dump(cdag_graph *g, const char *path) {
  if (!g || g->myrank < 0 || !g->host) return cdag__error(CDAG_ERR_ARG, "cdag_graph_dump: not a distributed graph");
  int trc = exec_comm_take(g, "cdag_graph_dump");
  if (trc) return trc;
  int rc = dump(g, path);
  exec_comm_release(g);
  return rc;
}

/* cdag_graph_dump with the communicator's mark held. */
static int dump(cdag_graph *g, const char *path) {
  compile_ctx x = {.rank = g->myrank, .nprocs = g->nprocs, .comm = exec_graph_comm(g), .root = 0};
  MPI_Comm_set_errhandler(x.comm, MPI_ERRORS_RETURN);
  wire_buf w = {0};
  int rc = path ? wire_encode_rank(g, &w) : cdag__error(CDAG_ERR_ARG, "rank %d: cdag_graph_dump: path is NULL", x.rank);
  if ((rc = exec_agree(x.comm, x.rank, x.nprocs, rc))) {
    wire_free(&w);
    return rc;
  }
  uint8_t *buf = NULL;
  int64_t *lens = NULL, total = 0;
  rc = gather_graph(&x, &w, CDAG_OK, &buf, &lens, &total);
  if (!rc && x.rank == 0) {
    cdag_graph *gg = NULL;
    int64_t *base = malloc(((size_t)x.nprocs + 1) * sizeof *base);
    rc = base ? decode_all(x.nprocs, buf, lens, &gg, base) : CDAG_NOMEM("dump");
    if (!rc) rc = cdag_graph_save(gg, path);
    ir_graph_free(gg);
    free(base);
  }
  free(buf);
  free(lens);
  wire_free(&w);
  int64_t code = rc;
  if (MPI_Bcast(&code, 1, MPI_INT64_T, 0, x.comm) != MPI_SUCCESS)
    return cdag__error(CDAG_ERR_MPI, "rank %d: MPI_Bcast failed", x.rank);
  return code ? share_error(x.comm, x.rank, 0, rc) : CDAG_OK;
}

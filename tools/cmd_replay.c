/* cdag — tools/cmd_replay.c: `mpiexec -n P cdag replay FILE [--iterations N] [--repeat N] [--json]
 * [--compute=recorded|none|skip] [--memory=MiB]`.
 *
 * Runs a global graph file (cdag's own, GOAL, Schedgen's, a recording) with MPI, one rank of
 * the file per process, to see what compiling it gains on this machine. Every process loads
 * the file, gives its rank's operations memory of their own (exec/mpi/replay.h: the touched
 * ranges packed into one block) and builds a distributed graph of them. The graph runs as
 * written (detect = 0) and compiled (with the options given: cmd_options), each once from the
 * same content (replay_mem.h), and
 * every rank's memory must end the same both ways (scratch aside; floating-point sums and
 * products within a tolerance, as reassociated). Then each is timed --repeat times (default
 * 5; the two in turn), each time running --iterations times behind a barrier (default: as
 * many as take about a quarter of a second, at most 100, from one timed run of each way, so a
 * recording that computes for seconds is timed in minutes, not hours); rank 0 prints
 * per way the median and best time per iteration (the slowest rank's), their ratio from the
 * medians (one average swung from 0.05x to 116x on a busy machine), the compile time, the
 * iterations after which compiling pays off, and the schedule's report.
 * A computation of the file (docs/format.md: compute) runs in both ways at its place in the
 * rank's order: it writes the simulator's hash of what it read and spends its cost
 * spinning (--compute=recorded, the default) or no time (--compute=none); --compute=skip
 * leaves computations out (no time, no bytes: the memory then holds only what the recorded
 * messages moved, to compare with a live run's, as tests/record does).
 * Every process loads the whole file: one whose text, at about 12 bytes of memory per byte,
 * would not fit the node's available memory (MemAvailable, or --memory) on every process of
 * the node is refused before loading, with the figures.
 * Every failure is agreed on by all processes (the lowest failing rank's message, printed
 * once by rank 0), so all exit 1 together and none waits in a collective the others left.
 * Exit status: 0 same memory, 1 bad input or different memory, 2 usage. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "format/format.h"
#include "base/settings.h"
#include "replay_mem.h"

typedef struct {
  const char *path;
  const char *dump;          /* --dump DIR: each rank's memory after the run as written */
  int json, iters, repeat, buffers;
  int memory_mib;            /* --memory=MiB: what this node has for the run (0: 85 % of MemAvailable) */
  int compute_time;          /* --compute=recorded (1, default), none (0) or skip (-1) */
  cdag_options opts;         /* the compiled run's (cmd_options: --density=X ...) */
} replay_args;

typedef struct {
  int rank, nprocs;
  cdag_graph *gg;            /* the file: every rank's operations (freed once the rank's copy is built) */
  int64_t file_ops;          /* its operations as the file wrote them (file_ops) */
  int64_t file_os[4];        /* its gets, puts, accumulates, fences (run as messages: replay.h) */
  cdag_graph *g;             /* this rank's, in its block */
  replay_map map;
  replay_mem mem;
  uint8_t *block, *written;  /* the memory; its contents after the run as written */
  cdag_schedule *sw, *sc;    /* as written, compiled */
  double compile_c;
  replay_timing t_w, t_c;    /* per iteration: best and median of the repeats */
} replay_state;

/* `--name V` or `--name=V`, removed from argv; NULL if absent. */
static const char *option(int *argc, char **argv, const char *name) {
  char eq[64];
  snprintf(eq, sizeof eq, "%s=", name);
  const char *v = cmd_flag_value(argc, argv, eq);
  for (int i = 0; !v && i + 1 < *argc; i++)
    if (!strcmp(argv[i], name)) {
      v = argv[i + 1];
      memmove(argv + i, argv + i + 2, (size_t)(*argc - i - 2) * sizeof *argv);
      *argc -= 2;
    }
  return v;
}

/* A count in [1, max] into *out: 0, or -1. */
static int count_arg(const char *s, long max, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*end || end == s || v < 1 || v > max) return -1;
  *out = (int)v;
  return 0;
}

/* FILE [--iterations N] [--repeat N] [--json] [--dump DIR] [--compute=recorded|none|skip] [--memory=MiB] [--goal-buffers=...]
   [OPTIONS]: 0, or -1. */
static int parse_args(int argc, char **argv, replay_args *a) {
  *a = (replay_args){.iters = 0, .repeat = 5, .compute_time = 1};   /* 0: auto_iterations */
  if (cmd_options_quiet(&argc, argv, &a->opts)) return -1;
  a->buffers = cmd_goal_buffers(&argc, argv);
  a->json = cmd_has_flag(&argc, argv, "--json");
  const char *n = option(&argc, argv, "--iterations"), *r = option(&argc, argv, "--repeat");
  a->dump = option(&argc, argv, "--dump");
  const char *c = option(&argc, argv, "--compute"), *m = option(&argc, argv, "--memory");
  if (m && count_arg(m, INT_MAX, &a->memory_mib)) return -1;
  if (c && strcmp(c, "recorded") && strcmp(c, "none") && strcmp(c, "skip")) return -1;
  if (c) a->compute_time = !strcmp(c, "recorded") ? 1 : !strcmp(c, "none") ? 0 : -1;
  if (n && count_arg(n, 1000000000, &a->iters)) return -1;
  if (r && count_arg(r, 10000, &a->repeat)) return -1;
  if (a->buffers < 0 || argc != 1 || argv[0][0] == '-') return -1;   /* "-": stdin reaches rank 0 only */
  a->path = argv[0];
  return 0;
}

/* The memory a replay process needs per byte of a file's text: `cdag check` (the loader
   alone) takes 11.5 to 15 on recordings (MPICH's rma/manyrma2: 69 MB of text, 796 MB), and a
   replay more (a 553 MB phase: 6.4 GB per process and growing when the kernel killed it). A
   lower bound: a file it refuses would not have run. */
enum { LOADED_PER_BYTE = 12 };

/* The node's available memory in bytes (MemAvailable of /proc/meminfo), 0 when unknown. */
static uint64_t node_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  char line[128];
  unsigned long long kb = 0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
  if (f) fclose(f);
  return (uint64_t)kb * 1024;
}

/* What this node has for the run: --memory, else 85 % of MemAvailable, the rest for MPI,
   the kernel and estimates that fall short (MPICH's rma/derived_acc_flush_local at 3
   processes, estimated at 24 GB where the node had a little more, was killed); 0: unknown. */
static uint64_t node_memory(const replay_args *a) {
  return a->memory_mib ? (uint64_t)a->memory_mib << 20 : node_available() / 20 * 17;
}

/* How node_memory's figure was found, for the messages. */
static const char *memory_source(const replay_args *a) {
  return a->memory_mib ? " (--memory)" : " (85 % of MemAvailable)";
}

/* Every process of this node loads the whole file: when that cannot fit, one clear error
   on every rank instead of the kernel killing the processes one by one. */
static int memory_fits(const replay_args *a) {
  struct stat sb;
  int procs = replay_node_size(), rc = CDAG_OK;
  uint64_t avail = node_memory(a);
  if (!stat(a->path, &sb) && S_ISREG(sb.st_mode) && avail) {
    double need = (double)sb.st_size * LOADED_PER_BYTE * procs;
    if (need > (double)avail)
      rc = cdag__error(CDAG_ERR_NOMEM, "%s: %.1f MB of text, which each of the %d processes on this node loads whole "
                       "(about %d times its size: %.0f MB in all), and the node has %.0f MB available%s; replay it on "
                       "fewer processes per node, or analyse it in one process (cdag analyze)", a->path,
                       (double)sb.st_size / 1e6, procs, LOADED_PER_BYTE, need / 1e6, (double)avail / 1e6,
                       memory_source(a));
  }
  return replay_agree(rc);
}

/* Every rank loads the file; its rank count must be the run's. */
static int load(replay_state *st, const replay_args *a) {
  int rc = replay_agree(cmd_load_rc(a->path, a->buffers, &st->gg));
  if (rc || st->gg->nprocs == st->nprocs) return rc;
  return cdag__error(CDAG_ERR_ARG, "%s has %d ranks, run with mpiexec -n %d (this run has %d)", a->path,
                     st->gg->nprocs, st->gg->nprocs, st->nprocs);
}

/* The memory of this node's processes against what the node has, before any is touched: a
   recording's one-sided accesses can span gigabytes of scratch (MPICH's
   rma/derived_acc_flush_local: 1,000 accumulates of 4 MB in one epoch, 8 GB over 3 ranks), and
   the kernel would kill the processes one by one. Each process holds its rank's block and a
   copy of it. Both schedules stay built (the run as written and the plan, timed after) and
   each may keep a copy of every message the rank sends that an operation depends on (the
   engine stages such a send, so that what follows may write its bytes while it is in
   flight) and of every message to itself: the staged bytes twice (a plan that runs as
   written stages the same sends); the plan's own messages up to the block again (it may move
   all of a rank's bytes in one message). MPICH's pt2pt/large_message at 3 processes (rank 0
   sends one 2.16 GB buffer twice) held 7 times 2.16 GB on rank 0, where the ranks' average
   times 3 had been counted, and the kernel killed it. The ranks' sum, times the processes
   here over the ranks. */
static int blocks_fit(const replay_state *st, const replay_args *a) {
  const cdag_graph *gg = st->gg;
  double span = 0, staged = 0, mine = 0;   /* staged: sends an operation depends on (all, where
                                              the graph has no dependency lists), and to itself */
  for (int r = 0; r < st->nprocs; r++) span += (double)st->map.size[r];
  for (int64_t i = 0; i < gg->nops; i++)
    if (gg->kind[i] == IR_SEND &&
        (!gg->succ_start || gg->succ_start[i + 1] > gg->succ_start[i] || gg->peer[i] == gg->rank[i])) {
      staged += (double)gg->bytes[i];
      if (gg->rank[i] == st->rank) mine += (double)gg->bytes[i];
    }
  uint64_t avail = node_memory(a);
  double need = (3 * span + 2 * staged) * replay_node_size() / st->nprocs;
  if (!avail || need <= (double)avail) return CDAG_OK;
  return cdag__error(CDAG_ERR_NOMEM, "%s: the ranks' operations span %.0f MB of memory (rank %d's: %.0f MB) and "
                     "their staged sends move %.0f MB (rank %d's: %.0f MB); a replay holds each rank's three times (the run as "
                     "written kept to compare, the plan's messages) and two copies of its staged sends (one in each of "
                     "its two runs): %.0f MB "
                     "for the %d processes on this node, which has %.0f MB available%s; replay it on fewer processes per node",
                     a->path, span / 1e6, st->rank, (double)st->map.size[st->rank] / 1e6, staged / 1e6, st->rank,
                     mine / 1e6, need / 1e6, replay_node_size(), (double)avail / 1e6, memory_source(a));
}

/* The block and its copy: 64-byte aligned, as the map keeps addresses modulo 64. */
static int alloc_memory(replay_state *st) {
  uint64_t size = st->map.size[st->rank];
  if (size <= SIZE_MAX / 2) {
    st->block = base_malloc(size ? (size_t)size : 1);
    st->written = malloc(size ? (size_t)size : 1);
  }
  if (st->block && st->written) return CDAG_OK;
  return cdag__error(CDAG_ERR_NOMEM, "rank %d: out of memory for the %llu bytes its operations span (twice: the run "
                     "as written is kept to compare)", st->rank, (unsigned long long)size);
}

/* Operations as the file wrote them: not the target sides of gets and puts, nor the messages
   native collectives became. */
static int64_t file_ops(const cdag_graph *gg) {
  int64_t n = 0;
  for (int64_t i = 0; i < gg->nops; i++) n += !gg->os || (gg->os[i] != IR_OS_PARTNER && gg->os[i] != IR_OS_COLL_PART);
  return n;
}

/* The file's gets, puts, accumulates and fences, which the schedules run as the messages
   they expand to (so its report counts those). */
static void file_onesided(const cdag_graph *gg, int64_t os[4]) {
  memset(os, 0, 4 * sizeof *os);
  for (int64_t i = 0; gg->os && i < gg->nops; i++) {
    int k = gg->os[i];
    os[0] += k == IR_OS_GET, os[1] += k == IR_OS_PUT, os[2] += k == IR_OS_ACC, os[3] += k == IR_OS_FENCE;
  }
}

/* The map, the memory, what to compare, and the distributed graph of this rank. */
static int build(replay_state *st, const replay_args *a) {
  int rc = replay_map_build(st->gg, &st->map);
  if (!rc) rc = blocks_fit(st, a);
  if (!rc) rc = alloc_memory(st);
  if (!rc) rc = rm_build(st->gg, &st->map, st->rank, &st->mem);
  if ((rc = replay_agree(rc))) return rc;
  rc = replay_graph_create(&st->g);
  if (!rc) rc = replay_copy_rank(st->gg, &st->map, st->block, st->g, a->compute_time);
  if (!rc) rc = rm_unhashed(&st->mem, st->block, st->g);
  st->file_ops = file_ops(st->gg);
  file_onesided(st->gg, st->file_os);
  cdag_graph_free(&st->gg);   /* every rank held the whole file: the compiling rank needs the room */
  return replay_agree(rc);
}

/* Compiles with o, runs once from the initial content: the memory is in st->block. */
static int run_once(replay_state *st, const cdag_options *o, cdag_schedule **s, double *compile_s) {
  rm_fill(&st->mem, st->block);
  int rc = replay_compile(st->g, o, s, compile_s);
  return rc ? rc : replay_agree(cdag_run(*s));
}

/* As written, then compiled with opts, from the same content; the memory must end the same. */
static int check(replay_state *st, const cdag_options *opts, int corrupt_rank) {
  cdag_options o;
  double unused;
  cdag_options_init(&o);
  o.detect = 0;
  int rc = run_once(st, &o, &st->sw, &unused);
  if (rc) return rc;
  memcpy(st->written, st->block, st->map.size[st->rank]);
  if ((rc = run_once(st, opts, &st->sc, &st->compile_c))) return rc;
  if (corrupt_rank == st->rank && !rm_corrupt(&st->mem, st->block))
    fprintf(stderr, "cdag replay: CDAG_REPLAY_CORRUPT=%d: rank %d compares no byte to corrupt\n", corrupt_rank, st->rank);
  return replay_agree(rm_compare(&st->mem, st->written, st->block, stderr));
}

/* DIR/replay-R.mem: `ADDR LEN HEX` per range of the rank, as the run as written left it. */
static int dump(const replay_state *st, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/replay-%d.mem", dir, st->rank);
  FILE *f = fopen(path, "w");
  if (!f) return cdag__error(CDAG_ERR_IO, "%s: cannot write", path);
  const replay_map *m = &st->map;
  for (int64_t k = m->start[st->rank]; k < m->start[st->rank + 1]; k++) {
    fprintf(f, "0x%llx %llu ", (unsigned long long)m->lo[k], (unsigned long long)m->len[k]);
    for (uint64_t i = 0; i < m->len[k]; i++) fprintf(f, "%02x", st->written[m->off[k] + i]);
    fprintf(f, "\n");
  }
  return fclose(f) ? cdag__error(CDAG_ERR_IO, "%s: cannot write", path) : CDAG_OK;
}

/* ---- output (rank 0) ---- */

/* Iterations after which compiling has paid for itself (from the medians); < 0: never. */
static double break_even(const replay_state *st) {
  double w = st->t_w.median, c = st->t_c.median;
  return c < w ? ceil(st->compile_c / (w - c)) : -1;
}

/* As written over compiled, from the medians (0: no compiled time). */
static double speedup(const replay_state *st) { return st->t_c.median > 0 ? st->t_w.median / st->t_c.median : 0.0; }

static void print_text(const replay_state *st, const replay_args *a, uint64_t bytes, uint64_t values,
                       uint64_t overflowed) {
  printf("replay %s: %d ranks, %lld operations, %d iterations each way, repeated %d times\n", a->path, st->nprocs,
         (long long)st->file_ops, a->iters, a->repeat);
  const int64_t *os = st->file_os;
  if (os[0] || os[1] || os[2] || os[3])
    printf("one-sided: %lld gets, %lld puts, %lld accumulates, %lld fences, run as the messages they expand to "
           "(the report below counts those)\n", (long long)os[0], (long long)os[1], (long long)os[2], (long long)os[3]);
  printf("same memory as written and compiled on every rank: %llu bytes equal, %llu floating-point sums and "
         "products within tolerance", (unsigned long long)bytes, (unsigned long long)(values - overflowed));
  if (overflowed)   /* replay_mem.c: a product fed its own results, beyond the fill's range */
    printf(" (%llu more overflowed in one order or both: not compared)", (unsigned long long)overflowed);
  printf("\n");
  printf("as written: %.3f us per iteration (median of %d; best %.3f us)\n", st->t_w.median * 1e6, a->repeat,
         st->t_w.best * 1e6);
  printf("compiled:   %.3f us per iteration (median of %d; best %.3f us): %.2fx, from the medians\n",
         st->t_c.median * 1e6, a->repeat, st->t_c.best * 1e6, speedup(st));
  printf("compile:    %.3f ms\n", st->compile_c * 1e3);
  double be = break_even(st);
  if (be >= 0) printf("break-even: %.0f iterations\n", be);
  else printf("break-even: never (the compiled schedule is not faster)\n");
  cdag_schedule_report(st->sc, stdout, 0);
}

static void print_json(const replay_state *st, const replay_args *a, uint64_t bytes, uint64_t values,
                       uint64_t overflowed) {
  printf("{\"cdag_replay\": 1, \"file\": ");
  ir_json_string(stdout, a->path);
  printf(", \"nprocs\": %d, \"ops\": %lld, \"iterations\": %d, \"repeat\": %d,\n", st->nprocs,
         (long long)st->file_ops, a->iters, a->repeat);
  printf(" \"onesided\": {\"get\": %lld, \"put\": %lld, \"accumulate\": %lld, \"fence\": %lld},\n",
         (long long)st->file_os[0], (long long)st->file_os[1], (long long)st->file_os[2], (long long)st->file_os[3]);
  printf(" \"compared\": {\"bytes\": %llu, \"float_values\": %llu, \"float_overflowed\": %llu},\n",
         (unsigned long long)bytes, (unsigned long long)(values - overflowed), (unsigned long long)overflowed);
  printf(" \"seconds\": {\"as_written\": %.9g, \"compiled\": %.9g, \"compile\": %.9g},\n", st->t_w.median,
         st->t_c.median, st->compile_c);
  printf(" \"best\": {\"as_written\": %.9g, \"compiled\": %.9g}, \"speedup\": %.6g,\n", st->t_w.best, st->t_c.best,
         speedup(st));
  double be = break_even(st);
  if (be >= 0) printf(" \"break_even\": %.0f,\n", be);
  else printf(" \"break_even\": null,\n");
  printf(" \"report\": ");
  cdag_schedule_report(st->sc, stdout, 1);
  printf("}\n");
}

/* ---- the command ---- */

static void state_free(replay_state *st) {
  cdag_schedule_free(&st->sw);
  cdag_schedule_free(&st->sc);
  cdag_graph_free(&st->g);
  cdag_graph_free(&st->gg);
  rm_free(&st->mem);
  replay_map_free(&st->map);
  free(st->block);
  free(st->written);
}

/* Without --iterations: as many as take about a quarter of a second in the slower way (at
   most 100, at least 1), from one timed run of each. Every rank gets the same count: the
   times are the slowest rank's. */
static int auto_iterations(cdag_schedule *const *modes, int *iters) {
  double tw = 0, tc = 0;
  int rc = replay_time_runs(modes[0], 1, &tw);
  if (!rc) rc = replay_time_runs(modes[1], 1, &tc);
  double t = tw > tc ? tw : tc;
  *iters = t <= 0.0025 ? 100 : t >= 0.25 ? 1 : (int)(0.25 / t);
  return rc;
}

/* Load, build, check, time: the first error (agreed by every rank) stops it. */
static int replay(replay_state *st, const replay_args *given) {
  replay_args args = *given, *a = &args;
  cdag_settings set;
  int rc = cdag__settings_read(&set);   /* validated by main already */
  if (!rc) rc = memory_fits(a);
  if (!rc) rc = load(st, a);
  if (!rc) rc = build(st, a);
  if (!rc) rc = check(st, &a->opts, set.replay_corrupt);
  if (!rc && a->dump) rc = replay_agree(dump(st, a->dump));
  replay_timing t[2];
  cdag_schedule *const modes[2] = {st->sw, st->sc};
  if (!rc && !a->iters) rc = auto_iterations(modes, &a->iters);
  if (!rc) rc = replay_time_modes(modes, 2, a->iters, a->repeat, t);
  if (rc) return rc;
  st->t_w = t[0];
  st->t_c = t[1];
  uint64_t bytes = replay_sum(st->mem.nbytes), values = replay_sum((uint64_t)st->mem.nvals);
  uint64_t overflowed = replay_sum((uint64_t)st->mem.noverflow);
  if (st->rank == 0 && a->json) print_json(st, a, bytes, values, overflowed);
  else if (st->rank == 0) print_text(st, a, bytes, values, overflowed);
  return CDAG_OK;
}

/* The agreed error, once (rank 0): a different memory or process count says it all in its
   message; other errors are prefixed with what kind of error they are, as in every command. */
static void print_error(const replay_state *st, int rc) {
  if (st->rank != 0) return;
  if (rc == CDAG_ERR_MISMATCH || (st->gg && st->gg->nprocs != st->nprocs))
    fprintf(stderr, "cdag replay: %s\n", cdag_error_message());
  else
    cmd_fail("replay", rc);
}

int cmd_replay(int argc, char **argv) {
  replay_args a;
  replay_state st = {0};
  int started = 0, status = 0;
  if (replay_mpi_init(&started, &st.rank, &st.nprocs)) return cmd_fail("replay", CDAG_ERR_MPI);
  cdag__error_clear();
  if (parse_args(argc, argv, &a)) {
    if (st.rank == 0 && cdag_error_message()[0]) fprintf(stderr, "cdag: %s\n", cdag_error_message());   /* a bad option */
    status = st.rank == 0 ? cmd_usage("replay") : 2;
  } else {
    int rc = replay(&st, &a);
    if (rc) print_error(&st, rc);
    status = rc ? 1 : 0;
  }
  state_free(&st);
  replay_mpi_finalize(started);
  return status;
}

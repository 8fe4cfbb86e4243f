/* cdag bench — bench/scale_bench.c: how the analysis scales with the number of processes.
 *
 * For each pattern and p = 2^lo .. 2^hi: builds the global graph through the API
 * (tests/support/gen_patterns.c), then times finalize+match, dataflow and detection, and
 * reports the kernel's part of that time (sys: page faults), ns per operation and the peak
 * resident memory per process (the process's own VmHWM, graph included; a fresh process per
 * run would be cleaner, so the first column of memory is only exact for the largest p of a
 * run). Optionally writes the graph in the text
 * format and times loading it back. Not a test: run scripts/bench-scale.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "dataflow/dataflow.h"
#include "detect/detect.h"
#include "format/format.h"
#include "support/support.h"

/* Wall-clock seconds; CDAG_BENCH_CPU=1: this process's CPU seconds (for a busy machine). */
static double now(void) {
  static int cpu = -1;
  if (cpu < 0) cpu = getenv("CDAG_BENCH_CPU") && atoi(getenv("CDAG_BENCH_CPU")) == 1;
  struct timespec t;
  clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* System CPU seconds of this process: the kernel's share, mostly zeroing fresh pages. */
static double sys_now(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

static long peak_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) kib = atol(line + 6);
  if (f) fclose(f);
  return kib;
}

typedef int (*gen_fn)(cdag_graph *g, int p);
static const gen_bufs B = {.data = 0x10000, .out = 0x20000, .scratch = 0x40000, .tag = 0};

static int binomial(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_bcast_binomial(g, &s, 0, 64, &B); }
static int linear(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_bcast_linear(g, &s, 0, 64, &B); }
static int chain(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_bcast_chain(g, &s, 0, 64, 4, &B); }
static int ring_allgather(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_allgather_ring(g, &s, 8, &B); }
static int butterfly(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_alltoall_butterfly(g, &s, 8, &B); }
static int rd_allreduce(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_allreduce_recursive_doubling(g, &s, 1, &B); }
static int rd_by_rank(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_allreduce_recursive_doubling_by_rank(g, &s, 1, &B); }
static int barrier(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_barrier_dissemination(g, &s, &B); }
static int scatter_allgather(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_bcast_scatter_allgather(g, &s, 0, 64 * (uint64_t)p, &B); }
static int halo(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_halo1d(g, &s, 64, &B); }
static int linear_gather(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_gather_linear(g, &s, 0, 8, &B); }
static int linear_scatter(cdag_graph *g, int p) { gen_set s = {0, 1, p}; return gen_scatter_linear(g, &s, 0, 8, &B); }

static const struct {
  const char *name;
  gen_fn gen;
  int max_log2;   /* patterns with p^2 ops stop early */
} patterns[] = {
    {"binomial_bcast", binomial, 20}, {"linear_bcast", linear, 20},   {"chain_bcast", chain, 20},
    {"scatter_allgather_bcast", scatter_allgather, 11}, {"ring_allgather", ring_allgather, 11},
    {"butterfly_alltoall", butterfly, 10},
    {"rd_allreduce", rd_allreduce, 20},           /* added round by round */
    {"rd_allreduce_by_rank", rd_by_rank, 20},     /* the same graph added rank by rank */
    {"dissemination_barrier", barrier, 20}, {"halo1d", halo, 20},
    {"linear_gather", linear_gather, 20}, {"linear_scatter", linear_scatter, 20},
};

static int run(const char *name, gen_fn gen, int p, const char *file) {
  cdag_graph *g;
  match_result m = {0};
  df_sst *s = NULL;
  cdag_plan *plan = NULL;
  cdag_options o;
  cdag_options_init(&o);
  int rc = cdag_graph_create_global(p, &g);
  if (rc == CDAG_OK) rc = gen(g, p);
  double t0 = now(), s0 = sys_now();
  if (rc == CDAG_OK) rc = ir_finalize(g);
  if (rc == CDAG_OK) rc = match_run(g, &m);
  double t1 = now();
  if (rc == CDAG_OK) rc = dataflow_run_opt(g, &m, DF_WAITSETS_IF_NEEDED | DF_RELEASE_INPUTS, &s);
  double t2 = now();
  if (rc == CDAG_OK) rc = detect_run(g, s, &o, NULL, &plan);
  double t3 = now(), s3 = sys_now();
  if (rc) {
    fprintf(stderr, "%s p=%d: %s: %s\n", name, p, cdag_strerror(rc), cdag_error_message());
    return rc;
  }
  long kib = peak_kib();
  double load = -1;
  if (file) {
    FILE *f = fopen(file, "w");
    if (f && ir_save_file(g, f) == CDAG_OK && fclose(f) == 0) {
      cdag_graph *h;
      double l0 = now();
      if (ir_load_file(file, NULL, &h) == CDAG_OK) load = now() - l0;
      cdag_graph_free(&h);
    }
    remove(file);
  }
  printf("%-22s %8d %10lld %8.4f %8.4f %8.4f %8.4f %8.4f %8.1f %8.0f %8.3f  %s\n", name, p, (long long)g->nops, t1 - t0,
         t2 - t1, t3 - t2, t3 - t0, s3 - s0, 1e9 * (t3 - t0) / (double)g->nops, 1024.0 * (double)kib / p, load,
         plan->ncolls ? det_kind_name(plan->colls[0].kind) : "-");
  cdag_plan_free(&plan);
  match_free(&m);
  cdag_graph_free(&g);
  return CDAG_OK;
}

int main(int argc, char **argv) {
  int lo = argc > 1 ? atoi(argv[1]) : 10, hi = argc > 2 ? atoi(argv[2]) : 16;
  const char *only = argc > 3 ? argv[3] : NULL, *file = getenv("CDAG_BENCH_FILE");
  if (file && !*file) file = NULL; /* set but empty: no load */
  printf("%-22s %8s %10s %8s %8s %8s %8s %8s %8s %8s %8s  %s\n", "pattern", "p", "ops", "match", "dataflow", "detect",
         "total", "sys", "ns/op", "B/proc", "load_s", "found");
  for (size_t i = 0; i < sizeof patterns / sizeof *patterns; i++) {
    if (only && strcmp(only, patterns[i].name) != 0) continue;
    for (int k = lo; k <= hi && k <= patterns[i].max_log2; k++)
      if (run(patterns[i].name, patterns[i].gen, 1 << k, file)) return 1;
  }
  return 0;
}

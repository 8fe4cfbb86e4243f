/* cdag examples — the shared driver of the example programs (header only).
 *
 * Every example describes one communication phase with the cdag API and hands ex_main a
 * pattern: build() adds the rank's ops to a graph, reset() sets inputs and poisons
 * outputs, check() compares the outputs with a direct computation, and out[] lists the
 * output regions. ex_main compiles the graph twice (detect = 1 and detect = 0: the graph as
 * written), runs each schedule `iters` times, checks both results, compares the outputs of
 * the two runs byte for byte on every rank, and prints at rank 0 the compiled report and
 * the time per iteration of both. One-sided examples (cdag_get / cdag_put) also set rma: the
 * same phase written with MPI RMA, run, checked, compared and timed as a third. Usage: prog
 * [iterations] [elements]. Exit status 0 when every rank passed, 1 otherwise. */
#ifndef CDAG_EXAMPLE_H
#define CDAG_EXAMPLE_H

#include <cdag.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  int rank, nprocs;
  int iters;
  size_t n;                 /* elements per block (the example decides what a block is) */
  void *ctx;                /* the example's buffers */
  int (*build)(cdag_graph *g, void *ctx);
  void (*reset)(void *ctx);
  int (*check)(void *ctx);  /* 1 if the outputs are right */
  void (*rma)(void *ctx);   /* one-sided examples: the phase in MPI RMA (its windows in ctx), or NULL */
  int nout;
  struct { void *ptr; size_t bytes; } out[8];
} ex_pattern;

/* Stops the whole job with the message of a failed cdag call. */
#define EX_TRY(call)                                                                         \
  do {                                                                                       \
    int rc_ = (call);                                                                        \
    if (rc_ != CDAG_OK) {                                                                    \
      fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, cdag_strerror(rc_), \
              cdag_error_message());                                                         \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
    }                                                                                        \
  } while (0)

static inline void ex_args(int argc, char **argv, int *iters, size_t *n, size_t default_n) {
  *iters = argc > 1 ? atoi(argv[1]) : 20;
  *n = argc > 2 ? (size_t)atol(argv[2]) : default_n;
  if (*iters < 1) *iters = 1;
  if (*n < 1) *n = 1;
}

static inline void *ex_alloc(size_t bytes) {
  void *p = calloc(bytes ? bytes : 1, 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* Saves the output regions into saved (one concatenated copy). */
static inline void ex_save(const ex_pattern *p, unsigned char *saved) {
  size_t off = 0;
  for (int k = 0; k < p->nout; k++) {
    memcpy(saved + off, p->out[k].ptr, p->out[k].bytes);
    off += p->out[k].bytes;
  }
}

/* Compiles with the given detect flag, runs iters times; returns seconds per run (max over
   ranks) and saves the outputs into saved (one concatenated copy). */
static inline double ex_one(ex_pattern *p, int detect, unsigned char *saved, double *compile_s) {
  cdag_graph *g;
  cdag_schedule *s;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  p->reset(p->ctx);
  EX_TRY(cdag_graph_create(MPI_COMM_WORLD, &g));
  EX_TRY(p->build(g, p->ctx));
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  EX_TRY(cdag_compile(g, &o, &s));
  *compile_s = MPI_Wtime() - t0;
  EX_TRY(cdag_graph_free(&g));
  if (detect && p->rank == 0) cdag_schedule_report(s, stdout, 0);
  EX_TRY(cdag_run(s));  /* warm-up */
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  for (int it = 0; it < p->iters; it++) EX_TRY(cdag_run(s));
  double t = (MPI_Wtime() - t0) / p->iters, tmax;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  ex_save(p, saved);
  EX_TRY(cdag_schedule_free(&s));
  return tmax;
}

/* The MPI RMA form of the phase, run iters times: seconds per run (max over ranks). */
static inline double ex_rma(ex_pattern *p, unsigned char *saved) {
  p->reset(p->ctx);
  p->rma(p->ctx);  /* warm-up */
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int it = 0; it < p->iters; it++) p->rma(p->ctx);
  double t = (MPI_Wtime() - t0) / p->iters, tmax;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  ex_save(p, saved);
  return tmax;
}

static inline int ex_main(ex_pattern *p) {
  enum { WRITTEN, COMPILED, RMA };
  static const char *const what[] = {"as written", "compiled", "MPI RMA"};
  size_t total = 0;
  for (int k = 0; k < p->nout; k++) total += p->out[k].bytes;
  int runs = p->rma ? 3 : 2, mine = 1, all = 0;
  unsigned char *saved[3] = {NULL, NULL, NULL};
  double tc[2] = {0, 0}, t[3] = {0, 0, 0};
  for (int k = runs - 1; k >= 0; k--) {   /* the reference first: MPI RMA, or the compiled run */
    saved[k] = ex_alloc(total);
    t[k] = k == RMA ? ex_rma(p, saved[k]) : ex_one(p, k == COMPILED, saved[k], &tc[k]);
    int right = p->check(p->ctx), same = memcmp(saved[k], saved[runs - 1], total) == 0;
    if (!right || !same)
      fprintf(stderr, "%s: rank %d: %s result %s, buffers %s\n", p->name, p->rank, what[k], right ? "right" : "WRONG",
              same ? "equal" : "DIFFER");
    mine &= right && same;
  }
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (p->rank == 0) {
    printf("%s: %d ranks, %zu elements, %d iterations: as written %.2f us/iter, compiled %.2f us/iter", p->name,
           p->nprocs, p->n, p->iters, t[WRITTEN] * 1e6, t[COMPILED] * 1e6);
    if (p->rma) printf(", MPI RMA %.2f us/iter", t[RMA] * 1e6);
    printf(" (compile %.3f ms): %s\n", tc[COMPILED] * 1e3, all ? "OK" : "FAILED");
  }
  for (int k = 0; k < runs; k++) free(saved[k]);
  return all ? 0 : 1;
}

static inline void ex_init(int *argc, char ***argv, ex_pattern *p, const char *name, size_t default_n) {
  MPI_Init(argc, argv);
  memset(p, 0, sizeof *p);
  p->name = name;
  MPI_Comm_rank(MPI_COMM_WORLD, &p->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p->nprocs);
  ex_args(*argc, *argv, &p->iters, &p->n, default_n);
}

#endif

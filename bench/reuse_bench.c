/* cdag benchmark — what a graph rebuilt every iteration costs when the cache hits
 * (a benchmark, not a test)
 *
 * docs/semantics.md presents rebuilding the graph every iteration as the usual way; a
 * rebuild that hits the cache should cost the building of the operations plus one small
 * agreement among the ranks. For every phase it times, per iteration:
 *   once:     the schedule compiled once, then cdag_run;
 *   rebuilt:  cdag_graph_create, the ops, cdag_compile (a cache hit), cdag_graph_free,
 *             cdag_run, cdag_schedule_free: what a program that rebuilds does;
 *   build:    cdag_graph_create, the ops, cdag_graph_free (no compile, no run): the floor
 *             of the rebuild;
 *   agree:    8 int64 agreed (MAX) as cdag_compile agrees them (point-to-point rounds);
 *   floor:    build, that allreduce and cdag_run of the schedule compiled once: what the
 *             issue allows a rebuild (the operations built, one small agreement, the run);
 * and prints rebuilt/once and rebuilt/floor. Phases (r: rank, P ranks, left r-1, right r+1, periodic):
 *   halo+dot: a 1-D halo of 2 x 8 KiB (each face packed by a local copy, sent, received
 *             and unpacked by a copy: 8 ops) and an allreduce of 8 doubles written
 *             linearly (send to and receive from every other rank, copy, P-1 local sums):
 *             12 ops per rank at 2 ranks;
 *   ring N:   N ops per rank: N/2 pieces of 64 B sent right and N/2 received from the left.
 * Times: the mean of a timed batch after a barrier, maximum over ranks, best of 15 batches,
 * the variants taking turns. With `multiple`, MPI is initialised with MPI_THREAD_MULTIPLE,
 * where each graph duplicates its communicator (docs/semantics.md, threads).
 * Usage: mpiexec -n 2 reuse_bench [halo | ring] [multiple] */
#include <cdag.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int R, P;
enum { REPS = 15, FACE = 8192, NDOT = 8 };

#define TRY(call)                                                                              \
  do {                                                                                         \
    int rc_ = (call);                                                                          \
    if (rc_) {                                                                                 \
      fprintf(stderr, "rank %d: %s: %s\n", R, #call, cdag_error_message());                    \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                            \
    }                                                                                          \
  } while (0)

/* The buffers every phase works on (the same addresses each iteration: a cache hit). */
typedef struct {
  unsigned char *field;      /* 1-D field: left halo, interior (2 FACE), right halo */
  unsigned char *pack[2];    /* packed faces to send left and right */
  unsigned char *halo[2];    /* received faces from left and right */
  double dot[NDOT], *peer;   /* own partial sums, and every rank's received (P x NDOT) */
  double sum[NDOT];          /* the allreduce's result */
  unsigned char *sbuf, *rbuf;  /* the ring's pieces */
} bufs;

typedef enum { HALO, RING } phase;
typedef struct { phase ph; int nops; } shape;

static void build_halo(cdag_graph *g, bufs *b) {
  int nb[2] = {(R + P - 1) % P, (R + 1) % P};
  size_t n = 4 * FACE;
  TRY(cdag_copy_local(g, b->field + FACE, b->pack[0], FACE, NULL));
  TRY(cdag_copy_local(g, b->field + n - 2 * FACE, b->pack[1], FACE, NULL));
  for (int d = 0; d < 2; d++) TRY(cdag_send(g, b->pack[d], FACE, nb[d], d, NULL));
  for (int d = 0; d < 2; d++) TRY(cdag_recv(g, b->halo[d], FACE, nb[d], 1 - d, NULL));
  TRY(cdag_copy_local(g, b->halo[0], b->field, FACE, NULL));
  TRY(cdag_copy_local(g, b->halo[1], b->field + n - FACE, FACE, NULL));
  for (int p = 0; p < P; p++)
    if (p != R) TRY(cdag_send(g, b->dot, sizeof b->dot, p, 2, NULL));
  for (int p = 0; p < P; p++)
    if (p != R) TRY(cdag_recv(g, b->peer + p * NDOT, sizeof b->dot, p, 2, NULL));
  TRY(cdag_copy_local(g, b->dot, b->sum, sizeof b->dot, NULL));
  for (int p = 0; p < P; p++)
    if (p != R) TRY(cdag_reduce_local(g, b->peer + p * NDOT, b->sum, NDOT, MPI_DOUBLE, MPI_SUM, NULL));
}

static void build_ring(cdag_graph *g, bufs *b, int nops) {
  int k = nops / 2;
  for (int i = 0; i < k; i++) TRY(cdag_send(g, b->sbuf + 64 * i, 64, (R + 1) % P, 0, NULL));
  for (int i = 0; i < k; i++) TRY(cdag_recv(g, b->rbuf + 64 * i, 64, (R + P - 1) % P, 0, NULL));
}

static cdag_graph *build(const shape *c, bufs *b) {
  cdag_graph *g;
  TRY(cdag_graph_create(MPI_COMM_WORLD, &g));
  if (c->ph == HALO) build_halo(g, b);
  else build_ring(g, b, c->nops);
  return g;
}

static cdag_schedule *compile(const shape *c, bufs *b) {
  cdag_graph *g = build(c, b);
  cdag_schedule *s;
  TRY(cdag_compile(g, NULL, &s));
  TRY(cdag_graph_free(&g));
  return s;
}

/* The agreement as cdag_compile makes it: 8 int64, MAX, over point-to-point rounds to
   rank + 1, + 2, + 4, .. (a third of MPI_Allreduce's time at 2 ranks with MPICH). */
static MPI_Comm agree_comm;
static void agree(void) {
  int64_t v[8] = {R}, in[8];
  for (int k = 1; k < P; k <<= 1) {
    MPI_Sendrecv(v, 8, MPI_INT64_T, (R + k) % P, 0, in, 8, MPI_INT64_T, (R - k + P) % P, 0, agree_comm,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < 8; i++) v[i] = in[i] > v[i] ? in[i] : v[i];
  }
}

/* Variants: 0 once (s compiled before), 1 rebuilt, 2 build only, 3 the agreement alone,
   4 the floor (build, agreement, run). */
static void once(int how, const shape *c, bufs *b, cdag_schedule *s) {
  if (how == 0) {
    TRY(cdag_run(s));
  } else if (how == 1) {
    cdag_schedule *t = compile(c, b);
    TRY(cdag_run(t));
    TRY(cdag_schedule_free(&t));
  } else if (how == 2) {
    cdag_graph *g = build(c, b);
    TRY(cdag_graph_free(&g));
  } else {
    if (how == 4) {
      cdag_graph *g = build(c, b);
      TRY(cdag_graph_free(&g));
    }
    agree();
    if (how == 4) TRY(cdag_run(s));
  }
}

static double batch(int how, const shape *c, bufs *b, cdag_schedule *s, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int it = 0; it < iters; it++) once(how, c, b, s);
  double t = (MPI_Wtime() - t0) / iters, tmax;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

/* Zeroes what the phase writes: the ring's pieces, or the halos and the sum. */
static void clear(const bufs *b, size_t bytes) {
  memset(b->rbuf, 0, bytes);
  memset(b->field, 0, FACE);
  memset(b->field + 3 * FACE, 0, FACE);
  memset((void *)b->sum, 0, sizeof b->sum);
}

/* A rebuilt iteration must leave the bytes the schedule compiled once leaves. */
static int same_result(const shape *c, bufs *b, cdag_schedule *s, size_t bytes) {
  size_t n = c->ph == RING ? bytes : 4 * FACE;
  unsigned char *want = malloc(n), *got = c->ph == RING ? b->rbuf : b->field;
  double wsum[NDOT];
  clear(b, bytes);
  TRY(cdag_run(s));
  memcpy(want, got, n);
  memcpy(wsum, b->sum, sizeof wsum);
  clear(b, bytes);
  once(1, c, b, NULL);
  int ok = memcmp(want, got, n) == 0 && memcmp(wsum, b->sum, sizeof wsum) == 0, all;
  free(want);
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

static int bench(const shape *c, bufs *b, size_t bytes) {
  int iters = 10000 / (c->nops + 8);   /* short batches: the best of many finds a quiet spell */
  if (iters < 10) iters = 10;
  cdag_schedule *s = compile(c, b);
  if (!same_result(c, b, s, bytes)) {
    if (R == 0) fprintf(stderr, "reuse_bench: %d ops: a rebuilt run's result differs\n", c->nops);
    return 1;
  }
  double best[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
  for (int v = 0; v < 5; v++)
    for (int k = 0; k < 3; k++) once(v, c, b, s);
  for (int rep = 0; rep < REPS; rep++)
    for (int v = 0; v < 5; v++) {
      double t = batch(v, c, b, s, iters);
      if (t < best[v]) best[v] = t;
    }
  TRY(cdag_schedule_free(&s));
  if (R == 0) {
    printf("%-9s %6d %9.2f %11.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", c->ph == HALO ? "halo+dot" : "ring", c->nops,
           best[0] * 1e6, best[1] * 1e6, best[1] / best[0], best[4] * 1e6, best[1] / best[4], best[2] * 1e6,
           best[3] * 1e6);
    fflush(stdout);
  }
  return 0;
}

int main(int argc, char **argv) {
  static const shape cases[] = {{HALO, 0}, {RING, 10}, {RING, 100}, {RING, 1000}};
  const char *only = NULL;
  int multiple = 0, level;
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "multiple") == 0) multiple = 1;
    else only = argv[a];
  }
  MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &level);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_dup(MPI_COMM_WORLD, &agree_comm);
  size_t bytes = 64 * 1000;
  bufs b = {.field = calloc(4, FACE), .peer = calloc((size_t)P, sizeof b.dot), .sbuf = malloc(bytes),
            .rbuf = calloc(1, bytes)};
  for (int d = 0; d < 2; d++) {
    b.pack[d] = calloc(1, FACE);
    b.halo[d] = calloc(1, FACE);
  }
  for (size_t k = 0; k < bytes; k++) b.sbuf[k] = (unsigned char)(k * 7 + R);
  for (size_t k = FACE; k < 3 * FACE; k++) b.field[k] = (unsigned char)(k * 5 + R);
  for (int i = 0; i < NDOT; i++) b.dot[i] = R + i * 0.5;
  if (R == 0) {
    printf("cdag reuse_bench: %d ranks%s; microseconds per iteration (best of %d batches, max over ranks)\n", P,
           level == MPI_THREAD_MULTIPLE ? ", MPI_THREAD_MULTIPLE" : "", REPS);
    printf("%-9s %6s %9s %11s %9s %9s %9s %9s %9s\n", "phase", "ops", "once_us", "rebuilt_us", "r/once", "floor_us",
           "r/floor", "build_us", "agree_us");
  }
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    shape c = cases[i];
    if (only && strcmp(only, c.ph == HALO ? "halo" : "ring") != 0) continue;
    if (c.ph == HALO) c.nops = 8 + 3 * (P - 1) + 1;
    bad |= bench(&c, &b, bytes);
  }
  for (int d = 0; d < 2; d++) {
    free(b.pack[d]);
    free(b.halo[d]);
  }
  free(b.field);
  free(b.peer);
  free(b.sbuf);
  free(b.rbuf);
  MPI_Comm_free(&agree_comm);
  MPI_Finalize();
  return bad;
}

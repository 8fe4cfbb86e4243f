/* cdag benchmark — the shapes of issue #32, written the way a new user writes them
 * (a benchmark, not a test).
 *
 * Each shape is one communication phase built through the public API (cdag.h only): a
 * one-sided histogram, a transpose of MPI_Type_vector column blocks, a 1-D Jacobi halo, a
 * 2-D halo with vector-typed columns, a ring shift, an irregular sparse-matrix (CG) halo and
 * the dot products of a CG step (an allreduce written as sends and sums). For each it times
 * one run of:
 *   mpi:      the same phase written by hand in MPI, with the same datatypes (point-to-point,
 *             or MPI_Put between fences for the one-sided histogram);
 *   written:  cdag_run with detect = 0 (the graph as written, through cdag);
 *   compiled: cdag_run with default options (what cdag_compile chose);
 * checks that the three leave the same bytes, and prints µs, compiled/written, and the plan
 * the compiled schedule runs (its report's collectives, or "as written").
 * Times: the mean of a timed batch after a barrier, maximum over ranks, best of 9 batches,
 * the variants taking turns (as bench/rewrite_bench.c). Batches last about 20 ms. On a busy
 * machine more batches find more quiet ones: CDAG_BENCH_BATCHES=N (default 9) sets their count.
 * Every shape runs at any number of ranks >= 2 (the CG dot products: a power of two); runs
 * with more ranks than the machine has cores say so in their header.
 * Usage: mpiexec -n P shapes_bench [--save DIR] [SHAPE...]. With --save, nothing is timed:
 * each shape's graph as written is saved (cdag_graph_dump) to DIR/SHAPE_pP.cdag, for the
 * offline tools (cdag model, cdag analyze). Buffers live in one arena mapped at a fixed
 * address when the system allows, and the packing areas cdag allocates for typed messages are
 * renumbered, so saved files hold the same addresses from run to run. */
#define _DEFAULT_SOURCE
#include <cdag.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { NVAR = 3, MAXOUT = 4, ARENA = 4 << 20 };
#define ARENA_AT ((void *)0x100000000ull)   /* 4 GiB: below the heap and mmap areas of x86-64 */

#define TRY(call)                                                                              \
  do {                                                                                         \
    int rc_ = (call);                                                                          \
    if (rc_) {                                                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cdag_error_message());     \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                            \
    }                                                                                          \
  } while (0)

/* One shape's state on this rank: its buffers (in the arena), MPI objects, outputs. */
typedef struct {
  int rank, nprocs;
  unsigned char *arena;
  size_t used;
  double *a, *b, *c;              /* the shape's buffers (meaning per shape) */
  int64_t *ia, *ib, *ic;
  MPI_Datatype type;              /* a derived datatype the shape uses, or MPI_DATATYPE_NULL */
  MPI_Win win;                    /* the histogram's window, or MPI_WIN_NULL */
  int nout;
  struct { void *ptr; size_t bytes; } out[MAXOUT];   /* what a run writes and the user reads */
} ctx;

/* A shape: allocation, inputs, the graph as written, the same phase in MPI. */
typedef struct {
  const char *name;
  const char *about;              /* one line for the saved file's header */
  void (*setup)(ctx *c);          /* buffers, datatypes, outputs */
  void (*reset)(ctx *c);          /* inputs set, outputs poisoned */
  int (*build)(cdag_graph *g, ctx *c);
  void (*mpi)(ctx *c);
  int (*fits)(int nprocs);        /* 1 if the shape runs at nprocs ranks */
} shape;

static void *take(ctx *c, size_t bytes) {
  size_t at = (c->used + 63) & ~(size_t)63;
  if (at + bytes > ARENA) {
    fprintf(stderr, "shapes_bench: arena full\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  c->used = at + bytes;
  return c->arena + at;
}

static void output(ctx *c, void *ptr, size_t bytes) {
  c->out[c->nout].ptr = ptr;
  c->out[c->nout++].bytes = bytes;
}

/* MPI_Waitall with statuses (GCC takes MPI_STATUSES_IGNORE for an empty array). */
enum { MAXREQ = 136 };
static void waitall(int n, MPI_Request *rq) {
  MPI_Status st[MAXREQ];
  MPI_Waitall(n, rq, st);
}

static int any(int nprocs) { return nprocs >= 2; }
static int pow2(int nprocs) { return nprocs >= 2 && (nprocs & (nprocs - 1)) == 0; }

/* ---- histogram: each rank counts NB bins of every rank's range and puts rank t's counts
   into slot `rank` of t's segment (one-sided, between two fences), then sums its slots. ---- */
enum { HIST_NB = 16 };

static void hist_setup(ctx *c) {
  size_t all = (size_t)c->nprocs * HIST_NB;
  c->ia = take(c, all * 8);       /* local counts, t's range at t * NB */
  c->ib = take(c, all * 8);       /* the segment: slot k holds rank k's counts of my range */
  c->ic = take(c, HIST_NB * 8);   /* my bins */
  MPI_Win_create(c->ib, (MPI_Aint)(all * 8), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &c->win);
  output(c, c->ib, all * 8);
  output(c, c->ic, HIST_NB * 8);
}

static void hist_reset(ctx *c) {
  for (size_t k = 0; k < (size_t)c->nprocs * HIST_NB; k++) {
    c->ia[k] = (int64_t)(c->rank * 1000 + (int)k);
    c->ib[k] = -1;
  }
  for (size_t k = 0; k < HIST_NB; k++) c->ic[k] = -1;
}

static int hist_build(cdag_graph *g, ctx *c) {
  int seg, rc = cdag_segment(g, c->ib, (size_t)c->nprocs * HIST_NB * 8, &seg);
  if (!rc) rc = cdag_fence(g);
  for (int t = 0; !rc && t < c->nprocs; t++)
    rc = cdag_put(g, c->ia + t * HIST_NB, HIST_NB * 8, t, seg, (size_t)c->rank * HIST_NB * 8, NULL);
  if (!rc) rc = cdag_fence(g);
  if (!rc) rc = cdag_copy_local(g, c->ib, c->ic, HIST_NB * 8, NULL);
  for (int k = 1; !rc && k < c->nprocs; k++)
    rc = cdag_reduce_local(g, c->ib + k * HIST_NB, c->ic, HIST_NB, MPI_INT64_T, MPI_SUM, NULL);
  return rc;
}

static void hist_mpi(ctx *c) {
  MPI_Win_fence(0, c->win);
  for (int t = 0; t < c->nprocs; t++)
    MPI_Put(c->ia + t * HIST_NB, HIST_NB, MPI_INT64_T, t, (MPI_Aint)c->rank * HIST_NB, HIST_NB, MPI_INT64_T, c->win);
  MPI_Win_fence(0, c->win);
  memcpy(c->ic, c->ib, HIST_NB * 8);
  for (int k = 1; k < c->nprocs; k++)
    for (int i = 0; i < HIST_NB; i++) c->ic[i] += c->ib[k * HIST_NB + i];
}

/* ---- transpose: n rows of P*n doubles; column block j (an MPI_Type_vector) goes to rank j,
   which receives it as n*n contiguous doubles at block `rank` of its output. ---- */
enum { TRANS_N = 32 };

static void trans_setup(ctx *c) {
  size_t n = TRANS_N, all = (size_t)c->nprocs * n * n;
  c->a = take(c, all * 8);
  c->b = take(c, all * 8);
  MPI_Type_vector((int)n, (int)n, (int)(n * (size_t)c->nprocs), MPI_DOUBLE, &c->type);
  MPI_Type_commit(&c->type);
  output(c, c->b, all * 8);
}

static void trans_reset(ctx *c) {
  size_t all = (size_t)c->nprocs * TRANS_N * TRANS_N;
  for (size_t k = 0; k < all; k++) {
    c->a[k] = c->rank * 1e6 + (double)k;
    c->b[k] = -1;
  }
}

static int trans_build(cdag_graph *g, ctx *c) {
  size_t n = TRANS_N;
  int rc = 0;
  for (int j = 0; !rc && j < c->nprocs; j++) rc = cdag_recv(g, c->b + (size_t)j * n * n, n * n * 8, j, 0, NULL);
  for (int j = 0; !rc && j < c->nprocs; j++) rc = cdag_send_type(g, c->a + (size_t)j * n, 1, c->type, j, 0, NULL);
  return rc;
}

static void trans_mpi(ctx *c) {
  enum { MAXP = 64 };
  MPI_Request rq[2 * MAXP];
  size_t n = TRANS_N;
  int p = c->nprocs;
  for (int j = 0; j < p; j++) MPI_Irecv(c->b + (size_t)j * n * n, (int)(n * n), MPI_DOUBLE, j, 0, MPI_COMM_WORLD, &rq[j]);
  for (int j = 0; j < p; j++) MPI_Isend(c->a + (size_t)j * n, 1, c->type, j, 0, MPI_COMM_WORLD, &rq[p + j]);
  waitall(2 * p, rq);
}

static int trans_fits(int nprocs) { return nprocs >= 2 && nprocs <= 64; }

/* ---- jacobi: a P x 1 strip decomposition, ROWS rows of COLS doubles per rank plus a ghost
   row above and below; edges are not periodic (MPI_PROC_NULL beyond them). ---- */
enum { JAC_ROWS = 8, JAC_COLS = 128 };

static void jac_setup(ctx *c) {
  c->a = take(c, (JAC_ROWS + 2) * JAC_COLS * 8);
  output(c, c->a, (JAC_ROWS + 2) * JAC_COLS * 8);
}

static void jac_reset(ctx *c) {
  for (size_t k = 0; k < (JAC_ROWS + 2) * JAC_COLS; k++)
    c->a[k] = k < JAC_COLS || k >= (JAC_ROWS + 1) * JAC_COLS ? -1 : c->rank * 1e6 + (double)k;
}

static int up_of(const ctx *c) { return c->rank > 0 ? c->rank - 1 : MPI_PROC_NULL; }
static int down_of(const ctx *c) { return c->rank < c->nprocs - 1 ? c->rank + 1 : MPI_PROC_NULL; }

static int jac_build(cdag_graph *g, ctx *c) {
  double *u = c->a;
  size_t row = JAC_COLS * 8;
  int rc = cdag_recv(g, u, row, up_of(c), 0, NULL);
  if (!rc) rc = cdag_recv(g, u + (JAC_ROWS + 1) * JAC_COLS, row, down_of(c), 1, NULL);
  if (!rc) rc = cdag_send(g, u + JAC_COLS, row, up_of(c), 1, NULL);
  if (!rc) rc = cdag_send(g, u + JAC_ROWS * JAC_COLS, row, down_of(c), 0, NULL);
  return rc;
}

static void jac_mpi(ctx *c) {
  MPI_Request rq[4];
  double *u = c->a;
  MPI_Irecv(u, JAC_COLS, MPI_DOUBLE, up_of(c), 0, MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(u + (JAC_ROWS + 1) * JAC_COLS, JAC_COLS, MPI_DOUBLE, down_of(c), 1, MPI_COMM_WORLD, &rq[1]);
  MPI_Isend(u + JAC_COLS, JAC_COLS, MPI_DOUBLE, up_of(c), 1, MPI_COMM_WORLD, &rq[2]);
  MPI_Isend(u + JAC_ROWS * JAC_COLS, JAC_COLS, MPI_DOUBLE, down_of(c), 0, MPI_COMM_WORLD, &rq[3]);
  waitall(4, rq);
}

/* ---- halo2d: a PX x PY grid (MPI_Dims_create: 2 x 2 at 4 ranks), N x N doubles per rank
   inside one ghost layer; rows travel contiguous, columns as an MPI_Type_vector; edges are
   not periodic. Neighbours: north, south, west, east (MPI_PROC_NULL at the edges). ---- */
enum { H2_N = 32, H2_W = H2_N + 2 };

static void h2_neighbours(const ctx *c, int nb[4]) {
  int dims[2] = {0, 0};
  MPI_Dims_create(c->nprocs, 2, dims);
  int i = c->rank / dims[1], j = c->rank % dims[1];
  nb[0] = i > 0 ? c->rank - dims[1] : MPI_PROC_NULL;
  nb[1] = i < dims[0] - 1 ? c->rank + dims[1] : MPI_PROC_NULL;
  nb[2] = j > 0 ? c->rank - 1 : MPI_PROC_NULL;
  nb[3] = j < dims[1] - 1 ? c->rank + 1 : MPI_PROC_NULL;
}

static void h2_setup(ctx *c) {
  c->a = take(c, H2_W * H2_W * 8);
  MPI_Type_vector(H2_N, 1, H2_W, MPI_DOUBLE, &c->type);
  MPI_Type_commit(&c->type);
  output(c, c->a, H2_W * H2_W * 8);
}

static void h2_reset(ctx *c) {
  for (int i = 0; i < H2_W; i++)
    for (int j = 0; j < H2_W; j++)
      c->a[i * H2_W + j] = i == 0 || j == 0 || i == H2_W - 1 || j == H2_W - 1 ? -1 : c->rank * 1e6 + i * H2_W + j;
}

/* The faces: where each neighbour's ghosts are received and my boundary is sent from. */
static double *h2_ghost(ctx *c, int d) {
  static const int at[4][2] = {{0, 1}, {H2_W - 1, 1}, {1, 0}, {1, H2_W - 1}};
  return c->a + at[d][0] * H2_W + at[d][1];
}
static double *h2_edge(ctx *c, int d) {
  static const int at[4][2] = {{1, 1}, {H2_N, 1}, {1, 1}, {1, H2_N}};
  return c->a + at[d][0] * H2_W + at[d][1];
}

static int h2_build(cdag_graph *g, ctx *c) {
  int nb[4], rc = 0;
  h2_neighbours(c, nb);
  for (int d = 0; !rc && d < 4; d++)   /* tag: the direction the message travels */
    rc = d < 2 ? cdag_recv(g, h2_ghost(c, d), H2_N * 8, nb[d], d ^ 1, NULL)
               : cdag_recv_type(g, h2_ghost(c, d), 1, c->type, nb[d], d ^ 1, NULL);
  for (int d = 0; !rc && d < 4; d++)
    rc = d < 2 ? cdag_send(g, h2_edge(c, d), H2_N * 8, nb[d], d, NULL)
               : cdag_send_type(g, h2_edge(c, d), 1, c->type, nb[d], d, NULL);
  return rc;
}

static void h2_mpi(ctx *c) {
  MPI_Request rq[8];
  int nb[4];
  h2_neighbours(c, nb);
  for (int d = 0; d < 4; d++) {
    int rows = d < 2;
    MPI_Irecv(h2_ghost(c, d), rows ? H2_N : 1, rows ? MPI_DOUBLE : c->type, nb[d], d ^ 1, MPI_COMM_WORLD, &rq[d]);
  }
  for (int d = 0; d < 4; d++) {
    int rows = d < 2;
    MPI_Isend(h2_edge(c, d), rows ? H2_N : 1, rows ? MPI_DOUBLE : c->type, nb[d], d, MPI_COMM_WORLD, &rq[4 + d]);
  }
  waitall(8, rq);
}

/* ---- ring: every rank sends RING_K doubles to the next rank and receives as many from the
   previous one (periodic). ---- */
enum { RING_K = 128 };

static void ring_setup(ctx *c) {
  c->a = take(c, RING_K * 8);
  c->b = take(c, RING_K * 8);
  output(c, c->b, RING_K * 8);
}

static void ring_reset(ctx *c) {
  for (size_t k = 0; k < RING_K; k++) {
    c->a[k] = c->rank * 1e6 + (double)k;
    c->b[k] = -1;
  }
}

static int ring_build(cdag_graph *g, ctx *c) {
  int p = c->nprocs, rc = cdag_recv(g, c->b, RING_K * 8, (c->rank + p - 1) % p, 0, NULL);
  return rc ? rc : cdag_send(g, c->a, RING_K * 8, (c->rank + 1) % p, 0, NULL);
}

static void ring_mpi(ctx *c) {
  MPI_Request rq[2];
  int p = c->nprocs;
  MPI_Irecv(c->b, RING_K, MPI_DOUBLE, (c->rank + p - 1) % p, 0, MPI_COMM_WORLD, &rq[0]);
  MPI_Isend(c->a, RING_K, MPI_DOUBLE, (c->rank + 1) % p, 0, MPI_COMM_WORLD, &rq[1]);
  waitall(2, rq);
}

/* ---- sparse: the halo of a sparse matrix-vector product in CG. Ranks r and s are
   neighbours when |r - s| = 1, or |r - s| = 2 and the lower one is a multiple of 4 (at 4
   ranks: 0-1, 1-2, 2-3 and 0-2); r sends s the entries of x that s's rows need, a number that
   differs per pair (packed by the program beforehand, contiguous per neighbour in x_send),
   and receives s's entries into its ghost area, contiguous per neighbour in order. ---- */
static int sp_linked(int r, int s) {
  int lo = r < s ? r : s, d = r > s ? r - s : s - r;
  return d == 1 || (d == 2 && lo % 4 == 0);
}
static size_t sp_count(int from, int to) { return 8 * (size_t)(1 + (from * 3 + to * 5) % 4); }

static void sp_setup(ctx *c) {
  size_t most = 8 * 4 * (size_t)c->nprocs;
  c->a = take(c, most * 8);   /* x_send */
  c->b = take(c, most * 8);   /* ghosts */
  output(c, c->b, most * 8);
}

static void sp_reset(ctx *c) {
  for (size_t k = 0; k < 8 * 4 * (size_t)c->nprocs; k++) {
    c->a[k] = c->rank * 1e6 + (double)k;
    c->b[k] = -1;
  }
}

static int sp_build(cdag_graph *g, ctx *c) {
  size_t in = 0, out = 0;
  int rc = 0;
  for (int s = 0; !rc && s < c->nprocs; s++)
    if (s != c->rank && sp_linked(c->rank, s)) {
      rc = cdag_recv(g, c->b + in, sp_count(s, c->rank) * 8, s, 0, NULL);
      in += sp_count(s, c->rank);
    }
  for (int s = 0; !rc && s < c->nprocs; s++)
    if (s != c->rank && sp_linked(c->rank, s)) {
      rc = cdag_send(g, c->a + out, sp_count(c->rank, s) * 8, s, 0, NULL);
      out += sp_count(c->rank, s);
    }
  return rc;
}

static void sp_mpi(ctx *c) {
  enum { MAXP = 64 };
  MPI_Request rq[2 * MAXP];
  size_t in = 0, out = 0;
  int k = 0;
  for (int s = 0; s < c->nprocs; s++)
    if (s != c->rank && sp_linked(c->rank, s)) {
      MPI_Irecv(c->b + in, (int)sp_count(s, c->rank), MPI_DOUBLE, s, 0, MPI_COMM_WORLD, &rq[k++]);
      in += sp_count(s, c->rank);
    }
  for (int s = 0; s < c->nprocs; s++)
    if (s != c->rank && sp_linked(c->rank, s)) {
      MPI_Isend(c->a + out, (int)sp_count(c->rank, s), MPI_DOUBLE, s, 0, MPI_COMM_WORLD, &rq[k++]);
      out += sp_count(c->rank, s);
    }
  waitall(k, rq);
}

static int sp_fits(int nprocs) { return nprocs >= 2 && nprocs <= 64; }

/* ---- cg_dot: a CG step's two dot products (r.r and p.Ap) combined by recursive doubling
   (sends, receives into scratch, sums). From 4 ranks the grid has two columns and only
   column 0 (the even ranks, which hold the vectors) uses the sums: the odd ranks declare
   them scratch, as examples/graphs/cg_dot16.cdag does. ---- */
static int cg_keeps(const ctx *c) { return c->nprocs < 4 || c->rank % 2 == 0; }

static void cg_setup(ctx *c) {
  c->a = take(c, 2 * 8);   /* partial sums */
  c->b = take(c, 2 * 8);   /* the sums */
  c->c = take(c, 2 * 8);   /* received partial sums (scratch) */
  if (cg_keeps(c)) output(c, c->b, 2 * 8);
}

static void cg_reset(ctx *c) {
  for (int k = 0; k < 2; k++) {
    c->a[k] = (c->rank + 1) * 1000.0 + k;   /* integers: every order of the sum is exact */
    c->b[k] = -1;
  }
}

static int cg_build(cdag_graph *g, ctx *c) {
  int rc = cdag_scratch(g, c->c, 16);
  if (!rc && !cg_keeps(c)) rc = cdag_scratch(g, c->b, 16);
  if (!rc) rc = cdag_copy_local(g, c->a, c->b, 16, NULL);
  for (int mask = 1, tag = 0; !rc && mask < c->nprocs; mask <<= 1, tag++) {
    int peer = c->rank ^ mask;
    rc = cdag_send(g, c->b, 16, peer, tag, NULL);
    if (!rc) rc = cdag_recv(g, c->c, 16, peer, tag, NULL);
    if (!rc) rc = cdag_reduce_local(g, c->c, c->b, 2, MPI_DOUBLE, MPI_SUM, NULL);
  }
  return rc;
}

static void cg_mpi(ctx *c) {
  c->b[0] = c->a[0];
  c->b[1] = c->a[1];
  for (int mask = 1, tag = 0; mask < c->nprocs; mask <<= 1, tag++) {
    int peer = c->rank ^ mask;
    MPI_Sendrecv(c->b, 2, MPI_DOUBLE, peer, tag, c->c, 2, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    c->b[0] += c->c[0];
    c->b[1] += c->c[1];
  }
}

static const shape shapes[] = {
    {"histogram", "one-sided histogram: each rank puts 16 int64 counts into every rank's segment, then sums its slots",
     hist_setup, hist_reset, hist_build, hist_mpi, any},
    {"transpose", "transpose of MPI_Type_vector column blocks (32 x 32 doubles per pair), received contiguous",
     trans_setup, trans_reset, trans_build, trans_mpi, trans_fits},
    {"jacobi", "1-D Jacobi halo, P x 1 strips, ghost rows of 128 doubles, not periodic", jac_setup, jac_reset,
     jac_build, jac_mpi, any},
    {"halo2d", "2-D halo on a grid from MPI_Dims_create, 32 x 32 doubles per rank, columns as MPI_Type_vector",
     h2_setup, h2_reset, h2_build, h2_mpi, any},
    {"ring", "ring shift: 128 doubles to the next rank, periodic", ring_setup, ring_reset, ring_build, ring_mpi, any},
    {"sparse", "sparse CG halo: irregular neighbours (r+-1, and r+-2 from multiples of 4), 8 to 32 doubles per pair",
     sp_setup, sp_reset, sp_build, sp_mpi, sp_fits},
    {"cg_dot", "CG dot products: 2 doubles, recursive-doubling allreduce as sends and sums; from 4 ranks only the even ranks keep them",
     cg_setup, cg_reset, cg_build, cg_mpi, pow2},
};
enum { NSHAPE = sizeof shapes / sizeof *shapes };

/* ---- timing ---- */

static cdag_schedule *compile(const shape *sh, ctx *c, int detect) {
  cdag_graph *g;
  cdag_schedule *s;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  TRY(cdag_graph_create(MPI_COMM_WORLD, &g));
  TRY(sh->build(g, c));
  TRY(cdag_compile(g, &o, &s));
  TRY(cdag_graph_free(&g));
  return s;
}

static void once(const shape *sh, ctx *c, int how, cdag_schedule *const *s) {
  if (how == 0) sh->mpi(c);
  else TRY(cdag_run(s[how - 1]));
}

static double batch(const shape *sh, ctx *c, int how, cdag_schedule *const *s, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int it = 0; it < iters; it++) once(sh, c, how, s);
  double t = (MPI_Wtime() - t0) / iters, tmax;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

/* Runs each variant once from fresh inputs; 1 on every rank if the outputs of all three are
   the bytes the MPI version leaves. */
static int same_result(const shape *sh, ctx *c, cdag_schedule *const *s) {
  size_t total = 0;
  for (int k = 0; k < c->nout; k++) total += c->out[k].bytes;
  unsigned char *want = malloc(total + 1), *got = malloc(total + 1);
  int ok = want && got;
  for (int how = 0; ok && how < NVAR; how++) {
    sh->reset(c);
    once(sh, c, how, s);
    unsigned char *to = how ? got : want;
    for (int k = 0; k < c->nout; k++) {
      memcpy(to, c->out[k].ptr, c->out[k].bytes);
      to += c->out[k].bytes;
    }
    if (how) ok = memcmp(want, got, total) == 0;
  }
  free(want);
  free(got);
  int all;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

/* The compiled plan in one line: "as written" when the price set the plan aside (the report's
   "runs as written" line); else the report's collective lines up to their first ", ", joined
   by " + ", and the residual messages and reductions of every stage (with their count). */
static int cut(const char *l) {
  const char *e = strstr(l, ", ");
  return e ? (int)(e - l) : (int)strlen(l);
}

static void plan_line(cdag_schedule *s, char *line, size_t cap) {
  static const char *const kinds[] = {"bcast", "scatter", "gather", "allgather", "alltoall", "scatterv", "gatherv",
                                      "allgatherv", "alltoallv", "reduce", "allreduce", "reduce_scatter",
                                      "reduce_scatter_block", "barrier"};
  char *text = NULL;
  int written = 0, nmsg = 0, nred = 0, stages = 0;
  size_t len = 0, at = 0;
  FILE *f = open_memstream(&text, &len);
  line[0] = 0;
  if (!f) return;
  TRY(cdag_schedule_report(s, f, 0));
  fclose(f);
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    size_t w = strcspn(l, " ");
    if (strncmp(l, "stages: ", 8) == 0) stages = atoi(l + 8);
    if (strncmp(l, "residual:", 9) == 0) {   /* residual: T transfers (B B) in M messages ..., R reductions */
      const char *msgs = strstr(l, " in "), *reds = strstr(l, " messages");
      nmsg += msgs ? atoi(msgs + 4) : 0;
      nred += reds && (reds = strstr(reds, ", ")) ? atoi(reds + 2) : 0;
    }
    if (strstr(l, ": runs as written")) written = 1;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
      if (at < cap && strlen(kinds[k]) == w && strncmp(l, kinds[k], w) == 0) {
        at += (size_t)snprintf(line + at, cap - at, "%s%.*s", at ? " + " : "", cut(l), l);
        break;
      }
  }
  if (written) snprintf(line, cap, "as written (the price)");
  else if (stages > 1 && at == 0) snprintf(line, cap, "%d stages: %d residual messages, %d reductions", stages, nmsg, nred);
  else if (at == 0) snprintf(line, cap, "%d residual messages, %d reductions", nmsg, nred);
  else if (at < cap) snprintf(line + at, cap - at, " (+ %d residual messages, %d reductions)", nmsg, nred);
  free(text);
}

static void cleanup(ctx *c) {
  if (c->type != MPI_DATATYPE_NULL) MPI_Type_free(&c->type);
  if (c->win != MPI_WIN_NULL) MPI_Win_free(&c->win);
}

static void start(ctx *c, unsigned char *arena, int rank, int nprocs) {
  memset(c, 0, sizeof *c);
  c->rank = rank;
  c->nprocs = nprocs;
  c->arena = arena;
  c->type = MPI_DATATYPE_NULL;
  c->win = MPI_WIN_NULL;
  memset(arena, 0, ARENA);
}

static int bench(const shape *sh, ctx *c, int reps) {
  sh->setup(c);
  cdag_schedule *s[2] = {compile(sh, c, 0), compile(sh, c, 1)};
  int bad = !same_result(sh, c, s);
  if (bad && c->rank == 0) fprintf(stderr, "shapes_bench: %s: results differ from MPI's\n", sh->name);
  double best[NVAR] = {1e30, 1e30, 1e30};
  int iters = 20000;
  for (int v = 0; !bad && v < NVAR; v++) {   /* warm up, and batches of about 20 ms */
    double t = batch(sh, c, v, s, 20);
    if (t * iters > 0.02) iters = t * 5 > 0.02 ? 5 : (int)(0.02 / t);
  }
  for (int rep = 0; !bad && rep < reps; rep++)
    for (int v = 0; v < NVAR; v++) {
      double t = batch(sh, c, v, s, iters);
      if (t < best[v]) best[v] = t;
    }
  char plan[512];
  if (c->rank == 0) plan_line(s[1], plan, sizeof plan);
  TRY(cdag_schedule_free(&s[0]));
  TRY(cdag_schedule_free(&s[1]));
  if (c->rank == 0 && !bad) {
    printf("%-10s %5d %9.2f %11.2f %11.2f %9.2f  %s\n", sh->name, c->nprocs, best[0] * 1e6, best[1] * 1e6,
           best[2] * 1e6, best[2] / best[1], plan);
    fflush(stdout);
  }
  return bad;
}

/* ---- saving ---- */

/* The packing areas of typed messages are buffers of cdag's heap, declared scratch. Each
   rank's are moved to PACK_AT and up (in the order of their scratch lines), so that a saved
   file is the same from run to run. */
#define PACK_AT 0x200000000ull
enum { MAXPACK = 64 };
typedef struct { unsigned long long from, bytes, to; } pack_area;

/* The packing areas of the rank block starting at text (up to its closing brace): scratch
   outside the arena at base. */
static int pack_areas(const char *text, unsigned long long base, pack_area *v) {
  int n = 0;
  unsigned long long next = PACK_AT, a, b;
  for (const char *l = text; l && *l && *l != '}'; l = strchr(l, '\n'), l = l ? l + 1 : l) {
    while (*l == ' ') l++;
    if (sscanf(l, "scratch %llx %llub", &a, &b) == 2 && (a < base || a >= base + ARENA) && n < MAXPACK) {
      v[n++] = (pack_area){a, b, next};
      next += (b + 63) & ~63ull;
    }
  }
  return n;
}

/* Writes text to f with every address inside a packing area moved. */
static void write_rebased(FILE *f, const char *text, unsigned long long base) {
  pack_area v[MAXPACK];
  int n = 0;
  for (const char *p = text; *p;) {
    if ((p == text || p[-1] == '\n') && strncmp(p, "rank ", 5) == 0) n = pack_areas(p, base, v);
    if (p[0] == '0' && p[1] == 'x' && (p == text || p[-1] == ' ')) {
      char *end;
      unsigned long long a = strtoull(p, &end, 16);
      for (int k = 0; k < n; k++)
        if (a >= v[k].from && a < v[k].from + v[k].bytes) a = v[k].to + (a - v[k].from);
      fprintf(f, "0x%llx", a);
      p = end;
      continue;
    }
    fputc(*p++, f);
  }
}

/* Saves the shape's graph as written to DIR/NAME_pP.cdag, a header comment first. */
static int save(const shape *sh, ctx *c, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_p%d.cdag", dir, sh->name, c->nprocs);
  sh->setup(c);
  sh->reset(c);
  cdag_graph *g;
  TRY(cdag_graph_create(MPI_COMM_WORLD, &g));
  TRY(sh->build(g, c));
  TRY(cdag_graph_dump(g, path));
  TRY(cdag_graph_free(&g));
  if (c->rank != 0) return 0;
  FILE *f = fopen(path, "r");
  char *body = NULL;
  size_t len = 0;
  if (f && fseek(f, 0, SEEK_END) == 0 && (len = (size_t)ftell(f)) > 0 && (body = malloc(len + 1)) &&
      fseek(f, 0, SEEK_SET) == 0)
    body[fread(body, 1, len, f)] = 0;
  if (f) fclose(f);
  f = body ? fopen(path, "w") : NULL;
  if (!f) {
    fprintf(stderr, "shapes_bench: cannot rewrite %s\n", path);
    free(body);
    return 1;
  }
  fprintf(f, "// %s at %d ranks (bench/shapes_bench.c, issue #32): %s.\n", sh->name, c->nprocs, sh->about);
  fprintf(f, "// The graph as the program wrote it, saved by scripts/bench-shapes.sh --save (cdag_graph_dump;\n");
  fprintf(f, "// buffers at 0x%llx and up, the packing areas of typed messages at 0x%llx and up).\n",
          (unsigned long long)(uintptr_t)c->arena, PACK_AT);
  write_rebased(f, body, (unsigned long long)(uintptr_t)c->arena);
  free(body);
  return fclose(f) != 0;
}

int main(int argc, char **argv) {
  int rank, nprocs;
  const char *env = getenv("CDAG_BENCH_BATCHES");
  int reps = env && atoi(env) > 0 ? atoi(env) : 9;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  const char *dir = NULL;
  int first = 1;
  if (argc > 2 && strcmp(argv[1], "--save") == 0) {
    dir = argv[2];
    first = 3;
  }
  unsigned char *arena = mmap(ARENA_AT, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (arena == MAP_FAILED) MPI_Abort(MPI_COMM_WORLD, 2);
  if (rank == 0 && !dir) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("cdag shapes_bench: %d ranks", nprocs);
    if (cores > 0 && nprocs > cores) printf(" on %ld cores: OVERSUBSCRIBED, times measure the scheduler", cores);
    printf("; microseconds per run (best of %d batches, max over ranks)\n", reps);
    printf("%-10s %5s %9s %11s %11s %9s  %s\n", "shape", "ranks", "mpi_us", "written_us", "compiled_us",
           "c/written", "compiled plan");
  }
  int bad = 0;
  for (int k = 0; k < NSHAPE; k++) {
    const shape *sh = &shapes[k];
    int wanted = argc <= first;
    for (int a = first; a < argc; a++) wanted |= strcmp(argv[a], sh->name) == 0;
    if (!wanted) continue;
    if (!sh->fits(nprocs)) {
      if (rank == 0 && argc > first) fprintf(stderr, "shapes_bench: %s does not run at %d ranks\n", sh->name, nprocs);
      continue;
    }
    ctx c;
    start(&c, arena, rank, nprocs);
    bad |= dir ? save(sh, &c, dir) : bench(sh, &c, reps);
    cleanup(&c);
  }
  munmap(arena, ARENA);
  MPI_Finalize();
  return bad;
}

/* cdag benchmark — is the compiled phase ever slower than the graph as written?
 * (a benchmark, not a test)
 *
 * Each pattern moves pieces between ranks that a program wrote one message at a time, so
 * the plan coalesces them (one message per pair of ranks) or leaves them as written. For
 * every pattern and size it times one run of:
 *   p2p:      the hand-written loop, one Isend/Irecv per piece (what the program did);
 *   written:  cdag_run with detect = 0 (the graph as written, through cdag);
 *   compiled: cdag_run with detect = 1 (what cdag_compile chose);
 * and prints compiled/written and compiled/p2p. Patterns (r: rank, P ranks):
 *   neighbour k s:  r gets k pieces of s bytes from r-1 and r+1, spread (stride 2s) on both
 *                   sides, as a halo exchange written one face at a time would;
 *   transpose m w:  r holds m rows of w bytes and sends rank j the j-th w/P-byte column
 *                   block of every row (strided), received into m contiguous blocks;
 * Times: the mean of a timed batch after a barrier, maximum over ranks, best of 9 batches,
 * the variants taking turns. Usage: mpiexec -n 2 rewrite_bench [--save DIR] [pattern]. With
 * --save nothing is timed: each case's graph as written is saved (cdag_graph_dump) to
 * DIR/PATTERN_A_B_pP.cdag (A, B: the case's two sizes), for `cdag model` to price. */
#include <cdag.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int R, P;
enum { REPS = 9, MAXREQ = 8192 };
static unsigned char *sbuf, *rbuf;

#define TRY(call)                                                                              \
  do {                                                                                         \
    int rc_ = (call);                                                                          \
    if (rc_) {                                                                                 \
      fprintf(stderr, "rank %d: %s: %s\n", R, #call, cdag_error_message());                    \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                            \
    }                                                                                          \
  } while (0)

typedef enum { NEIGHBOUR, TRANSPOSE, NPAT } pattern;
static const char *pat_name[NPAT] = {"neighbour", "transpose"};

/* A case: the pattern and its two sizes (neighbour: k pieces of s bytes; transpose: m rows
   of w bytes). */
typedef struct { pattern pt; size_t a, b; } shape;

/* Every piece of a case, in the order the program posts them: send or receive, peer,
   buffer, bytes. The hand-written loop and the graph both come from this list. */
typedef struct { int send, peer; unsigned char *buf; size_t n; } piece;

static int pieces(const shape *c, piece *v) {
  int k = 0;
  if (c->pt == NEIGHBOUR) {
    int nb[2] = {(R + P - 1) % P, (R + 1) % P};
    for (int d = 0; d < 2; d++)
      for (size_t i = 0; i < c->a; i++) {
        v[k++] = (piece){0, nb[d], rbuf + (d * c->a + i) * 2 * c->b, c->b};
        v[k++] = (piece){1, nb[1 - d], sbuf + (d * c->a + i) * 2 * c->b, c->b};
      }
    return k;
  }
  size_t m = c->a, w = c->b, blk = w / (size_t)P;
  for (int j = 0; j < P; j++)
    for (size_t row = 0; row < m; row++) {
      v[k++] = (piece){0, j, rbuf + ((size_t)j * m + row) * blk, blk};
      v[k++] = (piece){1, j, sbuf + row * w + (size_t)j * blk, blk};
    }
  return k;
}

static piece plist[MAXREQ];
static int npieces;

static void run_p2p(void) {
  static MPI_Request rq[MAXREQ];
  static MPI_Status st[MAXREQ];
  for (int i = 0; i < npieces; i++) {
    piece *x = &plist[i];
    if (x->send) MPI_Isend(x->buf, (int)x->n, MPI_BYTE, x->peer, 0, MPI_COMM_WORLD, &rq[i]);
    else MPI_Irecv(x->buf, (int)x->n, MPI_BYTE, x->peer, 0, MPI_COMM_WORLD, &rq[i]);
  }
  MPI_Waitall(npieces, rq, st);
}

static cdag_schedule *compile(int detect) {
  cdag_graph *g;
  cdag_schedule *s;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  TRY(cdag_graph_create(MPI_COMM_WORLD, &g));
  for (int i = 0; i < npieces; i++) {
    piece *x = &plist[i];
    if (x->send) TRY(cdag_send(g, x->buf, x->n, x->peer, 0, NULL));
    else TRY(cdag_recv(g, x->buf, x->n, x->peer, 0, NULL));
  }
  TRY(cdag_compile(g, &o, &s));
  TRY(cdag_graph_free(&g));
  return s;
}

static void once(int how, cdag_schedule *const *s) {
  if (how == 0) run_p2p();
  else TRY(cdag_run(s[how - 1]));
}

static double batch(int how, cdag_schedule *const *s, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int it = 0; it < iters; it++) once(how, s);
  double t = (MPI_Wtime() - t0) / iters, tmax;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

/* The compiled run must leave the bytes the hand-written loop leaves. */
static int same_result(cdag_schedule *s, size_t bytes) {
  unsigned char *want = malloc(bytes);
  memset(rbuf, 0, bytes);
  run_p2p();
  memcpy(want, rbuf, bytes);
  memset(rbuf, 0, bytes);
  TRY(cdag_run(s));
  int ok = memcmp(want, rbuf, bytes) == 0, all;
  free(want);
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

/* The case's graph as written, saved to DIR/PATTERN_A_B_pP.cdag. */
static void save(const shape *c, const char *dir) {
  char path[4096];
  cdag_graph *g;
  npieces = pieces(c, plist);
  snprintf(path, sizeof path, "%s/%s_%zu_%zu_p%d.cdag", dir, pat_name[c->pt], c->a, c->b, P);
  TRY(cdag_graph_create(MPI_COMM_WORLD, &g));
  for (int i = 0; i < npieces; i++) {
    piece *x = &plist[i];
    if (x->send) TRY(cdag_send(g, x->buf, x->n, x->peer, 0, NULL));
    else TRY(cdag_recv(g, x->buf, x->n, x->peer, 0, NULL));
  }
  TRY(cdag_graph_dump(g, path));
  TRY(cdag_graph_free(&g));
}

static int bench(const shape *c, size_t bytes) {
  npieces = pieces(c, plist);
  size_t moved = c->pt == NEIGHBOUR ? 2 * c->a * c->b : c->a * c->b;
  int iters = moved <= 16384 ? 2000 : moved <= 262144 ? 300 : 40;
  cdag_schedule *s[2] = {compile(0), compile(1)};
  if (!same_result(s[1], bytes)) {
    if (R == 0) fprintf(stderr, "rewrite_bench: %s %zu %zu: compiled result differs\n", pat_name[c->pt], c->a, c->b);
    return 1;
  }
  double best[3] = {1e30, 1e30, 1e30};
  for (int v = 0; v < 3; v++)
    for (int k = 0; k < 3; k++) once(v, s);
  for (int rep = 0; rep < REPS; rep++)
    for (int v = 0; v < 3; v++) {
      double t = batch(v, s, iters);
      if (t < best[v]) best[v] = t;
    }
  TRY(cdag_schedule_free(&s[0]));
  TRY(cdag_schedule_free(&s[1]));
  if (R == 0) {
    printf("%-10s %6zu %7zu %10zu %9.2f %11.2f %11.2f %9.2f %9.2f\n", pat_name[c->pt], c->a, c->b, moved,
           best[0] * 1e6, best[1] * 1e6, best[2] * 1e6, best[2] / best[1], best[2] / best[0]);
    fflush(stdout);
  }
  return 0;
}

int main(int argc, char **argv) {
  static const shape cases[] = {
      {NEIGHBOUR, 1, 1024},   {NEIGHBOUR, 3, 8},      {NEIGHBOUR, 3, 1024},  {NEIGHBOUR, 3, 65536},
      {NEIGHBOUR, 16, 64},    {NEIGHBOUR, 16, 1024},  {NEIGHBOUR, 16, 2048}, {NEIGHBOUR, 16, 4096},
      {NEIGHBOUR, 64, 256},   {NEIGHBOUR, 2, 1048576},  {TRANSPOSE, 16, 256},
      {TRANSPOSE, 64, 256},   {TRANSPOSE, 256, 256},  {TRANSPOSE, 64, 4096}, {TRANSPOSE, 256, 64},
      {TRANSPOSE, 1024, 512},
  };
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const char *dir = NULL;
  if (argc > 2 && strcmp(argv[1], "--save") == 0) {
    dir = argv[2];
    argc -= 2, argv += 2;
  }
  size_t bytes = 8 << 20;
  sbuf = malloc(bytes);
  rbuf = calloc(1, bytes);
  for (size_t k = 0; k < bytes; k++) sbuf[k] = (unsigned char)(k * 7 + R);
  if (R == 0 && !dir) {
    printf("cdag rewrite_bench: %d ranks; microseconds per run (best of %d batches, max over ranks)\n", P, REPS);
    printf("%-10s %6s %7s %10s %9s %11s %11s %9s %9s\n", "pattern", "k|m", "s|w", "bytes", "p2p_us", "written_us",
           "compiled_us", "c/written", "c/p2p");
  }
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const shape *c = &cases[i];
    if (argc > 1 && strcmp(argv[1], pat_name[c->pt]) != 0) continue;
    if (c->pt == TRANSPOSE && (c->b % (size_t)P || 2 * c->a * (size_t)P > MAXREQ)) continue;
    if (dir) save(c, dir);
    else bad |= bench(c, bytes);
  }
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return bad;
}

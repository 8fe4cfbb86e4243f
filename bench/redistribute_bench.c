/* cdag benchmark — M:N block-cyclic redistribution (a benchmark, not a test).
 *
 *   redistribute_bench cost
 *     The intersection work of the seed's experiment (10^4 x 10^4 elements; blocks 1024^2,
 *     256^2, 30 x 50, 654 x 321; producer grids of 2..32 processes, consumer grids of twice
 *     as many, shaped the other way), per producing process (the seed's counts with L = 1),
 *     summed over the two dimensions: classical R N_loc N_rem (every local block against
 *     every block of every remote process), FALLS R N^_loc N^_rem (blocks of one period
 *     S = lcm(b P, b' P') only), and ASPEN's chunks as cdag's builder examines them (rd_steps,
 *     measured; the most of any producer) with the seconds it takes for all producers.
 *   mpiexec -n P redistribute_bench time [N]
 *     Seconds per redistribution of an N x N matrix of doubles (default 2048): cdag_run of
 *     the schedule compiled from cdag_redistribute (default options; and density 0.01, one
 *     alltoallv), the graph run as written, and ScaLAPACK's Cpdgemr2d when the library named
 *     by CDAG_SCALAPACK (a libscalapack .so built for this MPI) loads. Both results are
 *     compared element by element. Best of 7 batches of 10 runs, maximum over ranks. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cdag.h>
#include <mpi.h>

#include "workload/redistribute.h"

static int R, P;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int64_t gcd(int64_t a, int64_t b) { return b ? gcd(b, a % b) : a; }
static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static void grid_of(int p, int *pr, int *pc) {
  *pr = 1;
  for (int d = 1; d * d <= p; d++)
    if (p % d == 0) *pr = d;
  *pc = p / *pr;
}

/* One dimension's counts per local process: R N_loc N_rem and R N^_loc N^_rem. */
static void dim_counts(int64_t e, int64_t bl, int64_t l, int64_t br, int64_t r, double *classical, double *falls) {
  int64_t a = bl * l, b = br * r, s = a / gcd(a, b) * b, lim = s < e ? s : e;
  *classical += (double)r * (double)cdiv(e, a) * (double)cdiv(e, b);
  *falls += (double)r * (double)cdiv(lim, a) * (double)cdiv(lim, b);
}

static void cost(void) {
  const int64_t E = 10000, blk[4][2] = {{1024, 1024}, {256, 256}, {30, 50}, {654, 321}};
  printf("| from blocks | to blocks | P:P' | classical | FALLS | ASPEN (cdag) | ASPEN s, all producers |\n|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < 4; k++)
    for (int p = 2; p <= 32; p *= 2) {
      const int64_t *f = blk[k], *t = blk[(k + 1) % 4];
      int pr, pc, qr, qc;
      grid_of(p, &pr, &pc);
      grid_of(2 * p, &qc, &qr);   /* the other way round */
      cdag_layout from = {E, E, f[0], f[1], pr, pc, 0, 0}, to = {E, E, t[0], t[1], qr, qc, 0, 0};
      double classical = 0, falls = 0;
      dim_counts(E, f[0], pr, t[0], qr, &classical, &falls);
      dim_counts(E, f[1], pc, t[1], qc, &classical, &falls);
      int64_t steps = 0;
      double t0 = now();
      for (int r = 0; r < p; r++) {
        int64_t s;
        if (rd_steps(&from, &to, r, &s)) return;
        if (s > steps) steps = s;
      }
      double secs = now() - t0;
      printf("| %lldx%lld@%dx%d | %lldx%lld@%dx%d | %d:%d | %.3g | %.3g | %lld | %.2e |\n", (long long)f[0],
             (long long)f[1], pr, pc, (long long)t[0], (long long)t[1], qr, qc, p, 2 * p, classical, falls,
             (long long)steps, secs);
    }
}

/* ---- MPI timing ---- */

typedef void (*gemr2d_fn)(int m, int n, double *a, int ia, int ja, int *desca, double *b, int ib, int jb, int *descb,
                          int ctxt);
typedef void (*blacs_get_fn)(int ctxt, int what, int *val);
typedef void (*gridinit_fn)(int *ctxt, char *order, int nprow, int npcol);
typedef struct { gemr2d_fn gemr2d; blacs_get_fn get; gridinit_fn gridinit; } scalapack;

static int load_scalapack(scalapack *s) {
  const char *path = getenv("CDAG_SCALAPACK");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;
  if (!h) return 0;
  s->gemr2d = (gemr2d_fn)(uintptr_t)dlsym(h, "Cpdgemr2d");
  s->get = (blacs_get_fn)(uintptr_t)dlsym(h, "Cblacs_get");
  s->gridinit = (gridinit_fn)(uintptr_t)dlsym(h, "Cblacs_gridinit");
  return s->gemr2d && s->get && s->gridinit;
}

static int64_t held(int64_t n, int64_t b, int c, int p) {
  int64_t k = 0;
  for (int64_t g0 = (int64_t)c * b; g0 < n; g0 += b * p) k += g0 + b <= n ? b : n - g0;
  return k;
}

static double *local(const cdag_layout *l, int64_t *rows, int64_t *cols) {
  int i = R / l->pc, j = R % l->pc;
  *rows = held(l->m, l->mb, i, l->pr);
  *cols = held(l->n, l->nb, j, l->pc);
  return calloc((size_t)(*rows * *cols) + 1, sizeof(double));
}

static double best_of(cdag_schedule *s, const scalapack *sl, const cdag_layout *a, const cdag_layout *b, double *src,
                      double *dst, int *da, int *db, int ctxt) {
  double best = 1e30;
  for (int rep = 0; rep < 7; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < 10; it++) {
      if (s) cdag_run(s);
      else sl->gemr2d((int)a->m, (int)a->n, src, 1, 1, da, dst, 1, 1, db, ctxt);
    }
    double t = (MPI_Wtime() - t0) / 10, m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (m < best) best = m;
  }
  (void)b;
  return best;
}

static double time_cdag(const cdag_layout *a, const cdag_layout *b, double *src, double *dst, int detect,
                        double density, double *compile) {
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  if (density > 0) o.density = density;
  double t0 = MPI_Wtime();
  if (cdag_graph_create(MPI_COMM_WORLD, &g) || cdag_redistribute(g, a, src, b, dst, sizeof(double)) ||
      cdag_compile(g, &o, &s)) {
    fprintf(stderr, "rank %d: %s\n", R, cdag_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  *compile = MPI_Wtime() - t0;
  double t = best_of(s, NULL, a, b, src, dst, NULL, NULL, 0);
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  return t;
}

static void time_case(int64_t n, const cdag_layout *a0, const cdag_layout *b0, const scalapack *sl, int have_sl) {
  cdag_layout a = *a0, b = *b0;
  a.m = a.n = b.m = b.n = n;
  int64_t ar, ac, br, bc;
  double *src = local(&a, &ar, &ac), *dst = local(&b, &br, &bc), *ref = local(&b, &br, &bc);
  for (int64_t k = 0; k < ar * ac; k++) src[k] = (double)(R * 1000003 + k);
  double c0, c1, c2;
  double as_written = time_cdag(&a, &b, src, dst, 0, 0, &c0);
  double compiled = time_cdag(&a, &b, src, dst, 1, 0, &c1);
  double one_coll = time_cdag(&a, &b, src, dst, 1, 0.01, &c2);
  double sp = -1;
  int same = 1;
  if (have_sl) {
    int ca, cb, cg, da[9], db[9];
    sl->get(-1, 0, &ca);
    sl->gridinit(&ca, "Row", a.pr, a.pc);
    sl->get(-1, 0, &cb);
    sl->gridinit(&cb, "Row", b.pr, b.pc);
    sl->get(-1, 0, &cg);
    sl->gridinit(&cg, "Row", 1, P);
    int la = (int)(ar > 1 ? ar : 1), lb = (int)(br > 1 ? br : 1);
    int d1[9] = {1, ca, (int)n, (int)n, (int)a.mb, (int)a.nb, 0, 0, la}, d2[9] = {1, cb, (int)n, (int)n, (int)b.mb, (int)b.nb, 0, 0, lb};
    memcpy(da, d1, sizeof da);
    memcpy(db, d2, sizeof db);
    sp = best_of(NULL, sl, &a, &b, src, ref, da, db, cg);
    for (int64_t k = 0; k < br * bc; k++) same &= ref[k] == dst[k];
  }
  int all_same = 0;
  MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (R == 0) {
    printf("| %d | %lld | %lldx%lld@%dx%d -> %lldx%lld@%dx%d | %.1f | %.1f | %.1f | ", P, (long long)n, (long long)a.mb,
           (long long)a.nb, a.pr, a.pc, (long long)b.mb, (long long)b.nb, b.pr, b.pc, as_written * 1e6, compiled * 1e6,
           one_coll * 1e6);
    if (have_sl) printf("%.1f | %s | %.3f |\n", sp * 1e6, all_same ? "yes" : "NO", c1);
    else printf("- | - | %.3f |\n", c1);
  }
  free(src);
  free(dst);
  free(ref);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (argc > 1 && strcmp(argv[1], "cost") == 0) {
    if (R == 0) cost();
  } else {
    int64_t n = argc > 2 ? atoll(argv[2]) : 2048;
    scalapack sl = {0};
    int have = load_scalapack(&sl);
    int pr, pc;
    grid_of(P, &pr, &pc);
    if (R == 0)
      printf("| P | N | from -> to | as written us | compiled us | density 0.01 us | pdgemr2d us | same | compile s |\n"
             "|---|---|---|---|---|---|---|---|---|\n");
    cdag_layout a = {0, 0, 64, 64, pr, pc, 0, 0}, b = {0, 0, 100, 100, 1, P, 0, 0};
    time_case(n, &a, &b, &sl, have);
    cdag_layout c = {0, 0, 32, 32, 1, P, 0, 0}, d = {0, 0, 50, 50, P, 1, 0, 0};
    time_case(n, &c, &d, &sl, have);
  }
  MPI_Finalize();
  return 0;
}

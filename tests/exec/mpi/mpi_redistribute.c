/* cdag MPI test — cdag_redistribute: a block-cyclic matrix moved between layouts (mpiexec
 * -n 1..8).
 *
 * Each case fills every process's source local array with values computed from the global
 * index of each element (the layout's definition, written here again, apart from the
 * library), redistributes with cdag_redistribute + cdag_compile + cdag_run, and checks every
 * element of every destination array against its global index, and that the padding of a
 * padded destination (lld above the local rows) is left alone. Each case runs as written
 * (detect = 0), compiled with the default options (a redistribution is one alltoallv,
 * docs/semantics.md), and compiled with a low density, so the exchange runs as one alltoallv
 * (both checked in the report where the grids make one); each schedule runs twice. Cases: 2-D grid to a 1 x P row, blocks changing; overlapping M:N
 * groups (the first half of the ranks to the last two thirds); 3-byte elements with a
 * padded destination; random layouts. Then the errors: elem_bytes 0, a zero size, a grid
 * larger than the communicator, a NULL source, all CDAG_ERR_ARG with a message. Exit 0 on
 * success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdag.h>
#include <mpi.h>

#include "mpi_test.h"

static int R, P;

/* Byte b of element (i, j): distinct enough that a misplaced element shows. */
static uint8_t value(int64_t i, int64_t j, int b) {
  uint64_t h = (uint64_t)(i * 1000003 + j * 7919 + b * 131 + 17);
  h ^= h >> 13;
  h *= 0x9e3779b97f4a7c15ull;
  return (uint8_t)(h >> 56);
}

/* Rows (or columns) coordinate c of p holds in a dimension of extent n, block b. */
static int64_t held(int64_t n, int64_t b, int c, int p) {
  int64_t k = 0;
  for (int64_t g0 = (int64_t)c * b; g0 < n; g0 += b * p) k += g0 + b <= n ? b : n - g0;
  return k;
}

static int coords(const cdag_layout *l, int *i, int *j) {
  if (R < l->first || R >= l->first + l->pr * l->pc) return 0;
  *i = (R - l->first) / l->pc;
  *j = (R - l->first) % l->pc;
  return 1;
}

/* Local array of this process in l (NULL if it holds nothing); *lld, *rows, *cols. */
static uint8_t *local_array(const cdag_layout *l, size_t e, int64_t *lld, int64_t *rows, int64_t *cols) {
  int i, j;
  *rows = *cols = *lld = 0;
  if (!coords(l, &i, &j)) return NULL;
  *rows = held(l->m, l->mb, i, l->pr);
  *cols = held(l->n, l->nb, j, l->pc);
  *lld = l->lld ? l->lld : *rows;
  size_t bytes = (size_t)(*lld * *cols) * e;
  return bytes ? malloc(bytes) : NULL;
}

/* Global index of local index k (in the dimension) of coordinate c. */
static int64_t l2g(int64_t k, int64_t b, int c, int p) { return (k / b * p + c) * b + k % b; }

static void fill_source(const cdag_layout *l, uint8_t *a, size_t e, int64_t lld, int64_t rows, int64_t cols) {
  int pi, pj;
  if (!a || !coords(l, &pi, &pj)) return;
  for (int64_t lj = 0; lj < cols; lj++)
    for (int64_t li = 0; li < rows; li++)
      for (size_t b = 0; b < e; b++)
        a[(size_t)(lj * lld + li) * e + b] = value(l2g(li, l->mb, pi, l->pr), l2g(lj, l->nb, pj, l->pc), (int)b);
}

static void check_dest(const char *what, const cdag_layout *l, const uint8_t *a, size_t e, int64_t lld, int64_t rows,
                       int64_t cols) {
  int pi, pj, bad = 0;
  if (!a || !coords(l, &pi, &pj)) return;
  for (int64_t lj = 0; lj < cols && !bad; lj++)
    for (int64_t li = 0; li < lld && !bad; li++)
      for (size_t b = 0; b < e && !bad; b++) {
        uint8_t got = a[(size_t)(lj * lld + li) * e + b];
        uint8_t want = li < rows ? value(l2g(li, l->mb, pi, l->pr), l2g(lj, l->nb, pj, l->pc), (int)b) : 0xee;
        if (got != want) {
          MT_FAIL("%s: local (%lld, %lld) byte %zu is %u, expected %u", what, (long long)li, (long long)lj, b, got, want);
          bad = 1;
        }
      }
}

/* The schedule's report names an alltoallv; with `or_none`, or finds none under the default
   options: at a prime count of ranks from 5 on, the grid is one column and the 37 x 29 matrix
   few blocks (at 5, 12 of 20 pairs, too few pieces for the redistribution rule; at 7, not
   every rank takes part). Low density (mode 2) still finds it. */
static int reports_alltoallv(const cdag_schedule *s, int or_none) {
  char text[8192] = "";
  FILE *f = tmpfile();
  if (!f) return 0;
  cdag_schedule_report(s, f, 0);
  rewind(f);
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  return strstr(text, "alltoallv") != NULL ||
         (or_none && (strstr(text, "not a redistribution: fewer pieces") || strstr(text, "no collectives found")));
}

/* mode 0: as written; 1: default options; 2: density low enough for one alltoallv. */
static void run_case(const char *name, const cdag_layout *from, const cdag_layout *to, size_t e, int mode,
                     int want_alltoallv) {
  int64_t slld, srows, scols, dlld, drows, dcols;
  uint8_t *src = local_array(from, e, &slld, &srows, &scols), *dst = local_array(to, e, &dlld, &drows, &dcols);
  fill_source(from, src, e, slld, srows, scols);
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = mode != 0;
  if (mode == 2) o.density = 0.01;
  int rc = cdag_graph_create(MPI_COMM_WORLD, &g);
  if (!rc) rc = cdag_redistribute(g, from, src, to, dst, e);
  MT_EXPECT_MSG(rc == CDAG_OK, "%s: cdag_redistribute: %s", name, cdag_error_message());
  if (!rc) rc = cdag_compile(g, &o, &s);
  MT_EXPECT_MSG(rc == CDAG_OK, "%s: cdag_compile: %s", name, cdag_error_message());
  for (int it = 0; it < 2 && !rc; it++) {
    if (dst) memset(dst, 0xee, (size_t)(dlld * dcols) * e);
    rc = cdag_run(s);
    MT_EXPECT_MSG(rc == CDAG_OK, "%s: cdag_run: %s", name, cdag_error_message());
    char what[96];
    snprintf(what, sizeof what, "%s (mode %d, run %d)", name, mode, it);
    if (!rc) check_dest(what, to, dst, e, dlld, drows, dcols);
  }
  if (!rc && mode && want_alltoallv && R == 0)
    MT_EXPECT_MSG(reports_alltoallv(s, mode == 1 && P >= 5 && (from->pr == 1 || from->pc == 1)),
                  "%s: no alltoallv in the report (mode %d)", name, mode);
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  free(src);
  free(dst);
}

static void run_all_modes(const char *name, const cdag_layout *from, const cdag_layout *to, size_t e, int want) {
  for (int mode = 0; mode < 3; mode++) run_case(name, from, to, e, mode, want);
}

/* P = pr * pc with pr the largest divisor <= sqrt(P). */
static void grid_of(int p, int *pr, int *pc) {
  *pr = 1;
  for (int d = 1; d * d <= p; d++)
    if (p % d == 0) *pr = d;
  *pc = p / *pr;
}

static uint64_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 17;
}

static void random_layout(uint64_t *s, cdag_layout *l) {
  l->mb = 1 + (int64_t)(rnd(s) % 9);
  l->nb = 1 + (int64_t)(rnd(s) % 9);
  l->pr = 1 + (int)(rnd(s) % (uint64_t)P);
  l->pc = 1 + (int)(rnd(s) % (uint64_t)(P / l->pr));
  l->first = (int)(rnd(s) % (uint64_t)(P - l->pr * l->pc + 1));
  l->lld = 0;
}

static void errors(void) {
  cdag_graph *g = NULL;
  uint8_t buf[128];
  cdag_layout a = {4, 2 * (int64_t)P, 2, 2, 1, P, 0, 0}, b = a;   /* every rank holds a 4 x 2 block */
  if (cdag_graph_create(MPI_COMM_WORLD, &g)) return;
  int rc = cdag_redistribute(g, &a, buf, &b, buf + 64, 0);
  MT_EXPECT_MSG(rc == CDAG_ERR_ARG && strstr(cdag_error_message(), "elem_bytes is 0"), "elem 0: %d %s", rc, cdag_error_message());
  b.m = 0;
  rc = cdag_redistribute(g, &a, buf, &b, buf + 64, 1);
  MT_EXPECT_MSG(rc == CDAG_ERR_ARG && strstr(cdag_error_message(), "M is 0"), "M 0: %d %s", rc, cdag_error_message());
  b = a, b.pc = P + 1;
  rc = cdag_redistribute(g, &a, buf, &b, buf + 64, 1);
  MT_EXPECT_MSG(rc == CDAG_ERR_ARG && strstr(cdag_error_message(), "the graph has"), "grid: %d %s", rc, cdag_error_message());
  rc = cdag_redistribute(g, &a, NULL, &a, buf + 64, 1);
  MT_EXPECT_MSG(rc == CDAG_ERR_ARG && strstr(cdag_error_message(), "src is NULL"), "NULL: %d %s", rc, cdag_error_message());
  cdag_graph_free(&g);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int pr, pc;
  grid_of(P, &pr, &pc);
  /* 2-D grid to one row of all ranks, blocks changing; one collective from 3 ranks on */
  cdag_layout a = {37, 29, 4, 3, pr, pc, 0, 0}, b = {37, 29, 2, 5, 1, P, 0, 0};
  run_all_modes("grid to row", &a, &b, 8, P >= 3);
  /* M:N, overlapping: the first half of the ranks to the last two thirds */
  int h = (P + 1) / 2, t = P - P / 3;
  cdag_layout c = {23, 31, 3, 4, 1, h, 0, 0}, d = {23, 31, 5, 2, t, 1, P - t, 0};
  run_all_modes("overlapping groups", &c, &d, 8, 0);
  /* 3-byte elements into a padded destination (lld 20 > 17 local rows at most) */
  cdag_layout e = {17, 13, 2, 2, pc, pr, 0, 0}, f = {17, 13, 3, 1, 1, 1, P - 1, 20};
  run_all_modes("bytes, padded", &e, &f, 3, 0);
  uint64_t seed = 11;
  for (int k = 0; k < (P > 3 ? 2 : 6); k++) {   /* oversubscribed runs compile slowly: fewer */
    cdag_layout x = {1 + (int64_t)(rnd(&seed) % 40), 1 + (int64_t)(rnd(&seed) % 40), 0, 0, 0, 0, 0, 0}, y = x;
    random_layout(&seed, &x);
    random_layout(&seed, &y);
    run_all_modes("random", &x, &y, 1 + rnd(&seed) % 8, 0);
  }
  errors();
  return mt_finish("mpi_redistribute");
}

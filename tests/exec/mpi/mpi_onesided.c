/* cdag MPI test — one-sided gets and puts (run with mpiexec -n 1..8).
 *
 * The UPC FT transpose written with cdag_get on a registered segment (found as an
 * alltoall) and a periodic halo exchange written with cdag_put, each compiled and run
 * three times, compared with the same phase written with MPI RMA (MPI_Get / MPI_Put between
 * MPI_Win_fence). Then errors that must reach every rank with the same code: a put that
 * only rank 0 writes past the end of rank 0's segment (CDAG_ERR_ARG), two puts into the same
 * bytes from different ranks (CDAG_ERR_RACE; needs 2 ranks) and fences called unequally.
 * Both phases run compiled and as written (detect = 0: each rank also runs the targets'
 * sides of the gets and puts that name it, which its own graph does not have). Exit 0 on
 * success. */
#include <stdio.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { CHUNK = 16, HALO = 8, N = 32 };

static void fill(int64_t *v, int n, int rank, int it) {
  for (int i = 0; i < n; i++) v[i] = 1000000 * it + 1000 * rank + i;
}

/* *g compiled (detect on or off; NULL on failure, said), then freed. */
static cdag_schedule *compiled(cdag_graph **g, int R, int detect) {
  cdag_schedule *s = NULL;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  MT_OK(cdag_compile(*g, &o, &s));
  cdag_graph_free(g);
  return s;
}

/* dst[CHUNK * i ..] = src of rank i at [CHUNK * me ..], by cdag and by MPI RMA. */
static void ft_transpose(int P, int R, int detect) {
  int64_t src[8 * CHUNK], dst[8 * CHUNK], ref[8 * CHUNK];
  cdag_graph *g = NULL;
  int seg = -1;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  MT_OK(cdag_segment(g, src, sizeof src, &seg));
  MT_EXPECT_INT(seg, ==, 0);
  MT_OK(cdag_fence(g));
  for (int i = 0; i < P; i++)
    MT_OK(cdag_get(g, dst + CHUNK * i, CHUNK * sizeof *dst, i, seg, (size_t)(CHUNK * R) * sizeof *src, NULL));
  MT_OK(cdag_fence(g));
  cdag_schedule *s = compiled(&g, R, detect);
  MPI_Win w;
  MPI_Win_create(src, sizeof src, sizeof *src, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
  for (int it = 0; it < 3 && s; it++) {
    fill(src, 8 * CHUNK, R, it);
    memset(dst, 0, sizeof dst);
    MT_OK(cdag_run(s));
    MPI_Win_fence(0, w);
    for (int i = 0; i < P; i++) MPI_Get(ref + CHUNK * i, CHUNK, MPI_INT64_T, i, CHUNK * R, CHUNK, MPI_INT64_T, w);
    MPI_Win_fence(0, w);
    MT_EXPECT_MEM(dst, ref, (size_t)P * CHUNK * sizeof *dst);
  }
  MPI_Win_free(&w);
  cdag_schedule_free(&s);
}

/* A periodic 1-D halo: each rank puts its edges into its neighbours' ghost cells. */
static void halo_puts(int P, int R, int detect) {
  int64_t u[N + 2 * HALO], ref[N + 2 * HALO];
  int left = (R + P - 1) % P, right = (R + 1) % P, seg = -1;
  cdag_graph *g = NULL;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  MT_OK(cdag_segment(g, u, sizeof u, &seg));
  MT_OK(cdag_put(g, u + HALO, HALO * sizeof *u, left, seg, (N + HALO) * sizeof *u, NULL));
  MT_OK(cdag_put(g, u + N, HALO * sizeof *u, right, seg, 0, NULL));
  MT_OK(cdag_fence(g));
  cdag_schedule *s = compiled(&g, R, detect);
  MPI_Win w;
  MPI_Win_create(ref, sizeof ref, sizeof *ref, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
  for (int it = 0; it < 3 && s; it++) {
    fill(u, N + 2 * HALO, R, it);
    fill(ref, N + 2 * HALO, R, it);
    MT_OK(cdag_run(s));
    MPI_Win_fence(0, w);
    MPI_Put(ref + HALO, HALO, MPI_INT64_T, left, N + HALO, HALO, MPI_INT64_T, w);
    MPI_Put(ref + N, HALO, MPI_INT64_T, right, 0, HALO, MPI_INT64_T, w);
    MPI_Win_fence(0, w);
    MT_EXPECT_MEM(u, ref, sizeof u);
  }
  MPI_Win_free(&w);
  cdag_schedule_free(&s);
}

/* Compiles what build adds and expects code on every rank. */
static void expect_error(int R, int code, int detect, void (*build)(cdag_graph *, int, int64_t *)) {
  static int64_t buf[16];
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  build(g, R, buf);
  MT_EXPECT_RC(cdag_compile(g, &o, &s), code);
  MT_EXPECT(s == NULL);
  cdag_graph_free(&g);
}

static void past_the_end(cdag_graph *g, int R, int64_t *buf) {
  cdag_segment(g, buf, 8 * sizeof *buf, NULL);
  if (R == 0) cdag_put(g, buf + 8, 2 * sizeof *buf, 0, 0, 7 * sizeof *buf, NULL);
}

static void two_puts(cdag_graph *g, int R, int64_t *buf) {
  cdag_segment(g, buf, 8 * sizeof *buf, NULL);
  if (R < 2) cdag_put(g, buf + 8, sizeof *buf, 0, 0, 0, NULL);
}

static void unequal_fences(cdag_graph *g, int R, int64_t *buf) {
  (void)buf;
  if (R == 0) cdag_fence(g);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P, R;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  for (int detect = 0; detect < 2; detect++) {   /* detect = 0: as written, targets' sides included */
    if (P <= 8) ft_transpose(P, R, detect);
    halo_puts(P, R, detect);
  }
  expect_error(R, CDAG_ERR_ARG, 1, past_the_end);
  if (P >= 2) expect_error(R, CDAG_ERR_RACE, 1, two_puts);
  if (P >= 2) expect_error(R, CDAG_ERR_ARG, 1, unequal_fences);
  return mt_finish("mpi_onesided");
}

/* cdag MPI test — other buffers, same schedule: cdag_schedule_rebind (mpiexec -n 1..8).
 *
 * A double-buffered phase: an allgather and an allreduce written with sends, receives and
 * local sums, built once on buffer set A and compiled (detection on and off). Rebinding
 * gives a schedule on set B, and one back on A from B's (chained); iterations alternate
 * between them with fresh values and check every result against the direct values. Then
 * the checks: a move holding only part of a range, overlapping `to` buffers, a range left
 * in place under a `to` buffer, a negative count: CDAG_ERR_ARG on every rank when only
 * rank 0 passes the bad table. Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

enum { K = 5 };

/* One buffer set, one allocation: x (own), all (gathered), sum, tmp (received addends). */
typedef struct {
  int32_t *base, *x, *all, *sum, *tmp;
  size_t bytes;
} bufset;

static void set_init(bufset *b, int P) {
  b->bytes = (size_t)(K + K * P + K + K * P) * sizeof(int32_t);
  b->base = calloc(1, b->bytes);
  b->x = b->base;
  b->all = b->x + K;
  b->sum = b->all + K * P;
  b->tmp = b->sum + K;
}

static int32_t value(int rank, int i, int it) { return 1000 * it + 10 * rank + i; }

static cdag_graph *build(MPI_Comm comm, const bufset *b, int R, int P) {
  cdag_graph *g = NULL;
  MT_OK(cdag_graph_create(comm, &g));
  for (int p = 0; p < P; p++) {
    if (p == R) continue;
    MT_OK(cdag_send(g, b->x, K * sizeof(int32_t), p, 0, NULL));
    MT_OK(cdag_recv(g, b->all + p * K, K * sizeof(int32_t), p, 0, NULL));
    MT_OK(cdag_send(g, b->x, K * sizeof(int32_t), p, 1, NULL));
    MT_OK(cdag_recv(g, b->tmp + p * K, K * sizeof(int32_t), p, 1, NULL));
  }
  MT_OK(cdag_copy_local(g, b->x, b->all + R * K, K * sizeof(int32_t), NULL));
  MT_OK(cdag_copy_local(g, b->x, b->sum, K * sizeof(int32_t), NULL));
  for (int p = 0; p < P; p++)
    if (p != R) MT_OK(cdag_reduce_local(g, b->tmp + p * K, b->sum, K, MPI_INT32_T, MPI_SUM, NULL));
  MT_OK(cdag_scratch(g, b->tmp, (size_t)(K * P) * sizeof(int32_t)));
  return g;
}

static void run_check(cdag_schedule *s, const bufset *b, int R, int P, int it) {
  for (int i = 0; i < K; i++) b->x[i] = value(R, i, it);
  memset(b->all, 0xee, (size_t)(K * P) * sizeof(int32_t));
  memset(b->sum, 0xee, K * sizeof(int32_t));
  MT_OK(cdag_run(s));
  for (int p = 0; p < P; p++)
    for (int i = 0; i < K; i++) MT_EXPECT_INT(b->all[p * K + i], ==, value(p, i, it));
  for (int i = 0; i < K; i++) {
    int32_t want = 0;
    for (int p = 0; p < P; p++) want += value(p, i, it);
    MT_EXPECT_INT(b->sum[i], ==, want);
  }
}

/* Only rank 0 passes the bad table; every rank must get CDAG_ERR_ARG. */
static void expect_refused(const cdag_schedule *s, int R, int n, const cdag_rebind *bad, const cdag_rebind *good) {
  cdag_schedule *c = (cdag_schedule *)1;
  MT_EXPECT_RC(cdag_schedule_rebind(s, R == 0 ? n : 1, R == 0 ? bad : good, &c), CDAG_ERR_ARG);
  MT_EXPECT(c == NULL);
  MT_EXPECT_STR(cdag_error_message(), "rank 0: cdag_schedule_rebind");
}

static void errors(const cdag_schedule *s, const bufset *a, const bufset *b, int R) {
  cdag_rebind good = {a->base, b->base, a->bytes};
  cdag_rebind part = {a->base, b->base, K * sizeof(int32_t) + 4};   /* x and 4 bytes of all */
  expect_refused(s, R, 1, &part, &good);
  cdag_rebind overlap[2] = {{a->x, b->base, K * sizeof(int32_t)}, {a->sum, b->base + 1, K * sizeof(int32_t)}};
  expect_refused(s, R, 2, overlap, &good);
  cdag_rebind alias = {a->sum, a->x, K * sizeof(int32_t)};          /* sum onto x, x stays */
  expect_refused(s, R, 1, &alias, &good);
  expect_refused(s, R, -1, &good, &good);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int P, R;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  bufset a, b;
  set_init(&a, P);
  set_init(&b, P);
  for (int detect = 0; detect < 2; detect++) {
    cdag_graph *g = build(MPI_COMM_WORLD, &a, R, P);
    cdag_options o;
    cdag_options_init(&o);
    o.detect = detect;
    cdag_schedule *sa = NULL, *sb = NULL, *sa2 = NULL;
    MT_OK(cdag_compile(g, &o, &sa));
    cdag_graph_free(&g);
    if (!sa) break;
    cdag_rebind swap[3] = {{a.base, b.base, a.bytes}, {NULL, NULL, 0}, {b.base, a.base, b.bytes}};  /* empty: ignored */
    MT_OK(cdag_schedule_rebind(sa, 3, swap, &sb));
    /* chained: B's schedule moved back to A, one array at a time */
    cdag_rebind back[4] = {{b.x, a.x, K * sizeof(int32_t)}, {b.all, a.all, (size_t)(K * P) * sizeof(int32_t)},
                           {b.sum, a.sum, K * sizeof(int32_t)}, {b.tmp, a.tmp, (size_t)(K * P) * sizeof(int32_t)}};
    MT_EXPECT(sb != NULL);
    if (sb) MT_OK(cdag_schedule_rebind(sb, 4, back, &sa2));
    if (detect && P >= 3 && sb) {  /* the copy runs the collectives the original found */
      char *text = NULL;
      size_t len = 0;
      FILE *f = open_memstream(&text, &len);
      MT_OK(cdag_schedule_report(sb, f, 0));
      fclose(f);
      MT_EXPECT_STR(text, "allgather");
      MT_EXPECT_STR(text, "allreduce");
      free(text);
    }
    for (int it = 0; it < 4 && sb && sa2; it++) {
      run_check(sa, &a, R, P, 4 * it);
      run_check(sb, &b, R, P, 4 * it + 1);
      run_check(sa2, &a, R, P, 4 * it + 2);
      MT_OK(cdag_start(sb));
      MT_OK(cdag_wait(sb));
    }
    errors(sa, &a, &b, R);
    MT_EXPECT_RC(cdag_schedule_rebind(NULL, 0, NULL, &sb), CDAG_ERR_ARG);
    cdag_schedule_free(&sa2);
    cdag_schedule_free(&sb);
    cdag_schedule_free(&sa);
  }
  free(a.base);
  free(b.base);
  return mt_finish("mpi_rebind");
}

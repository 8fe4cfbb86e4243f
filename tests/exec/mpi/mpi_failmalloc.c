/* cdag MPI test — one process's graph built, compiled and run, for the fault-injection sweep.
 *
 * Run alone it is an ordinary test (exit 0). Under failmalloc.so (built from
 * tests/support/failmalloc.c; the sweep tests/support/fault_inject.c --run drives) it arms the library right after MPI_Init, so the
 * N-th allocation after that fails: building (sends and receives to itself, a derived
 * datatype, a local copy and reduction, scratch, a label, a dependency, one-sided get and put
 * between fences, a 1x1 redistribution), cdag_compile with detection on and off, cdag_run,
 * cdag_start/cdag_test/cdag_wait, cdag_schedule_rebind and cdag_schedule_report. Every call
 * must succeed, or fail with CDAG_ERR_NOMEM and "out of memory" in its message (then the
 * program frees what it holds and exits 1 printing the message); the results of every run are
 * checked (a wrong value is exit 3). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdag.h>

enum { N = 64 };

typedef struct {
  double a[N], b[N], c[N], sum[N], tmp[N];  /* graph buffers */
  double va[2 * N], vb[N];                  /* strided send, packed receive */
  double seg[N], got[N];                    /* one-sided segment, get destination */
  double m1[N], m2[N];                      /* redistribution source and destination */
  double a2[N], sum2[N];                    /* rebind targets for a and sum */
} bufs;

#include "mpi_test.h"

/* A failed call: an out-of-memory error ends the run with exit 1; anything else is a bug. */
static int check(int rc, const char *what) {
  if (rc == CDAG_OK) return 0;
  const char *msg = cdag_error_message();
  fprintf(stderr, "%s: %s: %s\n", what, cdag_strerror(rc), msg);
  if (rc != CDAG_ERR_NOMEM || !strstr(msg, "out of memory"))
    MT_FAIL("%s: %s, not a clean out-of-memory error", cdag_strerror(rc), msg);
  return 1;
}

static void fill(bufs *b, int it) {
  for (int i = 0; i < N; i++) {
    b->a[i] = it * 1000 + i;
    b->b[i] = it + 2.0 * i;
    b->va[2 * i] = -i - it, b->va[2 * i + 1] = 0.5;
    b->seg[i] = 7.0 * i + it;
    b->m1[i] = 3.0 * i - it;
    b->c[i] = b->sum[i] = b->vb[i] = b->got[i] = b->m2[i] = -1;
  }
}

/* What one run leaves: c = a received from itself, sum = a + b, vb = va's even elements,
   got = seg (through a get), seg[0..N/2) = b's second half (a put), m2 = m1. a is read from
   `a`, sum written to `sum`: the rebound schedule passes a2 and sum2. */
static void verify(const bufs *b, const double *a, const double *sum, int it) {
  for (int i = 0; i < N; i++) {
    double s = i < N / 2 ? b->b[N / 2 + i] : 7.0 * i + it;
    MT_EXPECT(b->c[i] == a[i] && sum[i] == a[i] + b->b[i] && b->vb[i] == -i - it);
    MT_EXPECT(b->got[i] == 7.0 * i + it && b->seg[i] == s && b->m2[i] == 3.0 * i - it);
  }
}

static int build(bufs *b, cdag_graph **g) {
  MPI_Datatype vec;
  MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  cdag_op s1, r1, cp, red, last;
  int seg = -1, rc = cdag_graph_create(MPI_COMM_WORLD, g);
  if (!rc) rc = cdag_scratch(*g, b->tmp, sizeof b->tmp);
  if (!rc) rc = cdag_send(*g, b->a, sizeof b->a, 0, 1, &s1);
  if (!rc) rc = cdag_recv(*g, b->c, sizeof b->c, 0, 1, &r1);
  if (!rc) rc = cdag_label(*g, r1, "self message");
  if (!rc) rc = cdag_send_type(*g, b->va, 1, vec, 0, 2, NULL);
  if (!rc) rc = cdag_recv(*g, b->vb, sizeof b->vb, 0, 2, NULL);
  if (!rc) rc = cdag_copy_local(*g, b->a, b->sum, sizeof b->a, &cp);
  if (!rc) rc = cdag_reduce_local(*g, b->b, b->sum, N, MPI_DOUBLE, MPI_SUM, &red);
  if (!rc) rc = cdag_depend(*g, s1, red);
  if (!rc) rc = cdag_copy_local(*g, b->b, b->tmp, sizeof b->b, &last);
  if (!rc) rc = cdag_segment(*g, b->seg, sizeof b->seg, &seg);
  if (!rc) rc = cdag_fence(*g);
  if (!rc) rc = cdag_get(*g, b->got, sizeof b->got, 0, seg, 0, NULL);
  if (!rc) rc = cdag_fence(*g);
  if (!rc) rc = cdag_put(*g, b->b + N / 2, N / 2 * sizeof *b->b, 0, seg, 0, NULL);
  if (!rc) rc = cdag_fence(*g);
  cdag_layout l = {8, 8, 2, 4, 1, 1, 0, 0};
  if (!rc) rc = cdag_redistribute(*g, &l, b->m1, &l, b->m2, sizeof *b->m1);
  MPI_Type_free(&vec);
  return rc;
}

/* Builds, compiles (detect on or off) and runs the graph; 1 if a call failed. */
static int phase(bufs *b, int detect, FILE *report) {
  cdag_graph *g = NULL;
  cdag_schedule *s = NULL, *s2 = NULL;
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  int stop = check(build(b, &g), "build");
  if (!stop) stop = check(cdag_compile(g, &o, &s), "cdag_compile");
  for (int it = 0; it < 2 && !stop; it++) {
    fill(b, it);
    stop = check(cdag_run(s), "cdag_run");
    if (!stop) verify(b, b->a, b->sum, it);
  }
  int done = 0;
  fill(b, 5);
  if (!stop) stop = check(cdag_start(s), "cdag_start");
  if (!stop) stop = check(cdag_test(s, &done), "cdag_test");
  if (!stop) stop = check(cdag_wait(s), "cdag_wait");
  if (!stop) verify(b, b->a, b->sum, 5);
  cdag_rebind mv[2] = {{b->a, b->a2, sizeof b->a}, {b->sum, b->sum2, sizeof b->sum}};
  if (!stop) stop = check(cdag_schedule_rebind(s, 2, mv, &s2), "cdag_schedule_rebind");
  if (!stop) {   /* the copy reads a2 and writes sum2: a and sum must not matter */
    fill(b, 9);
    memcpy(b->a2, b->a, sizeof b->a);
    for (int i = 0; i < N; i++) b->a[i] = -7, b->sum2[i] = -1;
    stop = check(cdag_run(s2), "cdag_run (rebound)");
    if (!stop) verify(b, b->a2, b->sum2, 9);
  }
  if (!stop) stop = check(cdag_schedule_report(s, report, detect), "cdag_schedule_report");
  cdag_schedule_free(&s2);
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  return stop;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  FILE *report = fopen("/dev/null", "w");
  if (!report) return perror("/dev/null"), 2;
  void (*arm)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "failmalloc_arm");
  if (arm) arm();
  static bufs b;
  int stop = phase(&b, 1, report);
  if (!stop) stop = phase(&b, 0, report);
  fclose(report);
  MPI_Finalize();
  int failures = atomic_load(&mt_failures);   /* the sweep reads the exit code: no agreement */
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 3 : stop;
}

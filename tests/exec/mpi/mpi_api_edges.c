/* cdag MPI test — the API where a new user trips (issue #35; run with mpiexec -n 1 or 2):
 *   cdag_graph_save on a distributed graph is CDAG_ERR_ARG (it wrote an empty file from
 *   every rank to one path) and writes nothing; cdag_test on a schedule that is not running
 *   sets done = 1 and returns CDAG_OK, as MPI_Test on an inactive request (a
 *   `while (!done) cdag_test(...)` loop spun forever); an uncommitted datatype is
 *   CDAG_ERR_ARG naming the call (MPI_Pack aborted the process); cdag_run(NULL) and a
 *   second start through cdag_run name cdag_run, not cdag_start; cdag_run after
 *   MPI_Finalize is CDAG_ERR_STATE in cdag's words (MPICH aborted); cdag_schedule_free of a
 *   run started and not completed before MPI_Finalize frees it and says so; errors the layer
 *   under the API finds name the rank and the call. Exit 0 on success. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mpi_test.h"

static int R, P;

/* cdag's last message contains text. */
#define SAYS(text) MT_EXPECT_STR(cdag_error_message(), text)

static char out[8], in[8];

static cdag_graph *ring(void) {
  cdag_graph *g = NULL;
  MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
  MT_EXPECT(cdag_send(g, out, 8, (R + 1) % P, 0, NULL) == CDAG_OK);
  MT_EXPECT(cdag_recv(g, in, 8, (R + P - 1) % P, 0, NULL) == CDAG_OK);
  return g;
}

static void save_distributed(void) {
  char path[64];
  snprintf(path, sizeof path, "mpi_api_edges.%d.cdag", (int)getpid());
  if (R == 0) unlink(path);
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  cdag_graph *g = ring();
  MT_EXPECT(cdag_graph_save(g, path) == CDAG_ERR_ARG);
  SAYS("cdag_graph_save: a distributed graph");
  SAYS("cdag_graph_dump");
  MT_EXPECT(access(path, F_OK) != 0);   /* nothing written */
  MT_EXPECT(cdag_graph_dump(g, path) == CDAG_OK);   /* the way to save it */
  if (R == 0) {
    cdag_graph *back = NULL;
    MT_EXPECT(cdag_graph_load(path, &back) == CDAG_OK);
    int np = 0;
    int64_t nops = 0;
    MT_EXPECT(back && cdag_graph_info(back, &np, &nops) == CDAG_OK && np == P && nops == 2 * P);
    cdag_graph_free(&back);
    unlink(path);
  }
  cdag_graph_free(&g);
}

static void test_not_running(cdag_schedule *s) {
  int done = 0;
  MT_EXPECT(cdag_test(s, &done) == CDAG_OK && done == 1);   /* never started */
  for (int k = 0; k < 2; k++) {
    memset(out, R + 1 + k, sizeof out);
    MT_EXPECT(cdag_start(s) == CDAG_OK);
    for (done = 0; !done;) MT_EXPECT(cdag_test(s, &done) == CDAG_OK);
    MT_EXPECT(in[7] == (char)((R + P - 1) % P + 1 + k));
    done = 0;
    MT_EXPECT(cdag_test(s, &done) == CDAG_OK && done == 1);   /* completed: still nothing to do */
    if (k == 0) MT_EXPECT(cdag_wait(s) == CDAG_OK);   /* after done: returns at once */
  }
  MT_EXPECT(cdag_run(s) == CDAG_OK);   /* the skipped wait leaves nothing behind */
}

static void names(cdag_schedule *s) {
  MT_EXPECT(cdag_run(NULL) == CDAG_ERR_ARG);
  SAYS("cdag_run: schedule is NULL");
  MT_EXPECT(cdag_wait(NULL) == CDAG_ERR_ARG);
  SAYS("cdag_wait: schedule is NULL");
  MT_EXPECT(cdag_start(s) == CDAG_OK);
  MT_EXPECT(cdag_run(s) == CDAG_ERR_STATE);
  SAYS("cdag_run: the schedule is already running");
  MT_EXPECT(cdag_wait(s) == CDAG_OK);
}

static void uncommitted_type(void) {
  MPI_Datatype v;
  MPI_Type_vector(2, 1, 2, MPI_INT, &v);   /* not committed */
  int buf[4] = {0}, got[2] = {0};
  cdag_graph *g = NULL;
  MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
  MT_EXPECT(cdag_send_type(g, buf, 1, v, R, 0, NULL) == CDAG_ERR_ARG);
  SAYS("cdag_send_type");
  SAYS("MPI_Type_commit");
  MT_EXPECT(!strstr(cdag_error_message(), "error stack"));   /* MPI's class, not its cut-off stack */
  MT_EXPECT(cdag_recv_type(g, buf, 1, v, R, 0, NULL) == CDAG_ERR_ARG);
  SAYS("cdag_recv_type");
  /* committed, the same type works, and MPI's own error handling is as it was */
  MPI_Type_commit(&v);
  MT_EXPECT(cdag_send_type(g, buf, 1, v, R, 0, NULL) == CDAG_OK);
  MT_EXPECT(cdag_recv_type(g, got, 2, MPI_INT, R, 0, NULL) == CDAG_OK);
  cdag_schedule *s = NULL;
  MT_EXPECT(cdag_compile(g, NULL, &s) == CDAG_OK);
  cdag_schedule_free(&s);
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh);
  MT_EXPECT(eh == MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&eh);
  MPI_Type_free(&v);
  cdag_graph_free(&g);
}

/* Errors the layer under the API finds (it serves global graphs too) still name the rank and
   the call: a peer out of range, an op after compiling, a buffer that wraps, a dependency on
   an op that does not exist. */
static void named_errors(void) {
  static char buf[8];
  char want[64];
  cdag_graph *g = NULL;
  MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
  snprintf(want, sizeof want, "rank %d: cdag_send: ", R);
  MT_EXPECT(cdag_send(g, buf, 8, P, 0, NULL) == CDAG_ERR_ARG);
  SAYS(want);
  SAYS("out of range");
  snprintf(want, sizeof want, "rank %d: cdag_recv: ", R);
  MT_EXPECT(cdag_recv(g, (void *)(uintptr_t)(UINTPTR_MAX - 3), 8, R, 0, NULL) == CDAG_ERR_ARG);
  SAYS(want);
  SAYS("wraps around");
  snprintf(want, sizeof want, "rank %d: cdag_depend: ", R);
  MT_EXPECT(cdag_depend(g, 0, 5) == CDAG_ERR_ARG);
  SAYS(want);
  cdag_op c;
  MT_EXPECT(cdag_copy_local(g, buf, buf + 4, 4, &c) == CDAG_OK);
  cdag_schedule *s = NULL;
  MT_EXPECT(cdag_compile(g, NULL, &s) == CDAG_OK);
  snprintf(want, sizeof want, "rank %d: cdag_copy_local: ", R);
  MT_EXPECT(cdag_copy_local(g, buf + 4, buf, 4, NULL) == CDAG_ERR_STATE);
  SAYS(want);
  SAYS("graph was compiled");
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
}

/* A typed message adds packing copies and its message to the graph; an error about one of
   those names the op the call returned (a program that keeps its handles can find it): here
   rank 0 receives 11 strided doubles where rank 1 sends 22, at 2 or more processes. */
static void typed_errors(void) {
  if (P < 2 || R > 1) {
    cdag_graph *g = NULL;   /* the others compile an empty graph with them */
    MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
    cdag_schedule *s = NULL;
    MT_EXPECT(cdag_compile(g, NULL, &s) != CDAG_OK || P < 2);
    cdag_schedule_free(&s);
    cdag_graph_free(&g);
    return;
  }
  static double a[64];
  MPI_Datatype every_other;
  MPI_Type_vector(22, 1, 2, MPI_DOUBLE, &every_other);
  MPI_Type_commit(&every_other);
  cdag_graph *g = NULL;
  MT_EXPECT(cdag_graph_create(MPI_COMM_WORLD, &g) == CDAG_OK);
  cdag_op held = CDAG_OP_NULL;
  MT_EXPECT(cdag_copy_local(g, a + 60, a + 62, 8, NULL) == CDAG_OK);   /* an op before it */
  if (R == 0) MT_EXPECT(cdag_recv_type(g, a, 1, every_other, 1, 3, &held) == CDAG_OK);
  else MT_EXPECT(cdag_send_type(g, a, 2, every_other, 0, 3, &held) == CDAG_OK);
  cdag_schedule *s = NULL;
  MT_EXPECT(cdag_compile(g, NULL, &s) == CDAG_ERR_TRUNCATE);
  char want[96];
  snprintf(want, sizeof want, "part of the typed message returned as op %lld", (long long)held);
  if (R == 0) SAYS(want);   /* the receive is one of the ops cdag_recv_type added */
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
  MPI_Type_free(&every_other);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  save_distributed();
  cdag_graph *g = ring();
  cdag_schedule *s = NULL;
  MT_OK(cdag_compile(g, NULL, &s));
  cdag_graph_free(&g);
  if (s) {
    test_not_running(s);
    names(s);
  }
  uncommitted_type();
  named_errors();
  typed_errors();
  /* a run started and never completed (local copies only: nothing in flight for MPI) */
  static char from[8] = "started", to[8];
  cdag_schedule *s2 = NULL;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  MT_OK(cdag_copy_local(g, from, to, 8, NULL));
  MT_OK(cdag_compile(g, NULL, &s2));
  cdag_graph_free(&g);
  if (s2) MT_OK(cdag_start(s2));
  int status = mt_finish("mpi_api_edges");   /* MPI_Finalize */
  if (s2) {   /* freed all the same, the reason said */
    int rc = cdag_schedule_free(&s2);
    const char *want = "cdag_schedule_free: the run cdag_start began was not completed before MPI_Finalize";
    if (rc != CDAG_ERR_STATE || s2 || !strstr(cdag_error_message(), want)) {
      fprintf(stderr, "rank %d: cdag_schedule_free of a started run after MPI_Finalize returned %s: %s\n", R,
              cdag_strerror(rc), cdag_error_message());
      status = 1;
    }
  }
  if (s) {   /* after MPI_Finalize: cdag's error, no abort */
    int rc = cdag_run(s);
    if (rc != CDAG_ERR_STATE || !strstr(cdag_error_message(), "cdag_run after MPI_Finalize")) {
      fprintf(stderr, "rank %d: cdag_run after MPI_Finalize returned %s: %s\n", R, cdag_strerror(rc), cdag_error_message());
      status = 1;
    }
    if (cdag_schedule_free(&s) != CDAG_OK) status = 1;
  }
  return status;
}

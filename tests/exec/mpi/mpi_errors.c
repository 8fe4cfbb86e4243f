/* cdag MPI test — errors reach every rank as the same code and message, and nothing hangs
 * (run with mpiexec -n 1..8):
 *   a send without a receive (CDAG_ERR_UNMATCHED), a receive smaller than its send
 *   (CDAG_ERR_TRUNCATE), two ranks that each receive before they send (CDAG_ERR_CYCLE),
 *   options.root out of range, ranks that disagree on options.root or on any other field, a
 *   bad option on the last rank only (all CDAG_ERR_ARG, collective), an inter-communicator,
 *   the cdag_rank_* calls on a distributed graph, a CDAG_REPORT that cannot be written
 *   (CDAG_ERR_IO), and local misuse: NULL arguments, a global
 *   graph, a bad destination, the reserved tag CDAG_REDISTRIBUTE_TAG, a tag above MPI_TAG_UB, cdag_wait without
 *   cdag_start, adding to a compiled graph; cdag_schedule_free of a started run completes
 *   it.
 * Graph errors are checked with detection on and off. After the errors, a correct graph
 * still compiles and runs. Exit 0 on success. */
#include <stdio.h>
#include <string.h>

#include "exec/mpi/schedule.h"
#include "mpi_test.h"

static int R, P;

/* A failure found at the caller's line (the helpers below check for their callers). */
static void fail(const char *what, int line) { mt_fail(__FILE__, line, what); }

static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h >> 1;
}

/* Every rank got `want` and the same non-empty message. */
static void expect_same_error(int rc, int want, const char *name, int line) {
  int64_t v[3] = {(int64_t)text_hash(cdag_error_message()), 0, rc == want};
  v[1] = -v[0];
  MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, v + 2, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  if (rc != want) {
    fprintf(stderr, "rank %d: %s: got %s (%s), expected %s\n", R, name, cdag_strerror(rc), cdag_error_message(),
            cdag_strerror(want));
    fail(name, line);
  }
  if (v[0] != -v[1]) fail("ranks got different messages", line);
  if (!cdag_error_message()[0]) fail("empty message", line);
  if (R == 0 && v[2]) printf("%s: %s\n", name, cdag_error_message());
}

/* Compiles g (consumed) with options o and checks the error on every rank. */
static void compile_expect(cdag_graph *g, const cdag_options *o, int want, const char *name, int line) {
  cdag_schedule *s = NULL;
  int rc = cdag_compile(g, o, &s);
  expect_same_error(rc, want, name, line);
  MT_EXPECT(s == NULL);
  cdag_schedule_free(&s);
  cdag_graph_free(&g);
}

static cdag_graph *graph(void) {
  cdag_graph *g = NULL;
  MT_OK(cdag_graph_create(MPI_COMM_WORLD, &g));
  return g;
}

static char buf[4][64];

static void graph_errors(int detect) {
  cdag_options o;
  cdag_options_init(&o);
  o.detect = detect;
  cdag_graph *g = graph();  /* rank 0 sends to the last rank, nobody receives */
  if (R == 0) {
    cdag_op op = -1;
    MT_OK(cdag_send(g, buf[0], 8, P - 1, 5, &op));
    MT_OK(cdag_label(g, op, "lonely send"));
  }
  compile_expect(g, &o, CDAG_ERR_UNMATCHED, "send without receive", __LINE__);
  MT_EXPECT_STR(cdag_error_message(), "lonely send");   /* the label is in the message */

  g = graph();  /* rank 0 sends 16 bytes, the last rank receives 8 */
  if (R == 0) MT_OK(cdag_send(g, buf[0], 16, P - 1, 1, NULL));
  if (R == P - 1) MT_OK(cdag_recv(g, buf[1], 8, 0, 1, NULL));
  compile_expect(g, &o, CDAG_ERR_TRUNCATE, "truncation", __LINE__);

  g = graph();  /* ranks 0 and the last both receive first and send what they received */
  if (R == 0 || R == P - 1) {
    int peer = P - 1 - R;
    MT_OK(cdag_recv(g, buf[2], 8, peer, 2, NULL));
    MT_OK(cdag_send(g, buf[2], 8, peer, 2, NULL));  /* reads what the receive wrote */
  }
  compile_expect(g, &o, CDAG_ERR_CYCLE, "deadlock", __LINE__);
}

static void option_errors(void) {
  cdag_options o;
  cdag_options_init(&o);
  o.root = P;  /* the same bad root everywhere */
  compile_expect(graph(), &o, CDAG_ERR_ARG, "root out of range", __LINE__);
  if (P > 1) {
    cdag_options_init(&o);
    o.root = R == 0 ? 0 : 1;  /* disagreement */
    compile_expect(graph(), &o, CDAG_ERR_ARG, "ranks disagree on the root", __LINE__);
  }
  cdag_options_init(&o);
  if (R == P - 1) o.density = -1;  /* only one rank is wrong */
  compile_expect(graph(), &o, CDAG_ERR_ARG, "bad option on one rank", __LINE__);
  if (P < 2) return;
  /* every field: valid values that differ between ranks fail on every rank, naming the field */
  static const char *const fields[] = {"detect", "density", "exact_float", "min_group", "kernel", "alpha", "beta",
                                       "blocks", "measure"};
  for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
    cdag_options_init(&o);
    if (R == P - 1) {
      switch (f) {
      case 0: o.detect = 0; break;
      case 1: o.density = 0.5; break;
      case 2: o.exact_float = 1; break;
      case 3: o.min_group = 3; break;
      case 4: o.kernel = CDAG_KERNEL_CDAG; break;
      case 5: o.alpha = 2e-6; break;
      case 6: o.beta = 1e-9; break;
      case 7: o.blocks = 2; break;
      default: o.measure = 1; break;
      }
    }
    char what[64];
    snprintf(what, sizeof what, "ranks disagree on options.%s", fields[f]);
    compile_expect(graph(), &o, CDAG_ERR_ARG, what, __LINE__);
    char want[64];
    snprintf(want, sizeof want, "different options.%s (", fields[f]);
    MT_EXPECT_STR(cdag_error_message(), want);
  }
}

/* A CDAG_REPORT that cannot be written fails the compile on every rank (it was ignored). */
static void report_errors(void) {
  static const char *const where[] = {"/nonexistent-dir/cdag-report.json", "/dev/full"};
  for (int k = 0; k < 2; k++) {
    setenv("CDAG_REPORT", where[k], 1);
    cdag_graph *g = graph();
    MT_OK(cdag_send(g, buf[0], 8, (R + 1) % P, 3 + k, NULL));
    MT_OK(cdag_recv(g, buf[1], 8, (R + P - 1) % P, 3 + k, NULL));
    compile_expect(g, NULL, CDAG_ERR_IO, k ? "report write fails" : "report cannot be opened", __LINE__);
    MT_EXPECT_STR(cdag_error_message(), "CDAG_REPORT=");
  }
  unsetenv("CDAG_REPORT");
}

/* An inter-communicator is refused when the graph is created, on every rank. */
static void intercomm_refused(void) {
  if (P < 2) return;
  MPI_Comm half, inter;
  int color = R < P / 2;
  MPI_Comm_split(MPI_COMM_WORLD, color, R, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? P / 2 : 0, 7, &inter);
  cdag_graph *g = NULL;
  int rc = cdag_graph_create(inter, &g);
  MT_EXPECT_RC(rc, CDAG_ERR_ARG);
  MT_EXPECT(g == NULL);
  MT_EXPECT_STR(cdag_error_message(), "inter-communicator");
  cdag_graph_free(&g);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

static void local_errors(void) {
  cdag_schedule *s = NULL;
  cdag_graph *gl = NULL, *g = graph();
  MT_EXPECT_RC(cdag_compile(NULL, NULL, &s), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_compile(g, NULL, NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_send(g, buf[0], 8, P, 0, NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_recv(g, buf[0], 8, -3, 0, NULL), CDAG_ERR_ARG);
  /* tag 32767 is cdag_redistribute's (CDAG_REDISTRIBUTE_TAG): refused in the program's own messages */
  MT_EXPECT_RC(cdag_send(g, buf[0], 8, (R + 1) % P, CDAG_REDISTRIBUTE_TAG, NULL), CDAG_ERR_ARG);
  MT_EXPECT(strstr(cdag_error_message(), "cdag_send to rank") && strstr(cdag_error_message(), "tag 32767 is reserved"));
  MT_EXPECT_RC(cdag_recv(g, buf[0], 8, 0, CDAG_REDISTRIBUTE_TAG, NULL), CDAG_ERR_ARG);
  MT_EXPECT(strstr(cdag_error_message(), "cdag_recv from rank 0: tag 32767 is reserved") != NULL);
  MT_EXPECT_RC(cdag_send_type(g, buf[0], 2, MPI_INT, 0, CDAG_REDISTRIBUTE_TAG, NULL), CDAG_ERR_ARG);
  MT_EXPECT(strstr(cdag_error_message(), "cdag_send_type to rank 0: tag 32767") != NULL);
  MT_EXPECT_RC(cdag_recv_type(g, buf[0], 2, MPI_INT, 0, CDAG_REDISTRIBUTE_TAG, NULL), CDAG_ERR_ARG);
  MT_EXPECT(strstr(cdag_error_message(), "cdag_recv_type from rank 0: tag 32767") != NULL);
  /* null handles in a local reduction: bad arguments, as in typed messages */
  MT_EXPECT_RC(cdag_reduce_local(g, buf[0], buf[1], 2, MPI_DATATYPE_NULL, MPI_SUM, NULL), CDAG_ERR_ARG);
  MT_EXPECT(strstr(cdag_error_message(), "datatype is MPI_DATATYPE_NULL") != NULL);
  MT_EXPECT_RC(cdag_reduce_local(g, buf[0], buf[1], 2, MPI_INT, MPI_OP_NULL, NULL), CDAG_ERR_ARG);
  /* above MPI_TAG_UB: erroneous in MPI, so refused though cdag's own messages would not mind */
  int *ub = NULL, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  if (flag && ub && *ub < INT32_MAX) {
    MT_EXPECT_RC(cdag_send(g, buf[0], 8, 0, *ub + 1, NULL), CDAG_ERR_ARG);
    MT_EXPECT(strstr(cdag_error_message(), "is above the communicator's MPI_TAG_UB") != NULL);
    MT_EXPECT_RC(cdag_recv_type(g, buf[0], 2, MPI_INT, 0, *ub + 1, NULL), CDAG_ERR_ARG);
  }
  MT_EXPECT_RC(cdag_send(g, buf[2], 8, (R + 1) % P, CDAG_REDISTRIBUTE_TAG - 1, NULL), CDAG_OK);   /* any other tag */
  MT_EXPECT_RC(cdag_recv(g, buf[3], 8, (R - 1 + P) % P, CDAG_REDISTRIBUTE_TAG - 1, NULL), CDAG_OK);
  /* the global-graph calls on a distributed graph (the run crashed at address 0x10) */
  MT_EXPECT_RC(cdag_rank_send(g, R, 0x10, 8, 0, 0, NULL), CDAG_ERR_ARG);
  MT_EXPECT_STR(cdag_error_message(), "cdag_rank_send on a distributed graph");
  MT_EXPECT_RC(cdag_rank_recv(g, R, 0x10, 8, 0, 0, NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_rank_reduce_local(g, R, 0x10, 0x20, 1, CDAG_INT32, CDAG_SUM, NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_rank_copy_local(g, R, 0x10, 0x20, 4, NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_rank_scratch(g, R, 0x10, 4), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_run(NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_start(NULL), CDAG_ERR_ARG);
  MT_EXPECT_RC(cdag_schedule_report(NULL, stdout, 0), CDAG_ERR_ARG);
  MT_OK(cdag_graph_create_global(P, &gl));
  MT_EXPECT_RC(cdag_compile(gl, NULL, &s), CDAG_ERR_ARG);
  cdag_graph_free(&gl);
  /* a correct graph still works after all that: a ring shift */
  MT_OK(cdag_send(g, buf[0], 8, (R + 1) % P, 0, NULL));
  MT_OK(cdag_recv(g, buf[1], 8, (R - 1 + P) % P, 0, NULL));
  memset(buf[0], R + 1, 8);
  cdag_options o;
  cdag_options_init(&o);
  o.root = P - 1;  /* any rank may compile */
  MT_OK(cdag_compile(g, &o, &s));
  MT_EXPECT_RC(cdag_wait(s), CDAG_ERR_STATE);
  MT_EXPECT_RC(cdag_send(g, buf[0], 8, 0, 9, NULL), CDAG_ERR_STATE);
  MT_OK(cdag_run(s));
  MT_EXPECT_INT(buf[1][7], ==, (char)((R - 1 + P) % P + 1));
  MT_OK(cdag_start(s));
  MT_EXPECT_RC(cdag_start(s), CDAG_ERR_STATE);
  MT_OK(cdag_wait(s));
  /* freed while running: the run completes first, as cdag_wait does, its results in place */
  memset(buf[0], R + 11, 8);
  memset(buf[1], 0, 8);
  MT_OK(cdag_start(s));
  MT_OK(cdag_schedule_free(&s));
  MT_EXPECT(s == NULL);
  MT_EXPECT_INT(buf[1][7], ==, (char)((R - 1 + P) % P + 11));
  MT_OK(cdag_schedule_free(&s));
  MT_OK(cdag_schedule_free(NULL));
  cdag_graph_free(&g);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  graph_errors(1);
  graph_errors(0);
  option_errors();
  local_errors();
  intercomm_refused();
  report_errors();
  return mt_finish("mpi_errors");
}

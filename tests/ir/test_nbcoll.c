/* cdag tests — tests/ir/test_nbcoll.c: nonblocking native collectives (`nonblocking`,
 * completed by a `wait` naming the call).
 *
 * What finalize makes of them: the ops a rank runs between the start and the wait are not
 * ordered after the call's messages (a program that sends between them to a rank that
 * starts the call only after receiving it is no deadlock, where the blocking form is one),
 * a computation reading all there reads nothing the call writes, and the ops after the wait
 * are ordered after the whole call. Every kind leaves the memory its blocking form leaves
 * (tests/ir/test_collective.c checks that form against MPI's definitions), verifies and is
 * reported native; members must agree on blocking or not; the text format and the wire
 * round-trip the flag. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "support/graphs.h"
#include "exec/sim/sim.h"
#include "format/format.h"
#include "wire/wire.h"

/* Is there a path of dependencies from op a to op b (one rank: the lists are local)? */
static int reaches(const cdag_graph *g, int32_t a, int32_t b) {
  uint8_t *seen = calloc((size_t)g->nops, 1);
  int32_t *stack = malloc((size_t)g->nops * sizeof *stack), n = 0;
  ck_assert(seen && stack);
  int found = 0;
  stack[n++] = a;
  seen[a] = 1;
  while (n && !found) {
    int32_t v = stack[--n];
    found = v == b;
    for (int32_t k = g->succ_start[v]; k < g->succ_start[v + 1]; k++)
      if (!seen[g->succ[k]]) seen[g->succ[k]] = 1, stack[n++] = g->succ[k];
  }
  free(seen);
  free(stack);
  return found;
}

/* The op of rank r labelled l. */
static int32_t labelled(const cdag_graph *g, int r, const char *l) {
  for (int32_t i = g->rank_start[r]; i < g->rank_start[r + 1]; i++) {
    const char *x = ir_label(g, g->rank_ops[i]);
    if (x && !strcmp(x, l)) return g->rank_ops[i];
  }
  ck_abort_msg("rank %d has no op %s", r, l);
  return -1;
}

/* Rank 0 sends to rank 1 between starting the allreduce and waiting for it, and computes
   there; rank 1 receives that message before it starts its allreduce. */
static const char *overlap = "num_ranks 2\n"
                             "rank 0 {\n"
                             "  a: allreduce 4 int32 sum in 0x1000 out 0x2000%s\n"
                             "  s: send 8b to 1 addr 0x3000\n"
                             "  c: compute 100 reads all writes 8b at 0x4000\n"
                             "  %s\n"
                             "  t: send 16b to 1 addr 0x2000\n"
                             "  u: send 8b to 1 tag 1 addr 0x4000\n"
                             "}\n"
                             "rank 1 {\n"
                             "  recv 8b from 0 addr 0x3000 wait\n"
                             "  a: allreduce 4 int32 sum in 0x1000 out 0x2000%s\n"
                             "  %s\n"
                             "  recv 16b from 0 addr 0x5000\n"
                             "  recv 8b from 0 tag 1 addr 0x6000\n"
                             "}\n";

static cdag_graph *overlap_graph(int nonblocking) {
  char text[1024];
  const char *nb = nonblocking ? " nonblocking" : "", *w = nonblocking ? "w: wait a" : "calc 0";
  snprintf(text, sizeof text, overlap, nb, w, nb, w);
  return cdag_test_text_graph(text);
}

START_TEST(only_its_wait_orders_after_it) {
  cdag_graph *g = overlap_graph(1);
  int32_t a = labelled(g, 0, "a"), s = labelled(g, 0, "s"), c = labelled(g, 0, "c"), w = labelled(g, 0, "w"),
          t = labelled(g, 0, "t");
  ck_assert_int_eq(g->os[a], IR_OS_COLL);
  ck_assert_int_eq(g->join[a], IR_JOIN_CALL);
  ck_assert(g->calls[g->call[a]].nonblocking);
  ck_assert(ir_is_nb_call(g, a) && !ir_is_calc_join(g, a));
  for (int32_t i = 0; i < g->nops; i++) {   /* the call's messages, reduction and copy on rank 0 */
    if (g->rank[i] != 0 || g->call[i] != g->call[a] || i == a) continue;
    ck_assert_msg(!reaches(g, i, s) && !reaches(g, i, c), "op %d of the call orders an op between start and wait", i);
    ck_assert_msg(reaches(g, i, a) && reaches(g, i, t), "op %d of the call is not ordered before the op after the wait", i);
  }
  ck_assert(reaches(g, a, w) && reaches(g, w, t) && reaches(g, c, labelled(g, 0, "u")));
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  ck_assert_int_eq(p->native_calls[IR_COLL_ALLREDUCE], 1);
  ck_assert_msg(exec_verify(g, p, 7, 3) == CDAG_OK, "%s", cdag_error_message());
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* The same program with blocking calls is a deadlock (rank 0 waits in its allreduce for
   rank 1, which waits for rank 0's message first). */
START_TEST(blocking_form_deadlocks) {
  cdag_graph *g = overlap_graph(0);
  cdag_plan *p = NULL;
  ck_assert_int_eq(cdag_analyze(g, NULL, &p), CDAG_ERR_CYCLE);
  cdag_graph_free(&g);
}
END_TEST

/* A nonblocking barrier's root waits for every member inside the call (a JOIN_CALL): the
   root's send between start and wait stays free of it, so rank 1 may receive it first. */
START_TEST(barrier_root_orders_only_its_call) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 3\n"
                                       "rank 0 {\n b: barrier nonblocking\n s: send 8b to 1 addr 0x10\n wait b\n}\n"
                                       "rank 1 {\n recv 8b from 0 addr 0x10 wait\n b: barrier nonblocking\n wait b\n}\n"
                                       "rank 2 {\n b: barrier nonblocking\n wait b\n}\n");
  int32_t b = labelled(g, 0, "b"), s = labelled(g, 0, "s");
  for (int32_t i = 0; i < g->nops; i++)
    if (g->rank[i] == 0 && g->call[i] == g->call[b] && i != b) {
      ck_assert(!reaches(g, i, s));
      ck_assert(reaches(g, i, b));
    }
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  ck_assert_int_eq(p->native_calls[IR_COLL_BARRIER], 1);
  CK_OK(exec_verify(g, p, 3, 3));
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* A computation reading all between start and wait reads none of the call's output (MPI
   forbids it): no dependency on the call's receives or reduction; one after the wait does. */
START_TEST(reads_all_sees_the_output_from_the_wait) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 2\n"
                                       "rank 0 {\n a: allreduce 2 int32 sum in 0x100 out 0x200 nonblocking\n"
                                       " c: compute 5 reads all writes 8b at 0x300\n wait a\n"
                                       " d: compute 5 reads all writes 8b at 0x400\n send 8b to 1 addr 0x400\n}\n"
                                       "rank 1 {\n a: allreduce 2 int32 sum in 0x100 out 0x200 nonblocking\n"
                                       " c: compute 5 reads all writes 8b at 0x300\n wait a\n"
                                       " d: compute 5 reads all writes 8b at 0x400\n recv 8b from 0 addr 0x500\n}\n");
  for (int r = 0; r < 2; r++) {
    int32_t a = labelled(g, r, "a"), c = labelled(g, r, "c"), d = labelled(g, r, "d");
    int writes = 0;
    for (int32_t i = 0; i < g->nops; i++) {
      if (g->rank[i] != r || g->call[i] != g->call[a] || i == a) continue;
      if (g->kind[i] != IR_RECV && g->kind[i] != IR_REDUCE && g->kind[i] != IR_COPY) continue;
      writes++;
      ck_assert_msg(!reaches(g, i, c), "rank %d: the computation between start and wait depends on op %d", r, i);
      ck_assert_msg(reaches(g, i, d), "rank %d: the computation after the wait does not depend on op %d", r, i);
    }
    ck_assert_int_gt(writes, 0);
  }
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  CK_OK(exec_verify(g, p, 11, 3));
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* A call no wait names (completed in a later phase) wrote nothing the phase may read: rank
   0's computation after it does not wait for it, so rank 1 may receive what it computed
   before starting the call. */
START_TEST(unwaited_call_is_read_by_nothing) {
  cdag_graph *g = cdag_test_text_graph("num_ranks 2\n"
                                       "rank 0 {\n a: allreduce 2 int32 sum in 0x100 out 0x200 nonblocking\n"
                                       " c: compute 5 reads all writes 8b at 0x300\n s: send 8b to 1 addr 0x300\n}\n"
                                       "rank 1 {\n recv 8b from 0 addr 0x300 wait\n"
                                       " a: allreduce 2 int32 sum in 0x100 out 0x200 nonblocking\n wait a\n}\n");
  int32_t a = labelled(g, 0, "a"), c = labelled(g, 0, "c");
  for (int32_t i = 0; i < g->nops; i++)
    if (g->rank[i] == 0 && g->call[i] == g->call[a]) ck_assert_msg(!reaches(g, i, c), "op %d orders the computation", i);
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, NULL, &p));
  CK_OK(exec_verify(g, p, 5, 3));
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* A call line of each native kind over 3 ranks (root 1), buffers at 0x1000 and 0x100000. */
static const char *kind_line(int kind) {
  switch (kind) {
    case IR_COLL_BARRIER: return "barrier";
    case IR_COLL_BCAST: return "bcast 16b root 1 addr 0x100000";
    case IR_COLL_GATHER: return "gather 16b root 1 in 0x1000 out 0x100000";
    case IR_COLL_SCATTER: return "scatter 16b root 1 in 0x1000 out 0x100000";
    case IR_COLL_ALLGATHER: return "allgather 16b in 0x1000 out 0x100000";
    case IR_COLL_ALLTOALL: return "alltoall 16b in 0x1000 out 0x100000";
    case IR_COLL_REDUCE: return "reduce 4 int32 sum root 1 in 0x1000 out 0x100000";
    case IR_COLL_ALLREDUCE: return "allreduce 4 int32 sum in 0x1000 out 0x100000";
    case IR_COLL_REDUCE_SCATTER_BLOCK: return "reduce_scatter_block 4 int32 sum in 0x1000 out 0x100000";
    default: return NULL;
  }
}

/* Every rank: the call, a ring message, a computation, the wait, then the output sent on.
   The computation reads all: what it reads differs between the forms (the blocking call's
   output is written before it), so its bytes are scratch, not compared. */
static cdag_graph *kind_graph(int kind, int nonblocking) {
  char text[4096];
  int n = snprintf(text, sizeof text, "num_ranks 3\n");
  for (int r = 0; r < 3; r++)
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "rank %d {\n copy 48b from 0x1000 to 0x1000\n copy 48b from 0x100000 to 0x100000\n"
                  " k: %s%s\n send 8b to %d tag 1 addr 0x9000\n recv 8b from %d tag 1 addr 0x9100\n"
                  " compute 10 reads all writes 8b at 0x9200\n wait k\n send 16b to %d tag 2 addr 0x100000\n"
                  " recv 16b from %d tag 2 addr 0x9300\n scratch 0x9200 8b\n}\n",
                  r, kind_line(kind), nonblocking ? " nonblocking" : "", (r + 1) % 3, (r + 2) % 3, (r + 1) % 3,
                  (r + 2) % 3);
  return cdag_test_text_graph(text);
}

/* Each kind: the memory of its blocking form, saved and loaded back the same, reported
   native, verified. */
START_TEST(every_kind_as_its_blocking_form) {
  for (int kind = 0; kind < IR_COLL_NKINDS; kind++) {
    const ir_coll_info *k = ir_coll_get(kind);   /* the kinds an MPI_I<kind> is recorded as */
    if (!k->native || k->vector || kind == IR_COLL_SCAN || kind == IR_COLL_EXSCAN) continue;
    ck_assert_ptr_nonnull(kind_line(kind));
    cdag_graph *nb = kind_graph(kind, 1), *bl = kind_graph(kind, 0);
    sim_mem *init, *a, *b;
    CK_OK(sim_mem_create(nb, &init));
    sim_mem_fill_random(init, 1000 + (uint64_t)kind);
    CK_OK(sim_mem_clone(init, &a));
    CK_OK(sim_mem_clone(init, &b));
    ck_assert_msg(sim_run_graph(nb, a, 5) == CDAG_OK, "%s: %s", ir_coll_name(kind), cdag_error_message());
    ck_assert_msg(sim_run_graph(bl, b, 5) == CDAG_OK, "%s: %s", ir_coll_name(kind), cdag_error_message());
    ck_assert_msg(sim_mem_compare(a, b, nb, 1) == CDAG_OK, "%s: %s", ir_coll_name(kind), cdag_error_message());
    char *t = cdag_test_save_str(nb), *t2;   /* the writer says it, the reader reads it back */
    ck_assert_msg(strstr(t, " nonblocking\n  send 8b"), "%s: %s", ir_coll_name(kind), t);
    cdag_graph *back = cdag_test_text_graph(t);
    ck_assert_str_eq(t, t2 = cdag_test_save_str(back));
    free(t);
    free(t2);
    cdag_graph_free(&back);
    cdag_plan *p = NULL;
    CK_OK(cdag_analyze(nb, NULL, &p));
    ck_assert_int_eq(p->native_calls[kind], 1);
    ck_assert_msg(exec_verify(nb, p, 9, 3) == CDAG_OK, "%s: %s", ir_coll_name(kind), cdag_error_message());
    cdag_plan_free(&p);
    sim_mem_free(init);
    sim_mem_free(a);
    sim_mem_free(b);
    cdag_graph_free(&nb);
    cdag_graph_free(&bl);
  }
}
END_TEST

START_TEST(members_agree_on_blocking) {
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 { a: barrier nonblocking\n wait a }\nrank 1 { barrier }\n"),
                   CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "disagree on the call"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "has nonblocking barrier"));
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "has barrier"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\nrank 0 { a: bcast 8b root 0 addr 0 nonblocking\n wait a }\n"
                                     "rank 1 { a: gather 8b root 0 in 0 nonblocking\n wait a }\n"),
                   CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "disagree on the call"));
  /* the k-th call is matched by start order: two started calls, completed in either order */
  cdag_graph *g = cdag_test_text_graph("num_ranks 2\n"
                                       "rank 0 { a: bcast 8b root 0 addr 0 nonblocking\n b: allreduce 1 int64 max in 8 out 16 nonblocking\n wait b\n wait a }\n"
                                       "rank 1 { a: bcast 8b root 0 addr 0 nonblocking\n b: allreduce 1 int64 max in 8 out 16 nonblocking\n wait a b }\n");
  cdag_graph_free(&g);
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 2\n"
                                     "rank 0 { a: bcast 8b root 0 addr 0 nonblocking\n b: allreduce 1 int64 max in 8 out 16 nonblocking\n wait a b }\n"
                                     "rank 1 { b: allreduce 1 int64 max in 8 out 16 nonblocking\n a: bcast 8b root 0 addr 0 nonblocking\n wait a b }\n"),
                   CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "disagree on the call"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 3\nrank 0 { a: barrier nonblocking\n wait a }\n"
                                     "rank 1 { a: barrier nonblocking\n wait a }\n"),
                   CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "not called by rank 2"));
}
END_TEST

START_TEST(format_errors) {
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 1\nrank 0 { barrier nonblocking wait }\n"), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "completed by a 'wait' line naming its label"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 1\nrank 0 { barrier nonblocking nonblocking }\n"), CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "duplicate 'nonblocking'"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 1\nrank 0 { reduce 2 int32 sum in 0 inout 8 nonblocking }\n"),
                   CDAG_ERR_FORMAT);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "belong to the native reduce"));
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 1\nrank 0 { send 8b to 0 addr 0 nonblocking }\n"), CDAG_ERR_FORMAT);
  ck_assert_int_eq(cdag_test_load_rc("num_ranks 1\nrank 0 { barrier nonblock }\n"), CDAG_ERR_FORMAT);
}
END_TEST

START_TEST(text_round_trip) {
  const char *text = "num_ranks 2\ncomm 3 ranks 1 0\n"
                     "rank 0 {\n  a: allreduce 4 int32 sum in 0x100 out 0x200 comm 3 nonblocking\n"
                     "  send 8b to 1 addr 0x300\n  b: reduce 2 int64 max root 1 in 0x400 nonblocking\n  wait b a\n"
                     "  barrier\n}\n"
                     "rank 1 {\n  a: allreduce 4 int32 sum in 0x100 out 0x200 comm 3 nonblocking\n"
                     "  recv 8b from 0 addr 0x300 wait\n  b: reduce 2 int64 max root 1 in 0x400 out 0x500 nonblocking\n"
                     "  wait a\n  wait b\n  barrier\n}\n";
  cdag_graph *g = cdag_test_text_graph(text);
  char *s = cdag_test_save_str(g);
  ck_assert_ptr_nonnull(strstr(s, "  a: allreduce 4 int32 sum in 0x100 out 0x200 comm 3 nonblocking\n"));
  ck_assert_ptr_nonnull(strstr(s, "  b: reduce 2 int64 max root 1 in 0x400 nonblocking\n  wait b a\n"));
  ck_assert_ptr_nonnull(strstr(s, "  b: reduce 2 int64 max root 1 in 0x400 out 0x500 nonblocking\n"));
  ck_assert_ptr_nonnull(strstr(s, "  barrier\n"));
  ck_assert_ptr_null(strstr(s, "barrier nonblocking"));
  cdag_graph *h = cdag_test_text_graph(s);
  char *s2 = cdag_test_save_str(h);
  ck_assert_str_eq(s, s2);
  ck_assert_int_eq(h->nops, g->nops);
  ck_assert_int_eq(h->nedges, g->nedges);
  for (int64_t c = 0; c < h->ncalls; c++) ck_assert_int_eq(h->calls[c].nonblocking, h->calls[c].kind != IR_COLL_BARRIER);
  free(s);
  free(s2);
  cdag_graph_free(&g);
  cdag_graph_free(&h);
}
END_TEST

/* Each process adds its own nonblocking calls and waits; the gathered graph keeps them so. */
START_TEST(distributed_calls_cross_the_wire) {
  enum { P = 3 };
  static int32_t in[P][4], out[P][4], side[P][2];
  cdag_graph *global;
  CK_OK(ir_graph_new(P, -1, &global));
  for (int r = 0; r < P; r++) {
    cdag_graph *g;
    CK_OK(ir_graph_new(P, r, &g));
    ir_call c = {.kind = IR_COLL_ALLREDUCE, .root = -1, .type = CDAG_INT32, .rop = CDAG_SUM,
                 .in = (uint64_t)(uintptr_t)in[r], .out = (uint64_t)(uintptr_t)out[r], .count = 4, .nonblocking = 1};
    ir_call b = {.kind = IR_COLL_BARRIER, .root = -1, .nonblocking = 1};
    int32_t a, bb, w;
    CK_OK(ir_add_coll_call(g, r, &c, NULL, &a));
    CK_OK(ir_add_coll_call(g, r, &b, NULL, &bb));
    CK_OK(ir_add_send(g, r, (uint64_t)(uintptr_t)side[r], 8, (r + 1) % P, 0, NULL));
    CK_OK(ir_add_recv(g, r, (uint64_t)(uintptr_t)side[(r + 2) % P], 8, (r + 2) % P, 0, NULL));
    int32_t both[2] = {a, bb};
    CK_OK(ir_add_wait(g, r, both, 2, &w));
    wire_buf wb = {0};
    CK_OK(wire_encode_rank(g, &wb));
    CK_OK(wire_decode_rank(global, wb.buf, wb.len, NULL));
    wire_free(&wb);
    cdag_graph_free(&g);
  }
  CK_OK(ir_finalize(global));
  ck_assert_int_eq(global->ncalls, 2 * P);
  for (int64_t c = 0; c < global->ncalls; c++) {
    ck_assert(global->calls[c].nonblocking);
    ck_assert(ir_is_nb_call(global, global->calls[c].op));
  }
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(global, NULL, &p));
  ck_assert_int_eq(p->native_calls[IR_COLL_ALLREDUCE], 1);
  ck_assert_int_eq(p->native_calls[IR_COLL_BARRIER], 1);
  CK_OK(exec_verify(global, p, 3, 2));
  cdag_plan_free(&p);
  cdag_graph_free(&global);
}
END_TEST

Suite *cdag_nbcoll_suite(void) {
  Suite *s = suite_create("nbcoll");
  TCase *t = tcase_create("nonblocking");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, only_its_wait_orders_after_it);
  tcase_add_test(t, blocking_form_deadlocks);
  tcase_add_test(t, barrier_root_orders_only_its_call);
  tcase_add_test(t, reads_all_sees_the_output_from_the_wait);
  tcase_add_test(t, unwaited_call_is_read_by_nothing);
  tcase_add_test(t, every_kind_as_its_blocking_form);
  tcase_add_test(t, members_agree_on_blocking);
  tcase_add_test(t, format_errors);
  tcase_add_test(t, text_round_trip);
  tcase_add_test(t, distributed_calls_cross_the_wire);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_nbcoll_suite)

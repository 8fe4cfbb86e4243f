/* cdag tests — tests/match/test_match.c: pairing sends with receives; deadlocks.
 *
 * Non-overtaking order per (source, dest, tag), tags as separate channels, sends to self,
 * every error (unmatched send, unmatched receive, truncation, cycles) with what its
 * message must name, and the order contract (dependencies respected, each send directly
 * followed by its receive when nothing else holds the receive back, sends held for their
 * receives when something does), also on graphs whose
 * op ids run against their dependencies and on thousands of random graphs. */
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "support/graphs.h"
#include "match/match.h"
#include "support/support.h"

static void run_ok(cdag_graph *g, match_result *m) {
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  int rc = match_run(g, m);
  ck_assert_msg(rc == CDAG_OK, "match_run: %s", cdag_error_message());
}

static int run_err(cdag_graph *g) {
  match_result m;
  ck_assert_int_eq(ir_finalize(g), CDAG_OK);
  int rc = match_run(g, &m);
  ck_assert_ptr_null(m.partner);
  return rc;
}

/* The order respects dependencies and puts every send before its receive. */
static void check_order(const cdag_graph *g, const match_result *m) {
  int32_t *at = malloc((size_t)g->nops * sizeof *at);
  for (int64_t i = 0; i < g->nops; i++) at[i] = -1;
  for (int64_t i = 0; i < g->nops; i++) {
    CK_HOT(at[m->order[i]] == -1);
    at[m->order[i]] = (int32_t)i;
  }
  for (int64_t op = 0; op < g->nops; op++) {
    for (int32_t k = g->pred_start[op]; k < g->pred_start[op + 1]; k++)
      CK_HOT(at[g->pred[k]] < at[op]);
    if (g->kind[op] == IR_SEND) CK_HOT(at[op] < at[m->partner[op]]);
  }
  free(at);
}

/* Every send with a tag of at least min_tag is directly followed by its receive. */
static void check_pairs_adjacent(const cdag_graph *g, const match_result *m, int min_tag) {
  for (int64_t i = 0; i < g->nops; i++)
    if (g->kind[m->order[i]] == IR_SEND && g->tag[m->order[i]] >= min_tag) {
      CK_HOT(i + 1 < g->nops); /* a send cannot come last: its receive follows it */
      CK_HOT(m->order[i + 1] == m->partner[m->order[i]]);
    }
}

/* Matches g, checks the order, frees both: for graphs that only must not fail. */
static void order_ok(cdag_graph *g) {
  match_result m;
  run_ok(g, &m);
  check_order(g, &m);
  match_free(&m);
  cdag_graph_free(&g);
}

START_TEST(non_overtaking) {
  cdag_graph *g = cdag_test_graph(2);
  cdag_op s[3], r[3];
  for (int i = 0; i < 3; i++) CK_OK(cdag_rank_send(g, 0, 8 * (uint64_t)i, 8, 1, 5, &s[i]));
  for (int i = 0; i < 3; i++) CK_OK(cdag_rank_recv(g, 1, 64 + 8 * (uint64_t)i, 8, 0, 5, &r[i]));
  match_result m;
  run_ok(g, &m);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(m.partner[s[i]], r[i]);
    ck_assert_int_eq(m.partner[r[i]], s[i]);
  }
  check_order(g, &m);
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(tags_are_channels) {
  cdag_graph *g = cdag_test_graph(2);
  cdag_op s0, s1, r1, r0;
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 0, &s0));
  CK_OK(cdag_rank_send(g, 0, 8, 8, 1, 1, &s1));
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 0, 1, &r1));   /* receives tag 1 first */
  CK_OK(cdag_rank_recv(g, 1, 8, 8, 0, 0, &r0));
  match_result m;
  run_ok(g, &m);
  ck_assert_int_eq(m.partner[s0], r0);
  ck_assert_int_eq(m.partner[s1], r1);
  check_order(g, &m);
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(send_to_self_and_larger_recv) {
  cdag_graph *g = cdag_test_graph(3);
  cdag_op s, r, s2, r2;
  CK_OK(cdag_rank_send(g, 2, 0, 16, 2, 0, &s));
  CK_OK(cdag_rank_recv(g, 2, 64, 16, 2, 0, &r));
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 0, &s2));
  CK_OK(cdag_rank_recv(g, 1, 0, 100, 0, 0, &r2));  /* larger receive: fine */
  match_result m;
  run_ok(g, &m);
  ck_assert_int_eq(m.partner[s], r);
  ck_assert_int_eq(m.partner[s2], r2);
  check_order(g, &m);
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(binomial_tree_order) {
  int p = 13;
  cdag_graph *g = cdag_test_graph(p);
  for (int r = 0; r < p; r++) {
    int k = 1;
    if (r) {
      int msb = 1 << (31 - __builtin_clz((unsigned)r));
      CK_OK(cdag_rank_recv(g, r, 0, 64, r - msb, 0, NULL));
      k = msb << 1;
    }
    for (; r + k < p; k <<= 1) CK_OK(cdag_rank_send(g, r, 0, 64, r + k, 0, NULL));
  }
  match_result m;
  run_ok(g, &m);
  check_order(g, &m);
  for (int64_t op = 0; op < g->nops; op++) ck_assert_int_ge(m.partner[op], 0);
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

/* The same tree added from the last rank to the first: op ids run against dependencies.
   Every receive waits only for its send, so it must come right after it. */
START_TEST(tree_added_backwards) {
  int p = 21;
  cdag_graph *g = cdag_test_graph(p);
  for (int r = p - 1; r >= 0; r--) {
    int k = 1;
    if (r) {
      int msb = 1 << (31 - __builtin_clz((unsigned)r));
      CK_OK(cdag_rank_recv(g, r, 0, 64, r - msb, 0, NULL));
      k = msb << 1;
    }
    for (; r + k < p; k <<= 1) CK_OK(cdag_rank_send(g, r, 0, 64, r + k, 0, NULL));
  }
  match_result m;
  run_ok(g, &m);
  check_order(g, &m);
  check_pairs_adjacent(g, &m, 0);
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

/* Recursive doubling added rank by rank (as a graph gathered from MPI processes is): a
   rank's send comes long before its partner has reduced the previous round into the
   receive buffer, so the send is held until then and every receive still follows its send
   directly (dataflow buffers no message). */
START_TEST(rank_by_rank_allreduce_keeps_pairs_together) {
  cdag_graph *g = cdag_test_graph(16);
  gen_set all = {0, 1, 16};
  gen_bufs b = {.data = 0, .out = 64, .scratch = 128};
  ck_assert_int_eq(gen_allreduce_recursive_doubling_by_rank(g, &all, 1, &b), CDAG_OK);
  match_result m;
  run_ok(g, &m);
  check_order(g, &m);
  check_pairs_adjacent(g, &m, 0);
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

/* A send held for its receive, whose other predecessor waits on a later message of the
   same sender: the hold never ends by itself and must end with the scan, not as a cycle. */
START_TEST(hold_that_never_ends_is_released) {
  cdag_graph *g = cdag_test_graph(2);
  cdag_op a, b, c, d;
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 0, &a));
  CK_OK(cdag_rank_send(g, 0, 64, 8, 1, 1, &b));
  CK_OK(cdag_rank_recv(g, 1, 64, 8, 0, 1, &c));
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 0, 0, &d));
  CK_OK(cdag_depend(g, a, b));
  CK_OK(cdag_depend(g, c, d));
  order_ok(g);
}
END_TEST

/* A send to self whose receive overwrites the sent buffer: the receive's edge from its own
   send does not hold the send back (held, it would run after the independent copy). */
START_TEST(send_to_self_in_place_is_not_held) {
  cdag_graph *g = cdag_test_graph(1);
  cdag_op s, r;
  CK_OK(cdag_rank_send(g, 0, 0, 8, 0, 0, &s));
  CK_OK(cdag_rank_recv(g, 0, 0, 8, 0, 0, &r));
  CK_OK(cdag_rank_copy_local(g, 0, 64, 128, 8, NULL));
  match_result m;
  run_ok(g, &m);
  check_order(g, &m);
  ck_assert_int_eq(m.order[0], s);
  ck_assert_int_eq(m.order[1], r);
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

/* A ring shift in place (each receive overwrites the buffer its rank sent: every held send
   waits on the next one, around the ring), then recursive doubling on other buffers, added
   rank by rank. Breaking the ring's holds must not stop holding for the rest. */
START_TEST(exchange_in_place_then_pairs_stay_together) {
  int p = 8;
  cdag_graph *g = cdag_test_graph(p);
  for (int r = 0; r < p; r++) {
    CK_OK(cdag_rank_send(g, r, 0, 8, (r + 1) % p, 1, NULL));
    CK_OK(cdag_rank_recv(g, r, 0, 8, (r + p - 1) % p, 1, NULL));
    CK_OK(cdag_rank_copy_local(g, r, 0, 64, 4, NULL));
    for (int k = 1; k < p; k <<= 1) {
      CK_OK(cdag_rank_send(g, r, 64, 4, r ^ k, 2 + k, NULL));
      CK_OK(cdag_rank_recv(g, r, 128, 4, r ^ k, 2 + k, NULL));
      CK_OK(cdag_rank_reduce_local(g, r, 128, 64, 1, CDAG_INT32, CDAG_SUM, NULL));
    }
  }
  match_result m;
  run_ok(g, &m);
  check_order(g, &m);
  check_pairs_adjacent(g, &m, 2);
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

/* Position of op among the ops of its channel of the same kind, in program order. */
static int channel_index(const cdag_graph *g, int32_t op) {
  int src = g->kind[op] == IR_SEND ? g->rank[op] : g->peer[op];
  int dst = g->kind[op] == IR_SEND ? g->peer[op] : g->rank[op], n = 0, r = g->rank[op];
  for (int32_t k = g->rank_start[r]; k < g->rank_start[r + 1] && g->rank_ops[k] != op; k++) {
    int32_t u = g->rank_ops[k];
    int usrc = g->kind[u] == IR_SEND ? g->rank[u] : g->peer[u], udst = g->kind[u] == IR_SEND ? g->peer[u] : g->rank[u];
    n += g->kind[u] == g->kind[op] && usrc == src && udst == dst && g->tag[u] == g->tag[op];
  }
  return n;
}

/* Steps back in the order of more than `far` ops: each is a cache miss on a large graph. */
static int far_steps_back(const match_result *m, int32_t far) {
  int n = 0;
  for (int64_t i = 1; i < m->nops; i++) n += m->order[i] < m->order[i - 1] - far;
  return n;
}

/* A dissemination barrier added rank by rank: the first ranks wait for the last ones in
   every round. Those freed far back wait for a second scan in id order instead of each
   starting a chain of hops back across the graph (one per round and rank). */
START_TEST(barrier_ranks_freed_far_back_run_in_a_second_scan) {
  int p = 256;
  cdag_graph *g = cdag_test_graph(p);
  gen_set all = {0, 1, p};
  gen_bufs b = {0};
  ck_assert_int_eq(gen_barrier_dissemination(g, &all, &b), CDAG_OK);
  match_result m;
  run_ok(g, &m);
  check_order(g, &m);
  ck_assert_int_eq(m.passes, 2);
  ck_assert_int_le(far_steps_back(&m, 64), 1); /* the start of the second scan */
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

/* A chain of empty messages from the last rank down to the first, each rank padded with
   local ops so its neighbours lie far away: every scan frees one rank far back. A second
   scan that runs almost nothing hands the rest to the stack (scans per rank would be
   quadratic). */
START_TEST(chain_freed_backwards_falls_back_to_the_stack) {
  int p = 2000;
  cdag_graph *g = cdag_test_graph(p);
  for (int r = 0; r < p; r++) {
    cdag_op prev = -1, op;
    if (r + 1 < p) ck_assert_int_eq(cdag_rank_recv(g, r, 0, 0, r + 1, 0, &prev), CDAG_OK);
    for (int i = 0; i < 80; i++) {
      int32_t calc;
      CK_HOT(ir_add_calc(g, r, 1, &calc) == CDAG_OK);
      if (prev >= 0) CK_HOT(cdag_depend(g, prev, calc) == CDAG_OK);
      prev = calc;
    }
    if (r > 0) {
      ck_assert_int_eq(cdag_rank_send(g, r, 0, 0, r - 1, 0, &op), CDAG_OK);
      ck_assert_int_eq(cdag_depend(g, prev, op), CDAG_OK);
    }
  }
  match_result m;
  run_ok(g, &m);
  check_order(g, &m);
  ck_assert_int_eq(m.passes, 2);
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(random_graphs) {
  long n = cdag_test_iterations(3000), later = 0;
  for (long i = 0; i < n; i++) {
    cdag_graph *g;
    gen_random_opts o = {.reduce_mode = -1, .rank_by_rank = (int)(i & 1)};
    if (i % 32 == 1) o.nprocs = 12, o.steps = 600; /* ranks far apart: later scans */
    ck_assert_int_eq(gen_random_graph((uint64_t)i + 1, &o, &g), CDAG_OK);
    match_result m;
    run_ok(g, &m);
    check_order(g, &m);
    for (int32_t op = 0; op < (int32_t)g->nops; op++) {
      int32_t q = m.partner[op];
      if (g->kind[op] != IR_SEND && g->kind[op] != IR_RECV) {
        CK_HOT(q == -1);
        continue;
      }
      CK_HOT(m.partner[q] == op);
      CK_HOT(g->kind[q] == (g->kind[op] == IR_SEND ? IR_RECV : IR_SEND));
      CK_HOT(g->peer[q] == g->rank[op]);
      CK_HOT(g->tag[q] == g->tag[op]);
      CK_HOT(channel_index(g, q) == channel_index(g, op)); /* non-overtaking */
    }
    later += m.passes > 1;
    match_free(&m);
    cdag_graph_free(&g);
  }
  if (n >= 64) ck_assert_int_gt(later, 0); /* the later scans were tried */
}
END_TEST

/* Channel keys that do not fit one word (ranks^2 * tags > 2^64) take the two-level map. */
START_TEST(huge_tags_on_many_ranks) {
  int p = 1 << 17;
  cdag_graph *g = cdag_test_graph(p);
  cdag_op s[4], r[4];
  CK_OK(cdag_rank_send(g, 0, 0, 8, p - 1, 0x7fffffff, &s[0]));
  CK_OK(cdag_rank_send(g, 0, 8, 8, p - 1, 0, &s[1]));
  CK_OK(cdag_rank_send(g, 0, 16, 8, p - 1, 0x7fffffff, &s[2]));
  CK_OK(cdag_rank_send(g, p - 1, 0, 8, 0, 0x7ffffffe, &s[3]));
  CK_OK(cdag_rank_recv(g, p - 1, 64, 8, 0, 0, &r[1]));
  CK_OK(cdag_rank_recv(g, p - 1, 72, 8, 0, 0x7fffffff, &r[0]));
  CK_OK(cdag_rank_recv(g, p - 1, 80, 8, 0, 0x7fffffff, &r[2]));
  CK_OK(cdag_rank_recv(g, 0, 64, 8, p - 1, 0x7ffffffe, &r[3]));
  match_result m;
  run_ok(g, &m);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(m.partner[s[i]], r[i]);
  check_order(g, &m);
  match_free(&m);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(unmatched_send) {
  cdag_graph *g = cdag_test_graph(3);
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 0, 0, NULL));
  CK_OK(cdag_rank_send(g, 0, 0, 8, 2, 7, NULL));
  ck_assert_int_eq(run_err(g), CDAG_ERR_UNMATCHED);
  const char *msg = cdag_error_message();
  ck_assert_msg(strstr(msg, "rank 0 op 1") && strstr(msg, "to rank 2 tag 7") && strstr(msg, "no matching receive"),
                "message: %s", msg);
  cdag_graph_free(&g);
}
END_TEST

/* A send nobody receives, and rank 1 receives from rank 0 under another tag: the message
   names that receive as a near miss. */
START_TEST(unmatched_send_names_another_tag) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 3, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 0, 5, NULL));
  ck_assert_int_eq(run_err(g), CDAG_ERR_UNMATCHED);
  const char *msg = cdag_error_message();
  ck_assert_msg(strstr(msg, "rank 0 op 0") && strstr(msg, "near miss: rank 1 op 0") && strstr(msg, "with tag 5"),
                "message: %s", msg);
  cdag_graph_free(&g);
}
END_TEST

/* Two sends of one tag, one receive of the first's size: the second send's message names
   the receive that took the earlier send. */
START_TEST(unmatched_send_names_a_smaller_receive) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 4, NULL));
  CK_OK(cdag_rank_send(g, 0, 0, 16, 1, 4, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 0, 4, NULL));
  ck_assert_int_eq(run_err(g), CDAG_ERR_UNMATCHED);
  const char *msg = cdag_error_message();
  ck_assert_msg(strstr(msg, "rank 0 op 1") && strstr(msg, "near miss: rank 1 op 0") && strstr(msg, "receives 8 bytes"),
                "message: %s", msg);
  cdag_graph_free(&g);
}
END_TEST

/* No near miss: nothing between the two ranks but the lonely send. */
START_TEST(unmatched_send_without_near_miss) {
  cdag_graph *g = cdag_test_graph(3);
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 3, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 2, 5, NULL));
  CK_OK(cdag_rank_send(g, 2, 0, 8, 1, 5, NULL));
  ck_assert_int_eq(run_err(g), CDAG_ERR_UNMATCHED);
  ck_assert_msg(!strstr(cdag_error_message(), "near miss"), "message: %s", cdag_error_message());
  cdag_graph_free(&g);
}
END_TEST

/* A wrong peer: rank 0 sends to 1, which receives from 2 with that tag: the receive is the
   near miss, and the other way round. */
START_TEST(unmatched_names_a_wrong_peer) {
  for (int way = 0; way < 2; way++) {
    cdag_graph *g = cdag_test_graph(3);
    CK_OK(cdag_rank_send(g, way ? 2 : 0, 0, 8, 1, 4, NULL));
    CK_OK(cdag_rank_recv(g, 1, 0, 8, way ? 0 : 2, 4, NULL));
    ck_assert_int_eq(run_err(g), CDAG_ERR_UNMATCHED);
    const char *msg = cdag_error_message();
    ck_assert_msg(strstr(msg, way ? "near miss: rank 2 op 0 (send), a send to rank 1 with this tag"
                                  : "near miss: rank 1 op 0 (recv), a receive from rank 2 with this tag"),
                  "message: %s", msg);
    cdag_graph_free(&g);
  }
}
END_TEST

START_TEST(unmatched_recv) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 0, 3, NULL));
  ck_assert_int_eq(run_err(g), CDAG_ERR_UNMATCHED);
  const char *msg = cdag_error_message();
  ck_assert_msg(strstr(msg, "rank 1 op 0") && strstr(msg, "from rank 0 tag 3") && strstr(msg, "no matching send"),
                "message: %s", msg);
  cdag_graph_free(&g);
}
END_TEST

START_TEST(truncation) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0, 64, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0, 32, 0, 0, NULL));
  ck_assert_int_eq(run_err(g), CDAG_ERR_TRUNCATE);
  const char *msg = cdag_error_message();
  ck_assert_msg(strstr(msg, "rank 1 op 0") && strstr(msg, "32 bytes") && strstr(msg, "rank 0 op 0") &&
                    strstr(msg, "sends 64"),
                "message: %s", msg);
  cdag_graph_free(&g);
}
END_TEST

/* Each rank receives before it sends (the receive buffer feeds the send): deadlock. */
START_TEST(recv_before_send_deadlock) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_recv(g, 0, 0, 8, 1, 0, NULL));
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 0, 8, 0, 0, NULL));
  CK_OK(cdag_rank_send(g, 1, 0, 8, 0, 0, NULL));
  ck_assert_int_eq(run_err(g), CDAG_ERR_CYCLE);
  const char *msg = cdag_error_message();
  ck_assert_msg(strstr(msg, "ops on the cycle: rank 0") && strstr(msg, "rank 1"), "message: %s", msg);
  /* the code's text says "deadlock"; the tool prints it before the message: once is enough */
  char both[1024];
  snprintf(both, sizeof both, "%s: %s", cdag_strerror(CDAG_ERR_CYCLE), msg);
  const char *first = strstr(both, "deadlock");
  ck_assert_msg(first && !strstr(first + 1, "deadlock"), "said twice: %s", both);
  cdag_graph_free(&g);
}
END_TEST

/* Both ranks send, then (explicitly dependent) receive: sends complete on their own (their
   data is taken when they run), so this is no deadlock. */
START_TEST(mirrored_send_then_recv) {
  cdag_graph *g = cdag_test_graph(2);
  cdag_op a, b, c, d;
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 0, &a));
  CK_OK(cdag_rank_recv(g, 0, 64, 8, 1, 1, &b));
  CK_OK(cdag_rank_send(g, 1, 0, 8, 0, 1, &c));
  CK_OK(cdag_rank_recv(g, 1, 64, 8, 0, 0, &d));
  CK_OK(cdag_depend(g, c, d));
  CK_OK(cdag_depend(g, a, b));
  order_ok(g);
}
END_TEST

/* The same exchange with disjoint buffers and no explicit order is fine. */
START_TEST(exchange_without_dependency) {
  cdag_graph *g = cdag_test_graph(2);
  CK_OK(cdag_rank_send(g, 0, 0, 8, 1, 0, NULL));
  CK_OK(cdag_rank_recv(g, 0, 64, 8, 1, 0, NULL));
  CK_OK(cdag_rank_send(g, 1, 0, 8, 0, 0, NULL));
  CK_OK(cdag_rank_recv(g, 1, 64, 8, 0, 0, NULL));
  order_ok(g);
}
END_TEST

START_TEST(send_to_self_depending_on_its_recv) {
  cdag_graph *g = cdag_test_graph(1);
  cdag_op r, s;
  CK_OK(cdag_rank_recv(g, 0, 0, 8, 0, 0, &r));
  CK_OK(cdag_rank_send(g, 0, 0, 8, 0, 0, &s));  /* reads what the receive writes */
  ck_assert_int_eq(run_err(g), CDAG_ERR_CYCLE);
  ck_assert_msg(strstr(cdag_error_message(), "rank 0 op 0 (recv) matches rank 0 op 1 (send)"), "message: %s",
                cdag_error_message());
  cdag_graph_free(&g);
}
END_TEST

START_TEST(long_cycle_is_named) {
  int p = 10;
  cdag_graph *g = cdag_test_graph(p);
  for (int r = 0; r < p; r++) {  /* a ring where everybody receives first */
    CK_OK(cdag_rank_recv(g, r, 0, 8, (r + p - 1) % p, 0, NULL));
    CK_OK(cdag_rank_send(g, r, 0, 8, (r + 1) % p, 0, NULL));
  }
  ck_assert_int_eq(run_err(g), CDAG_ERR_CYCLE);
  ck_assert_ptr_nonnull(strstr(cdag_error_message(), "ops on the cycle"));
  cdag_graph_free(&g);
}
END_TEST

START_TEST(not_finalized) {
  cdag_graph *g = cdag_test_graph(2);
  match_result m;
  ck_assert_int_eq(match_run(g, &m), CDAG_ERR_STATE);
  ck_assert_int_eq(match_run(NULL, &m), CDAG_ERR_ARG);
  cdag_graph_free(&g);
}
END_TEST

/* The rule itself (match_pair_ends, which the recorder's merger shares): ends given out of
   order are sorted by channel and program position; the k-th send meets the k-th receive;
   ends beyond the shorter side are reported alone, sends and receives alike. */
typedef struct { int32_t got[16][2]; int n; } pairs_seen;
static int seen(void *ctx, int32_t s, int32_t r) {
  pairs_seen *p = ctx;
  p->got[p->n][0] = s;
  p->got[p->n++][1] = r;
  return p->n == 99;   /* never: every end is visited */
}

START_TEST(shared_pairing_rule) {
  enum { RECV = 1u << 31 };
  /* channel (src 1, tag 0): sends at positions 5, 2; receives at 9, 4, 7.
     channel (src 2, tag 3): one send, no receive. */
  match_end e[] = {{1, 0, 5, 10}, {1, 0, RECV | 9, 20}, {2, 3, 1, 30}, {1, 0, 2, 11}, {1, 0, RECV | 4, 21},
                   {1, 0, RECV | 7, 22}};
  match_end tmp[6];
  int64_t at[7];
  match_sort_ends(e, 6, tmp, at);
  pairs_seen p = {.n = 0};
  ck_assert_int_eq(match_pair_ends(e, 6, seen, &p), 0);
  ck_assert_int_eq(p.n, 4);
  ck_assert(p.got[0][0] == 11 && p.got[0][1] == 21);   /* position 2 meets position 4 */
  ck_assert(p.got[1][0] == 10 && p.got[1][1] == 22);
  ck_assert(p.got[2][0] == -1 && p.got[2][1] == 20);   /* the third receive: alone */
  ck_assert(p.got[3][0] == 30 && p.got[3][1] == -1);   /* the other channel's send: alone */
}
END_TEST

Suite *cdag_match_suite(void) {
  Suite *s = suite_create("match");
  TCase *t = tcase_create("pairs");
  tcase_add_test(t, non_overtaking);
  tcase_add_test(t, shared_pairing_rule);
  tcase_add_test(t, tags_are_channels);
  tcase_add_test(t, send_to_self_and_larger_recv);
  tcase_add_test(t, binomial_tree_order);
  tcase_add_test(t, exchange_without_dependency);
  tcase_add_test(t, tree_added_backwards);
  tcase_add_test(t, rank_by_rank_allreduce_keeps_pairs_together);
  tcase_add_test(t, hold_that_never_ends_is_released);
  tcase_add_test(t, send_to_self_in_place_is_not_held);
  tcase_add_test(t, exchange_in_place_then_pairs_stay_together);
  tcase_add_test(t, barrier_ranks_freed_far_back_run_in_a_second_scan);
  tcase_add_test(t, chain_freed_backwards_falls_back_to_the_stack);
  tcase_add_test(t, random_graphs);
  tcase_add_test(t, huge_tags_on_many_ranks);
  suite_add_tcase(s, t);
  TCase *e = tcase_create("errors");
  tcase_add_test(e, unmatched_send);
  tcase_add_test(e, unmatched_recv);
  tcase_add_test(e, truncation);
  tcase_add_test(e, recv_before_send_deadlock);
  tcase_add_test(e, unmatched_send_names_another_tag);
  tcase_add_test(e, unmatched_send_names_a_smaller_receive);
  tcase_add_test(e, unmatched_send_without_near_miss);
  tcase_add_test(e, unmatched_names_a_wrong_peer);
  tcase_add_test(t, mirrored_send_then_recv);
  tcase_add_test(e, send_to_self_depending_on_its_recv);
  tcase_add_test(e, long_cycle_is_named);
  tcase_add_test(e, not_finalized);
  suite_add_tcase(s, e);
  return s;
}

CDAG_CHECK_MAIN(cdag_match_suite)

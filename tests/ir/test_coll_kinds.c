/* cdag tests — tests/ir/test_coll_kinds.c: the one table of collective kinds (ir/coll_kinds.h).
 *
 * Walks every row and checks that each stage's view of a kind comes back to the same row:
 * name -> kind -> name, the ID column against the name, detect's DET_* against IR_COLL_*,
 * MPI's function name, the slot columns against det_kind_slots / det_slot_pair, the native
 * kinds through ir_add_coll and the text format (and the others refused by both), the report
 * (text and JSON) and the kernel choice by kind, and the token columns (exec, lower) against
 * the value columns they must agree with. A row with a missing or contradictory column
 * fails here; a token without a handler fails to compile here, in schedule.c or lower.c. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "support/graphs.h"
#include "detect/detect.h"
#include "choose/choose.h"
#include "format/format.h"

/* The ID column of every row, as text, by kind. */
#define T_ID_(ID, ...) [IR_COLL_##ID] = #ID,
static const char *const ids[IR_COLL_NKINDS] = {CDAG_COLL_KINDS(T_ID_)};
#undef T_ID_

START_TEST(names_round_trip) {
  for (int k = 0; k < IR_COLL_NKINDS; k++) {
    const ir_coll_info *in = ir_coll_get(k);
    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(in->name);
    ck_assert_str_eq(ir_coll_name(k), in->name);
    ck_assert_int_eq(ir_coll_kind(in->name, strlen(in->name)), k);
    ck_assert_str_eq(det_kind_name((det_kind)k), in->name);
    char up[64] = {0}, mpi[64] = "MPI_";
    for (size_t i = 0; in->name[i] && i < sizeof up - 1; i++) up[i] = (char)toupper((unsigned char)in->name[i]);
    ck_assert_str_eq(up, ids[k]);   /* IR_COLL_ALLGATHERV is "allgatherv" */
    strcat(mpi, in->name);
    mpi[4] = (char)toupper((unsigned char)mpi[4]);
    ck_assert_str_eq(in->mpi, mpi);   /* "MPI_Reduce_scatter_block" */
    for (int j = 0; j < k; j++) ck_assert_str_ne(ir_coll_name(j), in->name);
  }
  ck_assert_ptr_null(ir_coll_get(-1));
  ck_assert_ptr_null(ir_coll_get(IR_COLL_NKINDS));
  ck_assert_ptr_null(ir_coll_name(IR_COLL_NKINDS));
  ck_assert_str_eq(det_kind_name(DET_NKINDS), "unknown");
  ck_assert_int_eq(ir_coll_kind("bcas", 4), -1);
  ck_assert_int_eq(ir_coll_kind("bcastx", 6), -1);
}
END_TEST

/* detect.h's kinds are the table's, number for number. */
#define T_SAME_(ID, ...) ck_assert_int_eq((int)DET_##ID, IR_COLL_##ID);
START_TEST(detect_kinds_are_ir_kinds) {
  CDAG_COLL_KINDS(T_SAME_)
  ck_assert_int_eq((int)DET_NKINDS, IR_COLL_NKINDS);
}
END_TEST
#undef T_SAME_

/* Slot counts follow the columns; every block of a block kind has one way from a send slot
   to a recv slot, and root-only sides carry blocks at the root only. */
START_TEST(slots_follow_columns) {
  enum { N = 5, ROOT = 2 };
  for (int k = 0; k < IR_COLL_NKINDS; k++) {
    const ir_coll_info *in = ir_coll_get(k);
    int32_t ns, nr;
    det_kind_slots((det_kind)k, N, &ns, &nr);
    ck_assert_int_eq(ns, in->send == IR_SLOTS_MEMBER ? N : in->send == IR_SLOTS_ONE ? 1 : 0);
    ck_assert_int_eq(nr, in->recv == IR_SLOTS_MEMBER ? N : in->recv == IR_SLOTS_ONE ? 1 : 0);
    ck_assert_int_eq(in->send == IR_SLOTS_NONE, in->recv == IR_SLOTS_NONE);
    ck_assert_int_eq(in->rooted, in->send_root + in->recv_root);   /* a root sends or receives: one side */
    int used[N][N] = {{0}}, blocks = 0;
    for (int32_t i = 0; i < N; i++)
      for (int32_t j = 0; j < N; j++) {
        int ss, rs;
        det_slot_pair((det_kind)k, i, j, ROOT, &ss, &rs);
        if (ss < 0) {
          ck_assert_int_lt(rs, 0);
          continue;
        }
        ck_assert(!in->reduces && in->send != IR_SLOTS_NONE);
        ck_assert(ss < ns && rs < nr && rs >= 0);
        ck_assert(!in->send_root || i == ROOT);
        ck_assert(!in->recv_root || j == ROOT);
        ck_assert_int_eq(used[j][rs]++, 0);   /* one sender per recv slot */
        blocks++;
      }
    if (!in->reduces && in->send != IR_SLOTS_NONE)
      ck_assert_int_eq(blocks, in->send_root || in->recv_root ? N : N * N);
    else
      ck_assert_int_eq(blocks, 0);
  }
}
END_TEST

/* A native kind is a call of ir_add_coll and a line of the text format, both ways; the
   others are neither. */
START_TEST(native_kinds_load_and_save) {
  enum { P = 3 };
  for (int k = 0; k < IR_COLL_NKINDS; k++) {
    const ir_coll_info *in = ir_coll_get(k);
    cdag_graph *g;
    CK_OK(ir_graph_new(P, -1, &g));
    uint64_t count = in->send == IR_SLOTS_NONE ? 0 : 4;
    int rc = CDAG_OK;
    /* vector kinds: blocks of count (alltoallv, neighbourhood kinds: P blocks sent), back to back */
    uint64_t lists[4 * P], bytes = in->reduces ? 4 * count : count;
    for (int m = 0; m < P; m++)
      lists[m] = lists[2 * P + m] = count, lists[P + m] = lists[3 * P + m] = (uint64_t)m * bytes;
    for (int r = 0; r < P && rc == CDAG_OK; r++)
      rc = ir_add_collv(g, r, k, 0, in->rooted ? 1 : -1, 0x1000, 0x100000, ir_coll_lists(k, 0) == 4 ? P * count : count,
                        CDAG_INT32, CDAG_SUM, in->vector ? lists : NULL, NULL);
    if (!in->native) {
      ck_assert_int_eq(rc, CDAG_ERR_ARG);
      cdag_graph_free(&g);
      char text[128];
      snprintf(text, sizeof text, "num_ranks 1\nrank 0 { %s 4b in 0x10 out 0x20 }\n", in->name);
      ck_assert_int_ne(ir_load_mem(text, strlen(text), "t", NULL, &g), CDAG_OK);
      cdag_graph_free(&g);
      continue;
    }
    CK_OK(rc);
    CK_OK(ir_finalize(g));
    char *text = cdag_test_save_str(g);
    ck_assert_msg(strstr(text, in->name) != NULL, "%s", text);
    cdag_graph *back = NULL;
    ck_assert_msg(ir_load_mem(text, strlen(text), "t", NULL, &back) == CDAG_OK, "%s: %s", text, cdag_error_message());
    ck_assert_int_eq(back->ncalls, P);
    for (int64_t c = 0; c < back->ncalls; c++) ck_assert_int_eq(back->calls[c].kind, k);
    char *again = cdag_test_save_str(back);
    ck_assert_str_eq(again, text);
    free(text);
    free(again);
    cdag_graph_free(&back);
    cdag_graph_free(&g);
  }
}
END_TEST

/* A plan of one collective of kind k over ranks 0..3 (root 1), as the report reads it. */
typedef struct {
  cdag_plan p;
  df_sst sst;
  det_coll c;
  int32_t ranks[4];
} one_coll;

static void one_coll_init(one_coll *o, int k) {
  memset(o, 0, sizeof *o);
  const ir_coll_info *in = ir_coll_get(k);
  for (int i = 0; i < 4; i++) o->ranks[i] = i;
  o->c = (det_coll){.kind = (det_kind)k, .root = in->rooted ? 1 : -1, .nranks = 4, .bytes = 64, .ntransfers = 3,
                    .type = CDAG_INT32, .op = CDAG_SUM};
  o->p.nprocs = 4;
  o->p.ncolls = 1;
  o->p.colls = &o->c;
  o->p.nranks = 4;
  o->p.ranks = o->ranks;
  o->p.sst = &o->sst;
}

static void report(const cdag_plan *p, int json, char *buf, size_t len) {
  memset(buf, 0, len);
  FILE *f = fmemopen(buf, len - 1, "w");
  CK_OK(cdag_plan_report(p, f, json));
  fclose(f);
}

/* The report spells every kind by the table, roots where it has one, type and op where it
   reduces, totals for v-forms. */
START_TEST(report_by_table) {
  char buf[8192], want[160];
  for (int k = 0; k < IR_COLL_NKINDS; k++) {
    const ir_coll_info *in = ir_coll_get(k);
    one_coll o;
    one_coll_init(&o, k);
    report(&o.p, 0, buf, sizeof buf);
    snprintf(want, sizeof want, "%s%s over all 4 ranks", in->name, in->rooted ? " rooted at 1" : "");
    ck_assert_msg(strncmp(buf, want, strlen(want)) == 0, "%s", buf);
    const char *tail = in->send == IR_SLOTS_NONE ? " (replaces zero-byte messages)"
                       : in->reduces             ? ", 64 B of int32 sum (3 reductions)"
                       : in->vector              ? ", 64 B in total (3 transfers)"
                                                 : ", 64 B per block (3 transfers)";
    ck_assert_msg(strncmp(buf + strlen(want), tail, strlen(tail)) == 0, "%s", buf);
    report(&o.p, 1, buf, sizeof buf);
    snprintf(want, sizeof want, "{\"kind\": \"%s\", \"root\": %s,", in->name, in->rooted ? "1" : "null");
    ck_assert_msg(strstr(buf, want) != NULL, "%s", buf);
    ck_assert_int_eq(strstr(buf, "\"type\": \"int32\", \"op\": \"sum\"") != NULL, in->reduces);
  }
}
END_TEST

/* The kernel column is what the choice reads: a kind without a kernel runs as MPI's, a kind
   with one is priced under its own name. */
START_TEST(kernels_by_table) {
  char why[256], want[128];
  kern_model m = kern_model_builtin();
  for (int k = 0; k < IR_COLL_NKINDS; k++) {
    const ir_coll_info *in = ir_coll_get(k);
    one_coll o;
    one_coll_init(&o, k);
    kern_alg alg = kern_choose_coll(&o.p, 0, &m, KERN_POLICY_AUTO, why, sizeof why);
    if (!in->kernel) {
      ck_assert_int_eq(alg, KERN_ALG_MPI);
      snprintf(want, sizeof want, "%s: MPI (no cdag kernel for this kind)", in->name);
      ck_assert_str_eq(why, want);
      continue;
    }
    char name[64];
    snprintf(name, sizeof name, "%s: ", in->name);
    ck_assert_msg(strncmp(why, name, strlen(name)) == 0, "%s", why);
    kern_model_choose(&m, k, 4, 1 << 20, why, sizeof why);
    ck_assert_msg(strncmp(why, name, strlen(name)) == 0, "%s", why);
    ck_assert(kern_model_circulant(&m, k, 4, 1 << 20) > 0 && kern_model_binomial(&m, k, 4, 1 << 20) > 0);
  }
}
END_TEST

/* The token columns agree with the value columns: the MPI call the executor makes, and the
   algorithm lowering expands, must be able to do what the kind's slots say. */
enum { E_BARRIER, E_BCAST, E_REDUCE, E_ALLREDUCE, E_REDSCAT, E_ALLGATHERV, E_ALLTOALLW, E_NONE };
enum { L_BARRIER, L_BCAST, L_REDUCE, L_ALLREDUCE, L_ALLGATHER, L_ROOTED, L_PAIRWISE, L_NONE };
#define T_EXEC_(ID, NAME, MPI, EXEC, ...) [IR_COLL_##ID] = E_##EXEC,
#define T_LOWER_(ID, NAME, MPI, EXEC, LOWER, ...) [IR_COLL_##ID] = L_##LOWER,
static const int exec_of[IR_COLL_NKINDS] = {CDAG_COLL_KINDS(T_EXEC_)};
static const int lower_of[IR_COLL_NKINDS] = {CDAG_COLL_KINDS(T_LOWER_)};
#undef T_EXEC_
#undef T_LOWER_

static int shape(const ir_coll_info *in, int rooted, int reduces, int send, int recv) {
  return in->rooted == rooted && in->reduces == reduces && in->send == send && in->recv == recv;
}

START_TEST(tokens_agree_with_columns) {
  enum { NONE = IR_SLOTS_NONE, ONE = IR_SLOTS_ONE, MEMBER = IR_SLOTS_MEMBER };
  for (int k = 0; k < IR_COLL_NKINDS; k++) {
    const ir_coll_info *in = ir_coll_get(k);
    int e = exec_of[k], l = lower_of[k];
    ck_assert_int_eq(e == E_BARRIER, shape(in, 0, 0, NONE, NONE));
    ck_assert_int_eq(l == L_BARRIER, shape(in, 0, 0, NONE, NONE));
    if (e == E_BCAST || l == L_BCAST) ck_assert(shape(in, 1, 0, ONE, ONE) && in->send_root);
    if (e == E_REDUCE || l == L_REDUCE) ck_assert(shape(in, 1, 1, ONE, ONE) && in->recv_root);
    if (e == E_ALLREDUCE || l == L_ALLREDUCE) ck_assert(shape(in, 0, 1, ONE, ONE));
    if (e == E_REDSCAT) ck_assert(shape(in, 0, 1, MEMBER, ONE));
    if (e == E_ALLGATHERV || l == L_ALLGATHER) ck_assert(shape(in, 0, 0, ONE, MEMBER));
    if (e == E_ALLTOALLW) ck_assert(!in->reduces && in->send != NONE);   /* any block kind fits MPI_Alltoallw */
    if (l == L_ROOTED) ck_assert(in->rooted && !in->reduces && (in->send_root || in->recv_root) && in->send != in->recv);
    if (l == L_PAIRWISE) ck_assert(!in->rooted && in->send == MEMBER);
    ck_assert_int_eq(e == E_NONE, l == L_NONE);   /* native-only: neither runs nor lowers */
    if (e == E_NONE) ck_assert(in->native && !in->kernel);
    if (in->kernel) ck_assert(l == L_BCAST || l == L_REDUCE || l == L_ALLREDUCE || l == L_ALLGATHER);
  }
}
END_TEST

static Suite *cdag_coll_kinds_suite(void) {
  Suite *s = suite_create("coll_kinds");
  TCase *t = tcase_create("table");
  tcase_add_test(t, names_round_trip);
  tcase_add_test(t, detect_kinds_are_ir_kinds);
  tcase_add_test(t, slots_follow_columns);
  tcase_add_test(t, native_kinds_load_and_save);
  tcase_add_test(t, report_by_table);
  tcase_add_test(t, kernels_by_table);
  tcase_add_test(t, tokens_agree_with_columns);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_coll_kinds_suite)

/* cdag tests — tests/record/test_phases.c: where a run repeats (src/record/phases.c).
 *
 * Streams built here as the merger builds them: a ping-pong loop after a first message is
 * cut at every iteration; a send whose wait comes in the next iteration moves the cut after
 * that wait, and a pipeline that always has one in flight is not cut; a unit that repeats three times is no reason to cut; a unit of two alternating
 * iterations is joined into one phase; a loop whose messages shrink every iteration is cut by
 * the symbols without sizes (also after a shorter loop that repeats exactly: the unit that
 * covers more wins), one whose sizes repeat keeps its unit by size. Then random loops of messages (blocking, and
 * nonblocking completed later in the iteration or in the next) between 2 to 5 ranks, with
 * random prologues: every cut must keep each message with its match and each request with
 * its wait and come where a call starts, and a loop with a point where no request is in
 * flight must be found. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

#include "record/record.h"

enum { MAXR = 5, MAXOPS = 4096 };

typedef struct {
  int nprocs;
  rec_pop ops[MAXR][MAXOPS];
  int64_t n[MAXR];
} prog;

static uint64_t sym(int kind, int rel, int tag) { return (uint64_t)kind << 40 | (uint64_t)rel << 20 | (uint64_t)tag; }

static int64_t add(prog *p, int r, uint64_t s) {
  ck_assert_int_lt(p->n[r], MAXOPS);
  p->ops[r][p->n[r]] = (rec_pop){.sym = s, .lsym = s, .waited = -1, .pidx = -1, .prank = -1, .start = 1};
  return p->n[r]++;
}

/* A message from a to b with tag t; with wait_later, the send's wait is left to the caller. */
static int64_t message(prog *p, int a, int b, int t) {
  int64_t s = add(p, a, sym(1, (b - a + p->nprocs) % p->nprocs, t)), r = add(p, b, sym(2, (a - b + p->nprocs) % p->nprocs, t));
  p->ops[a][s].pidx = r, p->ops[a][s].prank = b;
  p->ops[b][r].pidx = s, p->ops[b][r].prank = a;
  return s;
}

/* The same with `size` bytes: part of the symbol, not of the loose one (the merger's). */
static int64_t message_sized(prog *p, int a, int b, int t, int size) {
  int64_t s = message(p, a, b, t), r = p->ops[a][s].pidx;
  p->ops[a][s].sym ^= (uint64_t)size << 44;
  p->ops[b][r].sym ^= (uint64_t)size << 44;
  return s;
}

static void wait_for(prog *p, int r, int64_t op) {
  int64_t w = add(p, r, sym(3, 0, (int)(p->n[r] - op)));
  p->ops[r][op].waited = w;
}

static int64_t cuts_of(prog *p, int64_t **cuts) {
  rec_pop *ops[MAXR];
  for (int r = 0; r < p->nprocs; r++) ops[r] = p->ops[r];
  int64_t n = 0;
  ck_assert_int_eq(rec_find_cuts(p->nprocs, ops, p->n, cuts, &n), CDAG_OK);
  return n;
}

/* The piece of op i of rank r: the cuts at or before it. */
static int64_t piece(const int64_t *cuts, int64_t k, int nprocs, int r, int64_t i) {
  int64_t j = 0;
  while (j < k && cuts[j * nprocs + r] <= i) j++;
  return j;
}

/* Every cut valid: non-decreasing, at a call's start, no message, collective or request
   across it. */
static void check_valid(const prog *p, const int64_t *cuts, int64_t k) {
  for (int64_t j = 0; j < k; j++)
    for (int r = 0; r < p->nprocs; r++) {
      int64_t c = cuts[j * p->nprocs + r];
      CK_HOT(c >= 0 && c <= p->n[r]);
      CK_HOT(j == 0 || c >= cuts[(j - 1) * p->nprocs + r]);
      CK_HOT(c == 0 || c == p->n[r] || p->ops[r][c].start);
    }
  for (int r = 0; r < p->nprocs; r++)
    for (int64_t i = 0; i < p->n[r]; i++) {
      const rec_pop *o = &p->ops[r][i];
      int64_t me = piece(cuts, k, p->nprocs, r, i);
      if (o->pidx >= 0) CK_HOT(piece(cuts, k, p->nprocs, o->prank, o->pidx) == me);
      if (o->waited >= 0) CK_HOT(piece(cuts, k, p->nprocs, r, o->waited) == me);
    }
}

static prog *new_prog(int nprocs) {
  prog *p = calloc(1, sizeof *p);
  ck_assert_ptr_nonnull(p);
  p->nprocs = nprocs;
  return p;
}

START_TEST(a_ping_pong_loop_is_cut_at_each_iteration) {
  prog *p = new_prog(2);
  message(p, 0, 1, 5);
  for (int i = 0; i < 10; i++) {
    message(p, 0, 1, 0);
    message(p, 1, 0, 1);
  }
  int64_t *cuts, k = cuts_of(p, &cuts);
  check_valid(p, cuts, k);
  ck_assert_int_ge(k, 10);   /* the first message apart, then ten iterations */
  ck_assert_int_eq(cuts[0], 1);
  for (int64_t j = 1; j < 10; j++) ck_assert_int_eq(cuts[j * 2] - cuts[(j - 1) * 2], 2);
  free(cuts);
  free(p);
}
END_TEST

START_TEST(a_request_completed_in_the_next_iteration_stays_with_its_wait) {
  prog *p = new_prog(2);
  int64_t pending = -1;
  for (int i = 0; i < 12; i++) {   /* the previous Isend waited for, then the next one */
    if (pending >= 0) wait_for(p, 0, pending);
    pending = message(p, 0, 1, 0);
    message(p, 1, 0, 1);
  }
  wait_for(p, 0, pending);
  int64_t *cuts, k = cuts_of(p, &cuts);
  check_valid(p, cuts, k);
  ck_assert_int_ge(k, 4);
  for (int64_t j = 0; j < k; j++) ck_assert_int_eq(cuts[j * 2] % 3, 0);   /* right after a wait */
  free(cuts);
  free(p);
}
END_TEST

START_TEST(a_pipeline_never_idle_is_not_cut) {
  prog *p = new_prog(2);
  int64_t pending = -1;
  for (int i = 0; i < 12; i++) {   /* each Isend waited for after the next one: always one in flight */
    int64_t s = message(p, 0, 1, 0);
    if (pending >= 0) wait_for(p, 0, pending);
    pending = s;
    message(p, 1, 0, 1);
  }
  wait_for(p, 0, pending);
  int64_t *cuts, k = cuts_of(p, &cuts);
  ck_assert_int_eq(k, 0);
  free(cuts);
  free(p);
}
END_TEST

START_TEST(three_repeats_are_no_reason_to_cut) {
  prog *p = new_prog(2);
  for (int i = 0; i < 3; i++) {
    message(p, 0, 1, 0);
    message(p, 1, 0, 1);
  }
  int64_t *cuts, k = cuts_of(p, &cuts);
  ck_assert_int_eq(k, 0);
  free(cuts);
  free(p);
}
END_TEST

START_TEST(a_loop_whose_messages_shrink_is_cut_at_each_iteration) {
  prog *p = new_prog(2);
  for (int i = 0; i < 12; i++) {   /* an LU's panel loop: every message smaller than the last */
    message_sized(p, 0, 1, 0, 1000 - 8 * i);
    message_sized(p, 1, 0, 1, 996 - 8 * i);
  }
  int64_t *cuts, k = cuts_of(p, &cuts);
  check_valid(p, cuts, k);
  ck_assert_int_ge(k, 10);
  for (int64_t j = 1; j < k; j++) ck_assert_int_eq(cuts[j * 2] - cuts[(j - 1) * 2], 2);
  free(cuts);
  free(p);
}
END_TEST

START_TEST(the_unit_that_covers_more_wins) {
  prog *p = new_prog(2);
  for (int i = 0; i < 5; i++) message(p, 0, 1, 7);   /* a short loop that repeats exactly */
  for (int i = 0; i < 12; i++) {                      /* then a long one whose sizes shrink */
    message_sized(p, 0, 1, 0, 1000 - 8 * i);
    message_sized(p, 1, 0, 1, 996 - 8 * i);
  }
  int64_t *cuts, k = cuts_of(p, &cuts);
  check_valid(p, cuts, k);
  ck_assert_int_ge(k, 10);
  for (int64_t j = 1; j < k; j++)
    if (cuts[(j - 1) * 2] >= 5) ck_assert_int_eq(cuts[j * 2] - cuts[(j - 1) * 2], 2);
  free(cuts);
  free(p);
}
END_TEST

START_TEST(sizes_that_repeat_keep_their_unit) {
  prog *p = new_prog(2);
  for (int i = 0; i < 16; i++) {   /* small and large in turn: a unit of two iterations, by size */
    message_sized(p, 0, 1, 0, i % 2 ? 8 : 1 << 20);
    message(p, 1, 0, 1);
  }
  int64_t *cuts, k = cuts_of(p, &cuts);
  check_valid(p, cuts, k);
  ck_assert_int_ge(k, 6);
  for (int64_t j = 1; j < k; j++) ck_assert_int_eq(cuts[j * 2] - cuts[(j - 1) * 2], 4);
  free(cuts);
  free(p);
}
END_TEST

START_TEST(alternating_iterations_are_joined) {
  prog *p = new_prog(2);
  for (int i = 0; i < 16; i++) {   /* rank 0's iterations look alike, rank 1's alternate */
    message(p, 0, 1, 0);
    add(p, 1, sym(4, 0, i % 2));   /* a local operation of its own */
    message(p, 1, 0, 1);
  }
  int64_t *cuts, k = cuts_of(p, &cuts);
  check_valid(p, cuts, k);
  ck_assert_int_ge(k, 4);
  for (int64_t j = 1; j + 1 < k; j++)   /* whole pairs of iterations: 6 of rank 1's operations */
    ck_assert_int_eq((cuts[j * 2 + 1] - cuts[(j - 1) * 2 + 1]) % 6, 0);
  free(cuts);
  free(p);
}
END_TEST

/* A random loop: a unit of messages between random ranks, some nonblocking with their wait
   later in the unit or in the next, after a random prologue. */
static void random_loop(unsigned seed) {
  srand(seed);
  int P = 2 + rand() % 4, nm = 1 + rand() % 6, iters = 5 + rand() % 20, pro = rand() % 5;
  prog *p = new_prog(P);
  int a[8], b[8], nb[8];
  for (int m = 0; m < nm; m++) a[m] = rand() % P, b[m] = (a[m] + 1 + rand() % (P - 1)) % P, nb[m] = rand() % 3;
  for (int m = 0; m < pro; m++) message(p, rand() % P, (rand() % (P - 1) + 1) % P == 0 ? 1 : 0, 9);
  int64_t late[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  for (int i = 0; i < iters; i++) {
    int64_t now[8];
    for (int m = 0; m < nm; m++) {
      if (nb[m] == 2 && late[m] >= 0) wait_for(p, a[m], late[m]);   /* the previous iteration's */
      now[m] = message(p, a[m], b[m], m);
    }
    for (int m = 0; m < nm; m++) {
      if (nb[m] == 1) wait_for(p, a[m], now[m]);
      late[m] = nb[m] == 2 ? now[m] : -1;
    }
  }
  for (int m = 0; m < nm; m++)
    if (late[m] >= 0) wait_for(p, a[m], late[m]);
  int64_t *cuts, k = cuts_of(p, &cuts);
  check_valid(p, cuts, k);
  int idle = 1;   /* a request waited for in the next iteration may leave no point without one in flight */
  for (int m = 0; m < nm; m++) idle &= nb[m] != 2;
  if (iters >= 8 && idle) ck_assert_msg(k >= 4, "seed %u: a loop of %d iterations not found", seed, iters);
  free(cuts);
  free(p);
}

START_TEST(random_loops_are_cut_validly) {
  int n = (int)cdag_test_iterations(400);
  for (int s = 1; s <= n; s++) random_loop((unsigned)s);
}
END_TEST

Suite *cdag_phases_suite(void) {
  Suite *s = suite_create("record_phases");
  TCase *tc = tcase_create("phases");
  tcase_add_test(tc, a_ping_pong_loop_is_cut_at_each_iteration);
  tcase_add_test(tc, a_request_completed_in_the_next_iteration_stays_with_its_wait);
  tcase_add_test(tc, a_pipeline_never_idle_is_not_cut);
  tcase_add_test(tc, three_repeats_are_no_reason_to_cut);
  tcase_add_test(tc, a_loop_whose_messages_shrink_is_cut_at_each_iteration);
  tcase_add_test(tc, the_unit_that_covers_more_wins);
  tcase_add_test(tc, sizes_that_repeat_keep_their_unit);
  tcase_add_test(tc, alternating_iterations_are_joined);
  tcase_add_test(tc, random_loops_are_cut_validly);
  suite_add_tcase(s, tc);
  return s;
}

CDAG_CHECK_MAIN(cdag_phases_suite)

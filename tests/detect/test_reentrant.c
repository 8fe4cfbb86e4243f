/* cdag tests — tests/detect/test_reentrant.c: analysis keeps all its state per call.
 *
 * Four threads analyse and verify different graphs at once, many times: ring allreduces
 * (detected through the reduction passes, whose work arrays were once at file scope) and
 * random graphs. Every plan must verify and find the same collectives as a lone run. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "detect/detect.h"
#include "support/support.h"

typedef struct {
  int id;
  int failures;
  char why[256];
} job;

/* A hand-written reduce_scatter_block over n ranks, c int32 per block: rank r gets block r
   of everybody's data, received into scratch and summed into its output. */
static int build_reduce_scatter(int n, uint64_t c, cdag_graph **g) {
  const uint64_t data = 0x1000, out = 0x100000, tmp = 0x200000, bl = 4 * c;
  int rc = cdag_graph_create_global(n, g);
  for (int r = 0; r < n && rc == CDAG_OK; r++) {
    rc = cdag_rank_scratch(*g, r, tmp, (uint64_t)n * bl);
    for (int i = 0; i < n && rc == CDAG_OK; i++)
      if (i != r) rc = cdag_rank_send(*g, r, data + (uint64_t)i * bl, bl, i, 0, NULL);
    if (rc == CDAG_OK) rc = cdag_rank_copy_local(*g, r, data + (uint64_t)r * bl, out, bl, NULL);
    for (int i = 0; i < n && rc == CDAG_OK; i++) {
      if (i == r) continue;
      rc = cdag_rank_recv(*g, r, tmp + (uint64_t)i * bl, bl, i, 0, NULL);
      if (rc == CDAG_OK) rc = cdag_rank_reduce_local(*g, r, tmp + (uint64_t)i * bl, out, c, CDAG_INT32, CDAG_SUM, NULL);
    }
  }
  return rc;
}

/* One graph of thread t, round r: a reduce_scatter, a ring allreduce or a random graph. */
static int build(int t, int r, cdag_graph **g) {
  if (r % 3 == 1) {
    gen_random_opts o = {.nprocs = 3 + t, .reduce_mode = 1};
    return gen_random_graph((uint64_t)(t * 1000 + r), &o, g);
  }
  if (r % 3 == 2) return build_reduce_scatter(24 + 4 * t, 8, g);
  int n = 4 + t, rc = cdag_graph_create_global(n, g);
  gen_set s = {0, 1, n};
  gen_bufs b = {0x1000, 0x100000, 0x200000, 0};
  return rc ? rc : gen_allreduce_ring(*g, &s, 16, &b);
}

/* The kinds a plan found, as a bit set. */
static unsigned kinds_of(const cdag_plan *p) {
  unsigned k = 0;
  for (int64_t c = 0; c < p->ncolls; c++) k |= 1u << p->colls[c].kind;
  return k;
}

static int analyse_once(int t, int r, unsigned *kinds, char *why, size_t len) {
  cdag_graph *g = NULL;
  cdag_plan *p = NULL;
  int rc = build(t, r, &g);
  if (rc == CDAG_OK) rc = cdag_analyze(g, NULL, &p);
  if (rc == CDAG_OK) rc = cdag_plan_verify(g, p);
  if (rc == CDAG_OK) *kinds = kinds_of(p);
  else snprintf(why, len, "thread %d round %d: %s", t, r, cdag_error_message());
  cdag_plan_free(&p);
  cdag_graph_free(&g);
  return rc;
}

enum { ROUNDS = 60 };   /* at CDAG_TEST_SCALE 1; scaled, at least 8 */
static unsigned expected[4][ROUNDS];
static int rounds = ROUNDS;

static void *worker(void *arg) {
  job *j = arg;
  for (int r = 0; r < rounds; r++) {
    unsigned k = 0;
    if (analyse_once(j->id, r, &k, j->why, sizeof j->why)) j->failures++;
    else if (k != expected[j->id][r]) {
      j->failures++;
      snprintf(j->why, sizeof j->why, "thread %d round %d: kinds 0x%x, alone 0x%x", j->id, r, k, expected[j->id][r]);
    }
  }
  return NULL;
}

START_TEST(four_threads_analyse_at_once) {
  char why[256] = "";
  rounds = (int)cdag_test_iterations(ROUNDS);
  if (rounds < 8) rounds = 8;
  for (int t = 0; t < 4; t++)
    for (int r = 0; r < rounds; r++)
      ck_assert_msg(analyse_once(t, r, &expected[t][r], why, sizeof why) == CDAG_OK, "%s", why);
  ck_assert_msg(expected[0][0] & (1u << DET_ALLREDUCE | 1u << DET_REDUCE_SCATTER_BLOCK),
                "the ring allreduce is no longer detected (kinds 0x%x)", expected[0][0]);
  ck_assert_msg(expected[0][2] & 1u << DET_REDUCE_SCATTER_BLOCK, "the reduce_scatter is not detected (kinds 0x%x)",
                expected[0][2]);
  pthread_t th[4];
  job jobs[4];
  for (int t = 0; t < 4; t++) {
    jobs[t] = (job){.id = t};
    ck_assert_int_eq(pthread_create(&th[t], NULL, worker, &jobs[t]), 0);
  }
  for (int t = 0; t < 4; t++) ck_assert_int_eq(pthread_join(th[t], NULL), 0);
  for (int t = 0; t < 4; t++) ck_assert_msg(jobs[t].failures == 0, "%s", jobs[t].why);
}
END_TEST

Suite *cdag_reentrant_suite(void) {
  Suite *s = suite_create("reentrant");
  TCase *t = tcase_create("threads");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, four_threads_analyse_at_once);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_reentrant_suite)

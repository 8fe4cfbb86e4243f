/* cdag tests — tests/detect/test_merge_shapes.c: collectives of one shape merge only into a
 * plan that can run.
 *
 * Two allgathers of different block sizes over the same ranks have one shape and merge into
 * one allgather (its blocks are the sum of both). When one of them also moves a member's own
 * block (a self copy the SST found, here through a message forwarded back to its origin)
 * and the other does not, the merged own slot holds less than the merged send slot: a plan
 * the simulator and the runtime refuse (issue #35). The hand-written graph is that case; the
 * randomized test builds 3-rank graphs of two allgathers reading one buffer with different
 * block sizes plus broadcasts reading or writing inside their buffers, and every graph that
 * analyses must verify. */
#include "check_main.h"
#include "detect/detect.h"

static void send_recv(cdag_graph *g, int a, uint64_t x, uint64_t len, int b, uint64_t y, int tag) {
  CK_OK(cdag_rank_send(g, a, x, len, b, tag, NULL));
  CK_OK(cdag_rank_recv(g, b, y, len, a, tag, NULL));
}

/* Every rank sends [0x100, +len) to every other, received at out + len * source. */
static void allgather(cdag_graph *g, int p, uint64_t x, uint64_t len, uint64_t out, int tag) {
  for (int a = 0; a < p; a++)
    for (int b = 0; b < p; b++)
      if (a != b) send_recv(g, a, x, len, b, out + len * (uint64_t)a, tag);
}

START_TEST(allgathers_of_two_sizes_and_an_own_block) {
  cdag_graph *g;
  CK_OK(cdag_graph_create_global(3, &g));
  allgather(g, 3, 0x100, 8, 0x200, 0);
  allgather(g, 3, 0x100, 16, 0x300, 1);
  /* rank 2 broadcasts rank 0's 8-byte block and 4 more bytes: to rank 0 that is its own
     block back (a self copy of the allgather's size) */
  send_recv(g, 2, 0x200, 12, 0, 0x400, 2);
  send_recv(g, 2, 0x200, 12, 1, 0x400, 2);
  cdag_plan *p = cdag_test_analyse(g, NULL); /* analyses and verifies */
  for (int64_t c = 0; c < p->ncolls; c++)
    if (p->colls[c].kind == DET_ALLGATHER) ck_assert_uint_ne(p->colls[c].bytes, 0);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

static uint64_t rnd(uint64_t *s, uint64_t n) {
  *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
  return *s % n;
}

typedef struct { int a, b, tag; uint64_t x, y, len; } msg;

/* An address inside one of the buffers the allgathers read or write, or elsewhere. */
static uint64_t somewhere(uint64_t *s) {
  static const uint64_t bases[] = {0x100, 0x200, 0x300, 0x400};
  return bases[rnd(s, 4)] + rnd(s, 40);
}

/* Two allgathers (8 and 16 B, the second's source maybe shifted inside the first's, its
   output maybe right after the first's) and one or two broadcasts anywhere, in random order. */
static int random_graph(uint64_t seed, cdag_graph **out) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 99, len[2] = {8, 16}, x[2] = {0x100, 0x100}, y[2] = {0x200, 0x300};
  msg m[32];
  int n = 0;
  if (rnd(&s, 2)) x[1] += rnd(&s, 16);
  if (rnd(&s, 2)) y[1] = 0x200 + 24;
  for (int k = 0; k < 2; k++)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        if (a != b) m[n++] = (msg){a, b, (int)rnd(&s, 2), x[k], y[k] + len[k] * (uint64_t)a, len[k]};
  for (int t = 1 + (int)rnd(&s, 2); t > 0; t--) {
    int root = (int)rnd(&s, 3);
    uint64_t l = 1 + rnd(&s, 16), bx = somewhere(&s), by = somewhere(&s);
    for (int b = 0; b < 3; b++)
      if (b != root) m[n++] = (msg){root, b, (int)rnd(&s, 2), bx, by, l};
  }
  if (rnd(&s, 2))
    for (int k = n - 1; k > 0; k--) {
      int j = (int)rnd(&s, (uint64_t)k + 1);
      msg t = m[k];
      m[k] = m[j];
      m[j] = t;
    }
  int rc = cdag_graph_create_global(3, out);
  for (int k = 0; k < n && rc == CDAG_OK; k++) {
    rc = cdag_rank_send(*out, m[k].a, m[k].x, m[k].len, m[k].b, m[k].tag, NULL);
    if (rc == CDAG_OK) rc = cdag_rank_recv(*out, m[k].b, m[k].y, m[k].len, m[k].a, m[k].tag, NULL);
  }
  return rc;
}

/* Whatever analyses must verify (a graph that deadlocks or races is the graph's fault). */
START_TEST(random_merges_verify) {
  long n = cdag_test_iterations(1600), analysed = 0;
  for (long i = 0; i < n; i++) {
    cdag_graph *g = NULL;
    ck_assert_int_eq(random_graph((uint64_t)i, &g), CDAG_OK);
    cdag_plan *p = NULL;
    if (cdag_analyze(g, NULL, &p) == CDAG_OK) {
      analysed++;
      int rc = cdag_plan_verify(g, p);
      ck_assert_msg(rc == CDAG_OK, "seed %ld: verify: %s", i, cdag_error_message());
    }
    cdag_plan_free(&p);
    cdag_graph_free(&g);
  }
  ck_assert_int_gt(analysed, n / 2);
}
END_TEST

Suite *cdag_merge_shapes_suite(void) {
  Suite *s = suite_create("merge_shapes");
  TCase *t = tcase_create("merge");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, allgathers_of_two_sizes_and_an_own_block);
  tcase_add_test(t, random_merges_verify);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_merge_shapes_suite)

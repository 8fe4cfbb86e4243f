/* cdag tests — tests/detect/test_detect_redistribution.c: a redistribution is one alltoallv.
 *
 * Under the default options (density 1), M:N block-cyclic redistributions written by
 * cdag_rank_redistribute are one alltoallv over the ranks that move data, their own pieces
 * included, nothing residual, and the plan verifies; neighbour exchanges (2-D halos, a
 * ring, a pipeline) stay point-to-point. Then random layouts against an oracle of the
 * rule's group tests (docs/semantics.md), computed from the SST of the graph as written: a
 * redistribution reads every byte once, from one array to another, so those decide. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "support/graphs.h"
#include "detect/detect.h"
#include "support/support.h"

static const gen_bufs B = {.data = 0x10000, .out = 0x20000, .scratch = 0x40000, .tag = 0};

static int ranks_of(const cdag_layout *a, const cdag_layout *b) {
  int p = a->first + a->pr * a->pc, q = b->first + b->pr * b->pc;
  return p > q ? p : q;
}

/* Every rank's part of moving an 8-byte-element matrix from layout a (at 0) to b (at 2^40). */
static cdag_graph *redistribution(const cdag_layout *a, const cdag_layout *b) {
  cdag_graph *g;
  int p = ranks_of(a, b);
  ck_assert_int_eq(cdag_graph_create_global(p, &g), CDAG_OK);
  for (int r = 0; r < p; r++) CK_OK(cdag_rank_redistribute(g, r, a, 0, b, (uint64_t)1 << 40, 8));
  return g;
}

static char *report(const cdag_plan *p) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_int_eq(cdag_plan_report(p, f, 0), CDAG_OK);
  fclose(f);
  return buf;
}

/* One collective of kind k over nranks ranks (from rank first), every transfer in it; an
   alltoallv says in the report that it is a redistribution. */
static void expect_one(const cdag_layout *a, const cdag_layout *b, det_kind k, int nranks, int first) {
  cdag_graph *g = redistribution(a, b);
  cdag_plan *p = cdag_test_analyse(g, NULL);
  char *text = report(p);
  ck_assert_msg(p->ncolls == 1 && p->colls[0].kind == k, "%s", text);
  ck_assert_int_eq(p->colls[0].nranks, nranks);
  ck_assert_int_eq(p->ranks[p->colls[0].ranks_first], first);
  ck_assert_int_eq(p->nxfers + p->nreds, 0);
  ck_assert_int_eq(p->colls[0].rd_pairs > 0, k == DET_ALLTOALLV);
  ck_assert_int_eq(strstr(text, "\n  redistribution: ") != NULL, k == DET_ALLTOALLV);
  free(text);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}

static void expect_one_alltoallv(const cdag_layout *a, const cdag_layout *b, int nranks, int first) {
  expect_one(a, b, DET_ALLTOALLV, nranks, first);
}

START_TEST(layouts_are_one_alltoallv) {
  /* 32 x 32, 8 x 8 blocks on 2 x 2 to 4 x 4 on 1 x 4: 6 of 12 pairs, 32 pieces kept */
  expect_one_alltoallv(&(cdag_layout){32, 32, 8, 8, 2, 2, 0, 0}, &(cdag_layout){32, 32, 4, 4, 1, 4, 0, 0}, 4, 0);
  /* 2 x 2 from rank 0 to 3 x 1 from rank 2: overlapping in ranks 2 and 3, 5 ranks */
  expect_one_alltoallv(&(cdag_layout){32, 32, 4, 4, 2, 2, 0, 0}, &(cdag_layout){32, 32, 8, 2, 3, 1, 2, 0}, 5, 0);
  /* disjoint groups, 4 to 8 ranks: 8 of 132 pairs */
  expect_one_alltoallv(&(cdag_layout){64, 64, 8, 8, 2, 2, 0, 0}, &(cdag_layout){64, 64, 8, 8, 4, 2, 4, 0}, 12, 0);
  /* 1 x 2 to 2 x 4 from rank 2: two components, each one sender (rank 0 feeds the even
     destination columns, rank 1 the odd ones): together one exchange */
  expect_one_alltoallv(&(cdag_layout){64, 64, 8, 8, 1, 2, 0, 0}, &(cdag_layout){64, 64, 8, 8, 2, 4, 2, 0}, 10, 0);
  /* complete, with layers of equal pieces an alltoall takes, and pieces left over: the
     alltoall folds into the alltoallv (one collective, not an alltoall beside it) */
  expect_one_alltoallv(&(cdag_layout){64, 64, 16, 16, 2, 2, 0, 0}, &(cdag_layout){64, 64, 25, 25, 1, 4, 0, 0}, 4, 0);
  /* complete in equal pieces only: the alltoall covers all of it and stays one */
  expect_one(&(cdag_layout){48, 48, 8, 8, 2, 3, 0, 0}, &(cdag_layout){48, 48, 8, 8, 3, 2, 0, 0}, DET_ALLTOALL, 6, 0);
  /* padded local arrays (lld above the local rows) at the source */
  expect_one_alltoallv(&(cdag_layout){40, 24, 5, 3, 2, 2, 0, 30}, &(cdag_layout){40, 24, 4, 4, 1, 3, 1, 0}, 4, 0);
}
END_TEST

/* The same with the JSON report and a density below the pattern's: still one alltoallv. */
START_TEST(report_and_density) {
  cdag_graph *g = redistribution(&(cdag_layout){32, 32, 8, 8, 2, 2, 0, 0}, &(cdag_layout){32, 32, 4, 4, 1, 4, 0, 0});
  cdag_options o;
  cdag_options_init(&o);
  o.density = 0.5;
  cdag_plan *p = cdag_test_analyse(g, &o);
  ck_assert_int_eq(p->ncolls, 1);
  ck_assert_int_eq(p->colls[0].ntransfers, 128);   /* 96 pieces between ranks, 32 kept */
  ck_assert_int_eq(p->nxfers, 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_int_eq(cdag_plan_report(p, f, 1), CDAG_OK);
  fclose(f);
  ck_assert_msg(strstr(buf, "\"redistribution\": {\"pairs\": 6, \"pieces\": 96}"), "%s", buf);
  free(buf);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}
END_TEST

/* Nothing found, every transfer residual; with why, a note that says why (the density note
   names the test failed when the pattern covers half its pairs or more). */
static void expect_residual(cdag_graph *g, int64_t transfers, const char *why) {
  cdag_plan *p = cdag_test_analyse(g, NULL);
  if (p->ncolls) cdag_plan_report(p, stderr, 0);
  ck_assert_int_eq(p->ncolls, 0);
  ck_assert_int_eq(p->nxfers, transfers);
  int said = !why;
  for (int64_t i = 0; !said && i < p->nnotes; i++) said = strstr(p->notes[i], why) != NULL;
  ck_assert_msg(said, "no note says '%s'", why);
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}

static void message(cdag_graph *g, int src, uint64_t sa, int dst, uint64_t da, uint64_t len, int tag) {
  CK_OK(cdag_rank_send(g, src, sa, len, dst, tag, NULL));
  CK_OK(cdag_rank_recv(g, dst, da, len, src, tag, NULL));
}

/* A 5-point halo on a periodic rows x cols torus, in place: each rank's (n + 2)^2 array of
   doubles (column-major, ghost cells around) sends its first and last interior rows
   (strided: a piece per element) and columns to its neighbours, whose ghost rows and
   columns receive them. The ghosts lie inside the array read; with corners, the corner
   cells go out twice too (in a row and in a column); without, the rows leave them out. */
static cdag_graph *halo_in_place(int rows, int cols, int n, int corners) {
  cdag_graph *g = cdag_test_graph(rows * cols);
  uint64_t ld = (uint64_t)n + 2;
#define AT(i, j) (B.data + 8 * ((uint64_t)(j) * ld + (uint64_t)(i)))
  for (int r = 0; r < rows * cols; r++) {
    int i = r / cols, j = r % cols;
    int north = ((i + rows - 1) % rows) * cols + j, south = ((i + 1) % rows) * cols + j;
    int west = i * cols + (j + cols - 1) % cols, east = i * cols + (j + 1) % cols;
    for (int k = corners ? 1 : 2; k <= (corners ? n : n - 1); k++) {   /* rows, element by element */
      message(g, r, AT(1, k), north, AT(n + 1, k), 8, 0);
      message(g, r, AT(n, k), south, AT(0, k), 8, 1);
    }
    message(g, r, AT(1, 1), west, AT(1, n + 1), 8 * (uint64_t)n, 2);   /* columns, contiguous */
    message(g, r, AT(1, n), east, AT(1, 0), 8 * (uint64_t)n, 3);
  }
#undef AT
  return g;
}

/* Ranks 0..p-1 in a chain (ring: p-1 to 0 too), each sending k chunks of 64 B of its own
   array to the next, which stores them in reverse order in another: k pieces per pair,
   each byte once, one array to another. */
static cdag_graph *chain(int p, int k, int ring) {
  cdag_graph *g = cdag_test_graph(p);
  for (int r = 0; r + 1 < p + ring; r++)
    for (int c = 0; c < k; c++)
      message(g, r, B.data + 64 * (uint64_t)c, (r + 1) % p, B.out + 64 * (uint64_t)(k - 1 - c), 64, c);
  return g;
}

START_TEST(neighbour_exchanges_stay) {
  gen_bufs b = B;
  cdag_graph *g = cdag_test_graph(9);   /* 3 x 3 torus, contiguous edges: 36 of 72 pairs, as dense as the 32 x 32 case */
  CK_OK(gen_halo2d(g, 3, 3, 64, &b));
  expect_residual(g, 36, "not a redistribution: fewer pieces beyond one per pair than the group has pairs");
  g = cdag_test_graph(16);
  CK_OK(gen_halo2d(g, 4, 4, 64, &b));
  expect_residual(g, 64, NULL);
  /* in place, 3 x 3: 90 pieces beyond one per pair, enough; the rank tests say no */
  expect_residual(halo_in_place(3, 3, 6, 1), 9 * (2 * 6 + 2), "not a redistribution: a rank sends some bytes twice");
  expect_residual(halo_in_place(3, 3, 6, 0), 9 * (2 * 4 + 2), "not a redistribution: a rank writes inside the range it reads");
  expect_residual(halo_in_place(4, 4, 6, 1), 16 * (2 * 6 + 2), NULL);
  g = cdag_test_graph(8);
  CK_OK(gen_halo1d(g, &(gen_set){0, 1, 8}, 64, &b));
  expect_residual(g, 14, NULL);
  expect_residual(chain(8, 1, 1), 8, NULL);        /* ring of contiguous blocks */
  expect_residual(chain(8, 4, 0), 7 * 4, NULL);    /* pipeline: 21 pieces beyond one per pair, not 56 */
  expect_residual(chain(16, 4, 1), 16 * 4, NULL);  /* ring of 16 with 4 pieces per pair: 48, not 240 */
}
END_TEST

/* ---- random layouts against the rule's group tests ---- */

static uint64_t rnd(uint64_t *s, uint64_t n) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (*s >> 17) % n;
}

static void random_layout(uint64_t *s, int64_t m, int64_t n, cdag_layout *l) {
  *l = (cdag_layout){m, n, 1 + (int64_t)rnd(s, rnd(s, 4) ? 8 : 40), 1 + (int64_t)rnd(s, rnd(s, 4) ? 8 : 40),
                     1 + (int)rnd(s, 3), 1 + (int)rnd(s, 3), (int)rnd(s, 4), 0};
  if (rnd(s, 4) == 0) l->lld = m + 1 + (int64_t)rnd(s, 3);   /* padded: above any local rows */
}

/* The SST's pairs between ranks, their pieces, and the ranks that send, receive, or either. */
typedef struct {
  int64_t pairs, pieces;
  int senders, receivers, members;
} shape;

static shape shape_of(cdag_graph *g) {
  cdag_options o;
  cdag_options_init(&o);
  o.detect = 0;   /* every SST transfer residual, one message per pair */
  cdag_plan *p = NULL;
  CK_OK(cdag_analyze(g, &o, &p));
  shape s = {0};
  uint8_t *role = calloc((size_t)p->nprocs, 1);
  for (int64_t k = 0; k < p->nmsgs; k++) {
    const det_msg *m = &p->msgs[k];
    if (m->src == m->dst || !m->bytes) continue;
    s.pairs++;
    s.pieces += m->n;
    role[m->src] |= 1, role[m->dst] |= 2;
  }
  for (int r = 0; r < p->nprocs; r++) s.senders += role[r] & 1, s.receivers += role[r] >> 1, s.members += role[r] > 0;
  free(role);
  cdag_plan_free(&p);
  return s;
}

static int is_member(const cdag_plan *p, const det_coll *c, int32_t r) {
  for (int32_t i = 0; i < c->nranks; i++)
    if (p->ranks[c->ranks_first + i] == r) return 1;
  return 0;
}

static void random_case(uint64_t *s, int64_t *taken) {
  cdag_layout a, b;
  int64_t m = 1 + (int64_t)rnd(s, 48), n = 1 + (int64_t)rnd(s, 48);
  random_layout(s, m, n, &a);
  random_layout(s, m, n, &b);
  cdag_graph *g = redistribution(&a, &b);
  shape sh = shape_of(g);
  int whole = sh.members == ranks_of(&a, &b);
  int expected = sh.senders >= 2 && sh.receivers >= 2 && sh.members >= (whole ? 3 : 4) &&
                 sh.pieces - sh.pairs >= (int64_t)sh.members * (sh.members - 1);
  cdag_plan *p = cdag_test_analyse(g, NULL);
  int rd = 0;
  for (int64_t i = 0; i < p->ncolls; i++) rd |= p->colls[i].rd_pairs > 0;
  if (rd != expected) cdag_plan_report(p, stderr, 0);
  /* taken: one alltoallv over the shape's ranks naming the redistribution, or, when all of
     it is complete in equal pieces, the one alltoall that covers it (semantics.md) */
  const det_coll *c = p->ncolls ? p->colls : NULL;
  int one = p->ncolls == 1 && c->nranks == sh.members && (c->kind == DET_ALLTOALLV || c->kind == DET_ALLTOALL);
  ck_assert_msg(expected ? one && (rd || c->kind == DET_ALLTOALL) : !rd,
                "%lldx%lld %lldx%lld@%dx%d+%d lld %lld -> %lldx%lld@%dx%d+%d lld %lld: %s", (long long)m, (long long)n,
                (long long)a.mb, (long long)a.nb, a.pr, a.pc, a.first, (long long)a.lld, (long long)b.mb,
                (long long)b.nb, b.pr, b.pc, b.first, (long long)b.lld, expected ? "not one collective" : "taken");
  if (expected && rd) {
    ck_assert_int_eq(c->rd_pairs, sh.pairs);
    ck_assert_int_eq(c->rd_pieces, sh.pieces);
  }
  for (int64_t i = 0; expected && i < p->nxfers; i++)   /* left: the copies of ranks that move nothing */
    ck_assert(p->xfers[i].src == p->xfers[i].dst && !is_member(p, c, p->xfers[i].src));
  *taken += expected;
  cdag_plan_free(&p);
  cdag_graph_free(&g);
}

START_TEST(random_layouts) {
  uint64_t s = 22;
  int64_t taken = 0;
  long n = cdag_test_iterations(300);
  for (long i = 0; i < n; i++) random_case(&s, &taken);
  ck_assert_int_gt(taken, n / 5);   /* the generator keeps both outcomes common */
}
END_TEST

Suite *cdag_detect_redistribution_suite(void) {
  Suite *s = suite_create("detect_redistribution");
  TCase *t = tcase_create("rule");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, layouts_are_one_alltoallv);
  tcase_add_test(t, report_and_density);
  tcase_add_test(t, neighbour_exchanges_stay);
  tcase_add_test(t, random_layouts);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_detect_redistribution_suite)

/* cdag tests — the M:N block-cyclic redistribution builder (src/workload/redistribute.c) against a
 * brute-force oracle written apart from it: every element's owner and local offset in both
 * layouts, computed element by element from the definition (block (I, J) on grid process
 * (I mod PR, J mod PC), local arrays column-major). On random small layouts, every element
 * of every source array is sent (or copied) exactly once, to the rank and offset the oracle
 * gives; every element of every destination array is written exactly once, padding never;
 * each receiver lists a pair's runs as its sender does. Then the API's error cases. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "workload/redistribute.h"

static uint64_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 17;
}

/* ---- the oracle: per element, from the definition ---- */

typedef struct {
  int rank;        /* owner */
  int64_t li, lj;  /* local row and column */
} owner;

static owner owner_of(const cdag_layout *l, int64_t i, int64_t j) {
  int64_t bi = i / l->mb, bj = j / l->nb;
  int pi = (int)(bi % l->pr), pj = (int)(bj % l->pc);
  owner o = {l->first + pi * l->pc + pj, 0, 0};
  for (int64_t k = 0; k < i; k++) o.li += (k / l->mb) % l->pr == pi;   /* rows before i on this grid row */
  for (int64_t k = 0; k < j; k++) o.lj += (k / l->nb) % l->pc == pj;
  return o;
}

/* Local rows of the grid row that rank r is on (counted element by element). */
static int64_t local_rows(const cdag_layout *l, int r) {
  int pi = (r - l->first) / l->pc;
  int64_t n = 0;
  for (int64_t k = 0; k < l->m; k++) n += (k / l->mb) % l->pr == pi;
  return n;
}

static int64_t local_cols(const cdag_layout *l, int r) {
  int pj = (r - l->first) % l->pc;
  int64_t n = 0;
  for (int64_t k = 0; k < l->n; k++) n += (k / l->nb) % l->pc == pj;
  return n;
}

static int in_grid(const cdag_layout *l, int r) { return r >= l->first && r < l->first + l->pr * l->pc; }

/* Element index (in elements) of (li, lj) in r's local array. */
static int64_t elem_at(const cdag_layout *l, int r, int64_t li, int64_t lj) {
  return lj * (l->lld ? l->lld : local_rows(l, r)) + li;
}

/* Slots of r's local array (elements, padding included). */
static int64_t array_elems(const cdag_layout *l, int r) {
  if (!in_grid(l, r)) return 0;
  int64_t c = local_cols(l, r);
  return c ? (c - 1) * (l->lld ? l->lld : local_rows(l, r)) + local_rows(l, r) : 0;
}

static void random_layout(uint64_t *s, int64_t m, int64_t n, cdag_layout *l) {
  l->m = m;
  l->n = n;
  l->mb = 1 + (int64_t)(rnd(s) % (rnd(s) % 4 ? 7 : 50));   /* now and then a block larger than the matrix */
  l->nb = 1 + (int64_t)(rnd(s) % (rnd(s) % 4 ? 7 : 50));
  l->pr = 1 + (int)(rnd(s) % 4);
  l->pc = 1 + (int)(rnd(s) % 4);
  l->first = (int)(rnd(s) % 4);
  l->lld = 0;
  if (rnd(s) % 3 == 0) { /* padded local arrays: lld above every process's rows */
    int64_t most = 0;
    for (int r = l->first; r < l->first + l->pr * l->pc; r++)
      if (local_rows(l, r) > most) most = local_rows(l, r);
    l->lld = most + (int64_t)(rnd(s) % 3) + (most == 0);
  }
}

typedef struct {
  int p;
  uint64_t elem;
  rd_runs *send, *recv;
  /* per source rank, per element of its array: the expected (rank, element) it goes to */
  int **to_rank;
  int64_t **to_elem;
  int **sent;          /* times each source element was sent */
  int **written;       /* times each destination element was written */
} world;

static void oracle(world *w, const cdag_layout *from, const cdag_layout *to) {
  for (int r = 0; r < w->p; r++) {
    int64_t ns = array_elems(from, r), nd = array_elems(to, r);
    w->to_rank[r] = malloc((size_t)(ns + 1) * sizeof **w->to_rank);
    w->to_elem[r] = malloc((size_t)(ns + 1) * sizeof **w->to_elem);
    w->sent[r] = calloc((size_t)ns + 1, sizeof **w->sent);
    w->written[r] = calloc((size_t)nd + 1, sizeof **w->written);
    for (int64_t k = 0; k < ns; k++) w->to_rank[r][k] = -1;   /* padding: goes nowhere */
  }
  for (int64_t i = 0; i < from->m; i++)
    for (int64_t j = 0; j < from->n; j++) {
      owner a = owner_of(from, i, j), b = owner_of(to, i, j);
      int64_t k = elem_at(from, a.rank, a.li, a.lj);
      w->to_rank[a.rank][k] = b.rank;
      w->to_elem[a.rank][k] = elem_at(to, b.rank, b.li, b.lj);
    }
}

/* Every run of rank s's sends, element by element, against the oracle. */
static void check_sends(world *w, const cdag_layout *from, const cdag_layout *to, int s) {
  const rd_runs *x = &w->send[s];
  for (int64_t k = 0; k < x->n; k++) {
    ck_assert_uint_eq(x->src[k] % w->elem, 0);
    ck_assert_uint_eq(x->dst[k] % w->elem, 0);
    ck_assert_uint_eq(x->bytes[k] % w->elem, 0);
    ck_assert_uint_gt(x->bytes[k], 0);
    for (uint64_t e = 0; e < x->bytes[k] / w->elem; e++) {
      int64_t a = (int64_t)(x->src[k] / w->elem + e), b = (int64_t)(x->dst[k] / w->elem + e);
      ck_assert_int_lt(a, array_elems(from, s));
      ck_assert_int_eq(w->to_rank[s][a], x->peer[k]);
      ck_assert_int_eq(w->to_elem[s][a], b);
      ck_assert_int_lt(b, array_elems(to, x->peer[k]));
      w->sent[s][a]++;
      w->written[x->peer[k]][b]++;
    }
  }
}

/* d's receives from s (s != d) are s's sends to d, run for run, in order. */
static void check_recvs(const world *w, int d) {
  const rd_runs *x = &w->recv[d];
  int64_t *at = calloc((size_t)w->p, sizeof *at);   /* per source: next run to d */
  for (int64_t k = 0; k < x->n; k++) {
    int s = x->peer[k];
    ck_assert_int_ne(s, d);
    const rd_runs *y = &w->send[s];
    while (at[s] < y->n && y->peer[at[s]] != d) at[s]++;
    ck_assert_int_lt(at[s], y->n);
    ck_assert_uint_eq(y->src[at[s]], x->src[k]);
    ck_assert_uint_eq(y->dst[at[s]], x->dst[k]);
    ck_assert_uint_eq(y->bytes[at[s]], x->bytes[k]);
    at[s]++;
  }
  for (int s = 0; s < w->p; s++) { /* nothing sent to d that d does not receive */
    const rd_runs *y = &w->send[s];
    while (s != d && at[s] < y->n && y->peer[at[s]] != d) at[s]++;
    if (s != d) ck_assert_int_eq(at[s], y->n);
  }
  free(at);
}

static void check_once(const world *w, const cdag_layout *from, const cdag_layout *to) {
  for (int r = 0; r < w->p; r++) {
    for (int64_t k = 0; k < array_elems(from, r); k++) ck_assert_int_eq(w->sent[r][k], w->to_rank[r][k] >= 0);
    int64_t lld = to->lld ? to->lld : (in_grid(to, r) ? local_rows(to, r) : 0);
    for (int64_t k = 0; k < array_elems(to, r); k++) ck_assert_int_eq(w->written[r][k], k % lld < local_rows(to, r));
  }
}

static void one_case(uint64_t *s) {
  int64_t m = 1 + (int64_t)(rnd(s) % 30), n = 1 + (int64_t)(rnd(s) % 30);
  cdag_layout from, to;
  random_layout(s, m, n, &from);
  random_layout(s, m, n, &to);
  world w = {.elem = 1 + rnd(s) % 8};
  w.p = from.first + from.pr * from.pc;
  if (to.first + to.pr * to.pc > w.p) w.p = to.first + to.pr * to.pc;
  ck_assert_int_eq(rd_check_layout(&from, w.p, "test", "from"), CDAG_OK);
  ck_assert_int_eq(rd_check_layout(&to, w.p, "test", "to"), CDAG_OK);
  w.send = calloc((size_t)w.p, sizeof *w.send);
  w.recv = calloc((size_t)w.p, sizeof *w.recv);
  w.to_rank = calloc((size_t)w.p, sizeof *w.to_rank);
  w.to_elem = calloc((size_t)w.p, sizeof *w.to_elem);
  w.sent = calloc((size_t)w.p, sizeof *w.sent);
  w.written = calloc((size_t)w.p, sizeof *w.written);
  for (int r = 0; r < w.p; r++) CK_OK(rd_build(&from, &to, w.elem, r, &w.send[r], &w.recv[r]));
  oracle(&w, &from, &to);
  for (int r = 0; r < w.p; r++) check_sends(&w, &from, &to, r);
  for (int r = 0; r < w.p; r++) check_recvs(&w, r);
  check_once(&w, &from, &to);
  for (int r = 0; r < w.p; r++) {
    rd_runs_free(&w.send[r]);
    rd_runs_free(&w.recv[r]);
    free(w.to_rank[r]); free(w.to_elem[r]); free(w.sent[r]); free(w.written[r]);
  }
  free(w.send); free(w.recv); free(w.to_rank); free(w.to_elem); free(w.sent); free(w.written);
}

START_TEST(random_layouts_match_oracle) {
  uint64_t s = 2026;
  long rounds = cdag_test_iterations(1000);
  for (long k = 0; k < rounds; k++) one_case(&s);
}
END_TEST

/* The seed's example of periodicity: the builder examines one period, not the whole
   dimension, and no remote process: ASPEN's count does not grow with the other grid. */
START_TEST(work_is_one_period) {
  cdag_layout from = {1000, 1000, 10, 10, 1, 1, 0, 0}, to = {1000, 1000, 25, 25, 1, 1, 0, 0};
  rd_runs a = {0}, b = {0}, c = {0}, d = {0};
  CK_OK(rd_build(&from, &to, 8, 0, &a, &b));
  to.pr = to.pc = 2;   /* four times the remote processes, the same local blocks */
  CK_OK(rd_build(&from, &to, 8, 0, &c, &d));
  ck_assert_int_le(c.steps, a.steps * 2);
  ck_assert_int_le(a.steps, 2 * (50 / 10 + 1));   /* lcm(10, 25) = 50 per dimension */
  rd_runs_free(&a); rd_runs_free(&b); rd_runs_free(&c); rd_runs_free(&d);
}
END_TEST

/* Whole columns merge: same rows on both sides make one run per pair of columns ranges. */
START_TEST(runs_merge) {
  cdag_layout from = {64, 64, 64, 8, 1, 2, 0, 0}, to = {64, 64, 64, 16, 1, 1, 0, 0};
  rd_runs s = {0}, r = {0};
  CK_OK(rd_build(&from, &to, 8, 0, &s, &r));
  ck_assert_int_eq(s.n, 4);   /* rank 0 holds column blocks 0, 2, 4, 6: four runs of 8 columns */
  ck_assert_uint_eq(s.bytes[0], 64 * 8 * 8);
  rd_runs_free(&s);
  rd_runs_free(&r);
}
END_TEST

static void expect_arg(int rc, const char *text) {
  ck_assert_int_eq(rc, CDAG_ERR_ARG);
  ck_assert_msg(strstr(cdag_error_message(), text), "message '%s' lacks '%s'", cdag_error_message(), text);
}

START_TEST(errors) {
  cdag_graph *g = NULL;
  CK_OK(cdag_graph_create_global(4, &g));
  cdag_layout a = {8, 8, 2, 2, 2, 2, 0, 0}, b = a;
  CK_OK(cdag_rank_redistribute(g, 0, &a, 0, &b, 1 << 20, 8));
  b.m = 0;
  expect_arg(cdag_rank_redistribute(g, 0, &a, 0, &b, 1 << 20, 8), "layout 'to': M is 0");
  b = a, b.nb = 0;
  expect_arg(cdag_rank_redistribute(g, 0, &a, 0, &b, 1 << 20, 8), "NB is 0");
  b = a, b.pc = 0;
  expect_arg(cdag_rank_redistribute(g, 0, &a, 0, &b, 1 << 20, 8), "PC is 0");
  b = a, b.first = 1;
  expect_arg(cdag_rank_redistribute(g, 0, &a, 0, &b, 1 << 20, 8), "a 2x2 grid from rank 1 needs 5 ranks, the graph has 4");
  b = a, b.n = 9;
  expect_arg(cdag_rank_redistribute(g, 0, &a, 0, &b, 1 << 20, 8), "'from' is 8x8, 'to' 8x9");
  b = a, b.lld = 3;
  expect_arg(cdag_rank_redistribute(g, 0, &a, 0, &b, 1 << 20, 8), "lld is 3");
  expect_arg(cdag_rank_redistribute(g, 0, &a, 0, &a, 1 << 20, 0), "elem_bytes is 0");
  expect_arg(cdag_rank_redistribute(g, 0, &a, 0, &a, 64, 8), "overlap");
  expect_arg(cdag_rank_redistribute(g, 0, NULL, 0, &a, 1 << 20, 8), "layout 'from' is NULL");
  expect_arg(cdag_rank_redistribute(g, 4, &a, 0, &a, 1 << 20, 8), "rank 4 out of range");
  CK_OK(cdag_graph_free(&g));
}
END_TEST

Suite *cdag_redistribute_suite(void) {
  Suite *s = suite_create("redistribute");
  TCase *t = tcase_create("core");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, random_layouts_match_oracle);
  tcase_add_test(t, work_is_one_period);
  tcase_add_test(t, runs_merge);
  tcase_add_test(t, errors);
  suite_add_tcase(s, t);
  return s;
}

CDAG_CHECK_MAIN(cdag_redistribute_suite)
